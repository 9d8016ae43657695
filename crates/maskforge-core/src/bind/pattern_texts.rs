//! Masks inside a `format: "regex"` string. Its reader is a stack machine, not an automaton, so
//! no precomputed row per state exists; but where the reader takes every run of plain code
//! points alike ([`PlainContext`]: between the pattern's tokens, inside a class), the tokens
//! made only of such code points are admitted as one precomputed set, whatever else the state
//! holds, and only the others are walked with the reader.

use std::sync::OnceLock;

use crate::mask;
use crate::structured::PlainContext;
use crate::vocabulary::{TokenTrie, Vocabulary};

/// One vocabulary's tokens split for pattern texts, per plain context, made on first use.
#[derive(Debug, Default)]
pub(super) struct PatternTextSplits {
    between: OnceLock<PlainSplit>,
    in_class: OnceLock<PlainSplit>,
}

/// The tokens a plain context takes alike, and the others.
#[derive(Debug)]
pub(super) struct PlainSplit {
    /// Tokens of complete UTF-8 whose code points the context takes alike.
    pub(super) plain: Vec<u32>,
    /// Every other token, as a byte trie for the reader's walk.
    pub(super) rest: TokenTrie,
}

impl PatternTextSplits {
    pub(super) fn get(&self, context: PlainContext, vocabulary: &Vocabulary, word_count: usize) -> &PlainSplit {
        let cell = match context {
            PlainContext::Between => &self.between,
            PlainContext::InClass => &self.in_class,
        };
        cell.get_or_init(|| PlainSplit::new(context, vocabulary, word_count))
    }
}

impl PlainSplit {
    fn new(context: PlainContext, vocabulary: &Vocabulary, word_count: usize) -> PlainSplit {
        let mut plain = vec![0u32; word_count];
        let mut rest = Vec::new();
        for (id, bytes) in vocabulary.tokens_with_bytes() {
            match std::str::from_utf8(bytes) {
                Ok(text) if !text.is_empty() && text.chars().all(|c| context.takes(c)) => mask::set_bit(&mut plain, id),
                _ => rest.push((bytes.to_vec(), id)),
            }
        }
        PlainSplit { plain, rest: TokenTrie::build(rest) }
    }
}
