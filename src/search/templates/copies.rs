//! Template: a shared dict or list mutated in place where a copy was meant.
//!
//! `copy-before-mutation`: `styles = DEFAULTS if given is None else given`, then
//! `styles[key] = …`, changes the module's `DEFAULTS` (or the caller's argument) for every later
//! call. At a local's binding whose value is shared (a parameter, a module name, an attribute
//! of `self` or of a module, or either branch of an `if`/`else` or `or` of those), when the
//! function later mutates the local in place (item assignment or deletion, `.update`,
//! `.append`, `.pop`, ...), the value gets `.copy()`.

use rustpython_parser::ast::{BoolOp, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::search::mutate::one_line;
use crate::syntax::rng;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use super::calls::module_names;
use super::operators::mutant;
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::CopyBeforeMutation];

/// Methods that change a dict, list or set in place.
const MUTATORS: &[&str] = &[
    "update", "append", "extend", "insert", "pop", "popitem", "remove", "clear", "setdefault",
    "add", "discard", "sort", "reverse",
];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let (Some(func), Stmt::Assign(a)) = (site.func, site.stmt) else {
        return Vec::new();
    };
    let [Expr::Name(target)] = &a.targets[..] else {
        return Vec::new();
    };
    let (params, body) = match func {
        Stmt::FunctionDef(f) => (&f.args, &f.body),
        Stmt::AsyncFunctionDef(f) => (&f.args, &f.body),
        _ => return Vec::new(),
    };
    let params: Vec<&str> = params
        .posonlyargs
        .iter()
        .chain(&params.args)
        .chain(&params.kwonlyargs)
        .map(|p| p.def.arg.as_str())
        .collect();
    let module = module_names(site.module.body()).bound;
    let shared_name = |n: &str| params.contains(&n) || module.contains(n);
    let shared = |e: &Expr| match e {
        Expr::Name(n) => shared_name(n.id.as_str()),
        Expr::Attribute(at) => matches!(at.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self" || module.contains(n.id.as_str())),
        _ => false,
    };
    let value = a.value.as_ref();
    let is_shared = match value {
        Expr::IfExp(i) => shared(&i.body) || shared(&i.orelse),
        Expr::BoolOp(b) if matches!(b.op, BoolOp::Or) => b.values.iter().any(shared),
        v => shared(v),
    };
    let x = target.id.as_str();
    // The module's own functions/classes are no data.
    let called = matches!(value, Expr::Name(n) if module_names(site.module.body()).defs.contains_key(n.id.as_str()));
    if !is_shared || called || !mutated_after(body, x, rng(site.stmt.range()).end) {
        return Vec::new();
    }
    let text = site.module.text();
    let vt = &text[rng(value.range())];
    let new = match value {
        Expr::Name(_) | Expr::Attribute(_) => format!("{vt}.copy()"),
        _ => format!("({vt}).copy()"),
    };
    vec![mutant(
        site,
        Family::CopyBeforeMutation,
        format!("`{x} = {}` → a copy", one_line(vt)),
        vec![Edit::replacement(rng(value.range()), new)],
        1.0,
        Vec::new(),
    )]
}

/// Whether a statement of `body` starting after `from` changes `x` in place.
fn mutated_after(body: &[Stmt], x: &str, from: usize) -> bool {
    let is_x = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == x);
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if node.range().start < from {
            return !found;
        }
        match node {
            Node::Stmt(Stmt::Assign(a)) => {
                found |= a
                    .targets
                    .iter()
                    .any(|t| matches!(t, Expr::Subscript(s) if is_x(&s.value)));
            }
            Node::Stmt(Stmt::AugAssign(a)) => {
                found |= matches!(a.target.as_ref(), Expr::Subscript(s) if is_x(&s.value));
            }
            Node::Stmt(Stmt::Delete(d)) => {
                found |= d
                    .targets
                    .iter()
                    .any(|t| matches!(t, Expr::Subscript(s) if is_x(&s.value)));
            }
            Node::Expr(Expr::Call(c)) => {
                found |= matches!(c.func.as_ref(), Expr::Attribute(at)
                    if is_x(&at.value) && MUTATORS.contains(&at.attr.as_str()));
            }
            _ => {}
        }
        !found && !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn a_shared_value_mutated_later_is_copied_at_its_binding() {
        let src = "DEFAULTS = {'a': 1}\n\ndef styles(given=None):\n    s = DEFAULTS if given is None else given\n    for k in s:\n        s[k] += 1\n    return s\n";
        assert_eq!(
            titles(src, 4, mutants),
            vec![pair(
                "`s = DEFAULTS if given is None else given` → a copy",
                "    s = (DEFAULTS if given is None else given).copy()"
            )]
        );
        let method = "class Q:\n    def drain(self):\n        items = self.items\n        while items:\n            yield items.pop()\n";
        assert_eq!(
            titles(method, 3, mutants),
            vec![pair("`items = self.items` → a copy", "        items = self.items.copy()")]
        );
    }

    #[test]
    fn a_fresh_or_unmutated_value_is_left_alone() {
        // A new dict, a value only read, a mutation before the binding.
        let fresh = "def f(xs):\n    out = dict(xs)\n    out['k'] = 1\n    return out\n";
        assert!(titles(fresh, 2, mutants).is_empty());
        let read = "def f(xs):\n    out = xs\n    return out['k']\n";
        assert!(titles(read, 2, mutants).is_empty());
        let before = "def f(xs):\n    xs.append(1)\n    out = xs\n    return out\n";
        assert!(titles(before, 3, mutants).is_empty());
    }
}
