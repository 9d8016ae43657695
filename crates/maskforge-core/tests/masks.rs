//! Fast masks (class trie, deduplicated rows, sessions) against the reference route (every token
//! tried on a fresh matcher), bit for bit at every step, and the session rules of the spec.

use std::sync::Arc;

use maskforge_core::low_level::reference_mask;
use maskforge_core::mask::{allowed_ids, get_bit};
use maskforge_core::{
    build_vocabulary, BindPolicy, BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, Error, MaskRoute,
    RejectReason, Vocabulary,
};

const SCHEMAS: &[&str] = &[
    r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"enum": ["red", "green", "été"]}, "maxItems": 3}},
        "required": ["name", "ok"], "additionalProperties": false}"#,
    r#"{"enum": ["alpha", "beta", "über", "😀 smile", null, true]}"#,
    r#"{"type": "array", "items": {"type": "number"}}"#,
    r#"{"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]}"#,
];

/// A small vocabulary with single bytes (all 256, so every text is reachable), multi-byte
/// tokens that cross JSON structure, and tokens that split UTF-8 sequences.
fn small_vocabulary() -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in [
        "{\"", "\":", "\",", "\"}", "name", "ok", "true", "false", "null", "tags", "[\"", "\"]", "red", "green", " \"",
        "\": ", ", \"", "alpha", "beta", "1.5", "e-", "12", ",\n", "  ", "\\u00", "\\\"", "smile", "é", "ét", "😀",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    tokens.push(vec![0xC3]); // a lone UTF-8 lead byte, as byte-level BPE produces
    tokens.push(vec![0xA9, b't']);
    tokens.push(vec![0xF0, 0x9F]);
    tokens.push(b"ok".to_vec()); // a duplicate spelling under another id
    let eos = tokens.len() as u32;
    let map = tokens.into_iter().enumerate().map(|(i, t)| (i as u32, t));
    build_vocabulary(vec![eos, eos + 1], map).unwrap().with_mask_vocab_size(eos as usize + 40).unwrap()
}

fn bind(schema: &str, vocabulary: &CompiledVocabulary, policy: BindPolicy) -> BoundSchema {
    let compiler = Compiler::new(CompilerOptions::default().with_bind_policy(policy));
    compiler.compile_json_schema(schema).unwrap().bind(vocabulary).unwrap()
}

/// Walks `text` with the longest allowed token that spells the next bytes, comparing the fast
/// mask with the reference mask before every step and at the end.
fn walk_and_compare(bound: &BoundSchema, text: &[u8]) -> usize {
    let vocabulary = bound.vocabulary();
    let executable = bound.executable();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    let mut at = 0;
    let mut steps = 0;
    loop {
        session.write_mask(&mut mask).unwrap();
        let reference = reference_mask(executable, vocabulary, &text[..at]).expect("admitted prefix must be live");
        assert_eq!(mask, reference, "mask differs from the reference after {:?}", String::from_utf8_lossy(&text[..at]));
        assert_eq!(le_bytes_masks(&session), [mask.clone(), mask.clone()], "byte masks after {at} bytes");
        if at == text.len() {
            break;
        }
        let next = allowed_ids(&mask)
            .into_iter()
            .filter_map(|id| vocabulary.token_bytes(id).map(|b| (id, b)))
            .filter(|(_, b)| text[at..].starts_with(b))
            .max_by_key(|(_, b)| b.len())
            .unwrap_or_else(|| panic!("no allowed token continues {:?}", String::from_utf8_lossy(&text[..at])));
        session.advance(next.0).unwrap();
        at += next.1.len();
        steps += 1;
    }
    assert!(session.is_accepting(), "complete instance must accept");
    for &eos in vocabulary.eos_token_ids() {
        assert!(get_bit(&mask, eos));
    }
    steps
}

