//! The rules' candidates (`rules/*.toml`, the expected-raise guards among them), in rank
//! order; with `--jobs N`, once one was rejected, the next ones' targeted runs are made ahead
//! in scratch copies ([`Ahead`]).

use super::{llm, search, CandidateSource, Flow, Round};
use crate::plan::{self, Candidate, PlanInput};
use std::collections::BTreeSet;

use crate::runner::PytestRun;
use crate::session::error::SessionError;
use crate::session::parallel::{replace, Job, Pool};
use crate::session::prover::Phase;
use crate::session::runs::Runs;
use crate::session::shared::{excluded, failure_key};
use crate::session::work::{gone, is_progress, next_failure, Stages, Trial, Work};
use crate::traceback::Failure;
use crate::verdict::Verdict;

/// The rules' candidates for one failure are tried up to this rank (best first); the rest are
/// reported as untried and the search (or the model) takes its turn.
pub(in crate::session) const MAX_RULE_RANK: usize = 12;

/// How many of `rest` would have been proven (not already rejected for this failure).
fn untried(w: &Work, failure: &Failure, rest: &[Candidate]) -> usize {
    rest.iter()
        .filter(|c| {
            w.ctx
                .tried
                .rejected_for(failure, &c.path, &c.patched)
                .is_none()
        })
        .count()
}

#[derive(Default)]
pub(in crate::session) struct Rules {
    /// The runs made ahead (`--jobs N`).
    ahead: Option<Ahead>,
}

impl CandidateSource for Rules {
    fn work(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
    ) -> Result<Flow, SessionError> {
        let candidates = match self.candidates(w, failure, round) {
            Ok(c) => c,
            Err(flow) => return Ok(flow),
        };
        round.rule_candidates = candidates.len();
        let flow = self.prove_ranked(w, failure, round, &candidates);
        // Whatever ended the loop, the copies are done (the search makes its own, the model is
        // proven in the workspace).
        if let Some(a) = self.ahead.take() {
            a.finish(w.s);
        }
        flow
    }
}

impl Rules {
    /// The rules' candidates that may be tried here, or what to do instead.
    fn candidates(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
    ) -> Result<Vec<Candidate>, Flow> {
        // Each matching rule that proposed nothing: which transform declined and why.
        let mut declined: Vec<String> = Vec::new();
        let planned = plan::plan_explained(
            &PlanInput {
                root: w.ws.root(),
                failure,
                rules: w.ctx.rules,
                probe: round.values.as_ref(),
                allow_tests: w.s.opts.allow_tests,
                stdlib: &w.held.stdlib,
            },
            &mut declined,
        );
        let candidates = match planned {
            Ok(c) => c,
            // Wrong output and failures no rule knows: the search over small edits first (no
            // model, every candidate proven); what it cannot fix is the model's when asked for.
            Err(e) if round.depth == 0 && search::applies(w, failure, &e) => {
                round.plan_error = Some(e);
                return Err(Flow::Next);
            }
            // What no rule knows (a wrong result asserted in the test) is the model's to try.
            Err(e) if round.model.is_some() && llm::may_try(&e) => {
                w.ctx.reason.get_or_insert(e.to_string());
                round.plan_error = Some(e);
                Vec::new()
            }
            Err(e) => {
                let mut why = e.to_string();
                if matches!(e, plan::PlanError::NoRule(_)) && !w.s.opts.selection.is_default() {
                    why.push_str(" (the configuration's select/ignore leaves rules out)");
                }
                w.ctx.reason.get_or_insert(why);
                return Err(Flow::Stop);
            }
        };
        // A candidate that edits an excluded file is dropped before it is written.
        let mut candidates = candidates;
        let before = candidates.len();
        candidates.retain(|c| excluded(w.s.opts, &c.file).is_none());
        if candidates.is_empty() && before > 0 {
            w.ctx
                .reason
                .get_or_insert("every candidate edits a file excluded by extend-exclude".into());
            return Err(Flow::Stop);
        }
        // A candidate that copies the failing test's expected literal into the code (`.get(k,
        // "hi")` for a test expecting "hi") passes that test by construction: left out before
        // any run (plan::literals, docs/proof.md).
        let test = plan::literals::test_literals(failure);
        let planned = candidates.len();
        candidates.retain(|c| plan::literals::copied_literal(c, &test).is_none());
        let copied = planned - candidates.len();
        w.ctx.prechecked.test_literals += copied;
        if copied > 0 && candidates.is_empty() {
            declined.push(format!(
                "{copied} candidate{} left out: {} the failing test's expected value into the code",
                if copied == 1 { "" } else { "s" },
                if copied == 1 {
                    "it copies"
                } else {
                    "they copy"
                }
            ));
        }
        let total = candidates.len();
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .filter(|c| c.safe || !w.s.opts.safe_only)
            .collect();
        if candidates.is_empty() && total > 0 {
            w.ctx.reason.get_or_insert(format!(
                "{total} candidate{} from unsafe rules not tried (--safe-only)",
                if total == 1 { "" } else { "s" }
            ));
            return Err(Flow::Stop);
        }
        if candidates.is_empty() {
            // A rule matched but every transform declined: no dead end, the search (and the
            // model, when asked for) take the failure; the report says which declined and why.
            let mut why = "the matching rules proposed nothing that applies here".to_string();
            if !declined.is_empty() {
                why = format!("{why} ({})", declined.join("; "));
            }
            w.ctx.reason.get_or_insert(why);
            let search_follows = round.depth == 0 && search::applies_after_rules(w, failure);
            if round.model.is_none() && !search_follows {
                return Err(Flow::Stop);
            }
        }
        Ok(candidates)
    }

