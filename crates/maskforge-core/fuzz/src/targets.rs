//! Fuzz target bodies. Each takes arbitrary bytes and panics only on a bug: a panic inside
//! maskforge-core, a mask that disagrees with `is_allowed` or `advance`, a dead end (an empty
//! mask before EOS), an accepted text that is not JSON, a forbidden token that changes the
//! session, or a pattern verdict that differs from an ECMA-262 engine (`regress`).
//!
//! Compilation runs under limits well below the defaults so that one input stays within
//! milliseconds; a limit reached is a typed error, which is a fine outcome.

use std::sync::{Arc, OnceLock};

use maskforge_core::{
    build_vocabulary, BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, SchemaResourceLimits, TokenId,
    Vocabulary,
};
use serde_json::{json, Value};

/// Tokens of the fuzzing vocabulary beyond the 256 single bytes: overlapping multi-byte pieces
/// as real vocabularies have them (across structure, inside strings and numbers).
const MULTI_BYTE_TOKENS: &[&str] = &[
    "{\"",
    "\":",
    "\",",
    "\"}",
    "\":\"",
    "true",
    "false",
    "null",
    "12",
    "1.",
    "0.5",
    "e-",
    "E+",
    "-0",
    "\"a",
    "a\"",
    "}]",
    "],",
    "[{",
    ", ",
    "\\u00",
    "\\\"",
    "\\\\",
    "ab",
    "(?:",
    "[a-",
    "{2}",
    "+$",
    "\u{e9}",
    "\u{1F600}",
];

/// Most tokens a session target commits.
const MAX_STEPS: usize = 256;

fn compiler() -> &'static Compiler {
    static COMPILER: OnceLock<Compiler> = OnceLock::new();
    COMPILER.get_or_init(|| {
        let mut limits = SchemaResourceLimits::default();
        limits.max_document_bytes = 64 << 10;
        limits.max_dfa_states = 4_000;
        limits.max_nfa_states = 40_000;
        limits.max_graph_size = 200_000;
        let options = CompilerOptions::default()
            .with_executable_cache_bytes(256 << 20)
            .with_trie_cache_bytes(64 << 20)
            .with_limits(limits);
        Compiler::new(options)
    })
}

/// 256 single-byte tokens, [`MULTI_BYTE_TOKENS`], then EOS.
fn vocabulary() -> &'static CompiledVocabulary {
    static VOCABULARY: OnceLock<CompiledVocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let tokens = (0..=255u8).map(|b| vec![b]).chain(MULTI_BYTE_TOKENS.iter().map(|t| t.as_bytes().to_vec()));
        let tokens: Vec<(TokenId, Vec<u8>)> = tokens.enumerate().map(|(id, t)| (id as TokenId, t)).collect();
        let eos = tokens.len() as TokenId;
        let vocabulary = build_vocabulary(eos, tokens).expect("a valid vocabulary");
        CompiledVocabulary::try_from(Arc::new(vocabulary)).expect("a vocabulary that compiles")
    })
}

fn eos() -> TokenId {
    (256 + MULTI_BYTE_TOKENS.len()) as TokenId
}

/// Schema compilation from arbitrary text; what compiles is then driven by the same bytes.
pub fn compile_schema(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(program) = compiler().compile_json_schema(text) else { return };
    let Ok(bound) = program.bind(vocabulary()) else { return };
    drive(&bound, data.iter().rev().copied());
}

/// ECMA-262 patterns: the input is a pattern, a zero byte, then subject strings separated by
/// zero bytes. When the pattern compiles and `regress` reads it (in `u` mode, as JSON Schema
/// asks), both must agree on every subject.
pub fn pattern(data: &[u8]) {
    let mut parts = data.split(|&b| b == 0);
    let Some(Ok(pattern)) = parts.next().map(std::str::from_utf8) else { return };
    let schema = json!({"type": "string", "pattern": pattern});
    let Ok(program) = compiler().compile_json_value(&schema) else { return };
    let Ok(oracle) = regress::Regex::with_flags(pattern, "u") else { return };
    for subject in parts.filter_map(|s| std::str::from_utf8(s).ok()) {
        let text = serde_json::to_string(subject).expect("a string serialises");
        let ours = program.executable().accepts(text.as_bytes());
        let theirs = oracle.find(subject).is_some();
        assert_eq!(ours, theirs, "pattern {pattern:?} on {subject:?}");
    }
}

