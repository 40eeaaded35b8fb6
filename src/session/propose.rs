//! `fix --no-validate`: the top candidate of each failure in the log, nothing run.

use std::path::Path;
use std::time::Instant;

use super::attempt_loop::judge_name;
use super::error::SessionError;
use super::model::{outcome_of, Attempt, Patch, PatchStep, Phases, Report};
use super::shared::Options;
use super::shared::{excluded, now_ms, review_notes, run_id};
use crate::plan::{self, Candidate, PlanInput};
use crate::rules::{Category, RuleSet};
use crate::status::{Applicability, AttemptOutcome, FailureStatus};
use crate::traceback::{self, Failure};
use crate::transform::stdlib::Stdlib;
use crate::{category, runner};

/// `--no-validate`: the top candidate of each failure in the log, nothing run.
pub(super) fn propose_only(
    opts: &Options,
    root: &Path,
    rules: &RuleSet,
    started: Instant,
) -> Result<Report, SessionError> {
    let Some(bytes) = &opts.log else {
        return Err(SessionError::NoValidateWithoutLog);
    };
    let parsed = traceback::parse(bytes, root).map_err(SessionError::Log)?;
    let mut outcomes = Vec::new();
    let mut attempts = Vec::new();
    let mut patches = Vec::new();
    // Nothing is run, but the interpreter may still be asked what its standard library holds;
    // one that cannot be found leaves the small fallback list.
    let stdlib = match runner::find_interpreter(root, opts.python.as_deref()) {
        Ok(python) => Stdlib::new(python),
        Err(_) => Stdlib::unavailable(),
    };
    for failure in parsed.failures.iter().filter(|f| {
        opts.test
            .as_ref()
            .is_none_or(|t| f.test.as_ref() == Some(t))
    }) {
        let (category, suggestion) = category::categorize(failure, root);
        let mut outcome = outcome_of(failure, category);
        if matches!(category, Category::Environment | Category::Dependency) {
            outcome.status = FailureStatus::Escalated;
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        if let Some(why) = failure
            .location
            .as_ref()
            .and_then(|l| excluded(opts, &l.file))
        {
            outcome.reason = Some(why);
            outcomes.push(outcome);
            continue;
        }
        let planned = plan::plan(&PlanInput {
            root,
            failure,
            rules,
            probe: None,
            allow_tests: opts.allow_tests,
            stdlib: &stdlib,
        })
        .map(|mut c| {
            c.retain(|c| excluded(opts, &c.file).is_none());
            c
        });
        match planned {
            Ok(c) => match c.into_iter().find(|c| c.safe || !opts.safe_only) {
                Some(top) => {
                    outcome.status = FailureStatus::NotValidated;
                    attempts.push(proposed(attempts.len() + 1, failure, category, &top));
                    patches.push(proposed_patch(top, rules));
                }
                None => {
                    outcome.status = FailureStatus::SkippedUnsafe;
                    outcome.reason =
                        Some("only unsafe rules have candidates, and --safe-only was given".into());
                }
            },
            Err(e) => outcome.reason = Some(e.to_string()),
        }
        outcomes.push(outcome);
    }
    let mut report = Report {
        interpreter: None,
        nothing_failed: parsed.failures.is_empty(),
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: 0,
        pytest_ms: 0,
        duration_ms: 0,
        rollback: false,
        dry_run: true,
        validated: false,
        run_id: run_id(),
        backups: Vec::new(),
        phases: Phases::default(),
        root: opts.root.path().to_string_lossy().into_owned(),
        notes: opts.notes.clone(),
        out_of_time: false,
        judge: judge_name(opts),
        command: opts.judge.as_ref().map(|j| j.line.clone()),
        installed: Vec::new(),
        llm: None,
        groups: Vec::new(),
        causes: Vec::new(),
        fixes: Vec::new(),
    };
    report.finish(started);
    Ok(report)
}

/// The attempt record of a candidate proposed and not run.
fn proposed(attempt: usize, failure: &Failure, category: Category, top: &Candidate) -> Attempt {
    Attempt {
        attempt,
        test: failure.test.clone(),
        step: 0,
        category,
        file: top.file.clone(),
        rule: top.fix.rule.clone(),
        title: top.fix.title.clone(),
        safe: top.safe,
        applicability: Applicability::of(top.safe),
        source: top.source,
        diff: top.diff.clone(),
        outcome: AttemptOutcome::NotValidated,
        broke: Vec::new(),
        new_failure: None,
        confirmed_by: None,
        exit_code: None,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        timestamp_ms: now_ms(),
        duration_ms: 0,
        silencing: top.silencing,
        search: None,
        proof: None,
        repeats: None,
        proven_by: Vec::new(),
        exchange: None,
    }
}

/// The patch of a candidate proposed and not run.
fn proposed_patch(top: Candidate, rules: &RuleSet) -> Patch {
    let review = review_notes(rules, std::slice::from_ref(&top.fix.rule));
    Patch {
        file: top.file,
        steps: vec![PatchStep {
            rule: top.fix.rule.clone(),
            title: top.fix.title.clone(),
            safe: top.safe,
            review: review.clone(),
            diff: top.diff.clone(),
        }],
        review,
        rules: vec![top.fix.rule],
        titles: vec![top.fix.title],
        safe: top.safe,
        applicability: Applicability::of(top.safe),
        source: top.source,
        validated: false,
        diff: top.diff,
        diff_encoding: top.diff_encoding,
        alternatives: Vec::new(),
        proven_by: Vec::new(),
        kept_for: Vec::new(),
        bytes: None,
    }
}
