//! The command line: flags and dispatch only. Each subcommand lives in its own file and calls
//! into the library; the process exit code is returned, never `exit`ed from deep inside.

mod config;
mod error;
mod fix;
mod given;
mod llm;
mod mcp;
mod parse;
mod probe;
mod replay;
mod restore;
mod rules;

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::report::format::{ColorChoice, OutputFormat, TextOrJson};
use error::{BadWorker, InputError, LogError};

const PARSE_EXIT_CODES: &str = "\
Exit codes of `parse`:
  0  at least one failure was read
  1  the log is pytest output (or unittest output) in which nothing failed
  2  bad input: unreadable file, not a pytest log, unittest output or Python traceback, bad flags
141  the reader of stdout went away (`| head -1`): the output was cut; no panic

With --json one object is printed on every exit (docs/json.md).";

const RULES_EXIT_CODES: &str = "\
Exit codes of `rules`:
  0  the rules are listed
  2  bad input: a broken rule file (one line with the file and the problem), --root is not a
     directory, bad flags
141  the reader of stdout went away (`| head -1`)

With --json one object is printed on every exit (docs/json.md).";

#[derive(Parser, Debug)]
#[command(
    name = "selfdebug",
    version,
    about = "Repairs failing Python code with pytest as the judge",
    long_about = "Repairs failing Python code with pytest as the judge.\n\n\
        Reads pytest output, finds the failing statement, learns the values involved with a \
        probe, and proposes minimal, pytest-proven edits from declarative rules.",
    after_help = "Exit codes: 0 success, 2 bad input (nothing touched), 6 the tool could not work \
        (no interpreter, pytest missing), 141 the reader of stdout (or stderr) went away, as in \
        `| head -1` (a fix restores every touched file first); each command's --help lists its \
        own. With --json every command prints one JSON object on every exit (docs/json.md)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the patch and the log of `fix` (JSON and GitHub output never are).
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read a pytest log (any --tb style; a failure section cut out of a CI log; CI time
    /// stamps and container prefixes), `python -m unittest` output, or a Python traceback, and
    /// print its failures.
    #[command(after_help = PARSE_EXIT_CODES)]
    Parse(ParseArgs),
    /// Run the failing test once with a probe before the failing statement and report the
    /// values it saw (locals, and the type of each sub-expression). The file is restored
    /// byte for byte afterwards.
    #[command(after_help = probe::EXIT_CODES)]
    Probe(ProbeArgs),
    /// List the repair rules: built in, and the project's own in `.selfdebug/rules/*.toml`.
    #[command(after_help = RULES_EXIT_CODES)]
    Rules(RulesArgs),
    /// Propose and prove repairs for failing tests.
    #[command(after_help = fix::EXIT_CODES)]
    // Boxed: it has far more flags than the others (clippy::large_enum_variant).
    Fix(Box<FixArgs>),
    /// Restore the files of a selfdebug run that was killed, from its journal, verifying each
    /// by hash. Touches nothing else.
    #[command(after_help = restore::EXIT_CODES)]
    Restore(RestoreArgs),
    /// Print the effective settings of `fix` in this project and where each comes from: the
    /// default, or the configuration file and line (`[tool.selfdebug]` in pyproject.toml, or
    /// selfdebug.toml / .selfdebug.toml in the root). `fix ... --show-settings` adds its flags.
    #[command(after_help = config::EXIT_CODES)]
    Config(ConfigArgs),
    /// Serve the commands to a coding agent as a Model Context Protocol server over stdio
    /// (tools fix, parse, probe, rules, restore, config; see docs/agents.md).
    #[command(after_help = mcp::EXIT_CODES)]
    Mcp,
    /// Replay the repository's own bug-fix commits: rebuild each bug privately, run `fix` on
    /// its failing tests and score the patch against the developer's (docs/replay.md).
    #[command(after_help = replay::EXIT_CODES)]
    Replay(replay::ReplayArgs),
}

