//! Where the probe goes and what it evaluates: pure functions of the parsed source.

use std::ops::Range;

use rustpython_parser::ast::{self, Ranged, Stmt};
use serde::Serialize;

use super::pysrc;
use crate::source::{Encoding, SourceFile};
use crate::syntax::{self, Clause, Located, ParsedModule, StmtKind, SubExpr, SubExprKind};

/// Sub-expressions evaluated per hit at most.
pub const MAX_TARGETS: usize = 40;

/// Why the probe line sits where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionKind {
    /// Right before the failing statement, at its indentation.
    BeforeStatement,
    /// The statement is the one-line body of a compound header (`if x: return y.split()`):
    /// before that header (or before its `if` chain).
    BeforeCompoundHeader,
    /// The line is an `elif` test (or the `else:` of an `elif` chain): before the chain's `if`.
    BeforeIfChain,
    /// The line is a header (`for`/`while`/`with`/`if`/`match`/`try`...), an `except`/`case`/
    /// `else`/`finally` clause: before the compound statement.
    BeforeCompoundStatement,
    /// The line is a decorator, a `def`/`class` header or its default arguments: before the
    /// definition (its first decorator).
    BeforeDefinition,
}

/// The legal point: a new line before `line` (1-based) with `indent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Injection {
    pub line: usize,
    pub indent: String,
    pub kind: InjectionKind,
}

/// One side-effect-free sub-expression to evaluate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// As written in the source (newlines normalized to `\n`).
    pub text: String,
    /// What the probe passes to `eval` (parenthesized when multi-line, private names mangled).
    pub eval: String,
    /// `name`, `attribute` or `subscript`.
    pub kind: &'static str,
    /// Byte range in the decoded text.
    pub text_range: Range<usize>,
    /// Byte range in the file as stored (BOM and encoding accounted for).
    pub file_range: Range<usize>,
    /// 1-based line where it starts.
    pub line: usize,
}

/// Chooses the injection point for a located statement (see [`InjectionKind`]). `None` when
/// no line start before the statement is a statement boundary (cannot happen for code the
/// parser accepted, short of exotic layouts; the caller reports it).
pub fn injection_point(pm: &ParsedModule, loc: &Located) -> Option<Injection> {
    let (start, kind) = match &loc.clause {
        Clause::Statement => match &loc.header {
            Some(h) => (compound_start(pm, h), InjectionKind::BeforeCompoundHeader),
            None => (loc.range.start, InjectionKind::BeforeStatement),
        },
        Clause::Elif { .. } => (compound_start(pm, loc), InjectionKind::BeforeIfChain),
        Clause::Decorator { .. } => (loc.range.start, InjectionKind::BeforeDefinition),
        Clause::Header
            if matches!(
                loc.kind,
                StmtKind::FunctionDef | StmtKind::AsyncFunctionDef | StmtKind::ClassDef
            ) =>
        {
            (loc.range.start, InjectionKind::BeforeDefinition)
        }
        _ => {
            let s = compound_start(pm, loc);
            let kind = if s != loc.range.start {
                InjectionKind::BeforeIfChain
            } else {
                InjectionKind::BeforeCompoundStatement
            };
            (s, kind)
        }
    };
    let line = statement_line_start(pm, start)?;
    let ls = pm.line_starts()[line - 1];
    let first = &pm.text()[ls..];
    let indent_len = first.len() - first.trim_start_matches([' ', '\t', '\x0c']).len();
    Some(Injection {
        line,
        indent: first[..indent_len].to_string(),
        kind,
    })
}

/// The statement's start, or for an `elif` `If` (its range starts at `elif`), the start of the
/// `if` that begins the chain.
fn compound_start(pm: &ParsedModule, loc: &Located) -> usize {
    let mut start = loc.range.start;
    if loc.kind != StmtKind::If {
        return start;
    }
    while pm.text()[start..].starts_with("elif") {
        match if_parent(pm.body(), start) {
            Some(p) => start = p,
            None => break,
        }
    }
    start
}

