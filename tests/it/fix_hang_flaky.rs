//! A hanging test never stalls the run, and a flaky test is never taken for proof: real
//! projects in temp dirs, real pytest, selfdebug's own per-test-limit plugin.

use crate::support;

use support::project::{json, project, Project};

const SHOP_BUGGY: &str = "def price(item):\n    return item[\"price\"]\n";
const SHOP_FIXED: &str = "def price(item):\n    return item.get(\"price\")\n";

/// One fixable `KeyError`, one test stuck in `loop_body`, one passing test.
fn hang_project(loop_body: &str) -> Project {
    project(&[
        ("pytest.ini", "[pytest]\n"),
        ("shop.py", SHOP_BUGGY),
        ("spin.py", loop_body),
        (
            "tests/test_shop.py",
            "from shop import price\nfrom spin import wait_forever\n\n\ndef test_price():\n    \
             assert price({\"cost\": 3}) is None\n\n\ndef test_hang():\n    wait_forever()\n\n\n\
             def test_ok():\n    assert 1 + 1 == 2\n",
        ),
    ])
}

fn statuses(j: &serde_json::Value) -> Vec<(String, String, String)> {
    support::fields3(j, "failures", ["test", "status", "category"])
}

#[test]
fn a_hanging_test_is_reported_where_it_hangs_and_the_rest_is_fixed() {
    let p = hang_project("def wait_forever():\n    n = 0\n    while True:\n        n += 1\n");
    // The run's own limit is ten minutes: only the per-test limit can keep this run short.
    let out = p.run(&["fix", "--json", "--test-timeout", "2", "--timeout", "600"]);
    let j = json(&out);
    support::assert_exit(&out, 3);
    assert_eq!(j["final_status"], "partial");
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    assert_eq!(
        p.read("spin.py"),
        "def wait_forever():\n    n = 0\n    while True:\n        n += 1\n"
    );
    assert_eq!(
        statuses(&j),
        [
            (
                "tests/test_shop.py::test_price".into(),
                "fixed".into(),
                "data".into()
            ),
            (
                "tests/test_shop.py::test_hang".into(),
                "timed_out".into(),
                "timeout".into()
            ),
        ]
    );
    let hang = &j["failures"][1];
    assert_eq!(hang["exc_type"], "_selfdebug_pytest.PerTestTimeout");
    assert_eq!(hang["file"], "spin.py");
    assert_eq!(hang["func"], "wait_forever");
    let reason = hang["reason"].as_str().unwrap();
    assert!(
        reason.contains("within 2 s")
            && reason.contains("It was stuck at spin.py:")
            && reason.contains("in wait_forever"),
        "{reason}"
    );
    // Baseline, candidate, confirm (the baseline's plugin stood in for the probe run): the hung
    // test was left out after the baseline, and no run was killed at the run limit.
    assert_eq!(j["failures"][0]["probe"]["source"], "plugin");
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third); + 1: the hung test, left out of the runs that proved the
    // patch, is run again on the patched tree before the search works on it (still hung).
    assert_eq!(j["pytest_runs"], 3 + 1 + 1);
    for a in j["attempt_records"].as_array().unwrap() {
        assert_ne!(a["outcome"], "timeout", "{a}");
    }
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
}

#[test]
fn a_test_stuck_in_c_code_is_caught_by_the_backstop_and_deselected() {
    // SIGALRM blocked: the per-test timer cannot interrupt this; faulthandler's backstop ends
    // the run, and selfdebug takes the baseline again without that test.
    let p = hang_project(
        "import signal\nimport time\n\n\ndef wait_forever():\n    \
         signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n    time.sleep(1000)\n",
    );
    // A run limit well past the backstop (twice 1 + 5 s): a backstop that never fires fails
    // the test in two minutes, not ten.
    let out = p.run(&["fix", "--json", "--test-timeout", "1", "--timeout", "120"]);
    let j = json(&out);
    support::assert_exit(&out, 3);
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    assert_eq!(
        statuses(&j),
        [
            (
                "tests/test_shop.py::test_hang".into(),
                "timed_out".into(),
                "timeout".into()
            ),
            (
                "tests/test_shop.py::test_price".into(),
                "fixed".into(),
                "data".into()
            ),
        ]
    );
    let hang = &j["failures"][0];
    assert_eq!(hang["file"], "spin.py");
    assert_eq!(hang["line"], 7);
    assert_eq!(hang["func"], "wait_forever");
    let reason = hang["reason"].as_str().unwrap();
    assert!(
        reason.contains("hung in code that does not return to Python")
            && reason.contains("--deselect"),
        "{reason}"
    );
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
}

#[test]
fn a_flaky_failure_is_reported_and_never_patched() {
    // Fails on the first run only (a counter beside the test): the baseline sees a KeyError
    // that a `.get` would "fix", but the unchanged code passes when run again.
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("shop.py", SHOP_BUGGY),
        (
            "tests/test_shop.py",
            "from pathlib import Path\n\nfrom shop import price\n\nRUNS = Path(__file__).with_name(\"runs.txt\")\n\n\n\
             def test_price():\n    n = int(RUNS.read_text()) + 1 if RUNS.exists() else 1\n    \
             RUNS.write_text(str(n))\n    item = {} if n == 1 else {\"price\": 3}\n    \
             assert price(item) == 3\n",
        ),
    ]);
    let out = p.run(&["fix", "--json"]);
    let j = json(&out);
    support::assert_exit(&out, 4);
    assert_eq!(j["final_status"], "fail");
    assert_eq!(p.read("shop.py"), SHOP_BUGGY);
    assert_eq!(j["patches"], serde_json::json!([]));
    assert_eq!(j["files_patched"], serde_json::json!([]));
    assert_eq!(
        statuses(&j),
        [(
            "tests/test_shop.py::test_price".into(),
            "flaky".into(),
            "data".into()
        )]
    );
    assert!(j["failures"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("flaky: the test failed in the first run and passed twice"));
    // Its counts over the three runs of the unchanged code (docs/proof.md).
    assert_eq!(
        j["failures"][0]["runs"],
        serde_json::json!({"passed": 2, "failed": 1})
    );
    // The baseline, whose plugin ran the failing test again in the same session (it passed),
    // and one more plain run that passed too; no probe, no candidate. The test ran 3 times.
    assert_eq!(j["pytest_runs"], 2);
    assert_eq!(j["attempt_records"], serde_json::json!([]));
    assert_eq!(p.read("tests/runs.txt"), "3");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
}

#[test]
fn the_per_test_limit_stays_inside_a_short_run_limit() {
    // --test-timeout keeps its default (60 s); a run limit of 16 s must still end in a hang of
    // one test (at 16 - 10 = 6 s), not in a killed run that gives no verdict.
    let p = hang_project("def wait_forever():\n    while True:\n        pass\n");
    let out = p.run(&["fix", "--json", "--timeout", "16"]);
    let j = json(&out);
    support::assert_exit(&out, 3);
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    assert_eq!(j["failures"][1]["status"], "timed_out");
    assert!(j["failures"][1]["msg"]
        .as_str()
        .unwrap()
        .starts_with("the test did not finish within 6 s"));
}
