//! Template: a missing statement whose shape is already in the function or the file, its names re-bound to locals in scope.
//!
//! Two families:
//! - `insert-call`: a bookkeeping statement (`seen.add(x)`, `out.append(x)`, `d[k] = v`) the
//!   function or the file already writes elsewhere, copied before or after the suspicious
//!   statement (after a branch or a loop; at the start of a loop's body), its argument re-bound
//!   to a name the suspicious statement works with (the loop variable first). TBar's
//!   "insert a statement" patterns and ssFix's reuse of code from the same file, in one.
//! - `carry`: a loop reads a local set before it and never updates it (`prev`, `last`):
//!   `prev = x` at the end of the loop's body, carrying the loop variable (or a name the body
//!   binds) into the next iteration.

use std::ops::Range;

use rustpython_parser::ast::{CmpOp, Expr, ExprContext, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::queries::stored_in_expr;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use crate::search::family::Family;
use crate::syntax::rng;
use super::super::mutate::{names_of, one_line};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::InsertCall, Family::Carry];

/// Statements copied at most per site (nearest first).
const MAX_DONORS: usize = 3;
/// Names a copied statement's argument is re-bound to at most.
const MAX_BINDINGS: usize = 3;

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let Some(func) = site.func else {
        return Vec::new();
    };
    let mut out = Vec::new();
    bookkeeping(site, func, &mut out);
    carry(site, func, &mut out);
    out
}

/// The line break the file uses.
pub(super) fn nl(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// The indentation of the statement starting at `at`, when only whitespace precedes it on its
/// line (a statement after `;` or `:` on the same line has none), with that line's start.
pub(super) fn indent_at(text: &str, at: usize) -> Option<(usize, &str)> {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[start..at];
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some((start, indent))
}

/// Where the line holding `end` ends (after its line break, or the end of the text), when
/// nothing but a comment follows `end` on it.
pub(super) fn after_line(text: &str, end: usize) -> Option<usize> {
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    let rest = text[end..line_end].trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(line_end)
}

/// An edit inserting `content` as a line of its own after the line holding `end`.
pub(super) fn insert_line_after(
    text: &str,
    end: usize,
    indent: &str,
    content: &str,
) -> Option<Edit> {
    let at = after_line(text, end)?;
    let nl = nl(text);
    Some(if at == text.len() && !text.ends_with('\n') {
        Edit::insertion(at, format!("{nl}{indent}{content}"))
    } else {
        Edit::insertion(at, format!("{indent}{content}{nl}"))
    })
}

/// The body of a function definition.
pub(super) fn func_body(func: &Stmt) -> &[Stmt] {
    match func {
        Stmt::FunctionDef(f) => &f.body,
        Stmt::AsyncFunctionDef(f) => &f.body,
        _ => &[],
    }
}

/// The name of a function definition.
pub(super) fn func_name(func: &Stmt) -> &str {
    match func {
        Stmt::FunctionDef(f) => f.name.as_str(),
        Stmt::AsyncFunctionDef(f) => f.name.as_str(),
        _ => "",
    }
}

/// The compound statements of `func` around the range `r`, outermost first (not `func`).
pub(super) fn enclosing<'a>(func: &'a Stmt, r: &Range<usize>) -> Vec<&'a Stmt> {
    let roots: Vec<Node> = func_body(func).iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        let sr = node.range();
        if sr.start <= r.start && r.end <= sr.end && sr != *r {
            if matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                return false;
            }
            out.push(s);
            return true;
        }
        false
    });
    out
}

/// The body of a loop statement.
pub(super) fn loop_body(s: &Stmt) -> Option<&[Stmt]> {
    match s {
        Stmt::For(f) => Some(&f.body),
        Stmt::AsyncFor(f) => Some(&f.body),
        Stmt::While(w) => Some(&w.body),
        _ => None,
    }
}

/// Names stored anywhere under `stmts` (not in nested definitions).
pub(super) fn stored_in(stmts: &[Stmt]) -> Vec<String> {
    let roots: Vec<Node> = stmts.iter().map(Node::Stmt).collect();
    let mut out: Vec<String> = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if matches!(n.ctx, ExprContext::Store | ExprContext::Del)
                && !out.iter().any(|o| o == n.id.as_str())
            {
                out.push(n.id.to_string());
            }
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    out
}

