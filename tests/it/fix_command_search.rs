//! The search over small edits in command mode (`fix --cmd ... --expect-stdout`): real scripts
//! that exit 0 with the wrong output, one traced run of the command to localize, each candidate
//! proven by running the command again with its output checks.

use crate::support;

use support::project::{json, project, Project};

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fix(p: &Project, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec!["fix", "--json", "--jobs", "1"];
    args.extend_from_slice(extra);
    let out = p.run(&args);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    (out, v)
}

/// (outcome, title) of every attempt record.
fn attempts(v: &serde_json::Value) -> Vec<(String, String)> {
    support::fields2(v, "attempt_records", ["outcome", "title"])
}

/// What every kept search patch of command mode says about itself.
fn assert_search_patch(v: &serde_json::Value, file: &str, rule: &str, title: &str) {
    assert_eq!(v["final_status"], "pass");
    assert_eq!(v["judge"], "command");
    assert_eq!(v["files_patched"], serde_json::json!([file]));
    let patch = &v["patches"][0];
    assert_eq!(patch["rules"], serde_json::json!([rule]));
    assert_eq!(
        patch["titles"],
        serde_json::json!([format!(
            "{title} (no test covers the line: the command's output decided)"
        )])
    );
    assert_eq!(patch["source"], "search");
    assert_eq!(patch["safe"], false);
    assert_eq!(patch["applicability"], "unsafe");
    // The overfitting warning: nothing but the command's output pinned the change.
    assert_eq!(
        patch["review"][1],
        "no test covers the edited line: only the command's output checks decided, so the \
         patch may fit that output and not the intent (overfitting); add a test that pins the \
         behaviour"
    );
    let f = &v["failures"][0];
    assert_eq!(f["exc_type"], "selfdebug.OutputCheckFailed");
    assert_eq!(f["category"], "logic");
    assert_eq!(f["status"], "fixed");
    let last = v["attempt_records"].as_array().unwrap().last().unwrap();
    assert_eq!(last["outcome"], "accepted");
    assert_eq!(last["category"], "logic");
    assert_eq!(last["source"], "search");
    assert_eq!(last["search"]["plausible"], 1);
}

const SQUARES: &str = r#"import os
import sys


def squares(n):
    return [i * i for i in range(1, n)]


def main(argv):
    values = squares(int(argv[1]))
    here = os.path.dirname(os.path.realpath(__file__))
    print(argv[0], argv[2:], __name__, sys.path[0] == here)
    print("squares:", " ".join(str(v) for v in values))
    print("total:", sum(values))


if __name__ == "__main__":
    main(sys.argv)
"#;

