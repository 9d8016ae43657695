//! Resolution of `$ref`: base URIs from `$id` (`id` in draft 4), plain-name anchors (`$anchor`,
//! `$dynamicAnchor`, and `#name` ids before 2019-09), JSON Pointer fragments, and documents that
//! a [`SchemaRegistry`] serves. Nothing is fetched from the network.
//!
//! Every schema location has a key: its JSON Pointer in the schema document (`""`, `/a/b`), or
//! `uri#pointer` in a document the registry served. Lowerings memoise nodes by that key.

use std::collections::HashMap;

use serde_json::Value;
use url::Url;

use crate::error::{Diagnostic, DiagnosticCode};
use crate::options::Draft;
use crate::registry::SchemaRegistry;
use crate::schema::pointer_push;

/// The base URI of a schema document without `$id`: relative references resolve against it,
/// and a registry may serve what they name.
const DEFAULT_BASE: &str = "json-schema:///";

/// Most documents one compilation loads through the registry.
const MAX_DOCUMENTS: usize = 64;

/// The target of a reference: its location key and the schema there.
pub(crate) struct Target<'a> {
    pub(crate) pointer: String,
    pub(crate) schema: &'a Value,
}

/// A document the registry served.
#[derive(Debug, Clone)]
struct Remote {
    uri: String,
    root: Value,
}

/// The resources of a schema document and of the documents its references reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resources {
    remotes: Vec<Remote>,
    /// Base URI of each schema location that is a resource root or below one.
    bases: HashMap<String, Url>,
    /// Location of each schema resource, by absolute URI without fragment.
    resources: HashMap<String, String>,
    /// Location of each plain-name anchor, by resource URI and name.
    anchors: HashMap<(String, String), String>,
    /// `$dynamicAnchor`s of each resource (by URI): name and location, in document order.
    dynamic_anchors: HashMap<String, Vec<(String, String)>>,
    /// Whether the schema uses `$dynamicRef` or `$recursiveRef` anywhere.
    pub(crate) dynamic: bool,
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

/// `uri` without its fragment.
fn without_fragment(uri: &Url) -> String {
    let mut uri = uri.clone();
    uri.set_fragment(None);
    uri.to_string()
}

/// The keywords whose values are schemas (maps of them, lists of them, or one), so that `$id`s
/// are only read where they identify schemas (not inside `enum` or unknown keywords).
/// Each is given with the pointer token below the keyword (`None`: the keyword's value itself).
fn subschemas<'a>(key: &str, value: &'a Value) -> Vec<(Option<String>, &'a Value)> {
    match (key, value) {
        ("properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas", Value::Object(m)) => {
            m.iter().map(|(k, v)| (Some(k.clone()), v)).collect()
        }
        ("dependencies", Value::Object(m)) => {
            m.iter().filter(|(_, v)| v.is_object() || v.is_boolean()).map(|(k, v)| (Some(k.clone()), v)).collect()
        }
        ("allOf" | "anyOf" | "oneOf" | "prefixItems" | "items", Value::Array(list)) => {
            list.iter().enumerate().map(|(i, v)| (Some(i.to_string()), v)).collect()
        }
        (
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "not"
            | "contentSchema",
            _,
        ) => vec![(None, value)],
        _ => Vec::new(),
    }
}

