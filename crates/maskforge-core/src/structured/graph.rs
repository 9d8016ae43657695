//! The structured arm's schema graph: one node per value schema, split by JSON type, with
//! disjunctions of object and array shapes. Recursion is edges back to earlier nodes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::automata::{json, ByteDfa};
use crate::numbers::NumberConstraints;

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
    pub(crate) arrays: Vec<ArrayShape>,
    pub(crate) objects: Vec<ObjectShape>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ArrayShape {
    pub(crate) prefix: Vec<NodeId>,
    /// Items after the prefix ([`NEVER`]: none allowed).
    pub(crate) rest: NodeId,
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ObjectShape {
    /// Schemas of the named properties.
    pub(crate) properties: BTreeMap<String, NodeId>,
    /// Schema of every other key ([`NEVER`]: closed object).
    pub(crate) other: NodeId,
    pub(crate) required: BTreeSet<String>,
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
}

impl ArrayShape {
    pub(crate) fn item(&self, index: u64) -> NodeId {
        usize::try_from(index).ok().and_then(|i| self.prefix.get(i).copied()).unwrap_or(self.rest)
    }
}

impl ObjectShape {
    pub(crate) fn value_schema(&self, key: &str) -> NodeId {
        self.properties.get(key).copied().unwrap_or(self.other)
    }
}

/// A node whose content is computed once the whole schema is lowered, so that conjunctions and
/// disjunctions may refer to nodes still being built (recursive schemas).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    All(Vec<NodeId>),
    Any(Vec<NodeId>),
    InProgress,
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
    conjunctions: HashMap<Vec<NodeId>, NodeId>,
    max_nodes: usize,
    max_dfa_states: usize,
}

fn literal(text: &[u8]) -> Arc<ByteDfa> {
    Arc::new(crate::automata::Re::literal(text).compile(64, 1024).expect("a literal is small"))
}

/// Why finishing a graph failed.
#[derive(Debug, Clone)]
pub(crate) enum GraphError {
    /// A conjunction or disjunction that contains itself without an enclosing object or array.
    IllFounded,
    TooManyNodes(usize),
    TooManyStates(usize),
}

impl Graph {
    pub(crate) fn new(max_nodes: usize, max_dfa_states: usize) -> Graph {
        let any_string = Arc::new(json::string().compile(10_000, 100_000).expect("the string language is small"));
        let mut graph = Graph {
            nodes: Vec::new(),
            pending: Vec::new(),
            satisfiable: Vec::new(),
            any_string: Arc::clone(&any_string),
            literal_null: literal(b"null"),
            literal_true: literal(b"true"),
            literal_false: literal(b"false"),
            conjunctions: HashMap::new(),
            max_nodes,
            max_dfa_states,
        };
        graph.add(Node::default());
        graph.add(Node {
            null: true,
            true_: true,
            false_: true,
            numbers: vec![Arc::new(NumberConstraints::default())],
            strings: Some(any_string),
            arrays: vec![ArrayShape { prefix: Vec::new(), rest: ANY, min: 0, max: None }],
            objects: vec![ObjectShape {
                properties: BTreeMap::new(),
                other: ANY,
                required: BTreeSet::new(),
                min: 0,
                max: None,
            }],
        });
        graph
    }

