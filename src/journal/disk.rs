//! File-system primitives of the journal: where it lives, hashing, atomic writes, backup copies.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::{ObjectType, Oid};

/// The original design's backup folder under `--backup-dir`.
pub const BACKUP_SUBDIR: &str = "agent-self-debugger-loop";

/// The content hash: git's blob id (SHA-1 of `blob <len>\0<bytes>`). A real cryptographic hash,
/// computed by the libgit2 we link anyway, and equal to the id of the blob kept in the
/// repository, so a blob read back from git is verified by the same comparison.
pub fn hash(bytes: &[u8]) -> String {
    match Oid::hash_object(ObjectType::Blob, bytes) {
        Ok(oid) => oid.to_string(),
        // libgit2 hashes in memory; only an allocation failure could get here. An empty
        // string never equals a recorded hash, so verification fails safe.
        Err(_) => String::new(),
    }
}

/// `$XDG_CACHE_HOME/selfdebug/journals`, else `$HOME/.cache/selfdebug/journals`, else
/// `{temp dir}/selfdebug-{uid}/journals` (per user, like the backups): outside every project,
/// so a run leaves nothing in the tree.
pub fn journals_home() -> PathBuf {
    let abs = |v: Option<std::ffi::OsString>| {
        v.map(PathBuf::from)
            .filter(|p| p.is_absolute() && !p.as_os_str().is_empty())
    };
    match abs(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| abs(std::env::var_os("HOME")).map(|h| h.join(".cache")))
    {
        Some(base) => base.join("selfdebug").join("journals"),
        // Without HOME only. A per-user dir that is not ours is still named here; the
        // journal dir made in it is 0700, but its parent is not checked.
        None => user_temp_dir()
            .unwrap_or_else(|_| std::env::temp_dir().join(format!("selfdebug-{}", uid())))
            .join("journals"),
    }
}

/// The journal dir of a (canonical) root: named by a hash of its path, so two projects never
/// share one and the same project always finds its own.
pub fn journal_dir(root: &Path) -> PathBuf {
    let id = hash(root.as_os_str().as_encoded_bytes());
    journals_home().join(&id[..id.len().min(20)])
}

/// Creates `dir` (and missing parents) private to the user: journals hold source code.
pub fn make_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
}

/// Flushes a directory entry change (create, rename) to disk; best effort, as some file
/// systems refuse to sync a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to a new file (failing if it exists), synced, with `mode`.
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Replaces `path` with `bytes` atomically: a temp file `tmp_name` in the same dir, synced,
/// given `mode`, renamed over `path`. Readers see the old or the new file, never a mix; a
/// symlink at `path` is replaced, never followed.
pub fn replace_atomic(path: &Path, bytes: &[u8], mode: u32, tmp_name: &str) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(tmp_name);
    // A leftover of this very run (same name) is ours to remove.
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        // On the open handle, so a read-only mode still lets us finish writing.
        f.set_permissions(fs::Permissions::from_mode(mode & 0o7777))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    } else {
        sync_dir(dir);
    }
    result
}

/// The temp file name `replace_atomic` uses for `path` in run `run_id`: deterministic, so a
/// restore after a kill can remove a leftover one and leave nothing in the project.
pub fn tmp_name(path: &Path, run_id: &str) -> String {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{base}.selfdebug-{run_id}.tmp")
}

/// Writes a file atomically and durably (temp + fsync + rename + fsync of the dir).
pub fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| format!(".{}.tmp", n.to_string_lossy()))
        .unwrap_or_else(|| ".tmp".into());
    replace_atomic(path, bytes, 0o600, &name)
}

/// Why a dir cannot hold private copies. Displays as one line naming the dir.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    #[error("cannot create {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    /// Its metadata could not be read.
    #[error("{}: {source}", path.display())]
    Stat { path: PathBuf, source: io::Error },
    #[error("{} is a symlink, not a directory", path.display())]
    Symlink { path: PathBuf },
    #[error("{} is not a directory", path.display())]
    NotADir { path: PathBuf },
    #[error("{} belongs to uid {owner}, not to you (uid {me})", path.display())]
    NotOurs { path: PathBuf, owner: u32, me: u32 },
    #[error("cannot make {} private: {source}", path.display())]
    Chmod { path: PathBuf, source: io::Error },
}

/// The per-user temp dir, `{temp dir}/selfdebug-{uid}`: the default backup dir, so users of one machine
/// never share (or lock each other out of) the original design's backup folder. Created 0700;
/// an existing one must be a real directory (not a symlink) owned by us, else another user
/// could read or plant our backups: then the error says why, in words fit for one line.
pub fn user_temp_dir() -> Result<PathBuf, PrivateDirError> {
    let dir = std::env::temp_dir().join(format!("selfdebug-{}", uid()));
    // Not recursive: the temp dir itself is the system's; only our own folder is made here.
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(PrivateDirError::Create { path: dir, source }),
    }
    check_private(&dir)?;
    Ok(dir)
}

