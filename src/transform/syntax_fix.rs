//! `syntax_fix`: text-level repairs of a file that does not parse (a `SyntaxError` or
//! `IndentationError` raised while pytest imports it). There is no AST: the edits are found
//! from Python's message, the line it names, the caret's column and a token scan of the text.
//! The rule's `problem` parameter says which:
//!
//! - `missing_colon` (`expected ':'`): `:` after the last token of the header's logical line,
//!   before a trailing comment;
//! - `unclosed_bracket` (`'(' was never closed`): the closing bracket at the end of the last
//!   continuation line of the statement, then at the end of the bracket's own line;
//! - `missing_comma` (`invalid syntax. Perhaps you forgot a comma?`): `,` between the two
//!   adjacent items at the caret;
//! - `unexpected_indent`: the over-indented block dedented to the previous statement's level,
//!   then the line alone;
//! - `expected_block` (`expected an indented block after 'if' statement on line N`): the line
//!   (with its own block) indented one unit under the header, then every following line of
//!   that level;
//! - `unindent_mismatch` (`unindent does not match any outer indentation level`): the block
//!   re-aligned to the nearest enclosing level, below first, then above.
//!
//! Every fix is kept only when the patched file parses (the planner checks).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::TextContext;
use crate::edit::{Edit, Fix};
use crate::syntax::scan::{self, Tok, TokKind};

/// The rule's params: which syntax problem the rule's message names.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    pub problem: Problem,
}

/// The problems this transform repairs (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    MissingColon,
    UnclosedBracket,
    MissingComma,
    UnexpectedIndent,
    ExpectedBlock,
    UnindentMismatch,
}

pub fn candidates(ctx: &TextContext, params: &RuleParams) -> Vec<Fix> {
    let fixes = match params.problem {
        Problem::MissingColon => missing_colon(ctx),
        Problem::UnclosedBracket => unclosed_bracket(ctx),
        Problem::MissingComma => missing_comma(ctx),
        Problem::UnexpectedIndent => unexpected_indent(ctx),
        Problem::ExpectedBlock => expected_block(ctx),
        Problem::UnindentMismatch => unindent_mismatch(ctx),
    };
    let mut out: Vec<Fix> = Vec::new();
    for f in fixes {
        if !f.edits.is_empty() && !out.iter().any(|o| o.edits == f.edits) {
            out.push(f);
        }
    }
    out
}

fn fix(ctx: &TextContext, title: String, edits: Vec<Edit>) -> Fix {
    Fix::new(title, ctx.rule, ctx.confidence, edits)
}

const STATEMENT_KEYWORDS: &[&str] = &[
    "return", "def", "class", "if", "elif", "else", "for", "while", "with", "try", "except",
    "finally", "import", "from", "raise", "pass", "break", "continue", "assert", "del", "global",
    "nonlocal", "async", "yield", "match", "case", "@",
];
const COMPOUND_KEYWORDS: &[&str] = &[
    "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class",
    "async", "match", "case",
];
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The scanned text and its layout.
struct Text<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    ctx: &'a TextContext<'a>,
}

