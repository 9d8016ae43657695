//! `maskforge.Vocabulary`: token id -> bytes, EOS ids, and the compiled indexes binding needs.

use std::path::PathBuf;
use std::sync::Arc;

use maskforge_core::TokenizerJsonOptions;
use maskforge_core::{CompiledVocabulary, Vocabulary};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyTuple};

use crate::args::{self, type_name};
use crate::errors::{detached, type_error, value_error};

/// A tokenizer vocabulary prepared for binding. Immutable; share one per tokenizer.
#[pyclass(frozen, name = "Vocabulary", module = "maskforge._native")]
pub(crate) struct PyVocabulary {
    pub(crate) inner: Arc<CompiledVocabulary>,
}

fn compile(vocabulary: Vocabulary, mask_vocab_size: Option<usize>) -> maskforge_core::Result<CompiledVocabulary> {
    let vocabulary = match mask_vocab_size {
        Some(size) => vocabulary.with_mask_vocab_size(size)?,
        None => vocabulary,
    };
    CompiledVocabulary::try_from(vocabulary)
}

fn tokenizer_options(
    mask_vocab_size: Option<&Bound<'_, PyAny>>,
    eos_token_id: Option<&Bound<'_, PyAny>>,
) -> PyResult<TokenizerJsonOptions> {
    let mut options = TokenizerJsonOptions::default();
    if let Some(size) = args::optional_mask_vocab_size(mask_vocab_size)? {
        options = options.with_mask_vocab_size(size);
    }
    if let Some(eos) = eos_token_id.filter(|e| !e.is_none()) {
        options = options.with_eos_token_ids(args::eos_token_ids(eos)?);
    }
    Ok(options)
}

#[pymethods]
impl PyVocabulary {
    /// Builds a vocabulary from id-ordered token bytes (`None` for ids without bytes).
    #[staticmethod]
    #[pyo3(signature = (token_bytes, eos_token_id, *, mask_vocab_size = None))]
    fn from_id_ordered_tokens(
        py: Python<'_>,
        token_bytes: &Bound<'_, PyAny>,
        eos_token_id: &Bound<'_, PyAny>,
        mask_vocab_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let iter = token_bytes.try_iter().map_err(|_| {
            type_error(py, format!("token_bytes must be a list of bytes or None, got {}", type_name(token_bytes)))
        })?;
        let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
        for (id, item) in iter.enumerate() {
            let item = item?;
            let bytes = if item.is_none() {
                None
            } else if let Ok(b) = item.cast::<PyBytes>() {
                Some(b.as_bytes().to_vec())
            } else if let Ok(b) = item.cast::<PyByteArray>() {
                Some(b.to_vec())
            } else {
                return Err(type_error(
                    py,
                    format!("token_bytes[{id}] must be bytes or None, got {}", type_name(&item)),
                ));
            };
            tokens.push(bytes);
        }
        let eos = args::eos_token_ids(eos_token_id)?;
        let mask_vocab_size = args::optional_mask_vocab_size(mask_vocab_size)?;
        let inner = detached(py, move || compile(Vocabulary::from_id_ordered_tokens(tokens, eos)?, mask_vocab_size))?;
        Ok(PyVocabulary { inner: Arc::new(inner) })
    }

    /// Reads a local Hugging Face fast-tokenizer file (`tokenizer.json`).
    #[staticmethod]
    #[pyo3(signature = (path, *, mask_vocab_size = None, eos_token_id = None))]
    fn from_tokenizer_json(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        mask_vocab_size: Option<&Bound<'_, PyAny>>,
        eos_token_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let path: PathBuf = path
            .extract()
            .map_err(|_| type_error(py, format!("path must be a str or os.PathLike, got {}", type_name(path))))?;
        let options = tokenizer_options(mask_vocab_size, eos_token_id)?;
        let inner =
            detached(py, move || CompiledVocabulary::try_from(Vocabulary::from_tokenizer_json_file(&path, &options)?))?;
        Ok(PyVocabulary { inner: Arc::new(inner) })
    }

    /// Reads the text of a Hugging Face fast-tokenizer file, e.g. the
    /// `tokenizer.backend_tokenizer.to_str()` of a loaded `transformers` tokenizer.
    #[staticmethod]
    #[pyo3(signature = (text, *, mask_vocab_size = None, eos_token_id = None))]
    fn from_tokenizer_json_str(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        mask_vocab_size: Option<&Bound<'_, PyAny>>,
        eos_token_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let text: String =
            text.extract().map_err(|_| type_error(py, format!("text must be a str, got {}", type_name(text))))?;
        let options = tokenizer_options(mask_vocab_size, eos_token_id)?;
        let inner =
            detached(py, move || CompiledVocabulary::try_from(Vocabulary::from_tokenizer_json(&text, &options)?))?;
        Ok(PyVocabulary { inner: Arc::new(inner) })
    }

    /// Number of ids the tokenizer defines.
    #[getter]
    fn tokenizer_size(&self) -> usize {
        self.inner.vocabulary().tokenizer_size()
    }

    /// Number of ids a mask covers (at least `tokenizer_size`).
    #[getter]
    fn mask_vocab_size(&self) -> usize {
        self.inner.mask_vocab_size()
    }

    /// `ceil(mask_vocab_size / 32)`.
    #[getter]
    fn mask_word_count(&self) -> usize {
        self.inner.mask_word_count()
    }

    /// The EOS ids, sorted.
    #[getter]
    fn eos_token_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.vocabulary().eos_token_ids())
    }

    /// The bytes a token generates; `None` for EOS, special, unused and padding ids.
    fn token_bytes<'py>(&self, py: Python<'py>, token_id: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let size = self.inner.mask_vocab_size();
        match args::token_id(token_id)? {
            Some(id) if (id as usize) < size => {
                Ok(self.inner.vocabulary().token_bytes(id).map(|bytes| PyBytes::new(py, bytes)))
            }
            _ => {
                Err(value_error(py, format!("token id {token_id} is out of range for a mask vocabulary of {size} ids")))
            }
        }
    }

    fn __repr__(&self) -> String {
        let v = self.inner.vocabulary();
        let eos: Vec<String> = v.eos_token_ids().iter().map(|id| id.to_string()).collect();
        let eos = if eos.len() == 1 { format!("({},)", eos[0]) } else { format!("({})", eos.join(", ")) };
        format!(
            "Vocabulary(tokenizer_size={}, mask_vocab_size={}, eos_token_ids={eos})",
            v.tokenizer_size(),
            v.mask_vocab_size()
        )
    }
}
