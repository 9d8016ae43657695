//! The structured arm's schema graph: one node per value schema, split by JSON type, with
//! disjunctions of object and array shapes. Recursion is edges back to earlier nodes.
//!
//! This file owns the graph's model (nodes, shapes, the pending conjunctions, disjunctions and
//! complements that lowering asks for) and the loop that computes them ([`Graph::finish`]).
//! Its rooms:
//! - `algebra`: the content of a conjunction, disjunction or complement of ready nodes;
//! - `counted`: strings counted by length beside an automaton, and each state's room to close;
//! - `keys`: key classification under `patternProperties` and `propertyNames`;
//! - `evaluation`: `unevaluatedProperties` and `unevaluatedItems`;
//! - `unique_domains`: which `uniqueItems` the matcher compares exactly, and the value domains;
//! - `fixpoints`: satisfiability and infinity, and the liveness questions asked over shapes.
//!
//! The graph knows nothing of the matcher, of tokens or of masks: they read it, never the
//! other way round.
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use super::pattern_syntax::is_pattern;
use crate::automata::{ecma, json, AutomatonId, ByteDfa, StateId, DEAD};
use crate::numbers::NumberConstraints;
use crate::schema::strings::{LengthRange, StringSyntax};

mod algebra;
mod counted;
mod evaluation;
mod fixpoints;
mod keys;
mod unique_domains;

use algebra::StringProduct;
pub(crate) use counted::{CodePointRoom, CountedStrings};
pub(crate) use fixpoints::{contains_reachable, reachable_items, witness_reachable};
pub(crate) use keys::addable_optional_keys;
pub(crate) use unique_domains::{distinct_positions, Canon, FiniteDomains};

pub(crate) type NodeId = u32;

/// The node that admits nothing.
pub(crate) const NEVER: NodeId = 0;
/// The node that admits every JSON value.
pub(crate) const ANY: NodeId = 1;

/// What one schema admits, type by type. Lists are disjunctions (from `anyOf`, `enum`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub(crate) admits_null: bool,
    pub(crate) admits_true: bool,
    pub(crate) admits_false: bool,
    pub(crate) numbers: Vec<Arc<NumberConstraints>>,
    /// JSON string texts (quotes included) in every spelling.
    pub(crate) strings: Option<Arc<ByteDfa>>,
    /// Further strings admitted by their length (bounds too large for an automaton).
    pub(crate) counted_strings: Option<CountedStrings>,
    /// Further strings: those of a syntax (ECMA-262 patterns, host names) of at least so many
    /// code points.
    pub(crate) syntax_strings: Option<SyntaxStrings>,
    pub(crate) arrays: Vec<ArrayShape>,
    pub(crate) objects: Vec<ObjectShape>,
}

/// The strings of a syntax with at least `min_length` code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SyntaxStrings {
    pub(crate) syntax: StringSyntax,
    pub(crate) min_length: u64,
}

impl SyntaxStrings {
    /// The union of two, when one syntax reads both.
    fn union(self, other: SyntaxStrings) -> Result<SyntaxStrings, GraphError> {
        if self.syntax != other.syntax {
            return Err(GraphError::SyntaxStrings);
        }
        Ok(SyntaxStrings { min_length: self.min_length.min(other.min_length), ..self })
    }

    /// Whether `text` (decoded) is one of these strings.
    pub(crate) fn admits(&self, text: &str) -> bool {
        text.chars().count() as u64 >= self.min_length
            && match self.syntax {
                StringSyntax::Pattern => is_pattern(text),
                StringSyntax::Hostname => super::hostname::HostnameReader::accepts(text, false),
                StringSyntax::IdnHostname => super::hostname::HostnameReader::accepts(text, true),
            }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ArrayShape {
    pub(crate) prefix: Vec<NodeId>,
    /// Items after the prefix ([`NEVER`]: none allowed).
    pub(crate) rest: NodeId,
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
    /// `contains` with `minContains`.
    pub(crate) contains: Option<Contains>,
    /// Which items the schema objects intersected into this shape evaluate (for
    /// `unevaluatedItems`).
    pub(crate) evaluated: ItemsEvaluated,
    /// `uniqueItems: true` (the keyword's pointer, for diagnostics).
    pub(crate) unique: Option<Arc<str>>,
}

/// The items a shape's schema objects evaluate: annotations of `prefixItems` (`items` in array
/// form before 2020-12), `items`/`additionalItems`, `contains` (2020-12) and `unevaluatedItems`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct ItemsEvaluated {
    /// Every item is evaluated.
    pub(crate) all: bool,
    /// Items before this position are evaluated.
    pub(crate) prefix: u64,
    /// Items satisfying this schema are evaluated (`contains`).
    pub(crate) matching: Option<NodeId>,
}

/// The keys a shape's schema objects evaluate: annotations of `properties`,
/// `patternProperties` (every pattern of the shape), `additionalProperties` and
/// `unevaluatedProperties`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PropertiesEvaluated {
    /// Every key is evaluated.
    pub(crate) all: bool,
    /// Keys named by `properties`.
    pub(crate) names: BTreeSet<String>,
}

/// At least `min` and at most `max` items from position `from` on must satisfy `node`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Contains {
    pub(crate) node: NodeId,
    pub(crate) min: u64,
    /// `maxContains`, with `avoiding`: each position's item schema without `node` (the rest's
    /// last).
    pub(crate) max: Option<(u64, NodeId)>,
    pub(crate) prefix_avoiding: Vec<NodeId>,
    pub(crate) rest_avoiding: NodeId,
    /// Items before this position are not counted (a complement's "some later item fails").
    pub(crate) from: u64,
    /// Each prefix position's item schema together with `node`, then the rest's.
    pub(crate) prefix_matching: Vec<NodeId>,
    pub(crate) rest_matching: NodeId,
}

