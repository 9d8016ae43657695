//! Binding: an executable joined to a vocabulary, with one packed mask row per automaton state.
//!
//! Tokens are grouped by the sequence of byte classes they spell under the automaton (tokens
//! with equal sequences behave identically), those sequences are put in a flat trie, and each
//! state's row is one pruned walk of that trie. Rows are deduplicated; under the lazy policy a
//! row is computed on first use behind a per-state once-cell.

mod closing;
mod composite;
mod named_keys;
mod pattern_texts;
mod rows;
mod value_starts;
mod walk;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::automata::{json, AutomatonId, ByteDfa, StateId, DEAD};
use crate::cache::TrieCache;
use crate::error::Result;
use crate::executable::{Backend, ExecutableSchema};
use crate::mask;
use crate::options::BindPolicy;
use crate::structured::{
    CodePointCounter, CountedString, DocumentMatcher, FiniteKey, KeyCloses, StructuredProgram, ValueCloses,
};
use crate::vocabulary::{CompiledVocabulary, Descend, TokenId, TokenTrie, Vocabulary};

pub(crate) use closing::{KeyTailMemo, StringMemo};
pub(crate) use composite::CompositeMasks;
pub(crate) use rows::RowTable;

use closing::{after_key_quote, AfterKeyQuote, FirstQuoteCloses, QuoteTails};
use pattern_texts::PatternTextSplits;
use value_starts::ValueStarts;
use walk::{KeyClosing, WalkState};

/// How a session's mask is produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaskRoute {
    /// A precomputed row of the bound DFA, copied (regular schemas).
    Row,
    /// Inside a string on the structured arm: precomputed rows decide the tokens that stay in
    /// the string, a walk of the tokens that close it decides the rest.
    StringRows,
    /// Where a member's or item's value starts on the structured arm: precomputed rows per
    /// value schema decide the tokens that stay inside the value, a walk of the tokens that go
    /// past its end decides the rest.
    ValueRows,
    /// A pruned walk of the token trie, stepping the structured matcher byte by byte.
    TrieWalk,
    /// After EOS: only EOS.
    Finished,
}

/// What writing one mask took: its route and how many token-trie nodes the matcher was stepped
/// through (0 for rows). A count, independent of the machine: see [`crate::Session::mask_cost`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MaskCost {
    /// How the mask was written.
    pub route: MaskRoute,
    /// Token-trie nodes the structured matcher was stepped through: the whole pruned walk under
    /// [`MaskRoute::TrieWalk`], the walk of the string-closing tokens under
    /// [`MaskRoute::StringRows`], of the tokens past the value under [`MaskRoute::ValueRows`]; 0
    /// for [`MaskRoute::Row`] and [`MaskRoute::Finished`].
    pub trie_steps: usize,
}

/// A schema bound to a vocabulary: immutable, `Send + Sync`, cheap to clone; sessions share it.
#[derive(Debug, Clone)]
pub struct BoundSchema {
    inner: Arc<BoundInner>,
}

#[derive(Debug)]
pub(crate) struct BoundInner {
    pub(crate) executable: Arc<ExecutableSchema>,
    pub(crate) vocabulary: Arc<Vocabulary>,
    pub(crate) word_count: usize,
    pub(crate) policy: BindPolicy,
    pub(crate) kind: BoundKind,
}

/// The arms, bound: a session holds the one its schema compiled to, so no code asks an
/// arm for what only another has.
#[derive(Debug)]
pub(crate) enum BoundKind {
    Regular(Arc<RegularMasks>),
    Structured(Arc<StructuredMasks>),
    /// A template with JSON parts on the structured arm.
    Composite(Arc<CompositeMasks>),
}

/// A regular schema bound: one row per DFA state, computed once. Rows walk the vocabulary's
/// byte trie until the class trie of the automaton's partition pays for itself (as string
/// splits do, see [`WALKS_PER_CLASS_TRIE`]), then the class trie: binding builds nothing
/// large, and an automaton that reads a few states never builds it.
#[derive(Debug)]
pub(crate) struct RegularMasks {
    pub(crate) dfa: Arc<ByteDfa>,
    byte_trie: Arc<TokenTrie>,
    /// Set when a cache holds it at bind time, or once the byte-trie walks have cost as much.
    class_trie: OnceLock<Arc<TokenTrie>>,
    /// Byte-trie nodes stepped by rows computed before the class trie.
    walked: AtomicU64,
    tries: Arc<TrieCache>,
    vocabulary_uid: u64,
    rows: RowTable,
    vocabulary: Arc<Vocabulary>,
    word_count: usize,
}

/// A structured schema bound: masks computed per step by walking the byte trie with the
/// matcher, except inside strings, where precomputed rows serve every token that stays in the
/// string.
#[derive(Debug)]
pub(crate) struct StructuredMasks {
    pub(crate) program: Arc<StructuredProgram>,
    trie: Arc<TokenTrie>,
    strings: StringRows,
    values: Box<ValueStarts>,
    vocabulary: Arc<Vocabulary>,
    word_count: usize,
}

/// Inside a string, a token either stays in it (then only the string's automaton decides) or
/// closes it and goes on in the enclosing value (few tokens: those holding a quote). For each
/// (string automaton, state) the first set is a precomputed row, the second a list of tokens the
/// matcher checks one by one.
#[derive(Debug)]
pub(crate) struct StringRows {
    vocabulary_uid: u64,
    /// Bytes of the vocabulary's longest token: a bound on the code points one token adds.
    longest_token: u64,
    tries: Arc<TrieCache>,
    /// Per byte partition of this schema's string automata: splits asked so far, and the class
    /// trie once built, kept for the schema's lifetime whatever the compiler's trie budget.
    class_tries: Mutex<HashMap<[u8; 256], PartitionUse>>,
    splits: Mutex<HashMap<(AutomatonId, StateId), Arc<StringSplit>>>,
    key_tails: KeyTailMemo,
    shared: Arc<SharedStringRows>,
}

/// How much of the byte trie the string splits over one byte partition have walked in a bound
/// schema, and the partition's class trie once built.
#[derive(Debug, Default)]
struct PartitionUse {
    walked: u64,
    trie: Option<Arc<TokenTrie>>,
}

/// The splits of the process-wide JSON string automaton ([`json::string_automaton`]) over one
/// vocabulary: every schema bound to the vocabulary reads unconstrained strings and keys there.
#[derive(Debug, Default)]
struct SharedStringRows {
    trie: OnceLock<Arc<TokenTrie>>,
    tails: OnceLock<QuoteTails>,
    /// The tails that may follow a key's closing quote alone (see [`KeyTailMemo`]).
    key_tails: OnceLock<QuoteTails>,
    splits: Mutex<HashMap<StateId, Arc<StringSplit>>>,
    /// Tokens split for `format: "regex"` strings.
    pattern_texts: PatternTextSplits,
    /// The tokens with bytes and the code points each counts inside a string (from between
    /// characters), most first: near a counted string's bound only those with the most are
    /// checked one by one.
    most_code_points_first: OnceLock<Vec<(u32, TokenId)>>,
    /// `at_most_code_points[k]`: the tokens with bytes that count at most `k` code points, and
    /// those without bytes, as masks (made on first use, every level at once). Near a bound a
    /// string keeps the tokens that fit with one AND instead of clearing the longer ones bit by
    /// bit, a whole vocabulary's worth.
    at_most_code_points: OnceLock<Vec<Box<[u32]>>>,
}

