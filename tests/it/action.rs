//! The GitHub Action (`action.yml`) run here: its steps, read from action.yml as written, run
//! with bash one after the other as a runner runs a composite action, with a simulated
//! `GITHUB_*` environment (a file per step for `GITHUB_OUTPUT`, one `GITHUB_STEP_SUMMARY`,
//! `GITHUB_WORKSPACE` = a fixture project in a git repository) and the built binary in place of
//! the release wheel (`SELFDEBUG_ACTION_BIN`), or a release simulated in a directory
//! (`SELFDEBUG_ACTION_RELEASE_URL`: wheels and their SHA256SUMS). `uses:` steps are recorded
//! with their inputs.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::project::{assert_same, fixture_project, project, Project, DEMO_MODULE};

/// What `--output-format github` prints for the demo fixture (stdout of the run step), the
/// patch `fixed` or, in a dry run (check mode), `would fix`. The one place these tests spell an
/// annotation.
fn demo_annotations(verb: &str) -> String {
    format!("::warning file=utils/demo.py,line=6,endLine=6,col=13,endColumn=16,title=selfdebug%3A {verb} (unsafe%2C null-guard-attribute)::use `\"\"` when `text` is None%0Areview: invents a default for None: check that None is legitimate here%0A%0A--- a/utils/demo.py%0A+++ b/utils/demo.py%0A@@ -3,7 +3,7 @@%0A %0A def to_upper(text):%0A     \"\"\"Return ``text`` upper-cased, with runs of whitespace collapsed.\"\"\"%0A-    words = text.split()%0A+    words = (text or \"\").split()%0A     return \" \".join(word.upper() for word in words)%0A %0A \n")
}

const DEMO_DIFF: &str = "--- a/utils/demo.py
+++ b/utils/demo.py
@@ -3,7 +3,7 @@
 
 def to_upper(text):
     \"\"\"Return ``text`` upper-cased, with runs of whitespace collapsed.\"\"\"
