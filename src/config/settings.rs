//! The settings of a run, in two layers (as ripgrep's low and high arguments). The raw layer is
//! what the command line said ([`Flags`]) and what the configuration file said
//! ([`super::Config`]), each a [`Layer`] of the settings declared in [`super::declared`];
//! [`Settings::resolve`] merges them, a flag over the file over the default, into the one value
//! the session reads, each with where it came from (`selfdebug config`, `fix --show-settings`).

use serde_json::{json, Value as Json};

use super::declared::{self, Kind, Layer, Setting, Value, MAX_DEFAULT_JOBS};
use super::{Config, ConfigError, ConfigFile, Pattern, RuleSelection};
use crate::category::Budgets;
use crate::command::CommandJudge;
use crate::project::ProjectRoot;
use crate::sandbox::Sandbox;
use crate::status::Category;

/// The default of `--jobs`: the number of cores, capped at [`MAX_DEFAULT_JOBS`].
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_DEFAULT_JOBS)
}

/// The file's rule selection names rules that exist (a `file:line` error otherwise).
fn check_selection(config: &Config, selectable: &[String]) -> Result<(), SettingsError> {
    if let Some(file) = &config.file {
        config
            .selection
            .check(selectable)
            .map_err(|(line, problem)| {
                SettingsError::Config(ConfigError {
                    file: super::shown_path(&file.path),
                    line: Some(line),
                    problem,
                })
            })?;
    }
    Ok(())
}

/// What the command line said (and the `SELFDEBUG_*` variables that stand for flags): the
/// declared settings it gives in [`Self::given`], and what only a command line can say.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--module`: only this failing test.
    pub test: Option<String>,
    pub dry_run: bool,
    /// `--no-validate` (a dry run that proves nothing).
    pub no_validate: bool,
    /// `CATEGORY=N` specs, applied over the file's budgets.
    pub budget: Vec<String>,
    /// `--llm-no-cache` (`Some(false)`).
    pub llm_cache: Option<bool>,
    /// `--install-missing=DIST` (repeatable): distributions outside the known table that
    /// `--install-missing` may install (see [`crate::install`]).
    pub install_dists: Vec<String>,
    /// Each declared setting a flag (or a variable standing for one) gives, with its name.
    pub given: Layer<&'static str>,
}

impl Flags {
    /// `setting`'s own flag gave `value`.
    pub fn set<T: Value>(&mut self, setting: &Setting<T>, value: T) {
        self.given.set(setting, value, setting.flag);
    }

    /// `setting`'s own flag gave `value`, if it was given.
    pub fn given<T: Value>(&mut self, setting: &Setting<T>, value: Option<T>) {
        if let Some(v) = value {
            self.set(setting, v);
        }
    }

    /// A flag or a variable (`SELFDEBUG_JOBS`) named `by` gave `value`.
    pub fn set_by<T: Value>(&mut self, setting: &Setting<T>, value: T, by: &'static str) {
        self.given.set(setting, value, by);
    }
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
    pub value: Json,
    pub source: Source,
    /// What a `null` value means, as shown to a person.
    pub unset: &'static str,
}

/// The values a run uses: the session reads them (as `session::Options`), `selfdebug config`
/// lists them with their sources.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Every declared setting's value (`settings.time_budget`, ...: `Settings` derefs to it).
    pub values: declared::Values,
    pub root: ProjectRoot,
    /// A pytest log to work from; without it the baseline run's failures are used. Read by the
    /// command after its other checks.
    pub log: Option<Vec<u8>>,
    /// Only this failing test.
    pub test: Option<String>,
    pub budgets: Budgets,
    /// Prove candidates with pytest (false: `--no-validate`, dry run only).
    pub validate: bool,
    pub dry_run: bool,
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
    /// The configured rule selection (`select`/`ignore`): rules it leaves out propose nothing.
    pub selection: RuleSelection,
    /// `--install-missing=DIST`: what `--install-missing` may install besides the known table.
    pub install_dists: Vec<String>,
    /// `extend-exclude`: files never patched (nor probed); their candidates are dropped unrun.
    pub exclude: Vec<Pattern>,
    /// The model fallback (`--llm`): off (none) unless the user asks.
    pub llm: Option<crate::llm::LlmConfig>,
    /// The configuration file in force, and the weaker ones it shadows.
    pub file: Option<ConfigFile>,
    pub shadowed: Vec<&'static str>,
    /// Every setting in `selfdebug config`'s order (sorted by key).
    pub shown: Vec<Shown>,
    /// The ids of the rules (built in and the project's) that the selection turns off.
    pub rules_off: Vec<String>,
    /// The interpreter, checked by the command before the session (to name it in the report's
    /// first line); `None`: the session finds and checks it.
    pub prepared: Option<crate::runner::Prepared>,
}