/// The room left up to which [`SharedStringRows::at_most_code_points`] keeps a mask of the
/// tokens that fit; with more left, the few tokens longer than it are cleared one by one.
const AT_MOST_CODE_POINT_LEVELS: usize = 64;

impl SharedStringRows {
    fn most_code_points_first(&self, vocabulary: &Vocabulary) -> &[(u32, TokenId)] {
        self.most_code_points_first.get_or_init(|| {
            let mut tokens: Vec<(u32, TokenId)> = vocabulary
                .tokens_with_bytes()
                .map(|(id, bytes)| {
                    let mut counter = CodePointCounter::default();
                    bytes.iter().for_each(|&b| counter.feed(b));
                    (counter.count as u32, id)
                })
                .collect();
            tokens.sort_unstable_by(|a, b| b.cmp(a));
            tokens
        })
    }

    /// Clears in `out` every token with bytes that counts more than `left` code points.
    fn clear_longer_than(&self, vocabulary: &Vocabulary, left: u64, out: &mut [u32]) {
        let tokens = self.most_code_points_first(vocabulary);
        let levels = self.at_most_code_points.get_or_init(|| {
            let mut fitting = vec![0u32; out.len()];
            // Tokens without bytes are not strings' to decide: kept as they are.
            for id in 0..(out.len() * 32) as TokenId {
                if vocabulary.token_bytes(id).is_none() {
                    mask::set_bit(&mut fitting, id);
                }
            }
            let mut fewest_first = tokens.iter().rev().peekable();
            (0..AT_MOST_CODE_POINT_LEVELS as u32)
                .map(|level| {
                    while let Some(&(_, id)) = fewest_first.next_if(|&&(code_points, _)| code_points <= level) {
                        mask::set_bit(&mut fitting, id);
                    }
                    fitting.clone().into_boxed_slice()
                })
                .collect()
        });
        match levels.get(left as usize) {
            Some(fitting) => out.iter_mut().zip(fitting.iter()).for_each(|(word, keep)| *word &= keep),
            None => {
                for &(_, id) in tokens.iter().take_while(|&&(code_points, _)| u64::from(code_points) > left) {
                    mask::clear_bit(out, id);
                }
            }
        }
    }

    /// The tokens with bytes that count more than `short` and at most `left` code points.
    fn counting_between(&self, vocabulary: &Vocabulary, short: u64, left: u64) -> &[(u32, TokenId)] {
        let tokens = self.most_code_points_first(vocabulary);
        let start = tokens.partition_point(|&(code_points, _)| u64::from(code_points) > left);
        let end = tokens.partition_point(|&(code_points, _)| u64::from(code_points) > short);
        &tokens[start..end.max(start)]
    }
}

#[derive(Debug)]
pub(crate) struct StringSplit {
    /// Tokens that keep the string open.
    inside: Vec<u32>,
    /// Tokens that close the string, possibly continuing after it, as a byte trie: made on
    /// first use (see [`StringSplit::closing`]).
    closing: OnceLock<TokenTrie>,
    /// The closing tokens that close it at their first quote, by the state the quote leads to.
    first_quote: Vec<FirstQuoteCloses>,
    /// The other closing tokens (an escaped quote comes first), as a byte trie.
    late: TokenTrie,
    /// The closing tokens by their bytes before the quote, for masks inside keys; made on first
    /// use.
    by_content: OnceLock<ContentCloses>,
    /// The tokens of `first_quote` by their bytes before the quote, for masks inside value
    /// strings whose content decides which tracks go on (see [`ValueCloses`]); made on first use.
    by_value_content: OnceLock<Vec<ContentGroup>>,
}

impl StringSplit {
    /// Every token that closes the string, as a byte trie, for the walk that steps the matcher
    /// through each. The routes that group closing tokens by what precedes or follows their
    /// quote read `first_quote` and `late` alone, so the trie is built only where one walks it.
    fn closing(&self, vocabulary: &Vocabulary) -> &TokenTrie {
        self.closing.get_or_init(|| {
            let first_quote = self.first_quote.iter().flat_map(|close| close.tokens.iter());
            let ids = first_quote.chain(self.late.token_ids());
            let tokens = ids.map(|&id| (vocabulary.token_bytes(id).expect("closing tokens have bytes").to_vec(), id));
            TokenTrie::build(tokens.collect::<Vec<_>>())
        })
    }
}

/// The closing tokens of a string split as masks inside keys read them (see [`KeyCloses`]);
/// those with something else than whitespace or a colon right after the quote are left out,
/// as no key's close admits them.
#[derive(Debug)]
struct ContentCloses {
    /// Tokens that close at their first quote with no `,` or `}` after it, by their bytes
    /// before the quote.
    groups: Vec<ContentGroup>,
    /// The other closing tokens that a key's close may admit, as a byte trie: they may reach
    /// past the member's value, or close at a later quote and hold more after it.
    walked: TokenTrie,
}

/// The closing tokens with the same bytes before their quote.
#[derive(Debug, Default)]
struct ContentGroup {
    content: Vec<u8>,
    /// Tokens that end at the quote: admitted wherever the close is.
    bare: Vec<TokenId>,
    /// Tokens with whitespace, a colon or a value's start after it.
    tailed: Vec<TokenId>,
}

impl ContentCloses {
    fn new(vocabulary: &Vocabulary, split: &StringSplit, string: &ByteDfa, state: StateId) -> ContentCloses {
        let mut groups: HashMap<&[u8], ContentGroup> = HashMap::new();
        let mut walked = Vec::new();
        let first_quote = split.first_quote.iter().flat_map(|close| &close.tokens);
        for &id in first_quote.chain(split.late.token_ids()) {
            let bytes = vocabulary.token_bytes(id).expect("closing tokens have bytes");
            // Where the string closes: the first quote, or a later one after an escaped quote.
            let mut at = state;
            let close = bytes
                .iter()
                .position(|&b| {
                    at = string.next(at, b);
                    string.is_accepting(at)
                })
                .expect("closing tokens close the string");
            let (content, tail) = (&bytes[..close], &bytes[close + 1..]);
            match after_key_quote(tail) {
                AfterKeyQuote::Refused => {}
                AfterKeyQuote::Alone if tail.is_empty() => groups.entry(content).or_default().bare.push(id),
                // The answers for tails are by the first quote's tail.
                AfterKeyQuote::Alone if !content.contains(&b'"') => groups.entry(content).or_default().tailed.push(id),
                AfterKeyQuote::Alone | AfterKeyQuote::Member => walked.push((bytes.to_vec(), id)),
            }
        }
        let mut groups: Vec<ContentGroup> =
            groups.into_iter().map(|(content, group)| ContentGroup { content: content.to_vec(), ..group }).collect();
        groups.sort_unstable_by(|a, b| a.content.cmp(&b.content));
        ContentCloses { groups, walked: TokenTrie::build(walked) }
    }

