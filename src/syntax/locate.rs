//! Finding the statement (and the sub-expressions) a traceback line points at.
//!
//! rustpython-ast 0.4 facts this relies on (checked by tests):
//! - a `def`/`class` range starts at `def`/`class`/`async`, **not** at its decorators;
//! - an `elif` is an `If` in the parent's `orelse` whose range starts at the `elif` keyword;
//! - a handler's range starts at `except`; `else:`/`finally:` have no node at all;
//! - statement ranges end at the last token (a trailing comment is outside);
//! - parenthesized expressions' ranges exclude the parentheses, except a parenthesized tuple's,
//!   which includes them (`(a, b)`), while a bare tuple's (`a, b`) has none to include;
//! - identifiers carry no range: an attribute's name is the last bytes of the `Attribute` range;
//! - inside f-strings, `FormattedValue`/`JoinedStr`/`Constant` ranges are the whole literal, but
//!   the expressions in replacement fields have true ranges.

use std::ops::Range;

use rustpython_parser::ast::{self, CmpOp, Expr, ExprContext, Operator, Stmt, UnaryOp};
use serde::Serialize;

use super::walk::{self, Node};
use super::{rng, ParsedModule, MAX_AST_DEPTH};

/// The statement kinds of Python's `ast` module, named as there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StmtKind {
    FunctionDef,
    AsyncFunctionDef,
    ClassDef,
    Return,
    Delete,
    Assign,
    TypeAlias,
    AugAssign,
    AnnAssign,
    For,
    AsyncFor,
    While,
    If,
    With,
    AsyncWith,
    Match,
    Raise,
    Try,
    TryStar,
    Assert,
    Import,
    ImportFrom,
    Global,
    Nonlocal,
    Expr,
    Pass,
    Break,
    Continue,
}

impl StmtKind {
    pub fn of(stmt: &Stmt) -> StmtKind {
        match stmt {
            Stmt::FunctionDef(_) => StmtKind::FunctionDef,
            Stmt::AsyncFunctionDef(_) => StmtKind::AsyncFunctionDef,
            Stmt::ClassDef(_) => StmtKind::ClassDef,
            Stmt::Return(_) => StmtKind::Return,
            Stmt::Delete(_) => StmtKind::Delete,
            Stmt::Assign(_) => StmtKind::Assign,
            Stmt::TypeAlias(_) => StmtKind::TypeAlias,
            Stmt::AugAssign(_) => StmtKind::AugAssign,
            Stmt::AnnAssign(_) => StmtKind::AnnAssign,
            Stmt::For(_) => StmtKind::For,
            Stmt::AsyncFor(_) => StmtKind::AsyncFor,
            Stmt::While(_) => StmtKind::While,
            Stmt::If(_) => StmtKind::If,
            Stmt::With(_) => StmtKind::With,
            Stmt::AsyncWith(_) => StmtKind::AsyncWith,
            Stmt::Match(_) => StmtKind::Match,
            Stmt::Raise(_) => StmtKind::Raise,
            Stmt::Try(_) => StmtKind::Try,
            Stmt::TryStar(_) => StmtKind::TryStar,
            Stmt::Assert(_) => StmtKind::Assert,
            Stmt::Import(_) => StmtKind::Import,
            Stmt::ImportFrom(_) => StmtKind::ImportFrom,
            Stmt::Global(_) => StmtKind::Global,
            Stmt::Nonlocal(_) => StmtKind::Nonlocal,
            Stmt::Expr(_) => StmtKind::Expr,
            Stmt::Pass(_) => StmtKind::Pass,
            Stmt::Break(_) => StmtKind::Break,
            Stmt::Continue(_) => StmtKind::Continue,
        }
    }

    /// Whether the statement has a body (a header ending in `:`).
    pub fn is_compound(self) -> bool {
        matches!(
            self,
            StmtKind::FunctionDef
                | StmtKind::AsyncFunctionDef
                | StmtKind::ClassDef
                | StmtKind::For
                | StmtKind::AsyncFor
                | StmtKind::While
                | StmtKind::If
                | StmtKind::With
                | StmtKind::AsyncWith
                | StmtKind::Match
                | StmtKind::Try
                | StmtKind::TryStar
        )
    }
}

