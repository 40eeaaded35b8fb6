//! `name_error`: repairs `NameError: name 'X' is not defined`; `unbound_local` (in
//! [`unbound`]): repairs `UnboundLocalError`.
//!
//! `name_error` works in one of four modes (the rule's `mode` parameter), so that each rule can
//! say how safe its fix is:
//! - `hint`: Python's own `Did you mean: 'Y'?` (`Y` may be `self.y`);
//! - `nearest`: the names visible at the statement nearest to `X` by edit distance: locals
//!   and parameters bound before the statement, enclosing functions, module globals and
//!   imports, builtins, and `self.X`-style attributes of the enclosing class (the forgotten
//!   `self.`), ranked by distance, then by how close the scope is;
//! - `import_stdlib`: `import X` when `X` is a standard-library module used as one (`X.attr`),
//!   or `from m import X` when the interpreter's standard-library index (see
//!   [`super::stdlib`]) has one clear home for `X` (`Path`, `defaultdict`, `Formatter`...);
//! - `import_stdlib_ranked`: `from m import X` for each of the ranked homes of a name several
//!   modules export with no clear winner (`Formatter`: `string`, then `logging`);
//! - `import_project`: `from pkg.mod import X` when a project module defines `X` at top level.
//!
//! A renamed name is renamed at every use in the function (every use of an undefined name
//! fails the same way); new imports go where [`super::imports::add_import`] puts them.

pub mod project;
pub mod scope;
mod unbound;

pub use unbound::candidates as unbound_candidates;

use std::ops::Range;

use rustpython_parser::ast::{Expr, Stmt};

use super::imports::{self, NewImport};
use super::Context;
use crate::edit::{Edit, Fix};
use crate::syntax::walk::{self, Node};
use crate::syntax::{SubExprKind, MAX_AST_DEPTH};
use scope::Scope;

/// Nearest-name candidates proposed at most.
const MAX_NEAREST: usize = 3;
/// Project modules proposed at most for one missing name.
const MAX_MODULES: usize = 2;

pub fn candidates(ctx: &Context) -> Vec<Fix> {
    let Some(name) = ctx.captures.get("name").map(String::as_str) else {
        return Vec::new();
    };
    let Some(at) = failing_name(ctx, name) else {
        return Vec::new();
    };
    match ctx.params.get("mode").map(String::as_str) {
        Some("hint") => hint(ctx, name, &at).into_iter().collect(),
        Some("nearest") => nearest(ctx, name, &at),
        Some("import_stdlib") => import_stdlib(ctx, name, &at, false),
        Some("import_stdlib_ranked") => import_stdlib(ctx, name, &at, true),
        Some("import_project") => import_project(ctx, name),
        _ => Vec::new(),
    }
}

/// The range of the `X` that failed: the one under the carets, else the first in the
/// statement.
fn failing_name(ctx: &Context, name: &str) -> Option<Range<usize>> {
    let names: Vec<&Range<usize>> = ctx
        .located
        .exprs
        .iter()
        .filter(|e| matches!(&e.kind, SubExprKind::Name { id } if id == name))
        .map(|e| &e.range)
        .collect();
    let focused = ctx.focus.as_ref().and_then(|f| {
        names
            .iter()
            .find(|r| r.start < f.end.max(f.start + 1) && f.start < r.end)
    });
    focused.or(names.first()).map(|r| (*r).clone())
}

/// Every use of `name` to rename along with the failing one: all loads in the enclosing
/// function when the function does not bind the name (each would fail the same way), else
/// the failing one only.
fn uses_to_rename(ctx: &Context, name: &str, at: &Range<usize>) -> Vec<Range<usize>> {
    let chain = scope::scope_chain(ctx.module.body(), at.start);
    if let Some(Scope::Function(f)) = chain.last() {
        let (binds, _) = scope::bindings(f.body);
        let bound = binds.iter().any(|b| b.name == name) || f.params().contains(&name);
        if !bound {
            let uses = scope::name_loads(f.body, name);
            if uses.contains(at) {
                return uses;
            }
        }
    }
    vec![at.clone()]
}

fn rename(ctx: &Context, name: &str, at: &Range<usize>, to: &str, title: String) -> Fix {
    let edits = uses_to_rename(ctx, name, at)
        .into_iter()
        .map(|r| Edit::replacement(r, to))
        .collect();
    Fix::new(title, ctx.rule, ctx.confidence, edits)
}

