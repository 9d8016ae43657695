//! The structured arm's schema graph: one node per value schema, split by JSON type, with
//! disjunctions of object and array shapes. Recursion is edges back to earlier nodes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use super::pattern_syntax::is_pattern;
use crate::automata::json_escapes::{decoded_strings, json_literal_strings, json_strings_decoding_to};
use crate::automata::{ecma, json, ByteDfa, StateId, DEAD};
use crate::numbers::NumberConstraints;
use crate::schema::strings::{LengthRange, StringSyntax, MAX_LENGTH_BOUND};

pub(crate) type NodeId = u32;

/// The node that admits nothing.
pub(crate) const NEVER: NodeId = 0;
/// The node that admits every JSON value.
pub(crate) const ANY: NodeId = 1;

/// What one schema admits, type by type. Lists are disjunctions (from `anyOf`, `enum`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub(crate) null: bool,
    pub(crate) true_: bool,
    pub(crate) false_: bool,
    pub(crate) numbers: Vec<Arc<NumberConstraints>>,
    /// JSON string texts (quotes included) in every spelling.
    pub(crate) strings: Option<Arc<ByteDfa>>,
    /// Further strings admitted by length alone (bounds too large for an automaton).
    pub(crate) counted_strings: Option<LengthRange>,
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

/// Most strings a finite domain of items under `uniqueItems` is enumerated with.
const MAX_UNIQUE_STRING_DOMAIN: u64 = 4096;

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

impl PatternKeys {
    /// Whether `propertyNames` admits `key`.
    pub(crate) fn admits_name(&self, key: &str) -> bool {
        self.names.as_ref().is_none_or(|names| names.matches(key.as_bytes()))
            && self.key_syntax.is_none_or(|min| key.chars().count() as u64 >= min && is_pattern(key))
    }

    /// Unnamed keys that can still be added with a satisfiable schema, beyond `seen_allowed`
    /// such keys already present (`u64::MAX`: unboundedly many).
    fn addable(&self, sat: &[bool], seen_allowed: impl FnOnce() -> u64) -> u64 {
        let mut total: u64 = 0;
        for &(sig, count) in &self.counts {
            if self.signatures.get(&sig).is_some_and(|&n| sat[n as usize]) {
                match count {
                    None => return u64::MAX,
                    Some(c) => total = total.saturating_add(c),
                }
            }
        }
        total.saturating_sub(seen_allowed())
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
    string_products: HashMap<(usize, usize), StringProduct>,
    /// The values of string automata built from at most [`FEW_VALUES`] literals (`const`,
    /// short `enum`s), by address (the automaton held alive here).
    few_values: HashMap<usize, (Arc<ByteDfa>, Arc<Vec<String>>)>,
    /// The JSON texts of each decoded key language pattern shapes admit (most shapes admit
    /// every key).
    key_texts: HashMap<ByteDfa, Arc<ByteDfa>>,
    /// `property_order = declared`: declared properties only in schema order.
    pub(crate) ordered: bool,
    /// For string automata of items under `uniqueItems` (by address): which states have
    /// infinitely many completions.
    pub(crate) unbounded_strings: HashMap<usize, Arc<UnboundedStates>>,
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
    null: Arc<ByteDfa>,
    true_: Arc<ByteDfa>,
    false_: Arc<ByteDfa>,
    any_key: Arc<ByteDfa>,
}

fn shared_automata() -> &'static SharedAutomata {
    static SHARED: OnceLock<SharedAutomata> = OnceLock::new();
    SHARED.get_or_init(|| {
        let literal =
            |text: &[u8]| Arc::new(crate::automata::Re::literal(text).compile(64, 1024).expect("a literal is small"));
        SharedAutomata {
            null: literal(b"null"),
            true_: literal(b"true"),
            false_: literal(b"false"),
            any_key: Arc::new(ecma::pattern_language("", 10_000).expect("the universe is small")),
        }
    })
}

