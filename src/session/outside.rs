//! Proofs that look past a narrow selection. When the user's pytest arguments select fewer
//! tests than the suite (node ids, a test file, `-k`: see [`crate::pytest_args::widen`]), "the
//! whole suite passes" only means the selection passes: an edit can pass the one selected test
//! and break the tests beside it. So a candidate that passes the selection is also run, in one
//! more pytest run, against:
//!
//! - the **whole test files** of the selected tests (their other tests are the likeliest to
//!   share the code, and may reach it where coverage cannot see: a subprocess, a forked worker);
//! - every test that ran the edited lines on the original code, **measured over the suite**:
//!   once per session, before any candidate is written, one coverage run of the widened
//!   selection (the whole suite; of a suite over [`WHOLE_SUITE_TESTS`] tests, the selected
//!   tests' files only), module constants counted as run by the tests that read them;
//! - when the edit runs at import (a module constant, a class body, a decorator or a default
//!   argument: anything outside a function's body), or its coverage is unknown (the coverage run
//!   gave nothing, or did not trace that test file), **every test file that imports the edited
//!   module**, read statically ([`localize::imports`]).
//!
//! The edited lines are every touched file's difference from its original bytes (the code the
//! coverage run measured): the candidate's, the earlier steps of a chain it ends, and the fixes
//! kept before it.
//!
//! A test that passed on the original code (or whose original outcome is unknown) failing, or a
//! test file that no longer collects, rejects the candidate like any other that breaks a test,
//! and the attempt's `proof` says what was run. The search's spectrum is widened with the same
//! measurement ([`Runs::widen_spectrum`]), so its "N tests cover the line" counts the suite.

use super::known::Outside;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::model::{Attempt, Proof};
use super::prover::Phase;
use super::runs::Runs;
use super::workspace::Workspace;
use crate::localize::imports::ImportIndex;
use crate::localize::{self, Spectrum};
use crate::plan::Candidate;
use crate::runner::{self, RunSpec};
use crate::status::AttemptOutcome;
use crate::verdict::{self, Verdict};

/// Up to this many tests in the whole suite, the coverage run traces all of it; a bigger
/// suite is traced in the selection's test files only (the other files' coverage is unknown,
/// and a candidate is proven against those of them that import the edited module).
const WHOLE_SUITE_TESTS: usize = 400;

/// The file part of a node id.
fn file_of(id: &str) -> &str {
    id.split("::").next().unwrap_or(id)
}

/// What one candidate's run outside the selection runs and judges.
struct Plan {
    /// What pytest is given: whole test files, then single covering tests of other files.
    ids: Vec<String>,
    /// The selected tests inside those files (they ran already).
    deselect: Vec<String>,
    /// The tests that failed on the original code: failing again is not breakage.
    failing_before: BTreeSet<String>,
    /// The tests whose outcome on the original code the coverage run measured.
    measured: BTreeSet<String>,
    proof: Proof,
}

impl Outside {
    /// The test files importing `file` among the suite's (see [`ImportIndex`]), the index
    /// scanned on first use; every test file when the tree is too big to scan.
    fn importers(&mut self, root: &Path, file: &str, test_files: &BTreeSet<String>) -> Vec<String> {
        let index = self.imports.get_or_insert_with(|| {
            let _t = crate::trace_times::span("outside: import scan");
            ImportIndex::scan(root)
        });
        match index {
            Some(index) => index.test_files_importing(file, test_files),
            None => test_files.iter().cloned().collect(),
        }
    }

    /// The tests that started a process on the original code (see `TestCoverage::spawns`),
    /// passed, are outside the selection, and whose file imports an edited module.
    fn spawning(
        &mut self,
        root: &Path,
        changes: &[Change],
        suite_files: &BTreeSet<String>,
    ) -> BTreeSet<String> {
        let spawned: Vec<String> = self
            .spectrum
            .iter()
            .flat_map(|sp| sp.tests.iter())
            .filter(|(id, t)| t.spawns && !t.failed && !self.selected.contains(*id))
            .map(|(id, _)| id.clone())
            .collect();
        if spawned.is_empty() {
            return BTreeSet::new();
        }
        let importing: BTreeSet<String> = changes
            .iter()
            .flat_map(|c| self.importers(root, &c.file, suite_files))
            .collect();
        spawned
            .into_iter()
            .filter(|t| importing.contains(file_of(t)))
            .collect()
    }

