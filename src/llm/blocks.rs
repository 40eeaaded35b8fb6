//! The model's answer → SEARCH/REPLACE blocks → byte-range [`Edit`]s of one file.
//!
//! The format is Aider's (its `editblock_coder` found it the most reliable for chat models):
//!
//! ```text
//! src/shop.py
//! <<<<<<< SEARCH
//!     return price * qty
//! =======
//!     return price * qty * (1 - discount)
//! >>>>>>> REPLACE
//! ```
//!
//! Blocks may sit inside Markdown fences, several per answer. A SEARCH text that differs from
//! the file only in leading whitespace or line endings still matches; the replacement is then
//! re-indented by the same amount. Nothing here panics on any input (see the property tests).

use std::ops::Range;

use crate::edit::Edit;

/// One SEARCH/REPLACE block, with `\n` line endings, each line terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// As the model wrote it (relative to the root, one hopes).
    pub path: String,
    pub search: String,
    pub replace: String,
}

/// What could be read from an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub blocks: Vec<Block>,
    /// Blocks that started but were not well formed (no path, no `=======`, no end marker).
    pub errors: Vec<String>,
}

/// Reads every block of `answer`.
pub fn parse(answer: &str) -> Parsed {
    let lines: Vec<&str> = answer
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = Parsed::default();
    let mut i = 0;
    let mut last_path: Option<String> = None;
    while i < lines.len() {
        if !is_marker(lines[i], '<', "SEARCH") {
            i += 1;
            continue;
        }
        // The path is the nearest line above that is not blank and not a fence opening; a
        // block without one edits the file of the block before it (as Aider allows).
        let path = path_above(&lines[..i]).or_else(|| last_path.clone());
        let mut j = i + 1;
        let mut search = String::new();
        while j < lines.len() && !is_divider(lines[j]) {
            if is_marker(lines[j], '<', "SEARCH") || is_marker(lines[j], '>', "REPLACE") {
                break;
            }
            search.push_str(lines[j]);
            search.push('\n');
            j += 1;
        }
        if j >= lines.len() || !is_divider(lines[j]) {
            out.errors.push(format!(
                "block {} has no `=======` line",
                out.blocks.len() + 1
            ));
            i = j.max(i + 1);
            continue;
        }
        j += 1;
        let mut replace = String::new();
        while j < lines.len() && !is_marker(lines[j], '>', "REPLACE") {
            if is_marker(lines[j], '<', "SEARCH") || is_divider(lines[j]) {
                break;
            }
            replace.push_str(lines[j]);
            replace.push('\n');
            j += 1;
        }
        if j >= lines.len() || !is_marker(lines[j], '>', "REPLACE") {
            out.errors.push(format!(
                "block {} has no `>>>>>>> REPLACE` line",
                out.blocks.len() + 1
            ));
            i = j.max(i + 1);
            continue;
        }
        match path {
            Some(path) => {
                last_path = Some(path.clone());
                out.blocks.push(Block {
                    path,
                    search,
                    replace,
                });
            }
            None => out.errors.push(format!(
                "block {} names no file on the line before `<<<<<<< SEARCH`",
                out.blocks.len() + 1
            )),
        }
        i = j + 1;
    }
    out
}

/// `<<<<<<< SEARCH` / `>>>>>>> REPLACE`: 5 to 9 marker characters (models miscount), the word.
fn is_marker(line: &str, ch: char, word: &str) -> bool {
    let t = line.trim();
    let n = t.chars().take_while(|&c| c == ch).count();
    (5..=9).contains(&n) && t[n..].trim() == word
}

fn is_divider(line: &str) -> bool {
    let t = line.trim();
    (5..=9).contains(&t.len()) && t.chars().all(|c| c == '=')
}

fn path_above(lines: &[&str]) -> Option<String> {
    for line in lines.iter().rev().take(3) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("```") {
            continue;
        }
        let p = t
            .trim_start_matches('#')
            .trim()
            .trim_matches(|c| c == '`' || c == '*')
            .trim_end_matches(':')
            .trim()
            // Markdown escapes `_` in names (`my\_module.py`).
            .replace("\\_", "_");
        return (!p.is_empty() && !p.contains(char::is_whitespace)).then(|| p.to_string());
    }
    None
}

