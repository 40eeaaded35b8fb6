//! The repair: this same binary run as `selfdebug fix --json` on the bug tree with the
//! selection, exactly as a user or an agent would run it (the tree's configuration file is
//! honoured), and what its report says.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::outcomes::pythonpath;
use crate::process::{CommandRun, RunnerError};

/// What `fix` reported, as far as the replay needs it.
#[derive(Debug, Clone, Serialize)]
pub struct FixRun {
    pub exit_code: Option<i32>,
    pub final_status: String,
    /// Files (relative to the project) the kept patches change.
    pub files_patched: Vec<String>,
    /// Candidates tried.
    pub attempts: u64,
    pub out_of_time: bool,
    /// Candidates ranked and left untried when the work on a failure ended (its search's
    /// time, the time budget or the rules' rank cap), over all failures.
    pub untried: u64,
    pub pytest_runs: u64,
    pub duration_ms: u64,
    /// The kept patches' diffs, one after the other.
    pub patch: String,
    /// `fix`'s own error line, when it stopped early.
    pub error: Option<String>,
}

/// `fix`'s command line after the binary: its flags from `fix_args` (before any `--` in
/// them), the selection, then pytest arguments the user gave after a second `--`. The backup
/// copies of patched files go to `backups` (in the replay's temp dir, removed with the tree)
/// unless the flags name a backup dir.
pub fn fix_command_args(
    root: &Path,
    python: &Path,
    selection: &[String],
    fix_args: &[String],
    backups: &Path,
) -> Vec<String> {
    let pytest_extra = pytest_args(fix_args);
    let flags = &fix_args[..fix_args.len() - pytest_extra.len()];
    let flags = flags.strip_suffix(&["--".to_string()]).unwrap_or(flags);
    let mut args: Vec<String> = vec![
        "fix".into(),
        "--json".into(),
        "--root".into(),
        root.display().to_string(),
        "--python".into(),
        python.display().to_string(),
    ];
    if !flags.iter().any(|f| f.starts_with("--backup-dir")) {
        args.extend(["--backup-dir".into(), backups.display().to_string()]);
    }
    args.extend(flags.iter().cloned());
    args.push("--".into());
    args.extend(selection.iter().cloned());
    args.extend(pytest_extra.iter().cloned());
    args
}

/// The pytest arguments in `fix_args`: those after a `--` in them.
pub fn pytest_args(fix_args: &[String]) -> &[String] {
    fix_args
        .iter()
        .position(|a| a == "--")
        .map_or(&[][..], |i| &fix_args[i + 1..])
}

/// How long a `fix` run may take: its time budget (`--time-budget` in the fix arguments, else
/// the default) and ten minutes for the full runs that end it.
pub fn fix_timeout(fix_args: &[String]) -> Duration {
    let mut budget = crate::config::DEFAULT_TIME_BUDGET;
    for (i, a) in fix_args.iter().enumerate().take_while(|(_, a)| *a != "--") {
        let value = match a.strip_prefix("--time-budget=") {
            Some(v) => Some(v),
            None if a == "--time-budget" => fix_args.get(i + 1).map(String::as_str),
            None => None,
        };
        if let Some(secs) = value.and_then(|v| v.parse().ok()) {
            budget = Duration::from_secs(secs);
        }
    }
    budget + Duration::from_secs(600)
}

/// Runs `fix` on the bug tree at `root`.
pub fn run_fix(
    root: &Path,
    python: &Path,
    selection: &[String],
    fix_args: &[String],
    backups: &Path,
) -> Result<FixRun, RunnerError> {
    let exe = std::env::current_exe().map_err(|e| RunnerError::Io {
        message: format!("cannot find the selfdebug binary: {e}"),
    })?;
    let mut cmd = Command::new(exe);
    cmd.args(fix_command_args(root, python, selection, fix_args, backups))
        .current_dir(root);
    for (k, v) in pythonpath(root) {
        cmd.env(k, v);
    }
    let run = run_stoppable(cmd, fix_timeout(fix_args))?;
    Ok(read_report(
        &run.stdout,
        &run.stderr,
        run.exit_code,
        run.timed_out,
    ))
}

