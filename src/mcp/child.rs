//! A tool call's child: this same binary run as `selfdebug CMD --json --root ROOT ...`, so a
//! tool's structured result is byte for byte what the command line prints. Its stdout is the
//! result, its stderr is copied to the server's stderr (stdout carries only protocol
//! messages), and with progress on, a pipe carries its steps (see `progress::Pipe`).
//!
//! Every live child is registered, so the server can interrupt them all and wait for them when
//! the client goes away or the server is asked to stop (SIGTERM, SIGINT, SIGHUP): SIGINT makes
//! a child restore every file it touched, as Ctrl-C does. A server killed outright (SIGKILL)
//! cannot do that, so each child also gets SIGINT from the kernel when the server dies.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Pids of the children not reaped yet; signalled only under this lock, and a pid leaves it
/// before it is reaped, so a signal never reaches a recycled pid.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Notified each time a pid leaves [`LIVE`].
static GONE: Condvar = Condvar::new();

/// The keep-alive of the calls' warm workers, unless the server's environment sets
/// [`KEEPALIVE_ENV`] (`off` turns it off).
pub const MCP_KEEPALIVE: &str = "10m";
const KEEPALIVE_ENV: &str = "SELFDEBUG_WORKER_KEEPALIVE";
/// Read by a kept-alive worker server (`_selfdebug_worker.py`): the process it outlives not.
const OWNER_ENV: &str = "SELFDEBUG_WORKER_OWNER";

/// What to run.
pub struct Spec {
    pub args: Vec<OsString>,
    /// The project root: the child's working directory.
    pub cwd: PathBuf,
    /// Written to the child's stdin (a log given as text); `None`: stdin is empty.
    pub stdin: Option<Vec<u8>>,
    /// Open a progress pipe (`SELFDEBUG_PROGRESS_FD`).
    pub progress: bool,
}

/// How the child ended.
pub struct Outcome {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    /// Its last non-empty line on stderr (the CLI's one-line error).
    pub last_error: Option<String>,
    /// The call was cancelled and the child was sent SIGINT.
    pub interrupted: bool,
}

/// SIGINT to `pid` if it is still a live child.
fn interrupt(pid: i32) {
    if let Ok(live) = LIVE.lock() {
        if live.contains(&pid) {
            // SAFETY: kill on a pid that is our unreaped child (checked under the lock).
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
    }
}

/// SIGINT to every live child (each then restores its files and exits).
pub fn interrupt_all() {
    if let Ok(live) = LIVE.lock() {
        for pid in live.iter() {
            // SAFETY: as in `interrupt`.
            unsafe { libc::kill(*pid, libc::SIGINT) };
        }
    }
}

/// [`interrupt_all`], then waits until each child has exited: the server's last act, so no
/// run outlives it with a candidate or a probe in the project's files.
pub fn interrupt_all_and_wait() {
    interrupt_all();
    let Ok(mut live) = LIVE.lock() else { return };
    while !live.is_empty() {
        live = match GONE.wait(live) {
            Ok(l) => l,
            Err(_) => return,
        };
    }
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts the child and registers it in [`LIVE`]; with the read end of its progress pipe when
/// `spec.progress`.
fn spawn(spec: &Spec) -> std::io::Result<(Child, Option<OwnedFd>)> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove(crate::progress::FD_ENV);
    // An agent calls `fix` again and again on one project: each call's warm worker stays alive
    // for the next (docs/worker.md), unless the server's environment says otherwise.
    if std::env::var_os(KEEPALIVE_ENV).is_none() {
        cmd.env(KEEPALIVE_ENV, MCP_KEEPALIVE);
    }
    // ... but no longer than this server: a kept worker left after its client and server are
    // gone would be a trace of them (it checks every few seconds, between runs).
    cmd.env(OWNER_ENV, std::process::id().to_string());
    let pipe_ends = if spec.progress {
        let (read, write) = pipe()?;
        let fd = write.as_raw_fd();
        cmd.env(crate::progress::FD_ENV, fd.to_string());
        // SAFETY: fcntl is async-signal-safe; it clears close-on-exec of the write end in the
        // child only, so no other child started meanwhile inherits it.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Some((read, write))
    } else {
        None
    };
    // On Linux the child gets SIGINT when the server dies, however it dies (SIGKILL too): it
    // then restores every file it touched, as on Ctrl-C, instead of running on orphaned and
    // keeping a patch nobody asked for. The spawning thread is the server's main thread (the
    // current-thread runtime), which lives as long as the server.
    crate::process::die_with_parent(&mut cmd, libc::SIGINT);
    // Registered under the lock it is started under, so `interrupt_all_and_wait` cannot miss
    // a child being started.
    let mut live = LIVE
        .lock()
        .map_err(|_| std::io::Error::other("lock poisoned"))?;
    let child = cmd.spawn()?;
    live.insert(child.id() as i32);
    // The parent's copy of the write end goes (dropped here), so the read end ends with the
    // child.
    Ok((child, pipe_ends.map(|(read, _write)| read)))
}

/// All of `from`, read on a thread.
fn read_all(mut from: impl Read + Send + 'static) -> oneshot::Receiver<Vec<u8>> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = from.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Copies the child's stderr to the server's, line by line, and sends each line to `logs`; the
/// last non-empty line at the end.
fn copy_stderr(
    from: impl Read + Send + 'static,
    logs: mpsc::UnboundedSender<String>,
) -> oneshot::Receiver<Option<String>> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let mut server_err = std::io::stderr();
        let mut last = None;
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(server_err, "{line}");
            let _ = logs.send(line.clone());
            if !line.trim().is_empty() {
                last = Some(line);
            }
        }
        let _ = tx.send(last);
    });
    rx
}

