//! Template: an incomplete or wrong condition (a loop exit, a missing guard term, a constant return that should be the tracked condition, a base case).
//!
//! Families:
//! - `loop-exit`: `while True:` whose body consumes a local (`queue.pop()`, `heappop(heap)`,
//!   `xs = xs[1:]`) → `while queue:`.
//! - `guard-term`: an `if`/`while` condition expanded with a term: the emptiness of a
//!   collection the condition indexes (`not xs or …`, `xs and …`, the guard first so it
//!   short-circuits), or a test the function makes elsewhere (`… and t`, `… or t`).
//! - `return-condition`: a constant `return True`/`return False` → the flag the function
//!   tracks (a local assigned `True`/`False`), or a counter it moves in a loop compared with
//!   zero (`return depth == 0`).
//! - `base-case`: in a recursive function, an `if` that returns without recursing tests one
//!   value too few: `n == 1` → `n <= 1`, `len(xs) == 0` → `len(xs) <= 1`, `not xs` →
//!   `len(xs) <= 1`.

use rustpython_parser::ast::{CmpOp, Constant, Expr, ExprContext, Ranged, Stmt, UnaryOp};

use crate::edit::Edit;
use crate::syntax::queries::consumed_in;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::super::mutate::{kinds_of, names_of, one_line};
use super::insert::{enclosing, func_body, func_name, loop_body, read_in};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::LoopExit, Family::GuardTerm, Family::ReturnCondition, Family::BaseCase];

/// Terms taken from the function's other conditions at most.
const MAX_TERMS: usize = 4;

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let text = site.module.text();
    match site.stmt {
        Stmt::While(w) if is_true(&w.test) => {
            let consumed = consumed_in(&w.body);
            let n = consumed.len() as f64;
            for name in consumed {
                out.push(Mutant {
                    family: Family::LoopExit,
                    title: format!(
                        "`while {}:` → `while {name}:`",
                        one_line(&text[rng(w.test.range())])
                    ),
                    edits: vec![Edit::replacement(rng(w.test.range()), name)],
                    prior: site.priors.family(Family::LoopExit) / n,
                    effects: Vec::new(),
                });
            }
        }
        Stmt::While(w) => guard_terms(site, func, &w.test, &mut out),
        Stmt::If(i) => {
            guard_terms(site, func, &i.test, &mut out);
            base_case(site, func, i, &mut out);
        }
        Stmt::Return(r) => {
            if let Some(Expr::Constant(c)) = r.value.as_deref() {
                if let Constant::Bool(b) = c.value {
                    return_condition(site, func, rng(c.range), b, &mut out);
                }
            }
        }
        _ => {}
    }
    out
}

fn is_true(e: &Expr) -> bool {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::Bool(b) => *b,
            Constant::Int(i) => i.to_string() == "1",
            _ => false,
        },
        _ => false,
    }
}

