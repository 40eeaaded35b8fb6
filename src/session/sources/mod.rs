//! Where candidates come from. Each kind is one [`CandidateSource`]; [`ordered`] declares the
//! order they are asked in for a failure: the rules (with the expected-raise guards), the
//! search over small edits, the model (`--llm`). Each proposes candidates for the failure and
//! proves each with the one [`Work::prove`] (its [`Stages`] say which targeted runs come before
//! the whole suite: the failing test and its group, or the search's `-x` runs).
//!
//! Adding a source: one file here implementing the trait, one line in [`ordered`].

use crate::plan;
use crate::rules::Category;
use crate::session::error::SessionError;
use crate::session::runs::probe_facts;
use crate::session::shared::{excluded, failure_key};
use crate::session::work::{Fixed, Proven, Work};
use crate::traceback::Failure;
use crate::transform::ProbeFacts;

pub(super) mod cause;
pub(super) mod limits;
pub(super) mod llm;
pub(super) mod precheck;
mod rules;
pub(super) mod search;
mod searched;
mod targeted;

/// One kind of candidate source.
pub(super) trait CandidateSource {
    /// A failure that needs no facts first (a failed output check of command mode): the
    /// source's verdict on it before any probe, or `None` to go on.
    fn before_facts(
        &mut self,
        _w: &mut Work,
        _failure: &Failure,
        _round: &Round,
    ) -> Result<Option<Flow>, SessionError> {
        Ok(None)
    }

    /// Works on the failure where the sources before it left it: proposes candidates and
    /// proves them. [`Flow::Next`] hands the failure to the next source.
    fn work(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
    ) -> Result<Flow, SessionError>;
}

/// The sources, in the order they are asked.
pub(super) fn ordered() -> Vec<Box<dyn CandidateSource>> {
    vec![
        Box::new(rules::Rules::default()),
        Box::new(search::Search),
        Box::new(llm::Model),
    ]
}

/// What a source did with a failure.
pub(super) enum Flow {
    /// A candidate was proven: the failure's fix.
    Fixed(Fixed),
    /// Nothing (more) from this source: the next one's turn.
    Next,
    /// The work on the failure ends here, unfixed (the step says why, or that the pending
    /// batch must be confirmed first).
    Stop,
}

impl Flow {
    pub(super) fn fixed(self) -> Option<Fixed> {
        match self {
            Flow::Fixed(f) => Some(f),
            Flow::Next | Flow::Stop => None,
        }
    }
}

impl From<Proven> for Option<Flow> {
    /// A proven candidate ends the source's work; a rejected one lets it go on.
    fn from(p: Proven) -> Option<Flow> {
        match p {
            Proven::Fixed(f) => Some(Flow::Fixed(f)),
            Proven::Stop => Some(Flow::Stop),
            Proven::Rejected => None,
        }
    }
}

/// What the sources of one failure share.
pub(super) struct Round {
    /// The step (0: the failure itself; more: what a kept candidate turned it into).
    pub(super) depth: usize,
    /// Whether the model may be asked for this failure (`--llm`, not `--safe-only`).
    pub(super) model_follows: bool,
    /// The model's turn, once the failure's facts are known.
    pub(super) model: Option<llm::Turn>,
    /// The values at the failing statement (the baseline's crash-frame facts or a probe run),
    /// once the facts are known: what the rules plan with.
    pub(super) values: Option<ProbeFacts>,
    /// Why planning gave up, when the rules handed that on (the search and the model read it).
    pub(super) plan_error: Option<plan::PlanError>,
    /// The rules' candidates that were proven (and rejected).
    pub(super) rule_candidates: usize,
    /// The budget and the time budget were checked and nothing was tried since: the next
    /// candidate may go without checking again.
    pub(super) checked: bool,
}

impl Round {
    pub(super) fn new(depth: usize, model_follows: bool) -> Round {
        Round {
            depth,
            model_follows,
            model: None,
            values: None,
            plan_error: None,
            rule_candidates: 0,
            checked: false,
        }
    }
}

