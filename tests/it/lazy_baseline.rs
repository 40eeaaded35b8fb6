//! The lazy baseline (issue 23, item 2): with the failing log given, a targeted run of the
//! log's failures stands for the full baseline. Every case runs `fix --json LOG` twice on fresh
//! copies, lazily and with `SELFDEBUG_BASELINE=full` (the full baseline, as before), and the two
//! must end identically: exit code, final status, patches, each failure's status, each attempt's
//! rule and outcome, and the tree's bytes afterwards. A recording pytest plugin (`-p lazyrec`,
//! outside the project) lists every run's arguments, so the tests also prove which runs were
//! made: one full run fewer with the lazy baseline, the stale log's full baseline, the re-run on
//! the original code of a test that failed outside the log's failures.
//!
//! The sweep over `fixtures/bugs` (also against a run without the log) takes minutes and runs
//! with `SELFDEBUG_SLOW_TESTS=1`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support;
use support::project::{json, project, Project};

const RECORDER: &str = r#"import json, os


def pytest_configure(config):
    with open(os.environ["LAZYREC_OUT"], "a", encoding="utf-8") as f:
        f.write(json.dumps(list(config.invocation_params.args)) + "\n")
"#;

/// One `fix` run and what it did.
#[derive(Debug)]
struct Fixed {
    code: i32,
    json: Value,
    /// Each pytest run's arguments, in order.
    runs: Vec<Vec<String>>,
    /// The tree afterwards: relative path → bytes.
    tree: BTreeMap<String, Vec<u8>>,
}

impl Fixed {
    /// Runs of the whole suite (no test selected; collection-only runs left out).
    fn full_runs(&self) -> usize {
        self.runs.iter().filter(|a| selected(a).is_empty()).count()
    }

    /// Whether a run selected exactly these tests.
    fn ran_alone(&self, ids: &[&str]) -> bool {
        self.runs.iter().any(|a| selected(a) == ids)
    }

