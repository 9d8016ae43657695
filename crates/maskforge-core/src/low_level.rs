//! Internals exposed for the project's own tests, benchmarks, fuzz targets and Python bindings:
//! the automata, the reference masker, the parsed schema document and each arm alone. Nothing
//! here is needed to compile schemas and write masks, and any of it may change in any release.

pub use crate::automata::{ecma, formats, json, json_escapes, AnyOrderMembers, ByteDfa, Re, StateId, DEAD};
pub use crate::batch::{available_threads, fill_rows};
pub use crate::executable::{Matcher, COMPILE_STACK_BYTES};
pub use crate::reference::reference_mask;
pub use crate::regular::compile_automaton as compile_regular;
pub use crate::schema::SchemaDocument;
pub use crate::vocabulary::{Descend, Run, TokenTrie};
