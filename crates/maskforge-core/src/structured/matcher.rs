//! The structured matcher: a byte-at-a-time recogniser over the schema graph. Its state is the
//! path of open JSON values; each open object or array tracks every shape (from `anyOf`) that
//! can still match, each with its own child. Every state it reaches can still be completed.

use std::sync::{Arc, OnceLock};

use super::graph::{
    addable_optional_keys, contains_reachable, reachable_items, witness_reachable, ArrayShape, Graph, NodeId,
    ObjectShape, PrefixRuns, SeenKeys,
};
use super::hostname::HostnameReader;
use super::pattern_syntax::PatternSyntax;
use super::strings::{CodePointCounter, DecodeStep, StringDecoder};
use super::unique::{self, Canon};
use crate::automata::{ByteDfa, StateId, DEAD};
use crate::numbers::NumberMatcher;
use crate::schema::strings::{LengthRange, StringSyntax};

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Feeds a member's or item's value, copying it first when another matcher shares it. Values
/// below a container are shared between copies of the matcher (a mask's trie walk copies it at
/// every node), so a copy costs the open containers along the path, not the whole tree.
///
/// Tracks of one container may also share a value (started on the same schema node, see
/// [`start_shared`]): `fed` remembers, for this byte, each shared value already fed, so that
/// the other tracks take the result instead of copying and feeding it again (many shapes of
/// an `anyOf` read the same member alike).
fn feed_shared(value: &mut Arc<Value>, graph: &Graph, b: u8, fed: &mut FedValues) -> Step {
    let before = Arc::as_ptr(value);
    // A value held by one track only cannot recur: feed it in place, nothing to remember.
    if Arc::strong_count(value) == 1 {
        return Arc::get_mut(value).expect("held once").feed(graph, b);
    }
    if !fed.remember {
        return Arc::make_mut(value).feed(graph, b);
    }
    if let Some(done) = fed.done.iter().find(|done| done.before == before) {
        *value = Arc::clone(&done.after);
        return done.step;
    }
    let step = Arc::make_mut(value).feed(graph, b);
    fed.done.push(FedValue { before, after: Arc::clone(value), step });
    step
}

/// The shared values of one container fed one byte, remembered only where two of its values
/// can be one (several tracks, or a probe beside the value): a lone track's value recurs
/// nowhere, and the walk of a mask feeds such containers at every trie node.
struct FedValues {
    remember: bool,
    done: Vec<FedValue>,
}

impl FedValues {
    fn new<T>(tracks: &[T], probe: impl Fn(&T) -> bool) -> FedValues {
        FedValues { remember: tracks.len() > 1 || tracks.iter().any(probe), done: Vec::new() }
    }
}

/// A shared value fed one byte: its address before, the value after and the outcome. The
/// address is compared only while the tracks still holding that value keep it alive.
struct FedValue {
    before: *const Value,
    after: Arc<Value>,
    step: Step,
}

/// Starts the value of a member or item on `node` with the byte `b`, sharing the value with an
/// earlier track of the same container started on the same node (`started`); `None` when the
/// byte cannot start it.
fn start_shared(
    graph: &Graph,
    node: NodeId,
    b: u8,
    started: &mut Vec<(NodeId, Option<Arc<Value>>)>,
) -> Option<Arc<Value>> {
    if let Some((_, value)) = started.iter().find(|(n, _)| *n == node) {
        return value.clone();
    }
    let mut value = Value::Start(node);
    let value = (value.feed(graph, b) == Step::Consumed).then(|| Arc::new(value));
    started.push((node, value.clone()));
    value
}

/// Feeds one byte to a number read against each of its constraint sets still alive.
/// `NotMine` when the byte cannot continue the number but the number is complete.
pub(crate) fn feed_number(matchers: &mut Vec<NumberMatcher>, b: u8) -> Step {
    if matchers.iter().any(|m| m.can_continue_with(b)) {
        matchers.retain_mut(|m| m.feed(b));
        if matchers.is_empty() {
            Step::Rejected
        } else {
            Step::Consumed
        }
    } else if matchers.iter().any(NumberMatcher::is_accepting) {
        Step::NotMine
    } else {
        Step::Rejected
    }
}

/// The outcome of feeding one byte to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Consumed,
    Rejected,
    /// The value was already complete; the byte belongs to the enclosing context.
    NotMine,
}

/// How [`Value::open_ended`] counts the open string a value is inside (if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenStrings {
    /// As it reads now.
    Now,
    /// After whatever it reads next without closing (its automaton's states up to the close
    /// all have infinitely many completions; patterns and keys are not counted).
    Throughout,
}

/// One JSON value being read.
#[derive(Debug, Clone)]
enum Value {
    /// Before its first byte.
    Start(NodeId),
    /// Strings and literals: a DFA over the whole text.
    Leaf {
        dfa: Arc<ByteDfa>,
        state: StateId,
    },
    /// Strings admitted by length alone, with the node's other strings alongside.
    Counted(Box<CountedString>),
    /// Strings read by a syntax (patterns, host names), with the node's other strings alongside.
    Syntax(Box<SyntaxString>),
    /// One matcher per constraint set still alive (a disjunction).
    Number(Vec<NumberMatcher>),
    Object(ObjectValue),
    Array(ArrayValue),
}

