//! Telling the project's virtualenv from the one selfdebug itself is installed in.
//!
//! Installed as a wheel (`pip install selfdebug`, pipx, or pre-commit's `language: python`
//! hook), the binary lives in a virtualenv's `bin/`. pre-commit runs such a hook with
//! `VIRTUAL_ENV` and `PATH` pointing at the hook's own environment, which holds selfdebug and
//! nothing else: no pytest and none of the project's packages. Taking `$VIRTUAL_ENV` there, as
//! an activated project venv is taken, would run the tests with an interpreter that cannot run
//! them. [`ToolEnv::detect`] recognises that environment; [`crate::runner::find_interpreter_in`]
//! then passes it over (and the `bin/` of it on `PATH`) for the project's `.venv`/`venv` or the
//! first `python3` on `PATH` outside it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long asking the tool env's interpreter whether it has pytest may take.
const PYTEST_CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// The virtualenv the running executable is installed in: `VENV/bin/selfdebug` with a
/// `VENV/pyvenv.cfg`. `exe` is what [`std::env::current_exe`] gives (symlinks resolved on
/// Linux, so pipx's `~/.local/bin/selfdebug` link leads to its venv).
pub fn venv_of_exe(exe: &Path) -> Option<PathBuf> {
    let venv = exe.parent()?.parent()?;
    venv.join("pyvenv.cfg").is_file().then(|| canonical(venv))
}

/// Where pre-commit keeps its repositories and hook environments: `$PRE_COMMIT_HOME`, else
/// `$XDG_CACHE_HOME/pre-commit`, else `~/.cache/pre-commit` (pre-commit's own rule).
pub fn pre_commit_home(
    pre_commit_home: Option<&OsStr>,
    xdg_cache_home: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Option<PathBuf> {
    let non_empty = |v: Option<&OsStr>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    non_empty(pre_commit_home)
        .or_else(|| non_empty(xdg_cache_home).map(|c| c.join("pre-commit")))
        .or_else(|| non_empty(home).map(|h| h.join(".cache").join("pre-commit")))
}

/// The active virtualenv when it is selfdebug's own rather than the project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEnv {
    /// `$VIRTUAL_ENV`, resolved.
    pub path: PathBuf,
    /// Why it is not the project's (for the report).
    pub reason: &'static str,
}

impl ToolEnv {
    /// `virtual_env` is selfdebug's own environment when the running executable is installed
    /// in it (`own_venv`) and either it lies under pre-commit's home (a hook env: even one
    /// given pytest by `additional_dependencies` lacks the project's packages), or its
    /// interpreter cannot find pytest (nothing could be tested with it). A project venv that
    /// selfdebug was installed into, next to pytest, stays the project's.
    pub fn detect(
        virtual_env: Option<&OsStr>,
        own_venv: Option<&Path>,
        pre_commit_home: Option<&Path>,
    ) -> Option<ToolEnv> {
        let active = canonical(Path::new(virtual_env?));
        if own_venv? != active {
            return None;
        }
        if pre_commit_home.is_some_and(|h| active.starts_with(canonical(h))) {
            return Some(ToolEnv {
                path: active,
                reason: "pre-commit's environment for the hook",
            });
        }
        if !has_pytest(&active.join("bin").join("python")) {
            return Some(ToolEnv {
                path: active,
                reason: "the environment selfdebug is installed in, without pytest",
            });
        }
        None
    }

    /// Whether `dir` (a `PATH` entry) lies inside this environment.
    pub fn holds(&self, dir: &Path) -> bool {
        canonical(dir).starts_with(&self.path)
    }
}

/// Whether `python` finds a `pytest` module (without importing it: a cheap check). One that
/// does not run has none.
fn has_pytest(python: &Path) -> bool {
    let mut cmd = Command::new(python);
    cmd.args([
        "-c",
        "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)",
    ])
    .env("PYTHONDONTWRITEBYTECODE", "1");
    crate::process::run_command(cmd, PYTEST_CHECK_TIMEOUT).is_ok_and(|r| r.exit_code == Some(0))
}

/// `p` with symlinks resolved, or as given when it does not exist: the active venv may be
/// named through a link while the executable's path is resolved.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
