//! The attempt loop: baseline, then for each failure a probe, ranked candidates, and proof by
//! pytest (the targeted test passes, no test that passed in the baseline fails). One loop, two
//! places to work in (see [`Workspace`]): a scratch copy for `--dry-run` (the user's tree is
//! never written, not even for a moment), or the project itself behind a journal that can put
//! every byte back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::category::{self, Budgets};
use crate::command::{CommandJudge, OUTPUT_CHECK_EXC};
use crate::config::{settings::excluded_by, Pattern, RuleSelection};
use crate::edit;
use crate::install::{self, Install};
use crate::journal::{self, Journal, JournalError};
use crate::plan::{self, Candidate, PlanInput};
use crate::probe::{self, ProbeReport, ProbeRequest};
use crate::project::ProjectRoot;
use crate::rules::{Category, RuleSet};
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::sandbox::Sandbox;
use crate::scratch::Scratch;
use crate::source::{Encoding, SourceFile};
use crate::traceback::{self, Failure, When};
use crate::transform::stdlib::Stdlib;
use crate::transform::ProbeFacts;
use crate::tried::Tried;
use crate::verdict::{self, Verdict};

mod groups;
pub use groups::{Group, GroupKey};
mod batch;
mod judge;
mod llm;
mod parallel;
mod search;

pub use parallel::default_jobs;

/// What the user asked for.
pub struct Options {
    pub root: ProjectRoot,
    /// A pytest log to work from; without it the baseline run's failures are used.
    pub log: Option<Vec<u8>>,
    /// Only this failing test.
    pub test: Option<String>,
    /// Candidates tried per failure at most (each category's budget may lower it).
    pub max_attempts: u32,
    pub budgets: Budgets,
    /// Prove candidates with pytest (false: `--no-validate`, dry run only).
    pub validate: bool,
    pub dry_run: bool,
    /// Try only rules marked safe (`--safe-only`); by default every rule is tried and pytest
    /// decides.
    pub safe_only: bool,
    pub all_or_nothing: bool,
    pub allow_tests: bool,
    pub python: Option<PathBuf>,
    /// Per-run timeout; default derived from the baseline.
    pub timeout: Option<Duration>,
    /// Per-test limit (selfdebug's pytest plugin): a test still running then fails where it is
    /// stuck, with category `timeout`, and the rest of the run goes on.
    pub test_timeout: Duration,
    /// The user's pytest arguments, already checked by [`crate::pytest_args::check`].
    pub pytest_args: Vec<String>,
    /// Where the original design's backup copies go (default: `{temp dir}/selfdebug-{uid}`).
    pub backup_dir: Option<PathBuf>,
    /// Wall time for the whole run: no candidate is started that cannot finish within it.
    pub time_budget: Duration,
    /// Wall time of the search over small edits, per failure (`--search-time`).
    pub search_time: Duration,
    /// Candidates proven at once, each in its own scratch copy (`--jobs`; 1: one at a time,
    /// in the workspace). See [`parallel`].
    pub jobs: usize,
    /// Said to the user in the report (pytest arguments set aside, ...).
    pub notes: Vec<String>,
    /// `--cmd`: this command is the judge instead of pytest (see [`crate::command`]).
    pub judge: Option<CommandJudge>,
    /// `--sandbox`: every judge run under bubblewrap (see [`crate::sandbox`]).
    pub sandbox: Option<Sandbox>,
    /// `--worker`: whether pytest runs may go to the warm worker ([`crate::worker`]).
    pub worker: crate::worker::Mode,
    /// `--no-xdist` off: the full confirming run may use pytest-xdist ([`crate::xdist`]).
    pub xdist: bool,
    /// `--install-missing`: a missing third-party module is installed once with pip.
    pub install_missing: bool,
    /// The configured rule selection (`select`/`ignore`): rules it leaves out propose nothing.
    pub selection: RuleSelection,
    /// `extend-exclude`: files never patched (nor probed); their candidates are dropped unrun.
    pub exclude: Vec<Pattern>,
    /// The model fallback (`--llm`): off (none) unless the user asks.
    pub llm: Option<crate::llm::LlmConfig>,
}

/// The rules in force: built in and the project's own, as the configuration selects them.
fn load_rules(root: &Path, opts: &Options) -> Result<RuleSet, SessionError> {
    let mut rules = RuleSet::load(root).map_err(|e| SessionError::BadInput(e.to_string()))?;
    opts.selection.apply(&mut rules);
    Ok(rules)
}

/// Why a file is not to be patched, when `extend-exclude` says so.
fn excluded(opts: &Options, rel: &str) -> Option<String> {
    excluded_by(&opts.exclude, rel).map(|p| {
        format!(
            "{rel} is excluded by extend-exclude ('{}'): never patched",
            p.text
        )
    })
}

/// `--time-budget` when none is given: a CI job or a hook gets its answer within 15 minutes.
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(900);

/// `--search-time` when none is given (see [`search`]).
pub const DEFAULT_SEARCH_TIME: Duration = Duration::from_secs(60);

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
    /// Exit 7: pytest collected no test.
    NoTests(String),
}

impl SessionError {
    /// The `final_status` of a run that stopped with this error.
    pub fn status(&self) -> &'static str {
        match self {
            SessionError::BadInput(_) => "bad_input",
            SessionError::NoTests(_) => "no_tests",
            SessionError::Environment(_) | SessionError::Pytest(_) => "error",
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            SessionError::BadInput(_) => crate::exit::BAD_INPUT,
            SessionError::NoTests(_) => crate::exit::NO_TESTS,
            SessionError::Environment(_) | SessionError::Pytest(_) => crate::exit::ENVIRONMENT,
        }
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::BadInput(m)
            | SessionError::Environment(m)
            | SessionError::Pytest(m)
            | SessionError::NoTests(m) => f.write_str(m),
        }
    }
}

/// Where candidates are written: a scratch copy (dry run) or the project behind a journal.
pub trait Workspace {
    /// Where pytest runs and files are read.
    fn root(&self) -> &Path;
    /// Environment for every run (the scratch copy's `PYTHONPATH`).
    fn env(&self) -> Vec<(OsString, OsString)>;
    /// Called before a file is first written by anyone, the probe included.
    fn record(&mut self, path: &Path) -> Result<(), SessionError>;
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError>;
}

/// The dry run's workspace.
pub struct ScratchWorkspace {
    scratch: Scratch,
    /// Each written file's bytes as copied, before its first write: the patch is the difference
    /// from these, never from the user's tree as it is at the end (which another run may be
    /// changing by then).
    originals: BTreeMap<PathBuf, Vec<u8>>,
}

impl Workspace for ScratchWorkspace {
    fn root(&self) -> &Path {
        self.scratch.root()
    }
    fn env(&self) -> Vec<(OsString, OsString)> {
        vec![("PYTHONPATH".into(), self.scratch.pythonpath().into())]
    }
    fn record(&mut self, path: &Path) -> Result<(), SessionError> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let std::collections::btree_map::Entry::Vacant(slot) = self.originals.entry(key) {
            let bytes = std::fs::read(path).map_err(|e| {
                SessionError::Environment(format!(
                    "cannot read the scratch copy {}: {e}",
                    path.display()
                ))
            })?;
            slot.insert(bytes);
        }
        Ok(())
    }
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
        self.record(path)?;
        std::fs::write(path, bytes).map_err(|e| {
            SessionError::Environment(format!(
                "cannot write the scratch copy {}: {e}",
                path.display()
            ))
        })
    }
}

/// The real run's workspace: the project itself, every write journaled first.
pub struct JournalWorkspace {
    journal: Journal,
}

impl Workspace for JournalWorkspace {
    fn root(&self) -> &Path {
        self.journal.root()
    }
    fn env(&self) -> Vec<(OsString, OsString)> {
        Vec::new()
    }
    fn record(&mut self, path: &Path) -> Result<(), SessionError> {
        self.journal
            .record(path)
            .map_err(|e| SessionError::Environment(e.to_string()))
    }
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
        self.journal
            .write(path, bytes)
            .map_err(|e| SessionError::Environment(e.to_string()))
    }
}

/// One candidate tried on one failure.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    /// 1-based, over the whole run.
    pub attempt: usize,
    pub test: Option<String>,
    /// 0 for the failure itself; 1 and more for the failures a previous step turned it into.
    pub step: usize,
    pub category: Category,
    pub file: String,
    pub rule: String,
    pub title: String,
    pub safe: bool,
    /// `safe` or `unsafe` (see [`applicability`]).
    pub applicability: &'static str,
    /// `rule` or `llm` (the model fallback; its `rule` is `llm` too).
    pub source: &'static str,
    pub diff: String,
    /// `accepted`, `still_failing`, `progressed` (a different failure now: worked on as the
    /// next step), `new_failures`, `suite_error` (the full run gave no verdict), `timeout`,
    /// `not_validated`, `refused` (a model's answer refused before any run: `new_failure`
    /// says why), `plausible` (a search candidate that passed every proof, another was kept).
    pub outcome: &'static str,
    /// Tests that passed before and failed with this candidate.
    pub broke: Vec<String>,
    /// The failure the targeted test showed with the candidate, when it still failed.
    pub new_failure: Option<String>,
    pub exit_code: Option<i32>,
    /// How an accepted attempt was confirmed, when not by its own full run: `batch` (one full
    /// run with the other pending fixes), `one_by_one` (the batch's run failed; a full run
    /// with it and the fixes kept before it). A rejected attempt says `one_by_one` too when it
    /// was dropped there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<&'static str>,
    /// Last lines of what the targeted run printed.
    pub stdout_tail: String,
    pub stderr_tail: String,
    pub timestamp_ms: u64,
    pub duration_ms: u64,
    /// A search candidate: its hint tier and, when it was kept, how it was chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::AttemptFacts>,
    /// The model's request and answer (the audit log has them; the JSON does not).
    #[serde(skip)]
    pub exchange: Option<crate::llm::Exchange>,
}

/// A proven (or, with `--no-validate`, proposed) change to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Patch {
    pub file: String,
    pub rules: Vec<String>,
    pub titles: Vec<String>,
    /// Every rule behind it is marked safe.
    pub safe: bool,
    /// `safe` when every rule behind it is safe, else `unsafe`.
    pub applicability: &'static str,
    /// `rule`, or `llm` when a model wrote (part of) it.
    pub source: &'static str,
    /// For unsafe patches: what a reviewer should check, one line per unsafe rule.
    pub review: Vec<String>,
    pub validated: bool,
    /// The unified diff as text; `diff_encoding` says how it maps to the patch's bytes.
    pub diff: String,
    /// `utf-8` (the text is the bytes), or `iso-8859-1` for a file whose bytes are not UTF-8
    /// (each character is one byte): encode `diff` with it for `git apply`.
    pub diff_encoding: &'static str,
}

