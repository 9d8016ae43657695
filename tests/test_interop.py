"""MaskForge's packed masks are the int32 token bitmasks other engines' kernels take, unchanged.

Layout shared by XGrammar, llguidance and vLLM: row `b` is `ceil(vocab / 32)` int32 words; token
`t` is allowed when bit `t % 32` (least significant first) of word `t // 32` is set; the sign bit
is token `32k + 31`. A kernel written the way those engines write theirs (a shift by an arange,
`& 1`, `masked_fill_`), and the engines' own kernels where they are installed, must agree with
`maskforge.apply_token_bitmask_inplace` and with `Session.is_allowed` on real masks.
"""

from __future__ import annotations

import numpy as np
import pytest

import maskforge

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
    "required": ["name"],
}
# Positions in the instance: structure, inside a string, inside an array, complete.
PREFIXES = [b"", b'{"name": "x', b'{"name": "x", "tags": [', b'{"name": "x"}']


@pytest.fixture(scope="module")
def masks_and_sessions(gpt2_vocabulary):
    bound = maskforge.Compiler().compile(SCHEMA).bind(gpt2_vocabulary)
    byte_ids = {}
    for token in range(gpt2_vocabulary.tokenizer_size):
        piece = gpt2_vocabulary.token_bytes(token)
        if piece is not None and len(piece) == 1:
            byte_ids[piece[0]] = token
    sessions = []
    for prefix in PREFIXES:
        session = bound.start_session()
        for byte in prefix:
            session.advance(byte_ids[byte])
        sessions.append(session)
    masks = maskforge.allocate_token_bitmask(len(sessions), bound.mask_vocab_size)
    maskforge.fill_masks(sessions, masks)
    return masks, sessions, bound.mask_vocab_size


def engine_style_apply(logits, bitmask) -> None:
    """The kernel as the engines write it in torch: unpack 32 bits per int32 word with an
    arithmetic shift by an arange, keep the vocabulary's width, fill the zeros with -inf."""
    torch = pytest.importorskip("torch")
    bits = (bitmask.unsqueeze(-1) >> torch.arange(32, dtype=torch.int32)) & 1
    allowed = bits.reshape(bitmask.shape[0], -1)[:, : logits.shape[-1]].bool()
    logits.masked_fill_(~allowed, float("-inf"))


def test_masks_are_int32_rows_in_the_shared_layout(masks_and_sessions):
    masks, sessions, vocab_size = masks_and_sessions
    assert masks.dtype == np.int32 and masks.shape == (len(sessions), (vocab_size + 31) // 32)
    # Some rows use the sign bit, so signed and unsigned readings must agree.
    assert (masks < 0).any()
    for row, session in zip(masks, sessions):
        unsigned = row.view(np.uint32)
        allowed = [(int(unsigned[t // 32]) >> (t % 32)) & 1 == 1 for t in range(vocab_size)]
        assert allowed == [session.is_allowed(t) for t in range(vocab_size)]


def test_an_engine_style_kernel_agrees_with_maskforge(masks_and_sessions):
    torch = pytest.importorskip("torch")
    masks, sessions, vocab_size = masks_and_sessions
    logits = torch.randn((len(sessions), vocab_size), generator=torch.Generator().manual_seed(0))
    theirs, ours = logits.clone(), logits.clone()
    engine_style_apply(theirs, torch.from_numpy(masks))
    maskforge.apply_token_bitmask_inplace(ours, masks)
    assert torch.equal(theirs, ours)
    for row, session in enumerate(sessions):
        finite = set(torch.isfinite(ours[row]).nonzero().flatten().tolist())
        assert finite == {t for t in range(vocab_size) if session.is_allowed(t)}


def test_xgrammar_kernel_takes_maskforge_masks(masks_and_sessions):
    torch = pytest.importorskip("torch")
    xgrammar = pytest.importorskip("xgrammar")
    masks, sessions, vocab_size = masks_and_sessions
    logits = torch.randn((len(sessions), vocab_size), generator=torch.Generator().manual_seed(1))
    theirs, ours = logits.clone(), logits.clone()
    xgrammar.apply_token_bitmask_inplace(theirs, torch.from_numpy(masks), vocab_size=vocab_size)
    maskforge.apply_token_bitmask_inplace(ours, masks)
    assert torch.equal(theirs, ours)


def test_llguidance_kernel_takes_maskforge_masks(masks_and_sessions):
    llguidance_numpy = pytest.importorskip("llguidance.numpy")
    masks, sessions, vocab_size = masks_and_sessions
    # llguidance's NumPy kernel reads logits as wide as the mask covers.
    width = masks.shape[1] * 32
    logits = np.random.default_rng(2).standard_normal((len(sessions), width)).astype(np.float32)
    theirs, ours = logits.copy(), logits[:, :vocab_size].copy()
    llguidance_numpy.apply_token_bitmask_inplace(theirs, masks)
    maskforge.apply_token_bitmask_inplace(ours, masks)
    assert np.array_equal(theirs[:, :vocab_size], ours)
