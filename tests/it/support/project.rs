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
    /// The failing log as a user has it: `python -m pytest ARGS` in the project, nothing
    /// written into it; the log goes to the project's cache dir.
    pub fn pytest_log(&self, args: &[&str]) -> PathBuf {
        let out = Command::new(super::python())
            .args(["-m", "pytest", "-p", "no:cacheprovider"])
            .args(args)
            .current_dir(&self.root)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("PYTEST_ADDOPTS")
            .output()
            .unwrap();
        let log = self.cache.join("failing.log");
        std::fs::write(&log, &out.stdout).unwrap();
        log
    }

    /// `selfdebug ARGS` run from `cwd` (relative to the root), without `--root`.
    pub fn cmd_in(&self, cwd: &str, args: &[&str]) -> Command {
        self.cmd_of(Path::new(env!("CARGO_BIN_EXE_selfdebug")), cwd, args)
    }

    /// [`Project::cmd_in`] with another copy of the binary (one installed in a venv).
    pub fn cmd_of(&self, exe: &Path, cwd: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .current_dir(self.root.join(cwd))
            .env("XDG_CACHE_HOME", &self.cache)
            .env("TMPDIR", self.cache.join("tmp"))
            // Kept-alive workers (selfdebug mcp's) in the test's own directory.
            .env("SELFDEBUG_WORKER_DIR", self.cache.join("w"))
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

    /// Runs `selfdebug SUBCOMMAND --root ROOT ARGS...`; JSON output is checked against its
    /// schema.
    pub fn run(&self, args: &[&str]) -> Output {
        let out = self.cmd(args).output().unwrap();
        super::check_json_output(args, &out.stdout);
        out
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

/// stdout as one JSON object, checked against the schema of the command that printed it
/// (told by its fields, see [`super::schema_of_doc`]).
pub fn json(out: &Output) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    super::assert_valid(super::schema_of_doc(&v), None, &[&out.stdout]);
    v
}

/// The bug of the original design's demo (`text.split()` on `None`), whose one test reports in
/// `marker` what it saw in the module as it ran (`original`, `probe` or `candidate`, one line
/// per run), and while the file `hold` holds that word, waits: a test can stop a run of
/// selfdebug in a state it can see unambiguously, for as long as it needs.
pub const DEMO_MODULE: &str = "def to_upper(text):\n    words = text.split()\n    return \" \".join(w.upper() for w in words)\n";

/// [`DEMO_MODULE`] with the proven fix `selfdebug fix` keeps.
pub const DEMO_FIXED: &str = "def to_upper(text):\n    words = (text or \"\").split()\n    return \" \".join(w.upper() for w in words)\n";

/// The demo bug with two tests: `None` fails, real words pass (so a fix must keep them green).
pub fn demo_project() -> Project {
    project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_words():\n    assert to_upper(\"a  b\") == \"A B\"\n",
        ),
    ])
}

/// A copy of `fixtures/projects/NAME` as a throwaway project.
pub fn fixture_project(name: &str) -> Project {
    let p = project(&[]);
    super::copy_dir(&super::project_root(name), &p.root);
    p
}

pub struct Held {
    pub project: Project,
    pub marker: PathBuf,
    pub hold: PathBuf,
}

/// (The baseline's in-session rerun of the test fails differently, so `fix` makes the probe
/// run these tests hold on.)
pub fn held_project() -> Held {
    let p = project(&[]);
    let marker = p.cache.join("marker");
    let hold = p.cache.join("hold");
    let test = format!(
        "import os\nimport time\n\nimport words\nfrom words import to_upper\n\n\
         ORIGINAL = {DEMO_MODULE:?}\nMARKER = {:?}\nHOLD = {:?}\n\n\n\
         def _state():\n    with open(words.__file__) as f:\n        src = f.read()\n\
         \x20   if \"_selfdebug_probe\" in src:\n        return \"probe\"\n\
         \x20   return \"original\" if src == ORIGINAL else \"candidate\"\n\n\n\
         def _held(state):\n    try:\n        with open(HOLD) as f:\n            return f.read() == state\n\
         \x20   except OSError:\n        return False\n\n\n\
         _RUNS = []\n\n\n\
         def test_none():\n    _RUNS.append(1)\n    if len(_RUNS) > 1:\n\
         \x20       raise RuntimeError(\"the plugin's in-session rerun\")\n\
         \x20   state = _state()\n    with open(MARKER, \"a\") as f:\n\
         \x20       f.write(state + \"\\n\")\n    while _held(state):\n        time.sleep(0.05)\n\
         \x20   assert to_upper(None) == \"\"\n",
        marker.to_str().unwrap(),
        hold.to_str().unwrap()
    );
    for (path, content) in [
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", test.as_str()),
    ] {
        let f = p.root.join(path);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, content).unwrap();
    }
    Held {
        project: p,
        marker,
        hold,
    }
}

impl Held {
    /// Runs of the test that saw `state` stop until [`Held::release`].
    pub fn hold(&self, state: &str) {
        std::fs::write(&self.hold, state).unwrap();
    }

    pub fn release(&self) {
        let _ = std::fs::remove_file(&self.hold);
    }

    /// Waits until a run of the test has reported `state` (a state the other process is in
    /// now, if it is held), panicking after `secs`, which only bounds a broken run.
    pub fn wait_for(&self, state: &str, secs: u64) {
        wait_until(&format!("a test run that saw `{state}`"), secs, || {
            std::fs::read_to_string(&self.marker)
                .unwrap_or_default()
                .lines()
                .any(|l| l == state)
        });
    }

    /// Starts `selfdebug ARGS` (quiet) with runs that see `state` held, and returns once one
    /// of them is there.
    pub fn start(&self, state: &str, args: &[&str]) -> std::process::Child {
        self.hold(state);
        let child = self
            .project
            .cmd(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.wait_for(state, 300);
        child
    }

    /// The states the test's runs reported, in order.
    pub fn seen(&self) -> Vec<String> {
        std::fs::read_to_string(&self.marker)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Polls `done` until it holds; `secs` only bounds a run that is broken, so it is generous.
pub fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "waited {secs} s for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Pids of the processes whose working directory is under `root` (pytest runs of selfdebug
/// run in the project root).
pub fn processes_in(root: &Path) -> Vec<u32> {
    let root = root.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
        .filter(|(_, p)| std::fs::read_link(p.join("cwd")).is_ok_and(|c| c.starts_with(&root)))
        .map(|(pid, _)| pid)
        .collect()
}

/// The names in `dir` that start with `selfdebug-`, sorted.
pub fn selfdebug_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("selfdebug-"))
        .collect();
    names.sort();
    names
}
