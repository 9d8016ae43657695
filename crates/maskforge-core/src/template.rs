//! Templates: raw text made of parts (literal text, free text, regexes, JSON values of schemas,
//! choices, repetitions and triggered tags), read from a JSON document and lowered to one
//! automaton, so that their masks are those of the regular arm: exact and live.
//!
//! The document's grammar (docs/templates.md has the semantics):
//!
//! ```text
//! part := "literal text" | [part, ...]                      (a sequence)
//!       | {"literal": "..."}
//!       | {"special": "<|python_tag|>"}                      (a special token, by its name)
//!       | {"text": {"exclude": ["..."], "max_bytes": n}}    (free text; both keys optional)
//!       | {"regex": "pattern"}
//!       | {"json": schema, "max_whitespace": n, "closed_objects": bool, "property_order": "any"|"declared"}
//!       | {"choice": [part, ...]}
//!       | {"repeat": part, "min": n, "max": n, "separator": part}
//!       | {"tags": [{"begin": "...", "content": part, "end": "..."}, ...],
//!          "triggers": ["..."], "at_least_one": bool, "stop_after_first": bool}
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::automata::{ecma, json, ByteDfa, Re};
use crate::composite::{Hole, MARKER, MAX_HOLES, MAX_SPECIALS, SPECIAL};
use crate::error::{Diagnostic, DiagnosticCode, Error, Result};
use crate::options::{CompilerOptions, PropertyOrder};
use crate::schema::SchemaDocument;

/// The texts `template` describes: one automaton, and the holes in it of the JSON parts whose
/// schemas need the structured arm (see [`crate::composite`]).
pub(crate) fn template_language(template: &Value, options: &CompilerOptions) -> Result<TemplateLanguage> {
    let mut lowering =
        Lowering { options, any_text: None, holes: Vec::new(), specials: Vec::new(), json_parts: HashMap::new() };
    let re = lowering.part(template, "", 0)?;
    let language = compile(&re, options, "", "template")?;
    if language.is_empty_language() {
        return Err(invalid(DiagnosticCode::UnsatisfiableSchema, "", "template", "the template matches no text"));
    }
    Ok(TemplateLanguage { dfa: language, holes: lowering.holes, specials: lowering.specials })
}

/// A template lowered: its automaton, the holes of its JSON parts on the structured arm, and
/// the names of the special tokens it places (see [`crate::composite`]).
pub(crate) struct TemplateLanguage {
    pub(crate) dfa: ByteDfa,
    pub(crate) holes: Vec<Hole>,
    pub(crate) specials: Vec<String>,
}

struct Lowering<'a> {
    options: &'a CompilerOptions,
    /// Every UTF-8 text, built on first use.
    any_text: Option<Arc<ByteDfa>>,
    /// The JSON parts on the structured arm, in the order of their markers.
    holes: Vec<Hole>,
    /// The special tokens placed, by name, in the order of their markers.
    specials: Vec<String>,
    /// Each distinct JSON part lowered, by its text. A part that occurs twice is one hole: the
    /// same marker at both places lets the automaton merge them where the template cannot tell
    /// which of the two a text is in (free text that may end before a repeated call), and the
    /// part is compiled once.
    json_parts: HashMap<String, Re>,
}

