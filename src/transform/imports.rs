//! `import_name`: repairs `ImportError: cannot import name 'X' from 'm'`, and places new import
//! statements where a human would (used by the NameError repairs too).
//!
//! Candidates, in rank order:
//! - `mode = "hint"`: Python's own `Did you mean: 'Y'?` → `from m import Y`, with the file's
//!   uses of `X` renamed (the name never got bound, so every use of it would fail too);
//! - `mode = "project"` (`m` is one of the project's modules): the project module that defines
//!   `X` at top level (`from m import X` → `from other import X`; other names keep importing
//!   from `m`), then the names `m` defines that are nearest to `X` by edit distance.

use std::path::{Path, PathBuf};

use rustpython_parser::ast::{self, Expr, ExprContext, Stmt};
use serde::{Deserialize, Serialize};

use super::names::project;
use super::names::scope::{self, range_of};
use super::stdlib::Stdlib;
use super::Context;
use crate::edit::{self, Edit, Fix};
use crate::source::SourceFile;
use crate::syntax::walk::{self, Node};
use crate::syntax::{ParsedModule, MAX_AST_DEPTH};

/// Nearest names proposed at most.
const MAX_NEAREST: usize = 3;
/// Relocations proposed at most.
const MAX_MOVES: usize = 2;

/// The rule's params: where `import_name` looks for the right name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleParams {
    pub mode: Mode,
}

/// The modes of `import_name` (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Hint,
    Project,
}

pub fn candidates(ctx: &Context, params: &RuleParams) -> Vec<Fix> {
    let Some(name) = ctx.captures.get("name") else {
        return Vec::new();
    };
    let Some(stmt) = import_stmt(ctx) else {
        return Vec::new();
    };
    let Some(alias) = stmt.names.iter().find(|a| a.name.as_str() == name) else {
        return Vec::new();
    };
    let mut fixes = Vec::new();
    match params.mode {
        Mode::Hint => {
            if let Some(hint) = ctx
                .captures
                .get("hint")
                .filter(|h| project::is_identifier(h))
            {
                fixes.extend(rename_fix(ctx, alias, name, hint, "Python's suggestion"));
            }
        }
        Mode::Project => {
            let here = ctx.source.path();
            // Python 3.6 says only `cannot import name 'X'`: the module is then read from the
            // statement itself (3.7+ name it, resolved, in the message).
            let Some(module) = ctx
                .captures
                .get("module")
                .cloned()
                .or_else(|| absolute_module(here, stmt))
            else {
                return fixes;
            };
            let module = module.as_str();
            let Some((root, m_file)) = project::resolve_module(here, module) else {
                return fixes;
            };
            let importer = project::module_name(&root, here);
            let exclude: Vec<PathBuf> = vec![m_file.clone(), here.to_path_buf()];
            for other in project::modules_defining(&root, name, &exclude, importer.as_deref())
                .into_iter()
                .take(MAX_MOVES)
            {
                fixes.extend(move_fix(ctx, stmt, alias, &other, importer.as_deref()));
            }
            if let Some(top) = project::top_level(&m_file) {
                let mut near: Vec<(usize, String)> = top
                    .defined
                    .iter()
                    .chain(&top.imported)
                    .filter_map(|n| scope::close(name, n).map(|d| (d, n.clone())))
                    .collect();
                near.sort();
                near.dedup_by(|a, b| a.1 == b.1);
                for (_, n) in near.into_iter().take(MAX_NEAREST) {
                    let why = format!("the nearest name `{module}` defines");
                    fixes.extend(rename_fix(ctx, alias, name, &n, &why));
                }
            }
        }
    }
    fixes
}

/// The absolute name of the module `stmt` imports from, as Python resolves it for the file
/// `here` (`from .models import X` in `crm/service.py` → `crm.models`).
fn absolute_module(here: &Path, stmt: &ast::StmtImportFrom) -> Option<String> {
    let level = stmt.level.as_ref().map_or(0, |l| l.to_usize());
    let tail = stmt.module.as_ref().map(|m| m.to_string());
    if level == 0 {
        return tail;
    }
    let importer = project::module_name(&project::import_root(here)?, here)?;
    let mut parts: Vec<&str> = importer.split('.').collect();
    // A module's package is its parent; a package's `__init__.py` is its own package.
    if here.file_name().is_none_or(|f| f != "__init__.py") {
        parts.pop();
    }
    for _ in 1..level {
        parts.pop()?;
    }
    parts.extend(tail.as_deref());
    (!parts.is_empty()).then(|| parts.join("."))
}