    /// The tokens that close a string split at their first quote, by their bytes before it:
    /// tokens that end at the quote are `bare`, the others `tailed`.
    fn of_values(vocabulary: &Vocabulary, split: &StringSplit) -> Vec<ContentGroup> {
        let mut groups: HashMap<&[u8], ContentGroup> = HashMap::new();
        for &id in split.first_quote.iter().flat_map(|close| &close.tokens) {
            let bytes = vocabulary.token_bytes(id).expect("closing tokens have bytes");
            let quote = bytes.iter().position(|&b| b == b'"').expect("closing tokens hold a quote");
            let group = groups.entry(&bytes[..quote]).or_default();
            match quote + 1 == bytes.len() {
                true => group.bare.push(id),
                false => group.tailed.push(id),
            }
        }
        groups.into_iter().map(|(content, group)| ContentGroup { content: content.to_vec(), ..group }).collect()
    }
}

impl BoundSchema {
    pub(crate) fn bind(
        executable: Arc<ExecutableSchema>,
        vocabulary: &CompiledVocabulary,
        policy: BindPolicy,
        eager_table_bytes: usize,
        tries: Arc<TrieCache>,
    ) -> Result<BoundSchema> {
        let word_count = vocabulary.mask_word_count();
        let adaptive = |states: usize| match policy {
            BindPolicy::Adaptive if states.saturating_mul(word_count * 4) <= eager_table_bytes => BindPolicy::Eager,
            BindPolicy::Adaptive => BindPolicy::Lazy,
            fixed => fixed,
        };
        let (kind, policy) = match executable.backend() {
            Backend::Regular(dfa) => {
                let masks = RegularMasks::new(Arc::clone(dfa), vocabulary, &tries);
                (BoundKind::Regular(Arc::new(masks)), adaptive(dfa.state_count()))
            }
            Backend::Structured(program) => (
                BoundKind::Structured(Arc::new(StructuredMasks::new(Arc::clone(program), vocabulary, &tries))),
                BindPolicy::Lazy,
            ),
            Backend::Composite(program) => {
                let outer = RegularMasks::new(Arc::clone(&program.dfa), vocabulary, &tries);
                let holes = program
                    .holes
                    .iter()
                    .map(|hole| StructuredMasks::new(Arc::clone(&hole.program), vocabulary, &tries))
                    .collect();
                let masks = CompositeMasks::new(
                    Arc::clone(program),
                    outer,
                    holes,
                    Arc::clone(vocabulary.byte_trie()),
                    Arc::clone(vocabulary.vocabulary()),
                    word_count,
                )?;
                (BoundKind::Composite(Arc::new(masks)), BindPolicy::Lazy)
            }
        };
        let inner =
            BoundInner { executable, vocabulary: Arc::clone(vocabulary.vocabulary()), word_count, policy, kind };
        if let BoundKind::Regular(masks) = &inner.kind {
            if policy == BindPolicy::Eager {
                for state in 1..masks.dfa.state_count() as StateId {
                    masks.row(state);
                }
            }
        }
        Ok(BoundSchema { inner: Arc::new(inner) })
    }

    pub(crate) fn from_inner(inner: Arc<BoundInner>) -> Self {
        BoundSchema { inner }
    }

    /// The shared state sessions read.
    pub(crate) fn inner(&self) -> &Arc<BoundInner> {
        &self.inner
    }

    /// `ceil(mask_vocab_size / 32)`.
    pub fn mask_word_count(&self) -> usize {
        self.inner.word_count
    }

    /// `4 * mask_word_count()`.
    pub fn mask_byte_count(&self) -> usize {
        4 * self.mask_word_count()
    }

    /// Token ids a mask covers: the vocabulary's mask width (see
    /// [`Vocabulary::mask_vocab_size`](crate::Vocabulary::mask_vocab_size)).
    pub fn mask_vocab_size(&self) -> usize {
        self.inner.vocabulary.mask_vocab_size()
    }

    /// The vocabulary this schema is bound to.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.inner.vocabulary
    }

    /// The vocabulary-independent executable this binding was made from.
    pub fn executable(&self) -> &Arc<ExecutableSchema> {
        &self.inner.executable
    }

    /// The policy in force after `Adaptive` chose (`Eager` or `Lazy`; structured schemas compute
    /// masks per step and report `Lazy`).
    pub fn effective_policy(&self) -> BindPolicy {
        self.inner.policy
    }

    /// Rows computed so far and distinct rows stored (after deduplication).
    pub fn row_stats(&self) -> (usize, usize) {
        match &self.inner.kind {
            BoundKind::Regular(masks) => masks.rows.stats(),
            BoundKind::Structured(_) => (0, 0),
            BoundKind::Composite(masks) => masks.outer_row_stats(),
        }
    }

    /// Nodes of the trie masks walk (for regular schemas, distinct class-sequence prefixes).
    pub fn class_trie_nodes(&self) -> usize {
        match &self.inner.kind {
            BoundKind::Regular(masks) => masks.class_trie().node_count(),
            BoundKind::Structured(masks) => masks.trie.node_count(),
            BoundKind::Composite(masks) => masks.outer_trie_nodes(),
        }
    }
}

impl BoundInner {
    /// Sets the EOS bits in `row`.
    pub(crate) fn set_eos(&self, row: &mut [u32]) {
        set_eos(&self.vocabulary, row);
    }
}

impl RegularMasks {
    fn new(dfa: Arc<ByteDfa>, vocabulary: &CompiledVocabulary, tries: &Arc<TrieCache>) -> RegularMasks {
        let class_trie = OnceLock::new();
        if let Some(trie) = tries.cached_class_trie(vocabulary.uid(), dfa.byte_classes()) {
            let _ = class_trie.set(trie);
        }
        let rows = RowTable::new(dfa.state_count());
        RegularMasks {
            dfa,
            byte_trie: Arc::clone(vocabulary.byte_trie()),
            class_trie,
            walked: AtomicU64::new(0),
            tries: Arc::clone(tries),
            vocabulary_uid: vocabulary.uid(),
            rows,
            vocabulary: Arc::clone(vocabulary.vocabulary()),
            word_count: vocabulary.mask_word_count(),
        }
    }

