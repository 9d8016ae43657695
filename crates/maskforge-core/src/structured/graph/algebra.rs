//! The graph's algebra: the content of a conjunction, a disjunction or a complement of ready
//! nodes, shape by shape (strings by automaton products, objects and arrays by products of their
//! alternatives).
//!
//! Lowering asks for conjunctions and complements, which the finishing loop in `mod.rs` computes
//! here; satisfiability is `fixpoints`' job, and nothing here reads instances.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, OnceLock};

use super::fixpoints::min_bound;
use super::unique_domains::MAX_UNIQUE_STRING_DOMAIN;
use super::{
    push_alternative, ArrayShape, Contains, CountedStrings, DistinctObjects, Graph, GraphError, ItemsEvaluated,
    KeyWitness, Node, NodeId, ObjectShape, PatternProperty, PropertiesEvaluated, SyntaxStrings, ANY, FEW_VALUES,
    MAX_PATTERNS_PER_OBJECT, MAX_SHAPES_PER_NODE, NEVER,
};
use crate::automata::json_escapes::{decoded_strings, json_literal_strings};
use crate::automata::{json, AutomatonId, ByteDfa, StateId};
use crate::schema::strings::{LengthRange, StringSyntax, MAX_LENGTH_BOUND};

/// Adds what `other` admits to `content`, string automata aside (the caller joins those).
pub(super) fn absorb(content: &mut Node, other: &Node) -> Result<(), GraphError> {
    content.admits_null |= other.admits_null;
    content.admits_true |= other.admits_true;
    content.admits_false |= other.admits_false;
    for constraints in &other.numbers {
        push_alternative(&mut content.numbers, Arc::clone(constraints));
    }
    content.counted_strings = match (content.counted_strings.take(), &other.counted_strings) {
        (Some(p), Some(q)) => Some(p.union(q)?),
        (p, q) => p.or_else(|| q.clone()),
    };
    content.syntax_strings = match (content.syntax_strings, other.syntax_strings) {
        (Some(a), Some(b)) => Some(a.union(b)?),
        (a, b) => a.or(b),
    };
    for shape in &other.arrays {
        push_alternative(&mut content.arrays, shape.clone());
    }
    for shape in &other.objects {
        push_alternative(&mut content.objects, shape.clone());
    }
    Ok(())
}

/// Two string automata and their intersection.
pub(super) type StringProduct = (Arc<ByteDfa>, Arc<ByteDfa>, Arc<ByteDfa>);

/// Removes from a disjunction of object shapes those another one admits entirely (and exact
/// repeats), keeping products of complements small. Only plain shapes are compared: no
/// patterns, `propertyNames` or witnesses, the same evaluations.
///
/// Each shape is compared with the shapes kept so far only (the largest ones, usually a few
/// dozen), not with every other: products of complements reach hundreds of shapes, most of
/// them inside another. A dropped shape is inside one that was kept when it was dropped, and
/// that one is inside a shape kept at the end, so the disjunction admits the same objects.
pub(super) fn drop_subsumed_objects(shapes: &mut Vec<ObjectShape>) {
    if shapes.len() < 2 {
        return;
    }
    let plain = |s: &ObjectShape| s.patterns.is_empty() && s.names.is_none() && s.witnesses.is_empty();
    // Whether every object `a` admits, `b` admits too.
    let within = |a: &ObjectShape, b: &ObjectShape| {
        plain(a)
            && plain(b)
            && a.evaluated == b.evaluated
            && a.order == b.order
            && (b.other == ANY || b.other == a.other)
            && a.min >= b.min
            && b.max.is_none_or(|bm| a.max.is_some_and(|am| am <= bm))
            && b.required.is_subset(&a.required)
            && b.properties.iter().all(|(k, &nb)| {
                let na = a.properties.get(k).copied().unwrap_or(a.other);
                nb == ANY || na == nb || (na == NEVER && !a.required.contains(k))
            })
            && a.properties.keys().all(|k| b.properties.contains_key(k) || b.other == ANY)
    };
    // Indices of the shapes kept so far, in their order; of two equal shapes the earlier stays.
    let mut kept: Vec<usize> = Vec::new();
    for i in 0..shapes.len() {
        if kept.iter().any(|&k| within(&shapes[i], &shapes[k])) {
            continue;
        }
        kept.retain(|&k| !within(&shapes[k], &shapes[i]));
        kept.push(i);
    }
    let mut keep = vec![false; shapes.len()];
    for k in kept {
        keep[k] = true;
    }
    let mut flags = keep.into_iter();
    shapes.retain(|_| flags.next().unwrap_or(true));
}