impl<'a> Text<'a> {
    fn new(ctx: &'a TextContext<'a>) -> Text<'a> {
        let text = ctx.source.text();
        Text {
            text,
            toks: scan::scan(text).tokens,
            ctx,
        }
    }

    fn tok(&self, t: &Tok) -> &str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    fn line_range(&self, line: usize) -> Option<Range<usize>> {
        Some(self.ctx.source.line_start(line)?..self.ctx.source.line_end(line)?)
    }

    fn line_of(&self, offset: usize) -> usize {
        self.ctx.source.line_col(offset).0
    }

    /// Tokens (no newlines) that start on `line`.
    fn tokens_on(&self, line: usize) -> Vec<Tok> {
        let Some(r) = self.line_range(line) else {
            return Vec::new();
        };
        self.toks
            .iter()
            .filter(|t| {
                t.kind != TokKind::Newline && r.start <= t.start && t.start < r.end.max(r.start + 1)
            })
            .copied()
            .collect()
    }

    /// Leading blanks of `line`.
    fn indent(&self, line: usize) -> &str {
        self.ctx.source.indentation_of_line(line).unwrap_or("")
    }

    fn is_blank(&self, line: usize) -> bool {
        self.tokens_on(line).is_empty() && !self.inside_string(line)
    }

    /// `line` starts inside a multi-line string literal.
    fn inside_string(&self, line: usize) -> bool {
        let Some(start) = self.ctx.source.line_start(line) else {
            return false;
        };
        self.toks
            .iter()
            .any(|t| matches!(t.kind, TokKind::String { .. }) && t.start < start && start < t.end)
    }

    /// 1-based lines where a logical line starts, up to (not including) `before`, with the
    /// bracket depth tracked over the tokens.
    fn logical_starts(&self, before: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut at_start = true;
        for t in &self.toks {
            if t.start >= before {
                break;
            }
            match t.kind {
                TokKind::Newline => {
                    if depth == 0 {
                        at_start = true;
                    }
                    continue;
                }
                _ => match self.tok(t) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                },
            }
            if at_start {
                let line = self.line_of(t.start);
                if out.last() != Some(&line) {
                    out.push(line);
                }
                at_start = false;
            }
        }
        out
    }

    /// Re-indents `lines`: each line's leading `old` becomes `new` (lines inside strings, blank
    /// lines and lines not starting with `old` are left alone).
    fn reindent(&self, lines: &[usize], old: &str, new: &str) -> Vec<Edit> {
        let mut edits = Vec::new();
        for &l in lines {
            if self.is_blank(l) || self.inside_string(l) {
                continue;
            }
            let Some(start) = self.ctx.source.line_start(l) else {
                continue;
            };
            let ind = self.indent(l);
            if !ind.starts_with(old) {
                continue;
            }
            edits.push(Edit::replacement(start..start + old.len(), new.to_string()));
        }
        edits
    }

    /// `line` and the following lines that belong under it: blank lines, lines inside strings,
    /// and lines indented at least as deep (`deeper_only`: strictly deeper).
    fn block_from(&self, line: usize, deeper_only: bool) -> Vec<usize> {
        let w = width(self.indent(line));
        let mut out = vec![line];
        let mut l = line + 1;
        while l <= self.ctx.source.line_count() {
            if self.is_blank(l) || self.inside_string(l) {
                l += 1;
                continue;
            }
            let lw = width(self.indent(l));
            if lw < w || (deeper_only && lw == w) {
                break;
            }
            out.push(l);
            l += 1;
        }
        // Trailing blank lines are not part of it.
        while out.len() > 1 && out.last().is_some_and(|&x| self.is_blank(x)) {
            out.pop();
        }
        out
    }
}

/// Indentation width, tabs to the next multiple of 8 (as CPython's tokenizer counts).
fn width(indent: &str) -> usize {
    indent.chars().fold(0, |w, c| match c {
        '\t' => (w / 8 + 1) * 8,
        _ => w + 1,
    })
}

// ---------------------------------------------------------------------------------------------

/// What Python 3.10+ would say about a syntax error that Python 3.9 and older word
/// `invalid syntax` or `unexpected EOF while parsing` (their parser names no problem), read
/// from the source at the `line` and caret Python name: the message a rule matches and the line
/// it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Specific {
    pub msg: String,
    pub line: usize,
    /// The caret's column as 3.10+ would put it (on the first of two items; none for a
    /// bracket, which the rule finds on its line).
    pub column: Option<usize>,
}

