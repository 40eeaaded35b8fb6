//! What a tool call returns besides the command's whole object: `fix`'s summary
//! (`detail: "summary"`, the default; schema/fix-summary.schema.json), made from the full
//! report, and for every tool a short human text for the text content (the JSON is in
//! `structuredContent`, not repeated as text).

use serde_json::{json, Map, Value};

/// The first line of a text (a reason may run on).
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// `fix`'s summary object: the outcome, the patches with their diffs and the proof's counts,
/// each failure's status and one-line reason.
pub fn fix(full: &Value) -> Value {
    let patches: Vec<Value> = full["patches"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let proof: Vec<Value> = p["proven_by"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|r| {
                    json!({"stage": r["stage"], "passed": r["passed"], "failed": r["failed"],
                           "deselected": r["deselected"]})
                })
                .collect();
            json!({"file": p["file"], "rules": p["rules"], "safe": p["safe"],
                   "review": p["review"], "diff": p["diff"],
                   "diff_encoding": p["diff_encoding"], "proof": proof})
        })
        .collect();
    let fixes: Vec<Value> = full["fixes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            json!({"failures": f["failures"], "files": f["files"], "rules": f["rules"],
                   "diff": f["diff"], "diff_encoding": f["diff_encoding"]})
        })
        .collect();
    let failures: Vec<Value> = full["failures"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            json!({"test": f["test"], "file": f["file"], "line": f["line"],
                   "exc_type": f["exc_type"], "status": f["status"],
                   "reason_code": f["reason_code"],
                   "reason": f["reason"].as_str().map(first_line)})
        })
        .collect();
    let mut out = Map::new();
    out.insert("schema_version".into(), full["schema_version"].clone());
    out.insert("detail".into(), "summary".into());
    for key in [
        "exit_code",
        "final_status",
        "error",
        "lock_pid",
        "dry_run",
        "root",
    ] {
        if let Some(v) = full.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert("files_patched".into(), full["files_patched"].clone());
    out.insert("patches".into(), patches.into());
    out.insert("fixes".into(), fixes.into());
    out.insert("failures".into(), failures.into());
    for key in ["pytest_runs", "duration_ms"] {
        out.insert(key.into(), full[key].clone());
    }
    Value::Object(out)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `fix`'s text: the status, one line per failure and per patch, and each patch's diff.
fn fix_text(full: &Value) -> String {
    let empty = Vec::new();
    let patches = full["patches"].as_array().unwrap_or(&empty);
    let failures = full["failures"].as_array().unwrap_or(&empty);
    let mut out = match full["error"].as_str() {
        Some(e) => format!(
            "{}: {e}\n",
            full["final_status"].as_str().unwrap_or("error")
        ),
        None => format!(
            "{}: {} {}, {}{}\n",
            full["final_status"].as_str().unwrap_or("?"),
            plural(patches.len(), "patch", "patches"),
            if full["dry_run"] == true {
                "proven in a scratch copy (dry run: no file changed; apply with `git apply`)"
            } else {
                "proven and kept"
            },
            plural(failures.len(), "failure", "failures"),
            match full["pytest_runs"].as_u64() {
                Some(n) => format!(", {}", plural(n as usize, "pytest run", "pytest runs")),
                None => String::new(),
            }
        ),
    };
    for f in failures {
        let test = f["test"].as_str().unwrap_or("(no test named)");
        let reason = f["reason"]
            .as_str()
            .map(|r| format!(": {}", first_line(r)))
            .unwrap_or_default();
        out.push_str(&format!(
            "- {test}: {} ({}){reason}\n",
            f["exc_type"].as_str().unwrap_or("?"),
            f["status"].as_str().unwrap_or("?"),
        ));
    }
    for p in patches {
        let rules: Vec<&str> = p["rules"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        out.push_str(&format!(
            "patch {} ({}{}):\n{}",
            p["file"].as_str().unwrap_or("?"),
            rules.join(", "),
            if p["safe"] == true {
                ""
            } else {
                "; unsafe: review it"
            },
            p["diff"].as_str().unwrap_or_default()
        ));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The short text of a tool's result object: what a client that shows only the text content
/// (or a person reading the log) needs; the object itself is the structured content.
pub fn text(tool: &str, full: &Value) -> String {
    if tool == "fix" {
        return fix_text(full);
    }
    if let Some(e) = full["error"].as_str() {
        return e.to_string();
    }
    let count = |key: &str| full[key].as_array().map_or(0, Vec::len);
    match tool {
        "parse" => {
            let mut out = format!("{}\n", plural(count("failures"), "failure", "failures"));
            for f in full["failures"].as_array().into_iter().flatten() {
                let at = match (
                    f["location"]["file"].as_str(),
                    f["location"]["line"].as_u64(),
                ) {
                    (Some(file), Some(line)) => format!(" at {file}:{line}"),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "- {}: {}: {}{at}\n",
                    f["test"].as_str().unwrap_or("(no test named)"),
                    f["exc_type"].as_str().unwrap_or("?"),
                    first_line(f["msg"].as_str().unwrap_or_default())
                ));
            }
            out
        }
        "probe" => format!(
            "probe at {}:{}: {} ({} of {}, {} locals)",
            full["file"].as_str().unwrap_or("?"),
            full["line"],
            if full["fired"] == true {
                "fired"
            } else {
                "the failing line was not reached"
            },
            full["exc_type"].as_str().unwrap_or("?"),
            full["test"].as_str().unwrap_or("?"),
            full["locals"].as_object().map_or(0, Map::len),
        ),
        "rules" => plural(count("rules"), "rule in force", "rules in force"),
        "restore" => {
            if full["restored"] == true {
                format!("restored {}", plural(count("files"), "file", "files"))
            } else {
                "nothing to restore".to_string()
            }
        }
        _ => format!("{tool}: see the structured content"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fix_summary_keeps_the_outcome_diffs_and_one_line_reasons() {
        let full = json!({
            "schema_version": 1, "exit_code": 3, "final_status": "partial", "run_id": "r",
            "dry_run": true, "root": "/p", "files_patched": ["a.py"], "attempts": 9,
            "attempt_records": [{"big": "x"}],
            "patches": [{"file": "a.py", "rules": ["r1"], "safe": true, "review": [],
                         "diff": "--- a/a.py\n+++ b/a.py\n", "diff_encoding": "utf-8",
                         "titles": ["t"], "proven_by": [{"stage": "full", "command": ["py"],
                         "exit_code": 0, "passed": 3, "failed": 0, "deselected": 1}]}],
            "failures": [{"test": "t.py::a", "file": "a.py", "line": 2, "exc_type": "E",
                          "status": "not_fixed", "reason_code": "candidates_rejected",
                          "reason": "no candidate passed\nmore", "probe": {"big": 1}}],
            "pytest_runs": 4, "duration_ms": 10,
        });
        assert_eq!(
            fix(&full),
            json!({
                "schema_version": 1, "detail": "summary", "exit_code": 3,
                "final_status": "partial", "dry_run": true, "root": "/p",
                "files_patched": ["a.py"],
                "patches": [{"file": "a.py", "rules": ["r1"], "safe": true, "review": [],
                             "diff": "--- a/a.py\n+++ b/a.py\n", "diff_encoding": "utf-8",
                             "proof": [{"stage": "full", "passed": 3, "failed": 0,
                                        "deselected": 1}]}],
                "fixes": [],
                "failures": [{"test": "t.py::a", "file": "a.py", "line": 2, "exc_type": "E",
                              "status": "not_fixed", "reason_code": "candidates_rejected",
                              "reason": "no candidate passed"}],
                "pytest_runs": 4, "duration_ms": 10,
            })
        );
        assert_eq!(
            text("fix", &full),
            "partial: 1 patch proven in a scratch copy (dry run: no file changed; apply with \
             `git apply`), 1 failure, 4 pytest runs\n\
             - t.py::a: E (not_fixed): no candidate passed\n\
             patch a.py (r1):\n--- a/a.py\n+++ b/a.py\n"
        );
    }
}