/// The witnesses of a conjunction, without those another one implies: a member outside a
/// larger set of names, with the same schema or any value asked of the weaker one.
pub(super) fn strongest_witnesses<'a>(witnesses: impl Iterator<Item = &'a KeyWitness>) -> Vec<KeyWitness> {
    let all: Vec<&KeyWitness> = witnesses.collect();
    let implies = |strong: &KeyWitness, weak: &KeyWitness| {
        strong.named.is_superset(&weak.named) && (weak.node == ANY || weak.node == strong.node)
    };
    let mut kept: Vec<KeyWitness> = Vec::new();
    for (i, w) in all.iter().enumerate() {
        let implied =
            all.iter().enumerate().any(|(j, other)| j != i && implies(other, w) && (!implies(w, other) || j < i));
        if !implied {
            kept.push((*w).clone());
        }
    }
    kept
}

impl Graph {
    /// The union of ready nodes. String automata are joined pairwise in a balanced tree, not
    /// one after another: an `enum` of a thousand strings then costs about n log n state work,
    /// not n^2.
    pub(super) fn union_all(&mut self, operands: &[NodeId]) -> Result<Node, GraphError> {
        let mut automata: Vec<Arc<ByteDfa>> = Vec::new();
        let mut seen: HashSet<AutomatonId> = HashSet::new();
        let mut content = Node::default();
        for &op in operands {
            if let Some(dfa) = self.nodes[op as usize].strings.clone() {
                let dfa = self.canonical(&dfa);
                if seen.insert(AutomatonId::of(&dfa)) {
                    automata.push(dfa);
                }
            }
            // In place: a union of many operands (a long `enum`) stays linear.
            absorb(&mut content, &self.nodes[op as usize])?;
        }
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        while automata.len() > 1 {
            let mut next = Vec::with_capacity(automata.len().div_ceil(2));
            for pair in automata.chunks(2) {
                next.push(match pair {
                    [a, b] => Arc::new(a.union(b, self.max_dfa_states).map_err(limit)?),
                    [a] => Arc::clone(a),
                    _ => unreachable!("chunks of two"),
                });
            }
            automata = next;
        }
        content.strings = automata.pop();
        if let Some(strings) = &content.strings {
            // Every string is admitted: a syntax's or counted strings add none (and would keep
            // masks reading them).
            if Arc::ptr_eq(&self.canonical(strings), &self.any_string) {
                content.strings = Some(Arc::clone(&self.any_string));
                content.syntax_strings = None;
                content.counted_strings = None;
            }
        }
        Ok(content)
    }