#[derive(Debug, Clone)]
pub(crate) struct ObjectShape {
    /// Schemas of the named properties (their `patternProperties` matches included).
    pub(crate) properties: BTreeMap<String, NodeId>,
    /// Names declared in `properties`, in schema order (for `property_order = declared`).
    pub(crate) order: Vec<String>,
    /// Schema of every other key when no pattern applies: the conjunction of `others`
    /// ([`NEVER`]: closed object).
    pub(crate) other: NodeId,
    /// `additionalProperties` of each schema object intersected into this shape.
    pub(crate) others: Vec<NodeId>,
    /// `patternProperties` of those schema objects, flattened.
    pub(crate) patterns: Vec<PatternProperty>,
    /// `propertyNames`: the schema every key must satisfy (as a string).
    pub(crate) names: Option<NodeId>,
    /// How unnamed keys are classified by the patterns; set when the graph is finished.
    pub(crate) keys: Option<Arc<PatternKeys>>,
    pub(crate) required: BTreeSet<String>,
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
    /// Which keys the schema objects intersected into this shape evaluate (for
    /// `unevaluatedProperties`).
    pub(crate) evaluated: PropertiesEvaluated,
    /// Members that must occur (from complements of `additionalProperties`); the matcher
    /// tracks at most one, the graph turns them into required keys on closed objects.
    pub(crate) witnesses: Vec<KeyWitness>,
    /// The named keys (`properties`, then `required`) sorted, each with its position in that
    /// list: made by the matcher on first use, once the graph is finished.
    pub(crate) sorted_names: OnceLock<SortedNames>,
}

/// At least one member whose key is not in `named` and whose value satisfies `node`: the
/// complement of "every other key satisfies `additionalProperties`".
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyWitness {
    pub(crate) named: Arc<BTreeSet<String>>,
    pub(crate) node: NodeId,
    /// The keyword that asked for the complement, for diagnostics.
    pub(crate) pointer: Arc<str>,
    /// Schema of a member serving as the witness, on the shape that holds it: per named
    /// property of the shape outside `named`, and for any other key (`fresh`).
    pub(crate) candidates: BTreeMap<String, NodeId>,
    pub(crate) fresh: NodeId,
}

impl KeyWitness {
    /// The schema member `key` has when it serves as the witness (`None`: it cannot).
    pub(crate) fn serving(&self, key: &str) -> Option<NodeId> {
        if self.named.contains(key) {
            return None;
        }
        Some(self.candidates.get(key).copied().unwrap_or(self.fresh))
    }
}

/// The keys of an object so far: those read, and possibly one more about to be added (asked
/// without copying the others).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeenKeys<'a> {
    read: &'a [String],
    added: Option<&'a str>,
}

impl<'a> SeenKeys<'a> {
    pub(crate) fn new(read: &'a [String]) -> Self {
        SeenKeys { read, added: None }
    }

    /// `read`, then `added`.
    pub(crate) fn with(read: &'a [String], added: &'a str) -> Self {
        SeenKeys { read, added: Some(added) }
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.added == Some(key) || self.read.iter().any(|k| k == key)
    }

    pub(crate) fn len(&self) -> usize {
        self.read.len() + usize::from(self.added.is_some())
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.read.iter().map(String::as_str).chain(self.added)
    }
}

/// The key automata's states after a key's first characters (see
/// [`ObjectShape::prefix_runs`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct PrefixRuns {
    patterns: Vec<StateId>,
    names: Option<StateId>,
}

/// One `patternProperties` entry: the keys it matches (decoded UTF-8) and their schema.
#[derive(Debug, Clone)]
pub(crate) struct PatternProperty {
    pub(crate) keys: Arc<ByteDfa>,
    pub(crate) node: NodeId,
    /// Index in [`ObjectShape::others`] of the schema object it came from.
    pub(crate) owner: usize,
}

/// Automata compare by identity: equal shapes come from the same schema objects.
impl PartialEq for PatternProperty {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.keys, &other.keys) && self.node == other.node && self.owner == other.owner
    }
}

/// Names sorted, each with its position in the list it was sorted from.
pub(crate) type SortedNames = Box<[(Box<str>, u32)]>;

/// Structural equality, to keep one copy of a shape that a union or a product of alternatives
/// reaches twice (`allOf` over `anyOf`s that admit every object, for instance).
impl PartialEq for ObjectShape {
    fn eq(&self, other: &Self) -> bool {
        // Destructured so that a new field cannot be left out of the comparison.
        let ObjectShape {
            properties,
            order,
            other: rest,
            others,
            patterns,
            names,
            keys,
            required,
            min,
            max,
            evaluated,
            witnesses,
            sorted_names: _,
        } = self;
        let same_keys = match (keys, &other.keys) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        *properties == other.properties
            && *order == other.order
            && *rest == other.other
            && *others == other.others
            && *patterns == other.patterns
            && *names == other.names
            && same_keys
            && *required == other.required
            && *min == other.min
            && *max == other.max
            && *evaluated == other.evaluated
            && *witnesses == other.witnesses
    }
}

/// Adds one alternative (number constraints, an array or object shape) unless it is there
/// already. Unions and products of unions reach the same alternative many times; past
/// [`MAX_SHAPES_PER_NODE`] the list is a long `enum` of distinct values, not worth the search.
fn push_alternative<T: PartialEq>(alternatives: &mut Vec<T>, alternative: T) {
    if alternatives.len() > MAX_SHAPES_PER_NODE || !alternatives.contains(&alternative) {
        alternatives.push(alternative);
    }
}

/// Object shapes without repeats, as [`push_alternative`] keeps them, but found through a
/// fingerprint: a product of two disjunctions of a few hundred shapes each would otherwise
/// compare every new shape with every kept one.
#[derive(Default)]
pub(super) struct DistinctObjects {
    shapes: Vec<ObjectShape>,
    by_fingerprint: foldhash::HashMap<u64, Vec<usize>>,
}

