//! One schema object, read once: every keyword both arms lower, checked for shape and taken
//! under its draft's rules (which keywords exist in which draft, `$ref` siblings, `const`,
//! `if`, numeric and count checks, the forms of `items`), each malformed keyword with its one
//! diagnostic. Both arms lower from a [`SchemaObject`] and read no keyword from the JSON object
//! themselves, so a schema gets the same diagnostic whichever arm compiles it.
//!
//! Keywords are checked in one order: unsupported keywords, `$ref`, then `type`, the numeric
//! keywords, the counting keywords, the string keywords, arrays, objects, `enum`, `const`,
//! references, the applicators and the `unevaluated*` keywords. The first malformed one is the
//! diagnostic, whichever types the schema admits. Subschemas are only located here (value and
//! JSON Pointer); each arm lowers them itself.

use serde_json::{Map, Value};

use super::keywords::{is_known_keyword, unsupported_everywhere};
use super::pointer_push;
use super::read::{
    array_items, counts, dependencies, invalid, numeric_keywords, subschema, subschema_list, type_names, unsupported,
    ArrayItems, Counts, Dependency, NumericKeywords, Position, Read, Subschema,
};
use super::strings::check_string_keywords;
use crate::error::Diagnostic;
use crate::options::Draft;

/// How an arm lowers one schema, and with it the located subschemas of a [`SchemaObject`].
pub(crate) trait LowerSchema {
    /// What the arm lowers a schema to.
    type Lowered;

    /// Lowers the schema at `pointer`, which applies at `position`.
    fn lower(&mut self, schema: &Value, pointer: &str, position: Position) -> Result<Self::Lowered, Diagnostic>;

    fn subschema(&mut self, subschema: &Subschema) -> Result<Self::Lowered, Diagnostic> {
        self.lower(subschema.schema, &subschema.pointer, subschema.position)
    }

    fn subschemas(&mut self, list: &[Subschema]) -> Result<Vec<Self::Lowered>, Diagnostic> {
        list.iter().map(|s| self.subschema(s)).collect()
    }

    fn optional(&mut self, schema: &Option<Subschema>) -> Result<Option<Self::Lowered>, Diagnostic> {
        schema.as_ref().map(|s| self.subschema(s)).transpose()
    }
}

/// A schema object's keywords, read and checked (see the module documentation).
pub(crate) struct SchemaObject<'a> {
    /// The JSON object, for the string keywords (read by `schema::strings`, which builds their
    /// language) and for asking whether a keyword is present at all.
    pub(crate) map: &'a Map<String, Value>,
    /// `$ref`, a string.
    pub(crate) reference: Option<&'a str>,
    /// Before 2019-09, `$ref` makes its siblings ignored: nothing else was read.
    pub(crate) reference_only: bool,
    /// `$dynamicRef` (2020-12) and `$recursiveRef` (2019-09), in that order, where the draft
    /// knows them: the keyword and the reference.
    pub(crate) dynamic_references: Vec<(&'static str, &'a str)>,
    /// The names of `type`; `None` without the keyword.
    pub(crate) types: Option<Vec<&'a str>>,
    pub(crate) numbers: NumericKeywords,
    pub(crate) counts: Counts,
    pub(crate) items: ArrayItems<'a>,
    /// `contains` (draft 6 on).
    pub(crate) contains: Option<Subschema<'a>>,
    /// `properties`, in the document's order.
    pub(crate) properties: Vec<(&'a str, Subschema<'a>)>,
    /// `patternProperties`, in the document's order: the pattern and its schema.
    pub(crate) pattern_properties: Vec<(&'a str, Subschema<'a>)>,
    pub(crate) additional_properties: Option<Subschema<'a>>,
    /// `propertyNames` (draft 6 on).
    pub(crate) property_names: Option<Subschema<'a>>,
    /// The property dependencies in the forms the draft knows (see [`dependencies`]).
    pub(crate) dependencies: Vec<(String, Dependency<'a>)>,
    /// `enum`, an array.
    pub(crate) enum_values: Option<&'a [Value]>,
    /// `const` (draft 6 on; before, an annotation).
    pub(crate) const_value: Option<&'a Value>,
    pub(crate) all_of: Option<Vec<Subschema<'a>>>,
    pub(crate) any_of: Option<Vec<Subschema<'a>>>,
    pub(crate) one_of: Option<Vec<Subschema<'a>>>,
    pub(crate) not: Option<Subschema<'a>>,
    /// `if` with `then` and `else` (draft 7 on, and only with `if`).
    pub(crate) conditional: Option<Conditional<'a>>,
    /// `unevaluatedProperties` and `unevaluatedItems` (2019-09 on); under the `closed_objects`
    /// policy, `unevaluatedProperties` may be the policy's `false` (see [`SchemaObject::close`]).
    pub(crate) unevaluated_properties: Option<Subschema<'a>>,
    pub(crate) unevaluated_items: Option<Subschema<'a>>,
    /// The `closed_objects` policy gave the object a `false` schema for the keys nothing in it
    /// declares (as `additionalProperties` or `unevaluatedProperties`).
    pub(crate) closed_by_policy: bool,
}

