//! Interpreter choice inside selfdebug's own virtualenv (a pre-commit `language: python` hook
//! env, `pip install selfdebug` into a tools venv): that env, active as `$VIRTUAL_ENV` and first
//! on `PATH`, has no pytest and none of the project's packages, so the project's `.venv`/`venv`
//! or the first `python3` on `PATH` outside it runs the tests. Real venvs (`python3 -m venv`,
//! without pip: a second each) and the real binary copied into one.

use crate::support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use selfdebug::runner::{find_interpreter_in, InterpreterEnv, InterpreterSource};
use selfdebug::venv::{pre_commit_home, venv_of_exe, ToolEnv};
use support::project::{demo_project, json, DEMO_FIXED};

/// `python3 -m venv --without-pip DIR`; with `system_site` the venv sees the base
/// interpreter's pytest (what a project venv with pytest installed looks like to us).
fn venv(dir: &Path, system_site: bool) -> PathBuf {
    let mut cmd = Command::new(support::python());
    cmd.args(["-m", "venv", "--without-pip"]);
    if system_site {
        cmd.arg("--system-site-packages");
    }
    let out = cmd.arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.canonicalize().unwrap()
}

fn paths(dirs: &[&Path]) -> OsString {
    std::env::join_paths(dirs).unwrap()
}

/// The base interpreter (with pytest), as `python3` alone in a directory.
fn base_python_dir(dir: &Path) -> PathBuf {
    let real = Command::new(support::python())
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap();
    fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::symlink(real.trim(), dir.join("python3")).unwrap();
    dir.to_path_buf()
}

#[test]
fn the_hook_env_is_passed_over_for_the_projects_interpreter() {
    let tmp = tempfile::tempdir().unwrap();
    let hook = venv(&tmp.path().join("hook"), false);
    let bindir = base_python_dir(&tmp.path().join("bin"));
    let root = tmp.path().join("proj");
    fs::create_dir_all(&root).unwrap();
    let hook_env = InterpreterEnv {
        virtual_env: Some(hook.clone().into_os_string()),
        path: Some(paths(&[&hook.join("bin"), &bindir])),
        own_venv: Some(hook.clone()),
        pre_commit_home: Some(tmp.path().join("pre-commit")),
    };
    let found = |root: &Path, explicit: Option<&Path>, env: &InterpreterEnv| {
        let i = find_interpreter_in(root, explicit, env).unwrap();
        (i.path, i.source)
    };

    // No project venv: the first python3 on PATH outside the hook env, not the hook's own.
    assert_eq!(
        hook_env.tool_env(),
        Some(ToolEnv {
            path: hook.clone(),
            reason: "the environment selfdebug is installed in, without pytest",
        })
    );
    assert_eq!(
        found(&root, None, &hook_env),
        (bindir.join("python3"), InterpreterSource::Path)
    );
    // A bare `--python python3` is looked up outside it too; a path is taken as given.
    assert_eq!(
        found(&root, Some(Path::new("python3")), &hook_env),
        (bindir.join("python3"), InterpreterSource::Explicit)
    );
    let hook_python = hook.join("bin/python");
    assert_eq!(
        found(&root, Some(&hook_python), &hook_env),
        (hook_python, InterpreterSource::Explicit)
    );

    // The project's .venv wins over PATH.
    let project_venv = venv(&root.join(".venv"), true);
    assert_eq!(
        found(&root, None, &hook_env),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );

    // $VIRTUAL_ENV named through a symlink is still the hook env.
    let link = tmp.path().join("hook-link");
    std::os::unix::fs::symlink(&hook, &link).unwrap();
    let via_link = InterpreterEnv {
        virtual_env: Some(link.into_os_string()),
        ..hook_env.clone()
    };
    assert_eq!(
        found(&root, None, &via_link),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );

    // selfdebug installed elsewhere (cargo install): an active venv is not selfdebug's own, but
    // it lies outside the project, which has a venv of its own: that one runs the tests (the
    // report's notes say so; `runner::venv_note`). Without the project's venv, the active one
    // would be the user's choice, even without pytest.
    let elsewhere = InterpreterEnv {
        own_venv: None,
        ..hook_env.clone()
    };
    assert_eq!(elsewhere.tool_env(), None);
    assert_eq!(
        found(&root, None, &elsewhere),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );

    // selfdebug installed into the project's own venv, next to pytest: that venv is kept.
    let in_project = InterpreterEnv {
        virtual_env: Some(project_venv.clone().into_os_string()),
        own_venv: Some(project_venv.clone()),
        ..hook_env.clone()
    };
    assert_eq!(in_project.tool_env(), None);
    assert_eq!(
        found(&root, None, &in_project),
        (
            project_venv.join("bin/python"),
            InterpreterSource::VirtualEnv
        )
    );

    // A hook env under pre-commit's home is passed over even when it has pytest
    // (`additional_dependencies: [pytest]`): it still lacks the project's packages.
    let home = tmp.path().join("pre-commit");
    let with_pytest = venv(&home.join("repo1234/py_env-python3"), true);
    let pre_commit = InterpreterEnv {
        virtual_env: Some(with_pytest.clone().into_os_string()),
        path: Some(paths(&[&with_pytest.join("bin"), &bindir])),
        own_venv: Some(with_pytest.clone()),
        pre_commit_home: Some(home),
    };
    assert_eq!(
        pre_commit.tool_env().map(|t| t.reason),
        Some("pre-commit's environment for the hook")
    );
    assert_eq!(
        found(&root, None, &pre_commit),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );
}

