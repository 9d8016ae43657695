//! The string keywords (`minLength`, `maxLength`, `pattern`, `format`) as one language of JSON
//! string texts, shared by both arms.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::automata::{ecma, formats, json, json_escapes, ByteDfa};
use crate::error::{Diagnostic, DiagnosticCode};
use crate::options::{CompilerOptions, Draft};
use crate::schema::pointer_push;
use crate::schema::read::count;

/// Largest length bound unrolled into a string automaton.
pub(crate) const MAX_LENGTH_BOUND: u64 = 256;

/// Known formats without an exact regular language that no reader covers yet: asserting them
/// is diagnosed rather than approximated.
const NON_REGULAR_FORMATS: &[&str] = &["idn-email"];

/// A string language read by a syntax on the structured arm instead of an automaton.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum StringSyntax {
    /// ECMA-262 regular expression patterns (`format: "regex"`): parentheses nest without bound.
    Pattern,
    /// Host names (`format: "hostname"`): A-labels (`xn--`) must decode to valid IDNA2008
    /// U-labels, which no practical automaton checks.
    Hostname,
    /// Internationalized host names (`format: "idn-hostname"`): U-labels under the IDNA2008
    /// rules, which look across the label (contextual rules, Bidi) and at its Punycode length.
    IdnHostname,
}

impl StringSyntax {
    fn of_format(name: &str) -> Option<StringSyntax> {
        match name {
            "regex" => Some(StringSyntax::Pattern),
            "hostname" => Some(StringSyntax::Hostname),
            "idn-hostname" => Some(StringSyntax::IdnHostname),
            _ => None,
        }
    }

    /// The longest string of the syntax, in code points, if it has one: a host name is at most
    /// 253 octets, and each code point takes at least one.
    pub(crate) fn max_length(self) -> Option<u64> {
        match self {
            StringSyntax::Pattern => None,
            StringSyntax::Hostname | StringSyntax::IdnHostname => Some(253),
        }
    }
}

/// What the string keywords of one schema object admit.
#[derive(Debug, Clone)]
pub(crate) enum StringLanguage {
    /// No string keyword: every string.
    Any,
    /// The JSON texts (quotes included, every spelling) of the admitted strings.
    Texts(Arc<ByteDfa>),
    /// Every string whose length is in the range, a maximum of at most [`MAX_LENGTH_BOUND`]
    /// and no other string keyword: `texts` unrolls the range into an automaton (one state per
    /// position), which the regular arm reads; the structured arm counts code points instead
    /// where the automaton's states are not needed.
    Bounded { range: LengthRange, texts: Arc<ByteDfa> },
    /// Every string whose length is in the range, among the strings of `within` when it is set
    /// (a pattern or format), when a bound is too large to unroll into an automaton: the
    /// structured arm counts code points beside the automaton instead.
    Counted { range: LengthRange, within: Option<Arc<ByteDfa>> },
    /// Every string of a syntax with at least `min_length` code points (`format: "regex"`,
    /// `"hostname"` or `"idn-hostname"` asserted): languages the structured arm reads with a
    /// reader of their own.
    Syntax { syntax: StringSyntax, min_length: u64 },
    /// The patterns among the strings of an automaton (`format: "regex"` beside `pattern` or
    /// other string keywords): the structured arm decides which it can express.
    PatternsAmong(Arc<ByteDfa>),
}

/// String lengths in code points of the decoded value, `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct LengthRange {
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
}

impl LengthRange {
    pub(crate) fn intersect(&self, other: &LengthRange) -> Option<LengthRange> {
        let min = self.min.max(other.min);
        let max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        max.is_none_or(|max| min <= max).then_some(LengthRange { min, max })
    }

    /// The union, when it is one range (the two overlap or touch).
    pub(crate) fn union(&self, other: &LengthRange) -> Option<LengthRange> {
        let (low, high) = if self.min <= other.min { (self, other) } else { (other, self) };
        let touches = low.max.is_none_or(|max| max.saturating_add(1) >= high.min);
        let max = match (low.max, high.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        touches.then_some(LengthRange { min: low.min, max })
    }
}

fn keyword_diag(code: DiagnosticCode, pointer: &str, keyword: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, pointer_push(pointer, keyword), message).with_keyword(keyword)
}

/// Validates the keywords' shapes (always, so malformed schemas are diagnosed whatever the types).
pub(crate) fn check_string_keywords(map: &Map<String, Value>, pointer: &str, draft: Draft) -> Result<(), Diagnostic> {
    count(map, pointer, "minLength", draft)?;
    count(map, pointer, "maxLength", draft)?;
    for keyword in ["pattern", "format"] {
        if map.get(keyword).is_some_and(|v| !v.is_string()) {
            return Err(keyword_diag(
                DiagnosticCode::InvalidKeywordValue,
                pointer,
                keyword,
                format!("{keyword} must be a string"),
            ));
        }
    }
    Ok(())
}

