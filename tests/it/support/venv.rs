//! Real virtualenvs for the tests: a wheelhouse fetched once per target dir, then offline.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `cmd` and panics with its output unless it succeeds.
pub fn check(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `CARGO_TARGET_TMPDIR/wheelhouse-TAG` with `packages` and their dependencies, downloaded by
/// `base`'s own pip the first time (the network), reused offline after.
pub fn wheelhouse(base: &Path, tag: &str, packages: &[&str]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("wheelhouse-{tag}"));
    if dir.join("complete").is_file() {
        return dir;
    }
    // Downloaded beside, then renamed: a test process killed mid-download leaves no half
    // wheelhouse behind, and two processes racing both end up with a whole one. Appended, not
    // an extension: a tag like `py3.8` has a dot of its own.
    let part = PathBuf::from(format!("{}.part{}", dir.display(), std::process::id()));
    let _ = std::fs::remove_dir_all(&part);
    check(
        Command::new(base)
            .args(["-m", "pip", "download", "--quiet", "--dest"])
            .arg(&part)
            .args(packages),
        "pip download (the first run needs the network; later ones reuse the wheels)",
    );
    std::fs::write(part.join("complete"), "").unwrap();
    if std::fs::rename(&part, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&part);
    }
    dir
}

/// `$PYENV_ROOT/versions/VERSION/bin/python` (default root `~/.pyenv`), or `None` after saying
/// on stderr that it is missing (the caller skips).
pub fn pyenv(version: &str) -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")))?;
    let python = root.join("versions").join(version).join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    eprintln!(
        "skipped: pyenv has no Python {version} ({} is missing)",
        python.display()
    );
    None
}

/// A venv of `base` (outside the project, as a user's tox or pyenv-virtualenv env would be)
/// with `packages`, installed from a wheelhouse that `base`'s own pip downloads once per target
/// dir (old pips cannot install for another interpreter; offline afterwards).
pub fn venv_with(base: &Path, tag: &str, packages: &[&str], into: &Path) -> PathBuf {
    let wh = wheelhouse(base, tag, packages);
    check(
        Command::new(base).args(["-m", "venv"]).arg(into),
        "python -m venv",
    );
    let python = into.join("bin/python");
    check(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-index",
                "--find-links",
            ])
            .arg(&wh)
            .args(packages),
        "pip install into the venv",
    );
    python
}