/// The schema the `closed_objects` policy gives to keys nothing declares.
static FALSE: Value = Value::Bool(false);

/// The name of the `closed_objects` policy, the keyword of the diagnostics it causes.
pub(crate) const CLOSED_OBJECTS: &str = "closed_objects";

/// The pointer of the schema the `closed_objects` policy adds to the schema object at
/// `pointer`: it names the policy and is no location (`~c` escapes nothing in a JSON Pointer, so
/// no schema of the document has it).
fn closing_pointer(pointer: &str) -> String {
    format!("{pointer}/~{CLOSED_OBJECTS}")
}

/// The schema object whose [`closing_pointer`] `pointer` is, if it is one.
pub(crate) fn closed_object_of(pointer: &str) -> Option<&str> {
    pointer.strip_suffix(CLOSED_OBJECTS)?.strip_suffix("/~")
}

/// `if`, `then` and `else`.
pub(crate) struct Conditional<'a> {
    pub(crate) condition: Subschema<'a>,
    pub(crate) then: Option<Subschema<'a>>,
    pub(crate) otherwise: Option<Subschema<'a>>,
}

impl<'a> SchemaObject<'a> {
    /// Reads and checks the schema object at `pointer` under `draft`; `closed`: the
    /// `closed_objects` policy applies to it (the policy is on and the schema stands at a value
    /// position, see [`Position`]).
    pub(crate) fn read(
        map: &'a Map<String, Value>,
        pointer: &str,
        draft: Draft,
        closed: bool,
    ) -> Read<SchemaObject<'a>> {
        if let Some(keyword) = map.keys().find(|k| unsupported_everywhere(k, draft)) {
            return Err(unsupported(pointer, keyword));
        }
        let reference = match map.get("$ref") {
            None => None,
            Some(Value::String(reference)) => Some(reference.as_str()),
            Some(_) => return Err(invalid(pointer, "$ref", "$ref must be a string")),
        };
        let mut object = SchemaObject::only_reference(map, reference);
        if reference.is_some() && draft < Draft::Draft201909 {
            object.reference_only = true;
            if closed {
                object.close(pointer, draft);
            }
            return Ok(object);
        }
        object.types = type_names(map, pointer)?;
        object.numbers = numeric_keywords(map, pointer, draft)?;
        object.counts = counts(map, pointer, draft)?;
        check_string_keywords(map, pointer, draft)?;
        object.items = array_items(map, pointer, draft)?;
        object.contains = subschema(map, pointer, "contains").filter(|_| draft >= Draft::Draft6);
        object.properties = schema_map(map, pointer, "properties")?;
        object.pattern_properties = schema_map(map, pointer, "patternProperties")?;
        object.additional_properties = subschema(map, pointer, "additionalProperties");
        object.property_names = subschema(map, pointer, "propertyNames").filter(|_| draft >= Draft::Draft6);
        object.dependencies = dependencies(map, pointer, draft)?;
        object.enum_values = match map.get("enum") {
            None => None,
            Some(Value::Array(values)) => Some(values.as_slice()),
            Some(_) => return Err(invalid(pointer, "enum", "enum must be an array")),
        };
        object.const_value = map.get("const").filter(|_| draft >= Draft::Draft6);
        for keyword in ["$dynamicRef", "$recursiveRef"] {
            match map.get(keyword) {
                Some(_) if !is_known_keyword(keyword, draft) => {}
                None => {}
                Some(Value::String(reference)) => object.dynamic_references.push((keyword, reference.as_str())),
                Some(_) => return Err(invalid(pointer, keyword, format!("{keyword} must be a string"))),
            }
        }
        object.all_of = subschema_list(map, pointer, "allOf")?;
        object.any_of = subschema_list(map, pointer, "anyOf")?;
        object.one_of = subschema_list(map, pointer, "oneOf")?;
        object.not = subschema(map, pointer, "not");
        if draft >= Draft::Draft7 {
            object.conditional = subschema(map, pointer, "if").map(|condition| Conditional {
                condition,
                then: subschema(map, pointer, "then"),
                otherwise: subschema(map, pointer, "else"),
            });
        }
        if draft >= Draft::Draft201909 {
            object.unevaluated_properties = subschema(map, pointer, "unevaluatedProperties");
            object.unevaluated_items = subschema(map, pointer, "unevaluatedItems");
        }
        if closed {
            object.close(pointer, draft);
        }
        Ok(object)
    }

    /// The `closed_objects` policy: the object behaves as if it had `"unevaluatedProperties":
    /// false`, whatever its draft, unless it has an `unevaluatedProperties` of its own, says
    /// nothing (no keyword of its draft but identifiers and `$defs`/`definitions`: `{}`, or
    /// annotations only), or lists its values in full (`enum`, `const`). Without an in-place
    /// applicator that could evaluate keys (`$ref`, `$dynamicRef`, `$recursiveRef`, `allOf`,
    /// `anyOf`, `oneOf`, `if`, dependent schemas), that is `"additionalProperties": false` when it
    /// has no `additionalProperties` (and nothing when it has one): both arms compile that form
    /// directly, the regular one included.
    fn close(&mut self, pointer: &str, draft: Draft) {
        const STRUCTURAL: &[&str] =
            &["$defs", "definitions", "$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"];
        let says_something = self.map.keys().any(|k| is_known_keyword(k, draft) && !STRUCTURAL.contains(&k.as_str()));
        let listed = self.enum_values.is_some() || self.const_value.is_some();
        if self.unevaluated_properties.is_some() || !says_something || listed {
            return;
        }
        let in_place = self.reference.is_some()
            || !self.dynamic_references.is_empty()
            || self.all_of.is_some()
            || self.any_of.is_some()
            || self.one_of.is_some()
            || self.conditional.is_some()
            || self.dependencies.iter().any(|(_, d)| matches!(d, Dependency::Schema(_)));
        let closing = Subschema { schema: &FALSE, pointer: closing_pointer(pointer), position: Position::Value };
        if in_place {
            self.unevaluated_properties = Some(closing);
        } else if self.additional_properties.is_none() {
            self.additional_properties = Some(closing);
        } else {
            return;
        }
        self.closed_by_policy = true;
    }

    /// Whether the keyword is in the object, whatever its value and draft.
    pub(crate) fn has(&self, keyword: &str) -> bool {
        self.map.contains_key(keyword)
    }

    fn only_reference(map: &'a Map<String, Value>, reference: Option<&'a str>) -> SchemaObject<'a> {
        SchemaObject {
            map,
            reference,
            reference_only: false,
            dynamic_references: Vec::new(),
            types: None,
            numbers: NumericKeywords::default(),
            counts: Counts::default(),
            items: ArrayItems::default(),
            contains: None,
            properties: Vec::new(),
            pattern_properties: Vec::new(),
            additional_properties: None,
            property_names: None,
            dependencies: Vec::new(),
            enum_values: None,
            const_value: None,
            all_of: None,
            any_of: None,
            one_of: None,
            not: None,
            conditional: None,
            unevaluated_properties: None,
            unevaluated_items: None,
            closed_by_policy: false,
        }
    }
}

/// A keyword holding an object of schemas (`properties`, `patternProperties`), in order.
fn schema_map<'a>(map: &'a Map<String, Value>, pointer: &str, keyword: &str) -> Read<Vec<(&'a str, Subschema<'a>)>> {
    match map.get(keyword) {
        None => Ok(Vec::new()),
        Some(Value::Object(entries)) => {
            let base = pointer_push(pointer, keyword);
            Ok(entries
                .iter()
                .map(|(name, schema)| (name.as_str(), Subschema::new(schema, pointer_push(&base, name), keyword)))
                .collect())
        }
        Some(_) => Err(invalid(pointer, keyword, format!("{keyword} must be an object"))),
    }
}
