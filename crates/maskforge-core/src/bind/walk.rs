//! The state of a structured mask's walk over a token trie: the matcher, stepped one byte per
//! trie node, copied at every node whose children are alive.
//!
//! Copying the whole matcher at every node would dominate: inside a string whose content its
//! automaton alone decides, inside numbers their containers only hand bytes to, and between the
//! values of the innermost container, the walk carries that part alone, with the matcher where
//! it was entered. The bytes read since are the trie path (the walk passes it to each step), so
//! where the part ends (the string closes, the number ends, the container closes) they are
//! replayed on the entry matcher, or on the innermost container when that is known.

use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use super::closing::{KeyTailMemo, QuoteTails};
use super::named_keys::{KeyRun, KeyStep};
use crate::automata::{ByteDfa, StateId, DEAD};
use crate::mask;
use crate::numbers::NumberMatcher;
use crate::structured::{
    feed_number, CountedString, DocumentMatcher, Graph, InnerContainer, Step, SyntaxString, ValueOutcome,
};
use crate::vocabulary::{Run, TokenId};

/// The matcher a walk state was entered from, and the depth of the trie node it was entered at:
/// the walk's path from that depth on is what it read since.
pub(super) struct Entry {
    matcher: DocumentMatcher,
    depth: usize,
}

#[derive(Clone)]
pub(super) enum WalkState<'a> {
    Full(DocumentMatcher),
    /// Inside a string every track reads on `string` (or whose tokens the unconstrained string
    /// decides).
    InString {
        entry: Arc<Entry>,
        /// Where the string's close is replayed from, when known.
        resume: Option<Resume<'a>>,
        string: Arc<ByteDfa>,
        state: StateId,
    },
    /// Inside a string read by a syntax (`format: "regex"`, a host name): its reading alone,
    /// until the string closes.
    InSyntax {
        entry: Arc<Entry>,
        resume: Option<Resume<'a>>,
        string: Box<SyntaxString>,
    },
    /// Inside a counted string whose automaton does not decide alone (near the length bound,
    /// or beside other strings): its reading with the counter, until the string closes.
    InCounted {
        entry: Arc<Entry>,
        resume: Option<Resume<'a>>,
        string: Box<CountedString>,
    },
    /// Inside numbers, each track's constraint sets flattened.
    InNumber {
        entry: Arc<Entry>,
        resume: Option<Resume<'a>>,
        number: Vec<NumberMatcher>,
        /// Whether some of them is complete: asked for every byte that cannot continue them.
        complete: OnceCell<bool>,
    },
    /// Between values or inside keys: the innermost open container, read apart from the
    /// containers above it, which only hand it bytes.
    InContainer {
        entry: Arc<Entry>,
        inner: InnerContainer,
    },
    /// Inside a key only named keys complete: the names that go on with the key read so far
    /// (see [`KeyRun`]); the closing quote is replayed on the container.
    InKey {
        entry: Arc<Entry>,
        resume: Resume<'a>,
        key: KeyRun,
        closing: Option<KeyClosing<'a>>,
    },
    /// Past the closing quote of a key the walk started in, when the bound schema knows which
    /// tails follow such a close (see [`KeyTailMemo`]): the tokens are settled by that answer,
    /// without stepping the matcher.
    KeyClosed {
        entry: Arc<Entry>,
        /// The tokens whose tails after the quote the member reads, sorted.
        admitted: Arc<[TokenId]>,
        /// Tokens whose tails may reach past the member's value, sorted: replayed whole.
        beyond: &'a [TokenId],
        after: AfterQuote,
    },
}

/// What a walk inside a key needs to settle the tokens that close it.
#[derive(Clone, Copy)]
pub(super) struct KeyClosing<'a> {
    pub(super) memo: &'a KeyTailMemo,
    /// The tails that may follow a key's close ([`QuoteTails::after_keys`]).
    pub(super) tails: &'a QuoteTails,
}

/// What a token read past a key's closing quote.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterQuote {
    Nothing,
    Whitespace,
    Colon,
}

fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The innermost container around a string or number a walk reads alone, and the depth at
/// which the walk held it: where the string closes or the number ends, the bytes since are
/// replayed on a copy of it rather than on the whole matcher from the walk's entry. The
/// containers above only hand it bytes, so it decides as the whole matcher would, until it
/// closes.
#[derive(Clone)]
pub(super) struct Resume<'a> {
    inner: Arc<InnerContainer>,
    depth: usize,
    /// Around a string: the walk states its closes led to, by outcome.
    closes: Option<Rc<CloseMemo<'a>>>,
}

