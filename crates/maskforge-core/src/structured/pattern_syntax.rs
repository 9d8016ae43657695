//! `format: "regex"`: whether a string is an ECMA-262 regular expression pattern, read one code
//! point at a time.
//!
//! The grammar is ECMA-262's `Pattern[~UnicodeMode, ~UnicodeSetsMode, +NamedCaptureGroups]`
//! (ES2024) without the web-compatibility grammar of Annex B, with its early errors: a
//! quantifier must follow an atom (`{` is always a quantifier, `]`, `}` never literal), a class
//! range needs two characters in order, `\` is followed by a known escape or by a character that
//! cannot continue an identifier, `\1` needs as many capturing groups, `\k<name>` a group of that
//! name, group names are distinct, lookarounds are not quantified. Nesting makes the language
//! context-free, not regular: the reader keeps a stack of open groups.
//!
//! Every prefix the reader keeps is the prefix of a valid pattern (close what is open, add the
//! groups a reference asks for), so it refuses exactly the code points after which no valid
//! pattern follows. Group names are identifiers of raw characters or `\uXXXX` / `\u{...}`
//! escapes; a name spelled with a surrogate pair of escapes is refused.
//!
//! A reader of decoded code points: it knows no schema, graph or matcher, which holds it.

use std::sync::OnceLock;

use super::string_decoder::StringDecoder;

/// What the last term of the current alternative was, for the quantifier that may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet (start of an alternative): no quantifier.
    Nothing,
    /// An atom: a quantifier may follow.
    Atom,
    /// An assertion or lookaround: no quantifier.
    Assertion,
    /// A quantifier: only `?` (lazy) may follow.
    Quantifier,
    /// A lazy quantifier: nothing more.
    Lazy,
}

/// What a class atom stands for: one character, or a set (`\d`, `\w`, `\s` and their negations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassAtom {
    Char(u32),
    Set,
}

/// Where a class range stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Range {
    /// No atom waiting: the next `-` is a character.
    Fresh,
    /// An atom that a `-` may turn into a range start.
    After(ClassAtom),
    /// An atom and `-`: the next atom ends the range (a `]` makes `-` a character).
    Dash(ClassAtom),
}

/// Escapes, by where they appear: outside classes, or inside one in a range state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EscapeContext {
    Atom,
    Class(Range),
}

/// The token being read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lexer {
    Normal,
    /// After `\`.
    Escape(EscapeContext),
    /// After `\c`: an ASCII letter.
    Control(EscapeContext),
    /// `\x` or `\u`: hex digits still needed, and the value so far.
    Hex(EscapeContext, u8, u32),
    /// After `\0`: a digit may not follow (checked by the next code point), then reading goes
    /// on as this lexer says.
    Zero(Box<Lexer>),
    /// `\` and decimal digits: a back reference.
    Decimal(u64),
    /// After `\k`: `<` must follow.
    ReferenceOpen,
    /// After `(`: `?` or the group's first code point.
    GroupOpen,
    /// After `(?`.
    GroupQuestion,
    /// After `(?<`: `=`, `!` or a name.
    GroupAngle,
    /// A group name (`for_reference`: in `\k<...>`), its code points so far, and an escape in it.
    Name {
        for_reference: bool,
        name: String,
        escape: NameEscape,
    },
    /// Inside `[...]`: whether the next code point is the first (`^` may negate once).
    Class {
        first: bool,
        range: Range,
    },
    /// `{` read: digits of the minimum, then maybe `,` and digits of the maximum.
    Braces {
        min: String,
        comma: bool,
        max: String,
    },
}

/// An escape inside a group name: `\u` then four hex digits or `{hex}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameEscape {
    None,
    Backslash,
    U,
    Hex4 { digits: u8, value: u32 },
    Braced { digits: u8, value: u32 },
}

/// Reads a pattern one code point at a time (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatternSyntax {
    lexer: Lexer,
    last: Last,
    /// Open groups: whether each is a lookaround (not quantifiable once closed).
    groups: Vec<bool>,
    capturing: u64,
    highest_reference: u64,
    names: Vec<String>,
    references: Vec<String>,
}

