//! Mask query: what closing the current key or value leads to, and the containers and lone
//! values the text is inside, so that `bind/` can write a mask for many tracks at once (inner
//! containers detached from their surroundings, keys read against finite key sets). The
//! recogniser never calls this module.

use std::sync::Arc;

use super::arrays::ArrayPhase;
use super::objects::{
    key_allowed, key_use, keys_are_patterns, object_live, unseen_key_completes, KeyOptions, ObjectPhase, ObjectTrack,
};
use super::string_readers::{CountedString, SyntaxString};
use super::{is_ws, DocumentMatcher, Nesting, OpenValue, Step, MAX_INSTANCE_DEPTH};
use crate::automata::{AutomatonId, ByteDfa, StateId, DEAD};
use crate::numbers::NumberMatcher;
use crate::structured::graph::{Graph, NodeId, PrefixRuns, SeenKeys};
use crate::structured::string_decoder::{DecodeStep, StringDecoder};
use crate::structured::unique;

/// A member's or item's value read alone, from its container's side of the value's start: the
/// whitespace before it, then the value on one schema, whose bytes its container only hands on
/// (see [`DocumentMatcher::value_start`]).
#[derive(Clone)]
pub(crate) struct LoneValue(OpenValue);

impl LoneValue {
    pub(crate) fn new(node: NodeId) -> LoneValue {
        LoneValue(OpenValue::Start(node))
    }

    /// True only when [`LoneValue::feed`] would surely return `Rejected` (see
    /// [`OpenValue::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        !(matches!(self.0, OpenValue::Start(_)) && is_ws(b)) && self.0.refuses(graph, b)
    }

    /// True only when [`LoneValue::feed`] takes every nonempty run of JSON whitespace from here
    /// (before the value).
    pub(crate) fn takes_any_whitespace(&self) -> bool {
        matches!(self.0, OpenValue::Start(_))
    }

    /// True only when [`LoneValue::feed`] takes every nonempty run of ASCII digits from here
    /// (inside a number whose constraints cannot end them).
    pub(crate) fn takes_any_digits(&self) -> bool {
        matches!(&self.0, OpenValue::Number(numbers) if numbers.iter().any(NumberMatcher::takes_any_digits))
    }

    /// Feeds one byte: `NotMine` once the value is complete and the byte is not its own.
    pub(crate) fn feed(&mut self, graph: &Graph, b: u8) -> Step {
        if matches!(self.0, OpenValue::Start(_)) && is_ws(b) {
            return Step::Consumed;
        }
        self.0.feed(graph, b)
    }
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
    pub(super) read: &'m StringDecoder,
    /// The tracks of those objects.
    pub(super) tracks: Vec<&'m ObjectTrack>,
    /// Per track, what its keys starting with the text so far are.
    pub(super) keys: Vec<TrackKeys<'m>>,
    /// Per track, its key automata after the key read so far.
    pub(super) runs: Vec<Option<PrefixRuns>>,
    /// Per track, [`key_use`] of the keys not named by its shape nor seen, by their value
    /// schema: it depends on nothing else of them.
    pub(super) unnamed: Vec<Vec<(NodeId, bool)>>,
    /// The outcomes met so far; [`KeyCloses::close`] answers an index into them.
    pub(super) outcomes: Vec<KeyClose>,
    /// The one outcome, once known, when every track is plain.
    pub(super) uniform: Option<usize>,
    /// The rest of the key being closed when it holds an escape, the whole key when asked,
    /// and the outcome (reused between keys).
    pub(super) rest: String,
    pub(super) key: String,
    pub(super) outcome: Vec<Option<NodeId>>,
}

/// A track's keys that start with the key read so far: the rest of each, after that text.
pub(super) struct TrackKeys<'m> {
    pub(super) named: Vec<&'m str>,
    pub(super) seen: Vec<&'m str>,
    /// Neither named nor seen keys start with the text, no character is half read, and the
    /// shape reads every unnamed key on one schema: all keys close alike.
    pub(super) plain: bool,
}

/// For each track, the node the member's value is read on, or `None` where the key is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KeyClose(Vec<Option<NodeId>>);

