//! `null_guard`: repairs an operation on `None` (`'NoneType' object has no attribute 'x'`, is
//! not subscriptable / iterable / callable, has no `len()`, unsupported operand, an ordering
//! comparison, unpacking into several names).
//!
//! It finds the expression that was `None` (the receiver), using, in order, the probe's types,
//! the traceback's carets and the rule's captures, then proposes in rank order:
//! 0. for a parameter defaulting to `None`, its lost default assigned back with a value the
//!    code gives it elsewhere (`if when is None: when = self.clock()`, see `null_default`);
//!    for a call made as a statement, `if f is not None: f(...)`; then, in the function's
//!    own style, a guard clause returning what its other early exits return (`if raw == "":
//!    return default` → `if raw is None: return default`; a parameter, a `self.` attribute or
//!    a literal other than `None`),
//! 1. an `or`-default on the receiver when its type is clear (`(text or "").split()`,
//!    `for x in items or []`): the smallest edit,
//! 2. a guard clause returning the empty value of the type the failing test expects back
//!    (`if x is None: return ""`), when the function's result is what the test checks,
//! 3. in a loop, `continue`,
//! 4. a guard clause returning a default that fits the operation (a bare `return` in a
//!    function that returns nothing),
//! 5. an inline conditional around the whole failing chain (`a.b.c()`, not just `a.b`).
//!
//! For an ordering comparison the or-default comes last: ordering a missing value as `0` is
//! a guess the guards do not make. Unpacking gets guards only (the target is written to).
//!
//! Guards go above the comment lines that describe the statement. Guards and conditionals
//! evaluate the receiver twice, so they need a name or attribute chain; an or-default takes any
//! expression.
//!
//! Never `getattr(x, "attr", None)`: that turns a crash into calling `None` later.

use std::ops::Range;

use rustpython_parser::ast::{self, Ranged};
use serde::{Deserialize, Serialize};

use super::common::{
    self, empty_of_type, enclosed_in_parens, for_iter, function_is_called_by_test, is_simple_ref,
    one_line,
};
use super::null_target::{empty_for_type_name, function_returns_value, Target};
use super::Context;
use crate::edit::{Edit, Fix};
use crate::syntax::walk::{self, Node};
use crate::syntax::{Clause, StmtKind, SubExpr, SubExprKind};

/// The rule's params: `operation` says what was done to `None`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    pub operation: Operation,
    /// Which operand was `None`, for readers of the rule: the transform reads the message's
    /// `left` and `right` captures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub none_side: Option<Side>,
}

/// What was done to `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Attribute,
    Subscript,
    Iterate,
    Len,
    #[serde(rename = "binop")]
    BinOp,
    Call,
    /// `a < b` (`<=`, `>`, `>=`) with a `None` side.
    Compare,
    /// `a, b = value` with `value` None.
    Unpack,
    /// `sep.join(items)` with a `None` item.
    Join,
    /// `xs.index(None)`, `xs.remove(None)`: `None is not in list` and the like.
    Find,
    /// Any other failure whose probe shows `None` flowing into the statement.
    Flow,
}

/// An operand of a binary operation or comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Left,
    Right,
}

