#![cfg(feature = "tokenizer-processing")]
//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the fuzz targets'
//! bodies on stable Rust: every input the fuzzers kept, and every one that once found a bug,
//! stays a test. The fuzzers themselves run with `cargo fuzz` (see CONTRIBUTING.md).

#[allow(dead_code)]
#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&directory)
        .unwrap_or_else(|e| panic!("{}: {e}", directory.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no corpus for {target}");
    for path in inputs {
        let data = std::fs::read(&path).expect("a corpus file");
        let outcome = std::panic::catch_unwind(|| body(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn compile_schema_corpus() {
    replay("compile_schema", targets::compile_schema);
}

#[test]
fn pattern_corpus() {
    replay("pattern", targets::pattern);
}

#[test]
fn session_corpus() {
    replay("session", targets::session);
}

#[test]
fn tokenizer_json_corpus() {
    replay("tokenizer_json", targets::tokenizer_json);
}