impl Value {
    /// The open strings (or literals) this value is inside, one per track that reads one, when
    /// the enclosing structure does not constrain their content: each automaton and state is
    /// passed to `visit`. Every token of at most `slack` bytes that stays inside one of them on
    /// its automaton must be admitted here. False when some track is not inside such a string,
    /// or `visit` said false.
    fn string_contexts<'a>(&'a self, graph: &'a Graph, slack: u64, visit: &mut dyn FnMut(Context<'a>) -> bool) -> bool {
        let single = match self {
            Value::Leaf { dfa, state } => (!dfa.is_accepting(*state)).then_some((dfa, *state)),
            Value::Counted(c) => c.string_context(graph, slack),
            Value::Syntax(p) => p.string_context(),
            Value::Object(o) => {
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
            Value::Array(a) => match a.phase {
                // Under `uniqueItems` an item string with a constrained automaton may run out of
                // unseen completions; inside a string whose automaton cannot run out of
                // completions before it closes, or a string within an array or object item that
                // stays open-ended whatever the string reads next, every text still has
                // infinitely many.
                ArrayPhase::InItem
                    if a.tracks.iter().all(|t| {
                        t.seen.is_none()
                            || match t.child.as_deref() {
                                Some(Value::Leaf { dfa, state }) => {
                                    Arc::ptr_eq(dfa, &graph.any_string)
                                        || graph
                                            .unbounded_strings
                                            .get(&(Arc::as_ptr(dfa) as usize))
                                            .is_some_and(|u| u.throughout[*state as usize])
                                }
                                Some(container @ (Value::Object(_) | Value::Array(_))) => {
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
            Value::Start(_) | Value::Number(_) => None,
        };
        single.is_some_and(visit)
    }

    /// The state of the unconstrained string (a value or a key) this value is inside, when
    /// some track reads it so that every token staying inside keeps that track alive: then the
    /// mask admits those tokens whatever the other tracks do. `None` when no track does.
    fn open_string_track(&self, graph: &Graph) -> Option<StateId> {
        match self {
            Value::Leaf { dfa, state } if Arc::ptr_eq(dfa, &graph.any_string) && !dfa.is_accepting(*state) => {
                Some(*state)
            }
            Value::Object(o) => match o.phase {
                ObjectPhase::InKey => o.tracks.iter().any(|t| t.takes_any_key(graph)).then_some(o.key_text),
                ObjectPhase::InValue => o.tracks.iter().find_map(|t| t.child.as_deref()?.open_string_track(graph)),
                _ => None,
            },
            // Under `uniqueItems` an item may run out of unseen values: it must keep infinitely
            // many completions whatever the string reads next.
            Value::Array(a) if a.phase == ArrayPhase::InItem => a.tracks.iter().find_map(|t| match t.seen {
                None => t.child.as_deref()?.open_string_track(graph),
                Some(_) => t.child.as_deref()?.open_string_track_throughout(graph),
            }),
            _ => None,
        }
    }

    /// [`Value::open_string_track`], where the track reading the unconstrained string also
    /// keeps infinitely many completions whatever the string reads next (an item compared with
    /// the items before it then always has an unseen one).
    fn open_string_track_throughout(&self, graph: &Graph) -> Option<StateId> {
        match self {
            Value::Leaf { .. } => {
                self.open_string_track(graph).filter(|_| self.open_ended(graph, OpenStrings::Throughout))
            }
            Value::Object(o) => match o.phase {
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
            Value::Array(a) if a.phase == ArrayPhase::InItem => {
                a.tracks.iter().find_map(|t| t.child.as_deref()?.open_string_track_throughout(graph))
            }
            _ => None,
        }
    }

    /// The string automaton and state a mask's walk may carry alone inside this value: the
    /// unconstrained string when a track reads one (it decides the tokens that stay inside),
    /// else the one string every track reads alike.
    fn walk_string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if let Some(state) = self.open_string_track(graph) {
            return Some((&graph.any_string, state));
        }
        self.string_context(graph, slack)
    }

    /// The one open string this value is inside, when every track reads the same (see
    /// [`Value::string_contexts`]).
    fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
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
    fn number_contexts(&self, out: &mut Vec<NumberMatcher>) -> bool {
        match self {
            Value::Number(matchers) => {
                out.extend(matchers.iter().cloned());
                true
            }
            Value::Object(o) if o.phase == ObjectPhase::InValue => {
                o.tracks.iter().all(|t| t.child.as_deref().is_some_and(|c| c.number_contexts(out)))
            }
            Value::Array(a) if a.phase == ArrayPhase::InItem => {
                a.tracks.iter().all(|t| t.seen.is_none() && t.child.as_deref().is_some_and(|c| c.number_contexts(out)))
            }
            _ => false,
        }
    }

    /// Whether this is an open container between its tokens, where whitespace changes nothing.
    fn between_tokens(&self) -> bool {
        match self {
            Value::Object(o) => match o.phase {
                ObjectPhase::AfterOpen
                | ObjectPhase::AfterKey
                | ObjectPhase::AfterColon
                | ObjectPhase::AfterValue
                | ObjectPhase::AfterComma => true,
                // A member's value that whitespace ends leaves every track alive, and the
                // object then reads whitespace.
                ObjectPhase::InValue => children_take_whitespace(o.tracks.iter().map(|t| t.child.as_deref())),
                ObjectPhase::InKey | ObjectPhase::Closed => false,
            },
            Value::Array(a) => match a.phase {
                ArrayPhase::AfterOpen | ArrayPhase::AfterItem | ArrayPhase::AfterComma => true,
                // Items whose text is kept (`uniqueItems`) are checked at every byte.
                ArrayPhase::InItem => {
                    !a.keeps_text
                        && a.tracks.iter().all(|t| t.seen.is_none())
                        && children_take_whitespace(a.tracks.iter().map(|t| t.child.as_deref()))
                }
                ArrayPhase::Closed => false,
            },
            _ => false,
        }
    }

    /// The schemas of the value about to start in the containers at the leaves of this value,
    /// into `out`, when the containers on the way hand bytes on to their tracks' values and
    /// those containers start it on one schema per track: no `contains` deciding how the item is
    /// read, no `uniqueItems` comparing it. A track then survives the value's bytes exactly
    /// while its value does (a witness or `contains` probe reading it too drops out on its own),
    /// and a container while one of its tracks does: a token that stays inside the value is
    /// taken exactly when some schema's value takes it alone.
    fn value_start_nodes(&self, graph: &Graph, out: &mut Vec<NodeId>) -> bool {
        match self {
            Value::Object(o) => match o.phase {
                ObjectPhase::InValue => {
                    o.tracks.iter().all(|t| t.child.as_deref().is_some_and(|c| c.value_start_nodes(graph, out)))
                }
                ObjectPhase::AfterColon => {
                    let key = o.key.value();
                    out.extend(o.tracks.iter().map(|t| t.value_schema(graph, key)));
                    true
                }
                _ => false,
            },
            Value::Array(a) if a.keeps_text || a.tracks.iter().any(|t| t.seen.is_some()) => false,
            Value::Array(a) => match a.phase {
                ArrayPhase::InItem => {
                    a.tracks.iter().all(|t| t.child.as_deref().is_some_and(|c| c.value_start_nodes(graph, out)))
                }
                // The comma kept the tracks with an item left.
                ArrayPhase::AfterComma if a.tracks.iter().all(|t| t.shape(graph).contains.is_none()) => {
                    out.extend(a.tracks.iter().map(|t| t.shape(graph).item(t.count)));
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The string values at the leaves of this value, into `out` without repeats, when every
    /// container on the way reads the open string only through them: objects inside a member's
    /// value and arrays inside an item, with no witness or `contains` probe reading it too and
    /// no item text kept (`uniqueItems`). False otherwise.
    fn string_values<'a>(&'a self, out: &mut Vec<&'a Value>) -> bool {
        fn children_values<'a>(
            mut children: impl Iterator<Item = Option<&'a Value>>,
            out: &mut Vec<&'a Value>,
        ) -> bool {
            children.all(|child| child.is_some_and(|c| c.string_values(out)))
        }
        match self {
            Value::Leaf { .. } | Value::Counted(_) | Value::Syntax(_) => {
                if !out.iter().any(|v| std::ptr::eq(*v, self)) {
                    out.push(self);
                }
                true
            }
            Value::Object(o) => {
                o.phase == ObjectPhase::InValue
                    && o.tracks.iter().all(|t| t.probe.is_none())
                    && children_values(o.tracks.iter().map(|t| t.child.as_deref()), out)
            }
            Value::Array(a) => {
                a.phase == ArrayPhase::InItem
                    && !a.keeps_text
                    && a.tracks.iter().all(|t| t.probe.is_none() && t.seen.is_none())
                    && children_values(a.tracks.iter().map(|t| t.child.as_deref()), out)
            }
            Value::Start(_) | Value::Number(_) => false,
        }
    }

    /// True only when [`Value::feed`] would return `NotMine` for `b`: the value is complete and
    /// `b` cannot continue it (the byte then belongs to the container around it).
    fn yields(&self, b: u8) -> bool {
        match self {
            Value::Leaf { dfa, state } => dfa.is_accepting(*state) && dfa.next(*state, b) == DEAD,
            Value::Number(matchers) => {
                !matchers.iter().any(|m| m.can_continue_with(b)) && matchers.iter().any(NumberMatcher::is_accepting)
            }
            Value::Object(o) => o.phase == ObjectPhase::Closed,
            Value::Array(a) => a.phase == ArrayPhase::Closed,
            Value::Start(_) | Value::Counted(_) | Value::Syntax(_) => false,
        }
    }

    /// Whether the innermost open value is a string (or key) still open: whitespace there is
    /// content, not insignificant.
    fn in_string(&self, graph: &Graph) -> bool {
        let child_in_string = |child: Option<&Value>| child.is_some_and(|c| c.in_string(graph));
        match self {
            Value::Leaf { dfa, state } => !dfa.is_accepting(*state),
            Value::Counted(c) => !c.is_complete(graph),
            Value::Syntax(p) => !p.is_complete(),
            Value::Object(o) => match o.phase {
                ObjectPhase::InKey => true,
                ObjectPhase::InValue => child_in_string(o.tracks.first().and_then(|t| t.child.as_deref())),
                _ => false,
            },
            Value::Array(a) => {
                a.phase == ArrayPhase::InItem && child_in_string(a.tracks.first().and_then(|t| t.child.as_deref()))
            }
            Value::Start(_) | Value::Number(_) => false,
        }
    }

    /// Whether the open string's content is forgotten once it closes: the matcher after the
    /// closing quote is then the same for every content its automaton admitted (a value leaf,
    /// not a key, a counted string or an item read against `contains`). Each track's leaf goes
    /// to `visit`, in track order.
    fn string_leaves<'a>(&'a self, visit: &mut dyn FnMut(Context<'a>)) -> bool {
        match self {
            Value::Leaf { dfa, state } => {
                visit((dfa, *state));
                true
            }
            Value::Object(o) => {
                o.phase == ObjectPhase::InValue
                    && o.tracks
                        .iter()
                        .all(|t| t.probe.is_none() && t.child.as_deref().is_some_and(|c| c.string_leaves(visit)))
            }
            Value::Array(a) => {
                a.phase == ArrayPhase::InItem
                    && a.tracks.iter().all(|t| {
                        t.probe.is_none()
                            && t.seen.is_none()
                            && t.child.as_deref().is_some_and(|c| c.string_leaves(visit))
                    })
            }
            Value::Start(_) | Value::Number(_) | Value::Counted(_) | Value::Syntax(_) => false,
        }
    }

    fn is_complete(&self, graph: &Graph) -> bool {
        match self {
            Value::Start(_) => false,
            Value::Leaf { dfa, state } => dfa.is_accepting(*state),
            Value::Counted(c) => c.is_complete(graph),
            Value::Syntax(p) => p.is_complete(),
            Value::Number(matchers) => matchers.iter().any(NumberMatcher::is_accepting),
            Value::Object(o) => o.phase == ObjectPhase::Closed,
            Value::Array(a) => a.phase == ArrayPhase::Closed,
        }
    }

    /// Whether infinitely many values complete this one: a sound test (false may still have
    /// infinitely many). `strings` says how the open string inside it counts: as it reads now,
    /// or so that the verdict holds whatever the string reads next without closing.
    fn open_ended(&self, graph: &Graph, strings: OpenStrings) -> bool {
        let unbounded = |dfa: &Arc<ByteDfa>| graph.unbounded_strings.get(&(Arc::as_ptr(dfa) as usize));
        match self {
            Value::Start(node) => graph.infinite[*node as usize],
            Value::Leaf { dfa, state } => {
                !dfa.is_accepting(*state)
                    && match strings {
                        OpenStrings::Now => unbounded(dfa).is_some_and(|u| u.from[*state as usize]),
                        OpenStrings::Throughout => unbounded(dfa).is_some_and(|u| u.throughout[*state as usize]),
                    }
            }
            Value::Counted(c) => match strings {
                OpenStrings::Now => c.open_ended(graph),
                OpenStrings::Throughout => c.open_ended(graph) && c.range.max.is_none(),
            },
            // A valid pattern followed by `a` is valid: every open reading has infinitely many.
            // Host names are at most 253 octets.
            Value::Syntax(p) => {
                strings == OpenStrings::Now
                    && p.reading.as_ref().is_some_and(|r| !r.closed && matches!(r.reader, SyntaxReader::Pattern(_)))
            }
            Value::Number(matchers) => matchers.iter().any(NumberMatcher::has_unbounded_completions),
            Value::Object(o) => {
                o.phase != ObjectPhase::Closed && o.tracks.iter().any(|t| t.open_ended(graph, o.phase, strings))
            }
            Value::Array(a) => {
                a.phase != ArrayPhase::Closed && a.tracks.iter().any(|t| t.open_ended(graph, a.phase, strings))
            }
        }
    }

    fn start(graph: &Graph, node: NodeId, b: u8) -> Option<Value> {
        let n = graph.node(node);
        let leaf = |dfa: &Arc<ByteDfa>| {
            let state = dfa.next(dfa.start(), b);
            (state != DEAD).then(|| Value::Leaf { dfa: Arc::clone(dfa), state })
        };
        match b {
            b'n' if n.null => leaf(&graph.literal_null),
            b't' if n.true_ => leaf(&graph.literal_true),
            b'f' if n.false_ => leaf(&graph.literal_false),
            b'"' if n.syntax_strings.is_some() => {
                let read = n.syntax_strings.expect("checked");
                let alt = n.strings.as_ref().and_then(|dfa| {
                    let state = dfa.next(dfa.start(), b);
                    (state != DEAD).then(|| (Arc::clone(dfa), state))
                });
                let reading = SyntaxReading {
                    decoder: StringDecoder::default(),
                    reader: SyntaxReader::new(read.syntax),
                    min_length: read.min_length,
                    length: 0,
                    closed: false,
                };
                Some(Value::Syntax(Box::new(SyntaxString { reading: Some(reading), alt })))
            }
            b'"' => {
                let automaton = n.strings.as_ref().and_then(leaf);
                match n.counted_strings {
                    None => automaton,
                    Some(range) => {
                        let alt = automaton.map(|value| match value {
                            Value::Leaf { dfa, state } => (dfa, state),
                            _ => unreachable!("strings start as leaves"),
                        });
                        let text = graph.any_string.next(graph.any_string.start(), b);
                        Some(Value::Counted(Box::new(CountedString {
                            text,
                            counter: CodePointCounter::default(),
                            range,
                            alt,
                        })))
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let alive: Vec<NumberMatcher> = n
                    .numbers
                    .iter()
                    .filter_map(|c| {
                        let mut m = NumberMatcher::new(Arc::clone(c));
                        m.feed(b).then_some(m)
                    })
                    .collect();
                (!alive.is_empty()).then_some(Value::Number(alive))
            }
            b'{' => {
                let shapes: Vec<ObjectTrack> = n
                    .objects
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| object_live(graph, s, SeenKeys::new(&[]), 0, !s.witnesses.is_empty()))
                    .map(|(i, s)| ObjectTrack {
                        node,
                        shape: i as u32,
                        seen: Arc::new(Vec::new()),
                        allowed_key: DEAD,
                        context_key: DEAD,
                        child: None,
                        pending: !s.witnesses.is_empty(),
                        probe: None,
                        serving: false,
                        key_options: None,
                    })
                    .collect();
                (!shapes.is_empty()).then(|| {
                    Value::Object(ObjectValue {
                        phase: ObjectPhase::AfterOpen,
                        key: StringDecoder::default(),
                        key_syntax: None,
                        key_text: DEAD,
                        tracks: shapes,
                    })
                })
            }
            b'[' => {
                let shapes: Vec<ArrayTrack> = n
                    .arrays
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| array_live(graph, s, 0, 0, &[]))
                    .map(|(i, s)| ArrayTrack {
                        node,
                        shape: i as u32,
                        count: 0,
                        found: 0,
                        child: None,
                        probe: None,
                        mode: ItemMode::Free,
                        seen: s.unique.as_ref().map(|_| Arc::new(Vec::new())),
                        decoder: None,
                    })
                    .collect();
                (!shapes.is_empty()).then(|| {
                    let keeps_text = shapes.iter().any(|t| t.seen.is_some());
                    Value::Array(ArrayValue {
                        phase: ArrayPhase::AfterOpen,
                        tracks: shapes,
                        keeps_text,
                        item_text: Vec::new(),
                    })
                })
            }
            _ => None,
        }
    }

    fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        match self {
            Value::Start(node) => match Value::start(graph, *node, b) {
                Some(v) => {
                    *self = v;
                    Step::Consumed
                }
                None => Step::Rejected,
            },
            Value::Leaf { dfa, state } => {
                let next = dfa.next(*state, b);
                if next != DEAD {
                    *state = next;
                    Step::Consumed
                } else if dfa.is_accepting(*state) {
                    Step::NotMine
                } else {
                    Step::Rejected
                }
            }
            Value::Number(matchers) => feed_number(matchers, b),
            Value::Counted(string) => string.feed(graph, b),
            Value::Syntax(string) => string.feed(b),
            Value::Object(object) => object.feed(graph, b),
            Value::Array(array) => array.feed(graph, b),
        }
    }
}

/// Whether `b` can begin some JSON value.
fn starts_value(b: u8) -> bool {
    matches!(b, b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
}

/// Whether a value of `node` surely cannot begin with `b` (see [`Value::refuses`]).
fn start_refuses(graph: &Graph, node: NodeId, b: u8) -> bool {
    let n = graph.node(node);
    match b {
        b'n' => !n.null,
        b't' => !n.true_,
        b'f' => !n.false_,
        b'"' => n.strings.is_none() && n.counted_strings.is_none() && n.syntax_strings.is_none(),
        b'-' | b'0'..=b'9' => n.numbers.is_empty(),
        b'{' => n.objects.is_empty(),
        b'[' => n.arrays.is_empty(),
        _ => true,
    }
}

impl Value {
    /// A cheap look ahead for mask walks: true only when [`Value::feed`] would surely return
    /// [`Step::Rejected`] for `b`, so that a walk can skip the byte without copying the value.
    /// False when unsure.
    fn refuses(&self, graph: &Graph, b: u8) -> bool {
        match self {
            Value::Start(node) => start_refuses(graph, *node, b),
            Value::Leaf { dfa, state } => dfa.next(*state, b) == DEAD && !dfa.is_accepting(*state),
            Value::Number(matchers) => !matchers.iter().any(|m| m.can_continue_with(b) || m.is_accepting()),
            Value::Counted(_) | Value::Syntax(_) => false,
            Value::Object(o) => o.refuses(graph, b),
            Value::Array(a) => a.refuses(graph, b),
        }
    }

    /// The objects inside a key at the leaves of this value, into `out`, when every container
    /// on the way only hands bytes on (objects between the members' values, arrays keeping no
    /// item text): they alone read the key, and nothing above reads its text. False otherwise.
    /// With `values_only`, a container must hand the bytes through its tracks' values alone (no
    /// probe, no items compared by value): the value then goes on exactly while one of the
    /// objects does.
    fn key_objects<'a>(&'a self, values_only: bool, out: &mut Vec<&'a ObjectValue>) -> bool {
        let mut leaves = |child: Option<&'a Arc<Value>>, probe: Option<&'a Arc<Value>>, compared: bool| {
            if values_only {
                probe.is_none() && !compared && child.is_some_and(|c| c.key_objects(true, out))
            } else {
                child.is_some_and(|c| c.key_objects(false, out)) && probe.is_none_or(|p| p.key_objects(false, out))
            }
        };
        match self {
            Value::Object(o) if o.phase == ObjectPhase::InKey => {
                // Tracks that started a member on the same schema share its value.
                if !out.iter().any(|known| std::ptr::eq(*known, o)) {
                    out.push(o);
                }
                true
            }
            Value::Object(o) if o.phase == ObjectPhase::InValue => {
                o.tracks.iter().all(|t| leaves(t.child.as_ref(), t.probe.as_ref(), false))
            }
            Value::Array(a) if a.phase == ArrayPhase::InItem && !a.keeps_text => {
                a.tracks.iter().all(|t| leaves(t.child.as_ref(), t.probe.as_ref(), t.seen.is_some()))
            }
            _ => false,
        }
    }
}

impl ObjectValue {
    /// See [`Value::refuses`].
    fn refuses(&self, graph: &Graph, b: u8) -> bool {
        use ObjectPhase::*;
        match self.phase {
            Closed => false,
            InKey => {
                let next = graph.any_string.next(self.key_text, b);
                next == DEAD
                    || (!graph.any_string.is_accepting(next)
                        && self.tracks.iter().all(|t| t.key_refuses(graph, &self.key, b)))
            }
            InValue => children_refuse(graph, self.tracks.iter().map(|t| t.child.as_deref()), b, || {
                !(is_ws(b) || b == b',' || b == b'}')
            }),
            AfterOpen => !(is_ws(b) || b == b'"' || b == b'}'),
            AfterComma => !(is_ws(b) || b == b'"'),
            AfterKey => !(is_ws(b) || b == b':'),
            AfterColon => !(is_ws(b) || starts_value(b)),
            AfterValue => !(is_ws(b) || b == b',' || b == b'}'),
        }
    }
}

/// True only when a container whose tracks read `children` surely refuses `b`: each child
/// refuses it or ends before it (see [`Value::yields`]); in the latter case the container reads
/// `b` after the value, and `after_refuses` says whether it refuses it there.
fn children_refuse<'a>(
    graph: &Graph,
    mut children: impl Iterator<Item = Option<&'a Value>>,
    b: u8,
    after_refuses: impl FnOnce() -> bool,
) -> bool {
    let mut ended = false;
    let each = children.all(|child| {
        child.is_some_and(|c| {
            c.refuses(graph, b) || {
                let yields = c.yields(b);
                ended |= yields;
                yields
            }
        })
    });
    each && (!ended || after_refuses())
}

/// Whether the tracks of a container reading `children` all take any run of whitespace and
/// stay alive: every value is complete and ends before whitespace (the tracks go on with the
/// container after the value), or every value is itself between tokens.
fn children_take_whitespace<'a>(mut children: impl Iterator<Item = Option<&'a Value>> + Clone) -> bool {
    let ends = |c: &Value| [b' ', b'\t', b'\n', b'\r'].into_iter().all(|w| c.yields(w));
    children.clone().all(|c| c.is_some_and(ends)) || children.all(|c| c.is_some_and(Value::between_tokens))
}

impl ObjectTrack {
    /// Whether the key being read, `decoder` so far, surely cannot go on with `b` (not a
    /// closing quote) on this track: it takes no key not named by its shape, and `b` is a
    /// plain character that no named key has next. False when unsure.
    fn key_refuses(&self, graph: &Graph, decoder: &StringDecoder, b: u8) -> bool {
        let shape = self.shape(graph);
        let Some(options) = &self.key_options else { return false };
        if options.open || keys_are_patterns(shape) || decoder.has_pending() || !(0x20..0x80).contains(&b) || b == b'\\'
        {
            return false;
        }
        let unnamed = shape.keys.as_ref().is_some_and(|keys| {
            keys.allowed_text
                .as_ref()
                .is_some_and(|text| self.allowed_key != DEAD && text.next(self.allowed_key, b) != DEAD)
        });
        !unnamed && !KeyOptions::some_name_continues(shape, decoder.value(), b)
    }
}

impl ArrayValue {
    /// See [`Value::refuses`].
    fn refuses(&self, graph: &Graph, b: u8) -> bool {
        use ArrayPhase::*;
        match self.phase {
            Closed => false,
            InItem => children_refuse(graph, self.tracks.iter().map(|t| t.child.as_deref()), b, || {
                !(is_ws(b) || b == b',' || b == b']')
            }),
            AfterOpen => !(is_ws(b) || b == b']' || starts_value(b)),
            AfterComma => !(is_ws(b) || starts_value(b)),
            AfterItem => !(is_ws(b) || b == b',' || b == b']'),
        }
    }
}

/// A string admitted by its length in code points (a bound too large for an automaton), read on
/// the any-string automaton with a counter; the node's other strings, if any, run alongside.
#[derive(Debug, Clone)]
struct CountedString {
    /// State on [`Graph::any_string`] ([`DEAD`] once the length rules this reading out).
    text: StateId,
    counter: CodePointCounter,
    range: LengthRange,
    alt: Option<(Arc<ByteDfa>, StateId)>,
}

impl CountedString {
    /// Whether the length reading can still end in range: below the maximum while open (any
    /// string may grow to the minimum), within the range once closed.
    fn counted_alive(&self, graph: &Graph) -> bool {
        let count = self.counter.count;
        self.text != DEAD
            && self.range.max.is_none_or(|max| count <= max)
            && (!graph.any_string.is_accepting(self.text) || count >= self.range.min)
    }

    fn is_complete(&self, graph: &Graph) -> bool {
        (self.counted_alive(graph) && graph.any_string.is_accepting(self.text))
            || self.alt.as_ref().is_some_and(|(dfa, state)| dfa.is_accepting(*state))
    }

    fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        let text = if self.counted_alive(graph) { graph.any_string.next(self.text, b) } else { DEAD };
        let alt = self.alt.as_ref().map(|(dfa, state)| (dfa, dfa.next(*state, b))).filter(|(_, s)| *s != DEAD);
        if text == DEAD && alt.is_none() {
            return if self.is_complete(graph) { Step::NotMine } else { Step::Rejected };
        }
        self.alt = alt.map(|(dfa, state)| (Arc::clone(dfa), state));
        self.text = text;
        if text != DEAD {
            self.counter.feed(b);
        }
        if self.counted_alive(graph) || self.alt.is_some() {
            Step::Consumed
        } else {
            Step::Rejected
        }
    }

    /// Whether the length reading is open with room for 4 more code points: more than 2^64
    /// completions.
    fn open_ended(&self, graph: &Graph) -> bool {
        self.counted_alive(graph)
            && !graph.any_string.is_accepting(self.text)
            && self.range.max.is_none_or(|max| max.saturating_sub(self.counter.count) >= 4)
    }

    fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if self.counted_alive(graph) {
            // Each byte adds at most one code point: with `slack` to spare, the length cannot
            // refuse a token that stays inside, and the other strings admit no more than it.
            let roomy = self.range.max.is_none_or(|max| self.counter.count.saturating_add(slack) <= max);
            let open = !graph.any_string.is_accepting(self.text);
            return (roomy && open).then_some((&graph.any_string, self.text));
        }
        self.alt.as_ref().filter(|(dfa, state)| !dfa.is_accepting(*state)).map(|(dfa, state)| (dfa, *state))
    }
}

/// A string read by a syntax (`format: "regex"`, `"hostname"`, `"idn-hostname"`): its decoded
/// text runs through the syntax's reader; the node's other strings, if any, run alongside on
/// their automaton.
#[derive(Debug, Clone)]
struct SyntaxString {
    /// `None` once the text can no longer be one of the syntax's strings.
    reading: Option<SyntaxReading>,
    alt: Option<(Arc<ByteDfa>, StateId)>,
}

#[derive(Debug, Clone)]
struct SyntaxReading {
    decoder: StringDecoder,
    reader: SyntaxReader,
    /// `minLength`, in code points: a pattern can always grow to it (by `a`s).
    min_length: u64,
    /// Code points read.
    length: u64,
    /// The closing quote was read (after a valid text).
    closed: bool,
}

/// The reader of one syntax, fed decoded code points.
#[derive(Debug, Clone)]
enum SyntaxReader {
    Pattern(PatternSyntax),
    Hostname(HostnameReader),
}

impl SyntaxReader {
    fn new(syntax: StringSyntax) -> SyntaxReader {
        match syntax {
            StringSyntax::Pattern => SyntaxReader::Pattern(PatternSyntax::default()),
            StringSyntax::Hostname => SyntaxReader::Hostname(HostnameReader::new(false)),
            StringSyntax::IdnHostname => SyntaxReader::Hostname(HostnameReader::new(true)),
        }
    }

    fn feed(&mut self, c: char) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.feed(c),
            SyntaxReader::Hostname(h) => h.feed(c),
        }
    }

    fn admits_pending(&self, decoder: &StringDecoder) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.admits_pending(decoder),
            SyntaxReader::Hostname(h) => h.admits_pending(decoder),
        }
    }

    fn is_accepting(&self) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.is_accepting(),
            SyntaxReader::Hostname(h) => h.is_accepting(),
        }
    }
}

