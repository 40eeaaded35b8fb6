//! A search candidate at the ranked lines, and its proof: the candidates the search proposes
//! there ([`ranked_candidates`]), and the three proofs of one of them ([`prove_searched`]: the
//! targeted run, the passing neighbours, the whole suite through [`Work::prove`]). Below both the
//! search ([`super::search`]) and the second edit on top of a lead ([`super::cause`]), which
//! each propose and prove candidates this way.

use std::time::Instant;

use super::targeted::{cause_still_failing, keep_lead, lead_of, run_targeted};
use crate::localize::{self, Spectrum};
use crate::plan::{Candidate, Coverage};
use crate::search::{self as engine, Ranked, SearchInput};
use crate::session::error::SessionError;
use crate::session::shared::excluded;
use crate::session::work::{Proven, Stages, Step, Targeted, Trial, Work};
use crate::traceback::Failure;
use crate::verdict::{self, Verdict};

/// The search's candidates at the suspicious lines, best first, without those of excluded
/// files or left-out edit families; none (the step says why) when nothing is left.
pub(in crate::session) fn ranked_candidates(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    suspects: &Suspects,
) -> Option<Vec<Ranked>> {
    let (ranked, expectation) = (suspects.ranked, &suspects.expectation);
    // A command's expected output has no test line: its expected number stands in.
    let expected = failure
        .frames
        .iter()
        .filter_map(|f| f.code.as_deref())
        .find_map(crate::transform::expected_literal)
        .or_else(|| {
            (w.s.opts.judge.is_some())
                .then(|| expectation.as_ref().map(|e| e.expected.clone()))
                .flatten()
        });
    // The failing frame's runtime types (probe or baseline facts) type the parameters there,
    // unless the failure is about a type (`join() argument must be str ..., not 'int'`): then
    // the wrong variable's type is the bug, and the right one is of another type.
    // A coroutine operated on is the exception: its local's type is what `missing-await` reads.
    let type_error = matches!(failure.exc_type.as_str(), "TypeError" | "AttributeError")
        && !failure.msg.contains("'coroutine'");
    let frame = w
        .ctx
        .first_probe
        .as_ref()
        .filter(|_| !type_error)
        .map(engine::FrameTypes::of);
    let words = engine::data::failure_words(failure);
    let test_literals = crate::plan::literals::test_literals(failure);
    let t = crate::trace_times::span("search: candidates made");
    let wanted_type = engine::templates::conversions::wanted_type(failure);
    let candidates = engine::candidates(&SearchInput {
        root: w.ws.root(),
        suspicious: ranked,
        expected: expected.as_deref(),
        expectation: expectation.as_ref(),
        allow_tests: w.s.opts.allow_tests,
        frame: frame.as_ref(),
        words: &words,
        test_literals: &test_literals,
        failure: Some(failure),
        wanted_type: wanted_type.as_deref(),
    });
    drop(t);
    // Files the configuration excludes are never patched, by the search either; families of
    // edits the rule selection leaves out (`ignore = ["search-delete-stmt"]`) are not tried.
    let mut candidates = candidates;
    candidates.retain(|r| {
        excluded(w.s.opts, &r.candidate.file).is_none()
            && w.s.opts.selection.enabled(&r.candidate.fix.rule)
    });
    // A joint candidate goes with its single edit (left out with its family above), and with
    // its own rule.
    for r in &mut candidates {
        r.joint = r
            .joint
            .take()
            .filter(|j| w.s.opts.selection.enabled(&j.candidate.fix.rule));
    }
    // An edit that copies the failing test's expected literal into the code (`if not h:
    // return 3600`) passes that test by construction: left out before any run.
    let ranked = candidates.len();
    candidates.retain(|r| r.copied.is_none());
    let copied = ranked - candidates.len();
    w.ctx.prechecked.test_literals += copied;
    if candidates.is_empty() {
        let copying = if copied > 0 {
            format!(
                " ({copied} left out: they copy the failing test's expected value into the \
                 code)"
            )
        } else {
            String::new()
        };
        w.ctx.reason = Some(format!(
            "{why}; the search found no small edit to try at the suspicious statements{copying}"
        ));
        return None;
    }
    Some(candidates)
}

