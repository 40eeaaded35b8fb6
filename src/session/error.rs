//! Why the session could not run at all. Nothing is left changed in any of these cases.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::journal::JournalError;
use crate::process::RunnerError;
use crate::status::FinalStatus;
use crate::traceback::ParseError;

/// Why the session could not run at all: bad input (exit 2), no verdict or no way to work
/// (exit 6), or no test collected (exit 7). Displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `--no-validate` without a log to read the failures from.
    #[error("--no-validate runs nothing, so it needs a pytest log (LOG or -)")]
    NoValidateWithoutLog,
    /// The given log is not one.
    #[error("log: {0}")]
    Log(#[source] ParseError),
    /// pytest refused the baseline run's arguments (its own words).
    #[error("pytest refused the run: {0}")]
    PytestRefused(String),
    /// pytest refused to collect what `--module` names (its own words).
    #[error("--module {module}: {said}")]
    ModuleRefused { module: String, said: String },
    #[error("--module {module}: no collected test matches it")]
    ModuleMatchesNothing { module: String },

    /// No interpreter, pytest missing, a run that could not start, interrupted.
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// The journal refused, or could not record, commit or roll back.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A dry run waits for no other run's lock: it would read half-patched files.
    #[error(
        "{0}; a dry run does not read a project while another run may have a probe or an \
         unproven candidate in its files"
    )]
    DryRunRefused(#[source] JournalError),
    #[error("cannot copy the project to a scratch dir: {0}")]
    ScratchCopy(#[source] io::Error),
    /// A file of the scratch copy could not be read or written (`action`).
    #[error("cannot {action} the scratch copy {}: {source}", path.display())]
    ScratchFile {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("coverage output dir: {0}")]
    CoverageDir(#[source] io::Error),
    #[error("interrupted: every touched file was restored byte for byte")]
    InterruptedRestored,
    #[error("interrupted, and restoring failed: {0}")]
    InterruptedRestoreFailed(#[source] JournalError),
    /// The run stopped with `error`, and the rollback after it failed too.
    #[error("{error}; restoring failed too: {restore}")]
    RestoreFailedToo {
        error: Box<SessionError>,
        restore: JournalError,
    },
    #[error("interrupted: the project was not changed (dry run)")]
    InterruptedDryRun,
    #[error("the parallel proofs' workers ended unexpectedly")]
    WorkersEnded,
    #[error("a parallel proof made no run")]
    NoParallelRun,

    /// The baseline run gave no verdict (pytest's internal error, killed, unreadable output).
    #[error("the baseline run gave no verdict: {0}")]
    BaselineNoVerdict(String),
    /// `what` (the test suite, the command) outlasted `--time-budget`.
    #[error("{what} did not finish within the time budget of {} s (--time-budget)", budget.as_secs())]
    OutOfTimeBudget {
        what: &'static str,
        budget: Duration,
    },
    /// `what` outlasted the run's timeout, set by `flag`.
    #[error("{what} did not finish within {} s ({flag})", timeout.as_secs_f64())]
    TimedOut {
        what: &'static str,
        timeout: Duration,
        flag: &'static str,
    },
    /// Collecting the tests for `--module` gave no verdict (why, as the verdict says).
    #[error("{0}")]
    CollectNoVerdict(String),
    #[error("collecting the tests did not finish in time")]
    CollectTimedOut,
    /// The run after restoring a cause's files gave no verdict (the verdict, described).
    #[error("the run after restoring a cause's files gave no verdict: {0}")]
    CauseRunNoVerdict(String),

    /// pytest collected no test under `root` (with `pytest_args`), in `pytest_runs` runs that
    /// took `pytest_ms`.
    #[error("no tests were collected under {}{}", root.display(), with_args(pytest_args))]
    NoTests {
        root: PathBuf,
        pytest_args: Vec<String>,
        pytest_runs: usize,
        pytest_ms: u64,
    },
}

/// The pytest arguments a collection ran with, as the tail of [`SessionError::NoTests`].
fn with_args(args: &[String]) -> String {
    if args.is_empty() {
        String::new()
    } else {
        format!(" with pytest arguments `{}`", args.join(" "))
    }
}

impl SessionError {
    /// The `final_status` of a run that stopped with this error.
    pub fn status(&self) -> FinalStatus {
        match self {
            SessionError::NoValidateWithoutLog
            | SessionError::Log(_)
            | SessionError::PytestRefused(_)
            | SessionError::ModuleRefused { .. }
            | SessionError::ModuleMatchesNothing { .. } => FinalStatus::BadInput,
            SessionError::NoTests { .. } => FinalStatus::NoTests,
            SessionError::Runner(_)
            | SessionError::Journal(_)
            | SessionError::DryRunRefused(_)
            | SessionError::ScratchCopy(_)
            | SessionError::ScratchFile { .. }
            | SessionError::CoverageDir(_)
            | SessionError::InterruptedRestored
            | SessionError::InterruptedRestoreFailed(_)
            | SessionError::RestoreFailedToo { .. }
            | SessionError::InterruptedDryRun
            | SessionError::WorkersEnded
            | SessionError::NoParallelRun
            | SessionError::BaselineNoVerdict(_)
            | SessionError::OutOfTimeBudget { .. }
            | SessionError::TimedOut { .. }
            | SessionError::CollectNoVerdict(_)
            | SessionError::CollectTimedOut
            | SessionError::CauseRunNoVerdict(_) => FinalStatus::Error,
        }
    }

    pub fn exit_code(&self) -> i32 {
        self.status().exit_code()
    }

    /// The pid of the run that holds the project's lock, when that is why this run stopped.
    pub fn lock_pid(&self) -> Option<u32> {
        match self {
            SessionError::Journal(e) | SessionError::DryRunRefused(e) => e.lock_pid(),
            _ => None,
        }
    }
}