/// The [`Specific`] problem the source shows: a compound statement's header without its colon
/// (`expected ':'`, same line), two items without the comma between them just before the caret
/// (`invalid syntax. Perhaps you forgot a comma?`), or a bracket still open where Python
/// stopped (`'(' was never closed`, on the bracket's line). `None` when the message is
/// specific already or the source shows none of these.
pub fn specific_message(
    source: &crate::source::SourceFile,
    line: usize,
    column: Option<usize>,
    msg: &str,
) -> Option<Specific> {
    let eof = msg.trim() == "unexpected EOF while parsing";
    if msg.trim() != "invalid syntax" && !eof {
        return None;
    }
    let captures = std::collections::BTreeMap::new();
    let ctx = TextContext {
        source,
        line,
        column,
        msg,
        captures: &captures,
        rule: "",
        confidence: crate::edit::Confidence::High,
    };
    if !eof && !missing_colon(&ctx).is_empty() {
        return Some(Specific {
            msg: "expected ':'".into(),
            line,
            column,
        });
    }
    let t = Text::new(&ctx);
    // Where Python stopped: the caret, else the line's start; the end for an EOF.
    let caret = if eof {
        Some(t.text.len())
    } else {
        column
            .and_then(|c| source.offset_of_char_col(line, c))
            .or_else(|| source.line_start(line))
    }?;
    // A comma only inside brackets (where 3.10+ give the hint) and when the items are right
    // before the caret (3.6-3.9 point at the second item), so that another error on a line
    // with two items is not read as one.
    let depth = |at: usize| {
        t.toks
            .iter()
            .take_while(|x| x.start < at)
            .fold(0i64, |d, x| match t.tok(x) {
                "(" | "[" | "{" => d + 1,
                ")" | "]" | "}" => d - 1,
                _ => d,
            })
    };
    // 3.10+ put the caret on the first item, 3.6-3.9 on the second: look from the token
    // before the caret. Without a caret (pytest 3 shows it in a way that is not always read),
    // every token of the line is tried as the second item.
    let carets: Vec<usize> = match column {
        _ if eof => Vec::new(),
        Some(_) => vec![caret],
        None => t.tokens_on(line).iter().map(|x| x.start).collect(),
    };
    for caret in carets {
        let before = t
            .toks
            .iter()
            .rfind(|x| x.end < caret && x.kind != TokKind::Newline)
            .map(|x| source.line_char_col(x.start));
        let Some((l, c)) = before.filter(|&(l, _)| l == line) else {
            continue;
        };
        let ctx = TextContext {
            line: l,
            column: Some(c),
            ..ctx
        };
        let comma = missing_comma(&ctx);
        let at = comma
            .first()
            .and_then(|f| f.edits.first())
            .map(|e| e.range.start);
        // The second item is the token the caret is on.
        let second = |at: usize| t.toks.iter().find(|x| x.start >= at);
        if at.is_some_and(|at| {
            second(at).is_some_and(|x| x.start <= caret && caret < x.end) && depth(at) > 0
        }) {
            return Some(Specific {
                msg: "invalid syntax. Perhaps you forgot a comma?".into(),
                line,
                column: Some(c),
            });
        }
    }
    // A bracket before where Python stopped that nothing in the file closes (one that is
    // closed later is only open at the error: that is another problem).
    let mut stack: Vec<&Tok> = Vec::new();
    for x in &t.toks {
        match t.tok(x) {
            "(" | "[" | "{" => stack.push(x),
            ")" | "]" | "}" => {
                stack.pop();
            }
            _ => {}
        }
    }
    let open = stack.into_iter().rev().find(|x| x.start < caret)?;
    Some(Specific {
        msg: format!("'{}' was never closed", t.tok(open)),
        line: t.line_of(open.start),
        column: None,
    })
}

fn missing_colon(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let Some(line_start) = ctx.source.line_start(ctx.line) else {
        return Vec::new();
    };
    let Some(line_end) = ctx.source.line_end(ctx.line) else {
        return Vec::new();
    };
    // The logical line that contains the named line.
    let starts = t.logical_starts(line_end + 1);
    let Some(&first) = starts.iter().rev().find(|&&l| l <= ctx.line) else {
        return Vec::new();
    };
    let Some(from) = ctx.source.line_start(first) else {
        return Vec::new();
    };
    let mut depth = 0usize;
    let mut last: Option<Tok> = None;
    let mut first_tok: Option<Tok> = None;
    for tok in t.toks.iter().filter(|x| x.start >= from) {
        if tok.kind == TokKind::Newline {
            if depth == 0 && tok.start >= line_start {
                break;
            }
            continue;
        }
        match t.tok(tok) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        first_tok.get_or_insert(*tok);
        last = Some(*tok);
    }
    let (Some(first_tok), Some(last)) = (first_tok, last) else {
        return Vec::new();
    };
    if !COMPOUND_KEYWORDS.contains(&t.tok(&first_tok)) || t.tok(&last) == ":" {
        return Vec::new();
    }
    let header = t.text[first_tok.start..last.end]
        .lines()
        .next()
        .unwrap_or("");
    vec![fix(
        ctx,
        format!("end the header `{}` with a colon", header.trim()),
        vec![Edit::insertion(last.end, ":")],
    )]
}

