//! Small, typed edits at one statement: the mutation operators of the search (GenProg/PraPR/TBar
//! family), each a byte-range [`Edit`] list on the parsed text. Nothing here checks that the
//! result parses: [`crate::edit::Fix::apply_to`] re-parses every candidate and drops the rest.

use std::collections::BTreeMap;
use std::ops::Range;

use rustpython_parser::ast::{
    self, BoolOp, Constant, Expr, ExprContext, Operator, Ranged, Stmt, UnaryOp,
};

use crate::edit::Edit;
use crate::syntax::queries::statement_at;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, rng, ParsedModule, MAX_AST_DEPTH};

use super::family::Family;
use super::hint::Effect;
use super::priors::Priors;

/// Every family of edits, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[
    Family::PlusMinusOne,
    Family::CompareOp,
    Family::Variable,
    Family::ArithOp,
    Family::Constant,
    Family::Negate,
    Family::BoolOp,
    Family::MissingReturn,
    Family::SwapArgs,
    Family::Guard,
    Family::DeleteStmt,
];

/// One proposed edit at one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutant {
    pub family: Family,
    /// What changes, e.g. "`<` → `<=`".
    pub title: String,
    pub edits: Vec<Edit>,
    /// Family prior × the weight within the family.
    pub prior: f64,
    /// What the edit does to its statement's value, where that can be said (see
    /// [`super::hint`]).
    pub effects: Vec<Effect>,
}

impl Mutant {
    /// Bytes removed plus bytes inserted: smaller edits first among equals.
    pub fn size(&self) -> usize {
        edits_size(&self.edits)
    }
}

/// How much a set of edits changes: the bytes it removes and writes (smaller ranks first).
pub fn edits_size(edits: &[Edit]) -> usize {
    edits.iter().map(|e| e.range.len() + e.content.len()).sum()
}

/// Every mutant of the statement on `line`. `expected` is the literal the failing test compares
/// with, when it does (a guard returns it).
///
/// `probed`: the runtime types (`type(v).__qualname__`) of the locals of the frame that
/// crashed, when that frame is this statement's function: they give a kind to the names no
/// literal assignment types (parameters above all).
pub fn mutants(
    module: &ParsedModule,
    line: u32,
    priors: &Priors,
    probed: Option<&BTreeMap<String, String>>,
) -> Vec<Mutant> {
    let Some((stmt, func)) = statement_at(module, line) else {
        return Vec::new();
    };
    // In a loop a statement runs many times: what one edit does to the result is not stated,
    // and a name bound further down may already hold the previous iteration's value.
    let looped = func.is_some_and(|f| in_loop(f, rng(stmt.range())));
    let mut m = Mutator {
        text: module.text(),
        priors,
        out: Vec::new(),
        unbound_from: (!looped).then(|| rng(stmt.range()).start),
        func_consts: func
            .map(|f| constants_of(f, module.text()))
            .unwrap_or_default(),
        func_names: func.map(names_of).unwrap_or_default(),
        func_kinds: with_probed(func.map(kinds_of).unwrap_or_default(), probed),
        addends: Vec::new(),
        linear: Vec::new(),
        returned: None,
        comprehensions: Vec::new(),
    };
    // Where a changed literal moves the statement's value linearly (see [`Linear`]).
    let root: Option<(&Expr, Linear)> = match stmt {
        Stmt::Return(r) => r.value.as_deref().map(|v| (v, Linear::ROOT)),
        Stmt::Assign(a) => Some((a.value.as_ref(), Linear::ROOT)),
        Stmt::AugAssign(a) => match a.op {
            Operator::Add => Some((a.value.as_ref(), Linear::add(1.0))),
            Operator::Sub => Some((a.value.as_ref(), Linear::add(-1.0))),
            Operator::Mult => Some((a.value.as_ref(), Linear::mul(false))),
            Operator::Div => Some((a.value.as_ref(), Linear::mul(true))),
            _ => None,
        },
        _ => None,
    };
    if let Some((e, ctx)) = root.filter(|_| !looped) {
        linear_positions(e, ctx, &mut m.linear, 0);
    }
    if let Stmt::Return(r) = stmt {
        m.returned = r.value.as_deref().map(|v| rng(v.range()));
    }
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    m.comprehensions = comprehension_scopes(&own);
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::BinOp(b)) = node {
            if matches!(b.op, Operator::Add | Operator::Sub)
                && matches!(b.right.as_ref(), Expr::Constant(_))
            {
                m.addends.push(rng(b.right.range()));
            }
        }
        true
    });
    match stmt {
        Stmt::If(s) => m.negate_test(&s.test),
        Stmt::While(s) => {
            m.negate_test(&s.test);
            m.missing_step(s);
        }
        Stmt::AugAssign(s) => {
            let gap = rng(s.target.range()).end..rng(s.value.range()).start;
            if let Some(sym) = arith_symbol(&s.op) {
                m.operator("arith", &format!("{sym}="), gap, true);
            }
        }
        _ => {}
    }
    walk::walk(&own, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(e) = node {
            m.expr(e);
        }
        // Lambdas and nested defs are other code; comprehensions are part of the statement.
        !matches!(node, Node::Expr(Expr::Lambda(_)))
    });
    if let Some(f) = func {
        m.missing_return(stmt, f);
    }
    m.delete(stmt);
    m.out
}

/// Mutants of a whole function that belong to no one statement: a None/empty guard on each
/// parameter, returning `expected` (the test's literal), else the empty value the function
/// declares (its docstring, its return annotation), else `None`.
pub fn function_mutants(
    module: &ParsedModule,
    line: u32,
    expected: Option<&str>,
    priors: &Priors,
) -> Vec<Mutant> {
    let Some((_, Some(func))) = statement_at(module, line) else {
        return Vec::new();
    };
    let (args, body) = match func {
        Stmt::FunctionDef(f) => (&f.args, &f.body),
        Stmt::AsyncFunctionDef(f) => (&f.args, &f.body),
        _ => return Vec::new(),
    };
    let text = module.text();
    // After a docstring: the guard is the first thing the function does.
    let first = match body.first() {
        Some(Stmt::Expr(e)) if matches!(e.value.as_ref(), Expr::Constant(c) if matches!(c.value, Constant::Str(_))) => {
            body.get(1)
        }
        other => other,
    };
    let Some(first) = first else {
        return Vec::new();
    };
    let at = rng(first.range()).start;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..at];
    if !indent.chars().all(|c| c == ' ' || c == '\t') {
        return Vec::new();
    }
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let inner = if indent.contains('\t') { "\t" } else { "    " };
    // The test's literal, then what the function's other early exits return, else what it
    // declares (`-> int` → `0`), else `None`. A guard returning the test's literal is left out
    // before any run unless the module already holds it (`plan::literals`): the function's
    // own value stands behind it. An empty expected value (`0`, `""`) is the type's and is
    // never left out: it stands alone, as before.
    let early = early_return(body, text);
    let own = early
        .or_else(|| {
            crate::transform::common::declared_defaults(func, text)
                .first()
                .copied()
        })
        .unwrap_or("None");
    let empty = |e: &str| crate::transform::common::empty_of_type(e) == Some(e);
    let mut values: Vec<&str> = expected.into_iter().collect();
    if !values.contains(&own) && !expected.is_some_and(empty) {
        values.push(own);
    }
    let params: Vec<&str> = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .map(|a| a.def.arg.as_str())
        .filter(|a| !matches!(*a, "self" | "cls"))
        .collect();
    let mut out = Vec::new();
    for (value, p) in values
        .iter()
        .flat_map(|v| params.iter().map(move |p| (v, p)))
    {
        for (cond, w) in [(format!("not {p}"), 1.0), (format!("{p} is None"), 0.6)] {
            out.push(Mutant {
                family: Family::Guard,
                title: format!("guard `if {cond}: return {value}`"),
                edits: vec![Edit::insertion(
                    line_start,
                    format!("{indent}if {cond}:{nl}{indent}{inner}return {value}{nl}"),
                )],
                prior: priors.family(Family::Guard) * w / params.len() as f64,
                // Built from the expected value already: no further hint.
                effects: Vec::new(),
            });
        }
    }
    out
}

