//! Decoding of local Hugging Face fast-tokenizer files (`tokenizer.json`) into vocabularies.
//!
//! Only vocabularies whose token bytes can be recovered exactly are accepted: byte-level BPE
//! (GPT-2's bytes-to-unicode alphabet) and SentencePiece-style pieces (`▁` for a space,
//! `<0xNN>` byte fallback). Anything else is rejected rather than guessed at, since a wrong
//! byte mapping silently produces masks that allow invalid output.

use std::fmt;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::{TokenId, Vocabulary};
use crate::error::{Error, Result};

/// Options for [`Vocabulary::from_tokenizer_json`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TokenizerJsonOptions {
    /// EOS ids; when `None` they are inferred from the special added tokens by name.
    pub eos_token_ids: Option<Vec<u32>>,
    /// Width of the mask when the model's logits are padded beyond the tokenizer.
    pub mask_vocab_size: Option<usize>,
}

impl TokenizerJsonOptions {
    /// Sets [`eos_token_ids`](Self::eos_token_ids); needed when the file has no special token
    /// with a known EOS name (`<|endoftext|>`, `</s>`, `<eos>`, ...).
    pub fn with_eos_token_ids(mut self, eos_token_ids: Vec<u32>) -> Self {
        self.eos_token_ids = Some(eos_token_ids);
        self
    }

    /// Sets [`mask_vocab_size`](Self::mask_vocab_size); decoding fails if it is smaller than
    /// the tokenizer.
    pub fn with_mask_vocab_size(mut self, mask_vocab_size: usize) -> Self {
        self.mask_vocab_size = Some(mask_vocab_size);
        self
    }
}

/// EOS names tried in order when no EOS ids are given; the first present wins, so a
/// document-end token is preferred over a chat turn-end token.
const EOS_NAMES: [&str; 6] = ["<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<|im_end|>", "<|eot_id|>"];

impl Vocabulary {
    /// Decodes a local Hugging Face fast-tokenizer JSON text.
    pub fn from_tokenizer_json(json: &str, options: &TokenizerJsonOptions) -> Result<Vocabulary> {
        let file: TokenizerFile =
            serde_json::from_str(json).map_err(|e| Error::Vocabulary(format!("invalid tokenizer JSON: {e}")))?;
        build(file, options)
    }

    /// Same as [`Vocabulary::from_tokenizer_json`], reading the file.
    pub fn from_tokenizer_json_file(path: impl AsRef<Path>, options: &TokenizerJsonOptions) -> Result<Vocabulary> {
        let path = path.as_ref();
        let json = std::fs::read_to_string(path)
            .map_err(|e| Error::Vocabulary(format!("cannot read tokenizer file {}: {e}", path.display())))?;
        Vocabulary::from_tokenizer_json(&json, options).map_err(|e| match e {
            Error::Vocabulary(message) => Error::Vocabulary(format!("{}: {message}", path.display())),
            other => other,
        })
    }
}

#[derive(Deserialize)]
struct TokenizerFile {
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    #[serde(default)]
    pre_tokenizer: Option<Value>,
    #[serde(default)]
    decoder: Option<Value>,
    model: Model,
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    vocab: Option<VocabEntries>,
    #[serde(default)]
    byte_fallback: Option<bool>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    // Only their presence matters, to tell the model type of files that omit `type`.
    #[serde(default)]
    merges: Option<IgnoredAny>,
    #[serde(default)]
    max_input_chars_per_word: Option<IgnoredAny>,
}

/// `(piece, id)` pairs: from a BPE/WordPiece map, or a Unigram `[piece, score]` list (id = index).
/// Read with a hand-written visitor so that large vocabularies are not buffered twice.
struct VocabEntries {
    entries: Vec<(String, u32)>,
    is_list: bool,
}

impl<'de> Deserialize<'de> for VocabEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct VocabVisitor;
        impl<'de> Visitor<'de> for VocabVisitor {
            type Value = VocabEntries;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of piece to id or a list of [piece, score]")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<VocabEntries, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((piece, id)) = map.next_entry::<String, u32>()? {
                    entries.push((piece, id));
                }
                Ok(VocabEntries { entries, is_list: false })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<VocabEntries, A::Error> {
                let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some((piece, _score)) = seq.next_element::<(String, IgnoredAny)>()? {
                    let id =
                        u32::try_from(entries.len()).map_err(|_| serde::de::Error::custom("more than 2^32 pieces"))?;
                    entries.push((piece, id));
                }
                Ok(VocabEntries { entries, is_list: true })
            }
        }
        deserializer.deserialize_any(VocabVisitor)
    }
}

