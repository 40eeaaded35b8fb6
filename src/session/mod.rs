//! The attempt loop: baseline, then for each failure a probe, ranked candidates, and proof by
//! pytest (the targeted test passes, no test that passed in the baseline fails). One loop, two
//! places to work in (see [`Workspace`]): a scratch copy for `--dry-run` (the user's tree is
//! never written, not even for a moment), or the project itself behind a journal that can put
//! every byte back.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::settings::excluded_by;
use crate::journal::{self, JournalError};
use crate::project::ProjectRoot;
use crate::rules::RuleSet;
use crate::runner::{self, Interpreter};
use crate::status::FinalStatus;
use crate::traceback::{Failure, When};

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
mod sources;
mod work;
mod workspace;

pub use fix::{dry_run, fix};
pub use model::{
    combine, Attempt, Backup, Cause, CausePatch, FailureOutcome, FlakyRuns, Group, GroupKey, Patch,
    PatchStep, Phases, Report,
};
pub use outside::Proof;
pub use workspace::{JournalWorkspace, ScratchWorkspace, Workspace};

pub use crate::config::Settings as Options;

/// Why a file is not to be patched, when `extend-exclude` says so.
fn excluded(opts: &Options, rel: &str) -> Option<String> {
    excluded_by(&opts.exclude, rel).map(|p| {
        format!(
            "{rel} is excluded by extend-exclude ('{}'): never patched",
            p.text
        )
    })
}

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

/// Up to this many other tests in a failure's group, their check rides on the candidate's
/// full run instead of a run of their own: for a few tests a run costs its start, and the full
/// run holds them anyway.
const GROUP_IN_FULL_RUN: usize = 8;

/// A journal left by a killed run stops every command that writes, until `selfdebug restore`.
pub fn pending_journal(root: &ProjectRoot) -> Option<String> {
    match journal::pending(root.path()) {
        Ok(Some(p)) => Some(
            JournalError::Pending {
                root: p.root,
                files: p.files,
                started: p.started,
            }
            .to_string(),
        ),
        _ => None,
    }
}

/// Hard hangs (beyond the per-test timer's reach) deselected before the baseline gives up.
const MAX_HARD_HANGS: usize = 3;

/// The reason given for failures the time budget left untried.
const TIME_BUDGET_USED_UP: &str = "time budget used up";

/// The `review` line of each unsafe rule among `rule_ids`.
fn review_notes(rules: &RuleSet, rule_ids: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in rule_ids {
        if let Some(note) = rules.get(id).and_then(|r| r.review_note()) {
            if !out.contains(&note) {
                out.push(note);
            }
        }
    }
    out
}

/// pytest's report of a conftest that could not be imported (see [`traceback::conftest`]).
fn is_conftest(f: &Failure) -> bool {
    f.test.is_none()
        && f.headline
            .as_deref()
            .is_some_and(|h| h.starts_with("conftest "))
}

/// The project's interpreter, with pytest importable.
pub fn interpreter(root: &Path, opts: &Options) -> Result<Interpreter, SessionError> {
    let python = runner::find_interpreter(root, opts.python.as_deref())
        .map_err(|e| SessionError::Environment(e.to_string()))?;
    if opts.judge.is_some() {
        // A command needs no pytest.
        return Ok(python);
    }
    runner::prepare(&python).map_err(|e| SessionError::Environment(e.to_string()))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub fn run_id() -> String {
    format!("{}-{}", now_ms(), std::process::id())
}

/// (test, phase) of each failure; the section title stands in for a missing test id.
fn failure_keys(failures: &[Failure]) -> BTreeSet<(String, When)> {
    failures.iter().map(failure_key).collect()
}

fn failure_key(f: &Failure) -> (String, When) {
    let test = f.test.clone().or_else(|| f.headline.clone());
    (test.unwrap_or_default(), f.when)
}
