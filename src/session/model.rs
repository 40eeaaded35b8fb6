//! The report model of a `fix` run: what was found, tried and kept (rendered by
//! [`crate::report::fix`] as the JSON of `schema/fix.schema.json` and the human log).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::edit;
use crate::install::Install;
use crate::probe::ProbeReport;
use crate::rules::Category;
use crate::status::{
    Applicability, AttemptOutcome, ConfirmedBy, DiffEncoding, FailureStatus, Judge, ReasonCode,
    Source,
};
use crate::traceback::{Failure, When};

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
    pub applicability: Applicability,
    /// `rule` or `llm` (the model fallback; its `rule` is `llm` too).
    pub source: Source,
    pub diff: String,
    /// `accepted`, `still_failing`, `progressed` (a different failure now: worked on as the
    /// next step), `new_failures`, `suite_error` (the full run gave no verdict), `timeout`,
    /// `not_validated`, `refused` (a model's answer refused before any run: `new_failure`
    /// says why), `plausible` (a search candidate that passed every proof, another was kept).
    pub outcome: AttemptOutcome,
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
    pub confirmed_by: Option<ConfirmedBy>,
    /// Last lines of what the targeted run printed.
    pub stdout_tail: String,
    pub stderr_tail: String,
    pub timestamp_ms: u64,
    pub duration_ms: u64,
    /// How the candidate silences the failure instead of repairing it (`docs/proof.md`),
    /// when it does: absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub silencing: Option<crate::status::Silencing>,
    /// A search candidate: its hint tier and, when it was kept, how it was chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::AttemptFacts>,
    /// Under a narrow selection: what the proof ran (the selection, and the tests outside it
    /// that run the edited lines; see `docs/proof.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// An unsafe candidate whose failing tests passed: how often they were run in a row on it
    /// (the proving run counted) and passed; absent for safe candidates and candidates whose
    /// failing tests did not pass (see `docs/proof.md`, "Chance is not proof").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// An accepted attempt: the runs that proved it, in order (the targeted run, then the
    /// group's, the covering or the full run); absent for other outcomes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proven_by: Vec<ProofRun>,
    /// The model's request and answer (the audit log has them; the JSON does not).
    #[serde(skip)]
    pub exchange: Option<crate::llm::Exchange>,
}

/// What a run that proved a patch was (`attempt_records[].proven_by`, `patches[].proven_by`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProofRun {
    pub stage: ProofStage,
    /// The command as run in the project (interpreter, `-m pytest`, the arguments), or the
    /// judge's command line under `--cmd`.
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    /// pytest's counts from its last stats line (errors counted as failed); all 0 under `--cmd`
    /// or when pytest printed no stats line.
    pub passed: u32,
    pub failed: u32,
    pub deselected: u32,
}

/// Which run of a proof: `targeted` (chosen tests: the failing test, its group, a repeat),
/// `covering` (the passing tests that run a search candidate's edited line; the tests outside
/// a narrow selection that run the edited lines or share its files), `full` (the whole suite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofStage {
    Targeted,
    Covering,
    Full,
}

