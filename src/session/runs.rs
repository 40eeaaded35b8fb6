//! Every run the session makes (baseline, probe, candidates, confirming runs) goes through
//! [`Runs`]: the judge (pytest or a command), the limits, the counts and the phases' times.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::model::{Attempt, Phases};
use super::shared::now_ms;
use super::shared::Options;
use super::workspace::Workspace;
use crate::install::{self, Install};
use crate::plan::Candidate;
use crate::probe::{self, ProbeReport, ProbeRequest};
use crate::rules::Category;
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::source::{Encoding, SourceFile};
use crate::status::{Applicability, AttemptOutcome, Source};
use crate::traceback::Failure;
use crate::transform::ProbeFacts;
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

/// pytest runs, counted and timed.
pub(super) struct Runs<'a> {
    pub(super) python: Interpreter,
    pub(super) opts: &'a Options,
    pub(super) count: usize,
    pub(super) total: Duration,
    /// Per-run limit (see [`Runs::run_timeout`] for the budget's share).
    pub(super) timeout: Duration,
    pub(super) attempt_no: usize,
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
    /// `--install-missing`: every install tried (each distribution once per run).
    pub(super) installed: Vec<Install>,
    /// Command mode: the output check the last run failed, if it exited 0 and failed one.
    pub(super) last_mismatch: Option<crate::command::OutputMismatch>,
    /// The plugin's crash-frame facts from the latest baseline run.
    pub(super) facts: probe::frame_facts::Baseline,
    /// Under a narrow selection, the tests outside it (see [`super::outside`]).
    pub(super) outside: Option<super::known::Outside>,
    /// With the log given: the lazy baseline (see [`super::lazy`]) until a full run is accepted.
    pub(super) lazy: Option<super::known::Lazy>,
    /// Notes for the report (a stale log).
    pub(super) notes: Vec<String>,
    /// While the search works on a hang or a `RecursionError`: its candidates' per-test limit
    /// (see `sources/limits.rs`).
    pub(super) search_test_limit: Option<Duration>,
    /// The flaky tests found so far (see [`super::flaky`]).
    pub(super) flaky: super::known::Flaky,
}

impl<'a> Runs<'a> {
    /// Nothing run yet; the time budget counts from `started`.
    pub(super) fn new(opts: &'a Options, python: Interpreter, started: Instant) -> Runs<'a> {
        Runs {
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
            attempt_no: 0,
            deadline: started + opts.time_budget,
            baseline: Duration::ZERO,
            baseline_hung: false,
            phases: Phases::default(),
            deselect: Vec::new(),
            installed: Vec::new(),
            last_mismatch: None,
            facts: Default::default(),
            outside: None,
            lazy: None,
            notes: Vec::new(),
            search_test_limit: None,
            flaky: Default::default(),
        }
    }
}

impl Runs<'_> {
    pub(super) fn run(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        self.run_with(ws, node_ids, &[], phase)
    }

    pub(super) fn run_with(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        extra: &[&str],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        let full_confirm = phase == Phase::Confirm && node_ids.is_empty() && extra.is_empty();
        let mut spec = if full_confirm {
            self.full_spec(ws)
        } else {
            self.spec(ws, node_ids, extra)
        };
        // A baseline run records crash-frame facts (pytest only: the plugin is pytest's).
        let facts = phase == Phase::Baseline && self.opts.judge.is_none();
        if facts {
            spec.env.extend(self.facts.arm(ws.root()));
        }
        let run = self.exec(&spec, phase)?;
        if facts {
            self.facts.collect(ws.root());
        }
        if full_confirm {
            self.lazy_timed(&run);
        }
        Ok(run)
    }