/// Names read under `roots` (not in nested definitions), in source order, distinct.
pub(super) fn read_in(roots: &[Node]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    walk::walk(roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if matches!(n.ctx, ExprContext::Load) && !out.iter().any(|o| o == n.id.as_str()) {
                out.push(n.id.to_string());
            }
        }
        !matches!(
            node,
            Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)) | Node::Expr(Expr::Lambda(_))
        )
    });
    out
}

/// Every function definition of the module (methods included), in source order.
pub(super) fn functions(body: &[Stmt]) -> Vec<&Stmt> {
    let roots: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Stmt(s @ (Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_))) = node {
            out.push(s);
        }
        matches!(node, Node::Stmt(_))
    });
    out
}

/// A bookkeeping statement: a method call on a name or an attribute used as a statement
/// (`seen.add(x)`, `self.log.append(x)`), or a store into a subscript (`memo[n] = v`).
/// Returns the receiver's range (kept as written) and the ranges of the names that may be
/// re-bound (the call's arguments, the subscript's key and the stored value).
fn bookkeeping_shape(s: &Stmt) -> Option<(Range<usize>, Vec<&Expr>)> {
    match s {
        Stmt::Expr(e) => {
            let Expr::Call(c) = e.value.as_ref() else {
                return None;
            };
            let Expr::Attribute(a) = c.func.as_ref() else {
                return None;
            };
            if !matches!(a.value.as_ref(), Expr::Name(_) | Expr::Attribute(_))
                || c.args.is_empty()
                || !c.keywords.is_empty()
            {
                return None;
            }
            Some((rng(a.value.range()), c.args.iter().collect()))
        }
        Stmt::Assign(a) if a.targets.len() == 1 => {
            let Expr::Subscript(sub) = &a.targets[0] else {
                return None;
            };
            if !matches!(sub.value.as_ref(), Expr::Name(_) | Expr::Attribute(_)) {
                return None;
            }
            Some((
                rng(sub.value.range()),
                vec![sub.slice.as_ref(), a.value.as_ref()],
            ))
        }
        _ => None,
    }
}

/// The simple statements of `func` (not of nested definitions).
fn simple_statements(func: &Stmt) -> Vec<&Stmt> {
    let roots: Vec<Node> = func_body(func).iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let Node::Stmt(s) = node else { return false };
        if matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            return false;
        }
        if matches!(s, Stmt::Expr(_) | Stmt::Assign(_)) {
            out.push(s);
        }
        true
    });
    out
}

/// Names a copied statement may take at `stmt` (whose range is `sr`): loop variables around it
/// (innermost first), then the names it binds and reads; only `func`'s own `locals`.
fn nearby_names(
    stmt: &Stmt,
    func: &Stmt,
    sr: &Range<usize>,
    locals: &[(String, usize)],
) -> Vec<String> {
    let mut nearby: Vec<String> = Vec::new();
    for s in enclosing(func, sr).iter().rev() {
        if let Stmt::For(f) = s {
            nearby.extend(stored_in_expr(&f.target));
        }
    }
    if let Stmt::For(f) = stmt {
        nearby.extend(stored_in_expr(&f.target));
    }
    let mut own = Vec::new();
    walk::stmt_own_exprs(stmt, &mut own);
    if let Stmt::Assign(a) = stmt {
        for t in &a.targets {
            nearby.extend(stored_in_expr(t));
        }
    }
    nearby.extend(read_in(&own));
    let mut seen_names = Vec::new();
    nearby.retain(|n| {
        let keep = locals.iter().any(|(l, _)| l == n) && !seen_names.contains(n);
        seen_names.push(n.clone());
        keep
    });
    nearby
}

