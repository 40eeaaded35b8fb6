//! Which test files import a module, read statically (no code of the project runs): what a
//! narrow selection's proof runs when an edit's coverage says nothing, because the edited code
//! runs at import (a module constant, a class body, a default argument) or because no coverage
//! was measured for those tests (see `session::outside`).
//!
//! Every `.py` file under the root (not in hidden directories, `__pycache__`, `node_modules`,
//! `site-packages` or a virtualenv) is parsed once; each `import`, `from ... import` (relative
//! ones resolved against the file's package) and literal `importlib.import_module("...")` or
//! `__import__("...")`, at any depth, names a dotted module. A dotted name may refer to a file
//! when it and one of the file's dotted tails (`pkg.mod`, `mod` for `src/pkg/mod.py`) are
//! equal or one is a prefix of the other: `import pkg` may run `pkg/__init__.py` which imports
//! `pkg.mod`, `from pkg.mod import f` imports `pkg.mod`. Conservative on purpose: a false
//! importer costs one more test file run, a missed one a broken test nobody ran. Importers are
//! followed transitively (a test imports `app.views`, which imports `app.models`), a
//! `conftest.py` that imports the module counts for every test file below its directory, and a
//! file that cannot be parsed counts as importing everything.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use rustpython_parser::ast::{Constant, Expr, Stmt};

use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

/// Beyond this many Python files the scan gives up (every test file is then an importer).
const MAX_FILES: usize = 20_000;

/// The project's files and what each imports.
#[derive(Debug, Default)]
pub struct ImportIndex {
    /// Relative path (forward slashes) → the dotted names it imports, each with whether it is
    /// a bare `import` (see [`refers`]); `None`: it did not parse.
    files: BTreeMap<String, Option<Vec<(String, bool)>>>,
}

impl ImportIndex {
    /// Scans every Python file under `root`; `None` when there are too many to scan.
    pub fn scan(root: &Path) -> Option<ImportIndex> {
        let mut files = BTreeMap::new();
        let walker = walkdir::WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !skipped_dir(e));
        for entry in walker.flatten() {
            if !entry.file_type().is_file() || entry.path().extension().is_none_or(|x| x != "py") {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let rel = rel.join("/");
            let names = std::fs::read(entry.path())
                .ok()
                .and_then(|b| imported_names(entry.path(), &b, &dotted(&rel)));
            files.insert(rel, names);
            if files.len() > MAX_FILES {
                return None;
            }
        }
        Some(ImportIndex { files })
    }

    /// The files that import `file` (relative), directly or through other project files,
    /// `file` itself included.
    pub fn importers(&self, file: &str) -> BTreeSet<String> {
        // Dotted tail → the files it may name.
        let mut tails: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for f in self.files.keys() {
            let d = dotted(f);
            for k in 0..d.len() {
                tails.entry(d[k..].join(".")).or_default().push(f);
            }
        }
        // File → the files whose names it imports (reversed below).
        let mut imported_by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut everything: Vec<&str> = Vec::new();
        for (f, names) in &self.files {
            let Some(names) = names else {
                everything.push(f);
                continue;
            };
            let mut targets: BTreeSet<&str> = BTreeSet::new();
            for n in names {
                refers(&tails, n, &mut targets);
            }
            for t in targets {
                imported_by.entry(t).or_default().push(f);
            }
        }
        let mut out: BTreeSet<String> = BTreeSet::from([file.to_string()]);
        out.extend(everything.iter().map(|f| f.to_string()));
        let mut queue: VecDeque<String> = out.iter().cloned().collect();
        while let Some(f) = queue.pop_front() {
            for g in imported_by.get(f.as_str()).into_iter().flatten() {
                if out.insert(g.to_string()) {
                    queue.push_back(g.to_string());
                }
            }
        }
        out
    }

    /// Of `test_files`, those that import `file` (see [`ImportIndex::importers`]), or sit
    /// below a `conftest.py` that does, or were not scanned (when unsure, a file is in).
    pub fn test_files_importing(&self, file: &str, test_files: &BTreeSet<String>) -> Vec<String> {
        let importers = self.importers(file);
        let conftest_dirs: Vec<&str> = importers
            .iter()
            .filter_map(|f| match f.rsplit_once('/') {
                Some((dir, "conftest.py")) => Some(dir),
                None if f == "conftest.py" => Some(""),
                _ => None,
            })
            .collect();
        test_files
            .iter()
            .filter(|t| {
                importers.contains(*t)
                    || !self.files.contains_key(*t)
                    || conftest_dirs
                        .iter()
                        .any(|d| d.is_empty() || t.starts_with(&format!("{d}/")))
            })
            .cloned()
            .collect()
    }
}

/// Directories no project module lives in.
fn skipped_dir(e: &walkdir::DirEntry) -> bool {
    if !e.file_type().is_dir() {
        return false;
    }
    let name = e.file_name().to_string_lossy();
    name.starts_with('.')
        || matches!(
            name.as_ref(),
            "__pycache__" | "node_modules" | "site-packages"
        )
        || e.path().join("pyvenv.cfg").is_file()
}

/// `src/pkg/mod.py` → `[src, pkg, mod]`; a package's `__init__.py` is the package.
fn dotted(rel: &str) -> Vec<String> {
    let rel = rel.strip_suffix(".py").unwrap_or(rel);
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "__init__") {
        parts.pop();
    }
    parts
}