-    words = text.split()
+    words = (text or \"\").split()
     return \" \".join(word.upper() for word in words)
 
 
";

#[derive(Debug, Default)]
struct Step {
    id: String,
    cond: Option<String>,
    run: Option<String>,
    uses: Option<String>,
    env: Vec<(String, String)>,
    with: Vec<(String, String)>,
}

fn field(line: &str) -> (String, String) {
    let (k, v) = line
        .trim()
        .trim_start_matches("- ")
        .split_once(':')
        .unwrap();
    (k.trim().to_string(), v.trim().to_string())
}

/// action.yml's inputs (name → default) and `runs.steps`, read line by line: the file keeps
/// to one shape (two-space indents, one-line values), which this asserts as it goes.
fn action() -> (BTreeMap<String, String>, Vec<Step>) {
    let text = std::fs::read_to_string(support::repo().join("action.yml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut defaults = BTreeMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut section = "";
    let mut input = String::new();
    let mut sub = "";
    for line in lines {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 {
            section = line.trim_end_matches(':');
            continue;
        }
        match section {
            "inputs" if indent == 2 => input = line.trim().trim_end_matches(':').to_string(),
            "inputs" if line.trim().starts_with("default:") => {
                let v = field(line).1.trim_matches('"').to_string();
                defaults.insert(input.clone(), v);
            }
            "runs" if line.starts_with("    - ") => {
                steps.push(Step::default());
                let (k, v) = field(line);
                assert_eq!(k, "name", "{line}");
                let _ = v;
            }
            "runs" if indent == 6 => {
                let step = steps.last_mut().unwrap();
                let (k, v) = field(line);
                sub = "";
                match k.as_str() {
                    "id" => step.id = v,
                    "if" => step.cond = Some(v),
                    "run" => step.run = Some(v),
                    "uses" => step.uses = Some(v),
                    "env" => sub = "env",
                    "with" => sub = "with",
                    "shell" => assert_eq!(v, "bash"),
                    other => panic!("action.yml: step key {other} is not simulated"),
                }
            }
            "runs" if indent == 8 => {
                let step = steps.last_mut().unwrap();
                let kv = field(line);
                match sub {
                    "env" => step.env.push(kv),
                    "with" => step.with.push(kv),
                    _ => panic!("action.yml: unexpected {line}"),
                }
            }
            _ => {}
        }
    }
    (defaults, steps)
}

struct Ran {
    /// Each step's outputs, by step id.
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    /// (step id or uses, its stdout, its exit code) of the `run:` steps.
    runs: Vec<(String, String, i32)>,
    /// `uses:` steps that ran: (action, with).
    uses: Vec<(String, BTreeMap<String, String>)>,
    summary: String,
    _temp: tempfile::TempDir,
}

/// `${{ inputs.X }}`, `${{ steps.ID.outputs.X }}`, `${{ github.job }}`,
/// `${{ strategy.job-index }}`, `${{ runner.os }}` ... with their values; `A || B` is the first
/// that is not empty.
fn expand(
    s: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let re = regex::Regex::new(r"\$\{\{\s*([\w.| -]+?)\s*\}\}").unwrap();
    re.replace_all(s, |c: &regex::Captures| {
        c[1].split("||")
            .map(|e| value(e.trim(), inputs, outputs))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    })
    .into_owned()
}

/// One expression's value.
fn value(
    expr: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let path: Vec<&str> = expr.split('.').collect();
    match path.as_slice() {
        ["inputs", name] => inputs[*name].clone(),
        ["steps", id, "outputs", name] => outputs
            .get(*id)
            .and_then(|o| o.get(*name))
            .cloned()
            .unwrap_or_default(),
        ["github", "job"] => "selfdebug".into(),
        // Not set for a local action; the release step then reads its path.
        ["github", "action_repository"] => String::new(),
        ["strategy", "job-index"] => "0".into(),
        ["runner", "os"] => "Linux".into(),
        ["runner", "arch"] => "X64".into(),
        _ => panic!("action.yml: expression {expr} is not simulated"),
    }
}

/// An `if:` as the runner evaluates it here: `always() && X`, `X == ''`, `X != ''`; a step
/// without `always()` runs only when no step before it failed.
fn condition(
    cond: Option<&str>,
    failed: bool,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> bool {
    let Some(cond) = cond else {
        return !failed;
    };
    let (always, test) = match cond.strip_prefix("always() && ") {
        Some(rest) => (true, rest),
        None => (false, cond),
    };
    let (expr, empty) = if let Some(e) = test.strip_suffix(" == ''") {
        (e, true)
    } else if let Some(e) = test.strip_suffix(" != ''") {
        (e, false)
    } else {
        panic!("action.yml: condition {cond} is not simulated")
    };
    (always || !failed) && value(expr, inputs, outputs).is_empty() == empty
}

/// How the simulated runner gets selfdebug.
#[derive(Clone, Copy)]
enum Install<'a> {
    /// `SELFDEBUG_ACTION_BIN` (the built binary) for every step: nothing is installed.
    Built,
    /// The release in this directory (`SELFDEBUG_ACTION_RELEASE_URL`).
    Release(&'a Path),
    /// No release there, and the build step uses the built binary (no cargo build here).
    BuildStep(&'a Path),
}

/// `name=value` lines of a GITHUB_OUTPUT file (the action writes no multi-line values here).
fn read_outputs(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("{l}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Runs the action's steps in `p` with these inputs (the rest at their defaults), stopping at
/// the first failed step unless a later one's `if:` says `always()`, as the runner does.
fn run_action(p: &Project, given: &[(&str, &str)]) -> Ran {
    run_action_with(p, given, Install::Built)
}

fn run_action_with(p: &Project, given: &[(&str, &str)], install: Install) -> Ran {
    let (mut inputs, steps) = action();
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "no input {k}");
        inputs.insert(k.to_string(), v.to_string());
    }
    let temp = tempfile::tempdir().unwrap();
    let summary = temp.path().join("step_summary.md");
    std::fs::write(&summary, "").unwrap();
    let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut runs = Vec::new();
    let mut uses = Vec::new();
    let mut failed = false;
    for (n, step) in steps.iter().enumerate() {
        if !condition(step.cond.as_deref(), failed, &inputs, &outputs) {
            continue;
        }
        if let Some(action) = &step.uses {
            let with = step
                .with
                .iter()
                .map(|(k, v)| (k.clone(), expand(v, &inputs, &outputs)))
                .collect();
            uses.push((action.clone(), with));
            continue;
        }
        let out_file = temp.path().join(format!("output-{n}"));
        std::fs::write(&out_file, "").unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-c", step.run.as_deref().unwrap()])
            .current_dir(&p.root)
            // A runner sets these; pytest reads `CI` (it prints whole assertion diffs there),
            // so the simulated steps see what they would see on GitHub wherever this runs.
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", support::repo())
            .env("GITHUB_WORKSPACE", &p.root)
            .env("GITHUB_OUTPUT", &out_file)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", temp.path())
            .env_remove("SELFDEBUG_ACTION_BIN")
            .env("XDG_CACHE_HOME", &p.cache)
            .env("TMPDIR", p.cache.join("tmp"))
            .env_remove("VIRTUAL_ENV");
        match install {
            Install::Built => {
                cmd.env("SELFDEBUG_ACTION_BIN", env!("CARGO_BIN_EXE_selfdebug"));
            }
            Install::Release(dir) => {
                cmd.env("SELFDEBUG_ACTION_RELEASE_URL", dir);
            }
            Install::BuildStep(dir) => {
                cmd.env("SELFDEBUG_ACTION_RELEASE_URL", dir);
                if step.id == "build" {
                    cmd.env("SELFDEBUG_ACTION_BIN", env!("CARGO_BIN_EXE_selfdebug"));
                }
            }
        }
        for (k, v) in &step.env {
            cmd.env(k, expand(v, &inputs, &outputs));
        }
        let out = cmd.output().unwrap();
        let code = out.status.code().unwrap();
        failed |= code != 0;
        runs.push((
            step.id.clone(),
            String::from_utf8(out.stdout).unwrap(),
            code,
        ));
        outputs.insert(step.id.clone(), read_outputs(&out_file));
        let _ = out.stderr;
    }
    Ran {
        outputs,
        runs,
        uses,
        summary: std::fs::read_to_string(&summary).unwrap(),
        _temp: temp,
    }
}

fn demo_repo() -> Project {
    let p = fixture_project("demo");
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "demo"]);
    p
}

/// The summary of a run with the demo's one proven patch; `kept` says where it went.
fn demo_summary(mode: &str, kept: &str, code: i32) -> String {
    format!(
        "## selfdebug ({mode}): pass\n\n\
         1 proven patch, {kept}; exit code {code}.\n\n\
         ### `utils/demo.py`: null-guard-attribute (unsafe)\n\n\
         - use `\"\"` when `text` is None\n\
         - **review:** invents a default for None: check that None is legitimate here\n\n\
         ```diff\n{}\n```\n",
        DEMO_DIFF.trim_end_matches('\n')
    )
}

/// (step id, exit code) of each `run:` step that ran.
fn step_codes(ran: &Ran) -> Vec<(&str, i32)> {
    ran.runs
        .iter()
        .map(|(id, _, c)| (id.as_str(), *c))
        .collect()
}

fn action_outputs(ran: &Ran) -> (String, String) {
    let run = &ran.outputs["run"];
    (run["status"].clone(), run["patched"].clone())
}

#[test]
fn check_mode_fails_with_the_proven_patch_and_changes_nothing() {
    let p = demo_repo();
    let before = p.snapshot();
    let ran = run_action(&p, &[("mode", "check")]);

    let ids = step_codes(&ran);
    assert_eq!(ids, [("release", 0), ("run", 1)]);
    assert_eq!(
        ran.outputs["release"]["bin"],
        env!("CARGO_BIN_EXE_selfdebug")
    );
    assert_eq!(ran.runs[1].1, demo_annotations("would fix"));
    assert_eq!(action_outputs(&ran), ("pass".into(), "false".into()));
    assert_eq!(
        ran.summary,
        demo_summary("check", "not applied (check mode)", 1)
    );
    // The artifact: the patch, which `git apply` takes.
    let patch = PathBuf::from(&ran.outputs["run"]["patch-file"]);
    assert_eq!(std::fs::read_to_string(&patch).unwrap(), DEMO_DIFF);
    let with = BTreeMap::from([
        (
            "name".to_string(),
            "selfdebug-patch-selfdebug-0".to_string(),
        ),
        ("path".to_string(), patch.to_string_lossy().into_owned()),
        ("if-no-files-found".to_string(), "ignore".to_string()),
    ]);
    assert_eq!(ran.uses, [("actions/upload-artifact@v4".to_string(), with)]);
    assert_same(&before, &p.snapshot());
    assert_eq!(p.git(&["status", "--porcelain"]), "");
}

#[test]
fn fix_mode_keeps_the_patch_and_says_so() {
    let p = demo_repo();
    let ran = run_action(&p, &[]);
    let ids = step_codes(&ran);
    assert_eq!(ids, [("release", 0), ("run", 0)]);
    assert_eq!(ran.runs[1].1, demo_annotations("fixed"));
    assert_eq!(action_outputs(&ran), ("pass".into(), "true".into()));
    assert_eq!(
        ran.summary,
        demo_summary("fix", "applied to the checkout", 0)
    );
    assert_eq!(p.git(&["status", "--porcelain"]), " M utils/demo.py\n");
    let diff = p.git(&["diff", "--no-prefix", "-U3"]);
    assert!(
        diff.contains("+    words = (text or \"\").split()\n"),
        "{diff}"
    );
    assert_eq!(ran.uses.len(), 1);
}

/// The outputs of a run the action or selfdebug refused: `bad_input`, nothing patched, no
/// artifact.
fn refused(ran: &Ran) -> BTreeMap<String, String> {
    ran.outputs["run"].clone()
}

fn bad_input_outputs() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("status".to_string(), "bad_input".to_string()),
        ("patched".to_string(), "false".to_string()),
        ("patch-file".to_string(), String::new()),
    ])
}

