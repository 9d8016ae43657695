//! The state of a structured mask's walk over a token trie: the matcher, stepped one byte per
//! trie node, copied at every node whose children are alive.
//!
//! Copying the whole matcher at every node would dominate: inside a string whose content its
//! automaton alone decides, inside numbers their containers only hand bytes to, and between the
//! values of the innermost container, the walk carries that part alone, with the matcher where
//! it was entered. The bytes read since are the trie path (the walk passes it to each step), so
//! where the part ends (the string closes, the number ends, the container closes) they are
//! replayed on the entry matcher, or on the innermost container when that is known.

use std::cell::OnceCell;
use std::sync::Arc;

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::numbers::NumberMatcher;
use crate::structured::{feed_number, DocumentMatcher, Graph, InnerContainer, Step};

/// The matcher a walk state was entered from, and the depth of the trie node it was entered at:
/// the walk's path from that depth on is what it read since.
pub(super) struct Entry {
    matcher: DocumentMatcher,
    depth: usize,
}

#[derive(Clone)]
pub(super) enum WalkState {
    Full(DocumentMatcher),
    /// Inside a string every track reads on `string` (or whose tokens the unconstrained string
    /// decides).
    InString {
        entry: Arc<Entry>,
        /// Where the string's close is replayed from, when known.
        resume: Option<Resume>,
        string: Arc<ByteDfa>,
        state: StateId,
    },
    /// Inside numbers, each track's constraint sets flattened.
    InNumber {
        entry: Arc<Entry>,
        resume: Option<Resume>,
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
}

/// The innermost container around a string or number a walk reads alone, and the depth at
/// which the walk held it: where the string closes or the number ends, the bytes since are
/// replayed on a copy of it rather than on the whole matcher from the walk's entry. The
/// containers above only hand it bytes, so it decides as the whole matcher would, until it
/// closes.
#[derive(Clone)]
pub(super) struct Resume {
    inner: Arc<InnerContainer>,
    depth: usize,
}

impl Resume {
    /// The walk state after the container reads `path[depth..]` then `byte`; `None` when it
    /// refuses one, `Err` when it closes on the way (the whole matcher decides then).
    fn replay(
        &self,
        graph: &Graph,
        slack: u64,
        entry: &Arc<Entry>,
        path: &[u8],
        byte: u8,
    ) -> Result<Option<WalkState>, ()> {
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
}

impl WalkState {
    /// The walk's start, at the trie's root, on `matcher`.
    pub(super) fn enter(graph: &Graph, slack: u64, matcher: DocumentMatcher) -> WalkState {
        WalkState::entered(graph, slack, matcher, 0)
    }

    /// The walk's start inside `string` at `state`, the string the matcher is inside.
    pub(super) fn in_string(matcher: &DocumentMatcher, string: &Arc<ByteDfa>, state: StateId) -> WalkState {
        let resume = matcher.inner_container().map(|inner| Resume { inner: Arc::new(inner), depth: 0 });
        let entry = Arc::new(Entry { matcher: matcher.clone(), depth: 0 });
        WalkState::InString { entry, resume, string: Arc::clone(string), state }
    }

    /// True only when [`WalkState::step`] would surely return `None` for `byte`: the walk then
    /// skips the byte's subtree without copying the state.
    pub(super) fn refuses(&self, graph: &Graph, byte: u8) -> bool {
        match self {
            WalkState::Full(matcher) => matcher.refuses(graph, byte),
            // A string that may close here is left to the matcher.
            WalkState::InString { string, state, .. } => string.next(*state, byte) == DEAD,
            WalkState::InNumber { number, complete, .. } => {
                !number.iter().any(|m| m.can_continue_with(byte))
                    && !*complete.get_or_init(|| number.iter().any(NumberMatcher::is_accepting))
            }
            WalkState::InContainer { inner, .. } => inner.refuses(graph, byte),
        }
    }

    /// The state after `byte`, `path` being the bytes the walk read before it; `None` when the
    /// matcher refuses it.
    pub(super) fn step(self, graph: &Graph, slack: u64, path: &[u8], byte: u8) -> Option<WalkState> {
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
                if let Some(Ok(walk)) = resume.map(|r| r.replay(graph, slack, &entry, path, byte)) {
                    return walk;
                }
                replay(graph, slack, &entry, path, byte)
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
        }
    }

    /// [`WalkState::step`], reusing the walk state after a string closes in a given automaton
    /// state when the string's content does not matter past its close.
    pub(super) fn step_memo(
        self,
        graph: &Graph,
        slack: u64,
        path: &[u8],
        byte: u8,
        replays: &mut std::collections::HashMap<StateId, Option<WalkState>>,
    ) -> Option<WalkState> {
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
    fn within(graph: &Graph, slack: u64, entry: Arc<Entry>, inner: InnerContainer, depth: usize) -> WalkState {
        if let Some((string, state)) = inner.string_context(graph, slack) {
            let string = Arc::clone(string);
            let resume = Some(Resume { inner: Arc::new(inner), depth });
            return WalkState::InString { entry, resume, string, state };
        }
        match inner.number_contexts() {
            Some(number) => {
                let resume = Some(Resume { inner: Arc::new(inner), depth });
                WalkState::InNumber { entry, resume, number, complete: OnceCell::new() }
            }
            None => WalkState::InContainer { entry, inner },
        }
    }

    /// The walk state on `matcher`, at the trie node of `depth`.
    fn entered(graph: &Graph, slack: u64, matcher: DocumentMatcher, depth: usize) -> WalkState {
        if let Some((string, state)) = matcher.string_context(graph, slack) {
            let string = Arc::clone(string);
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InString { entry, resume: None, string, state };
        }
        if let Some(number) = matcher.number_contexts() {
            let entry = Arc::new(Entry { matcher, depth });
            return WalkState::InNumber { entry, resume: None, number, complete: OnceCell::new() };
        }
        match matcher.inner_container() {
            Some(inner) => WalkState::InContainer { entry: Arc::new(Entry { matcher, depth }), inner },
            None => WalkState::Full(matcher),
        }
    }
}

/// The entry matcher after the path's bytes since, then `byte`, as a walk state; `None` when
/// refused.
fn replay(graph: &Graph, slack: u64, entry: &Entry, path: &[u8], byte: u8) -> Option<WalkState> {
    let mut matcher = entry.matcher.clone();
    let fed = matcher.feed_all(graph, &path[entry.depth..]) && matcher.feed(graph, byte);
    fed.then(|| WalkState::entered(graph, slack, matcher, path.len() + 1))
}
