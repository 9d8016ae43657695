//! The recogniser's strings beyond one automaton: strings admitted by length alone (a code
//! point counter beside the automaton), and strings read by a syntax (ECMA-262 patterns, host
//! names).
//!
//! Part of the recogniser: it never calls the mask queries.

use std::sync::Arc;

use super::Step;
use crate::automata::{ByteDfa, StateId, DEAD};
use crate::schema::strings::{LengthRange, StringSyntax};
use crate::structured::graph::CodePointRoom;
use crate::structured::hostname::HostnameReader;
use crate::structured::pattern_syntax::{PatternSyntax, PlainContext};
use crate::structured::string_decoder::{CodePointCounter, DecodeStep, StringDecoder};

/// A string admitted by its length in code points (a bound too large for an automaton), read on
/// the automaton of the counted strings with a counter; the node's other strings, if any, run
/// alongside.
#[derive(Debug, Clone)]
pub(crate) struct CountedString {
    /// State on `texts` ([`DEAD`] once the length rules this reading out).
    pub(super) text: StateId,
    /// [`Graph::any_string`], or the pattern's or format's strings that are counted.
    pub(super) texts: Arc<ByteDfa>,
    /// For `texts` other than every string: the code points each state needs to close (the
    /// range's minimum is then 0).
    pub(super) room: Option<Arc<CodePointRoom>>,
    pub(super) counter: CodePointCounter,
    pub(super) range: LengthRange,
    pub(super) alt: Option<(Arc<ByteDfa>, StateId)>,
}

/// A string read by a syntax (`format: "regex"`, `"hostname"`, `"idn-hostname"`): its decoded
/// text runs through the syntax's reader; the node's other strings, if any, run alongside on
/// their automaton.
#[derive(Debug, Clone)]
pub(crate) struct SyntaxString {
    /// `None` once the text can no longer be one of the syntax's strings.
    pub(super) reading: Option<SyntaxReading>,
    pub(super) alt: Option<(Arc<ByteDfa>, StateId)>,
}

#[derive(Debug, Clone)]
pub(super) struct SyntaxReading {
    pub(super) decoder: StringDecoder,
    pub(super) reader: SyntaxReader,
    /// `minLength`, in code points: a pattern can always grow to it (by `a`s).
    pub(super) min_length: u64,
    /// Code points read.
    pub(super) length: u64,
    /// The closing quote was read (after a valid text).
    pub(super) closed: bool,
}

/// The reader of one syntax, fed decoded code points.
#[derive(Debug, Clone)]
pub(super) enum SyntaxReader {
    Pattern(PatternSyntax),
    Hostname(HostnameReader),
}

impl SyntaxReader {
    pub(super) fn new(syntax: StringSyntax) -> SyntaxReader {
        match syntax {
            StringSyntax::Pattern => SyntaxReader::Pattern(PatternSyntax::default()),
            StringSyntax::Hostname => SyntaxReader::Hostname(HostnameReader::new(false)),
            StringSyntax::IdnHostname => SyntaxReader::Hostname(HostnameReader::new(true)),
        }
    }

    pub(super) fn feed(&mut self, c: char) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.feed(c),
            SyntaxReader::Hostname(h) => h.feed(c),
        }
    }

    pub(super) fn admits_pending(&self, decoder: &StringDecoder) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.admits_pending(decoder),
            SyntaxReader::Hostname(h) => h.admits_pending(decoder),
        }
    }

    pub(super) fn is_accepting(&self) -> bool {
        match self {
            SyntaxReader::Pattern(p) => p.is_accepting(),
            SyntaxReader::Hostname(h) => h.is_accepting(),
        }
    }
}

