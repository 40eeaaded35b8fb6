//! An exception type missing from an `except`: the failure's exception escaped a `try` whose
//! handlers catch its siblings (`except (TypeError, ValueError):` around `int(float(s))`, which
//! meets an `OverflowError` for `"1e999"`).
//!
//! `except-widen`: when a frame of the failure's traceback is a line of a `try` body (the
//! exception passed through it, so no handler of that `try` caught it), the exception's type
//! joins a handler's types: `except (A, B):` → `except (A, B, X):`, `except A:` → `except (A,
//! X):`, the first handler first. Only a builtin exception or a name the module defines or
//! imports (what the handler can name there), never `AssertionError` (a test's own check) nor
//! a handler of `Exception`/`BaseException` (which would have caught it). Nothing here runs
//! code or checks that the result parses: [`crate::edit::Fix::apply_to`] re-parses every
//! candidate.

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use crate::edit::Edit;
use crate::syntax::walk::{self, Node};
use crate::syntax::{rng, ParsedModule, MAX_AST_DEPTH};
use crate::traceback::Failure;

use super::family::Family;
use super::mutate::{one_line, Mutant};
use super::priors::Priors;

/// This file's families, as named in `rules/search/priors.toml`.
pub const FAMILIES: &[Family] = &[Family::ExceptWiden];

/// Exceptions never added: a test's own check, and what no handler should swallow.
const NEVER: &[&str] = &[
    "AssertionError",
    "Failed",
    "RecursionError",
    "MemoryError",
    "SystemExit",
    "KeyboardInterrupt",
    "GeneratorExit",
];

