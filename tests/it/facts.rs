//! Crash-frame facts from the baseline run (issue 13 §1): selfdebug's own pytest plugin records
//! the failing frame and reruns the failing test once in the same session, and `fix` skips the
//! probe run when those facts cover the statement. Real pytest on real projects in temp dirs.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::{json as j, Value};
use support::project::{fixture_project, json, project};

const DEMO_FIXED: &str = "\"\"\"Small text helpers used by the selfdebug demo.\"\"\"\n\n\n\
def to_upper(text):\n    \"\"\"Return ``text`` upper-cased, with runs of whitespace collapsed.\"\"\"\n    \
words = (text or \"\").split()\n    return \" \".join(word.upper() for word in words)\n\n\n\
def headline(article):\n    \"\"\"Headline for an article dict; the title is optional.\"\"\"\n    \
title = article.get(\"title\")\n    return to_upper(title)\n";

#[test]
fn the_demo_is_proven_in_three_runs_from_the_baselines_facts() {
    let p = fixture_project("demo");
    let out = p.run(&["fix", "--json"]);
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["final_status"], "pass");
    // The plugin-instrumented baseline, the targeted run, the full run: no probe run.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 3 + 1);
    assert_eq!(v["phases_ms"]["probe_ms"], 0);
    // The same patch as with a probe run.
    assert_eq!(p.read("utils/demo.py"), DEMO_FIXED);
    assert_eq!(v["patches"][0]["rules"], j!(["null-guard-attribute"]));
    let probe = &v["failures"][0]["probe"];
    assert_eq!(probe["source"], "plugin");
    assert_eq!(probe["probe_line"], "");
    assert_eq!(
        (&probe["line"], &probe["statement_line"], &probe["fired"]),
        (&j!(6), &j!(6), &j!(true))
    );
    assert_eq!(probe["statement"], "    words = text.split()");
    assert_eq!(
        probe["locals"],
        j!([{"name": "text", "type": "NoneType", "repr": "None", "truncated": false}])
    );
    let exprs = probe["exprs"].as_array().unwrap();
    let texts: Vec<&str> = exprs.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["text.split", "text"]);
    assert_eq!(
        exprs[0]["error"],
        j!({"type": "AttributeError", "msg": "'NoneType' object has no attribute 'split'"})
    );
    assert_eq!(exprs[0]["value"], Value::Null);
    assert_eq!(
        (&exprs[1]["value"], &exprs[1]["is_none"]),
        (
            &j!({"type": "NoneType", "repr": "None", "truncated": false}),
            &j!(true)
        )
    );
    // dir() of the receiver of the failing attribute, as the probe records it.
    assert_eq!(exprs[1]["dir"]["is_self"], false);
    assert!(exprs[1]["dir"]["names"]
        .as_array()
        .unwrap()
        .contains(&j!("__bool__")));
    assert_eq!(
        probe["test_outcome"],
        j!({"exit_code": null, "timed_out": false, "passed": false, "reproduced": true,
            "exc_type": "AttributeError", "msg": "'NoneType' object has no attribute 'split'",
            "duration_ms": probe["test_outcome"]["duration_ms"]})
    );
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
}

/// A wrong variable passed to a library: the crash is in `genericpath`, two frames below the
/// project's statement.
const PATHS_BUGGY: &str = "import os.path\n\n\ndef report_path(directory, filename, size):\n    \
return os.path.join(directory, size)\n";
const PATHS_FIXED: &str = "import os.path\n\n\ndef report_path(directory, filename, size):\n    \
return os.path.join(directory, filename)\n";

#[test]
fn a_crash_deep_in_a_library_is_still_probed_and_fixed() {
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("paths.py", PATHS_BUGGY),
        (
            "tests/test_paths.py",
            "from paths import report_path\n\n\ndef test_report_path():\n    \
             assert report_path(\"/out\", \"r.txt\", 3) == \"/out/r.txt\"\n",
        ),
    ]);
    // One job: a second search candidate proven alongside would add a run to the count.
    let out = p.run(&["fix", "--json", "--jobs", "1"]);
    let v = json(&out);
    support::assert_exit(&out, 0);
    assert_eq!(p.read("paths.py"), PATHS_FIXED);
    let f = &v["failures"][0];
    assert_eq!((&f["file"], &f["line"]), (&j!("paths.py"), &j!(5)));
    // The innermost frame is the library's: the plugin's facts do not cover the statement.
    let probe = &f["probe"];
    assert_eq!(probe["source"], "probe");
    assert_eq!(probe["fired"], true);
    let size = probe["exprs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == "size")
        .expect("the probe saw `size`");
    assert_eq!(
        size["value"],
        j!({"type": "int", "repr": "3", "truncated": false})
    );
    assert!(v["phases_ms"]["probe_ms"].as_u64().unwrap() > 0);
    // The baseline, the probe, the search's coverage run, the targeted run, the full run.
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 5 + 1);
    assert_eq!(v["patches"][0]["rules"], j!(["search-variable"]));
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
}

