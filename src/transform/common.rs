//! Helpers shared by the transforms: guard clauses at the statement's indentation (above the
//! comments that describe it), defaults that fit the function and the test, AST look-ups by
//! range, simple references, parentheses, and name distances.

use std::ops::Range;

use regex::Regex;
use rustpython_parser::ast::{Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::suggest::distance;
pub use crate::syntax::rng;
use crate::syntax::walk::{self, Node};
use crate::syntax::{Clause, Located, ParsedModule, StmtKind, SubExpr, MAX_AST_DEPTH};
use crate::transform::Context;

/// `if COND:` + `body` inserted as new lines before the located statement, at its indentation
/// and with the file's newline. `None` where no statement can go before it: inside a lambda or
/// comprehension (`nested`), an `elif`/`except` clause, or a `return` outside a function.
pub fn guard(ctx: &Context, nested: bool, cond: &str, body: &str) -> Option<Edit> {
    if nested || (body.starts_with("return") && ctx.located.function.is_none()) {
        return None;
    }
    if matches!(body, "continue" | "break") && !ctx.located.in_loop {
        return None;
    }
    // In a `while` loop, `continue` skips the statements that advance it: an endless loop.
    if body == "continue" {
        let innermost_loop = enclosing_stmts(ctx.module, &ctx.located.range)
            .into_iter()
            .rev()
            .find(|s| matches!(s, Stmt::For(_) | Stmt::AsyncFor(_) | Stmt::While(_)));
        if matches!(innermost_loop, Some(Stmt::While(_))) {
            return None;
        }
    }
    let at: &Located = match (&ctx.located.clause, ctx.located.starts_line) {
        (Clause::Statement | Clause::Header, true) => ctx.located,
        (Clause::Statement, false) => match &ctx.located.header {
            Some(h) if h.starts_line && matches!(h.clause, Clause::Header) => h,
            _ => return None,
        },
        _ => return None,
    };
    // A guard before a loop header cannot `continue` that loop.
    if matches!(body, "continue" | "break")
        && matches!(
            at.kind,
            StmtKind::For | StmtKind::While | StmtKind::AsyncFor
        )
        && at.is_header()
    {
        return None;
    }
    let nl = ctx.source.newline();
    let unit = ctx.source.indent_unit();
    // Comment lines right above the statement describe it: the guard goes above them.
    let mut line = at.first_line;
    while line > 1
        && ctx.source.line_text(line - 1).is_some_and(|l| {
            let body = l.trim_start();
            body.starts_with('#') && &l[..l.len() - body.len()] == at.indent.as_str()
        })
    {
        line -= 1;
    }
    let start = ctx.source.line_start(line)?;
    let indent = &at.indent;
    Some(Edit::insertion(
        start,
        format!("{indent}if {cond}:{nl}{indent}{unit}{body}{nl}"),
    ))
}

/// The empty value of a literal's type: the test shows the type, not a value to hard-code
/// (`assert f(x) == "abc"` must not become `return "abc"`).
pub fn empty_of_type(literal: &str) -> Option<&'static str> {
    Some(match literal {
        "None" => "None",
        "True" | "False" => "False",
        "[]" => "[]",
        "{}" => "{}",
        "()" => "()",
        l if l.starts_with('"') => "\"\"",
        l if l.starts_with('\'') => "''",
        l if l.parse::<i64>().is_ok() => "0",
        l if l.parse::<f64>().is_ok() => "0.0",
        _ => return None,
    })
}

/// The test's assertion calls the function the statement is in (`assert mod.f(x) == ...`).
pub fn function_is_called_by_test(ctx: &Context) -> bool {
    let (Some(func), Some(line)) = (&ctx.located.function, ctx.expected_line) else {
        return false;
    };
    let name = &func.name;
    line.match_indices(name.as_str()).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after == Some('(')
    })
}

/// The value range of a `return` statement (empty when it returns nothing).
pub fn return_value(ctx: &Context) -> Option<Range<usize>> {
    if ctx.located.kind != StmtKind::Return {
        return None;
    }
    let text = ctx.text(&ctx.located.range);
    let start = ctx.located.range.start + text.find("return").map_or(0, |i| i + "return".len());
    let rest = ctx.source.text().get(start..ctx.located.range.end)?;
    let lead = rest.len() - rest.trim_start().len();
    Some(start + lead..ctx.located.range.end)
}

