//! A complete, iterative walker over rustpython-ast 0.4 nodes.
//!
//! rustpython-ast's own `Visitor` skips keyword arguments, comprehension iterators and
//! conditions, `with` items and match cases; this one visits every expression, pattern,
//! statement and handler. It uses an explicit stack, so walking never recurses on the Rust stack
//! however deep the tree is, and it stops descending below a caller-given depth.

use rustpython_parser::ast::{self, Arguments, Expr, Pattern, Stmt, TypeParam};

/// A node with a source range.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    Stmt(&'a Stmt),
    Expr(&'a Expr),
    Pattern(&'a Pattern),
    Handler(&'a ast::ExceptHandler),
}

impl Node<'_> {
    /// Byte range in the parsed text.
    pub fn range(&self) -> std::ops::Range<usize> {
        use rustpython_parser::ast::Ranged;
        let r = match self {
            Node::Stmt(s) => s.range(),
            Node::Expr(e) => e.range(),
            Node::Pattern(p) => p.range(),
            Node::Handler(h) => h.range(),
        };
        super::rng(r)
    }
}

fn push_args<'a>(args: &'a Arguments, out: &mut Vec<Node<'a>>) {
    for a in args.posonlyargs.iter().chain(&args.args) {
        if let Some(ann) = &a.def.annotation {
            out.push(Node::Expr(ann));
        }
        if let Some(d) = &a.default {
            out.push(Node::Expr(d));
        }
    }
    if let Some(v) = &args.vararg {
        if let Some(ann) = &v.annotation {
            out.push(Node::Expr(ann));
        }
    }
    for a in &args.kwonlyargs {
        if let Some(ann) = &a.def.annotation {
            out.push(Node::Expr(ann));
        }
        if let Some(d) = &a.default {
            out.push(Node::Expr(d));
        }
    }
    if let Some(k) = &args.kwarg {
        if let Some(ann) = &k.annotation {
            out.push(Node::Expr(ann));
        }
    }
}

fn push_type_params<'a>(params: &'a [TypeParam], out: &mut Vec<Node<'a>>) {
    for p in params {
        if let TypeParam::TypeVar(tv) = p {
            if let Some(b) = &tv.bound {
                out.push(Node::Expr(b));
            }
        }
    }
}

fn push_stmts<'a>(stmts: &'a [Stmt], out: &mut Vec<Node<'a>>) {
    out.extend(stmts.iter().map(Node::Stmt));
}

fn push_exprs<'a>(exprs: &'a [Expr], out: &mut Vec<Node<'a>>) {
    out.extend(exprs.iter().map(Node::Expr));
}

fn push_comprehensions<'a>(gens: &'a [ast::Comprehension], out: &mut Vec<Node<'a>>) {
    for g in gens {
        out.push(Node::Expr(&g.target));
        out.push(Node::Expr(&g.iter));
        push_exprs(&g.ifs, out);
    }
}

/// The expressions a statement holds directly, without those of nested statements or handlers
/// (decorators, defaults, annotations, tests, targets, values, `with` items, match subjects).
/// Match case patterns and guards are not included: they belong to their case.
pub fn stmt_own_exprs<'a>(stmt: &'a Stmt, out: &mut Vec<Node<'a>>) {
    match stmt {
        Stmt::FunctionDef(s) => {
            push_exprs(&s.decorator_list, out);
            push_type_params(&s.type_params, out);
            push_args(&s.args, out);
            if let Some(r) = &s.returns {
                out.push(Node::Expr(r));
            }
        }
        Stmt::AsyncFunctionDef(s) => {
            push_exprs(&s.decorator_list, out);
            push_type_params(&s.type_params, out);
            push_args(&s.args, out);
            if let Some(r) = &s.returns {
                out.push(Node::Expr(r));
            }
        }
        Stmt::ClassDef(s) => {
            push_exprs(&s.decorator_list, out);
            push_type_params(&s.type_params, out);
            push_exprs(&s.bases, out);
            out.extend(s.keywords.iter().map(|k| Node::Expr(&k.value)));
        }
        Stmt::Return(s) => {
            if let Some(v) = &s.value {
                out.push(Node::Expr(v));
            }
        }
        Stmt::Delete(s) => push_exprs(&s.targets, out),
        Stmt::Assign(s) => {
            push_exprs(&s.targets, out);
            out.push(Node::Expr(&s.value));
        }
        Stmt::TypeAlias(s) => {
            out.push(Node::Expr(&s.name));
            push_type_params(&s.type_params, out);
            out.push(Node::Expr(&s.value));
        }
        Stmt::AugAssign(s) => {
            out.push(Node::Expr(&s.target));
            out.push(Node::Expr(&s.value));
        }
        Stmt::AnnAssign(s) => {
            out.push(Node::Expr(&s.target));
            out.push(Node::Expr(&s.annotation));
            if let Some(v) = &s.value {
                out.push(Node::Expr(v));
            }
        }
        Stmt::For(s) => {
            out.push(Node::Expr(&s.target));
            out.push(Node::Expr(&s.iter));
        }
        Stmt::AsyncFor(s) => {
            out.push(Node::Expr(&s.target));
            out.push(Node::Expr(&s.iter));
        }
        Stmt::While(s) => out.push(Node::Expr(&s.test)),
        Stmt::If(s) => out.push(Node::Expr(&s.test)),
        Stmt::With(s) => {
            for item in &s.items {
                out.push(Node::Expr(&item.context_expr));
                if let Some(v) = &item.optional_vars {
                    out.push(Node::Expr(v));
                }
            }
        }
        Stmt::AsyncWith(s) => {
            for item in &s.items {
                out.push(Node::Expr(&item.context_expr));
                if let Some(v) = &item.optional_vars {
                    out.push(Node::Expr(v));
                }
            }
        }
        Stmt::Match(s) => out.push(Node::Expr(&s.subject)),
        Stmt::Raise(s) => {
            if let Some(e) = &s.exc {
                out.push(Node::Expr(e));
            }
            if let Some(c) = &s.cause {
                out.push(Node::Expr(c));
            }
        }
        Stmt::Try(_) | Stmt::TryStar(_) => {}
        Stmt::Assert(s) => {
            out.push(Node::Expr(&s.test));
            if let Some(m) = &s.msg {
                out.push(Node::Expr(m));
            }
        }
        Stmt::Expr(s) => out.push(Node::Expr(&s.value)),
        Stmt::Import(_)
        | Stmt::ImportFrom(_)
        | Stmt::Global(_)
        | Stmt::Nonlocal(_)
        | Stmt::Pass(_)
        | Stmt::Break(_)
        | Stmt::Continue(_) => {}
    }
}

