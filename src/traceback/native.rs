//! CPython's own traceback format (`--tb=native`, bare tracebacks, exception groups).

use super::model::{ChainLink, ExceptionRecord, Frame, Relation};
use super::text::{self, GROUP_HEADER, NATIVE_HEADER};

/// CPython draws groups at most 10 deep (`max_group_depth`); anything deeper is read as plain
/// text rather than recursed into, which also keeps the work linear in the input.
const MAX_GROUP_DEPTH: usize = 12;

/// Reads a chain of exceptions (`raise ... from`, "During handling ...") in native format.
/// Returns `None` when the lines hold no exception at all.
pub fn parse_chain(lines: &[&str]) -> Option<ExceptionRecord> {
    parse_chain_at_depth(lines, 0)
}

fn parse_chain_at_depth(lines: &[&str], depth: usize) -> Option<ExceptionRecord> {
    let mut links: Vec<(ExceptionRecord, Option<Relation>)> = Vec::new();
    for (segment, relation) in split_chain(lines) {
        if let Some(record) = parse_segment(segment, depth) {
            links.push((record, relation));
        }
    }
    assemble_chain(links)
}

/// Splits lines at chain markers. Each segment comes with the relation that links it to the
/// next one (`None` for the last).
pub fn split_chain<'a, 'b>(lines: &'b [&'a str]) -> Vec<(&'b [&'a str], Option<Relation>)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        // Markers inside a group drawing are prefixed with `|`; only bare ones split here.
        if !line.starts_with(' ') {
            if let Some(rel) = text::chain_marker(line) {
                out.push((&lines[start..i], Some(rel)));
                start = i + 1;
            }
        }
    }
    out.push((&lines[start..], None));
    out
}

/// Folds `(record, relation-to-next)` links, oldest first, into the newest record with the
/// others as its `chain`.
pub fn assemble_chain(links: Vec<(ExceptionRecord, Option<Relation>)>) -> Option<ExceptionRecord> {
    let mut links = links;
    let (mut last, _) = links.pop()?;
    let mut chain = Vec::with_capacity(links.len());
    for (record, relation) in links {
        chain.push(ChainLink {
            relation: relation.unwrap_or(Relation::Context),
            exception: record,
        });
    }
    // A link may itself carry a chain only when it came from a nested reader; flatten so that
    // the failure's chain lists every earlier exception once, oldest first.
    let mut flat = Vec::new();
    for mut link in chain {
        flat.append(&mut link.exception.chain);
        flat.push(link);
    }
    flat.append(&mut last.chain);
    last.chain = flat;
    Some(last)
}

/// One exception: optional header, frames, then the exception text (or a group drawing).
fn parse_segment(lines: &[&str], depth: usize) -> Option<ExceptionRecord> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed == NATIVE_HEADER || trimmed.starts_with("[Previous line") {
            i += 1;
            continue;
        }
        if is_group_header(line) && depth < MAX_GROUP_DEPTH {
            let (record, _end) = parse_group(lines, i, depth);
            // Frames printed before the drawing (rare) stay outermost.
            let mut record = record;
            if !frames.is_empty() {
                frames.append(&mut record.frames);
                record.frames = frames;
            }
            return Some(record);
        }
        if let Some(f) = text::file_line(line) {
            let indent = line.len() - line.trim_start().len();
            let mut frame = text::frame(f.path, f.line, f.func);
            i += 1;
            // The source line (more indented than `File`), then optional caret line.
            if let Some(code) = lines.get(i).filter(|l| {
                let ind = l.len() - l.trim_start().len();
                ind > indent && !l.trim().is_empty() && text::file_line(l).is_none()
            }) {
                let code_col = code.chars().take_while(|c| *c == ' ').count();
                let caret = lines.get(i + 1).copied().filter(|l| text::is_caret_line(l));
                text::set_code(&mut frame, code, code_col, caret);
                i += 1 + usize::from(caret.is_some());
            }
            frames.push(frame);
            continue;
        }
        if line.starts_with(' ') && !frames.is_empty() {
            // Unrecognized indented line among frames (locals of `-l`, `...`): not the exception.
            i += 1;
            continue;
        }
        // The exception text: this line and everything after it in the segment.
        let rest = &lines[i..];
        let end = rest
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .map_or(0, |p| p + 1);
        let text = rest[..end].join("\n");
        let (exc_type, msg) = text::split_exception(&text, None);
        return Some(ExceptionRecord {
            exc_type,
            msg,
            frames,
            chain: Vec::new(),
            sub_exceptions: Vec::new(),
            location: None,
        });
    }
    if frames.is_empty() {
        return None;
    }
    // Frames but no exception line (the log was cut): keep the frames, type unknown.
    Some(ExceptionRecord {
        exc_type: String::new(),
        msg: String::new(),
        frames,
        chain: Vec::new(),
        sub_exceptions: Vec::new(),
        location: None,
    })
}

