//! Lowering of schema keywords into per-type regular languages, from the reading of each schema
//! object that both arms share (`schema::object`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::lang::{self, JsonType, Op, Products, TypeLang, Typed};
use crate::automata::{json, AnyOrderMembers, ByteDfa, Re};
use crate::error::{Diagnostic, DiagnosticCode};
use crate::options::{CompilerOptions, Draft, PropertyOrder};
use crate::schema::object::{Conditional, LowerSchema, SchemaObject};
use crate::schema::read::{self, diag, Position};
use crate::schema::strings::{string_language, StringLanguage, MAX_LENGTH_BOUND};
use crate::schema::{pointer_push, SchemaDocument};

/// Closed objects track the set of members seen, `2^members` states: above this count the
/// object needs the structured backend.
const MAX_ANY_ORDER_MEMBERS: usize = 8;
/// Largest explicit count (string length, item count) unrolled into an automaton.
const MAX_UNROLLED_COUNT: u64 = 256;

type Lowered<T> = Result<T, Diagnostic>;

pub(crate) struct Lowering<'a> {
    document: &'a SchemaDocument,
    draft: Draft,
    options: &'a CompilerOptions,
    /// Lowered schemas by pointer (with a mark for those the `closed_objects` policy closes).
    memo: HashMap<String, Typed>,
    /// Memo keys of the schemas being lowered, to detect recursion through `$ref`.
    active: Vec<String>,
    /// A probe builds no automaton (see [`Lowering::probe`]).
    probing: bool,
    /// Languages determinised for products, by expression: `oneOf` and `not` take the same
    /// branch's automaton once per other branch.
    determinised: foldhash::HashMap<Re, Arc<ByteDfa>>,
}

fn structured(pointer: &str, keyword: &str, message: impl Into<String>) -> Diagnostic {
    diag(DiagnosticCode::RequiresStructuredBackend, pointer, keyword, message)
}

/// The `unevaluatedProperties: false` of the `closed_objects` policy, over what a schema object
/// and the schemas it applies in place admit. A regular object language only comes from closed
/// objects (`additionalProperties` false) and listed values (`enum`, `const`), which evaluate
/// every key of the objects they admit (listed ones by the policy's rule), so it stays as it is;
/// objects nothing constrained need the structured arm, which tracks what each part evaluates.
fn closed_in_place(typed: &mut Typed, pointer: &str) {
    if matches!(typed.slot(JsonType::Object), TypeLang::Any) {
        let d = structured(pointer, "unevaluatedProperties", "evaluated keys are tracked by the structured backend");
        typed.set(JsonType::Object, TypeLang::Unsupported(d));
    }
}

impl LowerSchema for Lowering<'_> {
    type Lowered = Typed;

    fn lower(&mut self, schema: &Value, pointer: &str, position: Position) -> Lowered<Typed> {
        self.schema_at(schema, pointer, position)
    }
}

impl<'a> Lowering<'a> {
    pub(crate) fn new(document: &'a SchemaDocument, options: &'a CompilerOptions) -> Self {
        Lowering {
            document,
            draft: document.draft(),
            options,
            memo: HashMap::new(),
            active: Vec::new(),
            probing: false,
            determinised: foldhash::HashMap::default(),
        }
    }

    /// A lowering that determinises nothing: every product and determinisation stands for a
    /// non-empty language it does not build. It reaches the keywords the regular arm cannot read
    /// in the time of a walk over the schema, where the real lowering may first spend seconds
    /// on automata for the parts before them. Its `RequiresStructuredBackend` is the real one's
    /// unless a product the probe did not build is empty and so excludes the unreadable part:
    /// such schemas go to the structured arm, which is exact too.
    pub(crate) fn probe(document: &'a SchemaDocument, options: &'a CompilerOptions) -> Self {
        Lowering { probing: true, ..Lowering::new(document, options) }
    }

    /// Lowers the root schema, at `pointer`.
    pub(crate) fn schema(&mut self, schema: &Value, pointer: &str) -> Lowered<Typed> {
        self.schema_at(schema, pointer, Position::Value)
    }

