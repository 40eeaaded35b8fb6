//! `selfdebug config` and `fix --show-settings`: the effective settings, each with its source.

use serde_json::{json, Map, Value};

use crate::config::{Settings, Source};

/// `config --json`'s schema version (schema/config.schema.json).
pub const CONFIG_SCHEMA_VERSION: u32 = 1;

fn file_name(s: &Settings) -> Option<&'static str> {
    s.file.as_ref().map(|f| f.name)
}

fn source_text(s: &Settings, source: &Source) -> String {
    match source {
        Source::Default => "default".to_string(),
        Source::File(line) => format!("{}:{line}", file_name(s).unwrap_or("?")),
        Source::Flag(flag) => (*flag).to_string(),
    }
}

/// One line per setting, `KEY  VALUE  SOURCE`, values as TOML would spell them.
pub fn human(s: &Settings) -> String {
    let mut out = format!("root: {}\n", s.root.describe().trim_start_matches("root "));
    match &s.file {
        Some(f) => {
            out.push_str(&format!("config: {} ({})\n", f.path.display(), f.table()));
            for name in &s.shadowed {
                out.push_str(&format!(
                    "ignored: {name} (the file above takes precedence)\n"
                ));
            }
        }
        None => out.push_str(
            "config: none (no [tool.selfdebug] in pyproject.toml, no selfdebug.toml or .selfdebug.toml)\n",
        ),
    }
    let rows: Vec<(String, String, String)> = s
        .shown
        .iter()
        .map(|r| {
            let value = match &r.value {
                Value::Null => r.unset.to_string(),
                // TOML's spelling of a list: `["-x", "-q"]`.
                Value::Array(items) => format!(
                    "[{}]",
                    items
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                v => v.to_string(),
            };
            (r.key.clone(), value, source_text(s, &r.source))
        })
        .collect();
    out.push_str(&match s.rules_off.as_slice() {
        [] => "rules: all tried\n".to_string(),
        off => format!("rules off (select/ignore): {}\n", off.join(", ")),
    });
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let vw = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    out.push('\n');
    for (k, v, src) in rows {
        let pad = vw - v.chars().count();
        out.push_str(&format!("{k:kw$}  {v}{}  {src}\n", " ".repeat(pad)));
    }
    out
}

/// The JSON word of a setting's source (schema/config.schema.json, `$defs/setting/source`).
pub fn source_word(s: &Source) -> &'static str {
    match s {
        Source::Default => "default",
        Source::File(_) => "file",
        Source::Flag(_) => "flag",
    }
}

/// One JSON object (schema/config.schema.json).
pub fn json(s: &Settings, exit_code: i32) -> String {
    let mut settings = Map::new();
    for r in &s.shown {
        let mut entry = Map::new();
        entry.insert("value".into(), r.value.clone());
        entry.insert("source".into(), json!(source_word(&r.source)));
        match &r.source {
            Source::Default => {}
            Source::File(line) => {
                entry.insert("line".into(), json!(line));
            }
            Source::Flag(flag) => {
                entry.insert("flag".into(), json!(flag));
            }
        }
        settings.insert(r.key.clone(), Value::Object(entry));
    }
    let doc = json!({
        "schema_version": CONFIG_SCHEMA_VERSION,
        "exit_code": exit_code,
        "root": s.root.path().to_string_lossy(),
        "config_file": s.file.as_ref().map(|f| f.path.to_string_lossy().into_owned()),
        "shadowed": s.shadowed,
        "rules_off": s.rules_off,
        "settings": settings,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
