//! Typed sinks: an operation that names the type it wanted gets its items converted to it.
//!
//! - `join_str`: `sequence item 0: expected str instance, Token found` from `sep.join(items)`
//!   → `str(x)` around the element of a comprehension or generator argument
//!   (`", ".join(str(t) for t in tokens)`), else `sep.join(map(str, items))`;
//! - `index_int`: `'str' object cannot be interpreted as an integer` from a call such as
//!   `range(n)` → `int(n)` around the argument the probe saw as a `str`.
//!
//! `None` items are left to the null guards (`str(None)` is `"None"`, rarely what is meant)
//! and `bytes` items are not converted (`str(b"x")` is `"b'x'"`).

use rustpython_parser::ast::{Expr, Ranged};

use super::common::one_line;
use super::Context;
use crate::edit::{Edit, Fix};
use crate::syntax::walk::{self, Node};
use crate::syntax::{rng, MAX_AST_DEPTH};

/// The calls inside the failing statement, outermost first, those under the carets first.
pub(super) fn calls<'a>(ctx: &'a Context) -> Vec<&'a rustpython_parser::ast::ExprCall> {
    let stmt = ctx.located.range.clone();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if r.end <= stmt.start || r.start >= stmt.end {
            return false;
        }
        if let Node::Expr(Expr::Call(c)) = node {
            out.push(c);
        }
        true
    });
    if let Some(f) = &ctx.focus {
        // Stable: the focused calls move to the front, each group keeps source order.
        out.sort_by_key(|c| {
            let r = rng(c.range());
            !(r.start <= f.start && f.end <= r.end)
        });
    }
    out
}

pub fn join_str(ctx: &Context) -> Vec<Fix> {
    let found = ctx.captures.get("found").map(String::as_str);
    if matches!(found, Some("NoneType" | "bytes" | "bytearray")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for call in calls(ctx) {
        let Expr::Attribute(func) = call.func.as_ref() else {
            continue;
        };
        if func.attr.as_str() != "join" || call.args.len() != 1 || !call.keywords.is_empty() {
            continue;
        }
        let arg = &call.args[0];
        let elt = match arg {
            Expr::GeneratorExp(g) => Some(&g.elt),
            Expr::ListComp(l) => Some(&l.elt),
            _ => None,
        };
        match elt {
            Some(elt) => {
                let r = rng(elt.range());
                let text = ctx.text(&r).to_string();
                if text.starts_with("str(") {
                    continue;
                }
                out.push(Fix::new(
                    format!("convert each item to str: `str({})`", one_line(&text)),
                    ctx.rule,
                    ctx.confidence,
                    vec![Edit::replacement(r, format!("str({text})"))],
                ));
            }
            None => {
                if matches!(arg, Expr::Starred(_)) {
                    continue;
                }
                let r = rng(arg.range());
                let text = ctx.text(&r).to_string();
                out.push(Fix::new(
                    format!("join the items as str: `map(str, {})`", one_line(&text)),
                    ctx.rule,
                    ctx.confidence,
                    vec![Edit::replacement(r, format!("map(str, {text})"))],
                ));
            }
        }
    }
    out
}

pub fn index_int(ctx: &Context) -> Vec<Fix> {
    let mut out = Vec::new();
    for call in calls(ctx) {
        for arg in &call.args {
            let r = rng(arg.range());
            if ctx.probe_type(&r) != Some("str") {
                continue;
            }
            let text = ctx.text(&r).to_string();
            out.push(Fix::new(
                format!("convert `{}` to int", one_line(&text)),
                ctx.rule,
                ctx.confidence,
                vec![Edit::replacement(r, format!("int({text})"))],
            ));
        }
    }
    out
}