/// The statement is `return EXPR` and EXPR is exactly `range` (parentheses aside).
pub fn is_returned(ctx: &Context, range: &Range<usize>) -> bool {
    return_value(ctx).is_some_and(|v| {
        let t = ctx.text(&v).trim();
        let inner = ctx.text(range);
        t == inner
            || (t.len() >= 2
                && t.starts_with('(')
                && t.ends_with(')')
                && t[1..t.len() - 1].trim() == inner)
    })
}

/// Values a guard clause may return, best first: the empty value of the type the failing test
/// expects (when the test checks this function's result), the literals the function already
/// returns elsewhere, what its docstring or return annotation declares
/// ([`declared_defaults`]), then `fallback`.
pub fn return_defaults(ctx: &Context, fallback: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: &str| {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
    };
    if ctx.located.kind == StmtKind::Return || function_is_called_by_test(ctx) {
        if let Some(v) = ctx.expected.and_then(empty_of_type) {
            push(v);
        }
    }
    for lit in other_literal_returns(ctx) {
        push(&lit);
    }
    // What the function declares it returns (its docstring's "Returns 0 if ...", its `-> int`)
    // before the caller's generic fallback: `None` from an `-> int` function moves the failure.
    if let Some(func) = enclosing_function(ctx.module, ctx.located) {
        for v in declared_defaults(func, ctx.module.text()) {
            push(v);
        }
    }
    for f in fallback {
        push(f);
    }
    out
}

