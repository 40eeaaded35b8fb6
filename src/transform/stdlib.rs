//! The standard library as the project's own interpreter knows it: which top-level modules
//! exist (`sys.stdlib_module_names`) and which public names each module (and each public
//! submodule) has, read once per interpreter by [`stdlib_index.py`](stdlib_index.py) and
//! cached in `~/.cache/selfdebug/stdlib/`.
//!
//! The index answers three questions: is `m` a standard-library module (import grouping, the
//! `import X` repair), where does a name live (`Formatter` → `string`, then `logging`), and what
//! does module `m` really have (`os.getcwdu` → `os.getcwd`).
//!
//! # Ranking the homes of a name
//!
//! A name exported by several modules gets them in this order (at most [`MAX_HOMES`]):
//! 1. exporters of the same object are one home, spelled the most public way: the module that
//!    re-exports a submodule's or a private module's object (`asyncio.sleep` is
//!    `asyncio.tasks.sleep`, `functools.reduce` is `_functools.reduce`) or a platform
//!    module's (`os.getcwd` is `posix.getcwd`, `os.path.join` is `posixpath.join`);
//! 2. documented preferences, which make the first home *clear*: `typing`'s aliases lose to the
//!    module that defines the real class (`collections.abc.Iterable`, `collections.OrderedDict`:
//!    `typing`'s copies are deprecated since 3.9), and the platform modules `posix`, `nt`,
//!    `posixpath`, `ntpath` lose to `os` and `os.path`;
//! 3. a home whose module defines the object (`obj.__module__`) before one that only holds a
//!    value (`math.pi`);
//! 4. fewer dots, then the shorter name, then alphabetical.
//!
//! Never proposed: modules with a component starting with `_`, deprecated modules (their
//! import warns that they are deprecated: `cgi`, `distutils`, `imp`...), module objects.
//!
//! # Safety of the index build
//!
//! `python -I -S` (no project directory or `PYTHON*` variables on `sys.path`, no site-packages)
//! in an empty temp dir, stdin closed, `DISPLAY` removed, a time limit per module (SIGALRM) and
//! for the whole run (the process group is killed). Modules with side effects on import
//! (`antigravity`, `this`, GUI toolkits, the test suite, `lib2to3`) are never imported. A
//! module that crashes or hangs the interpreter is named by the last `start` line of the
//! output and skipped on the next try.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::process::{self, write_private};
use crate::runner::Interpreter;

/// The index script (see its header for the output format).
pub const INDEX_SCRIPT: &str = include_str!("stdlib_index.py");

/// Homes proposed at most for one name.
pub const MAX_HOMES: usize = 3;

/// How long one index build may take (measured: about a second).
const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Builds tried at most; each after the first skips the module that broke the one before.
const BUILD_TRIES: usize = 4;

/// Implementation modules that `os` and `os.path` re-export portably.
const PLATFORM: &[&str] = &["nt", "ntpath", "posix", "posixpath"];

/// Used only when the interpreter cannot be asked (`--no-validate` with an interpreter that
/// does not run): the modules a forgotten `import X` most often names. Sorted.
const FALLBACK_MODULES: &[&str] = &[
    "__future__",
    "abc",
    "argparse",
    "array",
    "ast",
    "asyncio",
    "base64",
    "bisect",
    "builtins",
    "calendar",
    "collections",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "errno",
    "fnmatch",
    "fractions",
    "functools",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "importlib",
    "inspect",
    "io",
    "itertools",
    "json",
    "logging",
    "math",
    "operator",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "pprint",
    "queue",
    "random",
    "re",
    "shlex",
    "shutil",
    "signal",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "traceback",
    "types",
    "typing",
    "unittest",
    "urllib",
    "uuid",
    "warnings",
    "weakref",
    "xml",
    "zipfile",
    "zlib",
];

/// What the index knows of one public name of one module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameInfo {
    /// In `__all__`; without `__all__`, a top-level definition (see the script).
    pub exported: bool,
    /// `obj.__module__` is this module.
    pub defined: bool,
    pub callable: bool,
    /// The value is a module (`os.path`).
    pub module: bool,
    /// `obj.__module__` when it names another module (a re-export).
    pub owner: Option<String>,
}

