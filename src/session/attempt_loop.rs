//! The attempt loop: the baseline, then each failure in turn (biggest crash-site group first),
//! worked on through [`super::work`], until the queue is empty, the time budget is used up or
//! the run is interrupted.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::known::Held;
use super::model::{outcome_of, Attempt, FailureOutcome, Patch, PatchStep, Report};
use super::prover::Phase;
use super::runs::Runs;
use super::shared::Options;
use super::shared::{
    failure_key, failure_keys, is_conftest, review_notes, run_id, MAX_HARD_HANGS,
    TIME_BUDGET_USED_UP,
};
use super::sources::{self, llm, search};
use super::work::{Step, Work};
use super::workspace::Workspace;
use super::{batch, causes, groups, lazy};
use crate::category;
use crate::command::OUTPUT_CHECK_EXC;
use crate::plan::Candidate;
use crate::plugin::Hang;
use crate::rules::{Category, RuleSet};
use crate::runner::{self, Interpreter};
use crate::status::{Applicability, FailureStatus, Judge, ReasonCode, Source};
use crate::traceback::{self, Failure, When};
use crate::tried::Tried;
use crate::verdict::{self, Verdict};

/// The loop itself, in any workspace. Returns the report; the caller keeps or rolls back.
pub fn run_loop(
    opts: &Options,
    rules: &RuleSet,
    python: Interpreter,
    ws: &mut dyn Workspace,
    started: Instant,
) -> Result<Report, SessionError> {
    let run_id = run_id();
    let held = Held::new(opts, &python);
    let mut s = Runs::new(opts, python, started);
    let selection = match &opts.test {
        Some(t) => Some(s.resolve_selection(ws, t)?),
        None => None,
    };
    // The log is read before any run: a log that cannot be read is bad input.
    let log_failures = match &opts.log {
        Some(bytes) => Some(
            traceback::parse(bytes, opts.root.path())
                .map_err(SessionError::Log)?
                .failures,
        ),
        None => None,
    };
    // With the log given, a targeted run of its failures stands for the full baseline when it
    // reproduces them (see [`super::lazy`]).
    let reproduced = match &log_failures {
        Some(log) => lazy::reproduce(&mut s, ws, log)?,
        None => None,
    };
    let (hung, baseline_failures) = match reproduced {
        Some(failures) => (Vec::new(), failures),
        None => baseline(&mut s, ws)?,
    };
    if !baseline_failures.is_empty() {
        // Under a narrow selection, which tests outside it run which lines: on the original
        // bytes, before any candidate is written.
        s.collect_outside(ws)?;
    }
    // A conftest that cannot be imported hides the whole suite: what fails behind it is only
    // known once it is fixed, and is then worked on like the rest.
    let blind = !baseline_failures.is_empty() && baseline_failures.iter().all(is_conftest);
    let current = failure_keys(&baseline_failures);
    s.flaky.baseline = current.clone();
    let targets: Vec<Failure> = log_failures.unwrap_or(baseline_failures);
    let outcomes = hung_outcomes(&hung, ws.root(), opts);
    let mut lp = AttemptLoop {
        s,
        held,
        ws,
        rules,
        selection,
        blind,
        current,
        groups: Default::default(),
        order: BTreeMap::new(),
        queue: VecDeque::new(),
        hung: hung.len(),
        outcomes,
        attempts: Vec::new(),
        accepted: BTreeMap::new(),
        accepted_cands: Vec::new(),
        accepted_for: Vec::new(),
        gone_with: BTreeMap::new(),
        members: Vec::new(),
        links: Vec::new(),
        causes: Vec::new(),
        out_of_time: false,
        hangs_checked: 0,
        hangs_passed: BTreeSet::new(),
        worked_on: 0,
        first_place: BTreeMap::new(),
        tried: Tried::default(),
        pending: batch::Batch::default(),
        no_defer: BTreeSet::new(),
        searched_with: BTreeMap::new(),
    };
    // Biggest crash-site group first; each group is worked on through one representative.
    let (groups, ordered) =
        groups::Groups::build(targets.into_iter().filter(|f| lp.selected(f)).collect());
    lp.members = ordered
        .iter()
        .map(|f| causes::Member::of(f, groups.index(f)))
        .collect();
    lp.groups = groups;
    // The report lists the failures in this order, whenever a batch decided them.
    lp.order = ordered
        .iter()
        .enumerate()
        .map(|(i, f)| (failure_key(f), i))
        .collect();
    lp.queue = ordered.into();
    let nothing_failed = lp.queue.is_empty();
    lp.run()?;
    if !nothing_failed && !crate::process::interrupted() {
        lp.audit()?;
    }
    Ok(lp.report(run_id, nothing_failed, started))
}

