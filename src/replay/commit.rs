//! Replaying one candidate: reconstruct, reproduce (or take the cached reproduction), repair,
//! score.

use std::path::{Path, PathBuf};
use std::time::Instant;

use git2::Repository;
use serde::Serialize;

use super::cache::Cache;
use super::error::ReplayError;
use super::history::{Candidate, SourceChange};
use super::outcomes::Pytest;
use super::repair::{run_fix, FixRun};
use super::reproduce::{reproduce, Reproduction};
use super::score::{self, Checks, Reason, Status};
use super::trees::{snapshot, Trees};

/// What every job shares.
pub struct Context {
    pub git_dir: PathBuf,
    pub project: PathBuf,
    pub pytest: Pytest,
    /// The interpreter as found (a venv's `bin/python` unresolved), for `fix --python`.
    pub fix_python: PathBuf,
    pub cache: Cache,
    pub fix_args: Vec<String>,
    pub total: usize,
}

/// One candidate's result (an element of `commits` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct CommitReport {
    pub commit: String,
    pub short: String,
    pub subject: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    pub source_files: Vec<SourceChange>,
    pub test_files: Vec<String>,
    pub status: Status,
    pub reason: Option<Reason>,
    pub detail: Option<String>,
    /// The reproduction came from the cache (no test ran to find the selection).
    pub cached: bool,
    pub selection: Vec<String>,
    pub fix: Option<FixRun>,
    pub checks: Option<Checks>,
    /// This commit's whole replay.
    pub duration_ms: u64,
}

