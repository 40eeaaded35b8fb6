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
use error::{BadKeepAlive, BadWorker, InputError, LogError};

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
    // Its place in each command's `--help` is this number among the command's options: the
    // one it had before `replay` was added (clap numbers subcommands and arguments together).
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto,
          display_order = 7)]
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
    /// `--python`, `--timeout`: declared in `config::declared`, with their help.
    #[command(flatten)]
    pub settings: given::ProbeFlags,
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
    /// Change nothing: validate candidates in a scratch copy and print the patch as a diff.
    /// Refused (exit 6, naming its pid) while a real run works on the project: its files may
    /// hold a probe or an unproven candidate.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the top candidate of each failure in LOG without running anything (implies
    /// --dry-run; nothing is proven, so the status is `proposed`, exit 8).
    #[arg(long)]
    pub no_validate: bool,
    /// Exit 1 instead of 0 when there was something to fix and every failure has a proven
    /// patch (kept, or with --dry-run printed): the tests pass only with the patch. For a check
    /// that must fail on broken code (pre-commit's `selfdebug-check` hook), as Ruff's flag.
    #[arg(long)]
    pub exit_non_zero_on_fix: bool,
    /// Accepted for compatibility; unsafe rules are tried by default now.
    #[arg(long, hide = true)]
    pub unsafe_fixes: bool,
    /// Print one JSON object on stdout (short for `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// What to print on stdout. `github`: an `::error` annotation per failure not fixed, a
    /// `::notice` per kept safe fix and a `::warning` per kept unsafe one, each at the lines it
    /// changed (see docs/github-annotations.md).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Also write the JSON object `--json` prints to FILE, whatever the output format, also
    /// on a usage error (`bad_input`) (the GitHub Action reads it there while the
    /// annotations go to stdout).
    #[arg(long, value_name = "FILE")]
    pub json_file: Option<PathBuf>,
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
    /// Print the effective settings (these flags over the configuration file over the
    /// defaults, each with its source) and exit without running anything.
    #[arg(long)]
    pub show_settings: bool,
    #[command(flatten)]
    pub llm: llm::LlmArgs,
    /// Extra arguments for every pytest run (after `--`; they replace the configuration
    /// file's `pytest-args`).
    #[arg(last = true, value_name = "PYTEST_ARGS")]
    pub pytest_args: Vec<String>,
    /// The flags of the declared settings (`--max-attempts`, `--safe-only`, ...), with their
    /// help, from `config::declared`; each shows where its declaration places it.
    #[command(flatten)]
    pub settings: given::FixFlags,
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
            // `fix --json-file FILE` gets the same object (the GitHub Action reads it there).
            if e.use_stderr() {
                if let Some(path) = json_file_arg(std::env::args_os().skip(1)) {
                    let msg = first_error_line(&e.render().to_string());
                    if let Err(err) = std::fs::write(&path, usage_error_json(code, &msg)) {
                        error(format!(
                            "cannot write --json-file {}: {err}",
                            path.display()
                        ));
                    }
                }
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
/// codes), whatever it would have returned, unless its outcome was settled before (a `fix`
/// printing its report): its output was not all read.
fn finish(code: i32) -> i32 {
    crate::stdio::exit_code(code)
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

/// The subcommand: the first word that is neither a flag nor the global `--color`'s value.
fn subcommand(args: &[std::ffi::OsString]) -> Option<&std::ffi::OsString> {
    args.iter()
        .enumerate()
        .find(|(i, a)| {
            !a.to_string_lossy().starts_with('-') && (*i == 0 || args[i - 1] != "--color")
        })
        .map(|(_, a)| a)
}

/// `fix --json-file FILE` (or `=FILE`) among the arguments, before a `--`, on a command
/// line clap refused: where that object goes too. Other commands have no such flag.
fn json_file_arg(args: impl Iterator<Item = std::ffi::OsString>) -> Option<PathBuf> {
    let args: Vec<_> = args.take_while(|a| a != "--").collect();
    if subcommand(&args).is_none_or(|c| c != "fix") {
        return None;
    }
    args.iter().enumerate().find_map(|(i, a)| {
        let a = a.to_str()?;
        if let Some(v) = a.strip_prefix("--json-file=") {
            return (!v.is_empty()).then(|| PathBuf::from(v));
        }
        let value = args.get(i + 1)?;
        (a == "--json-file" && !value.to_string_lossy().starts_with('-'))
            .then(|| PathBuf::from(value))
    })
}

/// The one object of a command line clap refused: `fix`'s is its whole report (as on its
/// every exit), the others' the envelope.
fn usage_error_json(code: i32, msg: &str) -> String {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let command = subcommand(&args);
    if command.is_some_and(|c| c == "fix") {
        let dry_run = args
            .iter()
            .any(|a| a == "--dry-run" || a == "--no-validate");
        let status = crate::status::FinalStatus::BadInput;
        crate::report::fix::error_json(status, code, msg, None, dry_run, Default::default(), None)
    } else if command.is_some_and(|c| c == "restore") {
        // `restore` always prints its whole report (docs/json.md): empty, with the error.
        crate::report::restore::json_bad_input(msg, code)
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

fn parse_keepalive(s: &str) -> Result<std::time::Duration, BadKeepAlive> {
    crate::worker::parse_keepalive(s).ok_or_else(|| BadKeepAlive(s.to_string()))
}

fn parse_worker(s: &str) -> Result<crate::worker::Mode, BadWorker> {
    crate::worker::Mode::parse(s).ok_or_else(|| BadWorker(s.to_string()))
}

#[cfg(test)]
mod tests {
    /// Where a refused `fix` command line's report goes: `--json-file`'s value, before `--`.
    #[test]
    fn json_file_arg_is_fix_s_value_before_the_separator() {
        let of = |args: &[&str]| super::json_file_arg(args.iter().map(|a| a.into()));
        let path = |p: &str| Some(std::path::PathBuf::from(p));
        assert_eq!(
            of(&["fix", "--bad", "--json-file", "r.json"]),
            path("r.json")
        );
        assert_eq!(
            of(&["--color", "never", "fix", "--json-file=r.json"]),
            path("r.json")
        );
        assert_eq!(of(&["fix", "--json-file", "--bad"]), None);
        assert_eq!(of(&["fix", "--", "--json-file", "r.json"]), None);
        assert_eq!(of(&["replay", "--json-file", "r.json"]), None);
    }

    use clap::CommandFactory;

    /// Every declared setting's flag is an argument of `fix` (and of `probe` where declared),
    /// built from its declaration, and a whole-number default is the one its help names
    /// (`(default 4)`): the help and the declaration say the same.
    #[test]
    fn fix_takes_every_declared_flag_and_its_help_names_the_default() {
        use crate::config::declared::{Raw, DECLARED, JOBS};
        let cli = super::Cli::command();
        let fix = cli.find_subcommand("fix").unwrap();
        let probe = cli.find_subcommand("probe").unwrap();
        let arg_of = |cmd: &clap::Command, long: &str| {
            cmd.get_arguments()
                .find(|a| a.get_long() == Some(long))
                .map(|a| a.get_help().unwrap().to_string())
        };
        for d in DECLARED {
            // `-- PYTEST_ARGS` is the trailing argument, not a flag; the file-only keys have none.
            let Some(long) = d.flag.strip_prefix("--").filter(|l| !l.starts_with(' ')) else {
                assert!(d.help.is_none(), "{} has help but no flag", d.key);
                continue;
            };
            let declared = d
                .help
                .unwrap_or_else(|| panic!("{}: a flag without help", d.key));
            let help = arg_of(fix, long)
                .unwrap_or_else(|| panic!("{} declares {}, which fix lacks", d.key, d.flag));
            assert_eq!(help, declared.text, "{}", d.key);
            assert_eq!(
                arg_of(probe, long).is_some(),
                declared.probe_after.is_some(),
                "{}: probe",
                d.key
            );
            match (d.default)() {
                // Zero seconds of keep-alive is `off`.
                Raw::Int(0) if d.kind == crate::config::Kind::KeepAlive => {
                    assert!(help.contains("(default `off`"), "{}: {help}", d.key)
                }
                Raw::Int(n) => {
                    assert!(help.contains(&format!("(default {n}")), "{}: {help}", d.key)
                }
                _ => {}
            }
        }
        let jobs = format!("at most {}", crate::config::MAX_DEFAULT_JOBS);
        assert!(arg_of(fix, "jobs").unwrap().contains(&jobs));
        assert!(JOBS.unset.contains(&jobs));
    }

    /// The options of `fix` are numbered in one run without gaps: every declared flag found
    /// the flag it follows (`--help` lists them in this order; `--color` is numbered by `Cli`).
    #[test]
    fn fix_lists_its_options_in_one_order() {
        let cli = super::Cli::command();
        for name in ["fix", "probe"] {
            let cmd = cli.find_subcommand(name).unwrap();
            let mut orders: Vec<usize> = cmd
                .get_arguments()
                .filter(|a| a.get_long().is_some())
                .map(|a| a.get_display_order())
                .collect();
            orders.sort_unstable();
            assert_eq!(orders, (0..orders.len()).collect::<Vec<_>>(), "{name}");
        }
    }
}
