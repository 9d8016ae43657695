//! Many threads sharing one `Compiler` (cache hits, misses and eviction under load) and one
//! `BoundSchema`: every mask they write equals the single-threaded run's, bit for bit.
#![cfg(feature = "tokenizer-processing")]

use std::sync::Arc;
use std::thread;

use maskforge_core::{
    BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, TokenId, TokenizerJsonOptions, Vocabulary,
};

const THREADS: usize = 8;
const ROUNDS: usize = 12;

/// Schemas of both backends, each with an instance to walk.
const CASES: &[(&str, &str)] = &[
    (r#"{"enum": ["red", "green", "blue"]}"#, r#""green""#),
    (
        r#"{"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}, "required": ["id"], "additionalProperties": false}"#,
        r#"{"tags": ["a", "b"], "id": 42}"#,
    ),
    (
        r#"{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[A-Z]"}}, "additionalProperties": {"type": "number", "minimum": 0}}"#,
        r#"{"name": "Ada", "x": 1.5e2, "y": 0}"#,
    ),
    (
        r##"{"$defs": {"n": {"type": "object", "properties": {"v": {"type": "number"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["v"]}}, "$ref": "#/$defs/n"}"##,
        r#"{"v": 1, "kids": [{"v": 2, "kids": []}]}"#,
    ),
    (
        r#"{"type": "array", "items": {"anyOf": [{"type": "string", "format": "date"}, {"type": "integer", "multipleOf": 3}]}, "uniqueItems": true}"#,
        r#"["2024-02-29", 9, -3]"#,
    ),
    (
        r#"{"type": "object", "properties": {"a": {"type": "string"}}, "if": {"required": ["a"]}, "then": {"required": ["b"]}}"#,
        r#"{"a": "x", "b": null}"#,
    ),
];

fn gpt2() -> CompiledVocabulary {
    let path = format!("{}/../../tests/data/tokenizers/gpt2.tokenizer.json", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

/// The tokens of a greedy walk through `text` (longest allowed token at each step), then EOS,
/// with the mask before each.
fn reference_walk(bound: &BoundSchema, text: &str) -> Vec<(TokenId, Vec<u32>)> {
    let vocabulary = bound.vocabulary();
    let mut session = bound.start_session().unwrap();
    let mut steps = Vec::new();
    let mut rest = text.as_bytes();
    loop {
        let mut mask = vec![0u32; bound.mask_word_count()];
        session.write_mask(&mut mask).unwrap();
        let token = if rest.is_empty() {
            vocabulary.eos_token_ids()[0]
        } else {
            vocabulary
                .tokens_with_bytes()
                .filter(|(id, bytes)| rest.starts_with(bytes) && session.is_allowed(*id))
                .max_by_key(|(_, bytes)| bytes.len())
                .map(|(id, _)| id)
                .unwrap_or_else(|| panic!("no allowed token spells {:?}", String::from_utf8_lossy(rest)))
        };
        session.advance(token).unwrap();
        steps.push((token, mask));
        if rest.is_empty() {
            return steps;
        }
        rest = &rest[vocabulary.token_bytes(token).unwrap().len()..];
    }
}

fn replay(bound: &BoundSchema, steps: &[(TokenId, Vec<u32>)], label: &str) {
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    for (i, (token, expected)) in steps.iter().enumerate() {
        session.write_mask(&mut mask).unwrap();
        assert!(mask == *expected, "{label}: mask {i} differs from the single-threaded run");
        session.advance(*token).unwrap();
    }
    assert!(session.is_finished());
}

#[test]
fn threads_sharing_a_compiler_and_bound_schemas_write_the_single_threaded_masks() {
    let vocabulary = Arc::new(gpt2());
    let references: Vec<Vec<(TokenId, Vec<u32>)>> = CASES
        .iter()
        .map(|(schema, text)| {
            let bound = Compiler::without_cache().compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
            reference_walk(&bound, text)
        })
        .collect();
    // Budgets that hold only part of the programs: threads keep evicting each other's entries.
    let options = CompilerOptions::default().with_executable_cache_bytes(8 << 10).with_trie_cache_bytes(4 << 20);
    let compiler = Arc::new(Compiler::new(options));
    let shared: Vec<BoundSchema> = CASES
        .iter()
        .map(|(schema, _)| compiler.compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap())
        .collect();
    let shared = Arc::new(shared);
    let references = Arc::new(references);
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (compiler, shared, references, vocabulary) =
                (Arc::clone(&compiler), Arc::clone(&shared), Arc::clone(&references), Arc::clone(&vocabulary));
            thread::spawn(move || {
                for round in 0..ROUNDS {
                    let case = (t + round) % CASES.len();
                    if (t + round) % 2 == 0 {
                        replay(&shared[case], &references[case], &format!("shared bound schema {case}"));
                    } else {
                        let program = compiler.compile_json_schema(CASES[case].0).unwrap();
                        let bound = program.bind(&vocabulary).unwrap();
                        replay(&bound, &references[case], &format!("thread {t} compiled schema {case}"));
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker panicked");
    }
    let stats = compiler.cache_stats();
    assert!(stats.executable_hits > 0 && stats.executable_misses > CASES.len() as u64, "{stats:?}");
    assert!(stats.executable_entries < CASES.len(), "the budget should have evicted some programs: {stats:?}");
    assert!(stats.executable_bytes <= 8 << 10, "{stats:?}");
}
