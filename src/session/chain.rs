//! A chain is kept only when it ends well (issue 33, item 1): a step that moved a failure is
//! provisional (see `Work::follow`), and a step that introduces a `None` which a later step of
//! the same chain then guards against makes the program worse and hides it. Pure checks on the
//! steps' inserted text and on the moved failure, so they cost no run.

use crate::traceback::Failure;

/// How often the text holds a construct that can make a value `None`: a `.get(key)` without its
/// default, `return None` (or a bare `return`), `= None`, `else None`.
fn none_makers(text: &str) -> usize {
    bare_gets(text)
        + text.matches("return None").count()
        + text.lines().filter(|l| l.trim() == "return").count()
        + text.matches("= None").count()
        + text.matches("else None").count()
}

/// How often the text guards against a `None`: `is None`, `is not None`, `== None`,
/// `!= None`, or an inline `(x or default)` fallback.
fn none_guards(text: &str) -> usize {
    ["is None", "is not None", "== None", "!= None", " or "]
        .iter()
        .map(|p| text.matches(p).count())
        .sum()
}

/// Whether the step (the file `before` and `after` it) adds a construct that can make a value
/// `None` (counted over the whole file, so a guard that wraps an existing `.get(key)` adds none).
pub fn introduces_none(before: &[u8], after: &[u8]) -> bool {
    let (b, a) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    none_makers(&a) > none_makers(&b)
}

/// Whether the step adds a guard against a `None`.
pub fn guards_none(before: &[u8], after: &[u8]) -> bool {
    let (b, a) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    none_guards(&a) > none_guards(&b)
}

/// Whether the failure is about a `None` value: the message names `NoneType` or `None`.
pub fn none_error(f: &Failure) -> bool {
    let first = crate::traceback::first_line(&f.msg);
    first.contains("NoneType") || first.contains("None ") || first.ends_with("None")
}

/// Why following a step (the file `before` and `after` it), which moved `from` to `to`, would
/// grow a chain that silences what it made: the step made a value None-able, and the failure it
/// moved to is about a None.
pub fn made_the_none(before: &[u8], after: &[u8], from: &Failure, to: &Failure) -> Option<String> {
    (introduces_none(before, after) && none_error(to) && !none_error(from)).then(|| {
        format!(
            "not followed: the edit makes a value None, and the failure it moved to is about that \
             None ({}: {}); a later step could only guard the None it made",
            to.exc_type,
            crate::traceback::first_line(&to.msg)
        )
    })
}

/// Whether a chain's steps (each the file before and after it) hold an earlier one that
/// introduces a None and a later one that guards a None: the chain is undone whole.
pub fn guards_its_own_none(steps: &[(&[u8], &[u8])]) -> bool {
    steps.iter().enumerate().any(|(i, (b, a))| {
        introduces_none(b, a) && steps[i + 1..].iter().any(|(lb, la)| guards_none(lb, la))
    })
}

/// How many `.get(` calls have one argument only (no comma at their top level).
fn bare_gets(text: &str) -> usize {
    let mut n = 0;
    let mut rest = text;
    while let Some(at) = rest.find(".get(") {
        let args = &rest[at + ".get(".len()..];
        if bare_get_args(args) {
            n += 1;
        }
        rest = args;
    }
    n
}

/// Whether the arguments after `.get(` close with no comma at their top level.
fn bare_get_args(args: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut comma = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')') if depth == 0 => return !comma,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => comma = true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(exc: &str, msg: &str) -> Failure {
        let log = format!(
            "=================================== FAILURES ===================================\n\
             ___ t ___\n\
             E   {exc}: {msg}\n\
             =========================== short test summary info ============================\n\
             FAILED t.py::t - {exc}: {msg}\n"
        );
        crate::traceback::parse(log.as_bytes(), std::path::Path::new("/nonexistent"))
            .unwrap()
            .failures
            .remove(0)
    }

    const SEP: &[u8] = b"def separator(options):\n    return options[\"sep\"]\n";
    const GET: &[u8] = b"def separator(options):\n    return options.get(\"sep\")\n";
    const DEFAULT: &[u8] = b"def separator(options):\n    return options.get(\"sep\", \",\")\n";
    const USE: &[u8] = b"def column(sep):\n    if len(sep) != 1:\n        raise ValueError\n";
    const GUARD: &[u8] =
        b"def column(sep):\n    if sep is None:\n        return None\n    if len(sep) != 1:\n        raise ValueError\n";

    #[test]
    fn a_get_without_its_default_introduces_a_none() {
        assert!(introduces_none(SEP, GET));
        assert!(!introduces_none(SEP, DEFAULT));
        assert!(introduces_none(USE, GUARD));
        assert!(!introduces_none(b"x = f()\n", b"x = f(a, b)\n"));
        assert!(introduces_none(b"x = f()\n", b"x = None\n"));
        assert!(introduces_none(
            b"def f(d, k):\n    return d[k]\n",
            b"def f(d, k):\n    return d.get(k(1, 2))\n"
        ));
        assert!(!introduces_none(
            b"v = d.get(\"a,b\", \",\")\n",
            b"v = d.get(\"a,b\", \";\")\n"
        ));
        // A guard wrapped around a `.get(key)` that was there already makes no new None.
        let before = b"name = user.get(\"name\").strip()\n";
        let after = b"name = (user.get(\"name\") or \"\").strip()\n";
        assert!(!introduces_none(before, after));
        assert!(guards_none(before, after));
    }

    #[test]
    fn guards_are_seen() {
        assert!(guards_none(USE, GUARD));
        let cmp = b"return [j for at, j in jobs if at <= when]\n";
        let inline =
            b"return [j for at, j in jobs if (at <= when if when is not None else False)]\n";
        assert!(guards_none(cmp, inline));
        assert!(!guards_none(SEP, DEFAULT));
    }

    #[test]
    fn a_step_that_made_the_none_is_not_followed() {
        let key = failure("KeyError", "'sep'");
        let none = failure("TypeError", "object of type 'NoneType' has no len()");
        let other = failure("ValueError", "the separator must be one character");
        assert!(made_the_none(SEP, GET, &key, &none).is_some());
        // A failure moved elsewhere but not to a None, or an edit that makes no None: followed.
        assert!(made_the_none(SEP, GET, &key, &other).is_none());
        assert!(made_the_none(SEP, DEFAULT, &key, &none).is_none());
        assert!(none_error(&failure("TypeError", "must be str, not None")));
        assert!(!none_error(&failure("ValueError", "Nonesuch")));
    }

    #[test]
    fn a_chain_that_guards_its_own_none_is_seen() {
        assert!(guards_its_own_none(&[(SEP, GET), (USE, GUARD)]));
        assert!(!guards_its_own_none(&[(USE, GUARD), (SEP, DEFAULT)]));
        assert!(!guards_its_own_none(&[(SEP, DEFAULT), (USE, GUARD)]));
        assert!(!guards_its_own_none(&[(SEP, GET)]));
        // The two guards of the multi-step repair of `describe` (issue 19): no None made.
        let a = b"n = u.get(\"name\").strip()\nc = u.get(\"city\").title()\n";
        let b = b"n = (u.get(\"name\") or \"\").strip()\nc = u.get(\"city\").title()\n";
        let c = b"n = (u.get(\"name\") or \"\").strip()\nc = (u.get(\"city\") or \"\").title()\n";
        assert!(!guards_its_own_none(&[(a, b), (b, c)]));
    }
}
