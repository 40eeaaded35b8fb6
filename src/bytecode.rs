//! The project's part of the private bytecode cache (`PYTHONPYCACHEPREFIX`, see
//! [`crate::runner`]): what a run may read of it, and when it is forgotten.
//!
//! A `.pyc` is trusted by CPython (and by pytest's assertion rewriter) when the source's mtime
//! in whole seconds and its size match what it recorded, so a source rewritten within the same
//! second with the same size would run its old code. By default the cache's mirror of the
//! run's directory is deleted before and after every run: the project always compiles from its
//! current source.
//!
//! While a [`KeepBetweenRuns`] guard for a cache is alive (one `fix` command), the project's
//! bytecode is kept from one run to the next instead, file by file, under a stronger check
//! than CPython's: before each run every Python source under the directory is stamped (device,
//! inode, size, mtime and ctime in ns), and a `.pyc` stays only when its source's stamp equals
//! the one taken before the previous run, i.e. the source has not changed since before the run
//! that could have compiled it. Any write changes the stamp (an atomic rename gives another
//! inode; an in-place write or a restored mtime changes the ctime, which nobody can set), so a
//! candidate, a rollback or a test that rewrites a source makes that file compile afresh, while
//! the rest of the project (and pytest's rewritten test modules) is compiled once per command,
//! not once per run. Bytecode whose source the walk does not stamp (a hidden directory, a
//! source outside the directory) is deleted before every run, as before.
//!
//! Across commands: when the guard drops, a mirror whose directory still exists (the project,
//! not a scratch copy) is kept with its stamps, written beside the cache
//! (`pycache-stamps/`, private like it); the next command's first run in that directory
//! prunes by them exactly as between two runs. The argument is the same: a `.pyc` stays only
//! while its source has not changed since before the run that could have compiled it, and
//! every change between commands (an edit, a checkout, a restore) changes the ctime. A mirror
//! with no stamps (the first command, a killed one's scratch copy, an unreadable file) starts
//! empty. So a pre-commit hook's second run compiles only what changed. Once a day a command's
//! end forgets the kept mirrors of directories gone since (a removed CI checkout or temp copy).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::process::{cache_home, private_dir, write_private};

/// Where runs keep bytecode; see [`crate::runner`]'s module docs. Neither ever reads a stale
/// `.pyc` of the project, and neither writes into the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytecode {
    /// A private cache directory shared by runs; the project's part is wiped around each run
    /// (or checked file by file, see the module docs).
    Cache(PathBuf),
    /// A fresh empty directory per run, and no bytecode written at all.
    Fresh,
}

impl Bytecode {
    /// `$XDG_CACHE_HOME/selfdebug/pycache`, else `$HOME/.cache/selfdebug/pycache`, else
    /// [`Bytecode::Fresh`].
    pub fn default_cache() -> Bytecode {
        match cache_home() {
            Some(b) => Bytecode::Cache(b.join("pycache")),
            None => Bytecode::Fresh,
        }
    }
}

/// `(dev, inode, size, mtime ns, ctime ns)` of a source.
type Stamp = (u64, u64, u64, i128, i128);

/// Per cache dir with a live guard: the guards, and per mirror the stamps taken before its
/// latest run.
struct Kept {
    guards: usize,
    mirrors: HashMap<PathBuf, Mirror>,
}

struct Mirror {
    real: PathBuf,
    stamps: HashMap<PathBuf, Stamp>,
}

static KEPT: Mutex<BTreeMap<PathBuf, Kept>> = Mutex::new(BTreeMap::new());

/// Keeps the project's bytecode in `cache` between runs while alive (see the module docs);
/// dropped, it saves the stamps of every mirror whose directory still exists and forgets the
/// others (and, once a day, the mirrors of directories gone since, see [`sweep`]).
pub struct KeepBetweenRuns {
    cache: PathBuf,
}

impl KeepBetweenRuns {
    pub fn new(cache: &Path) -> KeepBetweenRuns {
        let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
        kept.entry(cache.to_path_buf())
            .or_insert_with(|| Kept {
                guards: 0,
                mirrors: HashMap::new(),
            })
            .guards += 1;
        KeepBetweenRuns {
            cache: cache.to_path_buf(),
        }
    }
}

