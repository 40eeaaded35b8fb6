//! The search's state for one cause (see `sources/cause.rs`): the cause's other failing tests and
//! the leads found so far. Its own file so that the search and the cause's extensions of it
//! both read it without importing each other.

use std::collections::BTreeSet;

use crate::plan::Candidate;
use crate::verdict::Verdict;

/// The search's cause state for one failure.
#[derive(Default)]
pub(in crate::session) struct Cause {
    /// The cause's other failing tests, searched with this one.
    pub others: Vec<String>,
    /// Candidates that fixed some of the cause's tests and broke no passing test.
    pub(super) leads: Vec<Lead>,
    /// The second edit is being searched: no new leads.
    pub(super) combining: bool,
}

/// A candidate that made some of the cause's failing tests pass.
pub(super) struct Lead {
    pub cand: Candidate,
    /// The cause's tests it made pass.
    pub fixed: Vec<String>,
    /// Its record in `ctx.attempts`.
    pub attempt: usize,
}

impl Cause {
    /// Whether the targeted run must go on past a failure (partial fitness is measured).
    pub fn partial(&self) -> bool {
        !self.others.is_empty()
    }
}

/// The targeted tests a failed run made pass: none when it did not fail, no test passed, or a
/// failure names no test (a collection error says nothing about which passed).
pub(in crate::session) fn fixed_by(verdict: &Verdict, targeted: &[String]) -> Option<Vec<String>> {
    let Verdict::Failed(failures) = verdict else {
        return None;
    };
    if failures.iter().any(|f| f.test.is_none()) {
        return None;
    }
    let failing: BTreeSet<&str> = failures.iter().filter_map(|f| f.test.as_deref()).collect();
    let fixed: Vec<String> = targeted
        .iter()
        .filter(|t| !failing.contains(t.as_str()))
        .cloned()
        .collect();
    (!fixed.is_empty()).then_some(fixed)
}

/// What a targeted run of a cause says when tests of it still fail (see
/// `sources/targeted.rs`).
pub(in crate::session) fn still_failing_said(verdict: &Verdict) -> Option<String> {
    let failures = verdict.failures()?;
    let first = failures.first()?;
    Some(format!(
        "{} test{} of the cause still fail{} ({}: {}: {})",
        failures.len(),
        if failures.len() == 1 { "" } else { "s" },
        if failures.len() == 1 { "s" } else { "" },
        first.test.as_deref().unwrap_or("?"),
        first.exc_type,
        crate::traceback::first_line(&first.msg)
    ))
}
