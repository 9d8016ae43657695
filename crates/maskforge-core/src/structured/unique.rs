//! `uniqueItems` while reading: items compared by JSON value, and the liveness that comes with
//! it. What the graph decides at compile time (which items it supports, their value domains) is
//! `graph::unique_domains`; this module only asks it.
//!
//! The graph admits `uniqueItems` where the matcher decides it exactly (see
//! `Graph::unique_items_supported`): items that are literals or one finite set of strings, whose
//! values are counted here, and items with infinitely many values. An unfinished item can always
//! become a value not seen yet, except where its text already fixes the value or leaves only a
//! few: a literal (known from its first byte), a string whose automaton has finitely many
//! completions (searched), a number (read with the seen values cut out of its constraints), and
//! an array or object near its end (the matcher's `open_ended` test, then a search).

use std::sync::Arc;

use super::graph::{distinct_positions, ArrayShape, Canon, Graph, NodeId};
use crate::numbers::{Decimal, NumberConstraints, NumberMatcher};

/// The literal a first byte fixes (`n`, `t`, `f`).
pub(crate) fn literal_from_first_byte(b: u8) -> Option<Canon> {
    match b {
        b'n' => Some(Canon::Null),
        b't' => Some(Canon::Bool(true)),
        b'f' => Some(Canon::Bool(false)),
        _ => None,
    }
}

/// Number matchers for `node` with the `seen` numbers cut out: each constraint set of the node
/// intersected with each open interval between consecutive seen values. `None` when no number
/// was seen (the node's own matchers apply).
pub(crate) fn numbers_excluding(graph: &Graph, node: NodeId, seen: &[Canon], b: u8) -> Option<Vec<NumberMatcher>> {
    let mut values: Vec<&Decimal> = seen
        .iter()
        .filter_map(|c| match c {
            Canon::Number(d) => Some(d),
            _ => None,
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    values.sort();
    values.dedup();
    let between = |low: Option<&Decimal>, high: Option<&Decimal>| NumberConstraints {
        minimum: low.map(|v| (v.clone(), true)),
        maximum: high.map(|v| (v.clone(), true)),
        ..NumberConstraints::default()
    };
    let mut pieces = vec![between(None, values.first().copied())];
    pieces.extend(values.windows(2).map(|w| between(Some(w[0]), Some(w[1]))));
    pieces.push(between(values.last().copied(), None));
    let mut matchers = Vec::new();
    for constraints in &graph.node(node).numbers {
        for piece in &pieces {
            let mut matcher = NumberMatcher::new(Arc::new(constraints.intersect(piece)));
            if matcher.feed(b) {
                matchers.push(matcher);
            }
        }
    }
    Some(matchers)
}

/// The strings among the seen values.
pub(crate) fn seen_strings(seen: &[Canon]) -> Vec<String> {
    seen.iter()
        .filter_map(|c| match c {
            Canon::String(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Whether items from position `count` up to `minItems` can all take distinct values, none of
/// them in `used`.
pub(crate) fn distinct_items_reachable(graph: &Graph, shape: &ArrayShape, count: u64, used: &[Canon]) -> bool {
    distinct_positions(&graph.finite_domains, shape, count, shape.min, used)
}

/// Whether item `count` can start: a value not in `used` is left for it, and the items still
/// required after it can then be distinct too.
pub(crate) fn item_available(graph: &Graph, shape: &ArrayShape, count: u64, used: &[Canon]) -> bool {
    distinct_positions(&graph.finite_domains, shape, count, shape.min.max(count + 1), used)
}