/// The plain literal the function returns on its first early exit (a top-level `if` whose body
/// is only `return LITERAL`), when it has one.
fn early_return<'a>(body: &[Stmt], text: &'a str) -> Option<&'a str> {
    body.iter().find_map(|s| match s {
        Stmt::If(i) if i.orelse.is_empty() => match &i.body[..] {
            [Stmt::Return(ast::StmtReturn { value: Some(v), .. })] => {
                let t = text.get(rng(v.range()))?.trim();
                let plain = matches!(
                    t,
                    "None" | "\"\"" | "''" | "[]" | "{}" | "()" | "False" | "True"
                ) || t.parse::<f64>().is_ok();
                plain.then_some(t)
            }
            _ => None,
        },
        _ => None,
    })
}

struct Mutator<'a> {
    text: &'a str,
    priors: &'a Priors,
    out: Vec<Mutant>,
    /// Literal source texts of the enclosing function (for constant replacement).
    func_consts: Vec<(ConstKind, String)>,
    /// Parameters and assigned names of the enclosing function (for variable replacement),
    /// each with the offset of its first binding (0 for a parameter).
    func_names: Vec<(String, usize)>,
    /// A name first bound at or after this offset is not yet bound when the statement runs
    /// (`None` in a loop: a later line may have bound it on the previous iteration).
    unbound_from: Option<usize>,
    /// What kind of value each local holds, where its assignments say so (see [`kinds_of`]).
    func_kinds: BTreeMap<String, String>,
    /// Literals that are the right operand of `+`/`-`: `- 1` → `- 0` is never proposed, the
    /// whole `- 1` is dropped instead (by [`Mutator::plus_minus_one`] or here).
    addends: Vec<Range<usize>>,
    /// Literals and binary operations of the statement's value in a linear position.
    linear: Vec<(Range<usize>, Linear)>,
    /// The returned expression, for a `return` statement.
    returned: Option<Range<usize>>,
    /// The statement's comprehensions (see [`ComprehensionScope`]).
    comprehensions: Vec<ComprehensionScope>,
}

/// Where a comprehension's targets are visible (its element and conditions, and every
/// generator's iterable but the first, which runs outside it) and the names they bind.
struct ComprehensionScope {
    whole: Range<usize>,
    first_iter: Range<usize>,
    bound: Vec<String>,
}

/// The comprehensions under `roots`, each with the names its `for` targets bind.
fn comprehension_scopes(roots: &[Node]) -> Vec<ComprehensionScope> {
    let mut out = Vec::new();
    walk::walk(roots, MAX_AST_DEPTH, |node, _| {
        let gens = match node {
            Node::Expr(Expr::ListComp(c)) => &c.generators,
            Node::Expr(Expr::SetComp(c)) => &c.generators,
            Node::Expr(Expr::GeneratorExp(c)) => &c.generators,
            Node::Expr(Expr::DictComp(c)) => &c.generators,
            _ => return !matches!(node, Node::Expr(Expr::Lambda(_))),
        };
        let Node::Expr(e) = node else { return true };
        let mut bound: Vec<String> = Vec::new();
        let targets: Vec<Node> = gens.iter().map(|g| Node::Expr(&g.target)).collect();
        walk::walk(&targets, MAX_AST_DEPTH, |t, _| {
            if let Node::Expr(Expr::Name(n)) = t {
                if !bound.iter().any(|b| b == n.id.as_str()) && n.id.as_str() != "_" {
                    bound.push(n.id.to_string());
                }
            }
            true
        });
        if let Some(first) = gens.first() {
            out.push(ComprehensionScope {
                whole: rng(e.range()),
                first_iter: rng(first.iter.range()),
                bound,
            });
        }
        true
    });
    out
}

/// How a sub-expression moves the value of its statement: `add` is the sign with which it is
/// added (`a - (b + c)`: `c` has -1), `mul` whether it is a factor, and on which side of a
/// division (`true`: a divisor). `None` where the relation is not linear (inside a call, an
/// index, a product for `add`, a sum for `mul`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Linear {
    add: Option<f64>,
    mul: Option<bool>,
}

impl Linear {
    const ROOT: Linear = Linear {
        add: Some(1.0),
        mul: Some(false),
    };
    fn add(sign: f64) -> Linear {
        Linear {
            add: Some(sign),
            mul: None,
        }
    }
    fn mul(divisor: bool) -> Linear {
        Linear {
            add: None,
            mul: Some(divisor),
        }
    }
}

/// Records the linear positions under `e` (see [`Linear`]).
fn linear_positions(e: &Expr, ctx: Linear, out: &mut Vec<(Range<usize>, Linear)>, depth: usize) {
    if depth > 64 || (ctx.add.is_none() && ctx.mul.is_none()) {
        return;
    }
    match e {
        Expr::Constant(_) => out.push((rng(e.range()), ctx)),
        Expr::UnaryOp(u) if matches!(u.op, UnaryOp::USub) => {
            let neg = Linear {
                add: ctx.add.map(|s| -s),
                mul: ctx.mul,
            };
            linear_positions(&u.operand, neg, out, depth + 1);
        }
        Expr::BinOp(b) => {
            out.push((rng(e.range()), ctx));
            let (l, r) = match b.op {
                Operator::Add => (
                    Linear {
                        add: ctx.add,
                        mul: None,
                    },
                    Linear {
                        add: ctx.add,
                        mul: None,
                    },
                ),
                Operator::Sub => (
                    Linear {
                        add: ctx.add,
                        mul: None,
                    },
                    Linear {
                        add: ctx.add.map(|s| -s),
                        mul: None,
                    },
                ),
                Operator::Mult => (
                    Linear {
                        add: None,
                        mul: ctx.mul,
                    },
                    Linear {
                        add: None,
                        mul: ctx.mul,
                    },
                ),
                Operator::Div => (
                    Linear {
                        add: None,
                        mul: ctx.mul,
                    },
                    Linear {
                        add: None,
                        mul: ctx.mul.map(|d| !d),
                    },
                ),
                _ => return,
            };
            linear_positions(&b.left, l, out, depth + 1);
            linear_positions(&b.right, r, out, depth + 1);
        }
        _ => {}
    }
}

