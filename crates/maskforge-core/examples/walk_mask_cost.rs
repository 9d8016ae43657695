//! Mask times along random walks: each schema is compiled (no caches) and bound, then read by
//! three seeded random walks of up to 256 tokens (each step takes a token the mask allows,
//! uniformly, and stops at EOS when allowed with probability 1/8), timing `write_mask` before
//! every step. Exact masks make the walks the same whichever arm reads a schema, so runs with
//! another `--max-regular-states` compare the arms on the same positions. Prints p50 / p99 /
//! p99.9 / max / mean in µs per arm, and the slowest masks.
//!
//! ```sh
//! cargo run --release -p maskforge-core --features tokenizer-processing --example walk_mask_cost \
//!     -- [--max-regular-states N] path/to/tokenizer.json SCHEMA.json...
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use maskforge_core::mask::allowed_ids;
use maskforge_core::{CompiledVocabulary, Compiler, CompilerOptions, TokenizerJsonOptions, Vocabulary};

const WALKS: u64 = 3;
const MAX_STEPS: usize = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let mut options = CompilerOptions::default();
    if args.peek().map(String::as_str) == Some("--max-regular-states") {
        args.next();
        options.limits.max_regular_states = args.next().ok_or("--max-regular-states needs a number")?.parse()?;
    }
    let tokenizer =
        args.next().ok_or("usage: walk_mask_cost [--max-regular-states N] TOKENIZER.json SCHEMA.json...")?;
    let vocabulary = Vocabulary::from_tokenizer_json_file(&tokenizer, &TokenizerJsonOptions::default())?;
    let vocabulary = CompiledVocabulary::try_from(Arc::new(vocabulary))?;
    options.executable_cache_bytes = 0;
    options.trie_cache_bytes = 0;

    let mut times: HashMap<&'static str, Vec<f64>> = HashMap::new();
    let mut slowest: Vec<(f64, String)> = Vec::new();
    for path in args {
        let text = std::fs::read_to_string(&path)?;
        let compiler = Compiler::new(options.clone());
        let Ok(program) = compiler.compile_json_schema(&text) else { continue };
        let arm: &'static str = if program.executable().backend_name() == "regular" { "regular" } else { "structured" };
        let bound = program.bind(&vocabulary)?;
        let eos = vocabulary.vocabulary().eos_token_ids().to_vec();
        for walk in 0..WALKS {
            let mut random = Xorshift(0x9E37_79B9_7F4A_7C15 ^ (walk + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
            let mut session = bound.start_session()?;
            let mut mask = vec![0u32; bound.mask_word_count()];
            for step in 0..MAX_STEPS {
                let started = Instant::now();
                session.write_mask(&mut mask)?;
                let us = started.elapsed().as_secs_f64() * 1e6;
                times.entry(arm).or_default().push(us);
                slowest.push((us, format!("{path} ({arm}) walk {walk} step {step}")));
                if slowest.len() > 64 {
                    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
                    slowest.truncate(16);
                }
                let allowed = allowed_ids(&mask);
                if allowed.is_empty() || (eos.iter().any(|e| allowed.contains(e)) && random.next() % 8 == 0) {
                    break;
                }
                let token = allowed[(random.next() % allowed.len() as u64) as usize];
                if eos.contains(&token) {
                    break;
                }
                session.advance(token)?;
            }
        }
    }
    let mut arms: Vec<_> = times.into_iter().collect();
    arms.sort_by_key(|(arm, _)| *arm);
    let all: Vec<f64> = arms.iter().flat_map(|(_, t)| t.iter().copied()).collect();
    arms.push(("all", all));
    println!("| arm | masks | p50 | p99 | p99.9 | max | mean (µs) |\n|---|---:|---:|---:|---:|---:|---:|");
    for (arm, mut t) in arms {
        if t.is_empty() {
            continue;
        }
        t.sort_by(f64::total_cmp);
        let q = |f: f64| t[((t.len() as f64 * f) as usize).min(t.len() - 1)];
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        println!(
            "| {arm} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {mean:.1} |",
            t.len(),
            q(0.5),
            q(0.99),
            q(0.999),
            t[t.len() - 1]
        );
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (us, what) in slowest.iter().take(10) {
        println!("{us:.0} µs\t{what}");
    }
    Ok(())
}

/// A small seeded generator: the walks are the same on every run.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
