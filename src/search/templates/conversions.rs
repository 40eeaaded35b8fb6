//! Template: a value one conversion short of what is wanted.
//!
//! `wrap-conversion`: the value wrapped in the type the evidence names: the type the failing
//! test compares with when the value printed is of another (`['a', 'b'] == ('a', 'b')` →
//! `tuple(…)`), the probe's runtime type of an assigned local (a generator where a sequence is
//! kept), a non-string operand concatenated to a string literal (`str(…)`), or a type the class
//! keeps for its values (`self.mapping_type(value)`).


use rustpython_parser::ast::{Constant, Expr, Operator, Ranged, Stmt};

use crate::edit::Edit;
use crate::search::family::Family;
use crate::search::mutate::{kinds_of, one_line, value_kind, with_probed};
use crate::syntax::rng;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

use super::calls::{local_names, module_names};
use super::operators::{mutant, own_exprs};
use super::siblings::{attributes_of, class_of};
use super::{Mutant, Site};

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::WrapConversion];

/// Runtime types of a lazy iterable that a caller keeps where a sequence was meant.
const LAZY: &[&str] = &[
    "generator", "map", "filter", "zip", "dict_keys", "dict_values", "dict_items",
    "list_iterator", "tuple_iterator", "reversed", "itertools.chain",
];

/// Builtins whose result is already text.
const TEXT_BUILTINS: &[&str] = &["str", "repr", "format", "ascii", "chr", "hex", "oct", "bin"];

pub fn mutants(site: &Site) -> Vec<Mutant> {
    let mut out = Vec::new();
    wrap_conversion(site, &mut out);
    out
}

/// The builtin type a literal's text is (the failing test's expected value).
fn literal_type(lit: &str) -> Option<&'static str> {
    let pm = crate::syntax::parse_text(std::path::Path::new("lit.py"), lit).ok()?;
    let Some(Stmt::Expr(e)) = pm.body().first() else {
        return None;
    };
    Some(match e.value.as_ref() {
        Expr::Tuple(_) => "tuple",
        Expr::List(_) => "list",
        Expr::Dict(_) => "dict",
        Expr::Set(_) => "set",
        Expr::Constant(c) => match &c.value {
            Constant::Str(_) => "str",
            Constant::Int(_) => "int",
            Constant::Float(_) => "float",
            _ => return None,
        },
        _ => return None,
    })
}

/// The builtin type the failing check compares with when the value it got is of another:
/// pytest's `assert ['a', 'b'] == ('a', 'b')` (or unittest's `… != …`) under a test line
/// `assert f(x) == ("a", "b")` gives `tuple`. The type is read from the test's literal side
/// (never its value); the message's other side must print as another type, or as an object
/// (`<generator object …>`).
pub fn wanted_type(failure: &crate::traceback::Failure) -> Option<String> {
    let codes: Vec<&str> = failure
        .frames
        .iter()
        .filter_map(|f| f.code.as_deref())
        .collect();
    wanted_in_check(&codes, &failure.msg)
}

/// [`wanted_type`] on the frames' source lines and the message.
fn wanted_in_check(codes: &[&str], msg: &str) -> Option<String> {
    let first = msg.lines().next()?.trim();
    let (l, r) = first
        .strip_prefix("assert ")
        .and_then(|b| b.split_once(" == "))
        .or_else(|| first.split_once(" != "))?;
    let code = codes
        .iter()
        .find(|c| c.trim_start().starts_with("assert") && c.contains(" == "))?;
    let body = code.trim().strip_prefix("assert ")?;
    let at = crate::transform::unquoted(body)
        .find(|&(i, c, depth)| c == '=' && depth == 0 && body[i..].starts_with("== "))
        .map(|(i, _, _)| i)?;
    let rest = crate::transform::unquoted(&body[at + 3..])
        .find(|&(_, c, depth)| c == ',' && depth == 0)
        .map_or(&body[at + 3..], |(i, _, _)| &body[at + 3..at + 3 + i]);
    let sides = [body[..at].trim(), rest.trim()];
    let wanted = sides.iter().find_map(|s| display_type(s))?;
    let printed = |s: &str| literal_type(s).or(s.starts_with('<').then_some("object"));
    let (tl, tr) = (printed(l.trim())?, printed(r.trim())?);
    (tl != tr && (tl == wanted || tr == wanted)).then(|| wanted.to_string())
}