/// The direct children of a node, in field order (close to source order; callers that need
/// exact source order sort by range).
pub fn children<'a>(node: Node<'a>, out: &mut Vec<Node<'a>>) {
    match node {
        Node::Stmt(stmt) => {
            stmt_own_exprs(stmt, out);
            match stmt {
                Stmt::FunctionDef(s) => push_stmts(&s.body, out),
                Stmt::AsyncFunctionDef(s) => push_stmts(&s.body, out),
                Stmt::ClassDef(s) => push_stmts(&s.body, out),
                Stmt::For(s) => {
                    push_stmts(&s.body, out);
                    push_stmts(&s.orelse, out);
                }
                Stmt::AsyncFor(s) => {
                    push_stmts(&s.body, out);
                    push_stmts(&s.orelse, out);
                }
                Stmt::While(s) => {
                    push_stmts(&s.body, out);
                    push_stmts(&s.orelse, out);
                }
                Stmt::If(s) => {
                    push_stmts(&s.body, out);
                    push_stmts(&s.orelse, out);
                }
                Stmt::With(s) => push_stmts(&s.body, out),
                Stmt::AsyncWith(s) => push_stmts(&s.body, out),
                Stmt::Match(s) => {
                    for case in &s.cases {
                        out.push(Node::Pattern(&case.pattern));
                        if let Some(g) = &case.guard {
                            out.push(Node::Expr(g));
                        }
                        push_stmts(&case.body, out);
                    }
                }
                Stmt::Try(s) => {
                    push_stmts(&s.body, out);
                    out.extend(s.handlers.iter().map(Node::Handler));
                    push_stmts(&s.orelse, out);
                    push_stmts(&s.finalbody, out);
                }
                Stmt::TryStar(s) => {
                    push_stmts(&s.body, out);
                    out.extend(s.handlers.iter().map(Node::Handler));
                    push_stmts(&s.orelse, out);
                    push_stmts(&s.finalbody, out);
                }
                _ => {}
            }
        }
        Node::Handler(ast::ExceptHandler::ExceptHandler(h)) => {
            if let Some(t) = &h.type_ {
                out.push(Node::Expr(t));
            }
            push_stmts(&h.body, out);
        }
        Node::Expr(expr) => expr_children(expr, out),
        Node::Pattern(p) => match p {
            Pattern::MatchValue(v) => out.push(Node::Expr(&v.value)),
            Pattern::MatchSingleton(_) | Pattern::MatchStar(_) => {}
            Pattern::MatchSequence(v) => out.extend(v.patterns.iter().map(Node::Pattern)),
            Pattern::MatchMapping(v) => {
                // Keys and patterns pair up in source order.
                for (i, k) in v.keys.iter().enumerate() {
                    out.push(Node::Expr(k));
                    if let Some(p) = v.patterns.get(i) {
                        out.push(Node::Pattern(p));
                    }
                }
                out.extend(v.patterns.iter().skip(v.keys.len()).map(Node::Pattern));
            }
            Pattern::MatchClass(v) => {
                out.push(Node::Expr(&v.cls));
                out.extend(v.patterns.iter().map(Node::Pattern));
                out.extend(v.kwd_patterns.iter().map(Node::Pattern));
            }
            Pattern::MatchAs(v) => {
                if let Some(p) = &v.pattern {
                    out.push(Node::Pattern(p));
                }
            }
            Pattern::MatchOr(v) => out.extend(v.patterns.iter().map(Node::Pattern)),
        },
    }
}