    /// The class trie of the automaton's partition, built now if it is not yet.
    pub(crate) fn class_trie(&self) -> &Arc<TokenTrie> {
        self.class_trie
            .get_or_init(|| self.tries.class_trie(self.vocabulary_uid, &self.byte_trie, self.dfa.byte_classes()))
    }

    /// The class trie once it pays: built, cached, or bought now that the byte-trie walks have
    /// cost about as much as building it.
    fn paid_class_trie(&self) -> Option<&Arc<TokenTrie>> {
        if let Some(trie) = self.class_trie.get() {
            return Some(trie);
        }
        let budget = WALKS_PER_CLASS_TRIE * self.byte_trie.node_count() as u64;
        (self.walked.load(Ordering::Relaxed) > budget).then(|| self.class_trie())
    }

    /// The packed row of a regular `state` (EOS bits included when the state accepts).
    pub(crate) fn row(&self, state: StateId) -> &[u32] {
        self.rows.get_or_compute(state, || {
            let mut row = vec![0u32; self.word_count];
            if state == DEAD {
                return row;
            }
            let mut admit = |ids: &[TokenId]| {
                for &id in ids {
                    mask::set_bit(&mut row, id);
                }
            };
            match self.paid_class_trie() {
                Some(trie) => self.walk_classes(trie, state, &mut admit),
                None => {
                    let walked = self.walk_bytes(state, &mut admit);
                    self.walked.fetch_add(walked, Ordering::Relaxed);
                }
            }
            if self.dfa.is_accepting(state) {
                set_eos(&self.vocabulary, &mut row);
            }
            row
        })
    }

    fn walk_classes(&self, trie: &TokenTrie, state: StateId, admit: &mut impl FnMut(&[TokenId])) {
        let dfa = &self.dfa;
        trie.walk_copy(
            state,
            |s, class| match dfa.next_class(s, class) {
                DEAD => Descend::Skip,
                next => Descend::Enter(next),
            },
            |_, ids| admit(ids),
        );
    }

    /// The row's walk on the byte trie; returns the nodes stepped. A subtree whose bytes all
    /// loop on the state it is entered in is admitted whole (free text in a string loops on
    /// most ASCII), so the walk goes down only where other bytes are.
    fn walk_bytes(&self, state: StateId, admit: &mut impl FnMut(&[TokenId])) -> u64 {
        let (dfa, trie) = (&self.dfa, &self.byte_trie);
        let mut loops = LoopingBytes::new(dfa);
        let mut walked = 0u64;
        trie.walk_copy_at(
            state,
            |s, byte, node| {
                walked += 1;
                match dfa.next(s, byte) {
                    DEAD => Descend::Skip,
                    next if loops.below(trie, node, next) => Descend::Take(next),
                    next => Descend::Enter(next),
                }
            },
            |_, ids| admit(ids),
        );
        walked
    }
}

impl StructuredMasks {
    fn new(
        program: Arc<StructuredProgram>,
        vocabulary: &CompiledVocabulary,
        tries: &Arc<TrieCache>,
    ) -> StructuredMasks {
        StructuredMasks {
            program,
            trie: Arc::clone(vocabulary.byte_trie()),
            strings: StringRows {
                vocabulary_uid: vocabulary.uid(),
                longest_token: vocabulary
                    .vocabulary()
                    .tokens_with_bytes()
                    .map(|(_, bytes)| bytes.len() as u64)
                    .max()
                    .unwrap_or(0),
                tries: Arc::clone(tries),
                class_tries: Mutex::new(HashMap::new()),
                splits: Mutex::new(HashMap::new()),
                key_tails: KeyTailMemo::default(),
                shared: shared_string_rows(vocabulary),
            },
            values: Box::default(),
            vocabulary: Arc::clone(vocabulary.vocabulary()),
            word_count: vocabulary.mask_word_count(),
        }
    }

    /// Writes the mask of a structured position; says which route it took and how many
    /// token-trie nodes the matcher was stepped through (a counter, not a timing).
    /// `memo` is shared with the session's forks until one of them changes it; `tokens` is the
    /// session's committed-token count.
    pub(crate) fn mask(
        &self,
        matcher: &DocumentMatcher,
        memo: &Mutex<Arc<StringMemo>>,
        tokens: usize,
        out: &mut [u32],
    ) -> MaskCost {
        self.mask_adjusted(matcher, memo, tokens, out, &|_| {})
    }

