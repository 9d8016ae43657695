#![cfg(feature = "tokenizer-processing")]
//! Real tokenizer files decode to the expected vocabularies.

use std::path::{Path, PathBuf};

use maskforge_core::{TokenizerJsonOptions, Vocabulary};

fn vendored(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/tokenizers").join(name)
}

fn load(path: &Path) -> Vocabulary {
    Vocabulary::from_tokenizer_json_file(path, &TokenizerJsonOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn gpt2() {
    let v = load(&vendored("gpt2.tokenizer.json"));
    assert_eq!(v.tokenizer_size(), 50257);
    assert_eq!(v.mask_vocab_size(), 50257);
    assert_eq!(v.eos_token_ids(), &[50256]);
    assert_eq!(v.token_bytes(220), Some(&b" "[..]));
    assert_eq!(v.token_bytes(198), Some(&b"\n"[..]));
    assert_eq!(v.token_bytes(262), Some(&b" the"[..]));
    assert_eq!(v.token_bytes(0), Some(&b"!"[..]));
    assert_eq!(v.token_bytes(50256), None);
    assert_eq!(v.tokens_with_bytes().count(), 50256);
    // Every single byte is a token of its own.
    let singles: std::collections::HashSet<u8> =
        v.tokens_with_bytes().filter(|(_, b)| b.len() == 1).map(|(_, b)| b[0]).collect();
    assert_eq!(singles.len(), 256);
}

#[test]
fn gpt2_padded_logits() {
    let options = TokenizerJsonOptions::default().with_mask_vocab_size(50304);
    let v = Vocabulary::from_tokenizer_json_file(vendored("gpt2.tokenizer.json"), &options).unwrap();
    assert_eq!(v.tokenizer_size(), 50257);
    assert_eq!(v.mask_vocab_size(), 50304);
    assert_eq!(v.token_bytes(50300), None);
}

#[test]
fn mistral_v3() {
    let v = load(&vendored("mistral-v3.tokenizer.json"));
    assert_eq!(v.tokenizer_size(), 32768);
    assert_eq!(v.eos_token_ids(), &[2]);
    for id in 0..3 {
        assert_eq!(v.token_bytes(id), None);
    }
    let json = std::fs::read_to_string(vendored("mistral-v3.tokenizer.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&json).unwrap();
    let vocab = file["model"]["vocab"].as_object().unwrap();
    let id = |piece: &str| vocab[piece].as_u64().unwrap() as u32;
    assert_eq!(v.token_bytes(id("<0x0A>")), Some(&b"\n"[..]));
    assert_eq!(v.token_bytes(id("<0xFF>")), Some(&[0xFFu8][..]));
    assert_eq!(v.token_bytes(id("▁the")), Some(&b" the"[..]));
    assert_eq!(v.token_bytes(id("▁")), Some(&b" "[..]));
    // Control tokens ([INST] and the like) are special: never generated as text.
    assert_eq!(v.token_bytes(id("[INST]")), None);
    let with_bytes = v.tokens_with_bytes().count();
    let specials = file["added_tokens"].as_array().unwrap().iter().filter(|t| t["special"] == true).count();
    assert_eq!(with_bytes, 32768 - specials);
}

/// Expected EOS id of each tokenizer in the shared collection, by file name.
const EXPECTED_EOS: [(&str, u32); 7] = [
    ("gpt2.tokenizer.json", 50256),
    ("llama3.tokenizer.json", 128001),
    ("qwen2.5.tokenizer.json", 151643),
    ("llama2.tokenizer.json", 2),
    ("mistral-v3.tokenizer.json", 2),
    ("o200k_base.tokenizer.json", 199999),
    ("gemma4.tokenizer.json", 1),
];

/// Every `*.tokenizer.json` of `MASKFORGE_TOKENIZERS` (or the shared collection beside the
/// repository) loads, with the expected EOS id. Skipped when the directory is absent.
#[test]
fn tokenizer_collection() {
    let dir = match std::env::var_os("MASKFORGE_TOKENIZERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tokenizers"),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".tokenizer.json")))
        .collect();
    paths.sort();
    for path in paths {
        let v = load(&path);
        assert!(v.tokens_with_bytes().count() > 0, "{}", path.display());
        let name = path.file_name().unwrap().to_str().unwrap();
        if let Some((_, eos)) = EXPECTED_EOS.iter().find(|(n, _)| *n == name) {
            assert_eq!(v.eos_token_ids(), &[*eos], "{}", path.display());
        }
    }
}
