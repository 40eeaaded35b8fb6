//! One search per cause, and two-edit fixes (issue 22, item 2).
//!
//! Wrong-output failures each fail in their own test's `assert`, so crash-site groups never
//! join them; the spectrum does ([`localize::cause`]): the failing tests whose most suspicious
//! lines overlap are one cause. The search of the first of them ranks the lines with Ochiai over
//! the cause's failing tests only, runs every test of the cause in each candidate's targeted run,
//! and the others are not searched again: they are fixed by its patch, or share its outcome.
//!
//! Partial fitness: with a cause of several tests the targeted run goes on past a failure (no
//! `-x`), so a candidate that makes some of them pass is seen; when the passing tests that run
//! its line still pass, it is kept as a **lead**. When no single edit fixes the whole cause, the
//! best lead (most tests fixed, then the search's order) stays written and a second edit is
//! searched at the lines the remaining failing tests run (one more coverage run, with the lead
//! in place, ranked over those tests only); each combination is proven like any candidate
//! (every test of the cause, the passing neighbours, the whole suite). Two edits at most.

use std::time::Instant;

use super::search::{covering, titled, Suspects};
use crate::localize::{self, Spectrum};
use crate::plan::Candidate;
use crate::runner::{PytestRun, RunSpec};
use crate::session::cause_state::Lead;
use crate::session::error::SessionError;
use crate::session::runs::Phase;
use crate::session::work::{Fixed, Work};
use crate::status::AttemptOutcome;
use crate::traceback::Failure;
use crate::verdict::{self, Verdict};

/// Second edits tried on top of the lead at most (inside `--search-time` as well): the lines of
/// the remaining failures are few, and their best candidates come first.
pub const MAX_SECOND_EDITS: usize = 60;

impl Work<'_, '_> {
    /// The cause of `test` in `spectrum` (remembered in `ctx.cause`), and the spectrum with only
    /// its failing tests as failing: what the search ranks.
    pub(in crate::session) fn cause_spectrum(
        &mut self,
        spectrum: &Spectrum,
        test: &str,
    ) -> Spectrum {
        let current = self.ctx.current;
        let members =
            localize::cause::members(spectrum, test, |t| current.iter().any(|(c, _)| c == t));
        self.ctx.cause.others = members.iter().skip(1).cloned().collect();
        localize::cause::restrict(spectrum, &members)
    }

    /// The coverage run that localizes `test`: of a large suite, every file holding a test that
    /// still fails, `test`'s first (the cause is read from this spectrum, so the files of the
    /// tests that may share it must be in it); of a small one, the whole suite.
    pub(in crate::session) fn cause_coverage(
        &mut self,
        test: &str,
    ) -> Result<Option<Spectrum>, SessionError> {
        let mut tests = vec![test.to_string()];
        for (t, _) in self.ctx.current.iter() {
            // A failure of no test (a collection error) has a headline, not a node id.
            let file = t.split("::").next().unwrap_or("");
            if t.contains("::") && file.ends_with(".py") && !tests.contains(t) {
                tests.push(t.clone());
            }
        }
        self.s.coverage_of(self.ws, &tests)
    }

    /// Every test of the cause (the one worked on first).
    fn cause_tests(&self, test: &str) -> Vec<String> {
        std::iter::once(test.to_string())
            .chain(self.ctx.cause.others.iter().cloned())
            .collect()
    }

    /// The targeted run of a search candidate: with `-x` for a one-test cause, else to the end
    /// (which of the cause's tests pass is the candidate's partial fitness).
    pub(in crate::session) fn run_targeted(
        &mut self,
        targeted: &[String],
    ) -> Result<PytestRun, SessionError> {
        let spec = self.targeted_spec(targeted);
        self.s.exec_pytest(&spec, Phase::Candidate)
    }

    /// What [`Work::run_targeted`] runs (a parallel proof points it at its scratch copy).
    pub(in crate::session) fn targeted_spec(&self, targeted: &[String]) -> RunSpec {
        let mut spec = self.s.candidate_spec(self.ws, targeted);
        if self.ctx.cause.partial() {
            spec.extra_args.retain(|a| a != "-x");
        }
        spec
    }

    /// A candidate (written) whose targeted run failed: the cause's tests it made pass, when
    /// there are some and the passing tests that run its line still pass (one more run).
    pub(in crate::session) fn lead_of(
        &mut self,
        first: &PytestRun,
        verdict: &Verdict,
        targeted: &[String],
        passing: &[String],
    ) -> Result<Option<Vec<String>>, SessionError> {
        let Some(fixed) = self.fixed_by(first, verdict, targeted) else {
            return Ok(None);
        };
        if !passing.is_empty() {
            let run = self.s.run_candidate(self.ws, passing)?;
            if run.timed_out || !matches!(verdict::read(&run, self.ws.root()), Verdict::Green) {
                return Ok(None);
            }
        }
        Ok(Some(fixed))
    }

    /// The cause's tests a failed targeted run made pass (none when the search measures no
    /// partial fitness now, or the run says nothing about which passed).
    pub(in crate::session) fn fixed_by(
        &self,
        first: &PytestRun,
        verdict: &Verdict,
        targeted: &[String],
    ) -> Option<Vec<String>> {
        if !self.ctx.cause.partial() || self.ctx.cause.combining || first.timed_out {
            return None;
        }
        crate::session::cause_state::fixed_by(verdict, targeted)
    }

    /// The representative passed but other tests of the cause still fail: the last attempt says
    /// which (its own failure would say nothing).
    pub(in crate::session) fn cause_still_failing(&mut self, said: Option<String>) {
        let Some(a) = self.ctx.attempts.last_mut() else {
            return;
        };
        if a.new_failure.is_none() && a.outcome == AttemptOutcome::StillFailing {
            a.new_failure = said;
        }
    }

