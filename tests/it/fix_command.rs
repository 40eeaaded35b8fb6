//! Command mode (`fix --cmd`): real scripts run by the real interpreter are the judge; the
//! failure is read from their stderr, probed by rerunning them, repaired by the rules and
//! proven by running them again (with the output checks when given).

use crate::support;

use support::project::{json, project, Project};

const SHIPPING: &str = r#"ORDERS = [{"weight": 3, "extra": 1}, {"weight": 5}]


def shipping(order):
    return order["weight"] * 2 + order["extra"]


for order in ORDERS:
    print(shipping(order))
"#;

const SHIPPING_FIXED: &str = r#"ORDERS = [{"weight": 3, "extra": 1}, {"weight": 5}]


def shipping(order):
    return order["weight"] * 2 + order.get("extra", 0)


for order in ORDERS:
    print(shipping(order))
"#;

const WORDS: &str = r#"def first_word(text):
    return text.split()[0]


for line in ["hello world", None, "bye now"]:
    print(first_word(line))
"#;

const WORDS_FIXED: &str = r#"def first_word(text):
    if text is None:
        return None
    return text.split()[0]


for line in ["hello world", None, "bye now"]:
    print(first_word(line))
"#;

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fix(p: &Project, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec!["fix", "--json"];
    args.extend_from_slice(extra);
    let out = p.run(&args);
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    (out, v)
}