#[test]
fn where_the_binary_and_pre_commit_live() {
    let tmp = tempfile::tempdir().unwrap();
    let v = venv(&tmp.path().join("v"), false);
    assert_eq!(venv_of_exe(&v.join("bin/selfdebug")), Some(v.clone()));
    // Not a venv: no pyvenv.cfg above the binary's directory.
    assert_eq!(venv_of_exe(&tmp.path().join("bin/selfdebug")), None);
    assert_eq!(venv_of_exe(Path::new("/selfdebug")), None);

    let os = |s: &str| Some(OsString::from(s));
    let home = |a: Option<OsString>, b: Option<OsString>, c: Option<OsString>| {
        pre_commit_home(a.as_deref(), b.as_deref(), c.as_deref())
    };
    assert_eq!(
        home(os("/p"), os("/x"), os("/h")),
        Some(PathBuf::from("/p"))
    );
    assert_eq!(
        home(os(""), os("/x"), os("/h")),
        Some(PathBuf::from("/x/pre-commit"))
    );
    assert_eq!(
        home(None, None, os("/h")),
        Some(PathBuf::from("/h/.cache/pre-commit"))
    );
    assert_eq!(home(None, None, None), None);
}

/// Puts a copy of the built binary in `venv`'s `bin/`, as the wheel installs it (a copy, not a
/// symlink: the executable's own path is what tells it where it is installed).
fn install_binary(venv: &Path) -> PathBuf {
    let exe = venv.join("bin/selfdebug");
    fs::copy(env!("CARGO_BIN_EXE_selfdebug"), &exe).unwrap();
    exe
}

