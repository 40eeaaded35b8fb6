//! Writing the probed bytes and getting the original back, byte for byte, whatever happens.

use std::fs::{File, FileTimes};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::traceback::Fnv;

/// FNV-1a 64 of `bytes`, as `fnv1a64:<16 hex digits>`. Not cryptographic: it guards against
/// our own mistakes (a partial write, a wrong buffer), and the bytes are compared too.
pub fn hash(bytes: &[u8]) -> String {
    let mut h = Fnv::default();
    h.write(bytes);
    format!("fnv1a64:{:016x}", h.finish())
}

/// Why the original could not be put back. The file may be left probed: the message names
/// the backup copy to restore from by hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not restore {}: {message}{}", path.display(), saved_at(backup.as_deref()))]
pub struct RestoreError {
    pub path: PathBuf,
    pub backup: Option<PathBuf>,
    pub message: String,
}

/// Where the original is saved, as the tail of a [`RestoreError`]'s message.
fn saved_at(backup: Option<&Path>) -> String {
    backup.map_or(String::new(), |b| {
        format!("; the original is saved at {}", b.display())
    })
}

/// Why the probed bytes were not written (the file holds its original bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// Reading or writing `path` failed; the io error's kind and text (an `io::Error` is not
    /// `Clone`, and [`super::ProbeError`] is).
    #[error("{}: {text}", path.display())]
    Io {
        path: PathBuf,
        kind: std::io::ErrorKind,
        text: String,
    },
    /// The bytes on disk are not the ones the probe was planned on.
    #[error("{} changed while being prepared; not touched", .0.display())]
    Changed(PathBuf),
}

impl WriteError {
    fn io(path: &Path) -> impl Fn(std::io::Error) -> WriteError + '_ {
        move |e| WriteError::Io {
            path: path.to_path_buf(),
            kind: e.kind(),
            text: e.to_string(),
        }
    }
}

/// Holds a file's original bytes and times while it carries other bytes; puts them back on
/// [`FileGuard::restore`] or, failing that, on drop (an error or panic in between).
#[derive(Debug)]
pub struct FileGuard {
    path: PathBuf,
    original: Vec<u8>,
    hash: String,
    modified: Option<SystemTime>,
    accessed: Option<SystemTime>,
    /// A copy of the original outside the project, kept until the restore is verified.
    backup: Option<PathBuf>,
    done: bool,
}

impl FileGuard {
    /// Records `path`'s bytes (which must equal `original`) and times, saves a backup copy in
    /// the temp dir, then writes `new_bytes` in place (same inode and permissions).
    pub fn write(
        path: &Path,
        original: &[u8],
        new_bytes: &[u8],
        backup: bool,
    ) -> Result<FileGuard, WriteError> {
        let meta = std::fs::metadata(path).map_err(WriteError::io(path))?;
        let on_disk = std::fs::read(path).map_err(WriteError::io(path))?;
        if on_disk != original {
            return Err(WriteError::Changed(path.to_path_buf()));
        }
        let backup = if backup {
            save_backup(path, original)
        } else {
            None
        };
        let guard = FileGuard {
            path: path.to_path_buf(),
            original: original.to_vec(),
            hash: hash(original),
            modified: meta.modified().ok(),
            accessed: meta.accessed().ok(),
            backup,
            done: false,
        };
        // From here on the guard exists, so a failed or partial write is undone on drop.
        std::fs::write(path, new_bytes).map_err(WriteError::io(path))?;
        Ok(guard)
    }

    /// The hash of the original bytes.
    pub fn original_hash(&self) -> &str {
        &self.hash
    }

    /// Writes the original bytes back, restores the modification and access times, and checks
    /// by hash (and bytes) that the file is what it was.
    pub fn restore(mut self) -> Result<(), RestoreError> {
        self.done = true;
        let r = self.put_back();
        if r.is_ok() {
            if let Some(b) = &self.backup {
                let _ = std::fs::remove_file(b);
            }
        }
        r
    }

    fn put_back(&self) -> Result<(), RestoreError> {
        let err = |message: String| RestoreError {
            path: self.path.clone(),
            backup: self.backup.clone(),
            message,
        };
        std::fs::write(&self.path, &self.original).map_err(|e| err(e.to_string()))?;
        let mut times = FileTimes::new();
        if let Some(m) = self.modified {
            times = times.set_modified(m);
        }
        if let Some(a) = self.accessed {
            times = times.set_accessed(a);
        }
        File::options()
            .write(true)
            .open(&self.path)
            .and_then(|f| f.set_times(times))
            .map_err(|e| err(format!("cannot restore its modification time: {e}")))?;
        let now = std::fs::read(&self.path).map_err(|e| err(e.to_string()))?;
        let h = hash(&now);
        if h != self.hash || now != self.original {
            return Err(err(format!(
                "content hash after restore is {h}, expected {}",
                self.hash
            )));
        }
        Ok(())
    }
}

impl Drop for FileGuard {
    fn drop(&mut self) {
        if !self.done {
            self.done = true;
            if self.put_back().is_ok() {
                if let Some(b) = &self.backup {
                    let _ = std::fs::remove_file(b);
                }
            }
        }
    }
}

/// `<tmp>/selfdebug-<uid>/probe-backup/<basename>.<pid>.<nanos>.orig`, private to the user (it
/// holds source code); `None` when it cannot be made (the in-memory copy still restores).
fn save_backup(path: &Path, original: &[u8]) -> Option<PathBuf> {
    let dir = crate::journal::user_temp_dir().ok()?.join("probe-backup");
    crate::journal::make_private_dir(&dir).ok()?;
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!(
        "{}.{}.{nanos}.orig",
        path.file_name()?.to_string_lossy(),
        std::process::id()
    );
    let p = dir.join(name);
    std::fs::write(&p, original).ok()?;
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restores_bytes_and_mtime_on_drop() {
        let dir = crate::process::TempDir::new("selfdebug-guard").unwrap();
        let p = dir.path().join("m.py");
        std::fs::write(&p, b"a = 1\r\n").unwrap();
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        {
            let g = FileGuard::write(&p, b"a = 1\r\n", b"probe\r\na = 1\r\n", true).unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"probe\r\na = 1\r\n");
            assert_eq!(g.original_hash(), hash(b"a = 1\r\n"));
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"a = 1\r\n");
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), old);
    }

    #[test]
    fn refuses_a_file_that_changed() {
        let dir = crate::process::TempDir::new("selfdebug-guard").unwrap();
        let p = dir.path().join("m.py");
        std::fs::write(&p, b"x").unwrap();
        assert_eq!(
            FileGuard::write(&p, b"y", b"z", true).unwrap_err(),
            WriteError::Changed(p.clone())
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
    }
}
