//! Turning raw log bytes into clean lines: lossy UTF-8, no ANSI escapes, no `\r`.

use std::borrow::Cow;

/// Decodes `bytes` for [`clean_text`]: borrowed when valid UTF-8 (the usual case, checked at
/// SIMD speed), else with U+FFFD for invalid sequences, so any byte sequence yields text.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Removes terminal escapes and `\r` redraws from the whole text, line by line; borrowed when
/// there is nothing to remove (the usual case: one memchr pass).
pub fn clean_text(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let needs = memchr::memchr(0x1b, b).is_some()
        || memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n'));
    if !needs {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for (i, raw) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        out.push_str(&strip_ansi(line));
    }
    Cow::Owned(out)
}

/// Splits cleaned text into lines (`\r\n` or `\n`), borrowing: a large log costs one vector.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / 40 + 1);
    for raw in text.split('\n') {
        out.push(raw.strip_suffix('\r').unwrap_or(raw));
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
    let b = line.as_bytes();
    if memchr::memchr2(0x1b, b'\r', b).is_none() {
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
        let text = decode(b"a\r\nb\xff\nc\n");
        let text = clean_text(&text);
        assert_eq!(split_lines(&text), vec!["a", "b\u{fffd}", "c"]);
        let text = clean_text("\x1b[1mx\x1b[0m\r\nprogress 10%\rprogress 100%\n");
        assert_eq!(split_lines(&text), vec!["x", "progress 100%"]);
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
