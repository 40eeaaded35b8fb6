//! The session's side of the search over small edits ([`crate::search`]): when a wrong-output
//! failure has no rule (the location is the test's own `assert`, or project code raised an
//! error no rule knows, or a `RecursionError`), one coverage run ranks the statements
//! ([`crate::localize`]) and the ranked candidates are proven like any other:
//!
//! 1. the failing test, with every other failing test that ran the edited line and every other
//!    test of its cause ([`super::cause`]), with `-x` (a wrong guess fails fast; one edit must
//!    account for all of them) unless the cause has several tests (then to the end: a candidate
//!    that fixes some of them is a lead, which a second edit may complete);
//! 2. the passing tests that ran the edited line, with `-x` (cheap, and where a wrong edit
//!    shows first);
//! 3. the whole suite, baseline-aware: no test that passed before may fail.
//!
//! Candidates come best first (hint tier, rank, then the smallest edit). The search goes on a
//! few candidates past the first one through all three and keeps, among those, the one that
//! changes the fewest behaviours of the passing tests, then the earliest in that order
//! ([`crate::search::choose`]). The search has its own wall time, `--search-time`, inside the run's
//! `--time-budget`; one scratch copy (or the journaled project) is reused, each candidate
//! written over the previous one and the original put back when it fails.
//!
//! Command mode (`--cmd`) with a failed output check is searched the same way
//! ([`search_output`]): one run of the command under the line tracer localizes (it is the only
//! "test", failing, so the kind of statement ranks the lines: [`localize::rank_command`]), the
//! expected value comes from the expected output against the printed one
//! ([`engine::hint::Expectation::from_output`]), and the proof of a candidate is one run of the
//! command with every output check, judged like the loop's own runs (there is no other test to
//! run: command mode runs no pytest).

use std::collections::VecDeque;
use std::time::Instant;

use super::cause::combine_lead;
use super::searched::{
    covering, judge, prove_searched, ranked_candidates, targets, titled, Suspects,
};
use super::targeted::{
    cause_coverage, cause_spectrum, cause_still_failing, fixed_by, keep_lead, targeted_spec,
    time_to_combine,
};
use super::{llm, CandidateSource, Flow, Round};
use crate::command::OUTPUT_CHECK_EXC;
use crate::localize::{self, Spectrum};
use crate::plan::{Candidate, Coverage, PlanError};
use crate::rules::Category;
use crate::search::hint::Tier;
use crate::search::{self as engine, choose, Ranked};
use crate::session::coverage::COMMAND_RUN;
use crate::session::error::SessionError;
use crate::session::model::Attempt;
use crate::session::parallel::{self, Done, Job, Pool};
use crate::session::prover::Phase;
use crate::session::runs::Runs;
use crate::session::shared::Options;
use crate::session::shared::{failure_key, TIME_BUDGET_USED_UP};
use crate::session::work::{Fixed, Targeted, Work};
use crate::status::{AttemptOutcome, Source};
use crate::traceback::Failure;
use crate::verdict::Verdict;

/// Top statements reported in `suspicious`.
const REPORTED: usize = 10;

/// Whether the search may run at all: it guesses intent (unsafe), it proves by running, and
/// at least one of its edit families is selected.
fn search_enabled(s: &Runs) -> bool {
    !s.opts.safe_only
        && s.opts.validate
        && crate::search::rule_ids()
            .iter()
            .any(|id| s.opts.selection.enabled(id))
}

/// Whether the search takes over a failure that planning gave up on.
pub(in crate::session) fn applies(w: &Work<'_, '_>, failure: &Failure, e: &PlanError) -> bool {
    // A command's failure names no test; its hang goes to the search as a test's does.
    (failure.test.is_some()
        || (w.s.opts.judge.is_some() && w.ctx.category == Category::Timeout))
    // A project's own exception type (`bank.InsufficientFunds`) is `unknown`: raised on a
    // wrong branch, it is wrong output too.
    && (matches!(w.ctx.category, Category::Logic | Category::Unknown)
        // A hang: the stuck frame names the loop (see `localize::hang`).
        || (w.ctx.category == Category::Timeout && failure.location.is_some())
        // A data error raised in a test helper or fixture (`json.loads` of what a project
        // serializer wrote): the bad value came from the project code the test ran.
        || (w.ctx.category == Category::Data && matches!(e, PlanError::TestFile(_))))
    && search_enabled(w.s)
    && matches!(
        e,
        PlanError::TestFile(_) | PlanError::NoRule(_) | PlanError::NoLocation
    )
}

