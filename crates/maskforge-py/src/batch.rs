//! `maskforge.fill_masks`: many sessions' masks written into one batch buffer with the GIL
//! released, split across threads when the batch's work is large enough to pay for them.

use std::sync::{OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use maskforge_core::Error;
use pyo3::prelude::*;

use crate::args::type_name;
use crate::buffer::{write_row, MaskBuffer};
use crate::errors::{detached, raise, type_error};
use crate::session::PySession;

/// Work below which another thread costs more than it saves: starting and joining one takes
/// tens of microseconds, while a mask row costs from under a microsecond (a copied DFA row) to
/// hundreds (a structured mask over a large vocabulary).
const MIN_WORK_PER_THREAD: Duration = Duration::from_micros(200);

/// The cores threads may use, read once (`available_parallelism` reads cgroup files each call).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, usize::from))
}

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
    detached(py, move || {
        let write = |session: &PySession, row: &mut [u8]| -> Result<(), Error> {
            let guard = session.inner().lock().unwrap_or_else(PoisonError::into_inner);
            write_row(&guard, row, order)
        };
        // The first row is written here and timed: it tells whether the rest is worth threads.
        let started = Instant::now();
        write(sessions[0], rows[0])?;
        let estimate = started.elapsed() * (sessions.len() as u32 - 1).max(1);
        let threads = cores().min((estimate.as_nanos() / MIN_WORK_PER_THREAD.as_nanos()) as usize).max(1);
        let (sessions, rows) = (&sessions[1..], &mut rows[1..]);
        if threads <= 1 || sessions.len() < 2 {
            return sessions.iter().zip(rows.iter_mut()).try_for_each(|(s, row)| write(s, row));
        }
        let per_thread = sessions.len().div_ceil(threads);
        thread::scope(|scope| {
            let workers: Vec<_> = sessions
                .chunks(per_thread)
                .zip(rows.chunks_mut(per_thread))
                .map(|(chunk, chunk_rows)| {
                    scope.spawn(move || chunk.iter().zip(chunk_rows.iter_mut()).try_for_each(|(s, row)| write(s, row)))
                })
                .collect();
            workers.into_iter().try_for_each(|worker| match worker.join() {
                Ok(result) => result,
                Err(payload) => std::panic::resume_unwind(payload),
            })
        })
    })
}
