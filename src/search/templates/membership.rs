//! Template: a membership test whose collection is never updated.
//!
//! `membership-add`: a visited set, a "seen" list or any local collection the function tests
//! membership in (`if x not in seen:`), whose guarded body never adds `x` to it, gets the add
//! the guard implies: `seen.add(x)` at the end of the body (then at its start). The same for
//! the skipping form inside a loop (`if x in seen: continue`), after the `if`. The method is the
//! one the function already calls on the collection (`seen.add(start)`), else the one its
//! initial value implies (`set()` → `add`, `[]`/`list()` → `append`); a collection it neither
//! calls nor builds here (a dict, a parameter, an attribute) gets nothing. A body that returns,
//! raises or already updates the collection is a check, not a visit: nothing either.
//!
//! One of TBar's "insert a missing statement" patterns, narrowed by the guard's own names: one
//! or two candidates per guard instead of a copy of every bookkeeping call re-bound to every
//! local ([`super::insert`]'s `insert-call`, which finds the same edit far later).

use rustpython_parser::ast::{CmpOp, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::insert::{enclosing, func_body, indent_at, insert_line_after, nl};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::MembershipAdd];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let sr = rng(site.stmt.range());
    // The guard is the suspicious statement itself, or the innermost `if` around it.
    let guard = match site.stmt {
        Stmt::If(_) => Some(site.stmt),
        _ => enclosing(func, &sr)
            .into_iter()
            .rev()
            .find(|s| matches!(s, Stmt::If(_))),
    };
    let Some(Stmt::If(i)) = guard else {
        return Vec::new();
    };
    let Expr::Compare(c) = i.test.as_ref() else {
        return Vec::new();
    };
    let ([op], [Expr::Name(coll)]) = (c.ops.as_slice(), c.comparators.as_slice()) else {
        return Vec::new();
    };
    let text = site.module.text();
    let element = &text[rng(c.left.range())];
    if !matches!(c.left.as_ref(), Expr::Name(_) | Expr::Attribute(_)) {
        return Vec::new();
    }
    let coll = coll.id.as_str();
    let Some(method) = add_method(func, coll) else {
        return Vec::new();
    };
    if updates(&i.body, coll) {
        return Vec::new();
    }
    let content = format!("{coll}.{method}({element})");
    let prior = site.priors.family(Family::MembershipAdd);
    let title = |place: &str| format!("insert `{content}` {place}");
    let mut out = Vec::new();
    match op {
        CmpOp::NotIn if !exits(&i.body) => {
            // The end of the guarded body, then its start.
            let (Some(first), Some(last)) = (i.body.first(), i.body.last()) else {
                return Vec::new();
            };
            let Some((fs, findent)) = indent_at(text, rng(first.range()).start) else {
                return Vec::new();
            };
            if let Some(e) = insert_line_after(text, rng(last.range()).end, findent, &content) {
                out.push(mutant(title("at the end of the `if` body"), e, prior));
            }
            let e = Edit::insertion(fs, format!("{findent}{content}{}", nl(text)));
            out.push(mutant(
                title("at the start of the `if` body"),
                e,
                prior * 0.5,
            ));
        }
        // `if x in seen: continue` (nothing else in the body, no `else`): after the `if`.
        CmpOp::In if i.orelse.is_empty() && matches!(i.body.as_slice(), [Stmt::Continue(_)]) => {
            let gr = rng(i.range);
            let Some((_, indent)) = indent_at(text, gr.start) else {
                return Vec::new();
            };
            if let Some(e) = insert_line_after(text, gr.end, indent, &content) {
                out.push(mutant(title("after the `if`"), e, prior));
            }
        }
        _ => {}
    }
    out
}

fn mutant(title: String, edit: Edit, prior: f64) -> Mutant {
    Mutant {
        family: Family::MembershipAdd,
        title,
        edits: vec![edit],
        prior,
        effects: Vec::new(),
    }
}

