"""Compiler: schema inputs, options, diagnostics, caches, binding."""

from __future__ import annotations

import json

import pytest

import maskforge
import maskforge.low_level
from conftest import ENUM_SCHEMA, OBJECT_SCHEMA, STRING_SCHEMA


@pytest.mark.parametrize("schema", [ENUM_SCHEMA, STRING_SCHEMA, OBJECT_SCHEMA])
def test_compile_inputs_agree(compiler, toy_vocabulary, mask_ids, schema):
    text = json.dumps(schema)
    programs = [compiler.compile(text), compiler.compile(schema), compiler.compile(text.encode())]
    assert {p.backend for p in programs} == {"regular"}
    assert len({p.state_count for p in programs}) == 1
    masks = [mask_ids(p.bind(toy_vocabulary).start_session()) for p in programs]
    assert masks[0] == masks[1] == masks[2]
    assert masks[0]


def test_pydantic_model(compiler, toy_vocabulary, mask_ids):
    pydantic = pytest.importorskip("pydantic")

    class Flag(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        a: bool

    from_model = compiler.compile(Flag)
    from_dict = compiler.compile(Flag.model_json_schema())
    assert from_model.state_count == from_dict.state_count
    session = from_model.bind(toy_vocabulary).start_session()
    for token in [19, 3, 20, 8, 1]:  # {"a":true}
        session.advance(token)
    assert session.is_accepting()


def test_other_pydantic_compatible_types(compiler, toy_vocabulary):
    pydantic = pytest.importorskip("pydantic")
    import dataclasses
    from typing import List, Literal

    @dataclasses.dataclass
    class Flag:
        __pydantic_config__ = pydantic.ConfigDict(extra="forbid")
        a: bool

    session = compiler.compile(Flag).bind(toy_vocabulary).start_session()
    for token in [19, 3, 20, 8, 1]:  # {"a":true}
        session.advance(token)
    assert session.is_accepting()
    session = compiler.compile(List[Literal["a"]]).bind(toy_vocabulary).start_session()
    for token in [26, 10, 6, 10, 27]:  # ["a","a"]
        session.advance(token)
    assert session.is_accepting()
    assert compiler.compile(int).bind(toy_vocabulary).start_session().is_allowed(25)  # 1
    with pytest.raises(maskforge.ArgumentTypeError, match="no JSON Schema"):
        compiler.compile(type("Opaque", (), {}))


def test_invalid_json_text(compiler):
    with pytest.raises(maskforge.SchemaError) as info:
        compiler.compile('{"type": ')
    error = info.value
    assert error.code == "MF-E001"
    assert error.pointer == ""
    assert str(error).startswith("MF-E001 at #")
    assert isinstance(error, ValueError)


def test_non_json_values(compiler):
    with pytest.raises(maskforge.SchemaError) as info:
        compiler.compile({"const": float("nan")})
    assert info.value.code == "MF-E001"
    with pytest.raises(maskforge.ArgumentTypeError):
        compiler.compile({"const": object()})
    with pytest.raises(maskforge.SchemaError) as info:
        compiler.compile(b"\xff\xfe")
    assert info.value.code == "MF-E001"
    with pytest.raises(maskforge.SchemaError) as info:
        compiler.compile('{"const": "\ud800"}')
    assert info.value.code == "MF-E001"


@pytest.mark.parametrize("schema", [3, 2.5, None, ["a"], object()])
def test_wrong_schema_types(compiler, schema):
    with pytest.raises(maskforge.ArgumentTypeError, match="schema must be"):
        compiler.compile(schema)


def test_diagnostic_attributes(compiler):
    with pytest.raises(maskforge.SchemaError) as info:
        compiler.compile({"$schema": "https://example.com/not-a-draft"})
    assert info.value.code == "MF-E009"
    assert info.value.keyword == "$schema"
    assert info.value.pointer == "/$schema"


def test_reference_resolution_error(compiler):
    with pytest.raises(maskforge.ReferenceResolutionError) as info:
        compiler.compile({"$ref": "https://example.com/schema.json"})
    assert info.value.code == "MF-E005"
    assert info.value.keyword == "$ref"
    assert "https://example.com/schema.json" in str(info.value)
    assert isinstance(info.value, maskforge.SchemaError)


def test_resource_limit_error(compiler):
    schema: dict = {"type": "string"}
    for _ in range(300):
        schema = {"items": schema}
    with pytest.raises(maskforge.ResourceLimitError) as info:
        compiler.compile(schema)
    assert info.value.code == "MF-E007"
    assert isinstance(info.value, maskforge.SchemaError)


def test_structured_backend_diagnostic(compiler):
    # Until the structured backend exists, non-regular schemas are refused with MF-E004.
    try:
        program = compiler.compile({"type": "integer"})
    except maskforge.SchemaError as error:
        assert error.code == "MF-E004"
        assert error.keyword == "type"
    else:
        assert program.backend == "structured"


def test_cache_stats_and_clear():
    compiler = maskforge.Compiler()
    first = compiler.compile(ENUM_SCHEMA)
    compiler.compile({"enum": ["a", "b"]})  # equal schema: a hit
    compiler.compile(json.dumps(ENUM_SCHEMA, indent=4))  # written differently: still a hit
    stats = compiler.cache_stats()
    assert stats["executable_misses"] == 1
    assert stats["executable_hits"] == 2
    assert stats["executable_entries"] == 1
    assert stats["executable_bytes"] > 0
    assert set(stats) == {
        "executable_hits", "executable_misses", "executable_entries", "executable_bytes",
        "trie_hits", "trie_misses", "trie_entries", "trie_bytes",
    }
    compiler.clear_caches()
    assert compiler.cache_stats()["executable_entries"] == 0
    assert first.state_count > 0  # programs outlive the cache


def test_without_cache(toy_vocabulary):
    compiler = maskforge.Compiler.without_cache()
    compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary)
    compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary)
    stats = compiler.cache_stats()
    assert stats["executable_entries"] == 0 and stats["trie_entries"] == 0
    assert stats["executable_hits"] == 0


