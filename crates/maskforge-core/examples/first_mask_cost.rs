//! Where a schema's time to first mask goes: compile, bind and the first `write_mask`, each timed
//! on a fresh compiler without caches (as a new schema meets a serving engine), one line per
//! schema: path, backend or error code, automaton states, the policy binding chose, then the
//! three times in ms.
//!
//! ```sh
//! cargo run --release -p maskforge-core --features tokenizer-processing --example first_mask_cost \
//!     -- [--max-regular-states N] [--max-length-product-states N] path/to/tokenizer.json SCHEMA.json...
//! ```

use std::sync::Arc;
use std::time::Instant;

use maskforge_core::{CompiledVocabulary, Compiler};

mod cost_support;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let options = cost_support::uncached_options(&mut args)?;
    let usage =
        "usage: first_mask_cost [--max-regular-states N] [--max-length-product-states N] TOKENIZER.json SCHEMA.json...";
    let vocabulary = CompiledVocabulary::try_from(Arc::new(cost_support::vocabulary(&mut args, usage)?))?;
    let ms = |started: Instant| started.elapsed().as_secs_f64() * 1e3;
    for path in args {
        let text = std::fs::read_to_string(&path)?;
        let compiler = Compiler::new(options.clone());
        let started = Instant::now();
        let program = match compiler.compile_json_schema(&text) {
            Ok(program) => program,
            Err(e) => {
                let code = e.diagnostic().map_or("error".to_owned(), |d| d.code.as_str().to_owned());
                println!("{path}\t{code}\t-\t-\t{:.2}\t-\t-", ms(started));
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let compile_ms = ms(started);
        let states = program.executable().state_count();
        let started = Instant::now();
        let bound = program.bind(&vocabulary)?;
        let bind_ms = ms(started);
        let session = bound.start_session()?;
        let mut mask = vec![0u32; bound.mask_word_count()];
        let started = Instant::now();
        session.write_mask(&mut mask)?;
        let first_ms = ms(started);
        println!(
            "{path}\t{}\t{states}\t{:?}\t{compile_ms:.2}\t{bind_ms:.2}\t{first_ms:.2}",
            program.executable().backend_name(),
            bound.effective_policy()
        );
    }
    Ok(())
}
