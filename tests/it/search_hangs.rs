//! Hangs and endless recursion go to the search (issue 22 §4), on the bug corpus's own cases
//! (`fixtures/bugs/hang_*`, `recursion_*`): each is fixed with its reviewed patch, within a
//! bound on pytest runs (the search's cost, not a timed assertion), and a candidate that keeps
//! the test looping is stopped by a per-test limit drawn from the passing tests' time, well
//! under the configured `test-timeout = 5`.

use crate::support;

use support::project::{json, project, Project};

fn case(name: &str) -> Project {
    let p = project(&[]);
    support::copy_dir(
        &support::repo()
            .join("fixtures/bugs")
            .join(name)
            .join("project"),
        &p.root,
    );
    p
}

/// Runs the case's fix and checks the exact patch; the JSON.
fn fixed(name: &str) -> serde_json::Value {
    let p = case(name);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let v = json(&out);
    let want = std::fs::read_to_string(
        support::repo()
            .join("fixtures/bugs")
            .join(name)
            .join("expected.patch"),
    )
    .unwrap();
    let diff: String = v["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["diff"].as_str().unwrap())
        .collect();
    assert_eq!(diff, want, "{stderr}");
    v
}

/// The per-test limits (in seconds) the candidates' runs that timed out were stopped at.
fn limits_hit(v: &serde_json::Value) -> Vec<f64> {
    v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["outcome"] == "timeout")
        .filter_map(|a| {
            let tail = a["stdout_tail"].as_str()?;
            // The last one: the plugin's own source line, shown in the traceback, has `%g`.
            let at = tail.rfind("did not finish within ")? + "did not finish within ".len();
            tail[at..].split(' ').next()?.parse().ok()
        })
        .collect()
}

/// `while left != 0` stepping by two never ends for an odd count: `!=` → `>` at the loop's
/// condition; each candidate that still loops (`left += per_page`) costs the short limit.
#[test]
fn a_while_whose_condition_is_never_met_is_fixed_at_its_condition() {
    let v = fixed("hang_while_not_equal");
    assert_eq!(v["failures"][0]["category"], "timeout");
    assert!(v["pytest_runs"].as_u64().unwrap() <= 14, "{v}");
    let hit = limits_hit(&v);
    assert!(!hit.is_empty(), "{v}");
    assert!(hit.iter().all(|&s| (1.0..5.0).contains(&s)), "{hit:?}");
}

/// A bisection whose `lo = mid` never converges: the loop's steps come right after its header,
/// and `mid + 1` is the first candidate tried (the hang's search has no spectrum to choose
/// among plausible ones: the order is what keeps a wrong one out).
#[test]
fn a_bisection_that_never_converges_is_fixed_at_the_loops_step() {
    let v = fixed("hang_bisect_not_advancing");
    let attempts = v["attempt_records"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{v}");
    assert_eq!(
        attempts[0]["title"],
        "`mid` → `mid + 1` (the loop's step) at ordered.py:7 (a hang: no coverage run)"
    );
    assert!(v["pytest_runs"].as_u64().unwrap() <= 6, "{v}");
}

/// A base case that an even argument steps over (`n == 1` for a double factorial): two
/// `RecursionError` tests, one search, `==` → `<=`.
#[test]
fn a_recursion_that_steps_over_its_base_case_is_fixed() {
    let v = fixed("recursion_double_factorial");
    // 28 with the fix templates and one search for both tests (a cause of two tests runs each
    // candidate to the end, for partial fitness), 36 since the kept patch's two failing tests
    // are repeated (proof-repeats) and the search weighs more plausible candidates; the bound
    // keeps a runaway search visible.
    assert!(v["pytest_runs"].as_u64().unwrap() <= 40, "{v}");
    let statuses: Vec<&str> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["fixed", "fixed_by_another_patch"], "{v}");
}

/// Nine parametrized tests call one endless loop (issue 34 §6): the first costs the per-test
/// limit, the eight others are stopped at the short limit as the same hang (their message says
/// so), the search fixes the loop, and every one of the nine is fixed by that one patch, never
/// by a second edit kept on top of it (a hung test is left out of the runs that prove later
/// patches: it is run again on the patched tree before anyone works on it).
#[test]
fn nine_tests_in_one_endless_loop_cost_one_limit_and_one_patch() {
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("app/__init__.py", ""),
        (
            "app/count.py",
            "def count_down(n):\n    steps = 0\n    while n != 0:\n        n -= 2\n        steps += 1\n    return steps\n",
        ),
        (
            "tests/test_count.py",
            "import pytest\nfrom app.count import count_down\n\n\n@pytest.mark.parametrize(\"n\", [1, 3, 5, 7, 9, 11, 13, 15, 17])\ndef test_odd(n):\n    assert count_down(n) == (n + 1) // 2\n\n\ndef test_even():\n    assert count_down(4) == 2\n",
        ),
    ]);
    let out = p.run(&[
        "fix",
        "--json",
        "--test-timeout",
        "5",
        "--search-time",
        "300",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v = json(&out);
    assert_eq!(v["final_status"], "pass", "{stderr}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("app/count.py")).unwrap(),
        "def count_down(n):\n    steps = 0\n    while n > 0:\n        n -= 2\n        steps += 1\n    return steps\n"
    );
    let failures = v["failures"].as_array().unwrap();
    let odd = |i: usize| format!("tests/test_count.py::test_odd[{}]", 2 * i + 1);
    let got: Vec<(String, String, String)> = failures
        .iter()
        .map(|f| {
            (
                f["test"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
                f["msg"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut want = vec![(
        odd(0),
        "fixed".to_string(),
        "the test did not finish within 5 s (selfdebug's per-test limit, --test-timeout)"
            .to_string(),
    )];
    for i in 1..9 {
        want.push((
            odd(i),
            "fixed_by_another_patch".to_string(),
            format!(
                "the test did not finish within 1 s: it was still in count_down(), where {} \
                 hung (the same hang costs selfdebug's per-test limit once, --test-timeout)",
                odd(0)
            ),
        ));
    }
    assert_eq!(got, want, "{stderr}");
}
