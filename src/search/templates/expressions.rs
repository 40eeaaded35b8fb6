//! Template: an expression one step too simple or too complex (clamp, accumulate, a term, a call and its argument, a power or an offset).

use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[&str] = &[];

pub fn mutants(_site: &Site) -> Vec<Mutant> {
    Vec::new()
}