/// The session's mask written as little-endian bytes into a 4-byte aligned buffer (written in
/// place) and into one that is not (written through a copy), read back as words.
fn le_bytes_masks(session: &maskforge_core::Session) -> [Vec<u32>; 2] {
    let needed = session.bound_schema().mask_byte_count();
    let mut storage = vec![0xA5u8; needed + 8];
    let aligned = storage.as_ptr().align_offset(4);
    [aligned, aligned + 1].map(|start| {
        let bytes = &mut storage[start..start + needed];
        session.write_mask_le_bytes(bytes).unwrap();
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    })
}

const INSTANCES: &[(usize, &str)] = &[
    (0, r#"{"name": "été", "ok": true, "tags": ["red", "été"]}"#),
    (0, "{\n  \"ok\": false,\n  \"name\": \"\\u00e9\\\"x\"\n}"),
    (1, r#""😀 smile""#),
    (1, r#""\u00fcber""#),
    (2, "[1.5e-12, -0, 12]"),
    (3, r#""ab😀""#),
    (3, " null "),
];

#[test]
fn fast_masks_equal_reference_masks_on_a_small_vocabulary() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    for policy in [BindPolicy::Eager, BindPolicy::Lazy] {
        for &(schema, text) in INSTANCES {
            let bound = bind(SCHEMAS[schema], &vocabulary, policy);
            walk_and_compare(&bound, text.as_bytes());
        }
    }
}

#[test]
fn fast_masks_equal_reference_masks_under_the_generation_policies() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let open = r#"{"type": "object", "properties": {"ok": {"type": "boolean"}, "name": {"type": "string"}},
        "required": ["name"], "patternProperties": {"^t": {"type": "array"}}}"#;
    // A required name only a pattern admits: in declared order it follows the declared ones.
    let pattern_named = r#"{"type": "object", "properties": {"ok": {"type": "boolean"}, "name": {"type": "string"}},
        "required": ["ab", "ac", "name"], "patternProperties": {"^a(b|c)$": {"type": "integer"}}, "additionalProperties": false}"#;
    let cases = [
        (SCHEMAS[0], "{\"name\": \"a  b\", \"ok\": true}"),
        (open, "{\"ok\": true, \"name\": \" \", \"tags\": [1, \"x\"]}"),
        (pattern_named, "{\"ok\": false, \"name\": \"x\", \"ac\": 2, \"ab\": 1}"),
    ];
    for options in [
        CompilerOptions::default().with_max_json_whitespace(Some(1)),
        CompilerOptions::default().with_property_order(maskforge_core::PropertyOrder::Declared),
    ] {
        for (schema, text) in cases {
            let bound = Compiler::new(options.clone()).compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
            walk_and_compare(&bound, text.as_bytes());
        }
    }
}

#[test]
fn padded_ids_and_special_tokens_are_never_allowed() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let bound = bind(SCHEMAS[1], &vocabulary, BindPolicy::Eager);
    let session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    session.write_mask(&mut mask).unwrap();
    let tokenizer_size = vocabulary.vocabulary().tokenizer_size() as u32;
    for id in tokenizer_size..vocabulary.mask_vocab_size() as u32 {
        assert!(!get_bit(&mask, id), "padded id {id} allowed");
    }
    assert_eq!(bound.mask_word_count(), vocabulary.mask_vocab_size().div_ceil(32));
}

