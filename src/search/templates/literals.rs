//! Template: a literal of the wrong shape (`[]` / `[[]]` / `[n]`, `""` / `None`, `{}` / `set()`).
//!
//! `0` ↔ `1` (the start of a product or a sum) is already ±1 on the literal in
//! [`crate::search::mutate`]; this adds the reshapings no single-token change reaches.

use rustpython_parser::ast::{Constant, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::hint::Effect;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::operators::{func_sig, mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::LiteralShape];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let text = site.module.text();
    let returned = match site.stmt {
        Stmt::Return(r) => r.value.as_deref().map(|v| rng(v.range())),
        _ => None,
    };
    let params: Vec<&str> = site
        .func
        .and_then(func_sig)
        .map(|(_, p)| p)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !matches!(*p, "self" | "cls"))
        .collect();
    let mut out = Vec::new();
    let push = |out: &mut Vec<Mutant>, e: &Expr, to: String, w: f64| {
        let r = rng(e.range());
        let fx = if returned.as_ref() == Some(&r) {
            vec![Effect::Becomes(to.clone())]
        } else {
            Vec::new()
        };
        out.push(mutant(
            site,
            Family::LiteralShape,
            format!("`{}` → `{to}`", &text[r.clone()]),
            vec![Edit::replacement(r, to)],
            w,
            fx,
        ));
    };
    let exprs = own_exprs(site.stmt);
    // The `[]` inside `[[]]` is part of that shape, not a literal of its own.
    let nested: Vec<_> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::List(l) if l.elts.len() == 1 => Some(rng(l.elts[0].range())),
            _ => None,
        })
        .collect();
    for e in exprs {
        match e {
            Expr::List(l) if l.elts.is_empty() && !nested.contains(&rng(l.range)) => {
                push(&mut out, e, "[[]]".into(), 1.0);
                for p in &params {
                    push(&mut out, e, format!("[{p}]"), 0.5 / params.len() as f64);
                }
            }
            Expr::List(l) if l.elts.len() == 1 => match &l.elts[0] {
                Expr::List(inner) if inner.elts.is_empty() => push(&mut out, e, "[]".into(), 1.0),
                Expr::Name(_) => push(&mut out, e, "[]".into(), 0.5),
                _ => {}
            },
            Expr::Constant(c) => match &c.value {
                Constant::Str(s) if s.is_empty() => push(&mut out, e, "None".into(), 1.0),
                Constant::None if !in_identity_test(site.stmt, e) => {
                    push(&mut out, e, "\"\"".into(), 0.6)
                }
                _ => {}
            },
            // `seen = {}` for a set the function `.add`s to, `set()` for a mapping it indexes.
            Expr::Dict(d) if d.keys.is_empty() => {
                if let Some(x) = assigned_name(site.stmt) {
                    if site.func.is_some_and(|f| calls_method(f, x, "add")) {
                        push(&mut out, e, "set()".into(), 1.0);
                    }
                }
            }
            Expr::Call(c)
                if c.args.is_empty()
                    && matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "set") =>
            {
                if let Some(x) = assigned_name(site.stmt) {
                    if site.func.is_some_and(|f| stores_item(f, x)) {
                        push(&mut out, e, "{}".into(), 1.0);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `x` of `x = ...`.
fn assigned_name(stmt: &Stmt) -> Option<&str> {
    match stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => match &a.targets[0] {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// `x is None` compares identity: `x is ""` is never the fix.
fn in_identity_test(stmt: &Stmt, e: &Expr) -> bool {
    let r = rng(e.range());
    own_exprs(stmt).into_iter().any(|c| {
        matches!(c, Expr::Compare(cmp)
            if cmp.comparators.iter().chain(std::iter::once(cmp.left.as_ref())).any(|o| rng(o.range()) == r))
    })
}

fn body_walk<'a>(func: &'a Stmt, mut f: impl FnMut(&'a Expr)) {
    let body = match func {
        Stmt::FunctionDef(d) => &d.body,
        Stmt::AsyncFunctionDef(d) => &d.body,
        _ => return,
    };
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(e) = node {
            f(e);
        }
        true
    });
}

/// Whether the function calls `x.method(...)`.
fn calls_method(func: &Stmt, x: &str, method: &str) -> bool {
    let mut found = false;
    body_walk(func, |e| {
        if let Expr::Call(c) = e {
            if let Expr::Attribute(a) = c.func.as_ref() {
                if a.attr.as_str() == method
                    && matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == x)
                {
                    found = true;
                }
            }
        }
    });
    found
}

/// Whether the function assigns `x[k] = ...`.
fn stores_item(func: &Stmt, x: &str) -> bool {
    let mut found = false;
    body_walk(func, |e| {
        if let Expr::Subscript(s) = e {
            if matches!(s.ctx, rustpython_parser::ast::ExprContext::Store)
                && matches!(s.value.as_ref(), Expr::Name(n) if n.id.as_str() == x)
            {
                found = true;
            }
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn lists_reshape() {
        let src = "def subsets(xs, n):\n    out = []\n    acc = [[]]\n    return out\n";
        assert_eq!(
            titles(src, 2, mutants),
            vec![
                pair("`[]` → `[[]]`", "    out = [[]]"),
                pair("`[]` → `[xs]`", "    out = [xs]"),
                pair("`[]` → `[n]`", "    out = [n]"),
            ]
        );
        assert_eq!(
            titles(src, 3, mutants),
            vec![pair("`[[]]` → `[]`", "    acc = []")]
        );
    }

    #[test]
    fn empty_strings_none_and_sets() {
        let src = "def f(x):\n    if x is None:\n        return ''\n    return None\n";
        assert_eq!(
            titles(src, 3, mutants),
            vec![pair("`''` → `None`", "        return None")]
        );
        assert_eq!(
            titles(src, 4, mutants),
            vec![pair("`None` → `\"\"`", "    return \"\"")]
        );
        // `is None` stays.
        assert!(titles(src, 2, mutants).is_empty());
        let seen =
            "def f(xs):\n    seen = {}\n    for x in xs:\n        seen.add(x)\n    return seen\n";
        assert_eq!(
            titles(seen, 2, mutants),
            vec![pair("`{}` → `set()`", "    seen = set()")]
        );
        let counts =
            "def f(xs):\n    c = set()\n    for x in xs:\n        c[x] = 1\n    return c\n";
        assert_eq!(
            titles(counts, 2, mutants),
            vec![pair("`set()` → `{}`", "    c = {}")]
        );
        // A dict that is indexed stays a dict.
        let d = "def f(xs):\n    c = {}\n    for x in xs:\n        c[x] = 1\n    return c\n";
        assert!(titles(d, 2, mutants).is_empty());
    }
}
