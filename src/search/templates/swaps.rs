//! Template: operands, indices or arguments swapped, or a recursive call that does not advance one of its sequences.
//!
//! Two positional arguments swapped are [`crate::search::mutate`]'s `swap-args`; here the
//! operands of a non-commutative operator (`a - b`, `acc + x` for a string or a list), the two
//! indices of `m[i][k]`, and a recursive call that moves one argument (`xs[1:]`, `i + 1`) but
//! passes another of the caller's parameters through unchanged.

use std::collections::BTreeMap;

use rustpython_parser::ast::{Constant, Expr, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::mutate::{kinds_of, one_line, with_probed};

use crate::search::family::Family;
use crate::syntax::rng;
use super::operators::{func_sig, mutant, own_exprs};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::SwapOperands, Family::SwapIndex, Family::AdvanceBoth];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let text = site.module.text();
    let src = |e: &Expr| text[rng(e.range())].to_string();
    let kinds: BTreeMap<String, String> =
        with_probed(site.func.map(kinds_of).unwrap_or_default(), site.probed);
    let kind = |e: &Expr| match e {
        Expr::Name(n) => kinds.get(n.id.as_str()).map(String::as_str),
        Expr::Constant(c) if matches!(c.value, Constant::Str(_)) => Some("str"),
        Expr::JoinedStr(_) => Some("str"),
        Expr::List(_) | Expr::ListComp(_) => Some("list"),
        _ => None,
    };
    let sig = site.func.and_then(func_sig);
    let mut out = Vec::new();

    // `acc += x` that should prepend: `acc = x + acc` (strings and lists only).
    if let Stmt::AugAssign(a) = site.stmt {
        if let (Operator::Add, Expr::Name(t)) = (&a.op, a.target.as_ref()) {
            let x = t.id.as_str();
            if !matches!(
                kinds.get(x).map(String::as_str),
                Some("int" | "float" | "bool")
            ) {
                let v = paren(&a.value, 1, false, text);
                out.push(mutant(
                    site,
                    Family::SwapOperands,
                    format!("`{x} += {}` → `{x} = {} + {x}`", one_line(&v), one_line(&v)),
                    vec![Edit::replacement(rng(a.range), format!("{x} = {v} + {x}"))],
                    0.6,
                    Vec::new(),
                ));
            }
        }
    }
    let assigned = match site.stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => match &a.targets[0] {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        },
        _ => None,
    };

    for e in own_exprs(site.stmt) {
        match e {
            Expr::BinOp(b) => {
                let Some(p) = prec(&b.op) else { continue };
                let (l, r) = (b.left.as_ref(), b.right.as_ref());
                let swappable = match b.op {
                    Operator::Sub | Operator::Div | Operator::FloorDiv | Operator::Mod => true,
                    // Concatenation is not commutative; numbers' `+` is.
                    Operator::Add => {
                        let acc = |o: &Expr| matches!(o, Expr::Name(n) if Some(n.id.as_str()) == assigned);
                        let seq = |o: &Expr| matches!(kind(o), Some("str" | "list"));
                        let num = |o: &Expr| matches!(kind(o), Some("int" | "float"));
                        (seq(l) || seq(r) || acc(l) || acc(r)) && !num(l) && !num(r)
                    }
                    _ => false,
                };
                if !swappable || matches!(l, Expr::Constant(_)) && matches!(r, Expr::Constant(_)) {
                    continue;
                }
                let (lt, rt) = (paren(r, p, false, text), paren(l, p, true, text));
                out.push(mutant(
                    site,
                    Family::SwapOperands,
                    format!("swap `{}` and `{}`", one_line(&src(l)), one_line(&src(r))),
                    vec![Edit::replacement(
                        rng(b.range),
                        format!(
                            "{lt}{}{rt}",
                            &text[rng(l.range()).end..rng(r.range()).start]
                        ),
                    )],
                    1.0,
                    Vec::new(),
                ));
            }
            // `m[i][k]` → `m[k][i]`.
            Expr::Subscript(outer) => {
                let Expr::Subscript(inner) = outer.value.as_ref() else {
                    continue;
                };
                let (i, k) = (inner.slice.as_ref(), outer.slice.as_ref());
                if matches!(i, Expr::Slice(_) | Expr::Tuple(_))
                    || matches!(k, Expr::Slice(_) | Expr::Tuple(_))
                    || src(i) == src(k)
                {
                    continue;
                }
                out.push(mutant(
                    site,
                    Family::SwapIndex,
                    format!("`[{}][{}]` → `[{}][{}]`", src(i), src(k), src(k), src(i)),
                    vec![
                        Edit::replacement(rng(i.range()), src(k)),
                        Edit::replacement(rng(k.range()), src(i)),
                    ],
                    1.0,
                    Vec::new(),
                ));
            }
            Expr::Call(c) => {
                let Some((fname, params)) = &sig else {
                    continue;
                };
                let recursive = match c.func.as_ref() {
                    Expr::Name(n) => n.id.as_str() == *fname,
                    Expr::Attribute(a) => {
                        a.attr.as_str() == *fname
                            && matches!(a.value.as_ref(), Expr::Name(s) if matches!(s.id.as_str(), "self" | "cls"))
                    }
                    _ => false,
                };
                if recursive {
                    advance_both(site, &mut out, c, params, &kinds);
                }
            }
            _ => {}
        }
    }
    out
}

