//! Running pytest (or any command) with the project's interpreter: interpreter discovery, and
//! runs that neither read stale bytecode nor leave anything behind in the project, on top of
//! [`crate::process`] (the process group, the timeout, the output).
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
//!   same size would otherwise run its *old* code. `tests/it/runner_pytest.rs` proves it with a
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
//! # Process handling and temp dirs
//!
//! Every run is a [`run_command`] of [`crate::process`]: its own process group, killed whole
//! at the timeout or on Ctrl-C, dying with us; see that module. The runner adds what makes a
//! process a pytest run, and removes what killed runs left ([`remove_stale_temp_dirs`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::bytecode::Bytecode;
use crate::process::{private_dir, run_command, CommandRun, RunnerError, TempDir};
use crate::venv::{self, ToolEnv};

/// Per-run timeout when the user gives none (the original design's 600 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Per-test limit when the user gives none (`--test-timeout`): generous for a unit test, short
/// enough that a hang costs a minute, not the whole run.
pub const DEFAULT_TEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `ensure_pytest` may take (an import, on a cold disk).
const IMPORT_CHECK_TIMEOUT: Duration = Duration::from_secs(120);

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
    // An active virtualenv inside the project first; one left active from another project
    // (outside the root) only after the project's own (see `venv_note`, which says so).
    let active = env.virtual_env.as_deref().filter(|_| tool_env.is_none());
    // The venv's dir decides where it lies (its `bin/python` links out to the base Python).
    let python_of = |v: &OsStr| Path::new(v).join("bin").join("python");
    let (inside, outside_root) = match active {
        Some(v) if absolute_in(Path::new(v), root) => (Some(python_of(v)), None),
        other => (None, other.map(python_of)),
    };
    if let Some(p) = inside {
        if is_executable(&p) {
            return Ok(Interpreter {
                path: p,
                source: InterpreterSource::VirtualEnv,
            });
        }
        tried.push(p);
    }
    if let Some(path) = project_venv(root)? {
        return Ok(Interpreter {
            path,
            source: InterpreterSource::ProjectVenv,
        });
    }
    if let Some(p) = outside_root {
        if is_executable(&p) {
            return Ok(Interpreter {
                path: p,
                source: InterpreterSource::VirtualEnv,
            });
        }
        tried.push(p);
    }
    tried.extend([".venv", "venv"].map(|d| root.join(d).join("bin").join("python")));
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

/// `ROOT/.venv/bin/python`, else `ROOT/venv/bin/python`, when one is there. One that is there
/// but cannot be run by this user (a dangling link, a base interpreter it cannot read, no
/// execute bit) is an error naming it: falling back to another Python would run the tests
/// with the wrong environment in silence.
fn project_venv(root: &Path) -> Result<Option<PathBuf>, RunnerError> {
    for dir in [".venv", "venv"] {
        let p = root.join(dir).join("bin").join("python");
        if std::fs::symlink_metadata(&p).is_err() {
            continue;
        }
        if is_executable(&p) {
            return Ok(Some(p));
        }
        let why = match std::fs::metadata(&p) {
            Err(e) => e.to_string(),
            Ok(_) => "not executable".to_string(),
        };
        return Err(RunnerError::ProjectVenvUnusable { path: p, why });
    }
    Ok(None)
}

/// Whether `path` (made absolute) lies under `root`, symlinks resolved where they can be.
fn absolute_in(path: &Path, root: &Path) -> bool {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    real(path).starts_with(real(root))
}

/// When the project's own virtualenv runs the tests although `$VIRTUAL_ENV` names another one
/// outside the project, one line saying so (for the report's notes); `None` with `--python`.
pub fn venv_note(root: &Path, explicit: Option<&Path>) -> Option<String> {
    if explicit.is_some() {
        return None;
    }
    let env = InterpreterEnv::from_process();
    let active = env
        .virtual_env
        .as_ref()
        .filter(|_| env.tool_env().is_none())?;
    let chosen = find_interpreter_in(root, None, &env).ok()?;
    // One inside the root that cannot run gave way too, but it is not another project's.
    let outside = !absolute_in(Path::new(active), root);
    (outside && chosen.source == InterpreterSource::ProjectVenv).then(|| {
        format!(
            "$VIRTUAL_ENV {} lies outside the project: its own virtualenv {} runs the tests \
             instead; --python PATH chooses another",
            Path::new(active).display(),
            chosen.path.display()
        )
    })
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
    described(python).map(|p| p.interpreter)
}

