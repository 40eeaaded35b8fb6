//! The journal: nothing lost, ever.
//!
//! Before the first byte of a project file is written, its original bytes, hash, mtime and
//! permissions are kept three times: a copy in the journal dir, the original design's backup copy
//! (`{backup_dir}/agent-self-debugger-loop/{basename}.{unix_ts}.bak`; default backup dir
//! `{temp dir}/selfdebug-{uid}`, per user, checked to be ours and not a symlink), and, where
//! the root is in a git repository, a blob in that repository under
//! `refs/selfdebug/<run-id>/<n>` (it survives a wiped cache or temp dir). The journal file is
//! written atomically and synced before the project file is touched, so a run killed at any
//! moment leaves enough to restore every file. When the run ends, the backup copy stays only
//! for a file that keeps a change: a rollback or `restore` removes them all.
//!
//! A dry run holds the same lock (marked `dry_run`) only while it copies the project, so no
//! real run can have a probe or a candidate in a file meanwhile; see [`while_locked_for_copy`].
//!
//! Where things live (all outside the project, which is left with nothing of ours):
//!
//! ```text
//! $XDG_CACHE_HOME/selfdebug/journals/<hash of the canonical root>/   (else ~/.cache/..., else tmp)
//!     lock            O_EXCL; {"pid", "since", "run_id", "proc_start", "dry_run"}; stale when
//!                     pid is dead
//!     guard           flock'ed while the lock is checked or taken
//!     journal.json    versioned JSON, see `Doc`
//!     files/<n>.orig  the journal copies
//! ```
//!
//! Rollback and restore write back exactly the recorded files (git is never asked to stash,
//! reset or check out anything; the index and untracked files are never touched), restore mtime and permissions, and verify
//! each by hash. The hash is git's blob id (SHA-1 of the content with git's header): computed by
//! the libgit2 we link for the refs anyway, and equal to the id of the blob in the repository.

mod disk;
mod lock;
mod prune;

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use git2::{ErrorCode, Oid, Repository};
use serde::{Deserialize, Serialize};

pub use disk::{hash, make_private_dir, user_temp_dir, BACKUP_SUBDIR};
pub use prune::{prune_backups, recorded_secs, Pruned};

const FORMAT: &str = "selfdebug-journal";
/// Version of `journal.json`; a journal of a newer version is never guessed at.
pub const JOURNAL_VERSION: u32 = 1;
/// How `hash` fields are computed: git's blob id of the content.
pub const HASH_ALGORITHM: &str = "git-blob-sha1";
const JOURNAL_FILE: &str = "journal.json";
const COPIES_DIR: &str = "files";
const REF_PREFIX: &str = "refs/selfdebug";

/// `journal.json`.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Doc {
    format: String,
    version: u32,
    state: State,
    run_id: String,
    /// The canonical project root; entries are relative to it.
    root: PathBuf,
    pid: u32,
    /// Unix seconds.
    started: u64,
    hash_algorithm: String,
    backup_dir: PathBuf,
    /// The repository's git dir when the root is in one.
    git_dir: Option<PathBuf>,
    /// Each entry lists the hashes of what the run wrote (`written`); a journal of an older
    /// selfdebug does not, and its files are restored whatever they hold.
    #[serde(default)]
    tracks_writes: bool,
    files: Vec<Entry>,
}

/// `active` until the run ends; a finished journal is only cleanup left over by a kill.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum State {
    Active,
    Committed,
    RolledBack,
}

/// One recorded file.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Entry {
    n: usize,
    /// Relative to the root.
    path: PathBuf,
    hash: String,
    size: u64,
    mtime_ns: i64,
    mode: u32,
    journal_copy: PathBuf,
    backup: Option<PathBuf>,
    git_blob: Option<String>,
    git_ref: Option<String>,
    /// The hashes of every content the run wrote to the file, each recorded before it was
    /// written: bytes that are none of these nor the original were written by someone else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    written: Vec<String>,
}

/// A journal left by a run that was killed.
#[derive(Serialize, Debug, Clone)]
pub struct PendingJournal {
    pub root: PathBuf,
    pub run_id: String,
    /// The pid of the killed run.
    pub pid: u32,
    /// Unix seconds when that run started.
    pub started: u64,
    /// The recorded files, relative to the root.
    pub files: Vec<PathBuf>,
    pub journal: PathBuf,
}

crate::status::closed_set! {
    /// Where a restored file's original bytes came from (`files[].source` of the restore
    /// report).
    Origin {
        JournalCopy => "journal_copy",
        BackupCopy => "backup_copy",
        GitBlob => "git_blob",
        /// The bytes the running process still held (only when every copy on disk was lost).
        Memory => "memory",
    }
}

