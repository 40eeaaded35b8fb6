//! The attempt loop. This release runs it in dry-run mode only: everything happens in a scratch
//! copy of the project, so the user's tree is never written, not even for a moment. Candidates
//! are proven there by pytest and the proven patch is reported as a unified diff against the
//! original files.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::edit;
use crate::plan::{self, Candidate, PlanInput};
use crate::probe::{self, ProbeReport, ProbeRequest};
use crate::rules::RuleSet;
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::scratch::Scratch;
use crate::source::{Encoding, SourceFile};
use crate::traceback::{self, Failure, When};
use crate::transform::ProbeFacts;

/// What the user asked for.
pub struct Options {
    pub root: PathBuf,
    /// A pytest log to work from; without it pytest is run to find the failures.
    pub log: Option<Vec<u8>>,
    /// Only this failing test.
    pub test: Option<String>,
    /// Candidates tried per failure.
    pub max_attempts: u32,
    /// Prove candidates with pytest (false: `--no-validate`, print the top candidate).
    pub validate: bool,
    pub python: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub pytest_args: Vec<String>,
    pub allow_tests: bool,
}

/// Why the session could not run at all (exit code 2 or 6 territory).
#[derive(Debug)]
pub enum SessionError {
    BadInput(String),
    Environment(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::BadInput(m) | SessionError::Environment(m) => f.write_str(m),
        }
    }
}

/// One candidate tried on one failure.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub test: Option<String>,
    pub file: String,
    pub rule: String,
    pub title: String,
    pub safe: bool,
    pub diff: String,
    /// `accepted`, `still_failing`, `new_failures`, `timeout`, `not_validated`.
    pub outcome: &'static str,
    /// Tests that passed before and failed with this candidate.
    pub broke: Vec<String>,
    /// The failure the targeted test showed with the candidate, when it still failed.
    pub new_failure: Option<String>,
    pub duration_ms: u64,
}

/// A proven (or, with `--no-validate`, proposed) change to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Patch {
    pub file: String,
    pub rules: Vec<String>,
    pub titles: Vec<String>,
    /// Applied by `fix` only with `--unsafe-fixes` when false.
    pub safe: bool,
    pub validated: bool,
    pub diff: String,
}

/// The fate of one failure.
#[derive(Debug, Clone, Serialize)]
pub struct FailureOutcome {
    pub test: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub func: Option<String>,
    pub exc_type: String,
    pub msg: String,
    /// `fixed`, `not_fixed`, `no_candidate`, `fixed_by_earlier_patch`.
    pub status: &'static str,
    /// Why there was no candidate, when there was none.
    pub reason: Option<String>,
    pub probe: Option<ProbeReport>,
}

pub struct Report {
    pub failures: Vec<FailureOutcome>,
    pub attempts: Vec<Attempt>,
    pub patches: Vec<Patch>,
    pub pytest_runs: usize,
    pub pytest_ms: u64,
    pub duration_ms: u64,
    /// Whether the baseline had no failure at all.
    pub nothing_failed: bool,
}

