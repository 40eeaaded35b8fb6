//! The project root, found once at the command line's edge and handed to the rest of the code
//! as one canonical type.
//!
//! Without `--root` the root is found the way pytest finds its `rootdir` from the current
//! directory: the nearest ancestor with a pytest configuration (`pytest.ini`, `.pytest.ini`,
//! `pyproject.toml` with `[tool.pytest.ini_options]` or `[tool.pytest]`, `tox.ini` with
//! `[pytest]`, `setup.cfg` with `[tool:pytest]`); else the git work tree's top; else the current
//! directory. Run from `tests/` or `src/pkg/`, the tool therefore runs pytest where the project
//! runs it.

use std::fmt;
use std::path::{Path, PathBuf};

/// How the root was chosen (printed, and in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootSource {
    /// `--root`.
    Flag,
    /// A pytest configuration file (its name is in `marker`).
    PytestConfig,
    /// The top of the git work tree.
    Git,
    /// The current directory (nothing above it marks a project).
    CurrentDir,
}

/// An absolute, canonical project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    path: PathBuf,
    source: RootSource,
    /// The file that marked the root (`pytest.ini`, `.git`...), if any.
    marker: Option<String>,
}

/// Why there is no project root (bad input). Displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("cannot read the current directory: {0}")]
    Cwd(#[source] std::io::Error),
    /// `--root` (as given) is not a directory.
    #[error("--root {}: not a directory", .0.display())]
    NotADir(PathBuf),
    /// `--root` (as given) could not be resolved.
    #[error("--root {}: {source}", given.display())]
    Unresolved {
        given: PathBuf,
        source: std::io::Error,
    },
}

impl ProjectRoot {
    /// `--root DIR` when given, else discovery from the current directory.
    pub fn find(explicit: Option<&Path>) -> Result<ProjectRoot, RootError> {
        let cwd = std::env::current_dir().map_err(RootError::Cwd)?;
        match explicit {
            Some(dir) => ProjectRoot::from_flag(&cwd.join(dir), dir),
            None => Ok(ProjectRoot::discover(&cwd)),
        }
    }

    fn from_flag(abs: &Path, given: &Path) -> Result<ProjectRoot, RootError> {
        if !abs.is_dir() {
            return Err(RootError::NotADir(given.to_path_buf()));
        }
        let path = abs.canonicalize().map_err(|source| RootError::Unresolved {
            given: given.to_path_buf(),
            source,
        })?;
        Ok(ProjectRoot {
            path,
            source: RootSource::Flag,
            marker: None,
        })
    }

    /// pytest's rootdir rules from `start`, then git, then `start` itself.
    pub fn discover(start: &Path) -> ProjectRoot {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            if let Some(marker) = pytest_config(dir) {
                return ProjectRoot {
                    path: dir.to_path_buf(),
                    source: RootSource::PytestConfig,
                    marker: Some(marker.to_string()),
                };
            }
        }
        for dir in start.ancestors() {
            // A `.git` file marks a worktree or submodule top as well.
            if dir.join(".git").exists() {
                return ProjectRoot {
                    path: dir.to_path_buf(),
                    source: RootSource::Git,
                    marker: Some(".git".into()),
                };
            }
        }
        ProjectRoot {
            path: start,
            source: RootSource::CurrentDir,
            marker: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn source(&self) -> &RootSource {
        &self.source
    }

    /// One line for the human log: `root /x/proj (pytest.ini)`.
    pub fn describe(&self) -> String {
        let why = match (&self.source, &self.marker) {
            (RootSource::Flag, _) => "--root".to_string(),
            (_, Some(m)) => m.clone(),
            (RootSource::CurrentDir, None) => "current directory".to_string(),
            (_, None) => String::new(),
        };
        format!("root {} ({why})", self.path.display())
    }

    /// pytest arguments given relative to the directory the user ran from, rebased onto the
    /// root (pytest runs there): `test_a.py::test_x` typed in `tests/` becomes
    /// `tests/test_a.py::test_x`. Options and arguments that name no existing path stay as
    /// they are.
    pub fn rebase_args(&self, args: &[String], cwd: &Path) -> Vec<String> {
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        if cwd == self.path {
            return args.to_vec();
        }
        let mut out = Vec::with_capacity(args.len());
        let mut takes_value = false;
        for a in args {
            if takes_value || a.starts_with('-') {
                // `-k EXPR`, `-m EXPR`, `-p NAME`... keep the option's value as it is.
                takes_value = matches!(
                    a.as_str(),
                    "-k" | "-m" | "-p" | "-o" | "-c" | "--rootdir" | "--deselect" | "--ignore"
                ) && !takes_value;
                out.push(a.clone());
                continue;
            }
            let (path_part, rest) = match a.find("::") {
                Some(i) => (&a[..i], &a[i..]),
                None => (a.as_str(), ""),
            };
            let candidate = cwd.join(path_part);
            match candidate
                .canonicalize()
                .ok()
                .and_then(|c| c.strip_prefix(&self.path).ok().map(Path::to_path_buf))
            {
                Some(rel) if !path_part.is_empty() => {
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    let rel = if rel.is_empty() { ".".to_string() } else { rel };
                    out.push(format!("{rel}{rest}"));
                }
                _ => out.push(a.clone()),
            }
        }
        out
    }
}

impl fmt::Display for ProjectRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())
    }
}

