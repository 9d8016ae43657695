//! Compiler options: cache budgets, bind policy, limits, default draft and generation policies.

use crate::limits::SchemaResourceLimits;

/// How a bound schema computes its per-state mask rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BindPolicy {
    /// Every reachable state's row at bind time: fastest query, costliest bind.
    Eager,
    /// Rows computed on first query and cached.
    Lazy,
    /// Eager when the packed table fits [`CompilerOptions::eager_table_bytes`], lazy otherwise.
    #[default]
    Adaptive,
}

/// The order in which object members may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PropertyOrder {
    /// Any order (what JSON Schema validates).
    #[default]
    Any,
    /// Declared properties in the order of `properties` in the schema; keys that are not
    /// declared there may follow them (after the first such key, no declared one).
    Declared,
}

impl PropertyOrder {
    /// `"any"` or `"declared"`.
    pub fn name(self) -> &'static str {
        match self {
            PropertyOrder::Any => "any",
            PropertyOrder::Declared => "declared",
        }
    }

    /// The order [`name`](Self::name) calls `name`, or `None` for any other string.
    pub fn from_name(name: &str) -> Option<PropertyOrder> {
        [PropertyOrder::Any, PropertyOrder::Declared].into_iter().find(|o| o.name() == name)
    }
}

/// JSON Schema drafts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Draft {
    /// Draft 4 (`http://json-schema.org/draft-04/schema#`).
    Draft4,
    /// Draft 6 (`http://json-schema.org/draft-06/schema#`).
    Draft6,
    /// Draft 7 (`http://json-schema.org/draft-07/schema#`).
    Draft7,
    /// Draft 2019-09 (`https://json-schema.org/draft/2019-09/schema`).
    Draft201909,
    /// Draft 2020-12 (`https://json-schema.org/draft/2020-12/schema`), the default.
    Draft202012,
}

impl Draft {
    /// The draft a `$schema` URI names, if any.
    pub fn from_schema_uri(uri: &str) -> Option<Draft> {
        let uri = uri.trim_end_matches('#');
        let uri = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
        match uri {
            "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
            "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
            "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
            _ => None,
        }
    }

    /// The name used in option strings and reports (`"draft4"` ... `"draft2020-12"`).
    pub fn name(self) -> &'static str {
        match self {
            Draft::Draft4 => "draft4",
            Draft::Draft6 => "draft6",
            Draft::Draft7 => "draft7",
            Draft::Draft201909 => "draft2019-09",
            Draft::Draft202012 => "draft2020-12",
        }
    }

    /// The draft of a [`name`](Self::name), with or without its `draft` prefix (`"draft7"` or
    /// `"7"`, `"draft2020-12"` or `"2020-12"`); `None` for any other string.
    pub fn from_name(name: &str) -> Option<Draft> {
        [Draft::Draft4, Draft::Draft6, Draft::Draft7, Draft::Draft201909, Draft::Draft202012]
            .into_iter()
            .find(|d| d.name() == name || d.name().trim_start_matches("draft") == name)
    }
}

/// Options of one session ([`BoundSchema::start_session_with`](crate::BoundSchema::start_session_with)).
///
/// ```
/// use maskforge_core::SessionOptions;
///
/// let options = SessionOptions::default().with_max_rollback_tokens(Some(16));
/// assert_eq!(options.max_rollback_tokens, Some(16));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct SessionOptions {
    /// How many committed tokens [`Session::rollback`](crate::Session::rollback) can undo:
    /// `None` (the default) keeps every one since the start, `Some(0)` keeps none.
    pub max_rollback_tokens: Option<usize>,
}

impl SessionOptions {
    /// Sets [`SessionOptions::max_rollback_tokens`].
    pub fn with_max_rollback_tokens(mut self, tokens: Option<usize>) -> Self {
        self.max_rollback_tokens = tokens;
        self
    }
}

