//! The work on one failure: its facts (the baseline's crash frame or a probe run), then the
//! candidate sources in order ([`super::sources`]), each candidate proven by [`Work::prove`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::alongside::Alongside;
use super::chain::{guards_its_own_none, made_the_none};
use super::error::SessionError;
use super::groups::group_passes_in;
use super::known::Held;
use super::model::{Attempt, ProofRun, Repeats};
use super::prover::Phase;
use super::runs::Runs;
use super::shared::{failure_key, failure_keys, GROUP_IN_FULL_RUN, TIME_BUDGET_USED_UP};
use super::workspace::Workspace;
use crate::command::OUTPUT_CHECK_EXC;
use crate::plan::Candidate;
use crate::probe::ProbeReport;
use crate::rules::{Category, RuleSet};
use crate::runner::PytestRun;
use crate::status::{AttemptOutcome, ConfirmedBy, Source};
use crate::traceback::{self, Failure, When};
use crate::tried::Tried;
use crate::verdict::Verdict;

/// A failure's fix: the candidates kept (a step that moved the failure elsewhere first), and
/// the whole suite's failures with them.
pub(super) type Fixed = (Vec<Candidate>, Vec<Failure>);

/// The work on one failure: the runs, what the sources hold beside them, the workspace, and the
/// failure's own state; the methods here and the candidate sources' functions are its steps.
pub(super) struct Work<'w, 'a> {
    pub(super) s: &'w mut Runs<'a>,
    /// What the sources propose with beside the runs (the stdlib index, the model).
    pub(super) held: &'w mut Held,
    pub(super) ws: &'w mut dyn Workspace,
    pub(super) ctx: Step<'w>,
    /// How a failure is worked on (the sources in order, see [`super::sources::work_on`]): a
    /// candidate that moved the failure elsewhere hands the new failure to it. The loop sets
    /// it, so that proving here needs no import of the sources above.
    pub(super) work_on: WorkOn,
}

/// See [`Work::work_on`].
pub(super) type WorkOn =
    fn(&mut Work<'_, '_>, &Failure, usize) -> Result<Option<Fixed>, SessionError>;

/// State shared by the steps of one failure.
pub(super) struct Step<'a> {
    pub(super) rules: &'a RuleSet,
    /// The failing set before this failure was worked on.
    pub(super) current: &'a BTreeSet<(String, When)>,
    /// The reference run saw no test (a conftest failed to import): failures that appear once
    /// the failure is gone are not breakage.
    pub(super) blind: bool,
    pub(super) category: Category,
    pub(super) budget: &'a mut u32,
    pub(super) attempts: &'a mut Vec<Attempt>,
    pub(super) accepted: &'a mut BTreeMap<PathBuf, Vec<u8>>,
    pub(super) first_probe: Option<ProbeReport>,
    pub(super) reason: Option<String>,
    /// The failure did not come back when the unchanged code ran again.
    pub(super) flaky: bool,
    /// What the search's localization ranked (reported with the failure).
    pub(super) suspicious: Vec<crate::localize::Suspicious>,
    /// Edits pytest already rejected, over the whole run.
    pub(super) tried: &'a mut Tried,
    /// Candidates skipped as already rejected for the same failure, and the test they were
    /// rejected for.
    pub(super) repeats: Option<(usize, Option<String>)>,
    /// The other tests of the failure's crash-site group (see [`groups`]), still failing.
    pub(super) group: Vec<String>,
    /// Where the group crashes (a member failing elsewhere now is another bug).
    pub(super) group_key: Option<super::model::GroupKey>,
    /// A candidate that passes its targeted (and group) run is kept tentatively, its full run
    /// left to the batch's (see [`batch`]).
    pub(super) defer: bool,
    /// Files of the fixes pending in the batch (patched files and crash sites).
    pub(super) batch_files: &'a BTreeSet<String>,
    /// Set when the batch must be confirmed before this failure can be worked on.
    pub(super) needs_flush: bool,
    /// The index in `attempts` of the tentatively accepted attempt.
    pub(super) deferred: Option<usize>,
    /// Candidates ranked and left untried when the work ended (see `docs/proof.md`).
    pub(super) untried: usize,
    /// The search's cause: the failing tests searched with this one, and its leads.
    pub(super) cause: super::cause_state::Cause,
    /// Candidates left out before any run (see `sources/precheck.rs`).
    pub(super) prechecked: super::model::Prechecked,
}

