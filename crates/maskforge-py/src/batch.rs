//! `maskforge.fill_masks`: many sessions' masks written into one batch buffer with the GIL
//! released, split across threads by the core's policy (`low_level::fill_rows`), into the rows
//! the caller names. `maskforge.advance_batch` and `maskforge.rollback_batch`: one step of every
//! session of a batch, all or nothing.

use std::collections::HashSet;
use std::sync::{MutexGuard, PoisonError};

use maskforge_core::low_level::fill_rows;
use maskforge_core::{Error, RejectReason, Session};
use pyo3::prelude::*;

use crate::args::{self, type_name};
use crate::buffer::{write_row, MaskBuffer};
use crate::errors::{detached, raise, reason_name, token_rejected_at, type_error};
use crate::session::{token_list, PySession, NO_TOKEN};

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

/// Commits `tokens[i]` on `sessions[i]` for every `i`, or nothing: a refused token raises
/// `TokenRejectedError` whose `index` names its place in the batch, and no session changes.
/// A session may appear only once; every entry must be a session.
#[pyfunction]
pub(crate) fn advance_batch(py: Python<'_>, sessions: &Bound<'_, PyAny>, tokens: &Bound<'_, PyAny>) -> PyResult<()> {
    let batch = distinct_sessions(py, sessions)?;
    if tokens.try_iter().is_err() {
        return Err(type_error(py, format!("tokens must be a sequence of token ids, got {}", type_name(tokens))));
    }
    let (ids, given) = token_list(tokens)?;
    check_length(py, batch.len(), ids.len(), "tokens")?;
    let sessions: Vec<&PySession> = batch.iter().map(Bound::get).collect();
    let result = detached(py, || {
        let mut guards = lock_all(&sessions);
        let mut targets: Vec<&mut Session> = guards.iter_mut().map(|guard| &mut **guard).collect();
        maskforge_core::advance_batch(&mut targets, &ids)
    });
    result.map_err(|error| {
        let index = error.value(py).getattr("index").ok().and_then(|i| i.extract::<usize>().ok());
        match index {
            // An id no vocabulary has (negative, too large) is named as it was given.
            Some(index) if ids[index] == NO_TOKEN => {
                let reason = RejectReason::OutOfRange;
                let message = format!("batch session {index}: token {} rejected: {reason}", given[index]);
                token_rejected_at(py, given[index].clone(), reason_name(reason), message, Some(index))
            }
            _ => error,
        }
    })
}

/// Undoes the last `counts[i]` committed tokens of `sessions[i]` for every `i`, or nothing: a
/// count beyond what its session keeps raises `RollbackError` with the batch `index`, and no
/// session changes. A session may appear only once; counts are non-negative ints.
#[pyfunction]
pub(crate) fn rollback_batch(py: Python<'_>, sessions: &Bound<'_, PyAny>, counts: &Bound<'_, PyAny>) -> PyResult<()> {
    let batch = distinct_sessions(py, sessions)?;
    let iter = counts
        .try_iter()
        .map_err(|_| type_error(py, format!("counts must be a sequence of ints, got {}", type_name(counts))))?;
    let counts: Vec<usize> =
        iter.map(|n| args::size(&n?, "the number of tokens to roll back")).collect::<PyResult<_>>()?;
    check_length(py, batch.len(), counts.len(), "counts")?;
    let sessions: Vec<&PySession> = batch.iter().map(Bound::get).collect();
    detached(py, || {
        let mut guards = lock_all(&sessions);
        let mut targets: Vec<&mut Session> = guards.iter_mut().map(|guard| &mut **guard).collect();
        maskforge_core::rollback_batch(&mut targets, &counts)
    })
}

/// The sessions of a batch, each once: a repeated session would be asked two things at once.
fn distinct_sessions<'py>(py: Python<'py>, sessions: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PySession>>> {
    let iter = sessions
        .try_iter()
        .map_err(|_| type_error(py, format!("sessions must be a sequence of Session, got {}", type_name(sessions))))?;
    let mut batch: Vec<Bound<'py, PySession>> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (i, item) in iter.enumerate() {
        let session = item?.cast_into::<PySession>().map_err(|e| {
            let found = type_name(e.into_inner().as_any());
            type_error(py, format!("sessions[{i}] must be a Session, got {found}"))
        })?;
        if let Some(first) = seen.insert(session.as_ptr() as usize, i) {
            let message = format!("sessions[{i}] is sessions[{first}]: a session may appear once in a batch");
            return Err(raise(py, "InvalidArgumentError", message));
        }
        batch.push(session);
    }
    Ok(batch)
}

fn check_length(py: Python<'_>, sessions: usize, given: usize, what: &'static str) -> PyResult<()> {
    if sessions == given {
        return Ok(());
    }
    Err(raise(py, "InvalidArgumentError", Error::BatchLength { sessions, given, what }.to_string()))
}

/// Locks every session, in address order so that two batches sharing sessions never wait on
/// each other; the guards come back in batch order. Call with the GIL released.
fn lock_all<'a>(sessions: &[&'a PySession]) -> Vec<MutexGuard<'a, Session>> {
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    order.sort_by_key(|&i| std::ptr::from_ref(sessions[i]) as usize);
    let mut guards: Vec<Option<MutexGuard<'a, Session>>> = (0..sessions.len()).map(|_| None).collect();
    for i in order {
        guards[i] = Some(sessions[i].inner().lock().unwrap_or_else(PoisonError::into_inner));
    }
    guards.into_iter().map(|guard| guard.expect("every session locked")).collect()
}
