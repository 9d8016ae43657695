//! `maskforge.Compiler`, `SchemaProgram` and `BoundSchema`.

use std::sync::Arc;

use maskforge_core::{
    BindPolicy, BoundSchema, CacheStats, Compiler, CompilerOptions, Draft, PropertyOrder, Registry, SchemaProgram,
    SchemaRegistry,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyString};

use crate::args::{self, type_name};
use crate::errors::{detached, raise_with, type_error, value_error};
use crate::session::PySession;
use crate::vocabulary::PyVocabulary;

static SCHEMAS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
static TEMPLATES_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A program's bytes, from `bytes` or `bytearray`.
fn program_bytes(data: &Bound<'_, PyAny>) -> PyResult<pyo3::pybacked::PyBackedBytes> {
    data.extract().map_err(|_| {
        type_error(data.py(), format!("a program's bytes must be bytes or bytearray, got {}", type_name(data)))
    })
}

pub(crate) fn parse_bind_policy(obj: &Bound<'_, PyAny>) -> PyResult<BindPolicy> {
    let py = obj.py();
    let name = args::optional_str(Some(obj), "bind_policy")?
        .ok_or_else(|| type_error(py, "bind_policy must be a str, got None"))?;
    match name.as_str() {
        "eager" => Ok(BindPolicy::Eager),
        "lazy" => Ok(BindPolicy::Lazy),
        "adaptive" => Ok(BindPolicy::Adaptive),
        other => {
            Err(value_error(py, format!("bind_policy must be \"eager\", \"lazy\" or \"adaptive\", got {other:?}")))
        }
    }
}

fn bind_policy_name(policy: BindPolicy) -> &'static str {
    match policy {
        BindPolicy::Eager => "eager",
        BindPolicy::Lazy => "lazy",
        BindPolicy::Adaptive => "adaptive",
    }
}

fn parse_draft(py: Python<'_>, name: &str) -> PyResult<Draft> {
    Draft::from_name(name).or_else(|| Draft::from_schema_uri(name)).ok_or_else(|| {
        value_error(
            py,
            format!(
                "unknown default_draft {name:?}: use \"draft4\", \"draft6\", \"draft7\", \"draft2019-09\", \
                 \"draft2020-12\" or a $schema URI"
            ),
        )
    })
}

fn cache_stats_dict<'py>(py: Python<'py>, stats: CacheStats) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("executable_hits", stats.executable_hits)?;
    dict.set_item("executable_misses", stats.executable_misses)?;
    dict.set_item("executable_entries", stats.executable_entries)?;
    dict.set_item("executable_bytes", stats.executable_bytes)?;
    dict.set_item("trie_hits", stats.trie_hits)?;
    dict.set_item("trie_misses", stats.trie_misses)?;
    dict.set_item("trie_entries", stats.trie_entries)?;
    dict.set_item("trie_bytes", stats.trie_bytes)?;
    Ok(dict)
}

/// Text with lone surrogates cannot be UTF-8, so it cannot be JSON either.
/// A JSON document given as its text (a str), or as Python data that `module.writer` writes
/// out as JSON text.
fn json_text(obj: &Bound<'_, PyAny>, module: &PyOnceLock<Py<PyModule>>, name: &str, writer: &str) -> PyResult<String> {
    let py = obj.py();
    match obj.cast::<PyString>() {
        Ok(s) => s.to_str().map(str::to_owned).map_err(|_| invalid_text(py)),
        Err(_) => module
            .get_or_try_init(py, || py.import(name).map(Bound::unbind))?
            .bind(py)
            .call_method1(writer, (obj,))?
            .extract(),
    }
}

fn invalid_text(py: Python<'_>) -> PyErr {
    let kwargs = PyDict::new(py);
    match kwargs.set_item("code", "MF-E001") {
        Ok(()) => {
            raise_with(py, "SchemaError", "schema is not valid JSON: the text has lone surrogates", Some(&kwargs))
        }
        Err(error) => error,
    }
}

/// A Python mapping (URI -> schema) or callable (URI -> schema or None) serving `$ref`s that
/// leave the schema document. Schemas may be JSON text, dicts, bools or Pydantic models.
struct PyRegistry {
    source: Py<PyAny>,
}

