//! What the cost examples (`first_mask_cost`, `instance_mask_cost`, `walk_mask_cost`) share:
//! their leading arguments, uncached compiler options and the per-arm table of times.

// Each example uses only part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::iter::Peekable;

use maskforge_core::{CompilerOptions, TokenizerJsonOptions, Vocabulary};

/// Compiler options without caches, so that every schema pays its own compile, and
/// `--max-regular-states N` and `--max-length-product-states N` when the arguments start with
/// them (the arm choice's and the length products' knobs).
pub fn uncached_options(args: &mut Peekable<impl Iterator<Item = String>>) -> Result<CompilerOptions, String> {
    let mut options = CompilerOptions::default();
    while let Some(flag) = args.next_if(|a| a == "--max-regular-states" || a == "--max-length-product-states") {
        let bound: usize =
            args.next().ok_or(format!("{flag} needs a number"))?.parse().map_err(|e| format!("{flag}: {e}"))?;
        match flag.as_str() {
            "--max-regular-states" => options.limits.max_regular_states = bound,
            _ => options.limits.max_length_product_states = bound,
        }
    }
    options.executable_cache_bytes = 0;
    options.trie_cache_bytes = 0;
    Ok(options)
}

/// The vocabulary of the `tokenizer.json` the next argument names.
pub fn vocabulary(
    args: &mut impl Iterator<Item = String>,
    usage: &str,
) -> Result<Vocabulary, Box<dyn std::error::Error>> {
    let tokenizer = args.next().ok_or(usage)?;
    Ok(Vocabulary::from_tokenizer_json_file(&tokenizer, &TokenizerJsonOptions::default())?)
}

/// Prints p50 / p99 / p99.9 / max / mean (µs) per arm and over all, then the ten slowest.
pub fn print_times(times: HashMap<&'static str, Vec<f64>>, mut slowest: Vec<(f64, String)>) {
    let all: Vec<f64> = times.values().flatten().copied().collect();
    let mut arms: Vec<_> = times.into_iter().collect();
    arms.sort_by_key(|(arm, _)| *arm);
    arms.push(("all", all));
    println!("| arm | masks | p50 | p99 | p99.9 | max | mean (µs) |\n|---|---:|---:|---:|---:|---:|---:|");
    for (arm, mut t) in arms.into_iter().filter(|(_, t)| !t.is_empty()) {
        t.sort_by(f64::total_cmp);
        let q = |f: f64| t[((t.len() as f64 * f) as usize).min(t.len() - 1)];
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        let (p50, p99, p999, max) = (q(0.5), q(0.99), q(0.999), t[t.len() - 1]);
        println!("| {arm} | {} | {p50:.1} | {p99:.1} | {p999:.1} | {max:.1} | {mean:.1} |", t.len());
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (us, what) in slowest.iter().take(10) {
        println!("{us:.0} µs\t{what}");
    }
}

/// Keeps the slowest of `slowest` without sorting at every push.
pub fn keep_slowest(slowest: &mut Vec<(f64, String)>) {
    if slowest.len() > 64 {
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        slowest.truncate(16);
    }
}
