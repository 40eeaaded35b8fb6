//! `[tool.selfdebug]` in pyproject.toml (and selfdebug.toml / .selfdebug.toml): settings that
//! change what real `fix` runs do, flags that override them, errors that name the file and
//! line, and `selfdebug config`.

use crate::support;

use support::project::{assert_same, json, project, Project, DEMO_MODULE};

const DEMO_TEST: &str =
    "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n";
const DEMO_FIXED: &str = "def to_upper(text):\n    words = (text or \"\").split()\n    return \" \".join(w.upper() for w in words)\n";

/// The original design's demo bug, with `pyproject` as the project's pyproject.toml.
fn demo(pyproject: &str) -> Project {
    project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", DEMO_TEST),
        ("pyproject.toml", pyproject),
    ])
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn statuses(v: &serde_json::Value) -> Vec<(String, String)> {
    v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["status"].as_str().unwrap().to_string(),
                f["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn rules_of(v: &serde_json::Value) -> Vec<String> {
    v["patches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["rules"].as_array().unwrap().clone())
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_file_header_names_the_config_and_a_zero_budget_leaves_the_rules_running() {
    // The attempt counts bound only the model's calls: a rule's candidate is one targeted run,
    // bounded by time and rank (docs/proof.md).
    let p = demo("[project]\nname = \"demo\"\n\n[tool.selfdebug]\nbudget = { logic = 0 }\n");
    let out = p.run(&["fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("words.py"), DEMO_FIXED);
    assert!(
        stderr(&out).starts_with(&format!(
            "selfdebug: root {} (--root); config: pyproject.toml; python ",
            p.root.display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn max_attempts_bounds_the_model_not_the_rules() {
    // The test wants None back: the first null guard (`(text or "")`) is wrong, the second
    // (`if text is None: return None`) right. `max-attempts = 1` does not stop the rules.
    let p = project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) is None\n",
        ),
        ("selfdebug.toml", "max-attempts = 1\n"),
    ]);
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let outcomes: Vec<&str> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    // The guard returning None ranks after the edits that keep the function's own kind of value
    // (docs/proof.md, "What is never the first answer"): those are tried first and fail.
    assert_eq!(
        outcomes,
        [
            "still_failing",
            "still_failing",
            "progressed",
            "still_failing",
            "still_failing",
            "accepted"
        ]
    );
    assert_eq!(
        p.read("words.py"),
        "def to_upper(text):\n    if text is None:\n        return None\n    words = text.split()\n    return \" \".join(w.upper() for w in words)\n"
    );
}

#[test]
fn ignore_drops_the_rule_that_fixes_by_default_and_select_picks_one() {
    // By default the null guard fixes it.
    // The search over small edits is selected like a rule (`search`, `search-FAMILY`).
    let p = demo("[tool.selfdebug]\nignore = [\"null-guard\", \"search\"]\n");
    let out = p.run(&["fix", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        statuses(&v),
        [(
            "no_candidate".to_string(),
            "no rule matches AttributeError: 'NoneType' object has no attribute 'split' \
             (the configuration's select/ignore leaves rules out)"
                .to_string()
        )]
    );
    // Without the null guard, the search finds a guard of its own (unsafe, and said so).
    let p = demo("[tool.selfdebug]\nignore = [\"null-guard\"]\n");
    let out = p.run(&["fix", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(rules_of(&v), ["search-guard"]);
    assert_eq!(v["patches"][0]["source"], "search");
    assert_eq!(v["patches"][0]["applicability"], "unsafe");
    let p = demo("[tool.selfdebug]\nselect = [\"null-guard-attribute\", \"zero-div-guard\"]\n");
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(rules_of(&json(&out)), ["null-guard-attribute"]);
    assert_eq!(p.read("words.py"), DEMO_FIXED);
}

#[test]
fn an_excluded_file_is_never_written_nor_run_with_a_candidate() {
    let p = demo("[tool.selfdebug]\nextend-exclude = [\"words.py\"]\n");
    let before = p.snapshot();
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        statuses(&v),
        [(
            "no_candidate".to_string(),
            "words.py is excluded by extend-exclude ('words.py'): never patched".to_string()
        )]
    );
    // The baseline ran; no probe and no candidate did.
    assert_eq!(v["pytest_runs"], 1);
    assert_eq!(v["attempt_records"], serde_json::json!([]));
    assert_same(&before, &p.snapshot());
    // Proposing from a log (nothing run) leaves it out too.
    let log = std::process::Command::new(support::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(&p.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let log_path = p.cache.join("pytest.log");
    std::fs::write(&log_path, &log.stdout).unwrap();
    let out = p.run(&[
        "fix",
        "--json",
        "--no-validate",
        support::path_str(&log_path),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        statuses(&v),
        [(
            "no_candidate".to_string(),
            "words.py is excluded by extend-exclude ('words.py'): never patched".to_string()
        )]
    );
    assert_eq!(v["patches"], serde_json::json!([]));
    assert_same(&before, &p.snapshot());
}

#[test]
fn safe_only_from_the_file_and_no_safe_only_from_the_command_line() {
    let p = demo("[tool.selfdebug]\nsafe-only = true\n");
    let out = p.run(&["fix", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["failures"][0]["status"], "skipped_unsafe");
    let out = p.run(&["fix", "--dry-run", "--json", "--no-safe-only"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(rules_of(&json(&out)), ["null-guard-attribute"]);
}

#[test]
fn pytest_args_from_the_file_and_the_command_line_replacing_them() {
    let p = project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", DEMO_TEST),
        (
            "tests/test_other.py",
            "def test_other():\n    assert 1 + 1 == 2\n",
        ),
        (
            "pyproject.toml",
            "[tool.selfdebug]\npytest-args = [\"tests/test_other.py\"]\n",
        ),
    ]);
    // Only test_other.py runs: nothing fails, nothing is written.
    let out = p.run(&["fix", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["failures"], serde_json::json!([]));
    assert_eq!(p.read("words.py"), DEMO_MODULE);
    // Arguments after `--` replace the file's.
    let out = p.run(&["fix", "--json", "--", "tests/test_words.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("words.py"), DEMO_FIXED);
}

#[test]
fn a_typo_or_a_wrong_type_is_one_line_with_the_line_number_and_exit_2() {
    let p = demo("[project]\nname = \"demo\"\n\n[tool.selfdebug]\ntimeout = 30\nmax-atempts = 3\n");
    let before = p.snapshot();
    let out = p.cmd_in(".", &["fix"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "selfdebug: error: pyproject.toml:6: unknown key 'max-atempts' in [tool.selfdebug] \
         (did you mean 'max-attempts'?)\n"
    );
    assert_eq!(out.stdout, b"");
    // The same for the other commands that read the settings; --json still gets its object.
    for args in [&["probe"][..], &["config"], &["fix", "--dry-run"]] {
        let out = p.cmd_in(".", args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("pyproject.toml:6: unknown key"),
            "{args:?}"
        );
    }
    let out = p.cmd_in(".", &["fix", "--json"]).output().unwrap();
    let v = json(&out);
    assert_eq!(v["final_status"], "bad_input");
    assert_eq!(
        v["error"],
        "pyproject.toml:6: unknown key 'max-atempts' in [tool.selfdebug] (did you mean 'max-attempts'?)"
    );
    assert_same(&before, &p.snapshot());

    std::fs::write(
        p.root.join("pyproject.toml"),
        "[tool.selfdebug]\nsafe-only = \"yes\"\n",
    )
    .unwrap();
    let out = p.run(&["fix"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "selfdebug: error: pyproject.toml:2: 'safe-only' must be true or false, not a string\n"
    );
    // Named by its full path when the current directory is elsewhere.
    let out = p
        .cmd_in("tests", &["fix", "--root", ".."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "selfdebug: error: {}:2: 'safe-only' must be true or false, not a string\n",
            p.root
                .canonicalize()
                .unwrap()
                .join("pyproject.toml")
                .display()
        )
    );
    // A rule selector that matches no rule is an error too (as Ruff's unknown selectors).
    std::fs::write(
        p.root.join("pyproject.toml"),
        "[tool.selfdebug]\nignore = [\n  \"null-guard\",\n  \"nul-guard-call\",\n]\n",
    )
    .unwrap();
    let out = p.cmd_in(".", &["fix"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "selfdebug: error: pyproject.toml:4: 'nul-guard-call' in ignore matches no rule \
         (did you mean 'null-guard-call'?)\n"
    );
    assert_same(&before, &{
        let mut s = p.snapshot();
        s.insert("pyproject.toml".into(), before["pyproject.toml"].clone());
        s
    });
}

#[test]
fn dot_selfdebug_toml_over_selfdebug_toml_over_pyproject_toml() {
    let p = demo("[tool.selfdebug]\nmax-attempts = 2\n");
    let settings = |p: &Project| {
        let out = p.run(&["config", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        support::assert_valid("config.schema.json", None, &[&out.stdout]);
        let v = support::project::json(&out);
        (
            v["config_file"]
                .as_str()
                .map(|f| f.rsplit('/').next().unwrap().to_string()),
            v["settings"]["max-attempts"]["value"].clone(),
            v["shadowed"].clone(),
        )
    };
    assert_eq!(
        settings(&p),
        (
            Some("pyproject.toml".into()),
            2.into(),
            serde_json::json!([])
        )
    );
    std::fs::write(p.root.join("selfdebug.toml"), "max-attempts = 3\n").unwrap();
    assert_eq!(
        settings(&p),
        (
            Some("selfdebug.toml".into()),
            3.into(),
            serde_json::json!(["pyproject.toml"])
        )
    );
    std::fs::write(p.root.join(".selfdebug.toml"), "max-attempts = 5\n").unwrap();
    assert_eq!(
        settings(&p),
        (
            Some(".selfdebug.toml".into()),
            5.into(),
            serde_json::json!(["selfdebug.toml", "pyproject.toml"])
        )
    );
}

#[test]
fn config_prints_every_setting_with_its_source() {
    let p = demo(
        "[project]\nname = \"demo\"\n\n[tool.selfdebug]\nmax-attempts = 6\nbudget = { logic = 5 }\n\
         pytest-args = [\"-x\", \"-q\"]\nselect = [\"null-guard\", \"name\"]\nignore = [\"null-guard-call\"]\n\
         extend-exclude = [\"vendor\", \"src/gen/*.py\"]\n\n\
         [tool.selfdebug.llm]\nmodel = \"local-model\"\nmax-calls = 3\n",
    );
    let out = p.cmd_in(".", &["config"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let root = p.root.canonicalize().unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&root.display().to_string(), "[ROOT]");
    insta::assert_snapshot!("config_human", text);
    // A relative path in the file is the root's (line 11 is right after extend-exclude).
    let py = p.read("pyproject.toml").replace(
        "\n\n[tool.selfdebug.llm]",
        "\naudit-log = \"audit.jsonl\"\n\n[tool.selfdebug.llm]",
    );
    std::fs::write(p.root.join("pyproject.toml"), py).unwrap();
    // With flags: `fix --show-settings` names the flag that set a value, and runs nothing.
    let out = p
        .cmd_in(
            ".",
            &[
                "fix",
                "--show-settings",
                "--json",
                "--max-attempts",
                "2",
                "--safe-only",
                "--budget",
                "data=1",
                "--backup-dir",
                "bak",
                "--",
                "-k",
                "none",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    support::assert_valid("config.schema.json", None, &[&out.stdout]);
    let v = support::project::json(&out);
    let s = &v["settings"];
    assert_eq!(
        s["max-attempts"],
        serde_json::json!({"value": 2, "source": "flag", "flag": "--max-attempts"})
    );
    assert_eq!(
        s["safe-only"],
        serde_json::json!({"value": true, "source": "flag", "flag": "--safe-only"})
    );
    assert_eq!(
        s["budget.data"],
        serde_json::json!({"value": 1, "source": "flag", "flag": "--budget"})
    );
    assert_eq!(
        s["budget.logic"],
        serde_json::json!({"value": 5, "source": "file", "line": 6})
    );
    assert_eq!(
        s["pytest-args"],
        serde_json::json!({"value": ["-k", "none"], "source": "flag", "flag": "-- PYTEST_ARGS"})
    );
    // The file's relative path is the root's; the flag's is the user's, as given.
    assert_eq!(
        s["audit-log"],
        serde_json::json!({"value": root.join("audit.jsonl").display().to_string(), "source": "file", "line": 11})
    );
    assert_eq!(
        s["backup-dir"],
        serde_json::json!({"value": "bak", "source": "flag", "flag": "--backup-dir"})
    );
    assert_eq!(
        s["timeout"],
        serde_json::json!({"value": null, "source": "default"})
    );
    // What select = ["null-guard", "name"], ignore = ["null-guard-call"] leaves out: a prefix
    // selects whole id segments, so `name-*` and `null-guard-*` stay on but `null-guard-call`.
    let selected = |id: &str| {
        ["name", "null-guard"]
            .iter()
            .any(|p| id == *p || id.starts_with(&format!("{p}-")))
            && id != "null-guard-call"
    };
    let all: Vec<String> = std::fs::read_dir(support::repo().join("rules"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    // The search's families are selected like rules: `search-FAMILY`.
    let priors: toml::Table =
        std::fs::read_to_string(support::repo().join("rules/search/priors.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let search = priors["families"]
        .as_table()
        .unwrap()
        .keys()
        .map(|f| format!("search-{f}"));
    let mut off: Vec<String> = all
        .into_iter()
        .chain(search)
        .filter(|id| !selected(id))
        .collect();
    off.sort();
    assert!(off.contains(&"null-guard-call".to_string()));
    assert_eq!(v["rules_off"], serde_json::json!(off));
    assert_eq!(p.read("words.py"), DEMO_MODULE);
}
