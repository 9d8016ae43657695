//! JSON lexical languages as [`Re`]s: whitespace, literals, numbers, and strings with every
//! spelling JSON allows (raw UTF-8, short escapes, `\uXXXX` in either case, surrogate pairs).
//!
//! Strings are Unicode: a lone surrogate escape (`"\ud800"`) is not admitted, since it decodes to
//! no Unicode scalar value and most JSON parsers reject it.

use regex_syntax::utf8::Utf8Sequences;

use super::{ByteDfa, EdgeNode, Re, StateId, TooManyStates};

/// Insignificant whitespace, any amount.
pub fn whitespace() -> Re {
    Re::repeat(whitespace_byte(), 0, None)
}

/// Every text whose runs of whitespace outside strings have at most `max` bytes (strings are
/// read as whole JSON strings, so whitespace inside them is content).
pub fn whitespace_runs_at_most(max: u32) -> Re {
    let mut outside: Vec<(u8, u8)> = Vec::new();
    let mut lo: u16 = 0;
    for b in 0..=256u16 {
        let excluded = b == 256 || matches!(b as u8, b'\t' | b'\n' | b'\r' | b' ' | b'"');
        if excluded {
            if lo < b {
                outside.push((lo as u8, (b - 1) as u8));
            }
            lo = b + 1;
        }
    }
    let run = Re::repeat(whitespace_byte(), 0, Some(max));
    let item = Re::alt(vec![Re::Bytes(outside), string()]);
    Re::concat(vec![Re::repeat(Re::concat(vec![run.clone(), item]), 0, None), run])
}

/// One byte of JSON's insignificant whitespace: tab, line feed, carriage return or space.
pub fn whitespace_byte() -> Re {
    Re::Bytes(vec![(b'\t', b'\n'), (b'\r', b'\r'), (b' ', b' ')])
}

/// The literal `null`.
pub fn null() -> Re {
    Re::literal(b"null")
}

/// `true` or `false`.
pub fn boolean() -> Re {
    Re::alt(vec![Re::literal(b"true"), Re::literal(b"false")])
}

fn digit() -> Re {
    Re::byte_range(b'0', b'9')
}

/// Any JSON number.
pub fn number() -> Re {
    let int =
        Re::alt(vec![Re::literal(b"0"), Re::concat(vec![Re::byte_range(b'1', b'9'), Re::repeat(digit(), 0, None)])]);
    let fraction = Re::optional(Re::concat(vec![Re::literal(b"."), Re::repeat(digit(), 1, None)]));
    let exponent = Re::optional(Re::concat(vec![
        Re::Bytes(vec![(b'E', b'E'), (b'e', b'e')]),
        Re::optional(Re::Bytes(vec![(b'+', b'+'), (b'-', b'-')])),
        Re::repeat(digit(), 1, None),
    ]));
    Re::concat(vec![Re::optional(Re::literal(b"-")), int, fraction, exponent])
}

/// UTF-8 encodings of the scalar values in the inclusive `ranges` (surrogates excluded).
pub fn utf8_ranges(ranges: &[(char, char)]) -> Re {
    let mut alternatives = Vec::new();
    for &(lo, hi) in ranges {
        for sequence in Utf8Sequences::new(lo, hi) {
            alternatives.push(Re::concat(sequence.as_slice().iter().map(|r| Re::byte_range(r.start, r.end)).collect()));
        }
    }
    Re::alt(alternatives)
}

fn hex_digit_ranges(values: std::ops::RangeInclusive<u8>) -> Vec<(u8, u8)> {
    // Case-insensitive hex digits whose value lies in `values`.
    let mut out: Vec<(u8, u8)> = Vec::new();
    for v in values {
        let spellings: Vec<u8> = match v {
            0..=9 => vec![b'0' + v],
            _ => vec![b'a' + v - 10, b'A' + v - 10],
        };
        for s in spellings {
            out.push((s, s));
        }
    }
    out.sort_unstable();
    merge_ranges(out)
}

