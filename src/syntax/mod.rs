//! Parsing Python with rustpython-parser 0.4 and locating statements and expressions.
//!
//! Offsets: every range here is a byte range into the **decoded text** of the
//! [`SourceFile`] ([`SourceFile::text`]), which is what the parser sees. For a latin-1 file that
//! text is UTF-8 in memory, so ranges are not file offsets: edit the text and let
//! [`SourceFile::encode`] re-encode.
//!
//! Newer syntax: rustpython-parser 0.4 predates PEP 701 f-strings (Python 3.12: nested
//! same-type quotes, backslashes, comments or line breaks in replacement fields) and PEP 696
//! type-parameter defaults (Python 3.13). When the raw text fails to parse, [`parse`] masks such
//! constructs with placeholders of exactly the same byte length and the same line breaks, then
//! parses again. Every offset and line number stays true; [`ParsedModule::masks`] lists what was
//! masked, and nothing inside a masked region appears in the AST.
//!
//! Depth: parsing runs on a thread with a [`PARSE_STACK_SIZE`] stack; input nested deeper than
//! CPython allows ([`MAX_BRACKET_DEPTH`] brackets) or whose AST is deeper than
//! [`MAX_AST_DEPTH`] is refused with a [`SyntaxError`] of kind [`SyntaxErrorKind::TooDeep`], so
//! every [`ParsedModule`] is shallow enough to walk and drop on an ordinary thread.

mod locate;
pub mod mangle;
pub mod queries;
pub mod scan;
pub mod walk;

pub use locate::{
    cmp_op_text, locate, locate_all, locate_span, ClassInfo, Clause, FunctionInfo, Located,
    StmtKind, SubExpr, SubExprKind,
};

use std::ops::Range;
use std::path::{Path, PathBuf};

use rustpython_parser::{ast, Mode};

use crate::source::{compute_line_starts, line_col_in, SourceFile};

/// CPython's tokenizer refuses more than 200 nested brackets ("too many nested parentheses").
pub const MAX_BRACKET_DEPTH: usize = 200;
/// Deepest AST accepted. Long operator chains (`a + b + ...`) and unary chains (`- - - x`) nest
/// one level per operator; CPython's compiler gives up in the low thousands.
pub const MAX_AST_DEPTH: usize = 1000;
/// Stack of the parsing thread: rustpython-parser and the AST's `Drop` recurse per level.
pub const PARSE_STACK_SIZE: usize = 256 << 20;

/// What kind of problem a [`SyntaxError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxErrorKind {
    /// The parser rejected the code.
    Invalid,
    /// Nesting beyond [`MAX_BRACKET_DEPTH`] or [`MAX_AST_DEPTH`].
    TooDeep,
    /// The parser thread could not start or panicked (a bug in the parser, not in the code).
    Internal,
}

/// A parse failure with its position. Displays as `path:line:col: message` on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct SyntaxError {
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in characters (as editors count).
    pub column: usize,
    /// Byte offset in the text.
    pub offset: usize,
    pub message: String,
    pub kind: SyntaxErrorKind,
}

/// What a mask replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskKind {
    /// A PEP 701 f-string, replaced by a string (or parenthesized strings) of the same length.
    FString,
    /// A PEP 696 type-parameter default (`= int`), replaced by spaces.
    TypeParamDefault,
}

/// A region of the text the parser saw as a placeholder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mask {
    pub kind: MaskKind,
    pub range: Range<usize>,
}

/// A parsed module: the AST plus the text and line index its ranges refer to.
#[derive(Debug)]
pub struct ParsedModule {
    path: PathBuf,
    text: String,
    line_starts: Vec<usize>,
    body: Vec<ast::Stmt>,
    masks: Vec<Mask>,
}

impl ParsedModule {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text the ranges index (the original decoded text, not the masked one).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The module's statements. Ranges are byte offsets into [`text`](Self::text).
    pub fn body(&self) -> &[ast::Stmt] {
        &self.body
    }

