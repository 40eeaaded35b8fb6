//! Running pytest (or any command) with the project's interpreter: interpreter discovery, a
//! timeout that kills the whole process group, output read on threads, and runs that neither
//! read stale bytecode nor leave anything behind in the project.
//!
//! # What every pytest run gets
//!
//! - `-p no:cacheprovider`: no `.pytest_cache` in the project.
//! - `--tb=long -rfE --color=no` and `COLUMNS=200`, `PYTEST_ADDOPTS` removed: output the
//!   [`crate::traceback`] parser reads the same way on every machine. (`CI` is left as the
//!   user's environment has it.) User arguments come after ours, so they win where pytest lets
//!   the last flag win.
//! - `--continue-on-collection-errors`: a test module that fails to import does not keep the
//!   rest of the suite from running, so the baseline knows every other test's outcome.
//! - `PYTHONPYCACHEPREFIX` is always set, so no `__pycache__` is written into the project
//!   and no `.pyc` is *read* from it: with a prefix, CPython (3.8+) looks for bytecode only
//!   under the prefix, never next to the source, and pytest's assertion rewriter does the same
//!   for test modules. This matters because a `.pyc` is trusted when the source's recorded
//!   mtime (whole seconds) and size match: a file rewritten within the same second with the
//!   same size would otherwise run its *old* code. `tests/runner_pytest.rs` proves it with a
//!   real stale `.pyc`. Where the prefix points is [`Bytecode`]:
//!   - [`Bytecode::Cache`] (the default): a private per-user cache shared by runs, so the
//!     stdlib, pytest and the project's dependencies compile once, not per run (measured: a
//!     one-test run takes ~0.4 s instead of ~2 s, far more with big dependencies). The
//!     project's own part of the cache (the mirror of the run's directory, virtualenvs inside
//!     it excepted) is deleted before and after every run, so the project's bytecode is
//!     always compiled from the current source; within one `fix` command it is kept file by
//!     file while the source is provably unchanged ([`crate::bytecode`]).
//!   - [`Bytecode::Fresh`]: a fresh empty temp dir per run plus `PYTHONDONTWRITEBYTECODE=1`;
//!     nothing is cached anywhere, every import compiles from source.
//!
//! # Process handling
//!
//! The child starts in its own process group. On timeout (or when [`install_interrupt_handler`]
//! saw Ctrl-C) the whole group is killed with `SIGKILL`, so subprocesses a test spawned die too.
//! Leftovers of a run that ended normally (a test's forgotten background process) are killed
//! the same way: on Linux the exited leader is kept as a zombie (`waitid(WNOWAIT)`) while the
//! group is killed, so its id cannot have been reused by then.
//!
//! On Linux every child also gets `PR_SET_PDEATHSIG(SIGKILL)`: when selfdebug itself dies
//! (even by SIGKILL, when nothing of ours runs any more) the pytest it started dies with it
//! instead of running on with a candidate or a probe in the file. The signal fires when the
//! *thread* that spawned the child exits; [`run_command`] waits for the child in the thread
//! that spawned it, so that thread always outlives it.
//!
//! # Temp dirs
//!
//! [`TempDir`]s are named `{prefix}-{pid}-{n}-{nanos}`. A run killed with SIGKILL cannot remove
//! its own; [`remove_stale_temp_dirs`] (called when a run starts) removes the `selfdebug-*` ones
//! of ours whose process is gone.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::venv::{self, ToolEnv};

/// Per-run timeout when the user gives none (the original design's 600 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Per-test limit when the user gives none (`--test-timeout`): generous for a unit test, short
/// enough that a hang costs a minute, not the whole run.
pub const DEFAULT_TEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `ensure_pytest` may take (an import, on a cold disk).
const IMPORT_CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// After the child is gone, how long to wait for its pipes to close. A process that escaped the
/// group (its own `setsid`) can hold them open forever; we keep what was read by then.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Output kept per stream; beyond it the oldest half is dropped (the end of a pytest log, with
/// its summary, matters most).
pub(crate) const OUTPUT_CAP: usize = 64 << 20;

/// The arguments every pytest run starts with (see the module docs).
pub const FIXED_PYTEST_ARGS: &[&str] = &[
    "-p",
    "no:cacheprovider",
    "--tb=long",
    "-rfE",
    "--color=no",
    "--continue-on-collection-errors",
];

