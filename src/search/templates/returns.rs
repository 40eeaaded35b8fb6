//! Template: a branch that forgets to return (the `missing-return` family, beyond the
//! function's last statement that [`super::super::mutate`] covers).
//!
//! A function that returns a value on one path and falls off its end on another hands `None`
//! to its caller (pylint's `inconsistent-return-statements`). At the last statement of a block
//! that falls off the end (the function's body, or a branch of an `if` that ends it), the value
//! is built the way the function's other `return`s build theirs:
//! - a sibling `return` verbatim, when every local it reads is bound on the falling path
//!   (`return start, end` after the `else:` that computes `start` and `end` too);
//! - else a tuple of the sibling's arity from the names the falling block itself binds, in
//!   binding order, when it binds exactly that many (`return int(h), int(m)` elsewhere, this
//!   block binds `hours, minutes`: `return hours, minutes`); a single name for a plain value.
//!
//! Nothing is copied from the tests, and no guard is involved: the caller's `None` is cured
//! where it is made.

use std::ops::Range;

use rustpython_parser::ast::{Expr, ExprContext, Ranged, Stmt};

use crate::search::family::Family;
use crate::syntax::rng;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use super::super::mutate::{names_of, one_line};
use super::insert::{func_body, indent_at, insert_line_after};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::MissingReturn];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    if matches!(
        site.stmt,
        Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
    ) {
        return Vec::new();
    }
    let text = site.module.text();
    let sr = rng(site.stmt.range());
    let Some(block) = falling_block(func_body(func), &sr) else {
        return Vec::new();
    };
    let returns = crate::syntax::queries::value_returns(func_body(func));
    if returns.is_empty() {
        return Vec::new();
    }
    let Some((_, indent)) = indent_at(text, sr.start) else {
        return Vec::new();
    };
    let locals: Vec<String> = names_of(func).into_iter().map(|(n, _)| n).collect();
    let bound = path_bindings(func, &sr);
    // What the falling block binds up to the statement, in binding order.
    let own = stores_until(block, sr.end);
    let prior = site.priors.family(Family::MissingReturn);
    let mut values: Vec<(String, f64)> = Vec::new();
    let mut add = |v: String, w: f64| {
        if !values.iter().any(|(seen, _)| *seen == v) {
            values.push((v, w));
        }
    };
    for r in &returns {
        let v = text[rng(r.range())].to_string();
        let read = crate::syntax::queries::loaded_in_expr(r);
        if read
            .iter()
            .all(|n| !locals.contains(n) || bound.contains(n))
        {
            add(v, 1.0);
        }
        let arity = match r {
            Expr::Tuple(t) => t.elts.len(),
            _ => 1,
        };
        if own.len() == arity {
            add(own.join(", "), 0.8);
        }
    }
    let mut out = Vec::new();
    for (v, w) in values {
        let Some(e) = insert_line_after(text, sr.end, indent, &format!("return {v}")) else {
            continue;
        };
        out.push(Mutant {
            family: Family::MissingReturn,
            title: format!("`return {}` where the branch falls off the end", one_line(&v)),
            edits: vec![e],
            prior: prior * w,
            effects: Vec::new(),
        });
    }
    out
}

/// The block whose last statement is at `r`, when running off its end runs off the end of
/// the function: the function's body, or a branch of an `if` that is itself last in such a
/// block.
fn falling_block<'a>(body: &'a [Stmt], r: &Range<usize>) -> Option<&'a [Stmt]> {
    let last = body.last()?;
    let lr = rng(last.range());
    if lr == *r {
        return Some(body);
    }
    if !(lr.start <= r.start && r.end <= lr.end) {
        return None;
    }
    match last {
        Stmt::If(i) => falling_block(&i.body, r).or_else(|| falling_block(&i.orelse, r)),
        _ => None,
    }
}

