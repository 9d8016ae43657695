//! `$ref` resolution: base URIs from `$id`, anchors, embedded resources, and documents served
//! by a registry (never the network).

use std::collections::HashMap;
use std::sync::Arc;

use maskforge_core::{Compiler, CompilerOptions, DiagnosticCode, Error, MapRegistry, Registry};

fn compiler(documents: &[(&str, &str)]) -> Compiler {
    let map: HashMap<String, String> = documents.iter().map(|(u, d)| (u.to_string(), d.to_string())).collect();
    let mut options = CompilerOptions::default();
    options.registry = Some(Registry(Arc::new(MapRegistry(map))));
    options.executable_cache_bytes = 0;
    Compiler::new(options)
}

fn check(compiler: &Compiler, schema: &str, accepted: &[&str], refused: &[&str]) {
    let program = compiler.compile_json_schema(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for text in accepted {
        assert!(program.executable().accepts(text.as_bytes()), "{schema} should accept {text}");
    }
    for text in refused {
        assert!(!program.executable().accepts(text.as_bytes()), "{schema} should refuse {text}");
    }
}

#[test]
fn ids_change_the_base_of_the_references_below_them() {
    let schema = r##"{
        "$id": "http://example.com/root.json",
        "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "#/$defs/b"}},
        "$defs": {
            "item": {"$id": "item.json", "type": "integer", "$defs": {"local": {"type": "string"}}},
            "b": {"$id": "nested/b.json", "$ref": "../item.json#/$defs/local"}
        }
    }"##;
    check(&compiler(&[]), schema, &[r##"{"a": 1, "b": "x"}"##], &[r##"{"a": "x"}"##, r##"{"b": 1}"##]);
}

#[test]
fn plain_name_fragments_find_anchors_per_draft() {
    let modern = r##"{"$defs": {"x": {"$anchor": "pos", "minimum": 0}}, "$ref": "#pos"}"##;
    check(&compiler(&[]), modern, &["0", "3"], &["-1"]);
    let draft7 = r##"{"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"x": {"$id": "#pos", "minimum": 0}}, "allOf": [{"$ref": "#pos"}]}"##;
    check(&compiler(&[]), draft7, &["0"], &["-1"]);
}

#[test]
fn the_registry_serves_documents_and_their_own_references() {
    let registry = compiler(&[
        ("http://example.com/list.json", r##"{"type": "array", "items": {"$ref": "item.json"}}"##),
        ("http://example.com/item.json", r##"{"type": "string", "maxLength": 1}"##),
    ]);
    check(&registry, r##"{"$ref": "http://example.com/list.json"}"##, &[r##"["a", "b"]"##], &[r##"["ab"]"##, "[1]"]);
}

#[test]
fn unresolvable_and_cross_draft_references_are_diagnosed() {
    let unknown = compiler(&[]).compile_json_schema(r##"{"$ref": "http://example.com/none.json"}"##);
    match unknown {
        Err(Error::Schema(d)) => {
            assert_eq!(d.code, DiagnosticCode::UnresolvedReference);
            assert!(d.message.contains("http://example.com/none.json"), "{}", d.message);
        }
        other => panic!("{other:?}"),
    }
    let older =
        compiler(&[("http://example.com/old.json", r##"{"$schema": "http://json-schema.org/draft-04/schema#"}"##)]);
    match older.compile_json_schema(r##"{"$ref": "http://example.com/old.json"}"##) {
        Err(Error::Schema(d)) => assert_eq!(d.keyword.as_deref(), Some("$schema")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_drafts_metaschemas_are_bundled() {
    for format_assertion in [false, true] {
        let mut options = CompilerOptions::default();
        options.format_assertion = format_assertion;
        options.executable_cache_bytes = 0;
        let compiler = Compiler::new(options);
        let metaschema = r#"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"#;
        let program = compiler.compile_json_schema(metaschema).unwrap();
        let accepts = |schema: &str| program.executable().accepts(schema.as_bytes());
        for schema in [r#"{"type": "string"}"#, r#"{"properties": {"a": {"minimum": 1}}}"#, "true"] {
            assert!(accepts(schema), "{schema}");
        }
        for schema in [r#"{"type": 12}"#, r#"{"minimum": "1"}"#, r#"{"required": ["a", "a"]}"#, "1"] {
            assert!(!accepts(schema), "{schema}");
        }
        // `pattern` values and `patternProperties` keys are regular expressions when formats
        // are asserted.
        for schema in [r#"{"pattern": "a("}"#, r#"{"patternProperties": {"a(": {}}}"#] {
            assert_eq!(accepts(schema), !format_assertion, "{schema}");
        }
        assert!(accepts(r#"{"pattern": "^a+$", "patternProperties": {"^x-\\d": {}}}"#));
        let draft7 = r##"{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "http://json-schema.org/draft-07/schema#"}"##;
        let program = compiler.compile_json_schema(draft7).unwrap();
        assert!(program.executable().accepts(br#"{"items": [{"type": "null"}]}"#));
        assert!(!program.executable().accepts(br#"{"items": 3}"#));
        assert_eq!(program.executable().accepts(br#"{"patternProperties": {"[": {}}}"#), !format_assertion);
    }
}