/// The language of the string keywords, or the diagnostic saying why it cannot be built.
pub(crate) fn string_language(
    map: &Map<String, Value>,
    pointer: &str,
    draft: Draft,
    options: &CompilerOptions,
) -> Result<StringLanguage, Diagnostic> {
    check_string_keywords(map, pointer, draft)?;
    let max_states = options.limits.max_dfa_states;
    // Each part with the key it is cached under.
    let mut parts: Vec<(TextKey, Arc<ByteDfa>)> = Vec::new();
    let min = count(map, pointer, "minLength", draft)?;
    let max = count(map, pointer, "maxLength", draft)?;
    // Bounds too large to unroll are counted beside the automaton of the other keywords.
    let mut counted = None;
    // Bounds short enough to unroll, unless the pattern's or format's automaton is large.
    let mut short_bounds = None;
    if min.is_some() || max.is_some() {
        let min = min.unwrap_or(0);
        if max.is_some_and(|m| m < min) {
            return Ok(StringLanguage::Texts(Arc::new(ByteDfa::empty())));
        }
        let large = [("minLength", Some(min)), ("maxLength", max)]
            .into_iter()
            .find(|(_, bound)| bound.is_some_and(|b| b > MAX_LENGTH_BOUND));
        match large {
            Some((keyword, _)) => counted = Some((keyword, LengthRange { min, max })),
            None => short_bounds = Some(LengthRange { min, max }),
        }
    }
    if let Some(Value::String(pattern)) = map.get("pattern") {
        let key = TextKey::Pattern(pattern.clone());
        parts.push((
            key.clone(),
            cached_text(key, max_states, pointer, "pattern", || {
                let decoded =
                    ecma::pattern_language(pattern, max_states).map_err(|e| (pattern_error_code(&e), e.message))?;
                json_escapes::json_strings_decoding_to(&decoded, max_states).map_err(|_| {
                    (DiagnosticCode::ResourceLimit, format!("the pattern automaton exceeds {max_states} states"))
                })
            })?,
        ));
    }
    let mut syntax = None;
    if let Some(Value::String(name)) = map.get("format") {
        if options.format_assertion {
            syntax = StringSyntax::of_format(name);
            if NON_REGULAR_FORMATS.contains(&name.as_str()) {
                return Err(keyword_diag(
                    DiagnosticCode::UnsupportedKeyword,
                    pointer,
                    "format",
                    format!("format {name:?} is not a regular language and cannot be asserted exactly yet (set format_assertion to false to treat it as an annotation)"),
                ));
            }
            // Unknown formats are annotations, as the specification says.
            if formats::is_known_format(name) && syntax.is_none() {
                let dfa = formats::format_text_language(name, max_states)
                    .expect("a known format has a language")
                    .map_err(|e| keyword_diag(DiagnosticCode::ResourceLimit, pointer, "format", e.to_string()))?;
                parts.push((TextKey::Format(name.clone()), dfa));
            }
        }
    }
    if let Some(syntax @ (StringSyntax::Hostname | StringSyntax::IdnHostname)) = syntax {
        // Length bounds every host name meets say nothing more; others would need counting
        // beside the reader.
        let implied = min.unwrap_or(0) <= 1 && max.is_none_or(|max| Some(max) >= syntax.max_length());
        if map.contains_key("pattern") || !implied {
            return Err(keyword_diag(
                DiagnosticCode::UnsupportedKeyword,
                pointer,
                "format",
                "format \"hostname\" or \"idn-hostname\" together with pattern, or with length bounds that not every host name meets, is not supported yet",
            ));
        }
        return Ok(StringLanguage::Syntax { syntax, min_length: 0 });
    }
    if syntax == Some(StringSyntax::Pattern) {
        if counted.is_some() || max.is_some() {
            return Err(keyword_diag(
                DiagnosticCode::UnsupportedKeyword,
                pointer,
                "format",
                "format \"regex\" together with maxLength or a minLength above 256 is not supported yet",
            ));
        }
        // A minimum alone is counted beside the pattern reading; with other keywords it stays in
        // their automaton.
        let min_length = min.unwrap_or(0);
        if parts.is_empty() {
            return Ok(StringLanguage::Syntax { syntax: StringSyntax::Pattern, min_length });
        }
    }
    if let Some(range) = short_bounds {
        let narrower = match parts.is_empty() {
            true => None,
            false => {
                let key = match &parts[..] {
                    [(key, _)] => key.clone(),
                    _ => TextKey::Intersection(parts.iter().map(|(key, _)| key.clone()).collect()),
                };
                Some((key, intersection(std::mem::take(&mut parts), max_states, pointer)?))
            }
        };
        // The unrolled product has up to (the other keywords' states) x (the bound) states.
        let estimate = |n: usize| (n as u64).saturating_mul(range.max.unwrap_or(range.min).saturating_add(2));
        match narrower {
            Some(narrower)
                if range.max.is_some()
                    && estimate(narrower.1.state_count()) > options.limits.max_length_product_states as u64 =>
            {
                counted = Some(("maxLength", range));
                parts.push(narrower);
            }
            narrower => {
                parts.extend(narrower);
                let key = TextKey::Length(range.min, range.max, options.limits.max_nfa_states);
                parts.push((
                    key.clone(),
                    cached_text(key, max_states, pointer, "maxLength", || {
                        json::string_with_length_dfa(range.min as u32, range.max.map(|m| m as u32), max_states).map_err(
                            |_| {
                                (
                                    DiagnosticCode::ResourceLimit,
                                    format!("the length automaton exceeds {max_states} states"),
                                )
                            },
                        )
                    })?,
                ));
            }
        }
    }
    if let Some((keyword, range)) = counted {
        if parts.is_empty() {
            return Ok(StringLanguage::Counted { range, within: None });
        }
        // The counter answers "can the string still close within the maximum" from a table of
        // the automaton; a minimum must then be the automaton's own.
        if range.min > MAX_LENGTH_BOUND {
            return Err(keyword_diag(
                DiagnosticCode::ResourceLimit,
                pointer,
                keyword,
                format!("a minLength above {MAX_LENGTH_BOUND} together with pattern or format is not supported yet"),
            ));
        }
        if range.min > 0 {
            let key = TextKey::Length(range.min, None, options.limits.max_nfa_states);
            parts.push((
                key.clone(),
                cached_text(key, max_states, pointer, "minLength", || {
                    json::string_with_length_dfa(range.min as u32, None, max_states).map_err(|_| {
                        (DiagnosticCode::ResourceLimit, format!("the length automaton exceeds {max_states} states"))
                    })
                })?,
            ));
        }
        let within = intersection(parts, max_states, pointer)?;
        return Ok(StringLanguage::Counted { range: LengthRange { min: 0, max: range.max }, within: Some(within) });
    }
    if parts.is_empty() {
        return Ok(StringLanguage::Any);
    }
    let length_alone = matches!(&parts[..], [(TextKey::Length(..), _)]);
    let language = intersection(parts, max_states, pointer)?;
    if syntax == Some(StringSyntax::Pattern) {
        return Ok(StringLanguage::PatternsAmong(language));
    }
    match short_bounds {
        Some(range) if length_alone && range.max.is_some() => Ok(StringLanguage::Bounded { range, texts: language }),
        _ => Ok(StringLanguage::Texts(language)),
    }
}

