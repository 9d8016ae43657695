//! The compiler: options, caches, and the programs it produces.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::bind::{build_class_trie, BoundSchema};
use crate::error::Result;
use crate::executable::ExecutableSchema;
use crate::options::{BindPolicy, CompilerOptions, PropertyOrder};
use crate::schema::SchemaDocument;
use crate::vocabulary::{CompiledVocabulary, TokenTrie, Vocabulary};

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

/// Cache counters, for monitoring and tests. Hits and misses count lookups since the cache was
/// created ([`Compiler::clear_caches`] does not reset them); entries and bytes are its present
/// contents, bytes being the heap estimate the budget is checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Compilations served from the executable cache.
    pub executable_hits: u64,
    /// Executable lookups that found nothing, so the schema was compiled.
    pub executable_misses: u64,
    /// Executables held now.
    pub executable_entries: usize,
    /// Estimated heap bytes of the executables held now (keys included).
    pub executable_bytes: usize,
    /// Token-trie lookups (at bind time, and in strings on the structured backend) that found
    /// the trie cached.
    pub trie_hits: u64,
    /// Token-trie lookups that found nothing, so the trie was built.
    pub trie_misses: u64,
    /// Token tries held now.
    pub trie_entries: usize,
    /// Estimated heap bytes of the token tries held now.
    pub trie_bytes: usize,
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

    fn compile_document(&self, document: SchemaDocument) -> Result<SchemaProgram> {
        // Key order is insignificant in JSON Schema, except for `properties` once the declared
        // order is a policy: then the text keeps the schema's own order.
        let canonical = document.identity_text(self.options.property_order == PropertyOrder::Any);
        let key = ExecutableKey { canonical, identity: format!("{:?}", self.options.compile_identity()) };
        let executable = match self.executables.get(&key) {
            Some(hit) => hit,
            None => {
                let executable = Arc::new(ExecutableSchema::compile(&document, &self.options)?);
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
        let (trie_hits, trie_misses, trie_entries, trie_bytes) = self.tries.cache.stats();
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
        self.tries.cache.clear();
    }
}

impl SchemaProgram {
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

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ExecutableKey {
    canonical: String,
    identity: String,
}

impl ExecutableKey {
    fn heap_bytes(&self) -> usize {
        self.canonical.len() + self.identity.len()
    }
}

pub(crate) type ExecutableCache = ByteBudgetCache<ExecutableKey, Arc<ExecutableSchema>>;

impl ExecutableCache {
    pub(crate) fn insert(&self, key: ExecutableKey, value: Arc<ExecutableSchema>, bytes: usize) {
        let bytes = bytes + key.heap_bytes();
        self.insert_sized(key, value, bytes);
    }
}

/// Class tries keyed by (vocabulary, byte-class partition): schemas whose automata share a
/// partition (most JSON schemas over the same punctuation) share one trie.
#[derive(Debug)]
pub(crate) struct TrieCache {
    cache: ByteBudgetCache<(u64, [u8; 256]), Arc<TokenTrie>>,
}

impl TrieCache {
    fn new(budget: usize) -> Self {
        TrieCache { cache: ByteBudgetCache::new(budget) }
    }

    /// The class trie of a partition if it is cached, without building it.
    pub(crate) fn cached_class_trie(&self, vocabulary_uid: u64, classes: &[u8; 256]) -> Option<Arc<TokenTrie>> {
        self.cache.get(&(vocabulary_uid, *classes))
    }

    /// Builds a partition's class trie and caches it (after a miss).
    pub(crate) fn build_class_trie(
        &self,
        vocabulary_uid: u64,
        vocabulary: &Vocabulary,
        classes: &[u8; 256],
    ) -> Arc<TokenTrie> {
        let trie = Arc::new(build_class_trie(vocabulary, classes));
        self.cache.insert_sized((vocabulary_uid, *classes), Arc::clone(&trie), trie.heap_bytes());
        trie
    }

    pub(crate) fn class_trie(
        &self,
        vocabulary_uid: u64,
        vocabulary: &Vocabulary,
        classes: &[u8; 256],
    ) -> Arc<TokenTrie> {
        self.cached_class_trie(vocabulary_uid, classes)
            .unwrap_or_else(|| self.build_class_trie(vocabulary_uid, vocabulary, classes))
    }
}

/// A least-recently-used cache bounded by an estimate of its entries' heap bytes. A budget of 0
/// disables it.
#[derive(Debug)]
pub(crate) struct ByteBudgetCache<K, V> {
    budget: usize,
    inner: Mutex<CacheInner<K, V>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Debug)]
struct CacheInner<K, V> {
    entries: HashMap<K, (V, usize, u64)>,
    bytes: usize,
    tick: u64,
}

impl<K: Eq + Hash + Clone, V: Clone> ByteBudgetCache<K, V> {
    pub(crate) fn new(budget: usize) -> Self {
        ByteBudgetCache {
            budget,
            inner: Mutex::new(CacheInner { entries: HashMap::new(), bytes: 0, tick: 0 }),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheInner<K, V>> {
        // Entries are inserted whole, so a panic elsewhere cannot leave them half-written.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        match inner.entries.get_mut(key) {
            Some(entry) => {
                entry.2 = tick;
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(entry.0.clone())
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    pub(crate) fn insert_sized(&self, key: K, value: V, bytes: usize) {
        if bytes > self.budget {
            return;
        }
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        if let Some(old) = inner.entries.insert(key, (value, bytes, tick)) {
            inner.bytes -= old.1;
        }
        inner.bytes += bytes;
        while inner.bytes > self.budget {
            let oldest = inner.entries.iter().min_by_key(|(_, e)| e.2).map(|(k, _)| k.clone());
            match oldest.and_then(|k| inner.entries.remove(&k)) {
                Some(evicted) => inner.bytes -= evicted.1,
                None => break,
            }
        }
    }

    pub(crate) fn clear(&self) {
        let mut inner = self.lock();
        inner.entries.clear();
        inner.bytes = 0;
    }

    /// (hits, misses, entries, bytes).
    pub(crate) fn stats(&self) -> (u64, u64, usize, usize) {
        let inner = self.lock();
        (self.hits.load(Ordering::Relaxed), self.misses.load(Ordering::Relaxed), inner.entries.len(), inner.bytes)
    }
}
