//! The warm pytest worker: one Python process per interpreter that imports pytest and the
//! plugins pytest would load once, then forks a child per run (`_selfdebug_worker.py`, embedded
//! in the binary). A run then costs pytest's collection and the tests, not the interpreter's
//! start and pytest's imports.
//!
//! # Same verdict as a cold run
//!
//! The child takes the run's environment, working directory and arguments and runs pytest as
//! `python -m pytest` would: `sys.path` is rebuilt (the run's directory, its `PYTHONPATH`, then
//! the interpreter's own path), `PYTHONPYCACHEPREFIX`/`PYTHONDONTWRITEBYTECODE` are applied to
//! `sys`, import caches are dropped, selfdebug's own plugins are re-imported (they read their
//! settings from the environment). The entry-point plugins are loaded in the server by one
//! `pytest --collect-only` of an empty directory, so pytest's assertion rewriter imports them
//! there as it would in every run, and a child neither re-imports them nor warns
//! (docs/worker.md, "What the worker holds"). The server never imports project code: it starts in its own
//! private directory, and a run whose directory holds a module of the project that the server
//! has loaded (a plugin entry point that imports the project) is refused. A module of an
//! environment that lives in the project (`.venv/`, `venv/`, `.tox/`, `.nox/`, a site-packages,
//! any directory with a `pyvenv.cfg`) is not the project's: in-project virtualenvs are served
//! (docs/worker.md). Bytecode is handled by [`crate::runner`] exactly as for a cold run, so the
//! stale-bytecode rule holds.
//!
//! # When a run goes cold instead (said in the report's notes)
//!
//! The server refuses to start, before it imports pytest (Python older than 3.8, pytest older
//! than 3.10, a `pytest11` entry point whose module is a file of the project: it is given the
//! project root); it refuses a run (no `fork`, a plugin changed `sys.path` while preloading,
//! project code loaded, a `PYTHON*` variable that Python reads only at startup differs, a module
//! in the run's directory or `PYTHONPATH` has the name of one the server holds); the
//! interpreter or its environment's `sys.path` directories changed since the server started (a
//! `pip install`: the server is replaced; a project directory on the path, an editable
//! install's, is not watched); the server died (restarted for the next run, [`MAX_STARTS`] times at most); a
//! child ended with pytest's internal error or a signal we did not send and a cold run of the
//! same spec disagreed (a plugin that misbehaves after fork: the worker is off for the rest of
//! the process); the sandbox is on (bubblewrap wraps a process, not a fork); the run starts
//! pytest-xdist workers (xdist hands them the `sys.path` it froze in the server, where the
//! project is not on it: [`crate::pytest_args::starts_workers`]).
//!
//! # Process handling
//!
//! Each child is its own process group; the server reports its pid, so the timeout and Ctrl-C
//! kill the group exactly as for a cold run, and the server survives. After a child exits, the
//! server kills what it left in its group before reaping it. Children die with the server
//! (`PR_SET_PDEATHSIG`), the server dies when its stdin closes (this process is gone), and the
//! server is started from a thread that lives as long as it does, so its own death signal
//! fires only when this process dies. Concurrent runs are served by concurrent children.
//!
//! # Kept alive (`worker-keepalive`, module `keep`)
//!
//! With a keep-alive, the server outlives this process: it is started in a session of its own
//! without a death signal, shared by later processes on the same project and interpreter
//! through a private directory, replaced when what it was started with changed, and it exits
//! after the keep-alive without a run. While none is ready, runs are cold and one is started
//! in the background (a run never waits for it). A run's child still dies with its group on a
//! timeout or Ctrl-C, and when the process that asked for it dies (its connection closes).

mod keep;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::bytecode::Bytecode;
use crate::process::{CommandRun, RunnerError, TempDir};

/// A keep-alive (`worker-keepalive`, `--worker-keepalive`): `10m`, `90s`, `1h`, a number of
/// seconds, or `off`/`0` (servers end with the process); `None` when it is none of these.
pub fn parse_keepalive(s: &str) -> Option<Duration> {
    let s = s.trim().to_ascii_lowercase();
    if matches!(s.as_str(), "off" | "false" | "no") {
        return Some(Duration::ZERO);
    }
    let (n, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s.as_str(), "s"),
    };
    let n: u64 = n.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        _ => return None,
    };
    Some(Duration::from_secs(secs))
}

/// The server's source.
pub const SOURCE: &str = include_str!("_selfdebug_worker.py");

