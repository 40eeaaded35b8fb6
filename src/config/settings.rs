//! The effective settings of a run: a command-line flag, else the configuration file, else the
//! default; each with where it came from (`selfdebug config`, `fix --show-settings`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::{At, Config, ConfigError, ConfigFile, LlmConfig, Pattern, RuleSelection};
use crate::category::Budgets;
use crate::rules::{Category, RuleSet};

/// What the command line said; `None`: the flag was not given.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    pub max_attempts: Option<u32>,
    /// `CATEGORY=N` specs, applied over the file's budgets.
    pub budget: Vec<String>,
    pub timeout: Option<u64>,
    pub test_timeout: Option<u64>,
    pub time_budget: Option<u64>,
    pub search_time: Option<u64>,
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
    pub worker: Option<(crate::worker::Mode, &'static str)>,
    /// `--no-xdist` (`Some(false)`).
    pub xdist: Option<bool>,
    /// `--llm` or `SELFDEBUG_LLM=1`, with the name that said it.
    pub llm: Option<(bool, &'static str)>,
    /// `--llm-url`, else `SELFDEBUG_LLM_URL` (with the name that said it); likewise the model.
    pub llm_url: Option<(String, &'static str)>,
    pub llm_model: Option<(String, &'static str)>,
    pub llm_max_calls: Option<u32>,
    pub llm_max_tokens: Option<u32>,
}

/// The LLM fallback's settings after the merge (the key is only ever read from the
/// environment, by [`crate::llm::LlmConfig::from_env`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmSettings {
    pub enabled: bool,
    pub url: String,
    pub model: String,
    pub max_calls: u32,
    pub max_tokens: u32,
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
}

/// The values a run uses.
#[derive(Debug, Clone)]
pub struct Settings {
    pub file: Option<ConfigFile>,
    pub shadowed: Vec<&'static str>,
    pub max_attempts: u32,
    pub budgets: Budgets,
    /// `None`: derived from the baseline run.
    pub timeout: Option<Duration>,
    pub test_timeout: Duration,
    pub time_budget: Duration,
    /// Per wrong-output failure, for the search over small edits.
    pub search_time: Duration,
    /// Candidates proven at once (`--jobs`; default: the cores, at most 4).
    pub jobs: usize,
    /// Not yet checked by [`crate::pytest_args::check`].
    pub pytest_args: Vec<String>,
    pub python: Option<PathBuf>,
    pub safe_only: bool,
    pub allow_tests: bool,
    pub all_or_nothing: bool,
    pub backup_dir: Option<PathBuf>,
    pub audit_log: Option<PathBuf>,
    pub selection: RuleSelection,
    pub exclude: Vec<Pattern>,
    pub sandbox: bool,
    pub install_missing: bool,
    pub worker: crate::worker::Mode,
    pub xdist: bool,
    pub llm: LlmSettings,
    /// Every setting in `selfdebug config`'s order (sorted by key).
    pub shown: Vec<Shown>,
    /// The ids of the rules (built in and the project's) that the selection turns off.
    pub rules_off: Vec<String>,
}

/// The default of `--max-attempts` (the original design's).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;

struct Merge {
    shown: Vec<Shown>,
}

impl Merge {
    /// Flag, else file, else default; recorded for display as JSON.
    fn pick<T: Clone + serde::Serialize>(
        &mut self,
        key: &str,
        flag: (&'static str, Option<T>),
        file: Option<&At<T>>,
        default: T,
    ) -> T {
        let (value, source) = match (flag.1, file) {
            (Some(v), _) => (v, Source::Flag(flag.0)),
            (None, Some(at)) => (at.value.clone(), Source::File(at.line)),
            (None, None) => (default, Source::Default),
        };
        self.shown.push(Shown {
            key: key.to_string(),
            value: json!(value),
            source,
        });
        value
    }

    /// A setting without a default (`null` when neither the flag nor the file sets it).
    fn pick_opt<T: Clone + serde::Serialize>(
        &mut self,
        key: &str,
        flag: (&'static str, Option<T>),
        file: Option<&At<T>>,
    ) -> Option<T> {
        let file = file.map(|a| At {
            value: Some(a.value.clone()),
            line: a.line,
        });
        self.pick(key, (flag.0, flag.1.map(Some)), file.as_ref(), None)
    }

    /// An optional path, shown lossily (a path need not be UTF-8).
    fn pick_path(
        &mut self,
        key: &str,
        flag: (&'static str, Option<PathBuf>),
        file: Option<&At<PathBuf>>,
    ) -> Option<PathBuf> {
        let shown = |p: &PathBuf| p.to_string_lossy().into_owned();
        let at = file.map(|a| At {
            value: shown(&a.value),
            line: a.line,
        });
        self.pick_opt(key, (flag.0, flag.1.as_ref().map(shown)), at.as_ref());
        flag.1.or_else(|| file.map(|a| a.value.clone()))
    }

    fn file_only(&mut self, key: &str, value: Value, line: Option<usize>) {
        self.shown.push(Shown {
            key: key.to_string(),
            value,
            source: line.map_or(Source::Default, Source::File),
        });
    }
}

impl Settings {
    /// Merges `flags` over `config`. `rules` (built in and the project's own) checks that every
    /// rule selector names a rule. A bad `--budget` spec is an `Err(String)` of the flag's own.
    pub fn resolve(
        config: &Config,
        flags: &Flags,
        rules: &RuleSet,
    ) -> Result<Settings, SettingsError> {
        if let Some(file) = &config.file {
            config.selection.check(rules).map_err(|(line, problem)| {
                SettingsError::Config(ConfigError {
                    file: super::shown_path(&file.path),
                    line: Some(line),
                    problem,
                })
            })?;
        }
        let mut m = Merge { shown: Vec::new() };
        let all_or_nothing = m.pick(
            "all-or-nothing",
            ("--all-or-nothing", flags.all_or_nothing),
            config.all_or_nothing.as_ref(),
            false,
        );
        let allow_tests = m.pick(
            "allow-tests",
            ("--allow-tests", flags.allow_tests),
            config.allow_tests.as_ref(),
            false,
        );
        let audit_log = m.pick_path(
            "audit-log",
            ("--audit-log", flags.audit_log.clone()),
            config.audit_log.as_ref(),
        );
        let backup_dir = m.pick_path(
            "backup-dir",
            ("--backup-dir", flags.backup_dir.clone()),
            config.backup_dir.as_ref(),
        );
        // Budgets: each category on its own (default, then the file, then `--budget`).
        let mut budgets = Budgets::default();
        let mut from_flag = Budgets(Default::default());
        for spec in &flags.budget {
            from_flag.set(spec).map_err(SettingsError::Flag)?;
        }
        for cat in Category::ALL {
            let file = config.budget.get(&cat);
            let value = m.pick(
                &format!("budget.{}", cat.as_str()),
                ("--budget", from_flag.0.get(&cat).copied()),
                file,
                budgets.get(cat),
            );
            budgets.0.insert(cat, value);
        }
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
            "install-missing",
            ("--install-missing", flags.install_missing),
            config.install_missing.as_ref(),
            false,
        );
        let jobs = m.pick_opt(
            "jobs",
            (
                flags.jobs.map_or("--jobs", |(_, name)| name),
                flags.jobs.map(|(n, _)| n),
            ),
            config.jobs.as_ref(),
        );
        let llm = resolve_llm(&mut m, &config.llm, flags);
        let max_attempts = m.pick(
            "max-attempts",
            ("--max-attempts", flags.max_attempts),
            config.max_attempts.as_ref(),
            DEFAULT_MAX_ATTEMPTS,
        );
        let pytest_args = m.pick(
            "pytest-args",
            ("-- PYTEST_ARGS", flags.pytest_args.clone()),
            config.pytest_args.as_ref(),
            Vec::new(),
        );
        let python = m.pick_path(
            "python",
            ("--python", flags.python.clone()),
            config.python.as_ref(),
        );
        let safe_only = m.pick(
            "safe-only",
            ("--safe-only", flags.safe_only),
            config.safe_only.as_ref(),
            false,
        );
        let sandbox = m.pick(
            "sandbox",
            ("--sandbox", flags.sandbox),
            config.sandbox.as_ref(),
            false,
        );
        let search_time = m.pick(
            "search-time",
            ("--search-time", flags.search_time),
            config.search_time.as_ref(),
            crate::session::DEFAULT_SEARCH_TIME.as_secs(),
        );
        m.file_only(
            "select",
            sel.select.as_deref().map_or(json!(["ALL"]), texts),
            sel.select.as_ref().and_then(|s| s.first()).map(|s| s.line),
        );
        let test_timeout = m.pick(
            "test-timeout",
            ("--test-timeout", flags.test_timeout),
            config.test_timeout.as_ref(),
            crate::runner::DEFAULT_TEST_TIMEOUT.as_secs(),
        );
        let time_budget = m.pick(
            "time-budget",
            ("--time-budget", flags.time_budget),
            config.time_budget.as_ref(),
            crate::session::DEFAULT_TIME_BUDGET.as_secs(),
        );
        let timeout = m.pick_opt(
            "timeout",
            ("--timeout", flags.timeout),
            config.timeout.as_ref(),
        );
        // Sorted by key: these two come last.
        let worker = m.pick(
            "worker",
            (
                flags.worker.map_or("--worker", |(_, name)| name),
                flags.worker.map(|(m, _)| m),
            ),
            config.worker.as_ref(),
            crate::worker::Mode::Auto,
        );
        let xdist = m.pick(
            "xdist",
            ("--no-xdist", flags.xdist),
            config.xdist.as_ref(),
            true,
        );
        Ok(Settings {
            file: config.file.clone(),
            shadowed: config.shadowed.clone(),
            max_attempts,
            budgets,
            timeout: timeout.map(Duration::from_secs),
            test_timeout: Duration::from_secs(test_timeout),
            time_budget: Duration::from_secs(time_budget),
            search_time: Duration::from_secs(search_time),
            jobs: jobs.map_or_else(crate::session::default_jobs, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            pytest_args,
            python,
            safe_only,
            allow_tests,
            all_or_nothing,
            backup_dir,
            audit_log,
            selection: config.selection.clone(),
            exclude: config
                .extend_exclude
                .iter()
                .map(|p| p.value.clone())
                .collect(),
            sandbox,
            install_missing,
            worker,
            xdist,
            llm,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// A problem in the configuration file (one line, with the file and line).
    Config(ConfigError),
    /// A bad flag value (`--budget x=1`).
    Flag(String),
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Config(e) => e.fmt(f),
            SettingsError::Flag(m) => f.write_str(m),
        }
    }
}

/// Whether `rel` (relative to the root, `/`-separated) is never to be patched, and by which
/// pattern.
pub fn excluded_by<'a>(patterns: &'a [Pattern], rel: &str) -> Option<&'a Pattern> {
    patterns.iter().find(|p| p.matches(rel))
}

/// `[tool.selfdebug.llm]` under the flags and the `SELFDEBUG_LLM*` variables.
fn resolve_llm(m: &mut Merge, file: &LlmConfig, flags: &Flags) -> LlmSettings {
    let (on, on_name) = flags.llm.map_or((None, "--llm"), |(v, n)| (Some(v), n));
    let enabled = m.pick("llm.enabled", (on_name, on), file.enabled.as_ref(), false);
    let max_calls = m.pick(
        "llm.max-calls",
        ("--llm-max-calls", flags.llm_max_calls),
        file.max_calls.as_ref(),
        crate::llm::DEFAULT_MAX_CALLS,
    );
    let max_tokens = m.pick(
        "llm.max-tokens",
        ("--llm-max-tokens", flags.llm_max_tokens),
        file.max_tokens.as_ref(),
        crate::llm::DEFAULT_MAX_TOKENS,
    );
    let (model, model_name) = flags
        .llm_model
        .clone()
        .map_or((None, "--llm-model"), |(v, n)| (Some(v), n));
    let model = m.pick(
        "llm.model",
        (model_name, model),
        file.model.as_ref(),
        crate::llm::DEFAULT_MODEL.to_string(),
    );
    let (url, url_name) = flags
        .llm_url
        .clone()
        .map_or((None, "--llm-url"), |(v, n)| (Some(v), n));
    let url = m.pick(
        "llm.url",
        (url_name, url),
        file.url.as_ref(),
        crate::llm::DEFAULT_URL.to_string(),
    );
    LlmSettings {
        enabled,
        url,
        model,
        max_calls,
        max_tokens,
    }
}
