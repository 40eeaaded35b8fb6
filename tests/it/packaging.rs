//! The Python packaging, with the real clients: `pip install <checkout>` into a fresh venv (the
//! maturin build of `pyproject.toml`), the wheel's file list and metadata, `cargo install
//! --path .`, and pre-commit running `.pre-commit-hooks.yaml` from a git copy of the working
//! tree. Slow (release builds, PyPI downloads of maturin and pre-commit), so they run only with
//! `SELFDEBUG_SLOW_TESTS=1` (`.ci/run` sets it); otherwise each test says it was skipped.
//!
//! Every cargo build here shares one target dir, `target/packaging/` (next to the test
//! binaries, or under `$CARGO_TARGET_DIR`), passed down as `CARGO_TARGET_DIR`: pip and pre-commit
//! hand the environment to maturin, so only the first build compiles the dependencies; a build
//! from another directory (pre-commit's clone) recompiles just the selfdebug crate. That
//! rebuild relinks `release/selfdebug` in place, so two tests building at once could hand
//! maturin a binary that changes while it zips it (a corrupt wheel, seen in CI): the tests hold
//! one lock each for their whole run.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use support::project::{assert_same, fixture_project, json, Project, Snapshot};

/// `Some(the build lock)` when the slow tests are on: one test builds in the shared target dir
/// at a time (see the module's doc).
fn slow_tests() -> Option<MutexGuard<'static, ()>> {
    static ONE_BUILD_AT_A_TIME: Mutex<()> = Mutex::new(());
    if support::slow_tests() {
        // A test that failed while holding it poisons it; the next one may still build.
        return Some(
            ONE_BUILD_AT_A_TIME
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
    }
    eprintln!("skipped: set SELFDEBUG_SLOW_TESTS=1 to run the packaging tests");
    None
}

/// The target dir every build of these tests shares.
fn shared_target_dir() -> PathBuf {
    // .../target/debug/selfdebug → .../target
    let bin = Path::new(env!("CARGO_BIN_EXE_selfdebug"));
    bin.parent().unwrap().parent().unwrap().join("packaging")
}

/// Runs `cmd` with the shared target dir, asserting success; returns its output and seconds.
fn run(what: &str, cmd: &mut Command) -> (Output, f64) {
    let started = Instant::now();
    let out = cmd
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let secs = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, secs)
}

/// `python3 -m venv DIR` (with pip): a fresh environment, as a user makes one.
fn fresh_venv(dir: &Path) -> PathBuf {
    run(
        "python3 -m venv",
        Command::new(support::python())
            .args(["-m", "venv"])
            .arg(dir),
    );
    dir.canonicalize().unwrap()
}

/// The demo fixture's module with the proven fix.
fn demo_fixed(original: &str) -> String {
    let fixed = original.replacen(
        "    words = text.split()\n",
        "    words = (text or \"\").split()\n",
        1,
    );
    assert_ne!(fixed, original);
    fixed
}

/// `selfdebug fix --json` with the venv activated as a user activates it (its `bin/` first on
/// PATH): the venv has no pytest, so the tests run with the first python3 on PATH after it.
fn fix_with_installed(venv: &Path) -> (Project, Output) {
    let p = fixture_project("demo");
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = p
        .cmd_of(&venv.join("bin/selfdebug"), ".", &["fix", "--json"])
        .env("VIRTUAL_ENV", venv)
        .env("PATH", path)
        .output()
        .unwrap();
    (p, out)
}

