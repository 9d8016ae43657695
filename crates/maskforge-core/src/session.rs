//! Sessions: the position of one sequence over a bound schema.

use std::sync::{Arc, Mutex};

use crate::automata::{StateId, DEAD};
use crate::bind::{
    BoundKind, BoundSchema, CompositeMasks, MaskCost, MaskRoute, RegularMasks, StringMemo, StructuredMasks,
};
use crate::composite::Cursor;
use crate::error::{Error, RejectReason, Result};
use crate::executable::Output;
use crate::mask;
use crate::options::SessionOptions;
use crate::structured::DocumentMatcher;
use crate::vocabulary::TokenId;

/// Most bytes [`Session::forced_bytes`] returns: a forced text is a key, a literal or a run of
/// structure, and a caller asks again after committing it.
pub const MAX_FORCED_BYTES: usize = 1024;

/// The decoding position of one sequence.
///
/// Rules: a forbidden token is an error and changes nothing; EOS is allowed exactly when the text
/// so far is a complete accepted instance; after EOS the mask admits only EOS, EOS again is a
/// no-op (batch padding) and any other token is rejected. Every committed token, EOS and
/// padding EOS included, can be undone by [`Session::rollback`] (up to
/// [`SessionOptions::max_rollback_tokens`]); [`Session::fork`] (or `clone`) makes an
/// independent session at the same position.
#[derive(Debug)]
pub struct Session {
    bound: Arc<crate::bind::BoundInner>,
    position: Position,
    finished: bool,
    history: History,
    /// Tokens committed since the start (EOS included), rollbacks deducted.
    tokens: usize,
    /// What the masks inside the current string worked out (see [`StringMemo`]); a fork shares
    /// it until one of the two changes it.
    strings: Mutex<Arc<StringMemo>>,
}

impl Clone for Session {
    fn clone(&self) -> Self {
        Session {
            bound: Arc::clone(&self.bound),
            position: self.position.clone(),
            finished: self.finished,
            history: self.history.clone(),
            tokens: self.tokens,
            strings: Mutex::new(Arc::clone(&self.strings.lock().unwrap_or_else(|e| e.into_inner()))),
        }
    }
}

/// The states before the committed tokens, newest first, as a persistent list: a fork shares
/// its past with the session it came from, so forking costs one pointer, and each entry holds
/// the position the token replaced (an automaton state, or a matcher whose values below its
/// open containers are shared with the next one), not a copy of the document.
#[derive(Debug, Clone, Default)]
struct History {
    newest: Option<Arc<Undo>>,
    /// Entries reachable from `newest`.
    len: usize,
    /// `max_rollback_tokens`.
    max: Option<usize>,
}

/// The state a session had before one committed token.
#[derive(Debug)]
struct Undo {
    /// `None` only while [`History::take_back`] moves it out of an entry it then drops.
    position: Option<Position>,
    finished: bool,
    earlier: Option<Arc<Undo>>,
}

impl Drop for Undo {
    /// Drops a long history iteratively: the derived drop would recurse once per token.
    fn drop(&mut self) {
        let mut earlier = self.earlier.take();
        while let Some(node) = earlier {
            match Arc::try_unwrap(node) {
                Ok(mut node) => earlier = node.earlier.take(),
                Err(_) => break,
            }
        }
    }
}

impl Undo {
    fn kept_position(&self) -> &Position {
        self.position.as_ref().expect("an entry keeps its position until taken")
    }
}

impl History {
    fn new(max: Option<usize>) -> History {
        History { newest: None, len: 0, max }
    }

    /// Tokens that can be undone now.
    fn available(&self) -> usize {
        self.max.map_or(self.len, |max| self.len.min(max))
    }