impl DistinctObjects {
    pub(super) fn push(&mut self, shape: ObjectShape) {
        let DistinctObjects { shapes, by_fingerprint } = self;
        let same = by_fingerprint.entry(shape.fingerprint()).or_default();
        if !same.iter().any(|&i| shapes[i] == shape) {
            same.push(shapes.len());
            shapes.push(shape);
        }
    }

    pub(super) fn into_vec(self) -> Vec<ObjectShape> {
        self.shapes
    }
}

impl ObjectShape {
    /// A hash of the fields equality compares by value (the others compare by identity), so
    /// that equal shapes have equal fingerprints.
    fn fingerprint(&self) -> u64 {
        use std::hash::BuildHasher;
        let ObjectShape { properties, order, other, others, required, min, max, .. } = self;
        foldhash::fast::FixedState::default().hash_one((properties, order, other, others, required, min, max))
    }
}

/// Unnamed keys under `patternProperties`, grouped by signature (the set of patterns a key
/// matches, as a bit set): every key of one signature has the same schema.
#[derive(Debug, Clone)]
pub(crate) struct PatternKeys {
    /// The keys `propertyNames` admits (decoded UTF-8), when it is present.
    pub(crate) names: Option<ByteDfa>,
    /// `propertyNames` with `format: "regex"`: every key is an ECMA-262 pattern of at least
    /// this many code points (`names` is then `None`). Only on shapes without patterns, where
    /// every valid prefix has infinitely many pattern completions beside any seen keys.
    pub(crate) key_syntax: Option<u64>,
    /// Schema of each signature some unnamed key or some required name outside `properties`
    /// has (a few hundred at most, looked up for every key a mask closes: ordered rather than
    /// hashed).
    pub(crate) signatures: BTreeMap<u64, NodeId>,
    /// Keys of each signature, as decoded UTF-8, named keys removed.
    languages: Vec<(u64, ByteDfa)>,
    /// How many unnamed keys each signature has (`None`: infinitely many).
    counts: Vec<(u64, Option<u64>)>,
    /// Unnamed keys whose schema is satisfiable, as JSON string texts; set with satisfiability.
    pub(crate) allowed_text: Option<Arc<ByteDfa>>,
    /// Per state of `allowed_text`: whether infinitely many keys complete it.
    pub(crate) unbounded_from: Vec<bool>,
    /// Whether every key text not yet closed still completes to infinitely many allowed
    /// unnamed keys (then no prefix is a dead end, whatever keys were seen).
    pub(crate) open: bool,
    /// Texts of every key that may have a chance (allowed unnamed keys and named ones): the
    /// automaton masks inside keys read when `context_from` holds.
    pub(crate) context_text: Option<Arc<ByteDfa>>,
    /// Per state of `context_text`: every unclosed text reachable from it completes to
    /// infinitely many keys, so within the key its automaton alone decides liveness.
    pub(crate) context_from: Vec<bool>,
}

/// Largest set of string values intersected value by value rather than by a product automaton.
const FEW_VALUES: u64 = 64;

/// Most object (array) shapes one node keeps: products of disjunctions (complements, `oneOf`
/// made exclusive) beyond this are a resource limit.
pub(crate) const MAX_SHAPES_PER_NODE: usize = 512;

/// How deep node computations nest before conjunctions met on the way are left pending (computed
/// later by the finishing loop) rather than computed at once: bounds the stack.
const MAX_EAGER_DEPTH: u32 = 64;

/// Most patterns that may apply to one object (signatures are enumerated as subsets).
pub(crate) const MAX_PATTERNS_PER_OBJECT: usize = 8;

impl ArrayShape {
    /// Whether the shape plainly admits nothing (see [`ObjectShape::is_contradictory`]).
    fn is_contradictory(&self) -> bool {
        let max = self.max.unwrap_or(u64::MAX);
        self.min > max || (0..self.min.min(self.prefix.len() as u64 + 1)).any(|i| self.item(i) == NEVER)
    }

    /// Arrays of any items with a length in `min..=max`.
    pub(crate) fn free(min: u64, max: Option<u64>) -> ArrayShape {
        ArrayShape {
            prefix: Vec::new(),
            rest: ANY,
            min,
            max,
            contains: None,
            evaluated: ItemsEvaluated::default(),
            unique: None,
        }
    }

    pub(crate) fn item(&self, index: u64) -> NodeId {
        usize::try_from(index).ok().and_then(|i| self.prefix.get(i).copied()).unwrap_or(self.rest)
    }
}

impl Contains {
    /// The `contains` rule counting items from `from` on, for items `prefix` then `rest`
    /// (`prefix` at least `from` long).
    /// `max` carries the complement of `node` (`maxContains`).
    pub(crate) fn new(
        graph: &mut Graph,
        node: NodeId,
        (min, max): (u64, Option<(u64, NodeId)>),
        from: u64,
        prefix: &[NodeId],
        rest: NodeId,
    ) -> Contains {
        let prefix_matching = prefix
            .iter()
            .enumerate()
            .map(|(i, &item)| if (i as u64) < from { NEVER } else { graph.all(vec![item, node]) })
            .collect();
        let rest_matching = graph.all(vec![rest, node]);
        let (prefix_avoiding, rest_avoiding) = match max {
            None => (prefix.to_vec(), rest),
            Some((_, outside)) => (
                prefix
                    .iter()
                    .enumerate()
                    .map(|(i, &item)| if (i as u64) < from { item } else { graph.all(vec![item, outside]) })
                    .collect(),
                graph.all(vec![rest, outside]),
            ),
        };
        Contains { node, min, max, from, prefix_matching, rest_matching, prefix_avoiding, rest_avoiding }
    }

