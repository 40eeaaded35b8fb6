//! The history walk: which commits look like a bug fix with its test (a small change to
//! non-test Python files and a change to a test file in the same commit), and why the others
//! were passed over.

use std::path::Path;

use git2::{Commit, Delta, DiffOptions, Oid, Repository, Sort};
use serde::Serialize;

use super::error::ReplayError;

/// Which commits to look at and what counts as small.
#[derive(Debug, Clone)]
pub struct Walk {
    /// `A..B` (either side may be empty: `..B` is B's whole history, `A..` is `A..HEAD`).
    pub range: Option<String>,
    /// Only commits made on or after this day (commit time, UTC), `YYYY-MM-DD`.
    pub since: Option<String>,
    /// Stop once this many candidates are found (newest first).
    pub max: Option<usize>,
    pub max_lines: usize,
    pub max_files: usize,
}

/// Why a commit was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// More than one parent.
    Merge,
    /// No test file added or changed: a refactor, a feature without tests, docs.
    NoTestChange,
    /// Tests changed but no existing non-test Python file (tests only, or source files only
    /// added): no bug to rebuild.
    NoSourceChange,
    /// The source change is over `--max-lines` or `--max-files`.
    TooLarge,
}

/// Counts of the commits passed over, by reason.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Skipped {
    pub merge: usize,
    pub no_test_change: usize,
    pub no_source_change: usize,
    pub too_large: usize,
}

impl Skipped {
    fn count(&mut self, why: Skip) {
        match why {
            Skip::Merge => self.merge += 1,
            Skip::NoTestChange => self.no_test_change += 1,
            Skip::NoSourceChange => self.no_source_change += 1,
            Skip::TooLarge => self.too_large += 1,
        }
    }
}

/// A non-test Python file the fix changed.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct SourceChange {
    /// Relative to the repository's top.
    pub path: String,
    /// Changed lines: per hunk the larger of lines added and lines removed.
    pub lines: usize,
}

/// A commit that looks like a bug fix with its test.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: Oid,
    pub parent: Oid,
    pub subject: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    pub sources: Vec<SourceChange>,
    /// Test files (relative to the repository's top) the commit added or changed that are
    /// still there after it, sorted.
    pub tests: Vec<String>,
}

impl Candidate {
    pub fn short(&self) -> String {
        self.id.to_string()[..7].to_string()
    }
}

/// What the walk found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Commits looked at (in the range and since the date).
    pub scanned: usize,
    pub skipped: Skipped,
    /// Newest first.
    pub candidates: Vec<Candidate>,
}

/// A test file: under a `tests`/`test` directory, or named `test_*.py`, `*_test.py` or
/// `conftest.py`.
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or("");
    parts.iter().any(|d| *d == "tests" || *d == "test")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name == "conftest.py"
}

/// Walks the history (see [`Walk`]) from HEAD, or the range's end, newest first.
pub fn scan(repo: &Repository, walk: &Walk) -> Result<Scan, ReplayError> {
    let since = walk.since.as_deref().map(parse_day).transpose()?;
    let mut revwalk = repo.revwalk()?;
    revwalk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    push_range(repo, &mut revwalk, walk.range.as_deref())?;
    let mut out = Scan::default();
    for id in revwalk {
        if walk.max.is_some_and(|m| out.candidates.len() >= m) {
            break;
        }
        let commit = repo.find_commit(id?)?;
        if since.is_some_and(|s| commit.time().seconds() < s) {
            continue;
        }
        out.scanned += 1;
        match classify(repo, &commit, walk)? {
            Ok(c) => out.candidates.push(c),
            Err(why) => out.skipped.count(why),
        }
    }
    Ok(out)
}

