//! `name_error`: repairs `NameError: name 'X' is not defined`; `unbound_local` (in
//! [`unbound`]): repairs `UnboundLocalError`.
//!
//! `name_error` works in one of four modes (the rule's `mode` parameter), so that each rule can
//! say how safe its fix is:
//! - `hint`: Python's own `Did you mean: 'Y'?` (`Y` may be `self.y`); when the message has
//!   none (pytest's long style never prints it), the one CPython would make, computed with its
//!   own algorithm ([`crate::suggest`]) from the frame's names the probe saw, else from the
//!   names the source binds;
//! - `nearest`: the names visible at the statement nearest to `X` by edit distance: locals
//!   and parameters bound before the statement, enclosing functions, module globals and
//!   imports, builtins, and `self.X`-style attributes of the enclosing class (the forgotten
//!   `self.`), ranked by distance, then by how close the scope is; after them, names of the
//!   failing and enclosing functions too far by distance that share a word or a prefix with
//!   `X` (`output_path` read where the enclosing function's parameter is `output`);
//! - `import_stdlib`: `import X` when `X` is a standard-library module used as one (`X.attr`),
//!   or `from m import X` when the interpreter's standard-library index (see
//!   [`super::stdlib`]) has one clear home for `X` (`Path`, `defaultdict`, `Formatter`...);
//! - `import_stdlib_ranked`: `from m import X` for each of the ranked homes of a name several
//!   modules export with no clear winner (`Formatter`: `string`, then `logging`);
//! - `import_project`: `from pkg.mod import X` when a project module defines `X` at top level;
//! - `import_used`: the import statement other project modules bind `X` with
//!   ([`used_imports`]), spelling and alias kept, the most used first.
//!
//! A renamed name is renamed at every use in the function (every use of an undefined name
//! fails the same way); new imports go where [`super::imports::add_import`] puts them.

pub mod project;
pub mod scope;
mod unbound;
mod used_imports;

pub use unbound::candidates as unbound_candidates;

use std::ops::Range;

use rustpython_parser::ast::{Expr, Stmt};
use serde::{Deserialize, Serialize};

use super::imports::{self, NewImport};
use super::Context;
use crate::edit::{Edit, Fix};
use crate::suggest;
use crate::syntax::walk::{self, Node};
use crate::syntax::{SubExprKind, MAX_AST_DEPTH};
use scope::Scope;

/// Nearest-name candidates proposed at most.
const MAX_NEAREST: usize = 3;
/// Names sharing a word or a prefix proposed at most, after the nearest ones.
const MAX_RELATED: usize = 2;
/// Project modules proposed at most for one missing name.
const MAX_MODULES: usize = 2;

/// The rule's params: how `name_error` looks for the missing name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    pub mode: Mode,
}

/// The modes of `name_error` (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Hint,
    Nearest,
    ImportStdlib,
    ImportStdlibRanked,
    ImportProject,
    ImportUsed,
}

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let Some(name) = ctx.captures.get("name").map(String::as_str) else {
        return Vec::new();
    };
    let Some(at) = failing_name(ctx, name) else {
        return Vec::new();
    };
    match params.mode {
        Mode::Hint => hint(ctx, name, &at).into_iter().collect(),
        Mode::Nearest => nearest(ctx, name, &at),
        Mode::ImportStdlib => import_stdlib(ctx, name, &at, false),
        Mode::ImportStdlibRanked => import_stdlib(ctx, name, &at, true),
        Mode::ImportProject => import_project(ctx, name),
        Mode::ImportUsed => import_used(ctx, name),
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
    let (hint, how) = match ctx.captures.get("hint") {
        Some(h) => (h.clone(), "Python's suggestion"),
        // pytest's long style prints no hint (nor does Python 3.10/3.11's `traceback`):
        // compute the one CPython would make.
        None => (
            computed_hint(ctx, name, at)?,
            "Python's suggestion, computed",
        ),
    };
    // `y` or `self.y` (Python 3.12 suggests attributes of `self`).
    if hint.is_empty() || !hint.split('.').all(project::is_identifier) || hint == name {
        return None;
    }
    Some(rename(
        ctx,
        name,
        at,
        &hint,
        format!("use `{hint}` instead of the undefined `{name}` ({how})"),
    ))
}