    /// Each candidate in rank order, within the budgets; the search's turn (or the model's)
    /// once all were rejected.
    fn prove_ranked(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
        candidates: &[Candidate],
    ) -> Result<Flow, SessionError> {
        let key = failure_key(failure);
        let of = candidates.len();
        let targeted: Vec<String> = failure.test.iter().cloned().collect();
        // Candidates judged so far: with --jobs N the pool starts once one was rejected.
        let mut judged = 0usize;
        for (rank, cand) in candidates.iter().enumerate() {
            // Bounded by time and rank, not by the attempt counts (the model's): a rule's
            // candidate costs one targeted run.
            if w.out_of_time() {
                w.ctx.untried += untried(w, failure, &candidates[rank..]);
                return Ok(Flow::Stop);
            }
            if rank >= MAX_RULE_RANK {
                w.ctx.untried += untried(w, failure, &candidates[rank..]);
                break;
            }
            // The same bytes were already proven wrong for this failure: no budget spent on them.
            if w.ctx.already_rejected(failure, cand) {
                continue;
            }
            // An edit of a file a pending fix changed is not independent of it: confirm first.
            if w.ctx.batch_files.contains(&cand.file) {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let label = format!("candidate {}/{of} ({})", rank + 1, cand.fix.rule);
            // With --jobs N, once a candidate was rejected, the targeted runs of the next ones
            // are made ahead in scratch copies (see `Ahead`): the first one, mostly
            // the one kept, costs no copy and no run alongside. The run made ahead stands in
            // for the workspace's, unless the candidate moved the failure elsewhere: the new
            // failure, worked on next, is read in the workspace.
            if judged == 1 {
                self.ahead = Ahead::start(w, failure, candidates, rank);
            }
            judged += 1;
            let made = match self.ahead.as_mut() {
                Some(a) => {
                    a.fill(w, failure, candidates, rank);
                    crate::progress::step(|| format!("{label}: running the test"));
                    a.take(w, rank)?.filter(|(run, v)| {
                        run.timed_out
                            || gone(failure, &key, &targeted, v)
                            || !next_failure(failure, v).is_some_and(|f| is_progress(failure, &f))
                    })
                }
                None => None,
            };
            let trial = Trial {
                depth: round.depth,
                label,
                stages: Stages::Failing { made },
            };
            if let Some(flow) = w.prove(failure, cand, trial)?.into() {
                return Ok(flow);
            }
        }
        // Every candidate tried was rejected: the time is checked once more before the next
        // source's turn.
        if w.out_of_time() {
            return Ok(Flow::Stop);
        }
        round.checked = true;
        Ok(Flow::Next)
    }
}

/// The rules' candidates of one failure with `--jobs N`, once the first was rejected (the
/// first, mostly the one kept, costs no copy): their targeted runs go to the pool ahead of
/// the candidate loop in `work_on`, which still judges them one by one in rank order and
/// takes candidate k's run from here instead of making it in the workspace (see the module
/// docs). Only the targeted run is made ahead: the group's and the full run of a
/// candidate that passes, and the targeted run of one that moved the failure elsewhere (its
/// new failure is worked on next), are made in the workspace as with `--jobs 1`.
pub(super) struct Ahead {
    pool: Pool,
    /// Submitted and not yet taken, by rank.
    queued: BTreeSet<usize>,
    /// The first rank not yet looked at for submission.
    next: usize,
}

impl Ahead {
    /// A pool for the candidates from rank `from` on (the loop's current one, its budget
    /// already charged) when `--jobs` > 1 and at least two of them would be proven here (they
    /// name a test, are no repeats, and come before the first that edits a file of the pending
    /// batch, where the loop stops; as many as the budget reaches); `None` otherwise, with no
    /// copy made. The copies are the workspace as it is now: the fixes kept so far, no
    /// candidate.
    pub fn start(
        w: &Work,
        failure: &Failure,
        candidates: &[Candidate],
        from: usize,
    ) -> Option<Ahead> {
        // A command judge (--cmd) is not pytest, and a failure without a test id is only seen
        // in a full run: both stay in the workspace.
        if w.s.opts.jobs < 2 || w.s.opts.judge.is_some() || failure.test.is_none() {
            return None;
        }
        let provable = candidates
            .iter()
            .skip(from)
            .take_while(|c| !w.ctx.batch_files.contains(&c.file))
            .filter(|c| {
                w.ctx
                    .tried
                    .rejected_for(failure, &c.path, &c.patched)
                    .is_none()
            })
            .count();
        let reachable = MAX_RULE_RANK.saturating_sub(from);
        let n = w.s.opts.jobs.min(provable).min(reachable);
        if n < 2 {
            return None;
        }
        Some(Ahead {
            pool: Pool::new(w.ws.root(), &w.s.prover.python, n)?,
            queued: BTreeSet::new(),
            next: from,
        })
    }

