"""Batches of packed masks applied to logits, for NumPy arrays and PyTorch tensors.

The packed layout is the one every session writes and that other engines' int32 bitmask
kernels read: row ``r`` holds ``ceil(vocab / 32)`` 32-bit words, and token ``t`` is allowed
when bit ``t % 32`` of word ``t // 32`` is set. Unpacking is vectorised (no per-token Python
loop): ``np.unpackbits`` over the words' little-endian bytes, for torch CPU tensors too (they
share their memory with NumPy).

torch is never imported here: a tensor can only reach these functions if the caller imported
torch, and it is found through ``sys.modules``. Tensors must be on the CPU; device tensors are
rejected rather than mis-masked (masks are written on the host; copy the logits or move the
unpacked mask yourself).
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

from ._native import fill_masks
from .errors import MaskBufferError, MaskBufferTypeError

__all__ = ["allocate_token_bitmask", "apply_token_bitmask_inplace", "fill_masks", "unpack_token_bitmask"]


def allocate_token_bitmask(batch_size: int, mask_vocab_size: int, *, like: Optional[Any] = None) -> Any:
    """A ``[batch_size, ceil(mask_vocab_size / 32)]`` int32 buffer with every token allowed.

    A NumPy array, or a CPU torch tensor when ``like`` is a torch tensor.
    """
    if batch_size < 0 or mask_vocab_size < 0:
        raise ValueError("batch_size and mask_vocab_size must be non-negative")
    words = (mask_vocab_size + 31) // 32
    torch = _torch_of(like)
    if torch is not None:
        return torch.full((batch_size, words), -1, dtype=torch.int32)
    return np.full((batch_size, words), -1, dtype=np.int32)


def unpack_token_bitmask(bitmask: Any, vocab_size: int) -> Any:
    """The boolean ``[..., vocab_size]`` allowed-token array of a packed ``[..., words]`` one
    (a NumPy array, or a torch tensor for a torch bitmask)."""
    torch = _torch_of(bitmask)
    if torch is not None:
        _check_cpu(bitmask, "bitmask")
        # CPU tensors share memory with NumPy: unpack there (8 bits per byte, no [words, 32] grid).
        return torch.from_numpy(unpack_token_bitmask(bitmask.numpy(), vocab_size))
    array = np.asarray(bitmask)
    if array.dtype.kind not in "iu" or array.dtype.itemsize != 4:
        raise MaskBufferTypeError(f"a packed bitmask holds int32 or uint32 words, got {array.dtype}")
    _check_words(array.shape[-1], vocab_size)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    bits = np.unpackbits(little.view(np.uint8), axis=-1, count=vocab_size, bitorder="little")
    return bits.view(bool)  # unpackbits writes 0 or 1: a valid bool array as it is


def apply_token_bitmask_inplace(logits: Any, bitmask: Any) -> None:
    """Sets the logits of disallowed tokens to ``-inf``, in place.

    ``logits`` is ``[batch, vocab]`` (or ``[vocab]``), a float NumPy array or CPU torch tensor;
    ``bitmask`` the matching packed ``[batch, words]`` (or ``[words]``) int32/uint32 masks, as
    ``fill_masks`` or ``Session.write_mask`` wrote them (NumPy or torch, either with either).
    Columns beyond ``32 * words`` are refused: a mask must cover every logit.
    """
    torch = _torch_of(logits)
    if torch is not None:
        _check_cpu(logits, "logits")
        if not torch.is_floating_point(logits):
            raise MaskBufferTypeError(f"logits must be a floating-point tensor, got {logits.dtype}")
        if _torch_of(bitmask) is not None:
            _check_cpu(bitmask, "bitmask")
            bitmask = bitmask.numpy()
        _check_batch(tuple(logits.shape), np.shape(bitmask))
        disallowed = ~unpack_token_bitmask(bitmask, logits.shape[-1])
        logits.masked_fill_(torch.from_numpy(disallowed), float("-inf"))
        return
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise MaskBufferTypeError(
            f"logits must be a floating-point NumPy array or torch tensor, got {type(logits).__name__}"
        )
    if _torch_of(bitmask) is not None:
        _check_cpu(bitmask, "bitmask")
        bitmask = bitmask.numpy()
    _check_batch(logits.shape, np.shape(bitmask))
    disallowed = ~unpack_token_bitmask(bitmask, logits.shape[-1])
    np.copyto(logits, -np.inf, where=disallowed)


def _torch_of(obj: Any) -> Any:
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(obj, torch.Tensor) else None


def _check_cpu(tensor: Any, name: str) -> None:
    if tensor.device.type != "cpu":
        raise MaskBufferError(
            f"{name} on {tensor.device} are not supported: the tensor adapters run on CPU tensors"
        )


def _check_words(words: int, vocab_size: int) -> None:
    if 32 * words < vocab_size:
        raise MaskBufferError(f"a bitmask of {words} words covers {32 * words} tokens, fewer than {vocab_size}")


def _check_batch(logits_shape: tuple, bitmask_shape: tuple) -> None:
    if len(logits_shape) != len(bitmask_shape) or logits_shape[:-1] != bitmask_shape[:-1]:
        raise MaskBufferError(
            f"logits of shape {list(logits_shape)} do not match a bitmask of shape {list(bitmask_shape)}"
        )