/// The empty values a function declares for its edge cases, best first: the one its docstring
/// names (`Returns 0 if ...`, `return an empty list when ...`), then the empty value of its
/// return annotation (`-> int` → `0`, `-> list[str]` → `[]`, `-> Optional[X]` → `None`).
pub fn declared_defaults(func: &Stmt, text: &str) -> Vec<&'static str> {
    let returns = match func {
        Stmt::FunctionDef(f) => f.returns.as_deref(),
        Stmt::AsyncFunctionDef(f) => f.returns.as_deref(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if let Some(v) = docstring_of(func).and_then(docstring_default) {
        out.push(v);
    }
    if let Some(v) = returns
        .and_then(|r| text.get(rng(r.range())))
        .and_then(empty_of_annotation)
    {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The docstring of a function (its first statement, when a string).
pub fn docstring_of(func: &Stmt) -> Option<&str> {
    let body = match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => return None,
    };
    match body.first()? {
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Constant(c) => match &c.value {
                rustpython_parser::ast::Constant::Str(d) => Some(d.as_str()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The exceptions a docstring says the function raises, with the words that say when, in the
/// order written: a sentence (`Raises ValueError if size is negative.`), Sphinx fields
/// (`:raises BadWindow: if ...`), a Google `Raises:` section (`    BadWindow: if ...`) or a
/// numpy one (`Raises` / `------` / `BadWindow` / `    If ...`). Dotted names keep their last
/// part (`errors.BadWindow` → `BadWindow`).
pub fn docstring_raises(doc: &str) -> Vec<(String, String)> {
    static SENTENCE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static FIELD: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let sentence = SENTENCE.get_or_init(|| {
        Regex::new(r"(?i)\braises?\s+`{0,2}([A-Za-z_][\w.]*)`{0,2}\s+((?:if|when|for|on|unless)\b[^.\n]*(?:\n[^.\n]*)?)")
            .expect("docstring raises regex")
    });
    let field = FIELD.get_or_init(|| {
        Regex::new(r"(?m)^\s*:raises?\s+([A-Za-z_][\w.]*)\s*:(.*)$").expect("sphinx raises regex")
    });
    let last = |name: &str| name.rsplit('.').next().unwrap_or(name).to_string();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |exc: String, when: &str| {
        let when = when.split_whitespace().collect::<Vec<_>>().join(" ");
        let is_type = exc.chars().next().is_some_and(char::is_uppercase);
        if is_type && !out.iter().any(|(e, _)| *e == exc) {
            out.push((exc, when));
        }
    };
    for c in sentence.captures_iter(doc) {
        push(last(&c[1]), &c[2]);
    }
    for c in field.captures_iter(doc) {
        push(last(&c[1]), &c[2]);
    }
    // Sections: a `Raises:` line (Google) or `Raises` over a dashed line (numpy), then the
    // entries indented under it (Google) or at its indentation (numpy) until a blank line
    // followed by less indentation, or another section.
    let lines: Vec<&str> = doc.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let underline = |i: usize| {
        lines.get(i).is_some_and(|u| {
            let u = u.trim();
            u.len() >= 3 && u.chars().all(|c| c == '-')
        })
    };
    for (i, l) in lines.iter().enumerate() {
        let head = l.trim();
        let numpy = head == "Raises" && underline(i + 1);
        if head != "Raises:" && !numpy {
            continue;
        }
        let base = indent(l);
        let mut entry: Option<(String, String)> = None;
        let first = i + if numpy { 2 } else { 1 };
        for (j, line) in lines.iter().enumerate().skip(first) {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let ind = indent(line);
            // Back at the title's indentation: the next section (Google), or a numpy title.
            if ind < base || (ind == base && (!numpy || underline(j + 1))) {
                break;
            }
            let name = &t[..t
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(t.len())];
            let rest = &t[name.len()..];
            let is_entry = if numpy {
                ind == base
            } else {
                entry.is_none() || ind <= base + 4
            };
            if is_entry && !name.is_empty() && (numpy || rest.starts_with(':')) {
                if let Some((e, w)) = entry.take() {
                    push(e, &w);
                }
                entry = Some((last(name), rest.trim_start_matches(':').trim().to_string()));
            } else if let Some((_, w)) = entry.as_mut() {
                w.push(' ');
                w.push_str(t);
            }
        }
        if let Some((e, w)) = entry {
            push(e, &w);
        }
    }
    out
}

/// The value a docstring says the function returns in an edge case: `Returns 0 if ...`,
/// `return None when ...`, `Returns an empty list for ...`.
pub fn docstring_default(doc: &str) -> Option<&'static str> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"(?i)\breturns?\s+(?:`|``)?(none|0\.0|0|false|\[\]|\{\}|""|''|an?\s+empty\s+(?:list|dict|dictionary|str|string|tuple|set))(?:`|``)?\s*,?\s+(?:if|when|for|on)\b"#,
        )
        .expect("docstring default regex")
    });
    let got = re.captures(doc)?.get(1)?.as_str().to_ascii_lowercase();
    Some(match got.split_whitespace().last().unwrap_or("") {
        "none" => "None",
        "0" => "0",
        "0.0" => "0.0",
        "false" => "False",
        "[]" | "list" => "[]",
        "{}" | "dict" | "dictionary" => "{}",
        "\"\"" | "''" | "str" | "string" => "\"\"",
        "tuple" => "()",
        "set" => "set()",
        _ => return None,
    })
}

/// The empty value of a return annotation's type: `int` → `0`, `float` → `0.0`, `str` → `""`,
/// `bool` → `False`, `list[...]`/`Sequence[...]` → `[]`, `dict[...]`/`Mapping[...]` → `{}`,
/// `tuple[...]` → `()`, `set[...]` → `set()`, `Optional[X]`/`X | None`/`None` → `None`.
pub fn empty_of_annotation(annotation: &str) -> Option<&'static str> {
    let a = annotation.trim().trim_matches(|c| c == '"' || c == '\'');
    let parts: Vec<&str> = a.split('|').map(str::trim).collect();
    if parts.len() > 1 {
        return parts.contains(&"None").then_some("None");
    }
    let head = a.split('[').next().unwrap_or(a).trim();
    let head = head.rsplit('.').next().unwrap_or(head);
    Some(match head {
        "None" | "Optional" => "None",
        "int" => "0",
        "float" => "0.0",
        "str" => "\"\"",
        "bool" => "False",
        "list" | "List" | "Sequence" | "MutableSequence" | "Iterable" => "[]",
        "dict" | "Dict" | "Mapping" | "MutableMapping" => "{}",
        "tuple" | "Tuple" => "()",
        "set" | "Set" | "AbstractSet" | "MutableSet" => "set()",
        _ => return None,
    })
}

/// Literal values of the other `return` statements of the enclosing function (not of nested
/// functions): `None`, numbers and empty containers or strings.
pub fn other_literal_returns(ctx: &Context) -> Vec<String> {
    let Some(func) = enclosing_function(ctx.module, ctx.located) else {
        return Vec::new();
    };
    let body: Vec<Node> = match func {
        Stmt::FunctionDef(f) => f.body.iter().map(Node::Stmt).collect(),
        Stmt::AsyncFunctionDef(f) => f.body.iter().map(Node::Stmt).collect(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    walk::walk(&body, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Stmt(Stmt::Return(r)) => {
            if let Some(v) = &r.value {
                let range = rng(v.range());
                if range != ctx.located.range && !ctx.located.range.contains(&range.start) {
                    let t = ctx.text(&range).trim().to_string();
                    let plain = matches!(
                        t.as_str(),
                        "None" | "\"\"" | "''" | "[]" | "{}" | "()" | "False"
                    ) || t.parse::<f64>().is_ok();
                    if plain && !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
            false
        }
        Node::Stmt(_) => true,
        _ => false,
    });
    out
}

/// A function's body and the names of its parameters (positional-only, plain, keyword-only);
/// `None` for any other statement.
pub fn body_and_params(func: &Stmt) -> Option<(&[Stmt], Vec<&str>)> {
    let (body, args) = match func {
        Stmt::FunctionDef(f) => (&f.body, &f.args),
        Stmt::AsyncFunctionDef(f) => (&f.body, &f.args),
        _ => return None,
    };
    let params = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
        .map(|a| a.def.arg.as_str())
        .collect();
    Some((body, params))
}

/// What the enclosing function returns on its other early exits (`if ...: return X`, the
/// `if` holding only the `return`), in source order: a parameter (`return default`), an
/// attribute chain of `self`/`cls` (`return self._fallback`) or a plain literal other than
/// `None`. What a guard the author lost most likely returned too.
pub fn early_exit_values(ctx: &Context) -> Vec<String> {
    let Some(func) = enclosing_function(ctx.module, ctx.located) else {
        return Vec::new();
    };
    let Some((body, params)) = body_and_params(func) else {
        return Vec::new();
    };
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out: Vec<String> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Stmt(Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)) => false,
        Node::Stmt(Stmt::If(i)) => {
            if let [Stmt::Return(r)] = &i.body[..] {
                let range = rng(r.range());
                let value = r.value.as_ref().map(|v| ctx.text(&rng(v.range())).trim());
                let styled = value.is_some_and(|t| {
                    let head = t.split('.').next().unwrap_or(t);
                    (params.contains(&t) && !matches!(t, "self" | "cls"))
                        || (t.contains('.') && matches!(head, "self" | "cls") && is_simple_ref(t))
                        || (is_plain_literal(t) && t != "None")
                        || matches!(t, "[]" | "{}" | "()" | "False" | "True")
                });
                if let Some(t) =
                    value.filter(|_| styled && !ctx.located.range.contains(&range.start))
                {
                    if !out.iter().any(|o| o == t) {
                        out.push(t.to_string());
                    }
                }
            }
            true
        }
        Node::Stmt(_) => true,
        _ => false,
    });
    out
}

/// The `def` statement enclosing the located statement.
pub fn enclosing_function<'a>(module: &'a ParsedModule, located: &Located) -> Option<&'a Stmt> {
    let info = located.function.as_ref()?;
    let mut found = None;
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let r = node.range();
        if !(r.start <= located.range.start && located.range.end <= r.end) {
            return false;
        }
        if matches!(s, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_))
            && r.end == info.range.end
            && r.start >= info.range.start
        {
            found = Some(s);
        }
        true
    });
    found
}