#[test]
fn pip_install_of_the_checkout_gives_a_working_selfdebug() {
    let Some(_one_build) = slow_tests() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let venv = fresh_venv(&tmp.path().join("venv"));
    let pip = venv.join("bin/pip");

    let (_, install_secs) = run(
        "pip install <checkout>",
        Command::new(&pip).arg("install").arg(support::repo()),
    );
    let exe = venv.join("bin/selfdebug");
    let (out, _) = run("selfdebug --version", Command::new(&exe).arg("--version"));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("selfdebug {}\n", env!("CARGO_PKG_VERSION"))
    );

    let (p, out) = fix_with_installed(&venv);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v = json(&out);
    assert_eq!(v["final_status"], "pass");
    assert_eq!(v["files_patched"], serde_json::json!(["utils/demo.py"]));
    let original =
        std::fs::read_to_string(support::project_root("demo").join("utils/demo.py")).unwrap();
    assert_eq!(p.read("utils/demo.py"), demo_fixed(&original));
    assert!(
        v["notes"][0].as_str().unwrap().starts_with(&format!(
            "$VIRTUAL_ENV {} is the environment selfdebug is installed in, without pytest",
            venv.display()
        )),
        "{v}"
    );

    // The wheel, as `pip wheel` (the same PEP 517 build) makes it: the binary as a script and
    // the metadata, nothing else (maturin adds an SBOM of the crates).
    let dist = tmp.path().join("dist");
    let (_, wheel_secs) = run(
        "pip wheel <checkout>",
        Command::new(&pip)
            .args(["wheel", "--no-deps", "-w"])
            .arg(&dist)
            .arg(support::repo()),
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_str().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("selfdebug-{version}-py3-none-")) && name.ends_with(".whl"),
        "{name}"
    );
    let listing = wheel_listing(wheel);
    let data = format!("selfdebug-{version}.data/scripts/selfdebug");
    let info = format!("selfdebug-{version}.dist-info");
    let mut files: Vec<&str> = listing
        .iter()
        .map(|(n, _, _)| n.as_str())
        .filter(|n| !n.starts_with(&format!("{info}/sboms/")))
        .collect();
    files.sort();
    let expected = [
        data.clone(),
        format!("{info}/METADATA"),
        format!("{info}/RECORD"),
        format!("{info}/WHEEL"),
        format!("{info}/licenses/LICENSE"),
    ];
    assert_eq!(files, expected);
    // The script is executable and is the binary pip installed.
    let (_, mode, sha) = listing.iter().find(|(n, _, _)| *n == data).unwrap();
    assert_eq!(mode & 0o111, 0o111, "mode {mode:o}");
    assert_eq!(*sha, sha256(&exe));

    let metadata = wheel_member(wheel, &format!("{info}/METADATA"));
    let (head, description) = metadata.split_once("\n\n").unwrap();
    for line in [
        "Metadata-Version: 2.4".to_string(),
        "Name: selfdebug".to_string(),
        format!("Version: {version}"),
        format!("Summary: {}", env!("CARGO_PKG_DESCRIPTION")),
        "License-Expression: MIT".to_string(),
        "Requires-Python: >=3.8".to_string(),
        "Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM".to_string(),
        "Classifier: Programming Language :: Rust".to_string(),
        "License-File: LICENSE".to_string(),
        "Project-URL: Homepage, https://github.com/OWNER/selfdebug".to_string(),
        "Project-URL: Repository, https://github.com/OWNER/selfdebug".to_string(),
    ] {
        assert!(head.lines().any(|l| l == line), "{line} not in\n{head}");
    }
    let readme = std::fs::read_to_string(support::repo().join("README.md")).unwrap();
    assert_eq!(description.trim_end(), readme.trim_end());

    let wheel_bytes = std::fs::metadata(wheel).unwrap().len();
    let binary_bytes = std::fs::metadata(&exe).unwrap().len();
    eprintln!(
        "measured: pip install <checkout> {install_secs:.1} s, pip wheel (warm) {wheel_secs:.1} s, \
         wheel {wheel_bytes} bytes, binary {binary_bytes} bytes"
    );
    assert_eq!(
        wheel_member(wheel, &format!("{info}/licenses/LICENSE")),
        std::fs::read_to_string(support::repo().join("LICENSE")).unwrap()
    );
    // The sizes docs/install.md states are these, within a tolerance (the toolchain and the
    // dependencies move them a little); update the doc when this fails.
    let install = std::fs::read_to_string(support::repo().join("docs/install.md")).unwrap();
    for (what, measured) in [("wheel", wheel_bytes), ("binary", binary_bytes)] {
        let stated = documented_mb(&install, what);
        let mb = measured as f64 / 1e6;
        assert!(
            (mb - stated).abs() <= stated * 0.2,
            "docs/install.md says the {what} is about {stated} MB; measured {mb:.1} MB"
        );
    }

    // The GitHub Action's install step (scripts/action.py install) takes this wheel as the
    // release wheel for the runner: pip with the wheel's dir as the only index.
    let runner_temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let output = runner_temp.join("github_output");
    std::fs::write(&output, "").unwrap();
    run(
        "scripts/action.py install",
        Command::new(support::python())
            .arg(support::repo().join("scripts/action.py"))
            .arg("install")
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_OUTPUT", &output)
            .env("PIP_FIND_LINKS", &dist)
            .env("PIP_NO_INDEX", "1")
            .env_remove("SELFDEBUG_ACTION_BIN"),
    );
    let action_bin = runner_temp.join("selfdebug-venv/bin/selfdebug");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("bin={}\n", action_bin.display())
    );
    assert_eq!(sha256(&action_bin), sha256(&exe));

    // `cargo install --path .` still builds and installs the same command.
    let root = tmp.path().join("cargo-root");
    let (_, cargo_secs) = run(
        "cargo install --path .",
        Command::new(env!("CARGO"))
            .args(["install", "--locked", "--quiet", "--path"])
            .arg(support::repo())
            .arg("--root")
            .arg(&root),
    );
    let (out, _) = run(
        "cargo-installed selfdebug --version",
        Command::new(root.join("bin/selfdebug")).arg("--version"),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("selfdebug {version}\n")
    );
    eprintln!("measured: cargo install --path . {cargo_secs:.1} s");
}