/// An interpreter [`prepare`]d, with what the check said about it: what the report names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// As found (`.venv/bin/python`), what the report names.
    pub found: Interpreter,
    /// What runs the tests: `sys.executable` behind the found launcher.
    pub interpreter: Interpreter,
    /// `3.11.7`; `None` when Python could not say (a program that prints no facts).
    pub python_version: Option<String>,
    pub pytest_version: Option<String>,
}

/// The interpreter a run used, as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InterpreterInfo {
    /// As found (a virtualenv's `bin/python` is not resolved), not `sys.executable`.
    pub path: String,
    /// `3.11.7`; `None` when the check could not tell.
    pub python_version: Option<String>,
    pub pytest_version: Option<String>,
    /// Where it came from: `explicit` (`--python`), `virtual_env` (`$VIRTUAL_ENV`),
    /// `project_venv` (the root's `.venv`/`venv`) or `path` (`python3` on `PATH`).
    pub source: InterpreterSource,
}

impl InterpreterInfo {
    pub fn of(p: &Prepared) -> Self {
        InterpreterInfo {
            path: p.found.path.to_string_lossy().into_owned(),
            python_version: p.python_version.clone(),
            pytest_version: p.pytest_version.clone(),
            source: p.found.source,
        }
    }

    /// `python 3.11.7 (.venv/bin/python, the project's virtualenv)`, the path relative to
    /// `root` when it lies inside.
    pub fn words(&self, root: &std::path::Path) -> String {
        use InterpreterSource as S;
        let path = std::path::Path::new(&self.path);
        let shown = path.strip_prefix(root).unwrap_or(path).display();
        let from = match self.source {
            S::Explicit => "--python",
            S::VirtualEnv => "$VIRTUAL_ENV",
            S::ProjectVenv => "the project's virtualenv",
            S::Path => "python3 on PATH",
        };
        match &self.python_version {
            Some(v) => format!("python {v} ({shown}, {from})"),
            None => format!("python {shown} ({from})"),
        }
    }
}

/// [`prepare`], keeping the versions the check found.
pub fn described(python: &Interpreter) -> Result<Prepared, RunnerError> {
    let cache = crate::interpreter_cache::default_path();
    let (interpreter, _, facts) = prepare_facts(python, cache.as_deref())?;
    let nonempty = |v: String| (!v.is_empty()).then_some(v);
    Ok(Prepared {
        found: python.clone(),
        interpreter,
        python_version: facts
            .as_ref()
            .and_then(|f| nonempty(f.python_version.clone())),
        pytest_version: facts.and_then(|f| nonempty(f.pytest_version)),
    })
}

/// [`prepare`] with the cache file given (`None`: no cache); the flag says whether the cache
/// answered (no Python was started).
pub fn prepare_with(
    python: &Interpreter,
    cache: Option<&Path>,
) -> Result<(Interpreter, bool), RunnerError> {
    prepare_facts(python, cache).map(|(i, hit, _)| (i, hit))
}

fn prepare_facts(
    python: &Interpreter,
    cache: Option<&Path>,
) -> Result<(Interpreter, bool, Option<crate::interpreter_cache::Facts>), RunnerError> {
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
        return Ok((resolved(facts.executable.clone()), true, Some(facts)));
    }
    let before = cache.as_ref().map(Cache::before_check).unwrap_or_default();
    let run = run_python(python, ic::FACTS_CODE)?;
    let facts = match &cache {
        Some(c) if run.exit_code == Some(0) => c.store(before, &run.stdout),
        _ => ic::parse(&run.stdout),
    };
    // Let the detailed checks word the error: no pytest, or not Python at all (`/bin/echo`
    // exits 0 and prints no facts).
    if run.exit_code != Some(0) {
        ensure_pytest(python)?;
    } else if facts.is_none() {
        ensure_python(python)?;
    }
    let exe = facts
        .as_ref()
        .map(|f| f.executable.clone())
        .unwrap_or_default();
    Ok((resolved(exe), false, facts))
}