    /// Item `index` of the array, made not to satisfy the `contains` schema (any item without
    /// `maxContains`: then matching more never hurts).
    pub(crate) fn avoiding(&self, index: u64) -> NodeId {
        usize::try_from(index).ok().and_then(|i| self.prefix_avoiding.get(i).copied()).unwrap_or(self.rest_avoiding)
    }

    /// Item `index` of the array, made to satisfy the `contains` schema.
    pub(crate) fn matching(&self, index: u64) -> NodeId {
        usize::try_from(index).ok().and_then(|i| self.prefix_matching.get(i).copied()).unwrap_or(self.rest_matching)
    }
}

impl ObjectShape {
    /// A shape without `patternProperties`.
    pub(crate) fn plain(
        properties: BTreeMap<String, NodeId>,
        other: NodeId,
        required: BTreeSet<String>,
        min: u64,
        max: Option<u64>,
    ) -> ObjectShape {
        ObjectShape {
            properties,
            order: Vec::new(),
            other,
            others: vec![other],
            patterns: Vec::new(),
            names: None,
            keys: None,
            required,
            min,
            max,
            evaluated: PropertiesEvaluated::default(),
            witnesses: Vec::new(),
            sorted_names: OnceLock::new(),
        }
    }

    /// Whether the shape plainly admits nothing (a required key that cannot occur, counts out
    /// of bounds): dropped from products of disjunctions, which complements make large.
    fn is_contradictory(&self) -> bool {
        let max = self.max.unwrap_or(u64::MAX);
        self.min > max
            || self.required.len() as u64 > max
            || self.required.iter().any(|k| match self.properties.get(k) {
                Some(&node) => node == NEVER,
                None => !self.classifies_keys() && self.other == NEVER,
            })
    }

    /// Position of `key` among the declared properties.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        self.order.iter().position(|k| k == key)
    }

    /// The patterns `key` matches, as a bit set.
    pub(crate) fn signature(&self, key: &str) -> u64 {
        self.patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| p.keys.matches(key.as_bytes()))
            .fold(0, |sig, (i, _)| sig | (1 << i))
    }

    /// The states of the key automata (`patternProperties`, `propertyNames`) after a key's
    /// first characters, `prefix`: keys that start with it are then classified by reading only
    /// the rest ([`ObjectShape::unnamed_value_schema`]). `None` when keys must be patterns.
    pub(crate) fn prefix_runs(&self, prefix: &str) -> Option<PrefixRuns> {
        let Some(keys) = &self.keys else { return Some(PrefixRuns::default()) };
        if keys.key_syntax.is_some() {
            return None;
        }
        Some(PrefixRuns {
            patterns: self.patterns.iter().map(|p| p.keys.run(p.keys.start(), prefix.as_bytes())).collect(),
            names: keys.names.as_ref().map(|names| names.run(names.start(), prefix.as_bytes())),
        })
    }

    /// [`ObjectShape::value_schema`] of a key not in `properties`: the prefix `runs` were
    /// taken after, then `rest`.
    pub(crate) fn unnamed_value_schema(&self, runs: &PrefixRuns, rest: &str) -> NodeId {
        let Some(keys) = &self.keys else { return self.other };
        let accepts = |dfa: &ByteDfa, state: StateId| {
            let end = dfa.run(state, rest.as_bytes());
            end != DEAD && dfa.is_accepting(end)
        };
        if keys.names.as_ref().zip(runs.names).is_some_and(|(names, state)| !accepts(names, state)) {
            return NEVER;
        }
        let signature = self
            .patterns
            .iter()
            .zip(&runs.patterns)
            .enumerate()
            .filter(|(_, (p, &state))| accepts(&p.keys, state))
            .fold(0, |sig, (i, _)| sig | (1 << i));
        keys.signatures.get(&signature).copied().unwrap_or(NEVER)
    }

    /// The schema of member `key` (once the graph is finished).
    pub(crate) fn value_schema(&self, key: &str) -> NodeId {
        if let Some(&node) = self.properties.get(key) {
            return node;
        }
        match &self.keys {
            None => self.other,
            Some(keys) if !keys.admits_name(key) => NEVER,
            Some(keys) => keys.signatures.get(&self.signature(key)).copied().unwrap_or(NEVER),
        }
    }

    /// The operands whose conjunction is the schema of unnamed keys of signature `sig`.
    fn signature_operands(&self, sig: u64) -> Vec<NodeId> {
        let mut operands: Vec<NodeId> = Vec::new();
        let mut owners_matched = vec![false; self.others.len()];
        for (i, p) in self.patterns.iter().enumerate() {
            if sig & (1 << i) != 0 {
                operands.push(p.node);
                owners_matched[p.owner] = true;
            }
        }
        operands.extend(self.others.iter().zip(&owners_matched).filter(|(_, &m)| !m).map(|(&o, _)| o));
        operands
    }

    /// Whether this shape classifies its keys with [`PatternKeys`] (patterns or
    /// `propertyNames` restrict them).
    fn classifies_keys(&self) -> bool {
        !self.patterns.is_empty() || self.names.is_some()
    }
}

/// A node whose content is computed once the whole schema is lowered, so that conjunctions and
/// disjunctions may refer to nodes still being built (recursive schemas).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    All(Vec<NodeId>),
    Any(Vec<NodeId>),
    /// The complement of a node; the pointer of the `not` (or `if`, `oneOf`) that asked for it.
    Not(NodeId, Arc<str>),
    /// A node with `unevaluatedProperties` and `unevaluatedItems` applied to what it leaves
    /// unevaluated; the pointer of the schema object.
    Unevaluated {
        base: NodeId,
        properties: Option<NodeId>,
        items: Option<NodeId>,
        pointer: Arc<str>,
    },
    InProgress,
}