/// The baseline run (taken again after each hard hang, up to [`MAX_HARD_HANGS`]): the hard
/// hangs, and the failures of the run that finished. Sets the runs' timeout from it.
fn baseline(
    s: &mut Runs,
    ws: &mut dyn Workspace,
) -> Result<(Vec<Hang>, Vec<Failure>), SessionError> {
    let opts = s.opts;
    // A test stuck where the per-test timer cannot reach it (in C code) ends the whole run
    // through the plugin's backstop: it is reported, left out of every later run, and the
    // baseline is taken again so that the other failures are still worked on.
    let mut hung = Vec::new();
    crate::progress::phase("running the test suite (baseline)");
    let baseline = loop {
        // A command runs wrapped, so that a hang raises where it is stuck (one limit).
        let wrapped = match opts.judge {
            Some(_) => s.prover.command_baseline(ws)?,
            None => None,
        };
        let run = match wrapped {
            Some(run) => run,
            None => s.run(ws, &[], Phase::Baseline)?,
        };
        match &run.hang {
            Some(h) if hung.len() < MAX_HARD_HANGS && !s.prover.deselect.contains(&h.test) => {
                s.prover.deselect.push(h.test.clone());
                hung.push(h.clone());
            }
            _ => break run,
        }
    };
    s.prover.baseline = baseline.duration;
    // The baseline is read once: its failures are both the reference set and, without a log,
    // the failures to work on.
    let failures = match s.prover.read(&baseline, ws.root()) {
        Verdict::Green => Vec::new(),
        Verdict::Failed(f) => f,
        other => return Err(no_verdict(s, other)),
    };
    // The command hung and its run says where: the search sizes its candidates' limit apart.
    s.prover.baseline_hung = opts.judge.is_some()
        && failures
            .iter()
            .any(|f| f.exc_type == crate::plugin::TIMEOUT_EXC);
    if opts.timeout.is_none() {
        // Candidates may slow a test down, but a hang must not cost 10 minutes a try.
        s.prover.timeout =
            (baseline.duration * 10).clamp(Duration::from_secs(30), runner::DEFAULT_TIMEOUT);
        if opts.judge.is_some() {
            // The command's own limit (--test-timeout) holds for every run of it.
            s.prover.timeout = s.prover.timeout.min(opts.test_timeout);
        }
    }
    // A test that hung in the baseline would cost the per-test limit in every later run; it
    // is reported from the baseline and left out from here on.
    for f in &failures {
        if let Some(t) = f
            .test
            .as_ref()
            .filter(|_| f.exc_type == crate::plugin::TIMEOUT_EXC)
        {
            if !s.prover.deselect.contains(t) {
                s.prover.deselect.push(t.clone());
                // What a later full run costs (xdist's choice, the lazy baseline's limit) is
                // the baseline without the time its hung tests waited for their limit.
                if let Some(waited) = limit_waited(&f.msg) {
                    s.prover.baseline = s.prover.baseline.saturating_sub(waited);
                }
            }
        }
    }
    Ok((hung, failures))
}