    /// Lowers the schema at `pointer`, which applies at `position`.
    fn schema_at(&mut self, schema: &Value, pointer: &str, position: Position) -> Lowered<Typed> {
        let closed = self.options.closed_objects && position == Position::Value;
        let key = if closed { format!("{pointer}\u{2}closed") } else { pointer.to_string() };
        if let Some(done) = self.memo.get(&key) {
            return Ok(done.clone());
        }
        if self.active.len() > self.options.limits.max_nesting_depth {
            return Err(diag(
                DiagnosticCode::ResourceLimit,
                pointer,
                "$ref",
                "schema nesting through references is too deep",
            ));
        }
        self.active.push(key.clone());
        let result = match schema {
            Value::Bool(true) => Ok(Typed::any()),
            Value::Bool(false) => Ok(Typed::nothing()),
            Value::Object(map) => self.object_schema(map, pointer, closed),
            _ => Err(Diagnostic::new(
                DiagnosticCode::InvalidKeywordValue,
                pointer,
                "a schema must be an object or a boolean",
            )),
        };
        self.active.pop();
        let typed = result?.shared();
        self.memo.insert(key, typed.clone());
        Ok(typed)
    }

    fn object_schema(&mut self, map: &Map<String, Value>, pointer: &str, closed: bool) -> Lowered<Typed> {
        let object = SchemaObject::read(map, pointer, self.draft, closed)?;
        if object.reference_only {
            let mut typed = self.reference(&object, pointer)?;
            if object.closed_by_policy {
                closed_in_place(&mut typed, pointer);
            }
            return Ok(typed);
        }
        if let Some(&(keyword, _)) = object.dynamic_references.first() {
            return Err(structured(pointer, keyword, "dynamic references are resolved by the structured backend"));
        }
        let mut typed = self.type_keyword(&object, pointer);
        self.narrow_numbers(&object, pointer, &mut typed);
        self.narrow_strings(&object, pointer, &mut typed)?;
        if typed.admits(JsonType::Object) {
            let language = self.object_language(&object, pointer)?;
            let slot = lang::intersect(self, typed.slot(JsonType::Object), &language)?;
            typed.set(JsonType::Object, slot);
        }
        if typed.admits(JsonType::Array) {
            let language = self.array_language(&object, pointer)?;
            let slot = lang::intersect(self, typed.slot(JsonType::Array), &language)?;
            typed.set(JsonType::Array, slot);
        }
        if let Some(values) = object.enum_values {
            let allowed = self.values_language(values, &pointer_push(pointer, "enum"), "enum");
            typed = lang::intersect_typed(self, &typed, &allowed)?;
        }
        if let Some(value) = object.const_value {
            let allowed = self.values_language(std::slice::from_ref(value), &pointer_push(pointer, "const"), "const");
            typed = lang::intersect_typed(self, &typed, &allowed)?;
        }
        if object.reference.is_some() {
            let target = self.reference(&object, pointer)?;
            typed = lang::intersect_typed(self, &typed, &target)?;
        }
        if let Some(branches) = &object.all_of {
            for branch in &self.subschemas(branches)? {
                typed = lang::intersect_typed(self, &typed, branch)?;
            }
        }
        if let Some(branches) = &object.any_of {
            let any = self.subschemas(branches)?.iter().fold(Typed::nothing(), |acc, b| lang::union_typed(&acc, b));
            typed = lang::intersect_typed(self, &typed, &any)?;
        }
        if let Some(branches) = &object.one_of {
            let branches = self.subschemas(branches)?;
            let exactly_one = self.exactly_one(&branches, &pointer_push(pointer, "oneOf"))?;
            typed = lang::intersect_typed(self, &typed, &exactly_one)?;
        }
        if let Some(negated) = &object.not {
            let negated = self.subschema(negated)?;
            let at = pointer_push(pointer, "not");
            typed = lang::difference_typed(self, &typed, &negated, |t| {
                structured(
                    &at,
                    "not",
                    format!("`not` over unconstrained {} values needs the structured backend", t.name()),
                )
            })?;
        }
        if let Some(conditional) = &object.conditional {
            typed = self.conditional(conditional, pointer, typed)?;
        }
        if object.closed_by_policy && object.unevaluated_properties.is_some() {
            closed_in_place(&mut typed, pointer);
        }
        Ok(typed)
    }