    /// What to run with `changes` in place (see the module docs).
    fn plan(&mut self, root: &Path, changes: &[Change]) -> Plan {
        let module_level = changes.iter().any(|c| c.module_level);
        let failing_before: BTreeSet<String> = self
            .spectrum
            .iter()
            .flat_map(|sp| sp.tests.iter().filter(|(_, t)| t.failed))
            .map(|(id, _)| id.clone())
            .collect();
        let covering: Option<BTreeSet<String>> = self.spectrum.as_ref().map(|sp| {
            sp.tests
                .iter()
                .filter(|(id, t)| {
                    !t.failed
                        && !self.selected.contains(*id)
                        && changes.iter().any(|c| {
                            t.lines
                                .get(&c.file)
                                .is_some_and(|ls| ls.range(c.lines.clone()).next().is_some())
                        })
                })
                .map(|(id, _)| id.clone())
                .collect()
        });
        let mut files: BTreeSet<String> = self
            .selected
            .iter()
            .map(|t| file_of(t).to_string())
            .collect();
        let suite_files: BTreeSet<String> =
            self.suite.iter().map(|t| file_of(t).to_string()).collect();
        let unknown = self.spectrum.is_none() || !suite_files.is_subset(&self.traced);
        for c in changes.iter().filter(|c| c.module_level || unknown) {
            let importing = self.importers(root, &c.file, &suite_files);
            // A traced file's coverage already answered, unless the edit runs at import.
            files.extend(
                importing
                    .into_iter()
                    .filter(|f| c.module_level || !self.traced.contains(f)),
            );
        }
        // A test that started a process may have run the edited code there, where no coverage
        // sees it: it is judged too when its file imports an edited module.
        let spawning = self.spawning(root, changes, &suite_files);
        let mut judged: BTreeSet<String> = self
            .suite
            .iter()
            .filter(|t| files.contains(file_of(t)))
            .cloned()
            .collect();
        judged.extend(covering.iter().flatten().cloned());
        judged.extend(spawning.iter().cloned());
        judged.retain(|t| !self.selected.contains(t) && !failing_before.contains(t));
        let mut ids: Vec<String> = files.iter().cloned().collect();
        let singles: BTreeSet<&String> = covering
            .iter()
            .flatten()
            .chain(&spawning)
            .filter(|t| !files.contains(file_of(t)))
            .collect();
        ids.extend(singles.into_iter().cloned());
        let deselect = self
            .selected
            .iter()
            .filter(|t| files.contains(file_of(t)))
            .cloned()
            .collect();
        let known = self.spectrum.is_some() || !self.suite.is_empty();
        // Those judged only because they started a process (not in a whole file, not covering).
        let spawning_only = spawning
            .iter()
            .filter(|t| !files.contains(file_of(t)))
            .filter(|t| !covering.iter().flatten().any(|c| c == *t))
            .count();
        Plan {
            ids,
            deselect,
            failing_before,
            measured: self
                .spectrum
                .iter()
                .flat_map(|sp| sp.tests.keys().cloned())
                .collect(),
            proof: Proof {
                selected: self.selected.len(),
                outside: known.then_some(judged.len()),
                outside_failed: Vec::new(),
                covering: covering.as_ref().map(|c| c.len()),
                spawning: spawning_only,
                files: files.into_iter().collect(),
                module_level,
            },
        }
    }
}