/// Whether the search takes over a failure whose rule candidates were all proven wrong (an
/// `IndexError` the index rule guessed wrong about, a library's `ValueError` fed a wrong
/// argument): the cause may be a line the rules do not look at.
pub(in crate::session) fn applies_after_rules(w: &Work<'_, '_>, failure: &Failure) -> bool {
    failure.test.is_some()
        && matches!(
            w.ctx.category,
            Category::Data | Category::Logic | Category::Unknown
        )
        && search_enabled(w.s)
}

/// A failed output check of command mode: one traced run of the command localizes, the
/// expected output gives the hint, each candidate is proven by a run of the command.
pub(in crate::session) fn search_output(
    w: &mut Work<'_, '_>,
    failure: &Failure,
) -> Result<Option<Fixed>, SessionError> {
    let deadline = Instant::now() + w.s.opts.search_time;
    let why = failure.msg.clone();
    // The candidates' runs overwrite it; the model (after the search) needs the baseline's.
    let mismatch = w.s.prover.last_mismatch.clone();
    let found = search_output_with(w, failure, &why, mismatch.as_ref(), deadline);
    w.s.prover.last_mismatch = mismatch;
    found
}

fn search_output_with(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    mismatch: Option<&crate::command::OutputMismatch>,
    deadline: Instant,
) -> Result<Option<Fixed>, SessionError> {
    let spectrum = match w.s.command_coverage(w.ws)? {
        Ok(sp) => sp,
        Err(reason) => {
            w.ctx.reason = Some(format!("{why}; {reason}"));
            return Ok(None);
        }
    };
    let ranked = localize::rank_command(&spectrum, w.ws.root());
    w.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        w.ctx.reason = Some(format!(
            "{why}; the command ran no line of the project's own code"
        ));
        return Ok(None);
    }
    let expectation = mismatch.and_then(|m| match m.check {
        "expect_stdout" => engine::hint::Expectation::from_output(&m.expected, &m.actual, false),
        "expect_stdout_regex" => {
            engine::hint::Expectation::from_output(&m.expected, &m.actual, true)
        }
        _ => None,
    });
    let test = failure
        .headline
        .clone()
        .unwrap_or_else(|| COMMAND_RUN.into());
    try_ranked(
        w,
        failure,
        why,
        &test,
        deadline,
        Suspects {
            ranked: &ranked,
            spectrum: &spectrum,
            expectation,
        },
    )
}

/// Localizes, then tries the ranked candidates until one is proven or the search time is up.
pub(in crate::session) fn search(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
) -> Result<Option<Fixed>, SessionError> {
    let deadline = Instant::now() + w.s.opts.search_time;
    let why = why.to_string();
    // A command's hang: the command is the one "test" (its headline, as for wrong output).
    let test = failure.test.clone().or_else(|| {
        (w.s.opts.judge.is_some() && w.ctx.category == Category::Timeout)
            .then(|| failure.headline.clone())
            .flatten()
    });
    let Some(test) = test else {
        return Ok(None);
    };
    let limit = super::limits::for_failure(w.s, failure, w.ctx.category, &test);
    w.s.prover.search_test_limit = limit;
    let found = search_test(w, failure, why, test, deadline);
    w.s.prover.search_test_limit = None;
    found
}

/// [`search`] once the test is known.
fn search_test(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: String,
    test: String,
    deadline: Instant,
) -> Result<Option<Fixed>, SessionError> {
    if w.ctx.category == Category::Timeout {
        // The hung test was left out of later runs; its candidates must run it.
        let was = w.s.prover.deselect.iter().position(|t| *t == test);
        if let Some(i) = was {
            w.s.prover.deselect.remove(i);
        }
        let found = search_hang(w, failure, &why, &test, deadline);
        if was.is_some() && !matches!(found, Ok(Some(_))) {
            w.s.prover.deselect.push(test);
        }
        return found;
    }
    let spectrum = match cause_coverage(w, &test)? {
        Some(sp) if sp.tests.get(&test).is_some_and(|t| t.failed) => sp,
        // It passed on the code the reference run saw it fail on: like a probe run that
        // passed, one plain run decides whether it is flaky (see `Work::flaky`).
        Some(sp)
            if sp.tests.contains_key(&test)
                && w.ctx.current.contains(&failure_key(failure))
                && w.flaky(failure)? =>
        {
            return Ok(None);
        }
        _ => {
            w.ctx.reason = Some(format!(
                "{why}; the coverage run to localize it gave nothing usable"
            ));
            return Ok(None);
        }
    };
    // The failing tests of one cause are searched together, ranked over them only.
    let spectrum = cause_spectrum(w, &spectrum, &test);
    let ranked = localize::rank(&spectrum, localize::focus(w.ws.root(), failure));
    w.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        w.ctx.reason = Some(format!(
            "{why}; the failing test ran no line of the project's own code"
        ));
        return Ok(None);
    }
    let expectation = engine::hint::Expectation::of(failure);
    try_ranked(
        w,
        failure,
        &why,
        &test,
        deadline,
        Suspects {
            ranked: &ranked,
            spectrum: &spectrum,
            expectation,
        },
    )
}

