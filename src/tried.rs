//! Budget hygiene: an edit that pytest rejected for a failure is not tried again for the same
//! failure, whether the same bytes come back from another rule, from a later step, or for
//! another test of a group that fails the same way (same exception, message and place).
//!
//! An edit is known by the bytes it leaves in the file, not by the rule that made it: two
//! rules proposing the same change are one candidate. The bytes include every fix accepted so
//! far, so a candidate rejected before an accepted fix is tried again on the new code (it is a
//! different file then).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::traceback::Failure;

/// What makes two failures "the same" for the purpose of not repeating a rejected edit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Signature {
    exc_type: String,
    msg: String,
    file: Option<String>,
    line: Option<u32>,
}

impl Signature {
    fn of(failure: &Failure) -> Signature {
        Signature {
            exc_type: failure.exc_type.clone(),
            msg: failure.msg.clone(),
            file: failure.location.as_ref().map(|l| l.file.clone()),
            line: failure.location.as_ref().map(|l| l.line),
        }
    }
}

/// Rejected edits of one run, each with the test it was rejected for (`None`: a failure
/// without a test id).
#[derive(Debug, Default)]
pub struct Tried {
    rejected: HashMap<(Signature, PathBuf, u64), Option<String>>,
}

/// A 64-bit digest of the patched bytes (SipHash with fixed keys: the same in every run).
fn digest(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

impl Tried {
    /// The test an identical edit (`patched` as the new bytes of `path`) was already rejected
    /// for, with this same failure; `Some(None)` when that failure had no test id.
    pub fn rejected_for(
        &self,
        failure: &Failure,
        path: &Path,
        patched: &[u8],
    ) -> Option<Option<&str>> {
        self.rejected
            .get(&(Signature::of(failure), path.to_path_buf(), digest(patched)))
            .map(Option::as_deref)
    }

    /// Records that pytest rejected `patched` for `failure`.
    pub fn reject(&mut self, failure: &Failure, path: &Path, patched: &[u8]) {
        self.rejected
            .entry((Signature::of(failure), path.to_path_buf(), digest(patched)))
            .or_insert_with(|| failure.test.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traceback::Location;

    fn failure(test: &str, line: u32) -> Failure {
        Failure {
            test: Some(test.into()),
            when: crate::traceback::When::Call,
            outcome: crate::traceback::Outcome::Failed,
            headline: None,
            style: crate::traceback::TbStyle::Long,
            exc_type: "TypeError".into(),
            msg: "'<' not supported".into(),
            frames: vec![],
            chain: vec![],
            sub_exceptions: vec![],
            location: Some(Location {
                file: "app/core.py".into(),
                path: "/p/app/core.py".into(),
                line,
                func: None,
                code: None,
                caret: None,
                frame_index: 0,
                stale: None,
            }),
            rejected_frames: vec![],
            summary: None,
        }
    }

    #[test]
    fn same_failure_same_bytes_is_a_repeat() {
        let mut t = Tried::default();
        let path = Path::new("/p/app/core.py");
        t.reject(&failure("tests/t.py::a", 3), path, b"x = 1\n");
        // Another test of the group, same failure: the edit is known, with the first test.
        assert_eq!(
            t.rejected_for(&failure("tests/t.py::b", 3), path, b"x = 1\n"),
            Some(Some("tests/t.py::a"))
        );
        // Other bytes, another place, another file: not a repeat.
        assert_eq!(
            t.rejected_for(&failure("tests/t.py::b", 3), path, b"x = 2\n"),
            None
        );
        assert_eq!(
            t.rejected_for(&failure("tests/t.py::b", 4), path, b"x = 1\n"),
            None
        );
        assert_eq!(
            t.rejected_for(
                &failure("tests/t.py::b", 3),
                Path::new("/p/o.py"),
                b"x = 1\n"
            ),
            None
        );
    }
}
