//! One pytest run on a reconstructed tree, and each test's outcome read from pytest's short
//! summary (`-rA` lists every test: `PASSED id`, `FAILED id - msg`, `ERROR id - msg`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use crate::process::RunnerError;
use crate::runner::{self, Interpreter, RunSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    Error,
    /// Skipped, xfailed or xpassed: neither proves nor breaks anything here.
    Other,
}

/// The outcomes of one run.
#[derive(Debug, Clone, Default)]
pub struct Outcomes {
    pub tests: BTreeMap<String, Outcome>,
    /// Files that did not collect (or `""` for the whole session: a conftest that did not
    /// import, a usage error), with pytest's one-line reason.
    pub collect_errors: Vec<(String, String)>,
    pub timed_out: bool,
}

impl Outcomes {
    pub fn passed(&self, id: &str) -> bool {
        self.tests.get(id) == Some(&Outcome::Passed)
    }

    /// `id` failed, errored, or did not run because its file (or the session) did not collect.
    pub fn failed(&self, id: &str) -> bool {
        match self.tests.get(id) {
            Some(o) => matches!(o, Outcome::Failed | Outcome::Error),
            None => {
                let file = id.split("::").next().unwrap_or(id);
                self.collect_errors
                    .iter()
                    .any(|(f, _)| f.is_empty() || f == file)
            }
        }
    }

    /// What a collection error says the environment lacks: a module (`No module named 'x'`),
    /// or the plugin behind options pytest does not know (`unrecognized arguments: --cov`).
    pub fn missing(&self) -> Option<String> {
        self.collect_errors.iter().find_map(|(_, msg)| {
            if let Some(rest) = msg.split("No module named ").nth(1) {
                let module = rest.trim().trim_matches(|c| c == '\'' || c == '"');
                return Some(format!("the tests import {module}, which the interpreter does not have"));
            }
            let options = msg.split("unrecognized arguments: ").nth(1)?;
            Some(format!(
                "pytest does not know {} (the configuration needs a plugin the interpreter does not have)",
                options.trim()
            ))
        })
    }
}

/// How one replay runs pytest: the interpreter, the extra environment (`PYTHONPATH` to the
/// tree's `src/`), the per-run limit.
#[derive(Debug, Clone)]
pub struct Pytest {
    pub python: Interpreter,
    pub timeout: Duration,
    /// The user's pytest arguments (after the second `--` of replay's command line), as `fix`
    /// gets them.
    pub extra: Vec<String>,
}

impl Pytest {
    /// Runs pytest in `cwd` on `args` (test files or node ids; none: the whole suite).
    pub fn run(&self, cwd: &Path, args: &[String]) -> Result<Outcomes, RunnerError> {
        let mut spec = RunSpec::new(cwd);
        // `-rA` after the user's arguments: the summary must list every test.
        spec.extra_args = self
            .extra
            .iter()
            .cloned()
            .chain(["-rA".to_string()])
            .chain(args.iter().cloned())
            .collect();
        spec.env = pythonpath(cwd);
        spec.timeout = self.timeout;
        spec.test_timeout = Some(runner::DEFAULT_TEST_TIMEOUT);
        let run = runner::run_pytest(&self.python, &spec)?;
        let log = run.log();
        let mut out = read_summary(&String::from_utf8_lossy(&log));
        out.timed_out = run.timed_out;
        if out.collect_errors.iter().any(|(_, msg)| msg.is_empty()) {
            collect_messages(&mut out, &log, cwd);
        }
        if out.tests.is_empty()
            && out.collect_errors.is_empty()
            && matches!(run.exit_code, Some(2..=4))
        {
            out.collect_errors
                .push((String::new(), first_error(&run.log())));
        }
        Ok(out)
    }
}

/// The exception of each collection error whose summary line has no message (pytest prints
/// none for an import error), read from the log's error sections.
fn collect_messages(out: &mut Outcomes, log: &[u8], cwd: &Path) {
    let Ok(parsed) = crate::traceback::parse(log, cwd) else {
        return;
    };
    for (file, msg) in out.collect_errors.iter_mut().filter(|(_, m)| m.is_empty()) {
        let found = parsed
            .failures
            .iter()
            .find(|f| f.test.as_deref() == Some(file.as_str()));
        if let Some(f) = found {
            let first = f.msg.lines().next().unwrap_or("");
            *msg = format!("{}: {first}", f.exc_type);
        }
    }
}

