//! Pruning old backup copies: the backup dir keeps a copy of every file a run changed and
//! kept, and nothing else removes them. At the start of a run, copies older than the maximum
//! age (`--backup-max-age`, default 14 days) are removed, except those of a run that has not
//! ended: a journal that still lists a copy (a live run, or one killed and not yet restored)
//! keeps it, whatever its age.
//!
//! The age is the timestamp the copy's name records (`{basename}.{unix_ts}[.{k}].bak`, written
//! when the copy was made), not its mtime, which is the original file's.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{disk, read_doc, JournalError, BACKUP_SUBDIR};

/// What pruning did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// The backup folder looked at.
    pub dir: PathBuf,
    /// The copies removed.
    pub removed: Vec<PathBuf>,
    /// Why nothing was removed although pruning was on (a journal that cannot be read may
    /// list any copy), or a copy that could not be removed.
    pub warnings: Vec<String>,
}

/// Removes the copies in `{backup_dir}/agent-self-debugger-loop/` (default backup dir: the
/// per-user temp dir) whose recorded timestamp is `max_age_days` or more before `now`, unless a
/// journal lists them. `max_age_days` 0: nothing is removed. Files whose names are not a
/// backup copy's are never touched; neither is a folder that is not ours.
pub fn prune_backups(backup_dir: Option<&Path>, max_age_days: u64, now: SystemTime) -> Pruned {
    let mut out = Pruned::default();
    if max_age_days == 0 {
        return out;
    }
    let base = match backup_dir {
        Some(d) => d.to_path_buf(),
        None => match disk::user_temp_dir() {
            Ok(d) => d,
            Err(_) => return out,
        },
    };
    out.dir = base.join(BACKUP_SUBDIR);
    if !out.dir.is_dir() || disk::check_private(&out.dir).is_err() {
        return out;
    }
    let in_use = match listed_backups() {
        Ok(set) => set,
        Err(why) => {
            out.warnings.push(format!(
                "old backup copies were not pruned: {why} (it may list any of them)"
            ));
            return out;
        }
    };
    let Some(cutoff) = disk::unix_secs(now).checked_sub(max_age_days.saturating_mul(86_400)) else {
        return out;
    };
    let Ok(entries) = fs::read_dir(&out.dir) else {
        return out;
    };
    let mut old: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(recorded_secs)
                .is_some_and(|ts| ts <= cutoff)
        })
        .filter(|p| !in_use.contains(&key(p)))
        .collect();
    old.sort();
    for path in old {
        match fs::remove_file(&path) {
            Ok(()) => out.removed.push(path),
            Err(e) => out.warnings.push(format!(
                "could not remove old backup {}: {e}",
                path.display()
            )),
        }
    }
    out
}

/// The timestamp a backup copy's name records: `{basename}.{ts}.bak` or
/// `{basename}.{ts}.{k}.bak` (see [`disk::backup_copy`]); `None` for any other name.
pub fn recorded_secs(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".bak")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = stem.rsplit('.');
    let last = parts.next()?;
    let second = parts.next()?;
    // The basename itself is never empty: at least one part before the timestamp.
    let ts = if digits(second) && digits(last) && parts.next().is_some_and(|b| !b.is_empty()) {
        // `{ts}.{k}`: a timestamp has 9 or more digits, a collision counter few.
        if second.len() >= 9 && last.len() < 9 {
            second
        } else {
            last
        }
    } else if digits(last) && !second.is_empty() {
        last
    } else {
        return None;
    };
    ts.parse().ok()
}

/// Every backup copy a journal lists (those of runs that have not ended: a finished run's
/// journal is removed). An unreadable journal is an error: it may list any copy.
fn listed_backups() -> Result<HashSet<PathBuf>, JournalError> {
    let mut set = HashSet::new();
    let Ok(dirs) = fs::read_dir(disk::journals_home()) else {
        return Ok(set);
    };
    for d in dirs.filter_map(Result::ok) {
        let dir = d.path();
        if !dir.is_dir() {
            continue;
        }
        match read_doc(&dir) {
            Ok(Some(doc)) => set.extend(
                doc.files
                    .iter()
                    .filter_map(|e| e.backup.as_deref())
                    .map(key),
            ),
            Ok(None) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(set)
}

/// A path as compared: resolved when it can be (the temp dir may be a symlink).
fn key(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_record_their_timestamp() {
        assert_eq!(recorded_secs("core.py.1764720000.bak"), Some(1_764_720_000));
        assert_eq!(
            recorded_secs("core.py.1764720000.3.bak"),
            Some(1_764_720_000)
        );
        assert_eq!(recorded_secs("v2.1764720000.bak"), Some(1_764_720_000));
        assert_eq!(
            recorded_secs("Makefile.1764720000.bak"),
            Some(1_764_720_000)
        );
        for other in [
            "core.py.bak",
            "core.py",
            ".1764720000.bak",
            "notes.txt",
            "a.x.bak",
        ] {
            assert_eq!(recorded_secs(other), None, "{other}");
        }
    }
}
