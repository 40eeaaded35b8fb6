//! `attr_rename`: repairs `'T' object has no attribute 'X'` (T not `NoneType`: the null guards
//! own that), `type object 'T' has no attribute 'X'` and `module 'm' has no attribute 'X'` by
//! renaming the attribute access.
//!
//! Names proposed, in rank order (a rule with `names = "hint"` proposes only the first):
//! 1. Python's own suggestion (`Did you mean: 'Y'?`), when the message carries it; else (rule
//!    `names = "hint"`) the one CPython would make, computed from the probe's `dir()` of the
//!    receiver and the attributes the class's methods assign;
//! 2. the nearest attributes of the class, read from its definition in the project (methods,
//!    class attributes, `self.` assignments in any method, base classes defined alongside),
//!    or of the project module; for builtin types, a table of their public attributes; for a
//!    standard-library module, the names the interpreter's index has for it
//!    ([`crate::transform::stdlib`]).
//!
//! Nearest means the smallest edit distance under CPython's own cut-off, then names that
//! contain the wrong one as a word; a called attribute prefers methods and a read one prefers
//! data attributes.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};
use serde::{Deserialize, Serialize};

use crate::edit::{Edit, Fix};
use crate::source::SourceFile;
use crate::suggest;
use crate::syntax::mangle;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, ParsedModule, SubExpr, SubExprKind, MAX_AST_DEPTH};
use crate::transform::common::{self as shared, rng};
use crate::transform::Context;

/// Modules read to find a class or module definition, at most.
const MAX_FILES: usize = 12;

/// Public attributes of common builtin types (the probe's `dir()` is not available to
/// transforms).
const BUILTIN_ATTRS: &[(&str, &[&str])] = &[
    ("str", shared::STR_METHODS),
    (
        "list",
        &[
            "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove",
            "reverse", "sort",
        ],
    ),
    (
        "dict",
        &[
            "clear",
            "copy",
            "fromkeys",
            "get",
            "items",
            "keys",
            "pop",
            "popitem",
            "setdefault",
            "update",
            "values",
        ],
    ),
    (
        "set",
        &[
            "add",
            "clear",
            "copy",
            "difference",
            "difference_update",
            "discard",
            "intersection",
            "intersection_update",
            "isdisjoint",
            "issubset",
            "issuperset",
            "pop",
            "remove",
            "symmetric_difference",
            "symmetric_difference_update",
            "union",
            "update",
        ],
    ),
    ("tuple", &["count", "index"]),
    (
        "int",
        &[
            "as_integer_ratio",
            "bit_count",
            "bit_length",
            "conjugate",
            "denominator",
            "from_bytes",
            "imag",
            "numerator",
            "real",
            "to_bytes",
        ],
    ),
    (
        "float",
        &[
            "as_integer_ratio",
            "conjugate",
            "fromhex",
            "hex",
            "imag",
            "is_integer",
            "real",
        ],
    ),
    (
        "bytes",
        &[
            "count",
            "decode",
            "endswith",
            "find",
            "hex",
            "index",
            "join",
            "lower",
            "replace",
            "split",
            "startswith",
            "strip",
            "upper",
        ],
    ),
];

/// A name an object or module has, and whether calling it makes sense.
#[derive(Debug, Clone)]
struct Member {
    name: String,
    callable: bool,
}