#[test]
fn session_rules() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let v = vocabulary.vocabulary().clone();
    let id = |text: &str| v.tokens_with_bytes().find(|(_, b)| *b == text.as_bytes()).unwrap().0;
    let [eos, eos2] = [v.eos_token_ids()[0], v.eos_token_ids()[1]];
    let bound = bind(r#"{"enum": ["ok"]}"#, &vocabulary, BindPolicy::Lazy);
    let mut session = bound.start_session().unwrap();

    // EOS before the instance is complete, a forbidden token, an unknown id: errors, nothing changes.
    let rejected = |result: Result<(), Error>, expected: RejectReason| {
        assert!(matches!(result, Err(Error::TokenRejected { reason, .. }) if reason == expected), "{result:?}")
    };
    rejected(session.advance(eos), RejectReason::EosNotAccepting);
    rejected(session.advance(id("x")), RejectReason::LeavesLanguage);
    rejected(session.advance(10_000), RejectReason::OutOfRange);
    rejected(session.advance(v.tokenizer_size() as u32 + 3), RejectReason::NoBytes);
    let mut before = vec![0u32; bound.mask_word_count()];
    session.write_mask(&mut before).unwrap();
    assert!(get_bit(&before, id("\"")) && !get_bit(&before, eos));

    for t in ["\"", "ok", "\""] {
        session.advance(id(t)).unwrap();
    }
    assert!(session.is_accepting() && !session.is_finished());
    session.advance(eos2).unwrap();
    assert!(session.is_finished());
    let mut mask = vec![0u32; bound.mask_word_count()];
    session.write_mask(&mut mask).unwrap();
    assert_eq!(allowed_ids(&mask), vec![eos, eos2]);
    session.advance(eos).unwrap(); // batch padding: a no-op
    rejected(session.advance(id(" ")), RejectReason::SessionFinished);
    assert!(session.is_finished());

    let mut bytes = vec![0u8; bound.mask_byte_count()];
    session.write_mask_le_bytes(&mut bytes).unwrap();
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(words, mask);

    let mut short = vec![0u32; bound.mask_word_count() - 1];
    assert!(matches!(session.write_mask(&mut short), Err(Error::MaskBuffer { .. })));
    let mut short_bytes = vec![0u8; bound.mask_byte_count() - 1];
    assert!(matches!(session.write_mask_le_bytes(&mut short_bytes), Err(Error::MaskBuffer { .. })));
}

#[test]
fn eager_rows_are_deduplicated_and_lazy_rows_computed_on_demand() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let eager = bind(SCHEMAS[0], &vocabulary, BindPolicy::Eager);
    let (computed, distinct) = eager.row_stats();
    assert_eq!(computed, eager.executable().state_count() - 1);
    assert!(distinct < computed, "string-body states share rows: {distinct} of {computed}");
    let lazy = bind(SCHEMAS[0], &vocabulary, BindPolicy::Lazy);
    assert_eq!(lazy.row_stats().0, 0);
    let mut mask = vec![0u32; lazy.mask_word_count()];
    lazy.start_session().unwrap().write_mask(&mut mask).unwrap();
    assert_eq!(lazy.row_stats().0, 1);
}

/// Near a counted string's bound, inside an escape: a token read after a backslash may add more
/// code points than it counts on its own (`\u0041` after `\` is five: `\\`, `u0041`).
#[test]
fn counted_masks_inside_an_escape_near_the_bound() {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in ["aaaaaaaa", "aaaa", "\\u0041", "u0041", "\\u00", "41\"", "\\\""] {
        tokens.push(t.as_bytes().to_vec());
    }
    let eos = tokens.len() as u32;
    let map = tokens.into_iter().enumerate().map(|(i, t)| (i as u32, t));
    let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(vec![eos], map).unwrap())).unwrap();
    for schema in [
        r#"{"type": "string", "maxLength": 300}"#,
        r#"{"type": "string", "maxLength": 300, "pattern": "^[a-z\\\\0-9]*$"}"#,
    ] {
        let bound = bind(schema, &vocabulary, BindPolicy::Adaptive);
        for text in [format!(r#""{}\\u0""#, "a".repeat(297)), format!(r#""{}\\\\u00""#, "a".repeat(294))] {
            assert!(walk_and_compare(&bound, text.as_bytes()) > 0, "{schema} {text}");
        }
    }
}

#[cfg(feature = "tokenizer-processing")]
mod real_tokenizers {
    use super::*;
    use maskforge_core::TokenizerJsonOptions;

    fn load(name: &str) -> CompiledVocabulary {
        let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
        let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
        CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
    }