fn hint(ctx: &Context, name: &str, at: &Range<usize>) -> Option<Fix> {
    let hint = ctx.captures.get("hint")?;
    // `y` or `self.y` (Python 3.12 suggests attributes of `self`).
    if hint.is_empty() || !hint.split('.').all(project::is_identifier) || hint == name {
        return None;
    }
    Some(rename(
        ctx,
        name,
        at,
        hint,
        format!("use `{hint}` instead of the undefined `{name}` (Python's suggestion)"),
    ))
}

/// Where a visible name comes from, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    Local,
    Enclosing,
    Global,
    Attribute,
    Builtin,
}

impl Origin {
    fn describe(self) -> &'static str {
        match self {
            Origin::Local => "a local name",
            Origin::Enclosing => "a name of the enclosing function",
            Origin::Global => "a module-level name",
            Origin::Attribute => "an attribute of the class",
            Origin::Builtin => "a builtin",
        }
    }
}

fn nearest(ctx: &Context, name: &str, at: &Range<usize>) -> Vec<Fix> {
    let stmt_start = ctx.located.range.start;
    let chain = scope::scope_chain(ctx.module.body(), at.start);
    let mut seen: Vec<(usize, Origin, String)> = Vec::new();
    let mut offer = |cand: &str, text: String, origin: Origin| {
        let d = if origin == Origin::Attribute && cand == name {
            Some(0)
        } else {
            scope::close(name, cand)
        };
        if let Some(d) = d {
            seen.push((d, origin, text));
        }
    };
    // Variables of comprehensions and lambdas around the name are visible to it.
    for v in inner_scope_names(ctx, at) {
        offer(&v, v.clone(), Origin::Local);
    }
    let last = chain.len().saturating_sub(1);
    for (i, s) in chain.iter().enumerate() {
        match s {
            Scope::Module(body) => {
                for b in scope::bindings(body).0 {
                    offer(&b.name, b.name.clone(), Origin::Global);
                }
            }
            // A class body's names are visible only in the class body itself.
            Scope::Class(c) if i == last => {
                for b in scope::bindings(&c.body).0 {
                    offer(&b.name, b.name.clone(), Origin::Local);
                }
            }
            Scope::Class(_) => {}
            Scope::Function(f) => {
                let origin = if i == last {
                    Origin::Local
                } else {
                    Origin::Enclosing
                };
                for p in f.params() {
                    offer(p, p.to_string(), origin);
                }
                for b in scope::bindings(f.body).0 {
                    // In the failing function, only what is bound before the statement.
                    if i < last || b.stmt.start < stmt_start {
                        offer(&b.name, b.name.clone(), origin);
                    }
                }
            }
        }
    }
    if let (Some(Scope::Function(f)), Some(Scope::Class(c))) = (
        chain.last(),
        chain.len().checked_sub(2).and_then(|i| chain.get(i)),
    ) {
        if let Some(me) = f.receiver() {
            for attr in scope::class_attributes(c) {
                offer(&attr, format!("{me}.{attr}"), Origin::Attribute);
            }
        }
    }
    for b in scope::BUILTINS {
        offer(b, b.to_string(), Origin::Builtin);
    }
    seen.sort();
    let mut out: Vec<Fix> = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for (_, origin, text) in seen {
        if used.contains(&text) || out.len() >= MAX_NEAREST {
            continue;
        }
        let title = format!(
            "use `{text}` ({}) instead of the undefined `{name}`",
            origin.describe()
        );
        out.push(rename(ctx, name, at, &text, title));
        used.push(text);
    }
    out
}