    /// The text spans of the module's top-level statements, decorators included.
    pub fn top_level_spans(&self) -> Vec<Range<usize>> {
        use rustpython_parser::ast::Ranged;
        self.body
            .iter()
            .map(|s| {
                let decorator = match s {
                    ast::Stmt::FunctionDef(f) => f.decorator_list.first(),
                    ast::Stmt::AsyncFunctionDef(f) => f.decorator_list.first(),
                    ast::Stmt::ClassDef(c) => c.decorator_list.first(),
                    _ => None,
                };
                // A decorator's range starts after its `@`: from the start of its line.
                let start = decorator.map_or(s.range().start().to_usize(), |d| {
                    let before = self.text.get(..d.range().start().to_usize()).unwrap_or("");
                    before.rfind('\n').map_or(0, |n| n + 1)
                });
                start..s.range().end().to_usize()
            })
            .collect()
    }

    /// Regions parsed as placeholders (empty when the raw text parsed).
    pub fn masks(&self) -> &[Mask] {
        &self.masks
    }

    pub fn line_starts(&self) -> &[usize] {
        &self.line_starts
    }

    /// 1-based line and 0-based byte column of an offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col_in(&self.line_starts, offset.min(self.text.len()))
    }

    /// 1-based line of an offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_col(offset).0
    }

    /// The text range of a (1-based line, 0-based column span) pair, columns counted in
    /// `unit`. Columns past the end of the line are clamped to it.
    pub fn span_to_range(
        &self,
        line: usize,
        cols: Range<usize>,
        unit: ColumnUnit,
    ) -> Option<Range<usize>> {
        let start = crate::source::line_start_in(&self.line_starts, line)?;
        let end = crate::source::line_end_in(&self.text, &self.line_starts, line)?;
        let line_text = &self.text[start..end];
        let to_off = |c: usize| match unit {
            ColumnUnit::Bytes => start + crate::source::floor_char_boundary(line_text, c),
            ColumnUnit::Chars => line_text
                .char_indices()
                .nth(c)
                .map_or(end, |(i, _)| start + i),
        };
        let (a, b) = (to_off(cols.start), to_off(cols.end.max(cols.start)));
        Some(a..b)
    }
}

/// How a column number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    /// UTF-8 bytes of the decoded text (CPython's `co_positions`).
    Bytes,
    /// Characters (CPython's caret lines, editors).
    Chars,
}

/// Parses a source file. See the module docs for masking and depth limits.
/// A node's byte range (rustpython's `TextRange`) as the `Range` edits use.
pub fn rng(r: rustpython_parser::text_size::TextRange) -> Range<usize> {
    r.start().to_usize()..r.end().to_usize()
}

pub fn parse(source: &SourceFile) -> Result<ParsedModule, SyntaxError> {
    parse_text(source.path(), source.text())
}

/// Parses text directly (`path` is only used in messages).
pub fn parse_text(path: &Path, text: &str) -> Result<ParsedModule, SyntaxError> {
    let line_starts = compute_line_starts(text);
    let err = |offset: usize, message: String, kind: SyntaxErrorKind| {
        let offset = crate::source::floor_char_boundary(text, offset);
        let (line, _) = line_col_in(&line_starts, offset);
        let ls = line_starts[line - 1];
        SyntaxError {
            path: path.to_path_buf(),
            line,
            column: text[ls..offset].chars().count() + 1,
            offset,
            message,
            kind,
        }
    };
    let owned = text.to_string();
    let handle = std::thread::Builder::new()
        .name("selfdebug-parse".into())
        .stack_size(PARSE_STACK_SIZE)
        .spawn(move || parse_on_big_stack(&owned));
    let outcome = match handle {
        Err(e) => {
            return Err(err(
                0,
                format!("cannot start the parser thread: {e}"),
                SyntaxErrorKind::Internal,
            ))
        }
        Ok(h) => match h.join() {
            Ok(o) => o,
            Err(_) => {
                return Err(err(
                    0,
                    "the Python parser panicked on this file".into(),
                    SyntaxErrorKind::Internal,
                ))
            }
        },
    };
    match outcome {
        Ok((body, masks)) => Ok(ParsedModule {
            path: path.to_path_buf(),
            text: text.to_string(),
            line_starts,
            body,
            masks,
        }),
        Err((offset, message, kind)) => Err(err(offset, message, kind)),
    }
}

