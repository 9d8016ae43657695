//! Property test: schemas generated over about 25 keywords and JSON values generated to meet
//! them are judged alike by MaskForge, through its masks, and by the `jsonschema` crate, an
//! independent validator. proptest shrinks any disagreement to a minimal schema and value.
//!
//! The oracle's dialect is kept out of the way: patterns use only syntax on which its regex
//! engine and ECMA-262 agree, and formats are left out. The Python side has the same test against
//! python-jsonschema (tests/test_differential.py).
//!
//! To explore beyond the fixed cases: `MASKFORGE_DIFFERENTIAL_SEED=7
//! MASKFORGE_DIFFERENTIAL_CASES=5000 cargo test -p maskforge-core --test schema_differential`.

use std::sync::{Arc, OnceLock};

use maskforge_core::low_level::{compile_regular, SchemaDocument};
use maskforge_core::TokenId;
use maskforge_core::{build_vocabulary, CompiledVocabulary, Compiler, CompilerOptions, DiagnosticCode, Error};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const KEYS: [&str; 4] = ["a", "b", "ab", "é"];
const NUMBERS: [&str; 12] = ["0", "1", "-1", "2", "3", "2.5", "-0.5", "10", "1e3", "0.1", "1.0", "-0"];
const PATTERNS: [&str; 6] = ["^a", "b", "^[a-c]+", "^(ab)*b", "[0-9]", "^.{2}"];
/// `patternProperties` keys over [`KEYS`]: anchored alternations that admit only names the
/// generated `required` lists use, as well as open prefixes and searches.
const KEY_PATTERNS: [&str; 5] = ["^(a|b)$", "^ab$", "^a", "b", "^(é|a)$"];

fn number(text: &str) -> Value {
    serde_json::from_str(text).expect("a JSON number")
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(NUMBERS.to_vec()).prop_map(number),
        prop::collection::vec(prop::sample::select(vec!['a', 'b', '0', ' ', 'é', '"']), 0..4)
            .prop_map(|chars| Value::String(chars.into_iter().collect())),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..3)
                .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn leaf_schema() -> impl Strategy<Value = Value> {
    let types = vec!["null", "boolean", "integer", "number", "string", "array", "object"];
    let bounds = vec!["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
    let counts = vec!["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];
    prop_oneof![
        Just(json!({})),
        prop::sample::select(types).prop_map(|t| json!({ "type": t })),
        prop::collection::vec(scalar(), 1..4).prop_map(|values| json!({ "enum": values })),
        json_value().prop_map(|value| json!({ "const": value })),
        (prop::sample::select(bounds), prop::sample::select(NUMBERS.to_vec()))
            .prop_map(|(keyword, n)| Value::Object(Map::from_iter([(keyword.to_owned(), number(n))]))),
        prop::sample::select(vec!["2", "0.5", "3"]).prop_map(|n| json!({ "multipleOf": number(n) })),
        (prop::sample::select(counts), 0u32..4)
            .prop_map(|(keyword, n)| Value::Object(Map::from_iter([(keyword.to_owned(), json!(n))]))),
        prop::sample::select(PATTERNS.to_vec()).prop_map(|p| json!({ "pattern": p })),
        Just(json!({ "uniqueItems": true })),
        prop::collection::btree_set(prop::sample::select(KEYS.to_vec()), 0..3)
            .prop_map(|keys| json!({ "required": keys })),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(3, 6, 3, |inner| {
        let pair = prop::collection::vec(inner.clone(), 1..3);
        prop_oneof![
            prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), inner.clone(), 0..3)
                .prop_map(|properties| json!({ "properties": properties })),
            inner.clone().prop_map(|s| json!({ "additionalProperties": s })),
            prop::collection::btree_map(prop::sample::select(KEY_PATTERNS.to_vec()), inner.clone(), 1..3)
                .prop_map(|patterns| json!({ "patternProperties": patterns })),
            inner.clone().prop_map(|s| json!({ "items": s })),
            inner.clone().prop_map(|s| json!({ "prefixItems": [s] })),
            inner.clone().prop_map(|s| json!({ "contains": s })),
            inner.clone().prop_map(|s| json!({ "propertyNames": s })),
            (prop::sample::select(vec!["anyOf", "allOf", "oneOf"]), pair)
                .prop_map(|(keyword, branches)| Value::Object(Map::from_iter([(keyword.to_owned(), json!(branches))]))),
            inner.clone().prop_map(|s| json!({ "not": s })),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, t, e)| json!({ "if": i, "then": t, "else": e })),
            (inner.clone(), inner).prop_map(|(a, b)| {
                let mut merged = a.as_object().cloned().unwrap_or_default();
                merged.extend(b.as_object().cloned().unwrap_or_default());
                Value::Object(merged)
            }),
        ]
    })
}

/// Every byte is a token, so any text can be fed; the last id is EOS.
fn vocabulary() -> &'static CompiledVocabulary {
    static VOCABULARY: OnceLock<CompiledVocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let tokens = (0..=255u8).map(|b| (u32::from(b), vec![b]));
        let vocabulary = build_vocabulary(256, tokens).expect("a vocabulary");
        CompiledVocabulary::try_from(Arc::new(vocabulary)).expect("a compiled vocabulary")
    })
}

const EOS: TokenId = 256;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name} must be a number")))
}

