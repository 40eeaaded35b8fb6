//! A reader that goes away (`selfdebug rules | head -1`): every command ends quietly with
//! exit 141 (no panic, no "failed printing to stdout"), and a `fix` stopped by it leaves the
//! project's bytes as they were; a `fix` whose work was done first keeps its exit code. Deterministic: the pipe's read end is closed before the command starts, so
//! its first write fails with EPIPE whatever the machine's load.

use std::process::{Command, Output, Stdio};

use crate::support;
use support::project::{assert_same, demo_project, project};
use support::{fixtures, path_str};

/// The write end of a pipe whose read end is already closed (`std::io::pipe` is newer than
/// the MSRV).
fn reader_gone() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // Close-on-exec: a command another test starts meanwhile must not inherit the read end
    // (the pipe would have a reader again).
    // SAFETY: pipe2 fills the two descriptors it is given; each is owned exactly once below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    Stdio::from(writer)
}

/// Runs `cmd` with stdout a pipe whose reader is already gone; stderr is captured.
fn with_stdout_closed(mut cmd: Command) -> Output {
    cmd.stdout(reader_gone()).stderr(Stdio::piped());
    // `cmd` holds the write end until it is dropped; the child has its own copy.
    let child = cmd.spawn().unwrap();
    drop(cmd);
    child.wait_with_output().unwrap()
}

/// Ended with 141 and said nothing of a panic.
#[track_caller]
fn assert_quiet_141(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("failed printing"),
        "{stderr}"
    );
    support::assert_exit(out, 141);
}

#[test]
fn parse_rules_config_restore_end_with_141() {
    let p = project(&[("conftest.py", "")]);
    let log = fixtures().join("tracebacks/demo/tb-auto.txt");
    let root = support::project_root("demo");
    let parse = |json: bool| {
        let mut cmd = p.cmd_in(".", &["parse", path_str(&log), "--root", path_str(&root)]);
        if json {
            cmd.arg("--json");
        }
        cmd
    };
    for (what, cmd) in [
        ("parse", parse(false)),
        ("parse --json", parse(true)),
        ("rules", p.cmd(&["rules"])),
        ("rules --json", p.cmd(&["rules", "--json"])),
        ("config", p.cmd(&["config"])),
        ("config --json", p.cmd(&["config", "--json"])),
        ("restore", p.cmd(&["restore"])),
        ("restore --json", p.cmd(&["restore", "--json"])),
        ("--help", p.cmd_in(".", &["--help"])),
    ] {
        let out = with_stdout_closed(cmd);
        assert_eq!(out.status.code(), Some(141), "{what}");
        assert_quiet_141(&out);
    }
}

#[test]
fn probe_ends_with_141_and_restores_the_file() {
    let p = demo_project();
    let before = p.snapshot();
    let out = with_stdout_closed(p.cmd(&["probe", "--json"]));
    assert_quiet_141(&out);
    assert_same(&before, &p.snapshot());
}

/// A reader that goes away after the work is done (`fix | true`: the report is the first
/// thing written to stdout) cuts only the report: the run keeps its own exit code, which says
/// whether the tree changed, and the tree is exactly what a run whose report was read leaves
/// (the patch kept by `fix`, nothing by `fix --dry-run`). The same in every output format.
#[test]
fn fix_whose_reader_goes_after_the_work_keeps_its_exit_code_and_its_patch() {
    for args in [
        &["fix"][..],
        &["fix", "--json"],
        &["fix", "--output-format", "github"],
        &["fix", "--dry-run"],
        &["fix", "--dry-run", "--json"],
    ] {
        let read = demo_project();
        let mut cmd = read.cmd(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let expected = cmd.output().unwrap();
        support::assert_exit(&expected, 0);

        let cut = demo_project();
        let before = cut.snapshot();
        let out = with_stdout_closed(cut.cmd(args));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        let words = |p: &support::project::Project| std::fs::read(p.root.join("words.py")).unwrap();
        assert_eq!(words(&cut), words(&read), "{args:?}");
        if args.contains(&"--dry-run") {
            assert_same(&before, &cut.snapshot());
        } else {
            assert_ne!(
                words(&cut).as_slice(),
                before["words.py"].0.as_slice(),
                "{args:?}"
            );
        }
    }
}

/// A closed stderr is a reader gone too: the first line a real `fix` writes there (the root
/// it works in, before any run) raises the interrupt flag, so the run stops as for SIGINT,
/// with every file as it was, and ends with 141.
#[test]
fn fix_with_stderr_closed_stops_before_touching_anything() {
    let p = demo_project();
    let before = p.snapshot();
    let mut cmd = p.cmd(&["fix"]);
    cmd.stdout(Stdio::piped()).stderr(reader_gone());
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_same(&before, &p.snapshot());
}
