//! Exit codes that never lie: every way pytest can fail to give a verdict, on real projects in
//! temp dirs with real pytest. `pass` (exit 0) only when a pytest run of the selection exited 0.

use crate::support;

use support::project::{assert_same, json, project, Project};

const CALC_OK: &str = "def total(xs):\n    return sum(xs)\n";
const TEST_CALC: &str =
    "from pkg.calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n";

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A project whose one failure no rule can fix (the test's own assertion is wrong).
fn unfixable() -> Project {
    project(&[
        ("pytest.ini", "[pytest]\n"),
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", CALC_OK),
        (
            "tests/test_calc.py",
            "from pkg.calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 4\n",
        ),
    ])
}

/// A project with one fixable bug: a `KeyError` that `.get` repairs.
fn fixable() -> Project {
    project(&[
        ("pytest.ini", "[pytest]\n"),
        ("pkg/__init__.py", ""),
        (
            "pkg/conf.py",
            "def level(settings):\n    return settings[\"level\"]\n",
        ),
        (
            "tests/test_conf.py",
            "from pkg.conf import level\n\n\ndef test_level():\n    assert level({}) is None\n",
        ),
        ("tests/test_calc.py", TEST_CALC),
        ("pkg/calc.py", CALC_OK),
    ])
}

const CONF_FIXED: &str = "def level(settings):\n    return settings.get(\"level\")\n";

#[test]
fn conftest_that_raises_at_import_is_worked_on() {
    // The conftest imports a project module that raises at import; behind it, a test fails on
    // a typo that only shows once the conftest imports again.
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("conftest.py", "import pkg.settings\n"),
        ("pkg/__init__.py", ""),
        (
            "pkg/settings.py",
            "def load(raw):\n    return raw[\"debug\"]\n\n\nDEBUG = load({})\n",
        ),
        (
            "pkg/calc.py",
            "import math\n\n\ndef area(radius):\n    return math.pi * raduis * radius\n",
        ),
        (
            "tests/test_calc.py",
            "from pkg.calc import area\n\n\ndef test_area():\n    assert area(0) == 0\n",
        ),
    ]);
    let out = p.run(&["fix", "--json"]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(j["final_status"], "pass");
    let statuses: Vec<(&str, &str)> = j["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["exc_type"].as_str().unwrap(),
                f["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(statuses, [("KeyError", "fixed"), ("NameError", "fixed")]);
    assert_eq!(
        p.read("pkg/settings.py"),
        "def load(raw):\n    return raw.get(\"debug\")\n\n\nDEBUG = load({})\n"
    );
    assert_eq!(
        p.read("pkg/calc.py"),
        "import math\n\n\ndef area(radius):\n    return math.pi * radius * radius\n"
    );
}

#[test]
fn pytest_usage_errors_are_bad_input_and_touch_nothing() {
    let p = unfixable();
    let before = p.snapshot();
    for (args, quoted) in [
        (
            vec!["--", "--bogus-flag"],
            "pytest refused the run: python -m pytest: error: unrecognized arguments: --bogus-flag",
        ),
        (
            vec!["--", "tests/test_nope.py"],
            "pytest refused the run: file or directory not found: tests/test_nope.py",
        ),
        (
            vec!["--module", "tests/test_calc.py::test_nope"],
            "--module tests/test_calc.py::test_nope: not found: ",
        ),
        (
            vec!["--module", "test_nope"],
            "--module test_nope: no collected test matches it",
        ),
        (
            vec!["--", "--collect-only"],
            "pytest argument --collect-only runs no test",
        ),
    ] {
        let mut all = vec!["fix", "--json"];
        all.extend(&args);
        let out = p.run(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        let line = err
            .lines()
            .find(|l| l.starts_with("selfdebug: error: "))
            .unwrap();
        assert!(line.contains(quoted), "{args:?}: {line}");
        assert_eq!(err.matches("selfdebug: error:").count(), 1, "{err}");
        let j = json(&out);
        assert_eq!(j["final_status"], "bad_input");
        assert_eq!(j["exit_code"], 2);
        assert!(
            j["error"].as_str().unwrap().contains(quoted),
            "{}",
            j["error"]
        );
        assert_valid(&out.stdout);
    }
    assert_same(&before, &p.snapshot());
}

#[test]
fn hidden_pytest_output_is_never_green() {
    // The options that hide failures are set aside with a note, and the run reads the real
    // report: an unfixable failure stays a failure (exit 4), a fixable one is fixed.
    let p = unfixable();
    let before = p.snapshot();
    for extra in [
        &["-p", "no:terminal"][..],
        &["--tb=no", "-rN"][..],
        &["-x", "-q"][..],
    ] {
        let mut args = vec!["fix", "--json", "--"];
        args.extend(extra);
        let out = p.run(&args);
        assert_eq!(out.status.code(), Some(4), "{extra:?}: {}", stderr(&out));
        let j = json(&out);
        assert_eq!(j["final_status"], "fail");
        assert_eq!(j["failures"][0]["test"], "tests/test_calc.py::test_total");
        let notes = j["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().unwrap().contains("set aside")),
            "{notes:?}"
        );
    }
    assert_same(&before, &p.snapshot());

    let p = fixable();
    let out = p.run(&["fix", "--", "-p", "no:terminal"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("pkg/conf.py"), CONF_FIXED);
}

#[test]
fn no_tests_collected_has_its_own_status() {
    let p = project(&[("pytest.ini", "[pytest]\n"), ("pkg/calc.py", CALC_OK)]);
    let before = p.snapshot();
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["final_status"], "no_tests");
    // The run that found no tests is counted, and so is the time it took.
    assert_eq!(j["pytest_runs"], 1, "{j}");
    assert!(j["pytest_ms"].as_u64().unwrap() > 0, "{j}");
    assert!(
        j["duration_ms"].as_u64().unwrap() >= j["pytest_ms"].as_u64().unwrap(),
        "{j}"
    );
    let root = p.root.canonicalize().unwrap();
    assert_eq!(
        j["error"],
        format!("no tests were collected under {}", root.display())
    );
    assert_valid(&out.stdout);
    assert_same(&before, &p.snapshot());

    // An empty directory says the same, without --json too.
    let empty = project(&[]);
    let out = empty.run(&["fix"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(
        stderr(&out).contains("no tests were collected under"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn root_is_found_from_a_subdirectory() {
    // The project's pytest config is at the root: run from tests/ and from pkg/, the tool runs
    // pytest there (from tests/ the import of `pkg` would fail otherwise).
    for cwd in ["tests", "pkg"] {
        let p = fixable();
        p.git(&["init", "-q"]);
        let out = p.cmd_in(cwd, &["fix"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "from {cwd}: {}", stderr(&out));
        let root = p.root.canonicalize().unwrap();
        assert!(
            stderr(&out).contains(&format!("selfdebug: root {} (pytest.ini)", root.display())),
            "{}",
            stderr(&out)
        );
        assert_eq!(p.read("pkg/conf.py"), CONF_FIXED);
    }
    // A path typed relative to the subdirectory is rebased onto the root.
    let p = fixable();
    let out = p
        .cmd_in("tests", &["fix", "--json", "--", "test_conf.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json(&out)["failures"][0]["test"],
        "tests/test_conf.py::test_level"
    );
}

#[test]
fn module_selects_by_node_id_or_bare_name() {
    let p = fixable();
    // A selected test that passes: a true pass, nothing touched.
    let before = p.snapshot();
    let out = p.run(&["fix", "--json", "--module", "test_total"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["final_status"], "pass");
    assert_eq!(json(&out)["failures"], serde_json::json!([]));
    assert_same(&before, &p.snapshot());
    // A bare name of a failing test: fixed.
    let out = p.run(&["fix", "--json", "--module", "test_level"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["failures"][0]["status"], "fixed");
    assert_eq!(p.read("pkg/conf.py"), CONF_FIXED);
}

#[test]
fn json_on_exit_6_and_no_validate_is_proposed() {
    let p = fixable();
    let before = p.snapshot();
    let out = p.run(&["fix", "--json", "--python", "/nonexistent/python3"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["final_status"], "error");
    assert_eq!(j["exit_code"], 6);
    assert!(
        j["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/python3"),
        "{}",
        j["error"]
    );
    assert_valid(&out.stdout);

    // A program that is not Python is named as such, not as a Python that lacks pytest.
    let out = p.run(&["fix", "--json", "--python", "/bin/false"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert_eq!(
        json(&out)["error"],
        "/bin/false is not a Python interpreter (given Python code with -c, it exited with \
         status 1 and printed nothing); pass --python PATH to a Python that has pytest"
    );
    assert_same(&before, &p.snapshot());

    // --no-validate needs no --dry-run (it never writes) and proves nothing: exit 8.
    let log = p.root.join("..").join("pytest.log");
    let run = std::process::Command::new(support::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(&p.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    std::fs::write(&log, &run.stdout).unwrap();
    let out = p.run(&["fix", "--json", "--no-validate", support::path_str(&log)]);
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["final_status"], "proposed");
    assert_eq!(j["validated"], false);
    assert_eq!(j["patches"][0]["file"], "pkg/conf.py");
    assert_eq!(j["patches"][0]["applicability"], "unsafe");
    assert_valid(&out.stdout);
    assert_same(&before, &p.snapshot());
}

#[test]
fn time_budget_that_runs_out_restores_and_stops_on_time() {
    // The suite takes at least 5 s (S), so a 15 s budget leaves no room for a candidate's
    // targeted run plus a confirming full run (2 S + 1 s) after the baseline, while pytest's
    // own overhead on a busy machine stays under 10 s. Two tests of 2.5 s: the per-test limit
    // stays inside the run's (a quarter of a 15 s budget's run, less once the wait for the
    // worker's start came off it), and a single 5 s test would be stopped at it.
    let p = fixable();
    std::fs::write(
        p.root.join("tests/test_slow.py"),
        "import time\n\n\ndef test_slow():\n    time.sleep(2.5)\n\n\ndef test_slow_too():\n    time.sleep(2.5)\n",
    )
    .unwrap();
    let before = p.snapshot();
    let started = std::time::Instant::now();
    let out = p.run(&["fix", "--json", "--time-budget", "15"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["final_status"], "fail");
    assert_eq!(j["out_of_time"], true);
    assert_eq!(j["failures"][0]["reason"], "time budget used up");
    assert_eq!(j["attempts"], 0);
    // The rules' two ranked candidates for the KeyError were left untried by the time budget,
    // and both outputs say so.
    assert_eq!(j["failures"][0]["untried"], 2);
    assert!(
        stderr(&out).contains("\n  2 ranked candidates left untried\n"),
        "{}",
        stderr(&out)
    );
    // Runs are cut to the budget; only the tool's own closing work may come after it.
    assert!(took < std::time::Duration::from_secs(17), "took {took:?}");
    assert!(
        j["phases_ms"]["baseline_ms"].as_u64().unwrap() >= 5000,
        "{}",
        j["phases_ms"]
    );
    assert_valid(&out.stdout);
    assert_same(&before, &p.snapshot());
}

fn assert_valid(stdout: &[u8]) {
    support::assert_valid("fix.schema.json", None, &[stdout]);
}

#[test]
fn messages_say_what_happened() {
    // A Python 2 file: no patch was made, so nothing says PATCH-REJECTED; it says why.
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("pkg/__init__.py", ""),
        ("pkg/legacy.py", "def greet():\n    print \"hello\"\n"),
        (
            "tests/test_legacy.py",
            "from pkg.legacy import greet\n\n\ndef test_greet():\n    greet()\n",
        ),
    ]);
    let before = p.snapshot();
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    let reason = j["failures"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("pkg/legacy.py does not parse as Python 3 ("),
        "{reason}"
    );
    assert!(!stderr(&out).contains("PATCH-REJECTED"), "{}", stderr(&out));
    assert_same(&before, &p.snapshot());

    // A module reached through a symlink that leads out of the root is refused as such, even
    // when its name looks like a test helper.
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        (
            "tests/test_ext.py",
            "from testing.ext import level\n\n\ndef test_level():\n    assert level({}) is None\n",
        ),
    ]);
    let outside = p.root.parent().unwrap().join("outside");
    std::fs::create_dir_all(outside.join("tests")).unwrap();
    std::fs::write(
        outside.join("tests/ext.py"),
        "def level(settings):\n    return settings[\"level\"]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("tests"), p.root.join("testing")).unwrap();
    std::fs::write(p.root.join("conftest.py"), "").unwrap();
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(
        j["failures"][0]["reason"],
        "testing/ext.py resolves outside the project root; selfdebug never writes there"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("tests/ext.py")).unwrap(),
        "def level(settings):\n    return settings[\"level\"]\n"
    );
}
