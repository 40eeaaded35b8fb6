//! Byte-range edits and fixes (in the manner of Ruff's `Edit`/`Fix`).
//!
//! An [`Edit`] replaces a byte range of the **decoded text** ([`SourceFile::text`]) with new
//! content; everything outside the ranges stays byte-for-byte identical. A [`Fix`] is a titled
//! list of edits made by one rule. [`Fix::apply_to`] applies it, checks that the result still
//! parses, and re-encodes with the file's encoding and BOM.

use std::ops::Range;

use serde::Serialize;

use crate::source::{SourceError, SourceFile};
use crate::status::DiffEncoding;
use crate::syntax::{self, SyntaxError};

/// Replace `range` (text byte offsets) with `content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub range: Range<usize>,
    pub content: String,
}

/// The one span of `tops` (top-level statements, see
/// [`ParsedModule::top_level_spans`](crate::syntax::ParsedModule::top_level_spans)) that holds
/// every edit: its index, and where it lies in the edited text (the original is `old_len` long,
/// the edited `new_len`: what follows the statement moved by the difference). `None` when no
/// one statement holds them.
pub fn statement_holding(
    tops: &[Range<usize>],
    edits: &[Edit],
    new_len: usize,
    old_len: usize,
) -> Option<(usize, Range<usize>)> {
    let first = edits.iter().map(|e| e.range.start).min()?;
    let last = edits.iter().map(|e| e.range.end).max()?;
    let (k, span) = tops
        .iter()
        .enumerate()
        .find(|(_, t)| t.start <= first && last <= t.end)?;
    let end = (span.end + new_len).checked_sub(old_len)?;
    Some((k, span.start..end))
}

impl Edit {
    pub fn replacement(range: Range<usize>, content: impl Into<String>) -> Edit {
        Edit {
            range,
            content: content.into(),
        }
    }

    pub fn insertion(at: usize, content: impl Into<String>) -> Edit {
        Edit {
            range: at..at,
            content: content.into(),
        }
    }

    pub fn deletion(range: Range<usize>) -> Edit {
        Edit {
            range,
            content: String::new(),
        }
    }

    pub fn is_insertion(&self) -> bool {
        self.range.start == self.range.end
    }
}

crate::status::closed_set! {
    /// How sure a rule is that its fix is right. Ordered: `Low < Medium < High`, so candidates
    /// can be sorted; pytest decides in the end, this only orders the tries. Its words are the
    /// rule files' and the JSON's.
    Confidence {
        Low => "low",
        Medium => "medium",
        High => "high",
    }
}

/// A candidate repair: one or more non-overlapping edits of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// Human summary, e.g. "guard `user.name` against None".
    pub title: String,
    /// The rule that made it (the rules/*.toml name).
    pub rule: String,
    pub confidence: Confidence,
    pub edits: Vec<Edit>,
}

/// Why edits could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// An edit's range ends past the text or starts after it ends.
    #[error("edit range {}..{} is outside the text (length {len})", range.start, range.end)]
    OutOfBounds { range: Range<usize>, len: usize },
    /// An edit boundary falls inside a multi-byte character.
    #[error("edit boundary {offset} is inside a character")]
    NotCharBoundary { offset: usize },
    /// Two edits overlap (indices in the given list). Two insertions at the same point, or an
    /// insertion at the boundary of a replacement, do not overlap.
    #[error(
        "edits {first} ({}..{}) and {second} ({}..{}) overlap",
        first_range.start,
        first_range.end,
        second_range.start,
        second_range.end
    )]
    Overlap {
        first: usize,
        second: usize,
        first_range: Range<usize>,
        second_range: Range<usize>,
    },
}

