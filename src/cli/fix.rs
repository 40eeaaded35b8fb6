//! `selfdebug fix`: prove repairs with pytest.

use std::io::{IsTerminal, Write};

use super::{error, read_log, FixArgs, InputError};
use crate::command::{CommandJudge, OutputChecks};
use crate::config::{Config, Flags, Settings};
use crate::project::ProjectRoot;
use crate::report::fix as report;
use crate::report::format::{output_format, ColorChoice, OutputFormat};
use crate::report::{github, style};
use crate::rules::RuleSet;
use crate::sandbox::Sandbox;
use crate::session::{self, SessionError};
use crate::status::FinalStatus;
use crate::{exit, pytest_args};

pub const EXIT_CODES: &str = "\
Exit codes of `fix`:
  0  pass: pytest ran the selection and every failure has a proven patch (or nothing fails)
  1  fixed, with --exit-non-zero-on-fix: as 0, but there were failures; the tests pass only
     with the patch (kept, or with --dry-run printed)
  2  bad input: unreadable log, bad flags, broken rule file, pytest refused its arguments,
     --module matches no test; nothing was touched
  3  partial: some failures have a proven patch, others not (or hung, or are flaky)
  4  not fixed: no failure could be fixed (no candidate passed, the test hung past
     --test-timeout, or it is flaky; with --cmd also a command that exits 0 but fails an
     output check, which no rule can work on); every touched file was restored
  5  escalated: the failures are environment or dependency problems, not code bugs
  6  error: pytest gave no verdict (internal error, interrupted, killed, unreadable output,
     the suite did not finish in time), or the tool could not work (no interpreter, pytest
     missing, another run holds the lock (a dry run too), a killed run must be restored
     first, the backup dir is not a private dir of yours, --sandbox without a working
     bwrap), or SIGINT/SIGTERM/SIGHUP arrived
     (every touched file was restored first)
  7  no tests: pytest collected no test, so nothing was checked
  8  proposed: --no-validate printed candidates; nothing was proven
141  the reader of stdout or stderr went away (`| head -1`) while the run was still working:
     it stopped as for SIGINT, every touched file restored. A reader that goes away once
     the work is done (`fix | true`) only cuts the report: the exit code is the run's own
     (0, 1, 3, 4, ...) and says whether patches were kept

With --json the JSON object is printed on every one of these exits.";

/// A run that stopped before it had a report: the status, the exit code, the message.
struct Stop {
    status: FinalStatus,
    code: i32,
    message: String,
    /// pytest runs made before the stop, and their ms.
    pytest: (usize, u64),
    /// Another run holds the project's lock: its pid (the JSON's `lock_pid`).
    lock_pid: Option<u32>,
}

impl Stop {
    /// Bad input (exit 2): an error, or the message itself.
    fn bad(message: impl std::fmt::Display) -> Stop {
        Stop {
            status: FinalStatus::BadInput,
            code: exit::BAD_INPUT,
            message: message.to_string(),
            pytest: (0, 0),
            lock_pid: None,
        }
    }
}

impl From<SessionError> for Stop {
    fn from(e: SessionError) -> Stop {
        let pytest = match &e {
            SessionError::NoTests {
                pytest_runs,
                pytest_ms,
                ..
            } => (*pytest_runs, *pytest_ms),
            _ => (0, 0),
        };
        Stop {
            status: e.status(),
            code: e.exit_code(),
            message: e.to_string(),
            pytest,
            lock_pid: e.lock_pid(),
        }
    }
}

