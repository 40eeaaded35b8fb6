//! Tests of library calls that find their cache through `$XDG_CACHE_HOME` (the journal) run in
//! a process of their own: this binary, re-run for that one test, with the variable in its
//! environment. `std::env::set_var` would change it for every test on the other threads of
//! this process (their journals and caches, the environment of the commands they start), and
//! races with C code (libgit2) reading the environment.

use std::path::PathBuf;
use std::process::Command;

/// Set in the re-run process only: the cache dir its parent made.
const OWN_CACHE: &str = "SELFDEBUG_TEST_OWN_CACHE";

/// In the test's own process, `Some` cache dir, the one `$XDG_CACHE_HOME` names. In the
/// ordinary run, re-runs the calling test in a process of its own with a fresh cache dir,
/// asserts that it passed, and returns `None`: the caller has nothing left to do.
pub fn own_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(OWN_CACHE) {
        return Some(PathBuf::from(dir));
    }
    // The test harness names each test's thread after the test.
    let name = std::thread::current()
        .name()
        .expect("called from a test's thread")
        .to_string();
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads=1"])
        .env(OWN_CACHE, cache.path())
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "1 passed": the filter found the test (0 tests would pass too).
    assert!(
        out.status.success() && stdout.contains(" 1 passed;"),
        "{name} in a process of its own:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    None
}
