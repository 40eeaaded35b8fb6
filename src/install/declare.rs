//! `--install-missing` declares what it installed: the distribution is added where the project
//! declares its dependencies, so the fix is in the diff and not only in one CI runner's venv.
//!
//! Where, in this order: `pyproject.toml`'s `[project] dependencies` (PEP 621: setuptools,
//! hatch, PDM, Poetry 2), Poetry's `[tool.poetry.dependencies]` table, `requirements.txt` (else
//! the one `requirements*.txt` that is not for development), and last a `dependencies` key
//! added to an existing `[project]` table that does not mark them `dynamic`. The edit is made
//! on the lines, keeping every other byte (comments, order, line endings), and checked by
//! reading the file back with a TOML parser: an edit that would not read as the dependency is
//! not made.

use std::path::Path;

/// The patch's rule id (`rules` in the JSON, the annotation's title).
pub const RULE: &str = "declare-dependency";

/// What declaring a distribution comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declaration {
    /// `file` (relative to the root) gets `after` in place of `before`; `place` names the
    /// list in words (`[project] dependencies`).
    Add {
        file: String,
        place: &'static str,
        before: Vec<u8>,
        after: Vec<u8>,
    },
    /// The project declares it already (installed it was not).
    Already { file: String, place: &'static str },
    /// No declaration this knows how to edit; the reason says what was looked for.
    Nowhere(String),
}

const PEP621: &str = "[project] dependencies";
const POETRY: &str = "[tool.poetry.dependencies]";
const REQUIREMENTS: &str = "requirements";

/// Where and how `dist` is added to the dependencies of the project at `root`.
pub fn declare(root: &Path, dist: &str) -> Declaration {
    let pyproject = root.join("pyproject.toml");
    let mut dynamic = false;
    if let Ok(bytes) = std::fs::read(&pyproject) {
        let Ok(text) = String::from_utf8(bytes.clone()) else {
            return Declaration::Nowhere("pyproject.toml is not UTF-8".into());
        };
        let Ok(doc) = text.parse::<toml::Table>() else {
            return Declaration::Nowhere("pyproject.toml does not parse as TOML".into());
        };
        let project = doc.get("project").and_then(|p| p.as_table());
        let tool_poetry = doc
            .get("tool")
            .and_then(|t| t.get("poetry"))
            .and_then(|p| p.get("dependencies"))
            .and_then(|d| d.as_table());
        dynamic = project
            .and_then(|p| p.get("dynamic"))
            .and_then(|d| d.as_array())
            .is_some_and(|d| d.iter().any(|v| v.as_str() == Some("dependencies")));
        let listed = project
            .and_then(|p| p.get("dependencies"))
            .and_then(|d| d.as_array());
        let edited = if let Some(list) = listed {
            if list
                .iter()
                .filter_map(|v| v.as_str())
                .any(|r| same(r, dist))
            {
                return already("pyproject.toml", PEP621);
            }
            Some((PEP621, add_to_array(&text, "project", "dependencies", dist)))
        } else if let Some(table) = tool_poetry {
            if table.keys().any(|k| same(k, dist)) {
                return already("pyproject.toml", POETRY);
            }
            Some((
                POETRY,
                add_to_table(&text, "tool.poetry.dependencies", &poetry_line(dist)),
            ))
        } else {
            None
        };
        if let Some((place, after)) = edited {
            return checked("pyproject.toml", place, &text, after, dist);
        }
    }
    if let Some((name, text)) = requirements_file(root) {
        let listed = text.lines().any(|l| same(l.trim(), dist));
        if listed {
            return Declaration::Already {
                file: name,
                place: REQUIREMENTS,
            };
        }
        let nl = newline(&text);
        let mut after = text.clone();
        if !after.is_empty() && !after.ends_with('\n') {
            after.push_str(nl);
        }
        after.push_str(dist);
        after.push_str(nl);
        return Declaration::Add {
            file: name,
            place: REQUIREMENTS,
            before: text.into_bytes(),
            after: after.into_bytes(),
        };
    }
    if let Ok(text) = std::fs::read_to_string(&pyproject) {
        if has_header(&text, "project") && !dynamic {
            let line = format!("dependencies = [\"{dist}\"]");
            let after = add_to_table(&text, "project", &line);
            return checked("pyproject.toml", PEP621, &text, after, dist);
        }
    }
    Declaration::Nowhere(
        "no pyproject.toml [project] or Poetry dependencies, no requirements.txt".into(),
    )
}

