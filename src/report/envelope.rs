//! What every `--json` output has in common: `schema_version` and `exit_code` first, and on an
//! exit without the command's report, `error` (docs/json.md, "The envelope").

use serde::Serialize;

/// The object printed when a command ends without its report (bad input, the tool could not
/// work, nothing to report): `{"schema_version": V, "exit_code": N, "error": "..."}`.
pub fn error(schema_version: u32, exit_code: i32, message: &str) -> String {
    // A struct, not `json!`, so the keys keep this order.
    #[derive(Serialize)]
    struct Envelope<'a> {
        schema_version: u32,
        exit_code: i32,
        error: &'a str,
    }
    let doc = Envelope {
        schema_version,
        exit_code,
        error: message,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// `doc` (a report whose first field is `schema_version`) pretty-printed, with `exit_code`
/// right after `schema_version`. The report types are also embedded in other reports (the
/// probe's in `fix`'s), where an exit code has no place, so it is added here, not to them.
pub fn with_exit_code(doc: &impl Serialize, exit_code: i32) -> String {
    // Serializing plain data with string keys cannot fail.
    let s = serde_json::to_string_pretty(doc).unwrap_or_default();
    let mut out = String::with_capacity(s.len() + 24);
    match s.split_once(",\n") {
        Some((first, rest)) if first.starts_with("{\n  \"schema_version\": ") => {
            out.push_str(first);
            out.push_str(&format!(",\n  \"exit_code\": {exit_code},\n"));
            out.push_str(rest);
        }
        // Not a report of ours: printed as it is.
        _ => out.push_str(&s),
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn exit_code_follows_schema_version() {
        #[derive(serde::Serialize)]
        struct R {
            schema_version: u32,
            kind: &'static str,
        }
        let s = super::with_exit_code(
            &R {
                schema_version: 1,
                kind: "x",
            },
            3,
        );
        assert_eq!(
            s,
            "{\n  \"schema_version\": 1,\n  \"exit_code\": 3,\n  \"kind\": \"x\"\n}\n"
        );
        let v: serde_json::Value = serde_json::from_str(&super::error(1, 2, "bad \"x\"")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"schema_version": 1, "exit_code": 2, "error": "bad \"x\""})
        );
    }
}
