//! `maskforge.Session`: the decoding position of one sequence.

use std::sync::{Mutex, PoisonError, TryLockError};

use maskforge_core::{Error, Session};
use pyo3::prelude::*;

use crate::args;
use crate::buffer::MaskBuffer;
use crate::errors::{detached, guarded, reason_name, token_rejected, Failure};

/// The position of one sequence over a bound schema. Append-only: one token per step.
///
/// The core session sits behind a mutex so that `write_mask` can run with the GIL released; the
/// mutex is only ever waited on with the GIL released, so a thread holding it never waits for the
/// GIL (no deadlock), and concurrent use of one session from several threads stays memory-safe.
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

    /// True once EOS was committed.
    fn is_finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_session(py, |session| Ok(session.is_finished()))
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

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
