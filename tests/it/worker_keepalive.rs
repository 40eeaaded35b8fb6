//! The kept-alive warm worker (`--worker-keepalive`, docs/worker.md "Kept alive between
//! calls") with real processes: a server outlives the call that started it and serves the next;
//! each input that invalidates it (the interpreter, a site-packages change, a `conftest.py`, the
//! pytest configuration) changed between two calls gets a new server and the verdict of a cold
//! run; the server exits after its idle timeout; a worker directory that is not private is
//! refused; a call killed mid-run takes its run with it while the server lives on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::project::{self, json, wait_until, Project};

const SHOP: &str = "def label(item):\n    return item.name.upper()\n";

const TESTS: &str = "import warnings\n\nfrom shop import label\n\n\n\
class Item:\n    def __init__(self, name):\n        self.name = name\n\n\n\
def test_label():\n    assert label(Item(\"a\")) == \"A\"\n\n\n\
def test_label_none():\n    assert label(Item(None)) == \"\"\n\n\n\
def test_flag(flag):\n    assert flag == \"on\"\n\n\n\
def test_warns():\n    warnings.warn(\"careful\", UserWarning)\n\n\n\
def test_extra():\n    import extra_mod\n\n    assert extra_mod.X == 1\n";

/// A project with an in-project `.venv` (a copy of the interpreter, the system's packages
/// visible, so pytest is there) whose verdict each invalidating input can change: the
/// conftest's fixture, `filterwarnings` in pytest.ini, a package installed into the venv.
fn keepalive_project() -> (Project, PathBuf) {
    let p = project::project(&[
        ("shop.py", SHOP),
        ("tests/test_shop.py", TESTS),
        (
            "conftest.py",
            "import pytest\n\n\n@pytest.fixture\ndef flag():\n    return \"on\"\n",
        ),
        ("pytest.ini", "[pytest]\n"),
    ]);
    let venv = p.root.join(".venv");
    let ok = Command::new(crate::support::python())
        .args([
            "-m",
            "venv",
            "--copies",
            "--without-pip",
            "--system-site-packages",
        ])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(ok.success());
    (p, venv.join("bin/python"))
}

fn workers(p: &Project) -> PathBuf {
    p.cache.join("w")
}

/// `fix --dry-run --json` with the keep-alive (or `--worker off` when `keep` is `None`).
fn call(p: &Project, python: &Path, keep: Option<&str>) -> serde_json::Value {
    let mut args = vec![
        "fix",
        "--dry-run",
        "--json",
        "--python",
        python.to_str().unwrap(),
    ];
    match keep {
        Some(k) => args.extend(["--worker-keepalive", k]),
        None => args.extend(["--worker", "off"]),
    }
    let out = p
        .cmd(&args)
        .env("SELFDEBUG_WORKER_DIR", workers(p))
        .output()
        .unwrap();
    json(&out)
}

