//! Ctrl-C, SIGTERM and SIGHUP as a flag, and a per-thread stop flag, that every run checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT, SIGTERM and SIGHUP set a flag instead of killing the process, so that a run in
/// progress kills its child group and returns [`super::RunnerError::Interrupted`], and callers get
/// to restore files they changed. For the CLI; a library user may prefer its own handling.
pub fn install_interrupt_handler() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        // A closed terminal or a CI runner going away: restore, like for Ctrl-C.
        libc::signal(libc::SIGHUP, handler as libc::sighandler_t);
    }
}

/// Raises the interrupt flag from inside the process, as SIGINT would: every run in progress
/// ends and the callers restore what they touched (a closed stdout, see `crate::stdio`).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether SIGINT/SIGTERM/SIGHUP arrived since [`install_interrupt_handler`] (or [`interrupt`]
/// was called).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

thread_local! {
    /// The stop flag of the job this thread runs (see [`stop_this_thread_with`]).
    static THREAD_STOP: std::cell::RefCell<Option<Arc<AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes every run this thread starts from now on end (its process group killed, the run
/// returning [`super::RunnerError::Interrupted`]) as soon as `flag` is set, as Ctrl-C does for all
/// runs: parallel proofs stop the candidates still running once a better-ranked one wins.
pub fn stop_this_thread_with(flag: Arc<AtomicBool>) {
    THREAD_STOP.with(|s| *s.borrow_mut() = Some(flag));
}

/// Ctrl-C, or this thread's job was stopped.
pub(super) fn stopped() -> bool {
    interrupted()
        || THREAD_STOP.with(|s| {
            s.borrow()
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
        })
}