    /// [`StructuredMasks::mask`], with `adjust` applied to the mask before EOS bits are set
    /// and before the memo keeps it: a mask the memo serves again is the adjusted one. A
    /// template's JSON part adjusts the tokens that run past the value's end.
    pub(crate) fn mask_adjusted(
        &self,
        matcher: &DocumentMatcher,
        memo: &Mutex<Arc<StringMemo>>,
        tokens: usize,
        out: &mut [u32],
        adjust: &dyn Fn(&mut [u32]),
    ) -> MaskCost {
        let StructuredMasks { program, trie, strings, values, .. } = self;
        let graph = &program.graph;
        let slack = strings.longest_token;
        let mut trie_steps = 0;
        let contexts = matcher.string_contexts(graph, slack);
        let near_bound = match contexts {
            Some(_) => None,
            None => matcher.counted_context().and_then(|c| Some((c, c.open_text()?))),
        };
        let route = match contexts {
            None if near_bound.is_some() => {
                let (counted, at) = near_bound.expect("checked");
                trie_steps += self.counted_mask(matcher, counted, at, out);
                adjust(out);
                MaskRoute::StringRows
            }
            Some(contexts) => {
                // Inside strings: each track's automaton decides the tokens that stay inside
                // (their union is admitted); the tokens that close a string are walked from it.
                let mut shared = memo.lock().unwrap_or_else(|e| e.into_inner());
                let forgotten = matcher.forgotten_string_leaves();
                if let Some(leaves) = &forgotten {
                    if let Some(mask) = shared.mask_at(leaves) {
                        out.copy_from_slice(mask);
                        return MaskCost { route: MaskRoute::StringRows, trie_steps };
                    }
                }
                let memo = Arc::make_mut(&mut shared);
                if let Some(leaves) = &forgotten {
                    memo.enter(leaves, tokens);
                }
                // A value string every track reads alike: see `closing`.
                let keys = matcher.key_closes(graph);
                if let ([(string, state)], Some(keys)) = (&contexts[..], keys) {
                    let split = self.string_split(strings, string, *state);
                    out.copy_from_slice(&split.inside);
                    trie_steps += self.close_keys(matcher, keys, &split, string, *state, out);
                } else if let ([(string, state)], true) = (&contexts[..], matcher.closing_forgets_content(graph)) {
                    let split = self.string_split(strings, string, *state);
                    out.copy_from_slice(&split.inside);
                    trie_steps += self.close_forgetting(matcher, &split, string, *state, memo, out);
                } else if let Some(closes) = matcher.value_closes() {
                    let memo = forgotten.is_some().then_some(&mut *memo);
                    trie_steps += self.close_values(matcher, &closes, &contexts, memo, out);
                } else {
                    out.fill(0);
                    for &(string, state) in &contexts {
                        let split = self.string_split(strings, string, state);
                        for (word, inside) in out.iter_mut().zip(split.inside.iter()) {
                            *word |= inside;
                        }
                        // The closing tokens, walked as a trie from inside the string: tokens that
                        // share the bytes up to the quote replay them on the matcher once.
                        let closing = split.closing(&self.vocabulary);
                        trie_steps += self.walk_closing(closing, matcher, (string, state), None, out);
                    }
                }
                adjust(out);
                if forgotten.is_some() {
                    // Inside a string the matcher does not accept: the mask holds no EOS bit.
                    debug_assert!(!matcher.is_accepting());
                    memo.keep_mask(out);
                }
                MaskRoute::StringRows
            }
            None => {
                let value_rows = matcher
                    .value_start(graph, slack)
                    .and_then(|nodes| values.rows(graph, &self.vocabulary, trie, self.word_count, &nodes));
                let finite_keys = || matcher.finite_keys(graph);
                let route = match value_rows.ok_or_else(finite_keys) {
                    Ok(rows) => {
                        out.copy_from_slice(&rows.inside);
                        trie_steps += self.walk(&rows.beyond, WalkState::enter(graph, slack, matcher.clone()), out);
                        MaskRoute::ValueRows
                    }
                    Err(Some(keys)) => {
                        trie_steps += self.finite_key_mask(matcher, &keys, out);
                        MaskRoute::StringRows
                    }
                    Err(None) if matcher.syntax_context().and_then(|s| s.plain_context()).is_some() => {
                        // In a pattern where plain tokens are taken alike: those are one set, the
                        // others are walked.
                        let string = matcher.syntax_context().expect("checked");
                        let context = string.plain_context().expect("checked");
                        let split = strings.shared.pattern_texts.get(context, &self.vocabulary, self.word_count);
                        out.copy_from_slice(&split.plain);
                        trie_steps += self.walk(&split.rest, WalkState::in_syntax(matcher, string), out);
                        MaskRoute::StringRows
                    }
                    Err(None) => match matcher.unique_string_items(graph) {
                        Some(items) => {
                            // Inside string items compared with the items before: read as
                            // finite keys are.
                            let keys: Vec<_> = items.iter().map(|item| item.as_key()).collect();
                            trie_steps += self.finite_key_mask(matcher, &keys, out);
                            MaskRoute::StringRows
                        }
                        None => {
                            // One pruned walk of the byte trie. The matcher is cloned at each
                            // node, except inside strings, where the string's automaton alone
                            // decides until it closes.
                            out.fill(0);
                            let closing = KeyClosing {
                                memo: &strings.key_tails,
                                tails: strings
                                    .shared
                                    .key_tails
                                    .get_or_init(|| QuoteTails::after_keys(&self.vocabulary)),
                            };
                            let start = WalkState::enter_closing(graph, slack, matcher.clone(), Some(closing));
                            trie_steps += self.walk(trie, start, out);
                            MaskRoute::TrieWalk
                        }
                    },
                };
                adjust(out);
                route
            }
        };
        if matcher.is_accepting() {
            self.set_eos(out);
        }
        MaskCost { route, trie_steps }
    }

    /// The mask inside a counted string near its bound (see [`CountedString::open_text`]):
    /// the tokens its automaton keeps inside, less the long ones that leave too little room to
    /// close, then the closing tokens walked on the matcher. Returns the trie nodes stepped.
    fn counted_mask(
        &self,
        matcher: &DocumentMatcher,
        counted: &CountedString,
        (texts, state): (&Arc<ByteDfa>, StateId),
        out: &mut [u32],
    ) -> usize {
        let split = self.string_split(&self.strings, texts, state);
        out.copy_from_slice(&split.inside);
        // Between escapes a token adds its code points: those of at most `short` leave room to
        // close, those of more than `left` none. Inside an escape every token is read.
        let short = match counted.between_escapes() {
            true => counted.spare().unwrap_or(u64::MAX),
            false => 0,
        };
        let left = counted.code_points_left().unwrap_or(u64::MAX);
        let shared = &self.strings.shared;
        if left < u64::MAX {
            shared.clear_longer_than(&self.vocabulary, left, out);
        }
        for &(_, id) in shared.counting_between(&self.vocabulary, short, left) {
            let bytes = self.vocabulary.token_bytes(id).expect("the list holds tokens with bytes");
            if mask::get_bit(out, id) && !counted.stays_inside(bytes) {
                mask::clear_bit(out, id);
            }
        }
        let closing = split.closing(&self.vocabulary);
        self.walk_closing(closing, matcher, (texts, state), None, out)
    }

    /// Walks `trie` from `start`, admitting into `out` the tokens the walk reaches alive.
    /// Returns the trie nodes stepped.
    fn walk(&self, trie: &TokenTrie, start: WalkState, out: &mut [u32]) -> usize {
        let StructuredMasks { program, strings, .. } = self;
        let (graph, slack) = (&program.graph, strings.longest_token);
        let mut steps = 0;
        trie.walk_pruned_taking(
            start,
            |state, byte| state.refuses(graph, byte),
            |state, run| state.takes(run),
            |state, path, byte| {
                steps += 1;
                state.step(graph, slack, path, byte)
            },
            |state, ids| {
                for &id in ids {
                    let bytes = || self.vocabulary.token_bytes(id).expect("trie tokens have bytes");
                    if state.admits(graph, id, bytes) {
                        mask::set_bit(out, id);
                    }
                }
            },
        );
        steps
    }

    /// What the closing-token routes read: the schema graph, the longest token's length and the
    /// vocabulary's quote tails.
    fn closing_parts(&self) -> (&crate::structured::Graph, u64, &QuoteTails) {
        let StructuredMasks { program, strings, .. } = self;
        let tails = strings.shared.tails.get_or_init(|| QuoteTails::new(&self.vocabulary));
        (&program.graph, strings.longest_token, tails)
    }

    /// Walks closing tokens (`trie`) from inside `string` at `state`, admitting those the
    /// matcher takes; with `replays`, the state after a close is reused per closing state (the
    /// content being forgotten). Returns the trie nodes stepped.
    fn walk_closing(
        &self,
        trie: &TokenTrie,
        matcher: &DocumentMatcher,
        (string, state): (&Arc<ByteDfa>, StateId),
        mut replays: Option<&mut HashMap<StateId, Option<WalkState>>>,
        out: &mut [u32],
    ) -> usize {
        let (graph, slack, _) = self.closing_parts();
        let mut steps = 0;
        trie.walk_pruned(
            WalkState::in_string(matcher, string, state),
            |walk, byte| walk.refuses(graph, byte),
            |walk, path, byte| {
                steps += 1;
                match replays.as_deref_mut() {
                    Some(replays) => walk.step_memo(graph, slack, path, byte, replays),
                    None => walk.step(graph, slack, path, byte),
                }
            },
            |_, ids| {
                for &id in ids {
                    mask::set_bit(out, id);
                }
            },
        );
        steps
    }