impl<'m> KeyCloses<'m> {
    pub(super) fn new(graph: &'m Graph, read: &'m StringDecoder, tracks: Vec<&'m ObjectTrack>) -> KeyCloses<'m> {
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
    pub(super) fn decode_rest<'c>(&mut self, content: &'c [u8]) -> Option<Option<&'c str>> {
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
    pub(super) values: Vec<&'m OpenValue>,
}

/// The outcome of a close under [`ValueCloses`]: which of its values the close completes, one
/// bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValueOutcome(u64);

impl ValueOutcome {
    /// Most values one outcome names.
    const MAX_VALUES: usize = u64::BITS as usize;

    /// No value completes: the close is refused.
    pub(crate) fn is_refused(self) -> bool {
        self.0 == 0
    }
}

impl<'m> ValueCloses<'m> {
    /// The closes of the string `value` is inside, when its containers read it through its
    /// string values alone (see [`OpenValue::string_values`]) and they are few enough to name by bits.
    pub(super) fn of(value: &'m OpenValue) -> Option<ValueCloses<'m>> {
        let mut values = Vec::new();
        (value.string_values(&mut values) && values.len() <= ValueOutcome::MAX_VALUES).then_some(ValueCloses { values })
    }

    /// The outcome of `content` then a closing quote; `None` when the quote does not close
    /// every value that reads the content (the caller then feeds such tokens whole).
    pub(crate) fn close(&self, graph: &Graph, content: &[u8]) -> Option<ValueOutcome> {
        let mut outcome = 0;
        for (i, value) in self.values.iter().enumerate() {
            let text = content.iter().chain(std::iter::once(&b'"'));
            let completes = match value {
                OpenValue::Leaf { dfa, state } => {
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
                        true if value.is_complete() => true,
                        true => return None,
                    }
                }
            };
            outcome |= u64::from(completes) << i;
        }
        Some(ValueOutcome(outcome))
    }
}

/// Inside a key, one track reading it, whose shape names no key and classifies keys by
/// patterns, finitely many past some text (from [`DocumentMatcher::finite_keys`]).
///
/// Such a key's text stays live exactly while the automaton of allowed keys takes it and some
/// key it completes to is unseen ([`key_prefix_live`](super::objects::key_prefix_live)); past a text that no seen key starts
/// with, any completion is unseen. So the automaton's rows decide every token that stays inside
/// the key, except those whose text some seen key starts with, which are asked one by one.
pub(crate) struct FiniteKey<'m> {
    pub(crate) text: &'m Arc<ByteDfa>,
    pub(crate) state: StateId,
    pub(super) decoder: &'m StringDecoder,
    pub(super) seen: &'m [String],
    /// By state, whether infinitely many keys complete it (`None`: known for no state).
    pub(super) unbounded_from: Option<&'m [bool]>,
}

/// A step of the walk along the seen keys' spellings (see [`FiniteKey`]): the automaton state
/// and the key decoded so far.
#[derive(Clone)]
pub(crate) struct KeyReading {
    pub(super) state: StateId,
    pub(super) decoder: StringDecoder,
}

impl FiniteKey<'_> {
    /// Where a walk of the key's possible next bytes starts.
    pub(crate) fn reading(&self) -> KeyReading {
        KeyReading { state: self.state, decoder: self.decoder.clone() }
    }

    /// True only when no token whose bytes go on from `reading` with `b` can be a dead end:
    /// the automaton refuses `b`, or `b` stands for itself in the decoded key (printable ASCII
    /// other than the quote and the backslash, or raw UTF-8, outside an escape) and no seen key
    /// goes on with the key's bytes so far and `b`: every key below is then unseen, and the
    /// automaton alone decides.
    pub(crate) fn settled(&self, reading: &KeyReading, b: u8) -> bool {
        if self.text.next(reading.state, b) == DEAD {
            return true;
        }
        let literal = ((0x20..0x80).contains(&b) && b != b'"' && b != b'\\') || b >= 0x80;
        let Some(pending) = reading.decoder.raw_pending().filter(|_| literal) else { return false };
        let prefix = reading.decoder.value().as_bytes();
        let at = prefix.len() + pending.len();
        !self
            .seen
            .iter()
            .map(|k| k.as_bytes())
            .any(|k| k.len() > at && k.starts_with(prefix) && k[prefix.len()..].starts_with(pending) && k[at] == b)
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
        self.unbounded_from.is_some_and(|u| u[reading.state as usize])
            || unseen_key_completes(self.text, reading.state, &reading.decoder, self.seen)
    }
}