    /// Structured schemas: open objects, numbers by value, recursion, strings inside keys.
    const STRUCTURED: &[(&str, &str)] = &[
        (
            r#"{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[A-Z]"}, "age": {"type": "integer", "minimum": 0}}, "required": ["name"]}"#,
            r#"{"name": "Ada \"Lovelace\" 😀", "age": 3.6e1, "x": [true, {"y": null}]}"#,
        ),
        (
            r##"{"$defs": {"n": {"type": "object", "properties": {"v": {"type": "number", "maximum": 1e2}, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["v"]}}, "$ref": "#/$defs/n"}"##,
            "{\n  \"kids\": [{\"v\": -1.5}, {\"v\": 100, \"kids\": []}],\n  \"v\": 0.25\n}",
        ),
        // A `oneOf` whose branches are told apart by a key only the siblings require.
        (
            r#"{"type": "object", "required": ["kind"], "oneOf": [{"properties": {"kind": {"const": "a"}}, "patternProperties": {"^x-": {"type": "string"}}}, {"properties": {"kind": {"const": "b"}}, "patternProperties": {"^x-": {"type": "integer"}}}]}"#,
            r#"{"x-1": 2, "y": "x-", "kind": "b", "x-2": -3}"#,
        ),
        // Finitely many keys sharing prefixes: the search for an unseen one.
        (
            r#"{"type": "object", "propertyNames": {"enum": ["alpha", "alpine", "beta"]}, "additionalProperties": {"type": "integer"}}"#,
            r#"{"alpine": 1, "alpha": 2, "beta": 3}"#,
        ),
        // The same with keys beyond ASCII: a raw multi-byte character settles the search only
        // where no seen key goes on with it.
        (
            r#"{"type": "object", "propertyNames": {"enum": ["é1", "é2", "ü", "日本", "日"]}, "additionalProperties": {"type": "integer"}}"#,
            r#"{"é1": 1, "日": 2, "é2": 3, "日本": 4, "ü": 5}"#,
        ),
        // String items compared with the items before, whose automaton runs out of completions
        // (after the closing parenthesis): read as finite keys, multi-byte characters included.
        (
            r#"{"type": "object", "properties": {"allow": {"type": "array", "uniqueItems": true, "items": {"type": "string", "pattern": "^(Bash|Read)\\([a-zé]*\\)$"}}}}"#,
            r#"{"allow": ["Bash(lé)", "Bash(ls)", "Bash(l)", "Read(ls)", "Bash(lés)", "Bash()"]}"#,
        ),
        // Two object shapes read side by side (children shared between matcher copies).
        (
            r#"{"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array"}}}]}"#,
            r#"{"b": [1, 2.5, {"c": [true]}], "a": "x"}"#,
        ),
        // A tagged union with an open branch, its tag read last: inside the tag, which shapes
        // go on depends on the content, and the tokens past the closing quote are decided per
        // outcome of the close (plain, enum and length-counted strings side by side).
        (
            r#"{"type": "object", "additionalProperties": {"type": "object", "required": ["type"], "anyOf": [{"properties": {"type": {"const": "dapr.v0"}, "n": {"type": "integer"}}, "additionalProperties": false}, {"properties": {"type": {"enum": ["dapr.component", "dapr.x"]}, "s": {"type": "string"}}, "required": ["s"], "additionalProperties": false}, {"properties": {"type": {"type": "string", "maxLength": 300}}, "propertyNames": {"maxLength": 4}}]}}"#,
            r#"{"a": {"n": 1, "type": "dapr.v0"}, "b": {"s": "q", "type": "dapr.x"}, "c": {"type": "dapr.\"q\"", "z": [1]}, "d": {"s": "", "type": "dapr.component"}}"#,
        ),
        // Required names that only a pattern admits (every key of that pattern is required),
        // under `items`, and beside `properties` with `additionalProperties: false`.
        (
            r#"{"type": "array", "items": {"type": "object", "patternProperties": {"^(consumer|access_token)_(key|secret)$": {"type": "string", "minLength": 1}}, "required": ["consumer_key", "consumer_secret", "access_token_key", "access_token_secret"]}}"#,
            r#"[{"consumer_key": "ck", "consumer_secret": "cs", "access_token_key": "ak", "access_token_secret": "as"}, {"access_token_secret": "x", "access_token_key": "y", "consumer_secret": "z", "consumer_key": "w", "note": null}]"#,
        ),
        (
            r#"{"type": "object", "properties": {"options": {"type": "object", "properties": {"mode": {"enum": ["on", "off"]}}, "patternProperties": {"^bridge_(start|end)$": {"type": "integer", "minimum": 0}}, "additionalProperties": false, "required": ["bridge_start", "bridge_end"]}}, "required": ["options"]}"#,
            r#"{"options": {"mode": "on", "bridge_end": 200, "bridge_start": 10}}"#,
        ),
        // `format: "regex"` strings: plain tokens between a pattern's tokens and inside classes
        // are admitted as one set, the others walked with the pattern reader (groups, classes
        // with ranges, escapes in both spellings, references, named groups).
        (
            r#"{"type": "object", "properties": {"re": {"type": "string", "format": "regex"}, "n": {"type": "integer"}}}"#,
            r#"{"re": "^[a-z0-9_-]+(\\.[a-z]{2,})*$ and (?:more|less)", "n": 1}"#,
        ),
        (
            r#"{"type": "array", "items": {"type": "string", "format": "regex", "minLength": 3}}"#,
            r#"["(?<year>\\d{4})-\\k<year>", "[^\\]x-z\u002d]+|\u0041", "(a)(b)\\2 \"q\"", "é.*ü"]"#,
        ),
        // Beside every string, the pattern adds nothing; beside a constant, or compared with
        // other items, it is read with the whole matcher.
        (
            r#"{"type": "object", "properties": {"author": {"anyOf": [{"type": "string", "format": "regex"}, {"type": "string"}]}}}"#,
            r#"{"author": "John (x"}"#,
        ),
        (
            r#"{"type": "array", "items": {"anyOf": [{"type": "string", "format": "regex"}, {"const": "ok("}]}, "uniqueItems": true}"#,
            r#"["a|b", "ok(", "[x-y]+"]"#,
        ),
        // Named keys under `required` and `maxProperties` (the key options of a track).
        (
            r#"{"type": "object", "properties": {"name": {"type": "string"}, "nick": {"type": "string"}, "n": {"type": "integer"}}, "required": ["n"], "maxProperties": 2}"#,
            r#"{"nick": "x", "n": 1}"#,
        ),
    ];

