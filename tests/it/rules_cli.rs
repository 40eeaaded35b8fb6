//! `selfdebug rules`: the built-in catalogue, for people and as JSON (reviewed snapshots).

use crate::support;

fn run(extra: &[&str]) -> String {
    // An empty root: no project rules, so the output is the built-in catalogue alone.
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["rules", "--root", dir.path().to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = support::selfdebug(&args, None);
    support::assert_exit(&out, 0);
    assert!(out.stderr.is_empty(), "nothing on stderr");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn human_catalogue() {
    insta::assert_snapshot!("rules_human", run(&[]));
}

#[test]
fn json_catalogue() {
    let text = run(&["--json"]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(doc["schema_version"], 1);
    // Every field of every rule is there.
    for rule in doc["rules"].as_array().unwrap() {
        let keys: Vec<&str> = rule
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = vec![
            "id",
            "title",
            "category",
            "exception",
            "message",
            "groups",
            "transform",
            "params",
            "confidence",
            "safe",
            "review",
            "source",
            "path",
            "overrides_builtin",
            "docs",
        ];
        expected.sort();
        assert_eq!(keys, expected);
    }
    insta::assert_snapshot!("rules_json", text);
}
