//! Exact, streaming recognition of JSON number texts under JSON Schema numeric constraints.
//!
//! The language of JSON numbers whose *value* satisfies `minimum`/`maximum` (inclusive or
//! exclusive), `multipleOf`, `type: integer` and `enum`/`const` is not regular once fractions and
//! exponents are allowed (`1` followed by n zeros and `e-m` is at most 250 iff n - m <= 2), so it is
//! recognised here with exact decimal arithmetic instead of an automaton.
//!
//! # Liveness
//!
//! [`NumberMatcher::feed`] admits a byte only if the text read so far still has a completion (a
//! full JSON number text extending it) whose value satisfies every constraint. After a prefix, the
//! values of its completions form one of a few families, and each family is decided exactly
//! against the bounds and the *step*: the least common multiple of every `multipleOf` and, for
//! integers, of 1 (a value is admissible iff it is a multiple of the step).
//!
//! * **Open significand** (the exponent has not started, so one may still be added): the prefix
//!   has fixed a sign and a digit string whose leading zeros do not count. If those digits are all
//!   zero (`"0"`, `"-0.00"`, or nothing yet), every value of that sign and zero are reachable
//!   (`"0.00"` continues as `"0.0012e7"`). Otherwise, with `P` the digits read as an integer
//!   (`"1.20"` gives `P = 120`), a completion's value is `m * 10^k` for any integer `k` (the
//!   exponent absorbs where the point was) and any `m` whose decimal digits start with those of
//!   `P`. So the reachable magnitudes are exactly the decimals in the union over `k` of
//!   `J_k = [P * 10^k, (P + 1) * 10^k)`. Multiplying by ten maps `J_k` onto `J_(k+1)` and keeps
//!   multiples of a step multiples, so if some `J_k` holds an admissible value then so does every
//!   later `J_k` still below the upper bound. Hence, with an upper bound `hi` and `k_hi` the last
//!   `k` with `P * 10^k <= hi`, it suffices to look at `J_(k_hi)` and `J_(k_hi - 1)` (the latter
//!   lies wholly below `hi` because `(P + 1) * 10^(k-1) <= P * 10^k`); without an upper bound a
//!   late enough `J_k` lies inside the range and is longer than the step, so the prefix is live.
//!   Draft 4 style integers without fraction or exponent (`integer_syntax_only`) only extend the
//!   integer digits: the same intervals with `k >= 0`.
//! * **Open exponent** (after `e`): the significand is fixed, its value is `c * 10^(beta + e)`
//!   with `c` free of trailing zeros, and only the exponent `e` varies. The admissible `t = beta + e`
//!   form an interval: the bounds give `t_lo <= t <= t_hi` because the value is monotone in `t`,
//!   and a step `s` divides `c * 10^t` iff the part of `s` coprime to ten divides `c` and `t` is
//!   large enough to cover the powers of two and five of `s`. The exponents a partly read exponent
//!   can still become are: any integer after `e`, any natural number (or its negation) after a
//!   sign, and after digits `r` (leading zeros allowed, so `"e007"` reads `r = 7`) the numbers
//!   `r` and `r * 10^j ..= (r + 1) * 10^j - 1` for `j >= 1`; such a set meets an interval iff one
//!   of its first few blocks does.
//! * **Finite value sets** (`enum`, `const`): each admissible value is checked for reachability
//!   from the prefix directly (its digits must start with `P`, or its coefficient and exponent must
//!   match the fixed significand).
//!
//! Existence of a multiple of a step in an interval is decided without enumerating multiples: an
//! interval longer than the step always holds one, and a shorter one holds one iff its ends'
//! remainders wrap around. Remainders use modular exponentiation, so values like `1e999999999`
//! never materialise their digits.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// Largest magnitude of a [`Decimal`]'s normalised exponent. Values beyond it (`1e200000000000000000`)
/// are not represented: [`Decimal::parse`] returns `None` for them.
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000_000_000_000_000;

/// Exponent digits in a number text are accumulated up to this value and then saturate: any
/// exponent at least this large lies beyond every bound derived from [`MAX_DECIMAL_EXPONENT`].
const EXPONENT_SATURATION: u64 = 1_000_000_000_000_000_000;

// ---------------------------------------------------------------------------------------------
// Exact decimals
// ---------------------------------------------------------------------------------------------

/// An exact decimal value: `(-1)^negative * coefficient * 10^exponent`.
///
/// The representation is normalised (no trailing zeros in the coefficient; zero is non-negative
/// with exponent 0), so equality and hashing are by value: `1`, `1.0` and `10e-1` are equal.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    coefficient: BigUint,
    exponent: i64,
}

impl Decimal {
    /// Parses a JSON number text (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, nothing
    /// around it), as serde_json's `arbitrary_precision` numbers print. Returns `None` for other
    /// text and for values whose exponent exceeds [`MAX_DECIMAL_EXPONENT`] in magnitude.
    pub fn parse(json_number_text: &str) -> Option<Decimal> {
        let bytes = json_number_text.as_bytes();
        let mut i = 0;
        let negative = bytes.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        match bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_digits = &bytes[int_start..i];
        let mut frac_digits: &[u8] = &[];
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            frac_digits = &bytes[start..i];
        }
        let mut exponent: i128 = 0;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            let exp_negative = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
                exponent = (exponent * 10 + i128::from(b - b'0')).min(i128::from(EXPONENT_SATURATION));
                i += 1;
            }
            if i == start {
                return None;
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        if i != bytes.len() {
            return None;
        }
        let digits: Vec<u8> = int_digits.iter().chain(frac_digits).copied().collect();
        let Some(first) = digits.iter().position(|&d| d != b'0') else {
            return Some(Decimal::zero());
        };
        let last = digits.iter().rposition(|&d| d != b'0').expect("a non-zero digit exists");
        let trailing_zeros = (digits.len() - 1 - last) as i128;
        let coefficient = BigUint::parse_bytes(&digits[first..=last], 10)?;
        let exponent = exponent - frac_digits.len() as i128 + trailing_zeros;
        if exponent.abs() > i128::from(MAX_DECIMAL_EXPONENT) {
            return None;
        }
        Some(Decimal { negative, coefficient, exponent: exponent as i64 })
    }

    /// Zero.
    pub fn zero() -> Decimal {
        Decimal { negative: false, coefficient: BigUint::zero(), exponent: 0 }
    }

    /// `value` as a decimal.
    pub fn from_i64(value: i64) -> Decimal {
        Decimal::from_parts(value < 0, BigUint::from(value.unsigned_abs()), 0)
    }

    /// `(-1)^negative * coefficient * 10^exponent`, normalised.
    fn from_parts(negative: bool, coefficient: BigUint, exponent: i64) -> Decimal {
        if coefficient.is_zero() {
            return Decimal::zero();
        }
        let (coefficient, zeros) = strip_trailing_zeros(&coefficient);
        Decimal { negative, coefficient, exponent: exponent + zeros as i64 }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.coefficient.is_zero()
    }

    /// Whether the value is an integer.
    #[cfg(test)]
    pub fn is_integer(&self) -> bool {
        self.exponent >= 0 || self.is_zero()
    }

    /// The absolute value.
    pub fn abs(&self) -> Decimal {
        Decimal { negative: false, ..self.clone() }
    }

    fn negated(&self) -> Decimal {
        Decimal { negative: !self.negative && !self.is_zero(), ..self.clone() }
    }

    /// Position of the leading digit: the value's magnitude lies in `[10^lead, 10^(lead+1))`.
    /// Zero has no leading digit; callers exclude it.
    fn lead(&self) -> i128 {
        debug_assert!(!self.is_zero());
        i128::from(self.exponent) + decimal_digits(&self.coefficient) as i128 - 1
    }

    fn magnitude(&self) -> Magnitude<'_> {
        Magnitude { coefficient: &self.coefficient, exponent: i128::from(self.exponent) }
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = |d: &Decimal| {
            if d.is_zero() {
                0
            } else if d.negative {
                -1
            } else {
                1
            }
        };
        let (a, b) = (sign(self), sign(other));
        if a != b {
            return a.cmp(&b);
        }
        let magnitude = self.magnitude().cmp(&other.magnitude());
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Decimal {
    /// Plain notation for moderate exponents (`-12.5`, `300`), scientific otherwise (`1e999`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let sign = if self.negative { "-" } else { "" };
        let digits = self.coefficient.to_str_radix(10);
        match self.exponent {
            0..=20 => write!(f, "{sign}{digits}{}", "0".repeat(self.exponent as usize)),
            -40..=-1 => {
                let scale = (-self.exponent) as usize;
                if digits.len() > scale {
                    let (int, frac) = digits.split_at(digits.len() - scale);
                    write!(f, "{sign}{int}.{frac}")
                } else {
                    write!(f, "{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
                }
            }
            exponent => write!(f, "{sign}{digits}e{exponent}"),
        }
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({self})")
    }
}

/// A non-negative `coefficient * 10^exponent`, not necessarily normalised.
#[derive(Clone, Copy)]
struct Magnitude<'a> {
    coefficient: &'a BigUint,
    exponent: i128,
}

