//! Output of `selfdebug fix`: the JSON summary (see `schema/fix.schema.json`) on stdout and a
//! human log on stderr; a dry run's patch goes to stdout as a plain unified diff.

use std::fmt::Write;

use serde::Serialize;

use crate::session::{Attempt, Backup, FailureOutcome, Patch, Phases, Report};
use crate::status::{AttemptOutcome, ConfirmedBy, FailureStatus, FinalStatus, Judge};

/// Bumped only when a field is renamed or removed.
pub const FIX_SCHEMA_VERSION: u32 = 1;

/// `pass`: the suite ran and every failure has a proven patch (or nothing failed); `partial`:
/// some; `fail`: none; `escalated`: every failure is an environment or dependency problem;
/// `proposed`: `--no-validate` printed candidates and proved nothing. (`error`, `no_tests` and
/// `bad_input` come from runs that stopped early: see [`error_json`].)
pub fn final_status(report: &Report) -> FinalStatus {
    let total = report.failures.len();
    let count =
        |pred: fn(FailureStatus) -> bool| report.failures.iter().filter(|f| pred(f.status)).count();
    let fixed = count(FailureStatus::is_fixed);
    let escalated = count(|s| s == FailureStatus::Escalated);
    if !report.validated {
        // Nothing ran: nothing is proven, whatever was proposed.
        return if total == 0 {
            FinalStatus::Pass
        } else if count(|s| s == FailureStatus::NotValidated) > 0 {
            FinalStatus::Proposed
        } else if escalated == total {
            FinalStatus::Escalated
        } else {
            FinalStatus::Fail
        };
    }
    if total == 0 || fixed == total {
        FinalStatus::Pass
    } else if fixed > 0
        && !report.rollback
        && report
            .failures
            .iter()
            .all(|f| f.status != FailureStatus::RolledBack)
    {
        FinalStatus::Partial
    } else if escalated > 0 && escalated == total {
        FinalStatus::Escalated
    } else {
        FinalStatus::Fail
    }
}

/// What a run that stopped early had spent: its pytest runs and its time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    pub pytest_runs: usize,
    pub pytest_ms: u64,
    pub duration_ms: u64,
}

/// The JSON of a run that stopped before it had a report (bad input after flag parsing, no
/// tests, pytest errors, the tool could not work): the same object with empty lists, the
/// status and code, and the `error` message; `lock_pid` when another run holds the lock.
pub fn error_json(
    status: FinalStatus,
    exit_code: i32,
    error: &str,
    root: Option<&str>,
    dry_run: bool,
    spent: Spent,
    lock_pid: Option<u32>,
) -> String {
    let mut v = serde_json::json!({
        "schema_version": FIX_SCHEMA_VERSION,
        "exit_code": exit_code,
        "final_status": status,
        "run_id": crate::session::run_id(),
        "error": error,
        "root": root,
        "dry_run": dry_run,
        "validated": false,
        "attempts": 0,
        "files_patched": [],
        "rollback": false,
        "tracebacks": [],
        "patches": [],
        "fixes": [],
        "diff": "",
        "failures": [],
        "groups": [],
        "causes": [],
        "attempt_records": [],
        "backups": [],
        "notes": [],
        "pytest_runs": spent.pytest_runs,
        "pytest_ms": spent.pytest_ms,
        "duration_ms": spent.duration_ms,
        "llm": null,
    });
    if let Some(pid) = lock_pid {
        v["lock_pid"] = pid.into();
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[derive(Serialize)]
struct Traceback<'a> {
    file: Option<&'a str>,
    line: Option<u32>,
    exc_type: &'a str,
    msg: &'a str,
    test: Option<&'a str>,
    func: Option<&'a str>,
}

#[derive(Serialize)]
struct Summary<'a> {
    schema_version: u32,
    exit_code: i32,
    final_status: FinalStatus,
    run_id: &'a str,
    dry_run: bool,
    validated: bool,
    /// Candidates tried (the original design's count).
    attempts: usize,
    /// Files the patches change (in a dry run: would change; nothing was written).
    files_patched: Vec<&'a str>,
    rollback: bool,
    tracebacks: Vec<Traceback<'a>>,
    patches: &'a [Patch],
    /// One per fix, with the failures it fixes and its own diff (see `session::fixes`).
    fixes: &'a [crate::session::Fix],
    /// Every patch's diff in one text (the patches' `diff`, in their order); null when they
    /// mix encodings.
    diff: Option<String>,
    failures: &'a [FailureOutcome],
    /// The failures grouped by crash site, biggest first; `failures[].group` points here.
    groups: &'a [crate::session::Group],
    /// The failures' causes and why each one's patches were kept or restored;
    /// `failures[].cause` points here.
    causes: &'a [crate::session::Cause],
    attempt_records: &'a [Attempt],
    backups: &'a [Backup],
    /// The project root the run worked in.
    root: &'a str,
    /// The interpreter the tests ran with (null under `--cmd`).
    interpreter: Option<&'a crate::session::InterpreterInfo>,
    notes: &'a [String],
    out_of_time: bool,
    /// `pytest`, or `command` (`--cmd`).
    judge: Judge,
    /// The judge command as given; null for pytest runs.
    command: Option<&'a str>,
    /// `--install-missing`: each pip install and whether it succeeded.
    installed: &'a [crate::install::Install],
    pytest_runs: usize,
    pytest_ms: u64,
    phases_ms: &'a Phases,
    duration_ms: u64,
    /// The model fallback's use (null: it was off).
    llm: Option<&'a crate::llm::Usage>,
}

