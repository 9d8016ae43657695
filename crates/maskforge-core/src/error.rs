//! Typed errors. Every failure the library can report is a variant here; nothing panics on bad input.

use std::fmt;

/// Stable diagnostic codes. The string form (`MF-E0xx`) is part of the public contract:
/// codes are never renumbered, only added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticCode {
    /// The schema text is not JSON.
    InvalidJson,
    /// A known keyword has a value of the wrong type or shape.
    InvalidKeywordValue,
    /// A known keyword that this version does not support.
    UnsupportedKeyword,
    /// The schema's language is not regular (or too large) and needs the structured backend,
    /// which does not support this construct yet.
    RequiresStructuredBackend,
    /// A `$ref` that cannot be resolved.
    UnresolvedReference,
    /// The schema accepts no instance at all, so no generation can succeed.
    UnsatisfiableSchema,
    /// A resource limit (document size, DFA states, nesting depth...) was exceeded.
    ResourceLimit,
    /// A regular expression that is malformed or uses a construct outside the supported ECMA-262 subset.
    UnsupportedPattern,
    /// `$schema` names a draft that is not supported.
    UnknownDraft,
}

impl DiagnosticCode {
    /// The stable string form of the code, e.g. `MF-E004`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::InvalidJson => "MF-E001",
            DiagnosticCode::InvalidKeywordValue => "MF-E002",
            DiagnosticCode::UnsupportedKeyword => "MF-E003",
            DiagnosticCode::RequiresStructuredBackend => "MF-E004",
            DiagnosticCode::UnresolvedReference => "MF-E005",
            DiagnosticCode::UnsatisfiableSchema => "MF-E006",
            DiagnosticCode::ResourceLimit => "MF-E007",
            DiagnosticCode::UnsupportedPattern => "MF-E008",
            DiagnosticCode::UnknownDraft => "MF-E009",
        }
    }

    /// Every code, in numeric order (used by documentation and tests).
    pub const ALL: [DiagnosticCode; 9] = [
        DiagnosticCode::InvalidJson,
        DiagnosticCode::InvalidKeywordValue,
        DiagnosticCode::UnsupportedKeyword,
        DiagnosticCode::RequiresStructuredBackend,
        DiagnosticCode::UnresolvedReference,
        DiagnosticCode::UnsatisfiableSchema,
        DiagnosticCode::ResourceLimit,
        DiagnosticCode::UnsupportedPattern,
        DiagnosticCode::UnknownDraft,
    ];
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem with a schema: what, which keyword, and where (a JSON Pointer into the schema document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of problem it is; stable across versions, unlike the message.
    pub code: DiagnosticCode,
    /// The keyword at fault, when one is.
    pub keyword: Option<String>,
    /// JSON Pointer (RFC 6901) of the schema location at fault; `""` is the root.
    pub pointer: String,
    /// A human-readable explanation, for people rather than programs: its wording may change.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `pointer` (a JSON Pointer, `""` for the root) without a keyword.
    pub fn new(code: DiagnosticCode, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic { code, keyword: None, pointer: pointer.into(), message: message.into() }
    }

    /// Names the keyword at fault.
    pub fn with_keyword(mut self, keyword: impl Into<String>) -> Self {
        self.keyword = Some(keyword.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "#" } else { &self.pointer };
        match &self.keyword {
            Some(keyword) => write!(f, "{} at {pointer} ({keyword}): {}", self.code, self.message),
            None => write!(f, "{} at {pointer}: {}", self.code, self.message),
        }
    }
}

/// Why a token cannot be committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectReason {
    /// The id is not below the mask vocabulary size.
    OutOfRange,
    /// The id has no bytes (padding, a special token) and is not EOS.
    NoBytes,
    /// The token's bytes lead outside the schema's language.
    LeavesLanguage,
    /// EOS while the text so far is not a complete accepted instance.
    EosNotAccepting,
    /// Any token but EOS after the session finished.
    SessionFinished,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RejectReason::OutOfRange => "token id is out of range for this vocabulary",
            RejectReason::NoBytes => "token has no bytes (special or padding token)",
            RejectReason::LeavesLanguage => "token leads outside the schema's language",
            RejectReason::EosNotAccepting => "EOS before the output is a complete accepted instance",
            RejectReason::SessionFinished => "the session is finished: only EOS may follow",
        })
    }
}