impl SyntaxReading {
    /// The reading after `b`, if the text may still be (or now is) one of the syntax's strings.
    fn fed(&self, b: u8) -> Option<SyntaxReading> {
        if self.closed {
            return None;
        }
        let mut next = self.clone();
        match next.decoder.feed(b) {
            DecodeStep::Invalid => None,
            DecodeStep::Closed => {
                next.closed = true;
                (next.length >= next.min_length && next.reader.is_accepting()).then_some(next)
            }
            DecodeStep::Continue => {
                let SyntaxReading { decoder, reader, length, .. } = &mut next;
                // The reader keeps what it needs of the text: the decoder holds only what is new.
                let fed = decoder.value().chars().all(|c| {
                    *length += 1;
                    reader.feed(c)
                });
                decoder.clear_value();
                (fed && reader.admits_pending(decoder)).then_some(next)
            }
        }
    }
}

impl SyntaxString {
    fn is_complete(&self) -> bool {
        self.reading.as_ref().is_some_and(|r| r.closed)
            || self.alt.as_ref().is_some_and(|(dfa, s)| dfa.is_accepting(*s))
    }

    fn feed(&mut self, b: u8) -> Step {
        let reading = self.reading.as_ref().and_then(|r| r.fed(b));
        let alt = self.alt.as_ref().map(|(dfa, state)| (dfa, dfa.next(*state, b))).filter(|(_, s)| *s != DEAD);
        if reading.is_none() && alt.is_none() {
            return if self.is_complete() { Step::NotMine } else { Step::Rejected };
        }
        self.alt = alt.map(|(dfa, state)| (Arc::clone(dfa), state));
        self.reading = reading;
        Step::Consumed
    }

    /// Only the other strings' automaton, once the syntax's reading is over.
    fn string_context(&self) -> Option<(&Arc<ByteDfa>, StateId)> {
        if self.reading.is_some() {
            return None;
        }
        self.alt.as_ref().filter(|(dfa, state)| !dfa.is_accepting(*state)).map(|(dfa, state)| (dfa, *state))
    }
}

/// A string automaton and state a position is inside (see [`Value::string_contexts`]).
pub(crate) type Context<'a> = (&'a Arc<ByteDfa>, StateId);

