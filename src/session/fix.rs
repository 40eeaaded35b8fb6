//! `fix` and `fix --dry-run`: where the attempt loop works (the project behind a journal, or a
//! scratch copy) and what is kept at the end (the proven patches, or every byte restored).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use super::attempt_loop::run_loop;
use super::error::SessionError;
use super::model::{combine, fixes, Backup, Report};
use super::propose::propose_only;
use super::shared::interpreter;
use super::shared::Options;
use super::workspace::{JournalWorkspace, ScratchWorkspace, Workspace};
use crate::journal::{self, Journal};
use crate::rules::RuleSet;
use crate::runner::{self, Interpreter};
use crate::scratch::Scratch;
use crate::status::FailureStatus;

/// `fix`: works in the project itself. Every file is journaled before its first byte is
/// written; proven fixes are kept (all of them, or none with `--all-or-nothing`), and when
/// nothing is kept every touched file is restored byte for byte and mtime.
pub fn fix(opts: &Options, rules: &RuleSet) -> Result<Report, SessionError> {
    let started = Instant::now();
    let root = opts.root.path().to_path_buf();
    let t = crate::trace_times::span("interpreter prepared");
    let (python, named) = interpreter(&root, opts)?;
    drop(t);
    prewarm(opts, &python);
    let t = crate::trace_times::span("stale temp dirs scanned");
    runner::remove_stale_temp_dirs();
    drop(t);
    let t = crate::trace_times::span("journal begun");
    let journal =
        Journal::begin(&root, opts.backup_dir.as_deref()).map_err(SessionError::Journal)?;
    drop(t);
    // With our own journal in place, so every run that has not ended is listed in one.
    let pruned = journal::prune_backups(
        opts.backup_dir.as_deref(),
        opts.backup_max_age_days,
        SystemTime::now(),
    );
    let mut ws = JournalWorkspace { journal };
    let t = crate::trace_times::span("attempt loop");
    let result = run_loop(opts, rules, python, &mut ws, started);
    drop(t);
    let _t = crate::trace_times::span("journal committed or rolled back, report");
    let journal = ws.journal;
    // Someone else wrote to a file this run had in hand (an editor's save, another tool): no
    // patch is kept over bytes it did not prove, and theirs are not overwritten by a restore.
    if !journal.changed_elsewhere().is_empty() {
        return Err(SessionError::Journal(journal.rollback_own()));
    }
    let mut report = match result {
        Ok(mut r) if !crate::process::interrupted() => {
            r.interpreter = named;
            r
        }
        Ok(_) => {
            let restored = journal.rollback();
            return Err(match restored {
                Ok(_) => SessionError::InterruptedRestored,
                Err(e) => SessionError::InterruptedRestoreFailed(e),
            });
        }
        Err(e) => {
            let interrupted = crate::process::interrupted();
            return Err(match journal.rollback() {
                Ok(_) if interrupted => SessionError::InterruptedRestored,
                Ok(_) => e,
                Err(restore) => SessionError::RestoreFailedToo {
                    error: Box::new(e),
                    restore,
                },
            });
        }
    };
    let all_fixed = report.failures.iter().all(|f| f.status.is_fixed());
    let keep = !report.patches.is_empty() && (!opts.all_or_nothing || all_fixed);
    let touched = !journal.files().is_empty();
    if keep {
        let originals: BTreeMap<PathBuf, Vec<u8>> = journal
            .files()
            .into_iter()
            .filter_map(|p| journal.original(&p).map(|b| (p, b.to_vec())))
            .collect();
        let original = |file: &str| originals.get(&root.join(file)).cloned();
        report.fixes = fixes(&report.patches, original);
        report.patches = combine(&root, &report.patches, original);
        report.attach_proofs();
        let committed = journal.commit().map_err(SessionError::Journal)?;
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
        let restored = journal.rollback().map_err(SessionError::Journal)?;
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
            if f.status.is_patched() {
                f.status = FailureStatus::RolledBack;
            }
        }
    }
    report
        .notes
        .extend(pruned_notes(&pruned, opts.backup_max_age_days));
    report.finish(started);
    Ok(report)
}

/// What the report says about pruning: nothing when nothing was removed or in doubt.
fn pruned_notes(pruned: &journal::Pruned, days: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if !pruned.removed.is_empty() {
        let n = pruned.removed.len();
        notes.push(format!(
            "removed {n} backup cop{} older than {days} days from {} (--backup-max-age)",
            if n == 1 { "y" } else { "ies" },
            pruned.dir.display()
        ));
    }
    notes.extend(pruned.warnings.iter().cloned());
    notes
}

/// Starts the warm worker as soon as the interpreter is known, when runs will use it: its
/// imports then overlap the journal's start and the loop's setup instead of all coming after
/// them, in front of the baseline (a Python importing pytest: `phases_ms.worker_wait_ms` is
/// what is left of it on the critical path). The baseline itself runs in the worker: a cold
/// baseline beside the start measured slower on 2 busy cores (docs/performance.md, stop 19).
pub(super) fn prewarm(opts: &Options, python: &Interpreter) {
    if opts.worker == crate::worker::Mode::Auto && opts.judge.is_none() && opts.sandbox.is_none() {
        crate::worker::prewarm(&python.path, opts.root.path());
    }
}

/// `fix --dry-run`: everything in a scratch copy.
pub fn dry_run(opts: &Options, rules: &RuleSet) -> Result<Report, SessionError> {
    let started = Instant::now();
    let root = opts.root.path().to_path_buf();
    if !opts.validate {
        // It reads the project's files: under the lock, like the copy of a dry run.
        return journal::while_locked_for_copy(&root, || propose_only(opts, &root, rules, started))
            .map_err(SessionError::DryRunRefused)?;
    }
    let (python, named) = interpreter(&root, opts)?;
    prewarm(opts, &python);
    runner::remove_stale_temp_dirs();
    // Under the project's lock, so no real run has a probe or a candidate in a file meanwhile.
    let scratch = journal::while_locked_for_copy(&root, || Scratch::copy_of(&root))
        .map_err(SessionError::DryRunRefused)?
        .map_err(SessionError::ScratchCopy)?;
    let mut ws = ScratchWorkspace {
        scratch,
        originals: BTreeMap::new(),
    };
    let mut report = run_loop(opts, rules, python, &mut ws, started).map_err(|e| {
        if crate::process::interrupted() {
            SessionError::InterruptedDryRun
        } else {
            e
        }
    })?;
    if crate::process::interrupted() {
        // The loop stopped early: its report would leave failures out.
        return Err(SessionError::InterruptedDryRun);
    }
    report.interpreter = named;
    let all_fixed = report.failures.iter().all(|f| f.status.is_fixed());
    if opts.all_or_nothing && !all_fixed && !report.patches.is_empty() {
        report.patches.clear();
        for f in &mut report.failures {
            if f.status.is_patched() {
                f.status = FailureStatus::RolledBack;
            }
        }
        report.finish(started);
        return Ok(report);
    }
    // The patched content lives in the scratch copy, and so do the originals (as copied).
    let scratch_root = ws.root().to_path_buf();
    let original = |file: &str| {
        let path = scratch_root.join(file);
        let key = std::fs::canonicalize(&path).unwrap_or(path);
        ws.originals.get(&key).cloned()
    };
    report.fixes = fixes(&report.patches, original);
    report.patches = combine(&scratch_root, &report.patches, original);
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
        for r in &mut a.proven_by {
            r.command.iter_mut().for_each(&fix_path);
        }
    }
    report.attach_proofs();
    report.finish(started);
    Ok(report)
}
