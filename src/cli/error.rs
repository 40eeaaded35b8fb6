//! Why a subcommand cannot start: bad input (exit 2), each reason with its data, one line.

use std::io;
use std::path::PathBuf;

use crate::config::{settings::SettingsError, ConfigError};
use crate::project::RootError;
use crate::rules::RuleError;
use crate::traceback::ParseError;

/// Bad input found before anything runs (exit 2). Displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Root(#[from] RootError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Rules(#[from] RuleError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Log(#[from] LogError),
    /// The log (`name`, as messages name it) is not a log.
    #[error("{name}: {source}")]
    NotALog { name: String, source: ParseError },
    /// `SELFDEBUG_JOBS` (its value) is not a whole number ≥ 1.
    #[error("SELFDEBUG_JOBS={0:?}: expected a whole number of jobs, at least 1")]
    JobsEnv(String),
    /// `SELFDEBUG_WORKER` (its value) is neither auto nor off.
    #[error("SELFDEBUG_WORKER={0:?}: expected auto or off")]
    WorkerEnv(String),
    /// `SELFDEBUG_WORKER_KEEPALIVE` (its value) is no duration.
    #[error("SELFDEBUG_WORKER_KEEPALIVE={0:?}: expected a duration such as 10m, 90s, 1h, or off")]
    KeepAliveEnv(String),
}

/// Why the LOG argument could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    /// `-` with standard input a terminal: reading would wait forever.
    #[error("no log given: pass a file, or pipe pytest output into `-`")]
    Terminal,
    #[error("cannot read standard input: {0}")]
    Stdin(#[source] io::Error),
}

/// `--worker-keepalive` (its value) is no duration.
#[derive(Debug, thiserror::Error)]
#[error("{0:?}: expected a duration such as 10m, 90s, 1h, or off")]
pub struct BadKeepAlive(pub String);

/// `--worker` (its value) is neither auto nor off.
#[derive(Debug, thiserror::Error)]
#[error("{0:?}: expected auto or off")]
pub struct BadWorker(pub String);
