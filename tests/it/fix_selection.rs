//! A narrow selection (the failing test's node id, how an agent or a CI job that reruns failures
//! calls it) proves a candidate against the files it came from: the rest of the selected tests'
//! files, the tests that run the edited lines measured over the suite (one coverage run on the
//! original bytes), and, for an edit that runs at import, every test file importing the module.
//! A candidate that breaks any is rejected. The search's "N tests cover the line" counts the
//! suite, not the selection.

use crate::support;

use support::project::{assert_same, json, project, snapshot, Project};

const SHELF: &str = "class Shelf:\n    \"\"\"A shelf that holds up to `capacity` items.\"\"\"\n\n    def __init__(self, capacity):\n        self._capacity = capacity\n        self._items = []\n\n    def has_room(self, n=1):\n        return len(self._items) + n < self._capacity\n\n    def put(self, item):\n        if not self.has_room():\n            raise OverflowError(\"the shelf is full\")\n        self._items.append(item)\n\n    def __len__(self):\n        return len(self._items)\n";

/// Tests outside the selection: every one runs `has_room` (through `put`), and passes on the
/// original code.
const PUT_TESTS: &str = "import pytest\n\nfrom shelf import Shelf\n\n\ndef test_no_room_for_three_more():\n    s = Shelf(3)\n    s.put(\"a\")\n    assert not s.has_room(3)\n\n\ndef test_empty_shelf_has_room():\n    assert Shelf(3).has_room()\n\n\ndef test_put_keeps_items():\n    s = Shelf(5)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert len(s) == 2\n\n\ndef test_put_on_a_full_shelf_raises():\n    s = Shelf(2)\n    with pytest.raises(OverflowError):\n        for item in \"abc\":\n            s.put(item)\n";

fn shelf(code: &str, room_tests: &str, more_put_tests: &str) -> Project {
    project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("shelf.py", code),
        ("tests/test_room.py", room_tests),
        ("tests/test_put.py", &format!("{PUT_TESTS}{more_put_tests}")),
    ])
}

#[test]
fn the_right_fix_passes_the_selection_and_the_tests_outside_it() {
    let p = shelf(
        SHELF,
        "from shelf import Shelf\n\n\ndef test_room_for_the_last_item():\n    s = Shelf(2)\n    s.put(\"a\")\n    assert s.has_room()\n",
        "",
    );
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--",
        "tests/test_room.py::test_room_for_the_last_item",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        p.read("shelf.py"),
        SHELF.replace("+ n < self", "+ n <= self")
    );
    let v = json(&out);
    let kept: Vec<&serde_json::Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["outcome"] == "accepted")
        .collect();
    assert_eq!(kept.len(), 1, "{v}");
    assert_eq!(
        kept[0]["proof"],
        serde_json::json!({
            "selected": 1, "outside": 4, "outside_failed": [], "covering": 4,
            "files": ["tests/test_room.py"]
        })
    );
    // Counted over the suite: the selected test and the four of test_put.py.
    assert_eq!(
        kept[0]["title"],
        "`<` → `<=` at shelf.py:9 (5 tests cover the line)"
    );
    assert!(
        stderr.contains(
            "proven: the selected test passes; 4 other tests pass (whole test file \
             tests/test_room.py; 4 that run the edited lines)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_candidate_that_breaks_tests_outside_the_selection_is_rejected() {
    // The code is right; the selected test pins the opposite of a test outside the selection,
    // so every edit that passes it breaks that test (and others that share the method).
    let code = SHELF.replace("+ n < self", "+ n <= self");
    let p = shelf(
        &code,
        "from shelf import Shelf\n\n\ndef test_full_shelf_takes_one_more():\n    s = Shelf(2)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert s.has_room()\n",
        "\n\ndef test_full_shelf_has_no_room():\n    s = Shelf(2)\n    s.put(\"a\")\n    s.put(\"b\")\n    assert not s.has_room()\n",
    );
    let before = snapshot(&p.root);
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--",
        "tests/test_room.py::test_full_shelf_takes_one_more",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let attempts = v["attempt_records"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["outcome"] != "accepted"), "{v}");
    // `+ n` → `- n` passes the selected test: the tests outside it that ran line 9 say no,
    // already in the search's run of the passing tests that cover the line (the suite's,
    // with `-x`), before the selection's confirming run.
    let minus = attempts
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .starts_with("`+` → `-` at shelf.py:9")
        })
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        minus["title"],
        "`+` → `-` at shelf.py:9 (6 tests cover the line)"
    );
    assert_eq!(minus["outcome"], "new_failures");
    assert_eq!(
        minus["broke"],
        serde_json::json!(["tests/test_put.py::test_full_shelf_has_no_room"])
    );
    assert_eq!(minus["proof"], serde_json::Value::Null);
}