impl Magnitude<'_> {
    /// Compares by value. Leading-digit positions are compared first, so operands of very
    /// different size (`1e-999999999` against `1e999999999`) never get aligned digit by digit;
    /// when those positions agree the exponents differ by at most the longer coefficient's length.
    fn cmp(&self, other: &Magnitude<'_>) -> Ordering {
        match (self.coefficient.is_zero(), other.coefficient.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let lead = |m: &Magnitude<'_>| m.exponent + decimal_digits(m.coefficient) as i128;
        match lead(self).cmp(&lead(other)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        // Equal leads put the exponents at most the longer coefficient's length apart: small
        // coefficients compare in machine integers.
        if let (Some(a), Some(b)) = (self.coefficient.to_u64(), other.coefficient.to_u64()) {
            let gap = (self.exponent - other.exponent).unsigned_abs();
            if gap <= 19 {
                let scale = 10u128.pow(gap as u32);
                return if self.exponent >= other.exponent {
                    (u128::from(a) * scale).cmp(&u128::from(b))
                } else {
                    u128::from(a).cmp(&(u128::from(b) * scale))
                };
            }
        }
        match self.exponent.cmp(&other.exponent) {
            Ordering::Equal => self.coefficient.cmp(other.coefficient),
            Ordering::Greater => {
                (self.coefficient * pow10((self.exponent - other.exponent) as u64)).cmp(other.coefficient)
            }
            Ordering::Less => {
                self.coefficient.cmp(&(other.coefficient * pow10((other.exponent - self.exponent) as u64)))
            }
        }
    }
}

fn pow10(n: u64) -> BigUint {
    BigUint::from(10u32).pow(u32::try_from(n).expect("aligned exponents stay small"))
}

/// Number of decimal digits of `value` (1 for zero).
fn decimal_digits(value: &BigUint) -> u64 {
    if let Some(small) = value.to_u64() {
        return u64::from(small.checked_ilog10().unwrap_or(0)) + 1;
    }
    if let Some(small) = value.to_u128() {
        return u64::from(small.checked_ilog10().unwrap_or(0)) + 1;
    }
    // log10(value) lies in [(bits - 1) * log10(2), bits * log10(2)); start a little below and
    // correct upwards so that floating-point rounding cannot overshoot.
    let estimate = ((value.bits() - 1) as f64 * std::f64::consts::LOG10_2) as u64;
    let mut digits = estimate.saturating_sub(1).max(1);
    while *value >= pow10(digits) {
        digits += 1;
    }
    digits
}

/// `value` without its trailing decimal zeros, and how many there were (zero stays zero).
fn strip_trailing_zeros(value: &BigUint) -> (BigUint, u64) {
    if value.is_zero() {
        return (BigUint::zero(), 0);
    }
    if let Some(small) = value.to_u128() {
        let (small, zeros) = strip_small_trailing_zeros(small);
        return (BigUint::from(small), zeros);
    }
    let ten = BigUint::from(10u32);
    let mut value = value.clone();
    let mut zeros = 0;
    loop {
        let (quotient, remainder) = value.div_rem(&ten);
        if !remainder.is_zero() {
            return (value, zeros);
        }
        value = quotient;
        zeros += 1;
    }
}

/// [`strip_trailing_zeros`] in machine integers (zero stays zero): 64-bit division, far
/// cheaper than 128-bit, once the value fits.
fn strip_small_trailing_zeros(mut value: u128) -> (u128, u64) {
    let mut zeros = 0;
    while value > u128::from(u64::MAX) && value % 10 == 0 {
        value /= 10;
        zeros += 1;
    }
    let Ok(mut small) = u64::try_from(value) else { return (value, zeros) };
    while small != 0 && small % 10 == 0 {
        small /= 10;
        zeros += 1;
    }
    (u128::from(small), zeros)
}

/// Multiplicity of the prime `p` in the non-zero `value`, and `value` with those factors removed.
fn split_prime(value: &BigUint, p: u32) -> (u64, BigUint) {
    let p = BigUint::from(p);
    let mut value = value.clone();
    let mut count = 0;
    loop {
        let (quotient, remainder) = value.div_rem(&p);
        if !remainder.is_zero() {
            return (count, value);
        }
        value = quotient;
        count += 1;
    }
}

/// `a - b` for magnitudes `a >= b >= 0` whose leading digits are close (callers guarantee it:
/// aligning operands of very different size would materialise their whole gap).
fn sub_magnitudes(a: &Decimal, b: &Decimal) -> Decimal {
    if b.is_zero() {
        return a.abs();
    }
    let exponent = a.exponent.min(b.exponent);
    let left = &a.coefficient * pow10((a.exponent - exponent) as u64);
    let right = &b.coefficient * pow10((b.exponent - exponent) as u64);
    Decimal::from_parts(false, left - right, exponent)
}

/// `|a| + |b|`.
fn add_magnitudes(a: &Decimal, b: &Decimal) -> Decimal {
    let exponent = a.exponent.min(b.exponent);
    let left = &a.coefficient * pow10((a.exponent - exponent) as u64);
    let right = &b.coefficient * pow10((b.exponent - exponent) as u64);
    Decimal::from_parts(false, left + right, exponent)
}

/// `x mod m` for `x >= 0` and `m > 0`, as a magnitude in `[0, m)`.
fn rem_magnitude(x: &Decimal, m: &Decimal) -> Decimal {
    if x.is_zero() {
        return Decimal::zero();
    }
    if x.magnitude().cmp(&m.magnitude()) == Ordering::Less {
        return x.abs();
    }
    if x.exponent >= m.exponent {
        // x = cx * 10^(ex - em) * 10^em: reduce cx * 10^(ex - em) modulo cm, by fast
        // exponentiation when the shift is large, in machine integers when all is small.
        let shift = (x.exponent - m.exponent) as u64;
        if let (Some(cx), Some(cm), true) = (x.coefficient.to_u64(), m.coefficient.to_u64(), shift <= 19) {
            let r = u128::from(cx % cm) * 10u128.pow(shift as u32) % u128::from(cm);
            return Decimal::from_parts(false, BigUint::from(r as u64), m.exponent);
        }
        let scale =
            if shift <= 64 { pow10(shift) } else { BigUint::from(10u32).modpow(&BigUint::from(shift), &m.coefficient) };
        let r = (&x.coefficient % &m.coefficient) * scale % &m.coefficient;
        Decimal::from_parts(false, r, m.exponent)
    } else {
        // x >= m with a smaller exponent: the gap is at most x's coefficient length.
        let modulus = &m.coefficient * pow10((m.exponent - x.exponent) as u64);
        Decimal::from_parts(false, &x.coefficient % modulus, x.exponent)
    }
}

// ---------------------------------------------------------------------------------------------
// Constraints
// ---------------------------------------------------------------------------------------------

/// The numeric constraints of one schema position.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct NumberConstraints {
    /// The value must be integral (draft 6 and later: `1.0` and `1e2` are integers).
    pub integer: bool,
    /// Draft 4 style integers: no fraction and no exponent in the text at all (implies `integer`).
    pub integer_syntax_only: bool,
    /// Lower bound and whether it is exclusive.
    pub minimum: Option<(Decimal, bool)>,
    /// Upper bound and whether it is exclusive.
    pub maximum: Option<(Decimal, bool)>,
    /// The value must be a multiple of each of these (each should be positive; a zero divisor
    /// admits nothing, a negative one acts as its absolute value).
    pub multiple_of: Vec<Decimal>,
    /// From `enum`/`const`: the value must equal one of these (by value).
    pub values: Option<Vec<Decimal>>,
    /// From complements (`not`): the value must not be a multiple of any of these (each
    /// positive).
    pub not_multiple_of: Vec<Decimal>,
    /// From complements of draft 4 integers: the text must have a fraction or an exponent.
    pub fraction_or_exponent: bool,
}

impl NumberConstraints {
    /// Whether some JSON number satisfies all constraints.
    pub fn is_satisfiable(&self) -> bool {
        Derived::new(self).start_live
    }

    /// The numbers failing these constraints, as a union of constraints, when that is
    /// expressible: a finite value set leaves the open intervals between its values, a range
    /// the numbers below and above it, a step (integrality, `multipleOf`) the numbers in range
    /// off it. `None` for draft 4 integers, which are decided by their text.
    pub fn complement(&self) -> Option<Vec<NumberConstraints>> {
        let derived = Derived::new(self);
        if !derived.start_live {
            return Some(vec![NumberConstraints::default()]);
        }
        let between = |low: Option<&Decimal>, high: Option<&Decimal>| NumberConstraints {
            minimum: low.map(|v| (v.clone(), true)),
            maximum: high.map(|v| (v.clone(), true)),
            ..NumberConstraints::default()
        };
        if self.integer_syntax_only {
            // Draft 4 refuses `1.0` as an integer by its text: what fails is any text with a
            // fraction or an exponent, or an integral value failing the rest.
            let by_value = NumberConstraints { integer_syntax_only: false, integer: true, ..self.clone() };
            let mut pieces = vec![NumberConstraints { fraction_or_exponent: true, ..NumberConstraints::default() }];
            pieces.extend(by_value.complement()?);
            return Some(pieces);
        }
        if let Some(candidates) = &derived.candidates {
            let values: Vec<&Decimal> = candidates.iter().map(|c| &c.value).collect();
            let mut pieces = vec![between(None, values.first().copied())];
            pieces.extend(values.windows(2).map(|w| between(Some(w[0]), Some(w[1]))));
            pieces.push(between(values.last().copied(), None));
            return Some(pieces);
        }
        let in_range = || NumberConstraints {
            minimum: self.minimum.clone(),
            maximum: self.maximum.clone(),
            ..NumberConstraints::default()
        };
        let mut pieces = Vec::new();
        if let Some(step) = &derived.step {
            // Off the step (the lcm of `multipleOf` and integrality).
            pieces.push(NumberConstraints { not_multiple_of: vec![step.value.clone()], ..in_range() });
        }
        for m in &self.not_multiple_of {
            pieces.push(NumberConstraints { multiple_of: vec![m.abs()], ..in_range() });
        }
        if let Some((m, exclusive)) = &self.minimum {
            pieces.push(NumberConstraints { maximum: Some((m.clone(), !exclusive)), ..NumberConstraints::default() });
        }
        if let Some((m, exclusive)) = &self.maximum {
            pieces.push(NumberConstraints { minimum: Some((m.clone(), !exclusive)), ..NumberConstraints::default() });
        }
        Some(pieces)
    }

    /// Whether infinitely many values (not spellings) satisfy the constraints: not a finite
    /// value set, and not a bounded range that is a single point or stepped.
    pub fn has_infinitely_many_values(&self) -> bool {
        let derived = Derived::new(self);
        if !derived.start_live || derived.candidates.is_some() {
            return false;
        }
        match (&self.minimum, &self.maximum) {
            (Some((lo, _)), Some((hi, _))) => derived.step.is_none() && lo != hi,
            _ => true,
        }
    }

