//! `docs/rules.md` is generated from the rules; this keeps the committed file in step, so a
//! rule added without regenerating its documentation fails CI.
//! Regenerate: `SELFDEBUG_UPDATE_DOCS=1 cargo test --test it rules_docs`.

use std::path::Path;

use selfdebug::rules::RuleSet;

#[test]
fn docs_rules_md_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let generated = selfdebug::report::rules::markdown(&RuleSet::builtin().unwrap());
    if std::env::var_os("SELFDEBUG_UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.md is out of date with rules/*.toml; regenerate it with \
         `SELFDEBUG_UPDATE_DOCS=1 cargo test --test it rules_docs` and review the diff"
    );
}

#[test]
fn every_rule_has_a_section() {
    let set = RuleSet::builtin().unwrap();
    let md = selfdebug::report::rules::markdown(&set);
    for rule in set.rules() {
        assert!(md.contains(&format!("\n## {}\n", rule.id)), "{}", rule.id);
    }
}
