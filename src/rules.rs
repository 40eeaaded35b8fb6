//! Repair rules: data that maps a failure signature (exception type, message regex) to a
//! transform with parameters. The built-in rules are `rules/*.toml`, compiled into the binary
//! by `build.rs`; a project adds or overrides rules in `ROOT/.selfdebug/rules/*.toml`.
//!
//! `rules/README.md` documents the format and the exact matching semantics; keep it in step
//! with this file.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::de::value::{MapAccessDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use toml::Spanned;

use crate::edit::Confidence;
use crate::transform::{Transform, KNOWN};

// `BUILTIN_RULES: &[(&str, &str)]`: (file stem, file contents) of every `rules/*.toml`, sorted.
include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

/// Where a project keeps its own rules, relative to the project root.
pub const PROJECT_RULES_DIR: &str = ".selfdebug/rules";

pub use crate::status::Category;

/// Where a rule came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleSource {
    /// `rules/*.toml` in this crate, compiled into the binary.
    Builtin,
    /// A project's `.selfdebug/rules/*.toml`: the path as it was read (root joined with the
    /// relative path).
    Project(PathBuf),
}

/// A rule's documentation; every field is required and non-empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleDocs {
    /// What the rule fixes and how.
    pub what: String,
    /// Why the fix is the right one (usually).
    pub why: String,
    /// Python that fails (valid syntax).
    pub example_before: String,
    /// The same Python after the fix (valid syntax).
    pub example_after: String,
    /// When the fix may be wrong.
    pub caveats: String,
}

/// A rule's message regex. A built-in rule's is compiled on first use: a run compiles only the
/// rules of the exception types it meets (compiling all of them took ~20 ms of CPU at every
/// start, measured with perf; docs/performance.md, stop 19). The built-in patterns are data of
/// this binary, every one compiled by the test suite; a project rule's is compiled at load, so
/// its errors are load errors.
#[derive(Clone)]
pub struct MessagePattern {
    src: String,
    /// Shared by clones of the rule set (the built-in set is cloned per load).
    re: std::sync::Arc<OnceLock<Option<Regex>>>,
}

impl MessagePattern {
    fn lazy(src: &str) -> MessagePattern {
        MessagePattern {
            src: src.to_string(),
            re: Default::default(),
        }
    }

    fn compiled(re: Regex) -> MessagePattern {
        let p = MessagePattern::lazy(re.as_str());
        let _ = p.re.set(Some(re));
        p
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.src
    }

    /// The compiled regex; `None` only if a built-in pattern does not compile (a bug the test
    /// suite catches): the rule then matches nothing.
    pub fn regex(&self) -> Option<&Regex> {
        self.re.get_or_init(|| Regex::new(&self.src).ok()).as_ref()
    }

    /// The names of the pattern's named groups.
    pub fn group_names(&self) -> Vec<&str> {
        self.regex()
            .map(|re| re.capture_names().flatten().collect())
            .unwrap_or_default()
    }
}

impl fmt::Debug for MessagePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MessagePattern").field(&self.src).finish()
    }
}

/// One validated rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Unique, kebab-case, equal to the file stem.
    pub id: String,
    pub title: String,
    pub category: Category,
    /// Exception types the rule applies to (at least one); see [`Rule::applies_to`].
    pub exception: Vec<String>,
    /// `message.as_str()` is the pattern as written.
    pub message: MessagePattern,
    /// The transform and its params (`transform` and `[params]` in the file).
    pub transform: Transform,
    pub confidence: Confidence,
    /// One right answer that the failure itself names (tried under `--safe-only`). Unsafe
    /// rules invent a value or guess intent: pytest proves them, a reviewer reads them.
    pub safe: bool,
    /// For unsafe rules: what a reviewer of the patch should check, one line.
    pub review: Option<String>,
    pub docs: RuleDocs,
    pub source: RuleSource,
    /// A project rule that replaced the built-in rule of the same id.
    pub overrides_builtin: bool,
}

/// A rule whose exception and message match a failure, with the message regex's named groups
/// (only those that took part in the match).
#[derive(Debug, Clone)]
pub struct RuleMatch<'a> {
    pub rule: &'a Rule,
    pub captures: BTreeMap<String, String>,
}

/// A rule file that cannot be used. Displays as one line: `FILE[:LINE:COL]: PROBLEM`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}:{} {problem}",
    file.display(),
    position.map_or(String::new(), |(line, col)| format!("{line}:{col}:"))
)]
pub struct RuleError {
    pub file: PathBuf,
    /// 1-based line and column (in characters) of the offending value, when known.
    pub position: Option<(usize, usize)>,
    pub problem: String,
}

