//! Edits of the data a check reads: when a statement tests a value that comes from a regex, a
//! collection of known keys or a similar literal of the module or the class (`_LABEL =
//! re.compile(...)`, `KNOWN = {"timeout", ...}`, `_FIELDS = ("id", "name", ...)`), the bug is
//! often in that literal and not in the check: a character class that misses a character, a
//! quantifier, an anchor, a key that is missing or misspelled compared with the ones the tests
//! use. A project's own exception raised by such a check (`raise LabelError(...)`,
//! `raise UnknownField(field)`) is the typical failure.
//!
//! The data is found from the suspicious statement: the names it reads (for an `if`, its
//! condition), one step back through the function's own assignments (`match = _LABEL.match(s)`
//! then `if match is None:`), resolved to an assignment at module level or in the enclosing
//! class (`self._FIELDS`, `cls._FIELDS`), or a pattern literal passed to `re.*` directly. The
//! failure's words (the strings its message and the failing test's lines quote: `'backoff'`,
//! `'build_id=1234'`) choose the keys and the characters to try. Nothing here runs code or
//! checks that the result parses: [`crate::edit::Fix::apply_to`] re-parses every candidate.

use std::collections::BTreeSet;
use std::ops::Range;

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::queries;
use crate::syntax::walk::{self, Node};
use crate::syntax::{rng, ParsedModule, MAX_AST_DEPTH};
use crate::traceback::Failure;

use super::family::Family;
use super::mutate::Mutant;
use super::priors::Priors;

/// This file's families and [`super::formats`]'s, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[
    Family::RegexClass,
    Family::RegexQuantifier,
    Family::RegexAnchor,
    Family::KnownKey,
    Family::FormatSwap,
    Family::FormatDirective,
    Family::FormatField,
];

/// Whether a family edits data (its edit is on the data's line, not the checked statement's).
pub fn is_data_family(family: Family) -> bool {
    FAMILIES.contains(&family)
}

/// Words tried at most (the message's and the failing test line's strings).
const MAX_WORDS: usize = 8;

/// `re` functions whose first argument is a pattern.
const RE_FUNCS: &[&str] = &[
    "compile",
    "match",
    "fullmatch",
    "search",
    "findall",
    "finditer",
    "split",
    "sub",
    "subn",
];

/// The strings a failure quotes: in its message (`unknown parameter 'backoff'`, a `KeyError`'s
/// `'email'`) and in the failing test's own lines (`parse_label("build_id=1234")`), first seen
/// first, without duplicates or empty ones.
pub fn failure_words(failure: &Failure) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut texts: Vec<&str> = vec![failure.msg.as_str()];
    for f in &failure.frames {
        let parts: Vec<&str> = f.file.split('/').collect();
        if crate::traceback::locate::is_test_file(&parts) {
            if let Some(code) = &f.code {
                texts.push(code);
            }
        }
    }
    for text in texts {
        for w in quoted(text) {
            if !w.is_empty() && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out.truncate(MAX_WORDS);
    out
}

/// The contents of the plain `'...'`/`"..."` strings of a line of Python or of a repr (no
/// escapes inside: a word with a backslash is not one the tests spell plainly).
fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\'' && c != '"' {
            continue;
        }
        let rest = &text[i + 1..];
        let Some(end) = rest.find(c) else { break };
        let word = &rest[..end];
        if !word.contains('\\') && !word.contains('\n') {
            out.push(word.to_string());
        }
        // Skip past the closing quote.
        while chars.peek().is_some_and(|(j, _)| *j <= i + 1 + end) {
            chars.next();
        }
    }
    out
}

/// What a checked statement reads: its expressions and the values its function assigns to the
/// locals they name, with the function and class around it (where the data is looked up).
pub(super) struct Reads<'a> {
    pub func: Option<&'a Stmt>,
    pub class: Option<&'a ast::StmtClassDef>,
    pub exprs: Vec<&'a Expr>,
}

/// What the statement on `line` reads (see [`Reads`]).
pub(super) fn reads(module: &ParsedModule, line: u32) -> Option<Reads<'_>> {
    let (stmt, func) = queries::statement_at(module, line)?;
    // What the statement reads: an `if`/`while`/`elif` header reads its condition only.
    let read: Vec<&Expr> = match stmt {
        Stmt::If(i) => vec![i.test.as_ref()],
        Stmt::While(w) => vec![w.test.as_ref()],
        Stmt::Assert(a) => vec![a.test.as_ref()],
        _ => vec![],
    };
    let mut exprs: Vec<&Expr> = read;
    if exprs.is_empty() {
        walk::walk(&[Node::Stmt(stmt)], 2, |node, depth| match node {
            Node::Expr(e) => {
                exprs.push(e);
                false
            }
            Node::Stmt(_) => depth == 1,
            _ => false,
        });
    }
    // One step back: the function's assignments to the locals the statement reads.
    let mut locals: BTreeSet<String> = BTreeSet::new();
    for e in &exprs {
        names_in(e, &mut locals);
    }
    if let Some(f) = func {
        for value in assigned_values(f, &locals) {
            exprs.push(value);
        }
    }
    let class = func.and_then(|f| enclosing_class(module, f));
    Some(Reads { func, class, exprs })
}