/// Which part of the statement the line is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "clause", rename_all = "snake_case")]
pub enum Clause {
    /// A simple statement (the whole of it).
    Statement,
    /// The header of a compound statement: `if test:`, `for t in it:`, `def f(...):`,
    /// `with ...:`, `try:`, `match subject:`, `while test:`, `class C(...):`.
    Header,
    /// A decorator line of a `def`/`class`. `range` is the decorator expression (without `@`).
    Decorator { index: usize, range: Range<usize> },
    /// An `elif` header; the located statement is the `If` of the elif (its range starts at
    /// `elif`). `test` is the condition.
    Elif { test: Range<usize> },
    /// The `else:` of an `if`/`for`/`while`/`try`.
    Else,
    /// An `except` header. `range` is the whole handler (from `except`).
    Except {
        index: usize,
        range: Range<usize>,
        type_range: Option<Range<usize>>,
    },
    /// The `finally:` of a `try`.
    Finally,
    /// A `case` header of a `match`.
    Case {
        index: usize,
        pattern: Range<usize>,
        guard: Option<Range<usize>>,
    },
    /// Inside the compound statement's range but on none of its parts or body statements (a
    /// blank or comment line).
    Inside,
}

/// The function enclosing a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionInfo {
    pub name: String,
    /// From the first decorator's `@` (or `def`/`async`) to the end of the body.
    pub range: Range<usize>,
    pub is_async: bool,
    /// Defined directly in a class body.
    pub is_method: bool,
}

/// The class enclosing a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClassInfo {
    pub name: String,
    /// From the first decorator's `@` (or `class`) to the end of the body.
    pub range: Range<usize>,
}

/// One sub-expression an exception can be about. Ranges are text byte ranges; parentheses
/// around an operand are not part of its range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubExpr {
    pub range: Range<usize>,
    /// 1-based line where the expression starts.
    pub line: usize,
    /// Inside a `lambda` within the statement (a guard statement cannot go before it).
    pub in_lambda: bool,
    /// Inside a comprehension or generator expression within the statement.
    pub in_comprehension: bool,
    /// Inside an f-string's replacement field (`f"{x}"`): its value is formatted as text.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_fstring: bool,
    /// The iterable of a comprehension's `for` (`[y for y in x]`): its value is iterated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub iterated: bool,
    #[serde(flatten)]
    pub kind: SubExprKind,
}

/// What a [`SubExpr`] is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SubExprKind {
    /// `receiver.name`; `name_range` is the name's bytes (the end of the node's range).
    Attribute {
        receiver: Range<usize>,
        name: String,
        name_range: Range<usize>,
        #[serde(serialize_with = "ctx_word")]
        ctx: ExprContext,
    },
    /// `value[slice]`.
    Subscript {
        value: Range<usize>,
        slice: Range<usize>,
        #[serde(serialize_with = "ctx_word")]
        ctx: ExprContext,
    },
    /// `left op right`, op as written (`/`, `//`, `+`, `**`...).
    BinOp {
        op: &'static str,
        left: Range<usize>,
        right: Range<usize>,
    },
    /// `target op= value` (the statement itself; op as written, e.g. `/=`).
    AugAssign {
        op: &'static str,
        target: Range<usize>,
        value: Range<usize>,
    },
    /// `op operand` (`-`, `+`, `~`, `not`).
    UnaryOp {
        op: &'static str,
        operand: Range<usize>,
    },
    /// `left op1 c1 op2 c2 ...`.
    Compare {
        ops: Vec<&'static str>,
        left: Range<usize>,
        comparators: Vec<Range<usize>>,
    },
    /// `func(args..., keywords...)`. `args` counts positional arguments including `*x`;
    /// `keywords` lists names of keyword arguments in order, `**` for `**kwargs`.
    Call {
        func: Range<usize>,
        args: usize,
        keywords: Vec<String>,
    },
    /// A name being read.
    Name { id: String },
}

/// The statement a line points at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Located {
    pub kind: StmtKind,
    pub clause: Clause,
    /// The statement's range: from the first decorator's `@` (for a decorated def/class) or the
    /// first token, to its last token. For an `elif` it starts at `elif`.
    pub range: Range<usize>,
    /// From the start of the first line to the end of the last line (newline excluded); covers
    /// indentation and a trailing comment.
    pub line_range: Range<usize>,
    pub first_line: usize,
    pub last_line: usize,
    /// The line of the clause that matched (the decorator, `elif`, `except`... line; for
    /// [`Clause::Statement`] and [`Clause::Header`] the statement's own first line after
    /// decorators).
    pub clause_line: usize,
    /// Leading whitespace of the first line.
    pub indent: String,
    /// Nothing but whitespace precedes the statement on its line (false for `return` in
    /// `if x: return y`, or for the second statement after `;`).
    pub starts_line: bool,
    pub is_compound: bool,
    /// Statement nesting depth: 0 at module level.
    pub depth: usize,
    pub function: Option<FunctionInfo>,
    pub class: Option<ClassInfo>,
    /// In the body of a `for`/`while` within the same function (not its `else`).
    pub in_loop: bool,
    /// Sub-expressions of this clause (for a compound statement, only its header's or clause's
    /// own expressions), in source order (outer before inner when they start together).
    pub exprs: Vec<SubExpr>,
    /// Set by [`locate`]/[`locate_span`]: the enclosing compound header on the same line, when
    /// the located statement is a one-line body (`if x: return y.split()`).
    pub header: Option<Box<Located>>,
}

