//! `uniqueItems`: items compared by JSON value, and the liveness that comes with it.
//!
//! The graph admits `uniqueItems` where the matcher decides it exactly (see
//! `Graph::unique_items_supported`): items that are literals or one finite set of strings, whose
//! values are counted here, and items with infinitely many values. An unfinished item can always
//! become a value not seen yet, except where its text already fixes the value or leaves only a
//! few: a literal (known from its first byte), a string whose automaton has finitely many
//! completions (searched), a number (read with the seen values cut out of its constraints), and
//! an array or object near its end (the matcher's `open_ended` test, then a search).

use std::sync::Arc;

use serde_json::Value as Json;

use super::graph::{ArrayShape, FiniteDomains, Graph, NodeId};
use crate::automata::ByteDfa;
use crate::numbers::{Decimal, NumberConstraints, NumberMatcher};

/// The values an item under `uniqueItems` may take, when finitely many.
#[derive(Debug)]
pub(crate) enum ItemDomain {
    /// Literals and strings, listed.
    Values(Vec<Canon>),
    /// Strings only, too many to list: how many, and their decoded automaton.
    Strings { size: u64, decoded: Arc<ByteDfa> },
}

/// A JSON value compared as JSON Schema compares: numbers by value, objects by members.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Canon {
    Null,
    Bool(bool),
    Number(Decimal),
    String(String),
    Array(Vec<Canon>),
    /// Members sorted by key.
    Object(Vec<(String, Canon)>),
}

impl Canon {
    /// The value of a complete JSON text.
    pub(crate) fn parse(text: &[u8]) -> Option<Canon> {
        serde_json::from_slice::<Json>(text).ok().and_then(|v| Canon::from_json(&v))
    }

    fn from_json(value: &Json) -> Option<Canon> {
        Some(match value {
            Json::Null => Canon::Null,
            Json::Bool(b) => Canon::Bool(*b),
            Json::Number(n) => Canon::Number(Decimal::parse(&n.to_string())?),
            Json::String(s) => Canon::String(s.clone()),
            Json::Array(items) => Canon::Array(items.iter().map(Canon::from_json).collect::<Option<_>>()?),
            Json::Object(map) => {
                let mut members: Vec<(String, Canon)> =
                    map.iter().map(|(k, v)| Some((k.clone(), Canon::from_json(v)?))).collect::<Option<_>>()?;
                members.sort_by(|a, b| a.0.cmp(&b.0));
                Canon::Object(members)
            }
        })
    }

    pub(crate) fn literal(value: &Json) -> Canon {
        match value {
            Json::Bool(b) => Canon::Bool(*b),
            _ => Canon::Null,
        }
    }
}

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

/// Whether positions `count..through` can take distinct values outside `used`: positions whose
/// schema has infinitely many values are always free; the others need a system of distinct
/// representatives (a bipartite matching of positions to unused values).
pub(crate) fn distinct_positions(
    domains: &FiniteDomains,
    shape: &ArrayShape,
    count: u64,
    through: u64,
    used: &[Canon],
) -> bool {
    if shape.unique.is_none() || count >= through {
        return true;
    }
    let mut positions: Vec<Vec<&Canon>> = Vec::new();
    // Positions drawing on a domain of strings too many to list (at most one such domain, and
    // no other position draws strings: its count alone decides).
    let mut counted: Option<(&ItemDomain, u64)> = None;
    let mut position = count;
    while position < through {
        let node = shape.item(position);
        match domains.get(&node).map(Arc::as_ref) {
            Some(domain @ ItemDomain::Strings { .. }) => {
                let rest = position >= shape.prefix.len() as u64;
                let needed = if rest { through - position } else { 1 };
                let total = counted.map_or(0, |(_, n)| n).saturating_add(needed);
                counted = Some((domain, total));
                if rest {
                    break;
                }
            }
            Some(ItemDomain::Values(domain)) => {
                let free: Vec<&Canon> = domain.iter().filter(|v| !used.contains(v)).collect();
                if position >= shape.prefix.len() as u64 {
                    // The rest: every position left draws from the same values.
                    let needed = through - position;
                    if needed > free.len() as u64 {
                        return false;
                    }
                    positions.extend((0..needed).map(|_| free.clone()));
                    break;
                }
                positions.push(free);
            }
            None if position >= shape.prefix.len() as u64 => break,
            None => {}
        }
        position += 1;
    }
    if let Some((ItemDomain::Strings { size, decoded }, needed)) = counted {
        let taken =
            used.iter().filter(|v| matches!(v, Canon::String(s) if decoded.matches(s.as_bytes()))).count() as u64;
        if needed > size.saturating_sub(taken) {
            return false;
        }
    }
    // Kuhn's augmenting paths: each position takes a value no other position holds.
    let mut holder: Vec<(&Canon, usize)> = Vec::new();
    for p in 0..positions.len() {
        let mut visited: Vec<&Canon> = Vec::new();
        if !augment(&positions, p, &mut visited, &mut holder) {
            return false;
        }
    }
    true
}

fn augment<'v>(
    positions: &[Vec<&'v Canon>],
    p: usize,
    visited: &mut Vec<&'v Canon>,
    holder: &mut Vec<(&'v Canon, usize)>,
) -> bool {
    for &value in &positions[p] {
        if visited.contains(&value) {
            continue;
        }
        visited.push(value);
        match holder.iter().position(|(v, _)| *v == value) {
            None => {
                holder.push((value, p));
                return true;
            }
            Some(i) => {
                let other = holder[i].1;
                if augment(positions, other, visited, holder) {
                    holder[i] = (value, p);
                    return true;
                }
            }
        }
    }
    false
}
