//! Exit codes: stable, documented in `--help` and the README.

/// `parse`: at least one failure was read. `fix`: every failure is fixed (or nothing failed).
pub const OK: i32 = 0;
/// `parse`: the log is pytest output in which nothing failed.
pub const NO_FAILURE: i32 = 1;
/// `fix --exit-non-zero-on-fix`: the run passed, but only with the proven patches (kept, or in
/// a dry run printed): the code was broken.
pub const FIXED: i32 = 1;
/// Bad input: unreadable file, not a pytest log or traceback, bad flags, broken rule file.
/// Nothing was touched.
pub const BAD_INPUT: i32 = 2;
/// `fix`: some failures fixed, others not.
pub const PARTIAL: i32 = 3;
/// `fix`: no failure could be fixed; every touched file was restored.
pub const NOT_FIXED: i32 = 4;
/// `fix`: the failures are not code bugs (environment, dependency): reported, not patched.
pub const ESCALATED: i32 = 5;
/// The tool could not do its work, or pytest gave no verdict: pytest missing, a run could not
/// start, pytest crashed, was interrupted or printed nothing readable, the suite did not finish
/// in time, a file could not be restored. The message says what to do.
pub const ENVIRONMENT: i32 = 6;
/// `fix`: pytest collected no test (its exit status 5): nothing was checked, so nothing can be
/// called green.
pub const NO_TESTS: i32 = 7;
/// `fix --no-validate`: candidates were printed, none was proven (nothing ran).
pub const PROPOSED: i32 = 8;
/// The reader of stdout (or stderr) went away (`selfdebug rules | head -1`): the command stopped
/// quietly, a `fix` after restoring every file it touched. 128 + SIGPIPE, what a shell reports
/// for a process that SIGPIPE killed. A `fix` whose work was done first keeps its own code
/// (see [`crate::stdio::settle`]).
pub const BROKEN_PIPE: i32 = 141;