impl Work<'_, '_> {
    /// What `cand`'s file holds when the candidate is not in it: the proven content so far,
    /// else the original.
    pub(super) fn previous(&self, cand: &Candidate) -> Vec<u8> {
        self.ctx
            .accepted
            .get(&cand.path)
            .cloned()
            .unwrap_or_else(|| cand.original.clone())
    }
}

impl Step<'_> {
    /// Whether the same bytes were already proven wrong for this failure (by a rule, the search,
    /// or for another test failing the same way): counted in `repeats`, and no run is spent.
    pub(super) fn already_rejected(&mut self, failure: &Failure, cand: &Candidate) -> bool {
        let Some(test) = self.tried.rejected_for(failure, &cand.path, &cand.patched) else {
            return false;
        };
        let test = test.map(str::to_string);
        self.repeats.get_or_insert((0, test)).0 += 1;
        true
    }
}

impl Work<'_, '_> {
    /// The failure passed once when run again on unchanged code: one more plain run of the test
    /// decides. Passing again, it is flaky (`ctx.flaky`, with the reason) and nothing is patched.
    pub(super) fn flaky(&mut self, failure: &Failure) -> Result<bool, SessionError> {
        let test: Vec<String> = failure.test.iter().cloned().collect();
        let again = self.s.run(self.ws, &test, Phase::Probe)?;
        if !matches!(self.s.prover.read(&again, self.ws.root()), Verdict::Green) {
            return Ok(false);
        }
        // Failed in the baseline; passed in the rerun (or probe run) and in this one.
        let runs = super::model::FlakyRuns {
            passed: 2,
            failed: 1,
        };
        self.s.flaky.add(runs, failure.clone());
        self.ctx.flaky = true;
        self.ctx.reason = Some(format!(
            "flaky: the test failed in the first run and passed twice when run again on \
         unchanged code ({}: {}); a test that fails at random proves no patch, so \
         nothing was patched",
            failure.exc_type,
            crate::traceback::first_line(&failure.msg)
        ));
        Ok(true)
    }

    /// The time budget is used up, or the run was interrupted (the step's reason says which):
    /// what bounds the rules' and the search's candidates (the attempt counts bound only the
    /// model's calls, see [`Work::out_of_budget`]).
    pub(super) fn out_of_time(&mut self) -> bool {
        if crate::process::interrupted() {
            self.ctx
                .reason
                .get_or_insert(super::shared::INTERRUPTED.into());
            return true;
        }
        if !self.s.prover.time_for_a_candidate() {
            self.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            return true;
        }
        false
    }

    /// The model's attempt budget or the time budget is used up (the step's reason says which).
    pub(super) fn out_of_budget(&mut self) -> bool {
        if *self.ctx.budget == 0 || crate::process::interrupted() {
            self.ctx
                .reason
                .get_or_insert(super::shared::attempt_budget_used_up(self.ctx.category));
            return true;
        }
        if !self.s.prover.time_for_a_candidate() {
            self.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            return true;
        }
        false
    }