/// The string contexts of every child, when each child has some.
fn children_contexts<'a>(
    graph: &'a Graph,
    slack: u64,
    mut children: impl Iterator<Item = Option<&'a Value>>,
    visit: &mut dyn FnMut(Context<'a>) -> bool,
) -> bool {
    children.all(|child| child.is_some_and(|c| c.string_contexts(graph, slack, visit)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ObjectPhase {
    AfterOpen,
    InKey,
    AfterKey,
    AfterColon,
    InValue,
    AfterValue,
    AfterComma,
    Closed,
}

#[derive(Debug, Clone)]
struct ObjectValue {
    phase: ObjectPhase,
    key: StringDecoder,
    /// The key read as an ECMA-262 pattern, for tracks whose keys must be patterns
    /// (`propertyNames` with `format: "regex"`); `None` once it cannot become one.
    key_syntax: Option<Box<PatternSyntax>>,
    /// The key's raw text on the any-string automaton, for masks inside keys.
    key_text: StateId,
    tracks: Vec<ObjectTrack>,
}

/// One object shape still matching, with its keys so far and its current member's value.
#[derive(Debug, Clone)]
struct ObjectTrack {
    node: NodeId,
    shape: u32,
    seen: Arc<Vec<String>>,
    /// State of the key being read on the shape's automaton of allowed unnamed keys, and on its
    /// automaton of candidate keys (see [`PatternKeys`](super::graph::PatternKeys)).
    allowed_key: StateId,
    context_key: StateId,
    child: Option<Arc<Value>>,
    /// The shape's witness member has not occurred yet.
    pending: bool,
    /// The current member's value read against the witness' schema, while it may match.
    probe: Option<Arc<Value>>,
    /// The current member must serve as the witness (its child is the conjunction).
    serving: bool,
    /// What the key being read may become, worked out when it starts (`None` between keys).
    key_options: Option<Arc<KeyOptions>>,
}

/// What the next key of a track may be, fixed by its keys seen while a key is read: asked at
/// every byte of the key (and at every trie node of a mask inside one). Each answer is worked
/// out on first use and shared by the matcher's copies.
#[derive(Debug)]
struct KeyOptions {
    /// Any key text that stays a string leads to an allowed key.
    open: bool,
    /// Whether each named key (`properties`, then `required`, as
    /// [`KeyOptions::candidates`] lists them) may come next.
    named: Box<[OnceLock<bool>]>,
    /// One more key not named by the shape keeps the object completable.
    unnamed_live: OnceLock<bool>,
}

impl KeyOptions {
    fn new(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> KeyOptions {
        let open = key_open(graph, shape, seen, pending);
        let count = if open { 0 } else { Self::candidates(shape).count() };
        KeyOptions { open, named: (0..count).map(|_| OnceLock::new()).collect(), unnamed_live: OnceLock::new() }
    }

    /// The named keys `decoder`'s text can still become, with their indices in `named`: the
    /// run of the shape's sorted names that starts with the text, found by binary search
    /// rather than a comparison with every name at every byte.
    fn reachable<'a>(
        shape: &'a ObjectShape,
        decoder: &'a StringDecoder,
    ) -> impl Iterator<Item = (&'a str, usize)> + 'a {
        let sorted = Self::sorted_names(shape);
        let text = decoder.value();
        let start = sorted.partition_point(|(name, _)| &**name < text);
        sorted[start..]
            .iter()
            .take_while(move |(name, _)| name.starts_with(text))
            .filter(|(name, _)| decoder.can_end_as(&name[text.len()..]))
            .map(|(name, i)| (&**name, *i as usize))
    }

    /// The named keys in byte order, with their indices in [`KeyOptions::candidates`].
    fn sorted_names(shape: &ObjectShape) -> &[(Box<str>, u32)] {
        shape.sorted_names.get_or_init(|| {
            let mut sorted: Vec<(Box<str>, u32)> =
                Self::candidates(shape).enumerate().map(|(i, name)| (name.as_str().into(), i as u32)).collect();
            sorted.sort_unstable();
            sorted.into_boxed_slice()
        })
    }

    /// Whether some named key starts with `text` followed by the byte `b`.
    fn some_name_continues(shape: &ObjectShape, text: &str, b: u8) -> bool {
        let sorted = Self::sorted_names(shape);
        let extended = || text.bytes().chain(std::iter::once(b));
        let start = sorted.partition_point(|(name, _)| name.bytes().lt(extended()));
        sorted
            .get(start)
            .is_some_and(|(name, _)| name.len() > text.len() && name.bytes().zip(extended()).all(|(x, y)| x == y))
    }

    /// The named keys, in a fixed order. Required names need not be declared in `properties`.
    fn candidates(shape: &ObjectShape) -> impl Iterator<Item = &String> {
        shape.properties.keys().chain(shape.required.iter())
    }
}

impl ObjectTrack {
    fn shape<'g>(&self, graph: &'g Graph) -> &'g ObjectShape {
        &graph.node(self.node).objects[self.shape as usize]
    }

    /// The schema the member of `key` is read on: the witness' (with the member's) when the
    /// member must serve as the witness, else the member's.
    fn value_schema(&self, graph: &Graph, key: &str) -> NodeId {
        let shape = self.shape(graph);
        let witness = shape.witnesses.first().filter(|_| self.pending && self.serving);
        witness.and_then(|w| w.serving(key)).unwrap_or_else(|| shape.value_schema(key))
    }

    /// See [`Value::open_ended`]: the current member, or a further one, has infinitely many
    /// values (or keys). Tracks with a witness still to come are left to the search: there
    /// which value a member takes matters.
    fn open_ended(&self, graph: &Graph, phase: ObjectPhase, strings: OpenStrings) -> bool {
        if self.pending || self.probe.is_some() {
            return false;
        }
        let shape = self.shape(graph);
        match phase {
            ObjectPhase::InKey => {
                // Infinitely many keys complete the one being read.
                let key_unbounded = key_open(graph, shape, &self.seen, false)
                    || (self.allowed_key != DEAD
                        && shape.keys.as_ref().is_some_and(|k| k.unbounded_from[self.allowed_key as usize])
                        && room_for_unnamed_key(graph, shape, &self.seen, false));
                // Or it takes one slot and another stays open beside it, whichever key it
                // becomes (in declared order it could close the others: not counted).
                let room = shape.max.is_none_or(|max| {
                    (self.seen.len() as u64)
                        .saturating_add(missing_required(shape, SeenKeys::new(&self.seen)).count() as u64 + 2)
                        <= max
                });
                let unnamed = unnamed_keys_unbounded(graph, shape, &self.seen);
                return (strings == OpenStrings::Now && key_unbounded)
                    || (!graph.ordered
                        && room
                        && (unnamed || self.infinite_named_keys(graph, shape).nth(1).is_some()));
            }
            ObjectPhase::AfterKey | ObjectPhase::AfterColon
                if graph.infinite[shape.value_schema(self.seen.last().expect("a key was read")) as usize] =>
            {
                return true;
            }
            ObjectPhase::InValue if self.child.as_deref().is_some_and(|c| c.open_ended(graph, strings)) => {
                return true;
            }
            _ => {}
        }
        unnamed_keys_unbounded(graph, shape, &self.seen) || self.infinite_named_keys(graph, shape).next().is_some()
    }

    /// The keys named by the shape, not seen yet, that may still be added with infinitely many
    /// values.
    fn infinite_named_keys<'a>(
        &'a self,
        graph: &'a Graph,
        shape: &'a ObjectShape,
    ) -> impl Iterator<Item = &'a String> + 'a {
        shape.properties.keys().chain(shape.required.iter().filter(|k| !shape.properties.contains_key(*k))).filter(
            move |k| {
                !self.seen.contains(k)
                    && graph.infinite[shape.value_schema(k) as usize]
                    && key_allowed(graph, shape, &self.seen, k, false)
            },
        )
    }

    /// The automaton and state that alone decide which bytes keep this track's key open and
    /// live: the any-string automaton when any key may come, the shape's candidate keys when
    /// patterns restrict keys but every open continuation still has infinitely many keys.
    /// Whether every key text that stays a string leads to an allowed key of this track.
    fn takes_any_key(&self, graph: &Graph) -> bool {
        let shape = self.shape(graph);
        // Asked at every trie node of a walk: the key's options hold the answer once it started.
        !keys_are_patterns(shape)
            && match &self.key_options {
                Some(options) => options.open,
                None => key_open(graph, shape, &self.seen, self.pending),
            }
    }

    fn key_context<'g>(&self, graph: &'g Graph, key_text: StateId) -> Option<(&'g Arc<ByteDfa>, StateId)> {
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

fn missing_required<'a>(shape: &'a ObjectShape, seen: SeenKeys<'a>) -> impl Iterator<Item = &'a String> + 'a {
    shape.required.iter().filter(move |k| !seen.contains(k))
}

/// Under `property_order = declared`, which declared keys may still come after `seen` (and,
/// when `undeclared`, a key that is not declared).
struct OrderGate {
    last: Option<usize>,
    undeclared: bool,
}

impl OrderGate {
    fn new(graph: &Graph, shape: &ObjectShape, seen: SeenKeys, undeclared: bool) -> OrderGate {
        if !graph.ordered {
            return OrderGate { last: None, undeclared: false };
        }
        let positions: Vec<Option<usize>> = seen.iter().map(|k| shape.position(k)).collect();
        OrderGate {
            last: positions.iter().flatten().copied().max(),
            undeclared: undeclared || positions.iter().any(Option::is_none),
        }
    }

    fn admits(&self, shape: &ObjectShape, key: &str) -> bool {
        match shape.position(key) {
            None => true,
            Some(i) => !self.undeclared && self.last.is_none_or(|last| i > last),
        }
    }
}

/// Whether an object with keys `seen`, plus `unnamed` further keys not named by the shape whose
/// schemas are satisfiable, can still be completed (`pending`: with its witness member still
/// to come).
fn object_live(graph: &Graph, shape: &ObjectShape, seen: SeenKeys, unnamed: u64, pending: bool) -> bool {
    if pending && !witness_reachable(shape, &graph.satisfiable, seen, unnamed) {
        return false;
    }
    let count = seen.len() as u64 + unnamed;
    // Without a bound on the count or an order, the missing required keys simply come.
    if shape.max.is_none() && shape.min <= count && !graph.ordered {
        return true;
    }
    let max = shape.max.unwrap_or(u64::MAX);
    let gate = OrderGate::new(graph, shape, seen, unnamed > 0);
    let mut missing_keys = missing_required(shape, seen);
    if graph.ordered && missing_keys.any(|k| !gate.admits(shape, k)) {
        return false;
    }
    let missing = missing_required(shape, seen).count() as u64;
    if missing.saturating_add(count) > max {
        return false;
    }
    let needed = shape.min.saturating_sub(count).max(missing);
    let extra = needed - missing;
    extra == 0
        || addable_optional_keys(shape, &graph.satisfiable, seen, &|k| gate.admits(shape, k)).saturating_sub(unnamed)
            >= extra
}

/// How `key` (complete) may be added to an object with keys `seen`: `Some(false)` as any
/// member, `Some(true)` only as the pending witness, `None` not at all.
fn key_use(graph: &Graph, shape: &ObjectShape, seen: &[String], key: &str, pending: bool) -> Option<bool> {
    if seen.iter().any(|s| s == key) || !graph.is_satisfiable(shape.value_schema(key)) {
        return None;
    }
    if graph.ordered && !OrderGate::new(graph, shape, SeenKeys::new(seen), false).admits(shape, key) {
        return None;
    }
    let with_key = SeenKeys::with(seen, key);
    if object_live(graph, shape, with_key, 0, pending) {
        return Some(false);
    }
    let serving = shape.witnesses.first().filter(|_| pending).and_then(|w| w.serving(key))?;
    (graph.is_satisfiable(serving) && object_live(graph, shape, with_key, 0, false)).then_some(true)
}

/// Whether `key` (complete) may be added to an object with keys `seen`.
fn key_allowed(graph: &Graph, shape: &ObjectShape, seen: &[String], key: &str, pending: bool) -> bool {
    key_use(graph, shape, seen, key, pending).is_some()
}

/// Whether any key may come next (not only named ones): then every key text that stays a
/// string is live, since infinitely many keys extend it and only finitely many were seen.
fn key_open(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> bool {
    let open = match &shape.keys {
        None => graph.is_satisfiable(shape.other),
        Some(keys) => keys.open,
    };
    // A new key may serve as the pending witness, or leave room for one later.
    let witness_ok = !pending
        || shape.witnesses.first().is_some_and(|w| graph.is_satisfiable(w.fresh))
        || witness_reachable(shape, &graph.satisfiable, SeenKeys::new(seen), 1);
    open && witness_ok && room_for_unnamed_key(graph, shape, seen, pending && !witness_ok)
}

/// Whether infinitely many keys not named by the shape may still be added (not every key text
/// need lead to one, as [`key_open`] asks).
fn unnamed_keys_unbounded(graph: &Graph, shape: &ObjectShape, seen: &[String]) -> bool {
    key_open(graph, shape, seen, false)
        || (shape.keys.is_some()
            && addable_optional_keys(shape, &graph.satisfiable, SeenKeys::new(seen), &|_| true) == u64::MAX
            && room_for_unnamed_key(graph, shape, seen, false))
}

/// Whether one more key that is not named by the shape fits: within `maxProperties` beside the
/// required keys still missing, and, in declared order, with no required declared key missing
/// (an undeclared key closes the declared ones).
fn room_for_unnamed_key(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> bool {
    let max = shape.max.unwrap_or(u64::MAX);
    let missing = missing_required(shape, SeenKeys::new(seen)).count() as u64;
    let only_required = (seen.len() as u64).saturating_add(missing) + 1 > max;
    !only_required && (!graph.ordered || object_live(graph, shape, SeenKeys::new(seen), 1, pending))
}

/// Whether a key whose text so far is `decoder` (and `allowed` on the shape's automaton of
/// allowed unnamed keys) can still become an allowed key.
fn key_prefix_live(
    graph: &Graph,
    shape: &ObjectShape,
    options: &KeyOptions,
    seen: &[String],
    pending: bool,
    decoder: &StringDecoder,
    allowed: StateId,
) -> bool {
    if options.open {
        return true;
    }
    let mut named = KeyOptions::reachable(shape, decoder);
    if named.any(|(name, i)| *options.named[i].get_or_init(|| key_allowed(graph, shape, seen, name, pending))) {
        return true;
    }
    let Some(keys) = &shape.keys else { return false };
    let Some(text) = &keys.allowed_text else { return false };
    allowed != DEAD
        && *options.unnamed_live.get_or_init(|| object_live(graph, shape, SeenKeys::new(seen), 1, pending))
        && (keys.unbounded_from[allowed as usize] || unseen_key_completes(text, allowed, decoder, seen))
}

impl ObjectTrack {
    /// The track's [`KeyOptions`], made on first use after a key closed.
    fn key_options(&mut self, graph: &Graph) -> Arc<KeyOptions> {
        let (node, shape, seen, pending) = (self.node, self.shape, &self.seen, self.pending);
        Arc::clone(self.key_options.get_or_insert_with(|| {
            Arc::new(KeyOptions::new(graph, &graph.node(node).objects[shape as usize], seen, pending))
        }))
    }

    /// [`key_prefix_live`] for this track.
    fn key_live(&mut self, graph: &Graph, decoder: &StringDecoder, allowed: StateId) -> bool {
        let options = self.key_options(graph);
        key_prefix_live(graph, self.shape(graph), &options, &self.seen, self.pending, decoder, allowed)
    }
}

/// Most key spellings [`unseen_key_completes`] tries before assuming that one completes.
const KEY_SEARCH_BUDGET: usize = 100_000;

/// Whether the key text so far (`decoder`, at `state` of `text`) completes to a key of `text`
/// that is not in `seen`. Only called when finitely many keys complete it; the search follows
/// canonical spellings, so each candidate key is decoded once.
fn unseen_key_completes(text: &ByteDfa, state: StateId, decoder: &StringDecoder, seen: &[String]) -> bool {
    if state == DEAD {
        return false;
    }
    // Most often the key goes on with a plain character that no seen key has next: then any
    // key it completes to is unseen, found without a search (asked at every trie node of a
    // mask inside such a key).
    if !decoder.has_pending() {
        let prefix = decoder.value();
        let mut next_in_seen = [false; 128];
        for rest in seen.iter().filter_map(|k| k.strip_prefix(prefix)) {
            if let Some(&c) = rest.as_bytes().first().filter(|c| c.is_ascii()) {
                next_in_seen[c as usize] = true;
            }
        }
        let plain = |b: u8| b != b'"' && b != b'\\';
        if (0x20..0x80u8).any(|b| plain(b) && !next_in_seen[b as usize] && text.next(state, b) != DEAD) {
            return true;
        }
    }
    // The bytes of each byte class, in byte order: a class dead from a state is skipped whole.
    let mut members: Vec<Vec<u8>> = vec![Vec::new(); text.class_count()];
    for b in 0..=255u8 {
        members[text.byte_classes()[b as usize] as usize].push(b);
    }
    // `free`: an escape begun by the real text, which may be spelled any way.
    let mut stack = vec![(state, decoder.clone(), decoder.has_pending())];
    let mut budget = KEY_SEARCH_BUDGET;
    while let Some((s, current, free)) = stack.pop() {
        // A live state completes to some key, and a key extending a prefix that no seen key
        // starts with is unseen: the search stops as soon as the text leaves the seen keys.
        if !seen.iter().any(|k| k.starts_with(current.value())) {
            return true;
        }
        for (class, bytes) in members.iter().enumerate() {
            let next = text.next_class(s, class as u8);
            if next == DEAD {
                continue;
            }
            for &b in bytes.iter().filter(|&&b| free || current.canonical_next(b)) {
                if budget == 0 {
                    return true;
                }
                budget -= 1;
                let mut decoded = current.clone();
                match decoded.feed(b) {
                    DecodeStep::Invalid => {}
                    DecodeStep::Closed => {
                        if !seen.iter().any(|k| k == decoded.value()) {
                            return true;
                        }
                    }
                    DecodeStep::Continue => {
                        let free = free && decoded.has_pending();
                        stack.push((next, decoded, free));
                    }
                }
            }
        }
    }
    false
}

impl ObjectValue {
    fn feed_key(&mut self, graph: &Graph, b: u8) -> DecodeStep {
        self.key_text = graph.any_string.next(self.key_text, b);
        let before = self.key.value().len();
        let step = self.key.feed(b);
        if let (DecodeStep::Continue, Some(syntax)) = (step, &mut self.key_syntax) {
            let fed = self.key.value()[before..].chars().all(|c| syntax.feed(c));
            if !fed || !syntax.admits_pending(&self.key) {
                self.key_syntax = None;
            }
        }
        for track in &mut self.tracks {
            if let Some(keys) = &track.shape(graph).keys {
                if let Some(text) = &keys.allowed_text {
                    track.allowed_key = text.next(track.allowed_key, b);
                }
                if let Some(text) = &keys.context_text {
                    track.context_key = text.next(track.context_key, b);
                }
            }
        }
        step
    }

    /// Starts a key on every track (the opening quote was read) and keeps the tracks for which
    /// some key can still follow.
    fn start_key(&mut self, graph: &Graph) {
        self.key = StringDecoder::default();
        self.key_text = graph.any_string.next(graph.any_string.start(), b'"');
        self.key_syntax = self.tracks.iter().any(|t| keys_are_patterns(t.shape(graph))).then(Box::default);
        for track in &mut self.tracks {
            if let Some(keys) = &track.shape(graph).keys {
                if let Some(text) = &keys.allowed_text {
                    track.allowed_key = text.next(text.start(), b'"');
                }
                if let Some(text) = &keys.context_text {
                    track.context_key = text.next(text.start(), b'"');
                }
            }
        }
        let key = &self.key;
        self.tracks.retain_mut(|t| {
            let allowed = t.allowed_key;
            t.key_live(graph, key, allowed)
        });
    }

    fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        use ObjectPhase::*;
        match self.phase {
            Closed => return Step::NotMine,
            AfterOpen | AfterComma | AfterKey | AfterValue if is_ws(b) => return Step::Consumed,
            AfterColon if is_ws(b) => return Step::Consumed,
            _ => {}
        }
        match (self.phase, b) {
            (AfterOpen, b'}') | (AfterValue, b'}') => {
                self.tracks.retain(|t| {
                    let shape = t.shape(graph);
                    !t.pending
                        && missing_required(shape, SeenKeys::new(&t.seen)).next().is_none()
                        && t.seen.len() as u64 >= shape.min
                });
                self.phase = Closed;
            }
            (AfterOpen, b'"') | (AfterComma, b'"') => {
                self.phase = InKey;
                self.start_key(graph);
            }
            (AfterValue, b',') => {
                // Some key must be able to follow: the empty key text, just opened.
                self.phase = AfterComma;
                let key = StringDecoder::default();
                self.tracks.retain_mut(|t| {
                    let allowed = allowed_keys(graph, t).map_or(DEAD, |text| text.next(text.start(), b'"'));
                    t.key_live(graph, &key, allowed)
                });
            }
            (InKey, _) => match self.feed_key(graph, b) {
                DecodeStep::Invalid => return Step::Rejected,
                DecodeStep::Continue => {
                    // Tracks whose keys must be patterns also need the pattern reading alive.
                    let (key, syntax_alive) = (&self.key, self.key_syntax.is_some());
                    self.tracks.retain_mut(|t| {
                        let allowed = t.allowed_key;
                        (syntax_alive || !keys_are_patterns(t.shape(graph))) && t.key_live(graph, key, allowed)
                    });
                }
                DecodeStep::Closed => {
                    let key = self.key.value().to_string();
                    self.tracks.retain_mut(|t| match key_use(graph, t.shape(graph), &t.seen, &key, t.pending) {
                        None => false,
                        Some(serving) => {
                            t.serving = serving;
                            Arc::make_mut(&mut t.seen).push(key.clone());
                            t.key_options = None;
                            true
                        }
                    });
                    self.phase = AfterKey;
                }
            },
            (AfterKey, b':') => self.phase = AfterColon,
            (AfterColon, _) => {
                // The key is read for the last time here: copies of the matcher made inside the
                // value need not carry it.
                let key = std::mem::take(&mut self.key).value().to_string();
                let mut started = Vec::new();
                self.tracks.retain_mut(|t| {
                    let node = t.value_schema(graph, &key);
                    let witness = t.shape(graph).witnesses.first().filter(|_| t.pending);
                    let serving = witness.and_then(|w| w.serving(&key));
                    let child = start_shared(graph, node, b, &mut started);
                    let ok = child.is_some();
                    t.child = Some(child.unwrap_or_else(|| Arc::new(Value::Start(node))));
                    // A free member that could serve is also read against the witness' schema.
                    t.probe = witness
                        .filter(|_| !t.serving && serving.is_some())
                        .and_then(|w| start_shared(graph, w.node, b, &mut started));
                    ok
                });
                self.phase = InValue;
            }
            (InValue, _) => {
                let mut finished = false;
                let mut fed = FedValues::new(&self.tracks, |t| t.probe.is_some());
                self.tracks.retain_mut(|t| {
                    match feed_shared(t.child.as_mut().expect("a member value is open"), graph, b, &mut fed) {
                        Step::Consumed => {
                            if t.probe.as_mut().is_some_and(|p| feed_shared(p, graph, b, &mut fed) != Step::Consumed) {
                                t.probe = None;
                            }
                            true
                        }
                        Step::Rejected => false,
                        Step::NotMine => {
                            finished = true;
                            if t.serving || t.probe.as_ref().is_some_and(|p| p.is_complete(graph)) {
                                t.pending = false;
                            }
                            (t.child, t.probe, t.serving) = (None, None, false);
                            true
                        }
                    }
                });
                if finished {
                    self.phase = AfterValue;
                    return if self.tracks.is_empty() { Step::Rejected } else { self.feed(graph, b) };
                }
            }
            _ => return Step::Rejected,
        }
        if self.tracks.is_empty() {
            Step::Rejected
        } else {
            Step::Consumed
        }
    }
}

/// Whether the shape's keys must be ECMA-262 patterns (see [`PatternKeys::key_syntax`]).
///
/// [`PatternKeys::key_syntax`]: super::graph::PatternKeys::key_syntax
fn keys_are_patterns(shape: &ObjectShape) -> bool {
    shape.keys.as_ref().is_some_and(|k| k.key_syntax.is_some())
}

/// The automaton of unnamed keys a track's shape allows, when patterns classify its keys.
fn allowed_keys<'g>(graph: &'g Graph, track: &ObjectTrack) -> Option<&'g Arc<ByteDfa>> {
    track.shape(graph).keys.as_ref()?.allowed_text.as_ref()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayPhase {
    AfterOpen,
    InItem,
    AfterItem,
    AfterComma,
    Closed,
}

#[derive(Debug, Clone)]
struct ArrayValue {
    phase: ArrayPhase,
    tracks: Vec<ArrayTrack>,
    /// Whether some track compares items by value (`uniqueItems`): then `item_text` is kept.
    keeps_text: bool,
    /// The current item's text, kept under `uniqueItems` to compare it by value.
    item_text: Vec<u8>,
}

#[derive(Debug, Clone)]
struct ArrayTrack {
    node: NodeId,
    shape: u32,
    count: u64,
    /// Items so far that satisfied `contains`.
    found: u64,
    child: Option<Arc<Value>>,
    /// The current item read against the `contains` schema too, while it may still match.
    probe: Option<Arc<Value>>,
    /// How the current item is read.
    mode: ItemMode,
    /// `uniqueItems`: the values of the items so far.
    seen: Option<Arc<Vec<Canon>>>,
    /// `uniqueItems`: the current item's string content, while it is an open string.
    decoder: Option<StringDecoder>,
}

/// How an item is read against `contains`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemMode {
    /// As any item; counted when it matches.
    Free,
    /// Only as one that matches (its child is the conjunction).
    Matching,
    /// Only as one that does not (`maxContains` reached).
    Avoiding,
}

