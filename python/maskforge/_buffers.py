"""Mask buffers without the buffer protocol.

The native ``Session.write_mask`` takes any writable 1-D contiguous buffer of bytes or 32-bit
integers directly. Objects without the buffer protocol come here first: CPU torch tensors are
viewed as NumPy arrays sharing their memory; anything else is refused with a clear message.
torch is never imported by maskforge; a tensor can only exist if the caller imported it.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import MaskBufferError, MaskBufferTypeError

_SUPPORTED = "a bytearray, a NumPy int32/uint32 array or a CPU torch int32 tensor"


def writable_view(obj: Any) -> Any:
    """A buffer-protocol view of ``obj`` that shares its memory, or a ``MaskBufferError``."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _torch_view(torch, obj)
    raise MaskBufferTypeError(f"a mask buffer must be {_SUPPORTED}; got {type(obj).__name__}")


def _torch_view(torch: Any, tensor: Any) -> Any:
    if tensor.device.type != "cpu":
        raise MaskBufferError(
            f"mask buffers on {tensor.device} are not supported yet: write into a CPU int32 tensor "
            "(pinned memory works) and copy it to the device"
        )
    accepted = [torch.int32] + ([torch.uint32] if hasattr(torch, "uint32") else [])
    if tensor.dtype not in accepted:
        raise MaskBufferTypeError(f"a torch mask buffer must have dtype torch.int32; got {tensor.dtype}")
    if not tensor.is_contiguous():
        raise MaskBufferError("the mask buffer must be C-contiguous")
    # The number of dimensions is checked natively (1-D for a session, 1-D or 2-D for a batch).
    # detach(): numpy() refuses tensors that require grad; the view still shares memory.
    return tensor.detach().numpy()