/// A hang: the loop around the stuck line is the suspect (no coverage run: the hung test would
/// cost the per-test limit again), and the candidates are proven like the others; with no
/// spectrum, the whole suite is the judge of the passing tests.
fn search_hang(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
) -> Result<Option<Fixed>, SessionError> {
    let ranked = match failure.location.as_ref() {
        Some(loc) => localize::hang::loop_lines(w.ws.root(), &loc.file, loc.line),
        None => Vec::new(),
    };
    w.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        // What the hang says (where it was stuck), then why the search had nothing to try.
        let (_, said) = crate::category::categorize(failure, w.ws.root());
        w.ctx.reason = Some(format!(
            "{}; no loop of the project's own code that a small edit could end holds the line \
         it was stuck at",
            said.unwrap_or_else(|| why.to_string())
        ));
        return Ok(None);
    }
    try_ranked(
        w,
        failure,
        why,
        test,
        deadline,
        Suspects {
            ranked: &ranked,
            spectrum: &Spectrum::default(),
            expectation: engine::hint::Expectation::of(failure),
        },
    )
}

/// The candidates left after [`super::precheck`] (none: the step says why).
fn prechecked(
    w: &mut Work<'_, '_>,
    candidates: Vec<Ranked>,
    why: &str,
    test: &str,
    spectrum: &Spectrum,
) -> Option<Vec<Ranked>> {
    let (kept, dropped) = {
        let _t = crate::trace_times::span("search: candidates pre-checked");
        super::precheck::screen(&w.s.prover.python, candidates, test, spectrum)
    };
    w.ctx.prechecked.search += dropped.total();
    if kept.is_empty() {
        w.ctx.reason = Some(format!(
            "{why}; the search's {} small edits at the suspicious statements were all left \
             out before a run ({} not run by the failing test, {} not compiling, {} \
             duplicates)",
            dropped.total(),
            dropped.not_run,
            dropped.not_compiling,
            dropped.duplicates
        ));
        return None;
    }
    Some(kept)
}

/// Proposes and proves the candidates at the ranked lines (see the module docs).
fn try_ranked(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
    suspects: Suspects,
) -> Result<Option<Fixed>, SessionError> {
    let Some(candidates) = ranked_candidates(w, failure, why, &suspects) else {
        return Ok(None);
    };
    let spectrum = suspects.spectrum;
    let Some(candidates) = prechecked(w, candidates, why, test, spectrum) else {
        return Ok(None);
    };
    let first_attempt = w.ctx.attempts.len();
    // With --jobs N the targeted runs go to scratch copies, N at a time (see `parallel`); the
    // judging, and the choice among plausible candidates, are the same as one at a time. A
    // command has no targeted run: each candidate's one run is its proof, in the workspace.
    // A cause of several tests runs its targeted runs to the end there too (its leads'
    // partial fitness, see `cause`); a lead's second edit is searched one at a time.
    if w.s.opts.jobs > 1 && candidates.len() > 1 && w.s.opts.judge.is_none() {
        let n = w.s.opts.jobs.min(candidates.len());
        if let Some(pool) = parallel::Pool::new(w.ws.root(), &w.s.prover.python, n) {
            let state = SearchState {
                spectrum,
                why,
                deadline,
                test,
                first_attempt,
            };
            return search_parallel(w, failure, candidates, &state, pool);
        }
    }
    let mut tried = 0usize;
    // Candidates that passed every proof; the search goes on a little past the first (see
    // `search::choose`) and keeps the one that changes the fewest behaviours.
    let mut plausible: Vec<Found> = Vec::new();
    let mut extra = 0usize;
    let mut queue: VecDeque<Ranked> = candidates.into();
    // Joint candidates (one edit at several sites, see `search::sites`) tried so far.
    let mut joints = 0usize;
    while let Some(mut r) = queue.pop_front() {
        let left = queue.len() + 1;
        if crate::process::interrupted() || enough(&plausible, extra, spectrum) {
            break;
        }
        if Instant::now() >= deadline {
            if !plausible.is_empty() {
                break;
            }
            w.ctx.untried += left;
            w.ctx.reason = Some(out_of_search_time(why, tried, w.s.opts));
            return Ok(None);
        }
        // Half the search time is kept for a second edit on top of a lead.
        if plausible.is_empty() && time_to_combine(w, deadline) {
            w.ctx.untried += left;
            break;
        }
        if !w.s.prover.time_for_a_candidate() {
            if !plausible.is_empty() {
                break;
            }
            w.ctx.untried += left;
            w.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            return Ok(None);
        }
        let joint = r.joint.take();
        // The same bytes already rejected for this failure (by a rule, or for another test
        // failing the same way) cost no run.
        if w.ctx.already_rejected(failure, &r.candidate) {
            continue;
        }
        tried += 1;
        if !plausible.is_empty() {
            extra += 1;
        }
        let leads = w.ctx.cause.leads.len();
        let covering = covering(spectrum, &r);
        let (hint, size) = (r.hint, r.size);
        let command = w.s.opts.judge.is_some();
        let cand = if command {
            titled_command(r)
        } else {
            titled(r, covering.len())
        };
        let after = if command {
            prove_command(w, failure, &cand, hint)?
        } else {
            prove_searched(w, failure, &cand, hint, &covering, spectrum)?
        };
        if let Some(after) = after {
            if plausible.is_empty() {
                super::limits::tighten_for_runners_up(w.s, test);
            }
            plausible.push(Found::new(w, cand, after, covering, size)?);
        } else if let Some(j) = joint.filter(|_| joints < engine::sites::MAX_PER_SEARCH) {
            // One failing test may run every site; several that this edit partly fixed (a
            // lead) may each run another.
            if !w.ctx.cause.partial() || w.ctx.cause.leads.len() > leads {
                joints += 1;
                queue.push_front(*j);
            }
        }
    }
    if plausible.is_empty() {
        let copied = w.ctx.prechecked.test_literals;
        w.ctx.reason = Some(none_passed(why, tried, copied));
        // No single edit fixed the cause: its best lead with a second edit.
        return combine_lead(w, failure, why, test, deadline);
    }
    keep_best(w, test, spectrum, plausible, first_attempt)
}