    fn push(&mut self, position: Position, finished: bool) {
        if self.max == Some(0) {
            return;
        }
        self.newest = Some(Arc::new(Undo { position: Some(position), finished, earlier: self.newest.take() }));
        self.len += 1;
        // Past twice the bound, the newest `max` entries are rebuilt into a list of their own and
        // the rest is dropped: memory stays within the bound at an amortised entry per token.
        if let Some(max) = self.max.filter(|&max| self.len >= 2 * max) {
            let mut kept = Vec::with_capacity(max);
            let mut at = self.newest.as_deref();
            while let Some(node) = at.filter(|_| kept.len() < max) {
                kept.push((node.kept_position().clone(), node.finished));
                at = node.earlier.as_deref();
            }
            self.newest = None;
            for (position, finished) in kept.into_iter().rev() {
                self.newest = Some(Arc::new(Undo { position: Some(position), finished, earlier: self.newest.take() }));
            }
            self.len = max;
        }
    }

    /// Takes the state `n` tokens back (`0 < n <= available()`), leaving the history before
    /// it. Entries no fork shares are moved out, not copied: the usual rollback, of tokens the
    /// session itself just committed, allocates nothing.
    fn take_back(&mut self, n: usize) -> (Position, bool) {
        for _ in 1..n {
            let node = self.newest.take().expect("n tokens are kept");
            self.newest = match Arc::try_unwrap(node) {
                Ok(mut node) => node.earlier.take(),
                Err(shared) => shared.earlier.clone(),
            };
        }
        let node = self.newest.take().expect("n tokens are kept");
        self.len -= n;
        match Arc::try_unwrap(node) {
            Ok(mut node) => {
                self.newest = node.earlier.take();
                (node.position.take().expect("an entry keeps its position until taken"), node.finished)
            }
            // Shared with a fork: copy the one entry that is needed.
            Err(shared) => {
                self.newest = shared.earlier.clone();
                (shared.kept_position().clone(), shared.finished)
            }
        }
    }
}

/// Where a session stands, with the bound arm that reads it.
#[derive(Debug, Clone)]
enum Position {
    Regular {
        masks: Arc<RegularMasks>,
        state: StateId,
    },
    /// The matcher is shared by forks and history entries; a step makes a new one.
    Structured {
        masks: Arc<StructuredMasks>,
        matcher: Arc<DocumentMatcher>,
    },
    /// A template with JSON parts on the structured arm; the cursor is shared like a matcher.
    Composite {
        masks: Arc<CompositeMasks>,
        cursor: Arc<Cursor>,
    },
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
        self.start_session_with(SessionOptions::default())
    }

    /// Starts a session with [`SessionOptions`] (how many tokens it can roll back).
    pub fn start_session_with(&self, options: SessionOptions) -> Result<Session> {
        Ok(Session::new(Arc::clone(self.inner()), options))
    }
}

impl Session {
    pub(crate) fn new(bound: Arc<crate::bind::BoundInner>, options: SessionOptions) -> Self {
        let position = Session::start(&bound);
        let history = History::new(options.max_rollback_tokens);
        Session { bound, position, finished: false, history, tokens: 0, strings: Mutex::default() }
    }

    fn start(bound: &crate::bind::BoundInner) -> Position {
        match &bound.kind {
            BoundKind::Regular(masks) => Position::Regular { state: masks.dfa.start(), masks: Arc::clone(masks) },
            BoundKind::Structured(masks) => {
                Position::Structured { matcher: Arc::new(masks.program.start()), masks: Arc::clone(masks) }
            }
            BoundKind::Composite(masks) => {
                Position::Composite { cursor: Arc::new(masks.program.start()), masks: Arc::clone(masks) }
            }
        }
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
                masks.mask(matcher, &self.strings, self.tokens, out);
            }
            Position::Composite { masks, cursor } => {
                masks.mask(cursor, &self.strings, self.tokens, out);
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
                masks.mask(matcher, &Mutex::default(), self.tokens, &mut scratch)
            }
            Position::Composite { masks, cursor } => {
                let mut scratch = vec![0u32; self.bound.word_count];
                masks.mask(cursor, &Mutex::default(), self.tokens, &mut scratch)
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
        let step = self.check(token)?;
        self.commit(token, step);
        Ok(())
    }