/// How to run the project's Python (shared by the commands that run pytest).
#[derive(clap::Args, Debug, Clone)]
pub struct PythonArgs {
    /// Interpreter to run pytest with. Default: the active virtualenv ($VIRTUAL_ENV), else
    /// `.venv/` or `venv/` under the root, else `python3`. Inside selfdebug's own virtualenv
    /// (a pre-commit hook's), that one is passed over, on PATH too.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Seconds before a pytest run is killed (with its whole process group). With --cmd: the
    /// limit of every run of the command (default: --test-timeout).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// The pytest log; `-` reads standard input. Without it, pytest is run to find failures.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root. Default: found from the current directory as pytest finds its rootdir
    /// (nearest pytest.ini, pyproject.toml with [tool.pytest.ini_options], tox.ini,
    /// setup.cfg), else the git work tree's top, else the current directory.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Probe only this failing test (a pytest node id).
    #[arg(long = "module", value_name = "NODEID")]
    pub test: Option<String>,
    /// Print JSON instead of the human view (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// `text` (the human view) or `json`.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<TextOrJson>,
    #[command(flatten)]
    pub python: PythonArgs,
}

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    /// Project root (its `.selfdebug/rules/*.toml` are listed too). Default: found from the
    /// current directory as for `fix`.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print JSON instead of the catalogue (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// `text` (the catalogue) or `json`.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<TextOrJson>,
}

