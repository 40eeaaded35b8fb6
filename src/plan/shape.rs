//! What a candidate does to the code it edits, read from the AST of the file before and after
//! (issue 33): whether it **silences** the failure instead of repairing it, whether it
//! **assigns** a missing value, and which literals it **introduces**. Shared by every planner
//! and by the search; nothing here runs anything.
//!
//! Silencing (a [`Silencing`] word on the candidate and its attempt record):
//! - a guard (`if ...: return V`) whose `V` the function returns nowhere else: its other
//!   `return`s, and what its docstring or annotation declare, are all of other kinds (`None`
//!   where it returns text; a value from a function that returns nothing);
//! - a guard that returns early past statements with effects (an assignment to an attribute or
//!   an item, a call made as a statement, other than on a local of the function), not counting
//!   the statement it guards;
//! - an inserted `raise` or exit call (`sys.exit`, `ctx.exit(2)`), or a bare `return` with code
//!   after it;
//! - a deleted statement.
//!
//! A `continue` in a loop skips one item, not the function's work: not silencing. The
//! expected-raise guards (a test that expects the exception) are not classified here: their
//! `raise` is what the test asks for.

use std::ops::Range;
use std::path::Path;

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt, UnaryOp};

use crate::edit::Edit;
use crate::status::Silencing;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, ParsedModule, MAX_AST_DEPTH};
use crate::transform::common::{body_and_params, declared_defaults, rng};

/// Deepest block nesting [`Finder`] descends (CPython's own limit is about 100).
const MAX_BLOCK_DEPTH: usize = 200;

/// What a candidate does, by its AST.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    pub silencing: Option<Silencing>,
    /// It inserts an assignment (`x = ...`, `if x is None: x = ...`): it gives the missing
    /// value instead of leaving without it.
    pub assigns: bool,
}

/// Whether an edit can make a candidate silence or assign at all (it writes `return`, `raise`,
/// an exit, an assignment, or deletes): a cheap test that spares the parse of the others
/// (an operator or a constant changed).
pub fn may_change_shape(edits: &[Edit]) -> bool {
    edits.iter().any(|e| {
        let c = e.content.as_str();
        (matches!(c.trim(), "" | "pass") && !e.range.is_empty())
            || ["return", "raise", "exit", "abort", "quit", "="]
                .iter()
                .any(|w| c.contains(w))
    })
}

/// The shape of the edit `original` → `patched` (decoded texts; `edits` are ranges of
/// `original`). Nothing is said of a text that does not parse.
pub fn shape(original: &str, patched: &str, edits: &[Edit]) -> Shape {
    let (Ok(before), Ok(after)) = (
        syntax::parse_text(Path::new("shape.py"), original),
        syntax::parse_text(Path::new("shape.py"), patched),
    ) else {
        return Shape::default();
    };
    shape_of(&before, &after, edits)
}

/// [`shape`] on parsed texts.
pub fn shape_of(before: &ParsedModule, after: &ParsedModule, edits: &[Edit]) -> Shape {
    let mut out = Shape::default();
    if edits.iter().any(|e| deletes_statement(before, e)) {
        out.silencing = Some(Silencing::Deleted);
    }
    let spans = inserted_spans(edits);
    let mut finder = Finder {
        spans: &spans,
        found: Vec::new(),
    };
    finder.visit(after.body(), None, &[], 0);
    for n in &finder.found {
        let (exit, guarded) = match n.stmt {
            Stmt::If(i) => (i.body.iter().find(|s| is_exit(s)), true),
            s if is_exit(s) => (Some(s), false),
            _ => (None, false),
        };
        let assigns = match n.stmt {
            Stmt::If(i) => i.body.iter().any(is_assignment),
            s => is_assignment(s),
        };
        out.assigns |= assigns && exit.is_none();
        let Some(exit) = exit else { continue };
        let found = classify_exit(exit, guarded, n, after.text(), &spans);
        out.silencing = worst(out.silencing, found);
    }
    out
}

/// The stronger of two verdicts (deleted, exit, foreign value, skips work).
fn worst(a: Option<Silencing>, b: Option<Silencing>) -> Option<Silencing> {
    let rank = |s: &Option<Silencing>| match s {
        None => 0,
        Some(Silencing::SkipsWork) => 1,
        Some(Silencing::ForeignValue) => 2,
        Some(Silencing::Exit) => 3,
        Some(Silencing::Deleted) => 4,
    };
    if rank(&b) > rank(&a) {
        b
    } else {
        a
    }
}

