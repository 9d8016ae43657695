//! Bind time and per-token mask time on real vocabularies.
//!
//! `cargo bench -p maskforge-core --bench masks` (or `make bench`).
//!
//! - `bind/{eager,lazy}/VOCAB/SCHEMA`: `program.bind` with no cache, so every bind rebuilds the
//!   class trie and (eager) every row.
//! - `write_mask/{eager,lazy}/VOCAB/SCHEMA`: one `session.write_mask` in the middle of a string
//!   value (the commonest position while decoding); lazy rows are warmed by a first query.
//! - `first_mask/VOCAB/SCHEMA`: compile + bind (adaptive) + the first mask, nothing cached.
//!
//! Vocabularies: GPT-2 (vendored under tests/data) and Qwen2.5 from `$MASKFORGE_TOKENIZERS`,
//! else `../shared/tokenizers` beside the repository; skipped when absent.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use maskforge_core::{
    BindPolicy, BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, Session, TokenId, Vocabulary,
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
];

struct Vocab {
    name: &'static str,
    compiled: CompiledVocabulary,
    /// Token bytes -> id, to spell instance prefixes.
    ids: HashMap<Vec<u8>, TokenId>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn vocabularies() -> Vec<Vocab> {
    let mut files = vec![("gpt2", repo_root().join("tests/data/tokenizers/gpt2.tokenizer.json"), 50256)];
    let shared = std::env::var_os("MASKFORGE_TOKENIZERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/tokenizers"));
    let qwen = shared.join("qwen2.5.tokenizer.json");
    if qwen.is_file() {
        files.push(("qwen2.5", qwen, 151643));
    } else {
        eprintln!("skipping Qwen2.5: {} not found (set MASKFORGE_TOKENIZERS)", qwen.display());
    }
    files
        .into_iter()
        .map(|(name, path, eos)| {
            let vocabulary = load_byte_level_bpe(&path, eos);
            let ids = vocabulary.tokens_with_bytes().map(|(id, bytes)| (bytes.to_vec(), id)).collect();
            let compiled = CompiledVocabulary::try_from(Arc::new(vocabulary)).expect("compile vocabulary");
            Vocab { name, compiled, ids }
        })
        .collect()
}

/// Decodes a byte-level BPE `tokenizer.json` (GPT-2's byte-to-unicode table). Kept local so
/// that the benchmark measures binding and masks only, whatever loader features are enabled.
fn load_byte_level_bpe(path: &Path, eos: TokenId) -> Vocabulary {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("tokenizer.json is JSON");
    let mut unicode_to_byte = HashMap::new();
    let mut shifted = 0u32;
    for b in 0u32..256 {
        let printable = (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
        let c = if printable {
            b
        } else {
            shifted += 1;
            255 + shifted
        };
        unicode_to_byte.insert(char::from_u32(c).unwrap(), b as u8);
    }
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    let mut put = |id: usize, bytes: Option<Vec<u8>>| {
        if tokens.len() <= id {
            tokens.resize(id + 1, None);
        }
        tokens[id] = bytes;
    };
    for (piece, id) in json["model"]["vocab"].as_object().expect("model.vocab") {
        let bytes = piece.chars().map(|c| unicode_to_byte[&c]).collect();
        put(id.as_u64().unwrap() as usize, Some(bytes));
    }
    for added in json["added_tokens"].as_array().into_iter().flatten() {
        let id = added["id"].as_u64().unwrap() as usize;
        // Special tokens generate nothing; other added tokens are ordinary text.
        let bytes = (added["special"] != true).then(|| added["content"].as_str().unwrap().as_bytes().to_vec());
        put(id, bytes);
    }
    Vocabulary::from_id_ordered_tokens(tokens, eos).expect("valid vocabulary")
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
    let vocabs = vocabularies();
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

criterion_group!(masks, benches);
criterion_main!(masks);
