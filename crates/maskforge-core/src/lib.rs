//! # maskforge-core
//!
//! Compiles a JSON Schema into an executable and, at every decoding step, writes a packed
//! allowed-token bitmask over a tokenizer vocabulary, so that a language model can only produce
//! JSON that the schema accepts.
//!
//! The pipeline has three shared, immutable products and one mutable object:
//!
//! 1. [`SchemaProgram`]: the schema parsed, resolved and compiled ([`Compiler::compile_json_schema`]);
//!    vocabulary-independent.
//! 2. [`CompiledVocabulary`]: token id -> bytes, EOS ids and the token trie; built once per tokenizer.
//! 3. [`BoundSchema`]: a program joined to a vocabulary ([`SchemaProgram::bind`]).
//! 4. [`Session`]: the position of one sequence ([`BoundSchema::start_session`]).
//!
//! ```
//! use std::sync::Arc;
//! use maskforge_core::{build_vocabulary, CompiledVocabulary, Compiler, CompilerOptions};
//!
//! let tokens = [&b"{"[..], b"}", b"\"", b"a", b"b", b":", b",", b" ", b"true", b"null"];
//! let token_map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
//! let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(10, token_map)?))?;
//!
//! let compiler = Compiler::new(CompilerOptions::default());
//! let program = compiler.compile_json_schema(r#"{"enum": ["ab", true]}"#)?;
//! let bound = program.bind(&vocabulary)?;
//! let mut session = bound.start_session()?;
//! let mut mask = vec![0u32; bound.mask_word_count()];
//! session.write_mask(&mut mask)?;
//! assert_eq!(mask[0], 1 << 2 | 1 << 7 | 1 << 8); // `"`, leading whitespace, or `true`
//! for token in [2, 3, 4, 2] {
//!     session.advance(token)?;
//! }
//! assert!(session.is_accepting());
//! session.advance(10)?; // EOS
//! assert!(session.is_finished());
//! # Ok::<(), maskforge_core::Error>(())
//! ```

#![warn(missing_docs)]

mod automata;
mod batch;
mod bind;
mod cache;
mod compile_stack;
mod compiler;
mod composite;
mod error;
mod executable;
mod image;
mod limits;
pub mod low_level;
pub mod mask;
mod numbers;
mod options;
mod reference;
mod registry;
mod regular;
pub mod runtime;
mod schema;
mod session;
mod structured;
mod template;
mod text;
mod vocabulary;

pub use batch::{advance_batch, fill_masks, rollback_batch};
pub use bind::{BoundSchema, MaskCost, MaskRoute};
pub use cache::CacheStats;
pub use compiler::{Compiler, SchemaProgram};
pub use error::{Diagnostic, DiagnosticCode, Error, LoadError, RejectReason, Result};
pub use executable::{ExecutableSchema, Output};
pub use limits::SchemaResourceLimits;
pub use options::{BindPolicy, CompilerOptions, Draft, PropertyOrder, SessionOptions};
pub use registry::{MapRegistry, Registry, SchemaRegistry};
pub use session::{Session, MAX_FORCED_BYTES};
#[cfg(feature = "huggingface-hub")]
pub use vocabulary::PretrainedOptions;
#[cfg(feature = "tokenizer-processing")]
pub use vocabulary::TokenizerJsonOptions;
pub use vocabulary::{build_vocabulary, CompiledVocabulary, EosTokenIds, TokenId, Vocabulary};
