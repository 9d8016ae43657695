#!/usr/bin/env python3
"""Liveness and exactness on generated schemas, checked against python-jsonschema.

A seeded generator writes draft 2020-12 schemas that mix the keywords whose
semantics are not local (`not`, `if`/`then`/`else`, overlapping `oneOf`,
`unevaluated*`, `contains` with `minContains`/`maxContains`, dependencies,
`propertyNames`, `patternProperties`, counts) over a small alphabet of keys and
values, so that branches interact. It reports how often each keyword was
produced. For every schema that compiles:

- **walks**: random mask-guided generations. At every step the mask must not be
  empty (no dead end: every admitted prefix completes), and a walk that ends with
  EOS must produce an instance the validator accepts. Walks prefer short tokens
  and, past a step budget, the tokens that close values, so most of them end.
- **differential**: random JSON values from the same alphabet are fed token by
  token; the session must admit a value (then EOS) exactly when the validator
  says it is valid. This catches masks that forbid tokens inside the language.

Schemas the compiler refuses are counted by diagnostic code (coverage gaps, not
failures). The vocabulary is every single byte plus a few multi-byte JSON
tokens, so that multi-byte tokens that cross value boundaries are exercised.

Usage:
    python integration/liveness.py [--seed S] [--schemas N] [--walks W] [--values V] [--json out.json]
"""

from __future__ import annotations

import argparse
import decimal
import json
import random
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance import TokenizerBytes, TokenMatcher, choose_token, mask_bit  # noqa: E402

KEYS = ("a", "b", "c", "xa", "xb")
STRINGS = ("", "a", "b", "ab", "xa", "abc")
NUMBERS = (0, 1, 2, 3, 1.5, -1, 10)
MULTI_BYTE_TOKENS = ('{"', '":', '",', '"}', "true", "false", "null", "12", "1.", "e-", '"a', 'a"', "}]", "],", "[{", ", ")
# Past this many steps a walk prefers the tokens that end values; past the limit it gives up.
STEP_BUDGET = 60
STEP_LIMIT = 400
CLOSING = (b'"', b"}", b"]", b"0", b"1", b"e", b"l", b"u", b"r", b"a", b"s")


