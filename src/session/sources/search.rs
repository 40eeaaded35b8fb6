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
use std::time::{Duration, Instant};

use super::{llm, CandidateSource, Flow, Round};
use crate::command::{Untraceable, WrappedRunError, OUTPUT_CHECK_EXC};
use crate::localize::{self, Spectrum};
use crate::plan::{Candidate, Coverage, PlanError};
use crate::rules::Category;
use crate::runner::{PytestRun, RunSpec};
use crate::search::hint::Tier;
use crate::search::{self as engine, choose, Ranked, SearchInput};
use crate::session::error::SessionError;
use crate::session::model::Attempt;
use crate::session::parallel::{self, Done, Job, Pool};
use crate::session::runs::{Phase, Runs};
use crate::session::shared::Options;
use crate::session::shared::{excluded, failure_key, TIME_BUDGET_USED_UP};
use crate::session::work::{Fixed, Proven, Stages, Step, Targeted, Trial, Work};
use crate::session::workspace::Workspace;
use crate::status::{AttemptOutcome, Source};
use crate::traceback::Failure;
use crate::verdict::{self, Verdict};

/// A coverage run of the whole suite when the baseline took at most this long; else only the
/// files of the failing tests (their neighbours are the tests most likely to touch the same
/// functions). Tracing slows a run down two to four times: a small suite is cheap to trace
/// whole, and the whole suite gives Ochiai its best passing-test evidence.
const WHOLE_SUITE_COVERAGE: Duration = Duration::from_secs(10);