/// [`literal_type`] of a display written in a test: a literal of constants only (no call, no
/// name), so a compared value computed by the test says nothing.
fn display_type(s: &str) -> Option<&'static str> {
    let pm = crate::syntax::parse_text(std::path::Path::new("lit.py"), s).ok()?;
    let Some(Stmt::Expr(e)) = pm.body().first() else {
        return None;
    };
    let mut plain = true;
    walk::walk(&[Node::Expr(e.value.as_ref())], MAX_AST_DEPTH, |node, _| {
        if matches!(node, Node::Expr(Expr::Name(_) | Expr::Call(_) | Expr::Attribute(_))) {
            plain = false;
        }
        plain
    });
    plain.then(|| literal_type(s)).flatten()
}

/// Whether `e` is already made by a call of `ty` (or is a literal, which is no conversion's).
fn made_by(e: &Expr, ty: &str) -> bool {
    match e {
        Expr::Call(c) => matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == ty),
        _ => false,
    }
}

/// `wrap-conversion`: the statement's value (or an operand) wrapped in a conversion.
fn wrap_conversion(site: &Site, out: &mut Vec<Mutant>) {
    let text = site.module.text();
    let src = |e: &Expr| text[rng(e.range())].to_string();
    let locals = local_names(site);
    let module = module_names(site.module.body()).bound;
    let builtin = |t: &str| !locals.contains(t) && !module.contains(t);
    let push = |e: &Expr, wrapper: &str, w: f64, out: &mut Vec<Mutant>| {
        let at = src(e);
        out.push(mutant(
            site,
            Family::WrapConversion,
            format!("`{}` → `{wrapper}(…)`", one_line(&at)),
            vec![Edit::replacement(rng(e.range()), format!("{wrapper}({at})"))],
            w,
            Vec::new(),
        ));
    };
    let literalish = |e: &Expr| {
        matches!(
            e,
            Expr::Constant(_)
                | Expr::List(_)
                | Expr::Tuple(_)
                | Expr::Dict(_)
                | Expr::Set(_)
                | Expr::JoinedStr(_)
        )
    };
    let kinds = with_probed(site.func.map(kinds_of).unwrap_or_default(), site.probed);
    // The value the test compares with is of another type than the returned one.
    let wanted = site
        .wanted_type
        .or_else(|| site.expected.and_then(literal_type));
    if let (Stmt::Return(r), Some(ty)) = (site.stmt, wanted) {
        if let Some(v) = r.value.as_deref() {
            let known = match v {
                Expr::Name(n) => kinds.get(n.id.as_str()).map(String::as_str),
                _ => value_kind(v),
            };
            if !literalish(v) && known != Some(ty) && !made_by(v, ty) && builtin(ty) {
                push(v, ty, 1.0, out);
            }
        }
    }
    // A local the probe shows lazy (a generator) where the code keeps a sequence.
    if let Stmt::Assign(a) = site.stmt {
        if let ([Expr::Name(t)], Expr::Call(_)) = (&a.targets[..], a.value.as_ref()) {
            let lazy = site
                .probed
                .and_then(|p| p.get(t.id.as_str()))
                .is_some_and(|ty| LAZY.contains(&ty.as_str()));
            if lazy {
                for (ty, w) in [("tuple", 1.0), ("list", 0.8)] {
                    if builtin(ty) && !made_by(&a.value, ty) {
                        push(&a.value, ty, w, out);
                    }
                }
            }
        }
    }
    // A value concatenated to a string literal that is not a string (`e.args[0] + ": "`).
    for e in own_exprs(site.stmt) {
        let Expr::BinOp(b) = e else { continue };
        if !matches!(b.op, Operator::Add) {
            continue;
        }
        let is_str = |x: &Expr| {
            matches!(x, Expr::JoinedStr(_))
                || matches!(x, Expr::Constant(c) if matches!(c.value, Constant::Str(_)))
        };
        for (this, other) in [(&b.left, &b.right), (&b.right, &b.left)] {
            if !is_str(other) || is_str(this) || literalish(this) || !builtin("str") {
                continue;
            }
            let known = match this.as_ref() {
                Expr::Name(n) => kinds.get(n.id.as_str()).map(String::as_str),
                x => value_kind(x),
            };
            // A concatenation of strings is fine; a BinOp is another `+` of the chain; a
            // method's result (`.join`, `.strip`) or a builtin's that makes text is text.
            let texty = match this.as_ref() {
                Expr::Call(c) => match c.func.as_ref() {
                    Expr::Name(f) => TEXT_BUILTINS.contains(&f.id.as_str()),
                    _ => true,
                },
                _ => false,
            };
            // Only a value known to be a number: string building is everywhere, and an operand
            // of unknown type is far more often text than not.
            if !matches!(known, Some("int" | "float" | "bool"))
                || texty
                || matches!(this.as_ref(), Expr::BinOp(_))
            {
                continue;
            }
            push(this, "str", 0.5, out);
        }
    }
    // A type the class keeps for its values (`self.mapping_type`), applied to a returned value.
    if let (Stmt::Return(r), Some(func)) = (site.stmt, site.func) {
        let Some(v) = r.value.as_deref() else { return };
        if literalish(v) {
            return;
        }
        let Some(class) = class_of(site.module.body(), func) else {
            return;
        };
        let mut types: Vec<String> = attributes_of(class)
            .into_keys()
            .collect::<Vec<_>>();
        if let Stmt::ClassDef(cd) = class {
            for s in &cd.body {
                if let Stmt::Assign(a) = s {
                    for t in &a.targets {
                        types.extend(crate::syntax::queries::stored_in_expr(t));
                    }
                }
            }
        }
        types.sort();
        types.dedup();
        types.retain(|t| t.ends_with("_type") || t.ends_with("_class") || t.ends_with("_factory"));
        let n = types.len() as f64;
        for t in types {
            let wrapper = format!("self.{t}");
            let already = matches!(v, Expr::Call(c) if src(&c.func) == wrapper);
            if !already {
                push(v, &wrapper, 1.0 / n, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::insert::outcomes;
    use super::super::operators::test_support::{pair, titles};
    use super::*;

    #[test]
    fn conversions_follow_the_evidence() {
        // The test compares with a tuple: the returned call is made one.
        let src = "def pairs(xs):\n    return zip(xs, xs[1:])\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let (stmt, func) = crate::syntax::queries::statement_at(&pm, 2).unwrap();
        let site = Site {
            module: &pm,
            line: 2,
            stmt,
            func,
            priors: crate::search::priors::Priors::builtin(),
            probed: None,
            expected: None,
            wanted_type: Some("tuple"),
        };
        let t: Vec<String> = mutants(&site).into_iter().map(|m| m.title).collect();
        assert_eq!(t, vec!["`zip(xs, xs[1:])` → `tuple(…)`"]);
        // A generator the probe saw where the function keeps a sequence.
        let probed: std::collections::BTreeMap<String, String> =
            [("rows".to_string(), "generator".to_string())].into();
        let src = "def load(f, rows):\n    rows = f(rows)\n    return len(rows)\n";
        let pm = crate::syntax::parse_text(std::path::Path::new("m.py"), src).unwrap();
        let (stmt, func) = crate::syntax::queries::statement_at(&pm, 2).unwrap();
        let site = Site {
            probed: Some(&probed),
            expected: None,
            wanted_type: None,
            module: &pm,
            line: 2,
            stmt,
            func,
            priors: crate::search::priors::Priors::builtin(),
        };
        let t: Vec<String> = mutants(&site).into_iter().map(|m| m.title).collect();
        assert_eq!(t, vec!["`f(rows)` → `tuple(…)`", "`f(rows)` → `list(…)`"]);
        // A number concatenated to a string; a string concatenated to one is fine.
        let cat = "def label(n: int, s):\n    k = len(s)\n    return 'n=' + n + s + ':' + str(k) + s.name\n";
        assert_eq!(
            titles(cat, 3, mutants),
            vec![pair("`n` → `str(…)`", "    return 'n=' + str(n) + s + ':' + str(k) + s.name")]
        );
    }

    #[test]
    fn the_wanted_type_is_the_test_literal_s_when_the_value_printed_is_another() {
        let failure = |code: &str, msg: &str| wanted_in_check(&[code], msg);
        let code = "    assert split(\"a b\") == (\"a\", \"b\")";
        assert_eq!(
            failure(code, "assert ['a', 'b'] == ('a', 'b')\n  more").as_deref(),
            Some("tuple")
        );
        assert_eq!(
            failure(code, "assert <generator object f at 0x1> == ('a', 'b')").as_deref(),
            Some("tuple")
        );
        // The same type on both sides, or no literal in the test: nothing to convert to.
        assert_eq!(failure(code, "assert ('a',) == ('a', 'b')"), None);
        assert_eq!(failure("    assert f(1) == g(2)", "assert [1] == (1,)"), None);
        assert_eq!(
            failure("    assert n(x) == 3, 'why'", "assert '3' == 3").as_deref(),
            Some("int")
        );
    }

    #[test]
    fn a_returned_value_takes_the_type_the_class_keeps() {
        let src = "class Bag:\n    item_class = list\n\n    def __init__(self, kind):\n        self.mapping_type = kind\n\n    def dump(self, value):\n        return value\n";
        let got: Vec<String> = outcomes(src, 8, mutants).into_iter().map(|g| g.0).collect();
        assert_eq!(
            got,
            vec!["`value` → `self.item_class(…)`", "`value` → `self.mapping_type(…)`"]
        );
        assert!(titles("def f(v):\n    return v\n", 2, mutants).is_empty());
    }
}
