//! Process-wide state. Nothing requires it: every [`Compiler`](crate::Compiler) owns its caches
//! unless built with [`Compiler::with_global_cache`](crate::Compiler::with_global_cache).

use std::sync::{Arc, OnceLock};

use crate::cache::{CacheStats, ExecutableCache};

static GLOBAL: OnceLock<Arc<ExecutableCache>> = OnceLock::new();

/// Budget of the process-wide executable cache.
pub const GLOBAL_EXECUTABLE_CACHE_BYTES: usize = 256 << 20;

/// The process-wide executable cache.
pub(crate) fn global_executable_cache() -> Arc<ExecutableCache> {
    Arc::clone(GLOBAL.get_or_init(|| Arc::new(ExecutableCache::new(GLOBAL_EXECUTABLE_CACHE_BYTES))))
}

/// Counters of the process-wide executable cache (trie fields are zero).
pub fn global_executable_cache_stats() -> CacheStats {
    let (executable_hits, executable_misses, executable_entries, executable_bytes) = global_executable_cache().stats();
    CacheStats { executable_hits, executable_misses, executable_entries, executable_bytes, ..CacheStats::default() }
}

/// Empties the process-wide executable cache.
pub fn clear_global_executable_cache() {
    global_executable_cache().clear();
}