impl Lowering<'_> {
    fn part(&mut self, value: &Value, pointer: &str, depth: usize) -> Result<Re> {
        if depth > self.options.limits.max_nesting_depth {
            let message = format!("the template nests deeper than {} parts", self.options.limits.max_nesting_depth);
            return Err(invalid(DiagnosticCode::ResourceLimit, pointer, "template", message));
        }
        match value {
            Value::String(text) => Ok(Re::literal(text.as_bytes())),
            Value::Array(items) => self.sequence(items, pointer, depth),
            Value::Object(part) => self.object_part(part, pointer, depth),
            other => Err(invalid(
                DiagnosticCode::InvalidKeywordValue,
                pointer,
                "template",
                format!("a template part is a string, an array or an object, not {}", json_type(other)),
            )),
        }
    }

    fn sequence(&mut self, items: &[Value], pointer: &str, depth: usize) -> Result<Re> {
        let parts = items
            .iter()
            .enumerate()
            .map(|(i, item)| self.part(item, &format!("{pointer}/{i}"), depth + 1))
            .collect::<Result<Vec<_>>>()?;
        Ok(Re::concat(parts))
    }

    fn object_part(&mut self, part: &Map<String, Value>, pointer: &str, depth: usize) -> Result<Re> {
        const KINDS: [&str; 8] = ["literal", "special", "text", "regex", "json", "choice", "repeat", "tags"];
        let kinds: Vec<&str> = KINDS.iter().copied().filter(|k| part.contains_key(*k)).collect();
        let kind = match kinds.as_slice() {
            [kind] => *kind,
            [] => {
                let message = format!("a template part object names one of {}", KINDS.join(", "));
                return Err(invalid(DiagnosticCode::InvalidKeywordValue, pointer, "template", message));
            }
            several => {
                let message = format!("a template part has one kind, this one names {}", several.join(" and "));
                return Err(invalid(DiagnosticCode::InvalidKeywordValue, pointer, several[1], message));
            }
        };
        let allowed: &[&str] = match kind {
            "json" => &["json", "max_whitespace", "closed_objects", "property_order"],
            "repeat" => &["repeat", "min", "max", "separator"],
            "tags" => &["tags", "triggers", "at_least_one", "stop_after_first"],
            _ => &[],
        };
        if let Some(unknown) = part.keys().find(|k| k.as_str() != kind && !allowed.contains(&k.as_str())) {
            let message = format!("a {kind:?} part takes no {unknown:?}");
            return Err(invalid(DiagnosticCode::UnsupportedKeyword, &child(pointer, unknown), unknown, message));
        }
        let at = child(pointer, kind);
        match kind {
            "literal" => Ok(Re::literal(string(&part[kind], &at, kind)?.as_bytes())),
            "special" => self.special(string(&part[kind], &at, kind)?, &at),
            "text" => self.free_text(&part[kind], &at),
            "regex" => {
                let pattern = string(&part[kind], &at, kind)?;
                let language = ecma::full_match_language(pattern, self.options.limits.max_dfa_states).map_err(|e| {
                    let code = if e.limit_exceeded {
                        DiagnosticCode::ResourceLimit
                    } else {
                        DiagnosticCode::UnsupportedPattern
                    };
                    invalid(code, &at, "regex", format!("regex {pattern:?}: {e}"))
                })?;
                Ok(Re::Dfa(Arc::new(language)))
            }
            "json" => {
                let key = Value::Object(part.clone()).to_string();
                if let Some(lowered) = self.json_parts.get(&key) {
                    return Ok(lowered.clone());
                }
                let lowered = self.json_value(part, pointer)?;
                self.json_parts.insert(key, lowered.clone());
                Ok(lowered)
            }
            "choice" => {
                let Value::Array(items) = &part[kind] else {
                    return Err(invalid(
                        DiagnosticCode::InvalidKeywordValue,
                        &at,
                        kind,
                        "a choice is an array of parts",
                    ));
                };
                if items.is_empty() {
                    return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at, kind, "a choice needs a part"));
                }
                let alternatives = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.part(item, &format!("{at}/{i}"), depth + 1))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Re::alt(alternatives))
            }
            "repeat" => {
                let item = self.part(&part[kind], &at, depth + 1)?;
                let min = count(part.get("min"), pointer, "min")?.unwrap_or(0);
                let max = count(part.get("max"), pointer, "max")?;
                if max.is_some_and(|max| max < min) {
                    return Err(invalid(
                        DiagnosticCode::UnsatisfiableSchema,
                        &child(pointer, "max"),
                        "max",
                        "max < min",
                    ));
                }
                Ok(match part.get("separator") {
                    Some(separator) => {
                        let separator = self.part(separator, &child(pointer, "separator"), depth + 1)?;
                        Re::separated(item, separator, min, max)
                    }
                    None => Re::repeat(item, min, max),
                })
            }
            _ => self.tags(part, pointer, depth),
        }
    }

    fn any_text(&mut self) -> Result<Arc<ByteDfa>> {
        if self.any_text.is_none() {
            let any = ecma::full_match_language(r"[\s\S]*", self.options.limits.max_dfa_states)
                .map_err(|e| invalid(DiagnosticCode::ResourceLimit, "", "text", e.to_string()))?;
            self.any_text = Some(Arc::new(any));
        }
        Ok(Arc::clone(self.any_text.as_ref().expect("built above")))
    }

    /// UTF-8 text without any of `excluded` and, with `max_bytes`, at most that many bytes.
    fn free_text(&mut self, options: &Value, at: &str) -> Result<Re> {
        let Value::Object(options) = options else {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, at, "text", "\"text\" takes an object"));
        };
        if let Some(unknown) = options.keys().find(|k| !["exclude", "max_bytes"].contains(&k.as_str())) {
            let message = format!("free text takes no {unknown:?}");
            return Err(invalid(DiagnosticCode::UnsupportedKeyword, &child(at, unknown), unknown, message));
        }
        let excluded = match options.get("exclude") {
            None => Vec::new(),
            Some(value) => strings(value, &child(at, "exclude"), "exclude")?,
        };
        let max_bytes = count(options.get("max_bytes"), at, "max_bytes")?;
        let language = self.text_without(&excluded, at)?;
        let Some(max) = max_bytes else { return Ok(language) };
        let short = Re::repeat(Re::byte_range(0, 255), 0, Some(max));
        let short = compile(&short, self.options, &child(at, "max_bytes"), "max_bytes")?;
        let language = compile(&language, self.options, at, "text")?;
        let bounded = language.intersect(&short, self.options.limits.max_dfa_states).map_err(|_| {
            invalid(DiagnosticCode::ResourceLimit, at, "max_bytes", "free text of that length exceeds max_dfa_states")
        })?;
        Ok(Re::Dfa(Arc::new(bounded)))
    }

    /// UTF-8 text in which none of `excluded` occurs.
    fn text_without(&mut self, excluded: &[&str], at: &str) -> Result<Re> {
        let any = self.any_text()?;
        if excluded.is_empty() {
            return Ok(Re::Dfa(any));
        }
        if excluded.iter().any(|s| s.is_empty()) {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, at, "exclude", "an excluded string is empty"));
        }
        let occurrences = Re::alt(excluded.iter().map(|s| Re::literal(s.as_bytes())).collect());
        let containing = Re::concat(vec![Re::Dfa(Arc::clone(&any)), occurrences, Re::Dfa(Arc::clone(&any))]);
        let containing = compile(&containing, self.options, at, "exclude")?;
        let without = any.difference(&containing, self.options.limits.max_dfa_states).map_err(|_| {
            invalid(DiagnosticCode::ResourceLimit, at, "exclude", "free text's automaton exceeds max_dfa_states")
        })?;
        Ok(Re::Dfa(Arc::new(without)))
    }

    /// A special token, by its name in the tokenizer: a marker in the automaton that only that
    /// token's id reads (the vocabulary gives the id when the template is bound).
    fn special(&mut self, name: &str, at: &str) -> Result<Re> {
        if name.is_empty() {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, at, "special", "a special token's name is empty"));
        }
        let index = match self.specials.iter().position(|known| known == name) {
            Some(index) => index,
            None if self.specials.len() == MAX_SPECIALS => {
                let message = format!("a template places at most {MAX_SPECIALS} distinct special tokens");
                return Err(invalid(DiagnosticCode::ResourceLimit, at, "special", message));
            }
            None => {
                self.specials.push(name.to_owned());
                self.specials.len() - 1
            }
        };
        Ok(Re::literal(&[SPECIAL, index as u8]))
    }

    /// A JSON value of a schema, under the compiler's policies or the part's own.
    fn json_value(&mut self, part: &Map<String, Value>, pointer: &str) -> Result<Re> {
        let mut options = self.options.clone();
        if let Some(value) = part.get("max_whitespace") {
            options.max_json_whitespace = count(Some(value), pointer, "max_whitespace")?;
        }
        if let Some(value) = part.get("closed_objects") {
            let Value::Bool(closed) = value else {
                let at = child(pointer, "closed_objects");
                return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at, "closed_objects", "a boolean"));
            };
            options.closed_objects = *closed;
        }
        if let Some(value) = part.get("property_order") {
            let order = value.as_str().and_then(PropertyOrder::from_name);
            let Some(order) = order else {
                let at = child(pointer, "property_order");
                return Err(invalid(
                    DiagnosticCode::InvalidKeywordValue,
                    &at,
                    "property_order",
                    "\"any\" or \"declared\"",
                ));
            };
            options.property_order = order;
        }
        let at = child(pointer, "json");
        let within = |mut e: Error| {
            if let Error::Schema(d) = &mut e {
                d.pointer = format!("{at}{}", d.pointer);
            }
            e
        };
        let document = SchemaDocument::from_value(part["json"].clone(), &options).map_err(within)?;
        // A regular language becomes part of the template's automaton; any other is a hole
        // that the part's structured program reads (see `crate::composite`).
        let regular = match crate::regular::compile_automaton(&document, &options) {
            Ok(dfa) => return Ok(Re::Dfa(Arc::new(dfa))),
            Err(Error::Schema(d))
                if matches!(d.code, DiagnosticCode::RequiresStructuredBackend | DiagnosticCode::ResourceLimit) =>
            {
                d
            }
            Err(e) => return Err(within(e)),
        };
        let program =
            crate::compile_stack::on_compile_stack(|| crate::structured::compile_program(&document, &options))
                .map_err(|e| match (&e, regular.code) {
                    // Too large for one automaton and refused by the structured arm: the size first.
                    (_, DiagnosticCode::ResourceLimit) => within(Error::Schema(regular.clone())),
                    _ => within(e),
                })?;
        if self.holes.len() == MAX_HOLES {
            let message = format!("a template holds at most {MAX_HOLES} JSON parts on the structured arm");
            return Err(invalid(DiagnosticCode::ResourceLimit, &at, "json", message));
        }
        let index = self.holes.len() as u8;
        self.holes.push(Hole { program: Arc::new(program), pointer: at });
        // The value's own whitespace after it, bounded as the part bounds runs.
        let after = Re::repeat(json::whitespace_byte(), 0, options.max_json_whitespace);
        Ok(Re::concat(vec![Re::literal(&[MARKER, index]), after]))
    }

    /// Free text in which the first occurrence of a trigger commits to a tag that begins with it.
    fn tags(&mut self, part: &Map<String, Value>, pointer: &str, depth: usize) -> Result<Re> {
        let at = child(pointer, "tags");
        let Value::Array(listed) = &part["tags"] else {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at, "tags", "\"tags\" is an array of tags"));
        };
        if listed.is_empty() {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at, "tags", "\"tags\" needs a tag"));
        }
        let mut tags = Vec::with_capacity(listed.len());
        for (i, tag) in listed.iter().enumerate() {
            let tag_at = format!("{at}/{i}");
            let Value::Object(tag) = tag else {
                return Err(invalid(DiagnosticCode::InvalidKeywordValue, &tag_at, "tags", "a tag is an object"));
            };
            if let Some(unknown) = tag.keys().find(|k| !["begin", "content", "end"].contains(&k.as_str())) {
                let message = format!("a tag takes begin, content and end, not {unknown:?}");
                return Err(invalid(DiagnosticCode::UnsupportedKeyword, &child(&tag_at, unknown), unknown, message));
            }
            let field = |name: &str| {
                tag.get(name).ok_or_else(|| {
                    invalid(DiagnosticCode::InvalidKeywordValue, &tag_at, name, format!("a tag needs {name:?}"))
                })
            };
            let begin = string(field("begin")?, &child(&tag_at, "begin"), "begin")?;
            let end = string(field("end")?, &child(&tag_at, "end"), "end")?;
            let content = self.part(field("content")?, &child(&tag_at, "content"), depth + 1)?;
            if begin.is_empty() {
                return Err(invalid(DiagnosticCode::InvalidKeywordValue, &child(&tag_at, "begin"), "begin", "empty"));
            }
            tags.push((tag_at, begin, content, end));
        }
        let triggers = match part.get("triggers") {
            Some(value) => strings(value, &child(pointer, "triggers"), "triggers")?,
            None => {
                let mut begins: Vec<&str> = tags.iter().map(|t| t.1).collect();
                begins.sort_unstable();
                begins.dedup();
                begins
            }
        };
        check_triggers(&triggers, &tags, pointer)?;
        let flag = |name: &str| match part.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(DiagnosticCode::InvalidKeywordValue, &child(pointer, name), name, "a boolean")),
        };
        let (at_least_one, stop_after_first) = (flag("at_least_one")?, flag("stop_after_first")?);

        // Text before a tag holds no trigger, and no trigger starts inside it and runs on into the
        // tag's begin: the tag starts at the first trigger (up to the end of `begin`).
        let free = self.text_without(&triggers, pointer)?;
        let any = self.any_text()?;
        let mut alternatives = Vec::with_capacity(tags.len());
        for (_, begin, content, end) in tags {
            let straddling: Vec<Re> = triggers
                .iter()
                .flat_map(|t| (1..t.len()).map(move |k| (&t[..k], &t[k..])))
                .filter(|(_, rest)| begin.starts_with(rest))
                .map(|(head, _)| Re::concat(vec![Re::Dfa(Arc::clone(&any)), Re::literal(head.as_bytes())]))
                .collect();
            let before = if straddling.is_empty() {
                free.clone()
            } else {
                let free = compile(&free, self.options, pointer, "tags")?;
                let straddling = compile(&Re::alt(straddling), self.options, pointer, "tags")?;
                let before = free.difference(&straddling, self.options.limits.max_dfa_states).map_err(|_| {
                    invalid(DiagnosticCode::ResourceLimit, pointer, "tags", "the automaton exceeds max_dfa_states")
                })?;
                Re::Dfa(Arc::new(before))
            };
            alternatives.push(Re::concat(vec![
                before,
                Re::literal(begin.as_bytes()),
                content,
                Re::literal(end.as_bytes()),
            ]));
        }
        let tag = Re::shared(Re::alt(alternatives));
        Ok(match (at_least_one, stop_after_first) {
            (false, false) => Re::concat(vec![Re::repeat(tag, 0, None), free]),
            (true, false) => Re::concat(vec![Re::repeat(tag, 1, None), free]),
            (false, true) => Re::alt(vec![free, tag]),
            (true, true) => tag,
        })
    }
}

