//! Bind time and per-token mask time on real vocabularies.
//!
//! `cargo bench -p maskforge-core --features tokenizer-processing --bench masks` (or `make bench`).
//!
//! - `bind/{eager,lazy}/VOCAB/SCHEMA`: `program.bind` with no cache, so every bind rebuilds the
//!   class trie and (eager) every row.
//! - `write_mask/{eager,lazy}/VOCAB/SCHEMA`: one `session.write_mask` in the middle of a string
//!   value (the commonest position while decoding), in the middle of a number for
//!   `*-number`, or at a structural position for `*-structural`; lazy rows are warmed by a
//!   first query. Structured schemas compute masks per step whatever the policy.
//! - `first_mask/VOCAB/SCHEMA`: compile + bind (adaptive) + the first mask, with no executable
//!   or trie cache (the per-process automata of patterns, formats and enums stay cached).
//! - `automata/...`: what compilation builds without a cache: the texts of a set of literal
//!   strings (an enum, an object's named keys) and the JSON-escape layer over a pattern.
//!
//! - `session/...`: rollback, fork, draft validation, forced bytes and `write_mask` at the same
//!   positions, and batch fills of 1 to 256 sessions on one and two threads.
//! - `template/...`: a Hermes tool-call template's masks in free text and inside the call's
//!   JSON, beside the call's schema alone and a plain copy of one mask.
//!
//! Vocabularies: GPT-2 (vendored under tests/data), and Qwen2.5 (masks, binds) or Llama-3
//! (sessions) from `$MASKFORGE_TOKENIZERS`, else `../shared/tokenizers` beside the repository;
//! skipped when absent.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use maskforge_core::{
    BindPolicy, BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, Session, TokenId, TokenizerJsonOptions,
    Vocabulary,
};

struct Schema {
    name: &'static str,
    text: &'static str,
    /// A prefix of a valid instance that ends inside a string value.
    prefix: &'static str,
}

