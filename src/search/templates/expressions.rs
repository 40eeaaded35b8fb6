//! Template: an expression one step too simple or too complex (clamp, accumulate, a term, a call and its argument, a power or an offset).
//!
//! TBar's "mutate/expand expression" and CapGen's expression-level ingredients, read for the
//! idea: the new expression is built only from what the statement already holds (its target,
//! its operands, the function's locals of the same kind), so each site yields a handful of
//! candidates, not a combinatorial set.

use std::collections::BTreeMap;

use rustpython_parser::ast::{Constant, Expr, ExprContext, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::hint::Effect;
use crate::search::mutate::{in_loop, kinds_of, names_of, one_line, with_probed};

use crate::search::family::Family;
use crate::syntax::rng;
use super::calls::{module_names, project_function};
use super::operators::{mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::Clamp, Family::DropTerm, Family::Offset, Family::CallArg, Family::CombineLocals];

/// Builtins whose call may be a slip for its argument, or the reverse.
const UNWRAP: &[&str] = &[
    "len", "abs", "int", "str", "sorted", "list", "float", "set", "tuple", "round",
];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let text = site.module.text();
    let src = |e: &Expr| text[rng(e.range())].to_string();
    let start = rng(site.stmt.range()).start;
    let names = site.func.map(names_of).unwrap_or_default();
    let looped = site
        .func
        .is_some_and(|f| in_loop(f, rng(site.stmt.range())));
    // A name bound before the statement runs (or on an earlier iteration).
    let bound = |n: &str| {
        names
            .iter()
            .any(|(m, first)| m == n && (looped || *first < start))
    };
    let kinds: BTreeMap<String, String> =
        with_probed(site.func.map(kinds_of).unwrap_or_default(), site.probed);
    let shadowed = |n: &str| names.iter().any(|(m, _)| m == n);
    let module = module_names(site.module.body());
    let mut out = Vec::new();

    clamp(site, &bound, &mut out);

    let whole_value = match site.stmt {
        Stmt::Return(r) => r.value.as_deref(),
        Stmt::Assign(a) => Some(a.value.as_ref()),
        _ => None,
    };
    combine_locals(site, whole_value, &names, &kinds, &bound, &mut out);

    // The statement's whole value, where a dropped literal term moves it by the literal.
    let root = whole_value.map(|v| rng(v.range()));
    // Operands of operators binding tighter than `-`: `len(xs) - 1` goes in parentheses there.
    let tight: Vec<_> = own_exprs(site.stmt)
        .into_iter()
        .filter_map(|e| match e {
            Expr::BinOp(b) if !matches!(b.op, Operator::Add | Operator::Sub) => {
                Some([rng(b.left.range()), rng(b.right.range())])
            }
            Expr::UnaryOp(u) => Some([rng(u.operand.range()), rng(u.operand.range())]),
            _ => None,
        })
        .flatten()
        .collect();
    for e in own_exprs(site.stmt) {
        match e {
            // A term too many: `1 + f(x)` → `f(x)`, `a + b` → `a`, `x * 2` → `x`.
            Expr::BinOp(b) if matches!(b.op, Operator::Add | Operator::Sub | Operator::Mult) => {
                let whole = rng(b.range);
                let (l, r) = (b.left.as_ref(), b.right.as_ref());
                // `a + 1` → `a` is plus-minus-one's (mutate.rs); a literal factor is dropped here.
                let right_literal = matches!(r, Expr::Constant(_));
                // Keeping only a literal would make the value a constant.
                if (!right_literal || matches!(b.op, Operator::Mult))
                    && !matches!(l, Expr::Constant(_))
                {
                    out.push(mutant(
                        site,
                        Family::DropTerm,
                        format!("drop `{}`", one_line(&text[rng(l.range()).end..whole.end])),
                        vec![Edit::replacement(whole.clone(), src(l))],
                        1.0,
                        Vec::new(),
                    ));
                }
                if !matches!(b.op, Operator::Sub) && !matches!(r, Expr::Constant(_)) {
                    // `1 + f(x)` → `f(x)` is the literal becoming 0, as mutate.rs counts
                    // dropping `+ 1`: the same family, so it goes before `0 + f(x)`.
                    let lit = int_value(text, l).filter(|_| matches!(b.op, Operator::Add));
                    let (family, w, fx) = match lit {
                        Some(c) if root == Some(whole.clone()) => {
                            (Family::PlusMinusOne, 1.0, vec![Effect::Add(-c)])
                        }
                        Some(1.0) => (Family::PlusMinusOne, 1.0, vec![Effect::OffByOne]),
                        Some(_) => (Family::PlusMinusOne, 1.0, Vec::new()),
                        None => (Family::DropTerm, 0.8, Vec::new()),
                    };
                    out.push(mutant(
                        site,
                        family,
                        format!(
                            "drop `{}`",
                            one_line(&text[whole.start..rng(r.range()).start])
                        ),
                        vec![Edit::replacement(whole, src(r))],
                        w,
                        fx,
                    ));
                }
            }
            Expr::Call(c) => {
                let Expr::Name(f) = c.func.as_ref() else {
                    continue;
                };
                let name = f.id.as_str();
                // The module's own functions (and those it imports) may be a wrapper too many
                // as well: `escape(striptags(t))` → `striptags(t)`.
                let project = !UNWRAP.contains(&name) && project_function(&module, name);
                if shadowed(name) || !(UNWRAP.contains(&name) || project) {
                    continue;
                }
                if c.args.len() == 1
                    && c.keywords.is_empty()
                    && !matches!(c.args[0], Expr::Starred(_))
                {
                    // A call that should be its argument: `len(xs)` → `xs`.
                    let arg = &c.args[0];
                    let at = src(arg);
                    let new = if needs_parens(arg) {
                        format!("({at})")
                    } else {
                        at.clone()
                    };
                    out.push(mutant(
                        site,
                        Family::CallArg,
                        format!("`{name}({})` → `{}`", one_line(&at), one_line(&at)),
                        vec![Edit::replacement(rng(c.range), new)],
                        if project { 0.8 } else { 1.0 },
                        Vec::new(),
                    ));
                }
                // An offset missing: `len(xs)` → `len(xs) - 1`.
                if name == "len" {
                    let ct = src(e);
                    for (op, w) in [("-", 1.0), ("+", 0.6)] {
                        out.push(mutant(
                            site,
                            Family::Offset,
                            format!("`{ct}` → `{ct} {op} 1`"),
                            vec![Edit::replacement(
                                rng(c.range),
                                if tight.contains(&rng(c.range)) {
                                    format!("({ct} {op} 1)")
                                } else {
                                    format!("{ct} {op} 1")
                                },
                            )],
                            w,
                            vec![Effect::OffByOne],
                        ));
                    }
                }
            }
            _ => {}
        }
    }

    wrap_returned(site, &kinds, &shadowed, &mut out);
    out
}