/// The `from ... import ...` statement the failure is on.
fn import_stmt<'a>(ctx: &Context<'a>) -> Option<&'a ast::StmtImportFrom> {
    let path = scope::stmt_path(ctx.module.body(), ctx.located.range.start);
    match path.last() {
        Some(Stmt::ImportFrom(s)) => Some(s),
        _ => None,
    }
}

/// `from m import X` → `from m import Y`, plus the file's other uses of `X` when it was bound
/// under its own name (no `as`).
fn rename_fix(ctx: &Context, alias: &ast::Alias, from: &str, to: &str, why: &str) -> Option<Fix> {
    let ar = range_of(alias);
    if ctx.text(&(ar.start..ar.start + from.len())) != from {
        return None;
    }
    let mut edits = vec![Edit::replacement(ar.start..ar.start + from.len(), to)];
    if alias.asname.is_none() && !bound_elsewhere(ctx.module.body(), from) {
        let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
        for r in all_name_loads(&roots, from) {
            edits.push(Edit::replacement(r, to));
        }
    }
    Some(Fix::new(
        format!("import `{to}` instead of `{from}` ({why})"),
        ctx.rule,
        ctx.confidence,
        edits,
    ))
}

/// Every load of `name` in the file, nested scopes included.
fn all_name_loads(roots: &[Node], name: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    walk::walk(roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(e @ Expr::Name(n)) = node {
            if n.id.as_str() == name && matches!(n.ctx, ExprContext::Load) {
                out.push(range_of(e));
            }
        }
        true
    });
    out.sort_by_key(|r| r.start);
    out.dedup();
    out
}

/// Whether anything but an import binds `name` somewhere in the file (then its uses may mean
/// that binding, and only the import is changed).
fn bound_elsewhere(body: &[Stmt], name: &str) -> bool {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(s) => {
                if let Some(f) = scope::Func::of(s) {
                    found |= f.name == name || f.params().contains(&name);
                }
                if let Stmt::ClassDef(c) = s {
                    found |= c.name.as_str() == name;
                }
            }
            Node::Expr(Expr::Name(n)) => {
                found |= n.id.as_str() == name && !matches!(n.ctx, ExprContext::Load);
            }
            _ => {}
        }
        !found
    });
    found
}

/// `from m import X` → `from other import X` (only `X` moves; the statement's other names
/// keep importing from `m`).
fn move_fix(
    ctx: &Context,
    stmt: &ast::StmtImportFrom,
    alias: &ast::Alias,
    other: &str,
    importer: Option<&str>,
) -> Option<Fix> {
    let level = stmt.level.as_ref().map_or(0, |l| l.to_usize());
    let target = relative_spelling(other, level, importer);
    let sr = range_of(stmt);
    let stmt_text = ctx.text(&sr);
    let alias_text = ctx.text(&range_of(alias)).to_string();
    let edits = if stmt.names.len() == 1 {
        // Replace the module between `from` and `import`.
        let after_from = stmt_text.strip_prefix("from")?;
        let ws = after_from.len() - after_from.trim_start().len();
        let start = sr.start + 4 + ws;
        let old: String = ".".repeat(level) + stmt.module.as_ref().map_or("", |m| m.as_str());
        if ctx.text(&(start..start + old.len())) != old {
            return None;
        }
        vec![Edit::replacement(start..start + old.len(), target.clone())]
    } else {
        let i = stmt.names.iter().position(|a| std::ptr::eq(a, alias))?;
        let del = if i + 1 < stmt.names.len() {
            range_of(alias).start..range_of(&stmt.names[i + 1]).start
        } else {
            range_of(&stmt.names[i - 1]).end..range_of(alias).end
        };
        let mut edits = vec![Edit::deletion(del)];
        if ctx.located.depth == 0 {
            // At module level the new import joins the import block like any other.
            let root = project::import_root(ctx.source.path());
            let imp = NewImport {
                module: &target,
                name: Some(&alias_text),
                alias: None,
            };
            edits.extend(add_import(
                ctx.source,
                ctx.module,
                root.as_deref(),
                ctx.stdlib,
                &imp,
            )?);
        } else {
            let last_line = ctx.module.line_of(sr.end.saturating_sub(1).max(sr.start));
            edits.push(edit::insert_line_after(
                ctx.source,
                last_line,
                &ctx.located.indent,
                &format!("from {target} import {alias_text}"),
            )?);
        }
        edits
    };
    Some(Fix::new(
        format!(
            "import `{}` from `{other}`, where the project defines it",
            alias.name.as_str()
        ),
        ctx.rule,
        ctx.confidence,
        edits,
    ))
}