/// Applies non-overlapping edits to `text`. Edits may come in any order; insertions at the same
/// offset keep their given order, and an insertion at the start of a replacement goes before
/// the replacement's content.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    for e in edits {
        if e.range.start > e.range.end || e.range.end > text.len() {
            return Err(EditError::OutOfBounds {
                range: e.range.clone(),
                len: text.len(),
            });
        }
        for off in [e.range.start, e.range.end] {
            if !text.is_char_boundary(off) {
                return Err(EditError::NotCharBoundary { offset: off });
            }
        }
    }
    let mut order: Vec<usize> = (0..edits.len()).collect();
    // By start; at equal starts insertions first (in given order), then the replacement.
    order.sort_by_key(|&i| (edits[i].range.start, !edits[i].is_insertion(), i));
    // Compare each edit with the one reaching furthest so far (not only its neighbour).
    let mut reach: Option<usize> = None;
    for &i in &order {
        if let Some(r) = reach {
            if edits[i].range.start < edits[r].range.end {
                let (first, second) = (r.min(i), r.max(i));
                return Err(EditError::Overlap {
                    first,
                    second,
                    first_range: edits[first].range.clone(),
                    second_range: edits[second].range.clone(),
                });
            }
        }
        if reach.is_none_or(|r| edits[i].range.end >= edits[r].range.end) {
            reach = Some(i);
        }
    }
    let extra: usize = edits.iter().map(|e| e.content.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut pos = 0;
    for i in order {
        let e = &edits[i];
        out.push_str(&text[pos..e.range.start]);
        out.push_str(&e.content);
        pos = e.range.end;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

/// Why a fix could not be applied to a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    #[error("cannot apply fix: {0}")]
    Edit(EditError),
    /// The edited text does not parse: the fix is rejected.
    #[error("fix rejected, the result does not parse: {0}")]
    Reparse(SyntaxError),
    /// The edited text cannot be written in the file's encoding.
    #[error("fix rejected: {0}")]
    Encode(SourceError),
}

impl Fix {
    pub fn new(
        title: impl Into<String>,
        rule: impl Into<String>,
        confidence: Confidence,
        edits: Vec<Edit>,
    ) -> Fix {
        Fix {
            title: title.into(),
            rule: rule.into(),
            confidence,
            edits,
        }
    }

    /// The new text, after checking that it parses.
    pub fn apply_text(&self, source: &SourceFile) -> Result<String, FixError> {
        let new_text = apply(source.text(), &self.edits).map_err(FixError::Edit)?;
        syntax::parse_text(source.path(), &new_text).map_err(FixError::Reparse)?;
        Ok(new_text)
    }

    /// The new file bytes: applied, re-parsed, re-encoded (same BOM and encoding).
    pub fn apply_to(&self, source: &SourceFile) -> Result<Vec<u8>, FixError> {
        let new_text = self.apply_text(source)?;
        source.encode(&new_text).map_err(FixError::Encode)
    }
}

/// A unified diff (`--- a/label`, `+++ b/label`, 3 lines of context); empty when the texts are
/// equal.
///
/// Lines are compared and written with their terminators: a CRLF file's lines keep their `\r`
/// before the diff's `\n`, exactly as `git diff` writes them, so `git apply` and `patch` accept
/// the diff (a stripped `\r` makes them refuse it). A lone `\r` (classic Mac) is shown as `\n`.
/// A last line without a terminator gets the usual `\ No newline at end of file` marker.
pub fn unified_diff(path_label: &str, old_text: &str, new_text: &str) -> String {
    unified_diff_bytes(path_label, old_text.as_bytes(), new_text.as_bytes()).text
}

/// [`unified_diff`] over the file's own bytes, so that `git apply` finds every context line as
/// the file holds it: a UTF-8 BOM stays on the first line, latin-1 bytes stay latin-1. The
/// result is text for the JSON report: the bytes themselves when they are UTF-8 (always, for a
/// UTF-8 file), else each byte as the character of the same value (ISO-8859-1);
/// [`diff_bytes`] turns it back into the exact bytes.
pub fn unified_diff_bytes(path_label: &str, old: &[u8], new: &[u8]) -> DiffText {
    if old == new {
        return DiffText {
            text: String::new(),
            encoding: DiffEncoding::Utf8,
        };
    }
    let old_lines = split_byte_lines(old);
    let new_lines = split_byte_lines(new);
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old_lines, &new_lines);
    let mut out: Vec<u8> = format!("--- a/{path_label}\n+++ b/{path_label}\n").into_bytes();
    for group in similar::group_diff_ops(ops, 3) {
        out.extend_from_slice(
            format!("{}\n", similar::udiff::UnifiedHunkHeader::new(&group)).as_bytes(),
        );
        for op in &group {
            for change in op.iter_changes(&old_lines, &new_lines) {
                out.push(match change.tag() {
                    similar::ChangeTag::Equal => b' ',
                    similar::ChangeTag::Delete => b'-',
                    similar::ChangeTag::Insert => b'+',
                });
                let line: &[u8] = change.value();
                let content = line
                    .strip_suffix(b"\n")
                    .or_else(|| line.strip_suffix(b"\r"));
                match content {
                    Some(c) => {
                        out.extend_from_slice(c);
                        out.push(b'\n');
                    }
                    None => {
                        out.extend_from_slice(line);
                        out.extend_from_slice(b"\n\\ No newline at end of file\n");
                    }
                }
            }
        }
    }
    match String::from_utf8(out) {
        Ok(text) => DiffText {
            text,
            encoding: DiffEncoding::Utf8,
        },
        Err(e) => DiffText {
            text: e.into_bytes().iter().map(|&b| b as char).collect(),
            encoding: DiffEncoding::Latin1,
        },
    }
}