/// What a call concluded: its status and exit code, each failure's test, status, type and
/// message, and the combined diff.
fn verdict(j: &serde_json::Value) -> serde_json::Value {
    let failures: Vec<_> = j["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::json!([f["test"], f["status"], f["exc_type"], f["msg"]]))
        .collect();
    serde_json::json!({
        "exit_code": j["exit_code"],
        "final_status": j["final_status"],
        "failures": failures,
        "diff": j["diff"],
    })
}

/// The kept-alive server's directory (the only one under the workers' directory).
fn server_dir(p: &Project) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(workers(p))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// The pid and socket its record names, if it has one.
fn record(p: &Project) -> Option<(i32, PathBuf)> {
    let dir = workers(p);
    if !dir.is_dir() {
        return None;
    }
    let text = std::fs::read(server_dir(p).join("server.json")).ok()?;
    let r: serde_json::Value = serde_json::from_slice(&text).ok()?;
    Some((
        r["pid"].as_i64()? as i32,
        PathBuf::from(r["socket"].as_str()?),
    ))
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Waits for a ready server other than `old`; its pid.
fn wait_ready(p: &Project, old: Option<i32>) -> i32 {
    let mut pid = None;
    wait_until("a ready kept-alive server", 120, || {
        pid = record(p)
            .filter(|(pid, sock)| Some(*pid) != old && alive(*pid) && sock.exists())
            .map(|(pid, _)| pid);
        pid.is_some()
    });
    pid.unwrap()
}

/// A call served by the kept-alive server `pid`: no run went cold, no note, and the server
/// is still the one its record names, alive after the call.
fn assert_served_by(j: &serde_json::Value, p: &Project, pid: i32) {
    assert_eq!(j["phases_ms"]["worker_cold_runs"], 0, "{}", j["notes"]);
    assert_eq!(j["notes"], serde_json::json!([]));
    assert_eq!(record(p).map(|r| r.0), Some(pid));
    assert!(alive(pid));
}

/// One change of an input that invalidates a kept-alive server.
type Change<'a> = Box<dyn Fn() + 'a>;

/// Kills the test's kept-alive server when dropped, a failed assertion included (it would
/// otherwise wait out its keep-alive).
struct KillServer<'a>(&'a Project);

impl Drop for KillServer<'_> {
    fn drop(&mut self) {
        if let Some((pid, _)) = record(self.0) {
            // SAFETY: plain syscall on the test's own kept-alive server (its session).
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn each_invalidating_input_gets_a_new_server_and_a_cold_runs_verdict() {
    let (p, python) = keepalive_project();
    let _kill = KillServer(&p);
    // The first call starts the server in the background and does not wait for it.
    let first = call(&p, &python, Some("10m"));
    assert_eq!(
        first["notes"],
        serde_json::json!(["the kept-alive warm worker was starting: runs went cold meanwhile"])
    );
    let mut pid = wait_ready(&p, None);
    let second = call(&p, &python, Some("10m"));
    assert_served_by(&second, &p, pid);
    assert_eq!(verdict(&second), verdict(&first));
    assert_eq!(verdict(&second), verdict(&call(&p, &python, None)));
    // test_label_none (fixed in the dry run) and test_extra (escalated: not installed).
    assert_eq!(
        second["failures"].as_array().unwrap().len(),
        2,
        "{}",
        verdict(&second)
    );

    let site = std::fs::read_dir(p.root.join(".venv/lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    let changes: Vec<(&str, Change)> = vec![
        (
            "conftest.py",
            Box::new(|| {
                std::fs::write(
                    p.root.join("conftest.py"),
                    "import pytest\n\n\n@pytest.fixture\ndef flag():\n    return \"off\"\n",
                )
                .unwrap()
            }),
        ),
        (
            "pytest.ini",
            Box::new(|| {
                std::fs::write(
                    p.root.join("pytest.ini"),
                    "[pytest]\nfilterwarnings =\n    error\n",
                )
                .unwrap()
            }),
        ),
        (
            "site-packages",
            Box::new(|| {
                std::fs::write(site.join("extra_mod.py"), "X = 1\n").unwrap();
                let info = site.join("extra_mod-1.0.dist-info");
                std::fs::create_dir(&info).unwrap();
                std::fs::write(
                    info.join("METADATA"),
                    "Metadata-Version: 2.1\nName: extra_mod\nVersion: 1.0\n",
                )
                .unwrap();
                std::fs::write(info.join("RECORD"), "").unwrap();
            }),
        ),
        (
            "the interpreter",
            Box::new(|| {
                // Read-only: the running interpreter cannot be opened for writing (ETXTBSY),
                // and its owner may set its times through any descriptor.
                let f = std::fs::File::open(&python).unwrap();
                let later = std::fs::metadata(&python).unwrap().modified().unwrap()
                    + std::time::Duration::from_secs(5);
                f.set_modified(later).unwrap();
            }),
        ),
    ];
    let mut last = verdict(&second);
    for (what, change) in changes {
        change();
        let changed = call(&p, &python, Some("10m"));
        let cold = verdict(&call(&p, &python, None));
        assert_eq!(verdict(&changed), cold, "after changing {what}");
        // The old server was killed, a new one started for the next calls.
        assert!(!alive(pid), "the old server lives on after changing {what}");
        let notes = changed["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().unwrap().ends_with(
                    "changed since the kept-alive warm worker started: it was replaced"
                )),
            "{what}: {notes:?}"
        );
        let new = wait_ready(&p, Some(pid));
        let served = call(&p, &python, Some("10m"));
        assert_served_by(&served, &p, new);
        assert_eq!(verdict(&served), cold, "served after changing {what}");
        if what != "the interpreter" {
            assert_ne!(cold, last, "changing {what} changes the verdict");
        }
        last = cold;
        pid = new;
    }
}

#[test]
fn a_kept_alive_server_exits_after_its_idle_timeout() {
    let (p, python) = keepalive_project();
    let _kill = KillServer(&p);
    let first = call(&p, &python, Some("2s"));
    assert_eq!(first["final_status"], "partial");
    // The call is over; the server it started outlives it, then leaves after 2 s without a
    // run, taking its socket and record with it.
    let pid = wait_ready(&p, None);
    let (_, socket) = record(&p).unwrap();
    wait_until("the idle server's exit", 120, || {
        !alive(pid) && !socket.exists() && record(&p).is_none()
    });
    assert!(server_dir(&p).is_dir());
}

#[test]
fn a_worker_directory_that_is_not_private_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (p, python) = keepalive_project();
    let cold = verdict(&call(&p, &python, None));
    let dir = workers(&p);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let j = call(&p, &python, Some("10m"));
    // The process's own worker serves the runs instead; nothing is written in that directory.
    assert_eq!(
        j["notes"],
        serde_json::json!([format!(
            "the warm worker is not kept alive: {} has mode 0755, not 0700; this process's own \
             worker serves the runs",
            dir.display()
        )])
    );
    assert_eq!(j["phases_ms"]["worker_cold_runs"], 0);
    assert_eq!(verdict(&j), cold);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        // Private by mode, but another user's.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        let j = call(&p, &python, Some("10m"));
        assert_eq!(
            j["notes"],
            serde_json::json!([format!(
                "the warm worker is not kept alive: {} belongs to uid 65534, not 0; this \
                 process's own worker serves the runs",
                dir.display()
            )])
        );
        assert_eq!(verdict(&j), cold);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
}

#[test]
fn a_call_killed_mid_run_takes_its_run_along_and_the_server_lives_on() {
    let held = project::held_project();
    let p = &held.project;
    let _kill = KillServer(p);
    let args = |a: &[&str]| {
        let mut c = p.cmd(a);
        c.env("SELFDEBUG_WORKER_DIR", workers(p));
        c
    };
    let python = crate::support::python3().path;
    let py = python.to_str().unwrap();
    // A first call starts the server.
    let out = args(&[
        "fix",
        "--dry-run",
        "--json",
        "--python",
        py,
        "--worker-keepalive",
        "10m",
    ])
    .output()
    .unwrap();
    json(&out);
    let pid = wait_ready(p, None);
    std::fs::remove_file(&held.marker).unwrap();
    // The next one holds in its baseline, a child of the kept-alive server.
    held.hold("original");
    let mut child = args(&["fix", "--json", "--python", py, "--worker-keepalive", "10m"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    held.wait_for("original", 300);
    let me = child.id();
    let others = || {
        let mut v = project::processes_in(&p.root);
        v.retain(|&r| r != me);
        v
    };
    let runs = others();
    assert!(!runs.is_empty());
    for run in &runs {
        let stat = std::fs::read_to_string(format!("/proc/{run}/stat")).unwrap();
        let ppid: i32 = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(ppid, pid, "the run is the kept-alive server's child");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    wait_until("the killed call's run gone", 60, || others().is_empty());
    assert!(alive(pid));
    held.release();
    // The killed call's journal is restored by `restore`, as without the keep-alive.
    let out = p.run(&["restore"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("words.py"), project::DEMO_MODULE);
}