impl Located {
    /// Whether this is a compound statement's header or clause rather than a simple statement.
    pub fn is_header(&self) -> bool {
        !matches!(self.clause, Clause::Statement | Clause::Inside)
    }

    /// Sub-expressions overlapping `range` (a text byte range, e.g. from a caret line), in
    /// source order. An empty `range` matches expressions containing its position.
    pub fn exprs_overlapping(&self, range: Range<usize>) -> Vec<&SubExpr> {
        self.exprs
            .iter()
            .filter(|e| overlaps(&e.range, &range))
            .collect()
    }

    /// The sub-expression that best matches `range`: an exact match first, then the smallest
    /// one containing it, then the smallest overlapping one.
    pub fn expr_for_span(&self, range: Range<usize>) -> Option<&SubExpr> {
        best_match(&self.exprs, &range).map(|(e, _)| e)
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    if b.start == b.end {
        a.start <= b.start && b.start < a.end.max(a.start + 1)
    } else {
        a.start < b.end && b.start < a.end
    }
}

/// The best match and its quality: 3 exact, 2 containing, 1 overlapping (smaller is better
/// within a quality).
fn best_match<'a>(exprs: &'a [SubExpr], range: &Range<usize>) -> Option<(&'a SubExpr, u8)> {
    let mut best: Option<(&SubExpr, u8)> = None;
    for e in exprs {
        let q = if e.range == *range {
            3
        } else if e.range.start <= range.start && range.end <= e.range.end {
            2
        } else if overlaps(&e.range, range) {
            1
        } else {
            continue;
        };
        let better = match best {
            None => true,
            Some((b, bq)) => q > bq || (q == bq && q < 3 && e.range.len() < b.range.len()),
        };
        if better {
            best = Some((e, q));
        }
    }
    best
}

/// The innermost statement (or clause) on `line`, 1-based. When several simple statements share
/// the line (`a; b`), the first. Its [`Located::header`] holds the enclosing compound header on
/// the same line, if any.
pub fn locate(pm: &ParsedModule, line: usize) -> Option<Located> {
    let all = locate_all(pm, line);
    pick(all, |_| true)
}

/// Like [`locate`], but prefers the candidate on the line that has a sub-expression matching
/// `span` (a text byte range, e.g. from [`ParsedModule::span_to_range`]), so that in
/// `if x.a: return y.b` a caret under `y.b` picks the `return` and one under `x.a` the `if`.
pub fn locate_span(pm: &ParsedModule, line: usize, span: Range<usize>) -> Option<Located> {
    let all = locate_all(pm, line);
    let best_q = all
        .iter()
        .filter_map(|l| best_match(&l.exprs, &span).map(|(_, q)| q))
        .max();
    match best_q {
        None => pick(all, |_| true),
        Some(q) => {
            // Among candidates with the best match quality, the one whose matching expression is
            // smallest, then the deepest.
            let key = |l: &Located| {
                best_match(&l.exprs, &span)
                    .filter(|(_, bq)| *bq == q)
                    .map(|(e, _)| e.range.len())
            };
            let min_len = all.iter().filter_map(key).min();
            pick(all, |l| key(l).is_some() && key(l) == min_len)
        }
    }
}

fn pick(all: Vec<Located>, ok: impl Fn(&Located) -> bool) -> Option<Located> {
    let mut chosen: Option<usize> = None;
    for (i, l) in all.iter().enumerate() {
        if !ok(l) {
            continue;
        }
        if chosen.is_none_or(|c| l.depth > all[c].depth) {
            chosen = Some(i);
        }
    }
    let c = chosen?;
    let header = all[..c]
        .iter()
        .rev()
        .find(|h| h.depth < all[c].depth && h.is_header())
        .cloned();
    let mut out = all.into_iter().nth(c)?;
    out.header = header.map(Box::new);
    Some(out)
}