/// Where the interpreter came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InterpreterSource {
    /// `--python`.
    Explicit,
    /// `$VIRTUAL_ENV/bin/python`.
    VirtualEnv,
    /// `ROOT/.venv/bin/python` or `ROOT/venv/bin/python`.
    ProjectVenv,
    /// `python3` found on `PATH`.
    Path,
}

/// A Python interpreter to run pytest with. `path` is kept as found (a venv's `bin/python`
/// symlink must not be resolved, or Python would not find its `pyvenv.cfg`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Interpreter {
    pub path: PathBuf,
    pub source: InterpreterSource,
}

/// The environment [`find_interpreter_in`] consults (so tests need not mutate the process's).
#[derive(Debug, Clone, Default)]
pub struct InterpreterEnv {
    pub virtual_env: Option<OsString>,
    pub path: Option<OsString>,
    /// The virtualenv the running selfdebug is installed in, if any ([`venv::venv_of_exe`]).
    pub own_venv: Option<PathBuf>,
    /// Where pre-commit keeps its hook environments ([`venv::pre_commit_home`]).
    pub pre_commit_home: Option<PathBuf>,
}

impl InterpreterEnv {
    pub fn from_process() -> InterpreterEnv {
        let var = |name: &str| std::env::var_os(name);
        InterpreterEnv {
            virtual_env: var("VIRTUAL_ENV").filter(|v| !v.is_empty()),
            path: var("PATH"),
            own_venv: std::env::current_exe()
                .ok()
                .and_then(|exe| venv::venv_of_exe(&exe)),
            pre_commit_home: venv::pre_commit_home(
                var("PRE_COMMIT_HOME").as_deref(),
                var("XDG_CACHE_HOME").as_deref(),
                var("HOME").as_deref(),
            ),
        }
    }

    /// `$VIRTUAL_ENV` when it is selfdebug's own environment, not the project's (see
    /// [`crate::venv`]).
    pub fn tool_env(&self) -> Option<ToolEnv> {
        ToolEnv::detect(
            self.virtual_env.as_deref(),
            self.own_venv.as_deref(),
            self.pre_commit_home.as_deref(),
        )
    }
}

/// Why running something failed (before or instead of a result). Displays as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerError {
    /// `--python` names nothing runnable.
    ExplicitNotFound { path: PathBuf },
    /// No interpreter anywhere; `tried` lists the places looked at.
    NotFound { tried: Vec<PathBuf> },
    /// The interpreter runs but cannot import pytest.
    PytestMissing { python: PathBuf, detail: String },
    /// The process could not be started.
    Spawn { program: PathBuf, message: String },
    /// Waiting for the process, or making its temp dir, failed.
    Io { message: String },
    /// Ctrl-C, SIGTERM or SIGHUP arrived (see [`install_interrupt_handler`]); the child was
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
            RunnerError::Spawn { program, message } => {
                write!(f, "cannot run {}: {message}", program.display())
            }
            RunnerError::Io { message } => f.write_str(message),
            RunnerError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for RunnerError {}

/// Finds the interpreter the way the design says: `--python`, else `$VIRTUAL_ENV/bin/python`,
/// else `ROOT/.venv/bin/python`, else `ROOT/venv/bin/python`, else `python3` on `PATH`.
/// `$VIRTUAL_ENV` is passed over when it is selfdebug's own environment (a pre-commit hook's),
/// and so is its `bin/` on `PATH`: see [`crate::venv`].
pub fn find_interpreter(root: &Path, explicit: Option<&Path>) -> Result<Interpreter, RunnerError> {
    find_interpreter_in(root, explicit, &InterpreterEnv::from_process())
}

/// When `$VIRTUAL_ENV` was passed over as selfdebug's own environment, one line saying so and
/// what runs the tests instead (for the report's notes). `None` with `--python`, which
/// decides alone.
pub fn passed_over_note(root: &Path, explicit: Option<&Path>) -> Option<String> {
    if explicit.is_some() {
        return None;
    }
    let env = InterpreterEnv::from_process();
    let tool = env.tool_env()?;
    let instead = match find_interpreter_in(root, None, &env) {
        Ok(i) => format!(
            "pytest runs with {} ({})",
            i.path.display(),
            match i.source {
                InterpreterSource::ProjectVenv => "the project's virtualenv",
                _ => "the first python3 on PATH outside it",
            }
        ),
        Err(_) => "no other interpreter was found".to_string(),
    };
    Some(format!(
        "$VIRTUAL_ENV {} is {}, not the project's: {instead}; --python PATH chooses another",
        tool.path.display(),
        tool.reason
    ))
}

