//! Every relative link in README.md and docs/*.md resolves: the file (or directory) exists in
//! the repository, and a `#fragment` names a heading of the Markdown file it points to (GitHub's
//! anchors). Nothing points outside the repository (a clone has nothing there). The README stays
//! short enough to read in two minutes.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines outside fenced code blocks.
fn prose(md: &str) -> Vec<&str> {
    let mut fenced = false;
    md.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

fn anchors(md: &str) -> BTreeSet<String> {
    prose(md)
        .iter()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

/// `[text](target)` targets, inline code left out.
fn links(md: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let code = regex::Regex::new(r"`[^`]*`").unwrap();
    prose(md)
        .iter()
        .flat_map(|l| {
            let l = code.replace_all(l, "");
            re.captures_iter(&l)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn broken_links(doc: &Path) -> Vec<String> {
    let repo = support::repo().canonicalize().unwrap();
    let md = std::fs::read_to_string(doc).unwrap();
    let mut broken = Vec::new();
    for target in links(&md) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let file = if path.is_empty() {
            doc.to_path_buf()
        } else {
            doc.parent().unwrap().join(path)
        };
        let Ok(file) = file.canonicalize() else {
            broken.push(format!("{target}: no such file"));
            continue;
        };
        if !file.starts_with(&repo) {
            broken.push(format!("{target}: outside the repository"));
            continue;
        }
        if let Some(fragment) = fragment {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if !anchors(&text).contains(fragment) {
                broken.push(format!("{target}: no heading #{fragment}"));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let repo = support::repo();
    let mut docs = vec![repo.join("README.md")];
    for entry in std::fs::read_dir(repo.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    let broken: Vec<String> = docs
        .iter()
        .flat_map(|d| {
            let name = d.strip_prefix(&repo).unwrap().display().to_string();
            broken_links(d)
                .into_iter()
                .map(move |b| format!("{name}: {b}"))
        })
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_short_and_names_no_path_outside_the_repository() {
    let readme = std::fs::read_to_string(support::repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < 250,
        "README.md has {lines} lines; move reference to docs/"
    );
    for file in ["README.md", "src/lib.rs", "docs/architecture.md"] {
        let text = std::fs::read_to_string(support::repo().join(file)).unwrap();
        assert!(!text.contains("../shared/"), "{file} points to ../shared/");
    }
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(anchor(" `selfdebug fix`"), "selfdebug-fix");
    assert_eq!(
        anchor(" Exit codes and `final_status`"),
        "exit-codes-and-final_status"
    );
    assert_eq!(
        anchor(" Command mode: any command as the judge"),
        "command-mode-any-command-as-the-judge"
    );
}