/// Ruff's word for a fix's kind: `safe` (one right answer that the failure names) or `unsafe`
/// (it invents a value or guesses intent; pytest proved it, a reviewer should read it).
pub fn applicability(safe: bool) -> &'static str {
    if safe {
        "safe"
    } else {
        "unsafe"
    }
}

/// The fate of one failure.
#[derive(Debug, Clone, Serialize)]
pub struct FailureOutcome {
    pub test: Option<String>,
    pub when: When,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub func: Option<String>,
    pub exc_type: String,
    pub msg: String,
    pub category: Category,
    /// `fixed`, `fixed_by_another_patch`, `not_fixed`, `no_candidate`, `skipped_unsafe`
    /// (only unsafe rules had candidates, and `--safe-only` was given), `escalated`,
    /// `not_validated`, `rolled_back` (fixed, but undone by --all-or-nothing).
    pub status: &'static str,
    /// Why it is not fixed, or what to do instead (escalations).
    pub reason: Option<String>,
    pub probe: Option<ProbeReport>,
    /// Command mode: the output check a run that exited 0 failed (expected vs actual), for
    /// a `selfdebug.OutputCheckFailed` failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_check: Option<crate::command::OutputMismatch>,
    /// Wrong-output failures: the statements the test spectrum ranks most suspicious, best
    /// first (see [`crate::localize`]), whether or not a fix was found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspicious: Vec<crate::localize::Suspicious>,
    /// Index into the report's `groups`: the crash site this failure shares with others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<usize>,
}

pub struct Report {
    pub failures: Vec<FailureOutcome>,
    pub attempts: Vec<Attempt>,
    pub patches: Vec<Patch>,
    pub pytest_runs: usize,
    pub pytest_ms: u64,
    pub duration_ms: u64,
    /// Nothing failed in the baseline (or the log).
    pub nothing_failed: bool,
    /// The touched files were restored (nothing kept).
    pub rollback: bool,
    pub dry_run: bool,
    pub validated: bool,
    /// Identifies this run in audit records.
    pub run_id: String,
    /// Every backup copy that remains: those of files that keep a change.
    pub backups: Vec<Backup>,
    /// Time per phase of the run.
    pub phases: Phases,
    /// The project root the run worked in, and how it was found.
    pub root: String,
    /// Things the user should know (pytest arguments set aside, the time budget ran out).
    pub notes: Vec<String>,
    /// The time budget ran out before every failure was tried.
    pub out_of_time: bool,
    /// `pytest`, or `command` (`--cmd`).
    pub judge: &'static str,
    /// The judge command as given (`--cmd`).
    pub command: Option<String>,
    /// `--install-missing`: what was installed, and whether pip succeeded.
    pub installed: Vec<Install>,
    /// What the model fallback did; none when it was off.
    pub llm: Option<crate::llm::Usage>,
    /// The failures worked on, grouped by crash site (see [`groups`]).
    pub groups: Vec<groups::Group>,
}

/// Milliseconds spent per phase; `tool` is everything outside pytest processes.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Phases {
    /// Resolving `--module` (a collect-only run).
    pub selection_ms: u64,
    pub baseline_ms: u64,
    pub probe_ms: u64,
    /// Targeted runs of candidates.
    pub candidates_ms: u64,
    /// Full-suite runs that confirm candidates.
    pub confirm_ms: u64,
    /// Everything outside the runs above (`tool_ms` includes `worker_wait_ms`).
    pub tool_ms: u64,
    /// How long the warm worker took to start (a Python process importing pytest; it overlaps
    /// the cold baseline, so most of it is on no critical path).
    pub worker_start_ms: u64,
    /// How long runs waited for the worker to start: the part of its start on the critical
    /// path, counted in `tool_ms`.
    pub worker_wait_ms: u64,
}

/// Which phase a pytest run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Selection,
    Baseline,
    Probe,
    Candidate,
    Confirm,
}

impl Phase {
    fn trace_label(self) -> &'static str {
        match self {
            Phase::Selection => "run: selection",
            Phase::Baseline => "run: baseline",
            Phase::Probe => "run: probe",
            Phase::Candidate => "run: candidate",
            Phase::Confirm => "run: confirm",
        }
    }
}

/// Up to this many other tests in a failure's group, their check rides on the candidate's
/// full run instead of a run of their own: for a few tests a run costs its start, and the full
/// run holds them anyway.
const GROUP_IN_FULL_RUN: usize = 8;

/// A touched file's saved original.
#[derive(Debug, Clone, Serialize)]
pub struct Backup {
    pub file: String,
    /// The original design's `{backup_dir}/agent-self-debugger-loop/{basename}.{ts}.bak`.
    pub backup: Option<String>,
    pub original_hash: String,
    /// Whether the file keeps a change.
    pub changed: bool,
}

/// `fix`: works in the project itself. Every file is journaled before its first byte is
/// written; proven fixes are kept (all of them, or none with `--all-or-nothing`), and when
/// nothing is kept every touched file is restored byte for byte and mtime.
pub fn fix(opts: &Options) -> Result<Report, SessionError> {
    let started = Instant::now();
    let root = opts.root.path().to_path_buf();
    let t = crate::trace_times::span("rules loaded");
    let rules = load_rules(&root, opts)?;
    drop(t);
    let t = crate::trace_times::span("interpreter prepared");
    let python = interpreter(&root, opts)?;
    drop(t);
    prewarm(opts, &python);
    let t = crate::trace_times::span("stale temp dirs scanned");
    runner::remove_stale_temp_dirs();
    drop(t);
    let t = crate::trace_times::span("journal begun");
    let journal = Journal::begin(&root, opts.backup_dir.as_deref())
        .map_err(|e| SessionError::Environment(e.to_string()))?;
    drop(t);
    let mut ws = JournalWorkspace { journal };
    let t = crate::trace_times::span("attempt loop");
    let result = run_loop(opts, &rules, python, &mut ws, started);
    drop(t);
    let _t = crate::trace_times::span("journal committed or rolled back, report");
    let journal = ws.journal;
    let mut report = match result {
        Ok(r) if !crate::process::interrupted() => r,
        Ok(_) => {
            let restored = journal.rollback();
            return Err(SessionError::Environment(match restored {
                Ok(_) => "interrupted: every touched file was restored byte for byte".into(),
                Err(e) => format!("interrupted, and restoring failed: {e}"),
            }));
        }
        Err(e) => {
            let interrupted = crate::process::interrupted();
            return Err(match journal.rollback() {
                Ok(_) if interrupted => SessionError::Environment(
                    "interrupted: every touched file was restored byte for byte".into(),
                ),
                Ok(_) => e,
                Err(r) => SessionError::Environment(format!("{e}; restoring failed too: {r}")),
            });
        }
    };
    let all_fixed = report
        .failures
        .iter()
        .all(|f| matches!(f.status, "fixed" | "fixed_by_another_patch" | "installed"));
    let keep = !report.patches.is_empty() && (!opts.all_or_nothing || all_fixed);
    let touched = !journal.files().is_empty();
    if keep {
        let originals: BTreeMap<PathBuf, Vec<u8>> = journal
            .files()
            .into_iter()
            .filter_map(|p| journal.original(&p).map(|b| (p, b.to_vec())))
            .collect();
        report.patches = combine(&root, &report.patches, |file| {
            originals.get(&root.join(file)).cloned()
        });
        let committed = journal
            .commit()
            .map_err(|e| SessionError::Environment(e.to_string()))?;
        // Exactly the copies that remain: those of files that keep a change.
        report.backups = committed
            .files
            .iter()
            .filter(|f| f.backup.is_some())
            .map(|f| Backup {
                file: f.path.to_string_lossy().replace('\\', "/"),
                backup: f.backup.as_ref().map(|b| b.to_string_lossy().into_owned()),
                original_hash: f.original_hash.clone(),
                changed: f.changed,
            })
            .collect();
    } else {
        let restored = journal
            .rollback()
            .map_err(|e| SessionError::Environment(e.to_string()))?;
        // Normally none: a restored file needs no backup; one that could not be removed is listed.
        report.backups = restored
            .backups
            .iter()
            .map(|b| Backup {
                file: b.path.to_string_lossy().replace('\\', "/"),
                backup: Some(b.backup.to_string_lossy().into_owned()),
                original_hash: b.original_hash.clone(),
                changed: false,
            })
            .collect();
        report.rollback = touched;
        report.patches.clear();
        for f in &mut report.failures {
            if matches!(f.status, "fixed" | "fixed_by_another_patch") {
                f.status = "rolled_back";
            }
        }
    }
    report.finish(started);
    Ok(report)
}

/// Starts the warm worker as soon as the interpreter is known, when runs will use it: its
/// imports then overlap the journal's start and the loop's setup instead of all coming after
/// them, in front of the baseline (a Python importing pytest: `phases_ms.worker_wait_ms` is
/// what is left of it on the critical path). The baseline itself runs in the worker: a cold
/// baseline beside the start measured slower on 2 busy cores (docs/performance.md, stop 19).
fn prewarm(opts: &Options, python: &Interpreter) {
    if opts.worker == crate::worker::Mode::Auto && opts.judge.is_none() && opts.sandbox.is_none() {
        crate::worker::prewarm(&python.path);
    }
}

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

