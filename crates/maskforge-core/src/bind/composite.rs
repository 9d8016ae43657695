//! A composite template bound: rows of the template's automaton for its text, the structured
//! masks of each hole for the values, and the tokens that cross from one to the other.
//!
//! Outside holes a mask is the automaton state's row, plus the tokens that run from the state
//! into a hole (found once per state by a walk of the row's class trie that stops where a hole
//! starts, each token found there then read on the cursor), with
//! the few tokens that hold the marker byte checked one by one (a row reads the marker as a byte;
//! a cursor never does). Inside a hole's container a mask is the hole's structured mask, except
//! for the tokens that may close the value before their last byte: the standalone program reads
//! whitespace there and nothing else, the template reads its own text. Those tokens are found by
//! their nesting (which byte closes the root container, from the string mode at the cursor and
//! the depth), grouped by their text up to the close, which the matcher reads once per group;
//! what follows the close is decided once, on the template's automaton. At a value's start and in scalar values
//! (strings, numbers and literals at the root) the mask is a walk of the byte trie on the cursor,
//! memoised at the start of each hole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{set_eos, MaskCost, MaskRoute, RegularMasks, StringMemo, StructuredMasks};
use crate::automata::{StateId, DEAD};
use crate::composite::{CompositeProgram, Cursor, MARKER, SPECIAL};
use crate::error::{Error, Result};
use crate::mask;
use crate::structured::closing_offsets;
use crate::vocabulary::{Descend, TokenId, TokenTrie, Vocabulary};

#[derive(Debug)]
pub(crate) struct CompositeMasks {
    pub(crate) program: Arc<CompositeProgram>,
    outer: RegularMasks,
    holes: Vec<StructuredMasks>,
    trie: Arc<TokenTrie>,
    vocabulary: Arc<Vocabulary>,
    word_count: usize,
    /// Tokens holding a marker byte (of a hole or a special token).
    marked: Vec<TokenId>,
    /// The id of each special token the template places, in the order of their markers.
    special_ids: Vec<TokenId>,
    /// Per string mode (outside strings, inside, after a backslash): the tokens that close a
    /// container before their last byte, with the offsets of their closes.
    closers: [Vec<(TokenId, Vec<usize>)>; 3],
    /// Per automaton state: the tokens that run from it into a hole and stay completable.
    entering: Memo<StateId, Vec<TokenId>>,
    /// Per (hole, resume state): the mask where the hole starts.
    at_start: Memo<(usize, StateId), Vec<u32>>,
    /// Per (resume state, string mode, depth): the tokens that may end the value before their
    /// last byte, where what follows is whitespace or the template's text.
    past_end: Memo<(StateId, usize, u32), Vec<EndGroup>>,
}

/// Tokens that close the value at the same text: the matcher reads that text once for all of
/// them, and what follows it is the template's to read (decided when the group is made).
#[derive(Debug)]
struct EndGroup {
    /// The token's bytes up to and including the byte that closes the value.
    closing: Vec<u8>,
    /// Tokens whose bytes after the close the template takes.
    admitted: Vec<TokenId>,
    /// Tokens whose bytes after the close are whitespace the template refuses (the part alone
    /// would read them as its own).
    refused: Vec<TokenId>,
}

/// Answers worked out on first use and shared by every session of the bound template.
type Memo<K, V> = Mutex<HashMap<K, Arc<V>>>;

fn memoised<K: std::hash::Hash + Eq, V>(memo: &Memo<K, V>, key: K, compute: impl FnOnce() -> V) -> Arc<V> {
    if let Some(known) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Arc::clone(known);
    }
    // Computed unlocked: two sessions may both work it out once; either answer is the same.
    let value = Arc::new(compute());
    memo.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(value).clone()
}

