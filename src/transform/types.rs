//! `types`: repairs a `TypeError` about a value of the wrong (non-None) type, on a file that
//! parses. The rule's `operation` parameter says which form:
//!
//! - `concat`: `can only concatenate str (not "int") to str` → `str(...)` around the
//!   non-str operand; an f-string rewrite of the whole `+` chain as a second candidate;
//! - `str_number`: `unsupported operand type(s) for OP: 'int' and 'str'` (either order) →
//!   `int(...)`/`float(...)` around the str operand, or `str(...)` around the number for `+`,
//!   ordered by what the source and the test's expectation show;
//! - `not_callable`: `'int' object is not callable` on `obj.size()` where `size` is a value or
//!   a property → `obj.size`;
//! - `not_iterable`: `'int' object is not iterable` on `for i in n:` → `range(n)`;
//! - `not_subscriptable`: `'method' object is not subscriptable` on `d.get["k"]` → `d.get("k")`;
//! - `extra_argument`: `f() takes 2 positional arguments but 3 were given` → the extra trailing
//!   argument passed as the keyword-only parameter it was meant for, or dropped;
//! - `missing_argument`: `f() missing 1 required positional argument: 'x'` → pass the variable
//!   `x` visible at the call site;
//! - `join_str`, `index_int`: typed sinks (`str.join` of non-str items, a `str` where an
//!   integer is needed), in [`super::sinks`].
//!
//! The definition of a called project function is found by its qualified name in the failing
//! module, then in the project modules it imports.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};
use serde::{Deserialize, Serialize};

use super::common::one_line;
use super::Context;
use crate::edit::{Edit, Fix};
use crate::source::SourceFile;
use crate::suggest;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, rng, ParsedModule, StmtKind, SubExpr, SubExprKind, MAX_AST_DEPTH};

/// The rule's params: which form of wrong type the rule's message names.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    pub operation: Operation,
}

/// The forms this transform repairs (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Concat,
    StrNumber,
    NotCallable,
    NotIterable,
    NotSubscriptable,
    ExtraArgument,
    MissingArgument,
    KeywordHint,
    JoinStr,
    IndexInt,
}

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let fixes = match params.operation {
        Operation::Concat => concat(ctx),
        Operation::StrNumber => str_number(ctx),
        Operation::NotCallable => not_callable(ctx),
        Operation::NotIterable => not_iterable(ctx),
        Operation::NotSubscriptable => not_subscriptable(ctx),
        Operation::ExtraArgument => extra_argument(ctx),
        Operation::MissingArgument => missing_argument(ctx),
        Operation::KeywordHint => keyword_hint(ctx),
        Operation::JoinStr => super::sinks::join_str(ctx),
        Operation::IndexInt => super::sinks::index_int(ctx),
    };
    let mut out: Vec<Fix> = Vec::new();
    for f in fixes {
        if !out.iter().any(|o| o.edits == f.edits) {
            out.push(f);
        }
    }
    out
}

fn fix(ctx: &Context, title: String, edits: Vec<Edit>) -> Fix {
    Fix::new(title, ctx.rule, ctx.confidence, edits)
}

/// The expressions of the located statement and of its one-line header.
fn all_exprs<'a>(ctx: &'a Context) -> Vec<&'a SubExpr> {
    let mut v: Vec<&SubExpr> = ctx.located.exprs.iter().collect();
    if let Some(h) = &ctx.located.header {
        v.extend(h.exprs.iter());
    }
    v
}

/// Keeps the items the probe, then the carets, single out; else the first `n`.
fn narrow<T: Clone>(
    ctx: &Context,
    items: Vec<T>,
    probe_ok: impl Fn(&T) -> Option<bool>,
    focus_ok: impl Fn(&T, &Range<usize>) -> bool,
    n: usize,
) -> Vec<T> {
    if ctx.probe.is_some() {
        let known: Vec<T> = items
            .iter()
            .filter(|t| probe_ok(t) == Some(true))
            .cloned()
            .collect();
        if !known.is_empty() {
            return known;
        }
    }
    if let Some(focus) = &ctx.focus {
        let hit: Vec<T> = items
            .iter()
            .filter(|t| focus_ok(t, focus))
            .cloned()
            .collect();
        if !hit.is_empty() {
            return hit;
        }
    }
    items.into_iter().take(n).collect()
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// A string literal (any prefix but `b`), an f-string, or a `str(...)`/`repr(...)`/`.format()`
/// call: already a str.
fn is_stringish(text: &str) -> bool {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['r', 'u', 'f']);
    (body.starts_with('"') || body.starts_with('\'')) && !lower.starts_with('b')
        || t.starts_with("str(")
        || t.starts_with("repr(")
        || (t.ends_with(')') && t.contains(".format("))
        || (t.ends_with(')') && t.contains(".join("))
}