/// `fix --dry-run`: everything in a scratch copy.
pub fn dry_run(opts: &Options) -> Result<Report, SessionError> {
    let started = Instant::now();
    let root = opts.root.path().to_path_buf();
    let rules = load_rules(&root, opts)?;
    if !opts.validate {
        // It reads the project's files: under the lock, like the copy of a dry run.
        return journal::while_locked_for_copy(&root, || {
            propose_only(opts, &root, &rules, started)
        })
        .map_err(|e| SessionError::Environment(dry_run_refused(&e)))?;
    }
    let python = interpreter(&root, opts)?;
    prewarm(opts, &python);
    runner::remove_stale_temp_dirs();
    // Under the project's lock, so no real run has a probe or a candidate in a file meanwhile.
    let scratch = journal::while_locked_for_copy(&root, || Scratch::copy_of(&root))
        .map_err(|e| SessionError::Environment(dry_run_refused(&e)))?
        .map_err(|e| {
            SessionError::Environment(format!("cannot copy the project to a scratch dir: {e}"))
        })?;
    let mut ws = ScratchWorkspace {
        scratch,
        originals: BTreeMap::new(),
    };
    let mut report = run_loop(opts, &rules, python, &mut ws, started).map_err(|e| {
        if crate::process::interrupted() {
            SessionError::Environment("interrupted: the project was not changed (dry run)".into())
        } else {
            e
        }
    })?;
    if crate::process::interrupted() {
        // The loop stopped early: its report would leave failures out.
        return Err(SessionError::Environment(
            "interrupted: the project was not changed (dry run)".into(),
        ));
    }
    let all_fixed = report
        .failures
        .iter()
        .all(|f| matches!(f.status, "fixed" | "fixed_by_another_patch" | "installed"));
    if opts.all_or_nothing && !all_fixed && !report.patches.is_empty() {
        report.patches.clear();
        for f in &mut report.failures {
            if matches!(f.status, "fixed" | "fixed_by_another_patch") {
                f.status = "rolled_back";
            }
        }
        report.finish(started);
        return Ok(report);
    }
    // The patched content lives in the scratch copy, and so do the originals (as copied).
    let scratch_root = ws.root().to_path_buf();
    report.patches = combine(&scratch_root, &report.patches, |file| {
        let path = scratch_root.join(file);
        let key = std::fs::canonicalize(&path).unwrap_or(path);
        ws.originals.get(&key).cloned()
    });
    // Messages name the user's project, not the scratch copy that is gone after the run (the
    // probe keeps its scratch paths: they prove which copy was imported).
    let (from, to) = (
        ws.root().to_string_lossy().into_owned(),
        root.to_string_lossy().into_owned(),
    );
    let fix_path = |s: &mut String| {
        if s.contains(&from) {
            *s = s.replace(&from, &to);
        }
    };
    for f in &mut report.failures {
        fix_path(&mut f.msg);
        if let Some(r) = &mut f.reason {
            fix_path(r);
        }
    }
    for a in &mut report.attempts {
        if let Some(n) = &mut a.new_failure {
            fix_path(n);
        }
        fix_path(&mut a.stdout_tail);
        fix_path(&mut a.stderr_tail);
    }
    report.finish(started);
    Ok(report)
}

/// Why a dry run did not start, and why it does not just go ahead.
fn dry_run_refused(e: &JournalError) -> String {
    format!(
        "{e}; a dry run does not read a project while another run may have a probe or an \
         unproven candidate in its files"
    )
}

impl Report {
    /// Total duration and the tool's own share, once the run is over.
    fn finish(&mut self, started: Instant) {
        self.duration_ms = started.elapsed().as_millis() as u64;
        let p = &mut self.phases;
        let pytest = p.selection_ms + p.baseline_ms + p.probe_ms + p.candidates_ms + p.confirm_ms;
        p.tool_ms = self.duration_ms.saturating_sub(pytest);
        let (start, wait) = crate::worker::take_times();
        p.worker_start_ms = start;
        p.worker_wait_ms = wait.min(p.tool_ms);
    }
}

