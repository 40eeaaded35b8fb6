//! Where candidates come from. Each kind is one [`CandidateSource`]; [`ordered`] declares the
//! order they are asked in for a failure: the rules (with the expected-raise guards), the
//! search over small edits, the model (`--llm`). Each proposes candidates for the failure and
//! proves each with the one [`Work::prove`] (its [`Stages`] say which targeted runs come before
//! the whole suite: the failing test and its group, or the search's `-x` runs).
//!
//! Adding a source: one file here implementing the trait, one line in [`ordered`].

use crate::plan::{self, Candidate};
use crate::session::work::{Fixed, Proven, Work};
use crate::session::SessionError;
use crate::traceback::Failure;

pub(super) mod cause;
pub(super) mod limits;
pub(super) mod llm;
pub(super) mod precheck;
mod rules;
pub(super) mod search;

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
    /// What planning the rules said (none before the facts).
    pub(super) planned: Option<Result<Vec<Candidate>, plan::PlanError>>,
    /// Why planning gave up, when the rules handed that on (the search and the model read it).
    pub(super) plan_error: Option<plan::PlanError>,
    /// The rules' candidates that were proven (and rejected).
    pub(super) rule_candidates: usize,
    /// Each matching rule that proposed nothing: which transform declined and why.
    pub(super) declined: Vec<String>,
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
            planned: None,
            plan_error: None,
            rule_candidates: 0,
            declined: Vec::new(),
            checked: false,
        }
    }
}
