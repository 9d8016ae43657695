//! Lowering of a schema document into the structured arm's graph: each schema object becomes a
//! conjunction of nodes (its type-by-type content, then one operand per applicator), and
//! `$ref` targets become nodes once, so recursion is an edge back. Keywords come read and
//! checked in a [`SchemaObject`], as the regular arm gets them; only the dynamic scope's
//! anchors are looked up here. Lowering only asks for graph nodes; computing them is the
//! graph's job ([`Graph::finish`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::graph::{
    ArrayShape, Contains, CountedStrings, Graph, ItemsEvaluated, Node, NodeId, ObjectShape, PatternProperty,
    PropertiesEvaluated, SyntaxStrings, ANY, MAX_PATTERNS_PER_OBJECT, NEVER,
};
use crate::automata::{json, ByteDfa};
use crate::error::{Diagnostic, DiagnosticCode};
use crate::numbers::{Decimal, NumberConstraints};
use crate::options::{CompilerOptions, Draft, PropertyOrder};
use crate::schema::object::{LowerSchema, SchemaObject};
use crate::schema::read::{self, Dependency, Position};
use crate::schema::strings::{
    cached_literal_texts, cached_pattern_keys, string_language, StringLanguage, StringSyntax,
};
use crate::schema::{pointer_push, SchemaDocument};

type Lowered<T> = Result<T, Diagnostic>;

/// Most property dependencies on one schema object (each doubles the shapes an object tracks).
const MAX_DEPENDENCIES: usize = 8;

/// Schema objects lowered one inside another (through nesting and references) may reach this
/// multiple of `max_nesting_depth`: the text's own nesting is bounded by that limit, chains of
/// references by this one (within the compilation thread's stack).
const REFERENCE_DEPTH_FACTOR: usize = 16;

pub(crate) struct Lowering<'a> {
    document: &'a SchemaDocument,
    draft: Draft,
    options: &'a CompilerOptions,
    pub(crate) graph: Graph,
    /// Node of each schema location lowered so far (reserved before its content, for recursion).
    nodes: HashMap<String, NodeId>,
    /// Schema objects being lowered, one inside another (through nesting or references).
    depth: usize,
    /// `oneOf` lowered as `anyOf`: exact only when no two branches share an instance, which is
    /// checked once the graph is finished (pointer, each pair of branches with its intersection).
    pub(crate) one_of_checks: Vec<(String, Vec<BranchPair>)>,
    /// `oneOf` locations whose branches overlap, with the overlapping pairs: lowered as "this
    /// branch and none of those it overlaps".
    exclusive_one_of: &'a OneOfOverlaps,
    /// The dynamic scope, when the schema uses `$dynamicRef`/`$recursiveRef`.
    scope: DynamicScope,
}

/// What `$recursiveRef` and `$dynamicRef` resolve to at a point of the lowering: the outermost
/// resources entered so far that declare `$recursiveAnchor: true` or each `$dynamicAnchor` name.
/// A location lowers once per scope it is reached in.
#[derive(Debug, Clone, Default)]
struct DynamicScope {
    recursive: Option<String>,
    anchors: BTreeMap<String, String>,
}

/// A node's strings: those of an automaton, those admitted by their length, and ECMA-262
/// patterns of at least this many code points.
type StringParts = (Option<Arc<ByteDfa>>, Option<CountedStrings>, Option<SyntaxStrings>);

impl DynamicScope {
    fn fingerprint(&self) -> String {
        let mut out = self.recursive.clone().unwrap_or_default();
        for (name, location) in &self.anchors {
            out.push('\u{0}');
            out.push_str(name);
            out.push('=');
            out.push_str(location);
        }
        out
    }
}

/// Two `oneOf` branches, by index (`first < second`), and a kind of value (an index of
/// [`Graph::kind_nodes`]) on which they may share an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct BranchOverlap {
    pub(crate) first: usize,
    pub(crate) second: usize,
    pub(crate) kind: usize,
}

/// A [`BranchOverlap`] to check, and the node of the two branches' intersection within that
/// kind (satisfiable when they do overlap).
pub(crate) type BranchPair = (BranchOverlap, NodeId);

