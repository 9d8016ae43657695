//! The recogniser's objects: members read against every object shape still alive (tracks),
//! with keys checked against named properties, patterns, `propertyNames`, the declared order
//! and the shape's witness, and each prefix kept completable.
//!
//! Part of the recogniser: it never calls the mask queries.

use std::sync::{Arc, OnceLock};

use super::{feed_shared, is_ws, start_shared, FedValues, OpenStrings, OpenValue, Step};
use crate::automata::{ByteDfa, StateId, DEAD};
use crate::structured::graph::{addable_optional_keys, witness_reachable, Graph, NodeId, ObjectShape, SeenKeys};
use crate::structured::pattern_syntax::PatternSyntax;
use crate::structured::string_decoder::{DecodeStep, StringDecoder};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ObjectPhase {
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
pub(super) struct ObjectValue {
    pub(super) phase: ObjectPhase,
    pub(super) key: StringDecoder,
    /// The key read as an ECMA-262 pattern, for tracks whose keys must be patterns
    /// (`propertyNames` with `format: "regex"`); `None` once it cannot become one.
    pub(super) key_syntax: Option<Box<PatternSyntax>>,
    /// The key's raw text on the any-string automaton, for masks inside keys.
    pub(super) key_text: StateId,
    pub(super) tracks: Vec<ObjectTrack>,
}

/// One object shape still matching, with its keys so far and its current member's value.
#[derive(Debug, Clone)]
pub(super) struct ObjectTrack {
    pub(super) node: NodeId,
    pub(super) shape: u32,
    pub(super) seen: Arc<Vec<String>>,
    /// State of the key being read on the shape's automaton of allowed unnamed keys, and on its
    /// automaton of candidate keys (see [`PatternKeys`](crate::structured::graph::PatternKeys)).
    pub(super) allowed_key: StateId,
    pub(super) context_key: StateId,
    pub(super) child: Option<Arc<OpenValue>>,
    /// The shape's witness member has not occurred yet.
    pub(super) pending: bool,
    /// The current member's value read against the witness' schema, while it may match.
    pub(super) probe: Option<Arc<OpenValue>>,
    /// The current member must serve as the witness (its child is the conjunction).
    pub(super) serving: bool,
    /// What the key being read may become, worked out when it starts (`None` between keys).
    pub(super) key_options: Option<Arc<KeyOptions>>,
}

/// What the next key of a track may be, fixed by its keys seen while a key is read: asked at
/// every byte of the key (and at every trie node of a mask inside one). Each answer is worked
/// out on first use and shared by the matcher's copies.
#[derive(Debug)]
pub(super) struct KeyOptions {
    /// Any key text that stays a string leads to an allowed key.
    pub(super) open: bool,
    /// Whether each named key (`properties`, then `required`, as
    /// [`KeyOptions::candidates`] lists them) may come next.
    pub(super) named: Box<[OnceLock<bool>]>,
    /// One more key not named by the shape keeps the object completable.
    pub(super) unnamed_live: OnceLock<bool>,
}

impl KeyOptions {
    pub(super) fn new(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> KeyOptions {
        let open = key_open(graph, shape, seen, pending);
        let count = if open { 0 } else { Self::candidates(shape).count() };
        KeyOptions { open, named: (0..count).map(|_| OnceLock::new()).collect(), unnamed_live: OnceLock::new() }
    }

    /// The named keys `decoder`'s text can still become, with their indices in `named`: the
    /// run of the shape's sorted names that starts with the text, found by binary search
    /// rather than a comparison with every name at every byte.
    pub(super) fn reachable<'a>(
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
    pub(super) fn sorted_names(shape: &ObjectShape) -> &[(Box<str>, u32)] {
        shape.sorted_names.get_or_init(|| {
            let mut sorted: Vec<(Box<str>, u32)> =
                Self::candidates(shape).enumerate().map(|(i, name)| (name.as_str().into(), i as u32)).collect();
            sorted.sort_unstable();
            sorted.into_boxed_slice()
        })
    }

    /// Whether some named key starts with `text` followed by the byte `b`.
    pub(super) fn some_name_continues(shape: &ObjectShape, text: &str, b: u8) -> bool {
        let sorted = Self::sorted_names(shape);
        let extended = || text.bytes().chain(std::iter::once(b));
        let start = sorted.partition_point(|(name, _)| name.bytes().lt(extended()));
        sorted
            .get(start)
            .is_some_and(|(name, _)| name.len() > text.len() && name.bytes().zip(extended()).all(|(x, y)| x == y))
    }

    /// The named keys, in a fixed order. Required names need not be declared in `properties`.
    pub(super) fn candidates(shape: &ObjectShape) -> impl Iterator<Item = &String> {
        shape.properties.keys().chain(shape.required.iter())
    }
}

pub(super) fn missing_required<'a>(
    shape: &'a ObjectShape,
    seen: SeenKeys<'a>,
) -> impl Iterator<Item = &'a String> + 'a {
    shape.required.iter().filter(move |k| !seen.contains(k))
}

/// Under `property_order = declared`, which declared keys may still come after `seen` (and,
/// when `undeclared`, a key that is not declared).
pub(super) struct OrderGate {
    pub(super) last: Option<usize>,
    pub(super) undeclared: bool,
}

impl OrderGate {
    pub(super) fn new(graph: &Graph, shape: &ObjectShape, seen: SeenKeys, undeclared: bool) -> OrderGate {
        if !graph.ordered {
            return OrderGate { last: None, undeclared: false };
        }
        let positions: Vec<Option<usize>> = seen.iter().map(|k| shape.position(k)).collect();
        OrderGate {
            last: positions.iter().flatten().copied().max(),
            undeclared: undeclared || positions.iter().any(Option::is_none),
        }
    }

    pub(super) fn admits(&self, shape: &ObjectShape, key: &str) -> bool {
        match shape.position(key) {
            None => true,
            Some(i) => !self.undeclared && self.last.is_none_or(|last| i > last),
        }
    }
}

/// Whether an object with keys `seen`, plus `unnamed` further keys not named by the shape whose
/// schemas are satisfiable, can still be completed (`pending`: with its witness member still
/// to come).
pub(super) fn object_live(graph: &Graph, shape: &ObjectShape, seen: SeenKeys, unnamed: u64, pending: bool) -> bool {
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
pub(super) fn key_use(graph: &Graph, shape: &ObjectShape, seen: &[String], key: &str, pending: bool) -> Option<bool> {
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
pub(super) fn key_allowed(graph: &Graph, shape: &ObjectShape, seen: &[String], key: &str, pending: bool) -> bool {
    key_use(graph, shape, seen, key, pending).is_some()
}

/// Whether any key may come next (not only named ones): then every key text that stays a
/// string is live, since infinitely many keys extend it and only finitely many were seen.
pub(super) fn key_open(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> bool {
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
pub(super) fn unnamed_keys_unbounded(graph: &Graph, shape: &ObjectShape, seen: &[String]) -> bool {
    key_open(graph, shape, seen, false)
        || (shape.keys.is_some()
            && addable_optional_keys(shape, &graph.satisfiable, SeenKeys::new(seen), &|_| true) == u64::MAX
            && room_for_unnamed_key(graph, shape, seen, false))
}

/// Whether one more key that is not named by the shape fits: within `maxProperties` beside the
/// required keys still missing, and, in declared order, with no required declared key missing
/// (an undeclared key closes the declared ones).
pub(super) fn room_for_unnamed_key(graph: &Graph, shape: &ObjectShape, seen: &[String], pending: bool) -> bool {
    let max = shape.max.unwrap_or(u64::MAX);
    let missing = missing_required(shape, SeenKeys::new(seen)).count() as u64;
    let only_required = (seen.len() as u64).saturating_add(missing) + 1 > max;
    !only_required && (!graph.ordered || object_live(graph, shape, SeenKeys::new(seen), 1, pending))
}

/// Whether a key whose text so far is `decoder` (and `allowed` on the shape's automaton of
/// allowed unnamed keys) can still become an allowed key.
pub(super) fn key_prefix_live(
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

/// Most key spellings [`unseen_key_completes`] tries before assuming that one completes.
pub(super) const KEY_SEARCH_BUDGET: usize = 100_000;

/// Whether the key text so far (`decoder`, at `state` of `text`) completes to a key of `text`
/// that is not in `seen`. Only called when finitely many keys complete it; the search follows
/// canonical spellings, so each candidate key is decoded once.
pub(super) fn unseen_key_completes(text: &ByteDfa, state: StateId, decoder: &StringDecoder, seen: &[String]) -> bool {
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

/// Whether the shape's keys must be ECMA-262 patterns (see [`PatternKeys::key_syntax`]).
///
/// [`PatternKeys::key_syntax`]: crate::structured::graph::PatternKeys::key_syntax
pub(super) fn keys_are_patterns(shape: &ObjectShape) -> bool {
    shape.keys.as_ref().is_some_and(|k| k.key_syntax.is_some())
}

/// The automaton of unnamed keys a track's shape allows, when patterns classify its keys.
pub(super) fn allowed_keys<'g>(graph: &'g Graph, track: &ObjectTrack) -> Option<&'g Arc<ByteDfa>> {
    track.shape(graph).keys.as_ref()?.allowed_text.as_ref()
}

impl ObjectTrack {
    pub(super) fn shape<'g>(&self, graph: &'g Graph) -> &'g ObjectShape {
        &graph.node(self.node).objects[self.shape as usize]
    }

    /// The schema the member of `key` is read on: the witness' (with the member's) when the
    /// member must serve as the witness, else the member's.
    pub(super) fn value_schema(&self, graph: &Graph, key: &str) -> NodeId {
        let shape = self.shape(graph);
        let witness = shape.witnesses.first().filter(|_| self.pending && self.serving);
        witness.and_then(|w| w.serving(key)).unwrap_or_else(|| shape.value_schema(key))
    }

    /// See [`OpenValue::open_ended`]: the current member, or a further one, has infinitely many
    /// values (or keys). Tracks with a witness still to come are left to the search: there
    /// which value a member takes matters.
    pub(super) fn open_ended(&self, graph: &Graph, phase: ObjectPhase, strings: OpenStrings) -> bool {
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
    pub(super) fn infinite_named_keys<'a>(
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
    pub(super) fn takes_any_key(&self, graph: &Graph) -> bool {
        let shape = self.shape(graph);
        // Asked at every trie node of a walk: the key's options hold the answer once it started.
        !keys_are_patterns(shape)
            && match &self.key_options {
                Some(options) => options.open,
                None => key_open(graph, shape, &self.seen, self.pending),
            }
    }

    /// The track's [`KeyOptions`], made on first use after a key closed.
    pub(super) fn key_options(&mut self, graph: &Graph) -> Arc<KeyOptions> {
        let (node, shape, seen, pending) = (self.node, self.shape, &self.seen, self.pending);
        Arc::clone(self.key_options.get_or_insert_with(|| {
            Arc::new(KeyOptions::new(graph, &graph.node(node).objects[shape as usize], seen, pending))
        }))
    }

    /// [`key_prefix_live`] for this track.
    pub(super) fn key_live(&mut self, graph: &Graph, decoder: &StringDecoder, allowed: StateId) -> bool {
        let options = self.key_options(graph);
        key_prefix_live(graph, self.shape(graph), &options, &self.seen, self.pending, decoder, allowed)
    }
}

impl ObjectValue {
    pub(super) fn feed_key(&mut self, graph: &Graph, b: u8) -> DecodeStep {
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
    pub(super) fn start_key(&mut self, graph: &Graph) {
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

    pub(super) fn feed(&mut self, graph: &Graph, b: u8) -> Step {
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
                    t.child = Some(child.unwrap_or_else(|| Arc::new(OpenValue::Start(node))));
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
                            if t.serving || t.probe.as_ref().is_some_and(|p| p.is_complete()) {
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
