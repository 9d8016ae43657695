//! Templates (`compile_template`): their languages against a reference matcher written from the
//! document's semantics (sets of end positions, triggers found by scanning), their diagnostics
//! with pointers into the document, and their masks against the reference route on real
//! tokenizers, bit for bit at every step.

use std::collections::BTreeSet;
use std::sync::Arc;

use maskforge_core::low_level::reference_mask;
use maskforge_core::mask::{allowed_ids, get_bit};
use maskforge_core::{
    CompiledVocabulary, Compiler, CompilerOptions, DiagnosticCode, Output, PropertyOrder, TokenizerJsonOptions,
    Vocabulary,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn load(name: &str) -> CompiledVocabulary {
    let path = format!("{}/../../tests/data/tokenizers/{name}", env!("CARGO_MANIFEST_DIR"));
    let vocabulary = Vocabulary::from_tokenizer_json_file(&path, &TokenizerJsonOptions::default()).unwrap();
    CompiledVocabulary::try_from(Arc::new(vocabulary)).unwrap()
}

/// Where a match of `part` that starts at `start` can end. Regexes and schemas are matched
/// through their own programs (compiled alone); the template's composition is what is checked.
fn ends(part: &Value, text: &[u8], start: usize) -> BTreeSet<usize> {
    let whole = |accepts: &dyn Fn(&[u8]) -> bool| (start..=text.len()).filter(|&e| accepts(&text[start..e])).collect();
    match part {
        Value::String(literal) => {
            let end = start + literal.len();
            (text[start..].starts_with(literal.as_bytes())).then_some(end).into_iter().collect()
        }
        Value::Array(items) => items
            .iter()
            .fold(BTreeSet::from([start]), |at, item| at.into_iter().flat_map(|s| ends(item, text, s)).collect()),
        Value::Object(object) => {
            if let Some(literal) = object.get("literal") {
                return ends(literal, text, start);
            }
            if let Some(options) = object.get("text") {
                let excluded: Vec<&str> = options
                    .get("exclude")
                    .map(|v| v.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect())
                    .unwrap_or_default();
                let max = options.get("max_bytes").map(|m| m.as_u64().unwrap() as usize).unwrap_or(usize::MAX);
                return whole(&|t: &[u8]| free_text(t, &excluded) && t.len() <= max);
            }
            if let Some(pattern) = object.get("regex") {
                let program = Compiler::without_cache().compile_regex(pattern.as_str().unwrap()).unwrap();
                return whole(&|t: &[u8]| program.executable().accepts(t));
            }
            if let Some(schema) = object.get("json") {
                let mut options = CompilerOptions::default().with_executable_cache_bytes(0);
                if let Some(max) = object.get("max_whitespace") {
                    options = options.with_max_json_whitespace(Some(max.as_u64().unwrap() as u32));
                }
                if let Some(closed) = object.get("closed_objects") {
                    options = options.with_closed_objects(closed.as_bool().unwrap());
                }
                if let Some(order) = object.get("property_order") {
                    options = options.with_property_order(PropertyOrder::from_name(order.as_str().unwrap()).unwrap());
                }
                let program = Compiler::new(options).compile_json_value(schema).unwrap();
                return whole(&|t: &[u8]| program.executable().accepts(t));
            }
            if let Some(Value::Array(choices)) = object.get("choice") {
                return choices.iter().flat_map(|c| ends(c, text, start)).collect();
            }
            if let Some(item) = object.get("repeat") {
                let min = object.get("min").and_then(Value::as_u64).unwrap_or(0);
                let max = object.get("max").and_then(Value::as_u64).unwrap_or(u64::MAX);
                let separator = object.get("separator").cloned().unwrap_or(json!(""));
                let mut found = BTreeSet::new();
                let mut frontier = BTreeSet::from([start]);
                let mut copies = 0;
                while !frontier.is_empty() && copies <= max {
                    if copies >= min {
                        found.extend(frontier.iter().copied());
                    }
                    let step = if copies == 0 { item.clone() } else { json!([separator, item]) };
                    frontier = frontier.into_iter().flat_map(|s| ends(&step, text, s)).collect();
                    copies += 1;
                }
                return found;
            }
            tag_ends(object, text, start)
        }
        _ => unreachable!(),
    }
}

fn free_text(text: &[u8], excluded: &[&str]) -> bool {
    std::str::from_utf8(text).is_ok_and(|t| !excluded.iter().any(|x| t.contains(x)))
}

/// Free text up to the first trigger, which starts a tag; then free text again.
fn tag_ends(object: &serde_json::Map<String, Value>, text: &[u8], start: usize) -> BTreeSet<usize> {
    let tags = object["tags"].as_array().unwrap();
    let begins: Vec<&str> = tags.iter().map(|t| t["begin"].as_str().unwrap()).collect();
    let triggers: Vec<&str> = match object.get("triggers") {
        Some(t) => t.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect(),
        None => begins.clone(),
    };
    let flag = |name: &str| object.get(name).and_then(Value::as_bool).unwrap_or(false);
    let (at_least_one, stop_after_first) = (flag("at_least_one"), flag("stop_after_first"));
    let mut found = BTreeSet::new();
    // (position in free text, tags so far)
    let mut frontier = BTreeSet::from([(start, 0usize)]);
    while let Some((at, count)) = frontier.pop_first() {
        let first = (at..text.len()).find(|&i| triggers.iter().any(|t| text[i..].starts_with(t.as_bytes())));
        let free_end = first.unwrap_or(text.len());
        if (count > 0 || !at_least_one) && !(stop_after_first && count > 0) {
            found.extend((at..=free_end).filter(|&e| free_text(&text[at..e], &triggers)));
        }
        if stop_after_first && count > 0 {
            found.insert(at);
            continue;
        }
        let Some(first) = first else { continue };
        if !free_text(&text[at..first], &triggers) {
            continue;
        }
        for tag in tags {
            let shape = json!([tag["begin"], tag["content"], tag["end"]]);
            for end in ends(&shape, text, first) {
                frontier.insert((end, count + 1));
            }
        }
    }
    found
}

fn reference_accepts(template: &Value, text: &[u8]) -> bool {
    ends(template, text, 0).contains(&text.len())
}

fn hermes(tools: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = tools
        .iter()
        .map(|(name, arguments)| {
            json!({"json": {"type": "object", "properties": {"name": {"const": name}, "arguments": arguments},
                            "required": ["name", "arguments"], "additionalProperties": false},
                   "max_whitespace": 1, "closed_objects": true})
        })
        .collect();
    json!({"tags": [{"begin": "<tool_call>\n", "content": {"choice": calls}, "end": "\n</tool_call>"}],
           "triggers": ["<tool_call>"]})
}

fn templates() -> Vec<(&'static str, Value, Vec<&'static str>)> {
    let weather = json!({"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}},
                         "required": ["city"]});
    let sum = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "boolean"}},
                     "required": ["a", "b"]});
    let tools = hermes(&[("get_weather", weather.clone()), ("add", sum)]);
    vec![
        ("literal and regex", json!(["Answer: ", {"regex": "[0-9]{1,3}"}, "."]), vec!["Answer: 42.", "Answer: 7."]),
        (
            "choice and repeat",
            json!([{"choice": ["yes", "no", ["maybe", {"regex": "!*"}]]},
                   {"repeat": {"choice": ["a", "bc"]}, "min": 1, "max": 3, "separator": ","}]),
            vec!["yesa", "maybe!!bc,a,a", "noa,bc"],
        ),
        (
            "free text",
            json!([{"text": {"exclude": ["STOP", "\n"], "max_bytes": 12}}, "STOP"]),
            vec!["STOP", "héllo STOP", "ab STSTOP"],
        ),
        ("json value", json!(["<", {"json": weather, "max_whitespace": 0, "closed_objects": true}, ">"]), vec![r#"<{"city":"Oslo"}>"#]),
        (
            "hermes tool calls",
            tools.clone(),
            vec![
                "",
                "Let me check.",
                "Sure.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
                "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"b\": true, \"a\": -1.5e3}}\n</tool_call> and \
                 <tool_call>\n{\"arguments\": {\"city\": \"\"}, \"name\": \"get_weather\"}\n</tool_call>\nDone",
            ],
        ),
        (
            "one tool call after reasoning",
            json!(["<think>", {"text": {"exclude": ["</think>"]}}, "</think>",
                   {"tags": tools["tags"], "triggers": ["<tool_call>"], "at_least_one": true, "stop_after_first": true}]),
            vec!["<think>It is <tool_call> time</think>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": false}}\n</tool_call>"],
        ),
        // JSON parts whose schemas need the structured arm: holes in the template's automaton.
        (
            "integer part",
            json!(["<", {"json": {"type": "integer", "minimum": -5, "maximum": 300}}, ">"]),
            vec!["<12>", "<-5>", "< 3.0e1 >", "<1e2>", "<300>"],
        ),
        (
            "number then text",
            json!([{"json": {"type": "integer"}, "max_whitespace": 1}, " items"]),
            vec!["12 items", "-3  items", "1.0e3 items"],
        ),
        (
            "structured tool calls",
            json!({"tags": [{"begin": "<tool_call>\n", "content": {"json": {"anyOf": [
                       {"type": "object", "properties": {"name": {"const": "forecast"},
                        "arguments": {"type": "object", "properties": {"days": {"type": "integer", "minimum": 1}},
                                      "required": ["days"]}},
                        "required": ["name", "arguments"], "additionalProperties": false},
                       {"type": "object", "properties": {"name": {"const": "echo"}, "arguments": {}},
                        "required": ["name", "arguments"], "additionalProperties": false}]},
                       "max_whitespace": 1, "property_order": "declared"}, "end": "\n</tool_call>"}],
                   "triggers": ["<tool_call>"]}),
            vec![
                "",
                "Let me check.<tool_call>\n{\"name\": \"forecast\", \"arguments\": {\"days\": 3, \"where\": \"Oslo\"}}\n</tool_call>",
                "<tool_call>\n{\"name\":\"echo\",\"arguments\":[1,{\"a\":\"}\"}]} \n</tool_call>\nok<tool_call>\n{\"name\": \"echo\", \"arguments\": \"x\"}\n</tool_call>",
                // Ends of the root object where tokens run on past it (`}` then text).
                "<tool_call>\n{\"name\": \"echo\", \"arguments\": 5}\n</tool_call>",
                "<tool_call>\n{\"name\": \"echo\", \"arguments\": true} \n</tool_call>",
            ],
        ),
        (
            "reasoning then a structured value",
            json!(["<think>", {"text": {"exclude": ["</think>"]}}, "</think>",
                   {"json": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]),
            vec!["<think>x</think>{\"n\": 3}", "<think></think>\n {\"n\":-1, \"more\": [1]} "],
        ),
        (
            // Optional calls after free text, then more: the one call part is entered from the free
            // text's tag or from the repeat after text with no tag, which the template cannot tell apart.
            "a structured part at two places",
            {
                let call = json!({"json": {"type": "object", "properties": {"days": {"type": "integer", "minimum": 1}},
                                           "required": ["days"]}, "max_whitespace": 1});
                json!([{"tags": [{"begin": "<tool_call>\n", "content": call, "end": "\n</tool_call>"}],
                        "triggers": ["<tool_call>"], "stop_after_first": true},
                       {"repeat": ["\n", "<tool_call>\n", call, "\n</tool_call>"], "min": 0}])
            },
            vec![
                "",
                "ok",
                "ok\n<tool_call>\n{\"days\": 3}\n</tool_call>",
                "<tool_call>\n{\"days\": 1, \"x\": [2]} \n</tool_call>\n<tool_call>\n{\"days\":2}\n</tool_call>",
            ],
        ),
        (
            "triggers that straddle into the begin",
            json!({"tags": [{"begin": "aab", "content": {"regex": "[0-9]"}, "end": ";"}], "triggers": ["aa"]}),
            vec!["x", "aab1;", "xaab2;b", "aab1;aab2;"],
        ),
    ]
}

/// The longest token `mask` allows that spells the start of `rest` (the walk a model may take
/// along a text), with its length.
fn longest_allowed(mask: &[u32], vocabulary: &Vocabulary, rest: &[u8]) -> (u32, usize) {
    allowed_ids(mask)
        .into_iter()
        .filter_map(|id| vocabulary.token_bytes(id).map(|b| (id, b.len())))
        .filter(|&(id, _)| rest.starts_with(vocabulary.token_bytes(id).unwrap()))
        .max_by_key(|&(_, len)| len)
        .expect("an allowed token spells the text on")
}

/// Texts near `seed`: cut, doubled, with a byte changed, or two seeds joined.
fn mutations(seeds: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, seed) in seeds.iter().enumerate() {
        let bytes = seed.as_bytes();
        for cut in 0..=bytes.len() {
            out.push(bytes[..cut].to_vec());
            out.push(bytes[cut..].to_vec());
        }
        for at in 0..bytes.len() {
            for replacement in [b'a', b'"', b'<', b'\n', b' ', b'9', 0xC3] {
                let mut changed = bytes.to_vec();
                changed[at] = replacement;
                out.push(changed);
            }
        }
        out.push([bytes, bytes].concat());
        out.push([bytes, seeds[(i + 1) % seeds.len()].as_bytes()].concat());
    }
    out
}

