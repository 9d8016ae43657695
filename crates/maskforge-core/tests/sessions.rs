//! Sessions that rewind, fork and look ahead: rollback, fork, validate_tokens, advance_many and
//! reset, each compared with a fresh session replaying the same committed tokens, on real
//! tokenizers and instances of both arms.
#![cfg(feature = "tokenizer-processing")]

use std::sync::Arc;

use maskforge_core::mask::allowed_ids;
use maskforge_core::{
    BoundSchema, CompiledVocabulary, Compiler, Error, RejectReason, Session, SessionOptions, TokenizerJsonOptions,
    Vocabulary,
};
use proptest::prelude::*;

/// (schema, instance): regular and structured schemas, strings, numbers, nesting.
const CASES: &[(&str, &str)] = &[
    (
        r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}}, "required": ["name", "ok"], "additionalProperties": false}"#,
        r#"{"name": "Ada \"L\" é", "ok": true}"#,
    ),
    (
        r#"{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[A-Z]"}, "age": {"type": "integer", "minimum": 0}}, "required": ["name"]}"#,
        r#"{"name": "Ada Lovelace 😀", "age": 3.6e1, "x": [true, {"y": null}]}"#,
    ),
    (
        r##"{"$defs": {"n": {"type": "object", "properties": {"v": {"type": "number", "maximum": 1e2}, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["v"]}}, "$ref": "#/$defs/n"}"##,
        "{\"kids\": [{\"v\": -1.5}, {\"v\": 100, \"kids\": []}], \"v\": 0.25}",
    ),
    (r#"{"type": "array", "items": {"enum": ["red", "green"]}, "uniqueItems": true}"#, r#"["green", "red"]"#),
    // Strings on one automaton, one after another (recursion keeps it on the structured arm):
    // what a session worked out inside one must not serve the next.
    (
        r##"{"$defs": {"s": {"type": "string", "pattern": "^[a-z ]+$"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}, "kids": {"type": "array", "items": {"$ref": "#"}}}, "required": ["b"], "additionalProperties": false}"##,
        r#"{"a": "ab", "b": "ab", "kids": [{"b": "ab cd"}]}"#,
    ),
];

/// (template, text): templates whose JSON parts run on the structured arm (holes in the
/// template's automaton), for the interleavings below.
const TEMPLATE_CASES: &[(&str, &str)] = &[(
    r#"{"tags": [{"begin": "<tool_call>\n", "content": {"json": {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}, "required": ["n"]}, "max_whitespace": 1}, "end": "\n</tool_call>"}], "triggers": ["<tool_call>"]}"#,
    "Hi <tool_call>\n{\"n\": 12, \"s\": \"a\\\"b\", \"x\": [1]}\n</tool_call> and <tool_call>\n{\"n\": -1.0e1} \n</tool_call>",
)];

/// The program of case `case`: `CASES` first, then `TEMPLATE_CASES`; and its text.
fn program_case(case: usize, vocabulary: &CompiledVocabulary) -> (BoundSchema, &'static str) {
    match CASES.get(case) {
        Some((schema, text)) => (bind(schema, vocabulary), text),
        None => {
            let (template, text) = TEMPLATE_CASES[case - CASES.len()];
            let program = Compiler::without_cache().compile_template(template).unwrap();
            assert_eq!(program.executable().backend_name(), "composite");
            (program.bind(vocabulary).unwrap(), text)
        }
    }
}

