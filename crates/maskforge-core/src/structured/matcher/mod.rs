//! The structured matcher: a byte-at-a-time recogniser over the schema graph. Its state is the
//! path of open JSON values; each open object or array tracks every shape (from `anyOf`) that
//! can still match, each with its own child. Every state it reaches can still be completed.
//!
//! The recogniser is this file (the document, one value, sharing of values between copies),
//! `objects`, `arrays` and `string_readers`; it alone decides what the matcher accepts.
//! `contexts`, `refusals` and `closes` are the *mask queries*: questions `bind/` asks of a
//! position so that it can write a mask without feeding every token byte by byte (which string
//! automaton a position is inside, which bytes are surely refused, what closing a key or value
//! leads to). They read the recogniser's state and never change what it accepts; the
//! recogniser never calls them. A wrong answer from a query is a wrong mask: the reference-route
//! tests compare every mask the queries lead to with feeding each token to the recogniser.
use std::sync::Arc;

use super::graph::{Graph, NodeId, SeenKeys};
use super::string_decoder::{CodePointCounter, StringDecoder};
use crate::automata::{AutomatonId, ByteDfa, StateId, DEAD};
use crate::numbers::NumberMatcher;

mod arrays;
mod closes;
mod contexts;
mod objects;
mod refusals;
mod string_readers;

use arrays::{array_live, ArrayPhase, ArrayTrack, ArrayValue, ItemMode};
pub(crate) use closes::{FiniteKey, InnerContainer, KeyCloses, LoneValue, ValueCloses, ValueOutcome};
use objects::{object_live, ObjectPhase, ObjectTrack, ObjectValue};
pub(crate) use string_readers::{CountedString, SyntaxString};
use string_readers::{SyntaxReader, SyntaxReading};

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
fn feed_shared(value: &mut Arc<OpenValue>, graph: &Graph, b: u8, fed: &mut FedValues) -> Step {
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
    before: *const OpenValue,
    after: Arc<OpenValue>,
    step: Step,
}

