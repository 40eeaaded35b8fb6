//! Output of `selfdebug probe`.

use std::fmt::Write;

use crate::probe::{InjectionKind, ProbeReport};

/// The `probe --json` object (schema/probe.schema.json) of a command exiting with `exit_code`.
pub fn json(report: &ProbeReport, exit_code: i32) -> String {
    super::envelope::with_exit_code(report, exit_code)
}

pub fn human(r: &ProbeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "probe of {}:{} for {}", r.file, r.line, r.test);
    let first = crate::traceback::first_line(&r.msg);
    if first.is_empty() {
        let _ = writeln!(out, "  {}", r.exc_type);
    } else {
        let _ = writeln!(out, "  {}: {first}", r.exc_type);
    }
    let _ = writeln!(out, "  statement at line {}:", r.statement_line);
    let lines: Vec<&str> = r.statement.lines().collect();
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    for l in lines {
        let l = l.get(common..).unwrap_or(l.trim_start());
        let _ = writeln!(out, "      {}", l.trim_end());
    }
    let where_ = match r.injection {
        InjectionKind::BeforeStatement => "before the statement",
        InjectionKind::BeforeCompoundHeader => "before the one-line compound statement",
        InjectionKind::BeforeIfChain => "before the `if` of its elif chain",
        InjectionKind::BeforeCompoundStatement => "before the compound statement",
        InjectionKind::BeforeDefinition => "before the definition",
    };
    let _ = writeln!(
        out,
        "  probe inserted before line {} ({where_})",
        r.injected_at_line
    );
    out.push('\n');

    if !r.fired {
        let _ = writeln!(
            out,
            "The probe never fired: line {} was not reached before the test ended.",
            r.injected_at_line
        );
    } else {
        let module = match (&r.module, &r.module_file) {
            (Some(m), Some(f)) => format!(" in {m} ({f})"),
            (Some(m), None) => format!(" in {m}"),
            (None, Some(f)) => format!(" in {f}"),
            (None, None) => String::new(),
        };
        let times = if r.hits == 1 { "time" } else { "times" };
        let _ = writeln!(
            out,
            "Fired {} {times}{module}; values at the last hit:",
            r.hits
        );
        let nones: Vec<&str> = r.none_exprs().map(|e| e.text.as_str()).collect();
        if !nones.is_empty() {
            let _ = writeln!(out, "  None: {}", nones.join(", "));
        }
        if !r.exprs.is_empty() {
            out.push('\n');
            let _ = writeln!(out, "expressions:");
            let w = r
                .exprs
                .iter()
                .map(|e| e.text.len())
                .max()
                .unwrap_or(0)
                .min(40);
            for e in &r.exprs {
                let what = match (&e.value, &e.error) {
                    (Some(v), _) => format!("{}  {}", v.type_name, one_line(&v.repr)),
                    (None, Some(err)) => {
                        format!("raised {}: {}", err.type_name, one_line(&err.msg))
                    }
                    (None, None) => "(not evaluated)".to_string(),
                };
                let _ = writeln!(out, "  {:<w$}  {what}", one_line(&e.text));
            }
        }
        out.push('\n');
        if r.locals.is_empty() {
            let _ = writeln!(out, "locals: none");
        } else {
            let _ = writeln!(out, "locals:");
            let w = r
                .locals
                .iter()
                .map(|v| v.name.len())
                .max()
                .unwrap_or(0)
                .min(30);
            for v in &r.locals {
                let _ = writeln!(
                    out,
                    "  {:<w$}  {}  {}",
                    v.name,
                    v.type_name,
                    one_line(&v.repr)
                );
            }
        }
    }
    out.push('\n');
    let t = &r.test_outcome;
    let secs = t.duration_ms as f64 / 1000.0;
    let how = if t.timed_out {
        format!("timed out after {secs:.2} s")
    } else if t.passed {
        format!("passed (exit 0, {secs:.2} s): the failure did not reproduce with the probe in")
    } else {
        let exc = t.exc_type.as_deref().unwrap_or("no readable failure");
        let again = if t.reproduced {
            "reproduced"
        } else {
            "a different failure"
        };
        let code = t.exit_code.map_or("none".to_string(), |c| c.to_string());
        format!("failed with {exc} ({again}; exit {code}, {secs:.2} s)")
    };
    let _ = writeln!(out, "probed run: {how}");
    let _ = writeln!(out, "{} restored byte for byte ({})", r.file, r.file_hash);
    out
}

fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if flat.chars().count() > 100 {
        let cut: String = flat.chars().take(97).collect();
        format!("{cut}...")
    } else {
        flat
    }
}