class SchemaGenerator:
    """Random schemas over a small alphabet; counts the keywords it writes."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.keywords: Counter = Counter()

    def schema(self, depth: int = 0):
        rng = self.rng
        if depth >= 3 or rng.random() < 0.15:
            return self.leaf()
        kind = rng.choice(("object", "object", "array", "combinator", "combinator", "leaf"))
        if kind == "object":
            return self.object(depth)
        if kind == "array":
            return self.array(depth)
        if kind == "combinator":
            return self.combinator(depth)
        return self.leaf()

    def note(self, schema: dict) -> dict:
        self.keywords.update(schema.keys())
        return schema

    def leaf(self):
        rng = self.rng
        choice = rng.randrange(9)
        if choice == 0:
            return rng.choice((True, False, {}))
        if choice == 1:
            return self.note({"type": rng.choice(("null", "boolean", "string", "number", "integer", "object", "array"))})
        if choice == 2:
            values = rng.sample(self.values(), rng.randint(1, 3))
            return self.note({"enum": values})
        if choice == 3:
            return self.note({"const": rng.choice(self.values())})
        if choice == 4:
            schema = {"type": rng.choice(("integer", "number"))}
            if rng.random() < 0.6:
                schema["minimum"] = rng.choice((0, 1, 2, -1))
            if rng.random() < 0.5:
                schema["maximum"] = rng.choice((2, 3, 10))
            if rng.random() < 0.3:
                schema["multipleOf"] = rng.choice((2, 3, 0.5))
            return self.note(schema)
        if choice == 5:
            schema = {"type": "string"}
            if rng.random() < 0.5:
                schema["maxLength"] = rng.choice((1, 2, 3))
            if rng.random() < 0.4:
                schema["minLength"] = rng.choice((1, 2))
            if rng.random() < 0.3:
                schema["pattern"] = rng.choice(("^a", "b$", "^[ab]*$"))
            return self.note(schema)
        if choice == 6:
            return self.note({"not": self.leaf()})
        if choice == 7:
            return self.note({"type": ["string", "null"], "maxLength": 2})
        return self.note({"minimum": 1})

    def values(self):
        return [None, True, False, *NUMBERS, *STRINGS, [], {}, [1], {"a": 1}]

    def object(self, depth: int) -> dict:
        rng = self.rng
        schema: dict = {"type": "object"} if rng.random() < 0.7 else {}
        names = rng.sample(KEYS, rng.randint(0, 3))
        if names:
            schema["properties"] = {name: self.schema(depth + 1) for name in names}
        if rng.random() < 0.4:
            schema["required"] = rng.sample(KEYS, rng.randint(1, 2))
        roll = rng.random()
        if roll < 0.2:
            schema["additionalProperties"] = False
        elif roll < 0.35:
            schema["additionalProperties"] = self.schema(depth + 1)
        if rng.random() < 0.2:
            schema["patternProperties"] = {"^x": self.schema(depth + 1)}
        if rng.random() < 0.15:
            schema["propertyNames"] = rng.choice(({"maxLength": 1}, {"pattern": "^[ab]"}, {"enum": ["a", "b", "xa"]}))
        if rng.random() < 0.2:
            schema["minProperties"] = rng.randint(1, 2)
        if rng.random() < 0.2:
            schema["maxProperties"] = rng.randint(1, 3)
        if rng.random() < 0.15:
            schema["dependentRequired"] = {rng.choice(KEYS): [rng.choice(KEYS)]}
        if rng.random() < 0.1:
            schema["dependentSchemas"] = {rng.choice(KEYS): self.schema(depth + 1)}
        if rng.random() < 0.2:
            schema["unevaluatedProperties"] = rng.choice((False, self.leaf()))
        return self.note(schema)

    def array(self, depth: int) -> dict:
        rng = self.rng
        schema: dict = {"type": "array"} if rng.random() < 0.7 else {}
        if rng.random() < 0.3:
            schema["prefixItems"] = [self.schema(depth + 1) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.4:
            schema["items"] = rng.choice((False, self.schema(depth + 1)))
        if rng.random() < 0.3:
            schema["minItems"] = rng.randint(0, 2)
        if rng.random() < 0.3:
            schema["maxItems"] = rng.randint(1, 3)
        if rng.random() < 0.3:
            schema["contains"] = self.leaf()
            if rng.random() < 0.4:
                schema["minContains"] = rng.randint(0, 2)
            if rng.random() < 0.4:
                schema["maxContains"] = rng.randint(1, 2)
        if rng.random() < 0.15:
            schema["unevaluatedItems"] = rng.choice((False, self.leaf()))
        if rng.random() < 0.2:
            schema["uniqueItems"] = True
        return self.note(schema)

    def combinator(self, depth: int) -> dict:
        rng = self.rng
        keyword = rng.choice(("not", "anyOf", "allOf", "oneOf", "if"))
        if keyword == "not":
            return self.note({"not": self.schema(depth + 1)})
        if keyword == "if":
            schema = {"if": self.schema(depth + 1), "then": self.schema(depth + 1)}
            if rng.random() < 0.7:
                schema["else"] = self.schema(depth + 1)
            return self.note(schema)
        return self.note({keyword: [self.schema(depth + 1) for _ in range(rng.randint(2, 3))]})


class ValueGenerator:
    """Random JSON values over the schema alphabet."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def value(self, depth: int = 0):
        rng = self.rng
        roll = rng.random()
        if depth >= 3 or roll < 0.45:
            return rng.choice([None, True, False, *NUMBERS, *STRINGS])
        if roll < 0.75:
            keys = rng.sample(KEYS, rng.randint(0, 3))
            return {key: self.value(depth + 1) for key in keys}
        return [self.value(depth + 1) for _ in range(rng.randint(0, 3))]


def exact_validator(schema, formats: bool = False):
    """A validator for the schema's draft (default 2020-12; format checks when `formats`) over
    exact decimals: numbers parse as `Decimal` (schema and instances alike), and integers are
    decided by value, as JSON Schema says (python-jsonschema alone calls a `Decimal` `1.0` a
    non-integer)."""
    import jsonschema

    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "number": lambda _, x: isinstance(x, (int, Decimal)) and not isinstance(x, bool),
            "integer": lambda _, x: (isinstance(x, int) and not isinstance(x, bool))
            or (isinstance(x, Decimal) and x.is_finite() and x == x.to_integral_value()),
        }
    )
    cls = jsonschema.validators.extend(base, type_checker=checker)
    options = {"format_checker": base.FORMAT_CHECKER} if formats else {}
    return cls(json.loads(json.dumps(schema), parse_float=Decimal), **options)


def judge(validator, text: bytes):
    """The validator's verdict on a JSON text (None when it cannot judge, e.g. 1e999999)."""
    try:
        with decimal.localcontext() as context:
            context.prec = 2000
            return validator.is_valid(json.loads(text, parse_float=Decimal))
    except (ArithmeticError, ValueError, RecursionError):
        return None


def vocabulary_tokens() -> TokenizerBytes:
    tokens = [bytes([b]) for b in range(256)] + [t.encode() for t in MULTI_BYTE_TOKENS]
    tokens.append(None)  # EOS
    return TokenizerBytes("bytes+json", tokens, len(tokens) - 1)