// The str methods by what a call returns (the result's default when the receiver is None):
// subsets of `common::STR_METHODS`; one not listed gets `None`.
const STR_TO_STR: &[&str] = &[
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "title",
    "capitalize",
    "casefold",
    "replace",
    "format",
    "join",
    "zfill",
    "center",
    "ljust",
    "rjust",
    "swapcase",
    "removeprefix",
    "removesuffix",
    "expandtabs",
    "translate",
];
const STR_TO_LIST: &[&str] = &["split", "rsplit", "splitlines"];
const STR_TO_BOOL: &[&str] = &[
    "startswith",
    "endswith",
    "isdigit",
    "isalpha",
    "isalnum",
    "isspace",
    "islower",
    "isupper",
    "isnumeric",
    "isdecimal",
    "isidentifier",
    "istitle",
];
const LIST_METHODS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "sort", "reverse",
];
const DICT_METHODS: &[&str] = &["get", "items", "keys", "values", "update", "setdefault"];

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let op = params.operation;
    // A `None` that a project function returns by falling off its end, where its other paths
    // return a value, is that function's missing `return`: a guard here would only silence
    // it. Nothing is proposed, and the search takes the failure to the function itself.
    let unpack = matches!(op, Operation::Unpack | Operation::Iterate);
    let made_by_fall_through = find_targets(ctx, op)
        .into_iter()
        .chain(unpack.then(|| unpack_target(ctx)).flatten())
        .any(|t| {
            crate::syntax::queries::none_from_missing_return(ctx.module, &t.receiver).is_some()
        });
    if made_by_fall_through {
        return Vec::new();
    }
    // Python 3.6 words a `None` unpacked into several names as a `None` iterated (`'NoneType'
    // object is not iterable`; 3.7+: `cannot unpack non-iterable NoneType object`): on a
    // statement that unpacks, the AST and the probe say which value was None, not the message.
    if op == Operation::Iterate {
        match super::null_flow::unpacks_none(ctx) {
            Some(true) => return candidates_for(ctx, Operation::Unpack),
            Some(false) => {
                let mut fixes = candidates_for(ctx, op);
                for fix in candidates_for(ctx, Operation::Unpack) {
                    if !fixes.iter().any(|f| f.edits == fix.edits) {
                        fixes.push(fix);
                    }
                }
                return fixes;
            }
            None => {}
        }
    }
    candidates_for(ctx, op)
}

fn candidates_for(ctx: &Context, op: Operation) -> Vec<Fix> {
    if op == Operation::Join {
        return join_candidates(ctx);
    }
    let found = find_targets(ctx, op);
    // A comparison the probe saw with a `None` side is the statement's own; otherwise an
    // ordering failure in a statement that sorts comes from the sort's keys.
    let own_compare = ctx.probe.is_some_and(|p| {
        found
            .iter()
            .any(|t| p.type_of(&t.receiver) == Some("NoneType"))
    });
    let targets = choose(ctx, found);
    let mut fixes: Vec<Fix> = Vec::new();
    let mut push = |fix: Fix| {
        // Two targets can yield the same edit (a guard on the same receiver).
        if !fixes.iter().any(|f| f.edits == fix.edits) {
            fixes.push(fix);
        }
    };
    let keys = if op == Operation::Compare {
        super::null_keys::candidates(ctx)
    } else {
        Vec::new()
    };
    let (keys_first, keys_last) = if own_compare {
        (Vec::new(), keys)
    } else {
        (keys, Vec::new())
    };
    keys_first.into_iter().for_each(&mut push);
    match op {
        Operation::Unpack => super::null_flow::unpack_candidates(ctx)
            .into_iter()
            .for_each(&mut push),
        Operation::Flow => super::null_flow::text_none_candidates(ctx, &targets)
            .into_iter()
            .for_each(&mut push),
        _ => {}
    }
    for t in &targets {
        fixes_for(ctx, t).into_iter().for_each(&mut push);
    }
    keys_last.into_iter().for_each(&mut push);
    fixes
}

fn find_targets(ctx: &Context, op: Operation) -> Vec<Target> {
    let mut out = match op {
        Operation::Attribute => attribute_targets(ctx),
        Operation::Subscript => subscript_targets(ctx),
        Operation::Iterate => iterate_targets(ctx),
        Operation::Len => len_targets(ctx),
        Operation::BinOp => binop_targets(ctx),
        Operation::Call => call_targets(ctx),
        Operation::Compare => compare_targets(ctx),
        Operation::Unpack => unpack_target(ctx).into_iter().collect(),
        Operation::Find => super::null_flow::find_targets(ctx),
        Operation::Flow => super::null_flow::flow_targets(ctx),
        Operation::Join => Vec::new(),
    };
    // Guards and inline conditionals evaluate the receiver twice, so they need a name or an
    // attribute chain; an or-default evaluates it once and takes any expression.
    for t in &mut out {
        t.simple = is_simple_ref(ctx.text(&t.receiver));
    }
    out.retain(|t| t.simple || t.receiver_default.is_some());
    out.sort_by_key(|t| !t.simple);
    out
}