impl CompositeMasks {
    pub(crate) fn new(
        program: Arc<CompositeProgram>,
        outer: RegularMasks,
        holes: Vec<StructuredMasks>,
        trie: Arc<TokenTrie>,
        vocabulary: Arc<Vocabulary>,
        word_count: usize,
    ) -> Result<CompositeMasks> {
        let special_ids = program
            .specials
            .iter()
            .map(|name| match vocabulary.special_token_id(name) {
                Some(id) if !vocabulary.is_eos(id) => Ok(id),
                Some(_) => Err(Error::Vocabulary(format!(
                    "the template places special token {name:?}, an EOS token: the output's end is no part"
                ))),
                None => Err(Error::Vocabulary(format!(
                    "the template places special token {name:?}, which the vocabulary does not name"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut marked = Vec::new();
        let mut closers: [Vec<(TokenId, Vec<usize>)>; 3] = Default::default();
        for (id, bytes) in vocabulary.tokens_with_bytes() {
            if bytes.contains(&MARKER) || bytes.contains(&SPECIAL) {
                marked.push(id);
            }
            for (mode, (in_string, escaped)) in [(false, false), (true, false), (true, true)].into_iter().enumerate() {
                let mut offsets = closing_offsets(bytes, in_string, escaped);
                offsets.retain(|&i| i + 1 < bytes.len());
                if !offsets.is_empty() {
                    closers[mode].push((id, offsets));
                }
            }
        }
        Ok(CompositeMasks {
            program,
            outer,
            holes,
            trie,
            vocabulary,
            word_count,
            marked,
            special_ids,
            closers,
            entering: Mutex::default(),
            at_start: Mutex::default(),
            past_end: Mutex::default(),
        })
    }

    /// The index among the template's special tokens of token `id`, if it is one.
    pub(crate) fn special_index(&self, id: TokenId) -> Option<u8> {
        self.special_ids.iter().position(|&special| special == id).map(|index| index as u8)
    }

    /// Sets the bits of the special tokens the template places at `cursor`, clears the others.
    fn decide_specials(&self, cursor: &Cursor, out: &mut [u32]) {
        for (index, &id) in self.special_ids.iter().enumerate() {
            mask::set_bit_to(out, id, self.program.feed_special(&mut cursor.clone(), index as u8));
        }
    }

    /// Rows of the template's automaton computed so far, and distinct rows stored.
    pub(crate) fn outer_row_stats(&self) -> (usize, usize) {
        self.outer.rows.stats()
    }

    /// Nodes of the class trie the automaton's rows walk.
    pub(crate) fn outer_trie_nodes(&self) -> usize {
        self.outer.class_trie().node_count()
    }

    /// Writes the mask at `cursor` (EOS bits included where the text is accepted).
    pub(crate) fn mask(
        &self,
        cursor: &Cursor,
        memo: &Mutex<Arc<StringMemo>>,
        tokens: usize,
        out: &mut [u32],
    ) -> MaskCost {
        match cursor {
            Cursor::Outer(state) => {
                out.copy_from_slice(self.outer.row(*state));
                if let Some((hole, resume)) = self.program.entry_of(*state) {
                    // An entry the cursor waits at (a special token may come first): the tokens
                    // that start the hole's value.
                    let start = self.at_start(hole, resume);
                    for (word, started) in out.iter_mut().zip(start.iter()) {
                        *word |= started;
                    }
                }
                for &id in &self.marked {
                    self.decide(cursor, id, out);
                }
                for &id in self.entering(*state).iter() {
                    mask::set_bit(out, id);
                }
                self.decide_specials(cursor, out);
                MaskCost { route: MaskRoute::Row, trie_steps: 0 }
            }
            Cursor::Hole { hole, matcher, resume } => {
                let (depth, in_string, escaped) = matcher.nesting();
                if matcher.has_started() && depth > 0 {
                    let part = &self.holes[*hole];
                    let mode = usize::from(in_string) + usize::from(escaped);
                    let graph = &part.program.graph;
                    // Applied before the part keeps a mask inside a string, so that a mask it
                    // serves again there is the template's (and this runs only when it has none).
                    let past_end = |out: &mut [u32]| {
                        for group in self.past_end(*resume, mode, depth).iter() {
                            let mut closed = matcher.clone();
                            let ends = closed.feed_all(graph, &group.closing) && closed.is_accepting();
                            for &id in &group.admitted {
                                mask::set_bit_to(out, id, ends);
                            }
                            for &id in &group.refused {
                                mask::clear_bit(out, id);
                            }
                        }
                    };
                    return part.mask_adjusted(matcher, memo, tokens, out, &past_end);
                }
                if matcher.is_at_start() {
                    out.copy_from_slice(&self.at_start(*hole, *resume));
                } else {
                    self.walk(cursor, out);
                }
                MaskCost { route: MaskRoute::TrieWalk, trie_steps: 0 }
            }
        }
    }

    /// The mask where hole `hole` starts, `resume` after it, memoised.
    fn at_start(&self, hole: usize, resume: StateId) -> Arc<Vec<u32>> {
        memoised(&self.at_start, (hole, resume), || {
            let mut row = vec![0u32; self.word_count];
            self.walk(&self.program.hole_start(hole, resume), &mut row);
            row
        })
    }

    /// Sets or clears token `id`'s bit by reading its bytes on the cursor.
    fn decide(&self, cursor: &Cursor, id: TokenId, out: &mut [u32]) {
        let admitted = self.vocabulary.token_bytes(id).is_some_and(|bytes| {
            let mut at = cursor.clone();
            self.program.feed_all(&mut at, bytes)
        });
        if admitted {
            mask::set_bit(out, id);
        } else {
            mask::clear_bit(out, id);
        }
    }

    /// The mask at `cursor` by a walk of the byte trie, each node read on a copy of the cursor.
    fn walk(&self, cursor: &Cursor, out: &mut [u32]) {
        out.fill(0);
        let program = &*self.program;
        self.trie.walk(
            cursor.clone(),
            |mut at, byte| program.feed(&mut at, byte).then_some(at),
            |_, ids| {
                for &id in ids {
                    mask::set_bit(out, id);
                }
            },
        );
        if program.is_accepting(cursor) {
            set_eos(&self.vocabulary, out);
        }
        self.decide_specials(cursor, out);
    }

    /// The tokens that run from automaton state `state` into a hole and stay completable: a walk
    /// of the byte trie that follows only paths reaching a hole before their end.
    fn entering(&self, state: StateId) -> Arc<Vec<TokenId>> {
        memoised(&self.entering, state, || self.walk_entering(state))
    }

    /// A walk of the automaton's class trie, as for a row, that takes the whole subtree where
    /// the automaton reaches a hole's entry: those tokens (few: they spell the text before the
    /// hole) are then read one by one on the cursor.
    fn walk_entering(&self, state: StateId) -> Vec<TokenId> {
        let program = &*self.program;
        let dfa = &program.dfa;
        let marker = dfa.byte_classes()[usize::from(MARKER)];
        let mut candidates = Vec::new();
        self.outer.class_trie().walk_copy(
            state,
            |at, class| match (class == marker, dfa.next_class(at, class)) {
                (true, _) | (_, DEAD) => Descend::Skip,
                (false, next) if program.is_entry(next) => Descend::Take(next),
                (false, next) => Descend::Enter(next),
            },
            |at, ids| {
                if program.is_entry(at) {
                    candidates.extend_from_slice(ids);
                }
            },
        );
        let start = Cursor::Outer(state);
        candidates
            .into_iter()
            .filter(|&id| {
                let bytes = self.vocabulary.token_bytes(id).unwrap_or_default();
                let mut at = start.clone();
                program.feed_all(&mut at, bytes)
            })
            .collect()
    }

    /// The tokens that close a value at depth `depth` (string mode `mode`) before their last
    /// byte and go on with whitespace (which the standalone program would read as its own) or
    /// with a text the template takes after the hole: the only tokens whose verdict differs
    /// from the hole's standalone mask.
    fn past_end(&self, resume: StateId, mode: usize, depth: u32) -> Arc<Vec<EndGroup>> {
        memoised(&self.past_end, (resume, mode, depth), || self.tokens_past_end(resume, mode, depth))
    }

    fn tokens_past_end(&self, resume: StateId, mode: usize, depth: u32) -> Vec<EndGroup> {
        let program = &*self.program;
        let after = program.enter(resume);
        let mut groups: HashMap<&[u8], EndGroup> = HashMap::new();
        for (id, offsets) in self.closers[mode].iter().filter(|(_, offsets)| offsets.len() >= depth as usize) {
            let Some(bytes) = self.vocabulary.token_bytes(*id) else { continue };
            let (closing, rest) = bytes.split_at(offsets[depth as usize - 1] + 1);
            let taken = program.feed_all(&mut after.clone(), rest);
            let whitespace = rest.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            if !taken && !whitespace {
                continue; // refused by the part alone too: nothing after its value but whitespace
            }
            let group = groups.entry(closing).or_insert_with(|| EndGroup {
                closing: closing.to_vec(),
                admitted: Vec::new(),
                refused: Vec::new(),
            });
            if taken {
                group.admitted.push(*id);
            } else {
                group.refused.push(*id);
            }
        }
        groups.into_values().collect()
    }
}
