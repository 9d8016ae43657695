//! The structured arm's languages, checked on hand-written instances, and its masks against the
//! reference route.

use std::sync::Arc;

use maskforge_core::low_level::reference_mask;
use maskforge_core::mask::{allowed_ids, get_bit};
use maskforge_core::{build_vocabulary, CompiledVocabulary, Compiler, DiagnosticCode, Error};

fn check(schema: &str, accepted: &[&str], refused: &[&str]) {
    let program = Compiler::without_cache().compile_json_schema(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let executable = program.executable();
    assert_eq!(executable.backend_name(), "structured", "{schema}");
    for text in accepted {
        assert!(executable.accepts(text.as_bytes()), "{schema} should accept {text}");
    }
    for text in refused {
        assert!(!executable.accepts(text.as_bytes()), "{schema} should refuse {text}");
    }
}

#[test]
fn any_value_nests_without_bound_and_never_repeats_keys() {
    for schema in ["true", "{}"] {
        check(
            schema,
            &[r#"{"a":[1,2,{"b":null}],"c":"\u0041"}"#, "[]", r#" "x" "#, "1.5e3", "[[[[[[]]]]]]", "{ }", "-0"],
            &[r#"{"a":1,"a":2}"#, r#"{"a":1,"\u0061":2}"#, "[1,]", "{,}", "01", "[1 2]", r#"{"a"}"#, ""],
        );
    }
}

#[test]
fn open_objects_with_required_and_additional_properties() {
    check(
        r#"{"type": "object", "required": ["ok"]}"#,
        &[r#"{"ok":1}"#, r#"{"x":[],"ok":true}"#, r#"{ "ok" : { } }"#],
        &["{}", r#"{"x":1}"#, "[]", r#"{"ok":1,"ok":1}"#],
    );
    check(
        r#"{"properties": {"a": {"type": "boolean"}}, "additionalProperties": {"type": "string"}, "type": "object"}"#,
        &[r#"{"a":true,"b":"x"}"#, r#"{"b":"x","c":"y"}"#, "{}"],
        &[r#"{"a":"x"}"#, r#"{"b":1}"#],
    );
    check(
        r#"{"type": "object", "maxProperties": 1, "required": ["a"]}"#,
        &[r#"{"a":1}"#],
        &[r#"{"b":1}"#, r#"{"a":1,"b":2}"#, r#"{"b":1,"a":2}"#],
    );
}

#[test]
fn numbers_are_decided_by_value() {
    check(
        r#"{"type": "integer", "minimum": 0, "maximum": 250}"#,
        &["0", "250", "2.5e2", "1.0", "25E1", "0.0"],
        &["251", "-1", "1.5", "2.51e2", "1e3"],
    );
    check(r#"{"type": "number", "multipleOf": 0.01}"#, &["1.23", "123e-2", "-0.5"], &["1.234", "1e-3"]);
    check(
        r#"{"enum": [1, "a", {"x": 1.0}]}"#,
        &["1", "1.0", "10e-1", r#""a""#, r#"{"x":1}"#, r#"{"x":0.1e1}"#],
        &["2", r#"{"x":1,"y":1}"#],
    );
}

#[test]
fn arrays_count_items() {
    check(
        r#"{"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3}"#,
        &["[1,2]", "[1, 2, 3]", "[1.0,2e0]"],
        &["[1]", "[1,2,3,4]", "[1,2.5]", "[]"],
    );
    check(
        r#"{"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false, "type": "array"}"#,
        &["[]", r#"["a"]"#, r#"["a",1]"#],
        &[r#"["a",1,2]"#, "[1]"],
    );
}

#[test]
fn recursion_and_combinators() {
    let tree = r##"{"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["value"],
        "additionalProperties": false}}, "$ref": "#/$defs/node"}"##;
    check(
        tree,
        &[r#"{"value":1,"children":[{"value":2},{"value":3,"children":[]}]}"#],
        &[r#"{"value":1,"children":[{}]}"#],
    );
    let either = r##"{"anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}], "type": "object"}"##;
    check(
        either,
        &[r#"{"a":"x"}"#, r#"{"b":1}"#, r#"{"a":"x","b":"y"}"#, r#"{"a":1,"b":2}"#],
        &[r#"{"a":1}"#, r#"{"b":"x"}"#, "{}"],
    );
    let both = r#"{"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"a": {"minimum": 5}}}], "type": "object"}"#;
    check(both, &[r#"{"a":5}"#, "{}", r#"{"b":[]}"#], &[r#"{"a":4}"#, r#"{"a":5.5}"#]);
}

#[test]
fn unsatisfiable_and_ill_founded_schemas_are_diagnosed() {
    let code = |schema: &str| match Compiler::without_cache().compile_json_schema(schema) {
        Err(Error::Schema(d)) => d.code,
        other => panic!("{schema}: {other:?}"),
    };
    assert_eq!(code(r#"{"type": "integer", "minimum": 2, "maximum": 1}"#), DiagnosticCode::UnsatisfiableSchema);
    assert_eq!(
        code(r#"{"type": "object", "required": ["a"], "properties": {"a": false}}"#),
        DiagnosticCode::UnsatisfiableSchema
    );
    assert_eq!(
        code(r##"{"$defs": {"x": {"allOf": [{"$ref": "#/$defs/x"}]}}, "$ref": "#/$defs/x"}"##),
        DiagnosticCode::UnsatisfiableSchema
    );
    // A recursive schema with no finite instance.
    assert_eq!(
        code(
            r##"{"$defs": {"x": {"type": "object", "properties": {"n": {"$ref": "#/$defs/x"}}, "required": ["n"]}}, "$ref": "#/$defs/x"}"##
        ),
        DiagnosticCode::UnsatisfiableSchema
    );
}

/// Every byte as a token, plus multi-byte tokens crossing structure.
fn vocabulary() -> CompiledVocabulary {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in [
        "{\"",
        "\":",
        "\",",
        "\"}",
        "ok",
        "value",
        "children",
        "[{",
        "}]",
        "},",
        "12",
        "1.",
        "e-",
        "00",
        "true",
        "null",
        " {",
        "x\",",
        "\\\"\",",
        "ok\":",
        "value\":",
        "\":\"",
        "\":1",
        "\": {\"",
        "x\":\"",
        "ok\": 1,",
        "value\":\"",
        "x\":1",
        "\\\"\"",
        "\\\"\":",
        "ok\\\"\"",
        "\\n",
        "\\/b",
        "\\u00e9",
        "\\u00e9\\n",
        "\\u003",
        "\\u00e",
        "\\ud83d",
        "\\ud83d\\ude00\":",
        "x\"}",
        "y\",",
        "y\"}",
        // Tokens that open a value string and close it, then go on after it.
        "\"x\",",
        "\"x\"}",
        "\"xx\"}",
        "\"y\"}",
        " \"y\",",
        "\"ok",
        // A value, then whitespace its container takes.
        "12 ",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    let eos = tokens.len() as u32;
    let vocabulary = build_vocabulary(eos, tokens.into_iter().enumerate().map(|(i, t)| (i as u32, t))).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

#[test]
fn structured_masks_equal_reference_masks() {
    let vocabulary = vocabulary();
    let cases = [
        (r#"{"type": "object", "required": ["ok"]}"#, r#"{"x": [1, {"y": null}], "ok": 12.5e-1}"#),
        (r#"{"type": "integer", "maximum": 120}"#, "1.2e2"),
        (
            // A tagged union whose branches overlap on every kind but objects.
            r#"{"oneOf": [{"properties": {"ok": {"const": "a"}, "value": {"type": "integer"}}, "required": ["ok"], "additionalProperties": false}, {"properties": {"ok": {"const": "b"}, "children": {"type": "array"}}, "required": ["ok"], "additionalProperties": false}]}"#,
            r#"{"ch\u0069ldren": [1, []], "\u006fk": "b"}"#,
        ),
        (
            r##"{"$defs": {"n": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["value"]}}, "$ref": "#/$defs/n"}"##,
            r#"{"value": 1, "children": [{"value": 12}, {"children": [], "value": 100}]}"#,
        ),
        (
            r#"{"type": "object", "dependentRequired": {"ok": ["value"]}, "dependentSchemas": {"value": {"maxProperties": 2}}}"#,
            r#"{"value": [1], "ok": null}"#,
        ),
        (
            r#"{"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 5}, "patternProperties": {"^v": {"type": "integer"}}}"#,
            r#"{"value": 1, "ok": [], "\u006bey": null}"#,
        ),
        (
            r#"{"type": "array", "contains": {"type": "string", "minLength": 2}, "minContains": 2, "maxItems": 4}"#,
            r#"[1, "ok", null, "value"]"#,
        ),
        (
            // Enough automaton states that string rows switch from the byte trie to a class trie.
            r#"{"type": "object", "properties": {"ok": {"type": "string", "pattern": "^(value|children)[a-z]{0,16}$"}}}"#,
            r#"{"ok": "childrenabcdefghijklmnop"}"#,
        ),
        (
            r#"{"type": "object", "properties": {"ok": {"type": "string", "maxLength": 260}}}"#,
            &*Box::leak(format!(r#"{{"ok": "{}\u00e9{}"}}"#, "ab".repeat(120), "\\n".repeat(19)).into_boxed_str()),
        ),
        (
            r#"{"type": "object", "patternProperties": {"^.+$": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"ok": "x", "value": "", "\u0000": "z"}"#,
        ),
        (
            // At the nesting limit, tokens opening two containers (`[{`) go one level too deep;
            // so does a token closing a key there and opening the value's object, not above.
            "{}",
            &*Box::leak(
                format!(r#"[{{"ok": 1}}, {}{{"ok": null}}{}"#, "[".repeat(510), "]".repeat(511)).into_boxed_str(),
            ),
        ),
        (
            // One branch reads any string, the other only "x": which branches a closing token
            // leaves alive depends on the string's content.
            r#"{"anyOf": [{"properties": {"ok": {"type": "string"}}, "additionalProperties": false}, {"properties": {"ok": {"enum": ["x"]}, "value": {"type": "null"}}, "additionalProperties": false}]}"#,
            r#"{"ok": "x", "value": null}"#,
        ),
        (
            // Which branches a close leaves alive depends on the content, and each outcome
            // takes other bytes after the quote: "x" needs "value" next, "xx" ends the object,
            // any other string may do either (the branches' tails differ per outcome).
            r#"{"anyOf": [{"properties": {"ok": {"const": "x"}}, "required": ["ok", "value"]}, {"properties": {"ok": {"const": "xx"}}, "maxProperties": 1}, {"properties": {"ok": {"type": "string", "not": {"enum": ["x", "xx"]}}}}]}"#,
            r#"{"ok": "xy", "value": {"ok": "x", "value": 1}}"#,
        ),
        (
            // Below a member, one branch reading any string: a mask's walk opens the string
            // and closes it per token, and what follows the quote depends on the outcome ("x"
            // may go on to "value", any other string ends the object).
            r#"{"properties": {"x": {"anyOf": [{"properties": {"ok": {"const": "x"}}, "required": ["ok", "value"]}, {"properties": {"ok": {"type": "string"}}, "maxProperties": 1}]}}}"#,
            r#"{"x": {"ok": "x", "value": 1}, "y": {"x": {"ok":"xx"}}}"#,
        ),
        (
            // The same, one object deeper: the branches read the string in objects of their
            // own, and a close that leaves one of those objects no track ends its branch.
            r#"{"anyOf": [{"properties": {"ok": {"properties": {"x": {"enum": ["x", "xx"]}}, "required": ["x", "value"]}}, "required": ["ok"]}, {"properties": {"ok": {"properties": {"x": {"type": "string", "not": {"const": "x"}}}, "maxProperties": 1}, "value": {"type": "array", "items": {"type": "string", "maxLength": 2}}}}]}"#,
            r#"{"ok": {"x": "x", "value": 1}, "value": ["ok", "x"]}"#,
        ),
        (
            // Some member other than "ok" must not be "x": a member's string is also read
            // against that witness, so its content decides more than its value's schema does.
            r#"{"type": "object", "not": {"properties": {"ok": {}}, "additionalProperties": {"enum": ["x"]}}}"#,
            r#"{"value": "x", "ok": "y", "children": "y"}"#,
        ),
        (
            // Finitely many keys, some seen: a key text whose every completion is seen is a
            // dead end ("ok" once "ok" and "okk" are taken), others stay open.
            r#"{"type": "object", "patternProperties": {"^(ok|okk|value|val)$": {"type": "integer"}}, "additionalProperties": false}"#,
            r#"{"ok": 1, "okk": 2, "val": 3, "value": 4}"#,
        ),
        (
            // The same key read by two branches' objects on different finite languages: a
            // token stays when either branch's object takes it.
            r#"{"anyOf": [{"properties": {"ok": {"patternProperties": {"^(ok|okk)$": {"type": "integer"}}, "additionalProperties": false}}}, {"properties": {"ok": {"patternProperties": {"^(okk|val|value)$": {"type": "null"}}, "additionalProperties": false}}}]}"#,
            r#"{"ok": {"okk": null, "val": null, "value": null}}"#,
        ),
        (
            // A named key outside the pattern language (`.` stops at line terminators).
            r#"{"type": "object", "properties": {"ok\nvalue": {"type": "null"}}, "patternProperties": {"^.+$": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"ok": "x", "ok\nvalue": null, "value": "\n"}"#,
        ),
        (
            r#"{"type": "object", "patternProperties": {"^(ok|value)$": {"type": "integer"}, "^x": {"type": "null"}}, "additionalProperties": false}"#,
            r#"{"value": 12, "xok": null, "ok": 1}"#,
        ),
        (
            // Named keys spelled with escapes, and with a character of two bytes.
            r#"{"properties": {"a/b": {"type": "null"}, "\u00e9\n": {"type": "integer"}, "\u00e9y": {}, "\ud83d\ude00": {}}, "additionalProperties": false}"#,
            r#"{"a\/b": null, "\u00e9\n": 1, "\ud83d\ude00": 3, "éy": 2}"#,
        ),
        (
            // Keys read on the pattern's automaton in a closed object: each key's close decides.
            r##"{"type": "object", "properties": {"ok.x": {"type": "null"}}, "patternProperties": {"^[^.#]+$": {"type": "object", "required": ["value"], "properties": {"value": {"type": ["number", "string"]}}, "additionalProperties": false}}, "additionalProperties": false, "minProperties": 2}"##,
            r#"{"ok": {"value": "x"}, "ok.x": null, "value": {"value": 1}}"#,
        ),
        (
            // The second member must be the witness, a string of one character at most: at its
            // value's start the witness' schema decides, not the member's.
            r#"{"type": "object", "maxProperties": 2, "not": {"properties": {"ok": {}}, "additionalProperties": {"not": {"type": "string", "maxLength": 1}}}}"#,
            r#"{"ok": 1, "value": "x"}"#,
        ),
        (
            r#"{"type": "object", "not": {"required": ["ok"], "properties": {"value": {"type": "integer"}}}}"#,
            r#"{"value": 1.5, "ok": null}"#,
        ),
        (
            r#"{"if": {"required": ["ok"]}, "then": {"properties": {"value": {"enum": [12, true]}}}, "else": {"maxProperties": 1}}"#,
            r#"{"value": true, "ok": [null]}"#,
        ),
        (
            r#"{"type": "object", "properties": {"ok": {}}, "unevaluatedProperties": false, "anyOf": [{"properties": {"value": {"type": "integer"}}}, {"properties": {"children": {"type": "string"}}}]}"#,
            r#"{"value": 12, "ok": [], "children": "x"}"#,
        ),
        (
            r#"{"type": "object", "maxProperties": 2, "not": {"properties": {"ok": {}}, "additionalProperties": {"type": "integer"}}}"#,
            r#"{"ok": "x", "value": 1.5}"#,
        ),
        (
            r#"{"type": "array", "contains": {"type": "integer"}, "minContains": 1, "maxContains": 2, "maxItems": 4}"#,
            r#"[12, "ok", 1.5, null]"#,
        ),
        (
            r#"{"type": "array", "uniqueItems": true}"#,
            r#"["ok", 12, "value", 1.2e-1, {"ok": 1}, {"value": 1}, [12], true, null]"#,
        ),
        (
            r#"{"type": "array", "items": {"anyOf": [{"enum": ["ok", "value"]}, {"type": "integer"}]}, "uniqueItems": true}"#,
            r#"["ok", 12, "value", 1]"#,
        ),
        (
            // Numbers read by several object shapes at once, and inside arrays (masks inside a
            // number step the numbers alone until they end).
            r#"{"type": "object", "properties": {"n": {"type": "number"}}, "anyOf": [{"properties": {"n": {"type": "integer", "maximum": 30}}}, {"properties": {"n": {"type": "number", "minimum": 25, "multipleOf": 0.5}}}], "additionalProperties": {"type": "array", "items": {"type": "number", "exclusiveMaximum": 100}}}"#,
            r#"{"m": [99.5, 1e1, -3, 0.25E+1], "n": 27.5}"#,
        ),
        (
            r#"{"type": "array", "contains": {"type": "integer", "minimum": 10}, "items": {"type": "number"}, "maxItems": 4}"#,
            r#"[1.5, 12, 3e0, 100]"#,
        ),
        (
            // Two object shapes read the undeclared members on the same node: their values are
            // shared between the tracks and fed once a byte.
            r#"{"type": "object", "properties": {"k": {}, "n": {}}, "anyOf": [{"properties": {"k": {"const": 1}}, "required": ["k"]}, {"properties": {"k": {"const": 2}, "n": {"type": "integer"}}, "required": ["k"]}], "additionalProperties": {"type": "array", "items": {"anyOf": [{}, {"type": "object", "required": ["a"]}]}}}"#,
            r#"{"x": [1, {"a": [2, "ok"]}, []], "n": 12, "y": [{}], "k": 2}"#,
        ),
        (
            // Inside keys, a closed shape beside one that takes any key: the open one decides
            // the tokens that stay in the key.
            r#"{"anyOf": [{"type": "object", "properties": {"ok": {"type": "integer"}, "okay": {"type": "null"}}, "additionalProperties": false}, {"type": "object", "required": ["value"], "properties": {"ok": {"type": "string"}}}]}"#,
            r#"{"okay": null, "ok": "x", "value": 1, "o\u006b2": []}"#,
        ),
        (
            r#"{"anyOf": [{"type": "object", "properties": {"ok": {"type": "integer"}, "okay": {"type": "null"}}, "additionalProperties": false}, {"type": "object", "required": ["value"], "properties": {"ok": {"type": "string"}}}]}"#,
            r#"{"okay": null, "ok": 12}"#,
        ),
        (
            // The same, one level down: each shape reads the member in an object of its own.
            r#"{"anyOf": [{"type": "object", "properties": {"b": {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": false}, "s": {"type": "string", "pattern": "^a"}}}, {"type": "object", "properties": {"b": {"type": "object"}, "s": {"type": "string"}}, "required": ["z"]}]}"#,
            r#"{"s": "abc", "b": {"x": 1, "y": [], "xx": null}, "z": 1}"#,
        ),
        (
            // Unique closed objects: inside a free string the item stays open-ended whatever the
            // string reads next (string rows); inside a bounded one it may not.
            r#"{"type": "array", "uniqueItems": true, "items": {"type": "object", "additionalProperties": false, "maxProperties": 1, "properties": {"t": {"enum": ["a", "b"]}, "v": {"type": "string"}, "w": {"type": "string", "pattern": "^(ok|o+)$"}}}}"#,
            r#"[{"v": "ok"}, {"v": "okk"}, {"w": "ok"}, {"w": "o"}, {"w": "ooo"}, {"t": "b"}]"#,
        ),
        (
            // Unique strings whose automaton never runs out of completions: masks inside them
            // take the string rows.
            r#"{"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": true}"#,
            r#"["ok", "value", "o", "okok"]"#,
        ),
        (
            // After `"o` a string may still end as `"ok"` (one completion, seen): no string
            // rows there, while after `"oo` every completion is unbounded.
            r#"{"type": "array", "items": {"type": "string", "pattern": "^(ok|o+)$"}, "uniqueItems": true}"#,
            r#"["ok", "o", "ooo", "oo"]"#,
        ),
        (
            // Closed object items: `true` is refused where `{"value": true}` could only repeat.
            r#"{"type": "array", "uniqueItems": true, "items": {"type": "object", "required": ["ok"], "additionalProperties": false, "properties": {"ok": {"enum": ["value", "children"]}, "value": {"type": ["boolean", "string"]}}}}"#,
            r#"[{"ok": "value", "value": true}, {"value": true, "ok": "children"}, {"value": "ok", "ok": "value"}, {"ok": "value"}]"#,
        ),
        (
            r#"{"type": "array", "items": {"anyOf": [{"format": "regex"}, {"const": "ok("}]}}"#,
            r#"["(?:ok|value)+", "ok(", "[\\]ok]", "12"]"#,
        ),
        (
            // Keys that must be patterns: masks inside keys walk the vocabulary with the reader.
            r#"{"type": "object", "propertyNames": {"format": "regex"}, "properties": {"ok(": {}, "ok": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"ok": 12, "^(?:ok|value)+$": "12", "[\\]ok]": "value"}"#,
        ),
        (
            // Tracks inside different string automata at once: the union of their rows.
            r#"{"type": "array", "items": {"anyOf": [{"type": "object", "properties": {"ok": {"type": "string", "pattern": "^va"}}}, {"type": "object", "properties": {"ok": {"enum": ["value", "children"], "maxLength": 8}}, "required": ["ok"]}, {"type": "object", "properties": {"ok": {"type": "string", "maxLength": 300}}}]}}"#,
            r#"[{"ok": "value"}, {"ok": "children"}, {"ok": "vab\"ok"}, {"ok": "x"}]"#,
        ),
        (
            r#"{"type": "array", "contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}}"#,
            r#"["ok", 12, "value", 1]"#,
        ),
        (
            r#"{"type": "array", "oneOf": [{"items": {"type": "integer"}}, {"prefixItems": [{"type": "integer"}], "items": {"type": "null"}}]}"#,
            r#"[12, null, null]"#,
        ),
        (
            // Inside keys of open objects the closing tokens are decided by what the key closes
            // into: a named key, any other key, a key seen before.
            r#"{"type": "object", "properties": {"ok": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"value": "x", "ok": 1, "x": "ok", "okay": "", "ok\"": "\"", "\"": "ok\""}"#,
        ),
        (
            r#"{"type": "object", "patternProperties": {"^v": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"value": 1, "x": "value", "vx": 2}"#,
        ),
        (
            // Once room is left for the required key only, other keys close into nothing.
            r#"{"type": "object", "required": ["ok"], "maxProperties": 2, "additionalProperties": {"type": ["integer", "object"]}}"#,
            r#"{"value": 1, "ok": {"x": 1, "ok": 1}}"#,
        ),
        (
            // Keys of a member that each shape reads in an object of its own, both open.
            r#"{"anyOf": [{"properties": {"b": {"type": "object", "properties": {"x": {"type": "integer"}}}}}, {"properties": {"b": {"type": "object", "additionalProperties": {"type": "string"}}}, "required": ["z"]}]}"#,
            r#"{"b": {"ok": "v", "value": "s", "x": "ok"}, "z": 1}"#,
        ),
        (
            // Two values at the same automaton states, before and after the last member allowed:
            // masks inside the second must not be those kept from the first.
            r#"{"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2}"#,
            r#"{"ok": "okok", "x": "okok"}"#,
        ),
    ];
    for (schema, text) in cases {
        walk_with_reference(schema, &vocabulary, text);
    }
}

/// Walks `text` with the longest allowed token that spells the next bytes, comparing each mask
/// with the reference mask; the text must be admitted to the end, EOS included.
fn walk_with_reference(schema: &str, vocabulary: &CompiledVocabulary, text: &str) {
    let bound = Compiler::without_cache().compile_json_schema(schema).unwrap().bind(vocabulary).unwrap();
    let v = bound.vocabulary().clone();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    let text = text.as_bytes();
    let mut at = 0;
    loop {
        session.write_mask(&mut mask).unwrap();
        let reference = reference_mask(bound.executable(), &v, &text[..at]).unwrap();
        assert_eq!(mask, reference, "{schema} after {:?}", String::from_utf8_lossy(&text[..at]));
        if at == text.len() {
            break;
        }
        let (id, len) = allowed_ids(&mask)
            .into_iter()
            .filter_map(|id| v.token_bytes(id).filter(|b| text[at..].starts_with(b)).map(|b| (id, b.len())))
            .max_by_key(|&(_, len)| len)
            .unwrap_or_else(|| panic!("{schema}: stuck after {:?}", String::from_utf8_lossy(&text[..at])));
        session.advance(id).unwrap();
        at += len;
    }
    assert!(session.is_accepting() && get_bit(&mask, v.eos_token_ids()[0]), "{schema}: {text:?} not accepted");
}

/// Whether the masks let `text` through byte by byte (single-byte tokens), then EOS.
fn admitted_by_masks(schema: &str, vocabulary: &CompiledVocabulary, text: &str) -> bool {
    let bound = Compiler::without_cache().compile_json_schema(schema).unwrap().bind(vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    for &byte in text.as_bytes() {
        session.write_mask(&mut mask).unwrap();
        if !get_bit(&mask, u32::from(byte)) {
            return false;
        }
        session.advance(u32::from(byte)).unwrap();
    }
    session.write_mask(&mut mask).unwrap();
    get_bit(&mask, bound.vocabulary().eos_token_ids()[0])
}

#[test]
fn one_of_is_exact_with_disjoint_and_overlapping_branches() {
    check(
        r#"{"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "object", "required": ["a"]}]}"#,
        &["1", r#""x""#, r#"{"a":[]}"#],
        &["1.5", "null", "{}"],
    );
    // Short strings satisfy both branches, so exactly one holds for long strings and non-strings.
    check(
        r#"{"oneOf": [{"type": "string"}, {"maxLength": 2}], "$defs": {"x": {"type": "array"}}}"#,
        &[r#""abc""#, "1", "null", "[[]]"],
        &[r#""ab""#, r#""""#],
    );
    check(
        r#"{"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"#,
        &[r#"{"a": 1}"#, r#"{"b": 1, "c": 2}"#],
        &[r#"{"a": 1, "b": 2}"#, "{}"],
    );
    check(
        r#"{"oneOf": [{"type": "integer"}, {"minimum": 2}], "$defs": {"x": {"type": "array"}}}"#,
        &["1", "-3", "2.5", "null"],
        &["2", "2.0", "1.5"],
    );
    // Draft 4 integers are decided by their text: `2.0` is none, so only `minimum` holds.
    check(
        r#"{"$schema": "http://json-schema.org/draft-04/schema#", "oneOf": [{"type": "integer"}, {"minimum": 2}], "$defs": {"x": {"type": "array"}}}"#,
        &["1", "-3", "2.0", "2e0", "2.5"],
        &["2", "3", "1.5", "1.0"],
    );
}

#[test]
fn one_of_branches_are_compared_on_what_their_siblings_admit() {
    // The branches share objects without `kind` (and would need each other's complement, which
    // `patternProperties` does not have), but the root requires `kind`, which they fix apart.
    check(
        r#"{"type": "object", "required": ["kind"], "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "patternProperties": {"^x-": {"type": "string"}}},
            {"properties": {"kind": {"const": "b"}}, "patternProperties": {"^x-": {"type": "integer"}}}]}"#,
        &[r#"{"kind": "a", "x-1": "s"}"#, r#"{"x-2": 2, "kind": "b"}"#, r#"{"kind": "a", "y": null}"#],
        &[r#"{"kind": "a", "x-1": 2}"#, r#"{"kind": "b", "x-1": "s"}"#, r#"{"kind": "c"}"#, "{}", r#"{"x-1": "s"}"#],
    );
    // Siblings that leave an overlap: objects with both `a` and `b` match both branches.
    check(
        r#"{"type": "object", "required": ["a"], "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"#,
        &[r#"{"a": 1}"#, r#"{"a": 1, "c": 2}"#],
        &[r#"{"a": 1, "b": 2}"#, r#"{"b": 1}"#, "{}"],
    );
}

#[test]
fn tagged_unions_without_a_type_compare_their_branches_kind_by_kind() {
    // Branches without `"type": "object"` share every non-object (so oneOf refuses those), but
    // no object: the objects need no complements, however many branches there are.
    let branch = |tag: usize| {
        format!(
            r#"{{"properties": {{"tag": {{"const": "t{tag}"}}, "n{tag}": {{"type": "integer"}}}}, "required": ["tag"], "additionalProperties": false}}"#
        )
    };
    let branches: Vec<String> = (0..24).map(branch).collect();
    let schema = format!(r#"{{"oneOf": [{}]}}"#, branches.join(", "));
    check(
        &schema,
        &[r#"{"tag": "t0"}"#, r#"{"tag": "t7", "n7": 3}"#, r#"{"n23": -1, "tag": "t23"}"#],
        &[r#"{"tag": "t7", "n6": 3}"#, r#"{"tag": "t24"}"#, "{}", r#""t0""#, "1", "null", "[]"],
    );
    // Overlapping objects still get their complements, within the objects only.
    check(
        r#"{"oneOf": [{"properties": {"a": {"type": "integer"}}}, {"required": ["b"]}, {"type": "number"}]}"#,
        &[r#"{"a": "x", "b": 2}"#, r#"{"a": 1}"#, "{}"],
        &[r#"{"a": 1, "b": 2}"#, r#""s""#, "1", "null"],
    );
}

#[test]
fn not_admits_exactly_the_complement() {
    check(
        r#"{"not": {"type": "string"}, "$defs": {"x": {"type": "array"}}}"#,
        &["1", "null", "{}", "[\"a\"]"],
        &[r#""x""#],
    );
    check(
        r#"{"type": "object", "not": {"required": ["a"]}}"#,
        &["{}", r#"{"b": 1, "ab": 2}"#],
        &[r#"{"a": 1}"#, r#"{"b": 1, "a": null}"#, "1"],
    );
    check(
        r#"{"not": {"enum": [1, "a", null]}, "$defs": {"x": {"type": "array"}}}"#,
        &["2", "1.5", "0.999", r#""b""#, "true", "[1]"],
        &["1", "1.0", "10e-1", r#""a""#, r#""\u0061""#, "null"],
    );
    check(r#"{"type": "array", "not": {"items": {"type": "integer"}}}"#, &[r#"[1, "x"]"#, "[1.5]"], &["[]", "[1, 2]"]);
    check(
        r#"{"type": "array", "not": {"prefixItems": [{"type": "string"}], "items": {"type": "null"}, "maxItems": 2}}"#,
        &["[1]", r#"["a", 1]"#, r#"["a", null, null]"#],
        &["[]", r#"["a"]"#, r#"["a", null]"#],
    );
    check(
        r#"{"type": "number", "not": {"minimum": 2, "exclusiveMaximum": 5}}"#,
        &["1", "1.99", "5", "5.5"],
        &["2", "3.3", "4.999"],
    );
    // Lengths outside a range above 256: the shorter strings in an automaton, the longer counted.
    let long = format!("\"{}\"", "x".repeat(301));
    let within = format!("\"{}\"", "x".repeat(300));
    check(
        r#"{"type": "string", "not": {"minLength": 3, "maxLength": 300}}"#,
        &["\"\"", "\"ab\"", &long],
        &["\"abc\"", &within],
    );
    // Recursion through `not`: anything but a tree of empty arrays.
    check(
        r##"{"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "not": {"$ref": "#/$defs/t"}}"##,
        &["1", "[1]", "[[], [1]]", "{}"],
        &["[]", "[[]]", "[[], [[]]]"],
    );
    check(
        r##"{"type": "array", "items": {"not": {"not": {"type": ["null", "array"]}}, "items": {"$ref": "#"}}}"##,
        &["[null, [[]]]"],
        &["[1]", "[[1]]"],
    );
    assert!(live(r#"{"type": "object", "not": {"required": ["a"]}}"#, r#"{"a"#));
    assert!(!live(r#"{"type": "object", "not": {"required": ["a"]}}"#, r#"{"a""#));
    assert!(live(r#"{"not": {"enum": ["ab"]}, "$defs": {"x": {"type": "array"}}}"#, r#""ab"#));
    assert!(!live(r#"{"not": {"enum": ["ab"]}, "$defs": {"x": {"type": "array"}}}"#, r#""ab""#));
    check(
        r#"{"type": "array", "items": {"type": "integer", "not": {"multipleOf": 3}}}"#,
        &["[1, 2, 4, -5]", "[]"],
        &["[3]", "[0]", "[1, 6.0]", "[1.5]"],
    );
    // A number that can only end as a multiple of 3 is a dead end: `9` cannot grow past 9.
    assert!(live(r#"{"type": "integer", "minimum": 8, "not": {"multipleOf": 3}}"#, "9"));
    assert!(!live(r#"{"type": "integer", "maximum": 10, "not": {"multipleOf": 3}}"#, "9"));
    match Compiler::without_cache()
        .compile_json_schema(r#"{"type": "object", "not": {"patternProperties": {"^a": {"type": "integer"}}}}"#)
    {
        Err(Error::Schema(d)) => {
            assert_eq!(d.code, DiagnosticCode::UnsupportedKeyword);
            assert_eq!((d.pointer.as_str(), d.keyword.as_deref()), ("/not", Some("not")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unevaluated_properties_see_every_branch_that_holds() {
    let schema = r#"{"type": "object", "properties": {"a": {}}, "unevaluatedProperties": false, "anyOf": [{"properties": {"b": {"type": "integer"}}}, {"properties": {"c": {"type": "string"}}}]}"#;
    check(
        schema,
        &[r#"{"a": 1}"#, r#"{"b": 1}"#, r#"{"c": "x"}"#, r#"{"b": 1, "c": "x", "a": null}"#],
        // `b` is a string: only the second branch holds, and it does not evaluate `b`.
        &[r#"{"d": 1}"#, r#"{"b": "x"}"#, r#"{"b": 1, "c": 1}"#],
    );
    assert!(live(schema, r#"{"b": "#));
    assert!(!live(schema, r#"{"b": ""#));
    assert!(!live(schema, r#"{"d""#));
    // `if` evaluates only when it holds; `not` never does.
    check(
        r#"{"type": "object", "if": {"properties": {"k": {"const": "a"}}, "required": ["k"]}, "then": {"properties": {"x": {}}}, "else": {"properties": {"y": {}}}, "unevaluatedProperties": false}"#,
        &[r#"{"k": "a", "x": 1}"#, r#"{"y": 1}"#],
        &[r#"{"k": "a", "y": 1}"#, r#"{"k": "b"}"#, r#"{"k": "b", "y": 1}"#],
    );
    check(
        r#"{"type": "object", "not": {"not": {"properties": {"a": {}}}}, "unevaluatedProperties": false}"#,
        &["{}"],
        &[r#"{"a": 1}"#],
    );
    // A nested `unevaluatedProperties` sees only its own subschemas; an outer one sees the nested.
    check(
        r#"{"type": "object", "allOf": [{"unevaluatedProperties": false}], "properties": {"a": {}}}"#,
        &["{}"],
        &[r#"{"a": 1}"#],
    );
    check(
        r#"{"type": "object", "allOf": [{"properties": {"a": {}}}, {"patternProperties": {"^x": {"type": "null"}}}], "unevaluatedProperties": {"type": "integer"}}"#,
        &[r#"{"a": "s", "xy": null, "b": 2}"#],
        &[r#"{"b": "s"}"#, r#"{"xy": 1}"#],
    );
}

#[test]
fn unevaluated_items_follow_prefixes_items_and_contains() {
    check(
        r#"{"type": "array", "prefixItems": [{"type": "string"}], "unevaluatedItems": false}"#,
        &["[]", r#"["a"]"#],
        &[r#"["a", 1]"#],
    );
    check(
        r#"{"type": "array", "contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}}"#,
        &[r#"["a", 1, "b"]"#],
        &[r#"["a", true]"#, "[1]"],
    );
    check(
        r#"{"type": "array", "anyOf": [{"prefixItems": [true, true]}, {"items": {"type": "null"}}], "unevaluatedItems": false}"#,
        &["[1, 2]", "[null, null, null]"],
        &["[1, 2, 3]", "[1, 2, null, 4]"],
    );
    // Draft 2019-09: `items` in array form evaluates its positions, and `contains` nothing.
    check(
        r#"{"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "array", "items": [true], "contains": {"type": "string"}, "unevaluatedItems": false}"#,
        &[r#"["a"]"#],
        &[r#"["a", "b"]"#],
    );
}

#[test]
fn complements_of_additional_properties_ask_for_a_member() {
    // Only `{}` has no key outside the (empty) properties.
    let nonempty = r#"{"type": "object", "not": {"additionalProperties": false}}"#;
    check(nonempty, &[r#"{"a": 1}"#, r#"{"a": 1, "b": {}}"#], &["{}"]);
    assert!(live(nonempty, "{"));
    assert!(!live(nonempty, "{}"));
    let schema = r#"{"type": "object", "not": {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}}"#;
    check(
        schema,
        &[r#"{"b": "x"}"#, r#"{"a": 1, "b": 1.5}"#, r#"{"b": 1, "c": null}"#],
        &[r#"{"b": 1}"#, r#"{"a": "x"}"#, "{}"],
    );
    assert!(live(schema, r#"{"b": 1"#));
    assert!(!live(schema, r#"{"b": 1}"#));
    // With room for one key only, it must be the witness: once `1` is complete it is not.
    let single = r#"{"type": "object", "maxProperties": 1, "not": {"additionalProperties": {"type": "integer"}}}"#;
    assert!(live(single, r#"{"b": 1"#));
    assert!(!live(single, r#"{"b": 1,"#));
    assert!(!live(single, r#"{"b": 1}"#));
    // Closed branches: the witness is one of the other branch's keys.
    check(
        r#"{"oneOf": [{"type": "object", "properties": {"a": {}}, "additionalProperties": false}, {"type": "object", "properties": {"b": {}}, "additionalProperties": false}], "$defs": {"x": {"type": "array"}}}"#,
        &[r#"{"a": 1}"#, r#"{"b": [1]}"#],
        &["{}", r#"{"a": 1, "b": 1}"#, r#"{"c": 1}"#],
    );
}

#[test]
fn max_contains_bounds_the_matching_items() {
    check(
        r#"{"type": "array", "contains": {"type": "integer"}, "maxContains": 2}"#,
        &["[1]", r#"[1, "a", 2]"#, r#"[1, 2, "x"]"#],
        &["[1, 2, 3]", "[]", r#"["a"]"#],
    );
    check(
        r#"{"type": "array", "contains": {"type": "integer"}, "minContains": 0, "maxContains": 1}"#,
        &["[]", r#"["a"]"#, r#"[1, "a"]"#],
        &["[1, 2]"],
    );
    let schema =
        r#"{"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}, "maxContains": 1, "minItems": 2}"#;
    check(schema, &["[1, 2]", "[3, 1]"], &["[1, 1]", "[1]", "[2, 3]"]);
    // The second item may not be 1 again, but `1` still grows into `10`.
    assert!(live(schema, "[1, 1"));
    assert!(!live(schema, "[1, 1]"));
    assert!(!live(schema, "[1, 1,"));
    match Compiler::without_cache().compile_json_schema(
        r#"{"type": "array", "contains": {"type": "integer"}, "minContains": 3, "maxContains": 2}"#,
    ) {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema),
        other => panic!("{other:?}"),
    }
}

#[test]
fn if_then_else_decides_by_the_condition() {
    let schema = r#"{"type": "object", "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}"#;
    check(
        schema,
        &[r#"{"kind": "a", "x": 1}"#, r#"{"kind": "b", "y": 1}"#, r#"{"y": 1}"#],
        &[r#"{"kind": "a", "y": 1}"#, r#"{"kind": "b", "x": 1}"#, "{}"],
    );
    // After `"kind": "b"` only `else` can hold: `x` alone never completes.
    assert!(!live(schema, r#"{"kind": "b", "x": 1}"#));
    assert!(live(schema, r#"{"kind": "b", "x": 1"#));
    // Without `else`, instances failing `if` are all accepted.
    check(
        r#"{"if": {"type": "string"}, "then": {"minLength": 2}, "$defs": {"x": {"type": "array"}}}"#,
        &[r#""ab""#, "1", "[]"],
        &[r#""a""#],
    );
}

/// Whether `prefix` can still be completed to an accepted text.
fn live(schema: &str, prefix: impl AsRef<[u8]>) -> bool {
    let program = Compiler::without_cache().compile_json_schema(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let mut matcher = program.executable().start_matcher();
    matcher.feed(prefix.as_ref())
}

#[test]
fn pattern_properties_classify_keys_by_every_matching_pattern() {
    check(
        r#"{"type": "object", "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#,
        &[r#"{"x-a":1,"b":"s"}"#, r#"{"\u0078-":2}"#, "{}", r#"{"X-a":"s"}"#],
        &[r#"{"x-a":"s"}"#, r#"{"b":1}"#, r#"{"x-a":1,"x\u002da":2}"#],
    );
    // Named properties take the schemas of the patterns their names match as well.
    check(
        r#"{"properties": {"x-id": {"minimum": 5}}, "patternProperties": {"^x-": {"type": "integer"}}}"#,
        &[r#"{"x-id":5}"#, r#"{"x-id":7,"x-b":1,"y":null}"#],
        &[r#"{"x-id":5.5}"#, r#"{"x-id":4}"#, r#"{"x-b":"s"}"#],
    );
    // Unanchored patterns search; a key matching two patterns must satisfy both.
    check(
        r#"{"patternProperties": {"a": {"type": "integer"}, "b": {"minimum": 3}}, "additionalProperties": false}"#,
        &[r#"{"ab":3}"#, r#"{"xa":-1,"b":3.5}"#, r#"{"ba":4}"#],
        &[r#"{"ab":2}"#, r#"{"ab":3.5}"#, r#"{"c":1}"#],
    );
    // Conjunctions keep each schema object's own additionalProperties.
    check(
        r#"{"allOf": [{"patternProperties": {"^a": {"type": "integer"}}}, {"properties": {"ab": true}, "additionalProperties": false}]}"#,
        &[r#"{"ab":1}"#, "{}"],
        &[r#"{"ab":"x"}"#, r#"{"ac":1}"#, r#"{"b":1}"#],
    );
}

#[test]
fn pattern_properties_never_admit_a_key_that_cannot_be_completed() {
    let finite =
        r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "integer"}}, "additionalProperties": false}"#;
    assert!(live(finite, r#"{"a":1,"#));
    assert!(live(finite, r#"{"a":1,""#));
    assert!(!live(finite, r#"{"a":1,"a"#), "a repeated key");
    assert!(live(finite, r#"{"a":1,"\u00"#));
    assert!(live(finite, r#"{"a":1,"\u006"#), "\\u0062 is b");
    assert!(!live(finite, r#"{"a":1,"b":2,"#), "every allowed key is taken");
    assert!(!live(finite, r#"{"a":1,"b":2,""#));
    assert!(!live(finite, r#"{"c"#));
    // Keys sharing prefixes: a prefix is dead once every key it can become was seen.
    let shared = r#"{"type": "object", "propertyNames": {"enum": ["alpha", "alpine", "beta"]}, "additionalProperties": {"type": "integer"}}"#;
    assert!(live(shared, r#"{"alpine":1,"alp"#) && !live(shared, r#"{"alpine":1,"alpi"#));
    assert!(live(shared, r#"{"alpine":1,"alpha":2,"b"#));
    for dead in ["a", "al", "alp", "\\u0061"] {
        assert!(!live(shared, format!(r#"{{"alpine":1,"alpha":2,"{dead}"#)), "{dead}");
    }
    // Keys whose schema admits nothing are refused from their first byte that decides it.
    let unsat =
        r#"{"patternProperties": {"^n": false, "^no": {"type": "null"}}, "additionalProperties": {"type": "null"}}"#;
    assert!(live(unsat, r#"{"m":null,"o":null}"#));
    assert!(
        !live(unsat, r#"{"n"#) && !live(unsat, r#"{"\u006e"#) && live(unsat, r#"{"m"#) && live(unsat, r#"{"\u006"#)
    );
    assert!(!live(unsat, r#"{"no":"#) && !live(unsat, r#"{"n":"#));
    // minProperties counts pattern keys; a finite key set that cannot reach it is unsatisfiable.
    let short = r#"{"type": "object", "patternProperties": {"^[ab]$": true}, "additionalProperties": false, "minProperties": 3}"#;
    match Compiler::without_cache().compile_json_schema(short) {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema),
        other => panic!("{other:?}"),
    }
    let enough = r#"{"type": "object", "patternProperties": {"^[abc]$": true}, "additionalProperties": false, "minProperties": 3}"#;
    check(enough, &[r#"{"a":1,"c":2,"b":3}"#], &[r#"{"a":1,"b":2}"#]);
    assert!(!live(enough, r#"{"a":1,"b":2}"#) && live(enough, r#"{"a":1,"b":2,"#));
}

/// Required names that no `properties` entry declares take their schema from the patterns that
/// match them, even where those names are every key a pattern admits.
#[test]
fn required_names_that_only_patterns_admit() {
    let vocabulary = vocabulary();
    let one = r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a", "b"]}"#;
    let cases: Vec<(String, Vec<&str>, Vec<&str>)> = vec![
        // One pattern, open and closed.
        (
            one.to_string(),
            vec![r#"{"a": "x", "b": "y"}"#, r#"{"b":"y","c":[1],"a":"x"}"#, r#"{"\u0061": "x", "b": ""}"#],
            vec![r#"{"a": "x"}"#, r#"{"a": 1, "b": "y"}"#, r#"{"a": "x", "b": null}"#, "{}", r#"{"a":"x","a":"y"}"#],
        ),
        (
            one.replace(r#""required""#, r#""additionalProperties": false, "required""#),
            vec![r#"{"a": "x", "b": "y"}"#, r#"{"b":"","a":"x"}"#],
            vec![r#"{"a": "x", "b": "y", "c": 1}"#, r#"{"a": "x"}"#, r#"{"a": "x", "b": 2}"#],
        ),
        // Overlapping patterns: a name takes the schema of every pattern that matches it.
        (
            r#"{"patternProperties": {"^(a|b)$": {"type": "integer"}, "^a$": {"minimum": 3}}, "required": ["a"], "additionalProperties": false}"#.to_string(),
            vec![r#"{"a": 3}"#, r#"{"b": 1, "a": 4}"#, "[]"],
            vec![r#"{"a": 2}"#, r#"{"a": 3.5}"#, r#"{"b": 1}"#, r#"{"a": 3, "c": 1}"#, "{}"],
        ),
        // A pattern beside `properties` and `additionalProperties: false` (a real schema's shape).
        (
            r#"{"type": "object", "properties": {"mode": {"enum": ["on", "off"]}}, "patternProperties": {"^bridge_(start|end)$": {"type": "integer", "minimum": 0}}, "additionalProperties": false, "required": ["bridge_start", "bridge_end", "mode"]}"#.to_string(),
            vec![r#"{"bridge_start": 1, "bridge_end": 20, "mode": "on"}"#, r#"{"mode":"off","bridge_end":0,"bridge_start":0}"#],
            vec![r#"{"bridge_start": 1, "mode": "on"}"#, r#"{"bridge_start": -1, "bridge_end": 2, "mode": "on"}"#, r#"{"bridge_start": 1, "bridge_end": 2, "mode": "on", "bridge_mid": 1}"#],
        ),
        // A name that both `properties` and a pattern read, beside one only the pattern reads.
        (
            r#"{"properties": {"a": {"maxLength": 1}}, "patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a", "b"], "additionalProperties": false}"#.to_string(),
            vec![r#"{"a": "x", "b": "yy"}"#],
            vec![r#"{"a": "xx", "b": "y"}"#, r#"{"a": 1, "b": "y"}"#, r#"{"a": "x", "b": 1}"#],
        ),
        // Under `items`, an account list whose required keys come from one pattern.
        (
            r#"{"type": "array", "items": {"type": "object", "patternProperties": {"^(consumer|access_token)_(key|secret)$": {"type": "string", "minLength": 1}}, "required": ["consumer_key", "consumer_secret"], "additionalProperties": false}}"#.to_string(),
            vec![r#"[{"consumer_key": "k", "consumer_secret": "s"}, {"access_token_key": "t", "consumer_secret": "u", "consumer_key": "v"}]"#, "[]"],
            vec![r#"[{"consumer_key": "k"}]"#, r#"[{"consumer_key": "", "consumer_secret": "s"}]"#],
        ),
        // Under `propertyNames`: the name must be a name it admits.
        (
            r#"{"type": "object", "propertyNames": {"maxLength": 2}, "patternProperties": {"^(a|bb|ccc)$": {"type": "string"}}, "required": ["bb"]}"#.to_string(),
            vec![r#"{"bb": "x"}"#, r#"{"a": "", "bb": "x", "z": 1}"#],
            vec![r#"{"bb": 1}"#, r#"{"a": "x"}"#, r#"{"bb": "x", "ccc": "y"}"#],
        ),
        // Counts: minProperties needs the other pattern key too; maxProperties leaves no room.
        (
            r#"{"type": "object", "patternProperties": {"^(a|b)$": {}}, "additionalProperties": false, "required": ["a"], "minProperties": 2}"#.to_string(),
            vec![r#"{"a": 1, "b": 2}"#, r#"{"b": [], "a": null}"#],
            vec![r#"{"a": 1}"#, r#"{"b": 1}"#, r#"{"a": 1, "c": 2}"#],
        ),
        (
            r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "integer"}}, "required": ["a"], "maxProperties": 1}"#.to_string(),
            vec![r#"{"a": 1}"#],
            vec![r#"{"a": 1, "b": 2}"#, r#"{"b": 2}"#, r#"{"a": "x"}"#],
        ),
        // Inside `oneOf` and `anyOf` branches of different kinds.
        (
            r#"{"oneOf": [{"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a"], "additionalProperties": false}, {"type": "array"}]}"#.to_string(),
            vec![r#"{"a": "x"}"#, r#"{"b": "y", "a": "x"}"#, "[1]"],
            vec![r#"{"b": "y"}"#, r#"{"a": 1}"#, "1"],
        ),
        (
            r#"{"anyOf": [{"patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a"]}, {"patternProperties": {"^(a|b)$": {"type": "integer"}}, "required": ["b"]}], "type": "object"}"#.to_string(),
            vec![r#"{"a": "x"}"#, r#"{"b": 1}"#, r#"{"a": "x", "b": "y"}"#],
            vec![r#"{"a": 1}"#, r#"{"b": "y"}"#, r#"{"a": "x", "b": 1}"#, "{}"],
        ),
        // Through `allOf`: a required name in one schema object, its pattern in another.
        (
            r#"{"allOf": [{"required": ["a"]}, {"patternProperties": {"^(a|b)$": {"type": "null"}}, "additionalProperties": false}]}"#.to_string(),
            vec![r#"{"a": null}"#, r#"{"a": null, "b": null}"#],
            vec![r#"{"a": 1}"#, r#"{"b": null}"#],
        ),
        // The other places that gather the names an object may have: dependencies,
        // `unevaluatedProperties`, items compared by `uniqueItems`.
        (
            r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}}, "additionalProperties": false, "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"required": ["a"]}}}"#.to_string(),
            vec![r#"{"a": "x", "b": "y"}"#, "{}"],
            vec![r#"{"a": "x"}"#, r#"{"b": "y"}"#, r#"{"a": "x", "b": 1}"#],
        ),
        (
            r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a", "b"], "unevaluatedProperties": false}"#.to_string(),
            vec![r#"{"a": "x", "b": "y"}"#],
            vec![r#"{"a": "x", "b": "y", "c": 1}"#, r#"{"a": "x"}"#],
        ),
        (
            r#"{"type": "object", "allOf": [{"patternProperties": {"^(a|b)$": {"type": "string"}}}], "required": ["a"], "unevaluatedProperties": {"type": "integer"}}"#.to_string(),
            vec![r#"{"a": "x"}"#, r#"{"a": "x", "c": 1}"#],
            vec![r#"{"a": 1}"#, r#"{"a": "x", "c": "y"}"#],
        ),
        (
            r#"{"type": "array", "uniqueItems": true, "items": {"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}}, "required": ["a", "b"]}}"#.to_string(),
            vec![r#"[{"a": "x", "b": "y"}, {"b": "y", "a": "z"}]"#],
            vec![r#"[{"a": "x", "b": "y"}, {"b": "y", "a": "x"}]"#, r#"[{"a": "x"}]"#],
        ),
    ];
    for (schema, accepted, refused) in &cases {
        check(schema, accepted, refused);
        for text in accepted {
            walk_with_reference(schema, &vocabulary, text);
            assert!(admitted_by_masks(schema, &vocabulary, text), "{schema}: masks refuse {text}");
        }
        for text in refused {
            assert!(!admitted_by_masks(schema, &vocabulary, text), "{schema}: masks admit {text}");
        }
    }
    // The first byte of a valid instance is never refused, and a required name stays live.
    assert!(live(one, r#"{"a": "x", "#) && live(one, r#"{"a": "x", "b"#) && !live(one, r#"{"a": "x"}"#));
    // Required names that no pattern lets occur still make objects impossible.
    for schema in [
        r#"{"type": "object", "propertyNames": {"maxLength": 2}, "patternProperties": {"^(a|ccc)$": {}}, "required": ["ccc"]}"#,
        r#"{"type": "object", "patternProperties": {"^(a|b)$": false}, "required": ["a"]}"#,
        r#"{"type": "object", "patternProperties": {"^(a|b)$": {}}, "required": ["a", "b"], "maxProperties": 1}"#,
        r#"{"type": "object", "patternProperties": {"^(a|b)$": {"type": "string"}, "^a$": {"type": "integer"}}, "required": ["a"]}"#,
    ] {
        match Compiler::without_cache().compile_json_schema(schema) {
            Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema, "{schema}"),
            other => panic!("{schema}: {other:?}"),
        }
    }
}

#[test]
fn long_length_bounds_are_counted_in_code_points() {
    let text = |body: &str, n: usize| format!("\"{}\"", body.repeat(n));
    let max = r#"{"type": "string", "maxLength": 300}"#;
    for unit in ["a", "é", "😀", "\\u00e9", "\\ud83d\\ude00", "\\n"] {
        assert!(Compiler::without_cache()
            .compile_json_schema(max)
            .unwrap()
            .executable()
            .accepts(text(unit, 300).as_bytes()));
        assert!(
            !Compiler::without_cache()
                .compile_json_schema(max)
                .unwrap()
                .executable()
                .accepts(text(unit, 301).as_bytes()),
            "{unit}"
        );
    }
    assert!(live(max, format!("\"{}", "a".repeat(300))));
    assert!(!live(max, format!("\"{}", "a".repeat(301))));
    assert!(live(max, format!("\"{}\\u00", "a".repeat(299))), "an escape in progress already counts");
    assert!(!live(max, format!("\"{}\\u00", "a".repeat(300))));
    let min = r#"{"type": "string", "minLength": 300}"#;
    check(min, &[&text("x", 300), &text("😀", 1000)], &[&text("x", 299), "1"]);
    // Length alone next to an automaton of other strings, and inside other structure.
    check(
        r#"{"anyOf": [{"type": "string", "maxLength": 300}, {"type": "string", "pattern": "^x"}, {"type": "null"}]}"#,
        &[&text("a", 300), &format!("\"x{}\"", "a".repeat(400)), "null"],
        &[&text("a", 301)],
    );
    check(
        r#"{"type": "object", "properties": {"s": {"enum": ["a", "bb", 1], "maxLength": 1000}}}"#,
        &[r#"{"s":"a"}"#, r#"{"s":"bb"}"#, r#"{"s":1}"#],
        &[r#"{"s":"c"}"#],
    );
    // Counted among a pattern's strings, from one schema object or two, a minimum beside.
    for schema in [
        r#"{"type": "string", "maxLength": 1000, "minLength": 2, "pattern": "^a"}"#,
        r#"{"allOf": [{"type": "string", "maxLength": 1000}, {"type": "string", "pattern": "^a", "minLength": 2}]}"#,
    ] {
        check(
            schema,
            &[&text("a", 1000), "\"ab\"", &format!("\"a{}\"", "😀".repeat(999))],
            &[&text("a", 1001), "\"a\"", "\"ba\""],
        );
        assert!(live(schema, format!("\"{}", "a".repeat(1000))));
        assert!(!live(schema, format!("\"{}", "a".repeat(1001))));
    }
    // A pattern that needs three more code points after each `a`.
    let tail = r#"{"type": "string", "maxLength": 300, "pattern": "^a+bcd$"}"#;
    assert!(live(tail, format!("\"{}", "a".repeat(297))));
    assert!(!live(tail, format!("\"{}", "a".repeat(298))));
    // `\u00` may still spell the `b`; one `a` more and it counts one too many.
    assert!(live(tail, format!("\"{}\\u00", "a".repeat(297))));
    assert!(!live(tail, format!("\"{}\\u00", "a".repeat(298))), "an escape in progress already counts");
    for schema in [
        r#"{"type": "string", "minLength": 1000, "pattern": "^a"}"#,
        r#"{"anyOf": [{"type": "string", "maxLength": 300}, {"type": "string", "minLength": 500}]}"#,
        r#"{"anyOf": [{"type": "string", "maxLength": 300, "pattern": "^a"}, {"type": "string", "maxLength": 300, "pattern": "^b"}]}"#,
    ] {
        match Compiler::without_cache().compile_json_schema(schema) {
            Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::ResourceLimit, "{schema}"),
            other => panic!("{schema}: {other:?}"),
        }
    }
}

#[test]
fn languages_too_large_for_one_automaton_run_on_the_structured_arm() {
    let schema = r#"{"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "null"},
        "c": {"type": "boolean"}, "d": {"type": "string"}}, "additionalProperties": false}"#;
    let regular = Compiler::without_cache().compile_json_schema(schema).unwrap();
    assert_eq!(regular.executable().backend_name(), "regular");
    let mut limits = maskforge_core::SchemaResourceLimits::default();
    limits.max_dfa_states = 60;
    let options = maskforge_core::CompilerOptions::default().with_limits(limits);
    let program = Compiler::new(options).compile_json_schema(schema).unwrap();
    assert_eq!(program.executable().backend_name(), "structured");
    for text in [r#"{"d":"x","a":true}"#, "{}", r#"{"c":false,"b":null,"a":true,"d":""}"#] {
        assert_eq!(program.executable().accepts(text.as_bytes()), regular.executable().accepts(text.as_bytes()));
        assert!(program.executable().accepts(text.as_bytes()), "{text}");
    }
    for text in [r#"{"a":1}"#, r#"{"e":null}"#, r#"{"a":true,"a":true}"#] {
        assert!(!program.executable().accepts(text.as_bytes()), "{text}");
    }
}

#[test]
fn property_dependencies_in_every_draft_form() {
    let draft7 = r#""$schema": "http://json-schema.org/draft-07/schema#""#;
    let cases = [
        (
            format!(r#"{{{draft7}, "dependencies": {{"a": ["b", "c"], "d": {{"required": ["e"]}}}}}}"#),
            vec![r#"{}"#, r#"{"b":1}"#, r#"{"a":1,"b":2,"c":3}"#, r#"{"d":1,"e":2}"#, "[]", "1"],
            vec![r#"{"a":1}"#, r#"{"a":1,"b":2}"#, r#"{"d":1}"#, r#"{"c":1,"d":2,"a":3,"b":4}"#],
        ),
        (
            r#"{"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"properties": {"a": {"type": "integer"}}}}}"#
                .to_string(),
            vec![r#"{"b":true}"#, r#"{"a":1,"b":2}"#, "null"],
            vec![r#"{"a":1}"#, r#"{"a":"x","b":2}"#],
        ),
    ];
    for (schema, accepted, refused) in &cases {
        check(schema, accepted, refused);
    }
    // The triggering key is only admitted while its dependencies can still be added.
    let bounded = r#"{"type": "object", "dependentRequired": {"a": ["b", "c"]}, "maxProperties": 2}"#;
    assert!(live(bounded, r#"{"b":1,"#) && !live(bounded, r#"{"a":"#) && !live(bounded, r#"{"b":1,"a""#));
    // Draft 2020-12 no longer has `dependencies`, but schemas still use it: honoured.
    check(r#"{"dependencies": {"a": ["b"]}}"#, &[r#"{"a": 1, "b": 2}"#, r#"{"b": 2}"#], &[r#"{"a": 1}"#]);
}

#[test]
fn property_names_restrict_every_key() {
    let schema = r#"{"type": "object", "propertyNames": {"maxLength": 3, "pattern": "^[a-z]"},
        "properties": {"long": true, "ok": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#;
    check(
        schema,
        &[r#"{"ok":1,"abc":"x"}"#, "{}", r#"{"\u0061":"x"}"#],
        &[r#"{"long":1}"#, r#"{"abcd":"x"}"#, r#"{"1":"x"}"#, r#"{"ok":"x"}"#],
    );
    assert!(live(schema, r#"{"ab"#) && !live(schema, r#"{"abcd"#) && live(schema, r#"{"lo"#));
    assert!(!live(schema, r#"{"long""#) && !live(schema, r#"{"1"#));
    // Finitely many names: every one used, no key can follow.
    let finite = r#"{"type": "object", "propertyNames": {"enum": ["a", "b"]}}"#;
    assert!(live(finite, r#"{"a":1,""#) && !live(finite, r#"{"a":1,"b":2,"#));
    check(r#"{"propertyNames": false}"#, &["{}", "1", "[]"], &[r#"{"a":1}"#]);
    // A required name that propertyNames excludes makes objects impossible.
    match Compiler::without_cache()
        .compile_json_schema(r#"{"type": "object", "required": ["A"], "propertyNames": {"pattern": "^[a-z]+$"}}"#)
    {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema),
        other => panic!("{other:?}"),
    }
}

#[test]
fn contains_counts_matching_items_and_forces_the_last_chances() {
    let schema =
        r#"{"type": "array", "contains": {"type": "integer", "minimum": 10}, "minContains": 2, "maxItems": 3}"#;
    check(schema, &["[10, 11]", "[1, 10, 12]", "[10, null, 10.0]"], &["[10]", "[1, 2, 10]", "[]", "[10, 1, 2]"]);
    // With one slot left and one match missing, only a matching item may start.
    assert!(live(schema, "[1, 10, 1") && !live(schema, "[1, 10, 9,") && !live(schema, "[1, 10, 9]"));
    assert!(live(schema, "[1, 2"), "2 may still become 20");
    assert!(!live(schema, "[1, 2]") && !live(schema, "[1, 2,"), "one slot left for two matches");
    // Items already constrained by `items`: the match must satisfy both.
    check(
        r#"{"items": {"type": "number"}, "contains": {"const": 3}}"#,
        &["[3]", "[1, 3.0, 2]", "{}", "3"],
        &["[]", "[1, 2]", r#"["3"]"#],
    );
    // minContains 0 always holds; maxContains without contains is ignored.
    check(r#"{"contains": {"const": 1}, "minContains": 0}"#, &["[]", "[2]"], &[]);
    check(r#"{"maxContains": 1}"#, &["[1, 1]"], &[]);
}

#[test]
fn unique_items_compare_by_value_and_stay_live() {
    let any = r#"{"type": "array", "uniqueItems": true}"#;
    check(
        any,
        &["[]", "[1, 2]", r#"[1, "1"]"#, r#"[{"a": 1}, {"a": 2}, [1], [2]]"#, "[true, false, null]"],
        &["[1, 1.0]", r#"["a", "\u0061"]"#, r#"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"#, "[[1], [1]]", "[null, null]"],
    );
    // A repeated value is refused where its text fixes it: the literal's first byte, the closing
    // quote or bracket, or the byte that ends a number.
    assert!(!live(any, "[true, t"));
    assert!(!live(any, r#"["a", "a""#));
    assert!(live(any, r#"["a", "a"#));
    assert!(!live(any, "[[1], [1]"));
    assert!(live(any, "[1, 1"), "1 may still become 10");
    assert!(!live(any, "[1, 1,"));
    // A string with finitely many completions, all seen, is a dead end before its quote.
    let mixed =
        r#"{"type": "array", "items": {"anyOf": [{"enum": ["ab", "ac"]}, {"type": "number"}]}, "uniqueItems": true}"#;
    assert!(live(mixed, r#"["ab", "a"#));
    assert!(!live(mixed, r#"["ab", "ac", "a"#));
    // Literal-only items run out: two booleans at most.
    let booleans = r#"{"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 2}"#;
    check(booleans, &["[true, false]"], &["[true, true]", "[true]"]);
    match Compiler::without_cache()
        .compile_json_schema(r#"{"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 3}"#)
    {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema),
        other => panic!("{other:?}"),
    }
    // Finitely many strings: the distinct values left must cover minItems.
    let letters = r#"{"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": true, "minItems": 2}"#;
    check(
        letters,
        &[r#"["a", "b"]"#, r#"["c", "\u0061", "b"]"#],
        &[r#"["a", "a"]"#, r#"["a"]"#, r#"["a", "b", "c", "a"]"#],
    );
    assert!(!live(letters, r#"["a", "b", "c", ""#));
    assert!(live(letters, r#"["a", "b", ""#));
    // Strings too many to list are counted: 26^3 distinct values reach minItems 17,576, not one more.
    let three = |min: u64| {
        format!(
            r#"{{"type": "array", "uniqueItems": true, "items": {{"type": "string", "pattern": "^[a-z]{{3}}$"}}, "minItems": {min}}}"#
        )
    };
    assert!(Compiler::without_cache().compile_json_schema(&three(17_576)).is_ok());
    match Compiler::without_cache().compile_json_schema(&three(17_577)) {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsatisfiableSchema),
        other => panic!("{other:?}"),
    }
    // Finite sets of numbers are not decided yet: diagnosed.
    match Compiler::without_cache()
        .compile_json_schema(r#"{"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": true}"#)
    {
        Err(Error::Schema(d)) => assert_eq!(d.keyword.as_deref(), Some("uniqueItems")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unique_items_over_constrained_objects_stay_live_to_the_last_byte() {
    // Closed objects that strings keep infinite: a repeat is refused where the text fixes the
    // item, which may be well before its closing brace.
    let closed = r#"{"type": "array", "uniqueItems": true, "items": {"type": "object", "additionalProperties": false, "required": ["k", "s"], "properties": {"k": {"enum": ["a", "ab"]}, "s": {"type": "string"}, "f": {"type": "boolean"}}}}"#;
    check(
        closed,
        &[r#"[{"k": "a", "s": "x"}, {"s": "x", "k": "ab"}, {"k": "a", "s": "x", "f": true}]"#],
        &[
            r#"[{"k": "a", "s": "x"}, {"s": "x", "k": "a"}]"#,
            r#"[{"k": "a", "s": "x", "f": false}, {"f": false, "s": "\u0078", "k": "a"}]"#,
        ],
    );
    let seen = r#"[{"k": "a", "s": "x"}, {"k": "ab", "s": "x"}, "#;
    assert!(live(closed, format!(r#"{seen}{{"s": "x", "k": "ab""#)), "`f` may still follow");
    assert!(!live(closed, format!(r#"{seen}{{"s": "x", "k": "ab"}}"#)));
    // With `f` taken, every completion of `s` closed at "x" repeats an item: the closing quote
    // is the dead byte, while "x" may still grow.
    let seen_f = r#"[{"k": "a", "s": "x", "f": true}, {"k": "ab", "s": "x", "f": true}, "#;
    assert!(live(closed, format!(r#"{seen_f}{{"f": true, "s": "x"#)));
    assert!(!live(closed, format!(r#"{seen_f}{{"f": true, "s": "x""#)));
    assert!(live(closed, format!(r#"{seen_f}{{"f": true, "s": "xy", "k": "a"#)));
    assert!(live(closed, format!(r#"{seen_f}{{"f": false, "s": "x", "k": "ab"}}]"#)));
    // Arrays as items, objects inside them. A number is fixed only once it ends: `0` may still
    // become `0.5e1`.
    let nested = r#"{"type": "array", "uniqueItems": true, "items": {"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 0}}, "additionalProperties": false}, "maxItems": 1}}"#;
    check(nested, &[r#"[[], [{"id": 0}], [{"id": 10}]]"#], &[r#"[[{"id": 0}], [{"id": 0.0}]]"#, "[[], []]"]);
    assert!(live(nested, r#"[[{"id": 1}], [{"id": 1"#), "1 may still become 10");
    assert!(live(nested, r#"[[{"id": 0}], [{"id": 0"#));
    assert!(!live(nested, r#"[[{"id": 0}], [{"id": 0e7"#), "zero in every spelling");
    assert!(!live(nested, r#"[[{"id": 0}], [{"id": 0}"#));
    assert!(live(nested, "[[], ["), "an object may follow");
    assert!(!live(nested, "[[], []"));
    // Arrays or objects with finitely many values are diagnosed: their count is not tracked.
    match Compiler::without_cache().compile_json_schema(
        r#"{"type": "array", "uniqueItems": true, "items": {"type": "object", "properties": {"f": {"type": "boolean"}}, "additionalProperties": false}}"#,
    ) {
        Err(Error::Schema(d)) => {
            assert_eq!((d.code, d.keyword.as_deref()), (DiagnosticCode::UnsupportedKeyword, Some("uniqueItems")))
        }
        other => panic!("{other:?}"),
    }
}

/// Mask-guided random walks over arrays of small constrained objects, where items repeat often:
/// every mask equals the reference route's, none is empty before the text can end, and every
/// finished array holds distinct items.
#[test]
fn unique_constrained_items_never_reach_a_dead_end() {
    // `{"n": 0, "k": 1` can only close: once `{"n": 0, "k": 1}` was seen, the `1` is the dead byte.
    let schema = r#"{"type": "array", "uniqueItems": true, "maxItems": 6, "items": {"type": "object", "additionalProperties": false, "required": ["n", "k"], "properties": {"k": {"enum": [0, 1, "a"]}, "n": {"type": "integer", "minimum": 0}}}}"#;
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in ["[", "]", "{\"n\":", ",\"k\":", "0", "1", "\"a\"", "}", ",", "},", "}]", "{\"k\":", ",\"n\":"] {
        tokens.push(t.as_bytes().to_vec());
    }
    let eos = tokens.len() as u32;
    let vocabulary = build_vocabulary(eos, tokens.into_iter().enumerate().map(|(i, t)| (i as u32, t))).unwrap();
    let vocabulary = CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap();
    let bound = Compiler::without_cache().compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
    let v = bound.vocabulary().clone();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next_random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut finished = 0;
    for walk in 0..40 {
        let mut session = bound.start_session().unwrap();
        let mut mask = vec![0u32; bound.mask_word_count()];
        let mut text = Vec::new();
        for _ in 0..80 {
            session.write_mask(&mut mask).unwrap();
            if walk % 10 == 0 {
                let reference = reference_mask(bound.executable(), &v, &text).unwrap();
                assert_eq!(mask, reference, "after {:?}", String::from_utf8_lossy(&text));
            }
            let allowed = allowed_ids(&mask);
            // Whitespace alone never moves a walk on: a mask of it (and no EOS) is a dead end.
            let moves =
                allowed.iter().any(|&id| id == eos || !v.token_bytes(id).unwrap().iter().all(u8::is_ascii_whitespace));
            assert!(moves, "dead end after {:?}", String::from_utf8_lossy(&text));
            // Prefer the multi-byte tokens: they build items that repeat.
            let multi: Vec<u32> = allowed.iter().copied().filter(|&id| id > 255).collect();
            let pool = if !multi.is_empty() && next_random() % 8 != 0 { &multi } else { &allowed };
            let id = pool[(next_random() % pool.len() as u64) as usize];
            if id == eos {
                finished += 1;
                let value: serde_json::Value = serde_json::from_slice(&text).unwrap();
                let items = value.as_array().unwrap();
                for (i, a) in items.iter().enumerate() {
                    assert!(items[i + 1..].iter().all(|b| a != b), "repeated item in {value}");
                }
                break;
            }
            text.extend_from_slice(v.token_bytes(id).unwrap());
            session.advance(id).unwrap();
        }
    }
    assert!(finished > 8, "only {finished} walks finished");
}

#[test]
fn format_regex_admits_exactly_the_ecma_patterns() {
    let schema = r#"{"type": "object", "properties": {"re": {"type": "string", "format": "regex"}}}"#;
    check(
        schema,
        &[r#"{"re": "^(?<y>\\d{4})-\\k<y>$"}"#, r#"{"re": "[]"}"#, r#"{"re": "a\u007c"}"#, r#"{"re": ""}"#],
        &[
            r#"{"re": "^(abc]"}"#,
            r#"{"re": "\\a"}"#,
            r#"{"re": "a{3,2}"}"#,
            r#"{"re": "(?i)x"}"#,
            r#"{"re": "\\2(a)"}"#,
        ],
    );
    // Every prefix of a valid pattern is live; the first code point after which none follows is
    // refused, wherever it sits (a JSON escape included).
    assert!(live(schema, r#"{"re": "(a|[b-"#));
    assert!(live(schema, r#"{"re": "\\k<name"#), "the group may come later");
    assert!(!live(schema, r#"{"re": "a**"#));
    assert!(!live(schema, r#"{"re": "\u0029"#), "an escaped `)` closes no group");
    assert!(!live(schema, r#"{"re": "(a""#), "unclosed at the quote");
    // A code point begun but not finished is live only if one it can still become continues.
    assert!(live(schema, r#"{"re": "a{\u003"#), "a digit may follow");
    assert!(!live(schema, r#"{"re": "a{\u00e"#), "U+00E0..U+00EF: none is a digit");
    assert!(!live(schema, b"{\"re\": \"a{\xcd"), "U+0340..U+037F: none is a digit");
    assert!(live(schema, b"{\"re\": \"[\xc3\xa9-\xc3"), "U+00C0..U+00FF reaches the range start");
    assert!(!live(schema, b"{\"re\": \"[\xc3\xa9-\xc2"), "U+0080..U+00BF: all below the range start");
    assert!(!live(schema, b"{\"re\": \"(?<\xe2\x80"), "U+2000..U+203F: none starts a name");
    assert!(live(schema, b"{\"re\": \"(?<a\xe2\x80"), "ZWJ or U+203F continues one");
    assert!(!live(schema, r#"{"re": "(?<\ud835\udfce"#), "MATHEMATICAL BOLD DIGIT ZERO starts no name");
    assert!(live(schema, r#"{"re": "(?<a\ud835\udf"#), "mathematical bold digits continue one");
    // Beside an enum the patterns are filtered; beside a pattern keyword they are diagnosed.
    check(r#"{"enum": ["(", "a+", 1], "format": "regex"}"#, &[r#""a+""#, "1"], &[r#""(""#]);
    // A minimum length is counted; a pattern free of syntax characters admits only patterns.
    check(r#"{"format": "regex", "minLength": 2}"#, &[r#""ab""#, r#""\\d""#], &[r#""a""#, r#""""#, r#""(""#]);
    check(r#"{"format": "regex", "pattern": "^[a-z]+$"}"#, &[r#""abc""#], &[r#""a(""#, r#""""#]);
    match Compiler::without_cache().compile_json_schema(r#"{"type": "string", "format": "regex", "pattern": "^.+$"}"#) {
        Err(Error::Schema(d)) => {
            assert_eq!((d.code, d.keyword.as_deref()), (DiagnosticCode::UnsupportedKeyword, Some("format")))
        }
        other => panic!("{other:?}"),
    }
    match Compiler::without_cache().compile_json_schema(r#"{"type": "string", "format": "regex", "maxLength": 3}"#) {
        Err(Error::Schema(d)) => {
            assert_eq!((d.code, d.keyword.as_deref()), (DiagnosticCode::UnsupportedKeyword, Some("format")))
        }
        other => panic!("{other:?}"),
    }
    match Compiler::without_cache().compile_json_schema(r#"{"not": {"type": "string", "format": "regex"}}"#) {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsupportedKeyword),
        other => panic!("{other:?}"),
    }
}

#[test]
fn keys_under_format_regex_are_patterns() {
    // The drafts' metaschemas ask this of `patternProperties`.
    let schema = r#"{"type": "object", "propertyNames": {"format": "regex", "minLength": 2},
        "properties": {"a(": {}, "ok": {"type": "integer"}}, "additionalProperties": {"type": "string"}}"#;
    check(
        schema,
        &["{}", r#"{"ok": 1, "^\\d+$": "x", "(?:a)": "y"}"#],
        &[r#"{"a(": 1}"#, r#"{"a": "x"}"#, r#"{"ok": "x"}"#, r#"{"(": "x"}"#, r#"{"ab": "x", "ab": "y"}"#],
    );
    assert!(live(schema, r#"{"(a|[b-"#));
    assert!(live(schema, r#"{"a"#), "`a(` is not a pattern, but `ab` is");
    assert!(!live(schema, r#"{"a**"#));
    assert!(!live(schema, r#"{"(a""#), "unclosed at the quote");
    assert!(!live(schema, r#"{"\u0029"#), "an escaped `)` closes no group");
    assert!(!live(schema, b"{\"a{\xcd"), "no digit begins with this byte");
    // Once only declared keys fit, they decide alone.
    let bounded = r#"{"type": "object", "propertyNames": {"format": "regex"}, "maxProperties": 1,
        "properties": {"x+": {}}, "required": ["x+"]}"#;
    assert!(live(bounded, r#"{"x"#));
    assert!(!live(bounded, r#"{"y"#));
    // Beside patternProperties the intersection of both key languages is not built.
    let patterns = r#"{"type": "object", "propertyNames": {"format": "regex"}, "patternProperties": {"^a": {}}}"#;
    match Compiler::without_cache().compile_json_schema(patterns) {
        Err(Error::Schema(d)) => assert_eq!(d.code, DiagnosticCode::UnsupportedKeyword),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_recursive_conjunction_met_again_below_itself_is_well_founded() {
    // The root is `n and m`, and so is the schema of `c` inside both: one memoised conjunction,
    // met again while it is being computed.
    let schema = r##"{
        "$defs": {
            "n": {"type": "object", "properties": {"c": {"allOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/m"}]}, "a": {"type": "integer"}}},
            "m": {"type": "object", "properties": {"c": {"allOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/m"}]}}, "required": ["a"]}
        },
        "allOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/m"}]
    }"##;
    check(schema, &[r#"{"a": 1, "c": {"a": 2}}"#], &[r#"{"a": 1, "c": {}}"#, r#"{"a": "x"}"#]);
}

#[test]
fn instances_nest_at_most_512_deep() {
    // The matcher's state is as deep as the text: the bound keeps its stack use within any
    // thread's, whatever a model emits. Brackets inside strings do not count.
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    check("{}", &[&deep(512), r#"[["[[[[", {"a": "{{{{\"["}]]"#], &[&deep(513)]);
    let arrays = r##"{"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}"##;
    check(arrays, &[&deep(512)], &[&deep(513)]);
    assert!(live("{}", format!("{}\"[[[", "[".repeat(512))));
    assert!(!live("{}", "[".repeat(513)));
    assert!(!live("{}", format!("{}{{", "[".repeat(512))));
}