/// `combine-locals`: a returned or assigned local that should be combined with another local
/// of the same kind, bound before it (`a` → `a + b`).
fn combine_locals(
    site: &Site,
    whole_value: Option<&Expr>,
    names: &[(String, usize)],
    kinds: &BTreeMap<String, String>,
    bound: &dyn Fn(&str) -> bool,
    out: &mut Vec<Mutant>,
) {
    if let Some(Expr::Name(n)) = whole_value {
        let a = n.id.as_str();
        if let Some(k) = kinds
            .get(a)
            .filter(|k| matches!(k.as_str(), "int" | "float" | "str" | "list"))
        {
            let others: Vec<&str> = names
                .iter()
                .map(|(m, _)| m.as_str())
                .filter(|m| *m != a && bound(m) && kinds.get(*m) == Some(k))
                .collect();
            for b in &others {
                out.push(mutant(
                    site,
                    Family::CombineLocals,
                    format!("`{a}` → `{a} + {b}`"),
                    vec![Edit::replacement(rng(n.range), format!("{a} + {b}"))],
                    1.0 / others.len() as f64,
                    Vec::new(),
                ));
            }
        }
    }
}

/// `clamp`, and `offset`'s missing power: the assigned variable clamped or accumulated with
/// (`x = v` → `x = max(x, v)`, `x += v`, `max(0, v)`; `best += g` → `best = max(best, g)`).
fn clamp(site: &Site, bound: &dyn Fn(&str) -> bool, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let src = |e: &Expr| text[rng(e.range())].to_string();
    match site.stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => {
            if let (Expr::Name(t), v) = (&a.targets[0], a.value.as_ref()) {
                let (x, vt) = (t.id.as_str(), src(v));
                let plain = !matches!(
                    v,
                    Expr::Constant(_)
                        | Expr::List(_)
                        | Expr::Dict(_)
                        | Expr::Set(_)
                        | Expr::Tuple(_)
                ) && !mentions(v, x);
                if plain && site.func.is_some() {
                    let vr = rng(v.range());
                    if bound(x) {
                        for (f, w) in [("max", 1.0), ("min", 0.7)] {
                            out.push(mutant(
                                site,
                                Family::Clamp,
                                format!("`{x} = {}` → `{x} = {f}({x}, …)`", one_line(&vt)),
                                vec![Edit::replacement(vr.clone(), format!("{f}({x}, {vt})"))],
                                w,
                                Vec::new(),
                            ));
                        }
                        let gap = rng(t.range).end..vr.start;
                        out.push(mutant(
                            site,
                            Family::Clamp,
                            format!("`{x} =` → `{x} +=`"),
                            vec![Edit::replacement(gap, " += ")],
                            0.6,
                            Vec::new(),
                        ));
                    }
                    out.push(mutant(
                        site,
                        Family::Clamp,
                        format!("`{}` → `max(0, …)`", one_line(&vt)),
                        vec![Edit::replacement(vr, format!("max(0, {vt})"))],
                        0.4,
                        Vec::new(),
                    ));
                }
            }
        }
        Stmt::AugAssign(a) if matches!(a.op, Operator::Add) => {
            if let Expr::Name(t) = a.target.as_ref() {
                let (x, vt) = (t.id.as_str(), src(&a.value));
                // An accumulation that should keep the best (`best += gain` → `max`).
                out.push(mutant(
                    site,
                    Family::Clamp,
                    format!("`{x} += …` → `{x} = max({x}, …)`"),
                    vec![Edit::replacement(
                        rng(a.range),
                        format!("{x} = max({x}, {vt})"),
                    )],
                    0.5,
                    Vec::new(),
                ));
                // A power missing on what is summed (`total += x` → `x ** 2`).
                if matches!(
                    a.value.as_ref(),
                    Expr::Name(_) | Expr::Subscript(_) | Expr::Attribute(_)
                ) {
                    out.push(mutant(
                        site,
                        Family::Offset,
                        format!("`{vt}` → `{vt} ** 2`"),
                        vec![Edit::replacement(
                            rng(a.value.range()),
                            format!("{vt} ** 2"),
                        )],
                        0.6,
                        Vec::new(),
                    ));
                }
            }
        }
        _ => {}
    }
}

