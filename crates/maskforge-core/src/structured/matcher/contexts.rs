//! Mask query: where the text read so far stands inside string and number automata (the
//! *contexts*), so that `bind/` can answer a whole token trie subtree from a precomputed split
//! instead of feeding the recogniser byte by byte. The recogniser never calls this module.

use std::sync::Arc;

use super::arrays::ArrayPhase;
use super::objects::{key_open, keys_are_patterns, room_for_unnamed_key, ObjectPhase, ObjectTrack};
use super::string_readers::{CountedString, SyntaxString};
use super::{DocumentMatcher, OpenStrings, OpenValue};
use crate::automata::{AutomatonId, ByteDfa, StateId, DEAD};
use crate::numbers::NumberMatcher;
use crate::structured::graph::Graph;

/// A string automaton and state a position is inside (see [`OpenValue::string_contexts`]).
pub(crate) type Context<'a> = (&'a Arc<ByteDfa>, StateId);

/// The string contexts of every child, when each child has some.
pub(super) fn children_contexts<'a>(
    graph: &'a Graph,
    slack: u64,
    mut children: impl Iterator<Item = Option<&'a OpenValue>>,
    visit: &mut dyn FnMut(Context<'a>) -> bool,
) -> bool {
    children.all(|child| child.is_some_and(|c| c.string_contexts(graph, slack, visit)))
}

impl OpenValue {
    /// The open strings (or literals) this value is inside, one per track that reads one (two
    /// for a counted string beside other strings), when
    /// the enclosing structure does not constrain their content: each automaton and state is
    /// passed to `visit`. Every token of at most `slack` bytes that stays inside one of them on
    /// its automaton must be admitted here. False when some track is not inside such a string,
    /// or `visit` said false.
    pub(super) fn string_contexts<'a>(
        &'a self,
        graph: &'a Graph,
        slack: u64,
        visit: &mut dyn FnMut(Context<'a>) -> bool,
    ) -> bool {
        let single = match self {
            OpenValue::Leaf { dfa, state } => (!dfa.is_accepting(*state)).then_some((dfa, *state)),
            OpenValue::Counted(c) => return c.string_contexts(slack, visit),
            OpenValue::Syntax(p) => p.string_context(),
            OpenValue::Object(o) => {
                return match o.phase {
                    ObjectPhase::InKey => {
                        o.tracks.iter().all(|t| t.key_context(graph, o.key_text).is_some_and(&mut *visit))
                    }
                    ObjectPhase::InValue => {
                        children_contexts(graph, slack, o.tracks.iter().map(|t| t.child.as_deref()), visit)
                    }
                    _ => false,
                };
            }
            OpenValue::Array(a) => match a.phase {
                // Under `uniqueItems` an item string with a constrained automaton may run out of
                // unseen completions; inside a string whose automaton cannot run out of
                // completions before it closes, or a string within an array or object item that
                // stays open-ended whatever the string reads next, every text still has
                // infinitely many.
                ArrayPhase::InItem
                    if a.tracks.iter().all(|t| {
                        t.seen.is_none()
                            || match t.child.as_deref() {
                                Some(OpenValue::Leaf { dfa, state }) => {
                                    Arc::ptr_eq(dfa, &graph.any_string)
                                        || graph
                                            .unbounded_strings
                                            .get(&(AutomatonId::of(dfa)))
                                            .is_some_and(|u| u.throughout[*state as usize])
                                }
                                Some(container @ (OpenValue::Object(_) | OpenValue::Array(_))) => {
                                    container.open_ended(graph, OpenStrings::Throughout)
                                }
                                _ => true,
                            }
                    }) =>
                {
                    return children_contexts(graph, slack, a.tracks.iter().map(|t| t.child.as_deref()), visit);
                }
                _ => None,
            },
            OpenValue::Start(_) | OpenValue::Number(_) => None,
        };
        single.is_some_and(visit)
    }

