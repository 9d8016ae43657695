//! The compiler and the programs it produces; their caches are `cache`'s.

use std::sync::Arc;

use crate::bind::BoundSchema;
use crate::cache::{CacheStats, ExecutableCache, ExecutableKey, TrieCache};
use crate::error::Result;
use crate::executable::ExecutableSchema;
use crate::options::{BindPolicy, CompilerOptions, PropertyOrder};
use crate::schema::SchemaDocument;
use crate::vocabulary::CompiledVocabulary;

/// Compiles schemas into [`SchemaProgram`]s, caching executables and class tries within byte
/// budgets. Cheap to share across threads (`&Compiler` is enough).
#[derive(Debug)]
pub struct Compiler {
    options: CompilerOptions,
    executables: Arc<ExecutableCache>,
    tries: Arc<TrieCache>,
}

/// A compiled schema, independent of any vocabulary; bind it to one to get masks.
#[derive(Debug, Clone)]
pub struct SchemaProgram {
    executable: Arc<ExecutableSchema>,
    tries: Arc<TrieCache>,
    bind_policy: BindPolicy,
    eager_table_bytes: usize,
}

impl Compiler {
    /// A compiler with caches of its own, sized by the options' `executable_cache_bytes` and
    /// `trie_cache_bytes`.
    pub fn new(options: CompilerOptions) -> Self {
        let executables = Arc::new(ExecutableCache::new(options.executable_cache_bytes));
        let tries = Arc::new(TrieCache::new(options.trie_cache_bytes));
        Compiler { options, executables, tries }
    }

    /// A compiler that caches nothing (deterministic tests and benchmarks).
    pub fn without_cache() -> Self {
        Compiler::new(CompilerOptions::default().with_executable_cache_bytes(0).with_trie_cache_bytes(0))
    }

    /// A compiler over the process-wide executable cache (see [`crate::runtime`]).
    pub fn with_global_cache(options: CompilerOptions) -> Self {
        let tries = Arc::new(TrieCache::new(options.trie_cache_bytes));
        Compiler { executables: crate::runtime::global_executable_cache(), options, tries }
    }

    /// The options every compilation and bind of this compiler uses.
    pub fn options(&self) -> &CompilerOptions {
        &self.options
    }

