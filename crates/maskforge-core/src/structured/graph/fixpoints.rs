//! Satisfiability and infinity: the least fixpoint of which nodes admit a (finite) value, and a
//! sound under-approximation of which admit infinitely many; the liveness questions over shapes
//! that the matcher asks with them.
//!
//! It reads computed nodes and never changes their content.

use std::collections::HashMap;
use std::sync::Arc;

use super::keys::addable_optional_keys;
use super::unique_domains::FiniteDomains;
use super::{ArrayShape, Graph, Node, ObjectShape, SeenKeys};
use crate::automata::AutomatonId;

/// Whether an object with keys `seen`, `extra` further keys not named by the shape about to be
/// added, can still gain the member its witness asks for (true without one).
pub(crate) fn witness_reachable(shape: &ObjectShape, sat: &[bool], seen: SeenKeys, extra: u64) -> bool {
    let Some(witness) = shape.witnesses.first() else { return true };
    let missing: Vec<&String> = shape.required.iter().filter(|k| !seen.contains(k)).collect();
    // A required key still missing comes anyway; any other needs room for one more key.
    if missing.iter().any(|k| witness.serving(k).is_some_and(|n| sat[n as usize])) {
        return true;
    }
    let count = (seen.len() as u64).saturating_add(extra).saturating_add(missing.len() as u64);
    if count.saturating_add(1) > shape.max.unwrap_or(u64::MAX) {
        return false;
    }
    sat[witness.fresh as usize]
        || witness.candidates.iter().any(|(k, &n)| sat[n as usize] && !seen.contains(k) && !shape.required.contains(k))
}

/// [`Graph::infinitely_many_values_of_scalars`] but for the string automaton.
pub(super) fn infinitely_many_values_beside_automata(node: &Node) -> bool {
    node.syntax_strings.is_some()
        // Among an automaton's strings, the counted ones may be few: not claimed.
        || node.counted_strings.as_ref().is_some_and(|c| {
            c.within.is_none() && c.range.max.is_none_or(|max| max >= 4 && max >= c.range.min)
        })
        || node.numbers.iter().any(|c| c.has_infinitely_many_values())
}

/// Whether a satisfiable array shape without `contains` has infinitely many values, given which
/// nodes do: items from a satisfiable position on that has infinitely many, or unboundedly many
/// items (distinct ones under `uniqueItems`).
pub(super) fn array_infinite(shape: &ArrayShape, sat: &[bool], infinite: &[bool]) -> bool {
    let reachable = reachable_items(shape, sat).min(shape.max.unwrap_or(u64::MAX));
    let unbounded_length =
        shape.max.is_none() && reachable == u64::MAX && (shape.unique.is_none() || infinite[shape.rest as usize]);
    let infinite_position =
        shape.prefix.iter().take(reachable.min(shape.prefix.len() as u64) as usize).any(|&i| infinite[i as usize])
            || (reachable > shape.prefix.len() as u64 && infinite[shape.rest as usize]);
    unbounded_length || infinite_position
}

/// Whether a satisfiable object shape without a witness has infinitely many values, given which
/// nodes do: unboundedly many unnamed keys may be added, or a member that some value of the
/// shape may hold has infinitely many values.
pub(super) fn object_infinite(shape: &ObjectShape, sat: &[bool], infinite: &[bool]) -> bool {
    let required = shape.required.len() as u64;
    let room = shape.max.is_none_or(|max| required < max);
    let unnamed = addable_optional_keys(shape, sat, SeenKeys::new(&[]), &|_| true) == u64::MAX;
    let member = |key: &String, optional: bool| {
        let node = shape.value_schema(key);
        sat[node as usize] && infinite[node as usize] && (!optional || room)
    };
    (room && unnamed)
        || shape.required.iter().any(|k| member(k, false))
        || shape.properties.keys().any(|k| !shape.required.contains(k) && member(k, true))
}

pub(super) fn min_bound(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(m), Some(n)) => Some(m.min(n)),
        (m, n) => m.or(n),
    }
}

pub(super) fn node_has_witness(domains: Option<&FiniteDomains>, node: &Node, sat: &[bool]) -> bool {
    node.admits_null
        || node.admits_true
        || node.admits_false
        || !node.numbers.is_empty()
        || node.strings.is_some()
        || node.counted_strings.is_some()
        || node.syntax_strings.is_some()
        || node.arrays.iter().any(|a| array_has_witness(domains, a, sat))
        || node.objects.iter().any(|o| object_has_witness(o, sat))
}

/// How many items in a row from the first can be satisfied (`u64::MAX`: unboundedly many).
pub(crate) fn reachable_items(shape: &ArrayShape, sat: &[bool]) -> u64 {
    for (i, &item) in shape.prefix.iter().enumerate() {
        if !sat[item as usize] {
            return i as u64;
        }
    }
    if sat[shape.rest as usize] {
        u64::MAX
    } else {
        shape.prefix.len() as u64
    }
}

