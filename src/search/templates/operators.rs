//! Template: an operator or a builtin replaced by another member of its family (bitwise, comparison, min/max, any/all, sum/len).

use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[&str] = &[];

pub fn mutants(_site: &Site) -> Vec<Mutant> {
    Vec::new()
}
