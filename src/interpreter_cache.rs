//! Interpreter facts cached across runs: which program a `python` really is
//! (`sys.executable`) and that it imports pytest (its version).
//!
//! Asking costs one Python start, and `python3` on `PATH` is often a shell shim (pyenv, asdf)
//! that costs far more than Python itself: measured 1.3–3 s per fix on a loaded 2-core machine,
//! most of the tool's own time on the bug fixtures. The answer is kept in
//! `$XDG_CACHE_HOME/selfdebug/interpreters.json` and used only while nothing it depends on has
//! changed. Each entry records, as found when it was made:
//!
//! - the launcher as given (its own `lstat` and the `stat` of what it points to, and its
//!   canonical path), and the real executable;
//! - every directory on the interpreter's `sys.path` plus the user site directory (present or
//!   absent): installing, upgrading or removing pytest adds or removes entries there, which
//!   changes the directory's mtime;
//! - the environment variables that steer Python or a version manager (`PYTHONPATH`,
//!   `VIRTUAL_ENV`, `PYENV_*`, ...) and, for a script launcher (a shim), the version-selector
//!   files a shim reads that exist (`.python-version`, `.tool-versions`, `mise.toml` in the
//!   working directory and its parents, pyenv's global `version` file), with their stamps. A
//!   shim picks its version by the nearest of these, so two directories that see the same ones
//!   get the same interpreter: a new project (or a fresh temp copy) under the same selectors
//!   hits the cache instead of paying a shim start (~0.2 s idle, seconds under load).
//!
//! A stamp is `(mtime ns, size, inode)`. Any difference, an unreadable cache or a failed check
//! is a miss: the interpreter is asked again, so a stale entry can only cost a Python start,
//! never make a run use another interpreter than a fresh check would. A launcher that picks its
//! interpreter from something else than the above (a custom wrapper reading its own config) is
//! the limit: `SELFDEBUG_NO_INTERPRETER_CACHE=1` turns the cache off.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Entries kept; the oldest go first (one per interpreter and environment in practice).
const MAX_ENTRIES: usize = 32;

/// Bumped when the entry format or what it depends on changes: older files are ignored.
const FORMAT: u32 = 3;

/// The Python run once per miss: stamps first (so a change racing the import shows up as a
/// mismatch next time, never as a fresh-looking stamp), then `import pytest`.
pub const FACTS_CODE: &str = r#"import os, sys
def st(p):
    try:
        s = os.stat(p)
        return [s.st_mtime_ns, s.st_size, s.st_ino]
    except (OSError, ValueError):
        return None
ps = [p for p in sys.path if p]
try:
    import site
    u = site.getusersitepackages()
    if isinstance(u, str) and u not in ps:
        ps.append(u)
except Exception:
    pass
e = sys.executable or ''
d = [[p, st(p)] for p in ps]
x = st(e) if e else None
import pytest, json
v = "%d.%d.%d" % tuple(sys.version_info[:3])
sys.stdout.write(json.dumps({"executable": e, "executable_stamp": x, "python": v, "pytest": pytest.__version__, "paths": d}))
"#;

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `sys.executable` (empty when Python could not say).
    pub executable: PathBuf,
    /// `sys.version_info[:3]` as `3.11.7`.
    pub python_version: String,
    pub pytest_version: String,
}

/// `(mtime ns, size, inode)`; `None` for a path that does not exist.
type Stamp = Option<(i128, u64, u64)>;

/// One file an entry depends on, with its stamp when the entry was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dep {
    path: PathBuf,
    /// `lstat` when true (the link itself), else `stat`.
    link: bool,
    stamp: Stamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    launcher: PathBuf,
    /// For a script launcher only (a shim resolves by them): the selector files that exist,
    /// seen from the working directory.
    selectors: Option<Vec<Dep>>,
    env: Vec<(String, String)>,
    canonical: Option<PathBuf>,
    deps: Vec<Dep>,
    executable: PathBuf,
    python_version: String,
    pytest_version: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    format: u32,
    entries: Vec<Entry>,
}

/// The cache file at `path`, for launcher `launcher` run from `cwd` with the process's
/// environment (see the module docs).
pub struct Cache {
    path: PathBuf,
    launcher: PathBuf,
    selectors: Option<Vec<Dep>>,
    env: Vec<(String, String)>,
}

/// The default cache file, unless turned off.
pub fn default_path() -> Option<PathBuf> {
    if std::env::var_os("SELFDEBUG_NO_INTERPRETER_CACHE").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    crate::process::cache_home().map(|c| c.join("interpreters.json"))
}

/// Variables that change which interpreter a launcher runs or what it imports.
fn relevant_var(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "HOME",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONNOUSERSITE",
        "PYTHONUSERBASE",
        "PYTHONSAFEPATH",
        "PYTHONEXECUTABLE",
        "PYTHONPLATLIBDIR",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
    ];
    const PREFIXES: &[&str] = &["PYENV", "ASDF_", "MISE_", "RTX_", "UV_PYTHON"];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A file that starts with `#!`: a shell shim or wrapper, not the interpreter itself.
