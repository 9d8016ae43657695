//! `maskforge.Session`: the decoding position of one sequence.

use std::sync::{Mutex, PoisonError, TryLockError};

use maskforge_core::{Error, Session};
use pyo3::prelude::*;

use crate::args;
use crate::buffer::MaskBuffer;
use crate::errors::{detached, guarded, reason_name, token_rejected, token_rejected_at, Failure};

/// The position of one sequence over a bound schema: it advances, rolls back and forks.
///
/// The core session sits behind a mutex so that `write_mask` can run with the GIL released; the
/// mutex is only ever waited on with the GIL released, so a thread holding it never waits for the
/// GIL (no deadlock), and concurrent use of one session from several threads stays memory-safe:
/// calls on one session are serialised, so a mask written while another thread rolls the
/// session back is the mask of the position before the rollback or after it, never a mixture.
#[pyclass(frozen, name = "Session", module = "maskforge._native")]
pub(crate) struct PySession {
    inner: Mutex<Session>,
    mask_byte_count: usize,
}

impl PySession {
    pub(crate) fn new(session: Session, mask_byte_count: usize) -> Self {
        PySession { inner: Mutex::new(session), mask_byte_count }
    }

    /// The core session; lock it only with the GIL released (see the type's comment).
    pub(crate) fn inner(&self) -> &Mutex<Session> {
        &self.inner
    }

    pub(crate) fn mask_bytes(&self) -> usize {
        self.mask_byte_count
    }

    /// Runs `f` on the session, panics caught. Short operations take the lock with the GIL held
    /// when it is free; otherwise they wait for it with the GIL released.
    fn with_session<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Session) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        let result = match self.inner.try_lock() {
            Ok(mut guard) => guarded(|| f(&mut guard)),
            Err(TryLockError::Poisoned(poisoned)) => guarded(|| f(&mut poisoned.into_inner())),
            Err(TryLockError::WouldBlock) => {
                py.detach(|| guarded(|| f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))))
            }
        };
        result.map_err(|failure: Failure| failure.into_pyerr(py))
    }
}

#[pymethods]
impl PySession {
    /// Writes the allowed-token mask into `buffer` (exactly `mask_word_count` u32 words).
    fn write_mask(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<()> {
        let needed = self.mask_byte_count;
        let mut target = MaskBuffer::acquire(buffer, needed)?;
        let inner = &self.inner;
        let target_ref = &mut target;
        detached(py, move || {
            let session = inner.lock().unwrap_or_else(PoisonError::into_inner);
            target_ref.write(&session, needed)
        })
    }

    /// Commits one token; a forbidden token raises `TokenRejectedError` and changes nothing.
    fn advance(&self, py: Python<'_>, token_id: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some(id) = args::token_id(token_id)? else {
            let message = format!("token {token_id} rejected: {}", maskforge_core::RejectReason::OutOfRange);
            return Err(token_rejected(
                py,
                token_id.clone(),
                reason_name(maskforge_core::RejectReason::OutOfRange),
                message,
            ));
        };
        self.with_session(py, |session| session.advance(id))
    }

    /// Commits every token of `tokens` or none: a refused token raises `TokenRejectedError`
    /// with its `index` in the draft, and the session is unchanged.
    fn advance_many(&self, py: Python<'_>, tokens: &Bound<'_, PyAny>) -> PyResult<()> {
        let (ids, given) = token_list(tokens)?;
        let result = self.with_session(py, |session| session.advance_many(&ids));
        result.map_err(|error| match error_index(py, &error) {
            // An id no vocabulary has (negative, too large) is named as it was given.
            Some(index) if ids[index] == NO_TOKEN => {
                let message = format!("draft token {index} rejected: {}", maskforge_core::RejectReason::OutOfRange);
                let reason = reason_name(maskforge_core::RejectReason::OutOfRange);
                token_rejected_at(py, given[index].clone(), reason, message, Some(index))
            }
            _ => error,
        })
    }