impl Default for PatternSyntax {
    fn default() -> Self {
        PatternSyntax {
            lexer: Lexer::Normal,
            last: Last::Nothing,
            groups: Vec::new(),
            capturing: 0,
            highest_reference: 0,
            names: Vec::new(),
            references: Vec::new(),
        }
    }
}

/// Where a [`PatternSyntax`] takes runs of plain code points alike (see
/// [`PatternSyntax::plain_context`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlainContext {
    /// Between tokens: [`is_plain`] code points.
    Between,
    /// Inside a class: [`is_plain`] code points but `-`.
    InClass,
}

impl PlainContext {
    /// Whether `c` is taken alike in this context.
    pub(crate) fn takes(self, c: char) -> bool {
        is_plain(c) && (self == PlainContext::Between || c != '-')
    }
}

/// A code point that is a literal atom between tokens and stands for itself, unescaped, in a
/// JSON string: not a pattern syntax character, not `"`, `\\` or a control character.
fn is_plain(c: char) -> bool {
    !matches!(c, '\\' | '(' | ')' | '|' | '^' | '$' | '*' | '+' | '?' | '{' | '}' | '[' | ']' | '"' | '\0'..='\u{1f}')
}

fn is_hex(c: char) -> Option<u32> {
    c.to_digit(16)
}

/// Sorted code point ranges of a class of Unicode properties, read from regex-syntax's tables.
fn class_ranges(class: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::ParserBuilder::new().build().parse(class).expect("a class regex-syntax knows");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            class.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()
        }
        other => unreachable!("a property is a class, not {other:?}"),
    }
}

fn in_ranges(ranges: &[(u32, u32)], c: u32) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The first code point of `ranges` within `lo..=hi`.
fn first_in(ranges: &[(u32, u32)], lo: u32, hi: u32) -> Option<u32> {
    let &(start, _) = ranges.get(ranges.partition_point(|&(_, end)| end < lo))?;
    let c = start.max(lo);
    (c <= hi).then_some(c)
}

fn id_start_ranges() -> &'static [(u32, u32)] {
    static RANGES: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RANGES.get_or_init(|| class_ranges(r"\p{ID_Start}"))
}

fn id_continue_ranges() -> &'static [(u32, u32)] {
    static RANGES: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RANGES.get_or_init(|| class_ranges(r"\p{ID_Continue}"))
}

fn id_start(c: u32) -> bool {
    in_ranges(id_start_ranges(), c)
}

fn id_continue(c: u32) -> bool {
    in_ranges(id_continue_ranges(), c)
}

/// Code points of `lo..=hi` (scalar values) that stand for all of them before the reader: every
/// ASCII one, and beyond ASCII the highest (a class range asks for a code point at or above its
/// start), ZWNJ and ZWJ, and the first of each identifier class (group names and identity
/// escapes ask for one); no other rule tells non-ASCII code points apart.
fn representatives(lo: u32, hi: u32) -> Vec<char> {
    static CONTINUE_ONLY: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    static OUTSIDE: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    let mut codes: Vec<u32> = (lo..=hi.min(0x7F)).collect();
    let lo = lo.max(0x80);
    if lo <= hi {
        let continue_only = CONTINUE_ONLY.get_or_init(|| class_ranges(r"[\p{ID_Continue}--\p{ID_Start}]"));
        let outside = OUTSIDE.get_or_init(|| class_ranges(r"\P{ID_Continue}"));
        codes.push(hi);
        codes.extend([0x200C, 0x200D].into_iter().filter(|c| (lo..=hi).contains(c)));
        for ranges in [id_start_ranges(), continue_only, outside] {
            codes.extend(first_in(ranges, lo, hi));
        }
    }
    codes.into_iter().filter_map(char::from_u32).collect()
}