impl SchemaRegistry for PyRegistry {
    fn fetch(&self, uri: &str) -> Result<Option<String>, String> {
        Python::attach(|py| {
            let source = self.source.bind(py);
            let found = if source.is_callable() {
                source.call1((uri,))
            } else {
                match source.get_item(uri) {
                    Ok(found) => Ok(found),
                    // Mappings may key documents with an empty fragment (`...json#`).
                    Err(_) => match source.get_item(format!("{uri}#")) {
                        Ok(found) => Ok(found),
                        Err(_) => return Ok(None),
                    },
                }
            }
            .map_err(|e| e.to_string())?;
            if found.is_none() {
                return Ok(None);
            }
            if let Ok(text) = found.cast::<PyString>() {
                return text.to_str().map(|t| Some(t.to_owned())).map_err(|e| e.to_string());
            }
            let text: String = SCHEMAS_MODULE
                .get_or_try_init(py, || py.import("maskforge._schemas").map(Bound::unbind))
                .and_then(|module| module.bind(py).call_method1("schema_to_json", (found,)))
                .and_then(|text| text.extract())
                .map_err(|e| e.to_string())?;
            Ok(Some(text))
        })
    }
}

fn parse_registry(obj: &Bound<'_, PyAny>) -> PyResult<Registry> {
    let py = obj.py();
    let mapping = obj.hasattr("__getitem__")? && !obj.is_instance_of::<PyString>();
    if !obj.is_callable() && !mapping {
        return Err(type_error(
            py,
            format!("registry must be a mapping of URIs to schemas or a callable, got {}", type_name(obj)),
        ));
    }
    Ok(Registry(Arc::new(PyRegistry { source: obj.clone().unbind() })))
}

/// Compiles JSON Schemas into programs, caching executables and class tries within byte budgets.
#[pyclass(frozen, name = "Compiler", module = "maskforge._native")]
pub(crate) struct PyCompiler {
    inner: Compiler,
}

impl PyCompiler {
    pub(crate) fn over_process_cache(&self) -> PyCompiler {
        PyCompiler { inner: Compiler::with_global_cache(self.inner.options().clone()) }
    }
}

