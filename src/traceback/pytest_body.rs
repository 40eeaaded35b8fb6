//! The body of one pytest failure section in `long`, `short` or `auto` style (and the native
//! and exception-group blocks pytest embeds in them).

use super::model::{ExceptionRecord, Frame, Relation, TbStyle};
use super::native;
use super::text::{self, NATIVE_HEADER};

/// Reads a section body (captured-output blocks already removed). Returns the exception and
/// the style it was printed in, or `None` when the body holds no exception.
pub fn parse_body(lines: &[&str]) -> Option<(ExceptionRecord, TbStyle)> {
    let mut links: Vec<(ExceptionRecord, Option<Relation>)> = Vec::new();
    let mut style = None;
    for (segment, relation) in native::split_chain(lines) {
        let parsed = if is_native(segment) {
            native::parse_chain(segment).map(|r| (r, TbStyle::Native))
        } else {
            parse_pytest_segment(segment)
        };
        if let Some((record, seg_style)) = parsed {
            style = Some(match (style, seg_style) {
                (Some(TbStyle::Long), _) | (_, TbStyle::Long) => TbStyle::Long,
                (Some(s), _) => s,
                (None, s) => s,
            });
            links.push((record, relation));
        }
    }
    Some((native::assemble_chain(links)?, style?))
}

fn is_native(segment: &[&str]) -> bool {
    segment
        .iter()
        .any(|l| *l == NATIVE_HEADER || native::is_group_header(l))
}

/// `long` entries end with `path:line: [Type]`; `short` entries start with `path:line: in func`.
/// `auto` mixes both (long for the first and last entry).
fn parse_pytest_segment(lines: &[&str]) -> Option<(ExceptionRecord, TbStyle)> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut e_lines: Vec<&str> = Vec::new();
    let mut hint: Option<String> = None;
    let mut saw_long = false;
    let mut group: Option<ExceptionRecord> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix('E') {
            if rest.is_empty() || rest.starts_with(' ') {
                e_lines.push(rest);
                i += 1;
                continue;
            }
        }
        if native::is_group_header(line) {
            let (record, end) = native::parse_group(lines, i, 0);
            group = Some(record);
            i = end;
            continue;
        }
        if let Some(loc) = text::location_line(line) {
            if let Some(func) = loc.rest.strip_prefix("in ") {
                // Short style: the printed source line follows, then maybe carets.
                let mut frame = text::frame(loc.path, loc.line, Some(func));
                if let Some(code) = lines.get(i + 1).filter(|l| l.starts_with("    ")) {
                    let caret = lines.get(i + 2).copied().filter(|l| text::is_caret_line(l));
                    let col = code.chars().take_while(|c| *c == ' ').count();
                    text::set_code(&mut frame, code, col, caret);
                    i += 1 + usize::from(caret.is_some());
                }
                frames.push(frame);
                pending.clear();
            } else {
                saw_long = true;
                let mut frame = text::frame(loc.path, loc.line, None);
                fill_from_long_source(&mut frame, &pending);
                frames.push(frame);
                pending.clear();
                if is_type_name(loc.rest) {
                    hint = Some(loc.rest.to_string());
                }
            }
            i += 1;
            continue;
        }
        pending.push(line);
        i += 1;
    }
    let style = if saw_long {
        TbStyle::Long
    } else {
        TbStyle::Short
    };
    if let Some(mut g) = group {
        // Frames printed in pytest style before the drawing are the outer ones.
        frames.append(&mut g.frames);
        g.frames = frames;
        return Some((g, style));
    }
    if e_lines.is_empty() {
        if frames.is_empty() {
            return None;
        }
        return Some((
            record(hint.unwrap_or_default(), String::new(), frames),
            style,
        ));
    }
    let text = dedent(&e_lines);
    // A SyntaxError raised while importing shows where the bad file is inside the message.
    if text.trim_start().starts_with("File \"") {
        let lines: Vec<&str> = text.lines().collect();
        if let Some(mut inner) = native::parse_chain(&lines) {
            frames.append(&mut inner.frames);
            inner.frames = frames;
            return Some((inner, style));
        }
    }
    let (exc_type, msg) = text::split_exception(&text, hint.as_deref());
    Some((record(exc_type, msg, frames), style))
}

fn record(exc_type: String, msg: String, frames: Vec<Frame>) -> ExceptionRecord {
    ExceptionRecord {
        exc_type,
        msg,
        frames,
        chain: Vec::new(),
        sub_exceptions: Vec::new(),
        location: None,
    }
}

fn is_type_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Long style prints the function's source with a 4-column gutter (`>   ` on the failing line),
/// de-indented. The failing line is the last one marked `>`; the function is the nearest `def`
/// above it that is less indented.
fn fill_from_long_source(frame: &mut Frame, source: &[&str]) {
    let Some(at) = source.iter().rposition(|l| l.starts_with('>')) else {
        return;
    };
    let marked = source[at];
    let code_col = 1 + marked[1..].chars().take_while(|c| *c == ' ').count();
    let caret = source
        .get(at + 1)
        .copied()
        .filter(|l| text::is_caret_line(l));
    text::set_code(frame, marked, code_col, caret);
    let indent = code_col.saturating_sub(4);
    for line in source[..at].iter().rev() {
        let Some(body) = line.get(4..) else { continue };
        let ind = body.len() - body.trim_start().len();
        if ind >= indent || !line.starts_with("    ") {
            continue;
        }
        let t = body.trim_start();
        let t = t.strip_prefix("async ").unwrap_or(t);
        if let Some(def) = t.strip_prefix("def ") {
            let name: String = def
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                frame.func = Some(name);
            }
            return;
        }
    }
}