/// A copy of `fixtures/bugs/NAME/project` as a throwaway project, and the case's pytest
/// arguments (its `args` file: the selection).
fn bug_case(name: &str) -> (Project, Vec<String>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bugs")
        .join(name);
    let p = project(&[]);
    support::copy_dir(&dir.join("project"), &p.root);
    let args = std::fs::read_to_string(dir.join("args"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (p, args)
}

/// `fix --json --search-time 900 -- ARGS` on `p`.
fn fix_selected(p: &Project, args: &[String]) -> std::process::Output {
    let mut all = vec!["fix", "--json", "--search-time", "900", "--"];
    all.extend(args.iter().map(String::as_str));
    p.run(&all)
}

/// The attempt whose title is `title`.
fn attempt<'a>(v: &'a serde_json::Value, title: &str) -> &'a serde_json::Value {
    v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no attempt {title:?} in {v}"))
}

#[test]
fn a_tempting_edit_that_breaks_the_rest_of_its_test_file_is_rejected() {
    // The tests beside the selected one run the code in a subprocess (the command line), where
    // no coverage sees it: they are run because they share the selected test's file.
    let (p, args) = bug_case("selection_sibling_subprocess");
    let before = snapshot(&p.root);
    let out = fix_selected(&p, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    assert_eq!(v["final_status"], "fail");
    assert_eq!(v["patches"], serde_json::json!([]));
    let attempts = v["attempt_records"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["outcome"] != "accepted"), "{v}");
    // The search's first candidate that passes the selected test: only it runs the line
    // in-process, so the line's coverage alone would have let it through.
    let high = attempt(
        &v,
        "`\"normal\"` → `\"high\"` at ticket.py:11 (1 test covers the line)",
    );
    assert_eq!(high["outcome"], "new_failures");
    let broken = serde_json::json!([
        "tests/test_ticket.py::test_cli_new_ticket_is_normal",
        "tests/test_ticket.py::test_cli_week_old_ticket_is_normal"
    ]);
    assert_eq!(high["broke"], broken);
    assert_eq!(
        high["proof"],
        serde_json::json!({
            "selected": 1, "outside": 5, "outside_failed": broken, "covering": 0,
            "files": ["tests/test_ticket.py"]
        })
    );
    assert!(
        stderr.contains(
            "rejected: the selected test passes, but it breaks \
             tests/test_ticket.py::test_cli_new_ticket_is_normal, \
             tests/test_ticket.py::test_cli_week_old_ticket_is_normal outside the selection (of \
             5 tests run there: whole test file tests/test_ticket.py; none of them runs the \
             edited lines)"
        ),
        "{stderr}"
    );
    // Line 9 is run by the selected test and by test_a_month_old_ticket_is_high: the count is
    // the suite's (the selection's own coverage would say 1).
    let ge = attempt(&v, "`>` → `>=` at ticket.py:9 (2 tests cover the line)");
    assert_eq!(
        ge["proof"],
        serde_json::json!({
            "selected": 1, "outside": 5,
            "outside_failed": ["tests/test_ticket.py::test_cli_week_old_ticket_is_normal"],
            "covering": 1, "files": ["tests/test_ticket.py"]
        })
    );
    // A negated condition whose other branch only the command-line tests take.
    let negated = attempt(
        &v,
        "negate `tier == \"gold\"` at ticket.py:7 (2 tests cover the line)",
    );
    assert_eq!(
        negated["proof"]["outside_failed"],
        serde_json::json!([
            "tests/test_ticket.py::test_cli_gold_is_always_high",
            "tests/test_ticket.py::test_cli_new_ticket_is_normal",
            "tests/test_ticket.py::test_cli_week_old_ticket_is_normal"
        ])
    );
}