/// `insert-call`: bookkeeping statements of the function (then of the file) copied next to
/// the suspicious statement.
fn bookkeeping(site: &Site, func: &Stmt, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let sr = rng(site.stmt.range());
    let Some((line_start, indent)) = indent_at(text, sr.start) else {
        return;
    };
    let locals = names_of(func);
    let nearby = nearby_names(site.stmt, func, &sr, &locals);

    // Donors: the function's own statements nearest the site first, then the file's.
    let mut donors: Vec<(&Stmt, &Stmt, f64)> = Vec::new();
    let mut own_donors: Vec<&Stmt> = simple_statements(func)
        .into_iter()
        .filter(|d| rng(d.range()) != sr && bookkeeping_shape(d).is_some())
        .collect();
    own_donors.sort_by_key(|d| rng(d.range()).start.abs_diff(sr.start));
    donors.extend(own_donors.into_iter().map(|d| (d, func, 1.0)));
    for f in functions(site.module.body()) {
        if rng(f.range()) == rng(func.range()) {
            continue;
        }
        for d in simple_statements(f) {
            if bookkeeping_shape(d).is_some() {
                donors.push((d, f, 0.5));
            }
        }
    }
    let mut texts: Vec<String> = Vec::new();
    let mut variants: Vec<(String, f64)> = Vec::new();
    for (donor, donor_func, w) in donors {
        if texts.len() >= MAX_DONORS {
            break;
        }
        let dtext = &text[rng(donor.range())];
        if dtext.contains('\n') || texts.iter().any(|t| t == dtext) {
            continue;
        }
        let Some((receiver, args)) = bookkeeping_shape(donor) else {
            continue;
        };
        let donor_locals = names_of(donor_func);
        let is_local = |n: &str| donor_locals.iter().any(|(l, _)| l == n);
        // The receiver must mean the same thing here: a local of the site's function, or
        // `self.…`/a global in a function that does not rebind it.
        let Some(recv) = receiver_expr(donor) else {
            continue;
        };
        let rnames = read_in(&[Node::Expr(recv)]);
        let receiver_ok = rnames.iter().all(|n| {
            let here = locals.iter().any(|(l, _)| l == n);
            (here || !is_local(n) || n == "self") && (n != "self" || has_self(func))
        });
        if !receiver_ok {
            continue;
        }
        texts.push(dtext.to_string());
        let base = rng(donor.range()).start;
        // Verbatim, when every local it reads is one of this function's.
        let arg_names: Vec<String> =
            read_in(&args.iter().map(|a| Node::Expr(a)).collect::<Vec<_>>());
        let in_scope = |n: &str| locals.iter().any(|(l, _)| l == n) || !is_local(n);
        if arg_names.iter().all(|n| in_scope(n)) {
            variants.push((dtext.to_string(), 0.5 * w));
        }
        // Re-bound: the first local the arguments read becomes a nearby name.
        let Some(slot) = arg_names.iter().find(|n| is_local(n)) else {
            continue;
        };
        let occurrences: Vec<Range<usize>> = name_ranges(&args, slot)
            .into_iter()
            .filter(|r| !(receiver.start <= r.start && r.end <= receiver.end))
            .collect();
        let others: Vec<&String> = arg_names.iter().filter(|n| *n != slot).collect();
        if !others.iter().all(|n| in_scope(n)) {
            continue;
        }
        for (i, name) in nearby
            .iter()
            .filter(|n| *n != slot && !rnames.contains(n))
            .take(MAX_BINDINGS)
            .enumerate()
        {
            let mut s = dtext.to_string();
            for r in occurrences.iter().rev() {
                s.replace_range(r.start - base..r.end - base, name);
            }
            variants.push((s, w / (i as f64 + 1.0)));
        }
    }
    if variants.is_empty() {
        return;
    }
    // Where: before the statement, after it (after the whole branch or loop), at the start
    // of its body.
    let mut points: Vec<(String, Edit, f64, &'static str)> = Vec::new();
    let nl = nl(text);
    let body_first = match site.stmt {
        Stmt::For(f) => f.body.first(),
        Stmt::While(w) => w.body.first(),
        Stmt::If(i) => i.body.first(),
        _ => None,
    };
    let compound = body_first.is_some();
    for (content, w) in &variants {
        points.push((
            content.clone(),
            Edit::insertion(line_start, format!("{indent}{content}{nl}")),
            if compound { 0.6 } else { 1.0 } * w,
            "before the line",
        ));
        if let Some(e) = insert_line_after(text, sr.end, indent, content) {
            points.push((content.clone(), e, 0.8 * w, "after the statement"));
        }
        if let Some(first) = body_first {
            let fr = rng(first.range());
            if let Some((fs, findent)) = indent_at(text, fr.start) {
                points.push((
                    content.clone(),
                    Edit::insertion(fs, format!("{findent}{content}{nl}")),
                    0.8 * w,
                    "at the start of its body",
                ));
            }
        }
    }
    let n = points.len() as f64;
    for (content, edit, w, place) in points {
        out.push(Mutant {
            family: Family::InsertCall,
            title: format!("insert `{}` {place}", one_line(&content)),
            edits: vec![edit],
            // Split like other families with many alternatives per site, but not below a
            // third of the family's prior: the best-placed copy is a strong guess.
            prior: site.priors.family(Family::InsertCall) * w * (3.0 / n).min(1.0),
            effects: Vec::new(),
        });
    }
}

/// The receiver of a [`bookkeeping_shape`] statement (`seen` in `seen.add(x)`).
fn receiver_expr(s: &Stmt) -> Option<&Expr> {
    match s {
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Call(c) => match c.func.as_ref() {
                Expr::Attribute(a) => Some(a.value.as_ref()),
                _ => None,
            },
            _ => None,
        },
        Stmt::Assign(a) => match a.targets.first()? {
            Expr::Subscript(sub) => Some(sub.value.as_ref()),
            _ => None,
        },
        _ => None,
    }
}

