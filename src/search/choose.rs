//! Choosing among plausible candidates: several edits may pass every proof (the failing tests,
//! the tests that cover the edited line, the whole suite). The tests cannot tell them apart by
//! outcome, so the search compares behaviour: which of the passing tests that ran the edited
//! line now run other lines (their per-test line coverage differs from the baseline's). A
//! correct patch changes what the failing tests do and leaves the passing ones alone (the
//! test-behaviour similarity heuristic of Xiong et al., "Identifying Patch Correctness in
//! Test-Based Program Repair", ICSE 2018). Fewest changed behaviours wins, then the search's
//! own order (which puts the smaller edit first among equal ranks).
//!
//! Gathering costs runs, so it is bounded: after the first plausible candidate the search tries
//! at most [`EXTRA_TRIES`] more and keeps at most [`MAX_PLAUSIBLE`], always inside
//! `--search-time`; a behaviour run (one coverage run) is made only when there are two or more
//! to compare.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::localize::Spectrum;

/// Candidates tried after the first plausible one. The list is ranked, so the next few are the
/// likeliest alternatives; ten more failing-test runs cost about ten pytest starts (a few
/// seconds on an idle machine), a small share of the default 60 s `--search-time`.
pub const EXTRA_TRIES: usize = 10;

/// Plausible candidates compared at most: each costs a full-suite proof and a coverage run.
pub const MAX_PLAUSIBLE: usize = 3;

/// One candidate that passed every proof, as the choice sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plausible {
    /// Bytes removed plus inserted.
    pub size: usize,
    /// Passing tests that ran the edited line and whose lines changed (see [`changed_tests`]);
    /// `None` when it was not measured (a single plausible candidate, or the run failed).
    pub changed: Option<BTreeSet<String>>,
}

/// A runner-up: a candidate that passed every proof too, reported on the kept fix (the JSON's
/// `patches[].alternatives`) so that a user or an agent can pick it instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alternative {
    pub file: String,
    pub rule: String,
    pub title: String,
    /// Against the same file as the kept fix's own step.
    pub diff: String,
    /// Its changed behaviours (see [`Plausible::changed`]); null when not measured.
    pub changed: Option<Vec<String>>,
}

/// The index of the candidate to keep: fewest changed behaviours (unmeasured counts as none
/// known, after every measured one), then the earlier try. The search's order already puts
/// the smaller edit first among equal ranks; raw size across ranks is not used: it preferred
/// `- n * 1` (2 bytes changed) to dropping `+ 1` (4 bytes) in bugs_e2e.
pub fn best(plausible: &[Plausible]) -> Option<usize> {
    (0..plausible.len()).min_by_key(|&i| {
        let p = &plausible[i];
        (p.changed.as_ref().map_or(usize::MAX, BTreeSet::len), i)
    })
}

/// The others than `kept`, best first by [`best`]'s order: the runners-up.
pub fn runners_up(plausible: &[Plausible], kept: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..plausible.len()).filter(|&i| i != kept).collect();
    out.sort_by_key(|&i| {
        let p = &plausible[i];
        (p.changed.as_ref().map_or(usize::MAX, BTreeSet::len), i)
    });
    out
}

/// The passing tests of `covering` (tests that ran the edited line in `before`) whose covered
/// lines differ in `after`, or that are missing from it or fail there.
pub fn changed_tests(before: &Spectrum, after: &Spectrum, covering: &[String]) -> BTreeSet<String> {
    covering
        .iter()
        .filter(|t| before.tests.get(*t).is_some_and(|c| !c.failed))
        .filter(|t| match (before.tests.get(*t), after.tests.get(*t)) {
            (Some(b), Some(a)) => a.failed || a.lines != b.lines,
            _ => true,
        })
        .cloned()
        .collect()
}

/// The tests that told the kept candidate from the others: those an alternative changed and the
/// kept one did not, plus `broke` (tests that failed with a candidate that had passed the
/// failing tests).
pub fn decided_by(
    plausible: &[Plausible],
    kept: usize,
    broke: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut out: BTreeSet<String> = broke.into_iter().collect();
    let none = BTreeSet::new();
    let mine = plausible
        .get(kept)
        .and_then(|p| p.changed.as_ref())
        .unwrap_or(&none);
    for (i, p) in plausible.iter().enumerate() {
        if i != kept {
            if let Some(c) = &p.changed {
                out.extend(c.difference(mine).cloned());
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spectrum(tests: &[(&str, bool, &[u32])]) -> Spectrum {
        Spectrum::of_m_py(tests)
    }

    fn set(xs: &[&str]) -> Option<BTreeSet<String>> {
        Some(xs.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn fewest_changed_behaviours_then_the_search_order() {
        let before = spectrum(&[
            ("t::fail", true, &[1, 2]),
            ("t::a", false, &[1, 3]),
            ("t::b", false, &[1, 3]),
        ]);
        let after = spectrum(&[
            ("t::fail", false, &[1, 3]),
            ("t::a", false, &[1, 2]),
            ("t::b", false, &[1, 3]),
        ]);
        let covering = vec![
            "t::fail".to_string(),
            "t::a".to_string(),
            "t::b".to_string(),
        ];
        // The failing test is expected to change; `t::a` runs line 2 now, `t::b` is unchanged.
        assert_eq!(
            changed_tests(&before, &after, &covering),
            set(&["t::a"]).unwrap()
        );
        let p = vec![
            Plausible {
                size: 1,
                changed: set(&["t::a"]),
            },
            Plausible {
                size: 9,
                changed: set(&[]),
            },
            Plausible {
                size: 2,
                changed: set(&[]),
            },
        ];
        assert_eq!(best(&p), Some(1));
        assert_eq!(runners_up(&p, 1), vec![2, 0]);
        assert_eq!(
            decided_by(&p, 1, ["t::x".to_string()]),
            vec!["t::a", "t::x"]
        );
        let unmeasured = vec![
            Plausible {
                size: 3,
                changed: None,
            },
            Plausible {
                size: 1,
                changed: None,
            },
        ];
        assert_eq!(best(&unmeasured), Some(0));
        assert_eq!(runners_up(&unmeasured, 0), vec![1]);
        assert_eq!(best(&[]), None);
    }
}