/// Runs the three proofs of one candidate (see the module docs); the full suite's failures
/// when it is accepted. The file is put back otherwise.
pub(in crate::session) fn prove_searched(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    cand: &Candidate,
    hint: engine::hint::Tier,
    covering: &[String],
    spectrum: &Spectrum,
) -> Result<Option<Vec<Failure>>, SessionError> {
    w.ws.write(&cand.path, &cand.patched)?;
    let started = Instant::now();
    let (targeted, passing) = targets(&w.ctx, failure, covering, spectrum);
    let first = run_targeted(w, &targeted)?;
    let first_verdict = verdict::read(&first, w.ws.root());
    let lead = lead_of(w, &first, &first_verdict, &targeted, &passing)?;
    let mut covering_run = None;
    let neighbours = if !first.timed_out && matches!(first_verdict, Verdict::Green) {
        Some(if passing.is_empty() {
            Verdict::Green
        } else {
            let run = w.s.prover.run_candidate(w.ws, &passing)?;
            covering_run = w.s.prover.covering_proof(&run);
            verdict::read(&run, w.ws.root())
        })
    } else {
        None
    };
    let t = Targeted {
        tests: targeted,
        first,
        first_verdict,
        neighbours,
        covering_run,
        spent: started.elapsed(),
        started_ms: None,
    };
    let said = w
        .ctx
        .cause
        .partial()
        .then(|| crate::session::cause_state::still_failing_said(&t.first_verdict))
        .flatten();
    let proven = judge(w, failure, cand, hint, t, true)?;
    if proven.is_none() {
        cause_still_failing(w, said);
    }
    if let Some(fixed) = lead {
        keep_lead(w, cand, fixed);
    }
    Ok(proven)
}

/// Proves a search candidate whose targeted runs are made (see [`Work::prove`]): the full
/// suite's failures when it passed everything, the candidate left written for the choice.
pub(in crate::session) fn judge(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    cand: &Candidate,
    hint: engine::hint::Tier,
    runs: Targeted,
    written: bool,
) -> Result<Option<Vec<Failure>>, SessionError> {
    let trial = Trial {
        depth: 0,
        label: String::new(),
        stages: Stages::Searched {
            hint,
            runs,
            written,
        },
    };
    Ok(match w.prove(failure, cand, trial)? {
        Proven::Fixed((_, after)) => Some(after),
        Proven::Rejected | Proven::Stop => None,
    })
}

/// Where the search looks: the suspicious lines, best first, the spectrum that ranked them
/// (empty for a hang), and what the failure says the right value is.
pub(in crate::session) struct Suspects<'a> {
    pub(in crate::session) ranked: &'a [localize::Suspicious],
    pub(in crate::session) spectrum: &'a Spectrum,
    pub(in crate::session) expectation: Option<engine::hint::Expectation>,
}

impl<'a> Suspects<'a> {
    pub(in crate::session) fn new(
        ranked: &'a [localize::Suspicious],
        spectrum: &'a Spectrum,
        expectation: Option<engine::hint::Expectation>,
    ) -> Self {
        Suspects {
            ranked,
            spectrum,
            expectation,
        }
    }
}

/// The tests that ran the candidate's line.
pub(in crate::session) fn covering(spectrum: &Spectrum, r: &Ranked) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A joint candidate ([`engine::sites`]): the tests of every line it edits.
    for line in std::iter::once(r.line).chain(r.sites.iter().copied()) {
        for t in spectrum.covering(&r.candidate.file, line) {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// The candidate, its title and [`Candidate::coverage`] saying how many tests cover the
/// edited line.
pub(in crate::session) fn titled(r: Ranked, covering: usize) -> Candidate {
    let mut c = r.candidate;
    if covering == 0 {
        // Only a hang is searched without a coverage run.
        c.fix.title = format!("{} (a hang: no coverage run)", c.fix.title);
        c.coverage = Some(Coverage::NotMeasured);
        return c;
    }
    c.coverage = Some(Coverage::Tests(covering));
    c.fix.title = format!(
        "{} ({covering} test{} cover{} the line)",
        c.fix.title,
        if covering == 1 { "" } else { "s" },
        if covering == 1 { "s" } else { "" }
    );
    c
}

/// The tests of a candidate's two targeted runs (see the module docs): every failing test that
/// runs the edited line, then the passing ones.
pub(in crate::session) fn targets(
    ctx: &Step,
    failure: &Failure,
    covering: &[String],
    spectrum: &Spectrum,
) -> (Vec<String>, Vec<String>) {
    // Every failing test that runs the edited line must pass: an edit that fixes one of them
    // and leaves the others failing there is a guess that fits one test (it would be kept,
    // since the others failed before too, and then block the right fix).
    let mut targeted: Vec<String> = failure.test.iter().cloned().collect();
    // The other failing tests of the failure's cause (see `cause`): one search for all.
    targeted.extend(ctx.cause.others.iter().cloned());
    targeted.extend(
        covering
            .iter()
            .filter(|t| spectrum.tests.get(*t).is_some_and(|c| c.failed))
            .filter(|t| ctx.current.iter().any(|(c, _)| c == *t))
            .filter(|t| !targeted.contains(t))
            .cloned()
            .collect::<Vec<_>>(),
    );
    // The passing tests that ran the line: where a wrong edit breaks something first.
    let passing: Vec<String> = covering
        .iter()
        .filter(|t| spectrum.tests.get(*t).is_some_and(|c| !c.failed))
        .cloned()
        .collect();
    (targeted, passing)
}
