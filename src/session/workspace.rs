//! Where candidates are written: a scratch copy for `--dry-run` (the user's tree is never
//! written, not even for a moment), or the project itself behind a journal that can put every
//! byte back.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::error::SessionError;
use crate::journal::Journal;
use crate::scratch::Scratch;

/// Where candidates are written: a scratch copy (dry run) or the project behind a journal.
pub trait Workspace {
    /// Where pytest runs and files are read.
    fn root(&self) -> &Path;
    /// Environment for every run (the scratch copy's `PYTHONPATH`).
    fn env(&self) -> Vec<(OsString, OsString)>;
    /// Called before a file is first written by anyone, the probe included.
    fn record(&mut self, path: &Path) -> Result<(), SessionError>;
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError>;
    /// Every file written so far, with its bytes before the first write (the lazy baseline
    /// runs tests on them).
    fn originals(&self) -> Vec<(PathBuf, Vec<u8>)>;
}

/// The dry run's workspace.
pub struct ScratchWorkspace {
    pub(super) scratch: Scratch,
    /// Each written file's bytes as copied, before its first write: the patch is the difference
    /// from these, never from the user's tree as it is at the end (which another run may be
    /// changing by then).
    pub(super) originals: BTreeMap<PathBuf, Vec<u8>>,
}

impl Workspace for ScratchWorkspace {
    fn root(&self) -> &Path {
        self.scratch.root()
    }
    fn env(&self) -> Vec<(OsString, OsString)> {
        vec![("PYTHONPATH".into(), self.scratch.pythonpath().into())]
    }
    fn record(&mut self, path: &Path) -> Result<(), SessionError> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let std::collections::btree_map::Entry::Vacant(slot) = self.originals.entry(key) {
            let bytes = std::fs::read(path).map_err(|e| SessionError::ScratchFile {
                action: "read",
                path: path.to_path_buf(),
                source: e,
            })?;
            slot.insert(bytes);
        }
        Ok(())
    }
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
        self.record(path)?;
        std::fs::write(path, bytes).map_err(|e| SessionError::ScratchFile {
            action: "write",
            path: path.to_path_buf(),
            source: e,
        })
    }
    fn originals(&self) -> Vec<(PathBuf, Vec<u8>)> {
        self.originals
            .iter()
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect()
    }
}

/// The real run's workspace: the project itself, every write journaled first.
pub struct JournalWorkspace {
    pub(super) journal: Journal,
}

impl Workspace for JournalWorkspace {
    fn root(&self) -> &Path {
        self.journal.root()
    }
    fn env(&self) -> Vec<(OsString, OsString)> {
        Vec::new()
    }
    fn record(&mut self, path: &Path) -> Result<(), SessionError> {
        self.journal.record(path).map_err(SessionError::Journal)
    }
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
        self.journal
            .write(path, bytes)
            .map_err(SessionError::Journal)
    }
    fn originals(&self) -> Vec<(PathBuf, Vec<u8>)> {
        self.journal
            .files()
            .into_iter()
            .filter_map(|p| self.journal.original(&p).map(|b| (p, b.to_vec())))
            .collect()
    }
}
