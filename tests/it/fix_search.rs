//! The search over small edits through the CLI, with real pytest: what the JSON says about a
//! search patch (rule, title with the covering tests, unsafe, review and the overfitting
//! warning), the `suspicious` lines of a failure it gives up on (the files restored byte for
//! byte), and `--safe-only`, under which it never runs.

use crate::support;

use support::project::{assert_same, json, project, snapshot};

const STATS: &str = "def median(values):\n    ordered = sorted(values)\n    n = len(ordered)\n    mid = n // 2\n    if n % 2 == 1:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 3\n";
const STATS_TESTS: &str = "from stats import median\n\n\ndef test_even():\n    assert median([1, 2, 3, 4]) == 2.5\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n";

#[test]
fn a_search_patch_says_how_many_tests_decided() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("stats.py", STATS),
        ("tests/test_stats.py", STATS_TESTS),
    ]);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let v = json(&out);
    assert_eq!(
        p.read("stats.py"),
        STATS.replace(") / 3\n", ") / 2\n"),
        "{stderr}"
    );
    let patch = &v["patches"][0];
    assert_eq!(patch["rules"], serde_json::json!(["search-plus-minus-one"]));
    assert_eq!(
        patch["titles"],
        serde_json::json!(["`3` → `2` at stats.py:7 (1 test covers the line)"])
    );
    assert_eq!(patch["applicability"], "unsafe");
    assert_eq!(
        patch["review"],
        serde_json::json!([
            "a search over small edits guessed intent from the tests: check that the change is \
             what the code means, not only what the tests pin",
            "only one test covers the edited line: the patch may fit that test and not the \
             intent (overfitting); add a test that pins the behaviour"
        ])
    );
    // The even branch runs in the failing test only: it ranks first, and is reported.
    let failure = &v["failures"][0];
    assert_eq!(failure["status"], "fixed");
    assert_eq!(
        failure["suspicious"][0],
        serde_json::json!({"file": "stats.py", "line": 7, "score": 1.0})
    );
    assert!(
        stderr.contains("  suspicious lines: stats.py:7 (1.00)"),
        "{stderr}"
    );
}

#[test]
fn a_search_that_gives_up_reports_the_suspicious_lines_and_restores_every_byte() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        (
            "tags.py",
            "def unique_tags(tags):\n    return [t.lower() for t in tags]\n",
        ),
        (
            "tests/test_tags.py",
            "from tags import unique_tags\n\n\ndef test_repeats():\n    assert unique_tags([\"a\", \"A\"]) == [\"a\"]\n\n\ndef test_lower():\n    assert unique_tags([\"X\"]) == [\"x\"]\n",
        ),
    ]);
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let f = &v["failures"][0];
    assert_eq!(f["status"], "not_fixed");
    let tried = v["attempt_records"].as_array().unwrap().len();
    assert!(tried > 0, "{v}");
    assert_eq!(
        f["reason"],
        format!(
            "wrong output: the test's own check failed in tests/test_tags.py; the search tried \
             all {tried} small edits at the suspicious statements and none passed"
        )
    );
    assert_eq!(
        f["suspicious"],
        // Run by the failing test and by the passing one: 1 / sqrt(1 × 2), to 4 decimals.
        serde_json::json!([{"file": "tags.py", "line": 2, "score": (std::f64::consts::FRAC_1_SQRT_2 * 1e4).round() / 1e4}])
    );
    assert!(v["patches"].as_array().unwrap().is_empty());
}

#[test]
fn safe_only_never_searches() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("stats.py", STATS),
        ("tests/test_stats.py", STATS_TESTS),
    ]);
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json", "--safe-only"]);
    assert_eq!(out.status.code(), Some(4));
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    assert_eq!(v["attempt_records"], serde_json::json!([]));
    assert_eq!(
        v["failures"][0]["reason"],
        "tests/test_stats.py is a test file; pass --allow-tests to let selfdebug edit it"
    );
    assert!(v["failures"][0].get("suspicious").is_none());
}

const GRADES: &str = "PASS_MARK = 60\n\n\ndef count_passing(scores, mark=PASS_MARK):\n    \"\"\"How many scores reach the mark (a score equal to the mark passes).\"\"\"\n    passed = 0\n    for score in scores:\n        if score > mark:\n            passed += 1\n    return passed\n";
const GRADES_TESTS: &str = "import unittest\n\nfrom grades import count_passing\n\n\nclass CountPassing(unittest.TestCase):\n    def test_mark_itself_passes(self):\n        self.assertEqual(count_passing([40, 60, 75]), 2)\n\n    def test_all_above(self):\n        self.assertEqual(count_passing([61, 90]), 2)\n\n    def test_none(self):\n        self.assertEqual(count_passing([]), 0)\n";

