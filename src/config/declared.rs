//! Every setting, declared once (as ripgrep declares each flag once in its `defs.rs`): its key
//! (in the file and in `selfdebug config`), the flag that overrides the file, its type, how the
//! file's value is read and checked, its default, and what `selfdebug config` shows when it has
//! none. The file's reader ([`super::Config::load`]), the keys it accepts and suggests, the two
//! raw layers (the file's values and the command line's, [`Layer`]), the resolution into
//! [`super::Settings`] (each setting's field of [`Values`], which `Settings` derefs to) and
//! the rows of `selfdebug config` all derive from [`DECLARED`]; the typed constants
//! (`MAX_ATTEMPTS`, ...) are how code names one. A test checks that each
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

/// The heading of the `--llm*` flags in `fix --help`.
pub const LLM_HEADING: &str = "LLM fallback (off by default)";

/// A setting's flag as `--help` shows it and clap reads it: the command line builds the flag's
/// argument from this (`cli::given::args`), so a new setting with a flag is its declaration
/// alone. A flag's value is parsed by its [`Kind`] (`Bool`: a switch).
#[derive(Debug, Clone, Copy)]
pub struct Help {
    /// The flag (long name) this one follows in `fix --help`; a flag after a switch with a
    /// `--no-` twin follows the twin too.
    pub after: &'static str,
    /// The flag it follows in `probe --help`; `None`: `probe` does not take it.
    pub probe_after: Option<&'static str>,
    /// The value's name (`N`, `SECONDS`); empty for a switch.
    pub value_name: &'static str,
    /// The help, in one line (clap wraps it) and without a final period.
    pub text: &'static str,
    /// clap refuses a value below the kind's minimum; else the flag takes any whole number.
    pub checked: bool,
    /// A hidden `--no-FLAG` that gives the default back (it undoes the file's value).
    pub twin: bool,
    pub heading: Option<&'static str>,
}

impl Help {
    /// The common case, for `..Help::FIX`: a flag of `fix` only, unchecked, without a twin or
    /// a heading.
    pub const FIX: Help = Help {
        after: "",
        probe_after: None,
        value_name: "",
        text: "",
        checked: false,
        twin: false,
        heading: None,
    };
}

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
    /// A keep-alive: `"10m"`, `"90s"`, `"1h"`, `"off"` (read as whole seconds).
    KeepAlive,
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

/// Whole seconds (the file and the flags give a number of seconds).
impl Value for Duration {
    fn into_raw(self) -> Raw {
        Raw::Int(self.as_secs())
    }
    fn from_raw(raw: &Raw) -> Option<Self> {
        u64::from_raw(raw).map(Duration::from_secs)
    }
}

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
    /// The flag's help; `None` for a setting without a flag of its own.
    pub help: Option<Help>,
}