pub fn is_group_header(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("+ ")
        .is_some_and(|r| r.trim() == GROUP_HEADER)
}

/// Column of the first non-space character and that character.
fn lead(line: &str) -> (usize, Option<char>) {
    let col = line.len() - line.trim_start_matches(' ').len();
    (col, line[col..].chars().next())
}

/// Reads the drawing that starts at `lines[start]` (`  + Exception Group Traceback ...`).
/// Returns the group and the index just past the drawing.
pub fn parse_group(lines: &[&str], start: usize, depth: usize) -> (ExceptionRecord, usize) {
    let (base, _) = lead(lines[start]);
    let end = group_end(lines, start);
    let record = group_node(&lines[start + 1..end], base, depth, true);
    (record, end)
}

/// Index just past the drawing that starts at `lines[start]`: its lines are `|` or `+` at the
/// header's column or deeper.
pub fn group_end(lines: &[&str], start: usize) -> usize {
    let (base, _) = lead(lines[start]);
    let mut end = start + 1;
    while end < lines.len() {
        let (col, ch) = lead(lines[end]);
        if col < base || !matches!(ch, Some('|') | Some('+')) {
            break;
        }
        end += 1;
    }
    end
}

/// One node of a drawing whose own lines are `|` at column `base`. Its members (after a `+-+`
/// at `base`) are separated by `+---- N ----` at `base + 2`.
fn group_node(lines: &[&str], base: usize, depth: usize, has_header: bool) -> ExceptionRecord {
    let mut own: Vec<&str> = Vec::new();
    if has_header {
        own.push(NATIVE_HEADER);
    }
    let mut members: Vec<Vec<&str>> = Vec::new();
    let mut in_members = false;
    for &line in lines {
        let (col, ch) = lead(line);
        let body = &line[col..];
        if !in_members {
            if col == base && body.starts_with("+-+") {
                in_members = true;
                members.push(Vec::new());
            } else if col == base && ch == Some('|') {
                own.push(strip_bar(body));
            }
            continue;
        }
        if col == base + 2 && body.starts_with("+-") && !body.starts_with("+-+") {
            // `+---- N ----` starts the next member; a bare `+-----` closes the list.
            if body.trim_end_matches('-').len() > 1 {
                members.push(Vec::new());
            }
            continue;
        }
        if col >= base + 2 {
            if let Some(m) = members.last_mut() {
                m.push(line);
            }
        }
    }
    let own_record = parse_own(&own, depth);
    let mut record = own_record.unwrap_or_else(|| ExceptionRecord {
        exc_type: "ExceptionGroup".to_string(),
        msg: String::new(),
        frames: Vec::new(),
        chain: Vec::new(),
        sub_exceptions: Vec::new(),
        location: None,
    });
    for member in members {
        if member.is_empty() {
            continue;
        }
        let nested = depth + 1 < MAX_GROUP_DEPTH;
        let sub = if nested {
            group_node(&member, base + 2, depth + 1, false)
        } else {
            let flat: Vec<&str> = member.iter().map(|l| l.trim_start()).collect();
            parse_chain_at_depth(&flat, depth + 1).unwrap_or_else(|| empty_record(&flat))
        };
        record.sub_exceptions.push(sub);
    }
    record
}

fn parse_own(own: &[&str], depth: usize) -> Option<ExceptionRecord> {
    // A nested group that was raised prints its own header inside the bar lines.
    let own: Vec<&str> = own
        .iter()
        .map(|l| {
            if is_group_header(l) || l.trim() == GROUP_HEADER {
                NATIVE_HEADER
            } else {
                l
            }
        })
        .collect();
    parse_chain_at_depth(&own, depth + 1)
}

fn empty_record(lines: &[&str]) -> ExceptionRecord {
    ExceptionRecord {
        exc_type: String::new(),
        msg: lines.join("\n"),
        frames: Vec::new(),
        chain: Vec::new(),
        sub_exceptions: Vec::new(),
        location: None,
    }
}

fn strip_bar(body: &str) -> &str {
    let rest = &body[1..];
    rest.strip_prefix(' ').unwrap_or(rest)
}

/// Finds the tracebacks in text that is not a pytest session (a script's stderr): each run of
/// header, frames and exception text, joined across chain markers, is one failure.
pub fn split_cpython_log<'a, 'b>(lines: &'b [&'a str]) -> Vec<&'b [&'a str]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t != NATIVE_HEADER && !is_group_header(lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i = traceback_end(lines, i);
        out.push(&lines[start..i]);
    }
    out
}

