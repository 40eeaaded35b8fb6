//! `key_lookup`: repairs `KeyError: 'k'` raised by `d['k']`.
//!
//! The failing subscript is the one whose literal key equals the message's repr, else the one
//! the carets mark, else the one the probe shows is a mapping, else the first two. Candidates,
//! in rank order:
//! 1. `d.get('k', DEFAULT)` where the use shows a default (`d['k'] + 1` → `0`, `.append` →
//!    `[]`, a string method → `""`, iterated or `len()` → `[]`, an element summed by
//!    `sum(d['k'] for d in ds)` → `0`, joined by `SEP.join(...)` or formatted by `.format` →
//!    `""`); before those, the value the module itself gives the same key elsewhere
//!    (`DEFAULTS = {"sep": ","}`, `.get("sep", ",")`) when of the use's type; for a returned
//!    value with no use, what the function declares or returns elsewhere (`-> str`,
//!    `return ""` → `""`); `d.get('k')` only when nothing types the value;
//! 2. in a loop, `if 'k' not in d: continue`;
//! 3. a membership guard returning a default that fits the function
//!    (`if 'k' not in d: return DEFAULT`);
//! 4. the other defaults the use allows.
//!
//! When the statement returns the value and the failing test compares it with a literal, that
//! literal is the default (it is what the missing key must yield). `d[k].append(x)` becomes
//! `d.setdefault(k, []).append(x)`: a throw-away default would lose what is appended.
//!
//! `d[k] += v` becomes `d[k] = d.get(k, 0) + v` (the counting idiom). A subscript that is
//! only assigned to or deleted is never rewritten.

use std::ops::Range;

use rustpython_parser::ast::Expr;

use crate::edit::{Edit, Fix};
use crate::syntax::{StmtKind, SubExpr, SubExprKind};
use crate::transform::common as shared;
use crate::transform::Context;

const LIST_METHODS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "sort", "reverse", "index", "count",
];
const DICT_METHODS: &[&str] = &["get", "items", "keys", "values", "update", "setdefault"];
/// The str methods (a subset of [`shared::STR_METHODS`]) whose call on a missing key's value
/// proposes `""` as its default; a method not listed proposes nothing.
const STR_METHODS: &[&str] = &[
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
    "split",
    "rsplit",
    "splitlines",
    "startswith",
    "endswith",
    "zfill",
    "isdigit",
    "isalpha",
    "encode",
    "partition",
];
const ITERABLE_CALLS: &[&str] = &[
    "len",
    "sum",
    "sorted",
    "list",
    "set",
    "tuple",
    "any",
    "all",
    "enumerate",
    "zip",
    "reversed",
    "dict",
    "frozenset",
];
const MAPPING_TYPES: &[&str] = &[
    "dict",
    "OrderedDict",
    "Counter",
    "ChainMap",
    "MappingProxyType",
    "_Environ",
    "Row",
    "Series",
    "DataFrame",
];

struct Target<'a> {
    expr: &'a SubExpr,
    value: Range<usize>,
    slice: Range<usize>,
    /// `d[k] op= v`: the subscript is the augmented assignment's target.
    aug: Option<(&'static str, Range<usize>)>,
}

pub fn candidates(ctx: &Context) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for t in targets(ctx) {
        for fix in fixes_for(ctx, &t) {
            if !out.iter().any(|f| f.edits == fix.edits) {
                out.push(fix);
            }
        }
    }
    out
}

