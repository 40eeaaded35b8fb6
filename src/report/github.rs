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

use crate::session::{FailureOutcome, Patch, PatchStep, Report};
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
/// `::notice` (safe) or `::warning` (unsafe) per kept candidate, at the lines (and, for a
/// change within one line, the columns) it changed. Their title says `fixed`, or `would fix`
/// in a dry run (nothing was written), or `proposed` for a patch no test run proved.
pub fn fix(report: &Report, prefix: &str) -> String {
    let mut out = String::new();
    for f in &report.failures {
        if !f.status.is_patched() {
            out.push_str(&failure(f, prefix));
        }
    }
    for p in &report.patches {
        out.push_str(&patch(p, prefix, report.dry_run));
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

/// One annotation per step of the patch, each at its own place in the original file.
fn patch(p: &Patch, prefix: &str, dry_run: bool) -> String {
    let verb = match (p.validated, dry_run) {
        (false, _) => "proposed",
        (true, true) => "would fix",
        (true, false) => "fixed",
    };
    let mut out = String::new();
    // A patch always has its steps; one built without them is annotated as a whole.
    let whole;
    let steps = if p.steps.is_empty() {
        whole = [PatchStep {
            rule: p.rules.join(" "),
            title: p.titles.join("; "),
            safe: p.safe,
            review: p.review.clone(),
            diff: p.diff.clone(),
        }];
        &whole[..]
    } else {
        &p.steps[..]
    };
    let diffs: Vec<Vec<Block>> = steps.iter().map(|s| blocks(&s.diff)).collect();
    for (i, step) in steps.iter().enumerate() {
        let span = span(&diffs[i], &diffs[..i]);
        let mut message = step.title.clone();
        for r in &step.review {
            let _ = write!(message, "\nreview: {r}");
        }
        let _ = write!(message, "\n\n{}", step.diff.trim_end_matches('\n'));
        let num = |n: Option<u32>| n.map(|n| n.to_string());
        out.push_str(&command(
            if step.safe { "notice" } else { "warning" },
            &[
                ("file", Some(format!("{prefix}{}", p.file))),
                ("line", num(span.map(|s| s.line))),
                ("endLine", num(span.map(|s| s.end_line))),
                ("col", num(span.and_then(|s| s.cols).map(|c| c.0))),
                ("endColumn", num(span.and_then(|s| s.cols).map(|c| c.1))),
                (
                    "title",
                    Some(format!(
                        "selfdebug: {verb} ({}, {})",
                        if step.safe { "safe" } else { "unsafe" },
                        step.rule
                    )),
                ),
            ],
            &message,
        ));
    }
    out
}

/// A run of removed and added lines in a unified diff: `old` replaced by `new`, starting at
/// line `start` of the side before (for a pure insertion: the line it goes before).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Block {
    start: u32,
    old: Vec<String>,
    new: Vec<String>,
    /// A line of the side before comes after it in its hunk (diffs carry context, so only a
    /// change at the end of the file has none).
    followed: bool,
}

/// The changed blocks of a one-file unified diff, in order.
fn blocks(diff: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut line: Option<u32> = None;
    // Whether the previous hunk line was a change (so this one extends the same block).
    let mut open = false;
    for l in diff.lines() {
        if let Some(header) = l.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: the side before starts at a; an empty side (b = 0) names the
            // line before the insertion.
            let old = header.split_whitespace().find_map(|t| t.strip_prefix('-'));
            let mut parts = old.unwrap_or("").split(',');
            let start: Option<u32> = parts.next().and_then(|n| n.parse().ok());
            let empty = parts.next() == Some("0");
            line = start.map(|a| if empty { a + 1 } else { a });
            open = false;
            continue;
        }
        let Some(n) = line.as_mut() else { continue };
        let (kind, text) = match l.as_bytes().first() {
            Some(b'-') | Some(b'+') => (l.as_bytes()[0], l[1..].to_string()),
            Some(b' ') => {
                *n += 1;
                open = false;
                if let Some(b) = out.last_mut() {
                    b.followed = true;
                }
                continue;
            }
            _ => continue, // `\ No newline at end of file`
        };
        if !open {
            out.push(Block {
                start: *n,
                old: Vec::new(),
                new: Vec::new(),
                followed: false,
            });
            open = true;
        }
        let block = out.last_mut().expect("a block was just opened");
        if kind == b'-' {
            block.old.push(text);
            *n += 1;
        } else {
            block.new.push(text);
        }
    }
    out
}

/// Where a step's change sits in the original file: lines, and 1-based columns (first and
/// last changed character of the line before) when it changed part of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub line: u32,
    pub end_line: u32,
    pub cols: Option<(u32, u32)>,
}

/// The span of a step with changed `blocks`, mapped back through the `earlier` steps' blocks
/// to the lines of the original file. Columns are dropped when an earlier step changed the
/// same lines (they would describe a line the original does not have).
fn span(blocks: &[Block], earlier: &[Vec<Block>]) -> Option<Span> {
    let (first, last) = (blocks.first()?, blocks.last()?);
    let mut line = first.start;
    let mut end_line = last.start + (last.old.len() as u32).saturating_sub(1);
    // A pure insertion at the end of the file goes before a line that does not exist: point
    // at the line it follows.
    if first.old.is_empty() && blocks.len() == 1 && line > 1 && !first.followed {
        line -= 1;
        end_line = line;
    }
    let mut cols = match blocks {
        [Block { old, new, .. }] if old.len() == 1 && new.len() == 1 => {
            Some(columns(&old[0], &new[0]))
        }
        _ => None,
    };
    for step in earlier.iter().rev() {
        let (l, exact_l) = map_back(line, step);
        let (e, exact_e) = map_back(end_line, step);
        if !(exact_l && exact_e) {
            cols = None;
        }
        line = l.max(1);
        end_line = e.max(line);
    }
    Some(Span {
        line: line.max(1),
        end_line: end_line.max(line.max(1)),
        cols,
    })
}

