//! A package that does not export a name one of its submodules defines: a test's `from pkg
//! import X` fails with `ImportError: cannot import name 'X' from 'pkg' (.../pkg/__init__.py)`
//! while `pkg/core.py` defines `X`. The failure is located in the test, which is not edited;
//! the repair is in the package's `__init__.py`: `X` joins the statement that already imports
//! from that submodule (a new `from .core import X` when there is none), and `__all__` when the
//! package keeps one. The usual cause: a class or function added to a submodule and never
//! exported, which the tests written against the package's public names find.

use std::ops::Range;
use std::path::Path;

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt};

use super::candidate::{confined_path, push_candidate, Candidate, PlanInput};
use crate::edit::{self, Edit, Fix};
use crate::source::SourceFile;
use crate::syntax::{self, ParsedModule};
use crate::traceback::locate::is_test_file;
use crate::transform::common::rng;
use crate::transform::names::project;
use crate::transform::Transform;

/// Submodules proposed at most (a name defined in several is ambiguous: the nearest first).
const MAX_SOURCES: usize = 2;

/// Candidates for a test whose import of a package's name fails, or `None` when no rule with
/// this transform matches, the failing import is not in a test file (a project module's
/// import is the other import rules' case: it can import from the submodule itself) or no
/// submodule defines the name (planning then goes on as usual).
pub fn plan(input: &PlanInput) -> Option<Vec<Candidate>> {
    let failure = input.failure;
    let matched = input
        .rules
        .matching(&failure.exc_type, &failure.msg)
        .into_iter()
        .find(|m| matches!(m.rule.transform, Transform::ReExport(_)))?;
    let loc = failure.location.as_ref()?;
    if !is_test_file(&loc.file.split('/').collect::<Vec<_>>()) {
        return None;
    }
    let name = matched.captures.get("name")?;
    let package = matched.captures.get("module")?;
    // A private name is not part of the package's interface: nothing to export.
    if name.starts_with('_') {
        return None;
    }
    let test_path = confined_path(input.root, &loc.file).ok()?;
    let (import_root, init) = project::resolve_module(&test_path, package)?;
    if init.file_name().and_then(|n| n.to_str()) != Some("__init__.py") {
        return None;
    }
    // Only a package inside the root is edited (a symlink never leads the edit out of it).
    let rel = relative_to(input.root, &init)?;
    let init_path = confined_path(input.root, &rel).ok()?;
    let source = SourceFile::read(&init_path).ok()?;
    let module = syntax::parse(&source).ok()?;
    let prefix = format!("{package}.");
    let submodules: Vec<String> = project::modules_defining(
        &import_root,
        name,
        std::slice::from_ref(&init),
        Some(package),
    )
    .into_iter()
    .filter(|m| m.starts_with(&prefix))
    .take(MAX_SOURCES)
    .collect();
    let mut out = Vec::new();
    for sub in submodules {
        if let Some(fix) = export_fix(&source, &module, package, &sub, name, matched.rule) {
            push_candidate(&mut out, &rel, &init_path, &source, fix, matched.rule);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `path` relative to `root` with forward slashes (both canonicalized: the resolved module may
/// be spelled through a different prefix than the root).
fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let path = path.canonicalize().ok()?;
    let rel = path.strip_prefix(&root).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// The edits exporting `name` from `package`'s `__init__.py` (`source`), where submodule `sub`
/// defines it.
fn export_fix(
    source: &SourceFile,
    module: &ParsedModule,
    package: &str,
    sub: &str,
    name: &str,
    rule: &crate::rules::Rule,
) -> Option<Fix> {
    let body = module.body();
    let tail = sub.strip_prefix(package)?; // `.core`
    let imports: Vec<&ast::StmtImportFrom> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::ImportFrom(i) => Some(i),
            _ => None,
        })
        .collect();
    let spelled = |i: &ast::StmtImportFrom| -> Option<String> {
        let level = i.level.as_ref().map_or(0, |l| l.to_usize());
        let m = i.module.as_ref().map_or("", |m| m.as_str());
        match level {
            0 => Some(m.to_string()),
            // Relative to the package itself (`from .core import ...` in `pkg/__init__.py`).
            1 if !m.is_empty() => Some(format!("{package}.{m}")),
            _ => None,
        }
    };
    let existing = imports
        .iter()
        .find(|i| spelled(i).as_deref() == Some(sub))
        .copied();
    if let Some(i) = existing {
        // `from .core import *` already exports every public name the submodule has (or its
        // `__all__` leaves this one out on purpose): nothing for us to add.
        if i.names
            .iter()
            .any(|a| a.name.as_str() == "*" || a.name.as_str() == name)
        {
            return None;
        }
    }
    let mut edits = vec![match existing {
        Some(i) => join_import(source, i, name)?,
        None => {
            // The package's own style: relative when its imports are.
            let relative = imports
                .iter()
                .any(|i| i.level.as_ref().is_some_and(|l| l.to_usize() > 0));
            let from = if relative {
                tail.to_string()
            } else {
                sub.to_string()
            };
            let line = format!("from {from} import {name}");
            // Among the package's imports, sorted by module when they are, else after them.
            let modules: Vec<Option<String>> = imports.iter().map(|i| spelled(i)).collect();
            let sorted = modules.windows(2).all(|w| w[0] <= w[1]);
            let next = modules
                .iter()
                .position(|m| sorted && m.as_deref().is_some_and(|m| m > sub));
            match (next, imports.last()) {
                (Some(n), _) => {
                    let at = module.line_of(rng(imports[n].range()).start);
                    edit::insert_line_before(source, at, "", &line)?
                }
                (None, Some(last)) => {
                    let end_line = module.line_of(rng(last.range()).end.saturating_sub(1));
                    edit::insert_line_after(source, end_line, "", &line)?
                }
                (None, None) => {
                    edit::insert_line_before(source, first_code_line(module), "", &line)?
                }
            }
        }
    }];
    edits.extend(join_all(source, body, name));
    let title = format!("export `{name}` from `{package}`, where `{sub}` defines it");
    Some(Fix::new(title, &rule.id, rule.confidence, edits))
}

/// The first line after the module docstring (where a new import goes when there is none).
fn first_code_line(module: &ParsedModule) -> usize {
    let body = module.body();
    let docstring = matches!(body.first(), Some(Stmt::Expr(e))
        if matches!(&*e.value, Expr::Constant(c) if matches!(c.value, Constant::Str(_))));
    match (docstring, body.get(1)) {
        (true, Some(next)) => module.line_of(rng(next.range()).start),
        (true, None) => module.line_of(rng(body[0].range()).end.saturating_sub(1)) + 1,
        (false, _) => body
            .first()
            .map_or(1, |s| module.line_of(rng(s.range()).start)),
    }
}

/// `name` added to `from m import a, b` / a parenthesized list (see [`join_list`]).
fn join_import(source: &SourceFile, i: &ast::StmtImportFrom, name: &str) -> Option<Edit> {
    let elements: Vec<(Range<usize>, &str)> = i
        .names
        .iter()
        .map(|a| (rng(a.range()), a.name.as_str()))
        .collect();
    join_list(source, rng(i.range()), &elements, name, name)
}

/// Inserts `item` (sorting as `key`) into the list `elements` (each element's range and sort
/// key) of a statement or literal spanning `span`, in its layout: one element per line stays
/// one per line (with the trailing comma when the list has one); a sorted list stays sorted
/// (ordinal order, which isort's and Ruff's defaults approximate), any other gets it last.
fn join_list(
    source: &SourceFile,
    span: Range<usize>,
    elements: &[(Range<usize>, &str)],
    item: &str,
    key: &str,
) -> Option<Edit> {
    let (text, nl) = (source.text(), source.newline());
    let (last, _) = elements.last()?;
    let multiline = text.get(span.start..last.end)?.contains('\n');
    let line_start = |at: usize| {
        text.get(..at)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |p| p + 1)
    };
    let own_line = |r: &Range<usize>| {
        text.get(line_start(r.start)..r.start)
            .is_some_and(|t| t.trim().is_empty())
    };
    let sorted = elements.len() > 1 && elements.windows(2).all(|w| w[0].1 <= w[1].1);
    let before = if sorted {
        elements.iter().find(|(_, k)| *k > key)
    } else {
        None
    };
    match before {
        Some((r, _)) if !multiline => return Some(Edit::insertion(r.start, format!("{item}, "))),
        Some((r, _)) if elements.iter().all(|(r, _)| own_line(r)) => {
            let indent = &text[line_start(r.start)..r.start];
            let at = line_start(r.start);
            return Some(Edit::insertion(at, format!("{indent}{item},{nl}")));
        }
        _ => {}
    }
    let after = text.get(last.end..span.end)?;
    if !multiline {
        return Some(Edit::insertion(last.end, format!(", {item}")));
    }
    let indent: String = text
        .get(line_start(last.end)..last.end)?
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    if after.trim_start().starts_with(',') {
        let comma = last.end + after.find(',')? + 1;
        Some(Edit::insertion(comma, format!("{nl}{indent}{item},")))
    } else {
        Some(Edit::insertion(last.end, format!(",{nl}{indent}{item}")))
    }
}

/// `"name"` added to a module-level `__all__ = [...]` / `(...)` of strings, quoted as its
/// entries are; nothing when there is no such list or it names `name` already.
fn join_all(source: &SourceFile, body: &[Stmt], name: &str) -> Option<Edit> {
    let value = body.iter().rev().find_map(|s| match s {
        Stmt::Assign(a)
            if a.targets.len() == 1
                && matches!(&a.targets[0], Expr::Name(n) if n.id.as_str() == "__all__") =>
        {
            Some(&*a.value)
        }
        Stmt::AnnAssign(a) if matches!(&*a.target, Expr::Name(n) if n.id.as_str() == "__all__") => {
            a.value.as_deref()
        }
        _ => None,
    })?;
    let elts = match value {
        Expr::List(l) => &l.elts,
        Expr::Tuple(t) => &t.elts,
        _ => return None,
    };
    let mut quote = '"';
    let mut elements = Vec::new();
    for e in elts {
        let Expr::Constant(c) = e else { return None };
        let Constant::Str(s) = &c.value else {
            return None;
        };
        if s == name {
            return None;
        }
        quote = source.text()[rng(e.range())].chars().next().unwrap_or('"');
        elements.push((rng(e.range()), s.as_str()));
    }
    let item = format!("{quote}{name}{quote}");
    join_list(source, rng(value.range()), &elements, &item, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(src: &str, item: &str) -> String {
        let pm = syntax::parse_text(Path::new("m.py"), src).unwrap();
        let Stmt::ImportFrom(i) = &pm.body()[0] else {
            panic!()
        };
        let source = SourceFile::from_bytes(Path::new("m.py"), src.as_bytes().to_vec()).unwrap();
        let e = join_import(&source, i, item).unwrap();
        edit::apply(src, &[e]).unwrap()
    }

    #[test]
    fn a_name_joins_the_import_in_its_layout() {
        assert_eq!(
            joined("from .core import a, b\n", "c"),
            "from .core import a, b, c\n"
        );
        assert_eq!(
            joined("from .core import (\n    a,\n    b,\n)\n", "c"),
            "from .core import (\n    a,\n    b,\n    c,\n)\n"
        );
        assert_eq!(
            joined("from .core import (a,\n                   b)\n", "c"),
            "from .core import (a,\n                   b,\n                   c)\n"
        );
    }

    #[test]
    fn a_sorted_list_stays_sorted() {
        assert_eq!(
            joined("from .core import a, c\n", "b"),
            "from .core import a, b, c\n"
        );
        assert_eq!(
            joined("from .core import (\n    a,\n    c,\n)\n", "b"),
            "from .core import (\n    a,\n    b,\n    c,\n)\n"
        );
        // Not sorted: last, whatever the name.
        assert_eq!(
            joined("from .core import c, a\n", "b"),
            "from .core import c, a, b\n"
        );
    }

    #[test]
    fn all_gets_the_name_quoted_as_its_entries() {
        let src = "from .core import a\n\n__all__ = [\n    'a',\n    'b',\n]\n";
        let pm = syntax::parse_text(Path::new("m.py"), src).unwrap();
        let source = SourceFile::from_bytes(Path::new("m.py"), src.as_bytes().to_vec()).unwrap();
        let e = join_all(&source, pm.body(), "c").unwrap();
        assert_eq!(
            edit::apply(src, &[e]).unwrap(),
            "from .core import a\n\n__all__ = [\n    'a',\n    'b',\n    'c',\n]\n"
        );
        let one_line = "__all__ = (\"a\", \"b\")\n";
        let pm = syntax::parse_text(Path::new("m.py"), one_line).unwrap();
        let source =
            SourceFile::from_bytes(Path::new("m.py"), one_line.as_bytes().to_vec()).unwrap();
        let e = join_all(&source, pm.body(), "c").unwrap();
        assert_eq!(
            edit::apply(one_line, &[e]).unwrap(),
            "__all__ = (\"a\", \"b\", \"c\")\n"
        );
        assert!(join_all(&source, pm.body(), "a").is_none());
    }
}
