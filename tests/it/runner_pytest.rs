//! The runner against real pytest in temp dirs: outcomes, timeouts that kill the whole process
//! group, interpreter discovery, stale bytecode, and runs that leave nothing behind.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use selfdebug::bytecode::Bytecode;
use selfdebug::process::RunnerError;
use selfdebug::runner::{
    ensure_pytest, find_interpreter_in, run_pytest, Interpreter, InterpreterEnv, InterpreterSource,
    RunSpec,
};

/// The real interpreter behind `python3` (not a pyenv shim), resolved once.
fn real_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(out.status.success());
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn interp() -> Interpreter {
    Interpreter {
        path: real_python(),
        source: InterpreterSource::Explicit,
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn spec(root: &Path, node_ids: &[&str], timeout: u64) -> RunSpec {
    RunSpec {
        node_ids: node_ids.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(timeout),
        ..RunSpec::new(root)
    }
}

/// Every path under `root`, relative.
fn tree(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            out.insert(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            if p.is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Gone, or a zombie waiting for a reaper that is not us.
fn process_is_dead(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

fn wait_dead(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if process_is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn passing_and_failing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "test_a.py", "def test_ok():\n    assert 1 + 1 == 2\n\ndef test_bad():\n    x = None\n    assert x.upper() == 'A'\n");

    let run = run_pytest(&interp(), &spec(root, &[], 120)).unwrap();
    assert_eq!(
        run.exit_code,
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.log())
    );
    assert!(!run.timed_out && !run.passed());
    assert!(run.node_ids.is_empty());
    assert_eq!(
        &run.args[..5],
        ["-p", "no:cacheprovider", "--tb=long", "-rfE", "--color=no"]
    );
    let parsed = selfdebug::traceback::parse(&run.log(), root).unwrap();
    let tests: Vec<_> = parsed.failures.iter().map(|f| f.test.clone()).collect();
    assert_eq!(tests, [Some("test_a.py::test_bad".to_string())]);
    assert_eq!(parsed.failures[0].exc_type, "AttributeError");
    let loc = parsed.failures[0].location.as_ref().unwrap();
    assert_eq!((loc.file.as_str(), loc.line), ("test_a.py", 6));

    let run = run_pytest(&interp(), &spec(root, &["test_a.py::test_ok"], 120)).unwrap();
    assert_eq!(run.exit_code, Some(0));
    assert!(run.passed());
    assert_eq!(run.node_ids, ["test_a.py::test_ok"]);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("1 passed"), "{out}");
    assert!(!out.contains('\x1b'), "colour codes in {out}");

    // User args come after ours and reach pytest; extra env reaches the tests.
    write(root, "test_env.py", "import os\n\ndef test_env():\n    assert os.environ['SD_X'] == 'yes'\n    assert 'PYTEST_ADDOPTS' not in os.environ\n    assert os.environ['COLUMNS'] == '200'\n");
    let mut s = spec(root, &["test_env.py"], 120);
    s.extra_args = vec!["-q".into()];
    s.env = vec![
        (OsString::from("SD_X"), OsString::from("yes")),
        (OsString::from("PYTEST_ADDOPTS"), OsString::from("-x")),
    ];
    passes(&s);
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pidfile = root.join("grandchild.pid");
    write(root, "test_hang.py", "import os, subprocess, time\n\ndef test_hang():\n    p = subprocess.Popen(['sleep', '1000'])\n    with open(os.environ['PIDFILE'], 'w') as f:\n        f.write(str(p.pid))\n    time.sleep(1000)\n");
    let mut s = spec(root, &["test_hang.py"], 4);
    s.env = vec![(OsString::from("PIDFILE"), pidfile.clone().into_os_string())];
    let start = Instant::now();
    let run = run_pytest(&interp(), &s).unwrap();
    let took = start.elapsed();
    assert!(run.timed_out);
    assert_eq!(run.exit_code, None);
    assert_eq!(run.signal, Some(9));
    assert!(run.duration >= Duration::from_secs(4), "{:?}", run.duration);
    assert!(took < Duration::from_secs(9), "took {took:?}");
    let pid: u32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid), "grandchild {pid} survived the timeout");
}

