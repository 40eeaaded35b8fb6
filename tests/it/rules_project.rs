//! Project rules in `.selfdebug/rules/`: new rules, overrides of built-in ones, and the exact
//! one-line error for each kind of broken file (library and CLI).

use crate::support;

use std::path::{Path, PathBuf};

use selfdebug::rules::{RuleSet, RuleSource};

/// A valid project rule named `id`; tests break it one piece at a time.
fn rule_text(id: &str) -> String {
    format!(
        r#"id = "{id}"
title = "Guard a None config"
category = "data"
exception = ["KeyError", "shop.errors.ConfigError"]
message = '''^missing (?P<key>\w+)(?: \((?P<why>[^)]*)\))?$'''
transform = "null_guard"
confidence = "high"
safe = true

[params]
operation = "subscript"
none_side = "left"

[docs]
what = "Guards a config lookup."
why = "Configs are optional."
example_before = '''
value = config["key"]
'''
example_after = '''
value = config.get("key")
'''
caveats = "A missing key may be a typo."
"#
    )
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join(".selfdebug/rules");
    std::fs::create_dir_all(&rules).unwrap();
    for (name, text) in files {
        std::fs::write(rules.join(name), text).unwrap();
    }
    dir
}

fn rule_path(root: &Path, name: &str) -> PathBuf {
    root.join(".selfdebug/rules").join(name)
}

#[test]
fn no_project_folder_means_the_builtin_rules() {
    let dir = tempfile::tempdir().unwrap();
    let set = RuleSet::load(dir.path()).unwrap();
    assert_eq!(set.len(), RuleSet::builtin().unwrap().len());
    assert!(set.rules().iter().all(|r| r.source == RuleSource::Builtin));
}

#[test]
fn a_new_project_rule_loads_and_matches() {
    let text = rule_text("config-key");
    let dir = project(&[("config-key.toml", &text), ("notes.txt", "not a rule")]);
    let set = RuleSet::load(dir.path()).unwrap();
    assert_eq!(set.len(), RuleSet::builtin().unwrap().len() + 1);
    let rule = set.get("config-key").unwrap();
    assert_eq!(
        rule.source,
        RuleSource::Project(rule_path(dir.path(), "config-key.toml"))
    );
    assert!(!rule.overrides_builtin);
    assert!(rule.safe);
    assert_eq!(rule.exception, ["KeyError", "shop.errors.ConfigError"]);

    // Built-in rules for KeyError match too; the project's rule (high confidence) comes first.
    let m = set.matching("KeyError", "missing port (not set)");
    assert_eq!(m[0].rule.id, "config-key");
    assert_eq!(m.iter().filter(|x| x.rule.id == "config-key").count(), 1);
    assert_eq!(
        m[0].captures.iter().collect::<Vec<_>>(),
        [
            (&"key".to_string(), &"port".to_string()),
            (&"why".to_string(), &"not set".to_string())
        ]
    );
    // An optional group that did not take part is absent, not empty.
    let m = set.matching("KeyError", "missing port");
    assert_eq!(m[0].rule.id, "config-key");
    assert_eq!(m[0].captures.keys().collect::<Vec<_>>(), ["key"]);
    // A dotted name matches the printed type exactly, a bare one its last component.
    let ours = |exc: &str| {
        set.matching(exc, "missing a")
            .iter()
            .filter(|m| m.rule.id == "config-key")
            .count()
    };
    assert_eq!(ours("shop.errors.ConfigError"), 1);
    assert_eq!(ours("ConfigError"), 0);
    assert_eq!(ours("other.ConfigError"), 0);
    assert_eq!(ours("builtins.KeyError"), 1);
}

#[test]
fn a_project_rule_overrides_the_builtin_one_with_its_id() {
    let text = rule_text("null-guard-call")
        .replace(
            "^missing (?P<key>",
            "^'NoneType' object is not callable(?P<key>",
        )
        .replace(
            "exception = [\"KeyError\", \"shop.errors.ConfigError\"]",
            "exception = \"TypeError\"",
        );
    let dir = project(&[("null-guard-call.toml", &text)]);
    let set = RuleSet::load(dir.path()).unwrap();
    assert_eq!(set.len(), RuleSet::builtin().unwrap().len());
    let rule = set.get("null-guard-call").unwrap();
    assert!(rule.overrides_builtin);
    assert_eq!(rule.title, "Guard a None config");
    assert_eq!(rule.confidence, selfdebug::edit::Confidence::High);

    // The listing says so.
    let out = support::selfdebug(&["rules", "--root", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let n = RuleSet::builtin().unwrap().len();
    let head = format!(
        "{n} rules: {} built in, 1 from the project (1 overriding a built-in rule)\n",
        n - 1
    );
    assert!(stdout.starts_with(&head), "{stdout}");
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("null-guard-call "))
        .unwrap_or_else(|| panic!("{stdout}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        [
            "null-guard-call",
            "TypeError",
            "high",
            "yes",
            "project",
            "(overrides",
            "built-in)"
        ]
    );
    let path = rule_path(dir.path(), "null-guard-call.toml");
    assert!(stdout.contains(&format!(
        "  source      project ({}), overrides the built-in rule\n",
        path.display()
    )));
    let json = support::selfdebug(
        &["rules", "--json", "--root", dir.path().to_str().unwrap()],
        None,
    );
    let doc = support::project::json(&json);
    let rule = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "null-guard-call")
        .unwrap();
    assert_eq!(rule["source"], "project");
    assert_eq!(rule["path"], path.display().to_string());
    assert_eq!(rule["overrides_builtin"], true);
    assert_eq!(
        rule["params"],
        serde_json::json!({"none_side": "left", "operation": "subscript"})
    );
}

