//! From a language of decoded string values to the JSON string texts that spell them.
//!
//! A JSON text spells each code point raw (its UTF-8 bytes, unless it is `"`, `\` or a control
//! character), as a short escape (`\n`, `\/`, ...), as `\uXXXX` in either case (BMP, surrogates
//! excepted), or as a `\uD8xx\uDCxx` surrogate pair (beyond the BMP). Lone surrogates are not
//! admitted, as in [`super::json`].
//!
//! The construction is deterministic from the start: the automaton's body states are the decoded
//! DFA's states at code point boundaries, and every spelling of a code point leads from a state to
//! the state the decoded DFA reaches after that code point's UTF-8 bytes. The hexadecimal digits
//! of `\u` escapes form a 16-way trie; since hex digits and UTF-8 bytes split a code unit's bits
//! at nearly the same places, each subtrie is a function of a decoded state and a few leftover
//! bits, and is built once for all (memoised, and equal nodes hash-consed). A body state thus
//! costs a few hundred steps, not one per code unit, and so does each high surrogate range.
//!
//! A finite set of values ([`json_literal_strings`]: enums, consts, property names) takes a
//! shorter road: the trie of its values' spellings, with equal suffixes merged.

use foldhash::{HashMap, HashMapExt};

use super::{json, ByteDfa, EdgeNode as Node, StateId, DEAD, NO_NODE};

type NodeId = u32;

/// No node: the spelling leads nowhere.
const NONE: NodeId = NO_NODE;

/// The JSON string automaton would exceed the state limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLimitExceeded {
    /// The state limit that was exceeded.
    pub limit: usize,
}

impl std::fmt::Display for StateLimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the JSON string automaton exceeds the limit of {} states", self.limit)
    }
}

impl std::error::Error for StateLimitExceeded {}

/// Every JSON string literal (quotes included) whose decoded value is accepted by `decoded` (a
/// DFA over the UTF-8 bytes of the decoded value), in every spelling JSON allows. The result is
/// trimmed and minimal.
pub fn json_strings_decoding_to(decoded: &ByteDfa, max_states: usize) -> Result<ByteDfa, StateLimitExceeded> {
    if decoded.is_empty_language() {
        return Ok(ByteDfa::empty());
    }
    let mut graph = Graph::new(decoded, max_states);
    let open = graph.build()?;
    graph.into_dfa(open)
}

/// Every spelling of the JSON strings whose decoded values are `values`, quotes included: the
/// language of the alternation of [`super::json::string_literal`]s. Built as a trie of spellings,
/// deterministic from the start (the spellings of distinct characters are prefix-free, and the
/// two cases of a hex digit lead to one node), then minimised; no subset construction. Fails
/// when the trie has more than `max_states` nodes.
pub fn json_literal_strings(values: &[&str], max_states: usize) -> Result<ByteDfa, StateLimitExceeded> {
    if values.is_empty() {
        return Ok(ByteDfa::empty());
    }
    let mut trie = SpellingTrie { nodes: Vec::new(), limit: max_states, value_children: HashMap::new() };
    let start = trie.push()?;
    let close = trie.push()?;
    trie.nodes[close as usize].accepting = true;
    let root = trie.push()?;
    trie.nodes[start as usize].edges.push((b'"', b'"', root));
    for value in values {
        let mut at = root;
        for c in value.chars() {
            at = trie.value_child(at, c)?;
        }
        if trie.step(at, b'"').is_none() {
            trie.nodes[at as usize].edges.push((b'"', b'"', close));
        }
    }
    // Every node of the trie leads to a closing quote, so merging equal suffixes leaves it minimal.
    let (nodes, start) = merge_equal_suffixes(&trie.nodes, start);
    ByteDfa::from_minimal_deterministic(&nodes, start, max_states).map_err(|e| StateLimitExceeded { limit: e.limit })
}