    /// Submits the candidates from rank `from` on (the loop's current one, its budget already
    /// charged), in rank order, while fewer than N wait and the budget and the time budget
    /// could still reach them; with the same checks the loop makes before each candidate.
    pub fn fill(&mut self, w: &Work, failure: &Failure, candidates: &[Candidate], from: usize) {
        self.queued.retain(|&r| r >= from);
        self.next = self.next.max(from);
        let reachable = MAX_RULE_RANK.saturating_sub(from);
        while self.next < candidates.len()
            && self.next < MAX_RULE_RANK
            && self.queued.len() < self.pool.size().min(reachable)
            && !crate::process::interrupted()
            && w.s.prover.time_for_a_candidate()
        {
            let c = &candidates[self.next];
            if w.ctx.batch_files.contains(&c.file) {
                // The loop stops at this one.
                self.next = candidates.len();
                break;
            }
            let rank = self.next;
            self.next += 1;
            if w.ctx
                .tried
                .rejected_for(failure, &c.path, &c.patched)
                .is_some()
            {
                continue;
            }
            let targeted: Vec<String> = failure.test.iter().cloned().collect();
            self.pool.submit(Job {
                rank,
                file: c.file.clone(),
                patched: c.patched.clone(),
                stages: vec![w.s.prover.spec(&*w.ws, &targeted, &[])],
                deadline: Some(w.s.prover.deadline),
                lead: None,
            });
            self.queued.insert(rank);
        }
    }

    /// Candidate `rank`'s targeted run and its verdict, when it was submitted (waiting for it
    /// if it is still running); counted as a run. Paths of the scratch copy in the output and
    /// in the failures' messages read as the workspace's, as the same run there would print.
    pub fn take(
        &mut self,
        w: &mut Work,
        rank: usize,
    ) -> Result<Option<(PytestRun, Verdict)>, SessionError> {
        if !self.queued.remove(&rank) {
            return Ok(None);
        }
        let done = self.pool.take_counted(w.s, rank)?;
        let Some((mut run, verdict)) = done.runs.into_iter().next() else {
            return Err(SessionError::NoParallelRun);
        };
        let from = done.root.to_string_lossy().into_owned();
        let to = w.ws.root().to_string_lossy().into_owned();
        run.stdout = replace(&run.stdout, from.as_bytes(), to.as_bytes());
        run.stderr = replace(&run.stderr, from.as_bytes(), to.as_bytes());
        let verdict = match verdict {
            Verdict::Failed(mut failures) => {
                for f in &mut failures {
                    f.msg = f.msg.replace(&from, &to);
                }
                Verdict::Failed(failures)
            }
            Verdict::Error(m) => Verdict::Error(m.replace(&from, &to)),
            Verdict::Usage(m) => Verdict::Usage(m.replace(&from, &to)),
            v => v,
        };
        Ok(Some((run, verdict)))
    }

    /// Stops what still runs (see [`Pool::finish`]); the runs made count as pytest runs.
    pub fn finish(self, s: &mut Runs) {
        for done in self.pool.finish() {
            for (run, _) in &done.runs {
                s.prover.count_run(run, Phase::Candidate);
            }
        }
    }
}
