//! The parser against real pytest output: every project of `fixtures/projects` captured in every
//! mode by `scripts/capture-tracebacks`. Snapshots hold the reviewed digests; the cross-mode
//! test checks that every mode tells the same story about the same run.

use crate::support;

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

use selfdebug::traceback::{self, ExceptionRecord, Failure, Frame, ParsedLog, TbStyle};
use support::{logs_of, project_root, projects};

fn parse_file(log: &Path, root: &Path) -> ParsedLog {
    let bytes = std::fs::read(log).expect("read log");
    let root = traceback::locate::absolute_root(root).expect("root");
    traceback::parse(&bytes, &root).unwrap_or_else(|e| panic!("{}: {e}", log.display()))
}

fn frame_line(f: &Frame) -> String {
    let mut s = format!("{}:{}", f.file, f.line);
    if let Some(func) = &f.func {
        write!(s, " {func}").unwrap();
    }
    if f.resolved.is_none() {
        s.push_str(" [not in project]");
    }
    if let Some(code) = &f.code {
        write!(s, " `{code}`").unwrap();
    }
    if let Some(c) = f.caret {
        write!(
            s,
            " caret {}..{} focus {}..{} line {:?}..{:?}",
            c.code_start, c.code_end, c.focus_start, c.focus_end, c.line_start, c.line_end
        )
        .unwrap();
    }
    s
}

fn record_digest(out: &mut String, indent: &str, r: &ExceptionRecord) {
    writeln!(out, "{indent}{}: {:?}", r.exc_type, r.msg).unwrap();
    for f in r.frames.iter().filter(|f| f.resolved.is_some()) {
        writeln!(out, "{indent}  frame {}", frame_line(f)).unwrap();
    }
    if let Some(l) = &r.location {
        writeln!(
            out,
            "{indent}  location {}:{} (frame {})",
            l.file, l.line, l.frame_index
        )
        .unwrap();
    }
    for link in &r.chain {
        writeln!(out, "{indent}  chain {:?}:", link.relation).unwrap();
        record_digest(out, &format!("{indent}    "), &link.exception);
    }
    for sub in &r.sub_exceptions {
        writeln!(out, "{indent}  member:").unwrap();
        record_digest(out, &format!("{indent}    "), sub);
    }
}

/// A reviewable text form of a parse: everything a repair needs, with machine paths left out.
fn digest(parsed: &ParsedLog) -> String {
    let mut out = String::new();
    for f in &parsed.failures {
        writeln!(
            out,
            "{} [{:?}, {:?}] headline={:?}",
            f.test.as_deref().unwrap_or("<no test>"),
            f.when,
            f.style,
            f.headline
        )
        .unwrap();
        writeln!(out, "  {}: {:?}", f.exc_type, f.msg).unwrap();
        let outside = f.frames.iter().filter(|x| x.resolved.is_none()).count();
        writeln!(
            out,
            "  frames: {} ({} not in project)",
            f.frames.len(),
            outside
        )
        .unwrap();
        for fr in f.frames.iter().filter(|x| x.resolved.is_some()) {
            writeln!(out, "    {}", frame_line(fr)).unwrap();
        }
        match &f.location {
            Some(l) => {
                writeln!(
                    out,
                    "  location: {}:{} {:?} frame {} `{}`",
                    l.file,
                    l.line,
                    l.func,
                    l.frame_index,
                    l.code.as_deref().unwrap_or("")
                )
                .unwrap();
                if let Some(st) = l.stale {
                    writeln!(
                        out,
                        "  stale: printed line {}, now {} ({:+})",
                        st.printed_line, st.line, st.offset
                    )
                    .unwrap();
                }
            }
            None => writeln!(out, "  location: none").unwrap(),
        }
        let mut reasons: Vec<String> = f
            .rejected_frames
            .iter()
            .map(|r| format!("{:?}", r.reason))
            .collect();
        reasons.dedup();
        if !reasons.is_empty() {
            writeln!(
                out,
                "  rejected: {} frames ({})",
                f.rejected_frames.len(),
                reasons.join(", ")
            )
            .unwrap();
        }
        for link in &f.chain {
            writeln!(out, "  chain {:?}:", link.relation).unwrap();
            record_digest(&mut out, "    ", &link.exception);
        }
        for sub in &f.sub_exceptions {
            writeln!(out, "  member:").unwrap();
            record_digest(&mut out, "    ", sub);
        }
        if let Some(s) = &f.summary {
            writeln!(out, "  summary: {s:?}").unwrap();
        }
    }
    out
}