    /// Proves one candidate, whatever its source (its budget already charged): its targeted
    /// stages ([`Stages`]), then the whole suite against the reference set (by the judge: pytest,
    /// or the command); records the attempt. A rule's or the model's candidate that passes is
    /// kept, one that moves the failure elsewhere is followed as the next step; a search
    /// candidate that passes stays written for the search's choice among the plausible ones.
    /// A rejected candidate's file is put back.
    pub(super) fn prove(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        trial: Trial,
    ) -> Result<Proven, SessionError> {
        let key = failure_key(failure);
        let previous = self.previous(cand);
        let (t, written, hint, mut alongside) = match trial.stages {
            Stages::Failing { made } => {
                let (t, written, along) =
                    self.run_failing(failure, cand, &key, made, &trial.label)?;
                (t, written, None, along)
            }
            Stages::Searched {
                hint,
                runs,
                written,
            } => (runs, written, Some(hint), None),
        };
        // The runs from here on (the confirming ones) are the proof, after the targeted run.
        let mark = self.s.prover.proof_log.len();
        let started = Instant::now();
        let mut attempt = self.s.attempt_record(
            failure,
            self.ctx.category,
            trial.depth,
            cand,
            &t.first,
            self.held.llm.as_mut(),
        );
        if let Some(ms) = t.started_ms {
            attempt.timestamp_ms = ms;
        }
        if let Some(hint) = hint {
            attempt.search = Some(crate::search::AttemptFacts {
                hint: hint.word(),
                ..Default::default()
            });
        }
        let mut written = written;
        let is_gone =
            !t.first.timed_out && gone(failure, &key, &targeted(failure), &t.first_verdict);
        // A full run made alongside is needed only for a failure gone; nothing is written while
        // it still runs.
        if let Some(along) = alongside.take_if(|_| !is_gone) {
            self.s.stop_full_run(along);
        }
        let result = if t.first.timed_out {
            attempt.outcome = AttemptOutcome::Timeout;
            None
        } else if hint.is_some() {
            match t.neighbours {
                Some(neighbours) => self.confirm_searched(
                    failure,
                    (&key, &t.tests),
                    cand,
                    neighbours,
                    &mut written,
                    &mut attempt,
                )?,
                None => {
                    self.still_failing(failure, &t.first_verdict, &mut attempt, false);
                    None
                }
            }
        } else if is_gone {
            let suite = if targeted(failure).is_empty() {
                Suite::Ran(t.first_verdict)
            } else {
                alongside.take().map_or(Suite::Next, Suite::Alongside)
            };
            let chained = trial.depth > 0;
            self.confirm(failure, cand, suite, &trial.label, chained, &mut attempt)?
        } else {
            let next = self.still_failing(failure, &t.first_verdict, &mut attempt, true);
            // A different failure (not the same exception at the same place) is progress; the
            // same one only moved by the lines the candidate inserted above it is not (a guard
            // inserted there again and again would recurse without end), nor is a step past
            // [`MAX_STEPS`].
            if let Some(next) = next.filter(|n| {
                trial.depth + 1 < MAX_STEPS
                    && is_progress(failure, n)
                    && !moved_only(failure, n, &cand.file, &cand.patched, &previous)
            }) {
                // A step that made the None it moved to is never followed (docs/proof.md).
                if let Some(why) = made_the_none(&previous, &cand.patched, failure, &next) {
                    attempt.new_failure = Some(why);
                    attempt.duration_ms = (t.spent + started.elapsed()).as_millis() as u64;
                    self.ctx.attempts.push(attempt);
                    self.ws.write(&cand.path, &previous)?;
                    self.ctx.tried.reject(failure, &cand.path, &cand.patched);
                    return Ok(Proven::Rejected);
                }
                attempt.outcome = AttemptOutcome::Progressed;
                attempt.duration_ms = (t.spent + started.elapsed()).as_millis() as u64;
                self.ctx.attempts.push(attempt);
                return self.follow(failure, cand, &next, trial.depth, previous);
            }
            None
        };
        attempt.duration_ms = (t.spent + started.elapsed()).as_millis() as u64;
        if attempt.outcome == AttemptOutcome::Accepted {
            // No targeted tests: the first run was the whole suite.
            let phase = if t.tests.is_empty() {
                Phase::Confirm
            } else {
                Phase::Candidate
            };
            attempt.proven_by = (self.s.prover.proof_run(phase, &t.first).into_iter())
                .chain(t.covering_run.clone())
                .chain(self.s.prover.proof_since(mark))
                .collect();
        }
        self.ctx.attempts.push(attempt);
        match result {
            // The search chooses among its plausible candidates (see `search::Found`).
            Some(after) if hint.is_some() => Ok(Proven::Fixed((vec![cand.clone()], after))),
            Some(after) => {
                self.ctx
                    .accepted
                    .insert(cand.path.clone(), cand.patched.clone());
                Ok(Proven::Fixed((vec![cand.clone()], after)))
            }
            None => {
                if written {
                    self.ws.write(&cand.path, &previous)?;
                }
                self.ctx.tried.reject(failure, &cand.path, &cand.patched);
                Ok(Proven::Rejected)
            }
        }
    }

