//! Temp dirs named after our pid, so that the ones a killed run left can be found and removed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh directory under the system temp dir, removed (with its contents) on drop.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(prefix: &str) -> std::io::Result<TempDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{prefix}-{}-{n}-{nanos:08x}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the [`TempDir`]s (`selfdebug-{prefix}-{pid}-{n}-{nanos}`) in the temp dir that a
/// killed run of ours left: owned by us, a real directory, and whose pid is gone or now belongs
/// to a process that started after the dir was last written (a reused pid). Another live
/// run's dirs are never touched. `removed_dir` is told each one (the runner forgets its
/// bytecode). Returns how many were removed.
pub fn remove_stale_temp_dirs_with(mut removed_dir: impl FnMut(&Path)) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(temp_dir_pid) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid == std::process::id() {
            continue;
        }
        let written = meta.modified().unwrap_or(UNIX_EPOCH);
        if process_since(pid).is_none_or(|started| started > written)
            && std::fs::remove_dir_all(e.path()).is_ok()
        {
            removed_dir(&e.path());
            removed += 1;
        }
    }
    removed
}

/// The pid in a [`TempDir`] name `selfdebug-{prefix}-{pid}-{n}-{hex nanos}`.
fn temp_dir_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("selfdebug-")?;
    let mut parts = rest.rsplitn(4, '-');
    let nanos = parts.next()?;
    let n = parts.next()?;
    let pid = parts.next()?;
    let prefix = parts.next()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = !prefix.is_empty()
        && digits(n)
        && !nanos.is_empty()
        && nanos.bytes().all(|b| b.is_ascii_hexdigit())
        && digits(pid);
    ok.then(|| pid.parse().ok()).flatten()
}

/// When the process `pid` started (`None`: no such process, or a zombie). A live process whose
/// start time cannot be read counts as started at the epoch, so its dirs are kept.
fn process_since(pid: u32) -> Option<SystemTime> {
    let id = libc::pid_t::try_from(pid).ok().filter(|&p| p > 0)?;
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(id, 0) };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        return None;
    }
    let stat = proc_stat(pid);
    // Fields resume after the command name's last ')': state is field 3, starttime field 22.
    let fields: Vec<&str> = stat
        .rfind(')')
        .map_or("", |i| &stat[i + 1..])
        .split_whitespace()
        .collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    Some(start_time(fields.get(19).copied()).unwrap_or(UNIX_EPOCH))
}

/// `/proc/<pid>/stat`, empty when it cannot be read.
#[cfg(target_os = "linux")]
fn proc_stat(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default()
}

/// Without `/proc` (macOS) the start time is unknown: a live process counts as started at the
/// epoch, so its dirs are kept.
#[cfg(not(target_os = "linux"))]
fn proc_stat(_pid: u32) -> String {
    String::new()
}

/// Boot time plus the start time in clock ticks. `btime` is truncated to whole seconds, so
/// this is a lower bound: a process is never judged younger than it is (its dirs stay).
#[cfg(target_os = "linux")]
fn start_time(ticks: Option<&str>) -> Option<SystemTime> {
    let ticks: u64 = ticks?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
        .ok()
        .filter(|&h| h > 0)?;
    Some(
        UNIX_EPOCH
            + std::time::Duration::from_secs(btime)
            + std::time::Duration::from_millis(ticks * 1000 / hz),
    )
}

#[cfg(not(target_os = "linux"))]
fn start_time(_ticks: Option<&str>) -> Option<SystemTime> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Duration;

    #[test]
    fn temp_dirs_are_fresh_and_removed() {
        let a = TempDir::new("selfdebug-test").unwrap();
        let b = TempDir::new("selfdebug-test").unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir());
        let p = a.path().to_path_buf();
        std::fs::write(p.join("x"), b"x").unwrap();
        drop(a);
        assert!(!p.exists());
    }

    #[test]
    fn temp_dir_names_carry_the_pid() {
        assert_eq!(temp_dir_pid("selfdebug-probe-4242-0-1a2b3c4d"), Some(4242));
        assert_eq!(temp_dir_pid("selfdebug-scratch-7-12-0"), Some(7));
        let made = TempDir::new("selfdebug-test").unwrap();
        let name = made.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_dir_pid(name), Some(std::process::id()));
        // The per-user dir and the names of other tools are not ours to clean.
        for other in [
            "selfdebug-0",
            "selfdebug-1000",
            "selfdebug-probe-backup",
            "selfdebug-x-12-3-zz",
            "selfdebug--12-3-4",
            "tmp-probe-1-2-3",
        ] {
            assert_eq!(temp_dir_pid(other), None, "{other}");
        }
    }

    #[test]
    fn stale_temp_dirs_of_dead_pids_go_live_ones_stay() {
        let base = std::env::temp_dir();
        let mut gone = Command::new("true").spawn().unwrap();
        let dead = base.join(format!("selfdebug-test-{}-0-0", gone.id()));
        gone.wait().unwrap();
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        // A live process that started before its dir was written may be its creator: kept.
        let mut alive = Command::new("sleep").arg("30").spawn().unwrap();
        let live = base.join(format!("selfdebug-test-{}-0-0", alive.id()));
        std::fs::create_dir_all(&live).unwrap();
        // A live process that started after the dir was last written reuses a dead run's pid.
        let mut reuser = Command::new("sleep").arg("30").spawn().unwrap();
        let reused = base.join(format!("selfdebug-test-{}-0-0", reuser.id()));
        std::fs::create_dir_all(&reused).unwrap();
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(&reused)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        remove_stale_temp_dirs_with(|_| {});
        let left = (dead.exists(), live.is_dir(), reused.exists());
        for c in [&mut alive, &mut reuser] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
        let _ = std::fs::remove_dir(&live);
        assert_eq!(left, (false, true, false));
    }
}
