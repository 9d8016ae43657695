//! Key classification for objects with `patternProperties` or `propertyNames`: the signatures
//! (sets of patterns an unnamed key matches) with their schemas, the unnamed keys' languages and
//! counts, and which key texts stay live.
//!
//! Runs once the nodes are computed; the matcher reads the [`PatternKeys`] it leaves and never
//! classifies keys itself.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use super::{Graph, GraphError, ObjectShape, PatternKeys, SeenKeys, SyntaxStrings, NEVER};
use crate::automata::json_escapes::{decoded_strings, json_literal_strings, json_strings_decoding_to};
use crate::automata::{json, AutomatonId, ByteDfa, StateId};
use crate::schema::strings::StringSyntax;
use crate::structured::pattern_syntax::is_pattern;

impl PatternKeys {
    /// Whether `propertyNames` admits `key`.
    pub(crate) fn admits_name(&self, key: &str) -> bool {
        self.names.as_ref().is_none_or(|names| names.matches(key.as_bytes()))
            && self.key_syntax.is_none_or(|min| key.chars().count() as u64 >= min && is_pattern(key))
    }

    /// Unnamed keys that can still be added with a satisfiable schema, beyond `seen_allowed`
    /// such keys already present (`u64::MAX`: unboundedly many).
    pub(super) fn addable(&self, sat: &[bool], seen_allowed: impl FnOnce() -> u64) -> u64 {
        let mut total: u64 = 0;
        for &(sig, count) in &self.counts {
            if self.signatures.get(&sig).is_some_and(|&n| sat[n as usize]) {
                match count {
                    None => return u64::MAX,
                    Some(c) => total = total.saturating_add(c),
                }
            }
        }
        total.saturating_sub(seen_allowed())
    }
}

/// Whether every unclosed JSON string text (on `any`) is, on `text`, a state from which
/// infinitely many texts are accepted: explores the reachable pairs of the two automata.
pub(super) fn every_open_key_unbounded(any: &ByteDfa, text: &ByteDfa, unbounded_from: &[bool]) -> bool {
    // One byte of each class the two automata share: the bytes of one move both alike.
    let mut bytes: Vec<(u8, u8, u8)> =
        (0..=255u8).map(|b| (any.byte_classes()[b as usize], text.byte_classes()[b as usize], b)).collect();
    bytes.sort_unstable();
    bytes.dedup_by_key(|&mut (a, t, _)| (a, t));
    let width = text.state_count();
    let mut visited = vec![false; any.state_count() * width];
    let mut stack = vec![(any.start(), text.start())];
    while let Some((a, t)) = stack.pop() {
        if any.is_accepting(a) || std::mem::replace(&mut visited[a as usize * width + t as usize], true) {
            continue;
        }
        if t == crate::automata::DEAD || !unbounded_from[t as usize] {
            return false;
        }
        for &(_, _, b) in &bytes {
            let next = any.next(a, b);
            if next != crate::automata::DEAD {
                stack.push((next, text.next(t, b)));
            }
        }
    }
    true
}

/// [`open_within_strings`] of the shared automaton of every string, computed once.
pub(super) fn open_within_every_string() -> &'static Vec<bool> {
    static OPEN: OnceLock<Vec<bool>> = OnceLock::new();
    OPEN.get_or_init(|| open_within_strings(json::string_automaton()))
}

/// Per state of a JSON string automaton: whether no state reachable from it before the string
/// closes has only finitely many completions.
pub(super) fn open_within_strings(text: &ByteDfa) -> Vec<bool> {
    let n = text.state_count();
    let unbounded = text.unbounded_from();
    // Predecessors through transitions that leave an unclosed state.
    let mut predecessors: Vec<Vec<StateId>> = vec![Vec::new(); n];
    for p in 1..n as StateId {
        if text.is_accepting(p) {
            continue;
        }
        for b in 0..=255u8 {
            let q = text.next(p, b);
            if q != crate::automata::DEAD {
                predecessors[q as usize].push(p);
            }
        }
    }
    let mut closed_off = vec![false; n];
    let mut stack: Vec<StateId> =
        (1..n as StateId).filter(|&s| !text.is_accepting(s) && !unbounded[s as usize]).collect();
    while let Some(s) = stack.pop() {
        if std::mem::replace(&mut closed_off[s as usize], true) {
            continue;
        }
        stack.extend(predecessors[s as usize].iter().copied().filter(|&p| !closed_off[p as usize]));
    }
    let mut open: Vec<bool> = closed_off.iter().map(|&c| !c).collect();
    open[crate::automata::DEAD as usize] = false;
    open
}