#[derive(clap::Args, Debug)]
pub struct FixArgs {
    /// The pytest log; `-` reads standard input. Without it, pytest is run to find failures.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root. Default: found from the current directory as pytest finds its rootdir
    /// (nearest pytest.ini, pyproject.toml with [tool.pytest.ini_options], tox.ini,
    /// setup.cfg), else the git work tree's top, else the current directory.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Work only on this test: a pytest node id, or a bare test name (`test_x` selects every
    /// collected `...::test_x` and `test_x[param]`). One that matches no test is bad input.
    #[arg(long = "module", value_name = "NODEID")]
    pub test: Option<String>,
    /// Candidates to try per failure before giving up (default 4).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
    /// Change nothing: validate candidates in a scratch copy and print the patch as a diff.
    /// Refused (exit 6, naming its pid) while a real run works on the project: its files may
    /// hold a probe or an unproven candidate.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the top candidate of each failure in LOG without running anything (implies
    /// --dry-run; nothing is proven, so the status is `proposed`, exit 8).
    #[arg(long)]
    pub no_validate: bool,
    /// Try only fixes of rules marked safe: one right answer that the failure itself names
    /// (see `selfdebug rules`). By default every rule is tried and pytest decides; unsafe
    /// patches say what a reviewer should check. `--no-safe-only` undoes `safe-only = true`
    /// of the configuration file.
    #[arg(long, overrides_with = "no_safe_only")]
    pub safe_only: bool,
    #[arg(long, hide = true, overrides_with = "safe_only")]
    pub no_safe_only: bool,
    /// Exit 1 instead of 0 when there was something to fix and every failure has a proven
    /// patch (kept, or with --dry-run printed): the tests pass only with the patch. For a check
    /// that must fail on broken code (pre-commit's `selfdebug-check` hook), as Ruff's flag.
    #[arg(long)]
    pub exit_non_zero_on_fix: bool,
    /// Accepted for compatibility; unsafe rules are tried by default now.
    #[arg(long, hide = true)]
    pub unsafe_fixes: bool,
    /// Seconds one test may run (default 60). A test still running then fails where it is
    /// stuck (category `timeout`, reported with that frame, never patched) and the rest of
    /// the run goes on; a candidate that makes a test hang is rejected at this limit. With
    /// --cmd (and no --timeout): the limit of each run of the command, which is one "test".
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub test_timeout: Option<u64>,
    /// Seconds for the whole run (default 900). When too little is left for another
    /// candidate, proven fixes are kept, the rest is restored, and the report says
    /// `time budget used up`.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub time_budget: Option<u64>,
    /// Seconds the search over small edits may spend on one wrong-output failure (default 60;
    /// see "Wrong output" in docs/usage.md). Within --time-budget.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub search_time: Option<u64>,
    /// Runs of its failing tests a kept unsafe patch (search, guard, model) must pass in a
    /// row, the proving run counted (default 3; 1 turns the repeats off); one miss rejects it
    /// as a pass by chance. Safe patches are not repeated. See docs/proof.md.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub proof_repeats: Option<u32>,
    /// Candidates proven at once, each in its own scratch copy of the project (default: the
    /// number of cores, at most 4; also SELFDEBUG_JOBS): the search's, and a failure's rule
    /// candidates after its first was rejected (their failing-test runs ahead); with cold runs
    /// (no warm worker), a rule candidate's full run starts beside its failing-test run. 1
    /// proves one at a time in the project itself. The fix kept and the attempts are the same
    /// either way.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Keep no fix unless every failure is fixed (`--no-all-or-nothing` undoes the file's).
    #[arg(long, overrides_with = "no_all_or_nothing")]
    pub all_or_nothing: bool,
    #[arg(long, hide = true, overrides_with = "all_or_nothing")]
    pub no_all_or_nothing: bool,
    /// Let fixes edit test files (by default the tests are the specification;
    /// `--no-allow-tests` undoes the file's `allow-tests = true`).
    #[arg(long, overrides_with = "no_allow_tests")]
    pub allow_tests: bool,
    #[arg(long, hide = true, overrides_with = "allow_tests")]
    pub no_allow_tests: bool,
    /// Attempts per failure category, e.g. `--budget logic=6` (defaults: environment 1,
    /// dependency 2, data 2, syntax 3, logic 4, unknown 2; environment and dependency failures
    /// are reported, never patched).
    #[arg(long, value_name = "CATEGORY=N")]
    pub budget: Vec<String>,
    /// Append one JSON line per attempt to this file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Print one JSON object on stdout (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// What to print on stdout. `github`: an `::error` annotation per failure not fixed, a
    /// `::notice` per kept safe fix and a `::warning` per kept unsafe one, each at the lines it
    /// changed (see docs/github-annotations.md).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Also write the JSON object `--json` prints to FILE, whatever the output format (the
    /// GitHub Action reads it there while the annotations go to stdout).
    #[arg(long, value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    /// Where the backup copies of patched files go, as
    /// DIR/agent-self-debugger-loop/{basename}.{unix_ts}.bak (default DIR: {temp dir}/selfdebug-{uid},
    /// private to the user; one owned by someone else or a symlink is refused). Only files that
    /// keep a change keep a copy.
    #[arg(long, value_name = "DIR")]
    pub backup_dir: Option<PathBuf>,
    /// Backup copies older than DAYS (default 14), of runs that have ended, are removed from
    /// the backup dir at the start of a run; 0 keeps them all (see docs/backups.md).
    #[arg(long, value_name = "DAYS")]
    pub backup_max_age: Option<u64>,
    /// Command mode: this command is the judge instead of pytest, e.g.
    /// `--cmd 'python script.py in.csv'`. Split into words like a shell does (quotes,
    /// backslashes) and run without a shell from the root; a first word `python`/`python3`
    /// is the project's interpreter. Pass: exit status 0 and the output checks; the failure
    /// is read from the traceback on stderr. Wrong output (exit 0, a check failed) goes to the
    /// search over small edits, localized by one traced run of `python SCRIPT ARGS` or
    /// `python -m MODULE ARGS` (see docs/command-mode.md).
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub command: Option<String>,
    /// With --cmd: a passing run prints exactly this file's bytes on stdout.
    #[arg(long, value_name = "FILE", requires = "command")]
    pub expect_stdout: Option<PathBuf>,
    /// With --cmd: a passing run's stdout has a match for this regex (Rust regex syntax;
    /// `(?s)^...$` for the whole output).
    #[arg(long, value_name = "REGEX", requires = "command")]
    pub expect_stdout_regex: Option<String>,
    /// With --cmd: a run that prints anything on stderr has failed.
    #[arg(long, requires = "command")]
    pub stderr_empty: bool,
    /// Answer a ModuleNotFoundError for a module that is not in the project with
    /// `python -m pip install DIST` into the project's interpreter (once per distribution;
    /// `yaml` → PyYAML, `cv2` → opencv-python, ...), then run again. Never by default. Not
    /// with --dry-run, which changes nothing.
    #[arg(long)]
    pub install_missing: bool,
    /// Run every judge run (pytest or --cmd) under bubblewrap (`bwrap`): no network, the
    /// file system read-only except the workspace and the temp dir. Exit 6 when bwrap is
    /// missing or cannot run here.
    #[arg(long)]
    pub sandbox: bool,
    /// `auto` (the default): pytest runs are children of a warm worker that imported pytest
    /// and its plugins once, cold processes where it cannot serve (said in the report);
    /// `off`: every run is a cold process. Also SELFDEBUG_WORKER=auto|off.
    #[arg(long, value_name = "auto|off", value_parser = parse_worker)]
    pub worker: Option<crate::worker::Mode>,
    /// Never add `-n N` (pytest-xdist) to the full confirming run. By default it is added when
    /// the project's interpreter has xdist, the baseline took 10 s or more, and the pytest
    /// arguments say nothing about xdist.
    #[arg(long)]
    pub no_xdist: bool,
    /// Print the effective settings (these flags over the configuration file over the
    /// defaults, each with its source) and exit without running anything.
    #[arg(long)]
    pub show_settings: bool,
    #[command(flatten)]
    pub python: PythonArgs,
    #[command(flatten)]
    pub llm: llm::LlmArgs,
    /// Extra arguments for every pytest run (after `--`; they replace the configuration
    /// file's `pytest-args`).
    #[arg(last = true, value_name = "PYTEST_ARGS")]
    pub pytest_args: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct ConfigArgs {
    /// Project root whose configuration is read. Default: found from the current directory
    /// as for `fix`.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print one JSON object (see schema/config.schema.json; short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// `text` (one line per setting) or `json`.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<TextOrJson>,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// Project root whose interrupted run is restored. Default: found from the current
    /// directory as for `fix`.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print one JSON object on stdout (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// `text` or `json`.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<TextOrJson>,
}

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// The log file; `-` or nothing reads standard input.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root that frames are resolved against. Default: found from the current
    /// directory as for `fix`.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print one JSON document (see schema/parse.schema.json) instead of the human view
    /// (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// What to print. `github`: one GitHub Actions `::error` annotation per failure, at its
    /// location.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    crate::trace_times::init();
    // As `Cli::try_parse`, keeping the matches: the declared settings are read from them.
    let parsed = Cli::command().try_get_matches().and_then(|m| {
        let cli = Cli::from_arg_matches(&m).map_err(|e| e.format(&mut Cli::command()))?;
        Ok((cli, m))
    });
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() {
                crate::exit::BAD_INPUT
            } else {
                crate::exit::OK
            };
            // clap renders help/version to stdout and usage errors to stderr itself.
            // (Its print returns write errors instead of panicking.) Help into a pipe goes
            // through stdio so that `--help | head -1` ends as every command does.
            if e.use_stderr() || std::io::stdout().is_terminal() {
                let _ = e.print();
            } else {
                crate::stdio::out(&e.render().to_string());
            }
            // A bad flag next to --json still gets its one object on stdout (every
            // schema is at version 1).
            if e.use_stderr() && asks_for_json(std::env::args_os().skip(1)) {
                let msg = first_error_line(&e.render().to_string());
                crate::stdio::out(&usage_error_json(code, &msg));
            }
            return finish(code);
        }
    };
    let code = match cli.command {
        Command::Parse(args) => parse::run(&args),
        Command::Probe(args) => probe::run(&args, sub_matches(&matches)),
        Command::Rules(args) => rules::run(&args),
        Command::Fix(args) => fix::run(&args, sub_matches(&matches), cli.color),
        Command::Restore(args) => restore::run(&args),
        Command::Config(args) => config::run(&args),
        Command::Mcp => mcp::run(),
        Command::Replay(args) => replay::run(&args),
    };
    finish(code)
}

