//! Nothing shared, nothing left behind, nothing hidden (issue 8, section 5), on real projects
//! with real pytest: a dry run started while a real run has its probe in a file, backups per
//! user (a second user of the machine), no backup copy left by a rolled-back run, and a run
//! killed with SIGKILL whose pytest dies with it and whose temp dirs the next run removes.
//! Every wait is for a state the test can see (a line the fixture's test writes), never for a
//! sleep to be long enough.

use crate::support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::project::{
    self, held_project, json, processes_in, selfdebug_entries, wait_until, Project, DEMO_MODULE,
};

const FIXED: &str = "def to_upper(text):\n    words = (text or \"\").split()\n    return \" \".join(w.upper() for w in words)\n";

const WORDS_TEST: &str =
    "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n";

/// Our uid, read from a file we made (no libc in the tests).
fn my_uid(p: &Project) -> u32 {
    std::fs::metadata(&p.cache).unwrap().uid()
}

/// `{TMPDIR}/selfdebug-{uid}/agent-self-debugger-loop`: the default backup folder.
fn default_backups(p: &Project) -> PathBuf {
    p.cache
        .join("tmp")
        .join(format!("selfdebug-{}", my_uid(p)))
        .join("agent-self-debugger-loop")
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

#[test]
fn dry_run_during_a_real_run_refuses_and_prints_no_probe() {
    let h = held_project();
    let p = &h.project;
    let mut real = h.start("probe", &["fix", "--timeout", "600"]);
    // The real run's probe is in the user's file right now, and stays while we look.
    assert!(p.read("words.py").contains("_selfdebug_probe"));
    let dry = p.run(&["fix", "--dry-run", "--json"]);
    // `restore` is refused too; both objects carry the holder's pid as a field.
    let restore = p.run(&["restore", "--json"]);
    h.release();
    let real_status = real.wait().unwrap();

    let stderr = String::from_utf8_lossy(&dry.stderr);
    assert_eq!(dry.status.code(), Some(6), "{stderr}");
    let expected = format!("another selfdebug run (pid {}, started ", real.id());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(
        stderr.contains("a dry run does not read a project while another run may have a probe"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let v = json(&dry);
    assert_eq!(v["exit_code"], 6);
    assert_eq!(v["final_status"], "error");
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["patches"], serde_json::json!([]));
    assert!(v["error"].as_str().unwrap().contains(&expected), "{v}");
    assert_eq!(v["lock_pid"], real.id());
    let r = json(&restore);
    assert_eq!(
        (&r["exit_code"], &r["lock_pid"]),
        (&6.into(), &real.id().into()),
        "{r}"
    );
    assert!(!String::from_utf8_lossy(&dry.stdout).contains("_selfdebug_probe"));
    // The real run was not disturbed.
    assert_eq!(real_status.code(), Some(0));
    assert_eq!(p.read("words.py"), FIXED);
    assert_eq!(h.seen()[..2], ["original", "probe"]);
}

#[test]
fn two_dry_runs_at_once_both_work() {
    let p = project::project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", WORDS_TEST),
    ]);
    // Each holds the lock only while it copies; the other waits for that, then goes on.
    let spawn = || {
        p.cmd(&["fix", "--dry-run", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(json(&out)["files_patched"], serde_json::json!(["words.py"]));
    }
    assert_eq!(p.read("words.py"), DEMO_MODULE);
    assert_eq!(
        selfdebug_entries(&p.cache.join("tmp")),
        Vec::<String>::new()
    );
}

#[test]
fn a_rolled_back_run_leaves_no_backup_copy() {
    // The test contradicts itself (an exception, then a value for the same call): no candidate
    // can pass, every one is undone. (An exception alone is now a raise guard's to fix.)
    let p = project::project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "import pytest\nfrom words import to_upper\n\n\ndef test_none_is_rejected():\n    with pytest.raises(ValueError):\n        to_upper(None)\n    assert to_upper(None) == \"never\"\n",
        ),
    ]);
    let out = p.run(&["fix", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let v = json(&out);
    assert_eq!(v["rollback"], true);
    assert!(v["attempts"].as_u64().unwrap() >= 1, "{stderr}");
    assert_eq!(v["backups"], serde_json::json!([]));
    // The per-user folder exists (the file was probed and journaled), and is empty.
    assert_eq!(listing(&default_backups(&p)), Vec::<PathBuf>::new());
    assert_eq!(
        selfdebug_entries(&p.cache.join("tmp")),
        [format!("selfdebug-{}", my_uid(&p))]
    );
    assert_eq!(p.read("words.py"), DEMO_MODULE);
}

#[test]
fn backups_lists_exactly_the_copies_that_remain() {
    // words.py gets a proven fix; maths.py is worked on (probed) and stays as it was.
    let p = project::project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("maths.py", "def double(x):\n    return x\n"),
        (
            "tests/test_all.py",
            "from words import to_upper\nfrom maths import double\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_double():\n    assert double(2) == 4\n",
        ),
    ]);
    let dir = p.cache.join("backups");
    let out = p.run(&["fix", "--json", "--backup-dir", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let backups = v["backups"].as_array().unwrap();
    assert_eq!(backups.len(), 1, "{v}");
    assert_eq!(backups[0]["file"], "words.py");
    assert_eq!(backups[0]["changed"], true);
    let copy = PathBuf::from(backups[0]["backup"].as_str().unwrap());
    // The original design's naming under an explicit --backup-dir.
    assert_eq!(copy.parent().unwrap(), dir.join("agent-self-debugger-loop"));
    let name = copy.file_name().unwrap().to_str().unwrap();
    let ts = name
        .strip_prefix("words.py.")
        .and_then(|r| r.strip_suffix(".bak"))
        .unwrap();
    assert!(ts.parse::<u64>().is_ok(), "{name}");
    assert_eq!(
        listing(&dir.join("agent-self-debugger-loop")),
        std::slice::from_ref(&copy)
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), DEMO_MODULE);
    assert_eq!(p.read("words.py"), FIXED);
    // The per-user default folder was never made: the explicit dir replaces it.
    assert_eq!(
        selfdebug_entries(&p.cache.join("tmp")),
        Vec::<String>::new()
    );
}