/// `guard-term`: `test` expanded with a collection's emptiness or another test of the
/// function.
fn guard_terms(site: &Site, func: &Stmt, test: &Expr, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let tr = rng(test.range());
    let written = &text[tr.clone()];
    if written.contains('\n') {
        return;
    }
    let wrapped = |t: &str, e: Option<&Expr>| -> String {
        if e.is_some_and(|e| {
            matches!(
                e,
                Expr::BoolOp(_) | Expr::IfExp(_) | Expr::Lambda(_) | Expr::NamedExpr(_)
            )
        }) {
            format!("({t})")
        } else {
            t.to_string()
        }
    };
    let own = wrapped(written, Some(test));
    let locals = names_of(func);
    let is_local = |n: &str| locals.iter().any(|(l, _)| l == n);
    let mut props: Vec<(String, &'static str, f64)> = Vec::new();
    // The collections the condition indexes: their emptiness guards the index.
    let mut indexed: Vec<String> = Vec::new();
    walk::walk(&[Node::Expr(test)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Subscript(s)) = node {
            if let Expr::Name(n) = s.value.as_ref() {
                if is_local(n.id.as_str()) && !indexed.iter().any(|i| i == n.id.as_str()) {
                    indexed.push(n.id.to_string());
                }
            }
        }
        true
    });
    let already = |t: &str| written.contains(t);
    for x in &indexed {
        if already(&format!("not {x}")) {
            continue;
        }
        props.push((format!("not {x} or {own}"), "guard", 1.0));
        props.push((format!("{x} and {own}"), "guard", 0.8));
    }
    // Terms of the function's other conditions.
    let sr = rng(site.stmt.range());
    let mut terms: Vec<String> = Vec::new();
    let tests = condition_tests(func_body(func));
    let bound_here: Vec<String> = {
        let looped = super::super::mutate::in_loop(func, sr.clone());
        locals
            .iter()
            .filter(|(_, first)| looped || *first < sr.start)
            .map(|(n, _)| n.clone())
            .collect()
    };
    for t in tests {
        let parts: Vec<&Expr> = match t {
            Expr::BoolOp(b) => b.values.iter().collect(),
            other => vec![other],
        };
        for p in parts {
            let r = rng(p.range());
            if tr.start <= r.start && r.end <= tr.end {
                continue; // part of the site's own condition
            }
            let pt = &text[r];
            if pt.contains('\n') || is_true(p) || already(pt) || terms.iter().any(|t| t == pt) {
                continue;
            }
            // Only terms whose locals are bound where the condition runs.
            if read_in(&[Node::Expr(p)])
                .iter()
                .any(|n| is_local(n) && !bound_here.contains(n))
            {
                continue;
            }
            terms.push(pt.to_string());
        }
    }
    for t in terms.iter().take(MAX_TERMS) {
        let inner = wrapped_text(t);
        // The term first guards the condition (`i < len(s) and s[i] ...`); after it, it
        // narrows or widens it.
        props.push((format!("{inner} and {own}"), "term", 0.7));
        props.push((format!("{own} and {inner}"), "term", 0.5));
        props.push((format!("{own} or {inner}"), "term", 0.4));
    }
    for (new, kind, w) in &props {
        // Split among the alternatives of the same kind: the emptiness guards of an indexed
        // collection are two per collection, the terms three per term.
        let n = props.iter().filter(|(_, k, _)| k == kind).count() as f64;
        let share = if *kind == "guard" { 2.0 } else { 3.0 };
        out.push(Mutant {
            family: Family::GuardTerm,
            title: format!("`{}` → `{}`", one_line(written), one_line(new)),
            edits: vec![Edit::replacement(tr.clone(), new.clone())],
            prior: site.priors.family(Family::GuardTerm) * w * (share / n).min(1.0),
            effects: Vec::new(),
        });
    }
}

/// The tests of a function body's `if`s, `while`s and conditional expressions (not those of
/// nested functions or classes).
pub(super) fn condition_tests(body: &[Stmt]) -> Vec<&Expr> {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut tests: Vec<&Expr> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::If(i)) => tests.push(&i.test),
            Node::Stmt(Stmt::While(w)) => tests.push(&w.test),
            Node::Expr(Expr::IfExp(i)) => tests.push(&i.test),
            _ => {}
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    tests
}

/// A term's text, parenthesized when `and`/`or` around it would bind into it.
fn wrapped_text(t: &str) -> String {
    let lower = format!(" {t} ");
    if lower.contains(" or ") || lower.contains(" and ") || lower.contains(" if ") {
        format!("({t})")
    } else {
        t.to_string()
    }
}