impl SyntaxReading {
    /// The reading after `b`, if the text may still be (or now is) one of the syntax's strings.
    pub(super) fn fed(&self, b: u8) -> Option<SyntaxReading> {
        if self.closed {
            return None;
        }
        let mut next = self.clone();
        match next.decoder.feed(b) {
            DecodeStep::Invalid => None,
            DecodeStep::Closed => {
                next.closed = true;
                (next.length >= next.min_length && next.reader.is_accepting()).then_some(next)
            }
            DecodeStep::Continue => {
                let SyntaxReading { decoder, reader, length, .. } = &mut next;
                // The reader keeps what it needs of the text: the decoder holds only what is new.
                let fed = decoder.value().chars().all(|c| {
                    *length += 1;
                    reader.feed(c)
                });
                decoder.clear_value();
                (fed && reader.admits_pending(decoder)).then_some(next)
            }
        }
    }
}

impl CountedString {
    /// Whether `other` is this reading: the same strings, counted to the same point.
    pub(super) fn reads_alike(&self, other: &CountedString) -> bool {
        let same_room = match (&self.room, &other.room) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        let same_alt = match (&self.alt, &other.alt) {
            (Some((a, s)), Some((b, t))) => Arc::ptr_eq(a, b) && s == t,
            (a, b) => a.is_none() && b.is_none(),
        };
        self.text == other.text
            && Arc::ptr_eq(&self.texts, &other.texts)
            && same_room
            && self.counter == other.counter
            && self.range == other.range
            && same_alt
    }

    /// Whether the length reading can still end in range: while open, every string may grow to
    /// the minimum and the automaton's fewest code points to a close fit under the maximum;
    /// once closed, the count is in range.
    pub(super) fn counted_alive(&self) -> bool {
        self.alive_at(self.text, self.counter.count)
    }

    fn alive_at(&self, text: StateId, count: u64) -> bool {
        text != DEAD
            && match &self.room {
                Some(room) => room.fits(text, count, self.range.max),
                None => {
                    self.range.max.is_none_or(|max| count <= max)
                        && (!self.texts.is_accepting(text) || count >= self.range.min)
                }
            }
    }

    /// The automaton and state a mask reads this string's tokens from when the length must be
    /// checked token by token (near the bound): the counted reading is open and alive, and no
    /// other strings run beside a narrower automaton (those beside every string are inside
    /// it).
    pub(crate) fn open_text(&self) -> Option<(&Arc<ByteDfa>, StateId)> {
        let alone = self.room.is_none() || self.alt.is_none();
        (alone && self.counted_alive() && !self.texts.is_accepting(self.text)).then_some((&self.texts, self.text))
    }

    /// Whether `token`, whose bytes stay inside the open string on the counted strings'
    /// automaton (no closing quote), keeps this string alive: the count after it still leaves
    /// room to close, or the other strings beside go on with it. Alive at the end means alive
    /// throughout, since the way on from any earlier byte passes through the end.
    pub(crate) fn stays_inside(&self, token: &[u8]) -> bool {
        let (mut text, mut counter) = (self.text, self.counter);
        let mut alt = self.alt.as_ref().map(|(dfa, state)| (dfa, *state));
        for &b in token {
            if text != DEAD {
                text = self.texts.next(text, b);
                counter.feed(b);
            }
            alt = alt.map(|(dfa, state)| (dfa, dfa.next(state, b))).filter(|(_, state)| *state != DEAD);
        }
        self.alive_at(text, counter.count) || alt.is_some()
    }

    /// The code points a token may add and keep the counted reading alive, when a token's
    /// code points from a fresh counter are those it adds here (no escape in progress) and no
    /// other strings run beside: a token adding more is refused. `None` otherwise.
    pub(crate) fn code_points_left(&self) -> Option<u64> {
        let max = self.range.max?;
        (self.alt.is_none() && self.between_escapes()).then(|| max.saturating_sub(self.counter.count))
    }

    /// Whether no escape is in progress: a token then adds the code points it counts from a
    /// fresh counter (inside an escape it may add more: `\u0041` after a backslash is five).
    pub(crate) fn between_escapes(&self) -> bool {
        self.counter.between_escapes()
    }

    /// The bytes a token may have and still be decided by the automaton alone: each adds at
    /// most one code point, beyond those the automaton needs to close from wherever the token
    /// leaves it. `None` without a maximum.
    pub(crate) fn spare(&self) -> Option<u64> {
        let most = self.room.as_ref().map_or(0, |room| u64::from(room.most));
        self.range.max.map(|max| max.saturating_sub(self.counter.count.saturating_add(most)))
    }