    /// The targeted stage of a rule's or the model's candidate: the failing test, run in the
    /// workspace, or the run made ahead in a scratch copy (`made`). Only a candidate whose
    /// further runs are made in the workspace is written there (`true`).
    fn run_failing(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        key: &(String, When),
        made: Option<(PytestRun, Verdict)>,
        label: &str,
    ) -> Result<(Targeted, bool, Option<Alongside>), SessionError> {
        let targeted = targeted(failure);
        let written = made
            .as_ref()
            .is_none_or(|(run, v)| !run.timed_out && gone(failure, key, &targeted, v));
        if written {
            self.ws.write(&cand.path, &cand.patched)?;
        }
        // Cold runs: the full run starts beside the targeted one (see [`super::alongside`]),
        // where the confirmation would follow it directly.
        let alongside = (made.is_none()
            && !targeted.is_empty()
            && !self.ctx.defer
            && self.ctx.group.len() <= GROUP_IN_FULL_RUN
            && self.s.full_run_alongside_pays())
        .then(|| self.s.start_full_run(&*self.ws));
        let (first, first_verdict, spent) = match made {
            // The attempt's time is its own run's, not the wait for it.
            Some((run, verdict)) => {
                let spent = run.duration;
                (run, verdict, spent)
            }
            None => {
                let started = Instant::now();
                crate::progress::step(|| format!("{label}: running the test"));
                // A failure without a test id (collection, conftest) is only seen in a full run.
                let phase = if targeted.is_empty() {
                    Phase::Confirm
                } else {
                    Phase::Candidate
                };
                let first = self.s.run(self.ws, &targeted, phase)?;
                let verdict = self.s.prover.read(&first, self.ws.root());
                (first, verdict, started.elapsed())
            }
        };
        let t = Targeted {
            tests: targeted,
            first,
            first_verdict,
            neighbours: None,
            covering_run: None,
            spent,
            started_ms: None,
        };
        Ok((t, written, alongside))
    }

    /// A search candidate whose failing tests passed: the passing tests that cover the line
    /// (`neighbours`), then the whole suite (a command's one run was the whole judge already).
    fn confirm_searched(
        &mut self,
        failure: &Failure,
        (key, tests): (&(String, When), &[String]),
        cand: &Candidate,
        neighbours: Verdict,
        written: &mut bool,
        attempt: &mut Attempt,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        // A known flaky test decides nothing. (One newly failing here is blamed: the full run
        // is where a bystander is run on the original code, once this run has passed.)
        let neighbours = self.s.flaky.strip(neighbours);
        match neighbours {
            Verdict::Green => {
                if !*written {
                    self.ws.write(&cand.path, &cand.patched)?;
                    *written = true;
                }
                if !self.repeated(failure, key, cand, tests, attempt)? {
                    return Ok(None);
                }
                let suite = if self.s.opts.judge.is_some() {
                    Verdict::Green
                } else {
                    let run = self.s.run(self.ws, &[], Phase::Confirm)?;
                    self.s.prover.read(&run, self.ws.root())
                };
                let after = self
                    .s
                    .judge_full(
                        self.ws,
                        suite,
                        self.ctx.current,
                        std::slice::from_ref(key),
                        self.ctx.blind,
                    )?
                    .record(attempt);
                self.past_selection(cand, after, attempt)
            }
            Verdict::Failed(f) => {
                attempt.outcome = AttemptOutcome::NewFailures;
                attempt.broke = f.iter().filter_map(|f| f.test.clone()).collect();
                Ok(None)
            }
            other => {
                attempt.outcome = AttemptOutcome::SuiteError;
                attempt.new_failure = Some(other.describe());
                Ok(None)
            }
        }
    }