/// The rule's params: `names = "hint"` proposes Python's suggestion only; absent or
/// `"nearest"`, the nearest names follow it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Names>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Names {
    Hint,
    Nearest,
}

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let Some(attr) = ctx.captures.get("attr") else {
        return Vec::new();
    };
    // Inside `class C` the message's `_C__x` is written `__x` (and `dir()` lists `_C__y`).
    let class = ctx.located.class.as_ref().map(|c| c.name.as_str());
    let written = class.and_then(|c| mangle::unmangle(attr, c));
    let groups = targets(ctx, attr, written.as_deref());
    if groups.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<(String, String)> = Vec::new();
    let only_hint = params.names == Some(Names::Hint);
    match ctx.captures.get("hint") {
        Some(hint) if hint != attr => names.push((hint.clone(), "Python's suggestion".into())),
        Some(_) => {}
        None if only_hint => {
            if let Some(hint) = computed_hint(ctx, attr, &groups[0]) {
                names.push((hint, "Python's suggestion, computed".into()));
            }
        }
        None => {}
    }
    let called = groups[0].iter().any(|t| is_called(ctx, t));
    let members = if only_hint { Vec::new() } else { members(ctx) };
    let source = match (
        ctx.captures.get("module"),
        ctx.captures.get("type").or(ctx.captures.get("class")),
    ) {
        (Some(m), _) => format!("the nearest name in module `{m}`"),
        (None, Some(t)) => format!("the nearest attribute of `{t}`"),
        (None, None) => "the nearest attribute".to_string(),
    };
    for name in rank(attr, &members, called) {
        if !names.iter().any(|(n, _)| *n == name) {
            names.push((name, source.clone()));
        }
    }
    let mut out = Vec::new();
    for group in &groups {
        for (name, why) in &names {
            // A private access gets a private name of the same class, written as such.
            let private = |t: &SubExpr| matches!(&t.kind, SubExprKind::Attribute { name: n, .. } if n != attr);
            let new_name = match (class, group.iter().any(|t| private(t))) {
                (Some(c), true) => match mangle::unmangle(name, c) {
                    Some(w) => w,
                    None if mangle::is_mangled_for_other(name, c) => continue,
                    None => name.clone(),
                },
                _ => name.clone(),
            };
            let edits: Vec<Edit> = group
                .iter()
                .filter_map(|t| match &t.kind {
                    SubExprKind::Attribute { name_range, .. } => {
                        Some(Edit::replacement(name_range.clone(), new_name.clone()))
                    }
                    _ => None,
                })
                .collect();
            if edits.is_empty() {
                continue;
            }
            let old_name = match &group[0].kind {
                SubExprKind::Attribute { name, .. } => name.as_str(),
                _ => attr.as_str(),
            };
            out.push(Fix::new(
                format!("rename `.{old_name}` to `.{new_name}` ({why})"),
                ctx.rule,
                ctx.confidence,
                edits,
            ));
        }
    }
    out
}

/// CPython's suggestion for `.attr` ([`suggest::for_attribute`]) from `dir()` of the receiver
/// as the probe saw it, plus, for an instance of a class the project defines, the attributes
/// its methods assign (`self.y = ...` in a method or branch that has not run yet): once they
/// exist, that is what Python would suggest. Without the probe's `dir()`, nothing.
fn computed_hint(ctx: &Context, attr: &str, group: &[&SubExpr]) -> Option<String> {
    let probe = ctx.probe?;
    let receiver = group.iter().find_map(|t| match &t.kind {
        SubExprKind::Attribute { receiver, .. } => Some(receiver),
        _ => None,
    })?;
    // The probe evaluates a receiver written twice once, at its first occurrence.
    let dir = probe.dir_of(receiver).or_else(|| {
        let text = ctx.text(receiver);
        probe
            .dirs
            .iter()
            .find(|(r, _)| ctx.text(r) == text)
            .map(|(_, d)| d)
    })?;
    if dir.names.len() != dir.total {
        // More names than the probe keeps: more than CPython looks at.
        return None;
    }
    let mut names: Vec<String> = dir.names.clone();
    if ctx.captures.contains_key("type") {
        for m in members(ctx) {
            if !names.contains(&m.name) {
                names.push(m.name);
            }
        }
    }
    // `dir()` returns its names sorted; the merged list is what it would return.
    names.sort();
    let strs: Vec<&str> = names.iter().map(String::as_str).collect();
    let imp = suggest::Impl::for_version(probe.python_version);
    suggest::for_attribute(&strs, attr, dir.is_self, imp)
}

