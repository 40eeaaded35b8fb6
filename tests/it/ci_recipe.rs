//! docs/ci.md's recipes are real: their shell steps, extracted from the doc as written, run
//! with bash (as the runners do) against a failing project in a git repository, with the
//! built `selfdebug` on PATH in place of `pip install selfdebug`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::project::{project, Project};

const FILES: &[(&str, &str)] = &[
    ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ("app/__init__.py", ""),
    (
        "app/core.py",
        "def dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
         def settings():\n    with open(\"settings.ini\") as f:\n        return f.read()\n",
    ),
    (
        "tests/test_core.py",
        "from app import core\n\n\n\
         def test_dump():\n    assert core.dump({\"b\": 1}) == '{\"b\": 1}'\n\n\n\
         def test_settings():\n    assert core.settings() == \"\"\n",
    ),
];

const CORE_FIXED: &str =
    "import json\n\n\ndef dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
     def settings():\n    with open(\"settings.ini\") as f:\n        return f.read()\n";

/// `git diff` of the fix, without its `index` line (blob ids).
const GIT_DIFF: &str = "diff --git a/app/core.py b/app/core.py
--- a/app/core.py
+++ b/app/core.py
@@ -1,3 +1,6 @@
+import json
+
+
 def dump(d):
     return json.dumps(d, sort_keys=True)
 
";

fn doc() -> String {
    std::fs::read_to_string(support::repo().join("docs/ci.md")).unwrap()
}

/// The fenced ```yaml blocks of a Markdown text, in order.
fn yaml_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in md.lines() {
        match &mut cur {
            None if line.trim_end() == "```yaml" => cur = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                out.push(std::mem::take(block));
                cur = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The literal block scalar (`KEY: |` or `- |`) that starts after line `at`: the lines
/// indented deeper than it, dedented.
fn block_scalar(lines: &[&str], at: usize) -> String {
    let base = indent(lines[at]);
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > base)
        .copied()
        .collect();
    let by = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in body {
        out.push_str(l.get(by..).unwrap_or(""));
        out.push('\n');
    }
    out.trim_end().to_string() + "\n"
}

/// A workflow's steps as (name, run script); `uses:` steps have no script.
fn steps(yaml: &str) -> Vec<(String, Option<String>)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        // A step is a list item that starts with its name (`with:` may hold `name:` too).
        if let Some(name) = t.strip_prefix("- name: ") {
            out.push((name.trim_matches('"').to_string(), None));
        } else if let Some(cmd) = t.strip_prefix("run: ") {
            let script = if cmd.trim() == "|" {
                block_scalar(&lines, i)
            } else {
                format!("{cmd}\n")
            };
            if let Some(last) = out.last_mut() {
                last.1 = Some(script);
            }
        }
    }
    out
}

/// `KEY: "value"` lines of the top-level `env:` block.
fn workflow_env(yaml: &str) -> Vec<(String, String)> {
    yaml.lines()
        .skip_while(|l| *l != "env:")
        .skip(1)
        .take_while(|l| l.trim().is_empty() || l.starts_with(' '))
        .filter_map(|l| l.trim().split_once(": "))
        .filter(|(k, _)| !k.starts_with('#'))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

/// A committed failing project, a runner temp dir, and a PATH with `selfdebug` (the built
/// binary, standing in for `pip install selfdebug`) and `python` (the one with pytest).
struct Runner {
    p: Project,
    temp: PathBuf,
    path: String,
}

fn runner() -> Runner {
    let p = project(FILES);
    p.git(&["init", "-q", "."]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    let temp = p.cache.join("runner");
    let bin = temp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shim = bin.join("python");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec {} \"$@\"\n", support::python()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_selfdebug"), bin.join("selfdebug")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Runner { p, temp, path }
}

impl Runner {
    /// `script` as a runner runs a step: `bash --noprofile --norc -eo pipefail`, in the
    /// checkout, with `env` set.
    fn step(&self, script: &str, env: &[(String, String)]) -> Output {
        let file = self.temp.join("step.sh");
        std::fs::write(&file, script).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(&self.p.root)
            .env("PATH", &self.path)
            .env("XDG_CACHE_HOME", &self.p.cache)
            .env("TMPDIR", self.p.cache.join("tmp"))
            .env_remove("VIRTUAL_ENV")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        for var in [
            "NO_COLOR",
            "CLICOLOR_FORCE",
            "FORCE_COLOR",
            "GITHUB_WORKSPACE",
            "SELFDEBUG_PUSH_TOKEN",
        ] {
            cmd.env_remove(var);
        }
        cmd.output().unwrap()
    }

    fn read(&self, path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn without_index_lines(diff: &str) -> String {
    diff.lines()
        .filter(|l| !l.starts_with("index "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn github_workflow_steps_fix_annotate_and_leave_only_the_patch() {
    let blocks = yaml_blocks(&doc());
    let yaml = blocks
        .iter()
        .find(|b| b.contains("- name: Auto-fix"))
        .expect("the fix-PR workflow");
    let steps = steps(yaml);
    let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Install",
            "Keep build leftovers out of the pull request",
            "Test",
            "Auto-fix",
            "Upload the patch",
            "Open a pull request"
        ]
    );
    let script = |name: &str| {
        steps
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, s)| s.clone())
            .unwrap()
    };
    // The steps not run here: installing (the built binary is on PATH) and the actions.
    assert!(script("Install")
        .contains("pip install -e . pytest \"git+https://github.com/OWNER/selfdebug@v0.1.0\""));
    assert!(yaml.contains("token: ${{ secrets.SELFDEBUG_PR_TOKEN }}"));
    for pin in [
        "uses: actions/checkout@v6",
        "uses: actions/setup-python@v6",
        "uses: actions/upload-artifact@v7",
        "uses: peter-evans/create-pull-request@v8",
        "path: ${{ runner.temp }}/selfdebug.patch",
    ] {
        assert!(yaml.contains(pin), "{pin}");
    }

    let r = runner();
    let output = r.temp.join("github_output");
    std::fs::write(&output, "").unwrap();
    let mut env = workflow_env(yaml);
    assert_eq!(env, [("PYTHONDONTWRITEBYTECODE".into(), "1".into())]);
    env.extend([
        ("RUNNER_TEMP".into(), r.temp.display().to_string()),
        ("GITHUB_OUTPUT".into(), output.display().to_string()),
        ("GITHUB_WORKSPACE".into(), r.p.root.display().to_string()),
    ]);

    let keep_out = r.step(
        &script("Keep build leftovers out of the pull request"),
        &env,
    );
    assert_eq!(
        keep_out.status.code(),
        Some(0),
        "{}",
        text(&keep_out.stderr)
    );
    // What `pip install -e .` and a cached pytest run leave in a checkout.
    for leftover in ["app.egg-info/PKG-INFO", ".pytest_cache/v/cache/lastfailed"] {
        let path = r.p.root.join(leftover);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let test = r.step(&script("Test"), &env);
    assert_eq!(test.status.code(), Some(1), "{}", text(&test.stdout));

    let fix = r.step(&script("Auto-fix"), &env);
    assert_eq!(fix.status.code(), Some(0), "{}", text(&fix.stderr));
    assert_eq!(
        text(&fix.stdout),
        "::error file=app/core.py,line=6,title=selfdebug%3A escalated::\
tests/test_core.py::test_settings%0A\
FileNotFoundError: [Errno 2] No such file or directory: 'settings.ini'%0A\
a file the code or test needs is missing ([Errno 2] No such file or directory: \
'settings.ini'): create it, or fix the path the test gives; selfdebug does not patch \
environment problems
::notice file=app/core.py,line=1,endLine=1,title=selfdebug%3A fixed (safe%2C name-import-stdlib)::\
add the missing `import json`%0A%0A--- a/app/core.py%0A+++ b/app/core.py%0A@@ -1,3 +1,6 @@%0A\
+import json%0A+%0A+%0A def dump(d):%0A     return json.dumps(d, sort_keys=True)%0A 
"
    );
    assert_eq!(r.read(&output), "status=3\npatched=true\n");
    let patch = r.read(&r.temp.join("selfdebug.patch"));
    assert_eq!(without_index_lines(&patch), GIT_DIFF);
    assert_eq!(r.p.read("app/core.py"), CORE_FIXED);
    // What create-pull-request would commit: the fixed file, nothing else.
    assert_eq!(
        r.p.git(&["status", "--porcelain", "--untracked-files=all"]),
        " M app/core.py\n"
    );
    // The artifact applies to the commit that was tested.
    r.p.git(&["checkout", "-q", "--", "."]);
    r.p.git(&["apply", r.temp.join("selfdebug.patch").to_str().unwrap()]);
    assert_eq!(r.p.read("app/core.py"), CORE_FIXED);
}

#[test]
fn gitlab_job_script_keeps_the_patch_and_the_report() {
    let blocks = yaml_blocks(&doc());
    let yaml = blocks
        .iter()
        .find(|b| b.contains("script:"))
        .expect("the GitLab job");
    let lines: Vec<&str> = yaml.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == "script:")
        .expect("a script: key");
    assert_eq!(lines[at + 1].trim(), "- |");
    let script = block_scalar(&lines, at + 1);
    assert!(yaml.contains(
        "- python -m pip install -e . pytest \"git+https://github.com/OWNER/selfdebug@v0.1.0\""
    ));
    let keep_out = lines
        .iter()
        .find(|l| l.contains(".git/info/exclude"))
        .unwrap()
        .trim()
        .trim_start_matches("- ");
    assert!(yaml.contains("PYTHONDONTWRITEBYTECODE: \"1\""));

    let r = runner();
    let env = [("PYTHONDONTWRITEBYTECODE".into(), "1".into())];
    let out = r.step(&format!("{keep_out}\n"), &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let leftover = r.p.root.join("app.egg-info/PKG-INFO");
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(leftover, "").unwrap();
    // Without SELFDEBUG_PUSH_TOKEN nothing is pushed; the job fails, as the tests did.
    let job = r.step(&script, &env);
    assert_eq!(job.status.code(), Some(1), "{}", text(&job.stderr));
    assert!(
        text(&job.stdout).ends_with("selfdebug fix: exit 3\n"),
        "{}",
        text(&job.stdout)
    );
    assert_eq!(without_index_lines(&r.p.read("selfdebug.patch")), GIT_DIFF);
    let report: serde_json::Value = serde_json::from_str(&r.p.read("selfdebug.json")).unwrap();
    assert_eq!(report["final_status"], "partial");
    assert_eq!(report["files_patched"], serde_json::json!(["app/core.py"]));
    assert_eq!(r.p.read("app/core.py"), CORE_FIXED);
    // `git commit -a` would take the fixed file only; the artifacts are untracked.
    assert_eq!(
        r.p.git(&["status", "--porcelain", "--untracked-files=all"]),
        " M app/core.py\n?? selfdebug.json\n?? selfdebug.patch\n"
    );
}

#[test]
fn extractor_reads_block_and_plain_steps() {
    let yaml = "jobs:\n  t:\n    steps:\n      - name: A\n        run: echo a\n      \
                - name: B\n        run: |\n          one\n\n            two\n      - uses: x@v1\n";
    assert_eq!(
        steps(yaml),
        [
            ("A".to_string(), Some("echo a\n".to_string())),
            ("B".to_string(), Some("one\n\n  two\n".to_string())),
        ]
    );
}
