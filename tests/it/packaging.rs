//! The Python packaging, with the real clients: `pip install <checkout>` into a fresh venv (the
//! maturin build of `pyproject.toml`), the wheel's file list and metadata, `cargo install
//! --path .`, and pre-commit running `.pre-commit-hooks.yaml` from a git copy of the working
//! tree. Slow (release builds, PyPI downloads of maturin and pre-commit), so they run only with
//! `SELFDEBUG_SLOW_TESTS=1` (`.ci/run` sets it); otherwise each test says it was skipped. The
//! tests of `scripts/pre-commit-mirror`'s output and refusals build nothing and always run.
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

    // The GitHub Action's install step (scripts/action.py release) takes this wheel as the
    // release's wheel for the runner: its dir with a SHA256SUMS as the release, no index.
    write_sums(&dist);
    let runner_temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let output = runner_temp.join("github_output");
    std::fs::write(&output, "").unwrap();
    run(
        "scripts/action.py release",
        Command::new(support::python())
            .arg(support::repo().join("scripts/action.py"))
            .arg("release")
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_OUTPUT", &output)
            .env("SELFDEBUG_ACTION_RELEASE_URL", &dist)
            .env("PIP_NO_INDEX", "1")
            .env_remove("SELFDEBUG_ACTION_BIN"),
    );
    let action_bin = runner_temp.join("selfdebug-venv/bin/selfdebug");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!(
            "version={}\nbin={}\n",
            current_version(),
            action_bin.display()
        )
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

/// The release's version, as `scripts/release-check --current` prints it (Cargo.toml's).
fn current_version() -> String {
    String::from_utf8(
        Command::new(support::repo().join("scripts/release-check"))
            .arg("--current")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .lines()
    .find_map(|l| l.strip_prefix("version=").map(str::to_string))
    .unwrap()
}

/// `dir/SHA256SUMS` for the files in `dir`, as release.yml writes it (`sha256sum -- *`:
/// `SUM  NAME` per line, names sorted).
fn write_sums(dir: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "SHA256SUMS")
        .collect();
    names.sort();
    let sums: String = names
        .iter()
        .map(|n| format!("{}  {n}\n", sha256(&dir.join(n))))
        .collect();
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
}

