//! The session's side of the search over small edits ([`crate::search`]): when a wrong-output
//! failure has no rule (the location is the test's own `assert`, or project code raised an
//! error no rule knows, or a `RecursionError`), one coverage run ranks the statements
//! ([`crate::localize`]) and the ranked candidates are proven like any other:
//!
//! 1. the failing test, with every other failing test that ran the edited line, with `-x` (a
//!    wrong guess fails fast; one edit must account for all of them);
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

use std::time::{Duration, Instant};

use super::*;
use crate::localize::{self, Spectrum};
use crate::plan::PlanError;
use crate::search::{self as engine, choose, Ranked, SearchInput, RULE_PREFIX};

/// A coverage run of the whole suite when the baseline took at most this long; else only the
/// failing test's file (its neighbours are the tests most likely to touch the same functions).
/// Tracing slows a run down two to four times: a small suite is cheap to trace whole, and the
/// whole suite gives Ochiai its best passing-test evidence.
const WHOLE_SUITE_COVERAGE: Duration = Duration::from_secs(10);

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
pub(super) fn applies(s: &Runs, ctx: &Step, failure: &Failure, e: &PlanError) -> bool {
    failure.test.is_some()
        // A project's own exception type (`bank.InsufficientFunds`) is `unknown`: raised on a
        // wrong branch, it is wrong output too.
        && (matches!(ctx.category, Category::Logic | Category::Unknown)
            // A hang: the stuck frame names the loop (see `localize::hang`).
            || (ctx.category == Category::Timeout && failure.location.is_some()))
        && search_enabled(s)
        && matches!(
            e,
            PlanError::TestFile(_) | PlanError::NoRule(_) | PlanError::NoLocation
        )
}

/// Whether the search takes over a failure whose rule candidates were all proven wrong (an
/// `IndexError` the index rule guessed wrong about, a library's `ValueError` fed a wrong
/// argument): the cause may be a line the rules do not look at.
pub(super) fn applies_after_rules(s: &Runs, ctx: &Step, failure: &Failure) -> bool {
    failure.test.is_some()
        && matches!(
            ctx.category,
            Category::Data | Category::Logic | Category::Unknown
        )
        && search_enabled(s)
}

/// Whether a hang (a test stopped by the per-test limit, stuck in project code) goes to the
/// search rather than being reported as timed out.
pub(super) fn takes_hangs(s: &Runs) -> bool {
    search_enabled(s)
}

/// Whether the search takes over a failed output check of command mode (see
/// [`search_output`]).
pub(super) fn takes_output(s: &Runs) -> bool {
    s.opts.judge.is_some() && takes_hangs(s)
}

/// The test name of the command's traced run in its spectrum.
const COMMAND_RUN: &str = "command";

/// A failed output check of command mode: one traced run of the command localizes, the
/// expected output gives the hint, each candidate is proven by a run of the command.
#[allow(clippy::type_complexity)]
pub(super) fn search_output(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let deadline = Instant::now() + s.opts.search_time;
    let why = failure.msg.clone();
    // The candidates' runs overwrite it; the model (after the search) needs the baseline's.
    let mismatch = s.last_mismatch.clone();
    let found = search_output_with(s, ws, ctx, failure, &why, mismatch.as_ref(), deadline);
    s.last_mismatch = mismatch;
    found
}