fn targets<'a>(ctx: &'a Context) -> Vec<Target<'a>> {
    let mut all: Vec<Target> = Vec::new();
    for e in &ctx.located.exprs {
        let SubExprKind::Subscript {
            value,
            slice,
            ctx: sctx,
        } = &e.kind
        else {
            continue;
        };
        if matches!(shared::find_expr(ctx.module, slice), Some(Expr::Slice(_))) {
            continue;
        }
        let aug = ctx.located.exprs.iter().find_map(|a| match &a.kind {
            SubExprKind::AugAssign { op, target, value } if *target == e.range => {
                Some((op.trim_end_matches('='), value.clone()))
            }
            _ => None,
        });
        if !sctx.is_load() && aug.is_none() {
            continue;
        }
        all.push(Target {
            expr: e,
            value: value.clone(),
            slice: slice.clone(),
            aug,
        });
    }
    let key = ctx.captures.get("key").map(|k| k.trim());
    if let Some(key) = key {
        let same: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, t)| same_key(ctx.text(&t.slice), key))
            .map(|(i, _)| i)
            .collect();
        if !same.is_empty() {
            return keep(all, &same);
        }
    }
    if let Some(focus) = &ctx.focus {
        let hit: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                let r = &t.expr.range;
                *r == *focus
                    || (r.start <= focus.start && focus.end <= r.end && focus.start >= t.value.end)
                    || (focus.start <= r.start && r.end <= focus.end)
            })
            .map(|(i, _)| i)
            .collect();
        if !hit.is_empty() {
            // The innermost subscript the carets mark.
            let best = hit
                .iter()
                .copied()
                .min_by_key(|&i| all[i].expr.range.len())
                .into_iter()
                .collect::<Vec<_>>();
            return keep(all, &best);
        }
    }
    if let Some(probe) = ctx.probe {
        let maps: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                probe
                    .type_of(&t.value)
                    .is_some_and(|ty| MAPPING_TYPES.contains(&ty))
            })
            .map(|(i, _)| i)
            .collect();
        if !maps.is_empty() {
            return keep(all, &maps);
        }
    }
    all.truncate(2);
    all
}

fn keep<'a>(all: Vec<Target<'a>>, idx: &[usize]) -> Vec<Target<'a>> {
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| idx.contains(i))
        .map(|(_, t)| t)
        .collect()
}

/// The slice written in the source denotes the key Python printed (`'k'` vs `"k"`, `3`).
fn same_key(slice: &str, repr: &str) -> bool {
    let unquote = |s: &str| -> Option<String> {
        let q = s.chars().next()?;
        if (q == '\'' || q == '"') && s.len() >= 2 && s.ends_with(q) {
            Some(s[1..s.len() - 1].to_string())
        } else {
            None
        }
    };
    match (unquote(slice.trim()), unquote(repr)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => slice.trim() == repr,
        _ => false,
    }
}

