//! The keywords of each draft's vocabularies, so that known-but-unsupported keywords are
//! diagnosed while unknown ones stay annotations.

use crate::options::Draft;

/// Every validation or applicator keyword any supported draft defines.
pub fn is_known_keyword(keyword: &str, draft: Draft) -> bool {
    const COMMON: &[&str] = &[
        "type",
        "enum",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "items",
        "additionalItems",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "required",
        "properties",
        "patternProperties",
        "additionalProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "$ref",
        "format",
    ];
    const DRAFT4: &[&str] = &["dependencies", "definitions", "id"];
    const DRAFT6: &[&str] = &["const", "contains", "propertyNames", "$id", "dependencies", "definitions"];
    const DRAFT7: &[&str] = &["if", "then", "else"];
    const DRAFT2019: &[&str] = &[
        "$defs",
        "$anchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedItems",
        "unevaluatedProperties",
        "minContains",
        "maxContains",
        "definitions",
    ];
    const DRAFT2020: &[&str] = &["prefixItems", "$dynamicRef", "$dynamicAnchor"];
    if COMMON.contains(&keyword) {
        return true;
    }
    match draft {
        Draft::Draft4 => DRAFT4.contains(&keyword),
        Draft::Draft6 => DRAFT6.contains(&keyword),
        Draft::Draft7 => DRAFT6.contains(&keyword) || DRAFT7.contains(&keyword),
        Draft::Draft201909 => DRAFT6.contains(&keyword) || DRAFT7.contains(&keyword) || DRAFT2019.contains(&keyword),
        // `dependencies` left the vocabulary in 2019-09, but schemas written for both still use
        // it: known and honoured rather than silently ignored.
        Draft::Draft202012 => {
            DRAFT6.contains(&keyword)
                || DRAFT7.contains(&keyword)
                || (DRAFT2019.contains(&keyword) && !matches!(keyword, "$recursiveRef" | "$recursiveAnchor"))
                || DRAFT2020.contains(&keyword)
        }
    }
}

/// Known keywords that no backend supports yet: a schema using them is diagnosed wherever they
/// appear. Draft 7 lets `contentEncoding` and `contentMediaType` assert (later drafts made them
/// annotations), so there they are diagnosed rather than ignored.
pub(crate) fn unsupported_everywhere(keyword: &str, draft: Draft) -> bool {
    match keyword {
        "contentEncoding" | "contentMediaType" => draft == Draft::Draft7,
        _ => false,
    }
}
