//! `selfdebug parse` as a user runs it: exit codes, stdin, JSON on stdout, errors on stderr,
//! and the JSON Schema checked against real outputs.

use crate::support;

use support::{fixtures, logs_of, path_str, project_root, projects, selfdebug};

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn json_for_the_demo_failure() {
    let log = fixtures().join("tracebacks/demo/tb-auto.txt");
    let root = project_root("demo");
    let out = selfdebug(
        &["parse", path_str(&log), "--root", path_str(&root), "--json"],
        None,
    );
    support::assert_exit(&out, 0);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "pytest");
    assert_eq!(v["pytest_rootdir"], "/tmp/selfdebug-capture/demo");
    let failures = v["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    let f = &failures[0];
    assert_eq!(f["test"], "tests/test_demo.py::test_headline_without_title");
    assert_eq!(f["when"], "call");
    assert_eq!(f["exc_type"], "AttributeError");
    assert_eq!(f["msg"], "'NoneType' object has no attribute 'split'");
    assert_eq!(
        f["location"]["file"], "utils/demo.py",
        "location: {}",
        f["location"]
    );
    assert_eq!(f["location"]["line"], 6);
    assert_eq!(f["location"]["func"], "to_upper");
    assert_eq!(f["location"]["code"], "words = text.split()");
    // `text.split` is what failed: columns 12..22 of `    words = text.split()`.
    assert_eq!(f["location"]["caret"]["line_start"], 12);
    assert_eq!(f["location"]["caret"]["line_end"], 22);
    let real = std::fs::read_to_string(root.join("utils/demo.py")).unwrap();
    let line6 = real.lines().nth(5).unwrap();
    assert_eq!(&line6[12..22], "text.split");
    assert_eq!(
        f["location"]["path"],
        path_str(&root.join("utils/demo.py")),
        "absolute path"
    );
    let frames: Vec<(String, u64)> = f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fr| {
            (
                fr["file"].as_str().unwrap().to_string(),
                fr["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        frames,
        vec![
            ("tests/test_demo.py".to_string(), 10),
            ("utils/demo.py".to_string(), 13),
            ("utils/demo.py".to_string(), 6)
        ]
    );
}

#[test]
fn reads_stdin_and_prints_human_view() {
    let log = std::fs::read(fixtures().join("tracebacks/shop/tb-short.txt")).unwrap();
    let root = project_root("shop");
    let out = selfdebug(&["parse", "-", "--root", path_str(&root)], Some(&log));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("5 failures read (pytest log, root "),
        "{text}"
    );
    assert!(
        text.contains(
            "FAILED tests/test_shop.py::test_parse_price_with_cents\n  shop.errors.PriceError: bad price '$4.50'\n  after ValueError: invalid literal for int() with base 10: '4.50'\n  at shop/cart.py:8 in parse_price\n"
        ),
        "{text}"
    );
}

#[test]
fn passing_log_exits_1() {
    let log = fixtures().join("tracebacks/all_pass/tb-auto.txt");
    let out = selfdebug(&["parse", path_str(&log), "--json"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["failures"], serde_json::json!([]));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.bin");
    std::fs::write(&garbage, [0u8, 159, 146, 150, 255, 10, 1, 2, 3]).unwrap();
    let prose = dir.path().join("notes.txt");
    std::fs::write(&prose, "Meeting notes\nNothing failed here.\n").unwrap();
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.path().join("missing.log");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["parse", path_str(&garbage)],
            "neither pytest output nor a Python traceback",
        ),
        (
            vec!["parse", path_str(&prose)],
            "neither pytest output nor a Python traceback",
        ),
        (
            vec!["parse", path_str(&empty)],
            "neither pytest output nor a Python traceback",
        ),
        (vec!["parse", path_str(&missing)], "cannot read"),
        (
            vec!["parse", path_str(&prose), "--root", path_str(&missing)],
            "not a directory",
        ),
        (vec!["parse", "--bogus-flag"], "unexpected argument"),
    ];
    for (args, needle) in cases {
        let out = selfdebug(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must stay clean");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        if !args.contains(&"--bogus-flag") {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("selfdebug: error: "), "{err}");
        }
    }
    // Nothing was written next to the inputs.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["empty.log", "garbage.bin", "notes.txt"]);
}

#[test]
fn help_documents_exit_codes() {
    let out = selfdebug(&["parse", "--help"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("1  the log is pytest output (or unittest output) in which nothing failed"),
        "{text}"
    );
    let out = selfdebug(&["--version"], None);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("selfdebug {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Every real output validates against `schema/parse.schema.json` (checked by Python's
/// `jsonschema`, installed by scripts/test).
#[test]
fn json_matches_schema() {
    let mut all: Vec<(String, std::path::PathBuf)> = Vec::new();
    for project in projects() {
        for (_, log) in logs_of(&project) {
            all.push((project.clone(), log));
        }
    }
    for (_, log) in logs_of("handmade") {
        all.push(("demo".to_string(), log));
    }
    let pasted = fixtures().join("tracebacks/pasted");
    for entry in std::fs::read_dir(&pasted).unwrap() {
        let project = entry.unwrap().file_name().into_string().unwrap();
        for (_, log) in logs_of(&format!("pasted/{project}")) {
            all.push((project.clone(), log));
        }
    }
    let mut docs: Vec<Vec<u8>> = Vec::new();
    for (project, log) in &all {
        let root = project_root(project);
        let out = selfdebug(
            &["parse", path_str(log), "--root", path_str(&root), "--json"],
            None,
        );
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "{}",
            log.display()
        );
        docs.push(out.stdout);
    }
    let refs: Vec<&[u8]> = docs.iter().map(Vec::as_slice).collect();
    support::assert_valid("parse.schema.json", None, &refs);
}