/// `pkg.sub.mod` as the statement would spell it: relative (`.mod`) when the statement is
/// relative and the module is in the importer's package, else absolute.
pub(crate) fn relative_spelling(target: &str, level: usize, importer: Option<&str>) -> String {
    if level == 1 {
        if let Some(imp) = importer {
            let package = imp.rsplit_once('.').map_or("", |(p, _)| p);
            if let Some(rest) = target.strip_prefix(&format!("{package}.")) {
                if !package.is_empty() {
                    return format!(".{rest}");
                }
            }
        }
    }
    target.to_string()
}

// ---------------------------------------------------------------------------------------------
// Placing a new import.

/// The groups of an import block, in the order PEP 8 (and isort) put them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Group {
    Future,
    Stdlib,
    ThirdParty,
    Local,
}

/// An import to add: `import module` when `name` is `None`, else `from module import name`;
/// `as alias` after either when `alias` is set.
pub(crate) struct NewImport<'a> {
    pub module: &'a str,
    pub name: Option<&'a str>,
    pub alias: Option<&'a str>,
}

impl NewImport<'_> {
    pub fn text(&self) -> String {
        let bound = self.alias.map_or(String::new(), |a| format!(" as {a}"));
        match self.name {
            None => format!("import {}{bound}", self.module),
            Some(n) => format!("from {} import {n}{bound}", self.module),
        }
    }

    /// The name the import binds: the alias, the imported name, or the module's first part.
    fn bound(&self) -> &str {
        self.alias
            .or(self.name)
            .unwrap_or_else(|| self.module.split('.').next().unwrap_or(self.module))
    }

    /// What goes into a `from module import ...` list: `name` or `name as alias`.
    fn imported(&self) -> Option<String> {
        let n = self.name?;
        Some(self.alias.map_or(n.to_string(), |a| format!("{n} as {a}")))
    }

    fn group(&self, root: Option<&Path>, stdlib: &Stdlib) -> Group {
        // `.units` is spelt relative: a local import.
        let level = self.module.len() - self.module.trim_start_matches('.').len();
        group_of_module(self.module, level, root, stdlib)
    }
}

fn group_of_module(module: &str, level: usize, root: Option<&Path>, stdlib: &Stdlib) -> Group {
    let top = module.split('.').next().unwrap_or(module);
    if level > 0 {
        Group::Local
    } else if top == "__future__" {
        Group::Future
    } else if stdlib.is_module(top) {
        Group::Stdlib
    } else if root.is_some_and(|r| project::is_local_top(r, top)) {
        Group::Local
    } else {
        Group::ThirdParty
    }
}

/// One top-level import of the file's import block.
struct Existing<'a> {
    stmt: &'a Stmt,
    group: Group,
    /// Module name as written (`.models` for a relative import), lowercased for sorting.
    key: String,
    is_from: bool,
    first_line: usize,
    last_line: usize,
}

/// The edits that add `imp` to the file: merged into an existing single-line
/// `from module import ...`, or as a new line in its group of the import block (sorted when the
/// group is), or after the module docstring when the file has no imports.
pub(crate) fn add_import(
    source: &SourceFile,
    pm: &ParsedModule,
    root: Option<&Path>,
    stdlib: &Stdlib,
    imp: &NewImport,
) -> Option<Vec<Edit>> {
    let edits = add_import_in_block(source, pm, root, stdlib, imp)?;
    // Python binds the name only when the import runs: a use at module level above the place
    // the block chose (`X = operator.attrgetter(...)` between imports, before the sorted
    // place of `import operator`) needs the import above it.
    let Some(use_line) = first_eager_use(pm, imp.bound()) else {
        return Some(edits);
    };
    let use_start = source.line_start(use_line)?;
    if edits.iter().all(|e| e.range.start <= use_start) {
        return Some(edits);
    }
    let text = imp.text();
    let block = import_block(pm, root, stdlib);
    match block.iter().rev().find(|e| e.last_line < use_line) {
        Some(e) => Some(vec![edit::insert_line_after(
            source,
            e.last_line,
            "",
            &text,
        )?]),
        None => {
            let at = comments_above(source, use_line, 0);
            Some(vec![edit::insert_line_before(source, at, "", &text)?])
        }
    }
}