impl ArrayTrack {
    fn shape<'g>(&self, graph: &'g Graph) -> &'g ArrayShape {
        &graph.node(self.node).arrays[self.shape as usize]
    }

    /// See [`Value::open_ended`]: the current item, or the next one, has infinitely many values,
    /// or the array may grow without bound. Arrays under `contains` are left to the search.
    fn open_ended(&self, graph: &Graph, phase: ArrayPhase, strings: OpenStrings) -> bool {
        let shape = self.shape(graph);
        if self.probe.is_some() || shape.contains.is_some() {
            return false;
        }
        if phase == ArrayPhase::InItem && self.child.as_deref().is_some_and(|c| c.open_ended(graph, strings)) {
            return true;
        }
        // A next item: forced below `minItems`, else room for it. Under `uniqueItems` only
        // finitely many of its infinitely many values are taken.
        let next = self.count + u64::from(phase == ArrayPhase::InItem);
        let next_open = next < shape.max.unwrap_or(u64::MAX) && graph.infinite[shape.item(next) as usize];
        let unbounded =
            shape.max.is_none() && shape.unique.is_none() && reachable_items(shape, &graph.satisfiable) == u64::MAX;
        next_open || unbounded
    }
}

/// Starts an item under `uniqueItems` with its first byte: a literal must not have been seen
/// (and must leave distinct values for the items still required), a number is read with the
/// seen numbers excluded, and a string's content is decoded alongside.
fn start_unique_item(
    graph: &Graph,
    shape: &ArrayShape,
    count: u64,
    node: NodeId,
    b: u8,
    seen: &[Canon],
) -> Option<(Value, Option<StringDecoder>)> {
    if let Some(literal) = unique::literal_from_first_byte(b) {
        let mut used = seen.to_vec();
        used.push(literal.clone());
        if seen.contains(&literal) || !unique::distinct_items_reachable(graph, shape, count + 1, &used) {
            return None;
        }
    }
    if matches!(b, b'-' | b'0'..=b'9') {
        if let Some(matchers) = unique::numbers_excluding(graph, node, seen, b) {
            return (!matchers.is_empty()).then_some((Value::Number(matchers), None));
        }
    }
    let mut child = Value::Start(node);
    if child.feed(graph, b) != Step::Consumed {
        return None;
    }
    if matches!(b, b'{' | b'[') && !container_item_live(graph, &child, &[b], seen) {
        return None;
    }
    let decoder = (b == b'"').then(StringDecoder::default);
    if let (Some(decoder), Value::Leaf { dfa, state }) = (&decoder, &child) {
        // Right after the opening quote, some unseen string must still complete.
        let unbounded = graph.unbounded_strings.get(&(Arc::as_ptr(dfa) as usize));
        let open = unbounded.is_some_and(|u| u.from[*state as usize])
            || unseen_key_completes(dfa, *state, decoder, &unique::seen_strings(seen));
        if !open {
            return None;
        }
    }
    Some((child, decoder))
}

/// Whether the current item (its text so far `item_text`, `b` just read) can still end as a
/// value not seen before: checked where the text fixes the value (see [`unique`]).
fn unique_item_live(graph: &Graph, track: &mut ArrayTrack, b: u8, item_text: &[u8]) -> bool {
    let seen = track.seen.as_deref().map_or(&[][..], Vec::as_slice);
    let child = track.child.as_deref().expect("an item is open");
    if let Some(decoder) = track.decoder.as_mut() {
        return match decoder.feed(b) {
            DecodeStep::Invalid => false,
            DecodeStep::Closed => {
                let value = decoder.value().to_string();
                track.decoder = None;
                !seen.contains(&Canon::String(value))
            }
            DecodeStep::Continue => match child {
                Value::Leaf { dfa, state } => {
                    let unbounded = graph.unbounded_strings.get(&(Arc::as_ptr(dfa) as usize));
                    unbounded.is_some_and(|u| u.from[*state as usize])
                        || unseen_key_completes(dfa, *state, decoder, &unique::seen_strings(seen))
                }
                _ => true,
            },
        };
    }
    container_item_live(graph, child, item_text, seen)
}

/// Whether an array or object item (its text so far `item_text`) can still end as a value not
/// in `seen`: compared once closed; while open, it is live when infinitely many values complete
/// it, else when a search of its completions finds an unseen one.
fn container_item_live(graph: &Graph, child: &Value, item_text: &[u8], seen: &[Canon]) -> bool {
    let closed = match child {
        Value::Array(a) => a.phase == ArrayPhase::Closed,
        Value::Object(o) => o.phase == ObjectPhase::Closed,
        _ => return true,
    };
    if closed {
        return Canon::parse(item_text).is_some_and(|value| !seen.contains(&value));
    }
    child.open_ended(graph, OpenStrings::Now) || unseen_item_completes(graph, child, item_text, seen)
}

/// Most bytes [`unseen_item_completes`] feeds before assuming that an unseen value completes
/// (only reached when the completions are very many, or their spellings very long).
const ITEM_SEARCH_BUDGET: usize = 50_000;

/// Most zeros in a row the search writes outside strings: a number's fraction could otherwise
/// grow without end (`1.000...`) while its value stays the same.
const MAX_ZERO_RUN: usize = 40;

/// Bytes that may continue a JSON text outside strings (whitespace never changes a value, and
/// numbers are spelled without exponents), closing bytes first so completions come early.
const STRUCTURAL_BYTES: &[u8] = b"}],\":{[-.0123456789tfnrueals";

