"""write_mask into every supported buffer kind, and typed refusals of the others."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import maskforge
from conftest import STRING_SCHEMA


@pytest.fixture
def session(compiler, gpt2_vocabulary):
    session = compiler.compile(STRING_SCHEMA).bind(gpt2_vocabulary).start_session()
    session.advance(1)  # '"': most tokens allowed, so masks are dense and varied
    session.advance(31373)  # 'hello'
    return session


@pytest.fixture
def reference(session) -> bytes:
    buffer = bytearray(session.mask_byte_count)
    session.write_mask(buffer)
    return bytes(buffer)


def test_counts(session, gpt2_vocabulary):
    assert session.mask_word_count == (gpt2_vocabulary.mask_vocab_size + 31) // 32
    assert session.mask_byte_count == 4 * session.mask_word_count


def test_layout_matches_is_allowed(session, reference, gpt2_vocabulary):
    bits = np.unpackbits(np.frombuffer(reference, dtype=np.uint8), bitorder="little")
    allowed = {int(i) for i in np.flatnonzero(bits)}
    assert allowed == {i for i in range(gpt2_vocabulary.mask_vocab_size) if session.is_allowed(i)}
    assert 0 < len(allowed) < gpt2_vocabulary.tokenizer_size


def test_bytearray_int32_uint32_uint8_agree(session, reference):
    words = session.mask_word_count
    as_u32 = np.zeros(words, dtype=np.uint32)
    as_i32 = np.zeros(words, dtype=np.int32)
    as_u8 = np.zeros(4 * words, dtype=np.uint8)
    session.write_mask(as_u32)
    session.write_mask(as_i32)
    session.write_mask(as_u8)
    assert as_u32.astype("<u4").tobytes() == reference
    assert as_i32.astype("<i4").tobytes() == reference
    assert np.array_equal(as_i32.view(np.uint32), as_u32)
    assert as_u8.tobytes() == reference
    word = int(as_u32[0])
    assert word == int.from_bytes(reference[:4], "little")


def test_explicit_byte_orders(session, reference):
    words = session.mask_word_count
    little = np.zeros(words, dtype="<u4")
    big = np.zeros(words, dtype=">i4")
    session.write_mask(little)
    session.write_mask(big)
    assert little.tobytes() == reference
    assert np.array_equal(big.astype(np.int64), little.view("<i4").astype(np.int64))


def test_memoryview_and_unaligned_views(session, reference):
    backing = bytearray(len(reference) + 1)
    session.write_mask(memoryview(backing)[1:])
    assert bytes(backing[1:]) == reference
    unaligned = np.frombuffer(backing, dtype=np.int32, offset=1, count=session.mask_word_count)
    unaligned[:] = 0
    session.write_mask(unaligned)
    assert unaligned.astype("<i4").tobytes() == reference


def test_larger_buffer_only_prefix_written(session, reference):
    buffer = bytearray(b"\xab" * (len(reference) + 9))
    session.write_mask(buffer)
    assert bytes(buffer[: len(reference)]) == reference
    assert bytes(buffer[len(reference):]) == b"\xab" * 9
    words = np.full(session.mask_word_count + 3, -7, dtype=np.int32)
    session.write_mask(words)
    assert list(words[-3:]) == [-7, -7, -7]


def test_batch_rows(session, reference):
    batch = np.zeros((3, session.mask_word_count), dtype=np.int32)
    session.write_mask(batch[1])
    assert not batch[0].any() and not batch[2].any()
    assert batch[1].astype("<i4").tobytes() == reference


@pytest.mark.parametrize(
    "make",
    [
        lambda n: bytearray(4 * n - 1),
        lambda n: np.zeros(n - 1, dtype=np.int32),
        lambda n: np.zeros(n - 1, dtype=np.uint32),
        lambda n: bytearray(0),
    ],
    ids=["bytearray", "int32", "uint32", "empty"],
)
def test_short_buffers(session, make):
    buffer = make(session.mask_word_count)
    snapshot = bytes(buffer)
    with pytest.raises(maskforge.MaskBufferError, match="too small") as info:
        session.write_mask(buffer)
    assert isinstance(info.value, ValueError)
    assert bytes(buffer) == snapshot


def test_read_only_buffers(session):
    with pytest.raises(maskforge.MaskBufferError, match="read-only"):
        session.write_mask(bytes(session.mask_byte_count))
    array = np.zeros(session.mask_word_count, dtype=np.int32)
    array.flags.writeable = False
    with pytest.raises(maskforge.MaskBufferError, match="read-only"):
        session.write_mask(array)
    assert not array.any()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int16, np.bool_])
def test_wrong_element_types(session, dtype):
    array = np.zeros(session.mask_word_count * 4, dtype=dtype)
    with pytest.raises(maskforge.MaskBufferTypeError) as info:
        session.write_mask(array)
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, maskforge.MaskBufferError)
    assert not array.any()


@pytest.mark.parametrize("value", [[0] * 10000, "x" * 10000, None, 3, object()])
def test_objects_without_buffers(session, value):
    with pytest.raises(maskforge.MaskBufferTypeError, match="bytearray"):
        session.write_mask(value)


def test_shapes_and_strides(session):
    words = session.mask_word_count
    two_d = np.zeros((2, words), dtype=np.int32)
    with pytest.raises(maskforge.MaskBufferError, match="1-D"):
        session.write_mask(two_d)
    strided = np.zeros(2 * words, dtype=np.int32)[::2]
    with pytest.raises(maskforge.MaskBufferError, match="contiguous"):
        session.write_mask(strided)
    fortran = np.zeros((words, 2), dtype=np.int32, order="F")[:, 0]
    session.write_mask(fortran)  # a contiguous column is fine
    scalar = np.zeros((), dtype=np.int32)
    with pytest.raises(maskforge.MaskBufferError):
        session.write_mask(scalar)
    assert not two_d.any() and not strided.any()


# torch is optional: these run where it is installed.


def test_torch_int32_tensor(session, reference):
    torch = pytest.importorskip("torch")
    tensor = torch.zeros(session.mask_word_count, dtype=torch.int32)
    session.write_mask(tensor)
    assert tensor.numpy().astype("<i4").tobytes() == reference
    batch = torch.zeros((2, session.mask_word_count), dtype=torch.int32)
    session.write_mask(batch[1])
    assert batch[1].numpy().astype("<i4").tobytes() == reference
    assert not batch[0].any()


def test_torch_refusals(session):
    torch = pytest.importorskip("torch")
    words = session.mask_word_count
    with pytest.raises(maskforge.MaskBufferTypeError, match="int32"):
        session.write_mask(torch.zeros(words, dtype=torch.float32))
    with pytest.raises(maskforge.MaskBufferTypeError, match="int32"):
        session.write_mask(torch.zeros(words, dtype=torch.int64))
    with pytest.raises(maskforge.MaskBufferError, match="1-D"):
        session.write_mask(torch.zeros((2, words), dtype=torch.int32))
    with pytest.raises(maskforge.MaskBufferError, match="contiguous"):
        session.write_mask(torch.zeros(2 * words, dtype=torch.int32)[::2])
    with pytest.raises(maskforge.MaskBufferError, match="too small"):
        session.write_mask(torch.zeros(words - 1, dtype=torch.int32))
    with pytest.raises(maskforge.MaskBufferError, match="not supported"):
        session.write_mask(torch.zeros(words, dtype=torch.int32, device="meta"))


def test_torch_cuda_tensors_are_refused(session):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    tensor = torch.zeros(session.mask_word_count, dtype=torch.int32, device="cuda")
    with pytest.raises(maskforge.MaskBufferError, match="not supported"):
        session.write_mask(tensor)
    assert not tensor.any().item()


class _FakeDevice:
    def __init__(self, kind: str) -> None:
        self.type = kind

    def __str__(self) -> str:
        return self.type


class _FakeTensor:
    """The part of ``torch.Tensor`` the adapter uses, backed by a NumPy array (shares memory)."""

    def __init__(self, array: np.ndarray, device: str = "cpu") -> None:
        self._array = array
        self.device = _FakeDevice(device)
        self.dtype = {np.dtype(np.int32): "int32", np.dtype(np.int64): "int64"}.get(array.dtype, str(array.dtype))

    def dim(self) -> int:
        return self._array.ndim

    def is_contiguous(self) -> bool:
        return bool(self._array.flags.c_contiguous)

    def detach(self) -> "_FakeTensor":
        return self

    def numpy(self) -> np.ndarray:
        return self._array


@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in ``torch`` module, so the adapter's checks run where torch is not installed."""
    module = type(sys)("torch")
    module.Tensor = _FakeTensor
    module.int32 = "int32"
    monkeypatch.setitem(sys.modules, "torch", module)
    return module


def test_tensor_adapter_with_stand_in_torch(session, reference, fake_torch):
    words = session.mask_word_count
    backing = np.zeros(words, dtype=np.int32)
    session.write_mask(_FakeTensor(backing))
    assert backing.astype("<i4").tobytes() == reference
    with pytest.raises(maskforge.MaskBufferError, match="cuda"):
        session.write_mask(_FakeTensor(np.zeros(words, dtype=np.int32), device="cuda"))
    with pytest.raises(maskforge.MaskBufferTypeError, match="int32"):
        session.write_mask(_FakeTensor(np.zeros(words, dtype=np.int64)))
    with pytest.raises(maskforge.MaskBufferError, match="1-D"):
        session.write_mask(_FakeTensor(np.zeros((2, words), dtype=np.int32)))
    with pytest.raises(maskforge.MaskBufferError, match="contiguous"):
        session.write_mask(_FakeTensor(np.zeros(2 * words, dtype=np.int32)[::2]))
    with pytest.raises(maskforge.MaskBufferError, match="too small"):
        session.write_mask(_FakeTensor(np.zeros(words - 1, dtype=np.int32)))


def test_torch_is_never_imported():
    code = "import sys, maskforge, maskforge.low_level, maskforge.__main__; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
