//! `selfdebug replay` on a generated history: fix commits it repairs like the developer and
//! differently, one whose test fails on the fix too, a refactor, a too-large change, a test-only
//! commit and a merge. The user's tree, index, HEAD and branches stay as they were, no temp dir
//! is left, and a second run takes the reproductions from the cache.

use crate::support::project::{assert_same, json, project, selfdebug_entries, snapshot, Project};
use crate::support::{assert_exit, assert_valid};

const WORDS: &str = "\
def to_upper(text):
    words = text.split()
    return \" \".join(w.upper() for w in words)


def greet(name):
    return \"hello \" + name.strip()


def count_words(text):
    return len(text.split(\" \"))


def first(items):
    return items[0]


def last(items):
    return items[-1]
";

const TESTS: &str = "\
from words import to_upper, greet, count_words


def test_upper():
    assert to_upper(\"a b\") == \"A B\"


def test_greet():
    assert greet(\" bob \") == \"hello bob\"
";

/// Rewrites `path` with `from` replaced by `to` (which must be there).
fn edit(p: &Project, path: &str, from: &str, to: &str) {
    let text = p.read(path);
    assert!(text.contains(from), "{path}: {from:?}");
    std::fs::write(p.root.join(path), text.replacen(from, to, 1)).unwrap();
}

fn append(p: &Project, path: &str, text: &str) {
    let old = p.read(path);
    std::fs::write(p.root.join(path), old + text).unwrap();
}

fn commit(p: &Project, subject: &str) {
    p.git(&["add", "-A"]);
    p.git(&["commit", "-q", "-m", subject]);
}

/// "Fix crash on None text": `(text or "").split()` and the test that pins it.
fn commit_none_fix(p: &Project) {
    edit(
        p,
        "words.py",
        "words = text.split()",
        "words = (text or \"\").split()",
    );
    append(
        p,
        "tests/test_words.py",
        "\n\ndef test_upper_none():\n    assert to_upper(None) == \"\"\n",
    );
    commit(p, "Fix crash on None text");
}

/// The history, oldest first (`git log` order is the reverse):
/// - the initial commit (it only adds source files: no source change);
/// - "Fix crash on None text": `(text or "").split()`, the edit `fix` makes (correct);
/// - "Greet nobody": an early return where `fix` guards the call (plausible);
/// - "Refactor first": no test change;
/// - "Add a README" on a branch, merged with a merge commit (no test change; merge);
/// - "Count words by runs of spaces": its new test expects 5 words in "a  b" (fails on the fix
///   too);
/// - "Add many helpers": 12 source lines (too large);
/// - "Test last": tests only (no source change).
fn history() -> Project {
    let p = project(&[("words.py", WORDS), ("tests/test_words.py", TESTS)]);
    p.git(&["init", "-q", "-b", "main"]);
    commit(&p, "Initial words");
    commit_none_fix(&p);
    edit(
        &p,
        "words.py",
        "def greet(name):\n",
        "def greet(name):\n    if name is None:\n        return \"hello \"\n",
    );
    append(
        &p,
        "tests/test_words.py",
        "\n\ndef test_greet_none():\n    assert greet(None) == \"hello \"\n",
    );
    commit(&p, "Greet nobody");
    edit(
        &p,
        "words.py",
        "    return items[0]",
        "    item = items[0]\n    return item",
    );
    commit(&p, "Refactor first");
    p.git(&["checkout", "-q", "-b", "docs"]);
    std::fs::write(p.root.join("README.md"), "# words\n").unwrap();
    commit(&p, "Add a README");
    p.git(&["checkout", "-q", "main"]);
    p.git(&["merge", "-q", "--no-ff", "docs", "-m", "Merge docs"]);
    edit(&p, "words.py", "text.split(\" \")", "text.split()");
    append(
        &p,
        "tests/test_words.py",
        "\n\ndef test_count_spaces():\n    assert count_words(\"a  b\") == 5\n",
    );
    commit(&p, "Count words by runs of spaces");
    let helpers: String = (0..6)
        .map(|i| format!("\n\ndef f{i}():\n    return {i}\n"))
        .collect();
    append(&p, "words.py", &helpers);
    append(
        &p,
        "tests/test_words.py",
        "\n\ndef test_f0():\n    import words\n    assert words.f0() == 0\n",
    );
    commit(&p, "Add many helpers");
    append(
        &p,
        "tests/test_words.py",
        "\n\ndef test_last():\n    from words import last\n    assert last([1, 2]) == 2\n",
    );
    commit(&p, "Test last");
    p
}

/// (short, status, reason) of each commit.
fn statuses(j: &serde_json::Value) -> Vec<(String, String, String)> {
    j["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("-").to_string();
            (s("subject"), s("status"), s("reason"))
        })
        .collect()
}

/// The table `replay` prints for this report, every time as `0.0s`.
fn expected_table(j: &serde_json::Value) -> String {
    let c = j["commits"].as_array().unwrap();
    let runs = |i: usize| c[i]["fix"]["pytest_runs"].as_u64().unwrap();
    let row = |i: usize, status: &str, reason: &str, time: &str, runs: &str, subject: &str| {
        let short = c[i]["short"].as_str().unwrap();
        format!("{short:<7}  {status:<16}  {reason:<18}  {time:>7}  {runs:>4}  {subject}\n")
    };
    [
        format!("{:<7}  {:<16}  {:<18}  {:>7}  {:>4}  subject\n", "commit", "status", "reason", "time", "runs"),
        row(0, "not reproducible", "fails on the fix", "-", "-", "Count words by runs of spaces"),
        row(1, "plausible", "-", "0.0s", &runs(1).to_string(), "Greet nobody"),
        row(2, "correct", "-", "0.0s", &runs(2).to_string(), "Fix crash on None text"),
        "\n".to_string(),
        "scanned 9 commits, candidates 3; skipped: merge 1, no test change 2, no source change 2, too large 1\n".to_string(),
        "reproduced 2 of 3: plausible 2 (correct 1), partial 0, damaged 0, missed 0, errors 0; median time 0.0s\n".to_string(),
        "not reproducible 1: 1 fails on the fix\n".to_string(),
    ]
    .concat()
}

#[test]
fn replays_a_generated_history_and_caches_the_reproductions() {
    let p = history();
    let before = snapshot(&p.root);
    let head = p.git(&["rev-parse", "HEAD"]);

    let out = p.run(&["replay", "--json"]);
    assert_exit(&out, 0);
    let j = json(&out);
    assert_eq!(
        statuses(&j),
        [
            (
                "Count words by runs of spaces",
                "not_reproducible",
                "fails_on_fix"
            ),
            ("Greet nobody", "plausible", "-"),
            ("Fix crash on None text", "correct", "-"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    let t = &j["totals"];
    assert_eq!(
        (
            t["scanned"].as_u64(),
            t["candidates"].as_u64(),
            t["reproduced"].as_u64()
        ),
        (Some(9), Some(3), Some(2))
    );
    assert_eq!(
        t["skipped"],
        serde_json::json!({"merge": 1, "no_test_change": 2, "no_source_change": 2, "too_large": 1})
    );
    assert_eq!(t["not_reproducible"]["fails_on_fix"], 1);
    assert_eq!(
        [
            &t["plausible"],
            &t["correct"],
            &t["partial"],
            &t["damaged"],
            &t["errors"]
        ],
        [1 + 1, 1, 0, 0, 0].map(serde_json::Value::from).each_ref()
    );
    let c = &j["commits"];
    assert_eq!(
        c[0]["detail"],
        "tests/test_words.py::test_count_spaces fails on the fix too (1 such)"
    );
    assert_eq!(
        c[1]["selection"],
        serde_json::json!(["tests/test_words.py::test_greet_none"])
    );
    assert_eq!(
        c[2]["selection"],
        serde_json::json!(["tests/test_words.py::test_upper_none"])
    );
    for (i, same) in [(1, false), (2, true)] {
        assert_eq!(
            c[i]["fix"]["files_patched"],
            serde_json::json!(["words.py"])
        );
        assert_eq!(
            c[i]["checks"],
            serde_json::json!({"selection_passed": true, "broken": [], "leftovers": [],
                               "same_as_developer": same, "suite_checked": true})
        );
        assert_eq!(c[i]["cached"], false);
    }
    assert!(c[2]["fix"]["patch"]
        .as_str()
        .unwrap()
        .contains("+    words = (text or \"\").split()\n"));
    assert_eq!(
        t["pytest_runs"],
        c[1]["fix"]["pytest_runs"].as_u64().unwrap() + c[2]["fix"]["pytest_runs"].as_u64().unwrap()
    );

    // Again, two commits at a time, as a table, with the JSON to a file: every reproduction
    // comes from the cache, the order is the history's.
    let json_file = p.cache.join("replay.json");
    let out = p.run(&[
        "replay",
        "--jobs",
        "2",
        "--json-file",
        json_file.to_str().unwrap(),
    ]);
    assert_exit(&out, 0);
    let doc = std::fs::read(&json_file).unwrap();
    assert_valid("replay.schema.json", None, &[&doc]);
    let j2: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    assert_eq!(statuses(&j2), statuses(&j));
    assert!(j2["commits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["cached"] == true));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("reproducing"), "{stderr}");
    let times = regex::Regex::new(r" +\d+\.\ds").unwrap();
    let table = times
        .replace_all(&String::from_utf8_lossy(&out.stdout), " T")
        .into_owned();
    let expected = times.replace_all(&expected_table(&j2), " T").into_owned();
    assert_eq!(table, expected);

    // Nothing of the user's changed (the work tree, .git with its index, HEAD and branches),
    // and no temp dir is left.
    assert_same(&before, &snapshot(&p.root));
    assert_eq!(p.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(
        selfdebug_entries(&p.cache.join("tmp")),
        Vec::<String>::new()
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let p = history();
    let plain = project(&[("a.py", "x = 1\n")]);
    for (proj, args, msg) in [
        (
            &plain,
            vec!["replay"],
            format!("{} is not in a git repository", plain.root.display()),
        ),
        (
            &p,
            vec!["replay", "--range", "nope..HEAD"],
            "--range: \"nope\" is not a commit of this repository".to_string(),
        ),
        (
            &p,
            vec!["replay", "--range", "HEAD"],
            "--range \"HEAD\": expected A..B (two commits, either may be left out)".to_string(),
        ),
        (
            &p,
            vec!["replay", "--since", "May 1"],
            "--since \"May 1\": expected a day as YYYY-MM-DD".to_string(),
        ),
    ] {
        let out = proj.run(&args);
        assert_exit(&out, 2);
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("selfdebug: error: {msg}\n"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
        let mut with_json = args.clone();
        with_json.push("--json");
        let out = proj.run(&with_json);
        assert_exit(&out, 2);
        assert_eq!(
            json(&out),
            serde_json::json!({"schema_version": 1, "exit_code": 2, "error": msg})
        );
    }
    // A flag clap refuses: the envelope too.
    let out = p.run(&["replay", "--json", "--jobs", "0"]);
    assert_exit(&out, 2);
    let j = json(&out);
    assert_eq!(
        (j["exit_code"].as_u64(), j.as_object().unwrap().len()),
        (Some(2), 3)
    );
    // A range without a candidate needs no Python: the counts only.
    let out = p.run(&["replay", "--json", "--range", "HEAD~2..HEAD"]);
    assert_exit(&out, 0);
    let j = json(&out);
    assert_eq!(
        (
            j["totals"]["scanned"].as_u64(),
            j["totals"]["candidates"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(
        (j["python"].clone(), j["commits"].clone()),
        (serde_json::Value::Null, serde_json::json!([]))
    );
    let out = p.run(&["replay", "--json", "--since", "2999-01-01"]);
    assert_eq!(json(&out)["totals"]["scanned"], 0);
}

/// Ctrl-C while a `fix` runs on a bug: the `fix` is told to stop and restores, the replay
/// reports what it did (exit 6, `interrupted`), and no temp dir is left.
#[test]
fn ctrl_c_stops_the_replay_and_removes_its_trees() {
    use std::io::BufRead;
    let p = history();
    let before = snapshot(&p.root);
    let mut child = p
        .cmd(&["replay", "--json", "--no-cache"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            if line.ends_with("repairing") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // The first reproduced commit is handed to `fix`.
    rx.recv_timeout(std::time::Duration::from_secs(300))
        .expect("a repair starts");
    // SAFETY: plain syscall on our own child, which has not been waited for yet.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let j = json(&out);
    assert_eq!(j["interrupted"], true);
    assert_eq!(
        statuses(&j),
        [
            (
                "Count words by runs of spaces",
                "not_reproducible",
                "fails_on_fix"
            ),
            ("Greet nobody", "error", "-"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    assert_eq!(j["commits"][1]["detail"], "interrupted");
    assert!(stderr.ends_with("error - interrupted\n"), "{stderr}");
    assert_same(&before, &snapshot(&p.root));
    assert_eq!(
        selfdebug_entries(&p.cache.join("tmp")),
        Vec::<String>::new()
    );
}

/// `--root` below the repository's top: the project is that directory in every tree (its
/// tests run there, node ids are relative to it); a commit whose tests lie outside it has no
/// test file to run.
#[test]
fn a_project_below_the_top_runs_its_own_tests_only() {
    let p = project(&[
        ("app/calc.py", "def half(x):\n    return x / 2\n"),
        (
            "app/tests/test_calc.py",
            "from calc import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
        ),
        ("tools/tool.py", "def name():\n    return 'tool'\n"),
        (
            "tools/tests/test_tool.py",
            "from tool import name\n\n\ndef test_name():\n    assert name() == 'tool'\n",
        ),
    ]);
    p.git(&["init", "-q", "-b", "main"]);
    commit(&p, "Initial");
    edit(&p, "app/calc.py", "x / 2", "x // 2");
    append(
        &p,
        "app/tests/test_calc.py",
        "\n\ndef test_half_odd():\n    assert half(5) == 2.5\n",
    );
    commit(&p, "Halve odd numbers");
    edit(&p, "tools/tool.py", "'tool'", "'tools'");
    append(
        &p,
        "tools/tests/test_tool.py",
        "\n\ndef test_plural():\n    assert name() == 'tools'\n",
    );
    commit(&p, "Name the tools");
    let out = p
        .cmd_in("app", &["replay", "--json", "--no-cache"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let j = json(&out);
    assert_eq!(j["project"], "app");
    assert_eq!(
        statuses(&j),
        [
            ("Name the tools", "not_reproducible", "no_test_file"),
            ("Halve odd numbers", "not_reproducible", "passes_on_bug"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    assert_eq!(
        j["commits"][1]["test_files"],
        serde_json::json!(["app/tests/test_calc.py"])
    );
}

/// A suite that writes into its own tree (a conftest that leaves a report file with the time
/// in it, as `--junitxml` does): the file differs after `fix` but is the tests' own, so the
/// correct patch is scored correct, not damaged for "left files changed".
#[test]
fn files_the_suite_itself_writes_are_not_the_fixes_leftovers() {
    let p = project(&[
        ("words.py", WORDS),
        ("tests/test_words.py", TESTS),
        (
            "conftest.py",
            "import time\n\n\ndef pytest_sessionfinish(session):\n    \
             with open(\"report.txt\", \"w\") as f:\n        f.write(repr(time.time()))\n",
        ),
    ]);
    p.git(&["init", "-q", "-b", "main"]);
    commit(&p, "Initial words");
    commit_none_fix(&p);
    let out = p.run(&["replay", "--json", "--no-cache"]);
    assert_exit(&out, 0);
    let j = json(&out);
    assert_eq!(
        statuses(&j),
        [("Fix crash on None text", "correct", "-")].map(|(a, b, c)| (
            a.to_string(),
            b.to_string(),
            c.to_string()
        ))
    );
    assert_eq!(
        j["commits"][0]["checks"]["leftovers"],
        serde_json::json!([])
    );
}