    /// The closing tokens of a string whose content the matcher forgets at its close (see
    /// [`closing`]): those that close at their first quote take the memo's answer for the state
    /// the quote leads to, the others are walked. Returns the trie nodes stepped.
    fn close_forgetting(
        &self,
        matcher: &DocumentMatcher,
        split: &StringSplit,
        string: &Arc<ByteDfa>,
        state: StateId,
        memo: &mut StringMemo,
        out: &mut [u32],
    ) -> usize {
        let (graph, slack, tails) = self.closing_parts();
        let mut steps = 0;
        for close in &split.first_quote {
            let admitted = memo.admitted(close.state, || {
                let mut after = matcher.clone();
                after
                    .feed_all(graph, &close.text)
                    .then(|| tails.admitted(graph, slack, after, self.word_count, &mut steps))
            });
            if let Some(admitted) = admitted {
                admit(out, &admitted, &close.tokens);
            }
        }
        if split.late.node_count() > 1 {
            // One replay per closing state serves every token, the content being forgotten.
            let mut replays = HashMap::new();
            steps += self.walk_closing(&split.late, matcher, (string, state), Some(&mut replays), out);
        }
        steps
    }

    /// The closing tokens inside a key (see [`KeyCloses`]): those that close at their first
    /// quote with nothing after it that could end the member are decided once per outcome of
    /// the close, by the bound schema's [`KeyTailMemo`]; the others are walked. Returns the
    /// trie nodes stepped.
    fn close_keys(
        &self,
        matcher: &DocumentMatcher,
        mut keys: KeyCloses,
        split: &StringSplit,
        string: &Arc<ByteDfa>,
        state: StateId,
        out: &mut [u32],
    ) -> usize {
        let StructuredMasks { program, strings, .. } = self;
        let (graph, slack) = (&program.graph, strings.longest_token);
        let tails = strings.shared.key_tails.get_or_init(|| QuoteTails::after_keys(&self.vocabulary));
        let closes = split.by_content.get_or_init(|| ContentCloses::new(&self.vocabulary, split, string, state));
        let mut steps = 0;
        // The tails each outcome admits (`None`: no track takes such a key), in order met.
        let mut admitted: Vec<Option<Arc<[TokenId]>>> = Vec::new();
        let mut text = Vec::new();
        for group in &closes.groups {
            let Some(outcome) = keys.close(graph, &group.content) else {
                // Not a key's close after all: each token on the matcher.
                self.admit_fed(graph, matcher, group.bare.iter().chain(&group.tailed), out);
                continue;
            };
            if outcome == admitted.len() {
                let schemas = keys.value_schemas(outcome);
                let answer = (!schemas.is_empty())
                    .then(|| {
                        strings.key_tails.admitted(schemas, matcher.depth(), || {
                            text.clear();
                            text.extend_from_slice(&group.content);
                            text.push(b'"');
                            let mut after = matcher.clone();
                            let closed = after.feed_all(graph, &text);
                            debug_assert!(closed, "a key some track takes keeps the matcher alive");
                            closed.then(|| tails.admitted_tails(graph, slack, after, &mut steps))
                        })
                    })
                    .flatten();
                admitted.push(answer);
            }
            if let Some(admitted) = &admitted[outcome] {
                for &id in &group.bare {
                    mask::set_bit(out, id);
                }
                for &id in &group.tailed {
                    if admitted.binary_search(&id).is_ok() {
                        mask::set_bit(out, id);
                    }
                }
            }
        }
        if closes.walked.node_count() > 1 {
            steps += self.walk_closing(&closes.walked, matcher, (string, state), None, out);
        }
        steps
    }

    /// Inside a key whose tracks all read finite key languages (see [`FiniteKey`]): for each,
    /// its automaton's rows less the tokens whose text leads to seen keys only (walked along
    /// the seen keys' spellings); the tokens that close the key walked on the matcher. Returns
    /// the trie nodes stepped.
    fn finite_key_mask(&self, matcher: &DocumentMatcher, keys: &[FiniteKey], out: &mut [u32]) -> usize {
        let mut steps = 0;
        if let [key] = keys {
            // One track (the common case) writes its row in place.
            steps += self.finite_key_row(key, out);
        } else {
            out.fill(0);
            let mut row = vec![0u32; self.word_count];
            for key in keys {
                steps += self.finite_key_row(key, &mut row);
                for (word, live) in out.iter_mut().zip(&row) {
                    *word |= live;
                }
            }
        }
        for (i, key) in keys.iter().enumerate() {
            // Tracks on one automaton and state share their closing tokens.
            if keys[..i].iter().all(|k| !Arc::ptr_eq(k.text, key.text) || k.state != key.state) {
                let split = self.finite_key_split(key);
                steps += self.walk_closing(split.closing(&self.vocabulary), matcher, (key.text, key.state), None, out);
            }
        }
        steps
    }

    /// The split of a finite key's automaton at its state.
    fn finite_key_split(&self, key: &FiniteKey) -> Arc<StringSplit> {
        let strings = &self.strings;
        self.string_split(strings, key.text, key.state)
    }

    /// One track's tokens that stay inside a finite key (see [`FiniteKey`]) into `row`: the
    /// split's row less the tokens whose text leads to seen keys only, walked along the seen
    /// keys' spellings. Returns the trie nodes stepped.
    fn finite_key_row(&self, key: &FiniteKey, row: &mut [u32]) -> usize {
        let trie = &self.trie;
        row.copy_from_slice(&self.finite_key_split(key).inside);
        let mut steps = 0;
        trie.walk_pruned(
            key.reading(),
            |reading, byte| key.settled(reading, byte),
            |reading, _, byte| {
                steps += 1;
                key.read(reading, byte)
            },
            |reading, ids| {
                if !key.live(reading) {
                    for &id in ids {
                        mask::clear_bit(row, id);
                    }
                }
            },
        );
        steps
    }