    /// Commits every token of `tokens`, or none: on a refused token the error names its index
    /// ([`Error::DraftRejected`]) and the session is unchanged.
    pub fn advance_many(&mut self, tokens: &[TokenId]) -> Result<()> {
        let steps = self.steps(tokens, |index, token_id, reason| Error::DraftRejected { index, token_id, reason })?;
        for (&token, step) in tokens.iter().zip(steps) {
            self.commit(token, step);
        }
        Ok(())
    }

    /// How many leading tokens of `tokens` the session would commit in a row (EOS counts where
    /// it is allowed), without changing the session: a speculative draft's accepted prefix.
    pub fn validate_tokens(&self, tokens: &[TokenId]) -> usize {
        let mut at = (self.position.clone(), self.finished);
        for (i, &token) in tokens.iter().enumerate() {
            match self.step_from(&at.0, at.1, token) {
                Ok(step) => at = step.applied(at),
                Err(_) => return i,
            }
        }
        tokens.len()
    }

    /// Undoes the last `n` committed tokens (EOS included) and restores the state the session
    /// had then: its position, masks, `is_accepting` and `is_finished`. Rolling back more than
    /// [`Session::rollback_available`] is [`Error::RollbackTooFar`] and changes nothing.
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        let available = self.history.available();
        if n > available {
            return Err(Error::RollbackTooFar { requested: n, available });
        }
        if n > 0 {
            (self.position, self.finished) = self.history.take_back(n);
            self.tokens -= n;
            // Back inside the string the memo was worked out in, it holds at the earlier states.
            let memo = self.strings.get_mut().unwrap_or_else(|e| e.into_inner());
            if !memo.is_empty() {
                let leaves = match &self.position {
                    Position::Structured { matcher, .. } if !self.finished => matcher.forgotten_string_leaves(),
                    Position::Composite { cursor, .. } if !self.finished => match &**cursor {
                        Cursor::Hole { matcher, .. } => matcher.forgotten_string_leaves(),
                        Cursor::Outer(_) => None,
                    },
                    _ => None,
                };
                let holds = match Arc::get_mut(memo) {
                    Some(own) => own.holds_after_rollback(leaves.as_deref(), self.tokens),
                    None => {
                        let mut copy = StringMemo::clone(memo);
                        let holds = copy.holds_after_rollback(leaves.as_deref(), self.tokens);
                        *memo = Arc::new(copy);
                        holds
                    }
                };
                if !holds {
                    *memo = Arc::default();
                }
            }
        }
        Ok(())
    }

    /// How many committed tokens [`Session::rollback`] can undo now.
    pub fn rollback_available(&self) -> usize {
        self.history.available()
    }

    /// An independent session at the same position, with the same history: its cost is a few
    /// shared pointers (the matcher, the history and the string memo are shared until either
    /// session moves on).
    pub fn fork(&self) -> Session {
        self.clone()
    }

    /// The longest text every accepted continuation starts with: what the schema forces next,
    /// such as `":` and a value's opening quote after a key, `rue` after `t`, or a whole key
    /// where the object's next key is determined. An escape that spells the same character as a
    /// plain one (`\u0064` for `d`) is another spelling, not a choice, so the plain character is
    /// forced: appending this text never loses a value. Whitespace, where allowed, is a choice.
    /// On raw text ([`Output::Text`]) every byte is significant and escapes are text like any.
    /// Empty when the session accepts now (EOS is a continuation) or is finished. At most
    /// [`MAX_FORCED_BYTES`].
    pub fn forced_bytes(&self) -> Vec<u8> {
        let mut forced = Vec::new();
        if self.finished {
            return forced;
        }
        let json = self.bound.executable.output() == Output::JsonValue;
        let mut position = self.position.clone();
        while forced.len() < MAX_FORCED_BYTES && !position.is_accepting() {
            let mut live = (0..=255u8).filter_map(|b| position.after_byte(b).map(|next| (b, next)));
            let next = match (live.next(), live.next(), live.next()) {
                (Some((b, next)), None, _) => (b, next),
                (Some((a, after_a)), Some((b, after_b)), None) if json => match (a, b) {
                    (b'\\', c) if escapes_only_spell(&after_a, c) => (c, after_b),
                    (c, b'\\') if escapes_only_spell(&after_b, c) => (c, after_a),
                    _ => break,
                },
                _ => break,
            };
            forced.push(next.0);
            position = next.1;
        }
        forced
    }

    /// Back to the start of the output, with no history.
    pub fn reset(&mut self) {
        self.position = Session::start(&self.bound);
        self.finished = false;
        self.history = History::new(self.history.max);
        self.tokens = 0;
        *self.strings.get_mut().unwrap_or_else(|e| e.into_inner()) = Arc::default();
    }

    /// What committing `token` now would do, without committing it: the first half of a
    /// batch's all-or-nothing advance.
    pub(crate) fn prepare(&self, token: TokenId) -> Result<Prepared> {
        self.check(token).map(|step| Prepared { token, step })
    }

    /// Commits what [`Session::prepare`] worked out on this session, unchanged since.
    pub(crate) fn commit_prepared(&mut self, prepared: Prepared) {
        self.commit(prepared.token, prepared.step);
    }

    fn commit(&mut self, token: TokenId, step: Step) {
        let (position, finished) = match step {
            Step::Finish => (self.position.clone(), true),
            Step::Stay => (self.position.clone(), self.finished),
            Step::Move(next) => {
                let memo = self.strings.get_mut().unwrap_or_else(|e| e.into_inner());
                if !memo.is_empty() {
                    // A memo is worked out inside one hole's value: a token that leaves it, or
                    // moves to another hole, ends it.
                    let same_value = match (&self.position, &next) {
                        (Position::Composite { cursor: before, .. }, Position::Composite { cursor: after, .. }) => {
                            matches!((&**before, &**after), (Cursor::Hole { hole: a, .. }, Cursor::Hole { hole: b, .. }) if a == b)
                        }
                        _ => true,
                    };
                    match (self.bound.vocabulary.token_bytes(token), same_value) {
                        (Some(bytes), true) => Arc::make_mut(memo).advance(bytes),
                        _ => *memo = Arc::default(),
                    }
                }
                (next, self.finished)
            }
        };
        let before = std::mem::replace(&mut self.position, position);
        self.history.push(before, std::mem::replace(&mut self.finished, finished));
        self.tokens += 1;
    }

    /// The steps of `tokens` one after another from the current state, or the first refusal
    /// (made into an error by `error`, from the token's index, id and reason).
    fn steps(&self, tokens: &[TokenId], error: impl Fn(usize, TokenId, RejectReason) -> Error) -> Result<Vec<Step>> {
        let mut at = (self.position.clone(), self.finished);
        let mut steps = Vec::with_capacity(tokens.len());
        for (i, &token) in tokens.iter().enumerate() {
            let step = self.step_from(&at.0, at.1, token).map_err(|e| match e {
                Error::TokenRejected { token_id, reason } => error(i, token_id, reason),
                other => other,
            })?;
            at = step.clone().applied(at);
            steps.push(step);
        }
        Ok(steps)
    }

    fn check(&self, token: TokenId) -> Result<Step> {
        self.step_from(&self.position, self.finished, token)
    }

    /// What committing `token` at `position` (finished or not) does.
    fn step_from(&self, position: &Position, finished: bool, token: TokenId) -> Result<Step> {
        let vocabulary = &self.bound.vocabulary;
        let reject = |reason| Err(Error::TokenRejected { token_id: token, reason });
        if token as usize >= vocabulary.mask_vocab_size() {
            return reject(RejectReason::OutOfRange);
        }
        if vocabulary.is_eos(token) {
            return if finished {
                Ok(Step::Stay)
            } else if position.is_accepting() {
                Ok(Step::Finish)
            } else {
                reject(RejectReason::EosNotAccepting)
            };
        }
        if finished {
            return reject(RejectReason::SessionFinished);
        }
        let Some(bytes) = vocabulary.token_bytes(token) else {
            // A special token a template places: read by its id, where the template has it.
            if let Position::Composite { masks, cursor } = position {
                if let Some(index) = masks.special_index(token) {
                    let mut next = Cursor::clone(cursor);
                    if masks.program.feed_special(&mut next, index) {
                        return Ok(Step::Move(Position::Composite {
                            masks: Arc::clone(masks),
                            cursor: Arc::new(next),
                        }));
                    }
                    return reject(RejectReason::LeavesLanguage);
                }
            }
            return reject(RejectReason::NoBytes);
        };
        match position {
            Position::Regular { masks, state } => match masks.dfa.run(*state, bytes) {
                DEAD => reject(RejectReason::LeavesLanguage),
                next => Ok(Step::Move(Position::Regular { masks: Arc::clone(masks), state: next })),
            },
            Position::Structured { masks, matcher } => {
                let mut next = DocumentMatcher::clone(matcher);
                if next.feed_all(&masks.program.graph, bytes) {
                    Ok(Step::Move(Position::Structured { masks: Arc::clone(masks), matcher: Arc::new(next) }))
                } else {
                    reject(RejectReason::LeavesLanguage)
                }
            }
            Position::Composite { masks, cursor } => {
                let mut next = Cursor::clone(cursor);
                if masks.program.feed_all(&mut next, bytes) {
                    Ok(Step::Move(Position::Composite { masks: Arc::clone(masks), cursor: Arc::new(next) }))
                } else {
                    reject(RejectReason::LeavesLanguage)
                }
            }
        }
    }

    /// True when the text so far is a complete accepted instance (EOS is allowed), including
    /// after EOS was committed.
    pub fn is_accepting(&self) -> bool {
        self.finished || self.position.is_accepting()
    }

    /// True when the instance is done: EOS was committed, or the text so far is accepted and
    /// nothing but whitespace can follow, each step of it accepted too (after the root
    /// object's `}`, the root array's `]`, a root string's closing quote, a literal; not after a
    /// root number, which more digits could extend, until whitespace follows it). Whitespace
    /// after a JSON value is insignificant, so ending the output here loses no value: generation
    /// loops end a row here as if EOS were chosen.
    ///
    /// On raw text ([`Output::Text`]) whitespace is text: a session is done there once nothing
    /// at all can follow.
    pub fn is_done(&self) -> bool {
        if self.finished {
            return true;
        }
        match self.bound.executable.output() {
            Output::JsonValue => self.position.only_whitespace_follows(),
            Output::Text => {
                self.position.is_accepting()
                    && (0..=255u8).all(|b| self.position.after_byte(b).is_none())
                    && !self.position.takes_a_special_token()
            }
        }
    }

    /// `ceil(mask_vocab_size / 32)`: the u32 words of this session's masks.
    pub fn mask_word_count(&self) -> usize {
        self.bound.word_count
    }

    /// True once EOS was committed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// [`Session::is_finished`], under the name serving engines use.
    pub fn is_terminated(&self) -> bool {
        self.finished
    }

    /// The bound schema this session runs on.
    pub fn bound_schema(&self) -> BoundSchema {
        BoundSchema::from_inner(Arc::clone(&self.bound))
    }
}

