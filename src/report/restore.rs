//! Output of `selfdebug restore`.

use std::fmt::Write;

use serde::Serialize;

use crate::journal::{
    Action, JournalError, KeptBackup, Origin, RestoreReport, RestoredFile, HASH_ALGORITHM,
};

/// Bumped only when a field is renamed or removed; fields may be added.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    exit_code: i32,
    /// False when there was nothing to restore (or on error).
    restored: bool,
    root: Option<String>,
    run_id: Option<&'a str>,
    hash_algorithm: &'static str,
    files: &'a [RestoredFile],
    warnings: &'a [String],
    /// The backup copies that remain (a file left as another program changed it).
    #[serde(skip_serializing_if = "<[KeptBackup]>::is_empty")]
    backups: &'a [KeptBackup],
    error: Option<String>,
    /// Another live run holds the lock: its pid (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    lock_pid: Option<u32>,
}

/// One JSON object for a restore that succeeded (or found nothing to restore).
pub fn json(r: &RestoreReport, exit_code: i32) -> String {
    render(&JsonDoc {
        schema_version: SCHEMA_VERSION,
        exit_code,
        restored: !r.files.is_empty(),
        root: Some(r.root.display().to_string()),
        run_id: r.run_id.as_deref(),
        hash_algorithm: HASH_ALGORITHM,
        files: &r.files,
        warnings: &r.warnings,
        backups: &r.backups,
        error: None,
        lock_pid: None,
    })
}

/// The same object for a restore that failed: `error` is the one-line message.
pub fn json_error(e: &JournalError, exit_code: i32) -> String {
    error_doc(&e.to_string(), exit_code, e.lock_pid())
}

/// The same object for a restore that could not start (`--root` not a directory).
pub fn json_bad_input(message: &str, exit_code: i32) -> String {
    error_doc(message, exit_code, None)
}

fn error_doc(message: &str, exit_code: i32, lock_pid: Option<u32>) -> String {
    render(&JsonDoc {
        schema_version: SCHEMA_VERSION,
        exit_code,
        restored: false,
        root: None,
        run_id: None,
        hash_algorithm: HASH_ALGORITHM,
        files: &[],
        warnings: &[],
        backups: &[],
        error: Some(message.to_string()),
        lock_pid,
    })
}

fn render(doc: &JsonDoc<'_>) -> String {
    // Serializing plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(doc).unwrap_or_default();
    s.push('\n');
    s
}

pub fn human(r: &RestoreReport) -> String {
    let mut out = String::new();
    if r.files.is_empty() {
        let _ = writeln!(
            out,
            "nothing to restore in {}: no run was interrupted",
            r.root.display()
        );
    } else {
        let n = r.files.len();
        let _ = writeln!(
            out,
            "restored {n} file{} of run {} in {}:",
            if n == 1 { "" } else { "s" },
            r.run_id.as_deref().unwrap_or("?"),
            r.root.display()
        );
        let w = r
            .files
            .iter()
            .map(|f| f.path.display().to_string().len())
            .max()
            .unwrap_or(0);
        for f in &r.files {
            let action = match f.action {
                Action::Rewritten => "rewritten",
                Action::Recreated => "recreated",
                Action::Unchanged => "unchanged",
                Action::Left => "left",
            };
            let source = match f.source {
                Origin::JournalCopy => "journal copy",
                Origin::BackupCopy => "backup copy",
                Origin::GitBlob => "git blob",
                Origin::Memory => "memory",
            };
            let _ = writeln!(
                out,
                "  {:<w$}  {action:<9}  from the {source:<12}  {HASH_ALGORITHM} {} verified",
                f.path.display(),
                f.hash
            );
        }
    }
    for warning in &r.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}