/// The data edits reachable from the statement on `line` (see the module docs).
pub fn mutants(module: &ParsedModule, line: u32, priors: &Priors, words: &[String]) -> Vec<Mutant> {
    let Some(Reads { class, exprs, .. }) = reads(module, line) else {
        return Vec::new();
    };
    let text = module.text();
    let mut sites: Vec<Range<usize>> = Vec::new();
    let mut m = DataMutator {
        text,
        priors,
        words,
        name: String::new(),
        out: Vec::new(),
    };
    for e in &exprs {
        let mut refs: Vec<Ref> = Vec::new();
        refs_in(e, &mut refs);
        for r in refs {
            let value = match &r {
                Ref::Name(n) => module_value(module, n),
                Ref::Attr(n) => class.and_then(|c| class_value(c, n)),
                Ref::Pattern(p, _) => Some(*p),
                Ref::NamedPattern(n, false, _) => module_value(module, n),
                Ref::NamedPattern(n, true, _) => class.and_then(|c| class_value(c, n)),
            };
            let Some(value) = value else { continue };
            let at = rng(value.range());
            if sites.contains(&at) {
                continue;
            }
            sites.push(at);
            // The title names the data: the edit is on its line, not on the checked one.
            m.name = match &r {
                Ref::Name(n) | Ref::Attr(n) | Ref::NamedPattern(n, ..) => format!("`{n}`"),
                Ref::Pattern(..) => "the pattern".to_string(),
            };
            // A pattern passed to `re.*` here: the call's flags say how it is read.
            let passed = match r {
                Ref::Pattern(_, v) | Ref::NamedPattern(_, _, v) => Some(v),
                _ => None,
            };
            m.data(value, passed);
        }
    }
    m.out
}

/// A reference from the checked statement to data.
enum Ref<'a> {
    /// A module-level name (`KNOWN`, `_LABEL`).
    Name(String),
    /// An attribute of `self`/`cls` or of a class by name (`self._FIELDS`).
    Attr(String),
    /// A pattern literal passed to `re.*` right there, and the call's flags.
    Pattern(&'a Expr, Flags),
    /// A pattern passed to `re.*` by name: a module name, or a class attribute (`true`); and
    /// the call's flags.
    NamedPattern(String, bool, Flags),
}

fn names_in(e: &Expr, out: &mut BTreeSet<String>) {
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            out.insert(n.id.to_string());
        }
        matches!(node, Node::Expr(_))
    });
}

fn refs_in<'a>(e: &'a Expr, out: &mut Vec<Ref<'a>>) {
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Name(n)) => out.push(Ref::Name(n.id.to_string())),
            Node::Expr(Expr::Attribute(a)) => {
                if let Expr::Name(base) = a.value.as_ref() {
                    out.push(Ref::Attr(a.attr.to_string()));
                    // `re.compile` is no data; `KNOWN.keys()` reads `KNOWN`.
                    if base.id.as_str() != "re" {
                        out.push(Ref::Name(base.id.to_string()));
                    }
                    return false;
                }
            }
            Node::Expr(Expr::Call(c)) => match re_pattern(c) {
                Some(p) if is_str(p) => out.push(Ref::Pattern(p, flags_of(c))),
                Some(Expr::Name(n)) => {
                    out.push(Ref::NamedPattern(n.id.to_string(), false, flags_of(c)));
                }
                Some(Expr::Attribute(a)) => {
                    out.push(Ref::NamedPattern(a.attr.to_string(), true, flags_of(c)));
                }
                _ => {}
            },
            _ => {}
        }
        matches!(node, Node::Expr(_))
    });
}

/// The pattern argument of `re.compile(P)`, `re.match(P, s)`, ...
fn re_pattern(c: &ast::ExprCall) -> Option<&Expr> {
    let Expr::Attribute(a) = c.func.as_ref() else {
        return None;
    };
    let Expr::Name(base) = a.value.as_ref() else {
        return None;
    };
    (base.id.as_str() == "re" && RE_FUNCS.contains(&a.attr.as_str()))
        .then(|| c.args.first())
        .flatten()
}

/// The flags of a pattern that change how the edits read it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Flags {
    /// `re.VERBOSE`/`re.X`: spaces and `#` comments are not part of the pattern.
    pub verbose: bool,
    /// `re.MULTILINE`/`re.M`: `$` ends each line, and `\Z` is no fix of it.
    pub multiline: bool,
}

/// Which of [`Flags`] a `re.*` call's flags (after the pattern, or `flags=`) set.
fn flags_of(c: &ast::ExprCall) -> Flags {
    let mut found = Flags::default();
    let flags = c
        .args
        .iter()
        .skip(1)
        .chain(c.keywords.iter().map(|k| &k.value));
    for f in flags {
        walk::walk(&[Node::Expr(f)], MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::Attribute(a)) = node {
                found.verbose |= matches!(a.attr.as_str(), "VERBOSE" | "X");
                found.multiline |= matches!(a.attr.as_str(), "MULTILINE" | "M");
            }
            matches!(node, Node::Expr(_))
        });
    }
    found
}