/// One setting, untyped: how the reader and `selfdebug config` go through them all.
#[derive(Clone, Copy)]
pub struct Declared {
    pub key: &'static str,
    pub flag: &'static str,
    pub kind: Kind,
    pub default: fn() -> Raw,
    pub unset: &'static str,
    pub help: Option<Help>,
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

/// One row per setting: `NAME: TYPE = "key", "flag", KIND, DEFAULT, "unset text", HELP;`
/// (HELP, a [`Help`], only for a setting with a flag of its own) gives the typed constant
/// `NAME` and its entry of [`DECLARED`].
macro_rules! settings {
    (@help) => { None };
    (@help $help:expr) => { Some($help) };
    ($( $(#[$doc:meta])* $name:ident $(($field:ident))?: $ty:ty = $key:literal, $flag:literal,
        $kind:expr, $default:expr, $unset:literal $(, $help:expr)?; )*) => {
        $( $(#[$doc])* pub const $name: Setting<$ty> = Setting {
            key: $key,
            flag: $flag,
            default: || $default,
            unset: $unset,
            help: settings!(@help $($help)?),
        }; )*

        pub const DECLARED: &[Declared] = &[$( Declared {
            key: $key,
            flag: $flag,
            kind: $kind,
            default: || Value::into_raw(($name.default)()),
            unset: $unset,
            help: $name.help,
        }, )*];

        /// Each declared setting's resolved value, one field per setting (named in its
        /// declaration): what the session reads ([`super::Settings`] derefs to it), so a new
        /// setting is its declaration alone. The settings read only into their own shapes
        /// (the budgets, the selection) and those resolved into another shape (`jobs`, the
        /// model's) have no field here. Each field's meaning is its constant's doc above.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Values {
            $($( pub $field: $ty, )?)*
        }

        impl Values {
            /// The values `layer` holds, each setting's default where it holds none.
            pub fn from_layer<S: Clone>(layer: &Layer<S>) -> Values {
                Values {
                    $($( $field: layer.get(&$name).map_or_else($name.default, |(v, _)| v), )?)*
                }
            }
        }
    };
}

settings! {
    /// `--all-or-nothing`: keep no fix unless every failure is fixed.
    ALL_OR_NOTHING (all_or_nothing): bool = "all-or-nothing", "--all-or-nothing", Kind::Bool, false, "(none)",
        Help {
            after: "jobs",
            twin: true,
            text: "Keep no fix unless every failure is fixed (`--no-all-or-nothing` undoes the file's)",
            ..Help::FIX
        };
    /// `--allow-tests`: fixes may edit test files.
    ALLOW_TESTS (allow_tests): bool = "allow-tests", "--allow-tests", Kind::Bool, false, "(none)",
        Help {
            after: "all-or-nothing",
            twin: true,
            text: "Let fixes edit test files (by default the tests are the specification; \
                `--no-allow-tests` undoes the file's `allow-tests = true`)",
            ..Help::FIX
        };
    /// One JSON line per attempt is appended here.
    AUDIT_LOG (audit_log): Option<PathBuf> = "audit-log", "--audit-log", Kind::Path, None, "(none)",
        Help {
            after: "budget",
            value_name: "FILE",
            text: "Append one JSON line per attempt to this file",
            ..Help::FIX
        };
    /// Where the original design's backup copies go.
    BACKUP_DIR (backup_dir): Option<PathBuf> = "backup-dir", "--backup-dir", Kind::Path, None, "(none)",
        Help {
            after: "json-file",
            value_name: "DIR",
            text: "Where the backup copies of patched files go, as \
                DIR/agent-self-debugger-loop/{basename}.{unix_ts}.bak (default DIR: {temp \
                dir}/selfdebug-{uid}, private to the user; one owned by someone else or a symlink is \
                refused). Only files that keep a change keep a copy",
            ..Help::FIX
        };
    /// Days after which backups of ended runs are pruned (0: never).
    BACKUP_MAX_AGE (backup_max_age_days): u64 = "backup-max-age", "--backup-max-age", Kind::Int { min: 0 },
        DEFAULT_BACKUP_MAX_AGE_DAYS, "(none)",
        Help {
            after: "backup-dir",
            value_name: "DAYS",
            text: "Backup copies older than DAYS (default 14), of runs that have ended, are removed \
                from the backup dir at the start of a run; 0 keeps them all (see docs/backups.md)",
            ..Help::FIX
        };
    /// Attempts per failure category; the defaults are [`crate::category::Budgets::default`]'s.
    BUDGET: () = "budget", "--budget", Kind::Budget, (), "(none)",
        Help {
            after: "allow-tests",
            value_name: "CATEGORY=N",
            text: "Attempts per failure category, e.g. `--budget logic=6` (defaults: environment 1, \
                dependency 2, data 2, syntax 3, logic 4, unknown 2; environment and dependency \
                failures are reported, never patched)",
            ..Help::FIX
        };
    /// Files never patched (nor probed).
    EXTEND_EXCLUDE: () = "extend-exclude", "", Kind::Exclude, (), "(none)";
    /// Rules added to `select`.
    EXTEND_SELECT: () = "extend-select", "", Kind::ExtendSelect, (), "(none)";
    /// Rules left out.
    IGNORE: () = "ignore", "", Kind::Ignore, (), "(none)";
    /// `--install-missing`: pip-install a missing third-party module once (`=DIST`: also this
    /// distribution outside the known table).
    INSTALL_MISSING (install_missing): bool = "install-missing", "--install-missing", Kind::Bool, false, "(none)",
        Help {
            after: "stderr-empty",
            value_name: "DIST",
            text: "Answer a ModuleNotFoundError for a module that is not in the project with `python -m \
                pip install DIST` into the project's interpreter (once per distribution), then run \
                again, and add DIST to the project's declared dependencies (pyproject.toml, Poetry, \
                requirements.txt) as part of the patch. Only distributions of the known table \
                (`yaml` → PyYAML, `requests`, ...) or named with `--install-missing=DIST` \
                (repeatable): an unknown import name is never looked up on the index. Never by \
                default. Not with --dry-run, which changes nothing",
            ..Help::FIX
        };
    /// Candidates proven at once (also `SELFDEBUG_JOBS`).
    JOBS: Option<u64> = "jobs", "--jobs", Kind::Int { min: 1 }, None,
        "(auto: the cores, at most 4)",
        Help {
            after: "proof-repeats",
            value_name: "N",
            checked: true,
            text: "Candidates proven at once, each in its own scratch copy of the project (default: the \
                number of cores, at most 4; also SELFDEBUG_JOBS): the search's, and a failure's rule \
                candidates after its first was rejected (their failing-test runs ahead); with cold \
                runs (no warm worker), a rule candidate's full run starts beside its failing-test \
                run. 1 proves one at a time in the project itself. The fix kept and the attempts are \
                the same either way",
            ..Help::FIX
        };
    /// The LLM fallback (also `SELFDEBUG_LLM=1`).
    LLM_ENABLED: bool = "llm.enabled", "--llm", Kind::Bool, false, "(none)",
        Help {
            after: "timeout",
            heading: Some(LLM_HEADING),
            text: "When the rules have nothing (left) for a failure, ask an OpenAI-compatible \
                chat-completions model for SEARCH/REPLACE edits; each is proven by pytest like a \
                rule's (`source: \"llm\"`, unsafe). Also on with SELFDEBUG_LLM=1. The key is read from \
                SELFDEBUG_LLM_API_KEY, else OPENAI_API_KEY (no key: no Authorization header)",
            ..Help::FIX
        };
    /// Model requests per run.
    LLM_MAX_CALLS: u32 = "llm.max-calls", "--llm-max-calls", Kind::Int32 { min: 0 },
        crate::llm::DEFAULT_MAX_CALLS, "(none)",
        Help {
            after: "llm-model",
            value_name: "N",
            heading: Some(LLM_HEADING),
            text: "Requests per run at most (default 6; answers from the cache are free)",
            ..Help::FIX
        };
    /// `max_tokens` per request.
    LLM_MAX_TOKENS: u32 = "llm.max-tokens", "--llm-max-tokens", Kind::Int32 { min: 1 },
        crate::llm::DEFAULT_MAX_TOKENS, "(none)",
        Help {
            after: "llm-max-calls",
            value_name: "N",
            checked: true,
            heading: Some(LLM_HEADING),
            text: "`max_tokens` of each request (default 2048)",
            ..Help::FIX
        };
    /// The model's name (also `SELFDEBUG_LLM_MODEL`).
    LLM_MODEL: String = "llm.model", "--llm-model", Kind::Str,
        crate::llm::DEFAULT_MODEL.to_string(), "(none)",
        Help {
            after: "llm-url",
            value_name: "NAME",
            heading: Some(LLM_HEADING),
            text: "Model name (env SELFDEBUG_LLM_MODEL; default gpt-4o-mini)",
            ..Help::FIX
        };
    /// The API base (also `SELFDEBUG_LLM_URL`).
    LLM_URL: String = "llm.url", "--llm-url", Kind::Str, crate::llm::DEFAULT_URL.to_string(),
        "(none)",
        Help {
            after: "llm",
            value_name: "BASE",
            heading: Some(LLM_HEADING),
            text: "API base: requests go to BASE/chat/completions (env SELFDEBUG_LLM_URL; default \
                https://api.openai.com/v1; e.g. http://127.0.0.1:11434/v1 for Ollama)",
            ..Help::FIX
        };
    /// Candidates tried per failure at most.
    MAX_ATTEMPTS (max_attempts): u32 = "max-attempts", "--max-attempts", Kind::Int32 { min: 1 },
        DEFAULT_MAX_ATTEMPTS, "(none)",
        Help {
            after: "module",
            value_name: "N",
            text: "Candidates to try per failure before giving up (default 4)",
            ..Help::FIX
        };
    /// Runs of its failing tests a kept unsafe patch must pass in a row.
    PROOF_REPEATS (proof_repeats): u32 = "proof-repeats", "--proof-repeats", Kind::Int32 { min: 1 },
        DEFAULT_PROOF_REPEATS, "(none)",
        Help {
            after: "search-time",
            value_name: "N",
            checked: true,
            text: "Runs of its failing tests a kept unsafe patch (search, guard, model) must pass in a \
                row, the proving run counted (default 3; 1 turns the repeats off); one miss rejects \
                it as a pass by chance. Safe patches are not repeated. See docs/proof.md",
            ..Help::FIX
        };
    /// The user's pytest arguments (after `--` on the command line).
    PYTEST_ARGS (pytest_args): Vec<String> = "pytest-args", "-- PYTEST_ARGS", Kind::Strings, Vec::new(),
        "(none)";
    /// The interpreter that runs pytest.
    PYTHON (python): Option<PathBuf> = "python", "--python", Kind::Python, None,
        "(auto: .venv/, venv/, $VIRTUAL_ENV, python3)",
        Help {
            after: "show-settings",
            probe_after: Some("output-format"),
            value_name: "PATH",
            text: "Interpreter to run pytest with. Default: the active virtualenv ($VIRTUAL_ENV) when \
                it lies inside the root, else `.venv/` or `venv/` under the root (an active one \
                outside the root gives way to it, and the notes say so; one that cannot run is an \
                error, never passed over), else $VIRTUAL_ENV, else `python3`. Inside selfdebug's \
                own virtualenv (a pre-commit hook's), that one is passed over, on PATH too",
            ..Help::FIX
        };
    /// `--safe-only`: only rules with one right answer.
    SAFE_ONLY (safe_only): bool = "safe-only", "--safe-only", Kind::Bool, false, "(none)",
        Help {
            after: "no-validate",
            twin: true,
            text: "Try only fixes of rules marked safe: one right answer that the failure itself names \
                (see `selfdebug rules`). By default every rule is tried and pytest decides; unsafe \
                patches say what a reviewer should check. `--no-safe-only` undoes `safe-only = true` \
                of the configuration file",
            ..Help::FIX
        };
    /// Every judge run under bubblewrap.
    SANDBOX (sandbox_asked): bool = "sandbox", "--sandbox", Kind::Bool, false, "(none)",
        Help {
            after: "install-missing",
            text: "Run every judge run (pytest or --cmd) under bubblewrap (`bwrap`): no network, the \
                file system read-only except the workspace and the temp dir. Exit 6 when bwrap is \
                missing or cannot run here",
            ..Help::FIX
        };
    /// Seconds of the search over small edits per wrong-output failure.
    SEARCH_TIME (search_time): Duration = "search-time", "--search-time", Kind::Int { min: 1 },
        DEFAULT_SEARCH_TIME, "(none)",
        Help {
            after: "time-budget",
            value_name: "SECONDS",
            checked: true,
            text: "Seconds the search over small edits may spend on one wrong-output failure (default \
                60; see \"Wrong output\" in docs/usage.md). Within --time-budget",
            ..Help::FIX
        };
    /// The rules tried (default: all).
    SELECT: () = "select", "", Kind::Select, (), "(none)";
    /// Seconds one test may run.
    TEST_TIMEOUT (test_timeout): Duration = "test-timeout", "--test-timeout", Kind::Int { min: 1 },
        crate::runner::DEFAULT_TEST_TIMEOUT, "(none)",
        Help {
            after: "unsafe-fixes",
            value_name: "SECONDS",
            checked: true,
            text: "Seconds one test may run (default 60). A test still running then fails where it is \
                stuck (category `timeout`, reported with that frame, never patched) and the rest of \
                the run goes on; a candidate that makes a test hang is rejected at this limit. With \
                --cmd (and no --timeout): the limit of each run of the command, which is one \"test\"",
            ..Help::FIX
        };
    /// Seconds for the whole run.
    TIME_BUDGET (time_budget): Duration = "time-budget", "--time-budget", Kind::Int { min: 1 },
        DEFAULT_TIME_BUDGET, "(none)",
        Help {
            after: "test-timeout",
            value_name: "SECONDS",
            checked: true,
            text: "Seconds for the whole run (default 900). When too little is left for another \
                candidate, proven fixes are kept, the rest is restored, and the report says `time \
                budget used up`",
            ..Help::FIX
        };
    /// Seconds before a pytest run is killed.
    TIMEOUT (timeout): Option<Duration> = "timeout", "--timeout", Kind::Int { min: 1 }, None,
        "(auto: 10x the baseline run, 30-600 s)",
        Help {
            after: "python",
            probe_after: Some("python"),
            value_name: "SECONDS",
            checked: true,
            text: "Seconds before a pytest run is killed (with its whole process group). With --cmd: \
                the limit of every run of the command (default: --test-timeout)",
            ..Help::FIX
        };
    /// Whether pytest runs may go to the warm worker (also `SELFDEBUG_WORKER`).
    WORKER (worker): Mode = "worker", "--worker", Kind::Worker, Mode::Auto, "(none)",
        Help {
            after: "sandbox",
            value_name: "auto|off",
            text: "`auto` (the default): pytest runs are children of a warm worker that imported pytest \
                and its plugins once, cold processes where it cannot serve (said in the report); \
                `off`: every run is a cold process. Also SELFDEBUG_WORKER=auto|off",
            ..Help::FIX
        };
    /// How long a warm worker stays alive for later runs after its last (also
    /// `SELFDEBUG_WORKER_KEEPALIVE`); zero: it ends with the process.
    WORKER_KEEPALIVE (worker_keepalive): Duration = "worker-keepalive", "--worker-keepalive",
        Kind::KeepAlive, Duration::ZERO, "(none)",
        Help {
            after: "worker",
            value_name: "DURATION",
            text: "Keep the warm worker alive for DURATION (`10m`, `90s`, `1h`) after its last run, \
                for later selfdebug calls on the same project and interpreter (default `off`: it \
                ends with the run; `selfdebug mcp`'s calls use `10m`). See docs/worker.md. Also \
                SELFDEBUG_WORKER_KEEPALIVE",
            ..Help::FIX
        };
    /// Whether the full confirming run may use pytest-xdist.
    XDIST (xdist): bool = "xdist", "--no-xdist", Kind::Bool, true, "(none)",
        Help {
            after: "worker-keepalive",
            text: "Never add `-n N` (pytest-xdist) to the full confirming run. By default it is added \
                when the project's interpreter has xdist, the baseline took 10 s or more, and the \
                pytest arguments say nothing about xdist",
            ..Help::FIX
        };
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
        assert_eq!(keys().len(), 26);
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
                    | (Kind::KeepAlive, Raw::Int(_))
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
