//! How much a second thread can help a batch of a given size on this machine, apart from
//! MaskForge: the same arithmetic split in two halves, the second half on a helper thread that
//! either sleeps between batches (woken through a channel, as a pool thread is between decoding
//! steps) or spins. Where the sleeping helper stays far from 2x while the spinning one reaches
//! it, the cost is the machine's wake-up, not the split.
//!
//! `cargo run --release -p maskforge-core --example wake_latency`

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

fn work(steps: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..steps {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

fn main() {
    const REPS: u32 = 400;
    for half in [20_000u64, 100_000, 400_000] {
        let start = Instant::now();
        for _ in 0..REPS {
            black_box(work(black_box(2 * half)));
        }
        let one = start.elapsed().as_secs_f64() / f64::from(REPS);

        let (jobs, job_rx) = mpsc::channel::<u64>();
        let (done_tx, done) = mpsc::channel::<u64>();
        let sleeper = std::thread::spawn(move || {
            for steps in job_rx {
                done_tx.send(work(steps)).unwrap();
            }
        });
        let start = Instant::now();
        for _ in 0..REPS {
            jobs.send(half).unwrap();
            black_box(work(black_box(half)));
            black_box(done.recv().unwrap());
        }
        let sleeping = start.elapsed().as_secs_f64() / f64::from(REPS);
        drop(jobs);
        sleeper.join().unwrap();

        let posted = Arc::new(AtomicU64::new(0));
        let finished = Arc::new(AtomicU64::new(0));
        let (p, f) = (Arc::clone(&posted), Arc::clone(&finished));
        let spinner = std::thread::spawn(move || {
            let mut seen = 0;
            loop {
                match p.load(Ordering::Acquire) {
                    u64::MAX => break,
                    batch if batch != seen => {
                        seen = batch;
                        black_box(work(half));
                        f.store(batch, Ordering::Release);
                    }
                    _ => std::hint::spin_loop(),
                }
            }
        });
        let start = Instant::now();
        for batch in 1..=u64::from(REPS) {
            posted.store(batch, Ordering::Release);
            black_box(work(black_box(half)));
            while finished.load(Ordering::Acquire) != batch {
                std::hint::spin_loop();
            }
        }
        let spinning = start.elapsed().as_secs_f64() / f64::from(REPS);
        posted.store(u64::MAX, Ordering::Release);
        spinner.join().unwrap();

        println!(
            "batch of {:>4.0} us on one thread: sleeping helper {:.2}x, spinning helper {:.2}x",
            one * 1e6,
            one / sleeping,
            one / spinning
        );
    }
}