fn fixes_for(ctx: &Context, t: &Target) -> Vec<Fix> {
    let fix = |title: String, edits: Vec<Edit>| Fix::new(title, ctx.rule, ctx.confidence, edits);
    let d = ctx.text(&t.value).to_string();
    let k = ctx.text(&t.slice).to_string();
    let key_arg = if matches!(
        shared::find_expr(ctx.module, &t.slice),
        Some(Expr::Tuple(_))
    ) && !k.trim_start().starts_with('(')
    {
        format!("({k})")
    } else {
        k.clone()
    };
    let Some(bracket) = open_bracket(ctx, t) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let nested = t.expr.in_lambda || t.expr.in_comprehension;

    // `d[k] op= v` → `d[k] = d.get(k, 0) op v`.
    if let Some((op, value)) = &t.aug {
        if ctx.located.kind != StmtKind::AugAssign {
            return out;
        }
        let default = aug_default(ctx, op, value);
        let stmt = ctx.located.range.clone();
        let target = ctx.text(&t.expr.range);
        let v = ctx.text(value);
        let v = if needs_parens(ctx, value) {
            format!("({v})")
        } else {
            v.to_string()
        };
        out.push(fix(
            format!("start `{d}[{k}]` at `{default}` when the key is missing"),
            vec![Edit::replacement(
                stmt,
                format!("{target} = {d}.get({key_arg}, {default}) {op} {v}"),
            )],
        ));
        return out;
    }

    // `d[k].append(x)` must keep what it appends: `setdefault`, not a throw-away default.
    let mutated = mutated_container(ctx, &t.expr.range);
    if let Some(empty) = mutated {
        out.push(fix(
            format!("use `{d}.setdefault({key_arg}, {empty})`: start an empty container"),
            vec![Edit::replacement(
                bracket..t.expr.range.end,
                format!(".setdefault({key_arg}, {empty})"),
            )],
        ));
    }
    let mut uses = use_defaults(ctx, t);
    let returned = shared::is_returned(ctx, &t.expr.range);
    // What the code itself gives the key elsewhere (`DEFAULTS = {"sep": ","}`, `.get("sep",
    // ",")`) is a value its consumers can use: before the default of the type the use shows,
    // when it is of that type (or the use shows none).
    let typed = uses.first().and_then(|u| shared::empty_of_type(u));
    for dv in key_defaults(ctx, t).into_iter().rev() {
        if typed.is_some_and(|ty| shared::empty_of_type(&dv) != Some(ty)) {
            continue;
        }
        uses.retain(|u| *u != dv);
        uses.insert(0, dv);
    }
    // Returned as is: what the function declares it returns (`-> str` → `""`) or returns on
    // its other exits (`return ""`) types the missing value for its callers, where a bare
    // `.get(k)` would hand them `None`.
    if returned && uses.is_empty() {
        if let Some(func) = shared::enclosing_function(ctx.module, ctx.located) {
            let text = ctx.module.text();
            let declared = shared::declared_defaults(func, text)
                .into_iter()
                .map(String::from);
            for dv in declared.chain(shared::other_literal_returns(ctx)) {
                if dv != "None" && !uses.contains(&dv) {
                    uses.push(dv);
                }
            }
        }
    }
    // Returned as is: the failing test's literal is, by definition, the missing key's value
    // (left out before any run unless the module holds it: `plan::literals`).
    if returned {
        if let Some(lit) = ctx.expected.filter(|l| *l != "None") {
            uses.retain(|u| u != lit);
            uses.insert(0, lit.to_string());
        }
    }
    let get = |default: Option<&str>| {
        let content = match default {
            Some(dv) => format!(".get({key_arg}, {dv})"),
            None => format!(".get({key_arg})"),
        };
        Edit::replacement(bracket..t.expr.range.end, content)
    };
    let get_title = |default: Option<&str>| match default {
        Some(dv) => format!("use `{d}.get({key_arg}, {dv})`: `{dv}` when the key is missing"),
        None => format!("use `{d}.get({key_arg})`: None when the key is missing"),
    };
    // 1. `.get` with the default the use needs (or none); a mutated container was handled. A
    // bare `.get(k)`, whose `None` only moves the failure to whoever uses the value, is
    // proposed only when nothing types the value (issue 33).
    match (uses.first(), mutated) {
        (_, Some(_)) => {}
        (Some(dv), None) => out.push(fix(get_title(Some(dv)), vec![get(Some(dv))])),
        (None, None) => out.push(fix(get_title(None), vec![get(None)])),
    }
    // 2-3. Membership guards.
    let guardable =
        (shared::is_simple_ref(&d)) && (shared::is_simple_ref(&k) || shared::is_plain_literal(&k));
    let cond = format!("{key_arg} not in {d}");
    if guardable {
        if let Some(edit) = shared::guard(ctx, nested, &cond, "continue") {
            out.push(fix(
                format!("skip the iteration when {k} is not in `{d}`"),
                vec![edit],
            ));
        }
        let defaults = if shared::is_returned(ctx, &t.expr.range) && !uses.is_empty() {
            uses.clone()
        } else {
            shared::return_defaults(ctx, &["None"])
        };
        if let Some(dv) = defaults.first() {
            if let Some(edit) = shared::guard(ctx, nested, &cond, &format!("return {dv}")) {
                out.push(fix(
                    format!("return {dv} early when {k} is not in `{d}`"),
                    vec![edit],
                ));
            }
        }
    }
    // 4. The other defaults the use allows.
    for dv in uses.iter().skip(1).filter(|_| mutated.is_none()) {
        out.push(fix(get_title(Some(dv)), vec![get(Some(dv))]));
    }
    out
}

