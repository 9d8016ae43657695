//! The composite arm: a template's automaton with holes, each a JSON value read by a structured
//! program (a JSON part whose schema is not regular: integers, numeric bounds, open objects).
//!
//! The template lowers a structured part to a marker in its automaton: the byte [`MARKER`]
//! (never in UTF-8 text, so no text part takes it), then the hole's index, then the whitespace
//! the part allows after its value. A *cursor* reads text either on the automaton (`Outer`) or
//! inside a hole, with the hole's matcher and the automaton state after the marker to return to.
//! Reading stays deterministic because the template is checked when it is built:
//!
//! - where a marker starts, nothing else does (no text, no end): an entry state leads only into
//!   its hole, so a cursor enters a hole the moment the automaton reaches it;
//! - the value's end is decided by the value: after a complete value a byte goes back to the
//!   automaton when the automaton takes it, and that never competes with the value, because
//!   only a number continues after it is complete, and no text after a hole that may hold a
//!   number starts with a digit, `.`, `e` or `E`.
//!
//! Whitespace before a value is the matcher's, after it the automaton's, so a composite
//! template admits exactly the texts the same template admits with regular JSON parts.
//!
//! A special token the template places is a marker too ([`SPECIAL`], then its index): a cursor
//! reads it only from the token's id ([`CompositeProgram::feed_special`]), never from bytes.

use std::sync::Arc;

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::error::{Diagnostic, DiagnosticCode, Result};
use crate::structured::{DocumentMatcher, StructuredProgram};

/// The first byte of a hole's marker in a template's automaton.
pub(crate) const MARKER: u8 = 0xFF;

/// Most holes one template holds: the byte after the marker names one.
pub(crate) const MAX_HOLES: usize = 256;

/// The first byte of a special token's marker (never in UTF-8 text either); the byte after it
/// names the token among the template's specials. Only that token's id reads it, never a byte.
pub(crate) const SPECIAL: u8 = 0xFE;

/// Most distinct special tokens one template places.
pub(crate) const MAX_SPECIALS: usize = 256;

/// A JSON part on the structured arm, with its pointer in the template for diagnostics.
#[derive(Debug)]
pub(crate) struct Hole {
    pub(crate) program: Arc<StructuredProgram>,
    pub(crate) pointer: String,
}

/// A template's automaton and its holes.
#[derive(Debug)]
pub(crate) struct CompositeProgram {
    pub(crate) dfa: Arc<ByteDfa>,
    pub(crate) holes: Vec<Hole>,
    /// The special tokens the template places, by name, in the order of their markers.
    pub(crate) specials: Vec<String>,
    /// Per automaton state: the hole its marker starts and the state after the marker.
    entries: Vec<Option<Entry>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    hole: usize,
    resume: StateId,
}

/// Where a text stands on a composite program.
#[derive(Debug, Clone)]
pub(crate) enum Cursor {
    /// On the template's automaton: at a state that is no hole's entry, or at an entry where a
    /// special token may start too (the cursor waits there for a byte or the token).
    Outer(StateId),
    /// Inside hole `hole`'s value; `resume`: the automaton state after the hole's marker.
    Hole { hole: usize, matcher: DocumentMatcher, resume: StateId },
}

impl CompositeProgram {
    /// Checks that reading stays deterministic (see the module's notes) and indexes the holes'
    /// entries.
    pub(crate) fn new(dfa: ByteDfa, holes: Vec<Hole>, specials: Vec<String>) -> Result<CompositeProgram> {
        let states = dfa.state_count();
        let mut entries = vec![None; states];
        let refuse = |hole: &Hole, message: &str| -> crate::error::Error {
            Diagnostic::new(DiagnosticCode::RequiresStructuredBackend, &hole.pointer, message)
                .with_keyword("json")
                .into()
        };
        for state in 1..states as StateId {
            let marked = dfa.next(state, MARKER);
            if marked == DEAD {
                continue;
            }
            let mut targets = (0..=255u8).filter(|&b| dfa.next(marked, b) != DEAD);
            let (Some(index), None) = (targets.next(), targets.next()) else {
                let first = (0..=255u8).find(|&b| dfa.next(marked, b) != DEAD).map_or(0, usize::from);
                return Err(refuse(
                    &holes[first.min(holes.len() - 1)],
                    "two JSON parts on the structured arm start at one place of the template",
                ));
            };
            let hole = &holes[usize::from(index)];
            // A special token may start there too: it is read from its id, never from bytes.
            let shared = dfa.is_accepting(state)
                || (0..=255u8).any(|b| b != MARKER && b != SPECIAL && dfa.next(state, b) != DEAD);
            if shared {
                return Err(refuse(
                    hole,
                    "a JSON part on the structured arm must start where nothing else can (after a fixed \
                     text, not after free text, whitespace or an optional part)",
                ));
            }
            entries[state as usize] = Some(Entry { hole: usize::from(index), resume: dfa.next(marked, index) });
        }
        let program = CompositeProgram { dfa: Arc::new(dfa), holes, specials, entries };
        for entry in program.entries.iter().flatten() {
            let hole = &program.holes[entry.hole];
            let may_be_number = {
                let start = hole.program.start();
                (b'-'..=b'9').filter(|&b| b != b'.' && b != b'/').any(|b| start.clone().feed(&hole.program.graph, b))
            };
            let continues_number = |b: u8| {
                let mut after = program.enter(entry.resume);
                program.feed(&mut after, b)
            };
            if may_be_number && b"0123456789.eE".iter().any(|&b| continues_number(b)) {
                return Err(refuse(
                    hole,
                    "the text after a JSON part that may be a number starts with a digit, '.', 'e' or 'E', \
                     which would continue the number",
                ));
            }
        }
        Ok(program)
    }