/// Sessions: a schema built from the first bytes by a small generator, then token choices from
/// the rest (mostly among the allowed tokens, sometimes any id, to exercise refusals).
pub fn session(data: &[u8]) {
    let mut bytes = Bytes { data, at: 0 };
    let schema = generate_schema(&mut bytes, 0);
    trace(|| format!("schema {schema}"));
    let Ok(program) = compiler().compile_json_value(&schema) else { return };
    let Ok(bound) = program.bind(vocabulary()) else { return };
    drive(&bound, data[bytes.at.min(data.len())..].iter().copied());
}

/// `tokenizer.json` loading: arbitrary text must give a vocabulary or a typed error.
pub fn tokenizer_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let options = maskforge_core::TokenizerJsonOptions::default();
    let Ok(vocabulary) = Vocabulary::from_tokenizer_json(text, &options) else { return };
    let size = vocabulary.mask_vocab_size();
    assert!(vocabulary.tokenizer_size() <= size);
    for id in vocabulary.eos_token_ids() {
        assert!((*id as usize) < size, "EOS id {id} outside the vocabulary of {size}");
    }
    if let Ok(compiled) = CompiledVocabulary::try_from(Arc::new(vocabulary)) {
        assert_eq!(compiled.mask_word_count(), size.div_ceil(32));
    }
}

/// Follows `choices` through a session, checking every step. Most choices pick a token (an
/// allowed one, or any id); `0xe8..=0xef` forks the session and carries on with the fork,
/// `0xf0..=0xff` rolls back up to 15 tokens and checks the session against a replay of the
/// tokens still committed.
fn drive(bound: &BoundSchema, choices: impl Iterator<Item = u8>) {
    let size = vocabulary().mask_vocab_size() as TokenId;
    let mut session = bound.start_session().expect("a session starts");
    let mut mask = vec![0u32; bound.mask_word_count()];
    let mut text = Vec::new();
    // Every committed token, and the text's length before it.
    let mut committed: Vec<(TokenId, usize)> = Vec::new();
    for choice in choices.take(MAX_STEPS) {
        session.write_mask(&mut mask).expect("a buffer of mask_word_count words");
        if choice >= 0xe8 {
            if choice < 0xf0 {
                trace(|| "fork".to_string());
                session = session.fork();
            } else {
                let n = usize::from(choice & 0x0f);
                trace(|| format!("rollback {n} of {}", committed.len()));
                match session.rollback(n) {
                    Ok(()) => {
                        let kept = committed.len() - n;
                        if let Some(&(_, len)) = committed.get(kept) {
                            text.truncate(len);
                        }
                        committed.truncate(kept);
                    }
                    Err(_) => assert!(n > committed.len(), "a rollback within the history was refused"),
                }
            }
            let mut replay = bound.start_session().expect("a session starts");
            replay.advance_many(&committed.iter().map(|&(t, _)| t).collect::<Vec<_>>()).expect("a replay");
            let (mut ours, mut theirs) = (vec![0u32; mask.len()], vec![0u32; mask.len()]);
            session.write_mask(&mut ours).expect("a mask");
            replay.write_mask(&mut theirs).expect("a mask");
            assert_eq!(ours, theirs, "the session differs from a replay of its tokens");
            assert_eq!((session.is_accepting(), session.is_finished()), (replay.is_accepting(), replay.is_finished()));
            continue;
        }
        let allowed: Vec<TokenId> = (0..size).filter(|&id| mask[id as usize / 32] >> (id % 32) & 1 == 1).collect();
        assert!(!allowed.is_empty(), "dead end after {:?}", String::from_utf8_lossy(&text));
        for id in 0..size {
            assert_eq!(session.is_allowed(id), allowed.binary_search(&id).is_ok(), "token {id}");
        }
        let eos_allowed = allowed.binary_search(&eos()).is_ok();
        assert_eq!(eos_allowed, session.is_accepting());
        if eos_allowed && !session.is_finished() {
            assert!(is_json(&text), "accepted {:?}, which is not JSON", String::from_utf8_lossy(&text));
            assert!(bound.executable().accepts(&text), "the executable refuses what the session accepts");
        }
        let token = if choice & 0x80 == 0 {
            allowed[choice as usize % allowed.len()]
        } else {
            // Any id, out-of-range ones included.
            u32::from(choice & 0x7f) * 3 % (size + 4)
        };
        trace(|| format!("after {:?}: {} allowed, token {token}", String::from_utf8_lossy(&text), allowed.len()));
        let before = session.clone();
        match session.advance(token) {
            Ok(()) => {
                assert!(allowed.binary_search(&token).is_ok(), "advance took forbidden token {token}");
                committed.push((token, text.len()));
                if token != eos() {
                    text.extend_from_slice(bound.vocabulary().token_bytes(token).expect("bytes"));
                }
            }
            Err(_) => {
                assert!(allowed.binary_search(&token).is_err(), "advance refused allowed token {token}");
                let mut after = vec![0u32; mask.len()];
                session.write_mask(&mut after).expect("a mask");
                assert_eq!(after, mask, "a refused token changed the session");
                assert_eq!(session.is_finished(), before.is_finished());
            }
        }
        if session.is_finished() {
            assert!(session.advance(eos()).is_ok(), "EOS after EOS pads");
            committed.push((eos(), text.len()));
            assert!(session.advance(b'1' as TokenId).is_err(), "no token after EOS");
        }
    }
}

