//! A minimal, trimmed byte DFA with byte classes, and the set operations over it.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::NFA;
use regex_automata::util::primitives::StateID as RaStateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

mod minimise;
mod table_bytes;

use minimise::{ColumnMap, Grouped, RawDfa};
pub(crate) use minimise::{EdgeNode, NO_NODE};

/// A state of a [`ByteDfa`].
pub type StateId = u32;

/// The dead state: no continuation is accepted. Every [`ByteDfa`] has it at index 0.
pub const DEAD: StateId = 0;

/// A deterministic automaton over bytes, trimmed (every state but [`DEAD`] can still reach an
/// accepting state) and minimal (every construction ends by minimising). Bytes that behave alike in every
/// state share a class, so the table is `states x classes`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ByteDfa {
    /// Byte -> class.
    classes: [u8; 256],
    class_count: usize,
    /// `transitions[state * class_count + class]`.
    transitions: Vec<StateId>,
    accepting: Vec<bool>,
    start: StateId,
}

impl std::fmt::Debug for ByteDfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteDfa")
            .field("states", &self.state_count())
            .field("classes", &self.class_count)
            .field("start", &self.start)
            .finish()
    }
}

/// Why building an automaton failed: it would exceed the state limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyStates {
    /// The state limit that was exceeded.
    pub limit: usize,
}

/// The identity of a shared automaton, for memo tables keyed by automaton without hashing its
/// table. Valid while the automaton lives: every table keyed by it either holds the `Arc` in
/// its entry or belongs to the graph whose nodes hold it, so an address is never reused while
/// its entry exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct AutomatonId(usize);

impl AutomatonId {
    pub(crate) fn of(dfa: &Arc<ByteDfa>) -> AutomatonId {
        AutomatonId(Arc::as_ptr(dfa) as usize)
    }
}

impl ByteDfa {
    /// The automaton of the empty language.
    pub fn empty() -> ByteDfa {
        ByteDfa { classes: [0; 256], class_count: 1, transitions: vec![DEAD], accepting: vec![false], start: DEAD }
    }