/// The acyclic graph from `start` with equal nodes merged bottom-up (same acceptance, same edges
/// to merged nodes): the minimal automaton when every node reaches acceptance (states of an
/// acyclic automaton are equivalent exactly when this merges them), found in one pass.
fn merge_equal_suffixes(nodes: &[Node], start: NodeId) -> (Vec<Node>, NodeId) {
    let mut merged: Vec<Node> = Vec::new();
    let mut interned: HashMap<Node, NodeId> = HashMap::new();
    let mut merged_id = vec![NONE; nodes.len()];
    // Post-order: a node is merged once all its children are.
    let mut stack: Vec<(NodeId, usize)> = vec![(start, 0)];
    while let Some(&mut (node, ref mut next_edge)) = stack.last_mut() {
        let edges = &nodes[node as usize].edges;
        if let Some(&(_, _, child)) = edges.get(*next_edge) {
            *next_edge += 1;
            if merged_id[child as usize] == NONE {
                stack.push((child, 0));
            }
            continue;
        }
        stack.pop();
        let mut edges: Vec<(u8, u8, NodeId)> =
            edges.iter().map(|&(lo, hi, child)| (lo, hi, merged_id[child as usize])).collect();
        edges.sort_unstable();
        let node_content = Node { edges, accepting: nodes[node as usize].accepting };
        let next = merged.len() as NodeId;
        merged_id[node as usize] = *interned.entry(node_content.clone()).or_insert_with(|| {
            merged.push(node_content);
            next
        });
    }
    (merged, merged_id[start as usize])
}

/// One step of a spelling: a byte, or a hex digit in either case.
#[derive(Clone, Copy)]
enum SpellingUnit {
    Byte(u8),
    Hex(u8),
}

impl SpellingUnit {
    /// The bytes that spell this unit; the first one is how the trie looks it up.
    fn bytes(self) -> ([u8; 2], usize) {
        match self {
            SpellingUnit::Byte(b) => ([b, b], 1),
            SpellingUnit::Hex(digit @ 0..=9) => ([b'0' + digit, 0], 1),
            SpellingUnit::Hex(digit) => ([b'a' + digit - 10, b'A' + digit - 10], 2),
        }
    }
}

/// The trie of [`json_literal_strings`]: value nodes (a prefix of some decoded value read) joined
/// by the spellings of one character, through intermediate nodes shared between characters whose
/// spellings share a prefix (`\u00`, a UTF-8 lead byte).
struct SpellingTrie {
    nodes: Vec<Node>,
    limit: usize,
    /// (value node, character) -> the value node after it.
    value_children: HashMap<(NodeId, char), NodeId>,
}

impl SpellingTrie {
    fn push(&mut self) -> Result<NodeId, StateLimitExceeded> {
        if self.nodes.len() >= self.limit {
            return Err(StateLimitExceeded { limit: self.limit });
        }
        self.nodes.push(Node::default());
        Ok((self.nodes.len() - 1) as NodeId)
    }

    fn step(&self, node: NodeId, byte: u8) -> Option<NodeId> {
        self.nodes[node as usize].edges.iter().find(|&&(lo, _, _)| lo == byte).map(|&(_, _, to)| to)
    }

    fn link(&mut self, node: NodeId, unit: SpellingUnit, to: NodeId) {
        let (bytes, count) = unit.bytes();
        self.nodes[node as usize].edges.extend(bytes[..count].iter().map(|&b| (b, b, to)));
    }

    /// The value node after `c` from `node`, with every spelling of `c` leading there.
    fn value_child(&mut self, node: NodeId, c: char) -> Result<NodeId, StateLimitExceeded> {
        if let Some(&child) = self.value_children.get(&(node, c)) {
            return Ok(child);
        }
        let child = self.push()?;
        self.value_children.insert((node, c), child);
        let mut spellings: Vec<Vec<SpellingUnit>> = Vec::with_capacity(3);
        if c as u32 >= 0x20 && c != '"' && c != '\\' {
            let mut buf = [0u8; 4];
            spellings.push(c.encode_utf8(&mut buf).bytes().map(SpellingUnit::Byte).collect());
        }
        if let Some(short) = json::short_escape(c) {
            spellings.push(vec![SpellingUnit::Byte(b'\\'), SpellingUnit::Byte(short)]);
        }
        let mut units = [0u16; 2];
        let mut escape = Vec::with_capacity(12);
        for &unit in c.encode_utf16(&mut units).iter() {
            escape.extend([SpellingUnit::Byte(b'\\'), SpellingUnit::Byte(b'u')]);
            escape.extend([12, 8, 4, 0].map(|shift| SpellingUnit::Hex(((unit >> shift) & 0xF) as u8)));
        }
        spellings.push(escape);
        for spelling in spellings {
            let (last, prefix) = spelling.split_last().expect("a spelling has at least one byte");
            let mut at = node;
            for &unit in prefix {
                at = match self.step(at, unit.bytes().0[0]) {
                    Some(next) => next,
                    None => {
                        let next = self.push()?;
                        self.link(at, unit, next);
                        next
                    }
                };
            }
            self.link(at, *last, child);
        }
        Ok(child)
    }
}