/// [`WHOLE_SUITE_COVERAGE`], or `SELFDEBUG_LARGE_SUITE_MS` (an internal setting, for tests that
/// need a "large" suite without a slow one; see docs/development.md).
fn whole_suite_coverage() -> Duration {
    std::env::var("SELFDEBUG_LARGE_SUITE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(WHOLE_SUITE_COVERAGE, Duration::from_millis)
}

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

impl Work<'_, '_> {
    /// Whether the search takes over a failure that planning gave up on.
    pub(in crate::session) fn applies(&self, failure: &Failure, e: &PlanError) -> bool {
        // A command's failure names no test; its hang goes to the search as a test's does.
        (failure.test.is_some()
            || (self.s.opts.judge.is_some() && self.ctx.category == Category::Timeout))
        // A project's own exception type (`bank.InsufficientFunds`) is `unknown`: raised on a
        // wrong branch, it is wrong output too.
        && (matches!(self.ctx.category, Category::Logic | Category::Unknown)
            // A hang: the stuck frame names the loop (see `localize::hang`).
            || (self.ctx.category == Category::Timeout && failure.location.is_some())
            // A data error raised in a test helper or fixture (`json.loads` of what a project
            // serializer wrote): the bad value came from the project code the test ran.
            || (self.ctx.category == Category::Data && matches!(e, PlanError::TestFile(_))))
        && search_enabled(self.s)
        && matches!(
            e,
            PlanError::TestFile(_) | PlanError::NoRule(_) | PlanError::NoLocation
        )
    }

    /// Whether the search takes over a failure whose rule candidates were all proven wrong (an
    /// `IndexError` the index rule guessed wrong about, a library's `ValueError` fed a wrong
    /// argument): the cause may be a line the rules do not look at.
    pub(in crate::session) fn applies_after_rules(&self, failure: &Failure) -> bool {
        failure.test.is_some()
            && matches!(
                self.ctx.category,
                Category::Data | Category::Logic | Category::Unknown
            )
            && search_enabled(self.s)
    }

    /// A failed output check of command mode: one traced run of the command localizes, the
    /// expected output gives the hint, each candidate is proven by a run of the command.
    pub(in crate::session) fn search_output(
        &mut self,
        failure: &Failure,
    ) -> Result<Option<Fixed>, SessionError> {
        let deadline = Instant::now() + self.s.opts.search_time;
        let why = failure.msg.clone();
        // The candidates' runs overwrite it; the model (after the search) needs the baseline's.
        let mismatch = self.s.last_mismatch.clone();
        let found = self.search_output_with(failure, &why, mismatch.as_ref(), deadline);
        self.s.last_mismatch = mismatch;
        found
    }

    fn search_output_with(
        &mut self,
        failure: &Failure,
        why: &str,
        mismatch: Option<&crate::command::OutputMismatch>,
        deadline: Instant,
    ) -> Result<Option<Fixed>, SessionError> {
        let spectrum = match self.s.command_coverage(self.ws)? {
            Ok(sp) => sp,
            Err(reason) => {
                self.ctx.reason = Some(format!("{why}; {reason}"));
                return Ok(None);
            }
        };
        let ranked = localize::rank_command(&spectrum, self.ws.root());
        self.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
        if ranked.is_empty() {
            self.ctx.reason = Some(format!(
                "{why}; the command ran no line of the project's own code"
            ));
            return Ok(None);
        }
        let expectation = mismatch.and_then(|m| match m.check {
            "expect_stdout" => {
                engine::hint::Expectation::from_output(&m.expected, &m.actual, false)
            }
            "expect_stdout_regex" => {
                engine::hint::Expectation::from_output(&m.expected, &m.actual, true)
            }
            _ => None,
        });
        let test = failure
            .headline
            .clone()
            .unwrap_or_else(|| COMMAND_RUN.into());
        self.try_ranked(
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
        &mut self,
        failure: &Failure,
        why: &str,
    ) -> Result<Option<Fixed>, SessionError> {
        let deadline = Instant::now() + self.s.opts.search_time;
        let why = why.to_string();
        // A command's hang: the command is the one "test" (its headline, as for wrong output).
        let test = failure.test.clone().or_else(|| {
            (self.s.opts.judge.is_some() && self.ctx.category == Category::Timeout)
                .then(|| failure.headline.clone())
                .flatten()
        });
        let Some(test) = test else {
            return Ok(None);
        };
        let limit = super::limits::for_failure(self.s, failure, self.ctx.category, &test);
        self.s.search_test_limit = limit;
        let found = self.search_test(failure, why, test, deadline);
        self.s.search_test_limit = None;
        found
    }

    /// [`Work::search`] once the test is known.
    fn search_test(
        &mut self,
        failure: &Failure,
        why: String,
        test: String,
        deadline: Instant,
    ) -> Result<Option<Fixed>, SessionError> {
        if self.ctx.category == Category::Timeout {
            // The hung test was left out of later runs; its candidates must run it.
            let was = self.s.deselect.iter().position(|t| *t == test);
            if let Some(i) = was {
                self.s.deselect.remove(i);
            }
            let found = self.search_hang(failure, &why, &test, deadline);
            if was.is_some() && !matches!(found, Ok(Some(_))) {
                self.s.deselect.push(test);
            }
            return found;
        }
        let spectrum = match self.cause_coverage(&test)? {
            Some(sp) if sp.tests.get(&test).is_some_and(|t| t.failed) => sp,
            // It passed on the code the reference run saw it fail on: like a probe run that
            // passed, one plain run decides whether it is flaky (see `Work::flaky`).
            Some(sp)
                if sp.tests.contains_key(&test)
                    && self.ctx.current.contains(&failure_key(failure))
                    && self.flaky(failure)? =>
            {
                return Ok(None);
            }
            _ => {
                self.ctx.reason = Some(format!(
                    "{why}; the coverage run to localize it gave nothing usable"
                ));
                return Ok(None);
            }
        };
        // The failing tests of one cause are searched together, ranked over them only.
        let spectrum = self.cause_spectrum(&spectrum, &test);
        let ranked = localize::rank(&spectrum, localize::focus(self.ws.root(), failure));
        self.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
        if ranked.is_empty() {
            self.ctx.reason = Some(format!(
                "{why}; the failing test ran no line of the project's own code"
            ));
            return Ok(None);
        }
        let expectation = engine::hint::Expectation::of(failure);
        self.try_ranked(
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
        &mut self,
        failure: &Failure,
        why: &str,
        test: &str,
        deadline: Instant,
    ) -> Result<Option<Fixed>, SessionError> {
        let ranked = match failure.location.as_ref() {
            Some(loc) => localize::hang::loop_lines(self.ws.root(), &loc.file, loc.line),
            None => Vec::new(),
        };
        self.ctx.suspicious = ranked.iter().take(REPORTED).cloned().collect();
        if ranked.is_empty() {
            // What the hang says (where it was stuck), then why the search had nothing to try.
            let (_, said) = crate::category::categorize(failure, self.ws.root());
            self.ctx.reason = Some(format!(
                "{}; no loop of the project's own code that a small edit could end holds the line \
             it was stuck at",
                said.unwrap_or_else(|| why.to_string())
            ));
            return Ok(None);
        }
        self.try_ranked(
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

    /// The search's candidates at the suspicious lines, best first, without those of excluded
    /// files or left-out edit families; none (the step says why) when nothing is left.
    pub(in crate::session) fn ranked_candidates(
        &mut self,
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
                (self.s.opts.judge.is_some())
                    .then(|| expectation.as_ref().map(|e| e.expected.clone()))
                    .flatten()
            });
        // The failing frame's runtime types (probe or baseline facts) type the parameters there,
        // unless the failure is about a type (`join() argument must be str ..., not 'int'`): then
        // the wrong variable's type is the bug, and the right one is of another type.
        let type_error = matches!(failure.exc_type.as_str(), "TypeError" | "AttributeError");
        let frame = self
            .ctx
            .first_probe
            .as_ref()
            .filter(|_| !type_error)
            .map(engine::FrameTypes::of);
        let words = engine::data::failure_words(failure);
        let test_literals = crate::plan::literals::test_literals(failure);
        let candidates = engine::candidates(&SearchInput {
            root: self.ws.root(),
            suspicious: ranked,
            expected: expected.as_deref(),
            expectation: expectation.as_ref(),
            allow_tests: self.s.opts.allow_tests,
            frame: frame.as_ref(),
            words: &words,
            test_literals: &test_literals,
        });
        // Files the configuration excludes are never patched, by the search either; families of
        // edits the rule selection leaves out (`ignore = ["search-delete-stmt"]`) are not tried.
        let mut candidates = candidates;
        candidates.retain(|r| {
            excluded(self.s.opts, &r.candidate.file).is_none()
                && self.s.opts.selection.enabled(&r.candidate.fix.rule)
        });
        // An edit that copies the failing test's expected literal into the code (`if not h:
        // return 3600`) passes that test by construction: left out before any run.
        let ranked = candidates.len();
        candidates.retain(|r| r.copied.is_none());
        let copied = ranked - candidates.len();
        self.ctx.prechecked.test_literals += copied;
        if candidates.is_empty() {
            let copying = if copied > 0 {
                format!(
                    " ({copied} left out: they copy the failing test's expected value into the \
                     code)"
                )
            } else {
                String::new()
            };
            self.ctx.reason = Some(format!(
                "{why}; the search found no small edit to try at the suspicious statements{copying}"
            ));
            return None;
        }
        Some(candidates)
    }

    /// The candidates left after [`super::precheck`] (none: the step says why).
    fn prechecked(
        &mut self,
        candidates: Vec<Ranked>,
        why: &str,
        test: &str,
        spectrum: &Spectrum,
    ) -> Option<Vec<Ranked>> {
        let (kept, dropped) = {
            let _t = crate::trace_times::span("search: candidates pre-checked");
            super::precheck::screen(&self.s.python, candidates, test, spectrum)
        };
        self.ctx.prechecked.search += dropped.total();
        if kept.is_empty() {
            self.ctx.reason = Some(format!(
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
        &mut self,
        failure: &Failure,
        why: &str,
        test: &str,
        deadline: Instant,
        suspects: Suspects,
    ) -> Result<Option<Fixed>, SessionError> {
        let Some(candidates) = self.ranked_candidates(failure, why, &suspects) else {
            return Ok(None);
        };
        let spectrum = suspects.spectrum;
        let Some(candidates) = self.prechecked(candidates, why, test, spectrum) else {
            return Ok(None);
        };
        let first_attempt = self.ctx.attempts.len();
        // With --jobs N the targeted runs go to scratch copies, N at a time (see `parallel`); the
        // judging, and the choice among plausible candidates, are the same as one at a time. A
        // command has no targeted run: each candidate's one run is its proof, in the workspace.
        // A cause of several tests runs its targeted runs to the end there too (its leads'
        // partial fitness, see `cause`); a lead's second edit is searched one at a time.
        if self.s.opts.jobs > 1 && candidates.len() > 1 && self.s.opts.judge.is_none() {
            let n = self.s.opts.jobs.min(candidates.len());
            if let Some(pool) = parallel::Pool::new(self.ws.root(), &self.s.python, n) {
                let state = SearchState {
                    spectrum,
                    why,
                    deadline,
                    test,
                    first_attempt,
                };
                return self.search_parallel(failure, candidates, &state, pool);
            }
        }
        let mut tried = 0usize;
        // Candidates that passed every proof; the search goes on a little past the first (see
        // `search::choose`) and keeps the one that changes the fewest behaviours.
        let mut plausible: Vec<Found> = Vec::new();
        let mut extra = 0usize;
        let total = candidates.len();
        for (i, r) in candidates.into_iter().enumerate() {
            if crate::process::interrupted() || enough(&plausible, extra, spectrum) {
                break;
            }
            if Instant::now() >= deadline {
                if !plausible.is_empty() {
                    break;
                }
                self.ctx.untried += total - i;
                self.ctx.reason = Some(out_of_search_time(why, tried, self.s.opts));
                return Ok(None);
            }
            // Half the search time is kept for a second edit on top of a lead.
            if plausible.is_empty() && self.time_to_combine(deadline) {
                self.ctx.untried += total - i;
                break;
            }
            if !self.s.time_for_a_candidate() {
                if !plausible.is_empty() {
                    break;
                }
                self.ctx.untried += total - i;
                self.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
                return Ok(None);
            }
            // The same bytes already rejected for this failure (by a rule, or for another test
            // failing the same way) cost no run.
            if self.ctx.already_rejected(failure, &r.candidate) {
                continue;
            }
            tried += 1;
            if !plausible.is_empty() {
                extra += 1;
            }
            let covering = covering(spectrum, &r);
            let (hint, size) = (r.hint, r.size);
            let command = self.s.opts.judge.is_some();
            let cand = if command {
                titled_command(r)
            } else {
                titled(r, covering.len())
            };
            let after = if command {
                self.prove_command(failure, &cand, hint)?
            } else {
                self.prove_searched(failure, &cand, hint, &covering, spectrum)?
            };
            if let Some(after) = after {
                if plausible.is_empty() {
                    super::limits::tighten_for_runners_up(self.s, test);
                }
                plausible.push(Found::new(self, cand, after, covering, size)?);
            }
        }
        if plausible.is_empty() {
            let copied = self.ctx.prechecked.test_literals;
            self.ctx.reason = Some(none_passed(why, tried, copied));
            // No single edit fixed the cause: its best lead with a second edit.
            return self.combine_lead(failure, why, test, deadline);
        }
        self.keep_best(test, spectrum, plausible, first_attempt)
    }

    /// Chooses among the plausible candidates, writes the kept one and records it as accepted.
    pub(in crate::session) fn keep_best(
        &mut self,
        test: &str,
        spectrum: &Spectrum,
        mut plausible: Vec<Found>,
        first_attempt: usize,
    ) -> Result<Option<Fixed>, SessionError> {
        let kept = self.choose_among(test, spectrum, &plausible, first_attempt)?;
        let found = plausible.swap_remove(kept);
        self.ws.write(&found.cand.path, &found.cand.patched)?;
        self.ctx
            .accepted
            .insert(found.cand.path.clone(), found.cand.patched.clone());
        Ok(Some((vec![found.cand], found.after)))
    }

    /// Picks among the plausible candidates (see [`choose`]): with two or more, one coverage run
    /// each tells which passing tests that ran the edited line now behave differently. Records the
    /// choice in the attempts: the others become `plausible`, the kept one says how many were
    /// compared and which tests decided.
    fn choose_among(
        &mut self,
        test: &str,
        spectrum: &Spectrum,
        found: &[Found],
        first_attempt: usize,
    ) -> Result<usize, SessionError> {
        let mut facts: Vec<choose::Plausible> = Vec::new();
        for f in found {
            let changed = if found.len() > 1 {
                let previous = self
                    .ctx
                    .accepted
                    .get(&f.cand.path)
                    .cloned()
                    .unwrap_or_else(|| f.cand.original.clone());
                self.ws.write(&f.cand.path, &f.cand.patched)?;
                let after = self.cause_coverage(test);
                self.ws.write(&f.cand.path, &previous)?;
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
        let broke: Vec<String> = self.ctx.attempts[first_attempt..]
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::NewFailures)
            .flat_map(|a| a.broke.iter().cloned())
            .collect();
        let decided = choose::decided_by(&facts, kept, broke);
        let alternatives = alternatives(found, &facts, kept);
        for (i, (f, p)) in found.iter().zip(&facts).enumerate() {
            let Some(a) = self.ctx.attempts.get_mut(f.attempt) else {
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

    /// Runs the three proofs of one candidate (see the module docs); the full suite's failures
    /// when it is accepted. The file is put back otherwise.
    pub(in crate::session) fn prove_searched(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        hint: engine::hint::Tier,
        covering: &[String],
        spectrum: &Spectrum,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        self.ws.write(&cand.path, &cand.patched)?;
        let started = Instant::now();
        let (targeted, passing) = targets(&self.ctx, failure, covering, spectrum);
        let first = self.run_targeted(&targeted)?;
        let first_verdict = verdict::read(&first, self.ws.root());
        let lead = self.lead_of(&first, &first_verdict, &targeted, &passing)?;
        let neighbours = if !first.timed_out && matches!(first_verdict, Verdict::Green) {
            Some(if passing.is_empty() {
                Verdict::Green
            } else {
                let run = self.s.run_candidate(self.ws, &passing)?;
                verdict::read(&run, self.ws.root())
            })
        } else {
            None
        };
        let t = Targeted {
            tests: targeted,
            first,
            first_verdict,
            neighbours,
            spent: started.elapsed(),
            started_ms: None,
        };
        let said = self
            .ctx
            .cause
            .partial()
            .then(|| crate::session::cause_state::still_failing_said(&t.first_verdict))
            .flatten();
        let proven = self.judge(failure, cand, hint, t, true)?;
        if proven.is_none() {
            self.cause_still_failing(said);
        }
        if let Some(fixed) = lead {
            self.keep_lead(cand, fixed);
        }
        Ok(proven)
    }

    /// Proves one candidate of command mode: one run of the command, with its output checks and
    /// the candidate's shorter limit (see [`CANDIDATE_TEST_LIMIT_FACTOR`]); it is the whole judge.
    fn prove_command(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        hint: engine::hint::Tier,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        self.ws.write(&cand.path, &cand.patched)?;
        let started = Instant::now();
        let mut spec = self.s.spec(self.ws, &[], &[]);
        spec.timeout = spec.timeout.min(self.s.candidate_limit());
        let first = self.s.exec(&spec, Phase::Candidate)?;
        let first_verdict = self.s.read(&first, self.ws.root());
        let neighbours =
            (!first.timed_out && matches!(first_verdict, Verdict::Green)).then_some(Verdict::Green);
        let t = Targeted {
            tests: Vec::new(),
            first,
            first_verdict,
            neighbours,
            spent: started.elapsed(),
            started_ms: None,
        };
        self.judge(failure, cand, hint, t, true)
    }

    /// Proves a search candidate whose targeted runs are made (see [`Work::prove`]): the full
    /// suite's failures when it passed everything, the candidate left written for the choice.
    pub(in crate::session) fn judge(
        &mut self,
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
        Ok(match self.prove(failure, cand, trial)? {
            Proven::Fixed((_, after)) => Some(after),
            Proven::Rejected | Proven::Stop => None,
        })
    }
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

/// The test name of the command's traced run in its spectrum.
const COMMAND_RUN: &str = "command";

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

/// Where the search looks: the suspicious lines, best first, the spectrum that ranked them
/// (empty for a hang), and what the failure says the right value is.
pub(in crate::session) struct Suspects<'a> {
    ranked: &'a [localize::Suspicious],
    spectrum: &'a Spectrum,
    expectation: Option<engine::hint::Expectation>,
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

/// The tests that ran the candidate's line.
pub(in crate::session) fn covering(spectrum: &Spectrum, r: &Ranked) -> Vec<String> {
    spectrum
        .covering(&r.candidate.file, r.line)
        .into_iter()
        .map(str::to_string)
        .collect()
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

/// A search candidate's per-test limit is at most this many times the baseline's whole run
/// (and at least [`MIN_CANDIDATE_TEST_LIMIT`]): a mutant that turns a loop endless (`n -= 1` →
/// `n += 1`) is common, and must not cost the full `--test-timeout` each time.
const CANDIDATE_TEST_LIMIT_FACTOR: u32 = 3;
const MIN_CANDIDATE_TEST_LIMIT: Duration = Duration::from_secs(5);
/// A candidate's limit when the command's baseline hung: that run's length is the per-run limit,
/// not the command's, so a few times it would let every candidate that still loops cost minutes.
/// A right fix of a command that needs longer is missed (reported as a timeout), never passed.
const HUNG_COMMAND_CANDIDATE_LIMIT: Duration = Duration::from_secs(10);

impl Runs<'_> {
    /// A targeted run of `node_ids` with `-x`, under the candidate's per-test limit.
    pub(in crate::session) fn run_candidate(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
    ) -> Result<PytestRun, SessionError> {
        let spec = self.candidate_spec(ws, node_ids);
        // pytest always, whatever the judge: the search only runs in pytest mode.
        self.exec_pytest(&spec, Phase::Candidate)
    }

    /// What [`Runs::run_candidate`] runs (a parallel proof points it at its scratch copy).
    pub(in crate::session) fn candidate_spec(
        &self,
        ws: &dyn Workspace,
        node_ids: &[String],
    ) -> RunSpec {
        let mut spec = self.spec(ws, node_ids, &["-x"]);
        let limit = self
            .search_test_limit
            .unwrap_or_else(|| self.candidate_limit());
        spec.test_timeout = spec.test_timeout.map(|t| t.min(limit));
        spec
    }

    /// How long a search candidate's test (or command) may run: a few times the baseline, so
    /// a candidate that makes it loop costs little.
    pub(in crate::session) fn candidate_limit(&self) -> Duration {
        if self.baseline_hung {
            return HUNG_COMMAND_CANDIDATE_LIMIT;
        }
        (self.baseline * CANDIDATE_TEST_LIMIT_FACTOR).max(MIN_CANDIDATE_TEST_LIMIT)
    }

    /// Counts a run made (in the workspace or a parallel proof's scratch copy).
    pub(in crate::session) fn count_run(&mut self, run: &PytestRun, phase: Phase) {
        self.tally(phase, run);
    }

    /// One run of the command under the line tracer: its spectrum, with the command as the one
    /// failing test; why not, when it cannot be traced or the run left nothing to read.
    fn command_coverage(
        &mut self,
        ws: &dyn Workspace,
    ) -> Result<Result<Spectrum, Untraced>, SessionError> {
        let Some(judge) = self.opts.judge.as_ref() else {
            return Ok(Err(Untraced::NotCommandMode));
        };
        let Some(dir) = crate::plugin::dir() else {
            return Ok(Err(Untraced::NoPluginDir));
        };
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-cover-{}-", std::process::id()))
            .tempdir()
            .map_err(SessionError::CoverageDir)?;
        let file = out.path().join("cover.json");
        let spec = self.spec(ws, &[], &[]);
        let run = match judge.run_traced(&self.python, &spec, dir, &file) {
            Ok(run) => run,
            Err(WrappedRunError::Untraceable(why)) => return Ok(Err(Untraced::Command(why))),
            Err(WrappedRunError::Runner(e)) => return Err(SessionError::Runner(e)),
        };
        self.tally(Phase::Probe, &run);
        let spectrum = Spectrum::read(&file, ws.root())
            .filter(|sp| sp.tests.get(COMMAND_RUN).is_some_and(|t| t.failed));
        Ok(spectrum.ok_or(Untraced::NothingUsable))
    }

    /// One run under the coverage plugin (see [`WHOLE_SUITE_COVERAGE`] for what it runs: of a
    /// large suite, the files of all of `tests`, the failing tests that may be one cause, in one
    /// run; see `cause_coverage`); module constants count as run by the tests that read them
    /// ([`localize::globals`]). Under a narrow selection the tests outside it are added from the
    /// session's suite-wide coverage ([`Runs::widen_spectrum`]).
    pub(in crate::session) fn coverage_of(
        &mut self,
        ws: &dyn Workspace,
        tests: &[String],
    ) -> Result<Option<Spectrum>, SessionError> {
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-cover-{}-", std::process::id()))
            .tempdir()
            .map_err(SessionError::CoverageDir)?;
        let file = out.path().join("cover.json");
        let node_ids: Vec<String> = if self.baseline <= whole_suite_coverage() {
            Vec::new()
        } else {
            let mut files: Vec<String> = Vec::new();
            for t in tests {
                let file = t.split("::").next().unwrap_or(t).to_string();
                if !files.contains(&file) {
                    files.push(file);
                }
            }
            files
        };
        let mut spec = self.spec(ws, &node_ids, &[]);
        if !localize::cover(&mut spec, &file) {
            return Ok(None);
        }
        self.exec_pytest(&spec, Phase::Probe)?;
        Ok(Spectrum::read(&file, ws.root()).map(|mut sp| {
            // A narrow selection's tests alone would say "1 test covers the line".
            self.widen_spectrum(&mut sp);
            localize::globals::attribute_constants(&mut sp, ws.root());
            sp
        }))
    }
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
            let found = w.search_output(failure)?;
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
        if let Some(e) = round.plan_error.as_ref().filter(|e| w.applies(failure, e)) {
            // The search confirms with its own full run: none while fixes are pending.
            if !w.ctx.batch_files.is_empty() {
                w.ctx.needs_flush = true;
                return Ok(Flow::Stop);
            }
            let found = w.search(failure, &what_failed(failure, e))?;
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
        if of > 0 && w.applies_after_rules(failure) {
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
            if let Some(found) = w.search(failure, &why)? {
                return Ok(Flow::Fixed(found));
            }
            if round.model.is_none() {
                return Ok(Flow::Stop);
            }
        }
        // A rule matched and every transform declined (the reason names them): the search takes
        // the failure like one no rule knows.
        if of == 0 && round.plan_error.is_none() && w.applies_after_rules(failure) {
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
            if let Some(found) = w.search(failure, &why)? {
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

impl Work<'_, '_> {
    /// The search's candidates proven with the pool (see the module docs and
    /// [`super::search`]): the same outcome, attempts and reasons as one at a time, in less
    /// wall time.
    pub(super) fn search_parallel(
        &mut self,
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
                if !self.s.time_for_a_candidate() {
                    stopped = Some(Stop::TimeBudget);
                    break;
                }
                // Half the search time is kept for a second edit on top of a lead.
                if plausible.is_empty() && self.time_to_combine(state.deadline) {
                    stopped = Some(Stop::Combine);
                    break;
                }
                let Some((rank, r)) = ranked.next() else {
                    exhausted = true;
                    break;
                };
                // The same bytes already rejected for this failure cost no run.
                if self.ctx.already_rejected(failure, &r.candidate) {
                    continue;
                }
                let covering = covering(state.spectrum, &r);
                let (hint, size) = (r.hint, r.size);
                let cand = titled(r, covering.len());
                let (targeted, passing) = targets(&self.ctx, failure, &covering, state.spectrum);
                let mut stages = vec![self.targeted_spec(&targeted)];
                if !passing.is_empty() {
                    stages.push(self.s.candidate_spec(self.ws, &passing));
                }
                pool.submit(Job {
                    rank,
                    file: cand.file.clone(),
                    patched: cand.patched.clone(),
                    stages,
                    deadline: None,
                    lead: self.ctx.cause.partial().then(|| targeted.clone()),
                });
                waiting.push_back((rank, cand, hint, size, covering, targeted));
            }
            let Some((rank, cand, hint, size, covering, targeted)) = waiting.pop_front() else {
                break Ok(());
            };
            let done = match pool.take_counted(self.s, rank) {
                Ok(d) => d,
                Err(e) => break Err(e),
            };
            tried += 1;
            if !plausible.is_empty() {
                extra += 1;
            }
            if let Err(e) = self.judge_done(
                failure,
                (rank, cand, hint, size, covering, targeted),
                done,
                &mut plausible,
            ) {
                break Err(e);
            }
        };
        // The runs still going are stopped; what they ran counts as pytest runs, nothing else.
        for done in pool.finish() {
            for (run, _) in &done.runs {
                self.s.count_run(run, Phase::Candidate);
            }
        }
        outcome?;
        if plausible.is_empty() {
            // Candidates started before the time was up were judged: they count as tried.
            self.ctx.reason = Some(match stopped {
                Some(Stop::SearchTime) => out_of_search_time(state.why, tried, self.s.opts),
                Some(Stop::TimeBudget) => TIME_BUDGET_USED_UP.into(),
                Some(Stop::Combine) | None => {
                    none_passed(state.why, tried, self.ctx.prechecked.test_literals)
                }
            });
            if matches!(stopped, Some(Stop::Combine) | None) {
                // No single edit fixed the cause: its best lead with a second edit (one at a
                // time, in the workspace, as with --jobs 1).
                return self.combine_lead(failure, state.why, state.test, state.deadline);
            }
            return Ok(None);
        }
        self.keep_best(state.test, state.spectrum, plausible, state.first_attempt)
    }

    /// Judges one candidate's parallel runs as one at a time would: a plausible one joins
    /// `plausible`; a cause's candidate that made some of its tests pass, with the passing tests
    /// that run its line still passing (their run went on for it, see [`Job::lead`]), is a lead.
    fn judge_done(
        &mut self,
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
        let second = runs.next().map(|(run, v)| (!run.timed_out, v));
        let lead = self
            .fixed_by(&first, &first_verdict, &targeted)
            .filter(|_| match &second {
                Some((ended, v)) => *ended && matches!(v, Verdict::Green),
                None => true,
            });
        let neighbours = match second {
            Some((_, v)) if green => Some(v),
            // No passing test runs the line: nothing to break there.
            None if green => Some(Verdict::Green),
            _ => None,
        };
        let said = self
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
            spent: done.took,
            started_ms: Some(done.started_ms),
        };
        match self.judge(failure, &cand, hint, t, false)? {
            Some(after) => {
                if let Some(test) = failure.test.as_deref().filter(|_| plausible.is_empty()) {
                    super::limits::tighten_for_runners_up(self.s, test);
                }
                plausible.push(Found::new(self, cand, after, covering, size)?)
            }
            None => {
                self.cause_still_failing(said);
                if let Some(fixed) = lead {
                    self.keep_lead(&cand, fixed);
                }
            }
        }
        Ok(())
    }
}

/// Why the command's traced run gave no spectrum to localize with (the search then says so).
#[derive(Debug, thiserror::Error)]
pub(in crate::session) enum Untraced {
    #[error("the search traces a command only in command mode")]
    NotCommandMode,
    #[error(
        "the search needs selfdebug's private directory for its tracer, and none could be made"
    )]
    NoPluginDir,
    #[error(transparent)]
    Command(Untraceable),
    #[error("the traced run of the command to localize it gave nothing usable")]
    NothingUsable,
}