// The file as written. Spans let every problem point at its line and column.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Spanned<String>,
    title: Spanned<String>,
    category: Spanned<String>,
    exception: Spanned<toml::Value>,
    message: Spanned<String>,
    transform: Spanned<String>,
    confidence: Spanned<String>,
    #[serde(default)]
    safe: bool,
    #[serde(default)]
    review: Option<Spanned<String>>,
    #[serde(default)]
    params: RawParams,
    docs: RawDocs,
}

/// `[params]` as written: each key and value with its place in the file, in file order. The
/// transform's own type is known only once `transform` is read, so the table is kept with its
/// spans and typed afterwards by [`ParamsReader`].
#[derive(Default)]
struct RawParams(Vec<(Spanned<String>, Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for RawParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawParams, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = RawParams;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawParams, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(RawParams(entries))
            }
        }
        d.deserialize_map(Entries)
    }
}

/// Hands [`RawParams`] to a transform's params type as a map, remembering the span of the key
/// or value it read last: where a typing error (unknown key, unknown or mistyped value) is.
struct ParamsReader<'a> {
    entries: std::slice::Iter<'a, (Spanned<String>, Spanned<toml::Value>)>,
    value: Option<&'a Spanned<toml::Value>>,
    /// Where the table's own errors point once every entry was read (a missing key).
    end: Range<usize>,
    at: Range<usize>,
}

impl<'a> ParamsReader<'a> {
    fn new(raw: &'a RawParams, end: Range<usize>) -> ParamsReader<'a> {
        ParamsReader {
            entries: raw.0.iter(),
            value: None,
            at: end.clone(),
            end,
        }
    }
}

impl<'de> MapAccess<'de> for ParamsReader<'_> {
    type Error = toml::de::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            self.at = self.end.clone();
            return Ok(None);
        };
        self.at = key.span();
        self.value = Some(value);
        let key: StringDeserializer<Self::Error> = key.get_ref().clone().into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let Some(value) = self.value.take() else {
            return Err(serde::de::Error::custom("a value without its key"));
        };
        self.at = value.span();
        seed.deserialize(ParamValue(value.get_ref().clone()))
    }
}

/// A param's value: `toml::Value`, except that a value of the wrong type for a choice of
/// names (`none_side = 1`) says what it is and what was expected; toml's own message for it is
/// `invalid type: unit variant, expected string only`.
struct ParamValue(toml::Value);