/// The walk states after the closes of one string, one per outcome (see
/// [`ValueCloses`](crate::structured::ValueCloses)): contents that complete the same values
/// leave containers that read every later byte alike, so each token closing the string alike
/// goes on from a copy of one state instead of replaying its content on the container.
#[derive(Default)]
struct CloseMemo<'a> {
    answers: RefCell<Vec<(ValueOutcome, Option<WalkState<'a>>)>>,
}

impl<'a> Resume<'a> {
    /// Resumes a key or number on `inner`, held at `depth`.
    fn plain(inner: InnerContainer, depth: usize) -> Resume<'a> {
        Resume { inner: Arc::new(inner), depth, closes: None }
    }

    /// Resumes a string on `inner`, held at `depth`, its closes kept by outcome.
    fn string(inner: InnerContainer, depth: usize) -> Resume<'a> {
        Resume { inner: Arc::new(inner), depth, closes: Some(Rc::default()) }
    }

    /// The walk state after the container reads `path[depth..]` then `byte`; `None` when it
    /// refuses one, `Err` when it closes on the way (the whole matcher decides then).
    fn replay(
        &self,
        graph: &Graph,
        slack: u64,
        entry: &Arc<Entry>,
        path: &[u8],
        byte: u8,
    ) -> Result<Option<WalkState<'a>>, ()> {
        let mut inner = InnerContainer::clone(&self.inner);
        for &b in path[self.depth..].iter().chain(std::iter::once(&byte)) {
            match inner.feed(graph, b) {
                Step::Consumed => {}
                Step::Rejected => return Ok(None),
                Step::NotMine => return Err(()),
            }
        }
        Ok(Some(WalkState::within(graph, slack, Arc::clone(entry), inner, path.len() + 1)))
    }

    /// [`Resume::replay`] for the quote `byte` that closes the string read since `depth`: the
    /// state an earlier close of the same outcome led to, when there is one.
    fn close(
        &self,
        graph: &Graph,
        slack: u64,
        entry: &Arc<Entry>,
        path: &[u8],
        byte: u8,
    ) -> Result<Option<WalkState<'a>>, ()> {
        let memo = self.closes.as_ref().filter(|_| byte == b'"');
        let Some((memo, outcome)) =
            memo.and_then(|memo| Some((memo, self.inner.value_closes()?.close(graph, &path[self.depth..])?)))
        else {
            return self.replay(graph, slack, entry, path, byte);
        };
        if let Some((_, walk)) = memo.answers.borrow().iter().find(|(known, _)| *known == outcome) {
            return Ok(walk.clone());
        }
        let walk = self.replay(graph, slack, entry, path, byte)?;
        memo.answers.borrow_mut().push((outcome, walk.clone()));
        Ok(walk)
    }
}

