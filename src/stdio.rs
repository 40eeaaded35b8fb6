//! Writing to stdout and stderr without ever panicking.
//!
//! `print!` and `eprintln!` panic when the stream is a pipe whose reader has gone away
//! (`selfdebug rules | head -1`): an agent or a shell pipeline that stops reading early would
//! see a crash (exit 101). Every write of the product goes through here instead. A write that
//! fails with EPIPE marks the pipe broken and raises the same flag SIGINT does, so a `fix` in
//! progress stops its runs and restores every touched file; the command then exits with
//! [`crate::exit::BROKEN_PIPE`] (141, what a shell reports for a process killed by SIGPIPE).
//! A command whose outcome is settled before the reader goes away ([`settle`]: a `fix` that
//! has finished its work and prints its report) keeps its own exit code, which says what
//! happened to the tree; only its output is lost.
//! Other write errors (a stream closed with `2>&-`) are ignored: nobody can be told.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static BROKEN: AtomicBool = AtomicBool::new(false);
static SETTLED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout or stderr found its reader gone.
pub fn broken_pipe() -> bool {
    BROKEN.load(Ordering::SeqCst)
}

/// The command's work is done and its exit code decided: a reader that goes away from now on
/// cuts the output but no longer turns the exit code into 141. Has no effect once the reader
/// is gone (the work was then stopped by it).
pub fn settle() {
    if !broken_pipe() {
        SETTLED.store(true, Ordering::SeqCst);
    }
}

/// The exit code of a command that would end with `code`: 141 when its reader went away before
/// its outcome was settled, else `code`.
pub fn exit_code(code: i32) -> i32 {
    if broken_pipe() && !SETTLED.load(Ordering::SeqCst) {
        crate::exit::BROKEN_PIPE
    } else {
        code
    }
}

fn write_to(mut w: impl Write, bytes: &[u8]) {
    // Once the reader is gone, nothing more is written (it would fail the same way).
    if broken_pipe() {
        return;
    }
    if let Err(e) = w.write_all(bytes).and_then(|()| w.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            BROKEN.store(true, Ordering::SeqCst);
            crate::process::interrupt();
        }
    }
}

/// Writes `bytes` to stdout (and flushes).
pub fn out_bytes(bytes: &[u8]) {
    write_to(std::io::stdout().lock(), bytes);
}

/// Writes `text` to stdout (and flushes).
pub fn out(text: &str) {
    out_bytes(text.as_bytes());
}

/// Writes `text` to stderr.
pub fn err(text: &str) {
    write_to(std::io::stderr().lock(), text.as_bytes());
}

/// Writes `text` and a newline to stderr.
pub fn errln(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    err(&line);
}