#[test]
fn a_bad_mode_or_flag_is_one_error_and_touches_nothing() {
    let p = demo_repo();
    let before = p.snapshot();

    // The action refuses the mode before selfdebug runs, with its outputs set.
    let ran = run_action(&p, &[("mode", "repair")]);
    assert_eq!(ran.runs[1].2, 2);
    assert_eq!(
        ran.runs[1].1,
        "::error title=selfdebug action::input mode: expected fix or check, got 'repair'\n"
    );
    assert_eq!(refused(&ran), bad_input_outputs());
    assert_eq!(
        ran.summary,
        "## selfdebug (repair): bad_input\n\n\
         **Error:** input mode: expected fix or check, got 'repair'\n"
    );
    assert!(ran.uses.is_empty());

    // Arguments a shell could not split: refused the same way.
    let ran = run_action(&p, &[("args", "-- -k 'unclosed")]);
    assert_eq!(ran.runs[1].2, 2);
    assert_eq!(
        ran.runs[1].1,
        "::error title=selfdebug action::input args: No closing quotation\n"
    );
    assert_eq!(refused(&ran), bad_input_outputs());

    // clap refuses the flag before selfdebug starts; its report (--json-file, written on a
    // usage error too) says bad_input and why.
    let ran = run_action(&p, &[("args", "--no-such-flag")]);
    assert_eq!(ran.runs[1].2, 2);
    assert_eq!(ran.runs[1].1, "");
    assert_eq!(refused(&ran), bad_input_outputs());
    assert_eq!(
        ran.summary,
        "## selfdebug (fix): bad_input\n\nNo patch; exit code 2.\n\n\
         **Error:** unexpected argument '--no-such-flag' found\n"
    );
    assert!(ran.uses.is_empty());

    // selfdebug refuses the interpreter after it started: its report (--json-file) says why.
    let ran = run_action(&p, &[("python", "/nonexistent/python")]);
    assert_eq!(ran.runs[1].2, 6);
    assert_eq!(
        ran.runs[1].1,
        "::error title=selfdebug%3A error::--python /nonexistent/python: no such interpreter\n"
    );
    assert_eq!(action_outputs(&ran), ("error".into(), "false".into()));
    assert_eq!(
        ran.summary,
        "## selfdebug (fix): error\n\nNo patch; exit code 6.\n\n\
         **Error:** --python /nonexistent/python: no such interpreter\n"
    );
    assert_same(&before, &p.snapshot());
}