/// An edit that replaces whole statements with nothing (or `pass`).
fn deletes_statement(before: &ParsedModule, e: &Edit) -> bool {
    if !matches!(e.content.trim(), "" | "pass") || e.range.is_empty() {
        return false;
    }
    let mut hit = false;
    let roots: Vec<Node> = before.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let r = rng(s.range());
        if e.range.start <= r.start && r.end <= e.range.end && !matches!(s, Stmt::Pass(_)) {
            hit = true;
        }
        !hit && r.start <= e.range.end && e.range.start <= r.end
    });
    hit
}

/// The ranges of the patched text each edit's content occupies.
fn inserted_spans(edits: &[Edit]) -> Vec<Range<usize>> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| e.range.start);
    let mut delta: isize = 0;
    let mut out = Vec::new();
    for e in sorted {
        let start = (e.range.start as isize + delta).max(0) as usize;
        out.push(start..start + e.content.len());
        delta += e.content.len() as isize - e.range.len() as isize;
    }
    out
}

/// A statement the edit inserted (wholly inside an inserted span), with its function and the
/// statements that run after it when it does not leave (its later siblings, then those of each
/// enclosing block, up to the function's body).
struct NewStmt<'a> {
    stmt: &'a Stmt,
    func: Option<&'a Stmt>,
    after: Vec<&'a Stmt>,
}

struct Finder<'s, 'a> {
    spans: &'s [Range<usize>],
    found: Vec<NewStmt<'a>>,
}