/// How many servers one interpreter may start in one process (the first and restarts).
pub const MAX_STARTS: usize = 3;

/// How long the server may take to import pytest and the plugins.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// After a kill, how long to wait for the server's report that the child is gone.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// `--worker auto|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Use the worker where it can serve, cold runs elsewhere.
    #[default]
    Auto,
    /// Every run cold.
    Off,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "on" | "1" | "true" => Some(Mode::Auto),
            "off" | "0" | "false" => Some(Mode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Off => "off",
        }
    }
}

/// Seconds a kept-alive server waits for a run before it exits; 0: servers end with this
/// process (see [`keep_alive`]).
static KEEP_SECS: AtomicU64 = AtomicU64::new(0);

/// `worker-keepalive`: from now on, servers are kept alive for `idle` after their last run and
/// shared with later selfdebug processes on the same project and interpreter (module `keep`);
/// `Duration::ZERO`: servers end with this process.
pub fn keep_alive(idle: Duration) {
    // Linux only: a kept server is recognised by its command line in /proc before it is
    // replaced, and its runs die with it through PR_SET_PDEATHSIG.
    let secs = if cfg!(target_os = "linux") {
        idle.as_secs()
    } else {
        0
    };
    KEEP_SECS.store(secs, Ordering::SeqCst);
}

fn keep_secs() -> u64 {
    KEEP_SECS.load(Ordering::SeqCst)
}

/// The project root a kept-alive server is keyed and stamped by (set by [`prewarm`]): a run's
/// own directory may be a dry run's scratch copy, different in every process, whose key would
/// start a server no later call finds (and leave it running for its whole keep-alive).
static KEEP_ROOT: Mutex<Option<PathBuf>> = Mutex::new(None);

fn keep_root(run_dir: &Path) -> PathBuf {
    KEEP_ROOT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_else(|| run_dir.to_path_buf())
}

/// The directory of the kept-alive server for (`root`, `python`) (for tests and diagnostics).
pub fn kept_dir(root: &Path, python: &Path) -> PathBuf {
    keep::server_dir(&real(root), python)
}

/// A running server.
struct Server {
    pid: libc::pid_t,
    socket: PathBuf,
    /// Kept alive: it outlives this process and is not ours to stop.
    kept: bool,
    /// Closing it tells a server of this process to exit.
    _stdin: Option<ChildStdin>,
    /// Set by the thread that waits for the server when it exits (a server this process
    /// started).
    dead: Arc<std::sync::atomic::AtomicBool>,
    /// Told by that thread once the server is reaped.
    reaped: Mutex<mpsc::Receiver<()>>,
    /// The interpreter and its path directories as they were at the start.
    stamp: Vec<(PathBuf, Option<SystemTime>)>,
    _dir: Option<TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        // SAFETY: plain syscall on the server's own group (its pid); ESRCH is fine.
        unsafe {
            libc::killpg(self.pid, libc::SIGKILL);
        }
        // Gone before the run ends (a Ctrl-C included): nothing of the run outlives it. A
        // kill is not instant, and the waiting thread reaps the server.
        let reaped = self.reaped.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = reaped.recv_timeout(KILL_GRACE);
    }
}

enum Slot {
    Live(Arc<Server>),
    /// Not used again in this process, for this reason.
    Off,
}

#[derive(Default)]
struct Pool {
    slots: HashMap<PathBuf, Slot>,
    starts: HashMap<PathBuf, usize>,
    /// Interpreters whose kept-alive server is being started in the background.
    starting: HashSet<PathBuf>,
    /// Interpreters for which the keep-alive was refused (a directory not private): their
    /// servers are this process's own.
    unkept: HashSet<PathBuf>,
}

fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(Mutex::default)
}

fn notes() -> &'static Mutex<Vec<String>> {
    static NOTES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    NOTES.get_or_init(Mutex::default)
}

fn note(s: String) {
    let mut n = notes().lock().unwrap_or_else(|p| p.into_inner());
    if !n.contains(&s) {
        n.push(s);
    }
}

/// The notes about runs that went cold since the last call (for the report).
pub fn take_notes() -> Vec<String> {
    std::mem::take(&mut *notes().lock().unwrap_or_else(|p| p.into_inner()))
}

/// Microseconds servers took to start, and microseconds runs waited for a server (its start,
/// when a run came before the server was ready): Python processes' time that is no run's.
static START_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static WAITING: Mutex<Waiting> = Mutex::new(Waiting {
    runs: 0,
    since: None,
    total: Duration::ZERO,
});

