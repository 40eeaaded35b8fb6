//! Command mode's hangs (`fix --cmd ... --expect-stdout` with a loop that never ends): the
//! command runs under `--test-timeout`, its baseline run under a timer that raises where it is
//! stuck (so a hang costs one limit before the search), and the search works at that loop,
//! each candidate judged under the same limit.
//! `--test-timeout 2` keeps each test to a few seconds of hung runs.

use crate::support;

use support::project::{json, project};

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// A counter moved the wrong way: `i -= 1` keeps `i < n` true for ever.
const TOTAL: &str = "def total(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i -= 1
    return s


print(total(5))
";

#[test]
fn a_hung_command_is_located_at_its_loop_and_fixed() {
    let p = project(&[("s.py", TOTAL), ("want.txt", "10\n")]);
    let out = p.run(&[
        "fix",
        "--json",
        "--jobs",
        "1",
        "--cmd",
        "python3 s.py",
        "--expect-stdout",
        "want.txt",
        "--test-timeout",
        "2",
    ]);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(code(&out), 0, "{v:#}");
    assert_eq!(p.read("s.py"), TOTAL.replace("i -= 1", "i += 1"));
    assert_eq!(v["final_status"], "pass");
    let f = &v["failures"][0];
    assert_eq!(f["category"], "timeout");
    assert_eq!(f["status"], "fixed");
    assert_eq!(
        (&f["file"], &f["line"]),
        (&"s.py".into(), &4.into()),
        "{f:#}"
    );
    assert_eq!(
        f["msg"],
        "the command did not finish within 2 s (selfdebug's per-run limit, --test-timeout)"
    );
    assert_eq!(v["patches"][0]["source"], "search");
    // The hang cost one run before the search (the baseline, stopped at the 2 s limit where
    // it was stuck), not a killed run and a rerun: every other run is a candidate's.
    let runs = v["pytest_runs"].as_u64().unwrap();
    let candidates = v["attempt_records"].as_array().unwrap().len() as u64;
    // (And the kept unsafe candidate's two repeats, --proof-repeats 3.)
    assert_eq!(runs - candidates, 1 + 2, "{v:#}");
    assert_eq!(v["attempts"].as_u64(), Some(candidates));
    assert!(v["phases_ms"]["baseline_ms"].as_u64().unwrap() >= 2000);
}

#[test]
fn a_hang_with_nothing_to_fix_names_the_flag_and_the_line_and_restores() {
    let script =
        "def wait():\n    n = 0\n    while True:\n        n = n + 1\n\n\nwait()\nprint(\"done\")\n";
    let p = project(&[("s.py", script), ("want.txt", "done\n")]);
    let out = p.run(&[
        "fix",
        "--cmd",
        "python3 s.py",
        "--expect-stdout",
        "want.txt",
        "--test-timeout",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 4, "{err}");
    assert_eq!(p.read("s.py"), script);
    assert!(
        err.contains(
            "timed out, not patched: the command did not finish within 2 s (selfdebug's per-run \
             limit, --test-timeout). It was stuck at s.py:3 in wait: `while True:`. An endless \
             loop or a wait for something that never comes (a lock, a socket, input); if the \
             command is only slow, raise --test-timeout"
        ),
        "{err}"
    );
}

#[test]
fn a_hung_command_that_cannot_be_rerun_names_the_flag_that_limits_it() {
    // Through a shell the command's Python cannot be wrapped: no line, exit 6, the flag named.
    let p = project(&[("s.py", TOTAL), ("want.txt", "10\n")]);
    let out = p.run(&[
        "fix",
        "--cmd",
        "sh -c 'python3 s.py'",
        "--expect-stdout",
        "want.txt",
        "--test-timeout",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), 6, "{err}");
    assert_eq!(p.read("s.py"), TOTAL);
    assert!(
        err.contains("selfdebug: error: the command did not finish within 2 s (--test-timeout)"),
        "{err}"
    );
}

#[test]
fn the_baseline_run_under_the_hang_timer_reads_as_the_plain_command() {
    // The baseline runs the command under the wrapper whose timer locates a hang: a run that
    // does not hang must read exactly as the plain command's (output, exit status, and the
    // uncaught traceback's frames: the script's own, none of the wrapper's).
    use selfdebug::command::{CommandJudge, OutputChecks};
    use selfdebug::runner::{find_interpreter, RunSpec};
    use selfdebug::verdict::Verdict;

    let script = "import os, sys\nimport helper\n\n\ndef main():\n    print(sys.argv, __name__, sys.path[0] == os.path.dirname(os.path.realpath(__file__)))\n    print(sys.modules['__main__'].__dict__ is globals())\n    helper.lookup({}, sys.argv[1])\n\n\nif __name__ == '__main__':\n    main()\n";
    let helper = "def lookup(d, key):\n    return d[key]\n";
    let p = project(&[("app/s.py", script), ("app/helper.py", helper)]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path()
            .join(format!("{}.py", selfdebug::plugin::TRACE_MODULE)),
        selfdebug::plugin::TRACE_SOURCE,
    )
    .unwrap();
    let python = find_interpreter(&p.root, None).unwrap();
    let judge = CommandJudge::new("python3 app/s.py one", OutputChecks::default()).unwrap();
    let spec = RunSpec::new(&p.root);
    let plain = judge.run(&python, &spec).unwrap();
    let limit = std::time::Duration::from_secs(600);
    let timed = judge
        .run_hang(&python, &spec, dir.path(), limit, "--test-timeout")
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(
        text(&plain.stdout),
        "['app/s.py', 'one'] __main__ True\nTrue\n"
    );
    assert_eq!(text(&timed.stdout), text(&plain.stdout));
    assert_eq!((plain.exit_code, timed.exit_code), (Some(1), Some(1)));
    let frames = |run| match judge.verdict(run, &p.root) {
        Verdict::Failed(f) => {
            assert_eq!(
                (f[0].exc_type.as_str(), f[0].msg.as_str()),
                ("KeyError", "'one'")
            );
            f[0].frames
                .iter()
                .map(|fr| {
                    (
                        fr.file.clone(),
                        fr.line,
                        fr.func.clone().unwrap_or_default(),
                    )
                })
                .collect::<Vec<_>>()
        }
        other => panic!("{other:?}"),
    };
    let want = [
        ("app/s.py".to_string(), 12, "<module>".to_string()),
        ("app/s.py".to_string(), 8, "main".to_string()),
        ("app/helper.py".to_string(), 2, "lookup".to_string()),
    ];
    assert_eq!(frames(&plain), want, "{}", text(&plain.stderr));
    assert_eq!(frames(&timed), want, "{}", text(&timed.stderr));
}