pub(super) fn array_has_witness(domains: Option<&FiniteDomains>, shape: &ArrayShape, sat: &[bool]) -> bool {
    shape.max.is_none_or(|max| shape.min <= max)
        && reachable_items(shape, sat) >= shape.min
        && contains_reachable(shape, sat, 0, 0)
        && domains.is_none_or(|d| super::distinct_positions(d, shape, 0, shape.min, &[]))
}

/// Whether items from position `count` on (`found` of the items so far matching `contains`)
/// can complete the array: a length within `minItems`/`maxItems` whose items are satisfiable,
/// with a number of matching items within `minContains`/`maxContains`.
///
/// Each position can take a matching item, an avoiding one, or either; the numbers of matches
/// reachable at a length form an interval, so the search walks the prefix and then solves the
/// uniform rest in closed form.
pub(crate) fn contains_reachable(shape: &ArrayShape, sat: &[bool], count: u64, found: u64) -> bool {
    let Some(c) = &shape.contains else { return true };
    let (cmin, cmax) = (c.min, c.max.map_or(u64::MAX, |(m, _)| m));
    let (lmin, lmax) = (shape.min.max(count), shape.max.unwrap_or(u64::MAX));
    if found > cmax || cmin > cmax || lmin > lmax {
        return false;
    }
    let fits = |lo: u64, hi: u64| lo <= cmax && hi >= cmin;
    let (mut lo, mut hi) = (found, found);
    let prefix = shape.prefix.len() as u64;
    let mut length = count;
    while length < prefix {
        if length >= lmin && fits(lo, hi) {
            return true;
        }
        if length >= lmax {
            return false;
        }
        let (m, a) = (sat[c.matching(length) as usize], sat[c.avoiding(length) as usize]);
        (lo, hi) = match (m, a) {
            (true, true) => (lo, hi + 1),
            (true, false) => (lo + 1, hi + 1),
            (false, true) => (lo, hi),
            (false, false) => return false,
        };
        length += 1;
    }
    // From here each further item is a rest item: k more of them.
    let (m, a) = (sat[c.rest_matching as usize], sat[c.rest_avoiding as usize]);
    let k_from = lmin.saturating_sub(length);
    let k_to = lmax - length;
    let (k_lo, k_hi) = match (m, a) {
        (false, false) => (k_from, 0),
        (true, true) => {
            if lo > cmax {
                return false;
            }
            (k_from.max(cmin.saturating_sub(hi)), k_to)
        }
        (false, true) => {
            if !fits(lo, hi) {
                return false;
            }
            (k_from, k_to)
        }
        (true, false) => {
            if lo > cmax {
                return false;
            }
            (k_from.max(cmin.saturating_sub(hi)), k_to.min(cmax - lo))
        }
    };
    if k_lo == 0 && fits(lo, hi) && length >= lmin {
        return true;
    }
    k_lo <= k_hi && (m || a)
}

pub(super) fn object_has_witness(shape: &ObjectShape, sat: &[bool]) -> bool {
    let required_ok = shape.required.iter().all(|k| sat[shape.value_schema(k) as usize]);
    let needed = shape.required.len() as u64;
    let max = shape.max.unwrap_or(u64::MAX);
    let extra_needed = shape.min.saturating_sub(needed);
    required_ok
        && needed <= max
        && shape.min <= max
        && addable_optional_keys(shape, sat, SeenKeys::new(&[]), &|_| true) >= extra_needed
        && witness_reachable(shape, sat, SeenKeys::new(&[]), 0)
}

impl Graph {
    /// Whether the strings or numbers of a node have infinitely many values (by JSON value, not
    /// spelling). Strings admitted by length count when their length may reach 4: more than
    /// 2^64 strings of the 1,112,064 code points, more than any count of items reaches. A
    /// literal set is finite without a walk of its automaton (every spelling of an `enum` makes
    /// a large acyclic one).
    pub(super) fn infinitely_many_values_of_scalars(&self, node: &Node) -> bool {
        node.strings
            .as_ref()
            .is_some_and(|d| !self.literal_values.contains_key(&(AutomatonId::of(d))) && d.is_infinite())
            || infinitely_many_values_beside_automata(node)
    }

