//! Generation policies narrow the language on purpose: `max_json_whitespace` bounds runs of
//! insignificant whitespace, `property_order = declared` fixes the order of declared properties,
//! `closed_objects` refuses the keys nothing in the schema declares. Both arms must agree, and
//! each policy is part of the cache identity.

use std::sync::{Arc, OnceLock};

use maskforge_core::low_level::{compile_regular, SchemaDocument};
use maskforge_core::{
    build_vocabulary, CompiledVocabulary, Compiler, CompilerOptions, DiagnosticCode, Draft, Error, MapRegistry,
    PropertyOrder, Registry, TokenId,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn accepts(options: &CompilerOptions, schema: &str, text: &str) -> (bool, &'static str) {
    let program =
        Compiler::new(options.clone()).compile_json_schema(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    (program.executable().accepts(text.as_bytes()), program.executable().backend_name())
}

/// One regular and one structured schema over the same instances.
const OBJECTS: [&str; 2] = [
    r#"{"type": "object", "properties": {"b": {"type": "boolean"}, "a": {"type": "string", "maxLength": 3}}, "required": ["a"], "additionalProperties": false}"#,
    r#"{"type": "object", "properties": {"b": {"type": "boolean"}, "a": {"type": "string"}}, "required": ["a"]}"#,
];

#[test]
fn whitespace_runs_are_bounded_outside_strings_in_both_arms() {
    let options = CompilerOptions::default().with_max_json_whitespace(Some(1));
    let mut backends = Vec::new();
    for schema in OBJECTS {
        for (text, want) in [
            (r#"{"a":"x"}"#, true),
            (r#" { "a" : "x" } "#, true),
            (r#"{"a":"   "}"#, true),
            (r#"{ "a":"x"  }"#, false),
            (r#"  {"a":"x"}"#, false),
            (r#"{"a":"x"}  "#, false),
            ("{\"b\":true ,\n\"a\":\"x\"}", true),
            ("{\"b\":true \n,\"a\":\"x\"}", false),
        ] {
            let (got, backend) = accepts(&options, schema, text);
            assert_eq!(got, want, "{backend}: {text:?}");
            backends.push(backend);
        }
        // Without the policy, any amount.
        assert!(accepts(&CompilerOptions::default(), schema, "  {   \"a\" :\n\n\"x\"  }  ").0);
    }
    assert!(backends.contains(&"regular") && backends.contains(&"structured"));
    let zero = CompilerOptions::default().with_max_json_whitespace(Some(0));
    assert!(accepts(&zero, "{}", r#"{"k":[1,{"x":"a b"}]}"#).0);
    assert!(!accepts(&zero, "{}", r#"{"k": 1}"#).0);
    assert!(!accepts(&zero, "{}", r#"[1, 2]"#).0);
}

#[test]
fn declared_order_fixes_the_order_of_declared_properties_in_both_arms() {
    let options = CompilerOptions::default().with_property_order(PropertyOrder::Declared);
    for schema in OBJECTS {
        for (text, want) in [(r#"{"b":true,"a":"x"}"#, true), (r#"{"a":"x"}"#, true), (r#"{"a":"x","b":true}"#, false)]
        {
            let (got, backend) = accepts(&options, schema, text);
            assert_eq!(got, want, "{backend}: {text}");
            assert!(accepts(&CompilerOptions::default(), schema, text).0, "{backend}: any order admits {text}");
        }
    }
    // Undeclared keys come after the declared ones, never before a required one.
    let open = OBJECTS[1];
    assert!(accepts(&options, open, r#"{"a":"x","z":null}"#).0);
    assert!(accepts(&options, open, r#"{"b":true,"a":"x","z":null,"y":2}"#).0);
    assert!(!accepts(&options, open, r#"{"a":"x","z":null,"b":true}"#).0);
    assert!(!accepts(&options, open, r#"{"z":null,"a":"x"}"#).0);
    let program = Compiler::new(options.clone()).compile_json_schema(open).unwrap();
    let mut matcher = program.executable().start_matcher();
    assert!(matcher.feed(br#"{"b":true,"#), "a required key still fits");
    let mut matcher = program.executable().start_matcher();
    assert!(!matcher.feed(br#"{"a":"x","z":1,"b":"#), "b closed once an undeclared key came");
    let mut matcher = program.executable().start_matcher();
    assert!(!matcher.feed(br#"{"z"#), "an undeclared key before the required a is a dead end");
}

#[test]
fn policies_are_part_of_the_cache_identity() {
    // The same schema text through one process-wide cache, first without the policies.
    let schema = OBJECTS[1];
    let text = r#"{"a":"x","b":true}"#;
    let compiler_any = Compiler::with_global_cache(CompilerOptions::default());
    assert!(compiler_any.compile_json_schema(schema).unwrap().executable().accepts(text.as_bytes()));
    for options in [
        CompilerOptions::default().with_property_order(PropertyOrder::Declared),
        CompilerOptions::default().with_max_json_whitespace(Some(0)),
    ] {
        let compiler = Compiler::with_global_cache(options);
        let program = compiler.compile_json_schema(schema).unwrap();
        let spaced = r#"{"a":"x", "b":true}"#;
        assert!(!program.executable().accepts(text.as_bytes()) || !program.executable().accepts(spaced.as_bytes()));
    }
    let extra = br#"{"a":"x","z":1}"#;
    assert!(compiler_any.compile_json_schema(schema).unwrap().executable().accepts(extra));
    let closed = Compiler::with_global_cache(CompilerOptions::default().with_closed_objects(true));
    assert!(!closed.compile_json_schema(schema).unwrap().executable().accepts(extra));
    assert!(compiler_any.compile_json_schema(schema).unwrap().executable().accepts(extra));
    assert_ne!(CompilerOptions::default(), CompilerOptions::default().with_closed_objects(true));
}

#[test]
fn declared_order_keeps_schemas_that_differ_only_in_key_order_apart_in_the_cache() {
    let compiler = Compiler::new(CompilerOptions::default().with_property_order(PropertyOrder::Declared));
    let ab = r#"{"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "null"}}}"#;
    let ba = r#"{"type": "object", "properties": {"b": {"type": "null"}, "a": {"type": "null"}}}"#;
    let text = br#"{"a":null,"b":null}"#;
    assert!(compiler.compile_json_schema(ab).unwrap().executable().accepts(text));
    assert!(!compiler.compile_json_schema(ba).unwrap().executable().accepts(text));
    // Without the policy both texts are one schema.
    let any = Compiler::new(CompilerOptions::default());
    any.compile_json_schema(ab).unwrap();
    any.compile_json_schema(ba).unwrap();
    assert_eq!(any.cache_stats().executable_hits, 1);
}

fn closed() -> CompilerOptions {
    CompilerOptions::default().with_closed_objects(true)
}

/// Checks `accepted` and `refused` under `closed_objects`, and that without the policy every
/// text of `open` (refused ones among them) is accepted; returns the backend.
fn check_closed(schema: &str, accepted: &[&str], refused: &[&str], open: &[&str]) -> &'static str {
    let (_, backend) = accepts(&closed(), schema, "null");
    for text in accepted {
        assert_eq!(accepts(&closed(), schema, text), (true, backend), "{schema} should accept {text}");
    }
    for text in refused {
        assert_eq!(accepts(&closed(), schema, text), (false, backend), "{schema} should refuse {text}");
    }
    for text in open {
        assert!(
            accepts(&CompilerOptions::default(), schema, text).0,
            "{schema} without the policy should accept {text}"
        );
    }
    backend
}

#[test]
fn closed_objects_refuse_undeclared_keys_in_both_arms() {
    // Closed by the policy, this object is regular (open, it needs the structured arm).
    let plain =
        r#"{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}, "required": ["a"]}"#;
    let backend = check_closed(
        plain,
        &[r#"{"a":"x"}"#, r#"{"b":true,"a":"x"}"#],
        &[r#"{"a":"x","z":1}"#, r#"{"z":1,"a":"x"}"#, r#"{"b":true}"#],
        &[r#"{"a":"x","z":1}"#],
    );
    assert_eq!(backend, "regular");
    assert_eq!(accepts(&CompilerOptions::default(), plain, "{}").1, "structured");
    // Integers are decided by value: the structured arm.
    let counted = r#"{"type": "object", "properties": {"n": {"type": "integer"}, "o": {"type": "object", "properties": {"k": {"type": "null"}}}}}"#;
    let backend = check_closed(
        counted,
        &[r#"{"n":1}"#, r#"{"o":{"k":null},"n":2}"#, "{}", r#"{"o":{}}"#],
        &[r#"{"n":1,"z":1}"#, r#"{"o":{"k":null,"z":1}}"#],
        &[r#"{"n":1,"z":1}"#, r#"{"o":{"k":null,"z":1}}"#],
    );
    assert_eq!(backend, "structured");
    // An object schema without properties takes none; closed members keep a union regular.
    let empty = r#"{"type": "object", "properties": {"o": {"type": "object"}}, "additionalProperties": false}"#;
    let backend = check_closed(empty, &[r#"{"o":{}}"#, "{}"], &[r#"{"o":{"k":null}}"#], &[r#"{"o":{"k":null}}"#]);
    assert_eq!(backend, "regular");
    let union = r#"{"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
        {"properties": {"b": {"type": "null"}}, "additionalProperties": false}]}"#;
    let backend = check_closed(union, &[r#"{"a":"x"}"#, r#"{"b":null}"#, "{}"], &[r#"{"a":"x","b":null}"#], &[]);
    assert_eq!((backend, accepts(&CompilerOptions::default(), union, "{}").1), ("regular", "regular"));
    // Alternatives that are closed already stay within what `unevaluatedProperties` combines.
    for value in [r#"{"type": "string"}"#, r#"{"type": "integer"}"#] {
        let branches: Vec<String> = (0..7)
            .map(|i| {
                format!(r#"{{"properties": {{"k{i}": {value}}}, "required": ["k{i}"], "additionalProperties": false}}"#)
            })
            .collect();
        let schema = format!(r#"{{"oneOf": [{}]}}"#, branches.join(", "));
        let text = if value.contains("string") { r#"{"k6":"s"}"# } else { r#"{"k6":6}"# };
        check_closed(&schema, &[text], &[r#"{"k6":null}"#, r#"{"k7":1}"#], &[]);
    }
    // Items, prefix items, contains and the schemas of additional and pattern properties are
    // value positions too.
    for (schema, accepted, refused) in [
        (
            r#"{"type": "array", "items": {"type": "object", "properties": {"a": {}}}}"#,
            r#"[{"a":1},{}]"#,
            r#"[{"a":1},{"b":1}]"#,
        ),
        (r#"{"prefixItems": [{"properties": {"a": {}}}]}"#, r#"[{"a":[]},{"z":1}]"#, r#"[{"z":1}]"#),
        (r#"{"contains": {"required": ["a"], "properties": {"a": {}}}}"#, r#"[{"a":1},{"z":1}]"#, r#"[{"a":1,"z":1}]"#),
        (r#"{"additionalProperties": {"properties": {"x": {}}}}"#, r#"{"k":{"x":1}}"#, r#"{"k":{"y":1}}"#),
        (r#"{"patternProperties": {"^k": {"properties": {"x": {}}}}}"#, r#"{"k1":{"x":1}}"#, r#"{"k1":{"y":1}}"#),
        (r#"{"unevaluatedProperties": {"properties": {"x": {}}}}"#, r#"{"k":{"x":1}}"#, r#"{"k":{"y":1}}"#),
        (r#"{"unevaluatedItems": {"properties": {"x": {}}}}"#, r#"[{"x":1}]"#, r#"[{"y":1}]"#),
    ] {
        check_closed(schema, &[accepted], &[refused], &[refused]);
    }
}

#[test]
fn closed_objects_keep_what_additional_and_pattern_properties_admit() {
    let typed =
        r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#;
    check_closed(typed, &[r#"{"a":1,"z":"s","y":""}"#], &[r#"{"a":1,"z":2}"#], &[]);
    let open = r#"{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}"#;
    check_closed(open, &[r#"{"a":"x","z":{"q":[1]}}"#], &[r#"{"a":1}"#], &[]);
    let patterns = r#"{"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x-": {"type": "string"}}}"#;
    check_closed(
        patterns,
        &[r#"{"a":"x","x-1":"s","x-":""}"#],
        &[r#"{"a":"x","y":"s"}"#, r#"{"x-1":2}"#],
        &[r#"{"a":"x","y":"s"}"#],
    );
}

#[test]
fn closed_objects_see_what_in_place_applicators_evaluate() {
    let both = r#"{"allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "boolean"}}}]}"#;
    check_closed(
        both,
        &[r#"{"a":"x","b":true}"#, r#"{"b":false}"#, "{}"],
        &[r#"{"a":"x","c":1}"#],
        &[r#"{"a":"x","c":1}"#],
    );
    // Each branch evaluates what it matched: both branches when both match.
    let either = r#"{"anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}, {"properties": {"b": {"type": "boolean"}}, "required": ["b"]}]}"#;
    check_closed(
        either,
        &[r#"{"a":"x"}"#, r#"{"b":true}"#, r#"{"a":"x","b":true}"#],
        // b is evaluated only by the branch it fails.
        &[r#"{"a":"x","b":1}"#, r#"{"a":"x","c":1}"#],
        &[r#"{"a":"x","b":1}"#, r#"{"a":"x","c":1}"#],
    );
    let one = r#"{"oneOf": [{"properties": {"kind": {"const": "p"}, "x": {}}, "required": ["kind"]}, {"properties": {"kind": {"const": "q"}, "y": {}}, "required": ["kind"]}]}"#;
    check_closed(
        one,
        &[r#"{"kind":"p","x":1}"#, r#"{"kind":"q","y":1}"#],
        &[r#"{"kind":"p","y":1}"#],
        &[r#"{"kind":"p","y":1}"#],
    );
    let conditional = r#"{"if": {"properties": {"k": {"const": "x"}}, "required": ["k"]}, "then": {"properties": {"x": {}}}, "else": {"properties": {"y": {}}}}"#;
    check_closed(
        conditional,
        &[r#"{"k":"x","x":1}"#, r#"{"y":1}"#],
        // A failed `if` evaluates nothing.
        &[r#"{"k":"x","y":1}"#, r#"{"k":"z","y":1}"#],
        &[r#"{"k":"x","y":1}"#],
    );
    let dependent = r#"{"properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {}}}}}"#;
    check_closed(dependent, &[r#"{"a":1,"b":2}"#, r#"{"a":1}"#], &[r#"{"b":2}"#, r#"{"a":1,"c":1}"#], &[r#"{"b":2}"#]);
    // `not` evaluates nothing; listed values (`const`, `enum`) declare their keys.
    let negated = r#"{"properties": {"a": {}}, "not": {"properties": {"b": {"type": "null"}}, "required": ["b"]}}"#;
    check_closed(negated, &[r#"{"a":1}"#], &[r#"{"a":1,"b":1}"#], &[r#"{"a":1,"b":1}"#]);
    let listed = r#"{"properties": {"c": {"const": {"k": "v"}}, "e": {"enum": [{"m": null}, 1]}}}"#;
    check_closed(listed, &[r#"{"c":{"k":"v"}}"#, r#"{"e":{"m":null}}"#], &[r#"{"z":1}"#], &[r#"{"z":1}"#]);
    let listed = r#"{"anyOf": [{"const": {"c": "v", "d": "w"}}, {"properties": {"e": {}}}]}"#;
    check_closed(
        listed,
        &[r#"{"c":"v","d":"w"}"#, r#"{"e":1}"#],
        &[r#"{"c":"v"}"#, r#"{"e":1,"z":1}"#],
        &[r#"{"c":"v"}"#],
    );
}

#[test]
fn closed_objects_close_reference_sites_not_their_targets() {
    // Pydantic's shape: nested models in `$defs`, reached by `$ref` from properties.
    let pydantic = r##"{"$defs": {"Address": {"properties": {"city": {"title": "City", "type": "string"}}, "required": ["city"], "title": "Address", "type": "object"}},
        "properties": {"name": {"title": "Name", "type": "string"}, "address": {"$ref": "#/$defs/Address"}, "tags": {"items": {"$ref": "#/$defs/Address"}, "type": "array"}},
        "required": ["name", "address"], "title": "Person", "type": "object"}"##;
    check_closed(
        pydantic,
        &[r#"{"name":"n","address":{"city":"c"}}"#, r#"{"name":"n","address":{"city":"c"},"tags":[{"city":"d"}]}"#],
        &[
            r#"{"name":"n","address":{"city":"c","zip":"1"}}"#,
            r#"{"name":"n","address":{"city":"c"},"age":1}"#,
            r#"{"name":"n","address":{"city":"c"},"tags":[{"city":"d","x":1}]}"#,
        ],
        &[r#"{"name":"n","address":{"city":"c","zip":"1"},"age":1}"#],
    );
    // A target that is a value position elsewhere is applied in place by the reference: the root
    // sees what /properties/a evaluates, while /properties/a itself stays closed.
    let in_place = r##"{"properties": {"a": {"properties": {"x": {}}}}, "allOf": [{"$ref": "#/properties/a"}]}"##;
    check_closed(
        in_place,
        &[r#"{"a":{"x":1},"x":2}"#],
        &[r#"{"a":{"x":1,"y":1}}"#, r#"{"y":1}"#],
        &[r#"{"a":{"x":1,"y":1}}"#, r#"{"y":1}"#],
    );
    // A registry's document is reached in place too; the reference site decides.
    let mut documents = std::collections::HashMap::new();
    documents.insert(
        "http://example.com/point.json".to_string(),
        r#"{"type": "object", "properties": {"x": {"type": "string"}, "inner": {"properties": {"i": {}}}}}"#
            .to_string(),
    );
    let mut options = closed();
    options.registry = Some(Registry(Arc::new(MapRegistry(documents))));
    let external = r#"{"properties": {"p": {"$ref": "http://example.com/point.json"}}, "allOf": [{"$ref": "http://example.com/point.json"}]}"#;
    for (text, want) in [
        (r#"{"p":{"x":"s","inner":{"i":1}},"x":"t"}"#, true),
        (r#"{"p":{"x":"s","y":1}}"#, false),
        (r#"{"p":{"inner":{"i":1,"j":2}}}"#, false),
        (r#"{"y":1}"#, false),
    ] {
        assert_eq!(accepts(&options, external, text).0, want, "{text}");
    }
    // Recursion through the root.
    let tree = r##"{"type": "object", "properties": {"v": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#"}}}}"##;
    check_closed(
        tree,
        &[r#"{"v":"a","kids":[{"v":"b","kids":[]}]}"#],
        &[r#"{"v":"a","kids":[{"v":"b","x":1}]}"#, r#"{"v":"a","x":1}"#],
        &[r#"{"v":"a","kids":[{"v":"b","x":1}]}"#],
    );
}

#[test]
fn closed_objects_apply_in_every_draft() {
    for draft in ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#"] {
        // Before 2019-09 a `$ref` hides its siblings; the reference site is still closed.
        let schema = format!(
            r##"{{"$schema": "{draft}", "definitions": {{"P": {{"type": "object", "properties": {{"x": {{"type": "string"}}}}}}}},
                "type": "object", "properties": {{"p": {{"$ref": "#/definitions/P"}}, "q": {{"items": [{{"properties": {{"i": {{}}}}}}]}}}}}}"##
        );
        check_closed(
            &schema,
            &[r#"{"p":{"x":"s"}}"#, r#"{"q":[{"i":1},{"z":1}]}"#],
            &[r#"{"p":{"x":"s","y":2}}"#, r#"{"p":{},"z":1}"#, r#"{"q":[{"i":1,"z":1}]}"#],
            &[r#"{"p":{"x":"s","y":2}}"#, r#"{"p":{},"z":1}"#],
        );
    }
    // The default draft, for schemas without `$schema`.
    let options = closed().with_default_draft(Draft::Draft7);
    let schema = r#"{"allOf": [{"properties": {"a": {}}}], "properties": {"b": {}}}"#;
    assert!(accepts(&options, schema, r#"{"a":1,"b":2}"#).0);
    assert!(!accepts(&options, schema, r#"{"a":1,"c":2}"#).0);
}

#[test]
fn closed_objects_leave_schemas_that_say_nothing_open() {
    let schema = r#"{"properties": {"meta": {}, "any": true, "doc": {"description": "anything", "$comment": "free"}}}"#;
    check_closed(
        schema,
        &[r#"{"meta":{"z":1},"any":{"q":[{"r":1}]},"doc":{"k":null}}"#],
        &[r#"{"zz":1}"#],
        &[r#"{"zz":1}"#],
    );
    // The root `{}` and `true` admit every value.
    for schema in ["{}", "true", r#"{"title": "t"}"#] {
        assert!(accepts(&closed(), schema, r#"{"a":{"b":1}}"#).0, "{schema}");
    }
    // A schema that only constrains other types still takes no undeclared keys.
    assert!(!accepts(&closed(), r#"{"properties": {"s": {"minLength": 2}}}"#, r#"{"s":{"k":1}}"#).0);
    assert!(accepts(&closed(), r#"{"properties": {"s": {"minLength": 2}}}"#, r#"{"s":{}}"#).0);
}

#[test]
fn closed_objects_off_changes_nothing() {
    for schema in [
        OBJECTS[0],
        OBJECTS[1],
        r#"{"allOf": [{"properties": {"a": {}}}], "properties": {"b": {"properties": {"c": {}}}}}"#,
        r##"{"$defs": {"D": {"properties": {"x": {}}}}, "properties": {"d": {"$ref": "#/$defs/D"}}}"##,
    ] {
        let default = Compiler::new(CompilerOptions::default()).compile_json_schema(schema).unwrap();
        let off = Compiler::new(closed().with_closed_objects(false)).compile_json_schema(schema).unwrap();
        assert_eq!(default.executable().backend_name(), off.executable().backend_name(), "{schema}");
        for text in [r#"{"a":"x","z":1}"#, r#"{"b":{"c":1,"z":1}}"#, r#"{"d":{"x":1,"y":2}}"#, r#"{"a":"x"}"#, "[]"] {
            assert_eq!(
                default.executable().accepts(text.as_bytes()),
                off.executable().accepts(text.as_bytes()),
                "{schema}: {text}"
            );
        }
    }
    assert!(!CompilerOptions::default().closed_objects);
}

#[test]
fn closed_objects_narrow_masks() {
    let mut tokens: Vec<(TokenId, Vec<u8>)> = (0..=255u8).map(|b| (u32::from(b), vec![b])).collect();
    for (i, t) in ["\"a\"", "\"b\"", "\"z\"", ",\"", "\"x-1\""].iter().enumerate() {
        tokens.push((256 + i as u32, t.as_bytes().to_vec()));
    }
    let eos = 256 + 5;
    let vocabulary = CompiledVocabulary::try_from(build_vocabulary(eos, tokens).unwrap()).unwrap();
    let [a, b, z, _, x1] = [256, 257, 258, 259, 260];
    let schema = r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "null"}}, "patternProperties": {"^x-": {"type": "null"}}}"#;
    for (options, z_allowed) in [(closed(), false), (CompilerOptions::default(), true)] {
        let bound = Compiler::new(options).compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
        let mut session = bound.start_session().unwrap();
        session.advance(u32::from(b'{')).unwrap();
        assert!(session.is_allowed(a) && session.is_allowed(b) && session.is_allowed(x1));
        assert_eq!(session.is_allowed(z), z_allowed);
        let mut mask = vec![0u32; bound.mask_word_count()];
        session.write_mask(&mut mask).unwrap();
        assert_eq!(mask[z as usize / 32] >> (z % 32) & 1 == 1, z_allowed);
        for byte in br#""a":1,"# {
            session.advance(u32::from(*byte)).unwrap();
        }
        assert!(session.is_allowed(b) && !session.is_allowed(a));
        assert_eq!(session.is_allowed(z), z_allowed);
    }
}

#[test]
fn closed_objects_name_the_policy_in_their_diagnostics() {
    // Seven alternatives of differing evaluations are more than `unevaluatedProperties` combines.
    let branches: Vec<Value> = (0..7).map(|i| json!({ "properties": { format!("k{i}"): {} } })).collect();
    let schema = json!({ "properties": { "v": { "anyOf": branches } } });
    assert!(Compiler::new(CompilerOptions::default()).compile_json_value(&schema).is_ok());
    let error = Compiler::new(closed()).compile_json_value(&schema).unwrap_err();
    let diagnostic = error.diagnostic().expect("a schema error");
    assert_eq!(diagnostic.code, DiagnosticCode::UnsupportedKeyword);
    assert_eq!((diagnostic.keyword.as_deref(), diagnostic.pointer.as_str()), (Some("closed_objects"), "/properties/v"));
}

// What `closed_objects` means, independently: the schema rewritten with
// `"unevaluatedProperties": false` on every value-position schema that says something, judged by
// an independent validator.

const KEYS: [&str; 3] = ["a", "b", "c"];

/// `schema` as the policy reads it, where `value` says it stands at a value position.
fn rewrite(schema: &Value, value: bool) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    let mut out = Map::new();
    for (keyword, sub) in map {
        let at_value = matches!(
            keyword.as_str(),
            "properties"
                | "patternProperties"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "items"
                | "prefixItems"
                | "contains"
                | "unevaluatedItems"
        );
        let rewritten = match (keyword.as_str(), sub) {
            ("enum" | "const" | "required", _) => sub.clone(),
            ("properties" | "patternProperties" | "dependentSchemas" | "$defs", Value::Object(entries)) => {
                Value::Object(entries.iter().map(|(k, s)| (k.clone(), rewrite(s, at_value))).collect())
            }
            (_, Value::Array(list)) => Value::Array(list.iter().map(|s| rewrite(s, at_value)).collect()),
            _ => rewrite(sub, at_value),
        };
        out.insert(keyword.clone(), rewritten);
    }
    let says_something = map.keys().any(|k| !matches!(k.as_str(), "$defs" | "title"));
    let listed = map.contains_key("enum") || map.contains_key("const");
    if value && says_something && !listed && !map.contains_key("unevaluatedProperties") {
        out.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(KEYS.to_vec())
}

fn leaf(with_reference: bool) -> BoxedStrategy<Value> {
    let mut leaves = vec![
        Just(json!({})).boxed(),
        Just(json!(true)).boxed(),
        Just(json!({ "title": "annotation" })).boxed(),
        prop::sample::select(vec!["null", "string", "object", "array"]).prop_map(|t| json!({ "type": t })).boxed(),
        prop::sample::select(vec![json!(null), json!("a"), json!(true)]).prop_map(|v| json!({ "const": v })).boxed(),
        prop::collection::btree_set(key(), 1..3).prop_map(|keys| json!({ "required": keys })).boxed(),
    ];
    if with_reference {
        leaves.push(Just(json!({ "$ref": "#/$defs/D" })).boxed());
    }
    prop::strategy::Union::new(leaves).boxed()
}

fn object_schema(with_reference: bool) -> impl Strategy<Value = Value> {
    leaf(with_reference).prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            3 => prop::collection::btree_map(key(), inner.clone(), 1..3).prop_map(|p| json!({ "properties": p })),
            1 => (prop::collection::btree_map(key(), inner.clone(), 1..3), inner.clone())
                .prop_map(|(p, a)| json!({ "properties": p, "additionalProperties": a })),
            1 => inner.clone().prop_map(|s| json!({ "patternProperties": { "^b": s } })),
            1 => inner.clone().prop_map(|s| json!({ "items": s })),
            3 => (prop::sample::select(vec!["allOf", "anyOf", "oneOf"]), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(k, branches)| Value::Object(Map::from_iter([(k.to_owned(), json!(branches))]))),
            1 => inner.clone().prop_map(|s| json!({ "not": s })),
            1 => (inner.clone(), inner.clone()).prop_map(|(i, t)| json!({ "if": i, "then": t })),
            1 => (key(), inner.clone()).prop_map(|(k, s)| json!({ "dependentSchemas": { k: s } })),
            1 => inner.clone().prop_map(|s| json!({ "unevaluatedProperties": s })),
            1 => (inner.clone(), inner).prop_map(|(a, b)| {
                let mut merged = a.as_object().cloned().unwrap_or_default();
                merged.extend(b.as_object().cloned().unwrap_or_default());
                Value::Object(merged)
            }),
        ]
    })
}

/// Mostly objects, whose keys the schemas name.
fn instance() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![Just(json!(null)), Just(json!("a")), Just(json!(true))];
    scalar.prop_recursive(3, 10, 3, |inner| {
        prop_oneof![
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            3 => prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn byte_vocabulary() -> &'static CompiledVocabulary {
    static VOCABULARY: OnceLock<CompiledVocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let tokens = (0..=255u8).map(|b| (u32::from(b), vec![b]));
        CompiledVocabulary::try_from(Arc::new(build_vocabulary(256, tokens).unwrap())).unwrap()
    })
}

/// Whether the session's masks let `text` through byte by byte, and then EOS.
fn admitted(bound: &maskforge_core::BoundSchema, text: &[u8]) -> bool {
    let mut session = bound.start_session().unwrap();
    for &byte in text {
        if !session.is_allowed(u32::from(byte)) {
            return false;
        }
        session.advance(u32::from(byte)).unwrap();
    }
    session.is_allowed(256)
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(
            std::env::var("MASKFORGE_POLICY_SEED").map_or(20260214, |v| v.parse().expect("a number")),
        ),
        cases: std::env::var("MASKFORGE_POLICY_CASES").map_or(1000, |v| v.parse().expect("a number")),
        ..ProptestConfig::default()
    })]

    #[test]
    fn closed_objects_admit_what_unevaluated_properties_false_would(
        body in object_schema(true),
        definition in object_schema(false),
        values in prop::collection::vec(instance(), 1..8),
    ) {
        let mut schema = body.as_object().cloned().unwrap_or_else(|| Map::from_iter([("allOf".to_owned(), json!([body]))]));
        schema.insert("$defs".into(), json!({ "D": definition }));
        let schema = Value::Object(schema);
        let rewritten = rewrite(&schema, true);
        let oracle = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&rewritten)
            .expect("the oracle reads every generated schema");
        let options = closed();
        let document = SchemaDocument::from_value(schema.clone(), &options).unwrap();
        let regular = compile_regular(&document, &options);
        let program = match Compiler::new(options).compile_json_value(&schema) {
            Ok(program) => program,
            Err(Error::Schema(d)) if d.code == DiagnosticCode::UnsatisfiableSchema => {
                eprintln!("STAT unsat");
                for value in &values {
                    prop_assert!(!oracle.is_valid(value), "{} said to admit nothing, but {} is valid", schema, value);
                }
                return Ok(());
            }
            Err(Error::Schema(d)) if matches!(d.code, DiagnosticCode::UnsupportedKeyword | DiagnosticCode::ResourceLimit) => { eprintln!("STAT refused {}", d); return Ok(()) },
            Err(other) => return Err(TestCaseError::fail(format!("{schema} refused: {other:?}"))),
        };
        if regular.is_ok() {
            prop_assert_eq!(program.executable().backend_name(), "regular", "{}", schema);
        }
        let bound = program.bind(byte_vocabulary()).unwrap();
        eprintln!("STAT compiled {} {}", program.executable().backend_name(), values.iter().filter(|v| oracle.is_valid(v)).count());
        for value in &values {
            let text = serde_json::to_string(value).unwrap();
            let ours = program.executable().accepts(text.as_bytes());
            prop_assert_eq!(ours, admitted(&bound, text.as_bytes()), "masks and executable of {} on {}", schema, text);
            prop_assert_eq!(ours, oracle.is_valid(value), "{} (read as {}) on {}", schema, rewritten, text);
        }
    }
}
