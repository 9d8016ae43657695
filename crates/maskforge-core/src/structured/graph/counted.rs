//! Strings admitted by their length in code points where the bound is too large to unroll into
//! an automaton: a counter runs beside an automaton (every string, or the strings of a pattern
//! or format), and a table says how many code points each of its states still needs to close.
//!
//! Only upper bounds are counted beside a narrower automaton: a lower bound that short is
//! intersected into the automaton, so that "can this string still end within the bound" is
//! "is the fewest code points to a close within what is left", which the table answers.

use std::collections::hash_map::Entry;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use super::{Graph, GraphError};
use crate::automata::{json, AutomatonId, ByteDfa, StateId, DEAD};
use crate::schema::strings::{LengthRange, MAX_LENGTH_BOUND};
use crate::structured::string_decoder::CodePointCounter;

/// Strings whose length in code points is in `range`, among those of `within` when it is set
/// (every string otherwise). With `within`, `range.min` is 0.
#[derive(Debug, Clone)]
pub(crate) struct CountedStrings {
    pub(crate) range: LengthRange,
    pub(crate) within: Option<Arc<ByteDfa>>,
}

impl CountedStrings {
    pub(crate) fn of_length(range: LengthRange) -> CountedStrings {
        CountedStrings { range, within: None }
    }

    /// The union, when it is again counted strings: the same automaton, ranges that touch.
    pub(super) fn union(&self, other: &CountedStrings) -> Result<CountedStrings, GraphError> {
        let same_within = match (&self.within, &other.within) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let range = self.range.union(&other.range).filter(|_| same_within).ok_or(GraphError::CountedStrings)?;
        Ok(CountedStrings { range, within: self.within.clone() })
    }
}

/// For the automaton of counted strings: how many code points each state still needs.
#[derive(Debug)]
pub(crate) struct CodePointRoom {
    /// Per state, the fewest code points counted on a way to an accepting state (`u32::MAX`
    /// where there is none).
    pub(crate) to_close: Vec<u32>,
    /// The largest finite entry of `to_close`: with this many code points to spare besides a
    /// token's bytes, the bound refuses no token that stays inside the automaton.
    pub(crate) most: u32,
    /// Held so that its address, the table's key, stays unique.
    _automaton: Arc<ByteDfa>,
}

impl CodePointRoom {
    /// Whether a string at `state` with `count` code points can still close within `max`.
    pub(crate) fn fits(&self, state: StateId, count: u64, max: Option<u64>) -> bool {
        let need = self.to_close[state as usize];
        need != u32::MAX && max.is_none_or(|max| count.saturating_add(u64::from(need)) <= max)
    }
}

/// The table of `dfa`, a JSON-text automaton read after the opening quote; `None` when a state
/// is met at two different positions of the counter (inside an escape and outside it), which
/// a minimal automaton of JSON texts never has but which the table could not express.
fn code_point_room(dfa: &Arc<ByteDfa>) -> Option<CodePointRoom> {
    let n = dfa.state_count();
    let mut to_close = vec![u32::MAX; n];
    let first = dfa.next(dfa.start(), b'"');
    if first == DEAD {
        return Some(CodePointRoom { to_close, most: 0, _automaton: Arc::clone(dfa) });
    }
    // One byte per (automaton class, counter behaviour): the counter tells backslashes,
    // quotes, continuation bytes, `u` and the hex digits of surrogates apart.
    let counter_class = |b: u8| match b {
        b'\\' => 0,
        b'"' => 1,
        0x80..=0xBF => 2,
        b'u' => 3,
        b'd' | b'D' => 4,
        b'8' | b'9' | b'a' | b'b' | b'A' | b'B' => 5,
        _ => 6,
    };
    let mut representatives: Vec<u8> = Vec::new();
    let mut seen = HashSet::new();
    for b in 0..=255u8 {
        if seen.insert((dfa.byte_classes()[b as usize], counter_class(b))) {
            representatives.push(b);
        }
    }
    // The counter's position at each state, and the (predecessor, code points) pairs into it.
    let mut position: Vec<Option<CodePointCounter>> = vec![None; n];
    let mut into: Vec<Vec<(StateId, u32)>> = vec![Vec::new(); n];
    position[first as usize] = Some(CodePointCounter::default());
    let mut stack = vec![first];
    while let Some(state) = stack.pop() {
        let at = position[state as usize].expect("set when pushed");
        let mut out: Vec<(StateId, u32)> = Vec::new();
        for &b in &representatives {
            let next = dfa.next(state, b);
            if next == DEAD {
                continue;
            }
            let mut counter = at;
            counter.feed(b);
            let added = counter.count as u32;
            let after = counter.position();
            match position[next as usize] {
                None => {
                    position[next as usize] = Some(after);
                    stack.push(next);
                }
                Some(known) if known != after => return None,
                Some(_) => {}
            }
            out.push((next, added));
        }
        out.sort_unstable();
        out.dedup();
        for (next, added) in out {
            into[next as usize].push((state, added));
        }
    }
    // Fewest code points to an accepting state: breadth first over 0/1 weights, backwards.
    let mut queue: VecDeque<StateId> = VecDeque::new();
    for state in 0..n as StateId {
        if position[state as usize].is_some() && dfa.is_accepting(state) {
            to_close[state as usize] = 0;
            queue.push_back(state);
        }
    }
    while let Some(state) = queue.pop_front() {
        let here = to_close[state as usize];
        for &(before, added) in &into[state as usize] {
            let via = here + added;
            if via < to_close[before as usize] {
                to_close[before as usize] = via;
                if added == 0 {
                    queue.push_front(before);
                } else {
                    queue.push_back(before);
                }
            }
        }
    }
    let most = to_close.iter().copied().filter(|&d| d != u32::MAX).max().unwrap_or(0);
    Some(CodePointRoom { to_close, most, _automaton: Arc::clone(dfa) })
}