crate::status::closed_set! {
    /// What restoring did to a file.
    Action {
        /// The file had other bytes: the original was written back.
        Rewritten => "rewritten",
        /// The file was gone: it was created again.
        Recreated => "recreated",
        /// The file already had the original bytes: only mtime and permissions were set.
        Unchanged => "unchanged",
        /// The file holds bytes that are neither its original nor any the run wrote: another
        /// program changed it after the run; it is left as it is, its original kept in the
        /// backup copy (`backups`).
        Left => "left",
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct RestoredFile {
    /// Relative to the root.
    pub path: PathBuf,
    /// The verified hash of the bytes now on disk (equal to the recorded one; for `left`, the
    /// other program's bytes).
    pub hash: String,
    pub size: u64,
    pub source: Origin,
    pub action: Action,
}

#[derive(Serialize, Debug, Clone)]
pub struct RestoreReport {
    pub root: PathBuf,
    /// The run whose files were restored; `None` when there was nothing to restore.
    pub run_id: Option<String>,
    pub files: Vec<RestoredFile>,
    /// Backup copies that could not be removed and so remain (normally none: a restored file
    /// needs no backup).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub backups: Vec<KeptBackup>,
    /// Things that did not stop the restore (a git ref that could not be deleted, ...).
    pub warnings: Vec<String>,
}

/// A backup copy that remains after a rollback.
#[derive(Serialize, Debug, Clone)]
pub struct KeptBackup {
    /// Relative to the root.
    pub path: PathBuf,
    pub backup: PathBuf,
    pub original_hash: String,
}

#[derive(Serialize, Debug, Clone)]
pub struct CommittedFile {
    /// Relative to the root.
    pub path: PathBuf,
    /// Whether the kept content differs from the original.
    pub changed: bool,
    pub original_hash: String,
    /// Hash of the kept content; `None` when the file no longer exists.
    pub hash: Option<String>,
    /// The original design's backup copy, which stays only when the file keeps a change.
    pub backup: Option<PathBuf>,
}

#[derive(Serialize, Debug, Clone)]
pub struct CommitReport {
    pub root: PathBuf,
    pub run_id: String,
    pub files: Vec<CommittedFile>,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Another live run holds the lock of this root.
    #[error(
        "{}: another selfdebug run (pid {pid}, started {}) is working on this project; \
         wait for it to finish (if it hangs, stop it, then run `selfdebug restore`)",
        root.display(),
        ago(*since)
    )]
    Locked { root: PathBuf, pid: u32, since: u64 },
    /// A run that was killed left a journal; `selfdebug restore` brings the files back.
    #[error(
        "{}: a selfdebug run started {} was killed and may have left {} half-patched; \
         run `selfdebug restore --root {}` to bring the originals back",
        root.display(),
        ago(*started),
        list(files),
        root.display()
    )]
    Pending {
        root: PathBuf,
        files: Vec<PathBuf>,
        started: u64,
    },
    /// Files this run had recorded were written by someone else meanwhile (an editor, another
    /// tool): the run stops; its own edits are undone, theirs are left (with the backup copy
    /// of each file's original).
    #[error(
        "{}: {} changed by another program while selfdebug worked on {}; selfdebug stopped, \
         restored the files only it had changed, and left {} as {} now{}",
        root.display(),
        elsewhere_list(files),
        if files.len() == 1 { "it" } else { "them" },
        if files.len() == 1 { "it" } else { "them" },
        if files.len() == 1 { "it is" } else { "they are" },
        elsewhere_backups(files)
    )]
    ChangedElsewhere {
        root: PathBuf,
        /// (path relative to the root, backup copy of its original).
        files: Vec<(PathBuf, Option<PathBuf>)>,
    },
    /// The path may not be written (outside the root, symlink out, virtualenv, ...).
    #[error("refusing to write {}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
    /// The backup dir cannot hold the backup copies (not ours, a symlink, not writable).
    #[error("cannot keep the backup copies: {0}; choose another dir with --backup-dir")]
    BackupDir(#[source] disk::PrivateDirError),
    /// A backup copy could not be written in the backup folder `dir`.
    #[error(
        "cannot keep the backup copies: cannot write one in {}: {source}; choose another dir \
         with --backup-dir",
        dir.display()
    )]
    BackupCopy { dir: PathBuf, source: io::Error },
    /// `journal.json` cannot be understood.
    #[error(
        "journal {} cannot be read ({reason}); the backup copies it lists are under \
         {BACKUP_SUBDIR}/ in the backup dir: restore by hand, then delete the journal",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },
    /// Some files could not be restored; the journal is kept for another try.
    #[error(
        "could not restore {}; the journal is kept at {}: fix the cause and run \
         `selfdebug restore` again",
        unrestored(failures),
        journal.display()
    )]
    Unrecoverable {
        failures: Vec<(PathBuf, RestoreFailure)>,
        journal: PathBuf,
    },
}

impl JournalError {
    /// The pid of the live run that holds the lock ([`JournalError::Locked`]).
    pub fn lock_pid(&self) -> Option<u32> {
        match self {
            JournalError::Locked { pid, .. } => Some(*pid),
            _ => None,
        }
    }
}

