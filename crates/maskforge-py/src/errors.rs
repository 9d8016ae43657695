//! Error conversion: every core error and every caught panic becomes an instance of a class
//! from `maskforge.errors`, so Python code can rely on one exception hierarchy.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use maskforge_core::{DiagnosticCode, Error, LoadError, RejectReason};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A failure of a native call, converted to a Python exception once the GIL is held again.
#[derive(Debug)]
pub(crate) enum Failure {
    Core(Error),
    Panic(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Core(error)
    }
}

impl Failure {
    pub(crate) fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Core(error) => core_error(py, error),
            Failure::Panic(message) => {
                raise(py, "InternalError", format!("internal error in maskforge (please report it): {message}"))
            }
        }
    }
}

/// Runs `f`, turning a panic into a [`Failure`] instead of unwinding into the interpreter.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(Failure::Core),
        Err(payload) => Err(Failure::Panic(panic_message(payload.as_ref()))),
    }
}

/// Runs `f` with the GIL released and panics caught.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    py.detach(|| guarded(f)).map_err(|failure| failure.into_pyerr(py))
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE.get_or_try_init(py, || py.import("maskforge.errors").map(Bound::unbind)).map(|m| m.bind(py))
}

/// `maskforge.errors.<class_name>(message, **kwargs)` as a `PyErr`.
pub(crate) fn raise_with(
    py: Python<'_>,
    class_name: &str,
    message: impl Into<String>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyErr {
    let message = message.into();
    let created = errors_module(py)
        .and_then(|module| module.getattr(class_name))
        .and_then(|class| class.call((message,), kwargs));
    match created {
        Ok(instance) => PyErr::from_value(instance),
        // Only reachable when the package itself is broken; report that error instead.
        Err(error) => error,
    }
}

pub(crate) fn raise(py: Python<'_>, class_name: &str, message: impl Into<String>) -> PyErr {
    raise_with(py, class_name, message, None)
}

pub(crate) fn type_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "ArgumentTypeError", message)
}

pub(crate) fn value_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "InvalidArgumentError", message)
}

/// The stable name of a rejection reason (`TokenRejectedError.reason`).
pub(crate) fn reason_name(reason: RejectReason) -> &'static str {
    match reason {
        RejectReason::OutOfRange => "out_of_range",
        RejectReason::NoBytes => "no_bytes",
        RejectReason::LeavesLanguage => "leaves_language",
        RejectReason::EosNotAccepting => "eos_not_accepting",
        RejectReason::SessionFinished => "session_finished",
        _ => "rejected",
    }
}

pub(crate) fn token_rejected(py: Python<'_>, token_id: Bound<'_, PyAny>, reason: &str, message: String) -> PyErr {
    token_rejected_at(py, token_id, reason, message, None)
}

/// A `TokenRejectedError`, with the token's `index` in a draft when it comes from one.
pub(crate) fn token_rejected_at(
    py: Python<'_>,
    token_id: Bound<'_, PyAny>,
    reason: &str,
    message: String,
    index: Option<usize>,
) -> PyErr {
    let kwargs = PyDict::new(py);
    let filled = kwargs
        .set_item("token_id", token_id)
        .and_then(|_| kwargs.set_item("reason", reason))
        .and_then(|_| kwargs.set_item("index", index));
    match filled {
        Ok(()) => raise_with(py, "TokenRejectedError", message, Some(&kwargs)),
        Err(error) => error,
    }
}

/// Maps every core error variant to its Python class.
pub(crate) fn core_error(py: Python<'_>, error: Error) -> PyErr {
    match error {
        Error::Schema(diagnostic) => {
            let class_name = match diagnostic.code {
                DiagnosticCode::UnresolvedReference => "ReferenceResolutionError",
                DiagnosticCode::ResourceLimit => "ResourceLimitError",
                _ => "SchemaError",
            };
            let kwargs = PyDict::new(py);
            let filled = kwargs
                .set_item("code", diagnostic.code.as_str())
                .and_then(|_| kwargs.set_item("keyword", diagnostic.keyword.as_deref()))
                .and_then(|_| kwargs.set_item("pointer", diagnostic.pointer.as_str()));
            match filled {
                Ok(()) => raise_with(py, class_name, diagnostic.message, Some(&kwargs)),
                Err(error) => error,
            }
        }
        Error::TokenRejected { token_id, reason } => {
            let message = Error::TokenRejected { token_id, reason }.to_string();
            let Ok(token) = token_id.into_pyobject(py);
            token_rejected(py, token.into_any(), reason_name(reason), message)
        }
        Error::DraftRejected { index, token_id, reason } => {
            let message = Error::DraftRejected { index, token_id, reason }.to_string();
            let Ok(token) = token_id.into_pyobject(py);
            token_rejected_at(py, token.into_any(), reason_name(reason), message, Some(index))
        }
        Error::RollbackTooFar { requested, available } => {
            let message = Error::RollbackTooFar { requested, available }.to_string();
            let kwargs = PyDict::new(py);
            let filled = kwargs.set_item("requested", requested).and_then(|_| kwargs.set_item("available", available));
            match filled {
                Ok(()) => raise_with(py, "RollbackError", message, Some(&kwargs)),
                Err(error) => error,
            }
        }
        Error::BatchRejected { index, token_id, reason } => {
            let message = Error::BatchRejected { index, token_id, reason }.to_string();
            let Ok(token) = token_id.into_pyobject(py);
            token_rejected_at(py, token.into_any(), reason_name(reason), message, Some(index))
        }
        Error::BatchRollbackTooFar { index, requested, available } => {
            let message = Error::BatchRollbackTooFar { index, requested, available }.to_string();
            let kwargs = PyDict::new(py);
            let filled = kwargs.set_item("requested", requested).and_then(|_| kwargs.set_item("available", available));
            let error = match filled {
                Ok(()) => raise_with(py, "RollbackError", message, Some(&kwargs)),
                Err(error) => return error,
            };
            // The session's place in the batch, as `TokenRejectedError.index` names a token's.
            match error.value(py).setattr("index", index) {
                Ok(()) => error,
                Err(failed) => failed,
            }
        }
        error @ Error::BatchLength { .. } => raise(py, "InvalidArgumentError", error.to_string()),
        Error::Vocabulary(message) => raise(py, "VocabularyError", message),
        error @ Error::MaskBuffer { .. } => raise(py, "MaskBufferError", error.to_string()),
        Error::ProgramLoad(why) => {
            let reason = match &why {
                LoadError::NotAProgram => "not_a_program",
                LoadError::Version { .. } => "version",
                _ => "damaged",
            };
            let kwargs = PyDict::new(py);
            match kwargs.set_item("reason", reason) {
                Ok(()) => raise_with(py, "ProgramLoadError", Error::ProgramLoad(why).to_string(), Some(&kwargs)),
                Err(error) => error,
            }
        }
        other => raise(py, "MaskForgeError", other.to_string()),
    }
}