    /// Constraints satisfied exactly by the numbers satisfying both `self` and `other`.
    pub fn intersect(&self, other: &Self) -> Self {
        let mut multiple_of = self.multiple_of.clone();
        for m in &other.multiple_of {
            if !multiple_of.contains(m) {
                multiple_of.push(m.clone());
            }
        }
        let values = match (&self.values, &other.values) {
            (Some(a), Some(b)) => {
                let mut both: Vec<Decimal> = Vec::new();
                for v in a {
                    if b.contains(v) && !both.contains(v) {
                        both.push(v.clone());
                    }
                }
                Some(both)
            }
            (Some(a), None) | (None, Some(a)) => Some(a.clone()),
            (None, None) => None,
        };
        let mut not_multiple_of = self.not_multiple_of.clone();
        not_multiple_of.extend(other.not_multiple_of.iter().filter(|m| !self.not_multiple_of.contains(m)).cloned());
        NumberConstraints {
            not_multiple_of,
            fraction_or_exponent: self.fraction_or_exponent || other.fraction_or_exponent,
            integer: self.integer || other.integer,
            integer_syntax_only: self.integer_syntax_only || other.integer_syntax_only,
            minimum: tighter(&self.minimum, &other.minimum, Ordering::Greater),
            maximum: tighter(&self.maximum, &other.maximum, Ordering::Less),
            multiple_of,
            values,
        }
    }
}

/// The stricter of two bounds: `prefer` is the ordering of the stricter value (greater for
/// minimums); on equal values an exclusive bound is stricter.
fn tighter(a: &Option<(Decimal, bool)>, b: &Option<(Decimal, bool)>, prefer: Ordering) -> Option<(Decimal, bool)> {
    match (a, b) {
        (Some((x, xe)), Some((y, ye))) => Some(match x.cmp(y) {
            Ordering::Equal => (x.clone(), *xe || *ye),
            order if order == prefer => (x.clone(), *xe),
            _ => (y.clone(), *ye),
        }),
        (Some(bound), None) | (None, Some(bound)) => Some(bound.clone()),
        (None, None) => None,
    }
}

/// The combined `multipleOf` (and integrality) requirement: the value must be a multiple of
/// `value = rest * 2^twos * 5^fives` where `rest` is coprime to ten and `twos`, `fives` are the
/// multiplicities of 2 and 5 in the rational `value`, negative for fractions (`0.25 = 2^-2`).
#[derive(Clone, Debug)]
struct Step {
    value: Decimal,
    rest: BigUint,
    twos: i128,
    fives: i128,
}

impl Step {
    /// The least common multiple of positive decimals: per prime, the largest multiplicity.
    fn lcm(divisors: &[Decimal]) -> Option<Step> {
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
        Some(Step { value, rest, twos, fives })
    }

    /// The least `t` for which the step divides `c * 10^t` (`c > 0`), or `None` if it never does.
    /// Divisibility of `c * 10^t` by `rest * 2^twos * 5^fives` means: `rest` divides `c` (ten's
    /// powers never supply its primes) and `t` covers the missing twos and fives.
    fn least_exponent_for(&self, c: &BigUint) -> Option<i128> {
        if !(c % &self.rest).is_zero() {
            return None;
        }
        let (c_twos, without_twos) = split_prime(c, 2);
        let (c_fives, _) = split_prime(&without_twos, 5);
        Some((self.twos - c_twos as i128).max(self.fives - c_fives as i128))
    }

    fn divides(&self, value: &Decimal) -> bool {
        value.is_zero() || self.least_exponent_for(&value.coefficient).is_some_and(|t| t <= i128::from(value.exponent))
    }
}

/// The admissible magnitudes `x > 0` of one sign: `lo < x` or `lo <= x`, and below `hi` if any.
#[derive(Clone, Debug)]
struct Side {
    empty: bool,
    lo: Decimal,
    lo_exclusive: bool,
    hi: Option<(Decimal, bool)>,
}

impl Side {
    /// Positive values `x` with `minimum <= x <= maximum`.
    fn positive(minimum: &Option<(Decimal, bool)>, maximum: &Option<(Decimal, bool)>) -> Side {
        let (lo, lo_exclusive) = match minimum {
            Some((m, exclusive)) if *m > Decimal::zero() => (m.clone(), *exclusive),
            _ => (Decimal::zero(), true),
        };
        let hi = maximum.clone();
        Side::new(lo, lo_exclusive, hi)
    }

    /// Magnitudes `x > 0` with `minimum <= -x <= maximum`, i.e. `-maximum <= x <= -minimum`.
    fn negative(minimum: &Option<(Decimal, bool)>, maximum: &Option<(Decimal, bool)>) -> Side {
        let (lo, lo_exclusive) = match maximum {
            Some((m, exclusive)) if *m < Decimal::zero() => (m.negated(), *exclusive),
            _ => (Decimal::zero(), true),
        };
        let hi = minimum.as_ref().map(|(m, exclusive)| (m.negated(), *exclusive));
        Side::new(lo, lo_exclusive, hi)
    }

