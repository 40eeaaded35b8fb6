//! Fault localization on its own, over the wrong-output cases of `fixtures/bugs/`: one real
//! pytest run of each project under selfdebug's coverage plugin, ranked by Ochiai with the
//! traceback's focus, and the rank of the buggy line (the first line `expected.patch` changes)
//! must be exactly the one recorded here. A rank is `1 + ` the number of lines scoring strictly
//! higher (lines with equal scores share the best rank; `ties` counts the others at that score).
//!
//! `SELFDEBUG_BUGS=case,case` runs only some of them, as for `bugs_e2e`.

use std::path::{Path, PathBuf};

use selfdebug::localize::{self, Spectrum};
use selfdebug::runner::{self, RunSpec};

use crate::support;

/// case → (rank, ties) of the buggy line.
/// The raise (bank) and the recursive call (maths) outrank the condition that leads to them:
/// fewer passing tests run them. Ochiai cannot know which of the two a human would edit.
const EXPECTED: &[(&str, u32, u32)] = &[
    ("logic_off_by_one", 1, 1),
    ("search_after_index_rule", 1, 1),
    ("search_arith_operator", 1, 0),
    ("search_bool_operator", 1, 0),
    ("search_clamp_compare", 1, 0),
    ("search_hint_count_unittest", 1, 1),
    ("search_index_off_by_one_method", 1, 0),
    ("search_median_constant", 1, 0),
    ("search_missing_guard", 1, 0),
    ("search_missing_return_method", 1, 0),
    ("search_negated_condition_method", 1, 0),
    ("search_raise_wrong_branch", 2, 0),
    ("search_range_end", 1, 2),
    ("search_recursion_base_case", 2, 0),
    ("search_slice_tail", 1, 0),
    ("search_swapped_arguments", 1, 0),
    ("search_while_bound_method", 1, 3),
    ("search_wrong_constant", 1, 0),
    ("search_wrong_variable", 1, 0),
];

fn bugs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bugs")
}

/// The file and old line number of the first line the patch removes; for a patch that only
/// adds lines, the old line just after the first insertion.
fn buggy_line(patch: &str) -> (String, u32) {
    let file = patch
        .lines()
        .find_map(|l| l.strip_prefix("--- a/"))
        .expect("--- a/ line")
        .to_string();
    let mut old = 0u32;
    let mut first_insert = None;
    for l in patch.lines() {
        if let Some(h) = l.strip_prefix("@@ -") {
            old = h
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .expect("hunk header");
            continue;
        }
        if old == 0 || l.starts_with("---") || l.starts_with("+++") {
            continue;
        }
        match l.chars().next() {
            Some('-') => return (file, old),
            Some('+') => {
                first_insert.get_or_insert(old);
            }
            _ => old += 1,
        }
    }
    (file, first_insert.expect("a changed line"))
}