const SCHEMAS: &[Schema] = &[
    Schema {
        name: "enum",
        text: r#"{"enum": ["Argentina", "Australia", "Austria", "Belgium", "Brazil", "Canada", "Chile",
            "China", "Denmark", "Egypt", "Finland", "France", "Germany", "Greece", "India", "Indonesia",
            "Ireland", "Italy", "Japan", "Kenya", "Mexico", "Netherlands", "New Zealand", "Norway",
            "Poland", "Portugal", "South Africa", "Spain", "Sweden", "Switzerland"]}"#,
        prefix: r#""Swi"#,
    },
    Schema {
        name: "object",
        text: r#"{"type": "object", "additionalProperties": false,
            "required": ["id", "name", "email", "active"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "email": {"type": "string"},
                "role": {"enum": ["admin", "editor", "viewer"]},
                "score": {"type": "number"},
                "active": {"enum": [true, false]}}}"#,
        prefix: r#"{"id": "u-1029", "name": "Ada Love"#,
    },
    Schema {
        name: "array",
        text: r#"{"type": "array", "minItems": 1, "maxItems": 4, "items": {
            "type": "object", "additionalProperties": false, "required": ["sku", "qty"],
            "properties": {"sku": {"type": "string"}, "qty": {"type": "number"}, "note": {"type": "string"}}}}"#,
        prefix: r#"[{"sku": "A-17", "qty": 2}, {"sku": "B-4"#,
    },
    // Structured schemas (an open object, integers by value): inside a string value, where rows
    // serve the tokens that stay inside and the session keeps what follows a closing quote,
    // inside a key, where closing tokens are decided once per outcome of the close, inside a
    // number, where the walk steps the number alone, and at a structural position, where the
    // walk steps the innermost container.
    Schema { name: "open-object-string", text: OPEN_OBJECT, prefix: r#"{"name": "Ada Love"# },
    Schema { name: "open-object-key", text: OPEN_OBJECT, prefix: r#"{"name": "Ada", "ag"# },
    Schema { name: "open-object-number", text: OPEN_OBJECT, prefix: r#"{"name": "Ada", "age": 3"# },
    Schema { name: "open-object-structural", text: OPEN_OBJECT, prefix: r#"{"name": "Ada", "age": 36, "tags": ["# },
    // A key of a member that each branch of a union reads in an object of its own, one keyed
    // by a pattern.
    Schema { name: "union-member-key", text: UNION_MEMBERS, prefix: r#"{"web": {"kind": "a", "env": {"PORT": "80", "# },
];

const UNION_MEMBERS: &str = r#"{"type": "object", "additionalProperties": {"anyOf": [
    {"properties": {"kind": {"enum": ["a", "c"]}, "env": {"type": "object", "patternProperties": {"^[A-Z_]+$": {"type": "string"}}, "additionalProperties": {"type": "integer"}}}},
    {"properties": {"kind": {"enum": ["a", "b"]}, "env": {"type": "object", "additionalProperties": {"type": ["string", "integer"]}}}}]}}"#;

const OPEN_OBJECT: &str = r#"{"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "string"}}}}"#;

struct Vocab {
    name: &'static str,
    compiled: CompiledVocabulary,
    /// Token bytes -> id, to spell instance prefixes.
    ids: HashMap<Vec<u8>, TokenId>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// GPT-2 and, when the shared folder has them, the vocabularies named in `shared` (file stem,
/// EOS id).
fn vocabularies(shared: &[(&'static str, TokenId)]) -> Vec<Vocab> {
    let mut files = vec![("gpt2", repo_root().join("tests/data/tokenizers/gpt2.tokenizer.json"), 50256)];
    let folder = std::env::var_os("MASKFORGE_TOKENIZERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/tokenizers"));
    for &(name, eos) in shared {
        let path = folder.join(format!("{name}.tokenizer.json"));
        if path.is_file() {
            files.push((name, path, eos));
        } else {
            eprintln!("skipping {name}: {} not found (set MASKFORGE_TOKENIZERS)", path.display());
        }
    }
    files
        .into_iter()
        .map(|(name, path, eos)| {
            let vocabulary = load(&path, eos);
            let ids = vocabulary.tokens_with_bytes().map(|(id, bytes)| (bytes.to_vec(), id)).collect();
            let compiled = CompiledVocabulary::try_from(Arc::new(vocabulary)).expect("compile vocabulary");
            Vocab { name, compiled, ids }
        })
        .collect()
}

fn load(path: &Path, eos: TokenId) -> Vocabulary {
    let options = TokenizerJsonOptions::default().with_eos_token_ids(vec![eos]);
    Vocabulary::from_tokenizer_json_file(path, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn compiler(policy: BindPolicy) -> Compiler {
    Compiler::new(
        CompilerOptions::default().with_executable_cache_bytes(0).with_trie_cache_bytes(0).with_bind_policy(policy),
    )
}

/// A session advanced over `prefix`, spelled greedily with the longest allowed tokens.
fn session_at(bound: &BoundSchema, vocab: &Vocab, prefix: &str) -> Session {
    let mut session = bound.start_session().expect("session");
    let mut rest = prefix.as_bytes();
    while !rest.is_empty() {
        let token = (1..=rest.len().min(64))
            .rev()
            .filter_map(|n| vocab.ids.get(&rest[..n]).map(|&id| (n, id)))
            .find(|&(_, id)| session.is_allowed(id));
        let (n, id) = token.unwrap_or_else(|| panic!("{}: cannot spell {prefix:?}", vocab.name));
        session.advance(id).expect("allowed token advances");
        rest = &rest[n..];
    }
    session
}

fn benches(c: &mut Criterion) {
    let vocabs = vocabularies(&[("qwen2.5", 151643)]);
    let policies = [("eager", BindPolicy::Eager), ("lazy", BindPolicy::Lazy)];
    let mut compilable = Vec::new();
    for schema in SCHEMAS {
        match Compiler::without_cache().compile_json_schema(schema.text) {
            Ok(_) => compilable.push(schema),
            Err(e) => eprintln!("skipping schema {}: {e}", schema.name),
        }
    }

    let mut group = c.benchmark_group("bind");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for (policy_name, policy) in policies {
        for vocab in &vocabs {
            for schema in &compilable {
                let program = compiler(policy).compile_json_schema(schema.text).unwrap();
                let id = BenchmarkId::new(policy_name, format!("{}/{}", vocab.name, schema.name));
                group.bench_function(id, |b| b.iter(|| program.bind(black_box(&vocab.compiled)).unwrap()));
            }
        }
    }
    group.finish();

    let mut group = c.benchmark_group("write_mask");
    for (policy_name, policy) in policies {
        for vocab in &vocabs {
            for schema in &compilable {
                let program = compiler(policy).compile_json_schema(schema.text).unwrap();
                let bound = program.bind(&vocab.compiled).unwrap();
                let session = session_at(&bound, vocab, schema.prefix);
                let mut mask = vec![0u32; bound.mask_word_count()];
                session.write_mask(&mut mask).unwrap();
                let id = BenchmarkId::new(policy_name, format!("{}/{}", vocab.name, schema.name));
                group.bench_function(id, |b| b.iter(|| session.write_mask(black_box(&mut mask)).unwrap()));
            }
        }
    }
    group.finish();

    // The first mask inside a string: the closing tokens' tails are walked once for the
    // string (later masks in the same string are copies of the mask the session kept, which
    // `write_mask` above measures).
    let mut group = c.benchmark_group("string_first_mask");
    for vocab in &vocabs {
        let schema = SCHEMAS.iter().find(|s| s.name == "open-object-string").expect("listed above");
        let bound =
            compiler(BindPolicy::Adaptive).compile_json_schema(schema.text).unwrap().bind(&vocab.compiled).unwrap();
        let fresh = session_at(&bound, vocab, schema.prefix);
        let mut mask = vec![0u32; bound.mask_word_count()];
        fresh.clone().write_mask(&mut mask).unwrap();
        let id = BenchmarkId::new("adaptive", format!("{}/{}", vocab.name, schema.name));
        group.bench_function(id, |b| b.iter(|| fresh.clone().write_mask(black_box(&mut mask)).unwrap()));
    }
    group.finish();

    let mut group = c.benchmark_group("first_mask");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for vocab in &vocabs {
        for schema in &compilable {
            let id = BenchmarkId::new("adaptive", format!("{}/{}", vocab.name, schema.name));
            group.bench_function(id, |b| {
                b.iter(|| {
                    let program = compiler(BindPolicy::Adaptive).compile_json_schema(schema.text).unwrap();
                    let bound = program.bind(&vocab.compiled).unwrap();
                    let mut mask = vec![0u32; bound.mask_word_count()];
                    bound.start_session().unwrap().write_mask(&mut mask).unwrap();
                    mask
                })
            });
        }
    }
    group.finish();
}

/// Compile-time automata, built afresh at every iteration.
fn automata(c: &mut Criterion) {
    use maskforge_core::low_level::{ecma, json, json_escapes, Re};
    let mut group = c.benchmark_group("automata");
    // Identifier-like values sharing prefixes and suffixes, as enums and property names do.
    let values: Vec<String> =
        (0..200).map(|i| format!("{}_{}Config{}", ["app", "db", "net", "ui"][i % 4], i / 4, i % 7)).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    group.bench_function("literal_strings/200-identifiers", |b| {
        b.iter(|| json_escapes::json_literal_strings(black_box(&values), 100_000).unwrap())
    });
    // The same language through an expression and regex-automata's subset construction, the
    // route the trie replaced.
    group.bench_function("literal_strings/200-identifiers-determinised", |b| {
        b.iter(|| {
            let texts = Re::alt(values.iter().map(|v| json::string_literal(v)).collect());
            texts.compile(100_000, 2_000_000).unwrap()
        })
    });
    let decoded = ecma::pattern_language("^[a-z][a-z0-9_-]{0,31}$", 100_000).unwrap();
    group.bench_function("escape_layer/identifier-pattern", |b| {
        b.iter(|| json_escapes::json_strings_decoding_to(black_box(&decoded), 100_000).unwrap())
    });
    group.finish();
}

/// The session operations serving engines call between masks: rollback, fork, draft
/// validation and forced bytes at the prefixes of the bench schemas, beside `write_mask` at the
/// same position (the yardstick), and batch fills on one and two threads, on GPT-2 and Llama-3.
fn sessions(c: &mut Criterion) {
    let vocabs = vocabularies(&[("llama3", 128001)]);
    let mut group = c.benchmark_group("session");
    for vocab in &vocabs {
        for schema in SCHEMAS {
            let Ok(program) = compiler(BindPolicy::Lazy).compile_json_schema(schema.text) else { continue };
            let bound = program.bind(&vocab.compiled).expect("bind");
            let session = session_at(&bound, vocab, schema.prefix);
            let mut mask = vec![0u32; bound.mask_word_count()];
            session.write_mask(&mut mask).expect("mask");
            // A draft: the tokens the session allows first, chained (each the first allowed after
            // the last), 16 long or until the schema ends.
            let mut draft = Vec::new();
            let mut probe = session.fork();
            let mut allowed = vec![0u32; bound.mask_word_count()];
            while draft.len() < 16 {
                probe.write_mask(&mut allowed).expect("mask");
                let eos = vocab.compiled.vocabulary().eos_token_ids();
                let first = maskforge_core::mask::allowed_ids(&allowed).into_iter().find(|t| !eos.contains(t));
                let Some(token) = first else { break };
                probe.advance(token).expect("an allowed token");
                draft.push(token);
            }
            let at = format!("{}/{}", vocab.name, schema.name);
            group.bench_function(BenchmarkId::new("write_mask", &at), |b| {
                b.iter(|| session.write_mask(black_box(&mut mask)).unwrap())
            });
            for n in [1, 8].into_iter().filter(|&n| n <= draft.len()) {
                group.bench_function(BenchmarkId::new(format!("rollback-{n}"), &at), |b| {
                    // As in speculative decoding: a session commits the draft, then rolls it back.
                    // Committing and dropping the session are set-up, not timed.
                    let ahead = || {
                        let mut s = session.fork();
                        s.advance_many(&draft[..n]).expect("draft");
                        s
                    };
                    let rollback = |mut s: Session| {
                        s.rollback(black_box(n)).unwrap();
                        s
                    };
                    b.iter_batched(ahead, rollback, BatchSize::SmallInput)
                });
            }
            // Dropping the fork (no part of forking) is not timed.
            group.bench_function(BenchmarkId::new("fork", &at), |b| {
                b.iter_with_large_drop(|| black_box(&session).fork())
            });
            for n in [4, 16].into_iter().filter(|&n| n <= draft.len()) {
                group.bench_function(BenchmarkId::new(format!("validate-{n}"), &at), |b| {
                    b.iter(|| session.validate_tokens(black_box(&draft[..n])))
                });
            }
            group.bench_function(BenchmarkId::new("forced_bytes", &at), |b| {
                b.iter(|| black_box(&session).forced_bytes())
            });
        }
    }
    // Batch fills: sessions at every prefix of the open object's instance, cycled to the batch.
    let text = r#"{"name": "Ada Lovelace", "age": 36, "tags": ["math", "engines"]}"#;
    for vocab in &vocabs {
        let bound = compiler(BindPolicy::Lazy).compile_json_schema(OPEN_OBJECT).unwrap().bind(&vocab.compiled).unwrap();
        let prefixes: Vec<Session> = (1..text.len()).map(|n| session_at(&bound, vocab, &text[..n])).collect();
        for size in [1, 16, 64, 256] {
            let batch: Vec<&Session> = prefixes.iter().cycle().take(size).collect();
            let mut out = vec![0u32; size * bound.mask_word_count()];
            for threads in [1, 2] {
                let id = BenchmarkId::new(format!("fill_masks-{threads}-threads"), format!("{}/{size}", vocab.name));
                group.bench_function(id, |b| {
                    b.iter(|| maskforge_core::fill_masks(black_box(&batch), &mut out, threads).unwrap())
                });
            }
        }
    }
    group.finish();
}

/// The call object of the tool-call template below: a `search` tool whose arguments are a
/// bounded string and an array of an enum (a regular language), or with an integer and open to
/// more keys (the structured arm: the template's JSON part becomes a hole).
const SEARCH_CALL: &str = r#"{"type": "object", "additionalProperties": false, "required": ["name", "arguments"],
    "properties": {"name": {"const": "search"}, "arguments": {"type": "object", "additionalProperties": false,
        "required": ["query"], "properties": {"query": {"type": "string", "maxLength": 64},
            "sources": {"type": "array", "maxItems": 3, "items": {"enum": ["web", "news", "papers"]}}}}}}"#;
const STRUCTURED_SEARCH_CALL: &str = r#"{"type": "object", "additionalProperties": false,
    "required": ["name", "arguments"],
    "properties": {"name": {"const": "search"}, "arguments": {"type": "object",
        "required": ["query"], "properties": {"query": {"type": "string", "maxLength": 64},
            "limit": {"type": "integer", "minimum": 1},
            "sources": {"type": "array", "maxItems": 3, "items": {"enum": ["web", "news", "papers"]}}}}}}"#;

/// A Hermes tool-call template (free text, then `<tool_call>` blocks): masks in the free text
/// before the trigger and inside the call's JSON, beside the call's schema alone at the same
/// JSON position and a plain copy of one mask (the yardstick for free text); for a call on the
/// regular arm and one on the structured arm.
fn templates(c: &mut Criterion) {
    let vocabs = vocabularies(&[("llama3", 128001)]);
    let mut group = c.benchmark_group("template");
    let json_prefix = r#"{"name": "search", "arguments": {"query": "weather in Par"#;
    for (arm, call_text) in [("regular", SEARCH_CALL), ("structured", STRUCTURED_SEARCH_CALL)] {
        let call: serde_json::Value = serde_json::from_str(call_text).unwrap();
        let part = serde_json::json!({"json": call, "property_order": "declared"});
        let template = serde_json::json!([
            {"tags": [{"begin": "<tool_call>\n", "content": part, "end": "\n</tool_call>"}],
             "triggers": ["<tool_call>"], "at_least_one": true, "stop_after_first": true},
            {"repeat": ["\n<tool_call>\n", part, "\n</tool_call>"], "min": 0}
        ]);
        for vocab in &vocabs {
            let program = compiler(BindPolicy::Lazy).compile_template_value(&template).unwrap();
            let bound = program.bind(&vocab.compiled).unwrap();
            let declared = CompilerOptions::default()
                .with_executable_cache_bytes(0)
                .with_trie_cache_bytes(0)
                .with_bind_policy(BindPolicy::Lazy)
                .with_property_order(maskforge_core::PropertyOrder::Declared);
            let alone = Compiler::new(declared).compile_json_schema(call_text).unwrap().bind(&vocab.compiled).unwrap();
            let mut mask = vec![0u32; bound.mask_word_count()];
            let positions = [
                ("free-text", session_at(&bound, vocab, "Let me look that up for you")),
                ("json-part", session_at(&bound, vocab, &format!("Sure.<tool_call>\n{json_prefix}"))),
                ("schema-alone", session_at(&alone, vocab, json_prefix)),
            ];
            for (name, session) in &positions {
                session.write_mask(&mut mask).unwrap();
                group.bench_function(BenchmarkId::new(format!("{arm}/{name}"), vocab.name), |b| {
                    b.iter(|| session.write_mask(black_box(&mut mask)).unwrap())
                });
            }
            let row = mask.clone();
            group.bench_function(BenchmarkId::new(format!("{arm}/row-copy"), vocab.name), |b| {
                b.iter(|| black_box(&mut mask).copy_from_slice(black_box(&row)))
            });
        }
    }
    group.finish();
}

criterion_group!(masks, benches, automata, sessions, templates);
criterion_main!(masks);
