//! Small questions asked of a parsed module or a body: which statement is on a line, which
//! names a target stores, which locals a loop body consumes. The search and the localizer
//! both ask them.

use std::ops::Range;

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
        // An `except` clause's body holds statements too.
        let s = match node {
            Node::Stmt(s) => s,
            Node::Handler(_) => return true,
            _ => return false,
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
    names_in_expr(e, |c| matches!(c, ExprContext::Store))
}

/// Names an expression reads, in order (repeats kept).
pub fn loaded_in_expr(e: &Expr) -> Vec<String> {
    names_in_expr(e, |c| matches!(c, ExprContext::Load))
}

fn names_in_expr(e: &Expr, wanted: fn(&ExprContext) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if wanted(&n.ctx) {
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

/// The values a function body returns (not a bare `return`, not `return None`, not in nested
/// definitions or lambdas), in source order.
pub fn value_returns(body: &[Stmt]) -> Vec<&Expr> {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out: Vec<&Expr> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(Stmt::Return(r)) = node {
            if let Some(v) = r.value.as_deref() {
                let none = matches!(v, Expr::Constant(c) if c.value.is_none());
                if !none {
                    out.push(v);
                }
            }
        }
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_))
                | Node::Expr(Expr::Lambda(_))
        )
    });
    out
}

/// Whether a path through `body` ends by assigning locals and falling off the end: the last
/// statement of the body, or of a branch of an `if` that ends it, is an assignment to names
/// (a value computed and dropped, so the function returns `None` there). A path that falls
/// through without computing anything (`if "=" in line: ... return k, v`) is the function's
/// own "nothing found", not this.
pub fn drops_computed_value(body: &[Stmt]) -> bool {
    let to_names = |targets: &[Expr]| {
        targets
            .iter()
            .all(|t| !stored_in_expr(t).is_empty() && matches!(t, Expr::Name(_) | Expr::Tuple(_)))
    };
    match body.last() {
        Some(Stmt::Assign(a)) => to_names(&a.targets),
        Some(Stmt::AugAssign(a)) => to_names(std::slice::from_ref(&a.target)),
        Some(Stmt::AnnAssign(a)) => a.value.is_some() && to_names(std::slice::from_ref(&a.target)),
        Some(Stmt::If(i)) => drops_computed_value(&i.body) || drops_computed_value(&i.orelse),
        _ => false,
    }
}

/// The function of `module` that the value at `r` comes from, when that function returns a
/// value on some path and, on another, computes a value and falls off its end
/// ([`drops_computed_value`]; pylint's `inconsistent-return-statements`): its `None` is a
/// missing `return`, not a value. The
/// value is a call (`parse(x)`, or `self.parse(x)` of the class around it), or a local
/// assigned such a call once. The function's name, for the reason.
pub fn none_from_missing_return(module: &ParsedModule, r: &Range<usize>) -> Option<String> {
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    // The class and function around `r`, and the expression at `r`.
    let (mut class, mut func, mut value): (Option<&Stmt>, Option<&Stmt>, Option<&Expr>) =
        (None, None, None);
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let nr = node.range();
        if !(nr.start <= r.start && r.end <= nr.end) {
            return false;
        }
        match node {
            Node::Stmt(s @ Stmt::ClassDef(_)) => class = Some(s),
            Node::Stmt(s @ (Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_))) => func = Some(s),
            Node::Expr(e) if nr == *r => value = Some(e),
            _ => {}
        }
        true
    });
    let call = match value? {
        Expr::Call(c) => c,
        Expr::Name(n) => {
            // A local assigned once, from a call.
            let body: Vec<Node> = match func? {
                Stmt::FunctionDef(f) => f.body.iter().map(Node::Stmt).collect(),
                Stmt::AsyncFunctionDef(f) => f.body.iter().map(Node::Stmt).collect(),
                _ => return None,
            };
            let mut calls = Vec::new();
            let mut stores = 0;
            walk::walk(&body, MAX_AST_DEPTH, |node, _| {
                match node {
                    Node::Stmt(Stmt::Assign(a)) if a.targets.len() == 1 => {
                        if let (Expr::Name(t), Expr::Call(c)) = (&a.targets[0], a.value.as_ref()) {
                            if t.id == n.id {
                                calls.push(c);
                            }
                        }
                    }
                    Node::Expr(Expr::Name(t))
                        if t.id == n.id && matches!(t.ctx, ExprContext::Store) =>
                    {
                        stores += 1;
                    }
                    _ => {}
                }
                true
            });
            match calls[..] {
                [c] if stores == 1 => c,
                _ => return None,
            }
        }
        _ => return None,
    };
    let (scope, name): (&[Stmt], &str) = match call.func.as_ref() {
        Expr::Name(n) => (module.body(), n.id.as_str()),
        Expr::Attribute(a) if matches!(a.value.as_ref(), Expr::Name(s) if s.id.as_str() == "self") => {
            match class? {
                Stmt::ClassDef(c) => (&c.body, a.attr.as_str()),
                _ => return None,
            }
        }
        _ => return None,
    };
    let body = scope.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == name => Some(&f.body),
        _ => None,
    })?;
    (!value_returns(body).is_empty() && drops_computed_value(body)).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(src: &str) -> ParsedModule {
        crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap()
    }

    fn at(src: &str, needle: &str) -> Range<usize> {
        let i = src.rfind(needle).unwrap();
        i..i + needle.len()
    }

    #[test]
    fn a_none_from_a_branch_that_computes_and_drops_its_value() {
        let src = "class T:\n    def parse(self, e):\n        if isinstance(e, str):\n            return e, 0\n        hours, minutes = divmod(e, 60)\n\n    def total(self, e):\n        h, m = self.parse(e)\n        pair = self.parse(e)\n        return pair\n";
        let m = parsed(src);
        assert_eq!(
            none_from_missing_return(&m, &at(src, "self.parse(e)")),
            Some("parse".to_string())
        );
        // A local assigned the call once.
        let pair = src.rfind("pair").unwrap();
        assert_eq!(
            none_from_missing_return(&m, &(pair..pair + 4)),
            Some("parse".to_string())
        );
    }

    #[test]
    fn a_helper_whose_none_means_nothing_found_is_not_one() {
        // Falling through without computing anything is the helper's own "no pair".
        let src = "def split(line):\n    if '=' in line:\n        k, v = line.split('=')\n        return k, v\n\ndef use(line):\n    k, v = split(line)\n";
        let m = parsed(src);
        assert_eq!(none_from_missing_return(&m, &at(src, "split(line)")), None);
        // A procedure (no value returned anywhere) is not one either.
        let proc = "def log(x):\n    y = x\n\ndef use(x):\n    a, b = log(x)\n";
        assert_eq!(
            none_from_missing_return(&parsed(proc), &at(proc, "log(x)")),
            None
        );
    }

    /// A statement in an `except` clause is found, with its function.
    #[test]
    fn statements_inside_handlers_are_found() {
        let src = "def f(v):\n    try:\n        return int(v)\n    except ValueError:\n        return 0\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let (stmt, func) = super::statement_at(&pm, 5).unwrap();
        assert_eq!(
            &src[crate::syntax::rng(rustpython_parser::ast::Ranged::range(stmt))],
            "return 0"
        );
        assert!(func.is_some());
    }
}