/// The pairs of branches that may share an instance, and of which kind, per `oneOf` location.
pub(crate) type OneOfOverlaps = BTreeMap<String, BTreeSet<BranchOverlap>>;

/// The JSON types a `type` keyword admits.
#[derive(Debug, Clone, Copy)]
struct Types {
    null: bool,
    boolean: bool,
    number: bool,
    integer: bool,
    string: bool,
    array: bool,
    object: bool,
}

impl Types {
    const ALL: Types =
        Types { null: true, boolean: true, number: true, integer: false, string: true, array: true, object: true };
}

impl LowerSchema for Lowering<'_> {
    type Lowered = NodeId;

    fn lower(&mut self, schema: &Value, pointer: &str, position: Position) -> Lowered<NodeId> {
        self.schema(schema, pointer, position)
    }
}

impl<'a> Lowering<'a> {
    pub(crate) fn new(
        document: &'a SchemaDocument,
        options: &'a CompilerOptions,
        exclusive_one_of: &'a OneOfOverlaps,
    ) -> Self {
        let limits = &options.limits;
        Lowering {
            document,
            draft: document.draft(),
            options,
            graph: Graph::new(
                limits.max_graph_size,
                limits.max_dfa_states,
                options.property_order == PropertyOrder::Declared,
            ),
            nodes: HashMap::new(),
            depth: 0,
            one_of_checks: Vec::new(),
            exclusive_one_of,
            scope: DynamicScope::default(),
        }
    }

    /// Lowers the schema at `pointer`, which applies at `position` (the root: a value position).
    pub(crate) fn schema(&mut self, schema: &Value, pointer: &str, position: Position) -> Lowered<NodeId> {
        // A schema the `closed_objects` policy closes is a node apart from the same schema
        // applied in place (reached through a `$ref` to it, say).
        let closed = self.options.closed_objects && position == Position::Value;
        let mark = if closed { "\u{2}closed" } else { "" };
        if !self.document.resources().dynamic {
            return self.schema_in_scope(schema, pointer, format!("{pointer}{mark}"), closed);
        }
        let saved = self.scope.clone();
        if self.document.resources().is_resource_root(pointer) {
            self.enter(pointer);
        }
        let key = format!("{pointer}\u{1}{}{mark}", self.scope.fingerprint());
        let lowered = self.schema_in_scope(schema, pointer, key, closed);
        self.scope = saved;
        lowered
    }

    /// Enters the schema resource rooted at `root`: it becomes the target of `$recursiveRef`
    /// and of its `$dynamicAnchor` names unless an outer resource already is.
    fn enter(&mut self, root: &str) {
        let resources = self.document.resources();
        if self.draft == Draft::Draft201909 && self.scope.recursive.is_none() {
            let anchored = self.document.value_at(root).and_then(|s| s.get("$recursiveAnchor"));
            if anchored == Some(&Value::Bool(true)) {
                self.scope.recursive = Some(root.to_string());
            }
        }
        for (name, location) in resources.dynamic_anchors_of(root) {
            self.scope.anchors.entry(name.clone()).or_insert_with(|| location.clone());
        }
    }

    fn schema_in_scope(&mut self, schema: &Value, pointer: &str, key: String, closed: bool) -> Lowered<NodeId> {
        if let Some(&id) = self.nodes.get(&key) {
            return Ok(id);
        }
        match schema {
            Value::Bool(true) => Ok(ANY),
            Value::Bool(false) => Ok(NEVER),
            Value::Object(map) => {
                // Lowering recurses through references as well as nesting: a long chain of
                // `$ref`s takes the stack (about 5 KiB a level) where the text is shallow.
                let limit = self.options.limits.max_nesting_depth.saturating_mul(REFERENCE_DEPTH_FACTOR);
                if self.depth >= limit {
                    return Err(Diagnostic::new(
                        DiagnosticCode::ResourceLimit,
                        pointer,
                        format!("schema nesting through references is deeper than the limit of {limit}"),
                    ));
                }
                let id = self.graph.reserve();
                self.nodes.insert(key, id);
                self.depth += 1;
                let operands = self.object_schema(map, pointer, closed);
                self.depth -= 1;
                self.graph.set_all(id, operands?);
                Ok(id)
            }
            _ => Err(Diagnostic::new(
                DiagnosticCode::InvalidKeywordValue,
                pointer,
                "a schema must be an object or a boolean",
            )),
        }
    }