type Outcome = Result<(Vec<ast::Stmt>, Vec<Mask>), (usize, String, SyntaxErrorKind)>;

fn parse_on_big_stack(text: &str) -> Outcome {
    let scan = scan::scan(text);
    if let Some(at) = scan.over_limit_at {
        return Err((
            at,
            format!(
                "too many nested brackets ({} levels; the limit is {})",
                scan.max_depth, MAX_BRACKET_DEPTH
            ),
            SyntaxErrorKind::TooDeep,
        ));
    }
    let (body, masks) = match parse_suite(text) {
        Ok(body) => (body, Vec::new()),
        Err(first) => {
            let (masked, masks) = mask_newer_syntax(text, &scan);
            if masks.is_empty() {
                return Err(first);
            }
            // Report the error of the masked text: it is the one that newer syntax cannot
            // explain, and it has the same offsets.
            (parse_suite(&masked)?, masks)
        }
    };
    let (depth, at) = walk::max_depth(&body);
    if depth > MAX_AST_DEPTH {
        // Dropping a very deep tree recurses once per level; a pathological file could exhaust
        // even this stack, so the tree is leaked instead. Only such inputs pay this.
        std::mem::forget(body);
        return Err((
            at,
            format!("expression nested too deeply ({depth} levels; the limit is {MAX_AST_DEPTH})"),
            SyntaxErrorKind::TooDeep,
        ));
    }
    Ok((body, masks))
}

fn parse_suite(text: &str) -> Result<Vec<ast::Stmt>, (usize, String, SyntaxErrorKind)> {
    match rustpython_parser::parse(text, Mode::Module, "<selfdebug>") {
        Ok(ast::Mod::Module(m)) => Ok(m.body),
        Ok(_) => Err((0, "not a module".into(), SyntaxErrorKind::Internal)),
        Err(e) => Err((
            e.offset.to_usize(),
            e.error.to_string(),
            SyntaxErrorKind::Invalid,
        )),
    }
}

/// Masks what rustpython-parser 0.4 cannot read: f-strings that do not parse on their own, and
/// every type-parameter default. Returns the masked text and the masks in offset order.
pub fn mask_newer_syntax(text: &str, scan: &scan::Scan) -> (String, Vec<Mask>) {
    let mut bytes = text.as_bytes().to_vec();
    let mut masks = Vec::new();
    for tok in &scan.tokens {
        if tok.kind != (scan::TokKind::String { fstring: true }) {
            continue;
        }
        let literal = &text[tok.start..tok.end];
        if rustpython_parser::parse(literal, Mode::Expression, "<f-string>").is_ok() {
            continue;
        }
        bytes[tok.start..tok.end].copy_from_slice(&string_placeholder(literal.as_bytes()));
        masks.push(Mask {
            kind: MaskKind::FString,
            range: tok.start..tok.end,
        });
    }
    for range in type_param_defaults(text, &scan.tokens) {
        for b in &mut bytes[range.clone()] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
        masks.push(Mask {
            kind: MaskKind::TypeParamDefault,
            range,
        });
    }
    masks.sort_by_key(|m| m.range.start);
    // Every replaced byte is ASCII and whole characters were replaced, so this cannot fail;
    // fall back to the original text rather than panic.
    let masked = String::from_utf8(bytes).unwrap_or_else(|_| text.to_string());
    (masked, masks)
}

