//! `--output-format github`: GitHub Actions workflow commands on stdout, so the checks page
//! shows each failure that was not fixed (`::error`) and each kept patch (`::notice` for a
//! safe one, `::warning` for an unsafe one) on the lines they concern.
//!
//! The format and its escaping are those of `@actions/core` (actions/toolkit,
//! `packages/core/src/command.ts`): `::NAME key=value,key=value::MESSAGE`, one per line.
//! File paths are relative to the repository root (`$GITHUB_WORKSPACE` when it holds the
//! project, else the top of the git work tree, else the project root), as GitHub expects.
//! Line numbers are those of the code that was tested, before any patch: GitHub attaches the
//! annotations to the commit the job checked out.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::session::{FailureOutcome, Patch, Report};
use crate::traceback::{Outcome, ParsedLog};

/// A message: `%`, CR and LF escaped (multi-line messages become `%0A`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: as [`escape_data`], plus `:` and `,`, which end a property.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command line. Properties with no value are left out, as the toolkit does.
pub fn command(name: &str, props: &[(&str, Option<String>)], message: &str) -> String {
    let props: Vec<String> = props
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", escape_property(v))))
        .collect();
    let mut out = format!("::{name}");
    if !props.is_empty() {
        out.push(' ');
        out.push_str(&props.join(","));
    }
    let _ = writeln!(out, "::{}", escape_data(message));
    out
}

/// The path from the repository root to the project root, `/`-separated and ending in `/`
/// (empty when the project is the repository).
pub fn repo_prefix(root: &Path) -> String {
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let workspace = std::env::var_os("GITHUB_WORKSPACE")
        .map(PathBuf::from)
        .map(|w| w.canonicalize().unwrap_or(w))
        .filter(|w| real.starts_with(w));
    let top = workspace.or_else(|| {
        real.ancestors()
            .find(|d| d.join(".git").exists())
            .map(Path::to_path_buf)
    });
    let rel = top
        .as_deref()
        .and_then(|t| real.strip_prefix(t).ok())
        .unwrap_or(Path::new(""));
    let mut prefix = String::new();
    for part in rel.components() {
        prefix.push_str(&part.as_os_str().to_string_lossy());
        prefix.push('/');
    }
    prefix
}

/// The annotations of a `fix` run: an `::error` per failure without a proven patch, then a
/// `::notice` (safe) or `::warning` (unsafe) per patch, at its first changed line.
pub fn fix(report: &Report, prefix: &str) -> String {
    let mut out = String::new();
    for f in &report.failures {
        if !f.status.is_patched() {
            out.push_str(&failure(f, prefix));
        }
    }
    for p in &report.patches {
        out.push_str(&patch(p, prefix));
    }
    out
}

fn failure(f: &FailureOutcome, prefix: &str) -> String {
    let mut message = String::new();
    if let Some(test) = &f.test {
        let _ = writeln!(message, "{test}");
    }
    let _ = write!(message, "{}: {}", f.exc_type, f.msg);
    if let Some(reason) = &f.reason {
        let _ = write!(message, "\n{reason}");
    }
    command(
        "error",
        &[
            (
                "file",
                f.file.as_ref().map(|file| format!("{prefix}{file}")),
            ),
            ("line", f.line.map(|l| l.to_string())),
            (
                "title",
                Some(format!(
                    "selfdebug: {}",
                    f.status.as_str().replace('_', " ")
                )),
            ),
        ],
        &message,
    )
}

fn patch(p: &Patch, prefix: &str) -> String {
    let verb = if p.validated { "fixed" } else { "proposed" };
    let mut message = p.titles.join("; ");
    for r in &p.review {
        let _ = write!(message, "\nreview: {r}");
    }
    let _ = write!(message, "\n\n{}", p.diff.trim_end_matches('\n'));
    command(
        if p.safe { "notice" } else { "warning" },
        &[
            ("file", Some(format!("{prefix}{}", p.file))),
            ("line", first_changed_line(&p.diff).map(|l| l.to_string())),
            (
                "title",
                Some(format!(
                    "selfdebug: {verb} ({}, {})",
                    p.applicability,
                    p.rules.join(" ")
                )),
            ),
        ],
        &message,
    )
}