    /// A confirming full run's spec: pytest-xdist when it pays, and under the lazy baseline the
    /// first full run's own limit.
    pub(super) fn full_spec(&self, ws: &dyn Workspace) -> RunSpec {
        let mut spec = self.spec(ws, &[], &[]);
        if self.opts.judge.is_none() {
            crate::xdist::add(&mut spec, &self.python, self.opts.xdist, self.baseline);
            self.lazy_full_limit(&mut spec);
        }
        spec
    }

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
    }

    /// `--install-missing` for one dependency failure: pip installs the missing module's
    /// distribution (once per run), then the judge runs the whole selection again. Returns
    /// that run's failures, or `None` when nothing was installed (not a missing module, tried
    /// before, pip failed, no verdict); `suggestion` then says why.
    pub(super) fn install_missing(
        &mut self,
        ws: &dyn Workspace,
        failure: &Failure,
        suggestion: &mut Option<String>,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        let Some(module) = install::missing_module(failure) else {
            return Ok(None);
        };
        let dist = install::distribution(&module);
        if self.installed.iter().any(|i| i.distribution == dist) {
            return Ok(None);
        }
        let done = install::pip_install(&self.python, &module, &dist, &ws.env());
        let ok = done.ok;
        let detail = done.detail.clone();
        self.installed.push(done);
        if !ok {
            *suggestion = Some(format!(
                "`python -m pip install {dist}` failed (--install-missing): {detail}"
            ));
            return Ok(None);
        }
        let run = self.run(ws, &[], Phase::Baseline)?;
        let after = self
            .read(&run, ws.root())
            .failures()
            .map(<[Failure]>::to_vec);
        if after.is_some() {
            // A full run's failures become the reference set: the lazy baseline is complete.
            self.lazy = None;
        }
        if after.is_none() {
            *suggestion = Some(format!(
                "installed {dist} (--install-missing), but the run after it gave no verdict"
            ));
        } else {
            *suggestion = Some(format!(
                "installed {dist} (--install-missing), but the failure persists: {}",
                suggestion
                    .as_deref()
                    .unwrap_or("check the project's dependencies")
            ));
        }
        Ok(after)
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

    /// `--module`: a node id pytest can select, or a bare test name matched against the
    /// collected ids (`test_x` matches `tests/a.py::test_x`, `...::TestY::test_x` and every
    /// `test_x[param]`). Nothing matching is bad input, in pytest's own words where it has some.
    pub(super) fn resolve_selection(
        &mut self,
        ws: &dyn Workspace,
        wanted: &str,
    ) -> Result<BTreeSet<String>, SessionError> {
        let is_node_id = wanted.contains("::") || wanted.contains(".py");
        let ids: Vec<String> = if is_node_id {
            vec![wanted.to_string()]
        } else {
            Vec::new()
        };
        let run = self.run_with(ws, &ids, &["--collect-only", "-q"], Phase::Selection)?;
        let collected: Vec<String> = String::from_utf8_lossy(&run.stdout)
            .lines()
            .filter(|l| l.contains("::") && !l.starts_with(' '))
            .map(|l| l.trim_end().to_string())
            .collect();
        match verdict::read(&run, ws.root()) {
            Verdict::Usage(m) => {
                return Err(SessionError::ModuleRefused {
                    module: wanted.to_string(),
                    said: m,
                })
            }
            Verdict::Error(m) => return Err(SessionError::CollectNoVerdict(m)),
            Verdict::TimedOut => return Err(SessionError::CollectTimedOut),
            _ => {}
        }
        let matched: BTreeSet<String> = collected
            .into_iter()
            .filter(|id| {
                if is_node_id {
                    return true;
                }
                let last = id.rsplit("::").next().unwrap_or(id);
                let bare = last.split('[').next().unwrap_or(last);
                last == wanted || bare == wanted || id.ends_with(&format!("::{wanted}"))
            })
            .collect();
        if matched.is_empty() {
            return Err(SessionError::ModuleMatchesNothing {
                module: wanted.to_string(),
            });
        }
        Ok(matched)
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

    pub(super) fn attempt_record(
        &mut self,
        failure: &Failure,
        category: Category,
        step: usize,
        cand: &Candidate,
        run: &PytestRun,
        llm: Option<&mut crate::llm::Llm>,
    ) -> Attempt {
        self.attempt_no += 1;
        Attempt {
            attempt: self.attempt_no,
            test: failure.test.clone(),
            step,
            category,
            file: cand.file.clone(),
            rule: cand.fix.rule.clone(),
            title: cand.fix.title.clone(),
            safe: cand.safe,
            applicability: Applicability::of(cand.safe),
            source: cand.source,
            diff: cand.diff.clone(),
            outcome: AttemptOutcome::StillFailing,
            broke: Vec::new(),
            new_failure: None,
            confirmed_by: None,
            exit_code: run.exit_code,
            stdout_tail: tail(&run.stdout, 40),
            stderr_tail: tail(&run.stderr, 40),
            timestamp_ms: now_ms(),
            duration_ms: 0,
            silencing: cand.silencing,
            search: None,
            proof: None,
            repeats: None,
            // A model's candidate carries the request and answer it came from.
            exchange: match cand.source {
                Source::Llm => llm.and_then(|l| l.pending.take()),
                _ => None,
            },
        }
    }
}

/// The probe's findings, by text range of the probed file.
pub(super) fn probe_facts(report: &ProbeReport) -> ProbeFacts {
    let source = std::fs::read(&report.path)
        .ok()
        .and_then(|b| SourceFile::from_bytes(&report.path, b).ok());
    let range = |e: &probe::ExprValue| {
        let s = source.as_ref()?;
        Some(text_offset(s, e.range[0])?..text_offset(s, e.range[1])?)
    };
    let mut facts = ProbeFacts {
        python_version: report.python_version.map(|[a, b]| (a, b)),
        scope: report.scope.clone(),
        ..ProbeFacts::default()
    };
    for e in &report.exprs {
        let Some(r) = range(e) else { continue };
        if let Some(v) = &e.value {
            facts.types.push((r.clone(), v.type_name.clone()));
        }
        if let Some(d) = &e.dir {
            facts.dirs.push((r.clone(), d.clone()));
        }
        if let Some(p) = &e.params {
            facts.params.push((r, p.clone()));
        }
    }
    facts
}

/// File byte offset → offset in the decoded text (BOM dropped; latin-1 bytes ≥ 0x80 are two
/// bytes in the text).
pub(super) fn text_offset(source: &SourceFile, byte: usize) -> Option<usize> {
    let bytes = source.bytes();
    let bom = if source.has_bom() { 3 } else { 0 };
    let body = bytes.get(bom..byte)?;
    Some(match source.encoding() {
        Encoding::Latin1 => body.iter().map(|&b| if b < 0x80 { 1 } else { 2 }).sum(),
        _ => body.len(),
    })
}

/// The last `n` lines of a run's output (the token discipline of the original design).
pub(super) fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
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
}
