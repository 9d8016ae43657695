//! `unevaluatedProperties` and `unevaluatedItems`: what a schema object's shapes leave
//! unevaluated, and the schema that then applies to it.
//!
//! The matcher never sees evaluations: it reads the shapes this module leaves.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{
    ArrayShape, Contains, Graph, GraphError, NodeId, ObjectShape, PatternProperty, ANY, MAX_PATTERNS_PER_OBJECT,
};
use crate::automata::AutomatonId;

/// Most shapes of differing evaluations that `unevaluated*` combines (`2^n - 1` combinations).
pub(super) const MAX_EVALUATION_SHAPES: usize = 6;

impl Graph {
    /// The object shapes of a schema object whose in-place applicators gave `shapes`, with
    /// `unevaluatedProperties: schema` applied.
    ///
    /// An instance matching several shapes (several `anyOf` branches, say) has the keys of all
    /// of them evaluated. So each combination of shapes is intersected and judged by the union
    /// of their evaluations; an instance is accepted when some combination accepts it, and the
    /// combination of every shape it matches is the exact verdict (a smaller one evaluates
    /// fewer keys and is only stricter).
    pub(super) fn evaluate_remaining_properties(
        &mut self,
        shapes: &[ObjectShape],
        schema: NodeId,
        pointer: &Arc<str>,
    ) -> Result<Vec<ObjectShape>, GraphError> {
        // A shape that evaluates every key evaluates the same whatever its names and patterns
        // (closed objects, and listed ones under `closed_objects`): one key for all of them.
        let key = |s: &ObjectShape| {
            if s.evaluated.all {
                return (true, BTreeSet::new(), BTreeSet::new());
            }
            let patterns: BTreeSet<AutomatonId> = s.patterns.iter().map(|p| AutomatonId::of(&p.keys)).collect();
            (false, s.evaluated.names.clone(), patterns)
        };
        let union = |a: &(bool, BTreeSet<String>, BTreeSet<AutomatonId>),
                     b: &(bool, BTreeSet<String>, BTreeSet<AutomatonId>)| {
            if a.0 || b.0 {
                return (true, BTreeSet::new(), BTreeSet::new());
            }
            (false, a.1.union(&b.1).cloned().collect(), a.2.union(&b.2).cloned().collect())
        };
        let keys: Vec<_> = shapes.iter().map(key).collect();
        let subsets = combinations(&keys, union, pointer)?;
        let mut result = Vec::new();
        for subset in subsets {
            for shape in self.intersect_objects(shapes, &subset)? {
                result.push(self.evaluate_properties_of(shape, schema)?);
            }
        }
        Ok(result)
    }

    /// `shape` with `schema` required of every key it does not evaluate.
    pub(super) fn evaluate_properties_of(
        &mut self,
        mut shape: ObjectShape,
        schema: NodeId,
    ) -> Result<ObjectShape, GraphError> {
        if shape.evaluated.all || schema == ANY {
            shape.evaluated.all = true;
            return Ok(shape);
        }
        let patterns = shape.patterns.clone();
        let names = shape.evaluated.names.clone();
        for (name, node) in shape.properties.iter_mut() {
            if !names.contains(name) && !patterns.iter().any(|p| p.keys.matches(name.as_bytes())) {
                *node = self.all(vec![*node, schema]);
            }
        }
        // The schema acts as an `additionalProperties` whose owner has every pattern of the shape
        // (with no schema of their own): keys matching any pattern are evaluated.
        let owner = shape.others.len();
        shape.patterns.extend(patterns.iter().map(|p| PatternProperty { keys: Arc::clone(&p.keys), node: ANY, owner }));
        if shape.patterns.len() > MAX_PATTERNS_PER_OBJECT {
            return Err(GraphError::TooManyPatterns);
        }
        shape.others.push(schema);
        shape.other = self.all(vec![shape.other, schema]);
        shape.keys = None;
        shape.evaluated.all = true;
        Ok(shape)
    }

    /// The array shapes of a schema object with `unevaluatedItems: schema` applied (see
    /// [`Graph::evaluate_remaining_properties`] for why combinations of shapes).
    pub(super) fn evaluate_remaining_items(
        &mut self,
        shapes: &[ArrayShape],
        schema: NodeId,
        pointer: &Arc<str>,
    ) -> Result<Vec<ArrayShape>, GraphError> {
        let key = |s: &ArrayShape| {
            (s.evaluated.all, s.evaluated.prefix, s.evaluated.matching.into_iter().collect::<BTreeSet<NodeId>>())
        };
        let union = |a: &(bool, u64, BTreeSet<NodeId>), b: &(bool, u64, BTreeSet<NodeId>)| {
            (a.0 || b.0, a.1.max(b.1), a.2.union(&b.2).copied().collect())
        };
        let keys: Vec<_> = shapes.iter().map(key).collect();
        let subsets = combinations(&keys, union, pointer)?;
        let mut result = Vec::new();
        for subset in subsets {
            for shape in self.intersect_arrays(shapes, &subset)? {
                result.push(self.evaluate_items_of(shape, schema));
            }
        }
        Ok(result)
    }