/// Per state of a string automaton read under `uniqueItems`: whether its text has infinitely
/// many completions, so some completion is unseen whatever the items so far.
#[derive(Debug)]
pub(crate) struct UnboundedStates {
    /// From the state.
    pub(crate) from: Vec<bool>,
    /// From the state and from every state read after it until the string closes: no text
    /// that stays inside the string can exhaust the unseen completions.
    pub(crate) throughout: Vec<bool>,
}

/// What [`Graph::finish`] leaves to [`Graph::prepare_matching`].
#[derive(Debug)]
pub(crate) struct ForMatching {
    /// String automata of items under `uniqueItems` (every string automaton when some such
    /// item is an array or object).
    unique_strings: Vec<Arc<ByteDfa>>,
    composite_unique_items: bool,
}

/// The graph of a document, with its shared literal automata.
#[derive(Debug)]
pub(crate) struct Graph {
    nodes: Vec<Node>,
    pending: Vec<Option<Pending>>,
    /// Whether each node admits at least one value (least fixpoint: finite witnesses).
    pub(crate) satisfiable: Vec<bool>,
    /// Every JSON string, shared by the nodes that admit any string.
    pub(crate) any_string: Arc<ByteDfa>,
    pub(crate) literal_null: Arc<ByteDfa>,
    pub(crate) literal_true: Arc<ByteDfa>,
    pub(crate) literal_false: Arc<ByteDfa>,
    /// Every key (valid UTF-8), the universe pattern signatures split.
    any_key: Arc<ByteDfa>,
    conjunctions: HashMap<Vec<NodeId>, NodeId>,
    /// Complement of each node that has one.
    negations: HashMap<NodeId, NodeId>,
    /// The nodes of [`Graph::kind_nodes`], made on first use.
    kinds: Option<[NodeId; 6]>,
    /// Intersections of string automata, by operand addresses (operands held alive here).
    string_products: HashMap<(AutomatonId, AutomatonId), StringProduct>,
    /// One automaton per string language met in products and unions, so that equal languages
    /// built apart (the same `enum` under several `$ref`s, a union rebuilt per conjunction)
    /// share an address and so a product cache entry. Minimal automata are numbered
    /// canonically, so equal tables mean equal languages.
    canonical_strings: HashSet<Arc<ByteDfa>>,
    /// Each automaton's canonical one, by address (the automaton held alive here).
    canonical_by_address: HashMap<AutomatonId, (Arc<ByteDfa>, Arc<ByteDfa>)>,
    /// The values of string automata built from literals (`const`, `enum`, at most
    /// [`MAX_UNIQUE_STRING_DOMAIN`] of them), sorted and deduplicated, by address (the
    /// automaton held alive here): what the automaton holds, known without decoding it.
    literal_values: HashMap<AutomatonId, (Arc<ByteDfa>, Arc<Vec<String>>)>,
    /// The JSON texts of each decoded key language pattern shapes admit (most shapes admit
    /// every key).
    key_texts: HashMap<ByteDfa, Arc<ByteDfa>>,
    /// How unnamed keys are read, by the allowed key texts (by address, held alive here) and
    /// the sorted named keys: shapes of one object met in several conjunctions share them.
    key_readings: HashMap<(AutomatonId, Vec<String>), (Arc<ByteDfa>, keys::KeyReading)>,
    /// `property_order = declared`: declared properties only in schema order.
    pub(crate) ordered: bool,
    /// For string automata of items under `uniqueItems` (by address): which states have
    /// infinitely many completions.
    pub(crate) unbounded_strings: HashMap<AutomatonId, Arc<UnboundedStates>>,
    /// For the automata of counted strings other than every string (by address): the code
    /// points each state needs to close.
    pub(crate) code_point_rooms: HashMap<AutomatonId, Arc<CodePointRoom>>,
    /// The automata of plain strings within short length bounds (by address and by their
    /// canonical automaton's address, held alive here): see [`Graph::count_bounded_strings`].
    bounded_strings: HashMap<AutomatonId, (Arc<ByteDfa>, LengthRange)>,
    /// For items under `uniqueItems` with finitely many values: those values.
    pub(crate) finite_domains: FiniteDomains,
    /// Whether each node has infinitely many values (set with satisfiability; a sound
    /// under-approximation, see [`Graph::compute_infinite`]).
    pub(crate) infinite: Vec<bool>,
    /// Nodes plus the shapes, named properties, array prefixes and number alternatives of
    /// computed nodes, against `max_size`.
    size: usize,
    /// Nested [`Graph::ensure_ready`] calls.
    depth: u32,
    max_size: usize,
    max_dfa_states: usize,
}

/// The automata every graph starts with, built once per process.
struct SharedAutomata {
    literal_null: Arc<ByteDfa>,
    literal_true: Arc<ByteDfa>,
    literal_false: Arc<ByteDfa>,
    any_key: Arc<ByteDfa>,
}

fn shared_automata() -> &'static SharedAutomata {
    static SHARED: OnceLock<SharedAutomata> = OnceLock::new();
    SHARED.get_or_init(|| {
        let literal =
            |text: &[u8]| Arc::new(crate::automata::Re::literal(text).compile(64, 1024).expect("a literal is small"));
        SharedAutomata {
            literal_null: literal(b"null"),
            literal_true: literal(b"true"),
            literal_false: literal(b"false"),
            any_key: Arc::new(ecma::pattern_language("", 10_000).expect("the universe is small")),
        }
    })
}

