//! The languages of JSON Schema `format` values, as DFAs over the UTF-8 bytes of the decoded
//! string (escapes are handled by the string layer that embeds them).
//!
//! Each format is written production by production after the ABNF of the RFC that defines it.
//! ABNF quoted strings are case-insensitive (RFC 5234, section 2.3), so literal letters such as
//! the `T` of a date-time or the `P` of a duration match either case; `%x` values do not.
//!
//! Formats this module leaves out, because their language is not regular or is regular only
//! through an automaton far too large to build:
//! - `regex`: ECMA-262 pattern syntax nests parentheses to any depth, which no finite
//!   automaton can check (a bounded depth would refuse valid patterns); the structured arm reads
//!   it with a stack (`structured::pattern_syntax`).
//! - `idn-hostname`, and `idn-email` (whose domain may hold U-labels): IDNA2008 validity depends
//!   on Unicode normalisation (NFC), the contextual rules of RFC 5892 and the Bidi rule of
//!   RFC 5893, which look across the whole label, and on the length of the Punycode form.
//!
//! `hostname` is a deliberate narrowing; see [`NARROWED_FORMATS`]. The schema compiler does not
//! use it: it reads `hostname` and `idn-hostname` exactly, A-labels included, on the structured
//! arm.

use std::fmt;
use std::sync::{Arc, OnceLock};

use regex_syntax::utf8::Utf8Sequences;

use super::dfa::ByteDfa;
use super::json_escapes::json_strings_decoding_to;
use super::re::{CompileLimit, Re};

/// Every format [`format_language`] knows.
pub const SUPPORTED_FORMATS: &[&str] = &[
    "date",
    "time",
    "date-time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
];

/// Supported formats whose automaton accepts a strict subset of the specified language: every
/// string it accepts is valid, but some valid strings are refused.
///
/// - `hostname`: drafts 7 and later add to RFC 1123 that a label starting with the ACE prefix
///   `xn--` must be a valid IDNA A-label (its Punycode must decode, and the result obey
///   IDNA2008). That check is not practically regular, so such labels are refused altogether.
pub const NARROWED_FORMATS: &[&str] = &["hostname"];