/// `call-arg`, the reverse of an unwrap: a returned name that should be a builtin of it
/// (`return xs` → `return len(xs)`), the builtins its kind allows.
fn wrap_returned(
    site: &Site,
    kinds: &BTreeMap<String, String>,
    shadowed: &dyn Fn(&str) -> bool,
    out: &mut Vec<Mutant>,
) {
    if let Stmt::Return(r) = site.stmt {
        if let Some(Expr::Name(n)) = r.value.as_deref() {
            let x = n.id.as_str();
            let wraps: &[&str] = match kinds.get(x).map(String::as_str) {
                Some("list" | "set" | "dict" | "tuple") => &["len", "sorted"],
                Some("int" | "float") => &["abs"],
                Some("str") => &["len"],
                Some(_) => &[],
                None => &["len", "sorted", "abs"],
            };
            for w in wraps.iter().filter(|w| !shadowed(w)) {
                out.push(mutant(
                    site,
                    Family::CallArg,
                    format!("`{x}` → `{w}({x})`"),
                    vec![Edit::replacement(rng(n.range), format!("{w}({x})"))],
                    0.5 / wraps.len() as f64,
                    Vec::new(),
                ));
            }
        }
    }
}

/// The number an integer literal stands for.
fn int_value(text: &str, e: &Expr) -> Option<f64> {
    match e {
        Expr::Constant(c) if matches!(c.value, Constant::Int(_)) => {
            text[rng(c.range)].replace('_', "").parse().ok()
        }
        _ => None,
    }
}

/// Whether `e` reads the name `x` anywhere.
fn mentions(e: &Expr, x: &str) -> bool {
    let mut found = false;
    crate::syntax::walk::walk(
        &[crate::syntax::walk::Node::Expr(e)],
        crate::syntax::MAX_AST_DEPTH,
        |node, _| {
            if let crate::syntax::walk::Node::Expr(Expr::Name(n)) = node {
                if n.id.as_str() == x && matches!(n.ctx, ExprContext::Load) {
                    found = true;
                }
            }
            !found
        },
    );
    found
}