/// Why one file could not be restored.
#[derive(Debug, thiserror::Error)]
pub enum RestoreFailure {
    /// No copy of the original was found with its hash; why not, for each place looked at.
    #[error("{}", join(.0))]
    NoOriginal(Vec<NoCopy>),
    #[error("not a file path")]
    NotAFilePath,
    #[error("cannot recreate its dir: {0}")]
    RecreateDir(#[source] io::Error),
    #[error("cannot open its dir: {0}")]
    OpenDir(#[source] io::Error),
    #[error("its dir now leads out of the project root (to {})", .0.display())]
    DirLeadsOut(PathBuf),
    #[error("a directory is in its place now")]
    DirInPlace,
    /// What is in its place now could not be looked at.
    #[error("{0}")]
    Stat(#[source] io::Error),
    #[error("cannot write it: {0}")]
    Write(#[source] io::Error),
    #[error("cannot set its mtime or mode: {0}")]
    Metadata(#[source] io::Error),
    #[error("cannot read it back: {0}")]
    ReadBack(#[source] io::Error),
    #[error("verification failed: {found} on disk after writing, expected {expected}")]
    Verification { found: String, expected: String },
}

/// Why one place did not give the original bytes (see [`RestoreFailure::NoOriginal`]).
#[derive(Debug, thiserror::Error)]
pub enum NoCopy {
    /// The journal or backup copy (`what`) holds other bytes.
    #[error("{what} {} has other bytes", path.display())]
    OtherBytes { what: &'static str, path: PathBuf },
    #[error("{what} {}: {source}", path.display())]
    Unreadable {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("git blob {0} has other bytes")]
    BlobOtherBytes(String),
    /// git could not find or read the blob (its message).
    #[error("git blob {oid}: {message}")]
    Blob { oid: String, message: String },
    #[error("git blob {0}: repository not available")]
    NoRepository(String),
    #[error("no git blob (not a git repository)")]
    NoBlob,
}

fn join(why: &[NoCopy]) -> String {
    let each: Vec<String> = why.iter().map(ToString::to_string).collect();
    each.join("; ")
}

/// The files a restore left, each with why.
fn unrestored(failures: &[(PathBuf, RestoreFailure)]) -> String {
    let what: Vec<String> = failures
        .iter()
        .map(|(p, why)| format!("{} ({why})", p.display()))
        .collect();
    what.join("; ")
}

fn ago(since: u64) -> String {
    let now = disk::unix_secs(SystemTime::now());
    let s = now.saturating_sub(since);
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        _ => format!("{} h ago", s / 3600),
    }
}

fn elsewhere_list(files: &[(PathBuf, Option<PathBuf>)]) -> String {
    let names: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    format!(
        "{} {}",
        list(&names),
        if files.len() == 1 { "was" } else { "were" }
    )
}

fn elsewhere_backups(files: &[(PathBuf, Option<PathBuf>)]) -> String {
    let copies: Vec<String> = files
        .iter()
        .filter_map(|(_, b)| b.as_ref().map(|b| b.display().to_string()))
        .collect();
    match copies.len() {
        0 => String::new(),
        1 => format!(" (the original is kept at {})", copies[0]),
        _ => format!(" (the originals are kept at {})", copies.join(", ")),
    }
}

fn list(files: &[PathBuf]) -> String {
    let mut names: Vec<String> = files
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if files.len() > 3 {
        names.push(format!("and {} more", files.len() - 3));
    }
    if names.is_empty() {
        "no file".into()
    } else {
        names.join(", ")
    }
}

fn io_err(path: &Path, action: &'static str) -> impl FnOnce(io::Error) -> JournalError {
    let path = path.to_path_buf();
    move |source| JournalError::Io {
        path,
        action,
        source,
    }
}

/// The journal of one run on one project root. See the module docs.
pub struct Journal {
    root: PathBuf,
    /// The root as the caller gave it (made absolute): a path under it whose canonical form is
    /// not under `root` went through a symlink.
    given_root: PathBuf,
    dir: PathBuf,
    doc: Doc,
    /// Canonical absolute path → index in `doc.files` and `originals`.
    index: HashMap<PathBuf, usize>,
    originals: Vec<Vec<u8>>,
    /// Per recorded file, the hash of the bytes this run last wrote to it (`None`: not written
    /// yet, the original is expected): bytes that differ from it were written by someone else.
    written: Vec<Option<String>>,
    repo: Option<Repository>,
    warnings: Vec<String>,
    /// Committed or rolled back: nothing left for `Drop` to do.
    done: bool,
}

impl Journal {
    /// Takes the per-root lock and starts a journal. Errors: another live run holds the lock
    /// ([`JournalError::Locked`]), or a journal of a run that was killed is pending
    /// ([`JournalError::Pending`]): the caller tells the user to run `selfdebug restore`.
    /// `backup_dir`: default `{temp dir}/selfdebug-{uid}` (per user, see
    /// [`user_temp_dir`]); its `agent-self-debugger-loop/` is checked here, before
    /// anything is locked or written, so a bad one stops the run at once with a clear message.
    pub fn begin(root: &Path, backup_dir: Option<&Path>) -> Result<Journal, JournalError> {
        let given_root = absolute(root);
        let root = canonical_root(root)?;
        let backup_dir = match backup_dir {
            Some(d) => absolute(d),
            None => disk::user_temp_dir().map_err(JournalError::BackupDir)?,
        };
        disk::backup_folder(&backup_dir).map_err(JournalError::BackupDir)?;
        let dir = disk::journal_dir(&root);
        disk::make_private_dir(&dir).map_err(io_err(&dir, "create the journal dir"))?;
        let guard = acquire_unlocked(&root, &dir)?;
        let mut warnings = Vec::new();
        if let Some(doc) = read_doc(&dir)? {
            if doc.state == State::Active && !doc.files.is_empty() {
                return Err(JournalError::Pending {
                    root,
                    files: doc.files.iter().map(|e| e.path.clone()).collect(),
                    started: doc.started,
                });
            }
            // A journal with nothing to restore: the leftovers of a run killed while finishing.
            discard(&dir, doc, &mut warnings);
        }
        let now = SystemTime::now();
        let run_id = new_run_id(now);
        lock::take(&dir, &run_id, now, false).map_err(io_err(&dir, "take the lock in"))?;
        drop(guard);

        let repo = match Repository::discover(&root) {
            Ok(r) => Some(r),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => {
                warnings.push(format!(
                    "the git repository of {} cannot be used ({}); originals are kept in the \
                     journal and the backup copies only",
                    root.display(),
                    e.message()
                ));
                None
            }
        };
        let doc = Doc {
            format: FORMAT.into(),
            version: JOURNAL_VERSION,
            state: State::Active,
            run_id,
            root: root.clone(),
            pid: std::process::id(),
            started: disk::unix_secs(now),
            hash_algorithm: HASH_ALGORITHM.into(),
            backup_dir,
            git_dir: repo.as_ref().map(|r| r.path().to_path_buf()),
            tracks_writes: true,
            files: Vec::new(),
        };
        // From here on, dropping the journal releases the lock.
        let journal = Journal {
            root,
            given_root,
            dir,
            doc,
            index: HashMap::new(),
            originals: Vec::new(),
            written: Vec::new(),
            repo,
            warnings,
            done: false,
        };
        write_doc(&journal.dir, &journal.doc)?;
        Ok(journal)
    }

    /// Records the original of `path` (absolute, or relative to the root; a regular file under
    /// the root, not through a symlink leading out of it, not in a virtualenv, site-packages or
    /// `.git`) before the first write; idempotent per file.
    pub fn record(&mut self, path: &Path) -> Result<(), JournalError> {
        let _t = crate::trace_times::span("journal: record");
        self.record_key(path).map(|_| ())
    }

    /// Records `path` if needed, then writes `bytes` to it atomically (a temp file in the same
    /// dir, renamed over it), keeping the file's permissions.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
        let _t = crate::trace_times::span("journal: write");
        let abs = match self.record_key(path) {
            Ok(abs) => abs,
            // A recorded file deleted since is written again where it was.
            Err(e) => match self.lookup(path) {
                Some(i) if !self.root.join(&self.doc.files[i].path).exists() => {
                    let abs = self.root.join(&self.doc.files[i].path);
                    self.check_parent(&abs)?;
                    abs
                }
                _ => return Err(e),
            },
        };
        let i = self.index[&abs];
        if self.changed_elsewhere_at(i) {
            return Err(self.changed_elsewhere_error(vec![i]));
        }
        let hash = disk::hash(bytes);
        if !self.doc.files[i].written.contains(&hash) {
            // On disk before the file is written: a `restore` after a kill tells this run's
            // bytes from a later editor's.
            self.doc.files[i].written.push(hash.clone());
            write_doc(&self.dir, &self.doc)?;
        }
        let mode = fs::metadata(&abs).map_or(self.doc.files[i].mode, |m| disk::mode_of(&m));
        let tmp = disk::tmp_name(&abs, &self.doc.run_id);
        disk::replace_atomic(&abs, bytes, mode, &tmp).map_err(io_err(&abs, "write"))?;
        self.written[i] = Some(hash);
        Ok(())
    }

    /// Whether recorded file `i` holds bytes this run did not put there: neither its original
    /// (before this run's first write) nor what this run last wrote. A file that is gone is
    /// not judged (a test may remove what it made).
    fn changed_elsewhere_at(&self, i: usize) -> bool {
        let path = self.root.join(&self.doc.files[i].path);
        let Ok(now) = fs::read(&path) else {
            return false;
        };
        let expected = self.written[i]
            .as_deref()
            .unwrap_or(&self.doc.files[i].hash);
        disk::hash(&now) != expected
    }

    /// The recorded files someone else wrote to while this run worked (see
    /// [`JournalError::ChangedElsewhere`]), relative to the root.
    pub fn changed_elsewhere(&self) -> Vec<PathBuf> {
        (0..self.doc.files.len())
            .filter(|&i| self.changed_elsewhere_at(i))
            .map(|i| self.doc.files[i].path.clone())
            .collect()
    }

    fn changed_elsewhere_error(&self, of: Vec<usize>) -> JournalError {
        JournalError::ChangedElsewhere {
            root: self.root.clone(),
            files: of
                .iter()
                .map(|&i| {
                    let e = &self.doc.files[i];
                    (e.path.clone(), e.backup.clone())
                })
                .collect(),
        }
    }

    /// [`Journal::rollback`] for a run that found files changed by someone else: every file
    /// only this run changed is restored; the others are left as they are now (restoring them
    /// would destroy the other writer's bytes), their backup copies kept. Returns the error
    /// that names them, or the restore's own error.
    pub fn rollback_own(mut self) -> JournalError {
        let _t = crate::trace_times::span("journal: rollback");
        self.done = true;
        let left: Vec<usize> = (0..self.doc.files.len())
            .filter(|&i| self.changed_elsewhere_at(i))
            .collect();
        let error = self.changed_elsewhere_error(left.clone());
        let mut keep = Vec::new();
        for &i in left.iter().rev() {
            keep.push(self.doc.files.remove(i));
            self.originals.remove(i);
            self.written.remove(i);
        }
        // Their refs go (the backup copies stay, named in the error).
        delete_refs(self.repo.as_ref(), &keep, &mut self.warnings);
        match self.rollback_inner() {
            Ok(_) => error,
            Err(e) => e,
        }
    }

    /// The recorded original bytes of `path`.
    pub fn original(&self, path: &Path) -> Option<&[u8]> {
        self.lookup(path).map(|i| self.originals[i].as_slice())
    }

    /// Every recorded file (absolute, canonical), in the order they were recorded.
    pub fn files(&self) -> Vec<PathBuf> {
        self.doc
            .files
            .iter()
            .map(|e| self.root.join(&e.path))
            .collect()
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This run's id (also the git ref namespace `refs/selfdebug/<run-id>/`).
    pub fn run_id(&self) -> &str {
        &self.doc.run_id
    }

    /// The journal file of this run.
    pub fn journal_path(&self) -> PathBuf {
        self.dir.join(JOURNAL_FILE)
    }

    /// Things that did not stop the journal but the user may want to know (no usable git).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Restores every recorded file (bytes, mtime, permissions), verifies each by hash, removes
    /// the git refs and the journal, releases the lock. When a file cannot be restored, the
    /// others still are, the journal is kept for `selfdebug restore`, and the error names it.
    pub fn rollback(mut self) -> Result<RestoreReport, JournalError> {
        let _t = crate::trace_times::span("journal: rollback");
        self.done = true;
        self.rollback_inner()
    }

    /// Keeps the current contents: a recorded file whose bytes equal its original also gets its
    /// original mtime (and permissions) back, so an unchanged file is untouched in every
    /// respect; removes the journal and the git refs, releases the lock. The backup copies of
    /// files that keep a change stay in the backup dir; the others are removed.
    pub fn commit(mut self) -> Result<CommitReport, JournalError> {
        let _t = crate::trace_times::span("journal: commit");
        self.done = true;
        let mut warnings = std::mem::take(&mut self.warnings);
        let mut files = Vec::new();
        for e in &self.doc.files {
            let path = self.root.join(&e.path);
            let hash = match fs::read(&path) {
                Ok(bytes) => Some(disk::hash(&bytes)),
                Err(err) if err.kind() == io::ErrorKind::NotFound => None,
                Err(err) => {
                    warnings.push(format!("could not read {}: {err}", path.display()));
                    None
                }
            };
            let changed = hash.as_deref() != Some(e.hash.as_str());
            if !changed {
                if let Err(err) = reset_metadata(&path, e) {
                    warnings.push(format!(
                        "could not restore the mtime of unchanged {}: {err}",
                        path.display()
                    ));
                }
            }
            files.push(CommittedFile {
                path: e.path.clone(),
                changed,
                original_hash: e.hash.clone(),
                hash,
                backup: None,
            });
        }
        finish(
            &self.dir,
            &mut self.doc,
            self.repo.as_ref(),
            State::Committed,
            &mut warnings,
        );
        // What `finish` left: the backups of changed files (and any it could not remove).
        for (f, e) in files.iter_mut().zip(&self.doc.files) {
            f.backup = e.backup.clone();
        }
        lock::release(&self.dir, &self.doc.run_id);
        Ok(CommitReport {
            root: self.root.clone(),
            run_id: self.doc.run_id.clone(),
            files,
            warnings,
        })
    }

    fn rollback_inner(&mut self) -> Result<RestoreReport, JournalError> {
        let mut warnings = std::mem::take(&mut self.warnings);
        let (files, failures) = restore_entries(
            &self.root,
            &self.doc,
            self.repo.as_ref(),
            Some(&self.originals),
            &mut warnings,
        );
        let result = if failures.is_empty() {
            finish(
                &self.dir,
                &mut self.doc,
                self.repo.as_ref(),
                State::RolledBack,
                &mut warnings,
            );
            Ok(RestoreReport {
                root: self.root.clone(),
                run_id: Some(self.doc.run_id.clone()),
                files,
                backups: remaining_backups(&self.doc),
                warnings,
            })
        } else {
            Err(JournalError::Unrecoverable {
                failures,
                journal: self.journal_path(),
            })
        };
        // Released either way: a kept journal is then pending, for `selfdebug restore`.
        lock::release(&self.dir, &self.doc.run_id);
        result
    }

    /// Checks and records `path`; returns its canonical absolute path (the index key).
    fn record_key(&mut self, path: &Path) -> Result<PathBuf, JournalError> {
        let abs = self.confine(path)?;
        if self.index.contains_key(&abs) {
            return Ok(abs);
        }
        let rel = abs.strip_prefix(&self.root).unwrap_or(&abs).to_path_buf();
        if rel.to_str().is_none() {
            return Err(JournalError::Refused {
                path: abs,
                reason: "its name is not UTF-8, which the journal cannot record".into(),
            });
        }
        // Bytes and metadata from one open file, so they describe the same file.
        let mut f = File::open(&abs).map_err(io_err(&abs, "read"))?;
        let meta = f.metadata().map_err(io_err(&abs, "read"))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.read_to_end(&mut bytes).map_err(io_err(&abs, "read"))?;
        drop(f);
        let hash = disk::hash(&bytes);
        let n = self.doc.files.len();

        let copies = self.dir.join(COPIES_DIR);
        disk::make_private_dir(&copies).map_err(io_err(&copies, "create the journal dir"))?;
        let copy = copies.join(format!("{n}.orig"));
        // A leftover of a record of this run that failed half-way.
        let _ = fs::remove_file(&copy);
        disk::write_new(&copy, &bytes, 0o600).map_err(io_err(&copy, "write the journal copy"))?;

        let basename = abs
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let backup = disk::backup_copy(&self.doc.backup_dir, &basename, &bytes, mtime).map_err(
            |source| JournalError::BackupCopy {
                dir: self.doc.backup_dir.join(BACKUP_SUBDIR),
                source,
            },
        )?;
        let (git_blob, git_ref) = self.store_in_git(n, &rel, &bytes, &hash);

        self.doc.files.push(Entry {
            n,
            path: rel,
            hash,
            size: bytes.len() as u64,
            mtime_ns: disk::mtime_ns(&meta),
            mode: disk::mode_of(&meta),
            journal_copy: copy,
            backup: Some(backup),
            git_blob,
            git_ref,
            written: Vec::new(),
        });
        // The journal names the file before the file is touched.
        if let Err(e) = write_doc(&self.dir, &self.doc) {
            if let Some(entry) = self.doc.files.pop() {
                delete_refs(self.repo.as_ref(), &[entry], &mut self.warnings);
            }
            return Err(e);
        }
        self.index.insert(abs.clone(), n);
        self.originals.push(bytes);
        self.written.push(None);
        Ok(abs)
    }

    /// The original as a blob in the repository, under `refs/selfdebug/<run-id>/<n>` so that
    /// `git gc` keeps it. Failing here is a warning: two other copies exist.
    fn store_in_git(
        &mut self,
        n: usize,
        rel: &Path,
        bytes: &[u8],
        hash: &str,
    ) -> (Option<String>, Option<String>) {
        let Some(repo) = &self.repo else {
            return (None, None);
        };
        let name = format!("{REF_PREFIX}/{}/{n}", self.doc.run_id);
        // A committed file's blob is usually in the object store already: writing it again
        // would only "freshen" (re-touch) the user's object file, so look it up first.
        let existing = git2::Oid::from_str(hash)
            .ok()
            .filter(|oid| repo.odb().is_ok_and(|odb| odb.exists(*oid)));
        let stored = existing
            .map_or_else(|| repo.blob(bytes), Ok)
            .and_then(|oid| {
                let msg = format!("selfdebug: original of {}", rel.display());
                repo.reference(&name, oid, true, &msg).map(|_| oid)
            });
        match stored {
            Ok(oid) if oid.to_string() == hash => (Some(oid.to_string()), Some(name)),
            Ok(oid) => {
                self.warnings.push(format!(
                    "git stored {} as {oid}, not {hash}; not relying on it",
                    rel.display()
                ));
                (None, None)
            }
            Err(e) => {
                self.warnings.push(format!(
                    "could not keep the original of {} in git ({}); the journal and backup \
                     copies remain",
                    rel.display(),
                    e.message()
                ));
                (None, None)
            }
        }
    }

    /// Confined: the canonical path of `path` if it is a regular file the tool may write.
    fn confine(&self, path: &Path) -> Result<PathBuf, JournalError> {
        let p = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let lexical = disk::normalize(&p);
        let under_root = lexical.starts_with(&self.root) || lexical.starts_with(&self.given_root);
        let refuse = |reason: String| JournalError::Refused {
            path: p.clone(),
            reason,
        };
        let canon = match fs::canonicalize(&p) {
            Ok(c) => c,
            Err(_) if !under_root => {
                return Err(refuse(format!(
                    "it is outside the project root {}",
                    self.root.display()
                )))
            }
            Err(e) => return Err(io_err(&p, "read")(e)),
        };
        if !canon.starts_with(&self.root) {
            return Err(refuse(if under_root {
                format!(
                    "it is reached through a symlink leading out of the project root {} (to {})",
                    self.root.display(),
                    canon.display()
                )
            } else {
                format!("it is outside the project root {}", self.root.display())
            }));
        }
        let rel = canon.strip_prefix(&self.root).unwrap_or(&canon);
        for c in rel.components() {
            let c = c.as_os_str();
            if c == "site-packages" || c == "dist-packages" {
                return Err(refuse(
                    "it is installed code in site-packages, not the project's".into(),
                ));
            }
            if c == ".git" {
                return Err(refuse("it is inside the .git dir".into()));
            }
        }
        for dir in canon.ancestors().skip(1) {
            if !dir.starts_with(&self.root) {
                break;
            }
            if dir.join("pyvenv.cfg").is_file() {
                return Err(refuse(format!(
                    "it is inside the virtualenv {}",
                    dir.display()
                )));
            }
        }
        let meta = fs::metadata(&canon).map_err(io_err(&canon, "read"))?;
        if !meta.is_file() {
            return Err(refuse("it is not a regular file".into()));
        }
        Ok(canon)
    }

    /// The dir of a file about to be recreated must still be inside the root.
    fn check_parent(&self, abs: &Path) -> Result<(), JournalError> {
        let parent = abs.parent().unwrap_or(&self.root);
        match fs::canonicalize(parent) {
            Ok(c) if c.starts_with(&self.root) => Ok(()),
            Ok(c) => Err(JournalError::Refused {
                path: abs.to_path_buf(),
                reason: format!(
                    "its dir now leads out of the project root (to {})",
                    c.display()
                ),
            }),
            Err(e) => Err(io_err(parent, "open the dir of")(e)),
        }
    }

    /// The index of a recorded file, found by its canonical path, or (for a file deleted since)
    /// by its canonical dir and name, or lexically.
    fn lookup(&self, path: &Path) -> Option<usize> {
        let p = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let mut keys = Vec::new();
        if let Ok(c) = fs::canonicalize(&p) {
            keys.push(c);
        }
        if let (Some(parent), Some(name)) = (p.parent(), p.file_name()) {
            if let Ok(c) = fs::canonicalize(parent) {
                keys.push(c.join(name));
            }
        }
        keys.push(disk::normalize(&p));
        keys.iter().find_map(|k| self.index.get(k).copied())
    }
}

impl Drop for Journal {
    /// A journal neither committed nor rolled back (a panic, an early return) rolls back: a
    /// half-patched tree is never left behind by a run that is still alive to prevent it.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        if let Err(e) = self.rollback_inner() {
            crate::stdio::errln(&format!("selfdebug: error: {e}"));
        }
    }
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("root", &self.root)
            .field("run_id", &self.doc.run_id)
            .field("files", &self.doc.files.len())
            .finish()
    }
}

/// A journal left by a killed run for this root, if any (no lock taken). A live run holding
/// the lock is reported as [`JournalError::Locked`]: its journal is not left over.
pub fn pending(root: &Path) -> Result<Option<PendingJournal>, JournalError> {
    let root = canonical_root(root)?;
    let dir = disk::journal_dir(&root);
    check_lock(&root, &dir)?;
    Ok(match read_doc(&dir)? {
        Some(doc) if doc.state == State::Active && !doc.files.is_empty() => Some(PendingJournal {
            root,
            run_id: doc.run_id,
            pid: doc.pid,
            started: doc.started,
            files: doc.files.into_iter().map(|e| e.path).collect(),
            journal: dir.join(JOURNAL_FILE),
        }),
        _ => None,
    })
}

/// `selfdebug restore`: restores the files of a pending journal, verifies each by hash, and
/// removes the journal and its git refs. Nothing pending: a report with no files.
pub fn restore(root: &Path) -> Result<RestoreReport, JournalError> {
    let root = canonical_root(root)?;
    let dir = disk::journal_dir(&root);
    let mut report = RestoreReport {
        root: root.clone(),
        run_id: None,
        files: Vec::new(),
        backups: Vec::new(),
        warnings: Vec::new(),
    };
    if !dir.is_dir() {
        return Ok(report);
    }
    let guard = acquire_unlocked(&root, &dir)?;
    let doc = match read_doc(&dir)? {
        Some(doc) if doc.state == State::Active && !doc.files.is_empty() => doc,
        other => {
            if let Some(doc) = other {
                discard(&dir, doc, &mut report.warnings);
            }
            // A stale lock with nothing to restore is just removed.
            let _ = fs::remove_file(dir.join(lock::LOCK_FILE));
            return Ok(report);
        }
    };
    if doc.root != root {
        return Err(JournalError::Corrupt {
            path: dir.join(JOURNAL_FILE),
            reason: format!("it is for {}, not {}", doc.root.display(), root.display()),
        });
    }
    let now = SystemTime::now();
    let run_id = new_run_id(now);
    lock::take(&dir, &run_id, now, false).map_err(io_err(&dir, "take the lock in"))?;
    drop(guard);

    let repo = open_repo(&doc, &mut report.warnings);
    let mut doc = doc;
    let (files, failures) = restore_entries(&root, &doc, repo.as_ref(), None, &mut report.warnings);
    let result = if failures.is_empty() {
        finish(
            &dir,
            &mut doc,
            repo.as_ref(),
            State::RolledBack,
            &mut report.warnings,
        );
        report.run_id = Some(doc.run_id.clone());
        report.files = files;
        report.backups = remaining_backups(&doc);
        Ok(report)
    } else {
        Err(JournalError::Unrecoverable {
            failures,
            journal: dir.join(JOURNAL_FILE),
        })
    };
    lock::release(&dir, &run_id);
    result
}

/// Where the journal and lock of `root` live (they may not exist).
pub fn journal_dir(root: &Path) -> Result<PathBuf, JournalError> {
    Ok(disk::journal_dir(&canonical_root(root)?))
}

fn canonical_root(root: &Path) -> Result<PathBuf, JournalError> {
    let c = fs::canonicalize(root).map_err(io_err(root, "open the project root"))?;
    if !c.is_dir() {
        return Err(JournalError::Io {
            path: root.to_path_buf(),
            action: "use as the project root",
            source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    Ok(c)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        disk::normalize(p)
    } else {
        let cwd = std::env::current_dir().unwrap_or_default();
        disk::normalize(&cwd.join(p))
    }
}

/// Unique per run: time, then pid. Only digits and `-`, so it is a valid ref name component.
fn new_run_id(now: SystemTime) -> String {
    let d = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{:06}-{}",
        d.as_secs(),
        d.subsec_micros(),
        std::process::id()
    )
}

/// How long a start waits for a dry run that holds the lock while it copies the project.
const DRY_RUN_COPY_WAIT: Duration = Duration::from_secs(60);

/// The guard, with no live lock in `dir`: a dry run copying the project is waited for (briefly:
/// it only copies), a live real run is [`JournalError::Locked`].
fn acquire_unlocked(root: &Path, dir: &Path) -> Result<lock::Guard, JournalError> {
    let deadline = Instant::now() + DRY_RUN_COPY_WAIT;
    loop {
        let guard = lock::Guard::acquire(dir).map_err(io_err(dir, "lock the journal dir"))?;
        match lock::read(dir) {
            Some(l) if lock::is_live(&l) && l.dry_run && Instant::now() < deadline => {
                drop(guard);
                std::thread::sleep(Duration::from_millis(50));
            }
            Some(l) if lock::is_live(&l) => {
                return Err(JournalError::Locked {
                    root: root.to_path_buf(),
                    pid: l.pid,
                    since: l.since,
                })
            }
            _ => return Ok(guard),
        }
    }
}

/// Runs `copy` (a dry run copying the project) holding the project's lock, so that no real run
/// can have a probe or an unproven candidate in a file while it is read. A real run holding
/// the lock is [`JournalError::Locked`] and a killed run's journal [`JournalError::Pending`]
/// (its files may be half-patched): the dry run refuses rather than copy them; another dry
/// run copying is waited for.
pub fn while_locked_for_copy<T>(root: &Path, copy: impl FnOnce() -> T) -> Result<T, JournalError> {
    let root = canonical_root(root)?;
    let dir = disk::journal_dir(&root);
    disk::make_private_dir(&dir).map_err(io_err(&dir, "create the journal dir"))?;
    let guard = acquire_unlocked(&root, &dir)?;
    if let Some(doc) = read_doc(&dir)? {
        if doc.state == State::Active && !doc.files.is_empty() {
            return Err(JournalError::Pending {
                root,
                files: doc.files.iter().map(|e| e.path.clone()).collect(),
                started: doc.started,
            });
        }
    }
    let now = SystemTime::now();
    let run_id = new_run_id(now);
    lock::take(&dir, &run_id, now, true).map_err(io_err(&dir, "take the lock in"))?;
    drop(guard);
    let out = copy();
    lock::release(&dir, &run_id);
    Ok(out)
}

fn check_lock(root: &Path, dir: &Path) -> Result<(), JournalError> {
    match lock::read(dir) {
        Some(l) if lock::is_live(&l) => Err(JournalError::Locked {
            root: root.to_path_buf(),
            pid: l.pid,
            since: l.since,
        }),
        _ => Ok(()),
    }
}

fn read_doc(dir: &Path) -> Result<Option<Doc>, JournalError> {
    let path = dir.join(JOURNAL_FILE);
    let text = match fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path, "read the journal")(e)),
    };
    // The version first, so a newer format is reported as such, not as a parse error.
    let head: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| JournalError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    if head.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
        return Err(JournalError::Corrupt {
            path,
            reason: "not a selfdebug journal".into(),
        });
    }
    let version = head.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
    if version != u64::from(JOURNAL_VERSION) {
        return Err(JournalError::Corrupt {
            path,
            reason: format!("version {version}; this selfdebug reads version {JOURNAL_VERSION}"),
        });
    }
    serde_json::from_value(head)
        .map(Some)
        .map_err(|e| JournalError::Corrupt {
            path,
            reason: e.to_string(),
        })
}