/// Replays candidate number `n` (1-based, for the progress lines).
pub fn replay_one(ctx: &Context, repo: &Repository, c: &Candidate, n: usize) -> CommitReport {
    let started = Instant::now();
    let tag = format!("[{n}/{}] {}", ctx.total, c.short());
    super::progress(&format!("{tag} {}", c.subject));
    let mut report = CommitReport {
        commit: c.id.to_string(),
        short: c.short(),
        subject: c.subject.clone(),
        time: c.time,
        source_files: c.sources.clone(),
        test_files: c.tests.clone(),
        status: Status::Error,
        reason: None,
        detail: None,
        cached: false,
        selection: Vec::new(),
        fix: None,
        checks: None,
        duration_ms: 0,
    };
    if let Err(e) = work(ctx, repo, c, &tag, &mut report) {
        report.status = Status::Error;
        report.detail = Some(e.to_string());
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    super::progress(&format!("{tag} {}", outcome_words(&report)));
    report
}

/// The steps; an error is the replay's own (a tree not written, a run that could not start).
fn work(
    ctx: &Context,
    repo: &Repository,
    c: &Candidate,
    tag: &str,
    report: &mut CommitReport,
) -> Result<(), ReplayError> {
    let commit = c.id.to_string();
    let cached = ctx.cache.get(&commit);
    report.cached = cached.is_some();
    // A cached commit that did not reproduce needs no tree at all.
    let mut trees = None;
    let reproduction = match cached {
        Some(r) => r,
        None => {
            super::progress(&format!("{tag} reproducing"));
            let files = runnable(&c.tests, &ctx.project);
            let t = trees.insert(Trees::new(repo, c, &ctx.project)?);
            let fix_dir = t.fix(repo, c)?;
            let r = reproduce(&ctx.pytest, &files, &t.bug(), &fix_dir)?;
            ctx.cache.put(&commit, &r);
            r
        }
    };
    let selection = match reproduction {
        Reproduction::NotReproducible { reason, detail } => {
            report.status = Status::NotReproducible;
            report.reason = Some(Reason::NotReproducible(reason));
            report.detail = Some(detail);
            return Ok(());
        }
        Reproduction::Reproduced(selection) => selection,
    };
    report.selection = selection.clone();
    let mut trees = match trees {
        Some(t) => t,
        None => Trees::new(repo, c, &ctx.project)?,
    };
    super::progress(&format!(
        "{tag} reproduced (selection: {} tests); repairing",
        selection.len()
    ));
    let bug = trees.bug();
    let before = snapshot(&bug);
    let backups = trees.scratch()?;
    let fix = run_fix(&bug, &ctx.fix_python, &selection, &ctx.fix_args, &backups)?;
    let mut leftovers = score::leftovers(&before, &snapshot(&bug), &fix.files_patched);
    if !leftovers.is_empty() {
        // What the project's own tests write into the tree (a junit.xml, a file a test
        // creates in its cwd) is not the fix's: a fresh bug tree run by the whole suite alone
        // tells which those are.
        let artifacts = suite_writes(repo, c, ctx)?;
        leftovers.retain(|f| !artifacts.contains(f));
    }
    if fix.files_patched.is_empty() {
        score_no_patch(report, fix, leftovers);
        return Ok(());
    }
    super::progress(&format!(
        "{tag} patch kept; checking it against the fix commit"
    ));
    let changed = changed_in_project(&c.sources, &ctx.project);
    let fix_dir = trees.fix(repo, c)?;
    let mut checks = score::check_patch(
        &ctx.pytest,
        &bug,
        &fix_dir,
        &selection,
        &fix.files_patched,
        &changed,
    )?;
    checks.leftovers = leftovers;
    report.status = score::status_of(&checks);
    report.detail = damage_words(&checks).or_else(|| {
        (!checks.suite_checked).then(|| {
            "the whole suite did not finish within --timeout: `broken` may be incomplete".into()
        })
    });
    report.checks = Some(checks);
    report.fix = Some(fix);
    Ok(())
}

/// The files a run of the whole suite alone creates or changes in a fresh bug tree of `c`.
fn suite_writes(
    repo: &Repository,
    c: &Candidate,
    ctx: &Context,
) -> Result<Vec<String>, ReplayError> {
    let fresh = Trees::new(repo, c, &ctx.project)?;
    let dir = fresh.bug();
    let before = snapshot(&dir);
    ctx.pytest.run(&dir, &[]).map_err(ReplayError::Runner)?;
    Ok(score::leftovers(&before, &snapshot(&dir), &[]))
}

/// A `fix` run that kept no patch: damaged if it left something in the tree, else missed (it
/// ran and found nothing plausible) or an error (it could not work).
fn score_no_patch(report: &mut CommitReport, fix: FixRun, leftovers: Vec<String>) {
    let missed = matches!(fix.final_status.as_str(), "fail" | "partial" | "escalated");
    (report.status, report.reason, report.detail) = if !leftovers.is_empty() {
        (
            Status::Damaged,
            None,
            Some(format!("fix left files changed: {}", leftovers.join(", "))),
        )
    } else if missed {
        (
            Status::Missed,
            Some(Reason::Miss(score::miss_reason(&fix))),
            None,
        )
    } else {
        let why = fix
            .error
            .clone()
            .unwrap_or_else(|| format!("fix ended `{}` with no patch", fix.final_status));
        (Status::Error, None, Some(why))
    };
    report.checks = Some(Checks {
        leftovers,
        ..Checks::default()
    });
    report.fix = Some(fix);
}

/// The commit's test modules inside the project, relative to it (conftest files are not run:
/// the test modules beside them load them).
fn runnable(tests: &[String], project: &Path) -> Vec<String> {
    tests
        .iter()
        .filter_map(|t| Path::new(t).strip_prefix(project).ok())
        .filter(|t| t.file_name().is_some_and(|n| n != "conftest.py"))
        .map(|t| t.to_string_lossy().into_owned())
        .collect()
}

/// The developer's source files relative to the project; one outside it keeps its path from
/// the top (the kept patch cannot match it).
fn changed_in_project(sources: &[SourceChange], project: &Path) -> Vec<String> {
    sources
        .iter()
        .map(|s| {
            Path::new(&s.path).strip_prefix(project).map_or_else(
                // One `..` per level of the project: the path then names the same file from
                // the project's dir in both trees.
                |_| {
                    let up = "../".repeat(project.components().count());
                    format!("{up}{}", s.path)
                },
                |p| p.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// What made a kept patch damaged.
fn damage_words(checks: &Checks) -> Option<String> {
    let mut parts = Vec::new();
    if !checks.broken.is_empty() {
        parts.push(format!("breaks {}", checks.broken.join(", ")));
    }
    if !checks.leftovers.is_empty() {
        parts.push(format!(
            "left files changed: {}",
            checks.leftovers.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The last progress line of a commit.
fn outcome_words(r: &CommitReport) -> String {
    let mut s = score::status_word(r.status).to_string();
    if let Some(reason) = r.reason {
        s.push_str(&format!(" ({})", score::reason_word(reason)));
    }
    if let Some(fix) = &r.fix {
        s.push_str(&format!(
            ": {:.1}s, {} pytest runs",
            fix.duration_ms as f64 / 1000.0,
            fix.pytest_runs
        ));
    }
    if let Some(d) = &r.detail {
        s.push_str(&format!(" - {d}"));
    }
    s
}