#[test]
fn sigkill_during_the_probe_kills_pytest_and_the_next_run_cleans_up() {
    let h = held_project();
    let p = &h.project;
    let tmp = p.cache.join("tmp");
    let mut run = h.start("probe", &["fix", "--timeout", "600"]);
    let probe_dir = format!("selfdebug-probe-{}-", run.id());
    assert!(
        selfdebug_entries(&tmp)
            .iter()
            .any(|n| n.starts_with(&probe_dir)),
        "{:?}",
        selfdebug_entries(&tmp)
    );
    run.kill().unwrap();
    run.wait().unwrap();
    // Its test waits for as long as the hold file says `probe`: only the parent-death signal
    // can end that pytest now.
    wait_until("the killed run's pytest to die with it", 120, || {
        processes_in(&p.root).is_empty()
    });
    h.release();
    assert!(p.read("words.py").contains("_selfdebug_probe"));
    // What the killed run left in the temp dir: the probe's dir (and the per-user folder).
    let left = selfdebug_entries(&tmp);
    assert!(left.iter().any(|n| n.starts_with(&probe_dir)), "{left:?}");
    // A dry run does not copy the half-patched file either: the killed run must be restored.
    let dry = p.run(&["fix", "--dry-run", "--json"]);
    let stderr = String::from_utf8_lossy(&dry.stderr);
    assert_eq!(dry.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("was killed") && stderr.contains("selfdebug restore"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&dry.stdout).contains("_selfdebug_probe"));

    let restored = p.run(&["restore", "--json"]);
    support::assert_exit(&restored, 0);
    assert_eq!(p.read("words.py"), DEMO_MODULE);
    let mine = format!("selfdebug-{}", my_uid(p));
    assert_eq!(selfdebug_entries(&tmp), std::slice::from_ref(&mine));
    // The killed run's backup copy went with the restore: the file is its original again.
    assert_eq!(listing(&default_backups(p)), Vec::<PathBuf>::new());

    let fixed = p.run(&["fix", "--json"]);
    support::assert_exit(&fixed, 0);
    let v = json(&fixed);
    let copy = PathBuf::from(v["backups"][0]["backup"].as_str().unwrap());
    assert_eq!(listing(&default_backups(p)), [copy]);
    assert_eq!(selfdebug_entries(&tmp), [mine]);
    assert!(processes_in(&p.root).is_empty());
}

