//! A run SIGKILLed after patching leaves a journal: it is detected, blocks the next run, and
//! `selfdebug restore` brings the files back, verified by hash.
//!
//! The killed run is this test binary itself, re-run with `SELFDEBUG_TEST_CHILD_ROOT` set: then
//! `child_patches_and_waits_to_be_killed` begins a journal, patches, signals readiness with a
//! file and sleeps until it is killed.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use selfdebug::journal::{self, Journal, JournalError};
use tempfile::TempDir;

use crate::support::own_cache::own_cache;

const CHILD_ROOT: &str = "SELFDEBUG_TEST_CHILD_ROOT";
const CHILD_READY: &str = "SELFDEBUG_TEST_CHILD_READY";

#[test]
fn child_patches_and_waits_to_be_killed() {
    let (Some(root), Some(ready)) = (std::env::var_os(CHILD_ROOT), std::env::var_os(CHILD_READY))
    else {
        return; // An ordinary test run: only the killed-run test starts this as a child.
    };
    let root = PathBuf::from(root);
    let mut j = Journal::begin(&root, None).unwrap();
    j.write(&root.join("m.py"), b"def f(x):\n    return x  # patched\n")
        .unwrap();
    j.write(&root.join("pkg/n.py"), b"half-written candidate\n")
        .unwrap();
    fs::write(ready, std::process::id().to_string()).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, i64, i64, u32)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| !e.path().ends_with(".git/objects"))
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let m = e.metadata().unwrap();
            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
            (
                rel,
                (
                    fs::read(e.path()).unwrap(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.mode(),
                ),
            )
        })
        .collect()
}

fn selfdebug(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_selfdebug"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn project(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    fs::write(root.join("m.py"), "def f(x):\n    return x.y\n").unwrap();
    fs::create_dir(root.join("pkg")).unwrap();
    fs::write(root.join("pkg/n.py"), "n = 1\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial"]);
    // The user's uncommitted edit, which must come back too.
    fs::write(root.join("pkg/n.py"), "n = 2  # local edit\n").unwrap();
    fs::write(root.join("untracked.txt"), "mine\n").unwrap();
    for f in ["m.py", "pkg/n.py", "untracked.txt"] {
        let file = fs::File::options().write(true).open(root.join(f)).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(600))
            .unwrap();
    }
}

