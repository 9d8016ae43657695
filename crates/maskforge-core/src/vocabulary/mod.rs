//! Tokenizer vocabularies: token id -> bytes, EOS ids, and the compiled form binding needs.

mod compiled;
#[cfg(feature = "huggingface-hub")]
mod pretrained;
#[cfg(feature = "tokenizer-processing")]
mod tokenizer_json;

pub use compiled::{CompiledVocabulary, Descend, Run, TokenTrie};
#[cfg(feature = "huggingface-hub")]
pub use pretrained::PretrainedOptions;
#[cfg(feature = "tokenizer-processing")]
pub use tokenizer_json::TokenizerJsonOptions;

use crate::error::{Error, Result};

/// A token id, as the model's logits index it.
pub type TokenId = u32;

/// A tokenizer's vocabulary as the masks see it.
///
/// Token ids index `tokens`; an entry of `None` is a token with no bytes to generate
/// (special, control or unused ids). Such ids are never allowed, except EOS ids, which are
/// allowed exactly when the output is a complete accepted instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    tokens: Vec<Option<Vec<u8>>>,
    eos_token_ids: Vec<TokenId>,
    mask_vocab_size: usize,
    /// Special tokens by name (their content in the tokenizer), sorted: templates name them.
    special_tokens: Vec<(String, TokenId)>,
}

impl Vocabulary {
    /// Builds a vocabulary from id-ordered token bytes (`None` for ids without bytes) and one or
    /// more EOS ids. EOS ids never generate bytes, whatever their entry holds.
    ///
    /// ```
    /// use maskforge_core::Vocabulary;
    ///
    /// let tokens = vec![Some(b"{".to_vec()), Some(b"}".to_vec()), None, Some(b"</s>".to_vec())];
    /// let vocabulary = Vocabulary::from_id_ordered_tokens(tokens, 3)?.with_mask_vocab_size(64)?;
    /// assert_eq!((vocabulary.tokenizer_size(), vocabulary.mask_vocab_size()), (4, 64));
    /// assert_eq!(vocabulary.token_bytes(3), None); // EOS generates nothing
    /// assert!(vocabulary.is_eos(3));
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn from_id_ordered_tokens(tokens: Vec<Option<Vec<u8>>>, eos_token_ids: impl Into<EosTokenIds>) -> Result<Self> {
        let eos_token_ids = eos_token_ids.into().0;
        if eos_token_ids.is_empty() {
            return Err(Error::Vocabulary("at least one EOS token id is required".into()));
        }
        let mut tokens = tokens;
        if tokens.len() > u32::MAX as usize {
            return Err(Error::Vocabulary("more than 2^32 tokens".into()));
        }
        for &eos in &eos_token_ids {
            match tokens.get_mut(eos as usize) {
                Some(slot) => *slot = None,
                None => {
                    return Err(Error::Vocabulary(format!(
                        "EOS id {eos} is outside the vocabulary of {} tokens",
                        tokens.len()
                    )))
                }
            }
        }
        for (id, token) in tokens.iter().enumerate() {
            if let Some(bytes) = token {
                if bytes.is_empty() {
                    return Err(Error::Vocabulary(format!(
                        "token {id} has empty bytes; use None for ids without bytes"
                    )));
                }
            }
        }
        let mut eos_sorted = eos_token_ids;
        eos_sorted.sort_unstable();
        eos_sorted.dedup();
        let mask_vocab_size = tokens.len();
        Ok(Vocabulary { tokens, eos_token_ids: eos_sorted, mask_vocab_size, special_tokens: Vec::new() })
    }

