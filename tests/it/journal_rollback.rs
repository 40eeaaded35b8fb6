//! The journal on real trees: rollback of a dirty git tree byte for byte, commit, a non-git
//! project with lost copies, the lock, and the refusals.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use selfdebug::journal::{self, Action, Journal, JournalError, Origin};
use tempfile::TempDir;

use crate::support::own_cache::own_cache;

/// A test's dirs; the journal finds its cache dir through XDG_CACHE_HOME, so each test runs in
/// a process of its own (see [`own_cache`]).
struct Env {
    cache: PathBuf,
    project: TempDir,
    backups: TempDir,
}

impl Env {
    /// `None` in the ordinary run, which has just run the calling test in its own process.
    fn new() -> Option<Env> {
        Some(Env {
            cache: own_cache()?,
            project: TempDir::new().unwrap(),
            backups: TempDir::new().unwrap(),
        })
    }

    fn root(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    fn begin(&self) -> Journal {
        Journal::begin(&self.root(), Some(self.backups.path())).unwrap()
    }

    /// The journal copies (`files/<n>.orig`) under the cache dir.
    fn journal_copy(&self, n: usize) -> PathBuf {
        let journals = self.cache.join("selfdebug/journals");
        let dir = fs::read_dir(&journals)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        dir.join("files").join(format!("{n}.orig"))
    }
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        // Read-only commands must not refresh the index behind our back.
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// An mtime in the past, so a rewrite within the test is always visible.
fn age(path: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

#[derive(Debug, PartialEq, Eq)]
struct Stat {
    bytes: Vec<u8>,
    mtime: (i64, i64),
    mode: u32,
}

/// Every file and dir under `dir` (with `.git`, but not `.git/objects`, where the journal's
/// blobs stay as unreachable objects until `git gc`): bytes, mtime and mode of files, mode of
/// dirs, the target of symlinks.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Stat> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| !e.path().ends_with(".git/objects"))
    {
        let entry = entry.unwrap();
        let meta = entry.path().symlink_metadata().unwrap();
        let rel = entry.path().strip_prefix(dir).unwrap().to_path_buf();
        let bytes = if meta.is_file() {
            fs::read(entry.path()).unwrap()
        } else if meta.is_symlink() {
            fs::read_link(entry.path())
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else {
            Vec::new()
        };
        let mtime = if meta.is_file() {
            (meta.mtime(), meta.mtime_nsec())
        } else {
            (0, 0)
        };
        out.insert(
            rel,
            Stat {
                bytes,
                mtime,
                mode: meta.mode(),
            },
        );
    }
    out
}

/// A git repository with a modified tracked file, a staged change, an untracked file and an
/// ignored file.
fn dirty_repo(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    write(&root.join("src/a.py"), "def a():\n    return 1\n");
    write(&root.join("src/b.py"), "def b(x):\n    return x.split()\n");
    write(&root.join("notes.txt"), "committed notes\n");
    write(&root.join(".gitignore"), "*.log\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial"]);
    write(
        &root.join("src/b.py"),
        "def b(x):\n    # the user's uncommitted edit\n    return x.split()\n",
    );
    write(&root.join("notes.txt"), "staged notes\n");
    git(root, &["add", "notes.txt"]);
    write(&root.join("scratch.py"), "print('untracked')\n");
    write(&root.join("debug.log"), "ignored\n");
    for f in [
        "src/a.py",
        "src/b.py",
        "notes.txt",
        "scratch.py",
        "debug.log",
    ] {
        age(&root.join(f), 3600);
    }
}

fn refs(root: &Path) -> Vec<String> {
    String::from_utf8(git(
        root,
        &["for-each-ref", "--format=%(refname)", "refs/selfdebug/"],
    ))
    .unwrap()
    .lines()
    .map(str::to_string)
    .collect()
}

fn hash_object(root: &Path, path: &Path) -> String {
    String::from_utf8(git(root, &["hash-object", path.to_str().unwrap()]))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn rollback_of_a_dirty_git_tree_is_byte_for_byte() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    dirty_repo(&root);
    let before = snapshot(&root);
    let status_before = git(&root, &["status", "--porcelain", "--ignored"]);
    let hash_b = hash_object(&root, &root.join("src/b.py"));
    let hash_s = hash_object(&root, &root.join("scratch.py"));

    let mut j = env.begin();
    let b = root.join("src/b.py");
    let s = root.join("scratch.py");
    j.write(
        &b,
        b"def b(x):\n    if x is None:\n        return []\n    return x.split()\n",
    )
    .unwrap();
    j.write(&s, b"print('patched')\n").unwrap();
    // Idempotent: a second write keeps the first original.
    j.write(&b, b"second patch\n").unwrap();
    assert_eq!(j.files(), vec![b.clone(), s.clone()]);
    assert_eq!(
        j.original(&b),
        before.get(Path::new("src/b.py")).map(|s| &s.bytes[..])
    );
    assert_eq!(fs::read(&b).unwrap(), b"second patch\n");

    // During the run: one ref per file, each pointing at a blob with the original bytes.
    let names = refs(&root);
    assert_eq!(
        names,
        vec![
            format!("refs/selfdebug/{}/0", j.run_id()),
            format!("refs/selfdebug/{}/1", j.run_id())
        ]
    );
    assert_eq!(
        git(&root, &["cat-file", "blob", &names[0]]),
        before[Path::new("src/b.py")].bytes
    );
    assert_eq!(
        git(&root, &["cat-file", "blob", &names[1]]),
        before[Path::new("scratch.py")].bytes
    );
    // The journal names both files, with their hashes, before the rollback.
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(j.journal_path()).unwrap()).unwrap();
    assert!(j.journal_path().starts_with(&env.cache));
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["files"][0]["path"], "src/b.py");
    assert_eq!(doc["files"][0]["hash"], hash_b.as_str());
    assert_eq!(doc["files"][1]["hash"], hash_s.as_str());
    assert_eq!(doc["files"][0]["git_ref"], names[0].as_str());