    /// Admits each of `ids` that the matcher reads whole, fed on a copy of it.
    fn admit_fed<'t>(
        &self,
        graph: &crate::structured::Graph,
        matcher: &DocumentMatcher,
        ids: impl Iterator<Item = &'t TokenId>,
        out: &mut [u32],
    ) {
        for &id in ids {
            let bytes = self.vocabulary.token_bytes(id).expect("closing tokens have bytes");
            if matcher.clone().feed_all(graph, bytes) {
                mask::set_bit(out, id);
            }
        }
    }

    /// The tokens of each of `contexts` that stay inside the string, and those that close it
    /// as a member's value (see [`ValueCloses`]): those that close at their first quote are
    /// decided once per outcome of the close (the tails after the quote, walked from the
    /// matcher after it), the others are walked. Returns the trie nodes stepped.
    fn close_values(
        &self,
        matcher: &DocumentMatcher,
        closes: &ValueCloses,
        contexts: &[(&Arc<ByteDfa>, StateId)],
        mut memo: Option<&mut StringMemo>,
        out: &mut [u32],
    ) -> usize {
        let strings = &self.strings;
        let (graph, slack, tails) = self.closing_parts();
        let mut steps = 0;
        // The tails each outcome admits, as a mask (`None`: the matcher refuses the close). The
        // matcher after a close depends on the outcome alone, so the session keeps these
        // answers while its tokens stay inside the string.
        let mut answers = memo.as_mut().map_or_else(Vec::new, |memo| std::mem::take(&mut memo.value_tails));
        out.fill(0);
        for &(string, state) in contexts {
            let split = self.string_split(strings, string, state);
            for (word, inside) in out.iter_mut().zip(split.inside.iter()) {
                *word |= inside;
            }
            for group in split.by_value_content.get_or_init(|| ContentCloses::of_values(&self.vocabulary, &split)) {
                let Some(outcome) = closes.close(graph, &group.content) else {
                    self.admit_fed(graph, matcher, group.bare.iter().chain(&group.tailed), out);
                    continue;
                };
                if outcome.is_refused() {
                    continue;
                }
                let answer = match answers.iter().position(|(known, _)| *known == outcome) {
                    Some(index) => &answers[index].1,
                    None => {
                        let mut after = matcher.clone();
                        let closed = after.feed_all(graph, &group.content) && after.feed(graph, b'"');
                        debug_assert!(closed, "a close that completes a track's value keeps the matcher alive");
                        let answer = closed.then(|| tails.admitted(graph, slack, after, self.word_count, &mut steps));
                        answers.push((outcome, answer.map(Arc::new)));
                        &answers[answers.len() - 1].1
                    }
                };
                if let Some(admitted) = answer {
                    for &id in &group.bare {
                        mask::set_bit(out, id);
                    }
                    admit(out, admitted, &group.tailed);
                }
            }
            if split.late.node_count() > 1 {
                steps += self.walk_closing(&split.late, matcher, (string, state), None, out);
            }
        }
        if let Some(memo) = memo {
            memo.value_tails = answers;
        }
        steps
    }

    fn string_split(&self, rows: &StringRows, string: &Arc<ByteDfa>, state: StateId) -> Arc<StringSplit> {
        if Arc::ptr_eq(string, json::string_automaton()) {
            let shared = &rows.shared;
            if let Some(hit) = shared.splits.lock().unwrap_or_else(|e| e.into_inner()).get(&state) {
                return Arc::clone(hit);
            }
            let trie = shared.trie.get_or_init(|| Arc::new(self.trie.over_classes(string.byte_classes())));
            let split = Arc::new(self.compute_split(trie, TrieSymbols::Classes, string, state).0);
            shared.splits.lock().unwrap_or_else(|e| e.into_inner()).insert(state, Arc::clone(&split));
            return split;
        }
        let key = (AutomatonId::of(string), state);
        if let Some(hit) = rows.splits.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Arc::clone(hit);
        }
        let split = match self.string_trie(rows, string.byte_classes()) {
            Some(trie) => self.compute_split(&trie, TrieSymbols::Classes, string, state).0,
            None => {
                let trie = &self.trie;
                let (split, walked) = self.compute_split(trie, TrieSymbols::Bytes, string, state);
                let mut local = rows.class_tries.lock().unwrap_or_else(|e| e.into_inner());
                local.entry(*string.byte_classes()).or_default().walked += walked;
                split
            }
        };
        let split = Arc::new(split);
        rows.splits.lock().unwrap_or_else(|e| e.into_inner()).insert(key, Arc::clone(&split));
        split
    }

    /// Walks a token trie from `state`: tokens that stay inside the string go to one row, the
    /// ones that close it to a list. Also returns the trie nodes stepped.
    ///
    /// On the byte trie, a subtree whose bytes all loop on the state it is entered in stays
    /// there, whatever its tokens: it is taken whole. Free text loops on most ASCII, so the
    /// walk only goes down where quotes, escapes and other characters are.
    fn compute_split(
        &self,
        trie: &TokenTrie,
        symbols: TrieSymbols,
        string: &ByteDfa,
        state: StateId,
    ) -> (StringSplit, u64) {
        let next = |s, symbol| match symbols {
            TrieSymbols::Classes => string.next_class(s, symbol),
            TrieSymbols::Bytes => string.next(s, symbol),
        };
        let mut loops = (symbols == TrieSymbols::Bytes).then(|| LoopingBytes::new(string));
        let mut stays = |to: StateId, node: usize| loops.as_mut().is_some_and(|loops| loops.below(trie, node, to));
        let mut walked = 0u64;
        let mut inside = vec![0u32; self.word_count];
        let mut first_quote: Vec<FirstQuoteCloses> = Vec::new();
        let mut late = Vec::new();
        // The walk state: the automaton state, the symbols read, and whether the string closed
        // there. Past the close every token is a closing one, whatever its remaining symbols,
        // so the subtree is taken whole.
        trie.walk_copy_at(
            (state, 0u32, false),
            |(s, depth, _), symbol, node| {
                walked += 1;
                match next(s, symbol) {
                    DEAD => Descend::Skip,
                    to if string.is_accepting(to) => Descend::Take((to, depth + 1, true)),
                    to if stays(to, node) => Descend::Take((to, depth + 1, false)),
                    to => Descend::Enter((to, depth + 1, false)),
                }
            },
            |(closed, length, closes), ids| {
                if !closes {
                    for &id in ids {
                        mask::set_bit(&mut inside, id);
                    }
                    return;
                }
                for &id in ids {
                    let bytes = self.vocabulary.token_bytes(id).expect("trie tokens have bytes");
                    let quote = bytes.iter().position(|&b| b == b'"');
                    if quote != Some(length as usize - 1) {
                        late.push((bytes.to_vec(), id));
                        continue;
                    }
                    match first_quote.iter_mut().find(|c| c.state == closed) {
                        Some(c) => c.tokens.push(id),
                        None => first_quote.push(FirstQuoteCloses {
                            state: closed,
                            text: bytes[..length as usize].to_vec(),
                            tokens: vec![id],
                        }),
                    }
                }
            },
        );
        let split = StringSplit {
            inside,
            closing: OnceLock::new(),
            first_quote,
            late: TokenTrie::build(late),
            by_content: OnceLock::new(),
            by_value_content: OnceLock::new(),
        };
        (split, walked)
    }

    /// The class trie of a string automaton's byte partition, once it pays: when a cache holds
    /// it, or once the splits over the partition in this schema have walked as many byte-trie
    /// nodes as building one costs (about [`WALKS_PER_CLASS_TRIE`] whole walks). Restrictive
    /// automata prune the byte trie at the first bytes, so their splits never build one.
    fn string_trie(&self, rows: &StringRows, classes: &[u8; 256]) -> Option<Arc<TokenTrie>> {
        let byte_trie = &self.trie;
        let mut local = rows.class_tries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = local.entry(*classes).or_default();
        if let Some(trie) = &entry.trie {
            return Some(Arc::clone(trie));
        }
        let trie = match rows.tries.cached_class_trie(rows.vocabulary_uid, classes) {
            Some(trie) => trie,
            None if entry.walked > WALKS_PER_CLASS_TRIE * byte_trie.node_count() as u64 => {
                rows.tries.build_class_trie(rows.vocabulary_uid, byte_trie, classes)
            }
            None => return None,
        };
        entry.trie = Some(Arc::clone(&trie));
        Some(trie)
    }

    fn set_eos(&self, row: &mut [u32]) {
        set_eos(&self.vocabulary, row);
    }
}