impl Graph {
    /// The counted strings of `range` among `within` (every string when `None`) in the graph's
    /// form, or `None` when there are none: a lower bound is intersected into the automaton, a
    /// narrower automaton gets its table. Refused when that lower bound is too large to unroll
    /// or the table cannot be built.
    pub(crate) fn counted(
        &mut self,
        range: LengthRange,
        within: Option<Arc<ByteDfa>>,
    ) -> Result<Option<CountedStrings>, GraphError> {
        let within = match within {
            Some(dfa) => self.canonical(&dfa),
            None => return Ok(Some(CountedStrings::of_length(range))),
        };
        if Arc::ptr_eq(&within, &self.any_string) {
            return Ok(Some(CountedStrings::of_length(range)));
        }
        let within = if range.min == 0 {
            within
        } else if range.min <= MAX_LENGTH_BOUND {
            let limit = self.max_dfa_states;
            let longer = json::string_with_length_dfa(range.min as u32, None, limit)
                .map_err(|_| GraphError::TooManyStates(limit))?;
            let both = within.intersect(&longer, limit).map_err(|e| GraphError::TooManyStates(e.limit))?;
            self.canonical(&Arc::new(both))
        } else {
            return Err(GraphError::CountedStrings);
        };
        let key = AutomatonId::of(&within);
        if let Entry::Vacant(vacant) = self.code_point_rooms.entry(key) {
            vacant.insert(Arc::new(code_point_room(&within).ok_or(GraphError::CountedStrings)?));
        }
        let room = &self.code_point_rooms[&key];
        let first = within.next(within.start(), b'"');
        if first == DEAD || !room.fits(first, 0, range.max) {
            return Ok(None);
        }
        Ok(Some(CountedStrings { range: LengthRange { min: 0, max: range.max }, within: Some(within) }))
    }
}

impl Graph {
    /// Remembers `texts` as the strings whose length is in `range` (a maximum of at most
    /// [`MAX_LENGTH_BOUND`]), unrolled: see [`Graph::count_bounded_strings`].
    pub(crate) fn remember_bounded(&mut self, texts: &Arc<ByteDfa>, range: LengthRange) {
        let canonical = self.canonical(texts);
        for dfa in [texts, &canonical] {
            self.bounded_strings.insert(AutomatonId::of(dfa), (Arc::clone(dfa), range));
        }
    }