/// The start of the `If` whose `orelse` is exactly the `elif` starting at `elif_start`.
fn if_parent(stmts: &[Stmt], elif_start: usize) -> Option<usize> {
    for s in stmts {
        let r = s.range();
        let (a, b) = (r.start().to_usize(), r.end().to_usize());
        if elif_start < a || elif_start >= b {
            continue;
        }
        if let Stmt::If(i) = s {
            if let [Stmt::If(e)] = i.orelse.as_slice() {
                if e.range.start().to_usize() == elif_start {
                    return Some(a);
                }
            }
        }
        for body in bodies(s) {
            if let Some(p) = if_parent(body, elif_start) {
                return Some(p);
            }
        }
    }
    None
}

fn bodies(s: &Stmt) -> Vec<&[Stmt]> {
    match s {
        Stmt::FunctionDef(x) => vec![&x.body],
        Stmt::AsyncFunctionDef(x) => vec![&x.body],
        Stmt::ClassDef(x) => vec![&x.body],
        Stmt::For(x) => vec![&x.body, &x.orelse],
        Stmt::AsyncFor(x) => vec![&x.body, &x.orelse],
        Stmt::While(x) => vec![&x.body, &x.orelse],
        Stmt::If(x) => vec![&x.body, &x.orelse],
        Stmt::With(x) => vec![&x.body],
        Stmt::AsyncWith(x) => vec![&x.body],
        Stmt::Match(x) => x.cases.iter().map(|c| c.body.as_slice()).collect(),
        Stmt::Try(x) => {
            let mut v: Vec<&[Stmt]> = vec![&x.body, &x.orelse, &x.finalbody];
            v.extend(
                x.handlers
                    .iter()
                    .map(|ast::ExceptHandler::ExceptHandler(h)| h.body.as_slice()),
            );
            v
        }
        Stmt::TryStar(x) => {
            let mut v: Vec<&[Stmt]> = vec![&x.body, &x.orelse, &x.finalbody];
            v.extend(
                x.handlers
                    .iter()
                    .map(|ast::ExceptHandler::ExceptHandler(h)| h.body.as_slice()),
            );
            v
        }
        _ => Vec::new(),
    }
}

/// The 1-based line to insert before so that the new line precedes the statement starting at
/// `start`: its own line when only whitespace precedes it there; otherwise (`a = 1; b = x.y`,
/// or a line that begins inside an earlier statement's string) the line of the statement that
/// begins that logical line.
fn statement_line_start(pm: &ParsedModule, mut start: usize) -> Option<usize> {
    // Each step moves to a strictly earlier statement, so this terminates.
    loop {
        let line = pm.line_of(start);
        let ls = pm.line_starts()[line - 1];
        if pm.text()[ls..start]
            .trim_matches([' ', '\t', '\x0c'])
            .is_empty()
        {
            return Some(line);
        }
        let earlier = syntax::locate_all(pm, line)
            .into_iter()
            .map(|l| l.range.start)
            .filter(|&s| s < start)
            .min()?;
        start = earlier;
    }
}

