//! Generation policies narrow the language on purpose: `max_json_whitespace` bounds runs of
//! insignificant whitespace, `property_order = declared` fixes the order of declared properties.
//! Both arms must agree, and each policy is part of the cache identity.

use maskforge_core::{Compiler, CompilerOptions, PropertyOrder};

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
