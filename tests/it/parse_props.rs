//! The parser never panics and stays linear: arbitrary bytes, shuffled pieces of real logs,
//! and pathological sizes (deep recursion tracebacks, deep exception groups).

use crate::support;

use proptest::prelude::*;
use selfdebug::traceback;

fn root() -> std::path::PathBuf {
    support::project_root("demo")
}

/// Lines that steer the parser into its every state, to be shuffled and cut at random.
const PIECES: &[&str] = &[
    "============================= test session starts ==============================",
    "rootdir: /tmp/x",
    "=================================== FAILURES ===================================",
    "==================================== ERRORS ====================================",
    "=========================== short test summary info ============================",
    "___________________________________ test_foo ___________________________________",
    "_____________________ ERROR at setup of test_x _____________________",
    "______________________ ERROR collecting tests/test_x.py ______________________",
    "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ",
    "    def test_foo():",
    ">       assert demo.to_upper(None) == \"X\"",
    "               ^^^^^^^^^^^^^^^^^^^",
    "E       AttributeError: 'NoneType' object has no attribute 'split'",
    "E   ",
    "E",
    "utils/demo.py:6: AttributeError",
    "tests/test_demo.py:10: ",
    "tests/test_demo.py:10: in test_foo",
    "<frozen importlib._bootstrap>:1204: in _gcd_import",
    "Traceback (most recent call last):",
    "  File \"/tmp/x/utils/demo.py\", line 6, in to_upper",
    "  File \"/tmp/x/utils/demo.py\", line 6",
    "    words = text.split()",
    "            ~~~~^^^^^^",
    "  [Previous line repeated 996 more times]",
    "ValueError: bad",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "  + Exception Group Traceback (most recent call last):",
    "  | ExceptionGroup: grp (2 sub-exceptions)",
    "  +-+---------------- 1 ----------------",
    "    | ValueError: v1",
    "    +---------------- 2 ----------------",
    "    +-+---------------- 1 ----------------",
    "      | TypeError: t",
    "    +------------------------------------",
    "----------------------------- Captured stdout call -----------------------------",
    "FAILED tests/test_demo.py::test_foo - AttributeError: 'NoneType' object has no a...",
    "FAILED tests/t.py::test_b[a - b] - x",
    "ERROR tests/test_x.py",
    "[gw0] linux -- Python 3.11.7 /usr/bin/python3",
    "[gw1] [ 50%] FAILED tests/t.py::x",
    "\u{1b}[31mE   KeyError\u{1b}[0m",
    "1 failed, 1 passed in 0.10s",
    "",
    "    ",
    "|",
    "+",
    "E   File \"x.py\", line 1",
    "utils\\demo.py:41: AttributeError",
    "C:\\x\\y.py:3: in f",
    "2026-11-30T10:00:00.1234567Z E   KeyError: 'k'",
    "2026-11-30T10:00:00.1234567Z web-1  | 2026-11-30T10:00:00+00:00 ",
    "web_1  | tests/test_demo.py:10: in test_foo",
    "web_1  |",
    "section_start:1700000000:step_script\r\u{1b}[0K",
    "section_end:1700000000:step_script",
    "======================================================================",
    "----------------------------------------------------------------------",
    "FAIL: test_x (a.b.C.test_x)",
    "ERROR: setUpClass (a.b.C)",
    "ERROR: a.b (unittest.loader._FailedTest.a.b)",
    "Ran 3 tests in 0.001s",
    "Stdout:",
];

fn parse_no_panic(bytes: &[u8]) {
    // Either outcome is fine; panicking or hanging is not.
    let _ = traceback::parse(bytes, &root());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        parse_no_panic(&bytes);
    }

    #[test]
    fn shuffled_log_pieces(
        picks in proptest::collection::vec((0..PIECES.len(), 0usize..120, any::<bool>()), 0..80)
    ) {
        let mut text = String::new();
        for (i, cut, truncate) in picks {
            let piece = PIECES[i];
            // Cut some lines short at a char boundary, as a truncated log would.
            let end = if truncate {
                piece.char_indices().map(|(b, _)| b).nth(cut).unwrap_or(piece.len())
            } else {
                piece.len()
            };
            text.push_str(&piece[..end]);
            text.push('\n');
        }
        parse_no_panic(text.as_bytes());
    }

    #[test]
    fn arbitrary_text_lines(lines in proptest::collection::vec("[ -~\u{1b}\t|+^~>E_=-]{0,60}", 0..60)) {
        parse_no_panic(lines.join("\n").as_bytes());
    }
}

