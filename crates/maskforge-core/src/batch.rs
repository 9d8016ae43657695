//! Batches: many sessions' masks written at once, split across threads when the batch's work is
//! large enough to pay for them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{Error, Result};
use crate::session::Session;
use crate::vocabulary::TokenId;

/// Work below which another thread costs more than it saves. Helpers come from a kept pool, but
/// one that has gone to sleep between decoding steps takes long to wake (150-200 µs on a 2-core
/// virtual machine), while a mask row costs from under a microsecond (a copied DFA row) to
/// hundreds (a structured mask over a large vocabulary).
const MIN_WORK_PER_THREAD: Duration = Duration::from_micros(200);

/// A kept pool of `helpers` threads, made on first use and shared by every batch that asks for
/// as many threads: starting threads per batch (about 55 µs each on a 2-core virtual machine)
/// costs as much as a batch of cheap rows. `None` when the system refuses new threads; the
/// batch then runs on the calling thread alone.
fn helper_pool(helpers: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, pool)) = pools.iter().find(|(size, _)| *size == helpers) {
        return Some(Arc::clone(pool));
    }
    let pool =
        ThreadPoolBuilder::new().num_threads(helpers).thread_name(|i| format!("maskforge-fill-{i}")).build().ok()?;
    let pool = Arc::new(pool);
    pools.push((helpers, Arc::clone(&pool)));
    Some(pool)
}

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
    let Some(pool) = helper_pool(threads - 1) else {
        return items.iter().zip(rows.iter_mut()).try_for_each(|(item, row)| write(item, row));
    };
    // Pairs are handed out one at a time rather than in fixed chunks: masks of one batch differ
    // in cost by two orders of magnitude (a copied row, a trie walk), so equal chunks leave one
    // thread waiting for the other. The calling thread takes pairs too, so a pool of
    // `threads - 1` helpers gives `threads` threads at work.
    let pairs = Mutex::new(items.iter().zip(rows.iter_mut()));
    let failed = AtomicBool::new(false);
    let first_error = Mutex::new(None);
    let drain = || {
        while !failed.load(Ordering::Relaxed) {
            let next = pairs.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some((item, row)) = next else { break };
            if let Err(error) = write(item, row) {
                failed.store(true, Ordering::Relaxed);
                first_error.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
                break;
            }
        }
    };
    // A panic in a helper resumes on this thread when the scope ends.
    pool.in_place_scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|_| drain());
        }
        drain();
    });
    first_error.into_inner().unwrap_or_else(PoisonError::into_inner).map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy work long enough that the first item's time asks for every allowed thread.
    fn slow_square(item: &u64, row: &mut u64) -> Result<()> {
        let started = Instant::now();
        while started.elapsed() < MIN_WORK_PER_THREAD / 4 {
            std::hint::spin_loop();
        }
        *row = item * item;
        Ok(())
    }

    #[test]
    fn rows_on_helper_threads_land_in_their_own_slots() {
        let items: Vec<u64> = (0..64).collect();
        for threads in [1, 2, 4] {
            let mut rows = vec![0; items.len()];
            fill_rows(&items, &mut rows, threads, slow_square).unwrap();
            assert_eq!(rows, items.iter().map(|i| i * i).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn an_error_on_any_thread_is_returned() {
        let items: Vec<u64> = (0..64).collect();
        let mut rows = vec![0; items.len()];
        let failing = |item: &u64, row: &mut u64| {
            if *item == 40 {
                return Err(Error::BatchMismatch { index: 40 });
            }
            slow_square(item, row)
        };
        assert_eq!(fill_rows(&items, &mut rows, 2, failing), Err(Error::BatchMismatch { index: 40 }));
    }

    #[test]
    fn a_panic_on_a_helper_reaches_the_caller() {
        let items: Vec<u64> = (0..64).collect();
        let mut rows = vec![0; items.len()];
        let caller = thread::current().id();
        let helper_came = AtomicBool::new(false);
        // The caller holds its items after the first (which it writes alone, to time it) until a
        // helper has taken one (the pool may be busy with another test's batch for a while), so
        // a helper always panics.
        let panicking = |item: &u64, row: &mut u64| {
            if thread::current().id() != caller {
                helper_came.store(true, Ordering::SeqCst);
                panic!("helper failed on {item}");
            }
            let waiting = Instant::now();
            while *item > 0 && !helper_came.load(Ordering::SeqCst) && waiting.elapsed() < Duration::from_secs(30) {
                thread::yield_now();
            }
            slow_square(item, row)
        };
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fill_rows(&items, &mut rows, 2, panicking)));
        assert!(outcome.is_err());
        // The pool survives a panicked job.
        fill_rows(&items, &mut rows, 2, slow_square).unwrap();
    }
}