    /// Determinises a Thompson NFA (anchored at its start, the whole input must match) and
    /// returns the trimmed, minimal result.
    pub(crate) fn from_nfa(nfa: &NFA, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        // Each dense state costs roughly `classes * 4` bytes; the byte limit below is generous
        // and the state count is checked exactly during extraction.
        let byte_limit = max_states.saturating_mul(1024);
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored)
                    .accelerate(false)
                    .minimize(false)
                    .dfa_size_limit(Some(byte_limit))
                    .determinize_size_limit(Some(byte_limit)),
            )
            .build_from_nfa(nfa)
            .map_err(|_| TooManyStates { limit: max_states })?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .map_err(|_| TooManyStates { limit: max_states })?;

        // Breadth-first extraction, one column per byte class of the library's DFA.
        let library_classes = dfa.byte_classes();
        let mut representatives: Vec<u8> = Vec::new();
        let mut column_of = [0u8; 256];
        for (b, column) in column_of.iter_mut().enumerate() {
            let class = library_classes.get(b as u8) as usize;
            if class == representatives.len() {
                representatives.push(b as u8);
            }
            *column = class as u8;
        }
        let columns = representatives.len();
        let mut index: HashMap<RaStateID, StateId> = HashMap::new();
        let mut order: Vec<RaStateID> = vec![start];
        index.insert(start, 1);
        let mut transitions: Vec<StateId> = vec![DEAD; columns]; // dead row
        let mut accepting = vec![false];
        let mut cursor = 0;
        while cursor < order.len() {
            let id = order[cursor];
            cursor += 1;
            accepting.push(dfa.is_match_state(dfa.next_eoi_state(id)));
            for &byte in &representatives {
                let next = dfa.next_state(id, byte);
                let target = if dfa.is_dead_state(next) || dfa.is_quit_state(next) {
                    DEAD
                } else {
                    let fresh = index.len() as StateId + 1;
                    let entry = *index.entry(next).or_insert(fresh);
                    if entry == fresh {
                        order.push(next);
                        if order.len() > max_states {
                            return Err(TooManyStates { limit: max_states });
                        }
                    }
                    entry
                };
                transitions.push(target);
            }
        }
        let raw =
            RawDfa { columns, column_of: ColumnMap::Classes(Box::new(column_of)), transitions, accepting, start: 1 };
        Ok(raw.finish())
    }

    /// The automaton of a graph that is deterministic already: node `i` moves by its disjoint
    /// byte ranges ([`NO_NODE`] for nowhere), `start` is the initial node. Trimmed and minimised,
    /// with no subset construction. Fails when the graph has more than `max_states` nodes.
    pub(crate) fn from_deterministic(
        nodes: &[EdgeNode],
        start: u32,
        max_states: usize,
    ) -> Result<ByteDfa, TooManyStates> {
        Ok(ByteDfa::raw_from_deterministic(nodes, start, max_states)?.map_or_else(ByteDfa::empty, RawDfa::finish))
    }

    /// [`ByteDfa::from_deterministic`] for a graph known to be minimal already: every node
    /// reachable from `start` and able to reach acceptance, no two nodes equivalent. Only
    /// renumbers, so that equal languages still give equal tables.
    pub(crate) fn from_minimal_deterministic(
        nodes: &[EdgeNode],
        start: u32,
        max_states: usize,
    ) -> Result<ByteDfa, TooManyStates> {
        if nodes.len() > max_states {
            return Err(TooManyStates { limit: max_states });
        }
        if start == NO_NODE {
            return Ok(ByteDfa::empty());
        }
        let (column_of, columns) = edge_columns(nodes);
        Ok(minimise::renumber_edges(nodes, start, &column_of, columns))
    }

    /// The table of [`ByteDfa::from_deterministic`], before minimisation; `None` when there is
    /// no start node.
    fn raw_from_deterministic(
        nodes: &[EdgeNode],
        start: u32,
        max_states: usize,
    ) -> Result<Option<RawDfa>, TooManyStates> {
        if nodes.len() > max_states {
            return Err(TooManyStates { limit: max_states });
        }
        if start == NO_NODE {
            return Ok(None);
        }
        let (column_of, columns) = edge_columns(nodes);
        let mut transitions = vec![DEAD; (nodes.len() + 1) * columns];
        let mut accepting = Vec::with_capacity(nodes.len() + 1);
        accepting.push(false);
        for (i, node) in nodes.iter().enumerate() {
            accepting.push(node.accepting);
            let row = &mut transitions[(i + 1) * columns..(i + 2) * columns];
            for &(lo, hi, to) in &node.edges {
                let target = if to == NO_NODE { DEAD } else { to + 1 };
                row[column_of[lo as usize] as usize..=column_of[hi as usize] as usize].fill(target);
            }
        }
        Ok(Some(RawDfa {
            columns,
            column_of: ColumnMap::Classes(Box::new(column_of)),
            transitions,
            accepting,
            start: start + 1,
        }))
    }

    /// Number of states, [`DEAD`] included; states are `0..state_count()`.
    pub fn state_count(&self) -> usize {
        self.accepting.len()
    }

    /// Number of byte classes, the width of the transition table.
    pub fn class_count(&self) -> usize {
        self.class_count
    }

    /// Byte -> class map (classes are `0..class_count`).
    pub fn byte_classes(&self) -> &[u8; 256] {
        &self.classes
    }

    /// The start state; [`DEAD`] when the language is empty.
    pub fn start(&self) -> StateId {
        self.start
    }

    /// True when the language is empty.
    pub fn is_empty_language(&self) -> bool {
        self.start == DEAD
    }

    /// The state after `byte` from `state`; [`DEAD`] when no accepted text continues that way.
    #[inline]
    pub fn next(&self, state: StateId, byte: u8) -> StateId {
        self.transitions[state as usize * self.class_count + self.classes[byte as usize] as usize]
    }

    /// The state after any byte of `class` from `state` (`class` below
    /// [`class_count`](Self::class_count)).
    #[inline]
    pub fn next_class(&self, state: StateId, class: u8) -> StateId {
        self.transitions[state as usize * self.class_count + class as usize]
    }

    /// Runs `bytes` from `state`; [`DEAD`] once any byte leaves the language.
    pub fn run(&self, mut state: StateId, bytes: &[u8]) -> StateId {
        for &b in bytes {
            if state == DEAD {
                break;
            }
            state = self.next(state, b);
        }
        state
    }

    /// Whether the text that led to `state` is in the language.
    #[inline]
    pub fn is_accepting(&self, state: StateId) -> bool {
        self.accepting[state as usize]
    }

    /// Whole-text membership.
    pub fn matches(&self, text: &[u8]) -> bool {
        let s = self.run(self.start, text);
        s != DEAD && self.is_accepting(s)
    }

    /// How many bytes each class holds.
    fn class_sizes(&self) -> Vec<u64> {
        let mut class_sizes = vec![0u64; self.class_count];
        for &class in &self.classes {
            class_sizes[class as usize] += 1;
        }
        class_sizes
    }

    /// The live successors of `state`, each with how many bytes lead there.
    fn successors_with(&self, state: StateId, class_sizes: &[u64]) -> Vec<(StateId, u64)> {
        (0..self.class_count)
            .filter_map(|class| {
                let to = self.next_class(state, class as u8);
                (to != DEAD).then_some((to, class_sizes[class]))
            })
            .collect()
    }

    /// Whether infinitely many strings are accepted: a cycle reachable from the start (every
    /// live state reaches acceptance, the automaton being trimmed). A depth-first search over
    /// the table, without building successor lists.
    pub fn is_infinite(&self) -> bool {
        if self.is_empty_language() {
            return false;
        }
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut mark = vec![NEW; self.state_count()];
        mark[self.start as usize] = ON_PATH;
        // Each frame: a state and the next class to follow from it.
        let mut path: Vec<(StateId, usize)> = vec![(self.start, 0)];
        while let Some(frame) = path.last_mut() {
            let (state, class) = *frame;
            if class == self.class_count {
                mark[state as usize] = DONE;
                path.pop();
                continue;
            }
            frame.1 += 1;
            let to = self.next_class(state, class as u8);
            if to == DEAD {
                continue;
            }
            match mark[to as usize] {
                ON_PATH => return true,
                NEW => {
                    mark[to as usize] = ON_PATH;
                    path.push((to, 0));
                }
                _ => {}
            }
        }
        false
    }

    /// Per state: whether infinitely many strings lead from it to acceptance (it reaches a
    /// cycle; every live state reaches acceptance, the automaton being trimmed).
    pub fn unbounded_from(&self) -> Vec<bool> {
        let n = self.state_count();
        // Strongly connected components would do; repeatedly removing states with no remaining
        // successor (a reverse topological peel) leaves exactly the states that reach a cycle.
        // Counted per live edge (class), so a target reached by two classes is counted twice and
        // listed twice among the predecessors: the peel is the same.
        let live_edges = |s: usize| {
            let row = &self.transitions[s * self.class_count..(s + 1) * self.class_count];
            row.iter().copied().filter(|&to| to != DEAD)
        };
        let mut remaining: Vec<u32> = (0..n).map(|s| live_edges(s).count() as u32).collect();
        let predecessors = Grouped::new(n, |add| {
            for s in 0..n {
                for to in live_edges(s) {
                    add(to as usize, s as StateId);
                }
            }
        });
        let mut peeled = vec![false; n];
        let mut queue: Vec<StateId> = (0..n as StateId).filter(|&s| remaining[s as usize] == 0).collect();
        while let Some(s) = queue.pop() {
            peeled[s as usize] = true;
            for &p in predecessors.get(s as usize) {
                remaining[p as usize] -= 1;
                if remaining[p as usize] == 0 {
                    queue.push(p);
                }
            }
        }
        let mut unbounded: Vec<bool> = peeled.iter().map(|&p| !p).collect();
        unbounded[DEAD as usize] = false;
        unbounded
    }

    /// Per state: whether every state read from it until acceptance, itself included, has
    /// infinitely many completions (`unbounded` as [`Self::unbounded_from`] gives it). Text that
    /// leaves such a state without being accepted can never run out of completions.
    pub fn unbounded_until_accepted(&self, unbounded: &[bool]) -> Vec<bool> {
        let n = self.state_count();
        let predecessors = Grouped::new(n, |add| {
            for s in (0..n as StateId).filter(|&s| s != DEAD && !self.is_accepting(s)) {
                for class in 0..self.class_count {
                    let to = self.next_class(s, class as u8);
                    if to != DEAD {
                        add(to as usize, s);
                    }
                }
            }
        });
        // Backwards from the bounded states that are not accepting, through states that are not.
        let mut reaches_bounded: Vec<bool> =
            (0..n as StateId).map(|s| s != DEAD && !self.is_accepting(s) && !unbounded[s as usize]).collect();
        let mut queue: Vec<StateId> = (0..n as StateId).filter(|&s| reaches_bounded[s as usize]).collect();
        while let Some(s) = queue.pop() {
            for &p in predecessors.get(s as usize) {
                if !reaches_bounded[p as usize] {
                    reaches_bounded[p as usize] = true;
                    queue.push(p);
                }
            }
        }
        let mut result: Vec<bool> = reaches_bounded.iter().map(|&r| !r).collect();
        result[DEAD as usize] = false;
        result
    }

    /// Length in bytes of the longest accepted string (`None`: unbounded; the empty language
    /// gives `Some(0)`).
    pub fn longest_match(&self) -> Option<u64> {
        self.fold_finite(|_, successors| successors.iter().map(|&(below, _)| below + 1).max().unwrap_or(0))
    }

    /// How many strings the automaton accepts (`None`: infinitely many; saturating).
    pub fn language_size(&self) -> Option<u64> {
        self.fold_finite(|state, successors| {
            successors.iter().fold(u64::from(self.is_accepting(state)), |total, &(below, bytes)| {
                total.saturating_add(below.saturating_mul(bytes))
            })
        })
    }

    /// Every accepted string, when there are at most `limit` (`None` otherwise).
    pub fn finite_language(&self, limit: u64) -> Option<Vec<Vec<u8>>> {
        if self.language_size()? > limit {
            return None;
        }
        // States from which acceptance is reachable (a fixpoint); in a finite language they
        // form a DAG, so the walk below ends.
        let n = self.state_count();
        let class_sizes = self.class_sizes();
        let mut reaches: Vec<bool> = (0..n as StateId).map(|s| self.is_accepting(s)).collect();
        loop {
            let mut changed = false;
            for s in 0..n as StateId {
                if !reaches[s as usize]
                    && self.successors_with(s, &class_sizes).iter().any(|&(to, _)| reaches[to as usize])
                {
                    reaches[s as usize] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut out = Vec::new();
        let mut stack: Vec<(StateId, Vec<u8>)> = vec![(self.start, Vec::new())];
        while let Some((state, text)) = stack.pop() {
            if self.is_accepting(state) {
                out.push(text.clone());
            }
            for b in 0..=255u8 {
                let next = self.next(state, b);
                if next != DEAD && reaches[next as usize] {
                    let mut longer = text.clone();
                    longer.push(b);
                    stack.push((next, longer));
                }
            }
        }
        Some(out)
    }

    /// A value computed bottom-up over a finite language: `combine(state, successors)` gets each
    /// successor's value and how many bytes lead there. `None` when the language is infinite;
    /// the empty language gives `Some(0)`.
    fn fold_finite(&self, combine: impl Fn(StateId, &[(u64, u64)]) -> u64) -> Option<u64> {
        if self.is_empty_language() {
            return Some(0);
        }
        if self.unbounded_from()[self.start as usize] {
            return None;
        }
        // The states reachable from the start form a DAG: post-order.
        let class_sizes = self.class_sizes();
        let mut value: Vec<Option<u64>> = vec![None; self.state_count()];
        let mut stack: Vec<(StateId, bool)> = vec![(self.start, false)];
        while let Some((s, expanded)) = stack.pop() {
            if value[s as usize].is_some() {
                continue;
            }
            let successors = self.successors_with(s, &class_sizes);
            if expanded {
                let below: Vec<(u64, u64)> = successors
                    .iter()
                    .map(|&(to, bytes)| (value[to as usize].expect("successors are done first"), bytes))
                    .collect();
                value[s as usize] = Some(combine(s, &below));
            } else {
                stack.push((s, true));
                stack.extend(successors.into_iter().map(|(to, _)| (to, false)));
            }
        }
        value[self.start as usize]
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.transitions.len() * 4 + self.accepting.len() + 256
    }

    /// Intersection.
    pub fn intersect(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        if self.is_empty_language() || other.is_empty_language() {
            return Ok(ByteDfa::empty());
        }
        self.product(other, max_states, |a, b| a && b)
    }

    /// Union.
    pub fn union(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        // An empty operand leaves the other as it is: no product to build.
        match (self.is_empty_language(), other.is_empty_language()) {
            (true, _) => Ok(other.clone()),
            (_, true) => Ok(self.clone()),
            _ => self.product(other, max_states, |a, b| a || b),
        }
    }

    /// `self` minus `other`.
    pub fn difference(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        if self.is_empty_language() {
            return Ok(ByteDfa::empty());
        }
        if other.is_empty_language() {
            return Ok(self.clone());
        }
        self.product(other, max_states, |a, b| a && !b)
    }

    /// Symmetric difference (exactly one of the two).
    pub fn symmetric_difference(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        self.product(other, max_states, |a, b| a != b)
    }

    /// Complement relative to all byte strings.
    pub fn complement(&self, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        ByteDfa::universe().difference(self, max_states)
    }

    /// The automaton with states `0..state_count` (state 0 dead), moving by `next`; trimmed and
    /// minimised.
    pub(crate) fn from_fn(
        state_count: usize,
        start: StateId,
        accepting: Vec<bool>,
        next: impl Fn(StateId, u8) -> StateId,
    ) -> ByteDfa {
        let mut column_of = [0u8; 256];
        for (b, column) in column_of.iter_mut().enumerate() {
            *column = b as u8;
        }
        let mut transitions = Vec::with_capacity(state_count * 256);
        for state in 0..state_count as StateId {
            transitions.extend((0..=255u8).map(|b| if state == DEAD { DEAD } else { next(state, b) }));
        }
        let raw =
            RawDfa { columns: 256, column_of: ColumnMap::Classes(Box::new(column_of)), transitions, accepting, start };
        raw.finish()
    }

    /// The automaton of all byte strings.
    pub fn universe() -> ByteDfa {
        ByteDfa {
            classes: [0; 256],
            class_count: 1,
            transitions: vec![DEAD, 1],
            accepting: vec![false, true],
            start: 1,
        }
    }

    /// The product automaton, accepting where `accept(a, b)`; trimmed and minimal. The dead
    /// state of an operand is kept as an ordinary state (it is what makes complement work).
    pub fn product(
        &self,
        other: &ByteDfa,
        max_states: usize,
        accept: impl Fn(bool, bool) -> bool,
    ) -> Result<ByteDfa, TooManyStates> {
        // Joint classes: bytes equal in both partitions.
        let mut joint: HashMap<(u8, u8), u8> = HashMap::new();
        let mut classes = [0u8; 256];
        let mut pairs: Vec<(u8, u8)> = Vec::new();
        for (b, class) in classes.iter_mut().enumerate() {
            let key = (self.classes[b], other.classes[b]);
            let next = joint.len() as u8;
            *class = *joint.entry(key).or_insert_with(|| {
                pairs.push(key);
                next
            });
        }
        let columns = pairs.len();
        // When the pair of dead operands cannot accept, state 0 is dead, and so is every pair
        // whose dead operand rules acceptance out (a dead side of an intersection, the left of a
        // difference): those pairs go to 0 at once instead of being explored.
        let zero_is_dead = !accept(false, false);
        let left_dead_kills = zero_is_dead && !accept(false, true);
        let right_dead_kills = zero_is_dead && !accept(true, false);
        let dead_pair = |(a, b): (StateId, StateId)| (left_dead_kills && a == DEAD) || (right_dead_kills && b == DEAD);
        let mut index: HashMap<(StateId, StateId), StateId> = HashMap::new();
        let mut order: Vec<(StateId, StateId)> = Vec::new();
        // State 0 is a placeholder dead row; the pair (DEAD, DEAD) maps onto it.
        index.insert((DEAD, DEAD), 0);
        order.push((DEAD, DEAD));
        let start = (self.start, other.start);
        let start_id = *index.entry(start).or_insert_with(|| {
            order.push(start);
            (order.len() - 1) as StateId
        });
        let mut transitions = Vec::new();
        let mut accepting = Vec::new();
        let mut cursor = 0;
        while cursor < order.len() {
            let (a, b) = order[cursor];
            cursor += 1;
            accepting.push(accept(self.is_accepting(a), other.is_accepting(b)));
            for &(ca, cb) in &pairs {
                let next = (self.next_class(a, ca), other.next_class(b, cb));
                let id = match index.get(&next) {
                    Some(&id) => id,
                    None if dead_pair(next) => 0,
                    None => {
                        order.push(next);
                        if order.len() > max_states {
                            return Err(TooManyStates { limit: max_states });
                        }
                        let id = (order.len() - 1) as StateId;
                        index.insert(next, id);
                        id
                    }
                };
                transitions.push(id);
            }
        }
        // (DEAD, DEAD) may accept under a complementing operator: then state 0 is ordinary.
        let raw = RawDfa {
            columns,
            column_of: ColumnMap::Classes(Box::new(classes)),
            transitions,
            accepting,
            start: start_id,
        };
        Ok(if zero_is_dead { raw.finish() } else { raw.finish_with_ordinary_zero() })
    }

    /// Every transition as `(from, byte range, to)` for live states, for embedding this DFA into
    /// a larger NFA.
    pub(crate) fn live_transitions(&self, state: StateId) -> Vec<(u8, u8, StateId)> {
        let mut out: Vec<(u8, u8, StateId)> = Vec::new();
        for b in 0..=255u8 {
            let to = self.next(state, b);
            if to == DEAD {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.2 == to && last.1 as u16 + 1 == b as u16 => last.1 = b,
                _ => out.push((b, b, to)),
            }
        }
        out
    }
}

/// One column per maximal byte range that no edge boundary of `nodes` cuts: the byte -> column
/// map and the column count.
fn edge_columns(nodes: &[EdgeNode]) -> ([u8; 256], usize) {
    let mut cut = [false; 257];
    for node in nodes {
        for &(lo, hi, _) in &node.edges {
            cut[lo as usize] = true;
            cut[hi as usize + 1] = true;
        }
    }
    let mut column_of = [0u8; 256];
    let mut column = 0u8;
    for (b, slot) in column_of.iter_mut().enumerate() {
        if b > 0 && cut[b] {
            column += 1;
        }
        *slot = column;
    }
    (column_of, column as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::minimise::{hopcroft, minimize_with, renumber, Blocks};
    use super::*;
    use crate::automata::Re;

    fn dfa(re: Re) -> ByteDfa {
        re.compile(100_000, 1_000_000).unwrap()
    }

    fn lit(s: &str) -> Re {
        Re::literal(s.as_bytes())
    }

    /// [`ByteDfa::from_minimal_deterministic`] through the dense table and [`renumber`].
    fn renumbered_densely(nodes: &[EdgeNode], start: u32) -> ByteDfa {
        let raw = ByteDfa::raw_from_deterministic(nodes, start, usize::MAX).unwrap().unwrap();
        let count = raw.accepting.len();
        renumber(&raw, &Blocks { block: (0..count as u32).collect(), count })
    }

    #[test]
    fn minimal_graphs_renumber_from_their_edges_as_from_their_table() {
        let languages = [
            Re::alt(vec![lit("apple"), lit("apply"), lit("ample"), lit("zebra"), lit("\\u00e9")]),
            crate::automata::json::string_literal("tab\tquote\"é"),
            Re::concat(vec![Re::byte_range(b'0', b'9'), Re::repeat(Re::byte_range(b'a', b'f'), 1, Some(4))]),
            Re::alt(vec![lit("x"), Re::concat(vec![Re::byte_range(0x80, 0xBF), lit("y")])]),
        ];
        for (k, re) in languages.into_iter().enumerate() {
            let dfa = dfa(re);
            // Its live states as a graph, numbered backwards and with edges out of byte order.
            let live = dfa.state_count() as u32 - 1;
            let node_of = |s: StateId| if s == DEAD { NO_NODE } else { live - s };
            let mut nodes = vec![EdgeNode::default(); live as usize];
            for s in 1..dfa.state_count() as StateId {
                let node = &mut nodes[node_of(s) as usize];
                node.accepting = dfa.is_accepting(s);
                let mut lo = 0usize;
                for b in 1..=256usize {
                    if b == 256 || dfa.next(s, b as u8) != dfa.next(s, lo as u8) {
                        node.edges.push((lo as u8, (b - 1) as u8, node_of(dfa.next(s, lo as u8))));
                        lo = b;
                    }
                }
                node.edges.reverse();
            }
            let sparse = ByteDfa::from_minimal_deterministic(&nodes, node_of(dfa.start()), usize::MAX).unwrap();
            assert!(sparse == renumbered_densely(&nodes, node_of(dfa.start())), "language {k}");
            assert!(sparse == dfa, "language {k}: renumbering a minimal automaton gives it back");
        }
    }

    #[test]
    fn infinite_languages_are_those_without_a_size() {
        let cases = [
            Re::literal(b"abc"),
            Re::repeat(Re::literal(b"ab"), 0, None),
            Re::alt(vec![Re::literal(b"x"), Re::repeat(Re::byte_range(b'0', b'9'), 1, Some(3))]),
            Re::concat(vec![Re::literal(b"a"), Re::repeat(Re::byte_range(b'a', b'c'), 2, None), Re::literal(b"z")]),
            Re::Nothing,
            Re::literal(b""),
        ];
        for re in cases {
            let dfa = dfa(re);
            assert_eq!(dfa.is_infinite(), dfa.language_size().is_none(), "{dfa:?}");
        }
    }

    #[test]
    fn minimisation_merges_equivalent_states() {
        // (a|b)c and ac|bc are the same language: 3 live states.
        let d = dfa(Re::alt(vec![Re::concat(vec![lit("a"), lit("c")]), Re::concat(vec![lit("b"), lit("c")])]));
        assert_eq!(d.state_count(), 4);
        assert!(d.matches(b"ac") && d.matches(b"bc") && !d.matches(b"a") && !d.matches(b"cc"));
        // Every byte other than a, b, c behaves alike.
        assert_eq!(d.class_count(), 3);
    }

    #[test]
    fn products_and_complement() {
        let ab_star = dfa(Re::repeat(Re::alt(vec![lit("a"), lit("b")]), 0, None));
        let has_two = dfa(Re::repeat(Re::byte_range(0, 255), 2, Some(2)));
        let inter = ab_star.intersect(&has_two, 1000).unwrap();
        for (w, want) in [("ab", true), ("ba", true), ("a", false), ("abc", false), ("ac", false)] {
            assert_eq!(inter.matches(w.as_bytes()), want, "{w}");
        }
        let diff = ab_star.difference(&has_two, 1000).unwrap();
        for (w, want) in [("", true), ("a", true), ("ab", false), ("aba", true), ("c", false)] {
            assert_eq!(diff.matches(w.as_bytes()), want, "{w}");
        }
        let comp = ab_star.complement(1000).unwrap();
        for (w, want) in [("", false), ("c", true), ("ab", false), ("abc", true)] {
            assert_eq!(comp.matches(w.as_bytes()), want, "{w}");
        }
        let sym = ab_star.symmetric_difference(&has_two, 1000).unwrap();
        assert!(sym.matches(b"a") && sym.matches(b"xy") && !sym.matches(b"ab"));
        assert!(ab_star.intersect(&ByteDfa::empty(), 10).unwrap().is_empty_language());
    }

    #[test]
    fn products_agree_with_their_operands_on_every_short_word() {
        // Operands that die early and late, so pairs with one dead side are met by each operator.
        let languages = [
            dfa(Re::concat(vec![lit("a"), Re::repeat(Re::byte_range(b'a', b'b'), 0, Some(3))])),
            dfa(Re::repeat(Re::alt(vec![lit("ab"), lit("b")]), 0, None)),
            dfa(Re::alt(vec![lit("ba"), lit("c"), lit("")])),
            dfa(Re::repeat(Re::byte_range(b'a', b'c'), 1, Some(2))),
        ];
        let mut words: Vec<Vec<u8>> = vec![Vec::new()];
        for length in 1..=5 {
            let previous: Vec<Vec<u8>> = words.iter().filter(|w| w.len() == length - 1).cloned().collect();
            for word in previous {
                words.extend(b"abcd".iter().map(|&b| [word.clone(), vec![b]].concat()));
            }
        }
        type Operator = fn(bool, bool) -> bool;
        let operators: [(&str, Operator); 4] =
            [("and", |a, b| a && b), ("or", |a, b| a || b), ("minus", |a, b| a && !b), ("xor", |a, b| a != b)];
        for x in &languages {
            for y in &languages {
                for (name, op) in operators {
                    let product = x.product(y, 1_000, op).unwrap();
                    for word in &words {
                        assert_eq!(product.matches(word), op(x.matches(word), y.matches(word)), "{name} {word:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn intersections_skip_pairs_with_a_dead_side() {
        // After the first byte one side is dead: only pairs of the live side remain, which an
        // intersection need not explore (a difference must, when its left side lives).
        let digits = Re::repeat(Re::byte_range(b'0', b'9'), 200, Some(200));
        let a = dfa(Re::concat(vec![lit("a"), digits.clone()]));
        let b = dfa(Re::concat(vec![lit("b"), digits]));
        assert!(a.intersect(&b, 10).unwrap().is_empty_language());
        assert!(a.difference(&b, 10).is_err());
        assert_eq!(a.difference(&b, 1_000).unwrap(), a);
    }

    #[test]
    fn trimmed_states_can_always_reach_acceptance() {
        let d = dfa(Re::concat(vec![lit("x"), Re::alt(vec![lit("yz"), lit("y")])]));
        // After "xq" there is no completion: the DFA must say DEAD at once.
        assert_eq!(d.run(d.start(), b"xq"), DEAD);
        assert_ne!(d.run(d.start(), b"xy"), DEAD);
        assert_eq!(d.run(d.start(), b"xyzz"), DEAD);
    }

    /// The Moore refinement `minimize` used before Hopcroft: one round per level of depth,
    /// each grouping live states by (own block, successor blocks). Kept as the reference.
    fn moore(raw: &RawDfa, live: &[bool]) -> Blocks {
        let n = raw.accepting.len();
        let initial = |s: usize| match (live[s], raw.accepting[s]) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => 2,
        };
        let mut block: Vec<u32> = (0..n).map(initial).collect();
        let mut count = 1 + [1, 2].iter().filter(|&&b| (0..n).any(|s| live[s] && block[s] == b)).count();
        loop {
            let mut signatures: HashMap<Vec<u32>, u32> = HashMap::new();
            let mut next = vec![0u32; n];
            for s in (0..n).filter(|&s| live[s]) {
                let mut signature = vec![block[s]];
                signature.extend(raw.row(s).iter().map(|&t| block[t as usize]));
                let fresh = signatures.len() as u32 + 1;
                next[s] = *signatures.entry(signature).or_insert(fresh);
            }
            block = next;
            if signatures.len() + 1 == count {
                return Blocks { block, count };
            }
            count = signatures.len() + 1;
        }
    }

    /// A seeded xorshift64 generator.
    struct XorShift(u64);

    impl XorShift {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % bound as u64) as usize
        }
    }

    /// A random table with `columns` columns over `base` states, doubled into two copies whose
    /// transitions pick either copy of their target, so that many states are equivalent.
    fn random_raw(rng: &mut XorShift) -> RawDfa {
        let base = 1 + rng.below(12);
        let columns = 1 + rng.below(4);
        let doubled = rng.below(2) == 1;
        let n = if doubled { 2 * base } else { base };
        let accepting_base: Vec<bool> = (0..base).map(|_| rng.below(3) == 0).collect();
        let rows_base: Vec<usize> = (0..base * columns).map(|_| rng.below(base)).collect();
        let mut transitions = Vec::with_capacity(n * columns);
        for s in 0..n {
            for c in 0..columns {
                let t = rows_base[(s % base) * columns + c];
                let copy = if doubled { rng.below(2) * base } else { 0 };
                transitions.push((t + copy) as StateId);
            }
        }
        let accepting = (0..n).map(|s| accepting_base[s % base]).collect();
        // Every column gets a byte, as in the tables that `from_nfa` and `product` build.
        let mut column_of = [0u8; 256];
        for (b, column) in column_of.iter_mut().enumerate() {
            *column = if b < columns { b as u8 } else { rng.below(columns) as u8 };
        }
        let start = rng.below(n) as StateId;
        RawDfa { columns, column_of: ColumnMap::Classes(Box::new(column_of)), transitions, accepting, start }
    }

    #[test]
    fn hopcroft_matches_moore_on_random_tables() {
        let mut merged = 0;
        for seed in 1..=3000u64 {
            let zero_is_dead = seed % 2 == 0;
            let draw = || random_raw(&mut XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            let states = draw().accepting.len();
            let reference = minimize_with(draw(), zero_is_dead, moore);
            let fast = minimize_with(draw(), zero_is_dead, hopcroft);
            let table = |d: &ByteDfa| (d.classes, d.class_count, d.transitions.clone(), d.accepting.clone(), d.start);
            assert_eq!(table(&fast), table(&reference), "seed {seed}");
            merged += usize::from(reference.state_count() < states);
        }
        // The doubled tables must actually exercise merging.
        assert!(merged > 1000, "{merged}");
    }

    #[test]
    fn equal_columns_by_hash_match_equal_columns_by_value() {
        for seed in 1..=500u64 {
            let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (rows, columns) = (rng.below(20), 1 + rng.below(40));
            // Few values and copied columns, so that many columns are equal.
            let mut table = vec![DEAD; rows * columns];
            for c in 0..columns {
                let copy = (c > 0 && rng.below(2) == 1).then(|| rng.below(c));
                for r in 0..rows {
                    table[r * columns + c] = match copy {
                        Some(from) => table[r * columns + from],
                        None => rng.below(3) as StateId,
                    };
                }
            }
            let fill = |r: usize, out: &mut [StateId]| out.copy_from_slice(&table[r * columns..(r + 1) * columns]);
            let by_value = minimise::equal_columns_by_value(rows, columns, fill);
            assert_eq!(minimise::equal_columns(rows, columns, fill), by_value, "seed {seed}");
        }
    }

    #[test]
    fn state_limit_is_reported() {
        let d = dfa(Re::repeat(Re::byte_range(0, 255), 0, Some(50)));
        assert!(d.intersect(&d, 10).is_err());
    }
}

#[cfg(test)]
mod finite_language_tests {
    use super::*;
    use crate::automata::Re;

    #[test]
    fn sizes_and_longest_matches_of_finite_languages() {
        let words = Re::alt(vec![Re::literal(b"a"), Re::literal(b"bc"), Re::literal(b"def"), Re::literal(b"de")]);
        let dfa = words.compile(1_000, 10_000).unwrap();
        assert_eq!((dfa.language_size(), dfa.longest_match()), (Some(4), Some(3)));
        let bytes =
            Re::concat(vec![Re::byte_range(b'0', b'9'), Re::byte_range(b'a', b'b')]).compile(1_000, 10_000).unwrap();
        assert_eq!(bytes.language_size(), Some(20));
        let star = Re::repeat(Re::literal(b"a"), 0, None).compile(1_000, 10_000).unwrap();
        assert_eq!((star.language_size(), star.longest_match()), (None, None));
        assert!(star.unbounded_from()[star.start() as usize]);
        assert_eq!((ByteDfa::empty().language_size(), ByteDfa::empty().longest_match()), (Some(0), Some(0)));
    }

    #[test]
    fn unbounded_until_accepted_looks_past_the_current_state() {
        // `ok!` or `o+!` (`!` closing, like a string's quote): after `o` the text may still
        // become `ok`, whose only completion is `!`; after `oo` it never can.
        let words = Re::concat(vec![
            Re::alt(vec![Re::literal(b"ok"), Re::repeat(Re::literal(b"o"), 1, None)]),
            Re::literal(b"!"),
        ]);
        let dfa = words.compile(1_000, 10_000).unwrap();
        let from = dfa.unbounded_from();
        let throughout = dfa.unbounded_until_accepted(&from);
        let (o, oo, ok) = (dfa.run(dfa.start(), b"o"), dfa.run(dfa.start(), b"oo"), dfa.run(dfa.start(), b"ok"));
        assert!(from[o as usize] && !throughout[o as usize]);
        assert!(from[oo as usize] && throughout[oo as usize]);
        assert!(!from[ok as usize] && !throughout[ok as usize]);
        assert!(!throughout[DEAD as usize]);
    }
}
