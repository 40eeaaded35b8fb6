//! The step of a `while` loop (issue 22 §4, loop-condition edits): a statement in the loop's
//! body that assigns a name the condition reads (`lo = mid` under `while lo < hi`) is what must
//! move the loop towards its end. When it moves by one too little (`lo = mid` where
//! `lo = mid + 1` is meant, the bisection that never converges) the test hangs; the mutator's
//! ±1 does not touch a plain assignment's value, so this proposes `value + 1` and `value - 1`
//! there (family `plus-minus-one`).

use rustpython_parser::ast::{Expr, Ranged, Stmt};

use super::family::Family;
use super::hint::Effect;
use super::mutate::Mutant;
use super::priors::Priors;
use crate::edit::Edit;
use crate::syntax::queries;
use crate::syntax::walk::{self, Node};
use crate::syntax::{ParsedModule, MAX_AST_DEPTH};

const FAMILY: Family = Family::PlusMinusOne;

/// `value ± 1` for the assignment on `line` when it is a step of its innermost `while`.
pub fn mutants(module: &ParsedModule, line: u32, priors: &Priors) -> Vec<Mutant> {
    let Some((Stmt::Assign(a), Some(func))) = queries::statement_at(module, line) else {
        return Vec::new();
    };
    let [Expr::Name(target)] = a.targets.as_slice() else {
        return Vec::new();
    };
    let at = a.range();
    // The innermost `while` of the function whose body holds the assignment.
    let mut test: Option<&Expr> = None;
    walk::walk(&[Node::Stmt(func)], MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        if let Stmt::While(w) = s {
            if w.body.iter().any(|b| b.range().contains_range(at)) {
                test = Some(&w.test);
            }
        }
        s.range().contains_range(at)
    });
    let Some(test) = test else {
        return Vec::new();
    };
    let mut read = false;
    walk::walk(&[Node::Expr(test)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            read |= n.id == target.id;
        }
        !read
    });
    if !read {
        return Vec::new();
    }
    let r = a.value.range();
    let (start, end) = (r.start().to_usize(), r.end().to_usize());
    let Some(inner) = module.text().get(start..end) else {
        return Vec::new();
    };
    let simple = matches!(
        a.value.as_ref(),
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_)
    );
    let wrapped = if simple {
        inner.to_string()
    } else {
        format!("({inner})")
    };
    // `+ 1` first: a step that falls short is the commoner hang (`lo = mid` of a bisection).
    [("+ 1", 1.0), ("- 1", 0.9)]
        .into_iter()
        .map(|(op, w)| Mutant {
            family: FAMILY,
            title: format!("`{inner}` → `{wrapped} {op}` (the loop's step)"),
            edits: vec![Edit::replacement(start..end, format!("{wrapped} {op}"))],
            prior: priors.family(FAMILY) * w,
            effects: vec![Effect::OffByOne],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn titles(src: &str, line: u32) -> Vec<String> {
        let source =
            SourceFile::from_bytes(std::path::Path::new("m.py"), src.as_bytes().to_vec()).unwrap();
        let module = crate::syntax::parse(&source).unwrap();
        mutants(&module, line, Priors::builtin())
            .into_iter()
            .map(|m| m.title)
            .collect()
    }

    #[test]
    fn a_step_of_the_while_condition_moves_by_one() {
        let src = "def at(xs, v):\n    lo, hi = 0, len(xs)\n    while lo < hi:\n        mid = (lo + hi) // 2\n        if xs[mid] <= v:\n            lo = mid\n        else:\n            hi = mid\n    return lo\n";
        assert_eq!(
            titles(src, 6),
            vec![
                "`mid` → `mid + 1` (the loop's step)",
                "`mid` → `mid - 1` (the loop's step)"
            ]
        );
        assert_eq!(titles(src, 8).len(), 2);
        // `mid` is not read by the condition; the tuple before the loop is outside it.
        assert!(titles(src, 4).is_empty());
        assert!(titles(src, 2).is_empty());
        // A compound value is wrapped.
        let src = "def f(n):\n    while n > 0:\n        n = n // 2 - 1\n    return n\n";
        assert_eq!(
            titles(src, 3)[0],
            "`n // 2 - 1` → `(n // 2 - 1) + 1` (the loop's step)"
        );
        // Not in a while loop.
        let src = "def f(xs):\n    for x in xs:\n        y = x\n    return y\n";
        assert!(titles(src, 3).is_empty());
    }
}