#[test]
fn leftover_background_processes_are_killed_after_a_normal_exit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pidfile = root.join("bg.pid");
    // The orphan inherits pytest's stdout: without the group kill the run would also wait for
    // the pipe to close.
    write(root, "test_bg.py", "import os, subprocess\n\ndef test_bg():\n    p = subprocess.Popen(['sleep', '1000'])\n    with open(os.environ['PIDFILE'], 'w') as f:\n        f.write(str(p.pid))\n");
    let mut s = spec(root, &[], 120);
    s.env = vec![(OsString::from("PIDFILE"), pidfile.clone().into_os_string())];
    let run = run_pytest(&interp(), &s).unwrap();
    assert_eq!(run.exit_code, Some(0));
    assert!(!run.timed_out);
    let pid: u32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid), "background process {pid} survived the run");
}

#[test]
fn interpreter_discovery_order() {
    let python = real_python();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    let other_venv = dir.path().join("active-venv");
    let bindir = dir.path().join("bin");
    for d in [&root, &other_venv.join("bin"), &bindir] {
        fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(&python, bindir.join("python3")).unwrap();
    let path_env = InterpreterEnv {
        virtual_env: None,
        path: Some(bindir.clone().into_os_string()),
        ..Default::default()
    };

    // Nothing in the project: python3 on PATH.
    let i = find_interpreter_in(&root, None, &path_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (bindir.join("python3"), InterpreterSource::Path)
    );

    // venv/, then .venv/ which wins over it.
    fs::create_dir_all(root.join("venv/bin")).unwrap();
    std::os::unix::fs::symlink(&python, root.join("venv/bin/python")).unwrap();
    let i = find_interpreter_in(&root, None, &path_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (root.join("venv/bin/python"), InterpreterSource::ProjectVenv)
    );
    fs::create_dir_all(root.join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink(&python, root.join(".venv/bin/python")).unwrap();
    let i = find_interpreter_in(&root, None, &path_env).unwrap();
    assert_eq!(
        (i.path.clone(), i.source),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );
    // The symlinked venv interpreter really runs pytest.
    let version = ensure_pytest(&i).unwrap();
    assert!(
        version.chars().next().unwrap().is_ascii_digit(),
        "{version}"
    );

    // An active VIRTUAL_ENV outside the project (left from another one) does not win over the
    // project's own virtualenv; one inside the project does.
    std::os::unix::fs::symlink(&python, other_venv.join("bin/python")).unwrap();
    let venv_env = InterpreterEnv {
        virtual_env: Some(other_venv.clone().into_os_string()),
        ..path_env.clone()
    };
    let i = find_interpreter_in(&root, None, &venv_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (
            root.join(".venv/bin/python"),
            InterpreterSource::ProjectVenv
        )
    );
    let inner = root.join("env");
    fs::create_dir_all(inner.join("bin")).unwrap();
    std::os::unix::fs::symlink(&python, inner.join("bin/python")).unwrap();
    let inner_env = InterpreterEnv {
        virtual_env: Some(inner.clone().into_os_string()),
        ..path_env.clone()
    };
    let i = find_interpreter_in(&root, None, &inner_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (inner.join("bin/python"), InterpreterSource::VirtualEnv)
    );
    // An active one inside the project comes first: a broken `.venv` beside it is not looked at.
    let inner_first = dir.path().join("inner-first");
    let inner_venv = inner_first.join("env");
    fs::create_dir_all(inner_venv.join("bin")).unwrap();
    std::os::unix::fs::symlink(&python, inner_venv.join("bin/python")).unwrap();
    fs::create_dir_all(inner_first.join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("gone"),
        inner_first.join(".venv/bin/python"),
    )
    .unwrap();
    let inner_first_env = InterpreterEnv {
        virtual_env: Some(inner_venv.clone().into_os_string()),
        ..path_env.clone()
    };
    let i = find_interpreter_in(&inner_first, None, &inner_first_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (inner_venv.join("bin/python"), InterpreterSource::VirtualEnv)
    );
    // Without a venv of the project's own, the active one is used.
    let bare = dir.path().join("bare");
    fs::create_dir_all(&bare).unwrap();
    let i = find_interpreter_in(&bare, None, &venv_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (other_venv.join("bin/python"), InterpreterSource::VirtualEnv)
    );
    // A project venv whose python cannot run (a dangling link) is an error naming it, not a
    // silent fall back to another Python.
    let broken = dir.path().join("broken");
    fs::create_dir_all(broken.join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone"), broken.join(".venv/bin/python")).unwrap();
    let e = find_interpreter_in(&broken, None, &venv_env).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the project's virtualenv cannot be run: {} (No such file or directory (os error 2)); \
             repair it, or pass --python PATH",
            broken.join(".venv/bin/python").display()
        )
    );

    // --python wins over everything; a bare name is looked up on PATH.
    let i = find_interpreter_in(&root, Some(&python), &venv_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (python.clone(), InterpreterSource::Explicit)
    );
    let i = find_interpreter_in(&root, Some(Path::new("python3")), &venv_env).unwrap();
    assert_eq!(
        (i.path, i.source),
        (bindir.join("python3"), InterpreterSource::Explicit)
    );
    let missing = dir.path().join("nope/python");
    assert_eq!(
        find_interpreter_in(&root, Some(&missing), &venv_env),
        Err(RunnerError::ExplicitNotFound { path: missing })
    );

    // Nothing anywhere.
    let empty = InterpreterEnv {
        virtual_env: None,
        path: Some(OsString::new()),
        ..Default::default()
    };
    let bare = dir.path().join("bare");
    fs::create_dir_all(&bare).unwrap();
    let err = find_interpreter_in(&bare, None, &empty).unwrap_err();
    assert!(matches!(err, RunnerError::NotFound { .. }));
    assert!(err.to_string().contains("--python"), "{err}");
}

#[test]
fn missing_pytest_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // An interpreter without site-packages cannot import pytest.
    let fake = dir.path().join("python-nosite");
    fs::write(
        &fake,
        format!("#!/bin/sh\nexec {} -S \"$@\"\n", real_python().display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let i = Interpreter {
        path: fake.clone(),
        source: InterpreterSource::Explicit,
    };
    let err = ensure_pytest(&i).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RunnerError::PytestMissing { .. }), "{msg}");
    assert!(
        msg.contains(&format!("{} -m pip install pytest", fake.display())),
        "{msg}"
    );
    assert!(msg.contains("No module named 'pytest'"), "{msg}");
}