#[test]
fn a_template_accepts_what_its_reference_matcher_accepts() {
    for (label, template, seeds) in templates() {
        let program = Compiler::without_cache().compile_template_value(&template).unwrap();
        assert_eq!(program.executable().output(), Output::Text);
        let structured = [
            "integer part",
            "number then text",
            "structured tool calls",
            "reasoning then a structured value",
            "a structured part at two places",
        ];
        let backend = if structured.contains(&label) { "composite" } else { "regular" };
        assert_eq!(program.executable().backend_name(), backend, "{label}");
        for seed in &seeds {
            assert!(reference_accepts(&template, seed.as_bytes()), "{label}: the reference refuses {seed:?}");
            assert!(program.executable().accepts(seed.as_bytes()), "{label}: refuses {seed:?}");
        }
        let mut refused = 0;
        for text in mutations(&seeds) {
            let expected = reference_accepts(&template, &text);
            refused += usize::from(!expected);
            assert_eq!(program.executable().accepts(&text), expected, "{label}: {:?}", String::from_utf8_lossy(&text));
        }
        assert!(refused > 0, "{label}: the mutations must include refused texts");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// Random texts over the alphabet of the straddling-trigger and hermes templates.
    #[test]
    fn random_texts_agree_with_the_reference(picks in proptest::collection::vec(0usize..9, 0..14)) {
        let pieces = ["a", "b", "aa", "aab", "1", ";", "<tool_call>\n", "\n</tool_call>", "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": false}}"];
        let text: String = picks.iter().map(|&i| pieces[i]).collect();
        for (_, template, _) in templates() {
            let program = Compiler::new(Default::default()).compile_template_value(&template).unwrap();
            prop_assert_eq!(program.executable().accepts(text.as_bytes()), reference_accepts(&template, text.as_bytes()), "{:?} {}", text, template);
        }
    }
}

