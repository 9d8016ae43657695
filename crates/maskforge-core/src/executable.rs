//! The vocabulary-independent executable a schema compiles to, and the routing between backends.

use std::sync::Arc;

use crate::automata::{ByteDfa, StateId, DEAD};
use crate::compile_stack::on_compile_stack;
pub use crate::compile_stack::COMPILE_STACK_BYTES;
use crate::composite::{CompositeProgram, Cursor};
use crate::error::{DiagnosticCode, Error, Result};
use crate::options::{CompileIdentity, CompilerOptions};
use crate::registry::{RecordingRegistry, Registry, SchemaRegistry};
use crate::schema::SchemaDocument;
use crate::structured::{DocumentMatcher, StructuredProgram};

/// A compiled schema, independent of any vocabulary. Immutable and shareable across threads.
#[derive(Debug)]
pub struct ExecutableSchema {
    backend: Backend,
    output: Output,
    /// What a structured or composite program is rebuilt from when read from bytes (a
    /// regular program is its automaton's table).
    source: Option<Arc<ProgramSource>>,
}

/// The input a program on the structured or composite arm compiled from, resolved: rebuilt
/// from it, a program read from bytes is the one written.
#[derive(Debug)]
pub(crate) struct ProgramSource {
    pub(crate) kind: SourceKind,
    /// The schema, or the template's document.
    pub(crate) document: serde_json::Value,
    /// Documents a registry served during compilation, by URI, as text.
    pub(crate) remotes: Vec<(String, String)>,
    pub(crate) identity: CompileIdentity,
}

