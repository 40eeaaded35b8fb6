//! Kept-alive servers (`worker-keepalive`, on for `selfdebug mcp`'s calls): a server that
//! outlives the selfdebug process that started it, one per (project root, interpreter), so that
//! the next call on the same project pays pytest's imports once.
//!
//! Each lives in `DIR/KEY/` (DIR: `SELFDEBUG_WORKER_DIR`, else `$XDG_RUNTIME_DIR/selfdebug-workers`,
//! else `/tmp/selfdebug-workers-UID`; KEY: a hash of the root, the interpreter's path and the
//! server's source). Both directories must be ours with mode 0700, and the socket ours, before
//! anything connects: whoever can reach the socket runs code as us. Otherwise the keep-alive is
//! refused for the process (a note; runs use a server of this process only).
//!
//! The server writes `server.json` once ready (its pid, socket, and the stamps, modification
//! time and size, of the interpreter, every `conftest.py` of the project, the pytest
//! configuration files and its path directories). A process that finds it compares the stamps
//! with what is on disk now (and the set of `conftest.py` files) before the first run it sends:
//! any difference, and the old server is killed and replaced. A server exits on its own after
//! the keep-alive with no run, removing its socket and record.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The pytest configuration files whose change replaces a kept-alive server.
const CONFIG_FILES: [&str; 5] = [
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];

/// How many directories the search for `conftest.py` files walks at most (a huge tree is
/// checked partly rather than slowly).
const MAX_DIRS: usize = 20_000;

/// The directory that holds every kept-alive server of this user (not created here).
pub fn base_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SELFDEBUG_WORKER_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| Path::new(d).is_absolute()) {
        return Path::new(&d).join("selfdebug-workers");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("selfdebug-workers-{uid}"))
}

/// The directory of the server for (`root`, `python`).
pub fn server_dir(root: &Path, python: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    python.hash(&mut h);
    // Another selfdebug (its worker, its plugins) gets a server of its own.
    super::SOURCE.hash(&mut h);
    crate::plugin::dir().hash(&mut h);
    base_dir().join(format!("{:016x}", h.finish()))
}

/// Why `dir` is not private (ours, a directory, mode 0700 or stricter), or `None` when it is.
pub fn not_private(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    match std::fs::symlink_metadata(dir) {
        Err(e) => Some(format!("{}: {e}", dir.display())),
        Ok(m) if !m.is_dir() => Some(format!("{} is not a directory", dir.display())),
        Ok(m) if m.uid() != uid => Some(format!(
            "{} belongs to uid {}, not {uid}",
            dir.display(),
            m.uid()
        )),
        Ok(m) if m.mode() & 0o077 != 0 => Some(format!(
            "{} has mode {:04o}, not 0700",
            dir.display(),
            m.mode() & 0o7777
        )),
        Ok(_) => None,
    }
}

/// Creates (mode 0700) and checks the base directory and the server's: the server's directory,
/// or why the keep-alive is refused.
pub fn private_server_dir(root: &Path, python: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let base = base_dir();
    let dir = server_dir(root, python);
    for d in [&base, &dir] {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(d);
        if let Some(why) = not_private(d) {
            return Err(why);
        }
    }
    Ok(dir)
}

/// A kept-alive server's record (`server.json`, written by the server).
#[derive(serde::Deserialize, Debug)]
pub struct Record {
    pub pid: i32,
    pub socket: PathBuf,
    /// (path, `MTIME_NS:SIZE` or `-`).
    pub stamp: Vec<(PathBuf, String)>,
}

pub fn record_path(dir: &Path) -> PathBuf {
    dir.join("server.json")
}

pub fn read_record(dir: &Path) -> Option<Record> {
    serde_json::from_slice(&std::fs::read(record_path(dir)).ok()?).ok()
}

/// `MTIME_NS:SIZE` of `p`, `-` when missing: what the server records.
pub fn stamp_of(p: &Path) -> String {
    match std::fs::metadata(p) {
        Ok(m) => {
            let ns = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{ns}:{}", m.len())
        }
        Err(_) => "-".to_string(),
    }
}

/// The files whose stamps the server records besides its path directories: the interpreter
/// (its real file), the pytest configuration files of the root and every `conftest.py` of the
/// project (environments and hidden directories left out).
pub fn watched_files(root: &Path, python: &Path) -> Vec<PathBuf> {
    let mut out = vec![python
        .canonicalize()
        .unwrap_or_else(|_| python.to_path_buf())];
    out.extend(CONFIG_FILES.iter().map(|f| root.join(f)));
    let mut conftests = Vec::new();
    let mut queue = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = queue.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                let skip = name.starts_with('.')
                    || matches!(
                        name.as_ref(),
                        "__pycache__" | "node_modules" | "site-packages" | "venv" | "build"
                    )
                    || e.path().join("pyvenv.cfg").exists();
                if !skip {
                    queue.push(e.path());
                }
            } else if name == "conftest.py" {
                conftests.push(e.path());
            }
        }
    }
    conftests.sort();
    out.extend(conftests);
    out
}

/// What changed since `record` was written (a file's words), or `None` when nothing did.
pub fn changed(record: &Record, root: &Path, python: &Path) -> Option<String> {
    let files = watched_files(root, python);
    let recorded: Vec<&PathBuf> = record
        .stamp
        .iter()
        .map(|(p, _)| p)
        .take(files.len())
        .collect();
    if recorded != files.iter().collect::<Vec<_>>() {
        return Some("a conftest.py was added or removed".to_string());
    }
    record
        .stamp
        .iter()
        .find(|(p, s)| stamp_of(p) != *s)
        .map(|(p, _)| p.display().to_string())
}

/// Whether `pid` is alive and is the server of `record` (its command line names the socket), so
/// a recycled pid is never signalled.
pub fn is_server(record: &Record) -> bool {
    if record.pid <= 0 {
        return false;
    }
    let Ok(cmdline) = std::fs::read(format!("/proc/{}/cmdline", record.pid)) else {
        return false;
    };
    let socket = record.socket.as_os_str().as_encoded_bytes();
    let alive = !std::fs::read_to_string(format!("/proc/{}/stat", record.pid)).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
    });
    alive && cmdline.split(|&b| b == 0).any(|a| a == socket)
}

/// Kills the server of `record` (its session: it and its runs) and removes its record.
pub fn retire(dir: &Path, record: &Record) {
    if is_server(record) {
        // SAFETY: plain syscall on the server's own group, checked to be the server above.
        unsafe {
            libc::killpg(record.pid, libc::SIGKILL);
        }
    }
    let _ = std::fs::remove_file(&record.socket);
    let _ = std::fs::remove_file(record_path(dir));
}

/// Whether the socket is ours and a socket (checked before connecting).
pub fn socket_ok(socket: &Path) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    match std::fs::symlink_metadata(socket) {
        Ok(m) if m.file_type().is_socket() && m.uid() == uid => Ok(()),
        Ok(_) => Err(format!("{} is not a socket of ours", socket.display())),
        Err(e) => Err(format!("{}: {e}", socket.display())),
    }
}

/// An exclusive lock on the server's directory while one process starts its server (released
/// when dropped, or when the process dies).
pub struct StartLock(#[allow(dead_code)] std::fs::File);

impl StartLock {
    pub fn take(dir: &Path) -> std::io::Result<StartLock> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .mode(0o600)
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))?;
        // SAFETY: flock on a descriptor we own; blocks until the lock is ours.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = (&f).flush();
        Ok(StartLock(f))
    }
}