/// Every statement and clause on `line`, outermost first: a compound header that shares the
/// line with its one-line body comes before the body's statements.
pub fn locate_all(pm: &ParsedModule, line: usize) -> Vec<Located> {
    let mut out = Vec::new();
    if line == 0 || line > pm.line_starts.len() {
        return out;
    }
    let ctx = Ctx {
        function: None,
        class: None,
        in_loop: false,
        parent_is_class: false,
        depth: 0,
    };
    collect(pm, pm.body(), line, &ctx, &mut out);
    out
}

#[derive(Clone)]
struct Ctx {
    function: Option<FunctionInfo>,
    class: Option<ClassInfo>,
    in_loop: bool,
    parent_is_class: bool,
    depth: usize,
}

fn node_range<T: ast::Ranged>(n: &T) -> Range<usize> {
    rng(n.range())
}

/// The range including decorators (from the first `@`).
fn full_range(pm: &ParsedModule, stmt: &Stmt) -> Range<usize> {
    let r = node_range(stmt);
    let decorators = match stmt {
        Stmt::FunctionDef(s) => &s.decorator_list,
        Stmt::AsyncFunctionDef(s) => &s.decorator_list,
        Stmt::ClassDef(s) => &s.decorator_list,
        _ => return r,
    };
    match decorators.first() {
        Some(d) => at_sign_before(pm, node_range(d).start).min(r.start)..r.end,
        None => r,
    }
}

/// The offset of the `@` before a decorator expression starting at `start`.
fn at_sign_before(pm: &ParsedModule, start: usize) -> usize {
    let bytes = pm.text.as_bytes();
    let mut i = start.min(bytes.len());
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\x0c') {
        i -= 1;
    }
    if i > 0 && bytes[i - 1] == b'@' {
        i - 1
    } else {
        start
    }
}

fn last_line(pm: &ParsedModule, r: &Range<usize>) -> usize {
    pm.line_of(if r.end > r.start { r.end - 1 } else { r.start })
}

struct Segment<'a> {
    /// `None` for a part without a header of its own (the `elif` chain, located on its own).
    clause: Option<Clause>,
    kw_line: usize,
    body: &'a [Stmt],
    exprs: Vec<Node<'a>>,
    ctx: Ctx,
}

fn collect(pm: &ParsedModule, stmts: &[Stmt], line: usize, ctx: &Ctx, out: &mut Vec<Located>) {
    if ctx.depth > MAX_AST_DEPTH {
        return;
    }
    for stmt in stmts {
        let full = full_range(pm, stmt);
        let (l0, l1) = (pm.line_of(full.start), last_line(pm, &full));
        if line < l0 || line > l1 {
            continue;
        }
        let kind = StmtKind::of(stmt);
        if !kind.is_compound() {
            let mut roots = Vec::new();
            walk::stmt_own_exprs(stmt, &mut roots);
            let line0 = pm.line_of(full.start);
            out.push(make(pm, stmt, Clause::Statement, line0, &roots, ctx));
            continue;
        }
        let before = out.len();
        let stmt_range = node_range(stmt);
        let head_line = pm.line_of(stmt_range.start);

        // Decorators: each decorator's lines, from its `@`.
        let decorators: &[Expr] = match stmt {
            Stmt::FunctionDef(s) => &s.decorator_list,
            Stmt::AsyncFunctionDef(s) => &s.decorator_list,
            Stmt::ClassDef(s) => &s.decorator_list,
            _ => &[],
        };
        for (index, d) in decorators.iter().enumerate() {
            let r = node_range(d);
            let dl0 = pm.line_of(at_sign_before(pm, r.start));
            if (dl0..=last_line(pm, &r)).contains(&line) {
                let clause = Clause::Decorator {
                    index,
                    range: r.clone(),
                };
                out.push(make(pm, stmt, clause, dl0, &[Node::Expr(d)], ctx));
            }
        }

        let segments = segments(pm, stmt, ctx, head_line);
        for (i, seg) in segments.iter().enumerate() {
            let body_line = seg
                .body
                .first()
                .map(|b| pm.line_of(full_range(pm, b).start));
            // The header ends at its `:`; lines after it and before the body are comments.
            let limit = match (body_line, segments.get(i + 1)) {
                (Some(b), _) => crate::source::line_end_in(&pm.text, &pm.line_starts, b),
                (None, Some(n)) => crate::source::line_start_in(&pm.line_starts, n.kw_line),
                (None, None) => Some(stmt_range.end),
            }
            .unwrap_or(pm.text.len());
            let hdr_end = header_colon_line(pm, seg.kw_line, limit)
                .or(body_line)
                .unwrap_or(seg.kw_line)
                .max(seg.kw_line);
            if let Some(clause) = &seg.clause {
                if (seg.kw_line..=hdr_end).contains(&line) {
                    out.push(make(pm, stmt, clause.clone(), seg.kw_line, &seg.exprs, ctx));
                }
            }
            collect(pm, seg.body, line, &seg.ctx, out);
        }
        if out.len() == before {
            out.push(make(pm, stmt, Clause::Inside, line, &[], ctx));
        }
    }
}