fn write_doc(dir: &Path, doc: &Doc) -> Result<(), JournalError> {
    let path = dir.join(JOURNAL_FILE);
    let mut text = serde_json::to_vec_pretty(doc).map_err(|e| JournalError::Io {
        path: path.clone(),
        action: "write the journal",
        source: io::Error::new(io::ErrorKind::InvalidData, e),
    })?;
    text.push(b'\n');
    disk::write_durable(&path, &text).map_err(io_err(&path, "write the journal"))
}

fn open_repo(doc: &Doc, warnings: &mut Vec<String>) -> Option<Repository> {
    let git_dir = doc.git_dir.as_ref()?;
    match Repository::open(git_dir) {
        Ok(r) => Some(r),
        Err(e) => {
            warnings.push(format!(
                "cannot open the git repository {} ({})",
                git_dir.display(),
                e.message()
            ));
            None
        }
    }
}

/// Removes a journal that has nothing left to restore, with its copies and refs.
fn discard(dir: &Path, mut doc: Doc, warnings: &mut Vec<String>) {
    let repo = open_repo(&doc, warnings);
    let state = doc.state;
    finish(dir, &mut doc, repo.as_ref(), state, warnings);
}

/// Ends a journal: marks it finished (so a kill from here on leaves no "pending" journal that
/// would undo a commit), deletes the git refs, removes the copies and the journal file, and
/// the backup copies of files that keep no change (see [`drop_needless_backups`]).
fn finish(
    dir: &Path,
    doc: &mut Doc,
    repo: Option<&Repository>,
    state: State,
    warnings: &mut Vec<String>,
) {
    doc.state = state;
    if !doc.files.is_empty() {
        if let Err(e) = write_doc(dir, doc) {
            warnings.push(e.to_string());
        }
    }
    drop_needless_backups(&doc.root, &mut doc.files, warnings);
    delete_refs(repo, &doc.files, warnings);
    if let Some(repo) = repo {
        // libgit2 leaves the emptied ref dirs; they are ours, and the .git dir should look as
        // it did before the run.
        let refs = repo.commondir().join(REF_PREFIX);
        let _ = fs::remove_dir(refs.join(&doc.run_id));
        let _ = fs::remove_dir(&refs);
    }
    let copies = dir.join(COPIES_DIR);
    if let Err(e) = fs::remove_dir_all(&copies) {
        if e.kind() != io::ErrorKind::NotFound {
            warnings.push(format!("could not remove {}: {e}", copies.display()));
        }
    }
    let journal = dir.join(JOURNAL_FILE);
    if let Err(e) = fs::remove_file(&journal) {
        if e.kind() != io::ErrorKind::NotFound {
            warnings.push(format!("could not remove {}: {e}", journal.display()));
        }
    }
    disk::sync_dir(dir);
}

