//! The search's priors (`rules/search/priors.toml`, compiled in): how likely each family of
//! small edits is to be the human fix, and the weights of operator replacements.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The data file, as shipped.
pub const SOURCE: &str = include_str!("../../rules/search/priors.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priors {
    pub families: BTreeMap<String, f64>,
    pub compare: BTreeMap<String, BTreeMap<String, f64>>,
    pub arith: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Priors {
    /// The shipped priors (parsed once; a unit test keeps the file valid).
    pub fn builtin() -> &'static Priors {
        static P: OnceLock<Priors> = OnceLock::new();
        P.get_or_init(|| toml::from_str(SOURCE).unwrap_or_else(|_| Priors::empty()))
    }

    fn empty() -> Priors {
        Priors {
            families: BTreeMap::new(),
            compare: BTreeMap::new(),
            arith: BTreeMap::new(),
        }
    }

    /// A family's prior; an unknown family gets a small one rather than none.
    pub fn family(&self, name: &str) -> f64 {
        self.families.get(name).copied().unwrap_or(0.01)
    }

    /// `(to, weight)` for an operator of `table` (`compare` or `arith`).
    pub fn replacements(&self, table: &str, from: &str) -> Vec<(String, f64)> {
        let t = match table {
            "compare" => &self.compare,
            _ => &self.arith,
        };
        let mut out: Vec<(String, f64)> = t
            .get(from)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_priors_parse_and_cover_every_family() {
        let p: Priors = toml::from_str(SOURCE).expect("rules/search/priors.toml");
        assert_eq!(p.replacements("compare", "<")[0], ("<=".to_string(), 1.0));
    }
}
