"""The share of rows that complete within the budget on a first try: Pydantic types, a batch of
prompts, greedy and sampled, before and after the first-try defaults.

"before" runs the same generator with those defaults taken out: Pydantic's own JSON Schema
(objects open to extra keys), no end of a row once its value is done, no rule against a first
token of whitespace alone, unbounded whitespace, and the prompts as plain text. "after" is a
plain ``Generator(adapter, Type)`` with chat prompts. Rows that complete are counted; a
completed row's value is also validated into the type.

    python integration/first_try.py --model /tmp/smollm2 --gguf SmolLM2-135M-Instruct.Q4_1.gguf
    python integration/first_try.py --model tests/data/models/stories260K --prompts 10
"""

from __future__ import annotations

import argparse
import contextlib
import time
from typing import Any, Dict, List, Literal

from pydantic import BaseModel, Field

import maskforge
from maskforge import generation, hf


class Profile(BaseModel):
    name: str
    age: int


class Book(BaseModel):
    title: str
    author: str
    year: int
    genres: List[str] = Field(max_length=3)


class Event(BaseModel):
    name: str
    city: str
    kind: Literal["concert", "talk", "market"]
    free: bool


TYPES = [Profile, Book, Event]
SUBJECTS = ["a painter", "a baker", "a pilot", "a nurse", "a chess player", "a farmer", "a poet", "a sailor",
            "a teacher", "a chemist"]
ASKS = ["Describe {} as JSON.", "Give me {} in JSON.", "Invent {}.", "JSON for {}, please.", "Make up {}."]


def prompts(count: int, type_: type) -> List[str]:
    noun = type_.__name__.lower()
    return [ASKS[i % len(ASKS)].format(f"a {noun} about {SUBJECTS[i % len(SUBJECTS)]}") for i in range(count)]


@contextlib.contextmanager
def without_first_try_defaults(adapter: Any):
    """The generator as it was before: rows end on EOS only, any first token."""
    end_if_done, row = generation._end_if_done, adapter.not_whitespace_row
    generation._end_if_done = lambda session, eos: session.is_finished()
    everything = row().clone().fill_(-1)
    adapter.not_whitespace_row = lambda: everything
    try:
        yield
    finally:
        generation._end_if_done, adapter.not_whitespace_row = end_if_done, row


def run(adapter: Any, type_: type, texts: List[str], before: bool, sampled: bool, budget: int,
        batch_size: int) -> Dict[str, Any]:
    if before:
        generate = maskforge.Generator(adapter, type_.model_json_schema(), max_json_whitespace=None)
        items: List[Any] = texts
    else:
        generate = maskforge.Generator(adapter, type_)
        chat = bool(getattr(adapter.tokenizer, "chat_template", None))
        items = [[{"role": "user", "content": text}] for text in texts] if chat else texts
    options = {"do_sample": True, "temperature": 0.7, "seed": 0} if sampled else {}
    started = time.perf_counter()
    with without_first_try_defaults(adapter) if before else contextlib.nullcontext():
        result = generate.map(items, batch_size=batch_size, max_new_tokens=budget, **options)
    completed = valid = 0
    for index, value in enumerate(result.values):
        error = result.errors.get(index)
        if isinstance(error, maskforge.GenerationTruncatedError):
            continue
        completed += 1
        if error is None:
            valid += 1 if not before else int(_validates(type_, value))
    return {"rows": len(texts), "completed": completed, "valid": valid, "seconds": time.perf_counter() - started}


def _validates(type_: type, value: Any) -> bool:
    try:
        type_.model_validate(value)
        return True
    except Exception:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a local model directory")
    parser.add_argument("--gguf", help="a GGUF file inside --model")
    parser.add_argument("--prompts", type=int, default=50, help="prompts per type")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--types", nargs="*", default=[t.__name__ for t in TYPES], help="types to run (all)")
    parser.add_argument("--decoding", nargs="*", default=["greedy", "sampled"], help="greedy, sampled or both")
    args = parser.parse_args()
    import transformers

    load = {"gguf_file": args.gguf} if args.gguf else {}
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, **load).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.model, **load)
    adapter = maskforge.from_transformers(model, tokenizer)
    print(f"model {args.model} {args.gguf or ''}: {args.prompts} prompts per type, budget {args.max_new_tokens}, "
          f"chat template: {bool(getattr(tokenizer, 'chat_template', None))}, "
          f"default whitespace cap {hf.DEFAULT_MAX_JSON_WHITESPACE}")
    print("| type | decoding | before: completed | after: completed | after: valid |")
    print("|---|---|---:|---:|---:|")
    totals = {False: [0, 0], True: [0, 0]}
    for type_ in (t for t in TYPES if t.__name__ in args.types):
        texts = prompts(args.prompts, type_)
        for sampled in (s == "sampled" for s in args.decoding):
            before = run(adapter, type_, texts, True, sampled, args.max_new_tokens, args.batch_size)
            after = run(adapter, type_, texts, False, sampled, args.max_new_tokens, args.batch_size)
            for key, report in ((False, before), (True, after)):
                totals[key][0] += report["completed"]
                totals[key][1] += report["rows"]
            print(f"| {type_.__name__} | {'sampled' if sampled else 'greedy'} | "
                  f"{before['completed']}/{before['rows']} | {after['completed']}/{after['rows']} | "
                  f"{after['valid']}/{after['rows']} |", flush=True)
    share = {key: done / rows for key, (done, rows) in totals.items()}
    print(f"| all | both | {share[False]:.0%} | {share[True]:.0%} | |")


if __name__ == "__main__":
    main()
