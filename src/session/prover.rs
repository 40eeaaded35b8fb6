//! The prover: every run the session makes (baseline, probe, candidates, confirming runs)
//! goes through it. It knows the judge (pytest or a command), the limits and the deadline, and
//! counts and times the runs by phase: "run these tests against this tree state and tell me
//! the verdict". What the runs teach the session (crash facts, the lazy baseline, flaky tests)
//! is held above it, in [`super::runs::Runs`].

use std::path::Path;
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::model::{Phases, ProofRun, ProofStage};
use super::shared::Options;
use super::workspace::Workspace;
use crate::probe::{self, ProbeReport, ProbeRequest};
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::traceback::Failure;
use crate::verdict::{self, Verdict};

/// Which phase a pytest run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Selection,
    Baseline,
    Probe,
    Candidate,
    Confirm,
}

impl Phase {
    pub(super) fn trace_label(self) -> &'static str {
        match self {
            Phase::Selection => "run: selection",
            Phase::Baseline => "run: baseline",
            Phase::Probe => "run: probe",
            Phase::Candidate => "run: candidate",
            Phase::Confirm => "run: confirm",
        }
    }
}

/// pytest (or the command) runs, counted and timed.
pub(super) struct Prover<'a> {
    pub(super) python: Interpreter,
    pub(super) opts: &'a Options,
    pub(super) count: usize,
    pub(super) total: Duration,
    /// Per-run limit (see [`Prover::run_timeout`] for the budget's share).
    pub(super) timeout: Duration,
    /// When the time budget ends.
    pub(super) deadline: Instant,
    /// How long the baseline took: what a confirming full run is expected to cost.
    pub(super) baseline: Duration,
    /// Command mode: the baseline hung (and was located), so its duration says nothing about
    /// how long a working run takes; search candidates get a fixed short limit instead.
    pub(super) baseline_hung: bool,
    pub(super) phases: Phases,
    /// Tests left out of every run (`--deselect`): they hung beyond the per-test timer.
    pub(super) deselect: Vec<String>,
    /// Command mode: the output check the last run failed, if it exited 0 and failed one.
    pub(super) last_mismatch: Option<crate::command::OutputMismatch>,
    /// While the search works on a hang or a `RecursionError`: its candidates' per-test limit
    /// (see `sources/limits.rs`).
    pub(super) search_test_limit: Option<Duration>,
    /// Every candidate and confirming run made, in order: an accepted attempt's proof is the
    /// part made while it was tried (see [`Prover::proof_since`]).
    pub(super) proof_log: Vec<ProofRun>,
}