fn is_script(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"#!")
}

fn stamp(path: &Path, link: bool) -> Stamp {
    let m = if link {
        std::fs::symlink_metadata(path)
    } else {
        std::fs::metadata(path)
    }
    .ok()?;
    let ns = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
    Some((ns, m.size(), m.ino()))
}

/// The files a version-manager shim reads to pick a version, from `cwd` up, and the global
/// ones next to the shim's home and in `$HOME`.
fn selector_files(launcher: &Path, cwd: &Path) -> Vec<PathBuf> {
    const NAMES: &[&str] = &[
        ".python-version",
        ".tool-versions",
        "mise.toml",
        ".mise.toml",
    ];
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        out.extend(NAMES.iter().map(|n| dir.join(n)));
    }
    // pyenv: ROOT/shims/python3 reads ROOT/version.
    if let Some(root) = launcher.parent().and_then(Path::parent) {
        out.push(root.join("version"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        out.push(home.join(".tool-versions"));
        out.push(home.join(".config/mise/config.toml"));
    }
    out
}

impl Cache {
    pub fn new(path: PathBuf, launcher: &Path) -> Cache {
        Cache::from_dir(path, launcher, std::env::current_dir().ok().as_deref())
    }

    /// [`Cache::new`] as seen from the working directory `cwd` (`None`: unknown, which makes a
    /// shim's entry unmatchable by any other lookup that knows it).
    pub fn from_dir(path: PathBuf, launcher: &Path, cwd: Option<&Path>) -> Cache {
        let selectors = is_script(launcher).then(|| {
            cwd.map(|cwd| {
                selector_files(launcher, cwd)
                    .into_iter()
                    .filter_map(|p| {
                        let stamp = stamp(&p, false);
                        stamp.is_some().then_some(Dep {
                            path: p,
                            link: false,
                            stamp,
                        })
                    })
                    .collect()
            })
            .unwrap_or_else(|| {
                // No working directory: match nothing but another lookup without one.
                vec![Dep {
                    path: PathBuf::new(),
                    link: false,
                    stamp: None,
                }]
            })
        });
        let mut env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| relevant_var(k))
            .collect();
        env.sort();
        Cache {
            path,
            launcher: launcher.to_path_buf(),
            selectors,
            env,
        }
    }

    /// The launcher's own stamps: taken before the check runs (the selectors were taken when
    /// the cache was made, also before).
    fn launcher_deps(&self) -> Vec<Dep> {
        vec![
            Dep {
                path: self.launcher.clone(),
                link: true,
                stamp: stamp(&self.launcher, true),
            },
            Dep {
                path: self.launcher.clone(),
                link: false,
                stamp: stamp(&self.launcher, false),
            },
        ]
    }

    fn read(&self) -> File {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<File>(&b).ok())
            .filter(|f| f.format == FORMAT)
            .unwrap_or_default()
    }

    /// The cached facts when an entry matches and none of its stamps changed.
    pub fn lookup(&self) -> Option<Facts> {
        let canonical = self.launcher.canonicalize().ok();
        let file = self.read();
        let e = file.entries.iter().rev().find(|e| {
            e.launcher == self.launcher && e.selectors == self.selectors && e.env == self.env
        })?;
        let fresh = e.canonical == canonical
            && !e.executable.as_os_str().is_empty()
            && e.deps.iter().all(|d| stamp(&d.path, d.link) == d.stamp);
        fresh.then(|| Facts {
            executable: e.executable.clone(),
            python_version: e.python_version.clone(),
            pytest_version: e.pytest_version.clone(),
        })
    }

    /// Records an entry for the output of [`FACTS_CODE`] (`stdout`) and the launcher stamps
    /// taken before the check ran (`before`, from [`Cache::before_check`]); returns the facts.
    /// `None` when the output is not what the code prints (then nothing is stored).
    pub fn store(&self, before: Vec<Dep>, stdout: &[u8]) -> Option<Facts> {
        let (facts, found) = parse_output(stdout)?;
        if !facts.executable.is_absolute() {
            // Nothing to cache: Python could not say which program it is.
            return Some(facts);
        }
        let mut deps = before;
        deps.extend(found);
        let entry = Entry {
            launcher: self.launcher.clone(),
            selectors: self.selectors.clone(),
            env: self.env.clone(),
            canonical: self.launcher.canonicalize().ok(),
            deps,
            executable: facts.executable.clone(),
            python_version: facts.python_version.clone(),
            pytest_version: facts.pytest_version.clone(),
        };
        let mut file = self.read();
        file.format = FORMAT;
        file.entries.retain(|e| {
            !(e.launcher == entry.launcher && e.selectors == entry.selectors && e.env == entry.env)
        });
        file.entries.push(entry);
        let drop = file.entries.len().saturating_sub(MAX_ENTRIES);
        file.entries.drain(..drop);
        // Best effort: a cache that cannot be written only costs the next run a check.
        let _ = self.write(&file);
        Some(facts)
    }

    /// The launcher's own stamps: to be taken before the check runs.
    pub fn before_check(&self) -> Vec<Dep> {
        self.launcher_deps()
    }

    fn write(&self, file: &File) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(file).map_err(std::io::Error::other)?;
        crate::process::write_private(&self.path, &bytes)
    }
}

