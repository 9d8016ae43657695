//! Schema documents: parsing, draft detection, limits on the input, canonical identity.

pub mod keywords;
pub(crate) mod object;
pub(crate) mod read;
pub mod refs;
pub(crate) mod strings;

use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::options::{CompilerOptions, Draft};

/// A parsed schema document with its draft, and the resources its references reach (the
/// documents a registry served included).
#[derive(Debug, Clone)]
pub struct SchemaDocument {
    root: Value,
    draft: Draft,
    resources: refs::Resources,
}

impl SchemaDocument {
    /// Parses schema text, enforcing the document-size and nesting limits.
    pub fn parse(text: &str, options: &CompilerOptions) -> Result<SchemaDocument> {
        let limits = &options.limits;
        if text.len() > limits.max_document_bytes {
            return Err(Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                "",
                format!("schema document is {} bytes, above the limit of {}", text.len(), limits.max_document_bytes),
            )
            .into());
        }
        // serde_json recurses per nesting level and stops at 128 by default; check the depth on
        // the raw text first so deep documents get our limit's diagnostic.
        check_text_depth(text, limits.max_nesting_depth)?;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        deserializer.disable_recursion_limit();
        let root = serde::Deserialize::deserialize(&mut deserializer)
            .and_then(|v: Value| deserializer.end().map(|_| v))
            .map_err(|e| Diagnostic::new(DiagnosticCode::InvalidJson, "", format!("schema is not valid JSON: {e}")))?;
        SchemaDocument::from_value(root, options)
    }

    /// Wraps a parsed value, choosing the draft from `$schema` or the options' default.
    pub fn from_value(root: Value, options: &CompilerOptions) -> Result<SchemaDocument> {
        if value_depth(&root, options.limits.max_nesting_depth + 1) > options.limits.max_nesting_depth {
            return Err(depth_error(options.limits.max_nesting_depth).into());
        }
        let draft = match root.get("$schema") {
            None => options.default_draft,
            Some(Value::String(uri)) => Draft::from_schema_uri(uri).ok_or_else(|| {
                Diagnostic::new(
                    DiagnosticCode::UnknownDraft,
                    "/$schema",
                    format!("unknown or unsupported draft {uri:?}"),
                )
                .with_keyword("$schema")
            })?,
            Some(_) => {
                return Err(Diagnostic::new(
                    DiagnosticCode::InvalidKeywordValue,
                    "/$schema",
                    "$schema must be a string",
                )
                .with_keyword("$schema")
                .into())
            }
        };
        if !matches!(root, Value::Object(_) | Value::Bool(_)) {
            return Err(Diagnostic::new(
                DiagnosticCode::InvalidKeywordValue,
                "",
                "a schema must be an object or a boolean",
            )
            .into());
        }
        let registry = options.registry.as_ref().map(|r| r.0.as_ref());
        let resources = refs::Resources::build(&root, draft, registry, options.limits.max_document_bytes)?;
        Ok(SchemaDocument { root, draft, resources })
    }

    /// The resources of the document and of those the registry served.
    pub(crate) fn resources(&self) -> &refs::Resources {
        &self.resources
    }

    /// The schema at a location key.
    pub(crate) fn value_at(&self, pointer: &str) -> Option<&Value> {
        self.resources.value_at(&self.root, pointer)
    }

    /// Resolves `reference`, written in the schema at location `pointer`.
    pub(crate) fn resolve(&self, pointer: &str, reference: &str) -> std::result::Result<refs::Target<'_>, String> {
        self.resources.resolve(&self.root, pointer, reference)
    }

    /// The documents the registry served, by URI, as JSON text.
    pub(crate) fn remotes_as_text(&self) -> Vec<(String, String)> {
        self.resources.remotes().map(|(uri, document)| (uri.to_owned(), document.to_string())).collect()
    }

    /// The root schema as parsed (an object or a boolean).
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The draft the root is read under: its `$schema`, else the options' `default_draft`.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// Text with object keys sorted at every level: equal schemas written differently share
    /// one cache entry.
    pub fn canonical_text(&self) -> String {
        self.identity_text(true)
    }

    /// The document and what the registry served, as text: keys sorted (`sorted`), or in the
    /// schema's own order (where `property_order = declared` makes it matter).
    pub fn identity_text(&self, sorted: bool) -> String {
        let write = |value: &Value, out: &mut String| {
            if sorted {
                write_canonical(value, out);
            } else {
                out.push_str(&value.to_string());
            }
        };
        let mut out = String::new();
        write(&self.root, &mut out);
        // What the registry served is part of the program: another answer is another program.
        for (uri, document) in self.resources.remotes() {
            out.push('\n');
            out.push_str(uri);
            out.push('\n');
            write(document, &mut out);
        }
        out
    }
}

fn depth_error(limit: usize) -> Diagnostic {
    Diagnostic::new(DiagnosticCode::ResourceLimit, "", format!("schema nesting is deeper than the limit of {limit}"))
}

fn check_text_depth(text: &str, limit: usize) -> Result<()> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return Err(depth_error(limit).into());
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Depth of a value, counting stops once `cap` is exceeded (iterative: no recursion on hostile input).
fn value_depth(root: &Value, cap: usize) -> usize {
    let mut max = 0;
    let mut stack = vec![(root, 0usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if max >= cap {
            return max;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    max
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write_canonical(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Appends a reference token to a JSON Pointer (RFC 6901 escaping).
pub fn pointer_push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}
