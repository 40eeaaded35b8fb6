//! A parameter that defaults to `None` and is then used as a value (`when + self.grace` with
//! `def fire(self, when=None)`) lost the line that gave it its real default: `if when is None:
//! when = self.clock()`. Before any guard that leaves without the value (issue 33), the null
//! guard proposes that assignment back, with a value the code itself gives for the name, in
//! this order:
//!
//! 1. what another function assigns to the same name (`when = self.clock()` elsewhere);
//! 2. what a call site passes for it (`fire(when=self.clock())`);
//! 3. the default a sibling function gives the same parameter (`def due(self, when=0)`);
//! 4. in a method, a call without arguments that the class makes on `self` elsewhere for its
//!    value (`self.clock() + delay`; not `self.reset()` as a statement): what the class
//!    computes on its own.
//!
//! A value must read only `self`/`cls` and names bound at module level (it is moved into
//! another function), and is never `None`. At most [`MAX_VALUES`] are proposed. The
//! assignment goes first in the function, after its docstring.

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use super::common::{enclosing_function, rng};
use super::Context;
use crate::edit::{Edit, Fix};
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

/// Values proposed at most for one parameter.
const MAX_VALUES: usize = 2;

/// `if NAME is None: NAME = VALUE` at the top of the function, for a receiver that is a
/// parameter defaulting to `None` and never assigned in the function.
pub(super) fn candidates(ctx: &Context, receiver: &str) -> Vec<Fix> {
    let Some(func) = enclosing_function(ctx.module, ctx.located) else {
        return Vec::new();
    };
    let Stmt::FunctionDef(ast::StmtFunctionDef {
        args, body, name, ..
    }) = func
    else {
        return Vec::new();
    };
    if !defaults_to_none(args, receiver) || assigns(body, receiver) {
        return Vec::new();
    }
    let values = values_for(ctx, func, name.as_str(), receiver);
    let Some(edit_at) = top_of(ctx, body) else {
        return Vec::new();
    };
    let (at, indent) = edit_at;
    let nl = ctx.source.newline();
    let unit = ctx.source.indent_unit();
    values
        .into_iter()
        .take(MAX_VALUES)
        .map(|(value, whence)| {
            Fix::new(
                format!("give `{receiver}` its default when None: `{value}` ({whence})"),
                ctx.rule,
                ctx.confidence,
                vec![Edit::insertion(
                    at,
                    format!(
                        "{indent}if {receiver} is None:{nl}{indent}{unit}{receiver} = {value}{nl}"
                    ),
                )],
            )
        })
        .collect()
}

fn defaults_to_none(args: &ast::Arguments, name: &str) -> bool {
    args.posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
        .any(|a| a.def.arg.as_str() == name && a.default.as_deref().is_some_and(is_none))
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, ast::Constant::None))
}

/// The name is assigned somewhere in `body` (not in nested functions).
fn assigns(body: &[Stmt], name: &str) -> bool {
    let mut hit = false;
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Expr(Expr::Name(n)) => {
            hit |= n.id.as_str() == name && matches!(n.ctx, ast::ExprContext::Store);
            false
        }
        _ => !hit,
    });
    hit
}

/// Where the first statement of the body starts (after a docstring), and its indentation.
fn top_of(ctx: &Context, body: &[Stmt]) -> Option<(usize, String)> {
    let first = match body {
        [Stmt::Expr(e), rest @ ..] if is_str(&e.value) => rest.first()?,
        [first, ..] => first,
        [] => return None,
    };
    let text = ctx.source.text();
    let start = rng(first.range()).start;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..start];
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then(|| (line_start, indent.to_string()))
}

fn is_str(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_)))
}