/// Whether an open array or object item, whose every state reached so far is live, completes
/// to a value not in `seen`. Searches depth first along canonical spellings (no insignificant
/// whitespace, canonical string escapes, no exponents), so each completion is read about once;
/// called only where [`Value::open_ended`] cannot tell, that is near the item's end where few
/// completions remain.
fn unseen_item_completes(graph: &Graph, child: &Value, item_text: &[u8], seen: &[Canon]) -> bool {
    // The string open at the end of the text, if any; an escape begun by the real text may be
    // finished any way (`free`).
    let open_string = open_string_at_end(item_text);
    let free = open_string.as_ref().is_some_and(StringDecoder::has_pending);
    let mut stack = vec![(child.clone(), item_text.to_vec(), open_string, free)];
    let mut budget = ITEM_SEARCH_BUDGET;
    while let Some((value, text, string, free)) = stack.pop() {
        let candidates: Vec<u8> = match &string {
            Some(decoder) => (0x20..=0xFF).filter(|&b| free || decoder.canonical_next(b)).collect(),
            None => {
                let zeros = text.iter().rev().take_while(|&&b| b == b'0').count();
                let number = NumberTail::of(&text);
                STRUCTURAL_BYTES
                    .iter()
                    .copied()
                    .filter(|&b| (b != b'0' || zeros < MAX_ZERO_RUN) && number.admits(b))
                    .collect()
            }
        };
        // Pushed in reverse so the first candidate is searched first.
        for &b in candidates.iter().rev() {
            if budget == 0 {
                return true;
            }
            budget -= 1;
            let mut next = value.clone();
            if next.feed(graph, b) != Step::Consumed {
                continue;
            }
            let mut next_text = text.clone();
            next_text.push(b);
            if next.is_complete(graph) {
                if Canon::parse(&next_text).is_some_and(|v| !seen.contains(&v)) {
                    return true;
                }
                continue;
            }
            if next.open_ended(graph, OpenStrings::Now) {
                return true;
            }
            let (next_string, next_free) = match &string {
                None if b == b'"' => (Some(StringDecoder::default()), false),
                None => (None, false),
                Some(decoder) => {
                    let mut decoder = decoder.clone();
                    match decoder.feed(b) {
                        DecodeStep::Invalid => continue,
                        DecodeStep::Closed => (None, false),
                        DecodeStep::Continue => {
                            let still_free = free && decoder.has_pending();
                            (Some(decoder), still_free)
                        }
                    }
                }
            };
            stack.push((next, next_text, next_string, next_free));
        }
    }
    false
}

/// The number at the end of a text the search extends, to bound its spellings: an exponent
/// only after a mantissa that is not zero (any exponent of zero is zero), and at most
/// [`MAX_EXPONENT_DIGITS`] exponent digits.
struct NumberTail {
    in_number: bool,
    nonzero_mantissa: bool,
    exponent_digits: Option<usize>,
}

/// Most exponent digits the search writes: larger exponents move a value past any bound a
/// finite set of numbers has.
const MAX_EXPONENT_DIGITS: usize = 4;

impl NumberTail {
    fn of(text: &[u8]) -> NumberTail {
        let start = text.iter().rposition(|b| !b"0123456789.eE+-".contains(b)).map_or(0, |i| i + 1);
        let tail = &text[start..];
        let exponent_at = tail.iter().position(|b| matches!(b, b'e' | b'E'));
        let mantissa = &tail[..exponent_at.unwrap_or(tail.len())];
        NumberTail {
            in_number: !tail.is_empty(),
            nonzero_mantissa: mantissa.iter().any(|b| matches!(b, b'1'..=b'9')),
            exponent_digits: exponent_at.map(|at| tail[at..].iter().filter(|b| b.is_ascii_digit()).count()),
        }
    }

    fn admits(&self, b: u8) -> bool {
        if !self.in_number {
            return true;
        }
        match (b, self.exponent_digits) {
            (b'e', None) => self.nonzero_mantissa,
            (b'e', Some(_)) => false,
            (b'0'..=b'9', Some(digits)) => {
                let most = if self.nonzero_mantissa { MAX_EXPONENT_DIGITS } else { 1 };
                digits < most
            }
            _ => true,
        }
    }
}

/// The decoder of the string (or key) open at the end of a JSON text, if one is open.
fn open_string_at_end(text: &[u8]) -> Option<StringDecoder> {
    let mut open: Option<StringDecoder> = None;
    for &b in text {
        open = match open.take() {
            None => (b == b'"').then(StringDecoder::default),
            Some(mut decoder) => match decoder.feed(b) {
                DecodeStep::Closed => None,
                _ => Some(decoder),
            },
        };
    }
    open
}

/// Whether an array with `count` items, `found` of them matching `contains`, can still be
/// completed.
fn array_live(graph: &Graph, shape: &ArrayShape, count: u64, found: u64, used: &[Canon]) -> bool {
    let max = shape.max.unwrap_or(u64::MAX);
    unique::distinct_items_reachable(graph, shape, count, used)
        && count <= max
        && shape.min <= max
        && (count >= shape.min || reachable_from(graph, shape, count) >= shape.min)
        && contains_reachable(shape, &graph.satisfiable, count, found)
}

/// Items reachable in a row, given `count` items already there.
fn reachable_from(graph: &Graph, shape: &ArrayShape, count: u64) -> u64 {
    let all = reachable_items(shape, &graph.satisfiable);
    if all == u64::MAX {
        return u64::MAX;
    }
    // Items at index >= count must be satisfiable up to `min`.
    let mut i = count;
    while i < shape.min && graph.is_satisfiable(shape.item(i)) {
        i += 1;
    }
    i
}

/// How item `count` may be read (`None`: not at all), by which outcomes keep the array live.
fn next_item(graph: &Graph, shape: &ArrayShape, count: u64, found: u64, used: &[Canon]) -> Option<ItemMode> {
    if count >= shape.max.unwrap_or(u64::MAX) {
        return None;
    }
    if !unique::item_available(graph, shape, count, used) {
        return None;
    }
    let Some(c) = &shape.contains else {
        let live = graph.is_satisfiable(shape.item(count)) && array_live(graph, shape, count + 1, found, used);
        return live.then_some(ItemMode::Free);
    };
    let matching = graph.is_satisfiable(c.matching(count)) && array_live(graph, shape, count + 1, found + 1, used);
    let avoiding = graph.is_satisfiable(c.avoiding(count)) && array_live(graph, shape, count + 1, found, used);
    match (matching, avoiding) {
        (true, true) => Some(ItemMode::Free),
        (true, false) => Some(ItemMode::Matching),
        // Without `maxContains` a match never hurts: the item stays free.
        (false, true) if c.max.is_none() => Some(ItemMode::Free),
        (false, true) => Some(ItemMode::Avoiding),
        (false, false) => None,
    }
}

impl ArrayValue {
    fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        use ArrayPhase::*;
        match self.phase {
            Closed => return Step::NotMine,
            AfterOpen | AfterItem | AfterComma if is_ws(b) => return Step::Consumed,
            _ => {}
        }
        match (self.phase, b) {
            (AfterOpen, b']') | (AfterItem, b']') => {
                self.tracks.retain(|t| {
                    let shape = t.shape(graph);
                    t.count >= shape.min && shape.contains.as_ref().is_none_or(|c| t.found >= c.min)
                });
                self.phase = Closed;
            }
            (AfterItem, b',') => {
                self.tracks.retain(|t| {
                    let used = t.seen.as_deref().map_or(&[][..], Vec::as_slice);
                    next_item(graph, t.shape(graph), t.count, t.found, used).is_some()
                });
                self.phase = AfterComma;
            }
            (AfterOpen, _) | (AfterComma, _) => {
                if self.keeps_text {
                    self.item_text.clear();
                    self.item_text.push(b);
                }
                let mut started = Vec::new();
                self.tracks.retain_mut(|t| {
                    let shape = t.shape(graph);
                    let used = t.seen.as_deref().map_or(&[][..], Vec::as_slice);
                    let Some(mode) = next_item(graph, shape, t.count, t.found, used) else { return false };
                    let contains = shape.contains.as_ref();
                    let node = match (mode, contains) {
                        (ItemMode::Matching, Some(c)) => c.matching(t.count),
                        (ItemMode::Avoiding, Some(c)) => c.avoiding(t.count),
                        _ => shape.item(t.count),
                    };
                    let (child, ok) = match &t.seen {
                        Some(seen) => match start_unique_item(graph, shape, t.count, node, b, seen) {
                            Some((child, decoder)) => {
                                t.decoder = decoder;
                                (Arc::new(child), true)
                            }
                            None => (Arc::new(Value::Start(node)), false),
                        },
                        None => match start_shared(graph, node, b, &mut started) {
                            Some(child) => (child, true),
                            None => (Arc::new(Value::Start(node)), false),
                        },
                    };
                    t.child = Some(child);
                    t.mode = mode;
                    // A free item is also read against `contains`, to count it if it matches.
                    t.probe = contains
                        .filter(|c| mode == ItemMode::Free && t.count >= c.from)
                        .and_then(|c| start_shared(graph, c.node, b, &mut started));
                    ok
                });
                self.phase = InItem;
            }
            (InItem, _) => {
                let mut finished = false;
                if self.keeps_text {
                    self.item_text.push(b);
                }
                let item_text = &self.item_text;
                let mut fed = FedValues::new(&self.tracks, |t| t.probe.is_some());
                self.tracks.retain_mut(|t| {
                    match feed_shared(t.child.as_mut().expect("an item is open"), graph, b, &mut fed) {
                        Step::Consumed => {
                            if t.probe.as_mut().is_some_and(|p| feed_shared(p, graph, b, &mut fed) != Step::Consumed) {
                                t.probe = None;
                            }
                            t.seen.is_none() || unique_item_live(graph, t, b, item_text)
                        }
                        Step::Rejected => false,
                        Step::NotMine => {
                            finished = true;
                            if let Some(seen) = t.seen.as_mut() {
                                // The byte that ended the item is not part of it.
                                match Canon::parse(&item_text[..item_text.len() - 1]) {
                                    Some(value) => Arc::make_mut(seen).push(value),
                                    None => return false,
                                }
                                t.decoder = None;
                            }
                            if t.mode == ItemMode::Matching || t.probe.as_ref().is_some_and(|p| p.is_complete(graph)) {
                                t.found += 1;
                            }
                            (t.child, t.probe, t.mode) = (None, None, ItemMode::Free);
                            t.count += 1;
                            true
                        }
                    }
                });
                if finished {
                    self.phase = AfterItem;
                    return if self.tracks.is_empty() { Step::Rejected } else { self.feed(graph, b) };
                }
            }
            _ => return Step::Rejected,
        }
        if self.tracks.is_empty() {
            Step::Rejected
        } else {
            Step::Consumed
        }
    }
}

/// A member's or item's value read alone, from its container's side of the value's start: the
/// whitespace before it, then the value on one schema, whose bytes its container only hands on
/// (see [`DocumentMatcher::value_start`]).
#[derive(Clone)]
pub(crate) struct LoneValue(Value);

impl LoneValue {
    pub(crate) fn new(node: NodeId) -> LoneValue {
        LoneValue(Value::Start(node))
    }

    /// True only when [`LoneValue::feed`] would surely return `Rejected` (see
    /// [`Value::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        !(matches!(self.0, Value::Start(_)) && is_ws(b)) && self.0.refuses(graph, b)
    }

    /// True only when [`LoneValue::feed`] takes every nonempty run of JSON whitespace from here
    /// (before the value).
    pub(crate) fn takes_any_whitespace(&self) -> bool {
        matches!(self.0, Value::Start(_))
    }

    /// True only when [`LoneValue::feed`] takes every nonempty run of ASCII digits from here
    /// (inside a number whose constraints cannot end them).
    pub(crate) fn takes_any_digits(&self) -> bool {
        matches!(&self.0, Value::Number(numbers) if numbers.iter().any(NumberMatcher::takes_any_digits))
    }

    /// Feeds one byte: `NotMine` once the value is complete and the byte is not its own.
    pub(crate) fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        if matches!(self.0, Value::Start(_)) && is_ws(b) {
            return Step::Consumed;
        }
        self.0.feed(graph, b)
    }
}

/// The whole text: whitespace, one value, whitespace.
#[derive(Debug, Clone)]
pub(crate) struct DocumentMatcher {
    value: Value,
    trailing: bool,
    started: bool,
    /// Insignificant whitespace bytes just read, and the most allowed in a row.
    whitespace_run: u32,
    max_whitespace: Option<u32>,
    nesting: Nesting,
}

/// What closing a key leads to, key by key, for masks inside a key (from
/// [`DocumentMatcher::key_closes`]).
///
/// A track that takes any key survives every byte of a key; any other survives a byte while
/// some key it allows starts with the text (named, or unnamed on the automaton of allowed
/// texts), so a key it allows kept it alive throughout. Keys that must spell ECMA-262 patterns
/// are left out: their syntax is checked apart. Either way only the closing quote decides, by [`key_use`].
/// Two keys with the same [`KeyClose`] leave matchers that differ only in the key text, which
/// the object reads again only when the member's value has ended and a `,` or `}` follows (the
/// keys seen decide those); its containers above never read it. So the bytes a token holds
/// after its closing quote, up to such a byte, are read alike.
pub(crate) struct KeyCloses<'m> {
    /// The key read so far, alike in every object reading it.
    read: &'m StringDecoder,
    /// The tracks of those objects.
    tracks: Vec<&'m ObjectTrack>,
    /// Per track, what its keys starting with the text so far are.
    keys: Vec<TrackKeys<'m>>,
    /// Per track, its key automata after the key read so far.
    runs: Vec<Option<PrefixRuns>>,
    /// Per track, [`key_use`] of the keys not named by its shape nor seen, by their value
    /// schema: it depends on nothing else of them.
    unnamed: Vec<Vec<(NodeId, bool)>>,
    /// The outcomes met so far; [`KeyCloses::close`] answers an index into them.
    outcomes: Vec<KeyClose>,
    /// The one outcome, once known, when every track is plain.
    uniform: Option<usize>,
    /// The rest of the key being closed when it holds an escape, the whole key when asked,
    /// and the outcome (reused between keys).
    rest: String,
    key: String,
    outcome: Vec<Option<NodeId>>,
}