fn merge_ranges(mut ranges: Vec<(u8, u8)>) -> Vec<(u8, u8)> {
    ranges.sort_unstable();
    let mut out: Vec<(u8, u8)> = Vec::new();
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo as u16 <= last.1 as u16 + 1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn hex(values: std::ops::RangeInclusive<u8>) -> Re {
    Re::Bytes(hex_digit_ranges(values))
}

/// `\u` escapes of any non-surrogate BMP code point, or a high+low surrogate pair.
fn unicode_escape() -> Re {
    let u = || Re::literal(b"\\u");
    let non_surrogate = Re::alt(vec![
        Re::concat(vec![hex(0..=12), hex(0..=15), hex(0..=15), hex(0..=15)]),
        Re::concat(vec![hex(13..=13), hex(0..=7), hex(0..=15), hex(0..=15)]),
        Re::concat(vec![hex(14..=15), hex(0..=15), hex(0..=15), hex(0..=15)]),
    ]);
    let high = Re::concat(vec![hex(13..=13), hex(8..=11), hex(0..=15), hex(0..=15)]);
    let low = Re::concat(vec![hex(13..=13), hex(12..=15), hex(0..=15), hex(0..=15)]);
    Re::alt(vec![Re::concat(vec![u(), non_surrogate]), Re::concat(vec![u(), high, u(), low])])
}

/// One character of a string body, in any spelling.
pub fn string_char() -> Re {
    let raw = utf8_ranges(&[(' ', '!'), ('#', '['), (']', '\u{D7FF}'), ('\u{E000}', '\u{10FFFF}')]);
    let short =
        Re::concat(vec![Re::literal(b"\\"), Re::Bytes(merge_ranges(b"\"\\/bfnrt".iter().map(|&b| (b, b)).collect()))]);
    Re::alt(vec![raw, short, unicode_escape()])
}

/// Any JSON string.
pub fn string() -> Re {
    string_with_length(0, None)
}

/// The automaton of every JSON string, built once per process: structured schemas share it, so
/// mask rows inside unconstrained strings and keys can be shared per vocabulary.
pub fn string_automaton() -> &'static std::sync::Arc<super::ByteDfa> {
    static STRING: std::sync::OnceLock<std::sync::Arc<super::ByteDfa>> = std::sync::OnceLock::new();
    STRING.get_or_init(|| std::sync::Arc::new(string().compile(10_000, 100_000).expect("the string language is small")))
}

/// Strings whose decoded value has `min..=max` code points.
pub fn string_with_length(min: u32, max: Option<u32>) -> Re {
    Re::concat(vec![Re::literal(b"\""), Re::repeat(string_char(), min, max), Re::literal(b"\"")])
}

/// [`string_with_length`] as an automaton, built directly: a count of the code points read so
/// far beside one character's automaton (every spelling of one character is a word no other
/// spelling extends, so a character ends where its automaton accepts). Unrolling the expression
/// determinises some 30,000 nondeterministic states for `maxLength: 253` (tens of
/// milliseconds); this builds the minimal automaton's few thousand states directly.
pub fn string_with_length_dfa(min: u32, max: Option<u32>, max_states: usize) -> Result<ByteDfa, TooManyStates> {
    static CHAR: std::sync::OnceLock<ByteDfa> = std::sync::OnceLock::new();
    let char = CHAR.get_or_init(|| string_char().compile(1_000, 10_000).expect("one character's automaton is small"));
    // The counts kept apart: up to the maximum, or up to the minimum when any longer string
    // is admitted (the last count then loops).
    let top = max.unwrap_or(min);
    let inner: Vec<StateId> =
        (1..char.state_count() as StateId).filter(|&c| c != char.start() && !char.is_accepting(c)).collect();
    let slot: std::collections::HashMap<StateId, usize> = inner.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    // Node layout: 0 the opening quote, 1 the closed string, then per count k the node between
    // characters and one node per inner state of the character automaton.
    let per_count = 1 + inner.len();
    let nodes_needed = 2 + (top as usize + 1) * per_count;
    if nodes_needed > max_states {
        return Err(TooManyStates { limit: max_states });
    }
    let between = |k: u32| 2 + k as usize * per_count;
    let after_char = |k: u32| match k < top {
        true => Some(k + 1),
        false => max.is_none().then_some(k),
    };
    let mut nodes = vec![EdgeNode::default(); nodes_needed];
    nodes[0].edges.push((b'"', b'"', between(0) as u32));
    nodes[1].accepting = true;
    for k in 0..=top {
        let edges_from = |state: StateId| -> Vec<(u8, u8, u32)> {
            char.live_transitions(state)
                .into_iter()
                .filter_map(|(lo, hi, to)| {
                    debug_assert!(to != char.start(), "no spelling of a character runs into another");
                    let node = match char.is_accepting(to) {
                        true => between(after_char(k)?),
                        false => between(k) + 1 + slot[&to],
                    };
                    Some((lo, hi, node as u32))
                })
                .collect()
        };
        let mut at_between = edges_from(char.start());
        if k >= min {
            at_between.push((b'"', b'"', 1));
            at_between.sort_unstable();
        }
        nodes[between(k)].edges = at_between;
        for (i, &state) in inner.iter().enumerate() {
            nodes[between(k) + 1 + i].edges = edges_from(state);
        }
    }
    ByteDfa::from_deterministic(&nodes, 0, max_states)
}

