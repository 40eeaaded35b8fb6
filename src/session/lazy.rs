//! The lazy baseline (issue 23, item 2). With the failing log given (`fix --log FILE`), the log
//! already names the failing tests: a **targeted** run of them on the original bytes reproduces
//! them (and records the crash-frame facts a baseline records), instead of a full baseline run.
//! A log that the reproduction contradicts (a test passes now, or fails with another exception
//! or at another place) is stale: the full baseline runs as without the log, and a note says so.
//!
//! What a full baseline would have known besides, the tests that fail outside the log, is
//! learnt when it matters: a test that fails in a confirming full run and is not among the
//! reference set is run again on the original bytes (the touched files written back to their
//! journaled originals for one targeted run, then to the candidates' bytes) before the
//! candidate is rejected. Failing there too, it failed before and does not count against the
//! candidate, exactly as the full baseline would have judged. A re-run that gives no verdict
//! falls back to a full run on the original bytes; one that gives none either teaches nothing,
//! and the candidate keeps today's verdict (rejected).
//!
//! Once a confirming full run is accepted its failures are the complete reference set, and the
//! run goes on as with a full baseline.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::judge::{judge_full_run, FullRun};
use super::known::Lazy;
use super::prover::Phase;
use super::runs::Runs;
use super::shared::Options;
use super::shared::{failure_key, failure_keys, is_conftest};
use super::workspace::Workspace;
use crate::runner::{self, PytestRun, RunSpec};
use crate::traceback::{Failure, When};
use crate::verdict::Verdict;

/// The node id pytest selects a failure's test by: a subtest (`t.py::test_x [label]`, unittest's
/// `(label)`) runs as its owning test.
pub(super) fn node_id(test: &str) -> &str {
    let cut = test
        .find(" [")
        .into_iter()
        .chain(test.find(" ("))
        .min()
        .unwrap_or(test.len());
    &test[..cut]
}

/// `SELFDEBUG_BASELINE=full`: the full baseline even with the log given (to compare, or
/// should a lazy verdict ever be in doubt; docs/performance.md).
const FULL_BASELINE_ENV: &str = "SELFDEBUG_BASELINE";

/// Why the log's failures are not reproduced by a targeted run (the full baseline then runs).
fn ineligible(opts: &Options, log: &[Failure]) -> Option<&'static str> {
    if std::env::var_os(FULL_BASELINE_ENV).is_some_and(|v| v == "full") {
        return Some("SELFDEBUG_BASELINE=full");
    }
    if opts.judge.is_some() {
        return Some("command mode");
    }
    if opts.test.is_some() {
        // --module: the tests outside the selection are collected from the full baseline.
        return Some("a narrow selection");
    }
    if log.is_empty() {
        return Some("the log names no failure");
    }
    if log.iter().any(|f| f.test.is_none()) {
        return Some("a failure without a test id");
    }
    if log.iter().any(is_conftest) {
        return Some("a conftest that does not import");
    }
    if log.iter().any(|f| f.exc_type == crate::plugin::TIMEOUT_EXC) {
        return Some("a test that hung");
    }
    None
}

/// How the reproduction differs from the log, if it does: a failure of the log that does not
/// fail now, one that fails with another exception or at another place, a new one.
pub(super) fn differs(log: &[Failure], now: &[Failure]) -> Option<String> {
    let mut now_by_key: BTreeMap<(String, When), &Failure> = BTreeMap::new();
    for f in now {
        now_by_key.entry(failure_key(f)).or_insert(f);
    }
    let place = |f: &Failure| {
        f.location
            .as_ref()
            .map(|l| format!("{}:{}", l.file, l.line))
    };
    let mut log_keys = BTreeSet::new();
    for f in log {
        let key = failure_key(f);
        let Some(n) = now_by_key.get(&key) else {
            return Some(format!("{} does not fail now", key.0));
        };
        if n.exc_type != f.exc_type {
            return Some(format!(
                "{} fails with {} now, the log says {}",
                key.0, n.exc_type, f.exc_type
            ));
        }
        if place(n) != place(f) {
            let show = |p: Option<String>| p.unwrap_or_else(|| "no located line".into());
            return Some(format!(
                "{} fails at {} now, the log says {}",
                key.0,
                show(place(n)),
                show(place(f))
            ));
        }
        log_keys.insert(key);
    }
    now_by_key
        .keys()
        .find(|k| !log_keys.contains(*k))
        .map(|k| format!("{} fails now and is not in the log", k.0))
}