/// A track's keys that start with the key read so far: the rest of each, after that text.
struct TrackKeys<'m> {
    named: Vec<&'m str>,
    seen: Vec<&'m str>,
    /// Neither named nor seen keys start with the text, no character is half read, and the
    /// shape reads every unnamed key on one schema: all keys close alike.
    plain: bool,
}

/// For each track, the node the member's value is read on, or `None` where the key is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeyClose(Vec<Option<NodeId>>);

impl<'m> KeyCloses<'m> {
    fn new(graph: &'m Graph, read: &'m StringDecoder, tracks: Vec<&'m ObjectTrack>) -> KeyCloses<'m> {
        let prefix = read.value();
        let keys = tracks
            .iter()
            .map(|track| {
                let shape = track.shape(graph);
                let sorted = KeyOptions::sorted_names(shape);
                let start = sorted.partition_point(|(name, _)| &**name < prefix);
                let named: Vec<&str> =
                    sorted[start..].iter().map_while(|(name, _)| name.strip_prefix(prefix)).collect();
                let seen: Vec<&str> = track.seen.iter().filter_map(|k| k.strip_prefix(prefix)).collect();
                let plain = !read.has_pending() && shape.keys.is_none() && named.is_empty() && seen.is_empty();
                TrackKeys { named, seen, plain }
            })
            .collect();
        let unnamed = vec![Vec::new(); tracks.len()];
        let runs = tracks.iter().map(|track| track.shape(graph).prefix_runs(prefix)).collect();
        KeyCloses {
            read,
            tracks,
            keys,
            runs,
            unnamed,
            outcomes: Vec::new(),
            uniform: None,
            rest: String::new(),
            key: String::new(),
            outcome: Vec::new(),
        }
    }

    /// The outcome of the key read so far followed by `content` then a closing quote, as an
    /// index into the outcomes met; `None` when those bytes do not close the key there.
    pub(crate) fn close(&mut self, graph: &Graph, content: &[u8]) -> Option<usize> {
        if self.uniform.is_some() {
            return self.uniform;
        }
        let decoded = self.decode_rest(content)?;
        let KeyCloses { read, tracks, keys, runs, unnamed, rest, key, outcome, .. } = self;
        let rest = decoded.unwrap_or(rest.as_str());
        outcome.clear();
        key.clear();
        // The whole key, spelled out on first need.
        let whole = |key: &mut String| {
            if key.is_empty() {
                key.push_str(read.value());
                key.push_str(rest);
            }
        };
        for (((track, keys), runs), unnamed) in tracks.iter().zip(keys.iter()).zip(runs.iter()).zip(unnamed) {
            let shape = track.shape(graph);
            let named = keys.named.contains(&rest);
            let node = match runs {
                _ if keys.plain => shape.other,
                Some(runs) if !named => shape.unnamed_value_schema(runs, rest),
                _ => {
                    whole(key);
                    shape.value_schema(key)
                }
            };
            let allowed = match unnamed.iter().find(|(n, _)| *n == node) {
                Some(&(_, allowed)) if !named && !keys.seen.contains(&rest) => allowed,
                known => {
                    whole(key);
                    let allowed = key_use(graph, shape, &track.seen, key, false).is_some();
                    if known.is_none() && !named && !keys.seen.contains(&rest) {
                        unnamed.push((node, allowed));
                    }
                    allowed
                }
            };
            outcome.push(allowed.then_some(node));
        }
        let index = match self.outcomes.iter().position(|known| known.0 == self.outcome) {
            Some(index) => index,
            None => {
                self.outcomes.push(KeyClose(self.outcome.clone()));
                self.outcomes.len() - 1
            }
        };
        if self.keys.iter().all(|keys| keys.plain) {
            self.uniform = Some(index);
        }
        Some(index)
    }

    /// The key's characters after the text so far, when `content` and a quote close it:
    /// `Some(rest)` without escapes (the content itself), `None` when decoded into
    /// `self.rest`; `None` outside when they do not close the key.
    fn decode_rest<'c>(&mut self, content: &'c [u8]) -> Option<Option<&'c str>> {
        if !self.read.has_pending() && !content.contains(&b'\\') {
            let content = std::str::from_utf8(content).ok()?;
            let closes = !content.contains('"') && !content.bytes().any(|b| b < 0x20);
            return closes.then_some(Some(content));
        }
        let mut decoder = self.read.clone();
        let continues = content.iter().all(|&b| decoder.feed(b) == DecodeStep::Continue);
        if !continues || decoder.feed(b'"') != DecodeStep::Closed {
            return None;
        }
        self.rest.clear();
        self.rest.push_str(&decoder.value()[self.read.value().len()..]);
        Some(None)
    }

    /// The schemas the member's value is read on after a key of outcome `index`, sorted and
    /// without repeats (tracks on one schema read alike); empty when no track takes the key.
    pub(crate) fn value_schemas(&self, index: usize) -> Box<[NodeId]> {
        schema_set(self.outcomes[index].0.iter().flatten().copied())
    }
}

/// What closing a string leads to, content by content, for masks inside a string that tracks
/// read on different schemas (from [`DocumentMatcher::value_closes`]).
///
/// The containers around the string hand its bytes on to the string values at their leaves and
/// keep nothing of its text (no witness or `contains` probe reads it twice, no `uniqueItems`
/// item text). At the closing quote each distinct value either completes or refuses it (its
/// tracks end there, and a container left with none refuses in turn). A completed string takes
/// no further byte: at the next one each container drops its values and goes on with the
/// tracks left, whatever the content was. So two contents that complete the same values leave
/// matchers that read every later byte alike, and the bytes a token holds after its closing
/// quote are a question about the outcome, not about the content.
pub(crate) struct ValueCloses<'m> {
    /// The tracks' values, without repeats (tracks on one schema share theirs).
    values: Vec<&'m Value>,
}

/// Which of the values of a [`ValueCloses`] a close completes, one bit each; 0: none, the
/// close is refused.
pub(crate) type ValueClose = u64;

impl<'m> ValueCloses<'m> {
    /// The closes of the string `value` is inside, when its containers read it through its
    /// string values alone (see [`Value::string_values`]) and they are few enough to name by bits.
    fn of(value: &'m Value) -> Option<ValueCloses<'m>> {
        let mut values = Vec::new();
        (value.string_values(&mut values) && values.len() <= ValueClose::BITS as usize)
            .then_some(ValueCloses { values })
    }

    /// The outcome of `content` then a closing quote; `None` when the quote does not close
    /// every value that reads the content (the caller then feeds such tokens whole).
    pub(crate) fn close(&self, graph: &Graph, content: &[u8]) -> Option<ValueClose> {
        let mut outcome = 0;
        for (i, value) in self.values.iter().enumerate() {
            let text = content.iter().chain(std::iter::once(&b'"'));
            let completes = match value {
                Value::Leaf { dfa, state } => {
                    let mut at = *state;
                    for &b in text {
                        at = dfa.next(at, b);
                        if at == DEAD {
                            break;
                        }
                    }
                    match at {
                        DEAD => false,
                        at if dfa.is_accepting(at) => true,
                        _ => return None,
                    }
                }
                value => {
                    let mut value = (*value).clone();
                    match text.into_iter().all(|&b| value.feed(graph, b) == Step::Consumed) {
                        false => false,
                        true if value.is_complete(graph) => true,
                        true => return None,
                    }
                }
            };
            outcome |= u64::from(completes) << i;
        }
        Some(outcome)
    }
}

/// Inside a key, one track reading it, whose shape names no key and classifies keys by
/// patterns, finitely many past some text (from [`DocumentMatcher::finite_keys`]).
///
/// Such a key's text stays live exactly while the automaton of allowed keys takes it and some
/// key it completes to is unseen ([`key_prefix_live`]); past a text that no seen key starts
/// with, any completion is unseen. So the automaton's rows decide every token that stays inside
/// the key, except those whose text some seen key starts with, which are asked one by one.
pub(crate) struct FiniteKey<'m> {
    pub(crate) text: &'m Arc<ByteDfa>,
    pub(crate) state: StateId,
    decoder: &'m StringDecoder,
    seen: &'m [String],
    unbounded_from: &'m [bool],
}

/// A step of the walk along the seen keys' spellings (see [`FiniteKey`]): the automaton state
/// and the key decoded so far.
#[derive(Clone)]
pub(crate) struct KeyReading {
    state: StateId,
    decoder: StringDecoder,
}

impl FiniteKey<'_> {
    /// Where a walk of the key's possible next bytes starts.
    pub(crate) fn reading(&self) -> KeyReading {
        KeyReading { state: self.state, decoder: self.decoder.clone() }
    }

    /// True only when no token whose bytes go on from `reading` with `b` can be a dead end:
    /// the automaton refuses `b`, or `b` is a plain character after which no seen key starts
    /// with the key's text.
    pub(crate) fn settled(&self, reading: &KeyReading, b: u8) -> bool {
        if self.text.next(reading.state, b) == DEAD {
            return true;
        }
        let plain = (0x20..0x80).contains(&b) && b != b'"' && b != b'\\';
        plain && !reading.decoder.has_pending() && {
            let prefix = reading.decoder.value();
            !self.seen.iter().any(|k| k.strip_prefix(prefix).is_some_and(|rest| rest.as_bytes().first() == Some(&b)))
        }
    }

    /// `reading` after `b`, while the key stays open; `None` when it closes or is invalid.
    pub(crate) fn read(&self, reading: KeyReading, b: u8) -> Option<KeyReading> {
        let state = self.text.next(reading.state, b);
        let mut decoder = reading.decoder;
        (state != DEAD && !self.text.is_accepting(state) && decoder.feed(b) == DecodeStep::Continue)
            .then_some(KeyReading { state, decoder })
    }

    /// Whether the key read so far (`reading`) completes to an allowed key not seen yet.
    pub(crate) fn live(&self, reading: &KeyReading) -> bool {
        self.unbounded_from[reading.state as usize]
            || unseen_key_completes(self.text, reading.state, &reading.decoder, self.seen)
    }
}

/// Schemas sorted without repeats: tracks on one schema read alike.
fn schema_set(nodes: impl Iterator<Item = NodeId>) -> Box<[NodeId]> {
    let mut nodes: Vec<NodeId> = nodes.collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.into_boxed_slice()
}

/// The innermost open container of a document, read apart from the containers above it (see
/// [`DocumentMatcher::inner_container`]), with the document's whitespace and nesting counts.
#[derive(Debug, Clone)]
pub(crate) struct InnerContainer {
    value: Value,
    whitespace_run: u32,
    max_whitespace: Option<u32>,
    nesting: Nesting,
}