/// The change `base` → `new` made on `target` instead: each changed run of lines of `base` is
/// found in `target` where the two agree (lines of `base` that `target` holds unchanged), and
/// replaced there. This is how one fix, made on a file that other fixes had changed already,
/// becomes a patch of the original file alone. `None` when a change touches lines that
/// `target` does not hold as `base` does (the fixes overlap).
pub fn rebase(target: &[u8], base: &[u8], new: &[u8]) -> Option<Vec<u8>> {
    use similar::{Algorithm, DiffTag};
    if target == base {
        return Some(new.to_vec());
    }
    let t = split_byte_lines(target);
    let b = split_byte_lines(base);
    let n = split_byte_lines(new);
    // Each line of `base` that `target` holds unchanged, at its index in `target`.
    let mut at: Vec<Option<usize>> = vec![None; b.len()];
    for op in similar::capture_diff_slices(Algorithm::Myers, &t, &b) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            for (i, j) in old.zip(new) {
                at[j] = Some(i);
            }
        }
    }
    // Where a change of `base` starting at line `p` goes in `target` (for an insertion, the
    // line it goes before).
    let place = |p: usize| -> Option<usize> {
        match at.get(p) {
            Some(Some(i)) => Some(*i),
            _ if p == 0 => Some(0),
            _ if p == b.len() => at[p - 1].map(|i| i + 1),
            _ => None,
        }
    };
    // (start, end) in `target` and the lines that replace them, in order.
    let mut edits: Vec<(usize, usize, &[&[u8]])> = Vec::new();
    for op in similar::capture_diff_slices(Algorithm::Myers, &b, &n) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let start = place(old.start)?;
        // Every replaced line is held by `target`, in one run.
        for (k, j) in old.clone().enumerate() {
            if at[j] != Some(start + k) {
                return None;
            }
        }
        edits.push((start, start + old.len(), &n[new]));
    }
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = Vec::with_capacity(target.len() + new.len());
    let mut pos = 0;
    for (start, end, lines) in edits {
        if start < pos {
            return None;
        }
        t[pos..start].iter().for_each(|l| out.extend_from_slice(l));
        lines.iter().for_each(|l| out.extend_from_slice(l));
        pos = end;
    }
    t[pos..].iter().for_each(|l| out.extend_from_slice(l));
    Some(out)
}

/// The exact bytes of a diff made by [`unified_diff_bytes`], given [`DiffText::encoding`].
pub fn diff_bytes(diff: &str, encoding: DiffEncoding) -> Vec<u8> {
    if encoding == DiffEncoding::Latin1 {
        diff.chars().map(|c| c as u32 as u8).collect()
    } else {
        diff.as_bytes().to_vec()
    }
}

/// A diff as text, and how that text maps back to the patch's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffText {
    pub text: String,
    /// `utf-8`: the text is the bytes; `iso-8859-1`: each character is one byte.
    pub encoding: DiffEncoding,
}

/// Lines with their terminators (`\n`, `\r\n` or `\r`), over bytes.
fn split_byte_lines(bytes: &[u8]) -> Vec<&[u8]> {
    line_ranges(bytes).into_iter().map(|r| &bytes[r]).collect()
}

/// Byte ranges of the lines, terminators included.
fn line_ranges(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => i + 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i + 2,
            b'\r' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push(start..end);
        start = end;
        i = end;
    }
    if start < bytes.len() {
        out.push(start..bytes.len());
    }
    out
}