/// The parts of a compound statement, in source order.
fn segments<'a>(
    pm: &ParsedModule,
    stmt: &'a Stmt,
    ctx: &Ctx,
    head_line: usize,
) -> Vec<Segment<'a>> {
    let stmt_start = node_range(stmt).start;
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    // Decorators come before the `def`/`class` keyword and have their own clause.
    own.retain(|n| n.range().start >= stmt_start);
    let mut parts = Segments {
        pm,
        ctx,
        inner: Ctx {
            depth: ctx.depth + 1,
            parent_is_class: false,
            ..ctx.clone()
        },
        head_line,
        out: Vec::new(),
    };
    match stmt {
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) => parts.function(stmt, own),
        Stmt::ClassDef(s) => parts.class(stmt, s, own),
        Stmt::If(s) => parts.if_chain(s, stmt_start, own),
        Stmt::For(_) | Stmt::AsyncFor(_) | Stmt::While(_) => parts.looping(stmt, own),
        Stmt::With(s) => parts.header(&s.body, own),
        Stmt::AsyncWith(s) => parts.header(&s.body, own),
        Stmt::Match(s) => parts.match_cases(s, own),
        Stmt::Try(_) | Stmt::TryStar(_) => parts.try_parts(stmt),
        _ => {}
    }
    parts.out
}

/// What the segments of one compound statement share while [`segments`] lists them.
struct Segments<'a, 'p> {
    pm: &'p ParsedModule,
    /// The statement's own context.
    ctx: &'p Ctx,
    /// The context of its bodies, one level deeper.
    inner: Ctx,
    /// The line of the statement's keyword.
    head_line: usize,
    out: Vec<Segment<'a>>,
}

