//! The supported range (docs/versions.md) on real interpreters from pyenv: a missing `:` is
//! fixed on Python 3.8, whose message is the generic `invalid syntax`; behind
//! `SELFDEBUG_SLOW_TESTS=1`, the oldest supported pair (Python 3.6, pytest 3.10: a `pytest.py`
//! module, no `pytest.__main__`) and the newest (Python 3.13, the latest pytest) fix the same
//! bugs, the worker serving where it can and saying why where it cannot. A version pyenv does
//! not have is skipped with the reason.

use std::path::Path;

use serde_json::Value;

use crate::support::{self, project::Project};
use support::venv::{pyenv, venv_with};

fn fix(p: &Project, python: &Path) -> Value {
    let out = p
        .cmd(&["fix", "--json", "--jobs", "1", "--python"])
        .arg(python)
        .output()
        .unwrap();
    support::assert_exit(&out, 0);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    // No bytecode in the project, on every version (before 3.8 there is no pycache prefix).
    let pycache: Vec<String> = support::project::snapshot(&p.root)
        .keys()
        .filter(|k| k.contains("__pycache__") || k.ends_with(".pyc"))
        .cloned()
        .collect();
    assert!(pycache.is_empty(), "{pycache:?}");
    support::project::json(&out)
}

const HEADER_BUG: &str =
    "def sign(x):\n    if x < 0  # negative\n        return -1\n    return 1\n";
const HEADER_FIXED: &str =
    "def sign(x):\n    if x < 0:  # negative\n        return -1\n    return 1\n";

fn header_project() -> Project {
    support::project::project(&[
        ("calc.py", HEADER_BUG),
        (
            "tests/test_calc.py",
            "from calc import sign\n\n\ndef test_sign():\n    assert sign(-3) == -1\n",
        ),
    ])
}

/// The missing colon is fixed by the safe rule although this Python words the error
/// `invalid syntax`; `notes` as expected for the worker on this version.
fn fixes_the_missing_colon(python: &Path, notes: &Value) {
    let p = header_project();
    let v = fix(&p, python);
    assert_eq!(p.read("calc.py"), HEADER_FIXED, "{v}");
    assert_eq!(v["patches"][0]["rules"][0], "syntax-missing-colon", "{v}");
    assert_eq!(&v["notes"], notes, "{v}");
}

fn fixes_the_demo(python: &Path, notes: &Value) {
    let p = support::project::demo_project();
    let v = fix(&p, python);
    assert_eq!(p.read("words.py"), support::project::DEMO_FIXED, "{v}");
    assert_eq!(&v["notes"], notes, "{v}");
}

#[test]
fn a_missing_colon_is_fixed_on_python_3_8_where_the_message_is_invalid_syntax() {
    let Some(base) = pyenv("3.8.18") else { return };
    let env = tempfile::tempdir().unwrap();
    let python = venv_with(&base, "py3.8-pytest", &["pytest"], &env.path().join("v"));
    // The worker serves 3.8: no note.
    fixes_the_missing_colon(&python, &serde_json::json!([]));
}

fn slow() -> bool {
    if support::slow_tests() {
        return true;
    }
    eprintln!("skipped: set SELFDEBUG_SLOW_TESTS=1 to run the version matrix");
    false
}

#[test]
fn the_oldest_supported_python_and_pytest_fix_the_bugs_with_cold_runs_and_say_why() {
    if !slow() {
        return;
    }
    let Some(base) = pyenv("3.6.15") else { return };
    let env = tempfile::tempdir().unwrap();
    let python = venv_with(
        &base,
        "py3.6-pytest3.10",
        &["pytest==3.10.1"],
        &env.path().join("v"),
    );
    let notes = serde_json::json!([
        "the warm worker is off: Python 3.6 is older than 3.8, the oldest the worker serves; \
         runs are cold"
    ]);
    fixes_the_demo(&python, &notes);
    fixes_the_missing_colon(&python, &notes);
}

#[test]
fn the_newest_python_and_pytest_fix_the_bugs_in_the_worker() {
    if !slow() {
        return;
    }
    let Some(base) = pyenv("3.13.0") else { return };
    let env = tempfile::tempdir().unwrap();
    let python = venv_with(&base, "py3.13-pytest", &["pytest"], &env.path().join("v"));
    fixes_the_demo(&python, &serde_json::json!([]));
    fixes_the_missing_colon(&python, &serde_json::json!([]));
}

/// The worker's children start pytest the way `python -m pytest` does, never through
/// `pytest.console_main()` (deprecated in pytest 9.1, gone in 10): under the default
/// interpreter's pytest (9.2 where this was written) no attempt's output carries a pytest
/// deprecation warning, and the worker served every run (no note).
#[test]
fn no_attempt_carries_a_pytest_deprecation_warning_under_the_worker() {
    let p = support::project::demo_project();
    let out = p.cmd(&["fix", "--json", "--jobs", "1"]).output().unwrap();
    support::assert_exit(&out, 0);
    let v = support::project::json(&out);
    assert_eq!(p.read("words.py"), support::project::DEMO_FIXED, "{v}");
    assert_eq!(v["notes"], serde_json::json!([]), "{v}");
    let attempts = v["attempt_records"].as_array().expect("attempt_records");
    assert!(!attempts.is_empty(), "{v}");
    for a in attempts {
        for tail in ["stdout_tail", "stderr_tail"] {
            let text = a[tail].as_str().unwrap();
            assert!(
                !text.contains("PytestRemovedIn") && !text.contains("PytestDeprecationWarning"),
                "attempt {}'s {tail}:\n{text}",
                a["attempt"]
            );
        }
    }
}
