//! Repair transforms: code that turns a located failure into candidate [`Fix`]es. Rules
//! (`rules/*.toml`) name a transform and give it parameters; the transform only proposes,
//! pytest decides.

pub mod arith;
pub mod common;
pub mod imports;
pub mod lookup;
pub mod names;
pub mod null_flow;
pub mod null_guard;
pub mod null_keys;
mod null_target;
pub mod sinks;
pub mod stdlib;
pub mod suggest;
pub mod syntax_fix;
pub mod types;

use std::collections::BTreeMap;
use std::ops::Range;

use crate::edit::Fix;
use crate::source::SourceFile;
use crate::syntax::{Located, ParsedModule};

/// Names a rule's `transform` field may use.
pub const KNOWN: &[&str] = &[
    "null_guard",
    "syntax_fix",
    "types",
    "attr_rename",
    "key_lookup",
    "index_guard",
    "zero_division",
    "name_error",
    "unbound_local",
    "import_name",
    // Planned by crate::plan::raises (the failure is located in the test).
    "expected_raise",
];

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
    /// The failing function's return value reaches the test unchanged: every frame between the
    /// test and it is a `return call(...)`, so what the function returns is what the test sees.
    pub returns_to_test: bool,
    /// The standard library of the project's interpreter (asked on first use).
    pub stdlib: &'a stdlib::Stdlib,
    /// The rule's id and confidence, stamped on every fix.
    pub rule: &'a str,
    pub confidence: crate::edit::Confidence,
}

impl Context<'_> {
    pub fn text(&self, range: &Range<usize>) -> &str {
        self.source.text().get(range.clone()).unwrap_or("")
    }

    /// The probe's type for `range`; for an expression written more than once in the
    /// statement (the probe evaluates each text once, at its first occurrence), the type of
    /// the same text.
    pub fn probe_type(&self, range: &Range<usize>) -> Option<&str> {
        let probe = self.probe?;
        probe.type_of(range).or_else(|| {
            let text = self.text(range);
            probe
                .types
                .iter()
                .find(|(r, _)| self.text(r) == text)
                .map(|(_, t)| t.as_str())
        })
    }
}

/// A callee's parameters: (name, `inspect.Parameter` kind name), in signature order.
pub type Params = Vec<(String, String)>;

/// The probe's findings, reduced to what transforms use, by text range in the original file:
/// the type of each sub-expression it could evaluate, and what CPython's suggestions look at
/// (the frame's names, `dir()` of a failing attribute's receiver, a callee's parameters).
#[derive(Debug, Default, Clone)]
pub struct ProbeFacts {
    pub types: Vec<(Range<usize>, String)>,
    /// `sys.version_info[:2]` of the interpreter the test ran with.
    pub python_version: Option<(u32, u32)>,
    pub scope: Option<crate::probe::ScopeNames>,
    pub dirs: Vec<(Range<usize>, crate::probe::DirNames)>,
    /// The parameters of the callee at each range.
    pub params: Vec<(Range<usize>, Params)>,
}

impl ProbeFacts {
    pub fn type_of(&self, range: &Range<usize>) -> Option<&str> {
        self.types
            .iter()
            .find(|(r, _)| r == range)
            .map(|(_, t)| t.as_str())
    }

    pub fn dir_of(&self, range: &Range<usize>) -> Option<&crate::probe::DirNames> {
        self.dirs.iter().find(|(r, _)| r == range).map(|(_, d)| d)
    }

    pub fn params_of(&self, range: &Range<usize>) -> Option<&[(String, String)]> {
        self.params
            .iter()
            .find(|(r, _)| r == range)
            .map(|(_, p)| p.as_slice())
    }
}

/// Runs the named transform on a file that parses. Unknown names yield nothing (rules are
/// validated on load against [`KNOWN`]).
pub fn candidates(name: &str, ctx: &Context) -> Vec<Fix> {
    match name {
        "null_guard" => null_guard::candidates(ctx),
        "attr_rename" => lookup::attr::candidates(ctx),
        "key_lookup" => lookup::key::candidates(ctx),
        "index_guard" => lookup::index::candidates(ctx),
        "zero_division" => arith::candidates(ctx),
        "types" => types::candidates(ctx),
        "name_error" => names::candidates(ctx),
        "unbound_local" => names::unbound_candidates(ctx),
        "import_name" => imports::candidates(ctx),
        _ => Vec::new(),
    }
}

/// Runs the named transform on a file that does not parse (a SyntaxError during collection):
/// only text-level transforms answer. Their fixes are still kept only when the result parses.
pub fn text_candidates(name: &str, ctx: &TextContext) -> Vec<Fix> {
    match name {
        "syntax_fix" => syntax_fix::candidates(ctx),
        _ => Vec::new(),
    }
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
    let (l, r) = body.split_once(" == ")?;
    // `assert f(a, b) == 0, "message"`: the right side ends at its first top-level comma.
    let r = until_top_level_comma(r);
    [r.trim(), l.trim()]
        .into_iter()
        .find(|side| is_simple_literal(side))
        .map(str::to_string)
}

/// `s` up to its first comma outside brackets and string literals.
fn until_top_level_comma(s: &str) -> &str {
    unquoted(s)
        .find(|&(_, c, depth)| c == ',' && depth == 0)
        .map_or(s, |(i, _, _)| &s[..i])
}

/// The characters of a line of Python outside its string literals, each with its byte offset
/// and the bracket depth before it (an unmatched closing bracket is at depth 0). A text-level
/// scan for one line of source, where no parse is at hand.
pub(crate) fn unquoted(s: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let (mut depth, mut quote, mut escaped) = (0i32, None::<char>, false);
    s.char_indices().filter_map(move |(i, c)| {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            return None;
        }
        let before = depth;
        match c {
            '\'' | '"' => {
                quote = Some(c);
                return None;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        Some((i, c, before))
    })
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
        assert_eq!(
            expected_literal("assert f(x) == 'a, b', g(1, 2)"),
            Some("'a, b'".into())
        );
    }

    #[test]
    fn unquoted_skips_strings_and_tracks_depth() {
        let got: Vec<(usize, char, i32)> = unquoted(r#"f("a,)", [x]), 'q\'s'"#).collect();
        let chars: String = got.iter().map(|(_, c, _)| *c).collect();
        assert_eq!(chars, "f(, [x]), ");
        // `,` inside the call is at depth 1, the one after it at 0; `)` closes from depth 1.
        let depths: Vec<i32> = got.iter().map(|(_, _, d)| *d).collect();
        assert_eq!(depths, [0, 0, 1, 1, 1, 2, 2, 1, 0, 0]);
        assert_eq!(got[8], (13, ',', 0));
    }
}