impl<'a> Segments<'a, '_> {
    fn push(
        &mut self,
        clause: Option<Clause>,
        kw_line: usize,
        body: &'a [Stmt],
        exprs: Vec<Node<'a>>,
        ctx: Ctx,
    ) {
        self.out.push(Segment {
            clause,
            kw_line,
            body,
            exprs,
            ctx,
        });
    }

    /// The header of a statement with one body in the inner context (`with`).
    fn header(&mut self, body: &'a [Stmt], own: Vec<Node<'a>>) {
        self.push(
            Some(Clause::Header),
            self.head_line,
            body,
            own,
            self.inner.clone(),
        );
    }

    /// An `else:` or `finally:` body after `prev`, in the inner context; none when it is empty.
    fn trailer(&mut self, clause: Clause, prev: &[Stmt], body: &'a [Stmt], keyword: &str) {
        if body.is_empty() {
            return;
        }
        let kw = keyword_line(self.pm, prev, body, keyword);
        self.push(Some(clause), kw, body, Vec::new(), self.inner.clone());
    }

    fn function(&mut self, stmt: &'a Stmt, own: Vec<Node<'a>>) {
        let (name, body, is_async) = match stmt {
            Stmt::FunctionDef(s) => (s.name.to_string(), &s.body, false),
            Stmt::AsyncFunctionDef(s) => (s.name.to_string(), &s.body, true),
            _ => return,
        };
        let fctx = Ctx {
            function: Some(FunctionInfo {
                name,
                range: full_range(self.pm, stmt),
                is_async,
                is_method: self.ctx.parent_is_class,
            }),
            in_loop: false,
            ..self.inner.clone()
        };
        self.push(Some(Clause::Header), self.head_line, body, own, fctx);
    }

    fn class(&mut self, stmt: &'a Stmt, s: &'a ast::StmtClassDef, own: Vec<Node<'a>>) {
        let cctx = Ctx {
            class: Some(ClassInfo {
                name: s.name.to_string(),
                range: full_range(self.pm, stmt),
            }),
            function: None,
            in_loop: false,
            parent_is_class: true,
            ..self.inner.clone()
        };
        self.push(Some(Clause::Header), self.head_line, &s.body, own, cctx);
    }

    /// An `if` or `elif` and its `else`; a following `elif` is one part without a header.
    fn if_chain(&mut self, s: &'a ast::StmtIf, stmt_start: usize, own: Vec<Node<'a>>) {
        let pm = self.pm;
        let is_elif = pm.text[stmt_start..].starts_with("elif");
        let clause = if is_elif {
            Clause::Elif {
                test: node_range(&*s.test),
            }
        } else {
            Clause::Header
        };
        self.push(
            Some(clause),
            self.head_line,
            &s.body,
            own,
            self.inner.clone(),
        );
        let elif = s.orelse.len() == 1
            && matches!(&s.orelse[0], Stmt::If(e) if pm.text[node_range(e).start..].starts_with("elif"));
        if elif {
            // The elif is a statement of its own at the same depth as this `if`.
            let ectx = Ctx {
                depth: self.ctx.depth,
                ..self.ctx.clone()
            };
            self.push(None, self.head_line, &s.orelse, Vec::new(), ectx);
        } else {
            self.trailer(Clause::Else, &s.body, &s.orelse, "else");
        }
    }

    /// `for`, `async for` and `while`: the body in a loop, then the `else`.
    fn looping(&mut self, stmt: &'a Stmt, own: Vec<Node<'a>>) {
        let (body, orelse) = match stmt {
            Stmt::For(s) => (&s.body, &s.orelse),
            Stmt::AsyncFor(s) => (&s.body, &s.orelse),
            Stmt::While(s) => (&s.body, &s.orelse),
            _ => return,
        };
        let lctx = Ctx {
            in_loop: true,
            ..self.inner.clone()
        };
        self.push(Some(Clause::Header), self.head_line, body, own, lctx);
        self.trailer(Clause::Else, body, orelse, "else");
    }

    /// The `match` header (no body of its own), then each `case` with its pattern and guard.
    fn match_cases(&mut self, s: &'a ast::StmtMatch, own: Vec<Node<'a>>) {
        self.push(
            Some(Clause::Header),
            self.head_line,
            &[],
            own,
            self.inner.clone(),
        );
        for (index, case) in s.cases.iter().enumerate() {
            let pattern = node_range(&case.pattern);
            let guard = case.guard.as_deref().map(node_range);
            let mut exprs = vec![Node::Pattern(&case.pattern)];
            if let Some(g) = &case.guard {
                exprs.push(Node::Expr(g));
            }
            let clause = Clause::Case {
                index,
                pattern: pattern.clone(),
                guard,
            };
            let kw = self.pm.line_of(pattern.start);
            self.push(Some(clause), kw, &case.body, exprs, self.inner.clone());
        }
    }

    /// `try` (and `try`/`except*`): the body, each handler, `else`, `finally`.
    fn try_parts(&mut self, stmt: &'a Stmt) {
        let (body, handlers, orelse, finalbody) = match stmt {
            Stmt::Try(s) => (&s.body, &s.handlers, &s.orelse, &s.finalbody),
            Stmt::TryStar(s) => (&s.body, &s.handlers, &s.orelse, &s.finalbody),
            _ => return,
        };
        self.push(
            Some(Clause::Header),
            self.head_line,
            body,
            Vec::new(),
            self.inner.clone(),
        );
        let mut prev: &[Stmt] = body;
        for (index, h) in handlers.iter().enumerate() {
            let ast::ExceptHandler::ExceptHandler(hh) = h;
            let range = node_range(h);
            let type_range = hh.type_.as_deref().map(node_range);
            let exprs = hh.type_.as_deref().map(Node::Expr).into_iter().collect();
            let clause = Clause::Except {
                index,
                range: range.clone(),
                type_range,
            };
            let kw = self.pm.line_of(range.start);
            self.push(Some(clause), kw, &hh.body, exprs, self.inner.clone());
            prev = &hh.body;
        }
        self.trailer(Clause::Else, prev, orelse, "else");
        if !orelse.is_empty() {
            prev = orelse;
        }
        self.trailer(Clause::Finally, prev, finalbody, "finally");
    }
}

/// The line of the `:` that ends a header starting on `kw_line` (the first `:` outside brackets
/// from the start of that line; compound statements always begin their line), looking no
/// further than `limit`.
fn header_colon_line(pm: &ParsedModule, kw_line: usize, limit: usize) -> Option<usize> {
    let start = crate::source::line_start_in(&pm.line_starts, kw_line)?;
    let text = pm.text.get(start..limit.max(start))?;
    let mut depth = 0usize;
    for tok in super::scan::scan(text).tokens {
        match &text[tok.start..tok.end] {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            ":" if depth == 0 => return Some(pm.line_of(start + tok.start)),
            _ => {}
        }
    }
    None
}