/// `return-condition`: the constant returned becomes the flag or counter the function
/// tracks.
fn return_condition(
    site: &Site,
    func: &Stmt,
    at: std::ops::Range<usize>,
    value: bool,
    out: &mut Vec<Mutant>,
) {
    let kinds = kinds_of(func);
    let body = func_body(func);
    let mut props: Vec<(String, f64)> = Vec::new();
    // Flags: locals assigned a bool.
    for (name, kind) in &kinds {
        if *kind == "bool" {
            let v = if value {
                name.clone()
            } else {
                format!("not {name}")
            };
            props.push((v, 1.0));
        }
    }
    // Counters: an int local moved by `+=`/`-=` in a loop.
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut counters: Vec<String> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s) = node {
            if let Some(lb) = loop_body(s) {
                let inner: Vec<Node> = lb.iter().map(Node::Stmt).collect();
                walk::walk(&inner, MAX_AST_DEPTH, |n, _| {
                    if let Node::Stmt(Stmt::AugAssign(a)) = n {
                        if let Expr::Name(t) = a.target.as_ref() {
                            if kinds.get(t.id.as_str()) == Some(&"int")
                                && !counters.iter().any(|c| c == t.id.as_str())
                            {
                                counters.push(t.id.to_string());
                            }
                        }
                    }
                    true
                });
            }
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    for c in counters {
        let op = if value { "==" } else { "!=" };
        props.push((format!("{c} {op} 0"), 0.8));
    }
    let n = props.len() as f64;
    let written = &site.module.text()[at.clone()];
    for (v, w) in props {
        out.push(Mutant {
            family: Family::ReturnCondition,
            title: format!("`return {written}` → `return {v}`"),
            edits: vec![Edit::replacement(at.clone(), v)],
            prior: site.priors.family(Family::ReturnCondition) * w / n,
            effects: Vec::new(),
        });
    }
}

/// Whether `func` calls itself (by name, or as `self.name`).
fn recursive(func: &Stmt) -> bool {
    let name = func_name(func);
    let roots: Vec<Node> = func_body(func).iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Call(c)) = node {
            found |= match c.func.as_ref() {
                Expr::Name(n) => n.id.as_str() == name,
                Expr::Attribute(a) => {
                    a.attr.as_str() == name
                        && matches!(a.value.as_ref(), Expr::Name(s) if s.id.as_str() == "self")
                }
                _ => false,
            };
        }
        !found
    });
    found
}

