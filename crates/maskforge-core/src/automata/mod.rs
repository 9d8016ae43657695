//! Byte-level automata: regular expressions over bytes ([`Re`]), their determinisation through
//! regex-automata, and our own layer over the extracted tables ([`ByteDfa`]): trimming,
//! minimisation, products (intersection, union, difference) and complement, which
//! regex-automata does not offer and the schema combinators (`allOf`, `oneOf`, `not`) need.

mod dfa;
pub mod ecma;
pub mod formats;
pub mod json;
pub mod json_escapes;
mod re;

pub(crate) use dfa::{AutomatonId, EdgeNode, NO_NODE};
pub use dfa::{ByteDfa, StateId, TooManyStates, DEAD};
pub use re::{AnyOrderMembers, CompileLimit, Re};
