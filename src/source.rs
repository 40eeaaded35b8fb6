//! Exact source bytes and the facts about them that edits must preserve.
//!
//! A [`SourceFile`] keeps the original bytes untouched next to the decoded text. All offsets in
//! this crate (AST ranges, [`crate::edit::Edit`] ranges, line starts) are **byte offsets into the
//! decoded text** ([`SourceFile::text`]), which is UTF-8 in memory and never includes the BOM.
//! For a UTF-8 file without BOM they equal offsets into the file; for a file with a BOM they are
//! 3 less; for a latin-1 file they differ after the first non-ASCII character (é is 1 byte on
//! disk, 2 in the text). Never index the original bytes with a text offset: edit the text and
//! call [`SourceFile::encode`].
//!
//! Lines follow Python's tokenizer: `\n`, `\r\n` and a lone `\r` each end a line. Line numbers
//! are 1-based; columns are 0-based byte offsets within the line unless a name says `char`.

use std::path::{Path, PathBuf};

/// The UTF-8 byte order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Encodings we decode and re-encode exactly. Anything else is refused rather than guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// The default (PEP 3120), also chosen by `utf-8`/`utf8`/`utf-8-sig` cookies.
    Utf8,
    /// `latin-1` / `iso-8859-1` and their aliases: every byte is the code point of the same value.
    Latin1,
    /// `ascii` / `us-ascii`: bytes 0..=127 only.
    Ascii,
}

impl Encoding {
    /// The canonical name, as Python's codec registry spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Latin1 => "iso-8859-1",
            Encoding::Ascii => "ascii",
        }
    }
}

/// One kind of line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Newline {
    Lf,
    CrLf,
    Cr,
}

impl Newline {
    pub fn as_str(self) -> &'static str {
        match self {
            Newline::Lf => "\n",
            Newline::CrLf => "\r\n",
            Newline::Cr => "\r",
        }
    }
}

/// How the file ends its lines. A file without any newline counts as [`NewlineStyle::Lf`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NewlineStyle {
    Lf,
    CrLf,
    Cr,
    /// More than one kind; `dominant` is the most frequent (ties: LF, then CRLF, then CR) and is
    /// what inserted lines use.
    Mixed {
        dominant: Newline,
    },
}

impl NewlineStyle {
    /// The terminator to use for lines we insert.
    pub fn dominant(self) -> Newline {
        match self {
            NewlineStyle::Lf => Newline::Lf,
            NewlineStyle::CrLf => Newline::CrLf,
            NewlineStyle::Cr => Newline::Cr,
            NewlineStyle::Mixed { dominant } => dominant,
        }
    }
}

/// Why a source file could not be read, decoded or encoded. Displays as one line naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// Reading the file failed.
    #[error("cannot read {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    /// The bytes are not valid in the file's encoding. `offset` is a byte offset in the file.
    #[error(
        "cannot decode {}: invalid {} at byte {offset} (line {line})",
        path.display(),
        encoding.name()
    )]
    Undecodable {
        path: PathBuf,
        encoding: Encoding,
        offset: usize,
        line: usize,
    },
    /// A PEP 263 cookie names an encoding we do not implement exactly.
    #[error(
        "cannot decode {}: unsupported encoding {name:?} in coding cookie on line {line} \
         (supported: utf-8, latin-1/iso-8859-1, ascii)",
        path.display()
    )]
    UnsupportedEncoding {
        path: PathBuf,
        name: String,
        line: usize,
    },
    /// A UTF-8 BOM together with a cookie naming another encoding (CPython refuses this too).
    #[error(
        "cannot decode {}: UTF-8 byte order mark with a coding cookie for {name:?}",
        path.display()
    )]
    BomConflict { path: PathBuf, name: String },
    /// New text has a character the file's encoding cannot represent. `offset` is a byte offset
    /// in the new text.
    #[error(
        "cannot encode {}: {ch:?} (U+{:04X}) at line {line} (text byte {offset}) is not \
         representable in {}",
        path.display(),
        *ch as u32,
        encoding.name()
    )]
    Unencodable {
        path: PathBuf,
        encoding: Encoding,
        ch: char,
        offset: usize,
        line: usize,
    },
}

