//! `format: "hostname"` and `format: "idn-hostname"`: whether a string is a host name, read one
//! code point at a time, admitting only prefixes that some valid name still continues.
//!
//! A closed label is checked whole ([`idna::check_label`]); what the labels owe each other (the
//! Bidi rule once any label is right-to-left, the 253-octet name) is carried as three facts. The
//! open label is live when some continuation makes it a valid last label, found by trying:
//! - for LDH and U-labels, suffixes of one code point from [`ASCII_REPRESENTATIVES`] and
//!   [`UNICODE_REPRESENTATIVES`]. Every obligation an open label can still meet is met by one
//!   such code point (a non-hyphen end; `l` after a MIDDLE DOT; a Greek letter after KERAIA; a
//!   Hiragana, Katakana or Han character for KATAKANA MIDDLE DOT; a right- or dual-joining
//!   character after a ZERO WIDTH NON-JOINER, left-to-right or right-to-left; a character that
//!   ends a label under the Bidi rule), which also ends the label well under the Bidi rule. Only
//!   the KATAKANA MIDDLE DOT's obligation (anywhere later) can be due beside another (the next
//!   code point), so with one in the label suffixes of two are tried;
//! - for A-labels (`xn--`), the Punycode of U-labels made from the label's letters with a
//!   non-ASCII representative inserted (the letters read as the basic code points still to be
//!   followed by the delimiter), then the label with one or two more Punycode digits.
//!
//! Near the length limits (a label within a few octets of 63, a name of 253) the search tries
//! these representatives only, and may refuse a code point that a longer search would keep; the
//! verdict on a whole string is always exact.
//!
//! A reader of decoded code points: it knows no schema, graph or matcher, which holds it.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::idna::{self, check_label, LabelFacts, Property, MAX_LABEL_OCTETS, MAX_NAME_OCTETS};
use super::string_decoder::StringDecoder;

const ACE_PREFIX: &str = "xn--";

/// ASCII code points that continue an open label (`l` for a MIDDLE DOT, a digit to end a
/// left-to-right or right-to-left label).
const ASCII_REPRESENTATIVES: [char; 3] = ['a', 'l', '0'];

/// Non-ASCII code points, one for each way a continuation can matter: a Latin letter, a Greek
/// one, Han, Hebrew (R), Arabic letters that join on both sides or on the right (AL), an N'Ko
/// letter (R, dual-joining), a Mongolian letter (L, dual-joining) and both kinds of Arabic digit
/// (AN, EN).
const UNICODE_REPRESENTATIVES: [char; 10] = ['é', 'β', '丈', 'א', 'ب', 'ا', 'ߊ', 'ᠠ', '\u{0660}', '\u{06F0}'];

/// The host names read so far, with the open label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostnameReader {
    /// `idn-hostname`: U-labels and the ideographic full stops are allowed.
    international: bool,
    /// Octets of the closed labels in ASCII form, with a dot after each.
    closed_octets: usize,
    /// Some closed label is right-to-left: the name is a Bidi domain name.
    closed_rtl: bool,
    /// Every closed label satisfies the Bidi rule.
    closed_bidi_ok: bool,
    /// The open label: `label_len` code points, held inline so that a reader clones without
    /// allocating (one per token-trie node while masks are computed).
    label: [char; MAX_LABEL_OCTETS],
    label_len: u8,
}

impl HostnameReader {
    pub(crate) fn new(international: bool) -> Self {
        HostnameReader {
            international,
            closed_octets: 0,
            closed_rtl: false,
            closed_bidi_ok: true,
            label: ['\0'; MAX_LABEL_OCTETS],
            label_len: 0,
        }
    }

    /// Whether `text` is a host name (`international`: an internationalized one).
    pub(crate) fn accepts(text: &str, international: bool) -> bool {
        let mut reader = HostnameReader::new(international);
        text.chars().all(|c| reader.feed(c)) && reader.is_accepting()
    }