/// Index just past the traceback (and its chained successors) starting at `start`.
fn traceback_end(lines: &[&str], start: usize) -> usize {
    let mut i = start;
    loop {
        if is_group_header(lines[i]) {
            i = group_end(lines, i);
        } else {
            i += 1;
            // Frames and their source lines are indented; the exception text starts at column 0.
            while i < lines.len() && (lines[i].starts_with(' ') || lines[i].is_empty()) {
                if lines[i].is_empty() && !chain_follows(lines, i) {
                    return i;
                }
                i += 1;
            }
            // Exception text up to a blank line.
            while i < lines.len() && !lines[i].trim().is_empty() {
                if lines[i].trim() == NATIVE_HEADER && i > start {
                    return i;
                }
                i += 1;
            }
        }
        if !chain_follows(lines, i) {
            return i;
        }
        // Skip blank lines, the marker, blank lines, to the next header.
        while i < lines.len() && text::chain_marker(lines[i]).is_none() {
            i += 1;
        }
        i += 1;
        while i < lines.len() && lines[i].trim().is_empty() {
            i += 1;
        }
        if i >= lines.len() {
            return i;
        }
    }
}

/// Whether, after blank lines from `i`, a chain marker follows.
fn chain_follows(lines: &[&str], i: usize) -> bool {
    lines[i..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| text::chain_marker(l).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        s.lines().collect()
    }

    #[test]
    fn chain_with_carets() {
        let log = "Traceback (most recent call last):\n  File \"/p/m.py\", line 12, in chain\n    {}[\"k\"]\n    ~~^^^^^\nKeyError: 'k'\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"/p/t.py\", line 14, in test_chain\n    demo.chain()\n  File \"/p/m.py\", line 14, in chain\n    raise ValueError(\"bad\") from e\nValueError: bad\n";
        let l = lines(log);
        let r = parse_chain(&l).unwrap();
        assert_eq!((r.exc_type.as_str(), r.msg.as_str()), ("ValueError", "bad"));
        assert_eq!(r.frames.len(), 2);
        assert_eq!(r.frames[1].func.as_deref(), Some("chain"));
        assert_eq!(r.chain.len(), 1);
        assert_eq!(r.chain[0].relation, Relation::Cause);
        assert_eq!(r.chain[0].exception.exc_type, "KeyError");
        let c = r.chain[0].exception.frames[0].caret.unwrap();
        assert_eq!((c.code_start, c.code_end, c.focus_start), (0, 7, 2));
        assert_eq!(split_cpython_log(&l).len(), 1);
    }

    #[test]
    fn nested_groups() {
        let log = "  + Exception Group Traceback (most recent call last):\n  |   File \"/tmp/eg.py\", line 16, in main\n  |     raise ExceptionGroup(\"outer\", errs)\n  | ExceptionGroup: outer (3 sub-exceptions)\n  +-+---------------- 1 ----------------\n    | Traceback (most recent call last):\n    |   File \"/tmp/eg.py\", line 2, in f\n    |     raise ValueError(\"v\")\n    | ValueError: v\n    +---------------- 2 ----------------\n    | ValueError: v\n    | \n    | The above exception was the direct cause of the following exception:\n    | \n    | KeyError: 'k'\n    +---------------- 3 ----------------\n    | ExceptionGroup: inner (1 sub-exception)\n    +-+---------------- 1 ----------------\n      | TypeError: t\n      +------------------------------------\n";
        let l = lines(log);
        let r = parse_chain(&l).unwrap();
        assert_eq!(r.exc_type, "ExceptionGroup");
        assert_eq!(r.msg, "outer (3 sub-exceptions)");
        assert_eq!(r.frames[0].line, 16);
        assert_eq!(r.sub_exceptions.len(), 3);
        assert_eq!(r.sub_exceptions[0].exc_type, "ValueError");
        assert_eq!(r.sub_exceptions[0].frames[0].func.as_deref(), Some("f"));
        assert_eq!(r.sub_exceptions[1].exc_type, "KeyError");
        assert_eq!(
            r.sub_exceptions[1].chain[0].exception.exc_type,
            "ValueError"
        );
        assert_eq!(r.sub_exceptions[2].exc_type, "ExceptionGroup");
        assert_eq!(r.sub_exceptions[2].sub_exceptions[0].exc_type, "TypeError");
    }

    #[test]
    fn syntax_error_display() {
        let log =
            "  File \"/p/bad.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax";
        let r = parse_chain(&lines(log)).unwrap();
        assert_eq!(r.exc_type, "SyntaxError");
        assert_eq!(r.frames[0].func, None);
        assert_eq!(r.frames[0].code.as_deref(), Some("def f(:"));
    }
}