impl ProgramSource {
    fn of_schema(document: &SchemaDocument, options: &CompilerOptions) -> ProgramSource {
        ProgramSource {
            kind: SourceKind::Schema,
            document: document.root().clone(),
            remotes: document.remotes_as_text(),
            identity: options.compile_identity(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceKind {
    Schema,
    Template,
}

/// What the text a program accepts is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One JSON value (a schema's instance), with insignificant whitespace around and inside.
    JsonValue,
    /// Raw text, every byte significant (a regex's or a choice's): nothing is whitespace.
    Text,
}

#[derive(Debug)]
pub(crate) enum Backend {
    /// The whole language as one minimal byte DFA.
    Regular(Arc<ByteDfa>),
    /// A pushdown matcher over the schema graph.
    Structured(Arc<StructuredProgram>),
    /// A template's automaton with structured holes (raw text).
    Composite(Arc<CompositeProgram>),
}

impl ExecutableSchema {
    /// Compiles a parsed schema document. Schemas whose language is regular become one DFA;
    /// the others go to the structured arm.
    ///
    /// Compilation recurses through nesting and references (up to `max_nesting_depth` schema
    /// objects, each a few KiB of stack), more than the 2 MiB a spawned thread has: it runs on
    /// a thread of its own with [`COMPILE_STACK_BYTES`] of stack, whatever thread calls it.
    pub fn compile(document: &SchemaDocument, options: &CompilerOptions) -> Result<ExecutableSchema> {
        let mut executable = on_compile_stack(|| Self::compile_on_this_stack(document, options))?;
        if matches!(executable.backend, Backend::Structured(_)) {
            executable.source = Some(Arc::new(ProgramSource::of_schema(document, options)));
        }
        Ok(executable)
    }

    /// The structured program of a schema whose arm is known to be the structured one (a
    /// program read from bytes): the regular attempt is skipped.
    pub(crate) fn compile_structured(document: &SchemaDocument, options: &CompilerOptions) -> Result<ExecutableSchema> {
        let program = on_compile_stack(|| crate::structured::compile_program(document, options))?;
        let mut executable = ExecutableSchema::structured(program);
        executable.source = Some(Arc::new(ProgramSource::of_schema(document, options)));
        Ok(executable)
    }

    fn structured(program: StructuredProgram) -> ExecutableSchema {
        ExecutableSchema { backend: Backend::Structured(Arc::new(program)), output: Output::JsonValue, source: None }
    }

    /// Schemas go to the regular arm first and to the structured arm when the regular one
    /// cannot build their language. Where the document shows parts the regular arm leaves to the
    /// other (open objects, numbers decided by value), the structured arm goes first instead,
    /// and when its program holds such parts the regular attempt, bound to fail, is skipped.
    /// The outcome does not depend on the order: the regular arm's automaton when it builds one,
    /// its diagnostic when it refuses the schema for a reason of its own, the structured program
    /// otherwise (tests/regular_arm.rs and tests/schema_differential.rs check it).
    fn compile_on_this_stack(document: &SchemaDocument, options: &CompilerOptions) -> Result<ExecutableSchema> {
        if !likely_structured(document.root(), options.closed_objects) {
            return Self::regular_first(document, options, None);
        }
        let structured = crate::structured::compile_program(document, options);
        match structured {
            Ok(program) if program.beyond_regular_arm() => Ok(ExecutableSchema::structured(program)),
            structured => Self::regular_first(document, options, Some(structured)),
        }
    }

    /// The regular arm, then the structured one (`structured`: its result, when already known).
    fn regular_first(
        document: &SchemaDocument,
        options: &CompilerOptions,
        structured: Option<Result<StructuredProgram>>,
    ) -> Result<ExecutableSchema> {
        let structured = || structured.unwrap_or_else(|| crate::structured::compile_program(document, options));
        let backend = match crate::regular::compile_on_this_stack(document, options) {
            Ok(dfa) => Backend::Regular(Arc::new(dfa)),
            Err(Error::Schema(d)) if d.code == DiagnosticCode::RequiresStructuredBackend => {
                Backend::Structured(Arc::new(structured()?))
            }
            // A language too large for one automaton may still run on the pushdown matcher,
            // which never unfolds it; if that fails too, the size is the first cause.
            Err(Error::Schema(d)) if d.code == DiagnosticCode::ResourceLimit => match structured() {
                Ok(program) => Backend::Structured(Arc::new(program)),
                Err(_) => return Err(Error::Schema(d)),
            },
            Err(e) => return Err(e),
        };
        Ok(ExecutableSchema { backend, output: Output::JsonValue, source: None })
    }

    /// A template's executable: one automaton, or a composite program when JSON parts need
    /// the structured arm or special tokens are placed (what a registry serves its parts is
    /// recorded with the program's source).
    pub(crate) fn compile_template(
        template: &serde_json::Value,
        options: &CompilerOptions,
    ) -> Result<ExecutableSchema> {
        let recorder = options.registry.clone().map(|inner| Arc::new(RecordingRegistry::new(inner)));
        let mut recording = options.clone();
        if let Some(recorder) = &recorder {
            recording.registry = Some(Registry(Arc::clone(recorder) as Arc<dyn SchemaRegistry>));
        }
        let language = crate::template::template_language(template, &recording)?;
        if language.holes.is_empty() && language.specials.is_empty() {
            return Ok(ExecutableSchema::text(language.dfa));
        }
        let program = CompositeProgram::new(language.dfa, language.holes, language.specials)?;
        let source = ProgramSource {
            kind: SourceKind::Template,
            document: template.clone(),
            remotes: recorder.map(|r| r.served()).unwrap_or_default(),
            identity: options.compile_identity(),
        };
        Ok(ExecutableSchema::composite(program, source))
    }

    /// The raw text of a regular language (a regex's, a choice's) as an executable.
    pub(crate) fn text(language: ByteDfa) -> ExecutableSchema {
        ExecutableSchema::regular(language, Output::Text)
    }

    /// A regular language's automaton as an executable.
    pub(crate) fn regular(language: ByteDfa, output: Output) -> ExecutableSchema {
        ExecutableSchema { backend: Backend::Regular(Arc::new(language)), output, source: None }
    }

    /// A template with JSON parts on the structured arm, as an executable of raw text;
    /// `source`: the template's document, and what a registry served for its parts.
    pub(crate) fn composite(program: CompositeProgram, source: ProgramSource) -> ExecutableSchema {
        ExecutableSchema {
            backend: Backend::Composite(Arc::new(program)),
            output: Output::Text,
            source: Some(Arc::new(source)),
        }
    }

    /// What a structured or composite program was compiled from (`None` on the regular arm).
    pub(crate) fn source(&self) -> Option<&ProgramSource> {
        self.source.as_deref()
    }

    /// Whether the program accepts one JSON value or raw text.
    pub fn output(&self) -> Output {
        self.output
    }

    /// Whether this schema runs on the pushdown (structured) backend, alone or in a
    /// template's JSON parts.
    pub fn requires_structured_backend(&self) -> bool {
        !matches!(self.backend, Backend::Regular(_))
    }

    /// `"regular"`, `"structured"` or `"composite"` (a template with JSON parts on the
    /// structured arm).
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Regular(_) => "regular",
            Backend::Structured(_) => "structured",
            Backend::Composite(_) => "composite",
        }
    }

    /// States of the regular arm's automaton, or nodes of the structured arm's graph (for a
    /// composite template, the automaton's states and its parts' nodes).
    pub fn state_count(&self) -> usize {
        match &self.backend {
            Backend::Regular(dfa) => dfa.state_count(),
            Backend::Structured(program) => program.graph.len(),
            Backend::Composite(program) => program.state_count(),
        }
    }

    /// Approximate heap size, for cache budgets.
    pub fn heap_bytes(&self) -> usize {
        match &self.backend {
            Backend::Regular(dfa) => dfa.heap_bytes(),
            Backend::Structured(program) => program.heap_bytes(),
            Backend::Composite(program) => program.heap_bytes(),
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }

    /// A matcher at the start of the text.
    pub fn start_matcher(&self) -> Matcher<'_> {
        match &self.backend {
            Backend::Regular(dfa) => Matcher { inner: MatcherInner::Regular { dfa, state: dfa.start() } },
            Backend::Structured(program) => {
                Matcher { inner: MatcherInner::Structured { program, matcher: program.start(), dead: false } }
            }
            Backend::Composite(program) => {
                Matcher { inner: MatcherInner::Composite { program, cursor: Some(program.start()) } }
            }
        }
    }

    /// The names of the special tokens the program places (a template's `special` parts).
    pub fn special_token_names(&self) -> &[String] {
        match &self.backend {
            Backend::Composite(program) => &program.specials,
            _ => &[],
        }
    }

    /// Whole-text membership: is `text` a complete accepted instance?
    pub fn accepts(&self, text: &[u8]) -> bool {
        let mut m = self.start_matcher();
        m.feed(text) && m.is_accepting()
    }
}

/// A byte-at-a-time recogniser over an executable: the slow, obviously-correct route that the
/// reference masker and tests use.
#[derive(Debug, Clone)]
pub struct Matcher<'a> {
    inner: MatcherInner<'a>,
}

