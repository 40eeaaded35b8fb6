//! `selfdebug probe` end to end on a copy of the demo project, with real pytest.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support;

fn real_python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Runs the binary with `args`; the bytecode cache goes under the target dir, not `~/.cache`.
fn selfdebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_selfdebug"))
        .args(args)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        )
        .stdin(Stdio::null())
        .output()
        .expect("run selfdebug")
}

/// Every path under `root` with its content hash and mtime.
fn snapshot(root: &Path) -> BTreeMap<String, (String, Option<std::time::SystemTime>)> {
    fn walk(
        root: &Path,
        dir: &Path,
        out: &mut BTreeMap<String, (String, Option<std::time::SystemTime>)>,
    ) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(rel + "/", (String::new(), None));
                walk(root, &p, out);
            } else {
                let h = selfdebug::probe::guard::hash(&fs::read(&p).unwrap());
                out.insert(rel, (h, fs::metadata(&p).unwrap().modified().ok()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn demo_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("demo");
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/projects/demo"),
        &root,
    );
    (dir, root)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn json_output_without_a_log() {
    let (_dir, root) = demo_copy();
    let before = snapshot(&root);
    let py = real_python();
    let out = selfdebug(&["probe", "--root", s(&root), "--json", "--python", s(&py)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let v = support::project::json(&out);
    assert_eq!(v["schema_version"], 1);
    // The subcommand always runs the probe (the plugin's facts are `fix`'s baseline's).
    assert_eq!(v["source"], "probe");
    assert_eq!(v["file"], "utils/demo.py");
    assert_eq!(v["path"], s(&root.join("utils/demo.py")));
    assert_eq!(v["line"], 6);
    assert_eq!(v["statement_line"], 6);
    assert_eq!(v["injected_at_line"], 6);
    assert_eq!(v["injection"], "before_statement");
    assert_eq!(v["fired"], true);
    assert_eq!(v["hits"], 1);
    assert_eq!(v["module"], "utils.demo");
    assert_eq!(v["module_file"], s(&root.join("utils/demo.py")));
    assert_eq!(v["test"], "tests/test_demo.py::test_headline_without_title");
    assert_eq!(v["exc_type"], "AttributeError");
    assert_eq!(v["msg"], "'NoneType' object has no attribute 'split'");
    assert_eq!(
        v["locals"],
        serde_json::json!([{"name": "text", "type": "NoneType", "repr": "None", "truncated": false}])
    );
    // The receiver of the failing attribute carries its dir() (for Python's own suggestion);
    // the names depend on the Python version, so they are checked apart.
    let mut receiver = v["exprs"][1].clone();
    let dir = receiver.as_object_mut().unwrap().remove("dir").unwrap();
    assert_eq!(dir["is_self"], false);
    let names: Vec<&str> = dir["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"__bool__") && !names.contains(&"split"),
        "{names:?}"
    );
    assert_eq!(dir["total"], names.len());
    assert_eq!(
        receiver,
        serde_json::json!({
            "text": "text", "kind": "name", "range": [161, 165], "line": 6,
            "value": {"type": "NoneType", "repr": "None", "truncated": false},
            "error": null, "is_none": true
        })
    );
    assert_eq!(v["exprs"][0]["text"], "text.split");
    assert_eq!(v["exprs"][0]["error"]["type"], "AttributeError");
    let t = &v["test_outcome"];
    assert_eq!(
        (
            &t["exit_code"],
            &t["timed_out"],
            &t["passed"],
            &t["reproduced"]
        ),
        (
            &serde_json::json!(1),
            &serde_json::json!(false),
            &serde_json::json!(false),
            &serde_json::json!(true)
        )
    );
    assert_eq!(v["interpreter"], s(&py));
    assert!(v["duration_ms"].as_u64().unwrap() >= t["duration_ms"].as_u64().unwrap());
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "duration_ms",
            "exc_type",
            "exit_code",
            "exprs",
            "file",
            "file_hash",
            "fired",
            "hits",
            "injected_at_line",
            "injection",
            "interpreter",
            "line",
            "locals",
            "module",
            "module_file",
            "msg",
            "path",
            "probe_line",
            "python_version",
            "schema_version",
            "source",
            "statement",
            "statement_line",
            "test",
            "test_outcome"
        ]
    );
    // Nothing in the project changed: contents, mtimes, no new files or directories.
    assert_eq!(snapshot(&root), before);
}

#[test]
fn human_output_from_a_log_with_module() {
    let (dir, root) = demo_copy();
    let py = real_python();
    // A log captured the way a user would, kept outside the project.
    let log = Command::new(&py)
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let log_path = dir.path().join("pytest.log");
    fs::write(&log_path, &log.stdout).unwrap();
    let before = snapshot(&root);
    let out = selfdebug(&[
        "probe",
        s(&log_path),
        "--root",
        s(&root),
        "--module",
        "tests/test_demo.py::test_headline_without_title",
        "--python",
        s(&py),
        "--timeout",
        "60",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head: Vec<&str> = stdout.lines().take(6).collect();
    assert_eq!(
        head,
        [
            "probe of utils/demo.py:6 for tests/test_demo.py::test_headline_without_title",
            "  AttributeError: 'NoneType' object has no attribute 'split'",
            "  statement at line 6:",
            "      words = text.split()",
            "  probe inserted before line 6 (before the statement)",
            "",
        ]
    );
    assert!(stdout.contains("\n  None: text\n"), "{stdout}");
    assert!(
        stdout.contains("\n  text        NoneType  None\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("probed run: failed with AttributeError (reproduced; exit 1,"),
        "{stdout}"
    );
    assert!(
        stdout.contains("utils/demo.py restored byte for byte (fnv1a64:"),
        "{stdout}"
    );
    assert_eq!(snapshot(&root), before);
}

#[test]
fn bad_input_exits_2_and_touches_nothing() {
    let (dir, root) = demo_copy();
    let py = real_python();
    let before = snapshot(&root);
    let missing = dir.path().join("no-such.log");
    let out = selfdebug(&["probe", s(&missing), "--root", s(&root), "--python", s(&py)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("selfdebug: error: cannot read "), "{err}");
    assert!(out.stdout.is_empty());

    let junk = dir.path().join("junk.log");
    fs::write(&junk, "hello\n").unwrap();
    let out = selfdebug(&["probe", s(&junk), "--root", s(&root), "--python", s(&py)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither pytest output"));

    let out = selfdebug(&[
        "probe",
        "--root",
        s(&root),
        "--python",
        s(&py),
        "--module",
        "tests/test_demo.py::nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "selfdebug: error: pytest could not run the tests (exit 4): \
         ERROR: not found: PLACEHOLDER\n"
            .replace("PLACEHOLDER", s(&root.join("tests/test_demo.py::nope")))
    );

    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tracebacks/demo/tb-long.txt");
    let out = selfdebug(&[
        "probe",
        s(&log),
        "--root",
        s(&root),
        "--python",
        s(&py),
        "--module",
        "tests/x.py::y",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "selfdebug: error: --module tests/x.py::y: no such failure (failures: \
         tests/test_demo.py::test_headline_without_title)\n"
    );

    let out = selfdebug(&["probe", "--root", s(&missing), "--python", s(&py)]);
    assert_eq!(out.status.code(), Some(2));

    let out = selfdebug(&[
        "probe",
        "--root",
        s(&root),
        "--python",
        s(&dir.path().join("nopython")),
    ]);
    assert_eq!(out.status.code(), Some(6));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such interpreter"));

    assert_eq!(snapshot(&root), before);
}

#[test]
fn nothing_failed_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("test_ok.py"), "def test_ok():\n    assert True\n").unwrap();
    let before = snapshot(root);
    let out = selfdebug(&["probe", "--root", s(root), "--python", s(&real_python())]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(snapshot(root), before);
}

/// Ctrl-C while the probed test runs: pytest's process group is killed, the file is restored,
/// and the exit code says the tool could not finish.
#[test]
fn interrupt_restores_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    fs::create_dir_all(&root).unwrap();
    fs::write(
        root.join("slow.py"),
        "import os, time\n\n\ndef f(x):\n    n = len(x)\n    if os.environ.get('SD_HANG'):\n        with open(os.environ['SD_PIDFILE'], 'w') as fh:\n            fh.write(str(os.getpid()))\n        time.sleep(1000)\n    return n\n",
    )
    .unwrap();
    fs::write(
        root.join("test_slow.py"),
        "import os\nfrom slow import f\n\ndef test_f():\n    assert f('abc' if os.environ.get('SD_HANG') else None) == 3\n",
    )
    .unwrap();
    let py = real_python();
    let log = Command::new(&py)
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let log_path = dir.path().join("pytest.log");
    fs::write(&log_path, &log.stdout).unwrap();
    let pidfile = dir.path().join("pytest.pid");
    let before = snapshot(&root);

    let child = Command::new(env!("CARGO_BIN_EXE_selfdebug"))
        .args([
            "probe",
            s(&log_path),
            "--root",
            s(&root),
            "--python",
            s(&py),
        ])
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        )
        .env("SD_HANG", "1")
        .env("SD_PIDFILE", &pidfile)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the test is inside its sleep (it wrote its pid), with the probe in the file.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !pidfile.exists() {
        assert!(std::time::Instant::now() < until, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(fs::read_to_string(root.join("slow.py"))
        .unwrap()
        .contains("_selfdebug_probe"));
    let pytest_pid: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: plain syscall to the child we spawned.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "selfdebug: error: interrupted\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(snapshot(&root), before);
    // SAFETY: signal 0 only checks for existence.
    let alive = unsafe { libc::kill(pytest_pid, 0) } == 0
        && !fs::read_to_string(format!("/proc/{pytest_pid}/stat"))
            .unwrap_or_default()
            .contains(") Z");
    assert!(!alive, "pytest {pytest_pid} survived the interrupt");
}