/// With the log given: its failing tests run alone on the original bytes. Their failures when
/// they reproduce the log exactly (the lazy baseline is then on); `None` when the full baseline
/// must run (not eligible, or the log is stale: a note says why).
pub(super) fn reproduce(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    log: &[Failure],
) -> Result<Option<Vec<Failure>>, SessionError> {
    if ineligible(s.opts, log).is_some() {
        return Ok(None);
    }
    let mut ids: Vec<String> = Vec::new();
    for f in log {
        let id = node_id(f.test.as_deref().unwrap_or_default()).to_string();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    crate::progress::phase("reproducing the log's failures (targeted baseline)");
    let run = s.run(ws, &ids, Phase::Baseline)?;
    let full = |s: &mut Runs, note: String| {
        s.notes
            .push(format!("{note}: the whole suite was run as the baseline"));
        Ok(None)
    };
    if run.hang.is_some() {
        return full(s, "the log's failing tests hung when run alone".into());
    }
    let now = match s.prover.read(&run, ws.root()) {
        Verdict::Green => Vec::new(),
        Verdict::Failed(f) => f,
        other => {
            return full(
                s,
                format!(
                    "the log's failing tests gave no verdict when run alone ({})",
                    other.describe()
                ),
            )
        }
    };
    if let Some(why) = differs(log, &now) {
        return full(s, format!("the log is stale ({why})"));
    }
    s.prover.baseline = run.duration;
    if s.opts.timeout.is_none() {
        // As the full baseline sets it; raised by the first full run (see `Runs::run_with`).
        s.prover.timeout =
            (run.duration * 10).clamp(Duration::from_secs(30), runner::DEFAULT_TIMEOUT);
    }
    s.lazy = Some(Lazy::default());
    Ok(Some(now))
}

impl Runs<'_> {
    /// Lazy baseline, before a full run: the limit a full run gets while none has been timed
    /// (the targeted reproduction says nothing of how long the whole suite takes).
    pub(super) fn lazy_full_limit(&self, spec: &mut RunSpec) {
        if self.lazy.as_ref().is_some_and(|l| !l.timed) && self.opts.timeout.is_none() {
            let left = self
                .prover
                .deadline
                .saturating_duration_since(Instant::now());
            spec.timeout = runner::DEFAULT_TIMEOUT.min(left.max(Duration::from_secs(1)));
        }
    }

    /// Lazy baseline, after a full run that finished: its duration is what the full baseline's
    /// would have been, for the per-run limit and the expected cost of a confirming run.
    pub(super) fn lazy_timed(&mut self, run: &PytestRun) {
        let Some(lazy) = self.lazy.as_mut().filter(|l| !l.timed) else {
            return;
        };
        if run.timed_out {
            return;
        }
        lazy.timed = true;
        self.prover.baseline = self.prover.baseline.max(run.duration);
        if self.opts.timeout.is_none() {
            self.prover.timeout =
                (self.prover.baseline * 10).clamp(Duration::from_secs(30), runner::DEFAULT_TIMEOUT);
        }
    }

    /// [`judge_full_run`] with the lazy baseline: a failure outside the reference set (and not
    /// already known either way) is run on the original bytes before it counts as breakage.
    /// Without the lazy baseline, exactly [`judge_full_run`].
    ///
    /// Known flaky tests decide nothing (see [`super::flaky`]); a test that passed in the
    /// baseline and fails now is run on the original code before it counts as breakage, and
    /// failing there too it is flaky, not the candidates' doing.
    pub(super) fn judge_full(
        &mut self,
        ws: &mut dyn Workspace,
        verdict: Verdict,
        current: &BTreeSet<(String, When)>,
        fixed: &[(String, When)],
        blind: bool,
    ) -> Result<FullRun, SessionError> {
        let verdict = self.flaky.strip(verdict);
        let failures = verdict.failures().map(<[Failure]>::to_vec);
        let judged = self.judge_against(ws, verdict, current, fixed, blind)?;
        let (FullRun::Broke(broke), Some(failures)) = (&judged, failures) else {
            return Ok(judged);
        };
        if blind || self.flaky_bystanders(ws, broke)?.is_empty() {
            return Ok(judged);
        }
        let verdict = self.flaky.strip(Verdict::Failed(failures));
        self.judge_against(ws, verdict, current, fixed, blind)
    }

    /// [`Runs::judge_full`] without the flaky tests' part.
    fn judge_against(
        &mut self,
        ws: &mut dyn Workspace,
        verdict: Verdict,
        current: &BTreeSet<(String, When)>,
        fixed: &[(String, When)],
        blind: bool,
    ) -> Result<FullRun, SessionError> {
        if self.lazy.is_none() {
            return Ok(judge_full_run(verdict, current, fixed, blind));
        }
        let after = match verdict {
            Verdict::Failed(f) => f,
            Verdict::Green => Vec::new(),
            other => return Ok(judge_full_run(other, current, fixed, blind)),
        };
        let unknown: Vec<(String, When)> = {
            let lazy = self.lazy.as_ref().expect("checked above");
            failure_keys(&after)
                .into_iter()
                .filter(|k| {
                    !current.contains(k)
                        && !fixed.contains(k)
                        && !lazy.failing.contains(k)
                        && !lazy.passing.contains(k)
                })
                .collect()
        };
        if !unknown.is_empty() && !blind {
            self.learn_on_original(ws, &unknown)?;
        }
        let mut reference = current.clone();
        if let Some(l) = &self.lazy {
            reference.extend(l.failing.iter().cloned());
        }
        let verdict = judge_full_run(Verdict::Failed(after), &reference, fixed, blind);
        if matches!(verdict, FullRun::Accepted(_)) {
            // Its failures become the reference set: complete, as a full baseline's.
            self.lazy = None;
        }
        Ok(verdict)
    }

    /// Runs the `unknown` tests on the original bytes: every touched file written back to its
    /// original for the run, then to what it holds now (the journal keeps the originals either
    /// way). Records which fail there and which pass.
    fn learn_on_original(
        &mut self,
        ws: &mut dyn Workspace,
        unknown: &[(String, When)],
    ) -> Result<(), SessionError> {
        let Some(now) = touched_now(ws) else {
            // A touched file gone: the original state cannot be rebuilt and put back exactly;
            // nothing is learnt (the failures count as breakage).
            return Ok(());
        };
        crate::progress::step(|| {
            format!(
                "{} test{} failed outside the log's failures: running {} on the original code",
                unknown.len(),
                if unknown.len() == 1 { "" } else { "s" },
                if unknown.len() == 1 { "it" } else { "them" }
            )
        });
        for (path, original, _) in &now {
            ws.write(path, original)?;
        }
        let result = self.on_original(ws, unknown);
        // Written back whatever the runs gave, before any error is passed on.
        for (path, _, bytes) in &now {
            ws.write(path, bytes)?;
        }
        let failing = result?;
        let lazy = self.lazy.as_mut().expect("the lazy baseline is on");
        match failing {
            Some(failing) => {
                for k in unknown {
                    if failing.contains(k) {
                        lazy.failing.insert(k.clone());
                    } else {
                        lazy.passing.insert(k.clone());
                    }
                }
                // Anything else the original failed is known too (a full run's answer).
                lazy.failing.extend(failing);
            }
            None => {
                let note = "a test that failed outside the log's failures gave no verdict on \
                            the original code: it counted against the candidate";
                if !self.notes.iter().any(|n| n == note) {
                    self.notes.push(note.into());
                }
            }
        }
        Ok(())
    }

    /// The node ids of `ids` that fail on the original bytes: every touched file written back
    /// to its original for one targeted run, then to what it holds now. `None` when that run
    /// gives no verdict or a touched file is gone (nothing is learnt).
    pub(super) fn failing_on_original(
        &mut self,
        ws: &mut dyn Workspace,
        ids: &[String],
    ) -> Result<Option<BTreeSet<String>>, SessionError> {
        let Some(now) = touched_now(ws) else {
            return Ok(None);
        };
        for (path, original, _) in &now {
            ws.write(path, original)?;
        }
        let spec = self.prover.spec(ws, ids, &[]);
        let result = self.prover.exec(&spec, Phase::Baseline);
        // Written back whatever the run gave, before any error is passed on.
        for (path, _, bytes) in &now {
            ws.write(path, bytes)?;
        }
        let run = result?;
        if run.hang.is_some() {
            return Ok(None);
        }
        Ok(self.prover.read(&run, ws.root()).failures().map(|f| {
            f.iter()
                .filter_map(|f| f.test.as_deref().map(|t| node_id(t).to_string()))
                .collect()
        }))
    }

    /// The failing keys on the original bytes (already in the tree): the targeted run of the
    /// unknown tests, or when it gives no verdict a full run (the full baseline's own answer);
    /// `None` when neither gives one.
    fn on_original(
        &mut self,
        ws: &dyn Workspace,
        unknown: &[(String, When)],
    ) -> Result<Option<BTreeSet<(String, When)>>, SessionError> {
        let mut ids: Vec<String> = Vec::new();
        for (t, _) in unknown {
            let id = node_id(t).to_string();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        // Not `run`: a baseline's run would replace the crash-frame facts of the log's tests.
        let spec = self.prover.spec(ws, &ids, &[]);
        let run = self.prover.exec(&spec, Phase::Baseline)?;
        if run.hang.is_none() {
            if let Some(f) = self.prover.read(&run, ws.root()).failures() {
                return Ok(Some(failure_keys(f)));
            }
        }
        crate::progress::step(|| "no verdict: running the whole suite on the original code".into());
        let mut spec = self.prover.spec(ws, &[], &[]);
        self.lazy_full_limit(&mut spec);
        let run = self.prover.exec(&spec, Phase::Baseline)?;
        if run.hang.is_some() {
            return Ok(None);
        }
        Ok(self
            .prover
            .read(&run, ws.root())
            .failures()
            .map(failure_keys))
    }
}

/// A touched file: its path, its journaled original bytes, and what it holds now.
pub(super) type Touched = (PathBuf, Vec<u8>, Vec<u8>);

/// Every touched file whose bytes differ from its journaled original; `None` when one of them
/// is gone (the original state cannot be rebuilt exactly).
pub(super) fn touched_now(ws: &dyn Workspace) -> Option<Vec<Touched>> {
    let mut now = Vec::new();
    for (path, original) in ws.originals() {
        match std::fs::read(&path) {
            Ok(b) if b != original => now.push((path, original, b)),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    Some(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subtest_runs_as_its_owning_test() {
        assert_eq!(node_id("t.py::test_x [label 1]"), "t.py::test_x");
        assert_eq!(node_id("t.py::T::test_y (i=1)"), "t.py::T::test_y");
        assert_eq!(node_id("t.py::test_z[a-b]"), "t.py::test_z[a-b]");
    }
}