/// A deterministic automaton under construction.
struct Graph<'d> {
    decoded: &'d ByteDfa,
    limit: usize,
    nodes: Vec<Node>,
    /// Acyclic nodes by content, so that equal subautomata are built once.
    interned: HashMap<Node, NodeId>,
    /// Decoded state at a code point boundary -> its body node (cyclic, so not interned), or
    /// [`NONE`] before it is needed.
    body: Vec<NodeId>,
    unfilled: Vec<StateId>,
    /// (decoded state, continuation bytes still to come, range of the next byte) -> node.
    continuations: HashMap<(StateId, u8, u8, u8), NodeId>,
    /// Memoised hex tries, by the decoded state they start from and the bits still free (see
    /// `unicode_escape`).
    three_byte_tails: HashMap<(StateId, u8), NodeId>,
    last_bytes: HashMap<(StateId, u8), NodeId>,
    high_surrogates: HashMap<[StateId; 5], [NodeId; 4]>,
    /// (state after a 4-byte sequence's first two bytes, which quarter of the third byte) ->
    /// the node after a high surrogate escape.
    pairs: HashMap<(StateId, u8), NodeId>,
    close: NodeId,
}

impl<'d> Graph<'d> {
    fn new(decoded: &'d ByteDfa, limit: usize) -> Graph<'d> {
        Graph {
            decoded,
            limit,
            nodes: Vec::new(),
            interned: HashMap::new(),
            body: vec![NONE; decoded.state_count()],
            unfilled: Vec::new(),
            continuations: HashMap::new(),
            three_byte_tails: HashMap::new(),
            last_bytes: HashMap::new(),
            high_surrogates: HashMap::new(),
            pairs: HashMap::new(),
            close: NONE,
        }
    }

    /// Builds every node; returns the start node (before the opening quote).
    fn build(&mut self) -> Result<NodeId, StateLimitExceeded> {
        self.close = self.add(Node { edges: Vec::new(), accepting: true })?;
        let first = self.body(self.decoded.start())?;
        let open = self.add(Node { edges: vec![(b'"', b'"', first)], accepting: false })?;
        while let Some(state) = self.unfilled.pop() {
            self.fill_body(state)?;
        }
        Ok(open)
    }

    fn push(&mut self, node: Node) -> Result<NodeId, StateLimitExceeded> {
        if self.nodes.len() >= self.limit {
            return Err(StateLimitExceeded { limit: self.limit });
        }
        self.nodes.push(node);
        Ok((self.nodes.len() - 1) as NodeId)
    }

    /// The node with this content, shared; [`NONE`] for a node that accepts nothing at all.
    fn add(&mut self, node: Node) -> Result<NodeId, StateLimitExceeded> {
        if node.edges.is_empty() && !node.accepting {
            return Ok(NONE);
        }
        if let Some(&id) = self.interned.get(&node) {
            return Ok(id);
        }
        let id = self.push(node.clone())?;
        self.interned.insert(node, id);
        Ok(id)
    }

    fn body(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        if state == DEAD {
            return Ok(NONE);
        }
        let known = self.body[state as usize];
        if known != NONE {
            return Ok(known);
        }
        let id = self.push(Node { edges: Vec::new(), accepting: false })?;
        self.body[state as usize] = id;
        self.unfilled.push(state);
        Ok(id)
    }

    fn fill_body(&mut self, state: StateId) -> Result<(), StateLimitExceeded> {
        let d = self.decoded;
        let mut out: Vec<(u8, NodeId)> = Vec::new();
        if d.is_accepting(state) {
            out.push((b'"', self.close));
        }
        out.push((b'\\', self.escape(state)?));
        // Raw spellings: the text's bytes are the decoded bytes, restricted to well-formed UTF-8
        // of characters JSON lets stand unescaped.
        for b in 0x20..=0x7Fu8 {
            if b != b'"' && b != b'\\' {
                out.push((b, self.body(d.next(state, b))?));
            }
        }
        for lead in 0xC2..=0xF4u8 {
            let after = d.next(state, lead);
            if after == DEAD {
                continue;
            }
            let (remaining, lo, hi) = match lead {
                0xC2..=0xDF => (1, 0x80, 0xBF),
                0xE0 => (2, 0xA0, 0xBF),
                0xED => (2, 0x80, 0x9F), // no surrogates
                0xE1..=0xEF => (2, 0x80, 0xBF),
                0xF0 => (3, 0x90, 0xBF),
                0xF4 => (3, 0x80, 0x8F), // nothing beyond U+10FFFF
                _ => (3, 0x80, 0xBF),
            };
            out.push((lead, self.continuation(after, remaining, lo, hi)?));
        }
        let id = self.body[state as usize];
        self.nodes[id as usize] = Node { edges: edges(out), accepting: false };
        Ok(())
    }

    /// The rest of a raw multi-byte character from decoded state `state`.
    fn continuation(&mut self, state: StateId, remaining: u8, lo: u8, hi: u8) -> Result<NodeId, StateLimitExceeded> {
        let key = (state, remaining, lo, hi);
        if let Some(&id) = self.continuations.get(&key) {
            return Ok(id);
        }
        let mut out = Vec::with_capacity((hi - lo) as usize + 1);
        for b in lo..=hi {
            let next = self.decoded.next(state, b);
            let target = if next == DEAD {
                NONE
            } else if remaining == 1 {
                self.body(next)?
            } else {
                self.continuation(next, remaining - 1, 0x80, 0xBF)?
            };
            out.push((b, target));
        }
        let id = self.add(Node { edges: edges(out), accepting: false })?;
        self.continuations.insert(key, id);
        Ok(id)
    }

    /// After a backslash in state `state`.
    fn escape(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        let d = self.decoded;
        let mut out = Vec::new();
        for (letter, value) in [
            (b'"', b'"'),
            (b'/', b'/'),
            (b'\\', b'\\'),
            (b'b', 0x08),
            (b'f', 0x0C),
            (b'n', b'\n'),
            (b'r', b'\r'),
            (b't', b'\t'),
        ] {
            out.push((letter, self.body(d.next(state, value))?));
        }
        out.push((b'u', self.unicode_escape(state)?));
        self.add(Node { edges: edges(out), accepting: false })
    }

    /// After `\u` in state `state`: the hex digits `n1 n2 n3 n4` of a UTF-16 code unit, a BMP
    /// code point or a high surrogate that a low surrogate escape must follow.
    ///
    /// The digits line up with UTF-8: a three-byte character is `1110 n1 | 10 n2 n3' | 10 n3'' n4`
    /// (`n3'`, `n3''`: the high and low two bits of `n3`), a two-byte one `110 n2 n3' | 10 n3'' n4`
    /// with `n1 = 0`. So the node after some digits is a function of the decoded state after the
    /// UTF-8 bytes they fix and of the bits left over, and memoising on that shares the tries
    /// between all decoded states.
    fn unicode_escape(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        let d = self.decoded;
        let mut children = [NONE; 16];
        children[0] = self.below_0x1000(state)?;
        for (n1, child) in children.iter_mut().enumerate().skip(1) {
            *child = match n1 {
                0xD => self.d_block(state)?,
                _ => {
                    let after_lead = d.next(state, 0xE0 | n1 as u8);
                    let mut next = [NONE; 16];
                    for (n2, slot) in next.iter_mut().enumerate() {
                        *slot = self.three_byte_tail(after_lead, n2 as u8)?;
                    }
                    self.hex_node(&next)?
                }
            };
        }
        self.hex_node(&children)
    }

    /// Units `0n2n3n4`: one, two or (from U+0800) three UTF-8 bytes.
    fn below_0x1000(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        let d = self.decoded;
        let mut children = [NONE; 16];
        for (n2, child) in children.iter_mut().enumerate() {
            let n2 = n2 as u8;
            *child = if n2 >= 8 {
                self.three_byte_tail(d.next(state, 0xE0), n2)?
            } else {
                let mut next = [NONE; 16];
                for (n3, slot) in next.iter_mut().enumerate() {
                    let n3 = n3 as u8;
                    *slot = if n2 == 0 && n3 < 8 {
                        // ASCII: one byte, `n3 n4`.
                        let mut leaf = [NONE; 16];
                        for (n4, target) in leaf.iter_mut().enumerate() {
                            *target = self.body(d.next(state, n3 << 4 | n4 as u8))?;
                        }
                        self.hex_node(&leaf)?
                    } else {
                        self.last_byte(d.next(state, 0xC0 | n2 << 2 | n3 >> 2), n3 & 3)?
                    };
                }
                self.hex_node(&next)?
            };
        }
        self.hex_node(&children)
    }

    /// Units `Dn2n3n4`: three-byte characters below U+D800, then high surrogates (a pair must
    /// follow), then low surrogates (not admitted alone).
    fn d_block(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        let d = self.decoded;
        let after_ed = d.next(state, 0xED);
        let mut children = [NONE; 16];
        for (n2, child) in children.iter_mut().enumerate().take(8) {
            *child = self.three_byte_tail(after_ed, n2 as u8)?;
        }
        // Code points beyond the BMP start with F0..F4: the states after those lead bytes are
        // all that the high surrogates' subtries depend on.
        let mut after_leads = [DEAD; 5];
        for (i, after) in after_leads.iter_mut().enumerate() {
            *after = d.next(state, 0xF0 + i as u8);
        }
        let high = match self.high_surrogates.get(&after_leads) {
            Some(&high) => high,
            None => {
                let mut high = [NONE; 4];
                for (i, slot) in high.iter_mut().enumerate() {
                    let mut next = [NONE; 16];
                    for (n3, branch) in next.iter_mut().enumerate() {
                        let mut leaf = [NONE; 16];
                        for (n4, target) in leaf.iter_mut().enumerate() {
                            let unit = 0xD800 + ((i as u32) << 8 | (n3 as u32) << 4 | n4 as u32);
                            *target = self.pair(&after_leads, unit)?;
                        }
                        *branch = self.hex_node(&leaf)?;
                    }
                    *slot = self.hex_node(&next)?;
                }
                self.high_surrogates.insert(after_leads, high);
                high
            }
        };
        children[8..12].copy_from_slice(&high);
        self.hex_node(&children)
    }

    /// The last two digits `n3 n4` of a three-byte character whose lead byte led to `after_lead`.
    fn three_byte_tail(&mut self, after_lead: StateId, n2: u8) -> Result<NodeId, StateLimitExceeded> {
        if after_lead == DEAD {
            return Ok(NONE);
        }
        if let Some(&id) = self.three_byte_tails.get(&(after_lead, n2)) {
            return Ok(id);
        }
        let mut next = [NONE; 16];
        for (n3, slot) in next.iter_mut().enumerate() {
            let n3 = n3 as u8;
            *slot = self.last_byte(self.decoded.next(after_lead, 0x80 | n2 << 2 | n3 >> 2), n3 & 3)?;
        }
        let id = self.hex_node(&next)?;
        self.three_byte_tails.insert((after_lead, n2), id);
        Ok(id)
    }

    /// The last digit `n4` of a character whose final UTF-8 byte is `10 bits n4`, from `state`.
    fn last_byte(&mut self, state: StateId, bits: u8) -> Result<NodeId, StateLimitExceeded> {
        if state == DEAD {
            return Ok(NONE);
        }
        if let Some(&id) = self.last_bytes.get(&(state, bits)) {
            return Ok(id);
        }
        let mut leaf = [NONE; 16];
        for (n4, target) in leaf.iter_mut().enumerate() {
            *target = self.body(self.decoded.next(state, 0x80 | bits << 4 | n4 as u8))?;
        }
        let id = self.hex_node(&leaf)?;
        self.last_bytes.insert((state, bits), id);
        Ok(id)
    }

    /// After the escape of high surrogate `high`: `\u` and a low surrogate. `after_leads` are the
    /// decoded states after the lead bytes F0..F4.
    fn pair(&mut self, after_leads: &[StateId; 5], high: u32) -> Result<NodeId, StateLimitExceeded> {
        // The high surrogate fixes the code point's first two UTF-8 bytes and the top two bits of
        // the third; the low surrogate `DC00 + s n3 n4` supplies the rest.
        let first = 0x10000 + ((high - 0xD800) << 10);
        let b1 = (first >> 18) as usize;
        let b2 = 0x80 | ((first >> 12) & 0x3F) as u8;
        let quarter = ((first >> 10) & 0x3) as u8;
        let after = self.decoded.next(after_leads[b1], b2);
        if after == DEAD {
            return Ok(NONE);
        }
        if let Some(&id) = self.pairs.get(&(after, quarter)) {
            return Ok(id);
        }
        let mut second = [NONE; 16];
        for s in 0..4u8 {
            let mut next = [NONE; 16];
            for (n3, slot) in next.iter_mut().enumerate() {
                let n3 = n3 as u8;
                let third = 0x80 | quarter << 4 | s << 2 | n3 >> 2;
                *slot = self.last_byte(self.decoded.next(after, third), n3 & 3)?;
            }
            second[0xC + s as usize] = self.hex_node(&next)?;
        }
        let second = self.hex_node(&second)?;
        let mut first_digit = [NONE; 16];
        first_digit[0xD] = second;
        let first_digit = self.hex_node(&first_digit)?;
        let u = self.add(Node { edges: edges(vec![(b'u', first_digit)]), accepting: false })?;
        let id = self.add(Node { edges: edges(vec![(b'\\', u)]), accepting: false })?;
        self.pairs.insert((after, quarter), id);
        Ok(id)
    }

    /// The node reading one hex digit (either case) to `children[digit]`.
    fn hex_node(&mut self, children: &[NodeId; 16]) -> Result<NodeId, StateLimitExceeded> {
        let mut out = Vec::with_capacity(22);
        for (digit, &child) in children.iter().enumerate() {
            out.extend(nibble_edges(digit as u8, child));
        }
        self.add(Node { edges: edges(out), accepting: false })
    }

    /// The minimal automaton of the graph, deterministic by construction.
    fn into_dfa(self, open: NodeId) -> Result<ByteDfa, StateLimitExceeded> {
        ByteDfa::from_deterministic(&self.nodes, open, self.limit).map_err(|e| StateLimitExceeded { limit: e.limit })
    }
}

/// The spellings of one hex digit (both cases for a-f) leading to `to`.
fn nibble_edges(digit: u8, to: NodeId) -> Vec<(u8, NodeId)> {
    match digit {
        _ if to == NONE => Vec::new(),
        0..=9 => vec![(b'0' + digit, to)],
        _ => vec![(b'a' + digit - 10, to), (b'A' + digit - 10, to)],
    }
}

/// Sorted byte ranges from single-byte edges, dropping [`NONE`] and merging neighbours.
fn edges(mut single: Vec<(u8, NodeId)>) -> Vec<(u8, u8, NodeId)> {
    single.retain(|&(_, to)| to != NONE);
    single.sort_unstable();
    let mut out: Vec<(u8, u8, NodeId)> = Vec::with_capacity(single.len());
    for (b, to) in single {
        match out.last_mut() {
            Some(last) if last.2 == to && last.1 as u16 + 1 == b as u16 => last.1 = b,
            _ => out.push((b, b, to)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy;

    use super::*;
    use crate::automata::ecma::pattern_language;
    use crate::automata::json::{self, string, string_literal, string_with_length, utf8_ranges};
    use crate::automata::Re;

    fn compile(re: &Re) -> ByteDfa {
        re.compile(1_000_000, 10_000_000).unwrap()
    }

    fn same_language(a: &ByteDfa, b: &ByteDfa) -> bool {
        a.symmetric_difference(b, 1_000_000).unwrap().is_empty_language()
    }

    fn any_scalar() -> Re {
        utf8_ranges(&[('\0', '\u{10FFFF}')])
    }

    /// Characters that exercise every spelling route: raw ASCII sharing bytes with hex digits,
    /// short escapes, control characters, UTF-8 of every length and surrogate pairs.
    const LITERAL_CHARS: &[char] = &[
        'a',
        'b',
        'A',
        'E',
        '0',
        'u',
        '"',
        '\\',
        '/',
        '\n',
        '\u{1}',
        '\u{1f}',
        'é',
        '\u{7ff}',
        '\u{800}',
        '\u{ffff}',
        '\u{10000}',
        '😀',
        '😁',
    ];

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 300,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(20261201),
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn literal_sets_build_the_minimal_automaton_of_their_spellings(
            values in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(LITERAL_CHARS), 0..5)
                    .prop_map(|chars| chars.into_iter().collect::<String>()),
                0..7,
            )
        ) {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            let direct = json_literal_strings(&values, 100_000).unwrap();
            let expected = if values.is_empty() {
                ByteDfa::empty()
            } else {
                compile(&Re::alt(values.iter().map(|v| string_literal(v)).collect()))
            };
            // Minimal automata are numbered canonically, so equal languages give equal tables.
            proptest::prop_assert_eq!(direct, expected);
        }
    }

    #[test]
    fn every_decoded_string_gives_every_json_string() {
        // The graph takes the texts of its universe of keys to be the shared string automaton.
        let every_key = pattern_language("", 10_000).unwrap();
        assert_eq!(json_strings_decoding_to(&every_key, 100_000).unwrap(), **json::string_automaton());
    }

    #[test]
    fn literal_sets_report_the_state_limit() {
        assert_eq!(json_literal_strings(&["abcdef"], 5).unwrap_err(), StateLimitExceeded { limit: 5 });
    }

    #[test]
    fn a_single_value_gives_exactly_its_literal_spellings() {
        for value in [
            "",
            "a",
            "a/é😀\"",
            "\\\u{1}\n\t\u{8}\u{c}\r",
            "\u{7f}\u{80}\u{9f}",
            "\u{7ff}\u{800}\u{d7ff}\u{e000}\u{ffff}",
            "\u{10000}\u{10ffff}\u{1f600}",
        ] {
            let decoded = compile(&Re::literal(value.as_bytes()));
            let json = json_strings_decoding_to(&decoded, 100_000).unwrap();
            assert!(same_language(&json, &compile(&string_literal(value))), "{value:?}");
        }
    }

    #[test]
    fn length_automata_built_directly_equal_the_unrolled_expression() {
        for (min, max) in [(0, Some(0)), (0, Some(5)), (2, Some(3)), (3, None), (0, None), (7, Some(7)), (1, Some(40))]
        {
            let direct = json::string_with_length_dfa(min, max, 100_000).unwrap();
            assert!(same_language(&direct, &compile(&string_with_length(min, max))), "{min} {max:?}");
        }
        assert!(json::string_with_length_dfa(0, Some(255), 100).is_err());
    }

    #[test]
    fn lengths_count_code_points_in_every_spelling() {
        let decoded = compile(&Re::repeat(any_scalar(), 2, Some(3)));
        let json = json_strings_decoding_to(&decoded, 100_000).unwrap();
        assert!(same_language(&json, &compile(&string_with_length(2, Some(3)))));
        let decoded = compile(&Re::repeat(any_scalar(), 0, None));
        let json = json_strings_decoding_to(&decoded, 100_000).unwrap();
        assert!(same_language(&json, &compile(&string())));
    }

    #[test]
    fn invalid_utf8_in_the_decoded_language_is_ignored() {
        // Every byte string: the JSON side still admits exactly the valid strings.
        let json = json_strings_decoding_to(&ByteDfa::universe(), 100_000).unwrap();
        assert!(same_language(&json, &compile(&string())));
        assert!(json_strings_decoding_to(&ByteDfa::empty(), 100).unwrap().is_empty_language());
    }

    #[test]
    fn escaped_spellings_follow_the_pattern() {
        let json = json_strings_decoding_to(&pattern_language("^a$", 10_000).unwrap(), 100_000).unwrap();
        for (text, want) in [
            (r#""a""#, true),
            (r#""\u0061""#, true),
            (r#""\u0041""#, false),
            (r#""b""#, false),
            (r#""aa""#, false),
            (r#""\u0061\u0061""#, false),
        ] {
            assert_eq!(json.matches(text.as_bytes()), want, "{text}");
        }
        let json = json_strings_decoding_to(&pattern_language("^\\s😀\\/$", 10_000).unwrap(), 100_000).unwrap();
        for (text, want) in [
            ("\"\\u2028\\ud83d\\ude00\\/\"", true),
            ("\"\\n😀/\"", true),
            ("\"\\t\\uD83D\\uDE00\\u002F\"", true),
            ("\"\\u0020\\ud83d\\ude01/\"", false),
            ("\"\\ud83d\\ude00/\"", false),
        ] {
            assert_eq!(json.matches(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn every_code_point_is_spelled_by_its_own_units() {
        let pattern = "^[ab\\u00e0-\\u0fff\\ud7f0-\\ue010\\u{10000}-\\u{1000f}\\u{10ff00}-\\u{10ffff}\\u{1f600}]$";
        let decoded = pattern_language(pattern, 10_000).unwrap();
        let json = json_strings_decoding_to(&decoded, 100_000).unwrap();
        let mut buf = [0u8; 4];
        let edges = [0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF];
        for c in (0..=0x10FFFFu32).step_by(7).chain(edges).filter_map(char::from_u32) {
            let want = decoded.matches(c.encode_utf8(&mut buf).as_bytes());
            let mut units = [0u16; 2];
            let escaped: String = c.encode_utf16(&mut units).iter().map(|u| format!("\\u{u:04x}")).collect();
            for text in [format!("\"{escaped}\""), format!("\"{}\"", escaped.to_uppercase().replace("\\U", "\\u"))] {
                assert_eq!(json.matches(text.as_bytes()), want, "{text}");
            }
            if c >= ' ' && c != '"' && c != '\\' {
                assert_eq!(json.matches(format!("\"{c}\"").as_bytes()), want, "{c:?}");
            }
        }
    }

    #[test]
    fn state_limit_is_reported() {
        let decoded = compile(&Re::repeat(any_scalar(), 0, Some(40)));
        assert_eq!(json_strings_decoding_to(&decoded, 50).unwrap_err(), StateLimitExceeded { limit: 50 });
    }
}

/// The decoded values of the JSON string texts `text` accepts, as UTF-8 bytes: the inverse of
/// [`json_strings_decoding_to`] for automata that accept every spelling of their strings (all
/// automata built here do), read through each value's canonical spelling (raw where JSON allows,
/// `\"`, `\\`, short control escapes, `\u00xx` otherwise).
pub fn decoded_strings(text: &ByteDfa) -> ByteDfa {
    const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
    if text.is_empty_language() {
        return ByteDfa::empty();
    }
    let spell = |state: StateId, b: u8| -> StateId {
        let short = match b {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            0x08 => Some(b'b'),
            0x0C => Some(b'f'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            _ => None,
        };
        match (short, b) {
            (Some(letter), _) => text.run(state, &[b'\\', letter]),
            (None, 0x00..=0x1F) => {
                text.run(state, &[b'\\', b'u', b'0', b'0', b'0' + (b >> 4), HEX_DIGITS[(b & 0xF) as usize]])
            }
            (None, _) => text.next(state, b),
        }
    };
    let start = text.next(text.start(), b'"');
    let accepting = (0..text.state_count() as StateId)
        .map(|s| {
            s != DEAD && {
                let closed = text.next(s, b'"');
                closed != DEAD && text.is_accepting(closed)
            }
        })
        .collect();
    ByteDfa::from_fn(text.state_count(), start, accepting, spell)
}

#[cfg(test)]
mod decoded_tests {
    use super::*;
    use crate::automata::{ecma, json};

    #[test]
    fn decoded_strings_inverts_the_escape_layer() {
        let literal = json::string_literal("a\"b\n\u{1}é").compile(10_000, 100_000).unwrap();
        let decoded = decoded_strings(&literal);
        assert!(decoded.matches("a\"b\n\u{1}é".as_bytes()));
        assert!(!decoded.matches(b"a\"b\n") && !decoded.matches(b""));
        let pattern = ecma::pattern_language("^[a-c\\n\"]{2,3}$", 10_000).unwrap();
        let round_trip = decoded_strings(&json_strings_decoding_to(&pattern, 10_000).unwrap());
        for s in ["ab", "a\nc", "\"\"\"", "a", "abcd", "xy", "a\\"] {
            assert_eq!(round_trip.matches(s.as_bytes()), pattern.matches(s.as_bytes()), "{s:?}");
        }
    }
}