    /// Reads one code point; false when no valid name continues this way (`self` is then
    /// unspecified).
    pub(crate) fn feed(&mut self, c: char) -> bool {
        if !self.is_separator(c) {
            // A code point no label holds (most, for a token of arbitrary text).
            let never = if self.international {
                c.is_ascii() && !(c.is_ascii_alphanumeric() || c == '-')
                    || !c.is_ascii() && idna::derived_property(c) == Property::Disallowed
            } else {
                !(c.is_ascii_alphanumeric() || c == '-')
            };
            if never {
                return false;
            }
            // Every code point takes at least one octet of the ASCII form.
            let len = usize::from(self.label_len);
            if len == MAX_LABEL_OCTETS || self.closed_octets + len + 1 > MAX_NAME_OCTETS {
                return false;
            }
            self.label[len] = c;
            self.label_len += 1;
            return self.label_completable();
        }
        let Some(facts) = check_label(self.label(), self.international) else { return false };
        self.closed_octets += facts.octets + 1;
        self.closed_rtl |= facts.rtl;
        self.closed_bidi_ok &= facts.bidi_ok;
        self.label_len = 0;
        // A one-letter label (left-to-right, so Bidi-clean) ends the name if anything does.
        (self.closed_bidi_ok || !self.closed_rtl) && self.closed_octets < MAX_NAME_OCTETS
    }

    /// Whether the text read is a valid host name.
    pub(crate) fn is_accepting(&self) -> bool {
        self.ends_name(self.label())
    }

    fn label(&self) -> &[char] {
        &self.label[..usize::from(self.label_len)]
    }

    /// Whether some code point that the escape or UTF-8 sequence `decoder` is in the middle of
    /// can still become continues the name (true with nothing pending).
    pub(crate) fn admits_pending(&self, decoder: &StringDecoder) -> bool {
        !decoder.has_pending()
            || decoder
                .pending_ranges()
                .into_iter()
                .any(|(lo, hi)| self.candidates(lo, hi).into_iter().any(|c| self.clone().feed(c)))
    }

    fn is_separator(&self, c: char) -> bool {
        // RFC 3490 section 3.1: the full stops IDNA reads as dots.
        c == '.' || (self.international && matches!(c, '\u{3002}' | '\u{FF0E}' | '\u{FF61}'))
    }

    /// Whether `label`, as the last label, makes the name valid.
    fn ends_name(&self, label: &[char]) -> bool {
        check_label(label, self.international).is_some_and(|facts: LabelFacts| {
            let bidi_domain = self.closed_rtl || facts.rtl;
            self.closed_octets + facts.octets <= MAX_NAME_OCTETS
                && (!bidi_domain || (self.closed_bidi_ok && facts.bidi_ok))
        })
    }

    fn label_completable(&self) -> bool {
        if let Some(live) = self.plain_label_completable() {
            return live;
        }
        if self.label().iter().all(char::is_ascii) {
            let lower: String = self.label().iter().map(char::to_ascii_lowercase).collect();
            if let Some(tail) = lower.strip_prefix(ACE_PREFIX) {
                return self.a_label_completable(tail);
            }
        }
        if self.ends_name(self.label()) {
            return true;
        }
        // Without allocating: this runs for most code points a mask tries inside a label.
        let unicode: &[char] = if self.international { &UNICODE_REPRESENTATIVES } else { &[] };
        let representatives = ASCII_REPRESENTATIVES.iter().chain(unicode).copied();
        // Every obligation but one is met by the next code point, which also ends the label
        // well under the Bidi rule; a KATAKANA MIDDLE DOT's (a Hiragana, Katakana or Han
        // character anywhere) may be due beside one of them.
        let two = self.label().contains(&'\u{30FB}');
        let mut candidate = self.label().to_vec();
        let ends = |candidate: &[char]| self.ends_name(candidate);
        representatives.clone().any(|c| {
            candidate.push(c);
            let found = ends(&candidate)
                || two
                    && representatives.clone().any(|d| {
                        candidate.push(d);
                        let found = ends(&candidate);
                        candidate.pop();
                        found
                    });
            candidate.pop();
            found
        })
    }

