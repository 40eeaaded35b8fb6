//! `selfdebug replay`: would the tool have fixed the bugs this project already fixed?
//!
//! Each bug-fix commit of the history ([`history`]) is reconstructed in a private temp dir
//! ([`trees`]): the fix commit's tree with its non-test source changes reverted (the bug, with
//! the tests that pin the fix). The commit's test files run on both trees ([`reproduce`]); the
//! tests that fail on the bug and pass on the fix are the selection, handed to this same binary
//! as `fix --json` ([`repair`]), whose kept patch is then scored against the developer's
//! ([`score`]). Reproduction results are cached ([`cache`]); [`report`] prints the table and
//! the JSON. Nothing of the user's working tree, index or branches is touched: the trees are
//! written from the object database.

pub mod cache;
mod commit;
pub mod error;
pub mod history;
mod jobs;
pub mod outcomes;
pub mod repair;
pub mod report;
pub mod reproduce;
pub mod score;
pub mod trees;

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::Repository;

pub use commit::CommitReport;

/// The version of the JSON `replay --json` prints (schema/replay.schema.json).
pub const SCHEMA_VERSION: u32 = 1;

/// Everything a replay needs from the command line.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to start looking for the repository; also the project's directory in it.
    pub root: Option<PathBuf>,
    pub walk: history::Walk,
    pub jobs: usize,
    pub python: Option<PathBuf>,
    /// The limit of each of the replay's own pytest runs.
    pub timeout: Duration,
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    /// Passed to every `fix` run (see [`repair::fix_command_args`]).
    pub fix_args: Vec<String>,
}

/// Why there is no report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Not a git repository, a bad range or date: nothing was touched (exit 2).
    BadInput(String),
    /// No interpreter, no pytest (exit 6).
    Environment(String),
}

/// A whole replay.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The repository's top (its git dir for a bare repository).
    pub repository: PathBuf,
    /// The project's directory inside it (`""` for the top).
    pub project: PathBuf,
    pub python: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    pub scanned: usize,
    pub skipped: history::Skipped,
    pub commits: Vec<CommitReport>,
    /// Ctrl-C (SIGTERM, SIGHUP) stopped the replay: the commits not done are not listed.
    pub interrupted: bool,
}

/// Runs a replay, printing progress lines on stderr.
pub fn run(opts: &Options) -> Result<Replay, Failure> {
    let start = opts.root.clone().unwrap_or_else(|| PathBuf::from("."));
    if !start.is_dir() {
        return Err(Failure::BadInput(format!(
            "{} is not a directory",
            start.display()
        )));
    }
    let repo = Repository::discover(&start).map_err(|_| {
        Failure::BadInput(format!("{} is not in a git repository", start.display()))
    })?;
    let top = repo.workdir().unwrap_or(repo.path());
    let top = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
    let project = project_dir(&start, &top);
    let scan = history::scan(&repo, &opts.walk).map_err(|e| Failure::BadInput(e.to_string()))?;
    progress(&format!(
        "scanned {} commits, candidates {}; skipped: merge {}, no test change {}, no source change {}, too large {}",
        scan.scanned,
        scan.candidates.len(),
        scan.skipped.merge,
        scan.skipped.no_test_change,
        scan.skipped.no_source_change,
        scan.skipped.too_large
    ));
    let mut replay = Replay {
        repository: top.clone(),
        project: project.clone(),
        python: None,
        cache_dir: None,
        scanned: scan.scanned,
        skipped: scan.skipped,
        commits: Vec::new(),
        interrupted: false,
    };
    if scan.candidates.is_empty() {
        return Ok(replay);
    }
    let found = crate::runner::find_interpreter(&top.join(&project), opts.python.as_deref())
        .map_err(|e| Failure::Environment(e.to_string()))?;
    let prepared =
        crate::runner::prepare(&found).map_err(|e| Failure::Environment(e.to_string()))?;
    let cache_dir = if opts.no_cache {
        None
    } else {
        opts.cache_dir
            .clone()
            .or_else(|| cache::Cache::default_dir(repo.path()))
    };
    replay.python = Some(found.path.clone());
    replay.cache_dir = cache_dir.clone();
    let ctx = commit::Context {
        git_dir: repo.path().to_path_buf(),
        project,
        pytest: outcomes::Pytest {
            python: prepared,
            timeout: opts.timeout,
            extra: repair::pytest_args(&opts.fix_args).to_vec(),
        },
        fix_python: found.path,
        cache: cache::Cache::new(
            cache_dir,
            &found_key(&replay),
            repair::pytest_args(&opts.fix_args),
        ),
        fix_args: opts.fix_args.clone(),
        total: scan.candidates.len(),
    };
    crate::runner::remove_stale_temp_dirs();
    replay.commits = jobs::run_all(&ctx, &scan.candidates, opts.jobs.max(1));
    replay.interrupted = crate::process::interrupted();
    Ok(replay)
}

/// The interpreter the cache is keyed by.
fn found_key(replay: &Replay) -> PathBuf {
    replay.python.clone().unwrap_or_default()
}

/// `start` relative to the repository's top (where the tests and `fix` run in each tree).
fn project_dir(start: &Path, top: &Path) -> PathBuf {
    match (start.canonicalize(), top.canonicalize()) {
        (Ok(s), Ok(t)) => s
            .strip_prefix(&t)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        _ => PathBuf::new(),
    }
}

/// One progress line on stderr.
pub(crate) fn progress(line: &str) {
    crate::stdio::errln(&format!("replay: {line}"));
}