#[pymethods]
impl PyCompiler {
    #[new]
    #[pyo3(
        text_signature = "(*, executable_cache_bytes=268435456, trie_cache_bytes=268435456, bind_policy='adaptive', \
                            default_draft=None, format_assertion=True, registry=None, max_json_whitespace=None, \
                            property_order='any', closed_objects=False)"
    )]
    #[pyo3(signature = (
        *,
        executable_cache_bytes = None,
        trie_cache_bytes = None,
        bind_policy = None,
        default_draft = None,
        format_assertion = None,
        registry = None,
        max_json_whitespace = None,
        property_order = None,
        closed_objects = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        executable_cache_bytes: Option<&Bound<'_, PyAny>>,
        trie_cache_bytes: Option<&Bound<'_, PyAny>>,
        bind_policy: Option<&Bound<'_, PyAny>>,
        default_draft: Option<&Bound<'_, PyAny>>,
        format_assertion: Option<&Bound<'_, PyAny>>,
        registry: Option<&Bound<'_, PyAny>>,
        max_json_whitespace: Option<&Bound<'_, PyAny>>,
        property_order: Option<&Bound<'_, PyAny>>,
        closed_objects: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut options = CompilerOptions::default();
        if let Some(obj) = registry.filter(|o| !o.is_none()) {
            options.registry = Some(parse_registry(obj)?);
        }
        if let Some(name) = args::optional_str(property_order, "property_order")? {
            let order = PropertyOrder::from_name(&name).ok_or_else(|| {
                value_error(py, format!("property_order must be \"any\" or \"declared\", got {name:?}"))
            })?;
            options = options.with_property_order(order);
        }
        if let Some(obj) = max_json_whitespace.filter(|o| !o.is_none()) {
            let max = args::size(obj, "max_json_whitespace")?;
            let max = u32::try_from(max).map_err(|_| value_error(py, "max_json_whitespace is too large"))?;
            options = options.with_max_json_whitespace(Some(max));
        }
        if let Some(obj) = executable_cache_bytes.filter(|o| !o.is_none()) {
            options = options.with_executable_cache_bytes(args::size(obj, "executable_cache_bytes")?);
        }
        if let Some(obj) = trie_cache_bytes.filter(|o| !o.is_none()) {
            options = options.with_trie_cache_bytes(args::size(obj, "trie_cache_bytes")?);
        }
        if let Some(obj) = bind_policy.filter(|o| !o.is_none()) {
            options = options.with_bind_policy(parse_bind_policy(obj)?);
        }
        if let Some(name) = args::optional_str(default_draft, "default_draft")? {
            options = options.with_default_draft(parse_draft(py, &name)?);
        }
        if let Some(obj) = format_assertion.filter(|o| !o.is_none()) {
            let enforce = obj
                .cast::<pyo3::types::PyBool>()
                .map_err(|_| type_error(py, format!("format_assertion must be a bool, got {}", type_name(obj))))?
                .is_true();
            options = options.with_format_assertion(enforce);
        }
        if let Some(obj) = closed_objects.filter(|o| !o.is_none()) {
            let closed = obj
                .cast::<pyo3::types::PyBool>()
                .map_err(|_| type_error(py, format!("closed_objects must be a bool, got {}", type_name(obj))))?
                .is_true();
            options = options.with_closed_objects(closed);
        }
        Ok(PyCompiler { inner: Compiler::new(options) })
    }

    /// A compiler that caches nothing (deterministic tests and benchmarks).
    #[staticmethod]
    fn without_cache() -> Self {
        PyCompiler { inner: Compiler::without_cache() }
    }

    /// Compiles a schema: JSON text, a dict, a bool, or a Pydantic model class.
    fn compile(&self, py: Python<'_>, schema: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        let text = json_text(schema, &SCHEMAS_MODULE, "maskforge._schemas", "schema_to_json")?;
        let compiler = &self.inner;
        let inner = detached(py, || compiler.compile_json_schema(&text))?;
        Ok(PySchemaProgram { inner })
    }

    /// Compiles a regular expression on raw text (ECMA-262 syntax, as a schema's `pattern`),
    /// matched against the whole output.
    fn compile_regex(&self, py: Python<'_>, pattern: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        let pattern: String = pattern
            .cast::<PyString>()
            .map_err(|_| {
                type_error(py, format!("compile_regex() takes the pattern as a str, got {}", type_name(pattern)))
            })?
            .to_str()
            .map_err(|_| invalid_text(py))?
            .to_owned();
        let compiler = &self.inner;
        let inner = detached(py, || compiler.compile_regex(&pattern))?;
        Ok(PySchemaProgram { inner })
    }

    /// Compiles a choice among strings: the output is exactly one of them, as raw text.
    fn compile_choice(&self, py: Python<'_>, choices: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        if choices.cast::<PyString>().is_ok() {
            return Err(type_error(py, "compile_choice() takes a list of strings, not one str".to_owned()));
        }
        let listed: Vec<String> = choices
            .try_iter()
            .and_then(|items| items.map(|item| item.and_then(|i| i.extract::<String>())).collect())
            .map_err(|_| {
                type_error(py, format!("compile_choice() takes an iterable of str, got {}", type_name(choices)))
            })?;
        let compiler = &self.inner;
        let inner = detached(py, || compiler.compile_choice(&listed))?;
        Ok(PySchemaProgram { inner })
    }

    /// Compiles a template (docs/templates.md): its JSON document as a str, or a
    /// `maskforge.Template`, dict or list, written out by `maskforge.templates.template_to_json`.
    fn compile_template(&self, py: Python<'_>, template: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        let text = json_text(template, &TEMPLATES_MODULE, "maskforge.templates", "template_to_json")?;
        let compiler = &self.inner;
        let inner = detached(py, || compiler.compile_template(&text))?;
        Ok(PySchemaProgram { inner })
    }

    /// Loads a program `SchemaProgram.to_bytes()` wrote (bytes or bytearray), to bind under
    /// this compiler's bind policy. Bytes that are not such a program, or come from another
    /// maskforge version, or are damaged raise `ProgramLoadError`.
    fn load_program(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        let data = program_bytes(data)?;
        let compiler = &self.inner;
        let inner = detached(py, || compiler.load_program(&data))?;
        Ok(PySchemaProgram { inner })
    }

    /// Compiles "any JSON object": the schema `{"type": "object"}`.
    fn compile_json_object(&self, py: Python<'_>) -> PyResult<PySchemaProgram> {
        let compiler = &self.inner;
        let inner = detached(py, || compiler.compile_json_object())?;
        Ok(PySchemaProgram { inner })
    }

    /// Counters of this compiler's caches.
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        cache_stats_dict(py, self.inner.cache_stats())
    }

    /// Empties this compiler's caches (programs already compiled stay valid).
    fn clear_caches(&self) {
        self.inner.clear_caches();
    }

    /// The bind policy programs of this compiler use by default.
    #[getter]
    fn bind_policy(&self) -> &'static str {
        bind_policy_name(self.inner.options().bind_policy)
    }

    /// The draft of schemas without `$schema`.
    #[getter]
    fn default_draft(&self) -> &'static str {
        self.inner.options().default_draft.name()
    }

    #[getter]
    fn format_assertion(&self) -> bool {
        self.inner.options().format_assertion
    }

    /// Longest run of insignificant whitespace, or None for any.
    #[getter]
    fn max_json_whitespace(&self) -> Option<u32> {
        self.inner.options().max_json_whitespace
    }

    /// `"any"` or `"declared"`.
    #[getter]
    fn property_order(&self) -> &'static str {
        self.inner.options().property_order.name()
    }

    /// Whether objects take no keys beyond those the schema declares.
    #[getter]
    fn closed_objects(&self) -> bool {
        self.inner.options().closed_objects
    }

    fn __repr__(&self) -> String {
        let o = self.inner.options();
        format!(
            "Compiler(executable_cache_bytes={}, trie_cache_bytes={}, bind_policy='{}', default_draft='{}', format_assertion={}, max_json_whitespace={}, property_order='{}', closed_objects={})",
            o.executable_cache_bytes,
            o.trie_cache_bytes,
            bind_policy_name(o.bind_policy),
            o.default_draft.name(),
            if o.format_assertion { "True" } else { "False" },
            o.max_json_whitespace.map_or("None".to_string(), |n| n.to_string()),
            o.property_order.name(),
            if o.closed_objects { "True" } else { "False" }
        )
    }
}