/// `RegExpIdentifierStart` / `RegExpIdentifierPart` of a group name.
fn name_char(c: u32, first: bool) -> bool {
    let dollar_or_underscore = c == '$' as u32 || c == '_' as u32;
    if first {
        dollar_or_underscore || id_start(c)
    } else {
        dollar_or_underscore || c == 0x200C || c == 0x200D || id_continue(c)
    }
}

/// Whether decimal digit strings compare `a > b` by value.
fn greater(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len() > b.len() || (a.len() == b.len() && a > b)
}

impl PatternSyntax {
    /// Whether some code point that the escape or UTF-8 sequence `decoder` is in the middle of
    /// can still become continues the pattern (true with nothing pending).
    pub(crate) fn admits_pending(&self, decoder: &StringDecoder) -> bool {
        !decoder.has_pending()
            || decoder
                .pending_ranges()
                .into_iter()
                .any(|(lo, hi)| representatives(lo, hi).into_iter().any(|c| self.clone().feed(c)))
    }

    /// Where the reader takes every run of plain code points alike, whatever else it holds:
    /// between tokens (or right after `(` or a back reference's digits), every [plain](is_plain)
    /// code point is a literal atom; inside a class with no range pending, every plain one but
    /// `-` is a class atom.
    pub(crate) fn plain_context(&self) -> Option<PlainContext> {
        match &self.lexer {
            Lexer::Normal | Lexer::GroupOpen | Lexer::Decimal(_) => Some(PlainContext::Between),
            Lexer::Class { range: Range::Fresh | Range::After(_), .. } => Some(PlainContext::InClass),
            _ => None,
        }
    }

    /// Whether the pattern read so far is complete and valid.
    pub(crate) fn is_accepting(&self) -> bool {
        (matches!(&self.lexer, Lexer::Normal | Lexer::Decimal(_))
            || matches!(&self.lexer, Lexer::Zero(then) if **then == Lexer::Normal))
            && self.groups.is_empty()
            && self.highest_reference <= self.capturing
            && self.references.iter().all(|r| self.names.contains(r))
    }

    /// Reads one code point; false when no valid pattern continues this way (`self` is then
    /// unspecified).
    pub(crate) fn feed(&mut self, c: char) -> bool {
        let lexer = std::mem::replace(&mut self.lexer, Lexer::Normal);
        match lexer {
            Lexer::Normal => self.normal(c),
            Lexer::Escape(context) => self.escape(context, c),
            Lexer::Control(context) => {
                c.is_ascii_alphabetic() && self.escaped_char(context, ClassAtom::Char(c as u32 % 32))
            }
            Lexer::Hex(context, left, value) => match is_hex(c) {
                None => false,
                Some(d) if left > 1 => {
                    self.lexer = Lexer::Hex(context, left - 1, value << 4 | d);
                    true
                }
                Some(d) => self.escaped_char(context, ClassAtom::Char(value << 4 | d)),
            },
            Lexer::Zero(then) => {
                if c.is_ascii_digit() {
                    return false;
                }
                // `\0` is done: the code point is read afresh where the escape left off.
                self.lexer = *then;
                self.feed(c)
            }
            Lexer::Decimal(value) => match c.to_digit(10) {
                Some(d) => {
                    let value = value.saturating_mul(10).saturating_add(u64::from(d));
                    self.highest_reference = self.highest_reference.max(value);
                    self.lexer = Lexer::Decimal(value);
                    true
                }
                None => self.normal(c),
            },
            Lexer::ReferenceOpen => {
                if c != '<' {
                    return false;
                }
                self.lexer = Lexer::Name { for_reference: true, name: String::new(), escape: NameEscape::None };
                true
            }
            Lexer::GroupOpen => {
                if c == '?' {
                    self.lexer = Lexer::GroupQuestion;
                    return true;
                }
                self.open_group(false, true);
                self.normal(c)
            }
            Lexer::GroupQuestion => match c {
                ':' => {
                    self.open_group(false, false);
                    true
                }
                '=' | '!' => {
                    self.open_group(true, false);
                    true
                }
                '<' => {
                    self.lexer = Lexer::GroupAngle;
                    true
                }
                _ => false,
            },
            Lexer::GroupAngle => match c {
                '=' | '!' => {
                    self.open_group(true, false);
                    true
                }
                _ => {
                    self.lexer = Lexer::Name { for_reference: false, name: String::new(), escape: NameEscape::None };
                    self.feed(c)
                }
            },
            Lexer::Name { for_reference, name, escape } => self.name(for_reference, name, escape, c),
            Lexer::Class { first, range } => self.class(first, range, c),
            Lexer::Braces { min, comma, max } => self.braces(min, comma, max, c),
        }
    }