    /// Names the vocabulary's special tokens (ids without bytes, such as `<|python_tag|>` or
    /// `[TOOL_CALLS]`), so that a template can place them; `tokenizer.json` files name theirs.
    /// A name must be non-empty and given once, and its id must have no bytes.
    pub fn with_special_tokens(mut self, named: impl IntoIterator<Item = (String, TokenId)>) -> Result<Self> {
        let mut named: Vec<(String, TokenId)> = named.into_iter().collect();
        named.sort();
        for pair in named.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(Error::Vocabulary(format!("special token {:?} is named twice", pair[0].0)));
            }
        }
        for (name, id) in &named {
            if name.is_empty() || *id as usize >= self.tokens.len() || self.token_bytes(*id).is_some() {
                return Err(Error::Vocabulary(format!(
                    "special token {name:?} (id {id}) must be a named id of the tokenizer without bytes"
                )));
            }
        }
        self.special_tokens = named;
        Ok(self)
    }

    /// The id of the special token named `name`, if the vocabulary names one.
    pub fn special_token_id(&self, name: &str) -> Option<TokenId> {
        let at = self.special_tokens.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok()?;
        Some(self.special_tokens[at].1)
    }

    /// Widens the mask beyond the tokenizer's size, for models whose logits are padded.
    /// The padding ids have no bytes and are never allowed.
    pub fn with_mask_vocab_size(mut self, mask_vocab_size: usize) -> Result<Self> {
        if mask_vocab_size < self.tokens.len() {
            return Err(Error::Vocabulary(format!(
                "mask_vocab_size {mask_vocab_size} is smaller than the tokenizer's {} tokens",
                self.tokens.len()
            )));
        }
        if mask_vocab_size > u32::MAX as usize {
            return Err(Error::Vocabulary("mask_vocab_size above 2^32".into()));
        }
        self.mask_vocab_size = mask_vocab_size;
        Ok(self)
    }

    /// Number of ids the tokenizer defines.
    pub fn tokenizer_size(&self) -> usize {
        self.tokens.len()
    }

    /// Number of ids a mask covers (at least the tokenizer's size).
    pub fn mask_vocab_size(&self) -> usize {
        self.mask_vocab_size
    }

    /// The bytes a token generates, or `None` for EOS, special, unused and padding ids.
    pub fn token_bytes(&self, id: TokenId) -> Option<&[u8]> {
        self.tokens.get(id as usize).and_then(|t| t.as_deref())
    }

    /// The EOS ids, sorted.
    pub fn eos_token_ids(&self) -> &[TokenId] {
        &self.eos_token_ids
    }

    /// Whether `id` is one of the EOS ids.
    pub fn is_eos(&self, id: TokenId) -> bool {
        self.eos_token_ids.binary_search(&id).is_ok()
    }

    /// `(id, bytes)` of every token that has bytes, in id order.
    pub fn tokens_with_bytes(&self) -> impl Iterator<Item = (TokenId, &[u8])> + '_ {
        self.tokens.iter().enumerate().filter_map(|(id, t)| t.as_deref().map(|b| (id as TokenId, b)))
    }
}

/// One or several EOS ids (`build_vocabulary(50256, ...)` or `build_vocabulary(vec![2, 32000], ...)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EosTokenIds(pub Vec<TokenId>);

impl From<TokenId> for EosTokenIds {
    fn from(id: TokenId) -> Self {
        EosTokenIds(vec![id])
    }
}

impl From<Vec<TokenId>> for EosTokenIds {
    fn from(ids: Vec<TokenId>) -> Self {
        EosTokenIds(ids)
    }
}

impl From<&[TokenId]> for EosTokenIds {
    fn from(ids: &[TokenId]) -> Self {
        EosTokenIds(ids.to_vec())
    }
}

/// Builds a vocabulary from `(id, bytes)` pairs; ids that no pair names have no bytes.
/// The tokenizer's size is one past the largest id named (EOS included).
pub fn build_vocabulary(
    eos_token_ids: impl Into<EosTokenIds>,
    token_map: impl IntoIterator<Item = (TokenId, Vec<u8>)>,
) -> Result<Vocabulary> {
    let eos = eos_token_ids.into();
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    let grow = |tokens: &mut Vec<Option<Vec<u8>>>, id: TokenId| {
        if tokens.len() <= id as usize {
            tokens.resize(id as usize + 1, None);
        }
    };
    for (id, bytes) in token_map {
        grow(&mut tokens, id);
        if tokens[id as usize].is_some() {
            return Err(Error::Vocabulary(format!("token id {id} appears twice")));
        }
        tokens[id as usize] = Some(bytes);
    }
    for &id in &eos.0 {
        grow(&mut tokens, id);
    }
    Vocabulary::from_id_ordered_tokens(tokens, eos)
}