/// Everything that configures a [`Compiler`](crate::Compiler). Built from `default()` and the
/// `with_*` setters; every field that changes a compiled result is part of the cache identity.
///
/// ```
/// use maskforge_core::{Compiler, CompilerOptions, Draft};
///
/// let options = CompilerOptions::default()
///     .with_default_draft(Draft::Draft7)
///     .with_max_json_whitespace(Some(0))
///     .with_format_assertion(true);
/// let program = Compiler::new(options).compile_json_schema(r#"{"type": "string", "format": "ipv4"}"#)?;
/// assert!(program.executable().accepts(br#""192.168.0.1""#));
/// assert!(!program.executable().accepts(br#""192.168.0.256""#));
/// # Ok::<(), maskforge_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CompilerOptions {
    /// Budget of the compiler's cache of compiled executables, in estimated heap bytes; 0
    /// disables it. Ignored by [`Compiler::with_global_cache`](crate::Compiler::with_global_cache),
    /// which uses the process-wide cache.
    pub executable_cache_bytes: usize,
    /// Budget of the cache of token tries that binding builds per vocabulary and byte-class
    /// partition, in estimated heap bytes; 0 disables it.
    pub trie_cache_bytes: usize,
    /// How [`SchemaProgram::bind`](crate::SchemaProgram::bind) computes mask rows.
    pub bind_policy: BindPolicy,
    /// Largest packed row table [`BindPolicy::Adaptive`] builds eagerly, in bytes (1 MiB by
    /// default). Each row costs about one walk of the vocabulary's class trie, so the table's
    /// size is a bound on the bind's time: 1 MiB is 64 rows of a 128k-token vocabulary, a few
    /// milliseconds. Larger automata bind lazily, a row on a state's first mask (tens of
    /// microseconds each), rather than stall the bind for every state a generation never visits.
    pub eager_table_bytes: usize,
    /// Bounds on the work one compilation may do.
    pub limits: SchemaResourceLimits,
    /// Draft of schemas without `$schema`.
    pub default_draft: Draft,
    /// Enforce `format` as an exact language (true) or treat it as an annotation (false).
    pub format_assertion: bool,
    /// At most this many consecutive insignificant whitespace bytes (outside strings, before
    /// and after the top-level value included); `None`: unbounded.
    pub max_json_whitespace: Option<u32>,
    /// Whether objects must list their declared properties in schema order.
    pub property_order: PropertyOrder,
    /// Whether objects take no keys beyond those the schema declares: every schema at a value
    /// position (the root, and those of `properties`, `items` and the other keywords about
    /// members and items) without an `unevaluatedProperties` of its own behaves as if it had
    /// `"unevaluatedProperties": false`, in every draft; see
    /// [`with_closed_objects`](Self::with_closed_objects).
    pub closed_objects: bool,
    /// Where `$ref`s that leave the schema document resolve (never the network); `None`: such
    /// references are diagnosed.
    pub registry: Option<crate::registry::Registry>,
}

impl Default for CompilerOptions {
    fn default() -> Self {
        CompilerOptions {
            executable_cache_bytes: 256 << 20,
            trie_cache_bytes: 256 << 20,
            bind_policy: BindPolicy::Adaptive,
            eager_table_bytes: 1 << 20,
            limits: SchemaResourceLimits::default(),
            default_draft: Draft::Draft202012,
            format_assertion: true,
            max_json_whitespace: None,
            property_order: PropertyOrder::Any,
            closed_objects: false,
            registry: None,
        }
    }
}

impl CompilerOptions {
    /// Sets [`executable_cache_bytes`](Self::executable_cache_bytes) (256 MiB by default).
    pub fn with_executable_cache_bytes(mut self, bytes: usize) -> Self {
        self.executable_cache_bytes = bytes;
        self
    }

    /// Sets [`trie_cache_bytes`](Self::trie_cache_bytes) (256 MiB by default).
    pub fn with_trie_cache_bytes(mut self, bytes: usize) -> Self {
        self.trie_cache_bytes = bytes;
        self
    }

    /// Sets [`bind_policy`](Self::bind_policy) ([`BindPolicy::Adaptive`] by default).
    pub fn with_bind_policy(mut self, policy: BindPolicy) -> Self {
        self.bind_policy = policy;
        self
    }

    /// Sets [`eager_table_bytes`](Self::eager_table_bytes) (1 MiB by default).
    pub fn with_eager_table_bytes(mut self, bytes: usize) -> Self {
        self.eager_table_bytes = bytes;
        self
    }

    /// Sets [`limits`](Self::limits) ([`SchemaResourceLimits::default`] by default).
    pub fn with_limits(mut self, limits: SchemaResourceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`default_draft`](Self::default_draft) ([`Draft::Draft202012`] by default).
    pub fn with_default_draft(mut self, draft: Draft) -> Self {
        self.default_draft = draft;
        self
    }

    /// Sets [`format_assertion`](Self::format_assertion) (on by default).
    pub fn with_format_assertion(mut self, enforce: bool) -> Self {
        self.format_assertion = enforce;
        self
    }

    /// Sets [`max_json_whitespace`](Self::max_json_whitespace) (unbounded by default). A bound
    /// keeps a model from spending its tokens on whitespace.
    pub fn with_max_json_whitespace(mut self, max: Option<u32>) -> Self {
        self.max_json_whitespace = max;
        self
    }

    /// Sets [`property_order`](Self::property_order) ([`PropertyOrder::Any`] by default).
    pub fn with_property_order(mut self, order: PropertyOrder) -> Self {
        self.property_order = order;
        self
    }