/// A plain string literal without prefix, escapes or braces: `"Total: "`. Returns its quote
/// and its content.
fn plain_literal(text: &str) -> Option<(char, &str)> {
    let q = text.chars().next()?;
    if !matches!(q, '"' | '\'') || text.len() < 2 || !text.ends_with(q) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    if inner.starts_with(q) || inner.contains(['"', '\'', '\\', '{', '}', '\n', '\r']) {
        return None;
    }
    Some((q, inner))
}

// ---------------------------------------------------------------------------------------------
// concat

#[derive(Clone)]
struct Operand {
    /// The binop (or augmented assignment) that failed.
    whole: Range<usize>,
    /// The operand that must become a str.
    operand: Range<usize>,
    /// The operator's position lies between these (for caret matching).
    gap: Range<usize>,
    aug: bool,
}

fn plus_operands(ctx: &Context) -> Vec<Operand> {
    let mut out = Vec::new();
    for e in all_exprs(ctx) {
        match &e.kind {
            SubExprKind::BinOp {
                op: "+",
                left,
                right,
            } => out.push(Operand {
                whole: e.range.clone(),
                operand: right.clone(),
                gap: left.end..right.start,
                aug: false,
            }),
            SubExprKind::AugAssign {
                op: "+=",
                target,
                value,
            } => out.push(Operand {
                whole: e.range.clone(),
                operand: value.clone(),
                gap: target.end..value.start,
                aug: true,
            }),
            _ => {}
        }
    }
    out
}

fn concat(ctx: &Context) -> Vec<Fix> {
    // Python 3.6 words it `must be str, not int` (the rule's `other_py36`).
    let other = ctx
        .captures
        .get("other")
        .or_else(|| ctx.captures.get("other_py36"))
        .cloned()
        .unwrap_or_default();
    let ops: Vec<Operand> = plus_operands(ctx)
        .into_iter()
        .filter(|o| !is_stringish(ctx.text(&o.operand)))
        .collect();
    let ops = narrow(
        ctx,
        ops,
        |o| {
            ctx.probe
                .and_then(|p| p.type_of(&o.operand))
                .map(|t| t == other)
        },
        |o, f| contains(&o.gap, f) || o.whole == *f,
        2,
    );
    let mut out = Vec::new();
    for o in &ops {
        let text = ctx.text(&o.operand);
        out.push(fix(
            ctx,
            format!("convert `{}` with str()", one_line(text)),
            vec![Edit::replacement(o.operand.clone(), format!("str({text})"))],
        ));
    }
    for o in &ops {
        if let Some(f) = fstring_rewrite(ctx, o) {
            out.push(f);
        }
    }
    out
}

/// The whole `a + b + c` chain containing the failing binop, rewritten as one f-string, when
/// it has a plain string literal and every other operand is a one-line expression without
/// quotes or braces.
fn fstring_rewrite(ctx: &Context, failing: &Operand) -> Option<Fix> {
    if failing.aug {
        return None;
    }
    // The chain: the largest `+` binop whose left spine reaches the failing one.
    let binops: Vec<(Range<usize>, Range<usize>, Range<usize>)> = all_exprs(ctx)
        .iter()
        .filter_map(|e| match &e.kind {
            SubExprKind::BinOp {
                op: "+",
                left,
                right,
            } => Some((e.range.clone(), left.clone(), right.clone())),
            _ => None,
        })
        .collect();
    let mut top = failing.whole.clone();
    while let Some((r, _, _)) = binops.iter().find(|(_, l, _)| *l == top) {
        top = r.clone();
    }
    // Flatten the left spine.
    let mut operands: Vec<Range<usize>> = Vec::new();
    let mut cur = top.clone();
    while let Some((_, l, r)) = binops.iter().find(|(w, _, _)| *w == cur) {
        operands.push(r.clone());
        cur = l.clone();
    }
    operands.push(cur);
    operands.reverse();
    let mut quote = None;
    let mut body = String::new();
    for r in &operands {
        let t = ctx.text(r);
        if let Some((q, inner)) = plain_literal(t) {
            quote.get_or_insert(q);
            body.push_str(inner);
        } else if t.contains(['"', '\'', '{', '}', '\\', '\n', '\r', '#']) || is_stringish(t) {
            return None;
        } else {
            body.push('{');
            body.push_str(t);
            body.push('}');
        }
    }
    let q = quote?;
    // Parentheses around the chain (`("a" + b)`) stay; the range excludes them.
    Some(fix(
        ctx,
        "build the string with an f-string".into(),
        vec![Edit::replacement(top, format!("f{q}{body}{q}"))],
    ))
}