    /// `shape` with `schema` required of every item it does not evaluate.
    pub(super) fn evaluate_items_of(&mut self, mut shape: ArrayShape, schema: NodeId) -> ArrayShape {
        if shape.evaluated.all || schema == ANY {
            shape.evaluated.all = true;
            return shape;
        }
        // An unevaluated item is one past the evaluated prefix that `contains` does not match.
        let required = match shape.evaluated.matching {
            Some(matching) => self.any(vec![matching, schema]),
            None => schema,
        };
        let from = shape.evaluated.prefix;
        while (shape.prefix.len() as u64) < from {
            shape.prefix.push(shape.rest);
        }
        for i in from as usize..shape.prefix.len() {
            shape.prefix[i] = self.all(vec![shape.prefix[i], required]);
        }
        shape.rest = self.all(vec![shape.rest, required]);
        if let Some(c) = shape.contains.take() {
            let prefix = shape.prefix.clone();
            shape.contains = Some(Contains::new(self, c.node, (c.min, c.max), c.from, &prefix, shape.rest));
        }
        shape.evaluated.all = true;
        shape
    }
}

/// The subsets of shapes (by index) worth a combination under `unevaluated*`: each shape alone
/// when all evaluate alike; otherwise every subset whose union of evaluations (`keys`) no
/// smaller subset already reaches by dropping one member.
pub(super) fn combinations<K: PartialEq>(
    keys: &[K],
    union: impl Fn(&K, &K) -> K,
    pointer: &Arc<str>,
) -> Result<Vec<Vec<usize>>, GraphError> {
    if keys.windows(2).all(|w| w[0] == w[1]) {
        return Ok((0..keys.len()).map(|i| vec![i]).collect());
    }
    if keys.len() > MAX_EVALUATION_SHAPES {
        return Err(GraphError::Unsupported {
            pointer: Arc::clone(pointer),
            what: "more than 6 alternatives of differing evaluations (anyOf, oneOf, if, dependencies)",
        });
    }
    let union_of = |members: &[usize]| {
        let mut it = members.iter();
        let first = it.next().map(|&i| union(&keys[i], &keys[i]))?;
        Some(it.fold(first, |acc, &i| union(&acc, &keys[i])))
    };
    let mut subsets = Vec::new();
    for mask in 1u32..(1 << keys.len()) {
        let members: Vec<usize> = (0..keys.len()).filter(|&i| mask & (1 << i) != 0).collect();
        let whole = union_of(&members);
        let redundant = members.len() > 1
            && (0..members.len()).any(|drop| {
                let rest: Vec<usize> =
                    members.iter().enumerate().filter(|&(j, _)| j != drop).map(|(_, &i)| i).collect();
                union_of(&rest) == whole
            });
        if !redundant {
            subsets.push(members);
        }
    }
    Ok(subsets)
}

#[cfg(test)]
mod tests {
    use crate::structured::graph::NEVER;
    use crate::structured::{accepts, lowered};

    #[test]
    fn unevaluated_properties_close_what_properties_leave_open() {
        let program = lowered(r#"{"properties": {"a": {}}, "unevaluatedProperties": false}"#).unwrap();
        let shape = &program.graph.node(program.root).objects[0];
        assert_eq!(shape.other, NEVER);
        assert!(shape.properties.contains_key("a"));
        assert!(accepts(&program, r#"{"a": 1}"#) && !accepts(&program, r#"{"b": 1}"#));
    }

    #[test]
    fn unevaluated_items_apply_after_the_prefix_of_an_operand() {
        let program =
            lowered(r#"{"allOf": [{"prefixItems": [{"type": "string"}]}], "unevaluatedItems": {"type": "integer"}}"#)
                .unwrap();
        let graph = &program.graph;
        let rest = graph.node(graph.node(program.root).arrays[0].rest);
        assert!(!rest.numbers.is_empty() && rest.strings.is_none() && !rest.admits_null);
        assert!(accepts(&program, r#"["x", 1, 2]"#) && !accepts(&program, r#"["x", "y"]"#));
    }

    #[test]
    fn each_branch_of_an_any_of_evaluates_what_it_matched() {
        let program = lowered(
            r#"{"anyOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "string"}}}],
                "unevaluatedProperties": false}"#,
        )
        .unwrap();
        for (text, accepted) in [
            (r#"{"a": "x"}"#, true),
            (r#"{"b": "y"}"#, true),
            (r#"{"a": "x", "b": "y"}"#, true),
            (r#"{"c": 1}"#, false),
            // Only the second branch matches, and it does not evaluate `a`.
            (r#"{"a": 1}"#, false),
        ] {
            assert_eq!(accepts(&program, text), accepted, "{text}");
        }
    }
}
