//! A throwaway Python project in a temp dir, and `selfdebug` runs against it with a private
//! cache and temp dir (so runs never share state with the user's or with each other).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::SystemTime;

pub struct Project {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub cache: PathBuf,
}

/// Files as (relative path, content).
pub fn project(files: &[(&str, &str)]) -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    for (path, content) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(cache.join("tmp")).unwrap();
    Project {
        _tmp: tmp,
        root,
        cache,
    }
}

impl Project {
    /// `selfdebug ARGS` run from `cwd` (relative to the root), without `--root`.
    pub fn cmd_in(&self, cwd: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_selfdebug"));
        cmd.args(args)
            .current_dir(self.root.join(cwd))
            .env("XDG_CACHE_HOME", &self.cache)
            .env("TMPDIR", self.cache.join("tmp"))
            .env_remove("VIRTUAL_ENV")
            .stdin(Stdio::null());
        cmd
    }

    /// `selfdebug SUBCOMMAND --root ROOT ARGS...` (the root before any `--`).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.cmd_in(".", &args[..1]);
        cmd.arg("--root").arg(&self.root).args(&args[1..]);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn snapshot(&self) -> Snapshot {
        snapshot(&self.root)
    }
}

pub type Snapshot = BTreeMap<String, (Vec<u8>, u32, SystemTime)>;

/// Every file under `root` (`.git` included): bytes, mode and mtime.
pub fn snapshot(root: &Path) -> Snapshot {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root) {
        let e = e.unwrap();
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e.path().strip_prefix(root).unwrap().display().to_string();
        let meta = e.metadata().unwrap();
        out.insert(
            rel,
            (
                std::fs::read(e.path()).unwrap(),
                meta.permissions().mode(),
                meta.modified().unwrap(),
            ),
        );
    }
    out
}

/// Compares two snapshots, naming the files that differ instead of dumping bytes.
pub fn assert_same(before: &Snapshot, after: &Snapshot) {
    let mut diffs = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => diffs.push(format!("{k}: gone")),
            Some(a) if a.0 != v.0 => diffs.push(format!("{k}: bytes differ")),
            Some(a) if a.1 != v.1 => diffs.push(format!("{k}: mode {:o} -> {:o}", v.1, a.1)),
            Some(a) if a.2 != v.2 => diffs.push(format!("{k}: mtime {:?} -> {:?}", v.2, a.2)),
            _ => {}
        }
    }
    for k in after.keys().filter(|k| !before.contains_key(*k)) {
        diffs.push(format!("{k}: new"));
    }
    assert!(diffs.is_empty(), "the tree changed: {diffs:#?}");
}

/// stdout as the fix JSON object.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
