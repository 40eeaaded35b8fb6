//! Running one child process: its own process group, a timeout that kills the whole group,
//! output read on threads (see [`crate::process`]).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::error::RunnerError;
use super::interrupt::stopped;

/// After the child is gone, how long to wait for its pipes to close. A process that escaped the
/// group (its own `setsid`) can hold them open forever; we keep what was read by then.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Output kept per stream; beyond it the oldest half is dropped (the end of a pytest log, with
/// its summary, matters most).
pub(crate) const OUTPUT_CAP: usize = 64 << 20;

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

/// Runs a command in its own process group with a timeout; see [`crate::process`]. Stdin is
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

/// Its own process group, and death with us (see [`crate::process`]).
pub(crate) fn prepare_child(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    die_with_parent(cmd, libc::SIGKILL);
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

/// Makes the child get `signal` when we die (see [`crate::process`]): SIGKILL for a run, SIGINT
/// for a child that must restore its files first (an MCP server's runs).
#[cfg(target_os = "linux")]
pub fn die_with_parent(cmd: &mut Command, signal: libc::c_int) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe syscalls.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
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
pub fn die_with_parent(_cmd: &mut Command, _signal: libc::c_int) {}

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