/// Every error of the crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The schema cannot be compiled; see the diagnostic's code.
    #[error("{0}")]
    Schema(Diagnostic),
    /// A vocabulary cannot be built or decoded.
    #[error("invalid vocabulary: {0}")]
    Vocabulary(String),
    /// A token the mask forbids; the session is unchanged.
    #[error("token {token_id} rejected: {reason}")]
    TokenRejected {
        /// The token offered.
        token_id: u32,
        /// Why it cannot be committed.
        reason: RejectReason,
    },
    /// A token of a draft (`Session::advance_many`) that cannot be committed after the ones
    /// before it; the session is unchanged.
    #[error("draft token {index} (id {token_id}) rejected: {reason}")]
    DraftRejected {
        /// Position of the token in the draft.
        index: usize,
        /// The token offered there.
        token_id: u32,
        /// Why it cannot be committed.
        reason: RejectReason,
    },
    /// A batch whose sessions have different mask widths (bound to different vocabularies);
    /// nothing was written.
    #[error("session {index} of the batch has another mask width than session 0: bind them to one vocabulary")]
    BatchMismatch {
        /// The first session that differs.
        index: usize,
    },
    /// A batch call ([`advance_batch`](crate::advance_batch), [`rollback_batch`](crate::rollback_batch))
    /// given another number of arguments than sessions; no session changed.
    #[error("a batch of {sessions} sessions was given {given} {what}")]
    BatchLength {
        /// Sessions in the batch.
        sessions: usize,
        /// Arguments given.
        given: usize,
        /// What the arguments are: `"tokens"` or `"counts"`.
        what: &'static str,
    },
    /// A token of [`advance_batch`](crate::advance_batch) that its session cannot commit; no
    /// session of the batch changed.
    #[error("batch session {index}: token {token_id} rejected: {reason}")]
    BatchRejected {
        /// Position of the session (and its token) in the batch.
        index: usize,
        /// The token offered to it.
        token_id: u32,
        /// Why it cannot be committed.
        reason: RejectReason,
    },
    /// A count of [`rollback_batch`](crate::rollback_batch) beyond what its session keeps; no
    /// session of the batch changed.
    #[error("batch session {index}: cannot roll back {requested} tokens: the session keeps {available}")]
    BatchRollbackTooFar {
        /// Position of the session (and its count) in the batch.
        index: usize,
        /// Tokens asked to undo.
        requested: usize,
        /// Tokens that session can undo now.
        available: usize,
    },
    /// A rollback of more tokens than the session keeps; the session is unchanged.
    #[error("cannot roll back {requested} tokens: the session keeps {available}")]
    RollbackTooFar {
        /// Tokens asked to undo.
        requested: usize,
        /// Tokens the session can undo now (committed since the start or the last reset, at
        /// most `max_rollback_tokens`).
        available: usize,
    },
    /// Bytes [`Compiler::load_program`](crate::Compiler::load_program) cannot read as a program.
    #[error("cannot load program: {0}")]
    ProgramLoad(LoadError),
    /// A mask buffer too small for the bound schema's mask; nothing was written. A larger
    /// buffer is fine: only its first `needed` units are written.
    #[error("mask buffer too small: {needed} {unit} needed, {actual} given")]
    MaskBuffer {
        /// Length the mask needs, in `unit`s.
        needed: usize,
        /// Length of the buffer given, in `unit`s.
        actual: usize,
        /// What the lengths count: `"u32 words"` or `"bytes"`.
        unit: &'static str,
    },
}

/// Why bytes are not a program this build loads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes do not start as a program's bytes do.
    #[error("not a MaskForge program")]
    NotAProgram,
    /// Written by another MaskForge version (or another version of the format).
    #[error("written by MaskForge {found}, this is {expected}")]
    Version {
        /// The version that wrote them.
        found: String,
        /// This build's version.
        expected: String,
    },
    /// Damaged or truncated: the checksum or the content does not hold.
    #[error("damaged: {0}")]
    Damaged(String),
}

impl Error {
    /// The diagnostic of a schema error.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            Error::Schema(d) => Some(d),
            _ => None,
        }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Error::Schema(d)
    }
}

/// The crate's result type: [`Error`] unless another error type is named.
pub type Result<T, E = Error> = std::result::Result<T, E>;