/// The vocabulary's [`SharedStringRows`], made by the first schema bound to it.
fn shared_string_rows(vocabulary: &CompiledVocabulary) -> Arc<SharedStringRows> {
    let memo = vocabulary.binding_memo.get_or_init(|| Arc::new(SharedStringRows::default()));
    Arc::clone(memo).downcast::<SharedStringRows>().expect("binding alone fills the memo, with string rows")
}

/// Sets the bits of the vocabulary's EOS tokens in `row`.
fn set_eos(vocabulary: &Vocabulary, row: &mut [u32]) {
    for &eos in vocabulary.eos_token_ids() {
        mask::set_bit(row, eos);
    }
}

/// The ASCII bytes that loop on each state of an automaton, worked out on first need, for walks
/// of the byte trie that take a subtree whole when every byte below it loops on the state it is
/// entered in: its tokens all end in that state. Free text in a string loops on most ASCII.
struct LoopingBytes<'a> {
    dfa: &'a ByteDfa,
    /// By state, for automata of up to [`LoopingBytes::INDEXED`] states; bit 0 (NUL and the bytes
    /// from 128 on, see [`TokenTrie::bytes_below`]) never loops here, so it marks a state not
    /// worked out yet.
    by_index: Vec<u128>,
    /// For larger automata (texts of patterns and regexes).
    by_state: HashMap<StateId, u128>,
}

impl<'a> LoopingBytes<'a> {
    const INDEXED: usize = 4096;
    const UNKNOWN: u128 = 1;

    fn new(dfa: &'a ByteDfa) -> Self {
        let indexed = if dfa.state_count() <= Self::INDEXED { dfa.state_count() } else { 0 };
        LoopingBytes { dfa, by_index: vec![Self::UNKNOWN; indexed], by_state: HashMap::new() }
    }

    /// Whether every byte on the edges below `node` of the byte trie loops on `state`.
    fn below(&mut self, trie: &TokenTrie, node: usize, state: StateId) -> bool {
        let below = trie.bytes_below(node);
        below & self.looping(state) == below
    }

    fn looping(&mut self, state: StateId) -> u128 {
        let dfa = self.dfa;
        let work_out = || (1..128u8).filter(|&b| dfa.next(state, b) == state).fold(0, |set, b| set | 1u128 << b);
        match self.by_index.get_mut(state as usize) {
            Some(known) if *known != Self::UNKNOWN => *known,
            Some(unknown) => {
                *unknown = work_out();
                *unknown
            }
            None => *self.by_state.entry(state).or_insert_with(work_out),
        }
    }
}

/// What the symbols of a token trie are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TrieSymbols {
    /// Byte classes of the automaton walked.
    Classes,
    Bytes,
}

/// Admits the `tokens` whose bits `admitted` has.
fn admit(out: &mut [u32], admitted: &[u32], tokens: &[TokenId]) {
    for &id in tokens {
        if mask::get_bit(admitted, id) {
            mask::set_bit(out, id);
        }
    }
}

/// Whole walks of the byte trie that building a class trie costs: on Llama-3's and GPT-2's
/// vocabularies a build takes 7 to 9 times as long as stepping through every node of the byte
/// trie. Building once the string splits (or a regular automaton's rows) have walked that much
/// bounds the total at twice the best choice made in hindsight.
const WALKS_PER_CLASS_TRIE: u64 = 8;

#[cfg(all(test, feature = "tokenizer-processing"))]
mod tests {
    use super::*;
    use crate::{Compiler, CompilerOptions, TokenizerJsonOptions};

    fn vocabulary(name: &str) -> CompiledVocabulary {
        let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
        let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
        CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
    }

    /// Every state's row by both walks, bit for bit: the byte trie with whole subtrees taken
    /// where their bytes loop, and the class trie of the automaton's partition.
    #[test]
    fn rows_walked_on_the_byte_trie_equal_rows_walked_on_the_class_trie() {
        let compiler = Compiler::new(CompilerOptions::default());
        let programs = [
            compiler.compile_json_schema(
                r#"{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]{1,6}$"}, "tag": {"enum": ["ok", "née", "日本"]}, "on": {"type": "boolean"}}, "required": ["name", "tag"], "additionalProperties": false}"#,
            ),
            compiler.compile_json_schema(r#"{"type": "array", "items": {"type": "string", "pattern": "^[a-zé ]+\\d$"}}"#),
            compiler.compile_regex(r"(\p{L}+ ?)*[\x00-\x1f]?"),
        ];
        for vocabulary in [vocabulary("gpt2.tokenizer.json"), vocabulary("mistral-v3.tokenizer.json")] {
            for (i, program) in programs.iter().enumerate() {
                let program = program.as_ref().unwrap();
                let Backend::Regular(dfa) = program.executable().backend() else { panic!("program {i} is regular") };
                let masks = RegularMasks::new(Arc::clone(dfa), &vocabulary, &Arc::new(TrieCache::new(0)));
                let mut walked = 0;
                for state in 1..dfa.state_count() as StateId {
                    let mut by_bytes = vec![0u32; masks.word_count];
                    let mut by_classes = vec![0u32; masks.word_count];
                    walked +=
                        masks.walk_bytes(state, &mut |ids| ids.iter().for_each(|&id| mask::set_bit(&mut by_bytes, id)));
                    masks.walk_classes(masks.class_trie(), state, &mut |ids| {
                        ids.iter().for_each(|&id| mask::set_bit(&mut by_classes, id))
                    });
                    assert_eq!(by_bytes, by_classes, "state {state} of {} states", dfa.state_count());
                }
                // Taking whole subtrees keeps the byte walks short of the whole trie per state.
                assert!(walked < (dfa.state_count() * vocabulary.byte_trie().node_count()) as u64);
            }
        }
    }
}
