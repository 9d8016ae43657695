"""Sessions that rewind and fork: rollback, fork / copy, validate_tokens, advance_many, reset,
each compared with a fresh session replaying the same committed tokens, on GPT-2."""

from __future__ import annotations

import copy
import random
import threading
from typing import List, Tuple

import pytest

import maskforge

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[A-Z]"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}
INSTANCE = '{"name": "Ada Lovelace", "age": 36, "tags": ["x", {"y": null}]}'


@pytest.fixture(scope="module")
def bound(gpt2_vocabulary):
    return maskforge.Compiler.without_cache().compile(SCHEMA).bind(gpt2_vocabulary)


@pytest.fixture(scope="module")
def tokens(bound, gpt2_tokenizer_path) -> List[int]:
    """The instance's tokens as the tokenizer encodes them, then EOS and a padding EOS."""
    tokenizers = pytest.importorskip("tokenizers")
    ids = tokenizers.Tokenizer.from_file(str(gpt2_tokenizer_path)).encode(INSTANCE, add_special_tokens=False).ids
    eos = bound.vocabulary.eos_token_ids[0]
    return list(ids) + [eos, eos]


def observe(session: maskforge.Session) -> Tuple[bytes, bool, bool]:
    buffer = bytearray(session.mask_byte_count)
    session.write_mask(buffer)
    return bytes(buffer), session.is_accepting(), session.is_finished()


def replay(bound, tokens) -> maskforge.Session:
    session = bound.start_session()
    for t in tokens:
        session.advance(t)
    return session


def test_advance_then_rollback_restores_every_step(bound, tokens):
    session = bound.start_session()
    seen = [observe(session)]
    for i, token in enumerate(tokens):
        for k in (1, 3):
            if i + k <= len(tokens):
                before = observe(session)
                session.advance_many(tokens[i : i + k])
                session.rollback(k)
                assert observe(session) == before, (i, k)
        session.advance(token)
        seen.append(observe(session))
    assert session.is_terminated()
    for i in reversed(range(len(tokens))):
        session.rollback(1)
        assert observe(session) == seen[i], i
    assert session.rollback_available == 0


def test_bad_rollbacks_and_drafts_change_nothing(bound, tokens):
    session = replay(bound, tokens[:4])
    before = observe(session)
    with pytest.raises(maskforge.RollbackError) as raised:
        session.rollback(5)
    assert (raised.value.requested, raised.value.available) == (5, 4)
    with pytest.raises(maskforge.InvalidArgumentError):
        session.rollback(-1)
    with pytest.raises(maskforge.ArgumentTypeError):
        session.rollback(1.5)
    refused = next(t for t in range(bound.mask_vocab_size) if not replay(bound, tokens[:6]).is_allowed(t))
    draft = [tokens[4], tokens[5], refused, tokens[6]]
    assert session.validate_tokens(draft) == 2
    with pytest.raises(maskforge.TokenRejectedError) as raised:
        session.advance_many(draft)
    assert (raised.value.index, raised.value.token_id, raised.value.reason) == (2, refused, "leaves_language")
    with pytest.raises(maskforge.TokenRejectedError) as raised:
        session.advance_many([tokens[4], -3])
    assert (raised.value.index, raised.value.token_id, raised.value.reason) == (1, -3, "out_of_range")
    assert session.validate_tokens([tokens[4], -3]) == 1
    assert session.validate_tokens([bound.mask_vocab_size]) == 0
    with pytest.raises(maskforge.ArgumentTypeError):
        session.validate_tokens([tokens[4], "x"])
    assert observe(session) == before and session.rollback_available == 4
    # A plain advance keeps its error without an index.
    with pytest.raises(maskforge.TokenRejectedError) as raised:
        session.advance(refused if not session.is_allowed(refused) else -1)
    assert raised.value.index is None