/// A backup copy is kept only for a file that holds other bytes than its original: one that
/// keeps a change, or one a rollback left as another program changed it. After a rollback
/// every other file is its original again, and a file a run only probed (or undid) needs none.
/// Entries whose copy is gone get `backup: None`, so what is reported is exactly what remains
/// on disk.
fn drop_needless_backups(root: &Path, entries: &mut [Entry], warnings: &mut Vec<String>) {
    for e in entries {
        let Some(backup) = e.backup.clone() else {
            continue;
        };
        // After a rollback every file is its original again, except one left as another
        // program changed it, whose backup stays.
        let unchanged = fs::read(root.join(&e.path)).is_ok_and(|b| disk::hash(&b) == e.hash);
        if !unchanged {
            continue;
        }
        match fs::remove_file(&backup) {
            Ok(()) => e.backup = None,
            Err(err) if err.kind() == io::ErrorKind::NotFound => e.backup = None,
            Err(err) => warnings.push(format!(
                "could not remove the backup copy {}: {err}",
                backup.display()
            )),
        }
    }
}

fn remaining_backups(doc: &Doc) -> Vec<KeptBackup> {
    doc.files
        .iter()
        .filter_map(|e| {
            Some(KeptBackup {
                path: e.path.clone(),
                backup: e.backup.clone()?,
                original_hash: e.hash.clone(),
            })
        })
        .collect()
}