#[derive(Debug, Clone)]
enum MatcherInner<'a> {
    Regular {
        dfa: &'a ByteDfa,
        state: StateId,
    },
    Structured {
        program: &'a StructuredProgram,
        matcher: DocumentMatcher,
        dead: bool,
    },
    /// `cursor`: `None` once dead.
    Composite {
        program: &'a CompositeProgram,
        cursor: Option<Cursor>,
    },
}

impl Matcher<'_> {
    /// Feeds bytes; false (and the matcher is dead) once the text can no longer be completed.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        match &mut self.inner {
            MatcherInner::Regular { dfa, state } => {
                *state = dfa.run(*state, bytes);
                *state != DEAD
            }
            MatcherInner::Structured { program, matcher, dead } => {
                if !*dead && !matcher.feed_all(&program.graph, bytes) {
                    *dead = true;
                }
                !*dead
            }
            MatcherInner::Composite { program, cursor } => {
                if let Some(at) = cursor {
                    if !program.feed_all(at, bytes) {
                        *cursor = None;
                    }
                }
                cursor.is_some()
            }
        }
    }

    /// Reads the special token the program places under `name` (templates name them), as
    /// [`Matcher::feed`] reads bytes; false (and dead) where the program does not place it.
    pub fn feed_special(&mut self, name: &str) -> bool {
        match &mut self.inner {
            MatcherInner::Composite { program, cursor } => {
                let index = program.specials.iter().position(|n| n == name);
                let read = match (index, cursor.as_mut()) {
                    (Some(index), Some(at)) => program.feed_special(at, index as u8),
                    _ => false,
                };
                if !read {
                    *cursor = None;
                }
                read
            }
            MatcherInner::Regular { state, .. } => {
                *state = DEAD;
                false
            }
            MatcherInner::Structured { dead, .. } => {
                *dead = true;
                false
            }
        }
    }

    /// True when the bytes so far form a complete accepted instance.
    pub fn is_accepting(&self) -> bool {
        match &self.inner {
            MatcherInner::Regular { dfa, state } => *state != DEAD && dfa.is_accepting(*state),
            MatcherInner::Structured { matcher, dead, .. } => !*dead && matcher.is_accepting(),
            MatcherInner::Composite { program, cursor } => cursor.as_ref().is_some_and(|at| program.is_accepting(at)),
        }
    }

    /// True once the bytes fed can no longer be completed into an accepted instance; a dead
    /// matcher stays dead.
    pub fn is_dead(&self) -> bool {
        match &self.inner {
            MatcherInner::Regular { state, .. } => *state == DEAD,
            MatcherInner::Structured { dead, .. } => *dead,
            MatcherInner::Composite { cursor, .. } => cursor.is_none(),
        }
    }
}

/// Whether some schema object of the document reads objects open to further keys or keys by
/// pattern, numbers by value or items by comparison: the parts the regular arm leaves to the
/// structured one. Only orders the two arms (a wrong guess costs time, never a different
/// result), so it looks at every JSON object of the document, schema or not; under
/// `closed_objects`, objects without `additionalProperties` count as closed.
fn likely_structured(root: &serde_json::Value, closed_objects: bool) -> bool {
    use serde_json::Value;
    let names_object = |t: &Value| t == "object" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "object"));
    // An explicit stack: the scan takes no stack frames, however deep the parser let the
    // document (`enum` and `const` values included) nest.
    let mut pending = vec![root];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                let object_keywords = map.contains_key("properties") || map.get("type").is_some_and(names_object);
                let closed = (closed_objects && !map.contains_key("additionalProperties"))
                    || map.get("additionalProperties") == Some(&Value::Bool(false));
                let keys_read =
                    ["patternProperties", "propertyNames"].iter().any(|k| map.get(*k).is_some_and(Value::is_object));
                let by_value = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]
                    .iter()
                    .any(|k| map.get(*k).is_some_and(Value::is_number))
                    || map.get("type").is_some_and(|t| t == "integer")
                    || map.get("uniqueItems") == Some(&Value::Bool(true));
                if (object_keywords && !closed) || keys_read || by_value {
                    return true;
                }
                pending.extend(map.values());
            }
            _ => {}
        }
    }
    false
}
