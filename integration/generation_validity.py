#!/usr/bin/env python3
"""End-to-end generation over finite schemas and types, checked by an independent validator.

Every target below has finitely many values (enums, consts, bounded strings and arrays, closed
objects), so with a whitespace cap every output is short. For each model the script generates
a batch of values per target through `maskforge.Generator` and counts:

- completed: outputs that ended in EOS or an accepting state within the budget;
- invalid: completed outputs that python-jsonschema rejects, or that the target type refuses
  (must be 0: the masks only admit the schema's language);
- whitespace: completed outputs with a run of insignificant whitespace longer than the cap
  (must be 0);
- truncated: rows that ran out of `max_new_tokens` (reported separately; not failures);
- unjudged: completed outputs the validator cannot decide (a number such as `0e99...9` whose
  exponent is beyond Python's `Decimal`), reported, never counted as valid or invalid.

Models: the real stories260K Llama (tests/data/models, or $MASKFORGE_MODEL_ID) and tiny
random-weight GPT-2 and Llama models over the real GPT-2 and Qwen2.5 tokenizers (vendored) and,
when $MASKFORGE_TOKENIZERS names a folder holding it, Llama-3's.

    python integration/generation_validity.py [--models stories260K tiny-gpt2 ...] [--seed 0]
"""

from __future__ import annotations

import argparse
import decimal
import enum
import json
import lzma
import os
import sys
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from liveness import exact_validator  # noqa: E402  (sibling script: the exact-decimal oracle)
DATA = REPO / "tests" / "data"
PROMPTS = ["Once upon a time", "The answer is", "Lily and Tom", "{", "JSON:"]


# ---------------------------------------------------------------------------
# targets: finite schemas and types


def schema_targets() -> List[Tuple[str, Any]]:
    """JSON Schemas whose languages are finite up to whitespace (and number spellings)."""
    color = {"enum": ["red", "green", "blue"]}
    flag = {"type": "boolean"}
    code = {"type": "string", "pattern": "^[A-C][0-9]$"}
    closed = lambda properties, required=(): {  # noqa: E731
        "type": "object", "properties": properties, "required": list(required), "additionalProperties": False}
    schemas = {
        "enum-strings": color,
        "const-object": {"const": {"a": [1, "x"], "b": None}},
        "boolean": flag,
        "null": {"type": "null"},
        "enum-mixed": {"enum": ["x", None, True, [1, 2], {"k": "v"}]},
        "short-string": {"type": "string", "maxLength": 3},
        "string-length-range": {"type": "string", "minLength": 2, "maxLength": 4},
        "pattern-code": code,
        "pattern-alternation": {"type": "string", "pattern": "^(yes|no|maybe)$"},
        "format-date-enum": {"type": "string", "format": "date", "enum": ["2024-01-31", "2025-12-01"]},
        "uuid-const": {"const": "123e4567-e89b-12d3-a456-426614174000", "format": "uuid"},
        "closed-one": closed({"ok": flag}, ["ok"]),
        "closed-two": closed({"color": color, "ok": flag}, ["color", "ok"]),
        "closed-optional": closed({"color": color, "ok": flag}),
        "closed-nested": closed({"inner": closed({"c": code}, ["c"]), "n": {"type": "null"}}, ["inner"]),
        "min-max-properties": {**closed({"a": flag, "b": flag, "c": flag}), "minProperties": 1, "maxProperties": 2},
        "dependent-required": {**closed({"a": flag, "b": flag}), "dependentRequired": {"a": ["b"]}},
        "property-names": {"type": "object", "propertyNames": {"enum": ["p", "q"]},
                           "additionalProperties": flag},
        "pattern-properties": {"type": "object", "patternProperties": {"^[xy]$": color},
                               "additionalProperties": False},
        "array-enum-items": {"type": "array", "items": color, "maxItems": 3},
        "array-min-max": {"type": "array", "items": flag, "minItems": 1, "maxItems": 2},
        "array-unique": {"type": "array", "items": color, "uniqueItems": True},
        "array-contains": {"type": "array", "items": color, "maxItems": 3, "contains": {"const": "blue"}},
        "array-max-contains": {"type": "array", "items": color, "maxItems": 4, "contains": {"const": "red"},
                               "maxContains": 1},
        "prefix-items": {"type": "array", "prefixItems": [flag, color], "items": False},
        "tuple-min": {"type": "array", "prefixItems": [code, code], "minItems": 2, "items": False},
        "any-of": {"anyOf": [flag, color, {"type": "null"}]},
        "one-of": {"oneOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]},
        "all-of": {"allOf": [{"enum": ["a", "b", "c"]}, {"not": {"const": "b"}}]},
        "not-enum": {"allOf": [color, {"not": {"const": "green"}}]},
        "if-then-else": {**closed({"kind": {"enum": ["cat", "dog"]}, "sound": {"enum": ["meow", "woof"]}},
                                  ["kind", "sound"]),
                         "if": {"properties": {"kind": {"const": "cat"}}},
                         "then": {"properties": {"sound": {"const": "meow"}}},
                         "else": {"properties": {"sound": {"const": "woof"}}}},
        "ref-defs": {"$defs": {"c": color}, "type": "object", "properties": {"x": {"$ref": "#/$defs/c"}},
                     "required": ["x"], "additionalProperties": False},
        "unevaluated-properties": {"type": "object", "properties": {"a": flag},
                                   "allOf": [{"properties": {"b": flag}}], "unevaluatedProperties": False},
        "unevaluated-items": {"type": "array", "prefixItems": [flag], "unevaluatedItems": False},
        "array-of-objects": {"type": "array", "maxItems": 2, "items": closed({"c": color}, ["c"])},
        "unique-codes": {"type": "array", "maxItems": 3, "uniqueItems": True, "items": code},
        "nested-arrays": {"type": "array", "maxItems": 2, "items": {"type": "array", "items": flag, "maxItems": 2}},
        "boolean-true-in-closed": closed({"t": True}, ["t"]) | {"properties": {"t": flag}},
        "escaped-strings": {"enum": ["quote \" inside", "tab\there", "é ü 😀", "back\\slash"]},
        "empty-object": closed({}),
        "small-integers": {"enum": [0, 1, 2]},
        "number-const": {"const": 2.5},
    }
    return list(schemas.items())


def type_targets() -> List[Tuple[str, Any]]:
    """Pydantic-compatible types (closed models, so that the language is finite)."""
    import dataclasses
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field
    from typing_extensions import TypedDict

    class Mood(str, enum.Enum):
        HAPPY = "happy"
        SAD = "sad"

    class Pet(BaseModel):
        model_config = ConfigDict(extra="forbid")
        kind: Literal["cat", "dog"]
        vaccinated: bool

    class Owner(BaseModel):
        model_config = ConfigDict(extra="forbid")
        mood: Mood
        pets: Annotated[List[Pet], Field(max_length=2)]

    @dataclasses.dataclass
    class Point:
        __pydantic_config__ = ConfigDict(extra="forbid")
        x: Literal[0, 1]
        y: Literal[0, 1]

    class Settings(TypedDict):
        __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
        verbose: bool
        level: Literal["low", "high"]

    class Optional_(BaseModel):
        model_config = ConfigDict(extra="forbid")
        note: Optional[Annotated[str, Field(max_length=4)]] = None

    return [
        ("enum-type", Mood),
        ("literal", Literal["a", "b", "c"]),
        ("model", Pet),
        ("nested-models", Owner),
        ("dataclass", Point),
        ("typed-dict", Settings),
        ("union", Union[Pet, Literal["none"]]),
        ("list-of-literals", Annotated[List[Literal["x", "y"]], Field(max_length=3)]),
        ("optional-field", Optional_),
        ("bool", bool),
        ("none-or-enum", Optional[Mood]),
    ]


# ---------------------------------------------------------------------------
# models


def tokenizer_from_json(text: str, eos: str):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(text), eos_token=eos)