#[test]
fn ten_thousand_frames() {
    let mut log = String::from("Traceback (most recent call last):\n");
    for i in 0..10_000 {
        log.push_str(&format!(
            "  File \"/tmp/x/utils/demo.py\", line {}, in to_upper\n    words = text.split()\n            ^^^^^^^^^^\n",
            i % 13 + 1
        ));
    }
    log.push_str("RecursionError: maximum recursion depth exceeded\n");
    let parsed = traceback::parse(log.as_bytes(), &root()).expect("parses");
    assert_eq!(parsed.failures.len(), 1);
    let f = &parsed.failures[0];
    assert_eq!(f.frames.len(), 10_000);
    assert_eq!(f.exc_type, "RecursionError");
    // The log's machine path resolves by its tail to the demo project's file.
    assert_eq!(
        f.location.as_ref().map(|l| l.file.as_str()),
        Some("utils/demo.py")
    );
    assert_eq!(f.location.as_ref().map(|l| l.frame_index), Some(9_999));
    // The innermost frame prints line 3 (9999 % 13 + 1); the printed text is line 6 there.
    assert_eq!(
        f.location.as_ref().and_then(|l| l.stale),
        Some(traceback::Stale {
            printed_line: 3,
            line: 6,
            offset: 3
        })
    );
}

#[test]
fn deeply_nested_groups_do_not_overflow() {
    let depth = 1_000;
    let mut log = String::new();
    for d in 0..depth {
        let pad = " ".repeat(2 + 2 * d);
        if d == 0 {
            log.push_str(&format!(
                "{pad}+ Exception Group Traceback (most recent call last):\n"
            ));
        }
        log.push_str(&format!(
            "{pad}| ExceptionGroup: level {d} (1 sub-exception)\n"
        ));
        log.push_str(&format!("{pad}+-+---------------- 1 ----------------\n"));
    }
    log.push_str(&format!(
        "{}| ValueError: bottom\n",
        " ".repeat(2 + 2 * depth)
    ));
    let parsed = traceback::parse(log.as_bytes(), &root()).expect("parses");
    assert_eq!(parsed.failures.len(), 1);
    assert_eq!(parsed.failures[0].exc_type, "ExceptionGroup");
    assert_eq!(parsed.failures[0].msg, "level 0 (1 sub-exception)");
}

#[test]
fn huge_captured_output_is_skipped() {
    // A 20 MB log: one failure whose captured stdout is enormous and full of lookalikes.
    let real =
        std::fs::read_to_string(support::fixtures().join("tracebacks/demo/tb-long.txt")).unwrap();
    // The captured block goes where pytest puts it: after the traceback, before the summary.
    let banner = real.find("=====").map(|_| real.find("\n====").unwrap());
    let summary_at = real[..].match_indices('\n').map(|(i, _)| i + 1).find(|&i| {
        real[i..].starts_with('=')
            && real[i..].contains("short test summary info")
            && real[i..]
                .lines()
                .next()
                .unwrap()
                .contains("short test summary")
    });
    let (head, tail) = real.split_at(summary_at.or(banner).expect("summary banner"));
    let mut log = String::from(head);
    log.push_str(
        "----------------------------- Captured stdout call -----------------------------\n",
    );
    let noise = "Traceback (most recent call last):\n  File \"fake.py\", line 1, in x\nE   KeyError: 'fake'\nsrc/fake.py:9: KeyError\n";
    while log.len() < 20_000_000 {
        log.push_str(noise);
    }
    log.push_str(tail);
    let parsed = traceback::parse(log.as_bytes(), &root()).expect("parses");
    assert_eq!(parsed.failures.len(), 1);
    assert_eq!(parsed.failures[0].exc_type, "AttributeError");
    assert_eq!(parsed.failures[0].frames.len(), 3);
}
