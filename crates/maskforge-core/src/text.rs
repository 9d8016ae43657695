//! Raw-text constraints: the languages of a regular expression and of a choice among strings,
//! matched against the whole output (no JSON around them, every byte significant).

use crate::automata::{ecma, ByteDfa, Re};
use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::options::CompilerOptions;

/// The texts `pattern` (ECMA-262 syntax, as for `pattern`) matches as a whole.
pub(crate) fn regex_language(pattern: &str, options: &CompilerOptions) -> Result<ByteDfa> {
    let language = ecma::full_match_language(pattern, options.limits.max_dfa_states).map_err(|e| {
        let code = if e.limit_exceeded { DiagnosticCode::ResourceLimit } else { DiagnosticCode::UnsupportedPattern };
        Diagnostic::new(code, "", format!("regex {pattern:?}: {e}")).with_keyword("regex")
    })?;
    if language.is_empty_language() {
        let message = format!("regex {pattern:?} matches no text");
        return Err(Diagnostic::new(DiagnosticCode::UnsatisfiableSchema, "", message).with_keyword("regex").into());
    }
    Ok(language)
}

/// Exactly one of `choices`, byte for byte.
pub(crate) fn choice_language<S: AsRef<str>>(choices: &[S], options: &CompilerOptions) -> Result<ByteDfa> {
    if choices.is_empty() {
        let message = "a choice needs at least one string";
        return Err(Diagnostic::new(DiagnosticCode::InvalidKeywordValue, "", message).with_keyword("choices").into());
    }
    let alternatives = choices.iter().map(|c| Re::literal(c.as_ref().as_bytes())).collect();
    let limits = &options.limits;
    Re::alt(alternatives).compile(limits.max_dfa_states, limits.max_nfa_states).map_err(|_| {
        let message = format!("the choice's automaton exceeds {} states", limits.max_dfa_states);
        Diagnostic::new(DiagnosticCode::ResourceLimit, "", message).with_keyword("choices").into()
    })
}