/// The resolution: each declared setting's value and source, in `selfdebug config`'s order.
struct Merge {
    shown: Vec<Shown>,
    values: Layer<Source>,
}

impl Merge {
    fn show(&mut self, key: &str, value: Json, source: Source, unset: &'static str) {
        self.shown.push(Shown {
            key: key.to_string(),
            value,
            source,
            unset,
        });
    }

    /// Flag, else file, else default.
    fn pick(&mut self, d: &declared::Declared, flags: &Flags, config: &Config) {
        let flag = flags
            .given
            .raw(d.key)
            .map(|(raw, name)| (raw, Source::Flag(name)));
        let file = config
            .values
            .raw(d.key)
            .map(|(raw, line)| (raw, Source::File(*line)));
        let (raw, source) = match flag.or(file) {
            Some((raw, source)) => (raw.clone(), source),
            None => ((d.default)(), Source::Default),
        };
        self.show(d.key, raw.shown(), source.clone(), d.unset);
        self.values.set_raw(d.key, raw, source);
    }

    /// A setting only the file gives (the selection, the exclusions): its first line.
    fn file_only(&mut self, d: &declared::Declared, config: &Config) {
        let sel = &config.selection;
        let texts = |list: &[super::Selector]| -> (Json, Option<usize>) {
            let texts: Vec<&str> = list.iter().map(|s| s.text.as_str()).collect();
            (json!(texts), list.first().map(|s| s.line))
        };
        let (value, line) = match d.kind {
            Kind::Exclude => {
                let texts: Vec<&str> = config
                    .extend_exclude
                    .iter()
                    .map(|p| p.value.text.as_str())
                    .collect();
                (json!(texts), config.extend_exclude.first().map(|p| p.line))
            }
            Kind::ExtendSelect => texts(&sel.extend_select),
            Kind::Ignore => texts(&sel.ignore),
            _ => match sel.select.as_deref() {
                Some(list) => texts(list),
                None => (json!(["ALL"]), None),
            },
        };
        self.show(
            d.key,
            value,
            line.map_or(Source::Default, Source::File),
            d.unset,
        );
    }

    /// The resolved value of `setting` (its default if it was never picked).
    fn get<T: Value>(&self, setting: &Setting<T>) -> T {
        self.values
            .get(setting)
            .map_or_else(setting.default, |(value, _)| value)
    }
}

