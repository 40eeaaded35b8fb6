//! One run per root: a lock file created with O_EXCL holding the owner's pid and start time.
//!
//! A lock whose process is gone is stale. Deciding "stale", removing it and taking a new one
//! happen under a short `flock` on a guard file beside it, so two starts racing for a stale lock
//! cannot both win.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::disk;

pub const LOCK_FILE: &str = "lock";
const GUARD_FILE: &str = "guard";

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct LockInfo {
    pub pid: u32,
    /// Unix seconds when the run started.
    pub since: u64,
    pub run_id: String,
    /// The process's start time in clock ticks since boot (`/proc/<pid>/stat`), so a pid reused
    /// by an unrelated process after a crash is not taken for the run.
    #[serde(default)]
    pub proc_start: Option<u64>,
    /// Held by a dry run while it copies the project (seconds at most): others wait for it.
    #[serde(default)]
    pub dry_run: bool,
}

/// Held while deciding about and taking the lock; released on drop (closing the fd).
pub struct Guard {
    _held: File,
}

impl Guard {
    pub fn acquire(dir: &Path) -> io::Result<Guard> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join(GUARD_FILE))?;
        // Non-blocking with retries: a stopped process holding the guard must not hang us.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // SAFETY: flock on a valid, owned fd.
            let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(Guard { _held: f });
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) || Instant::now() > deadline {
                return Err(err);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The lock in `dir`, if there is one. An unreadable lock yields pid 0 (never live): it is only
/// ever written under the guard, so a torn one was left by a process that died writing it.
pub fn read(dir: &Path) -> Option<LockInfo> {
    let text = match fs::read(dir.join(LOCK_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(_) => return Some(LockInfo::default()),
    };
    Some(serde_json::from_slice(&text).unwrap_or_default())
}

/// Whether the process that wrote `info` is still running.
pub fn is_live(info: &LockInfo) -> bool {
    let Ok(pid) = libc::pid_t::try_from(info.pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        return false;
    }
    match proc_stat(info.pid) {
        // A killed child not yet reaped by its parent is a zombie: dead for our purpose.
        Some((state, _)) if state == 'Z' || state == 'X' => false,
        Some((_, start)) => info.proc_start.is_none_or(|s| s == start),
        None => true,
    }
}

/// State letter and start time (field 22) of `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parens: fields resume after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// Without `/proc` (macOS) neither the zombie check nor the pid-reuse check can be made: a
/// live pid counts as the run's, so a lock is never taken from a run that may still be alive.
#[cfg(not(target_os = "linux"))]
fn proc_stat(_pid: u32) -> Option<(char, u64)> {
    None
}

/// Takes the lock for `run_id`. The caller holds the guard and has found no live lock; a stale
/// one is replaced.
pub fn take(dir: &Path, run_id: &str, since: SystemTime, dry_run: bool) -> io::Result<()> {
    let path = dir.join(LOCK_FILE);
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let info = LockInfo {
        pid: std::process::id(),
        since: disk::unix_secs(since),
        run_id: run_id.to_string(),
        proc_start: proc_stat(std::process::id()).map(|(_, s)| s),
        dry_run,
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    // Serializing a plain struct cannot fail.
    f.write_all(&serde_json::to_vec(&info).unwrap_or_default())?;
    f.sync_all()?;
    disk::sync_dir(dir);
    Ok(())
}

/// Removes the lock if it is still ours (a lock taken over after we were presumed dead is not).
pub fn release(dir: &Path, run_id: &str) {
    if read(dir).is_some_and(|l| l.run_id == run_id) {
        let _ = fs::remove_file(dir.join(LOCK_FILE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness() {
        let me = LockInfo {
            pid: std::process::id(),
            proc_start: proc_stat(std::process::id()).map(|(_, s)| s),
            ..LockInfo::default()
        };
        assert!(is_live(&me));
        // The same pid with another start time is a reused pid: not our run.
        let reused = LockInfo {
            proc_start: me.proc_start.map(|s| s + 1),
            ..me.clone()
        };
        assert_eq!(is_live(&reused), me.proc_start.is_none());
        assert!(!is_live(&LockInfo::default()));

        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = LockInfo {
            pid,
            ..LockInfo::default()
        };
        assert!(!is_live(&gone));
    }

    #[test]
    fn take_read_release() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).is_none());
        take(dir.path(), "run-1", SystemTime::now(), false).unwrap();
        let l = read(dir.path()).unwrap();
        assert_eq!((l.pid, l.run_id.as_str()), (std::process::id(), "run-1"));
        // Not ours: stays.
        release(dir.path(), "run-2");
        assert!(read(dir.path()).is_some());
        release(dir.path(), "run-1");
        assert!(read(dir.path()).is_none());
        // A torn lock reads as dead.
        fs::write(dir.path().join(LOCK_FILE), "{\"pi").unwrap();
        assert!(!is_live(&read(dir.path()).unwrap()));
    }
}
