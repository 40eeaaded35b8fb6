//! The settings of a run, in two layers (as ripgrep's low and high arguments). The raw layer is
//! what the command line said ([`Flags`], an `Option` per flag) and what the configuration file
//! said ([`super::Config`]); [`Settings::resolve`] merges them, a flag over the file over the
//! default, into the one value the session reads, each with where it came from
//! (`selfdebug config`, `fix --show-settings`). Every setting's key, flag and default is
//! declared once, as a [`Setting`] below.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::{At, Config, ConfigError, ConfigFile, LlmConfig, Pattern, RuleSelection};
use crate::category::Budgets;
use crate::command::CommandJudge;
use crate::project::ProjectRoot;
use crate::rules::{Category, RuleSet};
use crate::sandbox::Sandbox;
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

/// The default of `--jobs`: the number of cores, capped at [`MAX_DEFAULT_JOBS`].
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_DEFAULT_JOBS)
}

/// One setting as each side names it: its key (in the file and in `selfdebug config`), the
/// flag that overrides the file, and its default.
pub struct Setting<T> {
    pub key: &'static str,
    pub flag: &'static str,
    pub default: T,
    /// What `selfdebug config` shows when a setting without a default is unset.
    pub unset: &'static str,
}

const fn setting<T>(key: &'static str, flag: &'static str, default: T) -> Setting<T> {
    Setting {
        key,
        flag,
        default,
        unset: "(none)",
    }
}

// Sorted by key, as `selfdebug config` lists them.
pub const ALL_OR_NOTHING: Setting<bool> = setting("all-or-nothing", "--all-or-nothing", false);
pub const ALLOW_TESTS: Setting<bool> = setting("allow-tests", "--allow-tests", false);
pub const AUDIT_LOG: Setting<Option<PathBuf>> = setting("audit-log", "--audit-log", None);
pub const BACKUP_DIR: Setting<Option<PathBuf>> = setting("backup-dir", "--backup-dir", None);
pub const BACKUP_MAX_AGE: Setting<u64> = setting(
    "backup-max-age",
    "--backup-max-age",
    DEFAULT_BACKUP_MAX_AGE_DAYS,
);
/// One line per category (`budget.logic`); the defaults are [`Budgets::default`]'s.
pub const BUDGET: Setting<()> = setting("budget", "--budget", ());
pub const INSTALL_MISSING: Setting<bool> = setting("install-missing", "--install-missing", false);
pub const JOBS: Setting<Option<u64>> = Setting {
    unset: "(auto: the cores, at most 4)",
    ..setting("jobs", "--jobs", None)
};
pub const LLM_ENABLED: Setting<bool> = setting("llm.enabled", "--llm", false);
pub const LLM_MAX_CALLS: Setting<u32> = setting(
    "llm.max-calls",
    "--llm-max-calls",
    crate::llm::DEFAULT_MAX_CALLS,
);
pub const LLM_MAX_TOKENS: Setting<u32> = setting(
    "llm.max-tokens",
    "--llm-max-tokens",
    crate::llm::DEFAULT_MAX_TOKENS,
);
pub const LLM_MODEL: Setting<&str> = setting("llm.model", "--llm-model", crate::llm::DEFAULT_MODEL);
pub const LLM_URL: Setting<&str> = setting("llm.url", "--llm-url", crate::llm::DEFAULT_URL);
pub const MAX_ATTEMPTS: Setting<u32> =
    setting("max-attempts", "--max-attempts", DEFAULT_MAX_ATTEMPTS);
pub const PROOF_REPEATS: Setting<u32> =
    setting("proof-repeats", "--proof-repeats", DEFAULT_PROOF_REPEATS);
pub const PYTEST_ARGS: Setting<Vec<String>> = setting("pytest-args", "-- PYTEST_ARGS", Vec::new());
pub const PYTHON: Setting<Option<PathBuf>> = Setting {
    key: "python",
    flag: "--python",
    default: None,
    unset: "(auto: $VIRTUAL_ENV, .venv/, venv/, python3)",
};
pub const SAFE_ONLY: Setting<bool> = setting("safe-only", "--safe-only", false);
pub const SANDBOX: Setting<bool> = setting("sandbox", "--sandbox", false);
pub const SEARCH_TIME: Setting<u64> = setting(
    "search-time",
    "--search-time",
    DEFAULT_SEARCH_TIME.as_secs(),
);
pub const TEST_TIMEOUT: Setting<u64> = setting(
    "test-timeout",
    "--test-timeout",
    crate::runner::DEFAULT_TEST_TIMEOUT.as_secs(),
);
pub const TIME_BUDGET: Setting<u64> = setting(
    "time-budget",
    "--time-budget",
    DEFAULT_TIME_BUDGET.as_secs(),
);
pub const TIMEOUT: Setting<Option<u64>> = Setting {
    unset: "(auto: 10x the baseline run, 30-600 s)",
    ..setting("timeout", "--timeout", None)
};
pub const WORKER: Setting<Mode> = setting("worker", "--worker", Mode::Auto);
pub const XDIST: Setting<bool> = setting("xdist", "--no-xdist", true);