/// The loop itself, in any workspace. Returns the report; the caller keeps or rolls back.
pub fn run_loop(
    opts: &Options,
    rules: &RuleSet,
    python: Interpreter,
    ws: &mut dyn Workspace,
    started: Instant,
) -> Result<Report, SessionError> {
    let root = opts.root.path();
    let run_id = run_id();
    let mut s = Runs {
        stdlib: Stdlib::new(python.clone()),
        python,
        opts,
        count: 0,
        total: Duration::ZERO,
        timeout: opts.timeout.unwrap_or(runner::DEFAULT_TIMEOUT),
        attempt_no: 0,
        deadline: started + opts.time_budget,
        baseline: Duration::ZERO,
        phases: Phases::default(),
        deselect: Vec::new(),
        installed: Vec::new(),
        last_mismatch: None,
        llm: opts.llm.clone().map(crate::llm::Llm::new),
        facts: Default::default(),
    };
    let selection = match &opts.test {
        Some(t) => Some(s.resolve_selection(ws, t)?),
        None => None,
    };
    // A test stuck where the per-test timer cannot reach it (in C code) ends the whole run
    // through the plugin's backstop: it is reported, left out of every later run, and the
    // baseline is taken again so that the other failures are still worked on.
    let mut hung = Vec::new();
    crate::progress::phase("running the test suite (baseline)");
    let baseline = loop {
        let run = s.run(ws, &[], Phase::Baseline)?;
        match &run.hang {
            Some(h) if hung.len() < MAX_HARD_HANGS && !s.deselect.contains(&h.test) => {
                s.deselect.push(h.test.clone());
                hung.push(h.clone());
            }
            _ => break run,
        }
    };
    s.baseline = baseline.duration;
    // The baseline is read once: its failures are both the reference set and, without a log,
    // the failures to work on.
    let baseline_failures = match s.read(&baseline, ws.root()) {
        Verdict::Green => Vec::new(),
        Verdict::Failed(f) => f,
        Verdict::NoTests => {
            return Err(SessionError::NoTests(format!(
                "no tests were collected under {}{}",
                root.display(),
                if opts.pytest_args.is_empty() {
                    String::new()
                } else {
                    format!(" with pytest arguments `{}`", opts.pytest_args.join(" "))
                }
            )))
        }
        Verdict::Usage(m) => {
            return Err(SessionError::BadInput(format!(
                "pytest refused the run: {m}"
            )))
        }
        Verdict::Error(m) => {
            return Err(SessionError::Pytest(format!(
                "the baseline run gave no verdict: {m}"
            )))
        }
        Verdict::TimedOut => {
            let what = if opts.judge.is_some() {
                "the command"
            } else {
                "the test suite"
            };
            return Err(SessionError::Pytest(if s.out_of_time() {
                format!(
                    "{what} did not finish within the time budget of {} s (--time-budget)",
                    opts.time_budget.as_secs()
                )
            } else {
                format!(
                    "{what} did not finish within {} s (--timeout)",
                    s.timeout.as_secs()
                )
            }));
        }
    };
    if opts.timeout.is_none() {
        // Candidates may slow a test down, but a hang must not cost 10 minutes a try.
        s.timeout =
            (baseline.duration * 10).clamp(Duration::from_secs(30), runner::DEFAULT_TIMEOUT);
    }
    // A test that hung in the baseline would cost the per-test limit in every later run; it
    // is reported from the baseline and left out from here on.
    for f in &baseline_failures {
        if let Some(t) = f
            .test
            .as_ref()
            .filter(|_| f.exc_type == crate::plugin::TIMEOUT_EXC)
        {
            if !s.deselect.contains(t) {
                s.deselect.push(t.clone());
            }
        }
    }
    // A conftest that cannot be imported hides the whole suite: what fails behind it is only
    // known once it is fixed, and is then worked on like the rest.
    let mut blind = !baseline_failures.is_empty() && baseline_failures.iter().all(is_conftest);
    let mut current = failure_keys(&baseline_failures);
    let targets: Vec<Failure> = match &opts.log {
        Some(bytes) => {
            traceback::parse(bytes, root)
                .map_err(|e| SessionError::BadInput(format!("log: {e}")))?
                .failures
        }
        None => baseline_failures,
    };
    let selected = |f: &Failure| {
        selection
            .as_ref()
            .is_none_or(|ids| f.test.as_ref().is_some_and(|t| ids.contains(t)))
    };
    // Biggest crash-site group first; each group is worked on through one representative.
    let (mut groups, ordered) =
        groups::Groups::build(targets.into_iter().filter(|f| selected(f)).collect());
    // The report lists the failures in this order, whenever a batch decided them.
    let order: BTreeMap<(String, When), usize> = ordered
        .iter()
        .enumerate()
        .map(|(i, f)| (failure_key(f), i))
        .collect();
    let mut queue: VecDeque<Failure> = ordered.into();
    let nothing_failed = queue.is_empty();

    let mut outcomes: Vec<FailureOutcome> = hung
        .iter()
        .map(|h| {
            let (file, line, func) = hang_place(h, ws.root());
            FailureOutcome {
                test: Some(h.test.clone()),
                when: match h.when.as_str() {
                    "setup" => When::Setup,
                    "teardown" => When::Teardown,
                    _ => When::Call,
                },
                file,
                line,
                func,
                exc_type: crate::plugin::TIMEOUT_EXC.to_string(),
                msg: format!(
                "the test did not finish within {} s (selfdebug's per-test limit, --test-timeout)",
                opts.test_timeout.as_secs_f64()
            ),
                category: Category::Timeout,
                status: "timed_out",
                reason: Some(format!(
                    "{}; it was left out of every later run (--deselect)",
                    h.describe()
                )),
                probe: None,
                output_check: None,
                suspicious: Vec::new(),
                group: None,
            }
        })
        .collect();
    let mut attempts = Vec::new();
    // Proven content per file (the file's bytes with every accepted fix).
    let mut accepted: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    let mut accepted_cands: Vec<Candidate> = Vec::new();
    let mut out_of_time = false;
    let mut worked_on = 0;
    // Where a failure was before a kept patch moved it (see below).
    let mut first_place: BTreeMap<(String, When), (String, u32)> = BTreeMap::new();
    let mut tried = Tried::default();
    // Fixes kept tentatively, confirmed together by one full run (see [`batch`]).
    let mut pending = batch::Batch::default();
    // Failures whose fix the batch's fallback dropped: worked on again, confirmed alone.
    let mut no_defer: BTreeSet<(String, When)> = BTreeSet::new();
    // Confirms the pending fixes and brings the loop's state up to date.
    macro_rules! settle {
        () => {{
            let mut st = batch::Settle {
                queue: &mut queue,
                current: &mut current,
                first_place: &mut first_place,
                accepted_cands: &mut accepted_cands,
                outcomes: &mut outcomes,
                groups: &mut groups,
                no_defer: &mut no_defer,
                tried: &mut tried,
                out_of_time: &mut out_of_time,
            };
            pending.settle(&mut s, ws, &mut attempts, &mut accepted, &mut st)?;
        }};
    }
    loop {
        if crate::process::interrupted() {
            break;
        }
        let Some(failure) = queue.pop_front() else {
            if pending.is_empty() {
                break;
            }
            // Dropped fixes put their failures back in the queue.
            settle!();
            continue;
        };
        worked_on += 1;
        crate::progress::failure(worked_on, worked_on + queue.len(), failure.test.as_deref());
        let (category, mut suggestion) = category::categorize(&failure, root);
        let mut outcome = outcome_of(&failure, category);
        let group = groups.index(&failure);
        outcome.group = group;
        // A test of a group whose fix is pending is decided with it.
        if let Some(entry) = group.and_then(|g| pending.of_group(g)) {
            entry.members.push(failure);
            continue;
        }
        if let Some((file, line)) = first_place.get(&failure_key(&failure)) {
            outcome.file = Some(file.clone());
            outcome.line = Some(*line);
        }
        if failure.exc_type == OUTPUT_CHECK_EXC {
            // The command has one failure at a time: the last run's is this one.
            outcome.output_check = s.last_mismatch.clone();
            // Without a traceback no rule applies: the search over small edits looks at what
            // the command ran, and the model (when asked for) gets the command, the expected
            // output and the script as its specification.
            if (s.llm.is_none() && !search::takes_output(&s)) || opts.safe_only {
                outcome.status = "not_fixed";
                outcome.reason = Some(format!(
                    "{}; without a traceback no rule applies: only the LLM fallback (--llm) \
                     can work on wrong output",
                    failure.msg
                ));
                outcomes.push(outcome);
                continue;
            }
        }
        if category == Category::Dependency && opts.install_missing {
            if let Some(after) = s.install_missing(ws, &failure, &mut suggestion)? {
                // The same test (or the command) failing differently now, and failures that
                // the missing module hid, are work like the rest.
                let key = failure_key(&failure);
                queue.extend(
                    after
                        .iter()
                        .filter(|f| {
                            (failure_key(f) == key || !current.contains(&failure_key(f)))
                                && selected(f)
                        })
                        .cloned(),
                );
                current = failure_keys(&after);
                let gone = !after.iter().any(|f| {
                    failure_key(f) == key && f.exc_type == failure.exc_type && f.msg == failure.msg
                });
                if gone {
                    let i = s.installed.last();
                    outcome.status = "installed";
                    outcome.reason = i.map(|i| {
                        format!(
                            "installed {} with pip for the missing module `{}`; the failure \
                             is gone",
                            i.distribution, i.module
                        )
                    });
                    outcomes.push(outcome);
                    continue;
                }
            }
        }
        if matches!(category, Category::Environment | Category::Dependency) {
            outcome.status = "escalated";
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        // A test stopped by the per-test limit is never patched by a rule (no rule knows why
        // a loop never ends); with --llm the model gets it, with the frame it was stuck in.
        let to_the_model = s.llm.is_some() && !opts.safe_only && failure.location.is_some();
        // The search looks at the loop it was stuck in (a loop variable that never moves).
        let to_the_search = failure.location.is_some() && search::takes_hangs(&s);
        if category == Category::Timeout && !to_the_model && !to_the_search {
            outcome.status = "timed_out";
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        if let Some(test) = failure
            .test
            .as_ref()
            .filter(|_| category != Category::Timeout)
        {
            // (A hung test is left out of later runs: its absence there proves nothing.)
            if !accepted_cands.is_empty() && !current.iter().any(|(t, _)| t == test) {
                outcome.status = "fixed_by_another_patch";
                outcomes.push(outcome);
                continue;
            }
        }
        // A group whose representative no candidate fixed: the others share its crash site,
        // its probe and its candidates, so they share its outcome too.
        if let Some(g) = group.filter(|g| groups.worked_on(*g)) {
            let rep = groups.list[g].representative.clone();
            let done = outcomes
                .iter()
                .find(|o| o.group == Some(g) && o.test == rep && o.test.is_some())
                .filter(|o| o.status != "fixed")
                .map(|o| (o.status, o.reason.clone()));
            if let Some((status, reason)) = done {
                outcome.status = status;
                outcome.reason = Some(format!(
                    "same crash site as {}, worked on for the group: {}",
                    rep.as_deref().unwrap_or("?"),
                    reason.as_deref().unwrap_or("no candidate passed")
                ));
                outcomes.push(outcome);
                continue;
            }
        }
        if s.out_of_time() {
            out_of_time = true;
            outcome.status = "not_fixed";
            outcome.reason = Some(TIME_BUDGET_USED_UP.into());
            outcomes.push(outcome);
            continue;
        }
        // A failure that is not independent of the pending fixes waits for their full run.
        let key = failure_key(&failure);
        if !pending.is_empty()
            && (!pending.independent(&failure)
                || blind
                || opts.judge.is_some()
                || no_defer.contains(&key))
        {
            queue.push_front(failure);
            worked_on -= 1;
            settle!();
            continue;
        }
        // Defer the full run when a batch is pending, or when another independent failure
        // waits that could share it.
        let defer = !pending.is_empty()
            || (opts.judge.is_none()
                && !blind
                && failure.test.is_some()
                && !no_defer.contains(&key)
                && queue
                    .iter()
                    .any(|f| batch::could_share(f, &failure, &current, root)));
        // The group's other tests still failing: one targeted run proves a candidate on them.
        let others: Vec<String> = match group {
            Some(g) => {
                if !groups.worked_on(g) {
                    groups.represent(g, &failure);
                }
                groups
                    .others(g, &failure)
                    .into_iter()
                    .filter(|t| current.iter().any(|(c, _)| c == t))
                    .collect()
            }
            None => Vec::new(),
        };
        // The timeout category's own budget is 0 (nothing to patch by rule); the model's tries
        // count against the logic budget instead.
        let budget_of = match category {
            Category::Timeout => Category::Logic,
            other => other,
        };
        let mut budget = opts.max_attempts.min(opts.budgets.get(budget_of));
        let proven_before = accepted.clone();
        let fixed_keys: Vec<(String, When)> = std::iter::once(key.clone())
            .chain(current.iter().filter(|(t, _)| others.contains(t)).cloned())
            .collect();
        let mut ctx = Step {
            rules,
            current: &current,
            blind,
            category,
            budget: &mut budget,
            attempts: &mut attempts,
            accepted: &mut accepted,
            first_probe: None,
            reason: None,
            flaky: false,
            suspicious: Vec::new(),
            tried: &mut tried,
            repeats: None,
            group: others,
            group_key: group.and_then(|g| groups.list[g].key.clone()),
            defer,
            batch_files: &pending.files,
            needs_flush: false,
            deferred: None,
        };
        let result = work_on(&mut s, ws, &mut ctx, &failure, 0)?;
        let (needs_flush, deferred) = (ctx.needs_flush, ctx.deferred);
        if needs_flush {
            // Worked on again once the pending fixes are confirmed (nothing was rejected).
            if let Some(g) = group {
                groups.release(g);
            }
            queue.push_front(failure);
            worked_on -= 1;
            settle!();
            continue;
        }
        outcome.probe = ctx.first_probe.take();
        outcome.suspicious = std::mem::take(&mut ctx.suspicious);
        let repeats = ctx.repeats.take();
        let reason = ctx.reason.take().or_else(|| {
            repeats.as_ref().map(|(n, test)| {
                format!(
                    "no candidate passed; {n} candidate{} already rejected for {} with the same \
                     failure {} not tried again",
                    if *n == 1 { "" } else { "s" },
                    test.as_deref().unwrap_or("another failure"),
                    if *n == 1 { "was" } else { "were" }
                )
            })
        });
        let flaky = ctx.flaky;
        if flaky {
            // A flaky representative proves nothing about the others: the next one represents.
            if let Some(g) = group {
                groups.release(g);
            }
        }
        match result {
            Some((steps, _)) if deferred.is_some() => {
                outcome.status = "fixed";
                let entry = batch::Entry::new(
                    failure,
                    outcome,
                    group,
                    steps,
                    fixed_keys,
                    deferred.unwrap_or_default(),
                    &proven_before,
                    &accepted,
                );
                pending.add(entry, &current);
                continue;
            }
            Some((steps, after)) => {
                let after_keys = failure_keys(&after);
                batch::absorb(&after, &mut queue, &mut first_place);
                if blind {
                    // The suite can now be seen: what fails in it is work, not breakage.
                    queue.extend(
                        after
                            .into_iter()
                            .filter(|f| !current.contains(&failure_key(f)) && selected(f)),
                    );
                    blind = false;
                }
                current = after_keys;
                accepted_cands.extend(steps);
                outcome.status = "fixed";
            }
            None => {
                out_of_time |= reason.as_deref() == Some(TIME_BUDGET_USED_UP);
                outcome.status = match reason.as_deref() {
                    _ if flaky => "flaky",
                    _ if category == Category::Timeout => "timed_out",
                    Some(r) if r.contains("--safe-only") => "skipped_unsafe",
                    Some(_) if ctx_tried(&attempts, &failure) == 0 && repeats.is_none() => {
                        "no_candidate"
                    }
                    _ => "not_fixed",
                };
                outcome.reason = reason.or(Some("no candidate passed".into()));
            }
        }
        outcomes.push(outcome);
    }
    if !pending.is_empty() {
        // Interrupted: the pending fixes are undone, unconfirmed.
        settle!();
    }
    // A patch proven for a later failure may have fixed an earlier one as well.
    if !accepted_cands.is_empty() {
        for o in &mut outcomes {
            let unfixed = matches!(o.status, "not_fixed" | "no_candidate" | "skipped_unsafe");
            let gone = o
                .test
                .as_ref()
                .is_some_and(|t| !current.iter().any(|(c, w)| c == t && *w == o.when));
            if unfixed && gone {
                o.status = "fixed_by_another_patch";
                o.reason = None;
            }
        }
    }
    // After the hard hangs, in the order they were worked on (failures found later last).
    let hangs = hung.len().min(outcomes.len());
    outcomes[hangs..].sort_by_key(|o| {
        let key = (o.test.clone().unwrap_or_default(), o.when);
        order.get(&key).copied().unwrap_or(usize::MAX)
    });
    groups.settle(&outcomes);
    let patches = accepted_cands
        .iter()
        .map(|c| Patch {
            file: c.file.clone(),
            rules: vec![c.fix.rule.clone()],
            titles: vec![c.fix.title.clone()],
            safe: c.safe,
            applicability: applicability(c.safe),
            source: c.source,
            review: match c.source {
                "llm" => vec![llm::REVIEW.to_string()],
                _ => review_notes(rules, std::slice::from_ref(&c.fix.rule))
                    .into_iter()
                    .chain(search::review(&c.fix))
                    .collect(),
            },
            validated: true,
            diff: c.diff.clone(),
            diff_encoding: c.diff_encoding,
        })
        .collect();
    let mut notes = opts.notes.clone();
    // Runs that went cold although the worker was on, and why.
    notes.extend(crate::worker::take_notes());
    if out_of_time {
        notes.push(format!(
            "the time budget of {} s was used up: failures not tried are reported as not fixed \
             (raise it with --time-budget)",
            opts.time_budget.as_secs()
        ));
    }
    Ok(Report {
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: s.count,
        pytest_ms: s.total.as_millis() as u64,
        duration_ms: started.elapsed().as_millis() as u64,
        nothing_failed,
        rollback: false,
        dry_run: opts.dry_run,
        validated: true,
        run_id,
        backups: Vec::new(),
        phases: s.phases,
        root: opts.root.path().to_string_lossy().into_owned(),
        notes,
        out_of_time,
        judge: judge_name(opts),
        command: opts.judge.as_ref().map(|j| j.line.clone()),
        installed: s.installed,
        llm: s.llm.as_ref().map(|l| l.usage()),
        groups: groups.list,
    })
}

/// Where a hard hang was stuck: the file relative to `root` (when under it), line, function.
fn hang_place(
    h: &crate::plugin::Hang,
    root: &Path,
) -> (Option<String>, Option<u32>, Option<String>) {
    let Some(frame) = h.frame() else {
        return (None, None, None);
    };
    let (place, func) = match frame.split_once(" in ") {
        Some((p, f)) => (p.to_string(), Some(f.to_string())),
        None => (frame.clone(), None),
    };
    let Some((file, line)) = place.rsplit_once(':') else {
        return (None, None, func);
    };
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let file = Path::new(file)
        .strip_prefix(&real)
        .or_else(|_| Path::new(file).strip_prefix(root))
        .map_or_else(|_| file.to_string(), |p| p.to_string_lossy().into_owned());
    (Some(file), line.parse().ok(), func)
}

/// `pytest` or `command`: which judge proved the run (the JSON's `judge`).
fn judge_name(opts: &Options) -> &'static str {
    if opts.judge.is_some() {
        "command"
    } else {
        "pytest"
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

fn ctx_tried(attempts: &[Attempt], failure: &Failure) -> usize {
    attempts.iter().filter(|a| a.test == failure.test).count()
}

/// State shared by the steps of one failure.
struct Step<'a> {
    rules: &'a RuleSet,
    /// The failing set before this failure was worked on.
    current: &'a BTreeSet<(String, When)>,
    /// The reference run saw no test (a conftest failed to import): failures that appear once
    /// the failure is gone are not breakage.
    blind: bool,
    category: Category,
    budget: &'a mut u32,
    attempts: &'a mut Vec<Attempt>,
    accepted: &'a mut BTreeMap<PathBuf, Vec<u8>>,
    first_probe: Option<ProbeReport>,
    reason: Option<String>,
    /// The failure did not come back when the unchanged code ran again.
    flaky: bool,
    /// What the search's localization ranked (reported with the failure).
    suspicious: Vec<crate::localize::Suspicious>,
    /// Edits pytest already rejected, over the whole run.
    tried: &'a mut Tried,
    /// Candidates skipped as already rejected for the same failure, and the test they were
    /// rejected for.
    repeats: Option<(usize, Option<String>)>,
    /// The other tests of the failure's crash-site group (see [`groups`]), still failing.
    group: Vec<String>,
    /// Where the group crashes (a member failing elsewhere now is another bug).
    group_key: Option<groups::GroupKey>,
    /// A candidate that passes its targeted (and group) run is kept tentatively, its full run
    /// left to the batch's (see [`batch`]).
    defer: bool,
    /// Files of the fixes pending in the batch (patched files and crash sites).
    batch_files: &'a BTreeSet<String>,
    /// Set when the batch must be confirmed before this failure can be worked on.
    needs_flush: bool,
    /// The index in `attempts` of the tentatively accepted attempt.
    deferred: Option<usize>,
}

impl Step<'_> {
    /// Whether the same bytes were already proven wrong for this failure (by a rule, the search,
    /// or for another test failing the same way): counted in `repeats`, and no run is spent.
    fn already_rejected(&mut self, failure: &Failure, cand: &Candidate) -> bool {
        let Some(test) = self.tried.rejected_for(failure, &cand.path, &cand.patched) else {
            return false;
        };
        let test = test.map(str::to_string);
        self.repeats.get_or_insert((0, test)).0 += 1;
        true
    }
}

/// The failure passed once when run again on unchanged code: one more plain run of the test
/// decides. Passing again, it is flaky (`ctx.flaky`, with the reason) and nothing is patched.
fn flaky(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
) -> Result<bool, SessionError> {
    let test: Vec<String> = failure.test.iter().cloned().collect();
    let again = s.run(ws, &test, Phase::Probe)?;
    if !matches!(s.read(&again, ws.root()), Verdict::Green) {
        return Ok(false);
    }
    ctx.flaky = true;
    ctx.reason = Some(format!(
        "flaky: the test failed in the first run and passed twice when run again on \
         unchanged code ({}: {}); a test that fails at random proves no patch, so \
         nothing was patched",
        failure.exc_type,
        failure.msg.lines().next().unwrap_or("")
    ));
    Ok(true)
}

/// Tries the candidates of `failure` in rank order. A candidate after which the targeted test
/// fails differently (a new location or exception) is kept tentatively and the new failure is
/// worked on as the next step, within the same budget; if that leads nowhere it is undone.
/// Returns the accepted candidates and the full suite's failures with them.
#[allow(clippy::type_complexity)]
fn work_on(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    depth: usize,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    // A failed output check of command mode: the search over small edits first (one traced
    // run of the command localizes it), then the model when asked for.
    if depth == 0 && failure.exc_type == OUTPUT_CHECK_EXC && search::takes_output(s) {
        let found = search::search_output(s, ws, ctx, failure)?;
        if found.is_some() || llm::Turn::new(s, failure, None).is_none() {
            return Ok(found);
        }
    }
    // No place in the project's code: only the model (when asked for) can work on it, with
    // what the failure shows (a failed output check of command mode: the command's script).
    let loc = failure.location.as_ref();
    if loc.is_none() && (depth > 0 || llm::Turn::new(s, failure, None).is_none()) {
        ctx.reason
            .get_or_insert_with(|| plan::PlanError::no_location(failure).to_string());
        return Ok(None);
    }
    if let Some(loc) = loc {
        if let Some(why) = excluded(s.opts, &loc.file) {
            ctx.reason.get_or_insert(why);
            return Ok(None);
        }
        if let Ok(path) = plan::confined_path(ws.root(), &loc.file) {
            ws.record(&path)?;
        }
    }
    // The baseline's crash-frame facts stand in for the probe run while the code is still
    // the baseline's (nothing accepted, no tentative step) and they cover the statement.
    let baseline_code = depth == 0 && ctx.accepted.is_empty();
    // The plugin's in-session rerun passed: like a probe run that passed, one more run decides.
    if baseline_code
        && ctx.current.contains(&failure_key(failure))
        && s.facts.passed_on_rerun(failure)
        && flaky(s, ws, ctx, failure)?
    {
        return Ok(None);
    }
    let recorded = baseline_code
        .then(|| s.facts.report(ws.root(), failure, &s.python))
        .flatten();
    // A hang goes to the search without a probe run (it would hang again for the whole limit);
    // the model, when asked for, keeps its probe.
    let hang_search = ctx.category == Category::Timeout && s.llm.is_none();
    if recorded.is_none() && !hang_search {
        crate::progress::step(|| "probing the failing line".into());
    }
    let report = recorded.or_else(|| {
        loc.filter(|_| !hang_search)
            .and_then(|_| s.probe(ws, failure))
    });
    let facts = report.as_ref().map(probe_facts);
    // The model, when asked for, takes over where the rules end (see `llm::Turn`).
    let model = llm::Turn::new(s, failure, report.as_ref());
    // The probe run is the failure's second run on unchanged code: a failure of the baseline
    // that does not come back is flaky, and no patch can be proven against it. The probe
    // cannot change behaviour, but a run without it makes sure before the verdict.
    let passed_again = depth == 0
        && report.as_ref().is_some_and(|r| r.test_outcome.passed)
        && ctx.current.contains(&failure_key(failure));
    // With fixes pending in a batch, a test that passes (or could not be probed) may pass
    // thanks to them: the batch is confirmed first, and the failure read again.
    if depth == 0 && !ctx.batch_files.is_empty() && (passed_again || report.is_none()) {
        ctx.needs_flush = true;
        return Ok(None);
    }
    if depth == 0 {
        ctx.first_probe = report;
    }
    if passed_again && flaky(s, ws, ctx, failure)? {
        return Ok(None);
    }
    let candidates = match plan::plan(&PlanInput {
        root: ws.root(),
        failure,
        rules: ctx.rules,
        probe: facts.as_ref(),
        allow_tests: s.opts.allow_tests,
        stdlib: &s.stdlib,
    }) {
        Ok(c) => c,
        // Wrong output and failures no rule knows: the search over small edits first (no
        // model, every candidate proven); what it cannot fix is the model's when asked for.
        // The search confirms with its own full run: none while fixes are pending.
        Err(e)
            if depth == 0
                && !ctx.batch_files.is_empty()
                && search::applies(s, ctx, failure, &e) =>
        {
            ctx.needs_flush = true;
            return Ok(None);
        }
        Err(e) if depth == 0 && search::applies(s, ctx, failure, &e) => {
            let found = search::search(s, ws, ctx, failure, &search::what_failed(&e))?;
            if found.is_some() || model.is_none() || !llm::may_try(&e) {
                return Ok(found);
            }
            Vec::new()
        }
        // What no rule knows (a wrong result asserted in the test) is the model's to try.
        Err(e) if model.is_some() && llm::may_try(&e) => {
            ctx.reason.get_or_insert(e.to_string());
            Vec::new()
        }
        Err(e) => {
            let mut why = e.to_string();
            if matches!(e, plan::PlanError::NoRule(_)) && !s.opts.selection.is_default() {
                why.push_str(" (the configuration's select/ignore leaves rules out)");
            }
            ctx.reason.get_or_insert(why);
            return Ok(None);
        }
    };
    // A candidate that edits an excluded file is dropped before it is written.
    let mut candidates = candidates;
    let before = candidates.len();
    candidates.retain(|c| excluded(s.opts, &c.file).is_none());
    if candidates.is_empty() && before > 0 {
        ctx.reason
            .get_or_insert("every candidate edits a file excluded by extend-exclude".into());
        return Ok(None);
    }
    let total = candidates.len();
    let candidates: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| c.safe || !s.opts.safe_only)
        .collect();
    if candidates.is_empty() && (total > 0 || model.is_none()) {
        ctx.reason.get_or_insert(if total > 0 {
            format!(
                "{total} candidate{} from unsafe rules not tried (--safe-only)",
                if total == 1 { "" } else { "s" }
            )
        } else {
            "the matching rules proposed nothing that applies here".to_string()
        });
        return Ok(None);
    }
    let mut ahead = None;
    let found = prove(s, ws, ctx, failure, depth, candidates, model, &mut ahead);
    if let Some(a) = ahead {
        a.finish(s);
    }
    found
}