/// [`find_interpreter`] with the environment given explicitly.
pub fn find_interpreter_in(
    root: &Path,
    explicit: Option<&Path>,
    env: &InterpreterEnv,
) -> Result<Interpreter, RunnerError> {
    let tool_env = env.tool_env();
    // pre-commit puts the hook env's `bin/` first on PATH: its pythons are no better.
    let outside = |dir: &Path| tool_env.as_ref().is_none_or(|t| !t.holds(dir));
    if let Some(p) = explicit {
        // A bare name (`--python python3.12`) is looked up on PATH like a shell would.
        let found = if p.components().count() == 1 && !p.is_file() {
            search_path(p.as_os_str(), env.path.as_deref(), outside)
        } else {
            is_executable(p).then(|| p.to_path_buf())
        };
        return match found {
            Some(path) => Ok(Interpreter {
                path,
                source: InterpreterSource::Explicit,
            }),
            None => Err(RunnerError::ExplicitNotFound {
                path: p.to_path_buf(),
            }),
        };
    }
    let mut tried = Vec::new();
    if let Some(venv) = env.virtual_env.as_ref().filter(|_| tool_env.is_none()) {
        let p = Path::new(venv).join("bin").join("python");
        if is_executable(&p) {
            return Ok(Interpreter {
                path: p,
                source: InterpreterSource::VirtualEnv,
            });
        }
        tried.push(p);
    }
    for dir in [".venv", "venv"] {
        let p = root.join(dir).join("bin").join("python");
        if is_executable(&p) {
            return Ok(Interpreter {
                path: p,
                source: InterpreterSource::ProjectVenv,
            });
        }
        tried.push(p);
    }
    match search_path(OsStr::new("python3"), env.path.as_deref(), outside) {
        Some(path) => Ok(Interpreter {
            path,
            source: InterpreterSource::Path,
        }),
        None => {
            tried.push(PathBuf::from("python3 on PATH"));
            Err(RunnerError::NotFound { tried })
        }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first `name` on `path` in a directory `keep` accepts.
fn search_path(
    name: &OsStr,
    path: Option<&OsStr>,
    keep: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|d| !d.as_os_str().is_empty() && keep(d))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Checks that pytest is importable and returns the interpreter behind a launcher, in one
/// Python start: `python3` found on PATH may be a shell shim (pyenv, asdf) that costs a quarter
/// second per start; `sys.executable` is the real program (for a virtualenv, its own
/// `bin/python`, so the environment is the same). The path is kept when Python cannot say.
/// The answer is cached while the interpreter and its `sys.path` are unchanged
/// ([`crate::interpreter_cache`]).
pub fn prepare(python: &Interpreter) -> Result<Interpreter, RunnerError> {
    prepare_with(python, crate::interpreter_cache::default_path().as_deref()).map(|(i, _)| i)
}

/// [`prepare`] with the cache file given (`None`: no cache); the flag says whether the cache
/// answered (no Python was started).
pub fn prepare_with(
    python: &Interpreter,
    cache: Option<&Path>,
) -> Result<(Interpreter, bool), RunnerError> {
    use crate::interpreter_cache::{self as ic, Cache};
    let resolved = |exe: PathBuf| {
        if exe.is_absolute() && exe.is_file() {
            Interpreter {
                path: exe,
                source: python.source,
            }
        } else {
            python.clone()
        }
    };
    let cache = cache.map(|p| Cache::new(p.to_path_buf(), &python.path));
    if let Some(facts) = cache.as_ref().and_then(Cache::lookup) {
        return Ok((resolved(facts.executable), true));
    }
    let before = cache.as_ref().map(Cache::before_check).unwrap_or_default();
    let run = run_python(python, ic::FACTS_CODE)?;
    if run.exit_code != Some(0) {
        // Let the detailed check word the error.
        ensure_pytest(python)?;
    }
    let facts = match &cache {
        Some(c) if run.exit_code == Some(0) => c.store(before, &run.stdout),
        _ => ic::parse(&run.stdout),
    };
    let exe = facts.map(|f| f.executable).unwrap_or_default();
    Ok((resolved(exe), false))
}

/// Runs `python -c CODE` quietly; an interpreter that does not start is "pytest missing" with
/// the reason, since that is what the caller will tell the user.
fn run_python(python: &Interpreter, code: &str) -> Result<CommandRun, RunnerError> {
    let mut cmd = Command::new(&python.path);
    cmd.args(["-c", code]);
    quiet_python_env(&mut cmd);
    run_command(cmd, IMPORT_CHECK_TIMEOUT).map_err(|e| match e {
        RunnerError::Spawn { message, .. } => RunnerError::PytestMissing {
            python: python.path.clone(),
            detail: format!("the interpreter does not start: {message}"),
        },
        other => other,
    })
}

/// Checks that the interpreter can import pytest; returns pytest's version.
pub fn ensure_pytest(python: &Interpreter) -> Result<String, RunnerError> {
    let run = run_python(
        python,
        "import pytest, sys; sys.stdout.write(pytest.__version__)",
    )?;
    if run.exit_code == Some(0) {
        return Ok(String::from_utf8_lossy(&run.stdout).trim().to_string());
    }
    let detail = if run.timed_out {
        "`import pytest` timed out".to_string()
    } else {
        String::from_utf8_lossy(&run.stderr)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("`import pytest` failed")
            .trim()
            .to_string()
    };
    Err(RunnerError::PytestMissing {
        python: python.path.clone(),
        detail,
    })
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Working directory: the project root, or a scratch copy of it.
    pub cwd: PathBuf,
    /// Node ids to run; empty runs the whole suite.
    pub node_ids: Vec<String>,
    /// The user's pytest arguments (after `--`), passed after ours.
    pub extra_args: Vec<String>,
    /// Extra environment (e.g. `PYTHONPATH`, `SELFDEBUG_PROBE_OUT`). The variables this module
    /// enforces (see the module docs) are set after these and win.
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Duration,
    /// The per-test limit of selfdebug's plugin ([`crate::plugin`]): a test still running then
    /// fails where it is stuck. `None`: no per-test limit.
    pub test_timeout: Option<Duration>,
    pub bytecode: Bytecode,
    /// Run under bubblewrap: no network, the file system read-only except the run's
    /// directory and the temp dirs (`--sandbox`; see [`crate::sandbox`]).
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// A pytest run may go to the warm worker ([`crate::worker`]; never under the sandbox).
    pub warm: bool,
}

/// Where runs keep bytecode; see the module docs. Neither ever reads a stale `.pyc` of the
/// project, and neither writes into the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytecode {
    /// A private cache directory shared by runs; the project's part is wiped around each run
    /// (or checked file by file, see [`crate::bytecode`]).
    Cache(PathBuf),
    /// A fresh empty directory per run, and no bytecode written at all.
    Fresh,
}

impl Bytecode {
    /// `$XDG_CACHE_HOME/selfdebug/pycache`, else `$HOME/.cache/selfdebug/pycache`, else
    /// [`Bytecode::Fresh`].
    pub fn default_cache() -> Bytecode {
        match cache_home() {
            Some(b) => Bytecode::Cache(b.join("pycache")),
            None => Bytecode::Fresh,
        }
    }
}

/// The tool's private cache directory: `$XDG_CACHE_HOME/selfdebug`, else
/// `$HOME/.cache/selfdebug` (not created here).
pub fn cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| Path::new(v).is_absolute())
                .map(|h| Path::new(&h).join(".cache"))
        })
        .map(|b| b.join("selfdebug"))
}