/// Why a block cannot be applied to its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    #[error("its SEARCH part is empty")]
    EmptySearch,
    #[error("its SEARCH lines are not in the file")]
    NotFound,
}

/// The minimal [`Edit`] of `text` (a file's decoded text, any newline style) that the block
/// makes: its SEARCH lines found exactly, else ignoring leading whitespace and line endings;
/// the replacement written with the file's own newline and re-indented like the match.
pub fn to_edit(text: &str, block: &Block) -> Result<Edit, MatchError> {
    let search: Vec<&str> = block.search.lines().collect();
    if search.iter().all(|l| l.trim().is_empty()) {
        return Err(MatchError::EmptySearch);
    }
    match edit_for(text, &search, block) {
        // Models sometimes open SEARCH with a blank line the file does not have there.
        Err(MatchError::NotFound) if search.len() > 1 && search[0].trim().is_empty() => {
            edit_for(text, &search[1..], block)
        }
        r => r,
    }
}

fn edit_for(text: &str, search: &[&str], block: &Block) -> Result<Edit, MatchError> {
    let file = file_lines(text);
    let content = |i: usize| strip_eol(&text[file[i].clone()]);
    let n = search.len();
    let found = |eq: &dyn Fn(&str, &str) -> bool| {
        (0..(file.len() + 1).saturating_sub(n))
            .find(|&i| (0..n).all(|k| eq(content(i + k), search[k])))
    };
    let exact = found(&|a, b| a == b);
    let (at, shift) = match exact {
        Some(i) => (i, Shift::Add(String::new())),
        None => {
            // Leading whitespace may differ, but by the same shift on every line (as Aider
            // requires), so the block's structure is the file's.
            let shifted = (0..(file.len() + 1).saturating_sub(n)).find_map(|i| {
                let matched: Vec<&str> = (i..i + n).map(content).collect();
                shift_of(search, &matched).map(|sh| (i, sh))
            });
            shifted.ok_or(MatchError::NotFound)?
        }
    };
    let region = file[at].start..file[at + n - 1].end;
    let last = &text[file[at + n - 1].clone()];
    let eol = match &last[strip_eol(last).len()..] {
        "" => {
            // The match ends the file without a newline: so must the replacement.
            let first = &text[file[at].clone()];
            let e = &first[strip_eol(first).len()..];
            if e.is_empty() {
                "\n"
            } else {
                e
            }
        }
        e => e,
    };
    let mut new = String::new();
    for line in block.replace.lines() {
        new.push_str(&shift.apply(line));
        new.push_str(eol);
    }
    if last.len() == strip_eol(last).len() && !new.is_empty() {
        new.truncate(new.len() - eol.len());
    }
    Ok(minimal(text, region, &new))
}

/// The byte ranges of each line with its terminator (`\n`, `\r\n` or a lone `\r`).
fn file_lines(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(start..i + 1);
                start = i + 1;
            }
            b'\r' => {
                let end = if b.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
                out.push(start..end);
                start = end;
                i = end - 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < b.len() {
        out.push(start..b.len());
    }
    out
}

fn strip_eol(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// How the model's indentation differs from the file's, the same on every line (as Aider
/// requires): the file's lines are the model's with a prefix added, or with one removed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shift {
    Add(String),
    Remove(String),
}

impl Shift {
    /// A replacement line indented as the file is (blank lines stay as written).
    fn apply(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return line.to_string();
        }
        match self {
            Shift::Add(p) => format!("{p}{line}"),
            Shift::Remove(p) => line.strip_prefix(p.as_str()).unwrap_or(line).to_string(),
        }
    }
}

/// The uniform shift that turns the `search` lines into the `matched` file lines, if any.
fn shift_of(search: &[&str], matched: &[&str]) -> Option<Shift> {
    let (s, m) = search
        .iter()
        .zip(matched)
        .find(|(s, _)| !s.trim().is_empty())?;
    let shift = if let Some(p) = m.strip_suffix(*s) {
        Shift::Add(p.to_string())
    } else {
        Shift::Remove(s.strip_suffix(*m)?.to_string())
    };
    let leading_ws = |p: &str| p.chars().all(|c| c == ' ' || c == '\t');
    let uniform = search.iter().zip(matched).all(|(s, m)| match &shift {
        _ if s.trim().is_empty() => m.trim().is_empty(),
        Shift::Add(p) => leading_ws(p) && format!("{p}{s}") == *m,
        Shift::Remove(p) => leading_ws(p) && format!("{p}{m}") == *s,
    });
    uniform.then_some(shift)
}