/// The side-effect-free sub-expressions of `loc` (and of its one-line header): names, attribute
/// chains on them, and subscripts of those with constant keys; not inside lambdas or
/// comprehensions (their names do not exist at the probe). Deduplicated by text, source order.
pub fn targets(source: &SourceFile, loc: &Located) -> Vec<Target> {
    let mut exprs: Vec<&SubExpr> = Vec::new();
    if let Some(h) = &loc.header {
        exprs.extend(h.exprs.iter());
    }
    exprs.extend(loc.exprs.iter());
    let text = source.text();
    let class = loc.class.as_ref().map(|c| c.name.as_str());
    let mut out: Vec<Target> = Vec::new();
    for e in &exprs {
        if e.in_lambda || e.in_comprehension {
            continue;
        }
        // `t op= v` reads `t` first: its value before the statement is wanted too.
        let (range, kind) = match &e.kind {
            SubExprKind::AugAssign { target, .. } => match aug_target_kind(&exprs, target, text) {
                Some(k) => (target.clone(), k),
                None => continue,
            },
            _ if !is_pure(&exprs, &e.range, text, 0, false) => continue,
            SubExprKind::Name { .. } => (e.range.clone(), "name"),
            SubExprKind::Attribute { .. } => (e.range.clone(), "attribute"),
            SubExprKind::Subscript { .. } => (e.range.clone(), "subscript"),
            _ => continue,
        };
        let raw = &text[range.clone()];
        let norm = raw.replace("\r\n", "\n").replace('\r', "\n");
        if out.iter().any(|t| t.text == norm) {
            continue;
        }
        let mut eval = match class {
            Some(c) => mangle(&norm, c),
            None => norm.clone(),
        };
        if eval.contains('\n') {
            eval = format!("(\n{eval}\n)");
        }
        out.push(Target {
            text: norm,
            eval,
            kind,
            file_range: file_offset(source, range.start)..file_offset(source, range.end),
            text_range: range,
            line: e.line,
        });
        if out.len() == MAX_TARGETS {
            break;
        }
    }
    out
}

/// The kind of an augmented assignment's target when reading it is side-effect-free: a plain
/// name (store names are not among the sub-expressions), or an attribute / constant subscript
/// of a pure expression.
fn aug_target_kind(exprs: &[&SubExpr], target: &Range<usize>, text: &str) -> Option<&'static str> {
    let t = &text[target.clone()];
    if !t.is_empty()
        && !t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return Some("name");
    }
    if !is_pure(exprs, target, text, 0, true) {
        return None;
    }
    exprs
        .iter()
        .find(|e| e.range == *target)
        .and_then(|e| match e.kind {
            SubExprKind::Attribute { .. } => Some("attribute"),
            SubExprKind::Subscript { .. } => Some("subscript"),
            _ => None,
        })
}

/// Whether the expression at `range` is a name, or a load of an attribute / constant subscript
/// of a pure expression (`any_ctx`: the outermost one may be a store target).
fn is_pure(
    exprs: &[&SubExpr],
    range: &Range<usize>,
    text: &str,
    depth: usize,
    any_ctx: bool,
) -> bool {
    if depth > 64 {
        return false;
    }
    let Some(e) = exprs.iter().find(|e| e.range == *range) else {
        return false;
    };
    match &e.kind {
        SubExprKind::Name { .. } => true,
        SubExprKind::Attribute { receiver, ctx, .. } => {
            (any_ctx || ctx.is_load()) && is_pure(exprs, receiver, text, depth + 1, false)
        }
        SubExprKind::Subscript { value, slice, ctx } => {
            (any_ctx || ctx.is_load())
                && is_constant(&text[slice.clone()])
                && is_pure(exprs, value, text, depth + 1, false)
        }
        _ => false,
    }
}