    /// Compiles a schema given as JSON text. What cannot be compiled exactly is an
    /// [`Error::Schema`](crate::Error::Schema) whose diagnostic has a stable code, the keyword
    /// and its JSON Pointer.
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions, DiagnosticCode};
    ///
    /// let compiler = Compiler::new(CompilerOptions::default());
    /// let program = compiler.compile_json_schema(r#"{"type": "array", "items": {"type": "integer"}}"#)?;
    /// assert!(program.executable().accepts(b"[1, 2]"));
    /// assert!(!program.executable().accepts(b"[1.5]"));
    ///
    /// let error = compiler.compile_json_schema(r#"{"pattern": "(a)\\1"}"#).unwrap_err();
    /// let diagnostic = error.diagnostic().expect("a schema error");
    /// assert_eq!(diagnostic.code, DiagnosticCode::UnsupportedPattern);
    /// assert_eq!((diagnostic.keyword.as_deref(), diagnostic.pointer.as_str()), (Some("pattern"), "/pattern"));
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn compile_json_schema(&self, schema: &str) -> Result<SchemaProgram> {
        let document = SchemaDocument::parse(schema, &self.options)?;
        self.compile_document(document)
    }

    /// Compiles a schema given as a parsed JSON value.
    pub fn compile_json_value(&self, schema: &serde_json::Value) -> Result<SchemaProgram> {
        let document = SchemaDocument::from_value(schema.clone(), &self.options)?;
        self.compile_document(document)
    }

    /// Compiles a regular expression on raw text (no JSON around it): the output must match it
    /// as a whole, as if written `^(?:pattern)$`. ECMA-262 syntax and semantics as for a schema's
    /// `pattern` (code points, `\p{..}`, lookaheads at the start; no backreferences or
    /// lookbehind): what it does not support is an [`Error::Schema`](crate::Error::Schema) with
    /// code [`DiagnosticCode::UnsupportedPattern`](crate::DiagnosticCode::UnsupportedPattern) and
    /// keyword `regex`; a regex that matches nothing is
    /// [`UnsatisfiableSchema`](crate::DiagnosticCode::UnsatisfiableSchema).
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions, Output};
    ///
    /// let program = Compiler::new(CompilerOptions::default()).compile_regex(r"\d{3}-[a-z]+")?;
    /// assert!(program.executable().accepts(b"123-abc"));
    /// assert!(!program.executable().accepts(b"x123-abc")); // anchored at both ends
    /// assert_eq!(program.executable().output(), Output::Text);
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn compile_regex(&self, pattern: &str) -> Result<SchemaProgram> {
        // Canonical JSON never starts with a NUL: the keys of raw-text programs are apart.
        let canonical = format!("\0regex\0{pattern}");
        self.cached(canonical, || Ok(ExecutableSchema::text(crate::text::regex_language(pattern, &self.options)?)))
    }

    /// Compiles a choice among strings: the output is exactly one of them, as raw text. An
    /// empty list is [`DiagnosticCode::InvalidKeywordValue`](crate::DiagnosticCode::InvalidKeywordValue)
    /// with keyword `choices`.
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions};
    ///
    /// let program = Compiler::new(CompilerOptions::default()).compile_choice(&["yes", "no"])?;
    /// assert!(program.executable().accepts(b"no"));
    /// assert!(!program.executable().accepts(b"\"no\""));
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn compile_choice<S: AsRef<str>>(&self, choices: &[S]) -> Result<SchemaProgram> {
        let listed: Vec<&str> = choices.iter().map(AsRef::as_ref).collect();
        let canonical = format!("\0choice\0{}", serde_json::to_string(&listed).expect("strings serialise"));
        self.cached(canonical, || Ok(ExecutableSchema::text(crate::text::choice_language(choices, &self.options)?)))
    }

    /// Compiles a template given as its JSON document (docs/templates.md): raw text made of
    /// literal text, free text, regexes, JSON values of schemas, choices, repetitions and
    /// triggered tags. A malformed document is an [`Error::Schema`](crate::Error::Schema) whose
    /// pointer points into it; a JSON part whose schema needs the structured arm is
    /// [`RequiresStructuredBackend`](crate::DiagnosticCode::RequiresStructuredBackend).
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions};
    ///
    /// let template = r#"{"tags": [{"begin": "<tool_call>", "content": {"json": {"enum": ["a", "b"]}},
    ///                              "end": "</tool_call>"}], "stop_after_first": true}"#;
    /// let program = Compiler::new(CompilerOptions::default()).compile_template(template)?;
    /// assert!(program.executable().accepts(br#"Calling.<tool_call>"b"</tool_call>"#));
    /// assert!(!program.executable().accepts(br#"Calling.<tool_call>"c"</tool_call>"#));
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn compile_template(&self, template: &str) -> Result<SchemaProgram> {
        let value: serde_json::Value = serde_json::from_str(template).map_err(|e| {
            crate::error::Diagnostic::new(crate::DiagnosticCode::InvalidJson, "", format!("template: {e}"))
                .with_keyword("template")
        })?;
        self.compile_template_value(&value)
    }

    /// Compiles a template given as a parsed JSON document; see [`compile_template`](Self::compile_template).
    pub fn compile_template_value(&self, template: &serde_json::Value) -> Result<SchemaProgram> {
        let canonical = format!("\0template\0{template}");
        self.cached(canonical, || ExecutableSchema::compile_template(template, &self.options))
    }

    /// Compiles "any JSON object" (what serving engines call `json_object`): the schema
    /// `{"type": "object"}` under this compiler's options.
    pub fn compile_json_object(&self) -> Result<SchemaProgram> {
        self.compile_json_schema(r#"{"type": "object"}"#)
    }

    fn compile_document(&self, document: SchemaDocument) -> Result<SchemaProgram> {
        // Key order is insignificant in JSON Schema, except for `properties` once the declared
        // order is a policy: then the text keeps the schema's own order.
        let canonical = document.identity_text(self.options.property_order == PropertyOrder::Any);
        self.cached(canonical, || ExecutableSchema::compile(&document, &self.options))
    }

    /// The program of the executable cached under `canonical`, built by `build` on a miss.
    fn cached(&self, canonical: String, build: impl FnOnce() -> Result<ExecutableSchema>) -> Result<SchemaProgram> {
        let key = ExecutableKey::new(canonical, self.options.compile_identity());
        let executable = match self.executables.get(&key) {
            Some(hit) => hit,
            None => {
                let executable = Arc::new(build()?);
                self.executables.insert(key, Arc::clone(&executable), executable.heap_bytes());
                executable
            }
        };
        Ok(SchemaProgram {
            executable,
            tries: Arc::clone(&self.tries),
            bind_policy: self.options.bind_policy,
            eager_table_bytes: self.options.eager_table_bytes,
        })
    }

    /// Counters of this compiler's caches. With [`Compiler::with_global_cache`] the executable
    /// counters are those of the process-wide cache, which other compilers share.
    pub fn cache_stats(&self) -> CacheStats {
        let (executable_hits, executable_misses, executable_entries, executable_bytes) = self.executables.stats();
        let (trie_hits, trie_misses, trie_entries, trie_bytes) = self.tries.stats();
        CacheStats {
            executable_hits,
            executable_misses,
            executable_entries,
            executable_bytes,
            trie_hits,
            trie_misses,
            trie_entries,
            trie_bytes,
        }
    }

    /// Empties both caches (the counters stay). Programs and bound schemas already made keep
    /// what they hold. With [`Compiler::with_global_cache`] this empties the process-wide
    /// executable cache for every compiler that shares it.
    pub fn clear_caches(&self) {
        self.executables.clear();
        self.tries.clear();
    }
}