impl Drop for KeepBetweenRuns {
    fn drop(&mut self) {
        let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
        let Some(k) = kept.get_mut(&self.cache) else {
            return;
        };
        k.guards -= 1;
        if k.guards > 0 {
            return;
        }
        if let Some(k) = kept.remove(&self.cache) {
            for (mirror, m) in k.mirrors {
                // A scratch copy is gone by now: its mirror goes too.
                let saved = m.real.is_dir() && save_stamps(&self.cache, &mirror, &m).is_ok();
                if !saved {
                    forget_mirror(&self.cache, &mirror, &m.real);
                }
            }
        }
        drop(kept);
        sweep(&self.cache, SWEEP_EVERY);
    }
}

/// Before a run in `cwd` with bytecode under `cache`.
pub fn before_run(cache: &Path, cwd: &Path) {
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    let Some(k) = kept.get_mut(cache) else {
        drop(kept);
        forget_project(cache, cwd);
        return;
    };
    for (mirror, real) in mirrors(cache, cwd) {
        let now = stamps(&real);
        let saved;
        let before = match k.mirrors.get(&mirror) {
            Some(m) => Some(&m.stamps),
            None => {
                // A new command: what an earlier one left, if its stamps say what it was.
                saved = load_stamps(cache, &mirror, &real);
                saved.as_ref()
            }
        };
        match before {
            Some(before) => prune(&mirror, &real, &unchanged(before, &now), 0),
            None => forget_mirror(cache, &mirror, &real),
        }
        k.mirrors.insert(mirror, Mirror { real, stamps: now });
    }
}

/// After a run: the mirror is forgotten unless a guard keeps it (then the next run's
/// [`before_run`] decides, file by file).
pub fn after_run(cache: &Path, cwd: &Path) {
    let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if kept.contains_key(cache) {
        return;
    }
    drop(kept);
    forget_project(cache, cwd);
}

/// Where the stamps of `mirror` are kept between commands: beside the cache, one file per
/// mirror, named by a hash of its path (the file also holds the path, checked on load).
fn stamps_file(cache: &Path, mirror: &Path) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    mirror.hash(&mut h);
    Some(stamps_dir(cache)?.join(format!("{:016x}.json", h.finish())))
}