/// The line of `keyword` (`else`/`finally`) between the end of `before` and the start of
/// `after`; the first line of `after` when no such line is found.
fn keyword_line(pm: &ParsedModule, before: &[Stmt], after: &[Stmt], keyword: &str) -> usize {
    let to = after
        .first()
        .map_or(1, |s| pm.line_of(full_range(pm, s).start));
    let from = before
        .last()
        .map_or(to, |s| last_line(pm, &full_range(pm, s)) + 1);
    for l in from..=to {
        let (Some(a), Some(b)) = (
            crate::source::line_start_in(&pm.line_starts, l),
            crate::source::line_end_in(&pm.text, &pm.line_starts, l),
        ) else {
            continue;
        };
        let t = pm.text[a..b].trim_start_matches([' ', '\t', '\x0c']);
        if let Some(rest) = t.strip_prefix(keyword) {
            if rest.starts_with([':', ' ', '\t']) {
                return l;
            }
        }
    }
    to
}

fn make(
    pm: &ParsedModule,
    stmt: &Stmt,
    clause: Clause,
    clause_line: usize,
    roots: &[Node<'_>],
    ctx: &Ctx,
) -> Located {
    let range = full_range(pm, stmt);
    let first_line = pm.line_of(range.start);
    let last = last_line(pm, &range);
    let ls = crate::source::line_start_in(&pm.line_starts, first_line).unwrap_or(0);
    let le = crate::source::line_end_in(&pm.text, &pm.line_starts, last).unwrap_or(pm.text.len());
    let first_text = &pm.text[ls..range.start.max(ls)];
    let indent_len = first_text.len() - first_text.trim_start_matches([' ', '\t', '\x0c']).len();
    let kind = StmtKind::of(stmt);
    let mut exprs = sub_exprs(pm, roots);
    if let Stmt::AugAssign(a) = stmt {
        if clause == Clause::Statement {
            exprs.insert(
                0,
                SubExpr {
                    range: range.clone(),
                    line: first_line,
                    in_lambda: false,
                    in_comprehension: false,
                    in_fstring: false,
                    iterated: false,
                    kind: SubExprKind::AugAssign {
                        op: aug_op_str(&a.op),
                        target: node_range(&*a.target),
                        value: node_range(&*a.value),
                    },
                },
            );
        }
    }
    Located {
        kind,
        clause: clause.clone(),
        range: range.clone(),
        line_range: ls..le,
        first_line,
        last_line: last,
        clause_line: if clause == Clause::Inside {
            clause_line
        } else {
            clause_line.max(1)
        },
        indent: first_text[..indent_len].to_string(),
        starts_line: indent_len == first_text.len(),
        is_compound: kind.is_compound(),
        depth: ctx.depth,
        function: ctx.function.clone(),
        class: ctx.class.clone(),
        in_loop: ctx.in_loop,
        exprs,
        header: None,
    }
}

/// The context's word in the located JSON (`load`, `store`, `del`).
fn ctx_word<S: serde::Serializer>(ctx: &ExprContext, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match ctx {
        ExprContext::Load => "load",
        ExprContext::Store => "store",
        ExprContext::Del => "del",
    })
}

fn op_str(op: &Operator) -> &'static str {
    match op {
        Operator::Add => "+",
        Operator::Sub => "-",
        Operator::Mult => "*",
        Operator::MatMult => "@",
        Operator::Div => "/",
        Operator::Mod => "%",
        Operator::Pow => "**",
        Operator::LShift => "<<",
        Operator::RShift => ">>",
        Operator::BitOr => "|",
        Operator::BitXor => "^",
        Operator::BitAnd => "&",
        Operator::FloorDiv => "//",
    }
}

fn aug_op_str(op: &Operator) -> &'static str {
    match op {
        Operator::Add => "+=",
        Operator::Sub => "-=",
        Operator::Mult => "*=",
        Operator::MatMult => "@=",
        Operator::Div => "/=",
        Operator::Mod => "%=",
        Operator::Pow => "**=",
        Operator::LShift => "<<=",
        Operator::RShift => ">>=",
        Operator::BitOr => "|=",
        Operator::BitXor => "^=",
        Operator::BitAnd => "&=",
        Operator::FloorDiv => "//=",
    }
}

/// A comparison operator as Python spells it.
pub fn cmp_op_text(op: &CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::NotEq => "!=",
        CmpOp::Lt => "<",
        CmpOp::LtE => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtE => ">=",
        CmpOp::Is => "is",
        CmpOp::IsNot => "is not",
        CmpOp::In => "in",
        CmpOp::NotIn => "not in",
    }
}

fn unary_str(op: &UnaryOp) -> &'static str {
    match op {
        UnaryOp::Invert => "~",
        UnaryOp::Not => "not",
        UnaryOp::UAdd => "+",
        UnaryOp::USub => "-",
    }
}

