//! Reconstruction: the fix commit's tree, and the bug (that tree with the commit's non-test
//! source changes reverted to the parent's), written out of the object database into a private
//! temp dir. The user's working tree, index, branches and `.git/worktrees` are never touched;
//! the dir goes when this is dropped (also after Ctrl-C, which ends the runs in it first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Repository, Tree};

use super::error::ReplayError;
use super::history::Candidate;
use crate::process::TempDir;

/// A candidate's two trees. `bug` is always written; `fix` on first use.
pub struct Trees {
    dir: TempDir,
    /// The project's directory inside the repository (`--root` below the top), `""` for the top.
    rel: PathBuf,
    fix_written: bool,
}

impl Trees {
    /// Writes the bug tree of `c`.
    pub fn new(repo: &Repository, c: &Candidate, rel: &Path) -> Result<Trees, ReplayError> {
        let dir = TempDir::new("selfdebug-replay").map_err(ReplayError::TempDir)?;
        let trees = Trees {
            dir,
            rel: rel.to_path_buf(),
            fix_written: false,
        };
        let bug = trees.dir.path().join("bug");
        let fix_tree = tree_of(repo, c.id)?;
        write_tree(repo, &fix_tree, &bug).map_err(ReplayError::BugTree)?;
        let parent = (!c.parent.is_zero())
            .then(|| tree_of(repo, c.parent))
            .transpose()?;
        for s in &c.sources {
            let target = bug.join(&s.path);
            let old = parent
                .as_ref()
                .and_then(|t| t.get_path(Path::new(&s.path)).ok());
            let _ = std::fs::remove_file(&target);
            if let Some(entry) = old {
                if let Some(parent_dir) = target.parent() {
                    std::fs::create_dir_all(parent_dir).map_err(ReplayError::CreateDir)?;
                }
                write_blob(repo, entry.id(), entry.filemode(), &target).map_err(|error| {
                    ReplayError::WriteFile {
                        path: s.path.clone(),
                        error,
                    }
                })?;
            }
        }
        Ok(trees)
    }

    /// The project's directory in the bug tree (where pytest and `fix` run).
    pub fn bug(&self) -> PathBuf {
        self.dir.path().join("bug").join(&self.rel)
    }

    /// A private dir beside the trees (for `fix`'s backup copies), created on first use.
    pub fn scratch(&self) -> Result<PathBuf, ReplayError> {
        let dir = self.dir.path().join("scratch");
        // 0700 whatever the umask: `fix` refuses a backup dir others can write.
        if !crate::process::private_dir(&dir) {
            return Err(ReplayError::Scratch(dir));
        }
        Ok(dir)
    }

    /// The project's directory in the fix tree, written on first use.
    pub fn fix(&mut self, repo: &Repository, c: &Candidate) -> Result<PathBuf, ReplayError> {
        let top = self.dir.path().join("fix");
        if !self.fix_written {
            write_tree(repo, &tree_of(repo, c.id)?, &top).map_err(ReplayError::FixTree)?;
            self.fix_written = true;
        }
        Ok(top.join(&self.rel))
    }
}

fn tree_of<'r>(repo: &'r Repository, id: git2::Oid) -> Result<Tree<'r>, ReplayError> {
    repo.find_commit(id)
        .and_then(|c| c.tree())
        .map_err(|error| ReplayError::Commit { id, error })
}

/// Writes `tree` under `dir` (created): files with their executable bit, symlinks as
/// symlinks; a submodule is an empty directory.
pub fn write_tree(repo: &Repository, tree: &Tree, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in tree.iter() {
        use std::os::unix::ffi::OsStrExt;
        let name = entry.name_bytes();
        if matches!(name, b"" | b"." | b".." | b".git") || name.contains(&b'/') {
            continue;
        }
        let path = dir.join(std::ffi::OsStr::from_bytes(name));
        match entry.kind() {
            Some(ObjectType::Tree) => {
                let sub = repo.find_tree(entry.id()).map_err(std::io::Error::other)?;
                write_tree(repo, &sub, &path)?;
            }
            Some(ObjectType::Blob) => write_blob(repo, entry.id(), entry.filemode(), &path)?,
            _ => std::fs::create_dir_all(&path)?,
        }
    }
    Ok(())
}

fn write_blob(repo: &Repository, id: git2::Oid, mode: i32, path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let blob = repo.find_blob(id).map_err(std::io::Error::other)?;
    if mode == 0o120000 {
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(blob.content());
        return std::os::unix::fs::symlink(target, path);
    }
    std::fs::write(path, blob.content())?;
    if mode == 0o100755 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Every file under `root` (symlinks not followed) with a hash of its bytes: what `fix` left
/// is this compared with the same taken before it ran.
pub fn snapshot(root: &Path) -> BTreeMap<String, git2::Oid> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).into_iter().flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let Ok(rel) = e.path().strip_prefix(root) else {
            continue;
        };
        let bytes = std::fs::read(e.path()).unwrap_or_default();
        let id = git2::Oid::hash_object(ObjectType::Blob, &bytes).unwrap_or(git2::Oid::ZERO_SHA1);
        out.insert(rel.to_string_lossy().into_owned(), id);
    }
    out
}