impl Resources {
    /// Indexes `root` and loads, through `registry`, every document its references reach.
    pub(crate) fn build(
        root: &Value,
        draft: Draft,
        registry: Option<&dyn SchemaRegistry>,
        max_bytes: usize,
    ) -> Result<Resources, Diagnostic> {
        let mut resources = Resources::default();
        let base = Url::parse(DEFAULT_BASE).expect("the default base URI parses");
        resources.index(root, "", base, draft);
        let mut loaded_bytes = 0usize;
        let mut scanned = 0usize;
        // Documents indexed so far (the schema, then each remote) are scanned for references
        // to resources not indexed yet.
        loop {
            let mut wanted: Vec<String> = Vec::new();
            let documents: Vec<(String, Value)> = std::iter::once((String::new(), root.clone()))
                .chain(resources.remotes.iter().map(|r| (format!("{}#", r.uri), r.root.clone())))
                .collect();
            for (prefix, document) in documents.iter().skip(scanned) {
                for (location, reference) in references(document, prefix) {
                    let Some(base) = resources.base_of(&location) else { continue };
                    let Ok(target) = base.join(&reference) else { continue };
                    let uri = without_fragment(&target);
                    if !resources.resources.contains_key(&uri) && !wanted.contains(&uri) {
                        wanted.push(uri);
                    }
                }
            }
            scanned = documents.len();
            let mut loaded_any = false;
            for uri in wanted {
                let fetched = match bundled_metaschema(&uri) {
                    Some(text) => Ok(Some(text.to_string())),
                    None => registry.map_or(Ok(None), |registry| registry.fetch(&uri)),
                };
                let text = match fetched {
                    Ok(Some(text)) => text,
                    Ok(None) => continue,
                    Err(message) => {
                        return Err(Diagnostic::new(
                            DiagnosticCode::UnresolvedReference,
                            "",
                            format!("the registry failed on {uri:?}: {message}"),
                        ))
                    }
                };
                loaded_bytes += text.len();
                if resources.remotes.len() >= MAX_DOCUMENTS || loaded_bytes > max_bytes {
                    return Err(Diagnostic::new(
                        DiagnosticCode::ResourceLimit,
                        "",
                        format!("references load more than {MAX_DOCUMENTS} documents or {max_bytes} bytes"),
                    ));
                }
                let document: Value = serde_json::from_str(&text).map_err(|e| {
                    Diagnostic::new(DiagnosticCode::InvalidJson, "", format!("the registry's {uri:?} is not JSON: {e}"))
                })?;
                if let Some(Value::String(declared)) = document.get("$schema") {
                    if Draft::from_schema_uri(declared).is_some_and(|d| d != draft) {
                        return Err(Diagnostic::new(
                            DiagnosticCode::UnsupportedKeyword,
                            "",
                            format!(
                                "{uri:?} is written in another draft ({declared}); references across drafts are not supported yet"
                            ),
                        )
                        .with_keyword("$schema"));
                    }
                }
                let base = Url::parse(&uri).map_err(|e| {
                    Diagnostic::new(DiagnosticCode::UnresolvedReference, "", format!("{uri:?} is no URI: {e}"))
                })?;
                let key = format!("{uri}#");
                resources.remotes.push(Remote { uri: uri.clone(), root: document.clone() });
                resources.resources.insert(uri, key.clone());
                resources.index(&document, &key, base, draft);
                loaded_any = true;
            }
            if !loaded_any {
                return Ok(resources);
            }
        }
    }

