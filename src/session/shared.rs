//! What every floor of the session reads: a failure's key, why a file is never patched, the
//! reasons and limits that the loop and the sources share, the clock, the interpreter.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::SessionError;
use crate::config::settings::excluded_by;
/// The settings a session reads, resolved once from flags, the configuration file and defaults.
pub use crate::config::Settings as Options;
use crate::journal::{self, JournalError};
use crate::project::ProjectRoot;
use crate::rules::RuleSet;
use crate::runner::{self, Interpreter, InterpreterInfo};
use crate::traceback::{Failure, When};

/// Why a file is not to be patched (nor probed): `extend-exclude` says so, or the user cannot
/// write it. A dry run writes only a scratch copy, so there a read-only file still gets its
/// patch shown.
pub(super) fn excluded(opts: &Options, rel: &str) -> Option<String> {
    if let Some(p) = excluded_by(&opts.exclude, rel) {
        return Some(format!(
            "{rel} is excluded by extend-exclude ('{}'): never patched",
            p.text
        ));
    }
    if opts.dry_run {
        return None;
    }
    read_only(&opts.root.path().join(rel)).map(|mode| {
        format!(
            "{rel} is read-only (mode {mode:o}): not patched; make it writable (chmod u+w) \
             for selfdebug to fix it, or see the patch with --dry-run"
        )
    })
}

/// The file's permission bits when it is read-only to us: no owner write bit (a file the user
/// marked read-only, which root could still write and the atomic rename would replace), or
/// not writable by this user at all.
fn read_only(path: &Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    if mode & 0o200 == 0 {
        return Some(mode);
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: access reads the NUL-terminated path it is given.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
    (!writable).then_some(mode)
}

/// Up to this many other tests in a failure's group, their check rides on the candidate's
/// full run instead of a run of their own: for a few tests a run costs its start, and the full
/// run holds them anyway.
pub(super) const GROUP_IN_FULL_RUN: usize = 8;

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
pub(super) const MAX_HARD_HANGS: usize = 3;

/// The reason given for failures the time budget left untried.
pub(super) const TIME_BUDGET_USED_UP: &str = "time budget used up";
/// The reason of a failure whose work an interrupt stopped.
pub(super) const INTERRUPTED: &str = "interrupted";
/// In the reason of a failure whose candidates were all rejected before, for another failure.
pub(super) const ALREADY_REJECTED: &str = "already rejected for";

/// The reason of a failure whose category's attempt budget (`--max-attempts`) is used up.
pub(super) fn attempt_budget_used_up(category: crate::rules::Category) -> String {
    format!("attempt budget for {} failures used up", category.as_str())
}

/// The `review` line of each unsafe rule among `rule_ids`.
pub(super) fn review_notes(rules: &RuleSet, rule_ids: &[String]) -> Vec<String> {
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
pub(super) fn is_conftest(f: &Failure) -> bool {
    f.test.is_none()
        && f.headline
            .as_deref()
            .is_some_and(|h| h.starts_with("conftest "))
}

/// The project's interpreter, with pytest importable, and how the report names it (`None`
/// under `--cmd`). The one the command prepared before the session ([`prepared`]) when it did.
pub fn interpreter(
    root: &Path,
    opts: &Options,
) -> Result<(Interpreter, Option<InterpreterInfo>), SessionError> {
    if let Some(p) = &opts.prepared {
        return Ok((p.interpreter.clone(), Some(InterpreterInfo::of(p))));
    }
    match prepared(root, opts)? {
        Some(p) => Ok((p.interpreter.clone(), Some(InterpreterInfo::of(&p)))),
        // A command needs no pytest.
        None => runner::find_interpreter(root, opts.python.as_deref())
            .map(|i| (i, None))
            .map_err(SessionError::Runner),
    }
}

/// The project's interpreter checked (pytest importable) with its versions, for the command to
/// name it before the session starts; `None` under `--cmd`.
pub fn prepared(root: &Path, opts: &Options) -> Result<Option<runner::Prepared>, SessionError> {
    if opts.judge.is_some() {
        return Ok(None);
    }
    let python =
        runner::find_interpreter(root, opts.python.as_deref()).map_err(SessionError::Runner)?;
    runner::described(&python)
        .map(Some)
        .map_err(SessionError::Runner)
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub fn run_id() -> String {
    format!("{}-{}", now_ms(), std::process::id())
}

/// (test, phase) of each failure; the section title stands in for a missing test id.
pub(super) fn failure_keys(failures: &[Failure]) -> BTreeSet<(String, When)> {
    failures.iter().map(failure_key).collect()
}

pub(super) fn failure_key(f: &Failure) -> (String, When) {
    let test = f.test.clone().or_else(|| f.headline.clone());
    (test.unwrap_or_default(), f.when)
}