    let report = j.rollback().unwrap();
    assert_eq!(report.files.len(), 2);
    assert_eq!(report.files[0].path, Path::new("src/b.py"));
    assert_eq!(report.files[0].hash, hash_b);
    assert_eq!(report.files[0].source, Origin::JournalCopy);
    assert_eq!(report.files[0].action, Action::Rewritten);
    assert_eq!(report.files[1].hash, hash_s);

    // Every file (with .git/index, HEAD, refs, config) identical, mtimes included.
    let after = snapshot(&root);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, stat) in &before {
        assert_eq!(Some(stat), after.get(path), "{} changed", path.display());
    }
    assert_eq!(
        status_before,
        git(&root, &["status", "--porcelain", "--ignored"])
    );
    assert!(refs(&root).is_empty());
    assert!(!root.join(".git/refs/selfdebug").exists());
    // Restored files need no backup: none is left, and none is reported.
    assert!(report.backups.is_empty());
    let backups = env.backups.path().join("agent-self-debugger-loop");
    assert_eq!(fs::read_dir(&backups).unwrap().count(), 0);
    // The journal is gone and the lock released.
    assert!(journal::pending(&root).unwrap().is_none());
    drop(env.begin());
}

#[test]
fn commit_keeps_new_content_and_restores_mtime_of_unchanged_files() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    dirty_repo(&root);
    let a = root.join("src/a.py");
    let b = root.join("src/b.py");
    let a_before = fs::metadata(&a).unwrap();
    let b_original = fs::read(&b).unwrap();
    let b_mtime = fs::metadata(&b).unwrap().modified().unwrap();

    let mut j = env.begin();
    // A candidate that was tried and given up: same bytes again, but a new mtime.
    j.write(&a, &fs::read(&a).unwrap()).unwrap();
    assert_ne!(fs::metadata(&a).unwrap().mtime(), a_before.mtime());
    j.write(&b, b"fixed\n").unwrap();
    assert_eq!(refs(&root).len(), 2);
    let report = j.commit().unwrap();

    assert_eq!(fs::read(&b).unwrap(), b"fixed\n");
    assert_ne!(fs::metadata(&b).unwrap().modified().unwrap(), b_mtime);
    let a_after = fs::metadata(&a).unwrap();
    assert_eq!(
        (a_after.mtime(), a_after.mtime_nsec()),
        (a_before.mtime(), a_before.mtime_nsec())
    );
    assert!(!report.files[0].changed);
    assert!(report.files[1].changed);
    assert!(refs(&root).is_empty());
    assert!(journal::pending(&root).unwrap().is_none());

    // The original design's backup copy stays for the changed file only, with the original
    // bytes; the unchanged file's copy is gone.
    assert_eq!(report.files[0].backup, None);
    let left: Vec<PathBuf> = fs::read_dir(env.backups.path().join("agent-self-debugger-loop"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left, [report.files[1].backup.clone().unwrap()]);
    let backup = report.files[1].backup.clone().unwrap();
    assert!(backup.starts_with(env.backups.path().join("agent-self-debugger-loop")));
    let name = backup.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("b.py.") && name.ends_with(".bak"),
        "{name}"
    );
    assert_eq!(fs::read(&backup).unwrap(), b_original);
}

