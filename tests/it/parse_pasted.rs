//! Logs as users paste them (`fixtures/tracebacks/pasted/`, made by `scripts/capture-pasted`
//! from real pytest and unittest runs): a failure section cut out of a CI log, lines behind CI
//! time stamps and docker compose columns, GitLab section markers, colour inside all of them.
//! Each must read exactly as the clean capture it was made from.

use crate::support;

use std::path::Path;

use selfdebug::traceback::{self, ParsedLog};
use support::{fixtures, project_root};

fn parse(log: &Path, project: &str) -> ParsedLog {
    let bytes = std::fs::read(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let root = traceback::locate::absolute_root(&project_root(project)).expect("root");
    traceback::parse(&bytes, &root).unwrap_or_else(|e| panic!("{}: {e}", log.display()))
}

fn pasted(project: &str, shape: &str) -> ParsedLog {
    let log = fixtures().join(format!("tracebacks/pasted/{project}/{shape}.txt"));
    parse(&log, project)
}

fn original(project: &str, mode: &str) -> ParsedLog {
    let log = fixtures().join(format!("tracebacks/{project}/{mode}.txt"));
    parse(&log, project)
}

#[test]
fn ci_prefixed_logs_read_like_their_originals() {
    let cases = [
        ("shop", "github-actions", "tb-auto"),
        ("shop", "compose", "tb-long"),
        ("inventory", "github-compose-color", "color"),
        ("calc", "gitlab", "color"),
    ];
    for (project, shape, mode) in cases {
        let got = pasted(project, shape);
        let want = original(project, mode);
        assert!(!want.failures.is_empty(), "{project}/{mode}");
        assert!(
            want.failures.iter().all(|f| !f.frames.is_empty()),
            "{project}/{mode}"
        );
        // Everything: kind, rootdir, every failure with its frames, carets and location.
        assert_eq!(got, want, "{project}/{shape} vs {project}/{mode}");
    }
}

#[test]
fn failure_sections_cut_from_a_log_read_with_their_frames() {
    for project in ["demo", "shop"] {
        let want = original(project, "tb-long");
        // From the first `___ test ___` header to the end of the log: summary included.
        let with_summary = pasted(project, "fragment-summary");
        assert_eq!(with_summary.kind, traceback::LogKind::Pytest);
        assert_eq!(with_summary.pytest_rootdir, None, "no session header");
        assert_eq!(with_summary.failures, want.failures, "{project}");

        // Header to the end of the FAILURES section: no summary to name the tests, so ids come
        // from the test frame; the rest is identical.
        let bare = pasted(project, "fragment");
        assert_eq!(bare.failures.len(), want.failures.len(), "{project}");
        for (got, want) in bare.failures.iter().zip(&want.failures) {
            assert_eq!(got.summary, None);
            let mut got = got.clone();
            got.summary = want.summary.clone();
            if got.test.is_none() {
                // The exception group's traceback starts in CPython's drawing, with absolute
                // paths only: no relative test path to rebuild the id from.
                assert_eq!(
                    want.test.as_deref(),
                    Some("tests/test_shop.py::test_charge_all")
                );
                got.test = want.test.clone();
            }
            assert_eq!(&got, want, "{project}");
        }
    }
}

/// The demo project in a temp dir with its real pytest log, then `utils/demo.py` edited as
/// `edit` says: the log is now older than the code.
fn stale_demo(edit: impl Fn(&str) -> String) -> (support::project::Project, std::path::PathBuf) {
    let src = project_root("demo");
    let files: Vec<(String, String)> = [
        "conftest.py",
        "tests/test_demo.py",
        "utils/__init__.py",
        "utils/demo.py",
    ]
    .iter()
    .map(|p| (p.to_string(), std::fs::read_to_string(src.join(p)).unwrap()))
    .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let proj = support::project::project(&refs);
    let out = std::process::Command::new(support::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider", "--tb=long"])
        .current_dir(&proj.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("run pytest");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let log = proj.root.parent().unwrap().join("pytest.log");
    std::fs::write(&log, &out.stdout).unwrap();
    let code = proj.root.join("utils/demo.py");
    let before = std::fs::read_to_string(&code).unwrap();
    std::fs::write(&code, edit(&before)).unwrap();
    (proj, log)
}

/// 35 lines of a new helper above `to_upper`: the failing `words = text.split()` moves from
/// line 6 to 41.
fn insert_helper(src: &str) -> String {
    let mut helper =
        String::from("def slug(text):\n    \"\"\"Lower-case words joined by dashes.\"\"\"\n");
    for i in 0..30 {
        helper.push_str(&format!("    # step {i}\n"));
    }
    helper.push_str("    return \"-\".join(text.lower().split())\n\n\n");
    src.replacen("\n\ndef to_upper", &format!("\n\n{helper}def to_upper"), 1)
}

#[test]
fn stale_log_is_reanchored_on_the_printed_source() {
    let (proj, log) = stale_demo(insert_helper);
    let moved = proj.read("utils/demo.py");
    assert_eq!(moved.lines().nth(40), Some("    words = text.split()"));
    let root = traceback::locate::absolute_root(&proj.root).unwrap();
    let parsed = traceback::parse(&std::fs::read(&log).unwrap(), &root).unwrap();
    let f = &parsed.failures[0];
    let loc = f.location.as_ref().expect("location");
    assert_eq!((loc.file.as_str(), loc.line), ("utils/demo.py", 41));
    assert_eq!(loc.code.as_deref(), Some("words = text.split()"));
    assert_eq!(
        loc.stale,
        Some(traceback::Stale {
            printed_line: 6,
            line: 41,
            offset: 35
        })
    );
    // The caret is mapped onto the line where the text is now: `text.split` at 12..22.
    let c = loc.caret.expect("caret");
    assert_eq!((c.line_start, c.line_end), (Some(12), Some(22)));
    // Frames keep what the log printed.
    assert_eq!(f.frames[2].line, 6);
    assert!(f.rejected_frames.is_empty(), "{:?}", f.rejected_frames);

    // `fix` repairs the line where the text is now (nothing run: --no-validate).
    let out = proj.run(&["fix", support::path_str(&log), "--no-validate", "--json"]);
    let v = support::project::json(&out);
    assert_eq!(v["final_status"], "proposed", "{v}");
    let diff = v["patches"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("@@ -38,"), "{diff}");
    assert!(diff.contains("-    words = text.split()"), "{diff}");
}

#[test]
fn log_whose_source_is_gone_is_refused_clearly() {
    let (proj, log) = stale_demo(|src| {
        insert_helper(src).replace("words = text.split()", "words = str(text).split()")
    });
    let root = traceback::locate::absolute_root(&proj.root).unwrap();
    let parsed = traceback::parse(&std::fs::read(&log).unwrap(), &root).unwrap();
    let f = &parsed.failures[0];
    assert_eq!(f.location, None);
    assert_eq!(
        f.rejected_frames,
        vec![traceback::RejectedFrame {
            frame_index: 2,
            file: "utils/demo.py".into(),
            line: 6,
            reason: traceback::RejectReason::SourceChanged,
        }]
    );
    let out = proj.run(&["parse", support::path_str(&log)]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  the log does not match the code: what it prints at utils/demo.py:6 is no longer there\n"),
        "{text}"
    );
    let out = proj.run(&["fix", support::path_str(&log), "--no-validate", "--json"]);
    let v = support::project::json(&out);
    assert_eq!(
        v["failures"][0]["reason"],
        "the log does not match the code: the source line it prints at utils/demo.py:6 is no longer there (the log is older than the code); run pytest again for a fresh log",
        "{v}"
    );
    assert_eq!(v["patches"], serde_json::json!([]));
}

/// (test, when, outcome, exc_type, msg, location) of every failure.
type Essentials = (
    Option<String>,
    traceback::When,
    traceback::Outcome,
    String,
    String,
    Option<(String, u32)>,
);

fn essentials(parsed: &ParsedLog) -> Vec<Essentials> {
    parsed
        .failures
        .iter()
        .map(|f| {
            (
                f.test.clone(),
                f.when,
                f.outcome,
                f.exc_type.clone(),
                f.msg.clone(),
                f.location.as_ref().map(|l| (l.file.clone(), l.line)),
            )
        })
        .collect()
}

fn unittest_app_failures() -> Vec<Essentials> {
    use traceback::{Outcome, When};
    let s = |x: &str| x.to_string();
    vec![
        (
            Some(s(
                "tests/test_book.py::TestOwner::test_initials_without_owner",
            )),
            When::Call,
            Outcome::Error,
            s("AttributeError"),
            s("'NoneType' object has no attribute 'split'"),
            Some((s("ledger/book.py"), 15)),
        ),
        (
            Some(s(
                "tests/test_book.py::TestStatement::test_total_is_a_number",
            )),
            When::Setup,
            Outcome::Error,
            s("TypeError"),
            s("'NoneType' object is not iterable"),
            Some((s("ledger/book.py"), 7)),
        ),
        (
            Some(s(
                "tests/test_book.py::TestBalance::test_refund_counts_negative",
            )),
            When::Call,
            Outcome::Failed,
            s("AssertionError"),
            s("13 != 7"),
            Some((s("tests/test_book.py"), 12)),
        ),
    ]
}

#[test]
fn unittest_output_names_the_test_and_keeps_fail_apart_from_error() {
    for shape in [
        "unittest",
        "unittest-verbose",
        "unittest-py310",
        "github-actions",
    ] {
        let parsed = pasted("unittest_app", shape);
        assert_eq!(parsed.kind, traceback::LogKind::Unittest, "{shape}");
        assert_eq!(essentials(&parsed), unittest_app_failures(), "{shape}");
        let f = &parsed.failures[0];
        let headline = if shape == "unittest-py310" {
            "test_initials_without_owner (tests.test_book.TestOwner)"
        } else {
            "test_initials_without_owner (tests.test_book.TestOwner.test_initials_without_owner)"
        };
        assert_eq!(f.headline.as_deref(), Some(headline), "{shape}");
        let frames: Vec<(&str, u32, Option<&str>)> = f
            .frames
            .iter()
            .map(|fr| (fr.file.as_str(), fr.line, fr.func.as_deref()))
            .collect();
        assert_eq!(
            frames,
            vec![
                (
                    "tests/test_book.py",
                    17,
                    Some("test_initials_without_owner")
                ),
                ("ledger/book.py", 15, Some("owner_initials")),
            ],
            "{shape}"
        );
    }
    // Without the project, the test keeps unittest's own id.
    let log = fixtures().join("tracebacks/pasted/unittest_app/unittest.txt");
    let parsed = parse(&log, "demo");
    assert_eq!(
        parsed.failures[2].test.as_deref(),
        Some("tests.test_book.TestBalance.test_refund_counts_negative")
    );
}

#[test]
fn a_real_unittest_run_is_repaired_by_fix() {
    let src = project_root("unittest_app");
    let names = [
        "ledger/__init__.py",
        "ledger/book.py",
        "tests/__init__.py",
        "tests/test_book.py",
    ];
    let files: Vec<(String, String)> = names
        .iter()
        .map(|p| (p.to_string(), std::fs::read_to_string(src.join(p)).unwrap()))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let proj = support::project::project(&refs);
    let out = std::process::Command::new(support::python())
        .args(["-m", "unittest"])
        .current_dir(&proj.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run unittest");
    assert_eq!(out.status.code(), Some(1));
    let log = proj.root.parent().unwrap().join("unittest.log");
    std::fs::write(&log, &out.stderr).unwrap();
    let root = traceback::locate::absolute_root(&proj.root).unwrap();
    let parsed = traceback::parse(&out.stderr, &root).unwrap();
    assert_eq!(essentials(&parsed), unittest_app_failures());

    // pytest runs unittest suites, so the node ids are what `fix` proves the repairs with.
    let before = proj.snapshot();
    let out = proj.run(&["fix", support::path_str(&log), "--dry-run", "--json"]);
    let v = support::project::json(&out);
    support::project::assert_same(&before, &proj.snapshot());
    let diffs: Vec<&str> = v["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["diff"].as_str().unwrap())
        .collect();
    assert!(
        diffs.iter().any(|d| d
            .contains("+    return \"\".join(part[0] for part in (name or \"\").split()).upper()")),
        "{v}"
    );
    assert!(
        diffs
            .iter()
            .any(|d| d.contains("+    for entry in entries or []:")),
        "{v}"
    );
    // The FAIL is an assertion in the test itself: reported, not patched.
    assert_eq!(v["final_status"], "partial", "{v}");
}

#[test]
fn the_design_demo_trace_is_read_not_refused() {
    let log = fixtures().join("tracebacks/pasted/demo/design.txt");
    let root = project_root("demo");
    let out = support::selfdebug(
        &[
            "parse",
            support::path_str(&log),
            "--root",
            support::path_str(&root),
            "--json",
        ],
        None,
    );
    support::assert_exit(&out, 0);
    let v = support::project::json(&out);
    let f = &v["failures"][0];
    assert_eq!(f["headline"], "test_foo");
    assert_eq!(
        (f["when"].as_str(), f["outcome"].as_str()),
        (Some("call"), Some("failed"))
    );
    assert_eq!(f["exc_type"], "AttributeError");
    let frame = &f["frames"][0];
    assert_eq!(
        (
            frame["file"].as_str(),
            frame["printed_file"].as_str(),
            frame["line"].as_u64()
        ),
        (Some("utils/demo.py"), Some("utils\\demo.py"), Some(41))
    );
    assert_eq!(frame["code"], "y = utils.to_upper(None)");
    // That text is not in the demo project's utils/demo.py: no location is made up.
    assert_eq!(f["location"], serde_json::Value::Null);
    assert_eq!(
        f["rejected_frames"],
        serde_json::json!([{"frame_index": 0, "file": "utils/demo.py", "line": 41, "reason": "source_changed"}])
    );
}