/// Whether the statement at `r` lies in the body of a loop of `func`.
pub(crate) fn in_loop(func: &Stmt, r: Range<usize>) -> bool {
    let roots = [Node::Stmt(func)];
    let mut found = false;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s @ (Stmt::For(_) | Stmt::While(_) | Stmt::AsyncFor(_))) = node {
            let body = match s {
                Stmt::For(f) => &f.body,
                Stmt::AsyncFor(f) => &f.body,
                Stmt::While(w) => &w.body,
                _ => return true,
            };
            if body
                .iter()
                .any(|b| rng(b.range()).start <= r.start && r.end <= rng(b.range()).end)
            {
                found = true;
            }
        }
        !found
    });
    found
}

/// The number a literal's source text stands for.
fn literal_number(text: &str) -> Option<f64> {
    text.replace('_', "")
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConstKind {
    Int,
    Float,
    Str,
}

impl Mutator<'_> {
    fn push(&mut self, family: Family, title: String, edits: Vec<Edit>, weight: f64) {
        self.push_with(family, title, edits, weight, Vec::new());
    }

    fn push_with(
        &mut self,
        family: Family,
        title: String,
        edits: Vec<Edit>,
        weight: f64,
        effects: Vec<Effect>,
    ) {
        let prior = self.priors.family(family) * weight;
        self.out.push(Mutant {
            family,
            title,
            edits,
            prior,
            effects,
        });
    }

    fn linear_at(&self, r: &Range<usize>) -> Option<Linear> {
        self.linear.iter().find(|(lr, _)| lr == r).map(|(_, l)| *l)
    }

    /// The effects of the literal at `r` (written `from`) becoming `to`.
    fn literal_effects(&self, r: &Range<usize>, from: &str, to: &str) -> Vec<Effect> {
        let mut out = Vec::new();
        if self.returned.as_ref() == Some(r) {
            out.push(Effect::Becomes(to.to_string()));
        }
        let (Some(a), Some(b)) = (literal_number(from), literal_number(to)) else {
            return out;
        };
        if let Some(l) = self.linear_at(r) {
            if let Some(sign) = l.add {
                out.push(Effect::Add(sign * (b - a)));
            }
            match l.mul {
                Some(false) if a != 0.0 => out.push(Effect::Scale(b / a)),
                Some(true) if b != 0.0 => out.push(Effect::Scale(a / b)),
                _ => {}
            }
        } else if a.fract() == 0.0 && (a - b).abs() == 1.0 {
            out.push(Effect::OffByOne);
        }
        out
    }

    fn src(&self, r: &Range<usize>) -> &str {
        &self.text[r.clone()]
    }

    /// Replaces the operator written in `gap` (between two operands) by each of its
    /// alternatives in the priors' `table`.
    fn operator(&mut self, table: &str, written: &str, gap: Range<usize>, aug: bool) {
        self.operator_with(table, written, gap, aug, |_| Vec::new());
    }

    /// [`Mutator::operator`], `effects` saying what each replacement does.
    fn operator_with(
        &mut self,
        table: &str,
        written: &str,
        gap: Range<usize>,
        aug: bool,
        effects: impl Fn(&str) -> Vec<Effect>,
    ) {
        let Some(op) = op_in_gap(self.text, gap) else {
            return;
        };
        let from = if aug {
            written.trim_end_matches('=')
        } else {
            written
        };
        if normalize_ws(self.src(&op)) != written {
            return;
        }
        let family = if table == "compare" {
            Family::CompareOp
        } else {
            Family::ArithOp
        };
        for (to, w) in self.priors.replacements(table, from) {
            let fx = effects(&to);
            let to = if aug { format!("{to}=") } else { to };
            self.push_with(
                family,
                format!("`{written}` → `{to}`"),
                vec![Edit::replacement(op.clone(), to.clone())],
                w,
                fx,
            );
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Compare(c) => {
                let mut prev = rng(c.left.range()).end;
                for (op, right) in c.ops.iter().zip(&c.comparators) {
                    let r = rng(right.range());
                    let from = syntax::cmp_op_text(op);
                    self.operator_with("compare", from, prev..r.start, false, |to| {
                        // A boundary flip moves a count by the items equal to the bound.
                        match (from, to) {
                            ("<", "<=") | ("<=", "<") | (">", ">=") | (">=", ">") => {
                                vec![Effect::Boundary]
                            }
                            _ => Vec::new(),
                        }
                    });
                    prev = r.end;
                }
                // Against a literal (`n == 1`), only the literal moves: `n + 1 == 1` says
                // `n == 0` the way nobody writes it.
                let operands = || std::iter::once(c.left.as_ref()).chain(&c.comparators);
                if !operands()
                    .any(|o| int_literal(self.text, o).is_some() || is_negative_literal(o))
                {
                    // Moving an operand is rarer than fixing the operator (`>=` → `>`).
                    for operand in operands() {
                        self.plus_minus_one(operand, 0.5);
                    }
                }
            }
            Expr::BinOp(b) => {
                if let Some(sym) = arith_symbol(&b.op) {
                    let gap = rng(b.left.range()).end..rng(b.right.range()).start;
                    // With a literal right operand in a linear position, the change is known:
                    // `- 32` → `+ 32` adds 64, `/ 2` → `* 2` multiplies by 4.
                    let lin = self.linear_at(&rng(b.range));
                    let c = literal_number(self.src(&rng(b.right.range())))
                        .filter(|_| matches!(b.right.as_ref(), Expr::Constant(_)));
                    self.operator_with("arith", sym, gap, false, |to| {
                        let (Some(l), Some(c)) = (lin, c) else {
                            return Vec::new();
                        };
                        match (sym, to, l.add, l.mul) {
                            ("+", "-", Some(s), _) => vec![Effect::Add(-2.0 * c * s)],
                            ("-", "+", Some(s), _) => vec![Effect::Add(2.0 * c * s)],
                            ("*", "/", _, Some(false)) if c != 0.0 => {
                                vec![Effect::Scale(1.0 / (c * c))]
                            }
                            ("/", "*", _, Some(false)) => vec![Effect::Scale(c * c)],
                            _ => Vec::new(),
                        }
                    });
                }
            }
            Expr::BoolOp(b) => {
                let (from, to) = match b.op {
                    BoolOp::And => ("and", "or"),
                    BoolOp::Or => ("or", "and"),
                };
                for pair in b.values.windows(2) {
                    let gap = rng(pair[0].range()).end..rng(pair[1].range()).start;
                    if let Some(op) = op_in_gap(self.text, gap) {
                        if self.src(&op) == from {
                            self.push(
                                Family::BoolOp,
                                format!("`{from}` → `{to}`"),
                                vec![Edit::replacement(op, to)],
                                1.0,
                            );
                        }
                    }
                }
                if b.values.len() == 2 {
                    let (a, z) = (rng(b.values[0].range()), rng(b.values[1].range()));
                    let whole = rng(b.range);
                    for (keep, drop) in [(&a, &z), (&z, &a)] {
                        let keep_text = self.src(keep).to_string();
                        self.push(
                            Family::BoolOp,
                            format!("drop `{}` from the condition", one_line(self.src(drop))),
                            vec![Edit::replacement(whole.clone(), keep_text)],
                            0.5,
                        );
                    }
                }
            }
            Expr::UnaryOp(u) if matches!(u.op, UnaryOp::Not) => {
                let start = rng(u.range).start;
                let operand = rng(u.operand.range()).start;
                // `not (x)` keeps its parentheses: `(x)`.
                self.push(
                    Family::Negate,
                    "drop `not`".to_string(),
                    vec![Edit::deletion(
                        start..operand_start(self.text, start, operand),
                    )],
                    1.0,
                );
            }
            Expr::IfExp(i) => self.negate_test(&i.test),
            Expr::Subscript(s) => match s.slice.as_ref() {
                Expr::Slice(sl) => {
                    for part in [&sl.lower, &sl.upper].into_iter().flatten() {
                        self.plus_minus_one(part, 1.0);
                    }
                }
                index => self.plus_minus_one(index, 1.0),
            },
            Expr::Call(c) => {
                if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "range") {
                    for a in &c.args {
                        self.plus_minus_one(a, 1.0);
                    }
                }
                self.swap_args(c);
            }
            Expr::Constant(c) => self.constant(e, &c.value),
            Expr::Name(n) if matches!(n.ctx, ExprContext::Load) => self.variable(e, n.id.as_str()),
            _ => {}
        }
    }

    /// A `while` whose condition reads a numeric local the body never assigns cannot end by
    /// that local: add `name += 1` (or `-= 1`) as the body's last statement (the classic hang).
    fn missing_step(&mut self, w: &ast::StmtWhile) {
        let mut read: Vec<String> = Vec::new();
        walk::walk(&[Node::Expr(&w.test)], MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::Name(n)) = node {
                // A counter: a local that an assignment shows to be a number.
                if matches!(
                    self.func_kinds.get(n.id.as_str()).map(String::as_str),
                    Some("int" | "float")
                ) && !read.iter().any(|r| r == n.id.as_str())
                {
                    read.push(n.id.to_string());
                }
            }
            true
        });
        let body: Vec<Node> = w.body.iter().map(Node::Stmt).collect();
        walk::walk(&body, MAX_AST_DEPTH, |node, _| {
            if let Node::Expr(Expr::Name(n)) = node {
                if matches!(n.ctx, ExprContext::Store) {
                    read.retain(|r| r != n.id.as_str());
                }
            }
            true
        });
        let Some(last) = w.body.last() else { return };
        let (start, end) = (rng(last.range()).start, rng(last.range()).end);
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &self.text[line_start..start];
        if !indent.chars().all(|c| c == ' ' || c == '\t') || indent.is_empty() {
            return;
        }
        let nl = if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let n = read.len() as f64;
        for name in &read {
            for (op, w) in [("+=", 1.0), ("-=", 0.5)] {
                self.push(
                    Family::PlusMinusOne,
                    format!("add `{name} {op} 1` at the end of the loop"),
                    vec![Edit::insertion(end, format!("{nl}{indent}{name} {op} 1"))],
                    w / n,
                );
            }
        }
    }

    /// `cond` → `not cond`.
    fn negate_test(&mut self, test: &Expr) {
        if matches!(test, Expr::UnaryOp(u) if matches!(u.op, UnaryOp::Not)) {
            return; // dropping the `not` is the negation
        }
        let r = rng(test.range());
        let inner = self.src(&r).to_string();
        let new = if needs_parens_for_not(test) {
            format!("not ({inner})")
        } else {
            format!("not {inner}")
        };
        self.push(
            Family::Negate,
            format!("negate `{}`", one_line(&inner)),
            vec![Edit::replacement(r, new)],
            1.0,
        );
    }

    /// `e` → `e + 1` / `e - 1` for an integer-valued position; `a - 1` → `a`; a literal `n`
    /// → `n + 1` / `n - 1`.
    fn plus_minus_one(&mut self, e: &Expr, scale: f64) {
        let r = rng(e.range());
        match e {
            // A literal is handled by `constant` (±1 there), wherever it is.
            Expr::Constant(_) => {}
            Expr::UnaryOp(u) if matches!(u.op, UnaryOp::USub) => {}
            Expr::BinOp(b)
                if matches!(b.op, Operator::Add | Operator::Sub)
                    && int_literal(self.text, &b.right).is_some() =>
            {
                // `len(xs) - 1` → `len(xs)`: the whole `- 1` goes.
                let left_end = rng(b.left.range()).end;
                let op = if matches!(b.op, Operator::Add) {
                    "+"
                } else {
                    "-"
                };
                let k = int_literal(self.text, &b.right).unwrap_or(0);
                let fx = match self.linear_at(&r).and_then(|l| l.add) {
                    Some(s) if op == "+" => vec![Effect::Add(-s * k as f64)],
                    Some(s) => vec![Effect::Add(s * k as f64)],
                    None => vec![Effect::OffByOne],
                };
                self.push_with(
                    Family::PlusMinusOne,
                    format!("drop `{op} {k}`"),
                    vec![Edit::deletion(left_end..r.end)],
                    scale,
                    fx,
                );
            }
            _ => {
                let inner = self.src(&r).to_string();
                let wrapped = if needs_parens_for_add(e) {
                    format!("({inner})")
                } else {
                    inner.clone()
                };
                for (op, w) in [("- 1", 1.0), ("+ 1", 0.9)] {
                    self.push_with(
                        Family::PlusMinusOne,
                        format!("`{}` → `{} {op}`", one_line(&inner), one_line(&wrapped)),
                        vec![Edit::replacement(r.clone(), format!("{wrapped} {op}"))],
                        w * scale,
                        vec![Effect::OffByOne],
                    );
                }
            }
        }
    }

    fn constant(&mut self, e: &Expr, value: &Constant) {
        let r = rng(e.range());
        let written = self.src(&r).to_string();
        match value {
            Constant::Bool(b) => {
                let to = if *b { "False" } else { "True" };
                self.push(
                    Family::Constant,
                    format!("`{written}` → `{to}`"),
                    vec![Edit::replacement(r, to)],
                    1.0,
                );
                return;
            }
            Constant::Int(_) => {
                if let Ok(n) = written.replace('_', "").parse::<i64>() {
                    let addend = self.addends.contains(&r);
                    if addend && n == 1 {
                        // `a + 1` → `a` (plus_minus_one covers the positions it knows).
                        let start = self.text[..r.start]
                            .trim_end()
                            .trim_end_matches(['+', '-'])
                            .trim_end()
                            .len();
                        // Dropping the literal is the literal becoming 0.
                        let fx = match self.linear_at(&r).and_then(|l| l.add) {
                            Some(s) => vec![Effect::Add(-s * n as f64)],
                            None => vec![Effect::OffByOne],
                        };
                        self.push_with(
                            Family::PlusMinusOne,
                            format!("drop `{}`", normalize_ws(&self.text[start..r.end])),
                            vec![Edit::deletion(start..r.end)],
                            1.0,
                            fx,
                        );
                    }
                    // The two directions share the family's prior, like other families' alternatives.
                    let alternatives = [(n.checked_add(1), 0.5), (n.checked_sub(1), 0.5)];
                    for (m, w) in alternatives.into_iter().filter_map(|(m, w)| Some((m?, w))) {
                        if m < 0 || (addend && m == 0) {
                            continue; // `-1` as a literal would be a new unary expression
                        }
                        let fx = self.literal_effects(&r, &written, &m.to_string());
                        self.push_with(
                            Family::PlusMinusOne,
                            format!("`{n}` → `{m}`"),
                            vec![Edit::replacement(r.clone(), m.to_string())],
                            w,
                            fx,
                        );
                    }
                }
            }
            _ => {}
        }
        let kind = match value {
            Constant::Int(_) => ConstKind::Int,
            Constant::Float(_) => ConstKind::Float,
            Constant::Str(_) => ConstKind::Str,
            _ => return,
        };
        let others: Vec<String> = self
            .func_consts
            .iter()
            .filter(|(k, t)| *k == kind && *t != written)
            .map(|(_, t)| t.clone())
            .collect();
        let n = others.len() as f64;
        for t in others {
            let fx = self.literal_effects(&r, &written, &t);
            self.push_with(
                Family::Constant,
                format!("`{}` → `{}`", one_line(&written), one_line(&t)),
                vec![Edit::replacement(r.clone(), t.clone())],
                1.0 / n,
                fx,
            );
        }
    }

    fn variable(&mut self, e: &Expr, name: &str) {
        if !self.func_names.iter().any(|(n, _)| n == name) {
            return; // a global, a builtin or a function: not a local mix-up
        }
        let r = rng(e.range());
        // Inside a comprehension's element or condition, its own other targets come first:
        // `[x for x, y in pts if x > 0]` filters on the neighbour of the name it meant, and
        // these names are bound in the statement itself (so `unbound_from` hides them).
        let within = |outer: &Range<usize>| outer.start <= r.start && r.end <= outer.end;
        let mut bound: Vec<String> = Vec::new();
        for c in &self.comprehensions {
            if within(&c.whole) && !within(&c.first_iter) {
                for b in &c.bound {
                    if b != name && !bound.contains(b) {
                        bound.push(b.clone());
                    }
                }
            }
        }
        let nb = bound.len() as f64;
        for other in &bound {
            self.push(
                Family::Variable,
                format!("`{name}` → `{other}`"),
                vec![Edit::replacement(r.clone(), other.clone())],
                1.0 / nb,
            );
        }
        // A variable of another known kind is not a mix-up anyone makes (`total` → `name`);
        // a name of unknown kind (a parameter) stays a candidate.
        let kind = self.func_kinds.get(name);
        let others: Vec<String> = self
            .func_names
            .iter()
            .filter(|(n, _)| n != name && !bound.contains(n))
            // `width = len(rows[0])` never becomes `width = len(width[0])`.
            .filter(|(_, first)| self.unbound_from.is_none_or(|at| *first < at))
            .filter(|(n, _)| match (kind, self.func_kinds.get(n)) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            })
            .map(|(n, _)| n.clone())
            .collect();
        let n = others.len() as f64;
        for other in others {
            self.push(
                Family::Variable,
                format!("`{name}` → `{other}`"),
                vec![Edit::replacement(r.clone(), other)],
                1.0 / n,
            );
        }
    }

    fn swap_args(&mut self, c: &ast::ExprCall) {
        if c.args.len() < 2 || c.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            return;
        }
        for pair in c.args.windows(2) {
            let (a, b) = (rng(pair[0].range()), rng(pair[1].range()));
            let (ta, tb) = (self.src(&a).to_string(), self.src(&b).to_string());
            self.push(
                Family::SwapArgs,
                format!("swap `{}` and `{}`", one_line(&ta), one_line(&tb)),
                vec![Edit::replacement(a, tb), Edit::replacement(b, ta)],
                1.0,
            );
        }
    }

    /// The function's last statement computes a value and drops it: return it.
    fn missing_return(&mut self, stmt: &Stmt, func: &Stmt) {
        let body = match func {
            Stmt::FunctionDef(f) => &f.body,
            Stmt::AsyncFunctionDef(f) => &f.body,
            _ => return,
        };
        if body.last().map(|s| rng(s.range())) != Some(rng(stmt.range())) {
            return;
        }
        let r = rng(stmt.range());
        match stmt {
            Stmt::Expr(e) if !matches!(e.value.as_ref(), Expr::Constant(_)) => {
                self.push(
                    Family::MissingReturn,
                    "return the last expression".to_string(),
                    vec![Edit::insertion(r.start, "return ")],
                    1.0,
                );
            }
            Stmt::Assign(a) if a.targets.len() == 1 => {
                let Expr::Name(n) = &a.targets[0] else { return };
                let line_start = self.text[..r.start].rfind('\n').map_or(0, |i| i + 1);
                let indent = &self.text[line_start..r.start];
                if !indent.chars().all(|c| c == ' ' || c == '\t') {
                    return;
                }
                let nl = if self.text.contains("\r\n") {
                    "\r\n"
                } else {
                    "\n"
                };
                self.push(
                    Family::MissingReturn,
                    format!("return `{}`", n.id.as_str()),
                    vec![Edit::insertion(
                        r.end,
                        format!("{nl}{indent}return {}", n.id.as_str()),
                    )],
                    1.0,
                );
            }
            _ => {}
        }
    }

    /// Deletes a simple statement that fills its lines (a block left empty does not parse and
    /// is dropped later).
    fn delete(&mut self, stmt: &Stmt) {
        if !matches!(
            stmt,
            Stmt::Assign(_) | Stmt::AugAssign(_) | Stmt::Expr(_) | Stmt::Raise(_)
        ) {
            return;
        }
        let r = rng(stmt.range());
        let line_start = self.text[..r.start].rfind('\n').map_or(0, |i| i + 1);
        if !self.text[line_start..r.start].trim().is_empty() {
            return;
        }
        let line_end = self.text[r.end..]
            .find('\n')
            .map_or(self.text.len(), |i| r.end + i + 1);
        let rest = self.text[r.end..line_end].trim();
        if !(rest.is_empty() || rest.starts_with('#')) {
            return;
        }
        let first = self.text[r.clone()]
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        self.push(
            Family::DeleteStmt,
            format!("delete `{}`", one_line(&first)),
            vec![Edit::deletion(line_start..line_end)],
            1.0,
        );
    }
}

