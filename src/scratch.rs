//! Scratch copies of a project, for work that must not touch the user's tree even for a
//! moment (`fix --dry-run`): candidates are written and proven there.

use std::io;
use std::path::{Path, PathBuf};

/// Directories never copied: version control, caches, and virtualenvs (the interpreter keeps
/// using the original one; see [`is_virtualenv`]).
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "node_modules",
    ".selfdebug-journal",
];

/// A copy of a project in a temporary directory, removed on drop (and, after a kill, by the
/// next run: see [`crate::runner::remove_stale_temp_dirs`]).
pub struct Scratch {
    dir: crate::process::TempDir,
    root: PathBuf,
}

impl Scratch {
    /// Copies `root` (files and symlinks as symlinks, without the skipped directories) to a
    /// new temporary directory named after it.
    pub fn copy_of(root: &Path) -> io::Result<Scratch> {
        // Named with our pid, so a copy left by a killed run is recognised and removed later.
        let dir = crate::process::TempDir::new("selfdebug-scratch")?;
        let name = root
            .file_name()
            .map_or_else(|| "project".into(), |n| n.to_os_string());
        let target = dir.path().join(name);
        std::fs::create_dir_all(&target)?;
        let walker = walkdir::WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| {
                !(e.depth() > 0
                    && e.file_type().is_dir()
                    && (SKIP_DIRS.contains(&e.file_name().to_string_lossy().as_ref())
                        || is_virtualenv(e.path())))
            });
        for entry in walker {
            let entry = entry.map_err(io::Error::other)?;
            let rel = entry.path().strip_prefix(root).map_err(io::Error::other)?;
            if rel.as_os_str().is_empty() {
                continue;
            }
            let dest = target.join(rel);
            let ft = entry.file_type();
            if ft.is_dir() {
                std::fs::create_dir_all(&dest)?;
            } else if ft.is_symlink() {
                let link = std::fs::read_link(entry.path())?;
                std::os::unix::fs::symlink(link, &dest)?;
            } else if ft.is_file() {
                std::fs::copy(entry.path(), &dest)?;
            }
        }
        Ok(Scratch { dir, root: target })
    }

    /// The copy's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the scratch's files live, for error messages.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `PYTHONPATH` that makes Python import the copy, not the original, even when the project
    /// is installed in editable mode (`.pth` paths and editable finders come after it): the
    /// copy's `src/` (for src layouts) and its root, then whatever the user had.
    pub fn pythonpath(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let src = self.root.join("src");
        if src.is_dir() {
            parts.push(src.to_string_lossy().into_owned());
        }
        parts.push(self.root.to_string_lossy().into_owned());
        if let Ok(existing) = std::env::var("PYTHONPATH") {
            if !existing.is_empty() {
                parts.push(existing);
            }
        }
        parts.join(":")
    }
}

/// A directory holding a virtualenv (`pyvenv.cfg`), whatever its name.
pub fn is_virtualenv(dir: &Path) -> bool {
    dir.join("pyvenv.cfg").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_sources_not_caches_or_venvs() {
        let src = tempfile::tempdir().unwrap();
        let p = src.path();
        std::fs::create_dir_all(p.join("pkg/__pycache__")).unwrap();
        std::fs::create_dir_all(p.join("env/lib")).unwrap();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join("pkg/m.py"), b"x = 1\r\n").unwrap();
        std::fs::write(p.join("pkg/__pycache__/m.cpython-311.pyc"), b"junk").unwrap();
        std::fs::write(p.join("env/pyvenv.cfg"), b"home = /usr").unwrap();
        std::fs::write(p.join(".git/HEAD"), b"ref").unwrap();
        std::os::unix::fs::symlink("pkg/m.py", p.join("link.py")).unwrap();
        let s = Scratch::copy_of(p).unwrap();
        let mut files: Vec<String> = walkdir::WalkDir::new(s.root())
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| !e.file_type().is_dir())
            .map(|e| {
                e.path()
                    .strip_prefix(s.root())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        files.sort();
        assert_eq!(files, vec!["link.py", "pkg/m.py"]);
        assert_eq!(
            std::fs::read(s.root().join("pkg/m.py")).unwrap(),
            b"x = 1\r\n"
        );
        assert_eq!(
            std::fs::read_link(s.root().join("link.py")).unwrap(),
            PathBuf::from("pkg/m.py")
        );
        let kept = s.dir().to_path_buf();
        drop(s);
        assert!(!kept.exists());
    }
}