/// `x.attr` for the message's `attr`, failing as the whole chain built on it.
fn attribute_targets(ctx: &Context) -> Vec<Target> {
    let exprs = &ctx.located.exprs;
    let wanted = ctx.captures.get("attr");
    let mut out = Vec::new();
    for e in exprs {
        let SubExprKind::Attribute {
            receiver,
            name,
            ctx: store_ctx,
            ..
        } = &e.kind
        else {
            continue;
        };
        if wanted.is_some_and(|w| w != name) {
            continue;
        }
        // What fails is the whole chain built on the None value: guarding only
        // `self.user.name` would still call `.title()` on None.
        let (failing, last_call) = extend_chain(exprs, e.range.clone(), name);
        let result_default = match last_call.as_deref() {
            Some(m) if STR_TO_STR.contains(&m) => "\"\"",
            Some(m) if STR_TO_LIST.contains(&m) => "[]",
            Some(m) if STR_TO_BOOL.contains(&m) => "False",
            Some("items" | "keys" | "values") => "[]",
            _ => "None",
        };
        out.push(Target {
            receiver: receiver.clone(),
            failing,
            store: !store_ctx.is_load(),
            nested: e.in_lambda || e.in_comprehension,
            receiver_default: receiver_default_for(name),
            result_default,
            simple: true,
            or_default_last: false,
        });
    }
    out
}

/// `x[k]`: the subscripted value.
fn subscript_targets(ctx: &Context) -> Vec<Target> {
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        if let SubExprKind::Subscript { value, ctx: c, .. } = &e.kind {
            out.push(Target {
                receiver: value.clone(),
                failing: e.range.clone(),
                store: !c.is_load(),
                nested: e.in_lambda || e.in_comprehension,
                receiver_default: None,
                result_default: "None",
                simple: true,
                or_default_last: false,
            });
        }
    }
    out
}

/// What is iterated: `yield from`'s source, the loop's iterable, a membership test's
/// container, then what a call or a comprehension consumes, as the probe's fallback order.
fn iterate_targets(ctx: &Context) -> Vec<Target> {
    let mut out = Vec::new();
    // `yield from items` delegates to `items` as a loop would iterate it.
    out.extend(super::null_flow::yield_from_target(ctx));
    if let Some(iter) = for_iter(ctx) {
        out.push(Target {
            receiver: iter.clone(),
            failing: iter,
            store: false,
            nested: false,
            receiver_default: Some("[]"),
            result_default: "[]",
            simple: true,
            or_default_last: false,
        });
    }
    for e in &ctx.located.exprs {
        if let SubExprKind::Compare {
            ops, comparators, ..
        } = &e.kind
        {
            for (o, c) in ops.iter().zip(comparators) {
                if matches!(*o, "in" | "not in") {
                    out.push(Target {
                        receiver: c.clone(),
                        failing: e.range.clone(),
                        store: false,
                        nested: e.in_lambda || e.in_comprehension,
                        receiver_default: Some("[]"),
                        result_default: if *o == "in" { "False" } else { "True" },
                        simple: true,
                        or_default_last: false,
                    });
                }
            }
        }
    }
    out.extend(consumed_targets(ctx));
    out
}

/// A call that consumes its one argument (`sum(x)`, `sorted(x)`) and a comprehension's
/// source (`[y for y in x]`): `x or []`, the call's empty result.
fn consumed_targets(ctx: &Context) -> Vec<Target> {
    let mut consumed = Vec::new();
    for e in &ctx.located.exprs {
        // `failing` is what the conditional replaces: the whole call for `sum(x)`
        // (`0` instead), the source itself in a comprehension (`[]` instead).
        let (receiver, failing, result_default) = match &e.kind {
            SubExprKind::Call { func, args: 1, .. } => {
                let Some(result) = consumed_result(ctx.text(func)) else {
                    continue;
                };
                // Its one positional argument (`sorted(x, reverse=True)` has keywords).
                let arg = match common::find_expr(ctx.module, &e.range) {
                    Some(ast::Expr::Call(c)) if c.args.len() == 1 => common::rng(c.args[0].range()),
                    _ => continue,
                };
                (arg, e.range.clone(), result)
            }
            _ if e.iterated => (e.range.clone(), e.range.clone(), "[]"),
            _ => continue,
        };
        consumed.push(Target {
            failing,
            receiver,
            store: false,
            // The source of a comprehension's first `for` is evaluated outside it, but
            // the flag cannot tell the first from the others: no guard before it.
            nested: e.in_lambda || e.in_comprehension || e.iterated,
            receiver_default: Some("[]"),
            result_default,
            simple: true,
            or_default_last: false,
        });
    }
    consumed
}