impl RunSpec {
    pub fn new(cwd: impl Into<PathBuf>) -> RunSpec {
        RunSpec {
            cwd: cwd.into(),
            node_ids: Vec::new(),
            extra_args: Vec::new(),
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            test_timeout: None,
            bytecode: Bytecode::default_cache(),
            sandbox: None,
            warm: false,
        }
    }
}

/// The outcome of a command that ran (whatever its exit status).
#[derive(Debug, Clone)]
pub struct CommandRun {
    /// `None` when the process was killed by a signal (always so after a timeout).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub duration: Duration,
    pub timed_out: bool,
}

/// The outcome of one pytest run.
#[derive(Debug, Clone)]
pub struct PytestRun {
    /// pytest's exit code: 0 all passed, 1 tests failed, 2 interrupted, 3 internal error,
    /// 4 usage error, 5 nothing collected. `None` when killed (timeout).
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub duration: Duration,
    pub timed_out: bool,
    /// The node ids that were asked for (empty: the whole suite).
    pub node_ids: Vec<String>,
    /// Every argument after `python -m pytest`.
    pub args: Vec<String>,
    /// A test the plugin's backstop found stuck in code that never returned to Python (the
    /// run was ended because of it).
    pub hang: Option<crate::plugin::Hang>,
}