/// How long a `fix` told to stop (SIGTERM) may take to restore its files and exit before its
/// whole process group is killed.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Runs `fix` in its own process group (dying with us, as every child of ours). Unlike a pytest
/// run, which is killed whole at once, `fix` is asked to stop with SIGTERM at Ctrl-C or its
/// limit: it ends its own runs, restores what it touched and removes its temp dirs, and is
/// killed only if it has not exited within [`STOP_GRACE`].
fn run_stoppable(mut cmd: Command, limit: Duration) -> Result<CommandRun, RunnerError> {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    crate::process::prepare_child(&mut cmd);
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().map_err(|e| RunnerError::Spawn {
        program: cmd.get_program().into(),
        message: e.to_string(),
    })?;
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let pid = child.id() as libc::pid_t;
    let (mut stopped_at, mut timed_out, mut interrupted) = (None, false, false);
    let status = loop {
        let waited = child.try_wait().map_err(|e| RunnerError::Io {
            message: format!("waiting for fix: {e}"),
        })?;
        if let Some(status) = waited {
            break status;
        }
        interrupted |= crate::process::interrupted();
        timed_out |= started.elapsed() >= limit;
        match stopped_at {
            None if interrupted || timed_out => {
                // SAFETY: a signal to our own child, which has not been reaped yet.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                stopped_at = Some(std::time::Instant::now());
            }
            // SAFETY: the group of our own unreaped child.
            Some(t) if t.elapsed() >= STOP_GRACE => unsafe {
                libc::killpg(pid, libc::SIGKILL);
            },
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if interrupted {
        return Err(RunnerError::Interrupted);
    }
    Ok(CommandRun {
        exit_code: status.code(),
        signal: status.signal(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        duration: started.elapsed(),
        timed_out,
    })
}

/// `fix`'s JSON report; a run that printed none (killed at the limit, crashed) is an error
/// with the last line it wrote on stderr.
fn read_report(stdout: &[u8], stderr: &[u8], exit_code: Option<i32>, timed_out: bool) -> FixRun {
    let doc: Value = serde_json::from_slice(stdout).unwrap_or(Value::Null);
    let u = |k: &str| doc.get(k).and_then(Value::as_u64).unwrap_or(0);
    let strings = |k: &str| -> Vec<String> {
        doc.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let patch = doc
        .get("patches")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.get("diff")?.as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    let error = if doc.is_null() {
        let said = String::from_utf8_lossy(stderr);
        let last = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        Some(if timed_out {
            "fix did not finish in its time budget and ten minutes more: killed".to_string()
        } else {
            format!("fix printed no report ({})", last.trim())
        })
    } else {
        doc.get("error").and_then(Value::as_str).map(String::from)
    };
    let dry = doc.get("dry_run").and_then(Value::as_bool).unwrap_or(false);
    FixRun {
        exit_code,
        final_status: doc
            .get("final_status")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .to_string(),
        files_patched: if dry {
            Vec::new()
        } else {
            strings("files_patched")
        },
        attempts: u("attempts"),
        untried: doc
            .get("failures")
            .and_then(Value::as_array)
            .map_or(0, |a| {
                a.iter().filter_map(|f| f.get("untried")?.as_u64()).sum()
            }),
        out_of_time: doc
            .get("out_of_time")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        pytest_runs: u("pytest_runs"),
        duration_ms: u("duration_ms"),
        patch,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_args_split_at_their_own_dashes() {
        let args = fix_command_args(
            Path::new("/t"),
            Path::new("/py"),
            &["t.py::a".into()],
            &[
                "--time-budget".into(),
                "60".into(),
                "--".into(),
                "-x".into(),
            ],
            Path::new("/b"),
        );
        assert_eq!(
            args.join(" "),
            "fix --json --root /t --python /py --backup-dir /b --time-budget 60 -- t.py::a -x"
        );
        assert_eq!(
            fix_timeout(&["--time-budget".into(), "60".into()]),
            Duration::from_secs(660)
        );
        assert_eq!(
            fix_timeout(&["--time-budget=30".into()]),
            Duration::from_secs(630)
        );
    }
}
