//! The compiler's caches, each bounded by an estimate of its heap bytes: executables by schema
//! identity, class tries by vocabulary and byte partition. Shared by compilers, their programs
//! and bound schemas; the process-wide executable cache is `runtime`'s.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::executable::ExecutableSchema;
use crate::options::CompileIdentity;
use crate::vocabulary::TokenTrie;

/// Cache counters, for monitoring and tests. Hits and misses count lookups since the cache was
/// created ([`Compiler::clear_caches`](crate::Compiler::clear_caches) does not reset them); entries and bytes are its present
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
    /// Class-trie lookups (when binding, and once a regular automaton's rows or the string
    /// splits of the structured backend pay for a class trie) that found it cached.
    pub trie_hits: u64,
    /// Token-trie lookups that found nothing, so the trie was built.
    pub trie_misses: u64,
    /// Token tries held now.
    pub trie_entries: usize,
    /// Estimated heap bytes of the token tries held now.
    pub trie_bytes: usize,
}

/// What a cached executable is looked up by: the schema's canonical text and the options that
/// change what it compiles to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ExecutableKey {
    canonical: String,
    identity: CompileIdentity,
}

impl ExecutableKey {
    pub(crate) fn new(canonical: String, identity: CompileIdentity) -> Self {
        ExecutableKey { canonical, identity }
    }

    fn heap_bytes(&self) -> usize {
        self.canonical.len() + std::mem::size_of::<Self>()
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
    pub(crate) fn new(budget: usize) -> Self {
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
        byte_trie: &TokenTrie,
        classes: &[u8; 256],
    ) -> Arc<TokenTrie> {
        let trie = Arc::new(byte_trie.over_classes(classes));
        self.cache.insert_sized((vocabulary_uid, *classes), Arc::clone(&trie), trie.heap_bytes());
        trie
    }

    /// (hits, misses, entries, bytes).
    pub(crate) fn stats(&self) -> (u64, u64, usize, usize) {
        self.cache.stats()
    }

    pub(crate) fn clear(&self) {
        self.cache.clear();
    }

    pub(crate) fn class_trie(&self, vocabulary_uid: u64, byte_trie: &TokenTrie, classes: &[u8; 256]) -> Arc<TokenTrie> {
        self.cached_class_trie(vocabulary_uid, classes)
            .unwrap_or_else(|| self.build_class_trie(vocabulary_uid, byte_trie, classes))
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
