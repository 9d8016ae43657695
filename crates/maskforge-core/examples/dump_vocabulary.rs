//! Prints a tokenizer.json's vocabulary as decoded: one line per id, `id<TAB>hex-bytes`
//! (empty for ids without bytes).
//!
//! cargo run -p maskforge-core --features tokenizer-processing --example dump_vocabulary -- PATH

use std::io::{BufWriter, Write};

use maskforge_core::{TokenizerJsonOptions, Vocabulary};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump_vocabulary PATH/tokenizer.json");
        std::process::exit(2);
    };
    let vocabulary = match Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    for id in 0..vocabulary.tokenizer_size() as u32 {
        use std::fmt::Write as _;
        let _ = write!(line, "{id}\t");
        for byte in vocabulary.token_bytes(id).unwrap_or_default() {
            let _ = write!(line, "{byte:02x}");
        }
        line.push('\n');
        if out.write_all(line.as_bytes()).is_err() {
            return;
        }
        line.clear();
    }
    let _ = out.flush();
}
