//! `--sandbox`: every judge run (pytest or a `--cmd` command) under bubblewrap (`bwrap`):
//! no network (`--unshare-net`: only a private loopback), the whole file system read-only
//! (`--ro-bind / /`) except the run's directory (the project or its scratch copy), the temp
//! dir (probe output, the plugin's hang files, scratch copies) and the tool's bytecode cache;
//! a fresh `/dev` and `/proc`, its own pid namespace and session. The sandbox dies with the
//! `bwrap` process (`--die-with-parent`), which the runner kills at the timeout.
//!
//! It is for running generated or untrusted code: a test cannot reach the network or write
//! outside the workspace. It is not a defence against a kernel exploit. bubblewrap needs
//! unprivileged user namespaces (or root); [`Sandbox::find`] tries it once and says what
//! failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Why `--sandbox` cannot be had here: what to install or what failed. Displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "--sandbox needs Linux: it runs the judge under bubblewrap, which uses Linux namespaces"
    )]
    NotLinux,
    #[error(
        "--sandbox needs bubblewrap (`bwrap`), which is not on PATH: install it \
         (Debian/Ubuntu: `apt-get install bubblewrap`)"
    )]
    NoBwrap,
    #[error("--sandbox: cannot run {}: {source}", bwrap.display())]
    CannotRun {
        bwrap: PathBuf,
        source: crate::process::RunnerError,
    },
    /// bwrap ran but could not start a sandbox (the last line it printed).
    #[error(
        "--sandbox: bubblewrap cannot start a sandbox on this machine ({0}); it needs \
         unprivileged user namespaces (kernel.unprivileged_userns_clone=1) or root"
    )]
    CannotStart(String),
}

/// A bubblewrap that was seen to work on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    bwrap: PathBuf,
}

impl Sandbox {
    /// Finds `bwrap` on `PATH` and checks that it can start a sandbox here. The error says
    /// what to install or what failed, in one line.
    pub fn find() -> Result<Sandbox, SandboxError> {
        if !cfg!(target_os = "linux") {
            return Err(SandboxError::NotLinux);
        }
        let found = std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .map(|d| d.join("bwrap"))
                .find(|p| p.is_file())
        });
        let Some(bwrap) = found else {
            return Err(SandboxError::NoBwrap);
        };
        let sb = Sandbox { bwrap };
        let tmp = std::env::temp_dir();
        let run = crate::process::run_command(
            sb.command(Path::new("true"), &tmp),
            Duration::from_secs(30),
        )
        .map_err(|source| SandboxError::CannotRun {
            bwrap: sb.bwrap.clone(),
            source,
        })?;
        if run.exit_code != Some(0) {
            let why = String::from_utf8_lossy(&run.stderr)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message")
                .trim()
                .to_string();
            return Err(SandboxError::CannotStart(why));
        }
        Ok(sb)
    }

    /// `bwrap [options] -- program`, to run from `cwd` (which stays writable). Arguments for
    /// the program are appended by the caller.
    pub fn command(&self, program: &Path, cwd: &Path) -> Command {
        let mut cmd = Command::new(&self.bwrap);
        // --new-session: no way to push input into our terminal (TIOCSTI). It leaves our
        // process group, so killing the group reaches only bwrap; --die-with-parent and
        // --unshare-pid then take the whole sandbox down with it (its pid 1 dies, and with it
        // every process inside).
        cmd.args([
            "--unshare-net",
            "--unshare-pid",
            "--new-session",
            "--die-with-parent",
        ]);
        cmd.args(["--ro-bind", "/", "/"]);
        cmd.args(["--dev", "/dev", "--proc", "/proc"]);
        for dir in writable_dirs(cwd) {
            cmd.arg("--bind").arg(&dir).arg(&dir);
        }
        cmd.arg("--chdir").arg(absolute(cwd)).arg("--").arg(program);
        cmd
    }
}

/// The run's directory, the temp dir and the bytecode cache, each as an absolute path and, when
/// different, as resolved (a symlinked `/tmp` is bound both ways), those that exist.
fn writable_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut wanted = vec![absolute(cwd), std::env::temp_dir()];
    if let crate::bytecode::Bytecode::Cache(dir) = crate::bytecode::Bytecode::default_cache() {
        // Made here so that it can be bound (the runner would make it anyway).
        crate::process::private_dir(&dir);
        wanted.push(dir);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for d in wanted {
        let real = d.canonicalize().ok();
        for p in [Some(d), real].into_iter().flatten() {
            if p.is_dir() && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
