//! Proofs that look past a narrow selection. When the user's pytest arguments select fewer
//! tests than the suite (node ids, a test file, `-k`: see [`crate::pytest_args::widen`]), "the
//! whole suite passes" only means the selection passes: an edit to a function many tests call
//! can pass the one selected test and break the others. So, once per session and on the
//! original bytes, one coverage run of the whole suite (of the selection's test files when the
//! selection is node ids and the suite holds more than [`WHOLE_SUITE_TESTS`]) records which tests outside the selection run which lines; a
//! candidate that passes the selection must then also pass the tests outside it that ran the
//! lines it edits and passed on the original code. Any of them failing rejects the candidate
//! like any other that breaks a test, and the attempt's `proof` says what was run.

use super::*;
use crate::localize::{self, Spectrum};
use crate::pytest_args::Widened;

/// Up to this many tests in the whole suite, the coverage run traces all of it; a bigger
/// suite is traced in the selection's test files only.
const WHOLE_SUITE_TESTS: usize = 400;

/// What the session knows about the tests outside a narrow selection.
pub(super) struct Outside {
    pub(super) wide: Widened,
    /// The tests the narrow selection holds.
    selected: BTreeSet<String>,
    /// The coverage of the widened run on the original bytes; `None` when it gave nothing.
    spectrum: Option<Spectrum>,
}

/// What a candidate's proof ran, in the attempt (only under a narrow selection).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Proof {
    /// Tests in the run's selection (all of them ran in the confirming run).
    pub selected: usize,
    /// Tests outside the selection that ran the edited lines and passed on the original code:
    /// each was run with the candidate. `None` when the coverage run gave nothing to choose by.
    pub outside: Option<usize>,
    /// Those of them that failed with the candidate (the candidate was rejected).
    pub outside_failed: Vec<String>,
}