/// What to record besides values for this failure: the frame's names for a `NameError`,
/// `dir()` of the receivers of the failing attribute for an `AttributeError`, the signature of
/// the callees given the unexpected keyword for a `TypeError` (CPython's suggestions need them).
pub fn extras(
    text: &str,
    loc: &Located,
    targets: &[Target],
    exc_type: &str,
    msg: &str,
) -> pysrc::Extras {
    let short = exc_type.rsplit('.').next().unwrap_or(exc_type);
    let quoted = |after: &str| -> Option<String> {
        let rest = &msg[msg.find(after)? + after.len()..];
        Some(rest[..rest.find('\'')?].to_string())
    };
    // A receiver written twice (`self` in `self.a + self.b`) is evaluated once, at its first
    // occurrence: the same text at the statement's start is the same value.
    let index_of = |r: &Range<usize>| {
        let same_text = text.get(r.clone()).map(|t| t.replace("\r\n", "\n"));
        targets.iter().position(|t| t.text_range == *r).or_else(|| {
            targets
                .iter()
                .position(|t| Some(&t.text) == same_text.as_ref())
        })
    };
    let mut out = pysrc::Extras::default();
    match short {
        "NameError" => out.name_error = quoted("name '"),
        "AttributeError" => {
            let Some(attr) = quoted("has no attribute '") else {
                return out;
            };
            // `_C__x` in the message is written `__x` inside `class C`.
            let written = loc
                .class
                .as_ref()
                .and_then(|c| crate::syntax::mangle::unmangle(&attr, &c.name));
            for e in &loc.exprs {
                if let SubExprKind::Attribute { receiver, name, .. } = &e.kind {
                    if *name == attr || written.as_ref() == Some(name) {
                        out.dirs.extend(index_of(receiver));
                    }
                }
            }
        }
        "TypeError" => {
            let Some(kw) = quoted("unexpected keyword argument '") else {
                return out;
            };
            for e in &loc.exprs {
                if let SubExprKind::Call { func, keywords, .. } = &e.kind {
                    if keywords.contains(&kw) {
                        out.signatures.extend(index_of(func));
                    }
                }
            }
        }
        _ => {}
    }
    out.dirs.dedup();
    out.signatures.dedup();
    out
}

/// A literal key: a (signed) number, a plain string without escapes, `None`/`True`/`False`.
fn is_constant(s: &str) -> bool {
    let s = s.trim();
    let num = s.strip_prefix('-').unwrap_or(s);
    if !num.is_empty()
        && num.as_bytes()[0].is_ascii_digit()
        && num
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return true;
    }
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            let inner = &s[1..s.len() - 1];
            return !inner.contains([q, '\\', '\n', '\r']);
        }
    }
    matches!(s, "None" | "True" | "False")
}

/// Python's private-name mangling (`self.__x` in class `C` is `self._C__x`), which `eval` does
/// not apply. Strings are left alone.
fn mangle(text: &str, class: &str) -> String {
    let stripped = class.trim_start_matches('_');
    if stripped.is_empty() || !text.contains("__") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            out.push(c);
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let ident = &text[i..end];
            if ident.starts_with("__") && !ident.ends_with("__") {
                out.push('_');
                out.push_str(stripped);
            }
            out.push_str(ident);
            continue;
        }
        out.push(c);
    }
    out
}

