//! A CI job that is cancelled (SIGTERM, then SIGKILL after a grace period), a closed terminal
//! (SIGHUP) or Ctrl-C (SIGINT) at any moment of a run: the running pytest group is killed and
//! every touched file is restored before selfdebug exits. Each test waits for a state it can
//! see (a marker the fixture's test writes, the probe or a candidate in the file), never for a
//! sleep to be long enough.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::project::{assert_same, project, Project};

const MODULE: &str = "def to_upper(text):\n    return text.upper()\n";

/// One failing test that announces each run in `marker_dir` and then takes a while, so each
/// phase of the run is wide enough to be caught.
fn slow_failing_project(marker_dir: &Path) -> Project {
    let test = format!(
        "import os\nimport time\n\nfrom words import to_upper\n\n\ndef test_none():\n    \
         open(os.path.join({dir:?}, 'run-%d' % os.getpid()), 'w').close()\n    \
         time.sleep(1.5)\n    assert to_upper(None) == \"\"\n",
        dir = marker_dir.to_str().unwrap()
    );
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("words.py", MODULE),
        ("tests/test_words.py", &test),
    ]);
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    p
}

/// What the file shows at a moment of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    /// The baseline's test has started (its marker exists), nothing written yet.
    Baseline,
    /// The probe line is in the module.
    Probe,
    /// A candidate (not the probe) is in the module.
    Candidate,
}

fn reached(p: &Project, markers: &Path, moment: Moment) -> bool {
    match moment {
        Moment::Baseline => std::fs::read_dir(markers).is_ok_and(|mut d| d.next().is_some()),
        // Every write is a rename of a complete file, so a successful read is never torn.
        Moment::Probe => std::fs::read_to_string(p.root.join("words.py"))
            .is_ok_and(|t| t.contains("_selfdebug_probe")),
        Moment::Candidate => std::fs::read_to_string(p.root.join("words.py"))
            .is_ok_and(|t| !t.is_empty() && t != MODULE && !t.contains("_selfdebug_probe")),
    }
}

fn interrupt_at(moment: Moment, signal: libc::c_int) {
    let markers = tempfile::tempdir().unwrap();
    let p = slow_failing_project(markers.path());
    let before = p.snapshot();
    let child = p
        .cmd(&["fix", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    while !reached(&p, markers.path(), moment) {
        assert!(Instant::now() < deadline, "{moment:?} never reached");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: plain syscall on our own child, which has not been waited for yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{moment:?}: {stderr}");
    assert!(
        stderr.contains("interrupted: every touched file was restored byte for byte"),
        "{moment:?}: {stderr}"
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["final_status"], "error");
    assert_eq!(j["files_patched"], serde_json::json!([]));
    // Bytes, modes and mtimes as before; no journal ref left in git.
    assert_same(&before, &p.snapshot());
    assert_eq!(p.git(&["for-each-ref", "refs/selfdebug"]), "");
    // Nothing pending: the next run may start at once.
    let restore = p.run(&["restore"]);
    assert_eq!(restore.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&restore.stdout).contains("nothing to restore"),
        "{}",
        String::from_utf8_lossy(&restore.stdout)
    );
}

#[test]
fn sigterm_during_the_baseline() {
    interrupt_at(Moment::Baseline, libc::SIGTERM);
}

#[test]
fn sigterm_while_the_probe_is_in_the_file() {
    interrupt_at(Moment::Probe, libc::SIGTERM);
}

#[test]
fn sigterm_while_a_candidate_is_proven() {
    interrupt_at(Moment::Candidate, libc::SIGTERM);
}

#[test]
fn sighup_while_a_candidate_is_proven() {
    interrupt_at(Moment::Candidate, libc::SIGHUP);
}

#[test]
fn sigint_while_the_probe_is_in_the_file() {
    interrupt_at(Moment::Probe, libc::SIGINT);
}
