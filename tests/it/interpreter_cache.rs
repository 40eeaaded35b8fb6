//! The interpreter facts cache with real interpreters: a hit starts no Python and gives what a
//! fresh check gives; any change to the launcher, the interpreter or its `sys.path` is a miss;
//! a cached fact never makes a run use another interpreter than a fresh check would.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use selfdebug::runner::{prepare_with, Interpreter, InterpreterSource};

/// The real program behind `python3` (which may be a shim).
fn real_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(out.status.success());
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A shim-like launcher: a shell script that execs `target`.
fn write_launcher(path: &Path, target: &Path) {
    fs::write(
        path,
        format!("#!/bin/sh\nexec {} \"$@\"\n", target.display()),
    )
    .unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A second real interpreter: a venv sharing the system's site-packages (so it has pytest);
/// its `sys.executable` is its own `bin/python`.
fn make_venv(dir: &Path) -> PathBuf {
    let st = Command::new(real_python())
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(st.success());
    dir.join("bin/python")
}

fn explicit(path: &Path) -> Interpreter {
    Interpreter {
        path: path.to_path_buf(),
        source: InterpreterSource::Explicit,
    }
}

/// Moves `path`'s mtime one minute back (a change a size-only check would miss).
fn age(path: &Path) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
}

#[test]
fn a_hit_answers_like_a_check_and_a_changed_launcher_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache/interpreters.json");
    let launcher = dir.path().join("python3");
    let real = real_python();
    write_launcher(&launcher, &real);
    let i = explicit(&launcher);

    let (first, hit) = prepare_with(&i, Some(&cache)).unwrap();
    assert_eq!(
        (first.path.clone(), first.source, hit),
        (real.clone(), InterpreterSource::Explicit, false)
    );
    assert!(cache.is_file());
    let (second, hit) = prepare_with(&i, Some(&cache)).unwrap();
    assert_eq!((second, hit), (first.clone(), true));

    // Same bytes, other mtime: asked again (and cached again).
    age(&launcher);
    assert_eq!(
        prepare_with(&i, Some(&cache)).unwrap(),
        (first.clone(), false)
    );
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (first, true));
}

#[test]
fn a_launcher_pointed_elsewhere_never_runs_the_cached_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache/interpreters.json");
    let venv_python = make_venv(&dir.path().join("venv"));
    let launcher = dir.path().join("python3");
    let real = real_python();
    write_launcher(&launcher, &real);
    let i = explicit(&launcher);
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap().0.path, real);

    // The shim now runs the venv (a pyenv switch, say): the cache must not say `real`.
    write_launcher(&launcher, &venv_python);
    let (now, hit) = prepare_with(&i, Some(&cache)).unwrap();
    assert_eq!((now.path, hit), (venv_python.clone(), false));
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap().0.path, venv_python);

    // A symlink launcher repointed at another interpreter: Python reports the link itself as
    // `sys.executable`, so what must not happen is a hit.
    let link = dir.path().join("python-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let l = explicit(&link);
    assert_eq!(prepare_with(&l, Some(&cache)).unwrap(), (l.clone(), false));
    assert_eq!(prepare_with(&l, Some(&cache)).unwrap(), (l.clone(), true));
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&venv_python, &link).unwrap();
    assert_eq!(prepare_with(&l, Some(&cache)).unwrap(), (l, false));
}

#[test]
fn a_change_on_sys_path_or_to_the_interpreter_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache/interpreters.json");
    let venv_python = make_venv(&dir.path().join("venv"));
    let i = explicit(&venv_python);
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (i.clone(), false));
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (i.clone(), true));

    // `pip install` into the venv adds entries to its site-packages.
    let site = fs::read_dir(dir.path().join("venv/lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    fs::create_dir(site.join("newly_installed")).unwrap();
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (i.clone(), false));
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (i.clone(), true));

    // The interpreter itself replaced (an upgrade): its stamp changed.
    let exe = fs::read_link(&venv_python).map_or(venv_python.clone(), |t| {
        venv_python.parent().unwrap().join(t)
    });
    let copy = dir.path().join("venv/bin/python.new");
    fs::copy(&exe, &copy).unwrap();
    fs::remove_file(&venv_python).unwrap();
    fs::rename(&copy, &venv_python).unwrap();
    assert_eq!(prepare_with(&i, Some(&cache)).unwrap(), (i.clone(), false));
}

#[test]
fn a_gone_interpreter_is_an_error_not_a_cached_answer() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache/interpreters.json");
    let launcher = dir.path().join("python3");
    write_launcher(&launcher, &real_python());
    let i = explicit(&launcher);
    prepare_with(&i, Some(&cache)).unwrap();
    fs::remove_file(&launcher).unwrap();
    assert!(prepare_with(&i, Some(&cache)).is_err());
}

#[test]
fn without_a_cache_file_every_call_checks() {
    let real = explicit(&real_python());
    assert_eq!(prepare_with(&real, None).unwrap(), (real.clone(), false));
    assert_eq!(prepare_with(&real, None).unwrap(), (real, false));
}