#[test]
fn buggy_lines_rank_where_recorded() {
    let only: Option<Vec<String>> = std::env::var("SELFDEBUG_BUGS")
        .ok()
        .map(|s| s.split(',').map(|c| c.trim().to_string()).collect());
    let python = runner::find_interpreter(Path::new("."), None)
        .and_then(|p| runner::prepare(&p))
        .expect("python3 with pytest");
    let xdg = Path::new(env!("CARGO_TARGET_TMPDIR")).join("localize-xdg-cache");
    std::fs::create_dir_all(&xdg).unwrap();
    let mut report = Vec::new();
    let mut wrong = Vec::new();
    for (case, rank, ties) in EXPECTED {
        if only.as_ref().is_some_and(|o| !o.iter().any(|c| c == case)) {
            continue;
        }
        let dir = bugs_dir().join(case);
        // A case the tool must not fix (its only passing patch copies the test's literal)
        // keeps the developer's fix as `reference.patch`: the bug's line is still the same.
        let patch = std::fs::read_to_string(dir.join("expected.patch"))
            .or_else(|_| std::fs::read_to_string(dir.join("reference.patch")))
            .unwrap_or_else(|e| panic!("{case}/expected.patch or reference.patch: {e}"));
        let (file, line) = buggy_line(&patch);
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join(case);
        support::copy_dir(&dir.join("project"), &root);
        let out = tmp.path().join("cover.json");
        let mut spec = RunSpec::new(&root);
        spec.timeout = std::time::Duration::from_secs(120);
        spec.env.push(("XDG_CACHE_HOME".into(), xdg.clone().into()));
        assert!(
            localize::cover(&mut spec, &out),
            "coverage plugin installed"
        );
        let run = runner::run_pytest(&python, &spec).unwrap();
        let spectrum = Spectrum::read(&out, &root).unwrap_or_else(|| panic!("{case}: no spectrum"));
        let failures = selfdebug::traceback::parse(&run.log(), &root)
            .unwrap()
            .failures;
        let first = failures
            .first()
            .unwrap_or_else(|| panic!("{case}: no failure"));
        let ranked = localize::rank(&spectrum, localize::focus(&root, first));
        let Some(hit) = ranked.iter().find(|s| s.file == file && s.line == line) else {
            wrong.push(format!(
                "{case}: {file}:{line} not ranked at all: {ranked:?}"
            ));
            continue;
        };
        let got_rank = 1 + ranked.iter().filter(|s| s.score > hit.score).count() as u32;
        let got_ties = ranked.iter().filter(|s| s.score == hit.score).count() as u32 - 1;
        report.push(format!(
            "{case:34} {file}:{line:<3} score {:.4} rank {got_rank} ties {got_ties} of {}",
            hit.score,
            ranked.len()
        ));
        if (got_rank, got_ties) != (*rank, *ties) {
            wrong.push(format!(
                "{case}: {file}:{line} rank {got_rank} ties {got_ties}, recorded {rank} {ties}"
            ));
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn buggy_line_of_a_patch() {
    let p = "--- a/m.py\n+++ b/m.py\n@@ -3,4 +3,4 @@\n a\n b\n-c\n+d\n";
    assert_eq!(buggy_line(p), ("m.py".to_string(), 5));
    let add = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,5 @@\n def f(x):\n+    if not x:\n+        return 0\n     return x\n";
    assert_eq!(buggy_line(add), ("m.py".to_string(), 2));
}

/// `sys.monitoring` (3.12+) and `sys.settrace` (before) record the same spectrum. Needs an
/// interpreter of 3.12 or later with pytest, named by `SELFDEBUG_PY312` (for example a venv:
/// `python3.12 -m venv /tmp/py312 && /tmp/py312/bin/pip install pytest`); without it the test
/// says so and checks nothing.
#[test]
fn monitoring_and_settrace_record_the_same_lines() {
    let Some(newer) = std::env::var_os("SELFDEBUG_PY312") else {
        eprintln!("SELFDEBUG_PY312 not set: the sys.monitoring path is not compared");
        return;
    };
    let xdg = Path::new(env!("CARGO_TARGET_TMPDIR")).join("localize-xdg-cache");
    std::fs::create_dir_all(&xdg).unwrap();
    // `None`: python3 as the tool finds it (3.11 here: sys.settrace).
    let spectrum_with = |python: Option<&Path>| {
        let python = runner::prepare(&runner::find_interpreter(Path::new("."), python).unwrap())
            .expect("pytest importable");
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        support::copy_dir(&bugs_dir().join("search_wrong_variable/project"), &root);
        let out = tmp.path().join("cover.json");
        let mut spec = RunSpec::new(&root);
        spec.env.push(("XDG_CACHE_HOME".into(), xdg.clone().into()));
        assert!(localize::cover(&mut spec, &out));
        runner::run_pytest(&python, &spec).unwrap();
        Spectrum::read(&out, &root).expect("spectrum")
    };
    let old = spectrum_with(None);
    let new = spectrum_with(Some(Path::new(&newer)));
    assert_eq!(old, new);
    let t = &new.tests["tests/test_gaps.py::test_largest_rise"];
    assert!(t.failed);
    assert_eq!(
        t.lines["gaps.py"].iter().copied().collect::<Vec<_>>(),
        vec![3, 4, 5, 6, 7, 8]
    );
}