    /// The state of the unconstrained string (a value or a key) this value is inside, when
    /// some track reads it so that every token staying inside keeps that track alive: then the
    /// mask admits those tokens whatever the other tracks do. `None` when no track does.
    pub(super) fn open_string_track(&self, graph: &Graph) -> Option<StateId> {
        match self {
            OpenValue::Leaf { dfa, state } if Arc::ptr_eq(dfa, &graph.any_string) && !dfa.is_accepting(*state) => {
                Some(*state)
            }
            OpenValue::Object(o) => match o.phase {
                ObjectPhase::InKey => o.tracks.iter().any(|t| t.takes_any_key(graph)).then_some(o.key_text),
                ObjectPhase::InValue => o.tracks.iter().find_map(|t| t.child.as_deref()?.open_string_track(graph)),
                _ => None,
            },
            // Under `uniqueItems` an item may run out of unseen values: it must keep infinitely
            // many completions whatever the string reads next.
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem => a.tracks.iter().find_map(|t| match t.seen {
                None => t.child.as_deref()?.open_string_track(graph),
                Some(_) => t.child.as_deref()?.open_string_track_throughout(graph),
            }),
            _ => None,
        }
    }

    /// [`OpenValue::open_string_track`], where the track reading the unconstrained string also
    /// keeps infinitely many completions whatever the string reads next (an item compared with
    /// the items before it then always has an unseen one).
    pub(super) fn open_string_track_throughout(&self, graph: &Graph) -> Option<StateId> {
        match self {
            OpenValue::Leaf { .. } => {
                self.open_string_track(graph).filter(|_| self.open_ended(graph, OpenStrings::Throughout))
            }
            OpenValue::Object(o) => match o.phase {
                ObjectPhase::InKey => o
                    .tracks
                    .iter()
                    .any(|t| t.takes_any_key(graph) && t.open_ended(graph, o.phase, OpenStrings::Throughout))
                    .then_some(o.key_text),
                ObjectPhase::InValue => {
                    o.tracks.iter().find_map(|t| t.child.as_deref()?.open_string_track_throughout(graph))
                }
                _ => None,
            },
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem => {
                a.tracks.iter().find_map(|t| t.child.as_deref()?.open_string_track_throughout(graph))
            }
            _ => None,
        }
    }

