//! Template: a string literal that was meant to be an f-string.
//!
//! `fstring-prefix`: `"Field {name} is {value.kind}"` prints its braces as written when the `f`
//! is forgotten. A literal qualifies when every brace in it opens a simple replacement field
//! (`{name}`, `{name.attr}`, with an optional `!r` or `:spec`) whose name is bound where the
//! statement runs (a local bound before it, or in the statement's own comprehension, or a
//! module name), and nothing formats it later: it is not the receiver of `.format(`/
//! `.format_map(`, not the left side of `%`, not a docstring, and not assigned to a name the
//! module calls `.format(` on. An implicit concatenation of several literals gets the prefix on
//! every part that holds such a field, in one edit; a part with `{}` or `{0}` (a template for
//! `str.format`) or an escaped `{{` leaves the whole literal alone.

use std::ops::Range;

use rustpython_parser::ast::{Constant, Expr, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::search::mutate::{in_loop, names_of, one_line};
use crate::syntax::rng;

use super::calls::module_names;
use super::operators::{mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::FstringPrefix];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    // A bare string statement is a docstring (or a comment written as one).
    if matches!(site.stmt, Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::Constant(_))) {
        return Vec::new();
    }
    let text = site.module.text();
    let stmt = rng(site.stmt.range());
    let module = module_names(site.module.body()).bound;
    let names = site.func.map(names_of).unwrap_or_default();
    let looped = site.func.is_some_and(|f| in_loop(f, stmt.clone()));
    // `self`/`cls` are no locals of `names_of`, but a method's first parameter is bound.
    let receiver = site.func.and_then(|f| match f {
        Stmt::FunctionDef(d) => d.args.args.first().map(|a| a.def.arg.to_string()),
        Stmt::AsyncFunctionDef(d) => d.args.args.first().map(|a| a.def.arg.to_string()),
        _ => None,
    });
    let bound = |n: &str| {
        module.contains(n)
            || receiver.as_deref() == Some(n)
            || names
                .iter()
                .any(|(m, first)| m == n && (looped || *first < stmt.start || stmt.contains(first)))
    };
    // Literals something formats later.
    let mut formatted: Vec<Range<usize>> = Vec::new();
    for e in own_exprs(site.stmt) {
        match e {
            Expr::Attribute(a) if matches!(a.attr.as_str(), "format" | "format_map") => {
                formatted.push(rng(a.value.range()));
            }
            Expr::BinOp(b) if matches!(b.op, Operator::Mod) => {
                formatted.push(rng(b.left.range()));
            }
            _ => {}
        }
    }
    let assigned: Vec<String> = match site.stmt {
        Stmt::Assign(a) => a
            .targets
            .iter()
            .flat_map(crate::syntax::queries::stored_in_expr)
            .collect(),
        _ => Vec::new(),
    };
    if assigned
        .iter()
        .any(|n| text.contains(&format!("{n}.format(")) || text.contains(&format!("{n}.format_map(")))
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    for e in own_exprs(site.stmt) {
        let Expr::Constant(c) = e else { continue };
        if !matches!(c.value, Constant::Str(_)) {
            continue;
        }
        let r = rng(c.range);
        if formatted.contains(&r) {
            continue;
        }
        let Some(parts) = string_parts(text, r.clone()) else {
            continue;
        };
        let mut edits = Vec::new();
        let mut shown = Vec::new();
        let mut clean = true;
        for p in &parts {
            match fields(&text[p.body.clone()]) {
                Some(roots) if roots.is_empty() => {}
                Some(roots) if roots.iter().all(|n| bound(n)) => {
                    if p.prefix.chars().any(|ch| !matches!(ch, 'r' | 'R')) {
                        clean = false;
                    }
                    edits.push(Edit::insertion(p.start, "f"));
                    shown.push(one_line(&text[p.start..p.end]));
                }
                _ => clean = false,
            }
        }
        if !clean || edits.is_empty() {
            continue;
        }
        out.push(mutant(
            site,
            Family::FstringPrefix,
            format!("`{}` → an f-string", shown.join("` `")),
            edits,
            1.0,
            Vec::new(),
        ));
    }
    out
}

/// One literal of an implicit concatenation: where it starts (its prefix), the prefix, the
/// text between its quotes.
struct Part {
    start: usize,
    prefix: String,
    body: Range<usize>,
    /// Past its closing quote.
    end: usize,
}

