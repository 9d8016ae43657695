//! `maskforge.fill_masks`: many sessions' masks written into one batch buffer with the GIL
//! released, split across threads when the batch is large enough to pay for them.

use std::sync::PoisonError;
use std::thread;

use maskforge_core::Error;
use pyo3::prelude::*;

use crate::args::type_name;
use crate::buffer::{write_row, MaskBuffer};
use crate::errors::{detached, raise, type_error};
use crate::session::PySession;

/// Rows per thread below which a thread costs more than it saves (a structured mask over a
/// large vocabulary takes tens of microseconds, a thread start about as much).
const MIN_ROWS_PER_THREAD: usize = 4;

/// Writes `sessions[i]`'s mask into row `i` of `buffer`.
///
/// `buffer` is 2-D `[batch, words]` (at least `len(sessions)` rows of at least
/// `mask_word_count` words; extra rows and words are left alone) or 1-D holding the rows back to
/// back. Every session must have the same mask width. Nothing is written when an argument is
/// invalid.
#[pyfunction]
pub(crate) fn fill_masks(py: Python<'_>, sessions: &Bound<'_, PyAny>, buffer: &Bound<'_, PyAny>) -> PyResult<()> {
    let iter = sessions
        .try_iter()
        .map_err(|_| type_error(py, format!("sessions must be a sequence of Session, got {}", type_name(sessions))))?;
    let mut batch: Vec<Bound<'_, PySession>> = Vec::new();
    for (row, item) in iter.enumerate() {
        let item = item?;
        let session = item.cast_into::<PySession>().map_err(|e| {
            type_error(py, format!("sessions[{row}] must be a Session, got {}", type_name(e.into_inner().as_any())))
        })?;
        batch.push(session);
    }
    let Some(first) = batch.first() else {
        return Ok(());
    };
    let row_bytes = first.get().mask_bytes();
    if let Some((row, _)) = batch.iter().enumerate().find(|(_, s)| s.get().mask_bytes() != row_bytes) {
        return Err(raise(
            py,
            "InvalidArgumentError",
            format!("sessions[{row}] has a different mask width than sessions[0]: bind them to one vocabulary"),
        ));
    }
    let mut target = MaskBuffer::acquire_rows(buffer, batch.len(), row_bytes)?;
    let order = target.order();
    let sessions: Vec<&PySession> = batch.iter().map(Bound::get).collect();
    let mut rows = target.rows(sessions.len(), row_bytes);
    let threads = thread::available_parallelism().map_or(1, usize::from).min(sessions.len() / MIN_ROWS_PER_THREAD);
    detached(py, move || {
        let write_chunk = |chunk_sessions: &[&PySession], chunk_rows: &mut [&mut [u8]]| -> Result<(), Error> {
            for (session, row) in chunk_sessions.iter().zip(chunk_rows.iter_mut()) {
                let guard = session.inner().lock().unwrap_or_else(PoisonError::into_inner);
                write_row(&guard, row, order)?;
            }
            Ok(())
        };
        if threads <= 1 {
            return write_chunk(&sessions, &mut rows);
        }
        let per_thread = sessions.len().div_ceil(threads);
        thread::scope(|scope| {
            let workers: Vec<_> = sessions
                .chunks(per_thread)
                .zip(rows.chunks_mut(per_thread))
                .map(|(chunk_sessions, chunk_rows)| scope.spawn(move || write_chunk(chunk_sessions, chunk_rows)))
                .collect();
            workers.into_iter().try_for_each(|worker| match worker.join() {
                Ok(result) => result,
                Err(payload) => std::panic::resume_unwind(payload),
            })
        })
    })
}
