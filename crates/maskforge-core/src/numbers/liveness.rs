//! The liveness decisions of the number matcher (see the `numbers` module documentation): the
//! combined step, the bounds per sign, and whether a family of completions holds an admissible
//! value.

use std::cmp::Ordering;
use std::sync::Arc;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::Zero;

use super::decimal::{
    add_magnitudes, decimal_digits, rem_magnitude, split_prime, strip_small_trailing_zeros, strip_trailing_zeros,
    sub_magnitudes, Decimal, Magnitude, EXPONENT_SATURATION,
};
use super::NumberConstraints;

/// The combined `multipleOf` (and integrality) requirement: the value must be a multiple of
/// `value = rest * 2^twos * 5^fives` where `rest` is coprime to ten and `twos`, `fives` are the
/// multiplicities of 2 and 5 in the rational `value`, negative for fractions (`0.25 = 2^-2`).
#[derive(Clone, Debug)]
pub(super) struct ValueStep {
    pub(super) value: Decimal,
    pub(super) rest: BigUint,
    pub(super) twos: i128,
    pub(super) fives: i128,
}

impl ValueStep {
    /// The least common multiple of positive decimals: per prime, the largest multiplicity.
    pub(super) fn lcm(divisors: &[Decimal]) -> Option<ValueStep> {
        let mut step: Option<(BigUint, i128, i128)> = None;
        for d in divisors {
            let (twos, without_twos) = split_prime(&d.coefficient, 2);
            let (fives, rest) = split_prime(&without_twos, 5);
            let twos = twos as i128 + i128::from(d.exponent);
            let fives = fives as i128 + i128::from(d.exponent);
            step = Some(match step {
                None => (rest, twos, fives),
                Some((r, t, f)) => (r.lcm(&rest), t.max(twos), f.max(fives)),
            });
        }
        let (rest, twos, fives) = step?;
        // Write rest * 2^twos * 5^fives as a decimal: pull out the common power of ten.
        let ten_power = twos.min(fives);
        let coefficient = &rest
            * BigUint::from(2u32).pow((twos - ten_power) as u32)
            * BigUint::from(5u32).pow((fives - ten_power) as u32);
        let value = Decimal::from_parts(false, coefficient, ten_power as i64);
        Some(ValueStep { value, rest, twos, fives })
    }

    /// The least `t` for which the step divides `c * 10^t` (`c > 0`), or `None` if it never does.
    /// Divisibility of `c * 10^t` by `rest * 2^twos * 5^fives` means: `rest` divides `c` (ten's
    /// powers never supply its primes) and `t` covers the missing twos and fives.
    pub(super) fn least_exponent_for(&self, c: &BigUint) -> Option<i128> {
        if !(c % &self.rest).is_zero() {
            return None;
        }
        let (c_twos, without_twos) = split_prime(c, 2);
        let (c_fives, _) = split_prime(&without_twos, 5);
        Some((self.twos - c_twos as i128).max(self.fives - c_fives as i128))
    }

    pub(super) fn divides(&self, value: &Decimal) -> bool {
        value.is_zero() || self.least_exponent_for(&value.coefficient).is_some_and(|t| t <= i128::from(value.exponent))
    }
}

/// The admissible magnitudes `x > 0` of one sign: `lo < x` or `lo <= x`, and below `hi` if any.
#[derive(Clone, Debug)]
pub(super) struct Side {
    pub(super) empty: bool,
    pub(super) lo: Decimal,
    pub(super) lo_exclusive: bool,
    pub(super) hi: Option<(Decimal, bool)>,
}

impl Side {
    /// Positive values `x` with `minimum <= x <= maximum`.
    pub(super) fn positive(minimum: &Option<(Decimal, bool)>, maximum: &Option<(Decimal, bool)>) -> Side {
        let (lo, lo_exclusive) = match minimum {
            Some((m, exclusive)) if *m > Decimal::zero() => (m.clone(), *exclusive),
            _ => (Decimal::zero(), true),
        };
        let hi = maximum.clone();
        Side::new(lo, lo_exclusive, hi)
    }

