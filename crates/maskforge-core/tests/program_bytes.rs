//! Programs written as bytes and loaded again: a loaded program admits what the program it
//! came from admits, mask for mask on a real tokenizer, on every arm; damaged bytes, bytes of
//! another version and other files are typed errors, never programs.
#![cfg(feature = "tokenizer-processing")]

use std::collections::HashMap;
use std::sync::Arc;

use maskforge_core::mask::allowed_ids;
use maskforge_core::{
    CompiledVocabulary, Compiler, CompilerOptions, Error, LoadError, MapRegistry, Registry, SchemaProgram,
    TokenizerJsonOptions, Vocabulary,
};

fn load(name: &str) -> CompiledVocabulary {
    let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

/// (program, a text it accepts, backend).
fn programs(compiler: &Compiler) -> Vec<(SchemaProgram, &'static str, &'static str)> {
    let schema = |s: &str| compiler.compile_json_schema(s).unwrap();
    let template = |t: &str| compiler.compile_template(t).unwrap();
    vec![
        (
            schema(
                r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "ok": {"type": "boolean"}}, "required": ["name"], "additionalProperties": false}"#,
            ),
            r#"{"name": "Ada", "ok": true}"#,
            "regular",
        ),
        (
            schema(
                r##"{"$defs": {"n": {"type": "object", "properties": {"v": {"type": "integer", "minimum": -3}, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["v"]}}, "$ref": "#/$defs/n"}"##,
            ),
            r#"{"kids": [{"v": -1, "x": "y"}, {"v": 100, "kids": []}], "v": 0}"#,
            "structured",
        ),
        (compiler.compile_regex(r"\d{3}-[a-z]+").unwrap(), "123-abc", "regular"),
        (compiler.compile_choice(&["yes", "no"]).unwrap(), "no", "regular"),
        (
            template(
                r#"{"tags": [{"begin": "<tool_call>\n", "content": {"json": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}, "end": "\n</tool_call>"}], "triggers": ["<tool_call>"]}"#,
            ),
            "Hi <tool_call>\n{\"n\": 12, \"s\": [1]}\n</tool_call> ok",
            "composite",
        ),
        (template(r#"["Answer: ", {"choice": ["yes", "no"]}, "."]"#), "Answer: no.", "regular"),
    ]
}

/// The masks a fresh session of `program` writes along the longest-token path of `text`, with
/// `is_accepting` at each step.
fn masks_along(program: &SchemaProgram, vocabulary: &CompiledVocabulary, text: &str) -> Vec<(Vec<u32>, bool)> {
    let bound = program.bind(vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    let (text, mut at, mut seen) = (text.as_bytes(), 0, Vec::new());
    let tokens = vocabulary.vocabulary();
    loop {
        session.write_mask(&mut mask).unwrap();
        seen.push((mask.clone(), session.is_accepting()));
        if at == text.len() {
            return seen;
        }
        let (id, len) = allowed_ids(&mask)
            .into_iter()
            .filter_map(|id| tokens.token_bytes(id).map(|b| (id, b)))
            .filter(|(_, b)| text[at..].starts_with(b))
            .map(|(id, b)| (id, b.len()))
            .max_by_key(|&(_, len)| len)
            .expect("an allowed token continues the text");
        session.advance(id).unwrap();
        at += len;
    }
}

#[test]
fn a_loaded_program_writes_the_masks_of_the_program_written_on_every_arm() {
    let vocabulary = load("gpt2.tokenizer.json");
    let options = CompilerOptions::default().with_max_json_whitespace(Some(1));
    let writer = Compiler::new(options);
    // The reader's options differ: the program compiles as it did where it was written.
    let reader = Compiler::new(CompilerOptions::default());
    for (program, text, backend) in programs(&writer) {
        assert_eq!(program.executable().backend_name(), backend, "{text}");
        let bytes = program.to_bytes();
        let loaded = reader.load_program(&bytes).unwrap();
        let (a, b) = (program.executable(), loaded.executable());
        assert_eq!((b.backend_name(), b.output(), b.state_count()), (a.backend_name(), a.output(), a.state_count()));
        assert_eq!(masks_along(&loaded, &vocabulary, text), masks_along(&program, &vocabulary, text), "{text}");
        // Written again, the loaded program gives the same bytes.
        assert_eq!(loaded.to_bytes(), bytes, "{text}");
    }
}

#[test]
fn a_template_placing_a_special_token_loads_and_binds_by_name() {
    let vocabulary = load("mistral-v3.tokenizer.json");
    let compiler = Compiler::without_cache();
    let program = compiler
        .compile_template(r#"[{"special": "[TOOL_CALLS]"}, " ", {"json": {"type": "array", "items": {"type": "integer"}, "minItems": 1}}]"#)
        .unwrap();
    let loaded = compiler.load_program(&program.to_bytes()).unwrap();
    assert_eq!(loaded.executable().special_token_names(), ["[TOOL_CALLS]"]);
    let special = vocabulary.vocabulary().special_token_id("[TOOL_CALLS]").unwrap();
    let (bound, original) = (loaded.bind(&vocabulary).unwrap(), program.bind(&vocabulary).unwrap());
    let (mut s, mut o) = (bound.start_session().unwrap(), original.start_session().unwrap());
    let words = bound.mask_word_count();
    let (mut m1, mut m2) = (vec![0u32; words], vec![0u32; words]);
    s.write_mask(&mut m1).unwrap();
    o.write_mask(&mut m2).unwrap();
    assert_eq!(m1, m2);
    assert!(s.is_allowed(special));
    s.advance(special).unwrap();
    o.advance(special).unwrap();
    s.write_mask(&mut m1).unwrap();
    o.write_mask(&mut m2).unwrap();
    assert_eq!(m1, m2);
}

#[test]
fn documents_a_registry_served_travel_with_the_program() {
    let documents = HashMap::from([(
        "https://example.com/point.json".to_owned(),
        r#"{"type": "object", "required": ["x"], "properties": {"x": {"type": "integer", "minimum": 0}}}"#.to_owned(),
    )]);
    let mut options = CompilerOptions::default();
    options.registry = Some(Registry(Arc::new(MapRegistry(documents))));
    let writer = Compiler::new(options);
    let schema = r#"{"type": "array", "items": {"$ref": "https://example.com/point.json"}}"#;
    let template = r#"["P: ", {"json": {"$ref": "https://example.com/point.json"}}]"#;
    // The reader has no registry: what was served is in the bytes.
    let reader = Compiler::without_cache();
    for program in [writer.compile_json_schema(schema).unwrap(), writer.compile_template(template).unwrap()] {
        assert_ne!(program.executable().backend_name(), "regular");
        let loaded = reader.load_program(&program.to_bytes()).unwrap();
        for text in [&br#"[{"x": 3}]"#[..], br#"[{"x": -3}]"#, br#"P: {"x": 3}"#, br#"P: {"y": 3}"#] {
            assert_eq!(loaded.executable().accepts(text), program.executable().accepts(text));
        }
    }
}

fn load_error(bytes: &[u8]) -> LoadError {
    match Compiler::without_cache().load_program(bytes) {
        Err(Error::ProgramLoad(why)) => why,
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn damaged_bytes_are_refused_at_every_position() {
    let compiler = Compiler::without_cache();
    for (program, text, _) in programs(&compiler) {
        let bytes = program.to_bytes();
        let step = (bytes.len() / 300).max(1);
        for at in (0..bytes.len()).step_by(step) {
            let why = load_error(&bytes[..at]);
            assert!(matches!(why, LoadError::NotAProgram | LoadError::Damaged(_)), "{text}: cut at {at}: {why}");
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            let why = load_error(&flipped);
            assert!(matches!(why, LoadError::NotAProgram | LoadError::Version { .. } | LoadError::Damaged(_)), "{why}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(load_error(&longer), LoadError::Damaged(_)));
    }
    assert_eq!(load_error(b"{\"type\": \"object\"}"), LoadError::NotAProgram);
    assert_eq!(load_error(b""), LoadError::NotAProgram);
}

/// Re-checksums `rest` after editing it, as a file written by another build would be.
fn with_header(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let header_len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[20..20 + header_len]).unwrap();
    edit(&mut header);
    let header = header.to_string().into_bytes();
    let mut rest = (header.len() as u32).to_le_bytes().to_vec();
    rest.extend_from_slice(&header);
    rest.extend_from_slice(&bytes[20 + header_len..]);
    let mut out = bytes[..12].to_vec();
    out.extend_from_slice(&crc32fast::hash(&rest).to_le_bytes());
    out.extend_from_slice(&rest);
    out
}

#[test]
fn another_version_or_format_is_a_version_error() {
    let compiler = Compiler::without_cache();
    for (program, _, _) in programs(&compiler) {
        let bytes = program.to_bytes();
        assert!(compiler.load_program(&with_header(&bytes, |_| {})).is_ok(), "the edit alone keeps it loadable");
        let other = with_header(&bytes, |h| h["maskforge"] = "0.0.1".into());
        assert!(matches!(load_error(&other), LoadError::Version { found, .. } if found == "0.0.1"));
        let mut format = bytes.clone();
        format[8] += 1;
        assert!(matches!(load_error(&format), LoadError::Version { .. }));
    }
}

#[test]
fn a_consistent_but_edited_header_is_still_refused() {
    let compiler = Compiler::without_cache();
    for (program, _, backend) in programs(&compiler) {
        let bytes = program.to_bytes();
        // Another backend name than the content's, another output kind.
        let renamed =
            with_header(&bytes, |h| h["backend"] = if backend == "regular" { "structured" } else { "regular" }.into());
        assert!(matches!(load_error(&renamed), LoadError::Damaged(_)));
        let output = with_header(&bytes, |h| h["output"] = "yaml".into());
        assert!(matches!(load_error(&output), LoadError::Damaged(_)));
        if backend != "regular" {
            let unreadable = with_header(&bytes, |h| h["source"]["options"]["default_draft"] = "draft-99".into());
            assert!(matches!(load_error(&unreadable), LoadError::Damaged(_)));
            let broken = with_header(&bytes, |h| h["source"]["document"] = serde_json::json!({"type": 12}));
            assert!(matches!(load_error(&broken), LoadError::Damaged(_)));
        }
    }
}