/// A token checked on a session and the step it makes there, to be committed later.
pub(crate) struct Prepared {
    token: TokenId,
    step: Step,
}

#[derive(Clone)]
enum Step {
    Move(Position),
    Stay,
    Finish,
}

impl Step {
    /// The (position, finished) pair after this step from `at`.
    fn applied(self, at: (Position, bool)) -> (Position, bool) {
        match self {
            Step::Move(next) => (next, at.1),
            Step::Stay => at,
            Step::Finish => (at.0, true),
        }
    }
}

impl Position {
    /// Whether this position accepts and every continuation is whitespace through accepting
    /// positions. Explores the positions whitespace reaches; past [`MAX_WHITESPACE_POSITIONS`]
    /// of them it answers false, which only keeps a row going.
    fn only_whitespace_follows(&self) -> bool {
        const MAX_WHITESPACE_POSITIONS: usize = 64;
        const WHITESPACE: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];
        let mut pending = vec![self.clone()];
        let mut seen_states = Vec::new();
        let mut explored = 0;
        while let Some(position) = pending.pop() {
            if !position.is_accepting() {
                return false;
            }
            match &position {
                // Once the root value has ended the matcher takes whitespace only.
                Position::Structured { matcher, .. } if matcher.is_trailing() => continue,
                Position::Regular { state, .. } if seen_states.contains(state) => continue,
                Position::Regular { state, .. } => seen_states.push(*state),
                Position::Structured { .. } | Position::Composite { .. } => {}
            }
            explored += 1;
            if explored > MAX_WHITESPACE_POSITIONS {
                return false;
            }
            for b in 0..=255u8 {
                match position.after_byte(b) {
                    None => {}
                    Some(next) if WHITESPACE.contains(&b) => pending.push(next),
                    Some(_) => return false,
                }
            }
        }
        true
    }

    /// The position after one more byte, when the text stays completable.
    fn after_byte(&self, b: u8) -> Option<Position> {
        match self {
            Position::Regular { masks, state } => match masks.dfa.next(*state, b) {
                DEAD => None,
                next => Some(Position::Regular { masks: Arc::clone(masks), state: next }),
            },
            Position::Structured { masks, matcher } => {
                let graph = &masks.program.graph;
                if matcher.refuses(graph, b) {
                    return None;
                }
                let mut next = DocumentMatcher::clone(matcher);
                next.feed(graph, b).then(|| Position::Structured { masks: Arc::clone(masks), matcher: Arc::new(next) })
            }
            Position::Composite { masks, cursor } => {
                let mut next = Cursor::clone(cursor);
                masks
                    .program
                    .feed(&mut next, b)
                    .then(|| Position::Composite { masks: Arc::clone(masks), cursor: Arc::new(next) })
            }
        }
    }

    /// Whether a special token a template places may follow.
    fn takes_a_special_token(&self) -> bool {
        match self {
            Position::Composite { masks, cursor } => (0..masks.program.specials.len())
                .any(|index| masks.program.feed_special(&mut Cursor::clone(cursor), index as u8)),
            _ => false,
        }
    }

    /// Whether the text read to this position is a complete accepted instance.
    fn is_accepting(&self) -> bool {
        match self {
            Position::Regular { masks, state } => masks.dfa.is_accepting(*state),
            Position::Structured { matcher, .. } => matcher.is_accepting(),
            Position::Composite { masks, cursor } => masks.program.is_accepting(cursor),
        }
    }
}