impl AsRef<Path> for ProjectRoot {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// The pytest configuration file in `dir` that makes it pytest's rootdir, in pytest's order.
fn pytest_config(dir: &Path) -> Option<&'static str> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    if dir.join("pytest.ini").is_file() {
        return Some("pytest.ini");
    }
    if dir.join(".pytest.ini").is_file() {
        return Some(".pytest.ini");
    }
    if let Some(text) = read("pyproject.toml") {
        if let Ok(doc) = text.parse::<toml::Table>() {
            let pytest = doc
                .get("tool")
                .and_then(|t| t.as_table())
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.as_table());
            if pytest.is_some() {
                return Some("pyproject.toml");
            }
        }
    }
    if read("tox.ini").is_some_and(|t| has_ini_section(&t, "pytest")) {
        return Some("tox.ini");
    }
    if read("setup.cfg").is_some_and(|t| has_ini_section(&t, "tool:pytest")) {
        return Some("setup.cfg");
    }
    None
}

fn has_ini_section(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim();
        l.strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .is_some_and(|s| s.trim() == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        d
    }

    #[test]
    fn pytest_config_wins_over_git_and_cwd() {
        let d = tree(&[
            (".git/HEAD", "ref: refs/heads/main\n"),
            (
                "proj/pyproject.toml",
                "[tool.pytest.ini_options]\npythonpath = ['src']\n",
            ),
            ("proj/src/pkg/mod.py", ""),
            ("other/pyproject.toml", "[project]\nname = 'x'\n"),
            ("other/tests/t.py", ""),
            ("ini/setup.cfg", "[metadata]\n[tool:pytest]\n"),
            ("ini/a/b.py", ""),
        ]);
        let base = d.path().canonicalize().unwrap();
        let r = ProjectRoot::discover(&base.join("proj/src/pkg"));
        assert_eq!(r.path(), base.join("proj"));
        assert_eq!(r.source(), &RootSource::PytestConfig);
        // A pyproject.toml without pytest settings does not make a rootdir: git's top does.
        let r = ProjectRoot::discover(&base.join("other/tests"));
        assert_eq!(r.path(), base);
        assert_eq!(r.source(), &RootSource::Git);
        assert_eq!(
            ProjectRoot::discover(&base.join("ini/a")).path(),
            base.join("ini")
        );
    }

    #[test]
    fn rebases_paths_typed_in_a_subdirectory() {
        let d = tree(&[("pytest.ini", "[pytest]\n"), ("tests/test_a.py", "")]);
        let root = ProjectRoot::discover(d.path());
        let args: Vec<String> = ["test_a.py::test_x", "-k", "test_a.py", "-q", "nope.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            root.rebase_args(&args, &d.path().join("tests")),
            [
                "tests/test_a.py::test_x",
                "-k",
                "test_a.py",
                "-q",
                "nope.py"
            ]
        );
    }
}