#[test]
fn fix_from_inside_its_own_venv_runs_the_projects_pytest() {
    let tmp = tempfile::tempdir().unwrap();
    let hook = venv(&tmp.path().join("hook"), false);
    let exe = install_binary(&hook);
    let bindir = base_python_dir(&tmp.path().join("bin"));
    let system_path = std::env::var_os("PATH").unwrap_or_default();
    let mut path_dirs = vec![hook.join("bin"), bindir.clone()];
    path_dirs.extend(std::env::split_paths(&system_path));
    let path = std::env::join_paths(&path_dirs).unwrap();

    // With a project .venv (that sees pytest).
    let p = demo_project();
    venv(&p.root.join(".venv"), true);
    let out = p
        .cmd_of(&exe, ".", &["fix", "--json"])
        .env("VIRTUAL_ENV", &hook)
        .env("PATH", &path)
        .env("PRE_COMMIT_HOME", tmp.path().join("pre-commit"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v = json(&out);
    assert_eq!(v["final_status"], "pass");
    assert_eq!(p.read("words.py"), DEMO_FIXED);
    let venv_python = p.root.canonicalize().unwrap().join(".venv/bin/python");
    assert_eq!(
        v["notes"],
        serde_json::json!([format!(
            "$VIRTUAL_ENV {} is the environment selfdebug is installed in, without pytest, not \
             the project's: pytest runs with {} (the project's virtualenv); --python PATH \
             chooses another",
            hook.display(),
            venv_python.display()
        )])
    );

    // Without one: python3 on PATH after the hook env's bin/; the note goes to stderr too.
    let p = demo_project();
    let out = p
        .cmd_of(&exe, ".", &["fix"])
        .env("VIRTUAL_ENV", &hook)
        .env("PATH", &path)
        .env("PRE_COMMIT_HOME", tmp.path().join("pre-commit"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(p.read("words.py"), DEMO_FIXED);
    let note = format!(
        "selfdebug: note: $VIRTUAL_ENV {} is the environment selfdebug is installed in, without \
         pytest, not the project's: pytest runs with {} (the first python3 on PATH outside it); \
         --python PATH chooses another\n",
        hook.display(),
        bindir.join("python3").display()
    );
    assert!(stderr.contains(&note), "{stderr}");

    // --python decides alone: no note, and the hook's interpreter really lacks pytest (exit 6).
    let p = demo_project();
    let out = p
        .cmd_of(&exe, ".", &["fix", "--json", "--python"])
        .arg(hook.join("bin/python"))
        .env("VIRTUAL_ENV", &hook)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6));
    let v = json(&out);
    assert!(
        v["error"].as_str().unwrap().starts_with(&format!(
            "pytest is not installed for {}",
            hook.join("bin/python").display()
        )),
        "{v}"
    );
    assert_eq!(p.read("words.py"), support::project::DEMO_MODULE);
}

/// A `$VIRTUAL_ENV` left active from another project (one whose Python has no pytest) does not
/// run this project's tests: its own `.venv` does, the demo is fixed, and the report's notes
/// name both.
#[test]
fn a_stale_virtual_env_outside_the_project_gives_way_to_the_projects_venv() {
    let p = demo_project();
    let tmp = tempfile::tempdir().unwrap();
    let stale = venv(&tmp.path().join("other-project-venv"), false);
    let own = venv(&p.root.join(".venv"), true);
    let out = p
        .cmd(&["fix", "--json"])
        .env("VIRTUAL_ENV", &stale)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(p.read("words.py"), DEMO_FIXED);
    let v = json(&out);
    let expected = format!(
        "$VIRTUAL_ENV {} lies outside the project: its own virtualenv {} runs the tests \
         instead; --python PATH chooses another",
        stale.display(),
        own.join("bin/python").display()
    );
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == &expected),
        "{}",
        v["notes"]
    );
    // The report names the interpreter that ran the tests: the project's own, with its versions.
    let asked = |code: &str| {
        let out = std::process::Command::new(own.join("bin/python"))
            .args(["-c", code])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let version = asked("import sys; print('%d.%d.%d' % sys.version_info[:3], end='')");
    let pytest = asked("import pytest; print(pytest.__version__, end='')");
    assert_eq!(
        v["interpreter"],
        serde_json::json!({
            "path": own.join("bin/python").to_string_lossy(),
            "python_version": version,
            "pytest_version": pytest,
            "source": "project_venv",
        })
    );
    // And the text report's first line does too, the path relative to the root.
    let p = demo_project();
    venv(&p.root.join(".venv"), true);
    let out = p
        .cmd(&["fix", "--dry-run"])
        .env("VIRTUAL_ENV", &stale)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().next().unwrap_or("");
    assert!(
        first.ends_with(&format!(
            "; python {version} (.venv/bin/python, the project's virtualenv)"
        )),
        "{stderr}"
    );
}
