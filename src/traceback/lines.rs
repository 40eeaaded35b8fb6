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

/// What CI systems write in front of every line of a job's output, in the order they nest:
/// GitHub Actions' time stamp (`2026-11-30T10:00:00.1234567Z `), docker compose's container
/// column (`web_1  | `, `web-1  | `), and the time stamp of `docker compose logs -t` after it.
/// Each kind is stripped only when most non-empty lines carry it, so that a log whose own
/// output starts with a date (a logging format) keeps it. GitLab's `section_start:...` and
/// `section_end:...` markers are removed wherever they start a line.
pub fn strip_ci_prefixes(lines: &mut [&str]) {
    // Pass 1: count; nothing is changed unless a kind is on most lines.
    let (mut outer, mut container, mut inner, mut nonempty) = (0usize, 0usize, 0usize, 0usize);
    let mut markers = false;
    for (i, line) in lines.iter().enumerate() {
        // Even if every remaining line had a prefix, none would be on most lines: stop
        // counting (a plain pytest log stops about half-way) and look only for markers.
        let most_so_far = outer.max(container).max(inner);
        if nonempty >= 2 * most_so_far + (lines.len() - i) {
            markers |= lines[i..].iter().any(|l| l.starts_with("section_"));
            break;
        }
        if line.is_empty() {
            continue;
        }
        nonempty += 1;
        let mut rest = *line;
        if let Some(n) = timestamp_len(rest) {
            outer += 1;
            rest = &rest[n..];
        }
        if let Some(n) = container_len(rest) {
            container += 1;
            rest = &rest[n..];
        }
        if timestamp_len(rest).is_some() {
            inner += 1;
        }
        markers |= rest.starts_with("section_");
    }
    let most = |n: usize| n * 2 > nonempty;
    let (outer, container, inner) = (most(outer), most(container), most(inner));
    if !(outer || container || inner || markers) {
        return;
    }
    // Pass 2: strip what was decided.
    for line in lines.iter_mut() {
        let mut rest = *line;
        if outer {
            rest = &rest[timestamp_len(rest).unwrap_or(0)..];
        }
        if container {
            rest = &rest[container_len(rest).unwrap_or(0)..];
        }
        if inner {
            rest = &rest[timestamp_len(rest).unwrap_or(0)..];
        }
        if markers {
            rest = &rest[gitlab_marker_len(rest)..];
        }
        *line = rest;
    }
}

/// Length of an RFC 3339 time stamp with its zone (`2026-11-30T10:00:00.1234567Z`,
/// `...+02:00`) and the one space after it (or the end of an empty line).
fn timestamp_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let digits = |from: usize, n: usize| {
        b.get(from..from + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let shape = digits(0, 4)
        && b.get(4) == Some(&b'-')
        && digits(5, 2)
        && b.get(7) == Some(&b'-')
        && digits(8, 2)
        && b.get(10) == Some(&b'T')
        && digits(11, 2)
        && b.get(13) == Some(&b':')
        && digits(14, 2)
        && b.get(16) == Some(&b':')
        && digits(17, 2);
    if !shape {
        return None;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        let frac = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac == 0 || frac > 9 {
            return None;
        }
        i += 1 + frac;
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+' | b'-')
            if digits(i + 1, 2) && b.get(i + 3) == Some(&b':') && digits(i + 4, 2) =>
        {
            i += 6
        }
        _ => return None,
    }
    match b.get(i) {
        None => Some(i),
        Some(b' ') => Some(i + 1),
        _ => None,
    }
}

/// Length of docker compose's `name  | ` column (v1 `web_1`, v2 `web-1`; names padded to one
/// width; an empty line may end at the bar).
fn container_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    // Most lines of a log start with a space or punctuation: reject those at once.
    if !b.first().is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    let name = b
        .iter()
        .take(128)
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    if name == 0 {
        return None;
    }
    let spaces = b[name..].iter().take_while(|c| **c == b' ').count();
    let bar = name + spaces;
    if spaces == 0 || b.get(bar) != Some(&b'|') {
        return None;
    }
    match b.get(bar + 1) {
        None => Some(bar + 1),
        Some(b' ') => Some(bar + 2),
        _ => None,
    }
}

/// GitLab's collapsible-section markers, `section_start:1700000000:step_script[opts]` and
/// `section_end:...`; normally followed by `\r\e[0K` (which [`clean_text`] already turned into
/// a redraw), left bare when a copy dropped the `\r`.
fn gitlab_marker_len(line: &str) -> usize {
    let Some(rest) = line
        .strip_prefix("section_start:")
        .or_else(|| line.strip_prefix("section_end:"))
    else {
        return 0;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.as_bytes().get(digits) != Some(&b':') {
        return 0;
    }
    let after = &rest[digits + 1..];
    let name = after
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    if name == 0 {
        return 0;
    }
    let mut end = digits + 1 + name;
    // Options: `[collapsed=true]`.
    if rest[end..].starts_with('[') {
        if let Some(close) = rest[end..].find(']') {
            end += close + 1;
        }
    }
    line.len() - rest.len() + end
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

    fn stripped(text: &str) -> Vec<&str> {
        let mut lines = split_lines(text);
        strip_ci_prefixes(&mut lines);
        lines
    }

    #[test]
    fn ci_prefixes_on_most_lines_are_stripped() {
        let gh = "2026-11-30T10:00:00.1234567Z E   KeyError: 'k'\n2026-11-30T10:00:00.2Z \n2026-11-30T10:00:01.0000000Z t.py:3: KeyError\n";
        assert_eq!(
            stripped(gh),
            vec!["E   KeyError: 'k'", "", "t.py:3: KeyError"]
        );
        let compose = "web_1  | E   x\nweb_1  |\ndb_1   | ready\n";
        assert_eq!(stripped(compose), vec!["E   x", "", "ready"]);
        let both = "2026-11-30T10:00:00.1Z web-1  | 2026-11-30T10:00:00+00:00 E   x\n2026-11-30T10:00:00.1Z web-1  | 2026-11-30T10:00:00+00:00 y\n";
        assert_eq!(stripped(both), vec!["E   x", "y"]);
        let gitlab = "section_start:1700000000:step_script[collapsed=true]$ pytest\nsection_end:1700000001:step_script\nE   x\n";
        assert_eq!(stripped(gitlab), vec!["$ pytest", "", "E   x"]);
    }

    #[test]
    fn a_date_on_few_lines_is_output() {
        let log = "captured:\n2026-11-30T10:00:00Z INFO start\nE   x\nt.py:3: KeyError\n";
        assert_eq!(
            stripped(log),
            vec![
                "captured:",
                "2026-11-30T10:00:00Z INFO start",
                "E   x",
                "t.py:3: KeyError"
            ]
        );
        // Not a container column: no space before the bar, or none after it.
        assert_eq!(container_len("a|b"), None);
        assert_eq!(container_len("x  |y"), None);
        assert_eq!(timestamp_len("2026-11-30T10:00:00"), None);
        assert_eq!(timestamp_len("2026-11-30T10:00:00.Z x"), None);
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