#[test]
fn non_git_rollback_falls_back_to_the_backup_copy_and_recreates_deleted_files() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    write(&root.join("pkg/mod.py"), "x = 1\r\n");
    write(&root.join("pkg/other.py"), "y = 2\n");
    write(&root.join("unrelated.py"), "z = 3\n");
    fs::set_permissions(root.join("pkg/mod.py"), fs::Permissions::from_mode(0o640)).unwrap();
    for f in ["pkg/mod.py", "pkg/other.py", "unrelated.py"] {
        age(&root.join(f), 7200);
    }
    let before = snapshot(&root);

    let mut j = env.begin();
    assert!(j.warnings().is_empty(), "{:?}", j.warnings());
    j.write(&root.join("pkg/mod.py"), b"x = None\r\n").unwrap();
    // Relative paths are taken from the root.
    j.write(Path::new("pkg/other.py"), b"y = None\n").unwrap();
    // The write kept the permissions.
    assert_eq!(
        fs::metadata(root.join("pkg/mod.py")).unwrap().mode() & 0o777,
        0o640
    );
    fs::remove_file(root.join("pkg/other.py")).unwrap();
    // A wiped journal copy: the backup copy is used.
    fs::remove_file(env.journal_copy(0)).unwrap();

    let report = j.rollback().unwrap();
    assert_eq!(report.files[0].source, Origin::BackupCopy);
    assert_eq!(report.files[0].action, Action::Rewritten);
    assert_eq!(report.files[1].source, Origin::JournalCopy);
    assert_eq!(report.files[1].action, Action::Recreated);
    assert_eq!(before, snapshot(&root));
}

#[test]
fn git_blob_is_the_last_copy_on_disk() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    dirty_repo(&root);
    let before = snapshot(&root);
    let mut j = env.begin();
    j.write(&root.join("src/a.py"), b"broken\n").unwrap();
    fs::remove_file(env.journal_copy(0)).unwrap();
    fs::remove_dir_all(env.backups.path().join("agent-self-debugger-loop")).unwrap();
    let report = j.rollback().unwrap();
    assert_eq!(report.files[0].source, Origin::GitBlob);
    assert_eq!(before, snapshot(&root));
}

#[test]
fn dropping_an_unfinished_journal_rolls_back() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    write(&root.join("m.py"), "original\n");
    age(&root.join("m.py"), 60);
    let before = snapshot(&root);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut j = env.begin();
        j.write(&root.join("m.py"), b"half-patched\n").unwrap();
        panic!("the fix loop failed half-way");
    }));
    assert!(result.is_err());
    assert_eq!(before, snapshot(&root));
    assert!(journal::pending(&root).unwrap().is_none());
}

#[test]
fn a_second_run_on_the_same_root_is_locked_out() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    let first = env.begin();
    match Journal::begin(&root, Some(env.backups.path())) {
        Err(JournalError::Locked { pid, .. }) => assert_eq!(pid, std::process::id()),
        other => panic!("expected Locked, got {other:?}"),
    }
    let err = Journal::begin(&root, None).unwrap_err().to_string();
    assert!(
        err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(matches!(
        journal::pending(&root),
        Err(JournalError::Locked { .. })
    ));
    drop(first);
    drop(env.begin());
}

#[test]
fn refuses_paths_outside_through_symlinks_and_in_virtualenvs() {
    let Some(env) = Env::new() else { return };
    let root = env.root();
    let outside = TempDir::new().unwrap();
    let secret = outside.path().join("secret.py");
    write(&secret, "keep me\n");
    write(&outside.path().join("lib/x.py"), "keep me too\n");
    std::os::unix::fs::symlink(&secret, root.join("link.py")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("lib"), root.join("lib")).unwrap();
    write(&root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n");
    write(
        &root.join(".venv/lib/python3.11/site-packages/dep/__init__.py"),
        "v = 1\n",
    );
    write(&root.join("env/pyvenv.cfg"), "home = /usr/bin\n");
    write(&root.join("env/tool.py"), "t = 1\n");
    write(&root.join("vendor/site-packages/y.py"), "y = 1\n");
    write(&root.join("ok.py"), "ok = 1\n");
    let before = snapshot(&root);

    let mut j = env.begin();
    let cases: [(PathBuf, &str); 7] = [
        (secret.clone(), "outside the project root"),
        (root.join("../escape.py"), "outside the project root"),
        (root.join("link.py"), "symlink leading out"),
        (root.join("lib/x.py"), "symlink leading out"),
        (
            root.join(".venv/lib/python3.11/site-packages/dep/__init__.py"),
            "site-packages",
        ),
        (root.join("env/tool.py"), "virtualenv"),
        (root.join("vendor/site-packages/y.py"), "site-packages"),
    ];
    for (path, why) in cases {
        match j.write(&path, b"pwned\n") {
            Err(e @ JournalError::Refused { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(why), "{}: {msg}", path.display());
                assert!(msg.starts_with("refusing to write "), "{msg}");
            }
            other => panic!("{}: expected a refusal, got {other:?}", path.display()),
        }
    }
    assert!(j.files().is_empty());
    j.write(&root.join("ok.py"), b"ok = 2\n").unwrap();
    j.rollback().unwrap();
    assert_eq!(before, snapshot(&root));
    assert_eq!(fs::read(&secret).unwrap(), b"keep me\n");
}
