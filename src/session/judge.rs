//! The verdict of a full-suite run that confirms candidates, shared by the rule loop, the
//! search and the batch confirmation: baseline-aware (a test that failed before may still
//! fail), and a run that gives no verdict proves nothing.

use std::collections::BTreeSet;

use super::model::Attempt;
use super::shared::failure_keys;
use crate::status::AttemptOutcome;
use crate::traceback::{Failure, When};
use crate::verdict::Verdict;

/// What a confirming full run says about the candidates in the tree.
#[derive(Debug)]
pub(super) enum FullRun {
    /// Nothing failed that did not fail before, and every fixed test passed: the run's
    /// failures, the new reference set.
    Accepted(Vec<Failure>),
    /// A test the candidates fixed failed again in the full run (it passed alone).
    FixedBack(Vec<String>),
    /// Tests that did not fail before fail now.
    Broke(Vec<String>),
    TimedOut,
    /// No verdict (pytest error, interrupted, unreadable output).
    NoVerdict(String),
}

/// Judges `verdict` against `current` (what failed before the candidates), given the failures
/// the candidates fixed (`fixed`, as (test, phase) keys). With `blind` (the reference run saw no
/// test: a conftest did not import), what fails now is work, not breakage.
pub(super) fn judge_full_run(
    verdict: Verdict,
    current: &BTreeSet<(String, When)>,
    fixed: &[(String, When)],
    blind: bool,
) -> FullRun {
    let after = match verdict {
        Verdict::Green => Vec::new(),
        Verdict::Failed(f) => f,
        Verdict::TimedOut => return FullRun::TimedOut,
        other => return FullRun::NoVerdict(other.describe()),
    };
    let after_keys = failure_keys(&after);
    let back: Vec<String> = fixed
        .iter()
        .filter(|k| after_keys.contains(k))
        .map(|(t, _)| t.clone())
        .collect();
    if !back.is_empty() {
        return FullRun::FixedBack(back);
    }
    let broke: Vec<String> = if blind {
        Vec::new()
    } else {
        after_keys
            .iter()
            .filter(|k| !current.contains(k))
            .map(|(t, _)| t.clone())
            .collect()
    };
    if broke.is_empty() {
        FullRun::Accepted(after)
    } else {
        FullRun::Broke(broke)
    }
}

impl FullRun {
    /// Writes the verdict into the attempt (`accepted`, `new_failures`, `timeout`,
    /// `suite_error`, or a fixed test back) and returns the run's failures when accepted.
    pub(super) fn record(self, attempt: &mut Attempt) -> Option<Vec<Failure>> {
        match self {
            FullRun::Accepted(after) => {
                attempt.outcome = AttemptOutcome::Accepted;
                return Some(after);
            }
            FullRun::FixedBack(back) => {
                attempt.new_failure = Some(if back.len() > 1 {
                    format!(
                        "the tests passed alone but failed in the full run: {}",
                        back.join(", ")
                    )
                } else {
                    "the test passed alone but failed in the full run".into()
                });
            }
            FullRun::Broke(broke) => {
                attempt.outcome = AttemptOutcome::NewFailures;
                attempt.broke = broke;
            }
            FullRun::TimedOut => attempt.outcome = AttemptOutcome::Timeout,
            FullRun::NoVerdict(why) => {
                attempt.outcome = AttemptOutcome::SuiteError;
                attempt.new_failure = Some(why);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(test: &str) -> Failure {
        let log = format!(
            "=================================== FAILURES ===================================\n\
             ___ t ___\n\
             E   ValueError: x\n\
             =========================== short test summary info ============================\n\
             FAILED {test} - ValueError: x\n"
        );
        let mut f = crate::traceback::parse(log.as_bytes(), std::path::Path::new("/nonexistent"))
            .unwrap()
            .failures;
        let mut one = f.remove(0);
        one.test = Some(test.to_string());
        one.when = When::Call;
        one
    }

    fn keys(tests: &[&str]) -> BTreeSet<(String, When)> {
        tests.iter().map(|t| (t.to_string(), When::Call)).collect()
    }

    #[test]
    fn a_failure_of_the_reference_set_is_no_breakage() {
        let current = keys(&["t.py::a", "t.py::b"]);
        let fixed = [("t.py::a".to_string(), When::Call)];
        let v = judge_full_run(
            Verdict::Failed(vec![failure("t.py::b")]),
            &current,
            &fixed,
            false,
        );
        assert!(matches!(v, FullRun::Accepted(ref f) if f.len() == 1));
    }

    #[test]
    fn a_new_failure_breaks_and_a_fixed_test_back_is_not_proven() {
        let current = keys(&["t.py::a"]);
        let fixed = [("t.py::a".to_string(), When::Call)];
        let v = judge_full_run(
            Verdict::Failed(vec![failure("t.py::c")]),
            &current,
            &fixed,
            false,
        );
        assert!(matches!(v, FullRun::Broke(ref b) if b == &["t.py::c".to_string()]));
        let v = judge_full_run(
            Verdict::Failed(vec![failure("t.py::a"), failure("t.py::c")]),
            &current,
            &fixed,
            false,
        );
        assert!(matches!(v, FullRun::FixedBack(ref b) if b == &["t.py::a".to_string()]));
        // Blind: the suite was not seen before, so a new failure is work, not breakage.
        let v = judge_full_run(
            Verdict::Failed(vec![failure("t.py::c")]),
            &current,
            &fixed,
            true,
        );
        assert!(matches!(v, FullRun::Accepted(_)));
    }

    #[test]
    fn no_verdict_proves_nothing() {
        let current = keys(&[]);
        let v = judge_full_run(Verdict::Error("boom".into()), &current, &[], false);
        assert!(matches!(v, FullRun::NoVerdict(ref m) if m == "boom"));
        let v = judge_full_run(Verdict::TimedOut, &current, &[], false);
        assert!(matches!(v, FullRun::TimedOut));
    }
}