// ---------------------------------------------------------------------------------------------
// str and number

fn is_number_type(t: &str) -> bool {
    matches!(t, "int" | "float")
}

fn str_number(ctx: &Context) -> Vec<Fix> {
    let (Some(op), Some(left_t), Some(right_t)) = (
        ctx.captures.get("op"),
        ctx.captures.get("left"),
        ctx.captures.get("right"),
    ) else {
        return Vec::new();
    };
    let (left_t, right_t) = (left_t.as_str(), right_t.as_str());
    let valid = (left_t == "str" && (is_number_type(right_t) || right_t == "str"))
        || (right_t == "str" && is_number_type(left_t));
    if !valid {
        return Vec::new();
    }
    let op = op.split_whitespace().next().unwrap_or(op).to_string();
    let base_op = op.trim_end_matches('=').to_string();
    let base_op = if base_op.is_empty() {
        op.clone()
    } else {
        base_op
    };
    #[derive(Clone)]
    struct Site {
        whole: Range<usize>,
        left: Range<usize>,
        right: Range<usize>,
        aug: bool,
    }
    let mut sites = Vec::new();
    for e in all_exprs(ctx) {
        match &e.kind {
            SubExprKind::BinOp { op: o, left, right } if *o == base_op && op == base_op => sites
                .push(Site {
                    whole: e.range.clone(),
                    left: left.clone(),
                    right: right.clone(),
                    aug: false,
                }),
            SubExprKind::AugAssign {
                op: o,
                target,
                value,
            } if *o == op => sites.push(Site {
                whole: e.range.clone(),
                left: target.clone(),
                right: value.clone(),
                aug: true,
            }),
            _ => {}
        }
    }
    let type_of = |r: &Range<usize>| ctx.probe.and_then(|p| p.type_of(r));
    let sites = narrow(
        ctx,
        sites,
        |s: &Site| {
            let (l, r) = (type_of(&s.left)?, type_of(&s.right)?);
            Some(l == left_t && r == right_t)
        },
        |s, f| contains(&(s.left.end..s.right.start), f) || s.whole == *f,
        2,
    );
    let expects_str = ctx
        .expected
        .is_some_and(|e| e.starts_with('"') || e.starts_with('\''));
    let mut out = Vec::new();
    for s in &sites {
        let mut numeric: Vec<Fix> = Vec::new();
        let mut textual: Vec<Fix> = Vec::new();
        // The str side(s) become numbers of the other side's type (int for str and str).
        let conv = |other: &str| if other == "float" { "float" } else { "int" };
        let mut edits = Vec::new();
        let mut names = Vec::new();
        let mut digits = true;
        if left_t == "str" && !s.aug {
            let t = ctx.text(&s.left);
            digits &= literal_digits(t).unwrap_or(true);
            edits.push(Edit::replacement(
                s.left.clone(),
                format!("{}({t})", conv(right_t)),
            ));
            names.push(format!("`{}`", one_line(t)));
        }
        if right_t == "str" {
            let t = ctx.text(&s.right);
            digits &= literal_digits(t).unwrap_or(true);
            let c = if left_t == "str" { "int" } else { conv(left_t) };
            edits.push(Edit::replacement(s.right.clone(), format!("{c}({t})")));
            names.push(format!("`{}`", one_line(t)));
        }
        if !edits.is_empty() {
            numeric.push(fix(
                ctx,
                format!("convert {} to a number", names.join(" and ")),
                edits,
            ));
        }
        // `1 + "a"`: the str side might be right and the number the one to convert.
        if base_op == "+" && right_t == "str" && !s.aug {
            let t = ctx.text(&s.left);
            textual.push(fix(
                ctx,
                format!("convert `{}` with str()", one_line(t)),
                vec![Edit::replacement(s.left.clone(), format!("str({t})"))],
            ));
        }
        if expects_str || !digits {
            out.extend(textual);
            out.extend(numeric);
        } else {
            out.extend(numeric);
            out.extend(textual);
        }
    }
    out
}

/// For a string literal: whether it holds a number (`"12"` → true, `"ab"` → false).
fn literal_digits(text: &str) -> Option<bool> {
    let (_, inner) = plain_literal(text.trim())?;
    Some(inner.trim().parse::<f64>().is_ok())
}

// ---------------------------------------------------------------------------------------------
// not callable

