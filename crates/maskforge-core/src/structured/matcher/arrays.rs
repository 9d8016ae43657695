//! The recogniser's arrays: items read against every array shape still alive, with prefix
//! items, `contains` counts and `uniqueItems` (items compared by value, each prefix kept
//! completable by an unseen item).
//!
//! Part of the recogniser: it never calls the mask queries.

use std::sync::Arc;

use super::objects::{unseen_key_completes, ObjectPhase};
use super::{feed_shared, is_ws, start_shared, FedValues, OpenStrings, OpenValue, Step};
use crate::automata::AutomatonId;
use crate::structured::graph::{contains_reachable, reachable_items, ArrayShape, Canon, Graph, NodeId};
use crate::structured::string_decoder::{DecodeStep, StringDecoder};
use crate::structured::unique;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ArrayPhase {
    AfterOpen,
    InItem,
    AfterItem,
    AfterComma,
    Closed,
}

#[derive(Debug, Clone)]
pub(super) struct ArrayValue {
    pub(super) phase: ArrayPhase,
    pub(super) tracks: Vec<ArrayTrack>,
    /// Whether some track compares items by value (`uniqueItems`): then `item_text` is kept.
    pub(super) keeps_text: bool,
    /// The current item's text, kept under `uniqueItems` to compare it by value.
    pub(super) item_text: Vec<u8>,
}

#[derive(Debug, Clone)]
pub(super) struct ArrayTrack {
    pub(super) node: NodeId,
    pub(super) shape: u32,
    pub(super) count: u64,
    /// Items so far that satisfied `contains`.
    pub(super) found: u64,
    pub(super) child: Option<Arc<OpenValue>>,
    /// The current item read against the `contains` schema too, while it may still match.
    pub(super) probe: Option<Arc<OpenValue>>,
    /// How the current item is read.
    pub(super) mode: ItemMode,
    /// `uniqueItems`: the values of the items so far.
    pub(super) seen: Option<Arc<Vec<Canon>>>,
    /// `uniqueItems`: the current item's string content, while it is an open string.
    pub(super) decoder: Option<StringDecoder>,
}

/// How an item is read against `contains`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ItemMode {
    /// As any item; counted when it matches.
    Free,
    /// Only as one that matches (its child is the conjunction).
    Matching,
    /// Only as one that does not (`maxContains` reached).
    Avoiding,
}