/// Starts [`child_patches_and_waits_to_be_killed`] on `root` and returns once it has patched.
fn patching_child(root: &Path, cache: &Path) -> std::process::Child {
    let ready = cache.join("ready");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "restore_killed::child_patches_and_waits_to_be_killed",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_ROOT, root)
        .env(CHILD_READY, &ready)
        .env("XDG_CACHE_HOME", cache)
        .env("TMPDIR", cache)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the child never got ready");
        assert!(child.try_wait().unwrap().is_none(), "the child exited");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn a_killed_run_is_detected_and_restored_by_the_cli() {
    // journal::pending and Journal::begin find the journal through XDG_CACHE_HOME.
    let Some(cache) = own_cache() else { return };
    let dir = TempDir::new().unwrap();
    let root = dir.path().canonicalize().unwrap();
    project(&root);
    let before = snapshot(&root);
    let status_before = git(&root, &["status", "--porcelain"]);
    let original_hash = git(&root, &["hash-object", "m.py"]).trim().to_string();
    let mut child = patching_child(&root, &cache);

    // While it lives: the lock names it, and restore refuses with exit 6.
    match Journal::begin(&root, None) {
        Err(JournalError::Locked { pid, .. }) => assert_eq!(pid, child.id()),
        other => panic!("expected Locked, got {other:?}"),
    }
    let (code, _, err) = selfdebug(&cache, &["restore", "--root", root.to_str().unwrap()]);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains(&format!("pid {}", child.id())), "{err}");

    child.kill().unwrap(); // SIGKILL: no destructor runs.
    child.wait().unwrap();
    assert_eq!(
        fs::read(root.join("m.py")).unwrap(),
        b"def f(x):\n    return x  # patched\n"
    );

    let pending = journal::pending(&root).unwrap().expect("a pending journal");
    assert_eq!(pending.pid, child.id());
    assert_eq!(
        pending.files,
        vec![PathBuf::from("m.py"), PathBuf::from("pkg/n.py")]
    );
    match Journal::begin(&root, None) {
        Err(e @ JournalError::Pending { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("selfdebug restore"), "{msg}");
            assert!(msg.contains("m.py"), "{msg}");
        }
        other => panic!("expected Pending, got {other:?}"),
    }
    // Nothing of the run is left in the work tree besides the patched bytes (the refs in
    // .git/refs/selfdebug/ keep the originals until the restore).
    let work_tree = |s: &BTreeMap<PathBuf, _>| -> Vec<PathBuf> {
        s.keys()
            .filter(|p| !p.starts_with(".git"))
            .cloned()
            .collect()
    };
    assert_eq!(work_tree(&before), work_tree(&snapshot(&root)));
    assert_eq!(
        git(&root, &["for-each-ref", "refs/selfdebug/"])
            .lines()
            .count(),
        2
    );

    let (code, out, err) = selfdebug(
        &cache,
        &["restore", "--root", root.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(doc["restored"], true);
    assert_eq!(doc["files"][0]["path"], "m.py");
    assert_eq!(doc["files"][0]["hash"], original_hash.as_str());
    assert_eq!(doc["files"][0]["source"], "journal_copy");
    assert_eq!(doc["files"][0]["action"], "rewritten");
    assert_eq!(doc["files"][1]["path"], "pkg/n.py");

    assert_eq!(before, snapshot(&root));
    assert_eq!(status_before, git(&root, &["status", "--porcelain"]));
    assert_eq!(
        git(&root, &["for-each-ref", "refs/selfdebug/"]),
        "",
        "the refs are removed"
    );
    assert!(journal::pending(&root).unwrap().is_none());
    drop(Journal::begin(&root, None).unwrap());

    let (code, out, _) = selfdebug(&cache, &["restore", "--root", root.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to restore"), "{out}");
}

/// After a kill, an editor saves one of the run's files before anyone runs `restore`: its bytes
/// are neither the original nor any the run wrote (the journal lists those), so `restore`
/// leaves that file as the editor made it (action `left`, the original kept in its backup
/// copy, named in `backups` and a warning) and restores the other file as usual.
#[test]
fn restore_after_a_kill_leaves_a_file_an_editor_saved_since() {
    let Some(cache) = own_cache() else { return };
    let dir = TempDir::new().unwrap();
    let root = dir.path().canonicalize().unwrap();
    project(&root);
    let n_before = fs::read(root.join("pkg/n.py")).unwrap();
    let mut child = patching_child(&root, &cache);
    child.kill().unwrap();
    child.wait().unwrap();
    let theirs = b"def f(x):\n    return x.y  # the editor's\n";
    fs::write(root.join("m.py"), theirs).unwrap();

    let (code, out, err) = selfdebug(
        &cache,
        &["restore", "--root", root.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, 0, "{err}");
    crate::support::assert_valid("restore.schema.json", None, &[out.as_bytes()]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let actions: Vec<(&str, &str)> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["action"].as_str().unwrap()))
        .collect();
    assert_eq!(actions, [("m.py", "left"), ("pkg/n.py", "rewritten")]);
    assert_eq!(fs::read(root.join("m.py")).unwrap(), theirs);
    assert_eq!(fs::read(root.join("pkg/n.py")).unwrap(), n_before);
    let backups = doc["backups"].as_array().unwrap();
    assert_eq!(backups.len(), 1, "{doc}");
    assert_eq!(backups[0]["path"], "m.py");
    assert_eq!(
        fs::read(backups[0]["backup"].as_str().unwrap()).unwrap(),
        b"def f(x):\n    return x.y\n"
    );
    let warning = doc["warnings"][0].as_str().unwrap();
    assert!(
        warning.starts_with("m.py was changed by another program after the run: left as it is, its original kept at "),
        "{warning}"
    );
    assert!(journal::pending(&root).unwrap().is_none());
}

#[test]
fn restore_cli_human_output_help_and_bad_root() {
    // journal::pending and Journal::begin find the journal through XDG_CACHE_HOME.
    let Some(cache) = own_cache() else { return };
    let dir = TempDir::new().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::write(root.join("a.py"), "a = 1\n").unwrap();

    // A journal left behind without a kill: leak it past its Drop.
    let mut j = Journal::begin(&root, Some(cache.as_path())).unwrap();
    j.write(&root.join("a.py"), b"a = None\n").unwrap();
    let journal_file = j.journal_path();
    let lock = journal_file.with_file_name("lock");
    std::mem::forget(j);
    // Make the lock stale: as if its pid had died.
    fs::write(&lock, r#"{"pid":0,"since":0,"run_id":"gone"}"#).unwrap();

    let (code, out, err) = selfdebug(&cache, &["restore", "--root", root.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("restored 1 file of run "), "{out}");
    assert!(out.contains("a.py"), "{out}");
    assert!(out.contains("verified"), "{out}");
    assert_eq!(fs::read(root.join("a.py")).unwrap(), b"a = 1\n");
    assert!(!journal_file.exists());
    assert!(!lock.exists());

    let (code, out, _) = selfdebug(
        &cache,
        &["restore", "--root", root.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["restored"], false);
    assert_eq!(doc["files"], serde_json::json!([]));

    let (code, out, _) = selfdebug(&cache, &["restore", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes of `restore`"), "{out}");
    assert!(out.contains("  6  a live selfdebug run"), "{out}");

    let (code, _, err) = selfdebug(&cache, &["restore", "--root", "/nonexistent/dir"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a directory"), "{err}");
}