/// The matches of the subcommand given.
fn sub_matches(matches: &ArgMatches) -> &ArgMatches {
    static NONE: std::sync::OnceLock<ArgMatches> = std::sync::OnceLock::new();
    match matches.subcommand() {
        Some((_, m)) => m,
        None => NONE.get_or_init(ArgMatches::default),
    }
}

/// A command whose reader went away ends with the conventional status (docs/json.md, exit
/// codes), whatever it would have returned: its output was not all read.
fn finish(code: i32) -> i32 {
    if crate::stdio::broken_pipe() {
        crate::exit::BROKEN_PIPE
    } else {
        code
    }
}

/// `--json` or `--output-format json` (or `=json`) among the arguments, before a `--`.
fn asks_for_json(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<_> = args.take_while(|a| a != "--").collect();
    args.iter().enumerate().any(|(i, a)| {
        a == "--json"
            || a == "--output-format=json"
            || (a == "--output-format" && args.get(i + 1).is_some_and(|v| v == "json"))
    })
}

/// The one object of a command line clap refused: `fix`'s is its whole report (as on its
/// every exit), the others' the envelope.
fn usage_error_json(code: i32, msg: &str) -> String {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    // The subcommand: the first word that is neither a flag nor the global `--color`'s value.
    let command = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.to_string_lossy().starts_with('-') && (*i == 0 || args[i - 1] != "--color")
        })
        .map(|(_, a)| a);
    if command.is_some_and(|c| c == "fix") {
        let dry_run = args
            .iter()
            .any(|a| a == "--dry-run" || a == "--no-validate");
        let status = crate::status::FinalStatus::BadInput;
        crate::report::fix::error_json(status, code, msg, None, dry_run, Default::default())
    } else {
        crate::report::envelope::error(1, code, msg)
    }
}