    /// What must be the same whichever baseline ran.
    fn verdicts(&self) -> Value {
        let j = &self.json;
        let pick = |list: &str, keys: &[&str]| -> Value {
            j[list]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| keys.iter().map(|k| x[*k].clone()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
                .into()
        };
        serde_json::json!({
            "exit": self.code,
            "final_status": j["final_status"],
            "patches": pick("patches", &["file", "diff"]),
            "failures": pick("failures", &["test", "when", "status", "exc_type"]),
            "attempts": pick("attempt_records", &["test", "rule", "diff", "outcome", "broke"]),
        })
    }
}

/// The positional arguments of a run (its selected tests), or `["<collect>"]` for a
/// collection-only run.
fn selected(args: &[String]) -> Vec<String> {
    if args.iter().any(|a| a == "--collect-only") {
        return vec!["<collect>".into()];
    }
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a.starts_with('-') {
            // Options that take a value as the next argument (none of them selects a test).
            skip = matches!(
                a.as_str(),
                "-p" | "--deselect" | "-n" | "-c" | "--rootdir" | "-o" | "--tb" | "-W"
            );
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// A project from files (relative path, content).
fn make(files: &[(&str, &str)]) -> Project {
    project(files)
}

/// A copy of `fixtures/bugs/CASE/project`.
fn bug_case(case: &str) -> Project {
    let p = project(&[]);
    support::copy_dir(
        &support::fixtures().join("bugs").join(case).join("project"),
        &p.root,
    );
    p
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap();
            (
                rel.to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `fix --json [LOG] [EXTRA] -- -p lazyrec`, the full baseline forced with `full`.
fn fix(p: &Project, log: Option<&Path>, full: bool, extra: &[&str]) -> Fixed {
    let plug = p.cache.join("lazyrec");
    std::fs::create_dir_all(&plug).unwrap();
    std::fs::write(plug.join("lazyrec.py"), RECORDER).unwrap();
    let rec = p.cache.join("runs.jsonl");
    let _ = std::fs::remove_file(&rec);
    let mut args: Vec<&str> = vec!["fix", "--json"];
    if let Some(log) = log {
        args.push(support::path_str(log));
    }
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "-p", "lazyrec"]);
    let mut cmd = p.cmd(&args);
    cmd.env("PYTHONPATH", &plug)
        .env("LAZYREC_OUT", &rec)
        .env_remove("PYTEST_ADDOPTS");
    if full {
        cmd.env("SELFDEBUG_BASELINE", "full");
    } else {
        cmd.env_remove("SELFDEBUG_BASELINE");
    }
    let out = cmd.output().unwrap();
    support::check_json_output(&args, &out.stdout);
    let runs = std::fs::read_to_string(&rec)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Fixed {
        code: out.status.code().unwrap_or(-1),
        json: json(&out),
        runs,
        tree: tree(&p.root),
    }
}

/// Fresh copies from `make`, the log from `log_args`, then the lazy and the full baseline:
/// identical verdicts and trees. Returns (lazy, full).
fn both(make: &dyn Fn() -> Project, log_args: &[&str], extra: &[&str]) -> (Fixed, Fixed) {
    let run = |full: bool| {
        let p = make();
        let log = p.pytest_log(log_args);
        fix(&p, Some(&log), full, extra)
    };
    let lazy = run(false);
    let full = run(true);
    assert_eq!(
        lazy.verdicts(),
        full.verdicts(),
        "lazy and full baselines disagree\nlazy: {:#}\nfull: {:#}",
        lazy.json,
        full.json
    );
    assert!(lazy.tree == full.tree, "the trees differ afterwards");
    (lazy, full)
}

const WORDS: &str = "def shout(text):\n    return text.upper() + \"!\"\n\n\ndef whisper(text):\n    return text.lower()\n";

const WORDS_TEST: &str = "from words import shout, whisper\n\n\ndef test_shout_none():\n    assert shout(None) == \"!\"\n\n\ndef test_shout():\n    assert shout(\"hi\") == \"HI!\"\n\n\ndef test_whisper():\n    assert whisper(\"HI\") == \"hi\"\n";

const INI: &str = "[pytest]\ntestpaths = tests\npythonpath = .\n";

fn words_project(more: &[(&str, &str)]) -> Project {
    let mut files = vec![
        ("pytest.ini", INI),
        ("words.py", WORDS),
        ("tests/test_words.py", WORDS_TEST),
    ];
    files.extend_from_slice(more);
    make(&files)
}

#[test]
fn the_log_reproduced_by_a_targeted_run_replaces_the_full_baseline() {
    let (lazy, full) = both(&|| words_project(&[]), &[], &[]);
    assert_eq!(lazy.code, 0, "{:#}", lazy.json);
    assert_eq!(lazy.json["final_status"], "pass");
    // The first run is the log's failing test alone; one full run (the confirming one).
    assert_eq!(
        selected(&lazy.runs[0]),
        ["tests/test_words.py::test_shout_none"]
    );
    assert_eq!(lazy.full_runs(), 1, "{:?}", lazy.runs);
    assert_eq!(full.full_runs(), 2, "{:?}", full.runs);
    assert_eq!(
        lazy.json["pytest_runs"], full.json["pytest_runs"],
        "the targeted run takes the full baseline's place"
    );
    assert_eq!(lazy.json["notes"], serde_json::json!([]));
}

#[test]
fn a_stale_log_runs_the_full_baseline_and_says_so() {
    // The log is of an older version: the test failed with AttributeError; it now fails
    // with a TypeError elsewhere.
    let make = || {
        let p = words_project(&[]);
        let log = p.pytest_log(&[]);
        std::fs::write(
            p.root.join("words.py"),
            "def shout(text):\n    return \"\".join(text) + \"!\"\n\n\ndef whisper(text):\n    return text.lower()\n",
        )
        .unwrap();
        std::fs::rename(&log, p.cache.join("old.log")).unwrap();
        p
    };
    let run = |full: bool| {
        let p = make();
        fix(&p, Some(&p.cache.join("old.log")), full, &[])
    };
    let lazy = run(false);
    let full = run(true);
    assert_eq!(
        lazy.verdicts(),
        full.verdicts(),
        "{:#}\n{:#}",
        lazy.json,
        full.json
    );
    assert!(lazy.tree == full.tree);
    let notes = lazy.json["notes"].to_string();
    assert!(
        notes.contains(
            "the log is stale (tests/test_words.py::test_shout_none fails with TypeError now, \
             the log says AttributeError): the whole suite was run as the baseline"
        ),
        "{notes}"
    );
    // The targeted reproduction, then the full baseline as before.
    assert_eq!(
        selected(&lazy.runs[0]),
        ["tests/test_words.py::test_shout_none"]
    );
    assert!(selected(&lazy.runs[1]).is_empty(), "{:?}", lazy.runs);
    assert_eq!(lazy.full_runs(), full.full_runs());
    assert_eq!(
        lazy.json["pytest_runs"].as_u64().unwrap(),
        full.json["pytest_runs"].as_u64().unwrap() + 1
    );
}

#[test]
fn a_failure_the_log_omits_is_learnt_on_the_original_code() {
    // The log is of one file's tests; another file has a failure of its own, before any fix.
    let other = (
        "tests/test_later.py",
        "def test_not_done_yet():\n    raise NotImplementedError(\"later\")\n",
    );
    let (lazy, full) = both(&|| words_project(&[other]), &["tests/test_words.py"], &[]);
    assert_eq!(lazy.code, 0, "{:#}", lazy.json);
    assert_eq!(
        lazy.json["patches"][0]["file"], "words.py",
        "{:#}",
        lazy.json
    );
    // It failed in the confirming run and was run alone on the original code, where it
    // failed too: no breakage.
    assert!(
        lazy.ran_alone(&["tests/test_later.py::test_not_done_yet"]),
        "{:?}",
        lazy.runs
    );
    assert_eq!(lazy.full_runs(), 1, "{:?}", lazy.runs);
    assert_eq!(full.full_runs(), 2, "{:?}", full.runs);
    // The targeted reproduction for the full baseline, and one targeted run more.
    assert_eq!(
        lazy.json["pytest_runs"].as_u64().unwrap(),
        full.json["pytest_runs"].as_u64().unwrap() + 1
    );
}

#[test]
fn a_candidate_that_breaks_a_test_outside_the_log_is_rejected() {
    // `shout(None)` must raise TypeError (test_shout_none_raises, outside the log) and give
    // "!" (the log's test): the None guard that passes the log's test breaks the other one.
    let contradicting = (
        "tests/test_contract.py",
        "import pytest\n\nfrom words import shout\n\n\ndef test_shout_none_raises():\n    with pytest.raises(AttributeError):\n        shout(None)\n",
    );
    // The rules' None guard is the candidate that breaks the other test. The search is off:
    // how many of its edits fit in a time limit depends on the machine's load, and the two
    // runs are compared attempt by attempt.
    let no_search = ("selfdebug.toml", "ignore = [\"search\"]\n");
    let (lazy, full) = both(
        &|| words_project(&[contradicting, no_search]),
        &["tests/test_words.py"],
        &[],
    );
    assert_eq!(lazy.code, 4, "{:#}", lazy.json);
    let broke: Vec<&Value> = lazy.json["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["outcome"] == "new_failures")
        .collect();
    assert!(!broke.is_empty(), "{:#}", lazy.json);
    assert_eq!(
        broke[0]["broke"],
        serde_json::json!(["tests/test_contract.py::test_shout_none_raises"])
    );
    // Run alone on the original code once, where it passed: the candidates broke it.
    let alone = lazy
        .runs
        .iter()
        .filter(|a| selected(a) == ["tests/test_contract.py::test_shout_none_raises"])
        .count();
    assert_eq!(alone, 1, "{:?}", lazy.runs);
    assert!(lazy.full_runs() < full.full_runs());
}

const SWEEP: &[&str] = &[
    "attr_typo_method",
    "attr_str_function",
    "key_optional_fee",
    "len_function",
    "multi_shifted_lines",
    "budget_group_nickname",
    "name_missing_stdlib_import",
    "syntax_missing_colon",
    "zerodiv_average_function",
    "subtest_unittest_labels",
    "enc_latin1_key",
    "env_missing_file",
    "search_arith_operator",
    "unbound_branch_function",
    "raises_step_zero",
];

/// Every case of the sweep: the lazy baseline, the full baseline with the log, and no log at
/// all end the same; the lazy one makes one full run fewer.
#[test]
fn fixtures_end_the_same_with_a_lazy_baseline() {
    if !support::slow_tests() {
        eprintln!("skipped: set SELFDEBUG_SLOW_TESTS=1 to run the lazy baseline's fixture sweep");
        return;
    }
    let mut rows = Vec::new();
    for case in SWEEP {
        let (lazy, full) = both(&|| bug_case(case), &[], &[]);
        let p = bug_case(case);
        let none = fix(&p, None, false, &[]);
        assert_eq!(
            lazy.verdicts(),
            none.verdicts(),
            "{case}: with the log and without differ\n{:#}\n{:#}",
            lazy.json,
            none.json
        );
        assert!(lazy.tree == none.tree, "{case}: the trees differ");
        assert!(
            lazy.full_runs() < full.full_runs(),
            "{case}: {:?} / {:?}",
            lazy.runs,
            full.runs
        );
        rows.push(format!(
            "{case}: exit {} runs {} (full baseline {}) full runs {} (full baseline {})",
            lazy.code,
            lazy.json["pytest_runs"],
            full.json["pytest_runs"],
            lazy.full_runs(),
            full.full_runs()
        ));
    }
    eprintln!("{}", rows.join("\n"));
}