/// The candidate loop of [`work_on`]: the rules' candidates in rank order, then the model's;
/// each written, run, judged, and kept or put back.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn prove(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    depth: usize,
    candidates: Vec<Candidate>,
    mut model: Option<llm::Turn>,
    ahead: &mut Option<parallel::Ahead>,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let key = failure_key(failure);
    let of = candidates.len();
    let mut ranked = candidates.iter().cloned().enumerate();
    // Candidates judged so far: with --jobs N the pool starts once one was rejected.
    let mut judged = 0usize;
    // Once the rules' candidates are all proven wrong, the search gets its turn before the model.
    let mut searched = depth > 0 || of == 0;
    loop {
        if *ctx.budget == 0 || crate::process::interrupted() {
            ctx.reason.get_or_insert(format!(
                "attempt budget for {} failures used up",
                ctx.category.as_str()
            ));
            break;
        }
        if !s.time_for_a_candidate() {
            ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            break;
        }
        if !searched && ranked.len() == 0 && search::applies_after_rules(s, ctx, failure) {
            searched = true;
            // The search makes its own copies: the rules' pool is done.
            if let Some(a) = ahead.take() {
                a.finish(s);
            }
            // The search confirms with its own full run: none while fixes are pending.
            if !ctx.batch_files.is_empty() {
                ctx.needs_flush = true;
                return Ok(None);
            }
            let why = format!(
                "{}: {}; the rules' {of} candidate{} did not pass",
                failure.exc_type,
                failure.msg.lines().next().unwrap_or(""),
                if of == 1 { "" } else { "s" }
            );
            if let Some(found) = search::search(s, ws, ctx, failure, &why)? {
                return Ok(Some(found));
            }
            if model.is_none() {
                break;
            }
        }
        // The rules' candidates first, then (with --llm) the model's, one request each.
        let (n, cand) = match ranked.next() {
            Some((n, c)) => (Some(n), c),
            None => {
                // The model's turn is proven in the workspace: no copy is kept for it.
                if let Some(a) = ahead.take() {
                    a.finish(s);
                }
                match model.as_mut() {
                    Some(m) => match m.next(s, ws, ctx, failure, depth) {
                        Some(c) => (None, c),
                        None => break,
                    },
                    None => break,
                }
            }
        };
        // The same bytes were already proven wrong for this failure: no budget spent on them.
        if ctx.already_rejected(failure, &cand) {
            continue;
        }
        // An edit of a file a pending fix changed is not independent of it: confirm first.
        if ctx.batch_files.contains(&cand.file) {
            ctx.needs_flush = true;
            return Ok(None);
        }
        let label = || match n {
            Some(n) => format!("candidate {}/{of} ({})", n + 1, cand.fix.rule),
            None => format!("the model's candidate ({})", cand.fix.rule),
        };
        *ctx.budget -= 1;
        let previous = ctx
            .accepted
            .get(&cand.path)
            .cloned()
            .unwrap_or_else(|| cand.original.clone());
        let mut started = Instant::now();
        // A failure without a test id (collection, conftest) is only seen in a full run.
        let targeted: Vec<String> = failure.test.iter().cloned().collect();
        let phase = if targeted.is_empty() {
            Phase::Confirm
        } else {
            Phase::Candidate
        };
        // With --jobs N, once a candidate was rejected, the targeted runs of the next ones are
        // made ahead in scratch copies (see `parallel::Ahead`): the first one, mostly the one
        // kept, costs no copy and no run alongside. The run made ahead stands in for the
        // workspace's, unless the candidate moved the failure elsewhere: the new failure,
        // worked on next, is read in the workspace.
        if let (1, Some(rank)) = (judged, n) {
            *ahead = parallel::Ahead::start(s, ws, ctx, failure, &candidates, rank);
        }
        judged += 1;
        let made_ahead = match (ahead.as_mut(), n) {
            (Some(a), Some(rank)) => {
                a.fill(s, ws, ctx, failure, &candidates, rank);
                crate::progress::step(|| format!("{}: running the test", label()));
                a.take(s, ws, rank)?.filter(|(run, v)| {
                    run.timed_out
                        || gone(failure, &key, &targeted, v)
                        || !next_failure(failure, v).is_some_and(|f| is_progress(failure, &f))
                })
            }
            _ => None,
        };
        // Only a candidate whose further runs are made in the workspace is written there.
        let written = made_ahead
            .as_ref()
            .is_none_or(|(run, v)| !run.timed_out && gone(failure, &key, &targeted, v));
        if written {
            ws.write(&cand.path, &cand.patched)?;
        }
        let (first, first_verdict) = match made_ahead {
            Some(made) => {
                // The attempt's time is its own run's, not the wait for it.
                started = Instant::now()
                    .checked_sub(made.0.duration)
                    .unwrap_or(started);
                made
            }
            None => {
                crate::progress::step(|| format!("{}: running the test", label()));
                let first = s.run(ws, &targeted, phase)?;
                let verdict = s.read(&first, ws.root());
                (first, verdict)
            }
        };
        let mut attempt = s.attempt_record(failure, ctx.category, depth, &cand, &first);
        let mut result = None;
        let gone = gone(failure, &key, &targeted, &first_verdict);
        // A small group is checked in the full run that follows anyway (one run fewer); a
        // big one, or one whose full run is the batch's later, gets a run of its own first.
        let group_in_full_run = !ctx.defer && ctx.group.len() <= GROUP_IN_FULL_RUN;
        // The representative passes: the rest of its group in one run, before the full suite.
        let group_passes = if gone && !first.timed_out && !targeted.is_empty() && !group_in_full_run
        {
            if !ctx.group.is_empty() {
                crate::progress::step(|| format!("{}: running the group's tests", label()));
            }
            s.group_run(ws, &ctx.group, ctx.group_key.as_ref(), &mut attempt)?
        } else {
            true
        };
        if first.timed_out {
            attempt.outcome = "timeout";
        } else if gone && !group_passes {
            // Rejected: the attempt says which tests of the group still fail.
        } else if gone && ctx.defer && !targeted.is_empty() {
            // Kept tentatively: one full run confirms the batch of independent fixes (see
            // [`batch`]); the attempt says it was confirmed there, or what the fallback found.
            attempt.outcome = "accepted";
            attempt.confirmed_by = Some("batch");
            ctx.deferred = Some(ctx.attempts.len());
            result = Some(Vec::new());
        } else if gone {
            // The full suite decides, unless the targeted run already was the full suite.
            let suite_verdict = if targeted.is_empty() {
                first_verdict
            } else {
                crate::progress::step(|| format!("{}: running the whole suite", label()));
                let suite = s.run(ws, &[], Phase::Confirm)?;
                s.read(&suite, ws.root())
            };
            let group_passes = !group_in_full_run
                || groups::group_passes_in(
                    &suite_verdict,
                    &ctx.group,
                    ctx.group_key.as_ref(),
                    &mut attempt,
                );
            if group_passes {
                result = judge::judge_full_run(
                    suite_verdict,
                    ctx.current,
                    std::slice::from_ref(&key),
                    ctx.blind,
                )
                .record(&mut attempt);
            }
        } else {
            let next = next_failure(failure, &first_verdict);
            attempt.new_failure = match &next {
                Some(f) => Some(format!(
                    "{}: {}",
                    f.exc_type,
                    f.msg.lines().next().unwrap_or("")
                )),
                None if first_verdict.failures().is_none() => Some(first_verdict.describe()),
                None => None,
            };
            if next
                .as_ref()
                .is_some_and(|n| n.exc_type == crate::plugin::TIMEOUT_EXC)
            {
                // The candidate made the test hang: stopped at the per-test limit.
                attempt.outcome = "timeout";
            }
            // A different failure (not the same exception at the same place) is progress.
            if let Some(next) = next.filter(|n| is_progress(failure, n)) {
                attempt.outcome = "progressed";
                attempt.duration_ms = started.elapsed().as_millis() as u64;
                ctx.attempts.push(attempt);
                ctx.accepted.insert(cand.path.clone(), cand.patched.clone());
                if let Some((mut steps, after)) = work_on(s, ws, ctx, &next, depth + 1)? {
                    steps.insert(0, cand);
                    return Ok(Some((steps, after)));
                }
                ctx.accepted.insert(cand.path.clone(), previous.clone());
                ws.write(&cand.path, &previous)?;
                if ctx.needs_flush {
                    // Not rejected: worked on again once the pending batch is confirmed.
                    return Ok(None);
                }
                ctx.tried.reject(failure, &cand.path, &cand.patched);
                continue;
            }
        }
        attempt.duration_ms = started.elapsed().as_millis() as u64;
        ctx.attempts.push(attempt);
        match result {
            Some(after) => {
                ctx.accepted.insert(cand.path.clone(), cand.patched.clone());
                return Ok(Some((vec![cand], after)));
            }
            None => {
                if written {
                    ws.write(&cand.path, &previous)?;
                }
                ctx.tried.reject(failure, &cand.path, &cand.patched);
            }
        }
    }
    if let Some(m) = model {
        m.finish(ctx);
    }
    Ok(None)
}