impl NameInfo {
    /// `"xdc"` or `"xc:asyncio.tasks"`.
    fn parse(s: &str) -> NameInfo {
        let (flags, owner) = match s.split_once(':') {
            Some((f, o)) => (f, Some(o.to_string())),
            None => (s, None),
        };
        NameInfo {
            exported: flags.contains('x'),
            defined: flags.contains('d'),
            callable: flags.contains('c'),
            module: flags.contains('m'),
            owner: owner.filter(|o| !o.is_empty()),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct ModuleInfo {
    deprecated: bool,
    names: BTreeMap<String, NameInfo>,
}

/// Where a name lives: ranked modules, and whether the first one is the clear answer (one
/// home, or preferred over the others by a documented rule) rather than a guess.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Homes {
    pub modules: Vec<String>,
    pub clear: bool,
}

/// The standard library of one interpreter.
#[derive(Debug, Clone, Default)]
pub struct StdlibIndex {
    /// `major.minor.micro` of the interpreter that was asked.
    pub version: String,
    /// `sys.stdlib_module_names`.
    modules: BTreeSet<String>,
    indexed: BTreeMap<String, ModuleInfo>,
    /// Exported name → modules exporting it.
    by_name: BTreeMap<String, Vec<String>>,
}

/// Why there is no index of an interpreter's standard library. Displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum StdlibError {
    #[error("bad index line: {0}")]
    BadLine(#[source] serde_json::Error),
    /// No header, no `done` line, or no module.
    #[error("the index is incomplete")]
    Incomplete,
    #[error("no interpreter to ask")]
    NoInterpreter,
    #[error("cannot create a temp dir: {0}")]
    TempDir(#[source] std::io::Error),
    #[error(transparent)]
    Runner(#[from] process::RunnerError),
    /// The script failed with no module to blame (the last line it printed, if any).
    #[error(
        "{} could not list its standard library{}",
        python.display(),
        said.as_ref().map(|l| format!(": {l}")).unwrap_or_default()
    )]
    Failed {
        python: PathBuf,
        said: Option<String>,
    },
    /// Every try crashed or hung on another module (those skipped).
    #[error(
        "{} could not list its standard library (modules skipped: {})",
        python.display(),
        skipped.join(", ")
    )]
    GaveUp {
        python: PathBuf,
        skipped: Vec<String>,
    },
}

impl StdlibIndex {
    /// Reads the script's output; `Err` unless it is complete (header and `done` line).
    pub fn parse(text: &str) -> Result<StdlibIndex, StdlibError> {
        let mut index = StdlibIndex::default();
        let (mut header, mut done) = (false, false);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).map_err(StdlibError::BadLine)?;
            if let Some(py) = v.get("python") {
                header = true;
                index.version = py
                    .get("version")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        let p: Vec<String> = parts.iter().map(|x| x.to_string()).collect();
                        p.join(".")
                    })
                    .unwrap_or_default();
                index.modules = strings(py.get("modules")).collect();
            } else if let Some(m) = v.get("m").and_then(Value::as_str) {
                let names = v
                    .get("names")
                    .and_then(Value::as_object)
                    .map(|o| {
                        o.iter()
                            .filter_map(|(k, f)| Some((k.clone(), NameInfo::parse(f.as_str()?))))
                            .collect()
                    })
                    .unwrap_or_default();
                let deprecated = v.get("deprecated").and_then(Value::as_bool) == Some(true);
                index
                    .indexed
                    .insert(m.to_string(), ModuleInfo { deprecated, names });
            } else if v.get("done").and_then(Value::as_bool) == Some(true) {
                done = true;
            }
        }
        if !header || !done || index.modules.is_empty() {
            return Err(StdlibError::Incomplete);
        }
        for (m, info) in &index.indexed {
            for (n, i) in &info.names {
                if i.exported {
                    index.by_name.entry(n.clone()).or_default().push(m.clone());
                }
            }
        }
        Ok(index)
    }

    /// Whether `top` (a top-level module name) is in `sys.stdlib_module_names`.
    pub fn is_module(&self, top: &str) -> bool {
        self.modules.contains(top)
    }

    /// The public names module `dotted` has, with whether each is callable; `None` when the
    /// module was not indexed.
    pub fn members(&self, dotted: &str) -> Option<Vec<(String, bool)>> {
        let info = self.indexed.get(dotted)?;
        Some(
            info.names
                .iter()
                .map(|(n, i)| (n.clone(), i.callable))
                .collect(),
        )
    }

    /// Number of modules indexed (top-level and submodules).
    pub fn indexed_modules(&self) -> usize {
        self.indexed.len()
    }

    /// The modules to import `name` from, ranked as the module docs say.
    pub fn homes(&self, name: &str) -> Homes {
        let empty = Homes {
            modules: Vec::new(),
            clear: false,
        };
        let Some(exporters) = self.by_name.get(name) else {
            return empty;
        };
        let exporters: Vec<(&str, &NameInfo)> = exporters
            .iter()
            .filter_map(|m| {
                let info = self.indexed.get(m)?;
                let n = info.names.get(name)?;
                (proposable(m) && !info.deprecated && !n.module).then_some((m.as_str(), n))
            })
            .collect();
        let another_defines = |me: &str| exporters.iter().any(|(m, n)| *m != me && n.defined);
        // Exporters of one object are one home: grouped by where the object comes from.
        let mut homes: BTreeMap<&str, Home> = BTreeMap::new();
        for (m, n) in &exporters {
            let origin = match &n.owner {
                Some(o) if !n.defined => o.as_str(),
                _ => m,
            };
            let demoted = PLATFORM.contains(m) || (*m == "typing" && another_defines(m));
            let home = Home {
                demoted,
                defines: n.defined || n.owner.is_some(),
                module: m,
            };
            match homes.get(origin) {
                Some(h) if h.key() <= home.key() => {}
                _ => {
                    homes.insert(origin, home);
                }
            }
        }
        let mut ranked: Vec<Home> = homes.into_values().collect();
        ranked.sort_by(|a, b| a.key().cmp(&b.key()));
        let preferred = ranked.iter().filter(|h| !h.demoted).count();
        Homes {
            clear: ranked.len() == 1 || preferred == 1,
            modules: ranked
                .iter()
                .take(MAX_HOMES)
                .map(|h| h.module.to_string())
                .collect(),
        }
    }
}