/// The statements whose range contains `range`, outermost first, stopping at (and not
/// including) the enclosing function's own statements' parents: only statements inside the
/// innermost enclosing function.
pub fn enclosing_stmts<'a>(module: &'a ParsedModule, range: &Range<usize>) -> Vec<&'a Stmt> {
    let mut out: Vec<&Stmt> = Vec::new();
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let r = node.range();
        if !(r.start <= range.start && range.end <= r.end) || r == *range {
            return false;
        }
        if matches!(
            s,
            Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
        ) {
            out.clear();
        } else {
            out.push(s);
        }
        true
    });
    out
}

/// The iterable of the `for` statement whose header is the located statement.
pub fn for_iter(ctx: &Context) -> Option<Range<usize>> {
    if !matches!(ctx.located.kind, StmtKind::For | StmtKind::AsyncFor) || !ctx.located.is_header() {
        return None;
    }
    let start = ctx.located.range.start;
    let roots: Vec<Node> = ctx.module.body().iter().map(Node::Stmt).collect();
    let mut found = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if found.is_some() {
            return false;
        }
        let r = node.range();
        if !(r.start <= start && start < r.end.max(r.start + 1)) {
            return false;
        }
        match node {
            Node::Stmt(Stmt::For(f)) if r.start == start => {
                found = Some(rng(f.iter.range()));
                false
            }
            Node::Stmt(Stmt::AsyncFor(f)) if r.start == start => {
                found = Some(rng(f.iter.range()));
                false
            }
            Node::Stmt(_) => true,
            _ => false,
        }
    });
    found
}