impl PytestRun {
    /// A finished process as a run of the loop: `node_ids` asked for, `args` it was given,
    /// and the stuck test the plugin found, if any.
    pub fn of(
        run: CommandRun,
        node_ids: Vec<String>,
        args: Vec<String>,
        hang: Option<crate::plugin::Hang>,
    ) -> PytestRun {
        PytestRun {
            exit_code: run.exit_code,
            signal: run.signal,
            stdout: run.stdout,
            stderr: run.stderr,
            duration: run.duration,
            timed_out: run.timed_out,
            node_ids,
            args,
            hang,
        }
    }

    /// Everything pytest printed, for [`crate::traceback::parse`]: stdout, then stderr.
    pub fn log(&self) -> Vec<u8> {
        let mut out = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            out.extend_from_slice(&self.stderr);
        }
        out
    }

    /// All selected tests passed.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Runs `python -m pytest` as described in the module docs.
pub fn run_pytest(python: &Interpreter, spec: &RunSpec) -> Result<PytestRun, RunnerError> {
    let mut args: Vec<String> = FIXED_PYTEST_ARGS.iter().map(|s| s.to_string()).collect();
    let plugin = crate::plugin::dir();
    if plugin.is_some() {
        args.extend(["-p".to_string(), crate::plugin::MODULE.to_string()]);
    }
    // A subtest cannot be selected: its owning test runs, and reports the subtest's outcome.
    args.extend(crate::traceback::subtest::selectable(&spec.node_ids));
    args.extend(spec.extra_args.iter().cloned());

    let mut cmd = program_command(&python.path, spec);
    cmd.arg("-m")
        .arg("pytest")
        .args(&args)
        .current_dir(&spec.cwd);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    cmd.env("COLUMNS", "200").env_remove("PYTEST_ADDOPTS");
    let mut hang_dir = None;
    if let Some(dir) = plugin {
        // Ahead of the user's PYTHONPATH; the plugin's directory holds nothing else.
        let user = spec
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PYTHONPATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os("PYTHONPATH"))
            .filter(|v| !v.is_empty());
        let mut path = OsString::from(dir);
        if let Some(u) = user {
            path.push(":");
            path.push(u);
        }
        cmd.env("PYTHONPATH", path);
        match spec.test_timeout {
            Some(limit) => {
                cmd.env(
                    "SELFDEBUG_TEST_TIMEOUT",
                    format!("{:.3}", limit.as_secs_f64()),
                );
                let d = TempDir::new("selfdebug-hang").map_err(|e| RunnerError::Io {
                    message: format!("cannot create a temporary directory: {e}"),
                })?;
                cmd.env("SELFDEBUG_HANG_DIR", d.path());
                hang_dir = Some(d);
            }
            None => {
                cmd.env_remove("SELFDEBUG_TEST_TIMEOUT")
                    .env_remove("SELFDEBUG_HANG_DIR");
            }
        }
    }

    let warm = (spec.warm && spec.sandbox.is_none()).then_some(python.path.as_path());
    let run = run_with_bytecode(cmd, spec, warm)?;
    // Only a run that ended with the dump counts: after a kill at the run's timeout the file
    // of the test that was running holds no stack.
    let hang = hang_dir
        .as_ref()
        .filter(|_| !run.timed_out)
        .and_then(|d| crate::plugin::Hang::read(d.path()));
    Ok(PytestRun::of(run, spec.node_ids.clone(), args, hang))
}

/// Runs `program ARGS` (command mode's judge) from `spec.cwd` with the same environment
/// discipline as pytest runs: bytecode never read from or written into the project, the
/// timeout and process-group handling of [`run_command`], the sandbox when asked for.
/// `spec.node_ids`, `extra_args` and `test_timeout` are pytest's and are not used.
pub fn run_program(
    program: &Path,
    args: &[String],
    spec: &RunSpec,
) -> Result<CommandRun, RunnerError> {
    let mut cmd = program_command(program, spec);
    cmd.args(args).current_dir(&spec.cwd);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    run_with_bytecode(cmd, spec, None)
}