    /// The conjunction of node ids a schema object stands for.
    fn object_schema(&mut self, map: &Map<String, Value>, pointer: &str, closed: bool) -> Lowered<Vec<NodeId>> {
        let object = SchemaObject::read(map, pointer, self.draft, closed)?;
        if object.reference_only {
            let target = self.reference(&object, pointer)?;
            return Ok(match self.optional(&object.unevaluated_properties)? {
                Some(properties) => {
                    vec![self.graph.unevaluated(target, Some(properties), None, &unevaluated_at(&object, pointer))]
                }
                None => vec![target],
            });
        }
        let types = self.types(&object);
        let mut node = Node {
            admits_null: types.null,
            admits_true: types.boolean,
            admits_false: types.boolean,
            ..Node::default()
        };
        if types.number || types.integer {
            if let Some(constraints) = self.numbers(&object, types) {
                node.numbers.push(Arc::new(constraints));
            }
        }
        (node.strings, node.counted_strings, node.syntax_strings) = self.strings(&object, pointer, types.string)?;
        if let Some(shape) = self.array(&object, pointer, types.array)? {
            node.arrays.push(shape);
        }
        if let Some(shape) = self.object(&object, pointer, types.object)? {
            node.objects.push(shape);
        }
        let mut operands = vec![self.graph.add(node)];
        if let Some(values) = object.enum_values {
            // The strings form one alternation, compiled once in time linear in their length
            // (a node per string would be joined by automaton products).
            // So do the numbers: one constraint listing every value.
            let (strings, others): (Vec<&Value>, Vec<&Value>) = values.iter().partition(|v| v.is_string());
            let (numbers, others): (Vec<&Value>, Vec<&Value>) = others.into_iter().partition(|v| v.is_number());
            let mut ids: Vec<NodeId> = others.into_iter().map(|v| self.value_node(v)).collect::<Lowered<_>>()?;
            if !numbers.is_empty() {
                let values = numbers.iter().map(|v| number_value(v)).collect::<Lowered<Vec<_>>>()?;
                let constraint = NumberConstraints { values: Some(values), ..NumberConstraints::default() };
                ids.push(self.graph.add(Node { numbers: vec![Arc::new(constraint)], ..Node::default() }));
            }
            if !strings.is_empty() {
                let at = pointer_push(pointer, "enum");
                let states: usize =
                    strings.iter().filter_map(|v| v.as_str()).map(json::string_literal_min_states).sum();
                if states > self.options.limits.max_nfa_states {
                    return Err(Diagnostic::new(
                        DiagnosticCode::ResourceLimit,
                        at,
                        format!(
                            "the enum's strings need at least {states} automaton states, above the limit of {}",
                            self.options.limits.max_nfa_states
                        ),
                    )
                    .with_keyword("enum"));
                }
                let values: Vec<&str> = strings.iter().filter_map(|v| v.as_str()).collect();
                let dfa = self.literal_strings(&values, &at)?;
                ids.push(self.graph.add(Node { strings: Some(dfa), ..Node::default() }));
            }
            operands.push(self.graph.any(ids));
        }
        if let Some(value) = object.const_value {
            operands.push(self.value_node(value)?);
        }
        if object.reference.is_some() {
            operands.push(self.reference(&object, pointer)?);
        }
        for &(keyword, reference) in &object.dynamic_references {
            operands.push(self.dynamic_reference(pointer, keyword, reference)?);
        }
        if let Some(branches) = &object.all_of {
            operands.extend(self.subschemas(branches)?);
        }
        if let Some(branches) = &object.any_of {
            let branches = self.subschemas(branches)?;
            operands.push(self.graph.any_branch(branches));
        }
        operands.extend(self.dependencies(&object, pointer)?);
        if let Some(negated) = &object.not {
            let negated = self.subschema(negated)?;
            operands.push(self.graph.not(negated, &pointer_push(pointer, "not")));
        }
        if let Some(condition) = self.conditional(&object, pointer)? {
            operands.push(condition);
        }
        if let Some(branches) = &object.one_of {
            let branches = self.subschemas(branches)?;
            let at = pointer_push(pointer, "oneOf");
            if let Some(pairs) = self.exclusive_one_of.get(&at) {
                operands.push(self.exactly_one(&branches, &at, pairs));
            } else {
                // Only instances the sibling keywords admit reach the `oneOf`: two branches that
                // share none of those need no complement (a root's `required: ["kind"]` beside
                // branches that fix `kind` differently but do not require it).
                let kinds = self.graph.kind_nodes();
                let mut overlaps = Vec::new();
                for (i, &a) in branches.iter().enumerate() {
                    for (j, &b) in branches.iter().enumerate().skip(i + 1) {
                        for (kind, &of_kind) in kinds.iter().enumerate() {
                            let overlap = BranchOverlap { first: i, second: j, kind };
                            let both = operands.iter().copied().chain([a, b, of_kind]).collect();
                            overlaps.push((overlap, self.graph.all(both)));
                        }
                    }
                }
                self.one_of_checks.push((at, overlaps));
                operands.push(self.graph.any_branch(branches));
            }
        }
        // Last: what the keywords above (and the schemas they apply in place) leave unevaluated.
        let properties = self.optional(&object.unevaluated_properties)?;
        let items = self.optional(&object.unevaluated_items)?;
        if properties.is_some() || items.is_some() {
            let base = self.graph.all(operands);
            return Ok(vec![self.graph.unevaluated(base, properties, items, &unevaluated_at(&object, pointer))]);
        }
        Ok(operands)
    }