/// `PYTHONPATH` for runs in a tree: its `src/` (a src layout installed in editable mode would
/// otherwise import the user's working copy, not the tree), then the user's.
pub fn pythonpath(cwd: &Path) -> Vec<(OsString, OsString)> {
    let src = cwd.join("src");
    if !src.is_dir() {
        return Vec::new();
    }
    let mut value = OsString::from(src);
    if let Some(user) = std::env::var_os("PYTHONPATH").filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(user);
    }
    vec![(OsString::from("PYTHONPATH"), value)]
}

/// The first line of a log that says what went wrong (`E   ...`, `ERROR: ...`, an exception).
fn first_error(log: &[u8]) -> String {
    let text = String::from_utf8_lossy(log);
    // pytest's own usage error (`python -m pytest: error: unrecognized arguments: ...`) says
    // more than the usage line before it.
    if let Some(l) = text.lines().find_map(|l| l.split_once(": error: ")) {
        return l.1.trim().chars().take(200).collect();
    }
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("E ") || l.starts_with("ERROR") || l.contains("Error:"))
        .or_else(|| text.lines().map(str::trim).rfind(|l| !l.is_empty()))
        .unwrap_or("pytest printed nothing");
    line.trim_start_matches("E ")
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// The outcomes pytest's short test summary lists.
pub fn read_summary(log: &str) -> Outcomes {
    let mut out = Outcomes::default();
    let mut in_summary = false;
    for line in log.lines() {
        if line.starts_with('=') && line.contains("short test summary info") {
            in_summary = true;
            continue;
        }
        if !in_summary {
            continue;
        }
        if line.starts_with('=') {
            in_summary = false;
            continue;
        }
        let Some((word, rest)) = line.split_once(' ') else {
            continue;
        };
        let outcome = match word {
            "PASSED" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            "ERROR" => Outcome::Error,
            "XFAIL" | "XPASS" => Outcome::Other,
            _ => continue,
        };
        let (id, msg) = split_id(rest);
        if outcome == Outcome::Error && !id.contains("::") {
            out.collect_errors.push((id.to_string(), msg.to_string()));
            continue;
        }
        // A test with an error in teardown after it passed is listed twice: the worse counts.
        let slot = out.tests.entry(id.to_string()).or_insert(outcome);
        if *slot == Outcome::Passed || *slot == Outcome::Other {
            *slot = outcome;
        }
    }
    out
}

/// `id - message` into the two; a parametrized id may hold ` - ` inside its brackets.
fn split_id(rest: &str) -> (&str, &str) {
    let search_from = match (rest.find('['), rest.find(" - ")) {
        (Some(b), Some(d)) if b < d => rest[b..]
            .find("] - ")
            .or(rest[b..].find(']'))
            .map_or(0, |i| b + i),
        _ => 0,
    };
    match rest[search_from..].find(" - ") {
        Some(i) => (
            rest[..search_from + i].trim(),
            rest[search_from + i + 3..].trim(),
        ),
        None => (rest.trim(), ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_summary() {
        let log = "\
collected 4 items
tests/test_a.py ..F
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_p[a - b]
FAILED tests/test_a.py::test_two - assert 1 == 2
ERROR tests/test_b.py - ModuleNotFoundError: No module named 'yaml'
XFAIL tests/test_a.py::test_x - reason
========================= 1 failed, 2 passed in 0.1s ==========================
";
        let o = read_summary(log);
        assert!(o.passed("tests/test_a.py::test_one"));
        assert!(o.passed("tests/test_a.py::test_p[a - b]"));
        assert!(o.failed("tests/test_a.py::test_two"));
        assert!(o.failed("tests/test_b.py::test_never_ran"));
        assert!(!o.failed("tests/test_a.py::test_x"));
        assert_eq!(
            o.missing().as_deref(),
            Some("the tests import yaml, which the interpreter does not have")
        );
        let usage = "ERROR: usage: python -m pytest [options]\n\
                     python -m pytest: error: unrecognized arguments: --cov=x\n";
        assert_eq!(
            first_error(usage.as_bytes()),
            "unrecognized arguments: --cov=x"
        );
    }
}