impl Runs<'_> {
    /// Under a narrow selection, the tests it holds and one coverage run of the widened
    /// selection, on the code as it is now (call it before any candidate is written).
    pub(super) fn collect_outside(&mut self, ws: &dyn Workspace) -> Result<(), SessionError> {
        // Command mode runs no pytest; without validation no candidate is run at all.
        if self.opts.judge.is_some() || !self.opts.validate {
            return Ok(());
        }
        let Some(wide) = crate::pytest_args::widen(&self.opts.pytest_args) else {
            return Ok(());
        };
        crate::progress::step(|| {
            "the selection is narrower than the suite: finding the tests outside it that run \
             the same code"
                .into()
        });
        let selected = self.collect(ws, &self.opts.pytest_args.clone())?;
        // The selection's test files, unless the whole suite is small enough to trace whole (the
        // tests that share the code may live in any file).
        let node_ids = match &wide.files {
            Some(files) if self.collect(ws, &wide.args)?.len() > WHOLE_SUITE_TESTS => files.clone(),
            _ => Vec::new(),
        };
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-outside-{}-", std::process::id()))
            .tempdir()
            .map_err(|e| SessionError::Environment(format!("coverage output dir: {e}")))?;
        let file = out.path().join("cover.json");
        let mut spec = self.spec_with_args(ws, &node_ids, &[], &wide.args);
        let spectrum = if localize::cover(&mut spec, &file) {
            self.exec_pytest(&spec, Phase::Probe)?;
            Spectrum::read(&file, ws.root())
        } else {
            None
        };
        self.outside = Some(Outside {
            wide,
            selected,
            spectrum,
        });
        Ok(())
    }

    /// The test ids `args` select (one `--collect-only` run).
    fn collect(
        &mut self,
        ws: &dyn Workspace,
        args: &[String],
    ) -> Result<BTreeSet<String>, SessionError> {
        let spec = self.spec_with_args(ws, &[], &["--collect-only", "-q"], args);
        let run = self.exec(&spec, Phase::Selection)?;
        Ok(String::from_utf8_lossy(&run.stdout)
            .lines()
            .filter(|l| l.contains("::") && !l.starts_with(' '))
            .map(|l| l.trim_end().to_string())
            .collect())
    }

    /// Whether batching is off: under a narrow selection every fix is proven on its own,
    /// outside tests included.
    pub(super) fn narrow(&self) -> bool {
        self.outside.is_some()
    }

    /// The candidate passed the selection: the tests outside it that ran the lines it edits
    /// (and passed on the original code) are run with it, the candidate in the workspace. Fills
    /// `attempt.proof`; `false` (the attempt rejected, `broke` naming them) when any fails.
    pub(super) fn outside_passes(
        &mut self,
        ws: &dyn Workspace,
        cand: &Candidate,
        attempt: &mut Attempt,
    ) -> Result<bool, SessionError> {
        let Some(o) = &self.outside else {
            return Ok(true);
        };
        let mut proof = Proof {
            selected: o.selected.len(),
            ..Proof::default()
        };
        let Some(spectrum) = &o.spectrum else {
            attempt.proof = Some(proof);
            return Ok(true);
        };
        let lines = edited_lines(&cand.original, &cand.patched);
        let tests: Vec<String> = spectrum
            .tests
            .iter()
            .filter(|(id, t)| {
                !t.failed
                    && !o.selected.contains(*id)
                    && t.lines
                        .get(&cand.file)
                        .is_some_and(|ls| ls.range(lines.clone()).next().is_some())
            })
            .map(|(id, _)| id.clone())
            .collect();
        proof.outside = Some(tests.len());
        if tests.is_empty() {
            attempt.proof = Some(proof);
            return Ok(true);
        }
        crate::progress::step(|| {
            format!(
                "running the {} test{} outside the selection that run the edited lines",
                tests.len(),
                if tests.len() == 1 { "" } else { "s" }
            )
        });
        let spec = self.spec_with_args(ws, &tests, &[], &o.wide.args);
        let run = self.exec_pytest(&spec, Phase::Confirm)?;
        let failed: Vec<String> = match verdict::read(&run, ws.root()) {
            Verdict::Green => Vec::new(),
            Verdict::Failed(f) => f.iter().filter_map(|f| f.test.clone()).collect(),
            other => {
                attempt.outcome = AttemptOutcome::SuiteError;
                attempt.new_failure = Some(format!(
                    "the tests outside the selection gave no verdict: {}",
                    other.describe()
                ));
                attempt.proof = Some(proof);
                return Ok(false);
            }
        };
        // A known flaky test decides nothing (see `flaky`).
        let known = |t: &String| {
            self.flaky
                .known
                .iter()
                .any(|(_, f)| f.test.as_ref() == Some(t))
        };
        let mut failed: Vec<String> = failed
            .into_iter()
            .filter(|t| tests.contains(t) && !known(t))
            .collect();
        failed.dedup();
        let passes = failed.is_empty();
        if !passes {
            attempt.outcome = AttemptOutcome::NewFailures;
            attempt.broke = failed.clone();
        }
        proof.outside_failed = failed;
        attempt.proof = Some(proof);
        Ok(passes)
    }
}

/// The lines of `original` (1-based) that the edit to `patched` replaces, as a range; an
/// insertion between two lines counts both.
fn edited_lines(original: &[u8], patched: &[u8]) -> std::ops::RangeInclusive<u32> {
    let prefix = original
        .iter()
        .zip(patched)
        .take_while(|(a, b)| a == b)
        .count();
    let max_suffix = original.len().min(patched.len()) - prefix;
    let suffix = original
        .iter()
        .rev()
        .zip(patched.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let line_of = |byte: usize| original[..byte].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let first = line_of(prefix);
    let end = original.len() - suffix;
    let last = line_of(end.max(prefix)).max(first);
    // An insertion at a line's start runs before that line: the line before it counts too.
    let first = if end == prefix && prefix > 0 && original[prefix - 1] == b'\n' {
        first.saturating_sub(1).max(1)
    } else {
        first
    };
    first..=last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edited_lines_of_a_replacement_and_an_insertion() {
        let a = b"def f(x):\n    if x < 2:\n        return 1\n    return x\n";
        let b = b"def f(x):\n    if x <= 2:\n        return 1\n    return x\n";
        assert_eq!(edited_lines(a, b), 2..=2);
        let c = b"def f(x):\n    if x is None:\n        return 0\n    if x < 2:\n        return 1\n    return x\n";
        assert_eq!(edited_lines(a, c), 2..=2);
        let d = b"def f(x):\n    return x\n";
        // The byte diff ends in line 4's indentation: line 4 counts (one more test at most).
        assert_eq!(edited_lines(a, d), 2..=4);
        assert_eq!(
            edited_lines(b"x = 1\ny = 2\n", b"x = 1\nz = 0\ny = 2\n"),
            1..=2
        );
    }
}