#[test]
fn a_program_that_is_not_python_is_named_as_such() {
    let given = |p: &str| Interpreter {
        path: PathBuf::from(p),
        source: InterpreterSource::Explicit,
    };
    // Fails every `-c` (as a Python without pytest would fail `import pytest`).
    let err = ensure_pytest(&given("/bin/false")).unwrap_err();
    assert_eq!(
        err,
        RunnerError::NotPython {
            python: PathBuf::from("/bin/false"),
            detail: "given Python code with -c, it exited with status 1 and printed nothing".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "/bin/false is not a Python interpreter (given Python code with -c, it exited with \
         status 1 and printed nothing); pass --python PATH to a Python that has pytest"
    );
    // Exits 0 and prints something else than the facts (no cache: the check itself).
    let err = selfdebug::runner::prepare_with(&given("/bin/echo"), None).unwrap_err();
    assert!(
        matches!(&err, RunnerError::NotPython { detail, .. }
            if detail == "given Python code with -c, it exited with status 0 and printed \
                          `-c import sys; sys.stdout.write('selfdebug-python')`"),
        "{err}"
    );
    // A real Python is one.
    selfdebug::runner::ensure_python(&interp()).unwrap();
}

/// Rewrites `rel` with `text` (same size as before) and puts the old mtime back.
fn rewrite_same_size_and_mtime(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    let meta = fs::metadata(&p).unwrap();
    assert_eq!(meta.len(), text.len() as u64, "same size is the point");
    fs::write(&p, text).unwrap();
    fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(meta.modified().unwrap())
        .unwrap();
}

/// The trap: a `.pyc` is trusted when the source's mtime (whole seconds) and size match what
/// it recorded. Rewrite a module with the same size and mtime and plain Python runs the old
/// code; our runs must not, in either bytecode mode.
fn stale_project_pycache_is_never_read(bytecode: Bytecode) {
    let python = real_python();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "mod.py", "VALUE = 1\n");
    write(
        root,
        "test_stale.py",
        "from mod import VALUE\n\ndef test_value():\n    assert VALUE == 2\n",
    );
    let plain = |args: &[&str], dont_write: bool| {
        let mut c = Command::new(&python);
        c.args(args)
            .current_dir(root)
            .env_remove("PYTHONPYCACHEPREFIX")
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .env_remove("PYTEST_ADDOPTS");
        if dont_write {
            c.env("PYTHONDONTWRITEBYTECODE", "1");
        }
        c.output().unwrap()
    };
    // Normal imports write __pycache__ (module and pytest's rewritten test module).
    assert!(plain(&["-c", "import mod"], false).status.success());
    let warm = plain(&["-m", "pytest", "-p", "no:cacheprovider", "-q"], false);
    assert!(!warm.status.success(), "VALUE is 1 at first");
    let pyc_dir = root.join("__pycache__");
    let pycs_before: BTreeSet<String> = tree(&pyc_dir);
    assert!(
        pycs_before.iter().any(|p| p.starts_with("mod.")),
        "{pycs_before:?}"
    );
    assert!(
        pycs_before.iter().any(|p| p.starts_with("test_stale.")),
        "{pycs_before:?}"
    );
    let pyc_bytes: Vec<Vec<u8>> = pycs_before
        .iter()
        .map(|p| fs::read(pyc_dir.join(p)).unwrap())
        .collect();

    rewrite_same_size_and_mtime(root, "mod.py", "VALUE = 2\n");

    // The trap is real: plain Python, and pytest with only PYTHONDONTWRITEBYTECODE, run the
    // old code.
    let out = plain(&["-c", "import mod; print(mod.VALUE)"], false);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    let out = plain(&["-m", "pytest", "-p", "no:cacheprovider", "-q"], true);
    assert!(
        !out.status.success(),
        "stale .pyc not used? the test cannot prove anything"
    );

    // Our run reads the source.
    let mut s = spec(root, &[], 120);
    s.bytecode = bytecode;
    passes(&s);
    // And it neither rewrote nor added bytecode in the project.
    assert_eq!(tree(&pyc_dir), pycs_before);
    let after: Vec<Vec<u8>> = pycs_before
        .iter()
        .map(|p| fs::read(pyc_dir.join(p)).unwrap())
        .collect();
    assert_eq!(after, pyc_bytes);
}

