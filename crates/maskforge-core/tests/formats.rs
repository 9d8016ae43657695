//! The `format` languages against the JSON Schema Test Suite's optional format tests, every draft.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use maskforge_core::low_level::formats::{format_language, NARROWED_FORMATS, SUPPORTED_FORMATS};
use maskforge_core::low_level::ByteDfa;

const MAX_STATES: usize = 200_000;

/// Suite cases the automata decide differently on purpose: `(format, data)`.
///
/// `hostname` refuses every label with the ACE prefix `xn--`: drafts 7 and later accept such a
/// label only when it is a valid IDNA A-label, which is not practically a regular language, so
/// the valid ones below are refused (the invalid ones are refused as the suite expects).
const DELIBERATE_DISAGREEMENTS: &[(&str, &str)] = &[
    ("hostname", "xn--4gbwdl.xn--wgbh1c"),
    ("hostname", "xn--9n2bp8q.xn--9t4b11yi5a"),
    ("hostname", "xn--zca29lwxobi7a"),
    ("hostname", "xn--qmbc"),
    ("hostname", "xn--ll-0ea"),
    ("hostname", "xn--wva3je"),
    ("hostname", "xn--4dbc5h"),
    ("hostname", "xn--4dbc8h"),
    ("hostname", "xn--k8j5u"),
    ("hostname", "xn--bck0j"),
    ("hostname", "xn--vek778f"),
    ("hostname", "xn--ngba1o"),
    ("hostname", "xn--0-gyc"),
    ("hostname", "xn--11b2ezcw70k"),
    ("hostname", "xn--11b2ezcs70k"),
    ("hostname", "xn--ngba5hb2804a"),
];

fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/JSON-Schema-Test-Suite/tests")
}

struct Case {
    file: String,
    description: String,
    data: String,
    valid: bool,
}

/// Every string instance of every `optional/format/*.json` file, by format name.
fn suite_cases() -> BTreeMap<String, Vec<Case>> {
    let mut cases: BTreeMap<String, Vec<Case>> = BTreeMap::new();
    let mut drafts: Vec<_> =
        std::fs::read_dir(suite_root()).expect("the test suite is checked out").flatten().collect();
    drafts.sort_by_key(|d| d.file_name());
    for draft in drafts {
        let dir = draft.path().join("optional/format");
        let Ok(files) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<_> = files.flatten().map(|f| f.path()).collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let groups: serde_json::Value = serde_json::from_str(&text).unwrap();
            for group in groups.as_array().unwrap() {
                let Some(format) = group["schema"]["format"].as_str() else { continue };
                for test in group["tests"].as_array().unwrap() {
                    // Non-strings are valid under any format; there is nothing to check.
                    let Some(data) = test["data"].as_str() else { continue };
                    cases.entry(format.to_owned()).or_default().push(Case {
                        file: path.strip_prefix(suite_root()).unwrap().display().to_string(),
                        description: test["description"].as_str().unwrap_or_default().to_owned(),
                        data: data.to_owned(),
                        valid: test["valid"].as_bool().unwrap(),
                    });
                }
            }
        }
    }
    cases
}

fn language(format: &str) -> ByteDfa {
    format_language(format, MAX_STATES).expect("supported").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn suite_format_tests_agree() {
    let cases = suite_cases();
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let mut disagreements_seen = 0;
    for &format in SUPPORTED_FORMATS {
        let Some(format_cases) = cases.get(format) else {
            summary.push(format!("{format}: no suite tests"));
            continue;
        };
        let dfa = language(format);
        let mut passed = 0;
        for case in format_cases {
            let accepted = dfa.matches(case.data.as_bytes());
            if accepted == case.valid {
                passed += 1;
            } else if DELIBERATE_DISAGREEMENTS.contains(&(format, case.data.as_str())) {
                assert!(case.valid && NARROWED_FORMATS.contains(&format), "a narrowing only refuses valid strings");
                disagreements_seen += 1;
            } else {
                failures.push(format!(
                    "{}: {format} {:?} ({}) should be {}",
                    case.file,
                    case.data,
                    case.description,
                    if case.valid { "valid" } else { "invalid" }
                ));
            }
        }
        summary.push(format!(
            "{format}: {passed}/{} suite tests pass ({} states)",
            format_cases.len(),
            dfa.state_count()
        ));
    }
    println!("{}", summary.join("\n"));
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert!(disagreements_seen > 0, "the listed disagreements still occur in the suite");
}

#[test]
fn every_suite_format_is_supported_or_deliberately_left_out() {
    let left_out = ["regex", "idn-hostname", "idn-email", "unknown"];
    for format in suite_cases().keys() {
        let known = format_language(format, MAX_STATES).is_some();
        assert_eq!(known, !left_out.contains(&format.as_str()), "{format}");
    }
    assert!(format_language("regex", MAX_STATES).is_none());
}

#[test]
fn state_limit_is_a_typed_error() {
    let error = format_language("date-time", 100).unwrap().unwrap_err();
    assert_eq!(error.format, "date-time");
    assert!(error.to_string().contains("date-time"));
    assert!(format_language("hostname", 100).unwrap().is_err());
}