/// `len(x)`: its argument.
fn len_targets(ctx: &Context) -> Vec<Target> {
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        if let SubExprKind::Call { func, args: 1, .. } = &e.kind {
            if ctx.text(func) == "len" {
                if let Some(arg) = single_arg(ctx, e) {
                    out.push(Target {
                        receiver: arg,
                        failing: e.range.clone(),
                        store: false,
                        nested: e.in_lambda || e.in_comprehension,
                        receiver_default: Some("[]"),
                        result_default: "0",
                        simple: true,
                        or_default_last: false,
                    });
                }
            }
        }
    }
    out
}

/// `a + b` and `t += v` with the operator the message names: the side it says is `NoneType`
/// (the left one when it names neither).
fn binop_targets(ctx: &Context) -> Vec<Target> {
    // Python prints `+=` for augmented assignment and `** or pow()` for powers.
    let op = ctx.captures.get("op").map(|o| {
        let o = o.split_whitespace().next().unwrap_or(o);
        if o.len() > 1 {
            o.trim_end_matches('=')
        } else {
            o
        }
    });
    let left_none = ctx.captures.get("left").is_some_and(|l| l == "NoneType");
    let right_none = ctx.captures.get("right").is_some_and(|r| r == "NoneType");
    let other = if left_none {
        ctx.captures.get("right")
    } else {
        ctx.captures.get("left")
    };
    let default = other.and_then(|t| empty_for_type_name(t));
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        let (e_op, left, right) = match &e.kind {
            SubExprKind::BinOp { op, left, right } => (*op, left, right),
            SubExprKind::AugAssign { op, target, value } => {
                (op.trim_end_matches('='), target, value)
            }
            _ => continue,
        };
        if op.is_some_and(|o| o != e_op.trim_end_matches('=')) {
            continue;
        }
        let is_aug = matches!(e.kind, SubExprKind::AugAssign { .. });
        let mut push = |receiver: &Range<usize>| {
            // In `t += v` the statement is not an expression: only `v` can be wrapped,
            // and `t` only guarded.
            let store = is_aug && receiver == left;
            out.push(Target {
                receiver: receiver.clone(),
                failing: if is_aug {
                    receiver.clone()
                } else {
                    e.range.clone()
                },
                store,
                nested: e.in_lambda || e.in_comprehension,
                receiver_default: default,
                result_default: default.unwrap_or("None"),
                simple: true,
                or_default_last: false,
            })
        };
        if left_none || !right_none {
            push(left);
        }
        if right_none {
            push(right);
        }
    }
    out
}

/// `f(...)` with `f` a name or attribute chain: the callee.
fn call_targets(ctx: &Context) -> Vec<Target> {
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        if let SubExprKind::Call { func, .. } = &e.kind {
            if is_simple_ref(ctx.text(func)) {
                out.push(Target {
                    receiver: func.clone(),
                    failing: e.range.clone(),
                    store: false,
                    nested: e.in_lambda || e.in_comprehension,
                    receiver_default: None,
                    result_default: "None",
                    simple: true,
                    or_default_last: false,
                });
            }
        }
    }
    out
}

/// `a < b` and the like, the side the message names as `NoneType` being the receiver. A
/// chained comparison fails at one link: `a < b < c` with `b` None on the right of `<` has
/// `b` as the right side of its first link and the left side of its second.
fn compare_targets(ctx: &Context) -> Vec<Target> {
    let op = ctx.captures.get("op").map(String::as_str);
    let left_none = ctx.captures.get("left").is_some_and(|l| l == "NoneType");
    let right_none = ctx.captures.get("right").is_some_and(|r| r == "NoneType");
    let other = if left_none {
        ctx.captures.get("right")
    } else {
        ctx.captures.get("left")
    };
    let default = other.and_then(|t| empty_for_type_name(t));
    let mut out = Vec::new();
    for e in &ctx.located.exprs {
        let SubExprKind::Compare {
            ops,
            left,
            comparators,
        } = &e.kind
        else {
            continue;
        };
        for (i, (o, right)) in ops.iter().zip(comparators).enumerate() {
            if op.is_some_and(|w| w != *o) {
                continue;
            }
            let lhs = if i == 0 { left } else { &comparators[i - 1] };
            let sides = [(left_none, lhs), (right_none, right)];
            for (_, receiver) in sides.into_iter().filter(|(none, _)| *none) {
                out.push(Target {
                    receiver: receiver.clone(),
                    failing: e.range.clone(),
                    store: false,
                    nested: e.in_lambda || e.in_comprehension,
                    receiver_default: default,
                    // A missing value does not qualify: `x > t` is false.
                    result_default: "False",
                    simple: true,
                    or_default_last: true,
                });
            }
        }
    }
    out
}