/// The repeated runs of an unsafe candidate's failing tests (`--proof-repeats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Repeats {
    /// Passes in a row the candidate needed (`proof-repeats`).
    pub required: u32,
    /// Runs made, the proving run counted (they stop at the first miss).
    pub runs: u32,
    /// Of those, the runs where the failing tests passed.
    pub passed: u32,
    /// The confirming full run, which runs the failing test again and rejects the candidate
    /// when it fails there, is the last of the `required` runs (`runs` counts the targeted
    /// ones): pytest mode, one failing test to repeat.
    pub full_run: bool,
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
    pub applicability: Applicability,
    /// `rule`, or `llm` when a model wrote (part of) it.
    pub source: Source,
    /// For unsafe patches: what a reviewer should check, one line per unsafe rule.
    pub review: Vec<String>,
    pub validated: bool,
    /// The unified diff as text; `diff_encoding` says how it maps to the patch's bytes.
    pub diff: String,
    /// `utf-8` (the text is the bytes), or `iso-8859-1` for a file whose bytes are not UTF-8
    /// (each character is one byte): encode `diff` with it for `git apply`.
    pub diff_encoding: DiffEncoding,
    /// The kept candidates behind it, in the order they were applied: annotations point at
    /// each one's own lines (not in the JSON: `rules`, `titles` and `diff` say it there).
    #[serde(skip)]
    pub steps: Vec<PatchStep>,
    /// A search fix: the other candidates that passed every proof, best first (see
    /// `docs/search.md`); absent when there were none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<crate::search::choose::Alternative>,
    /// The runs that proved the kept candidates behind it (their attempts' `proven_by`, a run
    /// shared by several listed once); empty when nothing was proven (`--no-validate`).
    pub proven_by: Vec<ProofRun>,
    /// A kept candidate's patch, before [`combine`]: the failures it was kept for (the one it
    /// was proven on first, then its crash-site group's), which make its [`Fix`].
    #[serde(skip)]
    pub kept_for: Vec<String>,
    /// A kept candidate's patch, before [`combine`]: the file's bytes before and after it.
    #[serde(skip)]
    pub bytes: Option<(Vec<u8>, Vec<u8>)>,
}

/// One fix (`fixes[]`): the kept candidates proven for one failure (a chain's steps too), with
/// the failures they fix and their own diff against the original files.
#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    /// The failures it fixes (test ids): the one it was proven on, then the other tests of its
    /// crash-site group that pass now.
    pub failures: Vec<String>,
    pub files: Vec<String>,
    pub rules: Vec<String>,
    pub titles: Vec<String>,
    pub safe: bool,
    /// Its own unified diff against the original files, which `git apply` takes alone (without
    /// the other fixes); null when it changes lines another fix changed first, so it does not
    /// stand alone (the report's `diff` has both).
    pub diff: Option<String>,
    pub diff_encoding: DiffEncoding,
}

/// The fixes of the kept candidates' patches (`steps`, before [`combine`]), in the order they
/// were kept; `original` gives a file's original bytes.
pub fn fixes(steps: &[Patch], original: impl Fn(&str) -> Option<Vec<u8>>) -> Vec<Fix> {
    let mut order: Vec<&str> = Vec::new();
    for p in steps {
        if let Some(k) = p.kept_for.first() {
            if !order.contains(&k.as_str()) {
                order.push(k);
            }
        }
    }
    order
        .into_iter()
        .map(|key| {
            let parts: Vec<&Patch> = steps
                .iter()
                .filter(|p| p.kept_for.first().map(String::as_str) == Some(key))
                .collect();
            let mut failures: Vec<String> = Vec::new();
            for t in parts.iter().flat_map(|p| &p.kept_for) {
                if !failures.contains(t) {
                    failures.push(t.clone());
                }
            }
            let mut files: Vec<String> = Vec::new();
            for p in &parts {
                if !files.contains(&p.file) {
                    files.push(p.file.clone());
                }
            }
            // Each file: its steps of this fix, made on the original alone.
            let diffs: Option<Vec<edit::DiffText>> = files
                .iter()
                .map(|file| {
                    let old = original(file)?;
                    let mut alone = old.clone();
                    for p in parts.iter().filter(|p| &p.file == file) {
                        let (before, after) = p.bytes.as_ref()?;
                        alone = edit::rebase(&alone, before, after)?;
                    }
                    Some(edit::unified_diff_bytes(file, &old, &alone))
                })
                .collect();
            let encoding = |d: &[edit::DiffText]| match d {
                [one] => Some(one.encoding),
                _ if d.iter().all(|d| d.encoding == DiffEncoding::Utf8) => Some(DiffEncoding::Utf8),
                // Files of both encodings in one text cannot be told apart.
                _ => None,
            };
            let (diff, diff_encoding) = match diffs.as_deref().and_then(|d| Some((d, encoding(d)?)))
            {
                Some((d, enc)) => (Some(d.iter().map(|d| d.text.as_str()).collect()), enc),
                None => (None, DiffEncoding::Utf8),
            };
            Fix {
                failures,
                files,
                rules: parts.iter().flat_map(|p| p.rules.clone()).collect(),
                titles: parts.iter().flat_map(|p| p.titles.clone()).collect(),
                safe: parts.iter().all(|p| p.safe),
                diff,
                diff_encoding,
            }
        })
        .collect()
}