    fn open_group(&mut self, lookaround: bool, capturing: bool) {
        self.groups.push(lookaround);
        if capturing {
            self.capturing += 1;
        }
        self.last = Last::Nothing;
    }

    /// A code point outside any token.
    fn normal(&mut self, c: char) -> bool {
        self.lexer = Lexer::Normal;
        match c {
            '\\' => {
                self.lexer = Lexer::Escape(EscapeContext::Atom);
                true
            }
            '(' => {
                self.lexer = Lexer::GroupOpen;
                true
            }
            ')' => match self.groups.pop() {
                None => false,
                Some(lookaround) => {
                    self.last = if lookaround { Last::Assertion } else { Last::Atom };
                    true
                }
            },
            '|' => {
                self.last = Last::Nothing;
                true
            }
            '^' | '$' => {
                self.last = Last::Assertion;
                true
            }
            '*' | '+' | '?' => self.quantifier(c == '?'),
            '{' => {
                if self.last != Last::Atom {
                    return false;
                }
                self.lexer = Lexer::Braces { min: String::new(), comma: false, max: String::new() };
                true
            }
            '[' => {
                self.lexer = Lexer::Class { first: true, range: Range::Fresh };
                true
            }
            ']' | '}' => false,
            _ => {
                self.last = Last::Atom;
                true
            }
        }
    }

    /// `*`, `+`, `?` (`question`: a `?` may make a quantifier lazy).
    fn quantifier(&mut self, question: bool) -> bool {
        match self.last {
            Last::Atom => {
                self.last = Last::Quantifier;
                true
            }
            Last::Quantifier if question => {
                self.last = Last::Lazy;
                true
            }
            _ => false,
        }
    }

    fn braces(&mut self, mut min: String, comma: bool, mut max: String, c: char) -> bool {
        match c {
            '0'..='9' => {
                if comma { &mut max } else { &mut min }.push(c);
            }
            ',' if !comma && !min.is_empty() => {
                self.lexer = Lexer::Braces { min, comma: true, max };
                return true;
            }
            // `{n,m}` needs n <= m.
            '}' if !min.is_empty() => {
                if comma && !max.is_empty() && greater(&min, &max) {
                    return false;
                }
                self.last = Last::Quantifier;
                return true;
            }
            _ => return false,
        }
        self.lexer = Lexer::Braces { min, comma, max };
        true
    }

