//! Template: a sibling name (another attribute of the same object, another local of the same runtime type).

use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[&str] = &[];

pub fn mutants(_site: &Site) -> Vec<Mutant> {
    Vec::new()
}
