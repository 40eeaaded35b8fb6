//! The version matrix (issue 23, docs/versions.md): a representative subset of the
//! `fixtures/bugs` corpus ([`SUBSET`], every family), exactly as `bugs_e2e` checks it (same patch bytes, same exit codes, restored trees, the dry run),
//! on the oldest and the newest supported Python and pytest, from pyenv interpreters in venvs
//! whose pytest comes from a wheelhouse downloaded once (offline afterwards):
//!
//! | Python | pytest | the worker |
//! | --- | --- | --- |
//! | 3.6 (oldest) | 3.10.1 (oldest) | off: older than 3.8; cold `python -m pytest`, a note says so |
//! | 3.9 (the newest pytest 3.10 runs on) | 3.10.1 | serves |
//! | 3.13 (newest) | the latest (9.x; pytest 9 needs Python ≥ 3.10) | serves |
//!
//! Besides every case's outcome, every report must say the worker's state the same way (the
//! note on 3.6, no worker note elsewhere: it served every run) and no attempt's output may
//! carry a pytest deprecation warning (the worker uses only supported entry points).
//!
//! Slow: 152 case runs (51 cases; 45 when the times below were measured); on 2 idle cores the
//! 3.9 row takes 55 s, the 3.13 row 45 s, the 3.6 row
//! (cold runs) ~7 min (docs/versions.md has the measurements); so behind
//! `SELFDEBUG_SLOW_TESTS=1` (`.ci/run` sets it). A row whose Python is neither in pyenv nor on
//! `PATH` (`python3.6`) is skipped with the reason; `SELFDEBUG_MATRIX=3.6,3.13` runs only those
//! rows, `SELFDEBUG_BUGS=a,b` only those cases (as for `bugs_e2e`), `SELFDEBUG_MATRIX_ALL=1`
//! the whole corpus instead of the subset, `SELFDEBUG_MATRIX_ALL=rest` the cases outside it
//! (how docs/versions.md's full-corpus table was made).

use std::path::PathBuf;

use serde_json::Value;

use crate::bugs_e2e;
use crate::support::{self, venv};

struct Entry {
    /// A pyenv version prefix (`3.6` takes the newest `3.6.*` pyenv has).
    python: &'static str,
    /// The pip requirement for pytest.
    pytest: &'static str,
    /// Whether the warm worker serves this pair (docs/versions.md).
    worker: bool,
    /// Cases that cannot run on this pair, each with why.
    excluded: &'static [(&'static str, &'static str)],
}

/// The corpus's representative subset the matrix runs: at least one case of every family of
/// `fixtures/bugs` (the name's prefix), every case whose failure Python words differently
/// across versions (syntax and indentation errors, `cannot import name`, unbound locals,
/// missing arguments, str concatenation, unpacking), a hang, search cases (fixed and given
/// up) and the escalated one, and six more that passed the whole-corpus run on 3.6 and 3.9
/// (docs/versions.md). The whole corpus on three rows would take ~35 min of CI.
const SUBSET: &[&str] = &[
    "attr_private_stopwatch",
    "attr_typo_method",
    "binop_left_function",
    "budget_group_nickname",
    "call_callback_function",
    "compare_sort_key_method",
    "enc_bom_name",
    "enc_latin1_key",
    "env_missing_file",
    "exc_regex_name_class",
    "flow_int_timeout_method",
    "guard_or_default_method",
    "hang_while_not_equal",
    "helper_parser_missing_return",
    "import_moved_name",
    "import_typo_relative_crlf",
    "indent_expected_block_crlf",
    "indent_unexpected_block",
    "index_numbered_crlf",
    "iterate_for_loop",
    "iterate_yield_from_method",
    "join_tags_method",
    "key_optional_fee",
    "len_function",
    "logic_off_by_one",
    "multi_shifted_lines",
    "name_forgot_self_crlf",
    "name_missing_project_import",
    "name_missing_stdlib_import",
    "name_typo_function",
    "name_used_import_alias",
    "notfound_index_method",
    "raises_none_crash_method",
    "raises_regex_empty_crlf",
    "raises_unittest_none_method",
    "search_giveup_sort_order",
    "search_hang_missing_step",
    "search_missing_guard",
    "search_wrong_constant",
    "subscript_loop_skip",
    "subtest_unittest_labels",
    "syntax_missing_colon",
    "syntax_missing_comma",
    "syntax_unclosed_crlf",
    "type_concat_receipt",
    "type_missing_argument",
    "type_range_str_size",
    "unbound_branch_function",
    "unbound_counter_global_crlf",
    "unpack_for_pairs_function",
    "zerodiv_average_function",
];

const MATRIX: &[Entry] = &[
    Entry {
        python: "3.6",
        pytest: "pytest==3.10.1",
        worker: false,
        excluded: &[(
            "name_missing_stdlib_import",
            "`from __future__ import annotations` is Python 3.7+",
        )],
    },
    Entry {
        python: "3.9",
        pytest: "pytest==3.10.1",
        worker: true,
        excluded: &[],
    },
    Entry {
        python: "3.13",
        pytest: "pytest",
        worker: true,
        excluded: &[],
    },
];

