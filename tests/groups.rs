//! Many failures, one cause (issue 13): failures are grouped by crash site and a group is
//! worked on through one representative; several fixes share one confirming full run. Real
//! pytest on throwaway projects; every run counted.

mod support;

use serde_json::{json, Value};
use support::project::{json as json_of, project};

/// One bug (`weights[name]` on a name that is not there) failing 30 parametrized tests, each
/// with its own key in the message, and one test that passes.
fn thirty() -> support::project::Project {
    project(&[
        ("conftest.py", ""),
        (
            "core.py",
            "def score(weights, name):\n    return weights[name] * 2\n",
        ),
        (
            "tests/test_core.py",
            "import pytest\n\nfrom core import score\n\n\n\
             @pytest.mark.parametrize(\"i\", range(30))\n\
             def test_missing(i):\n    assert score({}, f\"user_{i}\") == 0\n\n\n\
             def test_present():\n    assert score({\"a\": 2}, \"a\") == 4\n",
        ),
    ])
}

#[test]
fn one_bug_thirty_failures_one_group() {
    let p = thirty();
    let out = p.run(&["fix", "--json"]);
    let v = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["final_status"], "pass", "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        p.read("core.py"),
        "def score(weights, name):\n    return weights.get(name, 0) * 2\n"
    );
    let tests: Vec<String> = (0..30)
        .map(|i| format!("tests/test_core.py::test_missing[{i}]"))
        .collect();
    assert_eq!(
        v["groups"],
        json!([{
            "key": {"file": "core.py", "line": 2, "exc_type": "KeyError", "msg_shape": "<s>"},
            "tests": tests,
            "representative": "tests/test_core.py::test_missing[0]",
            "status": "fixed",
        }])
    );
    // Every failure keeps its own record, and points at its group.
    let failures = v["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 30);
    assert_eq!(failures[0]["status"], "fixed");
    assert_eq!(failures[0]["msg"], "'user_0'");
    for (i, f) in failures.iter().enumerate().skip(1) {
        assert_eq!(f["test"], tests[i]);
        assert_eq!(f["msg"], format!("'user_{i}'"));
        assert_eq!(f["status"], "fixed_by_another_patch");
        assert_eq!(f["group"], 0);
    }
    let outcomes: Vec<&Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["outcome"])
        .collect();
    assert_eq!(outcomes, vec!["accepted"]);
    // Baseline, the representative's probe, its targeted run, the other 29 in one run, and
    // the full suite: one probe for 30 failures, and no run per failure.
    assert_eq!(v["pytest_runs"], 5);
    assert!(
        stderr.contains(
            "selfdebug: group 1/1: 30 tests at core.py:2 KeyError: <s> (representative \
             tests/test_core.py::test_missing[0]): fixed\n"
        ),
        "{stderr}"
    );
}