/// The files `name` may refer to: a dotted tail equal to it or to one of its prefixes (`a.b.f`
/// names `a.b`, and `a`, whose `__init__.py` runs first); for a bare `import a` (`wide`), every
/// tail starting with it too (`a.b.f()` works once anything has imported `a.b`).
fn refers<'a>(
    tails: &BTreeMap<String, Vec<&'a str>>,
    (name, wide): &(String, bool),
    out: &mut BTreeSet<&'a str>,
) {
    let parts: Vec<&str> = name.split('.').collect();
    for k in 1..=parts.len() {
        if let Some(fs) = tails.get(&parts[..k].join(".")) {
            out.extend(fs.iter().copied());
        }
    }
    if !wide {
        return;
    }
    let prefix = format!("{name}.");
    for (_, fs) in tails
        .range(prefix.clone()..)
        .take_while(|(t, _)| t.starts_with(&prefix))
    {
        out.extend(fs.iter().copied());
    }
}

/// Every dotted name the file imports, anywhere in it, and whether by a bare `import` (or a
/// dynamic one); `None` when it does not parse.
fn imported_names(path: &Path, bytes: &[u8], module: &[String]) -> Option<Vec<(String, bool)>> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parsed = crate::syntax::parse_text(path, text).ok()?;
    // The package relative imports start from: a module's parent, a package itself.
    let is_package = path.file_name().is_some_and(|n| n == "__init__.py");
    let package: &[String] = if is_package || module.is_empty() {
        module
    } else {
        &module[..module.len() - 1]
    };
    let mut out = Vec::new();
    let roots: Vec<Node> = parsed.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::Import(i)) => {
                out.extend(i.names.iter().map(|a| (a.name.to_string(), true)));
            }
            Node::Stmt(Stmt::ImportFrom(i)) => {
                let level = i.level.map_or(0, |l| l.to_u32() as usize);
                let mut base: Vec<String> = if level == 0 {
                    Vec::new()
                } else {
                    package[..package.len().saturating_sub(level - 1)].to_vec()
                };
                if let Some(m) = &i.module {
                    base.extend(m.split('.').map(str::to_string));
                }
                if !base.is_empty() {
                    out.push((base.join("."), false));
                }
                for a in &i.names {
                    if a.name.as_str() != "*" {
                        let mut n = base.clone();
                        n.push(a.name.to_string());
                        out.push((n.join("."), false));
                    }
                }
            }
            Node::Expr(Expr::Call(c)) if dynamic_import(&c.func) => {
                if let Some(Expr::Constant(k)) = c.args.first() {
                    if let Constant::Str(s) = &k.value {
                        out.push((s.trim_start_matches('.').to_string(), true));
                    }
                }
            }
            _ => {}
        }
        true
    });
    out.retain(|(n, _)| !n.is_empty());
    Some(out)
}

/// `importlib.import_module(...)`, `import_module(...)`, `__import__(...)`.
fn dynamic_import(func: &Expr) -> bool {
    match func {
        Expr::Name(n) => matches!(n.id.as_str(), "import_module" | "__import__"),
        Expr::Attribute(a) => a.attr.as_str() == "import_module",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn importers_directly_through_packages_and_transitively() {
        let dir = tree(&[
            ("src/app/__init__.py", "from .models import Model\n"),
            ("src/app/models.py", "LIMIT = 3\n"),
            ("src/app/views.py", "from . import models\n"),
            ("src/app/other.py", "import json\n"),
            (
                "tests/test_views.py",
                "def test_x():\n    from app.views import v\n",
            ),
            ("tests/test_pkg.py", "import app\n"),
            ("tests/test_other.py", "from app.other import f\n"),
            ("tests/test_plain.py", "import json\n"),
            (
                "tests/test_dyn.py",
                "import importlib\nm = importlib.import_module('app.models')\n",
            ),
            ("tests/test_broken.py", "def (:\n"),
            ("tests/sub/conftest.py", "import app.models\n"),
            ("tests/sub/test_below.py", "def test_y():\n    pass\n"),
            (".venv/lib/app/models.py", "import app.models\n"),
        ]);
        let index = ImportIndex::scan(dir.path()).unwrap();
        assert!(!index.files.keys().any(|f| f.starts_with(".venv")));
        let tests = set(&[
            "tests/test_views.py",
            "tests/test_pkg.py",
            "tests/test_other.py",
            "tests/test_plain.py",
            "tests/test_dyn.py",
            "tests/test_broken.py",
            "tests/sub/test_below.py",
            "tests/test_unscanned.py",
        ]);
        // `test_other` imports `app.other`, which runs `app/__init__.py`, which imports
        // `app.models`.
        assert_eq!(
            index.test_files_importing("src/app/models.py", &tests),
            vec![
                "tests/sub/test_below.py",
                "tests/test_broken.py",
                "tests/test_dyn.py",
                "tests/test_other.py",
                "tests/test_pkg.py",
                "tests/test_unscanned.py",
                "tests/test_views.py",
            ]
        );
        // `app.other`: named by `test_other`; a bare `import app` may reach it; `from . import
        // models` in `views` does not.
        let other = index.importers("src/app/other.py");
        assert_eq!(
            other,
            set(&[
                "src/app/other.py",
                "tests/test_broken.py",
                "tests/test_other.py",
                "tests/test_pkg.py"
            ])
        );
    }
}
