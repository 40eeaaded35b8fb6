//! `index_guard`: repairs `IndexError` (`list index out of range`, `tuple`/`string index out of
//! range`, `pop from empty list`).
//!
//! For an index out of range, the classic off-by-one patterns come first, because when the
//! code shows one it is what a human would fix:
//! - `xs[len(xs)]` → `xs[len(xs) - 1]` (then `xs[-1]`);
//! - `for i in range(len(xs) + 1): xs[i]` → `range(len(xs))`;
//! - `for i in range(1, len(xs) + 1): xs[i]` → `xs[i - 1]` (the loop counts from 1), then
//!   `range(1, len(xs))`;
//! - `for i in range(len(xs)): xs[i + 1]` → `range(len(xs) - 1)`;
//! - `while i <= len(xs): xs[i]` → `while i < len(xs)`.
//!
//! Then a guard: `if not xs: return DEFAULT` for a constant index, `if i >= len(xs): ...` for a
//! variable one (`continue` first in a loop), then an inline conditional around the subscript.
//! For `pop from empty list`: `if not xs: break` in a loop, a guard clause, and
//! `(xs.pop() if xs else None)`.

use std::ops::Range;

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};
use serde::{Deserialize, Serialize};

use crate::edit::{Edit, Fix};
use crate::syntax::{SubExpr, SubExprKind};
use crate::transform::common::{self as shared, rng};
use crate::transform::Context;

const SEQUENCE_TYPES: &[&str] = &[
    "list",
    "tuple",
    "str",
    "bytes",
    "range",
    "deque",
    "bytearray",
];

/// The rule's params: `operation` is what raised (`subscript` when absent).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `xs[i]`: `list index out of range`.
    Subscript,
    /// `xs.pop()`: `pop from empty list`.
    Pop,
}

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    let fixes = match params.operation.unwrap_or(Operation::Subscript) {
        Operation::Pop => pop_targets(ctx)
            .into_iter()
            .flat_map(|(call, recv)| pop_fixes(ctx, call, &recv))
            .collect::<Vec<_>>(),
        Operation::Subscript => subscript_targets(ctx)
            .into_iter()
            .flat_map(|t| subscript_fixes(ctx, t))
            .collect(),
    };
    for f in fixes {
        if !out.iter().any(|o| o.edits == f.edits) {
            out.push(f);
        }
    }
    out
}

struct Sub<'a> {
    expr: &'a SubExpr,
    value: Range<usize>,
    slice: Range<usize>,
}

fn subscript_targets<'a>(ctx: &'a Context) -> Vec<Sub<'a>> {
    let mut all: Vec<Sub> = ctx
        .located
        .exprs
        .iter()
        .filter_map(|e| match &e.kind {
            SubExprKind::Subscript {
                value,
                slice,
                ctx: c,
            } if c.is_load() => Some(Sub {
                expr: e,
                value: value.clone(),
                slice: slice.clone(),
            }),
            _ => None,
        })
        .filter(|s| {
            !matches!(
                shared::find_expr(ctx.module, &s.slice),
                Some(Expr::Slice(_))
            )
        })
        .collect();
    if let Some(focus) = &ctx.focus {
        let best = all
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                let r = &s.expr.range;
                *r == *focus
                    || (r.start <= focus.start && focus.end <= r.end && focus.start >= s.value.end)
                    || (focus.start <= r.start && r.end <= focus.end)
            })
            .min_by_key(|(_, s)| s.expr.range.len())
            .map(|(i, _)| i);
        if let Some(i) = best {
            return vec![all.swap_remove(i)];
        }
    }
    if let Some(probe) = ctx.probe {
        let seqs: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                probe
                    .type_of(&s.value)
                    .is_some_and(|t| SEQUENCE_TYPES.contains(&t))
            })
            .map(|(i, _)| i)
            .collect();
        if !seqs.is_empty() {
            return all
                .into_iter()
                .enumerate()
                .filter(|(i, _)| seqs.contains(i))
                .map(|(_, s)| s)
                .collect();
        }
    }
    all.truncate(2);
    all
}