/// `dir` is a directory (not a symlink) owned by the current user; group and others lose any
/// access it gave them (it holds copies of source code).
pub fn check_private(dir: &Path) -> Result<(), PrivateDirError> {
    let path = || dir.to_path_buf();
    let meta = fs::symlink_metadata(dir).map_err(|source| PrivateDirError::Stat {
        path: path(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(PrivateDirError::Symlink { path: path() });
    }
    if !meta.is_dir() {
        return Err(PrivateDirError::NotADir { path: path() });
    }
    if meta.uid() != uid() {
        return Err(PrivateDirError::NotOurs {
            path: path(),
            owner: meta.uid(),
            me: uid(),
        });
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|source| {
            PrivateDirError::Chmod {
                path: path(),
                source,
            }
        })?;
    }
    Ok(())
}

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Creates `{backup_dir}/agent-self-debugger-loop` if needed and checks that it is ours.
pub fn backup_folder(backup_dir: &Path) -> Result<PathBuf, PrivateDirError> {
    let dir = backup_dir.join(BACKUP_SUBDIR);
    if let Err(source) = fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
    {
        return Err(PrivateDirError::Create { path: dir, source });
    }
    check_private(&dir)?;
    Ok(dir)
}

/// The original design's backup copy: `{backup_dir}/agent-self-debugger-loop/{basename}.{ts}.bak`,
/// with `.{k}` before `.bak` when that name is taken. Keeps the original's mtime.
pub fn backup_copy(
    backup_dir: &Path,
    basename: &str,
    bytes: &[u8],
    mtime: SystemTime,
) -> io::Result<PathBuf> {
    let dir = backup_folder(backup_dir).map_err(io::Error::other)?;
    let ts = unix_secs(SystemTime::now());
    for k in 0..10_000u32 {
        let name = if k == 0 {
            format!("{basename}.{ts}.bak")
        } else {
            format!("{basename}.{ts}.{k}.bak")
        };
        let path = dir.join(name);
        match write_new(&path, bytes, 0o600) {
            Ok(()) => {
                if let Ok(f) = OpenOptions::new().write(true).open(&path) {
                    let _ = f.set_modified(mtime);
                }
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free backup name",
    ))
}

pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// mtime in nanoseconds since the epoch (negative before 1970).
pub fn mtime_ns(meta: &fs::Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

pub fn time_from_ns(ns: i64) -> SystemTime {
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    }
}

/// Sets the mtime of `path` (leaving atime alone), without following a symlink's target out.
pub fn set_mtime(path: &Path, mtime_ns: i64) -> io::Result<()> {
    // futimens needs ownership, not write access: a read handle serves read-only files too.
    let f = File::open(path).or_else(|_| OpenOptions::new().write(true).open(path))?;
    f.set_times(fs::FileTimes::new().set_modified(time_from_ns(mtime_ns)))
}

/// `path` with `.` and `..` resolved lexically (no file-system access).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Permission bits of a file (without the file type).
pub fn mode_of(meta: &fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_the_git_blob_id() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(hash(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(hash(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/a/../../x")), Path::new("/x"));
    }

    #[test]
    fn mtime_round_trip() {
        for ns in [0, 1, 1_700_000_000_123_456_789, -1_500_000_000] {
            let t = time_from_ns(ns);
            let back = match t.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_nanos() as i64,
                Err(e) => -(e.duration().as_nanos() as i64),
            };
            assert_eq!(back, ns);
        }
    }

    #[test]
    fn backup_folder_must_be_a_private_dir_of_ours() {
        let dir = tempfile::tempdir().unwrap();
        let made = backup_folder(dir.path()).unwrap();
        assert_eq!(made, dir.path().join(BACKUP_SUBDIR));
        assert_eq!(mode_of(&fs::metadata(&made).unwrap()), 0o700);
        // Ours but open to others: made private again.
        fs::set_permissions(&made, fs::Permissions::from_mode(0o777)).unwrap();
        backup_folder(dir.path()).unwrap();
        assert_eq!(mode_of(&fs::metadata(&made).unwrap()), 0o700);
        // A symlink planted where the folder goes is refused, not followed.
        let other = tempfile::tempdir().unwrap();
        let planted = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(other.path(), planted.path().join(BACKUP_SUBDIR)).unwrap();
        let err = backup_folder(planted.path()).unwrap_err().to_string();
        assert!(err.ends_with("is a symlink, not a directory"), "{err}");
        // Someone else's folder (only root can make one here) is refused.
        if uid() == 0 {
            let theirs = tempfile::tempdir().unwrap();
            let f = theirs.path().join(BACKUP_SUBDIR);
            fs::create_dir(&f).unwrap();
            std::os::unix::fs::chown(&f, Some(65534), None).unwrap();
            let err = backup_folder(theirs.path()).unwrap_err().to_string();
            assert!(
                err.ends_with("belongs to uid 65534, not to you (uid 0)"),
                "{err}"
            );
        }
    }

    #[test]
    fn replace_keeps_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.py");
        fs::write(&f, "old").unwrap();
        replace_atomic(&f, b"new", 0o444, &tmp_name(&f, "r1")).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"new");
        assert_eq!(mode_of(&fs::metadata(&f).unwrap()), 0o444);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