/// `program`, or bubblewrap running it when the spec asks for the sandbox.
fn program_command(program: &Path, spec: &RunSpec) -> Command {
    match &spec.sandbox {
        Some(sb) => sb.command(program, &spec.cwd),
        None => Command::new(program),
    }
}

/// Sets `PYTHONPYCACHEPREFIX` as the module docs say, runs `cmd` (in a child of the warm
/// worker of the interpreter `warm`, when given, else cold), and forgets the project's bytecode
/// again.
fn run_with_bytecode(
    mut cmd: Command,
    spec: &RunSpec,
    warm: Option<&Path>,
) -> Result<CommandRun, RunnerError> {
    // A private cache that cannot be made (or is not private) falls back to a fresh dir.
    let cache = match &spec.bytecode {
        Bytecode::Cache(dir) if private_dir(dir) => Some(dir.clone()),
        _ => None,
    };
    let _fresh_dir;
    match &cache {
        Some(dir) => {
            let _t = crate::trace_times::span("bytecode mirror cleared (before)");
            crate::bytecode::before_run(dir, &spec.cwd);
            // Writing is what makes the cache useful; it goes under the prefix only.
            cmd.env_remove("PYTHONDONTWRITEBYTECODE")
                .env("PYTHONPYCACHEPREFIX", dir);
        }
        None => {
            let d = TempDir::new("selfdebug-pyc").map_err(|e| RunnerError::Io {
                message: format!("cannot create a temporary bytecode directory: {e}"),
            })?;
            quiet_python_env(&mut cmd);
            cmd.env("PYTHONPYCACHEPREFIX", d.path());
            _fresh_dir = d;
        }
    }
    let t = crate::trace_times::span("python process (worker child or cold)");
    let run = match warm {
        Some(python) => crate::worker::run(python, cmd, spec.timeout, |cmd| {
            run_command(cmd, spec.timeout)
        }),
        None => run_command(cmd, spec.timeout),
    };
    drop(t);
    if let Some(dir) = &cache {
        let _t = crate::trace_times::span("bytecode mirror cleared (after)");
        crate::bytecode::after_run(dir, &spec.cwd);
    }
    run
}

/// Creates `dir` (mode 0700) if needed; true when it is a directory owned by us that nobody
/// else can write (a cache others can plant `.pyc` files in would run their code).
pub fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0)
}

/// Writes `path` atomically (a 0600 temp file in its directory, renamed over it) when that
/// directory is private ([`private_dir`]): for the caches, which a failed write only makes
/// slower, so nothing is fsync'd.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    if !private_dir(dir) {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory",
            dir.display()
        )));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// No bytecode written by any Python we start.
fn quiet_python_env(cmd: &mut Command) {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
}

/// Runs a command in its own process group with a timeout; see the module docs. Stdin is
/// closed; stdout and stderr are captured.
pub fn run_command(mut cmd: Command, timeout: Duration) -> Result<CommandRun, RunnerError> {
    use std::os::unix::process::ExitStatusExt;

    if stopped() {
        return Err(RunnerError::Interrupted);
    }
    let program = PathBuf::from(cmd.get_program());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    prepare_child(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| RunnerError::Spawn {
        program: program.clone(),
        message: e.to_string(),
    })?;
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    // process_group(0): the group id is the child's pid.
    let pgid = child.id() as libc::pid_t;

    let mut timed_out = false;
    let mut was_interrupted = false;
    let mut poll = Duration::from_millis(2);
    loop {
        match leader_exited(&mut child, pgid) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                kill_group(pgid);
                let _ = child.wait();
                return Err(RunnerError::Io {
                    message: format!("waiting for {}: {e}", program.display()),
                });
            }
        }
        if stopped() {
            was_interrupted = true;
            break;
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            timed_out = true;
            break;
        }
        std::thread::sleep(poll.min(timeout - elapsed));
        poll = (poll * 2).min(Duration::from_millis(25));
    }
    // Kill the group while the leader is unreaped: on timeout everything, after a normal exit
    // whatever the tests left running.
    kill_group(pgid);
    let status = child.wait().map_err(|e| RunnerError::Io {
        message: format!("waiting for {}: {e}", program.display()),
    })?;
    let duration = start.elapsed();
    let deadline = Instant::now() + PIPE_GRACE;
    let stdout = out.map(|r| r.finish(deadline)).unwrap_or_default();
    let stderr = err.map(|r| r.finish(deadline)).unwrap_or_default();
    if was_interrupted {
        return Err(RunnerError::Interrupted);
    }
    Ok(CommandRun {
        exit_code: if timed_out { None } else { status.code() },
        signal: status.signal(),
        stdout,
        stderr,
        duration,
        timed_out,
    })
}

