//! selfdebug's own pytest plugin (`_selfdebug_pytest.py`, embedded in the binary): a per-test
//! time limit that fails a stuck test where it is stuck, so one hang cannot stall a run; in the
//! baseline run, the crash-frame facts of each failing test and one in-session rerun of it
//! (read by [`crate::probe::frame_facts`]). Beside
//! it, `_selfdebug_cover.py` records per-test line coverage for fault localization; it is loaded
//! only into the runs that ask for it, with the line tracer it shares with command mode
//! (`_selfdebug_trace.py`). How a value is recorded (`_selfdebug_values.py`) is one source for
//! the plugin's facts and the probe, which inlines it.
//!
//! The module is written once into a private directory (`~/.cache/selfdebug/plugin/<hash>/`,
//! 0700 and owned by the user, since a directory others can write would let them run code in
//! every test run) and loaded with `-p _selfdebug_pytest` and that directory on `PYTHONPATH`.
//! It is never written into the project.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The plugin's module name (`-p NAME`).
pub const MODULE: &str = "_selfdebug_pytest";

/// The plugin's source.
pub const SOURCE: &str = include_str!("_selfdebug_pytest.py");

/// The module both the plugin's facts and the probe record values with (the plugin imports it;
/// the probe inlines it, see [`crate::probe::pysrc`]). It lives in the same private directory.
pub const VALUES_MODULE: &str = "_selfdebug_values";

/// The value recorder's source.
pub const VALUES_SOURCE: &str = include_str!("_selfdebug_values.py");

/// The coverage plugin's module name (`-p COVER_MODULE`, only for localization runs; see
/// [`crate::localize`]). It lives in the same private directory.
pub const COVER_MODULE: &str = "_selfdebug_cover";

/// The coverage plugin's source.
pub const COVER_SOURCE: &str = include_str!("_selfdebug_cover.py");

/// The line tracer both the coverage plugin and command mode's traced run import (see
/// [`crate::localize`]). It lives in the same private directory.
pub const TRACE_MODULE: &str = "_selfdebug_trace";

/// The tracer's source.
pub const TRACE_SOURCE: &str = include_str!("_selfdebug_trace.py");

/// The exception type a timed-out test fails with, as pytest prints it.
pub const TIMEOUT_EXC: &str = "_selfdebug_pytest.PerTestTimeout";

/// The directory holding the plugin module, written on first use; `None` when no private
/// directory can be had (then runs go without the plugin, and without per-test limits).
pub fn dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(install).as_deref()
}

fn install() -> Option<PathBuf> {
    let files = [
        (MODULE, SOURCE),
        (VALUES_MODULE, VALUES_SOURCE),
        (COVER_MODULE, COVER_SOURCE),
        (TRACE_MODULE, TRACE_SOURCE),
    ];
    let hash = crate::journal::hash(
        format!("{SOURCE}\0{VALUES_SOURCE}\0{COVER_SOURCE}\0{TRACE_SOURCE}").as_bytes(),
    );
    let name = format!("plugin-{}", &hash[..12.min(hash.len())]);
    let mut bases = Vec::new();
    if let Some(cache) = crate::process::cache_home() {
        bases.push(cache.join("plugin"));
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    bases.push(std::env::temp_dir().join(format!("selfdebug-{uid}")));
    for base in bases {
        let dir = base.join(&name);
        if !crate::process::private_dir(&dir) {
            continue;
        }
        if files
            .iter()
            .all(|(module, source)| write_module(&dir, module, source))
        {
            return Some(dir);
        }
    }
    None
}

/// `dir/module.py` holds `source` (already, or now).
fn write_module(dir: &Path, module: &str, source: &str) -> bool {
    let file = dir.join(format!("{module}.py"));
    if std::fs::read(&file).is_ok_and(|b| b == source.as_bytes()) {
        return true;
    }
    // Atomic, so a concurrent run never imports half a file.
    crate::process::write_private(&file, source.as_bytes()).is_ok()
}

/// The bytes at the start of a hang file that hold the phase's node id and name (the plugin's
/// `_HEADER`); faulthandler's dump is written after them.
const HANG_HEADER: usize = 16384;

/// A test that a run's backstop caught stuck in code that never returned to Python (the
/// per-test timer could not interrupt it), read from the plugin's hang file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hang {
    /// The test's node id.
    pub test: String,
    /// `setup`, `call` or `teardown`.
    pub when: String,
    /// faulthandler's dump of every thread (`File "x.py", line 3 in f` lines).
    pub stack: String,
}