impl<'a> WalkState<'a> {
    /// The walk's start, at the trie's root, on `matcher`.
    ///
    /// Inside a key only named keys complete, the names allowed are listed once for the walk
    /// (the matcher keeps what it learnt of them between masks); keys opened during the walk
    /// are read by the container, which stops at the first allowed name.
    pub(super) fn enter(graph: &Graph, slack: u64, matcher: DocumentMatcher) -> WalkState<'a> {
        WalkState::enter_closing(graph, slack, matcher, None)
    }

    /// [`WalkState::enter`]; inside a key, tokens that close it are settled with `closing`
    /// where it knows the answer.
    pub(super) fn enter_closing(
        graph: &Graph,
        slack: u64,
        matcher: DocumentMatcher,
        closing: Option<KeyClosing<'a>>,
    ) -> WalkState<'a> {
        if let Some(inner) = matcher.innermost_container() {
            if let Some((read, names)) = inner.named_keys(graph) {
                let key = KeyRun::new(&names, read.len());
                let resume = Resume::plain(inner, 0);
                let entry = Arc::new(Entry { matcher, depth: 0 });
                return WalkState::InKey { entry, resume, key, closing };
            }
        }
        WalkState::entered(graph, slack, matcher, 0)
    }

    /// Whether the walk admits token `id` ending at its node, `bytes` giving its bytes: every
    /// token a walk state reaches, except past a key's close, where the answer settles it.
    pub(super) fn admits<'b>(&self, graph: &Graph, id: TokenId, bytes: impl FnOnce() -> &'b [u8]) -> bool {
        let WalkState::KeyClosed { entry, admitted, beyond, after } = self else { return true };
        *after == AfterQuote::Nothing
            || admitted.binary_search(&id).is_ok()
            || (beyond.binary_search(&id).is_ok() && entry.matcher.clone().feed_all(graph, &bytes()[entry.depth..]))
    }

    /// The walk's start inside `string` at `state`, the string the matcher is inside.
    pub(super) fn in_string(matcher: &DocumentMatcher, string: &Arc<ByteDfa>, state: StateId) -> WalkState<'a> {
        let resume = matcher.inner_container().map(|inner| Resume::string(inner, 0));
        let entry = Arc::new(Entry { matcher: matcher.clone(), depth: 0 });
        WalkState::InString { entry, resume, string: Arc::clone(string), state }
    }

    /// The walk's start inside `string`, the syntax string the matcher is inside (see
    /// [`DocumentMatcher::syntax_context`]).
    pub(super) fn in_syntax(matcher: &DocumentMatcher, string: &SyntaxString) -> WalkState<'a> {
        let resume = matcher.inner_container().map(|inner| Resume::string(inner, 0));
        let entry = Arc::new(Entry { matcher: matcher.clone(), depth: 0 });
        WalkState::InSyntax { entry, resume, string: Box::new(string.clone()) }
    }

    /// True only when [`WalkState::step`] would surely return `None` for `byte`: the walk then
    /// skips the byte's subtree without copying the state.
    pub(super) fn refuses(&self, graph: &Graph, byte: u8) -> bool {
        match self {
            WalkState::Full(matcher) => matcher.refuses(graph, byte),
            // A string that may close here is left to the matcher.
            WalkState::InString { string, state, .. } => string.next(*state, byte) == DEAD,
            WalkState::InSyntax { .. } | WalkState::InCounted { .. } => false,
            WalkState::InNumber { number, complete, .. } => {
                // A byte that ends a number must be one JSON lets follow a value.
                let follows_value = matches!(byte, b',' | b'}' | b']') || is_ws(byte);
                !number.iter().any(|m| m.can_continue_with(byte))
                    && (!follows_value || !*complete.get_or_init(|| number.iter().any(NumberMatcher::is_accepting)))
            }
            WalkState::InContainer { inner, .. } => inner.refuses(graph, byte),
            WalkState::InKey { key, .. } => key.refuses(byte),
            WalkState::KeyClosed { after, .. } => *after != AfterQuote::Colon && !(is_ws(byte) || byte == b':'),
        }
    }

    /// True only when [`WalkState::step`] takes every nonempty `run` of bytes from here and
    /// stays alive: the walk then admits a subtree of such bytes whole. Digits inside numbers
    /// whose constraints cannot end them; whitespace between the tokens of a container.
    pub(super) fn takes(&self, run: Run) -> bool {
        match (self, run) {
            (WalkState::InNumber { number, .. }, Run::Digits) => number.iter().any(NumberMatcher::takes_any_digits),
            (WalkState::InContainer { inner, .. }, Run::Whitespace) => inner.takes_any_whitespace(),
            (WalkState::Full(matcher), Run::Whitespace) => matcher.takes_any_whitespace(),
            _ => false,
        }
    }

    /// The state after `byte`, `path` being the bytes the walk read before it; `None` when the
    /// matcher refuses it.
    pub(super) fn step(self, graph: &Graph, slack: u64, path: &[u8], byte: u8) -> Option<WalkState<'a>> {
        match self {
            WalkState::Full(mut matcher) => {
                matcher.feed(graph, byte).then(|| WalkState::entered(graph, slack, matcher, path.len() + 1))
            }
            WalkState::InString { entry, resume, string, state } => {
                let next = string.next(state, byte);
                if next == DEAD {
                    return None;
                }
                if !string.is_accepting(next) {
                    return Some(WalkState::InString { entry, resume, string, state: next });
                }
                // The string closed: the matcher decides whether it may close here.
                string_closed(graph, slack, &entry, resume, path, byte)
            }
            WalkState::InSyntax { entry, resume, mut string } => {
                match string.feed(byte) {
                    Step::Rejected => return None,
                    Step::Consumed if !string.is_complete() => {
                        return Some(WalkState::InSyntax { entry, resume, string })
                    }
                    // The string closed: the matcher decides whether it may close here.
                    _ => {}
                }
                string_closed(graph, slack, &entry, resume, path, byte)
            }
            WalkState::InCounted { entry, resume, mut string } => {
                match string.feed(byte) {
                    Step::Rejected => return None,
                    Step::Consumed if !string.is_complete() => {
                        return Some(WalkState::InCounted { entry, resume, string })
                    }
                    // The string closed: the matcher decides whether it may close here.
                    _ => {}
                }
                string_closed(graph, slack, &entry, resume, path, byte)
            }
            WalkState::InNumber { entry, resume, mut number, .. } => {
                match feed_number(&mut number, byte) {
                    Step::Consumed => {
                        return Some(WalkState::InNumber { entry, resume, number, complete: OnceCell::new() })
                    }
                    Step::Rejected => return None,
                    // The number ended: the containers decide what the byte does.
                    Step::NotMine => {}
                }
                if let Some(Ok(walk)) = resume.map(|r| r.replay(graph, slack, &entry, path, byte)) {
                    return walk;
                }
                replay(graph, slack, &entry, path, byte)
            }
            WalkState::InContainer { entry, mut inner } => match inner.feed(graph, byte) {
                Step::Consumed => Some(WalkState::within(graph, slack, entry, inner, path.len() + 1)),
                Step::Rejected => None,
                // The container closed before: the document decides.
                Step::NotMine => replay(graph, slack, &entry, path, byte),
            },
            WalkState::InKey { entry, resume, key, closing } => match key.read(byte) {
                KeyStep::Reads(key) => Some(WalkState::InKey { entry, resume, key, closing }),
                KeyStep::Refused => None,
                KeyStep::Closes => {
                    if let Some(closing) = closing {
                        if let Some(closed) = WalkState::key_closed(graph, slack, closing, &entry, &resume, path) {
                            return closed;
                        }
                    }
                    match resume.replay(graph, slack, &entry, path, byte) {
                        Ok(walk) => walk,
                        Err(()) => replay(graph, slack, &entry, path, byte),
                    }
                }
                // Half a surrogate pair: the container reads it.
                KeyStep::Unsure => match resume.replay(graph, slack, &entry, path, byte) {
                    Ok(walk) => walk,
                    Err(()) => replay(graph, slack, &entry, path, byte),
                },
            },
            WalkState::KeyClosed { entry, admitted, beyond, after } => {
                let after = match (after, byte) {
                    (AfterQuote::Colon, _) | (_, b':') => AfterQuote::Colon,
                    (_, byte) if is_ws(byte) => AfterQuote::Whitespace,
                    _ => return None,
                };
                Some(WalkState::KeyClosed { entry, admitted, beyond, after })
            }
        }
    }

    /// The walk state after the key's closing quote, read after `path`: `Some(None)` when the
    /// container refuses it; `None` when the memo cannot settle what follows (a witness is
    /// pending), the walk then steps on.
    fn key_closed(
        graph: &Graph,
        slack: u64,
        closing: KeyClosing<'a>,
        entry: &Arc<Entry>,
        resume: &Resume<'a>,
        path: &[u8],
    ) -> Option<Option<WalkState<'a>>> {
        // The key's bytes since are plain ones some allowed name goes on with.
        let mut inner = InnerContainer::clone(&resume.inner);
        if !inner.read_named_key_text(graph, &path[resume.depth..]) || inner.feed(graph, b'"') != Step::Consumed {
            return Some(None);
        }
        let schemas = inner.member_schemas(graph)?;
        let admitted = closing.memo.admitted(schemas, inner.depth(), || {
            let mut after = entry.matcher.clone();
            let closed = after.feed_all(graph, &path[entry.depth..]) && after.feed(graph, b'"');
            debug_assert!(closed, "the document takes a close its innermost container takes");
            let mut steps = 0;
            closed.then(|| closing.tails.admitted_tails(graph, slack, after, &mut steps))
        })?;
        let (entry, beyond) = (Arc::clone(entry), &closing.tails.beyond[..]);
        Some(Some(WalkState::KeyClosed { entry, admitted, beyond, after: AfterQuote::Nothing }))
    }

    /// [`WalkState::step`], reusing the walk state after a string closes in a given automaton
    /// state when the string's content does not matter past its close.
    pub(super) fn step_memo(
        self,
        graph: &Graph,
        slack: u64,
        path: &[u8],
        byte: u8,
        replays: &mut std::collections::HashMap<StateId, Option<WalkState<'a>>>,
    ) -> Option<WalkState<'a>> {
        let WalkState::InString { string, state, .. } = &self else {
            return self.step(graph, slack, path, byte);
        };
        let next = string.next(*state, byte);
        if next == DEAD || !string.is_accepting(next) {
            return self.step(graph, slack, path, byte);
        }
        if let Some(done) = replays.get(&next) {
            return done.clone();
        }
        let closed = self.step(graph, slack, path, byte);
        replays.insert(next, closed.clone());
        closed
    }

    /// The walk state inside `inner`, the innermost container of the entry matcher, at `depth`:
    /// inside a string or a number of it, their automata alone, as [`WalkState::entered`] has
    /// them.
    fn within(graph: &Graph, slack: u64, entry: Arc<Entry>, inner: InnerContainer, depth: usize) -> WalkState<'a> {
        if let Some((string, state)) = inner.string_context(graph, slack) {
            let string = Arc::clone(string);
            let resume = Some(Resume::string(inner, depth));
            return WalkState::InString { entry, resume, string, state };
        }
        if let Some(string) = inner.syntax_context() {
            let string = Box::new(string.clone());
            let resume = Some(Resume::string(inner, depth));
            return WalkState::InSyntax { entry, resume, string };
        }
        if let Some(string) = inner.counted_context() {
            let string = Box::new(string.clone());
            let resume = Some(Resume::string(inner, depth));
            return WalkState::InCounted { entry, resume, string };
        }
        if let Some(number) = inner.number_contexts() {
            let resume = Some(Resume::plain(inner, depth));
            return WalkState::InNumber { entry, resume, number, complete: OnceCell::new() };
        }
        WalkState::InContainer { entry, inner }
    }

    /// The walk state on `matcher`, at the trie node of `depth`.
    ///
    /// At the walk's root, a string or number is resumed on its innermost container: detaching
    /// it once per mask spares a replay of the whole matcher for every token that ends the
    /// value. Deeper, the walk rarely holds the whole matcher, and detaching at every such node
    /// would cost more than it spares.
    fn entered(graph: &Graph, slack: u64, matcher: DocumentMatcher, depth: usize) -> WalkState<'a> {
        let resume = |matcher: &DocumentMatcher, string: bool| {
            (depth == 0).then(|| matcher.inner_container()).flatten().map(|inner| match string {
                true => Resume::string(inner, depth),
                false => Resume::plain(inner, depth),
            })
        };
        if let Some((string, state)) = matcher.string_context(graph, slack) {
            let string = Arc::clone(string);
            let resume = resume(&matcher, true);
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InString { entry, resume, string, state };
        }
        if let Some(string) = matcher.syntax_context() {
            let string = Box::new(string.clone());
            let resume = resume(&matcher, true);
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InSyntax { entry, resume, string };
        }
        if let Some(string) = matcher.counted_context() {
            let string = Box::new(string.clone());
            let resume = resume(&matcher, true);
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InCounted { entry, resume, string };
        }
        if let Some(number) = matcher.number_contexts() {
            let resume = resume(&matcher, false);
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InNumber { entry, resume, number, complete: OnceCell::new() };
        }
        match matcher.inner_container() {
            Some(inner) => WalkState::InContainer { entry: Arc::new(Entry { matcher, depth }), inner },
            None => WalkState::Full(matcher),
        }
    }
}

