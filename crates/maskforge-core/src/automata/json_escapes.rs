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
//! of `\u` escapes form a 16-way trie per state; equal subtries are shared (hash-consed), so a
//! state costs a pass over the 65,536 BMP code units, not a node per code unit. Code points
//! beyond the BMP are handled per high surrogate, and their low surrogates' tries are shared by
//! the decoded state their first two UTF-8 bytes lead to.

use std::collections::HashMap;

use regex_automata::nfa::thompson::{Builder, Transition};
use regex_automata::util::primitives::StateID;

use super::{ByteDfa, StateId, DEAD};

/// The JSON string automaton would exceed the state limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLimitExceeded {
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

type NodeId = u32;

/// No node: the spelling leads nowhere.
const NONE: NodeId = u32::MAX;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Node {
    /// Sorted, disjoint byte ranges.
    edges: Vec<(u8, u8, NodeId)>,
    accepting: bool,
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
    /// (state after a 4-byte sequence's first two bytes, which quarter of the third byte) ->
    /// the node after a high surrogate escape.
    pairs: HashMap<(StateId, u8), NodeId>,
    /// Hex tries whose every leaf is the same node, by (leaf count, leaf).
    uniform: HashMap<(usize, NodeId), NodeId>,
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
            pairs: HashMap::new(),
            uniform: HashMap::new(),
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

    /// After `\u` in state `state`: four hex digits of a BMP code point, or of a high surrogate
    /// followed by a low surrogate escape.
    fn unicode_escape(&mut self, state: StateId) -> Result<NodeId, StateLimitExceeded> {
        let mut targets = vec![NONE; 0x10000];
        let mut buf = [0u8; 4];
        for (unit, target) in targets.iter_mut().enumerate() {
            let unit = unit as u32;
            *target = match unit {
                0xD800..=0xDBFF => self.pair(state, unit)?,
                0xDC00..=0xDFFF => NONE,
                _ => {
                    let c = char::from_u32(unit).expect("a non-surrogate BMP code point");
                    self.body(self.decoded.run(state, c.encode_utf8(&mut buf).as_bytes()))?
                }
            };
        }
        self.hex_trie(&targets)
    }

    /// After the escape of high surrogate `high` in state `state`: `\u` and a low surrogate.
    fn pair(&mut self, state: StateId, high: u32) -> Result<NodeId, StateLimitExceeded> {
        // The high surrogate fixes the code point's first two UTF-8 bytes and the top two bits of
        // the third; the low surrogate's 10 bits are the rest.
        let first = 0x10000 + ((high - 0xD800) << 10);
        let b1 = 0xF0 | (first >> 18) as u8;
        let b2 = 0x80 | ((first >> 12) & 0x3F) as u8;
        let quarter = ((first >> 10) & 0x3) as u8;
        let after = self.decoded.run(state, &[b1, b2]);
        if after == DEAD {
            return Ok(NONE);
        }
        if let Some(&id) = self.pairs.get(&(after, quarter)) {
            return Ok(id);
        }
        let mut lows = vec![NONE; 0x400];
        for (k, target) in lows.iter_mut().enumerate() {
            let b3 = 0x80 | (quarter << 4) | (k >> 6) as u8;
            let b4 = 0x80 | (k & 0x3F) as u8;
            *target = self.body(self.decoded.run(after, &[b3, b4]))?;
        }
        // Low surrogates DC00-DFFF: first digit D, second C-F, then two free digits.
        let mut second = Vec::new();
        for (s, block) in lows.chunks(0x100).enumerate() {
            let rest = self.hex_trie(block)?;
            second.extend(nibble_edges(0xC + s as u8, rest));
        }
        let second = self.add(Node { edges: edges(second), accepting: false })?;
        let first_digit = self.add(Node { edges: edges(nibble_edges(0xD, second)), accepting: false })?;
        let u = self.add(Node { edges: edges(vec![(b'u', first_digit)]), accepting: false })?;
        let id = self.add(Node { edges: edges(vec![(b'\\', u)]), accepting: false })?;
        self.pairs.insert((after, quarter), id);
        Ok(id)
    }

    /// The trie reading `log16(targets.len())` hex digits (either case) to `targets[value]`.
    fn hex_trie(&mut self, targets: &[NodeId]) -> Result<NodeId, StateLimitExceeded> {
        if targets.len() == 1 {
            return Ok(targets[0]);
        }
        let first = targets[0];
        let uniform = targets.iter().all(|&t| t == first);
        if uniform {
            if first == NONE {
                return Ok(NONE);
            }
            if let Some(&id) = self.uniform.get(&(targets.len(), first)) {
                return Ok(id);
            }
        }
        let chunk = targets.len() / 16;
        let mut out = Vec::new();
        for (digit, block) in targets.chunks(chunk).enumerate() {
            let child = self.hex_trie(block)?;
            out.extend(nibble_edges(digit as u8, child));
        }
        let id = self.add(Node { edges: edges(out), accepting: false })?;
        if uniform {
            self.uniform.insert((targets.len(), first), id);
        }
        Ok(id)
    }

    /// Emits the graph as a Thompson NFA (deterministic already) and extracts the minimal DFA.
    fn into_dfa(self, open: NodeId) -> Result<ByteDfa, StateLimitExceeded> {
        if open == NONE {
            return Ok(ByteDfa::empty());
        }
        let limit = self.limit;
        let err = |_| StateLimitExceeded { limit };
        let mut builder = Builder::new();
        builder.start_pattern().map_err(err)?;
        let mut heads: Vec<StateID> = Vec::with_capacity(self.nodes.len());
        for _ in &self.nodes {
            heads.push(builder.add_union(vec![]).map_err(err)?);
        }
        let matched = builder.add_match().map_err(err)?;
        for (node, &head) in self.nodes.iter().zip(&heads) {
            if !node.edges.is_empty() {
                let transitions = node
                    .edges
                    .iter()
                    .map(|&(start, end, to)| Transition { start, end, next: heads[to as usize] })
                    .collect();
                let sparse = builder.add_sparse(transitions).map_err(err)?;
                builder.patch(head, sparse).map_err(err)?;
            }
            if node.accepting {
                builder.patch(head, matched).map_err(err)?;
            }
        }
        let start = heads[open as usize];
        builder.finish_pattern(start).map_err(err)?;
        let nfa = builder.build(start, start).map_err(err)?;
        ByteDfa::from_nfa(&nfa, limit).map_err(|e| StateLimitExceeded { limit: e.limit })
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
    use super::*;
    use crate::automata::ecma::pattern_language;
    use crate::automata::json::{string, string_literal, string_with_length, utf8_ranges};
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
    fn state_limit_is_reported() {
        let decoded = compile(&Re::repeat(any_scalar(), 0, Some(40)));
        assert_eq!(json_strings_decoding_to(&decoded, 50).unwrap_err(), StateLimitExceeded { limit: 50 });
    }
}
