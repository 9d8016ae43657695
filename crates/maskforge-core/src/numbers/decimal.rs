//! Exact decimals of any size (`BigUint` coefficient, `i64` exponent, saturated beyond
//! [`MAX_DECIMAL_EXPONENT`]) and the magnitude arithmetic the liveness decisions use.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// Largest magnitude of a [`Decimal`]'s normalised exponent. Values beyond it (`1e200000000000000000`)
/// are not represented: [`Decimal::parse`] returns `None` for them.
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000_000_000_000_000;

/// Exponent digits in a number text are accumulated up to this value and then saturate: any
/// exponent at least this large lies beyond every bound derived from [`MAX_DECIMAL_EXPONENT`].
pub(super) const EXPONENT_SATURATION: u64 = 1_000_000_000_000_000_000;

/// An exact decimal value: `(-1)^negative * coefficient * 10^exponent`.
///
/// The representation is normalised (no trailing zeros in the coefficient; zero is non-negative
/// with exponent 0), so equality and hashing are by value: `1`, `1.0` and `10e-1` are equal.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    pub(super) negative: bool,
    pub(super) coefficient: BigUint,
    pub(super) exponent: i64,
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
    pub(super) fn from_parts(negative: bool, coefficient: BigUint, exponent: i64) -> Decimal {
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

    pub(super) fn negated(&self) -> Decimal {
        Decimal { negative: !self.negative && !self.is_zero(), ..self.clone() }
    }

    /// Position of the leading digit: the value's magnitude lies in `[10^lead, 10^(lead+1))`.
    /// Zero has no leading digit; callers exclude it.
    pub(super) fn lead(&self) -> i128 {
        debug_assert!(!self.is_zero());
        i128::from(self.exponent) + decimal_digits(&self.coefficient) as i128 - 1
    }

    pub(super) fn magnitude(&self) -> Magnitude<'_> {
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
pub(super) struct Magnitude<'a> {
    pub(super) coefficient: &'a BigUint,
    pub(super) exponent: i128,
}

impl Magnitude<'_> {
    /// Compares by value. Leading-digit positions are compared first, so operands of very
    /// different size (`1e-999999999` against `1e999999999`) never get aligned digit by digit;
    /// when those positions agree the exponents differ by at most the longer coefficient's length.
    pub(super) fn cmp(&self, other: &Magnitude<'_>) -> Ordering {
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

pub(super) fn pow10(n: u64) -> BigUint {
    BigUint::from(10u32).pow(u32::try_from(n).expect("aligned exponents stay small"))
}

/// Number of decimal digits of `value` (1 for zero).
pub(super) fn decimal_digits(value: &BigUint) -> u64 {
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
pub(super) fn strip_trailing_zeros(value: &BigUint) -> (BigUint, u64) {
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
pub(super) fn strip_small_trailing_zeros(mut value: u128) -> (u128, u64) {
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
pub(super) fn split_prime(value: &BigUint, p: u32) -> (u64, BigUint) {
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
pub(super) fn sub_magnitudes(a: &Decimal, b: &Decimal) -> Decimal {
    if b.is_zero() {
        return a.abs();
    }
    let exponent = a.exponent.min(b.exponent);
    let left = &a.coefficient * pow10((a.exponent - exponent) as u64);
    let right = &b.coefficient * pow10((b.exponent - exponent) as u64);
    Decimal::from_parts(false, left - right, exponent)
}

/// `|a| + |b|`.
pub(super) fn add_magnitudes(a: &Decimal, b: &Decimal) -> Decimal {
    let exponent = a.exponent.min(b.exponent);
    let left = &a.coefficient * pow10((a.exponent - exponent) as u64);
    let right = &b.coefficient * pow10((b.exponent - exponent) as u64);
    Decimal::from_parts(false, left + right, exponent)
}

/// `x mod m` for `x >= 0` and `m > 0`, as a magnitude in `[0, m)`.
pub(super) fn rem_magnitude(x: &Decimal, m: &Decimal) -> Decimal {
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
