//! IDNA2008 label validity: the checks the `hostname` and `idn-hostname` formats make of one
//! label (RFC 5891 section 5.4: hyphens, leading marks, the derived property of RFC 5892 with
//! its contextual rules, the A-label length) and of a name's labels together (the Bidi rule of
//! RFC 5893 and the 253-octet name).
//!
//! Choices where the specifications leave room, matching the official test suite:
//! - Labels are not required to be in NFC (the suite says so of `idn-email` domains).
//! - ASCII labels compare case-insensitively; their uppercase letters are read as lowercase.
//! - Under `hostname` (RFC 1123), an ASCII label with `--` in its third and fourth positions
//!   that does not begin with `xn--` is an ordinary label; under `idn-hostname` it is refused
//!   (RFC 5891 section 4.2.3.1).
//! - Lengths count the A-label form: 63 octets a label, 253 a name without the root.
//!
//! Pure label checks over code points: no schema, graph or matcher state.

use icu_properties::props::{BidiClass, CanonicalCombiningClass, GeneralCategory, JoiningType, Script};
use icu_properties::CodePointMapData;

pub(crate) use super::idna_table::Property;
use super::idna_table::DERIVED_PROPERTY;

/// Longest label in octets (RFC 1035 section 2.3.4).
pub(crate) const MAX_LABEL_OCTETS: usize = 63;
/// Longest name in octets, dots included and the root label left out.
pub(crate) const MAX_NAME_OCTETS: usize = 253;
/// The ACE prefix that marks an A-label.
const ACE_PREFIX: &str = "xn--";

pub(crate) fn derived_property(c: char) -> Property {
    let cp = c as u32;
    let i = DERIVED_PROPERTY.partition_point(|&(_, last, _)| last < cp);
    DERIVED_PROPERTY.get(i).filter(|&&(first, _, _)| first <= cp).map_or(Property::Disallowed, |&(_, _, p)| p)
}

pub(crate) fn bidi_class(c: char) -> BidiClass {
    CodePointMapData::<BidiClass>::new().get(c)
}

pub(crate) fn joining_type(c: char) -> JoiningType {
    CodePointMapData::<JoiningType>::new().get(c)
}

pub(crate) fn script(c: char) -> Script {
    CodePointMapData::<Script>::new().get(c)
}

pub(crate) fn is_virama(c: char) -> bool {
    CodePointMapData::<CanonicalCombiningClass>::new().get(c) == CanonicalCombiningClass::Virama
}

pub(crate) fn is_mark(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::NonspacingMark | GeneralCategory::SpacingMark | GeneralCategory::EnclosingMark
    )
}

/// What a valid label tells the checks across labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabelFacts {
    /// Length of the label's ASCII (A-label) form.
    pub(crate) octets: usize,
    /// An RTL label (RFC 5893 section 1.4): it holds an R, AL or AN character, which makes the
    /// name a Bidi domain name.
    pub(crate) rtl: bool,
    /// Whether the label satisfies the Bidi rule, which every label of a Bidi domain name must.
    pub(crate) bidi_ok: bool,
}

/// The Punycode (RFC 3492) of a label, without the ACE prefix.
pub(crate) fn punycode_encode(label: &[char]) -> Option<String> {
    ::idna::punycode::encode(label)
}

/// The facts of `label` if it is a valid label: an LDH label, an A-label (`xn--` and the
/// Punycode of a valid U-label), or, when `international`, a U-label.
pub(crate) fn check_label(label: &[char], international: bool) -> Option<LabelFacts> {
    if label.is_empty() || label.len() > MAX_LABEL_OCTETS * 4 {
        return None;
    }
    if !label.iter().all(char::is_ascii) {
        if !international {
            return None;
        }
        let encoded = punycode_encode(label)?;
        return u_label_facts(label, ACE_PREFIX.len() + encoded.len());
    }
    let lower: String = label.iter().map(char::to_ascii_lowercase).collect();
    if let Some(tail) = lower.strip_prefix(ACE_PREFIX) {
        return a_label_facts(tail);
    }
    let bytes = lower.as_bytes();
    let ldh = bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-');
    let reserved = bytes.len() >= 4 && &bytes[2..4] == b"--";
    let hyphens = bytes[0] != b'-' && bytes[bytes.len() - 1] != b'-' && !(international && reserved);
    (ldh && hyphens && bytes.len() <= MAX_LABEL_OCTETS).then(|| {
        let chars: Vec<char> = lower.chars().collect();
        LabelFacts { octets: bytes.len(), rtl: false, bidi_ok: satisfies_bidi_rule(&chars) }
    })
}

