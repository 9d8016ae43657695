//! The regular arm: schemas whose language is regular compile to one minimal byte DFA.
//!
//! A schema is read as six per-type languages (`lang::Typed`): what it admits among nulls, booleans,
//! numbers, strings, arrays and objects. Keywords narrow one type's language; combinators
//! (`allOf`, `anyOf`, `oneOf`, `not`, `enum`, `$ref`) combine type by type, with automaton
//! products where both sides are regular. A type whose language is not regular (integers,
//! numeric bounds, open objects, unconstrained nesting, recursion) carries the diagnostic that
//! says why; it only becomes an error if it survives into the final language.

mod lang;
mod lower;

use crate::automata::{json, ByteDfa, Re};
use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::options::CompilerOptions;
use crate::schema::SchemaDocument;

/// Compiles a whole document: `ws value ws`, determinised and minimised. Runs on a thread with
/// the compilation stack ([`crate::compile_stack::COMPILE_STACK_BYTES`]), whatever thread calls it.
pub fn compile_automaton(document: &SchemaDocument, options: &CompilerOptions) -> Result<ByteDfa> {
    crate::compile_stack::on_compile_stack(|| compile_on_this_stack(document, options))
}

/// [`compile_automaton`] on the caller's stack.
pub(crate) fn compile_on_this_stack(document: &SchemaDocument, options: &CompilerOptions) -> Result<ByteDfa> {
    // Decide the arm before building anything: a schema with a keyword only the structured
    // arm reads is refused here, not after its other parts were determinised.
    let mut probe = lower::Lowering::probe(document, options);
    if let Err(d) = probe.schema(document.root(), "").and_then(|root| probe.value_language(&root, "")) {
        if d.code == DiagnosticCode::RequiresStructuredBackend {
            return Err(d.into());
        }
    }
    let mut lowering = lower::Lowering::new(document, options);
    let root = lowering.schema(document.root(), "")?;
    let value = lowering.value_language(&root, "")?;
    let whole = Re::concat(vec![json::whitespace(), value, json::whitespace()]);
    let mut dfa = lowering.determinise(&whole, "")?;
    if let Some(max) = options.max_json_whitespace {
        // Whitespace sits in several places of the grammar (`{ ws body ws }` with an empty body
        // has two adjacent runs): bound the runs on the whole text instead.
        let runs = lowering.determinise(&json::whitespace_runs_at_most(max), "")?;
        dfa = dfa.intersect(&runs, options.limits.max_dfa_states).map_err(|e| {
            Diagnostic::new(
                DiagnosticCode::ResourceLimit,
                "",
                format!("max_json_whitespace makes the schema's automaton exceed {} states", e.limit),
            )
        })?;
    }
    if dfa.is_empty_language() {
        return Err(Diagnostic::new(DiagnosticCode::UnsatisfiableSchema, "", "the schema accepts no JSON value").into());
    }
    Ok(dfa)
}