#[test]
fn masks_equal_the_reference_route_on_gpt2_and_mistral() {
    for name in ["gpt2.tokenizer.json", "mistral-v3.tokenizer.json"] {
        let vocabulary = load(name);
        for (label, template, seeds) in templates() {
            let bound = Compiler::without_cache().compile_template_value(&template).unwrap().bind(&vocabulary).unwrap();
            let executable = bound.executable();
            for text in seeds {
                let text = text.as_bytes();
                let mut session = bound.start_session().unwrap();
                let mut mask = vec![0u32; bound.mask_word_count()];
                let mut at = 0;
                loop {
                    session.write_mask(&mut mask).unwrap();
                    let reference = reference_mask(executable, vocabulary.vocabulary(), &text[..at]).unwrap();
                    assert_eq!(mask, reference, "{name} {label}: after {:?}", String::from_utf8_lossy(&text[..at]));
                    if at == text.len() {
                        break;
                    }
                    let (id, len) = longest_allowed(&mask, vocabulary.vocabulary(), &text[at..]);
                    // Advancing and rolling back restores the mask; a fork reads the same.
                    let fork = session.fork();
                    session.advance(id).unwrap();
                    session.rollback(1).unwrap();
                    let mut again = vec![0u32; bound.mask_word_count()];
                    session.write_mask(&mut again).unwrap();
                    assert_eq!(again, mask, "{name} {label}: rollback at {at}");
                    fork.write_mask(&mut again).unwrap();
                    assert_eq!(again, mask, "{name} {label}: fork at {at}");
                    session.advance(id).unwrap();
                    at += len;
                }
                assert!(vocabulary.vocabulary().eos_token_ids().iter().all(|&eos| get_bit(&mask, eos)), "{label}: EOS");
            }
        }
    }
}