/// Keys that can still be added to an object with keys `seen`, beyond the required ones
/// (`u64::MAX`: unboundedly many); `named_open` says which named properties may still come.
pub(crate) fn addable_optional_keys(
    shape: &ObjectShape,
    sat: &[bool],
    seen: SeenKeys,
    named_open: &dyn Fn(&str) -> bool,
) -> u64 {
    let is_seen = |k: &str| seen.contains(k) || !named_open(k);
    let unnamed = match &shape.keys {
        None if sat[shape.other as usize] => return u64::MAX,
        None => 0,
        Some(keys) => {
            // Classifying the keys seen costs a pattern run per key: only when the count is finite.
            let named = |k: &str| shape.properties.contains_key(k) || shape.required.contains(k);
            let seen_allowed =
                || seen.iter().filter(|k| !named(k) && sat[shape.value_schema(k) as usize]).count() as u64;
            keys.addable(sat, seen_allowed)
        }
    };
    let named_optional = shape
        .properties
        .iter()
        .filter(|(k, &v)| sat[v as usize] && !shape.required.contains(*k) && !is_seen(k))
        .count() as u64;
    unnamed.saturating_add(named_optional)
}

impl Graph {
    /// Every object shape with patterns and no [`PatternKeys`] yet gets its signatures: the
    /// sets of patterns some unnamed key matches, each with its schema. Returns whether any
    /// shape was classified.
    pub(super) fn classify_pattern_keys(&mut self) -> Result<bool, GraphError> {
        let mut todo = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            for (i, shape) in node.objects.iter().enumerate() {
                if shape.classifies_keys() && shape.keys.is_none() {
                    todo.push((id, i));
                }
            }
        }
        for &(id, i) in &todo {
            let shape = self.nodes[id].objects[i].clone();
            let keys = self.pattern_keys(&shape)?;
            // Named properties outside `propertyNames` cannot occur.
            for (name, node) in self.nodes[id].objects[i].properties.iter_mut() {
                if !keys.admits_name(name) {
                    *node = NEVER;
                }
            }
            self.nodes[id].objects[i].keys = Some(Arc::new(keys));
        }
        Ok(!todo.is_empty())
    }

    pub(super) fn pattern_keys(&mut self, shape: &ObjectShape) -> Result<PatternKeys, GraphError> {
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        let named: BTreeSet<&String> = shape.properties.keys().chain(&shape.required).collect();
        // Keys matching exactly the patterns of `sig`, split pattern by pattern (in or out),
        // skipping every branch whose language is already empty.
        // The key universe: every key, or those `propertyNames` admits.
        let (names, key_syntax) = match shape.names {
            None => (None, None),
            Some(node) => {
                let node = &self.nodes[node as usize];
                if node.counted_strings.is_some() {
                    return Err(GraphError::CountedStrings);
                }
                match node.syntax_strings {
                    // Keys that are patterns, and nothing else asked of them.
                    Some(SyntaxStrings { syntax: StringSyntax::Pattern, min_length })
                        if node.strings.is_none() && shape.patterns.is_empty() =>
                    {
                        (None, Some(min_length))
                    }
                    Some(_) => return Err(GraphError::SyntaxStrings),
                    None => {
                        let texts = node.strings.as_deref().cloned().unwrap_or_else(ByteDfa::empty);
                        (Some(decoded_strings(&texts)), None)
                    }
                }
            }
        };
        let universe = match &names {
            None => self.any_key.as_ref().clone(),
            Some(names) => self.any_key.intersect(names, self.max_dfa_states).map_err(limit)?,
        };
        let mut languages: Vec<(u64, ByteDfa)> = Vec::new();
        let mut branches = vec![(0usize, 0u64, universe)];
        while let Some((i, sig, language)) = branches.pop() {
            if i == shape.patterns.len() {
                languages.push((sig, language));
                continue;
            }
            let pattern = &shape.patterns[i].keys;
            let inside = language.intersect(pattern, self.max_dfa_states).map_err(limit)?;
            let outside = language.difference(pattern, self.max_dfa_states).map_err(limit)?;
            for (bit, part) in [(1u64 << i, inside), (0, outside)] {
                if !part.is_empty_language() {
                    branches.push((i + 1, sig | bit, part));
                }
            }
        }
        // A required name outside `properties` takes the schema of its signature too, even where
        // the named keys are all that signature has (`"^(a|b)$"` with `"required": ["a", "b"]`).
        let required_unnamed: Vec<&String> =
            shape.required.iter().filter(|k| !shape.properties.contains_key(*k)).collect();
        let mut signatures = BTreeMap::new();
        let mut counts = Vec::new();
        for (sig, language) in &languages {
            let named_here = named.iter().filter(|k| language.matches(k.as_bytes())).count() as u64;
            let count = language.language_size().map(|n| n.saturating_sub(named_here));
            if count != Some(0) {
                counts.push((*sig, count));
            } else if !required_unnamed.iter().any(|k| language.matches(k.as_bytes())) {
                continue;
            }
            let node = self.all(shape.signature_operands(*sig));
            signatures.insert(*sig, node);
        }
        // Only signatures with unnamed keys make the unnamed key languages.
        languages.retain(|(sig, _)| counts.iter().any(|(s, _)| s == sig));
        Ok(PatternKeys {
            names,
            key_syntax,
            signatures,
            languages,
            counts,
            allowed_text: None,
            unbounded_from: Vec::new(),
            open: false,
            context_text: None,
            context_from: Vec::new(),
        })
    }

    /// Once satisfiability is known: which unnamed keys each pattern shape admits, as JSON
    /// string texts (for key liveness).
    pub(super) fn allow_pattern_keys(&mut self) -> Result<(), GraphError> {
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        for id in 0..self.nodes.len() {
            for i in 0..self.nodes[id].objects.len() {
                let Some(keys) = self.nodes[id].objects[i].keys.take() else { continue };
                let shape = &self.nodes[id].objects[i];
                let mut allowed = ByteDfa::empty();
                for (sig, language) in &keys.languages {
                    if self.satisfiable[keys.signatures[sig] as usize] {
                        allowed = allowed.union(language, self.max_dfa_states).map_err(limit)?;
                    }
                }
                let named: Vec<&str> = shape.properties.keys().chain(&shape.required).map(String::as_str).collect();
                // Texts are taken apart from the decoded keys: a text decodes to one key, so the
                // texts of (allowed minus named) are the allowed texts minus the named ones, and
                // the named keys' texts are a small trie (the texts of a complement of names
                // would need the whole escape layer over it). When every key is allowed (the
                // common case), the allowed texts are every string, named keys included.
                let every_key = allowed == *self.any_key;
                let allowed_text = if every_key {
                    Arc::clone(&self.any_string)
                } else if let Some(text) = self.key_texts.get(&allowed) {
                    Arc::clone(text)
                } else {
                    let text = Arc::new(
                        json_strings_decoding_to(&allowed, self.max_dfa_states)
                            .map_err(|e| GraphError::TooManyStates(e.limit))?,
                    );
                    self.key_texts.insert(allowed, Arc::clone(&text));
                    text
                };
                // Shapes of one object met in several conjunctions share their names and keys.
                let mut names: Vec<String> = named.iter().map(|n| n.to_string()).collect();
                names.sort_unstable();
                names.dedup();
                let memo_key = (AutomatonId::of(&allowed_text), names);
                let reading = match self.key_readings.get(&memo_key) {
                    Some((_, reading)) => reading.clone(),
                    None => {
                        let reading = self.unnamed_key_reading(&allowed_text, every_key, &named)?;
                        self.key_readings.insert(memo_key, (Arc::clone(&allowed_text), reading.clone()));
                        reading
                    }
                };
                // The classification is moved over (copied only if another shape shares it).
                let keys = Arc::try_unwrap(keys).unwrap_or_else(|shared| shared.as_ref().clone());
                let keys = PatternKeys {
                    languages: Vec::new(),
                    allowed_text: reading.allowed_text,
                    unbounded_from: reading.unbounded_from,
                    open: reading.open,
                    context_from: reading.context_from,
                    context_text: reading.context_text,
                    ..keys
                };
                self.nodes[id].objects[i].keys = Some(Arc::new(keys));
            }
        }
        Ok(())
    }

    /// How a mask reads the keys of an object shape that are not `named`, given the texts of
    /// the keys its patterns allow (`every_key`: all of them).
    fn unnamed_key_reading(
        &self,
        allowed_text: &Arc<ByteDfa>,
        every_key: bool,
        named: &[&str],
    ) -> Result<KeyReading, GraphError> {
        let limit = |e: crate::automata::TooManyStates| GraphError::TooManyStates(e.limit);
        let (text, context_text) = if named.is_empty() {
            (allowed_text.as_ref().clone(), Arc::clone(allowed_text))
        } else {
            let named =
                json_literal_strings(named, self.max_dfa_states).map_err(|e| GraphError::TooManyStates(e.limit))?;
            let text = allowed_text.difference(&named, self.max_dfa_states).map_err(limit)?;
            let context_text = if every_key {
                Arc::clone(allowed_text)
            } else {
                Arc::new(allowed_text.union(&named, self.max_dfa_states).map_err(limit)?)
            };
            (text, context_text)
        };
        let unbounded_from = text.unbounded_from();
        let open = every_open_key_unbounded(&self.any_string, &text, &unbounded_from);
        let context_from = if Arc::ptr_eq(&context_text, &self.any_string) {
            open_within_every_string().clone()
        } else {
            open_within_strings(&context_text)
        };
        Ok(KeyReading {
            allowed_text: (!text.is_empty_language()).then(|| Arc::new(text)),
            unbounded_from,
            open,
            context_from,
            context_text: (!context_text.is_empty_language()).then_some(context_text),
        })
    }
}