/// Names bound by the comprehensions and lambdas of the failing statement that enclose `at`.
fn inner_scope_names(ctx: &Context, at: &Range<usize>) -> Vec<String> {
    let path = scope::stmt_path(ctx.module.body(), at.start);
    let Some(stmt) = path.last() else {
        return Vec::new();
    };
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    let mut out = Vec::new();
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if !(r.start <= at.start && at.end <= r.end) {
            return false;
        }
        let gens = match node {
            Node::Expr(Expr::ListComp(c)) => &c.generators,
            Node::Expr(Expr::SetComp(c)) => &c.generators,
            Node::Expr(Expr::DictComp(c)) => &c.generators,
            Node::Expr(Expr::GeneratorExp(c)) => &c.generators,
            Node::Expr(Expr::Lambda(l)) => {
                let f = &l.args;
                out.extend(
                    f.posonlyargs
                        .iter()
                        .chain(&f.args)
                        .chain(&f.kwonlyargs)
                        .map(|a| a.def.arg.to_string()),
                );
                return true;
            }
            _ => return true,
        };
        for g in gens {
            let mut names = Vec::new();
            walk::walk(&[Node::Expr(&g.target)], 64, |n, _| {
                if let Node::Expr(Expr::Name(x)) = n {
                    names.push(x.id.to_string());
                }
                true
            });
            out.extend(names);
        }
        true
    });
    out
}

/// Whether `name` is used as a module at `at` (`name.attr`).
fn used_as_module(ctx: &Context, at: &Range<usize>) -> bool {
    ctx.located
        .exprs
        .iter()
        .any(|e| matches!(&e.kind, SubExprKind::Attribute { receiver, .. } if receiver == at))
}

/// `ranked`: the homes of a name without a clear winner; else the module itself or the one
/// clear home of the name.
fn import_stdlib(ctx: &Context, name: &str, at: &Range<usize>, ranked: bool) -> Vec<Fix> {
    let root = project::import_root(ctx.source.path());
    let forgot = ctx.captures.get("forgot").is_some_and(|f| f == name);
    let as_module =
        ctx.stdlib.is_module(name) && !name.starts_with('_') && (forgot || used_as_module(ctx, at));
    let mut imports: Vec<NewImport> = Vec::new();
    let homes;
    if as_module {
        if !ranked {
            imports.push(NewImport {
                module: name,
                name: None,
            });
        }
    } else if let Some(index) = ctx.stdlib.index() {
        homes = index.homes(name);
        if homes.clear != ranked {
            let take = if ranked { homes.modules.len() } else { 1 };
            imports.extend(homes.modules.iter().take(take).map(|m| NewImport {
                module: m,
                name: Some(name),
            }));
        }
    }
    let mut out = Vec::new();
    for imp in imports {
        // A project module of the same name shadows the standard library's: leave it alone.
        let top = imp.module.split('.').next().unwrap_or(imp.module);
        if root
            .as_deref()
            .is_some_and(|r| project::is_local_top(r, top))
        {
            continue;
        }
        let Some(edits) =
            imports::add_import(ctx.source, ctx.module, root.as_deref(), ctx.stdlib, &imp)
        else {
            continue;
        };
        out.push(Fix::new(
            format!("add the missing `{}`", imp.text()),
            ctx.rule,
            ctx.confidence,
            edits,
        ));
    }
    out
}

fn import_project(ctx: &Context, name: &str) -> Vec<Fix> {
    let here = ctx.source.path();
    let Some(root) = project::import_root(here) else {
        return Vec::new();
    };
    let importer = project::module_name(&root, here);
    let relative = prefers_relative(ctx.module.body());
    let mut out = Vec::new();
    for module in project::modules_defining(&root, name, &[here.to_path_buf()], importer.as_deref())
        .into_iter()
        .take(MAX_MODULES)
    {
        let spelled = if relative {
            imports::relative_spelling(&module, 1, importer.as_deref())
        } else {
            module.clone()
        };
        let imp = NewImport {
            module: &spelled,
            name: Some(name),
        };
        let Some(edits) =
            imports::add_import(ctx.source, ctx.module, Some(&root), ctx.stdlib, &imp)
        else {
            continue;
        };
        out.push(Fix::new(
            format!(
                "add the missing `{}` (the project defines it there)",
                imp.text()
            ),
            ctx.rule,
            ctx.confidence,
            edits,
        ));
    }
    out
}

/// The file imports its sibling modules relatively (`from .models import X`) and never
/// absolutely from its own package.
fn prefers_relative(body: &[Stmt]) -> bool {
    body.iter().any(
        |s| matches!(s, Stmt::ImportFrom(i) if i.level.as_ref().is_some_and(|l| l.to_u32() > 0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_detection() {
        let pm = crate::syntax::parse_text(
            std::path::Path::new("m.py"),
            "from .a import b\nimport os\nb(os)\n",
        )
        .unwrap();
        assert!(prefers_relative(pm.body()));
    }
}