pub fn json(report: &Report) -> String {
    json_exiting(report, final_status(report).exit_code())
}

/// [`json`] of a run that exits with `exit_code` (`--exit-non-zero-on-fix` turns 0 into 1).
pub fn json_exiting(report: &Report, exit_code: i32) -> String {
    let status = final_status(report);
    let summary = Summary {
        schema_version: FIX_SCHEMA_VERSION,
        exit_code,
        final_status: status,
        run_id: &report.run_id,
        dry_run: report.dry_run,
        validated: report.validated,
        attempts: report.attempts.len(),
        files_patched: report.patches.iter().map(|p| p.file.as_str()).collect(),
        rollback: report.rollback,
        tracebacks: report
            .failures
            .iter()
            .map(|f| Traceback {
                file: f.file.as_deref(),
                line: f.line,
                exc_type: &f.exc_type,
                msg: &f.msg,
                test: f.test.as_deref(),
                func: f.func.as_deref(),
            })
            .collect(),
        patches: &report.patches,
        fixes: &report.fixes,
        diff: combined_diff(&report.patches),
        failures: &report.failures,
        groups: &report.groups,
        causes: &report.causes,
        attempt_records: &report.attempts,
        backups: &report.backups,
        root: &report.root,
        interpreter: report.interpreter.as_ref(),
        notes: &report.notes,
        out_of_time: report.out_of_time,
        judge: report.judge,
        command: report.command.as_deref(),
        installed: &report.installed,
        pytest_runs: report.pytest_runs,
        pytest_ms: report.pytest_ms,
        phases_ms: &report.phases,
        duration_ms: report.duration_ms,
        llm: report.llm.as_ref(),
    };
    let mut s = serde_json::to_string_pretty(&summary).unwrap_or_default();
    s.push('\n');
    s
}

/// The patches' diffs in one text, for one `git apply`; `None` when they mix encodings (a
/// latin-1 file's diff and a UTF-8 one's cannot share one text).
fn combined_diff(patches: &[Patch]) -> Option<String> {
    let encodings: std::collections::BTreeSet<_> =
        patches.iter().map(|p| p.diff_encoding).collect();
    (encodings.len() <= 1).then(|| patches.iter().map(|p| p.diff.as_str()).collect())
}

/// The human log (stderr): what failed, what was tried, what was proven.
pub fn human_log(report: &Report) -> String {
    let mut out = String::new();
    write_preamble(&mut out, report);
    if report.nothing_failed {
        out.push_str(if report.validated && report.judge == Judge::Command {
            "selfdebug: pass: the command ran and passed; nothing to fix\n"
        } else if report.validated {
            "selfdebug: pass: the tests ran and nothing fails; nothing to fix\n"
        } else {
            "selfdebug: the log shows no failure; nothing to propose\n"
        });
        return out;
    }
    for f in &report.failures {
        write_failure(&mut out, report, f);
    }
    write_groups(&mut out, report);
    write_causes(&mut out, report);
    write_totals(&mut out, report);
    out
}

