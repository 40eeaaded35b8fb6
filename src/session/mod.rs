//! The attempt loop: baseline, then for each failure a probe, ranked candidates, and proof by
//! pytest (the targeted test passes, no test that passed in the baseline fails). One loop, two
//! places to work in (see [`Workspace`]): a scratch copy for `--dry-run` (the user's tree is
//! never written, not even for a moment), or the project itself behind a journal that can put
//! every byte back.

use crate::status::FinalStatus;

mod alongside;
mod attempt_loop;
mod batch;
mod cause_state;
mod causes;
mod chain;
mod fix;
mod flaky;
mod groups;
mod judge;
mod known;
mod lazy;
mod model;
mod outside;
mod parallel;
mod propose;
mod runs;
mod shared;
mod sources;
mod work;
mod workspace;

pub use fix::{dry_run, fix};
pub use model::{
    combine, Attempt, Backup, Cause, CausePatch, FailureOutcome, FlakyRuns, Group, GroupKey, Patch,
    PatchStep, Phases, Proof, Report,
};
pub use workspace::{JournalWorkspace, ScratchWorkspace, Workspace};

pub use crate::config::Settings as Options;
pub use shared::{interpreter, pending_journal, run_id};

/// Why the session could not run at all. Nothing is left changed in any of these cases.
#[derive(Debug)]
pub enum SessionError {
    /// Exit 2: bad flags or log, or pytest refused its arguments.
    BadInput(String),
    /// Exit 6: the tool could not do its work (no interpreter, pytest missing, I/O).
    Environment(String),
    /// Exit 6: pytest ran but gave no verdict (internal error, interrupted, killed, output
    /// that cannot be read, the suite did not finish in time).
    Pytest(String),
    /// Exit 7: pytest collected no test, in `pytest_runs` runs that took `pytest_ms`.
    NoTests {
        message: String,
        pytest_runs: usize,
        pytest_ms: u64,
    },
}

impl SessionError {
    /// The `final_status` of a run that stopped with this error.
    pub fn status(&self) -> FinalStatus {
        match self {
            SessionError::BadInput(_) => FinalStatus::BadInput,
            SessionError::NoTests { .. } => FinalStatus::NoTests,
            SessionError::Environment(_) | SessionError::Pytest(_) => FinalStatus::Error,
        }
    }

    pub fn exit_code(&self) -> i32 {
        self.status().exit_code()
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::BadInput(m)
            | SessionError::Environment(m)
            | SessionError::Pytest(m)
            | SessionError::NoTests { message: m, .. } => f.write_str(m),
        }
    }
}