/// The operator between two operands: `gap` without whitespace, parentheses and line
/// continuations. `None` when a comment is in the way.
fn op_in_gap(text: &str, gap: Range<usize>) -> Option<Range<usize>> {
    let g = text.get(gap.clone())?;
    if g.contains('#') {
        return None;
    }
    let skip = |c: char| c.is_whitespace() || c == '(' || c == ')' || c == '\\';
    let lead = g.len() - g.trim_start_matches(skip).len();
    let trail = g.len() - g.trim_end_matches(skip).len();
    (lead + trail < g.len()).then(|| gap.start + lead..gap.end - trail)
}

/// Where the operand of `not` starts, keeping an opening parenthesis.
fn operand_start(text: &str, not_start: usize, operand: usize) -> usize {
    let between = &text[not_start..operand];
    match between.find('(') {
        Some(i) => not_start + i,
        None => operand,
    }
}

fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn one_line(s: &str) -> String {
    let t = normalize_ws(s);
    if t.chars().count() > 40 {
        format!("{}…", t.chars().take(39).collect::<String>())
    } else {
        t
    }
}

fn int_literal(text: &str, e: &Expr) -> Option<i64> {
    match e {
        Expr::Constant(c) if matches!(c.value, Constant::Int(_)) => {
            text.get(rng(c.range))?.replace('_', "").parse().ok()
        }
        _ => None,
    }
}

