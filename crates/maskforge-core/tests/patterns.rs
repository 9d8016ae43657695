//! The ECMA-262 pattern translator against an independent ECMA-262 engine (`regress`).
//!
//! Corpus: the `pattern` values and `patternProperties` keys of the JSON-Schema-Test-Suite, of
//! the JSONSchemaBench schemas when `../shared/schemas/jsonschemabench` (or
//! `$MASKFORGE_PATTERN_CORPUS`) exists, and hand-written tricky ones. For every pattern the
//! translator accepts, its language must agree with `regress` on a few hundred strings: random
//! ones over the pattern's own characters and a fixed Unicode mix, walks of the automaton itself
//! (mostly matches) and their one-character mutations (near misses).
//!
//! The oracle runs with the `u` flag, the mode JSON Schema asks for. Patterns that only the
//! lenient Annex B grammar allows (a literal `]` or `{`, `\-` outside a class, ...) fail to
//! compile there; they are checked against the non-`u` engine instead, on strings without
//! astral characters (where the two modes agree) and only when they use no `u`-only syntax.
//!
//! Run with `--nocapture` to see the figures.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use maskforge_core::low_level::ecma::pattern_language;
use maskforge_core::low_level::json_escapes::json_strings_decoding_to;
use maskforge_core::low_level::{ByteDfa, DEAD};

const MAX_STATES: usize = 20_000;
const STRINGS_PER_PATTERN: usize = 300;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A deterministic generator (SplitMix64), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

#[derive(Default)]
struct Corpus {
    /// Pattern -> strings from the suite's instances that go with it.
    patterns: BTreeMap<String, Vec<String>>,
    origin: HashMap<String, &'static str>,
}

impl Corpus {
    fn add(&mut self, pattern: &str, origin: &'static str) {
        self.patterns.entry(pattern.to_string()).or_default();
        self.origin.entry(pattern.to_string()).or_insert(origin);
    }
}

/// Every `pattern` string and `patternProperties` key under `value`.
fn patterns_in(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("pattern", serde_json::Value::String(p)) => out.push(p.clone()),
                    ("patternProperties", serde_json::Value::Object(props)) => out.extend(props.keys().cloned()),
                    _ => {}
                }
                patterns_in(item, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| patterns_in(v, out)),
        _ => {}
    }
}

/// Every string and object key in an instance.
fn strings_in(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                out.push(key.clone());
                strings_in(item, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        _ => {}
    }
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn suite_corpus(corpus: &mut Corpus) {
    let dir = repo_root().join("tests/data/JSON-Schema-Test-Suite/tests");
    let mut files = Vec::new();
    json_files(&dir, &mut files);
    assert!(!files.is_empty(), "the JSON-Schema-Test-Suite is missing under {}", dir.display());
    for file in files {
        let Some(serde_json::Value::Array(cases)) = read_json(&file) else { continue };
        for case in &cases {
            let mut patterns = Vec::new();
            patterns_in(&case["schema"], &mut patterns);
            let mut instances = Vec::new();
            for test in case["tests"].as_array().into_iter().flatten() {
                strings_in(&test["data"], &mut instances);
            }
            for pattern in patterns {
                corpus.add(&pattern, "suite");
                corpus.patterns.get_mut(&pattern).unwrap().extend(instances.iter().cloned());
            }
        }
    }
}

/// JSONSchemaBench, when it is there: how many of its distinct patterns were taken (an
/// unoptimised build takes every eighth, since translating all of them there takes minutes), and
/// of how many.
fn bench_corpus(corpus: &mut Corpus) -> Option<(usize, usize)> {
    let dir = std::env::var_os("MASKFORGE_PATTERN_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/schemas/jsonschemabench"));
    let mut files = Vec::new();
    json_files(&dir, &mut files);
    if files.is_empty() {
        return None;
    }
    let mut patterns = Vec::new();
    for file in &files {
        if let Some(schema) = read_json(file) {
            patterns_in(&schema, &mut patterns);
        }
    }
    patterns.sort();
    patterns.dedup();
    let stride = if cfg!(debug_assertions) { 8 } else { 1 };
    for pattern in patterns.iter().step_by(stride) {
        corpus.add(pattern, "jsonschemabench");
    }
    Some((patterns.len().div_ceil(stride), patterns.len()))
}

