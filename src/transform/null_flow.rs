//! `None` in the positions the first null guards did not reach, as [`super::null_guard`]
//! targets (so they get the family's candidates in its order) or as whole fixes:
//!
//! - `find`: `xs.index(None)` (`None is not in list`) and `xs.remove(None)` (`list.remove(x):
//!   x not in list`, where only the probe can tell that `x` was `None`);
//! - `yield from None`: the generator's source, with the iterate rule;
//! - unpacking: `for a, b in pairs:` with a `None` item (the items are filtered), and
//!   `a, b = f(x)` (the value is bound to a name first, so the call runs once, then guarded);
//! - `flow`: any other failure whose message names `None` and whose probe shows a name or
//!   attribute chain of the statement evaluating to `None`: the operation it flows into picks
//!   the default (`0` for `int(x)`, `""` beside a `str` operand) and a test that expects the
//!   text `None` gets `str(x)`.

use std::ops::Range;

use regex::Regex;
use rustpython_parser::ast::{Expr, Ranged, Stmt};

use super::common::{self, is_simple_ref, one_line};
use super::null_target::{empty_for_type_name, function_returns_value, Target};
use super::Context;
use crate::edit::{Edit, Fix};
use crate::syntax::walk::{self, Node};
use crate::syntax::{Clause, StmtKind, SubExprKind, MAX_AST_DEPTH};

const NONE: &str = "NoneType";

/// `xs.index(x)` and `xs.remove(x)` whose `x` was `None`: the probe says so, or the message
/// does (`None is not in list`, captured as `none`) and the probe does not contradict it.
pub(super) fn find_targets(ctx: &Context) -> Vec<Target> {
    let named = ctx.captures.contains_key("none");
    let mut out = Vec::new();
    for call in super::sinks::calls(ctx) {
        let Expr::Attribute(func) = call.func.as_ref() else {
            continue;
        };
        let method = func.attr.as_str();
        let arity_ok = match method {
            // `index(x, start, end)`.
            "index" => (1..=3).contains(&call.args.len()),
            "remove" => call.args.len() == 1,
            _ => false,
        };
        if !arity_ok || !call.keywords.is_empty() {
            continue;
        }
        let arg = common::rng(call.args[0].range());
        let none = match ctx.probe_type(&arg) {
            Some(t) => t == NONE,
            None => named,
        };
        if !none {
            continue;
        }
        let failing = common::rng(call.range());
        let nested = ctx
            .located
            .exprs
            .iter()
            .find(|e| e.range == failing)
            .is_some_and(|e| e.in_lambda || e.in_comprehension);
        out.push(Target {
            receiver: arg,
            failing,
            store: false,
            nested,
            receiver_default: None,
            // No position for a missing value; removing it removes nothing.
            result_default: "None",
            simple: true,
            or_default_last: false,
        });
    }
    out
}

/// `yield from SOURCE` in the failing statement: `SOURCE` is what was `None`.
pub(super) fn yield_from_target(ctx: &Context) -> Option<Target> {
    let stmt = ctx.located.range.clone();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut source = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if source.is_some() || r.end <= stmt.start || r.start >= stmt.end {
            return false;
        }
        match node {
            // A nested function or lambda is not run by this statement.
            Node::Expr(Expr::Lambda(_)) => false,
            Node::Expr(Expr::YieldFrom(y)) => {
                source = Some(common::rng(y.value.range()));
                false
            }
            _ => true,
        }
    });
    let source = source?;
    Some(Target {
        receiver: source.clone(),
        failing: source,
        store: false,
        nested: false,
        receiver_default: Some("[]"),
        result_default: "[]",
        simple: true,
        or_default_last: false,
    })
}

/// Every name or attribute chain of the statement that the probe saw as `None`, with the
/// operation it flows into (its parent sub-expression) as the failing expression.
pub(super) fn flow_targets(ctx: &Context) -> Vec<Target> {
    // A `raise` is the code's own decision, and a statement with no probe has no facts.
    if ctx.probe.is_none() || ctx.located.kind == StmtKind::Raise {
        return Vec::new();
    }
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        let store = match &e.kind {
            SubExprKind::Attribute { ctx: c, .. } | SubExprKind::Subscript { ctx: c, .. } => {
                !c.is_load()
            }
            SubExprKind::Name { .. } => false,
            _ => continue,
        };
        if store || ctx.probe_type(&e.range) != Some(NONE) || !is_simple_ref(ctx.text(&e.range)) {
            continue;
        }
        // `x = y` with `y` None fails nowhere in this statement.
        let Some(parent) = common::parent_of(ctx.located, &e.range) else {
            continue;
        };
        let (receiver_default, result_default) = flow_defaults(ctx, &parent.kind, &e.range);
        out.push(Target {
            receiver: e.range.clone(),
            failing: parent.range.clone(),
            store: false,
            nested: e.in_lambda || e.in_comprehension,
            receiver_default,
            result_default,
            simple: true,
            or_default_last: false,
        });
    }
    out
}

