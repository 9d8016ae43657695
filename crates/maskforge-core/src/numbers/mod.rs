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

mod decimal;
mod liveness;
mod matcher;

pub(crate) use decimal::Decimal;
use liveness::Derived;
pub(crate) use matcher::NumberMatcher;

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

#[cfg(test)]
mod tests;