/// The first line of the top-level statement whose execution at import time reads `name`
/// (module-level code, class bodies, decorators and default values; not function bodies).
fn first_eager_use(pm: &ParsedModule, name: &str) -> Option<usize> {
    for s in pm.body() {
        let mut found = false;
        walk::walk(&[Node::Stmt(s)], MAX_AST_DEPTH, |node, _| {
            if found {
                return false;
            }
            match node {
                Node::Expr(Expr::Name(n)) => {
                    found = n.id.as_str() == name && matches!(n.ctx, ExprContext::Load);
                    false
                }
                Node::Expr(Expr::Lambda(_)) => false,
                Node::Stmt(f @ (Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_))) => {
                    // Decorators and defaults run when the `def` does; the body does not.
                    let (decorators, args) = match f {
                        Stmt::FunctionDef(d) => (&d.decorator_list, &d.args),
                        Stmt::AsyncFunctionDef(d) => (&d.decorator_list, &d.args),
                        _ => unreachable!(),
                    };
                    let defaults = args
                        .posonlyargs
                        .iter()
                        .chain(&args.args)
                        .chain(&args.kwonlyargs)
                        .filter_map(|a| a.default.as_deref());
                    let eager: Vec<Node> =
                        decorators.iter().chain(defaults).map(Node::Expr).collect();
                    found = !all_name_loads(&eager, name).is_empty();
                    false
                }
                _ => true,
            }
        });
        if found {
            // A decorated definition starts at its first decorator.
            let decorators = match s {
                Stmt::FunctionDef(d) => &d.decorator_list[..],
                Stmt::AsyncFunctionDef(d) => &d.decorator_list[..],
                Stmt::ClassDef(d) => &d.decorator_list[..],
                _ => &[],
            };
            let start = decorators
                .iter()
                .map(|d| range_of(d).start)
                .fold(range_of(s).start, usize::min);
            return Some(pm.line_of(start));
        }
    }
    None
}

fn add_import_in_block(
    source: &SourceFile,
    pm: &ParsedModule,
    root: Option<&Path>,
    stdlib: &Stdlib,
    imp: &NewImport,
) -> Option<Vec<Edit>> {
    let nl = source.newline();
    let body = pm.body();
    let block = import_block(pm, root, stdlib);
    if let Some(name) = imp.imported() {
        if let Some(e) = merge_into_from(source, pm, &block, imp.module, &name) {
            return Some(vec![e]);
        }
    }
    let text = imp.text();
    let group = imp.group(root, stdlib);
    let key = imp.module.to_lowercase();
    let members: Vec<&Existing> = block.iter().filter(|e| e.group == group).collect();
    if let (Some(first), Some(last)) = (members.first(), members.last()) {
        let plain_sorted = members.windows(2).all(|w| w[0].key <= w[1].key);
        let split_sorted = members
            .windows(2)
            .all(|w| (w[0].is_from, &w[0].key) <= (w[1].is_from, &w[1].key));
        let new_is_from = imp.name.is_some();
        let before = if plain_sorted {
            members.iter().find(|e| e.key > key)
        } else if split_sorted {
            members
                .iter()
                .find(|e| (e.is_from, &e.key) > (new_is_from, &key))
        } else {
            None
        };
        let _ = first;
        return match before {
            Some(e) => Some(vec![edit::insert_line_before(
                source,
                e.first_line,
                "",
                &text,
            )?]),
            None => Some(vec![edit::insert_line_after(
                source,
                last.last_line,
                "",
                &text,
            )?]),
        };
    }
    let earlier = block.iter().rev().find(|e| e.group < group);
    let later = block.iter().find(|e| e.group > group);
    match (earlier, later) {
        (Some(e), Some(l)) => {
            let separated = (e.last_line + 1..l.first_line).any(|ln| is_blank(source, ln));
            let at = comments_above(source, l.first_line, e.last_line);
            let content = if separated {
                format!("{text}{nl}{nl}")
            } else {
                format!("{text}{nl}")
            };
            Some(vec![Edit::insertion(source.line_start(at)?, content)])
        }
        (Some(e), None) => {
            let content = format!("{nl}{text}{nl}");
            let at = e.last_line + 1;
            Some(vec![insertion_at_line(source, at, content)?])
        }
        (None, Some(l)) => {
            let at = comments_above(source, l.first_line, 0);
            Some(vec![Edit::insertion(
                source.line_start(at)?,
                format!("{text}{nl}{nl}"),
            )])
        }
        (None, None) => {
            // No import at all: after the docstring (or the comment header), set off by
            // blank lines as a formatter would.
            let header_end = match body.first() {
                Some(s) if is_docstring(s) => pm.line_of(range_of(s).end.saturating_sub(1)),
                _ => leading_comment_lines(source),
            };
            let mut at = header_end + 1;
            let mut prefix = "";
            if header_end > 0 {
                if at <= source.line_count() && is_blank(source, at) {
                    at += 1;
                } else {
                    prefix = nl;
                }
            }
            // Blank lines after the import as a formatter leaves them: two before a `def` or
            // `class`, one before other code.
            let blanks = (at..=source.line_count())
                .take_while(|&l| is_blank(source, l))
                .count();
            let needed = match source.line_text(at + blanks) {
                Some(t) if starts_def(t) => 2usize,
                Some(_) => 1,
                None => 0,
            };
            let suffix = nl.repeat(needed.saturating_sub(blanks));
            Some(vec![insertion_at_line(
                source,
                at,
                format!("{prefix}{text}{nl}{suffix}"),
            )?])
        }
    }
}

