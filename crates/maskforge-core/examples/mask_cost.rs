//! The cost of one mask at representative positions, keyword by keyword, on a real vocabulary:
//! the route the mask takes and the number of token-trie nodes the structured matcher is stepped
//! through (a count that depends on the schema, the position and the vocabulary only), with the
//! median time of `write_mask` on this machine for scale. Prints a Markdown table.
//!
//! ```sh
//! cargo run --release -p maskforge-core --features tokenizer-processing --example mask_cost \
//!     [-- path/to/tokenizer.json]
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use maskforge_core::{
    CompiledVocabulary, Compiler, CompilerOptions, MaskRoute, TokenId, TokenizerJsonOptions, Vocabulary,
};

/// (what is measured, schema, text before the position).
const CASES: &[(&str, &str, &str)] = &[
    (
        "`enum` / closed object (regular arm)",
        r#"{"type": "object", "properties": {"a": {"enum": ["x", "y"]}}, "required": ["a"], "additionalProperties": false}"#,
        r#"{"a": "#,
    ),
    ("`{}` (any JSON), in an array", "{}", r#"[{"a": ["#),
    ("`type: object`, at a key", r#"{"type": "object"}"#, "{"),
    (
        "`properties` + `additionalProperties` schema, after a member",
        r#"{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
        r#"{"id": 1, "#,
    ),
    (
        "`properties` + `additionalProperties` schema, at a member's value",
        r#"{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
        r#"{"id": 1, "name": "#,
    ),
    (
        "`patternProperties`, inside a key",
        r#"{"type": "object", "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": false}"#,
        r#"{"x"#,
    ),
    (
        "`propertyNames` with `pattern`, inside a key",
        r#"{"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}"#,
        r#"{"ab"#,
    ),
    (
        "`required` + `maxProperties`, at a key",
        r#"{"type": "object", "required": ["a", "b"], "maxProperties": 2}"#,
        r#"{"a": 1, "#,
    ),
    (
        "`pattern` string, inside the string",
        r#"{"type": "object", "properties": {"s": {"type": "string", "pattern": "^[a-z]+$"}}}"#,
        r#"{"s": "ab"#,
    ),
    (
        "`maxLength: 1000` (counted), inside the string",
        r#"{"type": "array", "items": {"type": "string", "maxLength": 1000}}"#,
        r#"["abc"#,
    ),
    (
        "`format: date-time`, inside the string",
        r#"{"type": "array", "items": {"type": "string", "format": "date-time"}}"#,
        r#"["2026-11"#,
    ),
    (
        "`format: regex`, inside the string",
        r#"{"type": "array", "items": {"type": "string", "format": "regex"}}"#,
        r#"["a(b"#,
    ),
    ("`format: hostname`, inside the string", r#"{"type": "string", "format": "hostname"}"#, r#""www.exa"#),
    ("`format: idn-hostname`, inside a U-label", r#"{"type": "string", "format": "idn-hostname"}"#, "\"b\u{fc}"),
    (
        "`minimum`/`maximum` integer, in a number",
        r#"{"type": "array", "items": {"type": "integer", "minimum": 10, "maximum": 5000}}"#,
        "[12",
    ),
    ("`multipleOf: 0.5`, in a fraction", r#"{"type": "array", "items": {"type": "number", "multipleOf": 0.5}}"#, "[1."),
    ("`uniqueItems`, after an item", r#"{"type": "array", "items": {"type": "integer"}, "uniqueItems": true}"#, "[1, "),
    (
        "`contains` + `maxContains`, after an item",
        r#"{"type": "array", "contains": {"const": 1}, "maxContains": 1}"#,
        "[1, ",
    ),
    ("`not`, at the start", r#"{"not": {"type": "string"}}"#, ""),
    (
        "`if`/`then`/`else`, at a key",
        r#"{"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}}"#,
        r#"{"a": 1, "#,
    ),
    (
        "`oneOf` of objects, at a key",
        r#"{"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]}"#,
        "{",
    ),
    (
        "`unevaluatedProperties: false`, at a key",
        r#"{"type": "object", "allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}"#,
        "{",
    ),
    (
        "`$ref` recursion (a tree), deep inside",
        r##"{"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}"##,
        r#"{"children": [{"children": ["#,
    ),
];

const RUNS: usize = 15;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/tokenizers/gpt2.tokenizer.json").to_owned()
    });
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default())?;
    let byte_ids: HashMap<u8, TokenId> = (0..vocabulary.tokenizer_size() as TokenId)
        .filter_map(|id| match vocabulary.token_bytes(id) {
            Some([byte]) => Some((*byte, id)),
            _ => None,
        })
        .collect();
    let vocabulary = CompiledVocabulary::try_from(Arc::new(vocabulary))?;
    let compiler = Compiler::new(CompilerOptions::default());
    println!("| keyword, position | text before | route | trie nodes stepped | `write_mask` median |");
    println!("|---|---|---|---:|---:|");
    for (what, schema, prefix) in CASES {
        let bound = compiler.compile_json_schema(schema)?.bind(&vocabulary)?;
        let mut session = bound.start_session()?;
        for byte in prefix.bytes() {
            session.advance(byte_ids[&byte])?;
        }
        let cost = session.mask_cost();
        let mut mask = vec![0u32; bound.mask_word_count()];
        let mut times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                session.write_mask(&mut mask).expect("a mask");
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let route = match cost.route {
            MaskRoute::Row => "row",
            MaskRoute::StringRows => "string rows + closing walk",
            MaskRoute::ValueRows => "value rows + walk past the value",
            MaskRoute::TrieWalk => "trie walk",
            _ => "finished",
        };
        let before = if prefix.is_empty() { "(start)".to_owned() } else { format!("`{prefix}`") };
        println!("| {what} | {before} | {route} | {} | {:.0} µs |", cost.trie_steps, times[RUNS / 2]);
    }
    Ok(())
}