/// Runs a dry run: see the module docs.
pub fn dry_run(opts: &Options) -> Result<Report, SessionError> {
    let started = Instant::now();
    let root = traceback::locate::absolute_root(&opts.root)
        .map_err(|e| SessionError::BadInput(format!("--root {}: {e}", opts.root.display())))?;
    if !root.is_dir() {
        return Err(SessionError::BadInput(format!(
            "--root {}: not a directory",
            opts.root.display()
        )));
    }
    let rules = RuleSet::load(&root).map_err(|e| SessionError::BadInput(e.to_string()))?;
    if !opts.validate {
        return propose_only(opts, &root, &rules, started);
    }
    let python = runner::find_interpreter(&root, opts.python.as_deref())
        .map_err(|e| SessionError::Environment(e.to_string()))?;
    runner::ensure_pytest(&python).map_err(|e| SessionError::Environment(e.to_string()))?;
    let scratch = Scratch::copy_of(&root).map_err(|e| {
        SessionError::Environment(format!("cannot copy the project to a scratch dir: {e}"))
    })?;
    let mut s = Runs {
        python,
        scratch: &scratch,
        opts,
        count: 0,
        total: Duration::ZERO,
    };

    let baseline = s.run(&[])?;
    let baseline_failures = failing_set(&baseline.log(), scratch.root());
    let targets: Vec<Failure> = match &opts.log {
        Some(bytes) => {
            traceback::parse(bytes, &root)
                .map_err(|e| SessionError::BadInput(format!("log: {e}")))?
                .failures
        }
        None => traceback::parse(&baseline.log(), scratch.root())
            .map(|p| p.failures)
            .unwrap_or_default(),
    };
    let targets: Vec<Failure> = targets
        .into_iter()
        .filter(|f| {
            opts.test
                .as_ref()
                .is_none_or(|t| f.test.as_ref() == Some(t))
        })
        .collect();
    let nothing_failed = targets.is_empty() && baseline_failures.is_empty();

    let mut current_failures = baseline_failures;
    let mut outcomes = Vec::new();
    let mut attempts = Vec::new();
    let mut accepted: Vec<Candidate> = Vec::new();
    for failure in &targets {
        let mut outcome = outcome_of(failure);
        if let Some(test) = &failure.test {
            if !accepted.is_empty() && !current_failures.iter().any(|(t, _)| t == test) {
                outcome.status = "fixed_by_earlier_patch";
                outcomes.push(outcome);
                continue;
            }
        }
        let report = s.probe(failure);
        let facts = report.as_ref().map(probe_facts);
        outcome.probe = report;
        let candidates = match plan::plan(&PlanInput {
            root: scratch.root(),
            failure,
            rules: &rules,
            probe: facts.as_ref(),
            allow_tests: opts.allow_tests,
        }) {
            Ok(c) if c.is_empty() => {
                outcome.reason =
                    Some("the matching rules proposed nothing that applies here".into());
                outcomes.push(outcome);
                continue;
            }
            Ok(c) => c,
            Err(e) => {
                outcome.reason = Some(e.to_string());
                outcomes.push(outcome);
                continue;
            }
        };
        outcome.status = "not_fixed";
        for cand in candidates.into_iter().take(opts.max_attempts as usize) {
            let (attempt, new_failures) = s.try_candidate(failure, &cand, &current_failures)?;
            let ok = attempt.outcome == "accepted";
            attempts.push(attempt);
            if ok {
                current_failures = new_failures;
                accepted.push(cand);
                outcome.status = "fixed";
                break;
            }
        }
        outcomes.push(outcome);
    }
    let patches = combine(&root, &scratch, &accepted);
    Ok(Report {
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: s.count,
        pytest_ms: s.total.as_millis() as u64,
        duration_ms: started.elapsed().as_millis() as u64,
        nothing_failed,
    })
}

