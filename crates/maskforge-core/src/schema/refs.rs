//! Resolution of `$ref` within the schema document. External documents (and the base-URI
//! changes of embedded resources) are diagnosed, never guessed.

use serde_json::Value;

use crate::options::Draft;
use crate::schema::pointer_push;

/// The target of a reference: its JSON Pointer in the document and the schema there.
pub(crate) struct Target<'a> {
    pub(crate) pointer: String,
    pub(crate) schema: &'a Value,
}

fn id_keyword(draft: Draft) -> &'static str {
    if draft == Draft::Draft4 {
        "id"
    } else {
        "$id"
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Follows a JSON Pointer fragment (`/a/b`, already without `#`).
fn follow_pointer<'a>(root: &'a Value, fragment: &str) -> Option<Target<'a>> {
    let decoded = percent_decode(fragment)?;
    let mut node = root;
    let mut pointer = String::new();
    if decoded.is_empty() {
        return Some(Target { pointer, schema: root });
    }
    for token in decoded.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
        pointer = pointer_push(&pointer, &token);
    }
    Some(Target { pointer, schema: node })
}

/// Every schema object in the document with its pointer (iterative, document order).
fn schemas_with_pointers(root: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), root)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                out.push((pointer.clone(), value));
                for (k, v) in map.iter().rev() {
                    // Values of enum/const are data, not schemas.
                    if k == "enum" || k == "const" {
                        continue;
                    }
                    stack.push((pointer_push(&pointer, k), v));
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate().rev() {
                    stack.push((pointer_push(&pointer, &i.to_string()), v));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether a schema between the root and `pointer` (excluded the root, included the target)
/// declares its own base URI, so that references inside it resolve against another document.
pub(crate) fn inside_embedded_resource(root: &Value, pointer: &str, draft: Draft) -> bool {
    let id = id_keyword(draft);
    let mut node = root;
    if pointer.is_empty() {
        return false;
    }
    let Some(rest) = pointer.strip_prefix('/') else { return false };
    for token in rest.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => match map.get(&token) {
                Some(v) => v,
                None => return false,
            },
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get(i)) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
        if let Some(Value::String(uri)) = node.get(id) {
            if !uri.starts_with('#') {
                return true;
            }
        }
    }
    false
}

/// Resolves `reference` against the document. `None` when the target is not in this document.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str, draft: Draft) -> Option<Target<'a>> {
    let (base, fragment) = match reference.split_once('#') {
        Some((base, fragment)) => (base, fragment),
        None => (reference, ""),
    };
    let id = id_keyword(draft);
    let root_id = root.get(id).and_then(Value::as_str).map(|s| s.trim_end_matches('#'));
    if !base.is_empty() && Some(base) != root_id {
        return None;
    }
    if fragment.is_empty() || fragment.starts_with('/') {
        return follow_pointer(root, fragment);
    }
    // A plain-name fragment: `$anchor` (2019-09+), `$dynamicAnchor` (2020-12), or an id of the
    // form `#name` (drafts 4-7).
    let name = percent_decode(fragment)?;
    schemas_with_pointers(root).into_iter().find_map(|(pointer, schema)| {
        let named = |k: &str| schema.get(k).and_then(Value::as_str);
        let hit = match draft {
            Draft::Draft4 | Draft::Draft6 | Draft::Draft7 => named(id) == Some(&format!("#{name}")),
            Draft::Draft201909 => named("$anchor") == Some(&name),
            Draft::Draft202012 => named("$anchor") == Some(&name) || named("$dynamicAnchor") == Some(&name),
        };
        hit.then_some(Target { pointer, schema })
    })
}
