//! No literal from the test (issue 33): a candidate may not introduce a literal of the failing
//! test's expected value unless the same value already appears in the module it edits. `if not
//! h: return 3600` passes a test `assert seconds(1) == 3600` by construction, whatever the code
//! means.
//!
//! The test's expected values ([`test_literals`]): the literals of the compared side of the
//! failing assertion (`assert f(x) == 3600`, `assert f(x) == [3600, 7200]`, `self.assertEqual(f(x),
//! "hi")`), the argument of `pytest.approx(...)`, and, where that side is a name (`assert f(h) ==
//! expected`, a parametrized case), the value pytest's message shows for it (`assert 0 ==
//! 3600`). Empty values (`None`, `False`, `0`, `""`) are the type's, not the test's: a guard
//! returning the empty value of the type the test expects is how the null guards work and is
//! not filtered.
//!
//! What a candidate introduces ([`introduced`]): the literal values in the patched module that
//! are nowhere in the original one (by value: `3600`, `3600.0` and `0xE10` are one value).

use std::path::Path;

use rustpython_parser::ast::{self, Constant, Expr, Stmt, UnaryOp};

use super::Candidate;
use crate::source::SourceFile;
use crate::syntax::walk::{self, Node};
use crate::syntax::{self, ParsedModule, MAX_AST_DEPTH};
use crate::traceback::Failure;

/// A literal value, compared by value.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    Num(f64),
    Str(String),
    Bytes(Vec<u8>),
    Bool(bool),
}

impl Lit {
    fn of(c: &Constant) -> Option<Lit> {
        Some(match c {
            Constant::Int(i) => Lit::Num(i.to_string().parse().ok()?),
            Constant::Float(f) => Lit::Num(*f),
            Constant::Str(s) => Lit::Str(s.clone()),
            Constant::Bytes(b) => Lit::Bytes(b.clone()),
            Constant::Bool(b) => Lit::Bool(*b),
            _ => return None,
        })
    }

    /// The empty value of its type: never counted as the test's.
    fn is_empty(&self) -> bool {
        match self {
            Lit::Num(n) => *n == 0.0,
            Lit::Str(s) => s.is_empty(),
            Lit::Bytes(b) => b.is_empty(),
            Lit::Bool(b) => !b,
        }
    }

    /// As Python would write it (for the report).
    pub fn repr(&self) -> String {
        match self {
            Lit::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", *n as i64),
            Lit::Num(n) => n.to_string(),
            Lit::Str(s) => format!("{s:?}"),
            Lit::Bytes(b) => format!("b{:?}", String::from_utf8_lossy(b)),
            Lit::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        }
    }
}

/// Every literal value in `roots` (a negative number is one literal: `-1`).
fn literals_in(roots: &[Node], out: &mut Vec<Lit>) {
    walk::walk(roots, MAX_AST_DEPTH, |node, _| match node {
        Node::Expr(Expr::UnaryOp(u)) if matches!(u.op, UnaryOp::USub) => {
            if let Expr::Constant(c) = u.operand.as_ref() {
                if let Some(Lit::Num(n)) = Lit::of(&c.value) {
                    out.push(Lit::Num(-n));
                    return false;
                }
            }
            true
        }
        Node::Expr(Expr::Constant(c)) => {
            out.extend(Lit::of(&c.value));
            false
        }
        _ => true,
    });
}

/// Every literal value of a module.
pub fn module_literals(m: &ParsedModule) -> Vec<Lit> {
    let roots: Vec<Node> = m.body().iter().map(Node::Stmt).collect();
    let mut out = Vec::new();
    literals_in(&roots, &mut out);
    out
}