impl Hang {
    /// Reads the hang files a run left in `dir` (one per process); the first complete one.
    pub fn read(dir: &Path) -> Option<Hang> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("hang-"))
            })
            .collect();
        files.sort();
        files.into_iter().find_map(|p| {
            let bytes = std::fs::read(p).ok()?;
            // The header region: node id and phase, NUL-terminated; the dump follows it.
            let region = &bytes[..bytes.len().min(HANG_HEADER)];
            let end = region.iter().position(|&b| b == 0).unwrap_or(region.len());
            let header = String::from_utf8_lossy(&region[..end]).into_owned();
            let mut lines = header.lines();
            let test = lines.next()?.to_string();
            let when = lines.next()?.to_string();
            let dump = String::from_utf8_lossy(bytes.get(HANG_HEADER..).unwrap_or_default());
            let stack: Vec<&str> = dump.lines().filter(|l| !l.trim().is_empty()).collect();
            // A file with no dump belongs to a test that was still running when the run
            // ended for another reason (the run's own timeout): not a backstop hang.
            (!stack.is_empty()).then(|| Hang {
                test,
                when,
                stack: stack.join("\n"),
            })
        })
    }

    /// The innermost frame of the main thread's stack (`file:line in func`), where faulthandler
    /// saw the test stuck.
    pub fn frame(&self) -> Option<String> {
        // faulthandler prints the current thread first, most recent call first.
        self.stack
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("File \""))
            .map(|l| {
                let rest = &l["File \"".len()..];
                match rest.split_once("\", line ") {
                    Some((file, tail)) => format!("{file}:{tail}"),
                    None => rest.to_string(),
                }
            })
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}) hung in code that does not return to Python{}; the run was ended by \
             selfdebug's backstop",
            self.test,
            self.when,
            self.frame()
                .map(|f| format!(", stuck at {f}"))
                .unwrap_or_default()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hang_file(header: &str, dump: &str) -> Vec<u8> {
        let mut b = vec![0u8; HANG_HEADER];
        b[..header.len()].copy_from_slice(header.as_bytes());
        b.extend_from_slice(dump.as_bytes());
        b
    }

    #[test]
    fn the_header_size_is_the_plugins() {
        assert!(SOURCE.contains(&format!("\n_HEADER = {HANG_HEADER}\n")));
    }

    #[test]
    fn hang_file_is_read_with_its_innermost_frame() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("hang-42.txt"),
            hang_file(
                // A longer header of an earlier phase is left after the NUL.
                "tests/test_a.py::test_x\ncall\n\0tests/test_a.py::test_longer_name\nsetup\n",
                "Timeout (0:00:07)!\nThread 0x00007f (most recent call first):\n  File \"/p/m.py\", line 3 in spin\n  File \"/p/tests/test_a.py\", line 5 in test_x\n",
            ),
        )
        .unwrap();
        let h = Hang::read(d.path()).unwrap();
        assert_eq!(h.test, "tests/test_a.py::test_x");
        assert_eq!(h.when, "call");
        assert_eq!(h.frame().as_deref(), Some("/p/m.py:3 in spin"));
        // A test still running when the run ended another way left no dump.
        let e = tempfile::tempdir().unwrap();
        std::fs::write(e.path().join("hang-1.txt"), hang_file("t::x\ncall\n", "")).unwrap();
        assert_eq!(Hang::read(e.path()), None);
        // Nor does a file cut short inside the header.
        std::fs::write(e.path().join("hang-1.txt"), "t::x\ncall\n").unwrap();
        assert_eq!(Hang::read(e.path()), None);
    }
}