    /// Once the graph is finished, nodes whose strings are plain strings within short length
    /// bounds count them beside every string instead ([`CountedStrings`]): the unrolled
    /// automaton the algebra used has a state per position, and each state's first mask would
    /// split the vocabulary apart (milliseconds each on a large vocabulary), where counted
    /// strings share the rows of every string. Keys (`propertyNames`) and items under
    /// `uniqueItems` keep their automaton, whose states those readings ask about; with
    /// `uniqueItems` over arrays or objects, every string does.
    pub(super) fn count_bounded_strings(&mut self, composite_unique_items: bool) {
        if self.bounded_strings.is_empty() || composite_unique_items {
            return;
        }
        let mut kept: HashSet<super::NodeId> = HashSet::new();
        for node in &self.nodes {
            kept.extend(node.objects.iter().filter_map(|shape| shape.names));
            for shape in node.arrays.iter().filter(|shape| shape.unique.is_some()) {
                kept.extend(shape.prefix.iter().copied().chain([shape.rest]));
            }
        }
        for (id, node) in self.nodes.iter_mut().enumerate() {
            if kept.contains(&(id as super::NodeId)) || node.counted_strings.is_some() || node.syntax_strings.is_some()
            {
                continue;
            }
            let Some(dfa) = &node.strings else { continue };
            let address = AutomatonId::of(dfa);
            let canonical = self.canonical_by_address.get(&address).map(|(_, canonical)| AutomatonId::of(canonical));
            let known =
                self.bounded_strings.get(&address).or_else(|| canonical.and_then(|c| self.bounded_strings.get(&c)));
            if let Some(&(_, range)) = known {
                node.strings = None;
                node.counted_strings = Some(CountedStrings::of_length(range));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automata::{ecma, json_escapes};

    fn pattern_texts(pattern: &str) -> Arc<ByteDfa> {
        let decoded = ecma::pattern_language(pattern, 10_000).expect("a pattern");
        Arc::new(json_escapes::json_strings_decoding_to(&decoded, 10_000).expect("small"))
    }

    #[test]
    fn short_plain_bounds_are_counted_where_no_reading_needs_their_states() {
        let program = crate::structured::lowered(
            r#"{"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 12},
                "either": {"anyOf": [{"maxLength": 2}, {"minLength": 5, "maxLength": 6}]},
                "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string", "maxLength": 3}},
                "map": {"type": "object", "propertyNames": {"maxLength": 4}, "additionalProperties": {"maxLength": 7}}
            }}"#,
        )
        .expect("compiles");
        let graph = &program.graph;
        let shape = &graph.node(program.root).objects[0];
        let property = |name: &str| graph.node(shape.properties[name]);
        let counted = |node: &super::super::Node| node.counted_strings.as_ref().map(|c| (c.range, c.within.is_some()));
        let range = |min, max| Some((LengthRange { min, max: Some(max) }, false));
        assert_eq!(counted(property("name")), range(0, 12));
        assert!(property("name").strings.is_none());
        // A union of two ranges is one automaton: not a range, so not counted.
        assert!(counted(property("either")).is_none() && property("either").strings.is_some());
        // Items under `uniqueItems` and keys keep their automaton; the values beside keys do not.
        let items = graph.node(property("tags").arrays[0].rest);
        assert!(counted(items).is_none() && items.strings.is_some());
        let map = &property("map").objects[0];
        let names = graph.node(map.names.expect("propertyNames"));
        assert!(counted(names).is_none() && names.strings.is_some());
        assert_eq!(counted(graph.node(map.other)), range(0, 7));
    }

    #[test]
    fn the_room_is_the_fewest_code_points_to_a_close() {
        let dfa = pattern_texts("^a{3}(bc)*d$");
        let room = code_point_room(&dfa).expect("a table");
        let at = |text: &[u8]| room.to_close[dfa.run(dfa.start(), text) as usize];
        assert_eq!(at(b"\""), 4);
        assert_eq!(at(b"\"aa"), 2);
        // Inside an escape the code point is already counted: `\u0061` is one `a`.
        assert_eq!(at(br#""a\u00"#), 2);
        assert_eq!(at(b"\"aaab"), 2);
        assert_eq!(at(b"\"aaad\""), 0);
        assert_eq!(room.most, 4);
        // Every state is met at one position of the counter.
        let texts = pattern_texts("^(\u{1F600}|x)+$");
        let room = code_point_room(&texts).expect("a table");
        let state = texts.run(texts.start(), br#""\ud83d"#);
        assert_eq!(room.to_close[state as usize], 0);
    }
}