#[test]
fn a_module_constant_edit_is_proven_against_every_test_file_importing_the_module() {
    // `STEPS = [1000, ...]` runs at import: no test "runs" its line, the parametrized tests
    // read it through `unit_of`, and tests/test_table.py imports it without calling anything.
    let (p, args) = bug_case("selection_module_constant");
    let before = snapshot(&p.root);
    let out = fix_selected(&p, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    assert_eq!(v["final_status"], "fail");
    let attempts = v["attempt_records"].as_array().unwrap();
    assert!(attempts.iter().all(|a| a["outcome"] != "accepted"), "{v}");
    // The seven tests that call `unit_of` count as running the constant (the suite's count).
    let bumped = attempt(&v, "`1000` → `1001` at sizes.py:4 (7 tests cover the line)");
    let broken = serde_json::json!([
        "tests/test_sizes.py::test_steps_are_powers_of_a_thousand",
        "tests/test_table.py::test_a_kilobyte_is_a_thousand_bytes"
    ]);
    assert_eq!(bumped["outcome"], "new_failures");
    assert_eq!(bumped["broke"], broken);
    assert_eq!(
        bumped["proof"],
        serde_json::json!({
            "selected": 1, "outside": 9, "outside_failed": broken, "covering": 6,
            "files": ["tests/test_sizes.py", "tests/test_table.py"], "module_level": true
        })
    );
    assert!(
        stderr.contains(
            "(of 9 tests run there: whole test files tests/test_sizes.py, tests/test_table.py; \
             6 that run the edited lines; the edit runs at import)"
        ),
        "{stderr}"
    );
}

#[test]
fn in_a_large_suite_the_untraced_importers_run_and_their_old_failures_do_not_count() {
    // 406 tests: the coverage run traces the selected test's file only, so the tests of the
    // other files that import `shelf` are run whole; one of them failed before any edit, and
    // fails again on the original code when asked, so it does not reject the right fix.
    let many = "from pathlib import Path\n\nimport pytest\n\nfrom shelf import Shelf\n\nROOT = Path(__file__).resolve().parent.parent\n\n\n@pytest.mark.parametrize(\"extra\", range(400))\ndef test_an_empty_shelf_has_room(extra):\n    assert Shelf(extra + 2).has_room()\n\n\ndef test_a_label_nobody_wrote():\n    code = (ROOT / \"shelf.py\").read_text()\n    with open(ROOT / \"label_runs.txt\", \"a\") as f:\n        f.write(\"patched\\n\" if \"<=\" in code else \"original\\n\")\n    assert Shelf(1).label == \"shelf\"\n";
    let p = project(&[
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
        ("shelf.py", SHELF),
        (
            "tests/test_room.py",
            "from shelf import Shelf\n\n\ndef test_room_for_the_last_item():\n    s = Shelf(2)\n    s.put(\"a\")\n    assert s.has_room()\n",
        ),
        ("tests/test_put.py", PUT_TESTS),
        ("tests/test_many.py", many),
        ("tests/test_plain.py", "def test_nothing_imported():\n    assert 1 + 1 == 2\n"),
    ]);
    let out = p.run(&[
        "fix",
        "--json",
        "--search-time",
        "900",
        "--",
        "tests/test_room.py::test_room_for_the_last_item",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        p.read("shelf.py"),
        SHELF.replace("+ n < self", "+ n <= self")
    );
    let v = json(&out);
    let kept: Vec<&serde_json::Value> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["outcome"] == "accepted")
        .collect();
    assert_eq!(kept.len(), 1, "{v}");
    // test_plain.py does not import shelf: not run. The covering count is the traced file's.
    assert_eq!(
        kept[0]["proof"],
        serde_json::json!({
            "selected": 1, "outside": 405, "outside_failed": [], "covering": 0,
            "files": ["tests/test_many.py", "tests/test_put.py", "tests/test_room.py"]
        })
    );
    // The old failure ran with the candidate (and failed), then on the original code.
    assert_eq!(p.read("label_runs.txt"), "patched\noriginal\n");
}

#[test]
fn a_project_whose_addopts_say_quiet_still_has_its_selection_collected() {
    // `addopts = -q` plus the collection's own `-q` prints per-file counts, not node ids: the
    // ids are asked for again, so the selected test's file is still run whole.
    let (p, args) = bug_case("selection_sibling_subprocess");
    std::fs::write(
        p.root.join("pytest.ini"),
        "[pytest]\npythonpath = .\naddopts = -q\n",
    )
    .unwrap();
    let before = snapshot(&p.root);
    let out = fix_selected(&p, &args);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let high = attempt(
        &v,
        "`\"normal\"` → `\"high\"` at ticket.py:11 (1 test covers the line)",
    );
    assert_eq!(high["proof"]["selected"], 1);
    assert_eq!(high["proof"]["outside"], 5);
    assert_eq!(
        high["proof"]["files"],
        serde_json::json!(["tests/test_ticket.py"])
    );
}

/// A test outside the selection that runs the code in a process of its own (a CLI test): the
/// coverage run cannot see what that process ran, so no line "covers" it. It started a process
/// and its file imports the edited module, so it judges every candidate too: the edits that
/// make `label(0)` "one" by changing what `label(1)`, `label(-1)` or `label(2)` give are
/// rejected for it, and the edit kept is one it passes.
#[test]
fn a_test_that_runs_the_code_in_a_process_judges_candidates_outside_the_selection() {
    let p = project(&[
        ("conftest.py", ""),
        (
            "app.py",
            "def label(n):\n    if n == 1:\n        return \"one\"\n    return \"many\"\n",
        ),
        (
            "tests/test_label.py",
            "from app import label\n\n\ndef test_zero_is_one():\n    assert label(0) == \"one\"\n",
        ),
        (
            "tests/test_cli.py",
            "import os\nimport subprocess\nimport sys\n\nimport app\n\n\n\
             def test_labels_in_a_process():\n    out = subprocess.run(\n        \
             [sys.executable, \"-c\", \"import app; print(app.label(1), app.label(-1), app.label(2))\"],\n        \
             cwd=os.path.dirname(app.__file__), capture_output=True, text=True, check=True,\n    )\n    \
             assert out.stdout == \"one many many\\n\"\n",
        ),
    ]);
    let out = p.run(&[
        "fix",
        "--json",
        "--",
        "tests/test_label.py::test_zero_is_one",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        p.read("app.py"),
        "def label(n):\n    if not n:\n        return \"one\"\n    if n == 1:\n        return \"one\"\n    return \"many\"\n"
    );
    let v = json(&out);
    let attempts = v["attempt_records"].as_array().unwrap();
    let cli = serde_json::json!(["tests/test_cli.py::test_labels_in_a_process"]);
    let rejected = attempts.iter().filter(|a| a["broke"] == cli).count();
    assert!(rejected >= 1, "{v}");
    let kept = attempts
        .iter()
        .find(|a| a["outcome"] == "accepted")
        .unwrap();
    assert_eq!(kept["proof"]["spawning"], 1, "{kept}");
    assert_eq!(kept["proof"]["outside_failed"], serde_json::json!([]));
}