    /// The string with a reader of its own (a syntax's, or a counted one) this value is inside,
    /// when one track reads it through containers that only hand it bytes (as for
    /// [`OpenValue::string_contexts`], with a single track at each level): a mask's walk may
    /// then carry the string's reading alone until it closes.
    ///
    /// Several tracks may read one counted string alike (the same property of several object
    /// shapes under `anyOf`): their readings are then one.
    fn lone_read_string(&self) -> Option<&OpenValue> {
        match self {
            OpenValue::Syntax(_) | OpenValue::Counted(_) => Some(self),
            OpenValue::Object(o) if o.phase == ObjectPhase::InValue => match &o.tracks[..] {
                [track] => track.child.as_deref()?.lone_read_string(),
                tracks => counted_alike(tracks.iter().map(|t| t.child.as_deref())),
            },
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem => match &a.tracks[..] {
                [track] if track.seen.is_none() => track.child.as_deref()?.lone_read_string(),
                tracks if tracks.iter().all(|t| t.seen.is_none()) => {
                    counted_alike(tracks.iter().map(|t| t.child.as_deref()))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The open syntax string (`format: "regex"`, a host name) this value is inside, read
    /// alone (see [`OpenValue::lone_read_string`]).
    pub(super) fn syntax_context(&self) -> Option<&SyntaxString> {
        match self.lone_read_string()? {
            OpenValue::Syntax(p) if !p.is_complete() => Some(p),
            _ => None,
        }
    }

    /// The open counted string this value is inside, read alone (see
    /// [`OpenValue::lone_read_string`]): where its automaton cannot decide the tokens alone
    /// (near the bound, or beside other strings), a walk carries its counter.
    pub(super) fn counted_context(&self) -> Option<&CountedString> {
        match self.lone_read_string()? {
            OpenValue::Counted(c) if !c.is_complete() => Some(c),
            _ => None,
        }
    }

    /// The string automaton and state a mask's walk may carry alone inside this value: the
    /// unconstrained string when a track reads one (it decides the tokens that stay inside),
    /// else the one string every track reads alike.
    pub(super) fn walk_string_context<'a>(
        &'a self,
        graph: &'a Graph,
        slack: u64,
    ) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if let Some(state) = self.open_string_track(graph) {
            return Some((&graph.any_string, state));
        }
        self.string_context(graph, slack)
    }

    /// The one open string this value is inside, when every track reads the same (see
    /// [`OpenValue::string_contexts`]).
    pub(super) fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        let mut first: Option<Context<'a>> = None;
        let shared = self.string_contexts(graph, slack, &mut |c| match first {
            None => {
                first = Some(c);
                true
            }
            Some(f) => Arc::ptr_eq(f.0, c.0) && f.1 == c.1,
        });
        first.filter(|_| shared)
    }

    /// The numbers this value is reading, one list of constraint sets per track, appended to
    /// `out` (flattened: the value goes on while any of them does), when every enclosing
    /// container only hands bytes on to them (no `uniqueItems` text): while some number
    /// consumes a byte, so does this value, and a byte every number refuses, it refuses. False
    /// when some track is not inside a number (`out` is then unspecified).
    pub(super) fn number_contexts(&self, out: &mut Vec<NumberMatcher>) -> bool {
        match self {
            OpenValue::Number(matchers) => {
                out.extend(matchers.iter().cloned());
                true
            }
            OpenValue::Object(o) if o.phase == ObjectPhase::InValue => {
                o.tracks.iter().all(|t| t.child.as_deref().is_some_and(|c| c.number_contexts(out)))
            }
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem => {
                a.tracks.iter().all(|t| t.seen.is_none() && t.child.as_deref().is_some_and(|c| c.number_contexts(out)))
            }
            _ => false,
        }
    }

    /// The string values at the leaves of this value, into `out` without repeats, when every
    /// container on the way reads the open string only through them: objects inside a member's
    /// value and arrays inside an item, with no witness or `contains` probe reading it too and
    /// no item text kept (`uniqueItems`). False otherwise.
    pub(super) fn string_values<'a>(&'a self, out: &mut Vec<&'a OpenValue>) -> bool {
        fn children_values<'a>(
            mut children: impl Iterator<Item = Option<&'a OpenValue>>,
            out: &mut Vec<&'a OpenValue>,
        ) -> bool {
            children.all(|child| child.is_some_and(|c| c.string_values(out)))
        }
        match self {
            OpenValue::Leaf { .. } | OpenValue::Counted(_) | OpenValue::Syntax(_) => {
                if !out.iter().any(|v| std::ptr::eq(*v, self)) {
                    out.push(self);
                }
                true
            }
            OpenValue::Object(o) => {
                o.phase == ObjectPhase::InValue
                    && o.tracks.iter().all(|t| t.probe.is_none())
                    && children_values(o.tracks.iter().map(|t| t.child.as_deref()), out)
            }
            OpenValue::Array(a) => {
                a.phase == ArrayPhase::InItem
                    && !a.keeps_text
                    && a.tracks.iter().all(|t| t.probe.is_none() && t.seen.is_none())
                    && children_values(a.tracks.iter().map(|t| t.child.as_deref()), out)
            }
            OpenValue::Start(_) | OpenValue::Number(_) => false,
        }
    }

    /// Whether the open string's content is forgotten once it closes: the matcher after the
    /// closing quote is then the same for every content its automaton admitted (a value leaf,
    /// not a key, a counted string or an item read against `contains`). Each track's leaf goes
    /// to `visit`, in track order.
    pub(super) fn string_leaves<'a>(&'a self, visit: &mut dyn FnMut(Context<'a>)) -> bool {
        match self {
            OpenValue::Leaf { dfa, state } => {
                visit((dfa, *state));
                true
            }
            OpenValue::Object(o) => {
                o.phase == ObjectPhase::InValue
                    && o.tracks
                        .iter()
                        .all(|t| t.probe.is_none() && t.child.as_deref().is_some_and(|c| c.string_leaves(visit)))
            }
            OpenValue::Array(a) => {
                a.phase == ArrayPhase::InItem
                    && a.tracks.iter().all(|t| {
                        t.probe.is_none()
                            && t.seen.is_none()
                            && t.child.as_deref().is_some_and(|c| c.string_leaves(visit))
                    })
            }
            OpenValue::Start(_) | OpenValue::Number(_) | OpenValue::Counted(_) | OpenValue::Syntax(_) => false,
        }
    }
}

impl SyntaxString {
    /// Only the other strings' automaton, once the syntax's reading is over.
    pub(super) fn string_context(&self) -> Option<(&Arc<ByteDfa>, StateId)> {
        if self.reading.is_some() {
            return None;
        }
        self.alt.as_ref().filter(|(dfa, state)| !dfa.is_accepting(*state)).map(|(dfa, state)| (dfa, *state))
    }
}

