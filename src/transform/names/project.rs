//! The project's own importable modules, found from the failing file alone (a transform is not
//! told the project root): the import root is the directory above the file's outermost package
//! (walking up while a directory has `__init__.py`), which is also right for a `src/` layout.

use std::path::{Path, PathBuf};

use rustpython_parser::ast::{Expr, Stmt};
/// Files read at most when searching the project (a large tree is searched partly, never
/// slowly).
const MAX_FILES: usize = 3000;
/// Larger files are skipped: generated code, data.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The directory Python puts on `sys.path` for `file`: the parent of its outermost package, or
/// its own directory when it is not in a package.
pub(crate) fn import_root(file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent()?.to_path_buf();
    if dir.as_os_str().is_empty() {
        dir = PathBuf::from(".");
    }
    let mut guard = 0;
    while dir.join("__init__.py").is_file() && guard < 64 {
        guard += 1;
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            _ => break,
        }
    }
    Some(dir)
}

/// The dotted module name of `file` under `root` (`pkg/sub/mod.py` → `pkg.sub.mod`,
/// `pkg/__init__.py` → `pkg`), when every directory on the way is a package.
pub(crate) fn module_name(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let (last, dirs) = parts.split_last()?;
    let stem = last.strip_suffix(".py")?;
    let mut dir = root.to_path_buf();
    for d in dirs {
        dir.push(d);
        if !dir.join("__init__.py").is_file() || !is_identifier(d) {
            return None;
        }
    }
    let mut names: Vec<&str> = dirs.iter().map(String::as_str).collect();
    if stem != "__init__" {
        if !is_identifier(stem) {
            return None;
        }
        names.push(stem);
    }
    (!names.is_empty()).then(|| names.join("."))
}

/// The file of a dotted module under `root`, if the project has it.
pub(crate) fn module_file(root: &Path, dotted: &str) -> Option<PathBuf> {
    if dotted.is_empty() || !dotted.split('.').all(is_identifier) {
        return None;
    }
    let base = dotted.split('.').fold(root.to_path_buf(), |p, s| p.join(s));
    let as_module = base.with_extension("py");
    if as_module.is_file() {
        return Some(as_module);
    }
    let init = base.join("__init__.py");
    init.is_file().then_some(init)
}

/// The import root and file of `dotted` as seen from `file`: under the file's own import root,
/// else under one of its next three ancestors or their `src/` (a test directory that is not a
/// package imports the project from the root above it).
pub(crate) fn resolve_module(file: &Path, dotted: &str) -> Option<(PathBuf, PathBuf)> {
    let first = import_root(file)?;
    let mut roots = vec![first.clone()];
    let mut dir = first.as_path();
    for _ in 0..3 {
        let Some(p) = dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
            break;
        };
        roots.push(p.to_path_buf());
        roots.push(p.join("src"));
        dir = p;
    }
    roots
        .into_iter()
        .find_map(|r| module_file(&r, dotted).map(|f| (r, f)))
}

