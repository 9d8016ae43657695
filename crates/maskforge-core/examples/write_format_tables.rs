//! Writes the format automata's tables that `automata/formats.rs` embeds (the decoded languages,
//! and the JSON texts of the largest compressed), from the format grammars (run after changing a grammar; a unit test fails while the tables are stale).
//!
//!     cargo run --release -p maskforge-core --example write_format_tables
use maskforge_core::low_level::formats;

fn main() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/automata/format_tables");
    for name in formats::SUPPORTED_FORMATS {
        let dfa = formats::format_language_from_grammar(name).expect("every format builds");
        let mut table = Vec::new();
        dfa.write_table(&mut table);
        std::fs::write(folder.join(format!("{name}.table")), &table).expect("a writable source tree");
        println!("{name}: {} states, {} bytes", dfa.state_count(), table.len());
    }
    for name in formats::TEXT_TABLE_FORMATS {
        let dfa = formats::format_text_language_from_grammar(name).expect("every format builds");
        let mut table = Vec::new();
        dfa.write_table(&mut table);
        let compressed = miniz_oxide::deflate::compress_to_vec(&table, 10);
        std::fs::write(folder.join(format!("{name}.texts.table.deflate")), &compressed)
            .expect("a writable source tree");
        println!("{name} texts: {} states, {} bytes, {} compressed", dfa.state_count(), table.len(), compressed.len());
    }
}
