//! Template: a test of a value that may be `None`, too loose or too strict about emptiness.
//!
//! `none-test`: a truth test where a `None` test was meant, or the reverse. An explicitly empty
//! list, an empty string or `0` passed on purpose must be honoured, not replaced by a default:
//! `if x:` → `if x is not None:`, `not x` → `x is None`, `x or default()` → `default() if x
//! is None else x`, `a if x else b` → `a if x is not None else b`. And the reverse, where an
//! empty string must count as missing too: `x is None` → `not x`, `x is not None` → `x`.
//!
//! Only at names that can be `None` (keeps the space small): a parameter whose default is
//! `None` or whose annotation says `None`/`Optional`, a local assigned `None`, a local the
//! probe saw as `None`, and `self.attr` where the class assigns it `None`, annotates it so, or
//! stores such a parameter in it.

use rustpython_parser::ast::{self, BoolOp, CmpOp, Constant, Expr, Ranged, Stmt, UnaryOp};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::super::mutate::one_line;
use super::operators::{mutant, own_exprs};
use super::siblings::class_of;
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::NoneTest];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let nullable = Nullable::of(site, func);
    if nullable.names.is_empty() && nullable.attrs.is_empty() {
        return Vec::new();
    }
    let text = site.module.text();
    let mut props: Vec<(std::ops::Range<usize>, String, f64)> = Vec::new();
    // Truth tests: the statement's condition and every conditional expression's, through
    // `and`/`or`; the `or`s walked there are tests, not defaults.
    let mut tests: Vec<&Expr> = match site.stmt {
        Stmt::If(s) => vec![s.test.as_ref()],
        Stmt::While(s) => vec![s.test.as_ref()],
        Stmt::Assert(s) => vec![s.test.as_ref()],
        _ => Vec::new(),
    };
    let exprs = own_exprs(site.stmt);
    for e in &exprs {
        if let Expr::IfExp(i) = e {
            tests.push(i.test.as_ref());
        }
    }
    let mut tested_ors: Vec<std::ops::Range<usize>> = Vec::new();
    for t in tests {
        truth_tests(t, &nullable, text, &mut tested_ors, &mut props);
    }
    for e in &exprs {
        match e {
            // `not x` → `x is None`.
            Expr::UnaryOp(u) if matches!(u.op, UnaryOp::Not) && nullable.holds(&u.operand) => {
                let x = &text[rng(u.operand.range())];
                props.push((rng(u.range), format!("{x} is None"), 1.0));
            }
            // `x is None` → `not x`, `x is not None` → `x`: an empty value counts as missing.
            Expr::Compare(c)
                if c.ops.len() == 1
                    && matches!(c.ops[0], CmpOp::Is | CmpOp::IsNot)
                    && is_none(&c.comparators[0])
                    && nullable.holds(&c.left) =>
            {
                let x = &text[rng(c.left.range())];
                let new = if matches!(c.ops[0], CmpOp::Is) {
                    format!("not {x}")
                } else {
                    x.to_string()
                };
                props.push((rng(c.range), new, 0.7));
            }
            // `x or default` used as a value → `default if x is None else x`.
            Expr::BoolOp(b)
                if matches!(b.op, BoolOp::Or)
                    && b.values.len() == 2
                    && nullable.holds(&b.values[0])
                    && !tested_ors.contains(&rng(b.range)) =>
            {
                let x = &text[rng(b.values[0].range())];
                let d = &text[rng(b.values[1].range())];
                let mut new = format!("{d} if {x} is None else {x}");
                if !bare_value(site.stmt, &exprs, e, text) {
                    new = format!("({new})");
                }
                props.push((rng(b.range), new, 1.0));
            }
            _ => {}
        }
    }
    props
        .into_iter()
        .map(|(r, new, w)| {
            mutant(
                site,
                Family::NoneTest,
                format!("`{}` → `{}`", one_line(&text[r.clone()]), one_line(&new)),
                vec![Edit::replacement(r, new)],
                w,
                Vec::new(),
            )
        })
        .collect()
}

