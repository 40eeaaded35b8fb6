//! Why a replay step failed: a bad `--range` or `--since`, a git error, a tree not written, a
//! run that could not start. The texts are what `replay` prints (and its JSON `detail`).

use std::path::PathBuf;

use crate::process::RunnerError;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// libgit2's own message, without its class and code.
    #[error("{}", .0.message())]
    Git(#[from] git2::Error),
    #[error("--range: {0:?} is not a commit of this repository")]
    NotACommit(String),
    #[error("--range {0:?}: expected A..B (two commits, either may be left out)")]
    BadRange(String),
    #[error("the repository has no commit (HEAD is unborn)")]
    Unborn,
    #[error("--since {0:?}: expected a day as YYYY-MM-DD")]
    BadDay(String),
    #[error("commit {id}: {}", error.message())]
    Commit { id: git2::Oid, error: git2::Error },
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    #[error("cannot write the bug tree: {0}")]
    BugTree(std::io::Error),
    #[error("cannot write the fix tree: {0}")]
    FixTree(std::io::Error),
    /// A directory of a reverted file (the io error's text alone, as before).
    #[error("{0}")]
    CreateDir(std::io::Error),
    /// A reverted file; `path` is relative to the repository's top.
    #[error("cannot write {path}: {error}")]
    WriteFile { path: String, error: std::io::Error },
    #[error("cannot create {} as a private dir", .0.display())]
    Scratch(PathBuf),
    #[error(transparent)]
    Runner(#[from] RunnerError),
}