/// clap's `error: ...` line, without the prefix.
fn first_error_line(rendered: &str) -> String {
    let line = crate::traceback::first_line(rendered).trim();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// The LOG argument's bytes: a file, or standard input for `-` (refused when it is a terminal,
/// which would wait forever).
fn read_log(path: &Path) -> Result<Vec<u8>, LogError> {
    if path.as_os_str() != "-" {
        return std::fs::read(path).map_err(|source| LogError::Read {
            path: path.to_path_buf(),
            source,
        });
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(LogError::Terminal);
    }
    let mut buf = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut buf)
        .map_err(LogError::Stdin)?;
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
    crate::stdio::errln(&format!("selfdebug: error: {msg}"));
}

fn parse_worker(s: &str) -> Result<crate::worker::Mode, BadWorker> {
    crate::worker::Mode::parse(s).ok_or_else(|| BadWorker(s.to_string()))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every declared setting's flag is an argument of `fix`, and a whole-number default is the
    /// one its help names (`(default 4)`): the help and the declaration say the same.
    #[test]
    fn fix_takes_every_declared_flag_and_its_help_names_the_default() {
        use crate::config::declared::{Raw, DECLARED, JOBS};
        let cli = super::Cli::command();
        let fix = cli.find_subcommand("fix").unwrap();
        for d in DECLARED {
            // `-- PYTEST_ARGS` is the trailing argument, not a flag; the file-only keys have none.
            let Some(long) = d.flag.strip_prefix("--").filter(|l| !l.starts_with(' ')) else {
                continue;
            };
            let arg = fix
                .get_arguments()
                .find(|a| a.get_long() == Some(long))
                .unwrap_or_else(|| panic!("{} declares {}, which fix lacks", d.key, d.flag));
            if let Raw::Int(n) = (d.default)() {
                let help = arg.get_help().unwrap().to_string();
                assert!(help.contains(&format!("(default {n}")), "{}: {help}", d.key);
            }
        }
        let help = |long: &str| {
            let arg = fix.get_arguments().find(|a| a.get_long() == Some(long));
            arg.unwrap().get_help().unwrap().to_string()
        };
        let jobs = format!("at most {}", crate::config::MAX_DEFAULT_JOBS);
        assert!(help("jobs").contains(&jobs));
        assert!(JOBS.unset.contains(&jobs));
    }
}