#[rustfmt::skip]
const HAND_WRITTEN: &[&str] = &[
    "", "^", "$", "^$", "^a|b$", "a$", "^a", "x^", "$^", "(^|,)x(,|$)", "\\bfoo\\b", "\\Bo\\B", "^\\b", "\\b$",
    "^\\w+@\\w+\\.com$", "[^]", "[]", "[]a]", "a]", "a{,3}", "{", "}", "^{$", "a{1,2}{", "x{2,3}?y",
    "^(?:a|b)*c+?$", "(?<year>\\d{4})-(?<month>\\d\\d)", "\\u{1F600}", "^\\u{1F600}+$", "^\\uD83D\\uDE00$",
    "\\uD83D", "^[\\uD83D\\uDE00-\\uD83D\\uDE4F]+$", "^[^\\uD800-\\uDFFF]$", "\\p{L}", "^\\p{Lu}+$", "^\\P{L}*$",
    "\\p{Script=Greek}", "^\\p{sc=Cyrl}+$", "\\p{Emoji}", "^[\\p{L}\\p{N}_-]+$", "^\\p{digit}+$", "\\p{Letter}cole",
    "^\\p{gc=Nd}$", "\\p{General_Category=Letter}", "^[^\\p{L}]$", "^\\p{Any}$", "^\\p{ASCII}*$", "^\\s*$", "\\S",
    "^.$", "^..$", "^.{2,3}$", "[\\s\\S]", "^[\\d-z]$", "^[\\w-.]+$", "^[a-\\d]$", "a\\/b", "\\cJ", "^\\cc$", "\\0",
    "[\\0-\\x1f]", "^[\\x00-\\x7f]*$", "é+", "^\\t\\n\\v\\f\\r$", "^[\\b]$", "^(a|ab)(c|bcd)(d*)$", "(a*)*b",
    "^(?:(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)$", "\\d{3}-\\d{4}",
    "^[A-Z]{2}\\d{2}[A-Z0-9]{1,30}$", "^\\u00e9$", "^\\xe9$", "^[^a-z]$", "^[^\\W\\d]$", "\\$\\^",
    "^\\*\\+\\?\\.\\(\\)\\[\\]\\{\\}\\|$", "^a{0}$", "^(?:)$", "a||b", "(|a)b", "^\\u2028$", "^[\\u2028\\u2029]$",
    "\\p{Lowercase}", "^[--0]+$", "^[a-]$", "^\\-\\@\\_\\ $", "^[\\]\\-\\\\]$", "^(?:a+)+$", "^[\\s\\d]{2}$",
    "^\\S+\\s\\S+$", "^\\W\\w\\W$", "a\\b\\.", "^[^\\s]*$", "^\\D+$", "(?:a{2}){2,}", "^(ab|a)*$", "^[😀-😂]$",
    "^😀{2}$", "^[^😀]$", "^[é-ü]+$", "^\\u{10FFFF}$", "^[\\u{10000}-\\u{10FFFF}]$",
    // Leading lookaheads, anchored and not.
    "^(?!foo)[a-z]+$", "^(?=.*\\d)(?=.*[A-Z]).{8,}$", "(?=.*\\d)(?=.*[a-z])\\w{4}", "^(?=a)", "(?!ab)a.",
    "^(?!.*\\.\\.)[a-z.]+$", "(?=[a-c])[b-d]", "^(?=(a|b))(?!ba)..$", "(?!)", "(?=)x",
];

/// Characters worth trying on every pattern: word and non-word ASCII, ECMA white space and line
/// terminators, non-ASCII letters and digits, code point edges, astral characters.
#[rustfmt::skip]
const MIX: &[char] = &[
    'a', 'b', 'z', 'A', 'Z', '0', '1', '9', '_', '-', '.', '@', '/', ' ', '\t', '\n', '\r', '\u{b}', '\u{c}', '\0',
    '\u{1f}', '\u{7f}', '\u{80}', '\u{85}', '\u{a0}', 'é', 'ß', 'Ω', 'ж', 'α', '٣', '中', '한', '\u{1680}',
    '\u{2003}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{3000}', '\u{feff}', '\u{d7ff}', '\u{e000}', '\u{fffd}',
    '\u{ffff}', '😀', '🙏', '\u{10000}', '\u{10ffff}', '"', '\\', '{', '}', '[', ']', '$', '^', '(', ')', '|', '+',
    '*', '?',
];

