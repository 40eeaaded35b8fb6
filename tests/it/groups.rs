//! Many failures, one cause (issue 13): failures are grouped by crash site and a group is
//! worked on through one representative; several fixes share one confirming full run. Real
//! pytest on throwaway projects; every run counted.

use crate::support;

use serde_json::{json, Value};
use support::project::{json as json_of, project};

/// One bug (`weights[name]` on a name that is not there) failing `n` parametrized tests, each
/// with its own key in the message, and one test that passes.
fn missing_keys(n: usize) -> support::project::Project {
    let tests = format!(
        "import pytest\n\nfrom core import score\n\n\n\
         @pytest.mark.parametrize(\"i\", range({n}))\n\
         def test_missing(i):\n    assert score({{}}, f\"user_{{i}}\") == 0\n\n\n\
         def test_present():\n    assert score({{\"a\": 2}}, \"a\") == 4\n"
    );
    project(&[
        ("conftest.py", ""),
        ("core.py", SCORE),
        ("tests/test_core.py", &tests),
    ])
}

/// The group of `n` `missing_keys` tests as the JSON reports it, fixed.
fn missing_keys_group(n: usize) -> Value {
    let tests: Vec<String> = (0..n)
        .map(|i| format!("tests/test_core.py::test_missing[{i}]"))
        .collect();
    json!([{
        "key": {"file": "core.py", "line": 2, "exc_type": "KeyError", "msg_shape": "<s>"},
        "tests": tests,
        "representative": "tests/test_core.py::test_missing[0]",
        "status": "fixed",
    }])
}

#[test]
fn one_bug_thirty_failures_one_group() {
    let p = missing_keys(30);
    let out = p.run(&["fix", "--json"]);
    let v = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["final_status"], "pass", "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(p.read("core.py"), SCORE_FIXED);
    let group = missing_keys_group(30);
    assert_eq!(v["groups"], group);
    let tests = group[0]["tests"].as_array().unwrap();
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
    // Baseline (its crash-frame facts stand in for the representative's probe), its targeted
    // run, the other 29 in one run, and the full suite: no run per failure.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 4 + 1);
    assert!(
        stderr.contains(
            "selfdebug: group 1/1: 30 tests at core.py:2 KeyError: <s> (representative \
             tests/test_core.py::test_missing[0]): fixed\n"
        ),
        "{stderr}"
    );
}

/// A small group (three tests, one bug) is checked in the candidate's full run, which holds its
/// tests anyway: no run of its own, unlike the thirty above.
#[test]
fn a_small_group_is_checked_in_the_full_run() {
    let p = missing_keys(3);
    let out = p.run(&["fix", "--json"]);
    let v = json_of(&out);
    assert_eq!(
        v["final_status"],
        "pass",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("core.py"), SCORE_FIXED);
    assert_eq!(v["groups"], missing_keys_group(3));
    let statuses: Vec<&Value> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["status"])
        .collect();
    assert_eq!(
        statuses,
        ["fixed", "fixed_by_another_patch", "fixed_by_another_patch"]
    );
    assert_eq!(
        support::fields2(&v, "attempt_records", ["outcome", "test"]),
        [(
            "accepted".to_string(),
            "tests/test_core.py::test_missing[0]".to_string()
        )]
    );
    // Baseline (its facts stand in for the probe), the representative's run, the full suite.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 3 + 1);
}

const SCORE: &str = "def score(weights, name):\n    return weights[name] * 2\n";
const SCORE_FIXED: &str = "def score(weights, name):\n    return weights.get(name, 0) * 2\n";

/// The demo bug in `words.py` and the `score` bug in `score.py`: two independent failures in
/// two files.
fn two_bugs(extra: &[(&str, &str)]) -> support::project::Project {
    let mut files = vec![
        ("conftest.py", ""),
        ("words.py", support::project::DEMO_MODULE),
        ("score.py", SCORE),
        (
            "tests/test_a_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_words():\n    assert to_upper(\"a  b\") == \"A B\"\n",
        ),
        (
            "tests/test_b_score.py",
            "from score import score\n\n\ndef test_missing():\n    assert score({}, \"x\") == 0\n",
        ),
    ];
    files.extend_from_slice(extra);
    project(&files)
}