/// `--no-validate`: the top candidate of each failure in the log, nothing run.
fn propose_only(
    opts: &Options,
    root: &Path,
    rules: &RuleSet,
    started: Instant,
) -> Result<Report, SessionError> {
    let Some(bytes) = &opts.log else {
        return Err(SessionError::BadInput(
            "--no-validate runs nothing, so it needs a pytest log (LOG or -)".into(),
        ));
    };
    let parsed =
        traceback::parse(bytes, root).map_err(|e| SessionError::BadInput(format!("log: {e}")))?;
    let mut outcomes = Vec::new();
    let mut attempts = Vec::new();
    let mut patches = Vec::new();
    for failure in parsed.failures.iter().filter(|f| {
        opts.test
            .as_ref()
            .is_none_or(|t| f.test.as_ref() == Some(t))
    }) {
        let mut outcome = outcome_of(failure);
        match plan::plan(&PlanInput {
            root,
            failure,
            rules,
            probe: None,
            allow_tests: opts.allow_tests,
        }) {
            Ok(c) => match c.into_iter().next() {
                Some(top) => {
                    outcome.status = "not_validated";
                    attempts.push(Attempt {
                        test: failure.test.clone(),
                        file: top.file.clone(),
                        rule: top.fix.rule.clone(),
                        title: top.fix.title.clone(),
                        safe: top.safe,
                        diff: top.diff.clone(),
                        outcome: "not_validated",
                        broke: Vec::new(),
                        new_failure: None,
                        duration_ms: 0,
                    });
                    patches.push(Patch {
                        file: top.file,
                        rules: vec![top.fix.rule],
                        titles: vec![top.fix.title],
                        safe: top.safe,
                        validated: false,
                        diff: top.diff,
                    });
                }
                None => {
                    outcome.reason =
                        Some("the matching rules proposed nothing that applies here".into())
                }
            },
            Err(e) => outcome.reason = Some(e.to_string()),
        }
        outcomes.push(outcome);
    }
    Ok(Report {
        nothing_failed: parsed.failures.is_empty(),
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: 0,
        pytest_ms: 0,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

/// pytest runs in the scratch copy, counted and timed.
struct Runs<'a> {
    python: Interpreter,
    scratch: &'a Scratch,
    opts: &'a Options,
    count: usize,
    total: Duration,
}

impl Runs<'_> {
    fn env(&self) -> Vec<(OsString, OsString)> {
        vec![("PYTHONPATH".into(), self.scratch.pythonpath().into())]
    }

    fn timeout(&self) -> Duration {
        self.opts.timeout.unwrap_or(runner::DEFAULT_TIMEOUT)
    }

    fn run(&mut self, node_ids: &[String]) -> Result<PytestRun, SessionError> {
        let mut spec = RunSpec::new(self.scratch.root());
        spec.node_ids = node_ids.to_vec();
        spec.extra_args = self.opts.pytest_args.clone();
        spec.env = self.env();
        spec.timeout = self.timeout();
        let run = runner::run_pytest(&self.python, &spec)
            .map_err(|e| SessionError::Environment(e.to_string()))?;
        self.count += 1;
        self.total += run.duration;
        Ok(run)
    }

    fn probe(&mut self, failure: &Failure) -> Option<ProbeReport> {
        failure.test.as_ref()?;
        let report = probe::probe(&ProbeRequest {
            project_dir: self.scratch.root(),
            failure,
            interpreter: &self.python,
            timeout: self.timeout(),
            env: self.env(),
            pytest_args: self.opts.pytest_args.clone(),
            test: None,
        });
        self.count += 1;
        match report {
            Ok(r) => {
                self.total += Duration::from_millis(r.test_outcome.duration_ms);
                Some(r)
            }
            Err(_) => None,
        }
    }

    /// Writes the candidate into the scratch copy, runs the failing test, then the whole suite;
    /// restores the scratch file unless accepted. Returns the attempt and the suite's failing
    /// set with the candidate.
    fn try_candidate(
        &mut self,
        failure: &Failure,
        cand: &Candidate,
        before: &BTreeSet<(String, When)>,
    ) -> Result<(Attempt, BTreeSet<(String, When)>), SessionError> {
        let started = Instant::now();
        let write = |bytes: &[u8]| {
            std::fs::write(&cand.path, bytes).map_err(|e| {
                SessionError::Environment(format!(
                    "cannot write the scratch copy {}: {e}",
                    cand.path.display()
                ))
            })
        };
        write(&cand.patched)?;
        let mut attempt = Attempt {
            test: failure.test.clone(),
            file: cand.file.clone(),
            rule: cand.fix.rule.clone(),
            title: cand.fix.title.clone(),
            safe: cand.safe,
            diff: cand.diff.clone(),
            outcome: "still_failing",
            broke: Vec::new(),
            new_failure: None,
            duration_ms: 0,
        };
        let targeted: Vec<String> = failure.test.iter().cloned().collect();
        let first = self.run(&targeted)?;
        let mut after = BTreeSet::new();
        if first.timed_out {
            attempt.outcome = "timeout";
        } else if first.passed() {
            let suite = self.run(&[])?;
            after = failing_set(&suite.log(), self.scratch.root());
            let broke: Vec<String> = after
                .iter()
                .filter(|f| !before.contains(f))
                .map(|(t, _)| t.clone())
                .collect();
            if suite.timed_out {
                attempt.outcome = "timeout";
            } else if broke.is_empty() {
                attempt.outcome = "accepted";
            } else {
                attempt.outcome = "new_failures";
                attempt.broke = broke;
            }
        } else if let Ok(p) = traceback::parse(&first.log(), self.scratch.root()) {
            attempt.new_failure = p
                .failures
                .first()
                .map(|f| format!("{}: {}", f.exc_type, f.msg.lines().next().unwrap_or("")));
        }
        if attempt.outcome != "accepted" {
            write(&cand.original)?;
        }
        attempt.duration_ms = started.elapsed().as_millis() as u64;
        Ok((attempt, after))
    }
}

/// The (test, phase) pairs that failed in a run.
fn failing_set(log: &[u8], root: &Path) -> BTreeSet<(String, When)> {
    traceback::parse(log, root)
        .map(|p| {
            p.failures
                .into_iter()
                .map(|f| {
                    (
                        f.test.unwrap_or_else(|| f.headline.unwrap_or_default()),
                        f.when,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn outcome_of(failure: &Failure) -> FailureOutcome {
    FailureOutcome {
        test: failure.test.clone(),
        file: failure.location.as_ref().map(|l| l.file.clone()),
        line: failure.location.as_ref().map(|l| l.line),
        func: failure.location.as_ref().and_then(|l| l.func.clone()),
        exc_type: failure.exc_type.clone(),
        msg: failure.msg.clone(),
        status: "no_candidate",
        reason: None,
        probe: None,
    }
}

/// The probe's sub-expression types, by text range of the probed file.
fn probe_facts(report: &ProbeReport) -> ProbeFacts {
    let source = std::fs::read(&report.path)
        .ok()
        .and_then(|b| SourceFile::from_bytes(&report.path, b).ok());
    let types = report
        .exprs
        .iter()
        .filter_map(|e| {
            let v = e.value.as_ref()?;
            let start = text_offset(source.as_ref()?, e.range[0])?;
            let end = text_offset(source.as_ref()?, e.range[1])?;
            Some((start..end, v.type_name.clone()))
        })
        .collect();
    ProbeFacts { types }
}

/// File byte offset → offset in the decoded text (BOM dropped; latin-1 bytes ≥ 0x80 are two
/// bytes in the text).
fn text_offset(source: &SourceFile, byte: usize) -> Option<usize> {
    let bytes = source.bytes();
    let bom = if source.has_bom() { 3 } else { 0 };
    let body = bytes.get(bom..byte)?;
    Some(match source.encoding() {
        Encoding::Latin1 => body.iter().map(|&b| if b < 0x80 { 1 } else { 2 }).sum(),
        _ => body.len(),
    })
}

/// One patch per file: the original bytes against the scratch copy's final bytes.
fn combine(root: &Path, scratch: &Scratch, accepted: &[Candidate]) -> Vec<Patch> {
    let mut by_file: BTreeMap<&str, Vec<&Candidate>> = BTreeMap::new();
    for c in accepted {
        by_file.entry(c.file.as_str()).or_default().push(c);
    }
    let mut out = Vec::new();
    for (file, cands) in by_file {
        let (Ok(original), Ok(patched)) = (
            SourceFile::read(root.join(file)),
            SourceFile::read(scratch.root().join(file)),
        ) else {
            continue;
        };
        out.push(Patch {
            file: file.to_string(),
            rules: cands.iter().map(|c| c.fix.rule.clone()).collect(),
            titles: cands.iter().map(|c| c.fix.title.clone()).collect(),
            safe: cands.iter().all(|c| c.safe),
            validated: true,
            diff: edit::unified_diff(file, original.text(), patched.text()),
        });
    }
    out
}