/// The wall time during which at least one run waited for a server: with `--jobs N` runs
/// wait side by side, and their waits summed would count the same start N times.
struct Waiting {
    runs: usize,
    since: Option<Instant>,
    total: Duration,
}

/// One run's wait for a server, from its creation to its drop.
struct Wait(&'static Mutex<Waiting>);

impl Wait {
    fn start(on: &'static Mutex<Waiting>) -> Wait {
        let mut w = on.lock().unwrap_or_else(|p| p.into_inner());
        if w.runs == 0 {
            w.since = Some(Instant::now());
        }
        w.runs += 1;
        Wait(on)
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.runs -= 1;
        if w.runs == 0 {
            if let Some(since) = w.since.take() {
                w.total += since.elapsed();
            }
        }
    }
}

/// Runs that went cold while the worker was on (refused, no server, a died server, a crashed
/// child checked cold), since the last [`take_cold_runs`].
static COLD_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many runs went cold although the worker was on, since the last call (for the report:
/// 0 when the worker served every run).
pub fn take_cold_runs() -> u64 {
    COLD_RUNS.swap(0, std::sync::atomic::Ordering::SeqCst)
}

/// How long servers took to start and how long runs waited for one, in ms, since the last
/// call (for the report: the start overlaps the baseline, the wait is on the critical path).
pub fn take_times() -> (u64, u64) {
    use std::sync::atomic::Ordering::SeqCst;
    (
        START_US.swap(0, SeqCst) / 1000,
        std::mem::take(&mut WAITING.lock().unwrap_or_else(|p| p.into_inner()).total).as_millis()
            as u64,
    )
}

/// Starts the server for `python` on a thread of its own, so that its imports overlap with
/// what comes before the first warm run; that run waits for the start (the pool is locked
/// while a server starts) instead of beginning it.
pub fn prewarm(python: &Path, root: &Path) {
    let python = python.to_path_buf();
    let root = root.to_path_buf();
    *KEEP_ROOT.lock().unwrap_or_else(|p| p.into_inner()) = Some(root.clone());
    std::thread::spawn(move || {
        let _ = server_for(&python, &root);
    });
}

/// Stops every server (killed, their directories removed) when dropped: statics are never
/// dropped, so a run holds one of these for as long as it uses the workers.
pub struct Shutdown;

impl Drop for Shutdown {
    fn drop(&mut self) {
        let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
        // Kept-alive servers are left running (their drop does nothing).
        pool.slots.clear();
        pool.starts.clear();
    }
}

/// The pid of the live server for `python`, if one runs (for tests and diagnostics).
pub fn server_pid(python: &Path) -> Option<u32> {
    let pool = pool().lock().unwrap_or_else(|p| p.into_inner());
    match pool.slots.get(python) {
        Some(Slot::Live(s)) if !s.dead.load(std::sync::atomic::Ordering::SeqCst) => {
            Some(s.pid as u32)
        }
        _ => None,
    }
}

/// Runs the pytest command `cmd` (`python -m pytest ARGS`, environment and directory set) in a
/// child of the warm worker. `cold` runs it as a cold process: used when the worker cannot
/// serve (with a note saying why) and to check a child that crashed.
pub fn run(
    python: &Path,
    cmd: Command,
    timeout: Duration,
    cold: impl FnOnce(Command) -> Result<CommandRun, RunnerError>,
) -> Result<CommandRun, RunnerError> {
    let request = Request::of(&cmd);
    let cold = move || {
        COLD_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        cold(cmd)
    };
    let request = match request {
        Ok(r) => r,
        Err(why) => {
            note(format!("a run went cold: {why}"));
            return cold();
        }
    };
    let wait = Wait::start(&WAITING);
    let server = server_for(python, Path::new(&request.cwd));
    drop(wait);
    let Some(server) = server else {
        return cold();
    };
    if server.kept {
        if let Err(why) = keep::socket_ok(&server.socket) {
            forget(python, &server);
            note(format!(
                "the kept-alive warm worker's socket was refused ({why}): the run went cold"
            ));
            return cold();
        }
    }
    match request.send(&server, timeout)? {
        Served::Ran(run) => {
            let crashed = run.exit_code == Some(3)
                || (!run.timed_out && run.signal.is_some_and(|s| s != libc::SIGKILL));
            if !crashed {
                return Ok(run);
            }
            // pytest's internal error or a crash: a plugin may not survive a fork. The cold
            // run decides; if it disagrees, the worker is done for.
            let cold_run = cold()?;
            if cold_run.exit_code != run.exit_code {
                switch_off(
                    python,
                    format!(
                        "a run under the warm worker ended with {} and cold with {} (a plugin \
                         that misbehaves after fork): every later run is cold",
                        describe(&run),
                        describe(&cold_run)
                    ),
                );
            }
            Ok(cold_run)
        }
        Served::Refused(why) => {
            note(format!(
                "the warm worker could not serve a run ({why}): it ran cold"
            ));
            cold()
        }
        Served::Died(_) if server.kept => {
            forget(python, &server);
            note(
                "the kept-alive warm worker had exited (its idle timeout, or killed): the run \
                 went cold, and a new one serves the next runs"
                    .to_string(),
            );
            cold()
        }
        Served::Died(why) => {
            forget(python, &server);
            note(format!(
                "the warm worker died ({why}): the run went cold, and a new worker serves the \
                 next ones"
            ));
            cold()
        }
    }
}

fn describe(run: &CommandRun) -> String {
    match (run.exit_code, run.signal) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "no exit status".to_string(),
    }
}

fn switch_off(python: &Path, why: String) {
    note(why.clone());
    let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
    pool.slots.insert(python.to_path_buf(), Slot::Off);
}

/// Whether every later run with `python` goes cold (the worker was switched off for it, or
/// could not be started).
pub fn switched_off(python: &Path) -> bool {
    let pool = pool().lock().unwrap_or_else(|p| p.into_inner());
    matches!(pool.slots.get(python), Some(Slot::Off))
}

/// Drops `server` from the pool if it is still the one there (a dead or stale server).
fn forget(python: &Path, server: &Arc<Server>) {
    let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(Slot::Live(s)) = pool.slots.get(python) {
        if Arc::ptr_eq(s, server) {
            pool.slots.remove(python);
        }
    }
}

/// The live server for `python`, started if needed for the project at `root`; `None` (with a
/// note) when there is none.
fn server_for(python: &Path, root: &Path) -> Option<Arc<Server>> {
    let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
    match pool.slots.get(python) {
        Some(Slot::Off) => return None,
        Some(Slot::Live(s)) => {
            if s.dead.load(std::sync::atomic::Ordering::SeqCst) {
                note("the warm worker had died: a new one was started".to_string());
            } else if stamp(python, &s.stamp) != s.stamp {
                // A changed interpreter or site-packages (pip install) makes the preloaded
                // modules stale: this run is cold, a fresh server serves the next.
                pool.slots.remove(python);
                note(
                    "the interpreter or its site-packages changed since the warm worker started: \
                     that run went cold, a new worker serves the next ones"
                        .to_string(),
                );
                return None;
            } else {
                return Some(Arc::clone(s));
            }
        }
        None => {}
    }
    if keep_secs() > 0 && !pool.unkept.contains(python) {
        if pool.starting.contains(python) {
            // The first runs never wait for a start: they are cold meanwhile.
            note("the kept-alive warm worker was starting: runs went cold meanwhile".to_string());
            return None;
        }
        let root = &keep_root(root);
        match attach(python, root) {
            Ok(Some(s)) => {
                let s = Arc::new(s);
                pool.slots
                    .insert(python.to_path_buf(), Slot::Live(Arc::clone(&s)));
                return Some(s);
            }
            Ok(None) => {
                let starts = pool.starts.entry(python.to_path_buf()).or_default();
                if *starts >= MAX_STARTS {
                    let why = format!(
                        "the warm worker was started {MAX_STARTS} times: every later run is cold"
                    );
                    note(why);
                    pool.slots.insert(python.to_path_buf(), Slot::Off);
                    return None;
                }
                *starts += 1;
                pool.starting.insert(python.to_path_buf());
                start_in_background(python, root);
                note(
                    "the kept-alive warm worker was starting: runs went cold meanwhile".to_string(),
                );
                return None;
            }
            Err(why) => {
                note(format!(
                    "the warm worker is not kept alive: {why}; this process's own worker serves \
                     the runs"
                ));
                pool.unkept.insert(python.to_path_buf());
            }
        }
    }
    let starts = pool.starts.entry(python.to_path_buf()).or_default();
    if *starts >= MAX_STARTS {
        let why =
            format!("the warm worker was started {MAX_STARTS} times: every later run is cold");
        note(why.clone());
        pool.slots.insert(python.to_path_buf(), Slot::Off);
        return None;
    }
    *starts += 1;
    let t0 = Instant::now();
    let started = start(python, root, None);
    START_US.fetch_add(
        t0.elapsed().as_micros() as u64,
        std::sync::atomic::Ordering::SeqCst,
    );
    match started {
        Ok(s) => {
            let s = Arc::new(s);
            pool.slots
                .insert(python.to_path_buf(), Slot::Live(Arc::clone(&s)));
            Some(s)
        }
        Err(why) => {
            let why = format!("the warm worker is off: {why}; runs are cold");
            note(why.clone());
            pool.slots.insert(python.to_path_buf(), Slot::Off);
            None
        }
    }
}

/// The modification times of the interpreter and of the directories on its `sys.path`.
fn stamp(
    python: &Path,
    old: &[(PathBuf, Option<SystemTime>)],
) -> Vec<(PathBuf, Option<SystemTime>)> {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut out = vec![(python.to_path_buf(), mtime(&real(python)))];
    out.extend(old.iter().skip(1).map(|(p, _)| (p.clone(), mtime(p))));
    out
}

fn real(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

#[derive(serde::Deserialize)]
struct Ready {
    refuse: Option<String>,
    #[serde(default)]
    paths: Vec<PathBuf>,
}

/// Why the warm worker did not start (the runs are then cold).
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("no private directory: {0}")]
    NoPrivateDir(#[source] std::io::Error),
    #[error("cannot write the worker: {0}")]
    Write(#[source] std::io::Error),
    #[error("the worker did not start")]
    NotStarted,
    #[error("cannot start the worker: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("the worker's pipes are missing")]
    NoPipes,
    #[error("the worker exited while importing pytest")]
    ExitedImporting,
    #[error("the worker did not finish importing pytest in time")]
    ImportTimedOut,
    #[error("the worker said something unexpected ({0})")]
    Unexpected(#[source] serde_json::Error),
    /// The worker refused to serve this project (its own words).
    #[error("{0}")]
    Refused(String),
}

/// A kept-alive server's start: its directory (private, checked) and its idle seconds.
#[derive(Clone, Copy)]
struct Kept<'a> {
    dir: &'a Path,
    secs: u64,
}

/// The kept-alive server for (`root`, `python`) if one runs and is still valid (a stale one is
/// retired, with a note); `Err`: the keep-alive is refused (a directory or socket not private).
fn attach(python: &Path, root: &Path) -> Result<Option<Server>, String> {
    let root = real(root);
    let dir = keep::private_server_dir(&root, python)?;
    let Some(record) = keep::read_record(&dir) else {
        return Ok(None);
    };
    if !keep::is_server(&record) {
        keep::retire(&dir, &record);
        return Ok(None);
    }
    if let Some(what) = keep::changed(&record, &root, python) {
        note(format!(
            "{what} changed since the kept-alive warm worker started: it was replaced"
        ));
        keep::retire(&dir, &record);
        return Ok(None);
    }
    keep::socket_ok(&record.socket)?;
    let watched = keep::watched_files(&root, python).len();
    let mut stamp0 = vec![(python.to_path_buf(), None)];
    stamp0.extend(
        record
            .stamp
            .iter()
            .skip(watched)
            .map(|(p, _)| (p.clone(), None)),
    );
    let (_tx, reaped) = mpsc::channel();
    Ok(Some(Server {
        pid: record.pid,
        socket: record.socket,
        kept: true,
        _stdin: None,
        dead: Arc::default(),
        reaped: Mutex::new(reaped),
        stamp: stamp(python, &stamp0),
        _dir: None,
    }))
}

/// Starts the kept-alive server on a thread of its own: runs are cold until it is ready.
fn start_in_background(python: &Path, root: &Path) {
    let python = python.to_path_buf();
    let root = real(root);
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let started = keep::private_server_dir(&root, &python)
            .map_err(|why| StartError::NoPrivateDir(std::io::Error::other(why)))
            .and_then(|dir| {
                let _lock = keep::StartLock::take(&dir).map_err(StartError::NoPrivateDir)?;
                // Another process may have started one while we waited for the lock.
                if let Ok(Some(s)) = attach(&python, &root) {
                    return Ok(s);
                }
                start(
                    &python,
                    &root,
                    Some(Kept {
                        dir: &dir,
                        secs: keep_secs(),
                    }),
                )
            });
        START_US.fetch_add(t0.elapsed().as_micros() as u64, Ordering::SeqCst);
        let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
        pool.starting.remove(&python);
        match started {
            Ok(s) => {
                pool.slots.insert(python, Slot::Live(Arc::new(s)));
            }
            Err(why) => {
                note(format!("the warm worker is off: {why}; runs are cold"));
                pool.slots.insert(python, Slot::Off);
            }
        }
    });
}