// ---------------------------------------------------------------------------------------------

fn closing(open: &str) -> Option<&'static str> {
    Some(match open {
        "(" => ")",
        "[" => "]",
        "{" => "}",
        _ => return None,
    })
}

fn unclosed_bracket(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let open = ctx.captures.get("open").map(String::as_str).unwrap_or("(");
    let Some(close) = closing(open) else {
        return Vec::new();
    };
    // The bracket: at the caret, else the last unmatched one of its kind on the line.
    let on_line = t.tokens_on(ctx.line);
    let at_caret = ctx
        .column
        .and_then(|c| ctx.source.offset_of_char_col(ctx.line, c))
        .and_then(|off| on_line.iter().find(|x| x.start == off && t.tok(x) == open));
    let bracket = match at_caret {
        Some(b) => *b,
        None => {
            let mut stack: Vec<Tok> = Vec::new();
            for x in &on_line {
                match t.tok(x) {
                    "(" | "[" | "{" => stack.push(*x),
                    ")" | "]" | "}" => {
                        stack.pop();
                    }
                    _ => {}
                }
            }
            match stack.into_iter().rev().find(|x| t.tok(x) == open) {
                Some(b) => b,
                None => return Vec::new(),
            }
        }
    };
    let starts = t.logical_starts(bracket.start);
    let stmt_line = starts.last().copied().unwrap_or(ctx.line);
    let stmt_width = width(t.indent(stmt_line));
    let stmt_first = t
        .tokens_on(stmt_line)
        .first()
        .map(|x| t.tok(x).to_string())
        .unwrap_or_default();
    // Continuation lines: deeper than the statement, not starting a statement of their own.
    let mut end_line = ctx.line;
    let mut l = ctx.line + 1;
    while l <= ctx.source.line_count() {
        if t.inside_string(l) {
            l += 1;
            continue;
        }
        let toks = t.tokens_on(l);
        let Some(first) = toks.first() else { break };
        if width(t.indent(l)) <= stmt_width || STATEMENT_KEYWORDS.contains(&t.tok(first)) {
            break;
        }
        end_line = l;
        l += 1;
    }
    let close_at = |line: usize| -> Option<usize> {
        let toks = t.tokens_on(line);
        let last = toks.last()?;
        // `if (a and b:` → `if (a and b):`
        if t.tok(last) == ":" && COMPOUND_KEYWORDS.contains(&stmt_first.as_str()) && toks.len() > 1
        {
            return Some(last.start);
        }
        Some(last.end)
    };
    let mut out = Vec::new();
    for line in [end_line, ctx.line] {
        if let Some(at) = close_at(line) {
            // Right after the bracket itself, closing makes an empty call: useless.
            if at <= bracket.end {
                continue;
            }
            out.push(fix(
                ctx,
                format!(
                    "close the `{open}` of line {} at the end of line {line}",
                    ctx.line
                ),
                vec![Edit::insertion(at, close)],
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------

fn ends_item(t: &Text, tok: &Tok) -> bool {
    match tok.kind {
        TokKind::Number | TokKind::String { .. } => true,
        TokKind::Name => !KEYWORDS.contains(&t.tok(tok)),
        TokKind::Op => matches!(t.tok(tok), ")" | "]" | "}"),
        _ => false,
    }
}

fn starts_item(t: &Text, tok: &Tok) -> bool {
    match tok.kind {
        TokKind::Number | TokKind::String { .. } => true,
        TokKind::Name => !KEYWORDS.contains(&t.tok(tok)),
        _ => false,
    }
}

fn missing_comma(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let Some(line_start) = ctx.source.line_start(ctx.line) else {
        return Vec::new();
    };
    let from = ctx
        .column
        .and_then(|c| ctx.source.offset_of_char_col(ctx.line, c))
        .unwrap_or(line_start);
    let find = |from: usize| -> Option<usize> {
        let toks: Vec<&Tok> = t
            .toks
            .iter()
            .filter(|x| x.start >= from && x.kind != TokKind::Newline)
            .take(64)
            .collect();
        let mut depth = 0usize;
        for w in toks.windows(2) {
            let (a, b) = (w[0], w[1]);
            match t.tok(a) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > 0 || t.line_of(a.start) != t.line_of(b.start) {
                continue;
            }
            let strings = matches!(a.kind, TokKind::String { .. })
                && matches!(b.kind, TokKind::String { .. });
            let gap = t.text.get(a.end..b.start).unwrap_or("x");
            if ends_item(&t, a)
                && starts_item(&t, b)
                && !strings
                && !gap.is_empty()
                && gap.chars().all(|c| c == ' ' || c == '\t')
            {
                return Some(a.end);
            }
        }
        None
    };
    let at = find(from).or_else(|| (from != line_start).then(|| find(line_start)).flatten());
    match at {
        Some(at) => vec![fix(
            ctx,
            format!("insert the missing comma on line {}", ctx.line),
            vec![Edit::insertion(at, ",")],
        )],
        None => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------

/// The previous logical line's first line before `line` (skipping blank and comment lines).
fn previous_statement(t: &Text, line: usize) -> Option<usize> {
    let start = t.ctx.source.line_start(line)?;
    t.logical_starts(start).last().copied()
}

fn unexpected_indent(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let Some(prev) = previous_statement(&t, ctx.line) else {
        return Vec::new();
    };
    let (target, old) = (t.indent(prev).to_string(), t.indent(ctx.line).to_string());
    if width(&old) <= width(&target) {
        return Vec::new();
    }
    let block = t.block_from(ctx.line, false);
    let mut out = Vec::new();
    out.push(fix(
        ctx,
        format!("dedent line {} to the level of line {prev}", ctx.line),
        t.reindent(&block, &old, &target),
    ));
    if block.len() > 1 {
        out.push(fix(
            ctx,
            format!("dedent line {} alone", ctx.line),
            t.reindent(&[ctx.line], &old, &target),
        ));
    }
    out
}

fn expected_block(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let header = ctx
        .captures
        .get("header_line")
        .and_then(|h| h.parse::<usize>().ok())
        .or_else(|| previous_statement(&t, ctx.line));
    let Some(header) = header.filter(|&h| h < ctx.line) else {
        return Vec::new();
    };
    let old = t.indent(ctx.line).to_string();
    let new = format!("{}{}", t.indent(header), ctx.source.indent_unit());
    if width(&new) <= width(&old) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // 1. The line and what hangs under it (its own block, its continuation lines).
    let own = t.block_from(ctx.line, true);
    out.push(fix(
        ctx,
        format!("indent line {} under the header of line {header}", ctx.line),
        t.reindent(&own, &old, &new),
    ));
    // 2. Every following line of its level, up to a definition at that level.
    let mut all = t.block_from(ctx.line, false);
    if let Some(cut) = all.iter().skip(1).position(|&l| {
        width(t.indent(l)) == width(&old)
            && t.tokens_on(l)
                .first()
                .is_some_and(|x| matches!(t.tok(x), "def" | "class" | "@"))
    }) {
        all.truncate(cut + 1);
    }
    if all.len() > own.len() {
        out.push(fix(
            ctx,
            format!(
                "indent lines {}-{} under the header of line {header}",
                ctx.line,
                all.last().copied().unwrap_or(ctx.line)
            ),
            t.reindent(&all, &old, &new),
        ));
    }
    out
}

fn unindent_mismatch(ctx: &TextContext) -> Vec<Fix> {
    let t = Text::new(ctx);
    let Some(start) = ctx.source.line_start(ctx.line) else {
        return Vec::new();
    };
    // CPython's indentation stack just before the line.
    let mut stack: Vec<String> = vec![String::new()];
    for l in t.logical_starts(start) {
        let ind = t.indent(l).to_string();
        let w = width(&ind);
        while stack.len() > 1 && stack.last().is_some_and(|s| width(s) > w) {
            stack.pop();
        }
        if stack.last().is_some_and(|s| width(s) < w) {
            stack.push(ind);
        }
    }
    let old = t.indent(ctx.line).to_string();
    let w = width(&old);
    if stack.iter().any(|s| width(s) == w) {
        return Vec::new();
    }
    let below = stack.iter().rev().find(|s| width(s) < w).cloned();
    let above = stack.iter().find(|s| width(s) > w).cloned();
    let mut levels: Vec<String> = below.into_iter().chain(above).collect();
    // Nearest first; on a tie the enclosing (lower) level.
    levels.sort_by_key(|s| width(s).abs_diff(w));
    let block = t.block_from(ctx.line, false);
    levels
        .into_iter()
        .map(|level| {
            fix(
                ctx,
                format!(
                    "align line {} to the indentation level of {} columns",
                    ctx.line,
                    width(&level)
                ),
                t.reindent(&block, &old, &level),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width("    "), 4);
        assert_eq!(width("\t"), 8);
        assert_eq!(width("  \t"), 8);
        assert_eq!(width("\t  "), 10);
    }

    fn specific(text: &str, line: usize, msg: &str) -> Option<&'static str> {
        specific_at(text, line, None, msg).map(|s| &*s.msg.leak())
    }

    fn specific_at(text: &str, line: usize, col: Option<usize>, msg: &str) -> Option<Specific> {
        let source =
            crate::source::SourceFile::from_bytes("m.py", text.as_bytes().to_vec()).unwrap();
        specific_message(&source, line, col, msg)
    }

    #[test]
    fn python_3_6_to_3_9_generic_wording_of_a_comma_or_an_open_bracket() {
        // Python 3.6: `invalid syntax` with the caret at the second item.
        assert_eq!(
            specific_at("SIZES = [8, 12 16, 24]\n", 1, Some(15), "invalid syntax"),
            Some(Specific {
                msg: "invalid syntax. Perhaps you forgot a comma?".into(),
                line: 1,
                column: Some(12)
            })
        );
        // No caret: the pair is found on the line.
        assert_eq!(
            specific_at("SIZES = [8, 12 16, 24]\n", 1, None, "invalid syntax"),
            Some(Specific {
                msg: "invalid syntax. Perhaps you forgot a comma?".into(),
                line: 1,
                column: Some(12)
            })
        );
        // Two items outside brackets: 3.10+ give no hint either.
        assert_eq!(specific_at("y z\n", 1, Some(2), "invalid syntax"), None);
        // An open bracket: 3.6 stops at the next statement, or at the end of the file.
        let unclosed = "def f(low, high):\n    x = max(low,\n            0\n    return x\n";
        let want = Some(Specific {
            msg: "'(' was never closed".into(),
            line: 2,
            column: None,
        });
        assert_eq!(specific_at(unclosed, 4, Some(4), "invalid syntax"), want);
        assert_eq!(
            specific_at(
                "x = [1,\n     2\n",
                2,
                Some(6),
                "unexpected EOF while parsing"
            ),
            Some(Specific {
                msg: "'[' was never closed".into(),
                line: 1,
                column: None
            })
        );
        // A bracket closed later is only open at the error: no claim.
        assert_eq!(
            specific_at("x = f(a b)\n", 1, Some(8), "invalid syntax"),
            Some(Specific {
                msg: "invalid syntax. Perhaps you forgot a comma?".into(),
                line: 1,
                column: Some(6)
            })
        );
        assert_eq!(
            specific_at("x = f(a = = b)\n", 1, Some(10), "invalid syntax"),
            None
        );
    }

    #[test]
    fn python_3_9_and_older_generic_wording_reads_as_the_problem_the_source_shows() {
        // Python 3.8/3.9 say `invalid syntax` at the header's line (the last line of a
        // multi-line header); 3.10+ say `expected ':'`.
        assert_eq!(
            specific("def f(x)\n    return x\n", 1, "invalid syntax"),
            Some("expected ':'")
        );
        assert_eq!(
            specific(
                "if (a and\n        b)  # both\n    pass\n",
                2,
                "invalid syntax"
            ),
            Some("expected ':'")
        );
        // A header that has its colon, a line that is no header, a specific message: as is.
        assert_eq!(specific("if x:\n    y z\n", 2, "invalid syntax"), None);
        assert_eq!(specific("x = = 1\n", 1, "invalid syntax"), None);
        assert_eq!(
            specific("def f(x)\n    return x\n", 1, "expected ':'"),
            None
        );
    }
}
