"""Command line interface.

``python -m maskforge demo``
    Compiles a bundled schema with the bundled GPT-2 vocabulary and walks a bundled instance
    token by token, showing how many tokens each step's mask allows.
``python -m maskforge check SCHEMA [--tokenizer PATH]``
    Compiles a schema file and reports its backend and state count, or its diagnostic.
``python -m maskforge generate --model DIR [--gguf FILE] (--schema FILE | --type MODULE:NAME) PROMPT``
    Generates one value with a local transformers model (the ``transformers`` extra) and prints
    it as JSON; ``--stream`` prints the text as it is chosen, ``--chat`` sends the prompt as a
    user message through the tokenizer's chat template.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from importlib import resources
from typing import Dict, List, Optional, Sequence, TextIO

import numpy

from . import BoundSchema, Compiler, MaskForgeError, SchemaError, Session, Vocabulary, __version__


def _data_file(stack: ExitStack, name: str) -> str:
    """Filesystem path of a packaged data file (extracted when the package is zipped)."""
    return str(stack.enter_context(resources.as_file(resources.files("maskforge") / "data" / name)))


def _read_data_text(name: str) -> str:
    return (resources.files("maskforge") / "data" / name).read_text(encoding="utf-8")


def _load_vocabulary(path: Optional[str], eos_token_ids: Optional[List[int]]) -> Vocabulary:
    with ExitStack() as stack:
        if path is None:
            path = _data_file(stack, "gpt2.tokenizer.json")
            eos_token_ids = eos_token_ids or [50256]
        return Vocabulary.from_tokenizer_json(path, eos_token_id=eos_token_ids)


def _allowed_bits(session: Session, mask: bytearray) -> numpy.ndarray:
    """One flag per token id: the mask's little-endian words unpacked bit by bit."""
    session.write_mask(mask)
    return numpy.unpackbits(numpy.frombuffer(mask, dtype=numpy.uint8), bitorder="little")


def _token_table(vocabulary: Vocabulary) -> Dict[bytes, List[int]]:
    table: Dict[bytes, List[int]] = {}
    for token_id in range(vocabulary.tokenizer_size):
        token = vocabulary.token_bytes(token_id)
        if token is not None:
            table.setdefault(token, []).append(token_id)
    return table


def _longest_allowed(table: Dict[bytes, List[int]], longest: int, allowed: numpy.ndarray, rest: bytes) -> Optional[int]:
    """The allowed token spelling the longest prefix of ``rest``: a tokenizer-free encoding
    that always exists while ``rest`` completes an accepted instance, since masks have no dead ends."""
    for length in range(min(longest, len(rest)), 0, -1):
        for token_id in table.get(rest[:length], ()):
            if allowed[token_id]:
                return token_id
    return None


def walk(bound: BoundSchema, text: bytes, out: TextIO) -> bool:
    """Commits ``text`` token by token, printing each step; returns whether EOS was allowed at the end."""
    vocabulary = bound.vocabulary
    table = _token_table(vocabulary)
    longest = max(map(len, table))
    session = bound.start_session()
    mask = bytearray(bound.mask_byte_count)
    position = 0
    step = 0
    print(f"{'step':>4}  {'token':>6}  {'text':<18}  allowed", file=out)
    while position < len(text):
        allowed = _allowed_bits(session, mask)
        token_id = _longest_allowed(table, longest, allowed, text[position:])
        if token_id is None:
            print(f"the instance leaves the schema's language at byte {position}", file=out)
            return False
        token = vocabulary.token_bytes(token_id) or b""
        shown = repr(token.decode("utf-8", errors="backslashreplace"))
        print(f"{step:>4}  {token_id:>6}  {shown:<18}  {int(allowed.sum())}", file=out)
        session.advance(token_id)
        position += len(token)
        step += 1
    allowed = _allowed_bits(session, mask)
    eos_allowed = all(allowed[eos] for eos in vocabulary.eos_token_ids)
    print(f"end of instance: {int(allowed.sum())} allowed, EOS allowed: {eos_allowed}", file=out)
    if eos_allowed:
        session.advance(vocabulary.eos_token_ids[0])
        print(f"EOS committed, session finished: {session.is_finished()}", file=out)
    return eos_allowed


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    schema = _read_data_text("demo.schema.json")
    instance = json.loads(_read_data_text("demo.instance.json"))
    vocabulary = _load_vocabulary(args.tokenizer, args.eos_token_id)
    program = Compiler().compile(schema)
    bound = program.bind(vocabulary)
    print(f"schema: {json.dumps(json.loads(schema))}", file=out)
    print(f"backend: {program.backend}, states: {program.state_count}", file=out)
    print(f"vocabulary: {vocabulary.tokenizer_size} tokens, EOS {list(vocabulary.eos_token_ids)}", file=out)
    text = json.dumps(instance, ensure_ascii=False)
    print(f"instance: {text}", file=out)
    return 0 if walk(bound, text.encode("utf-8"), out) else 1


def _print_diagnostic(error: SchemaError, out: TextIO) -> None:
    print(f"error: {error.code}", file=out)
    print(f"keyword: {error.keyword if error.keyword is not None else '-'}", file=out)
    print(f"pointer: {error.pointer or '#'}", file=out)
    print(f"message: {error.message}", file=out)