/// The expression node with exactly this range (the outermost one when several share it).
pub fn find_expr<'a>(module: &'a ParsedModule, range: &Range<usize>) -> Option<&'a Expr> {
    let mut found: Option<&Expr> = None;
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if found.is_some() {
            return false;
        }
        let r = node.range();
        if !(r.start <= range.start && range.end <= r.end) {
            return false;
        }
        if let Node::Expr(e) = node {
            if r == *range {
                found = Some(e);
                return false;
            }
        }
        true
    });
    found
}

/// The smallest sub-expression of the statement that strictly contains `range`.
pub fn parent_of<'a>(located: &'a Located, range: &Range<usize>) -> Option<&'a SubExpr> {
    located
        .exprs
        .iter()
        .filter(|e| e.range.start <= range.start && range.end <= e.range.end && e.range != *range)
        .min_by_key(|e| e.range.len())
}

/// Names, attribute chains and constant subscripts: safe to evaluate twice (in a guard and in
/// the use), so a guard does not change behaviour.
pub fn is_simple_ref(text: &str) -> bool {
    static SIMPLE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(
            r#"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:-?[0-9]+|'[^'\\]*'|"[^"\\]*")\])*$"#,
        )
        .expect("valid regex")
    });
    !matches!(text, "None" | "True" | "False") && SIMPLE.is_match(text)
}

/// A plain string or number literal (no prefix, no escapes).
pub fn is_plain_literal(text: &str) -> bool {
    let quoted = |q: char| text.len() >= 2 && text.starts_with(q) && text.ends_with(q);
    ((quoted('"') || quoted('\'')) && !text[1..text.len() - 1].contains(['"', '\'', '\\']))
        || text.parse::<f64>().is_ok()
}

/// The range is already wrapped in parentheses (a call's only argument, a parenthesized
/// expression), so an inline conditional needs none of its own.
pub fn enclosed_in_parens(ctx: &Context, range: &Range<usize>) -> bool {
    let text = ctx.source.text();
    let before = text
        .get(..range.start)
        .is_some_and(|t| t.trim_end().ends_with('('));
    let after = text
        .get(range.end..)
        .is_some_and(|t| t.trim_start().starts_with(')'));
    before && after
}

/// An inline conditional `EXPR` replacing the expression at `range`, in parentheses unless
/// it already has its own or its place needs none (a statement's value, a call argument, an
/// element of a list, tuple or dict): `x or a / b if b else 0` would change what `or` sees.
pub fn parenthesize(ctx: &Context, range: &Range<usize>, expr: String) -> String {
    if enclosed_in_parens(ctx, range) || bare_conditional_ok(ctx.module, range) {
        expr
    } else {
        format!("({expr})")
    }
}

fn bare_conditional_ok(module: &ParsedModule, range: &Range<usize>) -> bool {
    let mut parent: Option<Node> = None;
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    let mut kids = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if !(r.start <= range.start && range.end <= r.end) {
            return false;
        }
        kids.clear();
        walk::children(node, &mut kids);
        if kids
            .iter()
            .any(|k| matches!(k, Node::Expr(_)) && k.range() == *range)
        {
            parent = Some(node);
        }
        true
    });
    match parent {
        Some(Node::Stmt(s)) => match s {
            Stmt::Return(_) | Stmt::Expr(_) => true,
            Stmt::Assign(a) => rng(a.value.range()) == *range,
            Stmt::AugAssign(a) => rng(a.value.range()) == *range,
            Stmt::AnnAssign(a) => a.value.as_ref().is_some_and(|v| rng(v.range()) == *range),
            _ => false,
        },
        Some(Node::Expr(e)) => match e {
            Expr::Call(c) => rng(c.func.range()) != *range,
            Expr::List(_) | Expr::Set(_) => true,
            Expr::Dict(d) => d.values.iter().any(|v| rng(v.range()) == *range),
            _ => false,
        },
        _ => false,
    }
}

pub fn one_line(s: &str) -> String {
    let first = crate::traceback::first_line(s);
    if first.len() < s.len() {
        format!("{first} ...")
    } else {
        first.to_string()
    }
}

/// The methods of `str` (its public attributes, as `dir(str)` lists them). Lists of the str
/// methods that say something more (what a call returns, which mark a receiver as a string) are
/// subsets of this one.
pub const STR_METHODS: &[&str] = &[
    "capitalize",
    "casefold",
    "center",
    "count",
    "encode",
    "endswith",
    "expandtabs",
    "find",
    "format",
    "format_map",
    "index",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "translate",
    "upper",
    "zfill",
];