    /// A candidate whose targeted run passed: the group's tests (in a run of their own, or in
    /// the full run), then the whole suite against the reference set; or, for a fix waiting
    /// for the batch, kept tentatively. The full suite's failures when it is accepted. A step
    /// of a chain (`chained`) needs every test of the group that started it to pass.
    fn confirm(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        suite: Suite,
        label: &str,
        chained: bool,
        attempt: &mut Attempt,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        let key = &failure_key(failure);
        let targeted = targeted(failure);
        if !self.repeated(failure, key, cand, &targeted, attempt)? {
            if let Suite::Alongside(along) = suite {
                self.s.stop_full_run(along);
            }
            return Ok(None);
        }
        // A small group is checked in the full run that follows anyway (one run fewer); a
        // big one, or one whose full run is the batch's later, gets a run of its own first.
        let group_in_full_run = !self.ctx.defer && self.ctx.group.len() <= GROUP_IN_FULL_RUN;
        // The representative passes: the rest of its group in one run, before the full suite.
        if !targeted.is_empty() && !group_in_full_run {
            if !self.ctx.group.is_empty() {
                crate::progress::step(|| format!("{label}: running the group's tests"));
            }
            let passes = self.s.group_run(
                self.ws,
                &self.ctx.group,
                self.ctx.group_key.as_ref(),
                chained,
                attempt,
            )?;
            if !passes {
                // Rejected: the attempt says which tests of the group still fail.
                return Ok(None);
            }
        }
        if self.ctx.defer && !targeted.is_empty() {
            // Kept tentatively: one full run confirms the batch of independent fixes (see
            // [`batch`]); the attempt says it was confirmed there, or what the fallback found.
            attempt.outcome = AttemptOutcome::Accepted;
            attempt.confirmed_by = Some(ConfirmedBy::Batch);
            self.ctx.deferred = Some(self.ctx.attempts.len());
            return Ok(Some(Vec::new()));
        }
        // The full suite decides, unless the targeted run already was the full suite.
        let suite_verdict = match suite {
            Suite::Ran(verdict) => verdict,
            Suite::Alongside(along) => {
                crate::progress::step(|| format!("{label}: running the whole suite"));
                let run = self.s.finish_full_run(along)?;
                self.s.prover.read(&run, self.ws.root())
            }
            Suite::Next => {
                crate::progress::step(|| format!("{label}: running the whole suite"));
                let run = self.s.run(self.ws, &[], Phase::Confirm)?;
                self.s.prover.read(&run, self.ws.root())
            }
        };
        let group_passes = !group_in_full_run
            || group_passes_in(
                &suite_verdict,
                &self.ctx.group,
                self.ctx.group_key.as_ref(),
                chained,
                attempt,
            );
        if !group_passes {
            return Ok(None);
        }
        let after = self
            .s
            .judge_full(
                self.ws,
                suite_verdict,
                self.ctx.current,
                std::slice::from_ref(key),
                self.ctx.blind,
            )?
            .record(attempt);
        self.past_selection(cand, after, attempt)
    }

    /// Chance is not proof: an unsafe candidate (the search's, a guard's, the model's) whose
    /// failing tests passed once runs them again, up to `--proof-repeats` runs in a row in all
    /// (the proving run counted; the same targeted run, warm when the worker is); the first
    /// miss rejects it as a pass by chance (`by_chance`). A safe candidate is not repeated.
    /// The candidate is written in the workspace. Whether it passed every repeat.
    fn repeated(
        &mut self,
        failure: &Failure,
        key: &(String, When),
        cand: &Candidate,
        tests: &[String],
        attempt: &mut Attempt,
    ) -> Result<bool, SessionError> {
        let required = self.s.opts.proof_repeats;
        if cand.safe || required <= 1 {
            return Ok(true);
        }
        // The confirming full run (the candidate's own, or the batch's) runs the failing test
        // again and rejects the candidate when it fails there ("passed alone but failed in the
        // full run"): it is the last run in a row, when the failing test is all there is to
        // repeat (a search cause's other failing tests are not checked so there) and pytest is
        // the judge (a command's run is the whole judge already).
        let full_run = self.s.opts.judge.is_none()
            && !tests.is_empty()
            && tests.iter().all(|t| failure.test.as_ref() == Some(t));
        let mut rep = Repeats {
            required,
            runs: 1,
            passed: 1,
            full_run,
        };
        let targeted_runs = required - u32::from(full_run);
        while rep.runs < targeted_runs {
            crate::progress::step(|| {
                format!(
                    "{}: repeating the failing tests ({} of {required})",
                    cand.fix.title,
                    rep.runs + 1
                )
            });
            // The search's own targeted run (`-x`, its shorter per-test limit) in pytest mode.
            let run = if cand.source == Source::Search && self.s.opts.judge.is_none() {
                self.s.prover.run_candidate(self.ws, tests)?
            } else {
                self.s.run(self.ws, tests, Phase::Candidate)?
            };
            let verdict = self.s.prover.read(&run, self.ws.root());
            rep.runs += 1;
            if run.timed_out || !gone(failure, key, tests, &verdict) {
                attempt.outcome = AttemptOutcome::ByChance;
                attempt.new_failure = Some(format!(
                    "its failing tests passed {} of {} runs, {required} in a row required: a \
                     pass by chance",
                    rep.passed, rep.runs
                ));
                attempt.repeats = Some(rep);
                return Ok(false);
            }
            rep.passed += 1;
        }
        attempt.repeats = Some(rep);
        Ok(true)
    }