/// Adds what `other` admits to `content`, string automata aside (the caller joins those).
fn absorb(content: &mut Node, other: &Node) -> Result<(), GraphError> {
    content.null |= other.null;
    content.true_ |= other.true_;
    content.false_ |= other.false_;
    for constraints in &other.numbers {
        push_alternative(&mut content.numbers, Arc::clone(constraints));
    }
    content.counted_strings = match (content.counted_strings, other.counted_strings) {
        (Some(p), Some(q)) => Some(p.union(&q).ok_or(GraphError::CountedStrings)?),
        (p, q) => p.or(q),
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
type StringProduct = (Arc<ByteDfa>, Arc<ByteDfa>, Arc<ByteDfa>);

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
    /// Strings with a length bound above [`MAX_LENGTH_BOUND`] combined with a language that is
    /// not a finite set of short strings, or disjoint ranges of such lengths.
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
            literal_null: Arc::clone(&shared.null),
            literal_true: Arc::clone(&shared.true_),
            literal_false: Arc::clone(&shared.false_),
            any_key: Arc::clone(&shared.any_key),
            conjunctions: HashMap::new(),
            negations: HashMap::new(),
            kinds: None,
            unbounded_strings: HashMap::new(),
            finite_domains: HashMap::new(),
            infinite: Vec::new(),
            string_products: HashMap::new(),
            few_values: HashMap::new(),
            key_texts: HashMap::new(),
            ordered,
            size: 0,
            depth: 0,
            max_size,
            max_dfa_states,
        };
        graph.add(Node::default());
        graph.add(Node {
            null: true,
            true_: true,
            false_: true,
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
            self.add(Node { null: true, ..Node::default() }),
            self.add(Node { true_: true, false_: true, ..Node::default() }),
            self.add(Node { numbers: any.numbers.clone(), ..Node::default() }),
            self.add(Node { strings: any.strings.clone(), counted_strings: any.counted_strings, ..Node::default() }),
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
            && !(node.null || node.true_ || node.false_)
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

    /// Computes every pending node (including those created meanwhile), then satisfiability.
    pub(crate) fn finish(&mut self) -> Result<(), GraphError> {
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
        for dfa in unique_strings {
            let key = Arc::as_ptr(&dfa) as usize;
            self.unbounded_strings.entry(key).or_insert_with(|| {
                let from = dfa.unbounded_from();
                Arc::new(UnboundedStates { throughout: dfa.unbounded_until_accepted(&from), from })
            });
        }
        self.compute_satisfiability();
        self.compute_infinite();
        if let Some((_, pointer)) = composite_items.iter().find(|(item, _)| !self.infinite[*item as usize]) {
            return Err(GraphError::Unsupported {
                pointer: Arc::clone(pointer),
                what: "repeated items that are arrays or objects with finitely many values",
            });
        }
        self.allow_pattern_keys()?;
        Ok(())
    }

    /// Every object shape with patterns and no [`PatternKeys`] yet gets its signatures: the
    /// sets of patterns some unnamed key matches, each with its schema. Returns whether any
    /// shape was classified.
    fn classify_pattern_keys(&mut self) -> Result<bool, GraphError> {
        let mut todo = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            for (i, shape) in node.objects.iter().enumerate() {
                if shape.classifies_keys() && shape.keys.is_none() {
                    todo.push((id, i));
                }
            }
        }
        for &(id, i) in &todo {
            let shape = self.nodes[id].objects[i].clone();
            let keys = self.pattern_keys(&shape)?;
            // Named properties outside `propertyNames` cannot occur.
            for (name, node) in self.nodes[id].objects[i].properties.iter_mut() {
                if !keys.admits_name(name) {
                    *node = NEVER;
                }
            }
            self.nodes[id].objects[i].keys = Some(Arc::new(keys));
        }
        Ok(!todo.is_empty())
    }

    fn pattern_keys(&mut self, shape: &ObjectShape) -> Result<PatternKeys, GraphError> {
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        let named: BTreeSet<&String> = shape.properties.keys().chain(&shape.required).collect();
        // Keys matching exactly the patterns of `sig`, split pattern by pattern (in or out),
        // skipping every branch whose language is already empty.
        // The key universe: every key, or those `propertyNames` admits.
        let (names, key_syntax) = match shape.names {
            None => (None, None),
            Some(node) => {
                let node = &self.nodes[node as usize];
                if node.counted_strings.is_some() {
                    return Err(GraphError::CountedStrings);
                }
                match node.syntax_strings {
                    // Keys that are patterns, and nothing else asked of them.
                    Some(SyntaxStrings { syntax: StringSyntax::Pattern, min_length })
                        if node.strings.is_none() && shape.patterns.is_empty() =>
                    {
                        (None, Some(min_length))
                    }
                    Some(_) => return Err(GraphError::SyntaxStrings),
                    None => {
                        let texts = node.strings.as_deref().cloned().unwrap_or_else(ByteDfa::empty);
                        (Some(decoded_strings(&texts)), None)
                    }
                }
            }
        };
        let universe = match &names {
            None => self.any_key.as_ref().clone(),
            Some(names) => self.any_key.intersect(names, self.max_dfa_states).map_err(limit)?,
        };
        let mut languages: Vec<(u64, ByteDfa)> = Vec::new();
        let mut branches = vec![(0usize, 0u64, universe)];
        while let Some((i, sig, language)) = branches.pop() {
            if i == shape.patterns.len() {
                languages.push((sig, language));
                continue;
            }
            let pattern = &shape.patterns[i].keys;
            let inside = language.intersect(pattern, self.max_dfa_states).map_err(limit)?;
            let outside = language.difference(pattern, self.max_dfa_states).map_err(limit)?;
            for (bit, part) in [(1u64 << i, inside), (0, outside)] {
                if !part.is_empty_language() {
                    branches.push((i + 1, sig | bit, part));
                }
            }
        }
        // A required name outside `properties` takes the schema of its signature too, even where
        // the named keys are all that signature has (`"^(a|b)$"` with `"required": ["a", "b"]`).
        let required_unnamed: Vec<&String> =
            shape.required.iter().filter(|k| !shape.properties.contains_key(*k)).collect();
        let mut signatures = BTreeMap::new();
        let mut counts = Vec::new();
        for (sig, language) in &languages {
            let named_here = named.iter().filter(|k| language.matches(k.as_bytes())).count() as u64;
            let count = language.language_size().map(|n| n.saturating_sub(named_here));
            if count != Some(0) {
                counts.push((*sig, count));
            } else if !required_unnamed.iter().any(|k| language.matches(k.as_bytes())) {
                continue;
            }
            let node = self.all(shape.signature_operands(*sig));
            signatures.insert(*sig, node);
        }
        // Only signatures with unnamed keys make the unnamed key languages.
        languages.retain(|(sig, _)| counts.iter().any(|(s, _)| s == sig));
        Ok(PatternKeys {
            names,
            key_syntax,
            signatures,
            languages,
            counts,
            allowed_text: None,
            unbounded_from: Vec::new(),
            open: false,
            context_text: None,
            context_from: Vec::new(),
        })
    }

    /// Once satisfiability is known: which unnamed keys each pattern shape admits, as JSON
    /// string texts (for key liveness).
    fn allow_pattern_keys(&mut self) -> Result<(), GraphError> {
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        for id in 0..self.nodes.len() {
            for i in 0..self.nodes[id].objects.len() {
                let Some(keys) = self.nodes[id].objects[i].keys.take() else { continue };
                let shape = &self.nodes[id].objects[i];
                let mut allowed = ByteDfa::empty();
                for (sig, language) in &keys.languages {
                    if self.satisfiable[keys.signatures[sig] as usize] {
                        allowed = allowed.union(language, self.max_dfa_states).map_err(limit)?;
                    }
                }
                let named: Vec<&str> = shape.properties.keys().chain(&shape.required).map(String::as_str).collect();
                // Texts are taken apart from the decoded keys: a text decodes to one key, so the
                // texts of (allowed minus named) are the allowed texts minus the named ones, and
                // the named keys' texts are a small trie (the texts of a complement of names
                // would need the whole escape layer over it). When every key is allowed (the
                // common case), the allowed texts are every string, named keys included.
                let every_key = allowed == *self.any_key;
                let allowed_text = if every_key {
                    Arc::clone(&self.any_string)
                } else if let Some(text) = self.key_texts.get(&allowed) {
                    Arc::clone(text)
                } else {
                    let text = Arc::new(
                        json_strings_decoding_to(&allowed, self.max_dfa_states)
                            .map_err(|e| GraphError::TooManyStates(e.limit))?,
                    );
                    self.key_texts.insert(allowed, Arc::clone(&text));
                    text
                };
                let (text, context_text) = if named.is_empty() {
                    (allowed_text.as_ref().clone(), allowed_text)
                } else {
                    let named = json_literal_strings(&named, self.max_dfa_states)
                        .map_err(|e| GraphError::TooManyStates(e.limit))?;
                    let text = allowed_text.difference(&named, self.max_dfa_states).map_err(limit)?;
                    let context_text = if every_key {
                        allowed_text
                    } else {
                        Arc::new(allowed_text.union(&named, self.max_dfa_states).map_err(limit)?)
                    };
                    (text, context_text)
                };
                let unbounded_from = text.unbounded_from();
                let open = every_open_key_unbounded(&self.any_string, &text, &unbounded_from);
                let context_from = if Arc::ptr_eq(&context_text, &self.any_string) {
                    open_within_every_string().clone()
                } else {
                    open_within_strings(&context_text)
                };
                // The classification is moved over (copied only if another shape shares it).
                let keys = Arc::try_unwrap(keys).unwrap_or_else(|shared| shared.as_ref().clone());
                let keys = PatternKeys {
                    languages: Vec::new(),
                    allowed_text: (!text.is_empty_language()).then(|| Arc::new(text)),
                    unbounded_from,
                    open,
                    context_from,
                    context_text: (!context_text.is_empty_language()).then_some(context_text),
                    ..keys
                };
                self.nodes[id].objects[i].keys = Some(Arc::new(keys));
            }
        }
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

    /// The union of ready nodes. String automata are joined pairwise in a balanced tree, not
    /// one after another: an `enum` of a thousand strings then costs about n log n state work,
    /// not n^2.
    fn union_all(&mut self, operands: &[NodeId]) -> Result<Node, GraphError> {
        let mut automata: Vec<Arc<ByteDfa>> = Vec::new();
        let mut content = Node::default();
        for &op in operands {
            let other = &self.nodes[op as usize];
            if let Some(dfa) = &other.strings {
                if !automata.iter().any(|a| Arc::ptr_eq(a, dfa)) {
                    automata.push(Arc::clone(dfa));
                }
            }
            // In place: a union of many operands (a long `enum`) stays linear.
            absorb(&mut content, other)?;
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
        Ok(content)
    }

    /// The strings both automata admit, memoised by operand (schemas intersect the same formats
    /// and patterns with each other again and again through `allOf` and `$ref`).
    fn intersect_strings(&mut self, p: &Arc<ByteDfa>, q: &Arc<ByteDfa>) -> Result<Arc<ByteDfa>, GraphError> {
        if Arc::ptr_eq(p, q) || Arc::ptr_eq(q, &self.any_string) {
            return Ok(Arc::clone(p));
        }
        if Arc::ptr_eq(p, &self.any_string) {
            return Ok(Arc::clone(q));
        }
        let (a, b) = (Arc::as_ptr(p) as usize, Arc::as_ptr(q) as usize);
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

    /// `few ∩ other` without a product automaton when `few` holds a handful of values (a
    /// `const` or short `enum` meeting another schema's strings, as in tagged unions): each value
    /// is looked up in `other`, whose texts come in every spelling, by one spelling.
    fn intersect_few(&mut self, few: &Arc<ByteDfa>, other: &ByteDfa) -> Result<Option<Arc<ByteDfa>>, GraphError> {
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

    /// The values of a string automaton built from a few literals.
    fn few_values(&self, dfa: &Arc<ByteDfa>) -> Option<Arc<Vec<String>>> {
        self.few_values.get(&(Arc::as_ptr(dfa) as usize)).map(|(_, values)| Arc::clone(values))
    }

    /// Remembers that `dfa` holds the JSON texts (every spelling) of `values`, when they are few,
    /// so that intersections with it look them up one by one.
    pub(crate) fn remember_literals(&mut self, dfa: &Arc<ByteDfa>, values: &[&str]) {
        if values.len() as u64 <= FEW_VALUES {
            let mut unique: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            unique.sort();
            unique.dedup();
            self.few_values.insert(Arc::as_ptr(dfa) as usize, (Arc::clone(dfa), Arc::new(unique)));
        }
    }

    /// The automaton of the JSON texts of `values`, remembered as such.
    fn literal_strings(&mut self, values: &[&str]) -> Result<Arc<ByteDfa>, GraphError> {
        let dfa = Arc::new(
            json_literal_strings(values, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?,
        );
        self.remember_literals(&dfa, values);
        Ok(dfa)
    }

    /// The strings of `dfa` whose length is in `range`, when `dfa` is finite with strings of at
    /// most [`MAX_LENGTH_BOUND`] code points (then an automaton says it exactly); otherwise the
    /// combination is not supported.
    fn strings_within(&self, dfa: &ByteDfa, range: &LengthRange) -> Result<Option<ByteDfa>, GraphError> {
        // A text of n bytes holds at most n - 2 code points (the quotes).
        let longest = dfa.longest_match().ok_or(GraphError::CountedStrings)?;
        if longest.saturating_sub(2) > MAX_LENGTH_BOUND {
            return Err(GraphError::CountedStrings);
        }
        if range.min > MAX_LENGTH_BOUND {
            return Ok(None);
        }
        let max = range.max.map(|m| m.min(MAX_LENGTH_BOUND) as u32);
        let lengths = json::string_with_length(range.min as u32, max)
            .compile(self.max_dfa_states, self.max_dfa_states.saturating_mul(10))
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
    fn intersect_content(&mut self, x: &Node, y: &Node) -> Result<Node, GraphError> {
        let mut node =
            Node { null: x.null && y.null, true_: x.true_ && y.true_, false_: x.false_ && y.false_, ..Node::default() };
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
        // (Dx | Rx) & (Dy | Ry) = Dx&Dy | Dx&Ry | Rx&Dy | Rx&Ry, automata D and length ranges R.
        let mut automata: Vec<Arc<ByteDfa>> = Vec::new();
        let mut ranges: Vec<LengthRange> = Vec::new();
        if let (Some(p), Some(q)) = (&x.strings, &y.strings) {
            automata.push(self.intersect_strings(p, q)?);
        }
        for (dfa, range) in [(&x.strings, &y.counted_strings), (&y.strings, &x.counted_strings)] {
            if let (Some(dfa), Some(range)) = (dfa, range) {
                if Arc::ptr_eq(dfa, &self.any_string) {
                    ranges.push(*range);
                } else if let Some(within) = self.strings_within(dfa, range)? {
                    automata.push(Arc::new(within));
                }
            }
        }
        if let (Some(p), Some(q)) = (&x.counted_strings, &y.counted_strings) {
            ranges.extend(p.intersect(q));
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
        for range in ranges {
            node.counted_strings = Some(match node.counted_strings {
                None => range,
                Some(r) => r.union(&range).ok_or(GraphError::CountedStrings)?,
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
                        push_alternative(&mut node.objects, shape);
                    }
                }
            }
        }
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
    fn complement_content(&mut self, x: &Node, pointer: &Arc<str>) -> Result<Node, GraphError> {
        let unsupported = |what| GraphError::Unsupported { pointer: Arc::clone(pointer), what };
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        let any = self.nodes[ANY as usize].clone();
        let mut base = any.clone();
        base.null = !x.null;
        base.true_ = !x.true_;
        base.false_ = !x.false_;
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
            (None, Some(range)) => match (range.min, range.max) {
                (0, Some(max)) => (None, Some(LengthRange { min: max + 1, max: None })),
                (min, None) if min > 0 => (None, Some(LengthRange { min: 0, max: Some(min - 1) })),
                (min, Some(max)) if min <= MAX_LENGTH_BOUND + 1 => {
                    // Shorter ones in an automaton, longer ones counted.
                    let shorter = json::string_with_length(0, Some(min as u32 - 1))
                        .compile(self.max_dfa_states, self.max_dfa_states.saturating_mul(10))
                        .map_err(|_| GraphError::TooManyStates(self.max_dfa_states))?;
                    (Some(Arc::new(shorter)), Some(LengthRange { min: max + 1, max: None }))
                }
                _ => return Err(unsupported("strings outside a bounded length range")),
            },
            (Some(_), Some(_)) => return Err(unsupported("strings outside a pattern with a long length bound")),
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
    fn array_violations(&mut self, shape: &ArrayShape, pointer: &Arc<str>) -> Result<Vec<ArrayShape>, GraphError> {
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
    fn object_violations(&mut self, shape: &ObjectShape, pointer: &Arc<str>) -> Result<Vec<ObjectShape>, GraphError> {
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
    fn place_witnesses(&mut self, shape: ObjectShape) -> Vec<ObjectShape> {
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

    /// The object shapes of a schema object whose in-place applicators gave `shapes`, with
    /// `unevaluatedProperties: schema` applied.
    ///
    /// An instance matching several shapes (several `anyOf` branches, say) has the keys of all
    /// of them evaluated. So each combination of shapes is intersected and judged by the union
    /// of their evaluations; an instance is accepted when some combination accepts it, and the
    /// combination of every shape it matches is the exact verdict (a smaller one evaluates
    /// fewer keys and is only stricter).
    fn evaluate_remaining_properties(
        &mut self,
        shapes: &[ObjectShape],
        schema: NodeId,
        pointer: &Arc<str>,
    ) -> Result<Vec<ObjectShape>, GraphError> {
        let key = |s: &ObjectShape| {
            let patterns: BTreeSet<usize> = s.patterns.iter().map(|p| Arc::as_ptr(&p.keys) as usize).collect();
            (s.evaluated.all, s.evaluated.names.clone(), patterns)
        };
        let union = |a: &(bool, BTreeSet<String>, BTreeSet<usize>), b: &(bool, BTreeSet<String>, BTreeSet<usize>)| {
            (a.0 || b.0, a.1.union(&b.1).cloned().collect(), a.2.union(&b.2).cloned().collect())
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
    fn evaluate_properties_of(&mut self, mut shape: ObjectShape, schema: NodeId) -> Result<ObjectShape, GraphError> {
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
    fn evaluate_remaining_items(
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
    fn evaluate_items_of(&mut self, mut shape: ArrayShape, schema: NodeId) -> ArrayShape {
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

    /// The intersections of the object shapes picked by `subset`.
    fn intersect_objects(&mut self, shapes: &[ObjectShape], subset: &[usize]) -> Result<Vec<ObjectShape>, GraphError> {
        let mut node = Node { objects: vec![shapes[subset[0]].clone()], ..Node::default() };
        for &i in &subset[1..] {
            let other = Node { objects: vec![shapes[i].clone()], ..Node::default() };
            node = self.intersect_content(&node, &other)?;
        }
        Ok(node.objects)
    }

    /// The intersections of the array shapes picked by `subset`.
    fn intersect_arrays(&mut self, shapes: &[ArrayShape], subset: &[usize]) -> Result<Vec<ArrayShape>, GraphError> {
        let mut node = Node { arrays: vec![shapes[subset[0]].clone()], ..Node::default() };
        for &i in &subset[1..] {
            let other = Node { arrays: vec![shapes[i].clone()], ..Node::default() };
            node = self.intersect_content(&node, &other)?;
        }
        Ok(node.arrays)
    }

    /// Whether the strings or numbers of a node have infinitely many values (by JSON value, not
    /// spelling). Strings admitted by length count when their length may reach 4: more than
    /// 2^64 strings of the 1,112,064 code points, more than any count of items reaches. A short
    /// literal set is finite without a walk of its automaton (every spelling of an `enum` makes
    /// a large acyclic one).
    fn infinitely_many_values_of_scalars(&self, node: &Node) -> bool {
        node.strings
            .as_ref()
            .is_some_and(|d| !self.few_values.contains_key(&(Arc::as_ptr(d) as usize)) && d.is_infinite())
            || infinitely_many_values_beside_automata(node)
    }

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
    fn unique_items_supported(&self, shape: &ArrayShape) -> Result<(FiniteDomains, Vec<NodeId>), &'static str> {
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
            let mut values: Vec<super::unique::Canon> =
                literals(node).iter().map(super::unique::Canon::literal).collect();
            if let Some(strings) = &node.strings {
                // A short literal set is known value by value; no need to decode its automaton.
                if let Some((_, known)) = self.few_values.get(&(Arc::as_ptr(strings) as usize)) {
                    if string_domain.is_some_and(|other| other != item) {
                        return Err("repeated items from different finite sets of strings");
                    }
                    string_domain = Some(item);
                    values.extend(known.iter().map(|v| super::unique::Canon::String(v.clone())));
                    domains.insert(item, Arc::new(super::unique::ItemDomain::Values(values)));
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
                            values.push(super::unique::Canon::String(text));
                        }
                    }
                    // Too many to list: counted, when no literal shares the position.
                    None if values.is_empty() => {
                        let size = decoded.language_size().expect("a finite language");
                        let domain = super::unique::ItemDomain::Strings { size, decoded: Arc::new(decoded) };
                        domains.insert(item, Arc::new(domain));
                        continue;
                    }
                    None => return Err("repeated items from more than 4096 strings beside literals"),
                }
            }
            domains.insert(item, Arc::new(super::unique::ItemDomain::Values(values)));
        }
        Ok((domains, composite))
    }

    /// Which nodes have infinitely many values: a least fixpoint over satisfiable nodes, so a
    /// node counts only through a part some value of it really uses. Sound, not complete: an
    /// array with `contains` or an object with a pending witness counts only through its other
    /// parts. The matcher treats a node it does not count as possibly finite, and searches.
    fn compute_infinite(&mut self) {
        let n = self.nodes.len();
        // Strings and numbers first, once each: counting a language walks its automaton, and
        // nodes share automata (by address here), so each is counted once.
        let mut infinite_strings: HashMap<usize, bool> = HashMap::new();
        let mut infinite: Vec<bool> = (0..n)
            .map(|id| {
                let node = &self.nodes[id];
                let strings = node.strings.as_ref().is_some_and(|d| {
                    let address = Arc::as_ptr(d) as usize;
                    // Short literal sets are finite and every string is not; no walk needed.
                    *infinite_strings.entry(address).or_insert_with(|| {
                        !self.few_values.contains_key(&address) && (Arc::ptr_eq(d, &self.any_string) || d.is_infinite())
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

    fn node_infinite(&self, node: &Node, infinite: &[bool]) -> bool {
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
    fn compute_satisfiability(&mut self) {
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

/// Removes from a disjunction of object shapes those another one admits entirely (and exact
/// repeats), keeping products of complements small. Only plain shapes are compared: no
/// patterns, `propertyNames` or witnesses, the same evaluations.
fn drop_subsumed_objects(shapes: &mut Vec<ObjectShape>) {
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
    let mut keep = vec![true; shapes.len()];
    for i in 0..shapes.len() {
        for j in 0..shapes.len() {
            // Of two equal shapes the later one goes.
            if i != j && keep[j] && within(&shapes[i], &shapes[j]) && (j < i || !within(&shapes[j], &shapes[i])) {
                keep[i] = false;
                break;
            }
        }
    }
    let mut flags = keep.into_iter();
    shapes.retain(|_| flags.next().unwrap_or(true));
}

/// The values of each item schema with finitely many, under `uniqueItems`.
pub(crate) type FiniteDomains = HashMap<NodeId, Arc<super::unique::ItemDomain>>;

/// Most shapes of differing evaluations that `unevaluated*` combines (`2^n - 1` combinations).
const MAX_EVALUATION_SHAPES: usize = 6;

/// The subsets of shapes (by index) worth a combination under `unevaluated*`: each shape alone
/// when all evaluate alike; otherwise every subset whose union of evaluations (`keys`) no
/// smaller subset already reaches by dropping one member.
fn combinations<K: PartialEq>(
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

/// The witnesses of a conjunction, without those another one implies: a member outside a
/// larger set of names, with the same schema or any value asked of the weaker one.
fn strongest_witnesses<'a>(witnesses: impl Iterator<Item = &'a KeyWitness>) -> Vec<KeyWitness> {
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

/// [`Graph::infinitely_many_values_of_scalars`] but for the string automaton.
fn infinitely_many_values_beside_automata(node: &Node) -> bool {
    node.syntax_strings.is_some()
        || node.counted_strings.is_some_and(|r| r.max.is_none_or(|max| max >= 4 && max >= r.min))
        || node.numbers.iter().any(|c| c.has_infinitely_many_values())
}

/// Whether a satisfiable array shape without `contains` has infinitely many values, given which
/// nodes do: items from a satisfiable position on that has infinitely many, or unboundedly many
/// items (distinct ones under `uniqueItems`).
fn array_infinite(shape: &ArrayShape, sat: &[bool], infinite: &[bool]) -> bool {
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
fn object_infinite(shape: &ObjectShape, sat: &[bool], infinite: &[bool]) -> bool {
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

/// The literals a literal-only node admits.
pub(crate) fn literals(node: &Node) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    if node.null {
        out.push(serde_json::Value::Null);
    }
    if node.true_ {
        out.push(serde_json::Value::Bool(true));
    }
    if node.false_ {
        out.push(serde_json::Value::Bool(false));
    }
    out
}

fn min_bound(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(m), Some(n)) => Some(m.min(n)),
        (m, n) => m.or(n),
    }
}

fn node_has_witness(domains: Option<&FiniteDomains>, node: &Node, sat: &[bool]) -> bool {
    node.null
        || node.true_
        || node.false_
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

fn array_has_witness(domains: Option<&FiniteDomains>, shape: &ArrayShape, sat: &[bool]) -> bool {
    shape.max.is_none_or(|max| shape.min <= max)
        && reachable_items(shape, sat) >= shape.min
        && contains_reachable(shape, sat, 0, 0)
        && domains.is_none_or(|d| super::unique::distinct_positions(d, shape, 0, shape.min, &[]))
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

/// Whether every unclosed JSON string text (on `any`) is, on `text`, a state from which
/// infinitely many texts are accepted: explores the reachable pairs of the two automata.
fn every_open_key_unbounded(any: &ByteDfa, text: &ByteDfa, unbounded_from: &[bool]) -> bool {
    // One byte of each class the two automata share: the bytes of one move both alike.
    let mut bytes: Vec<(u8, u8, u8)> =
        (0..=255u8).map(|b| (any.byte_classes()[b as usize], text.byte_classes()[b as usize], b)).collect();
    bytes.sort_unstable();
    bytes.dedup_by_key(|&mut (a, t, _)| (a, t));
    let width = text.state_count();
    let mut visited = vec![false; any.state_count() * width];
    let mut stack = vec![(any.start(), text.start())];
    while let Some((a, t)) = stack.pop() {
        if any.is_accepting(a) || std::mem::replace(&mut visited[a as usize * width + t as usize], true) {
            continue;
        }
        if t == crate::automata::DEAD || !unbounded_from[t as usize] {
            return false;
        }
        for &(_, _, b) in &bytes {
            let next = any.next(a, b);
            if next != crate::automata::DEAD {
                stack.push((next, text.next(t, b)));
            }
        }
    }
    true
}

/// [`open_within_strings`] of the shared automaton of every string, computed once.
fn open_within_every_string() -> &'static Vec<bool> {
    static OPEN: OnceLock<Vec<bool>> = OnceLock::new();
    OPEN.get_or_init(|| open_within_strings(json::string_automaton()))
}

/// Per state of a JSON string automaton: whether no state reachable from it before the string
/// closes has only finitely many completions.
fn open_within_strings(text: &ByteDfa) -> Vec<bool> {
    let n = text.state_count();
    let unbounded = text.unbounded_from();
    // Predecessors through transitions that leave an unclosed state.
    let mut predecessors: Vec<Vec<StateId>> = vec![Vec::new(); n];
    for p in 1..n as StateId {
        if text.is_accepting(p) {
            continue;
        }
        for b in 0..=255u8 {
            let q = text.next(p, b);
            if q != crate::automata::DEAD {
                predecessors[q as usize].push(p);
            }
        }
    }
    let mut closed_off = vec![false; n];
    let mut stack: Vec<StateId> =
        (1..n as StateId).filter(|&s| !text.is_accepting(s) && !unbounded[s as usize]).collect();
    while let Some(s) = stack.pop() {
        if std::mem::replace(&mut closed_off[s as usize], true) {
            continue;
        }
        stack.extend(predecessors[s as usize].iter().copied().filter(|&p| !closed_off[p as usize]));
    }
    let mut open: Vec<bool> = closed_off.iter().map(|&c| !c).collect();
    open[crate::automata::DEAD as usize] = false;
    open
}

/// Keys that can still be added to an object with keys `seen`, beyond the required ones
/// (`u64::MAX`: unboundedly many); `named_open` says which named properties may still come.
pub(crate) fn addable_optional_keys(
    shape: &ObjectShape,
    sat: &[bool],
    seen: SeenKeys,
    named_open: &dyn Fn(&str) -> bool,
) -> u64 {
    let is_seen = |k: &str| seen.contains(k) || !named_open(k);
    let unnamed = match &shape.keys {
        None if sat[shape.other as usize] => return u64::MAX,
        None => 0,
        Some(keys) => {
            // Classifying the keys seen costs a pattern run per key: only when the count is finite.
            let named = |k: &str| shape.properties.contains_key(k) || shape.required.contains(k);
            let seen_allowed =
                || seen.iter().filter(|k| !named(k) && sat[shape.value_schema(k) as usize]).count() as u64;
            keys.addable(sat, seen_allowed)
        }
    };
    let named_optional = shape
        .properties
        .iter()
        .filter(|(k, &v)| sat[v as usize] && !shape.required.contains(*k) && !is_seen(k))
        .count() as u64;
    unnamed.saturating_add(named_optional)
}

fn object_has_witness(shape: &ObjectShape, sat: &[bool]) -> bool {
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
