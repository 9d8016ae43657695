//! Per-state mask rows, computed once (eagerly or on first use) and deduplicated.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use crate::automata::StateId;

/// One once-cell per automaton state holding a shared, deduplicated row.
#[derive(Debug)]
pub(crate) struct RowTable {
    cells: Vec<OnceLock<Arc<[u32]>>>,
    /// foldhash: rows are kilobytes each, and SipHash over them cost as much as computing them.
    distinct: Mutex<HashSet<Arc<[u32]>, foldhash::fast::FixedState>>,
}

impl RowTable {
    pub(crate) fn new(states: usize) -> Self {
        RowTable { cells: (0..states).map(|_| OnceLock::new()).collect(), distinct: Mutex::new(HashSet::default()) }
    }

    pub(crate) fn get_or_compute(&self, state: StateId, compute: impl FnOnce() -> Vec<u32>) -> &[u32] {
        self.cells[state as usize].get_or_init(|| {
            let row = compute();
            // A poisoned lock only means another thread panicked mid-insert; the set is still valid.
            let mut distinct = self.distinct.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(existing) = distinct.get(row.as_slice()) {
                return Arc::clone(existing);
            }
            let shared: Arc<[u32]> = row.into();
            distinct.insert(Arc::clone(&shared));
            shared
        })
    }

    /// (rows computed, distinct rows stored).
    pub(crate) fn stats(&self) -> (usize, usize) {
        let computed = self.cells.iter().filter(|c| c.get().is_some()).count();
        let distinct = self.distinct.lock().unwrap_or_else(|e| e.into_inner()).len();
        (computed, distinct)
    }
}