    /// Records base URIs, resources and anchors below `value` at location `key`.
    fn index(&mut self, value: &Value, key: &str, base: Url, draft: Draft) {
        let mut stack = vec![(key.to_string(), value, base)];
        while let Some((key, value, mut base)) = stack.pop() {
            let Value::Object(map) = value else { continue };
            // Before 2019-09 `$ref` makes its siblings, `$id` included, ignored.
            let id_applies = draft >= Draft::Draft201909 || !map.contains_key("$ref");
            if let (true, Some(Value::String(id))) = (id_applies, map.get(id_keyword(draft))) {
                if let Some(name) = id.strip_prefix('#') {
                    if !name.is_empty() && draft <= Draft::Draft7 {
                        self.anchors.insert((without_fragment(&base), name.to_string()), key.clone());
                    }
                } else if let Ok(resolved) = base.join(id) {
                    if let Some(name) = resolved.fragment().filter(|f| !f.is_empty()) {
                        self.anchors.insert((without_fragment(&resolved), name.to_string()), key.clone());
                    }
                    base = resolved;
                    base.set_fragment(None);
                    self.resources.entry(base.to_string()).or_insert_with(|| key.clone());
                }
            }
            if draft >= Draft::Draft201909 {
                for keyword in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(name)) = map.get(keyword) {
                        if keyword == "$anchor" || draft >= Draft::Draft202012 {
                            self.anchors.entry((without_fragment(&base), name.clone())).or_insert_with(|| key.clone());
                        }
                        if keyword == "$dynamicAnchor" && draft >= Draft::Draft202012 {
                            let anchors = self.dynamic_anchors.entry(without_fragment(&base)).or_default();
                            anchors.push((name.clone(), key.clone()));
                        }
                    }
                }
                self.dynamic |= map.contains_key("$dynamicRef") || map.contains_key("$recursiveRef");
            }
            if key.is_empty() || key.ends_with('#') {
                self.resources.entry(without_fragment(&base)).or_insert_with(|| key.clone());
            }
            self.bases.insert(key.clone(), base.clone());
            for (keyword, child) in map {
                let at = pointer_push(&key, keyword);
                for (token, schema) in subschemas(keyword, child) {
                    let location = token.map_or_else(|| at.clone(), |token| pointer_push(&at, &token));
                    stack.push((location, schema, base.clone()));
                }
            }
        }
    }

    /// The root location of the schema resource that holds location `key`.
    pub(crate) fn resource_of(&self, key: &str) -> Option<&String> {
        self.resources.get(&without_fragment(self.base_of(key)?))
    }

    /// The `$dynamicAnchor`s declared in the resource rooted at `root` (name, location).
    pub(crate) fn dynamic_anchors_of(&self, root: &str) -> &[(String, String)] {
        self.base_of(root).and_then(|base| self.dynamic_anchors.get(&without_fragment(base))).map_or(&[], Vec::as_slice)
    }

    /// Whether location `key` is the root of a schema resource.
    pub(crate) fn is_resource_root(&self, key: &str) -> bool {
        self.resource_of(key).is_some_and(|root| root == key)
    }

    /// The base URI at a location: its own, or its nearest indexed ancestor's.
    fn base_of(&self, key: &str) -> Option<&Url> {
        let mut key = key;
        loop {
            if let Some(base) = self.bases.get(key) {
                return Some(base);
            }
            let cut = key.rfind('/')?;
            key = &key[..cut];
        }
    }

    /// The schema at a location key.
    pub(crate) fn value_at<'a>(&'a self, root: &'a Value, key: &str) -> Option<&'a Value> {
        let (document, pointer) = match key.find('#') {
            None => (root, key),
            Some(i) => (&self.remotes.iter().find(|r| r.uri == key[..i])?.root, &key[i + 1..]),
        };
        follow(document, pointer)
    }

    /// Resolves `reference`, written at location `key`.
    pub(crate) fn resolve<'a>(&'a self, root: &'a Value, key: &str, reference: &str) -> Result<Target<'a>, String> {
        let base = self.base_of(key).ok_or_else(|| "no base URI for this location".to_string())?;
        let target = base.join(reference).map_err(|e| format!("{reference:?} is no URI reference: {e}"))?;
        let uri = without_fragment(&target);
        let fragment = percent_decode(target.fragment().unwrap_or("")).ok_or("bad percent-encoding")?;
        let resource = self.resources.get(&uri).ok_or_else(|| {
            format!("cannot resolve {uri:?}: it is neither in this document nor served by the registry")
        })?;
        let location = if fragment.is_empty() {
            resource.clone()
        } else if let Some(tokens) = fragment.strip_prefix('/') {
            let mut location = resource.clone();
            for token in tokens.split('/') {
                location = pointer_push(&location, &token.replace("~1", "/").replace("~0", "~"));
            }
            location
        } else {
            self.anchors
                .get(&(uri.clone(), fragment.clone()))
                .cloned()
                .ok_or_else(|| format!("cannot resolve {reference:?}: no anchor {fragment:?} in {uri:?}"))?
        };
        let schema =
            self.value_at(root, &location).ok_or_else(|| format!("cannot resolve {reference:?}: no such location"))?;
        Ok(Target { pointer: location, schema })
    }

    /// The documents the registry served, by URI, for the cache identity.
    pub(crate) fn remotes(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.remotes.iter().map(|r| (r.uri.as_str(), &r.root))
    }
}

