"""External references through `registry=` (a mapping or a callable), never the network."""

from __future__ import annotations

import pytest

import maskforge

BYTE_EOS = 256
BASE = "https://example.com/schemas/"


@pytest.fixture(scope="module")
def byte_vocabulary() -> maskforge.Vocabulary:
    return maskforge.Vocabulary.from_id_ordered_tokens([bytes([b]) for b in range(256)] + [None], eos_token_id=BYTE_EOS)


def admits(program: maskforge.SchemaProgram, vocabulary, text: str) -> bool:
    session = program.bind(vocabulary).start_session()
    for b in text.encode():
        if not session.is_allowed(b):
            return False
        session.advance(b)
    return session.is_allowed(BYTE_EOS)


def test_mapping_registry_serves_absolute_references(byte_vocabulary):
    registry = {BASE + "item.json": {"type": "integer", "minimum": 2}}
    program = maskforge.Compiler(registry=registry).compile({"type": "array", "items": {"$ref": BASE + "item.json"}})
    assert admits(program, byte_vocabulary, "[2, 30]")
    assert not admits(program, byte_vocabulary, "[1]")


def test_relative_references_resolve_against_the_id_and_fragments_inside_the_remote(byte_vocabulary):
    asked = []

    def registry(uri):
        asked.append(uri)
        if uri == BASE + "defs.json":
            return '{"$defs": {"name": {"type": "string", "maxLength": 2}}}'
        return None

    schema = {"$id": BASE + "root.json", "properties": {"n": {"$ref": "defs.json#/$defs/name"}}}
    program = maskforge.Compiler(registry=registry).compile(schema)
    assert admits(program, byte_vocabulary, '{"n": "ab"}')
    assert not admits(program, byte_vocabulary, '{"n": "abc"}')
    assert asked == [BASE + "defs.json"]


def test_embedded_resources_and_anchors_resolve_without_a_registry(byte_vocabulary):
    schema = {
        "$id": BASE + "tree.json",
        "$defs": {
            "leaf": {"$id": "leaf.json", "$anchor": "value", "type": "integer"},
        },
        "properties": {"a": {"$ref": "leaf.json"}, "b": {"$ref": "leaf.json#value"}},
    }
    program = maskforge.Compiler().compile(schema)
    assert admits(program, byte_vocabulary, '{"a": 1, "b": 2}')
    assert not admits(program, byte_vocabulary, '{"b": "x"}')


def test_the_documents_served_are_part_of_the_cache_identity(byte_vocabulary):
    answer = {"type": "integer"}
    compiler = maskforge.Compiler(registry=lambda uri: answer if uri == BASE + "x.json" else None)
    first = compiler.compile({"$ref": BASE + "x.json"})
    answer = {"type": "string"}
    second = compiler.compile({"$ref": BASE + "x.json"})
    assert admits(first, byte_vocabulary, "1") and not admits(first, byte_vocabulary, '"s"')
    assert admits(second, byte_vocabulary, '"s"') and not admits(second, byte_vocabulary, "1")


def test_unknown_and_failing_references_are_diagnosed():
    with pytest.raises(maskforge.ReferenceResolutionError) as info:
        maskforge.Compiler(registry={}).compile({"$ref": BASE + "missing.json"})
    assert BASE + "missing.json" in str(info.value)

    def broken(uri):
        raise RuntimeError("offline")

    with pytest.raises(maskforge.ReferenceResolutionError) as info:
        maskforge.Compiler(registry=broken).compile({"$ref": BASE + "a.json"})
    assert "offline" in str(info.value)


def test_registry_must_be_a_mapping_or_a_callable():
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.Compiler(registry=3)
