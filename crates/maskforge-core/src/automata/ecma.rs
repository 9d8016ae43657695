//! ECMA-262 regular expressions, as JSON Schema's `pattern` uses them, turned into the exact
//! language of the strings in which they find a match.
//!
//! Semantics are those of `RegExp.prototype.test` with the `u` flag (JSON Schema 2020-12 asks for
//! Unicode support, as the `u` flag gives): the pattern works on code points, `\u{..}` and
//! `\p{..}` are available, a surrogate-pair escape is one code point, and a lone surrogate matches
//! nothing (valid strings hold none). No other flag applies: no `i`, no `m` (`^`/`$` are the
//! ends of the input), no `s` (`.` excludes line terminators).
//!
//! Schemas in the wild are mostly written for the lenient, non-`u` grammar of Annex B. These
//! spellings, errors under `u`, are accepted with their Annex B meaning since no other reading
//! is plausible:
//! - a `]`, `}` or `{` that does not start a valid quantifier is a literal character;
//! - an identity escape of any character that is not an ASCII letter or digit (`\-`, `\@`, `\_`,
//!   `\ `) is that character;
//! - a class escape at either end of a class range (`[\w-.]`) makes the `-` literal.
//!
//! Other Annex B readings, which usually betray another dialect, are rejected: octal escapes,
//! letter identity escapes (`\a`, `\z`, `\Z`), incomplete `\x`/`\u`/`\c` escapes. Rejected as
//! well: backreferences, lookbehind, lookaheads anywhere but at the start, inline modifiers
//! (`(?i)`). Word boundaries (`\b`, `\B`) are exact: without the `i` flag ECMA's word characters
//! are ASCII.
//!
//! Leading lookaheads (`^(?=..)(?!..)rest`, or without `^`) are exact: each is the language of
//! the strings (from the match position on) in which it matches at the start, intersected with
//! the rest's or subtracted from it; without `^`, a subset construction then lets the match start
//! anywhere.

use regex_automata::nfa::thompson::{Compiler, Config, WhichCaptures};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition};

use super::ByteDfa;

/// Why a pattern has no language here: unsupported or malformed syntax, or too large an automaton.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// What is wrong, for a diagnostic.
    pub message: String,
    /// The syntax is fine but the automaton would exceed a resource limit.
    pub limit_exceeded: bool,
}

impl PatternError {
    fn syntax(message: impl Into<String>) -> Self {
        PatternError { message: message.into(), limit_exceeded: false }
    }
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatternError {}

/// The set of strings (as UTF-8 bytes) in which `pattern` finds a match: ECMA
/// `RegExp.prototype.test` with the `u` flag, an unanchored search unless `^`/`$` anchor it.
/// The automaton is trimmed and minimal; invalid UTF-8 is outside every language that matters,
/// whatever the automaton says about it.
pub fn pattern_language(pattern: &str, max_states: usize) -> Result<ByteDfa, PatternError> {
    if let Some(lookaheads) = split_lookaheads(pattern)? {
        return lookahead_language(&lookaheads, max_states);
    }
    let body = trim_end(trim_end(parse(pattern)?, Side::Start), Side::End);
    // A language whose shortest string has n bytes needs more than n states: say so before
    // determinising (`a{1000000}` would take long to find out).
    if body.properties().minimum_len().is_some_and(|n| n >= max_states) {
        return Err(too_many_states(max_states));
    }
    // Search semantics: anything, a match, anything. Assertions inside the body still see the
    // real input boundaries, so `^` only holds when the leading part is empty.
    let anything = Hir::repetition(Repetition { min: 0, max: None, greedy: false, sub: Box::new(any_scalar()) });
    let hir = Hir::concat(vec![anything.clone(), body, anything]);
    let nfa = Compiler::new()
        .configure(
            Config::new()
                .which_captures(WhichCaptures::None)
                // Generous for any automaton within `max_states`, yet bounded for `a{1000000}`.
                .nfa_size_limit(Some(max_states.saturating_mul(256).clamp(8 << 20, 64 << 20))),
        )
        .build_from_hir(&hir)
        .map_err(|e| PatternError {
            message: format!("the pattern is too large to compile: {e}"),
            limit_exceeded: true,
        })?;
    ByteDfa::from_nfa(&nfa, max_states).map_err(|e| too_many_states(e.limit))
}

/// The strings that `pattern` matches as a whole (ECMA syntax and semantics as for
/// [`pattern_language`], anchored at both ends: `RegExp.prototype.test` of `^(?:pattern)$`).
/// Trimmed and minimal, so every live state reaches an accepting one.
pub fn full_match_language(pattern: &str, max_states: usize) -> Result<ByteDfa, PatternError> {
    // The pattern is checked as written first: wrapping must not make a malformed one (`a)(b`)
    // well-formed.
    let anchored = match split_lookaheads(pattern)? {
        // Leading lookaheads stay in front, where they are read from the start of the text.
        Some(lookaheads) => {
            parse(lookaheads.rest)?;
            let front = &pattern[..pattern.len() - lookaheads.rest.len()];
            let caret = if lookaheads.anchored { "" } else { "^" };
            format!("{caret}{front}(?:{})$", lookaheads.rest)
        }
        None => {
            parse(pattern)?;
            format!("^(?:{pattern})$")
        }
    };
    pattern_language(&anchored, max_states)
}

/// A pattern that starts with lookaheads: `^`?, then `(?=X)`/`(?!X)` groups, then the rest.
struct Lookaheads<'p> {
    anchored: bool,
    positive: Vec<&'p str>,
    negative: Vec<&'p str>,
    rest: &'p str,
}

