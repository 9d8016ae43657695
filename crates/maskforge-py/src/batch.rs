//! `maskforge.fill_masks`: many sessions' masks written into one batch buffer with the GIL
//! released, split across threads by the core's policy (`low_level::fill_rows`), into the rows
//! the caller names.

use std::collections::HashSet;
use std::sync::PoisonError;

use maskforge_core::low_level::fill_rows;
use pyo3::prelude::*;

use crate::args::{self, type_name};
use crate::buffer::{write_row, MaskBuffer};
use crate::errors::{detached, raise, type_error};
use crate::session::PySession;

/// Writes `sessions[i]`'s mask into row `rows[i]` of `buffer` (row `i` when `rows` is `None`);
/// a `None` entry's row is filled with every bit set (everything allowed, as serving engines
/// mark finished requests).
///
/// `buffer` is 2-D `[batch, words]` (enough rows of at least `mask_word_count` words; other rows
/// and words are left alone) or 1-D holding the rows back to back. Every session must have the
/// same mask width, and at least one entry must be a session (it gives the width). Nothing is
/// written when an argument is invalid.
#[pyfunction]
#[pyo3(signature = (sessions, buffer, rows = None))]
pub(crate) fn fill_masks(
    py: Python<'_>,
    sessions: &Bound<'_, PyAny>,
    buffer: &Bound<'_, PyAny>,
    rows: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let iter = sessions
        .try_iter()
        .map_err(|_| type_error(py, format!("sessions must be a sequence of Session, got {}", type_name(sessions))))?;
    let mut batch: Vec<Option<Bound<'_, PySession>>> = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        if item.is_none() {
            batch.push(None);
            continue;
        }
        let session = item.cast_into::<PySession>().map_err(|e| {
            let found = type_name(e.into_inner().as_any());
            type_error(py, format!("sessions[{i}] must be a Session or None, got {found}"))
        })?;
        batch.push(Some(session));
    }
    if batch.is_empty() {
        return Ok(());
    }
    let Some(first) = batch.iter().flatten().next() else {
        return Err(raise(py, "InvalidArgumentError", "a batch needs at least one session to give the mask width"));
    };
    let row_bytes = first.get().mask_bytes();
    let mismatch =
        batch.iter().enumerate().find(|(_, s)| s.as_ref().is_some_and(|s| s.get().mask_bytes() != row_bytes));
    if let Some((i, _)) = mismatch {
        let message = format!("sessions[{i}] has a different mask width than the others: bind them to one vocabulary");
        return Err(raise(py, "InvalidArgumentError", message));
    }
    let targets = row_indices(py, rows, batch.len())?;
    let row_count = targets.iter().max().map_or(0, |&m| m + 1);
    let mut target = MaskBuffer::acquire_rows(buffer, row_count, row_bytes)?;
    let order = target.order();
    let sessions: Vec<Option<&PySession>> = batch.iter().map(|s| s.as_ref().map(Bound::get)).collect();
    let mut all_rows: Vec<Option<&mut [u8]>> = target.rows(row_count, row_bytes).into_iter().map(Some).collect();
    let mut chosen: Vec<&mut [u8]> = targets.iter().map(|&r| all_rows[r].take().expect("distinct rows")).collect();
    detached(py, move || {
        fill_rows(&sessions, &mut chosen, 0, |session, row| match session {
            Some(session) => {
                let guard = session.inner().lock().unwrap_or_else(PoisonError::into_inner);
                write_row(&guard, row, order)
            }
            None => {
                row.fill(0xFF);
                Ok(())
            }
        })
    })
}

/// The buffer row of each batch entry: `rows` checked (as many as entries, non-negative,
/// distinct), or `0..len`.
fn row_indices(py: Python<'_>, rows: Option<&Bound<'_, PyAny>>, len: usize) -> PyResult<Vec<usize>> {
    let Some(rows) = rows.filter(|r| !r.is_none()) else { return Ok((0..len).collect()) };
    let iter = rows
        .try_iter()
        .map_err(|_| type_error(py, format!("rows must be a sequence of row indices, got {}", type_name(rows))))?;
    let indices: Vec<usize> = iter.map(|r| args::size(&r?, "a row index")).collect::<PyResult<_>>()?;
    if indices.len() != len {
        let message = format!("rows names {} rows for {len} sessions", indices.len());
        return Err(raise(py, "InvalidArgumentError", message));
    }
    let mut seen = HashSet::new();
    if let Some(repeated) = indices.iter().find(|&&r| !seen.insert(r)) {
        return Err(raise(py, "InvalidArgumentError", format!("row {repeated} is named twice in rows")));
    }
    Ok(indices)
}