/// The name at the end of an attribute range: identifier bytes walking back from `end`.
fn attr_name_range(text: &str, range: &Range<usize>) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut i = range.end.min(bytes.len());
    while i > range.start
        && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] >= 0x80)
    {
        i -= 1;
    }
    i..range.end
}

/// Every interesting sub-expression under `roots`, sorted by (start, longest first).
fn sub_exprs(pm: &ParsedModule, roots: &[Node<'_>]) -> Vec<SubExpr> {
    let mut out = Vec::new();
    // (node, depth, in a lambda, in a comprehension, in an f-string)
    let mut stack: Vec<(Node, usize, bool, bool, bool)> = roots
        .iter()
        .rev()
        .map(|n| (*n, 1, false, false, false))
        .collect();
    let mut kids = Vec::new();
    // The `for ... in X` iterables of the comprehensions seen so far (parents come first).
    let mut iterables: Vec<Range<usize>> = Vec::new();
    while let Some((node, depth, in_lambda, in_comp, in_fstr)) = stack.pop() {
        if depth > MAX_AST_DEPTH {
            continue;
        }
        let mut child_lambda = in_lambda;
        let mut child_comp = in_comp;
        let mut child_fstr = in_fstr;
        if let Node::Expr(e) = node {
            let range = node_range(e);
            let kind = match e {
                Expr::Attribute(a) => Some(SubExprKind::Attribute {
                    receiver: node_range(&*a.value),
                    name: a.attr.to_string(),
                    name_range: attr_name_range(&pm.text, &range),
                    ctx: a.ctx,
                }),
                Expr::Subscript(s) => Some(SubExprKind::Subscript {
                    value: node_range(&*s.value),
                    slice: node_range(&*s.slice),
                    ctx: s.ctx,
                }),
                Expr::BinOp(b) => Some(SubExprKind::BinOp {
                    op: op_str(&b.op),
                    left: node_range(&*b.left),
                    right: node_range(&*b.right),
                }),
                Expr::UnaryOp(u) => Some(SubExprKind::UnaryOp {
                    op: unary_str(&u.op),
                    operand: node_range(&*u.operand),
                }),
                Expr::Compare(c) => Some(SubExprKind::Compare {
                    ops: c.ops.iter().map(cmp_op_text).collect(),
                    left: node_range(&*c.left),
                    comparators: c.comparators.iter().map(node_range).collect(),
                }),
                Expr::Call(c) => Some(SubExprKind::Call {
                    func: node_range(&*c.func),
                    args: c.args.len(),
                    keywords: c
                        .keywords
                        .iter()
                        .map(|k| {
                            k.arg
                                .as_ref()
                                .map_or_else(|| "**".to_string(), |a| a.to_string())
                        })
                        .collect(),
                }),
                Expr::Name(n) if n.ctx == ExprContext::Load => Some(SubExprKind::Name {
                    id: n.id.to_string(),
                }),
                Expr::Lambda(_) => {
                    child_lambda = true;
                    None
                }
                Expr::ListComp(c) => {
                    iterables.extend(c.generators.iter().map(|g| node_range(&g.iter)));
                    child_comp = true;
                    None
                }
                Expr::SetComp(c) => {
                    iterables.extend(c.generators.iter().map(|g| node_range(&g.iter)));
                    child_comp = true;
                    None
                }
                Expr::DictComp(c) => {
                    iterables.extend(c.generators.iter().map(|g| node_range(&g.iter)));
                    child_comp = true;
                    None
                }
                Expr::GeneratorExp(c) => {
                    iterables.extend(c.generators.iter().map(|g| node_range(&g.iter)));
                    child_comp = true;
                    None
                }
                Expr::JoinedStr(_) => {
                    child_fstr = true;
                    None
                }
                _ => None,
            };
            if let Some(kind) = kind {
                out.push(SubExpr {
                    line: pm.line_of(range.start),
                    in_lambda,
                    in_comprehension: in_comp,
                    in_fstring: in_fstr,
                    iterated: iterables.contains(&range),
                    range,
                    kind,
                });
            }
        }
        kids.clear();
        walk::children(node, &mut kids);
        // Statements never hang below expressions; skip defensively.
        stack.extend(
            kids.drain(..)
                .rev()
                .filter(|k| !matches!(k, Node::Stmt(_) | Node::Handler(_)))
                .map(|k| (k, depth + 1, child_lambda, child_comp, child_fstr)),
        );
    }
    out.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
    });
    out
}