/// One way to import a name, with what ranks it.
struct Home<'a> {
    demoted: bool,
    defines: bool,
    module: &'a str,
}

impl Home<'_> {
    fn key(&self) -> (bool, bool, usize, usize, &str) {
        (
            self.demoted,
            !self.defines,
            self.module.matches('.').count(),
            self.module.len(),
            self.module,
        )
    }
}

/// No component starts with `_` (private modules are never proposed).
fn proposable(dotted: &str) -> bool {
    dotted
        .split('.')
        .all(|p| !p.is_empty() && !p.starts_with('_'))
}

fn strings(v: Option<&Value>) -> impl Iterator<Item = String> + '_ {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
}

/// The standard library for planning: the index of the project's interpreter, built (or
/// read from the cache) the first time a transform asks, else a small fallback list of
/// module names.
#[derive(Debug, Default)]
pub struct Stdlib {
    python: Option<Interpreter>,
    cache_dir: Option<PathBuf>,
    index: OnceLock<Result<StdlibIndex, StdlibError>>,
}

impl Stdlib {
    /// The index of `python`, cached under [`default_cache_dir`].
    pub fn new(python: Interpreter) -> Stdlib {
        Stdlib::with_cache(python, default_cache_dir())
    }

    /// The index of `python`, cached in `cache_dir` (`None`: not cached).
    pub fn with_cache(python: Interpreter, cache_dir: Option<PathBuf>) -> Stdlib {
        Stdlib {
            python: Some(python),
            cache_dir,
            index: OnceLock::new(),
        }
    }

    /// No interpreter to ask: the fallback module list only, no names.
    pub fn unavailable() -> Stdlib {
        Stdlib::default()
    }

    fn result(&self) -> &Result<StdlibIndex, StdlibError> {
        self.index.get_or_init(|| match &self.python {
            Some(p) => load_or_build(p, self.cache_dir.as_deref()),
            None => Err(StdlibError::NoInterpreter),
        })
    }

    pub fn index(&self) -> Option<&StdlibIndex> {
        self.result().as_ref().ok()
    }

    /// Why there is no index, once one was asked for and could not be had.
    pub fn error(&self) -> Option<&StdlibError> {
        self.index.get()?.as_ref().err()
    }

    /// Whether `top` is a standard-library module: the interpreter's own list, else the
    /// fallback.
    pub fn is_module(&self, top: &str) -> bool {
        match self.index() {
            Some(i) => i.is_module(top),
            None => FALLBACK_MODULES.binary_search(&top).is_ok(),
        }
    }
}