pub(super) fn is_str(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, Constant::Str(_)))
}

/// The values the function assigns to `names` (plain `name = value` statements).
pub(super) fn assigned_values<'a>(func: &'a Stmt, names: &BTreeSet<String>) -> Vec<&'a Expr> {
    let body = match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => return Vec::new(),
    };
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Stmt(Stmt::Assign(a)) => {
            if a.targets
                .iter()
                .any(|t| matches!(t, Expr::Name(n) if names.contains(n.id.as_str())))
            {
                out.push(a.value.as_ref());
            }
            false
        }
        Node::Stmt(_) => true,
        _ => false,
    });
    out
}

/// The value of `name = VALUE` (or `name: T = VALUE`) at the top level of `body`.
fn assigned_in<'a>(body: &'a [Stmt], name: &str) -> Option<&'a Expr> {
    body.iter().rev().find_map(|s| match s {
        Stmt::Assign(a)
            if a.targets.len() == 1
                && matches!(&a.targets[0], Expr::Name(n) if n.id.as_str() == name) =>
        {
            Some(a.value.as_ref())
        }
        Stmt::AnnAssign(a) if matches!(a.target.as_ref(), Expr::Name(n) if n.id.as_str() == name) => {
            a.value.as_deref()
        }
        _ => None,
    })
}

pub(super) fn module_value<'a>(module: &'a ParsedModule, name: &str) -> Option<&'a Expr> {
    assigned_in(module.body(), name)
}

pub(super) fn class_value<'a>(class: &'a ast::StmtClassDef, name: &str) -> Option<&'a Expr> {
    assigned_in(&class.body, name)
}

/// The class whose body defines `func` (a method), searched at the module's top level.
pub(super) fn enclosing_class<'a>(
    module: &'a ParsedModule,
    func: &Stmt,
) -> Option<&'a ast::StmtClassDef> {
    let at = rng(func.range());
    module.body().iter().find_map(|s| match s {
        Stmt::ClassDef(c) if c.body.iter().any(|m| rng(m.range()) == at) => Some(c),
        _ => None,
    })
}

struct DataMutator<'a> {
    text: &'a str,
    priors: &'a Priors,
    words: &'a [String],
    /// The data's name as titles show it (`` `_LABEL` ``, "the pattern").
    name: String,
    out: Vec<Mutant>,
}