/// A Python source file: exact original bytes plus decoded text and layout facts.
#[derive(Debug, Clone)]
pub struct SourceFile {
    path: PathBuf,
    bytes: Vec<u8>,
    text: String,
    encoding: Encoding,
    has_bom: bool,
    newline_style: NewlineStyle,
    indent_unit: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Reads and decodes a file.
    pub fn read(path: impl AsRef<Path>) -> Result<SourceFile, SourceError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| SourceError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        SourceFile::from_bytes(path, bytes)
    }

    /// Decodes bytes that came from `path` (the path is only used in messages).
    pub fn from_bytes(path: impl AsRef<Path>, bytes: Vec<u8>) -> Result<SourceFile, SourceError> {
        let path = path.as_ref().to_path_buf();
        let has_bom = bytes.starts_with(UTF8_BOM);
        let body = if has_bom { &bytes[3..] } else { &bytes[..] };
        let encoding = match find_cookie(body) {
            None => Encoding::Utf8,
            Some((name, line)) => match normalize_encoding(&name) {
                Some(enc) => {
                    if has_bom && enc != Encoding::Utf8 {
                        return Err(SourceError::BomConflict { path, name });
                    }
                    enc
                }
                None => return Err(SourceError::UnsupportedEncoding { path, name, line }),
            },
        };
        let skip = if has_bom { 3 } else { 0 };
        let text = decode(body, encoding).map_err(|off| SourceError::Undecodable {
            path: path.clone(),
            encoding,
            offset: off + skip,
            line: 1 + count_newlines(&body[..off]),
        })?;
        let line_starts = compute_line_starts(&text);
        let newline_style = detect_newlines(&text);
        let indent_unit = detect_indent_unit(&text, &line_starts);
        Ok(SourceFile {
            path,
            bytes,
            text,
            encoding,
            has_bom,
            newline_style,
            indent_unit,
            line_starts,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The exact bytes the file was read from.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The decoded text (BOM excluded). All offsets in this crate index this string.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    pub fn has_bom(&self) -> bool {
        self.has_bom
    }

    pub fn newline_style(&self) -> NewlineStyle {
        self.newline_style
    }

    /// The terminator for inserted lines (the dominant one).
    pub fn newline(&self) -> &'static str {
        self.newline_style.dominant().as_str()
    }

    /// One level of indentation as the file writes it (`"    "`, `"  "`, `"\t"`...). Files with
    /// no indented block get four spaces.
    pub fn indent_unit(&self) -> &str {
        &self.indent_unit
    }

    /// Number of lines. A final newline does not start a new line; an empty file has one line.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where 1-based `line` starts, or `None` past the end.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        line_start_in(&self.line_starts, line)
    }

    /// Byte offset where `line`'s content ends (before its newline).
    pub fn line_end(&self, line: usize) -> Option<usize> {
        line_end_in(&self.text, &self.line_starts, line)
    }

    /// The content of `line` without its newline.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let start = self.line_start(line)?;
        let end = self.line_end(line)?;
        self.text.get(start..end)
    }

    /// The 1-based line and 0-based byte column of a text offset (clamped to the text length).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col_in(&self.line_starts, offset.min(self.text.len()))
    }

    /// Like [`line_col`](Self::line_col) but the column counts characters, as editors and
    /// CPython's caret lines do.
    pub fn line_char_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let (line, _) = line_col_in(&self.line_starts, offset);
        let start = self.line_starts[line - 1];
        (line, self.text[start..offset].chars().count())
    }

    /// The text offset of a 1-based line and 0-based character column. A column past the end of
    /// the line gives the line's end.
    pub fn offset_of_char_col(&self, line: usize, char_col: usize) -> Option<usize> {
        let start = self.line_start(line)?;
        let end = self.line_end(line)?;
        let line_text = &self.text[start..end];
        Some(
            line_text
                .char_indices()
                .nth(char_col)
                .map_or(end, |(i, _)| start + i),
        )
    }

    /// The leading spaces and tabs of `line`.
    pub fn indentation_of_line(&self, line: usize) -> Option<&str> {
        let text = self.line_text(line)?;
        let n = text.len() - text.trim_start_matches([' ', '\t', '\x0c']).len();
        Some(&text[..n])
    }

    /// Back to bytes with the file's BOM and encoding. For the unchanged text this returns
    /// exactly [`bytes`](Self::bytes).
    pub fn encode(&self, new_text: &str) -> Result<Vec<u8>, SourceError> {
        if new_text == self.text {
            return Ok(self.bytes.clone());
        }
        let mut out = Vec::with_capacity(new_text.len() + 3);
        if self.has_bom {
            out.extend_from_slice(UTF8_BOM);
        }
        let limit = match self.encoding {
            Encoding::Utf8 => {
                out.extend_from_slice(new_text.as_bytes());
                return Ok(out);
            }
            Encoding::Latin1 => 0xFF,
            Encoding::Ascii => 0x7F,
        };
        for (i, ch) in new_text.char_indices() {
            let cp = ch as u32;
            if cp > limit {
                return Err(SourceError::Unencodable {
                    path: self.path.clone(),
                    encoding: self.encoding,
                    ch,
                    offset: i,
                    line: 1 + count_newlines(&new_text.as_bytes()[..i]),
                });
            }
            // cp <= 0xFF here, so the cast is exact.
            out.push(cp as u8);
        }
        Ok(out)
    }

    /// The line starts (byte offsets into the text); index 0 is line 1.
    pub fn line_starts(&self) -> &[usize] {
        &self.line_starts
    }
}