impl InnerContainer {
    /// What closing the string this container is inside leads to (see [`ValueCloses`]).
    pub(crate) fn value_closes(&self) -> Option<ValueCloses<'_>> {
        ValueCloses::of(&self.value)
    }

    /// Feeds one byte as [`DocumentMatcher::feed`] would inside the container: `NotMine` once
    /// the container is closed and the byte belongs to the document around it.
    pub(crate) fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        if let Some(max) = self.max_whitespace {
            if is_ws(b) && !self.value.in_string(graph) {
                if self.whitespace_run >= max {
                    return Step::Rejected;
                }
                self.whitespace_run += 1;
            } else {
                self.whitespace_run = 0;
            }
        }
        match self.value.feed(graph, b) {
            Step::Consumed if !self.nesting.feed(b) => Step::Rejected,
            step => step,
        }
    }

    /// Whether every run of whitespace leaves the container as it is: between its tokens, with
    /// no bound on whitespace runs.
    pub(crate) fn takes_any_whitespace(&self) -> bool {
        self.max_whitespace.is_none() && self.value.between_tokens()
    }

    /// True only when [`InnerContainer::feed`] would surely refuse `b` (see [`Value::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        self.value.refuses(graph, b)
    }

    /// See [`DocumentMatcher::string_context`].
    pub(crate) fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if !self.value.in_string(graph) {
            return None;
        }
        self.value.walk_string_context(graph, slack)
    }

    /// See [`DocumentMatcher::number_contexts`].
    pub(crate) fn number_contexts(&self) -> Option<Vec<NumberMatcher>> {
        let mut numbers = Vec::new();
        self.value.number_contexts(&mut numbers).then_some(numbers)
    }

    /// Right after a key's closing quote, with no witness pending: the schemas the member's
    /// value is read on, sorted without repeats (as [`KeyCloses::value_schemas`] has them).
    pub(crate) fn member_schemas(&self, graph: &Graph) -> Option<Box<[NodeId]>> {
        let Value::Object(object) = &self.value else { return None };
        if object.phase != ObjectPhase::AfterKey || object.tracks.iter().any(|t| t.pending) {
            return None;
        }
        let key = object.key.value();
        Some(schema_set(object.tracks.iter().map(|t| t.shape(graph).value_schema(key))))
    }

    /// How many containers are open around the text read so far.
    pub(crate) fn depth(&self) -> u32 {
        self.nesting.depth
    }

    /// Reads `text` inside a key, as [`InnerContainer::feed`] would, when it does not close
    /// the key and some name of [`InnerContainer::named_keys`] goes on with the characters it
    /// spells. The tracks are not asked at each byte: a track that takes no key starting
    /// with the text refuses the key at its close, as it would have refused a byte before.
    /// False when the text is not UTF-8 so far.
    pub(crate) fn read_named_key_text(&mut self, graph: &Graph, text: &[u8]) -> bool {
        let Value::Object(object) = &mut self.value else { return false };
        if object.phase != ObjectPhase::InKey {
            return false;
        }
        if !text.is_empty() {
            self.whitespace_run = 0;
        }
        text.iter().all(|&b| object.feed_key(graph, b) == DecodeStep::Continue)
    }

    /// Inside a key that only keys named by the shapes can complete, on every track: the key
    /// read so far and the names that may come next and start with it, sorted without repeats.
    /// Then the container takes a byte that is no quote, escape or control character exactly
    /// when one of those names goes on with it. `None` elsewhere, and while a character or an
    /// escape is half read.
    pub(crate) fn named_keys<'a>(&'a self, graph: &'a Graph) -> Option<(&'a str, Vec<&'a str>)> {
        let Value::Object(object) = &self.value else { return None };
        if object.phase != ObjectPhase::InKey || object.key.has_pending() || object.key_syntax.is_some() {
            return None;
        }
        let mut names = Vec::new();
        for track in &object.tracks {
            let shape = track.shape(graph);
            // Keys the patterns classify, or any key, may be unnamed (see `key_prefix_live`).
            let options = track.key_options.as_ref()?;
            if shape.keys.is_some() || options.open {
                return None;
            }
            for (name, i) in KeyOptions::reachable(shape, &object.key) {
                if *options.named[i].get_or_init(|| key_allowed(graph, shape, &track.seen, name, track.pending)) {
                    names.push(name);
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        Some((object.key.value(), names))
    }
}

/// Most arrays and objects an instance nests in one another. The matcher's state is a tree as
/// deep as the text's nesting and is fed, copied and dropped recursively: the bound keeps the
/// stack within what any thread has (about 1 KiB a level), whatever a model emits.
pub(crate) const MAX_INSTANCE_DEPTH: u32 = 512;

/// The nesting depth of the text read so far, tracked apart from the value tree (which checks
/// the syntax): brackets count outside strings only.
#[derive(Debug, Clone, Copy, Default)]
struct Nesting {
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    /// Reads one byte; false when it would open a container beyond [`MAX_INSTANCE_DEPTH`].
    fn feed(&mut self, b: u8) -> bool {
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return true;
        }
        match b {
            b'"' => self.in_string = true,
            b'[' | b'{' => {
                if self.depth == MAX_INSTANCE_DEPTH {
                    return false;
                }
                self.depth += 1;
            }
            b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        true
    }
}

impl DocumentMatcher {
    pub(crate) fn new(root: NodeId, max_whitespace: Option<u32>) -> Self {
        DocumentMatcher {
            value: Value::Start(root),
            trailing: false,
            started: false,
            whitespace_run: 0,
            max_whitespace,
            nesting: Nesting::default(),
        }
    }

    /// Feeds one byte; false when no accepted text continues this way (the matcher is then
    /// unspecified and must be discarded).
    pub(crate) fn feed(&mut self, graph: &Graph, b: u8) -> bool {
        if let Some(max) = self.max_whitespace {
            let insignificant = is_ws(b) && (self.trailing || !self.started || !self.value.in_string(graph));
            if insignificant {
                if self.whitespace_run >= max {
                    return false;
                }
                self.whitespace_run += 1;
            } else {
                self.whitespace_run = 0;
            }
        }
        if self.trailing {
            return is_ws(b);
        }
        if !self.nesting.feed(b) {
            return false;
        }
        if !self.started {
            if is_ws(b) {
                return true;
            }
            self.started = true;
        }
        match self.value.feed(graph, b) {
            Step::Consumed => true,
            Step::Rejected => false,
            Step::NotMine => {
                self.trailing = true;
                is_ws(b)
            }
        }
    }

    /// Whether every run of whitespace is read and keeps the text completable: before the
    /// value, after it, or between the tokens of its container, with no bound on runs.
    pub(crate) fn takes_any_whitespace(&self) -> bool {
        self.max_whitespace.is_none() && (self.trailing || !self.started || self.value.between_tokens())
    }

    /// True only when [`DocumentMatcher::feed`] would surely return false for `b` (see
    /// [`Value::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        if self.trailing {
            return !is_ws(b);
        }
        (self.started || !is_ws(b)) && self.value.refuses(graph, b)
    }

    /// How many containers are open around the text read so far.
    pub(crate) fn depth(&self) -> u32 {
        self.nesting.depth
    }

    pub(crate) fn feed_all(&mut self, graph: &Graph, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.feed(graph, b))
    }

    pub(crate) fn is_accepting(&self, graph: &Graph) -> bool {
        self.trailing || (self.started && self.value.is_complete(graph))
    }

    /// See [`Value::string_leaves`].
    pub(crate) fn string_content_forgotten(&self) -> bool {
        !self.trailing && self.started && self.value.string_leaves(&mut |_| {})
    }

    /// Each track's automaton and state inside the open string, in track order, when its content
    /// is forgotten at the close (see [`Value::string_leaves`]): the matcher then changes only in
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

    /// The innermost open container, detached with the document's byte bookkeeping, when every
    /// container above it only hands bytes on to it: each has one child, shared by all its
    /// tracks, and keeps no item text (`uniqueItems`). While it consumes a byte, so does the
    /// document; a byte it refuses, the document refuses; a byte that is not its own, the
    /// document decides. Stepping it alone spares copying the containers above at every node
    /// of a mask's walk; `None` for the outermost container, which has none above it.
    pub(crate) fn inner_container(&self) -> Option<InnerContainer> {
        self.innermost().filter(|value| !std::ptr::eq(*value, &self.value)).map(|value| self.detach(value))
    }

    /// [`DocumentMatcher::inner_container`], the outermost container included.
    pub(crate) fn innermost_container(&self) -> Option<InnerContainer> {
        self.innermost().map(|value| self.detach(value))
    }

    fn detach(&self, value: &Value) -> InnerContainer {
        InnerContainer {
            value: value.clone(),
            whitespace_run: self.whitespace_run,
            max_whitespace: self.max_whitespace,
            nesting: self.nesting,
        }
    }

    /// The innermost open container every container above only hands bytes on to (see
    /// [`DocumentMatcher::inner_container`]), the outermost one included.
    fn innermost(&self) -> Option<&Value> {
        if self.trailing || !self.started {
            return None;
        }
        let mut inner = None;
        let mut value = &self.value;
        loop {
            let children: Vec<Option<&Arc<Value>>> = match value {
                Value::Object(o) if o.phase != ObjectPhase::Closed => {
                    inner = Some(value);
                    if o.phase != ObjectPhase::InValue {
                        break;
                    }
                    o.tracks.iter().map(|t| t.child.as_ref()).collect()
                }
                Value::Array(a) if a.phase != ArrayPhase::Closed => {
                    inner = Some(value);
                    if a.phase != ArrayPhase::InItem || a.keeps_text || a.tracks.iter().any(|t| t.seen.is_some()) {
                        break;
                    }
                    a.tracks.iter().map(|t| t.child.as_ref()).collect()
                }
                _ => break,
            };
            match children.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|c| c.is_some_and(|c| Arc::ptr_eq(c, first))) => {
                    value = first;
                }
                _ => break,
            }
        }
        inner
    }

    /// When the innermost containers are about to start a member's value (after the colon) or
    /// an item after a comma, and only the value's schemas decide the tokens that stay inside
    /// it: the schema each of their tracks reads it on, sorted, without repeats (see
    /// [`Value::value_start_nodes`], [`LoneValue`]). Also whitespace runs must be unbounded,
    /// and no token of at most `slack` bytes may reach the nesting limit.
    pub(crate) fn value_start(&self, graph: &Graph, slack: u64) -> Option<Vec<NodeId>> {
        if self.max_whitespace.is_some()
            || self.nesting.in_string
            || u64::from(self.nesting.depth).saturating_add(slack) > u64::from(MAX_INSTANCE_DEPTH)
        {
            return None;
        }
        let mut nodes = Vec::new();
        if !self.started || self.trailing || !self.value.value_start_nodes(graph, &mut nodes) {
            return None;
        }
        nodes.sort_unstable();
        nodes.dedup();
        (!nodes.is_empty()).then_some(nodes)
    }

    /// When the matcher is inside a key whose every track, in every object reading it, takes
    /// any key or classifies no keys by patterns, and has no witness member pending, and the
    /// containers above those objects only hand bytes on to them (see [`Value::key_objects`]):
    /// what closing that key leads to, for [`KeyCloses`].
    pub(crate) fn key_closes<'m>(&'m self, graph: &'m Graph) -> Option<KeyCloses<'m>> {
        if self.trailing || !self.started {
            return None;
        }
        let mut objects = Vec::new();
        if !self.value.key_objects(false, &mut objects) {
            return None;
        }
        let key = &objects.first()?.key;
        let tracks: Vec<&ObjectTrack> = objects.iter().flat_map(|o| &o.tracks).collect();
        let groupable = objects.iter().all(|o| o.key == *key)
            && tracks.iter().all(|t| !t.pending && (t.takes_any_key(graph) || !keys_are_patterns(t.shape(graph))));
        groupable.then(|| KeyCloses::new(graph, key, tracks))
    }

    /// When the matcher is inside a key, the objects reading it are reached through containers
    /// that only hand them bytes (no probe, no kept item text), and each of their tracks names no
    /// key, classifies keys by patterns and has room for one more: each track's automaton of
    /// allowed keys and state there, for [`FiniteKey`]. The document stays live while some track
    /// does: a container goes on while one of its tracks' values does.
    pub(crate) fn finite_keys<'m>(&'m self, graph: &'m Graph) -> Option<Vec<FiniteKey<'m>>> {
        if self.trailing || !self.started {
            return None;
        }
        let mut objects = Vec::new();
        if !self.value.key_objects(true, &mut objects) {
            return None;
        }
        let mut keys = Vec::new();
        for object in objects {
            if object.key_syntax.is_some() {
                return None;
            }
            for track in &object.tracks {
                let shape = track.shape(graph);
                let options = track.key_options.as_ref()?;
                let patterns = shape.keys.as_ref().filter(|_| !keys_are_patterns(shape))?;
                let text = patterns.allowed_text.as_ref()?;
                let room = || object_live(graph, shape, SeenKeys::new(&track.seen), 1, track.pending);
                if options.open || !options.named.is_empty() {
                    return None;
                }
                if track.allowed_key != DEAD && *options.unnamed_live.get_or_init(room) {
                    keys.push(FiniteKey {
                        text,
                        state: track.allowed_key,
                        decoder: &object.key,
                        seen: &track.seen,
                        unbounded_from: &patterns.unbounded_from,
                    });
                }
            }
        }
        Some(keys)
    }

    /// When the matcher is inside a string that every container hands on to the values reading
    /// it without keeping its text (see [`Value::string_values`]), and those values are few
    /// enough to name by bits: what closing the string leads to, for [`ValueCloses`].
    pub(crate) fn value_closes(&self) -> Option<ValueCloses<'_>> {
        if self.trailing || !self.started {
            return None;
        }
        ValueCloses::of(&self.value)
    }

    /// See [`Value::string_context`].
    pub(crate) fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if self.trailing || !self.started {
            return None;
        }
        self.value.walk_string_context(graph, slack)
    }

    /// See [`Value::number_contexts`]: `None` unless every track is inside a number.
    pub(crate) fn number_contexts(&self) -> Option<Vec<NumberMatcher>> {
        if self.trailing || !self.started {
            return None;
        }
        let mut numbers = Vec::new();
        self.value.number_contexts(&mut numbers).then_some(numbers)
    }

    /// See [`Value::string_contexts`]: `None` unless every track is inside some string.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executable::Backend;
    use crate::Compiler;

    /// The look ahead of mask walks never refuses a byte the matcher takes, and does refuse
    /// most of the bytes it does not take.
    #[test]
    fn refused_bytes_are_rejected() {
        let cases = [
            (
                r#"{"type": "object", "properties": {"n": {"type": "integer"}, "s": {"enum": ["a", "b"]}}, "additionalProperties": {"type": "array", "items": {"type": ["boolean", "null", "number"]}}}"#,
                r#"{"n": -12, "x": [true, null, 1.5e3, false], "s": "b", "y": []}"#,
            ),
            (
                r#"{"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"], "additionalProperties": false}, {"type": "array", "items": {"type": "object"}}]}"#,
                r#"[{"k": {"z": "q\"r"}}, {}]"#,
            ),
            (r#"{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}"#, r#" { "k" : 1 } "#),
            (
                // Named keys only, beside keys of a pattern: inside keys, bytes no key has next.
                r#"{"type": "object", "properties": {"key": {}, "kez": {}, "\u00e9t\u00e9": {}}, "patternProperties": {"^x-[a-z]+$": {}}, "additionalProperties": false}"#,
                r#"{"kez": 1, "x-ab": 2, "\u00e9t\u00e9": 3, "key": 4}"#,
            ),
        ];
        let (mut refused, mut rejected) = (0, 0);
        for (schema, text) in cases {
            let executable = Compiler::without_cache().compile_json_schema(schema).unwrap();
            let Backend::Structured(program) = executable.executable().backend() else {
                panic!("{schema} is structured")
            };
            let graph = &program.graph;
            let mut matcher = program.start();
            for at in 0..=text.len() {
                let inner = matcher.inner_container();
                for b in 0..=255u8 {
                    let taken = matcher.clone().feed(graph, b);
                    rejected += usize::from(!taken);
                    if matcher.refuses(graph, b) {
                        assert!(!taken, "{schema}: {:?} refused after {:?}", b as char, &text[..at]);
                        refused += 1;
                    }
                    if let Some(inner) = inner.as_ref().filter(|i| i.refuses(graph, b)) {
                        let step = inner.clone().feed(graph, b);
                        assert_eq!(step, Step::Rejected, "{schema}: {:?} after {:?}", b as char, &text[..at]);
                    }
                }
                if at < text.len() {
                    assert!(matcher.feed(graph, text.as_bytes()[at]), "{schema} takes {text}");
                }
            }
        }
        assert!(refused * 4 > rejected * 3, "the look ahead refuses {refused} of {rejected} rejected bytes");
    }
}