/// An open string item of an array under `uniqueItems` (see
/// [`DocumentMatcher::unique_string_items`]): its tokens that stay inside are decided as a
/// finite key's are, the items before it standing for the keys seen.
pub(crate) struct UniqueStringItem<'m> {
    text: &'m Arc<ByteDfa>,
    state: StateId,
    decoder: &'m StringDecoder,
    seen: Vec<String>,
    unbounded_from: Option<&'m [bool]>,
}

impl UniqueStringItem<'_> {
    pub(crate) fn as_key(&self) -> FiniteKey<'_> {
        FiniteKey {
            text: self.text,
            state: self.state,
            decoder: self.decoder,
            seen: &self.seen,
            unbounded_from: self.unbounded_from,
        }
    }
}

impl OpenValue {
    /// See [`DocumentMatcher::unique_string_items`]: false unless every track ends in such an
    /// item, with nothing above it that compares or probes its text.
    fn unique_string_items<'m>(&'m self, graph: &'m Graph, out: &mut Vec<UniqueStringItem<'m>>) -> bool {
        let mut within = |child: Option<&'m Arc<OpenValue>>, probe: Option<&'m Arc<OpenValue>>| {
            probe.is_none() && child.is_some_and(|c| c.unique_string_items(graph, out))
        };
        match self {
            OpenValue::Object(o) if o.phase == ObjectPhase::InValue => {
                o.tracks.iter().all(|t| within(t.child.as_ref(), t.probe.as_ref()))
            }
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem && !a.keeps_text => {
                a.tracks.iter().all(|t| within(t.child.as_ref(), t.probe.as_ref()))
            }
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem => a.tracks.iter().all(|t| {
                let (Some(OpenValue::Leaf { dfa, state }), Some(decoder), Some(seen), None) =
                    (t.child.as_deref(), &t.decoder, &t.seen, &t.probe)
                else {
                    return false;
                };
                if dfa.is_accepting(*state) {
                    return false;
                }
                let unbounded_from = graph.unbounded_strings.get(&AutomatonId::of(dfa)).map(|u| &u.from[..]);
                let seen = unique::seen_strings(seen);
                out.push(UniqueStringItem { text: dfa, state: *state, decoder, seen, unbounded_from });
                true
            }),
            _ => false,
        }
    }
}

/// Schemas sorted without repeats: tracks on one schema read alike.
pub(super) fn schema_set(nodes: impl Iterator<Item = NodeId>) -> Box<[NodeId]> {
    let mut nodes: Vec<NodeId> = nodes.collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.into_boxed_slice()
}

/// The innermost open container of a document, read apart from the containers above it (see
/// [`DocumentMatcher::inner_container`]), with the document's whitespace and nesting counts.
#[derive(Debug, Clone)]
pub(crate) struct InnerContainer {
    pub(super) value: OpenValue,
    pub(super) whitespace_run: u32,
    pub(super) max_whitespace: Option<u32>,
    pub(super) nesting: Nesting,
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
            if is_ws(b) && !self.value.in_string() {
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

    /// True only when [`InnerContainer::feed`] would surely refuse `b` (see [`OpenValue::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        self.value.refuses(graph, b)
    }