/// Chooses among the plausible candidates, writes the kept one and records it as accepted.
pub(in crate::session) fn keep_best(
    w: &mut Work<'_, '_>,
    test: &str,
    spectrum: &Spectrum,
    mut plausible: Vec<Found>,
    first_attempt: usize,
) -> Result<Option<Fixed>, SessionError> {
    let kept = choose_among(w, test, spectrum, &plausible, first_attempt)?;
    let found = plausible.swap_remove(kept);
    w.ws.write(&found.cand.path, &found.cand.patched)?;
    w.ctx
        .accepted
        .insert(found.cand.path.clone(), found.cand.patched.clone());
    Ok(Some((vec![found.cand], found.after)))
}

/// Picks among the plausible candidates (see [`choose`]): with two or more, one coverage run
/// each tells which passing tests that ran the edited line now behave differently. Records the
/// choice in the attempts: the others become `plausible`, the kept one says how many were
/// compared and which tests decided.
fn choose_among(
    w: &mut Work<'_, '_>,
    test: &str,
    spectrum: &Spectrum,
    found: &[Found],
    first_attempt: usize,
) -> Result<usize, SessionError> {
    let mut facts: Vec<choose::Plausible> = Vec::new();
    for f in found {
        let changed = if found.len() > 1 {
            let previous = w
                .ctx
                .accepted
                .get(&f.cand.path)
                .cloned()
                .unwrap_or_else(|| f.cand.original.clone());
            w.ws.write(&f.cand.path, &f.cand.patched)?;
            let after = cause_coverage(w, test);
            w.ws.write(&f.cand.path, &previous)?;
            after?.map(|a| choose::changed_tests(spectrum, &a, &f.covering))
        } else {
            None
        };
        facts.push(choose::Plausible {
            size: f.size,
            changed,
        });
    }
    let kept = choose::best(&facts).unwrap_or(0);
    let broke: Vec<String> = w.ctx.attempts[first_attempt..]
        .iter()
        .filter(|a| a.outcome == AttemptOutcome::NewFailures)
        .flat_map(|a| a.broke.iter().cloned())
        .collect();
    let decided = choose::decided_by(&facts, kept, broke);
    let alternatives = alternatives(found, &facts, kept);
    for (i, (f, p)) in found.iter().zip(&facts).enumerate() {
        let Some(a) = w.ctx.attempts.get_mut(f.attempt) else {
            continue;
        };
        let search = a.search.get_or_insert_with(Default::default);
        search.changed = p.changed.as_ref().map(|c| c.iter().cloned().collect());
        if i == kept {
            search.plausible = Some(found.len());
            search.decided_by = decided.clone();
            search.alternatives = alternatives.clone();
        } else {
            a.outcome = AttemptOutcome::Plausible;
        }
    }
    Ok(kept)
}