/// Whether the candidate's targeted run says the failure is gone (the full run then decides).
fn gone(failure: &Failure, key: &(String, When), targeted: &[String], verdict: &Verdict) -> bool {
    match (verdict, targeted.is_empty()) {
        (Verdict::Green, _) => true,
        (Verdict::Failed(after), true) => !failure_keys(after).contains(key),
        // A subtest's owner ran all its subtests: the proof is this subtest's own outcome
        // (a sibling still failing is judged against the baseline by the full run).
        (Verdict::Failed(after), false)
            if failure
                .test
                .as_deref()
                .is_some_and(traceback::subtest::is_subtest) =>
        {
            !failure_keys(after).contains(key)
        }
        _ => false,
    }
}

/// The failure the targeted test shows with the candidate, when it still fails.
fn next_failure(failure: &Failure, verdict: &Verdict) -> Option<Failure> {
    verdict
        .failures()
        .and_then(|f| f.iter().find(|f| f.test == failure.test).cloned())
}

/// The targeted test now fails with another exception or at another place in the project's
/// code. A failing assertion in the test itself is the candidate's wrong result, not progress.
fn is_progress(before: &Failure, after: &Failure) -> bool {
    let place = |f: &Failure| f.location.as_ref().map(|l| (l.file.clone(), l.line));
    let in_tests = after.location.as_ref().is_some_and(|l| {
        let parts: Vec<&str> = l.file.split('/').collect();
        traceback::locate::is_test_file(&parts)
    });
    // A hang is no step forward: no rule repairs it; nor is a command that now exits 0 with
    // the wrong output (the candidate's wrong result, like an assertion in a test).
    !in_tests
        && after.exc_type != OUTPUT_CHECK_EXC
        && after.exc_type != crate::plugin::TIMEOUT_EXC
        && (before.exc_type != after.exc_type || place(before) != place(after))
}

