//! The packed mask layout: token `i` is allowed when bit `i % 32` of word `i / 32` is set.
//! This is the int32 bitmask layout that other engines' `apply_token_bitmask_inplace` kernels read.

use crate::error::{Error, Result};

/// `ceil(vocab_size / 32)`.
pub fn word_count(vocab_size: usize) -> usize {
    vocab_size.div_ceil(32)
}

/// Allows `token`. Panics when `token` is beyond the buffer (`token / 32 >= words.len()`).
#[inline]
pub fn set_bit(words: &mut [u32], token: u32) {
    words[(token / 32) as usize] |= 1 << (token % 32);
}

/// Forbids `token`. Panics when `token` is beyond the buffer.
#[inline]
pub(crate) fn clear_bit(words: &mut [u32], token: u32) {
    words[(token / 32) as usize] &= !(1 << (token % 32));
}

/// Sets `token`'s bit when `allowed`, clears it otherwise.
#[inline]
pub(crate) fn set_bit_to(words: &mut [u32], token: u32, allowed: bool) {
    if allowed {
        set_bit(words, token);
    } else {
        clear_bit(words, token);
    }
}

/// Whether `token` is allowed; false for ids beyond the buffer.
#[inline]
pub fn get_bit(words: &[u32], token: u32) -> bool {
    words.get((token / 32) as usize).is_some_and(|w| w & (1 << (token % 32)) != 0)
}

/// Checks a word buffer's size.
pub(crate) fn check_words(buffer: &[u32], needed: usize) -> Result<()> {
    if buffer.len() < needed {
        return Err(Error::MaskBuffer { needed, actual: buffer.len(), unit: "u32 words" });
    }
    Ok(())
}

/// Writes `words` as little-endian bytes (correct on big-endian targets too).
pub(crate) fn write_le_bytes(words: &[u32], out: &mut [u8]) -> Result<()> {
    let needed = words.len() * 4;
    if out.len() < needed {
        return Err(Error::MaskBuffer { needed, actual: out.len(), unit: "bytes" });
    }
    if cfg!(target_endian = "little") {
        // SAFETY: u32 has no padding and every bit pattern is a valid u8 sequence; on a
        // little-endian target the in-memory bytes are the little-endian encoding.
        let bytes = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), needed) };
        out[..needed].copy_from_slice(bytes);
    } else {
        for (chunk, word) in out[..needed].chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
    Ok(())
}

/// The ids of the set bits, in order.
pub fn allowed_ids(words: &[u32]) -> Vec<u32> {
    let mut ids = Vec::new();
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            let bit = w.trailing_zeros();
            ids.push(i as u32 * 32 + bit);
            w &= w - 1;
        }
    }
    ids
}
