"""Hostile schemas and vocabularies: each ends in a typed error, or compiles, within bounded time
and memory, and never crashes the interpreter.

Every case runs in a child interpreter under an address-space cap, so a crash, an abort, a
stack overflow, runaway memory or a hang fails the case instead of the test run. The caps are
failure guards, not benchmarks: a case normally takes well under a second.

Buffers (short, read-only, wrongly typed), token ids (out of range, negative, not integers),
tokens after EOS and sessions shared between threads are covered in test_buffers.py and
test_session.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CASE_TIMEOUT_S = 120
ADDRESS_SPACE_BYTES = 6 << 30


def _deep(prefix: str, suffix: str, depth: int, leaf: str = "{}") -> str:
    return prefix * depth + leaf + suffix * depth


SCHEMAS = {
    # Malformed documents and keywords of the wrong type or shape.
    "truncated JSON": ('{"type": "object", ', "MF-E001"),
    "lone surrogate escape": ('{"const": "\\ud800', "MF-E001"),
    "type of the wrong type": ('{"type": 12}', "MF-E002"),
    "negative minLength": ('{"minLength": -1}', "MF-E002"),
    "required not an array": ('{"required": "a"}', "MF-E002"),
    "pattern not a string": ('{"pattern": 1}', "MF-E002"),
    "properties not an object": ('{"properties": []}', "MF-E002"),
    # References: cycles that never reach a value, dangling and external targets.
    "self reference": ('{"$ref": "#"}', "MF-E006"),
    "two-step cycle": ('{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}', "MF-E006"),
    "cycle through allOf": ('{"allOf": [{"$ref": "#"}]}', "MF-E006"),
    "dangling reference": ('{"$ref": "#/$defs/missing"}', "MF-E005"),
    "external reference": ('{"$ref": "https://example.com/schema.json"}', "MF-E005"),
    # Patterns: constructs outside regular languages, and blow-ups.
    "backreference": ('{"type": "string", "pattern": "(a)\\\\1"}', "MF-E008"),
    "lookbehind": ('{"type": "string", "pattern": "(?<=a)b"}', "MF-E008"),
    "nested counted repetition": ('{"type": "string", "pattern": "^(a{1,100}){1,100}$"}', None),
    "long counted classes": ('{"type": "string", "pattern": "[a-z]{1000}[0-9]{1000}"}', None),
    "exponential DFA": ('{"type": "string", "pattern": "^(a|b)*a(a|b){40}$"}', "MF-E007"),
    "ambiguous alternation": ('{"type": "string", "pattern": "^(a|aa)*(b|bb)*$"}', None),
    # Huge counts are counted, not unrolled.
    "maxLength 10^9": ('{"type": "string", "maxLength": 1000000000}', None),
    "minLength 10^9": ('{"type": "string", "minLength": 1000000000}', None),
    "minItems 10^9": ('{"type": "array", "minItems": 1000000000}', None),
    "maxItems 10^9": ('{"type": "array", "maxItems": 1000000000, "items": {"type": "integer"}}', None),
    "minProperties 10^9": ('{"type": "object", "minProperties": 1000000000}', None),
    "multipleOf 1e-300": ('{"type": "number", "multipleOf": 1e-300, "maximum": 1e300}', None),
    "const 1e999999999": ('{"const": 1e999999999}', None),
    # Depth and size.
    "items nested 20,000 deep": (_deep('{"items": ', "}", 20_000), "MF-E007"),
    "not nested 20,000 deep": (_deep('{"not": ', "}", 20_000), "MF-E007"),
    "arrays nested 20,000 deep": (_deep("[", "]", 20_000, ""), "MF-E007"),
    "$ref chain 20,000 long": (
        json.dumps({"$defs": {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(20_000)} | {"a20000": {"type": "integer"}}, "$ref": "#/$defs/a0"}),
        "MF-E007",
    ),
    "allOf chain 1,000 long": (
        json.dumps({"$defs": {f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"minimum": 0}]} for i in range(1_000)} | {"a1000": {}}, "$ref": "#/$defs/a0"}),
        None,
    ),
    "allOf chain 5,000 long": (
        json.dumps({"$defs": {f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"minimum": 0}]} for i in range(5_000)} | {"a5000": {}}, "$ref": "#/$defs/a0"}),
        "MF-E007",
    ),
    "400,000 enum strings": (json.dumps({"enum": [f"value-{i}" for i in range(400_000)]}), "MF-E007"),
    "400,000 enum numbers": (json.dumps({"enum": list(range(400_000))}), None),
    "10 MB of properties": (
        json.dumps({"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 100} for i in range(80_000)}}),
        None,
    ),
    "20 MB document": (json.dumps({"description": "x" * (20 << 20)}), "MF-E007"),
}

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    import maskforge
    schema = sys.stdin.read()
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(
        [bytes([b]) for b in range(256)] + [b'"a', b'\\xff\\xfe', b'\\xe2\\x82', None], eos_token_id=259
    )
    try:
        bound = maskforge.Compiler().compile(schema).bind(vocabulary)
    except maskforge.MaskForgeError as error:
        print(json.dumps({{"error": type(error).__name__, "code": getattr(error, "code", None)}}))
        sys.exit(0)
    session = bound.start_session()
    mask = bytearray(4 * bound.mask_word_count)
    session.write_mask(mask)
    allowed = [i for i in range(260) if mask[i // 8] >> (i % 8) & 1]
    assert allowed, "the first mask admits nothing"
    assert 257 not in allowed, "a token that is not UTF-8 is admitted"
    session.advance(allowed[0])
    print(json.dumps({{"compiled": True}}))
    """
).format(cap=ADDRESS_SPACE_BYTES)