/// Names bound at module level (imports, defs, classes, assignments).
fn module_names(ctx: &Context) -> Vec<String> {
    let mut out = Vec::new();
    for s in ctx.module.body() {
        match s {
            Stmt::Import(i) => out.extend(i.names.iter().map(|a| {
                let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
                n.split('.').next().unwrap_or(n).to_string()
            })),
            Stmt::ImportFrom(i) => out.extend(
                i.names
                    .iter()
                    .map(|a| a.asname.as_ref().unwrap_or(&a.name).to_string()),
            ),
            Stmt::FunctionDef(f) => out.push(f.name.to_string()),
            Stmt::AsyncFunctionDef(f) => out.push(f.name.to_string()),
            Stmt::ClassDef(c) => out.push(c.name.to_string()),
            Stmt::Assign(a) => {
                for t in &a.targets {
                    if let Expr::Name(n) = t {
                        out.push(n.id.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The value reads only `self`/`cls` and module-level names, and is not `None`.
fn movable(e: &Expr, module: &[String]) -> bool {
    if is_none(e) {
        return false;
    }
    let mut ok = true;
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Lambda(_)) => ok = false,
            Node::Expr(Expr::Name(n)) => {
                let id = n.id.as_str();
                ok &= matches!(id, "self" | "cls") || module.iter().any(|m| m == id);
            }
            _ => {}
        }
        ok
    });
    ok
}

/// The values the code gives `name` elsewhere, best first, each with where it comes from.
fn values_for(ctx: &Context, func: &Stmt, func_name: &str, name: &str) -> Vec<(String, String)> {
    let module = module_names(ctx);
    let text = ctx.source.text();
    let own = rng(func.range());
    let mut found: [Vec<(String, String)>; 4] = Default::default();
    let mut add = |tier: usize, e: &Expr, whence: String| {
        if !movable(e, &module) {
            return;
        }
        if let Some(v) = text.get(rng(e.range())) {
            let v = v.trim().to_string();
            if !v.contains('\n') && !found.iter().flatten().any(|(f, _)| *f == v) {
                found[tier].push((v, whence));
            }
        }
    };
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    // A call made as a statement is made for its effect (`self.reset()`), not for a value.
    let mut for_effect: Vec<std::ops::Range<usize>> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(Stmt::Expr(e)) = node {
            for_effect.push(rng(e.value.range()));
        }
        matches!(node, Node::Stmt(_))
    });
    let in_class = ctx.located.function.as_ref().is_some_and(|f| f.is_method);
    let class_range = ctx.located.class.as_ref().map(|c| c.range.clone());
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        let outside = !(own.start <= r.start && r.end <= own.end);
        match node {
            Node::Stmt(Stmt::Assign(a))
                if outside
                    && a.targets
                        .iter()
                        .any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name)) =>
            {
                add(0, &a.value, "as another function assigns it".into());
            }
            Node::Stmt(Stmt::FunctionDef(f)) if outside => {
                let ps = f
                    .args
                    .posonlyargs
                    .iter()
                    .chain(&f.args.args)
                    .chain(&f.args.kwonlyargs);
                for p in ps {
                    if let (true, Some(d)) = (p.def.arg.as_str() == name, p.default.as_deref()) {
                        add(2, d, format!("the default of `{}`", f.name));
                    }
                }
            }
            Node::Expr(call @ Expr::Call(c)) if outside => {
                let callee = match c.func.as_ref() {
                    Expr::Name(n) => Some(n.id.as_str()),
                    Expr::Attribute(a) => Some(a.attr.as_str()),
                    _ => None,
                };
                if callee == Some(func_name) {
                    for k in &c.keywords {
                        if k.arg.as_ref().is_some_and(|a| a.as_str() == name) {
                            add(1, &k.value, "as a call site passes it".into());
                        }
                    }
                }
                let self_call = c.args.is_empty()
                    && c.keywords.is_empty()
                    && matches!(c.func.as_ref(), Expr::Attribute(a)
                        if matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self")
                            && !a.attr.starts_with("__")
                            && a.attr.as_str() != func_name);
                let same_class = class_range
                    .as_ref()
                    .is_some_and(|cr| cr.start <= r.start && r.end <= cr.end);
                if in_class && self_call && same_class && !for_effect.contains(&r) {
                    add(3, call, "as the class computes it elsewhere".into());
                }
            }
            _ => {}
        }
        true
    });
    found.into_iter().flatten().collect()
}
