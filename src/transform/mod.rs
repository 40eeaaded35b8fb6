//! Repair transforms: code that turns a located failure into candidate [`Fix`]es. Rules
//! (`rules/*.toml`) name a transform and give it parameters; the transform only proposes,
//! pytest decides.

pub mod null_guard;

use std::collections::BTreeMap;
use std::ops::Range;

use crate::edit::Fix;
use crate::source::SourceFile;
use crate::syntax::{Located, ParsedModule};

/// Names a rule's `transform` field may use.
pub const KNOWN: &[&str] = &["null_guard"];

/// Whether `name` is a transform this build knows.
pub fn exists(name: &str) -> bool {
    KNOWN.contains(&name)
}

/// Everything a transform may look at. Built by the caller from the failure, the source, the
/// matching rule and the probe.
pub struct Context<'a> {
    pub source: &'a SourceFile,
    pub module: &'a ParsedModule,
    /// The failing statement.
    pub located: &'a Located,
    /// Text range the traceback's carets mark (the failing sub-expression), when printed.
    pub focus: Option<Range<usize>>,
    /// Named groups of the rule's message regex (`attr`, `op`, `left`, `right` ...).
    pub captures: &'a BTreeMap<String, String>,
    /// The rule's parameters, as strings (`operation = "attribute"`).
    pub params: &'a BTreeMap<String, String>,
    /// What the probe saw, when it ran.
    pub probe: Option<&'a ProbeFacts>,
    /// The literal the failing test compares the result with (`assert f(x) == ""` → `""`),
    /// when its assertion shows one.
    pub expected: Option<&'a str>,
    /// The assertion line `expected` came from.
    pub expected_line: Option<&'a str>,
    /// The rule's id and confidence, stamped on every fix.
    pub rule: &'a str,
    pub confidence: crate::edit::Confidence,
}

impl Context<'_> {
    pub fn text(&self, range: &Range<usize>) -> &str {
        self.source.text().get(range.clone()).unwrap_or("")
    }
}

/// The probe's findings, reduced to what transforms use: the type of each sub-expression it
/// could evaluate, by text range in the original file.
#[derive(Debug, Default, Clone)]
pub struct ProbeFacts {
    pub types: Vec<(Range<usize>, String)>,
}

impl ProbeFacts {
    pub fn type_of(&self, range: &Range<usize>) -> Option<&str> {
        self.types
            .iter()
            .find(|(r, _)| r == range)
            .map(|(_, t)| t.as_str())
    }
}

/// Runs the named transform on a file that parses. Unknown names yield nothing (rules are
/// validated on load against [`KNOWN`]).
pub fn candidates(name: &str, ctx: &Context) -> Vec<Fix> {
    match name {
        "null_guard" => null_guard::candidates(ctx),
        _ => Vec::new(),
    }
}

/// Runs the named transform on a file that does not parse (a SyntaxError during collection):
/// only text-level transforms answer. Their fixes are still kept only when the result parses.
pub fn text_candidates(name: &str, ctx: &TextContext) -> Vec<Fix> {
    // No text-level transform is registered yet; the syntax repairs add their arm here.
    let _ = (name, ctx);
    Vec::new()
}

/// What a text-level transform may look at: the file does not parse, so there is no AST.
pub struct TextContext<'a> {
    pub source: &'a SourceFile,
    /// 1-based line Python's SyntaxError names.
    pub line: usize,
    /// 0-based character column of the caret on that line, when printed.
    pub column: Option<usize>,
    /// The exception message (`expected ':'`, `'(' was never closed` ...).
    pub msg: &'a str,
    pub captures: &'a BTreeMap<String, String>,
    pub params: &'a BTreeMap<String, String>,
    pub rule: &'a str,
    pub confidence: crate::edit::Confidence,
}

/// The literal a test's `assert CALL == LITERAL` (or `LITERAL == CALL`) compares with, from
/// the source line of the test frame. Only simple literals: strings, numbers, `None`, `True`,
/// `False`, `[]`, `{}`, `()`.
pub fn expected_literal(assert_line: &str) -> Option<String> {
    let t = assert_line.trim();
    let body = t.strip_prefix("assert ")?;
    let body = body.split(", ").next().unwrap_or(body);
    let (l, r) = body.split_once(" == ")?;
    [r.trim(), l.trim()]
        .into_iter()
        .find(|side| is_simple_literal(side))
        .map(str::to_string)
}

fn is_simple_literal(s: &str) -> bool {
    const WORDS: [&str; 6] = ["None", "True", "False", "[]", "{}", "()"];
    if WORDS.contains(&s) || s.parse::<f64>().is_ok() {
        return true;
    }
    let quoted = |q: char| s.len() >= 2 && s.starts_with(q) && s.ends_with(q);
    (quoted('"') || quoted('\'')) && !s[1..s.len() - 1].contains(['"', '\'', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations() {
        assert_eq!(
            expected_literal("assert demo.headline(article) == \"\""),
            Some("\"\"".into())
        );
        assert_eq!(expected_literal("assert 0 == f(x)"), Some("0".into()));
        assert_eq!(
            expected_literal("assert f(x) == [], 'msg'"),
            Some("[]".into())
        );
        assert_eq!(expected_literal("assert f(x) == g(y)"), None);
        assert_eq!(expected_literal("x = f()"), None);
    }
}