impl Runs<'_> {
    /// Under a narrow selection, the tests it holds, the suite's, and one coverage run of the
    /// widened selection, on the code as it is now (call it before any candidate is written).
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
        let suite = self.collect(ws, &wide.args)?;
        // The selection's test files, unless the whole suite is small enough to trace whole (the
        // tests that share the code may live in any file).
        let node_ids: Vec<String> = if suite.len() > WHOLE_SUITE_TESTS {
            let files: BTreeSet<&str> = selected.iter().map(|t| file_of(t)).collect();
            files.into_iter().map(str::to_string).collect()
        } else {
            Vec::new()
        };
        // A spectrum without a test says nothing (the plugin's data lost, as under xdist).
        let spectrum = self
            .outside_coverage(ws, &node_ids, &wide.args)?
            .filter(|sp| !sp.tests.is_empty());
        let traced = spectrum
            .iter()
            .flat_map(|sp| sp.tests.keys().map(|t| file_of(t).to_string()))
            .collect();
        self.outside = Some(Outside {
            wide,
            selected,
            suite,
            spectrum,
            traced,
            imports: None,
        });
        Ok(())
    }

    /// The coverage run of `node_ids` (none: the widened selection), module constants counted
    /// as run by the tests that read them. Its limit is the full run's, not the selection's
    /// (tracing the suite takes several times what the selected test took).
    fn outside_coverage(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        args: &[String],
    ) -> Result<Option<Spectrum>, SessionError> {
        let out = tempfile::Builder::new()
            .prefix(&format!("selfdebug-outside-{}-", std::process::id()))
            .tempdir()
            .map_err(SessionError::CoverageDir)?;
        let file = out.path().join("cover.json");
        let mut spec = self.prover.spec_with_args(ws, node_ids, &[], args);
        if !localize::cover(&mut spec, &file) {
            return Ok(None);
        }
        self.suite_limit(&mut spec);
        self.prover.exec_pytest(&spec, Phase::Probe)?;
        Ok(Spectrum::read(&file, ws.root()).map(|mut sp| {
            localize::globals::attribute_constants(&mut sp, ws.root());
            sp
        }))
    }

    /// A run of part of the suite gets a full run's limit, not the one the selection's baseline
    /// set (a few times one test's time): the outside tests of a large suite, or a traced run,
    /// take far longer, and a run cut short proves nothing. The per-test limit stays the
    /// selection's (a candidate that makes a test hang costs no more than before); `--timeout`
    /// still decides.
    fn suite_limit(&self, spec: &mut RunSpec) {
        if self.opts.timeout.is_none() {
            let left = self
                .prover
                .deadline
                .saturating_duration_since(Instant::now());
            spec.timeout = runner::DEFAULT_TIMEOUT.min(left.max(Duration::from_secs(1)));
        }
    }

    /// The test ids `args` select (one `--collect-only -q` run). A project whose `addopts`
    /// already say `-q` gets per-file counts (`tests/a.py: 3`) from a second `-q`: then the ids
    /// are asked for again with one `-q` fewer (twice at most).
    fn collect(
        &mut self,
        ws: &dyn Workspace,
        args: &[String],
    ) -> Result<BTreeSet<String>, SessionError> {
        let tries: [&[&str]; 3] = [
            &["--collect-only", "-q"],
            &["--collect-only"],
            &["--collect-only", "-v"],
        ];
        for extra in tries {
            let spec = self.prover.spec_with_args(ws, &[], extra, args);
            let run = self.prover.exec(&spec, Phase::Selection)?;
            let out = String::from_utf8_lossy(&run.stdout);
            let ids: BTreeSet<String> = out
                .lines()
                .filter(|l| l.contains("::") && !l.starts_with(' '))
                .map(|l| l.trim_end().to_string())
                .collect();
            let counts = out.lines().any(|l| {
                l.rsplit_once(": ").is_some_and(|(file, n)| {
                    file.ends_with(".py") && n.trim().parse::<usize>().is_ok()
                })
            });
            if !ids.is_empty() || !counts {
                return Ok(ids);
            }
        }
        Ok(BTreeSet::new())
    }

    /// Whether batching is off: under a narrow selection every fix is proven on its own,
    /// outside tests included.
    pub(super) fn narrow(&self) -> bool {
        self.outside.is_some()
    }

    /// Under a narrow selection, `spectrum` (of the selection) with the tests outside it that
    /// passed on the original code added, with the lines they ran there: the search's
    /// neighbours, its choice and its "N tests cover the line" then count the suite.
    pub(super) fn widen_spectrum(&self, spectrum: &mut Spectrum) {
        let Some(outside) = self.outside.as_ref().and_then(|o| o.spectrum.as_ref()) else {
            return;
        };
        for (id, t) in &outside.tests {
            if !t.failed && !spectrum.tests.contains_key(id) {
                spectrum.tests.insert(id.clone(), t.clone());
            }
        }
    }

    /// The candidate passed the selection: the tests outside it that the module docs name are
    /// run with it, the candidate in the workspace, in one run. Fills `attempt.proof`; `false`
    /// (the attempt rejected, `broke` naming them) when any of them breaks.
    pub(super) fn outside_passes(
        &mut self,
        ws: &mut dyn Workspace,
        cand: &Candidate,
        attempt: &mut Attempt,
    ) -> Result<bool, SessionError> {
        let Some(o) = self.outside.as_mut() else {
            return Ok(true);
        };
        let changes = changes(ws, cand);
        let plan = o.plan(ws.root(), &changes);
        let mut proof = plan.proof;
        let (args, selected) = (o.wide.args.clone(), o.selected.clone());
        if plan.ids.is_empty() || proof.outside == Some(0) {
            attempt.proof = Some(proof);
            return Ok(true);
        }
        crate::progress::step(|| {
            format!(
                "running {} test{} outside the selection (its test files, the tests that run \
                 the edited lines{})",
                proof.outside.unwrap_or_default(),
                if proof.outside == Some(1) { "" } else { "s" },
                if proof.module_level {
                    ", the test files importing the module"
                } else {
                    ""
                }
            )
        });
        let mut extra: Vec<String> = Vec::new();
        for t in &plan.deselect {
            extra.extend(["--deselect".to_string(), t.clone()]);
        }
        extra.extend(args);
        let mut spec = self.prover.spec_with_args(ws, &plan.ids, &[], &extra);
        self.suite_limit(&mut spec);
        let run = self.prover.exec_pytest(&spec, Phase::Confirm)?;
        let mut failed: Vec<String> = match verdict::read(&run, ws.root()) {
            Verdict::Green => Vec::new(),
            Verdict::Failed(f) => f
                .iter()
                .filter_map(|f| match &f.test {
                    Some(t) => {
                        let id = super::lazy::node_id(t);
                        (!plan.failing_before.contains(id) && !selected.contains(id))
                            .then(|| t.clone())
                    }
                    // A test file that no longer collects (an import-time edit).
                    None => Some(f.headline.clone().unwrap_or_else(|| {
                        format!("{}: {}", f.exc_type, crate::traceback::first_line(&f.msg))
                    })),
                })
                .collect(),
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
        failed.retain(|t| {
            !self
                .flaky
                .known
                .iter()
                .any(|(_, f)| f.test.as_ref() == Some(t))
        });
        failed.sort();
        failed.dedup();
        // A test whose outcome on the original code nobody measured (a file the coverage run did
        // not trace, or no coverage at all) may have failed there too: asked once, on the
        // original bytes, before it counts against the candidate.
        let unmeasured: Vec<String> = failed
            .iter()
            .filter(|t| t.contains("::") && !plan.measured.contains(super::lazy::node_id(t)))
            .map(|t| super::lazy::node_id(t).to_string())
            .collect();
        if !unmeasured.is_empty() {
            crate::progress::step(|| {
                format!(
                    "{} test{} outside the selection failed whose outcome on the original code \
                     is unknown: running {} on the original code",
                    unmeasured.len(),
                    if unmeasured.len() == 1 { "" } else { "s" },
                    if unmeasured.len() == 1 { "it" } else { "them" }
                )
            });
            if let Some(before) = self.failing_on_original(ws, &unmeasured)? {
                failed.retain(|t| !before.contains(super::lazy::node_id(t)));
            }
        }
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

/// One touched file's change from its original bytes, the code the coverage run measured.
struct Change {
    /// Relative to the root, as the spectrum names it.
    file: String,
    /// The lines of the original it replaces (see [`edited_lines`]).
    lines: std::ops::RangeInclusive<u32>,
    module_level: bool,
}

/// Every touched file that differs from its original now: the candidate, the earlier steps of
/// a chain it ends, the fixes kept before it. Measured against the original bytes, not the
/// candidate's own starting point, so that the lines are those the coverage run numbered.
fn changes(ws: &dyn Workspace, cand: &Candidate) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for (path, original) in ws.originals() {
        let Ok(rel) = path.strip_prefix(ws.root()) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let now = std::fs::read(&path).unwrap_or_else(|_| original.clone());
        if now != original {
            out.push(Change {
                file: rel.join("/"),
                lines: edited_lines(&original, &now),
                module_level: runs_at_import(&original, &now),
            });
        }
    }
    if !out.iter().any(|c| c.file == cand.file) {
        out.push(Change {
            file: cand.file.clone(),
            lines: edited_lines(&cand.original, &cand.patched),
            module_level: runs_at_import(&cand.original, &cand.patched),
        });
    }
    out
}

/// The byte offsets in `original` where the change to `patched` starts and ends.
fn changed_span(original: &[u8], patched: &[u8]) -> (usize, usize) {
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
    (prefix, original.len() - suffix)
}

fn line_of(text: &[u8], byte: usize) -> u32 {
    text[..byte.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// The lines of `original` (1-based) that the edit to `patched` replaces, as a range; an
/// insertion between two lines counts both.
fn edited_lines(original: &[u8], patched: &[u8]) -> std::ops::RangeInclusive<u32> {
    let (prefix, end) = changed_span(original, patched);
    let first = line_of(original, prefix);
    let last = line_of(original, end.max(prefix)).max(first);
    // An insertion at a line's start runs before that line: the line before it counts too.
    let first = if end == prefix && prefix > 0 && original[prefix - 1] == b'\n' {
        first.saturating_sub(1).max(1)
    } else {
        first
    };
    first..=last
}

/// Whether the edit runs at import: some line it touches is outside every function's body (a
/// module or class body, a `def` line with its decorators and defaults). A file that does not
/// parse counts as run at import (when unsure, more tests run).
fn runs_at_import(original: &[u8], patched: &[u8]) -> bool {
    let (prefix, end) = changed_span(original, patched);
    let (first, last) = (
        line_of(original, prefix),
        line_of(original, end.max(prefix)),
    );
    let text = String::from_utf8_lossy(original);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Ok(module) = crate::syntax::parse_text(Path::new("<edited>"), text) else {
        return true;
    };
    // Every function's body as lines: from its first statement's line (when that is not the
    // `def` line itself) to the function's last line.
    let mut bodies: Vec<(u32, u32)> = Vec::new();
    let roots: Vec<crate::syntax::walk::Node> = module
        .body()
        .iter()
        .map(crate::syntax::walk::Node::Stmt)
        .collect();
    crate::syntax::walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        use rustpython_parser::ast::{Ranged, Stmt};
        let (def, body) = match node {
            crate::syntax::walk::Node::Stmt(s @ Stmt::FunctionDef(f)) => (s, &f.body),
            crate::syntax::walk::Node::Stmt(s @ Stmt::AsyncFunctionDef(f)) => (s, &f.body),
            _ => return true,
        };
        if let Some(first) = body.first() {
            let header = module.line_of(def.range().start().to_usize()) as u32;
            let start = module.line_of(first.range().start().to_usize()) as u32;
            let end = module.line_of(def.range().end().to_usize()) as u32;
            // A one-line `def f(): return x` shares its line with the header.
            if start > header {
                bodies.push((start, end));
            }
        }
        // A function nested in a body is inside that body already.
        false
    });
    !(first..=last).all(|l| bodies.iter().any(|&(a, b)| a <= l && l <= b))
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

    #[test]
    fn what_runs_at_import() {
        let src = b"LIMIT = 3\n\n\nclass Box:\n    size = 2\n\n    @staticmethod\n    def put(x, cap=LIMIT):\n        if x > cap:\n            return None\n        return x\n\n\ndef one(): return 1\n";
        let text = std::str::from_utf8(src).unwrap();
        let edit =
            |from: &str, to: &str| runs_at_import(src, text.replacen(from, to, 1).as_bytes());
        // A module constant, a class attribute, a default argument, a one-line def.
        assert!(edit("LIMIT = 3", "LIMIT = 4"));
        assert!(edit("size = 2", "size = 3"));
        assert!(edit("cap=LIMIT", "cap=4"));
        assert!(edit("return 1", "return 2"));
        // Inside a method's body, an inserted statement at its top included.
        assert!(!edit("x > cap", "x >= cap"));
        assert!(!edit("        if x", "        x = x or 0\n        if x"));
        // A statement added after the last function, at module level.
        assert!(edit("return 1\n", "return 1\n\nX = 1\n"));
        // A file that does not parse: when unsure, at import.
        assert!(runs_at_import(
            b"def f(:\n    return 1\n",
            b"def f(:\n    return 2\n"
        ));
    }
}