/// One kept candidate of a [`Patch`]: its diff is against the file as it was just before it
/// (the original with the earlier steps applied).
#[derive(Debug, Clone)]
pub struct PatchStep {
    pub rule: String,
    pub title: String,
    pub safe: bool,
    pub review: Vec<String>,
    pub diff: String,
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
    pub status: FailureStatus,
    /// Why it ended so, as one word of a closed set (see [`ReasonCode`], docs/json.md); set
    /// when the report is finished ([`reason_code`]).
    pub reason_code: ReasonCode,
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
    /// Candidates ranked for the failure that were not tried when the work on it ended (the
    /// time budget, the search's time, the rules' rank cap); absent when none were left.
    #[serde(skip_serializing_if = "is_zero")]
    pub untried: usize,
    /// Search candidates left out before any run (not run by the failing test, not
    /// compiling, the same program as an earlier one); absent when none were.
    #[serde(skip_serializing_if = "is_zero")]
    pub prechecked: usize,
    /// Index into the report's `causes`: the cause this failure belongs to (see
    /// [`super::causes`]); absent when the run kept no record of causes (nothing failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<usize>,
    /// Candidates left out before any run for introducing a literal of the failing test's
    /// expected value absent from the module (`plan::literals`); absent when none were.
    #[serde(skip_serializing_if = "is_zero")]
    pub test_literals: usize,
    /// A `flaky` test: how often it passed and failed in the runs of the same code that showed
    /// it (see `docs/proof.md`, "Chance is not proof").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<FlakyRuns>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub struct Report {
    /// The interpreter the tests ran with (`None` under `--cmd`, which runs no Python of ours).
    pub interpreter: Option<InterpreterInfo>,
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
    pub judge: Judge,
    /// The judge command as given (`--cmd`).
    pub command: Option<String>,
    /// `--install-missing`: what was installed, and whether pip succeeded.
    pub installed: Vec<Install>,
    /// What the model fallback did; none when it was off.
    pub llm: Option<crate::llm::Usage>,
    /// The failures worked on, grouped by crash site (see [`groups`]).
    pub groups: Vec<Group>,
    /// The failures' causes, and what became of each one's patches (see [`super::causes`]).
    pub causes: Vec<Cause>,
    /// One per fix, with the failures it fixes and its own diff (see [`fixes`]).
    pub fixes: Vec<Fix>,
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
    /// pytest runs that went cold although the worker was on (the notes say why); 0 when the
    /// worker served every run or was off.
    pub worker_cold_runs: u64,
}

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

impl Report {
    /// Each patch's `proven_by`: the runs of the accepted attempts behind it (same file, one of
    /// its rules), each run once.
    pub(super) fn attach_proofs(&mut self) {
        for p in &mut self.patches {
            let mut runs: Vec<ProofRun> = Vec::new();
            for a in self.attempts.iter().filter(|a| {
                a.outcome == AttemptOutcome::Accepted
                    && a.file == p.file
                    && p.rules.contains(&a.rule)
            }) {
                // A run shared with an earlier attempt (the batch's full run) once; an attempt's
                // own repeats all.
                let before = runs.len();
                for r in &a.proven_by {
                    if !runs[..before].contains(r) {
                        runs.push(r.clone());
                    }
                }
            }
            p.proven_by = runs;
        }
    }

    /// Total duration and the tool's own share, once the run is over.
    pub(super) fn finish(&mut self, started: Instant) {
        for f in &mut self.failures {
            f.reason_code = reason_code(f.status, f.reason.as_deref(), f.category);
        }
        self.duration_ms = started.elapsed().as_millis() as u64;
        let p = &mut self.phases;
        let pytest = p.selection_ms + p.baseline_ms + p.probe_ms + p.candidates_ms + p.confirm_ms;
        p.tool_ms = self.duration_ms.saturating_sub(pytest);
        let (start, wait) = crate::worker::take_times();
        p.worker_start_ms = start;
        p.worker_wait_ms = wait.min(p.tool_ms);
        p.worker_cold_runs = crate::worker::take_cold_runs();
    }
}

