//! Raw-text constraints (`compile_regex`, `compile_choice`) and `compile_json_object`: their
//! languages, their diagnostics, and their masks against the reference route on real
//! tokenizers, bit for bit at every step of texts walked token by token.

use std::sync::Arc;

use maskforge_core::low_level::reference_mask;
use maskforge_core::mask::{allowed_ids, get_bit};
use maskforge_core::{
    BoundSchema, CompiledVocabulary, Compiler, CompilerOptions, DiagnosticCode, Output, SchemaProgram,
    TokenizerJsonOptions, Vocabulary,
};

fn load(name: &str) -> CompiledVocabulary {
    let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

fn regex(pattern: &str) -> SchemaProgram {
    Compiler::without_cache().compile_regex(pattern).unwrap()
}

/// (pattern, texts it matches as a whole, texts it does not).
const REGEXES: &[(&str, &[&str], &[&str])] = &[
    (r"\d{3}-\d{4}", &["555-1234"], &["555-12345", " 555-1234", "5551234", "555-1234\n"]),
    (r"(yes|no)!?", &["yes", "no!", "no"], &["yes!!", "", "Yes"]),
    (r"[A-Z][a-z]+( [A-Z][a-z]+)*", &["Ada Lovelace", "Ada"], &["ada", "Ada ", "Ada  Lovelace"]),
    (r"\s+x", &[" x", "\n\tx"], &["x", " x "]),
    (r"^a|b$", &["a", "b"], &["ab", ""]),
    (r"(?=.*\d)[a-z\d]{3,5}", &["ab1", "1234"], &["abc", "ab", "abcdef1"]),
    (r"\p{L}+ 😀", &["été 😀", "Σ 😀"], &["1 😀", "été"]),
    (r"\\u[0-9a-f]{4}", &[r"\u00e9"], &["é", r"\u00E9"]),
    (r"", &[""], &["a"]),
];

#[test]
fn a_regex_matches_the_whole_text() {
    for &(pattern, matching, other) in REGEXES {
        let program = regex(pattern);
        assert_eq!(program.executable().output(), Output::Text);
        for text in matching {
            assert!(program.executable().accepts(text.as_bytes()), "{pattern:?} should match {text:?}");
        }
        for text in other {
            assert!(!program.executable().accepts(text.as_bytes()), "{pattern:?} should not match {text:?}");
        }
    }
}

#[test]
fn a_choice_is_exactly_one_of_its_strings() {
    let program = Compiler::without_cache().compile_choice(&["yes", "no", "not sure", "", "é"]).unwrap();
    let accepts = |t: &str| program.executable().accepts(t.as_bytes());
    assert!(["yes", "no", "not sure", "", "é"].iter().all(|t| accepts(t)));
    assert!(["ye", "yes ", "\"yes\"", "not", "e"].iter().all(|t| !accepts(t)));
    // Characters JSON would escape are plain text here.
    let quoted = Compiler::without_cache().compile_choice(&["a\"b", "c\\d"]).unwrap();
    assert!(quoted.executable().accepts(b"a\"b") && quoted.executable().accepts(b"c\\d"));
}

#[test]
fn json_object_is_any_object() {
    let program = Compiler::without_cache().compile_json_object().unwrap();
    assert_eq!(program.executable().output(), Output::JsonValue);
    assert!(program.executable().accepts(br#"{"a": [1, {"b": null}]}"#));
    assert!(program.executable().accepts(b"{}"));
    assert!(!program.executable().accepts(b"[]") && !program.executable().accepts(b"1"));
    // Under the compiler's policies: objects closed, the object declares no key.
    let closed = Compiler::new(CompilerOptions::default().with_closed_objects(true)).compile_json_object().unwrap();
    assert!(closed.executable().accepts(b"{}") && !closed.executable().accepts(br#"{"a": 1}"#));
}

#[test]
fn bad_regexes_and_choices_are_typed_diagnostics() {
    let compiler = Compiler::without_cache();
    for (pattern, code) in [
        ("a)(b", DiagnosticCode::UnsupportedPattern),
        ("(a", DiagnosticCode::UnsupportedPattern),
        (r"(a)\1", DiagnosticCode::UnsupportedPattern),
        ("(?<=a)b", DiagnosticCode::UnsupportedPattern),
        ("a$b", DiagnosticCode::UnsatisfiableSchema),
        ("[^\\s\\S]", DiagnosticCode::UnsatisfiableSchema),
        ("a{1000000}", DiagnosticCode::ResourceLimit),
    ] {
        let error = compiler.compile_regex(pattern).unwrap_err();
        let diagnostic = error.diagnostic().unwrap_or_else(|| panic!("{pattern:?}: {error}"));
        assert_eq!((diagnostic.code, diagnostic.keyword.as_deref()), (code, Some("regex")), "{pattern:?}");
    }
    let error = compiler.compile_choice::<&str>(&[]).unwrap_err();
    let diagnostic = error.diagnostic().unwrap();
    assert_eq!(
        (diagnostic.code, diagnostic.keyword.as_deref()),
        (DiagnosticCode::InvalidKeywordValue, Some("choices"))
    );
}

#[test]
fn regex_and_choice_programs_are_cached_apart_from_schemas() {
    let compiler = Compiler::new(Default::default());
    let a = compiler.compile_regex("abc").unwrap();
    let b = compiler.compile_regex("abc").unwrap();
    assert!(Arc::ptr_eq(a.executable(), b.executable()));
    let choice = compiler.compile_choice(&["abc"]).unwrap();
    assert!(!Arc::ptr_eq(a.executable(), choice.executable()));
    // The regex `"abc"` and the schema `{"const": "abc"}` are different languages.
    let schema = compiler.compile_json_schema(r#"{"const": "abc"}"#).unwrap();
    assert!(schema.executable().accepts(b"\"abc\"") && !a.executable().accepts(b"\"abc\""));
}

/// Walks `text` with the longest allowed token that spells the next bytes, comparing the mask
/// with the reference route before every step and at the end.
fn walk_and_compare(bound: &BoundSchema, text: &str, label: &str) {
    let (vocabulary, executable) = (bound.vocabulary(), bound.executable());
    let text = text.as_bytes();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    let mut at = 0;
    loop {
        session.write_mask(&mut mask).unwrap();
        let reference = reference_mask(executable, vocabulary, &text[..at]).expect("an admitted prefix is live");
        assert_eq!(mask, reference, "{label}: mask after {:?}", String::from_utf8_lossy(&text[..at]));
        // Special tokens are no text: never admitted.
        for id in allowed_ids(&mask) {
            assert!(vocabulary.token_bytes(id).is_some() || vocabulary.is_eos(id), "{label}: special token {id}");
        }
        if at == text.len() {
            break;
        }
        let (id, bytes) = allowed_ids(&mask)
            .into_iter()
            .filter_map(|id| vocabulary.token_bytes(id).map(|b| (id, b)))
            .filter(|(_, b)| text[at..].starts_with(b))
            .max_by_key(|(_, b)| b.len())
            .unwrap_or_else(|| {
                panic!("{label}: no allowed token continues {:?}", String::from_utf8_lossy(&text[..at]))
            });
        session.advance(id).unwrap();
        at += bytes.len();
    }
    assert!(session.is_accepting(), "{label}: the whole text is accepted");
    assert!(vocabulary.eos_token_ids().iter().all(|&eos| get_bit(&mask, eos)), "{label}: EOS where complete");
}

#[test]
fn masks_equal_the_reference_route_on_gpt2_and_mistral() {
    for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
        let vocabulary = load(name);
        for &(pattern, matching, _) in REGEXES {
            let bound = regex(pattern).bind(&vocabulary).unwrap();
            for text in matching {
                walk_and_compare(&bound, text, &format!("{name} regex {pattern:?}"));
            }
        }
        let choices = ["Argentina", "Australia", "Austria", "a\"b", " spaced out ", "é😀"];
        let bound = Compiler::without_cache().compile_choice(&choices).unwrap().bind(&vocabulary).unwrap();
        for text in choices {
            walk_and_compare(&bound, text, &format!("{name} choice"));
        }
    }
}

#[test]
fn raw_text_is_done_only_where_nothing_can_follow() {
    let vocabulary = load("gpt2.tokenizer.json");
    let tokens = |text: &str| -> Vec<u32> {
        let id = (0..vocabulary.vocabulary().mask_vocab_size() as u32)
            .find(|&id| vocabulary.vocabulary().token_bytes(id) == Some(text.as_bytes()))
            .unwrap();
        vec![id]
    };
    // `x` accepts but a space may follow: whitespace is text here, so the session is not done.
    let bound = regex("x *").bind(&vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    session.advance_many(&tokens("x")).unwrap();
    assert!(session.is_accepting() && !session.is_done());
    let bound = regex("x").bind(&vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    session.advance_many(&tokens("x")).unwrap();
    assert!(session.is_done());
    // Forced bytes are the text's own: no escape spelling counts as the same character.
    let bound = regex(r"a(b|\\u0062)c").bind(&vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    assert_eq!(session.forced_bytes(), b"a");
    session.advance_many(&tokens("a")).unwrap();
    assert_eq!(session.forced_bytes(), b"");
    let bound = regex("Hello, (world|there)").bind(&vocabulary).unwrap();
    assert_eq!(bound.start_session().unwrap().forced_bytes(), b"Hello, ");
}
