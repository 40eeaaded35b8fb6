//! Per-project settings, read from the project root: `[tool.selfdebug]` in `pyproject.toml`,
//! or the same keys at the top level of `selfdebug.toml` / `.selfdebug.toml`. Within the root,
//! Ruff's precedence: `.selfdebug.toml` over `selfdebug.toml` over `pyproject.toml`, and a
//! `pyproject.toml` counts only when it has a `[tool.selfdebug]` table. Keys are kebab-case
//! as Ruff's. Command-line flags override the file (see [`settings`]).
//!
//! Every problem (TOML syntax, an unknown key, a wrong type or value) is one line naming the
//! file and line: `pyproject.toml:12: unknown key 'max-atempts' in [tool.selfdebug] (did you
//! mean 'max-attempts'?)`.

pub mod declared;
pub mod glob;
pub mod select;
pub mod settings;
mod tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::status::Category;
use tree::{Located, Node};

pub use declared::{
    Declared, Kind, Layer, Raw, Setting, Value, DEFAULT_MAX_ATTEMPTS, DEFAULT_SEARCH_TIME,
    DEFAULT_TIME_BUDGET, MAX_DEFAULT_JOBS,
};
pub use glob::Pattern;
pub use select::{RuleSelection, Selector};
pub use settings::{default_jobs, Flags, Settings, SettingsError, Shown, Source};

/// The file names looked for in the root, strongest first.
pub const FILES: [&str; 3] = [".selfdebug.toml", "selfdebug.toml", "pyproject.toml"];

/// A value and the 1-based line it was written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At<T> {
    pub value: T,
    pub line: usize,
}

/// The configuration file in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Absolute path.
    pub path: PathBuf,
    /// `pyproject.toml`, `selfdebug.toml` or `.selfdebug.toml`.
    pub name: &'static str,
}

impl ConfigFile {
    /// Where the settings live in the file, as messages name it.
    pub fn table(&self) -> &'static str {
        if self.name == "pyproject.toml" {
            "[tool.selfdebug]"
        } else {
            "the top level"
        }
    }
}

/// What the file says; `None` or empty: not set there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub file: Option<ConfigFile>,
    /// Weaker files in the root that also hold settings and are ignored (Ruff's precedence).
    pub shadowed: Vec<&'static str>,
    /// Every declared setting the file sets, with its line (paths already resolved against
    /// the file's directory; `python`'s bare name left for PATH).
    pub values: Layer<usize>,
    pub budget: BTreeMap<Category, At<u32>>,
    pub selection: RuleSelection,
    pub extend_exclude: Vec<At<Pattern>>,
}

impl Config {
    /// The file's value of `setting`, and its line.
    pub fn get<T: Value>(&self, setting: &Setting<T>) -> Option<At<T>> {
        self.values
            .get(setting)
            .map(|(value, line)| At { value, line })
    }
}

/// A configuration file that cannot be used. Displays as one line: `FILE:LINE: PROBLEM`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{} {problem}", line.map_or(String::new(), |l| format!("{l}:")))]
pub struct ConfigError {
    /// As it is shown: relative to the current directory when under it, else absolute.
    pub file: String,
    pub line: Option<usize>,
    pub problem: String,
}