/// `a, b = value` (or `[a, *rest] = value`): the value is the receiver. It is never wrapped:
/// placeholders (`value or (None, None)`) only move the failure to the names' users.
fn unpack_target(ctx: &Context) -> Option<Target> {
    if ctx.located.kind != StmtKind::Assign {
        return None;
    }
    let stmt = ctx.located.range.clone();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut value = None;
    walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if value.is_some() || !(r.start <= stmt.start && stmt.end <= r.end) {
            return false;
        }
        if let Node::Stmt(ast::Stmt::Assign(a)) = node {
            if r == stmt {
                let unpacks = a
                    .targets
                    .iter()
                    .any(|t| matches!(t, ast::Expr::Tuple(_) | ast::Expr::List(_)));
                if unpacks {
                    value = Some(common::rng(a.value.range()));
                }
                return false;
            }
        }
        matches!(node, Node::Stmt(_))
    });
    Some(Target {
        receiver: value?,
        failing: stmt,
        store: true,
        nested: false,
        receiver_default: None,
        result_default: "None",
        simple: true,
        or_default_last: false,
    })
}

/// `sep.join(items)` with a `None` item: the item is not a receiver to guard but one value
/// among many. In rank order: the text `None` when the test's expected value shows it
/// (`str(x)`, `map(str, items)`), then leaving the `None` items out (`... if x is not None`),
/// then an empty string in their place (`(x or "")`, which keeps the separators).
fn join_candidates(ctx: &Context) -> Vec<Fix> {
    let wants_text_none = ctx.expected.is_some_and(|e| e.contains("None"));
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let mut out = Vec::new();
    for call in super::sinks::calls(ctx) {
        let ast::Expr::Attribute(func) = call.func.as_ref() else {
            continue;
        };
        if func.attr.as_str() != "join" || call.args.len() != 1 || !call.keywords.is_empty() {
            continue;
        }
        let arg = &call.args[0];
        let comp = match arg {
            ast::Expr::GeneratorExp(g) => Some((&g.elt, &g.generators)),
            ast::Expr::ListComp(l) => Some((&l.elt, &l.generators)),
            _ => None,
        };
        let mut here = Vec::new();
        match comp {
            Some((elt, generators)) => {
                let r = common::rng(elt.range());
                let text = ctx.text(&r).to_string();
                let Some(last) = generators.last() else {
                    continue;
                };
                // The filter goes after the last clause of the last `for` (its iterable or
                // its last `if`); after an `if` it joins it with `and`, unless the condition
                // binds more loosely than `and` (where a second `if` keeps its meaning).
                let (end, joiner) = match last.ifs.last() {
                    None => (common::rng(last.iter.range()).end, "if"),
                    Some(c) => {
                        let loose = matches!(
                            c,
                            ast::Expr::BoolOp(ast::ExprBoolOp {
                                op: ast::BoolOp::Or,
                                ..
                            }) | ast::Expr::IfExp(_)
                                | ast::Expr::Lambda(_)
                                | ast::Expr::NamedExpr(_)
                        );
                        (common::rng(c.range()).end, if loose { "if" } else { "and" })
                    }
                };
                let str_fix = fix(
                    format!("write None items as text: `str({})`", one_line(&text)),
                    vec![Edit::replacement(r.clone(), format!("str({text})"))],
                );
                if wants_text_none {
                    here.push(str_fix);
                }
                if is_simple_ref(&text) {
                    here.push(fix(
                        format!("leave out the items where `{}` is None", one_line(&text)),
                        vec![Edit::insertion(
                            end,
                            format!(" {joiner} {text} is not None"),
                        )],
                    ));
                }
                here.push(fix(
                    format!("join `\"\"` where `{}` is None", one_line(&text)),
                    vec![Edit::replacement(r, format!("({text} or \"\")"))],
                ));
            }
            None => {
                if matches!(arg, ast::Expr::Starred(_)) {
                    continue;
                }
                let r = common::rng(arg.range());
                let text = ctx.text(&r).to_string();
                if wants_text_none {
                    here.push(fix(
                        format!("write None items as text: `map(str, {})`", one_line(&text)),
                        vec![Edit::replacement(r.clone(), format!("map(str, {text})"))],
                    ));
                }
                // The generator's own scope: its name cannot clash with the caller's.
                here.push(fix(
                    format!("leave out the None items of `{}`", one_line(&text)),
                    vec![Edit::replacement(
                        r,
                        format!("item for item in {text} if item is not None"),
                    )],
                ));
            }
        }
        out.extend(here);
    }
    out
}