/// The parts of [`PatternKeys`] that depend only on the allowed key texts and the named keys.
#[derive(Debug, Clone)]
pub(super) struct KeyReading {
    allowed_text: Option<Arc<ByteDfa>>,
    unbounded_from: Vec<bool>,
    open: bool,
    context_from: Vec<bool>,
    context_text: Option<Arc<ByteDfa>>,
}

#[cfg(test)]
mod tests {
    use crate::structured::graph::NEVER;
    use crate::structured::{accepts, lowered};

    #[test]
    fn overlapping_patterns_give_a_key_every_schema_it_matches() {
        let program = lowered(
            r#"{"type": "object", "patternProperties": {"^a": {"type": "integer"}, "^ab": {"minimum": 3}},
                "additionalProperties": false}"#,
        )
        .unwrap();
        let shape = &program.graph.node(program.root).objects[0];
        assert!(shape.keys.is_some(), "the shape's keys are classified");
        assert_eq!(shape.value_schema("b"), NEVER);
        assert_ne!(shape.value_schema("abc"), shape.value_schema("ax"));
        assert!(accepts(&program, r#"{"abc": 3, "ax": 2}"#));
        assert!(!accepts(&program, r#"{"abc": 2}"#) && !accepts(&program, r#"{"b": 1}"#));
        assert!(!accepts(&program, r#"{"ax": 2.5}"#));
    }

    #[test]
    fn a_named_property_outside_property_names_cannot_occur() {
        let program =
            lowered(r#"{"type": "object", "propertyNames": {"maxLength": 2}, "properties": {"long": {}, "ok": {}}}"#)
                .unwrap();
        let shape = &program.graph.node(program.root).objects[0];
        let keys = shape.keys.as_ref().expect("propertyNames classifies keys");
        assert!(keys.admits_name("ok") && !keys.admits_name("long"));
        assert_eq!(shape.properties["long"], NEVER);
        assert!(accepts(&program, r#"{"ok": 1, "x": 2}"#) && !accepts(&program, r#"{"long": 1}"#));
    }
}