/// `--no-validate`: the top candidate of each failure in the log, nothing run.
fn propose_only(
    opts: &Options,
    root: &Path,
    rules: &RuleSet,
    started: Instant,
) -> Result<Report, SessionError> {
    let Some(bytes) = &opts.log else {
        return Err(SessionError::BadInput(
            "--no-validate runs nothing, so it needs a pytest log (LOG or -)".into(),
        ));
    };
    let parsed =
        traceback::parse(bytes, root).map_err(|e| SessionError::BadInput(format!("log: {e}")))?;
    let mut outcomes = Vec::new();
    let mut attempts = Vec::new();
    let mut patches = Vec::new();
    // Nothing is run, but the interpreter may still be asked what its standard library holds;
    // one that cannot be found leaves the small fallback list.
    let stdlib = match runner::find_interpreter(root, opts.python.as_deref()) {
        Ok(python) => Stdlib::new(python),
        Err(_) => Stdlib::unavailable(),
    };
    for failure in parsed.failures.iter().filter(|f| {
        opts.test
            .as_ref()
            .is_none_or(|t| f.test.as_ref() == Some(t))
    }) {
        let (category, suggestion) = category::categorize(failure, root);
        let mut outcome = outcome_of(failure, category);
        if matches!(category, Category::Environment | Category::Dependency) {
            outcome.status = "escalated";
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        if let Some(why) = failure
            .location
            .as_ref()
            .and_then(|l| excluded(opts, &l.file))
        {
            outcome.reason = Some(why);
            outcomes.push(outcome);
            continue;
        }
        let planned = plan::plan(&PlanInput {
            root,
            failure,
            rules,
            probe: None,
            allow_tests: opts.allow_tests,
            stdlib: &stdlib,
        })
        .map(|mut c| {
            c.retain(|c| excluded(opts, &c.file).is_none());
            c
        });
        match planned {
            Ok(c) => match c.into_iter().find(|c| c.safe || !opts.safe_only) {
                Some(top) => {
                    outcome.status = "not_validated";
                    attempts.push(Attempt {
                        attempt: attempts.len() + 1,
                        test: failure.test.clone(),
                        step: 0,
                        category,
                        file: top.file.clone(),
                        rule: top.fix.rule.clone(),
                        title: top.fix.title.clone(),
                        safe: top.safe,
                        applicability: applicability(top.safe),
                        source: top.source,
                        diff: top.diff.clone(),
                        outcome: "not_validated",
                        broke: Vec::new(),
                        new_failure: None,
                        confirmed_by: None,
                        exit_code: None,
                        stdout_tail: String::new(),
                        stderr_tail: String::new(),
                        timestamp_ms: now_ms(),
                        duration_ms: 0,
                        search: None,
                        exchange: None,
                    });
                    patches.push(Patch {
                        file: top.file,
                        review: review_notes(rules, std::slice::from_ref(&top.fix.rule)),
                        rules: vec![top.fix.rule],
                        titles: vec![top.fix.title],
                        safe: top.safe,
                        applicability: applicability(top.safe),
                        source: top.source,
                        validated: false,
                        diff: top.diff,
                        diff_encoding: top.diff_encoding,
                    });
                }
                None => {
                    outcome.status = "skipped_unsafe";
                    outcome.reason =
                        Some("only unsafe rules have candidates, and --safe-only was given".into());
                }
            },
            Err(e) => outcome.reason = Some(e.to_string()),
        }
        outcomes.push(outcome);
    }
    let mut report = Report {
        nothing_failed: parsed.failures.is_empty(),
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: 0,
        pytest_ms: 0,
        duration_ms: 0,
        rollback: false,
        dry_run: true,
        validated: false,
        run_id: run_id(),
        backups: Vec::new(),
        phases: Phases::default(),
        root: opts.root.path().to_string_lossy().into_owned(),
        notes: opts.notes.clone(),
        out_of_time: false,
        judge: judge_name(opts),
        command: opts.judge.as_ref().map(|j| j.line.clone()),
        installed: Vec::new(),
        llm: None,
        groups: Vec::new(),
    };
    report.finish(started);
    Ok(report)
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

/// pytest runs, counted and timed.
struct Runs<'a> {
    python: Interpreter,
    /// The interpreter's standard library, indexed (or read from the cache) on first use.
    stdlib: Stdlib,
    opts: &'a Options,
    count: usize,
    total: Duration,
    /// Per-run limit (see [`Runs::run_timeout`] for the budget's share).
    timeout: Duration,
    attempt_no: usize,
    /// When the time budget ends.
    deadline: Instant,
    /// How long the baseline took: what a confirming full run is expected to cost.
    baseline: Duration,
    phases: Phases,
    /// Tests left out of every run (`--deselect`): they hung beyond the per-test timer.
    deselect: Vec<String>,
    /// `--install-missing`: every install tried (each distribution once per run).
    installed: Vec<Install>,
    /// Command mode: the output check the last run failed, if it exited 0 and failed one.
    last_mismatch: Option<crate::command::OutputMismatch>,
    /// The opt-in model fallback (`--llm`), asked when the rules have nothing (left).
    llm: Option<crate::llm::Llm>,
    /// The plugin's crash-frame facts from the latest baseline run.
    facts: probe::frame_facts::Baseline,
}

impl Runs<'_> {
    fn run(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        self.run_with(ws, node_ids, &[], phase)
    }

    fn run_with(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        extra: &[&str],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        let mut spec = self.spec(ws, node_ids, extra);
        if phase == Phase::Confirm && node_ids.is_empty() && self.opts.judge.is_none() {
            crate::xdist::add(&mut spec, &self.python, self.opts.xdist, self.baseline);
        }
        // A baseline run records crash-frame facts (pytest only: the plugin is pytest's).
        let facts = phase == Phase::Baseline && self.opts.judge.is_none();
        if facts {
            spec.env.extend(self.facts.arm(ws.root()));
        }
        let run = self.exec(&spec, phase)?;
        if facts {
            self.facts.collect(ws.root());
        }
        Ok(run)
    }

    /// The one place a judge run's spec is made (every run of the loop, the search's too):
    /// `extra`, then the user's pytest arguments, the hung tests deselected, the workspace's
    /// environment, the run's share of the time budget, the sandbox. Callers narrow it after
    /// (a candidate's shorter per-test limit, the coverage plugin).
    fn spec(&self, ws: &dyn Workspace, node_ids: &[String], extra: &[&str]) -> RunSpec {
        let mut spec = RunSpec::new(ws.root());
        spec.node_ids = node_ids.to_vec();
        spec.extra_args = extra.iter().map(|s| s.to_string()).collect();
        spec.extra_args
            .extend(self.opts.pytest_args.iter().cloned());
        // A timed-out test the model works on is selected for its own targeted run.
        for t in self.deselect.iter().filter(|t| !node_ids.contains(t)) {
            spec.extra_args
                .extend(["--deselect".to_string(), t.clone()]);
        }
        spec.env = ws.env();
        spec.timeout = self.run_timeout();
        spec.test_timeout = Some(self.test_limit(spec.timeout));
        // Every judge run is sandboxed when asked for.
        spec.sandbox = self.opts.sandbox.clone();
        spec.warm = self.opts.worker == crate::worker::Mode::Auto;
        spec
    }

    /// Runs `spec` with the judge (the command, or pytest), counted and timed under `phase`.
    fn exec(&mut self, spec: &RunSpec, phase: Phase) -> Result<PytestRun, SessionError> {
        let Some(judge) = &self.opts.judge else {
            return self.exec_pytest(spec, phase);
        };
        let _t = crate::trace_times::span(phase.trace_label());
        let run = judge
            .run(&self.python, spec)
            .map_err(|e| SessionError::Environment(e.to_string()))?;
        self.last_mismatch = (run.exit_code == Some(0) && !run.timed_out)
            .then(|| judge.mismatch(&run))
            .flatten();
        self.tally(phase, &run);
        Ok(run)
    }

    /// Runs `spec` with pytest whatever the judge (the search's runs), counted and timed.
    fn exec_pytest(&mut self, spec: &RunSpec, phase: Phase) -> Result<PytestRun, SessionError> {
        let _t = crate::trace_times::span(phase.trace_label());
        let run = runner::run_pytest(&self.python, spec)
            .map_err(|e| SessionError::Environment(e.to_string()))?;
        self.tally(phase, &run);
        Ok(run)
    }

    fn tally(&mut self, phase: Phase, run: &PytestRun) {
        self.count += 1;
        self.total += run.duration;
        self.add_phase(phase, run.duration);
    }

    /// `--install-missing` for one dependency failure: pip installs the missing module's
    /// distribution (once per run), then the judge runs the whole selection again. Returns
    /// that run's failures, or `None` when nothing was installed (not a missing module, tried
    /// before, pip failed, no verdict); `suggestion` then says why.
    fn install_missing(
        &mut self,
        ws: &dyn Workspace,
        failure: &Failure,
        suggestion: &mut Option<String>,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        let Some(module) = install::missing_module(failure) else {
            return Ok(None);
        };
        let dist = install::distribution(&module);
        if self.installed.iter().any(|i| i.distribution == dist) {
            return Ok(None);
        }
        let done = install::pip_install(&self.python, &module, &dist, &ws.env());
        let ok = done.ok;
        let detail = done.detail.clone();
        self.installed.push(done);
        if !ok {
            *suggestion = Some(format!(
                "`python -m pip install {dist}` failed (--install-missing): {detail}"
            ));
            return Ok(None);
        }
        let run = self.run(ws, &[], Phase::Baseline)?;
        let after = self
            .read(&run, ws.root())
            .failures()
            .map(<[Failure]>::to_vec);
        if after.is_none() {
            *suggestion = Some(format!(
                "installed {dist} (--install-missing), but the run after it gave no verdict"
            ));
        } else {
            *suggestion = Some(format!(
                "installed {dist} (--install-missing), but the failure persists: {}",
                suggestion
                    .as_deref()
                    .unwrap_or("check the project's dependencies")
            ));
        }
        Ok(after)
    }

    /// What a run of the judge says: pytest's verdict, or the command's.
    fn read(&self, run: &PytestRun, root: &Path) -> Verdict {
        let _t = crate::trace_times::span("verdict read (output parsed)");
        match &self.opts.judge {
            Some(judge) => judge.verdict(run, root),
            None => verdict::read(run, root),
        }
    }

    fn add_phase(&mut self, phase: Phase, d: Duration) {
        let ms = d.as_millis() as u64;
        let p = &mut self.phases;
        match phase {
            Phase::Selection => p.selection_ms += ms,
            Phase::Baseline => p.baseline_ms += ms,
            Phase::Probe => p.probe_ms += ms,
            Phase::Candidate => p.candidates_ms += ms,
            Phase::Confirm => p.confirm_ms += ms,
        }
    }

    /// The per-test limit for a run limited to `run`: `--test-timeout`, but always well inside
    /// the run's own limit (a quarter of it, and at least 10 s for pytest to start and report),
    /// so that a hang fails one test instead of killing the whole run.
    fn test_limit(&self, run: Duration) -> Duration {
        let margin = (run / 4).max(Duration::from_secs(10));
        let inside = run.saturating_sub(margin).max(run / 4);
        self.opts
            .test_timeout
            .min(inside)
            .max(Duration::from_millis(500))
    }

    /// The per-run limit, cut to what is left of the time budget (a run never outlives it).
    fn run_timeout(&self) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        self.timeout.min(left.max(Duration::from_secs(1)))
    }

    fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Whether a candidate's targeted run and confirming full run fit in what is left.
    fn time_for_a_candidate(&self) -> bool {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left > self.baseline * 2 + Duration::from_secs(1)
    }

    /// `--module`: a node id pytest can select, or a bare test name matched against the
    /// collected ids (`test_x` matches `tests/a.py::test_x`, `...::TestY::test_x` and every
    /// `test_x[param]`). Nothing matching is bad input, in pytest's own words where it has some.
    fn resolve_selection(
        &mut self,
        ws: &dyn Workspace,
        wanted: &str,
    ) -> Result<BTreeSet<String>, SessionError> {
        let is_node_id = wanted.contains("::") || wanted.contains(".py");
        let ids: Vec<String> = if is_node_id {
            vec![wanted.to_string()]
        } else {
            Vec::new()
        };
        let run = self.run_with(ws, &ids, &["--collect-only", "-q"], Phase::Selection)?;
        let collected: Vec<String> = String::from_utf8_lossy(&run.stdout)
            .lines()
            .filter(|l| l.contains("::") && !l.starts_with(' '))
            .map(|l| l.trim_end().to_string())
            .collect();
        match verdict::read(&run, ws.root()) {
            Verdict::Usage(m) => {
                return Err(SessionError::BadInput(format!("--module {wanted}: {m}")))
            }
            Verdict::Error(m) => return Err(SessionError::Pytest(m)),
            Verdict::TimedOut => {
                return Err(SessionError::Pytest(
                    "collecting the tests did not finish in time".into(),
                ))
            }
            _ => {}
        }
        let matched: BTreeSet<String> = collected
            .into_iter()
            .filter(|id| {
                if is_node_id {
                    return true;
                }
                let last = id.rsplit("::").next().unwrap_or(id);
                let bare = last.split('[').next().unwrap_or(last);
                last == wanted || bare == wanted || id.ends_with(&format!("::{wanted}"))
            })
            .collect();
        if matched.is_empty() {
            return Err(SessionError::BadInput(format!(
                "--module {wanted}: no collected test matches it"
            )));
        }
        Ok(matched)
    }

    fn probe(&mut self, ws: &dyn Workspace, failure: &Failure) -> Option<ProbeReport> {
        if self.opts.judge.is_none() {
            failure.test.as_ref()?;
        }
        let opts = self.opts;
        let python = &self.python;
        // The probe's run is a judge run like any other: the command, or pytest.
        let run = |spec: &RunSpec| {
            let mut spec = spec.clone();
            spec.sandbox = opts.sandbox.clone();
            // Like every other run: in a child of the warm worker when it serves (the probe is
            // in the file, which the child imports fresh; its output path is in the env).
            spec.warm = opts.worker == crate::worker::Mode::Auto;
            match &opts.judge {
                Some(judge) => judge.run(python, &spec),
                None => runner::run_pytest(python, &spec),
            }
        };
        let report = probe::probe_with(
            &ProbeRequest {
                project_dir: ws.root(),
                failure,
                interpreter: &self.python,
                timeout: self.run_timeout(),
                test_timeout: Some(self.test_limit(self.run_timeout())),
                env: ws.env(),
                pytest_args: self.opts.pytest_args.clone(),
                // A command's failure names no test: the command is what runs.
                test: opts.judge.as_ref().map(|j| j.headline()),
                // The journal or the scratch copy holds the original.
                backup: false,
            },
            &run,
        );
        match report {
            Ok(r) => {
                let d = Duration::from_millis(r.test_outcome.duration_ms);
                self.count += 1;
                self.total += d;
                self.add_phase(Phase::Probe, d);
                Some(r)
            }
            Err(_) => None,
        }
    }

    fn attempt_record(
        &mut self,
        failure: &Failure,
        category: Category,
        step: usize,
        cand: &Candidate,
        run: &PytestRun,
    ) -> Attempt {
        self.attempt_no += 1;
        Attempt {
            attempt: self.attempt_no,
            test: failure.test.clone(),
            step,
            category,
            file: cand.file.clone(),
            rule: cand.fix.rule.clone(),
            title: cand.fix.title.clone(),
            safe: cand.safe,
            applicability: applicability(cand.safe),
            source: cand.source,
            diff: cand.diff.clone(),
            outcome: "still_failing",
            broke: Vec::new(),
            new_failure: None,
            confirmed_by: None,
            exit_code: run.exit_code,
            stdout_tail: tail(&run.stdout, 40),
            stderr_tail: tail(&run.stderr, 40),
            timestamp_ms: now_ms(),
            duration_ms: 0,
            search: None,
            // A model's candidate carries the request and answer it came from.
            exchange: match cand.source {
                "llm" => self.llm.as_mut().and_then(|l| l.pending.take()),
                _ => None,
            },
        }
    }
}

