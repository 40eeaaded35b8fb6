//! Progress during a long `fix` run (which failure, which candidate, n of m), on stderr and
//! only when stderr is a terminal: one line, rewritten in place with a carriage return, and
//! cleared before the report. Elsewhere (piped, CI logs, `--json`, `--output-format github`)
//! nothing is printed, so logs keep only the lines that carry information.
//!
//! The session announces its steps through the free functions below; the command line
//! installs a reporter once per process. Without one they do nothing.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Where progress lines go.
pub trait Reporter: Send + Sync {
    /// Show a step in place of the previous line: `context` is the failure being worked on
    /// (`[2/3] tests/t.py::test_x`, empty for the baseline), `step` what happens now.
    fn show(&self, context: &str, step: &str);
    /// Remove the line, before other output is written.
    fn clear(&self);
}

static REPORTER: OnceLock<Box<dyn Reporter>> = OnceLock::new();
/// The failure being worked on, shown with each of its steps.
static CONTEXT: Mutex<String> = Mutex::new(String::new());

/// Installs the process's reporter; a second call is ignored.
pub fn install(reporter: Box<dyn Reporter>) {
    let _ = REPORTER.set(reporter);
}

fn set_context(c: String) {
    if let Ok(mut ctx) = CONTEXT.lock() {
        *ctx = c;
    }
}

/// A step outside any failure (the baseline).
pub fn phase(what: &str) {
    if let Some(r) = REPORTER.get() {
        set_context(String::new());
        r.show("", what);
    }
}

/// Work starts on failure `n` of `of` (`of` grows when a fix reveals failures behind it).
pub fn failure(n: usize, of: usize, test: Option<&str>) {
    if let Some(r) = REPORTER.get() {
        let label = format!("[{n}/{of}] {}", test.unwrap_or("(no test named)"));
        r.show(&label, "");
        set_context(label);
    }
}

/// A step of the current failure: `probing the failing line`, `candidate 2/5 (rule): ...`.
pub fn step(what: impl FnOnce() -> String) {
    if let Some(r) = REPORTER.get() {
        let ctx = CONTEXT.lock().map(|c| c.clone()).unwrap_or_default();
        r.show(&ctx, &what());
    }
}

/// Removes the progress line (before the report is printed).
pub fn clear() {
    if let Some(r) = REPORTER.get() {
        r.clear();
    }
}

/// `selfdebug: CONTEXT: STEP` in at most `max` characters. What is cut is the middle of the
/// context (the test id's head), so the counter and the step stay readable.
pub fn line(context: &str, step: &str, max: usize) -> String {
    let parts: Vec<&str> = [context, step]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    let full = format!("selfdebug: {}", parts.join(": "));
    let len = full.chars().count();
    if len <= max || context.is_empty() {
        return full.chars().take(max).collect();
    }
    let (counter, test) = context.split_once("] ").unwrap_or(("", context));
    let keep = test.chars().count().saturating_sub(len - max + 1);
    if keep < 8 || counter.is_empty() {
        // No room for a useful tail of the test id: the counter and the step.
        let short = if counter.is_empty() {
            format!("selfdebug: {step}")
        } else {
            format!("selfdebug: {counter}] {step}")
        };
        return short.chars().take(max).collect();
    }
    let tail: String = test.chars().skip(test.chars().count() - keep).collect();
    let counter = if counter.is_empty() {
        String::new()
    } else {
        format!("{counter}] ")
    };
    let short = format!("{counter}\u{2026}{tail}");
    let parts: Vec<&str> = [short.as_str(), step]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    format!("selfdebug: {}", parts.join(": "))
}

/// The terminal reporter: `\r`, the line fitted to the terminal's width, erase-to-end.
pub struct Terminal {
    shown: AtomicBool,
}

impl Terminal {
    pub fn new() -> Terminal {
        Terminal {
            shown: AtomicBool::new(false),
        }
    }

