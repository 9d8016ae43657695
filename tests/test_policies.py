"""Generation policies from Python: max_json_whitespace, property_order, closed_objects, their
cache identity, and the low_level helpers that compile through the process-wide cache."""

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


NESTED = {
    "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    "type": "object",
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/Address"}, "meta": {}},
    "allOf": [{"properties": {"id": {"type": "integer"}}}],
}


def test_closed_objects_option_and_repr():
    compiler = maskforge.Compiler(closed_objects=True)
    assert compiler.closed_objects is True
    assert repr(compiler).endswith("property_order='any', closed_objects=True)")
    assert maskforge.Compiler().closed_objects is False
    assert maskforge.Compiler(closed_objects=None).closed_objects is False
    assert "closed_objects=False" in repr(maskforge.Compiler())
    with pytest.raises(maskforge.ArgumentTypeError, match="closed_objects must be a bool"):
        maskforge.Compiler(closed_objects=1)


def test_closed_objects_refuse_undeclared_keys(byte_vocabulary):
    closed = maskforge.Compiler(closed_objects=True).compile(NESTED).bind(byte_vocabulary)
    open_ = maskforge.Compiler().compile(NESTED).bind(byte_vocabulary)
    declared = '{"name":"n","address":{"city":"c"},"id":1,"meta":{"any":[1]}}'
    assert admits(closed, declared) and admits(open_, declared)
    for extra in ['{"name":"n","zip":1}', '{"address":{"city":"c","zip":"1"}}']:
        assert not admits(closed, extra), extra
        assert admits(open_, extra), extra
    # A schema with additionalProperties of its own keeps it.
    typed = {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}}
    bound = maskforge.Compiler(closed_objects=True).compile(typed).bind(byte_vocabulary)
    assert admits(bound, '{"a":1,"b":"s"}') and not admits(bound, '{"a":1,"b":2}')


def test_closed_objects_are_part_of_the_process_cache_identity(byte_vocabulary):
    low_level.clear_executable_cache()
    plain = low_level.compile_json_schema_with_vocabulary(PERSON, byte_vocabulary)
    closed = low_level.compile_json_schema_with_vocabulary(PERSON, byte_vocabulary, closed_objects=True)
    assert admits(plain, '{"name":"x","z":1}') and not admits(closed, '{"name":"x","z":1}')
    assert low_level.executable_cache_stats()["executable_entries"] == 2
    low_level.clear_executable_cache()
