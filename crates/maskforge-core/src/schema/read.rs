//! Reading keyword values: shape checks and diagnostics shared by both arms, so that a
//! malformed keyword gets the same diagnostic whichever arm compiles the schema.

use serde_json::{Map, Value};

use super::pointer_push;
use super::refs::Target;
use super::SchemaDocument;
use crate::error::{Diagnostic, DiagnosticCode};
use crate::numbers::Decimal;
use crate::options::Draft;

pub(crate) type Read<T> = Result<T, Diagnostic>;

/// A subschema, its JSON Pointer and where it applies.
#[derive(Debug, Clone)]
pub(crate) struct Subschema<'a> {
    pub(crate) schema: &'a Value,
    pub(crate) pointer: String,
    pub(crate) position: Position,
}

impl<'a> Subschema<'a> {
    /// The subschema `schema` at `pointer`, held by `keyword`.
    pub(crate) fn new(schema: &'a Value, pointer: String, keyword: &str) -> Subschema<'a> {
        Subschema { schema, pointer, position: Position::of(keyword) }
    }
}

/// Where a subschema applies: to another value (a member or an item of the instance), or to the
/// instance itself, in place. Only the `closed_objects` policy asks: it closes the schemas at
/// value positions, which see the annotations of everything they apply in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Position {
    /// The root, and the schemas of `properties`, `patternProperties`, `additionalProperties`,
    /// `unevaluatedProperties`, `items`, `prefixItems`, `additionalItems`, `contains` and
    /// `unevaluatedItems`.
    Value,
    /// The schemas of `allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`,
    /// `dependentSchemas`, `dependencies` and `propertyNames`, and every reference target
    /// (`$ref`, `$dynamicRef`, `$recursiveRef`; `$defs` are reached through them).
    InPlace,
}

impl Position {
    /// Where the schemas of `keyword` apply.
    pub(crate) fn of(keyword: &str) -> Position {
        match keyword {
            "properties"
            | "patternProperties"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "prefixItems"
            | "additionalItems"
            | "contains"
            | "unevaluatedItems" => Position::Value,
            _ => Position::InPlace,
        }
    }
}

pub(crate) fn diag(code: DiagnosticCode, pointer: &str, keyword: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, pointer, message).with_keyword(keyword)
}

/// A keyword whose value has the wrong type or shape (pointer at the keyword).
pub(crate) fn invalid(pointer: &str, keyword: &str, message: impl Into<String>) -> Diagnostic {
    diag(DiagnosticCode::InvalidKeywordValue, &pointer_push(pointer, keyword), keyword, message)
}

/// A known keyword this version does not support (pointer at the keyword).
pub(crate) fn unsupported(pointer: &str, keyword: &str) -> Diagnostic {
    diag(
        DiagnosticCode::UnsupportedKeyword,
        &pointer_push(pointer, keyword),
        keyword,
        format!("{keyword} is not supported yet"),
    )
}

/// A keyword holding one schema.
pub(crate) fn subschema<'a>(map: &'a Map<String, Value>, pointer: &str, keyword: &str) -> Option<Subschema<'a>> {
    map.get(keyword).map(|value| Subschema::new(value, pointer_push(pointer, keyword), keyword))
}

/// A keyword holding a non-empty array of schemas (`allOf`, `anyOf`, `oneOf`).
pub(crate) fn subschema_list<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    keyword: &str,
) -> Read<Option<Vec<Subschema<'a>>>> {
    let Some(value) = map.get(keyword) else { return Ok(None) };
    let list = schema_array(value, pointer, keyword)?;
    if list.is_empty() {
        return Err(invalid(pointer, keyword, format!("{keyword} must not be empty")));
    }
    Ok(Some(list))
}

