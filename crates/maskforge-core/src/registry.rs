//! Where external schema documents come from: the [`SchemaRegistry`] a compilation asks for
//! `$ref`s that leave the schema document (nothing is fetched from the network), and the shared
//! handle [`CompilerOptions`](crate::CompilerOptions) holds. Resolution itself is
//! `schema::refs`.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// External schema documents by absolute URI, for `$ref`s that leave the schema document.
///
/// Implementations must be deterministic for a URI within one compilation; the compiled
/// program's cache identity includes the documents served, so a registry that changes its
/// answers never gets a stale program.
pub trait SchemaRegistry: Send + Sync {
    /// The document at `uri` (absolute, without fragment) as JSON text; `Ok(None)` when this
    /// registry does not know it.
    fn fetch(&self, uri: &str) -> Result<Option<String>, String>;
}

/// A registry over a fixed map of URIs to JSON texts.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use maskforge_core::{Compiler, CompilerOptions, MapRegistry, Registry};
///
/// let documents = HashMap::from([(
///     "https://example.com/point.json".to_owned(),
///     r#"{"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}"#.to_owned(),
/// )]);
/// let mut options = CompilerOptions::default();
/// options.registry = Some(Registry(Arc::new(MapRegistry(documents))));
/// let program = Compiler::new(options).compile_json_schema(r#"{"$ref": "https://example.com/point.json"}"#)?;
/// assert!(program.executable().accepts(br#"{"x": 3}"#));
/// assert!(!program.executable().accepts(br#"{"y": 3}"#));
/// # Ok::<(), maskforge_core::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MapRegistry(pub HashMap<String, String>);

impl SchemaRegistry for MapRegistry {
    fn fetch(&self, uri: &str) -> Result<Option<String>, String> {
        Ok(self.0.get(uri).or_else(|| self.0.get(uri.trim_end_matches('#'))).cloned())
    }
}

/// A shared registry in [`CompilerOptions`](crate::CompilerOptions): equal when it is the same
/// object.
#[derive(Clone)]
pub struct Registry(pub Arc<dyn SchemaRegistry>);

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Registry(..)")
    }
}

impl PartialEq for Registry {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Registry {}

impl std::hash::Hash for Registry {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as *const () as usize).hash(state);
    }
}

/// A registry that keeps what another one serves, so that a compilation's external documents
/// travel with the program it made (see `image`).
pub(crate) struct RecordingRegistry {
    inner: Registry,
    served: std::sync::Mutex<Vec<(String, String)>>,
}

impl RecordingRegistry {
    pub(crate) fn new(inner: Registry) -> Self {
        RecordingRegistry { inner, served: std::sync::Mutex::new(Vec::new()) }
    }

    /// The documents served so far, by URI, in the order first asked.
    pub(crate) fn served(&self) -> Vec<(String, String)> {
        self.served.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl SchemaRegistry for RecordingRegistry {
    fn fetch(&self, uri: &str) -> Result<Option<String>, String> {
        let document = self.inner.0.fetch(uri)?;
        if let Some(text) = &document {
            let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
            if !served.iter().any(|(u, _)| u == uri) {
                served.push((uri.to_owned(), text.clone()));
            }
        }
        Ok(document)
    }
}