fn has_self(func: &Stmt) -> bool {
    let args = match func {
        Stmt::FunctionDef(f) => &f.args,
        Stmt::AsyncFunctionDef(f) => &f.args,
        _ => return false,
    };
    args.posonlyargs
        .iter()
        .chain(&args.args)
        .next()
        .is_some_and(|a| a.def.arg.as_str() == "self")
}

/// The ranges of the loads of `name` under `exprs`.
fn name_ranges(exprs: &[&Expr], name: &str) -> Vec<Range<usize>> {
    let roots: Vec<Node> = exprs.iter().map(|e| Node::Expr(e)).collect();
    let mut out = Vec::new();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        if let Node::Expr(Expr::Name(n)) = node {
            if n.id.as_str() == name {
                out.push(rng(n.range));
            }
        }
        !matches!(node, Node::Expr(Expr::Lambda(_)))
    });
    out.sort_by_key(|r| r.start);
    out
}

/// `carry`: the innermost loop around the site (or the loop the site heads) reads a local
/// bound before it and never rebinds it: `name = value` at the end of its body, for the loop
/// variable and the names the body binds.
fn carry(site: &Site, func: &Stmt, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let sr = rng(site.stmt.range());
    let mut around = enclosing(func, &sr);
    around.push(site.stmt);
    let Some(lp) = around.iter().rev().find(|s| loop_body(s).is_some()) else {
        return;
    };
    let body = loop_body(lp).unwrap_or(&[]);
    let Some(last) = body.last() else { return };
    let lr = rng(lp.range());
    let locals = names_of(func);
    let stored_inside = stored_in(body);
    let (mut values, test): (Vec<String>, Vec<Node>) = match lp {
        Stmt::For(f) => (stored_in_expr(&f.target), vec![]),
        Stmt::While(w) => (Vec::new(), vec![Node::Expr(&w.test)]),
        _ => return,
    };
    // Values: the loop variable first, then what the body assigns (`cur = ...`; an
    // accumulator's `+=` is no value to carry), in order.
    walk::walk(
        &body.iter().map(Node::Stmt).collect::<Vec<_>>(),
        MAX_AST_DEPTH,
        |node, _| {
            if let Node::Stmt(Stmt::Assign(a)) = node {
                for t in &a.targets {
                    if let Expr::Name(n) = t {
                        if !values.iter().any(|v| v == n.id.as_str()) {
                            values.push(n.id.to_string());
                        }
                    }
                }
            }
            !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        },
    );
    let body_nodes: Vec<Node> = body.iter().map(Node::Stmt).collect();
    let mut read = read_in(&body_nodes);
    read.extend(read_in(&test));
    // Carried: read in the loop, bound before it, never rebound inside (and not the loop's
    // own variable).
    let carried: Vec<&String> = read
        .iter()
        .filter(|n| {
            locals
                .iter()
                .any(|(l, first)| l == *n && *first < lr.start && *first > 0)
                && !stored_inside.contains(n)
                && !values.contains(n)
        })
        .collect();
    // A collection the loop fills or tests membership in (`seen.add(x)`, `x in seen`,
    // `d[k]`) is state of the whole loop, not the previous iteration's value.
    let containers = containers_in(&body_nodes, &test);
    let kinds = super::super::mutate::kinds_of(func);
    let carried: Vec<&String> = carried
        .into_iter()
        .filter(|n| {
            !containers.contains(n)
                && !matches!(kinds.get(n.as_str()), Some(&("list" | "dict" | "set")))
        })
        .collect();
    if carried.is_empty() || values.is_empty() {
        return;
    }
    let Some((_, indent)) = indent_at(text, rng(last.range()).start) else {
        return;
    };
    let mut props: Vec<(String, f64)> = Vec::new();
    for c in &carried {
        for (i, v) in values.iter().take(MAX_BINDINGS).enumerate() {
            // A value of another known kind is not what the name carries.
            if let (Some(a), Some(b)) = (kinds.get(c.as_str()), kinds.get(v.as_str())) {
                if a != b {
                    continue;
                }
            }
            props.push((format!("{c} = {v}"), 1.0 / (i as f64 + 1.0)));
        }
    }
    let n = carried.len() as f64;
    for (content, w) in props {
        let Some(edit) = insert_line_after(text, rng(last.range()).end, indent, &content) else {
            continue;
        };
        out.push(Mutant {
            family: Family::Carry,
            title: format!("add `{content}` at the end of the loop"),
            edits: vec![edit],
            prior: site.priors.family(Family::Carry) * w / n,
            effects: Vec::new(),
        });
    }
}

