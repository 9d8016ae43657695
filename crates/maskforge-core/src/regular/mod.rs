//! The regular arm: schemas whose language is regular compile to one minimal byte DFA.

use crate::automata::ByteDfa;
use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::options::CompilerOptions;
use crate::schema::SchemaDocument;

pub fn compile_document(_document: &SchemaDocument, _options: &CompilerOptions) -> Result<ByteDfa> {
    Err(Diagnostic::new(DiagnosticCode::RequiresStructuredBackend, "", "not yet").into())
}