#[test]
fn stale_project_pycache_is_never_read_fresh_mode() {
    stale_project_pycache_is_never_read(Bytecode::Fresh);
}

#[test]
fn stale_project_pycache_is_never_read_cache_mode() {
    let cache = tempfile::tempdir().unwrap();
    stale_project_pycache_is_never_read(Bytecode::Cache(cache.path().join("pyc")));
}

/// A project whose test checks `pkg.mod.VALUE == 1` (passing), and a spec running it with a
/// bytecode cache of its own (`pyc` in the first dir).
fn value_project() -> (tempfile::TempDir, tempfile::TempDir, RunSpec) {
    let cache_dir = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/__init__.py", "");
    write(root, "pkg/mod.py", "VALUE = 1\n");
    write(
        root,
        "tests/test_v.py",
        "from pkg.mod import VALUE\n\ndef test_value():\n    assert VALUE == 1\n",
    );
    let mut s = spec(root, &[], 120);
    s.bytecode = Bytecode::Cache(cache_dir.path().join("pyc"));
    (cache_dir, dir, s)
}

/// The shared cache holds bytecode our own earlier run wrote: a same-size, same-mtime rewrite
/// between two runs must still be seen (the project's part of the cache is wiped), while code
/// outside the project stays cached.
#[test]
fn the_shared_cache_never_serves_the_project_stale_code() {
    let (cache_dir, dir, s) = value_project();
    let (cache, root) = (cache_dir.path().join("pyc"), dir.path());
    passes(&s);
    // Outside code (pytest itself) is cached; nothing of the project is left in the cache.
    let cached = tree(&cache);
    assert!(cached.iter().any(|p| p.contains("_pytest")), "{cached:?}");
    let mirror = cache.join(root.canonicalize().unwrap().strip_prefix("/").unwrap());
    assert!(!mirror.exists(), "{} left in the cache", mirror.display());

    rewrite_same_size_and_mtime(root, "pkg/mod.py", "VALUE = 2\n");
    rewrite_same_size_and_mtime(
        root,
        "tests/test_v.py",
        "from pkg.mod import VALUE\n\ndef test_value():\n    assert VALUE == 3\n",
    );
    let run = run_pytest(&interp(), &s).unwrap();
    assert_eq!(run.exit_code, Some(1));
    let log = String::from_utf8_lossy(&run.log()).into_owned();
    assert!(log.contains("assert 2 == 3"), "{log}");
    assert!(!root.join("pkg/__pycache__").exists());
}