    /// Instances satisfying exactly one of `branches`, kind of value by kind: where no two
    /// branches share a value of a kind, any branch will do; within a kind where some do, each
    /// branch with the complement of every other it `overlaps` there (complementing a branch
    /// that cannot share the value would only multiply shapes: a tagged union of closed objects
    /// overlaps on strings and numbers, not on objects).
    fn exactly_one(&mut self, branches: &[NodeId], pointer: &str, overlaps: &BTreeSet<BranchOverlap>) -> NodeId {
        let kinds = self.graph.kind_nodes();
        let mut parts = Vec::new();
        let mut free_kinds = Vec::new();
        for (kind, &of_kind) in kinds.iter().enumerate() {
            if !overlaps.iter().any(|o| o.kind == kind) {
                free_kinds.push(of_kind);
                continue;
            }
            for (i, &branch) in branches.iter().enumerate() {
                let mut operands = vec![of_kind, branch];
                for (j, &other) in branches.iter().enumerate() {
                    if j != i && overlaps.contains(&BranchOverlap { first: i.min(j), second: i.max(j), kind }) {
                        operands.push(self.graph.not(other, pointer));
                    }
                }
                parts.push(self.graph.all(operands));
            }
        }
        if !free_kinds.is_empty() {
            let free = self.graph.any_branch(free_kinds);
            let any_branch = self.graph.any_branch(branches.to_vec());
            parts.push(self.graph.all(vec![free, any_branch]));
        }
        self.graph.any_branch(parts)
    }