    /// How many leading tokens of `tokens` the session would commit in a row (EOS counts where
    /// it is allowed), without changing it.
    fn validate_tokens(&self, py: Python<'_>, tokens: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (ids, _) = token_list(tokens)?;
        self.with_session(py, |session| Ok(session.validate_tokens(&ids)))
    }

    /// Undoes the last `n` committed tokens (EOS included); more than `rollback_available`
    /// raises `RollbackError` and changes nothing.
    fn rollback(&self, py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = args::size(n, "the number of tokens to roll back")?;
        self.with_session(py, |session| session.rollback(n))
    }

    /// How many committed tokens `rollback` can undo now.
    #[getter]
    fn rollback_available(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_session(py, |session| Ok(session.rollback_available()))
    }

    /// An independent session at the same position, with the same history.
    fn fork(&self, py: Python<'_>) -> PyResult<PySession> {
        let session = self.with_session(py, |session| Ok(session.fork()))?;
        Ok(PySession::new(session, self.mask_byte_count))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<PySession> {
        self.fork(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PySession> {
        self.fork(py)
    }

    /// The longest text every accepted continuation starts with (structure, literals and keys
    /// the schema forces next; an escape spelling the same character is not a choice); empty
    /// when the session accepts or is finished.
    fn forced_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let forced = self.with_session(py, |session| Ok(session.forced_bytes()))?;
        Ok(pyo3::types::PyBytes::new(py, &forced))
    }

    /// Back to the start of the output, with no history.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        self.with_session(py, |session| {
            session.reset();
            Ok(())
        })
    }

    /// Whether `token_id` may be committed now; `False` for ids out of range.
    fn is_allowed(&self, py: Python<'_>, token_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        match args::token_id(token_id)? {
            Some(id) => self.with_session(py, |session| Ok(session.is_allowed(id))),
            None => Ok(false),
        }
    }

    /// True when the text so far is a complete accepted instance (EOS is allowed).
    fn is_accepting(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_session(py, |session| Ok(session.is_accepting()))
    }

    /// True when the instance is done: EOS was committed, or the text is accepted and nothing
    /// but whitespace can follow (after the root object's `}`, a closed string, a literal; not
    /// right after a root number). Generation ends a row here as if EOS were chosen.
    fn is_done(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_session(py, |session| Ok(session.is_done()))
    }

    /// True once EOS was committed.
    fn is_finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_session(py, |session| Ok(session.is_finished()))
    }

    /// `is_finished`, under the name serving engines use.
    fn is_terminated(&self, py: Python<'_>) -> PyResult<bool> {
        self.is_finished(py)
    }

    /// `4 * mask_word_count`: the bytes `write_mask` writes.
    #[getter]
    fn mask_byte_count(&self) -> usize {
        self.mask_byte_count
    }

    /// `ceil(mask_vocab_size / 32)`: the u32 words `write_mask` writes.
    #[getter]
    fn mask_word_count(&self) -> usize {
        self.mask_byte_count / 4
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (accepting, finished) = self.with_session(py, |s| Ok((s.is_accepting(), s.is_finished())))?;
        Ok(format!("Session(accepting={}, finished={})", py_bool(accepting), py_bool(finished)))
    }
}

/// Stands for an id no vocabulary has (negative or too large): refused as out of range.
pub(crate) const NO_TOKEN: u32 = u32::MAX;

/// The token ids of a sequence of integers, and the objects given.
pub(crate) fn token_list<'py>(tokens: &Bound<'py, PyAny>) -> PyResult<(Vec<u32>, Vec<Bound<'py, PyAny>>)> {
    let given: Vec<Bound<'py, PyAny>> = tokens.try_iter()?.collect::<PyResult<_>>()?;
    let ids = given.iter().map(|t| Ok(args::token_id(t)?.unwrap_or(NO_TOKEN))).collect::<PyResult<_>>()?;
    Ok((ids, given))
}

/// The draft index a `TokenRejectedError` carries, if any.
fn error_index(py: Python<'_>, error: &PyErr) -> Option<usize> {
    error.value(py).getattr("index").ok()?.extract::<usize>().ok()
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