/// The characters a pattern mentions, literally or through `\x`/`\u` escapes, and their
/// neighbours (range ends and just outside them).
fn pattern_chars(pattern: &str) -> Vec<char> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out: Vec<char> = Vec::new();
    let push_near = |code: u32, out: &mut Vec<char>| {
        for c in [code.wrapping_sub(1), code, code + 1] {
            out.extend(char::from_u32(c));
        }
    };
    let hex = |s: &[char]| -> Option<u32> { u32::from_str_radix(&s.iter().collect::<String>(), 16).ok() };
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' && i + 1 < chars.len() {
            match chars[i + 1] {
                'x' if i + 4 <= chars.len() => {
                    if let Some(v) = hex(&chars[i + 2..i + 4]) {
                        push_near(v, &mut out);
                    }
                }
                'u' if chars.get(i + 2) == Some(&'{') => {
                    if let Some(end) = chars[i..].iter().position(|&c| c == '}') {
                        if let Some(v) = hex(&chars[i + 3..i + end]) {
                            push_near(v, &mut out);
                        }
                    }
                }
                'u' if i + 6 <= chars.len() => {
                    if let Some(v) = hex(&chars[i + 2..i + 6]) {
                        push_near(v, &mut out);
                        // Surrogate-pair escapes: the code point they spell.
                        if (0xD800..0xDC00).contains(&v) && chars.get(i + 6) == Some(&'\\') && i + 12 <= chars.len() {
                            if let Some(low) = hex(&chars[i + 8..i + 12]) {
                                push_near(
                                    0x10000 + ((v - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF),
                                    &mut out,
                                );
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        push_near(chars[i] as u32, &mut out);
        i += 1;
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Test strings for one pattern: random ones, walks of the automaton, and mutations of both.
fn test_strings(dfa: &ByteDfa, pool: &[char], extra: &[String], rng: &mut Rng) -> Vec<String> {
    let mut out: Vec<String> = extra.to_vec();
    let random_char = |rng: &mut Rng| if !pool.is_empty() && rng.chance(50) { rng.pick(pool) } else { rng.pick(MIX) };
    let mut buf = [0u8; 4];
    while out.len() < STRINGS_PER_PATTERN / 3 {
        let len = rng.below(12);
        out.push((0..len).map(|_| random_char(rng)).collect());
    }
    // Walks: extend with characters that keep the automaton alive, stop at random once accepting.
    let candidates: Vec<char> = pool.iter().chain(MIX).copied().collect();
    let mut walks = Vec::new();
    while walks.len() < STRINGS_PER_PATTERN / 3 {
        let mut text = String::new();
        let mut state = dfa.start();
        // Short walks: backtracking engines are exponential on some corpus patterns.
        for _ in 0..16 {
            if state == DEAD || (dfa.is_accepting(state) && rng.chance(25)) {
                break;
            }
            // A few random tries rather than every candidate: cheap, and still mostly alive.
            let step = (0..16).find_map(|_| {
                let c = rng.pick(&candidates);
                let next = dfa.run(state, c.encode_utf8(&mut buf).as_bytes());
                (next != DEAD).then_some((c, next))
            });
            let Some((c, next)) = step else { break };
            text.push(c);
            state = next;
        }
        walks.push(text);
    }
    out.extend(walks.iter().cloned());
    while out.len() < STRINGS_PER_PATTERN {
        let mut chars: Vec<char> = walks[rng.below(walks.len())].chars().collect();
        let at = rng.below(chars.len() + 1);
        let last = chars.len().saturating_sub(1);
        match rng.below(3) {
            0 if !chars.is_empty() => {
                chars.remove(at.min(last));
            }
            1 if !chars.is_empty() => chars[at.min(last)] = random_char(rng),
            _ => chars.insert(at, random_char(rng)),
        }
        out.push(chars.into_iter().collect());
    }
    out
}

/// The oracle for a pattern, in the mode it compiles in.
enum Oracle {
    Unicode(regress::Regex),
    /// Annex B syntax: the non-`u` engine, trusted on BMP strings only.
    Legacy(regress::Regex),
}

fn oracle(pattern: &str) -> Option<Oracle> {
    if let Ok(re) = regress::Regex::with_flags(pattern, "u") {
        return Some(Oracle::Unicode(re));
    }
    // `\u{..}` and `\p{..}` mean something else without `u`.
    if pattern.contains("\\u{") || pattern.contains("\\p") || pattern.contains("\\P") {
        return None;
    }
    regress::Regex::with_flags(pattern, "").ok().map(Oracle::Legacy)
}

/// A pattern cut for printing.
fn shorten(pattern: &str) -> String {
    let mut out: String = pattern.chars().take(100).collect();
    if out.len() < pattern.len() {
        out.push('…');
    }
    out
}

/// The reason of a rejection without its position, for the histogram.
fn reason(message: &str) -> String {
    message.split(" (at character").next().unwrap_or(message).to_string()
}

#[derive(Default)]
struct Figures {
    patterns: usize,
    translated: usize,
    checked_unicode: usize,
    checked_legacy: usize,
    unchecked: Vec<String>,
    rejected: BTreeMap<String, Vec<String>>,
    rejected_valid_ecma: usize,
    strings: usize,
    matches: usize,
    disagreements: Vec<String>,
    translate_time: Duration,
    slowest: (Duration, String),
    slowest_oracle: (Duration, String),
}

#[test]
fn translator_agrees_with_an_ecma_engine_on_the_corpus() {
    let mut corpus = Corpus::default();
    suite_corpus(&mut corpus);
    let bench = bench_corpus(&mut corpus);
    match bench {
        None => println!("JSONSchemaBench corpus absent: checking the suite's and hand-written patterns only"),
        Some((taken, all)) => println!("JSONSchemaBench: {taken} of its {all} distinct patterns"),
    }
    for pattern in HAND_WRITTEN {
        corpus.add(pattern, "hand-written");
    }
    let mut figures = Figures::default();
    let mut rng = Rng(0x5EED);
    for (pattern, extra) in &corpus.patterns {
        figures.patterns += 1;
        let started = Instant::now();
        let translated = pattern_language(pattern, MAX_STATES);
        let spent = started.elapsed();
        figures.translate_time += spent;
        if spent > figures.slowest.0 {
            figures.slowest = (spent, pattern.clone());
        }
        let oracle = oracle(pattern);
        let dfa = match translated {
            Ok(dfa) => dfa,
            Err(e) => {
                if regress::Regex::with_flags(pattern, "u").is_ok() {
                    figures.rejected_valid_ecma += 1;
                }
                figures.rejected.entry(reason(&e.message)).or_default().push(pattern.clone());
                continue;
            }
        };
        figures.translated += 1;
        let Some(oracle) = oracle else {
            figures.unchecked.push(pattern.clone());
            continue;
        };
        let pool = pattern_chars(pattern);
        let started = Instant::now();
        for text in test_strings(&dfa, &pool, extra, &mut rng) {
            let expected = match &oracle {
                Oracle::Unicode(re) => re.find(&text).is_some(),
                Oracle::Legacy(_) if text.chars().any(|c| c as u32 > 0xFFFF) => continue,
                Oracle::Legacy(re) => re.find(&text).is_some(),
            };
            let got = dfa.matches(text.as_bytes());
            figures.strings += 1;
            figures.matches += expected as usize;
            if got != expected && figures.disagreements.len() < 50 {
                figures.disagreements.push(format!("{pattern:?} on {text:?}: translator {got}, regress {expected}"));
            }
        }
        if started.elapsed() > figures.slowest_oracle.0 {
            figures.slowest_oracle = (started.elapsed(), pattern.clone());
        }
        match oracle {
            Oracle::Unicode(_) => figures.checked_unicode += 1,
            Oracle::Legacy(_) => figures.checked_legacy += 1,
        }
    }

    println!(
        "{} distinct patterns ({}), {} translated in {:.2?} (slowest {:.2?}: {:?}), {} rejected ({} of them valid ECMA-262 with `u`)",
        figures.patterns,
        if bench.is_some() { "suite, JSONSchemaBench, hand-written" } else { "suite, hand-written" },
        figures.translated,
        figures.translate_time,
        figures.slowest.0,
        shorten(&figures.slowest.1),
        figures.patterns - figures.translated,
        figures.rejected_valid_ecma,
    );
    println!(
        "checked against regress: {} with `u`, {} without (Annex B syntax), {} without an oracle; {} strings, {} of them matching (slowest check {:.2?}: {:?})",
        figures.checked_unicode,
        figures.checked_legacy,
        figures.unchecked.len(),
        figures.strings,
        figures.matches,
        figures.slowest_oracle.0,
        shorten(&figures.slowest_oracle.1),
    );
    for pattern in &figures.unchecked {
        println!("  no oracle: {:?}", shorten(pattern));
    }
    println!("rejections by reason:");
    for (why, patterns) in &figures.rejected {
        let examples: Vec<String> = patterns.iter().take(3).map(|p| shorten(p)).collect();
        println!("  {:5}  {why}   e.g. {examples:?}", patterns.len());
    }
    assert!(
        figures.disagreements.is_empty(),
        "{} disagreements with regress:\n{}",
        figures.disagreements.len(),
        figures.disagreements.join("\n")
    );
    // The hand-written corpus alone exercises every supported construct.
    assert!(figures.checked_unicode > 100, "too few patterns checked: {}", figures.checked_unicode);
}

/// Every spelling JSON allows for `value`, three ways: minimal escaping, everything as `\u`
/// escapes, and a random mix per character.
fn spellings(value: &str, rng: &mut Rng) -> Vec<String> {
    let escape_u = |c: char, upper: bool, out: &mut String| {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            let hex = format!("{unit:04x}");
            out.push_str("\\u");
            out.push_str(&if upper { hex.to_uppercase() } else { hex });
        }
    };
    let minimal = serde_json::to_string(value).unwrap();
    let mut all_u = String::from("\"");
    let mut mixed = String::from("\"");
    for c in value.chars() {
        escape_u(c, rng.chance(50), &mut all_u);
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let raw_ok = c >= ' ' && c != '"' && c != '\\';
        match rng.below(3) {
            0 if raw_ok => mixed.push(c),
            1 if short.is_some() => mixed.push_str(short.unwrap()),
            _ => escape_u(c, rng.chance(50), &mut mixed),
        }
    }
    all_u.push('"');
    mixed.push('"');
    vec![minimal, all_u, mixed]
}

#[test]
fn json_spellings_of_strings_follow_the_pattern() {
    let mut rng = Rng(0xE5C);
    let mut checked = 0;
    for pattern in HAND_WRITTEN.iter().take(60) {
        let Ok(decoded) = pattern_language(pattern, MAX_STATES) else { continue };
        let json = json_strings_decoding_to(&decoded, 200_000).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
        let pool = pattern_chars(pattern);
        for value in test_strings(&decoded, &pool, &[], &mut rng).iter().take(100) {
            let want = decoded.matches(value.as_bytes());
            for text in spellings(value, &mut rng) {
                assert_eq!(json.matches(text.as_bytes()), want, "{pattern:?}: {text}");
                checked += 1;
            }
        }
        // Text that is no JSON string at all.
        for bad in ["", "\"", "a", "\"\\x\"", "\"\\ud800\"", "\"\\u12\"", "\"\u{1}\""] {
            assert!(!json.matches(bad.as_bytes()), "{pattern:?}: {bad:?}");
        }
    }
    assert!(checked > 10_000, "only {checked} spellings checked");
    let json = json_strings_decoding_to(&pattern_language("^a$", 1_000).unwrap(), 1_000).unwrap();
    assert!(json.matches(br#""\u0061""#) && json.matches(br#""a""#));
    assert!(!json.matches(br#""\u0062""#) && !json.matches(br#""\u0061a""#));
}