/// The line, in the original file, of a unified diff's first added or removed line (for an
/// insertion: the line it goes before).
pub fn first_changed_line(diff: &str) -> Option<u32> {
    let mut line: Option<u32> = None;
    for l in diff.lines() {
        if let Some(header) = l.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: the original side starts at a.
            line = header
                .split_whitespace()
                .find_map(|t| t.strip_prefix('-'))
                .and_then(|t| t.split(',').next())
                .and_then(|n| n.parse().ok());
            continue;
        }
        let Some(n) = line.as_mut() else { continue };
        match l.as_bytes().first() {
            Some(b'+') | Some(b'-') => return Some((*n).max(1)),
            Some(b' ') => *n += 1,
            _ => {}
        }
    }
    None
}

/// The annotations of `parse`: an `::error` per failure, at its location when it has one.
pub fn parse(parsed: &ParsedLog) -> String {
    let prefix = repo_prefix(Path::new(&parsed.root));
    let mut out = String::new();
    for f in &parsed.failures {
        let test = f.test.as_deref().or(f.headline.as_deref());
        let mut message = String::new();
        if let Some(t) = test {
            let _ = writeln!(message, "{t}");
        }
        if f.exc_type.is_empty() {
            message.push_str(&f.msg);
        } else {
            let _ = write!(message, "{}: {}", f.exc_type, f.msg);
        }
        let loc = f.location.as_ref();
        out.push_str(&command(
            "error",
            &[
                ("file", loc.map(|l| format!("{prefix}{}", l.file))),
                ("line", loc.map(|l| l.line.to_string())),
                (
                    "title",
                    Some(match f.outcome {
                        Outcome::Failed => "pytest: failed".to_string(),
                        Outcome::Error => "pytest: error".to_string(),
                    }),
                ),
            ],
            &message,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_toolkit() {
        assert_eq!(escape_data("100% a\r\nb:c,d"), "100%25 a%0D%0Ab:c,d");
        assert_eq!(
            escape_property("100% a\r\nb:c,d"),
            "100%25 a%0D%0Ab%3Ac%2Cd"
        );
        // `%` first, so an escape already in the text is not read back as a character.
        assert_eq!(escape_data("%0A"), "%250A");
        assert_eq!(escape_property("%3A"), "%253A");
    }

    #[test]
    fn command_lines() {
        assert_eq!(
            command(
                "error",
                &[
                    ("file", Some("src/a,b.py".into())),
                    ("line", None),
                    ("title", Some("x: y".into()))
                ],
                "two\nlines"
            ),
            "::error file=src/a%2Cb.py,title=x%3A y::two%0Alines\n"
        );
        assert_eq!(command("notice", &[], "m"), "::notice::m\n");
    }

    #[test]
    fn first_changed_line_counts_context() {
        let diff = "--- a/m.py\n+++ b/m.py\n@@ -3,4 +6,5 @@\n a\n b\n+c\n d\n";
        assert_eq!(first_changed_line(diff), Some(5));
        assert_eq!(first_changed_line("@@ -0,0 +1 @@\n+x\n"), Some(1));
        assert_eq!(first_changed_line("@@ -4,2 +3,0 @@\n-x\n-y\n"), Some(4));
        assert_eq!(first_changed_line("no diff"), None);
    }

    #[test]
    fn prefix_is_the_project_below_the_git_top() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".git")).unwrap();
        let sub = tmp.path().join("py").join("app");
        std::fs::create_dir_all(&sub).unwrap();
        if std::env::var_os("GITHUB_WORKSPACE").is_none() {
            assert_eq!(repo_prefix(&sub), "py/app/");
            assert_eq!(repo_prefix(tmp.path()), "");
        }
    }
}