#[test]
fn runs_leave_nothing_in_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "conftest.py",
        "import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n",
    );
    write(root, "pkg/__init__.py", "");
    write(root, "pkg/calc.py", "def half(x):\n    return x / 2\n");
    write(root, "tests/test_calc.py", "from pkg.calc import half\n\ndef test_half(two):\n    assert half(4) == two\n\ndef test_fail():\n    assert half(None)\n");
    let before = tree(root);
    let run = run_pytest(&interp(), &spec(root, &[], 120)).unwrap();
    assert_eq!(
        run.exit_code,
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.log())
    );
    let after = tree(root);
    assert_eq!(before, after);
    assert!(!after
        .iter()
        .any(|p| p.contains("__pycache__") || p.contains(".pytest_cache")));
}

/// The `.pyc` files of the mirror of `root` in `cache`, by path relative to the mirror, with
/// their inode and mtime in ns (both the same across runs: the file was kept, not written
/// again; an inode alone can be reused at once for the file written after a delete).
fn mirror_pycs(cache: &Path, root: &Path) -> std::collections::BTreeMap<String, (u64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let mirror = cache.join(root.canonicalize().unwrap().strip_prefix("/").unwrap());
    walkdir::WalkDir::new(&mirror)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pyc"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(&mirror)
                .unwrap()
                .display()
                .to_string();
            let m = e.metadata().unwrap();
            (rel, (m.ino(), m.mtime() * 1_000_000_000 + m.mtime_nsec()))
        })
        .collect()
}

/// Runs `s`, which must pass.
fn passes(s: &RunSpec) {
    let run = run_pytest(&interp(), s).unwrap();
    assert_eq!(
        run.exit_code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.log())
    );
}

/// Runs `s`, which must fail with `message` in its log, having compiled again only the
/// bytecode whose path (relative to the mirror) starts with `recompiled`: every other file of
/// `before` is the same file. Returns the mirror's files after the run.
fn fails_recompiling_only(
    s: &RunSpec,
    cache: &Path,
    before: &std::collections::BTreeMap<String, (u64, i64)>,
    message: &str,
    recompiled: &str,
) -> std::collections::BTreeMap<String, (u64, i64)> {
    let run = run_pytest(&interp(), s).unwrap();
    assert_eq!(run.exit_code, Some(1));
    let log = String::from_utf8_lossy(&run.log()).into_owned();
    assert!(log.contains(message), "{log}");
    let after = mirror_pycs(cache, &s.cwd);
    for (rel, id) in before {
        let kept = after.get(rel) == Some(id);
        assert_eq!(
            kept,
            !rel.starts_with(recompiled),
            "{rel}: {before:?} then {after:?}"
        );
    }
    after
}