fn not_callable(ctx: &Context) -> Vec<Fix> {
    let ty = ctx.captures.get("type").cloned().unwrap_or_default();
    let calls: Vec<(Range<usize>, Range<usize>)> = all_exprs(ctx)
        .iter()
        .filter_map(|e| match &e.kind {
            SubExprKind::Call {
                func,
                args: 0,
                keywords,
            } if keywords.is_empty() => Some((e.range.clone(), func.clone())),
            _ => None,
        })
        .filter(|(call, func)| {
            // Only `()` (and blanks) after the callee.
            ctx.text(&(func.end..call.end))
                .chars()
                .filter(|c| !c.is_whitespace())
                .eq("()".chars())
        })
        .collect();
    let by_probe: Vec<_> = calls
        .iter()
        .filter(|(_, f)| ctx.probe.and_then(|p| p.type_of(f)) == Some(ty.as_str()))
        .cloned()
        .collect();
    let chosen: Vec<(Range<usize>, Range<usize>, String)> = if !by_probe.is_empty() {
        by_probe
            .into_iter()
            .map(|(c, f)| (c, f, "the probe saw a value".to_string()))
            .collect()
    } else {
        // Without the probe: `obj.name()` where the project's class shows `name` is a value
        // (`self.name = ...`, a class attribute) or a property, and never a plain method.
        calls
            .into_iter()
            .filter(|(c, _)| {
                ctx.focus
                    .as_ref()
                    .is_none_or(|f| contains(c, f) || contains(f, c))
            })
            .filter_map(|(c, f)| {
                let name = attr_name(ctx.text(&f))?;
                let why = value_attribute(ctx.module, &name)?;
                Some((c, f, why))
            })
            .collect()
    };
    chosen
        .into_iter()
        .map(|(call, func, why)| {
            let t = ctx.text(&func).to_string();
            fix(
                ctx,
                format!("use `{t}` as a value, not a call ({why})"),
                vec![Edit::deletion(func.end..call.end)],
            )
        })
        .collect()
}

/// `obj.name` → `name` (only attribute accesses).
fn attr_name(text: &str) -> Option<String> {
    let (_, name) = text.rsplit_once('.')?;
    let name = name.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| name.to_string())
}

/// Why `name` is a value attribute of some class of the module (a property, a class attribute,
/// or `self.name = ...`) when no class defines a plain method of that name.
fn value_attribute(module: &ParsedModule, name: &str) -> Option<String> {
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    let mut property = false;
    let mut assigned = false;
    let mut method = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::ClassDef(c)) => {
                for s in &c.body {
                    match s {
                        Stmt::FunctionDef(f) if f.name.as_str() == name => {
                            let is_prop = f.decorator_list.iter().any(|d| {
                                matches!(d, Expr::Name(n) if n.id.as_str() == "property"
                                    || n.id.as_str() == "cached_property")
                                    || matches!(d, Expr::Attribute(a) if a.attr.as_str() == "cached_property")
                            });
                            if is_prop {
                                property = true;
                            } else {
                                method = true;
                            }
                        }
                        Stmt::Assign(a)
                            if a.targets
                                .iter()
                                .any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name)) =>
                        {
                            assigned = true;
                        }
                        Stmt::AnnAssign(a) if matches!(&*a.target, Expr::Name(n) if n.id.as_str() == name) =>
                        {
                            assigned = true;
                        }
                        _ => {}
                    }
                }
            }
            Node::Expr(Expr::Attribute(a))
                if a.attr.as_str() == name
                    && a.ctx == ast::ExprContext::Store
                    && matches!(&*a.value, Expr::Name(n) if n.id.as_str() == "self") =>
            {
                assigned = true;
            }
            _ => {}
        }
        true
    });
    if method {
        None
    } else if property {
        Some(format!("`{name}` is a property"))
    } else if assigned {
        Some(format!("`{name}` is an attribute"))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// not iterable

fn not_iterable(ctx: &Context) -> Vec<Fix> {
    if !matches!(ctx.located.kind, StmtKind::For | StmtKind::AsyncFor) || !ctx.located.is_header() {
        return Vec::new();
    }
    let start = ctx.located.range.start;
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut found: Option<(Range<usize>, Range<usize>)> = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s) = node {
            let parts = match s {
                Stmt::For(f) => Some((rng(f.target.range()), rng(f.iter.range()))),
                Stmt::AsyncFor(f) => Some((rng(f.target.range()), rng(f.iter.range()))),
                _ => None,
            };
            if let Some(p) = parts.filter(|_| node.range().start == start) {
                found = Some(p);
            }
        }
        found.is_none()
    });
    let Some((target, iter)) = found else {
        return Vec::new();
    };
    let t = ctx.text(&target);
    if !t.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Vec::new();
    }
    if let Some(p) = ctx.probe {
        if p.type_of(&iter).is_some_and(|ty| ty != "int") {
            return Vec::new();
        }
    }
    let it = ctx.text(&iter).to_string();
    vec![fix(
        ctx,
        format!("iterate over `range({})`", one_line(&it)),
        vec![Edit::replacement(iter, format!("range({it})"))],
    )]
}