/// The or-default for a `None` receiver and what the operation should give instead, from
/// the operation: the neutral value of the other operand's type for an operator, `0` for a
/// number conversion, nothing to invent elsewhere.
fn flow_defaults(
    ctx: &Context,
    parent: &SubExprKind,
    receiver: &Range<usize>,
) -> (Option<&'static str>, &'static str) {
    let other = match parent {
        SubExprKind::BinOp { left, right, .. } => Some(if left == receiver { right } else { left }),
        SubExprKind::AugAssign { target, value, .. } => {
            Some(if target == receiver { value } else { target })
        }
        SubExprKind::Call { func, .. } if func != receiver => {
            return match ctx.text(func) {
                "int" | "float" | "decimal.Decimal" | "Decimal" | "Fraction" => (Some("0"), "0"),
                _ => (None, "None"),
            };
        }
        _ => None,
    };
    match other
        .and_then(|o| operand_type(ctx, o, 0))
        .and_then(empty_for_type_name)
    {
        Some(d) => (Some(d), d),
        None => (None, "None"),
    }
}

/// The type of an operand: the probe's, else a string literal's, else that of the first
/// typed operand of a `+` chain (`"No. " + a + b` is a `str`; the probe evaluates names and
/// attribute chains, not operators).
fn operand_type<'a>(ctx: &'a Context, range: &Range<usize>, depth: usize) -> Option<&'a str> {
    if let Some(t) = ctx.probe_type(range) {
        return Some(t);
    }
    let text = ctx.text(range);
    let body = text.trim_start_matches(['f', 'F', 'r', 'R', 'u', 'U']);
    let prefix = text.len() - body.len();
    if prefix <= 2 && body.len() >= 2 && body.starts_with(['"', '\'']) {
        return Some("str");
    }
    // Chains are left-nested: bounded by the statement's size, capped anyway.
    if depth > 64 {
        return None;
    }
    let e = ctx.located.exprs.iter().find(|e| e.range == *range)?;
    match &e.kind {
        SubExprKind::BinOp {
            op: "+",
            left,
            right,
        } => operand_type(ctx, left, depth + 1).or_else(|| operand_type(ctx, right, depth + 1)),
        _ => None,
    }
}

/// `str(x)` for each target in a string operation (its or-default is `""`) when the test
/// expects text that shows `None` (`assert f(None) == "Value: None"`): the author meant the
/// value printed, not skipped.
pub(super) fn text_none_candidates(ctx: &Context, targets: &[Target]) -> Vec<Fix> {
    let wants = ctx
        .expected
        .is_some_and(|e| (e.starts_with('"') || e.starts_with('\'')) && e.contains("None"));
    if !wants {
        return Vec::new();
    }
    targets
        .iter()
        .filter(|t| t.receiver_default == Some("\"\""))
        .map(|t| {
            let recv = ctx.text(&t.receiver).to_string();
            Fix::new(
                format!("write `{}` as text: `str({0})`", one_line(&recv)),
                ctx.rule,
                ctx.confidence,
                vec![Edit::replacement(
                    t.receiver.clone(),
                    format!("str({recv})"),
                )],
            )
        })
        .collect()
}

/// Unpacking candidates that are not a guard on a receiver: the `None` items of a `for`
/// loop's iterable filtered out, or a computed value bound to a name and guarded.
pub(super) fn unpack_candidates(ctx: &Context) -> Vec<Fix> {
    let stmt = ctx.located.range.clone();
    let Some(found) = stmt_at(ctx, &stmt) else {
        return Vec::new();
    };
    match found {
        Stmt::For(f) if ctx.located.is_header() && unpacks(&f.target) => {
            let r = common::rng(f.iter.range());
            let text = ctx.text(&r).to_string();
            // The generator's own scope: `item` cannot clash with the loop's names.
            vec![Fix::new(
                format!("skip the None items of `{}`", one_line(&text)),
                ctx.rule,
                ctx.confidence,
                vec![Edit::replacement(
                    r,
                    format!("(item for item in {text} if item is not None)"),
                )],
            )]
        }
        Stmt::Assign(a) if a.targets.len() == 1 && unpacks(&a.targets[0]) => {
            bind_and_guard(ctx, &a.targets[0], &a.value)
        }
        _ => Vec::new(),
    }
}