fn subscript_fixes(ctx: &Context, t: Sub) -> Vec<Fix> {
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let v = ctx.text(&t.value).to_string();
    let s = ctx.text(&t.slice).to_string();
    let mut out = Vec::new();
    let slice_expr = shared::find_expr(ctx.module, &t.slice);

    // `xs[len(xs)]`.
    if is_len_of(ctx, slice_expr, &v) {
        out.push(fix(
            format!("index the last element: `{v}[{s} - 1]`"),
            vec![Edit::replacement(t.slice.clone(), format!("{s} - 1"))],
        ));
        out.push(fix(
            format!("index the last element: `{v}[-1]`"),
            vec![Edit::replacement(t.slice.clone(), "-1")],
        ));
    }
    // Loop bounds.
    out.extend(loop_fixes(ctx, &t, slice_expr, &v));

    // Guards.
    let nested = t.expr.in_lambda || t.expr.in_comprehension;
    let constant = slice_expr.and_then(int_constant);
    let cond_missing = match constant {
        Some(0) | Some(-1) => Some(format!("not {v}")),
        Some(k) if k > 0 => Some(format!("len({v}) <= {k}")),
        Some(k) => Some(format!("len({v}) < {}", -k)),
        None if shared::is_simple_ref(&s) => Some(format!("{s} >= len({v})")),
        None => None,
    };
    let cond_present = match constant {
        Some(0) | Some(-1) => Some(v.clone()),
        Some(k) if k > 0 => Some(format!("len({v}) > {k}")),
        Some(k) => Some(format!("len({v}) >= {}", -k)),
        None if shared::is_simple_ref(&s) => Some(format!("{s} < len({v})")),
        None => None,
    };
    if let (Some(cond), true) = (&cond_missing, shared::is_simple_ref(&v)) {
        if let Some(edit) = shared::guard(ctx, nested, cond, "continue") {
            out.push(fix(format!("skip the iteration when {cond}"), vec![edit]));
        }
        let defaults = shared::return_defaults(ctx, &["None"]);
        if let Some(d) = defaults.first() {
            if let Some(edit) = shared::guard(ctx, nested, cond, &format!("return {d}")) {
                out.push(fix(format!("return {d} early when {cond}"), vec![edit]));
            }
        }
    }
    // `None` as an operand only moves the failure: no inline conditional there.
    let operand = shared::parent_of(ctx.located, &t.expr.range).is_some_and(|p| {
        matches!(
            p.kind,
            SubExprKind::BinOp { .. }
                | SubExprKind::AugAssign { .. }
                | SubExprKind::UnaryOp { .. }
                | SubExprKind::Compare { .. }
                | SubExprKind::Attribute { .. }
                | SubExprKind::Subscript { .. }
        )
    });
    if let (Some(cond), true, false) = (&cond_present, shared::is_simple_ref(&v), operand) {
        let default = if shared::is_returned(ctx, &t.expr.range) {
            shared::return_defaults(ctx, &["None"])
                .into_iter()
                .next()
                .unwrap_or_else(|| "None".into())
        } else {
            "None".into()
        };
        let sub = ctx.text(&t.expr.range);
        let inline = shared::parenthesize(
            ctx,
            &t.expr.range,
            format!("{sub} if {cond} else {default}"),
        );
        out.push(fix(
            format!("evaluate `{}` only when {cond}", shared::one_line(sub)),
            vec![Edit::replacement(t.expr.range.clone(), inline)],
        ));
    }
    out
}

/// `len(V)` where V is written as `value`.
fn is_len_of(ctx: &Context, e: Option<&Expr>, value: &str) -> bool {
    let Some(Expr::Call(c)) = e else { return false };
    matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "len")
        && c.args.len() == 1
        && c.keywords.is_empty()
        && ctx.text(&rng(c.args[0].range())) == value
}

fn int_constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Constant(c) => match &c.value {
            ast::Constant::Int(i) => i.to_string().parse().ok(),
            _ => None,
        },
        Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => {
            int_constant(&u.operand).map(|v| -v)
        }
        _ => None,
    }
}

fn name_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n.id.as_str()),
        _ => None,
    }
}

/// `NAME + 1` → NAME.
fn plus_one_of(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::BinOp(b)
            if matches!(b.op, ast::Operator::Add) && int_constant(&b.right) == Some(1) =>
        {
            Some(&b.left)
        }
        _ => None,
    }
}

