//! Template: an operator or a builtin replaced by another member of its family (bitwise, comparison, min/max, any/all, sum/len).
//!
//! [`super::super::mutate`] already swaps comparison and arithmetic operators (`<` ↔ `<=` in a
//! `while` head included, `/` ↔ `//` ↔ `%`); this adds the families it does not know: the
//! bitwise operators and the builtins that come in pairs (PraPR's "member of the same family"
//! mutators, read for the idea).

use std::ops::Range;

use rustpython_parser::ast::{Expr, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::hint::Effect;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::BitwiseOp, Family::BuiltinSwap];

/// Bitwise operator → its replacements, likeliest first (a slip between `&` and `|`, or the
/// shift's direction, is the usual one; `^` is rarer).
const BITWISE: &[(&str, &[(&str, f64)])] = &[
    ("&", &[("|", 1.0), ("^", 0.4)]),
    ("|", &[("&", 1.0), ("^", 0.5)]),
    ("^", &[("|", 0.7), ("&", 0.5)]),
    ("<<", &[(">>", 1.0)]),
    (">>", &[("<<", 1.0)]),
];

/// Builtins that are each other's mistake.
const PAIRS: &[(&str, &str)] = &[
    ("min", "max"),
    ("max", "min"),
    ("any", "all"),
    ("all", "any"),
    ("sum", "len"),
    ("len", "sum"),
];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let mut out = Vec::new();
    // `flags |= bit` is the same slip as `flags | bit`.
    if let Stmt::AugAssign(a) = site.stmt {
        if let Some(sym) = bitwise_symbol(&a.op) {
            let gap = rng(a.target.range()).end..rng(a.value.range()).start;
            bitwise(site, &mut out, &format!("{sym}="), gap, true);
        }
    }
    let shadowed = site.func.map(crate::search::mutate::names_of);
    for e in own_exprs(site.stmt) {
        match e {
            Expr::BinOp(b) => {
                if let Some(sym) = bitwise_symbol(&b.op) {
                    let gap = rng(b.left.range()).end..rng(b.right.range()).start;
                    bitwise(site, &mut out, sym, gap, false);
                }
            }
            Expr::Call(c) => {
                let Expr::Name(n) = c.func.as_ref() else {
                    continue;
                };
                let name = n.id.as_str();
                // A local named `max` is not the builtin.
                if shadowed
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|(l, _)| l == name))
                {
                    continue;
                }
                for (_, to) in PAIRS.iter().filter(|(from, _)| *from == name) {
                    // `len(a, b)` or `min(x)` of one number would not run: the pair must take
                    // the same arguments (one iterable, or several values for min/max).
                    if matches!(name, "sum" | "len" | "any" | "all") && c.args.len() != 1 {
                        continue;
                    }
                    out.push(mutant(
                        site,
                        Family::BuiltinSwap,
                        format!("`{name}` → `{to}`"),
                        vec![Edit::replacement(rng(n.range), *to)],
                        1.0,
                        Vec::new(),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

fn bitwise(site: &Site, out: &mut Vec<Mutant>, written: &str, gap: Range<usize>, aug: bool) {
    let text = site.module.text();
    let Some(g) = text.get(gap.clone()) else {
        return;
    };
    let from = written.trim_end_matches('=');
    // The operator is the gap's only non-blank, non-parenthesis run.
    let Some(at) = g.find(written) else { return };
    let skip = |s: &str| s.chars().all(|c| c.is_whitespace() || c == '(' || c == ')');
    if g.contains('#') || !skip(&g[..at]) || !skip(&g[at + written.len()..]) {
        return;
    }
    let op = gap.start + at..gap.start + at + written.len();
    let Some((_, tos)) = BITWISE.iter().find(|(f, _)| *f == from) else {
        return;
    };
    for (to, w) in tos.iter() {
        let to = if aug {
            format!("{to}=")
        } else {
            to.to_string()
        };
        out.push(mutant(
            site,
            Family::BitwiseOp,
            format!("`{written}` → `{to}`"),
            vec![Edit::replacement(op.clone(), to)],
            *w,
            Vec::new(),
        ));
    }
}

fn bitwise_symbol(op: &Operator) -> Option<&'static str> {
    Some(match op {
        Operator::BitAnd => "&",
        Operator::BitOr => "|",
        Operator::BitXor => "^",
        Operator::LShift => "<<",
        Operator::RShift => ">>",
        _ => return None,
    })
}

// Helpers shared by this group's templates (expressions, literals, swaps).

/// A mutant of `family` whose prior is the family's × `weight`.
pub(super) fn mutant(
    site: &Site,
    family: Family,
    title: String,
    edits: Vec<Edit>,
    weight: f64,
    effects: Vec<Effect>,
) -> Mutant {
    Mutant {
        family,
        title,
        edits,
        prior: site.priors.family(family) * weight,
        effects,
    }
}

/// Every expression of the statement itself (a compound statement's header), outermost first;
/// lambdas are other code and are not entered.
pub(crate) fn own_exprs(stmt: &Stmt) -> Vec<&Expr> {
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    let mut out = Vec::new();
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(e) = node {
            out.push(e);
        }
        !matches!(node, Node::Expr(Expr::Lambda(_)))
    });
    out
}

/// The enclosing function's name and its parameters (without `self`/`cls`).
pub(super) fn func_sig(func: &Stmt) -> Option<(&str, Vec<&str>)> {
    let (name, args) = match func {
        Stmt::FunctionDef(f) => (f.name.as_str(), &f.args),
        Stmt::AsyncFunctionDef(f) => (f.name.as_str(), &f.args),
        _ => return None,
    };
    let params = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .map(|a| a.def.arg.as_str())
        .collect();
    Some((name, params))
}

#[cfg(test)]
pub(super) mod test_support {
    use crate::search::templates::Site;

    /// `(title, the patched line)` of every mutant `f` proposes at `line` of `src`.
    pub fn titles(
        src: &str,
        line: u32,
        f: fn(&Site) -> Vec<crate::search::mutate::Mutant>,
    ) -> Vec<(String, String)> {
        crate::search::templates::mutants_at(src, line, f)
            .into_iter()
            .map(|m| {
                let new = crate::edit::apply(src, &m.edits).unwrap();
                let l = new.lines().nth(line as usize - 1).unwrap_or("").to_string();
                (m.title, l)
            })
            .collect()
    }

    pub fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{pair, titles};
    use super::*;

    #[test]
    fn bitwise_operators_change_within_their_family() {
        let src = "def f(a, b):\n    x = a & b\n    x |= 4\n    return x << 1\n";
        assert_eq!(
            titles(src, 2, mutants),
            vec![
                pair("`&` → `|`", "    x = a | b"),
                pair("`&` → `^`", "    x = a ^ b")
            ]
        );
        assert_eq!(
            titles(src, 3, mutants),
            vec![
                pair("`|=` → `&=`", "    x &= 4"),
                pair("`|=` → `^=`", "    x ^= 4")
            ]
        );
        assert_eq!(
            titles(src, 4, mutants),
            vec![pair("`<<` → `>>`", "    return x >> 1")]
        );
    }

    #[test]
    fn paired_builtins_swap_unless_shadowed_or_of_another_arity() {
        let src =
            "def f(xs, ys):\n    return max(xs) + min(xs, ys) + sum(xs) + any(xs) + len(xs, 1)\n";
        let t = titles(src, 2, mutants);
        let names: Vec<&str> = t.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "`max` → `min`",
                "`min` → `max`",
                "`sum` → `len`",
                "`any` → `all`"
            ]
        );
        assert_eq!(
            t[0].1,
            "    return min(xs) + min(xs, ys) + sum(xs) + any(xs) + len(xs, 1)"
        );
        let shadow = "def f(xs):\n    max = 3\n    return max(xs)\n";
        assert!(titles(shadow, 3, mutants).is_empty());
        // Nothing where neither family applies.
        assert!(titles("def f(a, b):\n    return a + b\n", 2, mutants).is_empty());
    }
}
