//! `zero_division`: repairs `ZeroDivisionError` raised by `a / b`, `a // b`, `a % b` (also
//! `a /= b` and `divmod(a, b)`).
//!
//! The failing division is the one the carets mark (CPython marks the operator), else the
//! only division of the statement, else the first two whose divisor is not a non-zero
//! literal. Candidates, in rank order:
//! 1. a guard clause returning a default that fits the function: the empty value of the type
//!    the failing test expects, a literal the function already returns, else `0.0` for `/`
//!    and `0` for `//` and `%` (`0.0` when the probe shows float operands). The condition is
//!    `if not xs:` when the divisor is `len(xs)`, else `if b == 0:`;
//! 2. an inline conditional: `(a / b if b else 0.0)`;
//!
//! In a loop the inline conditional comes first (the loop goes on with a value for this
//! item), then `continue`, then the guard returning from the function.

use std::ops::Range;

use rustpython_parser::ast::{Expr, Ranged};

use super::common::{self as shared, rng};
use crate::edit::{Edit, Fix};
use crate::syntax::{SubExpr, SubExprKind};
use crate::transform::Context;

struct Division<'a> {
    expr: &'a SubExpr,
    op: &'static str,
    left: Range<usize>,
    divisor: Range<usize>,
    /// `a /= b`: only a guard or a rewritten value can help.
    aug: bool,
}

pub fn candidates(ctx: &Context) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for d in divisions(ctx) {
        for f in fixes_for(ctx, &d) {
            if !out.iter().any(|o| o.edits == f.edits) {
                out.push(f);
            }
        }
    }
    out
}

