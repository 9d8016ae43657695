//! Mask times along random walks: each schema is compiled (no caches) and bound, then read by
//! three seeded random walks of up to 256 tokens (each step takes a token the mask allows,
//! uniformly, and stops at EOS when allowed with probability 1/8), timing `write_mask` before
//! every step. Exact masks make the walks the same whichever arm reads a schema, so runs with
//! another `--max-regular-states` compare the arms on the same positions. Prints p50 / p99 /
//! p99.9 / max / mean in µs per arm, and the slowest masks with the text they follow.
//!
//! ```sh
//! cargo run --release -p maskforge-core --features tokenizer-processing --example walk_mask_cost \
//!     -- [--max-regular-states N] [--max-length-product-states N] path/to/tokenizer.json SCHEMA.json...
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use maskforge_core::mask::allowed_ids;
use maskforge_core::{CompiledVocabulary, Compiler};

mod cost_support;

const WALKS: u64 = 3;
const MAX_STEPS: usize = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let options = cost_support::uncached_options(&mut args)?;
    let usage =
        "usage: walk_mask_cost [--max-regular-states N] [--max-length-product-states N] TOKENIZER.json SCHEMA.json...";
    let vocabulary = CompiledVocabulary::try_from(Arc::new(cost_support::vocabulary(&mut args, usage)?))?;

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
            let mut text: Vec<u8> = Vec::new();
            for step in 0..MAX_STEPS {
                let started = Instant::now();
                session.write_mask(&mut mask)?;
                let us = started.elapsed().as_secs_f64() * 1e6;
                times.entry(arm).or_default().push(us);
                slowest.push((
                    us,
                    format!(
                        "{path} ({arm}) walk {walk} step {step} {:?}",
                        String::from_utf8_lossy(&text[text.len().saturating_sub(60)..])
                    ),
                ));
                cost_support::keep_slowest(&mut slowest);
                let allowed = allowed_ids(&mask);
                if allowed.is_empty() || (eos.iter().any(|e| allowed.contains(e)) && random.next() % 8 == 0) {
                    break;
                }
                let token = allowed[(random.next() % allowed.len() as u64) as usize];
                if eos.contains(&token) {
                    break;
                }
                text.extend_from_slice(vocabulary.vocabulary().token_bytes(token).unwrap_or(b""));
                session.advance(token)?;
            }
        }
    }
    cost_support::print_times(times, slowest);
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
