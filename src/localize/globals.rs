//! Module constants in the spectrum: a module-level assignment (`TAX_PERCENT = 21`) runs once,
//! at import, while pytest collects, so no test's coverage holds its line, and a wrong constant
//! behind several failing tests would never be suspected. The data dependency stands in: a test
//! that ran a statement of a function reading the name (and not binding it locally) counts as
//! having run the constant's line. Ochiai then ranks a constant that every failing test reads
//! above the lines of each one's own function.
//!
//! Only names read in the same file are followed (`from pricing import TAX_PERCENT` read in
//! another module is not): the common case, and no import resolution is needed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rustpython_parser::ast::{Expr, ExprContext, Ranged, Stmt};

use super::Spectrum;
use crate::syntax::walk::{self, Node};
use crate::syntax::{ParsedModule, MAX_AST_DEPTH};

/// Adds, for every test, the lines of the module-level assignments of the names its covered
/// statements read (see the module docs). Files that cannot be read or parsed are left as
/// they are.
pub fn attribute_constants(spectrum: &mut Spectrum, root: &Path) {
    let files: BTreeSet<String> = spectrum
        .tests
        .values()
        .flat_map(|t| t.lines.keys().cloned())
        .collect();
    for file in files {
        let Some(module) = parse(root, &file) else {
            continue;
        };
        let constants = module_constants(&module);
        if constants.is_empty() {
            continue;
        }
        // Line → the constant lines its statement reads; each line is looked at once.
        let mut reads: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for t in spectrum.tests.values_mut() {
            let Some(lines) = t.lines.get_mut(&file) else {
                continue;
            };
            let mut add: BTreeSet<u32> = BTreeSet::new();
            for &line in lines.iter() {
                let read = reads
                    .entry(line)
                    .or_insert_with(|| constants_read(&module, line, &constants));
                add.extend(read.iter().copied());
            }
            lines.extend(add);
        }
    }
}

fn parse(root: &Path, file: &str) -> Option<ParsedModule> {
    let path = crate::plan::confined_path(root, file).ok()?;
    let source = crate::source::SourceFile::read(&path).ok()?;
    crate::syntax::parse(&source).ok()
}

/// Name → the lines of its module-level assignments (`NAME = ...`, `NAME: T = ...`).
pub fn module_constants(module: &ParsedModule) -> BTreeMap<String, Vec<u32>> {
    let mut out: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for stmt in module.body() {
        let names: Vec<&str> = match stmt {
            Stmt::Assign(a) => a
                .targets
                .iter()
                .filter_map(|t| match t {
                    Expr::Name(n) => Some(n.id.as_str()),
                    _ => None,
                })
                .collect(),
            Stmt::AnnAssign(a) if a.value.is_some() => match a.target.as_ref() {
                Expr::Name(n) => vec![n.id.as_str()],
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let line = module.line_of(stmt.range().start().to_usize()) as u32;
        for n in names {
            out.entry(n.to_string()).or_default().push(line);
        }
    }
    out
}

/// The constant lines the statement starting on `line` reads, when it is in a function that
/// does not bind the name itself.
fn constants_read(
    module: &ParsedModule,
    line: u32,
    constants: &BTreeMap<String, Vec<u32>>,
) -> Vec<u32> {
    let Some((stmt, Some(func))) = crate::syntax::queries::statement_at(module, line) else {
        return Vec::new();
    };
    let local = locals(func);
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    let mut out = BTreeSet::new();
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if matches!(n.ctx, ExprContext::Load) && !local.contains(n.id.as_str()) {
                if let Some(lines) = constants.get(n.id.as_str()) {
                    out.extend(lines.iter().copied());
                }
            }
        }
        true
    });
    out.into_iter().collect()
}

/// The names a function binds: its parameters and every name it assigns (a `global`
/// declaration makes the name the module's again).
fn locals(func: &Stmt) -> BTreeSet<String> {
    let (args, body) = match func {
        Stmt::FunctionDef(f) => (&f.args, &f.body),
        Stmt::AsyncFunctionDef(f) => (&f.args, &f.body),
        _ => return BTreeSet::new(),
    };
    let mut out: BTreeSet<String> = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
        .map(|a| a.def.arg.to_string())
        .chain(args.vararg.iter().map(|a| a.arg.to_string()))
        .chain(args.kwarg.iter().map(|a| a.arg.to_string()))
        .collect();
    let mut global: BTreeSet<String> = BTreeSet::new();
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Name(n)) if matches!(n.ctx, ExprContext::Store) => {
                out.insert(n.id.to_string());
            }
            Node::Stmt(Stmt::Global(g)) => {
                global.extend(g.names.iter().map(|n| n.to_string()));
            }
            _ => {}
        }
        // A nested def's names are its own.
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    out.retain(|n| !global.contains(n));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::localize::TestCoverage;

    const SRC: &str = "TAX = 21\nLIMIT: int = 3\n\n\
def with_tax(net):\n    return net + net * TAX // 100\n\n\
def shadow(TAX):\n    return TAX + LIMIT\n\n\
def assigns():\n    TAX = 1\n    return TAX\n";

    #[test]
    fn a_covered_line_reading_a_constant_covers_its_assignment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), SRC).unwrap();
        let mut sp = Spectrum::default();
        for (id, failed, lines) in [
            ("t::a", true, vec![5u32]),
            ("t::b", false, vec![8]),
            ("t::c", false, vec![11, 12]),
        ] {
            sp.tests.insert(
                id.into(),
                TestCoverage {
                    failed,
                    spawns: false,
                    lines: BTreeMap::from([("m.py".to_string(), lines.into_iter().collect())]),
                },
            );
        }
        attribute_constants(&mut sp, dir.path());
        let lines = |id: &str| -> Vec<u32> { sp.tests[id].lines["m.py"].iter().copied().collect() };
        // `TAX` read in with_tax: line 1; `shadow` binds `TAX` (a parameter) but reads the
        // module's `LIMIT`; `assigns` binds its own `TAX`.
        assert_eq!(lines("t::a"), vec![1, 5]);
        assert_eq!(lines("t::b"), vec![2, 8]);
        assert_eq!(lines("t::c"), vec![11, 12]);
    }
}
