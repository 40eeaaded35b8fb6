//! The command line: flags and dispatch only. Each subcommand lives in its own file and calls
//! into the library; the process exit code is returned, never `exit`ed from deep inside.

mod fix;
mod parse;
mod probe;
mod restore;
mod rules;

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

const PARSE_EXIT_CODES: &str = "\
Exit codes of `parse`:
  0  at least one failure was read
  1  the log is pytest output in which nothing failed
  2  bad input: unreadable file, not a pytest log or Python traceback, bad flags";

#[derive(Parser, Debug)]
#[command(
    name = "selfdebug",
    version,
    about = "Repairs failing Python code with pytest as the judge",
    long_about = "Repairs failing Python code with pytest as the judge.\n\n\
        Reads pytest output, finds the failing statement, learns the values involved with a \
        probe, and proposes minimal, pytest-proven edits from declarative rules.",
    after_help = "Exit codes: 0 success, 2 bad input (nothing touched), 6 the tool could not work \
        (no interpreter, pytest missing); each command's --help lists its own."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read a pytest log (any --tb style) or a Python traceback and print its failures.
    #[command(after_help = PARSE_EXIT_CODES)]
    Parse(ParseArgs),
    /// Run the failing test once with a probe before the failing statement and report the
    /// values it saw (locals, and the type of each sub-expression). The file is restored
    /// byte for byte afterwards.
    #[command(after_help = probe::EXIT_CODES)]
    Probe(ProbeArgs),
    /// List the repair rules: built in, and the project's own in `.selfdebug/rules/*.toml`.
    Rules(RulesArgs),
    /// Propose and prove repairs for failing tests.
    #[command(after_help = fix::EXIT_CODES)]
    Fix(FixArgs),
    /// Restore the files of a selfdebug run that was killed, from its journal, verifying each
    /// by hash. Touches nothing else.
    #[command(after_help = restore::EXIT_CODES)]
    Restore(RestoreArgs),
}

/// How to run the project's Python (shared by the commands that run pytest).
#[derive(clap::Args, Debug, Clone)]
pub struct PythonArgs {
    /// Interpreter to run pytest with. Default: the active virtualenv ($VIRTUAL_ENV), else
    /// `.venv/` or `venv/` under the root, else `python3`.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Seconds before a pytest run is killed (with its whole process group).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// The pytest log; `-` reads standard input. Without it, pytest is run to find failures.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Probe only this failing test (a pytest node id).
    #[arg(long = "module", value_name = "NODEID")]
    pub test: Option<String>,
    /// Print JSON instead of the human view.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub python: PythonArgs,
}

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    /// Project root (its `.selfdebug/rules/*.toml` are listed too).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print JSON instead of the catalogue.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct FixArgs {
    /// The pytest log; `-` reads standard input. Without it, pytest is run to find failures.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Work only on this failing test (a pytest node id).
    #[arg(long = "module", value_name = "NODEID")]
    pub test: Option<String>,
    /// Candidates to try per failure before giving up.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_attempts: u32,
    /// Change nothing: validate candidates in a scratch copy and print the patch as a diff.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print the top candidate's diff without running anything.
    #[arg(long, requires = "dry_run")]
    pub no_validate: bool,
    /// Also try fixes of rules that are not marked safe (see `selfdebug rules`).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Keep no fix unless every failure is fixed.
    #[arg(long)]
    pub all_or_nothing: bool,
    /// Let fixes edit test files (by default the tests are the specification).
    #[arg(long)]
    pub allow_tests: bool,
    /// Attempts per failure category, e.g. `--budget logic=6` (defaults: environment 1,
    /// dependency 2, data 2, syntax 3, logic 4, unknown 2; environment and dependency failures
    /// are reported, never patched).
    #[arg(long, value_name = "CATEGORY=N")]
    pub budget: Vec<String>,
    /// Append one JSON line per attempt to this file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Where backups of touched files go (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub backup_dir: Option<PathBuf>,
    #[command(flatten)]
    pub python: PythonArgs,
    /// Extra arguments for every pytest run (after `--`).
    #[arg(last = true, value_name = "PYTEST_ARGS")]
    pub pytest_args: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// Project root whose interrupted run is restored.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// The log file; `-` or nothing reads standard input.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root that frames are resolved against.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print one JSON document (see schema/parse.schema.json) instead of the human view.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                crate::exit::BAD_INPUT
            } else {
                crate::exit::OK
            };
            // clap renders help/version to stdout and usage errors to stderr itself.
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Parse(args) => parse::run(&args),
        Command::Probe(args) => probe::run(&args),
        Command::Rules(args) => rules::run(&args),
        Command::Fix(args) => fix::run(&args),
        Command::Restore(args) => restore::run(&args),
    }
}

/// The LOG argument's bytes: a file, or standard input for `-` (refused when it is a terminal,
/// which would wait forever).
fn read_log(path: &Path) -> Result<Vec<u8>, String> {
    if path.as_os_str() != "-" {
        return std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err("no log given: pass a file, or pipe pytest output into `-`".into());
    }
    let mut buf = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(buf)
}

/// How error messages name the LOG argument.
fn log_name(log: Option<&Path>) -> String {
    match log {
        Some(p) if p.as_os_str() != "-" => p.display().to_string(),
        _ => "standard input".to_string(),
    }
}

/// One-line error on stderr, the way every subcommand reports bad input.
fn error(msg: impl std::fmt::Display) {
    eprintln!("selfdebug: error: {msg}");
}