/// A project in a subdirectory of the repository (`args: --root pkg`), with one fixable
/// failure and one whose assertion message spans lines.
#[test]
fn a_project_in_a_subdirectory_gets_a_patch_git_applies_at_the_repository_root() {
    let p = project(&[
        ("pkg/conftest.py", ""),
        ("pkg/words.py", DEMO_MODULE),
        (
            "pkg/tests/test_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\n\
             def test_counts():\n    assert {\"a\": 1, \"b\": 2} == {\"a\": 1, \"b\": 3}\n",
        ),
    ]);
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "pkg"]);
    let before = p.snapshot();
    let ran = run_action(&p, &[("mode", "check"), ("args", "--root pkg")]);
    assert_eq!(ran.runs[1].2, 3);
    assert_eq!(action_outputs(&ran), ("partial".into(), "false".into()));
    let diff = "--- a/pkg/words.py\n+++ b/pkg/words.py\n@@ -1,3 +1,3 @@\n \
                def to_upper(text):\n-    words = text.split()\n+    words = (text or \"\").split()\n\
                \x20    return \" \".join(w.upper() for w in words)\n";
    let patch = PathBuf::from(&ran.outputs["run"]["patch-file"]);
    assert_eq!(std::fs::read_to_string(&patch).unwrap(), diff);
    // The documented `git apply` at the repository root takes the artifact.
    p.git(&["apply", "--check", patch.to_str().unwrap()]);
    // The annotations name the files from the root too, and say the patch would fix.
    let heads: Vec<&str> = ran.runs[1]
        .1
        .lines()
        .map(|l| &l[..2 + l[2..].find("::").unwrap()])
        .collect();
    assert_eq!(
        heads,
        [
            "::error file=pkg/tests/test_words.py,line=9,title=selfdebug%3A no candidate",
            "::warning file=pkg/words.py,line=2,endLine=2,col=13,endColumn=16,\
             title=selfdebug%3A would fix (unsafe%2C null-guard-attribute)",
        ]
    );
    // The multi-line assertion message stays inside its list item, in a fence.
    assert_eq!(
        ran.summary,
        format!(
            "## selfdebug (check): partial\n\n\
             1 proven patch, not applied (check mode); exit code 3.\n\n\
             ### `pkg/words.py`: null-guard-attribute (unsafe)\n\n\
             - use `\"\"` when `text` is None\n\
             - **review:** invents a default for None: check that None is legitimate here\n\n\
             ```diff\n{}\n```\n\n\
             ### Not fixed\n\n\
             - `tests/test_words.py::test_counts`: AssertionError at `pkg/tests/test_words.py:9` \
             (no_candidate; wrong output: the test's own check failed in tests/test_words.py; \
             the failing test ran no line of the project's own code)\n\n\
             \x20 ```\n\
             \x20 assert {{'a': 1, 'b': 2}} == {{'a': 1, 'b': 3}}\n\
             \x20   \n\
             \x20   Omitting 1 identical items, use -vv to show\n\
             \x20   Differing items:\n\
             \x20   {{'b': 2}} != {{'b': 3}}\n\
             \x20   \n\
             \x20   Full diff: (-: missing in left side, +: extra in left side)\n\
             \x20     {{\n\
             \x20         'a': 1,\n\
             \x20   -     'b': 3,\n\
             \x20   ?          ^\n\
             \x20   +     'b': 2,\n\
             \x20   ?          ^\n\
             \x20     }}\n\
             \x20 ```\n",
            diff.trim_end_matches('\n')
        )
    );
    assert_same(&before, &p.snapshot());
}

