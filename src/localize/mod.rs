//! Spectrum-based fault localization for wrong-output failures: which project lines the failing
//! tests run that the passing tests do not.
//!
//! The spectrum comes from selfdebug's coverage plugin (`_selfdebug_cover.py`, see
//! [`crate::plugin`]): per test, the lines of the project's own files that ran and whether the
//! test failed. Test files (as [`is_test_file`] defines them) are dropped here, so one
//! definition decides what a test file is.
//!
//! Ranking: **Ochiai**, `ef / sqrt(F * (ef + ep))` (`ef`/`ep`: failing/passing tests that ran
//! the line, `F`: all failing tests). It is the standard baseline of the SBFL literature, among
//! the best single formulas in the Defects4J studies (Pearson et al. 2017) and needs no tuning
//! parameter (DStar's exponent is one; it ranks close to Ochiai on single-fault programs, which is
//! what a small failing change usually is). Lines run by no failing test score 0 and are never
//! reported.
//!
//! The traceback then breaks ties: lines in a function on the failure's stack (a `raise` in
//! project code, the frames of a `RecursionError`) or a function the test's failing line calls
//! (`assert median(xs) == 2.5` calls `median`) keep their score, every other line is scaled by
//! [`OFF_FOCUS`]. A score is therefore in `0..=1`, 1 meaning "run by every failing test and by
//! no passing one, in the function the test called".
//!
//! Command mode ([`rank_command`]) has one failing run (the command, traced once) and no
//! passing test: Ochiai gives every line it ran 1, so the kind of statement ranks them
//! instead (see [`command_weight`]), then the file and the line.

pub mod cause;
pub mod globals;
pub mod hang;
pub mod imports;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::traceback::locate::is_test_file;
use crate::traceback::Failure;

/// Score factor of a line outside the functions the failure points at (see module docs).
pub const OFF_FOCUS: f64 = 0.9;

/// One test's coverage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestCoverage {
    pub failed: bool,
    /// The test started a process (`subprocess`, `os.fork`, `os.system`, ...): what that process
    /// ran is not in `lines`, so the test may run any code of the project.
    pub spawns: bool,
    /// Relative file (forward slashes) → lines that ran.
    pub lines: BTreeMap<String, BTreeSet<u32>>,
}

/// Every test of one coverage run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spectrum {
    pub tests: BTreeMap<String, TestCoverage>,
}

impl Spectrum {
    /// A spectrum over one file `m.py`: (test id, failed, lines run) per test. For tests.
    #[cfg(test)]
    pub(crate) fn of_m_py(tests: &[(&str, bool, &[u32])]) -> Spectrum {
        Spectrum {
            tests: tests
                .iter()
                .map(|(id, failed, lines)| {
                    let lines =
                        BTreeMap::from([("m.py".to_string(), lines.iter().copied().collect())]);
                    (
                        id.to_string(),
                        TestCoverage {
                            failed: *failed,
                            spawns: false,
                            lines,
                        },
                    )
                })
                .collect(),
        }
    }
}

/// A statement line and how suspicious it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspicious {
    /// Relative to the root, forward slashes.
    pub file: String,
    pub line: u32,
    /// `0..=1`, rounded to 4 decimals.
    pub score: f64,
}

impl Spectrum {
    /// Reads the plugin's JSON; paths outside `root` and test files are dropped. `None` when
    /// the file is missing or not the plugin's format.
    pub fn read(path: &Path, root: &Path) -> Option<Spectrum> {
        let bytes = std::fs::read(path).ok()?;
        Spectrum::parse(&bytes, root)
    }