fn is_negative_literal(e: &Expr) -> bool {
    matches!(e, Expr::UnaryOp(u) if matches!(u.op, UnaryOp::USub) && matches!(u.operand.as_ref(), Expr::Constant(_)))
}

fn arith_symbol(op: &Operator) -> Option<&'static str> {
    Some(match op {
        Operator::Add => "+",
        Operator::Sub => "-",
        Operator::Mult => "*",
        Operator::Div => "/",
        Operator::FloorDiv => "//",
        Operator::Mod => "%",
        Operator::Pow => "**",
        _ => return None,
    })
}

/// Whether `e + 1` would bind into `e` (it needs parentheses).
pub(crate) fn needs_parens_for_add(e: &Expr) -> bool {
    match e {
        Expr::BinOp(b) => !matches!(
            b.op,
            Operator::Add
                | Operator::Sub
                | Operator::Mult
                | Operator::Div
                | Operator::FloorDiv
                | Operator::Mod
                | Operator::Pow
                | Operator::MatMult
        ),
        Expr::BoolOp(_)
        | Expr::Compare(_)
        | Expr::IfExp(_)
        | Expr::Lambda(_)
        | Expr::NamedExpr(_)
        | Expr::UnaryOp(_)
        | Expr::Starred(_) => true,
        _ => false,
    }
}

