//! The coverage runs the search localizes with: a pytest run under the coverage plugin (of the
//! whole suite, or of the files of the tests that may share a cause), or one run of the command
//! under the line tracer in command mode. Runs of [`Runs`], below the sources that rank with
//! them.

use std::time::Duration;

use super::error::SessionError;
use super::prover::Phase;
use super::runs::Runs;
use super::workspace::Workspace;
use crate::command::{Untraceable, WrappedRunError};
use crate::localize::{self, Spectrum};

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

/// The test name of the command's traced run in its spectrum.
pub(super) const COMMAND_RUN: &str = "command";

impl Runs<'_> {
    /// One run of the command under the line tracer: its spectrum, with the command as the one
    /// failing test; why not, when it cannot be traced or the run left nothing to read.
    pub(super) fn command_coverage(
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
        let spec = self.prover.spec(ws, &[], &[]);
        let run = match judge.run_traced(&self.prover.python, &spec, dir, &file) {
            Ok(run) => run,
            Err(WrappedRunError::Untraceable(why)) => return Ok(Err(Untraced::Command(why))),
            Err(WrappedRunError::Runner(e)) => return Err(SessionError::Runner(e)),
        };
        self.prover.tally(Phase::Probe, &run);
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
        let node_ids: Vec<String> = if self.prover.baseline <= whole_suite_coverage() {
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
        let mut spec = self.prover.spec(ws, &node_ids, &[]);
        if !localize::cover(&mut spec, &file) {
            return Ok(None);
        }
        self.prover.exec_pytest(&spec, Phase::Probe)?;
        Ok(Spectrum::read(&file, ws.root()).map(|mut sp| {
            // A narrow selection's tests alone would say "1 test covers the line".
            self.widen_spectrum(&mut sp);
            localize::globals::attribute_constants(&mut sp, ws.root());
            sp
        }))
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