#[test]
fn malformed_templates_are_typed_diagnostics_that_point_into_the_document() {
    let tag = json!({"begin": "<a>", "content": "x", "end": "</a>"});
    let cases: Vec<(Value, DiagnosticCode, &str, &str)> = vec![
        (json!(3), DiagnosticCode::InvalidKeywordValue, "template", ""),
        (json!(["a", {"bogus": 1}]), DiagnosticCode::InvalidKeywordValue, "template", "/1"),
        (json!({"literal": "a", "regex": "b"}), DiagnosticCode::InvalidKeywordValue, "regex", ""),
        (json!({"regex": "(a"}), DiagnosticCode::UnsupportedPattern, "regex", "/regex"),
        (json!({"literal": "a", "max": 2}), DiagnosticCode::UnsupportedKeyword, "max", "/max"),
        (json!({"choice": []}), DiagnosticCode::InvalidKeywordValue, "choice", "/choice"),
        (json!({"repeat": "a", "min": 3, "max": 2}), DiagnosticCode::UnsatisfiableSchema, "max", "/max"),
        (json!({"repeat": "a", "min": -1}), DiagnosticCode::InvalidKeywordValue, "min", "/min"),
        (json!({"text": {"exclude": [""]}}), DiagnosticCode::InvalidKeywordValue, "exclude", "/text"),
        (
            // A structured JSON part must start where nothing else can.
            json!([{"text": {}}, {"json": {"type": "integer"}}]),
            DiagnosticCode::RequiresStructuredBackend,
            "json",
            "/1/json",
        ),
        (
            json!([{"json": {"type": "integer"}}, {"json": {"type": "object"}}]),
            DiagnosticCode::RequiresStructuredBackend,
            "json",
            "/1/json",
        ),
        (
            json!({"choice": [{"json": {"type": "integer"}}, {"json": {"type": "object"}}]}),
            DiagnosticCode::RequiresStructuredBackend,
            "json",
            "/choice/0/json",
        ),
        (
            // Text after a number part that would continue the number.
            json!([{"json": {"type": "integer"}}, {"choice": ["!", "5"]}]),
            DiagnosticCode::RequiresStructuredBackend,
            "json",
            "/0/json",
        ),
        (
            json!({"json": {"type": "string"}, "property_order": "sorted"}),
            DiagnosticCode::InvalidKeywordValue,
            "property_order",
            "/property_order",
        ),
        (
            json!({"json": {"properties": {"a": {"minimum": "x"}}}}),
            DiagnosticCode::InvalidKeywordValue,
            "minimum",
            "/json/properties/a/minimum",
        ),
        (
            json!({"tags": [tag], "triggers": ["<a", "<a"]}),
            DiagnosticCode::InvalidKeywordValue,
            "triggers",
            "/triggers/1",
        ),
        (json!({"tags": [tag], "triggers": [""]}), DiagnosticCode::InvalidKeywordValue, "triggers", "/triggers/0"),
        (
            json!({"tags": [tag], "triggers": ["<a", "<b"]}),
            DiagnosticCode::InvalidKeywordValue,
            "triggers",
            "/triggers/1",
        ),
        (json!({"tags": [tag], "triggers": ["<x"]}), DiagnosticCode::InvalidKeywordValue, "triggers", "/triggers/0"),
        (
            json!({"tags": [tag, {"begin": "<ab>", "content": "", "end": ""}], "triggers": ["<a", "<ab"]}),
            DiagnosticCode::InvalidKeywordValue,
            "triggers",
            "/triggers/1",
        ),
        (json!({"tags": [{"begin": "<a>", "end": ""}]}), DiagnosticCode::InvalidKeywordValue, "content", "/tags/0"),
        (
            json!({"tags": [tag], "at_least_one": 1}),
            DiagnosticCode::InvalidKeywordValue,
            "at_least_one",
            "/at_least_one",
        ),
        (json!(["x", {"regex": "a$b"}]), DiagnosticCode::UnsatisfiableSchema, "template", ""),
    ];
    for (template, code, keyword, pointer) in cases {
        let error = Compiler::without_cache().compile_template_value(&template).expect_err(&template.to_string());
        let diagnostic = error.diagnostic().unwrap_or_else(|| panic!("{template}: {error}"));
        assert_eq!(
            (diagnostic.code, diagnostic.keyword.as_deref(), diagnostic.pointer.as_str()),
            (code, Some(keyword), pointer),
            "{template}: {diagnostic:?}"
        );
    }
    let mut deep = json!("x");
    for _ in 0..300 {
        deep = json!([deep]);
    }
    let error = Compiler::without_cache().compile_template_value(&deep).unwrap_err();
    assert_eq!(error.diagnostic().unwrap().code, DiagnosticCode::ResourceLimit);
    let error = Compiler::without_cache().compile_template("[").unwrap_err();
    assert_eq!(error.diagnostic().unwrap().code, DiagnosticCode::InvalidJson);
}