    pub fn parse(bytes: &[u8], root: &Path) -> Option<Spectrum> {
        let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let tests = value.get("tests")?.as_object()?;
        // The plugin reports real paths; the root may be spelled through a symlink.
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out = Spectrum::default();
        for (id, t) in tests {
            let mut cov = TestCoverage {
                failed: t.get("failed").and_then(|f| f.as_bool()).unwrap_or(false),
                spawns: t.get("spawns").and_then(|f| f.as_bool()).unwrap_or(false),
                ..TestCoverage::default()
            };
            for (file, lines) in t.get("lines").and_then(|l| l.as_object())?.iter() {
                let Some(rel) = relative(Path::new(file), root, &real_root) else {
                    continue;
                };
                let parts: Vec<&str> = rel.split('/').collect();
                if is_test_file(&parts) {
                    continue;
                }
                let set: BTreeSet<u32> = lines
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_u64())
                    .filter_map(|n| u32::try_from(n).ok())
                    .collect();
                if !set.is_empty() {
                    cov.lines.entry(rel).or_default().extend(set);
                }
            }
            out.tests.insert(id.clone(), cov);
        }
        Some(out)
    }

    /// The tests that ran `file:line`, failing ones first.
    pub fn covering(&self, file: &str, line: u32) -> Vec<&str> {
        let mut out: Vec<(bool, &str)> = self
            .tests
            .iter()
            .filter(|(_, t)| t.lines.get(file).is_some_and(|l| l.contains(&line)))
            .map(|(id, t)| (!t.failed, id.as_str()))
            .collect();
        out.sort();
        out.into_iter().map(|(_, id)| id).collect()
    }

    pub fn failing(&self) -> BTreeSet<&str> {
        self.tests
            .iter()
            .filter(|(_, t)| t.failed)
            .map(|(id, _)| id.as_str())
            .collect()
    }
}

