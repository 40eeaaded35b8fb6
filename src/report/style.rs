//! ANSI colour for people on a terminal: diffs (removed lines red, added green, hunk headers
//! cyan) and the statuses in `fix`'s log. Only ever applied to text views, after the caller
//! decided with [`super::format::ColorChoice`]; JSON and GitHub output are never coloured.

pub const RED: &str = "\x1b[31m";
pub const GREEN: &str = "\x1b[32m";
pub const YELLOW: &str = "\x1b[33m";
pub const CYAN: &str = "\x1b[36m";
pub const BOLD: &str = "\x1b[1m";
pub const RESET: &str = "\x1b[0m";

/// A unified diff with each line coloured by its kind. Works on bytes (a latin-1 file's diff
/// is latin-1) and keeps every byte of the diff: the codes wrap each line's content, never
/// its newline, so stripping them gives the diff back.
pub fn paint_diff(diff: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive(|&b| b == b'\n') {
        let (body, eol) = match line.strip_suffix(b"\n") {
            Some(body) => match body.strip_suffix(b"\r") {
                Some(b) => (b, &line[b.len()..]),
                None => (body, &b"\n"[..]),
            },
            None => (line, &b""[..]),
        };
        let color = if body.starts_with(b"--- ") || body.starts_with(b"+++ ") {
            Some(BOLD)
        } else if body.starts_with(b"@@") {
            Some(CYAN)
        } else if body.starts_with(b"-") {
            Some(RED)
        } else if body.starts_with(b"+") {
            Some(GREEN)
        } else {
            None
        };
        match color {
            Some(c) if !body.is_empty() => {
                out.extend_from_slice(c.as_bytes());
                out.extend_from_slice(body);
                out.extend_from_slice(RESET.as_bytes());
            }
            _ => out.extend_from_slice(body),
        }
        out.extend_from_slice(eol);
    }
    out
}

/// Colour of a run's final status.
fn status_color(status: &str) -> Option<&'static str> {
    use crate::status::FinalStatus as S;
    let status = S::ALL.iter().find(|s| s.as_str() == status)?;
    Some(match status {
        S::Pass => GREEN,
        S::Partial | S::Escalated | S::Proposed => YELLOW,
        S::Fail | S::Error | S::NoTests | S::BadInput => RED,
    })
}

/// Words of `fix`'s human log (see `report::fix::human_log`) and their colours: the status
/// of each candidate and each failure.
const WORDS: &[(&str, &str)] = &[
    ("proven:", GREEN),
    ("rejected:", RED),
    ("the test now fails differently", YELLOW),
    ("not fixed:", RED),
    ("escalated, not patched:", YELLOW),
    ("timed out, not patched:", RED),
    ("not patched:", YELLOW),
    ("proven, but undone", YELLOW),
    ("fixed by the patch of another failure", GREEN),
];

/// `fix`'s human log with its statuses coloured; every other byte is kept.
pub fn paint_log(log: &str) -> String {
    let mut out = String::with_capacity(log.len() + 64);
    for line in log.split_inclusive('\n') {
        out.push_str(&paint_log_line(line));
    }
    out
}

fn paint_log_line(line: &str) -> String {
    // `selfdebug: STATUS: ...`: the run's verdict, and `selfdebug: review ...` for unsafe fixes.
    if let Some(rest) = line.strip_prefix("selfdebug: ") {
        if let Some((word, tail)) = rest.split_once(':') {
            if let Some(c) = status_color(word) {
                return format!("selfdebug: {c}{word}{RESET}:{tail}");
            }
        }
        if let Some(tail) = rest.strip_prefix("review ") {
            return format!("selfdebug: {YELLOW}review{RESET} {tail}");
        }
        return line.to_string();
    }
    if !line.starts_with("  ") {
        return line.to_string();
    }
    // `  [rule] title: proven: ...` or `  not fixed: ...`: the first status word after the
    // indent or after the candidate's title.
    let at = |word: &str| {
        let body = &line[2..];
        if body.starts_with(word) {
            Some(2)
        } else if body.starts_with('[') {
            line.find(&format!(": {word}")).map(|i| i + 2)
        } else {
            None
        }
    };
    for (word, c) in WORDS {
        if let Some(i) = at(word) {
            let (head, tail) = line.split_at(i);
            let word = word.trim_end_matches(':');
            return format!("{head}{c}{word}{RESET}{}", &tail[word.len()..]);
        }
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_get_their_colours_and_keep_their_bytes() {
        let diff = b"--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n ctx\n-old\r\n+new\n";
        let painted = paint_diff(diff);
        assert_eq!(
            String::from_utf8(painted.clone()).unwrap(),
            "\x1b[1m--- a/m.py\x1b[0m\n\x1b[1m+++ b/m.py\x1b[0m\n\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n \
             ctx\n\x1b[31m-old\x1b[0m\r\n\x1b[32m+new\x1b[0m\n"
        );
        let stripped = String::from_utf8(painted)
            .unwrap()
            .replace(BOLD, "")
            .replace(CYAN, "")
            .replace(RED, "")
            .replace(GREEN, "")
            .replace(RESET, "");
        assert_eq!(stripped.as_bytes(), diff);
        // Not UTF-8 (a latin-1 file) and no final newline.
        assert_eq!(paint_diff(b"+caf\xe9"), b"\x1b[32m+caf\xe9\x1b[0m");
    }

    #[test]
    fn log_statuses_are_coloured() {
        let log = "selfdebug: root /p (pytest.ini)\n\
                   selfdebug: t::a: NameError: x [logic]\n  \
                   [rule-a] Import x: rejected: the test still fails\n  \
                   [rule-b] Import y: proven: the test passes and nothing else broke\n  \
                   not fixed: no candidate passed\n\
                   selfdebug: partial: 1 patch proven and kept; 3 pytest runs\n\
                   selfdebug: review m.py (unsafe fix): check it\n";
        assert_eq!(
            paint_log(log),
            "selfdebug: root /p (pytest.ini)\n\
             selfdebug: t::a: NameError: x [logic]\n  \
             [rule-a] Import x: \x1b[31mrejected\x1b[0m: the test still fails\n  \
             [rule-b] Import y: \x1b[32mproven\x1b[0m: the test passes and nothing else broke\n  \
             \x1b[31mnot fixed\x1b[0m: no candidate passed\n\
             selfdebug: \x1b[33mpartial\x1b[0m: 1 patch proven and kept; 3 pytest runs\n\
             selfdebug: \x1b[33mreview\x1b[0m m.py (unsafe fix): check it\n"
        );
    }
}