/// Its own process group, and death with us (see the module docs).
pub(crate) fn prepare_child(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    die_with_parent(cmd);
}

/// Whether the group leader has exited, leaving it waitable (a zombie) on Linux.
#[cfg(target_os = "linux")]
fn leader_exited(_child: &mut Child, pid: libc::pid_t) -> std::io::Result<bool> {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value; waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child; `info` outlives the call.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc == -1 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: si_pid is valid to read for waitid results (0 when nothing changed).
        return Ok(unsafe { info.si_pid() } != 0);
    }
}

/// Elsewhere `try_wait` reaps; the group is still killed right after (a tiny reuse race).
#[cfg(not(target_os = "linux"))]
fn leader_exited(child: &mut Child, _pid: libc::pid_t) -> std::io::Result<bool> {
    child.try_wait().map(|s| s.is_some())
}

/// Makes the child die when we do (see the module docs).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe syscalls.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // We may have died between fork and prctl: then nobody will ever signal this child.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

fn kill_group(pgid: libc::pid_t) {
    // SAFETY: plain syscall; ESRCH (group already empty) is fine to ignore.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

struct Reader {
    buf: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

fn reader(mut pipe: impl Read + Send + 'static) -> Reader {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let (tx, done) = mpsc::channel();
    let shared = Arc::clone(&buf);
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    let mut b = shared.lock().unwrap_or_else(|p| p.into_inner());
                    b.extend_from_slice(&chunk[..n]);
                    if b.len() > OUTPUT_CAP {
                        let cut = b.len() - OUTPUT_CAP / 2;
                        b.drain(..cut);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(());
    });
    Reader { buf, done }
}

impl Reader {
    fn finish(self, deadline: Instant) -> Vec<u8> {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let mut b = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *b)
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT, SIGTERM and SIGHUP set a flag instead of killing the process, so that a run in
/// progress kills its child group and returns [`RunnerError::Interrupted`], and callers get
/// to restore files they changed. For the CLI; a library user may prefer its own handling.
pub fn install_interrupt_handler() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        // A closed terminal or a CI runner going away: restore, like for Ctrl-C.
        libc::signal(libc::SIGHUP, handler as libc::sighandler_t);
    }
}

/// Whether SIGINT/SIGTERM/SIGHUP arrived since [`install_interrupt_handler`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

thread_local! {
    /// The stop flag of the job this thread runs (see [`stop_this_thread_with`]).
    static THREAD_STOP: std::cell::RefCell<Option<Arc<AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes every run this thread starts from now on end (its process group killed, the run
/// returning [`RunnerError::Interrupted`]) as soon as `flag` is set, as Ctrl-C does for all
/// runs: parallel proofs stop the candidates still running once a better-ranked one wins.
pub fn stop_this_thread_with(flag: Arc<AtomicBool>) {
    THREAD_STOP.with(|s| *s.borrow_mut() = Some(flag));
}

/// Ctrl-C, or this thread's job was stopped.
fn stopped() -> bool {
    interrupted()
        || THREAD_STOP.with(|s| {
            s.borrow()
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
        })
}

/// A fresh directory under the system temp dir, removed (with its contents) on drop.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(prefix: &str) -> std::io::Result<TempDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{prefix}-{}-{n}-{nanos:08x}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the [`TempDir`]s (`selfdebug-{prefix}-{pid}-{n}-{nanos}`) in the temp dir that a
/// killed run of ours left: owned by us, a real directory, and whose pid is gone or now belongs
/// to a process that started after the dir was last written (a reused pid). Another live
/// run's dirs are never touched. Returns how many were removed.
pub fn remove_stale_temp_dirs() -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(temp_dir_pid) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid == std::process::id() {
            continue;
        }
        let written = meta.modified().unwrap_or(UNIX_EPOCH);
        if process_since(pid).is_none_or(|started| started > written)
            && std::fs::remove_dir_all(e.path()).is_ok()
        {
            // And its bytecode in the cache (a killed dry run's scratch copy has some).
            if let Bytecode::Cache(cache) = Bytecode::default_cache() {
                crate::bytecode::forget_project(&cache, &e.path());
            }
            removed += 1;
        }
    }
    removed
}