// ---------------------------------------------------------------------------------------------
// not subscriptable

fn not_subscriptable(ctx: &Context) -> Vec<Fix> {
    let ty = ctx.captures.get("type").cloned().unwrap_or_default();
    let subs: Vec<(Range<usize>, Range<usize>, Range<usize>)> = all_exprs(ctx)
        .iter()
        .filter_map(|e| match &e.kind {
            SubExprKind::Subscript {
                value,
                slice,
                ctx: ast::ExprContext::Load,
            } => Some((e.range.clone(), value.clone(), slice.clone())),
            _ => None,
        })
        .collect();
    let subs = narrow(
        ctx,
        subs,
        |(_, v, _)| ctx.probe.and_then(|p| p.type_of(v)).map(|t| t == ty),
        |(w, _, _), f| contains(w, f) || contains(f, w),
        1,
    );
    let mut out = Vec::new();
    for (whole, value, slice) in subs {
        let s = ctx.text(&slice);
        let brackets = ctx.text(&(value.end..whole.end));
        // A slice (`f[1:2]`) has no call to stand for.
        if s.contains(':') || !brackets.trim_start().starts_with('[') || !brackets.ends_with(']') {
            continue;
        }
        let v = ctx.text(&value).to_string();
        if attr_name(&v).is_none() && !v.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let inner = &brackets[brackets.find('[').map_or(0, |i| i + 1)..brackets.len() - 1];
        out.push(fix(
            ctx,
            format!("call `{v}` instead of subscripting it"),
            vec![Edit::replacement(
                value.end..whole.end,
                format!("({inner})"),
            )],
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// argument count

/// A call in the located statement and its definition.
struct CallSite {
    call: Range<usize>,
    func_text: String,
    args: Vec<Range<usize>>,
    keywords: Vec<(Option<String>, Range<usize>)>,
    starred: bool,
    def: DefInfo,
}

#[derive(Debug, Clone)]
struct DefInfo {
    /// Positional parameter names (self/cls of a bound call removed).
    positional: Vec<String>,
    kwonly: Vec<String>,
    vararg: bool,
    /// Every parameter that may be passed by keyword, in signature order (`self` included):
    /// the names CPython 3.13 suggests from.
    keyword_names: Vec<String>,
}

fn short_name(qualname: &str) -> (&str, Option<&str>) {
    let mut parts = qualname.rsplit('.');
    let last = parts.next().unwrap_or(qualname);
    (last, parts.next())
}

/// Calls in the statement whose callee's last name is the function's (or, for `C.__init__`,
/// the class's), with their resolved definitions.
fn call_sites(ctx: &Context) -> Vec<CallSite> {
    let Some(qual) = ctx.captures.get("func") else {
        return Vec::new();
    };
    if qual.contains('<') {
        return Vec::new();
    }
    let (last, parent) = short_name(qual);
    let callee = if last == "__init__" {
        match parent {
            Some(p) => p,
            None => return Vec::new(),
        }
    } else {
        last
    };
    let ranges: Vec<Range<usize>> = all_exprs(ctx)
        .iter()
        .filter_map(|e| match &e.kind {
            SubExprKind::Call { func, .. } => {
                let t = ctx.text(func);
                let name = t.rsplit('.').next().unwrap_or(t).trim();
                (name == callee).then(|| e.range.clone())
            }
            _ => None,
        })
        .collect();
    if ranges.is_empty() {
        return Vec::new();
    }
    let Some(def) = find_definition(ctx, qual) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Call(c)) = node {
            let r = node.range();
            if ranges.contains(&r) {
                let func_text = ctx.text(&rng(c.func.range())).to_string();
                // A bound call (`obj.m(...)`, `C(...)`) does not pass self.
                let mut d = def.0.clone();
                let bound = def.1 && (func_text.contains('.') || last == "__init__");
                if bound && !d.positional.is_empty() {
                    d.positional.remove(0);
                }
                out.push(CallSite {
                    call: r,
                    func_text,
                    args: c.args.iter().map(|a| rng(a.range())).collect(),
                    keywords: c
                        .keywords
                        .iter()
                        .map(|k| (k.arg.as_ref().map(|a| a.to_string()), rng(k.range())))
                        .collect(),
                    starred: c.args.iter().any(|a| matches!(a, Expr::Starred(_)))
                        || c.keywords.iter().any(|k| k.arg.is_none()),
                    def: d,
                });
            }
        }
        true
    });
    out
}

fn extra_argument(ctx: &Context) -> Vec<Fix> {
    let mut out = Vec::new();
    for site in call_sites(ctx) {
        let d = &site.def;
        if site.starred || d.vararg || site.args.len() != d.positional.len() + 1 {
            continue;
        }
        let Some(last) = site.args.last().cloned() else {
            continue;
        };
        let arg_text = ctx.text(&last).to_string();
        // 1. The extra value was meant for the one keyword-only parameter not yet passed.
        let passed: BTreeSet<&str> = site
            .keywords
            .iter()
            .filter_map(|(k, _)| k.as_deref())
            .collect();
        let open: Vec<&String> = d
            .kwonly
            .iter()
            .filter(|k| !passed.contains(k.as_str()))
            .collect();
        if open.len() == 1 {
            let name = open[0];
            out.push(fix(
                ctx,
                format!(
                    "pass `{}` as the keyword argument `{name}`",
                    one_line(&arg_text)
                ),
                vec![Edit::insertion(last.start, format!("{name}="))],
            ));
        }
        // 2. Drop it: the signature has no parameter for it.
        let start = match site.args.len() {
            1 => last.start,
            n => site.args[n - 2].end,
        };
        let end = if site.args.len() == 1 {
            // `f(x)` alone: the comma after it, if any, goes too.
            let rest = &ctx.source.text()[last.end..site.call.end];
            let trimmed = rest.trim_start();
            if trimmed.starts_with(',') && site.keywords.is_empty() {
                last.end + (rest.len() - trimmed.len()) + 1
            } else {
                last.end
            }
        } else {
            last.end
        };
        if site.args.len() == 1 && !site.keywords.is_empty() {
            continue;
        }
        out.push(fix(
            ctx,
            format!(
                "drop the extra argument `{}` of `{}()`",
                one_line(&arg_text),
                site.func_text
            ),
            vec![Edit::deletion(start..end)],
        ));
    }
    out
}

fn missing_argument(ctx: &Context) -> Vec<Fix> {
    let Some(arg) = ctx.captures.get("arg") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for site in call_sites(ctx) {
        let d = &site.def;
        if site.starred || site.keywords.iter().any(|(k, _)| k.as_deref() == Some(arg)) {
            continue;
        }
        let Some(index) = d.positional.iter().position(|p| p == arg) else {
            continue;
        };
        if !names_in_scope(ctx, site.call.start).contains(arg.as_str()) {
            continue;
        }
        let text = ctx.source.text();
        let edit = if site.args.len() == index {
            match site.args.last() {
                Some(a) => Edit::insertion(a.end, format!(", {arg}")),
                None => {
                    let open = site.call.start
                        + text[site.call.start..site.call.end].find('(').unwrap_or(0)
                        + 1;
                    let sep = if site.keywords.is_empty() { "" } else { ", " };
                    Edit::insertion(open, format!("{arg}{sep}"))
                }
            }
        } else {
            let after = site
                .keywords
                .last()
                .map(|(_, r)| r.end)
                .or(site.args.last().map(|a| a.end));
            match after {
                Some(end) => Edit::insertion(end, format!(", {arg}={arg}")),
                None => continue,
            }
        };
        out.push(fix(
            ctx,
            format!("pass `{arg}` to `{}()`", site.func_text),
            vec![edit],
        ));
    }
    out
}

/// Names bound before `at`: the enclosing function's parameters and assignments before the
/// call, and the module's top-level names.
fn names_in_scope(ctx: &Context, at: usize) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let body = ctx.module.body();
    for s in body {
        top_level_names(s, &mut names);
    }
    // The innermost function containing `at`.
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut func: Option<Node> = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if !(r.start <= at && at < r.end) {
            return false;
        }
        if matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_)) | Node::Stmt(Stmt::AsyncFunctionDef(_))
        ) {
            func = Some(node);
        }
        true
    });
    let Some(Node::Stmt(f)) = func else {
        return names;
    };
    let (args, fbody) = match f {
        Stmt::FunctionDef(d) => (&d.args, &d.body),
        Stmt::AsyncFunctionDef(d) => (&d.args, &d.body),
        _ => return names,
    };
    for a in args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
    {
        names.insert(a.def.arg.to_string());
    }
    for a in args.vararg.iter().chain(&args.kwarg) {
        names.insert(a.arg.to_string());
    }
    let roots: Vec<Node> = fbody.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if node.range().start >= at {
            return false;
        }
        match node {
            Node::Expr(Expr::Name(n)) if n.ctx == ast::ExprContext::Store => {
                names.insert(n.id.to_string());
            }
            Node::Stmt(s) => top_level_names(s, &mut names),
            _ => {}
        }
        // Nested functions and classes have scopes of their own.
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_))
                | Node::Stmt(Stmt::AsyncFunctionDef(_))
                | Node::Stmt(Stmt::ClassDef(_))
        )
    });
    names
}