#[test]
fn templates_are_cached_apart_from_other_programs() {
    let compiler = Compiler::new(Default::default());
    let a = compiler.compile_template(r#""abc""#).unwrap();
    let b = compiler.compile_template(r#""abc""#).unwrap();
    assert!(Arc::ptr_eq(a.executable(), b.executable()));
    let regex = compiler.compile_regex("abc").unwrap();
    assert!(!Arc::ptr_eq(a.executable(), regex.executable()));
    // Same text, different whitespace policy for a JSON part: a different program.
    let tight = compiler.compile_template_value(&json!({"json": {"enum": ["x"]}, "max_whitespace": 0})).unwrap();
    assert!(!tight.executable().accepts(b" \"x\"") && tight.executable().accepts(b"\"x\""));
}

/// A token holding the marker byte that stands for a structured JSON part in the template's
/// automaton (`0xFF`, never in UTF-8 text) is read as the byte it is: it cannot skip the part.
#[test]
fn a_token_spelling_a_hole_marker_does_not_skip_the_json_part() {
    use maskforge_core::build_vocabulary;
    let tokens: [&[u8]; 6] = [b"<", b"<\xFF\x00", b"\xFF\x00>", b"7", b">", b"<7>"];
    let map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
    let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(6, map).unwrap())).unwrap();
    let template = json!(["<", {"json": {"type": "integer"}}, ">"]);
    let bound = Compiler::without_cache().compile_template_value(&template).unwrap().bind(&vocabulary).unwrap();
    assert_eq!(bound.executable().backend_name(), "composite");
    let session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    session.write_mask(&mut mask).unwrap();
    assert_eq!(allowed_ids(&mask), vec![0, 5], "`<` and `<7>`, not `<` with the marker");
    let reference = reference_mask(bound.executable(), vocabulary.vocabulary(), b"").unwrap();
    assert_eq!(mask, reference);
    let mut session = session;
    session.advance(0).unwrap();
    session.write_mask(&mut mask).unwrap();
    assert_eq!(allowed_ids(&mask), vec![3], "only the integer's digit after `<`");
}

