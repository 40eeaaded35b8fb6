//! Reproduction: the commit's changed or added test files run on the bug tree and on the fix
//! tree. The selection is the tests that fail on the bug and pass on the fix; when there is
//! none, the commit is not reproducible, and why.

use serde::{Deserialize, Serialize};

use super::outcomes::{Outcomes, Pytest};
use crate::process::RunnerError;

/// Why a candidate did not reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotReproducible {
    /// The commit's test files (in the project) are only `conftest.py` files or lie outside
    /// `--root`: nothing to run.
    NoTestFile,
    /// A test file did not collect on the fix tree (not a missing module).
    CollectionError,
    /// A module the tests import is not installed in the interpreter's environment, or the
    /// configuration's pytest options need a plugin it does not have.
    MissingDependency,
    /// The test files collect no test on the fix tree.
    NoTests,
    /// Every test that passes on the fix passes on the bug too.
    PassesOnBug,
    /// The tests that fail on the bug fail on the fix too.
    FailsOnFix,
    /// A run did not finish within `--timeout`.
    TimedOut,
}

/// The outcome of reproduction (what the cache keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reproduction {
    /// The selection, sorted.
    Reproduced(Vec<String>),
    NotReproducible {
        reason: NotReproducible,
        detail: String,
    },
}

/// Runs `files` on both trees and compares.
pub fn reproduce(
    pytest: &Pytest,
    files: &[String],
    bug: &std::path::Path,
    fix: &std::path::Path,
) -> Result<Reproduction, RunnerError> {
    if files.is_empty() {
        return Ok(not(
            NotReproducible::NoTestFile,
            "the commit changes no test module inside the project (only conftest.py, or outside --root)",
        ));
    }
    let on_fix = pytest.run(fix, files)?;
    if on_fix.timed_out {
        return Ok(not(
            NotReproducible::TimedOut,
            "the tests did not finish on the fix",
        ));
    }
    let on_bug = pytest.run(bug, files)?;
    if on_bug.timed_out {
        return Ok(not(
            NotReproducible::TimedOut,
            "the tests did not finish on the bug",
        ));
    }
    Ok(compare(&on_bug, &on_fix))
}

/// The selection, or why there is none.
pub fn compare(on_bug: &Outcomes, on_fix: &Outcomes) -> Reproduction {
    let selection: Vec<String> = on_fix
        .tests
        .keys()
        .filter(|t| on_fix.passed(t) && on_bug.failed(t))
        .cloned()
        .collect();
    if !selection.is_empty() {
        return Reproduction::Reproduced(selection);
    }
    if let Some(what) = on_fix.missing() {
        return not(NotReproducible::MissingDependency, &what);
    }
    if let Some((file, msg)) = on_fix.collect_errors.first() {
        let file = if file.is_empty() { "the session" } else { file };
        return not(
            NotReproducible::CollectionError,
            &format!("{file} did not collect on the fix: {msg}"),
        );
    }
    if on_fix.tests.is_empty() {
        return not(
            NotReproducible::NoTests,
            "the commit's test files collect no test",
        );
    }
    let failing_on_bug: Vec<&String> = on_fix.tests.keys().filter(|t| on_bug.failed(t)).collect();
    match failing_on_bug.first() {
        None => not(
            NotReproducible::PassesOnBug,
            "every test of the commit passes on the bug too",
        ),
        Some(t) => not(
            NotReproducible::FailsOnFix,
            &format!("{t} fails on the fix too ({} such)", failing_on_bug.len()),
        ),
    }
}

fn not(reason: NotReproducible, detail: &str) -> Reproduction {
    Reproduction::NotReproducible {
        reason,
        detail: detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::outcomes::read_summary;

    fn runs(bug: &str, fix: &str) -> Reproduction {
        let summary = |s: &str| {
            read_summary(&format!(
                "= short test summary info =\n{s}=== 1 passed ===\n"
            ))
        };
        compare(&summary(bug), &summary(fix))
    }

    fn reason(r: Reproduction) -> NotReproducible {
        match r {
            Reproduction::NotReproducible { reason, .. } => reason,
            Reproduction::Reproduced(s) => panic!("reproduced: {s:?}"),
        }
    }

    #[test]
    fn the_selection_fails_on_the_bug_and_passes_on_the_fix() {
        let fix = "PASSED t.py::a\nPASSED t.py::b\nPASSED t.py::c\nFAILED t.py::d - x\n";
        let bug = "FAILED t.py::a - x\nPASSED t.py::b\nERROR t.py::c - e\nFAILED t.py::d - x\n";
        assert_eq!(
            runs(bug, fix),
            Reproduction::Reproduced(vec!["t.py::a".into(), "t.py::c".into()])
        );
        // A test module that does not import on the bug (it imports what the fix added).
        let bug = "ERROR t.py - ImportError: cannot import name 'new'\n";
        assert_eq!(
            runs(bug, "PASSED t.py::a\n"),
            Reproduction::Reproduced(vec!["t.py::a".into()])
        );
    }

    #[test]
    fn why_a_commit_does_not_reproduce() {
        assert_eq!(
            reason(runs("PASSED t.py::a\n", "PASSED t.py::a\n")),
            NotReproducible::PassesOnBug
        );
        assert_eq!(
            reason(runs("FAILED t.py::a - x\n", "FAILED t.py::a - x\n")),
            NotReproducible::FailsOnFix
        );
        let missing = "ERROR t.py - ModuleNotFoundError: No module named 'hypothesis'\n";
        assert_eq!(
            reason(runs(missing, missing)),
            NotReproducible::MissingDependency
        );
        let broken = "ERROR t.py - SyntaxError: invalid syntax\n";
        assert_eq!(
            reason(runs(broken, broken)),
            NotReproducible::CollectionError
        );
        assert_eq!(reason(runs("", "")), NotReproducible::NoTests);
    }
}