/// Largest char boundary `<= offset`.
pub(crate) fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

pub(crate) fn line_start_in(line_starts: &[usize], line: usize) -> Option<usize> {
    line.checked_sub(1)
        .and_then(|i| line_starts.get(i))
        .copied()
}

pub(crate) fn line_end_in(text: &str, line_starts: &[usize], line: usize) -> Option<usize> {
    let start = line_start_in(line_starts, line)?;
    let next = line_starts.get(line).copied().unwrap_or(text.len());
    let bytes = text.as_bytes();
    let mut end = next;
    // Strip exactly one terminator: "\r\n", "\n" or "\r".
    if end > start && bytes[end - 1] == b'\n' {
        end -= 1;
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
    } else if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    Some(end)
}

pub(crate) fn line_col_in(line_starts: &[usize], offset: usize) -> (usize, usize) {
    let idx = match line_starts.binary_search(&offset) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    };
    (idx + 1, offset - line_starts.get(idx).copied().unwrap_or(0))
}

/// Offsets of line starts. A newline at the very end does not open a new line.
pub(crate) fn compute_line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => i += 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\r' => i += 1,
            _ => {
                i += 1;
                continue;
            }
        }
        if i < bytes.len() {
            starts.push(i);
        }
    }
    starts
}

fn count_newlines(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => n += 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                n += 1;
                i += 1;
            }
            b'\r' => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

fn detect_newlines(text: &str) -> NewlineStyle {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => lf += 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                crlf += 1;
                i += 1;
            }
            b'\r' => cr += 1,
            _ => {}
        }
        i += 1;
    }
    let kinds = (lf > 0) as u8 + (crlf > 0) as u8 + (cr > 0) as u8;
    if kinds <= 1 {
        return if crlf > 0 {
            NewlineStyle::CrLf
        } else if cr > 0 {
            NewlineStyle::Cr
        } else {
            NewlineStyle::Lf
        };
    }
    let dominant = if lf >= crlf && lf >= cr {
        Newline::Lf
    } else if crlf >= cr {
        Newline::CrLf
    } else {
        Newline::Cr
    };
    NewlineStyle::Mixed { dominant }
}