/// The literals making up the string constant at `r` (several when implicitly concatenated);
/// `None` when the text is not read as plain literals, comments and blanks between them.
fn string_parts(text: &str, r: Range<usize>) -> Option<Vec<Part>> {
    let b = text.as_bytes();
    let mut i = r.start;
    let mut out = Vec::new();
    while i < r.end {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b'\\' | b'(' | b')' => i += 1,
            b'#' => {
                while i < r.end && b[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {
                let start = i;
                while i < r.end && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
                let prefix = text[start..i].to_string();
                let q = *b.get(i).filter(|q| matches!(q, b'\'' | b'"'))?;
                let triple = b.get(i..i + 3) == Some(&[q, q, q][..]);
                let close = if triple { 3 } else { 1 };
                i += close;
                let body_start = i;
                loop {
                    if i >= r.end {
                        return None;
                    }
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q && (!triple || b.get(i..i + 3) == Some(&[q, q, q][..])) {
                        break;
                    }
                    i += 1;
                }
                out.push(Part {
                    start,
                    prefix,
                    body: body_start..i,
                    end: i + close,
                });
                i += close;
            }
        }
    }
    Some(out)
}

/// The root names of a literal's replacement fields (`{a.b!r:>4}` → `a`); `None` when a brace
/// does not open such a field (`{}`, `{0}`, `{{`, a lone `}`).
fn fields(body: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(['{', '}']) {
        if rest[at..].starts_with('}') {
            return None;
        }
        let after = &rest[at + 1..];
        let end = after.find('}')?;
        let inner = &after[..end];
        if inner.contains('{') {
            return None;
        }
        let field = inner.split([':', '!']).next().unwrap_or_default();
        let ident = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        if !field.split('.').all(ident) {
            return None;
        }
        let conv = inner[field.len()..].strip_prefix('!');
        if conv.is_some_and(|c| !matches!(c.split(':').next(), Some("r" | "s" | "a"))) {
            return None;
        }
        out.push(field.split('.').next().unwrap_or_default().to_string());
        rest = &after[end + 1..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn a_literal_with_bound_fields_gets_the_prefix_on_each_part_that_has_one() {
        let src = "def check(fields):\n    for name, kind in fields:\n        msg = (\n            'field \"{name}\" is a '  # the type\n            \"class, not an instance; \"\n            r'use {kind.__name__}()'\n        )\n        raise TypeError(msg)\n";
        let m = super::super::mutants_at(src, 3, mutants);
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0].title,
            "`'field \"{name}\" is a '` `r'use {kind.__name__}()'` → an f-string"
        );
        let new = crate::edit::apply(src, &m[0].edits).unwrap();
        assert_eq!(
            new,
            src.replace("'field", "f'field").replace("r'use", "fr'use")
        );
    }

    #[test]
    fn templates_and_unbound_names_are_left_alone() {
        let one = |src: &str, line| titles(src, line, mutants);
        // Formatted later, `%`, a positional field, an escaped brace, a name bound after.
        assert!(one("def f(a):\n    return '{a}'.format(a=a)\n", 2).is_empty());
        assert!(one("def f(a):\n    t = '{a}'\n    return t.format(a=1)\n", 2).is_empty());
        assert!(one("def f(a):\n    return '{a} %s' % a\n", 2).is_empty());
        assert!(one("def f(a):\n    return '{a} {}'\n", 2).is_empty());
        assert!(one("def f(a):\n    return '{{a}} {a}'\n", 2).is_empty());
        assert!(one("def f(a):\n    s = '{b}'\n    b = 1\n    return s\n", 2).is_empty());
        assert!(one("def f(a):\n    '''Uses {a}.'''\n    return a\n", 2).is_empty());
        assert!(one("def f(a):\n    return b'{a}'\n", 2).is_empty());
        // A module name and a comprehension's own target are bound.
        let ok = "LIMIT = 3\n\ndef f(xs):\n    return ['{x} of {LIMIT!r:>4}' for x in xs]\n";
        assert_eq!(
            one(ok, 4),
            vec![pair(
                "`'{x} of {LIMIT!r:>4}'` → an f-string",
                "    return [f'{x} of {LIMIT!r:>4}' for x in xs]"
            )]
        );
    }
}