fn load(name: &str) -> CompiledVocabulary {
    let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

fn bind(schema: &str, vocabulary: &CompiledVocabulary) -> BoundSchema {
    Compiler::without_cache().compile_json_schema(schema).unwrap().bind(vocabulary).unwrap()
}

/// The tokens of `text` (longest allowed token at each step), then EOS twice (the second is
/// batch padding, a no-op that still counts as committed).
fn tokens_of(bound: &BoundSchema, text: &str) -> Vec<u32> {
    let vocabulary = bound.vocabulary();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    let (text, mut at, mut tokens) = (text.as_bytes(), 0, Vec::new());
    while at < text.len() {
        session.write_mask(&mut mask).unwrap();
        let (id, bytes) = allowed_ids(&mask)
            .into_iter()
            .filter_map(|id| vocabulary.token_bytes(id).map(|b| (id, b)))
            .filter(|(_, b)| text[at..].starts_with(b))
            .max_by_key(|(_, b)| b.len())
            .expect("an allowed token continues the instance");
        session.advance(id).unwrap();
        tokens.push(id);
        at += bytes.len();
    }
    let eos = vocabulary.eos_token_ids()[0];
    tokens.extend([eos, eos]);
    tokens
}

/// The bound schema of `CASES[case]` over a vendored tokenizer, its mask width and the
/// instance's tokens.
fn setup(tokenizer: &str, case: usize) -> (BoundSchema, usize, Vec<u32>) {
    let bound = bind(CASES[case].0, &load(tokenizer));
    let tokens = tokens_of(&bound, CASES[case].1);
    let words = bound.mask_word_count();
    (bound, words, tokens)
}

/// What a session shows: its mask, `is_accepting` and `is_finished`.
fn observe(session: &Session, words: usize) -> (Vec<u32>, bool, bool) {
    let mut mask = vec![0u32; words];
    session.write_mask(&mut mask).unwrap();
    (mask, session.is_accepting(), session.is_finished())
}

/// A fresh session that committed `tokens`.
fn replay(bound: &BoundSchema, tokens: &[u32]) -> Session {
    let mut session = bound.start_session().unwrap();
    for &t in tokens {
        session.advance(t).unwrap();
    }
    session
}

#[test]
fn advancing_k_tokens_then_rolling_back_k_restores_every_mask_on_gpt2_and_mistral() {
    for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
        let vocabulary = load(name);
        for &(schema, text) in CASES {
            let bound = bind(schema, &vocabulary);
            let words = bound.mask_word_count();
            let tokens = tokens_of(&bound, text);
            let mut session = bound.start_session().unwrap();
            let mut seen = vec![observe(&session, words)];
            for (i, &token) in tokens.iter().enumerate() {
                for k in 1..=tokens.len() - i {
                    let before = observe(&session, words);
                    session.advance_many(&tokens[i..i + k]).unwrap();
                    // A mask there too, so that what it works out is on the session when it rolls back.
                    let ahead = observe(&replay(&bound, &tokens[..i + k]), words);
                    assert_eq!(observe(&session, words), ahead, "{name} {schema}: +{k} at token {i}");
                    session.rollback(k).unwrap();
                    assert_eq!(observe(&session, words), before, "{name} {schema}: +{k} -{k} at token {i}");
                }
                session.advance(token).unwrap();
                seen.push(observe(&session, words));
            }
            assert!(session.is_finished());
            // And back to the start, one token at a time, through EOS and the padding EOS.
            for i in (0..tokens.len()).rev() {
                session.rollback(1).unwrap();
                assert_eq!(observe(&session, words), seen[i], "{name} {schema}: back to token {i}");
            }
            assert_eq!(session.rollback_available(), 0);
        }
    }
}

#[test]
fn a_refused_rollback_or_draft_changes_nothing() {
    let (bound, words, tokens) = setup("gpt2.tokenizer.json", 1);
    let mut session = replay(&bound, &tokens[..5]);
    let before = observe(&session, words);
    assert_eq!(session.rollback(6), Err(Error::RollbackTooFar { requested: 6, available: 5 }));
    assert_eq!(observe(&session, words), before);
    // A draft whose third token leaves the language: nothing is committed, the index is named.
    let mut mask = vec![0u32; words];
    replay(&bound, &tokens[..7]).write_mask(&mut mask).unwrap();
    let refused = (0..bound.mask_vocab_size() as u32).find(|&t| !maskforge_core::mask::get_bit(&mask, t)).unwrap();
    let draft = [tokens[5], tokens[6], refused, tokens[7]];
    assert_eq!(session.validate_tokens(&draft), 2);
    assert!(
        matches!(session.advance_many(&draft), Err(Error::DraftRejected { index: 2, token_id, .. }) if token_id == refused)
    );
    assert_eq!(observe(&session, words), before);
    assert_eq!(session.rollback_available(), 5);
    let out_of_range = bound.mask_vocab_size() as u32;
    assert_eq!(session.validate_tokens(&[tokens[5], out_of_range]), 1);
    assert!(matches!(
        session.advance_many(&[out_of_range]),
        Err(Error::DraftRejected { index: 0, reason: RejectReason::OutOfRange, .. })
    ));
    // A whole draft, EOS included, is accepted and committed at once.
    assert_eq!(session.validate_tokens(&tokens[5..]), tokens.len() - 5);
    session.advance_many(&tokens[5..]).unwrap();
    assert!(session.is_finished() && session.is_terminated());
    assert_eq!(observe(&session, words), observe(&replay(&bound, &tokens), words));
}

