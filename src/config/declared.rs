//! Every setting, declared once (as ripgrep declares each flag once in its `defs.rs`): its key
//! (in the file and in `selfdebug config`), the flag that overrides the file, its type, how the
//! file's value is read and checked, its default, and what `selfdebug config` shows when it has
//! none. The file's reader ([`super::Config::load`]), the keys it accepts and suggests, the two
//! raw layers (the file's values and the command line's, [`Layer`]), the resolution into
//! [`super::Settings`] and the rows of `selfdebug config` all derive from [`DECLARED`]; the
//! typed constants (`MAX_ATTEMPTS`, ...) are how code reads one. A test checks that each
//! declared key has its line in `docs/configuration.md`'s table, and each line a declaration.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::worker::Mode;

/// The default of `--max-attempts` (the original design's).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;

/// `--time-budget` when none is given: a CI job or a hook gets its answer within 15 minutes.
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(900);

/// `--backup-max-age` when none is given: backups of ended runs older than this many days are
/// pruned at the start of a run (see [`crate::journal::prune_backups`]).
pub const DEFAULT_BACKUP_MAX_AGE_DAYS: u64 = 14;

/// `--search-time` when none is given (see [`crate::search`]).
pub const DEFAULT_SEARCH_TIME: Duration = Duration::from_secs(60);

/// `--proof-repeats` when none is given: a kept unsafe patch passes its failing tests this many
/// times in a row (see `docs/proof.md`, "Chance is not proof").
pub const DEFAULT_PROOF_REPEATS: u32 = 3;

/// `--jobs` when none is given: the machine's cores, at most this many (each job is a pytest
/// process and a scratch copy; past a few, the full runs and the disk are what wait).
pub const MAX_DEFAULT_JOBS: usize = 4;

/// How the file's value of a setting is read and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// A whole number of at least `min`.
    Int {
        min: i64,
    },
    /// The same, that fits in 32 bits.
    Int32 {
        min: i64,
    },
    Str,
    /// A non-empty path, relative to the file's directory.
    Path,
    /// A path (relative to the file's directory) or a bare command name (looked up on PATH).
    Python,
    /// An array of strings.
    Strings,
    /// `"auto"` or `"off"`.
    Worker,
    /// A table of category = attempts, one row per category (`budget.logic`).
    Budget,
    /// Rule selectors (`select`, `extend-select`, `ignore`) and path patterns
    /// (`extend-exclude`): read only from the file, into the selection and the exclusions.
    Select,
    ExtendSelect,
    Ignore,
    Exclude,
}

/// A value of one setting as a layer holds it, whatever its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// Not set, the tool decides (an optional setting's default).
    Null,
    Bool(bool),
    Int(u64),
    Str(String),
    Path(PathBuf),
    Strings(Vec<String>),
    Worker(Mode),
}

impl Raw {
    /// As `selfdebug config --json` shows it (a path lossily: it need not be UTF-8).
    pub fn shown(&self) -> Json {
        match self {
            Raw::Null => Json::Null,
            Raw::Bool(b) => json!(b),
            Raw::Int(n) => json!(n),
            Raw::Str(s) => json!(s),
            Raw::Path(p) => json!(p.to_string_lossy()),
            Raw::Strings(v) => json!(v),
            Raw::Worker(m) => json!(m),
        }
    }
}

/// A type a setting may have: how it goes into a layer and comes back out.
pub trait Value: Sized {
    fn into_raw(self) -> Raw;
    fn from_raw(raw: &Raw) -> Option<Self>;
}

/// A type held in one [`Raw`] variant as it is.
macro_rules! raw_value {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl Value for $ty {
            fn into_raw(self) -> Raw {
                Raw::$variant(self)
            }
            fn from_raw(raw: &Raw) -> Option<Self> {
                match raw {
                    Raw::$variant(v) => Some(Clone::clone(v)),
                    _ => None,
                }
            }
        }
    )*};
}

raw_value!(bool => Bool, u64 => Int, String => Str, PathBuf => Path, Vec<String> => Strings,
    Mode => Worker);