fn expr_children<'a>(expr: &'a Expr, out: &mut Vec<Node<'a>>) {
    match expr {
        Expr::BoolOp(e) => push_exprs(&e.values, out),
        Expr::NamedExpr(e) => {
            out.push(Node::Expr(&e.target));
            out.push(Node::Expr(&e.value));
        }
        Expr::BinOp(e) => {
            out.push(Node::Expr(&e.left));
            out.push(Node::Expr(&e.right));
        }
        Expr::UnaryOp(e) => out.push(Node::Expr(&e.operand)),
        Expr::Lambda(e) => {
            push_args(&e.args, out);
            out.push(Node::Expr(&e.body));
        }
        Expr::IfExp(e) => {
            out.push(Node::Expr(&e.body));
            out.push(Node::Expr(&e.test));
            out.push(Node::Expr(&e.orelse));
        }
        Expr::Dict(e) => {
            for (k, v) in e.keys.iter().zip(&e.values) {
                if let Some(k) = k {
                    out.push(Node::Expr(k));
                }
                out.push(Node::Expr(v));
            }
        }
        Expr::Set(e) => push_exprs(&e.elts, out),
        Expr::ListComp(e) => {
            out.push(Node::Expr(&e.elt));
            push_comprehensions(&e.generators, out);
        }
        Expr::SetComp(e) => {
            out.push(Node::Expr(&e.elt));
            push_comprehensions(&e.generators, out);
        }
        Expr::GeneratorExp(e) => {
            out.push(Node::Expr(&e.elt));
            push_comprehensions(&e.generators, out);
        }
        Expr::DictComp(e) => {
            out.push(Node::Expr(&e.key));
            out.push(Node::Expr(&e.value));
            push_comprehensions(&e.generators, out);
        }
        Expr::Await(e) => out.push(Node::Expr(&e.value)),
        Expr::Yield(e) => {
            if let Some(v) = &e.value {
                out.push(Node::Expr(v));
            }
        }
        Expr::YieldFrom(e) => out.push(Node::Expr(&e.value)),
        Expr::Compare(e) => {
            out.push(Node::Expr(&e.left));
            push_exprs(&e.comparators, out);
        }
        Expr::Call(e) => {
            out.push(Node::Expr(&e.func));
            push_exprs(&e.args, out);
            out.extend(e.keywords.iter().map(|k| Node::Expr(&k.value)));
        }
        Expr::FormattedValue(e) => {
            out.push(Node::Expr(&e.value));
            if let Some(s) = &e.format_spec {
                out.push(Node::Expr(s));
            }
        }
        Expr::JoinedStr(e) => push_exprs(&e.values, out),
        Expr::Constant(_) | Expr::Name(_) => {}
        Expr::Attribute(e) => out.push(Node::Expr(&e.value)),
        Expr::Subscript(e) => {
            out.push(Node::Expr(&e.value));
            out.push(Node::Expr(&e.slice));
        }
        Expr::Starred(e) => out.push(Node::Expr(&e.value)),
        Expr::List(e) => push_exprs(&e.elts, out),
        Expr::Tuple(e) => push_exprs(&e.elts, out),
        Expr::Slice(e) => {
            for part in [&e.lower, &e.upper, &e.step].into_iter().flatten() {
                out.push(Node::Expr(part));
            }
        }
    }
}

/// Visits `roots` and everything below them depth-first (pre-order), calling `f(node, depth)`
/// with roots at depth 1. `f` returns whether to descend into the node. Nodes deeper than
/// `max_depth` are not visited. Iterative: safe on any tree.
pub fn walk<'a>(roots: &[Node<'a>], max_depth: usize, mut f: impl FnMut(Node<'a>, usize) -> bool) {
    let mut stack: Vec<(Node<'a>, usize)> = roots.iter().rev().map(|n| (*n, 1)).collect();
    let mut kids = Vec::new();
    while let Some((node, depth)) = stack.pop() {
        if depth > max_depth {
            continue;
        }
        if !f(node, depth) {
            continue;
        }
        kids.clear();
        children(node, &mut kids);
        stack.extend(kids.drain(..).rev().map(|k| (k, depth + 1)));
    }
}

/// The depth of the deepest node, and the start offset of the first node at that depth.
pub fn max_depth(body: &[Stmt]) -> (usize, usize) {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut best = (0, 0);
    walk(&roots, usize::MAX, |n, d| {
        if d > best.0 {
            best = (d, n.range().start);
        }
        true
    });
    best
}
