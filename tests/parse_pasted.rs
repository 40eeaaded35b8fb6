//! Logs as users paste them (`fixtures/tracebacks/pasted/`, made by `scripts/capture-pasted`
//! from real pytest and unittest runs): a failure section cut out of a CI log, lines behind CI
//! time stamps and docker compose columns, GitLab section markers, colour inside all of them.
//! Each must read exactly as the clean capture it was made from.

mod support;

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
