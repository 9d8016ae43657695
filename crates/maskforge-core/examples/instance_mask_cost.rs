//! Mask times over real instances: every SchemaStore schema with JSON test instances is
//! compiled (no caches), and each instance, written compactly, is read token by token (greedy
//! longest-match tokens, a valid path for an exact engine) timing `write_mask` before every
//! token and at the end. Prints p50 / p99 / p99.9 / max / mean in µs, per arm and overall, and
//! the slowest masks with their schema.
//!
//! ```sh
//! cargo run --release -p maskforge-core --features tokenizer-processing --example instance_mask_cost \
//!     -- [--max-regular-states N] [--max-length-product-states N] path/to/tokenizer.json path/to/schemastore [NAME]
//! ```

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use maskforge_core::{CompiledVocabulary, Compiler, TokenId};

mod cost_support;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let options = cost_support::uncached_options(&mut args)?;
    let usage = "usage: instance_mask_cost [--max-regular-states N] [--max-length-product-states N] TOKENIZER.json SCHEMASTORE_DIR [NAME]";
    let vocabulary = cost_support::vocabulary(&mut args, usage)?;
    let store = args.next().ok_or(usage)?;
    // Optionally only the schemas whose name contains this text.
    let only = args.next();
    let by_bytes: HashMap<Vec<u8>, TokenId> =
        vocabulary.tokens_with_bytes().filter(|(_, b)| !b.is_empty()).map(|(id, b)| (b.to_vec(), id)).collect();
    let longest = by_bytes.keys().map(Vec::len).max().unwrap_or(1);
    let vocabulary = CompiledVocabulary::try_from(Arc::new(vocabulary))?;

    let mut times: HashMap<&'static str, Vec<f64>> = HashMap::new();
    let mut slowest: Vec<(f64, String)> = Vec::new();
    let mut over_a_millisecond: HashMap<String, usize> = HashMap::new();
    let tests = Path::new(&store).join("instances_json/test");
    let mut names: Vec<_> = std::fs::read_dir(&tests)?.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let name = name.to_string_lossy().into_owned();
        if only.as_ref().is_some_and(|only| !name.contains(only.as_str())) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(Path::new(&store).join("schemas").join(format!("{name}.json"))) else {
            continue;
        };
        let compiler = Compiler::new(options.clone());
        let Ok(program) = compiler.compile_json_schema(&text) else { continue };
        let arm: &'static str = if program.executable().backend_name() == "regular" { "regular" } else { "structured" };
        let bound = program.bind(&vocabulary)?;
        let mut instances: Vec<_> =
            std::fs::read_dir(tests.join(&name))?.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        instances.sort();
        for path in instances.iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(path)?) else {
                continue;
            };
            let bytes = serde_json::to_vec(&value)?;
            let mut session = bound.start_session()?;
            let mut mask = vec![0u32; bound.mask_word_count()];
            let mut at: usize = 0;
            loop {
                let started = Instant::now();
                session.write_mask(&mut mask)?;
                let us = started.elapsed().as_secs_f64() * 1e6;
                times.entry(arm).or_default().push(us);
                if us > 1000.0 {
                    *over_a_millisecond.entry(name.clone()).or_default() += 1;
                }
                let cost = session.mask_cost();
                let before = String::from_utf8_lossy(&bytes[at.saturating_sub(48)..at]);
                let route = format!("{:?}, {} trie steps", cost.route, cost.trie_steps);
                slowest.push((us, format!("{name} ({arm}, {route}) after {before:?}")));
                cost_support::keep_slowest(&mut slowest);
                if at == bytes.len() {
                    break;
                }
                let token = (1..=longest.min(bytes.len() - at)).rev().find_map(|n| by_bytes.get(&bytes[at..at + n]));
                let Some(&token) = token else { break };
                let len = vocabulary.vocabulary().token_bytes(token).map_or(0, <[u8]>::len);
                if !session.is_allowed(token) || session.advance(token).is_err() {
                    break;
                }
                at += len;
            }
        }
    }
    cost_support::print_times(times, slowest);
    let mut over: Vec<_> = over_a_millisecond.into_iter().collect();
    over.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    println!("masks above 1 ms, by schema: {over:?}");
    Ok(())
}
