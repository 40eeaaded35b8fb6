//! Localization of a hang: a test stopped by the per-test limit failed *where it was stuck*
//! (selfdebug's pytest plugin raises inside the stuck frame), so no spectrum is needed. The
//! suspects are the innermost loop around that line: its header (the condition) first, then
//! the statements of its body (where the loop variable should move: a missing `i += 1`, an
//! update with the wrong sign), in source order, each a little less suspicious than the one
//! before so that the search tries them in that order.

use std::path::Path;

use rustpython_parser::ast::{Expr, Ranged, Stmt};

use super::Suspicious;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

/// The lines of the innermost `while`/`for` loop of `file` around `line`: the header, then
/// each statement of its body (nested blocks' statements too), best first. Empty when the file
/// cannot be read or no loop encloses the line.
pub fn loop_lines(root: &Path, file: &str, line: u32) -> Vec<Suspicious> {
    let Ok(path) = crate::plan::confined_path(root, file) else {
        return Vec::new();
    };
    let Ok(source) = crate::source::SourceFile::read(&path) else {
        return Vec::new();
    };
    let Ok(module) = crate::syntax::parse(&source) else {
        return Vec::new();
    };
    let starts = module.line_starts();
    let Some(&at) = starts.get((line as usize).saturating_sub(1)) else {
        return Vec::new();
    };
    let end = starts
        .get(line as usize)
        .copied()
        .unwrap_or(module.text().len());
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset) as u32;
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    // The innermost loop whose range holds the stuck line (a later, inner one replaces it).
    let mut found: Option<&Stmt> = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s) = node {
            let r = s.range();
            // The statement overlaps the stuck line (it may start on it: a `while` header).
            let holds = r.start().to_usize() < end && at < r.end().to_usize();
            if holds && matches!(s, Stmt::While(_) | Stmt::For(_) | Stmt::AsyncFor(_)) {
                found = Some(s);
            }
            return holds;
        }
        true
    });
    let Some(lp) = found else {
        return Vec::new();
    };
    // `while True:` with no way out is endless on purpose (or needs new code): no small edit
    // of its statements ends it — unless its body consumes a local (`queue.pop()`,
    // `rest = rest[1:]`), whose emptiness is the exit the search's `loop-exit` proposes.
    if let Stmt::While(w) = lp {
        if matches!(w.test.as_ref(), rustpython_parser::ast::Expr::Constant(_))
            && !has_exit(&w.body)
            && crate::syntax::queries::consumed_in(&w.body).is_empty()
        {
            return Vec::new();
        }
    }
    let body = match lp {
        Stmt::While(w) => &w.body,
        Stmt::For(f) => &f.body,
        Stmt::AsyncFor(f) => &f.body,
        _ => return Vec::new(),
    };
    let mut lines = vec![line_of(lp.range().start().to_usize())];
    let inner: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&inner, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s) = node {
            let l = line_of(s.range().start().to_usize());
            if !lines.contains(&l) {
                lines.push(l);
            }
        }
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)) | Node::Expr(_)
        )
    });
    lines.sort_unstable();
    // A `while` ends when its condition's names move: the statements that assign them (the
    // loop's steps: `lo = mid` that should be `lo = mid + 1`) come right after the header.
    if let Stmt::While(w) = lp {
        let steps = step_lines(&w.test, body, &line_of);
        let (mut first, rest): (Vec<u32>, Vec<u32>) =
            lines.iter().skip(1).partition(|l| steps.contains(l));
        first.insert(0, lines[0]);
        first.extend(rest);
        lines = first;
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| Suspicious {
            file: file.to_string(),
            line: l,
            // 1.0, 0.99, ...: the order above, read by the ranking as a score.
            score: ((1.0 - 0.01 * i as f64).max(0.01) * 10_000.0).round() / 10_000.0,
        })
        .collect()
}

/// The lines of the statements in `body` (nested blocks too, not nested functions) that assign
/// a name the loop condition `test` reads.
fn step_lines(test: &Expr, body: &[Stmt], line_of: &dyn Fn(usize) -> u32) -> Vec<u32> {
    let mut read: Vec<&str> = Vec::new();
    walk::walk(&[Node::Expr(test)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            read.push(n.id.as_str());
        }
        true
    });
    let assigns = |t: &Expr| matches!(t, Expr::Name(n) if read.contains(&n.id.as_str()));
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let step = match s {
            Stmt::Assign(a) => a.targets.iter().any(|t| {
                assigns(t) || matches!(t, Expr::Tuple(tp) if tp.elts.iter().any(&assigns))
            }),
            Stmt::AugAssign(a) => assigns(&a.target),
            Stmt::AnnAssign(a) => assigns(&a.target),
            _ => false,
        };
        if step {
            out.push(line_of(s.range().start().to_usize()));
        }
        !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_))
    });
    out
}

/// Whether a `break`, `return` or `raise` in `body` (not in a nested function) can end a loop.
fn has_exit(body: &[Stmt]) -> bool {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if matches!(
            node,
            Node::Stmt(Stmt::Break(_) | Stmt::Return(_) | Stmt::Raise(_))
        ) {
            found = true;
        }
        !found && !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_around_the_stuck_line_header_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.py"),
            "def find(xs, x):\n    i = 0\n    while i < len(xs):\n        if xs[i] == x:\n            return i\n    return -1\n",
        )
        .unwrap();
        let got: Vec<(u32, f64)> = loop_lines(dir.path(), "m.py", 4)
            .into_iter()
            .map(|s| (s.line, s.score))
            .collect();
        assert_eq!(got, vec![(3, 1.0), (4, 0.99), (5, 0.98)]);
        // Stuck on the header itself.
        assert_eq!(loop_lines(dir.path(), "m.py", 3).len(), 3);
        assert!(loop_lines(dir.path(), "m.py", 2).is_empty());
        assert!(loop_lines(dir.path(), "nope.py", 2).is_empty());
        std::fs::write(
            dir.path().join("spin.py"),
            "def spin():\n    n = 0\n    while True:\n        n += 1\n",
        )
        .unwrap();
        assert!(loop_lines(dir.path(), "spin.py", 4).is_empty());
    }

    #[test]
    fn a_while_loops_steps_come_right_after_its_header() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b.py"),
            "def at(xs, v):\n    lo, hi = 0, len(xs)\n    while lo < hi:\n        mid = (lo + hi) // 2\n        if xs[mid] <= v:\n            lo = mid\n        else:\n            hi = mid\n    return lo\n",
        )
        .unwrap();
        let got: Vec<u32> = loop_lines(dir.path(), "b.py", 5)
            .into_iter()
            .map(|s| s.line)
            .collect();
        // Header, the two steps (`lo = mid`, `hi = mid`), then the rest in source order.
        assert_eq!(got, vec![3, 6, 8, 4, 5]);
        // A `for` loop keeps the source order.
        std::fs::write(
            dir.path().join("f.py"),
            "def f(xs):\n    t = 0\n    for x in xs:\n        y = x\n        t += y\n    return t\n",
        )
        .unwrap();
        let got: Vec<u32> = loop_lines(dir.path(), "f.py", 4)
            .into_iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(got, vec![3, 4, 5]);
    }
}