/// Runs `python -c CODE` quietly; a program that does not start is no Python interpreter,
/// with the reason.
fn run_python(python: &Interpreter, code: &str) -> Result<CommandRun, RunnerError> {
    let mut cmd = Command::new(&python.path);
    cmd.args(["-c", code]);
    quiet_python_env(&mut cmd);
    run_command(cmd, IMPORT_CHECK_TIMEOUT).map_err(|e| match e {
        RunnerError::Spawn { message, .. } => RunnerError::NotPython {
            python: python.path.clone(),
            detail: format!("it does not start: {message}"),
        },
        other => other,
    })
}

/// What [`ensure_python`] has Python print; anything else is another program.
const PYTHON_MARK: &str = "selfdebug-python";

/// Checks that `python` runs Python code at all (only when a check that needed Python failed:
/// it costs one more start): `--python /bin/false` is named as not Python, not as a Python
/// without pytest.
pub fn ensure_python(python: &Interpreter) -> Result<(), RunnerError> {
    let run = run_python(
        python,
        &format!("import sys; sys.stdout.write('{PYTHON_MARK}')"),
    )?;
    if run.exit_code == Some(0) && run.stdout.starts_with(PYTHON_MARK.as_bytes()) {
        return Ok(());
    }
    Err(RunnerError::NotPython {
        python: python.path.clone(),
        detail: not_python_detail(&run),
    })
}

/// How a program given `-c CODE` showed it is not Python.
fn not_python_detail(run: &CommandRun) -> String {
    let said = |b: &[u8]| {
        let text = String::from_utf8_lossy(b);
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let line: String = line.trim().chars().take(120).collect();
        line
    };
    let what = match (said(&run.stdout), said(&run.stderr)) {
        (o, _) if !o.is_empty() => format!("printed `{o}`"),
        (_, e) if !e.is_empty() => format!("said `{e}`"),
        _ => "printed nothing".to_string(),
    };
    let ended = match (run.timed_out, run.exit_code, run.signal) {
        (true, _, _) => "did not finish".to_string(),
        (_, Some(c), _) => format!("exited with status {c}"),
        (_, None, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".to_string(),
    };
    format!("given Python code with -c, it {ended} and {what}")
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
    // `/bin/false` fails `import pytest` too: say that it is no Python, not that it lacks pytest.
    ensure_python(python)?;
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

/// The outcome of one pytest run.
#[derive(Debug, Clone)]
pub struct PytestRun {
    /// The process: its `exit_code` is pytest's (0 all passed, 1 tests failed, 2 interrupted,
    /// 3 internal error, 4 usage error, 5 nothing collected; `None` when killed by a timeout).
    pub process: CommandRun,
    /// The node ids that were asked for (empty: the whole suite).
    pub node_ids: Vec<String>,
    /// Every argument after `python -m pytest`.
    pub args: Vec<String>,
    /// A test the plugin's backstop found stuck in code that never returned to Python (the
    /// run was ended because of it).
    pub hang: Option<crate::plugin::Hang>,
}

/// A pytest run reads as its process (`run.stdout`, `run.exit_code`): the fields every run
/// of a child has are [`CommandRun`]'s, declared once.
impl std::ops::Deref for PytestRun {
    type Target = CommandRun;

    fn deref(&self) -> &CommandRun {
        &self.process
    }
}

impl std::ops::DerefMut for PytestRun {
    fn deref_mut(&mut self) -> &mut CommandRun {
        &mut self.process
    }
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
            process: run,
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

    let warm = (spec.warm && spec.sandbox.is_none() && !crate::pytest_args::starts_workers(&args))
        .then_some(python.path.as_path());
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

/// No bytecode written by any Python we start.
fn quiet_python_env(cmd: &mut Command) {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
}

/// Removes the temp dirs that killed runs of ours left
/// ([`crate::process::remove_stale_temp_dirs_with`]) and their bytecode in the cache (a killed
/// dry run's scratch copy has some). Returns how many were removed.
pub fn remove_stale_temp_dirs() -> usize {
    crate::process::remove_stale_temp_dirs_with(|dir| {
        if let Bytecode::Cache(cache) = Bytecode::default_cache() {
            crate::bytecode::forget_project(&cache, dir);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_joins_streams() {
        let run = PytestRun {
            process: CommandRun {
                exit_code: Some(1),
                signal: None,
                stdout: b"out".to_vec(),
                stderr: b"err\n".to_vec(),
                duration: Duration::ZERO,
                timed_out: false,
            },
            node_ids: vec![],
            args: vec![],
            hang: None,
        };
        assert_eq!(run.log(), b"out\nerr\n");
        assert!(!run.passed());
    }
}