/// An edit inserting `indent` + `text` + newline as a new line before 1-based `line`, with the
/// file's dominant newline. `line = line_count() + 1` appends after the last line (adding a
/// newline first when the file does not end with one). `None` for a line past that.
pub fn insert_line_before(
    source: &SourceFile,
    line: usize,
    indent: &str,
    text: &str,
) -> Option<Edit> {
    let nl = source.newline();
    if line == source.line_count() + 1 || (line == source.line_count() && source.text().is_empty())
    {
        let t = source.text();
        let ends_with_nl = t.ends_with('\n') || t.ends_with('\r');
        let prefix = if t.is_empty() || ends_with_nl { "" } else { nl };
        return Some(Edit::insertion(
            t.len(),
            format!("{prefix}{indent}{text}{nl}"),
        ));
    }
    let at = source.line_start(line)?;
    Some(Edit::insertion(at, format!("{indent}{text}{nl}")))
}

/// An edit inserting a new line after 1-based `line` (see [`insert_line_before`]).
pub fn insert_line_after(
    source: &SourceFile,
    line: usize,
    indent: &str,
    text: &str,
) -> Option<Edit> {
    if line == 0 || line > source.line_count() {
        return None;
    }
    insert_line_before(source, line + 1, indent, text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fix_made_after_another_is_rebased_onto_the_original_alone() {
        let original = b"a\nb\nc\nd\ne\nf\n";
        // Another fix changed `b` first; this one changed `e` on top of it.
        let base = b"a\nB\nc\nd\ne\nf\n";
        let new = b"a\nB\nc\nd\nE\nE2\nf\n";
        assert_eq!(
            super::rebase(original, base, new).as_deref(),
            Some(&b"a\nb\nc\nd\nE\nE2\nf\n"[..])
        );
        // An insertion at the end, and a deletion.
        assert_eq!(
            super::rebase(original, base, b"a\nB\nc\nd\ne\nf\ng\n").as_deref(),
            Some(&b"a\nb\nc\nd\ne\nf\ng\n"[..])
        );
        assert_eq!(
            super::rebase(original, base, b"a\nB\nd\ne\nf\n").as_deref(),
            Some(&b"a\nb\nd\ne\nf\n"[..])
        );
        // This fix changes the line the other one changed: it cannot stand alone.
        assert_eq!(super::rebase(original, base, b"a\nX\nc\nd\ne\nf\n"), None);
        // On the original itself: the change as it is.
        assert_eq!(
            super::rebase(original, original, new).as_deref(),
            Some(&new[..])
        );
    }

    use super::*;

    #[test]
    fn apply_orders_and_checks() {
        let t = "abcdef";
        let edits = [
            Edit::replacement(4..6, "XY"),
            Edit::insertion(1, "1"),
            Edit::insertion(1, "2"),
            Edit::deletion(2..3),
        ];
        assert_eq!(apply(t, &edits).unwrap(), "a12bdXY");
        assert_eq!(
            apply(
                t,
                &[Edit::replacement(1..3, "x"), Edit::replacement(2..4, "y")]
            ),
            Err(EditError::Overlap {
                first: 0,
                second: 1,
                first_range: 1..3,
                second_range: 2..4
            })
        );
        assert_eq!(
            apply(t, &[Edit::deletion(5..9)]),
            Err(EditError::OutOfBounds {
                range: 5..9,
                len: 6
            })
        );
        assert_eq!(
            apply("é", &[Edit::insertion(1, "x")]),
            Err(EditError::NotCharBoundary { offset: 1 })
        );
        // Insertion at a replacement's start goes first; at its end, after.
        assert_eq!(
            apply(
                t,
                &[
                    Edit::replacement(2..4, "R"),
                    Edit::insertion(2, "<"),
                    Edit::insertion(4, ">")
                ]
            )
            .unwrap(),
            "ab<R>ef"
        );
    }

    #[test]
    fn split_lines_keeps_terminators() {
        assert_eq!(
            split_byte_lines(b"a\r\nb\rc\nd"),
            vec![&b"a\r\n"[..], b"b\r", b"c\n", b"d"]
        );
        assert_eq!(split_byte_lines(b""), Vec::<&[u8]>::new());
    }
}