    /// Magnitudes `x > 0` with `minimum <= -x <= maximum`, i.e. `-maximum <= x <= -minimum`.
    pub(super) fn negative(minimum: &Option<(Decimal, bool)>, maximum: &Option<(Decimal, bool)>) -> Side {
        let (lo, lo_exclusive) = match maximum {
            Some((m, exclusive)) if *m < Decimal::zero() => (m.negated(), *exclusive),
            _ => (Decimal::zero(), true),
        };
        let hi = minimum.as_ref().map(|(m, exclusive)| (m.negated(), *exclusive));
        Side::new(lo, lo_exclusive, hi)
    }

    pub(super) fn new(lo: Decimal, lo_exclusive: bool, hi: Option<(Decimal, bool)>) -> Side {
        let empty = match &hi {
            Some((h, hi_exclusive)) => match h.cmp(&lo) {
                Ordering::Less => true,
                Ordering::Equal => lo_exclusive || *hi_exclusive,
                Ordering::Greater => false,
            },
            None => false,
        };
        Side { empty, lo, lo_exclusive, hi }
    }
}

/// Whether the interval from `lo` (`>= 0`) to `hi` holds a positive decimal that is a multiple
/// of `step` (any positive decimal when there is no step).
pub(super) fn interval_has_member(
    lo: &Decimal,
    lo_exclusive: bool,
    hi: Option<(&Decimal, bool)>,
    step: Option<&ValueStep>,
) -> bool {
    if let Some((b, b_exclusive)) = hi {
        match b.cmp(lo) {
            Ordering::Less => return false,
            Ordering::Equal if lo_exclusive || b_exclusive => return false,
            _ => {}
        }
    }
    // A non-empty interval of positive reals holds decimals; one unbounded above holds multiples.
    let (Some(step), Some((b, b_exclusive))) = (step, hi) else {
        return true;
    };
    let m = &step.value;
    match lo.cmp(m) {
        // The first positive multiple above `lo` is the step itself.
        Ordering::Less => {
            return match m.cmp(b) {
                Ordering::Less => true,
                Ordering::Equal => !b_exclusive,
                Ordering::Greater => false,
            }
        }
        Ordering::Equal if !lo_exclusive => return true,
        _ => {}
    }
    // Here lo >= m > 0. If b's leading digit is two places above lo's, b - lo > 9 * lo >= m.
    if b.lead() > lo.lead() + 1 {
        return true;
    }
    let length = sub_magnitudes(b, lo);
    let lo_rem = rem_magnitude(lo, m);
    match length.cmp(m) {
        Ordering::Greater => true,
        // Exactly one step long: both ends are multiples (admitted unless both are open), or
        // one multiple lies strictly inside.
        Ordering::Equal => !(lo_exclusive && b_exclusive && lo_rem.is_zero()),
        // Shorter than a step: at most one multiple in (lo, b], and there is one iff the
        // remainder wraps around between the ends.
        Ordering::Less => {
            if lo_rem.is_zero() && !lo_exclusive {
                return true;
            }
            let b_rem = rem_magnitude(b, m);
            b_rem < lo_rem && !(b_exclusive && b_rem.is_zero())
        }
    }
}

/// An admissible value of a finite value set, with its digits for prefix tests.
#[derive(Clone, Debug)]
pub(super) struct Candidate {
    pub(super) value: Decimal,
    pub(super) digits: Vec<u8>,
}

/// Everything derived from [`NumberConstraints`] that the matcher needs, computed once.
#[derive(Clone, Debug)]
pub(super) struct Derived {
    /// No constraint at all: every number text is accepted.
    pub(super) unconstrained: bool,
    pub(super) syntax_integer: bool,
    /// The text must have a fraction or an exponent (any value can be spelled so).
    pub(super) syntax_fraction: bool,
    pub(super) step: Option<ValueStep>,
    /// The value must not be a multiple of any of these.
    pub(super) forbidden: Vec<ValueStep>,
    /// A `multipleOf` of zero: nothing is a multiple.
    pub(super) impossible: bool,
    pub(super) minimum: Option<(Decimal, bool)>,
    pub(super) maximum: Option<(Decimal, bool)>,
    pub(super) positive: Side,
    pub(super) negative: Side,
    /// The admissible members of `values`, if a value set is given.
    pub(super) candidates: Option<Vec<Candidate>>,
    /// Zero is admissible.
    pub(super) zero_ok: bool,
    /// Some positive (negative) value is admissible: what a prefix of that sign whose digits
    /// are all zero can still reach.
    pub(super) any_positive: bool,
    pub(super) any_negative: bool,
    /// Some value is admissible at all.
    pub(super) start_live: bool,
}

