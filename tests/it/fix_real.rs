//! `selfdebug fix` writing into real projects (git and not), with real pytest: kept fixes,
//! rollbacks that leave a dirty tree exactly as it was, a run killed with SIGKILL and its
//! recovery, a candidate that hangs, and a second concurrent run. Tests that stop a run
//! mid-way wait for what the fixture's own test reports (see `support::project::held_project`).

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::path_str;
use support::project::{assert_same, project, snapshot, Project};

const DEMO_MODULE: &str = "def to_upper(text):\n    words = text.split()\n    return \" \".join(w.upper() for w in words)\n";

#[test]
fn fix_keeps_the_proven_patch_in_a_git_repo() {
    let p = project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_words():\n    assert to_upper(\"a  b\") == \"A B\"\n",
        ),
    ]);
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    let out = p.run(&["fix", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v = support::project::json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(v["final_status"], "pass");
    assert_eq!(v["dry_run"], false);
    assert_eq!(v["rollback"], false);
    assert_eq!(v["files_patched"], serde_json::json!(["words.py"]));
    assert_eq!(
        std::fs::read_to_string(p.root.join("words.py")).unwrap(),
        "def to_upper(text):\n    words = (text or \"\").split()\n    return \" \".join(w.upper() for w in words)\n"
    );
    // The backup copy holds the original; the git refs are gone; the index is untouched.
    let backup = v["backups"][0]["backup"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(backup).unwrap(), DEMO_MODULE);
    assert_eq!(p.git(&["for-each-ref", "refs/selfdebug"]), "");
    assert_eq!(p.git(&["status", "--porcelain"]), " M words.py\n");
    // Nothing else appeared in the project: no caches, no probe leftovers.
    let files: Vec<String> = snapshot(&p.root)
        .into_keys()
        .filter(|f| !f.starts_with(".git/"))
        .collect();
    assert_eq!(files, ["conftest.py", "tests/test_words.py", "words.py"]);
    // The suite is green now.
    let green = Command::new(support::python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(&p.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        green.status.success(),
        "{}",
        String::from_utf8_lossy(&green.stdout)
    );
}

/// A bug no candidate can fix (the test wants an exception): every candidate is written and
/// undone, and the dirty tree (modified, staged, untracked, ignored files) is exactly as before.
fn unfixable_project() -> Project {
    project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "import pytest\nfrom words import to_upper\n\n\ndef test_none_is_rejected():\n    with pytest.raises(ValueError):\n        to_upper(None)\n    assert to_upper(None) == \"never\"\n",
        ),
        (".gitignore", "ignored.txt\n"),
    ])
}

#[test]
fn failed_run_leaves_a_dirty_git_tree_byte_for_byte() {
    let p = unfixable_project();
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    std::fs::write(p.root.join("conftest.py"), "# local edit, not committed\n").unwrap();
    std::fs::write(p.root.join("notes.md"), "untracked\n").unwrap();
    std::fs::write(p.root.join("ignored.txt"), "ignored\n").unwrap();
    std::fs::write(p.root.join(".gitignore"), "ignored.txt\n*.log\n").unwrap();
    p.git(&["add", ".gitignore"]);
    // `git status` refreshes the index: ask first, then take the snapshot.
    let status_before = p.git(&["status", "--porcelain", "--ignored"]);
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let v = support::project::json(&out);
    assert_eq!(v["final_status"], "fail");
    assert_eq!(v["rollback"], true);
    assert!(v["attempts"].as_u64().unwrap() >= 2, "{stderr}");
    assert_eq!(v["patches"], serde_json::json!([]));
    assert_same(&before, &snapshot(&p.root));
    assert_eq!(
        p.git(&["status", "--porcelain", "--ignored"]),
        status_before
    );
    assert_eq!(p.git(&["for-each-ref", "refs/selfdebug"]), "");
    assert_eq!(p.git(&["stash", "list"]), "");
}

#[test]
fn failed_run_outside_git_restores_everything() {
    let p = unfixable_project();
    let before = snapshot(&p.root);
    let out = p.run(&["fix"]);
    support::assert_exit(&out, 4);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("every touched file was restored byte for byte"),
        "{stderr}"
    );
    assert_same(&before, &snapshot(&p.root));
}

