//! The streaming number matcher: where in the JSON number grammar the text ends, and the
//! prefix's significand and exponent as the liveness decisions read them.

use std::sync::Arc;

use super::decimal::EXPONENT_SATURATION;
use super::liveness::{Derived, Exponents, Magnitudes, Significand};
use super::NumberConstraints;

/// [`NumberConstraints`] with their derived data, shared by every matcher over them.
#[derive(Debug)]
pub struct PreparedConstraints {
    pub(super) constraints: Arc<NumberConstraints>,
    pub(super) derived: Derived,
}

impl PreparedConstraints {
    /// Derives the data the matcher needs (the combined step, per-sign ranges, admissible values).
    pub fn new(constraints: Arc<NumberConstraints>) -> PreparedConstraints {
        let derived = Derived::new(&constraints);
        PreparedConstraints { constraints, derived }
    }

    /// The constraints.
    pub fn constraints(&self) -> &Arc<NumberConstraints> {
        &self.constraints
    }

    /// Whether some JSON number satisfies the constraints.
    #[cfg(test)]
    pub fn is_satisfiable(&self) -> bool {
        self.derived.start_live
    }
}

/// Where in `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` the text so far ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Start,
    Minus,
    /// Integer part `0`.
    Zero,
    /// Integer part `[1-9][0-9]*`.
    Int,
    Dot,
    Frac,
    /// `e` or `E` read.
    ExpMark,
    /// Exponent sign read.
    ExpSign,
    ExpDigits,
}

#[derive(Clone, Debug)]
pub(super) struct State {
    pub(super) phase: Phase,
    pub(super) negative: bool,
    pub(super) exp_negative: bool,
    pub(super) significand: Significand,
    /// Digits read after the point.
    pub(super) fraction_digits: u64,
    /// Exponent digits read, saturating at [`EXPONENT_SATURATION`].
    pub(super) exponent: u64,
}

impl State {
    pub(super) fn start() -> State {
        State {
            phase: Phase::Start,
            negative: false,
            exp_negative: false,
            significand: Significand::Small(0),
            fraction_digits: 0,
            exponent: 0,
        }
    }

    /// The grammatical successor after `byte`, if any.
    pub(super) fn step(&self, byte: u8) -> Option<State> {
        use Phase::*;
        let digit = byte.is_ascii_digit();
        let mut next = self.clone();
        next.phase = match (self.phase, byte) {
            (Start, b'-') => {
                next.negative = true;
                Minus
            }
            (Start | Minus, b'0') => Zero,
            (Start | Minus, b'1'..=b'9') => {
                next.significand = self.significand.push(byte);
                Int
            }
            (Int, _) if digit => {
                next.significand = self.significand.push(byte);
                Int
            }
            (Zero | Int, b'.') => Dot,
            (Dot | Frac, _) if digit => {
                next.significand = self.significand.push(byte);
                next.fraction_digits += 1;
                Frac
            }
            (Zero | Int | Frac, b'e' | b'E') => ExpMark,
            (ExpMark, b'+' | b'-') => {
                next.exp_negative = byte == b'-';
                ExpSign
            }
            (ExpMark | ExpSign | ExpDigits, _) if digit => {
                next.exponent = (self.exponent * 10 + u64::from(byte - b'0')).min(EXPONENT_SATURATION);
                ExpDigits
            }
            _ => return None,
        };
        Some(next)
    }

    /// Whether some completion of this prefix satisfies the constraints.
    pub(super) fn is_live(&self, d: &Derived) -> bool {
        use Phase::*;
        if d.unconstrained {
            // Every grammatical prefix completes to a number, and every number is accepted.
            return true;
        }
        if d.syntax_integer && !matches!(self.phase, Start | Minus | Zero | Int) {
            return false;
        }
        if !d.start_live {
            return false;
        }
        match self.phase {
            Start => d.start_live,
            Minus => d.zero_ok || d.any_negative,
            // "0" ends the integer digits: draft 4 integers stop here, others may add a fraction.
            Zero if d.syntax_integer => d.zero_ok,
            Zero | Int | Dot | Frac => {
                if self.significand.is_zero() {
                    // "0", "-0.00": zero, or any value of this sign ("0.0012e7").
                    d.zero_ok || if self.negative { d.any_negative } else { d.any_positive }
                } else {
                    d.prefix_family_live(self.negative, &self.significand, d.syntax_integer)
                }
            }
            ExpMark | ExpSign | ExpDigits => {
                if self.significand.is_zero() {
                    return d.zero_ok;
                }
                let exponents = match self.phase {
                    ExpMark => Exponents::Any,
                    ExpSign => Exponents::Signed { negative: self.exp_negative, magnitudes: Magnitudes::Extending(0) },
                    _ => Exponents::Signed {
                        negative: self.exp_negative,
                        magnitudes: Magnitudes::Extending(self.exponent),
                    },
                };
                d.exponent_family_live(self.negative, &self.significand, self.fraction_digits, exponents)
            }
        }
    }

