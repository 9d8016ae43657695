//! Mask query: bytes the recogniser surely refuses, and runs of whitespace it surely takes,
//! answered without feeding it, so that `bind/` can cut or take token trie subtrees whole.
//! The recogniser never calls this module.

use std::sync::Arc;

use super::arrays::{ArrayPhase, ArrayValue};
use super::objects::{keys_are_patterns, KeyOptions, ObjectPhase, ObjectTrack, ObjectValue};
use super::{is_ws, DocumentMatcher, OpenValue};
use crate::automata::DEAD;
use crate::structured::graph::{Graph, NodeId};
use crate::structured::string_decoder::StringDecoder;

/// Whether `b` can begin some JSON value.
pub(super) fn starts_value(b: u8) -> bool {
    matches!(b, b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
}

/// Whether a value of `node` surely cannot begin with `b` (see [`OpenValue::refuses`]).
pub(super) fn start_refuses(graph: &Graph, node: NodeId, b: u8) -> bool {
    let n = graph.node(node);
    match b {
        b'n' => !n.admits_null,
        b't' => !n.admits_true,
        b'f' => !n.admits_false,
        b'"' => n.strings.is_none() && n.counted_strings.is_none() && n.syntax_strings.is_none(),
        b'-' | b'0'..=b'9' => n.numbers.is_empty(),
        b'{' => n.objects.is_empty(),
        b'[' => n.arrays.is_empty(),
        _ => true,
    }
}

/// True only when a container whose tracks read `children` surely refuses `b`: each child
/// refuses it or ends before it (see [`OpenValue::yields`]); in the latter case the container reads
/// `b` after the value, and `after_refuses` says whether it refuses it there.
pub(super) fn children_refuse<'a>(
    graph: &Graph,
    mut children: impl Iterator<Item = Option<&'a OpenValue>>,
    b: u8,
    after_refuses: impl FnOnce() -> bool,
) -> bool {
    let mut ended = false;
    let each = children.all(|child| {
        child.is_some_and(|c| {
            c.refuses(graph, b) || {
                let yields = c.yields(b);
                ended |= yields;
                yields
            }
        })
    });
    each && (!ended || after_refuses())
}

/// Whether the tracks of a container reading `children` all take any run of whitespace and
/// stay alive: every value is complete and ends before whitespace (the tracks go on with the
/// container after the value), or every value is itself between tokens.
pub(super) fn children_take_whitespace<'a>(mut children: impl Iterator<Item = Option<&'a OpenValue>> + Clone) -> bool {
    let ends = |c: &OpenValue| [b' ', b'\t', b'\n', b'\r'].into_iter().all(|w| c.yields(w));
    children.clone().all(|c| c.is_some_and(ends)) || children.all(|c| c.is_some_and(OpenValue::between_tokens))
}

impl OpenValue {
    /// Whether this is an open container between its tokens, where whitespace changes nothing.
    pub(super) fn between_tokens(&self) -> bool {
        match self {
            OpenValue::Object(o) => match o.phase {
                ObjectPhase::AfterOpen
                | ObjectPhase::AfterKey
                | ObjectPhase::AfterColon
                | ObjectPhase::AfterValue
                | ObjectPhase::AfterComma => true,
                // A member's value that whitespace ends leaves every track alive, and the
                // object then reads whitespace.
                ObjectPhase::InValue => children_take_whitespace(o.tracks.iter().map(|t| t.child.as_deref())),
                ObjectPhase::InKey | ObjectPhase::Closed => false,
            },
            OpenValue::Array(a) => match a.phase {
                ArrayPhase::AfterOpen | ArrayPhase::AfterItem | ArrayPhase::AfterComma => true,
                // Items whose text is kept (`uniqueItems`) are checked at every byte.
                ArrayPhase::InItem => {
                    !a.keeps_text
                        && a.tracks.iter().all(|t| t.seen.is_none())
                        && children_take_whitespace(a.tracks.iter().map(|t| t.child.as_deref()))
                }
                ArrayPhase::Closed => false,
            },
            _ => false,
        }
    }