/// Replaces `region` of `text` by `new`, cut down to the bytes that actually change.
fn minimal(text: &str, region: Range<usize>, new: &str) -> Edit {
    let old = &text[region.clone()];
    let mut p = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(p) && new.is_char_boundary(p)) {
        p -= 1;
    }
    let max_s = old.len().min(new.len()) - p;
    let mut s = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_s)
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(old.len() - s) && new.is_char_boundary(new.len() - s)) {
        s -= 1;
    }
    Edit::replacement(region.start + p..region.end - s, &new[p..new.len() - s])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply;

    fn block(search: &str, replace: &str) -> Block {
        Block {
            path: "m.py".into(),
            search: search.into(),
            replace: replace.into(),
        }
    }

    #[test]
    fn reads_fenced_blocks_with_their_paths() {
        let answer = "The total ignores the discount.\n\n```python\nsrc/shop.py\n<<<<<<< SEARCH\n    return price * qty\n=======\n    return price * qty * (1 - d)\n>>>>>>> REPLACE\n```\n\nsrc/b.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n";
        let p = parse(answer);
        assert_eq!(p.errors, Vec::<String>::new());
        assert_eq!(
            p.blocks,
            vec![
                Block {
                    path: "src/shop.py".into(),
                    search: "    return price * qty\n".into(),
                    replace: "    return price * qty * (1 - d)\n".into()
                },
                Block {
                    path: "src/b.py".into(),
                    search: "x = 1\n".into(),
                    replace: "x = 2\n".into()
                },
            ]
        );
    }

    #[test]
    fn unfinished_blocks_are_errors_not_edits() {
        let p = parse("m.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n");
        assert_eq!(p.blocks, vec![]);
        assert_eq!(p.errors, vec!["block 1 has no `>>>>>>> REPLACE` line"]);
        let p = parse("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n");
        assert_eq!(
            p.errors,
            vec!["block 1 names no file on the line before `<<<<<<< SEARCH`"]
        );
    }

    #[test]
    fn exact_match_gives_the_minimal_range() {
        let text = "def f(a):\n    return a + 1\n";
        let e = to_edit(text, &block("    return a + 1\n", "    return a + 2\n")).unwrap();
        assert_eq!(e, Edit::replacement(25..26, "2"));
    }

    #[test]
    fn crlf_file_keeps_crlf_and_reindents_a_dedented_search() {
        let text = "class A:\r\n    def f(self):\r\n        return 1\r\n";
        let b = block(
            "def f(self):\n    return 1\n",
            "def f(self):\n    x = 2\n    return x\n",
        );
        let e = to_edit(text, &b).unwrap();
        assert_eq!(
            apply(text, &[e]).unwrap(),
            "class A:\r\n    def f(self):\r\n        x = 2\r\n        return x\r\n"
        );
    }

    #[test]
    fn last_line_without_newline_stays_without() {
        let text = "x = 1\ny = 2";
        let e = to_edit(text, &block("y = 2\n", "y = 3\n")).unwrap();
        assert_eq!(apply(text, &[e]).unwrap(), "x = 1\ny = 3");
    }

    #[test]
    fn a_shift_that_is_not_uniform_does_not_match() {
        let text = "if a:\n    x = 1\n    y = 2\n";
        // `y = 2` shown one level deeper than `x = 1`: not the file's structure.
        let b = block("x = 1\n    y = 2\n", "x = 3\n    y = 4\n");
        assert_eq!(to_edit(text, &b), Err(MatchError::NotFound));
    }

    #[test]
    fn a_spurious_blank_first_search_line_is_dropped() {
        let text = "x = 1\ny = 2\n";
        let e = to_edit(text, &block("\ny = 2\n", "y = 3\n")).unwrap();
        assert_eq!(apply(text, &[e]).unwrap(), "x = 1\ny = 3\n");
    }

    #[test]
    fn missing_or_empty_search_is_refused() {
        assert_eq!(
            to_edit("x = 1\n", &block("x = 2\n", "x = 3\n")),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            to_edit("x = 1\n", &block("\n", "x = 3\n")),
            Err(MatchError::EmptySearch)
        );
    }
}