/// The walk state after `byte` closed a string read alone: replayed on the innermost
/// container when known (and its closes memoised), else on the entry matcher.
fn string_closed<'a>(
    graph: &Graph,
    slack: u64,
    entry: &Arc<Entry>,
    resume: Option<Resume<'a>>,
    path: &[u8],
    byte: u8,
) -> Option<WalkState<'a>> {
    if let Some(Ok(walk)) = resume.map(|r| r.close(graph, slack, entry, path, byte)) {
        return walk;
    }
    replay(graph, slack, entry, path, byte)
}

/// The entry matcher after the path's bytes since, then `byte`, as a walk state; `None` when
/// refused.
fn replay<'a>(graph: &Graph, slack: u64, entry: &Entry, path: &[u8], byte: u8) -> Option<WalkState<'a>> {
    let mut matcher = entry.matcher.clone();
    let fed = matcher.feed_all(graph, &path[entry.depth..]) && matcher.feed(graph, byte);
    fed.then(|| WalkState::entered(graph, slack, matcher, path.len() + 1))
}

/// The walks that decide quote tails: the tails are gathered in `closing`, read here.
impl QuoteTails {
    /// The tokens with bytes after their first quote that `matcher` reads, sorted; `matcher`
    /// has just read a closing quote. Adds the trie nodes stepped to `steps`.
    pub(crate) fn admitted_tails(
        &self,
        graph: &Graph,
        slack: u64,
        matcher: DocumentMatcher,
        steps: &mut usize,
    ) -> Vec<TokenId> {
        let mut admitted = Vec::new();
        self.tails.walk_pruned(
            WalkState::enter(graph, slack, matcher),
            |walk, byte| walk.refuses(graph, byte),
            |walk, path, byte| {
                *steps += 1;
                walk.step(graph, slack, path, byte)
            },
            |_, ids| admitted.extend_from_slice(ids),
        );
        admitted.sort_unstable();
        admitted
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
        for &id in self.bare.iter().chain(&self.admitted_tails(graph, slack, matcher, steps)) {
            mask::set_bit(&mut admitted, id);
        }
        admitted
    }
}