#[test]
fn sigkill_during_validation_then_restore() {
    let h = support::project::held_project();
    let p = &h.project;
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    let before = snapshot(&p.root);
    let original_hash = p.git(&["hash-object", "words.py"]);
    // The run is stopped with a candidate in the file, inside that candidate's test run: the
    // fixture's test says so itself (it is not guessed from reading a file being written).
    let mut child = h.start("candidate", &["fix", "--timeout", "600"]);
    let candidate = p.read("words.py");
    child.kill().unwrap();
    child.wait().unwrap();
    h.release();
    assert_ne!(candidate, DEMO_MODULE);
    assert!(!candidate.contains("_selfdebug_probe"), "{candidate}");
    assert_eq!(p.read("words.py"), candidate);
    // The journal the killed run left names the file, with the original's hash.
    let journals = p.cache.join("selfdebug/journals");
    let dir = std::fs::read_dir(&journals)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("journal.json")).unwrap()).unwrap();
    assert_eq!(doc["state"], "active");
    assert_eq!(doc["files"][0]["path"], "words.py");
    assert_eq!(doc["files"][0]["hash"], original_hash.trim());
    // The next run refuses to touch anything until the files are restored.
    let refused = p.run(&["fix"]);
    assert_eq!(refused.status.code(), Some(6));
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("was killed") && msg.contains("selfdebug restore"),
        "{msg}"
    );
    let restored = p.run(&["restore", "--json"]);
    support::assert_exit(&restored, 0);
    assert_same(&before, &snapshot(&p.root));
    assert_eq!(p.git(&["for-each-ref", "refs/selfdebug"]), "");
    // And now a run may start again.
    let again = p.run(&["fix", "--dry-run"]);
    support::assert_exit(&again, 0);
}

#[test]
fn second_concurrent_run_refuses() {
    let h = support::project::held_project();
    let p = &h.project;
    // The first run holds the lock while its probe's test run is held.
    let mut first = h.start("probe", &["fix", "--timeout", "600"]);
    let second = p.run(&["fix"]);
    h.release();
    assert_eq!(second.status.code(), Some(6));
    let msg = String::from_utf8_lossy(&second.stderr);
    assert!(msg.contains(&format!("pid {}", first.id())), "{msg}");
    assert_eq!(first.wait().unwrap().code(), Some(0));
}

/// A `probe` started while a `fix` holds a candidate in the file refuses (the lock, exit 6,
/// naming the fix's pid) instead of injecting its line into a file the fix is working on; the
/// fix then ends as it would alone, with the proven patch and no trace of a probe.
#[test]
fn a_probe_racing_a_fix_refuses_and_the_fix_ends_clean() {
    let h = support::project::held_project();
    let p = &h.project;
    let test_file = p.read("tests/test_words.py");
    let mut fix = h.start("candidate", &["fix", "--timeout", "600"]);
    let probe = p.run(&["probe", "--json"]);
    h.release();
    assert_eq!(probe.status.code(), Some(6), "{probe:?}");
    let v: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains(&format!("pid {}", fix.id())), "{msg}");
    assert_eq!(fix.wait().unwrap().code(), Some(0));
    assert_eq!(p.read("words.py"), support::project::DEMO_FIXED);
    assert_eq!(p.read("tests/test_words.py"), test_file);
}