/// `assertEqual(..., 2)` failing with `1 != 2`: the edits whose effect fits go first (`passed = 1`
/// is predicted, the boundary flip and ±1 are consistent), a few candidates past the first that
/// passes are compared, and the smallest edit among the equally behaved ones is kept; the test
/// that ruled out the predicted guesses is named.
#[test]
fn expected_values_order_the_search_and_the_tests_that_decided_are_named() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("grades.py", GRADES),
        ("tests/test_grades.py", GRADES_TESTS),
    ]);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        p.read("grades.py"),
        GRADES.replace("score > mark", "score >= mark"),
        "{stderr}"
    );
    let v = json(&out);
    let all_above = "tests/test_grades.py::CountPassing::test_all_above";
    let got: Vec<serde_json::Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| serde_json::json!([a["title"], a["outcome"], a["search"], a["broke"]]))
        .collect();
    let consistent = serde_json::json!({"hint": "consistent"});
    assert_eq!(
        got,
        vec![
            serde_json::json!(["`0` → `1` at grades.py:6 (3 tests cover the line)", "new_failures", {"hint": "predicted"}, [all_above]]),
            serde_json::json!(["`>` → `>=` at grades.py:8 (2 tests cover the line)", "accepted",
                {"hint": "consistent", "plausible": 3, "changed": [], "decided_by": [all_above]}, []]),
            serde_json::json!([
                "`1` → `0` at grades.py:9 (2 tests cover the line)",
                "still_failing",
                consistent,
                []
            ]),
            serde_json::json!(["`mark` → `mark - 1` at grades.py:8 (2 tests cover the line)", "plausible", {"hint": "consistent", "changed": []}, []]),
            serde_json::json!([
                "`score` → `score - 1` at grades.py:8 (2 tests cover the line)",
                "still_failing",
                consistent,
                []
            ]),
            serde_json::json!([
                "`mark` → `mark + 1` at grades.py:8 (2 tests cover the line)",
                "still_failing",
                consistent,
                []
            ]),
            serde_json::json!(["`score` → `score + 1` at grades.py:8 (2 tests cover the line)", "plausible", {"hint": "consistent", "changed": []}, []]),
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("`score` → `score + 1` at grades.py:8 (2 tests cover the line): passed too; not kept (another changes fewer behaviours or is smaller)"),
        "{stderr}"
    );
    // `passed += 1` → `passed += 2` writes the test's expected 2 into a module that holds no 2:
    // left out before any run (issue 33); `passed = 0` → `1` may stay, the module holds a 1.
    assert_eq!(v["failures"][0]["test_literals"], 1);
}

const LOOKUP: &str = "def index_of(items, wanted):\n    \"\"\"Position of the first `wanted` in `items`, or -1.\"\"\"\n    i = 0\n    while i < len(items):\n        if items[i] == wanted:\n            return i\n    return -1\n";

/// A test stopped by the per-test limit, stuck at a `while` whose variable never moves: the
/// search looks at that loop (header first, no coverage run) and the missing step is proven.
#[test]
fn a_hang_gets_the_search_at_the_loop_it_was_stuck_in() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("lookup.py", LOOKUP),
        (
            "tests/test_lookup.py",
            "from lookup import index_of\n\n\ndef test_found_later():\n    assert index_of([3, 5, 7], 7) == 2\n\n\ndef test_found_first():\n    assert index_of([3], 3) == 0\n",
        ),
    ]);
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--test-timeout",
        "3",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        p.read("lookup.py"),
        LOOKUP.replace("return i\n", "return i\n        i += 1\n"),
        "{stderr}"
    );
    let v = json(&out);
    let f = &v["failures"][0];
    assert_eq!(f["category"], "timeout");
    assert_eq!(f["status"], "fixed");
    assert_eq!(
        f["suspicious"],
        serde_json::json!([
            {"file": "lookup.py", "line": 4, "score": 1.0},
            {"file": "lookup.py", "line": 5, "score": 0.99},
            {"file": "lookup.py", "line": 6, "score": 0.98}
        ])
    );
    let a = &v["attempt_records"][0];
    assert_eq!(
        serde_json::json!([a["title"], a["rule"], a["outcome"], a["search"]]),
        serde_json::json!([
            "add `i += 1` at the end of the loop at lookup.py:4 (a hang: no coverage run)",
            "search-plus-minus-one",
            "accepted",
            {"plausible": 1}
        ])
    );
    assert_eq!(v["attempt_records"].as_array().unwrap().len(), 1);
}