/// The child's exit status, from a thread that waits for it without reaping, takes it out of
/// [`LIVE`], then reaps it (see [`LIVE`]).
fn wait_for_exit(mut child: Child) -> oneshot::Receiver<std::io::Result<ExitStatus>> {
    let (tx, rx) = oneshot::channel();
    let pid = child.id() as i32;
    std::thread::spawn(move || {
        // SAFETY: waitid fills the siginfo it is given.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if let Ok(mut live) = LIVE.lock() {
            live.remove(&pid);
        }
        let status = child.wait();
        GONE.notify_all();
        let _ = tx.send(status);
    });
    rx
}

/// Runs the child to its end; `progress` gets each line it reports (JSON text) and is closed
/// when the child closes its end; `logs` each line of its stderr; `ct` cancelled sends the child SIGINT once (it still runs to
/// its end: restoring the files is part of it).
pub async fn run(
    spec: Spec,
    ct: CancellationToken,
    progress: mpsc::UnboundedSender<String>,
    logs: mpsc::UnboundedSender<String>,
) -> std::io::Result<Outcome> {
    let (mut child, progress_read) = spawn(&spec)?;
    let pid = child.id() as i32;
    if let (Some(bytes), Some(mut stdin)) = (spec.stdin, child.stdin.take()) {
        // A thread: a large log must not block the reactor while the child reads it.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let stdout = read_all(child.stdout.take().expect("piped stdout"));
    let last_error = copy_stderr(child.stderr.take().expect("piped stderr"), logs);
    if let Some(read) = progress_read {
        std::thread::spawn(move || {
            for line in BufReader::new(std::fs::File::from(read)).lines() {
                let Ok(line) = line else { break };
                if progress.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut exit = wait_for_exit(child);
    let mut interrupted = false;
    let status = loop {
        tokio::select! {
            _ = ct.cancelled(), if !interrupted => {
                interrupted = true;
                interrupt(pid);
            }
            status = &mut exit => break status,
        }
    };
    let status = status.map_err(|_| std::io::Error::other("the waiting thread died"))??;
    Ok(Outcome {
        code: status.code(),
        stdout: stdout.await.unwrap_or_default(),
        last_error: last_error.await.unwrap_or_default(),
        interrupted,
    })
}