/// Whether `e`, put where a call stood, needs parentheses to keep binding as one operand.
fn needs_parens(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::Name(_)
            | Expr::Attribute(_)
            | Expr::Subscript(_)
            | Expr::Call(_)
            | Expr::List(_)
            | Expr::ListComp(_)
            | Expr::Dict(_)
            | Expr::Set(_)
            | Expr::Tuple(_)
    ) && !matches!(e, Expr::Constant(c) if !matches!(c.value, Constant::Complex { .. }))
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn an_assignment_may_clamp_or_accumulate_with_its_target() {
        let src = "def best(xs):\n    b = 0\n    for x in xs:\n        b = x * 2\n    return b\n";
        let t = titles(src, 4, mutants);
        for want in [
            pair("`b = x * 2` → `b = max(b, …)`", "        b = max(b, x * 2)"),
            pair("`b = x * 2` → `b = min(b, …)`", "        b = min(b, x * 2)"),
            pair("`b =` → `b +=`", "        b += x * 2"),
            pair("`x * 2` → `max(0, …)`", "        b = max(0, x * 2)"),
            pair("drop `* 2`", "        b = x"),
        ] {
            assert!(t.contains(&want), "{want:?} in {t:?}");
        }
        // The first binding is no accumulation: `b` is not bound yet at line 2 of this one.
        let first = "def f(xs):\n    b = len(xs)\n    return b\n";
        let t = titles(first, 2, mutants);
        assert!(!t.iter().any(|(t, _)| t.contains("max(b")), "{t:?}");
    }

    #[test]
    fn terms_calls_and_offsets() {
        let src = "def f(xs, k):\n    return 1 + len(xs)\n";
        let t = titles(src, 2, mutants);
        assert_eq!(
            t,
            vec![
                pair("drop `1 +`", "    return len(xs)"),
                pair("`len(xs)` → `xs`", "    return 1 + xs"),
                pair("`len(xs)` → `len(xs) - 1`", "    return 1 + len(xs) - 1"),
                pair("`len(xs)` → `len(xs) + 1`", "    return 1 + len(xs) + 1"),
            ]
        );
        let mid = "def mid(xs):\n    return xs[len(xs) // 2]\n";
        assert!(titles(mid, 2, mutants).contains(&pair(
            "`len(xs)` → `len(xs) - 1`",
            "    return xs[(len(xs) - 1) // 2]"
        )));
        let sq = "def sq(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n";
        assert!(titles(sq, 4, mutants).contains(&pair("`x` → `x ** 2`", "        t += x ** 2")));
        // A wrapper of the module's own, or one it imports; never a class.
        let own = "from .text import escape, Markup\n\ndef strip(s):\n    return s\n\ndef alt(t):\n    return escape(strip(t)) + Markup(t)\n";
        assert_eq!(
            titles(own, 7, mutants),
            vec![
                pair("drop `+ Markup(t)`", "    return escape(strip(t))"),
                pair("drop `escape(strip(t)) +`", "    return Markup(t)"),
                pair("`escape(strip(t))` → `strip(t)`", "    return strip(t) + Markup(t)"),
                pair("`strip(t)` → `t`", "    return escape(t) + Markup(t)"),
            ]
        );
        let wrap = "def f(xs):\n    out = [x for x in xs if x]\n    return out\n";
        assert_eq!(
            titles(wrap, 3, mutants),
            vec![
                pair("`out` → `len(out)`", "    return len(out)"),
                pair("`out` → `sorted(out)`", "    return sorted(out)"),
            ]
        );
    }

    #[test]
    fn a_local_combines_with_another_of_its_kind_only() {
        let src = "def f(xs):\n    a = 0\n    b = 0\n    s = ''\n    for x in xs:\n        a += x\n        b += 1\n    return a\n";
        let t = titles(src, 8, mutants);
        assert!(
            t.contains(&pair("`a` → `a + b`", "    return a + b")),
            "{t:?}"
        );
        assert!(!t.iter().any(|(t, _)| t.contains("a + s")), "{t:?}");
        // A plain comparison has nothing to expand.
        assert!(titles("def f(a, b):\n    if a < b:\n        pass\n", 2, mutants).is_empty());
    }
}