def test_trie_cache_shared_across_binds(toy_vocabulary):
    # The eager rows of the string automaton walk enough of the byte trie that its class trie
    # pays: the first bind builds it, the second finds it in the cache.
    compiler = maskforge.Compiler()
    program = compiler.compile(STRING_SCHEMA)
    program.bind(toy_vocabulary)
    program.bind(toy_vocabulary)
    stats = compiler.cache_stats()
    assert stats["trie_entries"] == 1
    assert stats["trie_hits"] >= 1


def test_small_automata_bind_without_a_class_trie(toy_vocabulary):
    # A two-string enum's rows walk the byte trie for less than its class trie would cost.
    compiler = maskforge.Compiler()
    compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary)
    assert compiler.cache_stats()["trie_entries"] == 0


def test_bind_policies_agree(gpt2_vocabulary, mask_ids):
    program = maskforge.Compiler(bind_policy="lazy").compile(OBJECT_SCHEMA)
    lazy = program.bind(gpt2_vocabulary)
    eager = program.bind(gpt2_vocabulary, bind_policy="eager")
    adaptive = program.bind(gpt2_vocabulary, bind_policy="adaptive")
    assert lazy.bind_policy == "lazy"
    assert eager.bind_policy == "eager"
    assert adaptive.bind_policy in ("eager", "lazy")
    sessions = [b.start_session() for b in (lazy, eager, adaptive)]
    for token in [4895, 64, 1298, 2081, 92]:  # '{"' 'a' '":' ' true' '}'
        masks = [mask_ids(s) for s in sessions]
        assert masks[0] == masks[1] == masks[2]
        for session in sessions:
            session.advance(token)
    assert all(s.is_accepting() for s in sessions)


def test_bound_schema_properties(compiler, gpt2_vocabulary):
    bound = compiler.compile(STRING_SCHEMA).bind(gpt2_vocabulary)
    assert bound.mask_vocab_size == 50257
    assert bound.mask_word_count == 1571
    assert bound.mask_byte_count == 6284
    assert bound.vocabulary is gpt2_vocabulary
    assert "mask_word_count=1571" in repr(bound)


def test_compiler_options():
    compiler = maskforge.Compiler(
        executable_cache_bytes=1 << 20,
        trie_cache_bytes=0,
        bind_policy="eager",
        default_draft="draft7",
        format_assertion=False,
        property_order="any",
    )
    assert compiler.bind_policy == "eager"
    assert compiler.default_draft == "draft7"
    assert compiler.format_assertion is False
    assert maskforge.Compiler(default_draft="2019-09").default_draft == "draft2019-09"
    assert maskforge.Compiler(default_draft="http://json-schema.org/draft-04/schema#").default_draft == "draft4"
    defaults = maskforge.Compiler()
    assert (defaults.bind_policy, defaults.default_draft, defaults.format_assertion) == ("adaptive", "draft2020-12", True)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"bind_policy": "fast"}, maskforge.InvalidArgumentError),
        ({"bind_policy": 1}, maskforge.ArgumentTypeError),
        ({"default_draft": "draft3"}, maskforge.InvalidArgumentError),
        ({"default_draft": 7}, maskforge.ArgumentTypeError),
        ({"format_assertion": "yes"}, maskforge.ArgumentTypeError),
        ({"executable_cache_bytes": -1}, maskforge.InvalidArgumentError),
        ({"trie_cache_bytes": 1.5}, maskforge.ArgumentTypeError),
        ({"property_order": "sorted"}, maskforge.InvalidArgumentError),
        ({"max_json_whitespace": -1}, maskforge.InvalidArgumentError),
        ({"max_json_whitespace": "1"}, maskforge.ArgumentTypeError),
    ],
)
def test_bad_compiler_options(kwargs, error):
    with pytest.raises(error):
        maskforge.Compiler(**kwargs)


def test_positional_options_and_unknown_keywords_are_type_errors():
    with pytest.raises(TypeError):
        maskforge.Compiler(1 << 20)
    with pytest.raises(TypeError):
        maskforge.Compiler(cache_bytes=1)


def test_bind_argument_checks(compiler, toy_vocabulary):
    program = compiler.compile(ENUM_SCHEMA)
    with pytest.raises(maskforge.ArgumentTypeError, match="Vocabulary"):
        program.bind("gpt2")
    with pytest.raises(maskforge.InvalidArgumentError):
        program.bind(toy_vocabulary, bind_policy="sometimes")


def test_program_shared_across_vocabularies(compiler, toy_vocabulary, gpt2_vocabulary):
    program = compiler.compile(ENUM_SCHEMA)
    small = program.bind(toy_vocabulary).start_session()
    large = program.bind(gpt2_vocabulary).start_session()
    small.advance(10)  # '"a"'
    large.advance(1)  # '"'
    large.advance(64)  # 'a'
    large.advance(1)
    assert small.is_accepting() and large.is_accepting()


def test_global_executable_cache():
    maskforge.low_level.clear_executable_cache()
    stats = maskforge.low_level.executable_cache_stats()
    assert stats["executable_entries"] == 0
    assert stats["trie_entries"] == 0
    assert set(stats) >= {"executable_hits", "executable_misses", "executable_bytes"}
