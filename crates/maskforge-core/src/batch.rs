//! Batches: many sessions' masks written at once, split across threads when the batch's work is
//! large enough to pay for them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::session::Session;
use crate::vocabulary::TokenId;

/// Work below which another thread costs more than it saves: starting and joining one takes
/// tens of microseconds (about 55 on a 2-core virtual machine), while a mask row costs from under a microsecond (a copied DFA row) to
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

/// Commits `tokens[i]` on `sessions[i]` for every `i`, or nothing: every token is checked
/// against its session first, and a refused one is [`Error::BatchRejected`] naming its index,
/// with no session changed. As many tokens as sessions, else [`Error::BatchLength`]. EOS and
/// padding EOS follow [`Session::advance`]'s rules, so finished rows can be padded with EOS.
///
/// ```
/// use std::sync::Arc;
/// use maskforge_core::{advance_batch, build_vocabulary, CompiledVocabulary, Compiler, Error};
///
/// let tokens = [&b"1"[..], b"2", b"["];
/// let map = tokens.iter().enumerate().map(|(id, t)| (id as u32, t.to_vec()));
/// let vocabulary = CompiledVocabulary::try_from(Arc::new(build_vocabulary(3, map)?))?;
/// let bound = Compiler::without_cache().compile_json_schema(r#"{"type": "array"}"#)?.bind(&vocabulary)?;
/// let (mut a, mut b) = (bound.start_session()?, bound.start_session()?);
/// advance_batch(&mut [&mut a, &mut b], &[2, 2])?; // `[` on both
/// // `1` fits in `a`'s array, but `b` cannot take `]` (id 3 is out of range): neither moves.
/// let refused = advance_batch(&mut [&mut a, &mut b], &[0, 3]);
/// assert!(matches!(refused, Err(Error::BatchRejected { index: 1, token_id: 3, .. })));
/// assert_eq!((a.rollback_available(), b.rollback_available()), (1, 1));
/// # Ok::<(), maskforge_core::Error>(())
/// ```
pub fn advance_batch(sessions: &mut [&mut Session], tokens: &[TokenId]) -> Result<()> {
    if sessions.len() != tokens.len() {
        return Err(Error::BatchLength { sessions: sessions.len(), given: tokens.len(), what: "tokens" });
    }
    let prepared = sessions
        .iter()
        .zip(tokens)
        .enumerate()
        .map(|(index, (session, &token))| {
            session.prepare(token).map_err(|error| match error {
                Error::TokenRejected { token_id, reason } => Error::BatchRejected { index, token_id, reason },
                other => other,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    for (session, step) in sessions.iter_mut().zip(prepared) {
        session.commit_prepared(step);
    }
    Ok(())
}

/// Undoes the last `counts[i]` committed tokens of `sessions[i]` for every `i`, or nothing: a
/// count beyond what its session keeps is [`Error::BatchRollbackTooFar`] naming its index, with
/// no session changed. As many counts as sessions, else [`Error::BatchLength`].
pub fn rollback_batch(sessions: &mut [&mut Session], counts: &[usize]) -> Result<()> {
    if sessions.len() != counts.len() {
        return Err(Error::BatchLength { sessions: sessions.len(), given: counts.len(), what: "counts" });
    }
    let refused = sessions.iter().zip(counts).position(|(session, &n)| n > session.rollback_available());
    if let Some(index) = refused {
        let (requested, available) = (counts[index], sessions[index].rollback_available());
        return Err(Error::BatchRollbackTooFar { index, requested, available });
    }
    for (session, &n) in sessions.iter_mut().zip(counts) {
        session.rollback(n)?;
    }
    Ok(())
}

/// Runs `write` on each `(items[i], rows[i])`, the first pair on this thread and timed, the rest
/// shared out to up to `threads` threads (0: the machine's cores), this one among them, when the
/// first pair's time says the work pays for them. Stops at the first error (pairs on other
/// threads may have been written by then). The thread policy of [`fill_masks`], for callers with
/// rows of their own.
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
    // Pairs are handed out one at a time rather than in fixed chunks: masks of one batch differ
    // in cost by two orders of magnitude (a copied row, a trie walk), so equal chunks leave one
    // thread waiting for the other. The calling thread takes pairs too, which saves a thread
    // start (tens of microseconds) per batch.
    let pairs = Mutex::new(items.iter().zip(rows.iter_mut()));
    let failed = AtomicBool::new(false);
    let drain = || -> Result<()> {
        while !failed.load(Ordering::Relaxed) {
            let next = pairs.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some((item, row)) = next else { break };
            if let Err(error) = write(item, row) {
                failed.store(true, Ordering::Relaxed);
                return Err(error);
            }
        }
        Ok(())
    };
    thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(&drain)).collect();
        let mine = drain();
        let theirs: Vec<Result<()>> = helpers
            .into_iter()
            .map(|helper| helper.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload)))
            .collect();
        theirs.into_iter().fold(mine, Result::and)
    })
}