/// Whether the top-level name of an import is one of the project's own packages or modules.
pub(crate) fn is_local_top(root: &Path, top: &str) -> bool {
    is_identifier(top)
        && (root.join(top).join("__init__.py").is_file()
            || root.join(format!("{top}.py")).is_file())
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The project's importable `.py` files under `root`, sorted, without tests, virtualenvs,
/// caches and hidden directories.
pub(crate) fn project_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if ft.is_dir() {
                let skip = name.starts_with('.')
                    || matches!(
                        name.as_str(),
                        "tests"
                            | "test"
                            | "testing"
                            | "__pycache__"
                            | "node_modules"
                            | "site-packages"
                            | "dist-packages"
                            | "build"
                            | "dist"
                    )
                    || crate::scratch::is_virtualenv(&path);
                // Only packages are importable by a dotted name.
                if !skip && path.join("__init__.py").is_file() {
                    dirs.push(path);
                }
            } else if ft.is_file() && name.ends_with(".py") {
                let parts = [name.as_str()];
                if crate::traceback::locate::is_test_file(&parts) {
                    continue;
                }
                out.push(path);
                if out.len() >= MAX_FILES {
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

/// What a module defines at its top level (`def`, `class`, assignments; imports separately,
/// since a name a module imports is importable from it but is not defined there).
#[derive(Debug, Default)]
pub(crate) struct TopLevel {
    pub defined: Vec<String>,
    pub imported: Vec<String>,
}

pub(crate) fn top_level(file: &Path) -> Option<TopLevel> {
    let meta = std::fs::metadata(file).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let source = crate::source::SourceFile::read(file).ok()?;
    let pm = crate::syntax::parse(&source).ok()?;
    Some(top_level_of(pm.body()))
}

pub(crate) fn top_level_of(body: &[Stmt]) -> TopLevel {
    let mut out = TopLevel::default();
    // Top-level `if`/`try` blocks (`try: import x except ImportError`) bind at module level.
    let mut stack: Vec<&Stmt> = body.iter().rev().collect();
    while let Some(s) = stack.pop() {
        match s {
            Stmt::FunctionDef(f) => out.defined.push(f.name.to_string()),
            Stmt::AsyncFunctionDef(f) => out.defined.push(f.name.to_string()),
            Stmt::ClassDef(c) => out.defined.push(c.name.to_string()),
            Stmt::Assign(a) => {
                for t in &a.targets {
                    names_of_target(t, &mut out.defined);
                }
            }
            Stmt::AnnAssign(a) => names_of_target(&a.target, &mut out.defined),
            Stmt::Import(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
                    out.imported
                        .push(n.split('.').next().unwrap_or(n).to_string());
                }
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
                    if n != "*" {
                        out.imported.push(n.to_string());
                    }
                }
            }
            Stmt::If(_) | Stmt::Try(_) | Stmt::TryStar(_) | Stmt::With(_) => {
                for b in super::scope::child_bodies(s).into_iter().rev() {
                    stack.extend(b.iter().rev());
                }
            }
            _ => {}
        }
    }
    out
}

fn names_of_target(t: &Expr, out: &mut Vec<String>) {
    match t {
        Expr::Name(n) => out.push(n.id.to_string()),
        Expr::Tuple(tu) => tu.elts.iter().for_each(|e| names_of_target(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| names_of_target(e, out)),
        Expr::Starred(s) => names_of_target(&s.value, out),
        _ => {}
    }
}

/// Project modules (other than `exclude`) that define `name` at top level, nearest to
/// `near` (the importing module's dotted name) first: same package, then by length.
pub(crate) fn modules_defining(
    root: &Path,
    name: &str,
    exclude: &[PathBuf],
    near: Option<&str>,
) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for file in project_files(root) {
        if exclude.iter().any(|e| same_file(e, &file)) {
            continue;
        }
        // Cheap text check before parsing.
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if !contains_word(&bytes, name.as_bytes()) {
            continue;
        }
        let Some(dotted) = module_name(root, &file) else {
            continue;
        };
        if top_level(&file).is_some_and(|t| t.defined.iter().any(|d| d == name)) {
            found.push(dotted);
        }
    }
    let shared = |m: &str| {
        near.map_or(0, |n| {
            m.split('.')
                .zip(n.split('.'))
                .take_while(|(a, b)| a == b)
                .count()
        })
    };
    found.sort_by(|a, b| {
        shared(b)
            .cmp(&shared(a))
            .then(a.matches('.').count().cmp(&b.matches('.').count()))
            .then(a.cmp(b))
    });
    found
}

pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

pub(crate) fn contains_word(hay: &[u8], word: &[u8]) -> bool {
    if word.is_empty() {
        return false;
    }
    let is_id = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
    let mut i = 0;
    while i + word.len() <= hay.len() {
        if &hay[i..i + word.len()] == word
            && (i == 0 || !is_id(hay[i - 1]))
            && hay.get(i + word.len()).is_none_or(|&b| !is_id(b))
        {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_names() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("src/shop/util")).unwrap();
        std::fs::write(r.join("src/shop/__init__.py"), "").unwrap();
        std::fs::write(r.join("src/shop/util/__init__.py"), "").unwrap();
        std::fs::write(
            r.join("src/shop/util/money.py"),
            "def cents(x):\n    return x\n",
        )
        .unwrap();
        std::fs::write(r.join("src/shop/cart.py"), "X = 1\n").unwrap();
        let root = import_root(&r.join("src/shop/cart.py")).unwrap();
        assert_eq!(root, r.join("src"));
        assert_eq!(
            module_name(&root, &r.join("src/shop/util/money.py")).as_deref(),
            Some("shop.util.money")
        );
        assert_eq!(
            module_name(&root, &r.join("src/shop/__init__.py")).as_deref(),
            Some("shop")
        );
        assert_eq!(
            module_file(&root, "shop.util.money"),
            Some(r.join("src/shop/util/money.py"))
        );
        assert!(is_local_top(&root, "shop"));
        assert!(!is_local_top(&root, "os"));
        assert_eq!(
            modules_defining(&root, "cents", &[], Some("shop.cart")),
            vec!["shop.util.money".to_string()]
        );
        assert!(contains_word(b"a cents(", b"cents"));
        assert!(!contains_word(b"percents", b"cents"));
    }
}
