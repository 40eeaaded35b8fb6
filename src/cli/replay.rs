//! `selfdebug replay`: replay the repository's own bug-fix commits and score the repairs.

use std::path::PathBuf;
use std::time::Duration;

use super::error;
use crate::replay::{self, history::Walk, Failure, Options};
use crate::{exit, report};

/// `after_help` of `selfdebug replay`.
pub const EXIT_CODES: &str = "\
Exit codes of `replay`:
  0  the replay ran (whatever the commits' results: they are in the table or the JSON)
  2  bad input: not in a git repository, a bad --range or --since, bad flags; nothing was
     touched
  6  the tool could not work: no interpreter, pytest missing, or SIGINT/SIGTERM/SIGHUP
     arrived (the commits done so far are reported; every temp tree was removed)
141  the reader of stdout or stderr went away (`| head -1`)

Each commit is rebuilt from the object database in a private temp dir: the working tree, the
index, the branches and .git/worktrees are never touched. See docs/replay.md.";

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The repository (any directory in it; a directory below the top is the project whose
    /// tests run, as the root of `fix`). Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Only the commits of `A..B` (git's meaning; `A..` ends at HEAD, `..B` is B's history).
    /// Default: the history of HEAD.
    #[arg(long, value_name = "A..B", conflicts_with = "since")]
    pub range: Option<String>,
    /// Only the commits made on or after this day (UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub since: Option<String>,
    /// Replay at most N candidate commits, newest first (commits passed over do not count).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max: Option<u64>,
    /// Candidate commits replayed at once (default 1). Each `fix` also proves candidates in
    /// parallel (its --jobs): on a small machine keep this at 1.
    #[arg(long, value_name = "N", default_value_t = 1, hide_default_value = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: u64,
    /// A bug fix changes at most this many lines of non-test Python (default 10; per hunk the
    /// larger of lines added and removed).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        hide_default_value = true
    )]
    pub max_lines: usize,
    /// A bug fix changes non-test Python in at most this many files (default 2).
    #[arg(long, value_name = "N", default_value_t = 2, hide_default_value = true)]
    pub max_files: usize,
    /// Interpreter for the reproduction runs and every `fix` run. Default: as for `fix`, from
    /// the repository's directory ($VIRTUAL_ENV, `.venv/`, `venv/`, `python3`).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Seconds one of the replay's own pytest runs may take (default 600).
    #[arg(long, value_name = "SECONDS", default_value_t = 600, hide_default_value = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Where reproduction results are cached. Default:
    /// $XDG_CACHE_HOME/selfdebug/replay/<repository>-<hash of its path>/ (else ~/.cache/...).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,
    /// Neither read nor write the cache: reproduce every commit.
    #[arg(long)]
    pub no_cache: bool,
    /// Print one JSON object on stdout instead of the table (schema/replay.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Also write that JSON object to FILE.
    #[arg(long, value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    /// Arguments for every `fix` run (after `--`), e.g. `-- --time-budget 300`; pytest
    /// arguments after a second `--` follow the selection.
    #[arg(last = true, value_name = "FIX_ARGS")]
    pub fix_args: Vec<String>,
}

pub fn run(args: &ReplayArgs) -> i32 {
    crate::process::install_interrupt_handler();
    let opts = Options {
        root: args.root.clone(),
        walk: Walk {
            range: args.range.clone(),
            since: args.since.clone(),
            max: args.max.map(|m| m as usize),
            max_lines: args.max_lines,
            max_files: args.max_files,
        },
        jobs: args.jobs as usize,
        python: args.python.clone(),
        timeout: Duration::from_secs(args.timeout),
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
        fix_args: args.fix_args.clone(),
    };
    let replay = match replay::run(&opts) {
        Ok(r) => r,
        Err(f) => {
            let (code, msg) = match f {
                Failure::BadInput(m) => (exit::BAD_INPUT, m),
                Failure::Environment(m) => (exit::ENVIRONMENT, m),
            };
            error(&msg);
            let doc = report::envelope::error(replay::SCHEMA_VERSION, code, &msg);
            emit(args, &doc, None);
            return code;
        }
    };
    let code = if replay.interrupted {
        exit::ENVIRONMENT
    } else {
        exit::OK
    };
    let doc = replay::report::json(&replay, &opts, code);
    emit(args, &doc, Some(replay::report::table(&replay)));
    code
}

/// The JSON on stdout (with --json) or the table, and the JSON to --json-file.
fn emit(args: &ReplayArgs, doc: &str, table: Option<String>) {
    if let Some(path) = &args.json_file {
        if let Err(e) = std::fs::write(path, doc) {
            error(format!("cannot write {}: {e}", path.display()));
        }
    }
    if args.json {
        crate::stdio::out(doc);
    } else if let Some(t) = table {
        crate::stdio::out(&t);
    }
}