def random_model(architecture: str, vocab_size: int, eos_token_id: int, seed: int):
    """A tiny random-weight causal LM: enough to drive masks with varied logits."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    if architecture == "gpt2":
        config = GPT2Config(vocab_size=vocab_size, n_embd=16, n_layer=1, n_head=2, n_positions=512,
                            bos_token_id=eos_token_id, eos_token_id=eos_token_id)
        return GPT2LMHeadModel(config).eval()
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                         bos_token_id=eos_token_id, eos_token_id=eos_token_id)
    return LlamaForCausalLM(config).eval()


def load_model(name: str, seed: int = 0):
    """(model, tokenizer) by name; None when its files are not on this machine."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "stories260K":
        path = os.environ.get("MASKFORGE_MODEL_ID") or str(DATA / "models" / "stories260K")
        return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    if name == "tiny-gpt2":
        text = (DATA / "tokenizers" / "gpt2.tokenizer.json").read_text(encoding="utf-8")
        return random_model("gpt2", 50257, 50256, seed), tokenizer_from_json(text, "<|endoftext|>")
    if name == "tiny-llama-qwen2.5":
        with lzma.open(DATA / "tokenizers" / "qwen2.5.tokenizer.json.xz", "rt", encoding="utf-8") as file:
            text = file.read()
        # Qwen2.5's models pad their logits to 151,936 columns: the mask must cover (and refuse) them.
        return random_model("llama", 151936, 151643, seed), tokenizer_from_json(text, "<|endoftext|>")
    if name == "tiny-llama-llama3":
        folder = os.environ.get("MASKFORGE_TOKENIZERS", str(REPO.parent / "shared" / "tokenizers"))
        path = Path(folder) / "llama3.tokenizer.json"
        if not path.is_file():
            return None
        return random_model("llama", 128256, 128001, seed), tokenizer_from_json(path.read_text("utf-8"),
                                                                                "<|end_of_text|>")
    raise ValueError(f"unknown model {name!r}")