#[test]
fn long_style_snapshots() {
    for project in projects() {
        let log = support::fixtures().join(format!("tracebacks/{project}/tb-long.txt"));
        let parsed = parse_file(&log, &project_root(&project));
        insta::assert_snapshot!(format!("tb_long__{project}"), digest(&parsed));
    }
}

#[test]
fn handmade_snapshots() {
    for (name, log) in logs_of("handmade") {
        let parsed = parse_file(&log, &project_root("demo"));
        insta::assert_snapshot!(format!("handmade__{name}"), digest(&parsed));
    }
}

/// What every detailed mode must agree on for one failure.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct Essentials {
    test: Option<String>,
    exc_type: String,
    msg_first_line: String,
    location: Option<(String, u32)>,
}

fn essentials(f: &Failure) -> Essentials {
    Essentials {
        test: f.test.clone(),
        exc_type: f.exc_type.clone(),
        msg_first_line: f.msg.lines().next().unwrap_or("").to_string(),
        location: f.location.as_ref().map(|l| (l.file.clone(), l.line)),
    }
}

#[test]
fn every_mode_tells_the_same_story() {
    for project in projects() {
        let root = project_root(&project);
        let logs = logs_of(&project);
        let reference: BTreeSet<Essentials> = {
            let log = logs
                .iter()
                .find(|(m, _)| m == "tb-long")
                .expect("tb-long log");
            parse_file(&log.1, &root)
                .failures
                .iter()
                .map(essentials)
                .collect()
        };
        for (mode, log) in &logs {
            let parsed = parse_file(log, &root);
            let got: BTreeSet<Essentials> = parsed.failures.iter().map(essentials).collect();
            match mode.as_str() {
                // Line style prints only the innermost frame (maybe the stdlib) and, for
                // setup/teardown errors, none: location may be missing, never different.
                "tb-line" => {
                    assert_eq!(got.len(), reference.len(), "{project}/{mode}");
                    for g in &got {
                        let matching = reference.iter().find(|r| {
                            r.test == g.test
                                && r.exc_type == g.exc_type
                                && r.msg_first_line == g.msg_first_line
                        });
                        let r = matching
                            .unwrap_or_else(|| panic!("{project}/{mode}: unexpected {g:?}"));
                        assert!(
                            g.location.is_none() || g.location == r.location,
                            "{project}/{mode}: {g:?} vs {r:?}"
                        );
                    }
                }
                // Only summary lines: test ids always, types when the line was not cut.
                "tb-no" => {
                    let ids: BTreeSet<_> = got.iter().map(|g| g.test.clone()).collect();
                    let want: BTreeSet<_> = reference.iter().map(|r| r.test.clone()).collect();
                    assert_eq!(ids, want, "{project}/{mode}");
                    for f in &parsed.failures {
                        assert_eq!(f.style, TbStyle::Summary);
                        assert!(f.location.is_none() && f.frames.is_empty());
                        let r = reference.iter().find(|r| r.test == f.test).unwrap();
                        assert!(
                            f.exc_type.is_empty() || f.exc_type == r.exc_type,
                            "{project}/{mode}: {} vs {}",
                            f.exc_type,
                            r.exc_type
                        );
                    }
                }
                // `-vv` and `CI=1` make pytest print assertion operands uncut (`'Welcome, ada!
                // Your account...'` instead of `'Welcome, ada...'`): compare all but the text.
                "verbose" | "ci" => {
                    let strip = |s: &BTreeSet<Essentials>| -> BTreeSet<Essentials> {
                        s.iter()
                            .cloned()
                            .map(|mut e| {
                                if e.msg_first_line.contains("...") {
                                    e.msg_first_line.clear();
                                }
                                e
                            })
                            .collect()
                    };
                    let uncut: BTreeSet<Essentials> = got
                        .iter()
                        .cloned()
                        .map(|mut e| {
                            if reference
                                .iter()
                                .any(|r| r.test == e.test && r.msg_first_line.contains("..."))
                            {
                                e.msg_first_line.clear();
                            }
                            e
                        })
                        .collect();
                    assert_eq!(uncut, strip(&reference), "{project}/{mode}");
                }
                _ => assert_eq!(got, reference, "{project}/{mode}"),
            }
        }
    }
}