    /// Whether the single edits have had half the search time and there is a lead: the rest is
    /// the second edit's (a lead found late would otherwise never be combined).
    pub(in crate::session) fn time_to_combine(&self, deadline: Instant) -> bool {
        !self.ctx.cause.leads.is_empty() && Instant::now() + self.s.opts.search_time / 2 >= deadline
    }

    /// Keeps the candidate just recorded (the last attempt) as a lead.
    pub(in crate::session) fn keep_lead(&mut self, cand: &Candidate, fixed: Vec<String>) {
        let attempt = self.ctx.attempts.len().saturating_sub(1);
        if let Some(a) = self.ctx.attempts.get_mut(attempt) {
            a.search.get_or_insert_with(Default::default).lead = fixed.clone();
        }
        self.ctx.cause.leads.push(Lead {
            cand: cand.clone(),
            fixed,
            attempt,
        });
    }

    /// No single edit fixed the cause: the best lead with a second edit (see the module docs).
    /// `None` when there is no lead, or no combination passed (every file is as before; the
    /// step's reason says what was tried).
    pub(in crate::session) fn combine_lead(
        &mut self,
        failure: &Failure,
        why: &str,
        test: &str,
        deadline: Instant,
    ) -> Result<Option<Fixed>, SessionError> {
        // Most tests fixed, then the earliest (the search's order).
        let Some(best) = (0..self.ctx.cause.leads.len())
            .min_by_key(|&i| (std::cmp::Reverse(self.ctx.cause.leads[i].fixed.len()), i))
        else {
            return Ok(None);
        };
        let lead = self.ctx.cause.leads.swap_remove(best);
        self.ctx.cause.leads.clear();
        let remaining: Vec<String> = self
            .cause_tests(test)
            .into_iter()
            .filter(|t| !lead.fixed.contains(t))
            .collect();
        // The lead stays in the tree (and counts as the file's proven content, so that a
        // rejected second edit puts the lead back, not the original) while the second edit is
        // searched.
        let path = lead.cand.path.clone();
        let before = self.ctx.accepted.get(&path).cloned();
        let previous = self.previous(&lead.cand);
        self.ws.write(&path, &lead.cand.patched)?;
        self.ctx
            .accepted
            .insert(path.clone(), lead.cand.patched.clone());
        self.ctx.cause.combining = true;
        let found = self.second_edit(failure, why, test, deadline, &lead, &remaining);
        self.ctx.cause.combining = false;
        let found = found?;
        match &found {
            Some((steps, _)) => {
                for c in steps {
                    self.ctx.accepted.insert(c.path.clone(), c.patched.clone());
                }
            }
            None => {
                match before {
                    Some(b) => self.ctx.accepted.insert(path.clone(), b),
                    None => self.ctx.accepted.remove(&path),
                };
                self.ws.write(&path, &previous)?;
            }
        }
        Ok(found)
    }

    fn second_edit(
        &mut self,
        failure: &Failure,
        why: &str,
        test: &str,
        deadline: Instant,
        lead: &Lead,
        remaining: &[String],
    ) -> Result<Option<Fixed>, SessionError> {
        let lead_no = self.ctx.attempts.get(lead.attempt).map(|a| a.attempt);
        let said = |n: usize| {
            format!(
                "{why}; no single edit fixed the {} tests of the cause, and the best lead (it \
                 fixed {}) with {n} second edit{} at the lines the {} still failing test{} \
                 ran did not pass",
                lead.fixed.len() + remaining.len(),
                lead.fixed.join(", "),
                if n == 1 { "" } else { "s" },
                remaining.len(),
                if remaining.len() == 1 { "" } else { "s" },
            )
        };
        let spectrum = match self.cause_coverage(test)? {
            Some(sp) => sp,
            None => {
                self.ctx.reason = Some(said(0));
                return Ok(None);
            }
        };
        let still: Vec<String> = remaining
            .iter()
            .filter(|t| spectrum.tests.get(*t).is_some_and(|c| c.failed))
            .cloned()
            .collect();
        let spectrum = localize::cause::restrict(&spectrum, &still);
        let ranked = localize::rank(&spectrum, |_, _| true);
        let suspects = Suspects::new(&ranked, &spectrum, None);
        let Some(candidates) = self.ranked_candidates(failure, why, &suspects) else {
            self.ctx.reason = Some(said(0));
            return Ok(None);
        };
        let mut tried = 0usize;
        let total = candidates.len().min(MAX_SECOND_EDITS);
        for (i, r) in candidates.into_iter().take(MAX_SECOND_EDITS).enumerate() {
            if crate::process::interrupted() {
                break;
            }
            if Instant::now() >= deadline || !self.s.time_for_a_candidate() {
                self.ctx.untried += total - i;
                self.ctx.reason = Some(format!(
                    "{}; the time ran out (--search-time {} s, --time-budget)",
                    said(tried),
                    self.s.opts.search_time.as_secs()
                ));
                return Ok(None);
            }
            if self.ctx.already_rejected(failure, &r.candidate) {
                continue;
            }
            tried += 1;
            let covering = covering(&spectrum, &r);
            let hint = r.hint;
            let cand = titled(r, covering.len());
            if let Some(after) = self.prove_searched(failure, &cand, hint, &covering, &spectrum)? {
                if let Some(a) = self.ctx.attempts.last_mut() {
                    a.search.get_or_insert_with(Default::default).combines = lead_no;
                }
                return Ok(Some((vec![lead.cand.clone(), cand], after)));
            }
        }
        self.ctx.reason = Some(said(tried));
        Ok(None)
    }
}
