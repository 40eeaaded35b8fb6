//! What the `None` repairs share: the place a `None` was used ([`Target`]) and the facts about
//! it that both [`super::null_guard`] and [`super::null_flow`] read. Kept apart so that neither
//! of those imports the other's helpers (null_guard calls into null_flow, never back).

use std::ops::Range;

use rustpython_parser::ast;

use super::Context;
use crate::syntax::walk::{self, Node};

/// One place where `None` may have been used.
#[derive(Debug, Clone)]
pub(super) struct Target {
    /// The expression that was `None`.
    pub(super) receiver: Range<usize>,
    /// The smallest expression that fails because of it (`text.split()` for `.split`).
    pub(super) failing: Range<usize>,
    /// The receiver is written to (`x.attr = 1`, `del x[k]`): only a guard can help.
    pub(super) store: bool,
    /// Inside a lambda or comprehension: no statement can go before it.
    pub(super) nested: bool,
    /// Default for the receiver in `(receiver or DEFAULT)`, when its type is clear.
    pub(super) receiver_default: Option<&'static str>,
    /// What the failing expression should evaluate to when the receiver is `None`.
    pub(super) result_default: &'static str,
    /// The receiver is a name or attribute chain: safe to evaluate twice.
    pub(super) simple: bool,
    /// Propose the or-default after the guards and the conditional, not first.
    pub(super) or_default_last: bool,
}

/// The empty value of a type as Python names it in a message (`int`, `str`), for an
/// or-default that makes the operation neutral.
pub(super) fn empty_for_type_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "int" | "float" | "complex" | "decimal.Decimal" => "0",
        "str" => "\"\"",
        "list" => "[]",
        "tuple" => "()",
        _ => return None,
    })
}

/// Whether the enclosing function has a `return <value>` of its own (nested functions and
/// lambdas aside).
pub(super) fn function_returns_value(ctx: &Context) -> bool {
    let Some(func) = &ctx.located.function else {
        return false;
    };
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut def: Option<&ast::Stmt> = None;
    walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s @ (ast::Stmt::FunctionDef(_) | ast::Stmt::AsyncFunctionDef(_))) = node {
            let r = node.range();
            let name = match s {
                ast::Stmt::FunctionDef(f) => f.name.as_str(),
                ast::Stmt::AsyncFunctionDef(f) => f.name.as_str(),
                _ => "",
            };
            if name == func.name && func.range.start <= r.start && r.end <= func.range.end {
                def = Some(s);
            }
        }
        def.is_none()
    });
    let body: &[ast::Stmt] = match def {
        Some(ast::Stmt::FunctionDef(f)) => &f.body,
        Some(ast::Stmt::AsyncFunctionDef(f)) => &f.body,
        _ => return true,
    };
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found = false;
    walk::walk(&roots, crate::syntax::MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(
                ast::Stmt::FunctionDef(_) | ast::Stmt::AsyncFunctionDef(_) | ast::Stmt::ClassDef(_),
            ) => return false,
            Node::Expr(ast::Expr::Lambda(_)) => return false,
            Node::Stmt(ast::Stmt::Return(r)) if r.value.is_some() => found = true,
            _ => {}
        }
        !found
    });
    found
}