/// Whether `not e` would bind differently from `not (e)`.
pub(crate) fn needs_parens_for_not(e: &Expr) -> bool {
    matches!(
        e,
        Expr::BoolOp(_) | Expr::IfExp(_) | Expr::Lambda(_) | Expr::NamedExpr(_)
    )
}

/// Literals of a function (not its docstring), distinct, in source order.
fn constants_of(func: &Stmt, text: &str) -> Vec<(ConstKind, String)> {
    let mut out: Vec<(ConstKind, String)> = Vec::new();
    let body = match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => return out,
    };
    let docstring = match body.first() {
        Some(Stmt::Expr(e)) => Some(rng(e.value.range())),
        _ => None,
    };
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut found: Vec<(ConstKind, Range<usize>)> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Constant(c)) = node {
            let kind = match c.value {
                Constant::Int(_) => ConstKind::Int,
                Constant::Float(_) => ConstKind::Float,
                Constant::Str(_) => ConstKind::Str,
                _ => return true,
            };
            let r = rng(c.range);
            if Some(&r) != docstring.as_ref() {
                found.push((kind, r));
            }
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    for (k, r) in found {
        let t = text[r].to_string();
        if !out.iter().any(|(ok, ot)| *ok == k && *ot == t) {
            out.push((k, t));
        }
    }
    out
}

/// The kind of value an expression makes, when its shape says: a literal (`0`, `0.0`, `""`,
/// `True`, `[]`, `{}`, a comprehension, an f-string) or `len(...)`/`int(...)`/`str(...)`/`float(...)`/
/// `list(...)`/`sorted(...)`.
pub(crate) fn value_kind(e: &Expr) -> Option<&'static str> {
    Some(match e {
        Expr::Constant(c) => match c.value {
            Constant::Int(_) => "int",
            Constant::Float(_) => "float",
            Constant::Str(_) => "str",
            Constant::Bool(_) => "bool",
            _ => return None,
        },
        Expr::List(_) | Expr::ListComp(_) => "list",
        Expr::Dict(_) | Expr::DictComp(_) => "dict",
        Expr::Set(_) | Expr::SetComp(_) => "set",
        Expr::JoinedStr(_) => "str",
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Name(n) => match n.id.as_str() {
                "len" | "int" => "int",
                "str" => "str",
                "float" => "float",
                "list" | "sorted" => "list",
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    })
}

/// The kind of value each local of `func` holds, from its assignments: a literal (`0`, `0.0`,
/// `""`, `True`, `[]`, `{}`, a comprehension), `len(...)`/`int(...)`/`str(...)`, or the target
/// of `for i in range(...)`. A name assigned values of two kinds is left out (unknown).
pub(crate) fn kinds_of(func: &Stmt) -> BTreeMap<String, &'static str> {
    let body = match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => return BTreeMap::new(),
    };
    let mut seen: BTreeMap<String, Option<&'static str>> = BTreeMap::new();
    let mut note = |name: &str, k: Option<&'static str>| {
        let e = seen.entry(name.to_string()).or_insert(k);
        if *e != k {
            *e = None;
        }
    };
    // A parameter's annotation names its kind (`xs: list[int]`, `n: int`).
    let args = match func {
        Stmt::FunctionDef(f) => Some(&f.args),
        Stmt::AsyncFunctionDef(f) => Some(&f.args),
        _ => None,
    };
    for a in args
        .into_iter()
        .flat_map(|a| a.posonlyargs.iter().chain(&a.args).chain(&a.kwonlyargs))
    {
        if let Some(k) = a.def.annotation.as_deref().and_then(annotation_kind) {
            note(a.def.arg.as_str(), Some(k));
        }
    }
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        match node {
            Node::Stmt(Stmt::Assign(a)) => {
                for t in &a.targets {
                    if let Expr::Name(n) = t {
                        note(n.id.as_str(), value_kind(&a.value));
                    }
                }
            }
            Node::Stmt(Stmt::For(f)) => {
                if let Expr::Name(n) = f.target.as_ref() {
                    let ranged = matches!(f.iter.as_ref(), Expr::Call(c)
                        if matches!(c.func.as_ref(), Expr::Name(r) if r.id.as_str() == "range"));
                    note(n.id.as_str(), ranged.then_some("int"));
                }
            }
            _ => {}
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    seen.into_iter()
        .filter_map(|(n, k)| Some((n, k?)))
        .collect()
}