/// How vocabulary pieces map to bytes.
enum PieceEncoding {
    /// GPT-2's bytes-to-unicode alphabet.
    ByteLevel,
    /// Text pieces with marker replacements (`▁` -> space) and optional `<0xNN>` byte fallback.
    SentencePiece { replacements: Vec<(String, String)>, byte_fallback: bool },
}

fn build(file: TokenizerFile, options: &TokenizerJsonOptions) -> Result<Vocabulary> {
    let model = &file.model;
    let kind = model_kind(model);
    match kind.as_str() {
        "BPE" | "Unigram" => {}
        "WordPiece" => {
            return Err(Error::Vocabulary(
                "WordPiece tokenizers are not supported: continuation pieces (`##`) and word boundaries \
                 do not map to exact bytes"
                    .into(),
            ))
        }
        other => {
            return Err(Error::Vocabulary(format!(
                "{other} tokenizers are not supported: only BPE and Unigram vocabularies with recoverable bytes are"
            )))
        }
    }
    for (field, value) in [
        ("continuing_subword_prefix", &model.continuing_subword_prefix),
        ("end_of_word_suffix", &model.end_of_word_suffix),
    ] {
        if value.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(Error::Vocabulary(format!(
                "{kind} model with a {field} is not supported: its pieces do not map to exact bytes"
            )));
        }
    }
    let vocab = match &model.vocab {
        Some(v) => v,
        None => return Err(Error::Vocabulary(format!("{kind} model has no vocab"))),
    };
    if kind == "Unigram" && !vocab.is_list {
        return Err(Error::Vocabulary("Unigram model vocab must be a list of [piece, score]".into()));
    }
    if kind == "BPE" && vocab.is_list {
        return Err(Error::Vocabulary("BPE model vocab must be a map of piece to id".into()));
    }
    let encoding = piece_encoding(&file)?;

    let max_id = vocab.entries.iter().map(|e| e.1).chain(file.added_tokens.iter().map(|t| t.id)).max();
    let size = match max_id {
        Some(id) => id as usize + 1,
        None => return Err(Error::Vocabulary("the tokenizer has no tokens".into())),
    };
    // Ids come from the file; refuse absurdly sparse ones rather than allocating for them.
    let named = vocab.entries.len() + file.added_tokens.len();
    if size > named.saturating_mul(4).max(1 << 20) {
        return Err(Error::Vocabulary(format!(
            "token id {} is far beyond the {named} tokens the file defines",
            size - 1
        )));
    }

    let mut tokens: Vec<Option<Vec<u8>>> = vec![None; size];
    // Added tokens take precedence over the model's piece for the same id, as in the tokenizer itself.
    let mut is_added = vec![false; size];
    for token in &file.added_tokens {
        let slot = token.id as usize;
        is_added[slot] = true;
        // Special tokens are never generated as text; others stand for their literal content.
        tokens[slot] =
            if token.special || token.content.is_empty() { None } else { Some(token.content.as_bytes().to_vec()) };
    }
    let mut seen = vec![false; size];
    for (piece, id) in &vocab.entries {
        let slot = *id as usize;
        if std::mem::replace(&mut seen[slot], true) {
            return Err(Error::Vocabulary(format!("token id {id} appears twice in model.vocab")));
        }
        if is_added[slot] {
            continue;
        }
        let bytes = match &encoding {
            PieceEncoding::ByteLevel => byte_level_bytes(piece).ok_or_else(|| {
                Error::Vocabulary(format!(
                    "byte-level piece {piece:?} (id {id}) has a character outside the bytes-to-unicode alphabet"
                ))
            })?,
            PieceEncoding::SentencePiece { replacements, byte_fallback } => {
                sentencepiece_bytes(piece, replacements, *byte_fallback)
            }
        };
        tokens[slot] = if bytes.is_empty() { None } else { Some(bytes) };
    }

    let eos = match &options.eos_token_ids {
        Some(ids) => ids.clone(),
        None => vec![infer_eos(&file.added_tokens)?],
    };
    // Special tokens by their content, for templates that place them (the first of a name).
    let mut named: Vec<(String, TokenId)> = Vec::new();
    for token in file.added_tokens.iter().filter(|t| t.special && !t.content.is_empty()) {
        if !named.iter().any(|(name, _)| *name == token.content) {
            named.push((token.content.clone(), token.id));
        }
    }
    let vocabulary = Vocabulary::from_id_ordered_tokens(tokens, eos)?.with_special_tokens(named)?;
    match options.mask_vocab_size {
        Some(n) => vocabulary.with_mask_vocab_size(n),
        None => Ok(vocabulary),
    }
}