    /// `if`/`then`/`else` (draft 7 on): instances satisfying `if` and `then`, or failing `if`
    /// and satisfying `else`.
    fn conditional(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<Option<NodeId>> {
        let Some(conditional) = &object.conditional else { return Ok(None) };
        let condition = self.subschema(&conditional.condition)?;
        let then = self.optional(&conditional.then)?.unwrap_or(ANY);
        let otherwise = self.optional(&conditional.otherwise)?.unwrap_or(ANY);
        let failing = self.graph.not(condition, &pointer_push(pointer, "if"));
        let when_true = self.graph.all(vec![condition, then]);
        let when_false = self.graph.all(vec![failing, otherwise]);
        Ok(Some(self.graph.any_branch(vec![when_true, when_false])))
    }

    /// One node per dependency: objects without the triggering property, or with it and what
    /// it brings (further required names, or a schema the object must also satisfy). Each is a
    /// disjunction of two shapes, so an object tracks at most `2^n` shapes for `n` of them.
    fn dependencies(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<Vec<NodeId>> {
        let dependencies = &object.dependencies;
        if dependencies.len() > MAX_DEPENDENCIES {
            let keyword = if self.draft <= Draft::Draft7 { "dependencies" } else { "dependentRequired" };
            return Err(Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                pointer,
                format!("more than {MAX_DEPENDENCIES} property dependencies on one object"),
            )
            .with_keyword(keyword));
        }
        let mut nodes = Vec::new();
        for (property, dependency) in dependencies {
            let without = BTreeMap::from([(property.clone(), NEVER)]);
            let absent = self.graph.non_objects_and(ObjectShape::plain(without, ANY, BTreeSet::new(), 0, None));
            let mut required = BTreeSet::from([property.clone()]);
            let mut present = Vec::new();
            match dependency {
                Dependency::Required(names) => required.extend(names.iter().cloned()),
                Dependency::Schema(schema) => present.push(self.subschema(schema)?),
            }
            present.push(self.graph.non_objects_and(ObjectShape::plain(BTreeMap::new(), ANY, required, 0, None)));
            let present = self.graph.all(present);
            nodes.push(self.graph.any_branch(vec![absent, present]));
        }
        Ok(nodes)
    }

    fn reference(&mut self, object: &SchemaObject, pointer: &str) -> Lowered<NodeId> {
        let reference = object.reference.expect("called for a $ref");
        let target = read::reference_target(self.document, pointer, reference)?;
        self.target(target.schema, &target.pointer)
    }

    /// Lowers a reference target, inside the resource that holds it (for the dynamic scope).
    fn target(&mut self, schema: &Value, pointer: &str) -> Lowered<NodeId> {
        if !self.document.resources().dynamic {
            return self.schema(schema, pointer, Position::InPlace);
        }
        let saved = self.scope.clone();
        if let Some(root) = self.document.resources().resource_of(pointer).cloned() {
            self.enter(&root);
        }
        let lowered = self.schema(schema, pointer, Position::InPlace);
        self.scope = saved;
        lowered
    }

    /// `$recursiveRef` (2019-09, always `#`) and `$dynamicRef` (2020-12): resolved like `$ref`;
    /// when the target declares `$recursiveAnchor: true` (the same `$dynamicAnchor` name), the
    /// outermost resource of the dynamic scope that declares it is the target instead.
    fn dynamic_reference(&mut self, pointer: &str, keyword: &str, reference: &str) -> Lowered<NodeId> {
        let at = pointer_push(pointer, keyword);
        let resolve_error =
            |message: String| Diagnostic::new(DiagnosticCode::UnresolvedReference, &at, message).with_keyword(keyword);
        let target = self.document.resolve(pointer, reference).map_err(resolve_error)?;
        let (mut location, mut schema) = (target.pointer, target.schema);
        let dynamic_target = if keyword == "$recursiveRef" {
            (schema.get("$recursiveAnchor") == Some(&Value::Bool(true))).then(|| self.scope.recursive.clone()).flatten()
        } else {
            let name = reference.rsplit_once('#').map(|(_, fragment)| fragment.to_string()).unwrap_or_default();
            let bookended = schema.get("$dynamicAnchor").and_then(Value::as_str) == Some(name.as_str());
            bookended.then(|| self.scope.anchors.get(&name).cloned()).flatten()
        };
        if let Some(dynamic) = dynamic_target {
            schema =
                self.document.value_at(&dynamic).ok_or_else(|| resolve_error(format!("no schema at {dynamic}")))?;
            location = dynamic;
        }
        self.target(schema, &location)
    }

    fn types(&self, object: &SchemaObject) -> Types {
        let Some(names) = &object.types else { return Types::ALL };
        let mut types = Types {
            null: false,
            boolean: false,
            number: false,
            integer: false,
            string: false,
            array: false,
            object: false,
        };
        for name in names {
            match *name {
                "null" => types.null = true,
                "boolean" => types.boolean = true,
                "number" => types.number = true,
                "integer" => types.integer = true,
                "string" => types.string = true,
                "array" => types.array = true,
                "object" => types.object = true,
                _ => unreachable!("type_names checked the name"),
            }
        }
        types
    }

    /// Numeric constraints, or `None` when no number satisfies them.
    fn numbers(&self, object: &SchemaObject, types: Types) -> Option<NumberConstraints> {
        let keywords = &object.numbers;
        let mut c = NumberConstraints::default();
        if types.integer && !types.number {
            if self.draft == Draft::Draft4 {
                c.integer_syntax_only = true;
            } else {
                c.integer = true;
            }
        }
        c.minimum = keywords.minimum.clone();
        c.maximum = keywords.maximum.clone();
        c.multiple_of.extend(keywords.multiple_of.clone());
        c.is_satisfiable().then_some(c)
    }

    /// The strings a schema object admits: as an automaton, or by length alone.
    fn strings(&mut self, object: &SchemaObject, pointer: &str, admitted: bool) -> Lowered<StringParts> {
        if !admitted {
            return Ok((None, None, None));
        }
        Ok(match string_language(object.map, pointer, self.draft, self.options)? {
            StringLanguage::Any => (Some(Arc::clone(&self.graph.any_string)), None, None),
            StringLanguage::Texts(dfa) if dfa.is_empty_language() => (None, None, None),
            StringLanguage::Texts(dfa) => (Some(dfa), None, None),
            StringLanguage::Bounded { range, texts } => {
                self.graph.remember_bounded(&texts, range);
                (Some(texts), None, None)
            }
            StringLanguage::Counted { range, within } => {
                let counted = self.graph.counted(range, within).map_err(|e| {
                    let d = super::graph_diagnostic(e);
                    let keyword = if object.map.contains_key("maxLength") { "maxLength" } else { "minLength" };
                    Diagnostic::new(d.code, crate::schema::pointer_push(pointer, keyword), d.message)
                        .with_keyword(keyword)
                })?;
                (None, counted, None)
            }
            StringLanguage::Syntax { syntax, min_length } => (None, None, Some(SyntaxStrings { syntax, min_length })),
            StringLanguage::PatternsAmong(dfa) => {
                let among = self.graph.among(&dfa, StringSyntax::Pattern).map_err(|_| {
                    Diagnostic::new(
                        DiagnosticCode::UnsupportedKeyword,
                        crate::schema::pointer_push(pointer, "format"),
                        "format \"regex\" together with a pattern that admits regular-expression syntax characters and infinitely many strings is not supported yet",
                    )
                    .with_keyword("format")
                })?;
                (Some(Arc::new(among)), None, None)
            }
        })
    }

    /// The JSON texts of `values`, an automaton the graph knows to be made of them.
    fn literal_strings(&mut self, values: &[&str], pointer: &str) -> Lowered<Arc<ByteDfa>> {
        let dfa = cached_literal_texts(values, self.options.limits.max_dfa_states).ok_or_else(|| {
            Diagnostic::new(DiagnosticCode::ResourceLimit, pointer, "a string language exceeds the automaton limits")
        })?;
        self.graph.remember_literals(&dfa, values);
        Ok(dfa)
    }

    fn array(&mut self, object: &SchemaObject, pointer: &str, admitted: bool) -> Lowered<Option<ArrayShape>> {
        let counts = &object.counts;
        let (min, max, unique) = (counts.min_items, counts.max_items, counts.unique_items);
        let items = &object.items;
        let prefix = self.subschemas(&items.prefix)?;
        let rest = self.optional(&items.rest)?.unwrap_or(ANY);
        let contains = self.optional(&object.contains)?;
        // `minContains` 0 with no `maxContains` makes `contains` hold.
        let (contains_min, contains_max) = (counts.min_contains, counts.max_contains);
        if !admitted {
            return Ok(None);
        }

        let contains_node = contains;
        let contains = match contains {
            Some(node) if contains_min > 0 || contains_max.is_some() => {
                let max = contains_max.map(|m| (m, self.graph.not(node, &pointer_push(pointer, "maxContains"))));
                Some(Contains::new(&mut self.graph, node, (contains_min, max), 0, &prefix, rest))
            }
            _ => None,
        };
        let evaluated = ItemsEvaluated {
            all: items.rest.is_some(),
            prefix: prefix.len() as u64,
            // `contains` annotates the items it matches from 2020-12 on (even with `minContains: 0`).
            matching: contains_node.filter(|_| self.draft >= Draft::Draft202012),
        };
        let unique = (unique && max.is_none_or(|m| m > 1)).then(|| Arc::from(pointer_push(pointer, "uniqueItems")));
        Ok(Some(ArrayShape { prefix, rest, min, max, contains, evaluated, unique }))
    }

    fn object(&mut self, object: &SchemaObject, pointer: &str, admitted: bool) -> Lowered<Option<ObjectShape>> {
        let counts = &object.counts;
        let (min, max) = (counts.min_properties, counts.max_properties);
        let required: BTreeSet<String> = counts.required.iter().cloned().collect();
        let mut properties = BTreeMap::new();
        let mut order = Vec::new();
        for (name, schema) in &object.properties {
            properties.insert(name.to_string(), self.subschema(schema)?);
            order.push(name.to_string());
        }
        let mut patterns = Vec::new();
        if object.pattern_properties.len() > MAX_PATTERNS_PER_OBJECT {
            return Err(Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                pointer_push(pointer, "patternProperties"),
                format!("more than {MAX_PATTERNS_PER_OBJECT} patternProperties on one object"),
            )
            .with_keyword("patternProperties"));
        }
        for (pattern, schema) in &object.pattern_properties {
            let limit = self.options.limits.max_dfa_states;
            let keys = cached_pattern_keys(pattern, limit, &schema.pointer, "patternProperties")?;
            let node = self.subschema(schema)?;
            patterns.push(PatternProperty { keys, node, owner: 0 });
        }
        let other = self.optional(&object.additional_properties)?.unwrap_or(ANY);
        let names = self.optional(&object.property_names)?;
        if !admitted {
            return Ok(None);
        }
        // A named property also takes the schemas of the patterns its name matches.
        for (name, node) in properties.iter_mut() {
            let mut operands = vec![*node];
            operands.extend(patterns.iter().filter(|p| p.keys.matches(name.as_bytes())).map(|p| p.node));
            *node = self.graph.all(operands);
        }
        let evaluated = PropertiesEvaluated {
            all: object.additional_properties.is_some(),
            names: properties.keys().cloned().collect(),
        };
        let mut shape = ObjectShape::plain(properties, other, required, min, max);
        shape.evaluated = evaluated;
        shape.patterns = patterns;
        shape.names = names.filter(|&n| n != ANY);
        shape.order = order;
        Ok(Some(shape))
    }

