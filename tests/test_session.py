"""Session behaviour: masks against a reference, the EOS rules, rejected tokens, padding."""

from __future__ import annotations

import threading
from typing import Optional, Sequence, Set

import numpy as np
import pytest

import maskforge
from conftest import ENUM_SCHEMA, OBJECT_SCHEMA, STRING_SCHEMA, TOY_EOS, TOY_TOKENS

WS = b" \t\n\r"
ENUM_SPELLINGS = (b'"a"', b'"b"')


def enum_viable(text: bytes) -> bool:
    """Is ``text`` a prefix of some JSON text spelling "a" or "b" (no escapes in the toy vocabulary)?"""
    rest = text.lstrip(WS)
    return any(v.startswith(rest) or (rest.startswith(v) and not rest[len(v):].strip(WS)) for v in ENUM_SPELLINGS)


def enum_complete(text: bytes) -> bool:
    return text.strip(WS) in ENUM_SPELLINGS


def expected_enum_mask(prefix: bytes, tokens: Sequence[Optional[bytes]], eos: int) -> Set[int]:
    allowed = {i for i, t in enumerate(tokens) if t is not None and i != eos and enum_viable(prefix + t)}
    if enum_complete(prefix):
        allowed.add(eos)
    return allowed


def test_enum_masks_match_reference_at_every_step(compiler, toy_vocabulary, mask_ids):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    prefix = b""
    for token in [7, 2, 3, 2, 7, 14]:  # ' ', '"', 'a', '"', ' ', '\n'
        assert mask_ids(session) == expected_enum_mask(prefix, TOY_TOKENS, TOY_EOS), prefix
        session.advance(token)
        prefix += TOY_TOKENS[token]
    assert mask_ids(session) == expected_enum_mask(prefix, TOY_TOKENS, TOY_EOS)
    assert session.is_accepting()


def test_enum_first_mask_exact(compiler, toy_vocabulary, mask_ids):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    # '"', ' ', '"a"', '"a', '\n', '"b"'
    assert mask_ids(session) == {2, 7, 10, 11, 14, 18}


def test_mask_matches_is_allowed_for_every_id(compiler, toy_vocabulary, mask_ids):
    session = compiler.compile(OBJECT_SCHEMA).bind(toy_vocabulary).start_session()
    for token in [19, 3, 20, 7, 8, 1]:  # '{"' 'a' '":' ' ' 'true' '}'
        allowed = mask_ids(session)
        assert allowed == {i for i in range(toy_vocabulary.mask_vocab_size) if session.is_allowed(i)}
        assert token in allowed
        session.advance(token)
    assert session.is_accepting()
    assert TOY_EOS in mask_ids(session)


def test_mask_bits_agree_with_replayed_sessions(compiler, toy_vocabulary, mask_ids):
    """Slow route: a token is allowed iff a fresh session replaying the prefix accepts it."""
    bound = compiler.compile(OBJECT_SCHEMA).bind(toy_vocabulary)
    path = [0, 7, 2, 3, 2, 5, 9, 7, 1]  # { "a": false }
    session = bound.start_session()
    for step, token in enumerate(path):
        replay_allowed = set()
        for candidate in range(toy_vocabulary.mask_vocab_size):
            fresh = bound.start_session()
            for previous in path[:step]:
                fresh.advance(previous)
            try:
                fresh.advance(candidate)
                replay_allowed.add(candidate)
            except maskforge.TokenRejectedError:
                pass
        assert mask_ids(session) == replay_allowed
        session.advance(token)


def test_forbidden_token_raises_and_changes_nothing(compiler, toy_vocabulary, mask_ids):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    session.advance(2)  # '"'
    before = mask_ids(session)
    for token in [13, 0, 17, TOY_EOS, 15]:  # 'c', '{', 'ab', EOS (not accepting), special
        with pytest.raises(maskforge.TokenRejectedError) as info:
            session.advance(token)
        assert info.value.token_id == token
        assert mask_ids(session) == before
        assert not session.is_accepting()
        assert not session.is_finished()
    reasons = {}
    for token in [13, TOY_EOS, 15]:
        with pytest.raises(maskforge.TokenRejectedError) as info:
            session.advance(token)
        reasons[token] = info.value.reason
    assert reasons == {13: "leaves_language", TOY_EOS: "eos_not_accepting", 15: "no_bytes"}
    session.advance(12)  # 'a"' still works after the failures
    assert session.is_accepting()


def test_eos_rules(compiler, toy_vocabulary, mask_ids):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    assert TOY_EOS not in mask_ids(session)
    assert not session.is_allowed(TOY_EOS)
    session.advance(10)  # '"a"'
    assert session.is_accepting() and not session.is_finished()
    assert TOY_EOS in mask_ids(session)
    assert session.is_allowed(TOY_EOS)
    session.advance(TOY_EOS)
    assert session.is_finished() and session.is_accepting()
    assert mask_ids(session) == {TOY_EOS}
    session.advance(TOY_EOS)  # padding after EOS: a no-op
    assert session.is_finished()
    assert mask_ids(session) == {TOY_EOS}
    for token in [7, 14, 2]:  # even whitespace that was allowed before EOS
        with pytest.raises(maskforge.TokenRejectedError) as info:
            session.advance(token)
        assert info.value.reason == "session_finished"
        assert not session.is_allowed(token)
    assert mask_ids(session) == {TOY_EOS}