#[allow(clippy::type_complexity)]
fn search_output_with(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    why: &str,
    mismatch: Option<&crate::command::OutputMismatch>,
    deadline: Instant,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let spectrum = match s.command_coverage(ws)? {
        Ok(sp) => sp,
        Err(reason) => {
            ctx.reason = Some(format!("{why}; {reason}"));
            return Ok(None);
        }
    };
    let ranked = localize::rank_command(&spectrum, ws.root());
    ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        ctx.reason = Some(format!(
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
        s,
        ws,
        ctx,
        failure,
        why,
        &test,
        deadline,
        &ranked,
        &spectrum,
        expectation,
    )
}

/// Localizes, then tries the ranked candidates until one is proven or the search time is up.
#[allow(clippy::type_complexity)]
pub(super) fn search(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    why: &str,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let deadline = Instant::now() + s.opts.search_time;
    let why = why.to_string();
    let Some(test) = failure.test.clone() else {
        return Ok(None);
    };
    if ctx.category == Category::Timeout {
        // The hung test was left out of later runs; its candidates must run it.
        let was = s.deselect.iter().position(|t| *t == test);
        if let Some(i) = was {
            s.deselect.remove(i);
        }
        let found = search_hang(s, ws, ctx, failure, &why, &test, deadline);
        if was.is_some() && !matches!(found, Ok(Some(_))) {
            s.deselect.push(test);
        }
        return found;
    }
    let spectrum = match s.coverage(ws, &test)? {
        Some(sp) if sp.tests.get(&test).is_some_and(|t| t.failed) => sp,
        _ => {
            ctx.reason = Some(format!(
                "{why}; the coverage run to localize it gave nothing usable"
            ));
            return Ok(None);
        }
    };
    let ranked = localize::rank(&spectrum, localize::focus(ws.root(), failure));
    ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        ctx.reason = Some(format!(
            "{why}; the failing test ran no line of the project's own code"
        ));
        return Ok(None);
    }
    let expectation = engine::hint::Expectation::of(failure);
    try_ranked(
        s,
        ws,
        ctx,
        failure,
        &why,
        &test,
        deadline,
        &ranked,
        &spectrum,
        expectation,
    )
}

/// A hang: the loop around the stuck line is the suspect (no coverage run: the hung test would
/// cost the per-test limit again), and the candidates are proven like the others; with no
/// spectrum, the whole suite is the judge of the passing tests.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn search_hang(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let ranked = match failure.location.as_ref() {
        Some(loc) => localize::hang::loop_lines(ws.root(), &loc.file, loc.line),
        None => Vec::new(),
    };
    ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
    if ranked.is_empty() {
        // What the hang says (where it was stuck), then why the search had nothing to try.
        let (_, said) = crate::category::categorize(failure, ws.root());
        ctx.reason = Some(format!(
            "{}; no loop of the project's own code that a small edit could end holds the line \
             it was stuck at",
            said.unwrap_or_else(|| why.to_string())
        ));
        return Ok(None);
    }
    try_ranked(
        s,
        ws,
        ctx,
        failure,
        why,
        test,
        deadline,
        &ranked,
        &Spectrum::default(),
        engine::hint::Expectation::of(failure),
    )
}