/// The facts of the A-label `xn--{tail}` (`tail` lowercase ASCII).
fn a_label_facts(tail: &str) -> Option<LabelFacts> {
    if ACE_PREFIX.len() + tail.len() > MAX_LABEL_OCTETS {
        return None;
    }
    let decoded = ::idna::punycode::decode(tail)?;
    // An A-label stands for a U-label: it decodes to something non-ASCII, and its Punycode is
    // the one encoding of it (no empty basic part before a delimiter, for one).
    if decoded.iter().all(char::is_ascii) || punycode_encode(&decoded).as_deref() != Some(tail) {
        return None;
    }
    u_label_facts(&decoded, ACE_PREFIX.len() + tail.len())
}

/// The facts of a U-label whose A-label takes `octets`, if it is valid.
fn u_label_facts(label: &[char], octets: usize) -> Option<LabelFacts> {
    let n = label.len();
    let hyphens_ok = label[0] != '-' && label[n - 1] != '-' && !(n >= 4 && label[2] == '-' && label[3] == '-');
    if octets > MAX_LABEL_OCTETS || !hyphens_ok || is_mark(label[0]) {
        return None;
    }
    let valid = (0..n).all(|i| match derived_property(label[i]) {
        Property::Pvalid => true,
        Property::ContextJ => joiner_allowed(label, i),
        Property::ContextO => other_context_allowed(label, i),
        Property::Disallowed => false,
    });
    valid.then(|| LabelFacts {
        octets,
        rtl: label.iter().any(|&c| {
            matches!(bidi_class(c), BidiClass::RightToLeft | BidiClass::ArabicLetter | BidiClass::ArabicNumber)
        }),
        bidi_ok: satisfies_bidi_rule(label),
    })
}

/// RFC 5892 appendix A.1 (ZERO WIDTH NON-JOINER) and A.2 (ZERO WIDTH JOINER).
fn joiner_allowed(label: &[char], i: usize) -> bool {
    let after_virama = i > 0 && is_virama(label[i - 1]);
    match label[i] {
        '\u{200D}' => after_virama,
        '\u{200C}' => {
            // Else `(Joining_Type:{L,D})(Joining_Type:T)*\u200C(Joining_Type:T)*(Joining_Type:{R,D})`.
            let joins = |c: &&char, sides: [JoiningType; 2]| sides.contains(&joining_type(**c));
            let mut before = label[..i].iter().rev().skip_while(|c| joining_type(**c) == JoiningType::Transparent);
            let mut after = label[i + 1..].iter().skip_while(|c| joining_type(**c) == JoiningType::Transparent);
            after_virama
                || (before.next().is_some_and(|c| joins(&c, [JoiningType::LeftJoining, JoiningType::DualJoining]))
                    && after.next().is_some_and(|c| joins(&c, [JoiningType::RightJoining, JoiningType::DualJoining])))
        }
        _ => false,
    }
}

/// RFC 5892 appendix A.3 to A.9.
fn other_context_allowed(label: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| label[j]);
    let after = label.get(i + 1).copied();
    match label[i] {
        // MIDDLE DOT: between two `l`s (Catalan).
        '\u{00B7}' => before == Some('l') && after == Some('l'),
        // GREEK LOWER NUMERAL SIGN (KERAIA): before a Greek character.
        '\u{0375}' => after.is_some_and(|c| script(c) == Script::Greek),
        // HEBREW PUNCTUATION GERESH and GERSHAYIM: after a Hebrew character.
        '\u{05F3}' | '\u{05F4}' => before.is_some_and(|c| script(c) == Script::Hebrew),
        // KATAKANA MIDDLE DOT: in a label with a Hiragana, Katakana or Han character.
        '\u{30FB}' => label.iter().any(|&c| matches!(script(c), Script::Hiragana | Script::Katakana | Script::Han)),
        // ARABIC-INDIC DIGITS and EXTENDED ARABIC-INDIC DIGITS: never both in one label.
        '\u{0660}'..='\u{0669}' => !label.iter().any(|c| ('\u{06F0}'..='\u{06F9}').contains(c)),
        '\u{06F0}'..='\u{06F9}' => !label.iter().any(|c| ('\u{0660}'..='\u{0669}').contains(c)),
        _ => false,
    }
}