/// An insertion at the start of 1-based `line`, or at the end of the file (after a newline)
/// when `line` is past the last one.
fn insertion_at_line(source: &SourceFile, line: usize, content: String) -> Option<Edit> {
    if line <= source.line_count() {
        return Some(Edit::insertion(source.line_start(line)?, content));
    }
    let t = source.text();
    let ends_nl = t.is_empty() || t.ends_with('\n') || t.ends_with('\r');
    let lead = if ends_nl { "" } else { source.newline() };
    Some(Edit::insertion(t.len(), format!("{lead}{content}")))
}

fn is_blank(source: &SourceFile, line: usize) -> bool {
    source.line_text(line).is_some_and(|t| t.trim().is_empty())
}

fn starts_def(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("def ")
        || t.starts_with("class ")
        || t.starts_with("async def ")
        || t.starts_with('@')
}

/// The first line of the comment lines directly above `line` (a group's heading comment goes
/// with its group), not reaching `floor` or the file's first line.
fn comments_above(source: &SourceFile, line: usize, floor: usize) -> usize {
    let mut at = line;
    while at > floor + 1
        && at > 2
        && source
            .line_text(at - 1)
            .is_some_and(|t| t.trim_start().starts_with('#'))
    {
        at -= 1;
    }
    at
}

/// Lines of the comment header at the top (shebang, coding cookie, licence), 0 when none.
fn leading_comment_lines(source: &SourceFile) -> usize {
    let mut n = 0;
    while source
        .line_text(n + 1)
        .is_some_and(|t| t.trim_start().starts_with('#'))
    {
        n += 1;
    }
    n
}

fn is_docstring(s: &Stmt) -> bool {
    matches!(s, Stmt::Expr(e) if matches!(e.value.as_ref(),
        Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_))))
}

/// The file's top-level imports before its first other compound statement (after the
/// docstring), classified into groups.
fn import_block<'a>(
    pm: &'a ParsedModule,
    root: Option<&Path>,
    stdlib: &Stdlib,
) -> Vec<Existing<'a>> {
    let mut out = Vec::new();
    for s in pm.body() {
        let (group, key, is_from) = match s {
            Stmt::Import(i) => {
                let m = i.names.first().map_or("", |a| a.name.as_str());
                (group_of_module(m, 0, root, stdlib), m.to_lowercase(), false)
            }
            Stmt::ImportFrom(i) => {
                let level = i.level.as_ref().map_or(0, |l| l.to_usize());
                let m = i.module.as_ref().map_or("", |m| m.as_str());
                let written = ".".repeat(level) + m;
                (
                    group_of_module(m, level, root, stdlib),
                    written.to_lowercase(),
                    true,
                )
            }
            Stmt::FunctionDef(_)
            | Stmt::AsyncFunctionDef(_)
            | Stmt::ClassDef(_)
            | Stmt::If(_)
            | Stmt::For(_)
            | Stmt::While(_)
            | Stmt::With(_)
            | Stmt::Try(_) => break,
            _ => continue,
        };
        let r = range_of(s);
        out.push(Existing {
            stmt: s,
            group,
            key,
            is_from,
            first_line: pm.line_of(r.start),
            last_line: pm.line_of(r.end.saturating_sub(1).max(r.start)),
        });
    }
    out
}