/// The literal values the module gives the same key elsewhere: in a dict display bound to a
/// name that says defaults (`DEFAULTS = {"sep": ","}`) or as the default of a `.get("sep",
/// ",")`, in source order, `None` left out.
fn key_defaults(ctx: &Context, t: &Target) -> Vec<String> {
    use crate::syntax::walk::{self, Node};
    use rustpython_parser::ast::{Constant, Ranged};
    let key = match shared::find_expr(ctx.module, &t.slice) {
        Some(Expr::Constant(c)) if matches!(c.value, Constant::Str(_) | Constant::Int(_)) => {
            c.value.clone()
        }
        _ => return Vec::new(),
    };
    let same = |e: &Expr| matches!(e, Expr::Constant(c) if c.value == key);
    let literal = |e: &Expr| match e {
        Expr::Constant(c) if !matches!(c.value, Constant::None) => {
            Some(ctx.module.text().get(shared::rng(e.range()))?.to_string())
        }
        _ => None,
    };
    let mut out: Vec<String> = Vec::new();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    // A dict display is a table of defaults only when its name says so (`DEFAULTS = {...}`):
    // elsewhere it is data (`ROWS = [{"price": 3}, ...]`), not what a missing key means.
    let mut tables: Vec<Range<usize>> = Vec::new();
    walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(rustpython_parser::ast::Stmt::Assign(a)) = node {
            let named = a.targets.iter().any(|t| {
                let name = ctx.module.text().get(shared::rng(t.range())).unwrap_or("");
                name.to_ascii_lowercase().contains("default")
            });
            if named && matches!(a.value.as_ref(), Expr::Dict(_)) {
                tables.push(shared::rng(a.value.range()));
            }
        }
        true
    });
    walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        let found = match node {
            Node::Expr(Expr::Dict(d)) if tables.contains(&node.range()) => d
                .keys
                .iter()
                .zip(&d.values)
                .find(|(k, _)| k.as_ref().is_some_and(&same))
                .and_then(|(_, v)| literal(v)),
            Node::Expr(Expr::Call(c)) => match (c.func.as_ref(), &c.args[..]) {
                (Expr::Attribute(a), [k, v]) if a.attr.as_str() == "get" && same(k) => literal(v),
                _ => None,
            },
            _ => None,
        };
        if let Some(v) = found.filter(|v| !out.contains(v)) {
            out.push(v);
        }
        true
    });
    out
}

/// `d[k].append(x)` and the like: the value is a container mutated in place, so the missing
/// entry should be created (`[]`, `set()`, `{}`).
fn mutated_container(ctx: &Context, r: &Range<usize>) -> Option<&'static str> {
    let parent = shared::parent_of(ctx.located, r)?;
    let SubExprKind::Attribute { receiver, name, .. } = &parent.kind else {
        return None;
    };
    if receiver != r {
        return None;
    }
    let called = ctx
        .located
        .exprs
        .iter()
        .any(|e| matches!(&e.kind, SubExprKind::Call { func, .. } if *func == parent.range));
    if !called {
        return None;
    }
    match name.as_str() {
        "append" | "extend" | "insert" => Some("[]"),
        "add" => Some("set()"),
        "update" | "setdefault" => Some("{}"),
        _ => None,
    }
}

/// The `[` of the subscript: after the value (and any closing parentheses), before the slice.
fn open_bracket(ctx: &Context, t: &Target) -> Option<usize> {
    let between = ctx.source.text().get(t.value.end..t.slice.start)?;
    between.rfind('[').map(|i| t.value.end + i)
}

fn needs_parens(ctx: &Context, range: &Range<usize>) -> bool {
    matches!(
        shared::find_expr(ctx.module, range),
        Some(
            Expr::BinOp(_)
                | Expr::BoolOp(_)
                | Expr::Compare(_)
                | Expr::IfExp(_)
                | Expr::Lambda(_)
                | Expr::NamedExpr(_)
                | Expr::UnaryOp(_)
                | Expr::Tuple(_)
        )
    )
}

/// The start value for `d[k] op= v`.
fn aug_default(ctx: &Context, op: &str, value: &Range<usize>) -> String {
    let v = ctx.text(value).trim();
    let ty = ctx.probe.and_then(|p| p.type_of(value));
    let of_type = match ty {
        Some("float") => Some("0.0"),
        Some("str") => Some("\"\""),
        Some("list") => Some("[]"),
        Some("int") | Some("bool") => Some("0"),
        _ => None,
    };
    if let Some(d) = of_type {
        return d.to_string();
    }
    if op == "*" {
        return "1".into();
    }
    if v.starts_with('"') || v.starts_with('\'') {
        return "\"\"".into();
    }
    if v.starts_with('[') {
        return "[]".into();
    }
    if v.contains('.') && v.parse::<f64>().is_ok() {
        return "0.0".into();
    }
    "0".into()
}