impl DataMutator<'_> {
    fn push(&mut self, family: Family, title: String, edits: Vec<Edit>, weight: f64) {
        self.out.push(Mutant {
            family,
            title: format!("{}: {title}", self.name),
            edits,
            prior: self.priors.family(family) * weight,
            effects: Vec::new(),
        });
    }

    /// The edits of one data value: a compiled pattern, a pattern literal, a collection of keys.
    /// `passed`: the value is passed to `re.*` as a pattern (with these flags).
    fn data(&mut self, value: &Expr, passed: Option<Flags>) {
        match value {
            Expr::Call(c) => {
                if let Some(p) = re_pattern(c) {
                    self.pattern(p, flags_of(c));
                    return;
                }
                // `frozenset({...})`, `set([...])`, `tuple(...)`.
                let wraps = matches!(c.func.as_ref(), Expr::Name(n)
                    if matches!(n.id.as_str(), "frozenset" | "set" | "tuple" | "list"));
                if let (true, [inner]) = (wraps, &c.args[..]) {
                    self.keys(inner);
                }
            }
            Expr::Constant(_) if passed.is_some() => {
                self.pattern(value, passed.unwrap_or_default())
            }
            // A table of compiled patterns (`RULES = {"END": re.compile(r"$"), ...}`): each.
            Expr::Dict(d)
                if d.values
                    .iter()
                    .any(|v| matches!(v, Expr::Call(c) if re_pattern(c).is_some())) =>
            {
                for v in &d.values {
                    if let Expr::Call(c) = v {
                        if let Some(p) = re_pattern(c) {
                            self.pattern(p, flags_of(c));
                        }
                    }
                }
            }
            _ => self.keys(value),
        }
    }

    /// A set, list or tuple of strings (a key missing or misspelled), or a dict with string
    /// keys (a key misspelled).
    fn keys(&mut self, value: &Expr) {
        let (elts, can_add): (Vec<&Expr>, bool) = match value {
            Expr::Set(s) => (s.elts.iter().collect(), true),
            Expr::List(l) => (l.elts.iter().collect(), true),
            Expr::Tuple(t) => (t.elts.iter().collect(), true),
            Expr::Dict(d) => (d.keys.iter().flatten().collect(), false),
            _ => return,
        };
        let keys: Vec<(&Expr, &str)> = elts
            .iter()
            .filter_map(|e| match e {
                Expr::Constant(c) => match &c.value {
                    Constant::Str(s) => Some((*e, s.as_str())),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        // Only a collection of string keys, all of them.
        if keys.is_empty() || keys.len() != elts.len() {
            return;
        }
        let words: Vec<&String> = self
            .words
            .iter()
            .filter(|w| is_key_like(w) && !keys.iter().any(|(_, k)| k == w))
            .collect();
        for w in words {
            // The misspelled key closest to the word.
            let near = keys
                .iter()
                .map(|(e, k)| (crate::suggest::distance(k, w), *e, *k))
                .filter(|(d, _, k)| {
                    let n = k.chars().count().min(w.chars().count());
                    n >= 3 && *d <= 4 && *d < n
                })
                .min_by_key(|(d, _, _)| *d);
            if let Some((_, e, k)) = near {
                let r = rng(e.range());
                let lit = self.text[r.clone()].replacen(k, w, 1);
                self.push(
                    Family::KnownKey,
                    format!("key `{k}` → `{w}`"),
                    vec![Edit::replacement(r, lit)],
                    1.0,
                );
            }
            if can_add {
                // After the last key, in its quoting.
                let (last, _) = keys[keys.len() - 1];
                let r = rng(last.range());
                let src = &self.text[r.clone()];
                let q = if src.starts_with('\'') { '\'' } else { '"' };
                if w.contains(q) {
                    continue;
                }
                self.push(
                    Family::KnownKey,
                    format!("add the key `{w}`"),
                    vec![Edit::insertion(r.end, format!(", {q}{w}{q}"))],
                    0.7,
                );
            }
        }
    }

    /// A pattern literal: each character class with a character of a word it misses, each
    /// quantifier one step wider, an end anchor dropped. Adjacent literals (`r"^[a-z]" r"+$"`)
    /// are read as the one pattern they make; a verbose one without its spaces and comments.
    fn pattern(&mut self, lit: &Expr, flags: Flags) {
        let verbose = flags.verbose;
        // Its body is what the regex engine sees when every piece is raw or has no backslash.
        let Some(pieces) = literal_pieces(self.text, lit) else {
            return;
        };
        if pieces.iter().any(|p| !p.raw && p.body.contains('\\')) {
            return;
        }
        let raw = pieces.iter().all(|p| p.raw);
        let joined = Joined::of(&pieces, verbose);
        let body = joined.text.as_str();
        let at = |i: usize| joined.offsets[i];
        // The source range of the body's `r` (one piece: its characters are adjacent there).
        let char_end = |i: usize| at(i) + body[i..].chars().next().map_or(1, char::len_utf8);
        // An insertion goes right after the character before it (in its piece, before the
        // spaces of a verbose pattern), not at the start of what follows.
        let span = |r: Range<usize>| match r.len() {
            0 if r.start > 0 => {
                let before = body[..r.start]
                    .chars()
                    .next_back()
                    .map_or(1, char::len_utf8);
                char_end(r.start - before)..char_end(r.start - before)
            }
            0 => at(0)..at(0),
            // One character of one piece: contiguous in the source.
            _ => at(r.start)..at(r.start) + r.len(),
        };
        let tokens = regex_atoms(body);
        let chars = self.word_chars();
        for atom in &tokens {
            if let Atom::Class { range, negated } = atom {
                if *negated {
                    continue;
                }
                let inner = &body[range.start + 1..range.end - 1];
                // A class of ranges or escapes misses a range, not one letter or digit.
                let mid = inner.get(1..inner.len().saturating_sub(1)).unwrap_or("");
                let ranged = inner.contains('\\') || mid.contains('-');
                for &c in &chars {
                    if class_matches(inner, c) || (c.is_alphanumeric() && ranged) {
                        continue;
                    }
                    let Some(add) = class_char(c, raw) else {
                        continue;
                    };
                    // Before a trailing `-` (a literal dash stays last).
                    let end = range.end - 1 - usize::from(inner.ends_with('-') && inner.len() > 1);
                    self.push(
                        Family::RegexClass,
                        format!("add `{c}` to `[{inner}]`"),
                        vec![Edit::insertion(at(end), add)],
                        1.0,
                    );
                }
            }
            if let Some(q) = atom.quantifier(body) {
                let wider = match q.1 {
                    "?" => Some("*"),
                    "+" => Some("*"),
                    "" => Some("+"),
                    _ => None,
                };
                if let Some(w) = wider {
                    let what = &body[atom.range().clone()];
                    let weight = if q.1.is_empty() { 0.5 } else { 1.0 };
                    self.push(
                        Family::RegexQuantifier,
                        format!("`{what}{}` → `{what}{w}`", q.1),
                        vec![Edit::replacement(span(q.0.clone()), w.to_string())],
                        weight,
                    );
                }
            }
        }
        // A `$` that also accepts a trailing newline: `\Z` is Python's true end (not under
        // MULTILINE, where `$` ends each line on purpose).
        let multiline = flags.multiline || inline_flags(body).contains('m');
        for i in end_anchors(body).into_iter().filter(|_| !multiline) {
            // Spelled for the piece it is written in.
            let in_raw = pieces
                .iter()
                .find(|p| (p.body_start..p.body_start + p.body.len()).contains(&at(i)))
                .is_some_and(|p| p.raw);
            let z = if in_raw { "\\Z" } else { "\\\\Z" };
            self.push(
                Family::RegexAnchor,
                "`$` → `\\Z` (`$` also matches before a trailing newline)".to_string(),
                vec![Edit::replacement(span(i..i + 1), z.to_string())],
                1.0,
            );
        }
        // A `$` that refuses a trailing part the tests accept.
        if body.ends_with('$') && !body.ends_with("\\$") {
            self.push(
                Family::RegexAnchor,
                "drop the end anchor `$`".to_string(),
                vec![Edit::replacement(
                    span(body.len() - 1..body.len()),
                    String::new(),
                )],
                1.0,
            );
        }
    }

    /// The characters of the failure's words, letters and digits last (a class misses a
    /// separator more often than a letter), each once.
    fn word_chars(&self) -> Vec<char> {
        let mut out: Vec<char> = Vec::new();
        for w in self.words {
            for c in w.chars() {
                if !c.is_control() && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out.sort_by_key(|c| c.is_alphanumeric());
        out.truncate(16);
        out
    }
}

/// The letters of a pattern's inline flag groups (`(?m)`, `(?im)`, `(?m:...)`).
fn inline_flags(body: &str) -> String {
    body.match_indices("(?")
        .flat_map(|(i, _)| body[i + 2..].chars().take_while(char::is_ascii_alphabetic))
        .collect()
}

/// The offsets of the `$` anchors of a regex body: outside character classes, not escaped.
fn end_anchors(body: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut escaped, mut class) = (false, None::<usize>);
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (c, class) {
            ('\\', _) => escaped = true,
            ('[', None) => class = Some(i),
            // A `]` right after `[` or `[^` is a member, not the end.
            (']', Some(start)) if !matches!(&body[start..i], "[" | "[^") => class = None,
            ('$', None) => out.push(i),
            _ => {}
        }
    }
    out
}

/// The bodies of a string constant written as adjacent plain or raw literals (`r"^[a-z]"
/// r"+$"`, across lines inside parentheses, with comments between them), in order. None when
/// one piece is a bytes, f- or other literal.
pub(super) fn literal_pieces<'a>(text: &'a str, lit: &Expr) -> Option<Vec<Literal<'a>>> {
    if !is_str(lit) {
        return None;
    }
    let r = rng(lit.range());
    let b = text.as_bytes();
    let mut i = r.start;
    let mut out = Vec::new();
    while i < r.end {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b'\\' | b'(' | b')' => i += 1,
            b'#' => i += text[i..r.end].find('\n').unwrap_or(r.end - i),
            _ => {
                let q = i + text[i..r.end].find(['\'', '"'])?;
                let prefix = text[i..q].to_ascii_lowercase();
                if !matches!(prefix.as_str(), "" | "r" | "u") {
                    return None;
                }
                let quote = if text[q..].starts_with("\"\"\"") || text[q..].starts_with("'''") {
                    &text[q..q + 3]
                } else {
                    &text[q..q + 1]
                };
                let body_start = q + quote.len();
                // The closing quote: the first unescaped one (a backslash escapes a quote in
                // raw literals too).
                let mut j = body_start;
                let close = loop {
                    if j >= r.end {
                        return None;
                    }
                    if b[j] == b'\\' {
                        j += 2;
                    } else if text[j..].starts_with(quote) {
                        break j;
                    } else {
                        j += 1;
                    }
                };
                out.push(Literal {
                    body_start,
                    body: &text[body_start..close],
                    raw: prefix == "r",
                });
                i = close + quote.len();
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The body of one plain string literal as the source spells it (see [`plain_literal`]).
pub(super) struct Literal<'a> {
    /// Where the body starts in the module's text.
    pub body_start: usize,
    pub body: &'a str,
    pub raw: bool,
}

/// The body of `lit` when it is one plain (`"..."`, `u"..."`) or raw (`r"..."`) string literal:
/// no implicit concatenation, no bytes, no f-string (their offsets and values differ).
pub(super) fn plain_literal<'a>(text: &'a str, lit: &Expr) -> Option<Literal<'a>> {
    if !is_str(lit) {
        return None;
    }
    let r = rng(lit.range());
    let src = &text[r.clone()];
    let prefix_len = src.find(['\'', '"'])?;
    let prefix = src[..prefix_len].to_ascii_lowercase();
    if !matches!(prefix.as_str(), "" | "r" | "u") {
        return None;
    }
    let q = &src[prefix_len..];
    let quote_len = if q.starts_with("\"\"\"") || q.starts_with("'''") {
        3
    } else {
        1
    };
    if q.len() < 2 * quote_len || !q.ends_with(&q[..quote_len]) {
        return None;
    }
    let body_start = r.start + prefix_len + quote_len;
    let body = &text[body_start..r.end - quote_len];
    // A quote inside means two literals side by side (or an escaped quote): not one body.
    if body.contains(&q[..1]) {
        return None;
    }
    Some(Literal {
        body_start,
        body,
        raw: prefix == "r",
    })
}

