//! The warm worker against real pytest: on every `fixtures/bugs` case a worker-run baseline
//! reads exactly like a cold one; a conftest that mutates `sys.path` is imported only in the
//! children; a dead worker means a cold run and a note; a hung test is killed at the timeout
//! with what it spawned, and the worker serves on.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use selfdebug::runner::{run_pytest, Interpreter, InterpreterSource, RunSpec};
use selfdebug::verdict::{self, Verdict};

use crate::support;

fn spec(root: &Path, warm: bool, timeout: u64) -> RunSpec {
    RunSpec {
        warm,
        timeout: Duration::from_secs(timeout),
        test_timeout: Some(Duration::from_secs(20)),
        ..RunSpec::new(root)
    }
}

/// What the loop reads from a run: the verdict, failures with their keys, types, messages and
/// frames (serialized, so every field counts), plus the exit code.
fn reading(root: &Path, warm: bool) -> (Option<i32>, String) {
    let run = run_pytest(&support::python3(), &spec(root, warm, 120)).expect("pytest runs");
    let v = verdict::read(&run, root);
    let shown = match &v {
        Verdict::Failed(f) => {
            let mut f = serde_json::to_value(f).unwrap();
            // Where the per-test timer's signal lands in a stuck loop (which of its lines, the
            // caret under `i < len(items)` or `len(items)`) is chance, cold or warm alike: the
            // test's own frame and the message are compared, not the loop's frames.
            for x in f.as_array_mut().unwrap() {
                if x["exc_type"] == "_selfdebug_pytest.PerTestTimeout" {
                    let frames = x["frames"].as_array_mut().unwrap();
                    frames.truncate(1);
                    frames[0]["caret"] = serde_json::Value::Null;
                    x["location"] = serde_json::Value::Null;
                }
            }
            serde_json::to_string_pretty(&f).unwrap()
        }
        other => format!("{other:?}"),
    };
    (run.exit_code, without_addresses(&shown))
}

/// Object addresses in reprs (`<Cart object at 0x7f...>`) differ between any two processes, and
/// so does the tail pytest keeps of a repr it shortens (`'Hello, <coro...fa9ffc072a0>!'`).
fn without_addresses(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(" at 0x") {
        out.push_str(&rest[..i + " at 0x".len()]);
        rest = rest[i + " at 0x".len()..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
        out.push('_');
    }
    out.push_str(rest);
    without_shortened_addresses(&out)
}

fn without_shortened_addresses(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("...") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let hex = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                .len();
        if hex >= 4 && rest[hex..].starts_with('>') {
            out.push('_');
            rest = &rest[hex..];
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn the_verdict_comparison_ignores_whole_and_shortened_addresses_only() {
    assert_eq!(
        without_addresses("'Hello, <coro...fa9ffc072a0>!' <coroutine object f at 0x7f1a2b>"),
        "'Hello, <coro..._>!' <coroutine object f at 0x_>"
    );
    // A shortened value that is not an address stays as it is.
    assert_eq!(without_addresses("'abc...def'"), "'abc...def'");
    assert_eq!(without_addresses("[1, 2, ...]"), "[1, 2, ...]");
}

#[test]
fn a_worker_run_verdict_equals_a_cold_run_verdict_on_every_fixture() {
    let bugs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bugs");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&bugs)
        .unwrap()
        .map(|e| e.unwrap().path().join("project"))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() > 50, "{} cases", cases.len());
    // Two runs a case over the whole corpus is minutes: a fixed third by default, every case
    // under SELFDEBUG_SLOW_TESTS (CI).
    cases.retain(|p| {
        let name = p.parent().and_then(|d| d.file_name()).unwrap_or_default();
        support::sampled(&name.to_string_lossy(), 3)
    });
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut differ = Vec::new();
    let mut failed_cases = 0;
    // Two threads: the worker serves concurrent runs too.
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(root) = cases.get(i) else { break };
                        let cold = reading(root, false);
                        let warm = reading(root, true);
                        out.push((root.clone(), cold, warm));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            for (root, cold, warm) in h.join().unwrap() {
                if cold.0 != Some(0) {
                    failed_cases += 1;
                }
                if cold != warm {
                    differ.push(format!("{}:\ncold {cold:?}\nwarm {warm:?}", root.display()));
                }
            }
        }
    });
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    // The baselines are real failures, not empty runs.
    assert!(failed_cases > 50, "{failed_cases}");
    assert!(selfdebug::worker::server_pid(&support::python3().path).is_some());
}

/// One test that records, at conftest import, the process, its parent and `sys.path`.
fn recording_project() -> support::project::Project {
    support::project::project(&[
        (
            "conftest.py",
            "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'extra'))\nwith open(os.environ['SEEN'], 'a') as f:\n    f.write('%d %d %d\\n' % (os.getpid(), os.getppid(), sys.path.count(sys.path[0])))\n",
        ),
        ("tests/test_a.py", "def test_a():\n    assert 1 + 1 == 2\n"),
    ])
}