/// Works on `failure`: its facts, then each candidate source in order (see
/// [`ordered`]) until one proves a fix or stops the work. A candidate after which
/// the targeted test fails differently (a new location or exception) is kept tentatively
/// and the new failure is worked on as the next step (`depth` + 1), within the same budget;
/// if that leads nowhere it is undone. Returns the accepted candidates and the full
/// suite's failures with them.
pub(in crate::session) fn work_on(
    w: &mut Work,
    failure: &Failure,
    depth: usize,
) -> Result<Option<Fixed>, SessionError> {
    let mut sources = ordered();
    let mut round = Round::new(
        depth,
        llm::Turn::new(w.s, w.held.llm.as_ref(), failure, None).is_some(),
    );
    for source in sources.iter_mut() {
        if let Some(flow) = source.before_facts(w, failure, &round)? {
            return Ok(flow.fixed());
        }
    }
    if !facts(w, failure, &mut round)? {
        return Ok(None);
    }
    for source in sources.iter_mut() {
        match source.work(w, failure, &mut round)? {
            Flow::Next => {}
            flow => return Ok(flow.fixed()),
        }
    }
    Ok(None)
}

/// What the sources need to know of the failure: its place (checked: not excluded), the
/// values there (the baseline's crash-frame facts, else a probe run), which the rules plan
/// with. `false` when the work ends here (no place, excluded, flaky, or the
/// pending batch must be confirmed first; the step says why).
fn facts(w: &mut Work, failure: &Failure, round: &mut Round) -> Result<bool, SessionError> {
    let depth = round.depth;
    // No place in the project's code: only the model (when asked for) can work on it, with
    // what the failure shows (a failed output check of command mode: the command's script).
    let loc = failure.location.as_ref();
    if loc.is_none() && (depth > 0 || !round.model_follows) {
        w.ctx
            .reason
            .get_or_insert_with(|| plan::PlanError::no_location(failure).to_string());
        return Ok(false);
    }
    if let Some(loc) = loc {
        if let Some(why) = excluded(w.s.opts, &loc.file) {
            w.ctx.reason.get_or_insert(why);
            return Ok(false);
        }
        if let Ok(path) = plan::confined_path(w.ws.root(), &loc.file) {
            w.ws.record(&path)?;
        }
    }
    // The baseline's crash-frame facts stand in for the probe run while the code is still
    // the baseline's (nothing accepted, no tentative step) and they cover the statement.
    let baseline_code = depth == 0 && w.ctx.accepted.is_empty();
    // The plugin's in-session rerun passed: like a probe run that passed, one more run decides.
    if baseline_code
        && w.ctx.current.contains(&failure_key(failure))
        && w.s.facts.passed_on_rerun(failure)
        && w.flaky(failure)?
    {
        return Ok(false);
    }
    let recorded = baseline_code
        .then(|| w.s.facts.report(w.ws.root(), failure, &w.s.prover.python))
        .flatten();
    // A hang goes to the search without a probe run (it would hang again for the whole limit);
    // the model, when asked for, keeps its probe.
    let hang_search = w.ctx.category == Category::Timeout && w.held.llm.is_none();
    if recorded.is_none() && !hang_search {
        crate::progress::step(|| "probing the failing line".into());
    }
    let report = recorded.or_else(|| {
        loc.filter(|_| !hang_search)
            .and_then(|_| w.s.prover.probe(w.ws, failure))
    });
    let facts = report.as_ref().map(probe_facts);
    // The model, when asked for, takes over where the rules end (see `llm::Turn`).
    round.model = llm::Turn::new(w.s, w.held.llm.as_ref(), failure, report.as_ref());
    // The probe run is the failure's second run on unchanged code: a failure of the baseline
    // that does not come back is flaky, and no patch can be proven against it. The probe
    // cannot change behaviour, but a run without it makes sure before the verdict.
    let passed_again = depth == 0
        && report.as_ref().is_some_and(|r| r.test_outcome.passed)
        && w.ctx.current.contains(&failure_key(failure));
    // With fixes pending in a batch, a test that passes (or could not be probed) may pass
    // thanks to them: the batch is confirmed first, and the failure read again.
    if depth == 0 && !w.ctx.batch_files.is_empty() && (passed_again || report.is_none()) {
        w.ctx.needs_flush = true;
        return Ok(false);
    }
    if depth == 0 {
        w.ctx.first_probe = report;
    }
    if passed_again && w.flaky(failure)? {
        return Ok(false);
    }
    round.values = facts;
    Ok(true)
}
