"""Tensor adapters: `fill_masks` over many sessions, and packed masks applied to logits.

Every fast path is compared with the plain route: one `Session.write_mask` per session, and a
bit-by-bit reading of the packed words in Python.
"""

from __future__ import annotations

import numpy as np
import pytest

import maskforge
from conftest import OBJECT_SCHEMA, TOY_TOKENS

SCHEMAS = [OBJECT_SCHEMA, {"enum": ["a", "b"]}, {"type": "array", "items": {"type": "boolean"}}]


def reference_allowed(words: np.ndarray, vocab_size: int) -> np.ndarray:
    """Token t allowed <=> bit t % 32 of word t // 32, read one token at a time."""
    words = np.atleast_2d(words).astype(np.uint32)
    out = np.zeros((words.shape[0], vocab_size), dtype=bool)
    for row in range(words.shape[0]):
        for token in range(vocab_size):
            out[row, token] = bool(int(words[row, token // 32]) >> (token % 32) & 1)
    return out


@pytest.fixture(scope="module")
def gpt2_sessions(gpt2_vocabulary):
    """Sessions at different positions of different schemas (regular and structured arms)."""
    compiler = maskforge.Compiler()
    sessions = []
    prefixes = [b"", b'{"a"', b'{"a": tr', b'"', b'[true, ']
    for index in range(24):
        schema = SCHEMAS[index % len(SCHEMAS)]
        session = compiler.compile(schema).bind(gpt2_vocabulary).start_session()
        prefix = prefixes[index % len(prefixes)]
        if prefix and _feed(gpt2_vocabulary, session, prefix):
            sessions.append(session)
        elif not prefix:
            sessions.append(session)
    return sessions


def _feed(vocabulary, session, text: bytes) -> bool:
    """Feeds `text` one byte-token at a time; False when the schema refuses it."""
    byte_ids = {}
    for token in range(vocabulary.tokenizer_size):
        piece = vocabulary.token_bytes(token)
        if piece is not None and len(piece) == 1:
            byte_ids[piece[0]] = token
    for byte in text:
        if not session.is_allowed(byte_ids[byte]):
            return False
        session.advance(byte_ids[byte])
    return True


def one_by_one(sessions) -> np.ndarray:
    rows = np.zeros((len(sessions), sessions[0].mask_word_count), dtype=np.int32)
    for row, session in zip(rows, sessions):
        session.write_mask(row)
    return rows


# ---------------------------------------------------------------------------
# fill_masks


def test_fill_masks_equals_one_write_per_session(gpt2_sessions):
    expected = one_by_one(gpt2_sessions)
    assert len({row.tobytes() for row in expected}) > 3, "the sessions must not all share one mask"
    batch = np.zeros_like(expected)
    # 24 structured and regular rows over GPT-2: enough work for threads on a multi-core machine.
    maskforge.fill_masks(gpt2_sessions, batch)
    assert np.array_equal(batch, expected)
    few = np.zeros_like(expected[:3])
    maskforge.fill_masks(gpt2_sessions[:3], few)
    assert np.array_equal(few, expected[:3])


def test_fill_masks_takes_every_buffer_kind(gpt2_sessions):
    sessions = gpt2_sessions[:5]
    expected = one_by_one(sessions)
    flat = np.zeros(expected.size, dtype=np.uint32)
    maskforge.fill_masks(sessions, flat)
    assert np.array_equal(flat.view(np.int32).reshape(expected.shape), expected)
    raw = bytearray(expected.nbytes)
    maskforge.fill_masks(sessions, raw)
    assert bytes(raw) == expected.astype("<i4").tobytes()
    big_endian = np.zeros(expected.shape, dtype=">i4")
    maskforge.fill_masks(sessions, big_endian)
    assert np.array_equal(big_endian.astype(np.int32), expected)


def test_fill_masks_leaves_extra_rows_and_words_alone(gpt2_sessions):
    sessions = gpt2_sessions[:6]
    expected = one_by_one(sessions)
    wide = np.full((8, expected.shape[1] + 3), 7, dtype=np.int32)
    maskforge.fill_masks(sessions, wide)
    assert np.array_equal(wide[:6, : expected.shape[1]], expected)
    assert (wide[:6, expected.shape[1]:] == 7).all() and (wide[6:] == 7).all()


def test_fill_masks_rejects_bad_arguments_and_writes_nothing(gpt2_sessions, toy_vocabulary):
    sessions = gpt2_sessions[:4]
    words = sessions[0].mask_word_count
    untouched = np.full((4, words), 5, dtype=np.int32)
    cases = [
        (np.full((3, words), 5, dtype=np.int32), maskforge.MaskBufferError, "too small"),
        (np.full((4, words - 1), 5, dtype=np.int32), maskforge.MaskBufferError, "too small"),
        (np.full(4 * words - 1, 5, dtype=np.int32), maskforge.MaskBufferError, "too small"),
        (np.full((4, words), 5, dtype=np.float32), maskforge.MaskBufferTypeError, "32-bit"),
        (np.full((2, 4, words), 5, dtype=np.int32), maskforge.MaskBufferError, "1-D or 2-D"),
        (np.full((words, 4), 5, dtype=np.int32).T, maskforge.MaskBufferError, "contiguous"),
        ([0] * (4 * words), maskforge.MaskBufferTypeError, "mask buffer"),
    ]
    for buffer, error, message in cases:
        with pytest.raises(error, match=message):
            maskforge.fill_masks(sessions, buffer)
        if isinstance(buffer, np.ndarray):
            assert (buffer == 5).all()
    read_only = untouched.copy()
    read_only.flags.writeable = False
    with pytest.raises(maskforge.MaskBufferError, match="read-only"):
        maskforge.fill_masks(sessions, read_only)
    with pytest.raises(maskforge.ArgumentTypeError, match=r"sessions\[1\]"):
        maskforge.fill_masks([sessions[0], "not a session"], untouched)
    other = maskforge.Compiler().compile(OBJECT_SCHEMA).bind(toy_vocabulary).start_session()
    with pytest.raises(maskforge.InvalidArgumentError, match="mask width"):
        maskforge.fill_masks([sessions[0], other], untouched)
    assert (untouched == 5).all()
    maskforge.fill_masks([], untouched)  # an empty batch writes nothing
    assert (untouched == 5).all()


def test_fill_masks_accepts_a_session_twice(gpt2_sessions):
    session = gpt2_sessions[1]
    batch = np.zeros((16, session.mask_word_count), dtype=np.int32)
    maskforge.fill_masks([session] * 16, batch)
    assert (batch == one_by_one([session])[0]).all()


def test_fill_masks_writes_the_rows_named_and_fills_none_with_everything(gpt2_sessions):
    sessions = gpt2_sessions[:5]
    expected = one_by_one(sessions)
    words = expected.shape[1]
    batch = np.full((9, words), 5, dtype=np.int32)
    rows = [7, 0, 3, 8, 1, 5]
    maskforge.fill_masks(sessions[:3] + [None] + sessions[3:], batch, rows=rows)
    assert np.array_equal(batch[[7, 0, 3, 1, 5]], expected)
    assert (batch[8] == -1).all(), "a None entry's row allows everything"
    assert (batch[[2, 4, 6]] == 5).all(), "rows not named are left alone"
    flat = np.zeros(9 * words, dtype=np.int32)
    maskforge.fill_masks(sessions[:3] + [None] + sessions[3:], flat, rows=rows)
    assert np.array_equal(flat.reshape(9, words)[[7, 0, 3, 1, 5]], expected)


def test_fill_masks_rejects_bad_rows_and_writes_nothing(gpt2_sessions):
    sessions = gpt2_sessions[:3]
    words = sessions[0].mask_word_count
    untouched = np.full((4, words), 5, dtype=np.int32)
    for rows, error, message in [
        ([0, 1], maskforge.InvalidArgumentError, "rows names 2 rows for 3 sessions"),
        ([0, 1, 1], maskforge.InvalidArgumentError, "named twice"),
        ([0, 1, -1], maskforge.InvalidArgumentError, "non-negative"),
        ([0, 1, 4], maskforge.MaskBufferError, "too small"),
        ([0, 1, "2"], maskforge.ArgumentTypeError, "row index"),
        (5, maskforge.ArgumentTypeError, "rows must be a sequence"),
    ]:
        with pytest.raises(error, match=message):
            maskforge.fill_masks(sessions, untouched, rows=rows)
        assert (untouched == 5).all()
    with pytest.raises(maskforge.InvalidArgumentError, match="at least one session"):
        maskforge.fill_masks([None, None], untouched)
    assert (untouched == 5).all()


# ---------------------------------------------------------------------------
# unpacking and applying, NumPy


def random_words(rng, rows: int, vocab_size: int) -> np.ndarray:
    return rng.integers(-(2**31), 2**31, size=(rows, (vocab_size + 31) // 32), dtype=np.int64).astype(np.int32)


@pytest.mark.parametrize("vocab_size", [1, 31, 32, 33, 100, 1000])
def test_unpack_matches_the_bit_layout(vocab_size):
    rng = np.random.default_rng(vocab_size)
    words = random_words(rng, 3, vocab_size)
    expected = reference_allowed(words, vocab_size)
    assert np.array_equal(maskforge.tensors.unpack_token_bitmask(words, vocab_size), expected)
    assert np.array_equal(maskforge.tensors.unpack_token_bitmask(words.view(np.uint32), vocab_size), expected)
    assert np.array_equal(maskforge.tensors.unpack_token_bitmask(words[0], vocab_size), expected[0])


def test_apply_numpy_sets_exactly_the_disallowed_logits_to_minus_infinity():
    rng = np.random.default_rng(0)
    words = random_words(rng, 4, 300)
    logits = rng.standard_normal((4, 300)).astype(np.float32)
    original = logits.copy()
    maskforge.apply_token_bitmask_inplace(logits, words)
    allowed = reference_allowed(words, 300)
    assert np.array_equal(logits[allowed], original[allowed])
    assert np.isneginf(logits[~allowed]).all()
    single = original[0].astype(np.float64)
    maskforge.apply_token_bitmask_inplace(single, words[0])
    assert np.array_equal(np.isneginf(single), ~allowed[0])


def test_apply_refuses_mismatched_shapes_and_types():
    words = np.zeros((2, 4), dtype=np.int32)
    with pytest.raises(maskforge.MaskBufferError, match="covers 128 tokens"):
        maskforge.apply_token_bitmask_inplace(np.zeros((2, 129), dtype=np.float32), words)
    with pytest.raises(maskforge.MaskBufferError, match="do not match"):
        maskforge.apply_token_bitmask_inplace(np.zeros((3, 100), dtype=np.float32), words)
    with pytest.raises(maskforge.MaskBufferTypeError, match="floating-point"):
        maskforge.apply_token_bitmask_inplace(np.zeros((2, 100), dtype=np.int64), words)
    with pytest.raises(maskforge.MaskBufferTypeError, match="int32 or uint32"):
        maskforge.apply_token_bitmask_inplace(np.zeros((2, 100), dtype=np.float32), words.astype(np.int64))


def test_a_session_mask_applied_allows_exactly_its_tokens(toy_vocabulary):
    session = maskforge.Compiler().compile(OBJECT_SCHEMA).bind(toy_vocabulary).start_session()
    masks = maskforge.allocate_token_bitmask(1, toy_vocabulary.mask_vocab_size)
    assert (masks == -1).all()
    maskforge.fill_masks([session], masks)
    logits = np.zeros((1, len(TOY_TOKENS)), dtype=np.float32)
    maskforge.apply_token_bitmask_inplace(logits, masks)
    finite = {int(t) for t in np.flatnonzero(np.isfinite(logits[0]))}
    assert finite == {t for t in range(len(TOY_TOKENS)) if session.is_allowed(t)}


# ---------------------------------------------------------------------------
# torch


def test_torch_adapters_match_numpy(gpt2_sessions):
    torch = pytest.importorskip("torch")
    sessions = gpt2_sessions[:9]
    expected = one_by_one(sessions)
    buffer = maskforge.allocate_token_bitmask(len(sessions), 50257, like=torch.empty(0))
    assert isinstance(buffer, torch.Tensor) and buffer.dtype == torch.int32
    maskforge.fill_masks(sessions, buffer)
    assert np.array_equal(buffer.numpy(), expected)
    rng = np.random.default_rng(1)
    original = rng.standard_normal((len(sessions), 50257)).astype(np.float32)
    by_numpy = original.copy()
    maskforge.apply_token_bitmask_inplace(by_numpy, expected)
    for masks in (buffer, expected):  # a torch mask or a NumPy one
        for dtype in (torch.float32, torch.bfloat16):
            logits = torch.from_numpy(original.copy()).to(dtype)
            maskforge.apply_token_bitmask_inplace(logits, masks)
            assert torch.equal(torch.isinf(logits), torch.from_numpy(np.isneginf(by_numpy)))
    logits_np = original.copy()
    maskforge.apply_token_bitmask_inplace(logits_np, buffer)  # NumPy logits, torch mask
    assert np.array_equal(np.isneginf(logits_np), np.isneginf(by_numpy))


def test_torch_device_tensors_are_refused():
    torch = pytest.importorskip("torch")
    logits = torch.zeros((1, 64), device="meta")
    with pytest.raises(maskforge.MaskBufferError, match="meta"):
        maskforge.apply_token_bitmask_inplace(logits, np.zeros((1, 2), dtype=np.int32))
