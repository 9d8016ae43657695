//! A minimal, trimmed byte DFA with byte classes, and the set operations over it.

use std::collections::HashMap;
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::NFA;
use regex_automata::util::primitives::StateID as RaStateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

/// A state of a [`ByteDfa`].
pub type StateId = u32;

/// The dead state: no continuation is accepted. Every [`ByteDfa`] has it at index 0.
pub const DEAD: StateId = 0;

/// A deterministic automaton over bytes, trimmed (every state but [`DEAD`] can still reach an
/// accepting state) and, once [`ByteDfa::minimize`]d, minimal. Bytes that behave alike in every
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
    pub limit: usize,
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
        let raw = RawDfa { columns, column_of: ColumnMap::Classes(Box::new(column_of)), transitions, accepting, start: 1 };
        Ok(raw.finish())
    }

    pub fn state_count(&self) -> usize {
        self.accepting.len()
    }

    pub fn class_count(&self) -> usize {
        self.class_count
    }

    /// Byte -> class map (classes are `0..class_count`).
    pub fn byte_classes(&self) -> &[u8; 256] {
        &self.classes
    }

    pub fn start(&self) -> StateId {
        self.start
    }

    /// True when the language is empty.
    pub fn is_empty_language(&self) -> bool {
        self.start == DEAD
    }

    #[inline]
    pub fn next(&self, state: StateId, byte: u8) -> StateId {
        self.transitions[state as usize * self.class_count + self.classes[byte as usize] as usize]
    }

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

    #[inline]
    pub fn is_accepting(&self, state: StateId) -> bool {
        self.accepting[state as usize]
    }

    /// Whole-text membership.
    pub fn matches(&self, text: &[u8]) -> bool {
        let s = self.run(self.start, text);
        s != DEAD && self.is_accepting(s)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.transitions.len() * 4 + self.accepting.len() + 256
    }

    /// Intersection.
    pub fn intersect(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        self.product(other, max_states, |a, b| a && b)
    }

    /// Union.
    pub fn union(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
        self.product(other, max_states, |a, b| a || b)
    }

    /// `self` minus `other`.
    pub fn difference(&self, other: &ByteDfa, max_states: usize) -> Result<ByteDfa, TooManyStates> {
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

    /// The automaton of all byte strings.
    pub fn universe() -> ByteDfa {
        ByteDfa { classes: [0; 256], class_count: 1, transitions: vec![DEAD, 1], accepting: vec![false, true], start: 1 }
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
        // (DEAD, DEAD) may accept under a complementing operator; `finish` trims it either way.
        let raw = RawDfa { columns, column_of: ColumnMap::Classes(Box::new(classes)), transitions, accepting, start: start_id };
        Ok(raw.finish_with_ordinary_zero())
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

enum ColumnMap {
    /// Byte -> column.
    Classes(Box<[u8; 256]>),
}

/// An untrimmed, unminimised table whose state 0 is dead (or, for products, an ordinary state).
struct RawDfa {
    columns: usize,
    column_of: ColumnMap,
    transitions: Vec<StateId>,
    accepting: Vec<bool>,
    start: StateId,
}

impl RawDfa {
    fn finish(self) -> ByteDfa {
        minimize(self, true)
    }

    fn finish_with_ordinary_zero(self) -> ByteDfa {
        minimize(self, false)
    }
}

/// Merges columns that agree in every state, so that refinement below works on a handful of
/// classes instead of 256 bytes.
fn merge_equal_columns(raw: RawDfa) -> RawDfa {
    let n = raw.accepting.len();
    let cols = raw.columns;
    let mut column_index: HashMap<Vec<StateId>, usize> = HashMap::new();
    let mut kept: Vec<usize> = Vec::new();
    let mut remap = vec![0usize; cols];
    for (c, slot) in remap.iter_mut().enumerate() {
        let column: Vec<StateId> = (0..n).map(|s| raw.transitions[s * cols + c]).collect();
        let next = kept.len();
        *slot = *column_index.entry(column).or_insert_with(|| {
            kept.push(c);
            next
        });
    }
    if kept.len() == cols {
        return raw;
    }
    let mut transitions = Vec::with_capacity(n * kept.len());
    for s in 0..n {
        transitions.extend(kept.iter().map(|&c| raw.transitions[s * cols + c]));
    }
    let mut classes = [0u8; 256];
    for (b, class) in classes.iter_mut().enumerate() {
        let ColumnMap::Classes(map) = &raw.column_of;
        let column = map[b] as usize;
        *class = remap[column] as u8;
    }
    RawDfa {
        columns: kept.len(),
        column_of: ColumnMap::Classes(Box::new(classes)),
        transitions,
        accepting: raw.accepting,
        start: raw.start,
    }
}

/// Trims states that cannot reach acceptance (or are unreachable), then merges equivalent states
/// by partition refinement, and recomputes byte classes. When `zero_is_dead` is false, state 0 is
/// an ordinary state (it may accept), so only co-reachability decides deadness.
fn minimize(raw: RawDfa, zero_is_dead: bool) -> ByteDfa {
    let raw = merge_equal_columns(raw);
    let n = raw.accepting.len();
    let cols = raw.columns;
    let succ = |s: usize, c: usize| raw.transitions[s * cols + c] as usize;
    // Reachable from start.
    let mut reachable = vec![false; n];
    let mut stack = vec![raw.start as usize];
    reachable[raw.start as usize] = true;
    while let Some(s) = stack.pop() {
        if zero_is_dead && s == 0 {
            continue;
        }
        for c in 0..cols {
            let t = succ(s, c);
            if !reachable[t] {
                reachable[t] = true;
                stack.push(t);
            }
        }
    }
    // Co-reachable: reverse edges from accepting states.
    let mut reverse: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (s, &is_reachable) in reachable.iter().enumerate() {
        if !is_reachable || (zero_is_dead && s == 0) {
            continue;
        }
        for c in 0..cols {
            let t = succ(s, c);
            reverse[t].push(s as u32);
        }
    }
    let mut live = vec![false; n];
    let mut stack: Vec<usize> = (0..n)
        .filter(|&s| reachable[s] && raw.accepting[s] && !(zero_is_dead && s == 0))
        .collect();
    for &s in &stack {
        live[s] = true;
    }
    while let Some(s) = stack.pop() {
        for &p in &reverse[s] {
            if !live[p as usize] {
                live[p as usize] = true;
                stack.push(p as usize);
            }
        }
    }
    if !live[raw.start as usize] {
        return ByteDfa::empty();
    }
    // Partition refinement (Moore). Block 0 is the dead block (all non-live states).
    let mut block: Vec<u32> = (0..n).map(|s| if !live[s] { 0 } else if raw.accepting[s] { 1 } else { 2 }).collect();
    let mut block_count = {
        let mut seen = [false; 3];
        for (s, &b) in block.iter().enumerate() {
            if live[s] {
                seen[b as usize] = true;
            }
        }
        1 + seen[1] as usize + seen[2] as usize
    };
    let live_states: Vec<usize> = (0..n).filter(|&s| live[s]).collect();
    loop {
        let mut signatures: HashMap<Vec<u32>, u32> = HashMap::with_capacity(live_states.len());
        let mut next_block = vec![0u32; n];
        let mut signature = Vec::with_capacity(cols + 1);
        for &s in &live_states {
            signature.clear();
            signature.push(block[s]);
            for c in 0..cols {
                let t = succ(s, c);
                signature.push(if live[t] { block[t] } else { 0 });
            }
            let fresh = signatures.len() as u32 + 1;
            next_block[s] = *signatures.entry(signature.clone()).or_insert(fresh);
        }
        let count = signatures.len() + 1;
        block = next_block;
        if count == block_count {
            break;
        }
        block_count = count;
    }
    // Renumber blocks in BFS order from the start so that state ids are deterministic.
    let representative = {
        let mut rep = vec![usize::MAX; block_count];
        for &s in &live_states {
            if rep[block[s] as usize] == usize::MAX {
                rep[block[s] as usize] = s;
            }
        }
        rep
    };
    let mut new_id = vec![u32::MAX; block_count];
    new_id[0] = DEAD;
    let mut order = vec![block[raw.start as usize]];
    new_id[block[raw.start as usize] as usize] = 1;
    let mut cursor = 0;
    while cursor < order.len() {
        let s = representative[order[cursor] as usize];
        cursor += 1;
        for c in 0..cols {
            let t = succ(s, c);
            if live[t] && new_id[block[t] as usize] == u32::MAX {
                new_id[block[t] as usize] = order.len() as u32 + 1;
                order.push(block[t]);
            }
        }
    }
    let states = order.len() + 1;
    // Byte classes of the minimal table: bytes whose columns agree in every state.
    let ColumnMap::Classes(column_of) = &raw.column_of;
    let byte_column = |b: usize| column_of[b] as usize;
    let target = |s: usize, b: usize| {
        let t = succ(s, byte_column(b));
        if live[t] {
            new_id[block[t] as usize]
        } else {
            DEAD
        }
    };
    let mut column_signature: HashMap<Vec<u32>, u8> = HashMap::new();
    let mut classes = [0u8; 256];
    let mut class_columns: Vec<usize> = Vec::new();
    for (b, class) in classes.iter_mut().enumerate() {
        let sig: Vec<u32> = order.iter().map(|&blk| target(representative[blk as usize], b)).collect();
        let next = column_signature.len() as u8;
        *class = *column_signature.entry(sig).or_insert_with(|| {
            class_columns.push(b);
            next
        });
    }
    let class_count = class_columns.len();
    let mut transitions = vec![DEAD; states * class_count];
    let mut accepting = vec![false; states];
    for (i, &blk) in order.iter().enumerate() {
        let s = representative[blk as usize];
        let id = i + 1;
        accepting[id] = raw.accepting[s];
        for (class, &b) in class_columns.iter().enumerate() {
            transitions[id * class_count + class] = target(s, b);
        }
    }
    ByteDfa { classes, class_count, transitions, accepting, start: 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automata::Re;

    fn dfa(re: Re) -> ByteDfa {
        re.compile(100_000, 1_000_000).unwrap()
    }

    fn lit(s: &str) -> Re {
        Re::literal(s.as_bytes())
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
    fn trimmed_states_can_always_reach_acceptance() {
        let d = dfa(Re::concat(vec![lit("x"), Re::alt(vec![lit("yz"), lit("y")])]));
        // After "xq" there is no completion: the DFA must say DEAD at once.
        assert_eq!(d.run(d.start(), b"xq"), DEAD);
        assert_ne!(d.run(d.start(), b"xy"), DEAD);
        assert_eq!(d.run(d.start(), b"xyzz"), DEAD);
    }

    #[test]
    fn state_limit_is_reported() {
        let d = dfa(Re::repeat(Re::byte_range(0, 255), 0, Some(50)));
        assert!(d.intersect(&d, 10).is_err());
    }
}