/// Starts the value of a member or item on `node` with the byte `b`, sharing the value with an
/// earlier track of the same container started on the same node (`started`); `None` when the
/// byte cannot start it.
fn start_shared(
    graph: &Graph,
    node: NodeId,
    b: u8,
    started: &mut Vec<(NodeId, Option<Arc<OpenValue>>)>,
) -> Option<Arc<OpenValue>> {
    if let Some((_, value)) = started.iter().find(|(n, _)| *n == node) {
        return value.clone();
    }
    let mut value = OpenValue::Start(node);
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

/// How [`OpenValue::open_ended`] counts the open string a value is inside (if any).
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
enum OpenValue {
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

impl OpenValue {
    /// Whether the innermost open value is a string (or key) still open: whitespace there is
    /// content, not insignificant.
    fn in_string(&self) -> bool {
        let child_in_string = |child: Option<&OpenValue>| child.is_some_and(|c| c.in_string());
        match self {
            OpenValue::Leaf { dfa, state } => !dfa.is_accepting(*state),
            OpenValue::Counted(c) => !c.is_complete(),
            OpenValue::Syntax(p) => !p.is_complete(),
            OpenValue::Object(o) => match o.phase {
                ObjectPhase::InKey => true,
                ObjectPhase::InValue => child_in_string(o.tracks.first().and_then(|t| t.child.as_deref())),
                _ => false,
            },
            OpenValue::Array(a) => {
                a.phase == ArrayPhase::InItem && child_in_string(a.tracks.first().and_then(|t| t.child.as_deref()))
            }
            OpenValue::Start(_) | OpenValue::Number(_) => false,
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            OpenValue::Start(_) => false,
            OpenValue::Leaf { dfa, state } => dfa.is_accepting(*state),
            OpenValue::Counted(c) => c.is_complete(),
            OpenValue::Syntax(p) => p.is_complete(),
            OpenValue::Number(matchers) => matchers.iter().any(NumberMatcher::is_accepting),
            OpenValue::Object(o) => o.phase == ObjectPhase::Closed,
            OpenValue::Array(a) => a.phase == ArrayPhase::Closed,
        }
    }

    /// Whether infinitely many values complete this one: a sound test (false may still have
    /// infinitely many). `strings` says how the open string inside it counts: as it reads now,
    /// or so that the verdict holds whatever the string reads next without closing.
    fn open_ended(&self, graph: &Graph, strings: OpenStrings) -> bool {
        let unbounded = |dfa: &Arc<ByteDfa>| graph.unbounded_strings.get(&(AutomatonId::of(dfa)));
        match self {
            OpenValue::Start(node) => graph.infinite[*node as usize],
            OpenValue::Leaf { dfa, state } => {
                !dfa.is_accepting(*state)
                    && match strings {
                        OpenStrings::Now => unbounded(dfa).is_some_and(|u| u.from[*state as usize]),
                        OpenStrings::Throughout => unbounded(dfa).is_some_and(|u| u.throughout[*state as usize]),
                    }
            }
            OpenValue::Counted(c) => match strings {
                OpenStrings::Now => c.open_ended(),
                OpenStrings::Throughout => c.open_ended() && c.range.max.is_none(),
            },
            // A valid pattern followed by `a` is valid: every open reading has infinitely many.
            // Host names are at most 253 octets.
            OpenValue::Syntax(p) => {
                strings == OpenStrings::Now
                    && p.reading.as_ref().is_some_and(|r| !r.closed && matches!(r.reader, SyntaxReader::Pattern(_)))
            }
            OpenValue::Number(matchers) => matchers.iter().any(NumberMatcher::has_unbounded_completions),
            OpenValue::Object(o) => {
                o.phase != ObjectPhase::Closed && o.tracks.iter().any(|t| t.open_ended(graph, o.phase, strings))
            }
            OpenValue::Array(a) => {
                a.phase != ArrayPhase::Closed && a.tracks.iter().any(|t| t.open_ended(graph, a.phase, strings))
            }
        }
    }

    fn start(graph: &Graph, node: NodeId, b: u8) -> Option<OpenValue> {
        let n = graph.node(node);
        let leaf = |dfa: &Arc<ByteDfa>| {
            let state = dfa.next(dfa.start(), b);
            (state != DEAD).then(|| OpenValue::Leaf { dfa: Arc::clone(dfa), state })
        };
        match b {
            b'n' if n.admits_null => leaf(&graph.literal_null),
            b't' if n.admits_true => leaf(&graph.literal_true),
            b'f' if n.admits_false => leaf(&graph.literal_false),
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
                Some(OpenValue::Syntax(Box::new(SyntaxString { reading: Some(reading), alt })))
            }
            b'"' => {
                let automaton = n.strings.as_ref().and_then(leaf);
                match &n.counted_strings {
                    None => automaton,
                    Some(counted) => {
                        let alt = automaton.map(|value| match value {
                            OpenValue::Leaf { dfa, state } => (dfa, state),
                            _ => unreachable!("strings start as leaves"),
                        });
                        let texts = Arc::clone(counted.within.as_ref().unwrap_or(&graph.any_string));
                        let room = counted
                            .within
                            .as_ref()
                            .map(|within| Arc::clone(&graph.code_point_rooms[&AutomatonId::of(within)]));
                        Some(OpenValue::Counted(Box::new(CountedString {
                            text: texts.next(texts.start(), b),
                            texts,
                            room,
                            counter: CodePointCounter::default(),
                            range: counted.range,
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
                (!alive.is_empty()).then_some(OpenValue::Number(alive))
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
                    OpenValue::Object(ObjectValue {
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
                    OpenValue::Array(ArrayValue {
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
            OpenValue::Start(node) => match OpenValue::start(graph, *node, b) {
                Some(v) => {
                    *self = v;
                    Step::Consumed
                }
                None => Step::Rejected,
            },
            OpenValue::Leaf { dfa, state } => {
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
            OpenValue::Number(matchers) => feed_number(matchers, b),
            OpenValue::Counted(string) => string.feed(b),
            OpenValue::Syntax(string) => string.feed(b),
            OpenValue::Object(object) => object.feed(graph, b),
            OpenValue::Array(array) => array.feed(graph, b),
        }
    }
}

/// The whole text: whitespace, one value, whitespace.
#[derive(Debug, Clone)]
pub(crate) struct DocumentMatcher {
    value: OpenValue,
    trailing: bool,
    started: bool,
    /// Insignificant whitespace bytes just read, and the most allowed in a row.
    whitespace_run: u32,
    max_whitespace: Option<u32>,
    nesting: Nesting,
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

/// Where text would close the container around the current position, read as the matcher's
/// nesting reads it: for text starting inside a string (`in_string`, after a backslash when
/// `escaped`) or outside, `hits[j - 1]` is the index of the byte that closes `j` levels above
/// the start (a `}` or `]` outside strings, with brackets opened in between closed first).
pub(crate) fn closing_offsets(bytes: &[u8], in_string: bool, escaped: bool) -> Vec<usize> {
    let mut nesting = Nesting { depth: u32::MAX / 2, in_string, escaped };
    let start = nesting.depth;
    let mut hits = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        nesting.feed(b);
        let closed = start.saturating_sub(nesting.depth) as usize;
        if closed > hits.len() {
            hits.push(i);
        }
    }
    hits
}

impl DocumentMatcher {
    /// The nesting of the text read so far: open containers, inside a string, after its `\`.
    pub(crate) fn nesting(&self) -> (u32, bool, bool) {
        (self.nesting.depth, self.nesting.in_string, self.nesting.escaped)
    }

    /// Whether the value has started (a byte other than leading whitespace was read).
    pub(crate) fn has_started(&self) -> bool {
        self.started
    }

    /// Whether the matcher is as it starts: nothing read but whitespace it does not count.
    pub(crate) fn is_at_start(&self) -> bool {
        !self.started && self.whitespace_run == 0
    }

    pub(crate) fn new(root: NodeId, max_whitespace: Option<u32>) -> Self {
        DocumentMatcher {
            value: OpenValue::Start(root),
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
            let insignificant = is_ws(b) && (self.trailing || !self.started || !self.value.in_string());
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

    /// How many containers are open around the text read so far.
    pub(crate) fn depth(&self) -> u32 {
        self.nesting.depth
    }

    pub(crate) fn feed_all(&mut self, graph: &Graph, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.feed(graph, b))
    }

    pub(crate) fn is_accepting(&self) -> bool {
        self.trailing || (self.started && self.value.is_complete())
    }

    /// Whether the value has ended and only whitespace can follow.
    pub(crate) fn is_trailing(&self) -> bool {
        self.trailing
    }
}