/// The Bidi rule of RFC 5893 section 2, conditions 1 to 6.
fn satisfies_bidi_rule(label: &[char]) -> bool {
    use BidiClass as B;
    let classes: Vec<BidiClass> = label.iter().map(|&c| bidi_class(c)).collect();
    let Some(&first) = classes.first() else { return false };
    let last = classes.iter().rev().find(|&&c| c != B::NonspacingMark).copied();
    let neutral = [B::EuropeanNumber, B::EuropeanSeparator, B::CommonSeparator, B::EuropeanTerminator]
        .into_iter()
        .chain([B::OtherNeutral, B::BoundaryNeutral, B::NonspacingMark]);
    match first {
        B::RightToLeft | B::ArabicLetter => {
            let allowed: Vec<BidiClass> = neutral.chain([B::RightToLeft, B::ArabicLetter, B::ArabicNumber]).collect();
            classes.iter().all(|c| allowed.contains(c))
                && last.is_some_and(|c| {
                    matches!(c, B::RightToLeft | B::ArabicLetter | B::EuropeanNumber | B::ArabicNumber)
                })
                && !(classes.contains(&B::EuropeanNumber) && classes.contains(&B::ArabicNumber))
        }
        B::LeftToRight => {
            let allowed: Vec<BidiClass> = neutral.chain([B::LeftToRight]).collect();
            classes.iter().all(|c| allowed.contains(c))
                && last.is_some_and(|c| matches!(c, B::LeftToRight | B::EuropeanNumber))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(label: &str, international: bool) -> bool {
        check_label(&label.chars().collect::<Vec<_>>(), international).is_some()
    }

    #[test]
    fn derived_property_reads_the_table() {
        assert_eq!(derived_property('a'), Property::Pvalid);
        assert_eq!(derived_property('A'), Property::Disallowed);
        assert_eq!(derived_property('\u{200C}'), Property::ContextJ);
        assert_eq!(derived_property('\u{00B7}'), Property::ContextO);
        assert_eq!(derived_property('\u{302E}'), Property::Disallowed);
        assert_eq!(derived_property('실'), Property::Pvalid);
    }

    #[test]
    fn ldh_labels() {
        assert!(valid("Host-Name1", false));
        assert!(!valid("-a", false) && !valid("a-", false));
        assert!(!valid("host_name", true));
        assert!(valid("ab--cd", false), "RFC 1123 labels may hold -- anywhere");
        assert!(!valid("ab--cd", true), "reserved LDH labels are not IDNA labels");
        assert!(valid(&"a".repeat(63), false));
        assert!(!valid(&"a".repeat(64), false));
    }

    #[test]
    fn a_labels_decode_to_valid_u_labels() {
        assert!(valid("xn--9n2bp8q", false));
        assert!(valid("XN--9N2BP8Q", false));
        assert!(!valid("xn--X", false), "an unfinished Punycode digit");
        assert!(!valid("xn--example-", false), "decodes to ASCII only");
        assert!(!valid("xn---9uc", false), "not the canonical encoding");
        assert!(!valid("xn--07jt112bpxg", false), "U+302E is DISALLOWED");
    }

    #[test]
    fn contextual_rules() {
        assert!(valid("l·l", true));
        assert!(!valid("l·a", true));
        assert!(valid("α͵β", true));
        assert!(!valid("α͵", true));
        assert!(valid("א׳ב", true));
        assert!(valid("・丈", true));
        assert!(!valid("・", true));
        assert!(!valid("ب٠۰", true));
        assert!(valid("क्\u{200D}ष", true));
        assert!(!valid("क\u{200D}ष", true));
        assert!(valid("بي\u{200C}بي", true));
    }

    #[test]
    fn bidi_rule() {
        let facts = |s: &str| check_label(&s.chars().collect::<Vec<_>>(), true).unwrap();
        assert!(facts("א").rtl && facts("א").bidi_ok);
        assert!(!facts("0a").bidi_ok && !facts("0a").rtl);
        assert!(check_label(&"aא".chars().collect::<Vec<_>>(), true).is_some_and(|f| !f.bidi_ok && f.rtl));
    }
}