#[test]
fn max_rollback_tokens_bounds_the_history() {
    let (bound, words, tokens) = setup("gpt2.tokenizer.json", 2);
    assert!(tokens.len() > 12);
    for max in [0, 1, 3, 5] {
        let mut session =
            bound.start_session_with(SessionOptions::default().with_max_rollback_tokens(Some(max))).unwrap();
        for (i, &t) in tokens.iter().enumerate() {
            session.advance(t).unwrap();
            assert_eq!(session.rollback_available(), (i + 1).min(max), "max {max} after {} tokens", i + 1);
        }
        let refused = session.rollback(max + 1);
        assert_eq!(refused, Err(Error::RollbackTooFar { requested: max + 1, available: max }));
        session.rollback(max).unwrap();
        let expected = replay(&bound, &tokens[..tokens.len() - max]);
        assert_eq!(observe(&session, words), observe(&expected, words), "max {max}");
    }
}

#[test]
fn forks_are_independent_and_run_on_other_threads() {
    let (bound, words, tokens) = setup("mistral-v3.tokenizer.json", 1);
    let middle = tokens.len() / 2;
    let mut original = replay(&bound, &tokens[..middle]);
    let forks: Vec<Session> = (0..3).map(|_| original.fork()).collect();
    // The original moves on and back; the forks do not see it.
    original.advance_many(&tokens[middle..]).unwrap();
    original.rollback(tokens.len() - 2).unwrap();
    let results = std::thread::scope(|scope| {
        let workers: Vec<_> = forks
            .into_iter()
            .enumerate()
            .map(|(i, mut fork)| {
                let tokens = &tokens;
                scope.spawn(move || {
                    // Each fork keeps the shared past: it can roll back into it, and go on.
                    fork.rollback(i).unwrap();
                    fork.advance_many(&tokens[middle - i..]).unwrap();
                    observe(&fork, words)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
    });
    let complete = observe(&replay(&bound, &tokens), words);
    assert!(results.iter().all(|r| *r == complete));
    assert_eq!(observe(&original, words), observe(&replay(&bound, &tokens[..2]), words));
}

#[test]
fn reset_goes_back_to_the_start() {
    let (bound, words, tokens) = setup("gpt2.tokenizer.json", 0);
    let mut session = replay(&bound, &tokens);
    session.reset();
    assert_eq!(session.rollback_available(), 0);
    assert_eq!(observe(&session, words), observe(&bound.start_session().unwrap(), words));
    session.advance_many(&tokens).unwrap();
    assert!(session.is_finished());
}

/// One operation of the property test.
#[derive(Debug, Clone)]
enum Op {
    /// Commit the next `n` tokens of the instance one by one.
    Advance(usize),
    /// Commit the next `n` tokens at once.
    AdvanceMany(usize),
    Rollback(usize),
    /// Carry on with a fork, dropping the session it came from (or not).
    Fork {
        keep_original: bool,
    },
    /// Validate the next `n` tokens with a refused one after them.
    Validate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1..4usize).prop_map(Op::Advance),
        (1..6usize).prop_map(Op::AdvanceMany),
        (0..6usize).prop_map(Op::Rollback),
        any::<bool>().prop_map(|keep_original| Op::Fork { keep_original }),
        (0..5usize).prop_map(Op::Validate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(28), ..ProptestConfig::default() })]

    /// Random interleavings of every operation: after each one, the session shows what a fresh
    /// session replaying its committed tokens shows.
    #[test]
    fn every_interleaving_matches_a_replay(case in 0..CASES.len() + TEMPLATE_CASES.len(), ops in proptest::collection::vec(op(), 1..24)) {
        thread_local! {
            static VOCABULARY: CompiledVocabulary = load("gpt2.tokenizer.json");
        }
        VOCABULARY.with(|vocabulary| {
            let (bound, text) = program_case(case, vocabulary);
            let words = bound.mask_word_count();
            let tokens = tokens_of(&bound, text);
            let mut session = bound.start_session().unwrap();
            let mut other = None;
            let mut committed = 0usize;
            for op in ops {
                let left = tokens.len() - committed;
                match op {
                    Op::Advance(n) => {
                        for &t in &tokens[committed..committed + n.min(left)] {
                            session.advance(t).unwrap();
                        }
                        committed += n.min(left);
                    }
                    Op::AdvanceMany(n) => {
                        session.advance_many(&tokens[committed..committed + n.min(left)]).unwrap();
                        committed += n.min(left);
                    }
                    Op::Rollback(n) => match session.rollback(n) {
                        Ok(()) => committed -= n,
                        Err(Error::RollbackTooFar { available, .. }) => {
                            prop_assert!(n > committed);
                            prop_assert_eq!(available, committed);
                        }
                        Err(other) => return Err(TestCaseError::fail(format!("{other}"))),
                    },
                    Op::Fork { keep_original } => {
                        let fork = session.fork();
                        other = keep_original.then(|| std::mem::replace(&mut session, fork)).or(other);
                    }
                    Op::Validate(n) => {
                        let mut draft = tokens[committed..committed + n.min(left)].to_vec();
                        draft.push(vocabulary.mask_vocab_size() as u32);
                        prop_assert_eq!(session.validate_tokens(&draft), n.min(left));
                    }
                }
                prop_assert_eq!(observe(&session, words), observe(&replay(&bound, &tokens[..committed]), words));
                prop_assert_eq!(session.rollback_available(), committed);
            }
            // A session left behind by a fork still stands where it was.
            if let Some(kept) = other {
                let at = kept.rollback_available();
                prop_assert_eq!(observe(&kept, words), observe(&replay(&bound, &tokens[..at]), words));
            }
            Ok(())
        })?;
    }
}

#[test]
fn batch_fills_write_each_sessions_mask_on_any_number_of_threads() {
    let gpt2 = load("gpt2.tokenizer.json");
    let (schema, text) = CASES[1];
    let bound = bind(schema, &gpt2);
    let words = bound.mask_word_count();
    let tokens = tokens_of(&bound, text);
    let sessions: Vec<Session> = (0..tokens.len()).map(|n| replay(&bound, &tokens[..n])).collect();
    let refs: Vec<&Session> = sessions.iter().collect();
    let expected: Vec<u32> = sessions.iter().flat_map(|s| observe(s, words).0).collect();
    for threads in [1, 2, 0] {
        let mut out = vec![7u32; expected.len() + 3];
        maskforge_core::fill_masks(&refs, &mut out, threads).unwrap();
        assert_eq!(&out[..expected.len()], &expected[..], "{threads} threads");
        assert_eq!(&out[expected.len()..], &[7, 7, 7], "words after the last row are left alone");
    }
    let mut short = vec![0u32; expected.len() - 1];
    assert!(matches!(maskforge_core::fill_masks(&refs, &mut short, 0), Err(Error::MaskBuffer { .. })));
    assert!(short.iter().all(|&w| w == 0));
    // A session of another vocabulary (another mask width) in the batch: refused, nothing written.
    let other = bind(schema, &load("mistral-v3.tokenizer.json")).start_session().unwrap();
    assert_ne!(other.mask_word_count(), words);
    let mixed = [refs[0], refs[1], &other];
    let mut out = vec![0u32; 3 * other.mask_word_count().max(words)];
    assert_eq!(maskforge_core::fill_masks(&mixed, &mut out, 0), Err(Error::BatchMismatch { index: 2 }));
    assert!(out.iter().all(|&w| w == 0));
}

#[test]
fn batch_advances_and_rollbacks_match_fresh_replays_on_gpt2_and_mistral() {
    use maskforge_core::{advance_batch, rollback_batch};
    for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
        let vocabulary = load(name);
        // One session per case, each on its own bound schema; rows that ran out go on with
        // padding EOS, as a serving batch does.
        let bounds: Vec<BoundSchema> = CASES.iter().map(|&(schema, _)| bind(schema, &vocabulary)).collect();
        let instances: Vec<Vec<u32>> = CASES.iter().zip(&bounds).map(|(&(_, text), b)| tokens_of(b, text)).collect();
        let eos = vocabulary.vocabulary().eos_token_ids()[0];
        let mut sessions: Vec<Session> = bounds.iter().map(|b| b.start_session().unwrap()).collect();
        let mut committed: Vec<Vec<u32>> = vec![Vec::new(); sessions.len()];
        let longest = instances.iter().map(Vec::len).max().unwrap();
        let check = |sessions: &[Session], committed: &[Vec<u32>], what: &str| {
            for (i, (session, tokens)) in sessions.iter().zip(committed).enumerate() {
                let words = bounds[i].mask_word_count();
                let expected = replay(&bounds[i], tokens);
                assert_eq!(observe(session, words), observe(&expected, words), "{name} case {i} {what}");
                assert_eq!(session.rollback_available(), tokens.len(), "{name} case {i} {what}");
            }
        };
        for step in 0..longest {
            let tokens: Vec<u32> = instances.iter().map(|t| t.get(step).copied().unwrap_or(eos)).collect();
            let mut batch: Vec<&mut Session> = sessions.iter_mut().collect();
            advance_batch(&mut batch, &tokens).unwrap();
            committed.iter_mut().zip(&tokens).for_each(|(c, &t)| c.push(t));
            check(&sessions, &committed, &format!("after step {step}"));
        }
        assert!(sessions.iter().all(Session::is_finished));
        // Back in uneven strides (a session standing still in each round), down to the start.
        let strides = [1, 3, 0, 2];
        for round in 0.. {
            if committed.iter().all(Vec::is_empty) {
                break;
            }
            let counts: Vec<usize> =
                committed.iter().enumerate().map(|(i, c)| strides[(i + round) % 4].min(c.len())).collect();
            let mut batch: Vec<&mut Session> = sessions.iter_mut().collect();
            rollback_batch(&mut batch, &counts).unwrap();
            committed.iter_mut().zip(&counts).for_each(|(c, &n)| c.truncate(c.len() - n));
            check(&sessions, &committed, &format!("rolled back {counts:?}"));
        }
    }
}