    fn reference(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<Typed> {
        let reference = object.reference.expect("called for a $ref");
        let target = read::reference_target(self.document, pointer, reference)?;
        if self.active.contains(&target.pointer) {
            let at = pointer_push(pointer, "$ref");
            let d = structured(&at, "$ref", format!("recursive reference {reference:?} needs the structured backend"));
            return Ok(Typed { slots: std::array::from_fn(|_| TypeLang::Unsupported(d.clone())) });
        }
        self.schema_at(target.schema, &target.pointer, Position::InPlace)
    }

    fn type_keyword(&mut self, object: &SchemaObject, pointer: &str) -> Typed {
        let Some(names) = &object.types else { return Typed::any() };
        let mut typed = Typed::nothing();
        for name in names {
            match *name {
                "integer" => {
                    if !typed.admits(JsonType::Number) {
                        typed.set(
                            JsonType::Number,
                            TypeLang::Unsupported(structured(
                                pointer,
                                "type",
                                "integers are decided by value (1.0 and 1e2 are integers), which needs the structured backend",
                            )),
                        );
                    }
                }
                "number" => typed.set(JsonType::Number, TypeLang::Any),
                other => {
                    let t = JsonType::ALL.into_iter().find(|t| t.name() == other).expect("type_names checked the name");
                    typed.set(t, TypeLang::Any);
                }
            }
        }
        typed
    }

    fn narrow_strings(&mut self, object: &SchemaObject, pointer: &str, typed: &mut Typed) -> Lowered<()> {
        if !typed.admits(JsonType::String) {
            return Ok(());
        }
        let narrowed = match string_language(object.map, pointer, self.draft, self.options) {
            Ok(StringLanguage::Any) => TypeLang::Any,
            Ok(StringLanguage::Texts(dfa)) if dfa.is_empty_language() => TypeLang::Excluded,
            Ok(StringLanguage::Texts(dfa) | StringLanguage::Bounded { texts: dfa, .. }) => TypeLang::Lang(Re::Dfa(dfa)),
            Ok(StringLanguage::Counted { .. }) => TypeLang::Unsupported(structured(
                pointer,
                "maxLength",
                format!("string length bounds above {MAX_LENGTH_BOUND} are counted by the structured backend"),
            )),
            Ok(StringLanguage::Syntax { .. } | StringLanguage::PatternsAmong(_)) => {
                TypeLang::Unsupported(structured(
                    pointer,
                    "format",
                    "format \"regex\", \"hostname\" and \"idn-hostname\" are read by the structured backend (patterns nest groups to any depth; host names are checked by IDNA2008 label rules)".to_string(),
                ))
            }
            Err(d) if d.code == DiagnosticCode::InvalidKeywordValue => return Err(d),
            // Only an error if strings survive into the final language.
            Err(d) => TypeLang::Unsupported(d),
        };
        let slot = lang::intersect(self, typed.slot(JsonType::String), &narrowed)?;
        typed.set(JsonType::String, slot);
        Ok(())
    }

    fn narrow_numbers(&mut self, object: &SchemaObject, pointer: &str, typed: &mut Typed) {
        if let Some(keyword) = object.numbers.last_keyword.filter(|_| typed.admits(JsonType::Number)) {
            let d = structured(
                pointer,
                keyword,
                format!("{keyword} is decided by numeric value, which needs the structured backend"),
            );
            typed.set(JsonType::Number, TypeLang::Unsupported(d));
        }
    }

    /// The object language of the object keywords (`Any` when there are none).
    fn object_language(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<TypeLang> {
        const OBJECT_KEYWORDS: &[&str] = &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "dependencies",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        ];
        // The `closed_objects` policy may give `additionalProperties` without the keyword (its
        // `unevaluatedProperties` is read in `closed_in_place`).
        if object.additional_properties.is_none() && !OBJECT_KEYWORDS.iter().any(|k| object.has(k)) {
            return Ok(TypeLang::Any);
        }
        if object.property_names.is_some() {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "propertyNames",
                "key constraints are tracked by the structured backend",
            )));
        }
        if object.unevaluated_properties.is_some() && !object.closed_by_policy {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "unevaluatedProperties",
                "evaluated keys are tracked by the structured backend",
            )));
        }
        let dependency_keywords: &[&str] = if self.draft <= Draft::Draft7 {
            &["dependencies"]
        } else {
            &["dependentRequired", "dependentSchemas", "dependencies"]
        };
        if let Some(keyword) = dependency_keywords.iter().find(|k| object.has(k)) {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                keyword,
                "property dependencies are tracked by the structured backend",
            )));
        }
        let (min, max) = (object.counts.min_properties, object.counts.max_properties);
        let required = &object.counts.required;
        let pattern_properties = !object.pattern_properties.is_empty();
        let additional = self.optional(&object.additional_properties)?;
        let closed = additional.as_ref().is_some_and(|a| JsonType::ALL.iter().all(|&t| !a.admits(t)));
        if !closed || pattern_properties {
            // Nothing below can make the object regular, so its properties are left to the
            // structured backend, which reads (and diagnoses) every property schema itself.
            let keyword = if pattern_properties { "patternProperties" } else { "additionalProperties" };
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                keyword,
                "objects open to further properties need the structured backend (this version compiles closed objects: additionalProperties false)",
            )));
        }
        // Lower every property schema now so that malformed ones are diagnosed whatever happens.
        let mut members: Vec<(&str, Typed, &str)> = Vec::new();
        for (name, schema) in &object.properties {
            members.push((name, self.subschema(schema)?, &schema.pointer));
        }
        if max.is_some_and(|max| max < min) || required.iter().any(|r| !members.iter().any(|m| m.0 == r)) {
            return Ok(TypeLang::Excluded);
        }
        let mut alternatives = Vec::new();
        let mut is_required = Vec::new();
        for (name, typed, at) in &members {
            let value = match self.value_language(typed, at) {
                Ok(value) => value,
                Err(d) => return Ok(TypeLang::Unsupported(d)),
            };
            let needed = required.iter().any(|r| r == name);
            if value == Re::Nothing {
                if needed {
                    return Ok(TypeLang::Excluded);
                }
                continue;
            }
            let member = Re::concat(vec![
                json::string_literal(name),
                json::whitespace(),
                Re::literal(b":"),
                json::whitespace(),
                value,
            ]);
            alternatives.push(member);
            is_required.push(needed);
        }
        if alternatives.len() > MAX_ANY_ORDER_MEMBERS {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "properties",
                format!("closed objects with more than {MAX_ANY_ORDER_MEMBERS} properties need the structured backend"),
            )));
        }
        let n = alternatives.len() as u64;
        let max_members = max.unwrap_or(n).min(n);
        if min > max_members {
            return Ok(TypeLang::Excluded);
        }
        let empty_allowed = min == 0 && !is_required.contains(&true);
        let body = if alternatives.is_empty() || max_members == 0 {
            Re::Empty
        } else {
            let members = Re::AnyOrder(Box::new(AnyOrderMembers {
                members: alternatives,
                required: is_required,
                separator: Re::concat(vec![json::whitespace(), Re::literal(b","), json::whitespace()]),
                min_members: min.max(1) as u32,
                max_members: max_members as u32,
                ordered: self.options.property_order == PropertyOrder::Declared,
            }));
            if empty_allowed {
                Re::optional(members)
            } else {
                members
            }
        };
        if body == Re::Empty && !empty_allowed {
            return Ok(TypeLang::Excluded);
        }
        Ok(TypeLang::Lang(Re::concat(vec![
            Re::literal(b"{"),
            json::whitespace(),
            body,
            json::whitespace(),
            Re::literal(b"}"),
        ])))
    }

    /// The array language of the array keywords (`Any` when there are none).
    fn array_language(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<TypeLang> {
        const ARRAY_KEYWORDS: &[&str] = &[
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        ];
        if !ARRAY_KEYWORDS.iter().any(|k| object.has(k)) {
            return Ok(TypeLang::Any);
        }
        if object.unevaluated_items.is_some() {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "unevaluatedItems",
                "evaluated items are tracked by the structured backend",
            )));
        }
        if object.contains.is_some() {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "contains",
                "counting the items that match contains needs the structured backend",
            )));
        }
        let counts = &object.counts;
        let (min, max, unique) = (counts.min_items, counts.max_items, counts.unique_items);
        let items = &object.items;
        let prefix: Vec<(Typed, &str)> =
            items.prefix.iter().map(|s| self.subschema(s).map(|t| (t, s.pointer.as_str()))).collect::<Lowered<_>>()?;
        let rest = self.optional(&items.rest)?;
        let rest_keyword = items.rest_keyword;
        let rest_at = pointer_push(pointer, rest_keyword);
        if max.is_some_and(|max| max < min) {
            return Ok(TypeLang::Excluded);
        }
        // Counts are unrolled into the automaton: large ones need the structured backend, unless
        // no item beyond the prefix can exist anyway.
        let rest_admits_items = rest.as_ref().is_none_or(|r| JsonType::ALL.iter().any(|&t| r.admits(t)));
        let too_large = if min > MAX_UNROLLED_COUNT {
            Some("minItems")
        } else if max.is_some_and(|m| m > MAX_UNROLLED_COUNT) && rest_admits_items {
            Some("maxItems")
        } else {
            None
        };
        if let Some(keyword) = too_large {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                keyword,
                format!("item counts above {MAX_UNROLLED_COUNT} need the structured backend"),
            )));
        }
        if unique && max.is_none_or(|m| m > 1) {
            return Ok(TypeLang::Unsupported(structured(
                pointer,
                "uniqueItems",
                "items compared by value are tracked by the structured backend",
            )));
        }
        let mut positional = Vec::new();
        for (typed, at) in &prefix {
            match self.value_language(typed, at) {
                Ok(re) => positional.push(re),
                Err(d) => return Ok(TypeLang::Unsupported(d)),
            }
        }
        let separator = Re::concat(vec![json::whitespace(), Re::literal(b","), json::whitespace()]);
        // Items beyond the prefix: needed only when the counts allow any.
        let max_total = max.unwrap_or(u64::MAX);
        let rest_needed = max_total > positional.len() as u64;
        let rest_re = if !rest_needed {
            Re::Nothing
        } else {
            match &rest {
                Some(typed) => match self.value_language(typed, &rest_at) {
                    Ok(re) => re,
                    Err(d) => return Ok(TypeLang::Unsupported(d)),
                },
                None => match self.value_language(&Typed::any(), pointer) {
                    Ok(re) => re,
                    Err(_) => {
                        return Ok(TypeLang::Unsupported(structured(
                            pointer,
                            rest_keyword,
                            "arrays of unconstrained items need the structured backend",
                        )))
                    }
                },
            }
        };
        let elements = array_elements(&positional, &rest_re, &separator, min, max);
        if elements == Re::Nothing {
            return Ok(TypeLang::Excluded);
        }
        Ok(TypeLang::Lang(Re::concat(vec![
            Re::literal(b"["),
            json::whitespace(),
            elements,
            json::whitespace(),
            Re::literal(b"]"),
        ])))
    }

    /// The language of exactly one of `branches`.
    fn exactly_one(&mut self, branches: &[Typed], pointer: &str) -> Lowered<Typed> {
        let unsupported = |t: JsonType| {
            structured(
                pointer,
                "oneOf",
                format!("oneOf over unconstrained {} values needs the structured backend", t.name()),
            )
        };
        let mut result = Typed::nothing();
        for (i, branch) in branches.iter().enumerate() {
            let others = branches
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .fold(Typed::nothing(), |acc, (_, b)| lang::union_typed(&acc, b));
            let only_this = lang::difference_typed(self, branch, &others, unsupported)?;
            result = lang::union_typed(&result, &only_this);
        }
        Ok(result)
    }

    /// `if`/`then`/`else`: (if and then) or (not if and else).
    fn conditional(&mut self, conditional: &Conditional, pointer: &str, typed: Typed) -> Lowered<Typed> {
        let condition = self.subschema(&conditional.condition)?;
        let then = self.optional(&conditional.then)?.unwrap_or_else(Typed::any);
        let otherwise = self.optional(&conditional.otherwise)?.unwrap_or_else(Typed::any);
        let at = pointer_push(pointer, "if");
        let when = lang::intersect_typed(self, &condition, &then)?;
        let not_condition = lang::difference_typed(self, &Typed::any(), &condition, |t| {
            structured(&at, "if", format!("if over unconstrained {} values needs the structured backend", t.name()))
        })?;
        let unless = lang::intersect_typed(self, &not_condition, &otherwise)?;
        let either = lang::union_typed(&when, &unless);
        lang::intersect_typed(self, &typed, &either)
    }

    /// The per-type language of a finite set of JSON values (`enum`, `const`).
    fn values_language(&mut self, values: &[Value], pointer: &str, keyword: &str) -> Typed {
        // One alternation per type, built once (folding values in one at a time would copy the
        // growing alternation for each value).
        let mut alternatives: [Vec<Re>; 6] = Default::default();
        let mut typed = Typed::nothing();
        // The strings as one automaton, the trie of their spellings (the structured arm builds
        // the same one): an alternation of each string's spellings would be determinised
        // character by character.
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        if !strings.is_empty() {
            let (max_states, _) = regular_limits(self.options);
            let texts = crate::schema::strings::cached_literal_texts(&strings, self.options.limits.max_dfa_states)
                .filter(|dfa| dfa.state_count() <= max_states);
            typed.set(
                JsonType::String,
                match texts {
                    Some(dfa) => TypeLang::Lang(Re::Dfa(dfa)),
                    None => TypeLang::Unsupported(structured(
                        pointer,
                        keyword,
                        format!("{keyword} strings beyond max_regular_states are read by the structured backend"),
                    )),
                },
            );
        }
        for value in values.iter().filter(|v| !v.is_string()) {
            let t = value_type(value);
            match literal_value(value) {
                Some(re) => alternatives[t as usize].push(re),
                None => {
                    let unsupported = TypeLang::Unsupported(structured(
                        pointer,
                        keyword,
                        format!("{keyword} values containing numbers are compared by numeric value, which needs the structured backend"),
                    ));
                    typed.set(t, unsupported);
                }
            }
        }
        for t in JsonType::ALL {
            let values = std::mem::take(&mut alternatives[t as usize]);
            if !values.is_empty() && !matches!(typed.slot(t), TypeLang::Unsupported(_)) {
                typed.set(t, TypeLang::Lang(Re::alt(values)));
            }
        }
        typed
    }

    /// The JSON texts of every value the schema admits, or why that is not regular.
    pub(crate) fn value_language(&mut self, typed: &Typed, pointer: &str) -> Lowered<Re> {
        let mut alternatives = Vec::new();
        for t in JsonType::ALL {
            match typed.slot(t) {
                TypeLang::Excluded => {}
                TypeLang::Lang(re) => alternatives.push(re.clone()),
                TypeLang::Unsupported(d) => return Err(d.clone()),
                TypeLang::Any => match self.universe(t) {
                    Some(re) => alternatives.push(re),
                    None => {
                        return Err(structured(
                            pointer,
                            "type",
                            format!(
                                "unconstrained {} values nest without bound and need the structured backend",
                                t.name()
                            ),
                        ))
                    }
                },
            }
        }
        Ok(Re::alt(alternatives))
    }

    pub(crate) fn determinise(&mut self, re: &Re, pointer: &str) -> Lowered<ByteDfa> {
        if self.probing {
            return Ok(ByteDfa::universe());
        }
        let limits = &self.options.limits;
        let estimate = re.any_order_estimate();
        if estimate > limits.max_any_order_states as u64 {
            return Err(Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                pointer,
                format!(
                    "a closed object's members in any order are estimated at {estimate} automaton states, above \
                     max_any_order_states ({}): the structured arm reads it",
                    limits.max_any_order_states
                ),
            ));
        }
        let (max_dfa_states, max_nfa_states) = regular_limits(self.options);
        re.compile(max_dfa_states, max_nfa_states).map_err(|limit| {
            let message = match limit {
                crate::automata::CompileLimit::NfaStates(n) => {
                    format!("the schema expands to more than {n} automaton states (max_regular_states): the structured arm reads it")
                }
                crate::automata::CompileLimit::DfaStates(n) => {
                    format!("the schema's automaton exceeds {n} states (max_regular_states): the structured arm reads it")
                }
            };
            Diagnostic::new(DiagnosticCode::ResourceLimit, pointer, message)
        })
    }
}