/// Off-by-one fixes in the bounds of the loop that drives the index.
fn loop_fixes(ctx: &Context, t: &Sub, slice: Option<&Expr>, v: &str) -> Vec<Fix> {
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let mut out = Vec::new();
    let Some(slice) = slice else { return out };
    // The loop variable, and whether the index is `var + 1`.
    let (var, plus_one) = match (name_of(slice), plus_one_of(slice).and_then(name_of)) {
        (Some(n), _) => (n, false),
        (None, Some(n)) => (n, true),
        _ => return out,
    };
    for stmt in shared::enclosing_stmts(ctx.module, &ctx.located.range)
        .into_iter()
        .rev()
    {
        match stmt {
            Stmt::For(f) if name_of(&f.target) == Some(var) => {
                let Expr::Call(call) = f.iter.as_ref() else {
                    return out;
                };
                if name_of(&call.func) != Some("range") || !call.keywords.is_empty() {
                    return out;
                }
                let (start, stop) = match call.args.as_slice() {
                    [stop] => (None, stop),
                    [start, stop] => (Some(start), stop),
                    _ => return out,
                };
                let stop_r = rng(stop.range());
                let stop_t = ctx.text(&stop_r).to_string();
                let starts_at_one = start.and_then(int_constant) == Some(1);
                if plus_one {
                    // `range(n)` with `xs[i + 1]`: stop one earlier.
                    out.push(fix(
                        format!("stop the loop one earlier: `range(... {stop_t} - 1)`"),
                        vec![Edit::replacement(stop_r, format!("{stop_t} - 1"))],
                    ));
                    return out;
                }
                if let Some(inner) = plus_one_of(stop) {
                    let inner_t = ctx.text(&rng(inner.range())).to_string();
                    let bound = fix(
                        format!("stop the loop at `{inner_t}`, not `{stop_t}`"),
                        vec![Edit::replacement(stop_r.clone(), inner_t.clone())],
                    );
                    let shift = fix(
                        format!("the loop counts from 1: index `{v}[{var} - 1]`"),
                        vec![Edit::replacement(t.slice.clone(), format!("{var} - 1"))],
                    );
                    if starts_at_one {
                        out.push(shift);
                        out.push(bound);
                    } else {
                        out.push(bound);
                    }
                } else if starts_at_one && is_len_of(ctx, Some(stop), v) {
                    // `range(1, len(xs))` cannot overrun `xs[i]`; nothing to shift.
                }
                return out;
            }
            Stmt::While(w) => {
                let Expr::Compare(c) = w.test.as_ref() else {
                    continue;
                };
                if c.ops.len() != 1 || name_of(&c.left) != Some(var) || plus_one {
                    continue;
                }
                if !matches!(c.ops[0], ast::CmpOp::LtE) {
                    continue;
                }
                let left_end = rng(c.left.range()).end;
                let right_start = rng(c.comparators[0].range()).start;
                let between = ctx.text(&(left_end..right_start));
                if let Some(i) = between.find("<=") {
                    let at = left_end + i;
                    out.push(fix(
                        format!("loop while `{var} <` the bound, not `<=`"),
                        vec![Edit::replacement(at..at + 2, "<")],
                    ));
                }
                return out;
            }
            _ => {}
        }
    }
    out
}

/// `xs.pop(...)` calls and their receivers.
fn pop_targets<'a>(ctx: &'a Context) -> Vec<(&'a SubExpr, Range<usize>)> {
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        let SubExprKind::Call { func, .. } = &e.kind else {
            continue;
        };
        let attr = ctx.located.exprs.iter().find_map(|a| match &a.kind {
            SubExprKind::Attribute { receiver, name, .. } if a.range == *func && name == "pop" => {
                Some(receiver.clone())
            }
            _ => None,
        });
        if let Some(recv) = attr {
            out.push((e, recv));
        }
    }
    if let Some(focus) = &ctx.focus {
        let hit: Vec<(&SubExpr, Range<usize>)> = out
            .iter()
            .filter(|(e, _)| {
                let r = &e.range;
                (r.start <= focus.start && focus.end <= r.end)
                    || (focus.start <= r.start && r.end <= focus.end)
            })
            .cloned()
            .collect();
        if !hit.is_empty() {
            return hit;
        }
    }
    out.truncate(2);
    out
}

fn pop_fixes(ctx: &Context, call: &SubExpr, recv: &Range<usize>) -> Vec<Fix> {
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let v = ctx.text(recv).to_string();
    let mut out = Vec::new();
    if !shared::is_simple_ref(&v) {
        return out;
    }
    let nested = call.in_lambda || call.in_comprehension;
    let cond = format!("not {v}");
    if let Some(edit) = shared::guard(ctx, nested, &cond, "break") {
        out.push(fix(
            format!("leave the loop when `{v}` is empty"),
            vec![edit],
        ));
    }
    let defaults = shared::return_defaults(ctx, &["None"]);
    if let Some(d) = defaults.first() {
        if let Some(edit) = shared::guard(ctx, nested, &cond, &format!("return {d}")) {
            out.push(fix(
                format!("return {d} early when `{v}` is empty"),
                vec![edit],
            ));
        }
    }
    let text = ctx.text(&call.range);
    let default = if shared::is_returned(ctx, &call.range) {
        defaults.first().cloned().unwrap_or_else(|| "None".into())
    } else {
        "None".into()
    };
    let inline = shared::parenthesize(ctx, &call.range, format!("{text} if {v} else {default}"));
    out.push(fix(
        format!("pop only when `{v}` is not empty"),
        vec![Edit::replacement(call.range.clone(), inline)],
    ));
    out
}