/// The accesses of `.attr` in the statement that may have failed, grouped by receiver text:
/// the probe's receiver type names the object, the carets mark the access; otherwise every
/// access of that name.
fn targets<'a>(ctx: &'a Context, attr: &str, written: Option<&str>) -> Vec<Vec<&'a SubExpr>> {
    let all: Vec<&SubExpr> = ctx
        .located
        .exprs
        .iter()
        .filter(|e| {
            matches!(&e.kind, SubExprKind::Attribute { name, .. }
                if name == attr || Some(name.as_str()) == written)
        })
        .collect();
    let receiver = |e: &SubExpr| match &e.kind {
        SubExprKind::Attribute { receiver, .. } => receiver.clone(),
        _ => e.range.clone(),
    };
    let mut chosen: Vec<&SubExpr> = Vec::new();
    if let (Some(probe), Some(ty)) = (ctx.probe, ctx.captures.get("type")) {
        chosen = all
            .iter()
            .copied()
            .filter(|e| probe.type_of(&receiver(e)) == Some(ty.as_str()))
            .collect();
    }
    if chosen.is_empty() {
        if let Some(focus) = &ctx.focus {
            chosen = all
                .iter()
                .copied()
                .filter(|e| {
                    let SubExprKind::Attribute { name_range, .. } = &e.kind else {
                        return false;
                    };
                    *focus == e.range
                        || (focus.start <= name_range.start && name_range.end <= focus.end)
                        || (name_range.start <= focus.start && focus.end <= name_range.end)
                })
                .collect();
        }
    }
    if chosen.is_empty() {
        chosen = all;
    }
    let mut groups: Vec<Vec<&SubExpr>> = Vec::new();
    for e in chosen {
        let text = ctx.text(&receiver(e));
        match groups
            .iter_mut()
            .find(|g| ctx.text(&receiver(g[0])) == text)
        {
            Some(g) => g.push(e),
            None => groups.push(vec![e]),
        }
    }
    groups
}

fn is_called(ctx: &Context, target: &SubExpr) -> bool {
    ctx.located
        .exprs
        .iter()
        .any(|e| matches!(&e.kind, SubExprKind::Call { func, .. } if *func == target.range))
}

/// Nearest names, with members whose callability matches the use first among equals.
fn rank(attr: &str, members: &[Member], called: bool) -> Vec<String> {
    let near = shared::nearest(attr, members.iter().map(|m| m.name.as_str()), 6);
    let fits = |n: &String| members.iter().any(|m| m.name == *n && m.callable == called);
    let mut out: Vec<String> = Vec::new();
    // Keep the distance order, but within the closest names prefer those that fit the use.
    let best = near
        .first()
        .map(|n| suggest::distance(attr, n))
        .unwrap_or(0);
    let (first, rest): (Vec<String>, Vec<String>) = near
        .into_iter()
        .partition(|n| suggest::distance(attr, n) == best);
    let (fit, unfit): (Vec<String>, Vec<String>) = first.into_iter().partition(fits);
    out.extend(fit);
    out.extend(unfit);
    out.extend(rest);
    out.truncate(3);
    out
}

/// What the object (or module) has: from the project's definition, else the builtin table.
fn members(ctx: &Context) -> Vec<Member> {
    if let Some(module) = ctx.captures.get("module") {
        return module_members(ctx, module);
    }
    let Some(ty) = ctx.captures.get("type").or(ctx.captures.get("class")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    if let Some(r) = class_range(ctx.module, ty) {
        class_members(ctx.module, &r, &mut out, &mut seen, 0);
    } else if let Some((pm, r)) = find_imported_class(ctx, ty) {
        class_members(&pm, &r, &mut out, &mut seen, 0);
    }
    if out.is_empty() {
        if let Some((_, names)) = BUILTIN_ATTRS.iter().find(|(t, _)| t == ty) {
            out.extend(names.iter().map(|n| Member {
                name: n.to_string(),
                callable: !matches!(*n, "real" | "imag" | "numerator" | "denominator"),
            }));
        }
    }
    out
}

/// The module and range of `class NAME` in the project modules this file imports.
fn find_imported_class(ctx: &Context, name: &str) -> Option<(ParsedModule, Range<usize>)> {
    let mut read = 0;
    for (module, level, imported) in imports(ctx.module) {
        if read >= MAX_FILES {
            break;
        }
        // `from m import NAME [as ...]` names the module to read; plain imports may hold it too.
        let wanted = match &imported {
            Some(names) => names
                .iter()
                .find(|(orig, alias)| alias == name || orig == name),
            None => None,
        };
        let class_name = match (&imported, wanted) {
            (Some(_), Some((orig, _))) => orig.clone(),
            (Some(_), None) => continue,
            (None, _) => name.to_string(),
        };
        let Some(path) = resolve_module(ctx.source.path(), &module, level) else {
            continue;
        };
        read += 1;
        let Some(pm) = parse_file(&path) else {
            continue;
        };
        if let Some(r) = class_range(&pm, &class_name) {
            return Some((pm, r));
        }
    }
    None
}

fn parse_file(path: &Path) -> Option<ParsedModule> {
    let source = SourceFile::read(path).ok()?;
    syntax::parse(&source).ok()
}

/// The range of the first `class NAME` anywhere in the module.
fn class_range(pm: &ParsedModule, name: &str) -> Option<Range<usize>> {
    let mut found = None;
    let roots: Vec<Node> = pm.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if found.is_some() {
            return false;
        }
        match node {
            Node::Stmt(Stmt::ClassDef(c)) if c.name.as_str() == name => {
                found = Some(rng(c.range()));
                false
            }
            Node::Stmt(_) => true,
            _ => false,
        }
    });
    found
}