    /// The strings both automata admit, memoised by operand (schemas intersect the same formats
    /// and patterns with each other again and again through `allOf` and `$ref`).
    pub(super) fn intersect_strings(&mut self, p: &Arc<ByteDfa>, q: &Arc<ByteDfa>) -> Result<Arc<ByteDfa>, GraphError> {
        if Arc::ptr_eq(p, q) || Arc::ptr_eq(q, &self.any_string) {
            return Ok(Arc::clone(p));
        }
        if Arc::ptr_eq(p, &self.any_string) {
            return Ok(Arc::clone(q));
        }
        let (p, q) = (&self.canonical(p), &self.canonical(q));
        if Arc::ptr_eq(p, q) || Arc::ptr_eq(q, &self.any_string) {
            return Ok(Arc::clone(p));
        }
        if Arc::ptr_eq(p, &self.any_string) {
            return Ok(Arc::clone(q));
        }
        let (a, b) = (AutomatonId::of(p), AutomatonId::of(q));
        let key = (a.min(b), a.max(b));
        if let Some((_, _, hit)) = self.string_products.get(&key) {
            return Ok(Arc::clone(hit));
        }
        let both = match self.intersect_few(p, q).transpose().or_else(|| self.intersect_few(q, p).transpose()) {
            Some(few) => few?,
            None => Arc::new(p.intersect(q, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?),
        };
        // The operands are kept alive with the result, so their addresses stay unique.
        self.string_products.insert(key, (Arc::clone(p), Arc::clone(q), Arc::clone(&both)));
        Ok(both)
    }

    /// The one automaton of `dfa`'s language this graph keeps (see `Graph::canonical_strings`).
    /// Compares whole tables once per address; later calls are a lookup.
    pub(super) fn canonical(&mut self, dfa: &Arc<ByteDfa>) -> Arc<ByteDfa> {
        if let Some((_, canonical)) = self.canonical_by_address.get(&AutomatonId::of(dfa)) {
            return Arc::clone(canonical);
        }
        let canonical = match self.canonical_strings.get(dfa) {
            Some(kept) => Arc::clone(kept),
            None => {
                self.canonical_strings.insert(Arc::clone(dfa));
                Arc::clone(dfa)
            }
        };
        self.canonical_by_address.insert(AutomatonId::of(dfa), (Arc::clone(dfa), Arc::clone(&canonical)));
        canonical
    }

    /// `few ∩ other` without a product automaton when `few` holds a handful of values (a
    /// `const` or short `enum` meeting another schema's strings, as in tagged unions): each value
    /// is looked up in `other`, whose texts come in every spelling, by one spelling.
    pub(super) fn intersect_few(
        &mut self,
        few: &Arc<ByteDfa>,
        other: &ByteDfa,
    ) -> Result<Option<Arc<ByteDfa>>, GraphError> {
        let Some(values) = self.few_values(few) else { return Ok(None) };
        let kept: Vec<&String> = values
            .iter()
            .filter(|v| other.matches(serde_json::to_string(v).expect("a string serialises").as_bytes()))
            .collect();
        Ok(Some(if kept.len() == values.len() {
            Arc::clone(few)
        } else if kept.is_empty() {
            Arc::new(ByteDfa::empty())
        } else {
            let kept: Vec<&str> = kept.iter().map(|v| v.as_str()).collect();
            self.literal_strings(&kept)?
        }))
    }

    /// The values of a string automaton built from literals, when it was.
    pub(super) fn literal_values(&self, dfa: &Arc<ByteDfa>) -> Option<&Arc<Vec<String>>> {
        self.literal_values.get(&(AutomatonId::of(dfa))).map(|(_, values)| values)
    }

    /// The values of a string automaton built from a few literals.
    pub(super) fn few_values(&self, dfa: &Arc<ByteDfa>) -> Option<Arc<Vec<String>>> {
        self.literal_values(dfa).filter(|values| values.len() as u64 <= FEW_VALUES).cloned()
    }

    /// Remembers that `dfa` holds the JSON texts (every spelling) of `values`: intersections
    /// with a few of them look them up one by one, and finiteness and `uniqueItems` domains
    /// read them instead of decoding the automaton (every spelling of a large `enum` makes a
    /// large acyclic one).
    pub(crate) fn remember_literals(&mut self, dfa: &Arc<ByteDfa>, values: &[&str]) {
        if values.len() as u64 <= MAX_UNIQUE_STRING_DOMAIN {
            let mut unique: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            unique.sort();
            unique.dedup();
            self.literal_values.insert(AutomatonId::of(dfa), (Arc::clone(dfa), Arc::new(unique)));
        }
    }

    /// The automaton of the JSON texts of `values`, remembered as such.
    pub(super) fn literal_strings(&mut self, values: &[&str]) -> Result<Arc<ByteDfa>, GraphError> {
        let dfa = Arc::new(
            json_literal_strings(values, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?,
        );
        self.remember_literals(&dfa, values);
        Ok(dfa)
    }

    /// The strings of `dfa` whose length is in `range`, when `dfa` is finite with strings of at
    /// most [`MAX_LENGTH_BOUND`] code points (then an automaton says it exactly); otherwise the
    /// combination is not supported.
    pub(super) fn strings_within(&self, dfa: &ByteDfa, range: &LengthRange) -> Result<Option<ByteDfa>, GraphError> {
        // A text of n bytes holds at most n - 2 code points (the quotes).
        let longest = dfa.longest_match().ok_or(GraphError::CountedStrings)?;
        if longest.saturating_sub(2) > MAX_LENGTH_BOUND {
            return Err(GraphError::CountedStrings);
        }
        if range.min > MAX_LENGTH_BOUND {
            return Ok(None);
        }
        let max = range.max.map(|m| m.min(MAX_LENGTH_BOUND) as u32);
        let lengths = json::string_with_length_dfa(range.min as u32, max, self.max_dfa_states)
            .map_err(|_| GraphError::TooManyStates(self.max_dfa_states))?;
        let within = dfa.intersect(&lengths, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?;
        Ok((!within.is_empty_language()).then_some(within))
    }

    /// The strings of an automaton that a syntax reads, in every spelling (`format` beside
    /// `pattern`, `enum` or `const`): for patterns, all of them when no decoded string holds a
    /// syntax character (each is then a run of literal characters); else those among at most
    /// [`MAX_UNIQUE_STRING_DOMAIN`] strings.
    pub(crate) fn among(&self, dfa: &ByteDfa, syntax: StringSyntax) -> Result<ByteDfa, GraphError> {
        let decoded = decoded_strings(dfa);
        let syntax_free = || {
            (0..decoded.state_count() as StateId)
                .all(|s| b"^$\\.*+?()[]{}|".iter().all(|&b| decoded.next(s, b) == crate::automata::DEAD))
        };
        if syntax == StringSyntax::Pattern && syntax_free() {
            return Ok(dfa.clone());
        }
        let values = decoded.finite_language(MAX_UNIQUE_STRING_DOMAIN).ok_or(GraphError::SyntaxStrings)?;
        let read = SyntaxStrings { syntax, min_length: 0 };
        let literals: Vec<&str> =
            values.iter().filter_map(|v| std::str::from_utf8(v).ok()).filter(|v| read.admits(v)).collect();
        json_literal_strings(&literals, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))
    }

    /// Top-level intersection; children become (pending) conjunction nodes.
    pub(super) fn intersect_content(&mut self, x: &Node, y: &Node) -> Result<Node, GraphError> {
        let mut node = Node {
            admits_null: x.admits_null && y.admits_null,
            admits_true: x.admits_true && y.admits_true,
            admits_false: x.admits_false && y.admits_false,
            ..Node::default()
        };
        if x.numbers.len().saturating_mul(y.numbers.len()) > MAX_SHAPES_PER_NODE.saturating_mul(16) {
            return Err(GraphError::TooManyShapes);
        }
        for p in &x.numbers {
            for q in &y.numbers {
                let both = p.intersect(q);
                if both.is_satisfiable() {
                    push_alternative(&mut node.numbers, Arc::new(both));
                }
            }
        }
        if node.numbers.len() > MAX_SHAPES_PER_NODE {
            return Err(GraphError::TooManyShapes);
        }
        // (Dx | Cx) & (Dy | Cy) = Dx&Dy | Dx&Cy | Cx&Dy | Cx&Cy, automata D and counted strings C
        // (lengths in a range among an automaton's strings).
        let mut automata: Vec<Arc<ByteDfa>> = Vec::new();
        let mut counted: Vec<CountedStrings> = Vec::new();
        if let (Some(p), Some(q)) = (&x.strings, &y.strings) {
            automata.push(self.intersect_strings(p, q)?);
        }
        for (dfa, c) in [(&x.strings, &y.counted_strings), (&y.strings, &x.counted_strings)] {
            let (Some(dfa), Some(c)) = (dfa, c) else { continue };
            let dfa = match &c.within {
                Some(within) => self.intersect_strings(dfa, within)?,
                None => Arc::clone(dfa),
            };
            if dfa.is_empty_language() {
                continue;
            }
            // Finitely many short strings: an automaton says their lengths exactly.
            if dfa.longest_match().is_some_and(|longest| longest.saturating_sub(2) <= MAX_LENGTH_BOUND) {
                automata.extend(self.strings_within(&dfa, &c.range)?.map(Arc::new));
            } else {
                counted.extend(self.counted(c.range, Some(dfa))?);
            }
        }
        if let (Some(p), Some(q)) = (&x.counted_strings, &y.counted_strings) {
            if let Some(range) = p.range.intersect(&q.range) {
                let within = match (&p.within, &q.within) {
                    (Some(a), Some(b)) => Some(self.intersect_strings(a, b)?),
                    (a, b) => a.clone().or_else(|| b.clone()),
                };
                counted.extend(self.counted(range, within)?);
            }
        }
        // Strings of a syntax meet the same syntax, every string, or a short list of strings
        // (filtered); beside anything else their intersection is not expressible.
        if let (Some(a), Some(b)) = (x.syntax_strings, y.syntax_strings) {
            if a.syntax != b.syntax {
                return Err(GraphError::SyntaxStrings);
            }
            node.syntax_strings = Some(SyntaxStrings { min_length: a.min_length.max(b.min_length), ..a });
        }
        for (syntactic, other) in [(x, y), (y, x)] {
            let (Some(read), None) = (syntactic.syntax_strings, other.syntax_strings) else { continue };
            if other.counted_strings.is_some() {
                return Err(GraphError::SyntaxStrings);
            }
            match &other.strings {
                Some(dfa) if Arc::ptr_eq(dfa, &self.any_string) => {
                    node.syntax_strings = Some(match node.syntax_strings {
                        Some(kept) => kept.union(read)?,
                        None => read,
                    });
                }
                Some(dfa) if read.min_length == 0 => automata.push(Arc::new(self.among(dfa, read.syntax)?)),
                Some(_) => return Err(GraphError::SyntaxStrings),
                None => {}
            }
        }
        let mut strings: Option<Arc<ByteDfa>> = None;
        for dfa in automata.into_iter().filter(|d| !d.is_empty_language()) {
            strings = Some(match strings {
                None => dfa,
                Some(s) => {
                    Arc::new(s.union(&dfa, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?)
                }
            });
        }
        node.strings = strings;
        for c in counted {
            node.counted_strings = Some(match node.counted_strings.take() {
                None => c,
                Some(kept) => kept.union(&c)?,
            });
        }
        // Contradictory pairs are dropped below, but a product far past the limit is not tried.
        let product = |a: usize, b: usize| a.saturating_mul(b) > MAX_SHAPES_PER_NODE.saturating_mul(16);
        if product(x.arrays.len(), y.arrays.len()) || product(x.objects.len(), y.objects.len()) {
            return Err(GraphError::TooManyShapes);
        }
        for p in &x.arrays {
            for q in &y.arrays {
                let len = p.prefix.len().max(q.prefix.len());
                let prefix: Vec<NodeId> =
                    (0..len as u64).map(|i| self.all_decided(vec![p.item(i), q.item(i)])).collect::<Result<_, _>>()?;
                let rest = self.all_decided(vec![p.rest, q.rest])?;
                let contains = match (&p.contains, &q.contains) {
                    (Some(_), Some(_)) => return Err(GraphError::TwoContains),
                    (Some(c), None) | (None, Some(c)) => {
                        Some(Contains::new(self, c.node, (c.min, c.max), c.from, &prefix, rest))
                    }
                    (None, None) => None,
                };
                let (min, max) = (p.min.max(q.min), min_bound(p.max, q.max));
                let matching = match (p.evaluated.matching, q.evaluated.matching) {
                    (Some(a), Some(b)) => Some(self.any(vec![a, b])),
                    (a, b) => a.or(b),
                };
                let evaluated = ItemsEvaluated {
                    all: p.evaluated.all || q.evaluated.all,
                    prefix: p.evaluated.prefix.max(q.evaluated.prefix),
                    matching,
                };
                let unique = p.unique.clone().or_else(|| q.unique.clone());
                let shape = ArrayShape { prefix, rest, min, max, contains, evaluated, unique };
                if !shape.is_contradictory() {
                    push_alternative(&mut node.arrays, shape);
                }
            }
        }
        if node.arrays.len() > MAX_SHAPES_PER_NODE {
            return Err(GraphError::TooManyShapes);
        }
        let mut objects = DistinctObjects::default();
        for p in &x.objects {
            for q in &y.objects {
                let mut properties = BTreeMap::new();
                for key in p.properties.keys().chain(q.properties.keys()) {
                    if !properties.contains_key(key) {
                        let operands = vec![self.key_schema(p, key), self.key_schema(q, key)];
                        let both = self.all_decided(operands)?;
                        properties.insert(key.clone(), both);
                    }
                }
                let offset = p.others.len();
                let patterns: Vec<PatternProperty> = p
                    .patterns
                    .iter()
                    .cloned()
                    .chain(q.patterns.iter().map(|pp| PatternProperty { owner: pp.owner + offset, ..pp.clone() }))
                    .collect();
                if patterns.len() > MAX_PATTERNS_PER_OBJECT {
                    return Err(GraphError::TooManyPatterns);
                }
                let names = match (p.names, q.names) {
                    (Some(a), Some(b)) => Some(self.all(vec![a, b])),
                    (a, b) => a.or(b),
                };
                let mut order = p.order.clone();
                order.extend(q.order.iter().filter(|k| !p.order.contains(k)).cloned());
                // Patterns name their schema object by index; without them repeats are dropped,
                // or conjunctions of a recursive shape with itself would double the list.
                let mut others: Vec<NodeId> = p.others.iter().chain(&q.others).copied().collect();
                if patterns.is_empty() {
                    others.sort_unstable();
                    others.dedup();
                } else if others.len() > MAX_SHAPES_PER_NODE {
                    return Err(GraphError::TooManyShapes);
                }
                let shape = ObjectShape {
                    properties,
                    order,
                    other: self.all(vec![p.other, q.other]),
                    others,
                    patterns,
                    names,
                    keys: None,
                    required: p.required.union(&q.required).cloned().collect(),
                    min: p.min.max(q.min),
                    max: min_bound(p.max, q.max),
                    evaluated: PropertiesEvaluated {
                        all: p.evaluated.all || q.evaluated.all,
                        names: p.evaluated.names.union(&q.evaluated.names).cloned().collect(),
                    },
                    witnesses: strongest_witnesses(p.witnesses.iter().chain(&q.witnesses)),
                    sorted_names: OnceLock::new(),
                };
                for shape in self.place_witnesses(shape) {
                    if !shape.is_contradictory() {
                        objects.push(shape);
                    }
                }
            }
        }
        node.objects = objects.into_vec();
        drop_subsumed_objects(&mut node.objects);
        if node.objects.len() > MAX_SHAPES_PER_NODE {
            return Err(GraphError::TooManyShapes);
        }
        Ok(node)
    }

    /// The content admitting every value `x` does not. Per type: the scalars flip, string
    /// automata are complemented within JSON strings, and each number constraint, array shape
    /// and object shape becomes the disjunction of the ways to violate it; the complement is the
    /// conjunction of those. Children are complemented lazily, so recursion through `not` is
    /// exact by induction on depth.
    pub(super) fn complement_content(&mut self, x: &Node, pointer: &Arc<str>) -> Result<Node, GraphError> {
        let unsupported = |what| GraphError::Unsupported { pointer: Arc::clone(pointer), what };
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        let any = self.nodes[ANY as usize].clone();
        let mut base = any.clone();
        base.admits_null = !x.admits_null;
        base.admits_true = !x.admits_true;
        base.admits_false = !x.admits_false;
        if x.syntax_strings.is_some() {
            return Err(unsupported(
                "strings outside a syntax's language (format \"regex\", \"hostname\" or \"idn-hostname\")",
            ));
        }
        (base.strings, base.counted_strings) = match (&x.strings, &x.counted_strings) {
            (None, None) => (Some(Arc::clone(&self.any_string)), None),
            (Some(d), None) => {
                let rest = self.any_string.difference(d, self.max_dfa_states).map_err(limit)?;
                ((!rest.is_empty_language()).then(|| Arc::new(rest)), None)
            }
            (None, Some(CountedStrings { range, within: None })) => match (range.min, range.max) {
                (0, Some(max)) => (None, Some(CountedStrings::of_length(LengthRange { min: max + 1, max: None }))),
                (min, None) if min > 0 => {
                    (None, Some(CountedStrings::of_length(LengthRange { min: 0, max: Some(min - 1) })))
                }
                (min, Some(max)) if min <= MAX_LENGTH_BOUND + 1 => {
                    // Shorter ones in an automaton, longer ones counted.
                    let shorter = json::string_with_length_dfa(0, Some(min as u32 - 1), self.max_dfa_states)
                        .map_err(|_| GraphError::TooManyStates(self.max_dfa_states))?;
                    (Some(Arc::new(shorter)), Some(CountedStrings::of_length(LengthRange { min: max + 1, max: None })))
                }
                _ => return Err(unsupported("strings outside a bounded length range")),
            },
            (_, Some(_)) => return Err(unsupported("strings outside a pattern with a long length bound")),
        };
        let mut parts = vec![base];
        for c in &x.numbers {
            let pieces = c.complement().ok_or_else(|| unsupported("numbers outside integer, multipleOf or enum"))?;
            let mut part = any.clone();
            part.numbers = pieces.into_iter().map(Arc::new).collect();
            parts.push(part);
        }
        for shape in &x.arrays {
            let mut part = any.clone();
            part.arrays = self.array_violations(shape, pointer)?;
            parts.push(part);
        }
        for shape in &x.objects {
            let mut part = any.clone();
            part.objects = self.object_violations(shape, pointer)?;
            parts.push(part);
        }
        let mut content = parts.pop().expect("the base part");
        for part in parts {
            content = self.intersect_content(&content, &part)?;
        }
        Ok(content)
    }

    /// The arrays that violate `shape`, as a disjunction of shapes.
    pub(super) fn array_violations(
        &mut self,
        shape: &ArrayShape,
        pointer: &Arc<str>,
    ) -> Result<Vec<ArrayShape>, GraphError> {
        if shape.contains.is_some() || shape.unique.is_some() {
            return Err(GraphError::Unsupported {
                pointer: Arc::clone(pointer),
                what: "arrays with fewer matching items than contains requires, or with repeated items",
            });
        }
        let mut violations = Vec::new();
        if shape.min > 0 {
            violations.push(ArrayShape::free(0, Some(shape.min - 1)));
        }
        if let Some(max) = shape.max {
            violations.push(ArrayShape::free(max + 1, None));
        }
        for (i, &item) in shape.prefix.iter().enumerate() {
            if item != ANY {
                let mut prefix = vec![ANY; i];
                prefix.push(self.not(item, pointer));
                violations.push(ArrayShape { prefix, min: i as u64 + 1, ..ArrayShape::free(0, None) });
            }
        }
        if shape.rest != ANY {
            // Some item after the prefix fails the rest's schema: a `contains` counted from there.
            let from = shape.prefix.len() as u64;
            let prefix = vec![ANY; shape.prefix.len()];
            let failing = self.not(shape.rest, pointer);
            let contains = Contains::new(self, failing, (1, None), from, &prefix, ANY);
            violations.push(ArrayShape {
                prefix,
                min: from + 1,
                contains: Some(contains),
                ..ArrayShape::free(0, None)
            });
        }
        Ok(violations)
    }

    /// The objects that violate `shape`, as a disjunction of shapes.
    pub(super) fn object_violations(
        &mut self,
        shape: &ObjectShape,
        pointer: &Arc<str>,
    ) -> Result<Vec<ObjectShape>, GraphError> {
        if shape.classifies_keys() || !shape.witnesses.is_empty() {
            // "Some other key fails" is uniform only without patterns and `propertyNames`.
            return Err(GraphError::Unsupported {
                pointer: Arc::clone(pointer),
                what: "objects with a key that patternProperties or propertyNames refuses",
            });
        }
        let free = |properties: BTreeMap<String, NodeId>, required: BTreeSet<String>, min: u64, max: Option<u64>| {
            ObjectShape::plain(properties, ANY, required, min, max)
        };
        let mut violations = Vec::new();
        if shape.min > 0 {
            violations.push(free(BTreeMap::new(), BTreeSet::new(), 0, Some(shape.min - 1)));
        }
        if let Some(max) = shape.max {
            violations.push(free(BTreeMap::new(), BTreeSet::new(), max + 1, None));
        }
        for key in &shape.required {
            violations.push(free(BTreeMap::from([(key.clone(), NEVER)]), BTreeSet::new(), 0, None));
        }
        for (key, &node) in &shape.properties {
            if node != ANY {
                let failing = self.not(node, pointer);
                violations.push(free(BTreeMap::from([(key.clone(), failing)]), BTreeSet::from([key.clone()]), 0, None));
            }
        }
        if shape.other != ANY {
            // Some key outside the named ones fails `additionalProperties`.
            let failing = self.not(shape.other, pointer);
            let mut witnessed = free(BTreeMap::new(), BTreeSet::new(), 0, None);
            witnessed.witnesses.push(KeyWitness {
                named: Arc::new(shape.properties.keys().cloned().collect()),
                node: failing,
                pointer: Arc::clone(pointer),
                candidates: BTreeMap::new(),
                fresh: failing,
            });
            violations.push(witnessed);
        }
        Ok(violations)
    }

    /// On a closed object without patterns, a witness is one of finitely many named keys: the
    /// shape becomes one shape per choice, that key required with the witness' schema too.
    /// Other shapes keep their witnesses for the matcher.
    pub(super) fn place_witnesses(&mut self, shape: ObjectShape) -> Vec<ObjectShape> {
        if shape.witnesses.is_empty() || shape.classifies_keys() {
            return vec![shape];
        }
        if shape.other != NEVER {
            // Open: the matcher tracks the witness; give it the schemas of serving members.
            let mut shape = shape;
            let other = shape.other;
            for i in 0..shape.witnesses.len() {
                let node = shape.witnesses[i].node;
                let mut candidates = BTreeMap::new();
                for (key, &value) in &shape.properties {
                    if !shape.witnesses[i].named.contains(key) {
                        candidates.insert(key.clone(), self.all(vec![value, node]));
                    }
                }
                shape.witnesses[i].fresh = self.all(vec![other, node]);
                shape.witnesses[i].candidates = candidates;
            }
            return vec![shape];
        }
        let mut shapes = vec![ObjectShape { witnesses: Vec::new(), ..shape.clone() }];
        for witness in &shape.witnesses {
            let mut placed = Vec::new();
            for s in &shapes {
                for (key, &node) in &s.properties {
                    if node == NEVER || witness.named.contains(key) {
                        continue;
                    }
                    let mut choice = s.clone();
                    choice.required.insert(key.clone());
                    let both = self.all(vec![node, witness.node]);
                    choice.properties.insert(key.clone(), both);
                    if !choice.is_contradictory() {
                        placed.push(choice);
                    }
                }
            }
            shapes = placed;
        }
        shapes
    }

    /// The intersections of the object shapes picked by `subset`.
    pub(super) fn intersect_objects(
        &mut self,
        shapes: &[ObjectShape],
        subset: &[usize],
    ) -> Result<Vec<ObjectShape>, GraphError> {
        let mut node = Node { objects: vec![shapes[subset[0]].clone()], ..Node::default() };
        for &i in &subset[1..] {
            let other = Node { objects: vec![shapes[i].clone()], ..Node::default() };
            node = self.intersect_content(&node, &other)?;
        }
        Ok(node.objects)
    }

    /// The intersections of the array shapes picked by `subset`.
    pub(super) fn intersect_arrays(
        &mut self,
        shapes: &[ArrayShape],
        subset: &[usize],
    ) -> Result<Vec<ArrayShape>, GraphError> {
        let mut node = Node { arrays: vec![shapes[subset[0]].clone()], ..Node::default() };
        for &i in &subset[1..] {
            let other = Node { arrays: vec![shapes[i].clone()], ..Node::default() };
            node = self.intersect_content(&node, &other)?;
        }
        Ok(node.arrays)
    }
}

#[cfg(test)]
mod tests {
    use crate::error::DiagnosticCode;
    use crate::structured::{accepts, lowered, refusal};

    #[test]
    fn a_conjunction_of_string_sets_keeps_their_common_strings() {
        let program = lowered(r#"{"allOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]}"#).unwrap();
        let node = program.graph.node(program.root);
        let strings = node.strings.as_ref().expect("one string is left");
        assert!(strings.matches(br#""b""#));
        assert!(!strings.matches(br#""a""#) && !strings.matches(br#""c""#));
        assert!(!node.admits_null && node.numbers.is_empty() && node.arrays.is_empty() && node.objects.is_empty());
    }

    #[test]
    fn the_complement_of_a_type_admits_every_other_type() {
        let program = lowered(r#"{"not": {"type": "string"}}"#).unwrap();
        let node = program.graph.node(program.root);
        assert!(node.admits_null && node.admits_true && node.admits_false);
        assert!(!node.numbers.is_empty() && !node.arrays.is_empty() && !node.objects.is_empty());
        assert!(node.strings.as_ref().is_none_or(|s| !s.matches(br#""x""#)));
        assert!(accepts(&program, "[1]") && !accepts(&program, r#""x""#));
    }

    #[test]
    fn the_complement_of_an_array_bound_is_the_other_lengths() {
        let program = lowered(r#"{"type": "array", "not": {"maxItems": 1}}"#).unwrap();
        assert!(accepts(&program, "[1, 2]") && accepts(&program, "[1, 2, 3]"));
        assert!(!accepts(&program, "[1]") && !accepts(&program, "[]") && !accepts(&program, "{}"));
    }

    #[test]
    fn a_disjunction_keeps_each_shape() {
        let program =
            lowered(r#"{"anyOf": [{"type": "array", "minItems": 2}, {"type": "array", "maxItems": 0}]}"#).unwrap();
        assert_eq!(program.graph.node(program.root).arrays.len(), 2);
        assert!(accepts(&program, "[]") && accepts(&program, "[1, 2]") && !accepts(&program, "[1]"));
    }

    #[test]
    fn a_product_of_objects_sees_contradicting_constants() {
        let schema = r#"{"type": "object", "required": ["a"], "allOf": [
            {"properties": {"a": {"const": 1}}}, {"properties": {"a": {"const": 2}}}]}"#;
        assert_eq!(refusal(schema), DiagnosticCode::UnsatisfiableSchema);
    }
}