#[test]
fn higher_confidence_matches_come_first() {
    // A high-confidence project rule on the same message as the medium built-in one.
    let text = rule_text("call-first")
        .replace(
            "^missing (?P<key>\\w+)(?: \\((?P<why>[^)]*)\\))?$",
            "not callable$",
        )
        .replace(
            "exception = [\"KeyError\", \"shop.errors.ConfigError\"]",
            "exception = \"TypeError\"",
        );
    let dir = project(&[("call-first.toml", &text)]);
    let set = RuleSet::load(dir.path()).unwrap();
    let ids: Vec<&str> = set
        .matching("TypeError", "'NoneType' object is not callable")
        .iter()
        .map(|m| m.rule.id.as_str())
        .collect();
    // The family's general rule (low confidence) matches every message that names `None`.
    assert_eq!(ids, ["call-first", "null-guard-call", "null-guard-flow"]);
}

/// Each broken file: (file name, contents, the problem after `PATH`).
fn broken_cases() -> Vec<(&'static str, String, &'static str)> {
    let good = rule_text("my-rule");
    vec![
        (
            "my-rule.toml",
            "id = \"my-rule\"\ntitle = \n".to_string(),
            ":2:9: invalid string; expected `\"`, `'`",
        ),
        (
            "my-rule.toml",
            good.replace("safe = true\n", "safe = true\nseverity = \"high\"\n"),
            ":9:1: unknown field `severity`, expected one of `id`, `title`, `category`, \
             `exception`, `message`, `transform`, `confidence`, `safe`, `review`, `params`, `docs`",
        ),
        (
            "my-rule.toml",
            good.replace("[docs]\n", "[docs]\nnote = \"x\"\n"),
            ":15:1: unknown field `note`, expected one of `what`, `why`, `example_before`, \
             `example_after`, `caveats`",
        ),
        (
            "my-rule.toml",
            good.replace("(?P<key>\\w+)", "(?P<key>\\w+"),
            ":5:11: message is not a valid regex: unclosed group",
        ),
        (
            "my-rule.toml",
            good.replace("(?P<key>\\w+)", "(?P<key>\\w+)(?=x)"),
            ":5:11: message is not a valid regex: look-around, including look-ahead and \
             look-behind, is not supported",
        ),
        (
            "my-rule.toml",
            good.replace("transform = \"null_guard\"", "transform = \"make_it_work\""),
            // The message lists every transform this build knows.
            Box::leak(
                format!(
                    ":6:13: unknown transform `make_it_work` (known: {})",
                    selfdebug::transform::KNOWN.join(", ")
                )
                .into_boxed_str(),
            ),
        ),
        // A transform's params are typed: a misspelt key, a value it does not know, a value of
        // the wrong type, a missing one, and any for a transform that takes none.
        (
            "my-rule.toml",
            good.replace("operation = \"subscript\"", "operaton = \"subscript\""),
            ":11:1: `null_guard` params: unknown field `operaton`, expected `operation` or \
             `none_side`",
        ),
        (
            "my-rule.toml",
            good.replace("operation = \"subscript\"", "operation = \"subscrpt\""),
            ":11:13: `null_guard` params: unknown variant `subscrpt`, expected one of \
             `attribute`, `subscript`, `iterate`, `len`, `binop`, `call`, `compare`, `unpack`, \
             `join`, `find`, `flow`",
        ),
        (
            "my-rule.toml",
            good.replace("none_side = \"left\"", "none_side = 1"),
            ":12:13: `null_guard` params: invalid type: integer `1`, expected one of `left`, `right`",
        ),
        (
            "my-rule.toml",
            good.replace("operation = \"subscript\"\n", ""),
            ":6:13: `null_guard` params: missing field `operation`",
        ),
        (
            "my-rule.toml",
            good.replace("[params]\noperation = \"subscript\"\nnone_side = \"left\"\n", ""),
            ":6:13: `null_guard` params: missing field `operation`",
        ),
        (
            "my-rule.toml",
            good.replace("transform = \"null_guard\"", "transform = \"zero_division\""),
            ":11:1: `zero_division` params: unknown field `operation`, there are no fields",
        ),
        (
            "my-rule.toml",
            rule_text("other-rule"),
            ":1:6: id `other-rule` does not match the file name (expected `my-rule`)",
        ),
        (
            "My_Rule.toml",
            rule_text("My_Rule"),
            ":1:6: id `My_Rule` is not kebab-case (lowercase letters, digits, single hyphens)",
        ),
        (
            "my-rule.toml",
            good[..good.find("[docs]").unwrap()].to_string(),
            ":1:1: missing field `docs`",
        ),
        (
            "my-rule.toml",
            good.replace("caveats = \"A missing key may be a typo.\"\n", ""),
            ":14:1: missing field `caveats`",
        ),
        (
            "my-rule.toml",
            good.replace("why = \"Configs are optional.\"", "why = \"  \""),
            ":16:7: docs.why is empty",
        ),
        (
            "my-rule.toml",
            good.replace("category = \"data\"", "category = \"logical\""),
            ":3:12: unknown category `logical` (expected one of: environment, data, logic, \
             syntax, dependency, timeout, unknown)",
        ),
        (
            "my-rule.toml",
            good.replace("confidence = \"high\"", "confidence = \"certain\""),
            ":7:14: unknown confidence `certain` (expected one of: high, medium, low)",
        ),
        (
            "my-rule.toml",
            good.replace("[\"KeyError\", \"shop.errors.ConfigError\"]", "[]"),
            ":4:13: exception list is empty",
        ),
        (
            "my-rule.toml",
            good.replace("\"shop.errors.ConfigError\"", "\"Config Error\""),
            ":4:13: exception `Config Error` is not a Python exception name (e.g. `KeyError`, \
             `pkg.errors.Error`)",
        ),
    ]
}