/// Triggers are non-empty, distinct, none inside another (the inner one would always commit
/// first), each the start of a tag's begin, and every begin starts with one.
fn check_triggers(triggers: &[&str], tags: &[(String, &str, Re, &str)], pointer: &str) -> Result<()> {
    let at = |i: usize| format!("{pointer}/triggers/{i}");
    for (i, trigger) in triggers.iter().enumerate() {
        if trigger.is_empty() {
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at(i), "triggers", "a trigger is empty"));
        }
        if let Some(other) = triggers.iter().enumerate().find(|&(j, other)| j != i && trigger.contains(other)) {
            let message = if other.1 == trigger {
                format!("trigger {trigger:?} is listed twice")
            } else {
                format!("trigger {trigger:?} contains trigger {:?}, which would always commit first", other.1)
            };
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at(i.max(other.0)), "triggers", message));
        }
        if !tags.iter().any(|tag| tag.1.starts_with(trigger)) {
            let message = format!("no tag begins with trigger {trigger:?}");
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &at(i), "triggers", message));
        }
    }
    for (tag_at, begin, _, _) in tags {
        if !triggers.iter().any(|t| begin.starts_with(t)) {
            let message = format!("begin {begin:?} starts with no trigger");
            return Err(invalid(DiagnosticCode::InvalidKeywordValue, &child(tag_at, "begin"), "begin", message));
        }
    }
    Ok(())
}