fn already(file: &str, place: &'static str) -> Declaration {
    Declaration::Already {
        file: file.into(),
        place,
    }
}

/// The edited pyproject.toml, if it still parses and now lists `dist` where `place` says.
fn checked(
    file: &str,
    place: &'static str,
    before: &str,
    after: Option<String>,
    dist: &str,
) -> Declaration {
    let refused = || Declaration::Nowhere(format!("{file}: could not add {dist} to {place}"));
    let Some(after) = after else {
        return refused();
    };
    let Ok(doc) = after.parse::<toml::Table>() else {
        return refused();
    };
    let ok = if place == POETRY {
        doc.get("tool")
            .and_then(|t| t.get("poetry"))
            .and_then(|p| p.get("dependencies"))
            .and_then(|d| d.as_table())
            .is_some_and(|t| t.keys().any(|k| same(k, dist)))
    } else {
        doc.get("project")
            .and_then(|p| p.get("dependencies"))
            .and_then(|d| d.as_array())
            .is_some_and(|a| a.iter().filter_map(|v| v.as_str()).any(|r| same(r, dist)))
    };
    if !ok {
        return refused();
    }
    Declaration::Add {
        file: file.into(),
        place,
        before: before.as_bytes().to_vec(),
        after: after.into_bytes(),
    }
}

/// A requirement (`PyYAML>=6; python_version>"3"`, a Poetry key) names `dist`: the names
/// compared as the index does (PEP 503: case, and runs of `-_.`, do not matter).
fn same(requirement: &str, dist: &str) -> bool {
    let name: String = requirement
        .trim()
        .trim_matches('"')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    !name.is_empty() && normalize(&name) == normalize(dist)
}

/// PEP 503's normalized name.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn poetry_line(dist: &str) -> String {
    if dist.contains('.') {
        format!("\"{dist}\" = \"*\"")
    } else {
        format!("{dist} = \"*\"")
    }
}

/// `\r\n` when the text uses it, else `\n`.
fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// `requirements.txt`, else the one `requirements*.txt` at the root that is not for
/// development (`-dev`, `-test`, `-docs`, `-lint`): its name and text.
fn requirements_file(root: &Path) -> Option<(String, String)> {
    let plain = root.join("requirements.txt");
    if let Ok(text) = std::fs::read_to_string(&plain) {
        return Some(("requirements.txt".into(), text));
    }
    let mut names: Vec<String> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
        .filter(|n| !["dev", "test", "doc", "lint"].iter().any(|w| n.contains(w)))
        .collect();
    names.sort();
    if names.len() != 1 {
        return None;
    }
    let name = names.remove(0);
    let text = std::fs::read_to_string(root.join(&name)).ok()?;
    Some((name, text))
}

/// The byte range of the lines of table `name` (after its `[name]` header line, up to the
/// next header).
fn table_span(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        if let Some(h) = header(line) {
            if start.is_some() {
                return start.map(|s| (s, at));
            }
            if h == name {
                start = Some(at + line.len());
            }
        }
        at += line.len();
    }
    start.map(|s| (s, text.len()))
}

fn has_header(text: &str, name: &str) -> bool {
    text.split_inclusive('\n')
        .any(|l| header(l).as_deref() == Some(name))
}

/// The name of a `[table]` header line (not `[[array]]`), without spaces.
fn header(line: &str) -> Option<String> {
    let l = line.trim();
    let l = l.split_once('#').map_or(l, |(h, _)| h.trim_end());
    if l.starts_with("[[") {
        return Some(String::new());
    }
    let inner = l.strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.chars().filter(|c| !c.is_whitespace()).collect())
}