/// Proves one candidate of command mode: one run of the command, with its output checks and
/// the candidate's shorter limit (see [`CANDIDATE_TEST_LIMIT_FACTOR`]); it is the whole judge.
fn prove_command(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    cand: &Candidate,
    hint: engine::hint::Tier,
) -> Result<Option<Vec<Failure>>, SessionError> {
    w.ws.write(&cand.path, &cand.patched)?;
    let started = Instant::now();
    let mut spec = w.s.prover.spec(w.ws, &[], &[]);
    spec.timeout = spec.timeout.min(w.s.prover.candidate_limit());
    let first = w.s.prover.exec(&spec, Phase::Candidate)?;
    let first_verdict = w.s.prover.read(&first, w.ws.root());
    let neighbours =
        (!first.timed_out && matches!(first_verdict, Verdict::Green)).then_some(Verdict::Green);
    let t = Targeted {
        tests: Vec::new(),
        first,
        first_verdict,
        neighbours,
        covering_run: None,
        spent: started.elapsed(),
        started_ms: None,
    };
    judge(w, failure, cand, hint, t, true)
}

/// Whether a hang (a test stopped by the per-test limit, stuck in project code) goes to the
/// search rather than being reported as timed out.
pub(in crate::session) fn takes_hangs(s: &Runs) -> bool {
    search_enabled(s)
}

/// Whether the search takes over a failed output check of command mode (see
/// [`search_output`]).
pub(in crate::session) fn takes_output(s: &Runs) -> bool {
    s.opts.judge.is_some() && takes_hangs(s)
}

/// Enough plausible candidates gathered (see [`choose`]); without a spectrum (a hang) there is
/// no behaviour to compare, and the first one is kept.
///
/// Nor is there when no passing test runs the first plausible candidate's line: it changes no
/// behaviour, so no later one can beat it (a tie goes to the search's order), and the extra
/// tries would only cost runs.
pub(in crate::session) fn enough(plausible: &[Found], extra: usize, spectrum: &Spectrum) -> bool {
    let Some(first) = plausible.first() else {
        return false;
    };
    let unopposed = !first
        .covering
        .iter()
        .any(|t| spectrum.tests.get(t).is_some_and(|c| !c.failed));
    let more = if spectrum.tests.is_empty() || unopposed {
        0
    } else {
        choose::EXTRA_TRIES
    };
    extra >= more || plausible.len() >= choose::MAX_PLAUSIBLE
}

/// What a parallel search needs of the search's own state.
pub(in crate::session) struct SearchState<'a> {
    pub spectrum: &'a Spectrum,
    pub why: &'a str,
    /// The end of `--search-time`.
    pub deadline: Instant,
    pub test: &'a str,
    /// The first of this search's attempt records.
    pub first_attempt: usize,
}

/// A candidate that passed every proof.
pub(in crate::session) struct Found {
    pub(in crate::session) cand: Candidate,
    /// The full suite's failures with it.
    after: Vec<Failure>,
    covering: Vec<String>,
    size: usize,
    /// Its record in `ctx.attempts`.
    attempt: usize,
}

impl Found {
    /// Records a candidate that passed (its attempt is the last one) and puts the file back:
    /// the choice writes the kept one.
    pub(in crate::session) fn new(
        w: &mut Work,
        cand: Candidate,
        after: Vec<Failure>,
        covering: Vec<String>,
        size: usize,
    ) -> Result<Found, SessionError> {
        let previous = w.previous(&cand);
        w.ws.write(&cand.path, &previous)?;
        Ok(Found {
            cand,
            after,
            covering,
            size,
            attempt: w.ctx.attempts.len() - 1,
        })
    }
}

/// The reason when the search time ran out.
pub(in crate::session) fn out_of_search_time(why: &str, tried: usize, opts: &Options) -> String {
    format!(
        "{why}; the search tried {tried} small edits within --search-time {} s and none passed",
        opts.search_time.as_secs()
    )
}

/// The reason when every candidate was tried (`copied`: those left out for copying the
/// test's expected literal, `plan::literals`).
pub(in crate::session) fn none_passed(why: &str, tried: usize, copied: usize) -> String {
    let left_out = match copied {
        0 => String::new(),
        n => format!(
            " ({n} more left out before any run: {} the failing test's expected value into the \
             code)",
            if n == 1 { "it copies" } else { "they copy" }
        ),
    };
    format!(
        "{why}; the search tried all {tried} small edits at the suspicious statements and none \
         passed{left_out}"
    )
}

/// The failure as the search sees it, for its reasons (planning's own message would say
/// "pass --allow-tests", which is not the way here: the test is the specification).
pub(in crate::session) fn what_failed(failure: &Failure, e: &PlanError) -> String {
    match e {
        PlanError::TestFile(file) if crashed_in_test_code(failure) => format!(
            "{} raised in test code ({file}): looked for its cause in the project code the test ran",
            failure.exc_type
        ),
        PlanError::TestFile(file) => format!("wrong output: the test's own check failed in {file}"),
        other => other.to_string(),
    }
}