/// An editor saves the file `fix` has a candidate in while the candidate's tests run (issue 34
/// §1): the fix stops with an error naming the file, keeps no patch over bytes it did not
/// prove, leaves the editor's bytes as they are (a restore would destroy them), keeps the
/// backup copy of the original it names, and leaves no journal behind.
#[test]
fn a_file_changed_under_a_fix_stops_it_and_is_left_as_the_other_writer_made_it() {
    let h = support::project::held_project();
    let p = &h.project;
    let before = snapshot(&p.root);
    let fix = h
        .project
        .cmd(&["fix", "--json", "--timeout", "600"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    h.hold("candidate");
    h.wait_for("candidate", 300);
    let theirs = "def to_upper(text):\n    # edited while selfdebug ran\n    return text.upper()\n";
    std::fs::write(p.root.join("words.py"), theirs).unwrap();
    h.release();
    let out = fix.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["final_status"], "error");
    assert_eq!(v["patches"], serde_json::json!([]));
    let msg = v["error"].as_str().unwrap();
    assert!(
        msg.contains(
            "words.py was changed by another program while selfdebug worked on it; \
             selfdebug stopped, restored the files only it had changed, and left it as it is now \
             (the original is kept at "
        ),
        "{msg}"
    );
    assert_eq!(p.read("words.py"), theirs);
    // The backup copy it names holds the original.
    let backup = msg.rsplit("kept at ").next().unwrap().trim_end_matches(')');
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        support::project::DEMO_MODULE
    );
    let mut after = snapshot(&p.root);
    after.remove("words.py");
    let mut expected = before.clone();
    expected.remove("words.py");
    after.retain(|k, _| expected.contains_key(k));
    assert_same(&expected, &after);
    // Nothing pending: the next run starts.
    assert_eq!(p.run(&["restore", "--json"]).status.code(), Some(0));
}

/// The other way round: a `fix` started while a `probe` has its line in the file refuses, and
/// the probe ends with the file exactly as it was (bytes, mode, mtime).
#[test]
fn a_fix_racing_a_probe_refuses_and_the_probe_restores_its_file() {
    let h = support::project::held_project();
    let p = &h.project;
    let before = snapshot(&p.root);
    let mut probe = h.start("probe", &["probe", "--timeout", "600"]);
    let fix = p.run(&["fix", "--json"]);
    h.release();
    assert_eq!(fix.status.code(), Some(6), "{fix:?}");
    let v: serde_json::Value = serde_json::from_slice(&fix.stdout).unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains(&format!("pid {}", probe.id())), "{msg}");
    assert_eq!(probe.wait().unwrap().code(), Some(0));
    let mut after = snapshot(&p.root);
    // Only the held test's own marker file (outside the project) differs; nothing in it.
    after.retain(|k, _| before.contains_key(k));
    assert_same(&before, &after);
}

#[test]
fn candidate_that_hangs_is_killed_in_time() {
    // Every candidate (the rules' two guards, then the search's) makes the test spin forever
    // on None: each is stopped at the per-test limit.
    let module = "def label(item):\n    return item.label\n";
    let p = project(&[
        ("conftest.py", ""),
        ("labels.py", module),
        (
            "tests/test_labels.py",
            "from labels import label\n\n\ndef test_label_of_nothing():\n    value = label(None)\n    while value is None:\n        pass\n    assert value == \"none\"\n",
        ),
    ]);
    let started = Instant::now();
    let out = p.run(&["fix", "--json", "--timeout", "15"]);
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let records = v["attempt_records"].as_array().unwrap();
    let titles: Vec<&str> = records
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "return None early when `item` is None",
            "evaluate `item.label` only when `item` is not None",
            "guard `if not item: return None` at labels.py:2 (1 test covers the line)"
        ],
        "{stderr}"
    );
    for r in records {
        assert_eq!(r["outcome"], "timeout", "{stderr}");
        assert!(r["duration_ms"].as_u64().unwrap() < 25_000);
    }
    assert_eq!(v["final_status"], "fail", "{stderr}");
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        std::fs::read_to_string(p.root.join("labels.py")).unwrap(),
        module
    );
    assert!(elapsed < Duration::from_secs(120), "{elapsed:?}");
    // No process of that run survives: none has its working directory in the project.
    let root = p.root.canonicalize().unwrap();
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c.starts_with(&root)))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(survivors.is_empty(), "orphans: {survivors:?}");
}