/// Names a statement binds at its own level (definitions, imports, simple assignments).
fn top_level_names(s: &Stmt, names: &mut BTreeSet<String>) {
    let mut targets: Vec<&Expr> = Vec::new();
    match s {
        Stmt::FunctionDef(d) => {
            names.insert(d.name.to_string());
        }
        Stmt::AsyncFunctionDef(d) => {
            names.insert(d.name.to_string());
        }
        Stmt::ClassDef(d) => {
            names.insert(d.name.to_string());
        }
        Stmt::Import(i) => {
            for a in &i.names {
                let n = a.asname.as_ref().unwrap_or(&a.name).to_string();
                names.insert(n.split('.').next().unwrap_or(&n).to_string());
            }
        }
        Stmt::ImportFrom(i) => {
            for a in &i.names {
                names.insert(a.asname.as_ref().unwrap_or(&a.name).to_string());
            }
        }
        Stmt::Assign(a) => targets.extend(a.targets.iter()),
        Stmt::AnnAssign(a) => targets.push(&a.target),
        Stmt::AugAssign(a) => targets.push(&a.target),
        Stmt::For(f) => targets.push(&f.target),
        Stmt::With(w) => targets.extend(w.items.iter().filter_map(|i| i.optional_vars.as_deref())),
        _ => {}
    }
    while let Some(t) = targets.pop() {
        match t {
            Expr::Name(n) => {
                names.insert(n.id.to_string());
            }
            Expr::Tuple(t) => targets.extend(t.elts.iter()),
            Expr::List(l) => targets.extend(l.elts.iter()),
            Expr::Starred(s) => targets.push(&s.value),
            _ => {}
        }
    }
}

