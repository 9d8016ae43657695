//! The regular arm's languages, checked on hand-written instances.

use std::path::Path;

use maskforge_core::low_level::{compile_regular, SchemaDocument};
use maskforge_core::{Compiler, DiagnosticCode, Error};
use maskforge_core::{CompilerOptions, Draft};

fn compile(schema: &str) -> Result<maskforge_core::SchemaProgram, Error> {
    Compiler::without_cache().compile_json_schema(schema)
}

fn check(schema: &str, accepted: &[&str], refused: &[&str]) {
    let program = compile(schema).unwrap_or_else(|e| panic!("{schema} does not compile: {e}"));
    let executable = program.executable();
    for text in accepted {
        assert!(executable.accepts(text.as_bytes()), "{schema} should accept {text}");
    }
    for text in refused {
        assert!(!executable.accepts(text.as_bytes()), "{schema} should refuse {text}");
    }
}

fn code(schema: &str) -> DiagnosticCode {
    match compile(schema) {
        Err(Error::Schema(d)) => d.code,
        Ok(_) => panic!("{schema} compiled"),
        Err(e) => panic!("{schema}: unexpected error {e}"),
    }
}

#[test]
fn scalar_types_and_unions() {
    check(r#"{"type": "string"}"#, &[r#""""#, r#" "a\n" "#, r#""\u00e9""#], &["1", "null", r#""a"#, r#"" "x"#]);
    check(r#"{"type": ["null", "boolean"]}"#, &["null", "true", " false\n"], &["nul", "1", r#""true""#]);
    check(r#"{"type": "number"}"#, &["1", "-0.5e+3", "0"], &["01", "1.", "\"1\""]);
}

#[test]
fn enums_and_consts_admit_every_spelling() {
    check(
        r#"{"enum": ["a", true, null]}"#,
        &[r#""a""#, r#""\u0061""#, "true", "null"],
        &["false", r#""b""#, r#""a ""#],
    );
    check(
        r#"{"const": {"x": ["y", false]}}"#,
        &[r#"{"x":["y",false]}"#, r#"{ "x" : [ "y" , false ] }"#],
        &[r#"{"x":["y"]}"#, r#"{"x":["y",false],"x":["y",false]}"#],
    );
    check(r#"{"enum": ["a", "b"], "type": "string", "maxLength": 1}"#, &[r#""a""#], &[r#""ab""#]);
}

#[test]
fn closed_objects_in_any_order_without_duplicates() {
    let schema = r#"{"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"enum": ["x"]}, "c": {"type": "null"}},
                    "required": ["a", "b"], "additionalProperties": false}"#;
    check(
        schema,
        &[
            r#"{"a":true,"b":"x"}"#,
            r#"{"b":"x","a":false}"#,
            r#"{ "c" : null , "b":"x","a":true }"#,
            r#"{"\u0061":true,"b":"x"}"#,
        ],
        &[
            r#"{"a":true}"#,
            r#"{"a":true,"b":"x","a":true}"#,
            r#"{"a":true,"b":"x","d":1}"#,
            r#"{}"#,
            r#"{"a":true,,"b":"x"}"#,
        ],
    );
    check(r#"{"type": "object", "additionalProperties": false}"#, &["{}", "{ }"], &[r#"{"a":1}"#]);
    check(
        r#"{"properties": {"a": {"type": "null"}, "b": {"type": "null"}}, "additionalProperties": false, "minProperties": 1, "maxProperties": 1, "type": "object"}"#,
        &[r#"{"a":null}"#, r#"{"b":null}"#],
        &["{}", r#"{"a":null,"b":null}"#],
    );
}

#[test]
fn bounded_arrays() {
    check(
        r#"{"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1, "maxItems": 2}"#,
        &[r#"["a"]"#, r#"[ "a" , "b" ]"#, r#"["b","b"]"#],
        &["[]", r#"["a","b","a"]"#, r#"["c"]"#, r#"["a",]"#],
    );
    check(r#"{"type": "array", "items": {"type": "string"}}"#, &["[]", r#"["x","y","z"]"#], &["[1]"]);
    check(
        r#"{"type": "array", "prefixItems": [{"type": "null"}, {"type": "boolean"}], "items": false}"#,
        &["[]", "[null]", "[null,true]"],
        &["[true]", "[null,true,null]"],
    );
    check(
        r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "null"}], "additionalItems": {"type": "string"}}"#,
        &["[]", "[null]", r#"[null,"a","b"]"#],
        &[r#"["a"]"#],
    );
}

#[test]
fn combinators_use_automaton_products() {
    check(
        r#"{"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]}"#,
        &[r#""ab""#, r#""abc""#],
        &[r#""a""#, r#""abcd""#],
    );
    check(r#"{"anyOf": [{"type": "null"}, {"enum": ["a"]}]}"#, &["null", r#""a""#], &[r#""b""#]);
    check(r#"{"oneOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]}"#, &[r#""a""#, r#""c""#], &[r#""b""#]);
    check(r#"{"type": "string", "not": {"enum": ["a"]}}"#, &[r#""b""#, r#""""#], &[r#""a""#, r#""\u0061""#]);
    check(
        r##"{"$defs": {"flag": {"type": "boolean"}}, "type": "array", "items": {"$ref": "#/$defs/flag"}, "maxItems": 1}"##,
        &["[]", "[true]"],
        &["[null]"],
    );
}

#[test]
fn what_is_not_regular_goes_to_the_structured_arm() {
    for schema in [
        r#"{"type": "object"}"#,
        r#"{"type": "integer"}"#,
        "true",
        r##"{"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}"##,
    ] {
        let program = compile(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        assert_eq!(program.executable().backend_name(), "structured", "{schema}");
    }
    assert_eq!(compile(r#"{"type": "string"}"#).unwrap().executable().backend_name(), "regular");
}

#[test]
fn unsupported_and_malformed_schemas_are_diagnosed() {
    assert_eq!(code(r#"{"type": "string", "pattern": "(a)\\1"}"#), DiagnosticCode::UnsupportedPattern);
    assert_eq!(code(r#"{"type": "string", "pattern": "(a"}"#), DiagnosticCode::UnsupportedPattern);
    assert_eq!(code(r##"{"$ref": "#/$defs/missing"}"##), DiagnosticCode::UnresolvedReference);
    assert_eq!(code(r#"{"$ref": "http://example.com/other.json"}"#), DiagnosticCode::UnresolvedReference);
    assert_eq!(code(r#"false"#), DiagnosticCode::UnsatisfiableSchema);
    assert_eq!(code(r#"{"type": "string", "enum": [1]}"#), DiagnosticCode::UnsatisfiableSchema);
    assert_eq!(code(r#"{"type": 3}"#), DiagnosticCode::InvalidKeywordValue);
    assert_eq!(code(r#"{"type": "strin"}"#), DiagnosticCode::InvalidKeywordValue);
    assert_eq!(code(r#"{"minLength": -1, "type": "string"}"#), DiagnosticCode::InvalidKeywordValue);
    assert_eq!(code(r#"{"type": "string""#), DiagnosticCode::InvalidJson);
    assert_eq!(code(r#"{"$schema": "http://example.com/draft-99", "type": "string"}"#), DiagnosticCode::UnknownDraft);
}

#[test]
fn diagnostics_carry_keyword_and_pointer() {
    let Err(Error::Schema(d)) = compile(
        r#"{"type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=x)"}}, "additionalProperties": false}"#,
    ) else {
        panic!("expected a diagnostic");
    };
    assert_eq!(d.code, DiagnosticCode::UnsupportedPattern);
    assert_eq!(d.keyword.as_deref(), Some("pattern"));
    assert_eq!(d.pointer, "/properties/a/pattern");
    assert!(d.to_string().starts_with("MF-E008 at /properties/a/pattern (pattern)"), "{d}");
}

#[test]
fn unknown_keywords_are_annotations() {
    check(r#"{"type": "null", "x-vendor": {"type": "string"}, "markdownDescription": "hi"}"#, &["null"], &[r#""a""#]);
}

#[test]
fn patterns_apply_to_the_decoded_string() {
    check(r#"{"type": "string", "pattern": "^a+$"}"#, &[r#""aa""#, r#""\u0061a""#], &[r#""ab""#, r#""""#, r#""a\n""#]);
    // Unanchored: a match anywhere will do.
    check(r#"{"type": "string", "pattern": "\\d"}"#, &[r#""x1y""#, r#""\u0031""#], &[r#""xy""#, r#""١""#]);
}

#[test]
fn formats_are_exact_languages_when_asserted() {
    check(r#"{"type": "string", "format": "date"}"#, &[r#""2024-02-29""#], &[r#""2023-02-29""#, r#""2024-2-29""#]);
    let annotation = Compiler::new(maskforge_core::CompilerOptions::default().with_format_assertion(false))
        .compile_json_schema(r#"{"type": "string", "format": "date"}"#)
        .unwrap();
    assert!(annotation.executable().accepts(br#""not a date""#));
    // Unknown formats are annotations.
    check(r#"{"type": "string", "format": "x-custom"}"#, &[r#""anything""#], &["1"]);
}

#[test]
fn const_is_an_unknown_keyword_in_draft_4_on_both_arms() {
    let draft4 = "\"$schema\": \"http://json-schema.org/draft-04/schema#\"";
    // Regular (a string const) and structured (an open object) schemas.
    for (body, other) in
        [(r#""type": "string", "const": "a""#, r#""b""#), (r#""type": "object", "const": {}"#, r#"{"x":1}"#)]
    {
        check(&format!("{{{draft4}, {body}}}"), &[other], &[]);
        check(&format!("{{{body}}}"), &[], &[other]);
    }
}

/// Each malformed keyword gets one diagnostic whichever arm would compile the schema, whatever
/// types it admits: both arms lower from one reading of each schema object (`schema::object`).
#[test]
fn a_malformed_keyword_gets_one_diagnostic_on_either_arm() {
    let draft4 = r#""$schema": "http://json-schema.org/draft-04/schema#", "#;
    // A string schema the regular arm compiles, and an open object the structured arm does.
    let arms = [(r#""type": "string""#, "regular"), (r#""type": "object", "properties": {"x": {}}"#, "structured")];
    for (draft, arm) in [("", arms[0]), ("", arms[1]), (draft4, arms[0]), (draft4, arms[1])] {
        let program = compile(&format!("{{{draft}{}}}", arm.0)).unwrap();
        assert_eq!(program.executable().backend_name(), arm.1);
    }
    let malformed = [
        ("", r#""multipleOf": 0"#, "multipleOf"),
        ("", r#""multipleOf": -1.5"#, "multipleOf"),
        ("", r#""minimum": "1""#, "minimum"),
        ("", r#""exclusiveMaximum": true"#, "exclusiveMaximum"),
        (draft4, r#""exclusiveMinimum": 3"#, "exclusiveMinimum"),
        ("", r#""maxLength": -1"#, "maxLength"),
        ("", r#""minItems": 1.5"#, "minItems"),
        ("", r#""required": "a""#, "required"),
        ("", r#""uniqueItems": 1"#, "uniqueItems"),
        // Object and array keywords are read whatever types the schema admits.
        ("", r#""patternProperties": []"#, "patternProperties"),
        ("", r#""dependentRequired": {"a": 1}"#, "dependentRequired/a"),
        ("", r#""prefixItems": {}"#, "prefixItems"),
        ("", r#""enum": 3"#, "enum"),
        ("", r#""allOf": []"#, "allOf"),
        ("", r#""anyOf": {}"#, "anyOf"),
        ("", r#""$ref": 1"#, "$ref"),
        ("", r#""pattern": 1"#, "pattern"),
    ];
    for (draft, keyword_text, keyword) in malformed {
        let diagnostics: Vec<_> = arms
            .iter()
            .map(|(arm, _)| match compile(&format!("{{{draft}{arm}, {keyword_text}}}")) {
                Err(Error::Schema(d)) => (d.code, d.keyword, d.pointer, d.message),
                other => panic!("{keyword_text} beside {arm}: {other:?}"),
            })
            .collect();
        assert_eq!(diagnostics[0], diagnostics[1], "{keyword_text}");
        assert_eq!(diagnostics[0].0, DiagnosticCode::InvalidKeywordValue, "{keyword_text}");
        // `keyword` is the pointer below the schema, whose first token names the keyword.
        assert_eq!(diagnostics[0].1.as_deref(), keyword.split('/').next(), "{keyword_text}");
        assert_eq!(diagnostics[0].2, format!("/{keyword}"), "{keyword_text}");
    }
}

/// Compilation may try the structured arm first (when the document shows open objects or
/// numbers decided by value) and skip the regular one. Whatever the order, the outcome must be
/// the regular arm's whenever that arm decides: its automaton when it builds one, its
/// diagnostic when it refuses the schema for a reason of its own. Checked on every schema of
/// the official suite.
#[test]
fn the_order_of_the_arms_never_changes_the_outcome() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/JSON-Schema-Test-Suite/tests");
    let drafts = [
        ("draft4", Draft::Draft4),
        ("draft6", Draft::Draft6),
        ("draft7", Draft::Draft7),
        ("draft2019-09", Draft::Draft201909),
        ("draft2020-12", Draft::Draft202012),
    ];
    let mut decided_by_the_regular_arm = 0;
    for (directory, draft) in drafts {
        let mut options = CompilerOptions::default();
        options.default_draft = draft;
        let mut files: Vec<_> = std::fs::read_dir(suite.join(directory))
            .expect("the vendored suite")
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let groups: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).expect("readable")).expect("JSON");
            for group in groups.as_array().expect("an array of groups") {
                let text = group["schema"].to_string();
                let Ok(document) = SchemaDocument::parse(&text, &options) else { continue };
                let regular = compile_regular(&document, &options);
                let compiled = Compiler::new(options.clone()).compile_json_schema(&text);
                let at = format!("{} {}", file.display(), text);
                match regular {
                    Ok(_) => {
                        let program = compiled.unwrap_or_else(|e| panic!("{at}: {e}"));
                        assert_eq!(program.executable().backend_name(), "regular", "{at}");
                        decided_by_the_regular_arm += 1;
                    }
                    Err(Error::Schema(d))
                        if matches!(
                            d.code,
                            DiagnosticCode::RequiresStructuredBackend | DiagnosticCode::ResourceLimit
                        ) => {}
                    Err(refusal) => {
                        match compiled {
                            Ok(_) => panic!("{at}: compiled, though the regular arm refuses it: {refusal}"),
                            Err(error) => assert_eq!(format!("{error:?}"), format!("{refusal:?}"), "{at}"),
                        }
                        decided_by_the_regular_arm += 1;
                    }
                }
            }
        }
    }
    assert!(decided_by_the_regular_arm > 250, "only {decided_by_the_regular_arm} schemas checked");
}