/// A compiled schema, independent of any vocabulary. Immutable; bind it to get masks.
#[pyclass(frozen, name = "SchemaProgram", module = "maskforge._native")]
pub(crate) struct PySchemaProgram {
    inner: SchemaProgram,
}

#[pymethods]
impl PySchemaProgram {
    /// `"regular"` or `"structured"`.
    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.executable().backend_name()
    }

    /// `"json"` (one JSON value) or `"text"` (raw text: a regex's or a choice's).
    #[getter]
    fn output(&self) -> &'static str {
        output_name(self.inner.executable().output())
    }

    /// Whether `text` (bytes) is a whole accepted output.
    fn accepts(&self, text: &[u8]) -> bool {
        self.inner.executable().accepts(text)
    }

    /// States of the executable's automaton.
    #[getter]
    fn state_count(&self) -> usize {
        self.inner.executable().state_count()
    }

    /// Joins the program to a vocabulary (`bind_policy` overrides the compiler's).
    #[pyo3(signature = (vocabulary, *, bind_policy = None))]
    fn bind(
        &self,
        py: Python<'_>,
        vocabulary: &Bound<'_, PyAny>,
        bind_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyBoundSchema> {
        let vocabulary = vocabulary.cast::<PyVocabulary>().map_err(|_| {
            type_error(py, format!("bind() takes a maskforge.Vocabulary, got {}", type_name(vocabulary)))
        })?;
        let policy = bind_policy.filter(|o| !o.is_none()).map(parse_bind_policy).transpose()?;
        let program = &self.inner;
        let compiled = &vocabulary.get().inner;
        let inner = detached(py, || match policy {
            Some(policy) => program.bind_with_policy(compiled, policy),
            None => program.bind(compiled),
        })?;
        Ok(PyBoundSchema { inner, vocabulary: vocabulary.clone().unbind() })
    }

    /// The program as bytes, for a cache on disk or another process: versioned (only this
    /// maskforge version loads them) and checksummed. `Compiler.load_program` or
    /// `SchemaProgram.from_bytes` reads them; pickling goes through them.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let program = &self.inner;
        let bytes = py.detach(|| program.to_bytes());
        pyo3::types::PyBytes::new(py, &bytes)
    }

    /// Loads `to_bytes()`'s bytes with the default compiler's bind policy and trie cache (one
    /// per process); `Compiler.load_program` takes another compiler's.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PySchemaProgram> {
        static LOADER: std::sync::OnceLock<Compiler> = std::sync::OnceLock::new();
        let data = program_bytes(data)?;
        let compiler = LOADER.get_or_init(|| Compiler::new(CompilerOptions::default()));
        let inner = detached(py, || compiler.load_program(&data))?;
        Ok(PySchemaProgram { inner })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
        let load = slf.get_type().getattr("from_bytes")?;
        Ok((load, (slf.get().to_bytes(slf.py()),)))
    }

    fn __repr__(&self) -> String {
        format!("SchemaProgram(backend='{}', state_count={})", self.backend(), self.state_count())
    }
}