    pub(crate) fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.pending.push(None);
        (self.nodes.len() - 1) as NodeId
    }

    /// Reserves a node whose content is set later with [`Graph::set`].
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

    /// A node admitting what every operand admits (memoised by operand set).
    pub(crate) fn all(&mut self, mut operands: Vec<NodeId>) -> NodeId {
        operands.retain(|&id| id != ANY);
        operands.sort_unstable();
        operands.dedup();
        if operands.contains(&NEVER) {
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

    /// A node admitting what any operand admits.
    pub(crate) fn any(&mut self, mut operands: Vec<NodeId>) -> NodeId {
        operands.retain(|&id| id != NEVER);
        operands.sort_unstable();
        operands.dedup();
        if operands.contains(&ANY) {
            return ANY;
        }
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
        let mut id = 0;
        while id < self.nodes.len() {
            self.ensure_ready(id as NodeId)?;
            id += 1;
            if self.nodes.len() > self.max_nodes {
                return Err(GraphError::TooManyNodes(self.max_nodes));
            }
        }
        self.compute_satisfiability();
        Ok(())
    }

    fn ensure_ready(&mut self, id: NodeId) -> Result<(), GraphError> {
        let pending = match &self.pending[id as usize] {
            None => return Ok(()),
            Some(Pending::InProgress) => return Err(GraphError::IllFounded),
            Some(p) => p.clone(),
        };
        self.pending[id as usize] = Some(Pending::InProgress);
        let (operands, conjunction) = match pending {
            Pending::All(ops) => (ops, true),
            Pending::Any(ops) => (ops, false),
            Pending::InProgress => unreachable!(),
        };
        for &op in &operands {
            self.ensure_ready(op)?;
        }
        let mut content = self.nodes[operands[0] as usize].clone();
        for &op in &operands[1..] {
            let other = self.nodes[op as usize].clone();
            content = if conjunction {
                self.intersect_content(&content, &other)?
            } else {
                self.union_content(&content, &other)?
            };
        }
        self.nodes[id as usize] = content;
        self.pending[id as usize] = None;
        Ok(())
    }

    fn union_content(&mut self, x: &Node, y: &Node) -> Result<Node, GraphError> {
        let strings = match (&x.strings, &y.strings) {
            (Some(p), Some(q)) => {
                Some(Arc::new(p.union(q, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?))
            }
            (p, q) => p.clone().or_else(|| q.clone()),
        };
        Ok(Node {
            null: x.null || y.null,
            true_: x.true_ || y.true_,
            false_: x.false_ || y.false_,
            numbers: x.numbers.iter().chain(&y.numbers).cloned().collect(),
            strings,
            arrays: x.arrays.iter().chain(&y.arrays).cloned().collect(),
            objects: x.objects.iter().chain(&y.objects).cloned().collect(),
        })
    }

    /// Top-level intersection; children become (pending) conjunction nodes.
    fn intersect_content(&mut self, x: &Node, y: &Node) -> Result<Node, GraphError> {
        let mut node =
            Node { null: x.null && y.null, true_: x.true_ && y.true_, false_: x.false_ && y.false_, ..Node::default() };
        for p in &x.numbers {
            for q in &y.numbers {
                let both = p.intersect(q);
                if both.is_satisfiable() {
                    node.numbers.push(Arc::new(both));
                }
            }
        }
        node.strings = match (&x.strings, &y.strings) {
            (Some(p), Some(q)) => {
                let both = p.intersect(q, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?;
                (!both.is_empty_language()).then(|| Arc::new(both))
            }
            _ => None,
        };
        for p in &x.arrays {
            for q in &y.arrays {
                let len = p.prefix.len().max(q.prefix.len());
                let prefix = (0..len as u64).map(|i| self.all(vec![p.item(i), q.item(i)])).collect();
                let rest = self.all(vec![p.rest, q.rest]);
                node.arrays.push(ArrayShape { prefix, rest, min: p.min.max(q.min), max: min_bound(p.max, q.max) });
            }
        }
        for p in &x.objects {
            for q in &y.objects {
                let mut properties = BTreeMap::new();
                for key in p.properties.keys().chain(q.properties.keys()) {
                    if !properties.contains_key(key) {
                        let both = self.all(vec![p.value_schema(key), q.value_schema(key)]);
                        properties.insert(key.clone(), both);
                    }
                }
                node.objects.push(ObjectShape {
                    properties,
                    other: self.all(vec![p.other, q.other]),
                    required: p.required.union(&q.required).cloned().collect(),
                    min: p.min.max(q.min),
                    max: min_bound(p.max, q.max),
                });
            }
        }
        Ok(node)
    }

    /// Which nodes admit a value: the least fixpoint, so a recursive schema counts only when it
    /// has a finite witness.
    fn compute_satisfiability(&mut self) {
        let n = self.nodes.len();
        let mut sat = vec![false; n];
        loop {
            let mut changed = false;
            for id in 0..n {
                if !sat[id] && node_has_witness(&self.nodes[id], &sat) {
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

fn min_bound(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(m), Some(n)) => Some(m.min(n)),
        (m, n) => m.or(n),
    }
}

fn node_has_witness(node: &Node, sat: &[bool]) -> bool {
    node.null
        || node.true_
        || node.false_
        || !node.numbers.is_empty()
        || node.strings.is_some()
        || node.arrays.iter().any(|a| array_has_witness(a, sat))
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

fn array_has_witness(shape: &ArrayShape, sat: &[bool]) -> bool {
    shape.max.is_none_or(|max| shape.min <= max) && reachable_items(shape, sat) >= shape.min
}

/// Keys that can still be added, beyond the required ones (`u64::MAX`: unboundedly many).
pub(crate) fn addable_optional_keys(shape: &ObjectShape, sat: &[bool], seen: &dyn Fn(&str) -> bool) -> u64 {
    if sat[shape.other as usize] {
        return u64::MAX;
    }
    shape.properties.iter().filter(|(k, &v)| sat[v as usize] && !shape.required.contains(*k) && !seen(k)).count() as u64
}

fn object_has_witness(shape: &ObjectShape, sat: &[bool]) -> bool {
    let required_ok = shape.required.iter().all(|k| sat[shape.value_schema(k) as usize]);
    let needed = shape.required.len() as u64;
    let max = shape.max.unwrap_or(u64::MAX);
    let extra_needed = shape.min.saturating_sub(needed);
    required_ok && needed <= max && shape.min <= max && addable_optional_keys(shape, sat, &|_| false) >= extra_needed
}
