//! `uniqueItems`: items compared by JSON value, and the liveness that comes with it.
//!
//! The graph admits `uniqueItems` only where the matcher decides it exactly (see
//! `Graph::unique_items_supported`): items that are literals, or schemas with infinitely many
//! values whose arrays and objects are unconstrained. An unfinished item of such a schema can
//! always become a value not seen yet, except where its text already fixes the value: a literal
//! (known from its first byte), a closed string, array or object (checked when it closes), a
//! string whose automaton has finitely many completions (searched), and numbers, which are read
//! with the seen values cut out of their constraints.

use std::sync::Arc;

use serde_json::Value as Json;

use super::graph::{literal_only, literals, ArrayShape, Graph, NodeId};
use crate::numbers::{Decimal, NumberConstraints, NumberMatcher};

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

    fn literal(value: &Json) -> Canon {
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
/// them in `used`. Only literal-only positions can run out (at most three literals exist); the
/// others have infinitely many values.
pub(crate) fn distinct_items_reachable(graph: &Graph, shape: &ArrayShape, count: u64, used: &[Canon]) -> bool {
    if shape.unique.is_none() || count >= shape.min {
        return true;
    }
    let mut domains: Vec<Vec<Canon>> = Vec::new();
    let mut position = count;
    while position < shape.min {
        let node = graph.node(shape.item(position));
        if literal_only(node) {
            if domains.len() >= 3 {
                return false;
            }
            let domain: Vec<Canon> = literals(node).iter().map(Canon::literal).filter(|l| !used.contains(l)).collect();
            domains.push(domain);
        } else if position >= shape.prefix.len() as u64 {
            // The rest has infinitely many values: every later position is free.
            break;
        }
        position += 1;
    }
    assign_distinct(&domains, &mut Vec::new())
}

/// A choice of one value per domain, all different (a system of distinct representatives).
fn assign_distinct(domains: &[Vec<Canon>], chosen: &mut Vec<Canon>) -> bool {
    let Some((first, rest)) = domains.split_first() else { return true };
    for value in first {
        if !chosen.contains(value) {
            chosen.push(value.clone());
            let found = assign_distinct(rest, chosen);
            chosen.pop();
            if found {
                return true;
            }
        }
    }
    false
}
