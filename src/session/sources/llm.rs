//! The model's turn in the attempt loop: when the rules' candidates for a failure are used up
//! (or none match), [`Turn::next`] asks the model, one request per attempt and within the
//! category's budget, and hands back its answer as a candidate that the loop proves exactly
//! like a rule's. An answer refused before any run ([`crate::llm::candidate`]) is an attempt
//! too, so a model that loops ends with the budget; each request carries the earlier
//! candidates and the failures they led to.

use std::path::Path;

use super::{CandidateSource, Flow, Round};
use crate::command::OUTPUT_CHECK_EXC;
use crate::llm::prompt::{self, Previous, PromptInput, Snapshot};
use crate::llm::{candidate, Exchange};
use crate::plan::{Candidate, PlanError};
use crate::probe::ProbeReport;
use crate::session::error::SessionError;
use crate::session::model::Attempt;
use crate::session::runs::Runs;
use crate::session::shared::{excluded, now_ms, TIME_BUDGET_USED_UP};
use crate::session::work::{Stages, Step, Trial, Work};
use crate::status::{AttemptOutcome, Source};
use crate::traceback::Failure;

/// What a reviewer of a model's patch is told.
pub const REVIEW: &str = "written by a model (--llm): pytest proved it; read the whole change";

/// Plan errors that leave the failure to the model: no rule knows it, the only project frame
/// is the test (an assertion: the test is the specification, the code it calls is to blame),
/// or no frame is in the project (a failed output check of command mode: the script is shown).
/// A file the tool may not write stays nobody's.
pub fn may_try(e: &PlanError) -> bool {
    matches!(
        e,
        PlanError::NoRule(_)
            | PlanError::NoLocation
            | PlanError::TestFile(_)
            | PlanError::NotLocated(..)
            | PlanError::Unparseable(..)
    )
}

/// The model's share of one failure's attempts.
pub struct Turn {
    probe: Option<ProbeReport>,
    /// Asked of the interpreter when the model is first asked.
    env: Option<Snapshot>,
    previous: Vec<Previous>,
    /// The patched bytes of the model's candidates so far, to name the one an answer repeats
    /// (whether pytest rejected it is [`crate::tried::Tried`]'s record).
    tried: Vec<Vec<u8>>,
    /// The last candidate handed out: the index its attempt record gets, and its diff.
    pending: Option<(usize, String)>,
    /// What the rules said before the model was asked.
    rules_said: Option<String>,
    asked: bool,
    stopped: Option<String>,
}

impl Turn {
    /// None unless the model may be asked: `--llm` and not `--safe-only` (its edits are unsafe).
    pub fn new(
        s: &Runs,
        llm: Option<&crate::llm::Llm>,
        _failure: &Failure,
        probe: Option<&ProbeReport>,
    ) -> Option<Turn> {
        (llm.is_some() && !s.opts.safe_only).then(|| Turn {
            probe: probe.cloned(),
            env: None,
            previous: Vec::new(),
            tried: Vec::new(),
            pending: None,
            rules_said: None,
            asked: false,
            stopped: None,
        })
    }