/// The model type, inferred from the fields present when `type` is absent (older files).
fn model_kind(model: &Model) -> String {
    if let Some(kind) = &model.kind {
        return kind.clone();
    }
    if model.vocab.as_ref().is_some_and(|v| v.is_list) {
        "Unigram"
    } else if model.merges.is_some() {
        "BPE"
    } else if model.max_input_chars_per_word.is_some() || model.continuing_subword_prefix.is_some() {
        "WordPiece"
    } else {
        "WordLevel"
    }
    .to_string()
}

/// Flattens `Sequence` components into their leaves.
fn leaves<'a>(component: Option<&'a Value>, out: &mut Vec<&'a Value>) {
    let Some(component) = component else { return };
    if component.get("type").and_then(Value::as_str) == Some("Sequence") {
        for key in ["decoders", "pretokenizers", "pre_tokenizers"] {
            if let Some(Value::Array(items)) = component.get(key) {
                for item in items {
                    leaves(Some(item), out);
                }
            }
        }
    } else if !component.is_null() {
        out.push(component);
    }
}

fn type_of(component: &Value) -> &str {
    component.get("type").and_then(Value::as_str).unwrap_or("")
}

fn piece_encoding(file: &TokenizerFile) -> Result<PieceEncoding> {
    let mut decoders = Vec::new();
    leaves(file.decoder.as_ref(), &mut decoders);
    let mut pre_tokenizers = Vec::new();
    leaves(file.pre_tokenizer.as_ref(), &mut pre_tokenizers);

    let byte_level = decoders.iter().chain(&pre_tokenizers).any(|c| type_of(c) == "ByteLevel");
    let mut replacements = Vec::new();
    let mut byte_fallback = file.model.byte_fallback.unwrap_or(false);
    let mut sentencepiece = byte_fallback;
    for decoder in &decoders {
        match type_of(decoder) {
            "ByteLevel" | "Fuse" => {}
            // Strips the whole decoded text (SentencePiece's dummy prefix), not individual pieces.
            "Strip" => {}
            "ByteFallback" => {
                byte_fallback = true;
                sentencepiece = true;
            }
            "Replace" => {
                let from = decoder.get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str);
                let to = decoder.get("content").and_then(Value::as_str);
                match (from, to) {
                    (Some(from), Some(to)) if !from.is_empty() => replacements.push((from.to_string(), to.to_string())),
                    _ => {
                        return Err(Error::Vocabulary(
                            "a Replace decoder with a regex or empty pattern is not supported: token bytes cannot be \
                             recovered exactly"
                                .into(),
                        ))
                    }
                }
                sentencepiece = true;
            }
            "Metaspace" => {
                let marker = decoder.get("replacement").and_then(Value::as_str).unwrap_or("\u{2581}");
                replacements.push((marker.to_string(), " ".to_string()));
                sentencepiece = true;
            }
            other => {
                return Err(Error::Vocabulary(format!(
                    "decoder {other:?} is not supported: token bytes cannot be recovered exactly"
                )))
            }
        }
    }
    for pre_tokenizer in &pre_tokenizers {
        if type_of(pre_tokenizer) == "Metaspace" {
            sentencepiece = true;
            if !decoders.iter().any(|d| type_of(d) == "Metaspace") {
                let marker = pre_tokenizer.get("replacement").and_then(Value::as_str).unwrap_or("\u{2581}");
                replacements.push((marker.to_string(), " ".to_string()));
            }
        }
    }
    match (byte_level, sentencepiece) {
        (true, true) => Err(Error::Vocabulary(
            "the tokenizer mixes byte-level and SentencePiece-style decoding: token bytes cannot be recovered exactly"
                .into(),
        )),
        (true, false) => Ok(PieceEncoding::ByteLevel),
        (false, true) => {
            if replacements.is_empty() {
                replacements.push(("\u{2581}".to_string(), " ".to_string()));
            }
            Ok(PieceEncoding::SentencePiece { replacements, byte_fallback })
        }
        (false, false) => Err(Error::Vocabulary(format!(
            "cannot tell how this {} tokenizer's pieces map to bytes: no ByteLevel or SentencePiece-style \
             (Metaspace, `▁` Replace, ByteFallback) component",
            model_kind(&file.model)
        ))),
    }
}

