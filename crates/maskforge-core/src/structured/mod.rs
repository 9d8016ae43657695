//! The structured arm: a pushdown matcher over JSON text for schemas whose language is not
//! regular (unbounded nesting, recursion, open objects, numbers decided by value).
//!
//! The schema lowers to a graph of nodes ([`graph`]), one per value schema, split by JSON type;
//! conjunctions are intersected shape by shape, disjunctions kept as parallel shapes. The
//! matcher ([`matcher`]) reads text byte by byte and only ever reaches states that can still be
//! completed to an accepted instance.
//!
//! In reading order: `lower` (the document into the graph, from the same reading of each schema
//! object as the regular arm: `schema::object`), `graph` (model, algebra, analyses), `matcher` (the
//! recogniser, and apart from it the mask queries), and the readers the matcher leans on:
//! `string_decoder` (keys), `pattern_syntax` (`format: "regex"`), `hostname` with `idna` and the
//! generated `idna_table`, and `unique` (`uniqueItems` while reading). Nothing here knows tokens,
//! vocabularies or masks: `bind/` asks the mask queries in terms of bytes and automaton states, and
//! whatever it knows of tokens it keeps to itself.

mod graph;
mod hostname;
mod idna;
mod idna_table;
mod lower;
mod matcher;
mod pattern_syntax;
mod string_decoder;
mod unique;

use std::collections::BTreeSet;

use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::options::CompilerOptions;
use crate::schema::SchemaDocument;

pub(crate) use graph::{Graph, NodeId};
pub(crate) use matcher::{
    closing_offsets, feed_number, CountedString, DocumentMatcher, FiniteKey, InnerContainer, KeyCloses, LoneValue,
    Step, SyntaxString, ValueCloses, ValueOutcome,
};
pub(crate) use pattern_syntax::PlainContext;
pub(crate) use string_decoder::CodePointCounter;

/// A compiled structured schema.
#[derive(Debug)]
pub(crate) struct StructuredProgram {
    pub(crate) graph: Graph,
    pub(crate) root: NodeId,
    /// `max_json_whitespace`: longest run of insignificant whitespace.
    pub(crate) max_whitespace: Option<u32>,
}

impl StructuredProgram {
    pub(crate) fn start(&self) -> DocumentMatcher {
        DocumentMatcher::new(self.root, self.max_whitespace)
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.graph.len() * 256
    }

    /// Whether the language holds values the regular arm never builds an automaton for, so
    /// that its attempt would end in `RequiresStructuredBackend`.
    pub(crate) fn beyond_regular_arm(&self) -> bool {
        self.graph.beyond_regular_arm(self.root)
    }
}

pub(crate) fn compile_program(document: &SchemaDocument, options: &CompilerOptions) -> Result<StructuredProgram> {
    // `oneOf` is lowered as `anyOf` when its branches are disjoint (cheap, no complement); a
    // location found overlapping is lowered again as "exactly one branch".
    // Branches found disjoint under `anyOf` lowering stay disjoint when nested `oneOf`s become
    // exact (their languages only shrink), so each pass only adds pairs.
    let mut exclusive = lower::OneOfOverlaps::new();
    loop {
        match compile_with(document, options, &exclusive)? {
            Lowered::Program(program) => return Ok(*program),
            Lowered::Overlapping(found) => exclusive.extend(found),
        }
    }
}

enum Lowered {
    Program(Box<StructuredProgram>),
    /// Some `oneOf` lowered as `anyOf` have overlapping branches (these pairs).
    Overlapping(lower::OneOfOverlaps),
}