/// A system user made for one test, removed after it.
struct TestUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl TestUser {
    fn create() -> Result<TestUser, String> {
        let name = format!("sdtest{}", std::process::id());
        let made = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(&name)
            .output()
            .map_err(|e| format!("useradd: {e}"))?;
        if !made.status.success() {
            return Err(String::from_utf8_lossy(&made.stderr).trim().to_string());
        }
        let id = |flag: &str| -> Result<u32, String> {
            let out = Command::new("id").arg(flag).arg(&name).output();
            out.ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| format!("id {flag} {name} failed"))
        };
        let user = TestUser {
            uid: id("-u")?,
            gid: id("-g")?,
            name,
        };
        Ok(user)
    }

    /// `program` run as this user, with only the environment given.
    fn command(&self, program: &Path) -> Command {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(program);
        cmd.uid(self.uid)
            .gid(self.gid)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        cmd
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

fn chown_tree(root: &Path, uid: u32, gid: u32) {
    for e in walkdir::WalkDir::new(root) {
        std::os::unix::fs::lchown(e.unwrap().path(), Some(uid), Some(gid)).unwrap();
    }
}

#[test]
fn default_backups_are_per_user_so_a_second_user_is_not_locked_out() {
    let base = tempfile::tempdir().unwrap();
    let probe_uid = std::fs::metadata(base.path()).unwrap().uid();
    if probe_uid != 0 {
        eprintln!("skipped: creating a second user needs root (uid {probe_uid})");
        return;
    }
    let user = match TestUser::create() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("skipped: cannot create a second user: {e}");
            return;
        }
    };
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // A shared temp dir like /tmp (sticky, world-writable).
    let tmp = base.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // pytest where the second user can import it (this interpreter's site-packages may sit in
    // root's home), and an interpreter that user can run.
    let site = base.path().join("site");
    let copied = Command::new(support::python())
        .arg(support::repo().join("tests/it/support/copy_dist.py"))
        .args(["pytest", site.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find(|py| {
            py.exists()
                && user
                    .command(py)
                    .args(["-c", "import pytest"])
                    .env("PYTHONPATH", &site)
                    .output()
                    .is_ok_and(|o| o.status.success())
        });
    let Some(python) = python else {
        eprintln!("skipped: no interpreter the second user can run pytest with");
        return;
    };

    // Root runs first with the default backup dir, as the first user of the machine did.
    let first = project::project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", WORDS_TEST),
    ]);
    let out = first
        .cmd(&["fix", "--json"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    support::assert_exit(&out, 0);
    let root_copy = PathBuf::from(json(&out)["backups"][0]["backup"].as_str().unwrap());
    assert_eq!(
        root_copy.parent().unwrap(),
        tmp.join("selfdebug-0/agent-self-debugger-loop")
    );

    // The second user's project and cache.
    let home = base.path().join("user");
    let proj = home.join("proj");
    for (path, content) in [
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("tests/test_words.py", WORDS_TEST),
    ] {
        let f = proj.join(path);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, content).unwrap();
    }
    std::fs::create_dir_all(home.join("cache")).unwrap();
    chown_tree(&home, user.uid, user.gid);
    let fix_as_user = || {
        let mut cmd = user.command(Path::new(env!("CARGO_BIN_EXE_selfdebug")));
        cmd.args(["fix", "--json", "--root"])
            .arg(&proj)
            .arg("--python")
            .arg(&python)
            .env("HOME", &home)
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("TMPDIR", &tmp)
            .env("PYTHONPATH", &site);
        cmd.output().unwrap()
    };

    // A folder planted under the user's name by someone else is refused in one clear line,
    // before anything is touched.
    let mine = tmp.join(format!("selfdebug-{}", user.uid));
    std::fs::create_dir(&mine).unwrap();
    let refused = fix_as_user();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(6), "{stderr}");
    let expected = format!(
        "selfdebug: error: cannot keep the backup copies: {} belongs to uid 0, not to you \
         (uid {}); choose another dir with --backup-dir",
        mine.display(),
        user.uid
    );
    assert_eq!(stderr.trim_end(), expected);
    assert_eq!(json(&refused)["final_status"], "error");
    assert_eq!(
        std::fs::read_to_string(proj.join("words.py")).unwrap(),
        DEMO_MODULE
    );
    std::fs::remove_dir(&mine).unwrap();

    let out = fix_as_user();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v = json(&out);
    let copy = PathBuf::from(v["backups"][0]["backup"].as_str().unwrap());
    let folder = mine.join("agent-self-debugger-loop");
    assert_eq!(listing(&folder), std::slice::from_ref(&copy));
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), DEMO_MODULE);
    assert_eq!(
        std::fs::read_to_string(proj.join("words.py")).unwrap(),
        FIXED
    );
    // Private to that user, and root's copy is where it was.
    for (path, mode) in [(&mine, 0o700), (&folder, 0o700), (&copy, 0o600)] {
        let m = std::fs::metadata(path).unwrap();
        assert_eq!((m.uid(), m.mode() & 0o7777), (user.uid, mode), "{path:?}");
    }
    assert_eq!(std::fs::read_to_string(&root_copy).unwrap(), DEMO_MODULE);
}

