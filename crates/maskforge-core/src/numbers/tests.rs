//! The number matcher against its own cases, and against a slow oracle (`oracle`).

use std::sync::Arc;

use num_bigint::BigUint;
use num_traits::Zero;

use super::decimal::{decimal_digits, pow10, rem_magnitude, sub_magnitudes};
use super::liveness::ValueStep;
use super::matcher::PreparedConstraints;
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
    for bad in ["", "-", "01", "1.", ".5", "+1", "1e", "1e+", " 1", "1 ", "--1", "0x1", "1.e2", "-.5", "1e1.5", "NaN"] {
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
    let step = ValueStep::lcm(&[d("0.3"), d("0.2")]).unwrap();
    assert_eq!(step.value, d("0.6"));
    let step = ValueStep::lcm(&[d("4"), d("6"), d("1")]).unwrap();
    assert_eq!(step.value, d("12"));
    let step = ValueStep::lcm(&[d("1e-1000000000"), d("2")]).unwrap();
    assert_eq!(step.value, d("2"));
    let step = ValueStep::lcm(&[d("0.25"), d("1")]).unwrap();
    assert_eq!(step.value, d("1"));
    let step = ValueStep::lcm(&[d("0.25"), d("0.1")]).unwrap();
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
    let tenth = NumberConstraints { multiple_of: vec![d("0.1")], ..range(bound("0.25", false), bound("0.45", false)) };
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
    check(exact_step, &[("1e", Dead), ("3e999999999", Accept), ("3e1000000000", Dead), ("3", Accept), ("9.99e", Live)]);
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
mod oracle;

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
