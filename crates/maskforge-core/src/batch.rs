//! Batches: many sessions' masks written at once, split across threads when the batch's work is
//! large enough to pay for them.

use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::session::Session;

/// Work below which another thread costs more than it saves: starting and joining one takes
/// tens of microseconds, while a mask row costs from under a microsecond (a copied DFA row) to
/// hundreds (a structured mask over a large vocabulary).
const MIN_WORK_PER_THREAD: Duration = Duration::from_micros(200);

/// The cores the machine offers, read once (`available_parallelism` reads cgroup files each call).
pub fn available_threads() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, usize::from))
}

/// Writes `sessions[i]`'s mask into row `i` of `out` (`mask_word_count` words a row, rows back to
/// back; words after the last row are left alone), on at most `threads` threads (0: the
/// machine's cores). Every session must be bound to one vocabulary's mask width
/// ([`Error::BatchMismatch`] otherwise); a short `out` is [`Error::MaskBuffer`]. Nothing is
/// written when an argument is refused.
///
/// ```
/// use std::sync::Arc;
/// use maskforge_core::{build_vocabulary, fill_masks, CompiledVocabulary, Compiler};
///
/// let tokens = [&b"1"[..], b"2", b"["];
/// let map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
/// let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(3, map)?))?;
/// let bound = Compiler::without_cache().compile_json_schema(r#"{"type": "array"}"#)?.bind(&vocabulary)?;
/// let (empty, mut open) = (bound.start_session()?, bound.start_session()?);
/// open.advance(2)?;
/// let mut out = vec![0u32; 2 * bound.mask_word_count()];
/// fill_masks(&[&empty, &open], &mut out, 0)?;
/// assert_eq!(out, vec![0b100, 0b111]); // `[` only; inside the array `1`, `2` or `[`
/// # Ok::<(), maskforge_core::Error>(())
/// ```
pub fn fill_masks(sessions: &[&Session], out: &mut [u32], threads: usize) -> Result<()> {
    let Some(first) = sessions.first() else { return Ok(()) };
    let words = first.mask_word_count();
    if let Some(index) = sessions.iter().position(|s| s.mask_word_count() != words) {
        return Err(Error::BatchMismatch { index });
    }
    let needed = words * sessions.len();
    if out.len() < needed {
        return Err(Error::MaskBuffer { needed, actual: out.len(), unit: "u32 words" });
    }
    let mut rows: Vec<&mut [u32]> = out[..needed].chunks_mut(words).collect();
    fill_rows(sessions, &mut rows, threads, |session, row| session.write_mask(row))
}

/// Runs `write` on each `(items[i], rows[i])`, the first pair on this thread and timed, the rest
/// split across up to `threads` scoped threads (0: the machine's cores) when the first pair's
/// time says the work pays for them. Stops at the first error (pairs on other threads may have
/// been written by then). The thread policy of [`fill_masks`], for callers with rows of their own.
pub fn fill_rows<T: Sync, R: Send>(
    items: &[T],
    rows: &mut [R],
    threads: usize,
    write: impl Fn(&T, &mut R) -> Result<()> + Sync,
) -> Result<()> {
    assert_eq!(items.len(), rows.len(), "one row per item");
    let Some((first, items)) = items.split_first() else { return Ok(()) };
    let (first_row, rows) = rows.split_first_mut().expect("as many rows as items");
    let started = Instant::now();
    write(first, first_row)?;
    let estimate = started.elapsed() * (items.len() as u32).max(1);
    let allowed = if threads == 0 { available_threads() } else { threads };
    let threads = allowed.min((estimate.as_nanos() / MIN_WORK_PER_THREAD.as_nanos()) as usize).max(1);
    if threads <= 1 || items.len() < 2 {
        return items.iter().zip(rows.iter_mut()).try_for_each(|(item, row)| write(item, row));
    }
    let per_thread = items.len().div_ceil(threads);
    let write = &write;
    thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(per_thread)
            .zip(rows.chunks_mut(per_thread))
            .map(|(chunk, chunk_rows)| {
                scope.spawn(move || chunk.iter().zip(chunk_rows.iter_mut()).try_for_each(|(i, r)| write(i, r)))
            })
            .collect();
        workers.into_iter().try_for_each(|worker| match worker.join() {
            Ok(result) => result,
            Err(payload) => std::panic::resume_unwind(payload),
        })
    })
}
