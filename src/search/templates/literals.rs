//! Template: a literal of the wrong shape (`[]` / `[[]]` / `[n]`, `""` / `None`).

use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[&str] = &[];

pub fn mutants(_site: &Site) -> Vec<Mutant> {
    Vec::new()
}