/// The method that adds to the local `coll`: the one the function calls on it with one
/// argument (`add`, `append`), else the one its initial value implies.
fn add_method(func: &Stmt, coll: &str) -> Option<&'static str> {
    let roots: Vec<Node> = func_body(func).iter().map(Node::Stmt).collect();
    let mut called = None;
    let mut built = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Call(c)) if c.args.len() == 1 && c.keywords.is_empty() => {
                if let Expr::Attribute(a) = c.func.as_ref() {
                    if matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == coll) {
                        called = called.or(match a.attr.as_str() {
                            "add" => Some("add"),
                            "append" => Some("append"),
                            _ => None,
                        });
                    }
                }
            }
            Node::Stmt(Stmt::Assign(a)) if a.targets.len() == 1 => {
                if matches!(&a.targets[0], Expr::Name(n) if n.id.as_str() == coll) {
                    built = built.or(match a.value.as_ref() {
                        Expr::List(l) if l.elts.is_empty() => Some("append"),
                        Expr::Call(c) if c.args.is_empty() => match c.func.as_ref() {
                            Expr::Name(f) if f.id.as_str() == "set" => Some("add"),
                            Expr::Name(f) if f.id.as_str() == "list" => Some("append"),
                            _ => None,
                        },
                        _ => None,
                    });
                }
            }
            _ => {}
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    called.or(built)
}

/// Whether `body` calls a method on `coll` or stores into it (`coll[k] = v`, `coll |= ...`).
fn updates(body: &[Stmt], coll: &str) -> bool {
    let is_coll = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == coll);
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        found |= match node {
            Node::Expr(Expr::Call(c)) => {
                matches!(c.func.as_ref(), Expr::Attribute(a) if is_coll(&a.value))
            }
            Node::Stmt(Stmt::Assign(a)) => a
                .targets
                .iter()
                .any(|t| matches!(t, Expr::Subscript(s) if is_coll(&s.value)) || is_coll(t)),
            Node::Stmt(Stmt::AugAssign(a)) => is_coll(&a.target),
            _ => false,
        };
        !found
    });
    found
}

/// Whether the body leaves the function or the loop at its top level (a check, not a visit).
fn exits(body: &[Stmt]) -> bool {
    body.iter().any(|s| {
        matches!(
            s,
            Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::insert::outcomes;

    #[test]
    fn a_visited_set_gets_the_add_its_guard_implies() {
        let src = "def order(graph, start):\n    seen = set()\n    out = []\n    todo = [start]\n    while todo:\n        node = todo.pop(0)\n        out.append(node)\n        for nxt in graph.get(node, []):\n            if nxt not in seen:\n                todo.append(nxt)\n    return out\n";
        let end = src.replace(
            "                todo.append(nxt)\n",
            "                todo.append(nxt)\n                seen.add(nxt)\n",
        );
        let start = src.replace(
            "                todo.append(nxt)\n",
            "                seen.add(nxt)\n                todo.append(nxt)\n",
        );
        let want = vec![
            (
                "insert `seen.add(nxt)` at the end of the `if` body".to_string(),
                end,
            ),
            (
                "insert `seen.add(nxt)` at the start of the `if` body".to_string(),
                start,
            ),
        ];
        // From the guarded statement and from the guard itself.
        assert_eq!(outcomes(src, 10, super::mutants), want);
        assert_eq!(outcomes(src, 9, super::mutants), want);
    }

    #[test]
    fn a_skipping_guard_in_a_loop_adds_after_the_if_with_the_method_the_function_uses() {
        let src = "def unique(xs):\n    seen = []\n    out = []\n    for x in xs:\n        if x in seen:\n            continue\n        out.append(x)\n    seen.append(None)\n    return out\n";
        let want = src.replace(
            "            continue\n",
            "            continue\n        seen.append(x)\n",
        );
        assert_eq!(
            outcomes(src, 5, super::mutants),
            vec![("insert `seen.append(x)` after the `if`".to_string(), want)]
        );
    }

    #[test]
    fn checks_updates_and_unknown_collections_get_nothing() {
        // The body raises: a validation, not a visit.
        let raise = "def check(name):\n    known = set()\n    if name not in known:\n        raise KeyError(name)\n    return name\n";
        assert!(outcomes(raise, 4, super::mutants).is_empty());
        // The body already adds.
        let adds = "def visit(xs):\n    seen = set()\n    for x in xs:\n        if x not in seen:\n            seen.add(x)\n    return seen\n";
        assert!(outcomes(adds, 5, super::mutants).is_empty());
        // A parameter the function never adds to, a dict: no method to use.
        let param = "def keep(xs, seen):\n    out = []\n    for x in xs:\n        if x not in seen:\n            out.append(x)\n    return out\n";
        assert!(outcomes(param, 5, super::mutants).is_empty());
        let dict = "def keep(xs):\n    seen = {}\n    out = []\n    for x in xs:\n        if x not in seen:\n            out.append(x)\n    return out\n";
        assert!(outcomes(dict, 6, super::mutants).is_empty());
    }
}