    /// The verdict for the common case without a search: an LDH label that is not an A-label,
    /// in a name without right-to-left labels so far. It ends the name unless it ends with a
    /// hyphen, which one more letter mends where there is room.
    fn plain_label_completable(&self) -> Option<bool> {
        let label = self.label();
        let ace =
            label.len() >= 4 && label[..4].iter().zip(ACE_PREFIX.chars()).all(|(c, p)| c.to_ascii_lowercase() == p);
        let plain = !self.closed_rtl && !ace && label.iter().all(|c| c.is_ascii_alphanumeric() || *c == '-');
        if !plain {
            return None;
        }
        let reserved = label.len() >= 4 && label[2] == '-' && label[3] == '-';
        let length = label.len() + usize::from(label.last() == Some(&'-'));
        Some(
            label[0] != '-'
                && !(self.international && reserved)
                && length <= MAX_LABEL_OCTETS
                && self.closed_octets + length <= MAX_NAME_OCTETS,
        )
    }

    /// The common case of [`Self::a_label_completable`] without a search: `tail` followed by
    /// `é` is a left-to-right U-label, whose Punycode is `tail`, the delimiter and at most three
    /// digits.
    fn a_label_shortcut(&self, tail: &str) -> bool {
        let room = MAX_LABEL_OCTETS.min(MAX_NAME_OCTETS - self.closed_octets);
        tail.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !self.closed_rtl
            && !tail.starts_with('-')
            && tail.get(2..4) != Some("--")
            && ACE_PREFIX.len() + tail.len() + 4 <= room
    }

    /// Whether the A-label `xn--{tail}` (lowercase) can still be completed.
    fn a_label_completable(&self, tail: &str) -> bool {
        let ends_with_tail = |tail: &str| self.ends_name(&format!("{ACE_PREFIX}{tail}").chars().collect::<Vec<_>>());
        if self.a_label_shortcut(tail) || ends_with_tail(tail) {
            return true;
        }
        let basic = tail.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        // Read as basic code points: insert a non-ASCII one among them (or among them and one
        // more letter) and encode.
        if basic {
            let mut bases: Vec<String> = ["", "a", "l"].iter().map(|extra| format!("{tail}{extra}")).collect();
            if let Some(before_delimiter) = tail.strip_suffix('-') {
                bases.push(before_delimiter.to_owned());
            }
            for base in &bases {
                let basic: Vec<char> = base.chars().collect();
                let positions = std::iter::once(basic.len()).chain(0..basic.len());
                for position in positions {
                    for &c in &UNICODE_REPRESENTATIVES {
                        let mut label = basic.clone();
                        label.insert(position, c);
                        let encoded = idna::punycode_encode(&label);
                        if encoded.as_deref().is_some_and(|e| e.starts_with(tail) && ends_with_tail(e)) {
                            return true;
                        }
                    }
                }
            }
        }
        // Read as Punycode digits: finish the number in progress, and perhaps one more.
        const DIGITS: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut candidate = tail.to_owned();
        DIGITS.iter().any(|&d| {
            candidate.push(char::from(d));
            let found = ends_with_tail(&candidate)
                || DIGITS.iter().any(|&e| {
                    candidate.push(char::from(e));
                    let found = ends_with_tail(&candidate);
                    candidate.pop();
                    found
                });
            candidate.pop();
            found
        })
    }

    /// Code points in `lo..=hi` that stand for all the others there: every ASCII one, the
    /// full stops, and the first of each [`Signature`] among the rest.
    fn candidates(&self, lo: u32, hi: u32) -> Vec<char> {
        let mut found: Vec<char> = (lo..=hi.min(0x7F)).filter_map(char::from_u32).collect();
        if !self.international {
            return found;
        }
        found.extend(['\u{3002}', '\u{FF0E}', '\u{FF61}'].into_iter().filter(|&c| (lo..=hi).contains(&(c as u32))));
        let runs = signature_runs();
        let start = runs.partition_point(|run| run.last < lo);
        let mut seen = HashSet::new();
        for run in runs[start..].iter().take_while(|run| run.first <= hi) {
            if seen.insert(run.signature) {
                found.extend(char::from_u32(run.first.max(lo)));
            }
        }
        found
    }
}

