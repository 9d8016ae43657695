//! Tokens that close a string whose content the matcher forgets at the close (a value string
//! every track reads alike): the matcher after the closing quote then depends only on the
//! automaton state the quote leads to, so what such a token may hold after its quote is a
//! question about that one matcher, not about the token's bytes before the quote.
//!
//! Most closing tokens close at their first `"`. [`QuoteTails`] groups the vocabulary's tokens
//! by the bytes after their first quote, so one walk of those tails per closing state decides
//! them all, and [`CloseMemo`] keeps that answer while a session's tokens stay inside the same
//! string. The few tokens that close at a later quote (after an escaped one) are walked as
//! before.

use std::sync::Arc;

use super::walk::WalkState;
use crate::automata::{ByteDfa, StateId, DEAD};
use crate::mask;
use crate::structured::{DocumentMatcher, Graph};
use crate::vocabulary::{TokenId, TokenTrie, Vocabulary};

/// The vocabulary's tokens that hold a `"`, by the bytes after their first one.
#[derive(Debug)]
pub(crate) struct QuoteTails {
    /// Tokens whose first `"` is their last byte.
    bare: Vec<TokenId>,
    /// The bytes after the first `"` of the other tokens.
    tails: TokenTrie,
}

impl QuoteTails {
    pub(crate) fn new(vocabulary: &Vocabulary) -> QuoteTails {
        let mut bare = Vec::new();
        let mut tails = Vec::new();
        for (id, bytes) in vocabulary.tokens_with_bytes() {
            if let Some(quote) = bytes.iter().position(|&b| b == b'"') {
                match &bytes[quote + 1..] {
                    [] => bare.push(id),
                    tail => tails.push((tail.to_vec(), id)),
                }
            }
        }
        QuoteTails { bare, tails: TokenTrie::build(tails) }
    }

    /// The tokens whose bytes after their first quote `matcher` reads, as a mask; `matcher` has
    /// just read a closing quote. Adds the trie nodes stepped to `steps`.
    pub(crate) fn admitted(
        &self,
        graph: &Graph,
        slack: u64,
        matcher: DocumentMatcher,
        word_count: usize,
        steps: &mut usize,
    ) -> Vec<u32> {
        let mut admitted = vec![0u32; word_count];
        for &id in &self.bare {
            mask::set_bit(&mut admitted, id);
        }
        self.tails.walk_pruned(
            WalkState::enter(graph, slack, matcher),
            |walk, byte| walk.refuses(graph, byte),
            |walk, path, byte| {
                *steps += 1;
                walk.step(graph, slack, path, byte)
            },
            |_, ids| {
                for &id in ids {
                    mask::set_bit(&mut admitted, id);
                }
            },
        );
        admitted
    }
}

/// The tokens of a string split that close the string at their first quote, into one
/// automaton state.
#[derive(Debug)]
pub(crate) struct FirstQuoteCloses {
    /// The automaton state after the closing quote.
    pub(crate) state: StateId,
    /// The bytes of one such token up to and including its quote: replayed on the matcher, they
    /// give the matcher after the close.
    pub(crate) text: Vec<u8>,
    pub(crate) tokens: Vec<TokenId>,
}

/// A session's answers for the string it is inside: for each closing state, the tokens whose
/// bytes after the closing quote the matcher reads (`None`: the matcher refuses the close).
/// Valid while the session stays inside the string it was worked out in.
#[derive(Debug, Default, Clone)]
pub(crate) struct CloseMemo {
    /// The string's automaton and the session's state on it.
    string: Option<(Arc<ByteDfa>, StateId)>,
    admitted: Vec<(StateId, Option<Arc<Vec<u32>>>)>,
}

impl CloseMemo {
    /// Starts over unless the memo was worked out in this string, now at `state`.
    pub(crate) fn enter(&mut self, string: &Arc<ByteDfa>, state: StateId) {
        let current = self.string.as_ref().is_some_and(|(dfa, at)| Arc::ptr_eq(dfa, string) && *at == state);
        if !current {
            self.string = Some((Arc::clone(string), state));
            self.admitted.clear();
        }
    }

    /// The answer for `state`, worked out by `compute` on first use.
    pub(crate) fn admitted(
        &mut self,
        state: StateId,
        compute: impl FnOnce() -> Option<Vec<u32>>,
    ) -> Option<Arc<Vec<u32>>> {
        if let Some((_, known)) = self.admitted.iter().find(|(s, _)| *s == state) {
            return known.clone();
        }
        let answer = compute().map(Arc::new);
        self.admitted.push((state, answer.clone()));
        answer
    }

    /// After the session committed `bytes`: the memo stays valid when they stay inside the
    /// string (the matcher around it is then untouched, and its content is forgotten at the
    /// close).
    pub(crate) fn advance(&mut self, bytes: &[u8]) {
        let Some((dfa, state)) = &mut self.string else { return };
        let mut at = *state;
        for &b in bytes {
            at = dfa.next(at, b);
            if at == DEAD || dfa.is_accepting(at) {
                *self = CloseMemo::default();
                return;
            }
        }
        *state = at;
    }
}