    /// Whether the text is a complete number satisfying the constraints.
    pub(super) fn is_accepting(&self, d: &Derived) -> bool {
        use Phase::*;
        if !matches!(self.phase, Zero | Int | Frac | ExpDigits) {
            return false;
        }
        if d.unconstrained {
            return true;
        }
        if d.syntax_integer && !matches!(self.phase, Zero | Int) {
            return false;
        }
        if d.syntax_fraction && matches!(self.phase, Zero | Int) {
            return false;
        }
        if self.significand.is_zero() {
            return d.zero_ok;
        }
        let exponent = if self.phase == ExpDigits { self.exponent } else { 0 };
        let exponents = Exponents::Signed { negative: self.exp_negative, magnitudes: Magnitudes::Exactly(exponent) };
        d.exponent_family_live(self.negative, &self.significand, self.fraction_digits, exponents)
    }
}

/// Byte-at-a-time recogniser of one JSON number text (no surrounding whitespace) whose value
/// satisfies [`NumberConstraints`], with liveness: every admitted prefix has a completion.
///
/// Cloning is cheap (the constraints are shared; significands up to 38 digits are inline).
#[derive(Clone, Debug)]
pub struct NumberMatcher {
    pub(super) prepared: Arc<PreparedConstraints>,
    pub(super) state: State,
}

impl NumberMatcher {
    /// A matcher at the start of a number.
    pub fn new(constraints: Arc<NumberConstraints>) -> Self {
        Self::with_prepared(Arc::new(PreparedConstraints::new(constraints)))
    }

    /// A matcher over constraints prepared once (share one [`PreparedConstraints`] per schema
    /// position instead of deriving it per number).
    pub fn with_prepared(prepared: Arc<PreparedConstraints>) -> Self {
        NumberMatcher { prepared, state: State::start() }
    }

    /// Feeds one byte; returns false (and leaves `self` unchanged) if the byte cannot continue a
    /// number text that has some completion satisfying the constraints.
    pub fn feed(&mut self, byte: u8) -> bool {
        match self.state.step(byte) {
            Some(next) if next.is_live(&self.prepared.derived) => {
                self.state = next;
                true
            }
            _ => false,
        }
    }

    /// Whether the text so far is a complete JSON number satisfying the constraints.
    pub fn is_accepting(&self) -> bool {
        self.state.is_accepting(&self.prepared.derived)
    }

    /// Whether the byte could continue the number under the JSON grammar alone (constraints
    /// ignored): when false, the byte ends the number.
    pub fn can_continue_with(&self, byte: u8) -> bool {
        self.state.step(byte).is_some()
    }

    /// Whether infinitely many values complete the text so far, by a sound test (false may
    /// still have infinitely many): with no bound in the direction of the sign, no `enum` and no
    /// excluded multiples, a nonzero completion's value times any power of ten (its exponent
    /// raised, or zeros appended) completes the text too. Once a negative exponent or a zero
    /// significand is followed by an exponent, that no longer holds.
    pub fn has_unbounded_completions(&self) -> bool {
        let c = self.prepared.constraints();
        let state = &self.state;
        let unbounded = if state.negative { c.minimum.is_none() } else { c.maximum.is_none() };
        let exponent = matches!(state.phase, Phase::ExpMark | Phase::ExpSign | Phase::ExpDigits);
        unbounded
            && c.values.is_none()
            && c.not_multiple_of.is_empty()
            && (!exponent || (!state.exp_negative && !state.significand.is_zero()))
            // A draft-4 integer `0` has no other spelling.
            && !(c.integer_syntax_only && state.phase == Phase::Zero)
    }

    /// Whether every run of digits read from here keeps the text live, by a sound test (false
    /// may still keep it): digits continue the grammar everywhere past the first significant
    /// digit, the point or the exponent mark; under constraints, only a nonzero significand of
    /// a sign whose magnitudes have no upper bound and no value set qualifies, where every
    /// extension of the digits stays in reach.
    pub fn takes_any_digits(&self) -> bool {
        use Phase::*;
        let (d, state) = (&self.prepared.derived, &self.state);
        if d.unconstrained {
            return matches!(state.phase, Int | Dot | Frac | ExpMark | ExpSign | ExpDigits);
        }
        let side = d.side(state.negative);
        matches!(state.phase, Int | Dot | Frac)
            && !(d.syntax_integer && state.phase != Int)
            && d.start_live
            && d.candidates.is_none()
            && !state.significand.is_zero()
            && !side.empty
            && side.hi.is_none()
    }

    /// Whether any byte has been read.
    #[cfg(test)]
    pub fn is_started(&self) -> bool {
        self.state.phase != Phase::Start
    }

    /// Whether the constraints admit some number at all (the empty prefix is live).
    #[cfg(test)]
    pub fn is_satisfiable(&self) -> bool {
        self.prepared.is_satisfiable()
    }
}
