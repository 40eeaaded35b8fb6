//! A CI job that is cancelled (SIGTERM, then SIGKILL after a grace period), a closed terminal
//! (SIGHUP) or Ctrl-C (SIGINT) at any moment of a run: the running pytest group is killed and
//! every touched file is restored before selfdebug exits. Each test holds the run in a state
//! the fixture's own test reports (see `support::project::held_project`), never waiting for a
//! sleep to be long enough.

use crate::support;

use std::process::Stdio;

use support::project::{assert_same, held_project};

/// Signals a run held where its test sees `state`: `original` (the baseline, nothing written
/// yet), `probe` (the probe line in the module) or `candidate` (a candidate in the module).
fn interrupt_at(state: &str, signal: libc::c_int) {
    let h = held_project();
    let p = &h.project;
    p.git(&["init", "-q"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    let before = p.snapshot();
    h.hold(state);
    let child = p
        .cmd(&["fix", "--json", "--timeout", "600"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    h.wait_for(state, 300);
    // SAFETY: plain syscall on our own child, which has not been waited for yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    h.release();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{state}: {stderr}");
    assert_eq!(h.seen().last().map(String::as_str), Some(state));
    let j = support::project::json(&out);
    assert_eq!(j["final_status"], "error");
    assert_eq!(
        j["error"],
        "interrupted: every touched file was restored byte for byte"
    );
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
    interrupt_at("original", libc::SIGTERM);
}

#[test]
fn sigterm_while_the_probe_is_in_the_file() {
    interrupt_at("probe", libc::SIGTERM);
}

#[test]
fn sigterm_while_a_candidate_is_proven() {
    interrupt_at("candidate", libc::SIGTERM);
}

#[test]
fn sighup_while_a_candidate_is_proven() {
    interrupt_at("candidate", libc::SIGHUP);
}

#[test]
fn sigint_while_the_probe_is_in_the_file() {
    interrupt_at("probe", libc::SIGINT);
}