/// Why finishing a graph failed.
#[derive(Debug, Clone)]
pub(crate) enum GraphError {
    /// A conjunction or disjunction that contains itself without an enclosing object or array.
    IllFounded,
    GraphTooLarge(usize),
    TooManyStates(usize),
    /// More than [`MAX_PATTERNS_PER_OBJECT`] patterns apply to one object.
    TooManyPatterns,
    /// Two `contains` rules on one array (each needs its own count).
    TwoContains,
    /// Counted strings (a length bound above [`MAX_LENGTH_BOUND`](crate::schema::strings::MAX_LENGTH_BOUND)) whose union is not
    /// counted strings again (disjoint ranges, or different automata), or with a lower bound
    /// above it among a pattern's or format's strings.
    CountedStrings,
    /// Strings of a syntax (`format: "regex"`, `"hostname"`, `"idn-hostname"`) met with a
    /// pattern, a length bound, a long list of strings or another syntax, or under
    /// `propertyNames` (patterns aside).
    SyntaxStrings,
    /// A node would keep more than [`MAX_SHAPES_PER_NODE`] number, object or array shapes.
    TooManyShapes,
    /// A complement or an evaluation the graph cannot express, at the pointer of the keyword
    /// that asked for it.
    Unsupported {
        pointer: Arc<str>,
        what: &'static str,
    },
}

impl Graph {
    pub(crate) fn new(max_size: usize, max_dfa_states: usize, ordered: bool) -> Graph {
        let any_string = Arc::clone(json::string_automaton());
        let shared = shared_automata();
        let mut graph = Graph {
            nodes: Vec::new(),
            pending: Vec::new(),
            satisfiable: Vec::new(),
            any_string: Arc::clone(&any_string),
            literal_null: Arc::clone(&shared.literal_null),
            literal_true: Arc::clone(&shared.literal_true),
            literal_false: Arc::clone(&shared.literal_false),
            any_key: Arc::clone(&shared.any_key),
            conjunctions: HashMap::new(),
            negations: HashMap::new(),
            kinds: None,
            unbounded_strings: HashMap::new(),
            code_point_rooms: HashMap::new(),
            bounded_strings: HashMap::new(),
            finite_domains: HashMap::new(),
            infinite: Vec::new(),
            string_products: HashMap::new(),
            canonical_strings: HashSet::from([Arc::clone(&any_string)]),
            canonical_by_address: HashMap::new(),
            literal_values: HashMap::new(),
            key_texts: HashMap::new(),
            key_readings: HashMap::new(),
            ordered,
            size: 0,
            depth: 0,
            max_size,
            max_dfa_states,
        };
        graph.add(Node::default());
        graph.add(Node {
            admits_null: true,
            admits_true: true,
            admits_false: true,
            numbers: vec![Arc::new(NumberConstraints::default())],
            strings: Some(any_string),
            counted_strings: None,
            syntax_strings: None,
            arrays: vec![ArrayShape::free(0, None)],
            objects: vec![ObjectShape::plain(BTreeMap::new(), ANY, BTreeSet::new(), 0, None)],
        });
        graph
    }