/// How a path is shown in messages: relative to the current directory when it is under it.
pub fn shown_path(path: &Path) -> String {
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|c| c.canonicalize().ok());
    match cwd.as_deref().and_then(|c| path.strip_prefix(c).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

impl Config {
    /// The settings of the project rooted at `root` (no file: all unset).
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let mut found: Vec<(&'static str, PathBuf, String)> = Vec::new();
        for name in FILES {
            let path = root.join(name);
            if !path.is_file() {
                continue;
            }
            let shown = shown_path(&path);
            let bytes = std::fs::read(&path).map_err(|e| ConfigError {
                file: shown.clone(),
                line: None,
                problem: format!("cannot read: {e}"),
            })?;
            let text = String::from_utf8(bytes).map_err(|_| ConfigError {
                file: shown.clone(),
                line: None,
                problem: "not valid UTF-8".into(),
            })?;
            // A pyproject.toml without [tool.selfdebug] is the project's, not ours.
            if name == "pyproject.toml" && !mentions_tool_selfdebug(&text) {
                continue;
            }
            found.push((name, path, text));
        }
        let Some((name, path, text)) = found.first() else {
            return Ok(Config::default());
        };
        let file = ConfigFile {
            path: path.clone(),
            name,
        };
        let mut config = Reader {
            text,
            file: shown_path(path),
            table: file.table(),
            dir: root,
        }
        .read()?;
        config.shadowed = found[1..].iter().map(|(n, _, _)| *n).collect();
        config.file = Some(file);
        Ok(config)
    }
}

/// Whether a pyproject.toml holds our table. One that does not parse counts when it mentions
/// selfdebug at all (its error is then ours to report); otherwise it is pytest's business.
fn mentions_tool_selfdebug(text: &str) -> bool {
    if !text.contains("selfdebug") {
        return false;
    }
    match text.parse::<toml::Table>() {
        Ok(doc) => doc
            .get("tool")
            .and_then(|t| t.as_table())
            .is_some_and(|t| t.contains_key("selfdebug")),
        Err(_) => true,
    }
}

struct Reader<'a> {
    text: &'a str,
    file: String,
    table: &'static str,
    dir: &'a Path,
}

type Entry = (Located<String>, Located<Node>);