fn delete_refs(repo: Option<&Repository>, entries: &[Entry], warnings: &mut Vec<String>) {
    let Some(repo) = repo else { return };
    for name in entries.iter().filter_map(|e| e.git_ref.as_deref()) {
        match repo.find_reference(name) {
            Ok(mut r) => {
                if let Err(e) = r.delete() {
                    warnings.push(format!("could not delete git ref {name}: {}", e.message()));
                }
            }
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => warnings.push(format!("could not read git ref {name}: {}", e.message())),
        }
    }
}

/// Restores every entry; returns what was restored and what could not be (file, why).
fn restore_entries(
    root: &Path,
    doc: &Doc,
    repo: Option<&Repository>,
    memory: Option<&[Vec<u8>]>,
    warnings: &mut Vec<String>,
) -> (Vec<RestoredFile>, Vec<(PathBuf, RestoreFailure)>) {
    let mut restored = Vec::new();
    let mut failures = Vec::new();
    for (i, e) in doc.files.iter().enumerate() {
        let path = root.join(&e.path);
        let held = memory.and_then(|m| m.get(i)).map(Vec::as_slice);
        let (bytes, source) = match load_original(e, repo, held) {
            Ok(found) => found,
            Err(why) => {
                failures.push((path, why));
                continue;
            }
        };
        match restore_one(
            root,
            &path,
            doc.tracks_writes,
            doc.pid,
            e,
            &bytes,
            &doc.run_id,
            warnings,
        ) {
            Ok(action) => restored.push(RestoredFile {
                path: e.path.clone(),
                hash: match action {
                    Action::Left => fs::read(&path).map(|b| disk::hash(&b)).unwrap_or_default(),
                    _ => e.hash.clone(),
                },
                size: e.size,
                source,
                action,
            }),
            Err(why) => failures.push((path, why)),
        }
    }
    (restored, failures)
}