impl Value for u32 {
    fn into_raw(self) -> Raw {
        Raw::Int(u64::from(self))
    }
    fn from_raw(raw: &Raw) -> Option<Self> {
        u64::from_raw(raw).and_then(|n| u32::try_from(n).ok())
    }
}

/// The settings read only into their own shapes (the budgets, the selection, the exclusions).
impl Value for () {
    fn into_raw(self) -> Raw {
        Raw::Null
    }
    fn from_raw(_: &Raw) -> Option<Self> {
        Some(())
    }
}

/// A setting without a default: `Null` when nothing sets it.
impl<T: Value> Value for Option<T> {
    fn into_raw(self) -> Raw {
        self.map_or(Raw::Null, T::into_raw)
    }
    fn from_raw(raw: &Raw) -> Option<Self> {
        match raw {
            Raw::Null => Some(None),
            r => T::from_raw(r).map(Some),
        }
    }
}

/// One setting, typed: how code names it.
pub struct Setting<T> {
    pub key: &'static str,
    /// The flag that overrides the file (`--max-attempts`); empty: the file only.
    pub flag: &'static str,
    pub default: fn() -> T,
    /// What `selfdebug config` shows when the setting has no value (a `None` default).
    pub unset: &'static str,
}

/// One setting, untyped: how the reader and `selfdebug config` go through them all.
#[derive(Clone, Copy)]
pub struct Declared {
    pub key: &'static str,
    pub flag: &'static str,
    pub kind: Kind,
    pub default: fn() -> Raw,
    pub unset: &'static str,
}

/// What one layer says: the file's values with their lines, or the command line's with the
/// name (flag or variable) that said each. A key not in it: that layer says nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer<S> {
    values: BTreeMap<&'static str, (Raw, S)>,
}

impl<S> Default for Layer<S> {
    fn default() -> Self {
        Layer {
            values: BTreeMap::new(),
        }
    }
}

impl<S: Clone> Layer<S> {
    pub fn set<T: Value>(&mut self, setting: &Setting<T>, value: T, by: S) {
        self.values.insert(setting.key, (value.into_raw(), by));
    }

    pub fn set_raw(&mut self, key: &'static str, value: Raw, by: S) {
        self.values.insert(key, (value, by));
    }

    pub fn get<T: Value>(&self, setting: &Setting<T>) -> Option<(T, S)> {
        let (raw, by) = self.values.get(setting.key)?;
        Some((T::from_raw(raw)?, by.clone()))
    }

    pub fn raw(&self, key: &str) -> Option<&(Raw, S)> {
        self.values.get(key)
    }
}