/// Starts an item under `uniqueItems` with its first byte: a literal must not have been seen
/// (and must leave distinct values for the items still required), a number is read with the
/// seen numbers excluded, and a string's content is decoded alongside.
pub(super) fn start_unique_item(
    graph: &Graph,
    shape: &ArrayShape,
    count: u64,
    node: NodeId,
    b: u8,
    seen: &[Canon],
) -> Option<(OpenValue, Option<StringDecoder>)> {
    if let Some(literal) = unique::literal_from_first_byte(b) {
        let mut used = seen.to_vec();
        used.push(literal.clone());
        if seen.contains(&literal) || !unique::distinct_items_reachable(graph, shape, count + 1, &used) {
            return None;
        }
    }
    if matches!(b, b'-' | b'0'..=b'9') {
        if let Some(matchers) = unique::numbers_excluding(graph, node, seen, b) {
            return (!matchers.is_empty()).then_some((OpenValue::Number(matchers), None));
        }
    }
    let mut child = OpenValue::Start(node);
    if child.feed(graph, b) != Step::Consumed {
        return None;
    }
    if matches!(b, b'{' | b'[') && !container_item_live(graph, &child, &[b], seen) {
        return None;
    }
    let decoder = (b == b'"').then(StringDecoder::default);
    if let (Some(decoder), OpenValue::Leaf { dfa, state }) = (&decoder, &child) {
        // Right after the opening quote, some unseen string must still complete.
        let unbounded = graph.unbounded_strings.get(&(AutomatonId::of(dfa)));
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
pub(super) fn unique_item_live(graph: &Graph, track: &mut ArrayTrack, b: u8, item_text: &[u8]) -> bool {
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
                OpenValue::Leaf { dfa, state } => {
                    let unbounded = graph.unbounded_strings.get(&(AutomatonId::of(dfa)));
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
pub(super) fn container_item_live(graph: &Graph, child: &OpenValue, item_text: &[u8], seen: &[Canon]) -> bool {
    let closed = match child {
        OpenValue::Array(a) => a.phase == ArrayPhase::Closed,
        OpenValue::Object(o) => o.phase == ObjectPhase::Closed,
        _ => return true,
    };
    if closed {
        return Canon::parse(item_text).is_some_and(|value| !seen.contains(&value));
    }
    child.open_ended(graph, OpenStrings::Now) || unseen_item_completes(graph, child, item_text, seen)
}

/// Most bytes [`unseen_item_completes`] feeds before assuming that an unseen value completes
/// (only reached when the completions are very many, or their spellings very long).
pub(super) const ITEM_SEARCH_BUDGET: usize = 50_000;

/// Most zeros in a row the search writes outside strings: a number's fraction could otherwise
/// grow without end (`1.000...`) while its value stays the same.
pub(super) const MAX_ZERO_RUN: usize = 40;

/// Bytes that may continue a JSON text outside strings (whitespace never changes a value, and
/// numbers are spelled without exponents), closing bytes first so completions come early.
pub(super) const STRUCTURAL_BYTES: &[u8] = b"}],\":{[-.0123456789tfnrueals";

/// Whether an open array or object item, whose every state reached so far is live, completes
/// to a value not in `seen`. Searches depth first along canonical spellings (no insignificant
/// whitespace, canonical string escapes, no exponents), so each completion is read about once;
/// called only where [`OpenValue::open_ended`] cannot tell, that is near the item's end where few
/// completions remain.
pub(super) fn unseen_item_completes(graph: &Graph, child: &OpenValue, item_text: &[u8], seen: &[Canon]) -> bool {
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
            if next.is_complete() {
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
pub(super) struct NumberTail {
    pub(super) in_number: bool,
    pub(super) nonzero_mantissa: bool,
    pub(super) exponent_digits: Option<usize>,
}

/// Most exponent digits the search writes: larger exponents move a value past any bound a
/// finite set of numbers has.
pub(super) const MAX_EXPONENT_DIGITS: usize = 4;

impl NumberTail {
    pub(super) fn of(text: &[u8]) -> NumberTail {
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

    pub(super) fn admits(&self, b: u8) -> bool {
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
pub(super) fn open_string_at_end(text: &[u8]) -> Option<StringDecoder> {
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
pub(super) fn array_live(graph: &Graph, shape: &ArrayShape, count: u64, found: u64, used: &[Canon]) -> bool {
    let max = shape.max.unwrap_or(u64::MAX);
    unique::distinct_items_reachable(graph, shape, count, used)
        && count <= max
        && shape.min <= max
        && (count >= shape.min || reachable_from(graph, shape, count) >= shape.min)
        && contains_reachable(shape, &graph.satisfiable, count, found)
}

/// Items reachable in a row, given `count` items already there.
pub(super) fn reachable_from(graph: &Graph, shape: &ArrayShape, count: u64) -> u64 {
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
pub(super) fn next_item(graph: &Graph, shape: &ArrayShape, count: u64, found: u64, used: &[Canon]) -> Option<ItemMode> {
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

impl ArrayTrack {
    pub(super) fn shape<'g>(&self, graph: &'g Graph) -> &'g ArrayShape {
        &graph.node(self.node).arrays[self.shape as usize]
    }

    /// See [`OpenValue::open_ended`]: the current item, or the next one, has infinitely many values,
    /// or the array may grow without bound. Arrays under `contains` are left to the search.
    pub(super) fn open_ended(&self, graph: &Graph, phase: ArrayPhase, strings: OpenStrings) -> bool {
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

impl ArrayValue {
    pub(super) fn feed(&mut self, graph: &Graph, b: u8) -> Step {
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
                            None => (Arc::new(OpenValue::Start(node)), false),
                        },
                        None => match start_shared(graph, node, b, &mut started) {
                            Some(child) => (child, true),
                            None => (Arc::new(OpenValue::Start(node)), false),
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
                            if t.mode == ItemMode::Matching || t.probe.as_ref().is_some_and(|p| p.is_complete()) {
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