impl Products for Lowering<'_> {
    fn dfa(&mut self, re: &Re) -> Result<Arc<ByteDfa>, Diagnostic> {
        match re {
            Re::Dfa(dfa) => Ok(Arc::clone(dfa)),
            Re::Shared(inner) => self.dfa(inner),
            other => {
                if let Some(dfa) = self.determinised.get(other) {
                    return Ok(Arc::clone(dfa));
                }
                let dfa = Arc::new(self.determinise(other, "")?);
                self.determinised.insert(other.clone(), Arc::clone(&dfa));
                Ok(dfa)
            }
        }
    }

    fn product(&mut self, a: &ByteDfa, b: &ByteDfa, op: Op) -> Result<ByteDfa, Diagnostic> {
        if self.probing {
            return Ok(ByteDfa::universe());
        }
        let (limit, _) = regular_limits(self.options);
        let result = match op {
            Op::Intersect => a.intersect(b, limit),
            Op::Difference => a.difference(b, limit),
        };
        result.map_err(|e| {
            Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                "",
                format!("the schema's automaton exceeds {} states", e.limit),
            )
        })
    }

    fn universe(&mut self, t: JsonType) -> Option<Re> {
        match t {
            JsonType::Null => Some(json::null()),
            JsonType::Boolean => Some(json::boolean()),
            JsonType::Number => Some(json::number()),
            JsonType::String => Some(Re::Dfa(Arc::clone(json::string_automaton()))),
            JsonType::Array | JsonType::Object => None,
        }
    }
}