/// One row per setting: `NAME: TYPE = "key", "flag", KIND, DEFAULT, "unset text";` gives the
/// typed constant `NAME` and its entry of [`DECLARED`].
macro_rules! settings {
    ($( $(#[$doc:meta])* $name:ident: $ty:ty = $key:literal, $flag:literal, $kind:expr,
        $default:expr, $unset:literal; )*) => {
        $( $(#[$doc])* pub const $name: Setting<$ty> = Setting {
            key: $key,
            flag: $flag,
            default: || $default,
            unset: $unset,
        }; )*

        /// Every setting, sorted by key, as `selfdebug config` lists them.
        pub const DECLARED: &[Declared] = &[$( Declared {
            key: $key,
            flag: $flag,
            kind: $kind,
            default: || Value::into_raw(($name.default)()),
            unset: $unset,
        }, )*];
    };
}

settings! {
    /// `--all-or-nothing`: keep no fix unless every failure is fixed.
    ALL_OR_NOTHING: bool = "all-or-nothing", "--all-or-nothing", Kind::Bool, false, "(none)";
    /// `--allow-tests`: fixes may edit test files.
    ALLOW_TESTS: bool = "allow-tests", "--allow-tests", Kind::Bool, false, "(none)";
    /// One JSON line per attempt is appended here.
    AUDIT_LOG: Option<PathBuf> = "audit-log", "--audit-log", Kind::Path, None, "(none)";
    /// Where the original design's backup copies go.
    BACKUP_DIR: Option<PathBuf> = "backup-dir", "--backup-dir", Kind::Path, None, "(none)";
    /// Days after which backups of ended runs are pruned (0: never).
    BACKUP_MAX_AGE: u64 = "backup-max-age", "--backup-max-age", Kind::Int { min: 0 },
        DEFAULT_BACKUP_MAX_AGE_DAYS, "(none)";
    /// Attempts per failure category; the defaults are [`crate::category::Budgets::default`]'s.
    BUDGET: () = "budget", "--budget", Kind::Budget, (), "(none)";
    /// Files never patched (nor probed).
    EXTEND_EXCLUDE: () = "extend-exclude", "", Kind::Exclude, (), "(none)";
    /// Rules added to `select`.
    EXTEND_SELECT: () = "extend-select", "", Kind::ExtendSelect, (), "(none)";
    /// Rules left out.
    IGNORE: () = "ignore", "", Kind::Ignore, (), "(none)";
    /// `--install-missing`: pip-install a missing third-party module once.
    INSTALL_MISSING: bool = "install-missing", "--install-missing", Kind::Bool, false, "(none)";
    /// Candidates proven at once (also `SELFDEBUG_JOBS`).
    JOBS: Option<u64> = "jobs", "--jobs", Kind::Int { min: 1 }, None,
        "(auto: the cores, at most 4)";
    /// The LLM fallback (also `SELFDEBUG_LLM=1`).
    LLM_ENABLED: bool = "llm.enabled", "--llm", Kind::Bool, false, "(none)";
    /// Model requests per run.
    LLM_MAX_CALLS: u32 = "llm.max-calls", "--llm-max-calls", Kind::Int32 { min: 0 },
        crate::llm::DEFAULT_MAX_CALLS, "(none)";
    /// `max_tokens` per request.
    LLM_MAX_TOKENS: u32 = "llm.max-tokens", "--llm-max-tokens", Kind::Int32 { min: 1 },
        crate::llm::DEFAULT_MAX_TOKENS, "(none)";
    /// The model's name (also `SELFDEBUG_LLM_MODEL`).
    LLM_MODEL: String = "llm.model", "--llm-model", Kind::Str,
        crate::llm::DEFAULT_MODEL.to_string(), "(none)";
    /// The API base (also `SELFDEBUG_LLM_URL`).
    LLM_URL: String = "llm.url", "--llm-url", Kind::Str, crate::llm::DEFAULT_URL.to_string(),
        "(none)";
    /// Candidates tried per failure at most.
    MAX_ATTEMPTS: u32 = "max-attempts", "--max-attempts", Kind::Int32 { min: 1 },
        DEFAULT_MAX_ATTEMPTS, "(none)";
    /// Runs of its failing tests a kept unsafe patch must pass in a row.
    PROOF_REPEATS: u32 = "proof-repeats", "--proof-repeats", Kind::Int32 { min: 1 },
        DEFAULT_PROOF_REPEATS, "(none)";
    /// The user's pytest arguments (after `--` on the command line).
    PYTEST_ARGS: Vec<String> = "pytest-args", "-- PYTEST_ARGS", Kind::Strings, Vec::new(),
        "(none)";
    /// The interpreter that runs pytest.
    PYTHON: Option<PathBuf> = "python", "--python", Kind::Python, None,
        "(auto: $VIRTUAL_ENV, .venv/, venv/, python3)";
    /// `--safe-only`: only rules with one right answer.
    SAFE_ONLY: bool = "safe-only", "--safe-only", Kind::Bool, false, "(none)";
    /// Every judge run under bubblewrap.
    SANDBOX: bool = "sandbox", "--sandbox", Kind::Bool, false, "(none)";
    /// Seconds of the search over small edits per wrong-output failure.
    SEARCH_TIME: u64 = "search-time", "--search-time", Kind::Int { min: 1 },
        DEFAULT_SEARCH_TIME.as_secs(), "(none)";
    /// The rules tried (default: all).
    SELECT: () = "select", "", Kind::Select, (), "(none)";
    /// Seconds one test may run.
    TEST_TIMEOUT: u64 = "test-timeout", "--test-timeout", Kind::Int { min: 1 },
        crate::runner::DEFAULT_TEST_TIMEOUT.as_secs(), "(none)";
    /// Seconds for the whole run.
    TIME_BUDGET: u64 = "time-budget", "--time-budget", Kind::Int { min: 1 },
        DEFAULT_TIME_BUDGET.as_secs(), "(none)";
    /// Seconds before a pytest run is killed.
    TIMEOUT: Option<u64> = "timeout", "--timeout", Kind::Int { min: 1 }, None,
        "(auto: 10x the baseline run, 30-600 s)";
    /// Whether pytest runs may go to the warm worker (also `SELFDEBUG_WORKER`).
    WORKER: Mode = "worker", "--worker", Kind::Worker, Mode::Auto, "(none)";
    /// Whether the full confirming run may use pytest-xdist.
    XDIST: bool = "xdist", "--no-xdist", Kind::Bool, true, "(none)";
}

/// The declaration of `key` (`max-attempts`, `llm.url`).
pub fn find(key: &str) -> Option<&'static Declared> {
    DECLARED.iter().find(|d| d.key == key)
}