    /// An accepted candidate under a narrow selection: the tests outside the selection that
    /// run its lines decide too (see [`super::outside`]).
    fn past_selection(
        &mut self,
        cand: &Candidate,
        after: Option<Vec<Failure>>,
        attempt: &mut Attempt,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        if after.is_none() || self.s.outside_passes(self.ws, cand, attempt)? {
            return Ok(after);
        }
        Ok(None)
    }

    /// The targeted test still fails: the attempt says how (`no_verdict`: also when the run
    /// gave no verdict); the failure it shows now.
    fn still_failing(
        &self,
        failure: &Failure,
        verdict: &Verdict,
        attempt: &mut Attempt,
        no_verdict: bool,
    ) -> Option<Failure> {
        let next = next_failure(failure, verdict);
        attempt.new_failure = match &next {
            Some(f) => Some(format!(
                "{}: {}",
                f.exc_type,
                crate::traceback::first_line(&f.msg)
            )),
            None if no_verdict && verdict.failures().is_none() => Some(verdict.describe()),
            None => None,
        };
        if next
            .as_ref()
            .is_some_and(|n| n.exc_type == crate::plugin::TIMEOUT_EXC)
        {
            // The candidate made the test hang: stopped at the per-test limit.
            attempt.outcome = AttemptOutcome::Timeout;
        }
        next
    }

    /// A candidate that moved the failure elsewhere: kept tentatively while the new failure is
    /// worked on as the next step; undone when that leads nowhere.
    fn follow(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        next: &Failure,
        depth: usize,
        previous: Vec<u8>,
    ) -> Result<Proven, SessionError> {
        let before = self.ctx.accepted.clone();
        self.ctx
            .accepted
            .insert(cand.path.clone(), cand.patched.clone());
        let work_on = self.work_on;
        if let Some((mut steps, after)) = work_on(self, next, depth + 1)? {
            steps.insert(0, cand.clone());
            let files: Vec<(&[u8], &[u8])> = steps
                .iter()
                .map(|c| (c.original.as_slice(), c.patched.as_slice()))
                .collect();
            if !guards_its_own_none(&files) {
                return Ok(Proven::Fixed((steps, after)));
            }
            // A later step guards the None an earlier one made: the whole chain is undone.
            self.undo_chain(&steps[1..], &before)?;
            if let Some(a) =
                self.ctx.attempts.iter_mut().rev().find(|a| {
                    matches!(a.outcome, AttemptOutcome::Accepted) && a.test == failure.test
                })
            {
                a.outcome = AttemptOutcome::StillFailing;
                a.new_failure = Some(
                    "the chain guards a None that its first step made: every step undone".into(),
                );
            }
        }
        self.ctx
            .accepted
            .insert(cand.path.clone(), previous.clone());
        self.ws.write(&cand.path, &previous)?;
        if self.ctx.needs_flush {
            // Not rejected: worked on again once the pending batch is confirmed.
            return Ok(Proven::Stop);
        }
        self.ctx.tried.reject(failure, &cand.path, &cand.patched);
        Ok(Proven::Rejected)
    }
}