impl<'a> Finder<'_, 'a> {
    fn is_new(&self, r: &Range<usize>) -> bool {
        self.spans
            .iter()
            .any(|s| s.start <= r.start && r.end <= s.end && !s.is_empty())
    }

    fn visit(
        &mut self,
        body: &'a [Stmt],
        func: Option<&'a Stmt>,
        outer: &[&'a Stmt],
        depth: usize,
    ) {
        if depth > MAX_BLOCK_DEPTH {
            return;
        }
        for (i, s) in body.iter().enumerate() {
            let rest =
                || -> Vec<&'a Stmt> { body[i + 1..].iter().chain(outer.iter().copied()).collect() };
            if self.is_new(&rng(s.range())) {
                self.found.push(NewStmt {
                    stmt: s,
                    func,
                    after: rest(),
                });
                continue;
            }
            let d = depth + 1;
            match s {
                Stmt::FunctionDef(f) => self.visit(&f.body, Some(s), &[], d),
                Stmt::AsyncFunctionDef(f) => self.visit(&f.body, Some(s), &[], d),
                Stmt::ClassDef(c) => self.visit(&c.body, None, &[], d),
                Stmt::If(x) => self.blocks(&[&x.body, &x.orelse], func, &rest(), d),
                Stmt::For(x) => self.blocks(&[&x.body, &x.orelse], func, &rest(), d),
                Stmt::AsyncFor(x) => self.blocks(&[&x.body, &x.orelse], func, &rest(), d),
                Stmt::While(x) => self.blocks(&[&x.body, &x.orelse], func, &rest(), d),
                Stmt::With(x) => self.blocks(&[&x.body], func, &rest(), d),
                Stmt::AsyncWith(x) => self.blocks(&[&x.body], func, &rest(), d),
                Stmt::Try(x) => {
                    let mut blocks: Vec<&'a [Stmt]> = vec![&x.body, &x.orelse, &x.finalbody];
                    for h in &x.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        blocks.push(&h.body);
                    }
                    self.blocks(&blocks, func, &rest(), d);
                }
                Stmt::Match(m) => {
                    let blocks: Vec<&'a [Stmt]> = m.cases.iter().map(|c| &c.body[..]).collect();
                    self.blocks(&blocks, func, &rest(), d);
                }
                _ => {}
            }
        }
    }

    fn blocks(
        &mut self,
        blocks: &[&'a [Stmt]],
        func: Option<&'a Stmt>,
        rest: &[&'a Stmt],
        d: usize,
    ) {
        for b in blocks {
            self.visit(b, func, rest, d);
        }
    }
}

/// `return`, `raise`, or a call of an exit function (`sys.exit()`, `exit()`, `ctx.exit(2)`).
fn is_exit(s: &Stmt) -> bool {
    match s {
        Stmt::Return(_) | Stmt::Raise(_) => true,
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Call(c) => match c.func.as_ref() {
                Expr::Name(n) => matches!(n.id.as_str(), "exit" | "quit"),
                Expr::Attribute(a) => matches!(a.attr.as_str(), "exit" | "_exit" | "abort"),
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

fn is_assignment(s: &Stmt) -> bool {
    match s {
        Stmt::Assign(a) => !is_none(&a.value),
        Stmt::AnnAssign(a) => a.value.as_deref().is_some_and(|v| !is_none(v)),
        Stmt::AugAssign(_) => true,
        _ => false,
    }
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Constant(c) if matches!(c.value, Constant::None))
}

/// The verdict on an inserted exit (see the module docs).
fn classify_exit(
    exit: &Stmt,
    guarded: bool,
    n: &NewStmt,
    text: &str,
    spans: &[Range<usize>],
) -> Option<Silencing> {
    let value = match exit {
        Stmt::Return(r) => r.value.as_deref(),
        _ => return Some(Silencing::Exit),
    };
    if !guarded {
        // A `return` at the end completes a function that lacked one; before other code it
        // makes that code dead.
        return (!n.after.is_empty()).then_some(Silencing::Exit);
    }
    let func = n.func?;
    if foreign_value(func, value, text, spans) {
        return Some(Silencing::ForeignValue);
    }
    let locals = local_names(func);
    let skipped = n.after.iter().skip(1);
    skipped
        .into_iter()
        .any(|s| has_effect(s, &locals))
        .then_some(Silencing::SkipsWork)
}

/// What kind of value an expression gives, where its syntax (or a builtin's name) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    None,
    Bool,
    Number,
    Str,
    Bytes,
    List,
    Tuple,
    Dict,
    Set,
    Unknown,
}

fn kind_of(e: &Expr) -> Kind {
    match e {
        Expr::Constant(c) => match &c.value {
            Constant::None => Kind::None,
            Constant::Bool(_) => Kind::Bool,
            Constant::Int(_) | Constant::Float(_) | Constant::Complex { .. } => Kind::Number,
            Constant::Str(_) => Kind::Str,
            Constant::Bytes(_) => Kind::Bytes,
            Constant::Tuple(_) => Kind::Tuple,
            Constant::Ellipsis => Kind::Unknown,
        },
        Expr::JoinedStr(_) => Kind::Str,
        Expr::List(_) | Expr::ListComp(_) => Kind::List,
        Expr::Tuple(_) => Kind::Tuple,
        Expr::Dict(_) | Expr::DictComp(_) => Kind::Dict,
        Expr::Set(_) | Expr::SetComp(_) => Kind::Set,
        Expr::Compare(_) => Kind::Bool,
        Expr::UnaryOp(u) => match u.op {
            UnaryOp::Not => Kind::Bool,
            _ => match kind_of(&u.operand) {
                Kind::Number => Kind::Number,
                _ => Kind::Unknown,
            },
        },
        Expr::BinOp(b) => match (kind_of(&b.left), kind_of(&b.right)) {
            (Kind::Str, _) | (_, Kind::Str) => Kind::Str,
            (Kind::Number, Kind::Number) => Kind::Number,
            _ => Kind::Unknown,
        },
        Expr::IfExp(i) => match (kind_of(&i.body), kind_of(&i.orelse)) {
            (a, b) if a == b => a,
            _ => Kind::Unknown,
        },
        Expr::Call(c) => call_kind(c),
        _ => Kind::Unknown,
    }
}

/// The kind a builtin's or a str method's call returns.
fn call_kind(c: &ast::ExprCall) -> Kind {
    match c.func.as_ref() {
        Expr::Name(n) => match n.id.as_str() {
            "str" | "repr" | "format" | "chr" => Kind::Str,
            "int" | "float" | "len" | "sum" | "round" | "abs" | "ord" => Kind::Number,
            "list" | "sorted" => Kind::List,
            "dict" => Kind::Dict,
            "set" | "frozenset" => Kind::Set,
            "tuple" => Kind::Tuple,
            "bool" | "isinstance" | "any" | "all" | "callable" | "hasattr" => Kind::Bool,
            _ => Kind::Unknown,
        },
        Expr::Attribute(a) => match (kind_of(&a.value), a.attr.as_str()) {
            (Kind::Str, "join" | "format") => Kind::Str,
            _ => Kind::Unknown,
        },
        _ => Kind::Unknown,
    }
}

/// The kind of a literal a docstring or annotation declares (`0`, `""`, `[]`, `None` ...).
fn declared_kind(text: &str) -> Kind {
    syntax::parse_text(Path::new("declared.py"), text)
        .ok()
        .and_then(|m| match m.body() {
            [Stmt::Expr(e)] => Some(kind_of(&e.value)),
            _ => None,
        })
        .unwrap_or(Kind::Unknown)
}

/// `value` is of a kind `func` returns nowhere else (see the module docs). A generator, a
/// value or a return of unknown kind says nothing.
fn foreign_value(func: &Stmt, value: Option<&Expr>, text: &str, spans: &[Range<usize>]) -> bool {
    let guard = value.map_or(Kind::None, kind_of);
    if guard == Kind::Unknown {
        return false;
    }
    let body = match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => return false,
    };
    let mut kinds: Vec<Kind> = Vec::new();
    let mut generator = false;
    let inserted = |r: &Range<usize>| spans.iter().any(|s| s.start <= r.start && r.end <= s.end);
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Expr(Expr::Lambda(_)) => false,
        Node::Expr(Expr::Yield(_) | Expr::YieldFrom(_)) => {
            generator = true;
            false
        }
        Node::Stmt(Stmt::Return(r)) => {
            if !inserted(&rng(r.range())) {
                kinds.push(r.value.as_deref().map_or(Kind::None, kind_of));
            }
            true
        }
        _ => true,
    });
    if generator {
        return false;
    }
    kinds.extend(declared_defaults(func, text).into_iter().map(declared_kind));
    if kinds.contains(&Kind::Unknown) {
        return false;
    }
    if kinds.iter().all(|k| *k == Kind::None) {
        // A procedure: leaving with `None` is what it always does; a value is new.
        return guard != Kind::None;
    }
    !kinds.contains(&guard)
}