/// `x` tested for truth in `t` (through `and`/`or`) → `x is not None`.
fn truth_tests(
    t: &Expr,
    nullable: &Nullable,
    text: &str,
    tested_ors: &mut Vec<std::ops::Range<usize>>,
    out: &mut Vec<(std::ops::Range<usize>, String, f64)>,
) {
    match t {
        Expr::BoolOp(b) => {
            tested_ors.push(rng(b.range));
            for v in &b.values {
                truth_tests(v, nullable, text, tested_ors, out);
            }
        }
        _ if nullable.holds(t) => {
            let r = rng(t.range());
            out.push((r.clone(), format!("{} is not None", &text[r]), 1.0));
        }
        _ => {}
    }
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, Constant::None))
}

/// Whether a conditional expression can replace `e` without parentheses: `e` is the
/// statement's value itself, a call's argument or an element of a display.
fn bare_value(stmt: &Stmt, exprs: &[&Expr], e: &Expr, text: &str) -> bool {
    let r = rng(e.range());
    // Already in parentheses of its own or of a call.
    if text[..r.start].trim_end().ends_with('(') && text[r.end..].trim_start().starts_with(')') {
        return true;
    }
    let parent = exprs.iter().find(|p| {
        let mut kids = Vec::new();
        walk::children(Node::Expr(p), &mut kids);
        kids.iter().any(|k| k.range() == r)
    });
    match parent {
        Some(p) => matches!(
            p,
            Expr::Call(_) | Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) | Expr::Dict(_)
        ),
        None => matches!(
            stmt,
            Stmt::Assign(_) | Stmt::AnnAssign(_) | Stmt::Return(_) | Stmt::Expr(_)
        ),
    }
}

/// The names and `self` attributes of a function that can hold `None`.
struct Nullable {
    names: Vec<String>,
    attrs: Vec<String>,
}

impl Nullable {
    fn of(site: &Site, func: &Stmt) -> Nullable {
        let text = site.module.text();
        let mut names: Vec<String> = nullable_params(func, text);
        let body = match func {
            Stmt::FunctionDef(f) => &f.body,
            Stmt::AsyncFunctionDef(f) => &f.body,
            _ => return Nullable { names, attrs: Vec::new() },
        };
        let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            if let Node::Stmt(Stmt::Assign(a)) = node {
                if is_none(&a.value) {
                    for t in &a.targets {
                        if let Expr::Name(n) = t {
                            names.push(n.id.to_string());
                        }
                    }
                }
            }
            !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        });
        for (name, ty) in site.probed.into_iter().flatten() {
            if ty == "NoneType" {
                names.push(name.clone());
            }
        }
        let attrs = class_of(site.module.body(), func)
            .map(|c| nullable_attrs(c, text))
            .unwrap_or_default();
        Nullable { names, attrs }
    }

    fn holds(&self, e: &Expr) -> bool {
        match e {
            Expr::Name(n) => self.names.iter().any(|x| x == n.id.as_str()),
            Expr::Attribute(a) => {
                matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self")
                    && self.attrs.iter().any(|x| x == a.attr.as_str())
            }
            _ => false,
        }
    }
}

/// Whether an annotation admits `None` (`X | None`, `Optional[X]`, `Union[X, None]`).
fn admits_none(annotation: &Expr, text: &str) -> bool {
    let t = &text[rng(annotation.range())];
    t.contains("None") || t.contains("Optional")
}

/// The parameters of `func` that can be `None`: default `None`, or annotated so.
fn nullable_params(func: &Stmt, text: &str) -> Vec<String> {
    let args = match func {
        Stmt::FunctionDef(f) => &f.args,
        Stmt::AsyncFunctionDef(f) => &f.args,
        _ => return Vec::new(),
    };
    args.posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
        .filter(|a| {
            a.default.as_deref().is_some_and(is_none)
                || a.def
                    .annotation
                    .as_deref()
                    .is_some_and(|t| admits_none(t, text))
        })
        .map(|a| a.def.arg.to_string())
        .filter(|n| !matches!(n.as_str(), "self" | "cls"))
        .collect()
}