/// Everything about a non-ASCII code point that the label checks read, so that one code point
/// of each signature decides for all (up to the length of its Punycode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Signature {
    property: Property,
    bidi: icu_properties::props::BidiClass,
    joining: icu_properties::props::JoiningType,
    script: icu_properties::props::Script,
    virama: bool,
    mark: bool,
    /// The code point itself where a contextual rule names it.
    contextual: Option<char>,
}

struct SignatureRun {
    first: u32,
    last: u32,
    signature: u32,
}

/// The non-ASCII code points that may appear in a label, as runs of one signature each.
fn signature_runs() -> &'static [SignatureRun] {
    static RUNS: OnceLock<Vec<SignatureRun>> = OnceLock::new();
    RUNS.get_or_init(|| {
        use icu_properties::props::Script;
        let mut ids: std::collections::HashMap<Signature, u32> = std::collections::HashMap::new();
        let mut runs: Vec<SignatureRun> = Vec::new();
        for &(first, last, property) in super::idna_table::DERIVED_PROPERTY {
            for c in (first.max(0x80)..=last).filter_map(char::from_u32) {
                let script = idna::script(c);
                let signature = Signature {
                    property,
                    bidi: idna::bidi_class(c),
                    joining: idna::joining_type(c),
                    // The contextual rules ask only of these scripts.
                    script: match script {
                        Script::Greek | Script::Hebrew | Script::Hiragana | Script::Katakana | Script::Han => script,
                        _ => Script::Common,
                    },
                    virama: idna::is_virama(c),
                    mark: idna::is_mark(c),
                    contextual: (property != Property::Pvalid).then_some(c),
                };
                let next = ids.len() as u32;
                let id = *ids.entry(signature).or_insert(next);
                match runs.last_mut() {
                    Some(run) if run.signature == id && run.last + 1 == c as u32 => run.last = c as u32,
                    _ => runs.push(SignatureRun { first: c as u32, last: c as u32, signature: id }),
                }
            }
        }
        runs
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(text: &str, international: bool) -> Option<HostnameReader> {
        let mut reader = HostnameReader::new(international);
        text.chars().all(|c| reader.feed(c)).then_some(reader)
    }

    fn accepts(text: &str, international: bool) -> bool {
        reads(text, international).is_some_and(|r| r.is_accepting())
    }

    #[test]
    fn names_and_their_prefixes() {
        for name in ["www.example.com", "a--b.com", "xn--9n2bp8q.xn--9t4b11yi5a", "xn--ll-0ea"] {
            assert!(accepts(name, false), "{name}");
            for end in 1..name.len() {
                assert!(reads(&name[..end], false).is_some(), "prefix {:?} of {name}", &name[..end]);
            }
        }
        for name in ["실례.테스트", "l·l", "α͵β", "a。b", "・丈", "بي\u{200C}بي"] {
            assert!(accepts(name, true), "{name}");
        }
    }

    #[test]
    fn dead_prefixes_are_refused_at_once() {
        assert!(reads("-", false).is_none());
        assert!(reads("a..", false).is_none());
        assert!(reads("host_", false).is_none());
        assert!(reads("실", false).is_none(), "hostname is ASCII");
        assert!(reads("〮", true).is_none(), "U+302E is DISALLOWED");
        assert!(reads("ab--", true).is_none(), "reserved LDH label");
        assert!(reads("α͵S", true).is_none(), "KERAIA before a non-Greek letter");
        assert!(reads("ب٠۰", true).is_none(), "both kinds of Arabic digit");
        assert!(reads("0a.א", true).is_none(), "a digit-first label in a Bidi domain name");
        assert!(reads(&"a".repeat(64), false).is_none());
    }

    #[test]
    fn the_a_label_shortcut_only_admits_what_a_witness_completes() {
        let letters = ['a', 'z', '0', '9', '-'];
        let mut tails = vec![String::new()];
        let mut checked = 0;
        for length in 0..=56 {
            if length > 0 {
                // Every tail up to four characters; beyond, a few shapes near the limit.
                tails = if length <= 4 {
                    tails.iter().flat_map(|t| letters.iter().map(move |c| format!("{t}{c}"))).collect()
                } else {
                    tails.iter().take(25).map(|t| format!("{t}a")).collect()
                };
            }
            for closed_octets in [0, 190] {
                let reader = HostnameReader { closed_octets, ..HostnameReader::new(false) };
                for tail in tails.iter().filter(|t| reader.a_label_shortcut(t)) {
                    let with_e: Vec<char> = tail.chars().chain(['é']).collect();
                    let witness = idna::punycode_encode(&with_e).expect("encodes");
                    let label: Vec<char> = format!("xn--{witness}").chars().collect();
                    assert!(
                        witness.starts_with(tail.as_str()) && reader.ends_name(&label),
                        "{tail} at {closed_octets}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 600, "{checked}");
    }

    #[test]
    fn obligations_keep_prefixes_alive() {
        // Each needs a particular continuation, which exists.
        for prefix in ["l·", "α͵", "・", "・l·", "・α͵", "ب\u{200C}", "ᠠ\u{200C}", "a-", "xn--", "xn--X"] {
            let reader = reads(prefix, true).unwrap_or_else(|| panic!("{prefix:?} refused"));
            assert!(!reader.is_accepting(), "{prefix:?}");
        }
        assert!(!accepts("xn--X", false) && !accepts("l·", true));
    }

    /// Whether some string of at most two code points from `alphabet` completes `prefix`: an
    /// oracle by brute force, independent of the reader's search.
    fn completable_by_brute_force(prefix: &str, alphabet: &[char], international: bool) -> bool {
        std::iter::once(String::new())
            .chain(alphabet.iter().map(|c| c.to_string()))
            .chain(alphabet.iter().flat_map(|c| alphabet.iter().map(move |d| format!("{c}{d}"))))
            .any(|suffix| HostnameReader::accepts(&format!("{prefix}{suffix}"), international))
    }

    #[test]
    fn the_reader_keeps_exactly_the_prefixes_that_short_suffixes_complete() {
        // Letters of every kind the rules tell apart, beyond the reader's representatives.
        let alphabet: Vec<char> = "ablx0-._A。é丈βאبا٠۰ᠠߊक्·͵׳・\u{200C}\u{200D}\u{0300}ぁ".chars().collect();
        let mut seed: u64 = 0x5eed;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let mut compared = [0usize; 2];
        for international in [false, true] {
            for _ in 0..250 {
                let length = 1 + next(7);
                let text: String = (0..length).map(|_| alphabet[next(alphabet.len())]).collect();
                let mut reader = HostnameReader::new(international);
                let mut prefix = String::new();
                for c in text.chars() {
                    prefix.push(c);
                    let admitted = reader.feed(c);
                    let oracle = completable_by_brute_force(&prefix, &alphabet, international);
                    // A-labels take longer witnesses than two code points.
                    let a_label =
                        prefix.to_ascii_lowercase().rsplit(['.', '。']).next().is_some_and(|l| l.starts_with("xn--"));
                    assert!(admitted || !oracle, "{prefix:?} refused, yet a short suffix completes it");
                    assert!(!admitted || oracle || a_label, "{prefix:?} admitted, yet no short suffix completes it");
                    compared[usize::from(admitted)] += 1;
                    if !admitted {
                        break;
                    }
                }
            }
        }
        // Both verdicts occur often enough to mean something.
        assert!(compared[0] > 100 && compared[1] > 100, "{compared:?}");
    }
}