impl Derived {
    pub(super) fn new(c: &NumberConstraints) -> Derived {
        let syntax_integer = c.integer_syntax_only;
        let mut divisors: Vec<Decimal> = c.multiple_of.iter().map(Decimal::abs).collect();
        let impossible = divisors.iter().any(Decimal::is_zero);
        if c.integer || syntax_integer {
            divisors.push(Decimal::from_i64(1));
        }
        let step = if impossible { None } else { ValueStep::lcm(&divisors) };
        let forbidden: Vec<ValueStep> =
            c.not_multiple_of.iter().filter_map(|m| ValueStep::lcm(std::slice::from_ref(&m.abs()))).collect();
        let positive = Side::positive(&c.minimum, &c.maximum);
        let negative = Side::negative(&c.minimum, &c.maximum);
        let mut derived = Derived {
            unconstrained: c.minimum.is_none()
                && c.maximum.is_none()
                && step.is_none()
                && !impossible
                && c.values.is_none()
                && forbidden.is_empty()
                && !c.fraction_or_exponent,
            syntax_integer,
            syntax_fraction: c.fraction_or_exponent,
            step,
            forbidden,
            impossible,
            minimum: c.minimum.clone(),
            maximum: c.maximum.clone(),
            positive,
            negative,
            candidates: None,
            zero_ok: false,
            any_positive: false,
            any_negative: false,
            start_live: false,
        };
        let zero_in_range = derived.in_range(&Decimal::zero());
        if let Some(values) = &c.values {
            let mut kept: Vec<Decimal> = values.iter().filter(|v| derived.admits_by_arithmetic(v)).cloned().collect();
            kept.sort();
            kept.dedup();
            derived.zero_ok = kept.iter().any(Decimal::is_zero);
            derived.any_positive = kept.iter().any(|v| !v.is_zero() && !v.negative);
            derived.any_negative = kept.iter().any(|v| v.negative);
            derived.candidates = Some(
                kept.into_iter()
                    .map(|value| Candidate { digits: value.coefficient.to_str_radix(10).into_bytes(), value })
                    .collect(),
            );
        } else if !impossible {
            derived.zero_ok = zero_in_range && derived.forbidden.is_empty();
            derived.any_positive = derived.side_has_member(&derived.positive);
            derived.any_negative = derived.side_has_member(&derived.negative);
        }
        derived.start_live = (derived.zero_ok || derived.any_positive || derived.any_negative)
            && !(derived.syntax_integer && derived.syntax_fraction);
        derived
    }

    pub(super) fn in_range(&self, v: &Decimal) -> bool {
        let above = match &self.minimum {
            Some((m, exclusive)) => {
                if *exclusive {
                    v > m
                } else {
                    v >= m
                }
            }
            None => true,
        };
        let below = match &self.maximum {
            Some((m, exclusive)) => {
                if *exclusive {
                    v < m
                } else {
                    v <= m
                }
            }
            None => true,
        };
        above && below
    }

    /// Range and divisibility (everything but the value set).
    pub(super) fn admits_by_arithmetic(&self, v: &Decimal) -> bool {
        !self.impossible
            && self.in_range(v)
            && self.step.as_ref().is_none_or(|s| s.divides(v))
            && !self.forbidden.iter().any(|f| f.divides(v))
    }