impl Work<'_, '_> {
    /// Puts back the files of a chain's later `steps` (kept by the chain's work) as they were
    /// before the chain (`before`: the proven content then; a file not in it had its step's
    /// original bytes).
    fn undo_chain(
        &mut self,
        steps: &[Candidate],
        before: &BTreeMap<PathBuf, Vec<u8>>,
    ) -> Result<(), SessionError> {
        let mut done = BTreeSet::new();
        for c in steps {
            if !done.insert(c.path.clone()) {
                continue;
            }
            let bytes = match before.get(&c.path) {
                Some(b) => {
                    self.ctx.accepted.insert(c.path.clone(), b.clone());
                    b.clone()
                }
                None => {
                    self.ctx.accepted.remove(&c.path);
                    c.original.clone()
                }
            };
            self.ws.write(&c.path, &bytes)?;
        }
        self.ctx.deferred = None;
        Ok(())
    }
}

/// How [`Work::prove`] proves one candidate.
pub(super) struct Trial {
    /// The step (0: the failure itself).
    pub(super) depth: usize,
    /// What the progress lines call it.
    pub(super) label: String,
    pub(super) stages: Stages,
}

/// The targeted runs before the whole suite, by where the candidate came from.
pub(super) enum Stages {
    /// A rule's or the model's candidate: the failing test (run in the workspace, or `made`
    /// ahead in a scratch copy with `--jobs`), then its crash-site group.
    Failing { made: Option<(PytestRun, Verdict)> },
    /// A search candidate, its targeted runs made already (in the workspace, `written`, or in
    /// a scratch copy): the failing tests that cover the edited line, then the passing ones
    /// (see [`search`]); in command mode, the command.
    Searched {
        hint: crate::search::hint::Tier,
        runs: Targeted,
        written: bool,
    },
}

/// The whole suite's run for a candidate whose targeted run passed.
enum Suite {
    /// The targeted run was the whole suite (a failure without a test id).
    Ran(Verdict),
    /// Going on beside the targeted run (see [`super::alongside`]).
    Alongside(Alongside),
    /// Still to run.
    Next,
}

/// What a candidate's targeted runs said.
pub(super) struct Targeted {
    /// The failing tests the first run ran (none: it was the whole suite, or the command).
    pub(super) tests: Vec<String>,
    pub(super) first: PytestRun,
    pub(super) first_verdict: Verdict,
    /// The search's passing covering tests' verdict (green when there are none); only after
    /// a green first run.
    pub(super) neighbours: Option<Verdict>,
    /// The neighbours' run as a proof's record (`covering`), when there was one.
    pub(super) covering_run: Option<ProofRun>,
    /// Wall time already spent on the candidate.
    pub(super) spent: Duration,
    /// When its first run started, when that is not now (a parallel proof's).
    pub(super) started_ms: Option<u64>,
}

/// The test a rule's candidate is run on first: the failing one (none for a collection or
/// conftest failure, which only a full run shows).
fn targeted(failure: &Failure) -> Vec<String> {
    failure.test.iter().cloned().collect()
}

/// What became of a proven candidate.
pub(super) enum Proven {
    Fixed(Fixed),
    Rejected,
    /// The work on the failure ends (the pending batch is confirmed first).
    Stop,
}

/// Whether the candidate's targeted run says the failure is gone (the full run then decides).
pub(super) fn gone(
    failure: &Failure,
    key: &(String, When),
    targeted: &[String],
    verdict: &Verdict,
) -> bool {
    match (verdict, targeted.is_empty()) {
        (Verdict::Green, _) => true,
        (Verdict::Failed(after), true) => !failure_keys(after).contains(key),
        // A subtest's owner ran all its subtests: the proof is this subtest's own outcome
        // (a sibling still failing is judged against the baseline by the full run).
        (Verdict::Failed(after), false)
            if failure
                .test
                .as_deref()
                .is_some_and(traceback::subtest::is_subtest) =>
        {
            !failure_keys(after).contains(key)
        }
        _ => false,
    }
}

/// The failure the targeted test shows with the candidate, when it still fails.
pub(super) fn next_failure(failure: &Failure, verdict: &Verdict) -> Option<Failure> {
    verdict
        .failures()
        .and_then(|f| f.iter().find(|f| f.test == failure.test).cloned())
}