/// Names the function binds itself (assigned, loop targets, `with ... as`), not its
/// parameters: calls and stores on them stay inside the function.
fn local_names(func: &Stmt) -> Vec<String> {
    let Some((body, params)) = body_and_params(func) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Expr(Expr::Name(n)) if matches!(n.ctx, ast::ExprContext::Store) => {
            let id = n.id.as_str();
            if !params.contains(&id) && !out.iter().any(|o| o == id) {
                out.push(id.to_string());
            }
            false
        }
        _ => true,
    });
    out
}

/// The name an attribute or item chain starts from (`self` for `self.a[0].b`).
fn root_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => root_name(&a.value),
        Expr::Subscript(s) => root_name(&s.value),
        Expr::Call(c) => root_name(&c.func),
        _ => None,
    }
}

/// `s` (or a statement inside it) changes something outside the function's locals: an
/// attribute or item store, or a call made as a statement, on anything but a local.
fn has_effect(s: &Stmt, locals: &[String]) -> bool {
    let outside = |e: &Expr| root_name(e).is_none_or(|n| !locals.iter().any(|l| l == n));
    let store = |t: &Expr| matches!(t, Expr::Attribute(_) | Expr::Subscript(_)) && outside(t);
    let mut hit = false;
    walk::walk(&[Node::Stmt(s)], MAX_AST_DEPTH, |node, _| {
        if hit {
            return false;
        }
        match node {
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => {
                false
            }
            Node::Stmt(Stmt::Assign(a)) => {
                hit = a.targets.iter().any(store);
                true
            }
            Node::Stmt(Stmt::AugAssign(a)) => {
                hit = store(&a.target);
                true
            }
            Node::Stmt(Stmt::AnnAssign(a)) => {
                hit = a.value.is_some() && store(&a.target);
                true
            }
            Node::Stmt(Stmt::Delete(_)) => {
                hit = true;
                false
            }
            Node::Stmt(Stmt::Expr(e)) => {
                let call = match e.value.as_ref() {
                    Expr::Await(a) => a.value.as_ref(),
                    v => v,
                };
                hit = matches!(call, Expr::Call(c) if outside(&c.func));
                false
            }
            Node::Stmt(_) => true,
            _ => false,
        }
    });
    hit
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of inserting `insert` before line `line` (1-based) of `src`.
    fn inserted(src: &str, line: usize, insert: &str) -> Shape {
        let at: usize = src.split_inclusive('\n').take(line - 1).map(str::len).sum();
        let edits = vec![Edit::insertion(at, insert)];
        let patched = crate::edit::apply(src, &edits).unwrap();
        shape(src, &patched, &edits)
    }

    const TICK: &str = "class R:\n    def fire(self, when=None):\n        cutoff = when + self.grace\n        due = [t for a, t in self.todo if a <= cutoff]\n        self.todo = [p for p in self.todo if p[0] > cutoff]\n        self.fired.extend(due)\n        return due\n";

    #[test]
    fn a_guard_that_skips_the_methods_effects_silences() {
        let s = inserted(TICK, 3, "        if when is None:\n            return []\n");
        assert_eq!(s.silencing, Some(Silencing::SkipsWork));
        let s = inserted(
            TICK,
            3,
            "        if when is None:\n            when = self.clock()\n",
        );
        assert_eq!(
            s,
            Shape {
                silencing: None,
                assigns: true
            }
        );
    }

    #[test]
    fn a_guard_value_of_another_kind_silences() {
        let text = "def label(sep, parts):\n    x = sep.strip()\n    return f\"{x}\".join(parts)\n";
        let s = inserted(text, 2, "    if sep is None:\n        return None\n");
        assert_eq!(s.silencing, Some(Silencing::ForeignValue));
        let s = inserted(text, 2, "    if sep is None:\n        return \"\"\n");
        assert_eq!(s.silencing, None);
        // A procedure returning a value.
        let proc = "def log(self, when):\n    stamp = when.isoformat()\n    print(stamp)\n";
        let s = inserted(proc, 2, "    if when is None:\n        return []\n");
        assert_eq!(s.silencing, Some(Silencing::ForeignValue));
        // What the docstring declares is the function's own value.
        let doc = "def size(xs):\n    \"\"\"How many; returns None when unknown.\"\"\"\n    return len(xs)\n";
        let s = inserted(doc, 3, "    if xs is None:\n        return None\n");
        assert_eq!(s.silencing, None);
        let s = inserted(doc, 3, "    if xs is None:\n        return \"\"\n");
        assert_eq!(s.silencing, Some(Silencing::ForeignValue));
        let undoc = "def size(xs):\n    return len(xs)\n";
        let s = inserted(undoc, 2, "    if xs is None:\n        return None\n");
        assert_eq!(s.silencing, Some(Silencing::ForeignValue));
    }

    #[test]
    fn exits_and_deletions_silence_and_a_missing_return_does_not() {
        let f = "def f(x):\n    y = x + 1\n    print(y)\n";
        assert_eq!(
            inserted(f, 3, "    raise SystemExit(2)\n").silencing,
            Some(Silencing::Exit)
        );
        assert_eq!(
            inserted(f, 3, "    return y\n").silencing,
            Some(Silencing::Exit)
        );
        assert_eq!(inserted(f, 4, "    return y\n").silencing, None);
        assert_eq!(
            inserted(f, 3, "    if y:\n        sys.exit(1)\n").silencing,
            Some(Silencing::Exit)
        );
        let at = f.find("    print").unwrap();
        let edits = vec![Edit::deletion(at..f.len())];
        let patched = crate::edit::apply(f, &edits).unwrap();
        assert_eq!(patched, "def f(x):\n    y = x + 1\n");
        assert_eq!(
            shape(f, &patched, &edits).silencing,
            Some(Silencing::Deleted)
        );
    }

    #[test]
    fn skipping_one_item_or_local_work_is_not_silencing() {
        let f = "def f(rows):\n    out = []\n    for r in rows:\n        v = r.get(1)\n        out.append(v + 1)\n    return out\n";
        assert_eq!(
            inserted(f, 5, "        if v is None:\n            continue\n").silencing,
            None
        );
        // Returning early past local work only, with a value of the kind it returns.
        let g = "def f(xs):\n    out = []\n    out.append(xs[0])\n    return out\n";
        assert_eq!(
            inserted(g, 3, "    if not xs:\n        return []\n").silencing,
            None
        );
    }
}