/// The literal values of `after` that `before` does not hold anywhere.
pub fn introduced(before: &ParsedModule, after: &ParsedModule) -> Vec<Lit> {
    let old = module_literals(before);
    let mut out: Vec<Lit> = Vec::new();
    for l in module_literals(after) {
        if !old.contains(&l) && !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// The first of `test` that `after` holds and `old` (the original module's literals) does not.
pub fn copied_in(old: &[Lit], after: &ParsedModule, test: &[Lit]) -> Option<Lit> {
    if test.is_empty() {
        return None;
    }
    module_literals(after)
        .into_iter()
        .find(|l| test.contains(l) && !old.contains(l))
}

/// The failing test's expected values (see the module docs), without empty values.
pub fn test_literals(failure: &Failure) -> Vec<Lit> {
    let codes: Vec<&str> = failure
        .frames
        .iter()
        .filter_map(|f| f.code.as_deref())
        .collect();
    literals_of_check(&codes, &failure.msg)
}

/// [`test_literals`] of the frames' source lines and the message.
fn literals_of_check(codes: &[&str], msg: &str) -> Vec<Lit> {
    let message = msg.lines().next().and_then(|l| compared(l.trim()));
    let mut out: Vec<Lit> = Vec::new();
    for code in codes {
        let Some(sides) = compared(code.trim()) else {
            continue;
        };
        for (i, side) in sides.iter().enumerate() {
            match expected_side(side) {
                Side::Literals(mut l) => out.append(&mut l),
                // A name compared: the value pytest printed in its place.
                Side::Named => {
                    if let Some(shown) = message.as_ref().and_then(|m| m.get(i)) {
                        if let Side::Literals(mut l) = expected_side(shown) {
                            out.append(&mut l);
                        }
                    }
                }
                Side::Computed => {}
            }
        }
    }
    out.retain(|l| !l.is_empty());
    out.dedup();
    out
}

/// The two sides of an equality check on one line: `assert A == B` (with or without a
/// message) or `...assertEqual(A, B)`, parsed.
fn compared(line: &str) -> Option<Vec<Expr>> {
    let m = syntax::parse_text(Path::new("check.py"), line).ok()?;
    match m.body() {
        [Stmt::Assert(a)] => match a.test.as_ref() {
            Expr::Compare(c) if c.ops.len() == 1 && matches!(c.ops[0], ast::CmpOp::Eq) => {
                Some(vec![(*c.left).clone(), c.comparators[0].clone()])
            }
            _ => None,
        },
        [Stmt::Expr(e)] => match e.value.as_ref() {
            Expr::Call(c) => match c.func.as_ref() {
                Expr::Attribute(a)
                    if matches!(
                        a.attr.as_str(),
                        "assertEqual" | "assertEquals" | "assertAlmostEqual"
                    ) && c.args.len() >= 2 =>
                {
                    Some(c.args[..2].to_vec())
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

enum Side {
    /// A literal (or a container of literals), or `pytest.approx(literal)`: its values.
    Literals(Vec<Lit>),
    /// A name, attribute or item: the value is what the message shows.
    Named,
    /// A call or an operation: what the code computes, not an expected value.
    Computed,
}

fn expected_side(e: &Expr) -> Side {
    match e {
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Attribute(a) if a.attr.as_str() == "approx" => approx_args(c),
            Expr::Name(n) if n.id.as_str() == "approx" => approx_args(c),
            _ => Side::Computed,
        },
        Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_) => Side::Named,
        Expr::Constant(_)
        | Expr::UnaryOp(_)
        | Expr::List(_)
        | Expr::Tuple(_)
        | Expr::Set(_)
        | Expr::Dict(_) => {
            let mut has_other = false;
            walk::walk(&[Node::Expr(e)], MAX_AST_DEPTH, |n, _| {
                has_other |= !matches!(
                    n,
                    Node::Expr(
                        Expr::Constant(_)
                            | Expr::UnaryOp(_)
                            | Expr::List(_)
                            | Expr::Tuple(_)
                            | Expr::Set(_)
                            | Expr::Dict(_)
                    )
                );
                true
            });
            if has_other {
                return Side::Computed;
            }
            let mut out = Vec::new();
            literals_in(&[Node::Expr(e)], &mut out);
            Side::Literals(out)
        }
        _ => Side::Computed,
    }
}

fn approx_args(c: &ast::ExprCall) -> Side {
    let mut out = Vec::new();
    if let Some(a) = c.args.first() {
        literals_in(&[Node::Expr(a)], &mut out);
    }
    Side::Literals(out)
}

/// Whether `edits` can write one of `test` at all: a cheap textual test that spares the parse
/// of the others (a number needs a digit, a string its text or a quote, `True` its word).
pub fn may_introduce(edits: &[crate::edit::Edit], test: &[Lit]) -> bool {
    edits.iter().any(|e| {
        let c = e.content.as_str();
        test.iter().any(|l| match l {
            Lit::Num(_) => c.bytes().any(|b| b.is_ascii_digit()),
            // A string that source writes with escapes may not appear as is.
            Lit::Str(s) => {
                c.contains(s.as_str())
                    || (!s.chars().all(|ch| ch == ' ' || ch.is_ascii_graphic())
                        && c.contains(['"', '\'']))
            }
            Lit::Bytes(_) => c.contains(['"', '\'']),
            Lit::Bool(_) => c.contains("True"),
        })
    })
}

/// The first of `test` that `c` introduces into its module, if any (see the module docs). A
/// file that does not decode or parse is not judged here.
pub fn copied_literal(c: &Candidate, test: &[Lit]) -> Option<Lit> {
    if test.is_empty() || !may_introduce(&c.fix.edits, test) {
        return None;
    }
    let before = SourceFile::from_bytes(&c.path, c.original.clone()).ok()?;
    let after = SourceFile::from_bytes(&c.path, c.patched.clone()).ok()?;
    let (before, after) = (syntax::parse(&before).ok()?, syntax::parse(&after).ok()?);
    copied_in(&module_literals(&before), &after, test)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> ParsedModule {
        syntax::parse_text(Path::new("m.py"), text).unwrap()
    }

    fn expected(code: &str, msg: &str) -> Vec<String> {
        literals_of_check(&[code], msg)
            .iter()
            .map(Lit::repr)
            .collect()
    }

    #[test]
    fn the_tests_expected_values() {
        assert_eq!(
            expected("    assert seconds(1) == 3600", "assert 0 == 3600"),
            ["3600"]
        );
        assert_eq!(
            expected("assert greet(s) == \"hi\", \"greeting\"", ""),
            ["\"hi\""]
        );
        assert_eq!(
            expected("assert mean(xs) == pytest.approx(2.5)", ""),
            ["2.5"]
        );
        assert_eq!(expected("self.assertEqual(f(2), [-7, 8])", ""), ["-7", "8"]);
        // A parametrized case: the name's value is what pytest printed.
        assert_eq!(
            expected("assert seconds(h) == expected", "assert 0 == 7200"),
            ["7200"]
        );
        // Empty values are the type's, and the input is not the expectation.
        assert!(expected("assert f(\"x\") == \"\"", "").is_empty());
        assert!(expected("assert f(3) == g(3)", "assert 1 == 2").is_empty());
        assert!(expected("x = f(3)", "").is_empty());
    }

    #[test]
    fn introduced_values_are_compared_by_value() {
        let before = parsed("def f(h):\n    return h * 3600.0\n");
        let after =
            parsed("def f(h):\n    if not h:\n        return 3600\n    return h * 3600.0\n");
        assert!(introduced(&before, &after).is_empty());
        let after =
            parsed("def f(h):\n    if not h:\n        return 'hi'\n    return h * 3600.0\n");
        assert_eq!(introduced(&before, &after), [Lit::Str("hi".into())]);
    }
}