    /// A cheap look ahead for mask walks: true only when [`OpenValue::feed`] would surely return
    /// [`Step::Rejected`](super::Step::Rejected) for `b`, so that a walk can skip the byte without copying the value.
    /// False when unsure.
    pub(super) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        match self {
            OpenValue::Start(node) => start_refuses(graph, *node, b),
            OpenValue::Leaf { dfa, state } => dfa.next(*state, b) == DEAD && !dfa.is_accepting(*state),
            OpenValue::Number(matchers) => !matchers.iter().any(|m| m.can_continue_with(b) || m.is_accepting()),
            OpenValue::Counted(_) | OpenValue::Syntax(_) => false,
            OpenValue::Object(o) => o.refuses(graph, b),
            OpenValue::Array(a) => a.refuses(graph, b),
        }
    }

    /// The objects inside a key at the leaves of this value, into `out`, when every container
    /// on the way only hands bytes on (objects between the members' values, arrays keeping no
    /// item text): they alone read the key, and nothing above reads its text. False otherwise.
    /// With `values_only`, a container must hand the bytes through its tracks' values alone (no
    /// probe, no items compared by value): the value then goes on exactly while one of the
    /// objects does.
    pub(super) fn key_objects<'a>(&'a self, values_only: bool, out: &mut Vec<&'a ObjectValue>) -> bool {
        let mut leaves = |child: Option<&'a Arc<OpenValue>>, probe: Option<&'a Arc<OpenValue>>, compared: bool| {
            if values_only {
                probe.is_none() && !compared && child.is_some_and(|c| c.key_objects(true, out))
            } else {
                child.is_some_and(|c| c.key_objects(false, out)) && probe.is_none_or(|p| p.key_objects(false, out))
            }
        };
        match self {
            OpenValue::Object(o) if o.phase == ObjectPhase::InKey => {
                // Tracks that started a member on the same schema share its value.
                if !out.iter().any(|known| std::ptr::eq(*known, o)) {
                    out.push(o);
                }
                true
            }
            OpenValue::Object(o) if o.phase == ObjectPhase::InValue => {
                o.tracks.iter().all(|t| leaves(t.child.as_ref(), t.probe.as_ref(), false))
            }
            OpenValue::Array(a) if a.phase == ArrayPhase::InItem && !a.keeps_text => {
                a.tracks.iter().all(|t| leaves(t.child.as_ref(), t.probe.as_ref(), t.seen.is_some()))
            }
            _ => false,
        }
    }
}

impl ObjectValue {
    /// See [`OpenValue::refuses`].
    pub(super) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        use ObjectPhase::*;
        match self.phase {
            Closed => false,
            InKey => {
                let next = graph.any_string.next(self.key_text, b);
                next == DEAD
                    || (!graph.any_string.is_accepting(next)
                        && self.tracks.iter().all(|t| t.key_refuses(graph, &self.key, b)))
            }
            InValue => children_refuse(graph, self.tracks.iter().map(|t| t.child.as_deref()), b, || {
                !(is_ws(b) || b == b',' || b == b'}')
            }),
            AfterOpen => !(is_ws(b) || b == b'"' || b == b'}'),
            AfterComma => !(is_ws(b) || b == b'"'),
            AfterKey => !(is_ws(b) || b == b':'),
            AfterColon => !(is_ws(b) || starts_value(b)),
            AfterValue => !(is_ws(b) || b == b',' || b == b'}'),
        }
    }
}

impl ObjectTrack {
    /// Whether the key being read, `decoder` so far, surely cannot go on with `b` (not a
    /// closing quote) on this track: it takes no key not named by its shape, and `b` is a
    /// plain character that no named key has next. False when unsure.
    pub(super) fn key_refuses(&self, graph: &Graph, decoder: &StringDecoder, b: u8) -> bool {
        let shape = self.shape(graph);
        let Some(options) = &self.key_options else { return false };
        if options.open || keys_are_patterns(shape) || decoder.has_pending() || !(0x20..0x80).contains(&b) || b == b'\\'
        {
            return false;
        }
        let unnamed = shape.keys.as_ref().is_some_and(|keys| {
            keys.allowed_text
                .as_ref()
                .is_some_and(|text| self.allowed_key != DEAD && text.next(self.allowed_key, b) != DEAD)
        });
        !unnamed && !KeyOptions::some_name_continues(shape, decoder.value(), b)
    }
}