/// The body of adjacent literal pieces as one string, with each byte's offset in the module's
/// text (and one past the end): what a regex engine reads, mapped back to where it is written.
struct Joined {
    text: String,
    offsets: Vec<usize>,
}

impl Joined {
    /// `verbose`: whitespace and `#` comments outside character classes are dropped.
    fn of(pieces: &[Literal], verbose: bool) -> Joined {
        let mut text = String::new();
        let mut offsets = Vec::new();
        for p in pieces {
            for (i, c) in p.body.char_indices() {
                text.push(c);
                offsets.extend(std::iter::repeat_n(p.body_start + i, c.len_utf8()));
            }
        }
        let end = pieces.last().map_or(0, |p| p.body_start + p.body.len());
        if !verbose {
            offsets.push(end);
            return Joined { text, offsets };
        }
        let (mut out, mut kept) = (String::new(), Vec::new());
        let (mut in_class, mut comment, mut escaped) = (false, false, false);
        for (i, c) in text.char_indices() {
            let keep = if comment {
                comment = c != '\n';
                false
            } else if escaped {
                escaped = false;
                true
            } else {
                match c {
                    '\\' => escaped = true,
                    '[' => in_class = true,
                    ']' => in_class = false,
                    '#' if !in_class => comment = true,
                    _ => {}
                }
                in_class || !(c.is_whitespace() || comment)
            };
            if keep {
                out.push(c);
                kept.extend_from_slice(&offsets[i..i + c.len_utf8()]);
            }
        }
        kept.push(end);
        Joined {
            text: out,
            offsets: kept,
        }
    }
}

