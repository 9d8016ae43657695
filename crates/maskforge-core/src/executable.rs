//! The vocabulary-independent executable a schema compiles to, and the routing between backends.

use std::sync::Arc;

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::error::Result;
use crate::options::CompilerOptions;
use crate::schema::SchemaDocument;

/// A compiled schema, independent of any vocabulary. Immutable and shareable across threads.
#[derive(Debug)]
pub struct ExecutableSchema {
    backend: Backend,
}

#[derive(Debug)]
pub(crate) enum Backend {
    /// The whole language as one minimal byte DFA.
    Regular(Arc<ByteDfa>),
}

impl ExecutableSchema {
    /// Compiles a parsed schema document. Routing between backends is internal.
    pub fn compile(document: &SchemaDocument, options: &CompilerOptions) -> Result<ExecutableSchema> {
        let dfa = crate::regular::compile_document(document, options)?;
        Ok(ExecutableSchema { backend: Backend::Regular(Arc::new(dfa)) })
    }

    /// Whether this schema needs the pushdown (structured) backend. Every schema this version
    /// compiles is regular; the others are rejected with `MF-E004`.
    pub fn requires_structured_backend(&self) -> bool {
        match self.backend {
            Backend::Regular(_) => false,
        }
    }

    /// `"regular"` or `"structured"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Regular(_) => "regular",
        }
    }

    /// States of the executable's automaton.
    pub fn state_count(&self) -> usize {
        match &self.backend {
            Backend::Regular(dfa) => dfa.state_count(),
        }
    }

    /// Approximate heap size, for cache budgets.
    pub fn heap_bytes(&self) -> usize {
        match &self.backend {
            Backend::Regular(dfa) => dfa.heap_bytes(),
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }

    /// A matcher at the start of the text.
    pub fn start_matcher(&self) -> Matcher<'_> {
        match &self.backend {
            Backend::Regular(dfa) => Matcher { dfa, state: dfa.start() },
        }
    }

    /// Whole-text membership: is `text` a complete accepted instance?
    pub fn accepts(&self, text: &[u8]) -> bool {
        let mut m = self.start_matcher();
        m.feed(text) && m.is_accepting()
    }
}

/// A byte-at-a-time recogniser over an executable: the slow, obviously-correct route that the
/// reference masker and tests use.
#[derive(Debug, Clone)]
pub struct Matcher<'a> {
    dfa: &'a ByteDfa,
    state: StateId,
}

impl Matcher<'_> {
    /// Feeds bytes; false (and the matcher is dead) once the text can no longer be completed.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        self.state = self.dfa.run(self.state, bytes);
        self.state != DEAD
    }

    /// True when the bytes so far form a complete accepted instance.
    pub fn is_accepting(&self) -> bool {
        self.state != DEAD && self.dfa.is_accepting(self.state)
    }

    pub fn is_dead(&self) -> bool {
        self.state == DEAD
    }
}