/// The probe's run goes through the warm worker like the other runs: what it records, the fix
/// and the run count are those of `--worker off`, where every run is cold.
#[test]
fn a_probe_run_under_the_worker_reads_like_a_cold_one() {
    let mut seen = Vec::new();
    for worker in ["auto", "off"] {
        let p = project(&[
            ("pytest.ini", "[pytest]\n"),
            ("paths.py", PATHS_BUGGY),
            (
                "tests/test_paths.py",
                "from paths import report_path\n\n\ndef test_report_path():\n    \
                 assert report_path(\"/out\", \"r.txt\", 3) == \"/out/r.txt\"\n",
            ),
        ]);
        let out = p.run(&["fix", "--json", "--jobs", "1", "--worker", worker]);
        let v = json(&out);
        support::assert_exit(&out, 0);
        assert_eq!(p.read("paths.py"), PATHS_FIXED);
        // No run went cold for want of the worker (a refusal or a death would say so).
        assert_eq!(v["notes"], j!([]), "--worker {worker}");
        let mut probe = v["failures"][0]["probe"].clone();
        assert_eq!(probe["source"], "probe", "--worker {worker}");
        // What differs between any two runs: times, the temp dir, the probe's per-run names
        // (they carry the pid), object addresses in reprs.
        probe["test_outcome"]["duration_ms"] = Value::Null;
        for k in ["duration_ms", "module_file", "path", "probe_line"] {
            probe[k] = Value::Null;
        }
        let probe = without_addresses(&probe.to_string());
        // The worker's start is reported apart (a Python importing pytest), and what runs
        // waited for it is part of the tool's time; without the worker there is none.
        let phases = &v["phases_ms"];
        let start = phases["worker_start_ms"].as_u64().unwrap();
        let wait = phases["worker_wait_ms"].as_u64().unwrap();
        if worker == "auto" {
            assert!(start > 0, "{phases}");
            assert!(wait <= phases["tool_ms"].as_u64().unwrap(), "{phases}");
        } else {
            assert_eq!((start, wait), (0, 0), "{phases}");
        }
        support::assert_valid("fix.schema.json", None, &[&out.stdout]);
        seen.push((
            probe,
            v["pytest_runs"].clone(),
            v["patches"][0]["diff"].clone(),
        ));
    }
    assert_eq!(seen[0], seen[1]);
}