/// `line` added after the last line with content of table `table`.
fn add_to_table(text: &str, table: &str, line: &str) -> Option<String> {
    let (start, end) = table_span(text, table)?;
    let body = &text[start..end];
    let mut last_end = 0;
    let mut at = 0;
    for l in body.split_inclusive('\n') {
        at += l.len();
        let t = l.trim();
        if !t.is_empty() && !t.starts_with('#') {
            last_end = at;
        }
    }
    let nl = newline(text);
    let insert = start + last_end;
    let mut out = text[..insert].to_string();
    if !out.ends_with('\n') {
        out.push_str(nl);
    }
    out.push_str(line);
    out.push_str(nl);
    out.push_str(&text[insert..]);
    Some(out)
}

/// `"dist"` added as the last element of the array `key = [...]` in table `table`: on its own
/// line, indented and comma'd as the element before it, when the array spans lines; else
/// before the `]`.
fn add_to_array(text: &str, table: &str, key: &str, dist: &str) -> Option<String> {
    let (start, end) = table_span(text, table)?;
    let body = &text[start..end];
    let mut at = 0;
    let mut open = None;
    for l in body.split_inclusive('\n') {
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix(key) {
            let rest = rest.trim_start();
            if let Some(value) = rest.strip_prefix('=') {
                if value.trim_start().starts_with('[') {
                    let col = l.len() - value.trim_start().len();
                    open = Some(start + at + col);
                    break;
                }
            }
        }
        at += l.len();
    }
    let open = open?;
    let close = closing_bracket(text, open)?;
    let quoted = format!("\"{dist}\"");
    let inside = &text[open + 1..close];
    let close_line_start = text[..close].rfind('\n').map_or(0, |i| i + 1);
    let spans_lines = inside.contains('\n');
    let on_close_line = text[close_line_start..close].trim();
    if !spans_lines || !on_close_line.is_empty() {
        // `["a", "b"]` or `    "b"]`: before the bracket, after a comma.
        let content = strip_comments(inside);
        let before = content.trim_end();
        let sep = if before.trim().is_empty() {
            ""
        } else if before.ends_with(',') {
            " "
        } else {
            ", "
        };
        let cut = open + 1 + inside.trim_end().len();
        return Some(format!("{}{sep}{quoted}{}", &text[..cut], &text[cut..]));
    }
    // Spans lines, `]` alone on its line: a line of its own after the last element.
    let lines: Vec<(usize, &str)> = {
        let mut v = Vec::new();
        let mut at = open + 1;
        for l in text[open + 1..close_line_start].split_inclusive('\n') {
            v.push((at, l));
            at += l.len();
        }
        v
    };
    let last = lines.iter().rev().find(|(_, l)| {
        let t = strip_comments(l);
        !t.trim().is_empty()
    });
    let nl = newline(text);
    let Some(&(last_at, last_line)) = last else {
        // An empty array over lines: the element indented as the key plus four.
        let indent = " ".repeat(4);
        return Some(format!(
            "{}{indent}{quoted},{nl}{}",
            &text[..close_line_start],
            &text[close_line_start..]
        ));
    };
    let indent: String = last_line
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let code = strip_comments(last_line).trim_end().to_string();
    let trailing = code.ends_with(',');
    let mut out = text[..last_at].to_string();
    if trailing {
        out.push_str(last_line);
    } else {
        // The element before gets its comma, before any comment.
        let cut = last_line.find(code.trim_start()).unwrap_or(0) + code.trim_start().len();
        out.push_str(&last_line[..cut]);
        out.push(',');
        out.push_str(&last_line[cut..]);
    }
    if !out.ends_with('\n') {
        out.push_str(nl);
    }
    out.push_str(&indent);
    out.push_str(&quoted);
    if trailing {
        out.push(',');
    }
    out.push_str(nl);
    out.push_str(&text[last_at + last_line.len()..]);
    Some(out)
}

