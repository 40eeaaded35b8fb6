//! Scoring a repair against the developer's commit: plausible (the selection passes on the
//! patched bug and no test of the fix commit that passes there breaks), correct (the kept
//! patch is the developer's change as an AST), damaged (a kept patch breaks a test of the fix
//! commit outside the selection, or `fix` left something else in the tree), and for a run
//! that kept nothing, why.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::outcomes::{Outcome, Outcomes, Pytest};
use super::repair::FixRun;
use super::reproduce::NotReproducible;
use crate::process::RunnerError;

/// A candidate's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A plausible patch whose AST is the developer's.
    Correct,
    /// A plausible patch that is not the developer's change (a wrong patch kept, unless the
    /// two are equivalent: a reviewer decides).
    Plausible,
    /// A patch kept that leaves some test of the selection failing, breaking nothing else.
    Partial,
    /// A patch kept that breaks a test of the fix commit outside the selection, or anything
    /// left in the tree besides the kept patch.
    Damaged,
    /// No patch kept; `reason` says why.
    Missed,
    /// `fix` (or a run of the replay) could not work; `detail` says why.
    Error,
    /// The commit's tests do not fail on the bug and pass on the fix; `reason` says why.
    NotReproducible,
}

/// Why a run kept no patch, from `fix`'s report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Miss {
    /// No candidate source served the failure: not one candidate was tried.
    NoCandidate,
    /// Candidates were tried and none was plausible: the right edit is not in the candidate
    /// space.
    NotInSpace,
    /// The time ran out before the candidates did: the run's budget (`out_of_time`), or a
    /// failure's search time or rank cap left candidates untried (`failures[].untried`).
    Budget,
    /// `fix` judged the failure an environment or dependency problem, not a code bug.
    Escalated,
}

/// What the checks after `fix` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Checks {
    /// Every test of the selection passes on the patched bug (null: no patch kept).
    pub selection_passed: Option<bool>,
    /// Tests of the fix commit that pass on the fix and do not pass on the patched bug (failed,
    /// errored, skipped or missing), outside the selection.
    pub broken: Vec<String>,
    /// Files that differ after `fix` from before it, other than the kept patch's and the ones
    /// the suite itself writes (see `commit::suite_writes`).
    pub leftovers: Vec<String>,
    /// The kept patch's files have the developer's ASTs (null: no patch kept).
    pub same_as_developer: Option<bool>,
    /// Both whole-suite runs finished (the fix tree's and the patched bug's): `broken` is
    /// complete.
    pub suite_checked: bool,
}

/// Why `fix` kept nothing.
pub fn miss_reason(fix: &FixRun) -> Miss {
    if fix.out_of_time || fix.untried > 0 {
        Miss::Budget
    } else if fix.final_status == "escalated" {
        Miss::Escalated
    } else if fix.attempts == 0 {
        Miss::NoCandidate
    } else {
        Miss::NotInSpace
    }
}

/// Files that differ between two snapshots (see `trees::snapshot`), the `kept` ones aside.
pub fn leftovers(
    before: &BTreeMap<String, git2::Oid>,
    after: &BTreeMap<String, git2::Oid>,
    kept: &[String],
) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .chain(after.keys().filter(|k| !before.contains_key(*k)).cloned())
        .filter(|k| !kept.contains(k))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The tests that pass on the fix tree and fail with the patch (outside the selection). A test
/// the patched run does not list counts when its file did not collect, or when tests of the same
/// function under parameter ids the fix tree's run does not have failed there: ids built from
/// the clock (`test_x[17:09:07]`) differ between two runs and say nothing by themselves.
fn broken_by(fixed: &Outcomes, patched: &Outcomes, selection: &[String]) -> Vec<String> {
    let function = |t: &str| t.split('[').next().unwrap_or(t).to_string();
    fixed
        .tests
        .iter()
        .filter(|(t, o)| **o == Outcome::Passed && !selection.contains(t))
        .filter(|(t, _)| {
            if patched.tests.contains_key(*t) || patched.failed(t) {
                return patched.failed(t);
            }
            let f = function(t);
            patched.tests.iter().any(|(p, o)| {
                *o != Outcome::Passed
                    && *o != Outcome::Other
                    && !fixed.tests.contains_key(p)
                    && function(p) == f
            })
        })
        .map(|(t, _)| t.clone())
        .collect()
}