/// The state limits of the regular arm's automata: its budget, under the global limits.
fn regular_limits(options: &CompilerOptions) -> (usize, usize) {
    let limits = &options.limits;
    (
        limits.max_dfa_states.min(limits.max_regular_states),
        limits.max_nfa_states.min(limits.max_regular_states.saturating_mul(10)),
    )
}

fn value_type(value: &Value) -> JsonType {
    match value {
        Value::Null => JsonType::Null,
        Value::Bool(_) => JsonType::Boolean,
        Value::Number(_) => JsonType::Number,
        Value::String(_) => JsonType::String,
        Value::Array(_) => JsonType::Array,
        Value::Object(_) => JsonType::Object,
    }
}

/// Every JSON text equal to `value`, or `None` when it contains a number (numbers are equal by
/// value across spellings such as `1`, `1.0` and `10e-1`, which is not a regular language).
fn literal_value(value: &Value) -> Option<Re> {
    let ws = json::whitespace;
    Some(match value {
        Value::Null => json::null(),
        Value::Bool(true) => Re::literal(b"true"),
        Value::Bool(false) => Re::literal(b"false"),
        Value::Number(_) => return None,
        Value::String(s) => json::string_literal(s),
        Value::Array(items) => {
            let mut parts = vec![Re::literal(b"["), ws()];
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    parts.extend([ws(), Re::literal(b","), ws()]);
                }
                parts.push(literal_value(item)?);
            }
            parts.extend([ws(), Re::literal(b"]")]);
            Re::concat(parts)
        }
        Value::Object(map) => {
            if map.len() > MAX_ANY_ORDER_MEMBERS {
                return None;
            }
            let mut members = Vec::new();
            for (k, v) in map {
                members.push(Re::concat(vec![
                    json::string_literal(k),
                    ws(),
                    Re::literal(b":"),
                    ws(),
                    literal_value(v)?,
                ]));
            }
            let n = members.len() as u32;
            let body = if members.is_empty() {
                Re::Empty
            } else {
                Re::AnyOrder(Box::new(AnyOrderMembers {
                    required: vec![true; members.len()],
                    members,
                    separator: Re::concat(vec![ws(), Re::literal(b","), ws()]),
                    min_members: n,
                    max_members: n,
                    ordered: false,
                }))
            };
            Re::concat(vec![Re::literal(b"{"), ws(), body, ws(), Re::literal(b"}")])
        }
    })
}