/// `f(..., wrong=v)` → `f(..., right=v)` for `TypeError: f() got an unexpected keyword
/// argument 'wrong'`, where `right` is Python's suggestion: printed (3.13+), else computed as
/// CPython 3.13 computes it ([`suggest::for_keyword`]) from the callee's parameters, read from
/// its definition in the project, else from the probe's `inspect.signature` of the callee.
fn keyword_hint(ctx: &Context) -> Vec<Fix> {
    let Some(kw) = ctx.captures.get("kw") else {
        return Vec::new();
    };
    let stmt = ctx.located.range.clone();
    let mut calls: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if r.end <= stmt.start || r.start >= stmt.end {
            return false;
        }
        if let Node::Expr(Expr::Call(c)) = node {
            for k in &c.keywords {
                if k.arg.as_ref().is_some_and(|a| a.as_str() == kw) {
                    let at = rng(k.range()).start;
                    calls.push((rng(c.func.range()), at..at + kw.len()));
                }
            }
        }
        true
    });
    let from_def = ctx
        .captures
        .get("func")
        .and_then(|q| find_definition(ctx, q))
        .map(|(d, _)| d.keyword_names);
    let mut out = Vec::new();
    for (func, name_range) in calls {
        if ctx.text(&name_range) != kw.as_str() {
            continue;
        }
        let (hint, how) = match ctx.captures.get("hint") {
            Some(h) => (Some(h.clone()), "Python's suggestion"),
            None => {
                let params: Option<Vec<String>> = from_def.clone().or_else(|| {
                    let p = ctx.probe?.params_of(&func)?;
                    Some(
                        p.iter()
                            .filter(|(_, kind)| {
                                kind == "POSITIONAL_OR_KEYWORD" || kind == "KEYWORD_ONLY"
                            })
                            .map(|(n, _)| n.clone())
                            .collect(),
                    )
                });
                let hint = params.and_then(|p| {
                    let strs: Vec<&str> = p.iter().map(String::as_str).collect();
                    suggest::for_keyword(&strs, kw)
                });
                (hint, "Python's suggestion, computed")
            }
        };
        let Some(hint) = hint.filter(|h| h != kw && super::names::project::is_identifier(h)) else {
            continue;
        };
        out.push(fix(
            ctx,
            format!("pass `{hint}=` instead of the unexpected `{kw}=` ({how})"),
            vec![Edit::replacement(name_range, hint.clone())],
        ));
    }
    out
}