/// The attributes of a class that can be `None`: a field annotated so or defaulting to `None`,
/// `self.x = None`, or `self.x = p` with `p` a parameter of that method that can be `None`.
fn nullable_attrs(class: &Stmt, text: &str) -> Vec<String> {
    let Stmt::ClassDef(cd) = class else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for s in &cd.body {
        if let Stmt::AnnAssign(a) = s {
            if let Expr::Name(n) = a.target.as_ref() {
                if admits_none(&a.annotation, text) || a.value.as_deref().is_some_and(is_none) {
                    out.push(n.id.to_string());
                }
            }
        }
    }
    for m in &cd.body {
        let params = nullable_params(m, text);
        let body: &[Stmt] = match m {
            Stmt::FunctionDef(f) => &f.body,
            Stmt::AsyncFunctionDef(f) => &f.body,
            _ => continue,
        };
        let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            let (targets, value): (Vec<&Expr>, &Expr) = match node {
                Node::Stmt(Stmt::Assign(a)) => (a.targets.iter().collect(), a.value.as_ref()),
                Node::Stmt(Stmt::AnnAssign(ast::StmtAnnAssign {
                    target,
                    value: Some(v),
                    ..
                })) => (vec![target.as_ref()], v.as_ref()),
                _ => return !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_))),
            };
            let none_ish = is_none(value)
                || matches!(value, Expr::Name(n) if params.iter().any(|p| p == n.id.as_str()));
            if none_ish {
                for t in targets {
                    if let Expr::Attribute(at) = t {
                        if matches!(at.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self") {
                            out.push(at.attr.to_string());
                        }
                    }
                }
            }
            true
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::insert::outcomes;

    fn titles(src: &str, line: u32) -> Vec<String> {
        outcomes(src, line, super::mutants)
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn a_default_for_a_none_parameter_keeps_an_explicit_empty_value() {
        let src = "DEFAULT = ['a']\n\ndef pick(items=None):\n    chosen = list(items or DEFAULT)\n    return chosen\n";
        let got = outcomes(src, 4, super::mutants);
        assert_eq!(
            got,
            vec![(
                "`items or DEFAULT` → `DEFAULT if items is None else items`".to_string(),
                src.replace(
                    "list(items or DEFAULT)",
                    "list(DEFAULT if items is None else items)"
                )
            )]
        );
        // In an operand position the conditional expression is parenthesized.
        let op = "def size(n: int | None):\n    return n or 4 * 2\n";
        assert_eq!(
            outcomes(op, 2, super::mutants)[0].1,
            "def size(n: int | None):\n    return 4 * 2 if n is None else n\n"
        );
        let op = "def size(n: int | None):\n    return 2 + (n or 4)\n";
        assert_eq!(
            outcomes(op, 2, super::mutants)[0].1,
            "def size(n: int | None):\n    return 2 + (4 if n is None else n)\n"
        );
        let op = "def size(n: int | None):\n    return 2 + n or 4\n";
        assert!(outcomes(op, 2, super::mutants).is_empty());
        let op = "def size(n: int | None):\n    return [n or 4][0] < (n or 1) * 2\n";
        let got: Vec<String> = outcomes(op, 2, super::mutants).into_iter().map(|g| g.1).collect();
        assert_eq!(
            got,
            vec![
                op.replace("[n or 4]", "[4 if n is None else n]"),
                op.replace("(n or 1)", "(1 if n is None else n)"),
            ]
        );
    }

    #[test]
    fn truth_tests_of_a_nullable_attribute_become_none_tests() {
        let src = "class Page:\n    def __init__(self, limit=None):\n        self.limit = limit\n        self.rows = []\n\n    def take(self):\n        if self.limit and self.rows:\n            return self.rows[: self.limit]\n        return self.rows\n";
        // `self.rows` is never None: only `self.limit` gets the edit.
        assert_eq!(
            titles(src, 7),
            vec!["`self.limit` → `self.limit is not None`"]
        );
        let neg = "def f(tag: str | None = None):\n    return 'x' if not tag else tag\n";
        assert_eq!(
            titles(neg, 2),
            vec!["`not tag` → `tag is None`"]
        );
    }

    #[test]
    fn a_none_test_may_widen_to_an_empty_one() {
        let src = "def lookup(name=None):\n    if name is None:\n        return 'UTC'\n    return name\n";
        let got = outcomes(src, 2, super::mutants);
        assert_eq!(
            got,
            vec![(
                "`name is None` → `not name`".to_string(),
                src.replace("if name is None:", "if not name:")
            )]
        );
    }

    #[test]
    fn names_that_cannot_be_none_get_nothing() {
        let src = "def f(items, n=0):\n    if items or n:\n        return items or [n]\n    return None\n";
        assert!(titles(src, 2).is_empty());
        assert!(titles(src, 3).is_empty());
    }
}