/// Prints the steps of an input when `MASKFORGE_FUZZ_TRACE` is set (to study a finding).
fn trace(line: impl FnOnce() -> String) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("MASKFORGE_FUZZ_TRACE").is_some()) {
        eprintln!("{:?} {}", std::time::Instant::now(), line());
    }
}

/// Whether `text` is one JSON value (any depth, any number size).
fn is_json(text: &[u8]) -> bool {
    use serde::Deserialize;
    let mut reader = serde_json::Deserializer::from_slice(text);
    reader.disable_recursion_limit();
    serde::de::IgnoredAny::deserialize(&mut reader).is_ok() && reader.end().is_ok()
}

/// The input, read a byte at a time (zeros once it runs out).
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn pick<T: Clone>(&mut self, options: &[T]) -> T {
        options[self.next() as usize % options.len()].clone()
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }

    fn small(&mut self) -> u64 {
        u64::from(self.next() % 6)
    }
}

const NAMES: &[&str] = &["a", "b", "ab", "é", "x-1"];
const PATTERNS: &[&str] = &["^a", "b$", "^[a-c]+$", "\\d", "^(ab|ba)*$", "^.{2}$", "^(?!x)"];
const FORMATS: &[&str] = &["date", "email", "ipv4", "uuid", "regex", "uri", "duration", "hostname", "idn-hostname"];
const LITERALS: &[&str] = &["null", "true", "1", "1.0", "-2.5e1", "\"a\"", "\"ab\"", "[]", "[1, \"a\"]", "{\"a\": 1}"];