#[test]
fn json_file_holds_the_object_json_prints() {
    let p = demo_repo();
    let file = p.cache.join("report.json");
    let out = p
        .cmd(&[
            "fix",
            "--dry-run",
            "--output-format",
            "github",
            "--json-file",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        demo_annotations("would fix")
    );
    let from_file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let printed = support::project::json(&p.run(&["fix", "--dry-run", "--json"]));
    // The same object but for what differs between two runs.
    let strip = |mut v: serde_json::Value| {
        for key in [
            "run_id",
            "duration_ms",
            "pytest_ms",
            "phases_ms",
            "attempt_records",
        ] {
            v.as_object_mut().unwrap().remove(key);
        }
        for f in v["failures"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("probe");
        }
        v
    };
    assert_eq!(strip(from_file), strip(printed));
}

/// The version the action installs: Cargo.toml's of its checkout.
fn action_version() -> String {
    let cargo = std::fs::read_to_string(support::repo().join("Cargo.toml")).unwrap();
    cargo
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string()
}

/// A release as the release workflow publishes it, in a directory: this platform's wheel (its
/// `selfdebug` script runs the built binary) and SHA256SUMS; `sums` edits the sums file.
fn release_dir(sums: impl Fn(String) -> String) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let tag = support::wheel::platform_tag();
    let version = action_version();
    let script = format!(
        "#!/bin/sh\nexec '{}' \"$@\"\n",
        env!("CARGO_BIN_EXE_selfdebug")
    );
    let wheel = support::wheel::build(
        dir.path(),
        "selfdebug",
        &version,
        &tag,
        &[(
            &format!("selfdebug-{version}.data/scripts/selfdebug"),
            &script,
        )],
    );
    // Another platform's wheel, listed but never fetched.
    let other = "selfdebug-0-py3-none-win_amd64.whl";
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let sum = sha256(&std::fs::read(&wheel).unwrap());
    let text = format!("{sum}  {name}\n{}  {other}\n", "0".repeat(64));
    std::fs::write(dir.path().join("SHA256SUMS"), sums(text)).unwrap();
    (dir, name)
}

