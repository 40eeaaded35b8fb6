//! Template: an incomplete or wrong condition (a loop exit, a missing guard term, a constant return that should be the tracked condition, a base case).

use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[&str] = &[];

pub fn mutants(_site: &Site) -> Vec<Mutant> {
    Vec::new()
}
