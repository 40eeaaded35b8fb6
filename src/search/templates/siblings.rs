//! Template: a sibling name (another attribute of the same object, another local of the same runtime type).
//!
//! `sibling-attr`: `self.width` where `self.height` was meant. The alternatives are the
//! attributes the class itself has: those its methods assign on `self` and the annotated
//! fields of its body (a dataclass), of the same kind where their literals say so. The same
//! holds for another object of the class: a parameter the probe shows to be an instance of it
//! (`other.width`). Methods and properties are not proposed: reading a bound method where a
//! value was meant is not a slip anyone makes.
//!
//! Locals of the same kind are [`super::super::mutate`]'s `variable` family; its kinds now
//! also come from parameter annotations (`xs: list[int]`), see `mutate::kinds_of`.

use std::collections::BTreeMap;

use rustpython_parser::ast::{Expr, ExprContext, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::super::mutate::{one_line, value_kind};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::SiblingAttr];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let Some(class) = class_of(site.module.body(), func) else {
        return Vec::new();
    };
    let Stmt::ClassDef(cd) = class else {
        return Vec::new();
    };
    let attrs = attributes_of(class);
    if attrs.len() < 2 {
        return Vec::new();
    }
    let text = site.module.text();
    // Receivers that are instances of the class: `self`, and parameters the probe shows as
    // the class.
    let is_instance = |n: &str| {
        n == "self"
            || site.probed.is_some_and(|p| {
                p.get(n).is_some_and(|t| {
                    t == cd.name.as_str() || t.ends_with(&format!(".{}", cd.name.as_str()))
                })
            })
    };
    let mut own = Vec::new();
    walk::stmt_own_exprs(site.stmt, &mut own);
    let mut out = Vec::new();
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Attribute(a)) = node {
            let Expr::Name(recv) = a.value.as_ref() else {
                return true;
            };
            if !matches!(a.ctx, ExprContext::Load) || !is_instance(recv.id.as_str()) {
                return true;
            }
            let name = a.attr.as_str();
            let Some(kind) = attrs.get(name) else {
                return true;
            };
            let others: Vec<&String> = attrs
                .iter()
                .filter(|(o, k)| {
                    o.as_str() != name
                        && match (kind, k) {
                            (Some(a), Some(b)) => a == b,
                            _ => true,
                        }
                })
                .map(|(o, _)| o)
                .collect();
            let n = others.len() as f64;
            // The attribute name's own range: after the last `.` of the expression.
            let r = rng(a.range);
            let dot = text[r.clone()].rfind('.').map(|i| r.start + i + 1);
            let Some(start) = dot else { return true };
            let start = start + (text[start..r.end].len() - text[start..r.end].trim_start().len());
            for o in others {
                out.push(Mutant {
                    family: Family::SiblingAttr,
                    title: format!(
                        "`{}` → `{}.{o}`",
                        one_line(&text[r.clone()]),
                        recv.id.as_str()
                    ),
                    edits: vec![Edit::replacement(start..r.end, o.clone())],
                    prior: site.priors.family(Family::SiblingAttr) / n,
                    effects: Vec::new(),
                });
            }
        }
        !matches!(node, Node::Expr(Expr::Lambda(_)))
    });
    out
}

/// The innermost class whose body holds `func` directly (a method).
pub(super) fn class_of<'a>(body: &'a [Stmt], func: &Stmt) -> Option<&'a Stmt> {
    let fr = rng(func.range());
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let sr = node.range();
        if !(sr.start <= fr.start && fr.end <= sr.end) {
            return false;
        }
        if let Stmt::ClassDef(c) = s {
            if c.body.iter().any(|m| rng(m.range()) == fr) {
                found = Some(s);
            }
        }
        true
    });
    found
}

/// The attributes a class has as data: `self.x = …` in its methods, annotated fields of its
/// body. Each with the kind of its literal values (`None` when unknown or mixed).
pub(super) fn attributes_of(class: &Stmt) -> BTreeMap<String, Option<&'static str>> {
    let Stmt::ClassDef(cd) = class else {
        return BTreeMap::new();
    };
    let mut out: BTreeMap<String, Option<Option<&'static str>>> = BTreeMap::new();
    let mut note = |name: &str, k: Option<&'static str>| {
        let e = out.entry(name.to_string()).or_insert(Some(k));
        if *e != Some(k) {
            *e = Some(None);
        }
    };
    for s in &cd.body {
        if let Stmt::AnnAssign(a) = s {
            if let Expr::Name(n) = a.target.as_ref() {
                note(n.id.as_str(), a.value.as_deref().and_then(value_kind));
            }
        }
    }
    let roots: Vec<Node> = cd.body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let value = match node {
            Node::Stmt(Stmt::Assign(a)) => Some((&a.targets[..], Some(a.value.as_ref()))),
            _ => None,
        };
        if let Some((targets, v)) = value {
            for t in targets {
                if let Expr::Attribute(at) = t {
                    if matches!(at.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self") {
                        note(at.attr.as_str(), v.and_then(value_kind));
                    }
                }
            }
        }
        if let Node::Stmt(Stmt::AugAssign(a)) = node {
            if let Expr::Attribute(at) = a.target.as_ref() {
                if matches!(at.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self") {
                    note(at.attr.as_str(), None);
                }
            }
        }
        // Nested classes have their own attributes.
        !matches!(node, Node::Stmt(Stmt::ClassDef(_)))
    });
    out.into_iter().map(|(n, k)| (n, k.flatten())).collect()
}

#[cfg(test)]
mod tests {
    use super::super::insert::outcomes;

    const RECT: &str = "class Rect:\n    def __init__(self, width, height):\n        self.width = width\n        self.height = height\n        self.label = ''\n\n    def area(self):\n        return self.width * self.width\n\n    def describe(self):\n        return self.label\n";

    #[test]
    fn an_attribute_becomes_another_the_class_assigns() {
        let got = outcomes(RECT, 8, super::mutants);
        let want = RECT.replace("self.width * self.width", "self.width * self.height");
        assert!(
            got.iter()
                .any(|(t, s)| t == "`self.width` → `self.height`" && *s == want),
            "{:?}",
            got.iter().map(|g| &g.0).collect::<Vec<_>>()
        );
        // Two reads of `self.width`, each may become `height` or `label` (of unknown kind:
        // `width` is a parameter): four candidates, never a method.
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(!got
            .iter()
            .any(|(t, _)| t.contains("area") || t.contains("describe")));
    }

    #[test]
    fn attributes_of_another_kind_and_functions_outside_classes_get_nothing() {
        // `label` is a str; `count` and `total` ints: only `total` is proposed for `count`.
        let src = "class Tally:\n    def __init__(self):\n        self.count = 0\n        self.total = 0\n        self.label = ''\n\n    def mean(self):\n        return self.total / self.count\n";
        let got: Vec<String> = outcomes(src, 8, super::mutants)
            .into_iter()
            .map(|g| g.0)
            .collect();
        assert_eq!(
            got,
            vec!["`self.total` → `self.count`", "`self.count` → `self.total`"]
        );
        let plain = "def f(p):\n    return p.x\n";
        assert!(outcomes(plain, 2, super::mutants).is_empty());
    }
}
