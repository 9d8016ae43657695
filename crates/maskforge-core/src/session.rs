//! Sessions: the position of one sequence over a bound schema.

use std::sync::{Arc, Mutex};

use crate::automata::{StateId, DEAD};
use crate::bind::{BoundKind, BoundSchema, MaskCost, MaskRoute, RegularMasks, StringMemo, StructuredMasks};
use crate::error::{Error, RejectReason, Result};
use crate::mask;
use crate::structured::DocumentMatcher;
use crate::vocabulary::TokenId;

/// The decoding position of one sequence. Append-only: exactly one token per step.
///
/// Rules: a forbidden token is an error and changes nothing; EOS is allowed exactly when the text
/// so far is a complete accepted instance; after EOS the mask admits only EOS, EOS again is a
/// no-op (batch padding) and any other token is rejected.
#[derive(Debug)]
pub struct Session {
    bound: Arc<crate::bind::BoundInner>,
    position: Position,
    finished: bool,
    /// What the masks inside the current string worked out (see [`StringMemo`]).
    strings: Mutex<StringMemo>,
}

impl Clone for Session {
    fn clone(&self) -> Self {
        Session {
            bound: Arc::clone(&self.bound),
            position: self.position.clone(),
            finished: self.finished,
            strings: Mutex::new(self.strings.lock().unwrap_or_else(|e| e.into_inner()).clone()),
        }
    }
}

/// Where a session stands, with the bound arm that reads it.
#[derive(Debug, Clone)]
enum Position {
    Regular { masks: Arc<RegularMasks>, state: StateId },
    Structured { masks: Arc<StructuredMasks>, matcher: Box<DocumentMatcher> },
}

/// Sessions start from a bound schema; binding itself knows nothing of them.
impl BoundSchema {
    /// Starts a session at the beginning of the output. A bound schema is shared by any number
    /// of sessions, across threads.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use maskforge_core::{build_vocabulary, CompiledVocabulary, Compiler, CompilerOptions};
    ///
    /// let tokens = [&b"1"[..], b"2", b"["];
    /// let map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
    /// let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(3, map)?))?;
    /// let bound = Compiler::new(CompilerOptions::default()).compile_json_schema(r#"{"type": "integer"}"#)?.bind(&vocabulary)?;
    /// let masks: Vec<Vec<u32>> = std::thread::scope(|scope| {
    ///     let workers: Vec<_> = (0..2)
    ///         .map(|_| {
    ///             scope.spawn(|| {
    ///                 let session = bound.start_session().unwrap();
    ///                 let mut mask = vec![0u32; bound.mask_word_count()];
    ///                 session.write_mask(&mut mask).unwrap();
    ///                 mask
    ///             })
    ///         })
    ///         .collect();
    ///     workers.into_iter().map(|w| w.join().unwrap()).collect()
    /// });
    /// assert_eq!(masks[0], vec![0b011]); // `1` or `2`, not `[`
    /// assert_eq!(masks[0], masks[1]);
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn start_session(&self) -> Result<Session> {
        Ok(Session::new(Arc::clone(self.inner())))
    }
}

impl Session {
    pub(crate) fn new(bound: Arc<crate::bind::BoundInner>) -> Self {
        let position = match &bound.kind {
            BoundKind::Regular(masks) => Position::Regular { state: masks.dfa.start(), masks: Arc::clone(masks) },
            BoundKind::Structured(masks) => {
                Position::Structured { matcher: Box::new(masks.program.start()), masks: Arc::clone(masks) }
            }
        };
        Session { bound, position, finished: false, strings: Mutex::default() }
    }

    /// Writes the allowed-token mask into `buffer` (at least `mask_word_count()` words; only
    /// that many are written).
    pub fn write_mask(&self, buffer: &mut [u32]) -> Result<()> {
        let words = self.bound.word_count;
        mask::check_words(buffer, words)?;
        let out = &mut buffer[..words];
        if self.finished {
            out.fill(0);
            self.bound.set_eos(out);
            return Ok(());
        }
        match &self.position {
            Position::Regular { masks, state } => out.copy_from_slice(masks.row(*state)),
            Position::Structured { masks, matcher } => {
                masks.mask(matcher, &self.strings, out);
            }
        }
        Ok(())
    }

    /// What writing the current mask takes: the route and the number of token-trie nodes the
    /// structured matcher is stepped through. For cost tables and profiling (it computes the
    /// mask once, into a scratch buffer); the count depends only on the schema, the position
    /// and the vocabulary, not on the machine.
    pub fn mask_cost(&self) -> MaskCost {
        if self.finished {
            return MaskCost { route: MaskRoute::Finished, trie_steps: 0 };
        }
        match &self.position {
            Position::Regular { .. } => MaskCost { route: MaskRoute::Row, trie_steps: 0 },
            Position::Structured { masks, matcher } => {
                // A memo of its own, so that the count does not depend on the masks written before.
                let mut scratch = vec![0u32; self.bound.word_count];
                masks.mask(matcher, &Mutex::default(), &mut scratch)
            }
        }
    }

