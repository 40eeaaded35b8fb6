//! The per-test limit of the search's targeted runs when the failure is a hang (a test stopped
//! by the per-test limit) or a `RecursionError` (issue 22 §4). Many of their candidates leave
//! the loop endless or the recursion unbounded; each such candidate must cost little, not the
//! global `--test-timeout`. A right fix makes the test run about as long as its neighbours: the
//! limit is [`FACTOR`] times what the passing tests of the same test file took in the baseline
//! (the plugin records it, see [`crate::probe::frame_facts::Baseline::passing_ms`]), at least
//! [`MIN_LIMIT`] (a loaded machine, an import the first call pays) and at most the run's own
//! per-test limit (`--test-timeout`). A file with no passing test keeps the search's usual
//! limit. The limit only rejects: a candidate stopped by it is never kept, so a fix missed for
//! it is reported like any other miss, never passed.

use std::time::Duration;

use crate::rules::Category;
use crate::session::runs::Runs;
use crate::traceback::Failure;

/// The limit is this many times the file's passing time.
pub(in crate::session) const FACTOR: u32 = 5;
/// Never shorter than this.
pub(in crate::session) const MIN_LIMIT: Duration = Duration::from_secs(1);

/// The limit for a file whose passing tests took `passing_ms` in the baseline.
pub(in crate::session) fn from_passing(passing_ms: u64) -> Duration {
    (Duration::from_millis(passing_ms) * FACTOR).max(MIN_LIMIT)
}

/// Whether the failure is one whose candidates get [`for_failure`]'s limit.
fn endless(failure: &Failure, category: Category) -> bool {
    category == Category::Timeout || failure.exc_type.rsplit('.').next() == Some("RecursionError")
}

/// The per-test limit for the search's targeted runs on `failure` (of test `test`), or `None`
/// for the search's usual one.
pub(in crate::session) fn for_failure(
    s: &Runs,
    failure: &Failure,
    category: Category,
    test: &str,
) -> Option<Duration> {
    if !endless(failure, category) {
        return None;
    }
    file_limit(s, test)
}

/// [`from_passing`] for the file of `test`, when the baseline timed its passing tests.
fn file_limit(s: &Runs, test: &str) -> Option<Duration> {
    let file = test.split("::").next().unwrap_or(test);
    s.facts.passing_ms(file).map(from_passing)
}

/// Once a plausible candidate is found, the search tries a few more for the choice among
/// them (`search::choose`); those runners-up get the same limit as a hang's candidates: a
/// runner-up that loops is never chosen, and at the usual limit (5 s at least) each one that
/// does cost more than the whole search had. Applied to the runs started from then on; never
/// longer than the limit already in force. `test` is one of the failing tests.
pub(in crate::session) fn tighten_for_runners_up(s: &mut Runs, test: &str) {
    let Some(limit) = file_limit(s, test) else {
        return;
    };
    let current = s
        .prover
        .search_test_limit
        .unwrap_or_else(|| s.prover.candidate_limit());
    s.prover.search_test_limit = Some(current.min(limit));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_times_the_passing_time_never_under_a_second() {
        assert_eq!(from_passing(0), MIN_LIMIT);
        assert_eq!(from_passing(150), MIN_LIMIT);
        assert_eq!(from_passing(400), Duration::from_secs(2));
        assert_eq!(from_passing(3_000), Duration::from_secs(15));
    }
}