/// `base-case`: the test of an `if` of a recursive function whose body returns, one value
/// short.
fn base_case(site: &Site, func: &Stmt, i: &rustpython_parser::ast::StmtIf, out: &mut Vec<Mutant>) {
    if !recursive(func) || !matches!(i.body.last(), Some(Stmt::Return(_))) {
        return;
    }
    // The base case is at the function's top level, not inside a loop.
    let sr = rng(site.stmt.range());
    if !enclosing(func, &sr).is_empty() {
        return;
    }
    let text = site.module.text();
    let tr = rng(i.test.range());
    let mut props: Vec<(String, f64)> = Vec::new();
    match i.test.as_ref() {
        Expr::Compare(c) if c.ops.len() == 1 && matches!(c.ops[0], CmpOp::Eq) => {
            let left = &text[rng(c.left.range())];
            let right = &c.comparators[0];
            let rt = &text[rng(right.range())];
            if let Expr::Constant(k) = right {
                if let Constant::Int(v) = &k.value {
                    props.push((format!("{left} <= {rt}"), 1.0));
                    if let Ok(v) = v.to_string().parse::<i64>() {
                        props.push((format!("{left} <= {}", v + 1), 0.5));
                    }
                }
            }
        }
        Expr::UnaryOp(u) if matches!(u.op, UnaryOp::Not) => {
            if let Expr::Name(n) = u.operand.as_ref() {
                if matches!(n.ctx, ExprContext::Load) {
                    props.push((format!("len({}) <= 1", n.id), 1.0));
                }
            }
        }
        _ => {}
    }
    let n = props.len() as f64;
    let written = &text[tr.clone()];
    for (v, w) in props {
        out.push(Mutant {
            family: Family::BaseCase,
            title: format!("base case `{}` → `{v}`", one_line(written)),
            edits: vec![Edit::replacement(tr.clone(), v)],
            prior: site.priors.family(Family::BaseCase) * w / n.max(1.0),
            effects: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::insert::outcomes;

    fn titled(src: &str, line: u32, title: &str) -> String {
        let got = outcomes(src, line, super::mutants);
        got.iter()
            .find(|(t, _)| t == title)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| {
                panic!(
                    "no `{title}` in {:?}",
                    got.iter().map(|g| &g.0).collect::<Vec<_>>()
                )
            })
    }

    #[test]
    fn while_true_exits_on_what_the_body_consumes() {
        let src = "def drain(queue, out):\n    while True:\n        item = queue.pop(0)\n        out.append(item)\n    return out\n";
        assert_eq!(
            titled(src, 2, "`while True:` → `while queue:`"),
            src.replace("while True:", "while queue:")
        );
        assert_eq!(outcomes(src, 2, super::mutants).len(), 1);
        let words = "def count(text):\n    n = 0\n    rest = text\n    while True:\n        word, _, rest = rest.partition(' ')\n        n += 1\n    return n\n";
        assert_eq!(
            outcomes(words, 4, super::mutants)
                .into_iter()
                .map(|g| g.0)
                .collect::<Vec<_>>(),
            vec!["`while True:` → `while rest:`"]
        );
        // A counter is not consumed.
        let spin = "def spin():\n    n = 0\n    while True:\n        n = n + 1\n";
        assert!(outcomes(spin, 3, super::mutants).is_empty());
    }

    #[test]
    fn a_guard_gains_the_emptiness_of_what_it_indexes_or_another_test() {
        let src = "def close(stack, c, pairs):\n    if c in pairs:\n        if stack[-1] != pairs[c]:\n            return False\n        stack.pop()\n    return True\n";
        assert_eq!(
            titled(
                src,
                3,
                "`stack[-1] != pairs[c]` → `not stack or stack[-1] != pairs[c]`"
            ),
            src.replace("if stack[-1]", "if not stack or stack[-1]")
        );
        let parser = "def num(s, i):\n    while i < len(s) and s[i] == ' ':\n        i += 1\n    while s[i].isdigit():\n        i += 1\n    return i\n";
        assert_eq!(
            titled(
                parser,
                4,
                "`s[i].isdigit()` → `i < len(s) and s[i].isdigit()`"
            ),
            parser.replace("while s[i]", "while i < len(s) and s[i]")
        );
        assert_eq!(
            titled(
                src,
                3,
                "`stack[-1] != pairs[c]` → `stack[-1] != pairs[c] and c in pairs`"
            ),
            src.replace(
                "pairs[c]:\n            return",
                "pairs[c] and c in pairs:\n            return"
            )
        );
    }

    #[test]
    fn a_constant_return_becomes_the_tracked_condition() {
        let src = "def balanced(s):\n    depth = 0\n    for ch in s:\n        depth += 1 if ch == '(' else -1\n        if depth < 0:\n            return False\n    return True\n";
        assert_eq!(
            titled(src, 7, "`return True` → `return depth == 0`"),
            src.replace("return True", "return depth == 0")
        );
        let flag = "def has(xs, k):\n    found = False\n    for x in xs:\n        if x == k:\n            found = True\n    return True\n";
        assert_eq!(
            titled(flag, 6, "`return True` → `return found`"),
            flag.replace("    return True", "    return found")
        );
    }

    #[test]
    fn a_recursive_base_case_takes_one_more_value() {
        let src = "def fact(n):\n    if n == 1:\n        return 1\n    return n * fact(n - 1)\n";
        assert_eq!(
            titled(src, 2, "base case `n == 1` → `n <= 1`"),
            src.replace("n == 1:", "n <= 1:")
        );
        let xs =
            "def rev(xs):\n    if not xs:\n        return xs\n    return rev(xs[1:]) + xs[:1]\n";
        assert_eq!(
            titled(xs, 2, "base case `not xs` → `len(xs) <= 1`"),
            xs.replace("not xs:", "len(xs) <= 1:")
        );
        // Not recursive: no base case.
        let plain = "def one(n):\n    if n == 1:\n        return 1\n    return n\n";
        assert!(outcomes(plain, 2, super::mutants)
            .iter()
            .all(|(t, _)| !t.starts_with("base case")));
    }
}