/// Paths under `dir` whose name starts with `selfdebug-scratch` (mirrors of scratch copies).
fn scratch_mirrors(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("selfdebug-scratch")
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

#[test]
fn a_killed_dry_run_leaves_nothing_once_the_next_run_is_done() {
    let h = held_project();
    let p = &h.project;
    let tmp = p.cache.join("tmp");
    let pycache = p.cache.join("selfdebug/pycache");
    let mut run = h.start("probe", &["fix", "--dry-run", "--timeout", "600"]);
    run.kill().unwrap();
    run.wait().unwrap();
    // The dry run's pytest ran in its scratch copy, in the temp dir; it dies with the run.
    wait_until("the killed dry run's pytest to die with it", 120, || {
        processes_in(&tmp).is_empty()
    });
    h.release();
    let scratch = format!("selfdebug-scratch-{}-", run.id());
    let left = selfdebug_entries(&tmp);
    assert!(left.iter().any(|n| n.starts_with(&scratch)), "{left:?}");
    assert!(!scratch_mirrors(&pycache).is_empty());
    // The user's tree was never written.
    assert_eq!(p.read("words.py"), DEMO_MODULE);

    let next = p.run(&["fix", "--dry-run", "--json"]);
    support::assert_exit(&next, 0);
    let v = json(&next);
    assert_eq!(
        v["patches"][0]["diff"],
        "--- a/words.py\n+++ b/words.py\n@@ -1,3 +1,3 @@\n def to_upper(text):\n-    words = text.split()\n+    words = (text or \"\").split()\n     return \" \".join(w.upper() for w in words)\n"
    );
    // Neither the killed run's copy nor this run's, nor their bytecode, is left.
    assert_eq!(selfdebug_entries(&tmp), Vec::<String>::new());
    assert_eq!(scratch_mirrors(&pycache), Vec::<PathBuf>::new());
    assert_eq!(p.read("words.py"), DEMO_MODULE);
}