/// The targeted test now fails with another exception or at another place in the project's
/// code. A failing assertion in the test itself is the candidate's wrong result, not progress.
/// Steps of one fix at most (the failure and the failures its tentative candidates moved it to):
/// each step is a level of recursion, and a chain this long is no longer one fix.
pub(super) const MAX_STEPS: usize = 8;

/// Whether `after` is `before` again, only moved to another line of the edited `file` by the
/// lines the candidate inserted or removed above: the same exception and message, raised by a
/// line of the same text, the candidate's line delta away from the old one (`previous` is the
/// file before the candidate, `patched` with it).
pub(super) fn moved_only(
    before: &Failure,
    after: &Failure,
    file: &str,
    patched: &[u8],
    previous: &[u8],
) -> bool {
    let (Some(b), Some(a)) = (before.location.as_ref(), after.location.as_ref()) else {
        return false;
    };
    if b.file != a.file || a.file != file || before.exc_type != after.exc_type {
        return false;
    }
    if before.msg.lines().next() != after.msg.lines().next() {
        return false;
    }
    let line_of = |bytes: &[u8], n: u32| -> Option<String> {
        let text = String::from_utf8_lossy(bytes);
        text.lines()
            .nth((n as usize).checked_sub(1)?)
            .map(|l| l.trim().to_string())
    };
    let count = |bytes: &[u8]| bytes.iter().filter(|&&c| c == b'\n').count() as i64;
    let delta = count(patched) - count(previous);
    a.line as i64 - b.line as i64 == delta
        && line_of(previous, b.line).is_some_and(|l| Some(l) == line_of(patched, a.line))
}

pub(super) fn is_progress(before: &Failure, after: &Failure) -> bool {
    let place = |f: &Failure| f.location.as_ref().map(|l| (l.file.clone(), l.line));
    let in_tests = after.location.as_ref().is_some_and(|l| {
        let parts: Vec<&str> = l.file.split('/').collect();
        traceback::locate::is_test_file(&parts)
    });
    // A hang is no step forward: no rule repairs it; nor is a command that now exits 0 with
    // the wrong output (the candidate's wrong result, like an assertion in a test).
    !in_tests
        && after.exc_type != OUTPUT_CHECK_EXC
        && after.exc_type != crate::plugin::TIMEOUT_EXC
        && (before.exc_type != after.exc_type || place(before) != place(after))
}

#[cfg(test)]
mod moved_tests {
    use super::*;

    fn at(line: u32, exc: &str) -> Failure {
        let log = format!(
            "=================================== FAILURES ===================================\n\
             ___ t ___\n\
             E   {exc}: string index out of range\n\
             =========================== short test summary info ============================\n\
             FAILED t.py::t - {exc}: string index out of range\n"
        );
        let mut f = crate::traceback::parse(log.as_bytes(), std::path::Path::new("/nonexistent"))
            .unwrap()
            .failures
            .remove(0);
        f.location = Some(crate::traceback::Location {
            file: "tokens.py".into(),
            path: "/p/tokens.py".into(),
            line,
            func: None,
            code: None,
            caret: None,
            frame_index: 0,
            stale: None,
        });
        f
    }

    #[test]
    fn a_failure_only_moved_down_by_an_inserted_guard_is_no_progress() {
        let before = b"def f(text, i):\n    while text[i].isdigit():\n        i += 1\n";
        let guarded = b"def f(text, i):\n    if i >= len(text):\n        return None\n    \
                        while text[i].isdigit():\n        i += 1\n";
        let (old, new) = (at(2, "IndexError"), at(4, "IndexError"));
        assert!(is_progress(&old, &new));
        assert!(moved_only(&old, &new, "tokens.py", guarded, before));
        // Another exception, another line's text, another file: a real step.
        assert!(!moved_only(
            &old,
            &at(4, "TypeError"),
            "tokens.py",
            guarded,
            before
        ));
        assert!(!moved_only(
            &old,
            &at(3, "IndexError"),
            "tokens.py",
            guarded,
            before
        ));
        assert!(!moved_only(&old, &new, "other.py", guarded, before));
    }
}