    /// Writes the mask as `4 * mask_word_count()` little-endian bytes.
    pub fn write_mask_le_bytes(&self, buffer: &mut [u8]) -> Result<()> {
        if let (false, Position::Regular { masks, state }) = (self.finished, &self.position) {
            return mask::write_le_bytes(masks.row(*state), buffer);
        }
        let needed = self.bound.word_count * 4;
        if cfg!(target_endian = "little") && buffer.len() >= needed {
            // SAFETY: every bit pattern is a valid u32, and `align_to_mut` only hands out
            // aligned words; on a little-endian target their bytes are the encoding asked for.
            let (head, words, _) = unsafe { buffer[..needed].align_to_mut::<u32>() };
            if head.is_empty() && words.len() == self.bound.word_count {
                // An aligned buffer (a NumPy or torch mask is): written in place, no copy.
                return self.write_mask(words);
            }
        }
        let mut words = vec![0u32; self.bound.word_count];
        self.write_mask(&mut words)?;
        mask::write_le_bytes(&words, buffer)
    }

    /// Whether `token` may be committed now (the mask bit, without writing a mask).
    pub fn is_allowed(&self, token: TokenId) -> bool {
        self.check(token).is_ok()
    }

    /// Commits one token. On error the session is unchanged.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use maskforge_core::{build_vocabulary, CompiledVocabulary, Compiler, CompilerOptions, Error};
    ///
    /// let tokens = [&b"tr"[..], b"ue", b"fa", b"lse", b"1"];
    /// let map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
    /// let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(5, map)?))?;
    /// let bound = Compiler::new(CompilerOptions::default()).compile_json_schema(r#"{"const": true}"#)?.bind(&vocabulary)?;
    ///
    /// let mut session = bound.start_session()?;
    /// assert!(!session.is_allowed(2)); // `fa` leads outside the schema's language
    /// assert!(matches!(session.advance(2), Err(Error::TokenRejected { token_id: 2, .. })));
    /// session.advance(0)?; // `tr`: the rejection above changed nothing
    /// session.advance(1)?; // `ue`
    /// assert!(session.is_accepting() && session.is_allowed(5)); // EOS now allowed
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn advance(&mut self, token: TokenId) -> Result<()> {
        match self.check(token)? {
            Step::Finish => self.finished = true,
            Step::Stay => {}
            Step::Move(next) => {
                self.position = next;
                if let Some(bytes) = self.bound.vocabulary.token_bytes(token) {
                    self.strings.get_mut().unwrap_or_else(|e| e.into_inner()).advance(bytes);
                }
            }
        }
        Ok(())
    }

    fn check(&self, token: TokenId) -> Result<Step> {
        let vocabulary = &self.bound.vocabulary;
        let reject = |reason| Err(Error::TokenRejected { token_id: token, reason });
        if token as usize >= vocabulary.mask_vocab_size() {
            return reject(RejectReason::OutOfRange);
        }
        if vocabulary.is_eos(token) {
            return if self.finished {
                Ok(Step::Stay)
            } else if self.is_accepting() {
                Ok(Step::Finish)
            } else {
                reject(RejectReason::EosNotAccepting)
            };
        }
        if self.finished {
            return reject(RejectReason::SessionFinished);
        }
        let Some(bytes) = vocabulary.token_bytes(token) else {
            return reject(RejectReason::NoBytes);
        };
        match &self.position {
            Position::Regular { masks, state } => match masks.dfa.run(*state, bytes) {
                DEAD => reject(RejectReason::LeavesLanguage),
                next => Ok(Step::Move(Position::Regular { masks: Arc::clone(masks), state: next })),
            },
            Position::Structured { masks, matcher } => {
                let mut next = matcher.clone();
                if next.feed_all(&masks.program.graph, bytes) {
                    Ok(Step::Move(Position::Structured { masks: Arc::clone(masks), matcher: next }))
                } else {
                    reject(RejectReason::LeavesLanguage)
                }
            }
        }
    }

    /// True when the text so far is a complete accepted instance (EOS is allowed), including
    /// after EOS was committed.
    pub fn is_accepting(&self) -> bool {
        self.finished
            || match &self.position {
                Position::Regular { masks, state } => masks.dfa.is_accepting(*state),
                Position::Structured { masks, matcher } => matcher.is_accepting(&masks.program.graph),
            }
    }

    /// True once EOS was committed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The bound schema this session runs on.
    pub fn bound_schema(&self) -> BoundSchema {
        BoundSchema::from_inner(Arc::clone(&self.bound))
    }
}

enum Step {
    Move(Position),
    Stay,
    Finish,
}