/// CPython's suggestion for the undefined `name` ([`suggest::for_name`]): from the names the
/// probe saw in the frame when it ran, else from the names the source binds.
fn computed_hint(ctx: &Context, name: &str, at: &Range<usize>) -> Option<String> {
    let imp = suggest::Impl::for_version(ctx.probe.and_then(|p| p.python_version));
    if let Some(seen) = ctx.probe.and_then(|p| p.scope.as_ref()) {
        let complete = [&seen.locals, &seen.globals, &seen.builtins]
            .iter()
            .all(|n| n.names.len() == n.total);
        if !complete {
            // More names than the probe keeps: more than CPython looks at, so no suggestion.
            return None;
        }
        let scope = suggest::NameScope {
            locals: strs(&seen.locals),
            globals: strs(&seen.globals),
            builtins: strs(&seen.builtins),
            self_has_attr: seen.self_has_attr == Some(true),
        };
        return suggest::for_name(&scope, name, imp);
    }
    let (locals, globals, self_has_attr) = source_scope(ctx, name, at)?;
    let scope = suggest::NameScope {
        locals: locals.iter().map(String::as_str).collect(),
        globals: globals.iter().map(String::as_str).collect(),
        builtins: suggest::builtins(ctx.probe.and_then(|p| p.python_version)),
        self_has_attr,
    };
    suggest::for_name(&scope, name, imp)
}

fn strs(n: &crate::probe::Names) -> Vec<&str> {
    n.names.iter().map(String::as_str).collect()
}

/// Module attributes every imported module has, in the order CPython sets them.
const MODULE_DUNDERS: &[&str] = &[
    "__name__",
    "__doc__",
    "__package__",
    "__loader__",
    "__spec__",
    "__file__",
    "__cached__",
    "__builtins__",
];