/// `scripts/pre-commit-mirror ARGS`: (exit code, stdout, stderr).
fn pre_commit_mirror(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = Command::new(support::repo().join("scripts/pre-commit-mirror"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The mirror of the release in `release` (its SHA256SUMS, `file://` URLs) at `dest`,
/// committed (what `try-repo` needs); returns the script's stdout.
fn mirror_repo(dest: &Path, release: &Path) -> String {
    let url = format!("file://{}", release.display());
    let (code, out, err) = pre_commit_mirror(&[
        dest.as_os_str(),
        "--sums".as_ref(),
        release.join("SHA256SUMS").as_os_str(),
        "--base-url".as_ref(),
        url.as_ref(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    git(dest, &["init", "-q"]);
    git(dest, &["add", "-A"]);
    git(dest, &["commit", "-qm", "mirror"]);
    out
}

/// The wheel hook (`scripts/pre-commit-mirror`'s repository, as Ruff's ruff-pre-commit): real
/// pre-commit installs the mirror's package, whose dependency is the release's wheel for this
/// machine by direct URL with its SHA-256 (a simulated release directory as `file://` URLs:
/// this platform's wheel, built here with the test binary as its `selfdebug` script, an sdist
/// and SHA256SUMS as release.yml writes it). No index at all (`PIP_NO_INDEX`; the find-links
/// dir holds setuptools for the mirror's build and no selfdebug), so any lookup of the name
/// fails; and no cargo (a `cargo` first on PATH that would leave a mark). The hook fixes the
/// demo as the from-source hook does. Then a release whose wheel is not the bytes its sum
/// names: pip refuses it, the hook is never installed and nothing changes.
#[test]
fn the_wheel_hook_of_the_mirror_installs_the_release_wheel_without_cargo() {
    let Some(_one_at_a_time) = slow_tests() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pc = pre_commit_tool(&tmp.path().join("tools"));
    let version = current_version();

    // The release: this platform's selfdebug wheel, an sdist, SHA256SUMS.
    let release = tmp.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    let tag = support::wheel::platform_tag();
    // The binary itself, as the real wheel holds it: selfdebug knows the hook's venv as the
    // one it is installed in.
    let wheel = support::wheel::build_with(
        &release,
        "selfdebug",
        &version,
        &tag,
        &[],
        &[(
            &format!("selfdebug-{version}.data/scripts/selfdebug"),
            Path::new(env!("CARGO_BIN_EXE_selfdebug")),
        )],
    );
    std::fs::write(release.join(format!("selfdebug-{version}.tar.gz")), "sdist").unwrap();
    write_sums(&release);
    // The mirror's build backend, the only thing pip may find.
    let build_deps = tmp.path().join("build-deps");
    run(
        "pip download setuptools",
        Command::new(pc.parent().unwrap().join("pip"))
            .args(["download", "--quiet", "--only-binary", ":all:", "--dest"])
            .arg(&build_deps)
            .arg("setuptools"),
    );

    // The mirror repository, as the release steps make it.
    let mirror = tmp.path().join("mirror");
    let (os_name, os, machine) = if cfg!(target_os = "macos") {
        let arm = std::env::consts::ARCH == "aarch64";
        ("macOS", "darwin", if arm { "arm64" } else { "x86_64" })
    } else {
        ("Linux", "linux", std::env::consts::ARCH)
    };
    assert_eq!(
        mirror_repo(&mirror, &release),
        format!(
            "wrote .pre-commit-hooks.yaml, README.md, pyproject.toml for selfdebug {version}, \
             its wheels for {os_name} {machine}\n"
        )
    );
    let pyproject = std::fs::read_to_string(mirror.join("pyproject.toml")).unwrap();
    let wheel_name = wheel.file_name().unwrap().to_str().unwrap();
    assert!(
        pyproject.contains(&format!(
            "dependencies = [\n  'selfdebug @ file://{}/{wheel_name}#sha256={} ; \
             sys_platform == \"{os}\" and platform_machine == \"{machine}\"',\n]\n",
            release.display(),
            sha256(&wheel),
        )),
        "{pyproject}"
    );

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
    let env: [(&str, &std::ffi::OsStr); 3] = [
        ("PIP_NO_INDEX", "1".as_ref()),
        ("PIP_FIND_LINKS", build_deps.as_os_str()),
        ("PATH", path.as_os_str()),
    ];

    let p = staged_demo();
    let original =
        std::fs::read_to_string(support::project_root("demo").join("utils/demo.py")).unwrap();
    let home = tmp.path().join("pre-commit-home");
    let try_repo = |mirror: &Path| -> [String; 4] {
        [
            "try-repo".into(),
            mirror.to_str().unwrap().into(),
            "selfdebug".into(),
            "--all-files".into(),
        ]
    };
    let args = try_repo(&mirror);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, secs) = pre_commit_env(&pc, &home, &p, &args, &env);
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

    // A tampered release: the same SHA256SUMS, another wheel under the name (a script that
    // would say so). pip checks the `#sha256=` of the URL and refuses it.
    let tampered = tmp.path().join("tampered");
    std::fs::create_dir_all(&tampered).unwrap();
    std::fs::copy(release.join("SHA256SUMS"), tampered.join("SHA256SUMS")).unwrap();
    let bad = support::wheel::build(
        &tampered,
        "selfdebug",
        &version,
        &tag,
        &[(
            &format!("selfdebug-{version}.data/scripts/selfdebug"),
            "#!/bin/sh\necho tampered wheel ran\n",
        )],
    );
    assert_eq!(bad.file_name(), wheel.file_name());
    let bad_sum = sha256(&bad);
    let other_mirror = tmp.path().join("mirror-tampered");
    mirror_repo(&other_mirror, &tampered);
    let q = staged_demo();
    let before = work_tree(&q);
    let home = tmp.path().join("pre-commit-home-tampered");
    let args = try_repo(&other_mirror);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = pre_commit_env(&pc, &home, &q, &args, &env);
    let mut log = text(&out);
    // pre-commit prints where its log is; pip's own words are there.
    log += &std::fs::read_to_string(home.join("pre-commit.log")).unwrap_or_default();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(
        log.contains("THESE PACKAGES DO NOT MATCH THE HASHES"),
        "{log}"
    );
    assert!(
        log.contains(&format!("Expected sha256 {}", sha256(&wheel))),
        "{log}"
    );
    assert!(log.contains(&format!("Got        {bad_sum}")), "{log}");
    assert!(!log.contains("tampered wheel ran"), "{log}");
    assert_same(&before, &work_tree(&q));
    assert!(!mark.exists(), "cargo ran:\n{log}");
}

/// The asset names of a release as release.yml builds it (maturin's wheel names), in `dir`
/// with the given version, each holding its own name; then SHA256SUMS.
fn simulated_release(dir: &Path, version: &str) {
    for tag in [
        "manylinux_2_28_x86_64",
        "manylinux_2_28_aarch64",
        "musllinux_1_2_x86_64",
        "musllinux_1_2_aarch64",
        "macosx_10_12_x86_64",
        "macosx_11_0_arm64",
        "win_amd64",
    ] {
        let name = format!("selfdebug-{version}-py3-none-{tag}.whl");
        std::fs::write(dir.join(&name), &name).unwrap();
    }
    std::fs::write(dir.join(format!("selfdebug-{version}.tar.gz")), "sdist").unwrap();
    write_sums(dir);
}

/// Fast (no build): the mirror of a whole release names one wheel per platform with its sum
/// and marker (manylinux for Linux, the musllinux wheels left out and said so, the sdist
/// ignored), and every hook of this repository.
#[test]
fn the_mirror_pins_each_platform_wheel_of_the_release_by_url_and_sha256() {
    let tmp = tempfile::tempdir().unwrap();
    let release = tmp.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    simulated_release(&release, "0.2.0");
    let dest = tmp.path().join("mirror");
    let base = "https://github.com/OWNER/selfdebug/releases/download/v0.2.0";
    let (code, out, err) = pre_commit_mirror(&[
        dest.as_os_str(),
        "--version".as_ref(),
        "0.2.0".as_ref(),
        "--sums".as_ref(),
        release.join("SHA256SUMS").as_os_str(),
        "--base-url".as_ref(),
        base.as_ref(),
    ]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(
        out,
        "wrote .pre-commit-hooks.yaml, README.md, pyproject.toml for selfdebug 0.2.0, its wheels \
         for Linux aarch64, Linux x86_64, macOS arm64, macOS x86_64, Windows AMD64\n\
         left out selfdebug-0.2.0-py3-none-musllinux_1_2_aarch64.whl: an environment marker \
         cannot tell musl from glibc: Linux takes the manylinux wheel\n\
         left out selfdebug-0.2.0-py3-none-musllinux_1_2_x86_64.whl: an environment marker \
         cannot tell musl from glibc: Linux takes the manylinux wheel\n"
    );
    let sum = |tag: &str| sha256(&release.join(format!("selfdebug-0.2.0-py3-none-{tag}.whl")));
    let req = |tag: &str, os: &str, machine: &str| {
        format!(
            "  'selfdebug @ {base}/selfdebug-0.2.0-py3-none-{tag}.whl#sha256={} ; \
             sys_platform == \"{os}\" and platform_machine == \"{machine}\"',\n",
            sum(tag)
        )
    };
    let pyproject = std::fs::read_to_string(dest.join("pyproject.toml")).unwrap();
    let expected = [
        req("manylinux_2_28_aarch64", "linux", "aarch64"),
        req("manylinux_2_28_x86_64", "linux", "x86_64"),
        req("macosx_11_0_arm64", "darwin", "arm64"),
        req("macosx_10_12_x86_64", "darwin", "x86_64"),
        req("win_amd64", "win32", "AMD64"),
    ]
    .concat();
    assert!(
        pyproject.contains(&format!(
            "version = \"0.2.0\"\n\
             description = \"pre-commit hooks for selfdebug, installed from its released wheels\"\n\
             requires-python = \">=3.8\"\n\
             dependencies = [\n{expected}]\n"
        )),
        "{pyproject}"
    );
    // Every requirement parses as PEP 508 for the packaging library pip vendors, with one
    // marker true per platform.
    let check = r##"
import sys, tomllib
from pip._vendor.packaging.requirements import Requirement
reqs = [Requirement(r) for r in tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]]
for env in [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64"),
            ("darwin", "x86_64"), ("win32", "AMD64"), ("freebsd", "amd64")]:
    hits = [r.url.rsplit("/", 1)[1].split("#")[0] for r in reqs
            if r.marker.evaluate({"sys_platform": env[0], "platform_machine": env[1]})]
    print(env[0], env[1], " ".join(hits) or "-")
"##;
    let (out, _) = run(
        "parse the requirements",
        Command::new(support::python())
            .args(["-c", check])
            .arg(dest.join("pyproject.toml")),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "linux x86_64 selfdebug-0.2.0-py3-none-manylinux_2_28_x86_64.whl\n\
         linux aarch64 selfdebug-0.2.0-py3-none-manylinux_2_28_aarch64.whl\n\
         darwin arm64 selfdebug-0.2.0-py3-none-macosx_11_0_arm64.whl\n\
         darwin x86_64 selfdebug-0.2.0-py3-none-macosx_10_12_x86_64.whl\n\
         win32 AMD64 selfdebug-0.2.0-py3-none-win_amd64.whl\n\
         freebsd amd64 -\n"
    );
    let hooks = std::fs::read_to_string(dest.join(".pre-commit-hooks.yaml")).unwrap();
    let own = std::fs::read_to_string(support::repo().join(".pre-commit-hooks.yaml")).unwrap();
    let own_hooks = &own[own.find("- id: selfdebug\n").unwrap()..];
    assert!(hooks.ends_with(own_hooks), "{hooks}");
    assert!(std::fs::read_to_string(dest.join("README.md"))
        .unwrap()
        .contains("    rev: v0.2.0\n"));
}

/// Fast: a sum file missing, malformed, listing no wheel (or none the mirror can use, or
/// another release's) is refused with one line and exit 2, and DEST is not created.
#[test]
fn the_mirror_refuses_a_missing_or_malformed_sum_file() {
    let tmp = tempfile::tempdir().unwrap();
    let sums = tmp.path().join("SHA256SUMS");
    let dest = tmp.path().join("mirror");
    let base = "https://github.com/OWNER/selfdebug/releases/download/v0.2.0";
    let refused = |contents: Option<&str>, extra: &[&str]| -> String {
        match contents {
            Some(text) => std::fs::write(&sums, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&sums);
            }
        }
        let mut args: Vec<&std::ffi::OsStr> = vec![
            dest.as_os_str(),
            "--version".as_ref(),
            "0.2.0".as_ref(),
            "--sums".as_ref(),
            sums.as_os_str(),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let (code, out, err) = pre_commit_mirror(&args);
        assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dest.exists());
        err.replace(support::path_str(&sums), "SUMS")
    };
    let a = "a".repeat(64);
    let wheel = |tag: &str| format!("{a}  selfdebug-0.2.0-py3-none-{tag}.whl\n");
    let with_url = ["--base-url", base];
    assert_eq!(
        refused(None, &with_url),
        "pre-commit-mirror: cannot read the sum file SUMS: No such file or directory\n"
    );
    assert_eq!(
        refused(Some(&format!("{}not a sum line\n", wheel("win_amd64"))), &with_url),
        "pre-commit-mirror: SUMS line 2 is not `SHA256  NAME` (sha256sum's format): 'not a sum line'\n"
    );
    assert_eq!(
        refused(Some(&format!("{a}  selfdebug-0.2.0.tar.gz\n")), &with_url),
        "pre-commit-mirror: SUMS lists no wheel\n"
    );
    assert_eq!(
        refused(Some(""), &with_url),
        "pre-commit-mirror: SUMS lists no wheel\n"
    );
    assert_eq!(
        refused(Some(&wheel("musllinux_1_2_x86_64")), &with_url),
        "pre-commit-mirror: SUMS lists no wheel the mirror can use (left out \
         selfdebug-0.2.0-py3-none-musllinux_1_2_x86_64.whl: an environment marker cannot tell \
         musl from glibc: Linux takes the manylinux wheel)\n"
    );
    assert_eq!(
        refused(
            Some(&format!("{a}  selfdebug-0.1.0-py3-none-win_amd64.whl\n")),
            &with_url
        ),
        "pre-commit-mirror: SUMS lists selfdebug-0.1.0-py3-none-win_amd64.whl, a wheel of \
         selfdebug 0.1.0, not 0.2.0: the sums of another release? (--version)\n"
    );
    assert_eq!(
        refused(
            Some(&format!(
                "{}{}",
                wheel("manylinux_2_17_x86_64"),
                wheel("manylinux_2_28_x86_64")
            )),
            &with_url
        ),
        "pre-commit-mirror: SUMS lists two wheels for Linux x86_64, \
         selfdebug-0.2.0-py3-none-manylinux_2_17_x86_64.whl and \
         selfdebug-0.2.0-py3-none-manylinux_2_28_x86_64.whl: the mirror would not know which \
         to take\n"
    );
    // Without --base-url, or with one that is no URL.
    assert_eq!(
        refused(Some(&wheel("win_amd64")), &[]),
        "usage: scripts/pre-commit-mirror DEST --sums SHA256SUMS --base-url URL \
         [--version VERSION]\n"
            .replace("usage", "pre-commit-mirror: usage")
    );
    assert_eq!(
        refused(
            Some(&wheel("win_amd64")),
            &["--base-url", "releases/v0.2.0"]
        ),
        "pre-commit-mirror: --base-url 'releases/v0.2.0' is not a URL such as \
         https://github.com/OWNER/selfdebug/releases/download/vX.Y.Z\n"
    );
}