/// Proposes and proves the candidates at the ranked lines (see the module docs).
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn try_ranked(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
    ranked: &[localize::Suspicious],
    spectrum: &Spectrum,
    expectation: Option<engine::hint::Expectation>,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    // A command's expected output has no test line: its expected number stands in.
    let expected = failure
        .frames
        .iter()
        .filter_map(|f| f.code.as_deref())
        .find_map(crate::transform::expected_literal)
        .or_else(|| {
            (s.opts.judge.is_some())
                .then(|| expectation.as_ref().map(|e| e.expected.clone()))
                .flatten()
        });
    // The failing frame's runtime types (probe or baseline facts) type the parameters there,
    // unless the failure is about a type (`join() argument must be str ..., not 'int'`): then
    // the wrong variable's type is the bug, and the right one is of another type.
    let type_error = matches!(failure.exc_type.as_str(), "TypeError" | "AttributeError");
    let frame = ctx
        .first_probe
        .as_ref()
        .filter(|_| !type_error)
        .map(engine::FrameTypes::of);
    let candidates = engine::candidates(&SearchInput {
        root: ws.root(),
        suspicious: ranked,
        expected: expected.as_deref(),
        expectation: expectation.as_ref(),
        allow_tests: s.opts.allow_tests,
        frame: frame.as_ref(),
    });
    // Files the configuration excludes are never patched, by the search either; families of
    // edits the rule selection leaves out (`ignore = ["search-delete-stmt"]`) are not tried.
    let mut candidates = candidates;
    candidates.retain(|r| {
        super::excluded(s.opts, &r.candidate.file).is_none()
            && s.opts.selection.enabled(&r.candidate.fix.rule)
    });
    if candidates.is_empty() {
        ctx.reason = Some(format!(
            "{why}; the search found no small edit to try at the suspicious statements"
        ));
        return Ok(None);
    }
    let key = failure_key(failure);
    let first_attempt = ctx.attempts.len();
    // With --jobs N the targeted runs go to scratch copies, N at a time (see `parallel`); the
    // judging, and the choice among plausible candidates, are the same as one at a time. A
    // command has no targeted run: each candidate's one run is its proof, in the workspace.
    if s.opts.jobs > 1 && candidates.len() > 1 && s.opts.judge.is_none() {
        let n = s.opts.jobs.min(candidates.len());
        if let Some(pool) = parallel::Pool::new(ws.root(), &s.python, n) {
            let state = SearchState {
                key: &key,
                spectrum,
                why,
                deadline,
                test,
                first_attempt,
            };
            return parallel::search(s, ws, ctx, failure, candidates, &state, pool);
        }
    }
    let mut tried = 0usize;
    // Candidates that passed every proof; the search goes on a little past the first (see
    // `search::choose`) and keeps the one that changes the fewest behaviours.
    let mut plausible: Vec<Found> = Vec::new();
    let mut extra = 0usize;
    for r in candidates {
        if crate::process::interrupted() || enough(&plausible, extra, spectrum) {
            break;
        }
        if Instant::now() >= deadline {
            if !plausible.is_empty() {
                break;
            }
            ctx.reason = Some(out_of_search_time(why, tried, s.opts));
            return Ok(None);
        }
        if !s.time_for_a_candidate() {
            if !plausible.is_empty() {
                break;
            }
            ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            return Ok(None);
        }
        // The same bytes already rejected for this failure (by a rule, or for another test
        // failing the same way) cost no run.
        if ctx.already_rejected(failure, &r.candidate) {
            continue;
        }
        tried += 1;
        if !plausible.is_empty() {
            extra += 1;
        }
        let covering = covering(spectrum, &r);
        let (hint, size) = (r.hint, r.size);
        let command = s.opts.judge.is_some();
        let cand = if command {
            titled_command(r)
        } else {
            titled(r, covering.len())
        };
        let after = if command {
            prove_command(s, ws, ctx, failure, &key, &cand, hint)?
        } else {
            prove(s, ws, ctx, failure, &key, &cand, hint, &covering, spectrum)?
        };
        if let Some(after) = after {
            plausible.push(Found::new(ws, ctx, cand, after, covering, size)?);
        }
    }
    if plausible.is_empty() {
        ctx.reason = Some(none_passed(why, tried));
        return Ok(None);
    }
    keep_best(s, ws, ctx, test, spectrum, plausible, first_attempt)
}

/// Enough plausible candidates gathered (see [`choose`]); without a spectrum (a hang) there is
/// no behaviour to compare, and the first one is kept.
///
/// Nor is there when no passing test runs the first plausible candidate's line: it changes no
/// behaviour, so no later one can beat it (a tie goes to the search's order), and the extra
/// tries would only cost runs.
pub(super) fn enough(plausible: &[Found], extra: usize, spectrum: &Spectrum) -> bool {
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

/// Chooses among the plausible candidates, writes the kept one and records it as accepted.
#[allow(clippy::type_complexity)]
pub(super) fn keep_best(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    test: &str,
    spectrum: &Spectrum,
    mut plausible: Vec<Found>,
    first_attempt: usize,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let kept = choose_among(s, ws, ctx, test, spectrum, &plausible, first_attempt)?;
    let found = plausible.swap_remove(kept);
    ws.write(&found.cand.path, &found.cand.patched)?;
    ctx.accepted
        .insert(found.cand.path.clone(), found.cand.patched.clone());
    Ok(Some((vec![found.cand], found.after)))
}

/// What a parallel search needs of the search's own state.
pub(super) struct SearchState<'a> {
    pub key: &'a (String, When),
    pub spectrum: &'a Spectrum,
    pub why: &'a str,
    /// The end of `--search-time`.
    pub deadline: Instant,
    pub test: &'a str,
    /// The first of this search's attempt records.
    pub first_attempt: usize,
}