/// The original bytes of an entry, verified by hash: the journal copy, else the backup copy,
/// else the git blob, else what the process still holds.
fn load_original(
    e: &Entry,
    repo: Option<&Repository>,
    held: Option<&[u8]>,
) -> Result<(Vec<u8>, Origin), RestoreFailure> {
    let mut why = Vec::new();
    let mut from_file = |path: &Path, what: &'static str, source: Origin| match fs::read(path) {
        Ok(b) if disk::hash(&b) == e.hash => Some((b, source)),
        Ok(_) => {
            why.push(NoCopy::OtherBytes {
                what,
                path: path.to_path_buf(),
            });
            None
        }
        Err(err) => {
            why.push(NoCopy::Unreadable {
                what,
                path: path.to_path_buf(),
                source: err,
            });
            None
        }
    };
    if let Some(found) = from_file(&e.journal_copy, "journal copy", Origin::JournalCopy) {
        return Ok(found);
    }
    if let Some(backup) = &e.backup {
        if let Some(found) = from_file(backup, "backup copy", Origin::BackupCopy) {
            return Ok(found);
        }
    }
    match (repo, &e.git_blob) {
        (Some(repo), Some(oid)) => match Oid::from_str(oid).and_then(|o| repo.find_blob(o)) {
            Ok(blob) if disk::hash(blob.content()) == e.hash => {
                return Ok((blob.content().to_vec(), Origin::GitBlob))
            }
            Ok(_) => why.push(NoCopy::BlobOtherBytes(oid.clone())),
            Err(err) => why.push(NoCopy::Blob {
                oid: oid.clone(),
                message: err.message().to_string(),
            }),
        },
        (None, Some(oid)) => why.push(NoCopy::NoRepository(oid.clone())),
        _ => why.push(NoCopy::NoBlob),
    }
    if let Some(b) = held.filter(|b| disk::hash(b) == e.hash) {
        return Ok((b.to_vec(), Origin::Memory));
    }
    Err(RestoreFailure::NoOriginal(why))
}