/// An ASCII expression of exactly `orig.len()` bytes with `\r`/`\n` at the same positions:
/// `"xxx"` on one line, `"""x\nx"""` across lines, or `("x"\n"x")` when a line break sits too
/// close to either end for triple quotes.
fn string_placeholder(orig: &[u8]) -> Vec<u8> {
    let n = orig.len();
    let is_nl = |b: u8| b == b'\n' || b == b'\r';
    let mut out: Vec<u8> = orig
        .iter()
        .map(|&b| if is_nl(b) { b } else { b'x' })
        .collect();
    if n < 2 {
        return out;
    }
    let nl_positions: Vec<usize> = (0..n).filter(|&i| is_nl(orig[i])).collect();
    if nl_positions.is_empty() {
        out[0] = b'"';
        out[n - 1] = b'"';
        return out;
    }
    let (first, last) = (nl_positions[0], nl_positions[nl_positions.len() - 1]);
    if n >= 6 && first >= 3 && last + 3 < n {
        out[..3].copy_from_slice(b"\"\"\"");
        out[n - 3..].copy_from_slice(b"\"\"\"");
        return out;
    }
    // Parenthesized implicit concatenation: each run between line breaks becomes `"x.."` (two
    // bytes or more) or spaces; `( \n )` alone is a valid empty tuple.
    out[0] = b'(';
    out[n - 1] = b')';
    let mut i = 1;
    while i < n - 1 {
        if is_nl(out[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < n - 1 && !is_nl(out[j]) {
            j += 1;
        }
        if j - i >= 2 {
            out[i] = b'"';
            out[j - 1] = b'"';
        } else {
            out[i..j].fill(b' ');
        }
        i = j;
    }
    out
}

/// Ranges of `= default` in type-parameter lists of `def`, `class` and `type` statements, from
/// the `=` up to the next `,` or the closing `]` of the list.
fn type_param_defaults(text: &str, tokens: &[scan::Tok]) -> Vec<Range<usize>> {
    use scan::TokKind;
    let t = |i: usize| tokens.get(i).map(|tok| &text[tok.start..tok.end]);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let is_head = tokens[i].kind == TokKind::Name
            && matches!(t(i), Some("def" | "class" | "type"))
            && tokens.get(i + 1).is_some_and(|x| x.kind == TokKind::Name)
            && t(i + 2) == Some("[");
        if !is_head {
            i += 1;
            continue;
        }
        let mut depth = 0usize;
        let mut j = i + 2;
        let mut open_default: Option<usize> = None;
        while j < tokens.len() {
            let tok = tokens[j];
            let s = t(j).unwrap_or("");
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if let Some(start) = open_default.take() {
                            out.push(start..tok.start);
                        }
                        break;
                    }
                }
                "," if depth == 1 => {
                    if let Some(start) = open_default.take() {
                        out.push(start..tok.start);
                    }
                }
                "=" if depth == 1 && open_default.is_none() => open_default = Some(tok.start),
                _ => {}
            }
            j += 1;
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_keep_length_and_newlines() {
        for orig in [
            "f\"{x}\"",
            "f'{\n}'",
            "f\"{x\n}\"",
            "f'''\n{x}\n'''",
            "f'{a\r\nb}'",
            "f\"{\"é\"}\"",
        ] {
            let p = string_placeholder(orig.as_bytes());
            assert_eq!(p.len(), orig.len(), "{orig:?}");
            for (a, b) in orig.bytes().zip(&p) {
                assert_eq!(a == b'\n' || a == b'\r', *b == b'\n' || *b == b'\r');
            }
            let ps = String::from_utf8(p).unwrap();
            assert!(
                rustpython_parser::parse(&ps, Mode::Expression, "<t>").is_ok(),
                "{ps:?}"
            );
        }
        assert_eq!(string_placeholder(b"f\"{x\n}\""), b"(\"x\"\n )".to_vec());
    }

    #[test]
    fn type_param_default_ranges() {
        let text = "def f[T = int, *Ts = *tuple[int], **P = [int]](): pass\nclass C[T: str = \"a\"]: pass\n";
        let sc = scan::scan(text);
        let r = type_param_defaults(text, &sc.tokens);
        let got: Vec<&str> = r.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(got, vec!["= int", "= *tuple[int]", "= [int]", "= \"a\""]);
    }
}
