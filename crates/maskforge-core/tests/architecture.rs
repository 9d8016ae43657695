//! The crate's layout as docs/architecture.md draws it: no import cycle between its modules,
//! and none of the arrows that must never exist. Read from the sources as text: the paths
//! named after `crate::` and `super::`, a file's own test module aside.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// (modules that import, modules they must never name, why)
const NEVER: &[(&[&str], &[&str], &str)] = &[
    (
        &["schema", "regular", "structured", "automata"],
        &["vocabulary", "bind", "session", "compiler"],
        "programs are vocabulary-independent",
    ),
    (
        &["vocabulary"],
        &["schema", "regular", "structured", "executable", "compiler", "session", "bind"],
        "tokenizers know no schemas",
    ),
    (
        &["options", "error", "limits", "mask"],
        &["schema", "regular", "structured", "bind", "compiler", "session", "executable", "vocabulary"],
        "the base imports nothing above it",
    ),
    (&["bind"], &["compiler", "session"], "binding needs no compiler or session"),
    (&["regular", "structured"], &["executable"], "an arm never reaches up to the router"),
    (&["structured::graph"], &["structured::matcher", "structured::unique"], "the graph never reads instances"),
];

/// Every module of the crate (`a::b`, the root as ""), with its source file.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, PathBuf>) {
        for entry in fs::read_dir(dir).expect("the source folder reads") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).expect("below the root").with_extension("");
                let mut parts: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                    parts.pop();
                }
                out.insert(parts.join("::"), path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    walk(&root, &root, &mut out);
    out
}

/// The source a module's imports are read from: code lines before its test module.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("a source file reads");
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The paths a text names after `anchor` (`crate::` or `super::`), groups `{a::b, c}` opened
/// one level, each as its segments.
fn named_paths(code: &str, anchor: &str) -> Vec<Vec<String>> {
    fn ident(s: &str) -> String {
        s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    }
    /// The segments `a::b::c` at the start of `rest`, and what follows them.
    fn segments(mut rest: &str) -> (Vec<String>, &str) {
        let mut out = Vec::new();
        loop {
            let name = ident(rest);
            if name.is_empty() {
                break;
            }
            rest = &rest[name.len()..];
            out.push(name);
            match rest.strip_prefix("::") {
                Some(next) if !next.starts_with('{') => rest = next,
                _ => break,
            }
        }
        (out, rest)
    }
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(anchor) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let (head, rest) = segments(&code[at + anchor.len()..]);
        let group = rest.strip_prefix("::{").or_else(|| (head.is_empty()).then(|| rest.strip_prefix('{')).flatten());
        match group {
            Some(group) => {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let (tail, _) = segments(item.trim());
                    paths.push(head.iter().cloned().chain(tail).collect());
                }
            }
            None => paths.push(head),
        }
    }
    paths
}

/// Which modules each module imports (the longest module prefix of each path it names; a
/// module naming its own ancestors or descendants does not count).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut edges = BTreeMap::new();
    for (name, path) in &modules {
        let code = code_of(path);
        let own: Vec<&str> = if name.is_empty() { Vec::new() } else { name.split("::").collect() };
        // `super` of `a::b` (in a/b.rs or a/b/mod.rs) is `a`.
        let parent = &own[..own.len().saturating_sub(1)];
        let mut targets = BTreeSet::new();
        for (anchor, base) in [("crate::", &[][..]), ("super::", parent)] {
            for path in named_paths(&code, anchor) {
                let full: Vec<&str> = base.iter().copied().chain(path.iter().map(String::as_str)).collect();
                let target = (1..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| modules.contains_key(m));
                if let Some(target) = target {
                    let related = target == *name
                        || name.starts_with(&format!("{target}::"))
                        || target.starts_with(&format!("{name}::"))
                        || name.is_empty();
                    if !related {
                        targets.insert(target);
                    }
                }
            }
        }
        edges.insert(name.clone(), targets);
    }
    edges
}

/// Whether `module` is `prefix` or inside it.
fn within(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let edges = imports();
    assert!(edges.len() > 40, "the walk found the crate's modules: {}", edges.len());
    assert!(edges["structured::matcher"].contains("structured::graph"), "imports are read: {:?}", edges);
    // A cycle at the level of whole top-level modules counts too: `a::x -> b` and `b -> a::y`.
    for level in [usize::MAX, 1] {
        let cut = |m: &str| m.split("::").take(level).collect::<Vec<_>>().join("::");
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, targets) in &edges {
            for to in targets {
                let (a, b) = (cut(from), cut(to));
                if a != b {
                    graph.entry(a).or_default().insert(b);
                }
            }
        }
        for start in graph.keys() {
            let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((at, path)) = stack.pop() {
                for next in graph.get(&at).into_iter().flatten() {
                    assert!(next != start, "an import cycle: {} -> {start}", path.join(" -> "));
                    if seen.insert(next.clone()) {
                        stack.push((next.clone(), path.iter().cloned().chain([next.clone()]).collect()));
                    }
                }
            }
        }
    }
}

#[test]
fn the_arrows_that_never_exist_do_not() {
    let edges = imports();
    for (sources, banned, why) in NEVER {
        for (from, targets) in &edges {
            if !sources.iter().any(|s| within(from, s)) {
                continue;
            }
            for to in targets {
                let hit = banned.iter().any(|b| within(to, b));
                assert!(!hit, "{from} imports {to}: {why}");
            }
        }
    }
}