/// The handler widenings at the statement on `line` of `file` (`module`), when `failure`'s
/// traceback passes through it inside a `try` body.
pub fn mutants(
    module: &ParsedModule,
    file: &str,
    line: u32,
    priors: &Priors,
    failure: Option<&Failure>,
) -> Vec<Mutant> {
    let Some(failure) = failure else {
        return Vec::new();
    };
    let exc = failure.exc_type.rsplit('.').next().unwrap_or("");
    if exc.is_empty()
        || NEVER.contains(&exc)
        || !crate::plan::raises::exception_in_scope(module, exc)
    {
        return Vec::new();
    }
    let Some((stmt, _)) = crate::syntax::queries::statement_at(module, line) else {
        return Vec::new();
    };
    // The lines of the statement a frame may name: a simple statement's all (3.11+ names the
    // line of the failing expression), a compound one's header line only.
    let compound = matches!(
        stmt,
        Stmt::If(_)
            | Stmt::For(_)
            | Stmt::AsyncFor(_)
            | Stmt::While(_)
            | Stmt::With(_)
            | Stmt::AsyncWith(_)
            | Stmt::Try(_)
            | Stmt::TryStar(_)
            | Stmt::Match(_)
    );
    let last = if compound {
        line
    } else {
        line_of(module, rng(stmt.range()).end.saturating_sub(1))
    };
    let passed = failure
        .frames
        .iter()
        .any(|f| f.file == file && (line..=last).contains(&f.line));
    if !passed {
        return Vec::new();
    }
    let Some(handlers) = innermost_try(module, rng(stmt.range())) else {
        return Vec::new();
    };
    let text = module.text();
    let mut out = Vec::new();
    let mut weight = 1.0;
    for h in handlers {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        let Some(ty) = h.type_.as_deref() else {
            continue;
        };
        let names: Vec<&Expr> = match ty {
            Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        fn named(e: &Expr) -> Option<&str> {
            match e {
                Expr::Name(n) => Some(n.id.as_str()),
                Expr::Attribute(a) => Some(a.attr.as_str()),
                _ => None,
            }
        }
        if names
            .iter()
            .filter_map(|e| named(e))
            .any(|n| n == exc || n == "Exception" || n == "BaseException")
        {
            continue;
        }
        let tr = rng(ty.range());
        let old = &text[tr.clone()];
        let (new, edit) = match ty {
            Expr::Tuple(t) if !t.elts.is_empty() => {
                let end = rng(t.elts[t.elts.len() - 1].range()).end;
                let mut new = old.to_string();
                new.insert_str(end - tr.start, &format!(", {exc}"));
                (new, Edit::insertion(end, format!(", {exc}")))
            }
            Expr::Tuple(_) => continue,
            _ => {
                let new = format!("({old}, {exc})");
                (new.clone(), Edit::replacement(tr.clone(), new))
            }
        };
        out.push(Mutant {
            family: Family::ExceptWiden,
            title: format!("`except {}:` → `except {}:`", one_line(old), one_line(&new)),
            edits: vec![edit],
            prior: priors.family(Family::ExceptWiden) * weight,
            effects: Vec::new(),
        });
        weight = 0.5;
    }
    out
}

/// 1-based line of a byte offset.
fn line_of(module: &ParsedModule, offset: usize) -> u32 {
    module.line_starts().partition_point(|&s| s <= offset) as u32
}

/// The handlers of the innermost `try` whose body holds `at` (in the same function).
fn innermost_try(
    module: &ParsedModule,
    at: std::ops::Range<usize>,
) -> Option<&[ast::ExceptHandler]> {
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    let mut found = None;
    walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
        let r = node.range();
        if !(r.start <= at.start && at.end <= r.end) {
            return false;
        }
        // A handler's body holds statements too (a `try` inside an `except`).
        let s = match node {
            Node::Stmt(s) => s,
            Node::Handler(_) => return true,
            _ => return false,
        };
        match s {
            // A nested def is other code: a `try` outside it is not on its frame.
            Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_) => found = None,
            Stmt::Try(ast::StmtTry { body, handlers, .. })
            | Stmt::TryStar(ast::StmtTryStar { body, handlers, .. }) => {
                let in_body = body.iter().any(|b| {
                    let br = rng(b.range());
                    br.start <= at.start && at.end <= br.end
                });
                if in_body {
                    found = Some(&handlers[..]);
                }
            }
            _ => {}
        }
        true
    });
    found.filter(|h| !h.is_empty())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::traceback::model::{Frame, Outcome, TbStyle, When};
    use std::path::Path;

    pub(in crate::search) fn failure(exc: &str, lines: &[u32]) -> Failure {
        Failure {
            test: Some("tests/test_m.py::test_it".into()),
            when: When::Call,
            outcome: Outcome::Failed,
            headline: None,
            style: TbStyle::Native,
            exc_type: exc.to_string(),
            msg: String::new(),
            frames: lines
                .iter()
                .map(|&line| Frame {
                    file: "m.py".into(),
                    printed_file: "m.py".into(),
                    resolved: None,
                    line,
                    func: None,
                    code: None,
                    caret: None,
                })
                .collect(),
            chain: Vec::new(),
            sub_exceptions: Vec::new(),
            location: None,
            rejected_frames: Vec::new(),
            summary: None,
        }
    }

    fn outcomes(src: &str, line: u32, f: &Failure) -> Vec<(String, String)> {
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        mutants(&pm, "m.py", line, Priors::builtin(), Some(f))
            .into_iter()
            .map(|m| (m.title, crate::edit::apply(src, &m.edits).unwrap()))
            .collect()
    }

    const TO_INT: &str = "def to_int(s, default=0):\n    try:\n        return int(float(s))\n    except (TypeError, ValueError):\n        return default\n";

    #[test]
    fn the_escaped_type_joins_the_handlers_tuple() {
        let got = outcomes(TO_INT, 3, &failure("OverflowError", &[3]));
        assert_eq!(
            got,
            vec![(
                "`except (TypeError, ValueError):` → `except (TypeError, ValueError, OverflowError):`"
                    .to_string(),
                TO_INT.replace("ValueError):", "ValueError, OverflowError):")
            )]
        );
    }

    #[test]
    fn a_try_inside_a_handler_is_the_innermost() {
        let src = "def to_int(v, default=0):\n    try:\n        return int(v)\n    except (TypeError, ValueError):\n        try:\n            return int(float(v))\n        except (TypeError, ValueError):\n            return default\n";
        let got = outcomes(src, 6, &failure("OverflowError", &[6]));
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].1,
            src.replacen(
                "        except (TypeError, ValueError):",
                "        except (TypeError, ValueError, OverflowError):",
                1
            )
        );
    }

    #[test]
    fn a_single_name_becomes_a_tuple_and_later_handlers_rank_lower() {
        let src = "def get(d, k):\n    try:\n        return d[k][0]\n    except KeyError as e:\n        return None\n    except ImportError:\n        raise\n";
        let pm = crate::syntax::parse_text(Path::new("m.py"), src).unwrap();
        let f = failure("IndexError", &[3]);
        let got = mutants(&pm, "m.py", 3, Priors::builtin(), Some(&f));
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].title,
            "`except KeyError:` → `except (KeyError, IndexError):`"
        );
        assert_eq!(
            crate::edit::apply(src, &got[0].edits).unwrap(),
            src.replace(
                "except KeyError as e:",
                "except (KeyError, IndexError) as e:"
            )
        );
        assert!(got[1].prior < got[0].prior);
    }

    #[test]
    fn nothing_off_the_traceback_outside_a_try_body_or_for_unknown_types() {
        // The frame is another line.
        assert!(outcomes(TO_INT, 3, &failure("OverflowError", &[5])).is_empty());
        // A test's own assertion, a project type the module cannot name.
        assert!(outcomes(TO_INT, 3, &failure("AssertionError", &[3])).is_empty());
        assert!(outcomes(TO_INT, 3, &failure("shop.errors.PriceError", &[3])).is_empty());
        // In a handler, not the body.
        let src = "def f(s):\n    try:\n        return int(s)\n    except ValueError:\n        return int(s[1:])\n";
        assert!(outcomes(src, 5, &failure("IndexError", &[5])).is_empty());
        // A `try` around a nested def does not cover the def's own frame.
        let src = "def f(s):\n    try:\n        def g():\n            return s[0]\n        return g()\n    except KeyError:\n        return None\n";
        assert!(outcomes(src, 4, &failure("IndexError", &[4])).is_empty());
    }
}
