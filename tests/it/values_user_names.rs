//! The values an agent and the model see are the user's: pytest's assertion-rewrite
//! temporaries (`@py_assert1`, `@py_format4`, which an earlier passing `assert` leaves in the
//! test's frame) and selfdebug's own names are dropped; every local the user wrote is kept.
//! Real pytest runs: `selfdebug probe --json`, the crash-frame facts of `fix --dry-run --json`
//! (the plugin's), and the model's prompt built from a probe report.

use std::time::Duration;

use selfdebug::llm::prompt::{self, PromptInput, Snapshot};
use selfdebug::probe::{self, ProbeReport, ProbeRequest};
use selfdebug::traceback;

use crate::support;
use support::project::{json, project, Project};

const USER_NAMES: [&str; 3] = ["gross", "rate", "result"];

/// A wrong result asserted in the test after an assert that passed.
fn net_project() -> Project {
    project(&[
        ("conftest.py", ""),
        (
            "prices.py",
            "def net(gross, rate):\n    return gross - rate\n",
        ),
        (
            "test_prices.py",
            "from prices import net\n\n\ndef test_net():\n    gross = 120\n    rate = 0.2\n    \
             result = net(gross, rate)\n    assert result > 0\n    assert result == 100\n",
        ),
    ])
}

fn names(locals: &serde_json::Value) -> Vec<&str> {
    locals
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect()
}

#[test]
fn probe_json_has_the_users_names_only() {
    let p = net_project();
    let out = p.run(&["probe", "--json"]);
    support::assert_exit(&out, 0);
    let v = json(&out);
    assert_eq!(v["source"], "probe");
    assert_eq!(names(&v["locals"]), USER_NAMES);
    // Nowhere but in the injected line (whose inlined source names what it drops).
    let mut values = v.clone();
    values["probe_line"] = serde_json::Value::Null;
    assert!(!values.to_string().contains("@py_"), "{values:#}");
}

#[test]
fn crash_frame_facts_of_fix_have_the_users_names_only() {
    let p = net_project();
    let out = p.run(&["fix", "--dry-run", "--json", "--max-attempts", "1"]);
    let v = json(&out);
    let probe = &v["failures"][0]["probe"];
    assert_eq!(names(&probe["locals"]), USER_NAMES, "{probe:#}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("@py_"));
}

#[test]
fn the_prompt_lists_the_users_values_only() {
    let p = net_project();
    let python = support::python3();
    let run = std::process::Command::new(&python.path)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
        .current_dir(&p.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let parsed = traceback::parse(&run.stdout, &p.root).unwrap();
    let failure = &parsed.failures[0];
    let report: ProbeReport = probe::probe(&ProbeRequest {
        project_dir: &p.root,
        failure,
        interpreter: &python,
        timeout: Duration::from_secs(300),
        test_timeout: None,
        env: Vec::new(),
        pytest_args: Vec::new(),
        test: None,
        backup: true,
    })
    .unwrap();
    assert!(report.fired);
    let messages = prompt::build(&PromptInput {
        root: &p.root,
        failure,
        probe: Some(&report),
        env: &Snapshot {
            python: "3.11.2".into(),
            packages: Vec::new(),
            neighbours: Vec::new(),
        },
        previous: &[],
        allow_tests: false,
        spec: None,
        files: &[],
    });
    let text = &messages[1].content;
    for line in [
        "  gross = 120 (int)",
        "  rate = 0.2 (float)",
        "  result = 119.8 (float)",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(!text.contains("@py_"), "{text}");
    assert!(!text.contains("_selfdebug"), "{text}");
}