impl<'a> Prover<'a> {
    /// Nothing run yet; the time budget counts from `started`.
    pub(super) fn new(opts: &'a Options, python: Interpreter, started: Instant) -> Prover<'a> {
        Prover {
            python,
            opts,
            count: 0,
            total: Duration::ZERO,
            timeout: opts.timeout.unwrap_or(if opts.judge.is_some() {
                // Command mode: the command is the one "test", under the per-test limit.
                opts.test_timeout
            } else {
                runner::DEFAULT_TIMEOUT
            }),
            deadline: started + opts.time_budget,
            baseline: Duration::ZERO,
            baseline_hung: false,
            phases: Phases::default(),
            deselect: Vec::new(),
            last_mismatch: None,
            search_test_limit: None,
            proof_log: Vec::new(),
        }
    }
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

impl Prover<'_> {
    /// The one place a judge run's spec is made (every run of the loop, the search's too):
    /// `extra`, then the user's pytest arguments, the hung tests deselected, the workspace's
    /// environment, the run's share of the time budget, the sandbox. Callers narrow it after
    /// (a candidate's shorter per-test limit, the coverage plugin).
    pub(super) fn spec(&self, ws: &dyn Workspace, node_ids: &[String], extra: &[&str]) -> RunSpec {
        self.spec_with_args(ws, node_ids, extra, &self.opts.pytest_args)
    }

    /// [`Runs::spec`] with `args` in place of the user's pytest arguments (their widened form).
    pub(super) fn spec_with_args(
        &self,
        ws: &dyn Workspace,
        node_ids: &[String],
        extra: &[&str],
        args: &[String],
    ) -> RunSpec {
        let mut spec = RunSpec::new(ws.root());
        spec.node_ids = node_ids.to_vec();
        spec.extra_args = extra.iter().map(|s| s.to_string()).collect();
        spec.extra_args.extend(args.iter().cloned());
        // A timed-out test the model works on is selected for its own targeted run.
        for t in self.deselect.iter().filter(|t| !node_ids.contains(t)) {
            spec.extra_args
                .extend(["--deselect".to_string(), t.clone()]);
        }
        spec.env = ws.env();
        spec.timeout = self.run_timeout();
        spec.test_timeout = Some(self.test_limit(spec.timeout));
        // Every judge run is sandboxed when asked for.
        spec.sandbox = self.opts.sandbox.clone();
        spec.warm = self.opts.worker == crate::worker::Mode::Auto;
        spec
    }

    /// Runs `spec` with the judge (the command, or pytest), counted and timed under `phase`.
    pub(super) fn exec(&mut self, spec: &RunSpec, phase: Phase) -> Result<PytestRun, SessionError> {
        let Some(judge) = &self.opts.judge else {
            return self.exec_pytest(spec, phase);
        };
        let _t = crate::trace_times::span(phase.trace_label());
        let run = judge
            .run(&self.python, spec)
            .map_err(SessionError::Runner)?;
        self.last_mismatch = (run.exit_code == Some(0) && !run.timed_out)
            .then(|| judge.mismatch(&run))
            .flatten();
        self.tally(phase, &run);
        Ok(run)
    }

    /// Runs `spec` with pytest whatever the judge (the search's runs), counted and timed.
    pub(super) fn exec_pytest(
        &mut self,
        spec: &RunSpec,
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        let _t = crate::trace_times::span(phase.trace_label());
        let run = runner::run_pytest(&self.python, spec).map_err(SessionError::Runner)?;
        self.tally(phase, &run);
        Ok(run)
    }

    pub(super) fn tally(&mut self, phase: Phase, run: &PytestRun) {
        self.count += 1;
        self.total += run.duration;
        self.add_phase(phase, run.duration);
        self.log_proof(phase, run);
    }

    /// A candidate's or a confirming run in [`Prover::proof_log`] (other phases prove nothing).
    pub(super) fn log_proof(&mut self, phase: Phase, run: &PytestRun) {
        if let Some(r) = self.proof_run(phase, run) {
            self.proof_log.push(r);
        }
    }

    /// A candidate's or a confirming run as a proof's record; `None` for other phases.
    pub(super) fn proof_run(&self, phase: Phase, run: &PytestRun) -> Option<ProofRun> {
        let stage = match phase {
            Phase::Candidate => ProofStage::Targeted,
            Phase::Confirm
                if run.node_ids.is_empty() && !run.args.iter().any(|a| a == "--deselect") =>
            {
                ProofStage::Full
            }
            Phase::Confirm => ProofStage::Covering,
            _ => return None,
        };
        let command = if self.opts.judge.is_some() {
            run.args.clone()
        } else {
            [
                self.python.path.to_string_lossy().into_owned(),
                "-m".into(),
                "pytest".into(),
            ]
            .into_iter()
            .chain(run.args.iter().cloned())
            .collect()
        };
        let stats = if self.opts.judge.is_some() {
            None
        } else {
            crate::traceback::pytest_session::stats(&String::from_utf8_lossy(&run.stdout))
        }
        .unwrap_or_default();
        Some(ProofRun {
            stage,
            command,
            exit_code: run.exit_code,
            passed: stats.passed,
            failed: stats.failed,
            deselected: stats.deselected,
        })
    }

    /// A search candidate's run of its passing neighbours (the passing tests that run the
    /// edited line) as a proof's record: a `covering` run.
    pub(in crate::session) fn covering_proof(&self, run: &PytestRun) -> Option<ProofRun> {
        let mut r = self.proof_run(Phase::Candidate, run)?;
        r.stage = ProofStage::Covering;
        Some(r)
    }

    /// The runs logged since `mark` (a length of [`Prover::proof_log`]).
    pub(super) fn proof_since(&self, mark: usize) -> Vec<ProofRun> {
        self.proof_log.get(mark..).unwrap_or_default().to_vec()
    }

    /// What a run of the judge says: pytest's verdict, or the command's.
    pub(super) fn read(&self, run: &PytestRun, root: &Path) -> Verdict {
        let _t = crate::trace_times::span("verdict read (output parsed)");
        match &self.opts.judge {
            Some(judge) => judge.verdict(run, root),
            None => verdict::read(run, root),
        }
    }

    pub(super) fn add_phase(&mut self, phase: Phase, d: Duration) {
        let ms = d.as_millis() as u64;
        let p = &mut self.phases;
        match phase {
            Phase::Selection => p.selection_ms += ms,
            Phase::Baseline => p.baseline_ms += ms,
            Phase::Probe => p.probe_ms += ms,
            Phase::Candidate => p.candidates_ms += ms,
            Phase::Confirm => p.confirm_ms += ms,
        }
    }

    /// The per-test limit for a run limited to `run`: `--test-timeout`, but always well inside
    /// the run's own limit (a quarter of it, and at least 10 s for pytest to start and report),
    /// so that a hang fails one test instead of killing the whole run.
    pub(super) fn test_limit(&self, run: Duration) -> Duration {
        let margin = (run / 4).max(Duration::from_secs(10));
        let inside = run.saturating_sub(margin).max(run / 4);
        self.opts
            .test_timeout
            .min(inside)
            .max(Duration::from_millis(500))
    }

    /// The option that set the per-run limit (for messages): `--timeout` when given, else in
    /// command mode `--test-timeout` (the command's own limit; see [`Runs::new`]).
    pub(super) fn timeout_flag(&self) -> &'static str {
        if self.opts.timeout.is_none() && self.opts.judge.is_some() {
            "--test-timeout"
        } else {
            "--timeout"
        }
    }

