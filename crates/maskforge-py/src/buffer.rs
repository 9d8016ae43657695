//! Mask buffers: any writable, 1-D, C-contiguous buffer of 1-byte or 4-byte integers
//! (`bytearray`, NumPy `uint8`/`int32`/`uint32` arrays). Objects without the buffer protocol
//! (torch tensors) are handed to `maskforge._buffers.writable_view`, which returns a view that
//! has one or raises the right error.

use std::ffi::CStr;
use std::mem::MaybeUninit;

use maskforge_core::{Error, Session};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

use crate::args::type_name;
use crate::errors::raise;

static BUFFERS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteOrder {
    Little,
    Big,
}

const NATIVE: ByteOrder = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };

/// An exported buffer, released on drop. Holding the export keeps the memory in place (a
/// `bytearray` cannot be resized while exported), so it may be written with the GIL released.
pub(crate) struct MaskBuffer {
    view: Box<ffi::Py_buffer>,
    order: ByteOrder,
}

// SAFETY: the view only points at memory kept alive by the export; it is written through a
// `&mut [u8]` while the caller holds the `MaskBuffer`, and released with the GIL held.
unsafe impl Send for MaskBuffer {}

impl Drop for MaskBuffer {
    fn drop(&mut self) {
        Python::attach(|_| unsafe { ffi::PyBuffer_Release(&mut *self.view) });
    }
}

impl MaskBuffer {
    /// Exports `obj` and checks that it can hold `needed_bytes` bytes of mask.
    pub(crate) fn acquire(obj: &Bound<'_, PyAny>, needed_bytes: usize) -> PyResult<MaskBuffer> {
        let py = obj.py();
        let has_buffer = unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) } != 0;
        if !has_buffer {
            let view = buffers_module(py)?.call_method1("writable_view", (obj,))?;
            return Self::export(&view, needed_bytes);
        }
        Self::export(obj, needed_bytes)
    }

    fn export(obj: &Bound<'_, PyAny>, needed_bytes: usize) -> PyResult<MaskBuffer> {
        let py = obj.py();
        let mut raw = Box::new(MaybeUninit::<ffi::Py_buffer>::uninit());
        // Writability is checked below rather than requested, to report it as a mask error.
        let rc = unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), raw.as_mut_ptr(), ffi::PyBUF_RECORDS_RO) };
        if rc != 0 {
            let cause = PyErr::fetch(py);
            return Err(raise(
                py,
                "MaskBufferTypeError",
                format!("cannot use {} as a mask buffer: {}", type_name(obj), cause.value(py)),
            ));
        }
        // SAFETY: initialised by the successful PyObject_GetBuffer; Box<MaybeUninit<T>> and Box<T>
        // share their layout.
        let view: Box<ffi::Py_buffer> = unsafe { Box::from_raw(Box::into_raw(raw).cast()) };
        let mut buffer = MaskBuffer { view, order: NATIVE };
        buffer.check(obj, needed_bytes)?;
        Ok(buffer)
    }

    fn check(&mut self, obj: &Bound<'_, PyAny>, needed_bytes: usize) -> PyResult<()> {
        let py = obj.py();
        let view = &*self.view;
        let format: &[u8] =
            if view.format.is_null() { b"B" } else { unsafe { CStr::from_ptr(view.format) }.to_bytes() };
        let (order, code) = match format {
            [code] => (NATIVE, *code),
            [b'@' | b'=', code] => (NATIVE, *code),
            [b'<', code] => (ByteOrder::Little, *code),
            [b'>' | b'!', code] => (ByteOrder::Big, *code),
            _ => (NATIVE, 0),
        };
        let item_size = view.itemsize as usize;
        let element = match (item_size, code) {
            (1, b'B' | b'b' | b'c') => "bytes",
            (4, b'i' | b'l') => "int32 elements",
            (4, b'I' | b'L') => "uint32 elements",
            _ => {
                return Err(raise(
                    py,
                    "MaskBufferTypeError",
                    format!(
                        "a mask buffer holds bytes or 32-bit integers (bytearray, NumPy int32/uint32, torch int32); \
                         {} has elements of format {:?} and size {item_size}",
                        type_name(obj),
                        String::from_utf8_lossy(format)
                    ),
                ))
            }
        };
        if view.readonly != 0 {
            return Err(raise(py, "MaskBufferError", format!("the mask buffer ({}) is read-only", type_name(obj))));
        }
        if view.ndim != 1 {
            return Err(raise(
                py,
                "MaskBufferError",
                format!("the mask buffer must be 1-D, got {} dimensions", view.ndim),
            ));
        }
        // SAFETY: PyBUF_RECORDS_RO asks for shape and strides, so both hold `ndim` entries.
        let (len, stride) = unsafe { (*view.shape as usize, *view.strides) };
        if !view.suboffsets.is_null() || (len > 1 && stride != item_size as isize) {
            return Err(raise(py, "MaskBufferError", "the mask buffer must be C-contiguous"));
        }
        if len * item_size < needed_bytes {
            return Err(raise(
                py,
                "MaskBufferError",
                format!("mask buffer too small: {} {element} needed, {len} given", needed_bytes / item_size),
            ));
        }
        self.order = order;
        Ok(())
    }

    /// Writes the session's mask: `4 * mask_word_count` bytes holding the u32 words in the
    /// buffer's byte order (little-endian for byte buffers, as the layout specifies).
    pub(crate) fn write(&mut self, session: &Session, needed_bytes: usize) -> Result<(), Error> {
        // SAFETY: `check` verified a writable, contiguous buffer of at least `needed_bytes`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.view.buf.cast::<u8>(), needed_bytes) };
        match self.order {
            ByteOrder::Little => session.write_mask_le_bytes(bytes),
            ByteOrder::Big => {
                let mut words = vec![0u32; needed_bytes / 4];
                session.write_mask(&mut words)?;
                for (chunk, word) in bytes.chunks_exact_mut(4).zip(&words) {
                    chunk.copy_from_slice(&word.to_be_bytes());
                }
                Ok(())
            }
        }
    }
}

fn buffers_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    BUFFERS_MODULE.get_or_try_init(py, || py.import("maskforge._buffers").map(Bound::unbind)).map(|m| m.bind(py))
}