#[test]
fn multi_step_repair_and_audit_log() {
    // Fixing `.strip()` on a missing name exposes `.title()` on a missing city: the first
    // candidate turns the failure into another one, which is worked on as the next step.
    let p = project(&[
        ("conftest.py", ""),
        (
            "people.py",
            "def describe(user):\n    name = user.get(\"name\").strip()\n    city = user.get(\"city\").title()\n    return f\"{name} ({city})\"\n",
        ),
        (
            "tests/test_people.py",
            "from people import describe\n\n\ndef test_full():\n    assert describe({\"name\": \" ada \", \"city\": \"london\"}) == \"ada (London)\"\n\n\ndef test_empty():\n    assert describe({}) == \" ()\"\n",
        ),
    ]);
    let audit = p.cache.join("audit.jsonl");
    let out = p.run(&["fix", "--json", "--audit-log", path_str(&audit)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("people.py")).unwrap(),
        "def describe(user):\n    name = (user.get(\"name\") or \"\").strip()\n    city = (user.get(\"city\") or \"\").title()\n    return f\"{name} ({city})\"\n"
    );
    let v = support::project::json(&out);
    let steps: Vec<(u64, &str)> = v["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["step"].as_u64().unwrap(), a["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, [(0, "progressed"), (1, "accepted")], "{stderr}");
    // One JSON line per attempt with the original design's fields.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["task_id"], v["run_id"]);
        assert_eq!(l["attempt"], i as u64 + 1);
        assert_eq!(l["error_category"], "logic");
        assert!(l["code"].as_str().unwrap().starts_with("--- a/people.py\n"));
        assert!(l["timestamp_ms"].as_u64().unwrap() > 0);
        assert!(l["stdout"].is_string() && l["stderr"].is_string());
        assert!(l["duration_ms"].is_u64() && l["exit_code"].is_i64());
    }
    assert_eq!(lines[0]["success"], false);
    assert_eq!(lines[1]["success"], true);
}

/// One failure a rule fixes, one no rule knows and no small edit repairs (`double` needs new
/// code; the search tries its guards and gives up): the proven fix stays (partial, exit 3),
/// unless --all-or-nothing, which restores everything (exit 4).
fn mixed_project() -> Project {
    project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        ("maths.py", "def double(x):\n    return x\n"),
        (
            "tests/test_all.py",
            "from words import to_upper\nfrom maths import double\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n\n\ndef test_double():\n    assert double(2) == 4\n",
        ),
    ])
}

#[test]
fn partial_keeps_proven_fix_unless_all_or_nothing() {
    let p = mixed_project();
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--all-or-nothing", "--json"]);
    support::assert_exit(&out, 4);
    let v = support::project::json(&out);
    assert_eq!(v["final_status"], "fail");
    assert_eq!(v["rollback"], true);
    let statuses: Vec<&str> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["rolled_back", "not_fixed"]);
    assert_same(&before, &snapshot(&p.root));

    let out = p.run(&["fix", "--json"]);
    support::assert_exit(&out, 3);
    let v = support::project::json(&out);
    assert_eq!(v["final_status"], "partial");
    assert_eq!(v["rollback"], false);
    assert_eq!(v["files_patched"], serde_json::json!(["words.py"]));
    assert_eq!(
        std::fs::read_to_string(p.root.join("maths.py")).unwrap(),
        "def double(x):\n    return x\n"
    );
}

/// A module the user marked read-only (0444) is neither probed nor patched, even by root
/// (whose write the atomic rename would allow): the failure says why, the file keeps its bytes,
/// mode and mtime; `--dry-run` still shows the patch it would need.
#[test]
fn a_read_only_file_is_not_patched_and_the_failure_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let p = project(&[
        ("conftest.py", ""),
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "from words import to_upper\n\n\ndef test_none():\n    assert to_upper(None) == \"\"\n",
        ),
    ]);
    let file = p.root.join("words.py");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["failures"][0]["reason"],
        "words.py is read-only (mode 444): not patched; make it writable (chmod u+w) for \
         selfdebug to fix it, or see the patch with --dry-run"
    );
    assert_eq!(v["attempt_records"], serde_json::json!([]));
    let mut after = snapshot(&p.root);
    after.retain(|k, _| before.contains_key(k));
    assert_same(&before, &after);

    let dry = p.run(&["fix", "--dry-run", "--json"]);
    assert_eq!(dry.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(v["patches"][0]["file"], "words.py", "{v}");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o444
    );
}