    /// Whether the interval of positive reals from `lo` to `hi` holds an admissible magnitude:
    /// a multiple of the step, if any, and of no forbidden divisor.
    pub(super) fn interval_has_admissible(
        &self,
        lo: &Decimal,
        lo_exclusive: bool,
        hi: Option<(&Decimal, bool)>,
    ) -> bool {
        if !interval_has_member(lo, lo_exclusive, hi, self.step.as_ref()) {
            return false;
        }
        if self.forbidden.is_empty() {
            return true;
        }
        let forbidden = |v: &Decimal| self.forbidden.iter().any(|f| f.divides(v));
        let Some(step) = &self.step else {
            // Forbidden multiples are discrete: only a single-point interval can be all forbidden.
            return match hi {
                Some((b, _)) if b == lo => !forbidden(lo),
                _ => true,
            };
        };
        // Walk the step's multiples from the first one in the interval. Each forbidden divisor
        // not dividing the step rules out the multiples k * step with k divisible by some d >= 2,
        // so a run of ruled-out k is bounded by the Jacobsthal function
        // of the divisors' primes: far below this budget for any schema's handful of divisors.
        const BUDGET: usize = 4096;
        let m = &step.value;
        if forbidden(m) {
            // A forbidden divisor of the step divides every multiple.
            return false;
        }
        let rem = rem_magnitude(lo, m);
        let mut x = if rem.is_zero() {
            if lo_exclusive {
                add_magnitudes(lo, m)
            } else {
                lo.abs()
            }
        } else {
            add_magnitudes(&sub_magnitudes(lo, &rem), m)
        };
        if x.is_zero() {
            x = m.clone();
        }
        for _ in 0..BUDGET {
            let inside = match hi {
                None => true,
                Some((b, exclusive)) => x < *b || (!exclusive && x == *b),
            };
            if !inside {
                return false;
            }
            if !forbidden(&x) {
                return true;
            }
            x = add_magnitudes(&x, m);
        }
        true
    }

    pub(super) fn side(&self, negative: bool) -> &Side {
        if negative {
            &self.negative
        } else {
            &self.positive
        }
    }

    pub(super) fn side_has_member(&self, side: &Side) -> bool {
        !side.empty && self.interval_has_admissible(&side.lo, side.lo_exclusive, side.hi.as_ref().map(|(h, e)| (h, *e)))
    }

    /// Open significand with digits `prefix` (as an integer, non-zero): does some `m * 10^k`
    /// with `m`'s digits starting with `prefix`'s (and `k >= 0` when `integer_digits_only`)
    /// satisfy the constraints? See the module documentation for why two intervals suffice.
    pub(super) fn prefix_family_live(&self, negative: bool, prefix: &Significand, integer_digits_only: bool) -> bool {
        if let Some(candidates) = &self.candidates {
            let prefix_digits = prefix.to_biguint().to_str_radix(10).into_bytes();
            let p = prefix_digits.len() as i128;
            return candidates.iter().any(|c| {
                c.value.negative == negative
                    && !c.value.is_zero()
                    && digits_extend(&c.digits, &prefix_digits)
                    && (!integer_digits_only || c.value.lead() >= p - 1)
            });
        }
        let side = self.side(negative);
        if side.empty {
            return false;
        }
        let Some((hi, hi_exclusive)) = &side.hi else {
            return true;
        };
        let (prefix_core, prefix_zeros) = prefix.stripped(0);
        let (next_core, next_zeros) = prefix.stripped(1);
        let p = (decimal_digits(&prefix_core) + prefix_zeros) as i128;
        let interval_start = |k: i128| Magnitude { coefficient: &prefix_core, exponent: k + prefix_zeros as i128 };
        // k_hi: the last k with prefix * 10^k <= hi (< hi when exclusive).
        let k0 = hi.lead() - (p - 1);
        let fits = match interval_start(k0).cmp(&hi.magnitude()) {
            Ordering::Less => true,
            Ordering::Equal => !hi_exclusive,
            Ordering::Greater => false,
        };
        let k_hi = if fits { k0 } else { k0 - 1 };
        for k in [k_hi, k_hi - 1] {
            if integer_digits_only && k < 0 {
                break;
            }
            // J_k intersected with the side: [max(lo, P 10^k), min(hi, (P+1) 10^k)).
            let start = Decimal {
                negative: false,
                coefficient: prefix_core.clone(),
                exponent: (k + prefix_zeros as i128) as i64,
            };
            let end =
                Decimal { negative: false, coefficient: next_core.clone(), exponent: (k + next_zeros as i128) as i64 };
            let (lo, lo_exclusive) = match side.lo.cmp(&start) {
                Ordering::Less => (&start, false),
                Ordering::Equal => (&start, side.lo_exclusive),
                Ordering::Greater => (&side.lo, side.lo_exclusive),
            };
            let (top, top_exclusive) = if *hi < end { (hi, *hi_exclusive) } else { (&end, true) };
            if self.interval_has_admissible(lo, lo_exclusive, Some((top, top_exclusive))) {
                return true;
            }
        }
        false
    }

