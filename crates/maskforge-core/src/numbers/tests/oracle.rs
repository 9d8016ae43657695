use super::*;
use std::time::Instant;

const ALPHABET: &[u8] = b"0123456789.eE+-";
/// Scaled integers (units of 10^-6) for generating constraints and enumerating values.
const SCALE: i128 = 1_000_000;
const STEPS: &[&str] = &[
    "1", "2", "3", "5", "7", "0.5", "0.25", "0.2", "0.1", "0.3", "0.05", "0.01", "0.07", "1.5", "12", "25", "100",
    "0.001",
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
    let magnitude = if x >= 0 { sig * SCALE * 10i128.pow(x as u32) } else { sig * SCALE / 10i128.pow((-x) as u32) };
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
        assert_eq!(m.can_continue_with(b), grammatical.is_some(), "grammar: {:?}", String::from_utf8_lossy(text));
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
                    (None, true) => {
                        panic!("rejected a live prefix {:?} under {:?}", String::from_utf8_lossy(text), run.judge.c)
                    }
                    (Some(n), false) => unconfirmed.push((text.clone(), n.clone())),
                    (Some(_), true) => stats.live += 1,
                    (None, false) => {}
                }
            }
            live |= child_live;
        } else if let Some(m) = m {
            assert!(!m.can_continue_with(b) && !m.clone().feed(b), "ungrammatical {:?}", String::from_utf8_lossy(text));
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
                assert!(judge.accepts_text(&text), "accepted {:?} under {:?}", String::from_utf8_lossy(&text), judge.c);
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
            let found =
                greedy_witness(&n, &text, &judge) || (1..=9).any(|depth| find_witness(&n, &mut text, depth, &judge));
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
