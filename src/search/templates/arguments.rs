//! Template: an argument the caller has and never passes on.
//!
//! `forward-arg`: `format_price(item.price, item.currency)` inside `def line(item, locale)`,
//! where `format_price(amount, currency="EUR", locale=None)` takes a `locale`: the call falls
//! back to the default although the caller holds the value (a parameter added to the callee
//! and threaded through some callers, not all). The candidate passes it on: positionally when
//! it is the very next parameter and the call has no keywords (`..., locale)`), else by name
//! (`strict=strict`). Only optional parameters (those with a default) the call leaves out are
//! proposed, and only under a name the enclosing function binds before the statement. The
//! callee is found by name: a function or method of this module, else of a project module
//! this one imports; a name defined twice with different parameters is left alone.

use std::path::{Path, PathBuf};

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::search::mutate::names_of;
use crate::syntax::rng;
use crate::transform::names::project;

use super::operators::{mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::ForwardArg];

/// Imported project modules read at most per site (a module importing half the project is
/// searched partly, never slowly).
const MAX_MODULES: usize = 12;

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let start = rng(site.stmt.range()).start;
    let names = names_of(func);
    let bound = |n: &str| names.iter().any(|(m, at)| m == n && *at < start);
    let mut out = Vec::new();
    let mut imported: Option<Vec<PathBuf>> = None;
    for e in own_exprs(site.stmt) {
        let Expr::Call(call) = e else { continue };
        let (callee, method) = match call.func.as_ref() {
            Expr::Name(n) => (n.id.as_str(), false),
            Expr::Attribute(a) => (a.attr.as_str(), true),
            _ => continue,
        };
        let starred = call.args.iter().any(|a| matches!(a, Expr::Starred(_)))
            || call.keywords.iter().any(|k| k.arg.is_none());
        if starred {
            continue;
        }
        let mut params = params_in(site.module.body(), callee, method);
        if params.is_none() {
            let files = imported.get_or_insert_with(|| imported_modules(site.module.path(), site.module.body()));
            params = params_in_files(files, callee, method);
        }
        let Some(params) = params else { continue };
        out.extend(forwards(site, call, callee, &params, &bound));
    }
    out
}

/// A callee's parameters as the call sees them (without a method's `self`).
#[derive(Debug, Clone, PartialEq)]
struct Params {
    /// Positional-or-keyword parameters in order, with whether each has a default.
    positional: Vec<(String, bool)>,
    /// Keyword-only parameters with a default.
    keyword_only: Vec<String>,
}

fn forwards(
    site: &Site,
    call: &ast::ExprCall,
    callee: &str,
    params: &Params,
    bound: &dyn Fn(&str) -> bool,
) -> Vec<Mutant> {
    let text = site.module.text();
    let passed_by_name = |n: &str| {
        call.keywords
            .iter()
            .any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == n))
    };
    let n_pos = call.args.len();
    let last_end = call
        .args
        .iter()
        .map(|a| rng(a.range()).end)
        .chain(call.keywords.iter().map(|k| rng(k.range()).end))
        .max();
    // Where a new argument goes: after the last one, else inside the empty parentheses.
    let (at, sep) = match last_end {
        Some(end) => (end, ", "),
        None => {
            let span = rng(call.range());
            let Some(open) = text
                .get(rng(call.func.range()).end..span.end)
                .and_then(|t| t.find('('))
            else {
                return Vec::new();
            };
            (rng(call.func.range()).end + open + 1, "")
        }
    };
    let wanted = params
        .positional
        .iter()
        .enumerate()
        .skip(n_pos)
        .filter(|(_, (_, default))| *default)
        .map(|(i, (n, _))| (n.as_str(), i == n_pos))
        .chain(params.keyword_only.iter().map(|n| (n.as_str(), false)));
    let mut out = Vec::new();
    for (name, next) in wanted {
        if passed_by_name(name) || !bound(name) {
            continue;
        }
        let arg = if next && call.keywords.is_empty() {
            name.to_string()
        } else {
            format!("{name}={name}")
        };
        out.push(mutant(
            site,
            Family::ForwardArg,
            format!("pass `{arg}` on to `{callee}`"),
            vec![Edit::insertion(at, format!("{sep}{arg}"))],
            1.0,
            Vec::new(),
        ));
    }
    out
}