impl ArrayValue {
    /// See [`OpenValue::refuses`].
    pub(super) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        use ArrayPhase::*;
        match self.phase {
            Closed => false,
            InItem => children_refuse(graph, self.tracks.iter().map(|t| t.child.as_deref()), b, || {
                !(is_ws(b) || b == b',' || b == b']')
            }),
            AfterOpen => !(is_ws(b) || b == b']' || starts_value(b)),
            AfterComma => !(is_ws(b) || starts_value(b)),
            AfterItem => !(is_ws(b) || b == b',' || b == b']'),
        }
    }
}

impl DocumentMatcher {
    /// Whether every run of whitespace is read and keeps the text completable: before the
    /// value, after it, or between the tokens of its container, with no bound on runs.
    pub(crate) fn takes_any_whitespace(&self) -> bool {
        self.max_whitespace.is_none() && (self.trailing || !self.started || self.value.between_tokens())
    }

    /// True only when [`DocumentMatcher::feed`] would surely return false for `b` (see
    /// [`OpenValue::refuses`]).
    pub(crate) fn refuses(&self, graph: &Graph, b: u8) -> bool {
        if self.trailing {
            return !is_ws(b);
        }
        (self.started || !is_ws(b)) && self.value.refuses(graph, b)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Step;
    use crate::executable::Backend;
    use crate::Compiler;

    /// The look ahead of mask walks never refuses a byte the matcher takes, and does refuse
    /// most of the bytes it does not take.
    #[test]
    fn refused_bytes_are_rejected() {
        let cases = [
            (
                r#"{"type": "object", "properties": {"n": {"type": "integer"}, "s": {"enum": ["a", "b"]}}, "additionalProperties": {"type": "array", "items": {"type": ["boolean", "null", "number"]}}}"#,
                r#"{"n": -12, "x": [true, null, 1.5e3, false], "s": "b", "y": []}"#,
            ),
            (
                r#"{"anyOf": [{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"], "additionalProperties": false}, {"type": "array", "items": {"type": "object"}}]}"#,
                r#"[{"k": {"z": "q\"r"}}, {}]"#,
            ),
            (r#"{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}"#, r#" { "k" : 1 } "#),
            (
                // Named keys only, beside keys of a pattern: inside keys, bytes no key has next.
                r#"{"type": "object", "properties": {"key": {}, "kez": {}, "\u00e9t\u00e9": {}}, "patternProperties": {"^x-[a-z]+$": {}}, "additionalProperties": false}"#,
                r#"{"kez": 1, "x-ab": 2, "\u00e9t\u00e9": 3, "key": 4}"#,
            ),
        ];
        let (mut refused, mut rejected) = (0, 0);
        for (schema, text) in cases {
            let executable = Compiler::without_cache().compile_json_schema(schema).unwrap();
            let Backend::Structured(program) = executable.executable().backend() else {
                panic!("{schema} is structured")
            };
            let graph = &program.graph;
            let mut matcher = program.start();
            for at in 0..=text.len() {
                let inner = matcher.inner_container();
                for b in 0..=255u8 {
                    let taken = matcher.clone().feed(graph, b);
                    rejected += usize::from(!taken);
                    if matcher.refuses(graph, b) {
                        assert!(!taken, "{schema}: {:?} refused after {:?}", b as char, &text[..at]);
                        refused += 1;
                    }
                    if let Some(inner) = inner.as_ref().filter(|i| i.refuses(graph, b)) {
                        let step = inner.clone().feed(graph, b);
                        assert_eq!(step, Step::Rejected, "{schema}: {:?} after {:?}", b as char, &text[..at]);
                    }
                }
                if at < text.len() {
                    assert!(matcher.feed(graph, text.as_bytes()[at]), "{schema} takes {text}");
                }
            }
        }
        assert!(refused * 4 > rejected * 3, "the look ahead refuses {refused} of {rejected} rejected bytes");
    }
}
