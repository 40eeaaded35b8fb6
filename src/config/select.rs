//! Rule selection (`select`, `extend-select`, `ignore`), after Ruff's. A selector is `ALL`, a
//! rule id (`null-guard-call`), or a prefix of whole id segments (`null-guard` selects every
//! `null-guard-*` rule, `type` every `type-*` rule). `select` replaces the default (`ALL`: every
//! rule is tried), `extend-select` adds to it, `ignore` removes. When selectors disagree on a
//! rule, the most specific one (the most segments; `ALL` has none) wins, and at equal
//! specificity `ignore` wins, as in Ruff. A selector that matches no rule is an error, as
//! Ruff's unknown rule selectors are (a typo would silently select nothing).

/// A selector as written, and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    pub text: String,
    pub line: usize,
}

impl Selector {
    fn specificity(&self) -> usize {
        if self.text == "ALL" {
            0
        } else {
            self.text.split('-').count()
        }
    }

    fn matches(&self, id: &str) -> bool {
        self.text == "ALL"
            || id == self.text
            || id
                .strip_prefix(self.text.as_str())
                .is_some_and(|rest| rest.starts_with('-'))
    }
}

/// The selection in force. `Default` tries every rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSelection {
    /// `None`: not given (every rule).
    pub select: Option<Vec<Selector>>,
    pub extend_select: Vec<Selector>,
    pub ignore: Vec<Selector>,
}

impl RuleSelection {
    pub fn is_default(&self) -> bool {
        self == &RuleSelection::default()
    }

    /// Whether the rule `id` is tried.
    pub fn enabled(&self, id: &str) -> bool {
        let all = [Selector {
            text: "ALL".into(),
            line: 0,
        }];
        let select = self.select.as_deref().unwrap_or(&all);
        let best_on = select
            .iter()
            .chain(&self.extend_select)
            .filter(|s| s.matches(id))
            .map(Selector::specificity)
            .max();
        let best_off = self
            .ignore
            .iter()
            .filter(|s| s.matches(id))
            .map(Selector::specificity)
            .max();
        match (best_on, best_off) {
            (Some(on), Some(off)) => on > off,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Every selector must match one of `ids`, the selectable rule ids (built in, the project's
    /// own, and the search's families). The error is the offending selector's line and a
    /// message with the nearest id or prefix.
    pub fn check(&self, ids: &[String]) -> Result<(), (usize, String)> {
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let lists = [
            ("select", self.select.as_deref().unwrap_or(&[])),
            ("extend-select", &self.extend_select[..]),
            ("ignore", &self.ignore[..]),
        ];
        for (key, list) in lists {
            for s in list {
                if ids.iter().any(|id| s.matches(id)) {
                    continue;
                }
                let hint = nearest(&ids, &s.text)
                    .map(|m| format!(" (did you mean '{m}'?)"))
                    .unwrap_or_else(|| " (see `selfdebug rules`)".to_string());
                return Err((
                    s.line,
                    format!("'{}' in {key} matches no rule{hint}", s.text),
                ));
            }
        }
        Ok(())
    }
}

/// The closest rule id or id prefix to a selector that matches nothing.
fn nearest(ids: &[&str], wrong: &str) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        let parts: Vec<&str> = id.split('-').collect();
        for n in 1..=parts.len() {
            let p = parts[..n].join("-");
            if !names.contains(&p) {
                names.push(p);
            }
        }
    }
    // Prefixes of the same length as the typo first: `nul-guard` is `null-guard`, not `null`.
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::suggest::best_match(&refs, wrong, crate::suggest::Impl::Traceback).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(list: &[&str]) -> Vec<Selector> {
        list.iter()
            .map(|t| Selector {
                text: t.to_string(),
                line: 1,
            })
            .collect()
    }

    #[test]
    fn most_specific_selector_wins_and_ignore_wins_ties() {
        let s = RuleSelection {
            select: Some(sel(&["null-guard", "name-did-you-mean"])),
            extend_select: sel(&["zero-div-guard"]),
            ignore: sel(&["null-guard-call"]),
        };
        assert!(s.enabled("null-guard-attribute"));
        assert!(!s.enabled("null-guard-call"));
        assert!(s.enabled("name-did-you-mean"));
        assert!(!s.enabled("name-nearest"));
        assert!(s.enabled("zero-div-guard"));
        // `null` is not a segment prefix of `nullable-x`.
        let s = RuleSelection {
            select: Some(sel(&["null"])),
            ..Default::default()
        };
        assert!(!s.enabled("nullable-x"));
        assert!(s.enabled("null-guard-call"));
        // ignore a family, select one member back: the member is more specific.
        let s = RuleSelection {
            select: None,
            extend_select: sel(&["type-str-concat"]),
            ignore: sel(&["type"]),
        };
        assert!(s.enabled("type-str-concat"));
        assert!(!s.enabled("type-not-callable"));
        assert!(s.enabled("zero-div-guard"));
        let tie = RuleSelection {
            select: Some(sel(&["type"])),
            extend_select: vec![],
            ignore: sel(&["type"]),
        };
        assert!(!tie.enabled("type-str-concat"));
        assert!(RuleSelection::default().enabled("anything"));
    }

    #[test]
    fn unknown_selectors_are_errors_with_a_suggestion() {
        let ids: Vec<String> = ["null-guard-call", "null-guard-attribute", "type-str-concat"]
            .map(String::from)
            .to_vec();
        let s = RuleSelection {
            ignore: vec![Selector {
                text: "nul-guard".into(),
                line: 7,
            }],
            ..Default::default()
        };
        assert_eq!(
            s.check(&ids),
            Err((
                7,
                "'nul-guard' in ignore matches no rule (did you mean 'null-guard'?)".into()
            ))
        );
        let ok = RuleSelection {
            select: Some(sel(&["ALL", "type", "null-guard-call"])),
            ..Default::default()
        };
        assert_eq!(ok.check(&ids), Ok(()));
    }
}