fn sha256(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

#[test]
fn the_release_wheel_is_installed_when_its_sum_matches() {
    let p = demo_repo();
    let (release, _) = release_dir(|s| s);
    let ran = run_action_with(&p, &[("mode", "check")], Install::Release(release.path()));
    let ids = step_codes(&ran);
    // Installed from the release: no cache, no build.
    assert_eq!(ids, [("release", 0), ("run", 1)]);
    let bin = &ran.outputs["release"]["bin"];
    assert!(
        bin.ends_with("/selfdebug-venv/bin/selfdebug"),
        "{:?}",
        ran.outputs
    );
    assert_eq!(ran.outputs["release"]["version"], action_version());
    // The installed script ran the check.
    assert_eq!(ran.runs[1].1, demo_annotations("would fix"));
    assert_eq!(ran.uses.len(), 1);
    assert_eq!(ran.uses[0].0, "actions/upload-artifact@v4");
}

#[test]
fn a_release_wheel_whose_sum_differs_is_refused() {
    let p = demo_repo();
    let (release, name) = release_dir(|s| {
        let bad = "f".repeat(64);
        format!("{bad}{}", &s[64..])
    });
    let real = sha256(&std::fs::read(release.path().join(&name)).unwrap());
    let ran = run_action_with(&p, &[], Install::Release(release.path()));
    assert_eq!(ran.runs.len(), 1);
    assert_eq!(ran.runs[0].2, 1);
    assert_eq!(
        ran.runs[0].1,
        format!(
            "::error title=selfdebug action::{name} of release v{}: SHA-256 {real}, SHA256SUMS \
             says {}; not installed\n",
            action_version(),
            "f".repeat(64)
        )
    );
    // Nothing installed, nothing built, selfdebug never ran.
    assert_eq!(ran.outputs["release"].get("bin"), None);
    assert!(ran.uses.is_empty());
    assert_eq!(p.git(&["status", "--porcelain"]), "");
}

#[test]
fn without_a_release_the_action_builds_from_source_with_a_cached_target() {
    let p = demo_repo();
    let empty = tempfile::tempdir().unwrap();
    let ran = run_action_with(&p, &[("mode", "check")], Install::BuildStep(empty.path()));
    let ids = step_codes(&ran);
    assert_eq!(ids, [("release", 0), ("build", 0), ("run", 1)]);
    assert_eq!(ran.outputs["release"]["bin"], "");
    assert_eq!(ran.outputs["build"]["bin"], env!("CARGO_BIN_EXE_selfdebug"));
    let version = action_version();
    let cache = BTreeMap::from([
        (
            "path".to_string(),
            "~/.cache/selfdebug-action/target".to_string(),
        ),
        (
            "key".to_string(),
            format!("selfdebug-build-Linux-X64-{version}"),
        ),
        (
            "restore-keys".to_string(),
            "selfdebug-build-Linux-X64-".to_string(),
        ),
    ]);
    assert_eq!(ran.uses[0], ("actions/cache@v4".to_string(), cache));
    assert_eq!(ran.runs[2].1, demo_annotations("would fix"));
}