/// A text byte offset as a byte offset in the stored file.
pub fn file_offset(source: &SourceFile, text_offset: usize) -> usize {
    let bom = if source.has_bom() { 3 } else { 0 };
    match source.encoding() {
        Encoding::Utf8 => text_offset + bom,
        Encoding::Latin1 | Encoding::Ascii => {
            source.text()[..text_offset.min(source.text().len())]
                .chars()
                .count()
                + bom
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(src: &str, line: usize) -> (Injection, Vec<String>) {
        let sf = SourceFile::from_bytes("t.py", src.as_bytes().to_vec()).unwrap();
        let pm = syntax::parse(&sf).unwrap();
        let loc = syntax::locate(&pm, line).unwrap();
        let inj = injection_point(&pm, &loc).unwrap();
        let t = targets(&sf, &loc).into_iter().map(|t| t.eval).collect();
        (inj, t)
    }

    #[test]
    fn plain_statement() {
        let (inj, t) = plan("def f(a):\n    b = a.x.y[0] + g(a).z\n", 2);
        assert_eq!((inj.line, inj.indent.as_str()), (2, "    "));
        assert_eq!(inj.kind, InjectionKind::BeforeStatement);
        // The call `g(a)` and what hangs off it are skipped; the name `g` is read.
        assert_eq!(t, ["a.x.y[0]", "a.x.y", "a.x", "a", "g"]);
    }

    #[test]
    fn elif_goes_before_the_chain() {
        let src = "def f(a):\n    if a is None:\n        pass\n    elif a.x:\n        pass\n    elif a.y.z:\n        pass\n";
        let (inj, t) = plan(src, 6);
        assert_eq!((inj.line, inj.kind), (2, InjectionKind::BeforeIfChain));
        assert_eq!(t, ["a.y.z", "a.y", "a"]);
    }

    #[test]
    fn one_line_body_goes_before_its_header() {
        let (inj, t) = plan("def f(x, y):\n    if x: return y.split()\n", 2);
        assert_eq!(
            (inj.line, inj.kind),
            (2, InjectionKind::BeforeCompoundHeader)
        );
        assert_eq!(t, ["x", "y.split", "y"]);
    }

    #[test]
    fn decorators_and_defaults_go_before_the_def() {
        let src = "class C:\n    @d.x\n    @e\n    def m(self, a=K.v):\n        pass\n";
        let (inj, _) = plan(src, 3);
        assert_eq!((inj.line, inj.kind), (2, InjectionKind::BeforeDefinition));
        let (inj, t) = plan(src, 4);
        assert_eq!((inj.line, inj.kind), (2, InjectionKind::BeforeDefinition));
        assert!(t.contains(&"K.v".to_string()), "{t:?}");
    }

    #[test]
    fn except_clause_goes_before_try() {
        let src = "try:\n    pass\nexcept E.x:\n    pass\n";
        let (inj, t) = plan(src, 3);
        assert_eq!(
            (inj.line, inj.kind),
            (1, InjectionKind::BeforeCompoundStatement)
        );
        assert_eq!(t, ["E.x", "E"]);
    }

    #[test]
    fn semicolon_and_string_continuation() {
        let src = "x = \"\"\"a\n\"\"\"; y = x.z\n";
        let sf = SourceFile::from_bytes("t.py", src.as_bytes().to_vec()).unwrap();
        let pm = syntax::parse(&sf).unwrap();
        // The `y = x.z` statement starts on line 2, which begins inside the string.
        let loc = syntax::locate_all(&pm, 2)
            .into_iter()
            .find(|l| &src[l.range.clone()] == "y = x.z")
            .unwrap();
        let inj = injection_point(&pm, &loc).unwrap();
        assert_eq!(inj.line, 1);
    }

    #[test]
    fn constants_calls_and_mangling() {
        let src = "class C:\n    def m(self, d, k):\n        return d['a'] + d[k] + d[-1] + self.__p.q + f(d).x\n";
        let (_, t) = plan(src, 3);
        assert_eq!(
            t,
            [
                "d['a']",
                "d",
                "k",
                "d[-1]",
                "self._C__p.q",
                "self._C__p",
                "self",
                "f"
            ]
        );
    }

    #[test]
    fn augmented_targets_are_read() {
        let (_, t) = plan("def f(s, it, o):\n    s += it.price\n", 2);
        assert_eq!(t, ["s", "it.price", "it"]);
        let (_, t) = plan("def f(o, d):\n    o.total[0] += d\n", 2);
        assert_eq!(t, ["o.total[0]", "o.total", "o", "d"]);
        let (_, t) = plan("def f(o, d):\n    o.m()[0] += d\n", 2);
        assert_eq!(t, ["o.m", "o", "d"]);
    }

    #[test]
    fn file_offsets_follow_the_encoding() {
        let src = b"# -*- coding: latin-1 -*-\ns = '\xe9'; t = s.x\n".to_vec();
        let sf = SourceFile::from_bytes("t.py", src.clone()).unwrap();
        let pm = syntax::parse(&sf).unwrap();
        let loc = syntax::locate_all(&pm, 2).pop().unwrap();
        let t = targets(&sf, &loc);
        let sx = t.iter().find(|t| t.text == "s.x").unwrap();
        assert_eq!(&src[sx.file_range.clone()], b"s.x");
    }
}
