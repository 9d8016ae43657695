//! Quickstart: compile a schema, bind it to a vocabulary and walk one instance token by token,
//! printing the tokens the mask allows at every step.
//!
//! Run with `cargo run -p maskforge-core --example basic_json_schema`.
//!
//! The vocabulary is a small hand-made one so that the example runs anywhere and its masks fit
//! on a screen; a real tokenizer is loaded the same way from its `tokenizer.json` (feature
//! `tokenizer-processing`).

use std::sync::Arc;

use maskforge_core::{build_vocabulary, BindPolicy, CompiledVocabulary, Compiler, CompilerOptions, TokenId};

const SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "score": {"type": "number"},
        "tags": {"type": "array", "items": {"enum": ["red", "green"]}, "maxItems": 2}
    },
    "required": ["name", "score"],
    "additionalProperties": false
}"#;

const INSTANCE: &str = r#"{"name":"Ada","score":9.5,"tags":["red"]}"#;

// Several tokens overlap (`"` and `",`, `red` and `re`), as in real vocabularies: the mask
// admits every spelling that can still lead to a valid document.
const TOKENS: &[&str] = &[
    "{", "}", "{\"", "\"", "\",", "\":", ":", ",", ",\"", "[", "]", "[\"", "\"]", " ", "name", "score", "tags", "Ada",
    "A", "da", "re", "red", "green", "9", ".", "5", "e", "-", "true", "null",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let eos_token_id = TOKENS.len() as TokenId;
    let token_map = TOKENS.iter().enumerate().map(|(id, t)| (id as TokenId, t.as_bytes().to_vec()));
    let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(eos_token_id, token_map)?))?;

    let options = CompilerOptions::default()
        .with_executable_cache_bytes(256 << 20)
        .with_trie_cache_bytes(256 << 20)
        .with_bind_policy(BindPolicy::Adaptive);
    let compiler = Compiler::new(options);
    let program = compiler.compile_json_schema(SCHEMA)?;
    let bound = program.bind(&vocabulary)?;
    let mut session = bound.start_session()?;
    let mut mask = vec![0u32; bound.mask_word_count()];

    println!("schema:   {}", SCHEMA.split_whitespace().collect::<Vec<_>>().join(" "));
    println!("instance: {INSTANCE}\n");
    let mut rest = INSTANCE.as_bytes();
    let mut written = String::new();
    loop {
        session.write_mask(&mut mask)?;
        let allowed = allowed_tokens(&mask, eos_token_id);
        println!("{written:<42} allowed: {}", allowed.join(" "));
        if rest.is_empty() {
            break;
        }
        // Longest allowed token that spells the next bytes of the instance (a greedy tokenizer).
        let token = (0..TOKENS.len() as TokenId)
            .filter(|&id| session.is_allowed(id) && rest.starts_with(TOKENS[id as usize].as_bytes()))
            .max_by_key(|&id| TOKENS[id as usize].len())
            .ok_or("the instance cannot be spelled with this vocabulary")?;
        session.advance(token)?;
        written.push_str(TOKENS[token as usize]);
        rest = &rest[TOKENS[token as usize].len()..];
    }
    session.advance(eos_token_id)?;
    println!("\naccepted: {}, finished: {}", session.is_accepting(), session.is_finished());
    Ok(())
}

/// The mask's set bits as readable token texts (`<eos>` for the EOS id).
fn allowed_tokens(mask: &[u32], eos_token_id: TokenId) -> Vec<String> {
    (0..=eos_token_id)
        .filter(|&id| mask[id as usize / 32] >> (id % 32) & 1 == 1)
        .map(|id| if id == eos_token_id { "<eos>".to_string() } else { format!("{:?}", TOKENS[id as usize]) })
        .collect()
}