/// The keys of the file's settings table, sorted: a key of its own, or a sub-table's name
/// (`llm` for `llm.url`). For "did you mean" and the docs.
pub fn keys() -> Vec<&'static str> {
    let mut keys: Vec<&str> = DECLARED
        .iter()
        .map(|d| d.key.split_once('.').map_or(d.key, |(table, _)| table))
        .collect();
    keys.dedup();
    keys
}

/// The keys of the sub-table `table` (`enabled`, ... of `llm`); empty: no such sub-table.
pub fn sub_keys(table: &str) -> Vec<&'static str> {
    DECLARED
        .iter()
        .filter_map(|d| d.key.split_once('.'))
        .filter(|(t, _)| *t == table)
        .map(|(_, k)| k)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_sorted_by_key_and_each_once() {
        let all: Vec<&str> = DECLARED.iter().map(|d| d.key).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(all, sorted);
        assert_eq!(keys().len(), 25);
        assert_eq!(
            sub_keys("llm"),
            ["enabled", "max-calls", "max-tokens", "model", "url"]
        );
    }

    /// A setting's kind reads the file's value into the variant its type takes back (else the
    /// file's value would be dropped for the default): checked on each default.
    #[test]
    fn each_kind_reads_what_its_type_takes() {
        for d in DECLARED {
            let agree = matches!(
                (d.kind, (d.default)()),
                (Kind::Bool, Raw::Bool(_))
                    | (Kind::Str, Raw::Str(_))
                    | (
                        Kind::Int { .. } | Kind::Int32 { .. },
                        Raw::Int(_) | Raw::Null
                    )
                    | (Kind::Path | Kind::Python, Raw::Null)
                    | (Kind::Strings, Raw::Strings(_))
                    | (Kind::Worker, Raw::Worker(_))
                    | (
                        Kind::Budget
                            | Kind::Select
                            | Kind::ExtendSelect
                            | Kind::Ignore
                            | Kind::Exclude,
                        Raw::Null
                    )
            );
            assert!(
                agree,
                "{}: {:?} does not read a {:?}",
                d.key,
                d.kind,
                (d.default)()
            );
        }
    }

    /// Every declared key has its line in the table of `docs/configuration.md` (its first
    /// column, `` `key` ``), and every line there a declaration: a new setting is one
    /// declaration above plus its docs line.
    #[test]
    fn every_setting_has_its_docs_line_and_every_docs_line_a_setting() {
        let docs = include_str!("../../docs/configuration.md");
        let documented: Vec<&str> = docs
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`'))
            .map(|(key, _)| key)
            .collect();
        let declared: Vec<&str> = DECLARED.iter().map(|d| d.key).collect();
        let undocumented: Vec<&&str> = declared
            .iter()
            .filter(|k| !documented.contains(k))
            .collect();
        let undeclared: Vec<&&str> = documented
            .iter()
            .filter(|k| !declared.contains(k))
            .collect();
        assert!(
            undocumented.is_empty(),
            "settings without a line in docs/configuration.md: {undocumented:?}"
        );
        assert!(
            undeclared.is_empty(),
            "lines of docs/configuration.md without a setting: {undeclared:?}"
        );
    }
}
