//! Masks where a member's or item's value starts.
//!
//! Until the value ends, its container only hands it bytes, so which tokens stay inside the
//! value is a question about the value's schemas alone (see
//! [`DocumentMatcher::value_start`](crate::structured::DocumentMatcher::value_start)): one row
//! per schema, worked out on first use. Only the tokens that end the value and go on with a
//! byte its container may take (`,`, `}`, `]` or whitespace) are left to the matcher, as a small
//! trie it walks. Every value start on the same schemas then costs a row copy and that walk,
//! where a walk of the whole trie stepped through every string and number token.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::mask;
use crate::structured::{Graph, LoneValue, NodeId, Step};
use crate::vocabulary::{Run, TokenId, TokenTrie, Vocabulary};

/// Bytes of value-start rows a bound schema keeps, each a mask of the vocabulary's size (16 KiB
/// for Llama-3's): past them, value starts not met yet are walked whole.
const KEPT_ROW_BYTES: usize = 32 << 20;

/// The value-start rows a bound schema has met so far.
#[derive(Debug, Default)]
pub(crate) struct ValueStarts {
    by_node: Mutex<HashMap<NodeId, Arc<NodeRows>>>,
    by_set: Mutex<HashMap<Box<[NodeId]>, Arc<ValueStartRows>>>,
    /// Rows kept, those of one schema's sets shared with the schema's.
    kept_rows: AtomicUsize,
}

/// A value start on one schema: the tokens that stay inside the value, and those that end it
/// and go on past it.
#[derive(Debug)]
struct NodeRows {
    inside: Arc<[u32]>,
    beyond: Vec<TokenId>,
}

/// A value start on a set of schemas (the container's tracks read the value on each): the
/// tokens some schema keeps inside the value, and the others that end some schema's value and
/// go on past it, as a byte trie for the matcher.
#[derive(Debug)]
pub(crate) struct ValueStartRows {
    pub(crate) inside: Arc<[u32]>,
    pub(crate) beyond: TokenTrie,
}

/// The state of a walk of the byte trie from a value's start.
#[derive(Clone)]
enum Reading {
    Value(LoneValue),
    /// Past the value's end, on a byte its container may take: the matcher decides.
    Beyond,
}

impl ValueStarts {
    /// The rows of a value start on `nodes` (sorted, without repeats); `None` when they are not
    /// kept and the bound schema keeps as many as it may.
    pub(crate) fn rows(
        &self,
        graph: &Graph,
        vocabulary: &Vocabulary,
        trie: &TokenTrie,
        word_count: usize,
        nodes: &[NodeId],
    ) -> Option<Arc<ValueStartRows>> {
        if let Some(hit) = self.by_set.lock().unwrap_or_else(|e| e.into_inner()).get(nodes) {
            return Some(Arc::clone(hit));
        }
        let per_node =
            nodes.iter().map(|&node| self.node_rows(graph, trie, word_count, node)).collect::<Option<Vec<_>>>()?;
        let inside: Arc<[u32]> = match &per_node[..] {
            [one] => Arc::clone(&one.inside),
            _ => {
                self.keep_row(word_count)?;
                let mut inside = vec![0u32; word_count];
                for rows in &per_node {
                    for (word, row) in inside.iter_mut().zip(rows.inside.iter()) {
                        *word |= row;
                    }
                }
                inside.into()
            }
        };
        let mut beyond: Vec<TokenId> = per_node
            .iter()
            .flat_map(|rows| rows.beyond.iter().copied())
            .filter(|&id| !mask::get_bit(&inside, id))
            .collect();
        beyond.sort_unstable();
        beyond.dedup();
        let tokens =
            beyond.iter().map(|&id| (vocabulary.token_bytes(id).expect("trie tokens have bytes").to_vec(), id));
        let rows = Arc::new(ValueStartRows { inside, beyond: TokenTrie::build(tokens.collect::<Vec<_>>()) });
        self.by_set.lock().unwrap_or_else(|e| e.into_inner()).insert(nodes.into(), Arc::clone(&rows));
        Some(rows)
    }

    /// Counts one more row kept; `None` when it would pass [`KEPT_ROW_BYTES`]. (Two threads
    /// working out the same row count it twice: the budget stays a bound.)
    fn keep_row(&self, word_count: usize) -> Option<()> {
        let most = KEPT_ROW_BYTES / (word_count * 4).max(1);
        self.kept_rows
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| (kept < most).then_some(kept + 1))
            .ok()
            .map(|_| ())
    }

    fn node_rows(&self, graph: &Graph, trie: &TokenTrie, word_count: usize, node: NodeId) -> Option<Arc<NodeRows>> {
        if let Some(hit) = self.by_node.lock().unwrap_or_else(|e| e.into_inner()).get(&node) {
            return Some(Arc::clone(hit));
        }
        self.keep_row(word_count)?;
        let mut inside = vec![0u32; word_count];
        let mut beyond = Vec::new();
        trie.walk_pruned_taking(
            Reading::Value(LoneValue::new(node)),
            |state, b| matches!(state, Reading::Value(value) if value.refuses(graph, b)),
            |state, run| match (state, run) {
                (Reading::Value(value), Run::Whitespace) => value.takes_any_whitespace(),
                (Reading::Value(value), Run::Digits) => value.takes_any_digits(),
                _ => false,
            },
            |state, _, b| match state {
                Reading::Beyond => Some(Reading::Beyond),
                Reading::Value(mut value) => match value.feed(graph, b) {
                    Step::Consumed => Some(Reading::Value(value)),
                    Step::Rejected => None,
                    // Any other byte after a value, its container refuses.
                    Step::NotMine => {
                        matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r').then_some(Reading::Beyond)
                    }
                },
            },
            |state, ids| match state {
                Reading::Value(_) => ids.iter().for_each(|&id| mask::set_bit(&mut inside, id)),
                Reading::Beyond => beyond.extend_from_slice(ids),
            },
        );
        let rows = Arc::new(NodeRows { inside: inside.into(), beyond });
        self.by_node.lock().unwrap_or_else(|e| e.into_inner()).insert(node, Arc::clone(&rows));
        Some(rows)
    }
}
