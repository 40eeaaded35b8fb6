//! Small questions asked of a parsed module or a body: which statement is on a line, which
//! names a target stores, which locals a loop body consumes. The search and the localizer
//! both ask them.

use rustpython_parser::ast::{Expr, ExprContext, Stmt};

use super::walk::{self, Node};
use super::{ParsedModule, MAX_AST_DEPTH};

/// The statement that starts on `line` (innermost; a compound statement stands for its header)
/// and the innermost function around it.
pub fn statement_at(module: &ParsedModule, line: u32) -> Option<(&Stmt, Option<&Stmt>)> {
    let starts = module.line_starts();
    let idx = (line as usize).checked_sub(1)?;
    let start = *starts.get(idx)?;
    let end = starts.get(idx + 1).copied().unwrap_or(module.text().len());
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    let (mut stmt, mut func) = (None, None);
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if r.end < start || r.start >= end {
            return false;
        }
        // An `except` clause holds statements too (the walk reaches them through it).
        let Node::Stmt(s) = node else {
            return matches!(node, Node::Handler(_));
        };
        if r.start >= start {
            stmt = Some(s);
        } else if matches!(s, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)) {
            func = Some(s);
        }
        true
    });
    // A decorated def's range starts at the decorator: its own line still names it.
    let stmt = stmt?;
    if matches!(
        stmt,
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
    ) {
        return None;
    }
    Some((stmt, func))
}

/// Names a target expression stores (`x`, `(k, v)`).
pub fn stored_in_expr(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if matches!(n.ctx, ExprContext::Store) {
                out.push(n.id.to_string());
            }
        }
        true
    });
    out
}

/// Locals the body consumes: `x.pop(…)`/`x.popleft()`/`x.popitem()`, `heappop(x)`,
/// `x = x[…]`, `x = x.next`-like rebinding from itself.
pub fn consumed_in(body: &[Stmt]) -> Vec<String> {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Expr(Expr::Call(c)) => match c.func.as_ref() {
                Expr::Attribute(a) if matches!(a.attr.as_str(), "pop" | "popleft" | "popitem") => {
                    if let Expr::Name(n) = a.value.as_ref() {
                        add(n.id.as_str());
                    }
                }
                f => {
                    let callee = match f {
                        Expr::Name(n) => n.id.as_str(),
                        Expr::Attribute(a) => a.attr.as_str(),
                        _ => "",
                    };
                    if callee == "heappop" {
                        if let Some(Expr::Name(n)) = c.args.first() {
                            add(n.id.as_str());
                        }
                    }
                }
            },
            // `rest = rest[1:]`, `node = node.next`, `head, _, rest = rest.partition(" ")`:
            // a name rebound from its own value.
            // A counter (`n = n + 1`) is not consumed: only a value taken apart from itself.
            Node::Stmt(Stmt::Assign(a)) if a.targets.len() == 1 => {
                if let Some(base) = spine_name(&a.value) {
                    if stored_in_expr(&a.targets[0]).contains(&base) {
                        add(&base);
                    }
                }
            }
            _ => {}
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    out
}

/// The name at the bottom of a chain of subscripts, attributes and method calls
/// (`rest.partition(" ")`, `xs[1:]`, `node.next`, `s.split(",", 1)[1]`).
fn spine_name(e: &Expr) -> Option<String> {
    let mut cur = e;
    let mut steps = 0;
    loop {
        cur = match cur {
            Expr::Subscript(s) => &s.value,
            Expr::Attribute(a) => &a.value,
            Expr::Call(c) if matches!(c.func.as_ref(), Expr::Attribute(_)) => &c.func,
            Expr::Name(n) if steps > 0 => return Some(n.id.to_string()),
            _ => return None,
        };
        steps += 1;
    }
}

#[cfg(test)]
mod tests {
    use rustpython_parser::ast::Stmt;

    /// A statement inside an `except` clause is found like any other (it was not: the search
    /// proposed nothing in error handlers).
    #[test]
    fn statements_in_except_clauses_are_found() {
        let src = "def f(x):\n    try:\n        return g(x)\n    except ValueError as e:\n        msg = 'bad {x}'\n        raise TypeError(msg) from e\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let (stmt, func) = super::statement_at(&pm, 5).unwrap();
        assert!(matches!(stmt, Stmt::Assign(_)) && func.is_some());
        assert!(matches!(
            super::statement_at(&pm, 6),
            Some((Stmt::Raise(_), Some(_)))
        ));
        assert!(matches!(
            super::statement_at(&pm, 3),
            Some((Stmt::Return(_), Some(_)))
        ));
        // The `except` line itself starts no statement.
        assert!(super::statement_at(&pm, 4).is_none());
    }
}