/// Whether the failure is a crash in a test helper or fixture, not the test's own check failing:
/// the bad value may come from project code, or the bug may be in the test itself.
fn crashed_in_test_code(failure: &Failure) -> bool {
    let exc = failure.exc_type.rsplit('.').next().unwrap_or("");
    exc != "AssertionError" && exc != "Failed"
}

/// A command-mode candidate, its title and [`Candidate::coverage`] saying that no test covers
/// the edited line.
fn titled_command(r: Ranked) -> Candidate {
    let mut c = r.candidate;
    c.fix.title = format!(
        "{} (no test covers the line: the command's output decided)",
        c.fix.title
    );
    c.coverage = Some(Coverage::CommandOnly);
    c
}

/// The runners-up of a choice among plausible candidates (`kept` is the chosen one), best first
/// by the choice's own order: fewest changed behaviours (unmeasured last), then the search's.
pub(in crate::session) fn alternatives(
    found: &[Found],
    facts: &[choose::Plausible],
    kept: usize,
) -> Vec<choose::Alternative> {
    choose::runners_up(facts, kept)
        .into_iter()
        .filter(|&i| i < found.len())
        .map(|i| {
            let c = &found[i].cand;
            choose::Alternative {
                file: c.file.clone(),
                rule: c.fix.rule.clone(),
                title: c.fix.title.clone(),
                diff: c.diff.clone(),
                changed: facts[i]
                    .changed
                    .as_ref()
                    .map(|c| c.iter().cloned().collect()),
            }
        })
        .collect()
}

/// The alternatives recorded on the accepted attempt of a kept candidate (none for a rule's or
/// the model's fix).
pub(in crate::session) fn alternatives_of(
    attempts: &[Attempt],
    c: &Candidate,
) -> Vec<choose::Alternative> {
    attempts
        .iter()
        .rev()
        .filter(|a| a.outcome == AttemptOutcome::Accepted)
        .find(|a| a.file == c.file && a.rule == c.fix.rule && a.diff == c.diff)
        .and_then(|a| a.search.as_ref())
        .map(|s| s.alternatives.clone())
        .unwrap_or_default()
}

/// The review lines of a search patch: what to check, and a warning when one test alone
/// decided.
pub(in crate::session) fn review(c: &Candidate) -> Vec<String> {
    if c.source != Source::Search {
        return Vec::new();
    }
    let mut out = vec![engine::review_note()];
    if c.coverage == Some(Coverage::CommandOnly) {
        out.push(
            "no test covers the edited line: only the command's output checks decided, so the \
             patch may fit that output and not the intent (overfitting); add a test that pins \
             the behaviour"
                .to_string(),
        );
    }
    if c.coverage == Some(Coverage::Tests(1)) {
        out.push(
            "only one test covers the edited line: the patch may fit that test and not the \
             intent (overfitting); add a test that pins the behaviour"
                .to_string(),
        );
    }
    out
}

/// The search over small edits as a candidate source: a failed output check of command mode
/// before any facts; a failure planning gave up on; a failure whose rule candidates were all
/// rejected.
pub(in crate::session) struct Search;

impl CandidateSource for Search {
    fn before_facts(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &Round,
    ) -> Result<Option<Flow>, SessionError> {
        // A failed output check of command mode: the search over small edits first (one traced
        // run of the command localizes it), then the model when asked for.
        if round.depth == 0 && failure.exc_type == OUTPUT_CHECK_EXC && takes_output(w.s) {
            let found = search_output(w, failure)?;
            if found.is_some() || !round.model_follows {
                return Ok(Some(found.map_or(Flow::Stop, Flow::Fixed)));
            }
        }
        Ok(None)
    }