    /// See [`DocumentMatcher::string_context`].
    pub(crate) fn string_context<'a>(&'a self, graph: &'a Graph, slack: u64) -> Option<(&'a Arc<ByteDfa>, StateId)> {
        if !self.value.in_string() {
            return None;
        }
        self.value.walk_string_context(graph, slack)
    }

    /// See [`DocumentMatcher::syntax_context`].
    pub(crate) fn syntax_context(&self) -> Option<&SyntaxString> {
        self.value.syntax_context()
    }

    /// See [`DocumentMatcher::counted_context`].
    pub(crate) fn counted_context(&self) -> Option<&CountedString> {
        self.value.counted_context()
    }

    /// See [`DocumentMatcher::number_contexts`].
    pub(crate) fn number_contexts(&self) -> Option<Vec<NumberMatcher>> {
        let mut numbers = Vec::new();
        self.value.number_contexts(&mut numbers).then_some(numbers)
    }

    /// Right after a key's closing quote, with no witness pending: the schemas the member's
    /// value is read on, sorted without repeats (as [`KeyCloses::value_schemas`] has them).
    pub(crate) fn member_schemas(&self, graph: &Graph) -> Option<Box<[NodeId]>> {
        let OpenValue::Object(object) = &self.value else { return None };
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
        let OpenValue::Object(object) = &mut self.value else { return false };
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
        let OpenValue::Object(object) = &self.value else { return None };
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

impl OpenValue {
    /// The schemas of the value about to start in the containers at the leaves of this value,
    /// into `out`, when the containers on the way hand bytes on to their tracks' values and
    /// those containers start it on one schema per track: no `contains` deciding how the item is
    /// read, no `uniqueItems` comparing it. A track then survives the value's bytes exactly
    /// while its value does (a witness or `contains` probe reading it too drops out on its own),
    /// and a container while one of its tracks does: a token that stays inside the value is
    /// taken exactly when some schema's value takes it alone.
    pub(super) fn value_start_nodes(&self, graph: &Graph, out: &mut Vec<NodeId>) -> bool {
        match self {
            OpenValue::Object(o) => match o.phase {
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
            OpenValue::Array(a) if a.keeps_text || a.tracks.iter().any(|t| t.seen.is_some()) => false,
            OpenValue::Array(a) => match a.phase {
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

    /// True only when [`OpenValue::feed`] would return `NotMine` for `b`: the value is complete and
    /// `b` cannot continue it (the byte then belongs to the container around it).
    pub(super) fn yields(&self, b: u8) -> bool {
        match self {
            OpenValue::Leaf { dfa, state } => dfa.is_accepting(*state) && dfa.next(*state, b) == DEAD,
            OpenValue::Number(matchers) => {
                !matchers.iter().any(|m| m.can_continue_with(b)) && matchers.iter().any(NumberMatcher::is_accepting)
            }
            OpenValue::Object(o) => o.phase == ObjectPhase::Closed,
            OpenValue::Array(a) => a.phase == ArrayPhase::Closed,
            OpenValue::Start(_) | OpenValue::Counted(_) | OpenValue::Syntax(_) => false,
        }
    }
}

impl DocumentMatcher {
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

    pub(super) fn detach(&self, value: &OpenValue) -> InnerContainer {
        InnerContainer {
            value: value.clone(),
            whitespace_run: self.whitespace_run,
            max_whitespace: self.max_whitespace,
            nesting: self.nesting,
        }
    }

    /// The innermost open container every container above only hands bytes on to (see
    /// [`DocumentMatcher::inner_container`]), the outermost one included.
    pub(super) fn innermost(&self) -> Option<&OpenValue> {
        if self.trailing || !self.started {
            return None;
        }
        let mut inner = None;
        let mut value = &self.value;
        loop {
            let children: Vec<Option<&Arc<OpenValue>>> = match value {
                OpenValue::Object(o) if o.phase != ObjectPhase::Closed => {
                    inner = Some(value);
                    if o.phase != ObjectPhase::InValue {
                        break;
                    }
                    o.tracks.iter().map(|t| t.child.as_ref()).collect()
                }
                OpenValue::Array(a) if a.phase != ArrayPhase::Closed => {
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
    /// [`OpenValue::value_start_nodes`], [`LoneValue`]). Also whitespace runs must be unbounded,
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
    /// containers above those objects only hand bytes on to them (see [`OpenValue::key_objects`]):
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
                        unbounded_from: Some(&patterns.unbounded_from),
                    });
                }
            }
        }
        Some(keys)
    }

    /// When every track is inside a string item of an array under `uniqueItems` (and nothing
    /// above those arrays compares or probes their text): each such item. Inside it a token
    /// that stays in the string is admitted when the item's automaton takes it and some
    /// completion is not an item before, as in a finite key; the closing tokens are replayed.
    pub(crate) fn unique_string_items<'m>(&'m self, graph: &'m Graph) -> Option<Vec<UniqueStringItem<'m>>> {
        if self.trailing || !self.started {
            return None;
        }
        let mut items = Vec::new();
        (self.value.unique_string_items(graph, &mut items) && !items.is_empty()).then_some(items)
    }

    /// When the matcher is inside a string that every container hands on to the values reading
    /// it without keeping its text (see [`OpenValue::string_values`]), and those values are few
    /// enough to name by bits: what closing the string leads to, for [`ValueCloses`].
    pub(crate) fn value_closes(&self) -> Option<ValueCloses<'_>> {
        if self.trailing || !self.started {
            return None;
        }
        ValueCloses::of(&self.value)
    }
}