/// `E` lines keep the source's indentation after the marker; the message is what remains once
/// the common indentation is removed.
fn dedent(e_lines: &[&str]) -> String {
    let common = e_lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = e_lines
        .iter()
        .map(|l| l.get(common..).unwrap_or(""))
        .collect();
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// One entry of a `--tb=line` failures section: the `E` text pytest prints and the single
/// `path:line: message` line that closes it.
pub struct LineEntry {
    pub record: ExceptionRecord,
}

/// `--tb=line` prints, per failure, the exception (`E` lines, chains, group drawings), any
/// captured output, then `path:line: first message line`. Captured output can hold anything,
/// so a closing line counts only when its message matches the exception just read.
pub fn parse_line_style(lines: &[&str]) -> Vec<LineEntry> {
    let mut out = Vec::new();
    let mut e_lines: Vec<&str> = Vec::new();
    let mut expected: Option<String> = None;
    let mut group: Option<ExceptionRecord> = None;
    let mut captured = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_captured_header(line) {
            captured = true;
            i += 1;
            continue;
        }
        if native::is_group_header(line) {
            let (record, end) = native::parse_group(lines, i, 0);
            expected = Some(first_line(&record));
            group = Some(record);
            i = end;
            continue;
        }
        if let Some(rest) = line.strip_prefix('E') {
            if rest.is_empty() || rest.starts_with(' ') {
                if e_lines.is_empty() {
                    // A new E block (after a chain marker) replaces a drawing read before it.
                    group = None;
                }
                e_lines.push(rest);
                expected = None;
                i += 1;
                continue;
            }
        }
        if text::chain_marker(line).is_some() {
            e_lines.clear();
            i += 1;
            continue;
        }
        if let Some(loc) = text::location_line(line) {
            if expected.is_none() && !e_lines.is_empty() {
                // Computed once per E block, however many lookalike lines follow it.
                expected = Some(super::first_line(&dedent(&e_lines)).to_string());
            }
            if expected.as_deref() == Some(loc.rest.trim_end()) {
                let mut frame = text::frame(loc.path, loc.line, None);
                frame.code = None;
                let mut rec = match group.take() {
                    Some(g) => g,
                    None => {
                        let text = dedent(&e_lines);
                        let (t, m) = text::split_exception(&text, None);
                        record(t, m, Vec::new())
                    }
                };
                rec.frames.push(frame);
                out.push(LineEntry { record: rec });
                captured = false;
                e_lines.clear();
                expected = None;
                i += 1;
                continue;
            }
        }
        // Continuation lines of a multi-line message are printed without the `E` marker.
        if !captured && !e_lines.is_empty() && line.starts_with("    ") {
            // Printed four columns in, where `E   ` text sits three columns after the marker.
            e_lines.push(&line[1..]);
            expected = None;
        }
        i += 1;
    }
    out
}

/// `----- Captured stdout call -----` and its kin (`Captured log setup`, ...).
pub fn is_captured_header(line: &str) -> bool {
    line.starts_with("---")
        && line.ends_with("---")
        && line.trim_matches('-').trim_start().starts_with("Captured ")
}

fn first_line(record: &ExceptionRecord) -> String {
    let msg_first = super::first_line(&record.msg);
    if record.msg.is_empty() {
        record.exc_type.clone()
    } else {
        format!("{}: {}", record.exc_type, msg_first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_style_mixes_long_and_short() {
        let body = "\n    def test_deep():\n>       deep.a({})\n\n\ntests/test_deep.py:9: \n_ _ _ _ _ _ _ _\npkg/deep.py:2: in a\n    return b(x)\n           ^^^^\n        x          = {}\n_ _ _ _ _\n\nx = {}\n\n    def c(x):\n>       return x[\"k\"]\n               ^^^^^^\nE       KeyError: 'k'\n\nx          = {}\n\npkg/deep.py:8: KeyError";
        let lines: Vec<&str> = body.lines().collect();
        let (r, style) = parse_body(&lines).unwrap();
        assert_eq!(style, TbStyle::Long);
        assert_eq!((r.exc_type.as_str(), r.msg.as_str()), ("KeyError", "'k'"));
        let summary: Vec<_> = r
            .frames
            .iter()
            .map(|f| {
                (
                    f.file.as_str(),
                    f.line,
                    f.func.as_deref(),
                    f.code.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "tests/test_deep.py",
                    9,
                    Some("test_deep"),
                    Some("deep.a({})")
                ),
                ("pkg/deep.py", 2, Some("a"), Some("return b(x)")),
                ("pkg/deep.py", 8, Some("c"), Some("return x[\"k\"]")),
            ]
        );
        let c = r.frames[2].caret.unwrap();
        assert_eq!((c.code_start, c.code_end), (7, 13));
    }

    #[test]
    fn line_style_ignores_lookalike_captured_output() {
        let body = "E   assert 1.5 == 2\n----- Captured stdout call -----\nTraceback (most recent call last):\nsrc/fake.py:9: KeyError\n/tmp/s1/tests/test_a.py:23: assert 1.5 == 2";
        let lines: Vec<&str> = body.lines().collect();
        let entries = parse_line_style(&lines);
        assert_eq!(entries.len(), 1);
        let r = &entries[0].record;
        assert_eq!(r.exc_type, "AssertionError");
        assert_eq!(r.frames[0].file, "/tmp/s1/tests/test_a.py");
        assert_eq!(r.frames[0].line, 23);
    }
}