    /// After `\` (outside or inside a class).
    fn escape(&mut self, context: EscapeContext, c: char) -> bool {
        let class = context != EscapeContext::Atom;
        match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => self.escaped_char(context, ClassAtom::Set),
            'b' if class => self.escaped_char(context, ClassAtom::Char(8)),
            'b' | 'B' if !class => {
                self.last = Last::Assertion;
                true
            }
            'f' => self.escaped_char(context, ClassAtom::Char(0x0C)),
            'n' => self.escaped_char(context, ClassAtom::Char(0x0A)),
            'r' => self.escaped_char(context, ClassAtom::Char(0x0D)),
            't' => self.escaped_char(context, ClassAtom::Char(0x09)),
            'v' => self.escaped_char(context, ClassAtom::Char(0x0B)),
            'c' => {
                self.lexer = Lexer::Control(context);
                true
            }
            'x' => {
                self.lexer = Lexer::Hex(context, 2, 0);
                true
            }
            'u' => {
                self.lexer = Lexer::Hex(context, 4, 0);
                true
            }
            '0' => {
                if !self.escaped_char(context, ClassAtom::Char(0)) {
                    return false;
                }
                let then = std::mem::replace(&mut self.lexer, Lexer::Normal);
                self.lexer = Lexer::Zero(Box::new(then));
                true
            }
            '1'..='9' if !class => {
                let value = u64::from(c.to_digit(10).expect("a digit"));
                self.highest_reference = self.highest_reference.max(value);
                self.last = Last::Atom;
                self.lexer = Lexer::Decimal(value);
                true
            }
            'k' if !class => {
                self.lexer = Lexer::ReferenceOpen;
                true
            }
            // IdentityEscape: a character that cannot continue an identifier.
            _ if !id_continue(c as u32) => self.escaped_char(context, ClassAtom::Char(c as u32)),
            _ => false,
        }
    }

    /// An escape that stands for a character or set: an atom outside classes, a class atom
    /// inside.
    fn escaped_char(&mut self, context: EscapeContext, atom: ClassAtom) -> bool {
        match context {
            EscapeContext::Atom => {
                self.lexer = Lexer::Normal;
                self.last = Last::Atom;
                true
            }
            EscapeContext::Class(range) => self.class_item(range, atom),
        }
    }

    /// Inside `[...]`.
    fn class(&mut self, first: bool, range: Range, c: char) -> bool {
        self.lexer = Lexer::Class { first: false, range };
        match c {
            // Only one `^`, and only first: the class is then negated (which no check needs).
            '^' if first => true,
            ']' => {
                self.lexer = Lexer::Normal;
                self.last = Last::Atom;
                true
            }
            '\\' => {
                self.lexer = Lexer::Escape(EscapeContext::Class(range));
                true
            }
            '-' => match range {
                Range::After(a) => {
                    self.lexer = Lexer::Class { first: false, range: Range::Dash(a) };
                    true
                }
                _ => self.class_item(range, ClassAtom::Char('-' as u32)),
            },
            _ => self.class_item(range, ClassAtom::Char(c as u32)),
        }
    }

    /// A class atom read in range state `range`.
    fn class_item(&mut self, range: Range, atom: ClassAtom) -> bool {
        let next = match range {
            Range::Dash(start) => match (start, atom) {
                (ClassAtom::Char(lo), ClassAtom::Char(hi)) if lo <= hi => Range::Fresh,
                _ => return false,
            },
            Range::Fresh | Range::After(_) => Range::After(atom),
        };
        self.lexer = Lexer::Class { first: false, range: next };
        true
    }

    /// A group name's code point (`\k<...>` or `(?<...>`).
    fn name(&mut self, for_reference: bool, mut name: String, escape: NameEscape, c: char) -> bool {
        let first = name.is_empty();
        let keep = |name: String, escape: NameEscape, this: &mut Self| {
            this.lexer = Lexer::Name { for_reference, name, escape };
            true
        };
        match escape {
            NameEscape::None => match c {
                '\\' => keep(name, NameEscape::Backslash, self),
                '>' if !first => {
                    if for_reference {
                        self.references.push(name);
                        self.last = Last::Atom;
                        self.lexer = Lexer::Normal;
                    } else {
                        if self.names.contains(&name) {
                            return false;
                        }
                        self.names.push(name);
                        self.open_group(false, true);
                    }
                    true
                }
                _ if name_char(c as u32, first) => {
                    name.push(c);
                    keep(name, NameEscape::None, self)
                }
                _ => false,
            },
            NameEscape::Backslash => c == 'u' && keep(name, NameEscape::U, self),
            NameEscape::U => match (c, is_hex(c)) {
                ('{', _) => keep(name, NameEscape::Braced { digits: 0, value: 0 }, self),
                (_, Some(d)) => keep(name, NameEscape::Hex4 { digits: 1, value: d }, self),
                _ => false,
            },
            NameEscape::Hex4 { digits, value } => {
                let Some(d) = is_hex(c) else { return false };
                let value = value << 4 | d;
                if digits < 3 {
                    return keep(name, NameEscape::Hex4 { digits: digits + 1, value }, self);
                }
                match char::from_u32(value).filter(|&ch| name_char(ch as u32, first)) {
                    Some(ch) => {
                        name.push(ch);
                        keep(name, NameEscape::None, self)
                    }
                    None => false,
                }
            }
            NameEscape::Braced { digits, value } => match (c, is_hex(c)) {
                ('}', _) if digits > 0 => match char::from_u32(value).filter(|&ch| name_char(ch as u32, first)) {
                    Some(ch) => {
                        name.push(ch);
                        keep(name, NameEscape::None, self)
                    }
                    None => false,
                },
                (_, Some(d)) => {
                    let value = value.saturating_mul(16).saturating_add(d);
                    // Above U+10FFFF no code point follows; leading zeros may run on.
                    value <= 0x10_FFFF
                        && keep(name, NameEscape::Braced { digits: digits.saturating_add(1), value }, self)
                }
                _ => false,
            },
        }
    }
}