/// What a builtin that consumes an iterable returns for an empty one (`sum` → `0`).
fn consumed_result(func: &str) -> Option<&'static str> {
    Some(match func {
        "sum" => "0",
        "sorted" | "list" => "[]",
        "tuple" => "()",
        "set" => "set()",
        "dict" => "{}",
        "any" => "False",
        "all" => "True",
        _ => return None,
    })
}

/// The type a receiver must have for its method `name`, as an empty value for `or`.
fn receiver_default_for(name: &str) -> Option<&'static str> {
    if STR_TO_STR.contains(&name) || STR_TO_LIST.contains(&name) || STR_TO_BOOL.contains(&name) {
        Some("\"\"")
    } else if LIST_METHODS.contains(&name) {
        Some("[]")
    } else if DICT_METHODS.contains(&name) {
        Some("{}")
    } else {
        None
    }
}

/// Grows `range` (an attribute access) through the calls, attribute accesses and subscripts
/// applied to it (`a.b` → `a.b.c()[0]`). Returns the chain and the name of the method called
/// last, if the chain ends in a call of an attribute.
fn extend_chain(
    exprs: &[SubExpr],
    range: Range<usize>,
    name: &str,
) -> (Range<usize>, Option<String>) {
    let mut cur = range;
    let mut last_attr: Option<String> = Some(name.to_string());
    let mut last_call: Option<String> = None;
    loop {
        let next = exprs.iter().find(|e| match &e.kind {
            SubExprKind::Call { func, .. } => *func == cur,
            SubExprKind::Attribute { receiver, .. } => *receiver == cur,
            SubExprKind::Subscript { value, .. } => *value == cur,
            _ => false,
        });
        let Some(next) = next else { break };
        match &next.kind {
            SubExprKind::Call { .. } => last_call = last_attr.take(),
            SubExprKind::Attribute { name, .. } => {
                last_attr = Some(name.clone());
                last_call = None;
            }
            _ => {
                last_attr = None;
                last_call = None;
            }
        }
        cur = next.range.clone();
    }
    (cur, last_call)
}

/// Narrows the targets to the one that was `None`: the probe knows for sure; the carets mark
/// the failing expression; otherwise the first two in source order are tried.
fn choose(ctx: &Context, targets: Vec<Target>) -> Vec<Target> {
    if let Some(probe) = ctx.probe {
        let none: Vec<Target> = targets
            .iter()
            .filter(|t| probe.type_of(&t.receiver) == Some("NoneType"))
            .cloned()
            .collect();
        if !none.is_empty() {
            return none;
        }
    }
    if let Some(focus) = &ctx.focus {
        let hit: Vec<Target> = targets
            .iter()
            .filter(|t| {
                &t.failing == focus
                    || (t.receiver.start == focus.start && focus.end <= t.failing.end)
                    || (focus.start <= t.receiver.start && t.receiver.end <= focus.end)
            })
            .cloned()
            .collect();
        if !hit.is_empty() {
            return hit;
        }
    }
    targets.into_iter().take(2).collect()
}