/// `<function join at 0x7f...>` → `<function join at 0x?>`.
fn without_addresses(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(" at 0x") {
        out.push_str(&rest[..i + 6]);
        rest = rest[i + 6..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
        out.push('?');
    }
    out.push_str(rest);
    out
}

/// Runs pytest in `root` with the plugin (from the binary's source) and the facts env; returns
/// pytest's stdout and the records.
fn plugin_run(root: &Path, extra_env: &[(&str, &str)]) -> (String, Vec<Value>) {
    let plugin = tempfile::tempdir().unwrap();
    std::fs::write(
        plugin.path().join("_selfdebug_pytest.py"),
        selfdebug::plugin::SOURCE,
    )
    .unwrap();
    std::fs::write(
        plugin
            .path()
            .join(format!("{}.py", selfdebug::plugin::VALUES_MODULE)),
        selfdebug::plugin::VALUES_SOURCE,
    )
    .unwrap();
    let facts = tempfile::tempdir().unwrap();
    let out = Command::new(support::python())
        .args([
            "-m",
            "pytest",
            "-p",
            "_selfdebug_pytest",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(root)
        .env("PYTHONPATH", plugin.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("SELFDEBUG_FACTS_DIR", facts.path())
        .env("SELFDEBUG_FACTS_ROOT", root)
        .envs(extra_env.iter().copied())
        .output()
        .unwrap();
    let mut names: Vec<_> = std::fs::read_dir(facts.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut records = Vec::new();
    for n in &names {
        // The passing tests' times (`passing-<pid>.json`, for the search's per-test limit) are
        // another record: they must be JSON, and are not facts.
        if n.starts_with("passing-") && n.ends_with(".json") {
            let text = std::fs::read_to_string(facts.path().join(n)).unwrap();
            serde_json::from_str::<Value>(&text).unwrap();
            continue;
        }
        // One file per process: `facts-<pid>.jsonl`.
        let pid = n
            .strip_prefix("facts-")
            .and_then(|r| r.strip_suffix(".jsonl"));
        assert!(pid.is_some_and(|p| p.parse::<u32>().is_ok()), "{n}");
        let text = std::fs::read_to_string(facts.path().join(n)).unwrap();
        records.extend(
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()),
        );
    }
    (String::from_utf8_lossy(&out.stdout).into_owned(), records)
}

#[test]
fn the_plugin_records_project_frames_and_reruns_each_failure_once() {
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        (
            "shop.py",
            "import textwrap\n\n\nclass Cart:\n    def __init__(self):\n        self.items = {}\n\n    \
             def total(self, key, n):\n        return self.items[key] * n + self.rate\n\n\n\
             def indent(note):\n    return textwrap.indent(note, \"  \")\n",
        ),
        (
            "tests/test_shop.py",
            "import os\n\nfrom shop import Cart, indent\n\nRUNS = os.path.join(os.path.dirname(__file__), \"runs.txt\")\n\n\n\
             def test_total():\n    Cart().total(\"tea\", 2)\n\n\n\
             def test_indent():\n    assert indent(None) == \"\"\n\n\n\
             def test_flaky():\n    n = int(open(RUNS).read()) + 1 if os.path.exists(RUNS) else 1\n    \
             open(RUNS, \"w\").write(str(n))\n    assert n > 1\n\n\n\
             def test_ok():\n    pass\n",
        ),
    ]);
    let (stdout, records) = plugin_run(&p.root, &[]);
    // Each test reported once: the reruns are not in the log.
    assert!(stdout.contains("3 failed, 1 passed"), "{stdout}");
    assert_eq!(p.read("tests/runs.txt"), "2");
    let by_test = |t: &str| {
        records
            .iter()
            .find(|r| r["test"] == format!("tests/test_shop.py::{t}"))
            .cloned()
    };
    // The library's frame is innermost: nothing is recorded, the probe will run.
    assert_eq!(by_test("test_indent"), None);
    assert_eq!(records.len(), 2, "{records:#?}");
    let total = by_test("test_total").unwrap();
    assert_eq!(
        (
            &total["file"],
            &total["line"],
            &total["statement_line"],
            &total["exc_type"],
            &total["msg"],
            &total["rerun"],
            &total["module"]
        ),
        (
            &j!("shop.py"),
            &j!(9),
            &j!(9),
            &j!("KeyError"),
            &j!("'tea'"),
            &j!("same"),
            &j!("shop")
        )
    );
    let locals: Vec<(&str, &str)> = total["locals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), l["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        locals,
        [("self", "shop.Cart"), ("key", "str"), ("n", "int")]
    );
    let exprs: Vec<(&str, Option<&str>, Option<&str>)> = total["exprs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["text"].as_str().unwrap(),
                e["repr"].as_str(),
                e["error"]["type"].as_str(),
            )
        })
        .collect();
    // `self.items[key]` is not evaluated (its key is not a constant), `self` once.
    assert_eq!(
        exprs,
        [
            ("self.items", Some("{}"), None),
            ("self", exprs[1].1, None),
            ("key", Some("'tea'"), None),
            ("n", Some("2"), None),
            ("self.rate", None, Some("AttributeError")),
        ]
    );
    assert!(exprs[1].1.unwrap().starts_with("<shop.Cart object at "));
    // The flaky test passed when run again in the same session.
    let flaky = by_test("test_flaky").unwrap();
    assert_eq!(
        (&flaky["file"], &flaky["rerun"]),
        (&j!("tests/test_shop.py"), &j!("passed"))
    );
}

#[test]
fn without_the_facts_dir_the_plugin_changes_nothing() {
    let p = project(&[
        ("m.py", "def f(x):\n    return x.y\n"),
        (
            "tests/test_m.py",
            "from m import f\n\n\ndef test_f():\n    f(None)\n",
        ),
    ]);
    let plugin = tempfile::tempdir().unwrap();
    std::fs::write(
        plugin.path().join("_selfdebug_pytest.py"),
        selfdebug::plugin::SOURCE,
    )
    .unwrap();
    std::fs::write(
        plugin
            .path()
            .join(format!("{}.py", selfdebug::plugin::VALUES_MODULE)),
        selfdebug::plugin::VALUES_SOURCE,
    )
    .unwrap();
    let out = Command::new(support::python())
        .args([
            "-m",
            "pytest",
            "-p",
            "_selfdebug_pytest",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(&p.root)
        .env("PYTHONPATH", plugin.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("SELFDEBUG_FACTS_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 failed in"), "{stdout}");
    assert_eq!(out.status.code(), Some(1));
}