    fn new(lo: Decimal, lo_exclusive: bool, hi: Option<(Decimal, bool)>) -> Side {
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
fn interval_has_member(lo: &Decimal, lo_exclusive: bool, hi: Option<(&Decimal, bool)>, step: Option<&Step>) -> bool {
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
struct Candidate {
    value: Decimal,
    digits: Vec<u8>,
}

/// Everything derived from [`NumberConstraints`] that the matcher needs, computed once.
#[derive(Clone, Debug)]
struct Derived {
    /// No constraint at all: every number text is accepted.
    unconstrained: bool,
    syntax_integer: bool,
    /// The text must have a fraction or an exponent (any value can be spelled so).
    syntax_fraction: bool,
    step: Option<Step>,
    /// The value must not be a multiple of any of these.
    forbidden: Vec<Step>,
    /// A `multipleOf` of zero: nothing is a multiple.
    impossible: bool,
    minimum: Option<(Decimal, bool)>,
    maximum: Option<(Decimal, bool)>,
    positive: Side,
    negative: Side,
    /// The admissible members of `values`, if a value set is given.
    candidates: Option<Vec<Candidate>>,
    /// Zero is admissible.
    zero_ok: bool,
    /// Some positive (negative) value is admissible: what a prefix of that sign whose digits
    /// are all zero can still reach.
    any_positive: bool,
    any_negative: bool,
    /// Some value is admissible at all.
    start_live: bool,
}

impl Derived {
    fn new(c: &NumberConstraints) -> Derived {
        let syntax_integer = c.integer_syntax_only;
        let mut divisors: Vec<Decimal> = c.multiple_of.iter().map(Decimal::abs).collect();
        let impossible = divisors.iter().any(Decimal::is_zero);
        if c.integer || syntax_integer {
            divisors.push(Decimal::from_i64(1));
        }
        let step = if impossible { None } else { Step::lcm(&divisors) };
        let forbidden: Vec<Step> =
            c.not_multiple_of.iter().filter_map(|m| Step::lcm(std::slice::from_ref(&m.abs()))).collect();
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

    fn in_range(&self, v: &Decimal) -> bool {
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
    fn admits_by_arithmetic(&self, v: &Decimal) -> bool {
        !self.impossible
            && self.in_range(v)
            && self.step.as_ref().is_none_or(|s| s.divides(v))
            && !self.forbidden.iter().any(|f| f.divides(v))
    }

    /// Whether the interval of positive reals from `lo` to `hi` holds an admissible magnitude:
    /// a multiple of the step, if any, and of no forbidden divisor.
    fn interval_has_admissible(&self, lo: &Decimal, lo_exclusive: bool, hi: Option<(&Decimal, bool)>) -> bool {
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

    fn side(&self, negative: bool) -> &Side {
        if negative {
            &self.negative
        } else {
            &self.positive
        }
    }

    fn side_has_member(&self, side: &Side) -> bool {
        !side.empty && self.interval_has_admissible(&side.lo, side.lo_exclusive, side.hi.as_ref().map(|(h, e)| (h, *e)))
    }

    /// Open significand with digits `prefix` (as an integer, non-zero): does some `m * 10^k`
    /// with `m`'s digits starting with `prefix`'s (and `k >= 0` when `integer_digits_only`)
    /// satisfy the constraints? See the module documentation for why two intervals suffice.
    fn prefix_family_live(&self, negative: bool, prefix: &Significand, integer_digits_only: bool) -> bool {
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
    fn exponent_family_live(
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
fn digits_extend(value_digits: &[u8], prefix: &[u8]) -> bool {
    prefix.iter().enumerate().all(|(i, &d)| value_digits.get(i).copied().unwrap_or(b'0') == d)
}

/// The exponents that a number text can still end up with.
#[derive(Clone, Copy, Debug)]
enum Exponents {
    /// Any integer (after `e`).
    Any,
    /// `e = +-u` (per `negative`) with `u` in the magnitudes.
    Signed { negative: bool, magnitudes: Magnitudes },
}

/// Exponent magnitudes, from the digits `r` read so far (saturating at [`EXPONENT_SATURATION`]).
#[derive(Clone, Copy, Debug)]
enum Magnitudes {
    /// Exactly `r`: the text is complete.
    Exactly(u64),
    /// `r` or any extension: `r` and `r * 10^j ..= (r + 1) * 10^j - 1` for `j >= 1`
    /// (every natural number when `r = 0`, since leading zeros are allowed).
    Extending(u64),
}

impl Exponents {
    /// Whether some reachable exponent lies in `[lo, hi]` (`None`: unbounded).
    fn meets(&self, lo: Option<i128>, hi: Option<i128>) -> bool {
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
    fn meets(&self, lo: i128, hi: Option<i128>) -> bool {
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

/// [`NumberConstraints`] with their derived data, shared by every matcher over them.
#[derive(Debug)]
pub struct PreparedConstraints {
    constraints: Arc<NumberConstraints>,
    derived: Derived,
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

// ---------------------------------------------------------------------------------------------
// The matcher
// ---------------------------------------------------------------------------------------------

/// Where in `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` the text so far ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
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

/// The digits of integer and fraction part read as one integer (leading zeros vanish by value).
#[derive(Clone, Debug)]
enum Significand {
    Small(u128),
    Big(Arc<BigUint>),
}

impl Significand {
    fn push(&self, digit: u8) -> Significand {
        let d = u128::from(digit - b'0');
        match self {
            Significand::Small(v) if *v < 10u128.pow(37) => Significand::Small(v * 10 + d),
            Significand::Small(v) => Significand::Big(Arc::new(BigUint::from(*v) * 10u32 + d as u32)),
            Significand::Big(v) => Significand::Big(Arc::new(&**v * 10u32 + d as u32)),
        }
    }

    fn is_zero(&self) -> bool {
        matches!(self, Significand::Small(0))
    }

    fn to_biguint(&self) -> BigUint {
        match self {
            Significand::Small(v) => BigUint::from(*v),
            Significand::Big(v) => (**v).clone(),
        }
    }

    /// `self + add` without trailing zeros, and how many there were (in machine integers
    /// while the value fits).
    fn stripped(&self, add: u32) -> (BigUint, u64) {
        match self {
            Significand::Small(v) => {
                let (v, zeros) = strip_small_trailing_zeros(v + u128::from(add));
                (BigUint::from(v), zeros)
            }
            Significand::Big(v) => strip_trailing_zeros(&(&**v + add)),
        }
    }
}

#[derive(Clone, Debug)]
struct State {
    phase: Phase,
    negative: bool,
    exp_negative: bool,
    significand: Significand,
    /// Digits read after the point.
    fraction_digits: u64,
    /// Exponent digits read, saturating at [`EXPONENT_SATURATION`].
    exponent: u64,
}

impl State {
    fn start() -> State {
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
    fn step(&self, byte: u8) -> Option<State> {
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
    fn is_live(&self, d: &Derived) -> bool {
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
    fn is_accepting(&self, d: &Derived) -> bool {
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
    prepared: Arc<PreparedConstraints>,
    state: State,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap_or_else(|| panic!("not a decimal: {text}"))
    }

    fn prepare(c: NumberConstraints) -> Arc<PreparedConstraints> {
        Arc::new(PreparedConstraints::new(Arc::new(c)))
    }

    /// Feeds `text`: `Ok(accepting)`, or `Err(i)` when byte `i` is rejected.
    fn run(p: &Arc<PreparedConstraints>, text: &str) -> Result<bool, usize> {
        let mut m = NumberMatcher::with_prepared(p.clone());
        for (i, &b) in text.as_bytes().iter().enumerate() {
            let before = format!("{m:?}");
            if !m.feed(b) {
                assert_eq!(before, format!("{m:?}"), "a rejected byte changed the matcher");
                return Err(i);
            }
        }
        Ok(m.is_accepting())
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Expect {
        /// Admitted and complete.
        Accept,
        /// Admitted, not a satisfying number yet.
        Live,
        /// Its last byte is rejected (the text without it is admitted).
        Dead,
    }
    use Expect::*;

    #[track_caller]
    fn check(c: NumberConstraints, cases: &[(&str, Expect)]) {
        let p = prepare(c);
        for &(text, expect) in cases {
            let got = match run(&p, text) {
                Ok(true) => Accept,
                Ok(false) => Live,
                Err(i) if i + 1 == text.len() => Dead,
                Err(i) => panic!("{text:?}: rejected early at byte {i} under {:?}", p.constraints()),
            };
            assert_eq!(got, expect, "{text:?} under {:?}", p.constraints());
        }
    }

    fn bound(text: &str, exclusive: bool) -> Option<(Decimal, bool)> {
        Some((d(text), exclusive))
    }

    fn range(min: Option<(Decimal, bool)>, max: Option<(Decimal, bool)>) -> NumberConstraints {
        NumberConstraints { minimum: min, maximum: max, ..Default::default() }
    }

    #[test]
    fn decimal_parse_and_equality() {
        for same in ["1", "1.0", "10e-1", "0.1e1", "1E0", "1e+0", "100e-2", "0.01e2", "1e-0"] {
            assert_eq!(d(same), d("1"), "{same}");
        }
        assert_eq!(d("-0"), d("0"));
        assert_eq!(d("-0.0e5"), Decimal::zero());
        assert_eq!(d("0e999999999999999999999999"), Decimal::zero());
        assert_eq!(d("1e007"), d("1e7"));
        assert_eq!(d("-12.50"), d("-1.25e1"));
        for bad in
            ["", "-", "01", "1.", ".5", "+1", "1e", "1e+", " 1", "1 ", "--1", "0x1", "1.e2", "-.5", "1e1.5", "NaN"]
        {
            assert!(Decimal::parse(bad).is_none(), "{bad:?} parsed");
        }
        assert!(Decimal::parse("1e200000000000000000").is_none());
        assert!(Decimal::parse("1e99999999999999999999999").is_none());
        assert!(Decimal::parse("1e100000000000000000").is_some());
        assert!(d("1e2").is_integer() && d("1.0").is_integer() && !d("1.5").is_integer());
        assert_eq!(d("12.5").to_string(), "12.5");
        assert_eq!(d("-0.0012").to_string(), "-0.0012");
        assert_eq!(d("3e2").to_string(), "300");
        assert_eq!(d("1e999").to_string(), "1e999");
    }

    #[test]
    fn decimal_order() {
        let ascending = [
            "-1e999999999",
            "-2",
            "-1.5",
            "-1",
            "-1e-999",
            "0",
            "1e-999999999",
            "1e-999",
            "0.999",
            "1",
            "1.000001",
            "1.5",
            "2",
            "10",
            "99.9",
            "100",
            "1e999",
            "1e999999999",
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn decimal_helpers() {
        assert_eq!(rem_magnitude(&d("10"), &d("3")), d("1"));
        assert_eq!(
            rem_magnitude(&d("1e999999999"), &d("7")),
            d(&(BigUint::from(10u32).modpow(&BigUint::from(999_999_999u32), &BigUint::from(7u32))).to_string())
        );
        assert_eq!(rem_magnitude(&d("1.23"), &d("0.05")), d("0.03"));
        assert_eq!(rem_magnitude(&d("0.02"), &d("0.05")), d("0.02"));
        assert_eq!(rem_magnitude(&d("12345e-4"), &d("0.1")), d("0.0345"));
        assert_eq!(sub_magnitudes(&d("10"), &d("0.25")), d("9.75"));
        assert_eq!(decimal_digits(&BigUint::from(0u32)), 1);
        assert_eq!(decimal_digits(&BigUint::from(999u32)), 3);
        for n in [38u64, 39, 40, 100, 1000] {
            assert_eq!(decimal_digits(&pow10(n)), n + 1);
            assert_eq!(decimal_digits(&(pow10(n) - 1u32)), n);
        }
        let step = Step::lcm(&[d("0.3"), d("0.2")]).unwrap();
        assert_eq!(step.value, d("0.6"));
        let step = Step::lcm(&[d("4"), d("6"), d("1")]).unwrap();
        assert_eq!(step.value, d("12"));
        let step = Step::lcm(&[d("1e-1000000000"), d("2")]).unwrap();
        assert_eq!(step.value, d("2"));
        let step = Step::lcm(&[d("0.25"), d("1")]).unwrap();
        assert_eq!(step.value, d("1"));
        let step = Step::lcm(&[d("0.25"), d("0.1")]).unwrap();
        assert_eq!(step.value, d("0.5"));
        assert!(step.divides(&d("1.5")) && !step.divides(&d("1.25")) && step.divides(&d("0")));
    }

    #[test]
    fn unconstrained_accepts_the_json_grammar() {
        check(
            NumberConstraints::default(),
            &[
                ("0", Accept),
                ("-0", Accept),
                ("-", Live),
                ("1.5e-3", Accept),
                ("1E+007", Accept),
                ("1.", Live),
                ("1e", Live),
                ("1e+", Live),
                ("01", Dead),
                ("1.e", Dead),
                ("-.", Dead),
                ("+", Dead),
                ("1e5.", Dead),
                ("1ee", Dead),
                ("0.0.", Dead),
                ("1-", Dead),
                ("e", Dead),
                (".", Dead),
            ],
        );
        let m = NumberMatcher::new(Arc::new(NumberConstraints::default()));
        assert!(!m.is_started() && m.is_satisfiable());
        for b in b"0123456789-".iter() {
            assert!(m.can_continue_with(*b));
        }
        for b in b".eE+ ,]}x".iter() {
            assert!(!m.can_continue_with(*b));
        }
    }

    #[test]
    fn can_continue_follows_the_grammar_not_the_constraints() {
        let mut m = NumberMatcher::new(Arc::new(range(None, bound("250", false))));
        assert!(m.feed(b'1') && m.feed(b'e') && m.feed(b'2'));
        // "1e23" is over the maximum, yet '3' belongs to the number: it must not end it.
        assert!(m.can_continue_with(b'3'));
        let before = m.clone();
        assert!(!m.feed(b'3'));
        assert_eq!(format!("{before:?}"), format!("{m:?}"));
        assert!(!m.can_continue_with(b','));
        assert!(m.is_accepting());
        let mut zero = NumberMatcher::new(Arc::new(NumberConstraints::default()));
        assert!(zero.feed(b'0'));
        assert!(!zero.can_continue_with(b'1'));
        assert!(zero.can_continue_with(b'.') && zero.can_continue_with(b'E'));
    }

    #[test]
    fn maximum_250() {
        check(
            range(None, bound("250", false)),
            &[
                ("1", Accept),
                ("1e", Live),
                ("1e2", Accept),
                ("1e3", Dead),
                ("10e", Live),
                ("10e1", Accept),
                ("10e2", Dead),
                ("1e-", Live),
                ("1e-9999", Accept),
                ("1.5e2", Accept),
                ("2.51e", Live),
                ("2.51e2", Dead),
                ("2.5e2", Accept),
                ("250", Accept),
                ("2500e-1", Accept),
                ("25000e-2", Accept),
                ("251", Live),
                ("251e", Live),
                ("251e0", Dead),
                ("2501e-1", Live),
                ("2501e", Live),
                ("2501e+", Dead),
                ("3", Accept),
                ("30", Accept),
                ("300", Live),
                ("300e+", Dead),
                ("3e", Live),
                ("3e2", Dead),
                ("1e00", Accept),
                ("1e002", Accept),
                ("1e007", Dead),
                ("1e0000", Accept),
                ("-1e999999999", Accept),
                ("0.0025e5", Accept),
                ("0.0026e5", Dead),
                ("100000e-3", Accept),
                ("1000000000", Live),
                ("1000000000e-7", Accept),
                ("1000000000e-6", Live),
                ("1000000000e+", Dead),
                ("99", Accept),
                ("999", Live),
                ("999e", Live),
                ("999e0", Dead),
                ("9.99e1", Accept),
                ("9.99e2", Dead),
            ],
        );
        check(
            range(None, bound("250", true)),
            &[
                ("250", Live),
                ("250e+", Dead),
                ("25", Accept),
                ("2.5e2", Dead),
                ("2.5e1", Accept),
                ("249.999", Accept),
                ("2.5e", Live),
            ],
        );
    }

    #[test]
    fn exclusive_minimum_zero() {
        check(
            range(bound("0", true), None),
            &[
                ("0", Live),
                ("0.", Live),
                ("0.0", Live),
                ("0.00", Live),
                ("0.001", Accept),
                ("0e", Dead),
                ("0.0e", Dead),
                ("-", Dead),
                ("1", Accept),
                ("1e-999999999", Accept),
                ("0.5", Accept),
            ],
        );
        assert_eq!(run(&prepare(range(bound("0", true), None)), "-0"), Err(0));
        check(
            range(bound("0", false), None),
            &[("0", Accept), ("-0", Accept), ("-0.0e5", Accept), ("-0.", Live), ("-1", Dead)],
        );
        check(
            range(bound("0", false), bound("0", false)),
            &[("0", Accept), ("-0", Accept), ("0.0e-7", Accept), ("0.1", Dead), ("1", Dead), ("0e+", Live)],
        );
    }

    #[test]
    fn integers_draft6_and_draft4() {
        let draft6 = NumberConstraints { integer: true, ..Default::default() };
        check(
            draft6.clone(),
            &[
                ("1", Accept),
                ("1.", Live),
                ("1.5", Live),
                ("1.5e1", Accept),
                ("1.0", Accept),
                ("1e2", Accept),
                ("1.5e", Live),
                ("1.5e-", Dead),
                ("1e-", Live),
                ("1e-0", Accept),
                ("1e-1", Dead),
                ("1.25e1", Live),
                ("1.25e2", Accept),
                ("1.25e-", Dead),
                ("0.5", Live),
                ("0.5e1", Accept),
                ("-0.5e1", Accept),
                ("123.456e3", Accept),
                ("123.456e2", Live),
                ("123.456e02", Live),
                ("0.0", Accept),
            ],
        );
        let draft4 = NumberConstraints { integer: true, integer_syntax_only: true, ..Default::default() };
        check(
            draft4,
            &[("1", Accept), ("1.", Dead), ("1e", Dead), ("0", Accept), ("-0", Accept), ("-12", Accept), ("0.", Dead)],
        );
        check(
            NumberConstraints { integer_syntax_only: true, ..range(bound("10", false), bound("20", false)) },
            &[
                ("1", Live),
                ("10", Accept),
                ("20", Accept),
                ("2", Live),
                ("21", Dead),
                ("3", Dead),
                ("9", Dead),
                ("0", Dead),
                ("-", Dead),
                ("100", Dead),
                ("1.", Dead),
            ],
        );
        check(
            NumberConstraints { integer: true, ..range(bound("10", false), bound("20", false)) },
            &[
                ("1", Live),
                ("1.5e1", Accept),
                ("1.55", Dead),
                ("1.5", Live),
                ("2", Live),
                ("2.0e1", Accept),
                ("2.1", Dead),
                ("3", Dead),
                ("9", Dead),
                ("0", Live),
                ("0.", Live),
                ("0.1", Live),
                ("0.1e2", Accept),
                ("0.0", Live),
                ("0.00", Live),
                ("0.0001e5", Accept),
                ("0.21", Dead),
            ],
        );
    }

    #[test]
    fn multiple_of_three_below_five() {
        let c = NumberConstraints { multiple_of: vec![d("3")], ..range(None, bound("5", false)) };
        check(
            c,
            &[
                ("1", Dead),
                ("2", Dead),
                ("4", Dead),
                ("5", Dead),
                ("9", Dead),
                ("3", Accept),
                ("0", Accept),
                ("-", Live),
                ("-1", Live),
                ("-1e", Dead),
                ("-1.2e1", Accept),
                ("-12", Accept),
                ("30e-1", Accept),
                ("3.0", Accept),
                ("3e", Live),
                ("3e1", Dead),
                ("3e0", Accept),
                ("3e-", Live),
                ("3e-1", Dead),
                ("0.3e1", Accept),
                ("0.3", Live),
                ("0.4", Dead),
                ("-0.9e1", Accept),
                ("-0.", Live),
            ],
        );
    }

    #[test]
    fn multiple_of_decimals() {
        let cents = NumberConstraints { multiple_of: vec![d("0.01")], ..Default::default() };
        check(
            cents,
            &[
                ("1.23", Accept),
                ("123e-2", Accept),
                ("0.0123e2", Accept),
                ("1.234", Live),
                ("1.234e0", Live),
                ("1.234e01", Accept),
                ("1.234e-", Dead),
                ("1e-2", Accept),
                ("1e-3", Dead),
                ("0.001", Live),
                ("0.001e1", Accept),
                ("5e-02", Accept),
                ("5e-020", Dead),
            ],
        );
        let tiny = NumberConstraints { multiple_of: vec![d("1e-7")], ..range(bound("0", false), bound("1", false)) };
        check(
            tiny,
            &[
                ("0.0000001", Accept),
                ("0.00000001", Live),
                ("0.00000001e1", Accept),
                ("1e-7", Accept),
                ("1e-8", Dead),
                ("1.5e-", Live),
                ("1.5e-7", Dead),
                ("1.5e-6", Accept),
                ("0.99999999", Dead),
                ("0.9999999e-", Live),
                ("0.9999999e-0", Accept),
                ("0.9999999e-1", Dead),
                ("0.9999999", Accept),
                ("1.0000001", Dead),
                ("1", Accept),
            ],
        );
        let tenth =
            NumberConstraints { multiple_of: vec![d("0.1")], ..range(bound("0.25", false), bound("0.45", false)) };
        check(
            tenth,
            &[
                ("0.3", Accept),
                ("0.4", Accept),
                ("0.2", Dead),
                ("0.5", Dead),
                ("3e-1", Accept),
                ("3", Live),
                ("3e", Live),
                ("3e-2", Dead),
            ],
        );
        let seven = NumberConstraints { multiple_of: vec![d("7")], ..Default::default() };
        check(
            seven.clone(),
            &[
                ("7", Accept),
                ("14", Accept),
                ("1", Live),
                ("1.4e1", Accept),
                ("0.7e1", Accept),
                ("7e-", Live),
                ("7e-1", Dead),
                ("7e-0", Accept),
                ("1e", Dead),
                ("10e", Dead),
                ("1.4e", Live),
                ("1.4e-", Dead),
                ("-21", Accept),
                ("7e999999999", Accept),
            ],
        );
        let both = NumberConstraints { multiple_of: vec![d("0.3"), d("0.2")], ..Default::default() };
        check(
            both,
            &[
                ("0.6", Accept),
                ("1.2", Accept),
                ("0.3", Live),
                ("0.3e1", Accept),
                ("0.9", Live),
                ("0.9e", Live),
                ("0.9e1", Accept),
                ("0.9e-", Dead),
                ("1.8", Accept),
            ],
        );
        let zero_step = NumberConstraints { multiple_of: vec![d("0")], ..Default::default() };
        assert!(!zero_step.is_satisfiable());
        assert_eq!(run(&prepare(zero_step), "0"), Err(0));
    }

    #[test]
    fn huge_and_tiny_exponents() {
        let big = range(None, bound("1e1000000000", false));
        check(
            big,
            &[
                ("1e999999999", Accept),
                ("1e1000000000", Accept),
                ("1e1000000001", Dead),
                ("2e1000000000", Dead),
                ("2e", Live),
                ("2e999999999", Accept),
                ("1.0e1000000000", Accept),
                ("10e999999999", Accept),
                ("0.1e1000000001", Accept),
                ("0.1e1000000002", Dead),
                ("1.00000000000000000000000000000000000000001e", Live),
                ("1.00000000000000000000000000000000000000001e999999999", Accept),
                ("1.00000000000000000000000000000000000000001e1000000000", Dead),
                ("1e9999999999", Dead),
                ("1e-99999999999999999999999", Accept),
            ],
        );
        let above = range(bound("1e1000000", false), None);
        check(
            above,
            &[
                ("1", Live),
                ("1e", Live),
                ("1e-", Dead),
                ("1e999999", Live),
                ("1e9999990", Accept),
                ("1e1000000", Accept),
                ("1e99999999999999999999999999", Accept),
                ("-", Dead),
                ("0", Live),
                ("0e", Dead),
                ("0.", Live),
            ],
        );
        let tiny = range(bound("1e-1000000000", true), bound("1", false));
        check(
            tiny,
            &[
                ("1e-999999999", Accept),
                ("1e-1000000000", Dead),
                ("1e-100000000", Accept),
                ("0.0", Live),
                ("2", Live),
                ("2e+", Dead),
                ("1", Accept),
                ("1.", Live),
                ("1.0", Accept),
                ("1.01", Live),
                ("1.01e-", Live),
                ("1.01e0", Dead),
            ],
        );
        let exact = range(bound("1e1000000000", false), bound("1e1000000000", false));
        check(
            exact.clone(),
            &[
                ("1e1000000000", Accept),
                ("10e999999999", Accept),
                ("1", Live),
                ("2", Dead),
                ("1.", Live),
                ("1.0", Live),
                ("1.1", Dead),
                ("0.0", Live),
            ],
        );
        let exact_step =
            NumberConstraints { multiple_of: vec![d("1e-7"), d("3")], ..range(None, bound("1e1000000000", false)) };
        check(
            exact_step,
            &[("1e", Dead), ("3e999999999", Accept), ("3e1000000000", Dead), ("3", Accept), ("9.99e", Live)],
        );
    }

    #[test]
    fn negative_ranges() {
        let c = range(bound("-10", false), bound("-5", true));
        check(
            c,
            &[
                ("-", Live),
                ("-5", Live),
                ("-5.5", Accept),
                ("-6", Accept),
                ("-1", Live),
                ("-10", Accept),
                ("-10.1", Dead),
                ("-10.0", Accept),
                ("-2", Dead),
                ("0", Dead),
                ("5", Dead),
                ("-5e", Dead),
                ("-5.0e", Dead),
                ("-5.1e", Live),
                ("-5.1e0", Accept),
                ("-0.", Live),
                ("-0.5e", Dead),
                ("-0.6e1", Accept),
                ("-1e", Live),
                ("-1e1", Accept),
            ],
        );
        let around = range(bound("-1.5", true), bound("2.5", false));
        check(
            around,
            &[
                ("-1.5", Live),
                ("-1.4", Accept),
                ("-1", Accept),
                ("0", Accept),
                ("2.5", Accept),
                ("2.51", Live),
                ("2.51e+", Dead),
                ("-15e-1", Live),
                ("-15e-2", Accept),
                ("-1.5e+", Dead),
                ("-1.6e", Live),
                ("-1.6e0", Dead),
            ],
        );
    }

    #[test]
    fn value_sets() {
        let c = NumberConstraints { values: Some(vec![d("1"), d("2.5"), d("1e2")]), ..Default::default() };
        check(
            c,
            &[
                ("1", Accept),
                ("1.0", Accept),
                ("10e-1", Accept),
                ("2", Live),
                ("2.5", Accept),
                ("2.50", Accept),
                ("25e-1", Accept),
                ("3", Dead),
                ("1e2", Accept),
                ("100", Accept),
                ("10", Live),
                ("10.0e1", Accept),
                ("-", Dead),
                ("0", Live),
                ("0.1e1", Accept),
                ("0.25e1", Accept),
                ("0.2", Live),
                ("1.1", Dead),
                ("1e1", Dead),
                ("1e0", Accept),
                ("1e00002", Accept),
                ("1e-", Live),
                ("1e-0", Accept),
                ("1e-1", Dead),
                ("1000e-1", Accept),
                ("1000e-2", Dead),
                ("101", Dead),
                ("2.6", Dead),
            ],
        );
        let filtered = NumberConstraints {
            values: Some(vec![d("1"), d("2.5"), d("-3"), d("0")]),
            integer: true,
            ..range(bound("0", true), None)
        };
        check(filtered, &[("1", Accept), ("2", Dead), ("0", Live), ("-", Dead), ("0.1e1", Accept)]);
        let none = NumberConstraints { values: Some(vec![]), ..Default::default() };
        assert!(!none.is_satisfiable());
        let zero = NumberConstraints { values: Some(vec![d("0")]), ..Default::default() };
        check(zero, &[("0", Accept), ("-0", Accept), ("-0.0e-5", Accept), ("1", Dead), ("0.1", Dead), ("0.0", Accept)]);
        let draft4 = NumberConstraints {
            values: Some(vec![d("12"), d("1.5"), d("3e1")]),
            integer_syntax_only: true,
            ..Default::default()
        };
        check(
            draft4,
            &[("1", Live), ("12", Accept), ("1.", Dead), ("15", Dead), ("3", Live), ("30", Accept), ("3e", Dead)],
        );
    }

    #[test]
    fn satisfiability_and_intersection() {
        assert!(NumberConstraints::default().is_satisfiable());
        assert!(!range(bound("5", false), bound("4", false)).is_satisfiable());
        assert!(!range(bound("5", true), bound("5", false)).is_satisfiable());
        assert!(range(bound("5", false), bound("5", false)).is_satisfiable());
        let int_gap = NumberConstraints { integer: true, ..range(bound("1", true), bound("2", true)) };
        assert!(!int_gap.is_satisfiable());
        let step_gap =
            NumberConstraints { multiple_of: vec![d("0.7")], ..range(bound("1.41", false), bound("2.09", false)) };
        assert!(!step_gap.is_satisfiable());
        let step_hit =
            NumberConstraints { multiple_of: vec![d("0.7")], ..range(bound("1.4", false), bound("2.09", false)) };
        assert!(step_hit.is_satisfiable());

        let a = NumberConstraints {
            minimum: bound("1", false),
            maximum: bound("10", true),
            multiple_of: vec![d("2")],
            values: Some(vec![d("2"), d("3"), d("4")]),
            ..Default::default()
        };
        let b = NumberConstraints {
            integer: true,
            minimum: bound("1", true),
            maximum: bound("10", false),
            multiple_of: vec![d("2.0"), d("3")],
            values: Some(vec![d("4.0"), d("6"), d("2e0")]),
            ..Default::default()
        };
        let both = a.intersect(&b);
        assert!(both.integer && !both.integer_syntax_only);
        assert_eq!(both.minimum, bound("1", true));
        assert_eq!(both.maximum, bound("10", true));
        assert_eq!(both.multiple_of, vec![d("2"), d("3")]);
        assert_eq!(both.values, Some(vec![d("2"), d("4")]));
        assert!(!both.is_satisfiable(), "2 and 4 are not multiples of 3");
        assert_eq!(a.intersect(&NumberConstraints::default()), a);
    }

    #[test]
    fn long_significands_spill_to_big_integers() {
        let c = range(bound("1", false), bound("2", false));
        let mut text = String::from("1.");
        text.push_str(&"0".repeat(60));
        text.push('1');
        assert_eq!(run(&prepare(c.clone()), &text), Ok(true));
        let over = format!("2.{}1", "0".repeat(60));
        assert_eq!(run(&prepare(c.clone()), &over), Err(over.len() - 1));
        let int = "9".repeat(45);
        let c = NumberConstraints { multiple_of: vec![d("9")], ..Default::default() };
        assert_eq!(run(&prepare(c.clone()), &int), Ok(true));
        assert_eq!(run(&prepare(c), &format!("{int}1")), Ok(false));
    }

    /// Brute-force checks against oracles that share nothing with the matcher but `Decimal`'s
    /// parser and order: an independent grammar, an independent evaluator of complete texts, a
    /// value-driven liveness decider (exact for finite value sets) and an exhaustive bounded
    /// search over all texts up to a length (with witnesses checked by the evaluator).
    mod oracle {
        use super::*;
        use std::time::Instant;

        const ALPHABET: &[u8] = b"0123456789.eE+-";
        /// Scaled integers (units of 10^-6) for generating constraints and enumerating values.
        const SCALE: i128 = 1_000_000;
        const STEPS: &[&str] = &[
            "1", "2", "3", "5", "7", "0.5", "0.25", "0.2", "0.1", "0.3", "0.05", "0.01", "0.07", "1.5", "12", "25",
            "100", "0.001",
        ];

        struct XorShift(u64);

        impl XorShift {
            fn next(&mut self) -> u64 {
                let mut x = self.0;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.0 = x;
                x
            }
            fn below(&mut self, n: u64) -> u64 {
                self.next() % n
            }
            fn one_in(&mut self, n: u64) -> bool {
                self.below(n) == 0
            }
            fn range(&mut self, lo: i64, hi: i64) -> i64 {
                lo + self.below((hi - lo + 1) as u64) as i64
            }
        }

        /// A grammatical prefix of a JSON number, split into its parts.
        #[derive(Clone, Debug, Default)]
        struct Parts {
            negative: bool,
            int: Vec<u8>,
            dot: bool,
            frac: Vec<u8>,
            exp_mark: bool,
            exp_sign: Option<u8>,
            exp: Vec<u8>,
        }

        impl Parts {
            fn complete(&self) -> bool {
                !self.int.is_empty() && (!self.dot || !self.frac.is_empty()) && (!self.exp_mark || !self.exp.is_empty())
            }
        }

        fn take_digits(text: &[u8], i: &mut usize, out: &mut Vec<u8>) {
            while let Some(&b) = text.get(*i).filter(|b| b.is_ascii_digit()) {
                out.push(b);
                *i += 1;
            }
        }

        /// `Some` iff `text` is a prefix of some JSON number text.
        fn parts(text: &[u8]) -> Option<Parts> {
            let mut p = Parts::default();
            let mut i = 0;
            if text.first() == Some(&b'-') {
                p.negative = true;
                i = 1;
            }
            take_digits(text, &mut i, &mut p.int);
            if p.int.len() > 1 && p.int[0] == b'0' {
                return None;
            }
            if text.get(i) == Some(&b'.') {
                if p.int.is_empty() {
                    return None;
                }
                p.dot = true;
                i += 1;
                take_digits(text, &mut i, &mut p.frac);
            }
            if matches!(text.get(i), Some(b'e' | b'E')) {
                if p.int.is_empty() || (p.dot && p.frac.is_empty()) {
                    return None;
                }
                p.exp_mark = true;
                i += 1;
                if let Some(&sign @ (b'+' | b'-')) = text.get(i) {
                    p.exp_sign = Some(sign);
                    i += 1;
                }
                take_digits(text, &mut i, &mut p.exp);
            }
            (i == text.len()).then_some(p)
        }

        /// Decides complete texts directly from the constraints' definitions.
        struct Judge {
            c: NumberConstraints,
        }

        impl Judge {
            fn accepts_text(&self, text: &[u8]) -> bool {
                let Some(p) = parts(text) else { return false };
                if !p.complete() || (self.c.integer_syntax_only && (p.dot || p.exp_mark)) {
                    return false;
                }
                if self.c.fraction_or_exponent && !(p.dot || p.exp_mark) {
                    return false;
                }
                let v = Decimal::parse(std::str::from_utf8(text).unwrap()).expect("short texts stay in range");
                self.accepts_value(&v)
            }

            fn accepts_value(&self, v: &Decimal) -> bool {
                let c = &self.c;
                if let Some((m, exclusive)) = &c.minimum {
                    if v < m || (*exclusive && v == m) {
                        return false;
                    }
                }
                if let Some((m, exclusive)) = &c.maximum {
                    if v > m || (*exclusive && v == m) {
                        return false;
                    }
                }
                if (c.integer || c.integer_syntax_only) && !v.is_integer() {
                    return false;
                }
                c.multiple_of.iter().all(|m| divisible(v, m))
                    && !c.not_multiple_of.iter().any(|m| divisible(v, m))
                    && c.values.as_ref().is_none_or(|vs| vs.contains(v))
            }
        }

        /// Whether `v / m` is an integer: `(cv / cm) * 10^(ev - em)`.
        fn divisible(v: &Decimal, m: &Decimal) -> bool {
            if v.is_zero() {
                return true;
            }
            let shift = v.exponent - m.exponent;
            if shift > 200 {
                let scale = BigUint::from(10u32).modpow(&BigUint::from(shift as u64), &m.coefficient);
                (&v.coefficient * scale % &m.coefficient).is_zero()
            } else if shift >= 0 {
                (&v.coefficient * BigUint::from(10u32).pow(shift as u32) % &m.coefficient).is_zero()
            } else if -shift > 200 {
                false
            } else {
                (&v.coefficient % (&m.coefficient * BigUint::from(10u32).pow((-shift) as u32))).is_zero()
            }
        }

        /// Integer and fraction digits of `|v| / 10^e` in plain notation.
        fn plain(v: &Decimal, e: i64) -> (Vec<u8>, Vec<u8>) {
            if v.is_zero() {
                return (b"0".to_vec(), Vec::new());
            }
            let digits = v.coefficient.to_str_radix(10).into_bytes();
            let x = v.exponent - e;
            if x >= 0 {
                let mut int = digits;
                int.extend(std::iter::repeat_n(b'0', x as usize));
                return (int, Vec::new());
            }
            let scale = (-x) as usize;
            if digits.len() > scale {
                let (int, frac) = digits.split_at(digits.len() - scale);
                (int.to_vec(), frac.to_vec())
            } else {
                let mut frac = vec![b'0'; scale - digits.len()];
                frac.extend(digits);
                (b"0".to_vec(), frac)
            }
        }

        /// Whether the exponent part of `p` can still be completed to spell the exponent `e`.
        fn exponent_fits(p: &Parts, e: i64) -> bool {
            if !p.exp_mark {
                return true;
            }
            let sign_ok = match p.exp_sign {
                Some(b'-') => e <= 0,
                Some(_) => e >= 0,
                None => e >= 0 || p.exp.is_empty(),
            };
            let typed: Vec<u8> = p.exp.iter().copied().skip_while(|&b| b == b'0').collect();
            sign_ok && (typed.is_empty() || e.unsigned_abs().to_string().as_bytes().starts_with(&typed))
        }

        /// Whether `p` extends to a text spelling `v` as `w * 10^e` (`w` in plain notation).
        fn spells(p: &Parts, syntax_integer: bool, v: &Decimal, e: i64) -> bool {
            if !v.is_zero() && p.negative != v.negative {
                return false;
            }
            if syntax_integer && (p.dot || p.exp_mark || e != 0) {
                return false;
            }
            // Zero is spelled with any exponent, so any exponent digits complete it.
            if !v.is_zero() && !exponent_fits(p, e) {
                return false;
            }
            let (int, frac) = plain(v, e);
            if syntax_integer && !frac.is_empty() {
                return false;
            }
            let int_ok = if p.dot || p.exp_mark { p.int == int } else { int.starts_with(&p.int) };
            let frac_ok = p.frac.iter().enumerate().all(|(i, &b)| b == frac.get(i).copied().unwrap_or(b'0'));
            // Once the exponent started, the fraction is closed and must hold all of w's digits.
            int_ok && frac_ok && !(p.exp_mark && p.frac.len() < frac.len())
        }

        fn scaled_text(n: i128) -> String {
            let sign = if n < 0 { "-" } else { "" };
            let (int, frac) = (n.abs() / SCALE, n.abs() % SCALE);
            let frac = format!("{frac:06}");
            let frac = frac.trim_end_matches('0');
            if frac.is_empty() {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            }
        }

        fn to_scaled(text: &str) -> i128 {
            let (int, frac) = text.split_once('.').unwrap_or((text, ""));
            let frac = format!("{frac:0<6}");
            int.parse::<i128>().unwrap() * SCALE + frac.parse::<i128>().unwrap()
        }

        /// `sig * 10^x` with up to `max_sig` and x in the range, as scaled integer.
        fn random_small(rng: &mut XorShift, max_sig: i64, x: (i64, i64)) -> i128 {
            let sig = i128::from(rng.range(0, max_sig));
            let x = rng.range(x.0, x.1);
            let magnitude =
                if x >= 0 { sig * SCALE * 10i128.pow(x as u32) } else { sig * SCALE / 10i128.pow((-x) as u32) };
            if rng.one_in(2) {
                -magnitude
            } else {
                magnitude
            }
        }

        fn random_steps(rng: &mut XorShift, max: u64) -> Vec<Decimal> {
            (0..rng.below(max + 1)).map(|_| d(STEPS[rng.below(STEPS.len() as u64) as usize])).collect()
        }

        /// Bounded ranges with a step (or integrality): the admissible values are finite.
        fn finite_arithmetic(rng: &mut XorShift) -> (NumberConstraints, Vec<Decimal>) {
            loop {
                let multiple_of = random_steps(rng, 2);
                let integer_syntax_only = rng.one_in(5);
                let integer = multiple_of.is_empty() || rng.one_in(3);
                let (mut lo, mut hi) = (random_small(rng, 999, (-3, 1)), random_small(rng, 999, (-3, 1)));
                if rng.one_in(6) {
                    hi = lo;
                }
                if lo > hi {
                    std::mem::swap(&mut lo, &mut hi);
                }
                let base = multiple_of.first().map_or(SCALE, |m| to_scaled(&m.to_string()));
                if (hi - lo) / base > 400 {
                    continue;
                }
                let c = NumberConstraints {
                    integer,
                    integer_syntax_only,
                    minimum: Some((d(&scaled_text(lo)), rng.one_in(4))),
                    maximum: Some((d(&scaled_text(hi)), rng.one_in(4))),
                    multiple_of,
                    values: None,
                    not_multiple_of: Vec::new(),
                    fraction_or_exponent: false,
                };
                let judge = Judge { c };
                let first = lo.div_euclid(base) - 1;
                let values: Vec<Decimal> = (first..=hi.div_euclid(base) + 1)
                    .map(|n| d(&scaled_text(n * base)))
                    .filter(|v| judge.accepts_value(v))
                    .collect();
                return (judge.c, values);
            }
        }

        /// `enum`-style value sets, optionally narrowed by other constraints.
        fn finite_values(rng: &mut XorShift) -> (NumberConstraints, Vec<Decimal>) {
            let mut listed: Vec<Decimal> =
                (0..rng.range(1, 6)).map(|_| d(&scaled_text(random_small(rng, 999, (-4, 4))))).collect();
            if rng.one_in(3) {
                listed.push(Decimal::zero());
            }
            let c = NumberConstraints {
                integer: rng.one_in(4),
                integer_syntax_only: rng.one_in(6),
                minimum: rng.one_in(3).then(|| (d(&scaled_text(random_small(rng, 99, (-2, 2)))), rng.one_in(2))),
                maximum: rng.one_in(3).then(|| (d(&scaled_text(random_small(rng, 99, (-2, 2)))), rng.one_in(2))),
                multiple_of: if rng.one_in(3) { random_steps(rng, 1) } else { Vec::new() },
                values: Some(listed.clone()),
                not_multiple_of: if rng.one_in(4) { random_steps(rng, 1) } else { Vec::new() },
                fraction_or_exponent: false,
            };
            let judge = Judge { c };
            let mut values: Vec<Decimal> = listed.into_iter().filter(|v| judge.accepts_value(v)).collect();
            values.sort();
            values.dedup();
            (judge.c, values)
        }

        /// Any mix, including unbounded ranges and ranges without a step.
        fn general(rng: &mut XorShift) -> NumberConstraints {
            if rng.one_in(5) {
                return finite_values(rng).0;
            }
            NumberConstraints {
                integer: rng.one_in(4),
                integer_syntax_only: rng.one_in(8),
                minimum: rng.one_in(2).then(|| (d(&scaled_text(random_small(rng, 99, (-2, 2)))), rng.one_in(2))),
                maximum: rng.one_in(2).then(|| (d(&scaled_text(random_small(rng, 99, (-2, 2)))), rng.one_in(2))),
                multiple_of: if rng.one_in(2) { random_steps(rng, 2) } else { Vec::new() },
                values: None,
                // Complements (`not`) forbid multiples.
                not_multiple_of: if rng.one_in(3) { random_steps(rng, 2) } else { Vec::new() },
                fraction_or_exponent: rng.one_in(6),
            }
        }

        #[derive(Default, Debug)]
        struct Stats {
            constraint_sets: u64,
            prefixes: u64,
            live: u64,
            accepting: u64,
            witnesses: u64,
        }

        struct ValueRun<'a> {
            judge: &'a Judge,
            values: &'a [Decimal],
            max_len: usize,
        }

        /// Walks every grammatical prefix below live ones: the matcher's verdict on each byte must
        /// equal "some admissible value is still spelled by an extension".
        fn explore_values(
            run: &ValueRun<'_>,
            text: &mut Vec<u8>,
            m: &NumberMatcher,
            survivors: &[(u32, i64)],
            stats: &mut Stats,
        ) {
            let accepting = run.judge.accepts_text(text);
            let shown = || format!("{:?} under {:?}", String::from_utf8_lossy(text), run.judge.c);
            assert_eq!(m.is_accepting(), accepting, "accepting: {}", shown());
            stats.live += 1;
            stats.accepting += u64::from(accepting);
            if text.len() == run.max_len {
                return;
            }
            let syntax_integer = run.judge.c.integer_syntax_only;
            for &b in ALPHABET {
                text.push(b);
                let grammatical = parts(text);
                assert_eq!(
                    m.can_continue_with(b),
                    grammatical.is_some(),
                    "grammar: {:?}",
                    String::from_utf8_lossy(text)
                );
                let mut next = m.clone();
                let fed = next.feed(b);
                stats.prefixes += 1;
                match grammatical {
                    None => assert!(!fed, "ungrammatical byte admitted: {:?}", String::from_utf8_lossy(text)),
                    Some(p) => {
                        let surviving: Vec<(u32, i64)> = survivors
                            .iter()
                            .copied()
                            .filter(|&(i, e)| spells(&p, syntax_integer, &run.values[i as usize], e))
                            .collect();
                        assert_eq!(
                            fed,
                            !surviving.is_empty(),
                            "liveness of {:?} under {:?} (admissible values {:?})",
                            String::from_utf8_lossy(text),
                            run.judge.c,
                            run.values
                        );
                        if fed {
                            explore_values(run, text, &next, &surviving, stats);
                        }
                    }
                }
                text.pop();
            }
        }

        fn value_oracle(seed: u64, sets: u64, max_len: usize) -> Stats {
            let mut rng = XorShift(seed);
            let mut stats = Stats::default();
            for round in 0..sets {
                let (c, values) = if round % 2 == 0 { finite_arithmetic(&mut rng) } else { finite_values(&mut rng) };
                let judge = Judge { c: c.clone() };
                let m = NumberMatcher::new(Arc::new(c.clone()));
                assert_eq!(m.is_satisfiable(), !values.is_empty(), "satisfiable: {c:?} admits {values:?}");
                assert_eq!(c.is_satisfiable(), !values.is_empty());
                stats.constraint_sets += 1;
                if values.is_empty() {
                    continue;
                }
                // Exponents within +-30 cover every spelling of these values from prefixes of
                // this length: the values' own exponents are within +-7.
                let exponents: Vec<i64> = if c.integer_syntax_only { vec![0] } else { (-30..=30).collect() };
                let survivors: Vec<(u32, i64)> = (0..values.len() as u32)
                    .flat_map(|i| {
                        let exponents = if values[i as usize].is_zero() { &exponents[..1] } else { &exponents[..] };
                        exponents.iter().map(move |&e| (i, e))
                    })
                    .collect();
                let run = ValueRun { judge: &judge, values: &values, max_len };
                explore_values(&run, &mut Vec::new(), &m, &survivors, &mut stats);
            }
            stats
        }

        struct TreeRun<'a> {
            judge: &'a Judge,
            max_len: usize,
        }

        /// Exhaustive walk over all grammatical texts up to `max_len`; returns whether an
        /// accepted text of at most that length extends `text`. The matcher (absent below a
        /// rejected byte) must admit every such prefix; prefixes it admits without a witness
        /// within the length are collected for a deeper witness search.
        fn explore_tree(
            run: &TreeRun<'_>,
            text: &mut Vec<u8>,
            m: Option<&NumberMatcher>,
            unconfirmed: &mut Vec<(Vec<u8>, NumberMatcher)>,
            stats: &mut Stats,
        ) -> bool {
            let accepting = run.judge.accepts_text(text);
            if let Some(m) = m {
                assert_eq!(
                    m.is_accepting(),
                    accepting,
                    "accepting: {:?} under {:?}",
                    String::from_utf8_lossy(text),
                    run.judge.c
                );
            }
            if m.is_some() {
                stats.accepting += u64::from(accepting);
            }
            let mut live = accepting;
            if text.len() == run.max_len {
                return live;
            }
            for &b in ALPHABET {
                text.push(b);
                if parts(text).is_some() {
                    let next = m.and_then(|m| {
                        assert!(m.can_continue_with(b));
                        let mut n = m.clone();
                        n.feed(b).then_some(n)
                    });
                    let child_live = explore_tree(run, text, next.as_ref(), unconfirmed, stats);
                    if m.is_some() {
                        stats.prefixes += 1;
                        match (&next, child_live) {
                            (None, true) => panic!(
                                "rejected a live prefix {:?} under {:?}",
                                String::from_utf8_lossy(text),
                                run.judge.c
                            ),
                            (Some(n), false) => unconfirmed.push((text.clone(), n.clone())),
                            (Some(_), true) => stats.live += 1,
                            (None, false) => {}
                        }
                    }
                    live |= child_live;
                } else if let Some(m) = m {
                    assert!(
                        !m.can_continue_with(b) && !m.clone().feed(b),
                        "ungrammatical {:?}",
                        String::from_utf8_lossy(text)
                    );
                }
                text.pop();
            }
            live
        }

        /// Follows the matcher with fixed byte preferences (large exponents first, then small
        /// ones): finds most completions in a few steps. The end must satisfy the judge.
        fn greedy_witness(m: &NumberMatcher, text: &[u8], judge: &Judge) -> bool {
            for order in [&b"e9876543210-+."[..], &b"e-0123456789+."[..], &b"0123456789.e-+"[..]] {
                let mut m = m.clone();
                let mut text = text.to_vec();
                for _ in 0..12 {
                    if m.is_accepting() {
                        assert!(
                            judge.accepts_text(&text),
                            "accepted {:?} under {:?}",
                            String::from_utf8_lossy(&text),
                            judge.c
                        );
                        return true;
                    }
                    let Some(&b) = order.iter().find(|&&b| m.clone().feed(b)) else {
                        break;
                    };
                    m.feed(b);
                    text.push(b);
                }
            }
            false
        }

        /// Iterative deepening over the bytes the matcher admits; the end must satisfy the judge.
        fn find_witness(m: &NumberMatcher, text: &mut Vec<u8>, depth: usize, judge: &Judge) -> bool {
            if m.is_accepting() {
                assert!(judge.accepts_text(text), "accepted {:?} under {:?}", String::from_utf8_lossy(text), judge.c);
                return true;
            }
            if depth == 0 {
                return false;
            }
            ALPHABET.iter().any(|&b| {
                let mut n = m.clone();
                if !n.feed(b) {
                    return false;
                }
                text.push(b);
                let found = find_witness(&n, text, depth - 1, judge);
                text.pop();
                found
            })
        }

        fn tree_oracle(seed: u64, sets: u64, max_len: usize) -> Stats {
            let mut rng = XorShift(seed);
            let mut stats = Stats::default();
            for _ in 0..sets {
                let c = general(&mut rng);
                let judge = Judge { c: c.clone() };
                let m = NumberMatcher::new(Arc::new(c.clone()));
                let run = TreeRun { judge: &judge, max_len };
                let mut unconfirmed = Vec::new();
                let live = explore_tree(&run, &mut Vec::new(), Some(&m), &mut unconfirmed, &mut stats);
                assert!(m.is_satisfiable() || !live, "unsatisfiable claimed for {c:?}");
                stats.constraint_sets += 1;
                for (mut text, n) in unconfirmed {
                    let found = greedy_witness(&n, &text, &judge)
                        || (1..=9).any(|depth| find_witness(&n, &mut text, depth, &judge));
                    assert!(found, "no completion found for admitted {:?} under {c:?}", String::from_utf8_lossy(&text));
                    stats.witnesses += 1;
                    stats.live += 1;
                }
            }
            stats
        }

        #[test]
        fn liveness_matches_value_enumeration() {
            let started = Instant::now();
            let stats = value_oracle(0x9e37_79b9_7f4a_7c15, 60, 7);
            eprintln!("value oracle: {stats:?} in {:?}", started.elapsed());
            assert!(stats.prefixes > 100_000, "{stats:?}");
        }

        #[test]
        fn liveness_matches_bounded_search() {
            let started = Instant::now();
            let stats = tree_oracle(0x2545_f491_4f6c_dd1d, 12, 5);
            eprintln!("bounded-search oracle: {stats:?} in {:?}", started.elapsed());
            assert!(stats.prefixes > 1_000_000, "{stats:?}");
        }

        /// Larger runs: `cargo test --release -p maskforge-core numbers -- --ignored`.
        #[test]
        #[ignore]
        fn liveness_oracles_extended() {
            let started = Instant::now();
            let stats = value_oracle(0x1234_5678_9abc_def1, 300, 7);
            eprintln!("value oracle: {stats:?} in {:?}", started.elapsed());
            let started = Instant::now();
            let stats = tree_oracle(0x0fed_cba9_8765_4321, 60, 5);
            eprintln!("bounded-search oracle: {stats:?} in {:?}", started.elapsed());
        }
    }

    #[test]
    fn unbounded_completions_only_away_from_bounds() {
        let unbounded = |c: NumberConstraints, text: &str| {
            let mut m = NumberMatcher::with_prepared(prepare(c));
            assert!(text.bytes().all(|b| m.feed(b)), "{text}");
            m.has_unbounded_completions()
        };
        let upper = |max: &str| NumberConstraints { maximum: Some((d(max), false)), ..Default::default() };
        assert!(unbounded(NumberConstraints::default(), "5"));
        assert!(unbounded(NumberConstraints::default(), "0"), "0.5e1, 0.5e2, ...");
        assert!(unbounded(NumberConstraints::default(), "5e1"));
        assert!(!unbounded(NumberConstraints::default(), "0e"), "every exponent of zero is zero");
        assert!(!unbounded(NumberConstraints { integer: true, ..Default::default() }, "5e-"), "only 5e-0");
        assert!(!unbounded(upper("10"), "5"), "5 under 10 is not decided by this test");
        assert!(unbounded(upper("10"), "-5"));
        let draft4 = NumberConstraints { integer: true, integer_syntax_only: true, ..Default::default() };
        assert!(!unbounded(draft4.clone(), "0"));
        assert!(unbounded(draft4, "-"));
        let listed = NumberConstraints { values: Some(vec![d("1"), d("10")]), ..Default::default() };
        assert!(!unbounded(listed, "1"));
    }
}
