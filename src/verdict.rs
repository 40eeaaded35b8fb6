//! What a pytest run says, read from its exit status together with its output. Green means
//! pytest exited 0 and nothing else: a usage error, an internal error, an interrupted session,
//! a signal, or a status 1 whose failures cannot be read is never taken for a pass.
//!
//! | pytest status | verdict |
//! | --- | --- |
//! | 0 | `Green` |
//! | 1 | `Failed` with the failures read; `Error` when none can be read |
//! | 2 (interrupted), 3 (internal error), other, signal | `Error` with pytest's message |
//! | 4 | `Failed` when a `conftest.py` (or what it imports) raised, or a selected test's module failed to import; else `Usage` |
//! | 5 | `NoTests` |
//! | killed at the time limit | `TimedOut` |
//! | ended by the plugin's hang backstop | `Error` naming the test and its frame |

use std::path::Path;

use crate::runner::PytestRun;
use crate::traceback::{self, Failure};

#[derive(Debug)]
pub enum Verdict {
    Green,
    Failed(Vec<Failure>),
    NoTests,
    /// pytest refused its arguments (exit 4): its own message.
    Usage(String),
    /// No verdict: pytest's message, or why the output could not be read.
    Error(String),
    TimedOut,
}

impl Verdict {
    /// Failures that can be compared with a baseline (`Green` has none); `None` when the run
    /// gave no verdict at all.
    pub fn failures(&self) -> Option<&[Failure]> {
        match self {
            Verdict::Green => Some(&[]),
            Verdict::Failed(f) => Some(f),
            _ => None,
        }
    }

    /// A short description for reports: `pytest error: ...`.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Green => "all selected tests passed".into(),
            Verdict::Failed(f) => format!("{} failure(s)", f.len()),
            Verdict::NoTests => "no tests were collected".into(),
            Verdict::Usage(m) => format!("pytest usage error: {m}"),
            Verdict::Error(m) => m.clone(),
            Verdict::TimedOut => "pytest did not finish in time".into(),
        }
    }
}

/// Reads one run. `root` resolves the failures' paths.
pub fn read(run: &PytestRun, root: &Path) -> Verdict {
    if run.timed_out {
        return Verdict::TimedOut;
    }
    if let Some(hang) = &run.hang {
        return Verdict::Error(hang.describe());
    }
    let log = run.log();
    match (run.exit_code, run.signal) {
        (Some(0), _) => Verdict::Green,
        (Some(1), _) => {
            let failures = traceback::parse(&log, root)
                .map(|p| p.failures)
                .unwrap_or_default();
            if failures.is_empty() {
                Verdict::Error(format!(
                    "pytest reported failing tests (exit 1) but printed no failure that can be \
                     read{}",
                    last_line(&log)
                        .map(|l| format!(": {l}"))
                        .unwrap_or_default()
                ))
            } else {
                Verdict::Failed(failures)
            }
        }
        (Some(4), _) => match traceback::conftest::parse(&log, root) {
            Some(f) => Verdict::Failed(vec![f]),
            // A selected test whose module does not import (`found no collectors`): the
            // collection error is the failure, not the arguments.
            None => match traceback::parse(&log, root).map(|p| p.failures) {
                Ok(f) if !f.is_empty() && f.iter().all(|f| f.when == traceback::When::Collect) => {
                    Verdict::Failed(f)
                }
                _ => Verdict::Usage(usage_message(&log)),
            },
        },
        (Some(5), _) => Verdict::NoTests,
        (Some(2), _) => Verdict::Error(format!(
            "pytest was interrupted (exit 2){}",
            message(&log).map(|m| format!(": {m}")).unwrap_or_default()
        )),
        (Some(3), _) => Verdict::Error(format!(
            "pytest hit an internal error (exit 3){}",
            message(&log).map(|m| format!(": {m}")).unwrap_or_default()
        )),
        (Some(n), _) => Verdict::Error(format!(
            "pytest exited with status {n}{}",
            message(&log).map(|m| format!(": {m}")).unwrap_or_default()
        )),
        (None, Some(sig)) => Verdict::Error(format!("pytest was killed by signal {sig}")),
        (None, None) => Verdict::Error("pytest ended without an exit status".into()),
    }
}

/// argparse's `prog: error: ...` line, else pytest's `ERROR: ...` line (with the `(no match
/// ...)` detail pytest prints under an unknown node id), else the last line.
fn usage_message(log: &[u8]) -> String {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    if let Some(l) = lines.iter().find(|l| l.contains(": error: ")) {
        return l.to_string();
    }
    if let Some(i) = lines
        .iter()
        .position(|l| l.starts_with("ERROR: ") && !l.starts_with("ERROR: usage:"))
    {
        let mut msg = lines[i].trim_start_matches("ERROR: ").to_string();
        if let Some(next) = lines.get(i + 1).filter(|n| n.starts_with('(')) {
            msg.push(' ');
            msg.push_str(next);
        }
        return msg;
    }
    last_line(log).unwrap_or_else(|| "pytest refused its arguments (exit 4)".into())
}

/// The line that says what went wrong in an interrupted or broken session.
fn message(log: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines
        .iter()
        .find(|l| l.starts_with("INTERNALERROR> ") && l.contains("Error"))
        .or_else(|| lines.iter().rev().find(|l| l.starts_with("E   ")))
        .or_else(|| lines.iter().rev().find(|l| l.starts_with("!!!")))
        .map(|l| l.trim_start_matches("INTERNALERROR> ").trim().to_string())
        .or_else(|| last_line(log))
}

fn last_line(log: &[u8]) -> Option<String> {
    String::from_utf8_lossy(log)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| l.trim_matches('=').trim().to_string())
}