fn schema_array<'a>(value: &'a Value, pointer: &str, keyword: &str) -> Read<Vec<Subschema<'a>>> {
    let Value::Array(items) = value else {
        return Err(invalid(pointer, keyword, format!("{keyword} must be an array of schemas")));
    };
    let base = pointer_push(pointer, keyword);
    Ok(items.iter().enumerate().map(|(i, s)| Subschema::new(s, pointer_push(&base, &i.to_string()), keyword)).collect())
}

/// A non-negative integer keyword (draft 6+ accepts integral decimals such as `2.0`).
pub(crate) fn count(map: &Map<String, Value>, pointer: &str, keyword: &str, draft: Draft) -> Read<Option<u64>> {
    let Some(value) = map.get(keyword) else { return Ok(None) };
    let number = value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && draft >= Draft::Draft6)
            .map(|f| f.min(u64::MAX as f64) as u64)
    });
    number.map(Some).ok_or_else(|| invalid(pointer, keyword, format!("{keyword} must be a non-negative integer")))
}

/// The numeric keywords of a schema object, checked and read as exact decimals.
#[derive(Debug, Default)]
pub(crate) struct NumericKeywords {
    /// `minimum`, `exclusiveMinimum` (a bound, or in draft 4 the flag on `minimum`), the
    /// stricter of them; `true`: exclusive.
    pub(crate) minimum: Option<(Decimal, bool)>,
    /// Likewise for the maximum.
    pub(crate) maximum: Option<(Decimal, bool)>,
    /// `multipleOf`, greater than zero.
    pub(crate) multiple_of: Option<Decimal>,
    /// The last keyword present that constrains the value (not a draft 4 flag alone), for the
    /// diagnostics of an arm that cannot read numbers by value.
    pub(crate) last_keyword: Option<&'static str>,
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`: numbers (in
/// draft 4 the exclusive ones are booleans), `multipleOf` above zero.
pub(crate) fn numeric_keywords(map: &Map<String, Value>, pointer: &str, draft: Draft) -> Read<NumericKeywords> {
    let mut read = NumericKeywords::default();
    let mut decimal = |keyword: &'static str| -> Read<Option<Decimal>> {
        match map.get(keyword) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                read.last_keyword = Some(keyword);
                Decimal::parse(&n.to_string()).map(Some).ok_or_else(|| invalid(pointer, keyword, "not a number"))
            }
            Some(_) => Err(invalid(pointer, keyword, format!("{keyword} must be a number"))),
        }
    };
    let minimum = decimal("minimum")?.map(|d| (d, false));
    let maximum = decimal("maximum")?.map(|d| (d, false));
    let (minimum, maximum) = if draft == Draft::Draft4 {
        let mut flagged = [minimum, maximum];
        for (keyword, bound) in ["exclusiveMinimum", "exclusiveMaximum"].into_iter().zip(&mut flagged) {
            match map.get(keyword) {
                None => {}
                Some(Value::Bool(exclusive)) => {
                    if let Some(b) = bound.as_mut() {
                        b.1 = *exclusive;
                    }
                }
                Some(_) => return Err(invalid(pointer, keyword, format!("{keyword} must be a boolean in draft 4"))),
            }
        }
        let [minimum, maximum] = flagged;
        (minimum, maximum)
    } else {
        let exclusive_minimum = decimal("exclusiveMinimum")?;
        let exclusive_maximum = decimal("exclusiveMaximum")?;
        (
            match exclusive_minimum {
                Some(d) => Some(stricter_minimum(minimum, (d, true))),
                None => minimum,
            },
            match exclusive_maximum {
                Some(d) => Some(stricter_maximum(maximum, (d, true))),
                None => maximum,
            },
        )
    };
    let multiple_of = decimal("multipleOf")?;
    if multiple_of.as_ref().is_some_and(|m| *m <= Decimal::zero()) {
        return Err(invalid(pointer, "multipleOf", "multipleOf must be greater than 0"));
    }
    Ok(NumericKeywords { minimum, maximum, multiple_of, ..read })
}

fn stricter_minimum(current: Option<(Decimal, bool)>, candidate: (Decimal, bool)) -> (Decimal, bool) {
    match current {
        Some(c) if c.0 > candidate.0 || (c.0 == candidate.0 && c.1) => c,
        _ => candidate,
    }
}

fn stricter_maximum(current: Option<(Decimal, bool)>, candidate: (Decimal, bool)) -> (Decimal, bool) {
    match current {
        Some(c) if c.0 < candidate.0 || (c.0 == candidate.0 && c.1) => c,
        _ => candidate,
    }
}

/// The counting keywords of arrays and objects, checked whether or not the schema admits
/// arrays or objects.
#[derive(Debug)]
pub(crate) struct Counts {
    pub(crate) min_items: u64,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique_items: bool,
    /// `minContains` (2019-09 on; 1 without it) and `maxContains`.
    pub(crate) min_contains: u64,
    pub(crate) max_contains: Option<u64>,
    pub(crate) min_properties: u64,
    pub(crate) max_properties: Option<u64>,
    pub(crate) required: Vec<String>,
}

impl Default for Counts {
    /// No counting keyword: any number of items and properties, `contains` matched once.
    fn default() -> Self {
        Counts {
            min_items: 0,
            max_items: None,
            unique_items: false,
            min_contains: 1,
            max_contains: None,
            min_properties: 0,
            max_properties: None,
            required: Vec::new(),
        }
    }
}

pub(crate) fn counts(map: &Map<String, Value>, pointer: &str, draft: Draft) -> Read<Counts> {
    let (min_contains, max_contains) = if draft >= Draft::Draft201909 {
        (count(map, pointer, "minContains", draft)?.unwrap_or(1), count(map, pointer, "maxContains", draft)?)
    } else {
        (1, None)
    };
    Ok(Counts {
        min_items: count(map, pointer, "minItems", draft)?.unwrap_or(0),
        max_items: count(map, pointer, "maxItems", draft)?,
        unique_items: unique_items(map, pointer)?,
        min_contains,
        max_contains,
        min_properties: count(map, pointer, "minProperties", draft)?.unwrap_or(0),
        max_properties: count(map, pointer, "maxProperties", draft)?,
        required: required_names(map, pointer)?,
    })
}

/// The names of `type`, each one of the seven JSON Schema types; `None` without the keyword.
pub(crate) fn type_names<'a>(map: &'a Map<String, Value>, pointer: &str) -> Read<Option<Vec<&'a str>>> {
    const NAMES: [&str; 7] = ["null", "boolean", "number", "integer", "string", "array", "object"];
    let Some(value) = map.get("type") else { return Ok(None) };
    let bad = || invalid(pointer, "type", "type must be a string or an array of strings");
    let names: Vec<&str> = match value {
        Value::String(name) => vec![name.as_str()],
        Value::Array(items) => items.iter().map(|v| v.as_str().ok_or_else(bad)).collect::<Read<_>>()?,
        _ => return Err(bad()),
    };
    if let Some(unknown) = names.iter().find(|n| !NAMES.contains(n)) {
        return Err(invalid(pointer, "type", format!("unknown type {unknown:?}")));
    }
    Ok(Some(names))
}

/// The names of `required`.
fn required_names(map: &Map<String, Value>, pointer: &str) -> Read<Vec<String>> {
    let bad = || invalid(pointer, "required", "required must be an array of strings");
    match map.get("required") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(|v| v.as_str().map(str::to_string).ok_or_else(bad)).collect(),
        Some(_) => Err(bad()),
    }
}

/// The value of `uniqueItems` (false without the keyword).
fn unique_items(map: &Map<String, Value>, pointer: &str) -> Read<bool> {
    match map.get("uniqueItems") {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(pointer, "uniqueItems", "uniqueItems must be a boolean")),
    }
}

/// Positional item schemas and the schema of the items after them, by draft: `prefixItems` and
/// `items` from 2020-12; before, `items` as an array with `additionalItems`, or `items` alone.
pub(crate) struct ArrayItems<'a> {
    pub(crate) prefix: Vec<Subschema<'a>>,
    pub(crate) rest: Option<Subschema<'a>>,
    /// The keyword `rest` comes from, for diagnostics.
    pub(crate) rest_keyword: &'static str,
}

impl Default for ArrayItems<'_> {
    /// No item keyword.
    fn default() -> Self {
        ArrayItems { prefix: Vec::new(), rest: None, rest_keyword: "items" }
    }
}

pub(crate) fn array_items<'a>(map: &'a Map<String, Value>, pointer: &str, draft: Draft) -> Read<ArrayItems<'a>> {
    let (prefix_keyword, rest_keyword) = if draft >= Draft::Draft202012 {
        (Some("prefixItems"), "items")
    } else if matches!(map.get("items"), Some(Value::Array(_))) {
        (Some("items"), "additionalItems")
    } else {
        (None, "items")
    };
    let prefix = match prefix_keyword.and_then(|k| map.get(k).map(|v| (k, v))) {
        Some((keyword, value)) => schema_array(value, pointer, keyword)?,
        None => Vec::new(),
    };
    Ok(ArrayItems { prefix, rest: subschema(map, pointer, rest_keyword), rest_keyword })
}

/// The target of a `$ref` (in the document or one the registry served), or why there is none.
pub(crate) fn reference_target<'a>(document: &'a SchemaDocument, pointer: &str, reference: &str) -> Read<Target<'a>> {
    document
        .resolve(pointer, reference)
        .map_err(|message| diag(DiagnosticCode::UnresolvedReference, &pointer_push(pointer, "$ref"), "$ref", message))
}

/// What the presence of one property brings along (`dependencies`, `dependentRequired`,
/// `dependentSchemas`).
pub(crate) enum Dependency<'a> {
    /// Further property names the object must then have.
    Required(Vec<String>),
    /// A schema the whole object must then satisfy.
    Schema(Subschema<'a>),
}

/// The dependencies a schema object declares, by triggering property, in the forms its draft
/// knows: `dependencies` (either form) up to draft 7, `dependentRequired` and
/// `dependentSchemas` from 2019-09 (beside `dependencies`, still honoured).
pub(crate) fn dependencies<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    draft: Draft,
) -> Read<Vec<(String, Dependency<'a>)>> {
    // Draft 7's `dependencies` is honoured in later drafts too, as their schemas still use it
    // (the official suite's compatibility tests expect this).
    let keywords: &[&str] = if draft <= Draft::Draft7 {
        &["dependencies"]
    } else {
        &["dependentRequired", "dependentSchemas", "dependencies"]
    };
    let mut out = Vec::new();
    for &keyword in keywords {
        let Some(value) = map.get(keyword) else { continue };
        let Value::Object(entries) = value else {
            return Err(invalid(pointer, keyword, format!("{keyword} must be an object")));
        };
        let base = pointer_push(pointer, keyword);
        for (property, dependency) in entries {
            let at = pointer_push(&base, property);
            let names = |list: &Vec<Value>| -> Read<Vec<String>> {
                list.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>().ok_or_else(|| {
                    diag(DiagnosticCode::InvalidKeywordValue, &at, keyword, "a dependency list holds property names")
                })
            };
            let dependency = match (keyword, dependency) {
                ("dependentRequired", Value::Array(list)) | ("dependencies", Value::Array(list)) => {
                    Dependency::Required(names(list)?)
                }
                ("dependentSchemas", Value::Object(_) | Value::Bool(_))
                | ("dependencies", Value::Object(_) | Value::Bool(_)) => {
                    Dependency::Schema(Subschema::new(dependency, at.clone(), keyword))
                }
                _ => {
                    let message = format!("{keyword} values must be property lists or schemas");
                    return Err(diag(DiagnosticCode::InvalidKeywordValue, &at, keyword, message));
                }
            };
            out.push((property.clone(), dependency));
        }
    }
    Ok(out)
}