/// The blocks under `stmts` that end in `return`/`raise`/`break`/`continue`: what they bind
/// never reaches the statements after them.
fn dead_ends(stmts: &[Stmt]) -> Vec<Range<usize>> {
    let roots: Vec<Node> = stmts.iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    let mut note = |b: &[Stmt]| {
        if let (Some(first), Some(last)) = (b.first(), b.last()) {
            if matches!(
                last,
                Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
            ) {
                out.push(rng(first.range()).start..rng(last.range()).end);
            }
        }
    };
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::If(i)) => {
                note(&i.body);
                note(&i.orelse);
            }
            Node::Stmt(Stmt::For(f)) => note(&f.body),
            Node::Stmt(Stmt::While(w)) => note(&w.body),
            Node::Stmt(Stmt::Try(t)) => note(&t.body),
            _ => {}
        }
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_))
        )
    });
    out
}

/// Names stored under `stmts` up to the end of `upto`, in binding order, outside the blocks
/// that never fall through and outside nested definitions.
fn stores_until(stmts: &[Stmt], upto: usize) -> Vec<String> {
    let dead = dead_ends(stmts);
    let roots: Vec<Node> = stmts.iter().map(Node::Stmt).collect();
    let mut out: Vec<String> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            let at = rng(n.range()).start;
            if matches!(n.ctx, ExprContext::Store)
                && at < upto
                && !dead.iter().any(|d| d.contains(&at))
                && !out.iter().any(|o| o == n.id.as_str())
                && n.id.as_str() != "_"
            {
                out.push(n.id.to_string());
            }
        }
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_))
                | Node::Expr(
                    Expr::Lambda(_)
                        | Expr::ListComp(_)
                        | Expr::SetComp(_)
                        | Expr::DictComp(_)
                        | Expr::GeneratorExp(_)
                )
        )
    });
    out
}

/// The names bound when the statement at `r` has run: the parameters and what the statements
/// before it on its path bind (the `if` and `else` it sits in, not a sibling branch that
/// returns).
fn path_bindings(func: &Stmt, r: &Range<usize>) -> Vec<String> {
    let mut out: Vec<String> = names_of(func)
        .into_iter()
        .filter(|(_, at)| *at == 0)
        .map(|(n, _)| n)
        .collect();
    let mut body = func_body(func);
    let within = |b: &[Stmt]| {
        b.first().is_some_and(|f| rng(f.range()).start <= r.start)
            && b.last().is_some_and(|l| r.end <= rng(l.range()).end)
    };
    while let Some(i) = body.iter().position(|s| within(std::slice::from_ref(s))) {
        out.extend(stores_until(&body[..i], usize::MAX));
        match &body[i] {
            // Only the branch the statement sits in is on its path.
            Stmt::If(s) if rng(s.range) != *r => {
                body = if within(&s.body) { &s.body } else { &s.orelse };
            }
            _ => {
                out.extend(stores_until(&body[i..=i], r.end));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::applied_at;
    use super::*;

    fn returned(src: &str, line: u32) -> Vec<(String, String, f64)> {
        applied_at(src, line, mutants)
    }

    #[test]
    fn an_else_that_computes_the_sibling_s_names_returns_it_verbatim() {
        let src = "def b(spec):\n    if isinstance(spec, str):\n        start = int(spec)\n        end = start\n        return start, end\n    else:\n        start = min(spec)\n        end = max(spec)\n";
        let m = returned(src, 8);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(
            m[0].0,
            "`return start, end` where the branch falls off the end"
        );
        assert_eq!(m[0].1, format!("{src}        return start, end\n"));
        assert!((m[0].2 - 0.05).abs() < 1e-9);
        // Not the last statement of its block: it falls into the next one.
        assert!(returned(src, 7).is_empty());
    }

    #[test]
    fn a_fall_through_after_a_returning_if_returns_its_own_names_in_the_sibling_s_shape() {
        let src = "class T:\n    def parse(self, e):\n        if isinstance(e, str):\n            h, m = e.split(':')\n            return int(h), int(m)\n        hours, minutes = divmod(e, 60)\n";
        let m = returned(src, 6);
        // `h` and `m` are bound only in the branch that returns: no verbatim copy.
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].1, format!("{src}        return hours, minutes\n"));
        assert!((m[0].2 - 0.04).abs() < 1e-9);
        // A function that never returns a value gets nothing.
        let none = "def log(xs):\n    if xs:\n        print(xs)\n        return\n    n = len(xs)\n";
        assert!(returned(none, 5).is_empty());
    }
}