    fn work(
        &mut self,
        w: &mut Work,
        failure: &Failure,
        round: &mut Round,
    ) -> Result<Flow, SessionError> {
        if round.depth > 0 {
            return Ok(Flow::Next);
        }
        // Planning gave up (wrong output, a failure no rule knows).
        if let Some(e) = round.plan_error.as_ref().filter(|e| applies(w, failure, e)) {
            // The search confirms with its own full run: none while fixes are pending.
            if !w.ctx.batch_files.is_empty() {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let found = search(w, failure, &what_failed(failure, e))?;
            if found.is_none()
                && matches!(e, PlanError::TestFile(_))
                && crashed_in_test_code(failure)
            {
                // No edit of the project code the test ran made it pass: the bug may be in the
                // test code itself, which only `--allow-tests` lets selfdebug edit.
                let searched = w.ctx.reason.take();
                w.ctx.reason = Some(match searched {
                    Some(r) => format!("{r}; {e}"),
                    None => e.to_string(),
                });
            }
            if found.is_some() || round.model.is_none() || !llm::may_try(e) {
                return Ok(found.map_or(Flow::Stop, Flow::Fixed));
            }
            return Ok(Flow::Next);
        }
        // Every rule candidate was proven wrong: the cause may be a line the rules do not look
        // at.
        let of = round.rule_candidates;
        if of > 0 && applies_after_rules(w, failure) {
            // The search confirms with its own full run: none while fixes are pending.
            if !w.ctx.batch_files.is_empty() {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let why = format!(
                "{}: {}; the rules' {of} candidate{} did not pass",
                failure.exc_type,
                crate::traceback::first_line(&failure.msg),
                if of == 1 { "" } else { "s" }
            );
            if let Some(found) = search(w, failure, &why)? {
                return Ok(Flow::Fixed(found));
            }
            if round.model.is_none() {
                return Ok(Flow::Stop);
            }
        }
        // A rule matched and every transform declined (the reason names them): the search takes
        // the failure like one no rule knows.
        if of == 0 && round.plan_error.is_none() && applies_after_rules(w, failure) {
            if !w.ctx.batch_files.is_empty() {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let why = format!(
                "{}: {}; {}",
                failure.exc_type,
                crate::traceback::first_line(&failure.msg),
                w.ctx
                    .reason
                    .clone()
                    .unwrap_or_else(|| "the matching rules proposed nothing".into())
            );
            if let Some(found) = search(w, failure, &why)? {
                return Ok(Flow::Fixed(found));
            }
            if round.model.is_none() {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Next)
    }
}

/// Why no more candidates were started.
enum Stop {
    SearchTime,
    TimeBudget,
    /// Half the search time is left, and there is a lead to combine.
    Combine,
}

/// A submitted candidate not yet judged: its rank, itself, its hint, edit size, the tests that
/// cover its line and its targeted tests.
type Waiting = (usize, Candidate, Tier, usize, Vec<String>, Vec<String>);

/// The pool ids of joint candidates start here, past any ranked candidate's.
const JOINT_RANKS: usize = usize::MAX / 2;

/// The search's candidates proven with the pool (see the module docs and
/// [`super::search`]): the same outcome, attempts and reasons as one at a time, in less
/// wall time.
pub(super) fn search_parallel(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    candidates: Vec<Ranked>,
    state: &SearchState,
    mut pool: Pool,
) -> Result<Option<Fixed>, SessionError> {
    let window = pool.size();
    let mut ranked = candidates.into_iter().enumerate();
    // Submitted and not yet judged, in rank order: the candidate, its hint, edit size and the
    // tests that cover its line.
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut stopped: Option<Stop> = None;
    let mut exhausted = false;
    let mut tried = 0usize;
    // As one at a time: a few candidates past the first plausible one, then the choice.
    let mut plausible: Vec<Found> = Vec::new();
    let mut extra = 0usize;
    // Joint candidates (see `search::sites`): those of the submitted ones by rank, those due,
    // and how many were due so far.
    let mut joint_of: std::collections::BTreeMap<usize, Box<Ranked>> = Default::default();
    let mut pending: VecDeque<Ranked> = VecDeque::new();
    let mut joints = 0usize;
    let outcome: Result<(), SessionError> = loop {
        // Judged in rank order: once enough are plausible, the ones still running are not.
        if enough(&plausible, extra, state.spectrum) {
            break Ok(());
        }
        // Start the next candidates: the same checks as before each one with --jobs 1.
        while waiting.len() < window && stopped.is_none() && !exhausted {
            if crate::process::interrupted() {
                break;
            }
            if Instant::now() >= state.deadline {
                stopped = Some(Stop::SearchTime);
                break;
            }
            if !w.s.prover.time_for_a_candidate() {
                stopped = Some(Stop::TimeBudget);
                break;
            }
            // Half the search time is kept for a second edit on top of a lead.
            if plausible.is_empty() && time_to_combine(w, state.deadline) {
                stopped = Some(Stop::Combine);
                break;
            }
            // A joint candidate due goes before the next ranked one.
            let next = match pending.pop_front() {
                Some(j) => Some((JOINT_RANKS + joints, j)),
                None => ranked.next(),
            };
            let Some((rank, mut r)) = next else {
                exhausted = true;
                break;
            };
            if let Some(j) = r.joint.take() {
                joint_of.insert(rank, j);
            }
            // The same bytes already rejected for this failure cost no run.
            if w.ctx.already_rejected(failure, &r.candidate) {
                continue;
            }
            let covering = covering(state.spectrum, &r);
            let (hint, size) = (r.hint, r.size);
            let cand = titled(r, covering.len());
            let (targeted, passing) = targets(&w.ctx, failure, &covering, state.spectrum);
            let mut stages = vec![targeted_spec(w, &targeted)];
            if !passing.is_empty() {
                stages.push(w.s.prover.candidate_spec(w.ws, &passing));
            }
            pool.submit(Job {
                rank,
                file: cand.file.clone(),
                patched: cand.patched.clone(),
                stages,
                deadline: None,
                lead: w.ctx.cause.partial().then(|| targeted.clone()),
            });
            waiting.push_back((rank, cand, hint, size, covering, targeted));
        }
        let Some((rank, cand, hint, size, covering, targeted)) = waiting.pop_front() else {
            break Ok(());
        };
        let done = match pool.take_counted(w.s, rank) {
            Ok(d) => d,
            Err(e) => break Err(e),
        };
        tried += 1;
        if !plausible.is_empty() {
            extra += 1;
        }
        let (found, leads) = (plausible.len(), w.ctx.cause.leads.len());
        if let Err(e) = judge_done(
            w,
            failure,
            (rank, cand, hint, size, covering, targeted),
            done,
            &mut plausible,
        ) {
            break Err(e);
        }
        // As one at a time: its joint candidate next, when it fixed nothing alone and the
        // failing test is one, or when it is a lead.
        if let Some(j) = joint_of.remove(&rank) {
            let lead = w.ctx.cause.leads.len() > leads;
            if plausible.len() == found
                && joints < engine::sites::MAX_PER_SEARCH
                && (!w.ctx.cause.partial() || lead)
            {
                joints += 1;
                pending.push_back(*j);
            }
        }
    };
    // The runs still going are stopped; what they ran counts as pytest runs, nothing else.
    for done in pool.finish() {
        for (run, _) in &done.runs {
            w.s.prover.count_run(run, Phase::Candidate);
        }
    }
    outcome?;
    if plausible.is_empty() {
        // Candidates started before the time was up were judged: they count as tried.
        w.ctx.reason = Some(match stopped {
            Some(Stop::SearchTime) => out_of_search_time(state.why, tried, w.s.opts),
            Some(Stop::TimeBudget) => TIME_BUDGET_USED_UP.into(),
            Some(Stop::Combine) | None => {
                none_passed(state.why, tried, w.ctx.prechecked.test_literals)
            }
        });
        if matches!(stopped, Some(Stop::Combine) | None) {
            // No single edit fixed the cause: its best lead with a second edit (one at a
            // time, in the workspace, as with --jobs 1).
            return combine_lead(w, failure, state.why, state.test, state.deadline);
        }
        return Ok(None);
    }
    keep_best(
        w,
        state.test,
        state.spectrum,
        plausible,
        state.first_attempt,
    )
}

/// Judges one candidate's parallel runs as one at a time would: a plausible one joins
/// `plausible`; a cause's candidate that made some of its tests pass, with the passing tests
/// that run its line still passing (their run went on for it, see [`Job::lead`]), is a lead.
fn judge_done(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    (_, cand, hint, size, covering, targeted): Waiting,
    done: Done,
    plausible: &mut Vec<Found>,
) -> Result<(), SessionError> {
    let mut runs = done.runs.into_iter();
    let Some((first, first_verdict)) = runs.next() else {
        return Err(SessionError::NoParallelRun);
    };
    let green = !first.timed_out && matches!(first_verdict, Verdict::Green);
    let second = runs
        .next()
        .map(|(run, v)| (!run.timed_out, v, w.s.prover.covering_proof(&run)));
    let covering_run = second.as_ref().and_then(|(_, _, r)| r.clone());
    let lead = fixed_by(w, &first, &first_verdict, &targeted).filter(|_| match &second {
        Some((ended, v, _)) => *ended && matches!(v, Verdict::Green),
        None => true,
    });
    let neighbours = match second {
        Some((_, v, _)) if green => Some(v),
        // No passing test runs the line: nothing to break there.
        None if green => Some(Verdict::Green),
        _ => None,
    };
    let said = w
        .ctx
        .cause
        .partial()
        .then(|| crate::session::cause_state::still_failing_said(&first_verdict))
        .flatten();
    let t = Targeted {
        tests: targeted.clone(),
        first,
        first_verdict,
        neighbours,
        covering_run,
        spent: done.took,
        started_ms: Some(done.started_ms),
    };
    match judge(w, failure, &cand, hint, t, false)? {
        Some(after) => {
            if let Some(test) = failure.test.as_deref().filter(|_| plausible.is_empty()) {
                super::limits::tighten_for_runners_up(w.s, test);
            }
            plausible.push(Found::new(w, cand, after, covering, size)?)
        }
        None => {
            cause_still_failing(w, said);
            if let Some(fixed) = lead {
                keep_lead(w, &cand, fixed);
            }
        }
    }
    Ok(())
}