pub fn run(args: &FixArgs, matches: &clap::ArgMatches, color: ColorChoice) -> i32 {
    let started = std::time::Instant::now();
    crate::process::install_interrupt_handler();
    let format = output_format(args.json, args.output_format);
    // Progress for the MCP server that started this run (any output format), else only for
    // a person watching: text output with stderr on a terminal.
    if let Some(pipe) = crate::progress::Pipe::from_env() {
        crate::progress::install(Box::new(pipe));
    } else if format == OutputFormat::Text && std::io::stderr().is_terminal() {
        crate::progress::install(Box::new(crate::progress::Terminal::new()));
    }
    let root = ProjectRoot::find(args.root.as_deref());
    let result = root
        .as_ref()
        .map_err(Stop::bad)
        .and_then(|root| run_in(args, matches, root, format, color));
    crate::progress::clear();
    match result {
        Ok(code) => code,
        Err(stop) => {
            error(&stop.message);
            if format == OutputFormat::Github {
                crate::stdio::out(&github::command(
                    "error",
                    &[(
                        "title",
                        Some(format!(
                            "selfdebug: {}",
                            stop.status.as_str().replace('_', " ")
                        )),
                    )],
                    &stop.message,
                ));
            }
            if format == OutputFormat::Json || args.json_file.is_some() {
                let root = root
                    .as_ref()
                    .ok()
                    .map(|r| r.path().to_string_lossy().into_owned());
                let json = report::error_json(
                    stop.status,
                    stop.code,
                    &stop.message,
                    root.as_deref(),
                    args.dry_run || args.no_validate,
                    report::Spent {
                        pytest_runs: stop.pytest.0,
                        pytest_ms: stop.pytest.1,
                        duration_ms: started.elapsed().as_millis() as u64,
                    },
                    stop.lock_pid,
                );
                if format == OutputFormat::Json {
                    crate::stdio::out(&json);
                }
                write_json_file(args, &json);
            }
            stop.code
        }
    }
}

/// The command line's values: each declared setting a flag gives (the file or the default
/// decides the others), and what only a command line says.
fn flags(
    args: &FixArgs,
    matches: &clap::ArgMatches,
    root: &ProjectRoot,
    cwd: &std::path::Path,
) -> Flags {
    let mut flags = Flags {
        test: args.test.clone(),
        dry_run: args.dry_run,
        no_validate: args.no_validate,
        ..Flags::default()
    };
    super::given::read("fix", matches, &mut flags);
    // Typed relative to where the user is; pytest runs in the root.
    flags.given(
        &crate::config::declared::PYTEST_ARGS,
        (!args.pytest_args.is_empty()).then(|| root.rebase_args(&args.pytest_args, cwd)),
    );
    args.llm.given(&mut flags);
    flags
}

/// The configuration file, the rules it selects from and the flags, merged (bad input: exit 2).
/// The rules are loaded once per command and come back with the selection applied.
pub fn settings(root: &ProjectRoot, flags: &Flags) -> Result<(Settings, RuleSet), InputError> {
    let config = Config::load(root.path())?;
    let mut rules = RuleSet::load(root.path())?;
    // Config sits below the engines: the ids its selectors may name are handed to it.
    let selectable: Vec<String> = rules
        .rules()
        .iter()
        .map(|r| r.id.clone())
        .chain(crate::search::rule_ids())
        .collect();
    let settings = Settings::resolve(root, &config, flags, &selectable)?;
    rules.retain(|r| settings.selection.enabled(&r.id));
    Ok((settings, rules))
}

/// `SELFDEBUG_JOBS`, as `--jobs` (a flag given wins); set but not a whole number ≥ 1 is bad
/// input, as `--jobs 0` is.
fn jobs_from_env() -> Result<Option<u64>, InputError> {
    let Some(v) = std::env::var_os("SELFDEBUG_JOBS") else {
        return Ok(None);
    };
    let text = v.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(InputError::JobsEnv(text.into_owned())),
    }
}

/// `SELFDEBUG_WORKER`, as `--worker` (a flag given wins); set but neither auto nor off is bad
/// input.
fn worker_from_env() -> Result<Option<crate::worker::Mode>, InputError> {
    let Some(v) = std::env::var_os("SELFDEBUG_WORKER") else {
        return Ok(None);
    };
    let text = v.to_string_lossy();
    crate::worker::Mode::parse(&text)
        .map(Some)
        .ok_or_else(|| InputError::WorkerEnv(text.into_owned()))
}