/// The parameters of `name` defined in `body` (a module-level function, or a method of a
/// module-level class when the call is `obj.name(...)`); `None` when it is not defined there
/// or defined twice with different parameters.
fn params_in(body: &[Stmt], name: &str, method: bool) -> Option<Params> {
    let mut found: Option<Params> = None;
    let mut consider = |args: &ast::Arguments, in_class: bool| -> bool {
        let p = params_of(args, in_class);
        match &found {
            Some(f) if *f != p => false,
            _ => {
                found = Some(p);
                true
            }
        }
    };
    for s in body {
        let top = match s {
            Stmt::FunctionDef(f) if !method && f.name.as_str() == name => Some(&f.args),
            Stmt::AsyncFunctionDef(f) if !method && f.name.as_str() == name => Some(&f.args),
            _ => None,
        };
        if let Some(args) = top {
            if !consider(args, false) {
                return None;
            }
            continue;
        }
        match s {
            Stmt::ClassDef(c) if method => {
                for m in &c.body {
                    let args = match m {
                        Stmt::FunctionDef(f) if f.name.as_str() == name => &f.args,
                        Stmt::AsyncFunctionDef(f) if f.name.as_str() == name => &f.args,
                        _ => continue,
                    };
                    if !consider(args, true) {
                        return None;
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn params_of(args: &ast::Arguments, method: bool) -> Params {
    let positional = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .skip(usize::from(method))
        .map(|a| (a.def.arg.to_string(), a.default.is_some()))
        .collect();
    let keyword_only = args
        .kwonlyargs
        .iter()
        .filter(|a| a.default.is_some())
        .map(|a| a.def.arg.to_string())
        .collect();
    Params {
        positional,
        keyword_only,
    }
}

/// `name`'s parameters in the first of `files` that defines it (see [`params_in`]).
fn params_in_files(files: &[PathBuf], name: &str, method: bool) -> Option<Params> {
    files.iter().find_map(|f| {
        PARSED.with(|cache| {
            let mut cache = cache.borrow_mut();
            // Each imported module is parsed once per process, not once per call site: the
            // search asks at every call of every suspicious line. Keyed by the file's stamp
            // too, so a module patched since (a kept patch, another run) is read again.
            let stamp = std::fs::metadata(f)
                .ok()
                .map(|m| (m.modified().ok(), m.len()));
            let pm = cache
                .entry((f.clone(), stamp))
                .or_insert_with(|| {
                    let source = crate::source::SourceFile::read(f).ok()?;
                    crate::syntax::parse(&source).ok().map(std::rc::Rc::new)
                })
                .clone()?;
            params_in(pm.body(), name, method)
        })
    })
}

thread_local! {
    /// Imported modules parsed so far, by path and stamp (`None`: unreadable or not Python).
    static PARSED: std::cell::RefCell<std::collections::HashMap<(PathBuf, Option<Stamp>), Parsed>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// A file's modification time and length.
type Stamp = (Option<std::time::SystemTime>, u64);
type Parsed = Option<std::rc::Rc<crate::syntax::ParsedModule>>;

/// The project modules `body` (the module at `path`) imports from, at top level or under a
/// top-level `if` (`if TYPE_CHECKING:`), nearest first as written.
fn imported_modules(path: &Path, body: &[Stmt]) -> Vec<PathBuf> {
    let Some(root) = project::import_root(path) else {
        return Vec::new();
    };
    let here = project::module_name(&root, path);
    let mut out: Vec<PathBuf> = Vec::new();
    let mut stmts: Vec<&Stmt> = body.iter().collect();
    for s in body {
        if let Stmt::If(i) = s {
            stmts.extend(i.body.iter());
        }
    }
    for s in stmts {
        let dotted = match s {
            Stmt::ImportFrom(i) => {
                let level = i.level.as_ref().map_or(0, |l| l.to_usize());
                let m = i.module.as_ref().map_or("", |m| m.as_str());
                if level == 0 {
                    m.to_string()
                } else {
                    // `from .x import` in `pkg/mod.py` is `pkg.x` (in `pkg/__init__.py`, too).
                    let Some(here) = here.as_deref() else { continue };
                    let is_package = path.file_name().is_some_and(|n| n == "__init__.py");
                    let mut parts: Vec<&str> = here.split('.').collect();
                    let up = if is_package { level - 1 } else { level };
                    if up > parts.len() {
                        continue;
                    }
                    parts.truncate(parts.len() - up);
                    if !m.is_empty() {
                        parts.push(m);
                    }
                    parts.join(".")
                }
            }
            _ => continue,
        };
        if let Some(file) = project::module_file(&root, &dotted) {
            if file != path && !out.contains(&file) {
                out.push(file);
            }
        }
        if out.len() >= MAX_MODULES {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::mutants_at;
    use super::*;

    fn titles(src: &str, line: u32) -> Vec<String> {
        mutants_at(src, line, mutants)
            .into_iter()
            .map(|m| m.title)
            .collect()
    }

    #[test]
    fn the_next_optional_parameter_is_passed_positionally() {
        let src = "def fmt(amount, currency='EUR', locale=None):\n    return amount\n\n\
                   def line(item, locale):\n    return fmt(item.price, item.currency)\n";
        assert_eq!(titles(src, 5), ["pass `locale` on to `fmt`"]);
        let m = &mutants_at(src, 5, mutants)[0];
        assert_eq!(
            crate::edit::apply(src, &m.edits).unwrap(),
            src.replace("item.currency)", "item.currency, locale)")
        );
    }

    #[test]
    fn a_later_or_keyword_only_parameter_is_passed_by_name() {
        let src = "class P:\n    def parse(self, line, *, strict=False):\n        return line\n\n\
                   def parse_all(p, lines, strict=False):\n    return [p.parse(x) for x in lines]\n";
        assert_eq!(titles(src, 6), ["pass `strict=strict` on to `parse`"]);
        // Not bound in the caller: nothing.
        let unbound = src.replace("lines, strict=False", "lines");
        assert!(titles(&unbound, 6).is_empty());
        // Passed already: nothing.
        let passed = src.replace("p.parse(x)", "p.parse(x, strict=True)");
        assert!(titles(&passed, 6).is_empty());
    }

    #[test]
    fn a_name_defined_twice_differently_is_left_alone() {
        let src = "def f(a, b=1):\n    return a\n\ndef f(a, c=1):\n    return a\n\n\
                   def g(a, b, c):\n    return f(a)\n";
        assert!(titles(src, 8).is_empty());
    }
}