/// The default an operand's type asks for: its probed type, its literal, or for a `+` chain
/// (`prefix + d["a"] + " "`) the first leaf that says (`" "` makes the whole chain a str).
fn operand_default(
    ctx: &Context,
    range: &Range<usize>,
    of_type: &dyn Fn(Option<&str>) -> Option<&'static str>,
    literal_type: &dyn Fn(&str) -> Option<&'static str>,
    depth: usize,
) -> Option<&'static str> {
    if let Some(d) =
        of_type(ctx.probe.and_then(|p| p.type_of(range))).or_else(|| literal_type(ctx.text(range)))
    {
        return Some(d);
    }
    if depth > 32 {
        return None;
    }
    let sub = ctx.located.exprs.iter().find(|e| e.range == *range)?;
    match &sub.kind {
        SubExprKind::BinOp {
            op: "+",
            left,
            right,
        } => operand_default(ctx, right, of_type, literal_type, depth + 1)
            .or_else(|| operand_default(ctx, left, of_type, literal_type, depth + 1)),
        _ => None,
    }
}

/// Defaults that fit how the looked-up value is used, best first. Empty when the use says
/// nothing (then `.get(k)` returning None is proposed).
fn use_defaults(ctx: &Context, t: &Target) -> Vec<String> {
    let r = &t.expr.range;
    let mut out: Vec<String> = Vec::new();
    let of_type = |ty: Option<&str>| -> Option<&'static str> {
        Some(match ty? {
            "int" | "bool" => "0",
            "float" => "0.0",
            "str" => "\"\"",
            "list" => "[]",
            "dict" => "{}",
            "tuple" => "()",
            _ => return None,
        })
    };
    let literal_type = |text: &str| -> Option<&'static str> {
        let text = text.trim();
        if text.starts_with(['"', '\'']) || text.starts_with("f\"") || text.starts_with("f'") {
            Some("\"\"")
        } else if text.parse::<i64>().is_ok() {
            Some("0")
        } else if text.parse::<f64>().is_ok() {
            Some("0.0")
        } else {
            None
        }
    };
    if let Some(parent) = shared::parent_of(ctx.located, r) {
        match &parent.kind {
            SubExprKind::BinOp { op, left, right } if left == r || right == r => {
                let other = if left == r { right } else { left };
                let divisor = right == r && matches!(*op, "/" | "//" | "%");
                let ty = operand_default(ctx, other, &of_type, &literal_type, 0);
                if !divisor {
                    match (ty, *op) {
                        (Some(d), _) => out.push(d.into()),
                        (None, "+" | "-" | "*" | "/" | "//" | "%" | "**") => out.push("0".into()),
                        _ => {}
                    }
                }
            }
            SubExprKind::Attribute { receiver, name, .. } if receiver == r => {
                let n = name.as_str();
                if LIST_METHODS.contains(&n) {
                    out.push("[]".into());
                } else if DICT_METHODS.contains(&n) {
                    out.push("{}".into());
                } else if STR_METHODS.contains(&n) {
                    out.push("\"\"".into());
                }
            }
            SubExprKind::Call { func, .. } if !(func.start <= r.start && r.end <= func.end) => {
                let f = ctx.text(func);
                // The element a generator feeds the call (`sum(row[k] for row in rows)`): the
                // call consumes elements, so the default is an element's, not a container.
                if is_element(ctx, &parent.range, r) {
                    out.extend(element_default(f).map(String::from));
                } else if ITERABLE_CALLS.contains(&f) || f.ends_with(".join") {
                    out.push("[]".into());
                } else if f.ends_with(".format") {
                    // Formatted as text.
                    out.push("\"\"".into());
                }
            }
            SubExprKind::Compare {
                ops,
                left,
                comparators,
            } => {
                // `x in d[k]`: the container; `d[k] > 0`: a number.
                let mut prev = left;
                for (o, c) in ops.iter().zip(comparators) {
                    if c == r && matches!(*o, "in" | "not in") {
                        out.push("[]".into());
                    } else if (c == r || prev == r) && matches!(*o, "<" | "<=" | ">" | ">=") {
                        let other = if c == r { prev } else { c };
                        let ty = of_type(ctx.probe.and_then(|p| p.type_of(other)))
                            .or_else(|| literal_type(ctx.text(other)))
                            .unwrap_or("0");
                        out.push(ty.into());
                    }
                    prev = c;
                }
            }
            SubExprKind::AugAssign { target, value, .. } if value == r => {
                let ty = of_type(ctx.probe.and_then(|p| p.type_of(target))).unwrap_or("0");
                out.push(ty.into());
            }
            _ => {}
        }
    }
    // Iterated by the `for` header or a comprehension's `for`.
    if t.expr.iterated
        || (matches!(ctx.located.kind, StmtKind::For | StmtKind::AsyncFor)
            && ctx.located.is_header()
            && is_for_iter(ctx, r))
    {
        out.push("[]".into());
    }
    // Formatted into an f-string as it is: text, in a quote the f-string allows inside
    // (before Python 3.12 not its own delimiter).
    if out.is_empty()
        && t.expr.in_fstring
        && shared::parent_of(ctx.located, r).is_none_or(|p| !p.in_fstring)
    {
        out.push(fstring_empty(ctx, t));
    }
    // Returned, and the test says the type.
    if out.is_empty() && shared::is_returned(ctx, r) {
        if let Some(e) = ctx
            .expected
            .and_then(shared::empty_of_type)
            .filter(|e| *e != "None")
        {
            out.push(e.into());
        }
    }
    out.dedup();
    out
}