pub(super) fn fixes_for(ctx: &Context, t: &Target) -> Vec<Fix> {
    let recv = ctx.text(&t.receiver).to_string();
    let mut out = Vec::new();
    let is_return = ctx.located.kind == StmtKind::Return;
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    // A procedure leaves with a bare `return`, as its other exits do.
    let returns_value = function_returns_value(ctx);
    let guard_fix = |value: &str| {
        let body = if value == "None" && !returns_value {
            "return".to_string()
        } else {
            format!("return {value}")
        };
        guard(ctx, t, &body)
            .map(|edit| fix(format!("{body} early when `{recv}` is None"), vec![edit]))
    };

    // 0. A parameter defaulting to `None` that lost its real default: assign it back with the
    // value the code gives it elsewhere (`if when is None: when = self.clock()`), before any
    // guard that leaves without it (issue 33; `null_default`).
    if t.simple && !t.store {
        out.extend(super::null_default::candidates(ctx, &recv));
    }
    // 0a. A call made only for its effect (`callback(x)` as a statement): do it only when there
    // is something to call.
    if let Some(edit) = wrap_statement(ctx, t) {
        out.push(fix(
            format!("call only when `{recv}` is not None"),
            vec![edit],
        ));
    }
    // 0b. The function's own style: what its other early exits return (`if raw == "":
    // return default`) is what the lost guard most likely returned; the tests pin that value,
    // which no inline default gives.
    if t.simple && !t.nested {
        for value in common::early_exit_values(ctx).iter().take(2) {
            out.extend(guard_fix(value));
        }
    }
    // 1. `or`-default on the receiver: the smallest edit, and the idiom for "missing means
    // empty" (`for x in items or []`).
    let or_default = match (t.receiver_default, t.store) {
        (Some(default), false) => {
            let wrapped = if needs_parens(ctx, &t.receiver) {
                format!("({recv} or {default})")
            } else {
                format!("{recv} or {default}")
            };
            let edit = Edit::replacement(t.receiver.clone(), wrapped);
            Some(fix(
                format!("use `{default}` when `{}` is None", one_line(&recv)),
                vec![edit],
            ))
        }
        _ => None,
    };
    // 2. Guard returning the empty value of the type the test expects back, when the
    // function's value is what the test checks. Only an empty expected value can be what
    // this guard returns: when the test expects `"abc"` or `2`, the type's empty value would
    // fail it for sure.
    let expected = ctx
        .expected
        .filter(|_| is_return || ctx.returns_to_test || function_is_called_by_test(ctx))
        .and_then(|lit| empty_of_type(lit).filter(|empty| is_same_literal(lit, empty)));
    // In a loop the test's expectation says little about one item: skipping it comes first.
    let in_loop = ctx.located.in_loop;
    let expected_guard = expected.filter(|_| !in_loop).and_then(&guard_fix);
    // At a `return`, the guard and the or-default differ only in the value returned: the
    // guard's is exactly what the test expects; the or-default makes the failing chain give
    // its default result (`(text or "").strip()` gives `""`, `sum(xs or [])` gives `0`). When
    // that is not the expected value (`(text or "").split()[0]`: nothing known, here an
    // IndexError) nothing before a run says the or-default passes, and the guard goes first
    // (issue 26 item 1, issue 23 item 2). Elsewhere the guard also skips the rest of the
    // function: the smaller edit stays first.
    let or_default_gives_expected = expected.is_some_and(|e| is_same_literal(e, t.result_default));
    let guard_first = expected_guard.is_some() && is_return && !or_default_gives_expected;
    let (or_default_first, or_default_last) = if t.or_default_last {
        (None, or_default)
    } else {
        (or_default, None)
    };
    if guard_first {
        out.extend(expected_guard.clone());
    }
    out.extend(or_default_first);
    if !guard_first {
        out.extend(expected_guard);
    }
    if !t.simple {
        out.extend(or_default_last);
        return out;
    }
    // 3. In a loop, skipping the item usually beats leaving the function.
    if in_loop {
        if let Some(edit) = guard(ctx, t, "continue") {
            out.push(fix(
                format!("skip the iteration when `{recv}` is None"),
                vec![edit],
            ));
        }
        if let Some(value) = expected {
            out.extend(guard_fix(value));
        }
    }
    // 4. Guard returning a default that fits the operation.
    let default = if is_return && common::is_returned(ctx, &t.failing) {
        t.result_default
    } else {
        "None"
    };
    if expected != Some(default) {
        out.extend(guard_fix(default));
    }
    // 5. Inline conditional around the failing expression (not for a statement already
    // wrapped by 0., where it would be an expression evaluated for nothing).
    if !t.store && !out.iter().any(|f| f.title.starts_with("call only when")) {
        let failing = ctx.text(&t.failing);
        let edit = Edit::replacement(
            t.failing.clone(),
            format!(
                "({failing} if {recv} is not None else {})",
                t.result_default
            ),
        );
        out.push(fix(
            format!(
                "evaluate `{}` only when `{recv}` is not None",
                one_line(failing)
            ),
            vec![edit],
        ));
    }
    out.extend(or_default_last);
    out
}