    /// Fixed non-zero significand `significand * 10^-fraction_digits` with the exponent in
    /// `exponents`: does some reachable exponent give an admissible value?
    pub(super) fn exponent_family_live(
        &self,
        negative: bool,
        significand: &Significand,
        fraction_digits: u64,
        exponents: Exponents,
    ) -> bool {
        let side = self.side(negative);
        if side.empty && self.candidates.is_none() {
            return false;
        }
        // value = c * 10^(beta + e) with c free of trailing zeros.
        let (c, zeros) = significand.stripped(0);
        let beta = zeros as i128 - fraction_digits as i128;
        if let Some(candidates) = &self.candidates {
            return candidates.iter().any(|cand| {
                cand.value.negative == negative
                    && cand.value.coefficient == c
                    && exponents.meets(
                        Some(i128::from(cand.value.exponent) - beta),
                        Some(i128::from(cand.value.exponent) - beta),
                    )
            });
        }
        let digits = decimal_digits(&c) as i128;
        let at = |t: i128| Magnitude { coefficient: &c, exponent: t };
        // Smallest t with c * 10^t above the lower bound (none needed for the bare "> 0").
        let mut t_lo = if side.lo.is_zero() {
            None
        } else {
            let t0 = side.lo.lead() - (digits - 1);
            let ok = match at(t0).cmp(&side.lo.magnitude()) {
                Ordering::Greater => true,
                Ordering::Equal => !side.lo_exclusive,
                Ordering::Less => false,
            };
            Some(if ok { t0 } else { t0 + 1 })
        };
        // Largest t with c * 10^t below the upper bound.
        let t_hi = side.hi.as_ref().map(|(hi, exclusive)| {
            let t0 = hi.lead() - (digits - 1);
            let ok = match at(t0).cmp(&hi.magnitude()) {
                Ordering::Less => true,
                Ordering::Equal => !exclusive,
                Ordering::Greater => false,
            };
            if ok {
                t0
            } else {
                t0 - 1
            }
        });
        if let Some(step) = &self.step {
            let Some(t_step) = step.least_exponent_for(&c) else {
                return false;
            };
            t_lo = Some(t_lo.map_or(t_step, |t| t.max(t_step)));
        }
        // A forbidden divisor divides every c * 10^t from its least exponent on.
        let mut t_hi = t_hi;
        for f in &self.forbidden {
            if let Some(t_f) = f.least_exponent_for(&c) {
                t_hi = Some(t_hi.map_or(t_f - 1, |t| t.min(t_f - 1)));
            }
        }
        if let (Some(lo), Some(hi)) = (t_lo, t_hi) {
            if lo > hi {
                return false;
            }
        }
        exponents.meets(t_lo.map(|t| t - beta), t_hi.map(|t| t - beta))
    }
}

/// Whether `value_digits` followed by zeros starts with `prefix` (both without leading zeros).
pub(super) fn digits_extend(value_digits: &[u8], prefix: &[u8]) -> bool {
    prefix.iter().enumerate().all(|(i, &d)| value_digits.get(i).copied().unwrap_or(b'0') == d)
}

/// The exponents that a number text can still end up with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Exponents {
    /// Any integer (after `e`).
    Any,
    /// `e = +-u` (per `negative`) with `u` in the magnitudes.
    Signed { negative: bool, magnitudes: Magnitudes },
}