    pub(crate) fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.pending.push(None);
        (self.nodes.len() - 1) as NodeId
    }

    /// One node per kind of JSON value (null, booleans, numbers, strings, arrays, objects), each
    /// admitting every value of that kind and nothing else: `oneOf` compares its branches kind
    /// by kind, since a value has exactly one.
    pub(crate) fn kind_nodes(&mut self) -> [NodeId; 6] {
        if let Some(kinds) = self.kinds {
            return kinds;
        }
        let any = self.nodes[ANY as usize].clone();
        let kinds = [
            self.add(Node { admits_null: true, ..Node::default() }),
            self.add(Node { admits_true: true, admits_false: true, ..Node::default() }),
            self.add(Node { numbers: any.numbers.clone(), ..Node::default() }),
            self.add(Node {
                strings: any.strings.clone(),
                counted_strings: any.counted_strings.clone(),
                ..Node::default()
            }),
            self.add(Node { arrays: any.arrays.clone(), ..Node::default() }),
            self.add(Node { objects: any.objects.clone(), ..Node::default() }),
        ];
        self.kinds = Some(kinds);
        kinds
    }

    /// A node admitting every value that is not an object, and the objects of `shape`.
    pub(crate) fn non_objects_and(&mut self, shape: ObjectShape) -> NodeId {
        let mut node = self.nodes[ANY as usize].clone();
        node.objects = vec![shape];
        self.add(node)
    }

    /// Reserves a node whose content is set later with [`Graph::set_all`].
    pub(crate) fn reserve(&mut self) -> NodeId {
        self.add(Node::default())
    }

    /// Forwards a reserved node to a conjunction or disjunction of others.
    pub(crate) fn set_all(&mut self, id: NodeId, operands: Vec<NodeId>) {
        self.pending[id as usize] = Some(Pending::All(operands));
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn is_satisfiable(&self, id: NodeId) -> bool {
        self.satisfiable.get(id as usize).copied().unwrap_or(false)
    }

    /// Whether some value reachable from `root` is one the regular arm leaves to this arm
    /// whatever surrounds it: an object open to further keys (or whose keys patterns or
    /// `propertyNames` read), a number decided by value, or an array whose items are compared.
    /// The regular arm fails exactly when such a part survives into the schema's language.
    /// A finished graph holds that language, so a part reached here survives. (A shape that
    /// admits nothing beside satisfiable siblings may answer yes where the regular arm would
    /// succeed; the language is the same either way.)
    pub(crate) fn beyond_regular_arm(&self, root: NodeId) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id as usize], true) || !self.is_satisfiable(id) {
                continue;
            }
            let node = &self.nodes[id as usize];
            let by_value = |c: &Arc<NumberConstraints>| {
                c.values.is_none()
                    && (c.integer || c.minimum.is_some() || c.maximum.is_some() || !c.multiple_of.is_empty())
            };
            if node.numbers.iter().any(by_value) {
                return true;
            }
            for shape in &node.objects {
                if self.is_satisfiable(shape.other) || !shape.patterns.is_empty() || shape.names.is_some() {
                    return true;
                }
                stack.extend(shape.properties.values());
            }
            for shape in &node.arrays {
                if shape.unique.is_some() {
                    return true;
                }
                stack.extend(&shape.prefix);
                stack.push(shape.rest);
            }
        }
        false
    }

    /// A node admitting what every operand admits (memoised by operand set).
    pub(crate) fn all(&mut self, mut operands: Vec<NodeId>) -> NodeId {
        operands.retain(|&id| id != ANY);
        operands.sort_unstable();
        operands.dedup();
        if operands.contains(&NEVER) {
            return NEVER;
        }
        // A node and its complement: nothing (keeps products of complements small).
        if operands.iter().any(|o| self.negations.get(o).is_some_and(|n| operands.binary_search(n).is_ok())) {
            return NEVER;
        }
        match operands.len() {
            0 => ANY,
            1 => operands[0],
            _ => {
                if let Some(&id) = self.conjunctions.get(&operands) {
                    return id;
                }
                let id = self.reserve();
                self.pending[id as usize] = Some(Pending::All(operands.clone()));
                self.conjunctions.insert(operands, id);
                id
            }
        }
    }

    /// A node admitting exactly the values `operand` does not (memoised); `pointer` names the
    /// keyword asking for it, for diagnostics.
    pub(crate) fn not(&mut self, operand: NodeId, pointer: &str) -> NodeId {
        match operand {
            ANY => return NEVER,
            NEVER => return ANY,
            _ => {}
        }
        if let Some(&id) = self.negations.get(&operand) {
            return id;
        }
        let id = self.reserve();
        self.pending[id as usize] = Some(Pending::Not(operand, Arc::from(pointer)));
        self.negations.insert(operand, id);
        self.negations.insert(id, operand);
        id
    }

    /// `base` with `unevaluatedProperties` (`properties`) and `unevaluatedItems` (`items`) of the
    /// schema object at `pointer` applied.
    pub(crate) fn unevaluated(
        &mut self,
        base: NodeId,
        properties: Option<NodeId>,
        items: Option<NodeId>,
        pointer: &str,
    ) -> NodeId {
        let id = self.reserve();
        self.pending[id as usize] = Some(Pending::Unevaluated { base, properties, items, pointer: Arc::from(pointer) });
        id
    }

    /// [`Graph::all`], computed at once when every operand is (so nothing recursive is in
    /// progress), and [`NEVER`] when it plainly admits nothing: lets products of shapes see
    /// contradictions such as two different constants for one property.
    fn all_decided(&mut self, operands: Vec<NodeId>) -> Result<NodeId, GraphError> {
        let id = self.all(operands);
        // The conjunction may be memoised and in progress itself (a recursive schema meeting
        // the same conjunction again below): then it stays pending. So does one met this deep
        // in computations (complements of recursive schemas can unfold without end): the
        // finishing loop computes it later, without growing the stack.
        if self.pending[id as usize].is_some() && self.depth < MAX_EAGER_DEPTH && self.computable(id, 16) {
            self.ensure_ready(id)?;
        }
        let node = &self.nodes[id as usize];
        let empty = self.pending[id as usize].is_none()
            && !(node.admits_null || node.admits_true || node.admits_false)
            && node.numbers.is_empty()
            && node.strings.is_none()
            && node.counted_strings.is_none()
            && node.syntax_strings.is_none()
            && node.arrays.is_empty()
            && node.objects.is_empty();
        Ok(if empty { NEVER } else { id })
    }

    /// Whether [`Graph::ensure_ready`] can compute `id` now without meeting a node in progress
    /// (a recursive reference), looking `depth` operands deep.
    fn computable(&self, id: NodeId, depth: u32) -> bool {
        match &self.pending[id as usize] {
            None => true,
            Some(_) if depth == 0 => false,
            Some(Pending::All(ops) | Pending::Any(ops)) => ops.iter().all(|&o| self.computable(o, depth - 1)),
            Some(Pending::Not(op, _)) => self.computable(*op, depth - 1),
            Some(Pending::Unevaluated { base, .. }) => self.computable(*base, depth - 1),
            Some(Pending::InProgress) => false,
        }
    }

    /// The schema of member `key` of `shape` while the graph is being built (signatures are
    /// not enumerated yet, so the matching patterns are intersected here).
    pub(crate) fn key_schema(&mut self, shape: &ObjectShape, key: &str) -> NodeId {
        if let Some(&node) = shape.properties.get(key) {
            return node;
        }
        if !shape.classifies_keys() {
            return shape.other;
        }
        let operands = shape.signature_operands(shape.signature(key));
        self.all(operands)
    }

    /// A node admitting what any operand admits.
    pub(crate) fn any(&mut self, operands: Vec<NodeId>) -> NodeId {
        if operands.contains(&ANY) {
            return ANY;
        }
        self.any_branch(operands)
    }

    /// A node admitting what any operand admits, keeping every operand's shapes even beside one
    /// that admits everything: `anyOf: [{"items": ...}, true]` still evaluates items through its
    /// first branch (for `unevaluatedItems`).
    pub(crate) fn any_branch(&mut self, mut operands: Vec<NodeId>) -> NodeId {
        operands.retain(|&id| id != NEVER);
        operands.sort_unstable();
        operands.dedup();
        match operands.len() {
            0 => NEVER,
            1 => operands[0],
            _ => {
                let id = self.reserve();
                self.pending[id as usize] = Some(Pending::Any(operands));
                id
            }
        }
    }

    /// Computes every pending node (including those created meanwhile), then satisfiability;
    /// returns what [`Graph::prepare_matching`] completes.
    pub(crate) fn finish(&mut self) -> Result<ForMatching, GraphError> {
        // Classifying pattern keys creates conjunctions, whose objects may have patterns again.
        loop {
            let mut id = 0;
            while id < self.nodes.len() {
                self.ensure_ready(id as NodeId)?;
                id += 1;
                self.check_size()?;
            }
            if !self.classify_pattern_keys()? {
                break;
            }
        }
        let mut unique_strings = Vec::new();
        let mut finite_domains = HashMap::new();
        // Items under `uniqueItems` that are arrays or objects: they must have infinitely many
        // values, checked once satisfiability is known.
        let mut composite_items: Vec<(NodeId, Arc<str>)> = Vec::new();
        for node in &self.nodes {
            for shape in &node.arrays {
                if let Some(pointer) = &shape.unique {
                    match self.unique_items_supported(shape) {
                        Err(what) => return Err(GraphError::Unsupported { pointer: Arc::clone(pointer), what }),
                        Ok((domains, composite)) => {
                            finite_domains.extend(domains);
                            composite_items.extend(composite.into_iter().map(|item| (item, Arc::clone(pointer))));
                        }
                    }
                    for &item in shape.prefix.iter().chain(std::iter::once(&shape.rest)) {
                        unique_strings.extend(self.nodes[item as usize].strings.iter().cloned());
                    }
                }
            }
            for shape in &node.objects {
                if shape.witnesses.len() > 1 || (!shape.witnesses.is_empty() && shape.classifies_keys()) {
                    return Err(GraphError::Unsupported {
                        pointer: Arc::clone(&shape.witnesses[0].pointer),
                        what: "open objects with keys outside two sets of properties, or under patternProperties",
                    });
                }
            }
        }
        self.finite_domains = finite_domains;
        if !composite_items.is_empty() {
            // The matcher asks of every open string inside such an item whether it has
            // infinitely many completions.
            unique_strings.extend(self.nodes.iter().filter_map(|n| n.strings.clone()));
        }
        self.compute_satisfiability();
        self.compute_infinite();
        if let Some((_, pointer)) = composite_items.iter().find(|(item, _)| !self.infinite[*item as usize]) {
            return Err(GraphError::Unsupported {
                pointer: Arc::clone(pointer),
                what: "repeated items that are arrays or objects with finitely many values",
            });
        }
        Ok(ForMatching { unique_strings, composite_unique_items: !composite_items.is_empty() })
    }

    /// After [`Graph::finish`], once the graph is known to be the program's (a lowering whose
    /// `oneOf` branches overlap is redone): what only the matcher reads, the completions of
    /// strings under `uniqueItems`, the readings of pattern keys and counted strings.
    pub(crate) fn prepare_matching(&mut self, ready: ForMatching) -> Result<(), GraphError> {
        let ForMatching { unique_strings, composite_unique_items } = ready;
        for dfa in unique_strings {
            let key = AutomatonId::of(&dfa);
            self.unbounded_strings.entry(key).or_insert_with(|| {
                let from = dfa.unbounded_from();
                Arc::new(UnboundedStates { throughout: dfa.unbounded_until_accepted(&from), from })
            });
        }
        self.allow_pattern_keys()?;
        self.count_bounded_strings(composite_unique_items);
        Ok(())
    }

    fn ensure_ready(&mut self, id: NodeId) -> Result<(), GraphError> {
        let pending = match &self.pending[id as usize] {
            None => return Ok(()),
            Some(Pending::InProgress) => return Err(GraphError::IllFounded),
            Some(p) => p.clone(),
        };
        self.pending[id as usize] = Some(Pending::InProgress);
        self.depth += 1;
        let content = self.compute(pending);
        self.depth -= 1;
        let content = content?;
        self.size += content.objects.iter().map(|s| 1 + s.properties.len()).sum::<usize>()
            + content.arrays.iter().map(|s| 1 + s.prefix.len()).sum::<usize>()
            + content.numbers.len();
        self.nodes[id as usize] = content;
        self.pending[id as usize] = None;
        self.check_size()
    }

    /// A pending node's content, its operands made ready first.
    fn compute(&mut self, pending: Pending) -> Result<Node, GraphError> {
        let (operands, conjunction) = match pending {
            Pending::All(ops) => (ops, true),
            Pending::Any(ops) => (ops, false),
            Pending::Not(op, pointer) => {
                self.ensure_ready(op)?;
                let operand = self.nodes[op as usize].clone();
                return self.complement_content(&operand, &pointer);
            }
            Pending::Unevaluated { base, properties, items, pointer } => {
                self.ensure_ready(base)?;
                let mut content = self.nodes[base as usize].clone();
                if let Some(schema) = properties {
                    content.objects = self.evaluate_remaining_properties(&content.objects, schema, &pointer)?;
                }
                if let Some(schema) = items {
                    content.arrays = self.evaluate_remaining_items(&content.arrays, schema, &pointer)?;
                }
                return Ok(content);
            }
            Pending::InProgress => unreachable!("taken out by ensure_ready"),
        };
        for &op in &operands {
            self.ensure_ready(op)?;
        }
        if !conjunction {
            return self.union_all(&operands);
        }
        let mut content = self.nodes[operands[0] as usize].clone();
        for &op in &operands[1..] {
            let other = self.nodes[op as usize].clone();
            content = self.intersect_content(&content, &other)?;
        }
        Ok(content)
    }

    /// Fails once the graph outgrows its budget (nodes, shapes and their named properties):
    /// complements and products of alternatives can grow it far faster than the schema.
    fn check_size(&self) -> Result<(), GraphError> {
        if self.nodes.len() + self.size > self.max_size {
            return Err(GraphError::GraphTooLarge(self.max_size));
        }
        Ok(())
    }
}

/// The literals a literal-only node admits.
pub(crate) fn literals(node: &Node) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    if node.admits_null {
        out.push(serde_json::Value::Null);
    }
    if node.admits_true {
        out.push(serde_json::Value::Bool(true));
    }
    if node.admits_false {
        out.push(serde_json::Value::Bool(false));
    }
    out
}