/// Every token's bit against the session's own per-token check (`is_allowed` steps a copy of
/// the position on the token's bytes, or on a special token's marker).
fn assert_mask_is_the_per_token_route(session: &maskforge_core::Session, size: usize, at: &str) {
    let mut mask = vec![0u32; session.mask_word_count()];
    session.write_mask(&mut mask).unwrap();
    for id in 0..size as u32 {
        assert_eq!(get_bit(&mask, id), session.is_allowed(id), "token {id} at {at}");
    }
}

/// A `special` part: the special token of that name is admitted there, by its id, and every
/// other special token stays refused.
#[test]
fn a_special_token_part_admits_that_token_there_and_nowhere_else() {
    let vocabulary = load("mistral-v3.tokenizer.json");
    let v = vocabulary.vocabulary();
    let (tool_calls, inst) = (v.special_token_id("[TOOL_CALLS]").unwrap(), v.special_token_id("[INST]").unwrap());
    let call = json!({"type": "object", "properties": {"name": {"const": "add"},
                      "arguments": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
                      "required": ["name", "arguments"], "additionalProperties": false});
    // Mistral's tool calls: `[TOOL_CALLS]`, then a JSON array of calls; or plain text instead.
    let template = json!({"choice": [
        [{"special": "[TOOL_CALLS]"}, " ", {"json": {"type": "array", "items": call, "minItems": 1}}],
        {"text": {"max_bytes": 24}}
    ]});
    let bound = Compiler::without_cache().compile_template_value(&template).unwrap().bind(&vocabulary).unwrap();
    let size = v.mask_vocab_size();
    let mut session = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    session.write_mask(&mut mask).unwrap();
    assert_eq!(mask, reference_mask(bound.executable(), v, b"").unwrap());
    assert!(get_bit(&mask, tool_calls) && !get_bit(&mask, inst));
    // The byte-fallback token of 0xFE (the special marker's byte) spells no special token.
    let (fe, _) = v.tokens_with_bytes().find(|&(_, b)| b == [0xFE]).unwrap();
    assert!(!get_bit(&mask, fe));
    assert_mask_is_the_per_token_route(&session, size, "the start");
    session.advance(tool_calls).unwrap();
    assert!(!session.is_allowed(tool_calls), "once");
    assert!(matches!(session.advance(inst), Err(maskforge_core::Error::TokenRejected { .. })));
    // Rolled back over the special token, the session is at the start again.
    let mut again = vec![0u32; bound.mask_word_count()];
    session.rollback(1).unwrap();
    session.write_mask(&mut again).unwrap();
    assert_eq!(again, mask);
    session.advance(tool_calls).unwrap();
    let text = br#" [{"name": "add", "arguments": {"a": 12}}]"#;
    let mut at = 0;
    while at < text.len() {
        assert_mask_is_the_per_token_route(&session, size, &String::from_utf8_lossy(&text[..at]));
        session.write_mask(&mut mask).unwrap();
        let (id, len) = longest_allowed(&mask, v, &text[at..]);
        session.advance(id).unwrap();
        at += len;
    }
    assert!(session.is_accepting());
    assert_mask_is_the_per_token_route(&session, size, "the end");
    // Bytes never spell a special token, and a vocabulary without the name cannot bind.
    assert!(!bound.executable().accepts(b"[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {\"a\": 1}}]"));
    let err = Compiler::without_cache().compile_template_value(&template).unwrap().bind(&load("gpt2.tokenizer.json"));
    assert!(matches!(err, Err(maskforge_core::Error::Vocabulary(m)) if m.contains("[TOOL_CALLS]")));
}

/// An optional special token in front of a structured JSON part (Llama 3's `<|python_tag|>`
/// before a call): where both may start, the mask holds the token and the value's first tokens,
/// and either way on is read exactly.
#[test]
fn an_optional_special_token_before_a_structured_part() {
    let vocabulary = load("mistral-v3.tokenizer.json");
    let v = vocabulary.vocabulary();
    let tool_calls = v.special_token_id("[TOOL_CALLS]").unwrap();
    let call = json!({"type": "object", "properties": {"name": {"const": "add"},
                      "arguments": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
                      "required": ["name", "arguments"], "additionalProperties": false});
    let template = json!([{"repeat": {"special": "[TOOL_CALLS]"}, "min": 0, "max": 1}, {"json": call}]);
    let bound = Compiler::without_cache().compile_template_value(&template).unwrap().bind(&vocabulary).unwrap();
    let size = v.mask_vocab_size();
    let start = bound.start_session().unwrap();
    let mut mask = vec![0u32; bound.mask_word_count()];
    start.write_mask(&mut mask).unwrap();
    assert_eq!(mask, reference_mask(bound.executable(), v, b"").unwrap());
    assert!(get_bit(&mask, tool_calls));
    assert_mask_is_the_per_token_route(&start, size, "the start");
    let text = br#"{"name": "add", "arguments": {"a": 7}}"#;
    for with_token in [false, true] {
        let mut session = start.fork();
        if with_token {
            session.advance(tool_calls).unwrap();
            assert!(!session.is_allowed(tool_calls));
        }
        let mut at = 0;
        while at < text.len() {
            assert_mask_is_the_per_token_route(&session, size, &String::from_utf8_lossy(&text[..at]));
            session.write_mask(&mut mask).unwrap();
            if !with_token {
                assert_eq!(mask, reference_mask(bound.executable(), v, &text[..at]).unwrap());
            }
            let (id, len) = longest_allowed(&mask, v, &text[at..]);
            session.advance(id).unwrap();
            at += len;
        }
        assert!(session.is_accepting(), "with the token: {with_token}");
    }
}
