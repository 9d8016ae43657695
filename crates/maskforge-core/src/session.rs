//! Sessions: the position of one sequence over a bound schema.

use std::sync::Arc;

use crate::automata::{StateId, DEAD};
use crate::bind::BoundSchema;
use crate::error::{Error, RejectReason, Result};
use crate::mask;
use crate::vocabulary::TokenId;

/// The decoding position of one sequence. Append-only: exactly one token per step.
///
/// Rules: a forbidden token is an error and changes nothing; EOS is allowed exactly when the text
/// so far is a complete accepted instance; after EOS the mask admits only EOS, EOS again is a
/// no-op (batch padding) and any other token is rejected.
#[derive(Debug, Clone)]
pub struct Session {
    bound: Arc<crate::bind::BoundInner>,
    state: StateId,
    finished: bool,
}

impl Session {
    pub(crate) fn new(bound: Arc<crate::bind::BoundInner>) -> Self {
        let state = bound.dfa.start();
        Session { bound, state, finished: false }
    }

    /// Writes the allowed-token mask into `buffer` (at least `mask_word_count()` words; only
    /// that many are written).
    pub fn write_mask(&self, buffer: &mut [u32]) -> Result<()> {
        let words = self.bound.rows.word_count();
        mask::check_words(buffer, words)?;
        let out = &mut buffer[..words];
        if self.finished {
            out.fill(0);
            for &eos in self.bound.vocabulary.eos_token_ids() {
                mask::set_bit(out, eos);
            }
        } else {
            out.copy_from_slice(self.bound.row(self.state));
        }
        Ok(())
    }

    /// Writes the mask as `4 * mask_word_count()` little-endian bytes.
    pub fn write_mask_le_bytes(&self, buffer: &mut [u8]) -> Result<()> {
        if self.finished {
            let mut words = vec![0u32; self.bound.rows.word_count()];
            self.write_mask(&mut words)?;
            return mask::write_le_bytes(&words, buffer);
        }
        mask::write_le_bytes(self.bound.row(self.state), buffer)
    }

    /// Whether `token` may be committed now (the mask bit, without writing a mask).
    pub fn is_allowed(&self, token: TokenId) -> bool {
        self.check(token).is_ok()
    }

    /// Commits one token. On error the session is unchanged.
    pub fn advance(&mut self, token: TokenId) -> Result<()> {
        match self.check(token)? {
            Step::Finish => self.finished = true,
            Step::Stay => {}
            Step::Move(next) => self.state = next,
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
        match self.bound.dfa.run(self.state, bytes) {
            DEAD => reject(RejectReason::LeavesLanguage),
            next => Ok(Step::Move(next)),
        }
    }

    /// True when the text so far is a complete accepted instance (EOS is allowed), including
    /// after EOS was committed.
    pub fn is_accepting(&self) -> bool {
        self.finished || self.bound.dfa.is_accepting(self.state)
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
    Move(StateId),
    Stay,
    Finish,
}