fn compile(re: &Re, options: &CompilerOptions, pointer: &str, keyword: &str) -> Result<ByteDfa> {
    let limits = &options.limits;
    re.compile(limits.max_dfa_states, limits.max_nfa_states).map_err(|e| {
        invalid(
            DiagnosticCode::ResourceLimit,
            pointer,
            keyword,
            format!("the template's automaton exceeds a state limit ({e:?})"),
        )
    })
}

fn invalid(code: DiagnosticCode, pointer: &str, keyword: &str, message: impl Into<String>) -> Error {
    Diagnostic::new(code, pointer, message).with_keyword(keyword).into()
}

fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn string<'v>(value: &'v Value, at: &str, keyword: &str) -> Result<&'v str> {
    value.as_str().ok_or_else(|| {
        invalid(
            DiagnosticCode::InvalidKeywordValue,
            at,
            keyword,
            format!("{keyword:?} is a string, not {}", json_type(value)),
        )
    })
}

fn strings<'v>(value: &'v Value, at: &str, keyword: &str) -> Result<Vec<&'v str>> {
    let Value::Array(items) = value else {
        return Err(invalid(
            DiagnosticCode::InvalidKeywordValue,
            at,
            keyword,
            format!("{keyword:?} is an array of strings"),
        ));
    };
    items.iter().enumerate().map(|(i, item)| string(item, &format!("{at}/{i}"), keyword)).collect()
}

fn count(value: Option<&Value>, pointer: &str, keyword: &str) -> Result<Option<u32>> {
    match value {
        None => Ok(None),
        Some(value) => value.as_u64().and_then(|n| u32::try_from(n).ok()).map(Some).ok_or_else(|| {
            let message = format!("{keyword:?} is a count (an integer from 0 to {})", u32::MAX);
            invalid(DiagnosticCode::InvalidKeywordValue, &child(pointer, keyword), keyword, message)
        }),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