/// A line of the file after `step` mapped to the file before it; `false` when the line is one
/// the step wrote (it maps to the start of what the step replaced).
fn map_back(line: u32, step: &[Block]) -> (u32, bool) {
    let mut delta: i64 = 0;
    for b in step {
        let new_start = b.start as i64 + delta;
        let l = line as i64;
        if l < new_start {
            break;
        }
        if l < new_start + b.new.len() as i64 {
            return (b.start, false);
        }
        delta += b.new.len() as i64 - b.old.len() as i64;
    }
    ((line as i64 - delta).max(1) as u32, true)
}

/// The 1-based columns, in characters, of the part of `old` that `new` replaced: after their
/// common prefix, before their common suffix. An insertion within the line is one column wide.
fn columns(old: &str, new: &str) -> (u32, u32) {
    let (o, n): (Vec<char>, Vec<char>) = (old.chars().collect(), new.chars().collect());
    let prefix = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let room = o.len().min(n.len()) - prefix;
    let suffix = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let col = prefix as u32 + 1;
    let end = (o.len() - suffix) as u32;
    (col, end.max(col))
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
    fn blocks_count_context_and_empty_sides() {
        let diff = "--- a/m.py\n+++ b/m.py\n@@ -3,4 +6,5 @@\n a\n b\n+c\n d\n-e\n+f\n";
        let b = blocks(diff);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].start, b[0].old.len(), b[0].new.len()), (5, 0, 1));
        assert!(b[0].followed);
        assert_eq!(
            (b[1].start, b[1].old.clone(), b[1].new.clone()),
            (6, vec!["e".to_string()], vec!["f".to_string()])
        );
        assert_eq!(blocks("@@ -0,0 +1 @@\n+x\n")[0].start, 1);
        assert_eq!(blocks("@@ -4,2 +3,0 @@\n-x\n-y\n")[0].start, 4);
        assert!(blocks("no diff").is_empty());
    }

    #[test]
    fn a_step_after_an_insertion_maps_to_original_lines() {
        // Step 1 adds three lines at the top; step 2, in the file after it, changes line 5
        // (originally line 2) inside the line.
        let first =
            blocks("@@ -1,2 +1,5 @@\n+import json\n+\n+\n def f(x):\n     return x.upper()\n");
        let second = blocks(
            "@@ -4,2 +4,2 @@\n def f(x):\n-    return x.upper()\n+    return (x or \"\").upper()\n",
        );
        assert_eq!(
            span(&first, &[]),
            Some(Span {
                line: 1,
                end_line: 1,
                cols: None
            })
        );
        assert_eq!(
            span(&second, std::slice::from_ref(&first)),
            Some(Span {
                line: 2,
                end_line: 2,
                cols: Some((12, 12))
            })
        );
        // A step that rewrites a line an earlier step wrote has no columns in the original.
        let third = blocks("@@ -1,1 +1,1 @@\n-import json\n+import json as j\n");
        assert_eq!(
            span(&third, &[first]),
            Some(Span {
                line: 1,
                end_line: 1,
                cols: None
            })
        );
    }

    #[test]
    fn an_insertion_at_the_end_points_at_the_last_line() {
        let b = blocks("@@ -1,2 +1,3 @@\n a\n b\n+c\n");
        assert_eq!(
            span(&b, &[]),
            Some(Span {
                line: 2,
                end_line: 2,
                cols: None
            })
        );
    }

    #[test]
    fn a_patch_without_steps_is_one_annotation() {
        use crate::status::{Applicability, DiffEncoding, Source};
        let p = Patch {
            file: "m.py".into(),
            rules: vec!["a".into(), "b".into()],
            titles: vec!["t1".into(), "t2".into()],
            safe: false,
            applicability: Applicability::Unsafe,
            source: Source::Rule,
            review: vec!["check".into()],
            validated: true,
            diff: "@@ -2,1 +2,1 @@\n-x = 1\n+x = 2\n".into(),
            diff_encoding: DiffEncoding::Utf8,
            steps: Vec::new(),
            alternatives: Vec::new(),
            proven_by: Vec::new(),
            kept_for: Vec::new(),
            bytes: None,
        };
        assert_eq!(
            patch(&p, "py/", false),
            "::warning file=py/m.py,line=2,endLine=2,col=5,endColumn=5,title=selfdebug%3A fixed \
             (unsafe%2C a b)::t1; t2%0Areview: check%0A%0A@@ -2,1 +2,1 @@%0A-x = 1%0A+x = 2\n"
        );
        // A dry run wrote nothing: the patch would fix.
        assert!(patch(&p, "", true).contains(",title=selfdebug%3A would fix (unsafe%2C a b)::"));
    }

    #[test]
    fn columns_are_the_changed_characters() {
        assert_eq!(
            columns(
                "    return text.upper()",
                "    return (text or \"\").upper()"
            ),
            (12, 15)
        );
        assert_eq!(columns("abc", "abXc"), (3, 3));
        assert_eq!(columns("aXc", "ac"), (2, 2));
        assert_eq!(columns("é = 1", "é = 2"), (5, 5));
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