/// The file's rule selection names rules that exist (a `file:line` error otherwise).
fn check_selection(config: &Config, rules: &RuleSet) -> Result<(), SettingsError> {
    if let Some(file) = &config.file {
        config.selection.check(rules).map_err(|(line, problem)| {
            SettingsError::Config(ConfigError {
                file: super::shown_path(&file.path),
                line: Some(line),
                problem,
            })
        })?;
    }
    Ok(())
}

/// What the command line said (and the `SELFDEBUG_*` variables that stand for flags); `None`:
/// not given, the file or the default decides.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--module`: only this failing test.
    pub test: Option<String>,
    pub dry_run: bool,
    /// `--no-validate` (a dry run that proves nothing).
    pub no_validate: bool,
    pub max_attempts: Option<u32>,
    /// `CATEGORY=N` specs, applied over the file's budgets.
    pub budget: Vec<String>,
    pub timeout: Option<u64>,
    pub test_timeout: Option<u64>,
    pub time_budget: Option<u64>,
    pub search_time: Option<u64>,
    pub proof_repeats: Option<u32>,
    pub backup_max_age: Option<u64>,
    /// `--jobs`, else `SELFDEBUG_JOBS`, with the name that said it.
    pub jobs: Option<(u64, &'static str)>,
    /// After `--` (already rebased onto the root); `None` when nothing followed `--`.
    pub pytest_args: Option<Vec<String>>,
    pub python: Option<PathBuf>,
    pub safe_only: Option<bool>,
    pub allow_tests: Option<bool>,
    pub all_or_nothing: Option<bool>,
    pub backup_dir: Option<PathBuf>,
    pub audit_log: Option<PathBuf>,
    pub sandbox: Option<bool>,
    pub install_missing: Option<bool>,
    /// `--worker`, else `SELFDEBUG_WORKER`.
    pub worker: Option<(Mode, &'static str)>,
    /// `--no-xdist` (`Some(false)`).
    pub xdist: Option<bool>,
    /// `--llm` or `SELFDEBUG_LLM=1`, with the name that said it.
    pub llm: Option<(bool, &'static str)>,
    /// `--llm-url`, else `SELFDEBUG_LLM_URL` (with the name that said it); likewise the model.
    pub llm_url: Option<(String, &'static str)>,
    pub llm_model: Option<(String, &'static str)>,
    pub llm_max_calls: Option<u32>,
    pub llm_max_tokens: Option<u32>,
    /// `--llm-no-cache` (`Some(false)`).
    pub llm_cache: Option<bool>,
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// The configuration file, at this line.
    File(usize),
    /// This flag (`--max-attempts`).
    Flag(&'static str),
}

/// One line of `selfdebug config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub key: String,
    /// `null`: not set, the tool decides (an auto-detected interpreter, a derived timeout).
    pub value: Value,
    pub source: Source,
    /// What a `null` value means, as shown to a person.
    pub unset: &'static str,
}

/// The values a run uses: the session reads them (as `session::Options`), `selfdebug config`
/// lists them with their sources.
#[derive(Debug, Clone)]
pub struct Settings {
    pub root: ProjectRoot,
    /// A pytest log to work from; without it the baseline run's failures are used. Read by the
    /// command after its other checks.
    pub log: Option<Vec<u8>>,
    /// Only this failing test.
    pub test: Option<String>,
    /// Candidates tried per failure at most (each category's budget may lower it).
    pub max_attempts: u32,
    pub budgets: Budgets,
    /// Prove candidates with pytest (false: `--no-validate`, dry run only).
    pub validate: bool,
    pub dry_run: bool,
    /// Try only rules marked safe (`--safe-only`); by default every rule is tried and pytest
    /// decides.
    pub safe_only: bool,
    pub all_or_nothing: bool,
    pub allow_tests: bool,
    pub python: Option<PathBuf>,
    /// Per-run timeout; `None`: derived from the baseline.
    pub timeout: Option<Duration>,
    /// Per-test limit (selfdebug's pytest plugin): a test still running then fails where it is
    /// stuck, with category `timeout`, and the rest of the run goes on.
    pub test_timeout: Duration,
    /// The user's pytest arguments: as merged, then (before the session runs) as
    /// [`crate::pytest_args::check`] leaves them.
    pub pytest_args: Vec<String>,
    /// Where the original design's backup copies go (default: `{temp dir}/selfdebug-{uid}`).
    pub backup_dir: Option<PathBuf>,
    /// Backups of ended runs older than this many days are pruned at the start of a run
    /// (`--backup-max-age`; 0: never).
    pub backup_max_age_days: u64,
    /// Wall time for the whole run: no candidate is started that cannot finish within it.
    pub time_budget: Duration,
    /// Wall time of the search over small edits, per wrong-output failure (`--search-time`).
    pub search_time: Duration,
    /// Runs of its failing tests a kept unsafe patch must pass in a row, the proving run
    /// counted (`--proof-repeats`, at least 1).
    pub proof_repeats: u32,
    /// Candidates proven at once, each in its own scratch copy (`--jobs`; 1: one at a time,
    /// in the workspace; default: the cores, at most [`MAX_DEFAULT_JOBS`]).
    pub jobs: usize,
    /// Said to the user in the report (pytest arguments set aside, ...).
    pub notes: Vec<String>,
    /// `--cmd`: this command is the judge instead of pytest (see [`crate::command`]).
    pub judge: Option<CommandJudge>,
    /// Every judge run under bubblewrap (see [`crate::sandbox`]): found by the command when
    /// [`Self::sandbox_asked`], after its other checks.
    pub sandbox: Option<Sandbox>,
    /// `--worker`: whether pytest runs may go to the warm worker ([`crate::worker`]).
    pub worker: Mode,
    /// `--no-xdist` off: the full confirming run may use pytest-xdist ([`crate::xdist`]).
    pub xdist: bool,
    /// `--install-missing`: a missing third-party module is installed once with pip.
    pub install_missing: bool,
    /// The configured rule selection (`select`/`ignore`): rules it leaves out propose nothing.
    pub selection: RuleSelection,
    /// `extend-exclude`: files never patched (nor probed); their candidates are dropped unrun.
    pub exclude: Vec<Pattern>,
    /// The model fallback (`--llm`): off (none) unless the user asks.
    pub llm: Option<crate::llm::LlmConfig>,
    /// `--sandbox` or `sandbox = true`.
    pub sandbox_asked: bool,
    /// One JSON line per attempt is appended here.
    pub audit_log: Option<PathBuf>,
    /// The configuration file in force, and the weaker ones it shadows.
    pub file: Option<ConfigFile>,
    pub shadowed: Vec<&'static str>,
    /// Every setting in `selfdebug config`'s order (sorted by key).
    pub shown: Vec<Shown>,
    /// The ids of the rules (built in and the project's) that the selection turns off.
    pub rules_off: Vec<String>,
}

struct Merge {
    shown: Vec<Shown>,
}

impl Merge {
    /// Flag, else file, else default; recorded for display as JSON.
    fn merge<T: Clone + serde::Serialize>(
        &mut self,
        (key, unset): (&str, &'static str),
        flag: Option<(T, &'static str)>,
        file: Option<&At<T>>,
        default: T,
    ) -> T {
        let (value, source) = match (flag, file) {
            (Some((v, name)), _) => (v, Source::Flag(name)),
            (None, Some(at)) => (at.value.clone(), Source::File(at.line)),
            (None, None) => (default, Source::Default),
        };
        self.shown.push(Shown {
            key: key.to_string(),
            value: json!(value),
            source,
            unset,
        });
        value
    }

    /// A setting only its own flag can give.
    fn pick<T, D>(&mut self, s: &Setting<D>, flag: Option<T>, file: Option<&At<T>>) -> T
    where
        T: Clone + serde::Serialize,
        D: Clone + Into<T>,
    {
        self.pick_named(s, flag.map(|v| (v, s.flag)), file)
    }

    /// A setting that a variable can give too: the value comes with the name that said it.
    fn pick_named<T, D>(
        &mut self,
        s: &Setting<D>,
        flag: Option<(T, &'static str)>,
        file: Option<&At<T>>,
    ) -> T
    where
        T: Clone + serde::Serialize,
        D: Clone + Into<T>,
    {
        self.merge((s.key, s.unset), flag, file, s.default.clone().into())
    }

    /// A setting without a default (`null` when neither the flag nor the file sets it).
    fn pick_opt<T: Clone + serde::Serialize, D>(
        &mut self,
        s: &Setting<D>,
        flag: Option<(T, &'static str)>,
        file: Option<&At<T>>,
    ) -> Option<T> {
        let file = file.map(|a| At {
            value: Some(a.value.clone()),
            line: a.line,
        });
        self.merge(
            (s.key, s.unset),
            flag.map(|(v, name)| (Some(v), name)),
            file.as_ref(),
            None,
        )
    }

    /// An optional path, shown lossily (a path need not be UTF-8).
    fn pick_path(
        &mut self,
        s: &Setting<Option<PathBuf>>,
        flag: Option<PathBuf>,
        file: Option<&At<PathBuf>>,
    ) -> Option<PathBuf> {
        let shown = |p: &PathBuf| p.to_string_lossy().into_owned();
        let at = file.map(|a| At {
            value: shown(&a.value),
            line: a.line,
        });
        self.pick_opt(s, flag.as_ref().map(|p| (shown(p), s.flag)), at.as_ref());
        flag.or_else(|| file.map(|a| a.value.clone()))
    }

    fn file_only(&mut self, key: &str, value: Value, line: Option<usize>) {
        self.shown.push(Shown {
            key: key.to_string(),
            value,
            source: line.map_or(Source::Default, Source::File),
            unset: "(none)",
        });
    }
}

impl Settings {
    /// Merges `flags` over `config` for the project at `root`. `rules` (built in and the
    /// project's own, before the selection) checks that every rule selector names a rule. A bad
    /// `--budget` spec is an `Err` of the flag's own. What the command finds out after its
    /// other checks (the log, the judge, bwrap, the checked pytest arguments and their notes)
    /// is left empty here.
    pub fn resolve(
        root: &ProjectRoot,
        config: &Config,
        flags: &Flags,
        rules: &RuleSet,
    ) -> Result<Settings, SettingsError> {
        check_selection(config, rules)?;
        let mut m = Merge { shown: Vec::new() };
        // In `selfdebug config`'s order: sorted by key.
        let all_or_nothing = m.pick(
            &ALL_OR_NOTHING,
            flags.all_or_nothing,
            config.all_or_nothing.as_ref(),
        );
        let allow_tests = m.pick(&ALLOW_TESTS, flags.allow_tests, config.allow_tests.as_ref());
        let audit_log = m.pick_path(
            &AUDIT_LOG,
            flags.audit_log.clone(),
            config.audit_log.as_ref(),
        );
        let backup_dir = m.pick_path(
            &BACKUP_DIR,
            flags.backup_dir.clone(),
            config.backup_dir.as_ref(),
        );
        let backup_max_age_days = m.pick(
            &BACKUP_MAX_AGE,
            flags.backup_max_age,
            config.backup_max_age.as_ref(),
        );
        let budgets = resolve_budgets(&mut m, config, flags)?;
        m.file_only(
            "extend-exclude",
            json!(config
                .extend_exclude
                .iter()
                .map(|p| p.value.text.clone())
                .collect::<Vec<_>>()),
            config.extend_exclude.first().map(|p| p.line),
        );
        let sel = &config.selection;
        let texts = |list: &[super::Selector]| -> Value {
            json!(list.iter().map(|s| s.text.clone()).collect::<Vec<_>>())
        };
        m.file_only(
            "extend-select",
            texts(&sel.extend_select),
            sel.extend_select.first().map(|s| s.line),
        );
        m.file_only(
            "ignore",
            texts(&sel.ignore),
            sel.ignore.first().map(|s| s.line),
        );
        let install_missing = m.pick(
            &INSTALL_MISSING,
            flags.install_missing,
            config.install_missing.as_ref(),
        );
        let jobs = m.pick_opt(&JOBS, flags.jobs, config.jobs.as_ref());
        let llm = resolve_llm(&mut m, &config.llm, flags);
        let max_attempts = m.pick(
            &MAX_ATTEMPTS,
            flags.max_attempts,
            config.max_attempts.as_ref(),
        );
        let proof_repeats = m.pick(
            &PROOF_REPEATS,
            flags.proof_repeats,
            config.proof_repeats.as_ref(),
        );
        let pytest_args = m.pick(
            &PYTEST_ARGS,
            flags.pytest_args.clone(),
            config.pytest_args.as_ref(),
        );
        let python = m.pick_path(&PYTHON, flags.python.clone(), config.python.as_ref());
        let safe_only = m.pick(&SAFE_ONLY, flags.safe_only, config.safe_only.as_ref());
        let sandbox_asked = m.pick(&SANDBOX, flags.sandbox, config.sandbox.as_ref());
        let search_time = m.pick(&SEARCH_TIME, flags.search_time, config.search_time.as_ref());
        m.file_only(
            "select",
            sel.select.as_deref().map_or(json!(["ALL"]), texts),
            sel.select.as_ref().and_then(|s| s.first()).map(|s| s.line),
        );
        let test_timeout = m.pick(
            &TEST_TIMEOUT,
            flags.test_timeout,
            config.test_timeout.as_ref(),
        );
        let time_budget = m.pick(&TIME_BUDGET, flags.time_budget, config.time_budget.as_ref());
        let timeout = m.pick_opt(
            &TIMEOUT,
            flags.timeout.map(|t| (t, TIMEOUT.flag)),
            config.timeout.as_ref(),
        );
        let worker = m.pick_named(&WORKER, flags.worker, config.worker.as_ref());
        let xdist = m.pick(&XDIST, flags.xdist, config.xdist.as_ref());
        Ok(Settings {
            root: root.clone(),
            log: None,
            test: flags.test.clone(),
            max_attempts,
            budgets,
            validate: !flags.no_validate,
            dry_run: flags.dry_run || flags.no_validate,
            safe_only,
            all_or_nothing,
            allow_tests,
            python,
            timeout: timeout.map(Duration::from_secs),
            test_timeout: Duration::from_secs(test_timeout),
            pytest_args,
            backup_dir,
            backup_max_age_days,
            time_budget: Duration::from_secs(time_budget),
            search_time: Duration::from_secs(search_time),
            proof_repeats: proof_repeats.max(1),
            jobs: jobs.map_or_else(default_jobs, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            notes: Vec::new(),
            judge: None,
            sandbox: None,
            worker,
            xdist,
            install_missing,
            selection: config.selection.clone(),
            exclude: config
                .extend_exclude
                .iter()
                .map(|p| p.value.clone())
                .collect(),
            llm,
            sandbox_asked,
            audit_log,
            file: config.file.clone(),
            shadowed: config.shadowed.clone(),
            shown: m.shown,
            rules_off: rules
                .rules()
                .iter()
                .map(|r| r.id.clone())
                .chain(crate::search::rule_ids())
                .filter(|id| !config.selection.enabled(id))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
        })
    }
}

/// Why the settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A problem in the configuration file (one line, with the file and line).
    #[error(transparent)]
    Config(ConfigError),
    /// A bad flag value (`--budget x=1`).
    #[error("{0}")]
    Flag(String),
}

/// Whether `rel` (relative to the root, `/`-separated) is never to be patched, and by which
/// pattern.
pub fn excluded_by<'a>(patterns: &'a [Pattern], rel: &str) -> Option<&'a Pattern> {
    patterns.iter().find(|p| p.matches(rel))
}

/// Each category on its own: the default, then the file, then `--budget`.
fn resolve_budgets(
    m: &mut Merge,
    config: &Config,
    flags: &Flags,
) -> Result<Budgets, SettingsError> {
    let mut budgets = Budgets::default();
    let mut from_flag = Budgets(Default::default());
    for spec in &flags.budget {
        from_flag.set(spec).map_err(SettingsError::Flag)?;
    }
    for cat in Category::ALL {
        let value = m.merge(
            (&format!("{}.{}", BUDGET.key, cat.as_str()), BUDGET.unset),
            from_flag.0.get(&cat).map(|&n| (n, BUDGET.flag)),
            config.budget.get(&cat),
            budgets.get(cat),
        );
        budgets.0.insert(cat, value);
    }
    Ok(budgets)
}

/// `[tool.selfdebug.llm]` under the flags and the `SELFDEBUG_LLM*` variables; the client's
/// configuration (with the key, only ever read from the environment) when the fallback is on.
fn resolve_llm(m: &mut Merge, file: &LlmConfig, flags: &Flags) -> Option<crate::llm::LlmConfig> {
    let enabled = m.pick_named(&LLM_ENABLED, flags.llm, file.enabled.as_ref());
    let max_calls = m.pick(&LLM_MAX_CALLS, flags.llm_max_calls, file.max_calls.as_ref());
    let max_tokens = m.pick(
        &LLM_MAX_TOKENS,
        flags.llm_max_tokens,
        file.max_tokens.as_ref(),
    );
    let model = m.pick_named(&LLM_MODEL, flags.llm_model.clone(), file.model.as_ref());
    let url = m.pick_named(&LLM_URL, flags.llm_url.clone(), file.url.as_ref());
    enabled.then(|| {
        let mut c = crate::llm::LlmConfig::from_env(Some(url), Some(model));
        c.max_calls = max_calls;
        c.max_tokens = max_tokens;
        c.cache = flags.llm_cache.unwrap_or(true);
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(file: Option<&str>, flags: &Flags) -> Settings {
        let d = tempfile::tempdir().unwrap();
        if let Some(text) = file {
            std::fs::write(d.path().join("selfdebug.toml"), text).unwrap();
        }
        let root = ProjectRoot::find(Some(d.path())).unwrap();
        let config = Config::load(root.path()).unwrap();
        let rules = RuleSet::builtin().unwrap();
        Settings::resolve(&root, &config, flags, &rules).unwrap()
    }

    fn shown<'a>(s: &'a Settings, key: &str) -> &'a Shown {
        s.shown.iter().find(|r| r.key == key).unwrap()
    }

    /// The file's keys (what the reader accepts) and the keys `selfdebug config` lists are
    /// the same set, in the same order.
    #[test]
    fn every_file_key_is_listed_in_order() {
        let s = resolve(None, &Flags::default());
        let mut top: Vec<&str> = s
            .shown
            .iter()
            .map(|r| r.key.split('.').next().unwrap())
            .collect();
        top.dedup();
        assert_eq!(top, super::super::KEYS);
        let llm: Vec<&str> = s
            .shown
            .iter()
            .filter_map(|r| r.key.strip_prefix("llm."))
            .collect();
        assert_eq!(llm, super::super::LLM_KEYS);
    }

    #[test]
    fn defaults_live_here() {
        let s = resolve(None, &Flags::default());
        assert_eq!(s.max_attempts, DEFAULT_MAX_ATTEMPTS);
        assert_eq!(s.time_budget, DEFAULT_TIME_BUDGET);
        assert_eq!(s.search_time, DEFAULT_SEARCH_TIME);
        assert_eq!(s.test_timeout, crate::runner::DEFAULT_TEST_TIMEOUT);
        assert_eq!(s.jobs, default_jobs());
        assert!((1..=MAX_DEFAULT_JOBS).contains(&s.jobs));
        assert_eq!(s.budgets, Budgets::default());
        assert_eq!(s.timeout, None);
        assert!(s.validate && !s.dry_run && !s.sandbox_asked && s.llm.is_none());
        assert_eq!(shown(&s, "jobs").value, Value::Null);
        assert_eq!(shown(&s, "jobs").unset, JOBS.unset);
        assert_eq!(shown(&s, "search-time").source, Source::Default);
    }

    #[test]
    fn a_flag_over_the_file_over_the_default() {
        let file =
            "search-time = 7\njobs = 2\nsandbox = true\n[llm]\nenabled = true\nmax-calls = 3\n";
        let s = resolve(Some(file), &Flags::default());
        assert_eq!(s.search_time, Duration::from_secs(7));
        assert_eq!(shown(&s, "search-time").source, Source::File(1));
        assert_eq!(s.jobs, 2);
        assert!(s.sandbox_asked && s.sandbox.is_none());
        assert_eq!(
            s.llm.as_ref().map(|c| (c.max_calls, c.cache)),
            Some((3, true))
        );
        let flags = Flags {
            search_time: Some(9),
            jobs: Some((5, "SELFDEBUG_JOBS")),
            no_validate: true,
            llm_cache: Some(false),
            budget: vec!["logic=7".into()],
            ..Flags::default()
        };
        let s = resolve(Some(file), &flags);
        assert_eq!(s.search_time, Duration::from_secs(9));
        assert_eq!(
            shown(&s, "search-time").source,
            Source::Flag(SEARCH_TIME.flag)
        );
        assert_eq!(s.jobs, 5);
        assert_eq!(shown(&s, "jobs").source, Source::Flag("SELFDEBUG_JOBS"));
        assert!(s.dry_run && !s.validate);
        assert!(!s.llm.as_ref().unwrap().cache);
        assert_eq!(s.budgets.get(Category::Logic), 7);
        assert_eq!(shown(&s, "budget.logic").source, Source::Flag("--budget"));
    }
}