/// The most common indentation step after a line ending in `:` (a block opener); falls back to
/// any indentation step, then to four spaces.
fn detect_indent_unit(text: &str, line_starts: &[usize]) -> String {
    let mut after_colon: Vec<(String, usize)> = Vec::new();
    let mut any: Vec<(String, usize)> = Vec::new();
    let mut prev: Option<(&str, bool)> = None;
    for line in 1..=line_starts.len() {
        let (Some(start), Some(end)) = (
            line_start_in(line_starts, line),
            line_end_in(text, line_starts, line),
        ) else {
            continue;
        };
        let content = &text[start..end];
        let trimmed = content.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = &content[..content.len() - trimmed.len()];
        if let Some((prev_indent, opener)) = prev {
            if indent.len() > prev_indent.len() && indent.starts_with(prev_indent) {
                let step = &indent[prev_indent.len()..];
                let bucket = if opener { &mut after_colon } else { &mut any };
                match bucket.iter_mut().find(|(s, _)| s == step) {
                    Some((_, n)) => *n += 1,
                    None => bucket.push((step.to_string(), 1)),
                }
            }
        }
        // A trailing comment may follow the colon; a `#` inside a string would fool this, which
        // only costs a less certain guess.
        let code = trimmed.split('#').next().unwrap_or("").trim_end();
        prev = Some((indent, code.ends_with(':')));
    }
    let pick = |v: &[(String, usize)]| {
        // Highest count; on ties the first seen.
        v.iter()
            .fold(None::<&(String, usize)>, |best, c| match best {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            })
            .map(|(s, _)| s.clone())
    };
    pick(&after_colon)
        .or_else(|| pick(&any))
        .unwrap_or_else(|| "    ".to_string())
}

/// The PEP 263 cookie of line 1, or of line 2 when line 1 is blank or a comment.
fn find_cookie(body: &[u8]) -> Option<(String, usize)> {
    let mut lines = body.split_inclusive(|&b| b == b'\n' || b == b'\r');
    let first = lines.next()?;
    if let Some(name) = cookie_in_line(first) {
        return Some((name, 1));
    }
    let first_trim = trim_ascii_ws(first);
    if !(first_trim.is_empty() || first_trim.starts_with(b"#")) {
        return None;
    }
    let mut second = lines.next()?;
    // A "\r\n" pair was split into "...\r" and "\n..." by split_inclusive.
    if first.ends_with(b"\r") && second == b"\n" {
        second = lines.next()?;
    }
    cookie_in_line(second).map(|name| (name, 2))
}

fn trim_ascii_ws(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b" \t\x0c\r\n".contains(b))
        .unwrap_or(s.len());
    &s[start..]
}

/// Matches `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` like CPython.
fn cookie_in_line(line: &[u8]) -> Option<String> {
    let rest = trim_leading(line, b" \t\x0c");
    let rest = rest.strip_prefix(b"#")?;
    let mut search = rest;
    while let Some(pos) = find_sub(search, b"coding") {
        let after = &search[pos + 6..];
        if let Some(&c) = after.first() {
            if c == b':' || c == b'=' {
                let value = trim_leading(&after[1..], b" \t");
                let len = value
                    .iter()
                    .position(|&b| {
                        !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
                    })
                    .unwrap_or(value.len());
                if len > 0 {
                    return Some(String::from_utf8_lossy(&value[..len]).into_owned());
                }
            }
        }
        search = &search[pos + 6..];
    }
    None
}

fn trim_leading<'a>(s: &'a [u8], set: &[u8]) -> &'a [u8] {
    let start = s.iter().position(|b| !set.contains(b)).unwrap_or(s.len());
    &s[start..]
}