/// Whether the schema's masks let `text` through, byte by byte, and then EOS.
fn admitted(bound: &maskforge_core::BoundSchema, text: &[u8]) -> bool {
    let mut session = bound.start_session().expect("a session");
    let mut mask = vec![0u32; bound.mask_word_count()];
    let allowed = |mask: &[u32], id: TokenId| mask[id as usize / 32] >> (id % 32) & 1 == 1;
    for &byte in text {
        session.write_mask(&mut mask).expect("a mask");
        let id = TokenId::from(byte);
        assert_eq!(allowed(&mask, id), session.is_allowed(id), "mask and is_allowed disagree");
        if !allowed(&mask, id) {
            return false;
        }
        session.advance(id).expect("an allowed token advances");
    }
    session.write_mask(&mut mask).expect("a mask");
    allowed(&mask, EOS)
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        // Fixed: the same cases on every run; explore with MASKFORGE_DIFFERENTIAL_SEED and
        // MASKFORGE_DIFFERENTIAL_CASES.
        rng_seed: proptest::test_runner::RngSeed::Fixed(env_number("MASKFORGE_DIFFERENTIAL_SEED", 20261130)),
        cases: env_number("MASKFORGE_DIFFERENTIAL_CASES", 300) as u32,
        ..ProptestConfig::default()
    })]

    #[test]
    fn masks_admit_exactly_what_an_independent_validator_accepts(
        schema in schema(),
        values in prop::collection::vec(json_value(), 1..7),
    ) {
        let oracle = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(false)
            .build(&schema)
            .expect("the oracle reads every generated schema");
        // Diagnosed schemas (unsupported, or admitting nothing) have nothing to compare.
        let Ok(program) = Compiler::without_cache().compile_json_value(&schema) else { return Ok(()) };
        let bound = program.bind(vocabulary()).expect("binds");
        for value in &values {
            let text = serde_json::to_string(value).expect("serialises");
            let ours = admitted(&bound, text.as_bytes());
            prop_assert_eq!(ours, program.executable().accepts(text.as_bytes()), "masks and executable on {}", text);
            prop_assert_eq!(ours, oracle.is_valid(value), "schema {} on {}", schema, text);
        }
    }

    /// Objects keyed by patterns, with required names that only the patterns (or `properties`)
    /// name: valid instances are common here, so admission is checked as well as refusal, and a
    /// schema diagnosed as admitting nothing must admit none of the generated objects.
    #[test]
    fn pattern_keyed_objects_admit_exactly_what_the_validator_accepts(
        patterns in prop::collection::btree_map(
            prop::sample::select(KEY_PATTERNS.to_vec()),
            prop_oneof![Just(json!({})), leaf_schema()],
            1..3,
        ),
        properties in prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), leaf_schema(), 0..2),
        required in prop::collection::btree_set(prop::sample::select(KEYS.to_vec()), 0..3),
        additional in prop_oneof![Just(None), Just(Some(json!(false))), leaf_schema().prop_map(Some)],
        counts in (prop_oneof![Just(None), (0u32..3).prop_map(Some)], prop_oneof![Just(None), (1u32..4).prop_map(Some)]),
        values in prop::collection::vec(
            prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), scalar(), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            1..7,
        ),
    ) {
        let mut schema = json!({ "type": "object", "patternProperties": patterns, "required": required });
        if !properties.is_empty() {
            schema["properties"] = json!(properties);
        }
        if let Some(additional) = additional {
            schema["additionalProperties"] = additional;
        }
        if let Some(min) = counts.0 {
            schema["minProperties"] = json!(min);
        }
        if let Some(max) = counts.1 {
            schema["maxProperties"] = json!(max);
        }
        let oracle = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("the oracle reads every generated schema");
        match Compiler::without_cache().compile_json_value(&schema) {
            Ok(program) => {
                let bound = program.bind(vocabulary()).expect("binds");
                for value in &values {
                    let text = serde_json::to_string(value).expect("serialises");
                    prop_assert_eq!(admitted(&bound, text.as_bytes()), oracle.is_valid(value), "schema {} on {}", schema, text);
                }
            }
            Err(Error::Schema(d)) if d.code == DiagnosticCode::UnsatisfiableSchema => {
                for value in &values {
                    prop_assert!(!oracle.is_valid(value), "schema {} said to admit nothing, but {} is valid", schema, value);
                }
            }
            // Documented gaps (`uniqueItems` over finite numbers, for one) are typed refusals.
            Err(Error::Schema(d))
                if matches!(d.code, DiagnosticCode::UnsupportedKeyword | DiagnosticCode::ResourceLimit) => {}
            Err(other) => prop_assert!(false, "schema {} refused: {:?}", schema, other),
        }
    }

    /// Compilation may skip the regular arm when the structured one finds parts the regular
    /// arm never builds; the outcome must still be the regular arm's whenever it decides (see
    /// `the_order_of_the_arms_never_changes_the_outcome` in tests/regular_arm.rs).
    #[test]
    fn the_regular_arm_decides_whenever_it_can(schema in schema()) {
        let options = CompilerOptions::default();
        let document = SchemaDocument::from_value(schema.clone(), &options).expect("a document");
        let regular = compile_regular(&document, &options);
        let compiled = Compiler::without_cache().compile_json_value(&schema);
        match regular {
            Ok(_) => prop_assert_eq!(compiled.map(|p| p.executable().backend_name()).ok(), Some("regular"), "{}", schema),
            Err(Error::Schema(d))
                if matches!(d.code, DiagnosticCode::RequiresStructuredBackend | DiagnosticCode::ResourceLimit) => {}
            Err(refusal) => prop_assert_eq!(compiled.err().map(|e| format!("{e:?}")), Some(format!("{refusal:?}")), "{}", schema),
        }
    }
}
