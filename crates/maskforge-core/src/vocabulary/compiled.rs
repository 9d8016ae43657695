//! The compiled vocabulary and the flat token trie that binding walks.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::{TokenId, Vocabulary};
use crate::error::{Error, Result};

/// A vocabulary prepared for binding: shared, immutable, built once per tokenizer.
#[derive(Debug)]
pub struct CompiledVocabulary {
    vocabulary: Arc<Vocabulary>,
    byte_trie: Arc<TokenTrie>,
    /// Distinguishes vocabularies in caches without hashing their contents.
    uid: u64,
    /// What binding keeps per vocabulary for every schema bound to it (the mask rows inside
    /// unconstrained JSON strings). Opaque here: a vocabulary knows nothing of binding.
    pub(crate) binding_memo: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl TryFrom<Arc<Vocabulary>> for CompiledVocabulary {
    type Error = Error;

    fn try_from(vocabulary: Arc<Vocabulary>) -> Result<Self> {
        if vocabulary.tokens_with_bytes().next().is_none() {
            return Err(Error::Vocabulary("the vocabulary has no token with bytes".into()));
        }
        let byte_trie = Arc::new(TokenTrie::build(vocabulary.tokens_with_bytes().map(|(id, b)| (b.to_vec(), id))));
        static NEXT_UID: AtomicU64 = AtomicU64::new(1);
        Ok(CompiledVocabulary {
            vocabulary,
            byte_trie,
            uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
            binding_memo: OnceLock::new(),
        })
    }
}

impl TryFrom<Vocabulary> for CompiledVocabulary {
    type Error = Error;

    fn try_from(vocabulary: Vocabulary) -> Result<Self> {
        CompiledVocabulary::try_from(Arc::new(vocabulary))
    }
}

impl CompiledVocabulary {
    /// The vocabulary this was compiled from.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.vocabulary
    }

    /// The trie of every token with bytes, over raw bytes.
    pub fn byte_trie(&self) -> &Arc<TokenTrie> {
        &self.byte_trie
    }

    /// Number of token ids a mask covers: the vocabulary's [`Vocabulary::mask_vocab_size`].
    pub fn mask_vocab_size(&self) -> usize {
        self.vocabulary.mask_vocab_size()
    }

    /// `ceil(mask_vocab_size / 32)`.
    pub fn mask_word_count(&self) -> usize {
        self.vocabulary.mask_vocab_size().div_ceil(32)
    }

    pub(crate) fn uid(&self) -> u64 {
        self.uid
    }
}

/// A trie over symbol sequences (raw bytes, or byte classes of one automaton), stored flat in
/// depth-first order so that a walk is a forward scan that skips whole subtrees at the first
/// dead symbol. Tokens with equal sequences share a node, which is how token classes arise.
#[derive(Debug, Clone, Default)]
pub struct TokenTrie {
    /// Symbol on the edge into node `i` (node 0 is the root and has none).
    symbols: Vec<u8>,
    /// Depth of node `i` (root 0).
    depths: Vec<u32>,
    /// One past the last node of `i`'s subtree.
    subtree_ends: Vec<u32>,
    /// Tokens ending at node `i` are `token_ids[token_starts[i]..token_starts[i + 1]]`.
    token_starts: Vec<u32>,
    token_ids: Vec<TokenId>,
    max_depth: usize,
    /// For node `i`, the first node from `i` on whose symbol is not of `i`'s [`Run`] kind: `i`'s
    /// subtree is one run when that is past its end. Built on first use.
    run_ends: OnceLock<Box<[u32]>>,
    /// For node `i`, the bytes on the edges below it (see [`TokenTrie::bytes_below`]). Built on
    /// first use.
    bytes_below: OnceLock<Box<[u128]>>,
}

/// Kinds of byte a pruned walk can take whole subtrees of (see [`TokenTrie::walk_pruned_taking`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// ASCII digits.
    Digits,
    /// JSON whitespace: space, tab, line feed, carriage return.
    Whitespace,
}

impl Run {
    fn of(symbol: u8) -> Option<Run> {
        match symbol {
            b'0'..=b'9' => Some(Run::Digits),
            b' ' | b'\t' | b'\n' | b'\r' => Some(Run::Whitespace),
            _ => None,
        }
    }
}

