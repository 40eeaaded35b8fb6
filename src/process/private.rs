//! The tool's private files: its cache directory, directories only we can write, and the one
//! atomic write into them.

use std::path::{Path, PathBuf};

/// The tool's private cache directory: `$XDG_CACHE_HOME/selfdebug`, else
/// `$HOME/.cache/selfdebug` (not created here).
pub fn cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| Path::new(v).is_absolute())
                .map(|h| Path::new(&h).join(".cache"))
        })
        .map(|b| b.join("selfdebug"))
}

/// Creates `dir` (mode 0700) if needed; true when it is a directory owned by us that nobody
/// else can write (a cache others can plant `.pyc` files in would run their code).
pub fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0)
}

/// Writes `path` atomically (a 0600 temp file in its directory, renamed over it) when that
/// directory is private ([`private_dir`]): for the caches, which a failed write only makes
/// slower, so nothing is fsync'd.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    if !private_dir(dir) {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory",
            dir.display()
        )));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_writes_are_whole_0600_files_in_0700_dirs() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a").join("b");
        write_private(&dir.join("f"), b"one").unwrap();
        write_private(&dir.join("f"), b"two").unwrap();
        assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"two");
        assert_eq!((mode(&dir), mode(&dir.join("f"))), (0o700, 0o600));
        // No temp file is left beside it.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn a_dir_others_can_write_is_refused_and_left_as_it_is() {
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!private_dir(&open));
        assert!(write_private(&open.join("f"), b"x").is_err());
        assert!(!open.join("f").exists());
        assert_eq!(mode(&open), 0o777);
    }
}
