//! What the runs have learnt of the suite so far, kept by [`super::runs::Runs`] for the whole
//! session: the flaky tests, the lazy baseline's verdicts on the original bytes, and the tests
//! outside a narrow selection; and, in [`Held`], what the sources propose with beside the runs
//! (the stdlib index, the model). The runs that learn them are in `flaky.rs`, `lazy.rs` and
//! `outside.rs`; the state sits here, below the runs, so that those files can build on the runs.

use std::collections::BTreeSet;
use std::path::Path;

use super::model::{outcome_of, FailureOutcome, FlakyRuns};
use super::shared::{failure_key, Options};
use crate::category;
use crate::localize::imports::ImportIndex;
use crate::localize::Spectrum;
use crate::pytest_args::Widened;
use crate::runner::Interpreter;
use crate::status::FailureStatus;
use crate::traceback::{Failure, When};
use crate::transform::stdlib::Stdlib;
use crate::verdict::Verdict;

/// What the session holds for the sources beside its runs: the interpreter's standard library,
/// indexed (or read from the cache) on first use, and the opt-in model fallback (`--llm`). No
/// run reads them: the runs (`Runs`) prove, the sources propose with these.
pub(super) struct Held {
    pub(super) stdlib: Stdlib,
    /// The opt-in model fallback (`--llm`), asked when the rules have nothing (left).
    pub(super) llm: Option<crate::llm::Llm>,
}

impl Held {
    pub(super) fn new(opts: &Options, python: &Interpreter) -> Held {
        Held {
            stdlib: Stdlib::new(python.clone()),
            llm: opts.llm.clone().map(crate::llm::Llm::new),
        }
    }
}

/// The flaky tests known so far, and what the original code's runs said.
#[derive(Debug, Default)]
pub(super) struct Flaky {
    /// The baseline's failing tests (on the original code): a test that failed there is no
    /// bystander (an earlier kept patch may be what made it pass).
    pub(super) baseline: BTreeSet<(String, When)>,
    /// Flaky tests, in the order they were found: their counts and a failure they showed on
    /// the original code.
    pub(super) known: Vec<(FlakyRuns, Failure)>,
    /// Bystanders that passed every run on the original code once: blamed from then on
    /// without running them there again (a wrong candidate that breaks them costs no more).
    pub(super) stable: BTreeSet<String>,
}

impl Flaky {
    pub(super) fn is_known(&self, key: &(String, When)) -> bool {
        self.known.iter().any(|(_, f)| failure_key(f) == *key)
    }

    /// Registers a flaky test (again: its counts are replaced).
    pub(super) fn add(&mut self, runs: FlakyRuns, failure: Failure) {
        let key = failure_key(&failure);
        self.known.retain(|(_, f)| failure_key(f) != key);
        self.known.push((runs, failure));
    }

    /// `verdict` without the failures of known flaky tests: they decide nothing.
    pub(super) fn strip(&self, verdict: Verdict) -> Verdict {
        match verdict {
            Verdict::Failed(f) if !self.known.is_empty() => {
                let left: Vec<Failure> = f
                    .into_iter()
                    .filter(|f| !self.is_known(&failure_key(f)))
                    .collect();
                if left.is_empty() {
                    Verdict::Green
                } else {
                    Verdict::Failed(left)
                }
            }
            other => other,
        }
    }

    /// The outcomes of the flaky tests, for the report (`status: "flaky"` with `runs`).
    pub(super) fn outcomes(&self, root: &Path) -> Vec<FailureOutcome> {
        self.known
            .iter()
            .map(|(runs, f)| {
                let mut o = outcome_of(f, category::categorize(f, root).0);
                o.status = FailureStatus::Flaky;
                o.runs = Some(*runs);
                o.reason = Some(format!(
                    "flaky: on the same code it passed {} and failed {} of {} runs; a test that \
                     fails at random proves nothing, so it was not searched and no candidate was \
                     rejected for it",
                    runs.passed,
                    runs.failed,
                    runs.passed + runs.failed
                ));
                o
            })
            .collect()
    }
}

/// What the lazy baseline learnt of the tests outside the log's failures (keys as
/// [`failure_key`]): each test is run on the original bytes at most once.
#[derive(Debug, Default)]
pub(super) struct Lazy {
    /// Failed on the original bytes too: no breakage when they fail with a candidate.
    pub(super) failing: BTreeSet<(String, When)>,
    /// Passed on the original bytes: a candidate that fails them broke them.
    pub(super) passing: BTreeSet<(String, When)>,
    /// Whether a full run has set the per-run limit and the expected cost of a full run yet.
    pub(super) timed: bool,
}

/// What the session knows about the tests outside a narrow selection.
pub(super) struct Outside {
    pub(super) wide: Widened,
    /// The tests the narrow selection holds.
    pub(super) selected: BTreeSet<String>,
    /// Every test of the widened selection, collected on the original code.
    pub(super) suite: BTreeSet<String>,
    /// The coverage of the widened run on the original bytes; `None` when it gave nothing.
    pub(super) spectrum: Option<Spectrum>,
    /// The test files whose tests the coverage run recorded: every file of a small suite, the
    /// selection's of a large one, none when it gave nothing (under xdist from the project's
    /// `addopts`, say). A file outside it has unknown coverage.
    pub(super) traced: BTreeSet<String>,
    /// The static import index, scanned the first time an edit needs it (`None` inside: the
    /// tree was too big to scan, so every test file counts as an importer).
    pub(super) imports: Option<Option<ImportIndex>>,
}
