//! Binding: an executable joined to a vocabulary, with one packed mask row per automaton state.
//!
//! Tokens are grouped by the sequence of byte classes they spell under the automaton (tokens
//! with equal sequences behave identically), those sequences are put in a flat trie, and each
//! state's row is one pruned walk of that trie. Rows are deduplicated; under the lazy policy a
//! row is computed on first use behind a per-state once-cell.

mod rows;

use std::sync::Arc;

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::compiler::TrieCache;
use crate::error::Result;
use crate::executable::{Backend, ExecutableSchema};
use crate::mask;
use crate::options::BindPolicy;
use crate::session::Session;
use crate::vocabulary::{CompiledVocabulary, TokenTrie, Vocabulary};

pub(crate) use rows::RowTable;

/// A schema bound to a vocabulary: immutable, `Send + Sync`, cheap to clone; sessions share it.
#[derive(Debug, Clone)]
pub struct BoundSchema {
    inner: Arc<BoundInner>,
}

#[derive(Debug)]
pub(crate) struct BoundInner {
    pub(crate) executable: Arc<ExecutableSchema>,
    pub(crate) vocabulary: Arc<Vocabulary>,
    pub(crate) dfa: Arc<ByteDfa>,
    pub(crate) trie: Arc<TokenTrie>,
    pub(crate) rows: RowTable,
    pub(crate) policy: BindPolicy,
}

impl BoundSchema {
    pub(crate) fn bind(
        executable: Arc<ExecutableSchema>,
        vocabulary: &CompiledVocabulary,
        policy: BindPolicy,
        eager_table_bytes: usize,
        tries: &TrieCache,
    ) -> Result<BoundSchema> {
        let Backend::Regular(dfa) = executable.backend();
        let dfa = Arc::clone(dfa);
        let trie = tries.class_trie(vocabulary, dfa.byte_classes());
        let word_count = vocabulary.mask_word_count();
        let policy = match policy {
            BindPolicy::Adaptive => {
                let table_bytes = dfa.state_count().saturating_mul(word_count * 4);
                if table_bytes <= eager_table_bytes {
                    BindPolicy::Eager
                } else {
                    BindPolicy::Lazy
                }
            }
            fixed => fixed,
        };
        let inner = BoundInner {
            rows: RowTable::new(dfa.state_count(), word_count),
            executable,
            vocabulary: Arc::clone(vocabulary.vocabulary()),
            dfa,
            trie,
            policy,
        };
        if policy == BindPolicy::Eager {
            for state in 1..inner.dfa.state_count() as StateId {
                inner.row(state);
            }
        }
        Ok(BoundSchema { inner: Arc::new(inner) })
    }

    pub(crate) fn from_inner(inner: Arc<BoundInner>) -> Self {
        BoundSchema { inner }
    }

    /// Starts a session at the beginning of the output.
    pub fn start_session(&self) -> Result<Session> {
        Ok(Session::new(Arc::clone(&self.inner)))
    }

    /// `ceil(mask_vocab_size / 32)`.
    pub fn mask_word_count(&self) -> usize {
        self.inner.rows.word_count()
    }

    /// `4 * mask_word_count()`.
    pub fn mask_byte_count(&self) -> usize {
        4 * self.mask_word_count()
    }

    pub fn mask_vocab_size(&self) -> usize {
        self.inner.vocabulary.mask_vocab_size()
    }

    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.inner.vocabulary
    }

    pub fn executable(&self) -> &Arc<ExecutableSchema> {
        &self.inner.executable
    }

    /// The policy in force after `Adaptive` chose (`Eager` or `Lazy`).
    pub fn effective_policy(&self) -> BindPolicy {
        self.inner.policy
    }

    /// Rows computed so far and distinct rows stored (after deduplication).
    pub fn row_stats(&self) -> (usize, usize) {
        self.inner.rows.stats()
    }

    /// Nodes of the class trie binding walks (distinct class-sequence prefixes of the vocabulary).
    pub fn class_trie_nodes(&self) -> usize {
        self.inner.trie.node_count()
    }
}

impl BoundInner {
    /// The packed row of `state` (EOS bits included when the state accepts).
    pub(crate) fn row(&self, state: StateId) -> &[u32] {
        self.rows.get_or_compute(state, || self.compute_row(state))
    }

    fn compute_row(&self, state: StateId) -> Vec<u32> {
        let mut row = vec![0u32; self.rows.word_count()];
        if state == DEAD {
            return row;
        }
        let dfa = &*self.dfa;
        self.trie.walk(
            state,
            |s, class| {
                let next = dfa.next_class(s, class);
                (next != DEAD).then_some(next)
            },
            |_, ids| {
                for &id in ids {
                    mask::set_bit(&mut row, id);
                }
            },
        );
        if dfa.is_accepting(state) {
            for &eos in self.vocabulary.eos_token_ids() {
                mask::set_bit(&mut row, eos);
            }
        }
        row
    }
}

/// The trie of a vocabulary's tokens over one automaton's byte classes.
pub(crate) fn build_class_trie(vocabulary: &Vocabulary, classes: &[u8; 256]) -> TokenTrie {
    let mut symbols = Vec::new();
    let mut spans = Vec::with_capacity(vocabulary.tokenizer_size());
    for (id, bytes) in vocabulary.tokens_with_bytes() {
        let start = symbols.len() as u32;
        symbols.extend(bytes.iter().map(|&b| classes[b as usize]));
        spans.push((start, symbols.len() as u32, id));
    }
    TokenTrie::build_flat(&symbols, spans)
}