#[test]
fn a_refusal_in_the_middle_of_a_batch_changes_no_session() {
    use maskforge_core::{advance_batch, rollback_batch};
    let (bound, words, tokens) = setup("gpt2.tokenizer.json", 1);
    let mut sessions: Vec<Session> = [3, 5, 7, 9, tokens.len()].iter().map(|&n| replay(&bound, &tokens[..n])).collect();
    let before: Vec<_> = sessions.iter().map(|s| (observe(s, words), s.rollback_available())).collect();
    let unchanged = |sessions: &[Session], what: &str| {
        let now: Vec<_> = sessions.iter().map(|s| (observe(s, words), s.rollback_available())).collect();
        assert_eq!(now, before, "{what}");
    };
    let eos = bound.vocabulary().eos_token_ids()[0];
    let next = [tokens[3], tokens[5], tokens[7], tokens[9], eos];
    let mut mask = vec![0u32; words];
    sessions[2].write_mask(&mut mask).unwrap();
    let refused = (0..bound.mask_vocab_size() as u32).find(|&t| !maskforge_core::mask::get_bit(&mask, t)).unwrap();

    // Refused tokens at the start, in the middle and at the end; each is named by its index.
    for (index, token, reason) in [
        (0, bound.mask_vocab_size() as u32, Some(RejectReason::OutOfRange)),
        (2, refused, None),
        (4, tokens[0], Some(RejectReason::SessionFinished)),
    ] {
        let mut offered = next;
        offered[index] = token;
        let mut batch: Vec<&mut Session> = sessions.iter_mut().collect();
        match advance_batch(&mut batch, &offered) {
            Err(Error::BatchRejected { index: i, token_id, reason: r }) => {
                assert_eq!((i, token_id), (index, token));
                assert!(reason.is_none_or(|reason| reason == r), "{r:?}");
            }
            other => panic!("token {token} at {index}: {other:?}"),
        }
        unchanged(&sessions, &format!("refused token at {index}"));
    }
    let mut batch: Vec<&mut Session> = sessions.iter_mut().collect();
    let short = advance_batch(&mut batch, &next[..4]);
    assert_eq!(short, Err(Error::BatchLength { sessions: 5, given: 4, what: "tokens" }));
    let short = rollback_batch(&mut batch, &[1, 1]);
    assert_eq!(short, Err(Error::BatchLength { sessions: 5, given: 2, what: "counts" }));
    let too_far = rollback_batch(&mut batch, &[1, 1, 8, 1, 1]);
    assert_eq!(too_far, Err(Error::BatchRollbackTooFar { index: 2, requested: 8, available: 7 }));
    unchanged(&sessions, "refused lengths and rollbacks");

    // The same batch, accepted, moves every session; an empty batch is a no-op.
    let mut batch: Vec<&mut Session> = sessions.iter_mut().collect();
    advance_batch(&mut batch, &next).unwrap();
    advance_batch(&mut [], &[]).unwrap();
    rollback_batch(&mut [], &[]).unwrap();
    for ((session, n), token) in sessions.iter().zip([3, 5, 7, 9, tokens.len()]).zip(next) {
        let expected = replay(&bound, &[&tokens[..n], &[token]].concat());
        assert_eq!(observe(session, words), observe(&expected, words), "after {n} tokens and one more");
    }
}