/// Pushes the range's end (HEAD by default) and hides its start.
fn push_range(
    repo: &Repository,
    revwalk: &mut git2::Revwalk,
    range: Option<&str>,
) -> Result<(), ReplayError> {
    let resolve = |spec: &str| {
        repo.revparse_single(spec)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| ReplayError::NotACommit(spec.to_string()))
    };
    let (from, to) = match range {
        None => (None, None),
        Some(r) => match r.split_once("..") {
            Some((a, b)) if !b.starts_with('.') => (
                Some(a).filter(|a| !a.is_empty()),
                Some(b).filter(|b| !b.is_empty()),
            ),
            _ => return Err(ReplayError::BadRange(r.to_string())),
        },
    };
    let end = match to {
        Some(b) => resolve(b)?,
        None => repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .map(|c| c.id())
            .ok_or(ReplayError::Unborn)?,
    };
    revwalk.push(end)?;
    if let Some(a) = from {
        revwalk.hide(resolve(a)?)?;
    }
    Ok(())
}

/// `YYYY-MM-DD` as the epoch second of its midnight (UTC).
fn parse_day(s: &str) -> Result<i64, ReplayError> {
    let bad = || ReplayError::BadDay(s.to_string());
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400)
}

/// A candidate, or why the commit is not one.
fn classify(
    repo: &Repository,
    commit: &Commit,
    walk: &Walk,
) -> Result<Result<Candidate, Skip>, git2::Error> {
    if commit.parent_count() > 1 {
        return Ok(Err(Skip::Merge));
    }
    let parent = commit.parents().next();
    let parent_tree = parent.as_ref().map(|p| p.tree()).transpose()?;
    let tree = commit.tree()?;
    let mut opts = DiffOptions::new();
    opts.context_lines(0);
    let diff = repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))?;
    let mut tests = Vec::new();
    let mut sources = Vec::new();
    // A commit that only adds source files fixed nothing that existed (a root commit, a new
    // module with its tests).
    let mut changes_existing = false;
    for (i, delta) in diff.deltas().enumerate() {
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .and_then(Path::to_str)
            .unwrap_or("")
            .to_string();
        if !path.ends_with(".py") {
            continue;
        }
        if is_test_path(&path) {
            if delta.status() != Delta::Deleted {
                tests.push(path);
            }
            continue;
        }
        let lines = match git2::Patch::from_diff(&diff, i)? {
            Some(patch) => changed_lines(&patch)?,
            None => 0,
        };
        changes_existing |= delta.status() != Delta::Added;
        sources.push(SourceChange { path, lines });
    }
    if tests.is_empty() {
        return Ok(Err(Skip::NoTestChange));
    }
    if !changes_existing {
        return Ok(Err(Skip::NoSourceChange));
    }
    let lines: usize = sources.iter().map(|s| s.lines).sum();
    if sources.len() > walk.max_files || lines > walk.max_lines {
        return Ok(Err(Skip::TooLarge));
    }
    tests.sort();
    Ok(Ok(Candidate {
        id: commit.id(),
        parent: parent.map_or(Oid::ZERO_SHA1, |p| p.id()),
        subject: first_line(commit.message_bytes()),
        time: commit.time().seconds(),
        sources,
        tests,
    }))
}

/// A commit message's first line (git's summary joins the whole first paragraph).
fn first_line(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// Per hunk the larger of lines added and removed: a one-line edit counts 1, not 2.
fn changed_lines(patch: &git2::Patch) -> Result<usize, git2::Error> {
    let mut total = 0;
    for h in 0..patch.num_hunks() {
        let (mut added, mut removed) = (0, 0);
        for l in 0..patch.num_lines_in_hunk(h)? {
            match patch.line_in_hunk(h, l)?.origin() {
                '+' => added += 1,
                '-' => removed += 1,
                _ => {}
            }
        }
        total += usize::max(added, removed);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        for p in [
            "tests/test_a.py",
            "pkg/test/util.py",
            "test_x.py",
            "a/b_test.py",
            "conftest.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["pkg/a.py", "testing.py", "pkg/tests.py", "contest.py"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn days() {
        assert_eq!(parse_day("1970-01-01").ok(), Some(0));
        assert_eq!(parse_day("2024-03-01").ok(), Some(1_709_251_200));
        assert!(parse_day("2024-13-01").is_err());
        assert!(parse_day("yesterday").is_err());
    }
}