/// Most leading lookaheads one pattern may have.
const MAX_LOOKAHEADS: usize = 8;

/// Splits off leading lookaheads (`None`: the pattern starts with none).
fn split_lookaheads(pattern: &str) -> Result<Option<Lookaheads<'_>>, PatternError> {
    let anchored = pattern.starts_with('^');
    let mut rest = if anchored { &pattern[1..] } else { pattern };
    let (mut positive, mut negative) = (Vec::new(), Vec::new());
    while rest.starts_with("(?=") || rest.starts_with("(?!") {
        let end = group_end(rest).ok_or_else(|| PatternError::syntax("unbalanced lookahead group"))?;
        let body = &rest[3..end];
        if rest.as_bytes()[2] == b'=' {
            positive.push(body);
        } else {
            negative.push(body);
        }
        rest = &rest[end + 1..];
    }
    if positive.is_empty() && negative.is_empty() {
        return Ok(None);
    }
    let fail = |message: &str| Err(PatternError::syntax(message));
    if positive.len() + negative.len() > MAX_LOOKAHEADS {
        return fail("more than 8 leading lookaheads");
    }
    if top_level_alternation(rest) {
        return fail("lookaheads before a top-level alternation are not supported");
    }
    if !anchored
        && [rest]
            .iter()
            .chain(&positive)
            .chain(&negative)
            .any(|p| p.contains("\\b") || p.contains("\\B") || p.contains('^'))
    {
        // Each part is read from the match position on; these would look before it.
        return fail("unanchored lookaheads with `^` or word boundaries are not supported");
    }
    Ok(Some(Lookaheads { anchored, positive, negative, rest }))
}