def _check(args: argparse.Namespace, out: TextIO) -> int:
    try:
        if args.schema == "-":
            schema = sys.stdin.read()
        else:
            with open(args.schema, encoding="utf-8") as file:
                schema = file.read()
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read {args.schema}: {error}", file=sys.stderr)
        return 2
    compiler = Compiler(default_draft=args.default_draft)
    try:
        program = compiler.compile(schema)
    except SchemaError as error:
        _print_diagnostic(error, out)
        return 1
    print(f"backend: {program.backend}", file=out)
    print(f"states: {program.state_count}", file=out)
    if args.tokenizer is not None:
        try:
            vocabulary = _load_vocabulary(args.tokenizer, args.eos_token_id)
            bound = program.bind(vocabulary)
        except MaskForgeError as error:
            print(f"error: {error}", file=out)
            return 1
        print(
            f"bound: {vocabulary.tokenizer_size} tokens, mask of {bound.mask_word_count} words, "
            f"{bound.bind_policy} rows",
            file=out,
        )
    print("ok", file=out)
    return 0


def _generate(args: argparse.Namespace, out: TextIO) -> int:
    import importlib

    try:
        import transformers
    except ImportError:
        raise MaskForgeError("generate needs transformers and torch: pip install 'maskforge[transformers]'") from None
    from . import Generator, from_transformers

    if args.schema is not None:
        if args.schema == "-":
            target = sys.stdin.read()
        else:
            with open(args.schema, encoding="utf-8") as file:
                target = file.read()
    else:
        module_name, _, name = args.type.partition(":")
        if not module_name or not name:
            raise MaskForgeError(f"--type takes MODULE:NAME (e.g. myapp.models:Profile), got {args.type!r}")
        sys.path.insert(0, ".")
        target = importlib.import_module(module_name)
        for part in name.split("."):
            target = getattr(target, part)
    load = {"gguf_file": args.gguf} if args.gguf else {}
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, **load).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.model, **load)
    generate = Generator(from_transformers(model, tokenizer), target, schema_in_prompt=args.schema_in_prompt)
    prompt = [{"role": "user", "content": args.prompt}] if args.chat else args.prompt
    options = {"max_new_tokens": args.max_new_tokens}
    if args.temperature is not None:
        options.update(do_sample=True, temperature=args.temperature)
    if args.seed is not None:
        options["seed"] = args.seed
    if args.stream:
        stream = generate.stream(prompt, **options)
        for piece in stream:
            out.write(piece)
            out.flush()
        out.write("\n")
        value = stream.value  # raises when the budget ran out
    else:
        value = generate(prompt, **options)
    if not args.stream:
        dump = getattr(value, "model_dump", None)
        print(json.dumps(dump(mode="json") if callable(dump) else value, ensure_ascii=False), file=out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m maskforge",
        description="Compile JSON Schemas into allowed-token masks: a demo walk, a schema check, and generation.",
    )
    parser.add_argument("--version", action="version", version=f"maskforge {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    demo = commands.add_parser("demo", help="walk a bundled instance of a bundled schema token by token")
    demo.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json to use instead of the bundled GPT-2 one")
    demo.add_argument("--eos-token-id", type=int, action="append", metavar="ID", help="EOS id (repeatable)")
    demo.set_defaults(run=_demo)

    check = commands.add_parser("check", help="compile a schema file and report its backend or its diagnostic")
    check.add_argument("schema", help="path of a JSON Schema file ('-' reads standard input)")
    check.add_argument("--tokenizer", metavar="PATH", help="also bind to this tokenizer.json")
    check.add_argument("--eos-token-id", type=int, action="append", metavar="ID", help="EOS id (repeatable)")
    check.add_argument("--default-draft", metavar="DRAFT", help="draft of schemas without $schema (e.g. draft7)")
    check.set_defaults(run=_check)

    generate = commands.add_parser("generate", help="generate one value with a local transformers model")
    generate.add_argument("prompt", help="the prompt text")
    generate.add_argument("--model", required=True, metavar="DIR", help="a local model directory")
    generate.add_argument("--gguf", metavar="FILE", help="a GGUF file inside DIR to load the model from")
    what = generate.add_mutually_exclusive_group(required=True)
    what.add_argument("--schema", metavar="FILE", help="a JSON Schema file ('-' reads standard input)")
    what.add_argument("--type", metavar="MODULE:NAME", help="a Python type (e.g. a Pydantic model) to generate")
    generate.add_argument("--max-new-tokens", type=int, default=256, metavar="N")
    generate.add_argument("--temperature", type=float, metavar="T", help="sample at this temperature (greedy without)")
    generate.add_argument("--seed", type=int, metavar="S", help="seed of the sampling")
    generate.add_argument("--chat", action="store_true", help="send the prompt as a user message of a chat")
    generate.add_argument("--schema-in-prompt", action="store_true", help="add the schema to the prompt")
    generate.add_argument("--stream", action="store_true", help="print the text as it is chosen")
    generate.set_defaults(run=_generate)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args, sys.stdout))
    except MaskForgeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