    /// Command mode's baseline: one run of the command under the wrapper that raises where it
    /// is stuck when the per-run limit is up (see [`crate::command::CommandJudge::run_hang`]),
    /// so a hang is located by the run that found it and costs one limit, not a killed run and
    /// a rerun. `None` when the command cannot be run that way (not `python SCRIPT` /
    /// `python -m`, no private directory): the caller runs it plainly.
    pub(super) fn command_baseline(
        &mut self,
        ws: &dyn Workspace,
    ) -> Result<Option<PytestRun>, SessionError> {
        let (Some(judge), Some(dir)) = (self.opts.judge.as_ref(), crate::plugin::dir()) else {
            return Ok(None);
        };
        let limit = self.run_timeout();
        let mut spec = self.spec(ws, &[], &[]);
        // Room for the timer's exception to unwind and the traceback to be printed.
        spec.timeout = limit + Duration::from_secs(10);
        let flag = self.timeout_flag();
        let _t = crate::trace_times::span(Phase::Baseline.trace_label());
        Ok(
            match judge.run_hang(&self.python, &spec, dir, limit, flag) {
                Ok(run) => {
                    self.last_mismatch = (run.exit_code == Some(0) && !run.timed_out)
                        .then(|| judge.mismatch(&run))
                        .flatten();
                    self.tally(Phase::Baseline, &run);
                    Some(run)
                }
                Err(crate::command::WrappedRunError::Runner(e)) => {
                    return Err(SessionError::Runner(e))
                }
                Err(crate::command::WrappedRunError::Untraceable(_)) => None,
            },
        )
    }

    /// The per-run limit, cut to what is left of the time budget (a run never outlives it).
    pub(super) fn run_timeout(&self) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        self.timeout.min(left.max(Duration::from_secs(1)))
    }

    pub(super) fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Whether a candidate's targeted run and confirming full run fit in what is left.
    pub(super) fn time_for_a_candidate(&self) -> bool {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left > self.baseline * 2 + Duration::from_secs(1)
    }

    pub(super) fn probe(&mut self, ws: &dyn Workspace, failure: &Failure) -> Option<ProbeReport> {
        if self.opts.judge.is_none() {
            failure.test.as_ref()?;
        }
        let opts = self.opts;
        let python = &self.python;
        // The probe's run is a judge run like any other: the command, or pytest.
        let run = |spec: &RunSpec| {
            let mut spec = spec.clone();
            spec.sandbox = opts.sandbox.clone();
            // Like every other run: in a child of the warm worker when it serves (the probe is
            // in the file, which the child imports fresh; its output path is in the env).
            spec.warm = opts.worker == crate::worker::Mode::Auto;
            match &opts.judge {
                Some(judge) => judge.run(python, &spec),
                None => runner::run_pytest(python, &spec),
            }
        };
        let report = probe::probe_with(
            &ProbeRequest {
                project_dir: ws.root(),
                failure,
                interpreter: &self.python,
                timeout: self.run_timeout(),
                test_timeout: Some(self.test_limit(self.run_timeout())),
                env: ws.env(),
                pytest_args: self.opts.pytest_args.clone(),
                // A command's failure names no test: the command is what runs.
                test: opts.judge.as_ref().map(|j| j.headline()),
                // The journal or the scratch copy holds the original.
                backup: false,
            },
            &run,
        );
        match report {
            Ok(r) => {
                let d = Duration::from_millis(r.test_outcome.duration_ms);
                self.count += 1;
                self.total += d;
                self.add_phase(Phase::Probe, d);
                Some(r)
            }
            Err(_) => None,
        }
    }

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
}