/// A schema from the input: types and most keywords, nested up to depth 3, with recursion
/// through `$ref: "#"`.
fn generate_schema(bytes: &mut Bytes, depth: u32) -> Value {
    if depth > 3 {
        return bytes.pick(&[json!({"type": "integer"}), json!({"type": "string"}), json!(true)]);
    }
    let mut schema = serde_json::Map::new();
    let keywords = 1 + bytes.next() % 3;
    for _ in 0..keywords {
        let child = |bytes: &mut Bytes| generate_schema(bytes, depth + 1);
        match bytes.next() % 24 {
            0 => {
                let t = bytes.pick(&["null", "boolean", "integer", "number", "string", "array", "object"]);
                schema.insert("type".into(), json!(t));
            }
            1 => {
                let count = 1 + bytes.small() as usize;
                let mut properties = serde_json::Map::new();
                for _ in 0..count {
                    let name = bytes.pick(NAMES);
                    properties.insert(name.into(), child(bytes));
                }
                schema.insert("properties".into(), Value::Object(properties));
            }
            2 => {
                let names: Vec<&str> = (0..bytes.small() % 3).map(|_| bytes.pick(NAMES)).collect();
                let mut unique = names.clone();
                unique.sort();
                unique.dedup();
                schema.insert("required".into(), json!(unique));
            }
            3 => {
                let value = if bytes.coin() { json!(false) } else { child(bytes) };
                schema.insert("additionalProperties".into(), value);
            }
            4 => {
                schema.insert("items".into(), child(bytes));
            }
            5 => {
                schema.insert("prefixItems".into(), json!([child(bytes), child(bytes)]));
            }
            6 => {
                let (min, extra) = (bytes.small(), bytes.small());
                let key = bytes.pick(&["Items", "Length", "Properties"]);
                schema.insert(format!("min{key}"), json!(min));
                schema.insert(format!("max{key}"), json!(min + extra));
            }
            7 => {
                schema.insert("uniqueItems".into(), json!(true));
            }
            8 => {
                schema.insert("contains".into(), child(bytes));
                if bytes.coin() {
                    schema.insert("maxContains".into(), json!(1 + bytes.small()));
                }
            }
            9 => {
                let values: Vec<Value> = (0..1 + bytes.small())
                    .map(|_| serde_json::from_str(bytes.pick(LITERALS)).expect("a JSON literal"))
                    .collect();
                schema.insert("enum".into(), Value::Array(values));
            }
            10 => {
                let value: Value = serde_json::from_str(bytes.pick(LITERALS)).expect("a JSON literal");
                schema.insert("const".into(), value);
            }
            11 => {
                let key = bytes.pick(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]);
                let value = bytes.pick(&[json!(0), json!(-1.5), json!(3), json!(100), json!(0.25)]);
                schema.insert(key.into(), value);
            }
            12 => {
                schema.insert("multipleOf".into(), bytes.pick(&[json!(2), json!(0.5), json!(3), json!(0.1)]));
            }
            13 => {
                schema.insert("pattern".into(), json!(bytes.pick(PATTERNS)));
            }
            14 => {
                schema.insert("format".into(), json!(bytes.pick(FORMATS)));
            }
            15..=17 => {
                let key = bytes.pick(&["anyOf", "allOf", "oneOf"]);
                let branches: Vec<Value> = (0..1 + bytes.small() % 3).map(|_| child(bytes)).collect();
                schema.insert(key.into(), Value::Array(branches));
            }
            18 => {
                schema.insert("not".into(), child(bytes));
            }
            19 => {
                schema.insert("if".into(), child(bytes));
                schema.insert("then".into(), child(bytes));
                if bytes.coin() {
                    schema.insert("else".into(), child(bytes));
                }
            }
            20 => {
                schema.insert("propertyNames".into(), child(bytes));
            }
            21 => {
                let mut patterns = serde_json::Map::new();
                patterns.insert(bytes.pick(PATTERNS).into(), child(bytes));
                schema.insert("patternProperties".into(), Value::Object(patterns));
            }
            22 => {
                let key = bytes.pick(&["unevaluatedProperties", "unevaluatedItems"]);
                schema.insert(key.into(), if bytes.coin() { json!(false) } else { child(bytes) });
            }
            _ => {
                if depth > 0 {
                    schema.insert("$ref".into(), json!("#"));
                } else {
                    schema.insert("dependentRequired".into(), json!({"a": ["b"]}));
                }
            }
        }
    }
    Value::Object(schema)
}
