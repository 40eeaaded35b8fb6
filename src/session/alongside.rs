//! The whole suite run alongside a rule candidate's targeted run, when runs are cold.
//!
//! Without the warm worker, a targeted run costs a Python start and pytest's own (~0.7 s), and
//! the candidate that is kept paid it before its full run: three cold runs where the floor
//! (the failing test alone, then the suite) has two. With `--jobs` ≥ 2 (the cores, by
//! default) the full run of a rule's candidate starts beside its targeted run, in the same
//! workspace: the candidate is written before either starts, and nothing is written until both
//! are over. The verdicts are read as when the runs follow each other: the full run's only
//! once the targeted run says the failure is gone; otherwise the full run is stopped (its
//! process group killed, as the parallel proofs' are) and counts as a pytest run, nothing else.
//!
//! The phases' times never overlap: the targeted run counts in `candidates_ms`, the full run
//! in `confirm_ms` only for the time after the targeted run ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::error::SessionError;
use super::prover::Phase;
use super::runs::Runs;
use super::workspace::Workspace;
use crate::process::RunnerError;
use crate::runner::{self, PytestRun};

/// A full run going on beside the targeted run. Dropped unused, it is stopped and joined, so
/// no run of it outlives the candidate.
pub(super) struct Alongside {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<PytestRun, RunnerError>>>,
}

impl Alongside {
    fn join(&mut self) -> Option<Result<PytestRun, RunnerError>> {
        let h = self.handle.take()?;
        Some(h.join().unwrap_or_else(|_| {
            Err(RunnerError::Io {
                message: "the full run's thread panicked".into(),
            })
        }))
    }
}

impl Drop for Alongside {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.join();
    }
}

impl Runs<'_> {
    /// Whether a rule candidate's full run should start beside its targeted run: pytest is the
    /// judge, `--jobs` allows a second process, and runs are cold (the worker is off, or was
    /// switched off: a warm targeted run costs too little to hide).
    pub(super) fn full_run_alongside_pays(&self) -> bool {
        self.opts.judge.is_none()
            && self.opts.jobs >= 2
            && (self.opts.worker == crate::worker::Mode::Off
                || crate::worker::switched_off(&self.prover.python.path))
    }

    /// Starts the full run (the confirming run's spec, exactly) in a thread of its own.
    pub(super) fn start_full_run(&self, ws: &dyn Workspace) -> Alongside {
        let spec = self.full_spec(ws);
        let python = self.prover.python.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            crate::process::stop_this_thread_with(flag);
            let _t = crate::trace_times::span("run: confirm (alongside the candidate's)");
            runner::run_pytest(&python, &spec)
        });
        Alongside {
            stop,
            handle: Some(handle),
        }
    }

    /// The full run's result, counted as a confirming run whose time is the wait for it.
    pub(super) fn finish_full_run(
        &mut self,
        mut along: Alongside,
    ) -> Result<PytestRun, SessionError> {
        let waited = Instant::now();
        let run = along
            .join()
            .unwrap_or(Err(RunnerError::Interrupted))
            .map_err(SessionError::Runner)?;
        let d = waited.elapsed();
        self.prover.count += 1;
        self.prover.total += d;
        self.prover.add_phase(Phase::Confirm, d);
        self.prover.log_proof(Phase::Confirm, &run);
        self.lazy_timed(&run);
        Ok(run)
    }

    /// The full run is not needed (the targeted run still fails, or gave no verdict): stopped,
    /// joined, and counted as a pytest run.
    pub(super) fn stop_full_run(&mut self, along: Alongside) {
        drop(along);
        self.prover.count += 1;
    }
}