    /// Which nodes have infinitely many values: a least fixpoint over satisfiable nodes, so a
    /// node counts only through a part some value of it really uses. Sound, not complete: an
    /// array with `contains` or an object with a pending witness counts only through its other
    /// parts. The matcher treats a node it does not count as possibly finite, and searches.
    pub(super) fn compute_infinite(&mut self) {
        let n = self.nodes.len();
        // Strings and numbers first, once each: counting a language walks its automaton, and
        // nodes share automata (by address here), so each is counted once.
        let mut infinite_strings: HashMap<AutomatonId, bool> = HashMap::new();
        let mut infinite: Vec<bool> = (0..n)
            .map(|id| {
                let node = &self.nodes[id];
                let strings = node.strings.as_ref().is_some_and(|d| {
                    let address = AutomatonId::of(d);
                    // Literal sets are finite and every string is not; no walk needed.
                    *infinite_strings.entry(address).or_insert_with(|| {
                        !self.literal_values.contains_key(&address)
                            && (Arc::ptr_eq(d, &self.any_string) || d.is_infinite())
                    })
                });
                self.satisfiable[id] && (strings || infinitely_many_values_beside_automata(node))
            })
            .collect();
        loop {
            let mut changed = false;
            for id in 0..n {
                if !infinite[id] && self.satisfiable[id] && self.node_infinite(&self.nodes[id], &infinite) {
                    infinite[id] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        self.infinite = infinite;
    }

    pub(super) fn node_infinite(&self, node: &Node, infinite: &[bool]) -> bool {
        let sat = &self.satisfiable;
        node.arrays.iter().any(|a| {
            a.contains.is_none()
                && array_has_witness(Some(&self.finite_domains), a, sat)
                && array_infinite(a, sat, infinite)
        }) || node
            .objects
            .iter()
            .any(|o| o.witnesses.is_empty() && object_has_witness(o, sat) && object_infinite(o, sat, infinite))
    }

    /// Which nodes admit a value: the least fixpoint, so a recursive schema counts only when it
    /// has a finite witness.
    pub(super) fn compute_satisfiability(&mut self) {
        let n = self.nodes.len();
        let mut sat = vec![false; n];
        loop {
            let mut changed = false;
            for id in 0..n {
                if !sat[id] && node_has_witness(Some(&self.finite_domains), &self.nodes[id], &sat) {
                    sat[id] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        self.satisfiable = sat;
    }
}

#[cfg(test)]
mod tests {
    use super::{contains_reachable, reachable_items};
    use crate::error::DiagnosticCode;
    use crate::structured::{accepts, lowered, refusal};

    #[test]
    fn a_schema_that_requires_itself_without_end_is_unsatisfiable() {
        let endless = r##"{"$defs": {"t": {"type": "object", "properties": {"next": {"$ref": "#/$defs/t"}},
            "required": ["next"]}}, "$ref": "#/$defs/t"}"##;
        assert_eq!(refusal(endless), DiagnosticCode::UnsatisfiableSchema);
        let optional = endless.replace(r#""required": ["next"]"#, r#""maxProperties": 1"#);
        let program = lowered(&optional).unwrap();
        assert!(program.graph.is_satisfiable(program.root));
        assert!(program.graph.infinite[program.root as usize], "a chain of any length");
        assert!(accepts(&program, r#"{"next": {"next": {}}}"#));
    }

    #[test]
    fn finitely_many_values_are_told_from_infinitely_many() {
        for (schema, infinite) in [
            (r#"{"enum": [1, 2, 3]}"#, false),
            (r#"{"type": "boolean"}"#, false),
            (r#"{"type": "array", "items": {"type": "boolean"}, "maxItems": 3}"#, false),
            (r#"{"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": false}"#, false),
            (r#"{"type": "string"}"#, true),
            (r#"{"type": "array", "items": {"type": "boolean"}}"#, true),
            (r#"{"type": "integer", "minimum": 0}"#, true),
        ] {
            let program = lowered(schema).unwrap();
            assert_eq!(program.graph.infinite[program.root as usize], infinite, "{schema}");
        }
    }

    #[test]
    fn items_stop_at_the_first_unsatisfiable_position() {
        let program = lowered(r#"{"type": "array", "prefixItems": [{"const": 1}, false]}"#).unwrap();
        let graph = &program.graph;
        let shape = &graph.node(program.root).arrays[0];
        assert_eq!(reachable_items(shape, &graph.satisfiable), 1);
        assert!(accepts(&program, "[1]") && !accepts(&program, "[1, 1]"));
        let open = lowered(r#"{"type": "array", "items": {"const": 1}}"#).unwrap();
        assert_eq!(reachable_items(&open.graph.node(open.root).arrays[0], &open.graph.satisfiable), u64::MAX);
    }

    #[test]
    fn contains_counts_are_reachable_only_with_room_left() {
        let program =
            lowered(r#"{"type": "array", "contains": {"const": 1}, "minContains": 2, "maxItems": 3}"#).unwrap();
        let graph = &program.graph;
        let shape = &graph.node(program.root).arrays[0];
        assert!(contains_reachable(shape, &graph.satisfiable, 0, 0));
        assert!(contains_reachable(shape, &graph.satisfiable, 2, 1), "one slot for the second match");
        assert!(!contains_reachable(shape, &graph.satisfiable, 2, 0), "two matches, one slot");
        assert!(!contains_reachable(shape, &graph.satisfiable, 3, 1), "no slot left");
    }
}