    #[test]
    fn structured_masks_equal_reference_masks_on_gpt2_and_mistral() {
        for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
            let vocabulary = load(name);
            for &(schema, text) in STRUCTURED {
                let bound = bind(schema, &vocabulary, BindPolicy::Adaptive);
                assert_eq!(bound.executable().backend_name(), "structured");
                assert!(walk_and_compare(&bound, text.as_bytes()) > 0);
            }
        }
    }

    /// Strings with a length bound too large for an automaton among a pattern's or format's
    /// strings: the counter runs beside the automaton. Each instance comes within a token's
    /// length of the bound, where the length is checked token by token, and each schema
    /// refuses a string one code point longer.
    #[test]
    fn counted_strings_among_patterns_equal_reference_masks() {
        let words: Vec<String> = (0..29).map(|i| format!("w{}", "é".repeat(i % 7 + 2))).collect();
        let words = words.join(" ");
        // `words`, then a 30th word of `\u0041`, an escaped backslash, `u0041` and b's, `length`
        // code points in all.
        let sentence = |length: usize| {
            let b = length - words.chars().count() - 8;
            format!(r#"{{"s": "{words} \u0041\\u0041{}"}}"#, "b".repeat(b))
        };
        let letters = |n: usize| "loremipsumdolorsitamet".chars().cycle().take(n).collect::<String>();
        // (schema, instance, one too long, a prefix already too long to complete)
        let cases: Vec<(&str, String, String, String)> = vec![
            // Up to 30 words in at most 300 characters.
            (
                r#"{"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?:\\S+\\s+){0,29}\\S+$", "maxLength": 300}}}"#,
                sentence(299),
                sentence(301),
                sentence(301).trim_end_matches("\"}").to_string(),
            ),
            // A format beside another string, and a minimum the automaton takes.
            (
                r#"{"type": "array", "items": {"anyOf": [{"type": "string", "format": "email", "minLength": 5, "maxLength": 270}, {"const": "none"}]}}"#,
                format!(r#"["none", "a@b.c", "{}@example.com"]"#, "x".repeat(270 - 12)),
                format!(r#"["{}@example.com"]"#, "x".repeat(270 - 11)),
                format!(r#"["{}"#, "x".repeat(269)),
            ),
            // The bound and the pattern from two schemas; the pattern needs 5 more code points
            // after any letter.
            (
                r#"{"allOf": [{"type": "string", "maxLength": 400}, {"pattern": "^[a-z]+[0-9]{5}(-y)?$"}]}"#,
                format!(r#""{}\u0061\u0062\u0063{}12345-y""#, letters(385), letters(5)),
                format!(r#""{}12345-y""#, letters(394)),
                format!(r#""{}"#, letters(396)),
            ),
        ];
        for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
            let vocabulary = load(name);
            for (schema, text, too_long, dead) in &cases {
                let bound = bind(schema, &vocabulary, BindPolicy::Adaptive);
                assert_eq!(bound.executable().backend_name(), "structured");
                assert!(walk_and_compare(&bound, text.as_bytes()) > 0, "{schema}");
                assert!(bound.executable().accepts(text.as_bytes()), "{text}");
                assert!(!bound.executable().accepts(too_long.as_bytes()), "{too_long}");
                let live = |prefix: &str| bound.executable().start_matcher().feed(prefix.as_bytes());
                assert!(live(&dead[..dead.len() - 1]) && !live(dead), "{dead}");
            }
        }
    }

    /// Plain strings within short length bounds, which the structured arm counts beside every
    /// string instead of unrolling (except where keys or unique items read their automaton):
    /// values, items, a union of two ranges, `propertyNames`, `uniqueItems`, an `if` probe.
    /// Each instance meets its bounds exactly, escapes and multi-byte code points included,
    /// and each schema refuses one code point more.
    #[test]
    fn short_length_bounds_on_the_structured_arm_equal_reference_masks() {
        // (schema, instance, one too long, a prefix already too long to complete)
        let cases: Vec<(&str, &str, &str, &str)> = vec![
            (
                r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "tag": {"type": "string", "minLength": 2, "maxLength": 5}, "n": {"type": "integer", "minimum": 0}}}"#,
                r#"{"name": "h\u00e9llo w\nrlé!", "tag": "éééab", "n": 3}"#,
                r#"{"name": "h\u00e9llo w\nrlé!?"}"#,
                r#"{"name": "abcdefghijklm"#,
            ),
            (
                r#"{"type": "array", "items": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "string", "minLength": 5, "maxLength": 6}, {"type": "integer", "minimum": 3}]}}"#,
                r#"["a", "", "abcde", "ab\"def", 7]"#,
                r#"["abc"]"#,
                r#"["abcdefg"#,
            ),
            (
                r#"{"type": "object", "propertyNames": {"maxLength": 4}, "additionalProperties": {"type": "array", "uniqueItems": true, "items": {"type": "string", "maxLength": 3}}, "minProperties": 1}"#,
                r#"{"abcd": ["ab", "c", "déf"], "é": []}"#,
                r#"{"abcde": []}"#,
                r#"{"abcde"#,
            ),
            (
                r#"{"type": "object", "properties": {"k": {"type": "string", "maxLength": 8}, "x": {"type": "integer", "minimum": 1}}, "if": {"properties": {"k": {"maxLength": 2}}}, "then": {"required": ["x"]}}"#,
                r#"{"k": "ab", "x": 1}"#,
                r#"{"k": "abcdefghi"}"#,
                r#"{"k": "abcdefghi"#,
            ),
        ];
        for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
            let vocabulary = load(name);
            for (schema, text, too_long, dead) in &cases {
                let bound = bind(schema, &vocabulary, BindPolicy::Adaptive);
                assert_eq!(bound.executable().backend_name(), "structured", "{schema}");
                assert!(walk_and_compare(&bound, text.as_bytes()) > 0, "{schema}");
                assert!(!bound.executable().accepts(too_long.as_bytes()), "{too_long}");
                let live = |prefix: &str| bound.executable().start_matcher().feed(prefix.as_bytes());
                assert!(live(&dead[..dead.len() - 1]) && !live(dead), "{dead}");
            }
        }
    }

    #[test]
    fn fast_masks_equal_reference_masks_on_gpt2_and_mistral() {
        for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
            let vocabulary = load(name);
            for (policy, instances) in [(BindPolicy::Eager, &INSTANCES[..4]), (BindPolicy::Lazy, &INSTANCES[2..])] {
                for &(schema, text) in instances {
                    let bound = bind(SCHEMAS[schema], &vocabulary, policy);
                    let steps = walk_and_compare(&bound, text.as_bytes());
                    assert!(steps > 0);
                }
            }
        }
    }
}

#[test]
fn shared_objects_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<maskforge_core::SchemaProgram>();
    assert_send_sync::<BoundSchema>();
    assert_send_sync::<CompiledVocabulary>();
    assert_send_sync::<maskforge_core::Session>();
    assert_send_sync::<Compiler>();
}