/// The strings every part admits (at least one part), cached by the parts' keys.
fn intersection(
    mut parts: Vec<(TextKey, Arc<ByteDfa>)>,
    max_states: usize,
    pointer: &str,
) -> Result<Arc<ByteDfa>, Diagnostic> {
    if parts.len() == 1 {
        return Ok(parts.pop().expect("one part").1);
    }
    let key = TextKey::Intersection(parts.iter().map(|(key, _)| key.clone()).collect());
    cached(key, max_states, || {
        let mut parts = parts.into_iter().map(|(_, part)| part);
        let first = parts.next().expect("several parts");
        parts.try_fold(first, |language, part| {
            let both = language.intersect(&part, max_states).map_err(|e| {
                (DiagnosticCode::ResourceLimit, format!("the string automaton exceeds {} states", e.limit))
            })?;
            Ok(Arc::new(both))
        })
    })
    .map_err(|(code, message)| Diagnostic::new(code, pointer, message))
}

/// What a cached text automaton was built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum TextKey {
    /// Bounds, and the NFA limit the build ran under.
    Length(u64, Option<u64>, usize),
    Pattern(String),
    Format(String),
    /// The intersection of the parts with these keys.
    Intersection(Vec<TextKey>),
    /// The decoded strings (not their texts) a pattern matches.
    DecodedPattern(String),
    /// Every spelling of these strings (an `enum` or `const`).
    Literals(Vec<String>),
}

type CachedText = Result<Arc<ByteDfa>, (DiagnosticCode, String)>;

/// The cached automata by (source, state limit), their keys oldest first, and their heap bytes.
#[derive(Default)]
struct TextCache {
    entries: HashMap<(TextKey, usize), (CachedText, usize)>,
    oldest_first: VecDeque<(TextKey, usize)>,
    bytes: usize,
}