/// Every spelling of one character inside a JSON string.
pub fn char_spellings(c: char) -> Re {
    let mut alternatives = Vec::new();
    let code = c as u32;
    if code >= 0x20 && c != '"' && c != '\\' {
        let mut buf = [0u8; 4];
        alternatives.push(Re::literal(c.encode_utf8(&mut buf).as_bytes()));
    }
    if let Some(s) = short_escape(c) {
        alternatives.push(Re::literal(&[b'\\', s]));
    }
    let mut units = [0u16; 2];
    let mut escape = Vec::new();
    for unit in c.encode_utf16(&mut units) {
        escape.push(Re::literal(b"\\u"));
        for shift in [12, 8, 4, 0] {
            let nibble = ((*unit >> shift) & 0xF) as u8;
            escape.push(hex(nibble..=nibble));
        }
    }
    alternatives.push(Re::concat(escape));
    Re::alt(alternatives)
}

/// The letter of `c`'s two-character escape (`\n`, `\/`, ...), if it has one.
pub(crate) fn short_escape(c: char) -> Option<u8> {
    Some(match c {
        '"' => b'"',
        '\\' => b'\\',
        '/' => b'/',
        '\u{8}' => b'b',
        '\u{c}' => b'f',
        '\n' => b'n',
        '\r' => b'r',
        '\t' => b't',
        _ => return None,
    })
}

/// A lower bound on the NFA states of [`string_literal`]: besides its raw bytes every character
/// has a six-byte `\uXXXX` spelling. Lets callers refuse a set of literals beyond the NFA limit
/// before building it.
pub fn string_literal_min_states(value: &str) -> usize {
    2 + 6 * value.chars().count()
}

/// Every spelling of the JSON string whose decoded value is `value`, quotes included.
pub fn string_literal(value: &str) -> Re {
    let mut parts = vec![Re::literal(b"\"")];
    parts.extend(value.chars().map(char_spellings));
    parts.push(Re::literal(b"\""));
    Re::concat(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(re: &Re, text: &str) -> bool {
        re.compile(100_000, 1_000_000).unwrap().matches(text.as_bytes())
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        let re = number();
        for ok in ["0", "-0", "12", "1.5", "1e5", "1E+5", "-0.0e-0", "10.25E10"] {
            assert!(matches(&re, ok), "{ok}");
        }
        for bad in ["01", "+1", ".5", "1.", "1e", "--1", "0x1", "1.e5", ""] {
            assert!(!matches(&re, bad), "{bad}");
        }
    }

    #[test]
    fn strings_admit_every_spelling_and_count_code_points() {
        let re = string();
        for ok in [r#""""#, r#""a\"b""#, r#""\u00e9\u00E9""#, "\"é😀\"", r#""\ud83d\ude00""#, r#""\/""#] {
            assert!(matches(&re, ok), "{ok}");
        }
        for bad in ["\"\n\"", r#""\x""#, r#""\ud800""#, r#""\u12""#, "\"a", "\"\u{1}\""] {
            assert!(!matches(&re, bad), "{bad:?}");
        }
        let two = string_with_length(2, Some(2));
        assert!(matches(&two, r#""ab""#));
        assert!(matches(&two, r#""\u00e9😀""#));
        assert!(matches(&two, r#""\ud83d\ude00\n""#));
        assert!(!matches(&two, r#""\ud83d\ude00""#));
        assert!(!matches(&two, r#""abc""#));
    }

    #[test]
    fn literals_accept_escaped_spellings() {
        let re = string_literal("a/é😀\"");
        for ok in [r#""a/é😀\"""#, r#""\u0061\/\u00E9\uD83D\uDE00\u0022""#, r#""\u0061\u002f\u00e9😀\"""#] {
            assert!(matches(&re, ok), "{ok}");
        }
        assert!(!matches(&re, r#""a/é😀""#));
        assert!(!matches(&re, r#""b/é😀\"""#));
    }
}