    /// The model's next candidate, or none (the reason is kept for [`Turn::finish`]).
    pub fn next(&mut self, w: &mut Work, failure: &Failure, depth: usize) -> Option<Candidate> {
        if let Some((at, diff)) = self.pending.take() {
            if let Some(a) = w.ctx.attempts.get(at) {
                self.previous.push(Previous {
                    diff,
                    outcome: led_to(a),
                });
            }
        }
        if !self.asked {
            self.asked = true;
            self.rules_said = w.ctx.reason.clone();
            self.env = Some(prompt::snapshot(
                &w.s.prover.python,
                w.ws.root(),
                &prompt_files(failure),
            ));
        }
        loop {
            if *w.ctx.budget == 0 || crate::process::interrupted() {
                self.stopped = Some(format!(
                    "attempt budget for {} failures used up",
                    w.ctx.category.as_str()
                ));
                return None;
            }
            if !w.s.prover.time_for_a_candidate() {
                w.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
                return None;
            }
            let (spec, files) = command_spec(w.s, w.ws.root(), failure);
            let llm = w.held.llm.as_mut()?;
            if let Some(why) = llm.unavailable() {
                self.stopped = Some(why);
                return None;
            }
            let messages = prompt::build(&PromptInput {
                root: w.ws.root(),
                failure,
                probe: self.probe.as_ref(),
                env: self.env.as_ref().expect("set on the first ask"),
                previous: &self.previous,
                allow_tests: w.s.opts.allow_tests,
                spec: spec.as_deref(),
                files: &files,
            });
            let answer = llm.ask(&messages);
            let exchange = llm.exchanges.last().cloned();
            let answer = match answer {
                Ok(a) => a,
                Err(e) => {
                    self.stopped = Some(format!("the model gave no usable answer: {e}"));
                    return None;
                }
            };
            let model = llm.config.model.clone();
            let cand = candidate::from_answer(
                w.ws.root(),
                &answer,
                &model,
                w.ctx.category,
                w.s.opts.allow_tests,
            )
            .map_err(|e| e.to_string())
            .and_then(|c| match excluded(w.s.opts, &c.file) {
                Some(why) => Err(why),
                None => Ok(c),
            })
            // A repeat is refused with feedback, not skipped in silence: the run-wide record
            // (src/tried.rs) also knows the rules' rejected candidates.
            .and_then(|c| {
                let own = self.tried.iter().position(|t| *t == c.patched);
                match (own, w.ctx.tried.rejected_for(failure, &c.path, &c.patched)) {
                    (Some(i), _) => Err(format!(
                        "the answer repeats the model's candidate number {}",
                        i + 1
                    )),
                    (None, Some(_)) => Err(
                        "the answer repeats a candidate pytest already rejected for this failure"
                            .to_string(),
                    ),
                    (None, None) => Ok(c),
                }
            });
            match cand {
                Ok(c) => {
                    self.tried.push(c.patched.clone());
                    self.pending = Some((w.ctx.attempts.len(), c.diff.clone()));
                    // The attempt record made for it carries the exchange to the audit log.
                    if let Some(l) = w.held.llm.as_mut() {
                        l.pending = exchange;
                    }
                    return Some(c);
                }
                Err(why) => {
                    *w.ctx.budget -= 1;
                    self.previous.push(Previous {
                        diff: String::new(),
                        outcome: format!("Refused before any run: {why}."),
                    });
                    let model = w.held.llm.as_ref().map_or("", |l| l.config.model.as_str());
                    let a = refused(w.s, model, failure, &w.ctx, depth, why, exchange);
                    w.ctx.attempts.push(a);
                }
            }
        }
    }

    /// The failure's reason, once the loop is over without a proven candidate.
    pub fn finish(self, ctx: &mut Step) {
        if !self.asked || ctx.reason.as_deref() == Some(TIME_BUDGET_USED_UP) {
            return;
        }
        let why = self.stopped.unwrap_or_else(|| "no candidate passed".into());
        ctx.reason = Some(match self.rules_said {
            Some(r) => format!("{r}; model fallback: {why}"),
            None => format!("model fallback: {why}"),
        });
    }
}

/// Command mode: the command and what its output should have been (the specification of a
/// failed output check), and the project files its arguments name (the script to repair).
fn command_spec(s: &Runs, root: &Path, failure: &Failure) -> (Option<String>, Vec<String>) {
    let Some(judge) = &s.opts.judge else {
        return (None, Vec::new());
    };
    let files: Vec<String> = judge
        .argv
        .iter()
        .skip(1)
        .filter(|a| a.ends_with(".py") && root.join(a).is_file())
        .cloned()
        .collect();
    let spec = match (
        &s.prover.last_mismatch,
        failure.exc_type == OUTPUT_CHECK_EXC,
    ) {
        (Some(m), true) => {
            let what = match m.check {
                "expect_stdout" => "Expected stdout (exact)",
                "expect_stdout_regex" => "Expected stdout to match the regex",
                _ => "Expected stderr to be empty; it printed",
            };
            let mut t = format!("Command: {}\n{what}:\n{}\n", m.command, m.expected);
            if m.check != "stderr_empty" {
                t.push_str(&format!("It printed instead:\n{}\n", m.actual));
            } else {
                t.push_str(&format!("{}\n", m.actual));
            }
            Some(t)
        }
        _ => Some(format!(
            "Command: {}\nIt must exit with status 0.\n",
            judge.line
        )),
    };
    (spec, files)
}