/// `$XDG_CACHE_HOME/selfdebug/stdlib`, else `$HOME/.cache/selfdebug/stdlib`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let abs = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    abs(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| abs(std::env::var_os("HOME")).map(|h| h.join(".cache")))
        .map(|b| b.join("selfdebug").join("stdlib"))
}

/// The cache file of an interpreter: named by a hash of its real path, the binary's mtime and
/// size (which change with every install or upgrade, so they stand for its version), and the
/// script, so a new selfdebug with a different script rebuilds.
pub fn cache_file(cache_dir: &Path, python: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let real = python.canonicalize().ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let mut key = real.as_os_str().as_encoded_bytes().to_vec();
    key.extend(
        format!(
            "\0{}.{}\0{}\0",
            meta.mtime(),
            meta.mtime_nsec(),
            meta.size()
        )
        .bytes(),
    );
    key.extend(INDEX_SCRIPT.bytes());
    let id = git2::Oid::hash_object(git2::ObjectType::Blob, &key).ok()?;
    Some(cache_dir.join(format!("{}.jsonl", &id.to_string()[..20])))
}

/// The cached index of `python`, else a fresh one (then cached, best effort).
pub fn load_or_build(
    python: &Interpreter,
    cache_dir: Option<&Path>,
) -> Result<StdlibIndex, StdlibError> {
    let file = cache_dir.and_then(|d| cache_file(d, &python.path));
    if let Some(f) = &file {
        // A cache that cannot be read or is not complete is rebuilt.
        if let Some(index) = std::fs::read_to_string(f)
            .ok()
            .and_then(|t| StdlibIndex::parse(&t).ok())
        {
            return Ok(index);
        }
    }
    let text = build_text(python)?;
    let index = StdlibIndex::parse(&text)?;
    if let Some(f) = &file {
        // A cache that cannot be written (nor a directory others can write, which is refused)
        // costs a rebuild next time, nothing else.
        let _ = write_private(f, text.as_bytes());
    }
    Ok(index)
}

/// Runs the index script (see the module docs) until it completes, skipping each module that
/// crashed or hung the interpreter.
pub fn build_text(python: &Interpreter) -> Result<String, StdlibError> {
    // Named with our pid, so one left by a killed run is removed by the next (see runner).
    let dir = process::TempDir::new("selfdebug-stdlib").map_err(StdlibError::TempDir)?;
    let out = dir.path().join("index.jsonl");
    let mut skip: Vec<String> = Vec::new();
    for _ in 0..BUILD_TRIES {
        let _ = std::fs::remove_file(&out);
        let mut cmd = Command::new(&python.path);
        cmd.args(["-I", "-S", "-c", INDEX_SCRIPT])
            .arg(&out)
            .arg(skip.join(","))
            .current_dir(dir.path())
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        let run = process::run_command(cmd, BUILD_TIMEOUT)?;
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if run.exit_code == Some(0) && StdlibIndex::parse(&text).is_ok() {
            return Ok(text);
        }
        match culprit(&text) {
            Some(m) if !skip.contains(&m) => skip.push(m),
            _ => {
                let why = String::from_utf8_lossy(&run.stderr);
                let last = why.lines().rev().find(|l| !l.trim().is_empty());
                return Err(StdlibError::Failed {
                    python: python.path.clone(),
                    said: last.map(|l| l.trim().to_string()),
                });
            }
        }
    }
    Err(StdlibError::GaveUp {
        python: python.path.clone(),
        skipped: skip,
    })
}

