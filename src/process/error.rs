//! Why running something failed: one error type for the runner and the layers below it.

use std::path::PathBuf;

/// Why running something failed (before or instead of a result). Displays as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunnerError {
    /// `--python` names nothing runnable.
    #[error("--python {}: no such interpreter", path.display())]
    ExplicitNotFound { path: PathBuf },
    /// No interpreter anywhere; `tried` lists the places looked at.
    #[error(
        "no Python interpreter found (tried {}); pass --python PATH",
        joined(tried)
    )]
    NotFound { tried: Vec<PathBuf> },
    /// The project's own virtualenv is there but this user cannot run its Python: no other
    /// interpreter is tried in its place.
    #[error(
        "the project's virtualenv cannot be run: {} ({why}); repair it, or pass --python PATH",
        path.display()
    )]
    ProjectVenvUnusable { path: PathBuf, why: String },
    /// The interpreter runs but cannot import pytest.
    #[error(
        "pytest is not installed for {p} ({detail}); install it with `{p} -m pip install pytest`",
        p = python.display()
    )]
    PytestMissing { python: PathBuf, detail: String },
    /// The program given as the interpreter does not run Python (`--python /bin/false`);
    /// `detail` says what it did instead.
    #[error(
        "{} is not a Python interpreter ({detail}); pass --python PATH to a Python that \
         has pytest",
        python.display()
    )]
    NotPython { python: PathBuf, detail: String },
    /// The process could not be started.
    #[error("cannot run {}: {message}", program.display())]
    Spawn { program: PathBuf, message: String },
    /// Waiting for the process, or making its temp dir, failed.
    #[error("{message}")]
    Io { message: String },
    /// Ctrl-C, SIGTERM or SIGHUP arrived (see [`super::install_interrupt_handler`]); the child was
    /// killed.
    #[error("interrupted")]
    Interrupted,
}

/// The places looked at, as one list.
fn joined(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}
