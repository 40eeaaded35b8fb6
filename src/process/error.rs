//! Why running something failed: one error type for the runner and the layers below it.

use std::fmt;
use std::path::PathBuf;

/// Why running something failed (before or instead of a result). Displays as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerError {
    /// `--python` names nothing runnable.
    ExplicitNotFound { path: PathBuf },
    /// No interpreter anywhere; `tried` lists the places looked at.
    NotFound { tried: Vec<PathBuf> },
    /// The interpreter runs but cannot import pytest.
    PytestMissing { python: PathBuf, detail: String },
    /// The program given as the interpreter does not run Python (`--python /bin/false`);
    /// `detail` says what it did instead.
    NotPython { python: PathBuf, detail: String },
    /// The process could not be started.
    Spawn { program: PathBuf, message: String },
    /// Waiting for the process, or making its temp dir, failed.
    Io { message: String },
    /// Ctrl-C, SIGTERM or SIGHUP arrived (see [`super::install_interrupt_handler`]); the child was
    /// killed.
    Interrupted,
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerError::ExplicitNotFound { path } => {
                write!(f, "--python {}: no such interpreter", path.display())
            }
            RunnerError::NotFound { tried } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "no Python interpreter found (tried {}); pass --python PATH",
                    tried.join(", ")
                )
            }
            RunnerError::PytestMissing { python, detail } => write!(
                f,
                "pytest is not installed for {p} ({detail}); install it with `{p} -m pip install pytest`",
                p = python.display()
            ),
            RunnerError::NotPython { python, detail } => write!(
                f,
                "{} is not a Python interpreter ({detail}); pass --python PATH to a Python that \
                 has pytest",
                python.display()
            ),
            RunnerError::Spawn { program, message } => {
                write!(f, "cannot run {}: {message}", program.display())
            }
            RunnerError::Io { message } => f.write_str(message),
            RunnerError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for RunnerError {}