def test_max_rollback_tokens(bound, tokens):
    session = bound.start_session(max_rollback_tokens=3)
    for t in tokens:
        session.advance(t)
    assert session.rollback_available == 3
    with pytest.raises(maskforge.RollbackError):
        session.rollback(4)
    session.rollback(3)
    assert observe(session) == observe(replay(bound, tokens[:-3]))
    with pytest.raises(maskforge.InvalidArgumentError):
        bound.start_session(max_rollback_tokens=-1)
    assert bound.start_session(max_rollback_tokens=0).rollback_available == 0


def test_fork_and_copy_are_independent(bound, tokens):
    middle = len(tokens) // 2
    session = replay(bound, tokens[:middle])
    forks = [session.fork(), copy.copy(session), copy.deepcopy(session)]
    session.advance_many(tokens[middle:])
    results = [None] * len(forks)

    def finish(i: int) -> None:
        fork = forks[i]
        fork.rollback(i)  # into the shared past
        fork.advance_many(tokens[middle - i :])
        results[i] = observe(fork)

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(len(forks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    complete = observe(replay(bound, tokens))
    assert results == [complete] * len(forks)
    assert observe(session) == complete


def test_reset(bound, tokens):
    session = replay(bound, tokens)
    session.reset()
    assert session.rollback_available == 0 and not session.is_finished()
    assert observe(session) == observe(bound.start_session())


def test_random_interleavings_match_a_replay(bound, tokens):
    rng = random.Random(28)
    for _ in range(8):
        session = bound.start_session()
        committed = 0
        for _ in range(20):
            op = rng.choice(["advance", "many", "rollback", "fork", "validate"])
            left = len(tokens) - committed
            if op == "advance" and left:
                session.advance(tokens[committed])
                committed += 1
            elif op == "many":
                n = min(rng.randint(1, 5), left)
                session.advance_many(tokens[committed : committed + n])
                committed += n
            elif op == "rollback":
                n = rng.randint(0, 5)
                if n <= committed:
                    session.rollback(n)
                    committed -= n
                else:
                    with pytest.raises(maskforge.RollbackError):
                        session.rollback(n)
            elif op == "fork":
                session = session.fork()
            else:
                n = min(rng.randint(0, 4), left)
                assert session.validate_tokens(tokens[committed : committed + n] + [-1]) == n
            assert observe(session) == observe(replay(bound, tokens[:committed]))
            assert session.rollback_available == committed


def test_forced_bytes_follow_the_schema(gpt2_vocabulary):
    closed = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    compiler = maskforge.Compiler(max_json_whitespace=0)
    session = compiler.compile(closed).bind(gpt2_vocabulary).start_session()
    # The only key is forced whole: an escape (`\u006f`) would only spell the same key.
    assert session.forced_bytes() == b'{"ok":'
    two_keys = {**closed, "properties": {"ok": {}, "on": {}}, "required": ["ok", "on"]}
    open_object = compiler.compile(two_keys).bind(gpt2_vocabulary)
    assert open_object.start_session().forced_bytes() == b'{"o'  # then `k` or `n`
    for piece in (b'{"ok', b'":t'):
        for byte in piece:
            session.advance(next(t for t in range(256) if gpt2_vocabulary.token_bytes(t) == bytes([byte])))
    assert session.forced_bytes() == b"rue}"
    for byte in b"rue}":
        session.advance(next(t for t in range(256) if gpt2_vocabulary.token_bytes(t) == bytes([byte])))
    assert session.is_accepting() and session.forced_bytes() == b""


def test_rollback_on_one_thread_while_another_writes_masks(bound, tokens):
    """Calls on one session are serialised: each mask written is that of a state the session
    held (before or after a rollback), never a mixture, and nothing crashes."""
    base = 6
    valid = {observe(replay(bound, tokens[:n]))[0] for n in (base, base + 1, base + 2)}
    session = replay(bound, tokens[:base])
    stop = threading.Event()
    seen = []

    def writer() -> None:
        buffer = bytearray(session.mask_byte_count)
        while not stop.is_set():
            session.write_mask(buffer)
            seen.append(bytes(buffer))

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(200):
            session.advance_many(tokens[base : base + 2])
            session.rollback(2)
    finally:
        stop.set()
        thread.join()
    assert seen and set(seen) <= valid