/// `pycache-stamps` beside the cache `pycache`.
fn stamps_dir(cache: &Path) -> Option<PathBuf> {
    Some(cache.with_file_name(format!("{}-stamps", cache.file_name()?.to_string_lossy())))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedStamps {
    mirror: PathBuf,
    real: PathBuf,
    stamps: Vec<(PathBuf, Stamp)>,
}

/// How often [`sweep`] looks for mirrors of directories that are gone.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Forgets the kept mirrors (and stamps) of directories that no longer exist (a CI checkout
/// or a temp copy removed since), at most once per `every` (a marker file's mtime says when
/// it last ran), so that they do not pile up in the cache.
fn sweep(cache: &Path, every: std::time::Duration) {
    let Some(dir) = stamps_dir(cache) else {
        return;
    };
    let marker = dir.join(".swept");
    let recent = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age < every));
    if recent || !dir.is_dir() || !private_dir(&dir) {
        return;
    }
    let _ = std::fs::write(&marker, b"");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let saved = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<SavedStamps>(&b).ok());
        match saved {
            Some(s) if s.real.is_dir() => {}
            Some(s) => {
                if s.mirror.starts_with(cache) {
                    forget_mirror(cache, &s.mirror, &s.real);
                }
                let _ = std::fs::remove_file(&path);
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Writes the stamps of `m` (atomically, in a private dir).
fn save_stamps(cache: &Path, mirror: &Path, m: &Mirror) -> std::io::Result<()> {
    let path = stamps_file(cache, mirror).ok_or_else(|| std::io::Error::other("no cache name"))?;
    let saved = SavedStamps {
        mirror: mirror.to_path_buf(),
        real: m.real.clone(),
        stamps: m.stamps.iter().map(|(p, s)| (p.clone(), *s)).collect(),
    };
    let bytes = serde_json::to_vec(&saved).map_err(std::io::Error::other)?;
    write_private(&path, &bytes)
}

/// The stamps an earlier command saved for `mirror` of `real`, taken off disk (a command killed
/// from here on leaves none, and its successor starts from an empty mirror); `None` when there
/// are none or they are not this mirror's.
fn load_stamps(cache: &Path, mirror: &Path, real: &Path) -> Option<HashMap<PathBuf, Stamp>> {
    let path = stamps_file(cache, mirror)?;
    if !path.parent().is_some_and(private_dir) {
        return None;
    }
    let bytes = std::fs::read(&path).ok();
    let _ = std::fs::remove_file(&path);
    let saved: SavedStamps = serde_json::from_slice(&bytes?).ok()?;
    (saved.mirror == mirror && saved.real == real).then(|| saved.stamps.into_iter().collect())
}

/// The mirrors of `cwd` in `cache` (as given and as resolved), each with the directory it
/// mirrors.
fn mirrors(cache: &Path, cwd: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut roots = Vec::new();
    if let Ok(abs) = std::path::absolute(cwd) {
        roots.push(abs);
    }
    if let Ok(real) = cwd.canonicalize() {
        if !roots.contains(&real) {
            roots.push(real);
        }
    }
    roots
        .into_iter()
        .filter_map(|real| {
            let rel = real.strip_prefix("/").ok()?;
            (!rel.as_os_str().is_empty()).then(|| (cache.join(rel), real.clone()))
        })
        .collect()
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.size(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
    ))
}

/// A directory whose bytecode is kept in every case (see [`prune`]), or that holds no
/// project source worth stamping.
fn skipped_dir(name: &std::ffi::OsStr, real: &Path) -> bool {
    let n = name.to_string_lossy();
    n.starts_with('.')
        || n == "__pycache__"
        || n == "node_modules"
        || kept_in_every_case(name, real)
}

/// Every `*.py` under `real` (skipped dirs aside), stamped.
fn stamps(real: &Path) -> HashMap<PathBuf, Stamp> {
    let mut out = HashMap::new();
    let walk = walkdir::WalkDir::new(real)
        .max_depth(64)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0 || !e.file_type().is_dir() || !skipped_dir(e.file_name(), e.path())
        });
    for e in walk.flatten() {
        if e.file_type().is_dir() || e.path().extension().is_none_or(|x| x != "py") {
            continue;
        }
        let path = e.path().to_path_buf();
        if let Some(s) = stamp(&path) {
            out.insert(path, s);
        }
    }
    out
}

/// Deletes what `mirror` holds for `real` (virtualenvs and site-packages inside it aside),
/// except the `.pyc` files whose source (a path under `real`) `keep` says stay.
fn prune(mirror: &Path, real: &Path, keep: &dyn Fn(&Path) -> bool, depth: usize) {
    let Ok(entries) = std::fs::read_dir(mirror) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        match e.file_type() {
            Ok(t) if t.is_dir() => {
                let real_child = real.join(&name);
                if kept_in_every_case(&name, &real_child) {
                    continue;
                }
                if depth < 64 {
                    prune(&p, &real_child, keep, depth + 1);
                    let _ = std::fs::remove_dir(&p);
                } else {
                    // Deeper than the stamps' walk goes: nothing there is known unchanged.
                    let _ = std::fs::remove_dir_all(&p);
                }
            }
            _ => {
                // `mod.cpython-311.pyc`, `test_x.cpython-311-pytest-8.3.5.pyc`: module names
                // hold no dot, so the source is what comes before the first one.
                let text = name.to_string_lossy();
                let source = text
                    .strip_suffix(".pyc")
                    .and_then(|t| t.split('.').next())
                    .map(|stem| real.join(format!("{stem}.py")));
                if !source.is_some_and(|src| keep(&src)) {
                    let _ = std::fs::remove_file(&p);
                }
            }
        }
    }
}

/// A source whose stamp is the same before and now (and known).
fn unchanged<'a>(
    before: &'a HashMap<PathBuf, Stamp>,
    now: &'a HashMap<PathBuf, Stamp>,
) -> impl Fn(&Path) -> bool + 'a {
    move |src| before.get(src).is_some_and(|b| now.get(src) == Some(b))
}