/// The notes and the model fallback's use, before any failure.
fn write_preamble(out: &mut String, report: &Report) {
    for n in &report.notes {
        let _ = writeln!(out, "selfdebug: note: {n}");
    }
    if let Some(l) = &report.llm {
        let _ = writeln!(
            out,
            "selfdebug: llm: {} at {}: {} request{}, {} answer{} from the cache",
            l.model,
            l.url,
            l.requests,
            if l.requests == 1 { "" } else { "s" },
            l.cached,
            if l.cached == 1 { "" } else { "s" }
        );
        if let Some(why) = &l.stopped {
            let _ = writeln!(out, "selfdebug: llm: {why}");
        }
    }
}

/// One failure: what failed, what the probe and the localization saw, each attempt for its
/// test, and how it ended.
fn write_failure(out: &mut String, report: &Report, f: &FailureOutcome) {
    let test = f
        .test
        .as_deref()
        .or(report.command.as_deref())
        .unwrap_or("(no test named)");
    let at = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!(" at {file}:{line}"),
        _ => String::new(),
    };
    let first = crate::traceback::first_line(&f.msg);
    let _ = writeln!(
        out,
        "selfdebug: {test}: {}: {first}{at} [{}]",
        f.exc_type,
        f.category.as_str()
    );
    if let Some(p) = &f.probe {
        let nones: Vec<&str> = p.none_exprs().map(|e| e.text.as_str()).collect();
        if p.fired && !nones.is_empty() {
            let _ = writeln!(out, "  probe: None: {}", nones.join(", "));
        } else if !p.fired {
            let _ = writeln!(out, "  probe: the failing line was not reached");
        }
    }
    if !f.suspicious.is_empty() {
        // The localization alone points a person at the likely line, fixed or not.
        let top: Vec<String> = f
            .suspicious
            .iter()
            .take(5)
            .map(|s| format!("{}:{} ({:.2})", s.file, s.line, s.score))
            .collect();
        let _ = writeln!(out, "  suspicious lines: {}", top.join(", "));
    }
    for a in report.attempts.iter().filter(|a| a.test == f.test) {
        let _ = writeln!(
            out,
            "  [{}] {}: {}",
            a.rule,
            a.title,
            attempt_verdict(report, a)
        );
    }
    write_failure_status(out, f);
}

/// An accepted attempt's proof under a narrow selection, as what was run.
fn proof_words(p: &crate::session::Proof) -> String {
    let selected = if p.selected == 1 {
        "the selected test passes".to_string()
    } else if p.selected == 0 {
        // Its test file could not be collected on the original code (an import that failed).
        "the selection, which could not be collected before the edit, passes".to_string()
    } else {
        format!("the {} selected tests pass", p.selected)
    };
    match p.outside {
        Some(0) => format!(
            "proven: {selected}; no other test shares its test file or runs the edited lines"
        ),
        Some(n) => format!(
            "proven: {selected}; {n} other test{} pass{} ({})",
            if n == 1 { "" } else { "s" },
            if n == 1 { "es" } else { "" },
            outside_words(p)
        ),
        None => format!(
            "proven: {selected}; tests outside the selection were not run (neither the \
             collection nor the coverage run said which)"
        ),
    }
}

