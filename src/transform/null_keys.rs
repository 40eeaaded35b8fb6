//! `None` in a sort key: `'<' not supported between instances of 'NoneType' and 'int'` raised
//! inside `sorted`, `list.sort`, `min` or `max`, where the failing statement shows no
//! comparison of its own (the comparison happens in C, between two keys).
//!
//! The key is made total instead of inventing a value: `key=lambda r: r.score` becomes
//! `key=lambda r: (r.score is None, r.score)`. Tuples compare their first items first, so the
//! items whose key is `None` go last and two `None` keys are never compared with `<` (tuples
//! test equal items with `==`). With `reverse=True` (and for `max`) the flag is negated, so
//! `None` still goes last (is never the maximum); for `min` it is never the minimum. A call
//! without a key whose items are themselves `None` gets `key=lambda item: (item is None, item)`.
//! An or-default (`r.score or 0`) is not proposed: it ranks a missing score among the real ones.

use std::ops::Range;

use rustpython_parser::ast::{self, Expr, Ranged};

use super::common::{self, is_simple_ref, one_line};
use super::Context;
use crate::edit::{Edit, Fix};

/// The sorting calls of the failing statement and the edit that makes each key total, focused
/// calls first (see [`super::sinks::calls`]).
pub(super) fn candidates(ctx: &Context) -> Vec<Fix> {
    let mut out = Vec::new();
    for call in super::sinks::calls(ctx) {
        let Some(kind) = sorter(ctx, call) else {
            continue;
        };
        let reverse = match keyword(call, "reverse") {
            None => false,
            Some(Expr::Constant(c)) => matches!(c.value, ast::Constant::Bool(true)),
            // `reverse=descending`: which end `None` should go to is not known.
            Some(_) => continue,
        };
        // `None` last for an ascending sort and for `min`, first (then last once reversed)
        // for a descending sort and for `max`.
        let flag = if reverse || kind == "max" {
            "is not None"
        } else {
            "is None"
        };
        let place = match kind {
            "min" => "never the minimum",
            "max" => "never the maximum",
            _ => "last",
        };
        match keyword(call, "key") {
            Some(Expr::Lambda(l)) => {
                let body = common::rng(l.body.range());
                let text = ctx.text(&body).to_string();
                // The key is evaluated twice: only a name or attribute chain.
                if !is_simple_ref(&text) {
                    continue;
                }
                out.push(Fix::new(
                    format!("rank the items whose `{}` is None {place}", one_line(&text)),
                    ctx.rule,
                    ctx.confidence,
                    vec![Edit::replacement(body, format!("({text} {flag}, {text})"))],
                ));
            }
            Some(_) => {}
            None if !call.keywords.iter().any(|k| k.arg.is_none()) => {
                let key = format!("key=lambda item: (item {flag}, item)");
                let edit = match last_argument_end(call) {
                    Some(end) => Edit::insertion(end, format!(", {key}")),
                    // `x.sort()`: inside its empty parentheses.
                    None => Edit::insertion(common::rng(call.range()).end - 1, key),
                };
                out.push(Fix::new(
                    format!("rank the None items {place}"),
                    ctx.rule,
                    ctx.confidence,
                    vec![edit],
                ));
            }
            None => {}
        }
    }
    out
}

/// `sorted(...)`, `min(...)`, `max(...)` with one positional argument, or `x.sort(...)` with
/// none: the call's kind (`sorted` for both sorts).
fn sorter(ctx: &Context, call: &ast::ExprCall) -> Option<&'static str> {
    match call.func.as_ref() {
        Expr::Name(n) if call.args.len() == 1 => match ctx.text(&common::rng(n.range())) {
            "sorted" => Some("sorted"),
            "min" => Some("min"),
            "max" => Some("max"),
            _ => None,
        },
        Expr::Attribute(a) if a.attr.as_str() == "sort" && call.args.is_empty() => Some("sorted"),
        _ => None,
    }
}

fn keyword<'a>(call: &'a ast::ExprCall, name: &str) -> Option<&'a Expr> {
    call.keywords
        .iter()
        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
        .map(|k| &k.value)
}

/// Where a new keyword argument goes: after the last argument (a trailing comma stays after
/// it); `None` for empty parentheses.
fn last_argument_end(call: &ast::ExprCall) -> Option<usize> {
    let mut ends: Vec<Range<usize>> = call.args.iter().map(|a| common::rng(a.range())).collect();
    ends.extend(call.keywords.iter().map(|k| common::rng(k.range())));
    ends.iter().map(|r| r.end).max()
}