impl Settings {
    /// Merges `flags` over `config` for the project at `root`. `selectable` (the ids of the
    /// rules, built in and the project's own, before the selection, and of the search's
    /// families) checks that every rule selector names a rule. A bad `--budget` spec is an
    /// `Err` of the flag's own. What the command finds out after its other checks (the log,
    /// the judge, bwrap, the checked pytest arguments and their notes) is left empty here.
    pub fn resolve(
        root: &ProjectRoot,
        config: &Config,
        flags: &Flags,
        selectable: &[String],
    ) -> Result<Settings, SettingsError> {
        use declared::*;
        check_selection(config, selectable)?;
        let mut m = Merge {
            shown: Vec::new(),
            values: Layer::default(),
        };
        let mut budgets = Budgets::default();
        for d in DECLARED {
            match d.kind {
                Kind::Budget => budgets = resolve_budgets(&mut m, config, flags)?,
                Kind::Select | Kind::ExtendSelect | Kind::Ignore | Kind::Exclude => {
                    m.file_only(d, config)
                }
                _ => m.pick(d, flags, config),
            }
        }
        let llm = llm_client(&m, flags);
        Ok(Settings {
            values: Values::from_layer(&m.values),
            root: root.clone(),
            log: None,
            test: flags.test.clone(),
            budgets,
            validate: !flags.no_validate,
            dry_run: flags.dry_run || flags.no_validate,
            jobs: m
                .get(&JOBS)
                .map_or_else(default_jobs, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            notes: Vec::new(),
            judge: None,
            sandbox: None,
            selection: config.selection.clone(),
            install_dists: flags.install_dists.clone(),
            exclude: config
                .extend_exclude
                .iter()
                .map(|p| p.value.clone())
                .collect(),
            llm,
            file: config.file.clone(),
            shadowed: config.shadowed.clone(),
            shown: m.shown,
            prepared: None,
            rules_off: selectable
                .iter()
                .filter(|id| !config.selection.enabled(id))
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
        })
    }
}

impl std::ops::Deref for Settings {
    type Target = declared::Values;
    fn deref(&self) -> &declared::Values {
        &self.values
    }
}

/// The command adjusts some values after its other checks (the pytest arguments it sets aside).
impl std::ops::DerefMut for Settings {
    fn deref_mut(&mut self) -> &mut declared::Values {
        &mut self.values
    }
}

/// Why the settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A problem in the configuration file (one line, with the file and line).
    #[error(transparent)]
    Config(ConfigError),
    /// A bad flag value (`--budget x=1`).
    #[error(transparent)]
    Flag(crate::category::BudgetError),
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
    let budget = &declared::BUDGET;
    let mut budgets = Budgets::default();
    let mut from_flag = Budgets(Default::default());
    for spec in &flags.budget {
        from_flag.set(spec).map_err(SettingsError::Flag)?;
    }
    for &cat in Category::ALL {
        let (value, source) = match (from_flag.0.get(&cat), config.budget.get(&cat)) {
            (Some(&n), _) => (n, Source::Flag(budget.flag)),
            (None, Some(at)) => (at.value, Source::File(at.line)),
            (None, None) => (budgets.get(cat), Source::Default),
        };
        let key = format!("{}.{}", budget.key, cat.as_str());
        m.show(&key, json!(value), source, budget.unset);
        budgets.0.insert(cat, value);
    }
    Ok(budgets)
}

/// The model client's configuration (with the key, only ever read from the environment) when
/// the fallback is on: `[tool.selfdebug.llm]` under the flags and the `SELFDEBUG_LLM*`
/// variables.
fn llm_client(m: &Merge, flags: &Flags) -> Option<crate::llm::LlmConfig> {
    use declared::{LLM_ENABLED, LLM_MAX_CALLS, LLM_MAX_TOKENS, LLM_MODEL, LLM_URL};
    m.get(&LLM_ENABLED).then(|| {
        let mut c = crate::llm::LlmConfig::from_env(Some(m.get(&LLM_URL)), Some(m.get(&LLM_MODEL)));
        c.max_calls = m.get(&LLM_MAX_CALLS);
        c.max_tokens = m.get(&LLM_MAX_TOKENS);
        c.cache = flags.llm_cache.unwrap_or(true);
        c
    })
}

#[cfg(test)]
mod tests {
    use super::super::declared::*;
    use super::*;
    use std::time::Duration;

    fn resolve(file: Option<&str>, flags: &Flags) -> Settings {
        let d = tempfile::tempdir().unwrap();
        if let Some(text) = file {
            std::fs::write(d.path().join("selfdebug.toml"), text).unwrap();
        }
        let root = ProjectRoot::find(Some(d.path())).unwrap();
        let config = Config::load(root.path()).unwrap();
        let ids = ["null-guard-call".to_string()];
        Settings::resolve(&root, &config, flags, &ids).unwrap()
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
        assert_eq!(top, keys());
        let llm: Vec<&str> = s
            .shown
            .iter()
            .filter_map(|r| r.key.strip_prefix("llm."))
            .collect();
        assert_eq!(llm, sub_keys("llm"));
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
        assert_eq!(shown(&s, "jobs").value, Json::Null);
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
        let mut flags = Flags {
            no_validate: true,
            llm_cache: Some(false),
            budget: vec!["logic=7".into()],
            ..Flags::default()
        };
        flags.set(&SEARCH_TIME, Duration::from_secs(9));
        flags.set_by(&JOBS, Some(5), "SELFDEBUG_JOBS");
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