#[test]
fn design_demo_trace_parses() {
    let log = support::fixtures().join("tracebacks/handmade/windows-long.txt");
    let parsed = parse_file(&log, &project_root("demo"));
    assert_eq!(parsed.failures.len(), 1);
    let f = &parsed.failures[0];
    assert_eq!(f.test.as_deref(), Some("tests/test_demo.py::test_foo"));
    assert_eq!(f.exc_type, "AttributeError");
    assert_eq!(f.msg, "'NoneType' object has no attribute 'split'");
    assert_eq!(f.frames.len(), 1);
    assert_eq!(f.frames[0].printed_file, "utils\\demo.py");
    assert_eq!(f.frames[0].file, "utils/demo.py");
    assert_eq!(f.frames[0].line, 41);
    assert_eq!(
        f.frames[0].code.as_deref(),
        Some("y = utils.to_upper(None)")
    );
    // The trace prints a test's line at `utils\demo.py:41`; the demo project's file has no such
    // text anywhere: the log does not match this code, and no location is made up.
    assert_eq!(f.location, None);
    assert_eq!(
        f.source_changed().map(|r| (r.file.as_str(), r.line)),
        Some(("utils/demo.py", 41))
    );
}

#[test]
fn windows_native_log_is_reanchored_onto_the_demo() {
    // The same failure in native style prints `words = text.split()` at line 41 of a longer
    // utils\demo.py; in the fixture project that text is line 6.
    let log = support::fixtures().join("tracebacks/handmade/windows-native.txt");
    let parsed = parse_file(&log, &project_root("demo"));
    let loc = parsed.failures[0].location.as_ref().expect("location");
    assert_eq!((loc.file.as_str(), loc.line), ("utils/demo.py", 6));
    assert_eq!(
        loc.stale,
        Some(traceback::Stale {
            printed_line: 41,
            line: 6,
            offset: -35
        })
    );
    let c = loc.caret.expect("caret");
    assert_eq!((c.line_start, c.line_end), (Some(12), Some(22)));
}

#[test]
fn passing_run_has_no_failures() {
    for (mode, log) in logs_of("all_pass") {
        let parsed = parse_file(&log, &project_root("all_pass"));
        assert!(parsed.failures.is_empty(), "all_pass/{mode}");
        assert_eq!(parsed.kind, traceback::LogKind::Pytest, "all_pass/{mode}");
    }
}

#[test]
fn captured_lookalike_text_is_not_a_failure() {
    for (mode, log) in logs_of("noisy_output") {
        let parsed = parse_file(&log, &project_root("noisy_output"));
        assert_eq!(parsed.failures.len(), 1, "noisy_output/{mode}");
        let f = &parsed.failures[0];
        assert_eq!(f.exc_type, "ValueError", "noisy_output/{mode}");
        assert!(
            f.frames.iter().all(|fr| !fr.printed_file.contains("fake")),
            "noisy_output/{mode}: {:?}",
            f.frames
        );
    }
}