/// Test helper of the template files: every mutant of `f` at `line` of `src`, as its title
/// and the patched text, best first.
/// Names used as collections under `body` and `test`: a method's receiver, a subscript's base,
/// the right operand of `in`/`not in`, the argument of `len`.
fn containers_in(body: &[Node], test: &[Node]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let roots: Vec<Node> = body.iter().chain(test).copied().collect();
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let mut add = |e: &Expr| {
            if let Expr::Name(n) = e {
                if !out.iter().any(|o| o == n.id.as_str()) {
                    out.push(n.id.to_string());
                }
            }
        };
        match node {
            Node::Expr(Expr::Attribute(a)) => add(&a.value),
            Node::Expr(Expr::Subscript(s)) => add(&s.value),
            Node::Expr(Expr::Compare(c)) => {
                for (op, right) in c.ops.iter().zip(&c.comparators) {
                    if matches!(op, CmpOp::In | CmpOp::NotIn) {
                        add(right);
                    }
                }
            }
            Node::Expr(Expr::Call(c)) => {
                if matches!(c.func.as_ref(), Expr::Name(f) if f.id.as_str() == "len") {
                    c.args.iter().for_each(&mut add);
                }
            }
            _ => {}
        }
        !matches!(node, Node::Stmt(Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
    });
    out
}

#[cfg(test)]
pub(super) fn outcomes(src: &str, line: u32, f: fn(&Site) -> Vec<Mutant>) -> Vec<(String, String)> {
    let mut m = super::mutants_at(src, line, f);
    m.sort_by(|a, b| b.prior.total_cmp(&a.prior).then(a.size().cmp(&b.size())));
    m.into_iter()
        .map(|m| (m.title, crate::edit::apply(src, &m.edits).unwrap()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::outcomes;

    #[test]
    fn a_bookkeeping_call_is_copied_with_the_loop_variable() {
        let src = "def reach(graph, start):\n    seen = set()\n    seen.add(start)\n    todo = [start]\n    while todo:\n        node = todo.pop()\n        for nxt in graph[node]:\n            if nxt not in seen:\n                todo.append(nxt)\n    return seen\n";
        let got = outcomes(src, 9, super::mutants);
        let want = src.replace(
            "                todo.append(nxt)\n",
            "                todo.append(nxt)\n                seen.add(nxt)\n",
        );
        assert!(
            got.iter()
                .any(|(t, s)| t == "insert `seen.add(nxt)` after the statement" && *s == want),
            "{:?}",
            got.iter().map(|g| &g.0).collect::<Vec<_>>()
        );
        // `seen` is a collection the loop tests membership in: nothing carries into it.
        assert!(
            !got.iter().any(|(t, _)| t.starts_with("add `seen = ")),
            "{got:?}"
        );
        // Never a copy of the statement itself, nor more than a handful per site.
        assert!(!got.iter().any(|(t, _)| t.contains("`todo.append(nxt)`")));
        assert!(got.len() <= 20, "{}", got.len());
    }

    #[test]
    fn a_loop_carries_its_previous_value() {
        let src = "def rises(xs):\n    count = 0\n    prev = xs[0]\n    for x in xs[1:]:\n        if x > prev:\n            count += 1\n    return count\n";
        let got = outcomes(src, 5, super::mutants);
        let want = src.replace("count += 1\n", "count += 1\n        prev = x\n");
        assert_eq!(
            got.iter()
                .filter(|(t, _)| t.starts_with("add `"))
                .map(|(t, s)| (t.as_str(), s == &want))
                .collect::<Vec<_>>(),
            vec![("add `prev = x` at the end of the loop", true)]
        );
    }

    #[test]
    fn nothing_where_the_templates_do_not_apply() {
        // No bookkeeping statement to copy, and the loop rebinds what it reads.
        let src = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n";
        assert!(outcomes(src, 4, super::mutants).is_empty());
        // Outside a function nothing is proposed.
        assert!(outcomes("x = 1\nitems = []\nitems.append(x)\n", 3, super::mutants).is_empty());
    }
}
