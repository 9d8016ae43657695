//! Tokens that close a string whose content the matcher forgets at the close (a value string
//! every track reads alike): the matcher after the closing quote then depends only on the
//! automaton state the quote leads to, so what such a token may hold after its quote is a
//! question about that one matcher, not about the token's bytes before the quote.
//!
//! Most closing tokens close at their first `"`. [`QuoteTails`] groups the vocabulary's tokens
//! by the bytes after their first quote, so one walk of those tails per closing state decides
//! them all, and [`StringMemo`] keeps that answer, and whole masks, while a session's tokens
//! stay inside the same string. The few tokens that close at a later quote (after an escaped
//! one) are walked as before.
//!
//! Inside keys the same holds per outcome of the close (see [`crate::structured::KeyCloses`]),
//! for the tails that stay within the member's value: [`KeyTailMemo`] keeps their answers for
//! the bound schema's lifetime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::structured::{NodeId, ValueOutcome};
use crate::vocabulary::{TokenId, TokenTrie, Vocabulary};

/// The vocabulary's tokens that hold a `"`, by the bytes after their first one.
#[derive(Debug)]
pub(crate) struct QuoteTails {
    /// Tokens whose first `"` is their last byte.
    pub(super) bare: Vec<TokenId>,
    /// The bytes after the first `"` of the other tokens (walked by `walk`).
    pub(super) tails: TokenTrie,
    /// The tokens left out, sorted: for keys, those whose tails may reach past the member's
    /// value ([`AfterKeyQuote::Member`]).
    pub(crate) beyond: Vec<TokenId>,
}

impl QuoteTails {
    pub(crate) fn new(vocabulary: &Vocabulary) -> QuoteTails {
        Self::keeping(vocabulary, |_| AfterKeyQuote::Alone)
    }

    /// The tails that may follow a key's closing quote without reaching past the member's
    /// value ([`AfterKeyQuote::Alone`]).
    pub(crate) fn after_keys(vocabulary: &Vocabulary) -> QuoteTails {
        Self::keeping(vocabulary, after_key_quote)
    }