#[test]
fn a_key_error_in_a_script_is_fixed_and_proven_by_its_output() {
    let p = project(&[("shipping.py", SHIPPING), ("want.txt", "7\n10\n")]);
    let audit = p.root.parent().unwrap().join("audit.jsonl");
    let (out, v) = fix(
        &p,
        &[
            "--cmd",
            "python shipping.py",
            "--expect-stdout",
            "want.txt",
            "--audit-log",
            audit.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(p.read("shipping.py"), SHIPPING_FIXED);
    assert_eq!(v["final_status"], "pass");
    assert_eq!(v["judge"], "command");
    assert_eq!(v["command"], "python shipping.py");
    assert_eq!(v["files_patched"], serde_json::json!(["shipping.py"]));
    let f = &v["failures"][0];
    assert_eq!(
        (
            &f["exc_type"],
            &f["msg"],
            &f["file"],
            &f["line"],
            &f["status"]
        ),
        (
            &"KeyError".into(),
            &"'extra'".into(),
            &"shipping.py".into(),
            &5.into(),
            &"fixed".into()
        )
    );
    // The probe ran the command too, and saw the order.
    assert_eq!(f["probe"]["fired"], true);
    assert_eq!(f["probe"]["test_outcome"]["reproduced"], true);
    assert_eq!(v["patches"][0]["rules"], serde_json::json!(["key-missing"]));
    // Baseline, probe, the candidate: three runs of the command.
    // + 2 per kept unsafe candidate: its command runs twice more (--proof-repeats 3).
    assert_eq!(v["pytest_runs"], 3 + 2);
    // The audit record names the judge.
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&audit).unwrap().trim()).unwrap();
    assert_eq!(
        (
            &line["judge"],
            &line["command"],
            &line["outcome"],
            &line["stdout"]
        ),
        (
            &"command".into(),
            &"python shipping.py".into(),
            &"accepted".into(),
            &"7\n10".into()
        )
    );
    assert!(
        stderr(&out).contains("proven: the command passes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_none_bug_in_a_script_is_fixed() {
    let p = project(&[("words.py", WORDS)]);
    let (out, v) = fix(&p, &["--cmd", "python3 words.py", "--stderr-empty"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(p.read("words.py"), WORDS_FIXED);
    let f = &v["failures"][0];
    assert_eq!(f["exc_type"], "AttributeError");
    assert_eq!(f["status"], "fixed");
    // The first guard (`""`) led to an IndexError in the same script; it was undone.
    let outcomes: Vec<&str> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["progressed", "accepted"]);
}

#[test]
fn a_script_with_wrong_output_is_refused_without_a_traceback() {
    let script = "def total(xs):\n    return sum(xs) - 1\n\n\nprint(total([1, 2, 3]))\n";
    // With the search over small edits turned off (it fixes this one: see
    // fix_command_search.rs), no rule works on wrong output.
    let p = project(&[
        ("total.py", script),
        ("want.txt", "6\n"),
        (
            "pyproject.toml",
            "[tool.selfdebug]\nignore = [\"search\"]\n",
        ),
    ]);
    let before = p.snapshot();
    let (out, v) = fix(
        &p,
        &["--cmd", "python total.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(v["final_status"], "fail");
    let f = &v["failures"][0];
    assert_eq!(f["exc_type"], "selfdebug.OutputCheckFailed");
    assert_eq!(f["status"], "not_fixed");
    assert_eq!(f["file"], serde_json::Value::Null);
    assert_eq!(
        f["msg"],
        "the command exited 0 but its stdout differs from --expect-stdout (first difference at \
         byte 0)"
    );
    assert!(
        f["reason"].as_str().unwrap().ends_with(
            "without a traceback no rule applies: only the LLM fallback (--llm) can work on \
             wrong output"
        ),
        "{}",
        f["reason"]
    );
    assert_eq!(v["attempts"], 0);
    // What the LLM fallback (and a reader) needs: the check, expected and actual output.
    assert_eq!(
        f["output_check"],
        serde_json::json!({
            "command": "python total.py",
            "check": "expect_stdout",
            "expected": "6\n",
            "actual": "5\n",
            "truncated": false
        })
    );
    // The regex check and the stderr check say so in their own words.
    let (out, v) = fix(
        &p,
        &["--cmd", "python total.py", "--expect-stdout-regex", "^6$"],
    );
    assert_eq!(code(&out), 4);
    assert_eq!(
        v["failures"][0]["msg"],
        "the command exited 0 but its stdout has no match for --expect-stdout-regex `^6$`"
    );
    let (out, v) = fix(
        &p,
        &[
            "--cmd",
            "python -c 'import sys; sys.stderr.write(\"warning: x\\n\")'",
            "--stderr-empty",
        ],
    );
    assert_eq!(code(&out), 4);
    assert_eq!(
        v["failures"][0]["msg"],
        "the command exited 0 but printed to stderr (--stderr-empty): warning: x"
    );
}

#[test]
fn expect_stdout_rejects_a_fix_that_exits_0_with_the_wrong_output() {
    // `.get("extra", 0)` makes the script exit 0, but it prints 10, not the 11 expected.
    let p = project(&[("shipping.py", SHIPPING), ("want.txt", "7\n11\n")]);
    let before = p.snapshot();
    let (out, v) = fix(
        &p,
        &["--cmd", "python shipping.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(v["patches"], serde_json::json!([]));
    let f = &v["failures"][0];
    assert_eq!(
        (&f["exc_type"], &f["status"]),
        (&"KeyError".into(), &"not_fixed".into())
    );
    let a = &v["attempt_records"][0];
    assert_eq!(a["outcome"], "still_failing");
    assert_eq!(
        a["new_failure"],
        "selfdebug.OutputCheckFailed: the command exited 0 but its stdout differs from \
         --expect-stdout (first difference at byte 3)"
    );
}

#[test]
fn a_dry_run_prints_the_patch_and_changes_nothing() {
    let p = project(&[("shipping.py", SHIPPING)]);
    let before = p.snapshot();
    let out = p.run(&["fix", "--dry-run", "--cmd", "python shipping.py"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "--- a/shipping.py\n+++ b/shipping.py\n@@ -2,7 +2,7 @@\n \n \n def shipping(order):\n\
         -    return order[\"weight\"] * 2 + order[\"extra\"]\n\
         +    return order[\"weight\"] * 2 + order.get(\"extra\", 0)\n \n \n for order in ORDERS:\n"
    );
}

#[test]
fn a_failure_without_a_traceback_is_reported_not_patched() {
    let p = project(&[("quit.py", "import sys\nsys.exit('no input given')\n")]);
    let (out, v) = fix(&p, &["--cmd", "python quit.py"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let f = &v["failures"][0];
    assert_eq!(f["exc_type"], "selfdebug.CommandFailed");
    assert_eq!(
        f["msg"],
        "the command exited with status 1 and printed no Python traceback: no input given"
    );
    assert_eq!(f["status"], "no_candidate");
}

#[test]
fn a_command_that_hangs_is_killed_at_the_timeout() {
    // Stopped at the limit where it was stuck (the baseline runs under the wrapper's timer):
    // a wait, not a loop a small edit could end, so it is reported there (exit 4), naming the
    // flag given.
    let p = project(&[("hang.py", "import time\ntime.sleep(600)\n")]);
    let started = std::time::Instant::now();
    let (out, v) = fix(&p, &["--cmd", "python hang.py", "--timeout", "2"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let f = &v["failures"][0];
    assert_eq!(f["status"], "timed_out");
    assert_eq!((&f["file"], &f["line"]), (&"hang.py".into(), &2.into()));
    assert_eq!(
        f["msg"],
        "the command did not finish within 2 s (selfdebug's per-run limit, --timeout)"
    );
    assert_eq!(p.read("hang.py"), "import time\ntime.sleep(600)\n");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(support::project::processes_in(&p.root).is_empty());
}

#[test]
fn command_mode_refuses_what_belongs_to_pytest() {
    let p = project(&[("a.py", "print(1)\n")]);
    for (args, msg) in [
        (
            vec!["fix", "--cmd", "python a.py", "--module", "test_x"],
            "--cmd runs a command instead of pytest: it takes no --module",
        ),
        (
            vec!["fix", "--cmd", "python a.py", "--", "-x"],
            "--cmd runs a command instead of pytest: it takes no pytest arguments",
        ),
        (
            vec!["fix", "--cmd", "python 'a.py"],
            "--cmd: unclosed single quote",
        ),
        (vec!["fix", "--cmd", "  "], "--cmd: the command is empty"),
        (
            vec!["fix", "--cmd", "python a.py", "--expect-stdout-regex", "("],
            "--expect-stdout-regex: regex parse error",
        ),
        (
            vec!["fix", "--dry-run", "--install-missing"],
            "--install-missing changes the interpreter's packages; a dry run changes nothing",
        ),
    ] {
        let out = p.run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    }
    // The output checks need a command (clap says so).
    let out = p.run(&["fix", "--stderr-empty"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--cmd <COMMAND>"), "{}", stderr(&out));
}