/// The limit a test stopped by the plugin waited for, read from its message (`the test did not
/// finish within 60 s ...`, the plugin's own words).
fn limit_waited(msg: &str) -> Option<Duration> {
    let rest = msg.strip_prefix("the test did not finish within ")?;
    let secs: f64 = rest.split(' ').next()?.parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

/// Why a baseline that gave no failures to read stops the run.
fn no_verdict(s: &Runs, verdict: Verdict) -> SessionError {
    let opts = s.opts;
    match verdict {
        Verdict::Usage(m) => SessionError::PytestRefused(m),
        Verdict::Error(m) => SessionError::BaselineNoVerdict(m),
        Verdict::TimedOut => {
            let what = if opts.judge.is_some() {
                "the command"
            } else {
                "the test suite"
            };
            if s.prover.out_of_time() {
                SessionError::OutOfTimeBudget {
                    what,
                    budget: opts.time_budget,
                }
            } else {
                SessionError::TimedOut {
                    what,
                    timeout: s.prover.timeout,
                    flag: s.prover.timeout_flag(),
                }
            }
        }
        // A green or failed verdict has failures to read and never gets here.
        Verdict::NoTests | Verdict::Green | Verdict::Failed(_) => SessionError::NoTests {
            root: opts.root.path().to_path_buf(),
            pytest_args: opts.pytest_args.clone(),
            // The report of a run that found nothing still counts the runs that found it.
            pytest_runs: s.prover.count,
            pytest_ms: s.prover.total.as_millis() as u64,
        },
    }
}

/// The outcomes of the hard hangs, reported from the baseline.
fn hung_outcomes(hung: &[Hang], root: &Path, opts: &Options) -> Vec<FailureOutcome> {
    hung.iter()
        .map(|h| {
            let (file, line, func) = hang_place(h, root);
            FailureOutcome {
                test: Some(h.test.clone()),
                when: match h.when.as_str() {
                    "setup" => When::Setup,
                    "teardown" => When::Teardown,
                    _ => When::Call,
                },
                file,
                line,
                func,
                exc_type: crate::plugin::TIMEOUT_EXC.to_string(),
                msg: format!(
                    "the test did not finish within {} s (selfdebug's per-test limit, \
                     --test-timeout)",
                    opts.test_timeout.as_secs_f64()
                ),
                category: Category::Timeout,
                status: FailureStatus::TimedOut,
                reason_code: ReasonCode::TimedOut,
                reason: Some(format!(
                    "{}; it was left out of every later run (--deselect)",
                    h.describe()
                )),
                probe: None,
                output_check: None,
                suspicious: Vec::new(),
                group: None,
                untried: 0,
                prechecked: 0,
                cause: None,
                test_literals: 0,
                runs: None,
            }
        })
        .collect()
}

/// The loop's state over the whole run.
struct AttemptLoop<'w, 'a> {
    s: Runs<'a>,
    /// What the sources propose with beside the runs (see [`Held`]).
    held: Held,
    ws: &'w mut dyn Workspace,
    rules: &'a RuleSet,
    /// `--module`: the selected test ids.
    selection: Option<BTreeSet<String>>,
    /// The reference run saw no test (see [`Step::blind`]).
    blind: bool,
    /// The failing set now.
    current: BTreeSet<(String, When)>,
    groups: groups::Groups,
    /// The order the report lists the failures in.
    order: BTreeMap<(String, When), usize>,
    queue: VecDeque<Failure>,
    /// How many outcomes at the front are the hard hangs'.
    hung: usize,
    outcomes: Vec<FailureOutcome>,
    attempts: Vec<Attempt>,
    /// Proven content per file (the file's bytes with every accepted fix).
    accepted: BTreeMap<PathBuf, Vec<u8>>,
    accepted_cands: Vec<Candidate>,
    /// The failure each of `accepted_cands` was kept for.
    accepted_for: Vec<(String, When)>,
    /// Failing tests that passed once the fix kept for a test (the key) was proven alone: the
    /// fix's own failures beyond its group (reported as fixed by another patch).
    gone_with: BTreeMap<String, Vec<String>>,
    /// The failures to work on, as the causes are built from them (see [`causes`]).
    members: Vec<causes::Member>,
    /// Tests searched as one cause (the spectrum's): (the test worked on, another).
    links: Vec<(String, String)>,
    /// The causes, once the loop is over.
    causes: Vec<super::model::Cause>,
    out_of_time: bool,
    /// How many kept patches the hung tests were last run against (see `hang_gone`).
    hangs_checked: usize,
    /// The hung tests that passed on a patched tree.
    hangs_passed: BTreeSet<String>,
    worked_on: usize,
    /// Where a failure was before a kept patch moved it.
    first_place: BTreeMap<(String, When), (String, u32)>,
    tried: Tried,
    /// Fixes kept tentatively, confirmed together by one full run (see [`batch`]).
    pending: batch::Batch,
    /// Failures whose fix the batch's fallback dropped: worked on again, confirmed alone.
    no_defer: BTreeSet<(String, When)>,
    /// Tests searched with another failing test of their cause, in vain: test → (that test,
    /// the reason). They share its outcome instead of a search of their own.
    searched_with: BTreeMap<String, (String, String)>,
}

/// What the loop does next with a failure it looked at.
enum Next {
    /// Its outcome is decided: reported.
    Report(Box<FailureOutcome>),
    /// Decided with the pending batch, or put back: nothing to report now.
    Done,
    /// Put back at the front of the queue once the pending fixes are confirmed.
    AfterSettle(Box<Failure>),
}

impl AttemptLoop<'_, '_> {
    fn selected(&self, f: &Failure) -> bool {
        self.selection
            .as_ref()
            .is_none_or(|ids| f.test.as_ref().is_some_and(|t| ids.contains(t)))
    }

    fn run(&mut self) -> Result<(), SessionError> {
        loop {
            if crate::process::interrupted() {
                break;
            }
            let Some(failure) = self.queue.pop_front() else {
                if self.pending.is_empty() {
                    break;
                }
                // Dropped fixes put their failures back in the queue.
                self.settle()?;
                continue;
            };
            self.worked_on += 1;
            crate::progress::failure(
                self.worked_on,
                self.worked_on + self.queue.len(),
                failure.test.as_deref(),
            );
            match self.look_at(failure)? {
                Next::Report(outcome) => self.outcomes.push(*outcome),
                Next::Done => {}
                Next::AfterSettle(failure) => {
                    let failure = *failure;
                    self.queue.push_front(failure);
                    self.worked_on -= 1;
                    self.settle()?;
                }
            }
        }
        if !self.pending.is_empty() {
            // Interrupted: the pending fixes are undone, unconfirmed.
            self.settle()?;
        }
        Ok(())
    }

    /// Confirms the pending fixes and brings the loop's state up to date.
    fn settle(&mut self) -> Result<(), SessionError> {
        let mut st = batch::Settle {
            queue: &mut self.queue,
            current: &mut self.current,
            first_place: &mut self.first_place,
            accepted_cands: &mut self.accepted_cands,
            accepted_for: &mut self.accepted_for,
            gone_with: &mut self.gone_with,
            outcomes: &mut self.outcomes,
            groups: &mut self.groups,
            no_defer: &mut self.no_defer,
            tried: &mut self.tried,
            out_of_time: &mut self.out_of_time,
        };
        self.pending.settle(
            &mut self.s,
            &mut *self.ws,
            &mut self.attempts,
            &mut self.accepted,
            &mut st,
        )
    }

    /// One failure: decided without a candidate, or worked on.
    fn look_at(&mut self, failure: Failure) -> Result<Next, SessionError> {
        let root = self.s.opts.root.path();
        let sandboxed = self.s.opts.sandbox.is_some();
        let (category, mut suggestion) = category::categorize_in(&failure, root, sandboxed);
        let mut outcome = outcome_of(&failure, category);
        let group = self.groups.index(&failure);
        outcome.group = group;
        // A test of a group whose fix is pending is decided with it.
        if let Some(entry) = group.and_then(|g| self.pending.of_group(g)) {
            entry.members.push(failure);
            return Ok(Next::Done);
        }
        if self.s.flaky.is_known(&failure_key(&failure)) {
            // Found flaky while another failure was worked on: reported with its counts.
            return Ok(Next::Done);
        }
        if let Some((file, line)) = self.first_place.get(&failure_key(&failure)) {
            outcome.file = Some(file.clone());
            outcome.line = Some(*line);
        }
        if let Some(next) = self.decided(&failure, category, &mut suggestion, &mut outcome)? {
            return Ok(next);
        }
        // A failure that is not independent of the pending fixes waits for their full run.
        let key = failure_key(&failure);
        if !self.pending.is_empty()
            && (!self.pending.independent(&failure)
                || self.blind
                || self.s.opts.judge.is_some()
                || self.no_defer.contains(&key))
        {
            return Ok(Next::AfterSettle(Box::new(failure)));
        }
        self.work(failure, category, outcome)
    }

    /// The outcome of a failure decided without working on it (an output check nothing can
    /// repair, a missing module installed, an escalation, a hang, gone already, its group's,
    /// out of time); `None` when it is to be worked on.
    fn decided(
        &mut self,
        failure: &Failure,
        category: Category,
        suggestion: &mut Option<String>,
        outcome: &mut FailureOutcome,
    ) -> Result<Option<Next>, SessionError> {
        let opts = self.s.opts;
        if failure.exc_type == OUTPUT_CHECK_EXC {
            // The command has one failure at a time: the last run's is this one.
            outcome.output_check = self.s.prover.last_mismatch.clone();
            // Without a traceback no rule applies: the search over small edits looks at what
            // the command ran, and the model (when asked for) gets the command, the expected
            // output and the script as its specification.
            if (self.held.llm.is_none() && !search::takes_output(&self.s)) || opts.safe_only {
                outcome.status = FailureStatus::NotFixed;
                outcome.reason = Some(format!(
                    "{}; without a traceback no rule applies: only the LLM fallback (--llm) \
                     can work on wrong output",
                    failure.msg
                ));
                return Ok(Some(Next::Report(Box::new(outcome.clone()))));
            }
        }
        if category == Category::Dependency && opts.install_missing {
            if let Some(after) = self.s.install_missing(&mut *self.ws, failure, suggestion)? {
                if self.installed(failure, after, outcome) {
                    return Ok(Some(Next::Report(Box::new(outcome.clone()))));
                }
            }
        }
        if matches!(category, Category::Environment | Category::Dependency) {
            outcome.status = FailureStatus::Escalated;
            outcome.reason = suggestion.clone();
            return Ok(Some(Next::Report(Box::new(outcome.clone()))));
        }
        // A test stopped by the per-test limit is never patched by a rule (no rule knows why
        // a loop never ends); with --llm the model gets it, with the frame it was stuck in.
        let to_the_model = self.held.llm.is_some() && !opts.safe_only && failure.location.is_some();
        // The search looks at the loop it was stuck in (a loop variable that never moves).
        let to_the_search = failure.location.is_some() && search::takes_hangs(&self.s);
        if category == Category::Timeout && !to_the_model && !to_the_search {
            outcome.status = FailureStatus::TimedOut;
            outcome.reason = suggestion.clone();
            return Ok(Some(Next::Report(Box::new(outcome.clone()))));
        }
        if let Some(test) = failure
            .test
            .as_ref()
            .filter(|_| category != Category::Timeout)
        {
            // (A hung test is left out of later runs: its absence there proves nothing.)
            if !self.accepted_cands.is_empty() && !self.current.iter().any(|(t, _)| t == test) {
                outcome.status = FailureStatus::FixedByAnotherPatch;
                return Ok(Some(Next::Report(Box::new(outcome.clone()))));
            }
        }
        if category == Category::Timeout && self.hang_gone(failure)? {
            outcome.status = FailureStatus::FixedByAnotherPatch;
            return Ok(Some(Next::Report(Box::new(outcome.clone()))));
        }
        if let Some(next) = self.group_decided(outcome) {
            return Ok(Some(next));
        }
        if let Some((rep, reason)) = failure
            .test
            .as_ref()
            .filter(|_| category != Category::Timeout)
            .and_then(|t| self.searched_with.get(t))
        {
            outcome.status = FailureStatus::NotFixed;
            outcome.reason = Some(format!(
                "same cause as {rep} (their failures share the most suspicious lines), \
                 searched with it: {reason}"
            ));
            return Ok(Some(Next::Report(Box::new(outcome.clone()))));
        }
        if self.s.prover.out_of_time() {
            self.out_of_time = true;
            outcome.status = FailureStatus::NotFixed;
            outcome.reason = Some(TIME_BUDGET_USED_UP.into());
            return Ok(Some(Next::Report(Box::new(outcome.clone()))));
        }
        Ok(None)
    }

    /// `--install-missing` installed something: the same test (or the command) failing
    /// differently now, and failures that the missing module hid, are work like the rest.
    /// Whether the failure is gone (its outcome then says so).
    fn installed(
        &mut self,
        failure: &Failure,
        after: Vec<Failure>,
        outcome: &mut FailureOutcome,
    ) -> bool {
        let key = failure_key(failure);
        let same = |f: &Failure| {
            failure_key(f) == key && f.exc_type == failure.exc_type && f.msg == failure.msg
        };
        // The same failure unchanged is this one, reported once.
        let more: Vec<Failure> = after
            .iter()
            .filter(|f| {
                (failure_key(f) == key || !self.current.contains(&failure_key(f)))
                    && !same(f)
                    && self.selected(f)
            })
            .cloned()
            .collect();
        self.queue.extend(more);
        self.current = failure_keys(&after);
        let gone = !after.iter().any(same);
        if gone {
            let i = self.s.installed.last();
            outcome.status = FailureStatus::Installed;
            outcome.reason = i.map(|i| {
                format!(
                    "installed {} with pip for the missing module `{}`; the failure is gone",
                    i.distribution, i.module
                )
            });
        }
        gone
    }

    /// A hung test is left out of the runs that prove later patches, so their verdicts say
    /// nothing about it: once a patch is kept, the hung tests still left out are run on the
    /// patched tree (one run, under the search's short limit) before any work on one of them.
    /// Those that pass were fixed by that patch and join the later runs again; searched
    /// without this check, any edit that leaves the patched code working would pass its
    /// targeted run and be kept as its "fix".
    fn hang_gone(&mut self, failure: &Failure) -> Result<bool, SessionError> {
        let Some(test) = failure.test.clone() else {
            return Ok(false);
        };
        if self.hangs_passed.contains(&test) {
            return Ok(true);
        }
        if self.accepted_cands.is_empty() || !self.s.prover.deselect.contains(&test) {
            return Ok(false);
        }
        if self.hangs_checked != self.accepted_cands.len() {
            self.hangs_checked = self.accepted_cands.len();
            let hung = std::mem::take(&mut self.s.prover.deselect);
            let mut spec = self.s.prover.spec(&*self.ws, &hung, &[]);
            let limit = sources::limits::for_failure(&self.s, failure, Category::Timeout, &test)
                .unwrap_or_else(|| self.s.prover.candidate_limit());
            spec.test_timeout = spec.test_timeout.map(|t| t.min(limit));
            let run = self.s.prover.exec_pytest(&spec, Phase::Candidate);
            let still: BTreeSet<String> = match run.map(|r| verdict::read(&r, self.ws.root())) {
                Ok(Verdict::Green) => BTreeSet::new(),
                Ok(Verdict::Failed(f)) => f.into_iter().filter_map(|f| f.test).collect(),
                // No verdict: nothing is known, all stay out.
                Ok(_) => hung.iter().cloned().collect(),
                Err(e) => {
                    self.s.prover.deselect = hung;
                    return Err(e);
                }
            };
            let (out, passed): (Vec<String>, Vec<String>) =
                hung.into_iter().partition(|t| still.contains(t));
            self.s.prover.deselect = out;
            self.hangs_passed.extend(passed);
        }
        Ok(self.hangs_passed.contains(&test))
    }

    /// A group whose representative no candidate fixed: the others share its crash site, its
    /// probe and its candidates, so they share its outcome too.
    fn group_decided(&self, outcome: &mut FailureOutcome) -> Option<Next> {
        let g = outcome.group.filter(|g| self.groups.worked_on(*g))?;
        let rep = self.groups.list[g].representative.clone();
        let (status, reason) = self
            .outcomes
            .iter()
            .find(|o| o.group == Some(g) && o.test == rep && o.test.is_some())
            .filter(|o| o.status != FailureStatus::Fixed)
            .map(|o| (o.status, o.reason.clone()))?;
        outcome.status = status;
        outcome.reason = Some(format!(
            "same crash site as {}, worked on for the group: {}",
            rep.as_deref().unwrap_or("?"),
            reason.as_deref().unwrap_or("no candidate passed")
        ));
        Some(Next::Report(Box::new(outcome.clone())))
    }

    /// Works on a failure through [`Work`]; what becomes of it.
    fn work(
        &mut self,
        failure: Failure,
        category: Category,
        mut outcome: FailureOutcome,
    ) -> Result<Next, SessionError> {
        let opts = self.s.opts;
        let key = failure_key(&failure);
        let group = outcome.group;
        let defer = self.defers(&failure, &key);
        let others = self.others(group, &failure);
        // The timeout category's own budget is 0 (nothing to patch by rule); the model's tries
        // count against the logic budget instead.
        let budget_of = match category {
            Category::Timeout => Category::Logic,
            other => other,
        };
        let mut budget = opts.max_attempts.min(opts.budgets.get(budget_of));
        let proven_before = self.accepted.clone();
        let fixed_keys: Vec<(String, When)> = std::iter::once(key.clone())
            .chain(
                self.current
                    .iter()
                    .filter(|(t, _)| others.contains(t))
                    .cloned(),
            )
            .collect();
        let ctx = Step {
            rules: self.rules,
            current: &self.current,
            blind: self.blind,
            category,
            budget: &mut budget,
            attempts: &mut self.attempts,
            accepted: &mut self.accepted,
            first_probe: None,
            reason: None,
            flaky: false,
            suspicious: Vec::new(),
            tried: &mut self.tried,
            repeats: None,
            group: others,
            group_key: group.and_then(|g| self.groups.list[g].key.clone()),
            defer,
            batch_files: &self.pending.files,
            needs_flush: false,
            deferred: None,
            untried: 0,
            cause: Default::default(),
            prechecked: Default::default(),
        };
        let mut work = Work {
            s: &mut self.s,
            held: &mut self.held,
            ws: &mut *self.ws,
            ctx,
            work_on: sources::work_on,
        };
        let result = sources::work_on(&mut work, &failure, 0)?;
        let mut ctx = work.ctx;
        if ctx.needs_flush {
            // Worked on again once the pending fixes are confirmed (nothing was rejected).
            if let Some(g) = group {
                self.groups.release(g);
            }
            return Ok(Next::AfterSettle(Box::new(failure)));
        }
        outcome.probe = ctx.first_probe.take();
        outcome.suspicious = std::mem::take(&mut ctx.suspicious);
        outcome.untried = ctx.untried;
        ctx.prechecked.report(&mut outcome);
        let repeats = ctx.repeats.take();
        let reason = ctx.reason.take().or_else(|| repeats.as_ref().map(repeated));
        let (flaky, deferred) = (ctx.flaky, ctx.deferred);
        let cause = std::mem::take(&mut ctx.cause.others);
        if let Some(rep) = &failure.test {
            self.links
                .extend(cause.iter().map(|t| (rep.clone(), t.clone())));
        }
        if flaky {
            // A flaky representative proves nothing about the others: the next one represents.
            if let Some(g) = group {
                self.groups.release(g);
            }
        }
        match result {
            Some((steps, _)) if deferred.is_some() => {
                outcome.status = FailureStatus::Fixed;
                let entry = batch::Entry::new(
                    failure,
                    outcome,
                    steps,
                    fixed_keys,
                    deferred.unwrap_or_default(),
                    &proven_before,
                    &self.accepted,
                );
                self.pending.add(entry, &self.current);
                return Ok(Next::Done);
            }
            Some((steps, after)) => {
                self.kept(&key, steps, after);
                outcome.status = FailureStatus::Fixed;
            }
            None => {
                self.out_of_time |= reason.as_deref() == Some(TIME_BUDGET_USED_UP);
                let tried = ctx_tried(&self.attempts, &failure) > 0 || repeats.is_some();
                outcome.status = unfixed(reason.as_deref(), flaky, category, tried);
                outcome.reason = reason.or(Some("no candidate passed".into()));
                if let (Some(rep), Some(why)) = (&failure.test, &outcome.reason) {
                    for t in cause {
                        self.searched_with.insert(t, (rep.clone(), why.clone()));
                    }
                }
            }
        }
        Ok(Next::Report(Box::new(outcome)))
    }

    /// A fix proven by its own full run (`after`, its failures): kept for the failure `key`.
    fn kept(&mut self, key: &(String, When), steps: Vec<Candidate>, after: Vec<Failure>) {
        let after_keys = failure_keys(&after);
        batch::absorb(&after, &mut self.queue, &mut self.first_place);
        if self.blind {
            // The suite can now be seen: what fails in it is work, not breakage.
            let seen: Vec<Failure> = after
                .into_iter()
                .filter(|f| !self.current.contains(&failure_key(f)) && self.selected(f))
                .collect();
            self.queue.extend(seen);
            self.blind = false;
        }
        batch::note_gone(&mut self.gone_with, key, &self.current, &after_keys);
        self.current = after_keys;
        self.accepted_for.extend(steps.iter().map(|_| key.clone()));
        self.accepted_cands.extend(steps);
    }

    /// Whether a fix of `failure` waits for a batch's full run: when a batch is pending, or
    /// when another independent failure waits that could share it.
    fn defers(&self, failure: &Failure, key: &(String, When)) -> bool {
        let root = self.s.opts.root.path();
        !self.pending.is_empty()
            || (self.s.opts.judge.is_none()
                && !self.blind
                && !self.s.narrow()
                && failure.test.is_some()
                && !self.no_defer.contains(key)
                && self
                    .queue
                    .iter()
                    .any(|f| batch::could_share(f, failure, &self.current, root)))
    }

    /// The group's other tests still failing: one targeted run proves a candidate on them.
    /// The failure represents its group from here on, unless another already does.
    fn others(&mut self, group: Option<usize>, failure: &Failure) -> Vec<String> {
        let Some(g) = group else {
            return Vec::new();
        };
        if !self.groups.worked_on(g) {
            self.groups.represent(g, failure);
        }
        self.groups
            .others(g, failure)
            .into_iter()
            .filter(|t| self.current.iter().any(|(c, _)| c == t))
            .collect()
    }

    /// A cause is fixed whole or not at all (see [`causes`]): the patches of a cause left
    /// failing are restored, the tree as left is run again, and each outcome learns its cause.
    fn audit(&mut self) -> Result<(), SessionError> {
        let audit = causes::Audit {
            members: std::mem::take(&mut self.members),
            links: &self.links,
            cands: &mut self.accepted_cands,
            cands_for: &mut self.accepted_for,
            current: &mut self.current,
            accepted: &mut self.accepted,
        };
        let (list, index) = causes::audit(&mut self.s, &mut *self.ws, audit)?;
        let hangs = self.hung.min(self.outcomes.len());
        for o in &mut self.outcomes[hangs..] {
            let key = (o.test.clone().unwrap_or_default(), o.when);
            o.cause = index.get(&key).copied();
            let Some(c) = o.cause.and_then(|c| list.get(c)) else {
                continue;
            };
            if c.status == crate::status::CauseStatus::Restored {
                let restored = format!("its cause was restored: {}", c.reason);
                o.reason = Some(match o.reason.take() {
                    Some(own) if !o.status.is_fixed() => format!("{own}; {restored}"),
                    _ => restored,
                });
                if o.status.is_fixed() {
                    o.status = FailureStatus::NotFixed;
                }
            }
        }
        self.causes = list;
        Ok(())
    }

    /// The failures a candidate kept for `test` fixes: `test`, then the other tests of its
    /// crash-site group that are fixed (a group is worked on through one test).
    fn fixed_with(&self, test: &str) -> Vec<String> {
        let mut out = vec![test.to_string()];
        let fixed = |t: &String| {
            self.outcomes
                .iter()
                .any(|o| o.test.as_ref() == Some(t) && o.status.is_fixed())
        };
        if let Some(g) = self
            .groups
            .list
            .iter()
            .find(|g| g.tests.iter().any(|t| t == test))
        {
            out.extend(g.tests.iter().filter(|t| *t != test && fixed(t)).cloned());
        }
        // Failures beyond the group that its proving run showed gone, fixed by it.
        for t in self.gone_with.get(test).into_iter().flatten() {
            let by_it = self.outcomes.iter().any(|o| {
                o.test.as_ref() == Some(t) && o.status == FailureStatus::FixedByAnotherPatch
            });
            if by_it && !out.contains(t) {
                out.push(t.clone());
            }
        }
        out
    }

    /// The report, once the loop is over.
    fn report(mut self, run_id: String, nothing_failed: bool, started: Instant) -> Report {
        let opts = self.s.opts;
        // A patch proven for a later failure may have fixed an earlier one as well.
        if !self.accepted_cands.is_empty() {
            for o in &mut self.outcomes {
                let unfixed = matches!(
                    o.status,
                    FailureStatus::NotFixed
                        | FailureStatus::NoCandidate
                        | FailureStatus::SkippedUnsafe
                );
                let gone = o
                    .test
                    .as_ref()
                    .is_some_and(|t| !self.current.iter().any(|(c, w)| c == t && *w == o.when));
                if unfixed && gone {
                    o.status = FailureStatus::FixedByAnotherPatch;
                    o.reason = None;
                }
            }
        }
        // After the hard hangs, in the order they were worked on (failures found later last).
        let hangs = self.hung.min(self.outcomes.len());
        let order = &self.order;
        self.outcomes[hangs..].sort_by_key(|o| {
            let key = (o.test.clone().unwrap_or_default(), o.when);
            order.get(&key).copied().unwrap_or(usize::MAX)
        });
        self.flaky_outcomes();
        self.groups.settle(&self.outcomes);
        let mut patches: Vec<Patch> = self
            .accepted_cands
            .iter()
            .zip(&self.accepted_for)
            .map(|(c, (test, _))| {
                let mut p = patch_of(c, self.rules);
                p.alternatives = search::alternatives_of(&self.attempts, c);
                p.kept_for = self.fixed_with(test);
                p
            })
            .collect();
        // `--install-missing`'s declarations of what it installed.
        patches.append(&mut self.s.declared);
        let mut notes = opts.notes.clone();
        notes.append(&mut self.s.notes);
        // Runs that went cold although the worker was on, and why.
        notes.extend(crate::worker::take_notes());
        if self.out_of_time {
            notes.push(format!(
                "the time budget of {} s was used up: failures not tried are reported as not \
                 fixed (raise it with --time-budget)",
                opts.time_budget.as_secs()
            ));
        }
        let s = self.s;
        Report {
            interpreter: None,
            failures: self.outcomes,
            attempts: self.attempts,
            patches,
            pytest_runs: s.prover.count,
            pytest_ms: s.prover.total.as_millis() as u64,
            duration_ms: started.elapsed().as_millis() as u64,
            nothing_failed,
            rollback: false,
            dry_run: opts.dry_run,
            validated: true,
            run_id,
            backups: Vec::new(),
            phases: s.prover.phases,
            root: opts.root.path().to_string_lossy().into_owned(),
            notes,
            out_of_time: self.out_of_time,
            judge: judge_name(opts),
            command: opts.judge.as_ref().map(|j| j.line.clone()),
            installed: s.installed,
            llm: self.held.llm.as_ref().map(|l| l.usage()),
            groups: self.groups.list,
            causes: self.causes,
            fixes: Vec::new(),
        }
    }
}

impl AttemptLoop<'_, '_> {
    /// The flaky tests among the outcomes, with their counts: a failure worked on and found
    /// flaky, or a bystander found flaky under a candidate (then added; see [`super::flaky`]).
    fn flaky_outcomes(&mut self) {
        let root = self.s.opts.root.path();
        for found in self.s.flaky.outcomes(root) {
            let key = (found.test.clone().unwrap_or_default(), found.when);
            match self
                .outcomes
                .iter_mut()
                .find(|o| (o.test.clone().unwrap_or_default(), o.when) == key)
            {
                Some(o) => {
                    o.status = FailureStatus::Flaky;
                    o.runs = found.runs;
                    if o.reason.is_none() {
                        o.reason = found.reason;
                    }
                }
                None => self.outcomes.push(found),
            }
        }
    }
}

/// The status of a failure no candidate fixed (`tried`: some candidate was run, or skipped as
/// already rejected).
fn unfixed(reason: Option<&str>, flaky: bool, category: Category, tried: bool) -> FailureStatus {
    match reason {
        _ if flaky => FailureStatus::Flaky,
        _ if category == Category::Timeout => FailureStatus::TimedOut,
        Some(r) if r.contains("--safe-only") => FailureStatus::SkippedUnsafe,
        Some(_) if !tried => FailureStatus::NoCandidate,
        _ => FailureStatus::NotFixed,
    }
}

/// The reason of a failure whose candidates were all rejected before, for another failure.
fn repeated((n, test): &(usize, Option<String>)) -> String {
    format!(
        "no candidate passed; {n} candidate{} {} {} with the same failure {} \
         not tried again",
        if *n == 1 { "" } else { "s" },
        super::shared::ALREADY_REJECTED,
        test.as_deref().unwrap_or("another failure"),
        if *n == 1 { "was" } else { "were" }
    )
}

/// The patch of one kept candidate.
fn patch_of(c: &Candidate, rules: &RuleSet) -> Patch {
    let review: Vec<String> = match c.source {
        Source::Llm => vec![llm::REVIEW.to_string()],
        _ => review_notes(rules, std::slice::from_ref(&c.fix.rule))
            .into_iter()
            .chain(search::review(c))
            .collect(),
    };
    Patch {
        file: c.file.clone(),
        rules: vec![c.fix.rule.clone()],
        titles: vec![c.fix.title.clone()],
        safe: c.safe,
        applicability: Applicability::of(c.safe),
        source: c.source,
        steps: vec![PatchStep {
            rule: c.fix.rule.clone(),
            title: c.fix.title.clone(),
            safe: c.safe,
            review: review.clone(),
            diff: c.diff.clone(),
        }],
        review,
        validated: true,
        diff: c.diff.clone(),
        diff_encoding: c.diff_encoding,
        alternatives: Vec::new(),
        proven_by: Vec::new(),
        kept_for: Vec::new(),
        bytes: Some((c.original.clone(), c.patched.clone())),
    }
}

/// Where a hard hang was stuck: the file relative to `root` (when under it), line, function.
pub(super) fn hang_place(
    h: &crate::plugin::Hang,
    root: &Path,
) -> (Option<String>, Option<u32>, Option<String>) {
    let Some(frame) = h.frame() else {
        return (None, None, None);
    };
    let (place, func) = match frame.split_once(" in ") {
        Some((p, f)) => (p.to_string(), Some(f.to_string())),
        None => (frame.clone(), None),
    };
    let Some((file, line)) = place.rsplit_once(':') else {
        return (None, None, func);
    };
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let file = Path::new(file)
        .strip_prefix(&real)
        .or_else(|_| Path::new(file).strip_prefix(root))
        .map_or_else(|_| file.to_string(), |p| p.to_string_lossy().into_owned());
    (Some(file), line.parse().ok(), func)
}

/// `pytest` or `command`: which judge proved the run (the JSON's `judge`).
pub(super) fn judge_name(opts: &Options) -> Judge {
    if opts.judge.is_some() {
        Judge::Command
    } else {
        Judge::Pytest
    }
}

pub(super) fn ctx_tried(attempts: &[Attempt], failure: &Failure) -> usize {
    attempts.iter().filter(|a| a.test == failure.test).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_a_hung_test_waited_is_read_from_the_plugins_message() {
        let first =
            "the test did not finish within 60 s (selfdebug's per-test limit, --test-timeout)";
        let later = "the test did not finish within 1.5 s: it was still in f(), where t hung (...)";
        assert_eq!(limit_waited(first), Some(Duration::from_secs(60)));
        assert_eq!(limit_waited(later), Some(Duration::from_millis(1500)));
        assert_eq!(limit_waited("KeyError: 'id'"), None);
        assert_eq!(limit_waited("the test did not finish within -1 s"), None);
    }
}
