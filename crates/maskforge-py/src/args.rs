//! Argument parsing with typed errors: Python's own conversions would raise bare
//! `TypeError`/`OverflowError`, and would accept `True` as token 1.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use crate::errors::{raise, type_error, value_error};

/// `type(obj).__name__`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_owned())
}

fn is_integer(obj: &Bound<'_, PyAny>) -> bool {
    !obj.is_instance_of::<PyBool>() && (obj.is_instance_of::<PyInt>() || obj.hasattr("__index__").unwrap_or(false))
}

/// An integer argument: `Ok(Some(v))` when it fits an `i64`, `Ok(None)` when it is an integer
/// too large for one, a typed error when it is not an integer at all.
fn integer(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<i64>> {
    let py = obj.py();
    if !is_integer(obj) {
        return Err(type_error(py, format!("{what} must be an int, got {}", type_name(obj))));
    }
    match obj.extract::<i64>() {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyOverflowError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A token id: `Some(id)` when it is a valid u32, `None` when it is an integer that cannot name
/// any token (negative or huge); not an integer is a typed error.
pub(crate) fn token_id(obj: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
    Ok(integer(obj, "token id")?.and_then(|v| u32::try_from(v).ok()))
}

/// A non-negative size (cache budgets, `mask_vocab_size`).
pub(crate) fn size(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    let py = obj.py();
    match integer(obj, what)? {
        Some(v) if v >= 0 => usize::try_from(v).map_err(|_| value_error(py, format!("{what} is too large"))),
        Some(v) => Err(value_error(py, format!("{what} must be non-negative, got {v}"))),
        None => Err(value_error(py, format!("{what} is too large"))),
    }
}

/// `mask_vocab_size=`: None or a size; errors are vocabulary errors since the value is about the vocabulary.
pub(crate) fn optional_mask_vocab_size(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    match obj {
        None => Ok(None),
        Some(obj) if obj.is_none() => Ok(None),
        Some(obj) => {
            let py = obj.py();
            match integer(obj, "mask_vocab_size")? {
                Some(v) if v >= 0 && v <= u32::MAX as i64 => Ok(Some(v as usize)),
                _ => Err(raise(
                    py,
                    "VocabularyError",
                    format!("mask_vocab_size must be between 0 and 2^32 - 1, got {obj}"),
                )),
            }
        }
    }
}

/// `eos_token_id=`: one id or an iterable of ids.
pub(crate) fn eos_token_ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let py = obj.py();
    let one = |item: &Bound<'_, PyAny>| -> PyResult<u32> {
        match integer(item, "eos_token_id")?.map(u32::try_from) {
            Some(Ok(id)) => Ok(id),
            _ => Err(raise(py, "VocabularyError", format!("EOS id {item} is not a valid token id"))),
        }
    };
    if is_integer(obj) {
        return Ok(vec![one(obj)?]);
    }
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBool>() {
        return Err(type_error(py, format!("eos_token_id must be an int or a list of ints, got {}", type_name(obj))));
    }
    let iter = obj.try_iter().map_err(|_| {
        type_error(py, format!("eos_token_id must be an int or a list of ints, got {}", type_name(obj)))
    })?;
    iter.map(|item| one(&item?)).collect()
}

/// An optional string option.
pub(crate) fn optional_str(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    match obj {
        None => Ok(None),
        Some(obj) if obj.is_none() => Ok(None),
        Some(obj) => match obj.cast::<PyString>() {
            Ok(s) => Ok(Some(s.to_str()?.to_owned())),
            Err(_) => Err(type_error(obj.py(), format!("{what} must be a str, got {}", type_name(obj)))),
        },
    }
}