/// Which tests outside the selection a proof ran, in words.
fn outside_words(p: &crate::session::Proof) -> String {
    let mut what = Vec::new();
    if !p.files.is_empty() {
        what.push(format!(
            "whole test file{} {}",
            plural(p.files.len()),
            p.files.join(", ")
        ));
    }
    match p.covering {
        Some(0) => what.push("none of them runs the edited lines".into()),
        Some(c) => what.push(format!(
            "{c} that run{} the edited lines",
            if c == 1 { "s" } else { "" }
        )),
        None => what.push("the coverage run gave nothing".into()),
    }
    if p.spawning > 0 {
        what.push(format!(
            "{} that start{} a process",
            p.spawning,
            if p.spawning == 1 { "s" } else { "" }
        ));
    }
    if p.module_level {
        what.push("the edit runs at import".into());
    }
    what.join("; ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What became of one attempt, in words.
fn attempt_verdict(report: &Report, a: &Attempt) -> String {
    let what = match a.outcome {
        AttemptOutcome::Accepted => match a.confirmed_by {
            Some(ConfirmedBy::Batch) => {
                "proven: the test passes; confirmed with the other pending \
                                      fixes in one full run, where nothing else broke"
                    .to_string()
            }
            Some(_) => "proven: the test passes and nothing else broke (the batch's \
                                full run failed; confirmed one by one, with the fixes kept \
                                before it)"
                .to_string(),
            None => match &a.proof {
                Some(p) => proof_words(p),
                None => "proven: the test passes and nothing else broke".to_string(),
            },
        },
        AttemptOutcome::StillFailing => match &a.new_failure {
            Some(nf) => format!("rejected: the test still fails ({nf})"),
            None => "rejected: the test still fails".to_string(),
        },
        AttemptOutcome::NewFailures => match &a.proof {
            Some(p) if !p.outside_failed.is_empty() => format!(
                "rejected: the selected test passes, but it breaks {} outside the selection \
                 (of {} test{} run there: {})",
                p.outside_failed.join(", "),
                p.outside.unwrap_or_default(),
                plural(p.outside.unwrap_or_default()),
                outside_words(p)
            ),
            _ => format!("rejected: breaks {}", a.broke.join(", ")),
        },
        // A later candidate for the same failure (or an earlier step), or a failure that
        // ended unfixed, means this one was undone: the failure it led to found no fix
        // (backtracking).
        AttemptOutcome::Progressed
            if report
                .attempts
                .iter()
                .any(|b| b.test == a.test && b.attempt > a.attempt && b.step <= a.step)
                || report
                    .failures
                    .iter()
                    .any(|f| f.test == a.test && !f.status.is_patched()) =>
        {
            format!(
                "the test then failed differently ({}), which found no fix: undone",
                a.new_failure.as_deref().unwrap_or("?")
            )
        }
        AttemptOutcome::Progressed => format!(
            "the test now fails differently ({}); working on that",
            a.new_failure.as_deref().unwrap_or("?")
        ),
        AttemptOutcome::Timeout => {
            "rejected: the test hung (stopped at the time limit)".to_string()
        }
        AttemptOutcome::Plausible => "passed too; not kept (another changes fewer behaviours or \
                                is smaller)"
            .to_string(),
        AttemptOutcome::ByChance => format!(
            "rejected: {}",
            a.new_failure.as_deref().unwrap_or("a pass by chance")
        ),
        AttemptOutcome::Refused => format!(
            "refused before any run: {}",
            a.new_failure.as_deref().unwrap_or("?")
        ),
        AttemptOutcome::SuiteError => format!(
            "rejected: the full run gave no verdict ({})",
            a.new_failure.as_deref().unwrap_or("?")
        ),
        _ => "proposed (not validated)".to_string(),
    };
    // An unsafe patch passed its failing tests several runs in a row (docs/proof.md).
    let what = match a.repeats {
        Some(r) if a.outcome == AttemptOutcome::Accepted => {
            format!("{what} ({} runs in a row)", r.required)
        }
        _ => what,
    };
    let what = if a.outcome != AttemptOutcome::Accepted && a.confirmed_by.is_some() {
        format!("{what} (dropped from the batch: confirmed one by one)")
    } else {
        what
    };
    // One command is the judge: it is what passes or fails, not a test.
    if report.judge == Judge::Command {
        what.replace("the test", "the command")
    } else {
        what
    }
}

/// How a failure ended, when it was not fixed by its own patch.
fn write_failure_status(out: &mut String, f: &FailureOutcome) {
    match f.status {
        FailureStatus::Fixed => {}
        FailureStatus::FixedByAnotherPatch => {
            out.push_str("  fixed by the patch of another failure\n")
        }
        FailureStatus::Installed => {
            let why = f
                .reason
                .as_deref()
                .unwrap_or("installed the missing module");
            let _ = writeln!(out, "  {why}");
        }
        FailureStatus::NotValidated => {}
        FailureStatus::Escalated => {
            let why = f.reason.as_deref().unwrap_or("not a code bug");
            let _ = writeln!(out, "  escalated, not patched: {why}");
        }
        FailureStatus::RolledBack => out.push_str("  proven, but undone (--all-or-nothing)\n"),
        FailureStatus::TimedOut => {
            let why = f.reason.as_deref().unwrap_or("the test hung");
            let _ = writeln!(out, "  timed out, not patched: {why}");
        }
        FailureStatus::Flaky => {
            let why = f.reason.as_deref().unwrap_or("flaky");
            let _ = writeln!(out, "  not patched: {why}");
        }
        _ => {
            let why = f.reason.as_deref().unwrap_or("no candidate passed");
            let _ = writeln!(out, "  not fixed: {why}");
        }
    }
    if f.untried > 0 && f.status != FailureStatus::Fixed {
        let _ = writeln!(
            out,
            "  {} ranked candidate{} left untried",
            f.untried,
            if f.untried == 1 { "" } else { "s" }
        );
    }
}

/// One line per group, when some crash site is shared (else each failure is its own).
fn write_groups(out: &mut String, report: &Report) {
    if !report.groups.iter().any(|g| g.tests.len() > 1) {
        return;
    }
    for (i, g) in report.groups.iter().enumerate() {
        let site = match &g.key {
            Some(k) => format!("{}:{} {}: {}", k.file, k.line, k.exc_type, k.msg_shape),
            None => "no crash site in the project".to_string(),
        };
        let _ = writeln!(
            out,
            "selfdebug: group {}/{}: {} test{} at {site} (representative {}): {}",
            i + 1,
            report.groups.len(),
            g.tests.len(),
            if g.tests.len() == 1 { "" } else { "s" },
            g.representative.as_deref().unwrap_or("none"),
            g.status
        );
    }
}

/// One line per cause whose patches were restored: why (see docs/proof.md).
fn write_causes(out: &mut String, report: &Report) {
    let n = report.causes.len();
    for (i, c) in report.causes.iter().enumerate() {
        if c.status != crate::status::CauseStatus::Restored {
            continue;
        }
        let _ = writeln!(
            out,
            "selfdebug: cause {}/{n} ({}): {}: {}",
            i + 1,
            c.tests.join(", "),
            c.status,
            c.reason
        );
    }
}

/// The final status line, the review notes of unsafe patches, and what happened to the files.
fn write_totals(out: &mut String, report: &Report) {
    let status = final_status(report);
    let judge = if report.judge == Judge::Command {
        "command"
    } else {
        "pytest"
    };
    let _ = writeln!(
        out,
        "selfdebug: {status}: {} patch{} {}; {} {judge} run{} ({} ms in {judge}, {} ms in all)",
        report.patches.len(),
        if report.patches.len() == 1 { "" } else { "es" },
        match (report.validated, report.dry_run) {
            (false, _) => "proposed, not validated",
            (true, true) => "proven in a scratch copy",
            (true, false) => "proven and kept",
        },
        report.pytest_runs,
        if report.pytest_runs == 1 { "" } else { "s" },
        report.pytest_ms,
        report.duration_ms
    );
    for p in report.patches.iter().filter(|p| !p.safe) {
        for r in &p.review {
            let _ = writeln!(out, "selfdebug: review {} (unsafe fix): {r}", p.file);
        }
    }
    if report.dry_run {
        out.push_str("selfdebug: dry run: no file was changed\n");
    } else if report.rollback {
        out.push_str("selfdebug: every touched file was restored byte for byte\n");
    }
}

/// The audit log (`--audit-log FILE`): one JSON line per attempt, with the original design's
/// execution-record fields.
pub fn audit_lines(report: &Report) -> String {
    let mut out = String::new();
    for a in &report.attempts {
        let record = serde_json::json!({
            "task_id": report.run_id,
            "attempt": a.attempt,
            "timestamp_ms": a.timestamp_ms,
            "test": a.test,
            "step": a.step,
            "rule": a.rule,
            "file": a.file,
            "code": a.diff,
            "stdout": a.stdout_tail,
            "stderr": a.stderr_tail,
            "exit_code": a.exit_code,
            "error_category": a.category,
            "outcome": a.outcome,
            "duration_ms": a.duration_ms,
            "success": a.outcome == AttemptOutcome::Accepted,
            "dry_run": report.dry_run,
            "judge": report.judge,
            "command": report.command,
            "source": a.source,
            "llm": a.exchange,
        });
        out.push_str(&record.to_string());
        out.push('\n');
    }
    // A request that produced no candidate (the server failed, the answer was not one) is
    // recorded too: what was asked and what came back.
    for e in report.llm.iter().flat_map(|l| &l.failed) {
        let record = serde_json::json!({
            "task_id": report.run_id,
            "kind": "llm_exchange",
            "success": false,
            "llm": e,
        });
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}