/// Forced bytes, checked through masks over a vocabulary of the 256 single bytes: along the
/// forced text exactly one byte token is allowed at each step and EOS is not, and after it EOS
/// or a second byte is (the forced text is the longest).
#[test]
fn forced_bytes_are_what_every_continuation_starts_with() {
    use maskforge_core::{build_vocabulary, CompilerOptions};
    let bytes = build_vocabulary(256, (0..=255u8).map(|b| (u32::from(b), vec![b]))).unwrap();
    let vocabulary = CompiledVocabulary::try_from(Arc::new(bytes)).unwrap();
    let closed = r#"{"type": "object", "properties": {"name": {"type": "string"}, "ok": {"type": "boolean"}, "kind": {"const": "user"}}, "required": ["name", "ok", "kind"], "additionalProperties": false}"#;
    let cases = [
        (closed, r#"{"name": "x", "ok": true, "kind": "user"}"#, None),
        (closed, r#"{"kind":"user","name":"é","ok":false}"#, Some(0)),
        (CASES[1].0, CASES[1].1, None),
        (CASES[2].0, CASES[2].1, None),
        (r#"{"enum": ["alphabet", "alpine", 12.5]}"#, r#""alpine""#, None),
        (
            r#"{"type": "object", "properties": {"a": {"type": "integer"}, "description": {"type": "string"}}, "required": ["a", "description"], "additionalProperties": false}"#,
            r#"{"a":1,"description":"d"}"#,
            Some(0),
        ),
    ];
    let mut longest = 0;
    for (schema, text, whitespace) in cases {
        let options = CompilerOptions::default().with_max_json_whitespace(whitespace);
        let bound = Compiler::new(options).compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
        let words = bound.mask_word_count();
        let mut session = bound.start_session().unwrap();
        for &b in text.as_bytes() {
            let forced = session.forced_bytes();
            longest = longest.max(forced.len());
            let mut probe = session.fork();
            for &f in &forced {
                let (mask, accepting, _) = observe(&probe, words);
                // The forced byte, or it and a backslash that starts another spelling of it.
                let allowed = allowed_ids(&mask);
                let spelled = f != b'\\' && allowed.len() == 2 && allowed.contains(&u32::from(b'\\')) && {
                    let mut escaped = probe.fork();
                    escaped.advance_many(&format!("\\u{:04x}", f).bytes().map(u32::from).collect::<Vec<_>>()).is_ok()
                };
                assert!(
                    allowed == [u32::from(f)] || (spelled && allowed.contains(&u32::from(f))),
                    "{schema}: forced {:?}, allowed {allowed:?}",
                    String::from_utf8_lossy(&forced)
                );
                assert!(!accepting);
                probe.advance(u32::from(f)).unwrap();
            }
            let (mask, accepting, _) = observe(&probe, words);
            assert!(accepting || allowed_ids(&mask).len() > 1, "{schema}: {:?} is not the longest", forced);
            session.advance(u32::from(b)).unwrap();
        }
        assert!(session.forced_bytes().is_empty(), "an accepting session forces nothing");
    }
    // Structure, literals and determined keys are forced: `description":"` after `{"a":1,"`.
    assert!(longest >= r#"description":""#.len(), "the longest forced text: {longest}");
}

/// The slow route to "done": accepting, and every single-byte continuation is whitespace after
/// which the session is done again, explored `depth` bytes deep.
fn done_by_search(session: &Session, words: usize, depth: usize) -> bool {
    let (mask, accepting, finished) = observe(session, words);
    if finished {
        return true;
    }
    if !accepting {
        return false;
    }
    allowed_ids(&mask).into_iter().filter(|&id| id < 256).all(|id| {
        let byte = id as u8;
        if !b" \t\n\r".contains(&byte) {
            return false;
        }
        if depth == 0 {
            return true;
        }
        let mut next = session.fork();
        next.advance(id).unwrap();
        done_by_search(&next, words, depth - 1)
    })
}

#[test]
fn a_session_is_done_exactly_where_only_whitespace_can_follow() {
    use maskforge_core::{build_vocabulary, CompilerOptions};
    // 256 single bytes and EOS (256).
    let bytes = build_vocabulary(256, (0..=255u8).map(|b| (u32::from(b), vec![b]))).unwrap();
    let vocabulary = CompiledVocabulary::try_from(Arc::new(bytes)).unwrap();
    let cases: &[(&str, &str)] = &[
        (CASES[0].0, CASES[0].1),
        (CASES[1].0, "{\"name\": \"Ada\", \"age\": 36}  \n"),
        (CASES[2].0, CASES[2].1),
        (CASES[3].0, CASES[3].1),
        (r#"{"type": "string"}"#, r#""a\"b""#),
        (r#"{"type": "integer"}"#, "120 "),
        (r#"{"type": "number"}"#, "-1.5e3\t"),
        (r#"{"enum": [1, 12, "x"]}"#, "12"),
        (r#"{"enum": [true, null, [1]]}"#, "[1]"),
        (r#"{"type": "boolean"}"#, "false "),
        (r#"{"type": "array", "items": {"type": "integer"}, "maxItems": 2}"#, "[1, 20]"),
    ];
    let mut done_somewhere = 0;
    for &(schema, text) in cases {
        for whitespace in [None, Some(0), Some(2)] {
            let options = CompilerOptions::default().with_max_json_whitespace(whitespace);
            let bound = Compiler::new(options).compile_json_schema(schema).unwrap().bind(&vocabulary).unwrap();
            let words = bound.mask_word_count();
            let mut session = bound.start_session().unwrap();
            // Under a whitespace cap the instance is written compactly, with one trailing space
            // where any is allowed.
            let text: Vec<u8> = match whitespace {
                None => text.as_bytes().to_vec(),
                Some(max) => {
                    let value: serde_json::Value = serde_json::from_str(text).unwrap();
                    let compact = serde_json::to_string(&value).unwrap();
                    format!("{compact}{}", " ".repeat(max.min(1) as usize)).into_bytes()
                }
            };
            for (at, &b) in text.iter().enumerate() {
                let expected = done_by_search(&session, words, 3);
                assert_eq!(
                    session.is_done(),
                    expected,
                    "{schema} ({whitespace:?}) after {:?}",
                    String::from_utf8_lossy(&text[..at])
                );
                done_somewhere += usize::from(expected);
                session.advance(u32::from(b)).unwrap();
            }
            assert_eq!(session.is_done(), done_by_search(&session, words, 3), "{schema}: at the end");
            if session.is_done() {
                done_somewhere += 1;
                session.advance(256).unwrap();
                assert!(session.is_done(), "a finished session is done");
            }
        }
    }
    assert!(done_somewhere >= cases.len() * 3, "sessions were done {done_somewhere} times");
    // A root number is not done: another digit could follow.
    let bound =
        Compiler::without_cache().compile_json_schema(r#"{"type": "integer"}"#).unwrap().bind(&vocabulary).unwrap();
    let mut session = bound.start_session().unwrap();
    session.advance(u32::from(b'7')).unwrap();
    assert!(session.is_accepting() && !session.is_done());
    session.advance(u32::from(b' ')).unwrap();
    assert!(session.is_done());
}