    /// The cursor at the start of the text.
    pub(crate) fn start(&self) -> Cursor {
        self.enter(self.dfa.start())
    }

    /// Whether automaton state `state` starts a hole.
    pub(crate) fn is_entry(&self, state: StateId) -> bool {
        self.entry_of(state).is_some()
    }

    /// The hole automaton state `state` starts and the state after its marker, if it starts one.
    pub(crate) fn entry_of(&self, state: StateId) -> Option<(usize, StateId)> {
        self.entries.get(state as usize).copied().flatten().map(|Entry { hole, resume }| (hole, resume))
    }

    /// The cursor at automaton state `state`: inside the hole it starts, if it starts one.
    ///
    /// Where a special token may start too (Llama 3's optional `<|python_tag|>` before a call),
    /// the cursor stays on the automaton until a byte or the token decides.
    pub(crate) fn enter(&self, state: StateId) -> Cursor {
        match self.entry_of(state) {
            Some(_) if self.dfa.next(state, SPECIAL) != DEAD => Cursor::Outer(state),
            Some((hole, resume)) => self.hole_start(hole, resume),
            None => Cursor::Outer(state),
        }
    }

    /// The cursor where hole `hole`'s value starts, `resume` after it.
    pub(crate) fn hole_start(&self, hole: usize, resume: StateId) -> Cursor {
        Cursor::Hole { hole, matcher: self.holes[hole].program.start(), resume }
    }

    /// Reads one byte; false when no accepted text continues this way (the cursor is then
    /// unspecified and must be discarded).
    pub(crate) fn feed(&self, cursor: &mut Cursor, b: u8) -> bool {
        match cursor {
            Cursor::Outer(state) => {
                let next = if b == MARKER || b == SPECIAL { DEAD } else { self.dfa.next(*state, b) };
                if next == DEAD {
                    // At an entry the cursor waited at, a byte starts the hole's value.
                    let Some((hole, resume)) = self.entry_of(*state) else { return false };
                    let mut hole = self.hole_start(hole, resume);
                    if !self.feed(&mut hole, b) {
                        return false;
                    }
                    *cursor = hole;
                    return true;
                }
                *cursor = self.enter(next);
                true
            }
            Cursor::Hole { hole, matcher, resume } => {
                let graph = &self.holes[*hole].program.graph;
                if matcher.is_accepting() {
                    let mut after = self.enter(*resume);
                    if self.feed(&mut after, b) {
                        *cursor = after;
                        return true;
                    }
                }
                // Whitespace after the value is the automaton's, never the matcher's.
                matcher.feed(graph, b) && !matcher.is_trailing()
            }
        }
    }

    /// Reads special token `index` (of [`CompositeProgram::specials`]); false when the
    /// template does not place it here.
    pub(crate) fn feed_special(&self, cursor: &mut Cursor, index: u8) -> bool {
        match cursor {
            Cursor::Outer(state) => {
                let marked = self.dfa.next(*state, SPECIAL);
                let next = if marked == DEAD { DEAD } else { self.dfa.next(marked, index) };
                if next == DEAD {
                    return false;
                }
                *cursor = self.enter(next);
                true
            }
            Cursor::Hole { matcher, resume, .. } => {
                if !matcher.is_accepting() {
                    return false;
                }
                let mut after = self.enter(*resume);
                let read = self.feed_special(&mut after, index);
                if read {
                    *cursor = after;
                }
                read
            }
        }
    }

    pub(crate) fn feed_all(&self, cursor: &mut Cursor, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.feed(cursor, b))
    }

    /// Whether the text read to `cursor` is accepted.
    pub(crate) fn is_accepting(&self, cursor: &Cursor) -> bool {
        match cursor {
            Cursor::Outer(state) => self.dfa.is_accepting(*state),
            Cursor::Hole { matcher, resume, .. } => matcher.is_accepting() && self.is_accepting(&self.enter(*resume)),
        }
    }

    /// The automaton's states and the holes' graph nodes.
    pub(crate) fn state_count(&self) -> usize {
        self.dfa.state_count() + self.holes.iter().map(|h| h.program.graph.len()).sum::<usize>()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.dfa.heap_bytes()
            + self.entries.len() * std::mem::size_of::<Option<Entry>>()
            + self.holes.iter().map(|h| h.program.heap_bytes()).sum::<usize>()
    }
}