fn find_sub(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Maps a cookie name to an encoding we implement exactly (aliases as in Python's codecs and
/// CPython's `get_normal_name`, which also accepts suffixes such as `utf-8-unix`).
fn normalize_encoding(name: &str) -> Option<Encoding> {
    let lower = name.to_ascii_lowercase().replace('_', "-");
    for (prefix, enc) in [
        ("utf-8-", Encoding::Utf8),
        ("latin-1-", Encoding::Latin1),
        ("iso-8859-1-", Encoding::Latin1),
        ("iso-latin-1-", Encoding::Latin1),
    ] {
        if lower.starts_with(prefix) {
            return Some(enc);
        }
    }
    let squashed: String = lower.chars().filter(|c| *c != '-' && *c != ' ').collect();
    match squashed.as_str() {
        "utf8" | "u8" | "utf" | "utf8sig" | "cp65001" => Some(Encoding::Utf8),
        "latin1" | "latin" | "l1" | "iso88591" | "8859" | "cp819" | "ibm819" | "isoir100"
        | "isolatin1" | "csisolatin1" => Some(Encoding::Latin1),
        "ascii" | "usascii" | "646" | "us" | "ansix3.41968" | "iso646us" => Some(Encoding::Ascii),
        _ => None,
    }
}

/// Decodes, or returns the byte offset of the first undecodable byte.
fn decode(body: &[u8], encoding: Encoding) -> Result<String, usize> {
    match encoding {
        Encoding::Utf8 => match std::str::from_utf8(body) {
            Ok(s) => Ok(s.to_string()),
            Err(e) => Err(e.valid_up_to()),
        },
        Encoding::Latin1 => Ok(body.iter().map(|&b| b as char).collect()),
        Encoding::Ascii => match body.iter().position(|&b| b >= 0x80) {
            Some(i) => Err(i),
            None => Ok(body.iter().map(|&b| b as char).collect()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sf(bytes: &[u8]) -> SourceFile {
        SourceFile::from_bytes("t.py", bytes.to_vec()).unwrap()
    }

    #[test]
    fn line_index_mixed_terminators() {
        let f = sf(b"a\r\nbb\rc\n\nd");
        assert_eq!(f.line_starts(), &[0, 3, 6, 8, 9]);
        assert_eq!(f.line_text(1), Some("a"));
        assert_eq!(f.line_text(2), Some("bb"));
        assert_eq!(f.line_text(3), Some("c"));
        assert_eq!(f.line_text(4), Some(""));
        assert_eq!(f.line_text(5), Some("d"));
        assert_eq!(f.line_text(6), None);
        assert_eq!(f.line_text(0), None);
        assert_eq!(f.line_col(4), (2, 1));
        assert_eq!(f.line_col(999), (5, 1));
        assert_eq!(
            f.newline_style(),
            NewlineStyle::Mixed {
                dominant: Newline::Lf
            }
        );
    }

    #[test]
    fn trailing_newline_does_not_add_a_line() {
        assert_eq!(sf(b"a\n").line_count(), 1);
        assert_eq!(sf(b"").line_count(), 1);
        assert_eq!(sf(b"a\nb").line_count(), 2);
    }

    #[test]
    fn cookies() {
        assert_eq!(normalize_encoding("UTF-8"), Some(Encoding::Utf8));
        assert_eq!(normalize_encoding("latin_1"), Some(Encoding::Latin1));
        assert_eq!(
            normalize_encoding("iso-8859-1-unix"),
            Some(Encoding::Latin1)
        );
        assert_eq!(normalize_encoding("utf-8-sig"), Some(Encoding::Utf8));
        assert_eq!(normalize_encoding("cp1252"), None);
        assert_eq!(normalize_encoding("iso-8859-15"), None);
        assert_eq!(
            find_cookie(b"#!/usr/bin/env python\r\n# -*- coding: latin-1 -*-\r\n"),
            Some(("latin-1".to_string(), 2))
        );
        assert_eq!(find_cookie(b"x = 1\n# coding: latin-1\n"), None);
        assert_eq!(
            find_cookie(b"# vim: set fileencoding=ascii :\n"),
            Some(("ascii".into(), 1))
        );
    }

    #[test]
    fn char_columns() {
        let f = sf("é = 'ü'\n".as_bytes());
        assert_eq!(f.line_char_col(2), (1, 1));
        assert_eq!(f.offset_of_char_col(1, 5), Some(6));
        assert_eq!(f.offset_of_char_col(1, 50), Some(9));
    }
}