/// The mirror of a virtualenv or site-packages inside the project: third-party code, kept.
fn kept_in_every_case(name: &std::ffi::OsStr, real: &Path) -> bool {
    name == "site-packages" || name == "dist-packages" || real.join("pyvenv.cfg").is_file()
}

/// Deletes one mirror (see [`forget_project`]) and its parents while they are empty.
fn forget_mirror(cache: &Path, mirror: &Path, real: &Path) {
    prune(mirror, real, &|_| false, 0);
    let _ = std::fs::remove_dir(mirror);
    // Its parents too, while empty: every dry run's scratch copy has its own path, and
    // their empty mirrors would pile up in the cache.
    for dir in mirror.ancestors().skip(1) {
        if dir == cache || !dir.starts_with(cache) || std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Deletes the cache's mirror of `cwd` (as given and as resolved), except the parts that
/// mirror virtualenvs or site-packages inside it: the project's own bytecode is then always
/// compiled from its current source.
pub fn forget_project(cache: &Path, cwd: &Path) {
    for (mirror, real) in mirrors(cache, cwd) {
        forget_mirror(cache, &mirror, &real);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgetting_a_dirs_bytecode_leaves_no_empty_mirror_dirs() {
        let cache = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let cwd = work.path().join("proj");
        std::fs::create_dir_all(&cwd).unwrap();
        let mirror = cache.path().join(cwd.strip_prefix("/").unwrap());
        std::fs::create_dir_all(mirror.join("pkg")).unwrap();
        std::fs::write(mirror.join("pkg/m.cpython-311.pyc"), b"x").unwrap();
        // Someone else's bytecode beside it stays, and so do the dirs that hold it.
        let other = cache.path().join("usr/lib/python3.11");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("os.cpython-311.pyc"), b"y").unwrap();
        forget_project(cache.path(), &cwd);
        let mut left: Vec<String> = walkdir::WalkDir::new(cache.path())
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                e.path()
                    .strip_prefix(cache.path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "usr",
                "usr/lib",
                "usr/lib/python3.11",
                "usr/lib/python3.11/os.cpython-311.pyc"
            ]
        );
    }

    #[test]
    fn the_sweep_forgets_the_mirrors_of_gone_directories_once_a_day() {
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join("pycache");
        let live = home.path().join("live");
        std::fs::create_dir_all(&live).unwrap();
        let gone = home.path().join("gone");
        let keep = |real: &Path| {
            let (mirror, real) = mirrors(&cache, real).remove(0);
            std::fs::create_dir_all(&mirror).unwrap();
            std::fs::write(mirror.join("m.cpython-311.pyc"), b"x").unwrap();
            let m = Mirror {
                real,
                stamps: HashMap::new(),
            };
            save_stamps(&cache, &mirror, &m).unwrap();
            mirror
        };
        let live_mirror = keep(&live);
        std::fs::create_dir_all(&gone).unwrap();
        let gone_mirror = keep(&gone);
        std::fs::remove_dir(&gone).unwrap();
        let stamps_dir = home.path().join("pycache-stamps");
        assert_eq!(std::fs::read_dir(&stamps_dir).unwrap().count(), 2);

        sweep(&cache, SWEEP_EVERY);
        assert!(live_mirror.join("m.cpython-311.pyc").is_file());
        assert!(!gone_mirror.exists());
        let left: Vec<String> = std::fs::read_dir(&stamps_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        assert_eq!(
            left,
            [stamps_file(&cache, &live_mirror)
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()]
        );

        // Within the day, a directory gone since is left for the next sweep.
        std::fs::create_dir_all(&gone).unwrap();
        let gone_mirror = keep(&gone);
        std::fs::remove_dir(&gone).unwrap();
        sweep(&cache, SWEEP_EVERY);
        assert!(gone_mirror.join("m.cpython-311.pyc").is_file());
        sweep(&cache, std::time::Duration::ZERO);
        assert!(!gone_mirror.exists());
    }
}