fn compile_with(
    document: &SchemaDocument,
    options: &CompilerOptions,
    exclusive_one_of: &lower::OneOfOverlaps,
) -> Result<Lowered> {
    let mut lowering = lower::Lowering::new(document, options, exclusive_one_of);
    let root = lowering.schema(document.root(), "", crate::schema::read::Position::Value)?;
    let one_of_checks = std::mem::take(&mut lowering.one_of_checks);
    let mut graph = lowering.graph;
    let ready = graph.finish().map_err(graph_diagnostic)?;
    let overlapping: lower::OneOfOverlaps = one_of_checks
        .into_iter()
        .filter_map(|(pointer, pairs)| {
            let overlapping: BTreeSet<lower::BranchOverlap> =
                pairs.into_iter().filter(|&(_, both)| graph.is_satisfiable(both)).map(|(pair, _)| pair).collect();
            (!overlapping.is_empty()).then_some((pointer, overlapping))
        })
        .collect();
    if !overlapping.is_empty() {
        return Ok(Lowered::Overlapping(overlapping));
    }
    graph.prepare_matching(ready).map_err(graph_diagnostic)?;
    if !graph.is_satisfiable(root) {
        return Err(Diagnostic::new(DiagnosticCode::UnsatisfiableSchema, "", "the schema accepts no JSON value").into());
    }
    Ok(Lowered::Program(Box::new(StructuredProgram { graph, root, max_whitespace: options.max_json_whitespace })))
}

/// A schema's structured program under default options, for the unit tests of the arm's rooms.
#[cfg(test)]
pub(crate) fn lowered(schema: &str) -> Result<StructuredProgram> {
    let options = CompilerOptions::default();
    compile_program(&SchemaDocument::parse(schema, &options)?, &options)
}

/// Whether the recogniser accepts `text` whole, for the unit tests of the arm's rooms.
#[cfg(test)]
pub(crate) fn accepts(program: &StructuredProgram, text: &str) -> bool {
    let mut matcher = program.start();
    matcher.feed_all(&program.graph, text.as_bytes()) && matcher.is_accepting()
}

/// The code of the diagnostic a schema is refused with, for the unit tests of the arm's rooms.
#[cfg(test)]
pub(crate) fn refusal(schema: &str) -> DiagnosticCode {
    let error = lowered(schema).expect_err(schema);
    error.diagnostic().expect("a refusal carries a diagnostic").code
}

/// The diagnostic for a graph that could not be finished.
fn graph_diagnostic(error: graph::GraphError) -> Diagnostic {
    use graph::GraphError::*;
    let (code, message) = match error {
        Unsupported { pointer, what } => {
            // What the `closed_objects` policy adds is no location: the schema object it closes is.
            let (at, keyword) = match crate::schema::object::closed_object_of(&pointer) {
                Some(object) => (object, crate::schema::object::CLOSED_OBJECTS),
                None => (&*pointer, pointer.rsplit('/').next().unwrap_or("not")),
            };
            let keyword = keyword.to_string();
            return Diagnostic::new(
                DiagnosticCode::UnsupportedKeyword,
                at.to_string(),
                format!("{keyword} needs {what}, which is not supported yet"),
            )
            .with_keyword(keyword);
        }
        IllFounded => (
            DiagnosticCode::UnsatisfiableSchema,
            "a schema refers to itself without an enclosing object or array".to_string(),
        ),
        GraphTooLarge(n) => (
            DiagnosticCode::ResourceLimit,
            format!("the schema expands to a graph larger than {n} (nodes, shapes and their properties)"),
        ),
        TooManyStates(n) => (DiagnosticCode::ResourceLimit, format!("a string language exceeds {n} states")),
        CountedStrings => (
            DiagnosticCode::ResourceLimit,
            format!(
                "string length bounds above {} that cannot be counted beside the other string keywords (a minLength that large, or unions of different patterns or formats) are not supported yet",
                crate::schema::strings::MAX_LENGTH_BOUND
            ),
        ),
        SyntaxStrings => (
            DiagnosticCode::UnsupportedKeyword,
            "format \"regex\", \"hostname\" or \"idn-hostname\" together with a pattern, length bound, long list of strings or another of them, or on keys (patterns aside, and beside patternProperties or other key constraints), is not supported yet".to_string(),
        ),
        TwoContains => (
            DiagnosticCode::UnsupportedKeyword,
            "two contains rules on one array (through allOf or $ref) are not supported yet".to_string(),
        ),
        TooManyPatterns => (
            DiagnosticCode::ResourceLimit,
            format!("more than {} patternProperties apply to one object", graph::MAX_PATTERNS_PER_OBJECT),
        ),
        TooManyShapes => (
            DiagnosticCode::ResourceLimit,
            format!(
                "a value has more than {} alternative number, object or array shapes (oneOf, not, if)",
                graph::MAX_SHAPES_PER_NODE
            ),
        ),
    };
    Diagnostic::new(code, "", message)
}