#[test]
fn each_broken_rule_is_one_exact_line() {
    for (name, text, problem) in broken_cases() {
        let dir = project(&[(name, &text)]);
        let err = RuleSet::load(dir.path()).expect_err(problem);
        let expected = format!("{}{problem}", rule_path(dir.path(), name).display());
        assert_eq!(err.to_string(), expected);
        assert!(!expected.contains('\n'));
    }
}

#[test]
fn the_cli_reports_a_broken_rule_on_stderr_and_exits_2() {
    for (name, text, problem) in broken_cases() {
        let dir = project(&[(name, &text)]);
        let root = dir.path().to_str().unwrap();
        for json in [false, true] {
            let mut args = vec!["rules", "--root", root];
            if json {
                args.push("--json");
            }
            let out = support::selfdebug(&args, None);
            assert_eq!(out.status.code(), Some(2), "{problem}");
            let line = format!("{}{problem}", rule_path(dir.path(), name).display());
            // With --json, the one object of every exit (docs/json.md): the same line.
            if json {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                let envelope =
                    serde_json::json!({"schema_version": 1, "exit_code": 2, "error": line});
                assert_eq!(v, envelope, "{problem}");
            } else {
                assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{problem}");
            }
            assert_eq!(
                String::from_utf8(out.stderr).unwrap(),
                format!("selfdebug: error: {line}\n")
            );
        }
    }
}

#[test]
fn the_first_broken_file_in_name_order_is_reported() {
    let dir = project(&[
        ("b-rule.toml", "nonsense"),
        ("a-rule.toml", &rule_text("a-rule")),
        ("c-rule.toml", "x = 1"),
    ]);
    let err = RuleSet::load(dir.path()).unwrap_err();
    assert_eq!(err.file, rule_path(dir.path(), "b-rule.toml"));
}

#[test]
fn unreadable_rules_folder_and_non_utf8_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".selfdebug")).unwrap();
    std::fs::write(dir.path().join(".selfdebug/rules"), "a file").unwrap();
    assert_eq!(
        RuleSet::load(dir.path()).unwrap_err().to_string(),
        format!(
            "{}: not a directory",
            dir.path().join(".selfdebug/rules").display()
        )
    );

    let dir = project(&[]);
    std::fs::write(rule_path(dir.path(), "x.toml"), b"id = \"\xff\"").unwrap();
    assert_eq!(
        RuleSet::load(dir.path()).unwrap_err().to_string(),
        format!(
            "{}: not valid UTF-8",
            rule_path(dir.path(), "x.toml").display()
        )
    );
}

#[test]
fn the_cli_rejects_a_missing_root() {
    let out = support::selfdebug(&["rules", "--root", "/nonexistent/selfdebug-root"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "selfdebug: error: --root /nonexistent/selfdebug-root: not a directory\n"
    );
}