/// The kind an annotation names: a builtin type, or a generic of one (`list[int]`,
/// `List[int]`, `Dict[str, int]`).
fn annotation_kind(e: &Expr) -> Option<&'static str> {
    let name = match e {
        Expr::Name(n) => n.id.as_str(),
        Expr::Subscript(s) => match s.value.as_ref() {
            Expr::Name(n) => n.id.as_str(),
            _ => return None,
        },
        _ => return None,
    };
    Some(match name {
        "int" => "int",
        "float" => "float",
        "str" => "str",
        "bool" => "bool",
        "list" | "List" => "list",
        "dict" | "Dict" => "dict",
        "set" | "Set" => "set",
        _ => return None,
    })
}

/// The literal kinds of [`kinds_of`], with the probed runtime types: a name no literal types
/// takes its runtime type; one whose runtime type disagrees with its literals (`total = 0`
/// holding a float) is of no known kind. `None` says nothing of the intended kind.
pub(crate) fn with_probed(
    literal: BTreeMap<String, &'static str>,
    probed: Option<&BTreeMap<String, String>>,
) -> BTreeMap<String, String> {
    let mut kinds: BTreeMap<String, String> = literal
        .into_iter()
        .map(|(n, k)| (n, k.to_string()))
        .collect();
    for (name, ty) in probed.into_iter().flatten() {
        if ty == "NoneType" {
            continue;
        }
        match kinds.get(name) {
            Some(k) if k != ty => {
                kinds.remove(name);
            }
            Some(_) => {}
            None => {
                kinds.insert(name.clone(), ty.clone());
            }
        }
    }
    kinds
}