/// The group punctuation of `s` outside escapes and classes (`(`, `)`, `|`), each with its
/// index and the group depth before it.
fn group_punctuation(s: &str) -> Vec<(usize, u8, usize)> {
    let bytes = s.as_bytes();
    let (mut out, mut depth, mut i, mut in_class) = (Vec::new(), 0usize, 0usize, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b @ (b'(' | b')' | b'|') if !in_class => {
                out.push((i, b, depth));
                match b {
                    b'(' => depth += 1,
                    b')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The index of the `)` closing the group that `s` opens.
fn group_end(s: &str) -> Option<usize> {
    group_punctuation(s).into_iter().find(|&(_, b, depth)| b == b')' && depth == 1).map(|(i, _, _)| i)
}

/// Whether `s` has a `|` outside every group and class.
fn top_level_alternation(s: &str) -> bool {
    group_punctuation(s).into_iter().any(|(_, b, depth)| b == b'|' && depth == 0)
}

/// The language of a pattern with leading lookaheads.
fn lookahead_language(lookaheads: &Lookaheads<'_>, max_states: usize) -> Result<ByteDfa, PatternError> {
    let limit = |e: super::TooManyStates| too_many_states(e.limit);
    // The strings in which `part` matches at the start (then anything may follow).
    let at_start = |part: &str| pattern_language(&format!("^(?:{part})"), max_states);
    let mut language = at_start(lookaheads.rest)?;
    for part in &lookaheads.positive {
        language = language.intersect(&at_start(part)?, max_states).map_err(limit)?;
    }
    for part in &lookaheads.negative {
        language = language.difference(&at_start(part)?, max_states).map_err(limit)?;
    }
    if lookaheads.anchored {
        return Ok(language);
    }
    search_anywhere(&language, max_states)
}

/// The strings with a suffix in `language` (a match may start at any position): a subset
/// construction over the suffixes begun so far.
fn search_anywhere(language: &ByteDfa, max_states: usize) -> Result<ByteDfa, PatternError> {
    use super::{StateId, DEAD};
    use std::collections::HashMap;
    let start = vec![language.start()];
    let mut ids: HashMap<Vec<StateId>, StateId> = HashMap::new();
    let mut sets: Vec<Vec<StateId>> = vec![Vec::new(), start.clone()];
    ids.insert(start, 1);
    let mut table: Vec<[StateId; 256]> = vec![[DEAD; 256]];
    let mut i = 1;
    while i < sets.len() {
        let mut row = [DEAD; 256];
        for b in 0..=255u8 {
            let mut next: Vec<StateId> = sets[i].iter().map(|&s| language.next(s, b)).filter(|&s| s != DEAD).collect();
            next.push(language.start());
            next.sort_unstable();
            next.dedup();
            let id = match ids.get(&next) {
                Some(&id) => id,
                None => {
                    if sets.len() >= max_states {
                        return Err(too_many_states(max_states));
                    }
                    let id = sets.len() as StateId;
                    ids.insert(next.clone(), id);
                    sets.push(next);
                    id
                }
            };
            row[b as usize] = id;
        }
        table.push(row);
        i += 1;
    }
    let accepting: Vec<bool> = sets.iter().map(|set| set.iter().any(|&s| language.is_accepting(s))).collect();
    Ok(ByteDfa::from_fn(sets.len(), 1, accepting, |state, b| table[state as usize][b as usize]))
}

fn too_many_states(limit: usize) -> PatternError {
    PatternError {
        message: format!("the pattern's automaton exceeds the limit of {limit} states"),
        limit_exceeded: true,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Start,
    End,
}

/// Simplifies the end of `hir` that touches the search's `.*` on `side`, keeping the language of
/// `.* hir .*` (determinising big bounded repetitions is costly, and there they are useless):
/// `.* X{m,n}` is `.* X{m}` (the `.*` absorbs extra copies), so `X*` and `X?` disappear, and an
/// alternation at that end is trimmed branch by branch (it vanishes when a branch becomes empty).
/// Assertions stop the trimming: `^x*` keeps its `x*`.
fn trim_end(hir: Hir, side: Side) -> Hir {
    match hir.kind() {
        HirKind::Repetition(rep) => match rep.min {
            0 => Hir::empty(),
            1 => trim_end((*rep.sub).clone(), side),
            min => Hir::repetition(Repetition { min, max: Some(min), greedy: true, sub: rep.sub.clone() }),
        },
        HirKind::Capture(capture) => trim_end((*capture.sub).clone(), side),
        HirKind::Alternation(branches) => {
            let branches: Vec<Hir> = branches.iter().map(|b| trim_end(b.clone(), side)).collect();
            if branches.iter().any(|b| matches!(b.kind(), HirKind::Empty)) {
                Hir::empty()
            } else {
                Hir::alternation(branches)
            }
        }
        HirKind::Concat(items) => {
            let mut items = items.clone();
            while let Some(item) = match side {
                Side::Start => (!items.is_empty()).then(|| items.remove(0)),
                Side::End => items.pop(),
            } {
                let trimmed = trim_end(item, side);
                if !matches!(trimmed.kind(), HirKind::Empty) {
                    match side {
                        Side::Start => items.insert(0, trimmed),
                        Side::End => items.push(trimmed),
                    }
                    break;
                }
            }
            Hir::concat(items)
        }
        _ => hir,
    }
}

/// Parses an ECMA-262 pattern into a [`Hir`] over code points (without the search wrapping).
pub(crate) fn parse(pattern: &str) -> Result<Hir, PatternError> {
    let mut parser = Parser { chars: pattern.chars().collect(), pos: 0, group_names: Vec::new() };
    let hir = parser.disjunction(0)?;
    if parser.pos < parser.chars.len() {
        // The only thing that stops a top-level disjunction early is a `)`.
        return parser.fail("unmatched `)`");
    }
    Ok(hir)
}

/// Deep nesting would only exhaust the stack; no real pattern comes near.
const MAX_NESTING: usize = 200;

const MAX_SCALAR: u32 = 0x10FFFF;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    group_names: Vec<String>,
}

/// One item of a character class: a single code point (which may form a range) or a set.
enum ClassAtom {
    Char(u32),
    Set(ClassUnicode),
}

impl Parser {
    fn fail<T>(&self, what: &str) -> Result<T, PatternError> {
        Err(PatternError::syntax(format!("{what} (at character {})", self.pos)))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn looking_at(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn next(&mut self) -> Result<char, PatternError> {
        match self.peek() {
            Some(c) => {
                self.pos += 1;
                Ok(c)
            }
            None => self.fail("unexpected end of pattern"),
        }
    }

    fn disjunction(&mut self, depth: usize) -> Result<Hir, PatternError> {
        if depth > MAX_NESTING {
            return self.fail("groups are nested too deeply");
        }
        let mut alternatives = vec![self.alternative(depth)?];
        while self.eat('|') {
            alternatives.push(self.alternative(depth)?);
        }
        Ok(Hir::alternation(alternatives))
    }

    fn alternative(&mut self, depth: usize) -> Result<Hir, PatternError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            items.push(self.term(depth)?);
        }
        Ok(Hir::concat(items))
    }

    fn term(&mut self, depth: usize) -> Result<Hir, PatternError> {
        let assertion = if self.eat('^') {
            Some(Look::Start)
        } else if self.eat('$') {
            Some(Look::End)
        } else if self.looking_at("\\b") {
            self.pos += 2;
            // Without the `i` flag ECMA's word characters are exactly [A-Za-z0-9_].
            Some(Look::WordAscii)
        } else if self.looking_at("\\B") {
            self.pos += 2;
            Some(Look::WordAsciiNegate)
        } else {
            None
        };
        if let Some(look) = assertion {
            if self.quantifier_ahead()? {
                return self.fail("nothing to repeat: an assertion cannot be quantified");
            }
            return Ok(Hir::look(look));
        }
        let atom = self.atom(depth)?;
        self.quantified(atom)
    }

    /// True when a quantifier starts here (`*`, `+`, `?` or a well-formed `{n,m}`).
    fn quantifier_ahead(&self) -> Result<bool, PatternError> {
        Ok(match self.peek() {
            Some('*' | '+' | '?') => true,
            Some('{') => self.braced_quantifier()?.is_some(),
            _ => false,
        })
    }

    /// A `{n}`, `{n,}` or `{n,m}` quantifier at the cursor: its bounds and its length, or `None`
    /// when the text there is not one (then the `{` is a literal, as Annex B reads it).
    fn braced_quantifier(&self) -> Result<Option<(u32, Option<u32>, usize)>, PatternError> {
        let mut i = self.pos + 1;
        let number = |i: &mut usize| -> Option<u64> {
            let start = *i;
            let mut value: u64 = 0;
            while let Some(d) = self.chars.get(*i).and_then(|c| c.to_digit(10)) {
                value = value.saturating_mul(10).saturating_add(d as u64);
                *i += 1;
            }
            (*i > start).then_some(value)
        };
        let Some(min) = number(&mut i) else { return Ok(None) };
        let max = if self.chars.get(i) == Some(&',') {
            i += 1;
            number(&mut i)
        } else {
            Some(min)
        };
        if self.chars.get(i) != Some(&'}') {
            return Ok(None);
        }
        let too_large = |v: u64| v > u32::MAX as u64;
        if too_large(min) || max.is_some_and(too_large) {
            return self.fail("repetition count too large");
        }
        if max.is_some_and(|max| max < min) {
            return self.fail("numbers out of order in `{}` quantifier");
        }
        Ok(Some((min as u32, max.map(|m| m as u32), i + 1 - self.pos)))
    }

    fn quantified(&mut self, atom: Hir) -> Result<Hir, PatternError> {
        let (min, max) = match self.peek() {
            Some('*') => {
                self.pos += 1;
                (0, None)
            }
            Some('+') => {
                self.pos += 1;
                (1, None)
            }
            Some('?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some('{') => match self.braced_quantifier()? {
                Some((min, max, len)) => {
                    self.pos += len;
                    (min, max)
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        // Laziness changes which match is found, not whether one is: the language is the same.
        self.eat('?');
        Ok(Hir::repetition(Repetition { min, max, greedy: true, sub: Box::new(atom) }))
    }

    fn atom(&mut self, depth: usize) -> Result<Hir, PatternError> {
        let c = self.next()?;
        match c {
            '.' => Ok(Hir::class(Class::Unicode(dot()))),
            '(' => self.group(depth),
            '[' => {
                let class = self.class()?;
                Ok(Hir::class(Class::Unicode(class)))
            }
            '\\' => self.atom_escape(),
            '*' | '+' | '?' => {
                self.pos -= 1;
                self.fail("nothing to repeat")
            }
            '{' => {
                self.pos -= 1;
                if self.braced_quantifier()?.is_some() {
                    return self.fail("nothing to repeat");
                }
                self.pos += 1;
                Ok(literal(c as u32))
            }
            // `]` and `}` are literals (Annex B); `|` and `)` never reach here.
            _ => Ok(literal(c as u32)),
        }
    }

    fn group(&mut self, depth: usize) -> Result<Hir, PatternError> {
        if self.eat('?') {
            if self.eat(':') {
                // Non-capturing group.
            } else if self.looking_at("=") || self.looking_at("!") {
                return self.fail("lookahead assertions are not supported");
            } else if self.looking_at("<=") || self.looking_at("<!") {
                return self.fail("lookbehind assertions are not supported");
            } else if self.eat('<') {
                self.group_name()?;
            } else {
                return self
                    .fail("unsupported group construct: only `(?:...)` and `(?<name>...)` groups are supported");
            }
        }
        let body = self.disjunction(depth + 1)?;
        if !self.eat(')') {
            return self.fail("missing `)`");
        }
        // Captures do not change the language.
        Ok(body)
    }

    fn group_name(&mut self) -> Result<(), PatternError> {
        let mut name = String::new();
        loop {
            match self.next()? {
                '>' => break,
                c if c == '$' || c == '_' || c.is_alphabetic() || (!name.is_empty() && c.is_alphanumeric()) => {
                    name.push(c)
                }
                _ => return self.fail("invalid capture group name"),
            }
        }
        if name.is_empty() {
            return self.fail("empty capture group name");
        }
        if self.group_names.contains(&name) {
            return self.fail("duplicate capture group name");
        }
        self.group_names.push(name);
        Ok(())
    }

    /// After a `\` outside a class (`\b` and `\B` were taken as assertions already).
    fn atom_escape(&mut self) -> Result<Hir, PatternError> {
        match self.peek() {
            Some('1'..='9') => self.fail("backreferences are not supported"),
            Some('k') => self.fail("named backreferences are not supported"),
            _ => match self.class_escape(false)? {
                ClassAtom::Char(c) => Ok(literal(c)),
                ClassAtom::Set(set) => Ok(Hir::class(Class::Unicode(set))),
            },
        }
    }

    /// The escape after a `\`, inside a class or not: a code point or a set.
    fn class_escape(&mut self, in_class: bool) -> Result<ClassAtom, PatternError> {
        let c = self.next()?;
        let set = |mut class: ClassUnicode, negated: bool| {
            if negated {
                class.negate();
            }
            Ok(ClassAtom::Set(class))
        };
        let code = match c {
            'd' | 'D' => return set(ranges(&[('0', '9')]), c == 'D'),
            'w' | 'W' => return set(word(), c == 'W'),
            's' | 'S' => return set(white_space(), c == 'S'),
            'p' | 'P' => return set(self.property()?, c == 'P'),
            'b' if in_class => 0x08,
            't' => 0x09,
            'n' => 0x0A,
            'v' => 0x0B,
            'f' => 0x0C,
            'r' => 0x0D,
            '0' => {
                if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    return self.fail("octal escapes are not supported");
                }
                0
            }
            '1'..='9' => return self.fail("decimal escapes are not supported in a class"),
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.pos += 1;
                    l as u32 % 32
                }
                _ => return self.fail("`\\c` must be followed by an ASCII letter"),
            },
            'x' => self.hex_digits(2)?,
            'u' => self.unicode_escape()?,
            c if c.is_ascii_alphanumeric() => {
                self.pos -= 1;
                return self.fail(&format!("unknown escape `\\{c}`"));
            }
            // Identity escape (`\.`, `\/`, `\-`, and, as Annex B allows, any other non-letter).
            c => c as u32,
        };
        Ok(ClassAtom::Char(code))
    }

    fn hex_digits(&mut self, count: usize) -> Result<u32, PatternError> {
        let mut value = 0;
        for _ in 0..count {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    value = value * 16 + d;
                    self.pos += 1;
                }
                None => return self.fail("incomplete hexadecimal escape"),
            }
        }
        Ok(value)
    }

    /// After `\u`: `XXXX`, a surrogate pair `XXXX\uXXXX` (one code point), or `{X..}`.
    fn unicode_escape(&mut self) -> Result<u32, PatternError> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                value = value.saturating_mul(16).saturating_add(d);
                digits += 1;
                self.pos += 1;
            }
            if digits == 0 || !self.eat('}') {
                return self.fail("malformed `\\u{...}` escape");
            }
            if value > MAX_SCALAR {
                return self.fail("`\\u{...}` escape beyond U+10FFFF");
            }
            return Ok(value);
        }
        let unit = self.hex_digits(4)?;
        if (0xD800..0xDC00).contains(&unit) && self.looking_at("\\u") {
            let save = self.pos;
            self.pos += 2;
            if let Ok(low) = self.hex_digits(4) {
                if (0xDC00..0xE000).contains(&low) {
                    return Ok(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                }
            }
            self.pos = save;
        }
        Ok(unit)
    }

    /// After `\p` or `\P`: `{Name}` or `{Name=Value}`, with ECMA's property names.
    fn property(&mut self) -> Result<ClassUnicode, PatternError> {
        if !self.eat('{') {
            return self.fail("`\\p` must be followed by `{`");
        }
        let mut body = String::new();
        loop {
            match self.next()? {
                '}' => break,
                c if c.is_ascii_alphanumeric() || c == '_' || c == '=' => body.push(c),
                _ => return self.fail("malformed Unicode property escape"),
            }
        }
        match property_class(&body) {
            Some(class) => Ok(class),
            None => self.fail(&format!("unknown or unsupported Unicode property `{body}`")),
        }
    }

    /// After `[`.
    fn class(&mut self) -> Result<ClassUnicode, PatternError> {
        let negated = self.eat('^');
        let mut set = ClassUnicode::empty();
        loop {
            match self.peek() {
                None => return self.fail("unterminated character class"),
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let first = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let second = self.class_atom()?;
                match (first, second) {
                    (ClassAtom::Char(lo), ClassAtom::Char(hi)) => {
                        if lo > hi {
                            return self.fail("range out of order in character class");
                        }
                        set.union(&code_point_range(lo, hi));
                    }
                    // Annex B: a set at either end makes the `-` a literal.
                    (first, second) => {
                        for atom in [first, ClassAtom::Char('-' as u32), second] {
                            add(&mut set, atom);
                        }
                    }
                }
            } else {
                add(&mut set, first);
            }
        }
        if negated {
            set.negate();
        }
        Ok(set)
    }

    fn class_atom(&mut self) -> Result<ClassAtom, PatternError> {
        match self.next()? {
            '\\' => self.class_escape(true),
            c => Ok(ClassAtom::Char(c as u32)),
        }
    }
}

fn add(set: &mut ClassUnicode, atom: ClassAtom) {
    match atom {
        ClassAtom::Char(c) => set.union(&code_point_range(c, c)),
        ClassAtom::Set(other) => set.union(&other),
    }
}

/// The scalar values in `lo..=hi`: surrogate code points occur in no valid string, so they go.
fn code_point_range(lo: u32, hi: u32) -> ClassUnicode {
    let mut class = ClassUnicode::empty();
    for (a, b) in [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)] {
        if a <= b {
            if let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b)) {
                class.push(ClassUnicodeRange::new(a, b));
            }
        }
    }
    class
}