    /// The node admitting exactly `value` (equality by JSON value).
    fn value_node(&mut self, value: &Value) -> Lowered<NodeId> {
        let mut node = Node::default();
        match value {
            Value::Null => node.admits_null = true,
            Value::Bool(true) => node.admits_true = true,
            Value::Bool(false) => node.admits_false = true,
            Value::Number(_) => {
                let values = Some(vec![number_value(value)?]);
                node.numbers.push(Arc::new(NumberConstraints { values, ..NumberConstraints::default() }));
            }
            Value::String(s) => node.strings = Some(self.literal_strings(&[s.as_str()], "")?),
            Value::Array(items) => {
                let prefix = items.iter().map(|v| self.value_node(v)).collect::<Lowered<Vec<_>>>()?;
                let len = prefix.len() as u64;
                node.arrays.push(ArrayShape { prefix, rest: NEVER, ..ArrayShape::free(len, Some(len)) });
            }
            Value::Object(map) => {
                let mut properties = BTreeMap::new();
                for (k, v) in map {
                    properties.insert(k.clone(), self.value_node(v)?);
                }
                let len = properties.len() as u64;
                let required = properties.keys().cloned().collect();
                let mut shape = ObjectShape::plain(properties, NEVER, required, len, Some(len));
                // The keys of a listed object are declared: what the `closed_objects` policy
                // closes around it (through `anyOf`, say) still admits it.
                shape.evaluated.all = self.options.closed_objects;
                node.objects.push(shape);
            }
        }
        Ok(self.graph.add(node))
    }
}

/// The pointer `unevaluated*` diagnostics name: the schema object's, or under the
/// `closed_objects` policy (which wrote no keyword) one ending in the policy's name.
fn unevaluated_at(object: &SchemaObject, pointer: &str) -> String {
    match &object.unevaluated_properties {
        Some(closing) if object.closed_by_policy && object.unevaluated_items.is_none() => closing.pointer.clone(),
        _ => pointer.to_string(),
    }
}

/// The exact value of a JSON number.
fn number_value(value: &Value) -> Lowered<Decimal> {
    Decimal::parse(&value.to_string())
        .ok_or_else(|| Diagnostic::new(DiagnosticCode::InvalidKeywordValue, "", "bad number"))
}