/// `if RECV is not None:` around an expression statement that is exactly the failing call
/// (`on_done(result)`, `self.log.write(x)`), its lines indented one level more.
fn wrap_statement(ctx: &Context, t: &Target) -> Option<Edit> {
    let l = ctx.located;
    if l.kind != StmtKind::Expr
        || !t.simple
        || t.nested
        || !l.starts_line
        || !matches!(l.clause, Clause::Statement)
        || ctx.text(&l.range) != ctx.text(&t.failing)
    {
        return None;
    }
    let nl = ctx.source.newline();
    let unit = ctx.source.indent_unit();
    let recv = ctx.text(&t.receiver);
    let original = ctx.text(&l.line_range);
    // Every line of the statement moves one level in; `\r` stays with its line.
    let body: Vec<String> = original
        .split('\n')
        .map(|line| format!("{unit}{line}"))
        .collect();
    Some(Edit::replacement(
        l.line_range.clone(),
        format!("{}if {recv} is not None:{nl}{}", l.indent, body.join("\n")),
    ))
}

/// `(x or d)` needs its parentheses unless it stands alone: a call's only argument, the
/// iterable of a `for`, or the whole right side of `=`, `+=`, `return`.
fn needs_parens(ctx: &Context, range: &Range<usize>) -> bool {
    if enclosed_in_parens(ctx, range) {
        return false;
    }
    let text = ctx.source.text();
    let before = text[..range.start].trim_end_matches([' ', '\t']);
    let after = text[range.end..].trim_start_matches([' ', '\t']);
    let ends_line = after.is_empty() || after.starts_with(['\r', '\n', '#']);
    let after_op = before.ends_with("return")
        || (before.ends_with('=')
            && !before.ends_with("==")
            && !before.ends_with("!=")
            && !before.ends_with("<=")
            && !before.ends_with(">="));
    let for_iter =
        before.ends_with(" in") && after.starts_with(':') && ctx.located.kind == StmtKind::For;
    // `yield from items or []`: `yield from` takes a whole expression.
    let yield_from = before.ends_with("yield from") && ends_line;
    // Between commas and brackets (`sorted(x or [], reverse=True)`) nothing binds more loosely.
    let delimited = before.ends_with(['(', ',']) && after.starts_with([',', ')']);
    !((after_op && ends_line) || for_iter || yield_from || delimited)
}

/// `0` and `0.0`, `''` and `""` are the same value for a guard's purpose.
fn is_same_literal(literal: &str, empty: &str) -> bool {
    literal == empty
        || matches!((literal, empty), ("''", "\"\"") | ("\"\"", "''"))
        || (literal.parse::<f64>().ok() == Some(0.0) && empty.parse::<f64>().ok() == Some(0.0))
}

/// `if RECV is None:` + `body` before the statement (see [`common::guard`]); only for a receiver
/// that is safe to evaluate twice.
fn guard(ctx: &Context, t: &Target, body: &str) -> Option<Edit> {
    let recv = ctx.text(&t.receiver);
    common::guard(ctx, t.nested || !t.simple, &format!("{recv} is None"), body)
}

/// The argument range of a one-argument call `f(arg)`.
fn single_arg(ctx: &Context, call: &SubExpr) -> Option<Range<usize>> {
    let SubExprKind::Call { func, .. } = &call.kind else {
        return None;
    };
    let inner = func.end..call.range.end;
    let text = ctx.text(&inner);
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let arg = &text[open + 1..close];
    let lead = arg.len() - arg.trim_start().len();
    let start = inner.start + open + 1 + lead;
    let end = start + arg.trim().trim_end_matches(',').trim_end().len();
    (start < end).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_refs() {
        assert!(is_simple_ref("text"));
        assert!(is_simple_ref("self.user.name"));
        assert!(is_simple_ref("row['k'][0]"));
        assert!(!is_simple_ref("f(x)"));
        assert!(!is_simple_ref("a[b]"));
        assert!(!is_simple_ref("None"));
    }

    #[test]
    fn str_methods_by_result_are_strs() {
        for m in [STR_TO_STR, STR_TO_LIST, STR_TO_BOOL].concat() {
            assert!(common::STR_METHODS.contains(&m), "{m}");
        }
    }
}
