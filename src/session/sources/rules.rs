//! The rules' candidates (`rules/*.toml`, the expected-raise guards among them), in rank
//! order; with `--jobs N`, once one was rejected, the next ones' targeted runs are made ahead
//! in scratch copies ([`parallel::Ahead`]).

use super::{llm, CandidateSource, Flow, Round};
use crate::plan::{self, Candidate};
use crate::session::work::{gone, is_progress, next_failure, Stages, Trial, Work};
use crate::session::{excluded, failure_key, parallel, SessionError};
use crate::traceback::Failure;

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
    ahead: Option<parallel::Ahead>,
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
        let candidates = match round.planned.take() {
            Some(Ok(c)) => c,
            // Wrong output and failures no rule knows: the search over small edits first (no
            // model, every candidate proven); what it cannot fix is the model's when asked for.
            Some(Err(e)) if round.depth == 0 && w.applies(failure, &e) => {
                round.plan_error = Some(e);
                return Err(Flow::Next);
            }
            // What no rule knows (a wrong result asserted in the test) is the model's to try.
            Some(Err(e)) if round.model.is_some() && llm::may_try(&e) => {
                w.ctx.reason.get_or_insert(e.to_string());
                round.plan_error = Some(e);
                Vec::new()
            }
            Some(Err(e)) => {
                let mut why = e.to_string();
                if matches!(e, plan::PlanError::NoRule(_)) && !w.s.opts.selection.is_default() {
                    why.push_str(" (the configuration's select/ignore leaves rules out)");
                }
                w.ctx.reason.get_or_insert(why);
                return Err(Flow::Stop);
            }
            None => return Err(Flow::Stop),
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
            round.declined.push(format!(
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
            if !round.declined.is_empty() {
                why = format!("{why} ({})", round.declined.join("; "));
            }
            w.ctx.reason.get_or_insert(why);
            let search_follows = round.depth == 0 && w.applies_after_rules(failure);
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
            // are made ahead in scratch copies (see `parallel::Ahead`): the first one, mostly
            // the one kept, costs no copy and no run alongside. The run made ahead stands in
            // for the workspace's, unless the candidate moved the failure elsewhere: the new
            // failure, worked on next, is read in the workspace.
            if judged == 1 {
                self.ahead = parallel::Ahead::start(w, failure, candidates, rank);
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