MODELS = ["stories260K", "tiny-gpt2", "tiny-llama-qwen2.5", "tiny-llama-llama3"]


# ---------------------------------------------------------------------------
# checks


def longest_whitespace_run(text: str) -> int:
    """The longest run of JSON whitespace outside strings."""
    longest = run = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in " \t\n\r":
            run += 1
            longest = max(longest, run)
            continue
        run = 0
        in_string = char == '"'
    return longest


@dataclass
class Report:
    model: str
    targets: int = 0
    rows: int = 0
    completed: int = 0
    truncated: int = 0
    invalid: int = 0
    whitespace: int = 0
    unjudged: int = 0
    seconds: float = 0.0
    failures: Optional[List[str]] = None
    truncated_targets: Optional[Dict[str, int]] = None


def raw_text_target(target: Any):
    """`target` with the generated text returned as is (unparsed), to check the text itself."""
    from maskforge.targets import Target, resolve_target

    resolved = resolve_target(target)
    return Target(resolved.schema_json, lambda text: text, resolved.description)


def check_target(adapter, name: str, target: Any, *, seed: int, batch: int, max_new_tokens: int,
                 max_json_whitespace: int, report: Report) -> None:
    import maskforge
    from maskforge.targets import resolve_target

    resolved = resolve_target(target)
    validator = exact_validator(json.loads(resolved.schema_json), formats=True)
    generator = maskforge.Generator(adapter, raw_text_target(resolved), max_json_whitespace=max_json_whitespace)
    prompts = [PROMPTS[(seed + i) % len(PROMPTS)] for i in range(batch)]
    options: Dict[str, Any] = {"do_sample": True, "seed": seed, "temperature": 1.5} if seed % 2 else {}
    try:
        texts = generator(prompts, max_new_tokens=max_new_tokens, **options)
    except maskforge.GenerationTruncatedError as error:
        report.truncated += batch - len(error.values)
        report.truncated_targets[name] = batch - len(error.values)
        texts = list(error.values.values())
    report.targets += 1
    report.rows += batch
    for text in texts:
        report.completed += 1
        problem = None
        try:
            with decimal.localcontext() as context:
                context.prec = 2000
                errors = list(validator.iter_errors(json.loads(text, parse_float=Decimal)))
        except ArithmeticError:  # e.g. 0e99999999999999999999: beyond Decimal, not a verdict
            report.unjudged += 1
            errors = []
        if errors:
            problem = f"validator: {errors[0].message}"
        else:
            try:
                resolved.parse(text)
            except Exception as error:  # noqa: BLE001  (a refusal of any kind is the finding)
                problem = f"{type(error).__name__}: {error}"
        if problem:
            report.invalid += 1
            report.failures.append(f"{report.model}/{name}: {text!r}: {problem}")
        if longest_whitespace_run(text) > max_json_whitespace:
            report.whitespace += 1
            report.failures.append(f"{report.model}/{name}: {text!r}: whitespace run above {max_json_whitespace}")


def run(models: List[str], *, seed: int = 0, batch: int = 3, max_new_tokens: int = 96,
        max_json_whitespace: int = 1, with_types: bool = True) -> List[Report]:
    import maskforge

    targets = schema_targets() + (type_targets() if with_types else [])
    reports = []
    for model_name in models:
        loaded = load_model(model_name, seed)
        if loaded is None:
            continue
        adapter = maskforge.from_transformers(*loaded)
        report = Report(model_name, failures=[], truncated_targets={})
        started = time.perf_counter()
        for name, target in targets:
            check_target(adapter, name, target, seed=seed, batch=batch, max_new_tokens=max_new_tokens,
                         max_json_whitespace=max_json_whitespace, report=report)
        report.seconds = time.perf_counter() - started
        reports.append(report)
    return reports


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--seed", type=int, default=0, help="odd seeds sample (temperature 1.5), even are greedy")
    parser.add_argument("--batch", type=int, default=3, help="rows per target")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--max-json-whitespace", type=int, default=1)
    args = parser.parse_args(argv)
    reports = run(args.models, seed=args.seed, batch=args.batch, max_new_tokens=args.max_new_tokens,
                  max_json_whitespace=args.max_json_whitespace)
    print(f"{'model':22} {'targets':>7} {'rows':>5} {'done':>5} {'trunc':>5} {'invalid':>7} {'ws':>3} "
          f"{'unjudged':>8} {'s':>6}")
    for r in reports:
        print(f"{r.model:22} {r.targets:7} {r.rows:5} {r.completed:5} {r.truncated:5} {r.invalid:7} "
              f"{r.whitespace:3} {r.unjudged:8} {r.seconds:6.1f}")
    for r in reports:
        if r.truncated_targets:
            print(f"{r.model} truncated:", ", ".join(f"{k} x{v}" for k, v in sorted(r.truncated_targets.items())))
    failures = [f for r in reports for f in r.failures]
    for failure in failures[:20]:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
