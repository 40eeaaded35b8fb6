//! The search's priors (`rules/search/priors.toml`, compiled in): how likely each family of
//! small edits is to be the human fix, and the weights of operator replacements.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer};

use super::family::Family;

/// The data file, as shipped.
pub const SOURCE: &str = include_str!("../../rules/search/priors.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priors {
    /// Every family's prior: the file must name each [`Family`] and no other word.
    #[serde(deserialize_with = "every_family")]
    pub families: BTreeMap<Family, f64>,
    pub compare: BTreeMap<String, BTreeMap<String, f64>>,
    pub arith: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Priors {
    /// The shipped priors, parsed once. The file is compiled in and a unit test reads it with
    /// the same check, so the `expect` cannot fire in a built binary; a file that names an
    /// unknown family or misses one fails that test loudly instead of ranking with a default.
    pub fn builtin() -> &'static Priors {
        static P: OnceLock<Priors> = OnceLock::new();
        P.get_or_init(|| {
            toml::from_str(SOURCE).expect("rules/search/priors.toml is checked by a unit test")
        })
    }

    /// A family's prior (every family has one: [`every_family`] checked it).
    pub fn family(&self, family: Family) -> f64 {
        self.families.get(&family).copied().unwrap_or_default()
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

/// The `[families]` table, refused unless it gives a prior to exactly the families of
/// [`Family`].
fn every_family<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Family, f64>, D::Error> {
    use serde::de::Error;
    let raw = BTreeMap::<String, f64>::deserialize(d)?;
    let mut out = BTreeMap::new();
    for (word, prior) in raw {
        let family = Family::from_word(&word)
            .ok_or_else(|| D::Error::custom(format!("unknown search family `{word}`")))?;
        out.insert(family, prior);
    }
    if let Some(missing) = Family::ALL.iter().find(|f| !out.contains_key(f)) {
        return Err(D::Error::custom(format!(
            "no prior for search family `{missing}`"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_priors_parse_and_cover_every_family() {
        let p: Priors = toml::from_str(SOURCE).expect("rules/search/priors.toml");
        assert_eq!(p.replacements("compare", "<")[0], ("<=".to_string(), 1.0));
        assert_eq!(p.families.len(), Family::ALL.len());
    }

    /// A word no generator makes, or a family left out, is an error, not a default prior.
    #[test]
    fn an_unknown_or_missing_family_is_refused() {
        let unknown = SOURCE.replacen("[families]\n", "[families]\nswap-everything = 0.5\n", 1);
        let err = toml::from_str::<Priors>(&unknown).unwrap_err().to_string();
        assert!(
            err.contains("unknown search family `swap-everything`"),
            "{err}"
        );
        let missing: String = SOURCE
            .lines()
            .filter(|l| !l.starts_with("compare-op ="))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = toml::from_str::<Priors>(&missing).unwrap_err().to_string();
        assert!(
            err.contains("no prior for search family `compare-op`"),
            "{err}"
        );
    }
}