/// The last `n` lines of a run's output (the token discipline of the original design).
fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
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

fn outcome_of(failure: &Failure, category: Category) -> FailureOutcome {
    FailureOutcome {
        test: failure.test.clone(),
        when: failure.when,
        file: failure.location.as_ref().map(|l| l.file.clone()),
        line: failure.location.as_ref().map(|l| l.line),
        func: failure.location.as_ref().and_then(|l| l.func.clone()),
        exc_type: failure.exc_type.clone(),
        msg: failure.msg.clone(),
        category,
        status: "no_candidate",
        reason: None,
        probe: None,
        output_check: None,
        suspicious: Vec::new(),
        group: None,
    }
}

/// The probe's findings, by text range of the probed file.
fn probe_facts(report: &ProbeReport) -> ProbeFacts {
    let source = std::fs::read(&report.path)
        .ok()
        .and_then(|b| SourceFile::from_bytes(&report.path, b).ok());
    let range = |e: &probe::ExprValue| {
        let s = source.as_ref()?;
        Some(text_offset(s, e.range[0])?..text_offset(s, e.range[1])?)
    };
    let mut facts = ProbeFacts {
        python_version: report.python_version.map(|[a, b]| (a, b)),
        scope: report.scope.clone(),
        ..ProbeFacts::default()
    };
    for e in &report.exprs {
        let Some(r) = range(e) else { continue };
        if let Some(v) = &e.value {
            facts.types.push((r.clone(), v.type_name.clone()));
        }
        if let Some(d) = &e.dir {
            facts.dirs.push((r.clone(), d.clone()));
        }
        if let Some(p) = &e.params {
            facts.params.push((r, p.clone()));
        }
    }
    facts
}

/// File byte offset → offset in the decoded text (BOM dropped; latin-1 bytes ≥ 0x80 are two
/// bytes in the text).
fn text_offset(source: &SourceFile, byte: usize) -> Option<usize> {
    let bytes = source.bytes();
    let bom = if source.has_bom() { 3 } else { 0 };
    let body = bytes.get(bom..byte)?;
    Some(match source.encoding() {
        Encoding::Latin1 => body.iter().map(|&b| if b < 0x80 { 1 } else { 2 }).sum(),
        _ => body.len(),
    })
}

/// One patch per file: the original bytes (from `original`) against the file's bytes now in
/// `worked`, with the rules and titles of every step that touched it.
pub fn combine(
    worked: &Path,
    steps: &[Patch],
    original: impl Fn(&str) -> Option<Vec<u8>>,
) -> Vec<Patch> {
    let mut by_file: BTreeMap<&str, Vec<&Patch>> = BTreeMap::new();
    for p in steps {
        by_file.entry(p.file.as_str()).or_default().push(p);
    }
    let mut out = Vec::new();
    for (file, parts) in by_file {
        let path = worked.join(file);
        let (Some(old), Ok(new)) = (original(file), std::fs::read(&path)) else {
            continue;
        };
        let diff = edit::unified_diff_bytes(file, &old, &new);
        out.push(Patch {
            file: file.to_string(),
            rules: parts.iter().flat_map(|p| p.rules.clone()).collect(),
            titles: parts.iter().flat_map(|p| p.titles.clone()).collect(),
            safe: parts.iter().all(|p| p.safe),
            applicability: applicability(parts.iter().all(|p| p.safe)),
            // The least certain part names the whole: a model's, else the search's.
            source: ["llm", "search"]
                .into_iter()
                .find(|src| parts.iter().any(|p| p.source == *src))
                .unwrap_or("rule"),
            review: parts.iter().fold(Vec::new(), |mut acc, p| {
                for r in &p.review {
                    if !acc.contains(r) {
                        acc.push(r.clone());
                    }
                }
                acc
            }),
            validated: parts.iter().all(|p| p.validated),
            diff: diff.text,
            diff_encoding: diff.encoding,
        });
    }
    out
}
