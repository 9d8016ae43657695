"""Batched steps: `advance_batch` and `rollback_batch` commit every session's step or none, and
each session ends where a fresh session replaying its tokens would, on GPT-2."""

from __future__ import annotations

import threading
from typing import List, Tuple

import pytest

import maskforge
from maskforge.errors import ArgumentTypeError, InvalidArgumentError, RollbackError, TokenRejectedError

SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"sku": {"type": "string", "maxLength": 8}, "qty": {"type": "integer", "minimum": 1}},
        "required": ["sku", "qty"],
    },
}
INSTANCE = '[{"sku": "A-17", "qty": 2}, {"sku": "B-4", "qty": 12, "note": "fragile"}]'
# Where the sessions of the batch stand, in tokens of the instance.
STARTS = [0, 3, 6, 9]


@pytest.fixture(scope="module")
def bound(gpt2_vocabulary):
    return maskforge.Compiler.without_cache().compile(SCHEMA).bind(gpt2_vocabulary)


def allowed(session: maskforge.Session) -> List[int]:
    buffer = bytearray(session.mask_byte_count)
    session.write_mask(buffer)
    return [i for i in range(len(buffer) * 8) if buffer[i // 8] >> (i % 8) & 1]


@pytest.fixture(scope="module")
def tokens(bound) -> List[int]:
    """The instance spelled with the longest allowed token at each step, then EOS and a padding EOS."""
    vocabulary, session = bound.vocabulary, bound.start_session()
    text, spelled = INSTANCE.encode(), []
    while text:
        pieces = [(vocabulary.token_bytes(t) or b"", t) for t in allowed(session)]
        piece, token = max(((p, t) for p, t in pieces if p and text.startswith(p)), key=lambda pt: len(pt[0]))
        session.advance(token)
        spelled.append(token)
        text = text[len(piece) :]
    eos = vocabulary.eos_token_ids[0]
    return spelled + [eos, eos]


def observe(session: maskforge.Session) -> Tuple[bytes, bool, bool, int]:
    buffer = bytearray(session.mask_byte_count)
    session.write_mask(buffer)
    return bytes(buffer), session.is_accepting(), session.is_finished(), session.rollback_available


def replay(bound, tokens) -> maskforge.Session:
    session = bound.start_session()
    for t in tokens:
        session.advance(t)
    return session


@pytest.fixture
def batch(bound, tokens) -> List[maskforge.Session]:
    return [replay(bound, tokens[:n]) for n in STARTS]


def refused_at(session: maskforge.Session) -> int:
    """A token id the session's mask forbids."""
    ids = set(allowed(session))
    return next(i for i in range(session.mask_byte_count * 8) if i not in ids)


def test_batched_steps_match_replays(bound, tokens, batch):
    committed = [list(tokens[:n]) for n in STARTS]
    eos = bound.vocabulary.eos_token_ids[0]
    for _ in range(len(tokens)):
        step = [tokens[len(c)] if len(c) < len(tokens) else eos for c in committed]
        maskforge.advance_batch(batch, step)
        for c, t in zip(committed, step):
            c.append(t)
        assert [observe(s) for s in batch] == [observe(replay(bound, c)) for c in committed]
    assert all(s.is_finished() for s in batch)
    for counts in ([1, 2, 0, 3], [5, 0, 4, 1], (2, 2, 2, 2)):
        maskforge.rollback_batch(batch, counts)
        committed = [c[: len(c) - n] for c, n in zip(committed, counts)]
        assert [observe(s) for s in batch] == [observe(replay(bound, c)) for c in committed]
    maskforge.rollback_batch(batch, [len(c) for c in committed])
    assert [observe(s) for s in batch] == [observe(bound.start_session())] * len(batch)


def test_a_refusal_mid_batch_changes_no_session(bound, tokens, batch):
    before = [observe(s) for s in batch]
    step = [tokens[n] for n in STARTS]
    for index, token, reason in [
        (2, refused_at(batch[2]), "leaves_language"),
        (1, bound.mask_vocab_size, "out_of_range"),
        (3, -1, "out_of_range"),
        (0, 2**70, "out_of_range"),
    ]:
        offered = list(step)
        offered[index] = token
        with pytest.raises(TokenRejectedError) as error:
            maskforge.advance_batch(batch, offered)
        assert (error.value.index, error.value.token_id, error.value.reason) == (index, token, reason)
        assert f"batch session {index}" in str(error.value)
        assert [observe(s) for s in batch] == before
    with pytest.raises(RollbackError) as error:
        maskforge.rollback_batch(batch, [0, 1, 7, 2])
    assert (error.value.index, error.value.requested, error.value.available) == (2, 7, 6)
    assert [observe(s) for s in batch] == before
    # The same step, accepted, moves every session.
    maskforge.advance_batch(batch, step)
    assert [observe(s) for s in batch] == [observe(replay(bound, tokens[: n + 1])) for n in STARTS]


def test_a_finished_session_takes_only_eos(bound, tokens):
    done, open_ = replay(bound, tokens), replay(bound, tokens[:2])
    before = [observe(done), observe(open_)]
    with pytest.raises(TokenRejectedError) as error:
        maskforge.advance_batch([open_, done], [tokens[2], tokens[0]])
    assert (error.value.index, error.value.reason) == (1, "session_finished")
    assert [observe(done), observe(open_)] == before
    maskforge.advance_batch([open_, done], [tokens[2], tokens[-1]])
    assert observe(open_) == observe(replay(bound, tokens[:3]))


@pytest.mark.parametrize(
    "call",
    [
        lambda b, t: maskforge.advance_batch(b, [t[0]] * 3),
        lambda b, t: maskforge.advance_batch(b, [t[0]] * 5),
        lambda b, t: maskforge.rollback_batch(b, [0, 0, 0]),
        lambda b, t: maskforge.rollback_batch(b, []),
        lambda b, t: maskforge.rollback_batch(b, [0, -1, 0, 0]),
        lambda b, t: maskforge.advance_batch([b[0], b[1], b[0], b[3]], [t[0], t[3], t[0], t[9]]),
        lambda b, t: maskforge.rollback_batch([b[0], b[1], b[1], b[3]], [0, 1, 1, 1]),
        lambda b, t: maskforge.advance_batch([None, b[1], b[2], b[3]], [t[0], t[3], t[6], t[9]]),
        lambda b, t: maskforge.advance_batch(b, [t[0], t[3], 6.0, t[9]]),
        lambda b, t: maskforge.advance_batch(b, [t[0], True, t[6], t[9]]),
        lambda b, t: maskforge.rollback_batch(b, [0, 1.0, 0, 0]),
        lambda b, t: maskforge.rollback_batch(b, 3),
        lambda b, t: maskforge.advance_batch(b[0], [t[0]]),
        lambda b, t: maskforge.advance_batch(b, "abcd"),
    ],
    ids=[
        "too-few-tokens",
        "too-many-tokens",
        "too-few-counts",
        "no-counts",
        "negative-count",
        "session-twice-advance",
        "session-twice-rollback",
        "none-entry",
        "float-token",
        "bool-token",
        "float-count",
        "counts-not-a-sequence",
        "sessions-not-a-sequence",
        "tokens-a-string",
    ],
)
def test_bad_arguments_are_refused_and_change_nothing(bound, tokens, batch, call):
    before = [observe(s) for s in batch]
    with pytest.raises((InvalidArgumentError, ArgumentTypeError)) as error:
        call(batch, tokens)
    assert isinstance(error.value, (ValueError, TypeError))
    assert [observe(s) for s in batch] == before


def test_argument_errors_name_their_kind(tokens, batch):
    with pytest.raises(InvalidArgumentError, match="4 sessions was given 3 tokens"):
        maskforge.advance_batch(batch, [tokens[0]] * 3)
    with pytest.raises(InvalidArgumentError, match=r"sessions\[2\] is sessions\[0\]"):
        maskforge.rollback_batch([batch[0], batch[1], batch[0]], [0, 0, 0])
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        maskforge.rollback_batch(batch, [0, -1, 0, 0])
    with pytest.raises(ArgumentTypeError, match=r"sessions\[1\] must be a Session"):
        maskforge.rollback_batch([batch[0], "x"], [0, 0])
    with pytest.raises(ArgumentTypeError):
        maskforge.advance_batch(batch, [tokens[0], "x", tokens[0], tokens[0]])


def test_empty_batches_are_no_ops():
    maskforge.advance_batch([], [])
    maskforge.rollback_batch([], ())


def test_overlapping_batches_on_threads_do_not_deadlock(bound, tokens):
    # Two threads step batches that share sessions, listed in opposite orders: finished sessions
    # padded with EOS and rolled back, so that every interleaving is valid.
    shared = [replay(bound, tokens) for _ in range(4)]
    eos = tokens[-1]
    errors: List[BaseException] = []

    def work(order: List[int]) -> None:
        try:
            for _ in range(200):
                sessions = [shared[i] for i in order]
                maskforge.advance_batch(sessions, [eos] * len(sessions))
                maskforge.rollback_batch(sessions, [1] * len(sessions))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(o,)) for o in ([0, 1, 2, 3], [3, 2, 1, 0])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors
    assert [observe(s) for s in shared] == [observe(replay(bound, tokens))] * 4