/// Runs the checks of a kept patch: the selection on the patched bug, then the whole suite
/// there and on the fix tree. `changed` lists the files (relative to the project) the
/// developer changed.
pub fn check_patch(
    pytest: &Pytest,
    bug: &Path,
    fix_tree: &Path,
    selection: &[String],
    kept: &[String],
    changed: &[String],
) -> Result<Checks, RunnerError> {
    let sel = pytest.run(bug, selection)?;
    let selection_passed = !sel.timed_out && selection.iter().all(|t| sel.passed(t));
    let patched = pytest.run(bug, &[])?;
    let fixed = pytest.run(fix_tree, &[])?;
    let broken = broken_by(&fixed, &patched, selection);
    let mut files: Vec<&String> = kept.iter().chain(changed).collect();
    files.sort();
    files.dedup();
    let same = files
        .iter()
        .all(|f| same_module(&bug.join(f), &fix_tree.join(f)));
    Ok(Checks {
        selection_passed: Some(selection_passed),
        broken,
        leftovers: Vec::new(),
        same_as_developer: Some(same),
        suite_checked: !patched.timed_out && !fixed.timed_out,
    })
}

/// The status the checks give a kept patch.
pub fn status_of(checks: &Checks) -> Status {
    if !checks.broken.is_empty() || !checks.leftovers.is_empty() {
        Status::Damaged
    } else if checks.selection_passed != Some(true) {
        Status::Partial
    } else if !checks.suite_checked {
        // A whole-suite run did not finish: nothing says the patch broke no other test, so it
        // is not counted plausible (the detail says why).
        Status::Error
    } else if checks.same_as_developer == Some(true) {
        Status::Correct
    } else {
        Status::Plausible
    }
}

/// Two versions of a module are the same program: both missing, the same bytes, or the same
/// AST with source ranges ignored. Comparing whole modules compares exactly the edited
/// functions: both versions come from the same bug, so everything else is the same bytes.
pub fn same_module(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a).ok(), std::fs::read(b).ok()) {
        (None, None) => true,
        (Some(x), Some(y)) if x == y => true,
        (Some(x), Some(y)) => match (ast_dump(a, &x), ast_dump(b, &y)) {
            (Some(dx), Some(dy)) => dx == dy,
            _ => false,
        },
        _ => false,
    }
}

/// The module's AST as text without its source ranges.
fn ast_dump(path: &Path, bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let module = crate::syntax::parse_text(path, text).ok()?;
    let dump = format!("{:?}", module.body());
    static RANGES: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"range: \d+\.\.\d+,? ?").unwrap());
    Some(RANGES.replace_all(&dump, "").into_owned())
}

/// Why a commit got its status: a reason of reproduction or of a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Reason {
    NotReproducible(NotReproducible),
    Miss(Miss),
}

/// The status in the table's words.
pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Correct => "correct",
        Status::Plausible => "plausible",
        Status::Partial => "partial",
        Status::Damaged => "damaged",
        Status::Missed => "missed",
        Status::Error => "error",
        Status::NotReproducible => "not reproducible",
    }
}