#[test]
fn a_conftest_that_mutates_sys_path_is_imported_only_in_the_children() {
    let p = recording_project();
    let seen = p.cache.join("seen");
    let python = support::python3();
    let mut pids = Vec::new();
    for _ in 0..2 {
        let mut s = spec(&p.root, true, 60);
        s.env.push(("SEEN".into(), seen.clone().into()));
        let run = run_pytest(&python, &s).unwrap();
        assert_eq!(
            run.exit_code,
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.log())
        );
        pids.push(selfdebug::worker::server_pid(&python.path).expect("a live worker"));
    }
    let server = pids[0];
    assert_eq!(pids[1], server, "the same worker served both runs");
    let lines: Vec<Vec<u32>> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(|n| n.parse().unwrap()).collect())
        .collect();
    // Two imports, each in its own child of the worker, never in the worker itself, and the
    // second saw a clean sys.path (the first child's insert did not reach the parent).
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert_ne!(l[0], server);
        assert_eq!(l[1], server);
        assert_eq!(l[2], 1);
    }
    assert_ne!(lines[0][0], lines[1][0]);
}

/// The interpreter under another path (a symlink): its own worker, which the tests that kill
/// or hang one do not share with the others running beside them.
fn own_interp(p: &support::project::Project) -> Interpreter {
    let link = p.cache.join("python3");
    std::os::unix::fs::symlink(support::python3().path, &link).unwrap();
    Interpreter {
        path: link,
        source: InterpreterSource::Explicit,
    }
}

#[test]
fn a_dead_worker_means_a_cold_run_with_a_note_and_a_new_worker_next() {
    let p = recording_project();
    let seen = p.cache.join("seen");
    let python = own_interp(&p);
    let run_once = || {
        let mut s = spec(&p.root, true, 60);
        s.env.push(("SEEN".into(), seen.clone().into()));
        let run = run_pytest(&python, &s).unwrap();
        assert_eq!(
            run.exit_code,
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.log())
        );
    };
    run_once();
    let first = selfdebug::worker::server_pid(&python.path).expect("a live worker");
    // SAFETY: killing the worker process this test's runs started.
    unsafe {
        libc::kill(first as i32, libc::SIGKILL);
    }
    std::thread::sleep(Duration::from_millis(200));
    run_once();
    // Notes are per process; other tests' may be there too.
    let notes = selfdebug::worker::take_notes();
    assert!(
        notes
            .iter()
            .any(|n| n == "the warm worker had died: a new one was started"),
        "{notes:?}"
    );
    let second = selfdebug::worker::server_pid(&python.path).expect("a new worker");
    assert_ne!(second, first);
    let parents: Vec<u32> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(parents, [first, second]);
}

#[test]
fn a_hung_test_under_the_worker_is_killed_at_the_timeout_with_what_it_spawned() {
    let p = support::project::project(&[
        ("conftest.py", ""),
        (
            "tests/test_hang.py",
            "import os, subprocess, time\n\ndef test_hang():\n    child = subprocess.Popen(['sleep', '300'])\n    open(os.environ['PIDFILE'], 'w').write(str(child.pid))\n    time.sleep(300)\n",
        ),
    ]);
    let python = own_interp(&p);
    let pidfile = p.cache.join("pid");
    let mut s = spec(&p.root, true, 3);
    s.test_timeout = None;
    s.env.push(("PIDFILE".into(), pidfile.clone().into()));
    let t = Instant::now();
    let run = run_pytest(&python, &s).unwrap();
    assert!(run.timed_out);
    assert_eq!(run.exit_code, None);
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    let server = selfdebug::worker::server_pid(&python.path).expect("the worker survives");
    let spawned: i32 = std::fs::read_to_string(&pidfile).unwrap().parse().unwrap();
    support::project::wait_until("the spawned sleep dies", 5, || {
        // SAFETY: signal 0 only checks whether the process exists.
        unsafe { libc::kill(spawned, 0) != 0 }
    });
    // And the worker serves the next run.
    std::fs::write(
        p.root.join("tests/test_hang.py"),
        "def test_ok():\n    pass\n",
    )
    .unwrap();
    let run = run_pytest(&python, &spec(&p.root, true, 60)).unwrap();
    assert_eq!(
        run.exit_code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.log())
    );
    assert_eq!(selfdebug::worker::server_pid(&python.path), Some(server));
}