/// A key-like word: an identifier, maybe with dashes or dots (`user_agent`, `content-type`).
fn is_key_like(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && w.len() <= 64
        && w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A top-level element of a pattern that a quantifier may follow.
#[derive(Debug, PartialEq)]
enum Atom {
    /// `[...]`, its whole range.
    Class { range: Range<usize>, negated: bool },
    /// `\d`, `\w`, `.`, a plain character.
    Single(Range<usize>),
    /// A group `(...)`: only its closing parenthesis's range.
    Group(Range<usize>),
}

impl Atom {
    fn range(&self) -> &Range<usize> {
        match self {
            Atom::Class { range, .. } | Atom::Single(range) | Atom::Group(range) => range,
        }
    }

    /// The quantifier right after the atom (its range, its text; empty when none), for
    /// classes and escapes only: those are where a pattern's width is decided.
    fn quantifier<'b>(&self, body: &'b str) -> Option<(Range<usize>, &'b str)> {
        let end = match self {
            Atom::Class { range, .. } => range.end,
            Atom::Single(r) if body[r.clone()].starts_with('\\') => r.end,
            _ => return None,
        };
        let next = body[end..].chars().next();
        match next {
            Some(c @ ('?' | '+' | '*')) => {
                // A lazy or possessive suffix is left alone.
                if matches!(body[end + 1..].chars().next(), Some('?' | '+')) {
                    return None;
                }
                Some((end..end + 1, &body[end..end + c.len_utf8()]))
            }
            Some('{') => None,
            _ => Some((end..end, "")),
        }
    }
}

/// The pattern's atoms in order (classes, escapes, single characters, group ends).
fn regex_atoms(body: &str) -> Vec<Atom> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                let len = body[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push(Atom::Single(i..i + 1 + len));
                i += 1 + len;
            }
            b'[' => {
                let start = i;
                let mut j = i + 1;
                let negated = b.get(j) == Some(&b'^');
                if negated {
                    j += 1;
                }
                // A `]` first is a literal.
                if b.get(j) == Some(&b']') {
                    j += 1;
                }
                while j < b.len() && b[j] != b']' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= b.len() {
                    return out;
                }
                out.push(Atom::Class {
                    range: start..j + 1,
                    negated,
                });
                i = j + 1;
            }
            b')' => {
                out.push(Atom::Group(i..i + 1));
                i += 1;
            }
            _ => {
                let len = body[i..].chars().next().map_or(1, char::len_utf8);
                out.push(Atom::Single(i..i + len));
                i += len;
            }
        }
    }
    out
}

/// Whether a class body (between the brackets) matches `c`: ranges, single characters and the
/// escapes `\d`, `\w`, `\s` (ASCII reading; a char it cannot judge counts as matched, so no
/// edit is proposed for it).
fn class_matches(inner: &str, c: char) -> bool {
    let chars: Vec<char> = inner.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let x = chars[i];
        if x == '\\' {
            let Some(&e) = chars.get(i + 1) else {
                return true;
            };
            let hit = match e {
                'd' => c.is_ascii_digit(),
                'w' => c.is_alphanumeric() || c == '_',
                's' => c.is_whitespace(),
                'D' | 'W' | 'S' => true,
                other => other == c,
            };
            if hit {
                return true;
            }
            i += 2;
            continue;
        }
        if chars.get(i + 1) == Some(&'-') && i + 2 < chars.len() {
            let hi = chars[i + 2];
            if hi == '\\' {
                return true;
            }
            if x <= c && c <= hi {
                return true;
            }
            i += 3;
            continue;
        }
        if x == c {
            return true;
        }
        i += 1;
    }
    false
}