/// Names close enough to `wrong` to be a plausible typo, closest first (CPython's cut-off:
/// `(len(a) + len(b) + 3) * 2 / 6`), then names that contain it or that it contains as a
/// `_`-separated word (`name` → `full_name`). At most `limit`.
pub fn nearest<'a>(
    wrong: &str,
    names: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<String> {
    let mut scored: Vec<(usize, usize, String)> = Vec::new();
    let private = wrong.starts_with('_');
    for name in names {
        if name == wrong || (!private && name.starts_with('_')) {
            continue;
        }
        if scored.iter().any(|(_, _, n)| n == name) {
            continue;
        }
        let (la, lb) = (wrong.chars().count(), name.chars().count());
        let d = distance(wrong, name);
        let cutoff = (la + lb + 3) * 2 / 6;
        if d <= cutoff && d < 2 * la.max(lb) {
            scored.push((0, d, name.to_string()));
        } else if word_related(wrong, name) {
            scored.push((1, d, name.to_string()));
        }
    }
    scored.sort();
    scored.into_iter().take(limit).map(|(_, _, n)| n).collect()
}

fn word_related(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() < 3 {
        return false;
    }
    long.split('_').any(|w| w == short)
        || long.starts_with(&format!("{short}_"))
        || long.ends_with(&format!("_{short}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn docstring_raises_in_every_style() {
        use super::docstring_raises as raises;
        let pair = |e: &str, w: &str| (e.to_string(), w.to_string());
        assert_eq!(
            raises("Mean of xs.\n\nRaises ValueError if xs is\nempty. Returns 0 otherwise."),
            vec![pair("ValueError", "if xs is empty")]
        );
        assert_eq!(
            raises("Cut.\n\n:param size: the width\n:raises errors.BadWindow: if size <= 0\n"),
            vec![pair("BadWindow", "if size <= 0")]
        );
        let google = "Cut.\n\n        Args:\n            size: the width\n\n        Raises:\n            BadWindow: if size is not\n                positive.\n            KeyError: when missing.\n\n        Returns:\n            The runs.\n        ";
        assert_eq!(
            raises(google),
            vec![
                pair("BadWindow", "if size is not positive."),
                pair("KeyError", "when missing.")
            ]
        );
        let numpy = "Cut.\n\n    Raises\n    ------\n    BadWindow\n        If size is not positive.\n\n    Returns\n    -------\n    list\n";
        assert_eq!(
            raises(numpy),
            vec![pair("BadWindow", "If size is not positive.")]
        );
        // Prose that raises no type: nothing.
        assert!(raises("This raises the bar if needed.").is_empty());
    }

    use super::*;

    #[test]
    fn declared_empty_values() {
        assert_eq!(empty_of_annotation("int"), Some("0"));
        assert_eq!(empty_of_annotation("list[str]"), Some("[]"));
        assert_eq!(empty_of_annotation("typing.Optional[int]"), Some("None"));
        assert_eq!(empty_of_annotation("int | None"), Some("None"));
        assert_eq!(empty_of_annotation("'str'"), Some("\"\""));
        assert_eq!(empty_of_annotation("Decimal"), None);
        assert_eq!(
            docstring_default("The total.\n\nReturns 0 if there are none."),
            Some("0")
        );
        assert_eq!(
            docstring_default("Return an empty list when nothing matched."),
            Some("[]")
        );
        assert_eq!(docstring_default("Returns the total of the rows."), None);
        let src = "def f(xs: list[int]) -> float:\n    \"\"\"Returns None for no input.\"\"\"\n    return xs[0]\n";
        let m = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        assert_eq!(
            declared_defaults(&m.body()[0], m.text()),
            vec!["None", "0.0"]
        );
    }

    #[test]
    fn nearest_names() {
        assert_eq!(
            nearest("totl", ["total", "tally", "count", "_total"], 3),
            vec!["total".to_string()]
        );
        assert_eq!(
            nearest("name", ["full_name", "age"], 3),
            vec!["full_name".to_string()]
        );
        assert!(nearest("x", ["y", "z"], 3).is_empty());
    }

    #[test]
    fn literals() {
        assert!(is_plain_literal("'a'"));
        assert!(is_plain_literal("3"));
        assert!(!is_plain_literal("f'a'"));
        assert!(is_simple_ref("row['k']"));
        assert!(!is_simple_ref("f(x)"));
    }
}