    /// Keeps the tails `class` says are [`AfterKeyQuote::Alone`], lists the
    /// [`AfterKeyQuote::Member`] ones.
    fn keeping(vocabulary: &Vocabulary, class: impl Fn(&[u8]) -> AfterKeyQuote) -> QuoteTails {
        let mut bare = Vec::new();
        let mut tails = Vec::new();
        let mut beyond = Vec::new();
        for (id, bytes) in vocabulary.tokens_with_bytes() {
            if let Some(quote) = bytes.iter().position(|&b| b == b'"') {
                match &bytes[quote + 1..] {
                    [] => bare.push(id),
                    tail => match class(tail) {
                        AfterKeyQuote::Alone => tails.push((tail.to_vec(), id)),
                        AfterKeyQuote::Member => beyond.push(id),
                        AfterKeyQuote::Refused => {}
                    },
                }
            }
        }
        beyond.sort_unstable();
        QuoteTails { bare, tails: TokenTrie::build(tails), beyond }
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

/// What a session's masks worked out inside the string it is in, while its content is forgotten
/// at the close (see [`DocumentMatcher::forgotten_string_leaves`]): the matcher then changes only
/// in its tracks' automaton states until the string closes, so a mask is a function of those
/// states, and the tokens that close at their first quote into one automaton state are read
/// alike. Valid while the session's tokens stay inside the string it was worked out in.
///
/// [`DocumentMatcher::forgotten_string_leaves`]: crate::structured::DocumentMatcher::forgotten_string_leaves
#[derive(Debug, Default, Clone)]
pub(crate) struct StringMemo {
    /// Each track's automaton and the session's state on it, in track order.
    leaves: Vec<(Arc<ByteDfa>, StateId)>,
    /// For each state a closing quote leads to, the tokens whose bytes after the quote the
    /// matcher reads (`None`: the matcher refuses the close); single-automaton strings only.
    admitted: Vec<(StateId, Option<Arc<Vec<u32>>>)>,
    /// For each outcome of a close (see [`ValueCloses`](crate::structured::ValueCloses)), the
    /// tokens whose bytes after the quote the matcher reads; strings that tracks read on
    /// different automata.
    pub(crate) value_tails: Vec<(ValueOutcome, Option<Arc<Vec<u32>>>)>,
    /// Whole masks by the tracks' states; shared by forks, which only read them.
    masks: Vec<(Vec<StateId>, Arc<[u32]>)>,
    /// The session's committed-token count when the memo was worked out: every position
    /// since, up to the session's, is inside this string (leaving it clears the memo).
    entered_at: usize,
}

/// Whole masks kept per string: a plain string stays in one state, a patterned one moves
/// through many, each met about once.
const MASKS_PER_STRING: usize = 4;

impl StringMemo {
    /// Nothing worked out: the session is outside a string, or has asked for no mask in it.
    pub(crate) fn is_empty(&self) -> bool {
        self.leaves.is_empty() && self.admitted.is_empty() && self.value_tails.is_empty() && self.masks.is_empty()
    }

    /// Whether the memo was worked out in the string the session is in, now at `leaves`.
    fn is_at(&self, leaves: &[(&Arc<ByteDfa>, StateId)]) -> bool {
        self.leaves.len() == leaves.len()
            && self
                .leaves
                .iter()
                .zip(leaves)
                .all(|((dfa, at), (string, state))| Arc::ptr_eq(dfa, string) && at == state)
    }

    /// Starts over unless the memo was worked out in this string, now at `leaves`; `tokens`:
    /// the session's committed-token count.
    pub(crate) fn enter(&mut self, leaves: &[(&Arc<ByteDfa>, StateId)], tokens: usize) {
        if !self.is_at(leaves) {
            *self = StringMemo {
                leaves: leaves.iter().map(|&(dfa, state)| (Arc::clone(dfa), state)).collect(),
                entered_at: tokens,
                ..StringMemo::default()
            };
        }
    }

    /// The mask worked out at `leaves`, if the memo is at them and has one.
    pub(crate) fn mask_at(&self, leaves: &[(&Arc<ByteDfa>, StateId)]) -> Option<&[u32]> {
        if !self.is_at(leaves) {
            return None;
        }
        let current = || self.leaves.iter().map(|&(_, state)| state);
        self.masks.iter().find(|(states, _)| states.iter().copied().eq(current())).map(|(_, mask)| &mask[..])
    }

    /// After a rollback to a session with `tokens` committed tokens, at `leaves` (`None`:
    /// outside a forgotten string): whether the memo still holds there. It does when the
    /// session is back at or after the token the memo was worked out at, all of whose positions
    /// are inside this string; then only the tracks' states move back.
    pub(crate) fn holds_after_rollback(&mut self, leaves: Option<&[(&Arc<ByteDfa>, StateId)]>, tokens: usize) -> bool {
        let Some(leaves) = leaves.filter(|_| tokens >= self.entered_at) else { return false };
        let same_string = self.leaves.len() == leaves.len()
            && self.leaves.iter().zip(leaves).all(|((dfa, _), (string, _))| Arc::ptr_eq(dfa, string));
        if same_string {
            for ((_, at), &(_, state)) in self.leaves.iter_mut().zip(leaves) {
                *at = state;
            }
        }
        same_string
    }

    /// Keeps `mask` as the one at the current states.
    pub(crate) fn keep_mask(&mut self, mask: &[u32]) {
        if self.masks.len() < MASKS_PER_STRING {
            self.masks.push((self.leaves.iter().map(|&(_, state)| state).collect(), mask.into()));
        }
    }

    /// The answer for the closing `state`, worked out by `compute` on first use.
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
    /// string on every track (the matcher around it is then untouched).
    pub(crate) fn advance(&mut self, bytes: &[u8]) {
        for (dfa, state) in &mut self.leaves {
            let mut at = *state;
            for &b in bytes {
                at = dfa.next(at, b);
                if at == DEAD || dfa.is_accepting(at) {
                    *self = StringMemo::default();
                    return;
                }
            }
            *state = at;
        }
    }
}

/// What a token may hold after a key's closing quote, by the bytes after it (`tail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterKeyQuote {
    /// Something else than whitespace or a colon comes first: no key's close admits it.
    Refused,
    /// A `,` or `}` comes later: the tail may reach past the member's value.
    Member,
    /// Whitespace, a colon and the start of the member's value, at most.
    Alone,
}

pub(crate) fn after_key_quote(tail: &[u8]) -> AfterKeyQuote {
    if tail.iter().find(|&&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')).is_some_and(|&b| b != b':') {
        AfterKeyQuote::Refused
    } else if tail.iter().any(|&b| b == b',' || b == b'}') {
        AfterKeyQuote::Member
    } else {
        AfterKeyQuote::Alone
    }
}

/// Per bound schema: which [`AfterKeyQuote::Alone`] tails the matcher reads after a key's
/// closing quote, by the schemas the member's value is read on and the nesting depth.
///
/// Those bytes reach no further than the start of the member's value. The object reads them
/// alike whatever the key and the keys seen (they decide the outcome, not what follows it),
/// the value reads them by its schema, the containers above never see them, and the document
/// only counts their nesting and whitespace (none in a row after a quote). So an answer holds
/// for every key of every object, in every session, whose close leads to the same schemas at
/// the same depth.
#[derive(Debug, Default)]
pub(crate) struct KeyTailMemo {
    answers: Mutex<HashMap<KeyTailQuestion, Arc<[TokenId]>>>,
}

/// The value's schemas, sorted, and the nesting depth at the close.
type KeyTailQuestion = (Box<[NodeId]>, u32);

/// Most answers a [`KeyTailMemo`] keeps: a bound on its memory (each answer lists a few hundred
/// tokens at most); past it, answers are worked out each time.
const MAX_KEY_TAIL_ANSWERS: usize = 4096;

impl KeyTailMemo {
    /// The answer for a close leading to `schemas` at `depth`, worked out by `compute` (`None`:
    /// the matcher refused the close) on first use.
    pub(crate) fn admitted(
        &self,
        schemas: Box<[NodeId]>,
        depth: u32,
        compute: impl FnOnce() -> Option<Vec<TokenId>>,
    ) -> Option<Arc<[TokenId]>> {
        let key = (schemas, depth);
        if let Some(known) = self.answers.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Some(Arc::clone(known));
        }
        let answer: Arc<[TokenId]> = compute()?.into();
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if answers.len() < MAX_KEY_TAIL_ANSWERS {
            answers.insert(key, Arc::clone(&answer));
        }
        Some(answer)
    }
}