#[test]
fn an_off_by_one_range_end_is_fixed_and_the_script_sees_its_own_argv() {
    let p = project(&[
        ("bin/squares.py", SQUARES),
        (
            "want.txt",
            "bin/squares.py ['a b'] __main__ True\nsquares: 1 4 9 16\ntotal: 30\n",
        ),
    ]);
    let (out, v) = fix(
        &p,
        &[
            "--cmd",
            "python3 bin/squares.py 4 'a b'",
            "--expect-stdout",
            "want.txt",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        p.read("bin/squares.py"),
        SQUARES.replace("range(1, n)", "range(1, n + 1)")
    );
    assert_search_patch(
        &v,
        "bin/squares.py",
        "search-plus-minus-one",
        "`n` → `n + 1` at bin/squares.py:6",
    );
    // The traced run saw the script's lines only, the computation first.
    let f = &v["failures"][0];
    assert_eq!(
        f["suspicious"][0],
        serde_json::json!({"file": "bin/squares.py", "line": 6, "score": 1.0})
    );
    assert_eq!(
        attempts(&v),
        [
            (
                "still_failing".to_string(),
                "`n` → `n - 1` at bin/squares.py:6 (no test covers the line: the command's \
                 output decided)"
                    .to_string()
            ),
            (
                "accepted".to_string(),
                "`n` → `n + 1` at bin/squares.py:6 (no test covers the line: the command's \
                 output decided)"
                    .to_string()
            )
        ]
    );
    // Baseline, the traced run, two candidates.
    // + 2 per kept unsafe candidate: its command runs twice more (--proof-repeats 3).
    assert_eq!(v["pytest_runs"], 4 + 2);
}

const TEMPS: &str = "def celsius(f):\n    return (f + 32) * 5 / 9\n\n\nfor f in [32, 212, 50]:\n    print(f\"{f}F = {celsius(f):.1f}C\")\n";

#[test]
fn a_wrong_operator_is_fixed() {
    let p = project(&[
        ("temps.py", TEMPS),
        ("want.txt", "32F = 0.0C\n212F = 100.0C\n50F = 10.0C\n"),
    ]);
    // A dry run searches in the scratch copy and prints the patch.
    let before = p.snapshot();
    let out = p.run(&[
        "fix",
        "--dry-run",
        "--cmd",
        "python temps.py",
        "--expect-stdout",
        "want.txt",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "--- a/temps.py\n+++ b/temps.py\n@@ -1,5 +1,5 @@\n def celsius(f):\n\
         -    return (f + 32) * 5 / 9\n+    return (f - 32) * 5 / 9\n \n \n for f in [32, 212, 50]:\n"
    );
    let (out, v) = fix(
        &p,
        &["--cmd", "python temps.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(p.read("temps.py"), TEMPS.replace("f + 32", "f - 32"));
    assert_search_patch(&v, "temps.py", "search-arith-op", "`+` → `-` at temps.py:2");
    assert_eq!(v["attempts"], 1);
    // Three numbers differ: no expected-value hint.
    assert_eq!(v["attempt_records"][0]["search"].get("hint"), None);
}

const CLOCK: &str = r#"def clock(total):
    hours = total // 3600
    minutes = total % 3600 // 60
    seconds = total % 3600
    return f"{hours}:{minutes:02d}:{seconds:02d}"


for t in (59, 3725, 7322):
    print(clock(t))
"#;

#[test]
fn a_wrong_constant_is_replaced_by_another_of_the_function() {
    let p = project(&[
        ("clock.py", CLOCK),
        ("want.txt", "0:00:59\n1:02:05\n2:02:02\n"),
    ]);
    let (out, v) = fix(
        &p,
        &["--cmd", "python clock.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        p.read("clock.py"),
        CLOCK.replace("seconds = total % 3600", "seconds = total % 60")
    );
    assert_search_patch(
        &v,
        "clock.py",
        "search-constant",
        "`3600` → `60` at clock.py:4",
    );
    // Every rejected candidate printed the wrong clock and was put back.
    let records = attempts(&v);
    let (last, rejected) = records.split_last().unwrap();
    assert_eq!(last.0, "accepted");
    assert!(
        rejected.iter().all(|(o, _)| o == "still_failing"),
        "{records:?}"
    );
    // The function's four lines first, the driver after.
    let lines: Vec<u64> = v["failures"][0]["suspicious"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3, 4, 5, 8, 9, 1]);
}

const REPORT: &str = r#"def count_late(days, limit):
    late = 0
    for d in days:
        if d > limit:
            late += 1
    return late


print("report")
print("late:", count_late([3, 7, 7, 10], 7))
"#;

#[test]
fn a_regex_check_gives_the_expected_value() {
    let p = project(&[("report.py", REPORT)]);
    let (out, v) = fix(
        &p,
        &[
            "--cmd",
            "python report.py",
            "--expect-stdout-regex",
            "(?m)^late: 3$",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        p.read("report.py"),
        REPORT.replace("d > limit", "d >= limit")
    );
    assert_search_patch(
        &v,
        "report.py",
        "search-compare-op",
        "`>` → `>=` at report.py:4",
    );
    // `late: 1` printed, `late: 3` wanted: a boundary flip fits, and went first.
    assert_eq!(v["attempts"], 1);
    assert_eq!(v["attempt_records"][0]["search"]["hint"], "consistent");
    assert_eq!(
        v["failures"][0]["output_check"]["actual"],
        "report\nlate: 1\n"
    );
}

#[test]
fn a_fix_that_needs_new_code_is_given_up_and_nothing_changes() {
    let script = "def normalize(name):\n    return name.strip()\n\n\nprint(normalize(\"  Ada Lovelace \"))\n";
    let p = project(&[("name.py", script), ("want.txt", "ada lovelace\n")]);
    let before = p.snapshot();
    let (out, v) = fix(
        &p,
        &["--cmd", "python name.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(v["final_status"], "fail");
    assert_eq!(v["patches"], serde_json::json!([]));
    let f = &v["failures"][0];
    assert_eq!(f["status"], "not_fixed");
    assert_eq!(
        f["reason"],
        "the command exited 0 but its stdout differs from --expect-stdout (first difference at \
         byte 0); the search tried all 4 small edits at the suspicious statements and none passed"
    );
    // What the localization found is reported all the same.
    assert_eq!(
        f["suspicious"],
        serde_json::json!([
            {"file": "name.py", "line": 2, "score": 1.0},
            {"file": "name.py", "line": 5, "score": 0.48},
            {"file": "name.py", "line": 1, "score": 0.3}
        ])
    );
    assert!(attempts(&v).iter().all(|(o, _)| o == "still_failing"));
}

#[test]
fn a_command_that_is_not_python_gets_an_honest_reason() {
    let script = "def total(xs):\n    return sum(xs) - 1\n\n\nprint(total([1, 2, 3]))\n";
    let p = project(&[("total.py", script), ("want.txt", "6\n")]);
    let before = p.snapshot();
    for (cmd, why) in [
        (
            "sh -c 'python3 total.py'",
            "the search needs a Python command to trace (`python SCRIPT ARGS` or `python -m \
             MODULE ARGS`), and `sh` is not the project's interpreter",
        ),
        (
            "python -c 'print(5)'",
            "the search traces `python SCRIPT ARGS` or `python -m MODULE ARGS` only, not a \
             command with other interpreter options or code given with -c",
        ),
    ] {
        let (out, v) = fix(&p, &["--cmd", cmd, "--expect-stdout", "want.txt"]);
        assert_eq!(code(&out), 4, "{cmd}: {}", stderr(&out));
        let f = &v["failures"][0];
        assert_eq!(f["status"], "no_candidate", "{cmd}");
        assert_eq!(
            f["reason"],
            format!(
                "the command exited 0 but its stdout differs from --expect-stdout (first \
                 difference at byte 0); {why}"
            ),
            "{cmd}"
        );
        assert_eq!(v["attempts"], 0);
        // Only the baseline ran.
        assert_eq!(v["pytest_runs"], 1);
    }
    support::project::assert_same(&before, &p.snapshot());
}

#[test]
fn the_traced_run_is_the_scripts_own_run() {
    use selfdebug::command::{CommandJudge, OutputChecks};
    use selfdebug::localize::Spectrum;
    use selfdebug::runner::{find_interpreter, RunSpec};

    let script = "import os, sys\n\n\ndef main():\n    print(sys.argv, __name__, sys.path[0] == os.path.dirname(os.path.realpath(__file__)))\n    print(sys.modules['__main__'].__dict__ is globals())\n    import helper\n    print(helper.twice(21), os.environ.get('SELFDEBUG_COVER_OUT'))\n    sys.exit(3)\n\n\nif __name__ == '__main__':\n    main()\n";
    let helper = "def twice(x):\n    return 2 * x\n";
    let p = project(&[("app/s.py", script), ("app/helper.py", helper)]);
    // The tracer from a private directory of the test's own, as selfdebug's plugin dir.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path()
            .join(format!("{}.py", selfdebug::plugin::TRACE_MODULE)),
        selfdebug::plugin::TRACE_SOURCE,
    )
    .unwrap();
    let python = find_interpreter(&p.root, None).unwrap();
    let judge =
        CommandJudge::new("python3 app/s.py one 'two words'", OutputChecks::default()).unwrap();
    let spec = RunSpec::new(&p.root);
    let plain = judge.run(&python, &spec).unwrap();
    let out = dir.path().join("cover.json");
    let traced = judge.run_traced(&python, &spec, dir.path(), &out).unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(
        text(&plain.stdout),
        "['app/s.py', 'one', 'two words'] __main__ True\nTrue\n42 None\n"
    );
    assert_eq!(text(&traced.stdout), text(&plain.stdout));
    assert_eq!((plain.exit_code, traced.exit_code), (Some(3), Some(3)));
    assert_eq!(text(&traced.stderr), "");
    // The project's lines that ran, by file; the tracer's own and the standard library's not.
    let sp = Spectrum::read(&out, &p.root).unwrap();
    let run = &sp.tests["command"];
    assert!(run.failed);
    let files: Vec<&str> = run.lines.keys().map(String::as_str).collect();
    assert_eq!(files, ["app/helper.py", "app/s.py"]);
    assert_eq!(
        run.lines["app/s.py"].iter().copied().collect::<Vec<_>>(),
        [1, 4, 5, 6, 7, 8, 9, 12, 13]
    );
    assert_eq!(
        run.lines["app/helper.py"]
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [1, 2]
    );
    // `python -m MODULE ARGS`: the module as `__main__`, argv[0] its file, the root first on
    // sys.path.
    let module = "import os, sys\nprint(os.path.relpath(sys.argv[0]), sys.argv[1:], __name__, sys.path[0] == os.getcwd())\n";
    std::fs::write(p.root.join("app/tool.py"), module).unwrap();
    std::fs::write(p.root.join("app/__init__.py"), "").unwrap();
    let judge = CommandJudge::new("python -m app.tool x", OutputChecks::default()).unwrap();
    let plain = judge.run(&python, &spec).unwrap();
    let traced = judge.run_traced(&python, &spec, dir.path(), &out).unwrap();
    assert_eq!(text(&plain.stdout), "app/tool.py ['x'] __main__ True\n");
    assert_eq!(text(&traced.stdout), text(&plain.stdout));
    assert_eq!((plain.exit_code, traced.exit_code), (Some(0), Some(0)));
    let sp = Spectrum::read(&out, &p.root).unwrap();
    let files: Vec<&str> = sp.tests["command"]
        .lines
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(files, ["app/tool.py"]);
}

#[test]
fn safe_only_never_searches_a_command() {
    let script = "def total(xs):\n    return sum(xs) - 1\n\n\nprint(total([1, 2, 3]))\n";
    let p = project(&[("total.py", script), ("want.txt", "6\n")]);
    let before = p.snapshot();
    let (out, v) = fix(
        &p,
        &[
            "--safe-only",
            "--cmd",
            "python total.py",
            "--expect-stdout",
            "want.txt",
        ],
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    let f = &v["failures"][0];
    assert_eq!(f["status"], "not_fixed");
    assert_eq!(f.get("suspicious"), None);
    assert_eq!(v["attempts"], 0);
    // The baseline only: no traced run.
    assert_eq!(v["pytest_runs"], 1);
}
