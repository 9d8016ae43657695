//! `uniqueItems` at compile time: which item schemas the matcher can compare exactly, and the
//! finite value domains it counts against.
//!
//! Compile time only: reading items under `uniqueItems` is `structured::unique`, which asks
//! these domains.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use super::{literals, ArrayShape, Graph, NodeId};
use crate::automata::json_escapes::decoded_strings;
use crate::automata::ByteDfa;
use crate::numbers::Decimal;

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

/// Most strings a finite domain of items under `uniqueItems` is enumerated with.
pub(super) const MAX_UNIQUE_STRING_DOMAIN: u64 = 4096;

/// The values of each item schema with finitely many, under `uniqueItems`.
pub(crate) type FiniteDomains = HashMap<NodeId, Arc<ItemDomain>>;

impl Graph {
    /// Whether the matcher decides `uniqueItems` exactly for these items, and how it counts
    /// them. Literals (`null`, `true`, `false`) are known from their first byte; strings and
    /// numbers are read with the seen values excluded; arrays and objects are compared when they
    /// close, and while open the matcher checks that some unseen value still completes them
    /// (`Value::open_ended`, then a search of the few completions left).
    ///
    /// Returns the finite domains of items with finitely many values (literals and a finite set
    /// of strings), for the counts of distinct items, and the items that are arrays or objects:
    /// those must have infinitely many values, which the caller checks once satisfiability is
    /// known. Positions with a finite set of strings must all share one schema (then which
    /// string an item takes never matters to the others).
    pub(super) fn unique_items_supported(
        &self,
        shape: &ArrayShape,
    ) -> Result<(FiniteDomains, Vec<NodeId>), &'static str> {
        if shape.contains.is_some() {
            return Err("repeated items together with contains");
        }
        let mut domains = FiniteDomains::new();
        let mut composite = Vec::new();
        let mut string_domain: Option<NodeId> = None;
        for &item in shape.prefix.iter().chain(std::iter::once(&shape.rest)) {
            let node = &self.nodes[item as usize];
            if node.counted_strings.is_some() {
                return Err("repeated items that are long counted strings");
            }
            if !node.arrays.is_empty() || !node.objects.is_empty() {
                composite.push(item);
                continue;
            }
            if self.infinitely_many_values_of_scalars(node) {
                continue;
            }
            if !node.numbers.is_empty() {
                return Err("repeated items from a finite set of numbers");
            }
            let mut values: Vec<Canon> = literals(node).iter().map(Canon::literal).collect();
            if let Some(strings) = &node.strings {
                // A literal set is known value by value; no need to decode its automaton.
                if let Some(known) = self.literal_values(strings) {
                    if string_domain.is_some_and(|other| other != item) {
                        return Err("repeated items from different finite sets of strings");
                    }
                    string_domain = Some(item);
                    values.extend(known.iter().map(|v| Canon::String(v.clone())));
                    domains.insert(item, Arc::new(ItemDomain::Values(values)));
                    continue;
                }
                let decoded = decoded_strings(strings);
                // More distinct strings than any count of items can reach: never exhausted.
                if decoded.language_size() == Some(u64::MAX) {
                    continue;
                }
                if string_domain.is_some_and(|other| other != item) {
                    return Err("repeated items from different finite sets of strings");
                }
                string_domain = Some(item);
                match decoded.finite_language(MAX_UNIQUE_STRING_DOMAIN) {
                    Some(texts) => {
                        for text in texts {
                            let text = String::from_utf8(text).map_err(|_| "strings that are not UTF-8")?;
                            values.push(Canon::String(text));
                        }
                    }
                    // Too many to list: counted, when no literal shares the position.
                    None if values.is_empty() => {
                        let size = decoded.language_size().expect("a finite language");
                        let domain = ItemDomain::Strings { size, decoded: Arc::new(decoded) };
                        domains.insert(item, Arc::new(domain));
                        continue;
                    }
                    None => return Err("repeated items from more than 4096 strings beside literals"),
                }
            }
            domains.insert(item, Arc::new(ItemDomain::Values(values)));
        }
        Ok((domains, composite))
    }
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

#[cfg(test)]
mod tests {
    use super::ItemDomain;
    use crate::error::DiagnosticCode;
    use crate::structured::{accepts, lowered, refusal};

    #[test]
    fn distinct_booleans_run_out_after_two() {
        let schema = r#"{"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 3}"#;
        assert_eq!(refusal(schema), DiagnosticCode::UnsatisfiableSchema);
        let program = lowered(&schema.replace("\"minItems\": 3", "\"minItems\": 2")).unwrap();
        let item = program.graph.node(program.root).arrays[0].rest;
        match program.graph.finite_domains.get(&item).map(|d| d.as_ref()) {
            Some(ItemDomain::Values(values)) => assert_eq!(values.len(), 2),
            other => panic!("booleans are two values: {other:?}"),
        }
        assert!(accepts(&program, "[true, false]") && !accepts(&program, "[true, true]"));
    }

    #[test]
    fn numbers_compare_by_value() {
        let program = lowered(r#"{"type": "array", "items": {"type": "number"}, "uniqueItems": true}"#).unwrap();
        assert!(accepts(&program, "[1, 2.0]") && !accepts(&program, "[1, 1.0]") && !accepts(&program, "[2, 2e0]"));
    }

    #[test]
    fn repeated_containers_with_finitely_many_values_are_refused() {
        let schema = r#"{"type": "array", "uniqueItems": true, "items": {"type": "array", "maxItems": 0}}"#;
        assert_eq!(refusal(schema), DiagnosticCode::UnsupportedKeyword);
    }
}