def allowed_ids(mask: bytearray) -> list[int]:
    ids = []
    for byte_index, byte in enumerate(mask):
        while byte:
            low = byte & -byte
            ids.append(byte_index * 8 + low.bit_length() - 1)
            byte ^= low
    return ids


def walk(bound, tokens: list, eos: int, rng: random.Random) -> tuple[str, bytes]:
    """One mask-guided generation: ("done", text), ("dead", text) or ("unfinished", text)."""
    session = bound.start_session()
    mask = bytearray(4 * bound.mask_word_count)
    text = b""
    for step in range(STEP_LIMIT):
        session.write_mask(mask)
        ids = allowed_ids(mask)
        if not ids:
            return "dead", text
        if eos in ids and (step > STEP_BUDGET or rng.random() < 0.25):
            session.advance(eos)
            return "done", text
        choices = [i for i in ids if i != eos]
        if not choices:
            session.advance(eos)
            return "done", text
        if step > STEP_BUDGET:
            closing = [i for i in choices if tokens[i] in CLOSING]
            choices = closing or choices
        token = rng.choice(choices)
        session.advance(token)
        text += tokens[token]
    return "unfinished", text


def admits(bound, matcher: TokenMatcher, eos: int, text: bytes) -> bool:
    """Feeds `text` with the longest allowed tokens, then EOS (the conformance route)."""

    class Probe:
        pass

    probe = Probe()
    probe.matcher = matcher
    session = bound.start_session()
    mask = bytearray(4 * bound.mask_word_count)
    position = 0
    problems: list = []
    while position < len(text):
        session.write_mask(mask)
        token = choose_token(probe, session, mask, text, position, problems)
        if token is None:
            return False
        length, token_id = token
        session.advance(token_id)
        position += length
    session.write_mask(mask)
    if problems:
        raise AssertionError(f"mask and is_allowed disagree: {problems[:3]}")
    return mask_bit(mask, eos) and session.is_allowed(eos)


def run(seed: int, schemas: int, walks: int, values: int) -> dict:
    import maskforge

    rng = random.Random(seed)
    generator = SchemaGenerator(rng)
    value_generator = ValueGenerator(rng)
    tokenizer = vocabulary_tokens()
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(tokenizer.tokens, eos_token_id=tokenizer.eos_token_id)
    matcher = TokenMatcher(tokenizer.tokens)
    compiler = maskforge.Compiler(default_draft="2020-12")
    report = {
        "seed": seed,
        "schemas": 0,
        "compiled": 0,
        "diagnostics": Counter(),
        "walks": Counter(),
        "values": Counter(),
        "failures": [],
    }
    for _ in range(schemas):
        schema = generator.schema()
        report["schemas"] += 1
        validator = exact_validator(schema)
        try:
            bound = compiler.compile(json.dumps(schema)).bind(vocabulary)
        except maskforge.SchemaError as error:
            report["diagnostics"][getattr(error, "code", type(error).__name__)] += 1
            continue
        report["compiled"] += 1
        for _ in range(walks):
            outcome, text = walk(bound, tokenizer.tokens, tokenizer.eos_token_id, rng)
            report["walks"][outcome] += 1
            if outcome == "dead":
                report["failures"].append({"kind": "dead end", "schema": schema, "prefix": text.decode("utf-8", "replace")})
            elif outcome == "done":
                verdict = judge(validator, text)
                if verdict is None:
                    report["walks"]["unjudged"] += 1
                elif not verdict:
                    report["failures"].append({"kind": "invalid instance", "schema": schema, "text": text.decode()})
        for _ in range(values):
            value = value_generator.value()
            text = json.dumps(value).encode()
            valid = judge(validator, text)
            if valid is None:
                report["values"]["unjudged"] += 1
                continue
            admitted = admits(bound, matcher, tokenizer.eos_token_id, text)
            report["values"]["valid" if valid else "invalid"] += 1
            if admitted != valid:
                kind = "false accept" if admitted else "false reject"
                report["failures"].append({"kind": kind, "schema": schema, "value": value})
    report["keywords"] = generator.keywords
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--schemas", type=int, default=300)
    parser.add_argument("--walks", type=int, default=8)
    parser.add_argument("--values", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    report = run(args.seed, args.schemas, args.walks, args.values)
    print(f"seed {report['seed']}: {report['compiled']}/{report['schemas']} schemas compiled")
    print(f"diagnostics: {dict(report['diagnostics'])}")
    print(f"walks: {dict(report['walks'])}; values: {dict(report['values'])}")
    print("keywords produced: " + ", ".join(f"{k} {n}" for k, n in report["keywords"].most_common()))
    for failure in report["failures"][:10]:
        print("FAIL", json.dumps(failure)[:400])
    print(f"{len(report['failures'])} failures")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