/// What [`TokenTrie::walk_copy`] does with a child's subtree.
#[derive(Clone, Copy, Debug)]
pub enum Descend<S> {
    /// Skip it: no token there is emitted.
    Skip,
    /// Step into it with this state.
    Enter(S),
    /// Emit all its tokens with this state, without walking it.
    Take(S),
}

impl TokenTrie {
    /// Builds the trie from `(sequence, token id)` pairs; sequences must not be empty.
    pub fn build(entries: impl IntoIterator<Item = (Vec<u8>, TokenId)>) -> Self {
        let mut symbols = Vec::new();
        let mut spans = Vec::new();
        for (sequence, id) in entries {
            let start = symbols.len() as u32;
            symbols.extend_from_slice(&sequence);
            spans.push((start, symbols.len() as u32, id));
        }
        TokenTrie::build_flat(&symbols, spans)
    }

    /// The trie of a vocabulary's tokens spelled in byte classes (`classes[b]` for each byte
    /// `b`): one automaton's partition, so tokens it cannot tell apart share a path. `self` is
    /// the vocabulary's byte trie; the class trie is its quotient, read off it in one pass that
    /// merges the children whose bytes fall in one class. The result is the trie
    /// [`TokenTrie::build`] makes of the same tokens spelled in classes, node for node (a node's
    /// tokens in byte-trie order rather than by id), in a few milliseconds where sorting the
    /// spelled tokens costs tens on a 128k vocabulary.
    pub(crate) fn over_classes(&self, classes: &[u8; 256]) -> TokenTrie {
        let nodes = self.symbols.len();
        let mut out = TokenTrie::default();
        // The quotient has at most as many nodes and exactly as many tokens.
        out.symbols.reserve(nodes);
        out.depths.reserve(nodes);
        out.subtree_ends.reserve(nodes);
        out.token_starts.reserve(nodes + 1);
        out.token_ids.reserve(self.token_ids.len());
        let mut groups = Vec::with_capacity(nodes);
        groups.push(0);
        // Each node's class, read once: the merge asks for it several times per node.
        let node_classes: Vec<u8> = self.symbols.iter().map(|&b| classes[b as usize]).collect();
        let mut quotient = Quotient {
            byte: self,
            node_classes: &node_classes,
            class_count: classes.iter().map(|&c| c as usize + 1).max().unwrap_or(1),
            out,
            groups,
            scratch: Vec::new(),
        };
        quotient.out.push_node(0, 0);
        quotient.out.subtree_ends.push(0);
        quotient.out.token_starts.push(0);
        quotient.merge(0, 1, 0);
        let mut out = quotient.out;
        out.token_starts.push(out.token_ids.len() as u32);
        out
    }