/// The `]` that closes the array opened at `open`: strings and comments skipped.
fn closing_bracket(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    if q == b'"' && bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The text of array lines without their `#` comments (outside strings).
fn strip_comments(s: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    for c in s.chars() {
        match (quote, c) {
            (None, '#') => {
                // To the end of this line.
                quote = Some('#');
            }
            (Some('#'), '\n') => {
                quote = None;
                out.push(c);
            }
            (Some('#'), _) => {}
            (None, '"' | '\'') => {
                quote = Some(c);
                out.push(c);
            }
            (Some(q), _) if c == q => {
                quote = None;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(files: &[(&str, &str)], dist: &str) -> (String, String) {
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(tmp.path().join(name), text).unwrap();
        }
        match declare(tmp.path(), dist) {
            Declaration::Add { file, after, .. } => (file, String::from_utf8(after).unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arrays_get_the_element_in_their_own_style() {
        let one = "[project]\nname = \"x\"\ndependencies = [\"click>=8\"]  # runtime\n\n[tool.x]\ny = 1\n";
        assert_eq!(
            add(&[("pyproject.toml", one)], "PyYAML").1,
            "[project]\nname = \"x\"\ndependencies = [\"click>=8\", \"PyYAML\"]  # runtime\n\n[tool.x]\ny = 1\n"
        );
        let empty = "[project]\ndependencies = []\n";
        assert_eq!(
            add(&[("pyproject.toml", empty)], "PyYAML").1,
            "[project]\ndependencies = [\"PyYAML\"]\n"
        );
        let lines = "[project]\ndependencies = [\n  \"a[x]>=1\",  # why\n  \"b\"  # last\n]\n";
        assert_eq!(
            add(&[("pyproject.toml", lines)], "PyYAML").1,
            "[project]\ndependencies = [\n  \"a[x]>=1\",  # why\n  \"b\",  # last\n  \"PyYAML\"\n]\n"
        );
        let crlf = "[project]\r\ndependencies = [\r\n    \"a\",\r\n]\r\n";
        assert_eq!(
            add(&[("pyproject.toml", crlf)], "PyYAML").1,
            "[project]\r\ndependencies = [\r\n    \"a\",\r\n    \"PyYAML\",\r\n]\r\n"
        );
    }

    #[test]
    fn a_project_without_dependencies_gets_the_key() {
        let text = "[project]\nname = \"x\"\n\n[build-system]\nrequires = []\n";
        assert_eq!(
            add(&[("pyproject.toml", text)], "PyYAML").1,
            "[project]\nname = \"x\"\ndependencies = [\"PyYAML\"]\n\n[build-system]\nrequires = []\n"
        );
        // Dynamic dependencies come from elsewhere: the requirements file.
        let dynamic = "[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n";
        assert_eq!(
            add(
                &[("pyproject.toml", dynamic), ("requirements.txt", "a")],
                "PyYAML"
            ),
            ("requirements.txt".into(), "a\nPyYAML\n".into())
        );
    }

    #[test]
    fn already_declared_or_nowhere() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("requirements.txt"),
            "pyyaml==6.0  # pinned\n",
        )
        .unwrap();
        assert_eq!(
            declare(tmp.path(), "PyYAML"),
            Declaration::Already {
                file: "requirements.txt".into(),
                place: REQUIREMENTS
            }
        );
        let none = tempfile::tempdir().unwrap();
        assert!(matches!(
            declare(none.path(), "PyYAML"),
            Declaration::Nowhere(_)
        ));
    }

    #[test]
    fn names_compare_as_the_index_does() {
        assert!(same("PyYAML>=6", "pyyaml"));
        assert!(same("\"typing_extensions\"", "typing-extensions"));
        assert!(!same("pyyamlx", "pyyaml"));
        assert_eq!(normalize("A._-b"), "a-b");
    }
}
