//! Small line-level recognizers shared by the pytest and CPython readers.

use std::sync::LazyLock;

use regex::Regex;

use super::model::{Caret, Frame, Relation};

/// The first line of `s` (`""` when it is empty): what one-line reports and matchers show of
/// a multi-line exception message.
pub fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// `File "path", line N, in func` (the `in func` part is absent for SyntaxError displays).
static FILE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*File "(.*)", line (\d{1,9})(?:, in (.*))?$"#).expect("valid regex")
});

/// The first line of an exception as printed: `pkg.mod.Error: message` or a bare `Error`.
static EXC_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(:(?: (.*))?)?$")
        .expect("valid regex")
});

pub const CAUSE_MARKER: &str =
    "The above exception was the direct cause of the following exception:";
pub const CONTEXT_MARKER: &str =
    "During handling of the above exception, another exception occurred:";
pub const NATIVE_HEADER: &str = "Traceback (most recent call last):";
pub const GROUP_HEADER: &str = "Exception Group Traceback (most recent call last):";

pub struct LocationLine<'a> {
    pub path: &'a str,
    pub line: u32,
    pub rest: &'a str,
}

/// `path:line: rest` as pytest prints frame locations (`tests/a.py:4: in test_x`,
/// `src/m.py:41: AttributeError`, `utils\demo.py:41: ...`, `<frozen x>:12: in f`). The path must
/// look like a Python file so that locals (`x = 'a:1: b'`) and prose are not taken for one.
/// Hand-written rather than a regex: it runs on most lines of a large log.
pub fn location_line(line: &str) -> Option<LocationLine<'_>> {
    let bytes = line.as_bytes();
    if bytes.len() > 4096 || bytes.first().is_none_or(|b| b.is_ascii_whitespace()) {
        return None;
    }
    for colon in memchr::memchr_iter(b':', bytes) {
        let path = &line[..colon];
        let after = &bytes[colon + 1..];
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 9 || after.get(digits) != Some(&b':') {
            continue;
        }
        if !is_printed_python_path(path) {
            continue;
        }
        let rest = &line[colon + 1 + digits + 1..];
        return Some(LocationLine {
            path,
            line: line[colon + 1..colon + 1 + digits].parse().ok()?,
            rest: rest.strip_prefix(' ').unwrap_or(rest),
        });
    }
    None
}

/// A path as tracebacks print it: `<frozen ...>`, or a `.py`/`.pyw`/`.pyx` file whose name has
/// none of the characters that mark other text (quotes, `=`, `|`...). A drive letter's colon is
/// allowed.
fn is_printed_python_path(path: &str) -> bool {
    if path.starts_with('<') {
        return path.len() > 2
            && path.ends_with('>')
            && !path[1..path.len() - 1].contains(['<', '>']);
    }
    if !(path.ends_with(".py") || path.ends_with(".pyw") || path.ends_with(".pyx")) {
        return false;
    }
    let body = match path.as_bytes() {
        [d, b':', ..] if d.is_ascii_alphabetic() => &path[2..],
        _ => path,
    };
    !body.contains([':', '<', '>', '"', '\'', '|', '?', '*', '=', '\n'])
}

pub struct FileLine<'a> {
    pub path: &'a str,
    pub line: u32,
    pub func: Option<&'a str>,
}

pub fn file_line(line: &str) -> Option<FileLine<'_>> {
    if line.len() > 4096 || !line.trim_start().starts_with("File \"") {
        return None;
    }
    let c = FILE_LINE.captures(line)?;
    Some(FileLine {
        path: c.get(1)?.as_str(),
        line: c.get(2)?.as_str().parse().ok()?,
        func: c.get(3).map(|m| m.as_str()),
    })
}

pub fn chain_marker(line: &str) -> Option<Relation> {
    match line.trim() {
        CAUSE_MARKER => Some(Relation::Cause),
        CONTEXT_MARKER => Some(Relation::Context),
        _ => None,
    }
}

/// A line of only `^` and `~` marks (3.11+ carets), with at least one mark.
pub fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| c == '^' || c == '~')
}

/// Builds a frame whose path is as printed; [`super::locate`] resolves it later.
pub fn frame(path: &str, line: u32, func: Option<&str>) -> Frame {
    Frame {
        file: path.to_string(),
        printed_file: path.to_string(),
        resolved: None,
        line,
        func: func.map(str::to_string),
        code: None,
        caret: None,
    }
}

/// Sets `frame.code` from a printed source line whose code starts at character column
/// `code_col`, and the caret spans from an optional caret line printed under it.
pub fn set_code(frame: &mut Frame, printed: &str, code_col: usize, caret_line: Option<&str>) {
    let start = printed
        .char_indices()
        .nth(code_col)
        .map_or(printed.len(), |(i, _)| i);
    let code = printed[start..].trim_end();
    if code.is_empty() || code == "???" {
        return;
    }
    frame.code = Some(code.to_string());
    frame.caret = caret_line.and_then(|c| caret(c, code_col, code.chars().count()));
}