fn class_members(
    pm: &ParsedModule,
    class: &Range<usize>,
    out: &mut Vec<Member>,
    seen: &mut BTreeSet<String>,
    depth: usize,
) {
    let mut stmt: Option<&ast::StmtClassDef> = None;
    let roots: Vec<Node> = pm.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if stmt.is_some() {
            return false;
        }
        match node {
            Node::Stmt(Stmt::ClassDef(c)) if rng(c.range()) == *class => {
                stmt = Some(c);
                false
            }
            Node::Stmt(_) => true,
            _ => false,
        }
    });
    let Some(c) = stmt else { return };
    if !seen.insert(c.name.to_string()) {
        return;
    }
    // Names as the object has them: `__x` in `class C` is `_C__x`, as in messages and `dir()`.
    let mut push = |name: &str, callable: bool| {
        let name = mangle::mangle(name, c.name.as_str()).unwrap_or_else(|| name.to_string());
        if !out.iter().any(|m| m.name == name) {
            out.push(Member { name, callable });
        }
    };
    for s in &c.body {
        match s {
            Stmt::FunctionDef(f) => {
                let property = f.decorator_list.iter().any(is_property);
                push(f.name.as_str(), !property);
                self_assignments(f.args.as_ref(), &f.body, &mut push);
            }
            Stmt::AsyncFunctionDef(f) => {
                push(f.name.as_str(), true);
                self_assignments(f.args.as_ref(), &f.body, &mut push);
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    if let Expr::Name(n) = t {
                        push(n.id.as_str(), false);
                    }
                }
            }
            Stmt::AnnAssign(a) => {
                if let Expr::Name(n) = a.target.as_ref() {
                    push(n.id.as_str(), false);
                }
            }
            Stmt::ClassDef(inner) => push(inner.name.as_str(), true),
            _ => {}
        }
    }
    if depth >= 4 {
        return;
    }
    for base in &c.bases {
        if let Expr::Name(n) = base {
            if let Some(r) = class_range(pm, n.id.as_str()) {
                class_members(pm, &r, out, seen, depth + 1);
            }
        }
    }
}

fn is_property(e: &Expr) -> bool {
    match e {
        Expr::Name(n) => matches!(n.id.as_str(), "property" | "cached_property"),
        Expr::Attribute(a) => matches!(a.attr.as_str(), "cached_property" | "setter"),
        _ => false,
    }
}

/// `self.X = ...` (any target form) in a method whose first parameter is `self`'s name.
fn self_assignments(args: &ast::Arguments, body: &[Stmt], push: &mut impl FnMut(&str, bool)) {
    let Some(first) = args.posonlyargs.iter().chain(&args.args).next() else {
        return;
    };
    let me = first.def.arg.as_str();
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => {
                return false
            }
            Node::Expr(Expr::Attribute(a)) if matches!(a.ctx, ast::ExprContext::Store) => {
                if matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == me) {
                    push(a.attr.as_str(), false);
                }
            }
            _ => {}
        }
        true
    });
}