fn outcomes(v: &Value) -> Vec<(String, String, Option<String>)> {
    v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["test"].as_str().unwrap().to_string(),
                a["outcome"].as_str().unwrap().to_string(),
                a["confirmed_by"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn statuses(v: &Value) -> Vec<(String, String)> {
    v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["test"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn two_independent_bugs_share_one_full_run() {
    let p = two_bugs(&[]);
    let out = p.run(&["fix", "--json"]);
    let v = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["final_status"], "pass", "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(p.read("words.py"), support::project::DEMO_FIXED);
    assert_eq!(p.read("score.py"), SCORE_FIXED);
    let batch = Some("batch".to_string());
    assert_eq!(
        outcomes(&v),
        vec![
            (
                "tests/test_a_words.py::test_none".into(),
                "accepted".into(),
                batch.clone()
            ),
            (
                "tests/test_b_score.py::test_missing".into(),
                "accepted".into(),
                batch
            ),
        ]
    );
    assert_eq!(
        statuses(&v),
        vec![
            ("tests/test_a_words.py::test_none".into(), "fixed".into()),
            ("tests/test_b_score.py::test_missing".into(), "fixed".into()),
        ]
    );
    // Baseline; a targeted run for each failure, and a probe for the second (the first has
    // the baseline's facts; the second's code has a pending fix); one full run for both (one
    // by one it takes a full run each).
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 5 + 2);
    assert!(
        stderr.contains("confirmed with the other pending fixes in one full run"),
        "{stderr}"
    );
}

#[test]
fn a_batch_that_breaks_falls_back_to_one_by_one_and_keeps_the_right_fix() {
    // `strict` needs `score` to raise for a missing name: the `score` fix passes its own
    // test but breaks `test_both`, which also needs the `words` fix (it fails at the same
    // place as `test_none` before: one group). The batch's run fails; one by one, the words
    // fix is kept and the score fix dropped.
    let p = two_bugs(&[
        (
            "strict.py",
            "from score import score\n\n\ndef strict(weights, name):\n    try:\n        return score(weights, name)\n    except KeyError:\n        return \"missing\"\n",
        ),
        (
            "tests/test_both.py",
            "from strict import strict\nfrom words import to_upper\n\n\ndef test_both():\n    assert to_upper(None) == \"\"\n    assert strict({}, \"k\") == \"missing\"\n",
        ),
    ]);
    // The search that ends the score fix's story runs to the end, whatever the load.
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let v = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["final_status"], "partial", "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(p.read("words.py"), support::project::DEMO_FIXED);
    assert_eq!(p.read("score.py"), SCORE);
    let recs = outcomes(&v);
    let one = Some("one_by_one".to_string());
    assert_eq!(
        recs[..2],
        [
            (
                "tests/test_a_words.py::test_none".into(),
                "accepted".into(),
                one.clone()
            ),
            (
                "tests/test_b_score.py::test_missing".into(),
                "new_failures".into(),
                one
            ),
        ]
    );
    // Judged on top of the kept words fix: `test_both` passed there and fails with it.
    assert_eq!(
        v["attempt_records"][1]["broke"],
        json!(["tests/test_both.py::test_both"])
    );
    // The score fix was dropped, its edit remembered: worked on again alone, its next
    // candidate breaks the same test.
    assert_eq!(
        recs[2],
        (
            "tests/test_b_score.py::test_missing".into(),
            "new_failures".into(),
            None
        )
    );
    // Both rule candidates proven wrong, the search over small edits has its turn (it finds
    // nothing: `strict` and `score` disagree on what a missing name means).
    let rules: Vec<&str> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules[3..].iter().all(|r| r.starts_with("search-")),
        "{rules:?}"
    );
    assert_eq!(recs.len(), 3 + 14);
    assert_eq!(
        statuses(&v),
        vec![
            ("tests/test_a_words.py::test_none".into(), "fixed".into()),
            (
                "tests/test_both.py::test_both".into(),
                "fixed_by_another_patch".into()
            ),
            (
                "tests/test_b_score.py::test_missing".into(),
                "not_fixed".into()
            ),
        ]
    );
    assert_eq!(
        v["failures"][2]["reason"],
        "KeyError: 'x'; the rules' 2 candidates did not pass; the search tried all 14 small \
         edits at the suspicious statements and none passed"
    );
    // Baseline 1; words: targeted, group run (test_both) 2 (the baseline's facts stand in for
    // its probe); score: probe, targeted 2; the batch's full run 1; one by one: words alone,
    // words + score 2; score again: probe, its next candidate's targeted and full runs 3; the
    // search: its coverage run, 14 targeted runs (the crash frame's runtime types rule out the
    // variables of another type), and the covering passing tests' run of the one edit that
    // made the test pass 16.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 11 + 16 + 3);
    assert!(
        stderr.contains("(dropped from the batch: confirmed one by one)"),
        "{stderr}"
    );
    assert_eq!(
        v["groups"][0]["tests"],
        json!([
            "tests/test_a_words.py::test_none",
            "tests/test_both.py::test_both"
        ])
    );
}

#[test]
fn a_dry_run_batches_too_and_leaves_the_tree_as_it_was() {
    let p = two_bugs(&[]);
    let before = p.snapshot();
    let out = p.run(&["fix", "--dry-run", "--json"]);
    let v = json_of(&out);
    assert_eq!(
        v["final_status"],
        "pass",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    support::project::assert_same(&before, &p.snapshot());
    let files: Vec<&str> = v["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["score.py", "words.py"]);
    // As without --dry-run: the first failure's probe is the baseline's facts.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 5 + 2);
    assert_eq!(v["backups"], json!([]));
    let confirmed: Vec<&Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["confirmed_by"])
        .collect();
    assert_eq!(confirmed, ["batch", "batch"]);
}
