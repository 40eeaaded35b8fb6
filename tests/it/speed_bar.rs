//! The speed bar (issue 23, item 2): with the failing log given, a fix of the 400-test shape's
//! bug (`text.split()[0]` on `None`, the test expecting `''`) makes the floor's runs and one
//! more: the log's test alone on the original code, the kept candidate's targeted run, one
//! confirming full run. The guard returning the test's expected value is ranked before the
//! or-default (whose `"".split()[0]` raises IndexError), so no wrong candidate, and no probe of
//! the failure it would move to, is run. Real pytest, worker on and off.

use crate::support;
use support::project::{json, project, Project};

const TEXT: &str = "def headline(text):\n    return text.split()[0]\n";
const FIXED: &str =
    "def headline(text):\n    if text is None:\n        return ''\n    return text.split()[0]\n";
const TESTS: &str = "from pkg.text import headline\n\n\ndef test_headline():\n    assert headline('a b') == 'a'\n\n\ndef test_none():\n    assert headline(None) == ''\n";

fn headline_project() -> Project {
    project(&[
        (
            "pytest.ini",
            "[pytest]\ntestpaths = tests\npythonpath = .\n",
        ),
        ("pkg/__init__.py", ""),
        ("pkg/text.py", TEXT),
        ("tests/test_text.py", TESTS),
    ])
}

fn fixed_in_three_runs(worker: &str) {
    let p = headline_project();
    let log = p.pytest_log(&[]);
    let args = ["fix", "--json", "--worker", worker, support::path_str(&log)];
    let out = p
        .cmd(&args)
        .env_remove("SELFDEBUG_BASELINE")
        .output()
        .unwrap();
    support::check_json_output(&args, &out.stdout);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{j:#}");
    assert_eq!(j["final_status"], "pass");
    assert_eq!(p.read("pkg/text.py"), FIXED);
    // The log's test alone, the kept candidate's targeted run, the confirming full run.
    assert_eq!(j["pytest_runs"], 3, "{j:#}");
    let attempts = j["attempt_records"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{j:#}");
    assert_eq!(attempts[0]["outcome"], "accepted");
    assert_eq!(attempts[0]["title"], "return '' early when `text` is None");
    // The crash-frame facts of the targeted baseline stood in for the probe.
    assert_eq!(j["phases_ms"]["probe_ms"], 0, "{j:#}");
    assert_eq!(j["failures"][0]["probe"]["source"], "plugin");
    assert_eq!(j["notes"], serde_json::json!([]));
}

#[test]
fn the_expected_guard_is_proven_first_with_the_worker() {
    fixed_in_three_runs("auto");
}

#[test]
fn the_expected_guard_is_proven_first_cold() {
    fixed_in_three_runs("off");
}
