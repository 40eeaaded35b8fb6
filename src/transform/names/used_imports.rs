//! Imports the project already uses: for `NameError: name 'X' is not defined`, the import
//! statements elsewhere in the project that bind `X` (`import gettext as gettext_module`,
//! `from .models import Order`, an import inside a function), same spelling and alias, ranked
//! by how many modules use them. A deleted import line leaves exactly this error, and the
//! project's other modules say how it was written.

use std::collections::BTreeMap;
use std::path::Path;

use rustpython_parser::ast::Stmt;

use super::project;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

/// An import statement that binds the missing name, with absolute module names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Used {
    /// `import module` (`name` is `None`) or `from module import name`.
    pub module: String,
    pub name: Option<String>,
    pub alias: Option<String>,
    /// `from . import name` and `from .pkg import name` resolved against the importing file.
    pub relative: bool,
}

/// The imports of the project's modules (not `exclude`, not tests) that bind `name`, most
/// used first (then in module order), with the number of modules using each.
pub(crate) fn imports_binding(root: &Path, name: &str, exclude: &Path) -> Vec<(Used, usize)> {
    // Import statement → the modules using it (a module counts once).
    let mut seen: BTreeMap<Used, (usize, usize)> = BTreeMap::new();
    for (order, file) in project::project_files(root).into_iter().enumerate() {
        if project::same_file(&file, exclude) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if !project::contains_word(&bytes, name.as_bytes()) {
            continue;
        }
        let Some(pm) = crate::source::SourceFile::from_bytes(&file, bytes)
            .ok()
            .and_then(|s| crate::syntax::parse(&s).ok())
        else {
            continue;
        };
        let package = package_of(root, &file);
        let mut here: Vec<Used> = Vec::new();
        let roots: Vec<Node> = pm.body().iter().map(Node::Stmt).collect();
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            match node {
                Node::Stmt(Stmt::Import(i)) => {
                    for a in &i.names {
                        let full = a.name.as_str();
                        let bound = a
                            .asname
                            .as_ref()
                            .map_or_else(|| full.split('.').next().unwrap_or(full), |s| s.as_str());
                        if bound == name {
                            here.push(Used {
                                module: full.to_string(),
                                name: None,
                                alias: a.asname.as_ref().map(|s| s.to_string()),
                                relative: false,
                            });
                        }
                    }
                }
                Node::Stmt(Stmt::ImportFrom(i)) => {
                    let level = i.level.as_ref().map_or(0, |l| l.to_usize());
                    let written = i.module.as_ref().map(|m| m.to_string());
                    let Some(module) = absolute(package.as_deref(), level, written.as_deref())
                    else {
                        return false;
                    };
                    for a in &i.names {
                        let bound = a.asname.as_ref().unwrap_or(&a.name).as_str();
                        if bound == name && a.name.as_str() != "*" {
                            here.push(Used {
                                module: module.clone(),
                                name: Some(a.name.to_string()),
                                alias: a.asname.as_ref().map(|s| s.to_string()),
                                relative: level > 0,
                            });
                        }
                    }
                }
                Node::Stmt(_) => return true,
                _ => return false,
            }
            false
        });
        here.sort();
        here.dedup();
        for u in here {
            let e = seen.entry(u).or_insert((0, order));
            e.0 += 1;
        }
    }
    let mut out: Vec<(Used, usize, usize)> = seen
        .into_iter()
        .map(|(u, (n, first))| (u, n, first))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    out.into_iter().map(|(u, n, _)| (u, n)).collect()
}

/// The package a file's relative imports start from (`pkg.sub` for `pkg/sub/mod.py` and for
/// `pkg/sub/__init__.py`); `None` outside a package.
fn package_of(root: &Path, file: &Path) -> Option<String> {
    let dotted = project::module_name(root, file)?;
    let is_init = file.file_name().is_some_and(|n| n == "__init__.py");
    if is_init {
        Some(dotted)
    } else {
        dotted.rsplit_once('.').map(|(p, _)| p.to_string())
    }
}

/// `from ..x import y` in `package` → the absolute module (`None` when it leaves the project).
fn absolute(package: Option<&str>, level: usize, module: Option<&str>) -> Option<String> {
    if level == 0 {
        return module.map(str::to_string);
    }
    let mut parts: Vec<&str> = package?.split('.').collect();
    for _ in 1..level {
        parts.pop()?;
    }
    if parts.is_empty() {
        return None;
    }
    parts.extend(module.into_iter().flat_map(|m| m.split('.')));
    Some(parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_resolution() {
        assert_eq!(
            absolute(Some("pkg.sub"), 1, Some("m")).as_deref(),
            Some("pkg.sub.m")
        );
        assert_eq!(
            absolute(Some("pkg.sub"), 2, Some("m")).as_deref(),
            Some("pkg.m")
        );
        assert_eq!(
            absolute(Some("pkg.sub"), 1, None).as_deref(),
            Some("pkg.sub")
        );
        assert_eq!(absolute(Some("pkg"), 2, Some("m")), None);
        assert_eq!(absolute(None, 1, Some("m")), None);
        assert_eq!(
            absolute(None, 0, Some("os.path")).as_deref(),
            Some("os.path")
        );
    }

    #[test]
    fn ranked_by_modules_using_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let w = |p: &str, s: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w("app/__init__.py", "");
        w("app/a.py", "import gettext as _gt\n");
        w(
            "app/b.py",
            "def f():\n    from gettext import gettext as _gt\n    return _gt\n",
        );
        w(
            "app/c.py",
            "from gettext import gettext as _gt\nimport gettext as _gt\n",
        );
        w("app/d.py", "from .c import _gt\n");
        w("app/broken.py", "_gt = (\n");
        w("app/here.py", "print(_gt('x'))\n");
        w("tests/test_x.py", "import gettext as _gt\n");
        let found = imports_binding(root, "_gt", &root.join("app/here.py"));
        let show: Vec<(String, usize)> = found
            .iter()
            .map(|(u, n)| {
                let text = match &u.name {
                    None => format!("import {}", u.module),
                    Some(name) => format!("from {} import {name}", u.module),
                };
                let alias = u
                    .alias
                    .as_ref()
                    .map_or(String::new(), |a| format!(" as {a}"));
                (
                    format!("{text}{alias}{}", if u.relative { " (rel)" } else { "" }),
                    *n,
                )
            })
            .collect();
        assert_eq!(
            show,
            [
                ("import gettext as _gt".to_string(), 2),
                ("from gettext import gettext as _gt".to_string(), 2),
                ("from app.c import _gt (rel)".to_string(), 1),
            ]
        );
    }
}