/// Array elements: `positional[0], positional[1], ...` then `rest` items, with the total count
/// in `min..=max`. Built from the end so that each optional element needs the ones before it.
fn array_elements(positional: &[Re], rest: &Re, separator: &Re, min: u64, max: Option<u64>) -> Re {
    let k = positional.len() as u64;
    let max = max.unwrap_or(u64::MAX);
    // Elements after the first `k`: each preceded by a separator (the first element overall has none).
    let rest_part = |start: u64| -> Re {
        if max <= start || *rest == Re::Nothing {
            return if min > start { Re::Nothing } else { Re::Empty };
        }
        let lo = min.saturating_sub(start) as u32;
        let hi = (max != u64::MAX).then(|| (max - start).min(u32::MAX as u64) as u32);
        if start == 0 {
            Re::Repeat { item: Box::new(rest.clone()), min: lo, max: hi, separator: Some(Box::new(separator.clone())) }
        } else {
            Re::repeat(Re::concat(vec![separator.clone(), rest.clone()]), lo, hi)
        }
    };
    let mut tail = rest_part(k);
    for i in (0..k.min(max)).rev() {
        let element = if i == 0 {
            positional[0].clone()
        } else {
            Re::concat(vec![separator.clone(), positional[i as usize].clone()])
        };
        let sequence = Re::concat(vec![element, tail]);
        tail = if i >= min { Re::optional(sequence) } else { sequence };
    }
    tail
}
