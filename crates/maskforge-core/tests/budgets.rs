//! The budgets that bound compile and bind work: past one, the work goes a slower exact way
//! (the structured arm, rows on first use) rather than stalling.

use maskforge_core::{BindPolicy, Compiler, CompilerOptions, SchemaResourceLimits};

/// A string enum of `n` values that share little (letters from a fixed pseudo-random
/// sequence), so its minimal automaton keeps several states per value.
fn string_enum(n: usize) -> String {
    let mut seed = 0x2545_f491_u64;
    let mut letter = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (b'a' + (seed >> 59) as u8 % 26) as char
    };
    let values: Vec<String> =
        (0..n).map(|i| format!("\"value-{i:04}-{}\"", (0..8).map(|_| letter()).collect::<String>())).collect();
    format!(r#"{{"enum": [{}]}}"#, values.join(", "))
}

fn options_with(limits: impl FnOnce(&mut SchemaResourceLimits)) -> CompilerOptions {
    let mut options = CompilerOptions::default();
    limits(&mut options.limits);
    options
}

#[test]
fn past_the_regular_budget_the_structured_arm_reads_the_schema() {
    let schema = string_enum(30);
    let regular = Compiler::new(CompilerOptions::default()).compile_json_schema(&schema).unwrap();
    assert_eq!(regular.executable().backend_name(), "regular");
    let states = regular.executable().state_count();
    let tight = options_with(|limits| limits.max_regular_states = states / 2);
    let structured = Compiler::new(tight).compile_json_schema(&schema).unwrap();
    assert_eq!(structured.executable().backend_name(), "structured");
    let admitted: Vec<&str> = schema.trim_start_matches(r#"{"enum": ["#).trim_end_matches("]}").split(", ").collect();
    let escaped = admitted[0].replacen("value", "\\u0076alue", 1);
    for text in [admitted[0], admitted[29], escaped.as_str(), r#""value-0000""#, r#""value-""#] {
        assert_eq!(
            structured.executable().accepts(text.as_bytes()),
            regular.executable().accepts(text.as_bytes()),
            "{text}"
        );
    }
}

#[test]
fn the_regular_budget_is_part_of_what_a_program_was_compiled_with() {
    let schema = string_enum(30);
    let tight = options_with(|limits| limits.max_regular_states = 100);
    let program = Compiler::new(tight.clone()).compile_json_schema(&schema).unwrap();
    let loaded = Compiler::new(tight).load_program(&program.to_bytes()).unwrap();
    assert_eq!(loaded.executable().backend_name(), "structured");
}

#[cfg(feature = "tokenizer-processing")]
#[test]
fn adaptive_binding_is_eager_only_within_the_table_budget() {
    use std::sync::Arc;

    use maskforge_core::{CompiledVocabulary, TokenizerJsonOptions, Vocabulary};

    let path = format!("{}/../../tests/data/tokenizers/gpt2.tokenizer.json", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    let vocabulary = CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap();
    let compiler = Compiler::new(CompilerOptions::default());
    let row_bytes = vocabulary.mask_word_count() * 4;
    let default_budget = CompilerOptions::default().eager_table_bytes;
    for (schema, eager) in [(r#"{"type": "boolean"}"#.to_owned(), true), (string_enum(30), false)] {
        let program = compiler.compile_json_schema(&schema).unwrap();
        let table = program.executable().state_count() * row_bytes;
        assert_eq!(table <= default_budget, eager, "the case is on the intended side of the budget");
        let bound = program.bind(&vocabulary).unwrap();
        let expected = if eager { BindPolicy::Eager } else { BindPolicy::Lazy };
        assert_eq!(bound.effective_policy(), expected);
        // Lazy rows are computed on first use: none yet beyond what a session asked.
        let (computed, _) = bound.row_stats();
        if !eager {
            assert_eq!(computed, 0);
        }
    }
}

#[test]
fn past_the_length_product_budget_the_bound_is_counted_beside_the_pattern() {
    let schema = r#"{"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "minLength": 3, "maxLength": 40}"#;
    let unrolled = Compiler::new(CompilerOptions::default()).compile_json_schema(schema).unwrap();
    assert_eq!(unrolled.executable().backend_name(), "regular");
    let tight = options_with(|limits| limits.max_length_product_states = 10);
    let counted = Compiler::new(tight).compile_json_schema(schema).unwrap();
    assert_eq!(counted.executable().backend_name(), "structured");
    let word = |n: usize| "abc-".chars().cycle().take(n).collect::<String>();
    let mut texts: Vec<String> = (0..=42).map(|n| format!("\"{}\"", word(n))).collect();
    texts.extend([r#""a\u0062c""#.to_owned(), format!("\"{}\\u0061\"", word(39)), format!("\"{}\\u0061\"", word(40))]);
    for text in &texts {
        assert_eq!(
            counted.executable().accepts(text.as_bytes()),
            unrolled.executable().accepts(text.as_bytes()),
            "{text}"
        );
        // Every prefix is live on both or on neither.
        for end in 1..text.len() {
            let prefix = &text.as_bytes()[..end];
            assert_eq!(
                counted.executable().start_matcher().feed(prefix),
                unrolled.executable().start_matcher().feed(prefix),
                "{}",
                String::from_utf8_lossy(prefix)
            );
        }
    }
}