/// N from the doc's `<!-- size:WHAT -->N MB` (the marker keeps the number findable in prose).
fn documented_mb(doc: &str, what: &str) -> f64 {
    let marker = format!("<!-- size:{what} -->");
    let at = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/install.md has no {marker}"))
        + marker.len();
    let number: String = doc[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number
        .parse()
        .unwrap_or_else(|e| panic!("{marker} is not followed by a number: {e}"))
}

/// (name, unix mode, sha256 hex) of every member of a zip, read by Python's zipfile.
fn wheel_listing(wheel: &Path) -> Vec<(String, u32, String)> {
    let code = "import hashlib, sys, zipfile\n\
                z = zipfile.ZipFile(sys.argv[1])\n\
                for i in z.infolist():\n\
                \x20   h = hashlib.sha256(z.read(i)).hexdigest()\n\
                \x20   print(i.filename, oct(i.external_attr >> 16), h)\n";
    let (out, _) = run(
        "list the wheel",
        Command::new(support::python())
            .args(["-c", code])
            .arg(wheel),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split(' ');
            let name = f.next().unwrap().to_string();
            let mode = u32::from_str_radix(f.next().unwrap().trim_start_matches("0o"), 8).unwrap();
            (name, mode, f.next().unwrap().to_string())
        })
        .collect()
}

fn wheel_member(wheel: &Path, member: &str) -> String {
    let code = "import sys, zipfile\n\
                sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())\n";
    let (out, _) = run(
        "read the wheel",
        Command::new(support::python())
            .args(["-c", code])
            .arg(wheel)
            .arg(member),
    );
    String::from_utf8(out.stdout).unwrap()
}