/// `c` as it goes into a character class, or none when it needs a backslash and the literal is
/// not raw (or is a quote, a line break).
fn class_char(c: char, raw: bool) -> Option<String> {
    match c {
        '\'' | '"' | '\n' | '\r' => None,
        ']' | '\\' | '^' | '[' => raw.then(|| format!("\\{c}")),
        // It goes last (or before a trailing `-`): a literal dash there.
        '-' => Some("-".into()),
        _ => Some(c.to_string()),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::path::Path;

    fn titles(src: &str, line: u32, words: &[&str]) -> Vec<(String, String)> {
        first_changes(src, line, words, mutants)
    }

    /// (title, the first changed line) of each mutant `f` proposes at `line` of `src` (a module
    /// `m.py`, builtin priors), given the failure's `words`.
    pub(in crate::search) fn first_changes(
        src: &str,
        line: u32,
        words: &[&str],
        f: fn(&ParsedModule, u32, &Priors, &[String]) -> Vec<Mutant>,
    ) -> Vec<(String, String)> {
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        f(&pm, line, Priors::builtin(), &words)
            .into_iter()
            .map(|m| {
                let new = crate::edit::apply(src, &m.edits).unwrap();
                let changed = new
                    .lines()
                    .zip(src.lines())
                    .find(|(a, b)| a != b)
                    .map(|(a, _)| a.to_string())
                    .unwrap_or_default();
                (m.title, changed)
            })
            .collect()
    }

    #[test]
    fn quoted_words() {
        assert_eq!(quoted("unknown parameter 'backoff'"), vec!["backoff"]);
        assert_eq!(
            quoted(r#"assert parse("a, b")["email"] == 'x'"#),
            vec!["a, b", "email", "x"]
        );
    }

    #[test]
    fn a_class_gets_the_missing_character_of_the_word() {
        let src = "import re\n_L = re.compile(r\"^([a-z][a-z0-9]*)=(.*)$\")\n\n\ndef f(t):\n    m = _L.match(t)\n    if m is None:\n        raise ValueError(t)\n    return m\n";
        let got = titles(src, 7, &["build_id=1"]);
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            lines.contains(&"_L = re.compile(r\"^([a-z][a-z0-9_]*)=(.*)$\")"),
            "{got:?}"
        );
        assert!(lines.contains(&"_L = re.compile(r\"^([a-z_][a-z0-9]*)=(.*)$\")"));
        // `=` is matched by neither class but `_` is what the word has besides: both tried.
        assert!(lines.contains(&"_L = re.compile(r\"^([a-z][a-z0-9]*)=(.*)\")"));
        assert!(lines.contains(&"_L = re.compile(r\"^([a-z]+[a-z0-9]*)=(.*)$\")"));
        // Characters the class has already are not added, nor a digit to a class of ranges.
        assert!(!got.iter().any(|(t, _)| t.starts_with("add `b`")));
        assert!(!got.iter().any(|(t, _)| t.starts_with("add `1`")));
    }

    #[test]
    fn known_keys_renamed_or_added() {
        let src = "KNOWN = {\"timeout\", \"retries\"}\n\n\ndef set(name):\n    if name not in KNOWN:\n        raise KeyError(name)\n";
        let got = titles(src, 5, &["backoff", "retires"]);
        assert_eq!(
            got,
            vec![
                (
                    "`KNOWN`: add the key `backoff`".to_string(),
                    "KNOWN = {\"timeout\", \"retries\", \"backoff\"}".to_string()
                ),
                (
                    "`KNOWN`: key `retries` → `retires`".to_string(),
                    "KNOWN = {\"timeout\", \"retires\"}".to_string()
                ),
                (
                    "`KNOWN`: add the key `retires`".to_string(),
                    "KNOWN = {\"timeout\", \"retries\", \"retires\"}".to_string()
                ),
            ]
        );
    }

    #[test]
    fn class_attribute_fields() {
        let src = "class R:\n    _F = ('id', 'emial')\n\n    def get(self, f):\n        if f not in self._F:\n            raise KeyError(f)\n        return 1\n";
        let got = titles(src, 5, &["email"]);
        assert_eq!(got[0].1, "    _F = ('id', 'email')");
        assert_eq!(got[1].1, "    _F = ('id', 'emial', 'email')");
    }

    #[test]
    fn a_pattern_passed_by_name() {
        let src = "import re\nKEY = r\"[a-z]+\"\n\n\ndef ok(k):\n    if not re.fullmatch(KEY, k):\n        raise ValueError(k)\n";
        let got = titles(src, 6, &["max-age"]);
        assert_eq!(got[0].1, "KEY = r\"[a-z-]+\"");
    }

    #[test]
    fn adjacent_literals_are_one_pattern() {
        let src = "import re\n_ID = re.compile(\n    r\"^[a-z]\"  # the head\n    r\"[a-z0-9]*$\"\n)\n\n\ndef ok(k):\n    if not _ID.match(k):\n        raise ValueError(k)\n";
        let got = titles(src, 9, &["build_7"]);
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(lines.contains(&"    r\"[a-z0-9_]*$\""), "{got:?}");
        assert!(lines.contains(&"    r\"[a-z0-9]*\""), "{got:?}");
        // The head's class is followed by the next piece: its `+` goes at the piece's end.
        assert!(lines.contains(&"    r\"^[a-z]+\"  # the head"), "{got:?}");
        assert_eq!(got[0].0, "`_ID`: add `_` to `[a-z]`");
    }

    #[test]
    fn a_verbose_pattern_without_its_spaces_and_comments() {
        let src = "import re\n_KV = re.compile(\n    r\"\"\"\n    ^ (?P<key> [a-z]+ )   # a key, [lowercase]\n    = (?P<value> \\d )\n    $\"\"\",\n    re.VERBOSE,\n)\n\n\ndef ok(k):\n    if not _KV.match(k):\n        raise ValueError(k)\n";
        let got = titles(src, 12, &["max-age=10"]);
        let lines: Vec<&str> = got.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            lines.contains(&"    ^ (?P<key> [a-z-]+ )   # a key, [lowercase]"),
            "{got:?}"
        );
        // `\d` widened in place; the comment's `[lowercase]` is no class.
        assert!(lines.contains(&"    = (?P<value> \\d+ )"), "{got:?}");
        assert!(!got.iter().any(|(t, _)| t.contains("lowercase")), "{got:?}");
        assert!(lines.contains(&"    \"\"\","), "{got:?}");
    }

    #[test]
    fn f_strings_and_bytes_are_no_pattern_data() {
        let src = "import re\n\n\ndef ok(k, sep):\n    if not re.match(rf\"[a-z]{sep}[a-z]\", k):\n        raise ValueError(k)\n";
        assert!(titles(src, 5, &["a_b"]).is_empty());
        let src = "import re\n\n\ndef ok(k):\n    if not re.match(rb\"[a-z]\", k):\n        raise ValueError(k)\n";
        assert!(titles(src, 5, &["a_b"]).is_empty());
    }

    #[test]
    fn an_end_anchor_becomes_the_true_end() {
        let src = "import re\n_NAME = re.compile(r\"^[a-z_]+$\")\n\n\ndef valid(n):\n    return _NAME.match(n) is not None\n";
        let got = titles(src, 6, &[]);
        assert_eq!(
            got,
            vec![
                (
                    "`_NAME`: `[a-z_]+` → `[a-z_]*`".to_string(),
                    "_NAME = re.compile(r\"^[a-z_]*$\")".to_string()
                ),
                (
                    "`_NAME`: `$` → `\\Z` (`$` also matches before a trailing newline)".to_string(),
                    "_NAME = re.compile(r\"^[a-z_]+\\Z\")".to_string()
                ),
                (
                    "`_NAME`: drop the end anchor `$`".to_string(),
                    "_NAME = re.compile(r\"^[a-z_]+\")".to_string()
                ),
            ]
        );
        // Per line on purpose under MULTILINE, inline or passed: no `\Z`; an escaped `$` and
        // one in a class are no anchors.
        for flags in ["r\"^a$\", re.M", "r\"(?im)^a$\"", "r\"^a\\$[$]\""] {
            let src = format!(
                "import re\n_A = re.compile({flags})\n\n\ndef ok(n):\n    return _A.match(n)\n"
            );
            assert!(
                !titles(&src, 6, &[]).iter().any(|(t, _)| t.contains("\\Z")),
                "{flags}"
            );
        }
    }

    #[test]
    fn a_table_of_patterns_is_data_too() {
        // Non-raw literal: `\Z` is written `\\Z`.
        let src = "import re\nRULES = {\n    \"WORD\": re.compile(\"[a-z]+\"),\n    \"END\": re.compile(\"$\"),\n}\n\n\ndef at(name, text, pos):\n    return RULES[name].match(text, pos)\n";
        let got = titles(src, 9, &[]);
        assert!(
            got.contains(&(
                "`RULES`: `$` → `\\Z` (`$` also matches before a trailing newline)".to_string(),
                "    \"END\": re.compile(\"\\\\Z\"),".to_string()
            )),
            "{got:?}"
        );
    }

    #[test]
    fn class_membership() {
        assert!(class_matches("a-z0-9", '5'));
        assert!(!class_matches("a-z0-9", '_'));
        assert!(class_matches(r"\w", '_'));
        assert!(class_matches(r"\d.", '.'));
        assert!(!class_matches(r"\d.", '-'));
    }
}
