//! The runs and leads of a cause (see [`super::cause`] for what a cause is): its tests, the
//! targeted run of a search candidate over them, and the lead a candidate that makes some of
//! them pass leaves. Below the search, its proofs ([`super::searched`]) and the second edit,
//! which all use them.

use std::time::Instant;

use crate::localize::{self, Spectrum};
use crate::plan::Candidate;
use crate::runner::{PytestRun, RunSpec};
use crate::session::cause_state::Lead;
use crate::session::error::SessionError;
use crate::session::prover::Phase;
use crate::session::work::Work;
use crate::status::AttemptOutcome;
use crate::verdict::{self, Verdict};

/// The cause of `test` in `spectrum` (remembered in `ctx.cause`), and the spectrum with only
/// its failing tests as failing: what the search ranks.
pub(in crate::session) fn cause_spectrum(
    w: &mut Work<'_, '_>,
    spectrum: &Spectrum,
    test: &str,
) -> Spectrum {
    let current = w.ctx.current;
    let members = localize::cause::members(spectrum, test, |t| current.iter().any(|(c, _)| c == t));
    w.ctx.cause.others = members.iter().skip(1).cloned().collect();
    localize::cause::restrict(spectrum, &members)
}

/// The coverage run that localizes `test`: of a large suite, every file holding a test that
/// still fails, `test`'s first (the cause is read from this spectrum, so the files of the
/// tests that may share it must be in it); of a small one, the whole suite.
pub(in crate::session) fn cause_coverage(
    w: &mut Work<'_, '_>,
    test: &str,
) -> Result<Option<Spectrum>, SessionError> {
    let mut tests = vec![test.to_string()];
    for (t, _) in w.ctx.current.iter() {
        // A failure of no test (a collection error) has a headline, not a node id.
        let file = t.split("::").next().unwrap_or("");
        if t.contains("::") && file.ends_with(".py") && !tests.contains(t) {
            tests.push(t.clone());
        }
    }
    w.s.coverage_of(w.ws, &tests)
}

/// Every test of the cause (the one worked on first).
pub(in crate::session) fn cause_tests(w: &Work<'_, '_>, test: &str) -> Vec<String> {
    std::iter::once(test.to_string())
        .chain(w.ctx.cause.others.iter().cloned())
        .collect()
}

/// The targeted run of a search candidate: with `-x` for a one-test cause, else to the end
/// (which of the cause's tests pass is the candidate's partial fitness).
pub(in crate::session) fn run_targeted(
    w: &mut Work<'_, '_>,
    targeted: &[String],
) -> Result<PytestRun, SessionError> {
    let spec = targeted_spec(w, targeted);
    w.s.prover.exec_pytest(&spec, Phase::Candidate)
}

/// What [`run_targeted`] runs (a parallel proof points it at its scratch copy).
pub(in crate::session) fn targeted_spec(w: &Work<'_, '_>, targeted: &[String]) -> RunSpec {
    let mut spec = w.s.prover.candidate_spec(w.ws, targeted);
    if w.ctx.cause.partial() {
        spec.extra_args.retain(|a| a != "-x");
    }
    spec
}

/// A candidate (written) whose targeted run failed: the cause's tests it made pass, when
/// there are some and the passing tests that run its line still pass (one more run).
pub(in crate::session) fn lead_of(
    w: &mut Work<'_, '_>,
    first: &PytestRun,
    verdict: &Verdict,
    targeted: &[String],
    passing: &[String],
) -> Result<Option<Vec<String>>, SessionError> {
    let Some(fixed) = fixed_by(w, first, verdict, targeted) else {
        return Ok(None);
    };
    if !passing.is_empty() {
        let run = w.s.prover.run_candidate(w.ws, passing)?;
        if run.timed_out || !matches!(verdict::read(&run, w.ws.root()), Verdict::Green) {
            return Ok(None);
        }
    }
    Ok(Some(fixed))
}

/// The cause's tests a failed targeted run made pass (none when the search measures no
/// partial fitness now, or the run says nothing about which passed).
pub(in crate::session) fn fixed_by(
    w: &Work<'_, '_>,
    first: &PytestRun,
    verdict: &Verdict,
    targeted: &[String],
) -> Option<Vec<String>> {
    if !w.ctx.cause.partial() || w.ctx.cause.combining || first.timed_out {
        return None;
    }
    crate::session::cause_state::fixed_by(verdict, targeted)
}

/// The representative passed but other tests of the cause still fail: the last attempt says
/// which (its own failure would say nothing).
pub(in crate::session) fn cause_still_failing(w: &mut Work<'_, '_>, said: Option<String>) {
    let Some(a) = w.ctx.attempts.last_mut() else {
        return;
    };
    if a.new_failure.is_none() && a.outcome == AttemptOutcome::StillFailing {
        a.new_failure = said;
    }
}

/// Whether the single edits have had half the search time and there is a lead: the rest is
/// the second edit's (a lead found late would otherwise never be combined).
pub(in crate::session) fn time_to_combine(w: &Work<'_, '_>, deadline: Instant) -> bool {
    !w.ctx.cause.leads.is_empty() && Instant::now() + w.s.opts.search_time / 2 >= deadline
}

/// Keeps the candidate just recorded (the last attempt) as a lead.
pub(in crate::session) fn keep_lead(w: &mut Work<'_, '_>, cand: &Candidate, fixed: Vec<String>) {
    let attempt = w.ctx.attempts.len().saturating_sub(1);
    if let Some(a) = w.ctx.attempts.get_mut(attempt) {
        a.search.get_or_insert_with(Default::default).lead = fixed.clone();
    }
    w.ctx.cause.leads.push(Lead {
        cand: cand.clone(),
        fixed,
        attempt,
    });
}