fn run_in(
    args: &FixArgs,
    matches: &clap::ArgMatches,
    root: &ProjectRoot,
    format: OutputFormat,
    color: ColorChoice,
) -> Result<i32, Stop> {
    let dry_run = args.dry_run || args.no_validate;
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.path().to_path_buf());
    let mut flags = flags(args, matches, root, &cwd);
    use crate::config::declared::{JOBS, WORKER, WORKER_KEEPALIVE};
    if flags.given.get(&JOBS).is_none() {
        if let Some(n) = jobs_from_env().map_err(Stop::bad)? {
            flags.set_by(&JOBS, Some(n), "SELFDEBUG_JOBS");
        }
    }
    if flags.given.get(&WORKER).is_none() {
        if let Some(mode) = worker_from_env().map_err(Stop::bad)? {
            flags.set_by(&WORKER, mode, "SELFDEBUG_WORKER");
        }
    }
    if flags.given.get(&WORKER_KEEPALIVE).is_none() {
        if let Some(v) = std::env::var_os("SELFDEBUG_WORKER_KEEPALIVE") {
            let text = v.to_string_lossy();
            let d = crate::worker::parse_keepalive(&text)
                .ok_or_else(|| Stop::bad(InputError::KeepAliveEnv(text.into_owned())))?;
            flags.set_by(&WORKER_KEEPALIVE, d, "SELFDEBUG_WORKER_KEEPALIVE");
        }
    }
    let t = crate::trace_times::span("settings read");
    let (mut settings, rules) = settings(root, &flags).map_err(Stop::bad)?;
    drop(t);
    if args.show_settings {
        crate::stdio::out(&if format == OutputFormat::Json {
            crate::report::config::json(&settings, exit::OK)
        } else {
            crate::report::config::human(&settings)
        });
        return Ok(exit::OK);
    }
    let t = crate::trace_times::span("pending journal checked");
    if !dry_run {
        if let Some(msg) = session::pending_journal(root) {
            return Err(Stop {
                status: FinalStatus::Error,
                code: exit::ENVIRONMENT,
                message: msg,
                pytest: (0, 0),
                lock_pid: None,
            });
        }
    }
    settings.log = args
        .log
        .as_deref()
        .map(read_log)
        .transpose()
        .map_err(Stop::bad)?;
    if settings.max_attempts == 0 {
        return Err(Stop::bad("--max-attempts must be at least 1"));
    }
    drop(t);
    let t = crate::trace_times::span("judge, pytest arguments, interpreter note");
    (settings.judge, settings.sandbox) = judge_options(args, &settings, dry_run)?;
    let (pytest_args, mut notes) = pytest_args::check(&settings.pytest_args).map_err(Stop::bad)?;
    // Inside a pre-commit hook's environment: say which interpreter runs the tests instead.
    notes.extend(crate::runner::passed_over_note(
        root.path(),
        settings.python.as_deref(),
    ));
    notes.extend(crate::runner::venv_note(
        root.path(),
        settings.python.as_deref(),
    ));
    (settings.pytest_args, settings.notes) = (pytest_args, notes);
    drop(t);
    // The interpreter is checked here (once: the session takes it) so the first line names it;
    // one that cannot run is left to the session, which words the error.
    settings.prepared = session::prepared(root.path(), &settings).ok().flatten();
    if format != OutputFormat::Json {
        let python = settings.prepared.as_ref().map_or(String::new(), |p| {
            format!("; {}", session::InterpreterInfo::of(p).words(root.path()))
        });
        match &settings.file {
            Some(f) => crate::stdio::errln(&format!(
                "selfdebug: {}; config: {}{python}",
                root.describe(),
                f.name
            )),
            None => crate::stdio::errln(&format!("selfdebug: {}{python}", root.describe())),
        }
    }
    // The warm workers end with the run (their temp dirs too), however it ends.
    let _workers = crate::worker::Shutdown;
    crate::worker::keep_alive(settings.worker_keepalive);
    // The project's bytecode is compiled once per command, not once per run (and forgotten
    // when the command ends).
    let _bytecode = match crate::bytecode::Bytecode::default_cache() {
        crate::bytecode::Bytecode::Cache(dir) => Some(crate::bytecode::KeepBetweenRuns::new(&dir)),
        crate::bytecode::Bytecode::Fresh => None,
    };
    let report = if dry_run {
        session::dry_run(&settings, &rules)?
    } else {
        session::fix(&settings, &rules)?
    };
    // The work is done: from here a reader that goes away cuts the report, and the exit code
    // still says what happened to the tree (0 or 3 with patches kept, 4 with none).
    crate::stdio::settle();
    crate::progress::clear();
    let mut code = report::final_status(&report).exit_code();
    if args.exit_non_zero_on_fix && code == exit::OK && !report.patches.is_empty() {
        code = exit::FIXED;
    }
    let log = report::human_log(&report);
    // Colour is for the text view only: next to JSON or annotations the log stays plain.
    let text = format == OutputFormat::Text;
    if text && color.enabled(std::io::stderr().is_terminal()) {
        crate::stdio::err(&style::paint_log(&log));
    } else {
        crate::stdio::err(&log);
    }
    if let Some(path) = &settings.audit_log {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(report::audit_lines(&report).as_bytes()));
        if let Err(e) = written {
            error(format!(
                "cannot append to the audit log {}: {e}",
                path.display()
            ));
        }
    }
    if args.json_file.is_some() {
        write_json_file(args, &report::json_exiting(&report, code));
    }
    match format {
        OutputFormat::Json => crate::stdio::out(&report::json_exiting(&report, code)),
        OutputFormat::Github => {
            crate::stdio::out(&github::fix(&report, &github::repo_prefix(root.path())))
        }
        OutputFormat::Text => {
            // The patch on stdout: what was applied, or in a dry run what would be.
            // The file's own bytes (a latin-1 file's patch is latin-1), so `git apply` takes
            // it; coloured only for a terminal (or --color always), never into a pipe.
            let paint = color.enabled(std::io::stdout().is_terminal());
            for p in &report.patches {
                let bytes = crate::edit::diff_bytes(&p.diff, p.diff_encoding);
                let bytes = if paint {
                    style::paint_diff(&bytes)
                } else {
                    bytes
                };
                crate::stdio::out_bytes(&bytes);
            }
        }
    }
    Ok(code)
}