/// Whether a whole text is a valid pattern.
pub(crate) fn is_pattern(text: &str) -> bool {
    let mut syntax = PatternSyntax::default();
    text.chars().all(|c| syntax.feed(c)) && syntax.is_accepting()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_cases() {
        for valid in [r"([abc])+\s+$", "(?<name>x)", r"(?<n>a)\k<n>", "(?<=a+)b", "[]", "[^]", r"\cA"] {
            assert!(is_pattern(valid), "{valid}");
        }
        for invalid in [r"^(abc]", r"\a", "(?P<name>x)", "(?P<n>a)(?P=n)", "(?#comment)a", "(?i)abc", "(?ims)abc"] {
            assert!(!is_pattern(invalid), "{invalid}");
        }
    }

    #[test]
    fn early_errors_of_the_grammar() {
        for valid in [
            "",
            "a|",
            "|",
            "a{2}",
            "a{2,}",
            "a{2,3}?",
            "a{03,3}",
            r"\1(a)",
            r"(a)\1",
            r"\k<n>(?<n>)",
            "[a-z-]",
            "[--a]",
            "[a-c-e]",
            r"[\b-\n]",
            r"[\-]",
            r"\0",
            r"[\0]",
            r"\$",
            r"\/",
            "(?:a)*",
            "a??",
            r"\u0041",
            r"\x41",
            "(?<$_\u{200C}>)",
            r"(?<\u0061>a)",
            r"(?<\u{61}b>a)",
            "é",
            r"(a)\1",
            r"[\0-\x10]",
        ] {
            assert!(is_pattern(valid), "{valid}");
        }
        for invalid in [
            "a**",
            "a*+",
            "*",
            "+a",
            "a{3,2}",
            "{",
            "a{",
            "}",
            "]",
            "a{,2}",
            r"\2(a)",
            r"\k<m>(?<n>)",
            r"\k",
            "(?<n>)(?<n>)",
            "[z-a]",
            r"[\d-z]",
            r"[a-\w]",
            r"\01",
            r"[\1]",
            r"\_",
            r"\p{L}",
            r"\c1",
            r"\x4",
            r"\u004",
            "(?=a)*",
            "(?<=a)+",
            "(",
            ")",
            "(?",
            "(?<",
            "(?<1>)",
            "[",
            r"\",
            "^*",
            "$+",
            "x{1}{",
            r"\é",
            r"[\00]",
        ] {
            assert!(!is_pattern(invalid), "{invalid}");
        }
    }

    #[test]
    fn every_prefix_of_a_valid_pattern_is_kept() {
        for pattern in [r"^(?<year>\d{4})-(?:[01]\d)\k<year>$", r"[^\]a-z\u00e9-\u0fff]+?", r"(a|b(c|\2)(d))*"] {
            let mut syntax = PatternSyntax::default();
            for (i, c) in pattern.chars().enumerate() {
                assert!(syntax.feed(c), "{pattern} refused at {i}");
            }
        }
    }
}