/// Why a format's automaton could not be built within the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The format's name, as in the schema.
    pub format: String,
    /// The limit its automaton ran into.
    pub limit: CompileLimit,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            CompileLimit::DfaStates(n) => {
                write!(f, "the `{}` format needs more than {n} automaton states", self.format)
            }
            CompileLimit::NfaStates(n) => {
                write!(f, "the `{}` format expands to more than {n} automaton states", self.format)
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Bounds for building a format's automaton. A format's language is a constant of the program,
/// not of the schema, so each is built once under bounds that hold the largest (`hostname`,
/// whose length limit multiplies its states) and shared by every later call.
const BUILD_DFA_STATES: usize = 200_000;
const BUILD_NFA_STATES: usize = 2_000_000;

/// Whether [`format_language`] knows `name`.
pub fn is_known_format(name: &str) -> bool {
    SUPPORTED_FORMATS.contains(&name)
}

/// The exact language of a `format` value as a DFA over the UTF-8 bytes of the *decoded* string
/// (escapes are handled by another layer); for [`NARROWED_FORMATS`], the documented subset.
/// `None` for formats this module does not know.
///
/// `max_states` bounds the returned automaton's states (the dead state included), so the answer
/// depends only on the format and the limit.
pub fn format_language(name: &str, max_states: usize) -> Option<Result<ByteDfa, FormatError>> {
    static BUILT: [OnceLock<Result<ByteDfa, CompileLimit>>; SUPPORTED_FORMATS.len()] =
        [const { OnceLock::new() }; SUPPORTED_FORMATS.len()];
    let index = SUPPORTED_FORMATS.iter().position(|&format| format == name)?;
    let error = |limit| FormatError { format: name.to_owned(), limit };
    let table = || ByteDfa::read_embedded_table(FORMAT_TABLES[index]).map_err(|_| CompileLimit::DfaStates(0));
    Some(match BUILT[index].get_or_init(|| table().or_else(|_| format_language_from_grammar(name))) {
        Ok(dfa) if dfa.state_count() <= max_states => Ok(dfa.clone()),
        Ok(_) => Err(error(CompileLimit::DfaStates(max_states))),
        Err(limit) => Err(error(*limit)),
    })
}

/// The JSON texts of a format's strings: every JSON string literal, quotes included and in every
/// spelling JSON allows, whose decoded value [`format_language`] accepts (what a schema's
/// `format` admits). Built once per process and kept: `time` and `date-time` come from embedded
/// compressed tables (their 66k states, from leap seconds tying the time to its offset, take
/// about 110 ms to build and a few milliseconds to inflate), the others from their decoded
/// automaton in at most a few milliseconds. `None` for formats this module does not know.
pub fn format_text_language(name: &str, max_states: usize) -> Option<Result<Arc<ByteDfa>, FormatError>> {
    static BUILT: [OnceLock<Result<Arc<ByteDfa>, CompileLimit>>; SUPPORTED_FORMATS.len()] =
        [const { OnceLock::new() }; SUPPORTED_FORMATS.len()];
    let index = SUPPORTED_FORMATS.iter().position(|&format| format == name)?;
    let error = |limit| FormatError { format: name.to_owned(), limit };
    let built = BUILT[index].get_or_init(|| {
        let embedded = TEXT_TABLES.iter().find(|(format, _)| *format == name).and_then(|(_, compressed)| {
            let table = miniz_oxide::inflate::decompress_to_vec_with_limit(compressed, MAX_TEXT_TABLE_BYTES).ok()?;
            ByteDfa::read_embedded_table(&table).ok()
        });
        match embedded {
            Some(dfa) => Ok(Arc::new(dfa)),
            None => format_text_language_from_grammar(name).map(Arc::new),
        }
    });
    Some(match built {
        Ok(dfa) if dfa.state_count() <= max_states => Ok(Arc::clone(dfa)),
        Ok(_) => Err(error(CompileLimit::DfaStates(max_states))),
        Err(limit) => Err(error(*limit)),
    })
}

/// What [`format_text_language`] holds, built from the format's grammar (what its embedded
/// tables hold).
pub fn format_text_language_from_grammar(name: &str) -> Result<ByteDfa, CompileLimit> {
    let decoded = match format_language(name, BUILD_DFA_STATES) {
        Some(Ok(decoded)) => decoded,
        Some(Err(e)) => return Err(e.limit),
        None => return Ok(ByteDfa::empty()),
    };
    json_strings_decoding_to(&decoded, BUILD_DFA_STATES).map_err(|e| CompileLimit::DfaStates(e.limit))
}

/// The formats whose JSON texts are embedded, and their tables compressed with DEFLATE (6 MB
/// each uncompressed), generated with the other tables by the `write_format_tables` example.
pub const TEXT_TABLE_FORMATS: &[&str] = &["time", "date-time"];
static TEXT_TABLES: [(&str, &[u8]); TEXT_TABLE_FORMATS.len()] = [
    ("time", include_bytes!("format_tables/time.texts.table.deflate")),
    ("date-time", include_bytes!("format_tables/date-time.texts.table.deflate")),
];
/// Bounds inflating an embedded text table (the largest is below 7 MB).
const MAX_TEXT_TABLE_BYTES: usize = 32 << 20;

/// Each supported format's automaton as a table (in [`SUPPORTED_FORMATS`] order), generated by
/// `cargo run -p maskforge-core --example write_format_tables` from the grammars below: reading
/// one costs a copy and a check, where building the largest (`date-time`, `iri-reference`)
/// costs a few hundred milliseconds. A test keeps them equal to the grammars' automata.
static FORMAT_TABLES: [&[u8]; SUPPORTED_FORMATS.len()] = [
    include_bytes!("format_tables/date.table"),
    include_bytes!("format_tables/time.table"),
    include_bytes!("format_tables/date-time.table"),
    include_bytes!("format_tables/duration.table"),
    include_bytes!("format_tables/email.table"),
    include_bytes!("format_tables/hostname.table"),
    include_bytes!("format_tables/ipv4.table"),
    include_bytes!("format_tables/ipv6.table"),
    include_bytes!("format_tables/uuid.table"),
    include_bytes!("format_tables/uri.table"),
    include_bytes!("format_tables/uri-reference.table"),
    include_bytes!("format_tables/iri.table"),
    include_bytes!("format_tables/iri-reference.table"),
    include_bytes!("format_tables/uri-template.table"),
    include_bytes!("format_tables/json-pointer.table"),
    include_bytes!("format_tables/relative-json-pointer.table"),
];

/// A format's automaton built from its grammar (what the tables hold); `None`-like
/// [`CompileLimit`] errors for names this module does not know never occur for supported ones.
pub fn format_language_from_grammar(name: &str) -> Result<ByteDfa, CompileLimit> {
    let grammar = match name {
        "date" => full_date(),
        "time" => full_time(),
        "date-time" => date_time(),
        "duration" => duration(),
        "email" => mailbox(),
        "hostname" => return hostname(),
        "ipv4" => ipv4_dotted_quad(),
        "ipv6" => ipv6_address(),
        "uuid" => uuid(),
        "uri" => UriGrammar::new(false).absolute,
        "uri-reference" => UriGrammar::new(false).reference,
        "iri" => UriGrammar::new(true).absolute,
        "iri-reference" => UriGrammar::new(true).reference,
        "uri-template" => uri_template(),
        "json-pointer" => json_pointer(),
        "relative-json-pointer" => relative_json_pointer(true),
        // Unreachable: every supported name has an arm (a test checks each language is nonempty).
        _ => Re::Nothing,
    };
    compile(&grammar)
}

// ---------------------------------------------------------------------------------------------
// Dates and times (RFC 3339)

/// RFC 3339 section 5.6 `full-date = date-fullyear "-" date-month "-" date-mday`, with the day
/// ranges of section 5.7: February 29 exists only in leap years (Appendix C: divisible by 4,
/// except centuries not divisible by 400), for every 4-digit year of the proleptic calendar.
fn full_date() -> Re {
    let year = Re::repeat(digit(), 4, Some(4));
    let months = |list: &[&str]| Re::alt(list.iter().map(|m| lit(m)).collect());
    let month_day = Re::alt(vec![
        seq([months(&["01", "03", "05", "07", "08", "10", "12"]), lit("-"), numerals(1, 31, 2)]),
        seq([months(&["04", "06", "09", "11"]), lit("-"), numerals(1, 30, 2)]),
        seq([lit("02-"), numerals(1, 28, 2)]),
    ]);
    // Divisibility by 4 depends on the last two digits only; a century (`..00`) is divisible by
    // 400 when its first two digits are divisible by 4.
    let multiples_of_4 = |from: u32| Re::alt((from..100).step_by(4).map(|n| lit(&format!("{n:02}"))).collect());
    let leap_year = Re::alt(vec![seq([digit(), digit(), multiples_of_4(4)]), seq([multiples_of_4(0), lit("00")])]);
    Re::alt(vec![seq([year, lit("-"), month_day]), seq([leap_year, lit("-02-29")])])
}

/// RFC 3339 section 5.6 `full-time = partial-time time-offset`, where `time-offset` is `"Z"` or
/// `("+" / "-") time-hour ":" time-minute`.
///
/// `time-second` 60 is a leap second (section 5.7), which exists only as the last second of a
/// UTC day: the local time minus the offset must be 23:59. `Z`, `+00:00` and `-00:00` (the
/// unknown local offset of section 4.3) all denote UTC.
fn full_time() -> Re {
    let fraction = Re::optional(seq([lit("."), Re::repeat(digit(), 1, None)]));
    let offset = Re::alt(vec![ci("Z"), seq([one_of("+-"), numerals(0, 23, 2), lit(":"), numerals(0, 59, 2)])]);
    let ordinary =
        seq([numerals(0, 23, 2), lit(":"), numerals(0, 59, 2), lit(":"), numerals(0, 59, 2), fraction.clone(), offset]);
    const DAY: i32 = 24 * 60;
    const LAST_MINUTE: i32 = DAY - 1;
    let clock = |minutes: i32| format!("{:02}:{:02}", minutes / 60, minutes % 60);
    // One alternative per local minute: exactly one eastern and one western offset bring it
    // to 23:59 UTC (local = UTC + east = UTC - west).
    let leap_second = |local: i32| {
        let east = (local - LAST_MINUTE).rem_euclid(DAY);
        let west = (LAST_MINUTE - local).rem_euclid(DAY);
        let mut offsets = vec![lit(&format!("+{}", clock(east))), lit(&format!("-{}", clock(west)))];
        if local == LAST_MINUTE {
            offsets.push(ci("Z"));
        }
        seq([lit(&format!("{:02}:60", local % 60)), fraction.clone(), Re::alt(offsets)])
    };
    // Branch on the hour first: a flat list of 1440 alternatives determinises far more slowly.
    let leap_seconds = Re::alt(
        (0..24)
            .map(|hour| {
                seq([
                    lit(&format!("{hour:02}:")),
                    Re::alt((0..60).map(|minute| leap_second(hour * 60 + minute)).collect()),
                ])
            })
            .collect(),
    );
    Re::alt(vec![ordinary, leap_seconds])
}

/// RFC 3339 section 5.6 `date-time = full-date "T" full-time`.
fn date_time() -> Re {
    seq([full_date(), ci("T"), full_time()])
}

/// RFC 3339 Appendix A `duration = "P" (dur-date / dur-time / dur-week)`: units in decreasing
/// order, each a run of digits (no fractions, no sign); a unit may be skipped only at the end
/// (`P1Y2D` and `PT1H2S` are not durations); weeks stand alone.
fn duration() -> Re {
    let unit = |designator: &str| seq([Re::repeat(digit(), 1, None), ci(designator)]);
    let second = unit("S");
    let minute = seq([unit("M"), Re::optional(second.clone())]);
    let hour = seq([unit("H"), Re::optional(minute.clone())]);
    let time = seq([ci("T"), Re::alt(vec![hour, minute, second])]);
    let day = unit("D");
    let month = seq([unit("M"), Re::optional(day.clone())]);
    let year = seq([unit("Y"), Re::optional(month.clone())]);
    let date = seq([Re::alt(vec![day, month, year]), Re::optional(time.clone())]);
    seq([ci("P"), Re::alt(vec![date, time, unit("W")])])
}

// ---------------------------------------------------------------------------------------------
// Internet addresses

/// RFC 5321 section 4.1.2 `Mailbox = Local-part "@" ( Domain / address-literal )`.
///
/// The local part is a `Dot-string` of RFC 5322 `atext` atoms or a `Quoted-string`; the domain
/// is dot-separated `sub-domain`s (`Let-dig [Ldh-str]`). The address literals are those of
/// section 4.1.3: IPv4 and `IPv6:`. The `General-address-literal` form needs a tag registered
/// with IANA, and the only registered tag is `IPv6` itself, so it adds nothing. The size limits
/// of section 4.5.3.1 are minimums an implementation must support, not part of the syntax.
fn mailbox() -> Re {
    let atext = set(&[ALPHA, DIGIT], "!#$%&'*+-/=?^_`{|}~");
    let dot_string = Re::separated(Re::repeat(atext, 1, None), lit("."), 1, None);
    let qtext_smtp = class(&[(32, 33), (35, 91), (93, 126)]);
    let quoted_pair_smtp = seq([lit("\\"), class(&[(32, 126)])]);
    let quoted_string = seq([lit("\""), Re::repeat(Re::alt(vec![qtext_smtp, quoted_pair_smtp]), 0, None), lit("\"")]);
    let local_part = Re::alt(vec![dot_string, quoted_string]);

    let let_dig = set(&[ALPHA, DIGIT], "");
    let ldh_str = seq([Re::repeat(set(&[ALPHA, DIGIT], "-"), 0, None), let_dig.clone()]);
    let sub_domain = seq([let_dig, Re::optional(ldh_str)]);
    let domain = Re::separated(sub_domain, lit("."), 1, None);

    // `Snum = 1*3DIGIT`, "representing a decimal integer value in the range 0 through 255".
    let snum = padded_byte_value();
    let ipv4_literal = Re::separated(snum, lit("."), 4, Some(4));
    let ipv6_literal = seq([ci("IPv6:"), rfc5321_ipv6(ipv4_literal.clone())]);
    let address_literal = seq([lit("["), Re::alt(vec![ipv4_literal, ipv6_literal]), lit("]")]);

    seq([local_part, lit("@"), Re::alt(vec![domain, address_literal])])
}

/// RFC 5321 section 4.1.3 `IPv6-addr = IPv6-full / IPv6-comp / IPv6v4-full / IPv6v4-comp`.
/// Unlike RFC 4291, "::" there stands for at least two zero groups, so at most six groups (four
/// before an IPv4 tail) may surround it.
fn rfc5321_ipv6(ipv4: Re) -> Re {
    let groups = |n: u32| match n {
        0 => Re::Empty,
        n => Re::separated(Re::repeat(hexdig(), 1, Some(4)), lit(":"), n, Some(n)),
    };
    let mut forms = vec![groups(8), seq([groups(6), lit(":"), ipv4.clone()])];
    for before in 0..=6 {
        for after in 0..=6 - before {
            forms.push(seq([groups(before), lit("::"), groups(after)]));
        }
    }
    for before in 0..=4 {
        for after in 0..=4 - before {
            let tail = if after == 0 { Re::Empty } else { seq([groups(after), lit(":")]) };
            forms.push(seq([groups(before), lit("::"), tail, ipv4.clone()]));
        }
    }
    Re::alt(forms)
}

/// RFC 1123 section 2.1 host names: dot-separated labels of letters, digits and hyphens that
/// start and end with a letter or digit, 1 to 63 characters each (RFC 1034 section 3.1), and
/// at most 253 characters in all (255 octets in the wire form, which adds a length octet per
/// label and the root label).
///
/// Labels starting with the ACE prefix `xn--` (any case) are refused: they are valid only as
/// IDNA A-labels (RFC 5891 section 4.4), which no practical automaton can check (see
/// [`NARROWED_FORMATS`]).
fn hostname() -> Result<ByteDfa, CompileLimit> {
    let let_dig = set(&[ALPHA, DIGIT], "");
    let ldh = set(&[ALPHA, DIGIT], "-");
    let label = seq([let_dig.clone(), Re::optional(seq([Re::repeat(ldh, 0, Some(61)), let_dig]))]);
    let ace_prefixed = seq([ci("xn--"), Re::repeat(any_byte(), 0, None)]);
    let label = compile(&label)?.difference(&compile(&ace_prefixed)?, BUILD_DFA_STATES)?;
    let name = Re::separated(Re::Dfa(Arc::new(label)), lit("."), 1, None);
    let length = Re::repeat(any_byte(), 1, Some(253));
    Ok(compile(&name)?.intersect(&compile(&length)?, BUILD_DFA_STATES)?)
}

/// RFC 2673 section 3.2 `dotted-quad = decbyte "." decbyte "." decbyte "." decbyte`, where a
/// `decbyte` is one to three digits worth 0 to 255 (so leading zeros are allowed).
fn ipv4_dotted_quad() -> Re {
    let decbyte = padded_byte_value();
    Re::separated(decbyte, lit("."), 4, Some(4))
}

/// RFC 3986 section 3.2.2 `IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet`,
/// where `dec-octet` is 0 to 255 without leading zeros. This is the embedded form of IPv6
/// addresses and URI hosts.
fn ipv4_address() -> Re {
    Re::separated(numerals(0, 255, 0), lit("."), 4, Some(4))
}

/// RFC 4291 section 2.2 text forms, as RFC 3986 section 3.2.2 writes them in ABNF
/// (`IPv6address`): eight groups of one to four hex digits, the last two of which may be an
/// IPv4 address, and one "::" standing for one or more zero groups. No zone, no prefix length.
fn ipv6_address() -> Re {
    let h16 = Re::repeat(hexdig(), 1, Some(4));
    let ls32 = Re::alt(vec![seq([h16.clone(), lit(":"), h16.clone()]), ipv4_address()]);
    // `[ *(n-1)( h16 ":" ) h16 ]`: none, or one to n groups.
    let head = |n: u32| Re::optional(Re::separated(h16.clone(), lit(":"), 1, Some(n)));
    // `n( h16 ":" )`
    let tail = |n: u32| Re::repeat(seq([h16.clone(), lit(":")]), n, Some(n));
    Re::alt(vec![
        seq([tail(6), ls32.clone()]),
        seq([lit("::"), tail(5), ls32.clone()]),
        seq([head(1), lit("::"), tail(4), ls32.clone()]),
        seq([head(2), lit("::"), tail(3), ls32.clone()]),
        seq([head(3), lit("::"), tail(2), ls32.clone()]),
        seq([head(4), lit("::"), tail(1), ls32.clone()]),
        seq([head(5), lit("::"), ls32]),
        seq([head(6), lit("::"), h16.clone()]),
        seq([head(7), lit("::")]),
    ])
}

/// RFC 4122 section 3 `UUID = time-low "-" time-mid "-" time-high-and-version "-"
/// clock-seq-and-reserved clock-seq-low "-" node`: 8-4-4-4-12 hex digits, case-insensitive on
/// input. Any version and variant nibble is accepted, as the grammar does.
fn uuid() -> Re {
    let hex = |n: u32| Re::repeat(hexdig(), n, Some(n));
    seq([hex(8), lit("-"), hex(4), lit("-"), hex(4), lit("-"), hex(4), lit("-"), hex(12)])
}

// ---------------------------------------------------------------------------------------------
// Resource identifiers

/// The top-level productions of RFC 3986 Appendix A (`URI`, `URI-reference`) or, for IRIs,
/// RFC 3987 section 2.2 (`IRI`, `IRI-reference`), which adds `ucschar` wherever `unreserved` is
/// allowed and `iprivate` to the query.
struct UriGrammar {
    absolute: Re,
    reference: Re,
}

impl UriGrammar {
    fn new(international: bool) -> UriGrammar {
        let (ucschar, iprivate) = if international { (ucschar(), iprivate()) } else { (Re::Nothing, Re::Nothing) };
        let unreserved = Re::alt(vec![set(&[ALPHA, DIGIT], "-._~"), ucschar]);
        let pct_encoded = pct_encoded();
        let sub_delims = one_of("!$&'()*+,;=");
        let pchar = Re::alt(vec![unreserved.clone(), pct_encoded.clone(), sub_delims.clone(), one_of(":@")]);

        let segment = star(pchar.clone());
        let segment_nz = Re::repeat(pchar.clone(), 1, None);
        // The first segment of a relative path may not hold a colon, or it would read as a scheme.
        let segment_nz_nc =
            Re::repeat(Re::alt(vec![unreserved.clone(), pct_encoded.clone(), sub_delims.clone(), lit("@")]), 1, None);
        let path_abempty = star(seq([lit("/"), segment]));
        let path_absolute = seq([lit("/"), Re::optional(seq([segment_nz.clone(), path_abempty.clone()]))]);
        let path_rootless = seq([segment_nz, path_abempty.clone()]);
        let path_noscheme = seq([segment_nz_nc, path_abempty.clone()]);

        // IP literals and ports are ASCII in IRIs too (RFC 3987 reuses them from RFC 3986).
        let ipv_future = seq([
            ci("v"),
            Re::repeat(hexdig(), 1, None),
            lit("."),
            Re::repeat(set(&[ALPHA, DIGIT], "-._~!$&'()*+,;=:"), 1, None),
        ]);
        let ip_literal = seq([lit("["), Re::alt(vec![ipv6_address(), ipv_future]), lit("]")]);
        let reg_name = star(Re::alt(vec![unreserved.clone(), pct_encoded.clone(), sub_delims.clone()]));
        let host = Re::alt(vec![ip_literal, ipv4_address(), reg_name]);
        let userinfo = star(Re::alt(vec![unreserved, pct_encoded, sub_delims, lit(":")]));
        let port = star(digit());
        let authority = seq([Re::optional(seq([userinfo, lit("@")])), host, Re::optional(seq([lit(":"), port]))]);

        let query = star(Re::alt(vec![pchar.clone(), one_of("/?"), iprivate]));
        let fragment = star(Re::alt(vec![pchar, one_of("/?")]));
        let suffix = seq([Re::optional(seq([lit("?"), query])), Re::optional(seq([lit("#"), fragment]))]);

        let network_path = seq([lit("//"), authority, path_abempty]);
        let hier_part = Re::alt(vec![network_path.clone(), path_absolute.clone(), path_rootless, Re::Empty]);
        let relative_part = Re::alt(vec![network_path, path_absolute, path_noscheme, Re::Empty]);
        let scheme = seq([set(&[ALPHA], ""), star(set(&[ALPHA, DIGIT], "+-."))]);

        let absolute = seq([scheme, lit(":"), hier_part, suffix.clone()]);
        let relative = seq([relative_part, suffix]);
        UriGrammar { reference: Re::alt(vec![absolute.clone(), relative]), absolute }
    }
}

/// RFC 6570 section 2 `URI-Template = *( literals / expression )`, with the literal ranges as
/// corrected by verified erratum 6937 (`%x26-3B`, which restores the apostrophe that the
/// published text excluded by mistake). Reserved operators (`=,!@|`) are part of the grammar.
fn uri_template() -> Re {
    let literals = Re::alt(vec![
        class(&[
            (0x21, 0x21),
            (0x23, 0x24),
            (0x26, 0x3B),
            (0x3D, 0x3D),
            (0x3F, 0x5B),
            (0x5D, 0x5D),
            (0x5F, 0x5F),
            (0x61, 0x7A),
            (0x7E, 0x7E),
        ]),
        ucschar(),
        iprivate(),
        pct_encoded(),
    ]);
    let operator = one_of("+#./;?&=,!@|");
    let varchar = Re::alt(vec![set(&[ALPHA, DIGIT], "_"), pct_encoded()]);
    let varname = seq([varchar.clone(), star(seq([Re::optional(lit(".")), varchar]))]);
    // `max-length = %x31-39 0*3DIGIT`: a positive integer below 10000.
    let max_length = seq([class(&[(b'1', b'9')]), Re::repeat(digit(), 0, Some(3))]);
    let modifier = Re::alt(vec![seq([lit(":"), max_length]), lit("*")]);
    let varspec = seq([varname, Re::optional(modifier)]);
    let expression = seq([lit("{"), Re::optional(operator), Re::separated(varspec, lit(","), 1, None), lit("}")]);
    star(Re::alt(vec![literals, expression]))
}

// ---------------------------------------------------------------------------------------------
// JSON pointers

/// RFC 6901 section 3 `json-pointer = *( "/" reference-token )`, where a reference token is any
/// characters but `/` and `~`, and `~` only as the escapes `~0` and `~1`.
fn json_pointer() -> Re {
    let unescaped = utf8(&[('\0', '\u{2E}'), ('\u{30}', '\u{7D}'), ('\u{7F}', '\u{10FFFF}')]);
    let escaped = seq([lit("~"), one_of("01")]);
    star(seq([lit("/"), star(Re::alt(vec![unescaped, escaped]))]))
}

/// Relative JSON Pointer: `non-negative-integer [index-manipulation] json-pointer` or
/// `non-negative-integer "#"`, where `non-negative-integer` has no leading zero.
///
/// `index_manipulation` (`("+" / "-") non-negative-integer` after the integer) is part of
/// draft-bhutton-relative-json-pointer-00, the version draft 2020-12 cites and the one
/// [`format_language`] uses; drafts 7 and 2019-09 cite draft-handrews-relative-json-pointer-01
/// and -02, which do not have it.
pub fn relative_json_pointer(index_manipulation: bool) -> Re {
    let non_negative_integer = Re::alt(vec![lit("0"), seq([class(&[(b'1', b'9')]), star(digit())])]);
    let manipulation =
        if index_manipulation { Re::optional(seq([one_of("+-"), non_negative_integer.clone()])) } else { Re::Empty };
    Re::alt(vec![
        seq([non_negative_integer.clone(), manipulation, json_pointer()]),
        seq([non_negative_integer, lit("#")]),
    ])
}

// ---------------------------------------------------------------------------------------------
// Building blocks

const ALPHA: &[(u8, u8)] = &[(b'A', b'Z'), (b'a', b'z')];
const DIGIT: &[(u8, u8)] = &[(b'0', b'9')];
const HEXDIG: &[(u8, u8)] = &[(b'0', b'9'), (b'A', b'F'), (b'a', b'f')];

fn compile(re: &Re) -> Result<ByteDfa, CompileLimit> {
    re.compile(BUILD_DFA_STATES, BUILD_NFA_STATES)
}

fn seq<const N: usize>(items: [Re; N]) -> Re {
    Re::concat(items.into())
}

fn star(item: Re) -> Re {
    Re::repeat(item, 0, None)
}

fn lit(text: &str) -> Re {
    Re::literal(text.as_bytes())
}

/// An ABNF quoted string: letters match in either case (RFC 5234 section 2.3).
fn ci(text: &str) -> Re {
    let byte = |b: u8| {
        class(&[(b.to_ascii_uppercase(), b.to_ascii_uppercase()), (b.to_ascii_lowercase(), b.to_ascii_lowercase())])
    };
    Re::concat(text.bytes().map(byte).collect())
}

/// One byte out of inclusive ranges, which may overlap and come in any order.
fn class(ranges: &[(u8, u8)]) -> Re {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(u8, u8)> = Vec::with_capacity(sorted.len());
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if lo as u16 <= last.1 as u16 + 1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    Re::Bytes(merged)
}

/// One byte out of the named ranges or the ASCII characters of `extra`.
fn set(ranges: &[&[(u8, u8)]], extra: &str) -> Re {
    let mut all: Vec<(u8, u8)> = ranges.iter().flat_map(|r| r.iter().copied()).collect();
    all.extend(extra.bytes().map(|b| (b, b)));
    class(&all)
}

fn one_of(chars: &str) -> Re {
    set(&[], chars)
}

fn digit() -> Re {
    set(&[DIGIT], "")
}

fn hexdig() -> Re {
    set(&[HEXDIG], "")
}

fn any_byte() -> Re {
    Re::byte_range(0, 255)
}

/// RFC 3986 section 2.1 `pct-encoded = "%" HEXDIG HEXDIG`.
fn pct_encoded() -> Re {
    seq([lit("%"), hexdig(), hexdig()])
}

/// One to three decimal digits worth 0 to 255, leading zeros allowed.
fn padded_byte_value() -> Re {
    Re::alt(
        (0..=255u32).flat_map(|n| (n.to_string().len()..=3).map(move |width| lit(&format!("{n:0width$}")))).collect(),
    )
}

/// The decimal numerals `lo..=hi`, zero-padded to `width` digits (no padding when 0).
fn numerals(lo: u32, hi: u32, width: usize) -> Re {
    Re::alt((lo..=hi).map(|n| lit(&format!("{n:0width$}"))).collect())
}

/// The UTF-8 encodings of the code points in the given ranges (surrogates excluded).
fn utf8(ranges: &[(char, char)]) -> Re {
    let mut encodings = Vec::new();
    for &(lo, hi) in ranges {
        for sequence in Utf8Sequences::new(lo, hi) {
            encodings.push(Re::concat(sequence.as_slice().iter().map(|r| Re::byte_range(r.start, r.end)).collect()));
        }
    }
    Re::alt(encodings)
}

/// RFC 3987 section 2.2 `ucschar`.
fn ucschar() -> Re {
    utf8(&[
        ('\u{A0}', '\u{D7FF}'),
        ('\u{F900}', '\u{FDCF}'),
        ('\u{FDF0}', '\u{FFEF}'),
        ('\u{10000}', '\u{1FFFD}'),
        ('\u{20000}', '\u{2FFFD}'),
        ('\u{30000}', '\u{3FFFD}'),
        ('\u{40000}', '\u{4FFFD}'),
        ('\u{50000}', '\u{5FFFD}'),
        ('\u{60000}', '\u{6FFFD}'),
        ('\u{70000}', '\u{7FFFD}'),
        ('\u{80000}', '\u{8FFFD}'),
        ('\u{90000}', '\u{9FFFD}'),
        ('\u{A0000}', '\u{AFFFD}'),
        ('\u{B0000}', '\u{BFFFD}'),
        ('\u{C0000}', '\u{CFFFD}'),
        ('\u{D0000}', '\u{DFFFD}'),
        ('\u{E1000}', '\u{EFFFD}'),
    ])
}

/// RFC 3987 section 2.2 `iprivate`.
fn iprivate() -> Re {
    utf8(&[('\u{E000}', '\u{F8FF}'), ('\u{F0000}', '\u{FFFFD}'), ('\u{100000}', '\u{10FFFD}')])
}

#[cfg(test)]
mod tests {

    /// The embedded tables are the grammars' automata: rerun the `write_format_tables` example
    /// after changing a grammar.
    #[test]
    fn embedded_tables_equal_the_grammars_automata() {
        for (index, name) in SUPPORTED_FORMATS.iter().enumerate() {
            let built = format_language_from_grammar(name).unwrap();
            let embedded = ByteDfa::read_table(&mut &FORMAT_TABLES[index][..])
                .unwrap_or_else(|e| panic!("{name}: {e}: run the write_format_tables example"));
            assert!(embedded == built, "{name}: stale table: run the write_format_tables example");
        }
    }

    /// Likewise for the embedded JSON texts of `time` and `date-time`.
    #[test]
    fn embedded_text_tables_equal_the_grammars_texts() {
        for (name, compressed) in TEXT_TABLES {
            let built = format_text_language_from_grammar(name).unwrap();
            let table = miniz_oxide::inflate::decompress_to_vec_with_limit(compressed, MAX_TEXT_TABLE_BYTES)
                .unwrap_or_else(|e| panic!("{name}: {e}: run the write_format_tables example"));
            let embedded = ByteDfa::read_table(&mut &table[..])
                .unwrap_or_else(|e| panic!("{name}: {e}: run the write_format_tables example"));
            assert!(embedded == built, "{name}: stale text table: run the write_format_tables example");
            let served = format_text_language(name, BUILD_DFA_STATES).unwrap().unwrap();
            assert!(*served == built, "{name}: the embedded table is not the one served");
        }
    }

    use super::*;

    fn language(format: &str) -> ByteDfa {
        format_language(format, BUILD_DFA_STATES).expect("supported").expect("within the limits")
    }

    fn check(format: &str, accepted: &[&str], refused: &[&str]) {
        let dfa = language(format);
        for text in accepted {
            assert!(dfa.matches(text.as_bytes()), "{format} should accept {text:?}");
        }
        for text in refused {
            assert!(!dfa.matches(text.as_bytes()), "{format} should refuse {text:?}");
        }
    }

    fn is_leap(year: u32) -> bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    #[test]
    fn every_supported_format_has_a_nonempty_language() {
        for &format in SUPPORTED_FORMATS {
            assert!(!language(format).is_empty_language(), "{format}");
        }
        for format in ["regex", "idn-hostname", "idn-email", "unknown", "Date"] {
            assert!(format_language(format, BUILD_DFA_STATES).is_none(), "{format}");
        }
        assert!(NARROWED_FORMATS.iter().all(|f| SUPPORTED_FORMATS.contains(f)));
    }

    #[test]
    fn state_limit_applies_to_the_result() {
        let states = language("uuid").state_count();
        assert!(format_language("uuid", states).unwrap().is_ok());
        let error = format_language("uuid", states - 1).unwrap().unwrap_err();
        assert_eq!(error.limit, CompileLimit::DfaStates(states - 1));
        assert_eq!(error.to_string(), format!("the `uuid` format needs more than {} automaton states", states - 1));
    }

    #[test]
    fn date_days_per_month_and_leap_years() {
        let dfa = language("date");
        for year in 0..=9999 {
            let text = format!("{year:04}-02-29");
            assert_eq!(dfa.matches(text.as_bytes()), is_leap(year), "{text}");
        }
        for (year, leap) in [(2001, false), (2004, true)] {
            for month in 0..=13u32 {
                for day in 0..=32u32 {
                    let last = match month {
                        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                        4 | 6 | 9 | 11 => 30,
                        2 if leap => 29,
                        2 => 28,
                        _ => 0,
                    };
                    let text = format!("{year}-{month:02}-{day:02}");
                    assert_eq!(dfa.matches(text.as_bytes()), (1..=last).contains(&day), "{text}");
                }
            }
        }
        check(
            "date",
            &["0000-02-29", "2000-02-29", "9999-12-31"],
            &["1900-02-29", "2023-1-01", "2023-01-01T", "+2023-01-01"],
        );
    }

    #[test]
    fn leap_seconds_only_at_the_last_utc_minute() {
        let dfa = language("time");
        for local in 0..24 * 60i32 {
            let (hour, minute) = (local / 60, local % 60);
            for offset in (0..24 * 60).step_by(30).chain([59, 61, 23 * 60 + 59]) {
                for (sign, utc) in [('+', local - offset), ('-', local + offset)] {
                    let text = format!("{hour:02}:{minute:02}:60{sign}{:02}:{:02}", offset / 60, offset % 60);
                    let last_minute = utc.rem_euclid(24 * 60) == 24 * 60 - 1;
                    assert_eq!(dfa.matches(text.as_bytes()), last_minute, "{text}");
                }
            }
            let text = format!("{hour:02}:{minute:02}:60.5Z");
            assert_eq!(dfa.matches(text.as_bytes()), local == 24 * 60 - 1, "{text}");
        }
        check(
            "time",
            &["00:00:00Z", "23:59:59.999+23:59", "12:00:00z", "23:59:60-00:00", "23:59:60.0z", "12:00:00-00:00"],
            &["24:00:00Z", "12:00:00", "12:00:00.Z", "12:00:00+24:00", "12:00:00+1:00", "12:00:00 Z", "12:00:60Z"],
        );
    }

    #[test]
    fn date_time_joins_date_and_time() {
        check(
            "date-time",
            &["2020-02-29T23:59:60Z", "2004-02-29t00:00:00.1+05:30", "1998-12-31T15:59:60.123-08:00"],
            &[
                "2021-02-29T00:00:00Z",
                "2020-01-01 00:00:00Z",
                "2020-01-01T00:00Z",
                "2020-01-01",
                "2020-01-01T23:58:60Z",
            ],
        );
    }

    #[test]
    fn duration_units_in_order() {
        check(
            "duration",
            &["P1W", "P1Y", "P1M1D", "P1Y1M1DT1H1M1S", "PT1H1M1S", "PT1S", "P0D", "p1dt2h"],
            &["P", "PT", "P1DT", "P1H", "P1.5D", "P1W1D", "P1Y1D", "PT1H1S", "P1S", "1D", "P-1D", "P1D "],
        );
    }

    #[test]
    fn email_mailboxes() {
        check(
            "email",
            &[
                "a@b",
                "a.b@c.d",
                "!#$%&'*+-/=?^_`{|}~@x",
                "\"\"@x",
                "\"a\\\"b c@\"@x",
                "a@[1.2.3.4]",
                "a@[001.002.003.255]",
                "a@[IPv6:1:2:3:4:5:6:7:8]",
                "a@[ipv6:::1]",
                "a@[IPv6:1:2:3:4:5::6]",
                "a@[IPv6:::ffff:1.2.3.4]",
                "a@[IPv6:1:2:3:4:5:6:1.2.3.4]",
                "a@[IPv6:1:2::3:4:1.2.3.4]",
                "a@1-2.b-c",
            ],
            &[
                "a@",
                "@b",
                "a..b@c",
                ".a@c",
                "a.@c",
                "\"a\"b@c",
                "\"a\\\u{7f}\"@c",
                "é@x.com",
                "a@-b.com",
                "a@b-.com",
                "a@b..com",
                "a@b.com.",
                "a@b_c.com",
                "a@[256.0.0.1]",
                "a@[1.2.3]",
                "a@[IPv6:1:2:3:4:5:6::7]",
                "a@[IPv6:1:2:3::4:5:1.2.3.4]",
                "a@[IPv6:1.2.3.4]",
                "a@[tag:content]",
                "a@b@c",
            ],
        );
    }

    #[test]
    fn hostname_label_and_total_lengths() {
        let label = |n: usize| "a".repeat(n);
        // 4 labels of 63 and one of 1: 4 * 63 + 1 + 4 dots = 257; trim to exactly 253 and 254.
        let name_of = |total: usize| {
            let mut labels = Vec::new();
            let mut left = total;
            while left > 0 {
                let n = left.min(63);
                labels.push(label(n));
                left -= n;
                left = left.saturating_sub(1);
            }
            labels.join(".")
        };
        let (at_limit, over_limit) = (name_of(253), name_of(254));
        assert_eq!((at_limit.len(), over_limit.len()), (253, 254));
        check(
            "hostname",
            &[&label(63), "a", "a-b", "a--b", "1", "1.2.3.4", "xn-a", "axn--b", "ab--cd", "A.B.C", &at_limit],
            &[
                "",
                ".",
                "a.",
                ".a",
                "a..b",
                &label(64),
                "-a",
                "a-",
                "a_b",
                "xn--abc",
                "XN--abc",
                "a.xn--b",
                "é",
                &over_limit,
            ],
        );
    }

    #[test]
    fn ipv4_dotted_quads() {
        check(
            "ipv4",
            &["0.0.0.0", "255.255.255.255", "01.02.003.000", "199.249.250.9"],
            &["256.0.0.0", "1.2.3", "1.2.3.4.5", "0000.0.0.0", "1.2.3.-4", "1.2.3.4/8", " 1.2.3.4", "1..2.3"],
        );
    }

    #[test]
    fn ipv6_agrees_with_the_standard_library() {
        check(
            "ipv6",
            &[
                "::",
                "1::",
                "::1",
                "1:2:3:4:5:6:7::",
                "::2:3:4:5:6:7:8",
                "1:2:3:4:5:6:7:8",
                "::ffff:1.2.3.4",
                "1:2:3:4:5:6:1.2.3.4",
                "ABCD::ef01",
            ],
            &[
                ":::",
                "1:::2",
                "1::2::3",
                "12345::",
                "1:2:3:4:5:6:7:8:9",
                "1:2:3:4:5:6:7:1.2.3.4",
                "::1.2.3.04",
                "fe80::1%eth0",
                "[::1]",
                "",
            ],
        );
        // Random strings over the address alphabet, built to hit the interesting shapes often.
        let dfa = language("ipv6");
        let pieces =
            ["", "0", "1", "ab", "fff", "ffff", "10000", ":", ":", "::", "1.2.3.4", "01.2.3.4", "255.255.255.256", "."];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200_000 {
            let count = 1 + next() % 12;
            let text: String = (0..count).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
            let expected = text.parse::<std::net::Ipv6Addr>().is_ok();
            assert_eq!(dfa.matches(text.as_bytes()), expected, "{text}");
        }
    }

    #[test]
    fn uuid_groups() {
        check(
            "uuid",
            &["00000000-0000-0000-0000-000000000000", "ABCDEFab-cdef-0123-4567-89abcdefABCD"],
            &[
                "00000000-0000-0000-0000-00000000000",
                "00000000-0000-0000-0000-0000000000000",
                "0000000-00000-0000-0000-000000000000",
                "g0000000-0000-0000-0000-000000000000",
                "{00000000-0000-0000-0000-000000000000}",
            ],
        );
    }

    #[test]
    fn uri_and_uri_reference() {
        check(
            "uri",
            &[
                "a:",
                "a:b",
                "A+-.1:x",
                "mailto:",
                "http://[v1.x]",
                "http://[VaF.a:b]",
                "http://h:",
                "http://u:p@h:80/p?q#f",
                "http://h/%7e?a?b/#/?",
                "http://[1::2]:8/",
                "http://1.2.3.4",
                "http:",
                "file:///etc",
                "a:/b//c",
            ],
            &[
                "",
                "//h",
                "a",
                "1a:b",
                "http://[v.x]",
                "http://[1::2",
                "http://h/#a#b",
                "http://é",
                "http://h/%",
                "http://h:a",
                "a:b c",
                "http://[::1]x",
            ],
        );
        check(
            "uri-reference",
            &["", "a", "a:b", "./a:b", "a/b:c", "?#", "#", "//", "//h:1", "/a/./b/../c", "%41"],
            &["%", "%4", "/a b", "[", "a:b:c d", "1:b", "\\", "#é"],
        );
    }

    #[test]
    fn iri_adds_unicode_characters() {
        check(
            "iri",
            &["http://é.com/ü?€#ß", "http://a/?\u{E000}\u{10FFFD}", "http://a/\u{A0}\u{10000}", "urn:é"],
            &["http://a/\u{E000}", "http://a/#\u{E000}", "http://a/\u{FFFE}", "http://a/\u{9F}", "é:a", "http://[é]"],
        );
        check("iri-reference", &["ü", "", "#ü", "/ü?ü"], &["\\ü", "é:", "ü:b"]);
    }

    #[test]
    fn uri_template_expressions() {
        check(
            "uri-template",
            &[
                "",
                "{var}",
                "{=var}",
                "{|var}",
                "{var:9999}",
                "{var:1}",
                "{a.b.c}",
                "{.a}",
                "{a,b*,c:3}",
                "a'b",
                "\u{E000}",
                "%41{%41.b}",
            ],
            &["{}", "{a.}", "{.}", "{{a}}", "}", "{a", "%zz", " ", "<", "{a:0}", "{a:12345}", "{a*:1}", "{a b}", "\""],
        );
    }

    #[test]
    fn json_pointers() {
        check(
            "json-pointer",
            &["", "/", "//", "/~0/~1", "/~01", "/\u{0}\u{10FFFF}", "/a b", "/%"],
            &["a", "#", "/~", "/~2", "/a~", "#/a"],
        );
        let dfa = language("json-pointer");
        assert!(!dfa.matches(b"/\xff"), "not UTF-8");
        assert!(!dfa.matches(b"/\xed\xa0\x80"), "an encoded surrogate");
        check(
            "relative-json-pointer",
            &["0", "0#", "10/a", "0/", "0+1/a", "2-10", "0+0"],
            &["", "#", "00", "01/a", "1#/", "0+1#", "0+", "-1", "0/~"],
        );
        let without = compile(&relative_json_pointer(false)).unwrap();
        assert!(without.matches(b"1/a") && without.matches(b"0#") && !without.matches(b"0+1/a"));
    }
}
