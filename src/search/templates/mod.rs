//! Fix templates of template-based repair (TBar's fix patterns, PraPR's mutators, ssFix's and
//! CapGen's context-aware ranking, read for their ideas): edits one step larger than
//! [`super::mutate`]'s single-token changes, each built from what the function or the file
//! already holds (a statement to copy, a comparison it already makes, a sibling attribute).
//!
//! One file per group of templates; each exposes `FAMILIES` (its names in
//! `rules/search/priors.toml`) and `mutants(&Site) -> Vec<Mutant>`. Nothing here runs code or
//! checks that the result parses: [`crate::edit::Fix::apply_to`] re-parses every candidate.

use std::collections::BTreeMap;

use rustpython_parser::ast::Stmt;

use crate::syntax::ParsedModule;

use super::mutate::Mutant;
use super::priors::Priors;

pub mod conditions;
pub mod expressions;
pub mod insert;
pub mod literals;
pub mod membership;
pub mod numbers;
pub mod operators;
pub mod siblings;
pub mod swaps;

/// Where the templates work: one suspicious statement of a parsed file.
pub struct Site<'a> {
    pub module: &'a ParsedModule,
    /// 1-based line of the suspicious statement.
    pub line: u32,
    pub stmt: &'a Stmt,
    /// The innermost function around the statement, if any.
    pub func: Option<&'a Stmt>,
    pub priors: &'a Priors,
    /// The crashed frame's locals → runtime type, when that frame is this statement's function.
    pub probed: Option<&'a BTreeMap<String, String>>,
    /// The literal the failing test compares with, when it does.
    pub expected: Option<&'a str>,
}

/// Every template family, as named in `rules/search/priors.toml`.
pub fn families() -> Vec<&'static str> {
    [
        operators::FAMILIES,
        expressions::FAMILIES,
        literals::FAMILIES,
        numbers::FAMILIES,
        swaps::FAMILIES,
        insert::FAMILIES,
        membership::FAMILIES,
        conditions::FAMILIES,
        siblings::FAMILIES,
    ]
    .concat()
}

/// Every template's mutants at the statement on `line` (none when the line starts no statement).
pub fn mutants(
    module: &ParsedModule,
    line: u32,
    priors: &Priors,
    probed: Option<&BTreeMap<String, String>>,
    expected: Option<&str>,
) -> Vec<Mutant> {
    let Some((stmt, func)) = crate::syntax::queries::statement_at(module, line) else {
        return Vec::new();
    };
    let site = Site {
        module,
        line,
        stmt,
        func,
        priors,
        probed,
        expected,
    };
    let mut out = Vec::new();
    out.extend(operators::mutants(&site));
    out.extend(expressions::mutants(&site));
    out.extend(literals::mutants(&site));
    out.extend(numbers::mutants(&site));
    out.extend(swaps::mutants(&site));
    out.extend(insert::mutants(&site));
    out.extend(membership::mutants(&site));
    out.extend(conditions::mutants(&site));
    out.extend(siblings::mutants(&site));
    out
}

/// The mutants `f` proposes at `line` of `src` (a module `m.py`, builtin priors, no probe, no
/// expected value): what the generators' unit tests look at.
#[cfg(test)]
pub(super) fn mutants_at(src: &str, line: u32, f: fn(&Site) -> Vec<Mutant>) -> Vec<Mutant> {
    let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
    let Some((stmt, func)) = crate::syntax::queries::statement_at(&pm, line) else {
        return Vec::new();
    };
    let site = Site {
        module: &pm,
        line,
        stmt,
        func,
        priors: Priors::builtin(),
        probed: None,
        expected: None,
    };
    f(&site)
}
