//! Mask buffers: any writable, C-contiguous buffer of 1-byte or 4-byte integers (`bytearray`,
//! NumPy `uint8`/`int32`/`uint32` arrays). One session writes into a 1-D buffer; a batch
//! (`fill_masks`) writes row `i` of a 2-D `[batch, words]` buffer, or the `i`-th run of
//! `mask_word_count` words of a 1-D one. Objects without the buffer protocol (torch tensors)
//! are handed to `maskforge._buffers.writable_view`, which returns a view that has one or
//! raises the right error.

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
pub(crate) enum ByteOrder {
    Little,
    Big,
}

const NATIVE: ByteOrder = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };

/// An exported buffer, released on drop. Holding the export keeps the memory in place (a
/// `bytearray` cannot be resized while exported), so it may be written with the GIL released.
pub(crate) struct MaskBuffer {
    view: Box<ffi::Py_buffer>,
    order: ByteOrder,
    /// Byte distance between the starts of consecutive rows (batch buffers).
    row_stride: usize,
}

/// The shape a caller asks of a buffer: `rows` masks of `row_bytes` bytes each.
#[derive(Debug, Clone, Copy)]
struct Layout {
    rows: usize,
    row_bytes: usize,
    /// Whether a 2-D `[rows, words]` buffer is accepted (batches only).
    allow_2d: bool,
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
        Self::acquire_layout(obj, Layout { rows: 1, row_bytes: needed_bytes, allow_2d: false })
    }

    /// Exports `obj` as `rows` masks of `row_bytes` bytes: a 2-D buffer with at least `rows`
    /// rows of at least `row_bytes` bytes, or a 1-D one of at least `rows * row_bytes` bytes.
    pub(crate) fn acquire_rows(obj: &Bound<'_, PyAny>, rows: usize, row_bytes: usize) -> PyResult<MaskBuffer> {
        Self::acquire_layout(obj, Layout { rows, row_bytes, allow_2d: true })
    }

    fn acquire_layout(obj: &Bound<'_, PyAny>, layout: Layout) -> PyResult<MaskBuffer> {
        let py = obj.py();
        let has_buffer = unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) } != 0;
        if !has_buffer {
            let view = buffers_module(py)?.call_method1("writable_view", (obj,))?;
            return Self::export(&view, layout);
        }
        Self::export(obj, layout)
    }

    fn export(obj: &Bound<'_, PyAny>, layout: Layout) -> PyResult<MaskBuffer> {
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
        let mut buffer = MaskBuffer { view, order: NATIVE, row_stride: layout.row_bytes };
        buffer.check(obj, layout)?;
        Ok(buffer)
    }

    fn check(&mut self, obj: &Bound<'_, PyAny>, layout: Layout) -> PyResult<()> {
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
        let dims: &[isize] = match view.ndim {
            // SAFETY: PyBUF_RECORDS_RO asks for shape and strides, so both hold `ndim` entries.
            1 | 2 => unsafe { std::slice::from_raw_parts(view.shape, view.ndim as usize) },
            _ => &[],
        };
        let strides: &[isize] =
            if dims.is_empty() { &[] } else { unsafe { std::slice::from_raw_parts(view.strides, dims.len()) } };
        let wanted = if layout.allow_2d { "1-D or 2-D" } else { "1-D" };
        if dims.is_empty() || (dims.len() == 2 && !layout.allow_2d) {
            return Err(raise(
                py,
                "MaskBufferError",
                format!("the mask buffer must be {wanted}, got {} dimensions", view.ndim),
            ));
        }
        let item = item_size as isize;
        let row_elements = *dims.last().unwrap_or(&0) as usize;
        let contiguous = view.suboffsets.is_null()
            && (row_elements <= 1 || strides[dims.len() - 1] == item)
            && (dims.len() == 1 || dims[0] <= 1 || strides[0] == dims[1] * item);
        if !contiguous {
            return Err(raise(py, "MaskBufferError", "the mask buffer must be C-contiguous"));
        }
        let needed = layout.rows * layout.row_bytes / item_size;
        if dims.len() == 2 {
            let (rows, row_bytes) = (dims[0] as usize, row_elements * item_size);
            if rows < layout.rows || row_bytes < layout.row_bytes {
                return Err(raise(
                    py,
                    "MaskBufferError",
                    format!(
                        "mask buffer too small: {} rows of {} {element} needed, {rows} rows of {row_elements} given",
                        layout.rows,
                        layout.row_bytes / item_size
                    ),
                ));
            }
            self.row_stride = row_bytes;
        } else if row_elements * item_size < layout.rows * layout.row_bytes {
            return Err(raise(
                py,
                "MaskBufferError",
                format!("mask buffer too small: {needed} {element} needed, {row_elements} given"),
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
        write_row(session, bytes, self.order)
    }

    /// The first `rows` rows of `row_bytes` bytes each, as disjoint slices.
    pub(crate) fn rows(&mut self, rows: usize, row_bytes: usize) -> Vec<&mut [u8]> {
        let stride = self.row_stride;
        debug_assert!(row_bytes <= stride || rows <= 1);
        // SAFETY: `check` verified a writable, contiguous buffer holding `rows` rows of at least
        // `row_bytes` bytes, `row_stride` apart; the slices do not overlap.
        let base = self.view.buf.cast::<u8>();
        (0..rows).map(|row| unsafe { std::slice::from_raw_parts_mut(base.add(row * stride), row_bytes) }).collect()
    }

    /// The byte order the buffer's words are written in.
    pub(crate) fn order(&self) -> ByteOrder {
        self.order
    }
}

/// Writes one session's mask into `bytes` in the given byte order.
pub(crate) fn write_row(session: &Session, bytes: &mut [u8], order: ByteOrder) -> Result<(), Error> {
    match order {
        ByteOrder::Little => session.write_mask_le_bytes(bytes),
        ByteOrder::Big => {
            let mut words = vec![0u32; bytes.len() / 4];
            session.write_mask(&mut words)?;
            for (chunk, word) in bytes.chunks_exact_mut(4).zip(&words) {
                chunk.copy_from_slice(&word.to_be_bytes());
            }
            Ok(())
        }
    }
}

fn buffers_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    BUFFERS_MODULE.get_or_try_init(py, || py.import("maskforge._buffers").map(Bound::unbind)).map(|m| m.bind(py))
}
