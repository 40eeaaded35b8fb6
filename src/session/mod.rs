//! The attempt loop: baseline, then for each failure a probe, ranked candidates, and proof by
//! pytest (the targeted test passes, no test that passed in the baseline fails). One loop, two
//! places to work in (see [`Workspace`]): a scratch copy for `--dry-run` (the user's tree is
//! never written, not even for a moment), or the project itself behind a journal that can put
//! every byte back.

mod alongside;
mod attempt_loop;
mod batch;
mod cause_state;
mod causes;
mod chain;
mod coverage;
mod error;
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
mod prover;
mod runs;
mod shared;
mod sources;
mod work;
mod workspace;

pub use error::SessionError;
pub use fix::{dry_run, fix};
pub use model::{
    combine, Attempt, Backup, Cause, CausePatch, FailureOutcome, Fix, FlakyRuns, Group, GroupKey,
    InterpreterInfo, Patch, PatchStep, Phases, Proof, Report,
};
pub use workspace::{JournalWorkspace, ScratchWorkspace, Workspace};

pub use shared::{interpreter, pending_journal, prepared, run_id, Options};
