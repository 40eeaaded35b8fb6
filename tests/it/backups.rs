//! Old backup copies are pruned at the start of a run: by the timestamp their names record
//! (not their mtime, which is the original file's), after `--backup-max-age` days (default 14,
//! also `backup-max-age` in the config file, 0 keeps them all), never one a journal still lists.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use selfdebug::journal::{self, Journal};
use support::own_cache::own_cache;
use support::project::{json, project};

const DAY: u64 = 86_400;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A file in `dir` with `mtime`.
fn put(dir: &Path, name: &str, mtime: SystemTime) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, "old bytes\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    path
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

#[test]
fn old_backups_are_pruned_by_their_recorded_age_at_the_start_of_a_run() {
    let p = project(&[
        ("m.py", "def dump(d):\n    return json.dumps(d)\n"),
        (
            "test_m.py",
            "import m\n\n\ndef test_dump():\n    assert m.dump({}) == \"{}\"\n",
        ),
    ]);
    // The default backup dir is the per-user folder in the run's temp dir.
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let user = p.cache.join("tmp").join(format!("selfdebug-{uid}"));
    let dir = user.join("agent-self-debugger-loop");
    fs::create_dir_all(&dir).unwrap();
    for d in [&user, &dir] {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(d, fs::Permissions::from_mode(0o700)).unwrap();
    }
    let now = now_secs();
    let then = |days_ago: f64| now - (days_ago * DAY as f64) as u64;
    let recent = SystemTime::now();
    let ancient = SystemTime::now() - Duration::from_secs(400 * DAY);
    // Old by name: removed, whatever the mtime says.
    put(&dir, &format!("a.py.{}.bak", then(20.0)), recent);
    put(&dir, &format!("a.py.{}.1.bak", then(15.0)), recent);
    // Recent by name, with an old mtime (the original's): kept.
    put(&dir, &format!("b.py.{}.bak", then(2.0)), ancient);
    put(&dir, &format!("c.py.{}.bak", then(0.5)), ancient);
    // Not a backup copy's name: never touched.
    put(&dir, "notes.txt", ancient);
    put(&dir, "d.py.bak", ancient);

    let out = p.run(&["fix", "--json"]);
    support::assert_exit(&out, 0);
    let v = json(&out);
    assert_eq!(
        v["notes"],
        serde_json::json!([format!(
            "removed 2 backup copies older than 14 days from {} (--backup-max-age)",
            dir.display()
        )])
    );
    let own = v["backups"][0]["backup"].as_str().unwrap();
    let own = Path::new(own).file_name().unwrap().to_str().unwrap();
    assert!(own.starts_with("m.py.") && own.ends_with(".bak"), "{own}");
    let mut want = vec![
        format!("b.py.{}.bak", then(2.0)),
        format!("c.py.{}.bak", then(0.5)),
        "d.py.bak".to_string(),
        own.to_string(),
        "notes.txt".to_string(),
    ];
    want.sort();
    assert_eq!(names(&dir), want);

    // The config file sets the age: 1 day removes the 2-day-old copy; the run's own stays.
    fs::write(
        p.root.join("pyproject.toml"),
        "[tool.selfdebug]\nbackup-max-age = 1\n",
    )
    .unwrap();
    let out = p.run(&["fix", "--json"]);
    support::assert_exit(&out, 0);
    assert_eq!(
        json(&out)["notes"],
        serde_json::json!([format!(
            "removed 1 backup copy older than 1 days from {} (--backup-max-age)",
            dir.display()
        )])
    );
    want.retain(|n| !n.starts_with("b.py."));
    assert_eq!(names(&dir), want);
    // 0 keeps everything; the flag beats the file.
    put(&dir, &format!("e.py.{}.bak", then(30.0)), recent);
    let out = p.run(&["fix", "--json", "--backup-max-age", "0"]);
    support::assert_exit(&out, 0);
    assert_eq!(json(&out)["notes"], serde_json::json!([]));
    assert!(dir.join(format!("e.py.{}.bak", then(30.0))).is_file());
    // A bad value is refused before anything is touched.
    let out = p.run(&["fix", "--json", "--backup-max-age", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(dir.join(format!("e.py.{}.bak", then(30.0))).is_file());
}

#[test]
fn a_backup_of_a_run_that_has_not_ended_is_never_pruned() {
    // The journals are found through XDG_CACHE_HOME: a process of its own.
    let Some(cache) = own_cache() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("m.py"), "x = 1\n").unwrap();
    let bak = tmp.path().join("bak");
    let mut j = Journal::begin(&root, Some(&bak)).unwrap();
    j.write(&root.join("m.py"), b"x = 2\n").unwrap();
    let folder = bak.join("agent-self-debugger-loop");
    let listed = names(&folder);
    assert_eq!(listed.len(), 1);
    let stray = put(
        &folder,
        &format!("n.py.{}.bak", now_secs()),
        SystemTime::now(),
    );
    // A month from now both are old; the journal of the live run still lists its own.
    let later = SystemTime::now() + Duration::from_secs(30 * DAY);
    let pruned = journal::prune_backups(Some(&bak), 14, later);
    assert_eq!(pruned.removed, [stray]);
    assert_eq!(pruned.warnings, Vec::<String>::new());
    assert_eq!(names(&folder), listed);

    // A journal that cannot be read might list any copy: nothing is removed, and it says so.
    let other = cache.join("selfdebug/journals/0123456789abcdef0123");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("journal.json"), "{not json").unwrap();
    let pruned = journal::prune_backups(Some(&bak), 14, later);
    assert!(pruned.removed.is_empty());
    assert_eq!(pruned.warnings.len(), 1);
    assert!(
        pruned.warnings[0].starts_with("old backup copies were not pruned: "),
        "{:?}",
        pruned.warnings
    );
    fs::remove_dir_all(&other).unwrap();

    // Once the run has ended (rolled back: its copy removed; committed: the journal gone),
    // nothing protects an old copy any more.
    j.rollback().unwrap();
    let kept = put(
        &folder,
        &format!("m.py.{}.bak", now_secs()),
        SystemTime::now(),
    );
    let pruned = journal::prune_backups(Some(&bak), 14, later);
    assert_eq!(pruned.removed, [kept]);
    assert!(names(&folder).is_empty());
}
