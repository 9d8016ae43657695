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
    ArrayItems, Counts, Dependency, NumericKeywords, Read, Subschema,
};
use super::strings::check_string_keywords;
use crate::error::Diagnostic;
use crate::options::Draft;

/// How an arm lowers one schema, and with it the located subschemas of a [`SchemaObject`].
pub(crate) trait LowerSchema {
    /// What the arm lowers a schema to.
    type Lowered;

    /// Lowers the schema at `pointer`.
    fn lower(&mut self, schema: &Value, pointer: &str) -> Result<Self::Lowered, Diagnostic>;

    fn subschema(&mut self, (schema, pointer): &Subschema) -> Result<Self::Lowered, Diagnostic> {
        self.lower(schema, pointer)
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
    /// `unevaluatedProperties` and `unevaluatedItems` (2019-09 on).
    pub(crate) unevaluated_properties: Option<Subschema<'a>>,
    pub(crate) unevaluated_items: Option<Subschema<'a>>,
}

/// `if`, `then` and `else`.
pub(crate) struct Conditional<'a> {
    pub(crate) condition: Subschema<'a>,
    pub(crate) then: Option<Subschema<'a>>,
    pub(crate) otherwise: Option<Subschema<'a>>,
}

impl<'a> SchemaObject<'a> {
    /// Reads and checks the schema object at `pointer` under `draft`.
    pub(crate) fn read(map: &'a Map<String, Value>, pointer: &str, draft: Draft) -> Read<SchemaObject<'a>> {
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
        Ok(object)
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
        }
    }
}

/// A keyword holding an object of schemas (`properties`, `patternProperties`), in order.
fn schema_map<'a>(map: &'a Map<String, Value>, pointer: &str, keyword: &str) -> Read<Vec<(&'a str, Subschema<'a>)>> {
    match map.get(keyword) {
        None => Ok(Vec::new()),
        Some(Value::Object(entries)) => {
            let base = pointer_push(pointer, keyword);
            Ok(entries.iter().map(|(name, schema)| (name.as_str(), (schema, pointer_push(&base, name)))).collect())
        }
        Some(_) => Err(invalid(pointer, keyword, format!("{keyword} must be an object"))),
    }
}