    /// Builds the trie from sequences stored back to back in `symbols`; each span is
    /// `(start, end, token id)`. One buffer and a sort of spans: no allocation per token.
    pub fn build_flat(symbols: &[u8], mut spans: Vec<(u32, u32, TokenId)>) -> Self {
        let text = |&(start, end, _): &(u32, u32, TokenId)| &symbols[start as usize..end as usize];
        spans.sort_unstable_by(|a, b| text(a).cmp(text(b)).then(a.2.cmp(&b.2)));
        let mut trie = TokenTrie::default();
        trie.push_node(0, 0);
        // path[d] = node index at depth d along the current sequence.
        let mut path: Vec<u32> = vec![0];
        let mut previous: &[u8] = &[];
        // (node, token) pairs in node order, since nodes are created in DFS order.
        let mut node_tokens: Vec<(u32, TokenId)> = Vec::with_capacity(spans.len());
        for span in &spans {
            let seq = text(span);
            let common = seq.iter().zip(previous).take_while(|(a, b)| a == b).count();
            path.truncate(common + 1);
            for (depth, &symbol) in seq.iter().enumerate().skip(common) {
                let index = trie.push_node(symbol, depth as u32 + 1);
                path.push(index);
            }
            node_tokens.push((*path.last().unwrap(), span.2));
            trie.max_depth = trie.max_depth.max(seq.len());
            previous = seq;
        }
        // Subtree ends: the next node at the same or a smaller depth.
        let n = trie.symbols.len();
        trie.subtree_ends = vec![n as u32; n];
        let mut open: Vec<u32> = Vec::new();
        for i in 0..n {
            while let Some(&top) = open.last() {
                if trie.depths[top as usize] >= trie.depths[i] {
                    trie.subtree_ends[top as usize] = i as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(i as u32);
        }
        // node_tokens is sorted by node: token_starts[i] = first entry of node i.
        let mut entry = 0;
        trie.token_starts.reserve(n + 1);
        for node in 0..n as u32 {
            trie.token_starts.push(entry as u32);
            while entry < node_tokens.len() && node_tokens[entry].0 == node {
                entry += 1;
            }
        }
        trie.token_starts.push(entry as u32);
        trie.token_ids = node_tokens.into_iter().map(|(_, id)| id).collect();
        trie
    }

    fn push_node(&mut self, symbol: u8, depth: u32) -> u32 {
        self.symbols.push(symbol);
        self.depths.push(depth);
        (self.symbols.len() - 1) as u32
    }

    /// Every token id the trie holds, in trie order.
    pub(crate) fn token_ids(&self) -> &[TokenId] {
        &self.token_ids
    }

    /// Nodes of the trie, the root included.
    pub fn node_count(&self) -> usize {
        self.symbols.len()
    }

    /// Length of the longest sequence, in symbols (0 for an empty trie).
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Approximate heap size, for cache budgets.
    pub fn heap_bytes(&self) -> usize {
        self.symbols.len()
            + 4 * (self.depths.len() + self.subtree_ends.len() + self.token_starts.len() + self.token_ids.len())
            + self.run_ends.get().map_or(0, |ends| 4 * ends.len())
            + self.bytes_below.get().map_or(0, |below| 16 * below.len())
    }

    /// Walks every sequence from `start` with a state that is copied rather than cloned (an
    /// automaton state, say): one slot per depth, no path kept. `step(state, symbol)` says what
    /// becomes of the child's subtree (see [`Descend`]); `emit(state, ids)` gets the tokens
    /// ending at an entered node, or every token of a taken subtree at once.
    pub fn walk_copy<S: Copy>(
        &self,
        start: S,
        mut step: impl FnMut(S, u8) -> Descend<S>,
        emit: impl FnMut(S, &[TokenId]),
    ) {
        self.walk_copy_at(start, |state, symbol, _| step(state, symbol), emit);
    }

    /// [`TokenTrie::walk_copy`], `step` also getting the child's node index (for
    /// [`TokenTrie::bytes_below`]).
    pub(crate) fn walk_copy_at<S: Copy>(
        &self,
        start: S,
        mut step: impl FnMut(S, u8, usize) -> Descend<S>,
        mut emit: impl FnMut(S, &[TokenId]),
    ) {
        let mut states: Vec<S> = vec![start; self.max_depth + 1];
        let mut i = 1;
        let n = self.symbols.len();
        while i < n {
            let depth = self.depths[i] as usize;
            let subtree_end = self.subtree_ends[i] as usize;
            match step(states[depth - 1], self.symbols[i], i) {
                Descend::Skip => i = subtree_end,
                Descend::Enter(next) => {
                    let ids = self.tokens_at(i, i + 1);
                    if !ids.is_empty() {
                        emit(next, ids);
                    }
                    states[depth] = next;
                    i += 1;
                }
                Descend::Take(next) => {
                    let ids = self.tokens_at(i, subtree_end);
                    if !ids.is_empty() {
                        emit(next, ids);
                    }
                    i = subtree_end;
                }
            }
        }
    }

    /// The tokens ending at nodes `start..end`: one run, tokens being stored in node order
    /// (`end` = `start + 1` for one node's, its subtree's end for the whole subtree's).
    fn tokens_at(&self, start: usize, end: usize) -> &[TokenId] {
        &self.token_ids[self.token_starts[start] as usize..self.token_starts[end] as usize]
    }

    /// The symbols on the edges strictly below node `i` of a byte trie, as a set of ASCII bytes:
    /// bit `b` for byte `b` in `1..128`; bit 0 stands for NUL and every byte from 128 on.
    pub(crate) fn bytes_below(&self, i: usize) -> u128 {
        let below = self.bytes_below.get_or_init(|| {
            let n = self.symbols.len();
            let bit = |symbol: u8| if (1..128).contains(&symbol) { 1u128 << symbol } else { 1 };
            let mut below = vec![0u128; n];
            // Children come after their parent, so a reverse scan has them ready.
            for i in (0..n).rev() {
                let end = self.subtree_ends[i] as usize;
                let mut child = i + 1;
                let mut set = 0;
                while child < end {
                    set |= bit(self.symbols[child]) | below[child];
                    child = self.subtree_ends[child] as usize;
                }
                below[i] = set;
            }
            below.into_boxed_slice()
        });
        below[i]
    }

    /// The [`Run`] every symbol of node `i`'s subtree, its own included, is of, if any.
    fn subtree_run(&self, i: usize) -> Option<Run> {
        let run = Run::of(self.symbols[i])?;
        let ends = self.run_ends.get_or_init(|| {
            let n = self.symbols.len();
            let mut ends = vec![n as u32; n];
            for i in (0..n.saturating_sub(1)).rev() {
                let same = Run::of(self.symbols[i]) == Run::of(self.symbols[i + 1]);
                ends[i] = if same { ends[i + 1] } else { i as u32 + 1 };
            }
            ends.into_boxed_slice()
        });
        (ends[i] >= self.subtree_ends[i]).then_some(run)
    }

    /// Walks every sequence from `start`. `step(state, symbol)` returns the next state or `None`
    /// when the symbol is dead there (the whole subtree is skipped). `emit(state, ids)` is called
    /// with the state reached at the end of each sequence that stays alive, and its token ids.
    pub fn walk<S: Clone>(&self, start: S, mut step: impl FnMut(S, u8) -> Option<S>, emit: impl FnMut(&S, &[TokenId])) {
        self.walk_pruned(start, |_, _| false, |state, _, symbol| step(state, symbol), emit);
    }

    /// [`TokenTrie::walk`], first asking `refuses(state, symbol)` whether `step` would surely
    /// return `None` there: such subtrees are skipped without copying the parent's state,
    /// which pays when states are costly to copy and most symbols are dead. `refuses` may
    /// answer false when unsure; answering true where `step` would not return `None` loses
    /// tokens. `step(state, path, symbol)` also gets the symbols from the root to the parent,
    /// so states need not keep what they read.
    pub fn walk_pruned<S: Clone>(
        &self,
        start: S,
        refuses: impl FnMut(&S, u8) -> bool,
        step: impl FnMut(S, &[u8], u8) -> Option<S>,
        emit: impl FnMut(&S, &[TokenId]),
    ) {
        self.walk_pruned_taking(start, refuses, |_, _| false, step, emit);
    }

    /// [`TokenTrie::walk_pruned`], also asking `takes(state, run)` at each child whose subtree
    /// is one [`Run`] (digits inside a number, say): true emits every token there with the
    /// parent's state, without stepping into it. Answering true where some token there would
    /// not stay alive admits it.
    pub fn walk_pruned_taking<S: Clone>(
        &self,
        start: S,
        mut refuses: impl FnMut(&S, u8) -> bool,
        mut takes: impl FnMut(&S, Run) -> bool,
        mut step: impl FnMut(S, &[u8], u8) -> Option<S>,
        mut emit: impl FnMut(&S, &[TokenId]),
    ) {
        // `states[d]`: the state after the first `d` symbols of the current path. A node's last
        // child takes its parent's state instead of a copy: nothing reads it afterwards (the
        // nodes after that child's subtree are shallower), and a state that owns its parts can
        // be stepped without copying them.
        let mut states: Vec<Option<S>> = Vec::with_capacity(self.max_depth + 1);
        states.push(Some(start));
        let mut path: Vec<u8> = Vec::with_capacity(self.max_depth);
        let mut i = 1;
        let n = self.symbols.len();
        while i < n {
            let depth = self.depths[i] as usize;
            states.truncate(depth);
            let subtree_end = self.subtree_ends[i] as usize;
            let parent = states[depth - 1].as_ref().expect("a parent's state is read before its last child");
            if refuses(parent, self.symbols[i]) {
                i = subtree_end;
                continue;
            }
            if self.subtree_run(i).is_some_and(|run| takes(parent, run)) {
                let ids = self.tokens_at(i, subtree_end);
                if !ids.is_empty() {
                    emit(parent, ids);
                }
                i = subtree_end;
                continue;
            }
            let last_child = subtree_end == n || (self.depths[subtree_end] as usize) < depth;
            let parent = if last_child { states[depth - 1].take() } else { states[depth - 1].clone() };
            path.truncate(depth - 1);
            match step(parent.expect("a parent's state is read before its last child"), &path, self.symbols[i]) {
                Some(next) => {
                    path.push(self.symbols[i]);
                    let ids = self.tokens_at(i, i + 1);
                    if !ids.is_empty() {
                        emit(&next, ids);
                    }
                    states.push(Some(next));
                    i += 1;
                }
                None => i = subtree_end,
            }
        }
    }
}

/// The state of [`TokenTrie::over_classes`]: `groups` is a stack of byte-trie nodes, each
/// class node being made from a run of it (the byte nodes its class sequence spells).
struct Quotient<'a> {
    byte: &'a TokenTrie,
    /// The class of the symbol into each byte node.
    node_classes: &'a [u8],
    class_count: usize,
    out: TokenTrie,
    groups: Vec<u32>,
    /// Room for one group while it is ordered by class.
    scratch: Vec<u32>,
}

impl Quotient<'_> {
    /// Makes the subtree of class node `node` (already pushed, with its tokens), whose byte
    /// nodes are `groups[start..end]`.
    fn merge(&mut self, start: usize, end: usize, node: usize) {
        let depth = self.out.depths[node];
        self.out.max_depth = self.out.max_depth.max(depth as usize);
        // The byte nodes' children, by class then byte order: a run per child class node.
        let children = self.groups.len();
        let subtree_ends = &self.byte.subtree_ends;
        for k in start..end {
            let parent = self.groups[k] as usize;
            let (mut child, stop) = (parent + 1, subtree_ends[parent] as usize);
            while child < stop {
                self.groups.push(child as u32);
                child = subtree_ends[child] as usize;
            }
        }
        let node_classes = self.node_classes;
        let class_of = |node: u32| node_classes[node as usize];
        // Byte order is not class order: even one node's children are ordered by class, stably
        // (a group's nodes are in increasing order, since its parents are and subtrees are
        // contiguous, so the result is ordered by class, then node): by insertion when the
        // group is small, else by a counting pass.
        let group = &mut self.groups[children..];
        if group.len() <= 32 {
            for i in 1..group.len() {
                let (node, class) = (group[i], class_of(group[i]));
                let mut j = i;
                while j > 0 && class_of(group[j - 1]) > class {
                    group[j] = group[j - 1];
                    j -= 1;
                }
                group[j] = node;
            }
        } else {
            let mut starts = [0u32; 257];
            let starts = &mut starts[..=self.class_count];
            for &node in group.iter() {
                starts[class_of(node) as usize + 1] += 1;
            }
            if starts.iter().all(|&c| c == 0 || c as usize == group.len()) {
                // One class: already in order.
            } else {
                for c in 1..starts.len() {
                    starts[c] += starts[c - 1];
                }
                self.scratch.clear();
                self.scratch.resize(group.len(), 0);
                for &node in group.iter() {
                    let slot = &mut starts[class_of(node) as usize];
                    self.scratch[*slot as usize] = node;
                    *slot += 1;
                }
                group.copy_from_slice(&self.scratch);
            }
        }
        let mut run = children;
        while run < self.groups.len() {
            let class = class_of(self.groups[run]);
            let run_end = run + self.groups[run..].iter().take_while(|&&n| class_of(n) == class).count();
            let child = self.out.push_node(class, depth + 1) as usize;
            self.out.subtree_ends.push(0);
            let first = self.out.token_ids.len();
            self.out.token_starts.push(first as u32);
            // The tokens of the run's byte nodes, in their order (not sorted by id: sorting every
            // merged node of a coarse partition costs more than the rest of the pass).
            for k in run..run_end {
                let at = self.groups[k] as usize;
                self.out.token_ids.extend_from_slice(self.byte.tokens_at(at, at + 1));
            }
            self.merge(run, run_end, child);
            run = run_end;
        }
        self.groups.truncate(children);
        self.out.subtree_ends[node] = self.out.symbols.len() as u32;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The class trie built by sorting the tokens spelled in classes.
    fn spelled_in_classes(tokens: &[(Vec<u8>, TokenId)], classes: &[u8; 256]) -> TokenTrie {
        TokenTrie::build(tokens.iter().map(|(bytes, id)| (bytes.iter().map(|&b| classes[b as usize]).collect(), *id)))
    }

    fn assert_same_trie(a: &TokenTrie, b: &TokenTrie) {
        assert_eq!(a.symbols, b.symbols, "symbols");
        assert_eq!(a.depths, b.depths, "depths");
        assert_eq!(a.subtree_ends, b.subtree_ends, "subtree ends");
        assert_eq!(a.token_starts, b.token_starts, "token starts");
        // A node's tokens in any order: the quotient lists them by byte node, not by id.
        let node_tokens = |t: &TokenTrie| -> Vec<Vec<TokenId>> {
            (0..t.node_count())
                .map(|i| {
                    let mut ids = t.tokens_at(i, i + 1).to_vec();
                    ids.sort_unstable();
                    ids
                })
                .collect()
        };
        assert_eq!(node_tokens(a), node_tokens(b), "token ids");
        assert_eq!(a.max_depth, b.max_depth, "max depth");
    }

    proptest! {
        /// Bytes from a small alphabet, so that tokens share prefixes and classes merge
        /// siblings; several tokens may spell the same bytes.
        #[test]
        fn the_quotient_of_the_byte_trie_is_the_trie_of_the_spelled_tokens(
            tokens in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"ab\"\\ 0z\x80\xff".to_vec()), 1..6),
                1..40,
            ),
            partition in proptest::collection::vec(0u8..4, 256),
        ) {
            let tokens: Vec<(Vec<u8>, TokenId)> =
                tokens.into_iter().enumerate().map(|(id, bytes)| (bytes, id as TokenId)).collect();
            let classes: [u8; 256] = partition.try_into().unwrap();
            let byte_trie = TokenTrie::build(tokens.clone());
            assert_same_trie(&byte_trie.over_classes(&classes), &spelled_in_classes(&tokens, &classes));
        }
    }

    #[test]
    fn the_quotient_matches_on_a_real_vocabulary() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/tokenizers/gpt2.tokenizer.json");
        let text = std::fs::read_to_string(path).expect("the vendored GPT-2 tokenizer");
        let model: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Token spellings as the tokenizer file writes them (byte-level characters): enough
        // for the trie's shape, which is all this compares.
        let tokens: Vec<(Vec<u8>, TokenId)> = model["model"]["vocab"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(spelling, id)| (spelling.as_bytes().to_vec(), id.as_u64().unwrap() as TokenId))
            .collect();
        let byte_trie = TokenTrie::build(tokens.clone());
        let json_like: [u8; 256] = std::array::from_fn(|b| match b as u8 {
            b'"' => 1,
            b'\\' => 2,
            b'0'..=b'9' => 3,
            b'a'..=b'z' | b'A'..=b'Z' => 4,
            0x80.. => 5,
            _ => 0,
        });
        let identity: [u8; 256] = std::array::from_fn(|b| b as u8);
        for classes in [json_like, identity, [0; 256]] {
            assert_same_trie(&byte_trie.over_classes(&classes), &spelled_in_classes(&tokens, &classes));
        }
    }

    #[test]
    fn walk_visits_live_tokens_and_prunes_dead_subtrees() {
        let trie = TokenTrie::build(vec![
            (b"ab".to_vec(), 0),
            (b"a".to_vec(), 1),
            (b"abc".to_vec(), 2),
            (b"b".to_vec(), 3),
            (b"ab".to_vec(), 4),
            (b"ba".to_vec(), 5),
        ]);
        // Only sequences over {a, b} that never contain "bb" and never "c" are alive.
        let mut seen = Vec::new();
        trie.walk(
            0u8,
            |prev, s| match s {
                b'c' => None,
                b'b' if prev == b'b' => None,
                _ => Some(s),
            },
            |_, ids| seen.extend_from_slice(ids),
        );
        seen.sort();
        assert_eq!(seen, vec![0, 1, 3, 4, 5]);
        assert_eq!(trie.max_depth(), 3);
    }

    #[test]
    fn copy_walk_takes_whole_subtrees_with_the_state_at_their_root() {
        let trie = TokenTrie::build(vec![
            (b"ab".to_vec(), 0),
            (b"a\"x".to_vec(), 1),
            (b"a\"".to_vec(), 2),
            (b"\"".to_vec(), 3),
            (b"\"\"c".to_vec(), 4),
            (b"c".to_vec(), 5),
            (b"bc".to_vec(), 6),
            (b"b".to_vec(), 7),
        ]);
        // Inside a "string" of a and b: a quote closes it (its subtree is taken whole, with the
        // depth of the close), c is dead.
        let mut steps = 0;
        let mut seen = Vec::new();
        trie.walk_copy(
            (0u32, false),
            |(depth, _), symbol| {
                steps += 1;
                match symbol {
                    b'"' => Descend::Take((depth + 1, true)),
                    b'c' => Descend::Skip,
                    _ => Descend::Enter((depth + 1, false)),
                }
            },
            |(depth, closed), ids| seen.extend(ids.iter().map(|&id| (id, depth, closed))),
        );
        seen.sort();
        assert_eq!(seen, vec![(0, 2, false), (1, 2, true), (2, 2, true), (3, 1, true), (4, 1, true), (7, 1, false)]);
        // Nothing below a taken or skipped node is stepped: a, ab, a", ", c, b, bc.
        assert_eq!(steps, 7);
    }

    #[test]
    fn pruned_walk_takes_only_subtrees_of_one_run() {
        let trie = TokenTrie::build(vec![
            (b"1".to_vec(), 0),
            (b"12".to_vec(), 1),
            (b"1a".to_vec(), 2),
            (b"3".to_vec(), 3),
            (b"34".to_vec(), 4),
            (b" ".to_vec(), 5),
            (b" \n".to_vec(), 6),
            (b"a".to_vec(), 7),
        ]);
        let (mut taken, mut stepped) = (Vec::new(), Vec::new());
        trie.walk_pruned_taking(
            (),
            |_, _| false,
            |_, run| {
                taken.push(run);
                true
            },
            |_, path, symbol| {
                stepped.push([path, &[symbol]].concat());
                Some(())
            },
            |_, _| {},
        );
        // " " and "3" head runs of whitespace and of digits; "1" does not ("1a"), so it is
        // stepped into and its digit child "12" is taken.
        assert_eq!(taken, vec![Run::Whitespace, Run::Digits, Run::Digits]);
        assert_eq!(stepped, vec![b"1".to_vec(), b"1a".to_vec(), b"a".to_vec()]);
    }

    #[test]
    fn bytes_below_a_node_are_its_descendants_edges() {
        let trie = TokenTrie::build(vec![
            (b"ab".to_vec(), 0),
            (b"abc".to_vec(), 1),
            (b"a\xc3\xa9".to_vec(), 2),
            (b"d".to_vec(), 3),
        ]);
        let bit = |b: u8| 1u128 << b;
        // Nodes in order: root, a, ab, abc, a\xc3, a\xc3\xa9, d.
        assert_eq!(trie.bytes_below(0), bit(b'a') | bit(b'b') | bit(b'c') | bit(b'd') | 1);
        assert_eq!(trie.bytes_below(1), bit(b'b') | bit(b'c') | 1);
        assert_eq!(trie.bytes_below(2), bit(b'c'));
        assert_eq!(trie.bytes_below(3), 0);
        assert_eq!(trie.bytes_below(4), 1);
        assert_eq!(trie.bytes_below(6), 0);
    }

    #[test]
    fn dead_first_symbol_skips_whole_subtree() {
        let trie = TokenTrie::build(vec![(b"xa".to_vec(), 0), (b"xb".to_vec(), 1), (b"y".to_vec(), 2)]);
        let mut steps = 0;
        let mut seen = Vec::new();
        trie.walk(
            (),
            |_, s| {
                steps += 1;
                (s != b'x').then_some(())
            },
            |_, ids| seen.extend_from_slice(ids),
        );
        assert_eq!(seen, vec![2]);
        assert_eq!(steps, 2, "the subtree under a dead 'x' must not be visited");
    }
}