/// `--json-file FILE`: the JSON object `--json` prints, whatever goes to stdout (the GitHub
/// Action reads it while the annotations go to the log). A file that cannot be written is an
/// error on stderr; the run's exit code stands.
fn write_json_file(args: &FixArgs, json: &str) {
    if let Some(path) = &args.json_file {
        if let Err(e) = std::fs::write(path, json) {
            error(format!("cannot write --json-file {}: {e}", path.display()));
        }
    }
}

/// `--cmd` with its output checks, and `--sandbox`: checked before anything runs.
fn judge_options(
    args: &FixArgs,
    settings: &Settings,
    dry_run: bool,
) -> Result<(Option<CommandJudge>, Option<Sandbox>), Stop> {
    if settings.install_missing && dry_run {
        return Err(Stop::bad(
            "--install-missing changes the interpreter's packages; a dry run changes nothing",
        ));
    }
    let judge = match &args.command {
        None => None,
        Some(line) => {
            let clash = [
                (args.log.is_some(), "a LOG"),
                (args.test.is_some(), "--module"),
                (!args.pytest_args.is_empty(), "pytest arguments"),
                (args.no_validate, "--no-validate"),
            ];
            if let Some((_, what)) = clash.iter().find(|(c, _)| *c) {
                return Err(Stop::bad(format!(
                    "--cmd runs a command instead of pytest: it takes no {what}"
                )));
            }
            let expect_stdout = match &args.expect_stdout {
                Some(p) => Some((
                    p.clone(),
                    std::fs::read(p)
                        .map_err(|e| Stop::bad(format!("--expect-stdout {}: {e}", p.display())))?,
                )),
                None => None,
            };
            let stdout_regex = match &args.expect_stdout_regex {
                Some(r) => Some(
                    regex::bytes::Regex::new(r)
                        .map_err(|e| Stop::bad(format!("--expect-stdout-regex: {e}")))?,
                ),
                None => None,
            };
            let checks = OutputChecks {
                expect_stdout,
                stdout_regex,
                stderr_empty: args.stderr_empty,
            };
            Some(CommandJudge::new(line, checks).map_err(Stop::bad)?)
        }
    };
    let sandbox = if settings.sandbox_asked {
        Some(Sandbox::find().map_err(|e| Stop {
            status: FinalStatus::Error,
            code: exit::ENVIRONMENT,
            message: e.to_string(),
            pytest: (0, 0),
            lock_pid: None,
        })?)
    } else {
        None
    };
    Ok((judge, sandbox))
}
