//! Template: a statement indented one level off, so it runs in the wrong block.
//!
//! `move-stmt`: a `return`, `break`, `continue` or an accumulation (`total += x`,
//! `out.append(x)`) that is the last statement of a loop's or an `if`'s body moves out of it
//! (dedented to the block's own level, so it runs after the block), and one that directly
//! follows an `if` (an accumulation: a loop too) moves into it (indented to the level of the
//! block's last statement). The classic slip is `return total` one level too deep, which makes
//! the loop return after its first pass; `break` one level too shallow after an `if` is its
//! mirror. Only the leading whitespace of the statement's own lines changes, so the file keeps
//! its indentation style byte for byte; a move that does not re-parse is dropped later.

use std::ops::Range;

use rustpython_parser::ast::{Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::syntax::rng;

use super::super::mutate::one_line;
use super::insert::{after_line, enclosing, func_body, indent_at};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::MoveStmt];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let Some(kind) = movable(site.stmt) else {
        return Vec::new();
    };
    let text = site.module.text();
    let sr = rng(site.stmt.range());
    let mut out = Vec::new();
    let what = one_line(text[sr.clone()].lines().next().unwrap_or(""));
    let prior = site.priors.family(Family::MoveStmt);
    // Out of the block it ends: the innermost compound statement around it.
    if let Some(parent) = enclosing(func, &sr).last() {
        if let Some((block, word, looped)) = own_body(parent) {
            let last = block.last().map(|s| rng(s.range()));
            // `break`/`continue` out of their loop leave no loop to act on.
            let fits = !(looped && kind == Kind::Jump);
            if fits && block.len() >= 2 && last == Some(sr.clone()) {
                // A loop body that ends in an unconditional `return` runs once: the slip
                // itself. Any other move out is a weaker guess.
                let w = if looped && kind == Kind::Return {
                    1.0
                } else {
                    0.3
                };
                let to = indent_at(text, rng(parent.range()).start).map(|(_, i)| i);
                if let Some(e) = to.and_then(|to| reindent(text, &sr, to)) {
                    out.push(Mutant {
                        family: Family::MoveStmt,
                        title: format!("move `{what}` out of the `{word}` (dedent)"),
                        edits: vec![e],
                        prior: prior * w,
                        effects: Vec::new(),
                    });
                }
            }
        }
    }
    // Into the block just before it, among the statements of the same body.
    let siblings = match enclosing(func, &sr).last() {
        Some(parent) => bodies(parent),
        None => vec![func_body(func)],
    };
    let prev = siblings.iter().find_map(|b| {
        let i = b.iter().position(|s| rng(s.range()) == sr)?;
        i.checked_sub(1).map(|i| &b[i])
    });
    if let Some((block, word, looped)) = prev.and_then(own_body) {
        // A `return`/`break` moved into a loop would end it on the first pass.
        let fits = !looped || kind == Kind::Accumulate;
        let inner = block
            .last()
            .and_then(|s| indent_at(text, rng(s.range()).start))
            .map(|(_, i)| i);
        if let Some(e) = inner
            .filter(|_| fits)
            .and_then(|i| reindent(text, &sr, i))
        {
            let w = if kind == Kind::Accumulate { 0.3 } else { 0.5 };
            out.push(Mutant {
                family: Family::MoveStmt,
                title: format!("move `{what}` into the `{word}` above (indent)"),
                edits: vec![e],
                prior: prior * w,
                effects: Vec::new(),
            });
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `return`: where the function's value leaves.
    Return,
    /// `break`, `continue`: where a loop's pass ends.
    Jump,
    /// `x += v`, `xs.append(v)`: what a loop or a branch adds up.
    Accumulate,
}

/// The statements whose block is a common slip.
fn movable(stmt: &Stmt) -> Option<Kind> {
    match stmt {
        Stmt::Return(_) => Some(Kind::Return),
        Stmt::Break(_) | Stmt::Continue(_) => Some(Kind::Jump),
        Stmt::AugAssign(_) => Some(Kind::Accumulate),
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Call(c) if matches!(c.func.as_ref(), Expr::Attribute(_)) => {
                Some(Kind::Accumulate)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The body of a loop or an `if` with no `else`/`elif` (so that its last statement is the
/// statement's last line), what it is called, and whether it loops.
fn own_body(s: &Stmt) -> Option<(&[Stmt], &'static str, bool)> {
    match s {
        Stmt::For(f) if f.orelse.is_empty() => Some((&f.body, "for", true)),
        Stmt::AsyncFor(f) if f.orelse.is_empty() => Some((&f.body, "for", true)),
        Stmt::While(w) if w.orelse.is_empty() => Some((&w.body, "while", true)),
        Stmt::If(i) if i.orelse.is_empty() => Some((&i.body, "if", false)),
        _ => None,
    }
}

/// Every statement list directly inside a compound statement.
fn bodies(s: &Stmt) -> Vec<&[Stmt]> {
    match s {
        Stmt::For(f) => vec![&f.body, &f.orelse],
        Stmt::AsyncFor(f) => vec![&f.body, &f.orelse],
        Stmt::While(w) => vec![&w.body, &w.orelse],
        Stmt::If(i) => vec![&i.body, &i.orelse],
        Stmt::With(w) => vec![&w.body],
        Stmt::AsyncWith(w) => vec![&w.body],
        Stmt::Try(t) => {
            let mut v: Vec<&[Stmt]> = vec![&t.body, &t.orelse, &t.finalbody];
            v.extend(t.handlers.iter().map(|h| match h {
                rustpython_parser::ast::ExceptHandler::ExceptHandler(h) => &h.body[..],
            }));
            v
        }
        _ => Vec::new(),
    }
}

/// The statement at `r` (alone on its lines) with `to` for its own indentation on each of its
/// lines that carries it; continuation lines indented otherwise keep theirs.
fn reindent(text: &str, r: &Range<usize>, to: &str) -> Option<Edit> {
    let (start, from) = indent_at(text, r.start)?;
    if from == to || from.is_empty() {
        return None;
    }
    let end = after_line(text, r.end)?;
    let mut new = String::with_capacity(end - start);
    for line in text[start..end].split_inclusive('\n') {
        match line.strip_prefix(from) {
            Some(rest) => {
                new.push_str(to);
                new.push_str(rest);
            }
            None => new.push_str(line),
        }
    }
    Some(Edit::replacement(start..end, new))
}

#[cfg(test)]
mod tests {
    use super::super::applied_at;
    use super::*;

    fn moved(src: &str, line: u32) -> Vec<(String, String, f64)> {
        applied_at(src, line, mutants)
    }

    #[test]
    fn a_return_ending_a_loop_body_is_dedented_first() {
        let src = "def total(xs):\n    t = 0\n    for x in xs:\n        t += x\n        return t\n";
        let m = moved(src, 5);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].0, "move `return t` out of the `for` (dedent)");
        assert_eq!(
            m[0].1,
            "def total(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n"
        );
        assert!((m[0].2 - 0.10).abs() < 1e-9, "{}", m[0].2);
        // The accumulation before it moves out of the loop too, as a weaker guess.
        let acc = moved(src, 4);
        assert!(acc.is_empty(), "not the body's last statement: {acc:?}");
    }

    #[test]
    fn tabs_crlf_and_continuation_lines_keep_their_bytes() {
        let src = "def f(xs):\r\n\tout = []\r\n\twhile xs:\r\n\t\tout.append(xs.pop())\r\n\t\treturn (out +\r\n\t\t        [0])\r\n";
        let m = moved(src, 5);
        assert_eq!(
            m[0].1,
            "def f(xs):\r\n\tout = []\r\n\twhile xs:\r\n\t\tout.append(xs.pop())\r\n\treturn (out +\r\n\t        [0])\r\n"
        );
    }

    #[test]
    fn a_break_after_an_if_moves_into_it() {
        let src = "def first(xs):\n    at = -1\n    for i, x in enumerate(xs):\n        if x < 0:\n            at = i\n        break\n    return at\n";
        let m = moved(src, 6);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].0, "move `break` into the `if` above (indent)");
        assert_eq!(
            m[0].1,
            src.replace("        break\n", "            break\n")
        );
        // A `return` after a loop never moves into it; an accumulation may.
        let after = "def f(xs):\n    n = 0\n    for x in xs:\n        y = x\n    n += y\n    return n\n";
        assert!(moved(after, 6).is_empty());
        let acc = moved(after, 5);
        assert_eq!(acc[0].0, "move `n += y` into the `for` above (indent)");
        assert_eq!(acc[0].1, after.replace("    n += y\n", "        n += y\n"));
    }

    #[test]
    fn blocks_with_an_else_are_left_alone() {
        let src = "def f(x):\n    if x:\n        a = 1\n        return a\n    else:\n        return 0\n";
        assert!(moved(src, 4).is_empty());
    }
}
