//! Where a schema's compile time goes: the regular arm alone, the structured arm alone, and the
//! compile that chooses between them, each on a fresh compiler.
//!
//!     cargo run --release -p maskforge-core --example compile_cost -- [--outcome-only] SCHEMA.json...
//!
//! `--outcome-only`: the compile alone, one line per schema (path, backend or error code, ms).
use std::time::Instant;

use maskforge_core::low_level::{compile_regular, SchemaDocument};
use maskforge_core::{Compiler, CompilerOptions};

fn main() {
    let options = CompilerOptions::default();
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.first().is_some_and(|a| a == "--outcome-only") {
        for path in &paths[1..] {
            let text = std::fs::read_to_string(path).expect("a readable schema");
            let started = Instant::now();
            let outcome = match Compiler::without_cache().compile_json_schema(&text) {
                Ok(p) => p.executable().backend_name().to_owned(),
                Err(e) => e.diagnostic().map_or("error".to_owned(), |d| d.code.as_str().to_owned()),
            };
            println!("{path}\t{outcome}\t{:.2}", started.elapsed().as_secs_f64() * 1e3);
        }
        return;
    }
    paths.sort();
    println!("{:<60} {:>12} {:>12} {:>12}  outcome", "schema", "regular ms", "compile ms", "states");
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a readable schema");
        let Ok(document) = SchemaDocument::parse(&text, &options) else {
            println!("{path:<60} unreadable");
            continue;
        };
        let started = Instant::now();
        let regular = compile_regular(&document, &options);
        let regular_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let program = Compiler::without_cache().compile_json_schema(&text);
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let (states, outcome) = match (&regular, &program) {
            (_, Ok(p)) => (p.executable().state_count(), p.executable().backend_name().to_owned()),
            (_, Err(e)) => (0, e.to_string()),
        };
        let regular_outcome = match regular {
            Ok(dfa) => format!("regular {} states", dfa.state_count()),
            Err(e) => format!("regular refused: {e}"),
        };
        println!("{path:<60} {regular_ms:>12.1} {compile_ms:>12.1} {states:>12}  {outcome} ({regular_outcome})");
    }
}