/// The byte each character of GPT-2's bytes-to-unicode alphabet stands for, indexed by code point.
fn byte_level_table() -> [Option<u8>; 324] {
    let mut table = [None; 324];
    let mut next = 256usize;
    for byte in 0..=255u8 {
        // Printable Latin-1 bytes stand for themselves; the others are shifted past 255 in order.
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let code = if printable {
            byte as usize
        } else {
            next += 1;
            next - 1
        };
        table[code] = Some(byte);
    }
    table
}

fn byte_level_bytes(piece: &str) -> Option<Vec<u8>> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<[Option<u8>; 324]> = OnceLock::new();
    let table = TABLE.get_or_init(byte_level_table);
    piece.chars().map(|c| table.get(c as usize).copied().flatten()).collect()
}

fn sentencepiece_bytes(piece: &str, replacements: &[(String, String)], byte_fallback: bool) -> Vec<u8> {
    if byte_fallback {
        if let Some(byte) = fallback_byte(piece) {
            return vec![byte];
        }
    }
    let mut text = piece.to_string();
    for (from, to) in replacements {
        if text.contains(from.as_str()) {
            text = text.replace(from.as_str(), to);
        }
    }
    text.into_bytes()
}

/// `<0xNN>` -> NN.
fn fallback_byte(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn infer_eos(added_tokens: &[AddedToken]) -> Result<TokenId> {
    for name in EOS_NAMES {
        if let Some(token) = added_tokens.iter().find(|t| t.special && t.content == name) {
            return Ok(token.id);
        }
    }
    Err(Error::Vocabulary(format!(
        "cannot infer the EOS token: no special added token named {}; pass the EOS ids explicitly",
        EOS_NAMES.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(json: &str) -> Result<Vocabulary> {
        Vocabulary::from_tokenizer_json(json, &TokenizerJsonOptions::default())
    }

    fn message(err: Error) -> String {
        match err {
            Error::Vocabulary(m) => m,
            other => panic!("expected a vocabulary error, got {other:?}"),
        }
    }

    const BYTE_LEVEL: &str = r#"{
        "added_tokens": [
            {"id": 6, "content": "<|endoftext|>", "special": true},
            {"id": 7, "content": "<tool call>", "special": false}
        ],
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false}
        ]},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": {"a": 0, "Ġ": 1, "Ġthe": 2, "Ċ": 3, "Ã©": 4, "ĀĠ": 5, "<|endoftext|>": 6},
                  "merges": ["Ġ t", "Ġt h"]}
    }"#;

    #[test]
    fn byte_level_pieces_map_through_the_gpt2_alphabet() {
        let v = load(BYTE_LEVEL).unwrap();
        assert_eq!(v.tokenizer_size(), 8);
        assert_eq!(v.token_bytes(0), Some(&b"a"[..]));
        assert_eq!(v.token_bytes(1), Some(&b" "[..]));
        assert_eq!(v.token_bytes(2), Some(&b" the"[..]));
        assert_eq!(v.token_bytes(3), Some(&b"\n"[..]));
        assert_eq!(v.token_bytes(4), Some("é".as_bytes()));
        assert_eq!(v.token_bytes(5), Some(&b"\x00 "[..]));
        assert_eq!(v.token_bytes(6), None);
        // Non-special added tokens are literal text, not bytes-to-unicode encoded.
        assert_eq!(v.token_bytes(7), Some(&b"<tool call>"[..]));
        assert_eq!(v.eos_token_ids(), &[6]);
    }

    #[test]
    fn byte_level_table_covers_every_byte_once() {
        let table = byte_level_table();
        let mut bytes: Vec<u8> = table.iter().flatten().copied().collect();
        bytes.sort_unstable();
        assert_eq!(bytes, (0..=255u8).collect::<Vec<_>>());
        assert_eq!(table['Ġ' as usize], Some(b' '));
        assert_eq!(table['Ń' as usize], Some(0xAD));
    }

    #[test]
    fn byte_level_piece_outside_the_alphabet_is_an_error() {
        let json = BYTE_LEVEL.replace(r#""a": 0"#, r#""a▁": 0"#);
        assert!(message(load(&json).unwrap_err()).contains("outside the bytes-to-unicode alphabet"));
    }

    const SENTENCEPIECE: &str = r#"{
        "added_tokens": [
            {"id": 0, "content": "<unk>", "special": true},
            {"id": 1, "content": "<s>", "special": true},
            {"id": 2, "content": "</s>", "special": true}
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
        ]},
        "pre_tokenizer": null,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}
        ]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true,
                  "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xE2>": 4, "▁the": 5, "▁": 6, "é": 7, "a▁▁b": 8},
                  "merges": []}
    }"#;

    #[test]
    fn sentencepiece_pieces_and_byte_fallback() {
        let v = load(SENTENCEPIECE).unwrap();
        assert_eq!(v.tokenizer_size(), 9);
        for id in 0..3 {
            assert_eq!(v.token_bytes(id), None);
        }
        assert_eq!(v.token_bytes(3), Some(&b"\n"[..]));
        assert_eq!(v.token_bytes(4), Some(&[0xE2u8][..]));
        assert_eq!(v.token_bytes(5), Some(&b" the"[..]));
        assert_eq!(v.token_bytes(6), Some(&b" "[..]));
        assert_eq!(v.token_bytes(7), Some("é".as_bytes()));
        assert_eq!(v.token_bytes(8), Some(&b"a  b"[..]));
        assert_eq!(v.eos_token_ids(), &[2]);
    }

    #[test]
    fn byte_fallback_pieces_are_text_without_byte_fallback() {
        let json = r#"{
            "added_tokens": [{"id": 2, "content": "</s>", "special": true}],
            "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
            "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
            "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["<0x41>", -1.0], ["</s>", 0.0], ["▁hi", -2.5]]}
        }"#;
        let v = load(json).unwrap();
        assert_eq!(v.tokenizer_size(), 4);
        assert_eq!(v.token_bytes(0), Some(&b"<unk>"[..]));
        assert_eq!(v.token_bytes(1), Some(&b"<0x41>"[..]));
        assert_eq!(v.token_bytes(2), None);
        assert_eq!(v.token_bytes(3), Some(&b" hi"[..]));
    }

    #[test]
    fn special_and_non_special_added_tokens() {
        let json = SENTENCEPIECE.replace(
            r#"{"id": 2, "content": "</s>", "special": true}"#,
            r#"{"id": 2, "content": "</s>", "special": true},
               {"id": 9, "content": "[INST]", "special": true},
               {"id": 10, "content": "<tool▁call>", "special": false}"#,
        );
        let v = load(&json).unwrap();
        assert_eq!(v.tokenizer_size(), 11);
        assert_eq!(v.token_bytes(9), None);
        assert_eq!(v.token_bytes(10), Some("<tool▁call>".as_bytes()));
    }

    #[test]
    fn id_gaps_have_no_bytes() {
        let json = r#"{
            "added_tokens": [{"id": 9, "content": "<|endoftext|>", "special": true}],
            "pre_tokenizer": {"type": "ByteLevel"},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": {"a": 0, "b": 4}, "merges": []}
        }"#;
        let v = load(json).unwrap();
        assert_eq!(v.tokenizer_size(), 10);
        assert_eq!(v.token_bytes(4), Some(&b"b"[..]));
        for id in [1, 2, 3, 5, 6, 7, 8, 9] {
            assert_eq!(v.token_bytes(id), None);
        }
        assert_eq!(v.tokens_with_bytes().count(), 2);
    }

    #[test]
    fn explicit_eos_and_mask_size() {
        let options = TokenizerJsonOptions::default().with_eos_token_ids(vec![2, 5]).with_mask_vocab_size(16);
        let v = Vocabulary::from_tokenizer_json(SENTENCEPIECE, &options).unwrap();
        assert_eq!(v.eos_token_ids(), &[2, 5]);
        assert_eq!(v.token_bytes(5), None);
        assert_eq!(v.mask_vocab_size(), 16);
        assert_eq!(v.tokenizer_size(), 9);

        let too_small = TokenizerJsonOptions::default().with_mask_vocab_size(4);
        assert!(Vocabulary::from_tokenizer_json(SENTENCEPIECE, &too_small).is_err());
        let outside = TokenizerJsonOptions::default().with_eos_token_ids(vec![99]);
        assert!(Vocabulary::from_tokenizer_json(SENTENCEPIECE, &outside).is_err());
    }

    #[test]
    fn eos_preference_order() {
        let json = BYTE_LEVEL.replace(
            r#"{"id": 6, "content": "<|endoftext|>", "special": true}"#,
            r#"{"id": 6, "content": "<|im_end|>", "special": true},
               {"id": 8, "content": "</s>", "special": true}"#,
        );
        assert_eq!(load(&json).unwrap().eos_token_ids(), &[8]);
    }

    #[test]
    fn missing_eos_is_an_error() {
        let json = BYTE_LEVEL.replace("<|endoftext|>", "<|pad|>");
        let m = message(load(&json).unwrap_err());
        assert!(m.contains("EOS"), "{m}");
        assert!(m.contains("explicitly"), "{m}");
        // A non-special token named like EOS does not count.
        let json = BYTE_LEVEL.replace(r#""<|endoftext|>", "special": true"#, r#""<|endoftext|>", "special": false"#);
        assert!(message(load(&json).unwrap_err()).contains("EOS"));
    }

    #[test]
    fn wordpiece_is_rejected() {
        let json = r###"{
            "added_tokens": [{"id": 0, "content": "[SEP]", "special": true}],
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {"[SEP]": 0, "a": 1, "##b": 2}}
        }"###;
        assert!(message(load(json).unwrap_err()).contains("WordPiece"));
        let untyped = json.replace(r#""type": "WordPiece", "unk_token""#, r#""unk_token""#);
        assert!(message(load(&untyped).unwrap_err()).contains("WordPiece"));
    }

    #[test]
    fn unrecoverable_bytes_are_rejected() {
        let suffix = BYTE_LEVEL.replace(r#""type": "BPE","#, r#""type": "BPE", "end_of_word_suffix": "</w>","#);
        assert!(message(load(&suffix).unwrap_err()).contains("end_of_word_suffix"));
        let no_decoder = SENTENCEPIECE
            .replace(r#""byte_fallback": true"#, r#""byte_fallback": false"#)
            .replace(r#""decoder": {"type": "Sequence""#, r#""decoder": null, "x": {"type": "Sequence""#);
        assert!(message(load(&no_decoder).unwrap_err()).contains("cannot tell"));
        let bpe_decoder =
            BYTE_LEVEL.replace(r#""decoder": {"type": "ByteLevel"}"#, r#""decoder": {"type": "BPEDecoder"}"#);
        assert!(message(load(&bpe_decoder).unwrap_err()).contains("BPEDecoder"));
        let word_level = r#"{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}"#;
        assert!(message(load(word_level).unwrap_err()).contains("WordLevel"));
    }

    #[test]
    fn malformed_json_is_an_error() {
        assert!(message(load("{").unwrap_err()).contains("invalid tokenizer JSON"));
        assert!(message(load(r#"{"model": {"type": "BPE", "vocab": {"a": "x"}}}"#).unwrap_err())
            .contains("invalid tokenizer JSON"));
        assert!(load("[]").is_err());
        let duplicate = r#"{"decoder": {"type": "ByteLevel"}, "added_tokens": [{"id": 1, "content": "</s>", "special": true}],
                           "model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}}"#;
        assert!(message(load(duplicate).unwrap_err()).contains("twice"));
        let sparse = r#"{"decoder": {"type": "ByteLevel"}, "added_tokens": [{"id": 4000000000, "content": "</s>", "special": true}],
                        "model": {"type": "BPE", "vocab": {"a": 0}}}"#;
        assert!(message(load(sparse).unwrap_err()).contains("far beyond"));
    }

    #[test]
    fn empty_pieces_have_no_bytes() {
        let json = BYTE_LEVEL.replace(r#""a": 0"#, r#""": 0"#);
        assert_eq!(load(&json).unwrap().token_bytes(0), None);
    }

    #[test]
    fn file_errors_name_the_path() {
        let err = Vocabulary::from_tokenizer_json_file("/nonexistent/tokenizer.json", &TokenizerJsonOptions::default());
        assert!(message(err.unwrap_err()).contains("/nonexistent/tokenizer.json"));
    }
}