/// The frame's locals and globals as the source shows them at the failing statement, and
/// whether `self` has the attribute `name`; `None` when the source cannot say (a star import
/// or a `global` declaration makes the module's names unknowable from here).
fn source_scope(
    ctx: &Context,
    name: &str,
    at: &Range<usize>,
) -> Option<(Vec<String>, Vec<String>, bool)> {
    let body = ctx.module.body();
    let star = body.iter().any(
        |s| matches!(s, Stmt::ImportFrom(i) if i.names.iter().any(|a| a.name.as_str() == "*")),
    );
    if star {
        return None;
    }
    let stmt_start = ctx.located.range.start;
    let chain = scope::scope_chain(body, at.start);
    let push = |out: &mut Vec<String>, n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    let mut globals: Vec<String> = Vec::new();
    for d in MODULE_DUNDERS {
        push(&mut globals, d);
    }
    let at_module_level = chain.len() == 1;
    for b in scope::bindings(body).0 {
        // A module-level failure sees only what ran before it.
        if !at_module_level || b.stmt.start < stmt_start {
            push(&mut globals, &b.name);
        }
    }
    let mut locals: Vec<String> = Vec::new();
    let mut self_has_attr = false;
    match chain.last() {
        Some(Scope::Function(f)) => {
            let (binds, declared) = scope::bindings(f.body);
            if !declared.is_empty() {
                return None;
            }
            for p in f.params() {
                push(&mut locals, p);
            }
            for b in binds.iter().filter(|b| b.stmt.start < stmt_start) {
                push(&mut locals, &b.name);
            }
            // CPython checks a local literally named `self`.
            if f.params().contains(&"self") {
                if let Some(Scope::Class(c)) = chain.len().checked_sub(2).and_then(|i| chain.get(i))
                {
                    self_has_attr = scope::class_attributes(c).iter().any(|a| a == name);
                }
            }
        }
        Some(Scope::Class(c)) => {
            for b in scope::bindings(&c.body).0 {
                if b.stmt.start < stmt_start {
                    push(&mut locals, &b.name);
                }
            }
        }
        // At module level `f_locals` is `f_globals`: CPython counts them twice.
        _ => locals = globals.clone(),
    }
    // Comprehension variables live in the frame (Python 3.12 inlines comprehensions).
    for v in inner_scope_names(ctx, at) {
        push(&mut locals, &v);
    }
    Some((locals, globals, self_has_attr))
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
    // Names of the functions around that share a word or a prefix with `name` (a renamed
    // `output` read as `output_path`): too far for the edit distance, proposed after it.
    let mut related: Vec<(std::cmp::Reverse<usize>, Origin, usize, String)> = Vec::new();
    let mut offer = |cand: &str, text: String, origin: Origin| {
        let d = if origin == Origin::Attribute && cand == name {
            Some(0)
        } else {
            scope::close(name, cand)
        };
        match d {
            Some(d) => seen.push((d, origin, text)),
            None if matches!(origin, Origin::Local | Origin::Enclosing) => {
                if let Some(shared) = kinship(name, cand) {
                    let gap = name.len().abs_diff(cand.len());
                    related.push((std::cmp::Reverse(shared), origin, gap, text));
                }
            }
            None => {}
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
    related.sort();
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
    let mut kin = 0;
    for (_, origin, _, text) in related {
        if used.contains(&text) || kin >= MAX_RELATED {
            continue;
        }
        let title = format!(
            "use `{text}` ({}, sharing a word with it) instead of the undefined `{name}`",
            origin.describe()
        );
        out.push(rename(ctx, name, at, &text, title));
        used.push(text);
        kin += 1;
    }
    out
}

/// How related two names are by their words (`output_path` and `output`: 1 shared word), or
/// by a prefix of at least three letters one has of the other (`cfg` and `cfg2`, `conf` and
/// `config`): `None` when they share neither.
fn kinship(name: &str, cand: &str) -> Option<usize> {
    if name == cand || cand == "self" || cand == "cls" {
        return None;
    }
    let words = |s: &str| -> Vec<String> {
        s.split('_')
            .filter(|w| w.len() >= 3)
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(name), words(cand));
    let shared = a.iter().filter(|w| b.contains(w)).count();
    if shared > 0 {
        return Some(shared);
    }
    let (n, c) = (name.to_lowercase(), cand.to_lowercase());
    let prefix = n.chars().zip(c.chars()).take_while(|(x, y)| x == y).count();
    let shorter = n.len().min(c.len());
    (prefix >= 3 && prefix == shorter).then_some(0)
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
                alias: None,
            });
        }
    } else if let Some(index) = ctx.stdlib.index() {
        homes = index.homes(name);
        if homes.clear != ranked {
            let take = if ranked { homes.modules.len() } else { 1 };
            imports.extend(homes.modules.iter().take(take).map(|m| NewImport {
                module: m,
                name: Some(name),
                alias: None,
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
            alias: None,
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

/// The imports other modules of the project bind `name` with, most used first.
fn import_used(ctx: &Context, name: &str) -> Vec<Fix> {
    let here = ctx.source.path();
    let Some(root) = project::import_root(here) else {
        return Vec::new();
    };
    let importer = project::module_name(&root, here);
    let relative = prefers_relative(ctx.module.body());
    let mut out = Vec::new();
    for (used, count) in used_imports::imports_binding(&root, name, here)
        .into_iter()
        .take(MAX_MODULES)
    {
        // Relative where both this file and the module it came from import that way.
        let module = if used.relative && relative {
            imports::relative_spelling(&used.module, 1, importer.as_deref())
        } else {
            used.module.clone()
        };
        let imp = NewImport {
            module: &module,
            name: used.name.as_deref(),
            alias: used.alias.as_deref(),
        };
        let Some(edits) =
            imports::add_import(ctx.source, ctx.module, Some(&root), ctx.stdlib, &imp)
        else {
            continue;
        };
        out.push(Fix::new(
            format!(
                "add `{}`, the import {count} other module{} of the project bind{} `{name}` with",
                imp.text(),
                if count == 1 { "" } else { "s" },
                if count == 1 { "s" } else { "" },
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

    #[test]
    fn names_that_share_a_word_or_a_prefix() {
        assert_eq!(kinship("output_path", "output"), Some(1));
        assert_eq!(kinship("out_dir_path", "dir_path"), Some(2));
        assert_eq!(kinship("conf", "config"), Some(0));
        assert_eq!(kinship("output_path", "path_len"), Some(1));
        // Short words and unrelated names say nothing; nor does the name itself or `self`.
        assert_eq!(kinship("a_b", "a_c"), None);
        assert_eq!(kinship("price", "customer"), None);
        assert_eq!(kinship("output", "output"), None);
        assert_eq!(kinship("self_ref", "self"), None);
        assert_eq!(kinship("co", "count"), None);
    }
}
