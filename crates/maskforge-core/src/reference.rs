//! The reference masker: a slow route that decides every token independently, by running the
//! prefix and the token's bytes on a fresh matcher. Tests compare it bit for bit with the fast
//! masks; it shares no code with binding (no trie, no classes, no rows).

use crate::executable::ExecutableSchema;
use crate::mask;
use crate::vocabulary::Vocabulary;

/// The exact mask after `prefix` (the bytes generated so far), or `None` when `prefix` itself
/// cannot be completed.
pub fn reference_mask(executable: &ExecutableSchema, vocabulary: &Vocabulary, prefix: &[u8]) -> Option<Vec<u32>> {
    let mut at_prefix = executable.start_matcher();
    if !at_prefix.feed(prefix) {
        return None;
    }
    let mut words = vec![0u32; mask::word_count(vocabulary.mask_vocab_size())];
    for (id, bytes) in vocabulary.tokens_with_bytes() {
        let mut m = at_prefix.clone();
        if m.feed(bytes) {
            mask::set_bit(&mut words, id);
        }
    }
    // Special tokens have no bytes: the program reads them by name.
    for name in executable.special_token_names() {
        if let Some(id) = vocabulary.special_token_id(name) {
            if at_prefix.clone().feed_special(name) {
                mask::set_bit(&mut words, id);
            }
        }
    }
    if at_prefix.is_accepting() {
        for &eos in vocabulary.eos_token_ids() {
            mask::set_bit(&mut words, eos);
        }
    }
    Some(words)
}
