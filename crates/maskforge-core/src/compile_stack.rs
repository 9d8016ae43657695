//! The thread a compilation runs on: lowering and automaton construction recurse as deep as
//! the schema nests, so both arms compile on a stack of their own rather than the caller's.

/// Stack of the thread a compilation runs on (reserved address space; pages are touched only
/// as deep as the schema goes).
pub const COMPILE_STACK_BYTES: usize = 64 << 20;

/// Runs `compile` on a thread of its own with [`COMPILE_STACK_BYTES`] of stack (or on the
/// caller's, when no thread can be had: a sandbox, say).
pub(crate) fn on_compile_stack<T: Send>(compile: impl Fn() -> T + Sync) -> T {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new().name("maskforge-compile".into()).stack_size(COMPILE_STACK_BYTES);
        match worker.spawn_scoped(scope, &compile) {
            Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => compile(),
        }
    })
}