/// Parameters and assigned names of a function, distinct, in source order, each with the
/// offset of its first binding (0 for a parameter).
pub(crate) fn names_of(func: &Stmt) -> Vec<(String, usize)> {
    let (args, body) = match func {
        Stmt::FunctionDef(f) => (&f.args, &f.body),
        Stmt::AsyncFunctionDef(f) => (&f.args, &f.body),
        _ => return Vec::new(),
    };
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut add = |n: &str, at: usize| match out.iter_mut().find(|(o, _)| o == n) {
        Some((_, first)) => *first = (*first).min(at),
        None => out.push((n.to_string(), at)),
    };
    for a in args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
    {
        add(a.def.arg.as_str(), 0);
    }
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if matches!(n.ctx, ExprContext::Store) {
                add(n.id.as_str(), rng(n.range()).start);
            }
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    out.retain(|(n, _)| !matches!(n.as_str(), "self" | "cls" | "_"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn guard_values_follow_the_function() {
        let guard = |src: &str, expected: Option<&str>| {
            let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
            function_mutants(&pm, 3, expected, Priors::builtin())[0]
                .title
                .clone()
        };
        let typed = "def f(xs: list[int]) -> int:\n    \"\"\"Sum.\"\"\"\n    return xs[0]\n";
        assert_eq!(guard(typed, None), "guard `if not xs: return 0`");
        assert_eq!(guard(typed, Some("7")), "guard `if not xs: return 7`");
        let early = "def f(xs, n):\n    if n < 0:\n        return -1\n    return xs[n]\n";
        assert_eq!(guard(early, None), "guard `if not xs: return -1`");
    }

    fn titles(src: &str, line: u32) -> Vec<(String, String)> {
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let mut m = mutants(&pm, line, Priors::builtin(), None);
        m.sort_by(|a, b| b.prior.total_cmp(&a.prior).then(a.size().cmp(&b.size())));
        m.into_iter()
            .map(|m| {
                let new = crate::edit::apply(src, &m.edits).unwrap();
                (
                    m.title,
                    new.lines().nth(line as usize - 1).unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn comparison_and_bound_mutants() {
        let src =
            "def f(xs, n):\n    i = 0\n    while i < len(xs) - 1:\n        i += 1\n    return i\n";
        let t = titles(src, 3);
        assert!(t.contains(&("`<` → `<=`".into(), "    while i <= len(xs) - 1:".into())));
        assert!(t.contains(&("drop `- 1`".into(), "    while i < len(xs):".into())));
        assert!(t.contains(&(
            "negate `i < len(xs) - 1`".into(),
            "    while not i < len(xs) - 1:".into()
        )));
        assert!(t.contains(&("`i` → `n`".into(), "    while n < len(xs) - 1:".into())));
        let aug = titles(src, 4);
        assert!(aug.contains(&("`+=` → `-=`".into(), "        i -= 1".into())));
        assert!(aug.contains(&("`1` → `2`".into(), "        i += 2".into())));
    }

    #[test]
    fn slices_calls_and_returns() {
        let src = "def page(items, size):\n    chunk = items[1:size + 1]\n    pow(size, 2)\n";
        let t = titles(src, 2);
        assert!(t.contains(&("drop `+ 1`".into(), "    chunk = items[1:size]".into())));
        assert!(t.contains(&("`1` → `0`".into(), "    chunk = items[0:size + 1]".into())));
        let r = titles(src, 3);
        assert!(r.contains(&("swap `size` and `2`".into(), "    pow(2, size)".into())));
        assert!(r.contains(&(
            "return the last expression".into(),
            "    return pow(size, 2)".into()
        )));
    }

    fn effects(src: &str, line: u32, title: &str) -> Vec<Effect> {
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let m = mutants(&pm, line, Priors::builtin(), None);
        let found = m.iter().find(|m| m.title == title);
        found.map(|m| m.effects.clone()).unwrap_or_else(|| {
            panic!(
                "no `{title}` in {:?}",
                m.iter().map(|m| &m.title).collect::<Vec<_>>()
            )
        })
    }

    #[test]
    fn effects_of_literals_and_operators_in_linear_positions() {
        let median = "def median(v):\n    return (v[0] + v[1]) / 3\n";
        assert_eq!(effects(median, 2, "`3` → `2`"), vec![Effect::Scale(1.5)]);
        let f = "def f(c):\n    return c * 9 / 5 - 32\n";
        assert_eq!(effects(f, 2, "`-` → `+`"), vec![Effect::Add(64.0)]);
        // A factor of one addend does not scale the whole value.
        assert_eq!(effects(f, 2, "`9` → `5`"), vec![]);
        let secs = "def s(v, u):\n    if u == 'h':\n        return v * 60\n    return v * 3600\n";
        assert_eq!(effects(secs, 3, "`60` → `3600`"), vec![Effect::Scale(60.0)]);
        let count = "def c(xs, k):\n    n = len([x for x in xs if x > k]) - 1\n    return n\n";
        assert_eq!(effects(count, 2, "drop `- 1`"), vec![Effect::Add(1.0)]);
        assert_eq!(effects(count, 2, "`>` → `>=`"), vec![Effect::Boundary]);
        let label = "def l(n):\n    if n == 1:\n        return 'one'\n    return 'many'\n";
        assert_eq!(
            effects(label, 4, "`'many'` → `'one'`"),
            vec![Effect::Becomes("'one'".into())]
        );
        // An index is an integer expression, not a linear part of the value.
        let last = "def last(xs):\n    return xs[len(xs) - 2]\n";
        assert_eq!(effects(last, 2, "drop `- 2`"), vec![Effect::OffByOne]);
        assert_eq!(effects(last, 2, "`2` → `1`"), vec![Effect::OffByOne]);
        // In a loop the statement runs many times: `+= 2` does not add 1 to the count.
        let looped = "def n(xs):\n    k = 0\n    for x in xs:\n        k += 1\n    return k\n";
        assert_eq!(effects(looped, 4, "`1` → `2`"), vec![Effect::OffByOne]);
    }

    #[test]
    fn variables_of_another_known_kind_are_not_proposed() {
        let src = "def f(xs, k):\n    total = 0\n    label = ''\n    for i in range(k):\n        total += xs[i]\n    return total\n";
        let t: Vec<String> = titles(src, 6).into_iter().map(|(t, _)| t).collect();
        // `total` (int) may become `i` (int, a range index) or a parameter, never `label` (str).
        for want in ["`total` → `xs`", "`total` → `k`", "`total` → `i`"] {
            assert!(t.contains(&want.to_string()), "{want} in {t:?}");
        }
        assert!(!t.contains(&"`total` → `label`".to_string()), "{t:?}");
    }

    #[test]
    fn annotations_give_parameters_a_kind() {
        let src = "def f(items: list[str], label: str, n: int):\n    count = len(items)\n    return label * count + n\n";
        let t: Vec<String> = titles(src, 3).into_iter().map(|(t, _)| t).collect();
        assert!(!t.iter().any(|t| t.starts_with("`label` → ")), "{t:?}");
        assert!(t.contains(&"`count` → `n`".to_string()), "{t:?}");
        assert!(!t.contains(&"`n` → `items`".to_string()), "{t:?}");
    }

    #[test]
    fn probed_types_give_parameters_a_kind() {
        let src = "def f(items, label, n):\n    count = len(items)\n    return label * count + n\n";
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let names = |probed: Option<&BTreeMap<String, String>>| -> Vec<String> {
            mutants(&pm, 3, Priors::builtin(), probed)
                .into_iter()
                .filter(|m| m.family == Family::Variable)
                .map(|m| m.title)
                .collect()
        };
        // Parameters are of no known kind without a probe: any of them may stand for another.
        let blind = names(None);
        assert!(
            blind.contains(&"`label` → `items`".to_string()),
            "{blind:?}"
        );
        let probed: BTreeMap<String, String> = [
            ("items", "list"),
            ("label", "str"),
            ("n", "int"),
            ("count", "int"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let typed = names(Some(&probed));
        // `label` (a str) has no other str to become; `count` and `n` (ints) swap.
        assert!(
            !typed.iter().any(|t| t.starts_with("`label` → ")),
            "{typed:?}"
        );
        assert!(typed.contains(&"`count` → `n`".to_string()), "{typed:?}");
        assert!(typed.contains(&"`n` → `count`".to_string()), "{typed:?}");
        assert!(!typed.contains(&"`n` → `items`".to_string()), "{typed:?}");
    }

    #[test]
    fn probed_types_that_disagree_with_the_literals_leave_the_kind_unknown() {
        let literal: BTreeMap<String, &'static str> = [("total", "int"), ("name", "str")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b))
            .collect();
        let probed: BTreeMap<String, String> = [
            ("total", "float"),
            ("name", "str"),
            ("x", "NoneType"),
            ("p", "shop.Order"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let kinds = with_probed(literal, Some(&probed));
        let want: BTreeMap<String, String> = [("name", "str"), ("p", "shop.Order")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(kinds, want);
    }

    #[test]
    fn names_not_yet_bound_are_not_proposed_outside_loops() {
        let src = "def f(rows, k):\n    width = len(rows[0]) + k\n    last = width - 1\n    return last\n";
        let t: Vec<String> = titles(src, 2).into_iter().map(|(t, _)| t).collect();
        // At line 2 only the parameters are bound: `width` and `last` come later.
        assert!(t.contains(&"`rows` → `k`".to_string()), "{t:?}");
        for never in ["`rows` → `width`", "`rows` → `last`", "`k` → `last`"] {
            assert!(!t.contains(&never.to_string()), "{never} in {t:?}");
        }
        let t: Vec<String> = titles(src, 3).into_iter().map(|(t, _)| t).collect();
        assert!(t.contains(&"`width` → `rows`".to_string()), "{t:?}");
        assert!(!t.contains(&"`width` → `last`".to_string()), "{t:?}");
        // In a loop a name bound further down holds the previous iteration's value.
        let looped = "def g(xs):\n    prev = 0\n    for x in xs:\n        out = x - prev\n        cur = x\n    return out\n";
        let t: Vec<String> = titles(looped, 4).into_iter().map(|(t, _)| t).collect();
        assert!(t.contains(&"`prev` → `cur`".to_string()), "{t:?}");
    }

    #[test]
    fn a_comprehension_s_own_targets_come_first() {
        let src = "def f(pts, k):\n    return [x for x, y in pts if x > k]\n";
        let t: Vec<(String, String)> = titles(src, 2)
            .into_iter()
            .filter(|(t, _)| t.starts_with("`x` → ") || t.starts_with("`k` → "))
            .collect();
        // The element's and the condition's `x` become `y` first (same weight, source order);
        // `pts` (bound before the statement) after; the first iterable sees no target.
        assert_eq!(
            t[..2],
            [
                (
                    "`x` → `y`".to_string(),
                    "    return [y for x, y in pts if x > k]".to_string()
                ),
                (
                    "`x` → `y`".to_string(),
                    "    return [x for x, y in pts if y > k]".to_string()
                ),
            ]
        );
        assert!(t.iter().any(|(t, _)| t == "`k` → `x`"), "{t:?}");
        assert!(!t.iter().any(|(t, _)| t == "`pts` → `x`"), "{t:?}");
        let d = "def g(m, low):\n    return {a: b for a, b in m.items() if a >= low}\n";
        let t: Vec<String> = titles(d, 2).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            t.iter().filter(|t| *t == "`a` → `b`").count(),
            2,
            "the key and the condition: {t:?}"
        );
    }

    #[test]
    fn a_while_whose_variable_never_moves_gets_its_step() {
        let src = "def find(xs, x):\n    i = 0\n    while i < len(xs):\n        if xs[i] == x:\n            return i\n    return -1\n";
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let m = mutants(&pm, 3, Priors::builtin(), None);
        let step = m
            .iter()
            .find(|m| m.title == "add `i += 1` at the end of the loop")
            .expect("the step");
        assert_eq!(
            crate::edit::apply(src, &step.edits).unwrap(),
            src.replace("return i\n", "return i\n        i += 1\n")
        );
        // A loop that moves its variable gets none.
        let moving = src.replace("return i\n", "return i\n        i += 2\n");
        let pm = crate::syntax::parse_text(Path::new("m.py"), &moving).unwrap();
        assert!(!mutants(&pm, 3, Priors::builtin(), None)
            .iter()
            .any(|m| m.title.starts_with("add `")));
    }
}
