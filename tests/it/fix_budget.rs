//! Budget hygiene (issue 14, family 7), on the `budget_group_*` cases of `fixtures/bugs`: two
//! tests fail the same way and no candidate fixes them. Each distinct edit is tried once, for the
//! first test of the group; the second shares its crash site, so it is worked on as one group
//! through the first (see `tests/groups.rs`): it gets the group's outcome and no pytest run, and
//! its reason says so. (`tests/bugs_e2e.rs` checks the same cases end with exit 4, untouched.)
//! Once every rule candidate was proven wrong the search over small edits takes its turn, still
//! for the first test only.

use crate::support;

use std::path::Path;

use support::project::project;

/// `selfdebug fix --dry-run --json` on a copy of the case's project.
fn run_case(case: &str) -> serde_json::Value {
    let src = support::fixtures().join("bugs").join(case).join("project");
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(&src).unwrap();
            files.push((
                rel.to_string_lossy().into_owned(),
                std::fs::read_to_string(entry.path()).unwrap(),
            ));
        }
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let p = project(&refs);
    // The search's own time is not what these cases measure: no load may cut it short.
    let out = p.run(&["fix", "--dry-run", "--json", "--search-time", "900"]);
    support::assert_exit(&out, 4);
    assert!(Path::new(&p.root).is_dir());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (test, outcome) of each attempt; every diff is distinct.
fn attempts(json: &serde_json::Value) -> Vec<(String, String)> {
    let records = json["attempt_records"].as_array().unwrap();
    let mut diffs: Vec<&str> = records
        .iter()
        .map(|a| a["diff"].as_str().unwrap())
        .collect();
    let n = diffs.len();
    diffs.sort_unstable();
    diffs.dedup();
    assert_eq!(diffs.len(), n, "an identical edit was tried twice");
    records
        .iter()
        .map(|a| {
            (
                a["test"].as_str().unwrap().to_string(),
                a["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn statuses(json: &serde_json::Value) -> Vec<(String, String, String)> {
    support::fields3(json, "failures", ["test", "status", "reason"])
}

#[test]
fn a_rejected_edit_is_not_retried_for_another_test_of_the_group() {
    let json = run_case("budget_group_nickname");
    let first = "tests/test_roster.py::test_tag_without_nickname";
    // The attempt counts bound only the model's calls: every rule candidate is tried (five
    // null guards, one of which moves the failure, whose three guards are tried next), then
    // the search's small edits; each distinct edit once, all for the first test.
    let tried = attempts(&json);
    assert_eq!(tried.len(), 42, "{tried:?}");
    for (i, (test, outcome)) in tried.iter().enumerate() {
        assert_eq!(test, first);
        let want = if i == 4 {
            "progressed"
        } else {
            "still_failing"
        };
        assert_eq!(outcome, want, "attempt {i}");
    }
    let why = "AttributeError: 'NoneType' object has no attribute 'title'; the rules' 5 \
               candidates did not pass; the search tried all 34 small edits at the suspicious \
               statements and none passed";
    assert_eq!(
        statuses(&json),
        vec![
            (first.into(), "not_fixed".into(), why.into()),
            (
                "tests/test_roster.py::test_tags_mixed".into(),
                "not_fixed".into(),
                format!("same crash site as {first}, worked on for the group: {why}")
            ),
        ]
    );
    // Nothing ranked was left untried.
    assert!(json["failures"][0].get("untried").is_none(), "{json}");
    // The baseline, one run per attempt, the moved failure's probe, the search's coverage run
    // and one more run of the first test: the second shares its crash site (one group: no run
    // of its own; without the hygiene it would cost every run again).
    assert_eq!(json["pytest_runs"], 46);
}

#[test]
fn unittest_group_in_a_method() {
    let json = run_case("budget_group_offset_unittest");
    let first = "tests/test_schedule.py::ScheduleTest::test_default_offset";
    let still = (first.to_string(), "still_failing".to_string());
    let tried = attempts(&json);
    // The rules' two null guards, then (both proven wrong) the search over small edits, all
    // for the first test: the fix needs new code (`step` as the default), so none passes.
    assert_eq!(tried[..2], [still.clone(), still]);
    let rules: Vec<&str> = json["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules[..2], ["null-guard-binop-right"; 2]);
    assert!(
        rules[2..].iter().all(|r| r.starts_with("search-")),
        "{rules:?}"
    );
    assert!(tried.iter().all(|(t, _)| t == first), "{tried:?}");
    let searched = tried.len() - 2;
    assert_eq!(searched, 24);
    let why = format!(
        "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'; the rules' 2 \
         candidates did not pass; the search tried all {searched} small edits at the \
         suspicious statements and none passed"
    );
    assert_eq!(
        statuses(&json),
        vec![
            (first.into(), "not_fixed".into(), why.clone()),
            (
                "tests/test_schedule.py::ScheduleTest::test_default_offset_single_slot".into(),
                "not_fixed".into(),
                format!("same crash site as {first}, worked on for the group: {why}")
            ),
        ]
    );
    // Baseline and 2 candidates (the baseline's facts stand in for the probe, and the group
    // spares the second test its own); the search's coverage run, one targeted run per edit,
    // and the covering passing tests' run for each of the two edits that made the failing test pass.
    assert_eq!(json["pytest_runs"], 3 + 1 + 24 + 2);
}