/// The pid in a [`TempDir`] name `selfdebug-{prefix}-{pid}-{n}-{hex nanos}`.
fn temp_dir_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("selfdebug-")?;
    let mut parts = rest.rsplitn(4, '-');
    let nanos = parts.next()?;
    let n = parts.next()?;
    let pid = parts.next()?;
    let prefix = parts.next()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = !prefix.is_empty()
        && digits(n)
        && !nanos.is_empty()
        && nanos.bytes().all(|b| b.is_ascii_hexdigit())
        && digits(pid);
    ok.then(|| pid.parse().ok()).flatten()
}

/// When the process `pid` started (`None`: no such process, or a zombie). A live process whose
/// start time cannot be read counts as started at the epoch, so its dirs are kept.
fn process_since(pid: u32) -> Option<SystemTime> {
    let id = libc::pid_t::try_from(pid).ok().filter(|&p| p > 0)?;
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(id, 0) };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields resume after the command name's last ')': state is field 3, starttime field 22.
    let fields: Vec<&str> = stat
        .rfind(')')
        .map_or("", |i| &stat[i + 1..])
        .split_whitespace()
        .collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    Some(start_time(fields.get(19).copied()).unwrap_or(UNIX_EPOCH))
}

/// Boot time plus the start time in clock ticks. `btime` is truncated to whole seconds, so
/// this is a lower bound: a process is never judged younger than it is (its dirs stay).
fn start_time(ticks: Option<&str>) -> Option<SystemTime> {
    let ticks: u64 = ticks?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
        .ok()
        .filter(|&h| h > 0)?;
    Some(UNIX_EPOCH + Duration::from_secs(btime) + Duration::from_millis(ticks * 1000 / hz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dirs_are_fresh_and_removed() {
        let a = TempDir::new("selfdebug-test").unwrap();
        let b = TempDir::new("selfdebug-test").unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir());
        let p = a.path().to_path_buf();
        std::fs::write(p.join("x"), b"x").unwrap();
        drop(a);
        assert!(!p.exists());
    }

    #[test]
    fn temp_dir_names_carry_the_pid() {
        assert_eq!(temp_dir_pid("selfdebug-probe-4242-0-1a2b3c4d"), Some(4242));
        assert_eq!(temp_dir_pid("selfdebug-scratch-7-12-0"), Some(7));
        let made = TempDir::new("selfdebug-test").unwrap();
        let name = made.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_dir_pid(name), Some(std::process::id()));
        // The per-user dir and the names of other tools are not ours to clean.
        for other in [
            "selfdebug-0",
            "selfdebug-1000",
            "selfdebug-probe-backup",
            "selfdebug-x-12-3-zz",
            "selfdebug--12-3-4",
            "tmp-probe-1-2-3",
        ] {
            assert_eq!(temp_dir_pid(other), None, "{other}");
        }
    }

    #[test]
    fn stale_temp_dirs_of_dead_pids_go_live_ones_stay() {
        let base = std::env::temp_dir();
        let mut gone = Command::new("true").spawn().unwrap();
        let dead = base.join(format!("selfdebug-test-{}-0-0", gone.id()));
        gone.wait().unwrap();
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        // A live process that started before its dir was written may be its creator: kept.
        let mut alive = Command::new("sleep").arg("30").spawn().unwrap();
        let live = base.join(format!("selfdebug-test-{}-0-0", alive.id()));
        std::fs::create_dir_all(&live).unwrap();
        // A live process that started after the dir was last written reuses a dead run's pid.
        let mut reuser = Command::new("sleep").arg("30").spawn().unwrap();
        let reused = base.join(format!("selfdebug-test-{}-0-0", reuser.id()));
        std::fs::create_dir_all(&reused).unwrap();
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(&reused)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        remove_stale_temp_dirs();
        let left = (dead.exists(), live.is_dir(), reused.exists());
        for c in [&mut alive, &mut reuser] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
        let _ = std::fs::remove_dir(&live);
        assert_eq!(left, (false, true, false));
    }

    #[test]
    fn log_joins_streams() {
        let run = PytestRun {
            exit_code: Some(1),
            signal: None,
            stdout: b"out".to_vec(),
            stderr: b"err\n".to_vec(),
            duration: Duration::ZERO,
            timed_out: false,
            node_ids: vec![],
            args: vec![],
            hang: None,
        };
        assert_eq!(run.log(), b"out\nerr\n");
        assert!(!run.passed());
    }
}