fn literal(code: u32) -> Hir {
    match char::from_u32(code) {
        Some(c) => Hir::literal(c.to_string().into_bytes()),
        // A lone surrogate: no valid string contains it.
        None => Hir::fail(),
    }
}

fn ranges(pairs: &[(char, char)]) -> ClassUnicode {
    ClassUnicode::new(pairs.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))
}

fn any_scalar() -> Hir {
    Hir::class(Class::Unicode(ranges(&[('\0', '\u{10FFFF}')])))
}

/// `.` without the `s` flag: anything but a line terminator.
fn dot() -> ClassUnicode {
    let mut class = line_terminators();
    class.negate();
    class
}

fn line_terminators() -> ClassUnicode {
    ranges(&[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')])
}

fn word() -> ClassUnicode {
    ranges(&[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')])
}

/// ECMA's WhiteSpace (tab, VT, FF, ZWNBSP and the Zs category) and LineTerminator.
fn white_space() -> ClassUnicode {
    let mut class = ranges(&[
        ('\t', '\r'),
        (' ', ' '),
        ('\u{A0}', '\u{A0}'),
        ('\u{1680}', '\u{1680}'),
        ('\u{2000}', '\u{200A}'),
        ('\u{202F}', '\u{202F}'),
        ('\u{205F}', '\u{205F}'),
        ('\u{3000}', '\u{3000}'),
        ('\u{FEFF}', '\u{FEFF}'),
    ]);
    class.union(&line_terminators());
    class
}

/// General_Category values and their aliases, as ECMA-262 spells them.
#[rustfmt::skip]
const GENERAL_CATEGORIES: &[&str] = &[
    "C", "Other", "Cc", "Control", "cntrl", "Cf", "Format", "Cn", "Unassigned", "Co", "Private_Use", "Cs",
    "Surrogate", "L", "Letter", "LC", "Cased_Letter", "Ll", "Lowercase_Letter", "Lm", "Modifier_Letter", "Lo",
    "Other_Letter", "Lt", "Titlecase_Letter", "Lu", "Uppercase_Letter", "M", "Mark", "Combining_Mark", "Mc",
    "Spacing_Mark", "Me", "Enclosing_Mark", "Mn", "Nonspacing_Mark", "N", "Number", "Nd", "Decimal_Number", "digit",
    "Nl", "Letter_Number", "No", "Other_Number", "P", "Punctuation", "punct", "Pc", "Connector_Punctuation", "Pd",
    "Dash_Punctuation", "Pe", "Close_Punctuation", "Pf", "Final_Punctuation", "Pi", "Initial_Punctuation", "Po",
    "Other_Punctuation", "Ps", "Open_Punctuation", "S", "Symbol", "Sc", "Currency_Symbol", "Sk", "Modifier_Symbol",
    "Sm", "Math_Symbol", "So", "Other_Symbol", "Z", "Separator", "Zl", "Line_Separator", "Zp",
    "Paragraph_Separator", "Zs", "Space_Separator",
];

/// Binary properties ECMA-262 allows in `\p{..}`, with their short aliases.
#[rustfmt::skip]
const BINARY_PROPERTIES: &[&str] = &[
    "ASCII", "ASCII_Hex_Digit", "AHex", "Alphabetic", "Alpha", "Any", "Assigned", "Bidi_Control", "Bidi_C",
    "Bidi_Mirrored", "Bidi_M", "Case_Ignorable", "CI", "Cased", "Changes_When_Casefolded", "CWCF",
    "Changes_When_Casemapped", "CWCM", "Changes_When_Lowercased", "CWL", "Changes_When_NFKC_Casefolded", "CWKCF",
    "Changes_When_Titlecased", "CWT", "Changes_When_Uppercased", "CWU", "Dash", "Default_Ignorable_Code_Point",
    "DI", "Deprecated", "Dep", "Diacritic", "Dia", "Emoji", "Emoji_Component", "EComp", "Emoji_Modifier", "EMod",
    "Emoji_Modifier_Base", "EBase", "Emoji_Presentation", "EPres", "Extended_Pictographic", "ExtPict", "Extender",
    "Ext", "Grapheme_Base", "Gr_Base", "Grapheme_Extend", "Gr_Ext", "Hex_Digit", "Hex", "IDS_Binary_Operator",
    "IDSB", "IDS_Trinary_Operator", "IDST", "ID_Continue", "IDC", "ID_Start", "IDS", "Ideographic", "Ideo",
    "Join_Control", "Join_C", "Logical_Order_Exception", "LOE", "Lowercase", "Lower", "Math",
    "Noncharacter_Code_Point", "NChar", "Pattern_Syntax", "Pat_Syn", "Pattern_White_Space", "Pat_WS",
    "Quotation_Mark", "QMark", "Radical", "Regional_Indicator", "RI", "Sentence_Terminal", "STerm", "Soft_Dotted",
    "SD", "Terminal_Punctuation", "Term", "Unified_Ideograph", "UIdeo", "Uppercase", "Upper", "Variation_Selector",
    "VS", "White_Space", "space", "XID_Continue", "XIDC", "XID_Start", "XIDS",
];

/// The class of a `\p{..}` body, when ECMA-262 knows the name and regex-syntax's Unicode tables
/// have it. Names are checked exactly (ECMA is case-sensitive, regex-syntax is not); script
/// values must have the capitalised shape of Unicode's names and codes and be known to
/// regex-syntax.
fn property_class(body: &str) -> Option<ClassUnicode> {
    let query = match body.split_once('=') {
        Some((name, value)) => {
            let valid = match name {
                "General_Category" | "gc" => GENERAL_CATEGORIES.contains(&value),
                "Script" | "sc" | "Script_Extensions" | "scx" => is_script_shaped(value),
                _ => false,
            };
            if !valid {
                return None;
            }
            let short = match name {
                "General_Category" | "gc" => "gc",
                "Script" | "sc" => "sc",
                _ => "scx",
            };
            format!("{short}={value}")
        }
        None if GENERAL_CATEGORIES.contains(&body) => format!("gc={body}"),
        None if BINARY_PROPERTIES.contains(&body) => body.to_string(),
        None => return None,
    };
    let hir = regex_syntax::ParserBuilder::new().build().parse(&format!("\\p{{{query}}}")).ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
        _ => None,
    }
}

fn is_script_shaped(value: &str) -> bool {
    !value.is_empty()
        && value.split('_').all(|word| {
            let mut chars = word.chars();
            chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphabetic())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language(pattern: &str) -> ByteDfa {
        pattern_language(pattern, 100_000).unwrap_or_else(|e| panic!("{pattern}: {e}"))
    }

    fn check(pattern: &str, cases: &[(&str, bool)]) {
        let dfa = language(pattern);
        for &(text, want) in cases {
            assert_eq!(dfa.matches(text.as_bytes()), want, "pattern {pattern:?} on {text:?}");
        }
    }

    fn rejected(pattern: &str) -> String {
        match pattern_language(pattern, 100_000) {
            Ok(_) => panic!("{pattern:?} should be rejected"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn search_is_unanchored_unless_anchored() {
        check("a", &[("a", true), ("xax", true), ("", false), ("b", false)]);
        check("^a", &[("ab", true), ("ba", false)]);
        check("a$", &[("ba", true), ("ab", false)]);
        check("^a$", &[("a", true), ("aa", false), ("", false)]);
        check("^$", &[("", true), ("a", false)]);
        check("^a|b$", &[("ax", true), ("xb", true), ("xa", false), ("bx", false)]);
        check("(^|x)y", &[("y", true), ("xy", true), ("zy", false)]);
        check("a*", &[("", true), ("zzz", true)]);
        check("x^", &[("x", false), ("", false)]);
        check("$^", &[("", true), ("a", false)]);
    }

    #[test]
    fn ecma_classes_are_ascii_and_dot_excludes_line_terminators() {
        check("^\\d$", &[("5", true), ("\u{661}", false)]);
        check("^\\w+$", &[("a_Z9", true), ("é", false)]);
        check("^\\W$", &[("é", true), ("_", false)]);
        check("^\\s$", &[("\u{2028}", true), ("\u{FEFF}", true), ("\u{A0}", true), ("\u{85}", false), ("x", false)]);
        check("^\\S$", &[("\u{85}", true), (" ", false)]);
        check("^.$", &[("😀", true), ("\n", false), ("\r", false), ("\u{2029}", false), ("\u{85}", true)]);
        check("^[^]$", &[("\n", true)]);
        check("[]", &[("", false), ("a", false)]);
        check("^[^\\d\\s]$", &[("a", true), ("1", false), ("\t", false)]);
    }

    #[test]
    fn escapes_and_code_points() {
        check("^\\u0041\\x42\\u{43}\\cJ\\0$", &[("ABC\n\0", true)]);
        check("^\\uD83D\\uDE00$", &[("😀", true)]);
        check("^[\\uD83D\\uDE00-\\uD83D\\uDE4F]$", &[("😀", true), ("🙏", true), ("🙐", false)]);
        check("^\\uD83D$", &[("😀", false), ("", false)]);
        check("^[\\s\\S]$", &[("😀", true)]);
        check("^\\.\\/\\-\\@$", &[("./-@", true)]);
        check("^[\\b]$", &[("\u{8}", true), ("b", false)]);
        check("^\\p{Lu}\\P{L}$", &[("A1", true), ("a1", false), ("AB", false)]);
        check("^\\p{Script=Greek}+$", &[("αβ", true), ("ab", false)]);
        check("^\\p{ASCII_Hex_Digit}$", &[("f", true), ("g", false)]);
    }

    #[test]
    fn quantifiers_and_annex_b_literals() {
        check("^a{2,3}?$", &[("a", false), ("aa", true), ("aaa", true), ("aaaa", false)]);
        check("^a{2}$", &[("aa", true), ("aaa", false)]);
        check("^a{2,}$", &[("aaaaa", true), ("a", false)]);
        check("^a{,2}$", &[("a{,2}", true), ("aa", false)]);
        check("^{a}$", &[("{a}", true)]);
        check("^a]$", &[("a]", true)]);
        check("^[\\w-.]+$", &[("a-.", true), ("+", false)]);
        check("^[a-]$", &[("-", true), ("a", true), ("b", false)]);
        check("^[--0]$", &[("/", true), ("1", false)]);
        check("^(?:ab)+(?<n>c)?$", &[("abab", true), ("ababc", true), ("abc c", false)]);
    }

    #[test]
    fn word_boundaries_are_exact() {
        check("\\bfoo\\b", &[("foo", true), ("a foo.", true), ("foobar", false), ("_foo", false), ("éfooé", true)]);
        check("\\Bo\\B", &[("foo", true), ("fo", false), ("oo", false), ("o", false)]);
        check("^\\b$", &[("", false)]);
        check("^\\B$", &[("", true)]);
    }

    #[test]
    fn unsupported_and_malformed_patterns_are_rejected() {
        for (pattern, why) in [
            ("(a)\\1", "backreference"),
            ("(?<n>a)\\k<n>", "backreference"),
            // Lookaheads are supported only at the start.
            ("a(?=b)", "lookahead"),
            ("^((?!a).)*$", "lookahead"),
            ("^(?=a)b|c", "top-level alternation"),
            ("(?=\\ba)", "word boundaries"),
            ("(?<=a)b", "lookbehind"),
            ("(?<!a)b", "lookbehind"),
            ("(?i)a", "unsupported group"),
            ("(a", "missing"),
            ("a)", "unmatched"),
            ("[z-a]", "out of order"),
            ("a{3,2}", "out of order"),
            ("*a", "nothing to repeat"),
            ("a**", "nothing to repeat"),
            ("{2}", "nothing to repeat"),
            ("^*", "nothing to repeat"),
            ("[a", "unterminated"),
            ("\\a", "unknown escape"),
            ("\\Z", "unknown escape"),
            ("\\x4", "hexadecimal"),
            ("\\01", "octal"),
            ("\\p{Greek}", "property"),
            ("\\p{letter}", "property"),
            ("\\", "end of pattern"),
        ] {
            let message = rejected(pattern);
            assert!(message.contains(why), "{pattern:?}: {message}");
        }
    }

    #[test]
    fn trimming_the_search_ends_keeps_the_language() {
        for pattern in [
            "a{2,5}b*",
            "x?y+z{3,}",
            "(?:a|b*)c",
            "c(?:a|b*)",
            "^a*",
            "a*$",
            "\\ba*",
            "(a*b)+",
            "(a|bc)d{2,4}",
            "(?:a{2,3}|b)(c|d?)",
            "[a-z]{1,256}\\.[a-z]{2,6}",
            "(?:(?:a+)?b)?c",
            "x{0}",
            "(?:^a|b*)c",
        ] {
            let body = parse(pattern).unwrap();
            let untrimmed = search_dfa(body.clone());
            let trimmed = search_dfa(trim_end(trim_end(body, Side::Start), Side::End));
            assert!(trimmed.symmetric_difference(&untrimmed, 100_000).unwrap().is_empty_language(), "{pattern}");
        }
    }

    fn search_dfa(body: Hir) -> ByteDfa {
        let anything = Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(any_scalar()) });
        let nfa = Compiler::new().build_from_hir(&Hir::concat(vec![anything.clone(), body, anything])).unwrap();
        ByteDfa::from_nfa(&nfa, 100_000).unwrap()
    }

    #[test]
    fn state_limit_is_reported() {
        let message = pattern_language("a.{20}$", 1_000).unwrap_err().message;
        assert!(message.contains("limit of 1000 states"), "{message}");
    }
}