/// `f(xs[1:], ys)` → `f(xs[1:], ys[1:])`, `f(i + 1, j)` → `f(i + 1, j + 1)`: a parameter passed
/// through unchanged moves the way another argument of the same call moves.
fn advance_both(
    site: &Site,
    out: &mut Vec<Mutant>,
    c: &rustpython_parser::ast::ExprCall,
    params: &[&str],
    kinds: &BTreeMap<String, String>,
) {
    let text = site.module.text();
    // How the call advances an argument: a slice start, or `+`/`- k`.
    let mut moves: Vec<(bool, String)> = Vec::new();
    for a in &c.args {
        match a {
            Expr::Subscript(s) => {
                if let (Expr::Name(_), Expr::Slice(sl)) = (s.value.as_ref(), s.slice.as_ref()) {
                    if let (Some(lo), None, None) = (&sl.lower, &sl.upper, &sl.step) {
                        let m = (true, format!("[{}:]", &text[rng(lo.range())]));
                        if !moves.contains(&m) {
                            moves.push(m);
                        }
                    }
                }
            }
            Expr::BinOp(b) if matches!(b.op, Operator::Add | Operator::Sub) => {
                if let (Expr::Name(_), Expr::Constant(k)) = (b.left.as_ref(), b.right.as_ref()) {
                    if matches!(k.value, Constant::Int(_)) {
                        let op = if matches!(b.op, Operator::Add) {
                            "+"
                        } else {
                            "-"
                        };
                        let m = (false, format!(" {op} {}", &text[rng(b.right.range())]));
                        if !moves.contains(&m) {
                            moves.push(m);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let through: Vec<&rustpython_parser::ast::ExprName> = c
        .args
        .iter()
        .filter_map(|a| match a {
            Expr::Name(n)
                if params.contains(&n.id.as_str()) && !matches!(n.id.as_str(), "self" | "cls") =>
            {
                Some(n)
            }
            _ => None,
        })
        .collect();
    let (seqs, ints) = site.func.map(usage_kinds).unwrap_or_default();
    let mut found = Vec::new();
    for n in &through {
        let name = n.id.as_str();
        // A parameter the function indexes or measures is a sequence; one it indexes with is
        // a number (the probe and the literals know no parameter's kind).
        let k = kinds
            .get(name)
            .map(String::as_str)
            .or(if seqs.contains(&name) {
                Some("list")
            } else if ints.contains(&name) {
                Some("int")
            } else {
                None
            });
        for (slice, m) in &moves {
            // A number is not sliced, a sequence is not incremented.
            let fits = if *slice {
                !matches!(k, Some("int" | "float" | "bool"))
            } else {
                !matches!(k, Some("list" | "str" | "dict" | "set" | "tuple"))
            };
            if fits {
                found.push((rng(n.range), format!("{}{m}", n.id.as_str())));
            }
        }
    }
    let count = found.len() as f64;
    for (r, new) in found {
        out.push(mutant(
            site,
            Family::AdvanceBoth,
            format!("`{}` → `{new}` in the recursive call", &text[r.clone()]),
            vec![Edit::replacement(r, new)],
            1.0 / count,
            Vec::new(),
        ));
    }
}

/// Names the function subscripts or passes to `len` (sequences), and names it uses as a
/// subscript (numbers).
fn usage_kinds(func: &Stmt) -> (Vec<&str>, Vec<&str>) {
    let (mut seqs, mut ints) = (Vec::new(), Vec::new());
    let roots = [crate::syntax::walk::Node::Stmt(func)];
    crate::syntax::walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        match node {
            crate::syntax::walk::Node::Expr(Expr::Subscript(s)) => {
                if let Expr::Name(n) = s.value.as_ref() {
                    seqs.push(n.id.as_str());
                }
                if let Expr::Name(n) = s.slice.as_ref() {
                    ints.push(n.id.as_str());
                }
            }
            crate::syntax::walk::Node::Expr(Expr::Call(c)) => {
                if matches!(c.func.as_ref(), Expr::Name(f) if f.id.as_str() == "len") {
                    if let Some(Expr::Name(n)) = c.args.first() {
                        seqs.push(n.id.as_str());
                    }
                }
            }
            _ => {}
        }
        true
    });
    (seqs, ints)
}

/// Binding strength of an arithmetic operator (higher binds tighter).
fn prec(op: &Operator) -> Option<u8> {
    Some(match op {
        Operator::Add | Operator::Sub => 1,
        Operator::Mult | Operator::Div | Operator::FloorDiv | Operator::Mod => 2,
        _ => return None,
    })
}

/// `e`'s text, in parentheses when, as an operand of an operator of precedence `p` (on the
/// right when `right`), it would bind differently.
fn paren(e: &Expr, p: u8, right: bool, text: &str) -> String {
    let t = text[rng(e.range())].to_string();
    let wrap = match e {
        Expr::BinOp(b) => match prec(&b.op) {
            Some(q) => q < p || (right && q == p),
            None => !matches!(b.op, Operator::Pow),
        },
        Expr::Name(_)
        | Expr::Attribute(_)
        | Expr::Subscript(_)
        | Expr::Call(_)
        | Expr::Constant(_)
        | Expr::List(_)
        | Expr::ListComp(_)
        | Expr::Tuple(_)
        | Expr::Dict(_)
        | Expr::JoinedStr(_)
        | Expr::UnaryOp(_) => false,
        _ => true,
    };
    if wrap {
        format!("({t})")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn non_commutative_operands_swap() {
        let src = "def f(a, b, c):\n    d = a - b * c\n    e = a - b - c\n    return d + e\n";
        assert_eq!(
            titles(src, 2, mutants),
            vec![pair("swap `a` and `b * c`", "    d = b * c - a")]
        );
        let t = titles(src, 3, mutants);
        assert_eq!(
            t,
            vec![
                pair("swap `a - b` and `c`", "    e = c - (a - b)"),
                pair("swap `a` and `b`", "    e = b - a - c"),
            ]
        );
        // Numbers' `+` commutes: nothing to swap.
        assert!(titles(src, 4, mutants).is_empty());
    }

    #[test]
    fn concatenation_swaps_and_prepends() {
        let src =
            "def rev(s):\n    out = ''\n    for ch in s:\n        out += ch\n    return out\n";
        assert_eq!(
            titles(src, 4, mutants),
            vec![pair(
                "`out += ch` → `out = ch + out`",
                "        out = ch + out"
            )]
        );
        let acc =
            "def rev(s):\n    out = ''\n    for ch in s:\n        out = out + ch\n    return out\n";
        assert_eq!(
            titles(acc, 4, mutants),
            vec![pair("swap `out` and `ch`", "        out = ch + out")]
        );
        let num = "def total(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n";
        assert!(titles(num, 4, mutants).is_empty());
    }

    #[test]
    fn indices_swap_and_recursion_advances_both() {
        let src = "def tr(m, i, k):\n    return m[i][k]\n";
        assert_eq!(
            titles(src, 2, mutants),
            vec![pair("`[i][k]` → `[k][i]`", "    return m[k][i]")]
        );
        let rec =
            "def same(xs, ys):\n    if not xs:\n        return True\n    return same(xs[1:], ys)\n";
        assert_eq!(
            titles(rec, 4, mutants),
            vec![pair(
                "`ys` → `ys[1:]` in the recursive call",
                "    return same(xs[1:], ys[1:])"
            )]
        );
        let grid = "def paths(i, j, n):\n    return paths(i + 1, j, n)\n";
        assert_eq!(
            titles(grid, 2, mutants),
            vec![
                pair(
                    "`j` → `j + 1` in the recursive call",
                    "    return paths(i + 1, j + 1, n)"
                ),
                pair(
                    "`n` → `n + 1` in the recursive call",
                    "    return paths(i + 1, j, n + 1)"
                ),
            ]
        );
        // `a` and `b` are indexed (sequences): only the index `j` moves like `i + 1`.
        let lcs = "def lcs(a, b, i, j):\n    if a[i] == b[j]:\n        return 1 + lcs(a, b, i + 1, j)\n    return 0\n";
        assert_eq!(
            titles(lcs, 3, mutants)
                .into_iter()
                .filter(|(t, _)| t.ends_with("recursive call"))
                .collect::<Vec<_>>(),
            vec![pair(
                "`j` → `j + 1` in the recursive call",
                "        return 1 + lcs(a, b, i + 1, j + 1)"
            )]
        );
        // A call to another function is not a recursion.
        assert!(titles("def f(xs, ys):\n    return g(xs[1:], ys)\n", 2, mutants).is_empty());
    }
}