/// The files whose imports and neighbours describe the environment: the project frames'
/// files, deepest first (the test's when it is the only one).
fn prompt_files(failure: &Failure) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for f in failure.frames.iter().rev().filter(|f| f.resolved.is_some()) {
        if !files.contains(&f.file) {
            files.push(f.file.clone());
        }
    }
    files
}

/// What an earlier candidate led to, for the next request: the outcome and pytest's last lines.
fn led_to(a: &Attempt) -> String {
    let what = match a.outcome {
        AttemptOutcome::StillFailing | AttemptOutcome::Progressed => "The test still fails",
        AttemptOutcome::NewFailures => "Other tests broke",
        AttemptOutcome::Timeout => "The test hung",
        AttemptOutcome::SuiteError => "The full run gave no verdict",
        AttemptOutcome::ByChance => "The test passed only by chance",
        _ => "It was not kept",
    };
    let mut out = what.to_string();
    if let Some(nf) = &a.new_failure {
        out.push_str(&format!(": {nf}"));
    }
    if !a.broke.is_empty() {
        out.push_str(&format!(" (broke {})", a.broke.join(", ")));
    }
    out.push_str(".\n");
    let output = prompt::tail(&a.stdout_tail);
    if !output.trim().is_empty() {
        out.push_str(&format!("pytest said (last lines):\n```\n{output}\n```\n"));
    }
    out
}

/// The record of an answer refused before any run.
fn refused(
    s: &mut Runs,
    model: &str,
    failure: &Failure,
    ctx: &Step,
    depth: usize,
    why: String,
    exchange: Option<Exchange>,
) -> Attempt {
    s.attempt_no += 1;
    Attempt {
        attempt: s.attempt_no,
        test: failure.test.clone(),
        step: depth,
        category: ctx.category,
        file: failure
            .location
            .as_ref()
            .map(|l| l.file.clone())
            .unwrap_or_default(),
        rule: candidate::RULE.to_string(),
        title: format!("answer of {model}"),
        safe: false,
        applicability: crate::status::Applicability::Unsafe,
        source: Source::Llm,
        diff: String::new(),
        outcome: AttemptOutcome::Refused,
        broke: Vec::new(),
        new_failure: Some(why),
        confirmed_by: None,
        exit_code: None,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        timestamp_ms: now_ms(),
        duration_ms: exchange.as_ref().map_or(0, |e| e.duration_ms),
        silencing: None,
        search: None,
        proof: None,
        repeats: None,
        proven_by: Vec::new(),
        exchange,
    }
}

/// The model fallback (`--llm`) as a candidate source: one request per candidate, each proven
/// like a rule's, until the budgets or the model's own limits end it.
pub(in crate::session) struct Model;

impl CandidateSource for Model {
    fn work(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
    ) -> Result<Flow, SessionError> {
        let Some(mut turn) = round.model.take() else {
            return Ok(Flow::Next);
        };
        // The rules just checked the budgets, and nothing was tried since.
        let mut checked = round.checked;
        loop {
            if !checked && w.out_of_budget() {
                break;
            }
            checked = false;
            let Some(cand) = turn.next(w, failure, round.depth) else {
                break;
            };
            // The same bytes were already proven wrong for this failure: no budget spent.
            if w.ctx.already_rejected(failure, &cand) {
                continue;
            }
            // An edit of a file a pending fix changed is not independent of it: confirm first.
            if w.ctx.batch_files.contains(&cand.file) {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let label = format!("the model's candidate ({})", cand.fix.rule);
            *w.ctx.budget -= 1;
            let trial = Trial {
                depth: round.depth,
                label,
                stages: Stages::Failing { made: None },
            };
            if let Some(flow) = w.prove(failure, &cand, trial)?.into() {
                return Ok(flow);
            }
        }
        turn.finish(&mut w.ctx);
        Ok(Flow::Stop)
    }
}
