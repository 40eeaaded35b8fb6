//! Output of `selfdebug rules`, and the generated catalogue `docs/rules.md`.

use std::fmt::Write;

use serde::Serialize;
use serde_json::{json, Value};

use crate::edit::Confidence;
use crate::rules::{Category, Rule, RuleDocs, RuleSet, RuleSource};

/// Bumped only when a field is renamed or removed; fields may be added.
pub const SCHEMA_VERSION: u32 = 1;

/// `{"schema_version": 1, "rules": [...]}` with every field of every rule, sorted by id.
pub fn json(set: &RuleSet, exit_code: i32) -> String {
    let doc = JsonDoc {
        schema_version: SCHEMA_VERSION,
        exit_code,
        rules: set.rules().iter().map(rule_json).collect(),
    };
    // Serializing plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

// Structs rather than `json!` so the keys keep this order.
#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    exit_code: i32,
    rules: Vec<JsonRule<'a>>,
}

#[derive(Serialize)]
struct JsonRule<'a> {
    id: &'a str,
    title: &'a str,
    category: Category,
    exception: &'a [String],
    message: &'a str,
    /// The regex's named groups: the keys a match's captures can have.
    groups: Vec<&'a str>,
    transform: &'a str,
    params: Value,
    confidence: Confidence,
    safe: bool,
    /// What a reviewer checks in an unsafe rule's patch.
    review: Option<String>,
    /// `builtin` or `project`.
    source: &'static str,
    /// The project file; null for a built-in rule.
    path: Option<String>,
    overrides_builtin: bool,
    docs: &'a RuleDocs,
}

/// The JSON word of a rule's source (schema/rules.schema.json, `source`).
pub fn source_word(s: &RuleSource) -> &'static str {
    match s {
        RuleSource::Builtin => "builtin",
        RuleSource::Project(_) => "project",
    }
}

fn rule_json(r: &Rule) -> JsonRule<'_> {
    let path = match &r.source {
        RuleSource::Builtin => None,
        RuleSource::Project(p) => Some(p.display().to_string()),
    };
    let source = source_word(&r.source);
    JsonRule {
        id: &r.id,
        title: &r.title,
        category: r.category,
        exception: &r.exception,
        message: r.message.as_str(),
        groups: r.message.group_names(),
        transform: r.transform.name(),
        params: toml_to_json(&toml::Value::Table(r.transform.params())),
        confidence: r.confidence,
        safe: r.safe,
        review: r.review_note(),
        source,
        path,
        overrides_builtin: r.overrides_builtin,
        docs: &r.docs,
    }
}

fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => json!(i),
        // NaN and infinities have no JSON form; serde_json makes them null.
        toml::Value::Float(f) => json!(f),
        toml::Value::Boolean(b) => json!(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

/// The catalogue for people: a summary table, then each rule with its documentation.
pub fn human(set: &RuleSet) -> String {
    let mut out = String::new();
    let project = set
        .rules()
        .iter()
        .filter(|r| r.source != RuleSource::Builtin)
        .count();
    let overrides = set.rules().iter().filter(|r| r.overrides_builtin).count();
    let _ = write!(
        out,
        "{} rule{}: {} built in, {project} from the project",
        set.len(),
        if set.len() == 1 { "" } else { "s" },
        set.len() - project
    );
    if overrides > 0 {
        let _ = write!(out, " ({overrides} overriding a built-in rule)");
    }
    out.push('\n');
    if set.is_empty() {
        return out;
    }

    let rows: Vec<[String; 5]> = set
        .rules()
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.exception.join(", "),
                r.confidence.as_str().to_string(),
                yes_no(r.safe).to_string(),
                short_source(r).to_string(),
            ]
        })
        .collect();
    let header = ["ID", "EXCEPTION", "CONFIDENCE", "SAFE", "SOURCE"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    out.push('\n');
    table_row(&mut out, &header.map(String::from), &widths);
    for row in &rows {
        table_row(&mut out, row, &widths);
    }

    for r in set.rules() {
        out.push('\n');
        let _ = writeln!(out, "{}: {}", r.id, r.title);
        field(&mut out, "exception", &r.exception.join(", "));
        field(&mut out, "message", r.message.as_str());
        field(&mut out, "category", r.category.as_str());
        field(&mut out, "transform", &transform_line(r));
        field(&mut out, "confidence", r.confidence.as_str());
        field(
            &mut out,
            "safe",
            if r.safe {
                "yes (tried even under --safe-only)"
            } else {
                "no (skipped under --safe-only)"
            },
        );
        if let Some(note) = r.review_note() {
            field(&mut out, "review", &note);
        }
        field(&mut out, "source", &long_source(r));
        section(&mut out, "What it does", &r.docs.what);
        section(&mut out, "Why", &r.docs.why);
        section(&mut out, "Before", &r.docs.example_before);
        section(&mut out, "After", &r.docs.example_after);
        section(&mut out, "When the fix may be wrong", &r.docs.caveats);
    }
    out
}

