//! What a parsed pytest log is made of. These types serialize to the `parse --json` contract
//! (`schema/parse.schema.json`): field names are part of the public interface.

use serde::Serialize;

/// Bumped only when a field is renamed or removed; new fields do not bump it.
pub const PARSE_SCHEMA_VERSION: u32 = 1;

/// Everything read from one log.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ParsedLog {
    pub schema_version: u32,
    /// What kind of text this was: a pytest session or a bare CPython traceback.
    pub kind: LogKind,
    /// pytest's `rootdir:` header line, when the log has one.
    pub pytest_rootdir: Option<String>,
    /// The root frames were resolved against (absolute).
    pub root: String,
    pub failures: Vec<Failure>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    Pytest,
    /// `python -m unittest` output (`FAIL: test_x (pkg.mod.Class.test_x)` blocks).
    Unittest,
    Cpython,
}

/// What the test runner called the failure; unittest's FAIL/ERROR and pytest's FAILED/ERROR
/// keep their distinction here (an assertion that did not hold vs. an exception raised).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// pytest `FAILED`, unittest `FAIL`.
    Failed,
    /// pytest `ERROR` (setup, teardown, collection), unittest `ERROR`, a bare traceback.
    Error,
}

impl Outcome {
    /// pytest reports a failure in the test body as FAILED and everything else as ERROR.
    pub fn of_pytest(when: When) -> Outcome {
        if when == When::Call {
            Outcome::Failed
        } else {
            Outcome::Error
        }
    }
}

/// The phase a failure happened in.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// In the test body.
    Call,
    /// In a fixture's setup.
    Setup,
    /// In a fixture's teardown.
    Teardown,
    /// While importing or collecting a test module.
    Collect,
    /// The log does not say (a bare traceback, or an `ERROR` summary line with no section).
    Unknown,
}

/// How the failure's traceback was printed; tells a consumer how much detail to expect.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TbStyle {
    Long,
    Short,
    Native,
    Line,
    /// Only the short-summary line (`--tb=no`): no frames.
    Summary,
}

/// One failing test (or collection error, or bare traceback).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Failure {
    /// pytest node id (`tests/test_x.py::TestA::test_b[param]`); a path for collection errors;
    /// for unittest output the node id when the test module's file is under the root, else
    /// unittest's own id (`pkg.mod.TestA.test_b`); null for a bare traceback or when the log
    /// does not name the test.
    pub test: Option<String>,
    pub when: When,
    pub outcome: Outcome,
    /// The section title pytest printed (`TestA.test_b[param]`), or unittest's description
    /// (`test_b (pkg.mod.TestA.test_b)`), when there was one.
    pub headline: Option<String>,
    pub style: TbStyle,
    /// Qualified exception type as printed (`shop.errors.PaymentError`, `AssertionError`).
    pub exc_type: String,
    /// The full message, multi-line messages kept whole.
    pub msg: String,
    /// Outermost to innermost.
    pub frames: Vec<Frame>,
    /// Earlier exceptions, oldest first; each says how it led to the next one.
    pub chain: Vec<ChainLink>,
    /// The members of an exception group, each a full exception of its own.
    pub sub_exceptions: Vec<ExceptionRecord>,
    /// Where the bug most likely is; see [`crate::traceback::locate`].
    pub location: Option<Location>,
    /// Frames that were not chosen as the location because a filter rejected them.
    pub rejected_frames: Vec<RejectedFrame>,
    /// The message of the short-summary line, as printed (pytest may cut it with `...`).
    pub summary: Option<String>,
}

impl Failure {
    /// The frame refused because the log no longer matches the code, when that is why there is
    /// no location.
    pub fn source_changed(&self) -> Option<&RejectedFrame> {
        if self.location.is_some() {
            return None;
        }
        self.rejected_frames
            .iter()
            .find(|r| r.reason == RejectReason::SourceChanged)
    }
}

/// An exception with its own frames: a member of a group, or (inside [`ChainLink`]) a link.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExceptionRecord {
    pub exc_type: String,
    pub msg: String,
    pub frames: Vec<Frame>,
    pub chain: Vec<ChainLink>,
    pub sub_exceptions: Vec<ExceptionRecord>,
    pub location: Option<Location>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// `raise ... from ...`: "The above exception was the direct cause of the following exception".
    Cause,
    /// "During handling of the above exception, another exception occurred".
    Context,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChainLink {
    /// How this exception relates to the one after it.
    pub relation: Relation,
    #[serde(flatten)]
    pub exception: ExceptionRecord,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Frame {
    /// Relative to the root where the file lies under it, else as printed.
    pub file: String,
    /// The path exactly as the log printed it.
    pub printed_file: String,
    /// Absolute path of the file found under the root, or null when it is not there.
    pub resolved: Option<String>,
    /// 1-based.
    pub line: u32,
    /// Function name; null when the log does not show it (long style at module level).
    pub func: Option<String>,
    /// The source line as printed, stripped of indentation; null when not printed.
    pub code: Option<String>,
    /// The caret marks (`^^^`, `~~~^^^`) under the code, when printed.
    pub caret: Option<Caret>,
}

/// Column spans (0-based, end exclusive, in characters) of a 3.11+ caret line.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Caret {
    /// Span within `code` (the stripped line) of everything marked (`~` and `^`).
    pub code_start: u32,
    pub code_end: u32,
    /// Span within `code` of the `^` marks only: the failing operation itself.
    pub focus_start: u32,
    pub focus_end: u32,
    /// The same spans mapped onto the real source line (pytest and CPython de-indent what they
    /// show); null when the file could not be read or its line no longer matches.
    pub line_start: Option<u32>,
    pub line_end: Option<u32>,
    pub line_focus_start: Option<u32>,
    pub line_focus_end: Option<u32>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Location {
    /// Relative to the root.
    pub file: String,
    /// Absolute path.
    pub path: String,
    pub line: u32,
    pub func: Option<String>,
    pub code: Option<String>,
    pub caret: Option<Caret>,
    /// Index into the frames of the exception it was chosen from.
    pub frame_index: usize,
    /// Set when the log is older than the code: the printed source line was found at another
    /// line near the printed one, and `line` is where it is now.
    pub stale: Option<Stale>,
}

/// How far the printed source line moved since the log was written.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Stale {
    /// The line number the log printed.
    pub printed_line: u32,
    /// Where the printed text is in the file now (the location's `line`).
    pub line: u32,
    /// `line - printed_line`: positive when lines were inserted above it since.
    pub offset: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RejectedFrame {
    pub frame_index: usize,
    pub file: String,
    pub line: u32,
    pub reason: RejectReason,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// `<frozen importlib._bootstrap>`, `<string>` and the like.
    NotAFile,
    /// Under the Python installation (stdlib).
    PythonInstall,
    SitePackages,
    Virtualenv,
    /// pytest, pluggy and other test-runner internals.
    TestRunner,
    /// Not under the root.
    OutsideRoot,
    /// Under the root by name, but no such file there.
    Missing,
    /// A test file, skipped because a non-test frame exists.
    TestFile,
    /// The chosen frame's printed source line is neither at its line nor near it
    /// ([`crate::traceback::locate::REANCHOR_WINDOW`] lines either way): the log does not match
    /// the code any more, and no location is given rather than a wrong one.
    SourceChanged,
}