fn sha256(path: &Path) -> String {
    let code = "import hashlib, sys\n\
                print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())\n";
    let (out, _) = run(
        "sha256",
        Command::new(support::python()).args(["-c", code]).arg(path),
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A git repository at `dest` holding the working tree as it is (tracked files and new ones
/// not ignored, with their current content), committed: what `pre-commit try-repo` and a
/// `repo:` entry need. Returns the commit.
fn hook_repo(dest: &Path) -> String {
    let repo = support::repo();
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(listed.status.success());
    for rel in listed.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = std::str::from_utf8(rel).unwrap();
        let from = repo.join(rel);
        // A tracked file deleted in the working tree is not part of it.
        if !from.is_file() {
            continue;
        }
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    git(dest, &["init", "-q"]);
    git(dest, &["add", "-A"]);
    git(dest, &["commit", "-qm", "working tree"]);
    git(dest, &["rev-parse", "HEAD"]).trim().to_string()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let (out, _) = run(
        &format!("git {args:?}"),
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com"),
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The demo fixture as a git repository with every file staged (a commit about to be made).
fn staged_demo() -> Project {
    let p = fixture_project("demo");
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p
}

/// `pre-commit ARGS` in `p`, with pre-commit's home, selfdebug's cache and temp dir private to
/// the test; returns the output and its seconds, whatever the exit.
fn pre_commit(bin: &Path, home: &Path, p: &Project, args: &[&str]) -> (Output, f64) {
    pre_commit_env(bin, home, p, args, &[])
}

/// [`pre_commit`] with more environment variables.
fn pre_commit_env(
    bin: &Path,
    home: &Path,
    p: &Project,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (Output, f64) {
    let started = Instant::now();
    let out = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&p.root)
        .env("PRE_COMMIT_HOME", home)
        .env("XDG_CACHE_HOME", &p.cache)
        .env("TMPDIR", p.cache.join("tmp"))
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env_remove("VIRTUAL_ENV")
        .env_remove("PRE_COMMIT")
        .output()
        .unwrap();
    (out, started.elapsed().as_secs_f64())
}

/// The work tree's files (bytes, mode, mtime), `.git/` left out: git itself may refresh its
/// index while pre-commit asks it what changed.
fn work_tree(p: &Project) -> Snapshot {
    let mut s = p.snapshot();
    s.retain(|k, _| !k.starts_with(".git/"));
    s
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh venv with pre-commit from the package index: its `pre-commit`.
fn pre_commit_tool(dir: &Path) -> PathBuf {
    let tools = fresh_venv(dir);
    run(
        "pip install pre-commit",
        Command::new(tools.join("bin/pip")).args(["install", "--quiet", "pre-commit"]),
    );
    tools.join("bin/pre-commit")
}

#[test]
fn pre_commit_hooks_fix_then_pass_and_check_changes_nothing() {
    let Some(_one_build) = slow_tests() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pc = pre_commit_tool(&tmp.path().join("tools"));
    let hooks = tmp.path().join("hooks");
    let rev = hook_repo(&hooks);
    let home = tmp.path().join("pre-commit-home");
    let original =
        std::fs::read_to_string(support::project_root("demo").join("utils/demo.py")).unwrap();

    // try-repo: the hook fixes the file and fails the commit because it changed it.
    let p = staged_demo();
    let hooks_arg = hooks.to_str().unwrap();
    let (out, try_secs) = pre_commit(
        &pc,
        &home,
        &p,
        &["try-repo", hooks_arg, "selfdebug", "--all-files"],
    );
    eprintln!("measured: pre-commit try-repo (env built, then the hook) {try_secs:.1} s");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("- files were modified by this hook"), "{log}");
    assert_eq!(p.read("utils/demo.py"), demo_fixed(&original));
    // The tests ran with the project's python3, not the hook env's.
    assert!(
        log.contains("is the environment selfdebug is installed in, without pytest, not the project's: pytest runs with "),
        "{log}"
    );

    // The user's config (the README's snippet with a local repo and rev): the fixed, staged
    // tree passes.
    let config = format!(
        "repos:\n  - repo: {hooks_arg}\n    rev: {rev}\n    hooks:\n      - id: selfdebug\n      - id: selfdebug-check\n"
    );
    std::fs::write(p.root.join(".pre-commit-config.yaml"), &config).unwrap();
    p.git(&["add", "-A"]);
    let before = work_tree(&p);
    let (out, config_secs) = pre_commit(&pc, &home, &p, &["run", "--all-files"]);
    eprintln!("measured: pre-commit run, both hooks (env built) {config_secs:.1} s");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.contains("selfdebug (check)"), "{log}");
    assert_same(&before, &work_tree(&p));

    // selfdebug-check on another broken copy: fails, prints the proven patch, changes nothing.
    let q = staged_demo();
    std::fs::write(q.root.join(".pre-commit-config.yaml"), &config).unwrap();
    q.git(&["add", "-A"]);
    let before = work_tree(&q);
    let status = q.git(&["status", "--porcelain"]);
    let (out, check_secs) = pre_commit(&pc, &home, &q, &["run", "selfdebug-check", "--all-files"]);
    eprintln!("measured: pre-commit run selfdebug-check (env reused) {check_secs:.1} s");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("- exit code: 1"), "{log}");
    assert!(
        log.contains("-    words = text.split()\n+    words = (text or \"\").split()\n"),
        "{log}"
    );
    // Its env is under pre-commit's home now, and said so.
    assert!(
        log.contains("is pre-commit's environment for the hook, not the project's"),
        "{log}"
    );
    assert_same(&before, &work_tree(&q));
    assert_eq!(q.git(&["status", "--porcelain"]), status);
}

/// The wheel hook (`scripts/pre-commit-mirror`'s repository, as Ruff's ruff-pre-commit): real
/// pre-commit installs the mirror's package, whose dependency `selfdebug==VERSION` pip takes
/// from a local wheel index (`PIP_NO_INDEX`, `PIP_FIND_LINKS`: this platform's wheel, built here
/// with the test binary as its `selfdebug` script, and setuptools for the mirror's build),
/// and never runs cargo (a `cargo` first on PATH that would leave a mark). The hook fixes the
/// demo as the from-source hook does.
#[test]
fn the_wheel_hook_of_the_mirror_installs_the_release_wheel_without_cargo() {
    let Some(_one_at_a_time) = slow_tests() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pc = pre_commit_tool(&tmp.path().join("tools"));
    let version = String::from_utf8(
        Command::new(support::repo().join("scripts/release-check"))
            .arg("--current")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .lines()
    .find_map(|l| l.strip_prefix("version=").map(str::to_string))
    .unwrap();

    // The wheel index: this platform's selfdebug wheel, and the mirror's build backend.
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let tag = support::wheel::platform_tag();
    // The binary itself, as the real wheel holds it: selfdebug knows the hook's venv as the
    // one it is installed in.
    support::wheel::build_with(
        &wheels,
        "selfdebug",
        &version,
        &tag,
        &[],
        &[(
            &format!("selfdebug-{version}.data/scripts/selfdebug"),
            Path::new(env!("CARGO_BIN_EXE_selfdebug")),
        )],
    );
    run(
        "pip download setuptools",
        Command::new(pc.parent().unwrap().join("pip"))
            .args(["download", "--quiet", "--only-binary", ":all:", "--dest"])
            .arg(&wheels)
            .arg("setuptools"),
    );

    // The mirror repository, as the release steps make it.
    let mirror = tmp.path().join("mirror");
    let (out, _) = run(
        "scripts/pre-commit-mirror",
        Command::new(support::repo().join("scripts/pre-commit-mirror")).arg(&mirror),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "wrote .pre-commit-hooks.yaml, README.md, pyproject.toml for selfdebug {version}\n"
        )
    );
    let pyproject = std::fs::read_to_string(mirror.join("pyproject.toml")).unwrap();
    assert!(pyproject.contains(&format!("dependencies = [\"selfdebug=={version}\"]\n")));
    git(&mirror, &["init", "-q"]);
    git(&mirror, &["add", "-A"]);
    git(&mirror, &["commit", "-qm", "mirror"]);

    // A cargo that leaves a mark if anything tries to build.
    let stub = tmp.path().join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    let mark = tmp.path().join("cargo-ran");
    let cargo = stub.join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\ntouch '{}'\nexit 99\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(stub.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();

    let p = staged_demo();
    let original =
        std::fs::read_to_string(support::project_root("demo").join("utils/demo.py")).unwrap();
    let home = tmp.path().join("pre-commit-home");
    let (out, secs) = pre_commit_env(
        &pc,
        &home,
        &p,
        &[
            "try-repo",
            mirror.to_str().unwrap(),
            "selfdebug",
            "--all-files",
        ],
        &[
            ("PIP_NO_INDEX", "1".as_ref()),
            ("PIP_FIND_LINKS", wheels.as_os_str()),
            ("PATH", path.as_os_str()),
        ],
    );
    eprintln!("measured: pre-commit try-repo of the mirror (env from the wheel, then the hook) {secs:.1} s");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("- files were modified by this hook"), "{log}");
    assert_eq!(p.read("utils/demo.py"), demo_fixed(&original));
    // As with the from-source hook: the tests ran with the project's python3.
    assert!(
        log.contains("is the environment selfdebug is installed in, without pytest, not the project's: pytest runs with "),
        "{log}"
    );
    assert!(!mark.exists(), "cargo ran:\n{log}");
}