impl Compiler {
    /// Loads a program that [`SchemaProgram::to_bytes`] wrote, to bind under this compiler's
    /// bind policy and trie cache. The program compiles as it did where it was written
    /// (options and registry documents travel with it), whatever this compiler's options.
    /// Bytes that are not such a program, one written by another MaskForge version, or a
    /// damaged one are an [`Error::ProgramLoad`](crate::Error::ProgramLoad), never a program.
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions};
    ///
    /// let compiler = Compiler::new(CompilerOptions::default());
    /// let bytes = compiler.compile_json_schema(r#"{"type": "array", "maxItems": 2}"#)?.to_bytes();
    /// let program = compiler.load_program(&bytes)?;
    /// assert!(program.executable().accepts(b"[1, 2]"));
    /// assert!(!program.executable().accepts(b"[1, 2, 3]"));
    /// assert!(compiler.load_program(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn load_program(&self, bytes: &[u8]) -> Result<SchemaProgram> {
        Ok(SchemaProgram {
            executable: Arc::new(crate::image::read(bytes)?),
            tries: Arc::clone(&self.tries),
            bind_policy: self.options.bind_policy,
            eager_table_bytes: self.options.eager_table_bytes,
        })
    }
}

impl SchemaProgram {
    /// The program as bytes, for a cache on disk or another process
    /// ([`Compiler::load_program`] reads them). A regular program is its automaton's table; a
    /// program on the structured or composite arm is its resolved source, compiled again on
    /// load straight on its arm. Versioned (only the MaskForge version that wrote them reads
    /// them) and checksummed.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::image::write(&self.executable)
    }

    /// Joins the program to a vocabulary under the compiler's bind policy.
    pub fn bind(&self, vocabulary: &CompiledVocabulary) -> Result<BoundSchema> {
        self.bind_with_policy(vocabulary, self.bind_policy)
    }

    /// Like [`bind`](Self::bind), under `policy` instead of the compiler's. The compiler's
    /// `eager_table_bytes` still decides [`BindPolicy::Adaptive`]; schemas on the structured
    /// backend compute masks per step whatever the policy.
    pub fn bind_with_policy(&self, vocabulary: &CompiledVocabulary, policy: BindPolicy) -> Result<BoundSchema> {
        BoundSchema::bind(
            Arc::clone(&self.executable),
            vocabulary,
            policy,
            self.eager_table_bytes,
            Arc::clone(&self.tries),
        )
    }

    /// The vocabulary-independent executable: whole-text checks
    /// ([`ExecutableSchema::accepts`]), the backend chosen, its size.
    pub fn executable(&self) -> &Arc<ExecutableSchema> {
        &self.executable
    }
}