/// With a live `KeepBetweenRuns` (one command), the project's bytecode is kept from run to run
/// and from one command to the next, but only for sources that did not change: a same-size,
/// same-mtime rewrite is seen, within a command and between two; the untouched modules and
/// test modules are not compiled again; a command without stamps starts empty; a scratch
/// copy's mirror is gone with the command.
#[test]
fn kept_bytecode_is_reused_only_for_unchanged_sources_within_and_across_commands() {
    let (cache_dir, dir, s) = value_project();
    let (cache, root) = (cache_dir.path().join("pyc"), dir.path());
    write(root, "pkg/other.py", "OTHER = 5\n");
    write(
        root,
        "tests/test_other.py",
        "from pkg.other import OTHER\n\ndef test_other():\n    assert OTHER == 5\n",
    );
    let guard = selfdebug::bytecode::KeepBetweenRuns::new(&cache);
    passes(&s);
    let first = mirror_pycs(&cache, root);
    let names: Vec<&str> = first.keys().map(|k| k.split('.').next().unwrap()).collect();
    for want in ["pkg/mod", "pkg/other", "tests/test_v", "tests/test_other"] {
        assert!(names.contains(&want), "{want} not cached: {first:?}");
    }

    rewrite_same_size_and_mtime(root, "pkg/mod.py", "VALUE = 2\n");
    let _ = fails_recompiling_only(&s, &cache, &first, "assert 2 == 1", "pkg/mod.");

    // An atomic replace (what the journal does), same size: seen too.
    let tmp = root.join("tests/.test_v.tmp");
    fs::write(
        &tmp,
        "from pkg.mod import VALUE\n\ndef test_value():\n    assert VALUE == 2\n",
    )
    .unwrap();
    fs::rename(&tmp, root.join("tests/test_v.py")).unwrap();
    passes(&s);

    let third = mirror_pycs(&cache, root);

    // The command ends: the project's mirror stays, with its stamps beside the cache.
    drop(guard);
    assert_eq!(mirror_pycs(&cache, root), third);
    let stamps = cache_dir.path().join("pyc-stamps");
    assert_eq!(
        fs::read_dir(&stamps)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json"))
            .count(),
        1,
        "one mirror, one stamps file"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&stamps).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
    // Between two commands a source is rewritten, same size and mtime (only its ctime shows).
    rewrite_same_size_and_mtime(root, "pkg/other.py", "OTHER = 6\n");
    let guard = selfdebug::bytecode::KeepBetweenRuns::new(&cache);
    let fourth = fails_recompiling_only(&s, &cache, &third, "assert 6 == 5", "pkg/other.");
    drop(guard);

    // A command whose stamps are gone (killed: they are taken off disk when read) starts from
    // an empty mirror.
    let guard = selfdebug::bytecode::KeepBetweenRuns::new(&cache);
    for e in fs::read_dir(&stamps).unwrap() {
        fs::remove_file(e.unwrap().path()).unwrap();
    }
    let run = run_pytest(&interp(), &s).unwrap();
    assert_eq!(run.exit_code, Some(1));
    let fifth = mirror_pycs(&cache, root);
    assert!(
        fourth.iter().all(|(rel, id)| fifth.get(rel) != Some(id)),
        "{fourth:?} then {fifth:?}"
    );

    // A directory gone by the command's end (a scratch copy) leaves no mirror.
    let scratch = tempfile::tempdir().unwrap();
    write(
        scratch.path(),
        "tests/test_s.py",
        "def test_s():
    pass
",
    );
    let mut s2 = spec(scratch.path(), &[], 120);
    s2.bytecode = Bytecode::Cache(cache.clone());
    assert_eq!(run_pytest(&interp(), &s2).unwrap().exit_code, Some(0));
    let scratch_mirror = cache.join(
        scratch
            .path()
            .canonicalize()
            .unwrap()
            .strip_prefix("/")
            .unwrap(),
    );
    assert!(scratch_mirror.exists());
    drop(scratch);
    drop(guard);
    assert!(!scratch_mirror.exists());
    assert!(!root.join("pkg/__pycache__").exists());
    assert!(!root.join("tests/__pycache__").exists());
}