/// Whether every live continuation of `after_backslash` (a position just after a string's `\`)
/// spells the printable ASCII character `c`: `\/` for `/`, or `\u00XY` with the code's hex
/// digits in either case. Then `\` is not a choice beside a plain `c`.
fn escapes_only_spell(after_backslash: &Position, c: u8) -> bool {
    if !(0x20..0x7f).contains(&c) || c == b'"' || c == b'\\' {
        return false;
    }
    let hex = |digit: u8| -> Vec<u8> {
        let lower = b"0123456789abcdef"[usize::from(digit)];
        if lower.is_ascii_alphabetic() {
            vec![lower, lower.to_ascii_uppercase()]
        } else {
            vec![lower]
        }
    };
    // The bytes each spelling may take at each place after the backslash.
    let mut spellings: Vec<Vec<Vec<u8>>> = vec![vec![vec![b'u'], vec![b'0'], vec![b'0'], hex(c >> 4), hex(c & 15)]];
    if c == b'/' {
        spellings.push(vec![vec![b'/']]);
    }
    fn walk(position: &Position, depth: usize, spellings: &[&Vec<Vec<u8>>]) -> bool {
        if spellings.iter().any(|s| s.len() == depth) {
            return true; // the character is spelled; what follows is the plain path's too
        }
        (0..=255u8).all(|b| match position.after_byte(b) {
            None => true,
            Some(next) => {
                let matching: Vec<_> = spellings.iter().copied().filter(|s| s[depth].contains(&b)).collect();
                !matching.is_empty() && walk(&next, depth + 1, &matching)
            }
        })
    }
    walk(after_backslash, 0, &spellings.iter().collect::<Vec<_>>())
}