/// A failure's [`ReasonCode`]: its status says most; an unfixed one's reason says whether a
/// budget or an interrupt ended the work (the session's own fixed texts for those, compared
/// whole or as the reason's end), or its candidates had been rejected for another failure.
pub fn reason_code(status: FailureStatus, reason: Option<&str>, category: Category) -> ReasonCode {
    use super::shared::{ALREADY_REJECTED, INTERRUPTED, TIME_BUDGET_USED_UP};
    match status {
        FailureStatus::Fixed | FailureStatus::FixedByAnotherPatch => ReasonCode::Fixed,
        FailureStatus::Installed => ReasonCode::Installed,
        FailureStatus::SkippedUnsafe => ReasonCode::SafeOnly,
        FailureStatus::Escalated => ReasonCode::Escalated,
        FailureStatus::TimedOut => ReasonCode::TimedOut,
        FailureStatus::Flaky => ReasonCode::Flaky,
        FailureStatus::NotValidated => ReasonCode::NotValidated,
        FailureStatus::RolledBack => ReasonCode::RolledBack,
        FailureStatus::NoCandidate | FailureStatus::NotFixed => {
            let reason = reason.unwrap_or_default();
            if reason.ends_with(TIME_BUDGET_USED_UP) {
                ReasonCode::TimeBudget
            } else if reason == INTERRUPTED {
                ReasonCode::Interrupted
            } else if reason == super::shared::attempt_budget_used_up(category) {
                ReasonCode::AttemptBudget
            } else if reason.contains(ALREADY_REJECTED) {
                ReasonCode::AlreadyRejected
            } else if status == FailureStatus::NoCandidate {
                ReasonCode::NoCandidate
            } else {
                ReasonCode::CandidatesRejected
            }
        }
    }
}

pub(super) fn outcome_of(failure: &Failure, category: Category) -> FailureOutcome {
    FailureOutcome {
        test: failure.test.clone(),
        when: failure.when,
        file: failure.location.as_ref().map(|l| l.file.clone()),
        line: failure.location.as_ref().map(|l| l.line),
        func: failure.location.as_ref().and_then(|l| l.func.clone()),
        exc_type: failure.exc_type.clone(),
        msg: failure.msg.clone(),
        category,
        status: FailureStatus::NoCandidate,
        reason_code: ReasonCode::NoCandidate,
        reason: None,
        probe: None,
        output_check: None,
        suspicious: Vec::new(),
        group: None,
        untried: 0,
        prechecked: 0,
        cause: None,
        test_literals: 0,
        runs: None,
    }
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
            applicability: Applicability::of(parts.iter().all(|p| p.safe)),
            // The least certain part names the whole: a model's, else the search's.
            source: [Source::Llm, Source::Search]
                .into_iter()
                .find(|src| parts.iter().any(|p| p.source == *src))
                .unwrap_or(Source::Rule),
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
            steps: parts.iter().flat_map(|p| p.steps.clone()).collect(),
            alternatives: parts.iter().flat_map(|p| p.alternatives.clone()).collect(),
            proven_by: Vec::new(),
            kept_for: Vec::new(),
            bytes: None,
        });
    }
    out
}

/// How often a flaky test passed and failed in the runs of the same (original) code that
/// showed it: the JSON's `runs` of a `flaky` failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FlakyRuns {
    pub passed: u32,
    pub failed: u32,
}

/// One cause as the report shows it (`causes`; `failures[].cause` is an index into the list).
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// Its failing tests, in the run's order.
    pub tests: Vec<String>,
    pub status: crate::status::CauseStatus,
    /// Why its patches were kept or restored (or why it has none).
    pub reason: String,
    /// The patches made for it (kept when `fixed`, restored when `restored`).
    pub patches: Vec<CausePatch>,
}

/// One patch of a cause: where, by which rule, what it did.
#[derive(Debug, Clone, Serialize)]
pub struct CausePatch {
    pub file: String,
    pub rule: String,
    pub title: String,
}