/// The drafts' metaschemas (and the 2019-09 and 2020-12 vocabulary metaschemas), served for
/// their URIs before any registry is asked.
fn bundled_metaschema(uri: &str) -> Option<&'static str> {
    Some(match uri {
        "https://json-schema.org/draft/2019-09/schema" => {
            include_str!("../../metaschemas/draft2019-09/metaschema.json")
        }
        "https://json-schema.org/draft/2019-09/meta/applicator" => {
            include_str!("../../metaschemas/draft2019-09/vocab-applicator.json")
        }
        "https://json-schema.org/draft/2019-09/meta/content" => {
            include_str!("../../metaschemas/draft2019-09/vocab-content.json")
        }
        "https://json-schema.org/draft/2019-09/meta/core" => {
            include_str!("../../metaschemas/draft2019-09/vocab-core.json")
        }
        "https://json-schema.org/draft/2019-09/meta/format" => {
            include_str!("../../metaschemas/draft2019-09/vocab-format.json")
        }
        "https://json-schema.org/draft/2019-09/meta/meta-data" => {
            include_str!("../../metaschemas/draft2019-09/vocab-meta-data.json")
        }
        "https://json-schema.org/draft/2019-09/meta/validation" => {
            include_str!("../../metaschemas/draft2019-09/vocab-validation.json")
        }
        "https://json-schema.org/draft/2020-12/schema" => {
            include_str!("../../metaschemas/draft2020-12/metaschema.json")
        }
        "https://json-schema.org/draft/2020-12/meta/applicator" => {
            include_str!("../../metaschemas/draft2020-12/vocab-applicator.json")
        }
        "https://json-schema.org/draft/2020-12/meta/content" => {
            include_str!("../../metaschemas/draft2020-12/vocab-content.json")
        }
        "https://json-schema.org/draft/2020-12/meta/core" => {
            include_str!("../../metaschemas/draft2020-12/vocab-core.json")
        }
        "https://json-schema.org/draft/2020-12/meta/format-annotation" => {
            include_str!("../../metaschemas/draft2020-12/vocab-format-annotation.json")
        }
        "https://json-schema.org/draft/2020-12/meta/format-assertion" => {
            include_str!("../../metaschemas/draft2020-12/vocab-format-assertion.json")
        }
        "https://json-schema.org/draft/2020-12/meta/meta-data" => {
            include_str!("../../metaschemas/draft2020-12/vocab-meta-data.json")
        }
        "https://json-schema.org/draft/2020-12/meta/unevaluated" => {
            include_str!("../../metaschemas/draft2020-12/vocab-unevaluated.json")
        }
        "https://json-schema.org/draft/2020-12/meta/validation" => {
            include_str!("../../metaschemas/draft2020-12/vocab-validation.json")
        }
        "http://json-schema.org/draft-04/schema" => include_str!("../../metaschemas/draft4/metaschema.json"),
        "http://json-schema.org/draft-06/schema" => include_str!("../../metaschemas/draft6/metaschema.json"),
        "http://json-schema.org/draft-07/schema" => include_str!("../../metaschemas/draft7/metaschema.json"),
        _ => return None,
    })
}

/// Follows a JSON Pointer (`/a/b`, tokens escaped) from `root`.
fn follow<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut node = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Every `$ref` string in a document, with the location of the schema holding it.
fn references(root: &Value, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Value)> = vec![(prefix.to_string(), root)];
    while let Some((key, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    out.push((key.clone(), reference.clone()));
                }
                for (k, v) in map {
                    if k != "enum" && k != "const" {
                        stack.push((pointer_push(&key, k), v));
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    stack.push((pointer_push(&key, &i.to_string()), v));
                }
            }
            _ => {}
        }
    }
    out
}