/// A `'NoneType' object is not iterable` on a statement that unpacks into several names
/// (`for a, b in pairs:`, `a, b = value`), which is how Python 3.6 words an unpacked `None`:
/// `Some(true)` when the probe says the unpacked value was None (the loop's iterable is not
/// None, so an item was; the assigned value is None), `Some(false)` when it cannot say (the
/// iterable or the unpacking may be at fault: both are tried), `None` when the statement does
/// not unpack or the probe saw the iterable itself None.
pub(super) fn unpacks_none(ctx: &Context) -> Option<bool> {
    let stmt = ctx.located.range.clone();
    let (value, is_loop) = match stmt_at(ctx, &stmt)? {
        Stmt::For(f) if ctx.located.is_header() && unpacks(&f.target) => (&f.iter, true),
        Stmt::Assign(a) if a.targets.len() == 1 && unpacks(&a.targets[0]) => (&a.value, false),
        _ => return None,
    };
    match ctx.probe_type(&common::rng(value.range())) {
        None => Some(false),
        Some(t) => match (is_loop, t == "NoneType") {
            (true, true) => None,
            (true, false) | (false, true) => Some(true),
            // The assigned value is not None: something inside it iterated the None.
            (false, false) => None,
        },
    }
}

fn unpacks(target: &Expr) -> bool {
    matches!(target, Expr::Tuple(_) | Expr::List(_))
}

/// `a, b = f(x)` becomes `pair = f(x)`, a guard on `pair`, then `a, b = pair`: the call runs
/// once, as before. A value that is a name or attribute chain is guarded in place by the
/// unpack rule instead.
fn bind_and_guard(ctx: &Context, target: &Expr, value: &Expr) -> Vec<Fix> {
    let l = ctx.located;
    let value_range = common::rng(value.range());
    let value_text = ctx.text(&value_range);
    if is_simple_ref(value_text)
        || !l.starts_line
        || !matches!(l.clause, Clause::Statement)
        || l.function.is_none()
    {
        return Vec::new();
    }
    let count = match target {
        Expr::Tuple(t) => t.elts.len(),
        Expr::List(t) => t.elts.len(),
        _ => 0,
    };
    let Some(name) = fresh_name(ctx, count) else {
        return Vec::new();
    };
    let cond = format!("{name} is None");
    let mut bodies: Vec<String> = Vec::new();
    if l.in_loop {
        bodies.push("continue".into());
    }
    let returns_value = function_returns_value(ctx);
    for v in common::return_defaults(ctx, &["None"]).into_iter().take(2) {
        bodies.push(if v == "None" && !returns_value {
            "return".into()
        } else {
            format!("return {v}")
        });
    }
    let nl = ctx.source.newline();
    let unit = ctx.source.indent_unit();
    let indent = &l.indent;
    let targets = ctx.text(&common::rng(target.range()));
    let mut out = Vec::new();
    for body in bodies {
        // The guard's own checks: `continue` in a `while` loop, a clause that takes no
        // statement before it.
        if common::guard(ctx, false, &cond, &body).is_none() {
            continue;
        }
        let text = format!(
            "{name} = {value_text}{nl}{indent}if {cond}:{nl}{indent}{unit}{body}{nl}{indent}{targets} = {name}"
        );
        let what = if body == "continue" {
            "skip the iteration".to_string()
        } else {
            format!("{body} early")
        };
        out.push(Fix::new(
            format!("{what} when `{}` is None", one_line(value_text)),
            ctx.rule,
            ctx.confidence,
            vec![Edit::replacement(l.range.clone(), text)],
        ));
    }
    out
}

/// A name the enclosing function does not use: `pair` for two targets, `parts` for more,
/// then `result`, `unpacked`.
fn fresh_name(ctx: &Context, count: usize) -> Option<&'static str> {
    let func = ctx.located.function.as_ref()?;
    let body = ctx.text(&func.range);
    let first = if count == 2 { "pair" } else { "parts" };
    [first, "result", "unpacked"].into_iter().find(|n| {
        let word = Regex::new(&format!(r"\b{n}\b")).expect("a word is a valid regex");
        !word.is_match(body)
    })
}

/// The statement that starts where `range` starts (the located statement or header).
fn stmt_at<'a>(ctx: &'a Context, range: &Range<usize>) -> Option<&'a Stmt> {
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut found = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if found.is_some() || !(r.start <= range.start && range.start < r.end) {
            return false;
        }
        match node {
            Node::Stmt(s) if r.start == range.start => {
                found = Some(s);
                false
            }
            Node::Stmt(_) => true,
            _ => false,
        }
    });
    found
}