impl TextCache {
    /// Adds an entry, first dropping the oldest ones until it fits in `budget` (an entry
    /// larger than the budget alone is not kept).
    fn insert(&mut self, key: (TextKey, usize), result: CachedText, size: usize, budget: usize) {
        if size > budget || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + size > budget {
            let Some(oldest) = self.oldest_first.pop_front() else { break };
            if let Some((_, freed)) = self.entries.remove(&oldest) {
                self.bytes -= freed;
            }
        }
        self.bytes += size;
        self.oldest_first.push_back(key.clone());
        self.entries.insert(key, (result, size));
    }
}

/// The text automaton of a pattern, format or length bound, built once per process (see
/// [`cached`]); a failure is diagnosed at `keyword`.
fn cached_text(
    key: TextKey,
    max_states: usize,
    pointer: &str,
    keyword: &str,
    build: impl FnOnce() -> Result<ByteDfa, (DiagnosticCode, String)>,
) -> Result<Arc<ByteDfa>, Diagnostic> {
    cached(key, max_states, || build().map(Arc::new))
        .map_err(|(code, message)| keyword_diag(code, pointer, keyword, message))
}

/// The automata of string keywords, built once per process: the texts of patterns, formats,
/// length bounds, their intersections and enums, and the decoded keys of `patternProperties`.
/// Schemas repeat them (one `date-time` format per timestamp field, one `maxLength` beside one
/// `pattern` in many fields, one enum referenced from several places) and both arms ask for
/// them. Failures are cached too. Past its budget the oldest entries make room (first in, first
/// out) rather than the whole cache going at once, which made the schema after a flush rebuild
/// every pattern it shares with the ones before.
fn cached(key: TextKey, max_states: usize, build: impl FnOnce() -> CachedText) -> CachedText {
    static CACHE: Mutex<Option<TextCache>> = Mutex::new(None);
    const BUDGET_BYTES: usize = 64 << 20;
    let key = (key, max_states);
    let hit = CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|c| c.entries.get(&key).map(|(result, _)| result.clone()));
    match hit {
        Some(result) => result,
        None => {
            let result = build();
            let size = result.as_ref().map_or(64, |dfa| dfa.heap_bytes());
            let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            guard.get_or_insert_with(TextCache::default).insert(key, result.clone(), size, BUDGET_BYTES);
            result
        }
    }
}

/// The decoded strings `pattern` matches (the keys of a `patternProperties` entry), built once
/// per process; a failure is diagnosed at `pointer` with the keyword `keyword`.
pub(crate) fn cached_pattern_keys(
    pattern: &str,
    max_states: usize,
    pointer: &str,
    keyword: &str,
) -> Result<Arc<ByteDfa>, Diagnostic> {
    cached(TextKey::DecodedPattern(pattern.to_string()), max_states, || {
        ecma::pattern_language(pattern, max_states).map(Arc::new).map_err(|e| (pattern_error_code(&e), e.message))
    })
    .map_err(|(code, message)| Diagnostic::new(code, pointer, message).with_keyword(keyword))
}

/// The JSON texts of `values` (an `enum`'s strings), built once per process: schemas repeat
/// their enums. `None` when the automaton would exceed `max_states`.
pub(crate) fn cached_literal_texts(values: &[&str], max_states: usize) -> Option<Arc<ByteDfa>> {
    let key = TextKey::Literals(values.iter().map(|v| v.to_string()).collect());
    cached(key, max_states, || {
        json_escapes::json_literal_strings(values, max_states)
            .map(Arc::new)
            .map_err(|e| (DiagnosticCode::ResourceLimit, e.to_string()))
    })
    .ok()
}

/// The diagnostic code of a pattern without a language here: too large, or unsupported syntax.
pub(crate) fn pattern_error_code(error: &ecma::PatternError) -> DiagnosticCode {
    if error.limit_exceeded {
        DiagnosticCode::ResourceLimit
    } else {
        DiagnosticCode::UnsupportedPattern
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_cache_drops_its_oldest_entries_to_make_room() {
        let mut cache = TextCache::default();
        let key = |p: &str| (TextKey::Pattern(p.to_string()), 1);
        let entry = || Ok(Arc::new(ByteDfa::empty()));
        for p in ["a", "b", "c"] {
            cache.insert(key(p), entry(), 40, 100);
        }
        // "c" did not fit beside "a" and "b": only the oldest went.
        assert!(!cache.entries.contains_key(&key("a")));
        assert!(cache.entries.contains_key(&key("b")) && cache.entries.contains_key(&key("c")));
        assert_eq!(cache.bytes, 80);
        // An entry larger than the whole budget is not kept, and nothing is dropped for it.
        cache.insert(key("d"), entry(), 101, 100);
        assert!(!cache.entries.contains_key(&key("d")));
        assert_eq!((cache.bytes, cache.entries.len(), cache.oldest_first.len()), (80, 2, 2));
    }
}
