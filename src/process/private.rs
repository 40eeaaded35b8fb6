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