/// Where and how a group's tests crash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GroupKey {
    pub file: String,
    pub line: u32,
    pub exc_type: String,
    /// The message's first line with numbers as `<n>` and quoted values as `<s>`.
    pub msg_shape: String,
}

/// One group as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// Null for a failure with no test id or no place in the project (it is its own group).
    pub key: Option<GroupKey>,
    pub tests: Vec<String>,
    /// The test the group was worked on through (the first of the group in the run's order).
    pub representative: Option<String>,
    /// The representative's status (`fixed`, `not_fixed`, ...), or `fixed_by_another_patch`
    /// when another group's patch made the whole group pass before it was worked on.
    pub status: FailureStatus,
}

/// What a failure's sources left out before any run, as the failure reports it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) struct Prechecked {
    /// The search's candidates dropped by [`screen`] (`prechecked` in the JSON).
    pub search: usize,
    /// Candidates of the rules or the search that copy a literal of the failing test's
    /// expected value into the code (`plan::literals`; `test_literals` in the JSON).
    pub test_literals: usize,
}

impl Prechecked {
    pub(in crate::session) fn report(&self, outcome: &mut FailureOutcome) {
        outcome.prechecked = self.search;
        outcome.test_literals = self.test_literals;
    }
}

pub use crate::runner::InterpreterInfo;

/// What a candidate's proof ran, in the attempt (only under a narrow selection).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Proof {
    /// Tests in the run's selection as collected on the original code (all of them ran in the
    /// confirming run); 0 when its test file could not be collected before the edit.
    pub selected: usize,
    /// Tests outside the selection run with the candidate: the rest of the selected tests'
    /// files, the tests that ran the edited lines, and the test files importing the module when
    /// the edit runs at import or its coverage is unknown (those that failed on the original
    /// code left out). `None` only when nothing said which tests those are.
    pub outside: Option<usize>,
    /// Those of them that failed with the candidate (the candidate was rejected).
    pub outside_failed: Vec<String>,
    /// Of `outside`, the tests that ran the edited lines on the original code (measured over
    /// the suite); `None` when the coverage run gave nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covering: Option<usize>,
    /// Of `outside`, the tests that started a process on the original code and whose file
    /// imports an edited module (what the process ran is not traced).
    #[serde(skip_serializing_if = "crate::session::model::is_zero")]
    pub spawning: usize,
    /// The test files run whole: the selected tests' own, and the importers of the module.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The edit runs at import (outside every function body): the module's importers ran.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub module_level: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reason_code_follows_its_status_and_the_session_s_own_reasons() {
        use super::super::shared::{attempt_budget_used_up, TIME_BUDGET_USED_UP};
        let code = |status, reason: Option<&str>| reason_code(status, reason, Category::Data);
        assert_eq!(code(FailureStatus::Fixed, None), ReasonCode::Fixed);
        assert_eq!(
            code(FailureStatus::FixedByAnotherPatch, None),
            ReasonCode::Fixed
        );
        assert_eq!(
            code(FailureStatus::SkippedUnsafe, Some("x")),
            ReasonCode::SafeOnly
        );
        assert_eq!(
            code(FailureStatus::NoCandidate, None),
            ReasonCode::NoCandidate
        );
        assert_eq!(
            code(FailureStatus::NotFixed, Some("no candidate passed")),
            ReasonCode::CandidatesRejected
        );
        assert_eq!(
            code(FailureStatus::NotFixed, Some(TIME_BUDGET_USED_UP)),
            ReasonCode::TimeBudget
        );
        let budget = attempt_budget_used_up(Category::Data);
        assert_eq!(
            code(FailureStatus::NotFixed, Some(&budget)),
            ReasonCode::AttemptBudget
        );
        assert_eq!(
            code(FailureStatus::NotFixed, Some("interrupted")),
            ReasonCode::Interrupted
        );
        assert_eq!(
            code(
                FailureStatus::NotFixed,
                Some(
                    "no candidate passed; 2 candidates already rejected for t with the same \
                      failure were not tried again"
                )
            ),
            ReasonCode::AlreadyRejected
        );
    }
}