fn relative(file: &Path, root: &Path, real_root: &Path) -> Option<String> {
    let rel = file
        .strip_prefix(real_root)
        .or_else(|_| file.strip_prefix(root))
        .ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Turns `spec` into a coverage run whose spectrum goes to `out` (read it with
/// [`Spectrum::read`]): loads selfdebug's coverage plugin and tells it the root. `false` when the
/// plugin directory is not available (then nothing is changed).
pub fn cover(spec: &mut crate::runner::RunSpec, out: &Path) -> bool {
    if crate::plugin::dir().is_none() {
        return false;
    }
    spec.extra_args.splice(
        0..0,
        ["-p".to_string(), crate::plugin::COVER_MODULE.to_string()],
    );
    spec.env
        .push(("SELFDEBUG_COVER_OUT".into(), out.as_os_str().to_os_string()));
    let root = spec.cwd.clone().into_os_string();
    spec.env.push(("SELFDEBUG_COVER_ROOT".into(), root));
    true
}

/// Ochiai over every line a failing test ran, best first (ties: file, then line). `focus` says
/// whether a line lies in a function the failure points at (see the module docs).
pub fn rank(spectrum: &Spectrum, mut focus: impl FnMut(&str, u32) -> bool) -> Vec<Suspicious> {
    let total_failed = spectrum.tests.values().filter(|t| t.failed).count();
    if total_failed == 0 {
        return Vec::new();
    }
    // (file, line) → (ef, ep)
    let mut counts: BTreeMap<(&str, u32), (u32, u32)> = BTreeMap::new();
    for t in spectrum.tests.values() {
        for (file, lines) in &t.lines {
            for &line in lines {
                let c = counts.entry((file.as_str(), line)).or_default();
                if t.failed {
                    c.0 += 1;
                } else {
                    c.1 += 1;
                }
            }
        }
    }
    let mut out: Vec<Suspicious> = counts
        .into_iter()
        .filter(|(_, (ef, _))| *ef > 0)
        .map(|((file, line), (ef, ep))| {
            let ochiai = f64::from(ef) / (total_failed as f64 * f64::from(ef + ep)).sqrt();
            let score = if focus(file, line) {
                ochiai
            } else {
                ochiai * OFF_FOCUS
            };
            Suspicious {
                file: file.to_string(),
                line,
                score: rounded(score),
            }
        })
        .collect();
    best_first(&mut out);
    out
}

/// Highest score first; ties by file, then line (the order is the same on every run).
fn best_first(out: &mut [Suspicious]) {
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
}

/// A score as reported: four decimals.
fn rounded(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

/// Statement weight of a line in command mode: what computes a value (an assignment, a
/// `return`, a condition or loop header, an `assert`/`raise`) is where a wrong output comes
/// from, 1; a bare expression statement (mostly the `print(...)` that shows the value, or a
/// call of the entry point) 0.8; a line that declares and computes nothing (`import`, `def`,
/// `class`, `global`, `pass`, `break`, `continue`) 0.5, so that it takes none of the search's
/// few lines. Outside every function, an assignment (a module constant can be the bug) is
/// scaled by [`OFF_FOCUS`], and every other statement by [`DRIVER`]: it is the script's driver
/// (the loop over its inputs, the `print`, `if __name__ == "__main__":`), and an edit there
/// would change what the script is run on rather than what it computes.
pub fn command_weight(located: &crate::syntax::Located) -> f64 {
    use crate::syntax::StmtKind as K;
    let kind = match located.kind {
        K::Import
        | K::ImportFrom
        | K::FunctionDef
        | K::AsyncFunctionDef
        | K::ClassDef
        | K::Global
        | K::Nonlocal
        | K::Pass
        | K::Break
        | K::Continue => 0.5,
        K::Expr => 0.8,
        _ => 1.0,
    };
    match (located.function.is_some(), located.kind) {
        (true, _) => kind,
        (false, K::Assign | K::AugAssign | K::AnnAssign) => kind * OFF_FOCUS,
        (false, _) => kind * DRIVER,
    }
}

/// Command mode's factor of a module-level statement that is not an assignment (see
/// [`command_weight`]).
pub const DRIVER: f64 = 0.6;

/// The lines one failing run of a command ran (its only "test"), best first: Ochiai (1 for
/// each), scaled by [`command_weight`]; ties by file, then line. A line no statement holds (a
/// docstring's inner line) is dropped.
pub fn rank_command(spectrum: &Spectrum, root: &Path) -> Vec<Suspicious> {
    let mut modules: BTreeMap<String, Option<crate::syntax::ParsedModule>> = BTreeMap::new();
    let mut out: Vec<Suspicious> = rank(spectrum, |_, _| true)
        .into_iter()
        .filter_map(|mut s| {
            let module = modules.entry(s.file.clone()).or_insert_with(|| {
                let path = crate::plan::confined_path(root, &s.file).ok()?;
                let source = crate::source::SourceFile::read(&path).ok()?;
                crate::syntax::parse(&source).ok()
            });
            let located = crate::syntax::locate(module.as_ref()?, s.line as usize)?;
            let score = s.score * command_weight(&located);
            s.score = rounded(score);
            Some(s)
        })
        .collect();
    best_first(&mut out);
    out
}

/// Names the failing line calls: `assert median(xs) == 2.5` → `median`; `s.total()` → `total`.
pub fn called_names(code: &str) -> BTreeSet<String> {
    let bytes = code.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let mut j = i;
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'(' {
                out.insert(code[start..i].to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Lines in a function the failure points at: one on its stack in project code, or one the
/// test's failing line calls (see the module docs).
pub fn focus(root: &Path, failure: &Failure) -> impl FnMut(&str, u32) -> bool {
    let mut called: BTreeSet<String> = BTreeSet::new();
    let mut stack: BTreeSet<String> = BTreeSet::new();
    for f in failure.frames.iter().filter(|f| f.resolved.is_some()) {
        let parts: Vec<&str> = f.file.split('/').collect();
        if is_test_file(&parts) {
            if let Some(code) = &f.code {
                called.extend(called_names(code));
            }
        } else if let Some(func) = &f.func {
            stack.insert(func.clone());
        }
    }
    if stack.is_empty() && !matches!(failure.exc_type.rsplit('.').next(), Some("AssertionError")) {
        // A crash in a test helper or fixture with no project frame on the stack: the bad value
        // came from a project call made earlier in that frame (`text = export.dump(...)` the
        // line before `json.loads(text)`), so its calls up to the crash line are in focus too.
        if let Some(f) =
            failure.frames.iter().rev().find(|f| {
                f.resolved.is_some() && is_test_file(&f.file.split('/').collect::<Vec<_>>())
            })
        {
            called.extend(calls_before(f));
        }
    }
    let names: BTreeSet<String> = called.union(&stack).cloned().collect();
    // Each file is parsed once, on its first line.
    let mut modules: BTreeMap<String, Option<crate::syntax::ParsedModule>> = BTreeMap::new();
    let root = root.to_path_buf();
    move |file: &str, line: u32| {
        let module = modules.entry(file.to_string()).or_insert_with(|| {
            let path = crate::plan::confined_path(&root, file).ok()?;
            let source = crate::source::SourceFile::read(&path).ok()?;
            crate::syntax::parse(&source).ok()
        });
        module
            .as_ref()
            .and_then(|m| crate::syntax::locate(m, line as usize))
            .and_then(|l| l.function)
            .is_some_and(|f| names.contains(&f.name))
    }
}

/// The names called in the frame's function from its start to the end of the frame's line.
fn calls_before(frame: &crate::traceback::Frame) -> BTreeSet<String> {
    let found = || {
        let source = crate::source::SourceFile::read(Path::new(frame.resolved.as_deref()?)).ok()?;
        let module = crate::syntax::parse(&source).ok()?;
        let at = crate::syntax::locate(&module, frame.line as usize)?;
        let start = at.function?.range.start;
        Some(called_names(source.text().get(start..at.line_range.end)?))
    };
    found().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spectrum(tests: &[(&str, bool, &[u32])]) -> Spectrum {
        Spectrum {
            tests: tests
                .iter()
                .map(|(id, failed, lines)| {
                    (
                        id.to_string(),
                        TestCoverage {
                            failed: *failed,
                            spawns: false,
                            lines: BTreeMap::from([(
                                "m.py".to_string(),
                                lines.iter().copied().collect(),
                            )]),
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn ochiai_ranks_the_line_only_failing_tests_run_first() {
        let s = spectrum(&[
            ("t::fail", true, &[1, 2, 4]),
            ("t::pass1", false, &[1, 2, 3]),
            ("t::pass2", false, &[1, 3]),
        ]);
        let r = rank(&s, |_, _| true);
        let got: Vec<(u32, f64)> = r.iter().map(|s| (s.line, s.score)).collect();
        // line 4: 1/sqrt(1*1) = 1; line 2: 1/sqrt(2); line 1: 1/sqrt(3), to 4 decimals.
        let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
        let third = round(1.0 / 3f64.sqrt());
        assert_eq!(
            got,
            vec![
                (4, 1.0),
                (2, round(std::f64::consts::FRAC_1_SQRT_2)),
                (1, third)
            ]
        );
        // Outside the focus a line keeps 0.9 of its score: a tie-breaker, not a veto.
        let off = rank(&s, |_, l| l != 4);
        assert_eq!(
            off[0],
            Suspicious {
                file: "m.py".into(),
                line: 4,
                score: 0.9
            }
        );
        assert_eq!(off[1].line, 2);
        assert_eq!(s.covering("m.py", 2), vec!["t::fail", "t::pass1"]);
    }

    #[test]
    fn no_failing_test_ranks_nothing() {
        let s = spectrum(&[("t::pass", false, &[1])]);
        assert!(rank(&s, |_, _| true).is_empty());
    }

    #[test]
    fn plugin_json_drops_tests_and_foreign_files() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        let json = format!(
            r#"{{"tests": {{"tests/test_m.py::test_a": {{"failed": true, "lines": {{
                "{0}/m.py": [3, 1], "{0}/tests/test_m.py": [5], "/usr/lib/x.py": [1]}}}}}}}}"#,
            r.display()
        );
        let s = Spectrum::parse(json.as_bytes(), root.path()).unwrap();
        let t = &s.tests["tests/test_m.py::test_a"];
        assert!(t.failed);
        assert_eq!(
            t.lines,
            BTreeMap::from([("m.py".to_string(), BTreeSet::from([1, 3]))])
        );
        assert_eq!(Spectrum::parse(b"[1]", root.path()), None);
    }

    #[test]
    fn a_command_run_ranks_computations_before_declarations_and_the_driver() {
        let root = tempfile::tempdir().unwrap();
        let script = "import sys\n\nRATE = 3\n\n\ndef total(xs):\n    n = 0\n    for x in xs:\n        n += x * RATE\n    print(n)\n    return n\n\n\ntotal([1, 2])\n";
        std::fs::write(root.path().join("s.py"), script).unwrap();
        let s = Spectrum {
            tests: BTreeMap::from([(
                "command".to_string(),
                TestCoverage {
                    failed: true,
                    spawns: false,
                    lines: BTreeMap::from([(
                        "s.py".to_string(),
                        BTreeSet::from([1, 3, 6, 7, 8, 9, 10, 11, 14]),
                    )]),
                },
            )]),
        };
        let got: Vec<(u32, f64)> = rank_command(&s, root.path())
            .iter()
            .map(|s| (s.line, s.score))
            .collect();
        assert_eq!(
            got,
            vec![
                (7, 1.0),
                (8, 1.0),
                (9, 1.0),
                (11, 1.0),
                (3, 0.9),
                (10, 0.8),
                (14, 0.48),
                (1, 0.3),
                (6, 0.3)
            ]
        );
    }

    #[test]
    fn called_names_of_an_assertion() {
        assert_eq!(
            called_names("assert stats.median(xs) == round(2.5, 1)"),
            BTreeSet::from(["median".to_string(), "round".to_string()])
        );
    }
}