fn divisions<'a>(ctx: &'a Context) -> Vec<Division<'a>> {
    let mut all = Vec::new();
    for e in &ctx.located.exprs {
        match &e.kind {
            SubExprKind::BinOp { op, left, right } if matches!(*op, "/" | "//" | "%") => {
                // `"%s" % x` is formatting, not a modulo.
                let l = ctx.text(left).trim_start();
                if *op == "%" && (l.starts_with(['"', '\'']) || l.starts_with("f\"")) {
                    continue;
                }
                all.push(Division {
                    expr: e,
                    op,
                    left: left.clone(),
                    divisor: right.clone(),
                    aug: false,
                });
            }
            SubExprKind::AugAssign { op, target, value } if matches!(*op, "/=" | "//=" | "%=") => {
                all.push(Division {
                    expr: e,
                    op: op.trim_end_matches('='),
                    left: target.clone(),
                    divisor: value.clone(),
                    aug: true,
                });
            }
            SubExprKind::Call { func, args: 2, .. } if ctx.text(func) == "divmod" => {
                if let Some(Expr::Call(c)) = shared::find_expr(ctx.module, &e.range) {
                    if let [a, b] = c.args.as_slice() {
                        all.push(Division {
                            expr: e,
                            op: "divmod",
                            left: rng(a.range()),
                            divisor: rng(b.range()),
                            aug: false,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    // A non-zero literal divisor cannot be the one.
    all.retain(|d| {
        let t = ctx.text(&d.divisor).trim();
        !t.parse::<f64>().is_ok_and(|v| v != 0.0)
    });
    if let Some(focus) = &ctx.focus {
        let hit: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                let r = &d.expr.range;
                // The operator between the operands, or the whole expression.
                (d.left.end <= focus.start && focus.end <= d.divisor.start)
                    || *r == *focus
                    || (d.op == "divmod" && r.start <= focus.start && focus.end <= r.end)
            })
            .map(|(i, _)| i)
            .collect();
        if let Some(&i) = hit.iter().min_by_key(|&&i| all[i].expr.range.len()) {
            return vec![all.swap_remove(i)];
        }
    }
    if let Some(probe) = ctx.probe {
        // A divisor the probe saw as a number is a candidate; one it saw as something else
        // (a Decimal, a numpy array...) is unlikely to raise this error.
        let numeric: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(probe.type_of(&d.divisor), Some("int" | "float" | "bool")))
            .map(|(i, _)| i)
            .collect();
        if numeric.len() == 1 {
            return vec![all.swap_remove(numeric[0])];
        }
    }
    all.truncate(2);
    all
}

fn fixes_for(ctx: &Context, d: &Division) -> Vec<Fix> {
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let mut out = Vec::new();
    let divisor = ctx.text(&d.divisor).trim().to_string();
    let nested = d.expr.in_lambda || d.expr.in_comprehension;
    // `if not xs` for `len(xs)`; `if b == 0` for a name; nothing for a call (evaluated twice).
    let len_arg = len_argument(ctx, &d.divisor);
    let (zero_cond, nonzero_cond, nonzero_words) = match &len_arg {
        Some(xs) if shared::is_simple_ref(xs) => (
            format!("not {xs}"),
            xs.clone(),
            format!("`{xs}` is not empty"),
        ),
        _ if is_pure(&divisor) => (
            format!("{divisor} == 0"),
            divisor.clone(),
            format!("`{divisor}` is not zero"),
        ),
        _ => (String::new(), String::new(), String::new()),
    };
    let float = ctx.probe.is_some_and(|p| {
        p.type_of(&d.left) == Some("float") || p.type_of(&d.divisor) == Some("float")
    }) || [&d.left, &d.divisor].iter().any(|r| {
        let t = ctx.text(r).trim();
        t.contains('.') && t.parse::<f64>().is_ok()
    });
    let value_default = match d.op {
        "/" => "0.0",
        "divmod" => {
            if float {
                "(0.0, 0.0)"
            } else {
                "(0, 0)"
            }
        }
        _ if float => "0.0",
        _ => "0",
    };
    let returned = shared::is_returned(ctx, &d.expr.range);
    // In a `return`, the function's value is computed from the division: its type fits.
    let in_return = ctx.located.kind == crate::syntax::StmtKind::Return;
    let defaults = shared::return_defaults(ctx, &[if in_return { value_default } else { "None" }]);
    let guard_default = defaults.first().cloned().unwrap_or_else(|| "None".into());

    let mut guard_fix = None;
    let mut continue_fix = None;
    if !zero_cond.is_empty() {
        if let Some(edit) =
            shared::guard(ctx, nested, &zero_cond, &format!("return {guard_default}"))
        {
            guard_fix = Some(fix(
                format!("return {guard_default} early when {zero_cond}"),
                vec![edit],
            ));
        }
        if let Some(edit) = shared::guard(ctx, nested, &zero_cond, "continue") {
            continue_fix = Some(fix(
                format!("skip the iteration when {zero_cond}"),
                vec![edit],
            ));
        }
    }
    let inline_fix = if nonzero_cond.is_empty() {
        None
    } else if d.aug {
        // `total /= n` → `total = total / n if n else 0.0`? That changes the statement's
        // shape; only the guard is offered.
        None
    } else {
        let default = if returned {
            guard_default.clone()
        } else {
            value_default.to_string()
        };
        let text = ctx.text(&d.expr.range);
        let inline = shared::parenthesize(
            ctx,
            &d.expr.range,
            format!("{text} if {nonzero_cond} else {default}"),
        );
        Some(fix(
            format!(
                "evaluate `{}` only when {nonzero_words}",
                shared::one_line(text)
            ),
            vec![Edit::replacement(d.expr.range.clone(), inline)],
        ))
    };
    if ctx.located.in_loop {
        out.extend(inline_fix);
        out.extend(continue_fix);
        out.extend(guard_fix);
    } else {
        out.extend(guard_fix);
        out.extend(inline_fix);
    }
    out
}

/// The argument text of a divisor `len(xs)`.
fn len_argument(ctx: &Context, divisor: &Range<usize>) -> Option<String> {
    let Some(Expr::Call(c)) = shared::find_expr(ctx.module, divisor) else {
        return None;
    };
    let is_len = matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "len");
    if !is_len || c.args.len() != 1 || !c.keywords.is_empty() {
        return None;
    }
    Some(ctx.text(&rng(c.args[0].range())).to_string())
}

/// Safe to evaluate twice: names, attribute chains, constant subscripts, and arithmetic of
/// those without calls.
fn is_pure(text: &str) -> bool {
    if shared::is_simple_ref(text) {
        return true;
    }
    !text.contains('(')
        && !text.contains('\n')
        && text
            .split(['+', '-', '*', ' '])
            .filter(|p| !p.is_empty())
            .all(|p| shared::is_simple_ref(p) || p.parse::<f64>().is_ok())
}