/// Top-level names of a project module (definitions, assignments, imports), else the public
/// names the interpreter's standard-library index has for `dotted`; empty when neither knows it.
fn module_members(ctx: &Context, dotted: &str) -> Vec<Member> {
    let Some(path) = resolve_module(ctx.source.path(), dotted, 0) else {
        return stdlib_members(ctx, dotted);
    };
    let Some(pm) = parse_file(&path) else {
        return Vec::new();
    };
    let mut out: Vec<Member> = Vec::new();
    let mut push = |name: &str, callable: bool| {
        if !out.iter().any(|m| m.name == name) {
            out.push(Member {
                name: name.to_string(),
                callable,
            });
        }
    };
    for s in pm.body() {
        match s {
            Stmt::FunctionDef(f) => push(f.name.as_str(), true),
            Stmt::AsyncFunctionDef(f) => push(f.name.as_str(), true),
            Stmt::ClassDef(c) => push(c.name.as_str(), true),
            Stmt::Assign(a) => {
                for t in &a.targets {
                    if let Expr::Name(n) = t {
                        push(n.id.as_str(), false);
                    }
                }
            }
            Stmt::AnnAssign(a) => {
                if let Expr::Name(n) = a.target.as_ref() {
                    push(n.id.as_str(), false);
                }
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    let name = a.asname.as_ref().unwrap_or(&a.name);
                    let first = name.as_str().split('.').next().unwrap_or("");
                    push(first, false);
                }
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    push(a.asname.as_ref().unwrap_or(&a.name).as_str(), true);
                }
            }
            _ => {}
        }
    }
    out
}

/// What the standard-library module `dotted` has (`os` → `getcwd`, `getcwdb`, ...).
fn stdlib_members(ctx: &Context, dotted: &str) -> Vec<Member> {
    ctx.stdlib
        .index()
        .and_then(|i| i.members(dotted))
        .unwrap_or_default()
        .into_iter()
        .map(|(name, callable)| Member { name, callable })
        .collect()
}

/// Imports of a module: (module, relative level, `Some(names with aliases)` for `from m
/// import ...`, `None` for `import m`).
type Import = (String, usize, Option<Vec<(String, String)>>);

fn imports(pm: &ParsedModule) -> Vec<Import> {
    let mut out = Vec::new();
    let roots: Vec<Node> = pm.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::Import(i)) => {
            for a in &i.names {
                out.push((a.name.to_string(), 0, None));
            }
            false
        }
        Node::Stmt(Stmt::ImportFrom(i)) => {
            let level = i.level.map_or(0, |l| l.to_usize());
            let module = i.module.as_ref().map(|m| m.to_string()).unwrap_or_default();
            let names = i
                .names
                .iter()
                .map(|a| {
                    let orig = a.name.to_string();
                    let alias = a.asname.as_ref().map_or(orig.clone(), |s| s.to_string());
                    (orig, alias)
                })
                .collect();
            out.push((module, level, Some(names)));
            false
        }
        Node::Stmt(_) => true,
        _ => false,
    });
    out
}

/// The project file of module `dotted` imported from `from_file` (`level` leading dots for a
/// relative import): looked up next to the file, then from the top of its package and the
/// two directories above (a `src/` layout, the rootdir). Never in a virtualenv.
fn resolve_module(from_file: &Path, dotted: &str, level: usize) -> Option<PathBuf> {
    let dir = from_file.parent()?;
    let rel: PathBuf = dotted.split('.').filter(|p| !p.is_empty()).collect();
    let try_base = |base: &Path| -> Option<PathBuf> {
        let file = base.join(&rel).with_extension("py");
        if !rel.as_os_str().is_empty() && file.is_file() {
            return Some(file);
        }
        let init = base.join(&rel).join("__init__.py");
        init.is_file().then_some(init)
    };
    if level > 0 {
        let mut base = dir.to_path_buf();
        for _ in 1..level {
            base = base.parent()?.to_path_buf();
        }
        return try_base(&base);
    }
    let mut top = dir.to_path_buf();
    while top.join("__init__.py").is_file() {
        match top.parent() {
            Some(p) => top = p.to_path_buf(),
            None => break,
        }
    }
    let mut bases = vec![dir.to_path_buf(), top.clone()];
    let mut up = top;
    for _ in 0..2 {
        match up.parent() {
            Some(p) => {
                up = p.to_path_buf();
                bases.push(up.clone());
            }
            None => break,
        }
    }
    bases.iter().find_map(|b| try_base(b)).filter(|p| {
        !p.components().any(|c| {
            let s = c.as_os_str().to_string_lossy();
            s == "site-packages" || s == ".venv" || s == "venv"
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_prefers_the_use() {
        let members = vec![
            Member {
                name: "totals".into(),
                callable: false,
            },
            Member {
                name: "total".into(),
                callable: true,
            },
        ];
        assert_eq!(rank("totl", &members, true)[0], "total");
    }
}