/// A reason in the table's words.
pub fn reason_word(r: Reason) -> &'static str {
    match r {
        Reason::NotReproducible(n) => match n {
            NotReproducible::NoTestFile => "no test file",
            NotReproducible::CollectionError => "collection error",
            NotReproducible::MissingDependency => "missing dependency",
            NotReproducible::NoTests => "no tests",
            NotReproducible::PassesOnBug => "passes on the bug",
            NotReproducible::FailsOnFix => "fails on the fix",
            NotReproducible::TimedOut => "timed out",
        },
        Reason::Miss(m) => match m {
            Miss::NoCandidate => "no candidate",
            Miss::NotInSpace => "not in space",
            Miss::Budget => "budget ran out",
            Miss::Escalated => "escalated",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let (pa, pb) = (dir.path().join("a.py"), dir.path().join("b.py"));
        std::fs::write(&pa, a).unwrap();
        std::fs::write(&pb, b).unwrap();
        same_module(&pa, &pb)
    }

    #[test]
    fn asts_ignore_layout_not_meaning() {
        assert!(same(
            "def f(x):\n    return (x or '')\n",
            "def f(x):\n\n    return x   or ''  # c\n"
        ));
        assert!(!same(
            "def f(x):\n    return x or ''\n",
            "def f(x):\n    return x or \"-\"\n"
        ));
        assert!(!same(
            "def f(x):\n    return x + 1\n",
            "def f(x):\n    return x - 1\n"
        ));
        assert!(!same("x = 1\n", "x = (\n"));
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    fn run(tests: &[(&str, Outcome)], collect_errors: &[&str]) -> Outcomes {
        Outcomes {
            tests: tests.iter().map(|(t, o)| (t.to_string(), *o)).collect(),
            collect_errors: collect_errors
                .iter()
                .map(|f| (f.to_string(), "ImportError".to_string()))
                .collect(),
            timed_out: false,
        }
    }

    #[test]
    fn a_test_id_built_from_the_clock_is_no_breakage_but_a_vanished_file_is() {
        use Outcome::*;
        let fixed = run(
            &[
                ("t.py::test_a", Passed),
                ("t.py::test_now[17:09:07]", Passed),
                ("u.py::test_b", Passed),
                ("v.py::test_c", Passed),
            ],
            &[],
        );
        // The clock moved on: the same test under another id, passing.
        let patched = run(
            &[
                ("t.py::test_a", Passed),
                ("t.py::test_now[17:09:31]", Passed),
                ("v.py::test_c", Failed),
            ],
            &["u.py"],
        );
        assert_eq!(
            broken_by(&fixed, &patched, &[]),
            ["u.py::test_b", "v.py::test_c"]
        );
        // Under another id and failing: broken.
        let failing = run(
            &[
                ("t.py::test_a", Passed),
                ("t.py::test_now[17:09:31]", Failed),
                ("u.py::test_b", Passed),
                ("v.py::test_c", Passed),
            ],
            &[],
        );
        assert_eq!(
            broken_by(&fixed, &failing, &[]),
            ["t.py::test_now[17:09:07]"]
        );
    }

    fn checks(selection_passed: bool, broken: &[&str], leftovers: &[&str], same: bool) -> Checks {
        Checks {
            selection_passed: Some(selection_passed),
            broken: broken.iter().map(|s| s.to_string()).collect(),
            leftovers: leftovers.iter().map(|s| s.to_string()).collect(),
            same_as_developer: Some(same),
            suite_checked: true,
        }
    }

    #[test]
    fn damage_wins_then_the_selection_then_the_ast() {
        assert_eq!(status_of(&checks(true, &[], &[], true)), Status::Correct);
        assert_eq!(status_of(&checks(true, &[], &[], false)), Status::Plausible);
        assert_eq!(status_of(&checks(false, &[], &[], true)), Status::Partial);
        assert_eq!(
            status_of(&checks(true, &["t.py::x"], &[], true)),
            Status::Damaged
        );
        assert_eq!(
            status_of(&checks(true, &[], &["notes.txt"], true)),
            Status::Damaged
        );
        let unchecked = Checks {
            suite_checked: false,
            ..checks(true, &[], &[], true)
        };
        assert_eq!(status_of(&unchecked), Status::Error);
    }

    #[test]
    fn leftovers_are_every_change_but_the_kept_patch() {
        let id = |s: &str| git2::Oid::hash_object(git2::ObjectType::Blob, s.as_bytes()).unwrap();
        let before: BTreeMap<String, git2::Oid> =
            [("a.py", id("1")), ("b.py", id("2")), ("c.py", id("3"))]
                .map(|(k, v)| (k.to_string(), v))
                .into();
        let after: BTreeMap<String, git2::Oid> =
            [("a.py", id("9")), ("b.py", id("8")), ("new.txt", id("x"))]
                .map(|(k, v)| (k.to_string(), v))
                .into();
        assert_eq!(
            leftovers(&before, &after, &["a.py".to_string()]),
            ["b.py", "c.py", "new.txt"]
        );
    }
}
