//! pytest-xdist for the full confirming run: `-n N` when it can pay.
//!
//! xdist starts N fresh interpreters, each importing pytest and collecting the whole suite
//! again, before any test runs: measured on the 2-core development machine (loaded), a one-test
//! suite took 7.7–8.8 s plain and 21–24 s with `-n 2`, so xdist's start-up costs about two
//! plain runs' start. At best it divides the tests' own time by N. So it is
//! added only when the baseline (what a full run costs) took [`MIN_BASELINE`] or more, when the
//! project's interpreter can import xdist, and when the user's pytest arguments say nothing
//! about xdist (`-n`, `--numprocesses`, `--dist`, `-p no:xdist`): theirs win. Targeted runs
//! never get it (one or a few tests gain nothing from workers). `--no-xdist` / `xdist = false`
//! turns it off. The verdict parser reads xdist's output like a plain run's (its failure
//! sections and short summary are pytest's own; `tests/it/xdist.rs` checks it with a real run).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::runner::{Interpreter, RunSpec};

/// A full run that took less than this is not worth xdist's start-up.
pub const MIN_BASELINE: Duration = Duration::from_secs(10);

/// At most this many workers: each one is a whole interpreter with the suite collected.
pub const MAX_WORKERS: usize = 8;

/// Adds `-n N` to the spec of a full run when it pays (see the module docs); `allowed` is
/// `--no-xdist` off, `baseline` what the baseline run took.
pub fn add(spec: &mut RunSpec, python: &Interpreter, allowed: bool, baseline: Duration) {
    if !allowed || baseline < MIN_BASELINE || user_decides(&spec.extra_args) {
        return;
    }
    if !importable(python) {
        return;
    }
    let n = workers();
    if n < 2 {
        return;
    }
    spec.extra_args
        .splice(0..0, ["-n".to_string(), n.to_string()]);
}

/// The number of workers: the cores this process may use, capped.
pub fn workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS)
}

/// Whether the pytest arguments already speak about xdist.
pub fn user_decides(args: &[String]) -> bool {
    let mut prev: Option<&str> = None;
    for a in args {
        let a = a.as_str();
        let plugin_off = (prev == Some("-p") && a == "no:xdist") || a == "-pno:xdist";
        if plugin_off
            || a == "-n"
            || (a.starts_with("-n") && a.len() > 2 && !a.starts_with("--"))
            || a.starts_with("--numprocesses")
            || a.starts_with("--dist")
            || a.starts_with("--maxprocesses")
        {
            return true;
        }
        prev = Some(a);
    }
    false
}

/// Whether `python` can import xdist (asked once per interpreter).
fn importable(python: &Interpreter) -> bool {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(&k) = known
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&python.path)
    {
        return k;
    }
    let mut cmd = std::process::Command::new(&python.path);
    cmd.args(["-c", "import xdist"])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let ok = crate::process::run_command(cmd, Duration::from_secs(60))
        .is_ok_and(|r| r.exit_code == Some(0));
    known
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(python.path.clone(), ok);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_xdist_arguments_win() {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert!(user_decides(&s(&["-n", "4"])));
        assert!(user_decides(&s(&["-n4"])));
        assert!(user_decides(&s(&["--numprocesses=auto"])));
        assert!(user_decides(&s(&["-p", "no:xdist"])));
        assert!(user_decides(&s(&["-pno:xdist"])));
        assert!(user_decides(&s(&["--dist", "loadfile"])));
        assert!(!user_decides(&s(&[
            "-x",
            "--no-header",
            "-p",
            "no:randomly"
        ])));
        assert!(!user_decides(&s(&[])));
    }
}