impl<'de> Deserializer<'de> for ParamValue {
    type Error = toml::de::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        // A key that is present is `Some` (TOML has no null).
        visitor.visit_some(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        use serde::de::{Error, Unexpected};
        let unexpected = match &self.0 {
            toml::Value::String(_) | toml::Value::Table(_) => {
                return self.0.deserialize_enum(name, variants, visitor)
            }
            toml::Value::Integer(i) => Unexpected::Signed(*i),
            toml::Value::Float(f) => Unexpected::Float(*f),
            toml::Value::Boolean(b) => Unexpected::Bool(*b),
            toml::Value::Datetime(_) => Unexpected::Other("datetime"),
            toml::Value::Array(_) => Unexpected::Seq,
        };
        let names: Vec<String> = variants.iter().map(|v| format!("`{v}`")).collect();
        let expected = format!("one of {}", names.join(", "));
        Err(Error::invalid_type(unexpected, &expected.as_str()))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocs {
    what: Spanned<String>,
    why: Spanned<String>,
    example_before: Spanned<String>,
    example_after: Spanned<String>,
    caveats: Spanned<String>,
}

impl Rule {
    /// Parses and validates one rule file. `file` names it in errors and gives the stem that
    /// `id` must equal.
    pub fn parse(text: &str, file: &Path, source: RuleSource) -> Result<Rule, RuleError> {
        let err = |span: Option<Range<usize>>, problem: String| RuleError {
            file: file.to_path_buf(),
            position: span.map(|s| line_col(text, s.start)),
            problem,
        };
        let raw: RawRule = toml::from_str(text).map_err(|e| {
            // toml's Display is a multi-line snippet; its message and span make one line.
            err(e.span(), one_line(e.message()))
        })?;

        let id = raw.id.get_ref();
        if !is_kebab(id) {
            return Err(err(
                Some(raw.id.span()),
                format!("id `{id}` is not kebab-case (lowercase letters, digits, single hyphens)"),
            ));
        }
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        if stem.as_deref() != Some(id.as_str()) {
            return Err(err(
                Some(raw.id.span()),
                format!(
                    "id `{id}` does not match the file name (expected `{}`)",
                    stem.unwrap_or_default()
                ),
            ));
        }
        let title = raw.title.get_ref().trim();
        if title.is_empty() || title.contains('\n') {
            return Err(err(
                Some(raw.title.span()),
                "title must be one non-empty line".into(),
            ));
        }
        let category = Category::from_word(raw.category.get_ref()).ok_or_else(|| {
            err(
                Some(raw.category.span()),
                format!(
                    "unknown category `{}` (expected one of: {})",
                    raw.category.get_ref(),
                    Category::ALL
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        let exception = exception_names(raw.exception.get_ref())
            .map_err(|p| err(Some(raw.exception.span()), p.to_string()))?;
        let message = if source == RuleSource::Builtin {
            MessagePattern::lazy(raw.message.get_ref())
        } else {
            // A project's rule is checked (compiled) at load, so a bad regex is a load error.
            Regex::new(raw.message.get_ref())
                .map(MessagePattern::compiled)
                .map_err(|e| {
                    err(
                        Some(raw.message.span()),
                        format!("message is not a valid regex: {}", regex_problem(&e)),
                    )
                })?
        };
        let name = raw.transform.get_ref();
        // A missing param is the transform's need: it points at `transform`.
        let mut params = ParamsReader::new(&raw.params, raw.transform.span());
        let transform = Transform::parse(name, MapAccessDeserializer::new(&mut params))
            .ok_or_else(|| {
                err(
                    Some(raw.transform.span()),
                    format!("unknown transform `{name}` (known: {})", KNOWN.join(", ")),
                )
            })?
            .map_err(|e| {
                err(
                    Some(params.at.clone()),
                    format!("`{name}` params: {}", one_line(e.message())),
                )
            })?;
        let confidence = Confidence::from_word(raw.confidence.get_ref()).ok_or_else(|| {
            err(
                Some(raw.confidence.span()),
                format!(
                    "unknown confidence `{}` (expected one of: high, medium, low)",
                    raw.confidence.get_ref()
                ),
            )
        })?;
        if let Some(r) = &raw.review {
            if r.get_ref().trim().is_empty() || r.get_ref().trim().contains('\n') {
                return Err(err(
                    Some(r.span()),
                    "review must be one non-empty line".into(),
                ));
            }
        }
        let d = raw.docs;
        for (name, field) in [
            ("what", &d.what),
            ("why", &d.why),
            ("example_before", &d.example_before),
            ("example_after", &d.example_after),
            ("caveats", &d.caveats),
        ] {
            if field.get_ref().trim().is_empty() {
                return Err(err(Some(field.span()), format!("docs.{name} is empty")));
            }
        }
        Ok(Rule {
            id: id.clone(),
            title: title.to_string(),
            category,
            exception,
            message,
            transform,
            confidence,
            safe: raw.safe,
            review: raw.review.map(|r| r.into_inner().trim().to_string()),
            docs: RuleDocs {
                what: d.what.into_inner(),
                why: d.why.into_inner(),
                example_before: d.example_before.into_inner(),
                example_after: d.example_after.into_inner(),
                caveats: d.caveats.into_inner(),
            },
            source,
            overrides_builtin: false,
        })
    }

    /// Whether the rule applies to an exception of type `exc_type` as the traceback printed
    /// it. A dotted rule name (`shop.errors.PaymentError`) must equal `exc_type` exactly; a
    /// bare name (`AttributeError`) is compared with the last dotted component of `exc_type`,
    /// so it also matches `builtins.AttributeError`. No subclass matching: the tool does not
    /// know the project's exception hierarchy.
    pub fn applies_to(&self, exc_type: &str) -> bool {
        let last = exc_type.rsplit('.').next().unwrap_or(exc_type);
        self.exception.iter().any(|name| {
            if name.contains('.') {
                name == exc_type
            } else {
                name == last
            }
        })
    }

    /// The named groups of the message regex when it matches the message's first line
    /// (trailing whitespace removed); `None` when it does not match. The regex is searched,
    /// not anchored: anchor it with `^...$` to match the whole line.
    pub fn captures(&self, msg: &str) -> Option<BTreeMap<String, String>> {
        let line = first_line(msg);
        let re = self.message.regex()?;
        let caps = re.captures(line)?;
        Some(
            re.capture_names()
                .flatten()
                .filter_map(|name| Some((name.to_string(), caps.name(name)?.as_str().to_string())))
                .collect(),
        )
    }

    /// What a reviewer should check in a patch of this rule (unsafe rules only).
    pub fn review_note(&self) -> Option<String> {
        if self.safe {
            return None;
        }
        Some(
            self.review
                .clone()
                .unwrap_or_else(|| "invents a value or guesses intent: read the patch".to_string()),
        )
    }
}

/// The part of an exception message that rules match: its first line, without trailing
/// whitespace (multi-line messages carry notes and context after it).
pub fn first_line(msg: &str) -> &str {
    crate::traceback::first_line(msg).trim_end()
}

/// The rules in force, sorted by id; ids are unique.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// The rules compiled into the binary. Parsed once per process; an error here is a bug in
    /// `rules/` that the test suite catches.
    pub fn builtin() -> Result<RuleSet, RuleError> {
        static BUILTIN: OnceLock<Result<RuleSet, RuleError>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                let mut set = RuleSet::default();
                for (stem, text) in BUILTIN_RULES {
                    let file = PathBuf::from(format!("rules/{stem}.toml"));
                    set.rules
                        .push(Rule::parse(text, &file, RuleSource::Builtin)?);
                }
                set.rules.sort_by(|a, b| a.id.cmp(&b.id));
                Ok(set)
            })
            .clone()
    }

    /// The built-in rules plus the project's `ROOT/.selfdebug/rules/*.toml` (read in file-name
    /// order, not recursively; other files are ignored). A project rule whose id is a built-in
    /// one replaces it. The first broken file is the error.
    pub fn load(root: &Path) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::builtin()?;
        let dir = root.join(PROJECT_RULES_DIR);
        let io_err = |file: &Path, problem: String| RuleError {
            file: file.to_path_buf(),
            position: None,
            problem,
        };
        match std::fs::metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(set),
            Err(e) => return Err(io_err(&dir, format!("cannot read: {e}"))),
            Ok(m) if !m.is_dir() => return Err(io_err(&dir, "not a directory".into())),
            Ok(_) => {}
        }
        let mut files = Vec::new();
        let entries =
            std::fs::read_dir(&dir).map_err(|e| io_err(&dir, format!("cannot read: {e}")))?;
        for entry in entries {
            let path = entry
                .map_err(|e| io_err(&dir, format!("cannot read: {e}")))?
                .path();
            if path.extension().is_some_and(|x| x == "toml") && path.is_file() {
                files.push(path);
            }
        }
        files.sort();
        for path in files {
            let bytes =
                std::fs::read(&path).map_err(|e| io_err(&path, format!("cannot read: {e}")))?;
            let text =
                String::from_utf8(bytes).map_err(|_| io_err(&path, "not valid UTF-8".into()))?;
            let rule = Rule::parse(&text, &path, RuleSource::Project(path.clone()))?;
            set.insert(rule);
        }
        Ok(set)
    }

    /// Adds a rule, replacing one with the same id (a project rule over a built-in one is
    /// marked as overriding it).
    pub fn insert(&mut self, mut rule: Rule) {
        match self.rules.binary_search_by(|r| r.id.cmp(&rule.id)) {
            Ok(i) => {
                rule.overrides_builtin = rule.source != RuleSource::Builtin
                    && (self.rules[i].source == RuleSource::Builtin
                        || self.rules[i].overrides_builtin);
                self.rules[i] = rule;
            }
            Err(i) => self.rules.insert(i, rule),
        }
    }

    /// Keeps the rules `keep` says yes to (the configured rule selection).
    pub fn retain(&mut self, keep: impl FnMut(&Rule) -> bool) {
        self.rules.retain(keep);
    }

    /// All rules, sorted by id.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules
            .binary_search_by(|r| r.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.rules[i])
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules that apply to a failure (see [`Rule::applies_to`] and [`Rule::captures`]),
    /// highest confidence first, then by id.
    pub fn matching(&self, exc_type: &str, msg: &str) -> Vec<RuleMatch<'_>> {
        let mut out: Vec<RuleMatch<'_>> = self
            .rules
            .iter()
            // The type test is a string compare; the regex runs only when it passes.
            .filter(|r| r.applies_to(exc_type))
            .filter_map(|rule| {
                Some(RuleMatch {
                    rule,
                    captures: rule.captures(msg)?,
                })
            })
            .collect();
        // `rules` is sorted by id and the sort is stable, so ties stay in id order.
        out.sort_by_key(|m| std::cmp::Reverse(m.rule.confidence));
        out
    }
}

/// Why a rule's `exception` value names no exceptions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ExceptionError {
    #[error("exception list must hold only strings")]
    NotAString,
    #[error("exception must be a string or a list of strings")]
    WrongType,
    #[error("exception list is empty")]
    Empty,
    #[error(
        "exception `{0}` is not a Python exception name (e.g. `KeyError`, `pkg.errors.Error`)"
    )]
    NotAName(String),
}

fn exception_names(value: &toml::Value) -> Result<Vec<String>, ExceptionError> {
    let names: Vec<String> = match value {
        toml::Value::String(s) => vec![s.clone()],
        toml::Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or(ExceptionError::NotAString)
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(ExceptionError::WrongType),
    };
    if names.is_empty() {
        return Err(ExceptionError::Empty);
    }
    if let Some(name) = names.iter().find(|n| !n.split('.').all(is_identifier)) {
        return Err(ExceptionError::NotAName(name.clone()));
    }
    Ok(names)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// 1-based line and character column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

fn one_line(s: &str) -> String {
    s.trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("; ")
}

/// regex's syntax errors print the pattern and a caret over several lines; keep the reason.
fn regex_problem(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| one_line(&text))
}