fn caret(line: &str, code_col: usize, code_len: usize) -> Option<Caret> {
    let chars: Vec<char> = line.chars().collect();
    let first = chars.iter().position(|&c| c == '^' || c == '~')?;
    let last = chars.iter().rposition(|&c| c == '^' || c == '~')?;
    let focus_first = chars.iter().position(|&c| c == '^').unwrap_or(first);
    let focus_last = chars.iter().rposition(|&c| c == '^').unwrap_or(last);
    let rel = |col: usize| (col.saturating_sub(code_col)).min(code_len) as u32;
    let caret = Caret {
        code_start: rel(first),
        code_end: rel(last + 1),
        focus_start: rel(focus_first),
        focus_end: rel(focus_last + 1),
        line_start: None,
        line_end: None,
        line_focus_start: None,
        line_focus_end: None,
    };
    (caret.code_start < caret.code_end).then_some(caret)
}

/// Splits an exception's printed text into (qualified type, message).
///
/// `hint` is the short type pytest prints after `path:line: ` in long style; when the text does
/// not start with a matching type (assertion rewriting prints `assert 3 == 4` without
/// `AssertionError: `), the whole text is the message and the hint (or `AssertionError`, the
/// only exception pytest prints that way) is the type.
pub fn split_exception(text: &str, hint: Option<&str>) -> (String, String) {
    let (first, rest) = match text.split_once('\n') {
        Some((f, r)) => (f, Some(r)),
        None => (text, None),
    };
    let fallback = || {
        let ty = hint.filter(|h| !h.is_empty()).unwrap_or("AssertionError");
        (ty.to_string(), text.to_string())
    };
    let Some(c) = EXC_HEAD.captures(first.trim_end()) else {
        return fallback();
    };
    let ty = &c[1];
    let has_colon = c.get(2).is_some();
    let short = ty.rsplit('.').next().unwrap_or(ty);
    let accepted = match hint.filter(|h| !h.is_empty()) {
        Some(h) => short == h.rsplit('.').next().unwrap_or(h),
        None => has_colon || looks_like_exception_name(short),
    };
    if !accepted {
        return fallback();
    }
    let mut msg = c.get(3).map_or("", |m| m.as_str()).to_string();
    if let Some(rest) = rest {
        msg.push('\n');
        msg.push_str(rest);
    }
    (ty.to_string(), msg)
}

/// The message of a short-summary line (`Type: first line`, or `assert ...` for rewritten
/// assertions). pytest cuts long lines with `...`, possibly inside the type name, so a line
/// that is neither gets an empty type rather than a guess.
pub fn split_summary_message(msg: &str) -> (String, String) {
    if msg.starts_with("assert ") {
        return ("AssertionError".to_string(), msg.to_string());
    }
    match EXC_HEAD.captures(first_line(msg)) {
        Some(c) if c.get(2).is_some() || looks_like_exception_name(&c[1]) => {
            split_exception(msg, None)
        }
        _ => (String::new(), msg.to_string()),
    }
}

fn looks_like_exception_name(name: &str) -> bool {
    const SUFFIXES: [&str; 8] = [
        "Error",
        "Exception",
        "Warning",
        "Exit",
        "Interrupt",
        "Iteration",
        "Group",
        "Failed",
    ];
    name.starts_with(|c: char| c.is_ascii_uppercase()) && SUFFIXES.iter().any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_lines() {
        let l = location_line("utils\\demo.py:41: AttributeError").unwrap();
        assert_eq!(
            (l.path, l.line, l.rest),
            ("utils\\demo.py", 41, "AttributeError")
        );
        let l = location_line("tests/test_a.py:5: ").unwrap();
        assert_eq!((l.path, l.line, l.rest), ("tests/test_a.py", 5, ""));
        let l = location_line("<frozen importlib._bootstrap>:1204: in _gcd_import").unwrap();
        assert_eq!(l.rest, "in _gcd_import");
        let l = location_line("C:\\proj\\a b\\m.py:3: in f").unwrap();
        assert_eq!(l.path, "C:\\proj\\a b\\m.py");
        assert!(location_line("x = 'a.py:3: in f'").is_none());
        assert!(location_line("    a.py:3: in f").is_none());
        assert!(location_line("notes.txt:3: hello").is_none());
    }

    #[test]
    fn exception_split() {
        assert_eq!(
            split_exception("KeyError: 'k'", Some("KeyError")),
            ("KeyError".into(), "'k'".into())
        );
        assert_eq!(
            split_exception("pkg.demo.PayErr: no\nmoney", Some("PayErr")),
            ("pkg.demo.PayErr".into(), "no\nmoney".into())
        );
        assert_eq!(
            split_exception("assert 3 == 4\n +  where 3 = f()", Some("AssertionError")),
            (
                "AssertionError".into(),
                "assert 3 == 4\n +  where 3 = f()".into()
            )
        );
        assert_eq!(
            split_exception("assert (1 + 2) == 4", None),
            ("AssertionError".into(), "assert (1 + 2) == 4".into())
        );
        assert_eq!(
            split_exception("StopIteration", None),
            ("StopIteration".into(), String::new())
        );
        assert_eq!(
            split_exception("Failed: DID NOT RAISE", None),
            ("Failed".into(), "DID NOT RAISE".into())
        );
        assert_eq!(
            split_exception("ValueError:", None),
            ("ValueError".into(), String::new())
        );
    }

    #[test]
    fn carets() {
        let mut f = frame("a.py", 1, None);
        set_code(
            &mut f,
            "    print(x[\"a\"][0][\"b\"])",
            4,
            Some("          ~~~~~~~~~^^^^^"),
        );
        let c = f.caret.unwrap();
        assert_eq!(
            (c.code_start, c.code_end, c.focus_start, c.focus_end),
            (6, 20, 15, 20)
        );
    }
}
