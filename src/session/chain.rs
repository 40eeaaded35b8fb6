//! A chain is kept only when it ends well (issue 33, item 1): a step that moved a failure is
//! provisional (see `Work::follow`), and a step that introduces a `None` which a later step of
//! the same chain then guards against makes the program worse and hides it. Pure checks on the
//! steps' inserted text and on the moved failure, so they cost no run.

use crate::edit::Fix;
use crate::traceback::Failure;

/// Whether the fix's inserted text can make a value `None` where there was none: a `.get(key)`
/// without its default, `return None` (or a bare `return`), `= None`, `else None`.
pub fn introduces_none(fix: &Fix) -> bool {
    fix.edits.iter().any(|e| {
        let c = e.content.as_str();
        bare_get(c)
            || c.contains("return None")
            || c.lines().any(|l| l.trim() == "return")
            || c.contains("= None")
            || c.contains("else None")
    })
}

/// Whether the fix guards against a `None`: `is None`, `is not None`, `== None`, or an inline
/// `(x or default)` fallback.
pub fn guards_none(fix: &Fix) -> bool {
    fix.edits.iter().any(|e| {
        let c = e.content.as_str();
        c.contains("is None")
            || c.contains("is not None")
            || c.contains("== None")
            || c.contains("!= None")
            || c.contains(" or ")
    })
}

/// Whether the failure is about a `None` value: the message names `NoneType` or `None`.
pub fn none_error(f: &Failure) -> bool {
    let first = f.msg.lines().next().unwrap_or("");
    first.contains("NoneType") || first.contains("None ") || first.ends_with("None")
}

/// Why following `step` (which moved `before` to `after`) would grow a chain that silences
/// what it made: the step made a value None-able, and the failure it moved to is about a None.
pub fn made_the_none(step: &Fix, before: &Failure, after: &Failure) -> Option<String> {
    (introduces_none(step) && none_error(after) && !none_error(before)).then(|| {
        format!(
            "not followed: the edit makes a value None, and the failure it moved to is about that \
             None ({}: {}); a later step could only guard the None it made",
            after.exc_type,
            after.msg.lines().next().unwrap_or("")
        )
    })
}

/// Whether a chain's steps hold an earlier one that introduces a None and a later one that
/// guards a None: the chain is undone whole.
pub fn guards_its_own_none(steps: &[&Fix]) -> bool {
    steps
        .iter()
        .enumerate()
        .any(|(i, s)| introduces_none(s) && steps[i + 1..].iter().any(|l| guards_none(l)))
}

/// `.get(` with one argument only (no comma at its top level before the closing parenthesis).
fn bare_get(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find(".get(") {
        let args = &rest[at + ".get(".len()..];
        let mut depth = 0i32;
        let mut quote: Option<char> = None;
        let mut comma = false;
        let mut closed = false;
        for c in args.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(' | '[' | '{') => depth += 1,
                (None, ')') if depth == 0 => {
                    closed = true;
                    break;
                }
                (None, ')' | ']' | '}') => depth -= 1,
                (None, ',') if depth == 0 => comma = true,
                _ => {}
            }
        }
        if closed && !comma {
            return true;
        }
        rest = args;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::{Confidence, Edit};

    fn fix(content: &str) -> Fix {
        Fix {
            title: "t".into(),
            rule: "r".into(),
            confidence: Confidence::Medium,
            edits: vec![Edit::replacement(0..1, content)],
        }
    }

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

    #[test]
    fn a_get_without_its_default_introduces_a_none() {
        assert!(introduces_none(&fix(r#"options.get("sep")"#)));
        assert!(introduces_none(&fix(r#"options.get(key(1, 2))"#)));
        assert!(!introduces_none(&fix(r#"options.get("sep", ",")"#)));
        assert!(!introduces_none(&fix(r#"options.get("a,b", ",")"#)));
        assert!(!introduces_none(&fix(r#"options.get(k, f(1))"#)));
        assert!(introduces_none(&fix("if x is None:\n    return None\n")));
        assert!(introduces_none(&fix("    x = None\n")));
        assert!(introduces_none(&fix("    if not x:\n        return\n")));
        assert!(!introduces_none(&fix("(x or \"\")")));
    }

    #[test]
    fn guards_are_seen() {
        assert!(guards_none(&fix("if sep is None:\n    return None\n")));
        assert!(guards_none(&fix(
            "(at <= when if when is not None else False)"
        )));
        assert!(guards_none(&fix("(sep or \",\")")));
        assert!(!guards_none(&fix(r#"options.get("sep", ",")"#)));
    }

    #[test]
    fn a_step_that_made_the_none_is_not_followed() {
        let key = failure("KeyError", "'sep'");
        let none = failure("TypeError", "object of type 'NoneType' has no len()");
        let other = failure("ValueError", "the separator must be one character");
        let get = fix(r#"options.get("sep")"#);
        assert!(made_the_none(&get, &key, &none).is_some());
        // A failure moved elsewhere but not to a None, or an edit that makes no None: followed.
        assert!(made_the_none(&get, &key, &other).is_none());
        assert!(made_the_none(&fix(r#"options.get("sep", ",")"#), &key, &none).is_none());
        assert!(none_error(&failure("TypeError", "must be str, not None")));
        assert!(!none_error(&failure("ValueError", "Nonesuch")));
    }

    #[test]
    fn a_chain_that_guards_its_own_none_is_seen() {
        let get = fix(r#"options.get("sep")"#);
        let guard = fix("if sep is None:\n    return None\n");
        let default = fix(r#"options.get("sep", ",")"#);
        assert!(guards_its_own_none(&[&get, &guard]));
        assert!(!guards_its_own_none(&[&guard, &default]));
        assert!(!guards_its_own_none(&[&default, &guard]));
        assert!(!guards_its_own_none(&[&get]));
    }
}
