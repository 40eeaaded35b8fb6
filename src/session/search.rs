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
//! The first candidate through all three is kept (candidates come best first: rank, then the
//! smallest edit). The search has its own wall time, `--search-time`, inside the run's
//! `--time-budget`; one scratch copy (or the journaled project) is reused, each candidate
//! written over the previous one and the original put back when it fails.

use std::time::{Duration, Instant};

use super::parallel;
use super::*;
use crate::localize::{self, Spectrum};
use crate::plan::PlanError;
use crate::search::{self as engine, Ranked, SearchInput, RULE_PREFIX};

/// A coverage run of the whole suite when the baseline took at most this long; else only the
/// failing test's file (its neighbours are the tests most likely to touch the same functions).
/// Tracing slows a run down two to four times: a small suite is cheap to trace whole, and the
/// whole suite gives Ochiai its best passing-test evidence.
const WHOLE_SUITE_COVERAGE: Duration = Duration::from_secs(10);

/// Top statements reported in `suspicious`.
const REPORTED: usize = 10;

/// Whether the search takes over a failure that planning gave up on.
pub(super) fn applies(s: &Runs, ctx: &Step, failure: &Failure, e: &PlanError) -> bool {
    failure.test.is_some()
        // A project's own exception type (`bank.InsufficientFunds`) is `unknown`: raised on a
        // wrong branch, it is wrong output too.
        && matches!(ctx.category, Category::Logic | Category::Unknown)
        && !s.opts.safe_only
        && s.opts.validate
        && crate::search::rule_ids()
            .iter()
            .any(|id| s.opts.selection.enabled(id))
        && matches!(
            e,
            PlanError::TestFile(_) | PlanError::NoRule(_) | PlanError::NoLocation
        )
}

/// Localizes, then tries the ranked candidates until one is proven or the search time is up.
#[allow(clippy::type_complexity)]
pub(super) fn search(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    ctx: &mut Step,
    failure: &Failure,
    why: &PlanError,
) -> Result<Option<(Vec<Candidate>, Vec<Failure>)>, SessionError> {
    let deadline = Instant::now() + s.opts.search_time;
    let why = what_failed(why);
    let Some(test) = failure.test.clone() else {
        return Ok(None);
    };
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
    let expected = failure
        .frames
        .iter()
        .filter_map(|f| f.code.as_deref())
        .find_map(crate::transform::expected_literal);
    let candidates = engine::candidates(&SearchInput {
        root: ws.root(),
        suspicious: &ranked,
        expected: expected.as_deref(),
        allow_tests: s.opts.allow_tests,
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
    // With --jobs N the targeted runs go to scratch copies, N at a time (see `parallel`).
    if s.opts.jobs > 1 && candidates.len() > 1 {
        let n = s.opts.jobs.min(candidates.len());
        if let Some(pool) = parallel::Pool::new(ws.root(), &s.python, n) {
            let found = Found {
                key: &key,
                spectrum: &spectrum,
                why: &why,
                deadline,
            };
            return parallel::search(s, ws, ctx, failure, candidates, &found, pool);
        }
    }
    let mut tried = 0usize;
    for r in candidates {
        if runner::interrupted() {
            break;
        }
        if Instant::now() >= deadline {
            ctx.reason = Some(out_of_search_time(&why, tried, s.opts));
            return Ok(None);
        }
        if !s.time_for_a_candidate() {
            ctx.reason = Some(TIME_BUDGET_USED_UP.into());
            return Ok(None);
        }
        // The same bytes already rejected for this failure (by a rule, or for another test
        // failing the same way) cost no run.
        if let Some(test) = ctx
            .tried
            .rejected_for(failure, &r.candidate.path, &r.candidate.patched)
        {
            let test = test.map(str::to_string);
            ctx.repeats.get_or_insert((0, test)).0 += 1;
            continue;
        }
        tried += 1;
        let covering = covering(&spectrum, &r);
        let cand = titled(r, covering.len());
        if let Some(after) = prove(s, ws, ctx, failure, &key, &cand, &covering, &spectrum)? {
            ctx.accepted.insert(cand.path.clone(), cand.patched.clone());
            return Ok(Some((vec![cand], after)));
        }
    }
    ctx.reason = Some(none_passed(&why, tried));
    Ok(None)
}

/// What a parallel search needs of the search's own state.
pub(super) struct Found<'a> {
    pub key: &'a (String, When),
    pub spectrum: &'a Spectrum,
    pub why: &'a str,
    /// The end of `--search-time`.
    pub deadline: Instant,
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
fn what_failed(e: &PlanError) -> String {
    match e {
        PlanError::TestFile(file) => format!("wrong output: the test's own check failed in {file}"),
        other => other.to_string(),
    }
}

/// The candidate, its title saying how many tests cover the edited line (read back by
/// [`review`]).
pub(super) fn titled(r: Ranked, covering: usize) -> Candidate {
    let mut c = r.candidate;
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
    judge(s, ws, ctx, failure, key, cand, t, true)
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
                let suite = s.run(ws, &[], Phase::Confirm)?;
                accepted = super::judge::judge_full_run(
                    verdict::read(&suite, ws.root()),
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
    if accepted.is_none() && written {
        ws.write(&cand.path, &previous)?;
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
        let short = (self.baseline * CANDIDATE_TEST_LIMIT_FACTOR).max(MIN_CANDIDATE_TEST_LIMIT);
        spec.test_timeout = spec.test_timeout.map(|t| t.min(short));
        spec
    }

    /// Counts a run made (in the workspace or a parallel proof's scratch copy).
    pub(super) fn count_run(&mut self, run: &PytestRun, phase: Phase) {
        self.tally(phase, run);
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
