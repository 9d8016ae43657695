//! Incremental decoding of JSON string text, for object keys: the key's value decides which
//! property schema applies and whether it repeats an earlier key.
//!
//! It knows only JSON string syntax: no schema, graph or automaton.

/// Decodes the text after a string's opening quote, byte by byte.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct StringDecoder {
    value: String,
    pending: Pending,
}

impl Clone for StringDecoder {
    /// A copy with room to grow: copies are made to read on (a mask's walk copies the key at
    /// each trie node and feeds it a byte), and an exact-size copy would reallocate at once.
    fn clone(&self) -> Self {
        let mut value = String::with_capacity(self.value.len() + 16);
        value.push_str(&self.value);
        StringDecoder { value, pending: self.pending }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
enum Pending {
    #[default]
    None,
    Backslash,
    /// `\u` and `digits` hex digits of `value`; `high` when this escape must be a low surrogate.
    Unicode {
        value: u32,
        digits: u8,
        high: Option<u16>,
    },
    /// A high surrogate escape, waiting for `\`.
    AfterHigh {
        high: u16,
    },
    /// A high surrogate escape and `\`, waiting for `u`.
    AfterHighBackslash {
        high: u16,
    },
    /// Raw UTF-8: `len` bytes of a `need`-byte sequence.
    Utf8 {
        bytes: [u8; 4],
        len: u8,
        need: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeStep {
    Continue,
    /// The closing quote: the value is complete.
    Closed,
    Invalid,
}

fn hex_value(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

fn utf8_need(lead: u8) -> Option<u8> {
    match lead {
        0xC2..=0xDF => Some(2),
        0xE0..=0xEF => Some(3),
        0xF0..=0xF4 => Some(4),
        _ => None,
    }
}

/// The bytes that may follow `prefix` inside a valid UTF-8 sequence.
fn utf8_continuations(prefix: &[u8]) -> (u8, u8) {
    match (prefix.len(), prefix[0]) {
        (1, 0xE0) => (0xA0, 0xBF),
        (1, 0xED) => (0x80, 0x9F),
        (1, 0xF0) => (0x90, 0xBF),
        (1, 0xF4) => (0x80, 0x8F),
        _ => (0x80, 0xBF),
    }
}

/// Whether `b` may follow `prefix` inside a valid UTF-8 sequence.
fn utf8_continues(prefix: &[u8], b: u8) -> bool {
    let (lo, hi) = utf8_continuations(prefix);
    (lo..=hi).contains(&b)
}

/// The code point of a surrogate pair.
fn pair(high: u32, low: u32) -> u32 {
    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
}

impl StringDecoder {
    /// The decoded value so far (complete characters only).
    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Forgets the decoded value (what is pending stays), for readers that take the code points
    /// as they come and need not clone them along.
    pub(crate) fn clear_value(&mut self) {
        self.value.clear();
    }

    pub(crate) fn has_pending(&self) -> bool {
        self.pending != Pending::None
    }

    /// The bytes of a raw UTF-8 character begun and not finished (empty when nothing is
    /// pending); `None` inside an escape. The decoded value then goes on with these bytes.
    pub(crate) fn raw_pending(&self) -> Option<&[u8]> {
        match &self.pending {
            Pending::None => Some(&[]),
            Pending::Utf8 { bytes, len, .. } => Some(&bytes[..*len as usize]),
            _ => None,
        }
    }

    pub(crate) fn feed(&mut self, b: u8) -> DecodeStep {
        let step = match self.pending {
            Pending::None => match b {
                b'"' => return DecodeStep::Closed,
                b'\\' => {
                    self.pending = Pending::Backslash;
                    DecodeStep::Continue
                }
                0x00..=0x1F => DecodeStep::Invalid,
                0x20..=0x7F => {
                    self.value.push(b as char);
                    DecodeStep::Continue
                }
                _ => match utf8_need(b) {
                    Some(need) => {
                        self.pending = Pending::Utf8 { bytes: [b, 0, 0, 0], len: 1, need };
                        DecodeStep::Continue
                    }
                    None => DecodeStep::Invalid,
                },
            },
            Pending::Backslash => {
                let decoded = match b {
                    b'"' => Some('"'),
                    b'\\' => Some('\\'),
                    b'/' => Some('/'),
                    b'b' => Some('\u{8}'),
                    b'f' => Some('\u{c}'),
                    b'n' => Some('\n'),
                    b'r' => Some('\r'),
                    b't' => Some('\t'),
                    _ => None,
                };
                match (decoded, b) {
                    (Some(c), _) => {
                        self.value.push(c);
                        self.pending = Pending::None;
                        DecodeStep::Continue
                    }
                    (None, b'u') => {
                        self.pending = Pending::Unicode { value: 0, digits: 0, high: None };
                        DecodeStep::Continue
                    }
                    _ => DecodeStep::Invalid,
                }
            }
            Pending::Unicode { value, digits, high } => {
                let Some(d) = hex_value(b) else { return DecodeStep::Invalid };
                let value = value << 4 | d;
                if digits < 3 {
                    self.pending = Pending::Unicode { value, digits: digits + 1, high };
                    return DecodeStep::Continue;
                }
                match (high, value) {
                    (None, 0xD800..=0xDBFF) => {
                        self.pending = Pending::AfterHigh { high: value as u16 };
                        DecodeStep::Continue
                    }
                    (None, 0xDC00..=0xDFFF) => DecodeStep::Invalid,
                    (None, _) => {
                        self.value.push(char::from_u32(value).expect("a non-surrogate BMP code point"));
                        self.pending = Pending::None;
                        DecodeStep::Continue
                    }
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let c = 0x10000 + ((high as u32 - 0xD800) << 10) + (value - 0xDC00);
                        self.value.push(char::from_u32(c).expect("a surrogate pair decodes to a scalar value"));
                        self.pending = Pending::None;
                        DecodeStep::Continue
                    }
                    (Some(_), _) => DecodeStep::Invalid,
                }
            }
            Pending::AfterHigh { high } => {
                if b != b'\\' {
                    return DecodeStep::Invalid;
                }
                self.pending = Pending::AfterHighBackslash { high };
                DecodeStep::Continue
            }
            Pending::AfterHighBackslash { high } => {
                if b != b'u' {
                    return DecodeStep::Invalid;
                }
                self.pending = Pending::Unicode { value: 0, digits: 0, high: Some(high) };
                DecodeStep::Continue
            }
            Pending::Utf8 { mut bytes, len, need } => {
                if !utf8_continues(&bytes[..len as usize], b) {
                    return DecodeStep::Invalid;
                }
                bytes[len as usize] = b;
                if len + 1 == need {
                    let s = std::str::from_utf8(&bytes[..need as usize]).expect("validated UTF-8");
                    self.value.push_str(s);
                    self.pending = Pending::None;
                } else {
                    self.pending = Pending::Utf8 { bytes, len: len + 1, need };
                }
                DecodeStep::Continue
            }
        };
        step
    }

    /// The code points the escape or UTF-8 sequence in progress can still become, as ranges of
    /// scalar values (none when nothing is pending).
    pub(crate) fn pending_ranges(&self) -> Vec<(u32, u32)> {
        // The code units a `\uXXXX` escape with `digits` of them read can still spell.
        let units = |value: u32, digits: u8| {
            let shift = 4 * (4 - u32::from(digits));
            (value << shift, ((value + 1) << shift) - 1)
        };
        let within =
            |(lo, hi): (u32, u32), (a, b): (u32, u32)| (lo.max(a) <= hi.min(b)).then(|| (lo.max(a), hi.min(b)));
        match self.pending {
            Pending::None => Vec::new(),
            Pending::Backslash => vec![(0, 0xD7FF), (0xE000, 0x10FFFF)],
            Pending::Unicode { value, digits, high: None } => {
                let range = units(value, digits);
                let mut ranges: Vec<(u32, u32)> =
                    [(0, 0xD7FF), (0xE000, 0xFFFF)].into_iter().filter_map(|bmp| within(range, bmp)).collect();
                // A high surrogate: any code point of the pairs it starts.
                ranges.extend(within(range, (0xD800, 0xDBFF)).map(|(lo, hi)| (pair(lo, 0xDC00), pair(hi, 0xDFFF))));
                ranges
            }
            Pending::Unicode { value, digits, high: Some(high) } => within(units(value, digits), (0xDC00, 0xDFFF))
                .map(|(lo, hi)| (pair(u32::from(high), lo), pair(u32::from(high), hi)))
                .into_iter()
                .collect(),
            Pending::AfterHigh { high } | Pending::AfterHighBackslash { high } => {
                vec![(pair(u32::from(high), 0xDC00), pair(u32::from(high), 0xDFFF))]
            }
            Pending::Utf8 { bytes, len, need } => {
                // UTF-8 keeps code point order: the lowest and highest completions bound them.
                let complete = |lowest: bool| {
                    let mut bytes = bytes;
                    for i in len as usize..need as usize {
                        let (lo, hi) = utf8_continuations(&bytes[..i]);
                        bytes[i] = if lowest { lo } else { hi };
                    }
                    let text = std::str::from_utf8(&bytes[..need as usize]).expect("a valid completion");
                    text.chars().next().expect("one code point") as u32
                };
                vec![(complete(true), complete(false))]
            }
        }
    }

    /// Whether the partial escape or UTF-8 sequence in progress can still become `c`.
    pub(crate) fn pending_admits(&self, c: char) -> bool {
        let code = c as u32;
        let mut units = [0u16; 2];
        let utf16 = c.encode_utf16(&mut units);
        let first_unit = utf16[0] as u32;
        match self.pending {
            Pending::None | Pending::Backslash => true,
            Pending::Unicode { value, digits, high: None } => first_unit >> (4 * (4 - digits as u32)) == value,
            Pending::Unicode { value, digits, high: Some(high) } => {
                utf16.len() == 2 && utf16[0] == high && (utf16[1] as u32) >> (4 * (4 - digits as u32)) == value
            }
            Pending::AfterHigh { high } | Pending::AfterHighBackslash { high } => utf16.len() == 2 && utf16[0] == high,
            Pending::Utf8 { bytes, len, .. } => {
                code >= 0x80 && {
                    let mut buf = [0u8; 4];
                    c.encode_utf8(&mut buf).as_bytes().starts_with(&bytes[..len as usize])
                }
            }
        }
    }

    /// Whether `b` continues the one canonical spelling of some string, given that every
    /// escape in progress was started in that spelling: characters raw where JSON allows it,
    /// `\"`, `\\` and the short control escapes, `\u00xx` (lowercase) for the other control
    /// characters. Enumerating keys along canonical spellings visits each decoded key once.
    pub(crate) fn canonical_next(&self, b: u8) -> bool {
        match self.pending {
            Pending::Backslash => matches!(b, b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'),
            Pending::Unicode { value, digits, high: None } => match digits {
                0 | 1 => b == b'0',
                2 => matches!(b, b'0' | b'1'),
                _ => {
                    let Some(d) = hex_value(b) else { return false };
                    let code = value << 4 | d;
                    !b.is_ascii_uppercase() && !matches!(code, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
                }
            },
            // Surrogate escapes are never canonical (raw UTF-8 is).
            Pending::Unicode { high: Some(_), .. } | Pending::AfterHigh { .. } | Pending::AfterHighBackslash { .. } => {
                false
            }
            Pending::None | Pending::Utf8 { .. } => true,
        }
    }

    /// Whether the text so far can still decode to exactly a target that starts with the value
    /// so far and goes on with `rest` (then close).
    pub(crate) fn can_end_as(&self, rest: &str) -> bool {
        match rest.chars().next() {
            None => !self.has_pending(),
            Some(c) => self.pending_admits(c),
        }
    }
}

/// Counts the code points of a JSON string's decoded value from its text, without keeping the
/// value: a character counts at its first byte (a raw lead byte or the backslash of an escape),
/// except the second half of a surrogate-pair escape. Valid text is assumed (an automaton
/// checks it alongside).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CodePointCounter {
    pub(crate) count: u64,
    at: CounterAt,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum CounterAt {
    #[default]
    Text,
    Backslash {
        low_half: bool,
    },
    /// `\u` and `digits` hex digits; `high` while they can still spell a high surrogate (never
    /// in a low half's escape).
    Hex {
        digits: u8,
        high: bool,
    },
    /// After a high-surrogate escape: the next escape is its low half.
    AfterHigh,
}

impl CodePointCounter {
    /// Where the counter stands inside the text, its count cleared: two counters at the same
    /// position count the same from there.
    pub(crate) fn position(self) -> CodePointCounter {
        CodePointCounter { count: 0, ..self }
    }

    /// Whether the counter stands between characters (or inside a raw UTF-8 one), not inside
    /// an escape: a token then adds the code points it counts from a fresh counter.
    pub(crate) fn between_escapes(&self) -> bool {
        self.at == CounterAt::Text
    }

    pub(crate) fn feed(&mut self, b: u8) {
        self.at = match self.at {
            CounterAt::Text => {
                if b == b'\\' {
                    self.count += 1;
                    CounterAt::Backslash { low_half: false }
                } else {
                    if b != b'"' && !(0x80..=0xBF).contains(&b) {
                        self.count += 1;
                    }
                    CounterAt::Text
                }
            }
            CounterAt::Backslash { low_half } => {
                if b == b'u' {
                    CounterAt::Hex { digits: 0, high: !low_half }
                } else {
                    CounterAt::Text
                }
            }
            CounterAt::Hex { digits, high } => {
                let high = high
                    && match digits {
                        0 => b.eq_ignore_ascii_case(&b'd'),
                        1 => matches!(b.to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'),
                        _ => true,
                    };
                match digits {
                    3 if high => CounterAt::AfterHigh,
                    3 => CounterAt::Text,
                    _ => CounterAt::Hex { digits: digits + 1, high },
                }
            }
            CounterAt::AfterHigh => CounterAt::Backslash { low_half: true },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Option<String> {
        let mut d = StringDecoder::default();
        for &b in text.as_bytes() {
            match d.feed(b) {
                DecodeStep::Continue => {}
                DecodeStep::Closed => return Some(d.value().to_string()),
                DecodeStep::Invalid => return None,
            }
        }
        None
    }

    #[test]
    fn decodes_every_spelling() {
        assert_eq!(decode(r#"a\"b""#).as_deref(), Some("a\"b"));
        assert_eq!(decode(r#"\u00e9\u00C9""#).as_deref(), Some("éÉ"));
        assert_eq!(decode("é😀\"").as_deref(), Some("é😀"));
        assert_eq!(decode(r#"\ud83d\ude00\/""#).as_deref(), Some("😀/"));
        assert_eq!(decode(r#"\ud83d""#), None);
        assert_eq!(decode(r#"\ude00""#), None);
        assert_eq!(decode("\u{1}\""), None);
        assert_eq!(decode("\\x\""), None);
    }

    #[test]
    fn counts_code_points_of_the_decoded_value() {
        for (text, expected) in [
            (r#"abc""#, 3),
            ("é😀\"", 2),
            (r#"\u00e9\n\"""#, 3),
            (r#"\ud83d\ude00x""#, 2),
            (r#"\uD83D\uDE00\u0041""#, 2),
            (r#"\ud7ff\ue000""#, 2),
            ("\"", 0),
        ] {
            let mut counter = CodePointCounter::default();
            for &b in text.as_bytes() {
                counter.feed(b);
            }
            assert_eq!(counter.count, expected, "{text}");
            assert_eq!(decode(text).map(|v| v.chars().count() as u64), Some(expected), "{text}");
        }
    }

    /// Whether the text `d` read can still decode to exactly `target`.
    fn can_become(d: &StringDecoder, target: &str) -> bool {
        target.strip_prefix(d.value()).is_some_and(|rest| d.can_end_as(rest))
    }

    #[test]
    fn partial_escapes_know_what_they_can_become() {
        let mut d = StringDecoder::default();
        for &b in br"ab\u00" {
            d.feed(b);
        }
        assert!(can_become(&d, "abé") && can_become(&d, "ab\u{7f}") && !can_become(&d, "abĀ") && !can_become(&d, "ab"));
        let mut d = StringDecoder::default();
        for &b in br"\ud83d\u" {
            d.feed(b);
        }
        assert!(can_become(&d, "😀") && !can_become(&d, "é"));
        let mut d = StringDecoder::default();
        d.feed(0xC3);
        assert!(can_become(&d, "é") && !can_become(&d, "e") && !can_become(&d, "😀"));
    }
}