impl DocumentMatcher {
    /// See [`OpenValue::string_leaves`].
    pub(crate) fn string_content_forgotten(&self) -> bool {
        !self.trailing && self.started && self.value.string_leaves(&mut |_| {})
    }

    /// Each track's automaton and state inside the open string, in track order, when its content
    /// is forgotten at the close (see [`OpenValue::string_leaves`]): the matcher then changes only in
    /// these states until the string closes, and they decide everything after it.
    pub(crate) fn forgotten_string_leaves(&self) -> Option<Vec<Context<'_>>> {
        let mut leaves = Vec::new();
        (!self.trailing && self.started && self.value.string_leaves(&mut |leaf| leaves.push(leaf))).then_some(leaves)
    }

    /// Whether the matcher after the quote that closes the string it is inside depends only on
    /// the automaton state the quote leads to: every track reads the string on one automaton,
    /// in one state, and forgets its content at the close.
    pub(crate) fn closing_forgets_content(&self, graph: &Graph) -> bool {
        self.string_content_forgotten() && self.value.string_context(graph, 0).is_some()
    }

    /// See [`OpenValue::string_context`].
    pub(crate) fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if self.trailing || !self.started {
            return None;
        }
        self.value.walk_string_context(graph, slack)
    }

    /// See [`OpenValue::syntax_context`].
    pub(crate) fn syntax_context(&self) -> Option<&SyntaxString> {
        if self.trailing || !self.started {
            return None;
        }
        self.value.syntax_context()
    }

    /// See [`OpenValue::counted_context`].
    pub(crate) fn counted_context(&self) -> Option<&CountedString> {
        if self.trailing || !self.started {
            return None;
        }
        self.value.counted_context()
    }

    /// See [`OpenValue::number_contexts`]: `None` unless every track is inside a number.
    pub(crate) fn number_contexts(&self) -> Option<Vec<NumberMatcher>> {
        if self.trailing || !self.started {
            return None;
        }
        let mut numbers = Vec::new();
        self.value.number_contexts(&mut numbers).then_some(numbers)
    }

    /// See [`OpenValue::string_contexts`]: `None` unless every track is inside some string.
    pub(crate) fn string_contexts<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<Vec<Context<'a>>> {
        if self.trailing || !self.started {
            return None;
        }
        // The unconstrained string's rows hold every other automaton's at the same text.
        if let Some(state) = self.value.open_string_track(graph) {
            return Some(vec![(&graph.any_string, state)]);
        }
        let mut contexts: Vec<Context<'a>> = Vec::new();
        let all = self.value.string_contexts(graph, slack, &mut |c| {
            if !contexts.iter().any(|d| Arc::ptr_eq(d.0, c.0) && d.1 == c.1) {
                contexts.push(c);
            }
            true
        });
        all.then_some(contexts)
    }
}

impl ObjectTrack {
    pub(super) fn key_context<'g>(&self, graph: &'g Graph, key_text: StateId) -> Option<(&'g Arc<ByteDfa>, StateId)> {
        let shape = self.shape(graph);
        if keys_are_patterns(shape) {
            // The key's syntax decides too: no automaton alone does.
            return None;
        }
        if key_open(graph, shape, &self.seen, self.pending) {
            return Some((&graph.any_string, key_text));
        }
        let keys = shape.keys.as_ref()?;
        let text = keys.context_text.as_ref()?;
        let live = self.context_key != DEAD && keys.context_from[self.context_key as usize];
        (live && room_for_unnamed_key(graph, shape, &self.seen, self.pending)).then_some((text, self.context_key))
    }
}

/// The counted string every one of `children` reads alone, when they all read it alike.
fn counted_alike<'a>(children: impl Iterator<Item = Option<&'a OpenValue>>) -> Option<&'a OpenValue> {
    let mut first: Option<(&OpenValue, &CountedString)> = None;
    for child in children {
        let read = child?.lone_read_string()?;
        let OpenValue::Counted(counted) = read else { return None };
        match first {
            None => first = Some((read, counted)),
            Some((_, kept)) if kept.reads_alike(counted) => {}
            Some(_) => return None,
        }
    }
    first.map(|(read, _)| read)
}