/// A candidate that passed every proof.
pub(super) struct Found {
    cand: Candidate,
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
    pub(super) fn new(
        ws: &mut dyn Workspace,
        ctx: &Step,
        cand: Candidate,
        after: Vec<Failure>,
        covering: Vec<String>,
        size: usize,
    ) -> Result<Found, SessionError> {
        let previous = ctx
            .accepted
            .get(&cand.path)
            .cloned()
            .unwrap_or_else(|| cand.original.clone());
        ws.write(&cand.path, &previous)?;
        Ok(Found {
            cand,
            after,
            covering,
            size,
            attempt: ctx.attempts.len() - 1,
        })
    }
}

/// Picks among the plausible candidates (see [`choose`]): with two or more, one coverage run
/// each tells which passing tests that ran the edited line now behave differently. Records the
/// choice in the attempts: the others become `plausible`, the kept one says how many were
/// compared and which tests decided.
fn choose_among(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    test: &str,
    spectrum: &Spectrum,
    found: &[Found],
    first_attempt: usize,
) -> Result<usize, SessionError> {
    let mut facts: Vec<choose::Plausible> = Vec::new();
    for f in found {
        let changed = if found.len() > 1 {
            let previous = ctx
                .accepted
                .get(&f.cand.path)
                .cloned()
                .unwrap_or_else(|| f.cand.original.clone());
            ws.write(&f.cand.path, &f.cand.patched)?;
            let after = s.coverage(ws, test);
            ws.write(&f.cand.path, &previous)?;
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
    let broke: Vec<String> = ctx.attempts[first_attempt..]
        .iter()
        .filter(|a| a.outcome == "new_failures")
        .flat_map(|a| a.broke.iter().cloned())
        .collect();
    let decided = choose::decided_by(&facts, kept, broke);
    for (i, (f, p)) in found.iter().zip(&facts).enumerate() {
        let Some(a) = ctx.attempts.get_mut(f.attempt) else {
            continue;
        };
        let search = a.search.get_or_insert_with(Default::default);
        search.changed = p.changed.as_ref().map(|c| c.iter().cloned().collect());
        if i == kept {
            search.plausible = Some(found.len());
            search.decided_by = decided.clone();
        } else {
            a.outcome = "plausible";
        }
    }
    Ok(kept)
}

/// The reason when the search time ran out.
pub(super) fn out_of_search_time(why: &str, tried: usize, opts: &Options) -> String {
    format!(
        "{why}; the search tried {tried} small edits within --search-time {} s and none passed",
        opts.search_time.as_secs()
    )
}

/// The reason when every candidate was tried.
pub(super) fn none_passed(why: &str, tried: usize) -> String {
    format!(
        "{why}; the search tried all {tried} small edits at the suspicious statements and none \
         passed"
    )
}

/// The tests that ran the candidate's line.
pub(super) fn covering(spectrum: &Spectrum, r: &Ranked) -> Vec<String> {
    spectrum
        .covering(&r.candidate.file, r.line)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The failure as the search sees it, for its reasons (planning's own message would say
/// "pass --allow-tests", which is not the way here: the test is the specification).
pub(super) fn what_failed(e: &PlanError) -> String {
    match e {
        PlanError::TestFile(file) => format!("wrong output: the test's own check failed in {file}"),
        other => other.to_string(),
    }
}

/// The candidate, its title saying how many tests cover the edited line (read back by
/// [`review`]).
pub(super) fn titled(r: Ranked, covering: usize) -> Candidate {
    let mut c = r.candidate;
    if covering == 0 {
        // Only a hang is searched without a coverage run.
        c.fix.title = format!("{} (a hang: no coverage run)", c.fix.title);
        return c;
    }
    c.fix.title = format!(
        "{} ({covering} test{} cover{} the line)",
        c.fix.title,
        if covering == 1 { "" } else { "s" },
        if covering == 1 { "s" } else { "" }
    );
    c
}

/// Suffix of a command-mode search candidate's title (read back by [`review`]).
const NO_TEST_COVERS: &str = "(no test covers the line: the command's output decided)";

/// A command-mode candidate, its title saying that no test covers the edited line.
fn titled_command(r: Ranked) -> Candidate {
    let mut c = r.candidate;
    c.fix.title = format!("{} {NO_TEST_COVERS}", c.fix.title);
    c
}

/// The tests of a candidate's two targeted runs (see the module docs): every failing test that
/// runs the edited line, then the passing ones.
pub(super) fn targets(
    ctx: &Step,
    failure: &Failure,
    covering: &[String],
    spectrum: &Spectrum,
) -> (Vec<String>, Vec<String>) {
    // Every failing test that runs the edited line must pass: an edit that fixes one of them
    // and leaves the others failing there is a guess that fits one test (it would be kept,
    // since the others failed before too, and then block the right fix).
    let mut targeted: Vec<String> = failure.test.iter().cloned().collect();
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

/// What a candidate's targeted runs said.
pub(super) struct Targeted {
    pub first: PytestRun,
    pub first_verdict: Verdict,
    /// The passing covering tests' verdict (green when there are none); only after a green
    /// first run.
    pub neighbours: Option<Verdict>,
    /// Wall time already spent on the candidate.
    pub spent: Duration,
    /// When its first run started, when that is not now (a parallel proof's).
    pub started_ms: Option<u64>,
}

/// Runs the three proofs of one candidate (see the module docs); the full suite's failures
/// when it is accepted. The file is put back otherwise.
#[allow(clippy::too_many_arguments)]
fn prove(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    key: &(String, When),
    cand: &Candidate,
    hint: engine::hint::Tier,
    covering: &[String],
    spectrum: &Spectrum,
) -> Result<Option<Vec<Failure>>, SessionError> {
    ws.write(&cand.path, &cand.patched)?;
    let started = Instant::now();
    let (targeted, passing) = targets(ctx, failure, covering, spectrum);
    let first = s.run_candidate(ws, &targeted)?;
    let first_verdict = verdict::read(&first, ws.root());
    let neighbours = if !first.timed_out && matches!(first_verdict, Verdict::Green) {
        Some(if passing.is_empty() {
            Verdict::Green
        } else {
            let run = s.run_candidate(ws, &passing)?;
            verdict::read(&run, ws.root())
        })
    } else {
        None
    };
    let t = Targeted {
        first,
        first_verdict,
        neighbours,
        spent: started.elapsed(),
        started_ms: None,
    };
    judge(s, ws, ctx, failure, key, cand, hint, t, true)
}

/// Proves one candidate of command mode: one run of the command, with its output checks and
/// the candidate's shorter limit (see [`CANDIDATE_TEST_LIMIT_FACTOR`]); it is the whole judge.
#[allow(clippy::too_many_arguments)]
fn prove_command(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    key: &(String, When),
    cand: &Candidate,
    hint: engine::hint::Tier,
) -> Result<Option<Vec<Failure>>, SessionError> {
    ws.write(&cand.path, &cand.patched)?;
    let started = Instant::now();
    let mut spec = s.spec(ws, &[], &[]);
    spec.timeout = spec.timeout.min(s.candidate_limit());
    let first = s.exec(&spec, Phase::Candidate)?;
    let first_verdict = s.read(&first, ws.root());
    let neighbours =
        (!first.timed_out && matches!(first_verdict, Verdict::Green)).then_some(Verdict::Green);
    let t = Targeted {
        first,
        first_verdict,
        neighbours,
        spent: started.elapsed(),
        started_ms: None,
    };
    judge(s, ws, ctx, failure, key, cand, hint, t, true)
}

/// Judges a candidate by its targeted runs and, when they pass, by a run of the whole suite in
/// the workspace (the candidate is written for it unless `written` says it already is); records
/// the attempt. The file is put back unless the candidate is accepted.
#[allow(clippy::too_many_arguments)]
pub(super) fn judge(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    key: &(String, When),
    cand: &Candidate,
    hint: engine::hint::Tier,
    t: Targeted,
    mut written: bool,
) -> Result<Option<Vec<Failure>>, SessionError> {
    let started = Instant::now();
    let previous = ctx
        .accepted
        .get(&cand.path)
        .cloned()
        .unwrap_or_else(|| cand.original.clone());
    let mut attempt = s.attempt_record(failure, ctx.category, 0, cand, &t.first);
    if let Some(ms) = t.started_ms {
        attempt.timestamp_ms = ms;
    }
    attempt.search = Some(engine::AttemptFacts {
        hint: hint.word(),
        ..Default::default()
    });
    let mut accepted = None;
    if t.first.timed_out {
        attempt.outcome = "timeout";
    } else if let Some(neighbours) = t.neighbours {
        match neighbours {
            Verdict::Green => {
                if !written {
                    ws.write(&cand.path, &cand.patched)?;
                    written = true;
                }
                // A command's one run was the whole judge already, and it passed.
                let suite = if s.opts.judge.is_some() {
                    Verdict::Green
                } else {
                    let run = s.run(ws, &[], Phase::Confirm)?;
                    verdict::read(&run, ws.root())
                };
                accepted = super::judge::judge_full_run(
                    suite,
                    ctx.current,
                    std::slice::from_ref(key),
                    ctx.blind,
                )
                .record(&mut attempt);
            }
            Verdict::Failed(f) => {
                attempt.outcome = "new_failures";
                attempt.broke = f.iter().filter_map(|f| f.test.clone()).collect();
            }
            other => {
                attempt.outcome = "suite_error";
                attempt.new_failure = Some(other.describe());
            }
        }
    } else if let Some(f) = t
        .first_verdict
        .failures()
        .and_then(|f| f.iter().find(|f| f.test == failure.test))
    {
        attempt.new_failure = Some(format!(
            "{}: {}",
            f.exc_type,
            f.msg.lines().next().unwrap_or("")
        ));
        if f.exc_type == crate::plugin::TIMEOUT_EXC {
            attempt.outcome = "timeout"; // the mutant made the test hang
        }
    }
    attempt.duration_ms = (t.spent + started.elapsed()).as_millis() as u64;
    ctx.attempts.push(attempt);
    if accepted.is_none() {
        if written {
            ws.write(&cand.path, &previous)?;
        }
        ctx.tried.reject(failure, &cand.path, &cand.patched);
    }
    Ok(accepted)
}

/// The review lines of a search patch: what to check, and a warning when one test alone
/// decided.
pub(super) fn review(fix: &edit::Fix) -> Vec<String> {
    if !fix.rule.starts_with(RULE_PREFIX) {
        return Vec::new();
    }
    let mut out = vec![engine::review_note()];
    if fix.title.ends_with(NO_TEST_COVERS) {
        out.push(
            "no test covers the edited line: only the command's output checks decided, so the \
             patch may fit that output and not the intent (overfitting); add a test that pins \
             the behaviour"
                .to_string(),
        );
    }
    if fix.title.ends_with("(1 test covers the line)") {
        out.push(
            "only one test covers the edited line: the patch may fit that test and not the \
             intent (overfitting); add a test that pins the behaviour"
                .to_string(),
        );
    }
    out
}

/// A search candidate's per-test limit is at most this many times the baseline's whole run
/// (and at least [`MIN_CANDIDATE_TEST_LIMIT`]): a mutant that turns a loop endless (`n -= 1` →
/// `n += 1`) is common, and must not cost the full `--test-timeout` each time.
const CANDIDATE_TEST_LIMIT_FACTOR: u32 = 3;
const MIN_CANDIDATE_TEST_LIMIT: Duration = Duration::from_secs(5);

impl Runs<'_> {
    /// A targeted run of `node_ids` with `-x`, under the candidate's per-test limit.
    fn run_candidate(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
    ) -> Result<PytestRun, SessionError> {
        let spec = self.candidate_spec(ws, node_ids);
        // pytest always, whatever the judge: the search only runs in pytest mode.
        self.exec_pytest(&spec, Phase::Candidate)
    }

    /// What [`Runs::run_candidate`] runs (a parallel proof points it at its scratch copy).
    pub(super) fn candidate_spec(&self, ws: &dyn Workspace, node_ids: &[String]) -> RunSpec {
        let mut spec = self.spec(ws, node_ids, &["-x"]);
        spec.test_timeout = spec.test_timeout.map(|t| t.min(self.candidate_limit()));
        spec
    }

    /// How long a search candidate's test (or command) may run: a few times the baseline, so
    /// a candidate that makes it loop costs little.
    fn candidate_limit(&self) -> Duration {
        (self.baseline * CANDIDATE_TEST_LIMIT_FACTOR).max(MIN_CANDIDATE_TEST_LIMIT)
    }

    /// Counts a run made (in the workspace or a parallel proof's scratch copy).
    pub(super) fn count_run(&mut self, run: &PytestRun, phase: Phase) {
        self.tally(phase, run);
    }

    /// One run of the command under the line tracer: its spectrum, with the command as the one
    /// failing test; why not, when it cannot be traced or the run left nothing to read.
    fn command_coverage(
        &mut self,
        ws: &dyn Workspace,
    ) -> Result<Result<Spectrum, String>, SessionError> {
        let Some(judge) = self.opts.judge.as_ref() else {
            return Ok(Err(
                "the search traces a command only in command mode".into()
            ));
        };
        let Some(dir) = crate::plugin::dir() else {
            return Ok(Err(
                "the search needs selfdebug's private directory for its tracer, and none could \
                 be made"
                    .into(),
            ));
        };
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-cover-{}-", std::process::id()))
            .tempdir()
            .map_err(|e| SessionError::Environment(format!("coverage output dir: {e}")))?;
        let file = out.path().join("cover.json");
        let spec = self.spec(ws, &[], &[]);
        let run = match judge.run_traced(&self.python, &spec, dir, &file) {
            Ok(Ok(run)) => run,
            Ok(Err(why)) => return Ok(Err(why)),
            Err(e) => return Err(SessionError::Environment(e.to_string())),
        };
        self.tally(Phase::Probe, &run);
        let spectrum = Spectrum::read(&file, ws.root())
            .filter(|sp| sp.tests.get(COMMAND_RUN).is_some_and(|t| t.failed));
        Ok(spectrum.ok_or_else(|| {
            "the traced run of the command to localize it gave nothing usable".to_string()
        }))
    }

    /// One run under the coverage plugin (see [`WHOLE_SUITE_COVERAGE`] for what it runs).
    fn coverage(
        &mut self,
        ws: &dyn Workspace,
        test: &str,
    ) -> Result<Option<Spectrum>, SessionError> {
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-cover-{}-", std::process::id()))
            .tempdir()
            .map_err(|e| SessionError::Environment(format!("coverage output dir: {e}")))?;
        let file = out.path().join("cover.json");
        let node_ids: Vec<String> = if self.baseline <= WHOLE_SUITE_COVERAGE {
            Vec::new()
        } else {
            vec![test.split("::").next().unwrap_or(test).to_string()]
        };
        let mut spec = self.spec(ws, &node_ids, &[]);
        if !localize::cover(&mut spec, &file) {
            return Ok(None);
        }
        self.exec_pytest(&spec, Phase::Probe)?;
        Ok(Spectrum::read(&file, ws.root()))
    }
}
