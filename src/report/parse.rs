//! Output of `selfdebug parse`.

use std::fmt::Write;

use crate::traceback::{Failure, Frame, Outcome, ParsedLog, When};

/// The `parse --json` object (schema/parse.schema.json) of a command exiting with `exit_code`.
pub fn json(parsed: &ParsedLog, exit_code: i32) -> String {
    super::envelope::with_exit_code(parsed, exit_code)
}

pub fn human(parsed: &ParsedLog) -> String {
    let mut out = String::new();
    let n = parsed.failures.len();
    let _ = writeln!(
        out,
        "{n} failure{} read ({} log, root {})",
        if n == 1 { "" } else { "s" },
        match parsed.kind {
            crate::traceback::LogKind::Pytest => "pytest",
            crate::traceback::LogKind::Unittest => "unittest",
            crate::traceback::LogKind::Cpython => "Python traceback",
        },
        parsed.root
    );
    for f in &parsed.failures {
        out.push('\n');
        failure(&mut out, f);
    }
    out
}

fn failure(out: &mut String, f: &Failure) {
    let what = match f.when {
        When::Call if f.outcome == Outcome::Error => "ERROR",
        When::Call => "FAILED",
        When::Setup => "ERROR at setup",
        When::Teardown => "ERROR at teardown",
        When::Collect => "ERROR collecting",
        When::Unknown => "ERROR",
    };
    let test = f
        .test
        .as_deref()
        .or(f.headline.as_deref())
        .unwrap_or("(no test named)");
    let _ = writeln!(out, "{what} {test}");
    let mut msg_lines = f.msg.lines();
    let first = msg_lines.next().unwrap_or("");
    if f.exc_type.is_empty() {
        let _ = writeln!(out, "  {first}");
    } else if first.is_empty() {
        let _ = writeln!(out, "  {}", f.exc_type);
    } else {
        let _ = writeln!(out, "  {}: {first}", f.exc_type);
    }
    for l in msg_lines {
        let _ = writeln!(out, "    {l}");
    }
    for link in &f.chain {
        let _ = writeln!(
            out,
            "  after {}: {}",
            link.exception.exc_type,
            crate::traceback::first_line(&link.exception.msg)
        );
    }
    for sub in &f.sub_exceptions {
        let _ = writeln!(
            out,
            "  member {}: {}",
            sub.exc_type,
            crate::traceback::first_line(&sub.msg)
        );
    }
    match &f.location {
        Some(loc) => {
            let func = loc
                .func
                .as_deref()
                .map(|f| format!(" in {f}"))
                .unwrap_or_default();
            let _ = writeln!(out, "  at {}:{}{func}", loc.file, loc.line);
            if let Some(st) = loc.stale {
                let _ = writeln!(
                    out,
                    "  (the log is older than the code: it printed line {}, the line is now {} ({:+}))",
                    st.printed_line, st.line, st.offset
                );
            }
            if let Some(code) = &loc.code {
                let _ = writeln!(out, "      {code}");
                if let Some(c) = loc.caret {
                    let pad = " ".repeat(6 + c.code_start as usize);
                    let marks = "^".repeat((c.code_end - c.code_start) as usize);
                    let _ = writeln!(out, "{pad}{marks}");
                }
            }
        }
        None => match f.source_changed() {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "  the log does not match the code: what it prints at {}:{} is no longer there",
                    r.file, r.line
                );
            }
            None => {
                let _ = writeln!(out, "  no frame in the project's own code");
            }
        },
    }
    // Frames outside the project (pytest internals in native style) only add noise here.
    let shown: Vec<String> = f
        .frames
        .iter()
        .filter(|fr| fr.resolved.is_some())
        .map(frame_label)
        .collect();
    let hidden = f.frames.len() - shown.len();
    if !f.frames.is_empty() {
        let more = match hidden {
            0 => String::new(),
            n => format!(" (+{n} outside the project)"),
        };
        let _ = writeln!(out, "  frames: {}{more}", shown.join(" > "));
    }
}

fn frame_label(f: &Frame) -> String {
    match &f.func {
        Some(func) => format!("{}:{} {func}", f.file, f.line),
        None => format!("{}:{}", f.file, f.line),
    }
}
