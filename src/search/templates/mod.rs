//! Fix templates of template-based repair (TBar's fix patterns, PraPR's mutators, ssFix's and
//! CapGen's context-aware ranking, read for their ideas): edits one step larger than
//! [`super::mutate`]'s single-token changes, each built from what the function or the file
//! already holds (a statement to copy, a comparison it already makes, a sibling attribute).
//!
//! One file per group of templates, each named once in the [`templates!`] table below; each
//! exposes `FAMILIES` (its [`Family`]s) and `mutants(&Site) -> Vec<Mutant>`, which the table
//! makes the compiler check, and a test fails on a file of this folder the table leaves out.
//! Nothing here runs code or checks that the result parses: [`crate::edit::Fix::apply_to`]
//! re-parses every candidate.

use std::collections::BTreeMap;

use rustpython_parser::ast::Stmt;

use crate::syntax::ParsedModule;

use super::family::Family;
use super::mutate::Mutant;
use super::priors::Priors;

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
    /// The builtin type the failing check compares with when the value it got is of another
    /// ([`conversions::wanted_type`]).
    pub wanted_type: Option<&'a str>,
}

/// Declares the template files: each line is a module of this folder (declared here, nowhere
/// else), whose `FAMILIES` and `mutants` join [`families`] and [`mutants`] in table order
/// (the order candidates are made in, which ties keep).
macro_rules! templates {
    ($($(#[$doc:meta])* $module:ident,)+) => {
        $($(#[$doc])* pub mod $module;)+

        /// Every template family.
        pub fn families() -> Vec<Family> {
            [$($module::FAMILIES,)+].concat()
        }

        /// Every template's mutants at `site`, in table order.
        fn site_mutants(site: &Site) -> Vec<Mutant> {
            let mut out = Vec::new();
            $(out.extend($module::mutants(site));)+
            out
        }

        /// The table's modules (what the test compares the folder with).
        #[cfg(test)]
        const MODULES: &[&str] = &[$(stringify!($module)),+];
    };
}

templates! {
    operators,
    expressions,
    literals,
    numbers,
    swaps,
    insert,
    membership,
    conditions,
    siblings,
    arguments,
    awaits,
    blocks,
    returns,
    nones,
    calls,
    conversions,
    fstrings,
    copies,
}

/// Every template's mutants at the statement on `line` (none when the line starts no statement).
pub fn mutants(
    module: &ParsedModule,
    line: u32,
    priors: &Priors,
    probed: Option<&BTreeMap<String, String>>,
    expected: Option<&str>,
    wanted_type: Option<&str>,
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
        wanted_type,
    };
    site_mutants(&site)
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
        wanted_type: None,
    };
    f(&site)
}

/// What `f` proposes at `line` of `src` (see [`mutants_at`]): each mutant's title, the
/// patched text and its prior.
#[cfg(test)]
pub(super) fn applied_at(
    src: &str,
    line: u32,
    f: fn(&Site) -> Vec<Mutant>,
) -> Vec<(String, String, f64)> {
    mutants_at(src, line, f)
        .into_iter()
        .map(|m| {
            let new = crate::edit::apply(src, &m.edits).unwrap();
            (m.title, new, m.prior)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Every file of this folder is a line of the [`templates!`] table: a template file left
    /// out would compile nowhere and never propose anything.
    #[test]
    fn every_template_file_is_in_the_table() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/search/templates");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "mod.rs")
            .collect();
        files.sort();
        let mut listed: Vec<String> = super::MODULES.iter().map(|m| format!("{m}.rs")).collect();
        listed.sort();
        assert_eq!(files, listed);
    }
}