#[test]
fn one_bound_schema_serves_threads() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let bound = bind(SCHEMAS[0], &vocabulary, BindPolicy::Lazy);
    std::thread::scope(|scope| {
        for &(schema, text) in INSTANCES.iter().filter(|(s, _)| *s == 0) {
            let bound = bound.clone();
            assert_eq!(schema, 0);
            scope.spawn(move || walk_and_compare(&bound, text.as_bytes()));
        }
    });
}

#[test]
fn mask_cost_names_the_route_and_leaves_the_session_alone() {
    let vocabulary = CompiledVocabulary::try_from(Arc::new(small_vocabulary())).unwrap();
    let compiler = Compiler::without_cache();
    let mask_of = |session: &maskforge_core::Session| {
        let mut mask = vec![0u32; vocabulary.mask_word_count()];
        session.write_mask(&mut mask).unwrap();
        mask
    };
    let byte = |b: u8| u32::from(b);

    // A regular schema copies a row: nothing is walked.
    let regular = compiler.compile_json_schema(SCHEMAS[1]).unwrap().bind(&vocabulary).unwrap();
    let session = regular.start_session().unwrap();
    assert_eq!(session.mask_cost().route, MaskRoute::Row);
    assert_eq!(session.mask_cost().trie_steps, 0);

    // The structured arm walks the trie at structure, and inside an unconstrained string walks
    // only the tokens that close it.
    let structured =
        compiler.compile_json_schema(r#"{"type": "array", "items": {"type": "string"}, "uniqueItems": true}"#).unwrap();
    let bound = structured.bind(&vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    session.advance(byte(b'[')).unwrap();
    let before = mask_of(&session);
    let at_structure = session.mask_cost();
    assert_eq!(at_structure.route, MaskRoute::TrieWalk);
    assert!(at_structure.trie_steps > 0);
    assert_eq!(mask_of(&session), before, "mask_cost changed the session");
    session.advance(byte(b'"')).unwrap();
    let in_string = session.mask_cost();
    assert_eq!(in_string.route, MaskRoute::StringRows);
    assert!(in_string.trie_steps < at_structure.trie_steps, "{in_string:?} vs {at_structure:?}");
    for b in *b"\"]" {
        session.advance(byte(b)).unwrap();
    }
    session.advance(vocabulary.vocabulary().eos_token_ids()[0]).unwrap();
    assert_eq!(session.mask_cost().route, MaskRoute::Finished);
}