impl Reader<'_> {
    fn err(&self, offset: Option<usize>, problem: String) -> ConfigError {
        ConfigError {
            file: self.file.clone(),
            line: offset.map(|o| tree::line_of(self.text, o)),
            problem,
        }
    }

    /// The line of a value (a scalar or array always has a span; an implied table may not).
    fn line_at(&self, v: &Located<Node>) -> usize {
        tree::line_of(self.text, v.start().unwrap_or(0))
    }

    fn read(&self) -> Result<Config, ConfigError> {
        let doc = tree::parse(self.text).map_err(|e| {
            // toml's Display is a multi-line snippet; its message and span make one line.
            let msg = crate::traceback::first_line(e.message()).trim().to_string();
            self.err(e.span().map(|s| s.start), format!("invalid TOML: {msg}"))
        })?;
        let settings = if self.table == "[tool.selfdebug]" {
            let tool = doc.get("tool");
            match tool.and_then(|t| t.value.get("selfdebug")) {
                Some(t) => t,
                // `selfdebug` appeared only in a string or comment: no settings.
                None => return Ok(Config::default()),
            }
        } else {
            // The document itself, spanning the whole text.
            return self.read_table(match &doc {
                Node::Table(entries) => entries,
                _ => unreachable!("a TOML document is a table"),
            });
        };
        match &settings.value {
            Node::Table(entries) => self.read_table(entries),
            other => Err(self.err(
                settings.start(),
                format!("[tool.selfdebug] must be a table, not {}", other.kind()),
            )),
        }
    }

    fn unknown(&self, key: &Located<String>, known: &[&str], table: &str) -> ConfigError {
        let k = key.value.as_str();
        let hint = crate::suggest::best_match(known, k, crate::suggest::Impl::Traceback)
            .map(|m| format!(" (did you mean '{m}'?)"))
            .unwrap_or_default();
        let place = if table == "the top level" {
            String::new()
        } else {
            format!(" in {table}")
        };
        self.err(key.start(), format!("unknown key '{k}'{place}{hint}"))
    }

    fn type_err(&self, key: &str, value: &Located<Node>, expected: &str) -> ConfigError {
        self.err(
            value.start(),
            format!("'{key}' must be {expected}, not {}", value.value.kind()),
        )
    }

    fn boolean(&self, key: &str, v: &Located<Node>) -> Result<At<bool>, ConfigError> {
        match &v.value {
            Node::Bool(b) => Ok(self.at(*b, v)),
            _ => Err(self.type_err(key, v, "true or false")),
        }
    }

    fn int(&self, key: &str, v: &Located<Node>, min: i64) -> Result<At<u64>, ConfigError> {
        let what = if min == 0 {
            "a whole number"
        } else {
            "a positive whole number"
        };
        match &v.value {
            Node::Int(n) if *n >= min => Ok(self.at(*n as u64, v)),
            Node::Int(n) => Err(self.err(v.start(), format!("'{key}' must be {what}, not {n}"))),
            _ => Err(self.type_err(key, v, what)),
        }
    }

    fn int32(&self, key: &str, v: &Located<Node>, min: i64) -> Result<At<u32>, ConfigError> {
        let n = self.int(key, v, min)?;
        let value = u32::try_from(n.value)
            .map_err(|_| self.err(v.start(), format!("'{key}' is too large")))?;
        Ok(At {
            value,
            line: n.line,
        })
    }

    fn string(&self, key: &str, v: &Located<Node>) -> Result<At<String>, ConfigError> {
        match &v.value {
            Node::Str(s) => Ok(self.at(s.clone(), v)),
            _ => Err(self.type_err(key, v, "a string")),
        }
    }

    fn path(&self, key: &str, v: &Located<Node>) -> Result<At<PathBuf>, ConfigError> {
        let s = self.string(key, v)?;
        if s.value.is_empty() {
            return Err(self.err(v.start(), format!("'{key}' must not be empty")));
        }
        Ok(At {
            value: self.dir.join(&s.value),
            line: s.line,
        })
    }

    fn strings(&self, key: &str, v: &Located<Node>) -> Result<Vec<At<String>>, ConfigError> {
        let Node::Array(items) = &v.value else {
            return Err(self.type_err(key, v, "an array of strings"));
        };
        items
            .iter()
            .map(|item| match &item.value {
                Node::Str(s) => Ok(self.at(s.clone(), item)),
                other => Err(self.err(
                    item.start(),
                    format!(
                        "'{key}' must be an array of strings, but holds {}",
                        other.kind()
                    ),
                )),
            })
            .collect()
    }

    fn at<T>(&self, value: T, v: &Located<Node>) -> At<T> {
        At {
            value,
            line: self.line_at(v),
        }
    }

    fn read_table(&self, entries: &[Entry]) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        for (key, v) in entries {
            let k = key.value.as_str();
            // `llm.url` is a key of the sub-table, not a quoted key of this one.
            if let Some(d) = declared::find(k).filter(|d| !d.key.contains('.')) {
                self.read_declared(&mut c, d, k, v)?;
                continue;
            }
            let sub = declared::sub_keys(k);
            if sub.is_empty() {
                return Err(self.unknown(key, &declared::keys(), self.table));
            }
            // A sub-table of settings (`[tool.selfdebug.llm]`): its keys are `llm.KEY`.
            let Node::Table(entries) = &v.value else {
                return Err(self.type_err(k, v, "a table"));
            };
            for (sub_key, v) in entries {
                let name = format!("{k}.{}", sub_key.value);
                match declared::find(&name) {
                    Some(d) => self.read_declared(&mut c, d, &name, v)?,
                    None => return Err(self.unknown(sub_key, &sub, &self.sub_table(k))),
                }
            }
        }
        Ok(c)
    }

    /// One declared setting's value, read and checked as its [`Kind`] says.
    fn read_declared(
        &self,
        c: &mut Config,
        d: &Declared,
        k: &str,
        v: &Located<Node>,
    ) -> Result<(), ConfigError> {
        let (raw, line) = match d.kind {
            Kind::Bool => self.boolean(k, v).map(|b| (Raw::Bool(b.value), b.line))?,
            Kind::Int { min } => self.int(k, v, min).map(|n| (Raw::Int(n.value), n.line))?,
            Kind::Int32 { min } => self
                .int32(k, v, min)
                .map(|n| (Raw::Int(u64::from(n.value)), n.line))?,
            Kind::Str => self.string(k, v).map(|s| (Raw::Str(s.value), s.line))?,
            Kind::Path => self.path(k, v).map(|p| (Raw::Path(p.value), p.line))?,
            Kind::Python => self.python(v).map(|p| (Raw::Path(p.value), p.line))?,
            Kind::Strings => {
                let items = self.strings(k, v)?;
                let items = items.into_iter().map(|a| a.value).collect();
                (Raw::Strings(items), self.line_at(v))
            }
            Kind::Worker => self.worker(v).map(|m| (Raw::Worker(m.value), m.line))?,
            // A whole number is seconds.
            Kind::KeepAlive if matches!(v.value, Node::Int(_)) => {
                self.int(k, v, 0).map(|n| (Raw::Int(n.value), n.line))?
            }
            Kind::KeepAlive => {
                let s = self.string(k, v)?;
                let d = crate::worker::parse_keepalive(&s.value).ok_or_else(|| {
                    self.err(
                        v.start(),
                        format!(
                            "'{k}' is a duration such as \"10m\", \"90s\" or \"off\", not {:?}",
                            s.value
                        ),
                    )
                })?;
                (Raw::Int(d.as_secs()), s.line)
            }
            Kind::Budget => {
                c.budget = self.budget(v)?;
                return Ok(());
            }
            Kind::Select => {
                c.selection.select = Some(self.selectors(k, v)?);
                return Ok(());
            }
            Kind::ExtendSelect => {
                c.selection.extend_select = self.selectors(k, v)?;
                return Ok(());
            }
            Kind::Ignore => {
                c.selection.ignore = self.selectors(k, v)?;
                return Ok(());
            }
            Kind::Exclude => {
                c.extend_exclude = self.patterns(k, v)?;
                return Ok(());
            }
        };
        c.values.set_raw(d.key, raw, line);
        Ok(())
    }

    fn worker(&self, v: &Located<Node>) -> Result<At<crate::worker::Mode>, ConfigError> {
        let s = self.string("worker", v)?;
        let value = crate::worker::Mode::parse(&s.value).ok_or_else(|| {
            self.err(
                v.start(),
                format!("'worker' is \"auto\" or \"off\", not {:?}", s.value),
            )
        })?;
        Ok(At {
            value,
            line: s.line,
        })
    }

    fn python(&self, v: &Located<Node>) -> Result<At<PathBuf>, ConfigError> {
        let s = self.string("python", v)?;
        if s.value.is_empty() {
            return Err(self.err(v.start(), "'python' must not be empty".into()));
        }
        let p = PathBuf::from(&s.value);
        // A bare name is a command on PATH; a path is the file's directory's.
        let value = if p.components().count() == 1 {
            p
        } else {
            self.dir.join(p)
        };
        Ok(At {
            value,
            line: s.line,
        })
    }

    fn patterns(&self, k: &str, v: &Located<Node>) -> Result<Vec<At<Pattern>>, ConfigError> {
        self.strings(k, v)?
            .into_iter()
            .map(|item| {
                let pattern = Pattern::new(&item.value).map_err(|p| ConfigError {
                    file: self.file.clone(),
                    line: Some(item.line),
                    problem: format!("extend-exclude: {p}"),
                })?;
                Ok(At {
                    value: pattern,
                    line: item.line,
                })
            })
            .collect()
    }

    fn selectors(&self, key: &str, v: &Located<Node>) -> Result<Vec<Selector>, ConfigError> {
        Ok(self
            .strings(key, v)?
            .into_iter()
            .map(|s| Selector {
                text: s.value,
                line: s.line,
            })
            .collect())
    }

    fn budget(&self, v: &Located<Node>) -> Result<BTreeMap<Category, At<u32>>, ConfigError> {
        let Node::Table(entries) = &v.value else {
            return Err(self.type_err(
                "budget",
                v,
                "a table of category = attempts (e.g. budget = { logic = 6 })",
            ));
        };
        let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
        let table = self.sub_table("budget");
        let mut out = BTreeMap::new();
        for (key, n) in entries {
            let cat =
                Category::from_word(&key.value).ok_or_else(|| self.unknown(key, &names, &table))?;
            out.insert(cat, self.int32(&format!("budget.{}", key.value), n, 0)?);
        }
        Ok(out)
    }

    /// `[tool.selfdebug.llm]` in a pyproject.toml, `[llm]` in a selfdebug.toml (or budget's).
    fn sub_table(&self, name: &str) -> String {
        if self.table == "[tool.selfdebug]" {
            format!("[tool.selfdebug.{name}]")
        } else {
            format!("[{name}]")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::declared::*;
    use super::*;

    fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, Result<Config, ConfigError>) {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).unwrap();
        }
        let c = Config::load(d.path());
        (d, c)
    }

    fn problem(files: &[(&str, &str)]) -> (Option<usize>, String) {
        let (_d, c) = load(files);
        let e = c.unwrap_err();
        (e.line, e.problem)
    }

    #[test]
    fn worker_keepalive_is_a_duration_or_seconds() {
        let secs = |text: &str| {
            let (_d, c) = load(&[(".selfdebug.toml", text)]);
            c.unwrap().get(&WORKER_KEEPALIVE).map(|a| a.value)
        };
        let d = std::time::Duration::from_secs;
        assert_eq!(secs("worker-keepalive = \"10m\"\n"), Some(d(600)));
        assert_eq!(secs("worker-keepalive = \"off\"\n"), Some(d(0)));
        assert_eq!(secs("worker-keepalive = 90\n"), Some(d(90)));
        assert_eq!(
            problem(&[(".selfdebug.toml", "worker-keepalive = \"soon\"\n")]),
            (
                Some(1),
                "'worker-keepalive' is a duration such as \"10m\", \"90s\" or \"off\", not \"soon\""
                    .to_string()
            )
        );
    }

    #[test]
    fn reads_every_key_with_its_line() {
        let text = "[project]\nname = \"x\"\n\n[tool.selfdebug]\nmax-attempts = 6\nbudget = { logic = 5, data = 0 }\ntimeout = 30\ntest-timeout = 5\ntime-budget = 120\npytest-args = [\"-x\", \"-q\"]\npython = \".venv/bin/python\"\nsafe-only = true\nallow-tests = false\nall-or-nothing = true\nbackup-dir = \"bak\"\naudit-log = \"audit.jsonl\"\nselect = [\"null-guard\"]\nextend-select = [\"zero-div-guard\"]\nignore = [\"null-guard-call\"]\nextend-exclude = [\"vendor\"]\n\n[tool.selfdebug.llm]\nenabled = true\nurl = \"http://localhost:8080/v1\"\nmodel = \"m\"\nmax-calls = 3\n";
        let (d, c) = load(&[("pyproject.toml", text)]);
        let c = c.unwrap();
        let file = c.file.as_ref().unwrap();
        assert_eq!(file.name, "pyproject.toml");
        assert_eq!(c.get(&MAX_ATTEMPTS), Some(At { value: 6, line: 5 }));
        assert_eq!(c.budget[&Category::Logic], At { value: 5, line: 6 });
        assert_eq!(c.budget[&Category::Data], At { value: 0, line: 6 });
        assert_eq!(
            c.get(&TIMEOUT).unwrap().value,
            Some(std::time::Duration::from_secs(30))
        );
        assert_eq!(
            c.get(&TEST_TIMEOUT).unwrap().value,
            std::time::Duration::from_secs(5)
        );
        assert_eq!(c.get(&TIME_BUDGET).unwrap().line, 9);
        assert_eq!(c.get(&PYTEST_ARGS).unwrap().value, ["-x", "-q"]);
        assert_eq!(
            c.get(&PYTHON).unwrap().value,
            Some(d.path().join(".venv/bin/python"))
        );
        assert!(c.get(&SAFE_ONLY).unwrap().value);
        assert!(!c.get(&ALLOW_TESTS).unwrap().value);
        assert!(c.get(&ALL_OR_NOTHING).unwrap().value);
        assert_eq!(
            c.get(&BACKUP_DIR).unwrap().value,
            Some(d.path().join("bak"))
        );
        assert_eq!(
            c.get(&AUDIT_LOG).unwrap().value,
            Some(d.path().join("audit.jsonl"))
        );
        assert_eq!(c.selection.select.as_ref().unwrap()[0].line, 17);
        assert_eq!(c.selection.extend_select[0].text, "zero-div-guard");
        assert_eq!(c.selection.ignore[0].text, "null-guard-call");
        assert!(c.extend_exclude[0].value.matches("vendor/x.py"));
        assert_eq!(
            c.get(&LLM_ENABLED),
            Some(At {
                value: true,
                line: 23
            })
        );
        assert_eq!(c.get(&LLM_MAX_CALLS).unwrap().value, 3);
        assert_eq!(c.get(&LLM_MODEL).unwrap().value, "m");
    }

    #[test]
    fn ruff_precedence_between_files_of_the_root() {
        let py = "[tool.selfdebug]\nmax-attempts = 2\n";
        let (_d, c) = load(&[
            ("pyproject.toml", py),
            ("selfdebug.toml", "max-attempts = 3\n"),
        ]);
        let c = c.unwrap();
        assert_eq!(c.file.as_ref().unwrap().name, "selfdebug.toml");
        assert_eq!(c.get(&MAX_ATTEMPTS).unwrap().value, 3);
        assert_eq!(c.shadowed, ["pyproject.toml"]);
        let (_d, c) = load(&[
            ("selfdebug.toml", "max-attempts = 3\n"),
            (".selfdebug.toml", "max-attempts = 4\n"),
        ]);
        assert_eq!(c.unwrap().get(&MAX_ATTEMPTS).unwrap().value, 4);
        // A pyproject.toml without the table is not a config file, and shadows nothing.
        let (_d, c) = load(&[
            ("pyproject.toml", "[project]\nname = \"selfdebug-demo\"\n"),
            ("selfdebug.toml", "safe-only = true\n"),
        ]);
        let c = c.unwrap();
        assert!(c.shadowed.is_empty());
        let (_d, c) = load(&[("pyproject.toml", "[project]\nname = \"selfdebug-x\"\n")]);
        assert_eq!(c.unwrap(), Config::default());
    }

    #[test]
    fn every_problem_names_its_line() {
        let py = |body: &str| format!("[project]\nname = \"x\"\n\n[tool.selfdebug]\n{body}");
        assert_eq!(
            problem(&[("pyproject.toml", &py("timeout = 9\nmax-atempts = 3\n"))]),
            (
                Some(6),
                "unknown key 'max-atempts' in [tool.selfdebug] (did you mean 'max-attempts'?)"
                    .into()
            )
        );
        assert_eq!(
            problem(&[("pyproject.toml", &py("max-attempts = \"3\"\n"))]),
            (
                Some(5),
                "'max-attempts' must be a positive whole number, not a string".into()
            )
        );
        assert_eq!(
            problem(&[("pyproject.toml", &py("max-attempts = 0\n"))]),
            (
                Some(5),
                "'max-attempts' must be a positive whole number, not 0".into()
            )
        );
        assert_eq!(
            problem(&[("pyproject.toml", &py("budget = { logik = 3 }\n"))]),
            (
                Some(5),
                "unknown key 'logik' in [tool.selfdebug.budget] (did you mean 'logic'?)".into()
            )
        );
        assert_eq!(
            problem(&[(
                "pyproject.toml",
                &py("pytest-args = [\n  \"-x\",\n  3,\n]\n")
            )]),
            (
                Some(7),
                "'pytest-args' must be an array of strings, but holds an integer".into()
            )
        );
        assert_eq!(
            problem(&[(
                "pyproject.toml",
                &py("[tool.selfdebug.llm]\nmodl = \"m\"\n")
            )]),
            (
                Some(6),
                "unknown key 'modl' in [tool.selfdebug.llm] (did you mean 'model'?)".into()
            )
        );
        assert_eq!(
            problem(&[("selfdebug.toml", "safe-only = \"yes\"\n")]),
            (
                Some(1),
                "'safe-only' must be true or false, not a string".into()
            )
        );
        assert_eq!(
            problem(&[("selfdebug.toml", "\nsafe_only = true\n")]),
            (
                Some(2),
                "unknown key 'safe_only' (did you mean 'safe-only'?)".into()
            )
        );
        assert_eq!(
            problem(&[("selfdebug.toml", "extend-exclude = [\"../up\"]\n")]),
            (
                Some(1),
                "extend-exclude: '../up' must stay under the project root".into()
            )
        );
        assert_eq!(
            problem(&[("selfdebug.toml", "timeout = 1979-05-27\n")]),
            (
                Some(1),
                "'timeout' must be a positive whole number, not a date-time".into()
            )
        );
        assert_eq!(
            problem(&[("pyproject.toml", &py("[tool.selfdebug.foo]\nx = 1\n"))]),
            (Some(5), "unknown key 'foo' in [tool.selfdebug]".into())
        );
        let (line, msg) = problem(&[("selfdebug.toml", "a = 1\nb = [\n")]);
        assert_eq!(line, Some(3));
        assert!(msg.starts_with("invalid TOML: "), "{msg}");
        assert_eq!(
            problem(&[("pyproject.toml", "[tool]\nselfdebug = 3\n")]),
            (
                Some(2),
                "[tool.selfdebug] must be a table, not an integer".into()
            )
        );
    }
}