    pub(crate) fn is_complete(&self) -> bool {
        (self.counted_alive() && self.texts.is_accepting(self.text))
            || self.alt.as_ref().is_some_and(|(dfa, state)| dfa.is_accepting(*state))
    }

    pub(crate) fn feed(&mut self, b: u8) -> Step {
        let text = if self.counted_alive() { self.texts.next(self.text, b) } else { DEAD };
        let alt = self.alt.as_ref().map(|(dfa, state)| (dfa, dfa.next(*state, b))).filter(|(_, s)| *s != DEAD);
        if text == DEAD && alt.is_none() {
            return if self.is_complete() { Step::NotMine } else { Step::Rejected };
        }
        self.alt = alt.map(|(dfa, state)| (Arc::clone(dfa), state));
        self.text = text;
        if text != DEAD {
            self.counter.feed(b);
        }
        if self.counted_alive() || self.alt.is_some() {
            Step::Consumed
        } else {
            Step::Rejected
        }
    }

    /// Whether the length reading is open with room for 4 more code points: more than 2^64
    /// completions. Counted strings among a narrower automaton's are not claimed to be.
    pub(super) fn open_ended(&self) -> bool {
        self.room.is_none()
            && self.counted_alive()
            && !self.texts.is_accepting(self.text)
            && self.range.max.is_none_or(|max| max.saturating_sub(self.counter.count) >= 4)
    }

    /// The automata and states a mask answers the tokens that stay inside this string from:
    /// the counted strings' automaton while no token of `slack` bytes (each adds at most one
    /// code point) can run out of room, and the other strings' beside it when they are not
    /// inside it. `None` when the length must be checked token by token.
    pub(super) fn string_contexts<'a>(
        &'a self,
        slack: u64,
        visit: &mut dyn FnMut((&'a Arc<ByteDfa>, StateId)) -> bool,
    ) -> bool {
        let open_alt = self.alt.as_ref().filter(|(dfa, state)| !dfa.is_accepting(*state));
        if !self.counted_alive() {
            return open_alt.is_some_and(|(dfa, state)| visit((dfa, *state)));
        }
        let roomy = self.spare().is_none_or(|spare| slack <= spare);
        if !roomy || self.texts.is_accepting(self.text) {
            return false;
        }
        if !visit((&self.texts, self.text)) {
            return false;
        }
        // Every string holds the other strings; a pattern's or format's need not.
        match open_alt {
            Some((dfa, state)) if self.room.is_some() => visit((dfa, *state)),
            _ => true,
        }
    }
}

impl SyntaxString {
    /// Where a pattern's reading takes runs of plain code points alike (see
    /// [`PatternSyntax::plain_context`]), with nothing pending in the JSON text and no other
    /// string automaton alongside; `None` elsewhere.
    pub(crate) fn plain_context(&self) -> Option<PlainContext> {
        let reading = self.reading.as_ref().filter(|r| self.alt.is_none() && !r.closed && !r.decoder.has_pending())?;
        match &reading.reader {
            SyntaxReader::Pattern(p) => p.plain_context(),
            SyntaxReader::Hostname(_) => None,
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.reading.as_ref().is_some_and(|r| r.closed)
            || self.alt.as_ref().is_some_and(|(dfa, s)| dfa.is_accepting(*s))
    }

    pub(crate) fn feed(&mut self, b: u8) -> Step {
        let reading = self.reading.as_ref().and_then(|r| r.fed(b));
        let alt = self.alt.as_ref().map(|(dfa, state)| (dfa, dfa.next(*state, b))).filter(|(_, s)| *s != DEAD);
        if reading.is_none() && alt.is_none() {
            return if self.is_complete() { Step::NotMine } else { Step::Rejected };
        }
        self.alt = alt.map(|(dfa, state)| (Arc::clone(dfa), state));
        self.reading = reading;
        Step::Consumed
    }
}
