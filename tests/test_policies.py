"""Generation policies from Python: max_json_whitespace, property_order, their cache identity,
and the low_level helpers that compile through the process-wide cache."""

from __future__ import annotations

import json

import pytest

import maskforge
from maskforge import low_level

BYTE_EOS = 256


@pytest.fixture(scope="module")
def byte_vocabulary() -> maskforge.Vocabulary:
    """One token per byte, so any text can be fed exactly."""
    return maskforge.Vocabulary.from_id_ordered_tokens([bytes([b]) for b in range(256)] + [None], eos_token_id=BYTE_EOS)


def admits(bound: maskforge.BoundSchema, text: str) -> bool:
    session = bound.start_session()
    for b in text.encode():
        if not session.is_allowed(b):
            return False
        session.advance(b)
    return session.is_allowed(BYTE_EOS)


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


def test_max_json_whitespace_bounds_runs_outside_strings(byte_vocabulary):
    bound = maskforge.Compiler(max_json_whitespace=1).compile(PERSON).bind(byte_vocabulary)
    assert admits(bound, '{"name": "a  b", "age": 3}')
    assert admits(bound, json.dumps({"name": "x"}, indent=None))
    assert not admits(bound, '{"name":  "x"}')
    assert not admits(bound, '{"name": "x"}  ')
    unbounded = maskforge.Compiler().compile(PERSON).bind(byte_vocabulary)
    assert admits(unbounded, '{"name":  "x"}  ')


def test_declared_property_order(byte_vocabulary):
    compiler = maskforge.Compiler(property_order="declared")
    assert (compiler.property_order, compiler.max_json_whitespace) == ("declared", None)
    bound = compiler.compile(PERSON).bind(byte_vocabulary)
    assert admits(bound, '{"name":"x","age":3}')
    assert admits(bound, '{"name":"x","extra":null}')
    assert not admits(bound, '{"age":3,"name":"x"}')
    assert admits(maskforge.Compiler().compile(PERSON).bind(byte_vocabulary), '{"age":3,"name":"x"}')


def test_process_cache_helpers_key_on_the_policies(byte_vocabulary):
    low_level.clear_executable_cache()
    plain = low_level.compile_json_schema_with_vocabulary(PERSON, byte_vocabulary)
    assert admits(plain, '{"age":3, "name":"x"}')
    assert low_level.executable_cache_stats()["executable_entries"] == 1
    again = low_level.compile_json_schema_with_vocabulary(json.dumps(PERSON), byte_vocabulary)
    assert low_level.executable_cache_stats()["executable_hits"] >= 1 and admits(again, '{"name":"x"}')
    ordered = low_level.compile_json_schema_with_vocabulary(PERSON, byte_vocabulary, property_order="declared")
    assert not admits(ordered, '{"age":3,"name":"x"}')
    tight = low_level.compile_json_schema_with_vocabulary(PERSON, byte_vocabulary, max_json_whitespace=0)
    assert not admits(tight, '{"name": "x"}') and admits(tight, '{"name":"x"}')
    assert low_level.executable_cache_stats()["executable_entries"] == 3
    low_level.clear_executable_cache()
    assert low_level.executable_cache_stats()["executable_entries"] == 0


def test_type_helper_compiles_pydantic_models(byte_vocabulary):
    pydantic = pytest.importorskip("pydantic")

    class Point(pydantic.BaseModel):
        x: int
        y: int

    bound = low_level.compile_type_with_vocabulary(Point, byte_vocabulary, property_order="declared")
    assert admits(bound, '{"x":1,"y":2}')
    assert not admits(bound, '{"y":2,"x":1}')