/// The module being imported when the output stops: the last `start` line with no record
/// after it.
fn culprit(text: &str) -> Option<String> {
    let last = text.lines().rfind(|l| !l.trim().is_empty())?;
    let v: Value = serde_json::from_str(last).ok()?;
    v.get("start").and_then(Value::as_str).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module record: name, deprecated, `(name, flags)` as the script prints them.
    type Module<'a> = (&'a str, bool, &'a [(&'a str, &'a str)]);

    /// An index of `mods`, as the script would print it.
    fn index(mods: &[Module]) -> StdlibIndex {
        let mut text = String::from(
            "{\"python\":{\"version\":[3,11,7],\"executable\":\"/p\",\"modules\":[\"os\"]}}\n",
        );
        for (m, deprecated, names) in mods {
            let names: serde_json::Map<String, Value> = names
                .iter()
                .map(|(n, f)| (n.to_string(), Value::from(*f)))
                .collect();
            text.push_str(
                &serde_json::json!({"m": m, "all": true, "deprecated": deprecated, "names": names})
                    .to_string(),
            );
            text.push('\n');
        }
        text.push_str("{\"done\":true}\n");
        StdlibIndex::parse(&text).unwrap()
    }

    fn homes(i: &StdlibIndex, name: &str) -> (Vec<String>, bool) {
        let h = i.homes(name);
        (h.modules, h.clear)
    }

    fn expect(modules: &[&str], clear: bool) -> (Vec<String>, bool) {
        (modules.iter().map(|m| m.to_string()).collect(), clear)
    }

    #[test]
    fn ranking() {
        let i = index(&[
            ("asyncio", false, &[("sleep", "xc:asyncio.tasks")]),
            ("asyncio.tasks", false, &[("sleep", "xdc")]),
            ("time", false, &[("sleep", "xdc")]),
            ("collections", false, &[("OrderedDict", "xdc")]),
            ("typing", false, &[("OrderedDict", "xdc"), ("Any", "xdc")]),
            ("collections.abc", false, &[("Iterable", "xdc")]),
            ("os", false, &[("getcwd", "xc:posix"), ("path", "xm")]),
            ("posix", false, &[("getcwd", "xdc")]),
            ("os.path", false, &[("join", "xc:posixpath")]),
            ("posixpath", false, &[("join", "xdc")]),
            ("shlex", false, &[("join", "xdc")]),
            ("functools", false, &[("reduce", "xc:_functools")]),
            ("math", false, &[("pi", "x")]),
            ("cmath", false, &[("pi", "x")]),
            ("logging", false, &[("Formatter", "xdc")]),
            ("string", false, &[("Formatter", "xdc")]),
            ("_private", false, &[("Hidden", "xdc")]),
            ("cgi", true, &[("escape", "xdc")]),
            ("zipfile", false, &[("Helper", "c")]),
        ]);
        // A package's re-export of its submodule's object is one home, spelled by the package.
        assert_eq!(homes(&i, "sleep"), expect(&["time", "asyncio"], false));
        // typing's aliases lose to the real class: a clear answer.
        assert_eq!(
            homes(&i, "OrderedDict"),
            expect(&["collections", "typing"], true)
        );
        assert_eq!(homes(&i, "Any"), expect(&["typing"], true));
        // Platform modules are spelled through os and os.path.
        assert_eq!(homes(&i, "getcwd"), expect(&["os"], true));
        assert_eq!(homes(&i, "join"), expect(&["shlex", "os.path"], false));
        // A private module's object is imported from its public home.
        assert_eq!(homes(&i, "reduce"), expect(&["functools"], true));
        // Values: shorter module first, and a guess.
        assert_eq!(homes(&i, "pi"), expect(&["math", "cmath"], false));
        assert_eq!(
            homes(&i, "Formatter"),
            expect(&["string", "logging"], false)
        );
        // Never: private or deprecated modules, module objects, names not exported.
        for n in ["Hidden", "escape", "path", "Helper", "nothing"] {
            assert_eq!(homes(&i, n), expect(&[], false), "{n}");
        }
        assert_eq!(
            i.members("zipfile"),
            Some(vec![("Helper".to_string(), true)])
        );
        assert!(i.is_module("os") && !i.is_module("requests"));
    }

    #[test]
    fn incomplete_output_is_refused_and_names_the_culprit() {
        let partial =
            "{\"python\":{\"version\":[3,11,7],\"modules\":[\"os\"]}}\n{\"start\":\"bad\"}\n";
        assert!(StdlibIndex::parse(partial).is_err());
        assert_eq!(culprit(partial).as_deref(), Some("bad"));
        assert!(StdlibIndex::parse("not json").is_err());
        assert!(StdlibIndex::parse("").is_err());
    }

    #[test]
    fn fallback_without_interpreter() {
        assert!(FALLBACK_MODULES.windows(2).all(|w| w[0] < w[1]));
        let s = Stdlib::unavailable();
        assert!(s.is_module("json") && !s.is_module("requests"));
        assert!(s.index().is_none());
        assert_eq!(
            s.error().map(ToString::to_string).as_deref(),
            Some("no interpreter to ask")
        );
    }
}