const TABLE: &str = "\"\"\"Columns of a table given as a list of rows.\"\"\"\n\n\ndef column(rows, index):\n    return [row[index] for row in rows]\n\n\ndef last_column(rows):\n    width = len(rows[0]) + 1\n    return column(rows, width - 1)\n";
const TABLE_TESTS: &str = "from table import column, last_column\n\n\ndef test_column_picks_one_cell_per_row():\n    assert column([[1, 2], [3, 4]], 0) == [1, 3]\n\n\ndef test_last_column():\n    assert last_column([[1, 2, 5], [3, 4, 6]]) == [5, 6]\n";

fn outcomes(v: &serde_json::Value) -> Vec<(String, String)> {
    support::fields2(v, "attempt_records", ["rule", "outcome"])
}

/// An `IndexError` raised in a helper because the caller computed the index one too far: the
/// index rule's guard is proven wrong first, then the search finds the caller's `+ 1`; with the
/// search's right family left out, it gives up with both halves in the reason.
#[test]
fn the_search_takes_over_when_every_rule_candidate_was_proven_wrong() {
    let files = [
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("table.py", TABLE),
        ("tests/test_table.py", TABLE_TESTS),
    ];
    let p = project(&files);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        p.read("table.py"),
        TABLE.replace("len(rows[0]) + 1", "len(rows[0])")
    );
    let v = json(&out);
    let pair = |r: &str, o: &str| (r.to_string(), o.to_string());
    assert_eq!(
        outcomes(&v),
        vec![
            pair("index-out-of-range", "still_failing"),
            pair("search-plus-minus-one", "accepted")
        ]
    );
    assert_eq!(v["patches"][0]["applicability"], "unsafe");

    let q = project(&[
        files[0],
        files[1],
        files[2],
        (
            "pyproject.toml",
            "[tool.selfdebug]\nselect = [\"index-out-of-range\", \"search-variable\"]\n",
        ),
    ]);
    let before = snapshot(&q.root);
    let out = q.run(&["fix", "--json", "--search-time", "900"]);
    assert_eq!(out.status.code(), Some(4));
    assert_same(&before, &snapshot(&q.root));
    let v = json(&out);
    let tried = outcomes(&v);
    assert_eq!(tried[0], pair("index-out-of-range", "still_failing"));
    assert!(tried.len() > 1, "{tried:?}");
    assert!(
        tried[1..]
            .iter()
            .all(|t| *t == pair("search-variable", "still_failing")),
        "{tried:?}"
    );
    assert_eq!(
        v["failures"][0]["reason"],
        format!(
            "IndexError: list index out of range; the rules' 1 candidate did not pass; the \
             search tried all {} small edits at the suspicious statements and none passed",
            tried.len() - 1
        )
    );
    assert_eq!(v["failures"][0]["suspicious"][0]["file"], "table.py");
}

/// A crash in a test helper whose bug is in the helper itself (it reads a key the project never
/// wrote): the search over the project code the test ran finds nothing, and the message still
/// says that only `--allow-tests` lets selfdebug edit the test code. Nothing is touched.
#[test]
fn a_bug_only_in_a_test_helper_still_asks_for_allow_tests() {
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        (
            "settings.py",
            "import json\n\n\ndef dump(settings):\n    return json.dumps(settings, sort_keys=True)\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/helpers.py",
            "import json\n\nimport settings\n\n\ndef saved_name(values):\n    return json.loads(settings.dump(values))[\"Name\"]\n",
        ),
        (
            "tests/test_settings.py",
            "from tests.helpers import saved_name\n\n\ndef test_name_is_saved():\n    assert saved_name({\"name\": \"ada\"}) == \"ada\"\n",
        ),
    ]);
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let f = &v["failures"][0];
    assert_eq!(f["status"], "not_fixed");
    let tried = v["attempt_records"].as_array().unwrap().len();
    assert!(tried > 0, "{v}");
    // Two edits of `settings.py` would write the test's expected "ada" into it: left out.
    assert_eq!(f["test_literals"], 2);
    assert_eq!(
        f["reason"],
        format!(
            "KeyError raised in test code (tests/helpers.py): looked for its cause in the \
             project code the test ran; the search tried all {tried} small edits at the \
             suspicious statements and none passed (2 more left out before any run: they copy \
             the failing test's expected value into the code); tests/helpers.py is a test file; \
             pass --allow-tests to let selfdebug edit it"
        )
    );
    assert!(v["patches"].as_array().unwrap().is_empty());
}

