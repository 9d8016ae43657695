//! Resource limits end compilation with a typed diagnostic, early and before the work they bound.

use maskforge_core::{Compiler, CompilerOptions, DiagnosticCode, Error, SchemaResourceLimits};

fn compile_with(limits: SchemaResourceLimits, schema: &str) -> Result<(), maskforge_core::Diagnostic> {
    let compiler = Compiler::new(CompilerOptions::default().with_executable_cache_bytes(0).with_limits(limits));
    match compiler.compile_json_schema(schema) {
        Ok(_) => Ok(()),
        Err(Error::Schema(d)) => Err(d),
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn enum_strings_beyond_the_nfa_limit_are_refused_before_they_are_built() {
    let values: Vec<String> = (0..50_000).map(|i| format!("\"value-{i}\"")).collect();
    let schema = format!(r#"{{"type": "object", "properties": {{"a": {{"enum": [{}]}}}}}}"#, values.join(", "));
    let d = compile_with(SchemaResourceLimits::default(), &schema).unwrap_err();
    assert_eq!(
        (d.code, d.keyword.as_deref(), d.pointer.as_str()),
        (DiagnosticCode::ResourceLimit, Some("enum"), "/properties/a/enum")
    );
    // A tenth of them fits.
    let schema = format!(r#"{{"enum": [{}]}}"#, values[..5_000].join(", "));
    compile_with(SchemaResourceLimits::default(), &schema).unwrap();
}

#[test]
fn the_structured_graph_has_a_size_budget() {
    // Every member of `a` and `b` may be either object: the product of alternatives grows.
    let schema = r##"{"$defs": {"o": {"anyOf": [{"type": "object", "required": ["x"]}, {"type": "object", "required": ["y"]}]}},
        "type": "object", "properties": {"a": {"$ref": "#/$defs/o"}, "b": {"allOf": [{"$ref": "#/$defs/o"}, {"$ref": "#/$defs/o"}]}}}"##;
    compile_with(SchemaResourceLimits::default(), schema).unwrap();
    let mut limits = SchemaResourceLimits::default();
    limits.max_graph_size = 20;
    let d = compile_with(limits, schema).unwrap_err();
    assert_eq!(d.code, DiagnosticCode::ResourceLimit, "{d}");
}

#[test]
fn products_of_number_alternatives_are_bounded() {
    // Each `anyOf` offers two number constraints; their conjunction has 2^n alternatives.
    let alternatives = |n: usize| {
        let factor = |i: usize| format!(r#"{{"anyOf": [{{"minimum": {i}}}, {{"multipleOf": {}}}]}}"#, i + 2);
        let factors: Vec<String> = (0..n).map(factor).collect();
        format!(r#"{{"type": "number", "allOf": [{}]}}"#, factors.join(", "))
    };
    compile_with(SchemaResourceLimits::default(), &alternatives(4)).unwrap();
    let d = compile_with(SchemaResourceLimits::default(), &alternatives(40)).unwrap_err();
    assert_eq!(d.code, DiagnosticCode::ResourceLimit, "{d}");
    // Repeated alternatives are kept once, so the same factor many times stays small.
    let same =
        format!(r#"{{"allOf": [{}]}}"#, vec![r#"{"anyOf": [{"minimum": 1}, {"multipleOf": 3}]}"#; 40].join(", "));
    compile_with(SchemaResourceLimits::default(), &same).unwrap();
}

#[test]
fn a_pattern_automaton_beyond_the_limit_is_a_resource_limit() {
    let d = compile_with(SchemaResourceLimits::default(), r#"{"type": "string", "pattern": "^(a|b)*a(a|b){40}$"}"#)
        .unwrap_err();
    assert_eq!((d.code, d.keyword.as_deref()), (DiagnosticCode::ResourceLimit, Some("pattern")), "{d}");
}

#[test]
fn reference_chains_are_bounded_like_nesting() {
    // Shallow text, deep recursion: each `$ref` is lowered inside the one that refers to it.
    let chain = |n: usize| {
        let defs: Vec<String> = (0..n)
            .map(|i| format!(r##""a{i}": {{"allOf": [{{"$ref": "#/$defs/a{}"}}, {{"minimum": 0}}]}}"##, i + 1))
            .collect();
        format!(r##"{{"$defs": {{{}, "a{n}": {{}}}}, "$ref": "#/$defs/a0"}}"##, defs.join(", "))
    };
    compile_with(SchemaResourceLimits::default(), &chain(1_000)).unwrap();
    let d = compile_with(SchemaResourceLimits::default(), &chain(5_000)).unwrap_err();
    assert_eq!(d.code, DiagnosticCode::ResourceLimit, "{d}");
}