/// The definition of `qualname` (and whether it is a method taking `self`/`cls`): in the
/// failing module, then in the project modules it imports.
fn find_definition(ctx: &Context, qualname: &str) -> Option<(DefInfo, bool)> {
    if let Some(d) = def_in(ctx.module.body(), qualname) {
        return Some(d);
    }
    let here = ctx.source.path();
    for file in imported_files(ctx.module, here) {
        let Ok(src) = SourceFile::read(&file) else {
            continue;
        };
        let Ok(m) = syntax::parse(&src) else {
            continue;
        };
        if let Some(d) = def_in(m.body(), qualname) {
            return Some(d);
        }
    }
    None
}

fn def_in(body: &[Stmt], qualname: &str) -> Option<(DefInfo, bool)> {
    let parts: Vec<&str> = qualname.split('.').collect();
    let mut scope = body;
    let mut in_class = false;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = None;
        for s in scope {
            match s {
                Stmt::ClassDef(c) if c.name.as_str() == *part && !last => {
                    next = Some(&c.body[..]);
                }
                Stmt::FunctionDef(f) if f.name.as_str() == *part && last => {
                    let is_static = f
                        .decorator_list
                        .iter()
                        .any(|d| matches!(d, Expr::Name(n) if n.id.as_str() == "staticmethod"));
                    return Some((def_info(&f.args), in_class && !is_static));
                }
                Stmt::AsyncFunctionDef(f) if f.name.as_str() == *part && last => {
                    return Some((def_info(&f.args), in_class));
                }
                _ => {}
            }
        }
        scope = next?;
        in_class = true;
    }
    None
}

fn def_info(args: &ast::Arguments) -> DefInfo {
    let positional: Vec<&ast::ArgWithDefault> = args.posonlyargs.iter().chain(&args.args).collect();
    DefInfo {
        positional: positional.iter().map(|a| a.def.arg.to_string()).collect(),
        kwonly: args
            .kwonlyargs
            .iter()
            .filter(|a| a.default.is_some())
            .map(|a| a.def.arg.to_string())
            .collect(),
        vararg: args.vararg.is_some(),
        keyword_names: args
            .args
            .iter()
            .chain(&args.kwonlyargs)
            .map(|a| a.def.arg.to_string())
            .collect(),
    }
}

/// Files of the project modules `module` imports, resolved next to the file (relative
/// imports) and from its ancestor directories (absolute ones, also under `src/`).
fn imported_files(module: &ParsedModule, here: &Path) -> Vec<PathBuf> {
    let dir = here.parent().unwrap_or(Path::new("."));
    let mut dotted: Vec<(usize, String)> = Vec::new();
    for s in module.body() {
        match s {
            Stmt::ImportFrom(i) => {
                let level = i.level.as_ref().map_or(0, |l| l.to_usize());
                let base = i.module.as_ref().map(|m| m.to_string()).unwrap_or_default();
                if !base.is_empty() {
                    dotted.push((level, base.clone()));
                }
                for a in &i.names {
                    let sub = if base.is_empty() {
                        a.name.to_string()
                    } else {
                        format!("{base}.{}", a.name)
                    };
                    dotted.push((level, sub));
                }
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    dotted.push((0, a.name.to_string()));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (level, name) in dotted {
        let rel: PathBuf = name.split('.').collect();
        let bases: Vec<PathBuf> = if level > 0 {
            let mut d = dir.to_path_buf();
            for _ in 1..level {
                d = d.parent().map(Path::to_path_buf).unwrap_or(d);
            }
            vec![d]
        } else {
            dir.ancestors()
                .take(6)
                .flat_map(|a| [a.to_path_buf(), a.join("src")])
                .collect()
        };
        for b in bases {
            for cand in [
                b.join(&rel).with_extension("py"),
                b.join(&rel).join("__init__.py"),
            ] {
                if cand.is_file() && !out.contains(&cand) && cand != here {
                    out.push(cand);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stringish() {
        assert!(is_stringish("\"a\""));
        assert!(is_stringish("f'{x}'"));
        assert!(is_stringish("str(x)"));
        assert!(!is_stringish("b'x'"));
        assert!(!is_stringish("count"));
        assert_eq!(plain_literal("'Total: '"), Some(('\'', "Total: ")));
        assert_eq!(plain_literal("'a{b}'"), None);
        assert_eq!(literal_digits("\"12\""), Some(true));
        assert_eq!(literal_digits("'ab'"), Some(false));
    }
}
