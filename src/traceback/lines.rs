//! Turning raw log bytes into clean lines: lossy UTF-8, no ANSI escapes, no `\r`.

use std::borrow::Cow;

/// Splits `bytes` into lines with terminal escapes removed. Invalid UTF-8 becomes U+FFFD, so any
/// byte sequence yields lines (garbage in, no failures out, never a panic).
pub fn clean_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::with_capacity(text.len() / 40 + 1);
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        out.push(strip_ansi(line).into_owned());
    }
    // A trailing newline yields one empty last line; it carries nothing.
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// Removes CSI (`ESC [ ... final`) and OSC (`ESC ] ... BEL|ESC \`) sequences, other two-byte
/// escapes, and stray carriage returns left by progress redraws.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.contains(['\x1b', '\r']) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => out.clear(),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// pytest-xdist prefixes some lines with the worker name (`[gw0] linux -- Python 3.11 ...` at the
/// top of a failure section, `[gw1] [ 50%] FAILED id` in verbose progress). Returns the line
/// without that prefix, and whether it had one.
pub fn strip_xdist_prefix(line: &str) -> (&str, bool) {
    let Some(rest) = line.strip_prefix("[gw") else {
        return (line, false);
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].starts_with("] ") {
        return (line, false);
    }
    let mut rest = &rest[digits + 2..];
    // Optional progress percentage: `[ 50%] `.
    if let Some(after) = rest.strip_prefix('[') {
        if let Some(end) = after.find("%] ") {
            if after[..end].trim().bytes().all(|b| b.is_ascii_digit()) {
                rest = &after[end + 3..];
            }
        }
    }
    (rest, true)
}

/// Width of the leading run of spaces.
pub fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_color_and_keeps_text() {
        let line = "\x1b[31m\x1b[1mE       AttributeError\x1b[0m: x";
        assert_eq!(strip_ansi(line), "E       AttributeError: x");
        assert_eq!(strip_ansi("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\"), "link");
    }

    #[test]
    fn crlf_and_invalid_utf8() {
        let lines = clean_lines(b"a\r\nb\xff\nc\n");
        assert_eq!(lines, vec!["a", "b\u{fffd}", "c"]);
    }

    #[test]
    fn xdist_prefixes() {
        assert_eq!(
            strip_xdist_prefix("[gw1] [ 50%] FAILED t.py::x"),
            ("FAILED t.py::x", true)
        );
        assert_eq!(
            strip_xdist_prefix("[gw0] linux -- Python 3.11.7 /usr/bin/python3"),
            ("linux -- Python 3.11.7 /usr/bin/python3", true)
        );
        assert_eq!(strip_xdist_prefix("[gwx] a"), ("[gwx] a", false));
    }
}