/// The facts [`FACTS_CODE`] printed, and the stamps it took (the executable, `sys.path`).
pub fn parse(stdout: &[u8]) -> Option<Facts> {
    parse_output(stdout).map(|(f, _)| f)
}

fn parse_output(stdout: &[u8]) -> Option<(Facts, Vec<Dep>)> {
    #[derive(Deserialize)]
    struct Out {
        executable: String,
        executable_stamp: Stamp,
        python: String,
        pytest: String,
        paths: Vec<(String, Stamp)>,
    }
    let out: Out = serde_json::from_slice(stdout).ok()?;
    let executable = PathBuf::from(&out.executable);
    let mut deps = vec![Dep {
        path: executable.clone(),
        link: false,
        stamp: out.executable_stamp,
    }];
    deps.extend(out.paths.into_iter().map(|(p, s)| Dep {
        path: PathBuf::from(p),
        link: false,
        stamp: s,
    }));
    let facts = Facts {
        executable,
        python_version: out.python,
        pytest_version: out.pytest,
    };
    Some((facts, deps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_steering_variables_key_the_cache() {
        for v in [
            "PATH",
            "PYTHONPATH",
            "PYENV_VERSION",
            "ASDF_DIR",
            "VIRTUAL_ENV",
        ] {
            assert!(relevant_var(v), "{v}");
        }
        for v in ["OLDPWD", "TERM", "COLUMNS", "PYTEST_ADDOPTS"] {
            assert!(!relevant_var(v), "{v}");
        }
    }

    #[test]
    fn garbage_output_is_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c/interpreters.json");
        let c = Cache::new(path.clone(), Path::new("/bin/sh"));
        assert_eq!(c.store(c.before_check(), b"Traceback ..."), None);
        assert!(!path.exists());
        assert_eq!(c.lookup(), None);
    }

    #[test]
    fn a_corrupt_cache_file_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("interpreters.json");
        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(Cache::new(path, Path::new("/bin/sh")).lookup(), None);
    }

    /// What a check prints, for the interpreter `exe` (stamped now) and no `sys.path`.
    fn check_output(exe: &Path) -> Vec<u8> {
        let s = stamp(exe, false).unwrap();
        format!(
            r#"{{"executable": {:?}, "executable_stamp": [{}, {}, {}], "python": "3.11.7", "pytest": "9.0", "paths": []}}"#,
            exe.to_str().unwrap(),
            s.0,
            s.1,
            s.2
        )
        .into_bytes()
    }

    #[test]
    fn a_shim_answers_from_the_cache_in_every_directory_that_sees_the_same_selectors() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache/interpreters.json");
        let shim = dir.path().join("root/shims/python3");
        std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
        std::fs::write(&shim, "#!/bin/sh\nexec python3 \"$@\"\n").unwrap();
        let exe = dir.path().join("python3.11");
        std::fs::write(&exe, "binary").unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &c] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        let at = |d: &Path| Cache::from_dir(cache.clone(), &shim, Some(d));
        let first = at(&a);
        assert_eq!(first.lookup(), None);
        let facts = first
            .store(first.before_check(), &check_output(&exe))
            .unwrap();
        assert_eq!(facts.executable, exe);
        // Another project with no selector of its own: the same answer without a check.
        assert_eq!(at(&b).lookup(), Some(facts.clone()));
        assert_eq!(at(&b.join("sub")).lookup(), Some(facts.clone()));
        // A directory that picks its own version is asked.
        std::fs::write(c.join(".python-version"), "3.12\n").unwrap();
        assert_eq!(at(&c).lookup(), None);
        assert_eq!(at(&c.join("sub")).lookup(), None);
        // So is every directory once the shim's global version file changes.
        std::fs::write(dir.path().join("root/version"), "3.10\n").unwrap();
        assert_eq!(at(&a).lookup(), None);
        assert_eq!(at(&b).lookup(), None);
        // An entry made under that selector serves only directories that see it, unchanged.
        let c_cache = at(&c);
        let c_facts = c_cache
            .store(c_cache.before_check(), &check_output(&exe))
            .unwrap();
        assert_eq!(at(&c.join("sub")).lookup(), Some(c_facts));
        std::fs::write(c.join(".python-version"), "3.13\n").unwrap();
        assert_eq!(at(&c).lookup(), None);
    }

    #[test]
    fn a_real_interpreter_is_not_keyed_by_directory_selectors() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("interpreters.json");
        let exe = dir.path().join("python3.11");
        std::fs::write(&exe, "\x7fELF").unwrap();
        let a = Cache::from_dir(cache.clone(), &exe, Some(dir.path()));
        let facts = a.store(a.before_check(), &check_output(&exe)).unwrap();
        std::fs::write(dir.path().join(".python-version"), "3.12\n").unwrap();
        assert_eq!(
            Cache::from_dir(cache, &exe, Some(dir.path())).lookup(),
            Some(facts)
        );
    }
}
