//! The reproduction cache: per commit, interpreter, tool version and pytest arguments, whether the commit
//! reproduced and with which selection, so that a second replay only repairs. Private files
//! under `$XDG_CACHE_HOME/selfdebug/replay/<repo id>/` (or `--cache-dir`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::reproduce::Reproduction;

/// A cache dir, or none (`--no-cache`, or no home to put it in).
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
    /// Interpreter path, tool version and the user's pytest arguments: a result is only
    /// reused for the same three.
    key: String,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    commit: String,
    key: String,
    reproduction: Reproduction,
}

impl Cache {
    pub fn new(dir: Option<PathBuf>, python: &Path, pytest_args: &[String]) -> Cache {
        let mut key = format!(
            "{} selfdebug {}",
            python.display(),
            env!("CARGO_PKG_VERSION")
        );
        for a in pytest_args {
            key.push_str(&format!(" {a:?}"));
        }
        Cache { dir, key }
    }

    /// The default dir of the repository whose git dir is `git_dir`: its directory name and a
    /// hash of its canonical path.
    pub fn default_dir(git_dir: &Path) -> Option<PathBuf> {
        let canon = git_dir.canonicalize().ok()?;
        let top = if canon.file_name().is_some_and(|n| n == ".git") {
            canon.parent()?.to_path_buf()
        } else {
            canon.clone()
        };
        let name = top.file_name()?.to_string_lossy().into_owned();
        let hash =
            git2::Oid::hash_object(git2::ObjectType::Blob, canon.as_os_str().as_encoded_bytes())
                .ok()?;
        let id = format!("{name}-{}", &hash.to_string()[..12]);
        Some(crate::process::cache_home()?.join("replay").join(id))
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn file(&self, commit: &str) -> Option<PathBuf> {
        let key = git2::Oid::hash_object(git2::ObjectType::Blob, self.key.as_bytes()).ok()?;
        Some(
            self.dir
                .as_ref()?
                .join(format!("{commit}-{}.json", &key.to_string()[..12])),
        )
    }

    pub fn get(&self, commit: &str) -> Option<Reproduction> {
        let bytes = std::fs::read(self.file(commit)?).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.commit == commit && entry.key == self.key).then_some(entry.reproduction)
    }

    /// Stores a result; a cache that cannot be written only makes the next run slower.
    pub fn put(&self, commit: &str, reproduction: &Reproduction) {
        let Some(path) = self.file(commit) else {
            return;
        };
        let entry = Entry {
            commit: commit.to_string(),
            key: self.key.clone(),
            reproduction: reproduction.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            let _ = crate::process::write_private(&path, &bytes);
        }
    }
}