/// Writes one original back (unless the file already has those bytes), sets mtime and mode,
/// and verifies the result by hash.
/// Whether `bytes` carry the probe line of the run with this pid (`_selfdebug_probe_<pid>_`,
/// see `probe::unique_key`): the probe writes its file itself, not through [`Journal::write`],
/// so its bytes are the run's own though no `written` hash names them.
fn holds_probe_of(bytes: &[u8], pid: u32) -> bool {
    let mark = format!("_selfdebug_probe_{pid}_");
    bytes.windows(mark.len()).any(|w| w == mark.as_bytes())
}

#[allow(clippy::too_many_arguments)]
fn restore_one(
    root: &Path,
    path: &Path,
    tracks_writes: bool,
    pid: u32,
    e: &Entry,
    bytes: &[u8],
    run_id: &str,
    warnings: &mut Vec<String>,
) -> Result<Action, RestoreFailure> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(RestoreFailure::NotAFilePath);
    };
    if !parent.exists() {
        fs::create_dir_all(parent).map_err(RestoreFailure::RecreateDir)?;
    }
    // Never write through a dir that now leads out of the root.
    let parent = fs::canonicalize(parent).map_err(RestoreFailure::OpenDir)?;
    if !parent.starts_with(root) {
        return Err(RestoreFailure::DirLeadsOut(parent));
    }
    let target = parent.join(name);
    // A temp file of the killed run's last write, if it died between create and rename.
    let _ = fs::remove_file(parent.join(disk::tmp_name(&target, run_id)));

    let action = match fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => return Err(RestoreFailure::DirInPlace),
        Ok(m) if m.is_file() => match fs::read(&target) {
            Ok(now) if disk::hash(&now) == e.hash => Action::Unchanged,
            Ok(now)
                if tracks_writes
                    && !e.written.contains(&disk::hash(&now))
                    && !holds_probe_of(&now, pid) =>
            {
                warnings.push(format!(
                    "{} was changed by another program after the run: left as it is{}",
                    e.path.display(),
                    e.backup
                        .as_ref()
                        .map(|b| format!(", its original kept at {}", b.display()))
                        .unwrap_or_default()
                ));
                return Ok(Action::Left);
            }
            _ => Action::Rewritten,
        },
        // A symlink or other node in its place is replaced, never followed.
        Ok(_) => Action::Rewritten,
        Err(err) if err.kind() == io::ErrorKind::NotFound => Action::Recreated,
        Err(err) => return Err(RestoreFailure::Stat(err)),
    };
    if action != Action::Unchanged {
        disk::replace_atomic(&target, bytes, e.mode, &disk::tmp_name(&target, run_id))
            .map_err(RestoreFailure::Write)?;
    }
    reset_metadata(&target, e).map_err(RestoreFailure::Metadata)?;
    let now = fs::read(&target).map_err(RestoreFailure::ReadBack)?;
    let hash = disk::hash(&now);
    if hash != e.hash {
        return Err(RestoreFailure::Verification {
            found: hash,
            expected: e.hash.clone(),
        });
    }
    if let Ok(m) = fs::metadata(&target) {
        if disk::mtime_ns(&m) != e.mtime_ns {
            // Some file systems keep coarser times; the bytes are what must be exact.
            warnings.push(format!(
                "{}: the file system did not keep the exact original mtime",
                e.path.display()
            ));
        }
    }
    Ok(action)
}

/// Gives a file its recorded permissions and mtime back.
fn reset_metadata(path: &Path, e: &Entry) -> io::Result<()> {
    let meta = fs::metadata(path)?;
    if disk::mode_of(&meta) != e.mode {
        fs::set_permissions(path, fs::Permissions::from_mode(e.mode))?;
    }
    disk::set_mtime(path, e.mtime_ns)
}