/// A program joined to a vocabulary. Immutable and thread-safe; start one session per sequence.
#[pyclass(frozen, name = "BoundSchema", module = "maskforge._native")]
pub(crate) struct PyBoundSchema {
    inner: BoundSchema,
    vocabulary: Py<PyVocabulary>,
}

#[pymethods]
impl PyBoundSchema {
    /// A session at the beginning of the output; `max_rollback_tokens` bounds how many
    /// committed tokens `Session.rollback` can undo (`None`: all of them).
    #[pyo3(signature = (*, max_rollback_tokens = None))]
    fn start_session(&self, py: Python<'_>, max_rollback_tokens: Option<&Bound<'_, PyAny>>) -> PyResult<PySession> {
        let max = match max_rollback_tokens.filter(|m| !m.is_none()) {
            None => None,
            Some(m) => Some(args::size(m, "max_rollback_tokens")?),
        };
        let options = maskforge_core::SessionOptions::default().with_max_rollback_tokens(max);
        let bound = &self.inner;
        let session = detached(py, || bound.start_session_with(options))?;
        Ok(PySession::new(session, self.inner.mask_byte_count()))
    }

    /// `ceil(mask_vocab_size / 32)`: the u32 words of one mask.
    #[getter]
    fn mask_word_count(&self) -> usize {
        self.inner.mask_word_count()
    }

    /// `"json"` or `"text"`, as for `SchemaProgram.output`.
    #[getter]
    fn output(&self) -> &'static str {
        output_name(self.inner.executable().output())
    }

    /// `4 * mask_word_count`: the bytes of one mask.
    #[getter]
    fn mask_byte_count(&self) -> usize {
        self.inner.mask_byte_count()
    }

    #[getter]
    fn mask_vocab_size(&self) -> usize {
        self.inner.mask_vocab_size()
    }

    /// The policy in force: `"eager"` or `"lazy"` (what `"adaptive"` chose).
    #[getter]
    fn bind_policy(&self) -> &'static str {
        bind_policy_name(self.inner.effective_policy())
    }

    #[getter]
    fn vocabulary(&self, py: Python<'_>) -> Py<PyVocabulary> {
        self.vocabulary.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "BoundSchema(mask_vocab_size={}, mask_word_count={}, bind_policy='{}')",
            self.inner.mask_vocab_size(),
            self.inner.mask_word_count(),
            self.bind_policy()
        )
    }
}

pub(crate) fn executable_cache_stats<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    cache_stats_dict(py, maskforge_core::runtime::global_executable_cache_stats())
}

fn output_name(output: maskforge_core::Output) -> &'static str {
    match output {
        maskforge_core::Output::JsonValue => "json",
        maskforge_core::Output::Text => "text",
    }
}