fn start(python: &Path, root: &Path, kept: Option<Kept>) -> Result<Server, StartError> {
    let _t = crate::trace_times::span("worker started (imports pytest)");
    let (dir, temp) = match &kept {
        Some(k) => (k.dir.to_path_buf(), None),
        None => {
            let d = TempDir::new("selfdebug-worker").map_err(StartError::NoPrivateDir)?;
            {
                use std::os::unix::fs::PermissionsExt;
                // Whoever can reach the socket can run code as us.
                std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700))
                    .map_err(StartError::NoPrivateDir)?;
            }
            (d.path().to_path_buf(), Some(d))
        }
    };
    let script = dir.join("_selfdebug_worker.py");
    crate::process::write_private(&script, SOURCE.as_bytes()).map_err(StartError::Write)?;
    let socket = match &kept {
        // Each server its own socket: one being replaced never removes its successor's.
        Some(_) => dir.join(format!(
            "sock-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        )),
        None => dir.join("sock"),
    };
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .arg(&socket)
        .arg(root)
        .current_dir(&dir)
        .env_remove("PYTEST_ADDOPTS")
        .stdin(if kept.is_some() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(k) = &kept {
        cmd.arg("--idle")
            .arg(k.secs.to_string())
            .arg("--state")
            .arg(keep::record_path(k.dir))
            .arg("--stamp")
            .args(keep::watched_files(root, python));
    }
    match crate::plugin::dir() {
        Some(p) => cmd.env("PYTHONPATH", p),
        None => cmd.env_remove("PYTHONPATH"),
    };
    // Its own imports compile once into the private cache, as cold runs' do.
    match Bytecode::default_cache() {
        Bytecode::Cache(c) if crate::process::private_dir(&c) => {
            cmd.env("PYTHONPYCACHEPREFIX", c)
                .env_remove("PYTHONDONTWRITEBYTECODE");
        }
        _ => {
            cmd.env("PYTHONDONTWRITEBYTECODE", "1");
        }
    }
    match kept {
        None => crate::process::prepare_child(&mut cmd),
        Some(_) => {
            use std::os::unix::process::CommandExt;
            // Its own session, no death signal: it outlives this process (and its terminal's
            // Ctrl-C), and ends on its idle timeout.
            // SAFETY: setsid is async-signal-safe.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    // The death signal fires when the spawning thread ends: this thread lives as long as the
    // server does.
    let (tx, rx) = mpsc::channel();
    let dead = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dead_flag = Arc::clone(&dead);
    let (reaped_tx, reaped) = mpsc::channel();
    std::thread::spawn(move || {
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let parts = (child.id(), child.stdin.take(), child.stdout.take());
        let _ = tx.send(Ok(parts));
        let _ = child.wait();
        dead_flag.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = reaped_tx.send(());
    });
    let (pid, stdin, stdout) = rx
        .recv()
        .map_err(|_| StartError::NotStarted)?
        .map_err(StartError::Spawn)?;
    let pid = pid as libc::pid_t;
    let kill = || {
        // SAFETY: plain syscall on the server's own group.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    };
    let Some(stdout) = stdout else {
        kill();
        return Err(StartError::NoPipes);
    };
    if kept.is_none() && stdin.is_none() {
        kill();
        return Err(StartError::NoPipes);
    }
    // The first line says it is ready (after the imports), read on a thread so a hang has a limit.
    let (ltx, lrx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = ltx.send(line);
    });
    let line = match lrx.recv_timeout(START_TIMEOUT) {
        Ok(l) if !l.trim().is_empty() => l,
        Ok(_) => {
            kill();
            return Err(StartError::ExitedImporting);
        }
        Err(_) => {
            kill();
            return Err(StartError::ImportTimedOut);
        }
    };
    let ready: Ready = serde_json::from_str(line.trim()).map_err(|e| {
        kill();
        StartError::Unexpected(e)
    })?;
    if let Some(why) = ready.refuse {
        kill();
        return Err(StartError::Refused(why));
    }
    let mut stamp0 = vec![(python.to_path_buf(), None)];
    stamp0.extend(ready.paths.into_iter().map(|p| (p, None)));
    Ok(Server {
        pid,
        socket,
        kept: kept.is_some(),
        _stdin: stdin,
        dead,
        reaped: Mutex::new(reaped),
        stamp: stamp(python, &stamp0),
        _dir: temp,
    })
}

enum Served {
    Ran(CommandRun),
    Refused(String),
    Died(String),
}

/// Why a run cannot go to the worker (it goes cold).
#[derive(Debug, thiserror::Error)]
enum Cold {
    #[error("not a `python -m pytest` run")]
    NotPytest,
    /// Its arguments, environment, directory or temp dir (which) is not UTF-8.
    #[error("its {0} is not UTF-8")]
    NotUtf8(&'static str),
    #[error("{0}")]
    Io(#[source] std::io::Error),
}

#[derive(serde::Serialize)]
struct Request {
    argv: Vec<String>,
    cwd: String,
    env: HashMap<String, String>,
    stdout: String,
    stderr: String,
    #[serde(skip)]
    _out_dir: Option<TempDir>,
}

impl Request {
    /// The request for `cmd`; `Err` says why it cannot go to the worker.
    fn of(cmd: &Command) -> Result<Request, Cold> {
        let utf8 = |s: &std::ffi::OsStr, what: &'static str| {
            s.to_str().map(str::to_string).ok_or(Cold::NotUtf8(what))
        };
        let mut args = cmd.get_args();
        if args.next() != Some("-m".as_ref()) || args.next() != Some("pytest".as_ref()) {
            return Err(Cold::NotPytest);
        }
        let argv = args
            .map(|a| utf8(a, "arguments"))
            .collect::<Result<_, _>>()?;
        let cwd = match cmd.get_current_dir() {
            Some(d) => std::path::absolute(d).map_err(Cold::Io)?,
            None => std::env::current_dir().map_err(Cold::Io)?,
        };
        let mut env: HashMap<String, String> = HashMap::new();
        for (k, v) in std::env::vars_os() {
            env.insert(utf8(&k, "environment")?, utf8(&v, "environment")?);
        }
        for (k, v) in cmd.get_envs() {
            let k = utf8(k, "environment")?;
            match v {
                Some(v) => {
                    env.insert(k, utf8(v, "environment")?);
                }
                None => {
                    env.remove(&k);
                }
            }
        }
        let out_dir = TempDir::new("selfdebug-wrun").map_err(Cold::Io)?;
        Ok(Request {
            argv,
            cwd: utf8(cwd.as_os_str(), "directory")?,
            env,
            stdout: utf8(out_dir.path().join("out").as_os_str(), "temp dir")?,
            stderr: utf8(out_dir.path().join("err").as_os_str(), "temp dir")?,
            _out_dir: Some(out_dir),
        })
    }

    fn send(&self, server: &Server, timeout: Duration) -> Result<Served, RunnerError> {
        if crate::process::interrupted() {
            return Err(RunnerError::Interrupted);
        }
        let start = Instant::now();
        let mut stream = match UnixStream::connect(&server.socket) {
            Ok(s) => s,
            Err(e) => return Ok(Served::Died(format!("cannot connect: {e}"))),
        };
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        if let Err(e) = stream.write_all(&line) {
            return Ok(Served::Died(format!("cannot send the run: {e}")));
        }
        let _ = stream.set_read_timeout(Some(Duration::from_millis(25)));
        let mut lines = Lines::new(stream);
        // First the child's pid (or a refusal), then how it ended.
        let pid = match lines.next(start + KILL_GRACE.max(Duration::from_secs(30))) {
            Line::Text(l) => match l
                .strip_prefix("pid ")
                .and_then(|p| p.parse::<libc::pid_t>().ok())
            {
                Some(p) if p > 0 => p,
                _ => match l.strip_prefix("refuse ") {
                    Some(why) => return Ok(Served::Refused(why.to_string())),
                    None => return Ok(Served::Died(format!("unexpected answer {l:?}"))),
                },
            },
            Line::Eof => return Ok(Served::Died("it closed the connection".to_string())),
            Line::Late => return Ok(Served::Died("it did not answer".to_string())),
            Line::Interrupted => return Err(RunnerError::Interrupted),
        };
        let kill = || {
            // SAFETY: plain syscall on the run's own group, which the server has not reaped
            // (it reports the exit only after reaping).
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        };
        let mut timed_out = false;
        let mut was_interrupted = false;
        let mut end = lines.next(start + timeout);
        if matches!(end, Line::Late | Line::Interrupted) {
            timed_out = matches!(end, Line::Late);
            was_interrupted = matches!(end, Line::Interrupted);
            kill();
            end = lines.next(Instant::now() + KILL_GRACE);
        }
        let duration = start.elapsed();
        if was_interrupted {
            return Err(RunnerError::Interrupted);
        }
        let (exit_code, signal) = match end {
            Line::Text(l) => {
                if let Some(c) = l.strip_prefix("exit ").and_then(|c| c.parse().ok()) {
                    (Some(c), None)
                } else if let Some(s) = l.strip_prefix("signal ").and_then(|c| c.parse().ok()) {
                    (None, Some(s))
                } else {
                    return Ok(Served::Died(format!("unexpected answer {l:?}")));
                }
            }
            _ => {
                kill();
                return Ok(Served::Died(
                    "it stopped answering during a run".to_string(),
                ));
            }
        };
        let read = |p: &str| {
            let mut b = std::fs::read(p).unwrap_or_default();
            if b.len() > crate::process::OUTPUT_CAP {
                // The end of a pytest log, with its summary, matters most.
                b.drain(..b.len() - crate::process::OUTPUT_CAP / 2);
            }
            b
        };
        Ok(Served::Ran(CommandRun {
            exit_code: if timed_out { None } else { exit_code },
            signal,
            stdout: read(&self.stdout),
            stderr: read(&self.stderr),
            duration,
            timed_out,
        }))
    }
}

enum Line {
    Text(String),
    Eof,
    /// The deadline passed first.
    Late,
    Interrupted,
}

/// Lines from the server, read with a deadline and an eye on Ctrl-C.
struct Lines {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Lines {
    fn new(stream: UnixStream) -> Lines {
        Lines {
            stream,
            buf: Vec::new(),
        }
    }

    fn next(&mut self, deadline: Instant) -> Line {
        let mut chunk = [0u8; 512];
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Line::Text(String::from_utf8_lossy(&line).trim().to_string());
            }
            if crate::process::interrupted() {
                return Line::Interrupted;
            }
            if Instant::now() >= deadline {
                return Line::Late;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Line::Eof,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => return Line::Eof,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalives_parse() {
        let d = Duration::from_secs;
        assert_eq!(parse_keepalive("10m"), Some(d(600)));
        assert_eq!(parse_keepalive(" 90S "), Some(d(90)));
        assert_eq!(parse_keepalive("1h"), Some(d(3600)));
        assert_eq!(parse_keepalive("45"), Some(d(45)));
        assert_eq!(parse_keepalive("off"), Some(d(0)));
        assert_eq!(parse_keepalive("0"), Some(d(0)));
        for bad in ["", "m", "10 m", "10d", "-5", "1.5m"] {
            assert_eq!(parse_keepalive(bad), None, "{bad}");
        }
    }

    #[test]
    fn modes_parse() {
        assert_eq!(Mode::parse("auto"), Some(Mode::Auto));
        assert_eq!(Mode::parse(" OFF "), Some(Mode::Off));
        assert_eq!(Mode::parse("0"), Some(Mode::Off));
        assert_eq!(Mode::parse("warm"), None);
    }

    #[test]
    fn runs_waiting_side_by_side_count_their_common_wait_once() {
        static ON: Mutex<Waiting> = Mutex::new(Waiting {
            runs: 0,
            since: None,
            total: Duration::ZERO,
        });
        let outer = Instant::now();
        let a = Wait::start(&ON);
        let b = Wait::start(&ON);
        std::thread::sleep(Duration::from_millis(30));
        drop(a);
        drop(b);
        let wall = outer.elapsed();
        let total = ON.lock().unwrap().total;
        // Summed, the two waits would be about twice the wall time.
        assert!(
            total >= Duration::from_millis(30) && total <= wall,
            "{total:?} of {wall:?}"
        );
        // A later wait alone adds its own time.
        let c = Wait::start(&ON);
        std::thread::sleep(Duration::from_millis(10));
        drop(c);
        let after = ON.lock().unwrap().total;
        assert!(
            after >= total + Duration::from_millis(10),
            "{after:?} after {total:?}"
        );
        assert_eq!(ON.lock().unwrap().runs, 0);
    }
}