def run_child(schema: str) -> dict:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD],
            input=schema,
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {CASE_TIMEOUT_S} s")
    assert done.returncode == 0, f"child exited with {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_hostile_schema_ends_in_a_typed_error_or_compiles(name):
    schema, code = SCHEMAS[name]
    outcome = run_child(schema)
    if code is None:
        assert outcome == {"compiled": True}, outcome
    else:
        assert outcome.get("code") == code, outcome
        assert outcome["error"] in {"SchemaError", "ReferenceResolutionError", "ResourceLimitError"}


def test_tokens_that_are_not_utf8_are_never_admitted():
    import maskforge

    tokens = [b'"', b"a", b"\xff", b"\xc3", b"\xa9", b"\xc3\xa9", b"\xed\xa0\x80", None]
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(tokens, eos_token_id=7)
    bound = maskforge.Compiler().compile('{"type": "string"}').bind(vocabulary)
    session = bound.start_session()
    session.advance(0)
    assert not session.is_allowed(2), "0xFF never occurs in UTF-8"
    assert not session.is_allowed(4), "a continuation byte cannot start a character"
    assert not session.is_allowed(6), "an encoded surrogate is not UTF-8"
    assert session.is_allowed(3) and session.is_allowed(5)
    session.advance(3)
    assert session.is_allowed(4) and not session.is_allowed(0), "a character is open"


def test_a_model_that_only_opens_arrays_meets_the_nesting_bound():
    """A text nesting without end is refused at 512 levels (the matcher's state is as deep as the
    text); closing brackets stay allowed, and nothing overflows the stack."""
    import maskforge

    tokens = [b"[", b"]", b'{"a":', b'"[', None]
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(tokens, eos_token_id=4)
    session = maskforge.Compiler().compile("{}").bind(vocabulary).start_session()
    opened = 0
    while session.is_allowed(0):
        session.advance(0)
        opened += 1
    assert opened == 512
    assert not session.is_allowed(2), "an object opens a level too"
    with pytest.raises(maskforge.TokenRejectedError):
        session.advance(0)
    assert session.is_allowed(1) and session.is_allowed(3), "closing, and strings, stay allowed"
    for _ in range(opened):
        session.advance(1)
    assert session.is_allowed(4)
