//! `--output-format`, `--color` and progress, on real pytest runs of a small project in a git
//! repository (the project in a subdirectory, so annotation paths carry the prefix).

use crate::support;

use std::process::{Command, Output};

use support::project::{project, Project};

/// A safe fix (a missing stdlib import), an unsafe one (a None guard, in another file) and an
/// environment failure that is escalated; its file name has a `%` to escape.
const FILES: &[(&str, &str)] = &[
    ("py/pytest.ini", "[pytest]\npythonpath = .\n"),
    ("py/app/__init__.py", ""),
    (
        "py/app/core.py",
        "def dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
         def settings():\n    with open(\"100%-settings.ini\") as f:\n        return f.read()\n",
    ),
    (
        "py/app/text.py",
        "def shout(text):\n    return text.upper() + \"!\"\n",
    ),
    (
        "py/tests/test_core.py",
        "from app import core, text\n\n\n\
         def test_dump():\n    assert core.dump({\"b\": 1, \"a\": 2}) == '{\"a\": 2, \"b\": 1}'\n\n\n\
         def test_shout():\n    assert text.shout(None) == \"!\"\n\n\n\
         def test_settings():\n    assert core.settings() == \"\"\n",
    ),
];

const CORE_FIXED: &str =
    "import json\n\n\ndef dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
     def settings():\n    with open(\"100%-settings.ini\") as f:\n        return f.read()\n";
const TEXT_FIXED: &str = "def shout(text):\n    return (text or \"\").upper() + \"!\"\n";

const PATCH: &str = "--- a/app/core.py
+++ b/app/core.py
@@ -1,3 +1,6 @@
+import json
+
+
 def dump(d):
     return json.dumps(d, sort_keys=True)
 
--- a/app/text.py
+++ b/app/text.py
@@ -1,2 +1,2 @@
 def shout(text):
-    return text.upper() + \"!\"
+    return (text or \"\").upper() + \"!\"
";

fn repo() -> Project {
    let p = project(FILES);
    p.git(&["init", "-q", "."]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    p
}

/// `selfdebug ARGS` in the project's directory, with no colour or CI settings inherited.
fn selfdebug(p: &Project, args: &[&str]) -> Command {
    let mut cmd = p.cmd_in("py", args);
    for var in [
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "GITHUB_WORKSPACE",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

/// Runs `cmd` with `input` on its stdin.
fn with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn github_annotations_byte_for_byte() {
    let p = repo();
    let out = run(&mut selfdebug(&p, &["fix", "--output-format", "github"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "::error file=py/app/core.py,line=6,title=selfdebug%3A escalated::\
tests/test_core.py::test_settings%0A\
FileNotFoundError: [Errno 2] No such file or directory: '100%25-settings.ini'%0A\
a file the code or test needs is missing ([Errno 2] No such file or directory: \
'100%25-settings.ini'): create it, or fix the path the test gives; selfdebug does not patch \
environment problems
::notice file=py/app/core.py,line=1,endLine=1,title=selfdebug%3A fixed (safe%2C name-import-stdlib)::\
add the missing `import json`%0A%0A--- a/app/core.py%0A+++ b/app/core.py%0A@@ -1,3 +1,6 @@%0A\
+import json%0A+%0A+%0A def dump(d):%0A     return json.dumps(d, sort_keys=True)%0A 
::warning file=py/app/text.py,line=2,endLine=2,col=12,endColumn=15,title=selfdebug%3A fixed (unsafe%2C null-guard-attribute)::\
use `\"\"` when `text` is None%0A\
review: invents a default for None: check that None is legitimate here%0A%0A\
--- a/app/text.py%0A+++ b/app/text.py%0A@@ -1,2 +1,2 @@%0A def shout(text):%0A\
-    return text.upper() + \"!\"%0A+    return (text or \"\").upper() + \"!\"
"
    );
    // The fixes are kept in the tree; the human log still goes to stderr.
    assert_eq!(p.read("py/app/core.py"), CORE_FIXED);
    assert_eq!(p.read("py/app/text.py"), TEXT_FIXED);
    let err = text(&out.stderr);
    assert!(
        err.contains("selfdebug: partial: 2 patches proven and kept"),
        "{err}"
    );
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
}

#[test]
fn a_run_that_cannot_start_is_one_annotation() {
    let p = repo();
    let out = run(&mut selfdebug(
        &p,
        &["fix", "--output-format", "github", "--budget", "bogus=1"],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        "::error title=selfdebug%3A bad input::--budget bogus=1: unknown category (one of \
         environment, data, logic, syntax, dependency, timeout, unknown)\n"
    );
}

#[test]
fn parse_github_has_one_error_per_failure() {
    let p = repo();
    let log = run(Command::new(support::python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(p.root.join("py"))
        .env("PYTHONDONTWRITEBYTECODE", "1"));
    assert_eq!(log.status.code(), Some(1));
    let mut cmd = selfdebug(&p, &["parse", "-", "--output-format", "github"]);
    let out = with_stdin(&mut cmd, &log.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "::error file=py/app/core.py,line=2,title=pytest%3A failed::tests/test_core.py::test_dump%0A\
NameError: name 'json' is not defined
::error file=py/app/text.py,line=2,title=pytest%3A failed::tests/test_core.py::test_shout%0A\
AttributeError: 'NoneType' object has no attribute 'upper'
::error file=py/app/core.py,line=6,title=pytest%3A failed::tests/test_core.py::test_settings%0A\
FileNotFoundError: [Errno 2] No such file or directory: '100%25-settings.ini'
"
    );
    // `--output-format json` is `--json`; the two together are refused.
    let long = with_stdin(
        &mut selfdebug(&p, &["parse", "-", "--output-format", "json"]),
        &log.stdout,
    );
    let short = with_stdin(&mut selfdebug(&p, &["parse", "-", "--json"]), &log.stdout);
    assert_eq!(long.stdout, short.stdout);
    assert!(long.stdout.starts_with(b"{"));
    let both = run(&mut selfdebug(
        &p,
        &["parse", "-", "--json", "--output-format", "json"],
    ));
    assert_eq!(both.status.code(), Some(2));
    // Commands without a GitHub view refuse it.
    let rules = run(&mut selfdebug(&p, &["rules", "--output-format", "github"]));
    assert_eq!(rules.status.code(), Some(2));
    let rules = run(&mut selfdebug(&p, &["rules", "--output-format", "json"]));
    assert_eq!(rules.status.code(), Some(0));
    assert!(rules.stdout.starts_with(b"{"));
}

#[test]
fn piped_dry_run_is_plain_and_applies() {
    let p = repo();
    let out = run(&mut selfdebug(&p, &["fix", "--dry-run"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    // No colour and no progress in a pipe: the patch is exactly the diff, and applies.
    assert_eq!(text(&out.stdout), PATCH);
    let err = text(&out.stderr);
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
    assert!(
        !err.contains("[1/3]") && !err.contains("candidate 1/"),
        "{err}"
    );
    // From the project's directory, as the README says (the diff's paths are relative to it).
    let patch = p.root.join("fix.patch");
    std::fs::write(&patch, &out.stdout).unwrap();
    p.git(&["-C", "py", "apply", patch.to_str().unwrap()]);
    assert_eq!(p.read("py/app/core.py"), CORE_FIXED);
    assert_eq!(p.read("py/app/text.py"), TEXT_FIXED);
}

#[test]
fn color_always_colours_a_pipe_even_with_no_color() {
    let p = repo();
    let out = run(selfdebug(&p, &["--color", "always", "fix", "--dry-run"]).env("NO_COLOR", "1"));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "\x1b[1m--- a/app/core.py\x1b[0m
\x1b[1m+++ b/app/core.py\x1b[0m
\x1b[36m@@ -1,3 +1,6 @@\x1b[0m
\x1b[32m+import json\x1b[0m
\x1b[32m+\x1b[0m
\x1b[32m+\x1b[0m
 def dump(d):
     return json.dumps(d, sort_keys=True)
 
\x1b[1m--- a/app/text.py\x1b[0m
\x1b[1m+++ b/app/text.py\x1b[0m
\x1b[36m@@ -1,2 +1,2 @@\x1b[0m
 def shout(text):
\x1b[31m-    return text.upper() + \"!\"\x1b[0m
\x1b[32m+    return (text or \"\").upper() + \"!\"\x1b[0m
"
    );
    let err = text(&out.stderr);
    for line in [
        "  [name-import-stdlib] add the missing `import json`: \x1b[32mproven\x1b[0m: the test \
         passes; confirmed with the other pending fixes in one full run, where nothing else \
         broke\n",
        "  \x1b[33mescalated, not patched\x1b[0m: a file the code",
        "selfdebug: \x1b[33mpartial\x1b[0m: 2 patches proven in a scratch copy",
        "selfdebug: \x1b[33mreview\x1b[0m app/text.py (unsafe fix)",
    ] {
        assert!(err.contains(line), "{line:?} not in {err:?}");
    }
    // The flag after the subcommand works as well; JSON is never coloured.
    let json = run(&mut selfdebug(
        &p,
        &["fix", "--dry-run", "--json", "--color", "always"],
    ));
    assert!(!json.stdout.contains(&0x1b) && !json.stderr.contains(&0x1b));
    assert_eq!(support::project::json(&json)["final_status"], "partial");
}

/// `selfdebug ARGS` on a pseudo-terminal (util-linux `script`): stdout and stderr both are the
/// terminal, merged in what `script` prints.
fn on_terminal(p: &Project, args: &str, env: &[(&str, &str)]) -> String {
    let bin = env!("CARGO_BIN_EXE_selfdebug");
    let mut cmd = Command::new("script");
    // A wide terminal, so that progress lines are not shortened (see progress::line).
    cmd.args([
        "-qec",
        &format!("stty cols 200; exec {bin} {args}"),
        "/dev/null",
    ])
    .current_dir(p.root.join("py"))
    .env("XDG_CACHE_HOME", &p.cache)
    .env("TMPDIR", p.cache.join("tmp"))
    .env("TERM", "xterm")
    .env_remove("VIRTUAL_ENV")
    .stdin(std::process::Stdio::null());
    for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    text(&out.stdout)
}

#[test]
fn a_terminal_gets_progress_and_colour_unless_no_color() {
    let p = repo();
    let tty = on_terminal(&p, "fix --dry-run", &[]);
    // Progress lines, each rewriting the last in place, for every step.
    for step in [
        "\rselfdebug: running the test suite (baseline)\x1b[K",
        "\rselfdebug: [1/3] tests/test_core.py::test_dump\x1b[K",
        // The first failure's facts come from the baseline; the second one's code has a
        // pending fix, so it is probed.
        "\rselfdebug: [2/3] tests/test_core.py::test_shout: probing the failing line\x1b[K",
        "\rselfdebug: [1/3] tests/test_core.py::test_dump: candidate 1/1 (name-import-stdlib): \
         running the test\x1b[K",
        // The two fixes share one full run (a batch), at the end.
        ": confirming 2 fixes in one full run\x1b[K",
        "\rselfdebug: [2/3] tests/test_core.py::test_shout\x1b[K",
        // Cleared before the report.
        "\r\x1b[Kselfdebug: tests/test_core.py::test_dump: NameError",
    ] {
        assert!(tty.contains(step), "{step:?} not in {tty:?}");
    }
    assert!(tty.contains("\x1b[32m+import json\x1b[0m"), "{tty:?}");
    assert!(tty.contains("selfdebug: \x1b[33mpartial\x1b[0m"), "{tty:?}");

    // NO_COLOR (any non-empty value) turns colour off; progress stays (it is not colour).
    let plain = on_terminal(&p, "fix --dry-run", &[("NO_COLOR", "1")]);
    assert!(!plain.contains("\x1b[3"), "{plain:?}");
    assert!(
        plain.contains("running the test suite (baseline)"),
        "{plain:?}"
    );
    // `--json` has no progress on a terminal (and no colour).
    let json = on_terminal(&p, "fix --dry-run --json", &[]);
    assert!(
        !json.contains("\x1b") && !json.contains("[1/3]"),
        "{json:?}"
    );
}