def test_several_eos_ids(compiler, mask_ids):
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(TOY_TOKENS, eos_token_id=[TOY_EOS, 15])
    assert vocabulary.eos_token_ids == (15, TOY_EOS)
    session = compiler.compile(ENUM_SCHEMA).bind(vocabulary).start_session()
    session.advance(18)  # '"b"'
    assert {15, TOY_EOS} <= mask_ids(session)
    session.advance(15)
    assert session.is_finished()
    assert mask_ids(session) == {15, TOY_EOS}
    session.advance(TOY_EOS)  # any EOS id pads
    assert mask_ids(session) == {15, TOY_EOS}


def test_padded_mask_vocab_size(compiler, mask_ids):
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(TOY_TOKENS, eos_token_id=TOY_EOS, mask_vocab_size=100)
    bound = compiler.compile(STRING_SCHEMA).bind(vocabulary)
    assert bound.mask_vocab_size == 100
    assert bound.mask_word_count == 4
    assert bound.mask_byte_count == 16
    session = bound.start_session()
    session.advance(2)  # '"': inside a string almost everything is allowed, padding never
    allowed = mask_ids(session)
    assert allowed and max(allowed) < len(TOY_TOKENS)
    with pytest.raises(maskforge.TokenRejectedError) as info:
        session.advance(99)
    assert info.value.reason == "no_bytes"
    with pytest.raises(maskforge.TokenRejectedError) as info:
        session.advance(100)
    assert info.value.reason == "out_of_range"
    assert not session.is_allowed(99) and not session.is_allowed(100)


@pytest.mark.parametrize("token", [-1, 2**32, 2**70, -(2**70)])
def test_out_of_range_token_ids(compiler, toy_vocabulary, mask_ids, token):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    before = mask_ids(session)
    with pytest.raises(maskforge.TokenRejectedError) as info:
        session.advance(token)
    assert info.value.reason == "out_of_range"
    assert info.value.token_id == token
    assert isinstance(info.value, ValueError)
    assert not session.is_allowed(token)
    assert mask_ids(session) == before


@pytest.mark.parametrize("token", [2.0, "2", None, True, b"\x02", [2]])
def test_non_int_token_ids(compiler, toy_vocabulary, mask_ids, token):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    before = mask_ids(session)
    with pytest.raises(maskforge.ArgumentTypeError):
        session.advance(token)
    with pytest.raises(TypeError):
        session.is_allowed(token)
    assert mask_ids(session) == before


def test_numpy_integer_token_ids(compiler, toy_vocabulary):
    session = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary).start_session()
    assert session.is_allowed(np.int64(2))
    session.advance(np.int32(2))
    session.advance(np.uint64(3))
    session.advance(np.int16(2))
    assert session.is_accepting()


def test_sessions_are_independent(compiler, toy_vocabulary, mask_ids):
    bound = compiler.compile(ENUM_SCHEMA).bind(toy_vocabulary)
    first, second = bound.start_session(), bound.start_session()
    first.advance(10)
    assert first.is_accepting()
    assert not second.is_accepting()
    assert mask_ids(second) == {2, 7, 10, 11, 14, 18}


def test_gpt2_walk_with_real_tokenizer(compiler, gpt2_vocabulary, gpt2_tokenizer_path, mask_ids):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(gpt2_tokenizer_path))
    bound = compiler.compile(OBJECT_SCHEMA).bind(gpt2_vocabulary)
    assert bound.mask_word_count == (50257 + 31) // 32
    session = bound.start_session()
    ids = tokenizer.encode('{"a": false}', add_special_tokens=False).ids
    for step, token in enumerate(ids):
        allowed = mask_ids(session)
        assert token in allowed
        assert 50256 not in allowed
        if step == 0:
            assert allowed == {i for i in range(50257) if session.is_allowed(i)}
        session.advance(token)
    assert session.is_accepting()
    assert 50256 in mask_ids(session)
    session.advance(50256)
    assert mask_ids(session) == {50256}


def test_mistral_walk_with_real_tokenizer(compiler, mistral_vocabulary, mistral_tokenizer_path, mask_ids):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(mistral_tokenizer_path))
    bound = compiler.compile(STRING_SCHEMA).bind(mistral_vocabulary)
    session = bound.start_session()
    ids = tokenizer.encode('"héllo wörld ✓"', add_special_tokens=False).ids
    for token in ids:
        assert token in mask_ids(session)
        session.advance(token)
    assert session.is_accepting()
    assert mistral_vocabulary.eos_token_ids == (2,)
    assert mask_ids(session) >= {2}
    session.advance(2)
    assert session.is_finished()


def test_concurrent_sessions_over_one_bound_schema(compiler, gpt2_vocabulary):
    bound = compiler.compile(STRING_SCHEMA).bind(gpt2_vocabulary)
    path = [1, 31373, 995, 1]  # '"', 'hello', ' world', '"'

    def run(out: list) -> None:
        session = bound.start_session()
        masks = []
        for token in path:
            mask = np.zeros(bound.mask_word_count, dtype=np.uint32)
            session.write_mask(mask)
            masks.append(mask.tobytes())
            session.advance(token)
        out.append(masks)

    expected: list = []
    run(expected)
    results: list = []
    threads = [threading.Thread(target=run, args=(results,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == expected * 8


def test_one_session_shared_by_threads_does_not_deadlock(compiler, gpt2_vocabulary):
    session = compiler.compile(STRING_SCHEMA).bind(gpt2_vocabulary).start_session()
    mask = bytearray(session.mask_byte_count)
    errors: list = []

    def writer() -> None:
        try:
            for _ in range(300):
                session.write_mask(mask)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    def reader() -> None:
        try:
            for _ in range(3000):
                session.is_allowed(1)
                session.is_accepting()
        except Exception as error:  # pragma: no cover
            errors.append(error)

    threads = [threading.Thread(target=writer), threading.Thread(target=writer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