/// Rewrites `rel` with `text` (same size as before) and puts the old mtime back: CPython's own
/// check (mtime in whole seconds, size) would take the old `.pyc` for this source.
fn rewrite_same_size_and_mtime(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    let meta = std::fs::metadata(&p).unwrap();
    assert_eq!(meta.len(), text.len() as u64, "same size is the point");
    std::fs::write(&p, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(meta.modified().unwrap())
        .unwrap();
}

/// The search's trap: candidates of one module, each the same size and written in the same
/// second, judged one after the other by children of one warm worker with the bytecode kept
/// between runs (as in a `fix`). A stale module (the server's, a `.pyc` of the candidate
/// before) would make the wrong candidate after the right one pass; each run must run its own
/// bytes, and every one of them in a child of the worker.
#[test]
fn each_candidate_in_a_worker_child_runs_its_own_bytes_never_a_stale_module() {
    let p = support::project::project(&[
        (
            "conftest.py",
            "import os\nwith open(os.environ['SEEN'], 'a') as f:\n    f.write('%d\\n' % os.getppid())\n",
        ),
        ("calc.py", "def pick(a, b):\n    return a\n"),
        (
            "tests/test_calc.py",
            "from calc import pick\n\n\ndef test_pick_takes_the_second():\n    assert pick(1, 2) == 2\n",
        ),
    ]);
    let seen = p.cache.join("seen");
    let python = support::python3();
    let cache = p.cache.join("pycache");
    let _keep = selfdebug::bytecode::KeepBetweenRuns::new(&cache);
    let run = |want: i32| {
        let mut s = spec(&p.root, true, 60);
        s.bytecode = selfdebug::bytecode::Bytecode::Cache(cache.clone());
        s.env.push(("SEEN".into(), seen.clone().into()));
        s.extra_args = vec!["-x".into()];
        let run = run_pytest(&python, &s).unwrap();
        assert_eq!(
            run.exit_code,
            Some(want),
            "{}",
            String::from_utf8_lossy(&run.log())
        );
        selfdebug::worker::server_pid(&python.path).expect("a live worker")
    };
    let mut servers = vec![run(1)];
    for (text, want) in [("b", 0), ("a", 1), ("b", 0), ("a", 1)] {
        rewrite_same_size_and_mtime(
            &p.root,
            "calc.py",
            &format!("def pick(a, b):\n    return {text}\n"),
        );
        servers.push(run(want));
    }
    let parents: Vec<u32> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(parents, servers, "every run in a child of the worker");
}

/// A project's module with the name of one the worker holds (pytest imports `difflib` and
/// `pprint` for its assertion reports; the server preloads them): a cold `python -m pytest`
/// imports the project's (its directory is first on the path), so the worker refuses the run
/// and it goes cold with the same verdict, never the server's module in its place.
#[test]
fn a_project_module_named_like_one_the_worker_holds_runs_cold() {
    let p = support::project::project(&[
        (
            "conftest.py",
            "import os\nwith open(os.environ['SEEN'], 'a') as f:\n    f.write('%d\\n' % os.getppid())\n",
        ),
        ("difflib.py", "MARK = 'the project'\n\n\ndef ndiff(a, b):\n    return iter(())\n"),
        (
            "tests/test_mark.py",
            "import difflib\n\n\ndef test_the_project_module():\n    assert difflib.MARK == 'the project'\n",
        ),
    ]);
    let seen = p.cache.join("seen");
    let python = support::python3();
    let mut s = spec(&p.root, false, 60);
    s.env.push(("SEEN".into(), seen.clone().into()));
    let cold = run_pytest(&python, &s).unwrap();
    assert_eq!(
        cold.exit_code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&cold.log())
    );
    s.warm = true;
    let warm = run_pytest(&python, &s).unwrap();
    assert_eq!(
        warm.exit_code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&warm.log())
    );
    let server = selfdebug::worker::server_pid(&python.path).expect("a live worker");
    let parents: Vec<u32> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(parents.len(), 2, "{parents:?}");
    assert!(
        parents.iter().all(|&pp| pp != server),
        "the warm run went cold: {parents:?}, server {server}"
    );
}

/// The server loads the entry-point plugins (anyio's, xdist's where installed) through a
/// session of pytest's own, so that pytest's assertion rewriter imports them: a child's pytest
/// then neither warns that they were imported before it nor imports them again. The log of a
/// warm run says what a cold run's says.
#[test]
fn entry_point_plugins_preloaded_by_the_worker_give_the_cold_run_log() {
    let p = recording_project();
    let seen = p.cache.join("seen");
    let python = support::python3();
    let summary = |warm: bool| {
        let mut s = spec(&p.root, warm, 60);
        s.env.push(("SEEN".into(), seen.clone().into()));
        let run = run_pytest(&python, &s).unwrap();
        let log = String::from_utf8_lossy(&run.stdout).into_owned();
        assert_eq!(run.exit_code, Some(0), "{log}");
        assert!(!log.contains("cannot be rewritten"), "{log}");
        let last = log.lines().last().unwrap_or_default().to_string();
        // The time pytest prints differs between any two runs.
        last.split(" in ").next().unwrap().to_string()
    };
    assert_eq!(summary(true), summary(false));
    let server = selfdebug::worker::server_pid(&python.path).expect("a live worker");
    let first: u32 = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(first, server, "the first run was warm");
}