/// `call` is `f(ELT for ...)` (or a list/set comprehension) and `r` is its element `ELT`.
fn is_element(ctx: &Context, call: &Range<usize>, r: &Range<usize>) -> bool {
    let Some(Expr::Call(c)) = shared::find_expr(ctx.module, call) else {
        return false;
    };
    use rustpython_parser::ast::Ranged;
    let elt = match c.args.first() {
        Some(Expr::GeneratorExp(g)) => &g.elt,
        Some(Expr::ListComp(g)) => &g.elt,
        Some(Expr::SetComp(g)) => &g.elt,
        _ => return false,
    };
    let er = elt.range();
    er.start().to_usize() == r.start && er.end().to_usize() == r.end
}

/// The default of an element a consuming call reads: `sum` adds
/// numbers (`0`), `prod` multiplies (`1`); `SEP.join` concatenates text (`""`).
fn element_default(f: &str) -> Option<&'static str> {
    match f {
        "sum" | "math.fsum" | "fsum" => Some("0"),
        "math.prod" | "prod" => Some("1"),
        _ if f.ends_with(".join") => Some("\"\""),
        _ => None,
    }
}

/// An empty string literal that may stand inside the f-string around `t`: the quote of the
/// key's own literal (already legal there), else the quote the f-string does not use.
fn fstring_empty(ctx: &Context, t: &Target) -> String {
    let key = ctx.text(&t.slice).trim_start();
    if key.starts_with('\'') {
        return "''".into();
    }
    if key.starts_with('"') {
        return "\"\"".into();
    }
    let before = &ctx.source.text()[..t.expr.range.start];
    let open = before
        .rmatch_indices(['"', '\''])
        .find(|(i, _)| {
            before[..*i]
                .chars()
                .next_back()
                .is_some_and(|c| matches!(c, 'f' | 'F' | 'r' | 'R'))
        })
        .map(|(_, q)| q);
    match open {
        Some("\"") => "''".into(),
        _ => "\"\"".into(),
    }
}

/// `range` is the iterable of the located `for` header.
fn is_for_iter(ctx: &Context, range: &Range<usize>) -> bool {
    shared::for_iter(ctx).is_some_and(|it| it == *range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!(same_key("\"name\"", "'name'"));
        assert!(same_key("'a'", "'a'"));
        assert!(same_key("3", "3"));
        assert!(!same_key("key", "'key'"));
        assert!(!same_key("'a'", "'b'"));
    }

    #[test]
    fn str_methods_are_strs() {
        assert!(STR_METHODS.iter().all(|m| shared::STR_METHODS.contains(m)));
    }
}
