//! Exit codes: stable, documented in `--help` and the README.

/// `parse`: at least one failure was read.
pub const OK: i32 = 0;
/// `parse`: the log is pytest output in which nothing failed.
pub const NO_FAILURE: i32 = 1;
/// Bad input: unreadable file, not a pytest log or traceback, bad flags.
pub const BAD_INPUT: i32 = 2;