    /// Columns of the terminal on stderr (80 when it cannot be asked).
    fn width() -> usize {
        // SAFETY: TIOCGWINSZ only fills the winsize struct it is given.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col > 0 {
            ws.ws_col as usize
        } else {
            80
        }
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Reporter for Terminal {
    fn show(&self, context: &str, step: &str) {
        // One column short: a line that fills the last column wraps on some terminals, and
        // `\r` would then rewrite only its second half.
        let max = Self::width().saturating_sub(1).max(20);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{}\x1b[K", line(context, step, max));
        let _ = err.flush();
        self.shown.store(true, Ordering::Relaxed);
    }

    fn clear(&self) {
        if self.shown.swap(false, Ordering::Relaxed) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// The environment variable naming the file descriptor a [`Pipe`] reporter writes to: the
/// MCP server (`selfdebug mcp`) opens a pipe, passes its write end to the `fix` it runs, and
/// forwards each line as a progress notification.
pub const FD_ENV: &str = "SELFDEBUG_PROGRESS_FD";

/// The machine-readable reporter: one JSON object per step, `{"context":..,"step":..,
/// "line":..}` and a newline, on an inherited file descriptor. Write errors are ignored (the
/// reader went away; the run goes on).
pub struct Pipe {
    out: Mutex<std::fs::File>,
}

impl Pipe {
    /// The reporter on the descriptor `SELFDEBUG_PROGRESS_FD` names, when it is set to an open
    /// descriptor of this process (anything else is ignored: progress is never worth failing
    /// a run for).
    pub fn from_env() -> Option<Pipe> {
        use std::os::fd::FromRawFd;
        let fd: i32 = std::env::var(FD_ENV).ok()?.trim().parse().ok()?;
        // Not stdin/stdout/stderr, and open: F_GETFD fails on a closed descriptor.
        // SAFETY: fcntl(F_GETFD) only reads the descriptor's flags.
        if fd <= 2 || unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            return None;
        }
        // Children of this run (pytest) must not hold the pipe open.
        // SAFETY: sets FD_CLOEXEC on a descriptor this process owns from now on.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        // SAFETY: the descriptor is open and passed to this process for this use only.
        Some(Pipe::new(unsafe { std::fs::File::from_raw_fd(fd) }))
    }

    /// The reporter writing to `out`.
    pub fn new(out: std::fs::File) -> Pipe {
        Pipe {
            out: Mutex::new(out),
        }
    }
}

impl Reporter for Pipe {
    fn show(&self, context: &str, step: &str) {
        let event = serde_json::json!({
            "context": context,
            "step": step,
            "line": line(context, step, usize::MAX),
        });
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{event}");
        }
    }

    fn clear(&self) {}
}

#[cfg(test)]
mod tests {
    use super::{line, Pipe, Reporter};

    #[test]
    fn the_pipe_gets_one_json_object_per_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress");
        let pipe = Pipe::new(std::fs::File::create(&path).unwrap());
        pipe.show("", "running the suite");
        pipe.show("[1/2] t.py::a", "candidate 1/3 (rule-x): running the test");
        pipe.clear();
        let text = std::fs::read_to_string(&path).unwrap();
        let events: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            events,
            [
                serde_json::json!({"context": "", "step": "running the suite",
                    "line": "selfdebug: running the suite"}),
                serde_json::json!({"context": "[1/2] t.py::a",
                    "step": "candidate 1/3 (rule-x): running the test",
                    "line": "selfdebug: [1/2] t.py::a: candidate 1/3 (rule-x): running the test"}),
            ]
        );
    }

    #[test]
    fn long_lines_lose_the_head_of_the_test_id() {
        assert_eq!(
            line("", "running the suite", 80),
            "selfdebug: running the suite"
        );
        assert_eq!(line("[1/2] t.py::a", "", 80), "selfdebug: [1/2] t.py::a");
        let l = line(
            "[1/2] tests/test_core.py::test_dump",
            "candidate 1/1 (rule-x): running",
            60,
        );
        assert_eq!(
            l,
            "selfdebug: [1/2] \u{2026}test_dump: candidate 1/1 (rule-x): running"
        );
        assert_eq!(l.chars().count(), 60);
        // Too narrow to keep a useful tail of the test id: the counter and the step.
        assert_eq!(
            line(
                "[1/3] tests/test_core.py::test_dump",
                "candidate 1/1 (name-import-stdlib): running the test",
                79
            ),
            "selfdebug: [1/3] candidate 1/1 (name-import-stdlib): running the test"
        );
        assert_eq!(
            line("[1/2] tests/x.py::t", "a long step here", 20),
            "selfdebug: [1/2] a l"
        );
    }
}