/// A fixture's `json.loads` fails on what a project serializer wrote the line before: the
/// project frame is gone from the stack, yet the serializer (and every project call the fixture
/// made up to the crash line) is in focus, unscaled; the serializer's slice bound is fixed.
#[test]
fn a_fixture_crash_focuses_the_project_calls_made_before_it() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bugs/helper_fixture_serializer/project");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let (export, conftest, tests) = (
        read("export.py"),
        read("tests/conftest.py"),
        read("tests/test_export.py"),
    );
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("export.py", &export),
        ("tests/conftest.py", &conftest),
        ("tests/test_export.py", &tests),
    ]);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        p.read("export.py"),
        export.replace("out[:-3]", "out[:-2]"),
        "{stderr}"
    );
    let v = json(&out);
    let s = |line: u32, score: f64| serde_json::json!({"file": "export.py", "line": line, "score": score});
    // Ochiai of `file_name` (run by all three tests, two failing): 2 / sqrt(2 × 3).
    assert_eq!(
        v["failures"][0]["suspicious"],
        serde_json::json!([
            s(8, 1.0),
            s(9, 1.0),
            s(10, 1.0),
            s(12, 1.0),
            s(17, 0.8165),
            s(18, 0.8165)
        ])
    );
}

/// Once a plausible candidate is found, the runners-up tried for the choice among them get the
/// per-test limit of a hang's candidates (`sources::limits`): 5 times the test file's passing
/// time, at least 1 s, not the usual 5 s or more. In `search_while_bound_method` the first
/// candidate (`>` → `>=`) is kept; two runners-up make the loop endless, and each is stopped at
/// that limit, which their failure names.
#[test]
fn runners_up_of_a_plausible_candidate_get_a_hangs_short_limit() {
    let p = support::project::fixture_project("../bugs/search_while_bound_method/project");
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let v = json(&out);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    let records = v["attempt_records"].as_array().unwrap();
    let kept = records
        .iter()
        .position(|a| a["outcome"] == "accepted")
        .unwrap();
    let limits: Vec<f64> = records[kept + 1..]
        .iter()
        .filter(|a| a["outcome"] == "timeout")
        .map(|a| {
            let msg = a["new_failure"].as_str().unwrap();
            let within = msg.split("within ").nth(1).unwrap();
            within.split(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(!limits.is_empty(), "{v:#}");
    // Never the usual limit (at least 5 s): the file's tests pass in milliseconds.
    assert!(limits.iter().all(|l| (1.0..5.0).contains(l)), "{limits:?}");
}

/// A search patch's proof as data: the failing test's run (`targeted`), the passing tests that
/// run the edited line (`covering`), the unsafe candidate's repeat (`targeted`), the suite
/// (which counts as the third pass in a row).
#[test]
fn a_search_patch_lists_its_covering_run_in_its_proof() {
    let grade = "def grade(score):\n    if score > 90:\n        return \"A\"\n    return \"B\"\n";
    let tests = "from grades import grade\n\n\ndef test_ninety_is_an_a():\n    assert grade(90) == \"A\"\n\n\n\
                 def test_high():\n    assert grade(95) == \"A\"\n\n\n\
                 def test_low():\n    assert grade(50) == \"B\"\n\n\n\
                 def test_unrelated():\n    assert 1 + 1 == 2\n";
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("grades.py", grade),
        ("tests/test_grades.py", tests),
    ]);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    assert_eq!(out.status.code(), Some(0));
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let v = json(&out);
    assert_eq!(p.read("grades.py"), grade.replace("> 90", ">= 90"));
    let proof: Vec<(String, String, u64, u64)> = v["patches"][0]["proven_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let cmd = r["command"].as_array().unwrap();
            // The tests given: the node ids (after the plugin), or none for the suite.
            let given: Vec<&str> = cmd
                .iter()
                .filter_map(|a| a.as_str())
                .filter(|a| a.starts_with("tests/"))
                .map(|a| a.rsplit("::").next().unwrap())
                .collect();
            (
                r["stage"].as_str().unwrap().to_string(),
                given.join(" "),
                r["passed"].as_u64().unwrap(),
                r["failed"].as_u64().unwrap(),
            )
        })
        .collect();
    let t = |stage: &str, given: &str, passed| (stage.to_string(), given.to_string(), passed, 0);
    assert_eq!(
        proof,
        [
            t("targeted", "test_ninety_is_an_a", 1),
            t("covering", "test_high test_low", 2),
            t("targeted", "test_ninety_is_an_a", 1),
            t("full", "", 4),
        ]
    );
}