    /// Sets [`closed_objects`](Self::closed_objects) (off by default): the "strict" objects of
    /// other engines, where a key nothing in the schema declares is refused. Keys that any part
    /// applied in place evaluates (`properties`, `patternProperties`, `additionalProperties`,
    /// through `$ref`, `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`) stay
    /// allowed, so `"additionalProperties": true` or a schema keeps an object open and
    /// `allOf` of two property sets admits both. Schemas that say nothing (`true`, `{}`,
    /// annotations only) and those that list their values (`enum`, `const`) are left as they are.
    ///
    /// ```
    /// use maskforge_core::{Compiler, CompilerOptions};
    ///
    /// let schema = r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#;
    /// let strict = Compiler::new(CompilerOptions::default().with_closed_objects(true)).compile_json_schema(schema)?;
    /// assert!(strict.executable().accepts(br#"{"a": 1}"#));
    /// assert!(!strict.executable().accepts(br#"{"a": 1, "b": 2}"#));
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn with_closed_objects(mut self, closed: bool) -> Self {
        self.closed_objects = closed;
        self
    }

    /// The options that change what a schema compiles to (not cache budgets or bind policy).
    pub(crate) fn compile_identity(&self) -> CompileIdentity {
        CompileIdentity {
            limits: self.limits,
            default_draft: self.default_draft,
            format_assertion: self.format_assertion,
            max_json_whitespace: self.max_json_whitespace,
            property_order: self.property_order,
            closed_objects: self.closed_objects,
        }
    }
}

/// The options that change what a schema compiles to: with the schema's canonical text, the
/// identity of a cached executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CompileIdentity {
    limits: SchemaResourceLimits,
    default_draft: Draft,
    format_assertion: bool,
    max_json_whitespace: Option<u32>,
    property_order: PropertyOrder,
    closed_objects: bool,
}

impl CompileIdentity {
    /// The identity as a JSON object, as a program's bytes record it.
    pub(crate) fn to_json(self) -> serde_json::Value {
        // Destructured so that a limit added later cannot be left out of a program's bytes.
        let SchemaResourceLimits {
            max_document_bytes,
            max_resolved_bytes,
            max_dfa_states,
            max_nfa_states,
            max_nesting_depth,
            max_graph_size,
            max_any_order_states,
            max_regular_states,
            max_length_product_states,
        } = self.limits;
        serde_json::json!({
            "limits": {
                "max_document_bytes": max_document_bytes,
                "max_resolved_bytes": max_resolved_bytes,
                "max_dfa_states": max_dfa_states,
                "max_nfa_states": max_nfa_states,
                "max_nesting_depth": max_nesting_depth,
                "max_graph_size": max_graph_size,
                "max_any_order_states": max_any_order_states,
                "max_regular_states": max_regular_states,
                "max_length_product_states": max_length_product_states,
            },
            "default_draft": self.default_draft.name(),
            "format_assertion": self.format_assertion,
            "max_json_whitespace": self.max_json_whitespace,
            "property_order": self.property_order.name(),
            "closed_objects": self.closed_objects,
        })
    }

    /// Reads [`to_json`](Self::to_json)'s object; `None` when a field is missing or wrong.
    pub(crate) fn from_json(value: &serde_json::Value) -> Option<CompileIdentity> {
        let limits = value.get("limits")?;
        let size = |key: &str| limits.get(key)?.as_u64().and_then(|n| usize::try_from(n).ok());
        let max_json_whitespace = match value.get("max_json_whitespace")? {
            serde_json::Value::Null => None,
            n => Some(u32::try_from(n.as_u64()?).ok()?),
        };
        Some(CompileIdentity {
            limits: SchemaResourceLimits {
                max_document_bytes: size("max_document_bytes")?,
                max_resolved_bytes: size("max_resolved_bytes")?,
                max_dfa_states: size("max_dfa_states")?,
                max_nfa_states: size("max_nfa_states")?,
                max_nesting_depth: size("max_nesting_depth")?,
                max_graph_size: size("max_graph_size")?,
                max_any_order_states: size("max_any_order_states")?,
                max_regular_states: size("max_regular_states")?,
                // Programs written before this budget existed unrolled every bound.
                max_length_product_states: match limits.get("max_length_product_states") {
                    None => usize::MAX,
                    Some(_) => size("max_length_product_states")?,
                },
            },
            default_draft: Draft::from_name(value.get("default_draft")?.as_str()?)?,
            format_assertion: value.get("format_assertion")?.as_bool()?,
            max_json_whitespace,
            property_order: PropertyOrder::from_name(value.get("property_order")?.as_str()?)?,
            closed_objects: value.get("closed_objects")?.as_bool()?,
        })
    }

    /// Options that compile as those of this identity did (caches and binding aside).
    pub(crate) fn options(self) -> CompilerOptions {
        // Destructured so that a field added to the identity cannot be left out here.
        let CompileIdentity {
            limits,
            default_draft,
            format_assertion,
            max_json_whitespace,
            property_order,
            closed_objects,
        } = self;
        CompilerOptions {
            limits,
            default_draft,
            format_assertion,
            max_json_whitespace,
            property_order,
            closed_objects,
            ..CompilerOptions::default()
        }
    }
}