/// `from module import a` + `b` → `from module import a, b` when such a one-line statement
/// exists (sorted position when its names are sorted).
fn merge_into_from(
    source: &SourceFile,
    pm: &ParsedModule,
    block: &[Existing],
    module: &str,
    name: &str,
) -> Option<Edit> {
    let _ = pm;
    for e in block {
        let Stmt::ImportFrom(i) = e.stmt else {
            continue;
        };
        let level = i.level.as_ref().map_or(0, |l| l.to_usize());
        if level != 0 || i.module.as_ref().map(|m| m.as_str()) != Some(module) {
            continue;
        }
        if e.first_line != e.last_line || i.names.iter().any(|a| a.name.as_str() == "*") {
            continue;
        }
        let text = source.text().get(range_of(e.stmt))?;
        if text.contains('(') || text.contains('\\') {
            continue;
        }
        // Sorted as isort's default (`order_by_type`) leaves them: constants and classes before
        // functions, which plain ordinal order approximates. One name says nothing: append.
        let names: Vec<&str> = i.names.iter().map(|a| a.name.as_str()).collect();
        let sorted = names.len() > 1 && names.windows(2).all(|w| w[0] <= w[1]);
        let pos = if sorted {
            names.iter().position(|n| *n > name)
        } else {
            None
        };
        return Some(match pos {
            Some(p) => Edit::insertion(range_of(&i.names[p]).start, format!("{name}, ")),
            None => Edit::insertion(range_of(i.names.last()?).end, format!(", {name}")),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python 3.6's `cannot import name 'X'` names no module: it is read from the statement.
    #[test]
    fn the_module_of_a_from_import_resolved_as_python_does() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("crm");
        std::fs::create_dir_all(pkg.join("sub")).unwrap();
        for f in ["__init__.py", "sub/__init__.py"] {
            std::fs::write(pkg.join(f), "").unwrap();
        }
        let module_of = |file: &Path, src: &str| {
            let sf = SourceFile::from_bytes("m.py", src.as_bytes().to_vec()).unwrap();
            let pm = crate::syntax::parse(&sf).unwrap();
            match &pm.body()[0] {
                Stmt::ImportFrom(s) => absolute_module(file, s),
                _ => unreachable!(),
            }
        };
        let service = pkg.join("service.py");
        assert_eq!(
            module_of(&service, "from shop.models import X\n").as_deref(),
            Some("shop.models")
        );
        assert_eq!(
            module_of(&service, "from .models import X\n").as_deref(),
            Some("crm.models")
        );
        assert_eq!(
            module_of(&service, "from . import X\n").as_deref(),
            Some("crm")
        );
        let deep = pkg.join("sub/deep.py");
        assert_eq!(
            module_of(&deep, "from ..models import X\n").as_deref(),
            Some("crm.models")
        );
        let init = pkg.join("sub/__init__.py");
        assert_eq!(
            module_of(&init, "from .deep import X\n").as_deref(),
            Some("crm.sub.deep")
        );
        // Above the top package: Python refuses it too.
        assert_eq!(module_of(&service, "from ...x import X\n"), None);
    }

    fn add(src: &str, imp: NewImport) -> String {
        let sf = SourceFile::from_bytes("m.py", src.as_bytes().to_vec()).unwrap();
        let pm = crate::syntax::parse(&sf).unwrap();
        let edits = add_import(&sf, &pm, None, &Stdlib::unavailable(), &imp).unwrap();
        edit::apply(src, &edits).unwrap()
    }

    /// Python binds an imported name when the import runs: a module-level use above the
    /// block's sorted place gets the import above it (issue 26 item 4).
    #[test]
    fn placement_before_the_first_module_level_use() {
        let op = || NewImport {
            module: "operator",
            name: None,
            alias: None,
        };
        assert_eq!(
            add(
                "import abc\n\nKEY = operator.attrgetter('a')\n\nimport sys\n",
                op()
            ),
            "import abc\nimport operator\n\nKEY = operator.attrgetter('a')\n\nimport sys\n"
        );
        // No import above the use: right above it, with its comment.
        assert_eq!(
            add(
                "\"\"\"Doc.\"\"\"\n# key\nKEY = operator.itemgetter(0)\nimport sys\n",
                op()
            ),
            "\"\"\"Doc.\"\"\"\nimport operator\n# key\nKEY = operator.itemgetter(0)\nimport sys\n"
        );
        // A decorator runs at import time; the function's body does not.
        assert_eq!(
            add(
                "import sys\n\n\n@operator.call\ndef f():\n    pass\n\nimport zlib\n",
                op()
            ),
            "import operator\nimport sys\n\n\n@operator.call\ndef f():\n    pass\n\nimport zlib\n"
        );
        assert_eq!(
            add(
                "import sys\n\n\ndef f():\n    return operator.neg\n\nimport zlib\n",
                op()
            ),
            "import operator\nimport sys\n\n\ndef f():\n    return operator.neg\n\nimport zlib\n"
        );
        // A merge into `from m import ...` below the use is not made.
        assert_eq!(
            add(
                "import abc\nX = insort\nfrom bisect import bisect\n",
                NewImport {
                    module: "bisect",
                    name: Some("insort"),
                    alias: None,
                }
            ),
            "import abc\nfrom bisect import insort\nX = insort\nfrom bisect import bisect\n"
        );
    }

    #[test]
    fn placement() {
        let imp = || NewImport {
            module: "json",
            name: None,
            alias: None,
        };
        assert_eq!(
            add("import os\nimport sys\n\nX = 1\n", imp()),
            "import json\nimport os\nimport sys\n\nX = 1\n"
        );
        assert_eq!(
            add("import sys\nimport os\n\nX = 1\n", imp()),
            "import sys\nimport os\nimport json\n\nX = 1\n"
        );
        assert_eq!(
            add("\"\"\"Doc.\"\"\"\n\n\ndef f():\n    pass\n", imp()),
            "\"\"\"Doc.\"\"\"\n\nimport json\n\n\ndef f():\n    pass\n"
        );
        assert_eq!(
            add("def f():\n    pass\n", imp()),
            "import json\n\n\ndef f():\n    pass\n"
        );
        assert_eq!(
            add(
                "from __future__ import annotations\n\nimport requests\n\nX = 1\n",
                imp()
            ),
            "from __future__ import annotations\n\nimport json\n\nimport requests\n\nX = 1\n"
        );
        assert_eq!(
            add(
                "from collections import OrderedDict\n",
                NewImport {
                    module: "collections",
                    name: Some("defaultdict"),
                    alias: None,
                }
            ),
            "from collections import OrderedDict, defaultdict\n"
        );
        // Aliases kept, in a new line and in a merged one; `.units` joins the local group.
        assert_eq!(
            add(
                "import requests\n\nX = 1\n",
                NewImport {
                    module: "numpy",
                    name: None,
                    alias: Some("np"),
                }
            ),
            "import numpy as np\nimport requests\n\nX = 1\n"
        );
        assert_eq!(
            add(
                "from decimal import Context\n",
                NewImport {
                    module: "decimal",
                    name: Some("Decimal"),
                    alias: Some("D"),
                }
            ),
            "from decimal import Context, Decimal as D\n"
        );
        assert_eq!(
            add(
                "import os\n\nfrom .parse import parse\n\nX = 1\n",
                NewImport {
                    module: ".units",
                    name: Some("Quantity"),
                    alias: Some("Q"),
                }
            ),
            "import os\n\nfrom .parse import parse\nfrom .units import Quantity as Q\n\nX = 1\n"
        );
        assert_eq!(add("", imp()), "import json\n");
        assert_eq!(add("x = 1", imp()), "import json\n\nx = 1");
    }

    #[test]
    fn relative() {
        assert_eq!(relative_spelling("pkg.b", 1, Some("pkg.a")), ".b");
        assert_eq!(relative_spelling("other.b", 1, Some("pkg.a")), "other.b");
        assert_eq!(relative_spelling("pkg.b", 0, Some("pkg.a")), "pkg.b");
    }
}