/// The newest `PREFIX.*` pyenv has (`3.6` → `3.6.15`), else `pythonPREFIX` on `PATH`, or
/// `None` after saying why.
fn pyenv_minor(prefix: &str) -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let patch =
        |name: &str| -> Option<u32> { name.strip_prefix(prefix)?.strip_prefix('.')?.parse().ok() };
    let newest = std::fs::read_dir(root.join("versions"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| Some((patch(&name)?, name)))
        .max()
        .map(|(_, name)| name);
    match newest {
        Some(version) => venv::pyenv(&version),
        None => {
            // Else `pythonX.Y` on PATH (what CI's setup-python installs).
            let on_path = std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join(format!("python{prefix}")))
                    .find(|p| p.is_file())
            });
            if on_path.is_none() {
                eprintln!(
                    "skipped: no Python {prefix}.x in pyenv (under {}) nor python{prefix} on PATH",
                    root.join("versions").display()
                );
            }
            on_path
        }
    }
}

/// What is wrong with one case's report on `entry`, beyond what `bugs_e2e` checks.
fn report_problems(entry: &Entry, report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .map(|n| n.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let worker_notes: Vec<&&str> = notes.iter().filter(|n| n.contains("worker")).collect();
    if entry.worker {
        if !worker_notes.is_empty() {
            out.push(format!("the worker did not serve: {worker_notes:?}"));
        }
    } else {
        let want = format!(
            "the warm worker is off: Python {} is older than 3.8, the oldest the worker \
             serves; runs are cold",
            entry.python
        );
        if worker_notes != [&want.as_str()] {
            out.push(format!("want the note {want:?}, got {notes:?}"));
        }
    }
    for attempt in report["attempt_records"].as_array().into_iter().flatten() {
        for tail in ["stdout_tail", "stderr_tail"] {
            let text = attempt[tail].as_str().unwrap_or_default();
            if text.contains("PytestRemovedIn") || text.contains("PytestDeprecationWarning") {
                out.push(format!(
                    "attempt {}: a pytest deprecation warning in its {tail}:\n{text}",
                    attempt["attempt"]
                ));
            }
        }
    }
    out
}

#[test]
fn every_case_of_the_matrix_subset_is_in_the_corpus() {
    // Every name in the subset is a case of the corpus (a renamed case must not silently
    // leave the matrix).
    let all: Vec<String> = bugs_e2e::cases().into_iter().map(|c| c.name).collect();
    if std::env::var_os("SELFDEBUG_BUGS").is_none() {
        for name in SUBSET {
            assert!(
                all.iter().any(|c| c == name),
                "{name} is not in fixtures/bugs"
            );
        }
    }
}

#[test]
fn the_bug_corpus_ends_as_expected_on_the_oldest_and_newest_python_and_pytest() {
    if !support::slow_tests() {
        eprintln!("skipped: set SELFDEBUG_SLOW_TESTS=1 to run the version matrix");
        return;
    }
    let mut failed = Vec::new();
    let only = std::env::var("SELFDEBUG_MATRIX").ok();
    let all = std::env::var("SELFDEBUG_MATRIX_ALL").unwrap_or_default();
    for entry in MATRIX {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|p| p.trim() == entry.python))
        {
            continue;
        }
        let Some(base) = pyenv_minor(entry.python) else {
            continue;
        };
        let tag = format!("py{}-{}", entry.python, entry.pytest.replace("==", ""));
        // Under the target dir, not a temp dir: one venv per pair, the same path every time,
        // so the cases' caches (keyed by the interpreter's path) are reused between runs.
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("matrix-venv-{tag}"));
        let _ = std::fs::remove_dir_all(&dir);
        let python = venv::venv_with(&base, &tag, &[entry.pytest], &dir);
        let cases: Vec<_> = bugs_e2e::cases()
            .into_iter()
            .filter(|c| match all.as_str() {
                "1" => true,
                "rest" => !SUBSET.contains(&c.name.as_str()),
                _ => SUBSET.contains(&c.name.as_str()),
            })
            .filter(|c| !entry.excluded.iter().any(|(name, _)| *name == c.name))
            .collect();
        let started = std::time::Instant::now();
        let (fails, reports) = bugs_e2e::run(&cases, Some(&python));
        eprintln!(
            "version matrix: Python {} ({}), {}: {} cases, {} failed, {} s",
            entry.python,
            base.display(),
            entry.pytest,
            cases.len(),
            fails.len(),
            started.elapsed().as_secs()
        );
        failed.extend(fails.into_iter().map(|f| format!("[{tag}] {f}")));
        for report in &reports {
            let v: Value = serde_json::from_slice(report).unwrap_or(Value::Null);
            // The case's copy is named after it.
            let root = v["root"].as_str().unwrap_or("?");
            let case = root.rsplit('/').next().unwrap_or(root);
            for problem in report_problems(entry, &v) {
                failed.push(format!("[{tag}] == {case}: {problem}"));
            }
        }
        let docs: Vec<&[u8]> = reports.iter().map(Vec::as_slice).collect();
        support::assert_valid("fix.schema.json", None, &docs);
    }
    assert!(failed.is_empty(), "\n{}", failed.join("\n\n"));
}
