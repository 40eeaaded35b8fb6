//! Repair transforms: code that turns a located failure into candidate [`Fix`]es. Rules
//! (`rules/*.toml`) name a transform and give it parameters; the transform only proposes,
//! pytest decides.

pub mod arith;
pub mod common;
pub mod imports;
pub mod lookup;
pub mod names;
mod null_default;
pub mod null_flow;
pub mod null_guard;
pub mod null_keys;
mod null_target;
pub mod sinks;
pub mod stdlib;
pub mod syntax_fix;
pub mod types;

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Deserializer, Serialize};

use crate::edit::Fix;
use crate::source::SourceFile;
use crate::syntax::{Located, ParsedModule};

/// Declares the transforms: each line is a [`Transform`] variant, the name rules write in
/// `transform`, and the type of its `[params]`. Adding a transform is one line here (and the
/// compiler then asks for it in [`candidates`] and [`text_candidates`]).
macro_rules! transforms {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $params:ty;)+) => {
        /// A rule's transform with its params, checked when the rule is loaded.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Transform {
            $($(#[$doc])* $variant($params),)+
        }

        /// Names a rule's `transform` field may use, in declaration order.
        pub const KNOWN: &[&str] = &[$($name),+];

        impl Transform {
            /// The name rules write in `transform`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Transform::$variant(_) => $name,)+
                }
            }

            /// The params as a table (only those the rule wrote, sorted by key).
            pub fn params(&self) -> toml::Table {
                match self {
                    $(Transform::$variant(p) => params_table(p),)+
                }
            }

            /// The transform `name` with its params read from `params` (a rule's `[params]`
            /// table); `None` when no transform has that name.
            pub fn parse<'de, D: Deserializer<'de>>(
                name: &str,
                params: D,
            ) -> Option<Result<Transform, D::Error>> {
                match name {
                    $($name => Some(<$params>::deserialize(params).map(Transform::$variant)),)+
                    _ => None,
                }
            }
        }
    };
}

transforms! {
    NullGuard = "null_guard", null_guard::RuleParams;
    /// Text-level: runs only on a file that does not parse.
    SyntaxFix = "syntax_fix", syntax_fix::RuleParams;
    Types = "types", types::RuleParams;
    AttrRename = "attr_rename", lookup::attr::RuleParams;
    KeyLookup = "key_lookup", NoParams;
    IndexGuard = "index_guard", lookup::index::RuleParams;
    ZeroDivision = "zero_division", NoParams;
    NameError = "name_error", names::RuleParams;
    UnboundLocal = "unbound_local", NoParams;
    ImportName = "import_name", imports::RuleParams;
    /// Planned by [`crate::plan::raises`]: the failure is located in the test.
    ExpectedRaise = "expected_raise", NoParams;
    /// Planned by [`crate::plan::exports`]: the failing import is in the test.
    ReExport = "re_export", NoParams;
}

/// The params of a transform that takes none: any key in `[params]` is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

fn params_table(p: &impl Serialize) -> toml::Table {
    // Structs of strings and enums always serialize to a table.
    toml::Table::try_from(p).unwrap_or_default()
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

/// Runs a rule's transform on a file that parses.
pub fn candidates(transform: &Transform, ctx: &Context) -> Vec<Fix> {
    match transform {
        Transform::NullGuard(p) => null_guard::candidates(ctx, p),
        Transform::AttrRename(p) => lookup::attr::candidates(ctx, p),
        Transform::KeyLookup(NoParams {}) => lookup::key::candidates(ctx),
        Transform::IndexGuard(p) => lookup::index::candidates(ctx, p),
        Transform::ZeroDivision(NoParams {}) => arith::candidates(ctx),
        Transform::Types(p) => types::candidates(ctx, p),
        Transform::NameError(p) => names::candidates(ctx, p),
        Transform::UnboundLocal(NoParams {}) => names::unbound_candidates(ctx),
        Transform::ImportName(p) => imports::candidates(ctx, p),
        // Text-level (see `text_candidates`), and planned from the test.
        Transform::SyntaxFix(_) | Transform::ExpectedRaise(_) | Transform::ReExport(_) => {
            Vec::new()
        }
    }
}

/// Runs a rule's transform on a file that does not parse (a SyntaxError during collection):
/// only text-level transforms answer. Their fixes are still kept only when the result parses.
pub fn text_candidates(transform: &Transform, ctx: &TextContext) -> Vec<Fix> {
    match transform {
        Transform::SyntaxFix(p) => syntax_fix::candidates(ctx, p),
        Transform::NullGuard(_)
        | Transform::Types(_)
        | Transform::AttrRename(_)
        | Transform::KeyLookup(_)
        | Transform::IndexGuard(_)
        | Transform::ZeroDivision(_)
        | Transform::NameError(_)
        | Transform::UnboundLocal(_)
        | Transform::ImportName(_)
        | Transform::ExpectedRaise(_)
        | Transform::ReExport(_) => Vec::new(),
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
    fn every_known_name_reads_as_its_own_transform() {
        use serde::de::value::{Error, MapDeserializer};
        let empty = || MapDeserializer::<_, Error>::new(std::iter::empty::<(String, String)>());
        for name in KNOWN {
            match Transform::parse(name, empty()) {
                Some(Ok(t)) => assert_eq!(t.name(), *name),
                // A transform with a required param: still its own, only incomplete.
                Some(Err(e)) => assert!(e.to_string().starts_with("missing field"), "{name}: {e}"),
                None => panic!("{name} is known but does not parse"),
            }
        }
        assert!(Transform::parse("make_it_work", empty()).is_none());
    }

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