fn table_row(out: &mut String, cells: &[String; 5], widths: &[usize; 5]) {
    let mut line = String::new();
    for (cell, w) in cells.iter().zip(widths) {
        let _ = write!(line, "{cell:<w$}  ");
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

fn field(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(out, "  {name:<12}{value}");
}

fn section(out: &mut String, title: &str, text: &str) {
    let _ = writeln!(out, "\n  {title}");
    for line in text.trim_matches('\n').lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "    {}", line.trim_end());
        }
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn short_source(r: &Rule) -> &'static str {
    match (&r.source, r.overrides_builtin) {
        (RuleSource::Builtin, _) => "built in",
        (RuleSource::Project(_), false) => "project",
        (RuleSource::Project(_), true) => "project (overrides built-in)",
    }
}

fn long_source(r: &Rule) -> String {
    match &r.source {
        RuleSource::Builtin => format!("built in (rules/{}.toml)", r.id),
        RuleSource::Project(p) if r.overrides_builtin => {
            format!("project ({}), overrides the built-in rule", p.display())
        }
        RuleSource::Project(p) => format!("project ({})", p.display()),
    }
}

/// `null_guard (operation = "attribute", none_side = "left")`.
fn transform_line(r: &Rule) -> String {
    let name = r.transform.name();
    let params = r.transform.params();
    if params.is_empty() {
        return name.to_string();
    }
    let params: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k} = {}", inline_toml(v)))
        .collect();
    format!("{name} ({})", params.join(", "))
}

fn inline_toml(v: &toml::Value) -> String {
    match v {
        toml::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(inline_toml).collect::<Vec<_>>().join(", ")
        ),
        toml::Value::Table(t) => format!(
            "{{ {} }}",
            t.iter()
                .map(|(k, v)| format!("{k} = {}", inline_toml(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The catalogue as Markdown (`docs/rules.md`); a test keeps the committed file equal to this.
pub fn markdown(set: &RuleSet) -> String {
    let mut out = String::new();
    out.push_str("# Repair rules\n\n");
    out.push_str(
        "<!-- Generated from rules/*.toml by src/report/rules.rs; do not edit by hand.\n     \
         Regenerate: SELFDEBUG_UPDATE_DOCS=1 cargo test --test it rules_docs -->\n\n",
    );
    out.push_str(
        "The rules built into `selfdebug`, as `selfdebug rules` lists them. The file format, \
         the matching semantics and how a project adds its own rules are in \
         [rules/README.md](../rules/README.md).\n\n",
    );
    out.push_str("| Rule | Exception | Confidence | Safe |\n|---|---|---|---|\n");
    for r in set.rules() {
        let _ = writeln!(
            out,
            "| [`{id}`](#{id}) | {} | {} | {} |",
            r.exception
                .iter()
                .map(|e| code(e))
                .collect::<Vec<_>>()
                .join(", "),
            r.confidence.as_str(),
            yes_no(r.safe),
            id = r.id,
        );
    }
    for r in set.rules() {
        let _ = writeln!(out, "\n## {}\n\n**{}**\n", r.id, r.title);
        let _ = writeln!(
            out,
            "- Exception: {}",
            r.exception
                .iter()
                .map(|e| code(e))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(out, "- Message: {}", code(r.message.as_str()));
        let _ = writeln!(out, "- Category: {}", r.category.as_str());
        let _ = writeln!(out, "- Transform: {}", code(&transform_line(r)));
        let _ = writeln!(out, "- Confidence: {}", r.confidence.as_str());
        let _ = writeln!(
            out,
            "- Safe: {}",
            if r.safe {
                "yes (tried even under `--safe-only`)"
            } else {
                "no (skipped under `--safe-only`)"
            }
        );
        if let Some(note) = r.review_note() {
            let _ = writeln!(out, "- Review: {note}");
        }
        let _ = writeln!(out, "\n### What it does\n\n{}", prose(&r.docs.what));
        let _ = writeln!(out, "\n### Why\n\n{}", prose(&r.docs.why));
        let _ = writeln!(out, "\n### Example\n\nBefore:\n");
        python_block(&mut out, &r.docs.example_before);
        let _ = writeln!(out, "\nAfter:\n");
        python_block(&mut out, &r.docs.example_after);
        let _ = writeln!(
            out,
            "\n### When the fix may be wrong\n\n{}",
            prose(&r.docs.caveats)
        );
    }
    out
}

fn prose(text: &str) -> String {
    text.trim()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An inline code span that survives backticks inside (CommonMark: a longer fence, padded).
fn code(s: &str) -> String {
    let longest = longest_backtick_run(s);
    if longest == 0 {
        return format!("`{s}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {s} {fence}")
}

fn python_block(out: &mut String, src: &str) {
    let fence = "`".repeat(3.max(longest_backtick_run(src) + 1));
    let _ = writeln!(out, "{fence}python\n{}\n{fence}", src.trim_matches('\n'));
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}