/// Exponent magnitudes, from the digits `r` read so far (saturating at [`EXPONENT_SATURATION`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Magnitudes {
    /// Exactly `r`: the text is complete.
    Exactly(u64),
    /// `r` or any extension: `r` and `r * 10^j ..= (r + 1) * 10^j - 1` for `j >= 1`
    /// (every natural number when `r = 0`, since leading zeros are allowed).
    Extending(u64),
}

impl Exponents {
    /// Whether some reachable exponent lies in `[lo, hi]` (`None`: unbounded).
    pub(super) fn meets(&self, lo: Option<i128>, hi: Option<i128>) -> bool {
        if let (Some(l), Some(h)) = (lo, hi) {
            if l > h {
                return false;
            }
        }
        match *self {
            Exponents::Any => true,
            Exponents::Signed { negative, magnitudes } => {
                // Magnitude range: u in [u_lo, u_hi] with e = u or e = -u.
                let (u_lo, u_hi) = if negative {
                    (hi.map_or(0, |h| (-h).max(0)), lo.map(|l| -l))
                } else {
                    (lo.map_or(0, |l| l.max(0)), hi)
                };
                if u_hi.is_some_and(|h| h < u_lo) {
                    return false;
                }
                magnitudes.meets(u_lo, u_hi)
            }
        }
    }
}

impl Magnitudes {
    /// Whether a reachable magnitude lies in `[lo, hi]`, given `0 <= lo <= hi`. Finite bounds
    /// stay far below the saturation value, which therefore stands for "larger than any bound".
    pub(super) fn meets(&self, lo: i128, hi: Option<i128>) -> bool {
        let saturated = |r: u64| r >= EXPONENT_SATURATION;
        match *self {
            Magnitudes::Exactly(r) if saturated(r) => hi.is_none(),
            Magnitudes::Exactly(r) => lo <= i128::from(r) && hi.is_none_or(|h| i128::from(r) <= h),
            Magnitudes::Extending(r) if saturated(r) => hi.is_none(),
            Magnitudes::Extending(r) => {
                // Blocks [low, high] grow tenfold; stop at the first one reaching `lo` or
                // starting above `hi`. With r = 0, low stays 0 and high grows to reach `lo`.
                let (mut low, mut high) = (i128::from(r), i128::from(r));
                loop {
                    if hi.is_some_and(|h| low > h) {
                        return false;
                    }
                    if high >= lo {
                        return true;
                    }
                    low *= 10;
                    high = high * 10 + 9;
                }
            }
        }
    }
}

/// The digits of integer and fraction part read as one integer (leading zeros vanish by value).
#[derive(Clone, Debug)]
pub(super) enum Significand {
    Small(u128),
    Big(Arc<BigUint>),
}

impl Significand {
    pub(super) fn push(&self, digit: u8) -> Significand {
        let d = u128::from(digit - b'0');
        match self {
            Significand::Small(v) if *v < 10u128.pow(37) => Significand::Small(v * 10 + d),
            Significand::Small(v) => Significand::Big(Arc::new(BigUint::from(*v) * 10u32 + d as u32)),
            Significand::Big(v) => Significand::Big(Arc::new(&**v * 10u32 + d as u32)),
        }
    }

    pub(super) fn is_zero(&self) -> bool {
        matches!(self, Significand::Small(0))
    }

    pub(super) fn to_biguint(&self) -> BigUint {
        match self {
            Significand::Small(v) => BigUint::from(*v),
            Significand::Big(v) => (**v).clone(),
        }
    }

    /// `self + add` without trailing zeros, and how many there were (in machine integers
    /// while the value fits).
    pub(super) fn stripped(&self, add: u32) -> (BigUint, u64) {
        match self {
            Significand::Small(v) => {
                let (v, zeros) = strip_small_trailing_zeros(v + u128::from(add));
                (BigUint::from(v), zeros)
            }
            Significand::Big(v) => strip_trailing_zeros(&(&**v + add)),
        }
    }
}
