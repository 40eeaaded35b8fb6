//! `syntax::locate*`: every kind of line a traceback can point at.

use selfdebug::source::SourceFile;
use selfdebug::syntax::{
    self, locate, locate_all, locate_span, Clause, ColumnUnit, Located, ParsedModule, StmtKind,
    SubExprKind,
};

fn parsed(src: &str) -> ParsedModule {
    let sf = SourceFile::from_bytes("m.py", src.as_bytes().to_vec()).unwrap();
    syntax::parse(&sf).unwrap()
}

/// Offset of the `n`th (0-based) occurrence of `needle`.
fn at(src: &str, needle: &str, n: usize) -> usize {
    src.match_indices(needle).nth(n).unwrap().0
}

fn slice<'a>(pm: &'a ParsedModule, r: &std::ops::Range<usize>) -> &'a str {
    &pm.text()[r.clone()]
}

const METHODS: &str = "\
import os

class Repo:
    # a comment
    @staticmethod
    @cache(
        size=3,
    )
    def load(path):
        for name in os.listdir(path):
            if name.startswith('.'): continue
            data = (open(name)
                    .read())  # trailing
        return data.split()

    async def fetch(self, key):
        return self.cache[key] / 2
";

#[test]
fn simple_statement_in_method_in_loop() {
    let pm = parsed(METHODS);
    let l = locate(&pm, 12).unwrap();
    assert_eq!(l.kind, StmtKind::Assign);
    assert_eq!(l.clause, Clause::Statement);
    assert_eq!(
        slice(&pm, &l.range),
        "data = (open(name)\n                    .read())"
    );
    assert_eq!(
        slice(&pm, &l.line_range),
        "            data = (open(name)\n                    .read())  # trailing"
    );
    assert_eq!((l.first_line, l.last_line), (12, 13));
    assert_eq!(l.indent, "            ");
    assert!(l.starts_line);
    assert!(l.in_loop);
    assert_eq!(l.depth, 3);
    let f = l.function.as_ref().unwrap();
    assert_eq!(f.name, "load");
    assert!(!f.is_async);
    assert!(f.is_method);
    assert_eq!(f.range.start, at(METHODS, "@staticmethod", 0));
    assert_eq!(
        f.range.end,
        at(METHODS, "data.split()", 0) + "data.split()".len()
    );
    let c = l.class.as_ref().unwrap();
    assert_eq!(c.name, "Repo");
    assert_eq!(c.range.start, at(METHODS, "class Repo", 0));
    assert_eq!(c.range.end, METHODS.trim_end().len());
    // The continuation line locates the same statement.
    assert_eq!(locate(&pm, 13).unwrap().range, l.range);

    // Sub-expressions in source order: the call, the attribute `.read`, the names.
    let exprs: Vec<(&str, String)> = l
        .exprs
        .iter()
        .map(|e| {
            let what = match &e.kind {
                SubExprKind::Attribute { name, .. } => format!("attr {name}"),
                SubExprKind::Call { args, .. } => format!("call/{args}"),
                SubExprKind::Name { id } => format!("name {id}"),
                other => format!("{other:?}"),
            };
            (slice(&pm, &e.range), what)
        })
        .collect();
    assert_eq!(
        exprs,
        vec![
            (
                "open(name)\n                    .read()",
                "call/0".to_string()
            ),
            (
                "open(name)\n                    .read",
                "attr read".to_string()
            ),
            ("open(name)", "call/1".to_string()),
            ("open", "name open".to_string()),
            ("name", "name name".to_string()),
        ]
    );
    match &l.exprs[1].kind {
        SubExprKind::Attribute {
            receiver,
            name_range,
            ctx,
            ..
        } => {
            assert_eq!(slice(&pm, receiver), "open(name)");
            assert_eq!(slice(&pm, name_range), "read");
            assert_eq!(*ctx, rustpython_parser::ast::ExprContext::Load);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn decorator_lines_locate_the_def() {
    let pm = parsed(METHODS);
    let l = locate(&pm, 5).unwrap();
    assert_eq!(l.kind, StmtKind::FunctionDef);
    assert_eq!(
        l.clause,
        Clause::Decorator {
            index: 0,
            range: at(METHODS, "staticmethod", 0)..at(METHODS, "staticmethod", 0) + 12
        }
    );
    assert_eq!(l.range.start, at(METHODS, "@staticmethod", 0));
    assert_eq!(l.clause_line, 5);
    // The def itself is inside the class, not inside a function.
    assert!(l.function.is_none());
    assert_eq!(l.class.as_ref().unwrap().name, "Repo");
    // A later line of a multi-line decorator.
    let l = locate(&pm, 7).unwrap();
    assert!(matches!(l.clause, Clause::Decorator { index: 1, .. }));
    assert_eq!(l.clause_line, 6);
    assert_eq!(
        l.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["cache(\n        size=3,\n    )", "cache"]
    );
    match &l.exprs[0].kind {
        SubExprKind::Call { args, keywords, .. } => {
            assert_eq!(*args, 0);
            assert_eq!(keywords, &vec!["size".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    // The def line is the header: its own expressions only (none here).
    let l = locate(&pm, 9).unwrap();
    assert_eq!(
        (l.kind, l.clause.clone()),
        (StmtKind::FunctionDef, Clause::Header)
    );
    assert!(l.is_header());
    assert!(l.exprs.is_empty());
}

#[test]
fn one_line_compound_body() {
    let pm = parsed(METHODS);
    let l = locate(&pm, 11).unwrap();
    assert_eq!(l.kind, StmtKind::Continue);
    assert!(!l.starts_line);
    assert_eq!(l.indent, "            ");
    let h = l.header.as_ref().unwrap();
    assert_eq!((h.kind, h.clause.clone()), (StmtKind::If, Clause::Header));
    assert_eq!(slice(&pm, &h.range), "if name.startswith('.'): continue");
    assert_eq!(
        h.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["name.startswith('.')", "name.startswith", "name"]
    );
    // locate_all lists the header first, then the body statement.
    let all: Vec<StmtKind> = locate_all(&pm, 11).iter().map(|l| l.kind).collect();
    assert_eq!(all, vec![StmtKind::If, StmtKind::Continue]);
}

#[test]
fn caret_span_picks_the_statement_and_the_expression() {
    let src = "def f(x, y):\n    if x.a: return y.b.c\n";
    let pm = parsed(src);
    // CPython 3.11 prints carets under `y.b.c` (columns 19..24 of line 2, in characters).
    let span = pm.span_to_range(2, 19..24, ColumnUnit::Chars).unwrap();
    assert_eq!(&src[span.clone()], "y.b.c");
    let l = locate_span(&pm, 2, span.clone()).unwrap();
    assert_eq!(l.kind, StmtKind::Return);
    let e = l.expr_for_span(span).unwrap();
    assert!(matches!(&e.kind, SubExprKind::Attribute { name, .. } if name == "c"));
    // Carets under `x.a` pick the `if` header.
    let span = pm.span_to_range(2, 7..10, ColumnUnit::Chars).unwrap();
    let l = locate_span(&pm, 2, span.clone()).unwrap();
    assert_eq!((l.kind, l.clause.clone()), (StmtKind::If, Clause::Header));
    assert_eq!(slice(&pm, &l.expr_for_span(span).unwrap().range), "x.a");
    // A span inside `.b` (the name only) picks the smallest expression containing it.
    let b = at(src, ".b.", 0) + 1;
    let l = locate_span(&pm, 2, b..b + 1).unwrap();
    assert_eq!(slice(&pm, &l.expr_for_span(b..b + 1).unwrap().range), "y.b");
    assert_eq!(l.exprs_overlapping(b..b + 1).len(), 2);
}

#[test]
fn elif_else_except_finally() {
    let src = "\
def g(v):
    try:
        if v > 1:
            r = 1
        elif v.w < 0:  # neg
            r = 2
        else:
            r = 3
    except (KeyError, ValueError) as e:
        r = e.args
    else:
        r = 5
    finally:
        print(r)
";
    let pm = parsed(src);
    let l = locate(&pm, 5).unwrap();
    assert_eq!(l.kind, StmtKind::If);
    let test = at(src, "v.w < 0", 0)..at(src, "v.w < 0", 0) + 7;
    assert_eq!(l.clause, Clause::Elif { test });
    assert_eq!(l.range.start, at(src, "elif", 0));
    assert_eq!(l.clause_line, 5);
    // An elif counts at the depth of its `if`.
    assert_eq!(l.depth, 2);
    assert!(matches!(&l.exprs[0].kind, SubExprKind::Compare { ops, .. } if ops == &vec!["<"]));

    let l = locate(&pm, 7).unwrap();
    assert_eq!(
        (l.kind, l.clause.clone(), l.clause_line),
        (StmtKind::If, Clause::Else, 7)
    );
    assert_eq!(l.range.start, at(src, "elif", 0));

    let l = locate(&pm, 9).unwrap();
    assert_eq!(l.kind, StmtKind::Try);
    let handler = at(src, "except", 0)..at(src, "e.args", 0) + 6;
    // A parenthesized tuple's range includes its parentheses (other expressions' do not).
    let ty = at(src, "(KeyError, ValueError)", 0)..at(src, "(KeyError, ValueError)", 0) + 22;
    assert_eq!(
        l.clause,
        Clause::Except {
            index: 0,
            range: handler,
            type_range: Some(ty)
        }
    );
    assert_eq!(
        l.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["KeyError", "ValueError"]
    );
    assert_eq!(locate(&pm, 10).unwrap().kind, StmtKind::Assign);
    assert_eq!(locate(&pm, 11).unwrap().clause, Clause::Else);
    assert_eq!(locate(&pm, 11).unwrap().clause_line, 11);
    let l = locate(&pm, 13).unwrap();
    assert_eq!(
        (l.kind, l.clause.clone(), l.clause_line),
        (StmtKind::Try, Clause::Finally, 13)
    );
    let l = locate(&pm, 14).unwrap();
    assert_eq!(l.kind, StmtKind::Expr);
    assert_eq!(l.function.as_ref().unwrap().name, "g");
    assert!(!l.function.as_ref().unwrap().is_method);
    assert!(!l.in_loop);
}

#[test]
fn loops_else_and_nested_functions() {
    let src = "\
for i in range(3):
    def inner():
        return i
    while i:
        i -= 1
else:
    done = i / 0
";
    let pm = parsed(src);
    // A def inside a loop starts a new function: not in a loop there.
    let l = locate(&pm, 3).unwrap();
    assert!(!l.in_loop);
    assert_eq!(l.function.as_ref().unwrap().name, "inner");
    let l = locate(&pm, 5).unwrap();
    assert_eq!(l.kind, StmtKind::AugAssign);
    assert!(l.in_loop);
    assert!(l.function.is_none());
    match &l.exprs[0].kind {
        SubExprKind::AugAssign { op, target, value } => {
            assert_eq!(*op, "-=");
            assert_eq!((slice(&pm, target), slice(&pm, value)), ("i", "1"));
        }
        other => panic!("{other:?}"),
    }
    // The loop's else is not inside the loop.
    let l = locate(&pm, 7).unwrap();
    assert!(!l.in_loop);
    match &l.exprs[0].kind {
        SubExprKind::BinOp { op, left, right } => {
            assert_eq!(*op, "/");
            assert_eq!((slice(&pm, left), slice(&pm, right)), ("i", "0"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(locate(&pm, 6).unwrap().clause, Clause::Else);
    let l = locate(&pm, 1).unwrap();
    assert_eq!((l.kind, l.clause.clone()), (StmtKind::For, Clause::Header));
    assert_eq!(
        l.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["range(3)", "range"]
    );
}

#[test]
fn lambdas_comprehensions_keywords_with_and_match() {
    let src = "\
with open(p) as fh, lock:
    rows = [r.strip() for r in fh if r.ok]
    key = sorted(rows, key=lambda s: s.lower(), **opts)
match rows:
    case [first, *_] if first.x:
        pass
";
    let pm = parsed(src);
    let l = locate(&pm, 1).unwrap();
    assert_eq!((l.kind, l.clause.clone()), (StmtKind::With, Clause::Header));
    assert_eq!(
        l.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["open(p)", "open", "p", "lock"]
    );
    let l = locate(&pm, 2).unwrap();
    let got: Vec<(&str, bool)> = l
        .exprs
        .iter()
        .map(|e| (slice(&pm, &e.range), e.in_comprehension))
        .collect();
    assert_eq!(
        got,
        vec![
            ("r.strip()", true),
            ("r.strip", true),
            ("r", true),
            ("fh", true),
            ("r.ok", true),
            ("r", true)
        ]
    );
    let l = locate(&pm, 3).unwrap();
    let lower = l
        .exprs
        .iter()
        .find(|e| matches!(&e.kind, SubExprKind::Attribute { name, .. } if name == "lower"))
        .unwrap();
    assert!(lower.in_lambda);
    match &l.exprs[0].kind {
        SubExprKind::Call { args, keywords, .. } => {
            assert_eq!(*args, 1);
            assert_eq!(keywords, &vec!["key".to_string(), "**".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    let l = locate(&pm, 5).unwrap();
    assert_eq!(l.kind, StmtKind::Match);
    let pattern = at(src, "[first", 0)..at(src, " if first", 0);
    let guard = at(src, "first.x", 0)..at(src, "first.x", 0) + 7;
    assert_eq!(
        l.clause,
        Clause::Case {
            index: 0,
            pattern,
            guard: Some(guard)
        }
    );
    assert_eq!(
        l.exprs
            .iter()
            .map(|e| slice(&pm, &e.range))
            .collect::<Vec<_>>(),
        vec!["first.x", "first"]
    );
    assert_eq!(locate(&pm, 4).unwrap().clause, Clause::Header);
}

#[test]
fn semicolons_comments_and_out_of_range() {
    let src = "a = 1; b = c.d\ndef f():\n    # only a comment\n\n    return 1\n";
    let pm = parsed(src);
    let all = locate_all(&pm, 1);
    assert_eq!(all.len(), 2);
    let l = locate(&pm, 1).unwrap();
    assert_eq!(slice(&pm, &l.range), "a = 1");
    assert!(l.starts_line);
    assert!(!all[1].starts_line);
    let span = at(src, "c.d", 0)..at(src, "c.d", 0) + 3;
    assert_eq!(
        slice(&pm, &locate_span(&pm, 1, span).unwrap().range),
        "b = c.d"
    );
    let l = locate(&pm, 3).unwrap();
    assert_eq!(
        (l.kind, l.clause.clone(), l.clause_line),
        (StmtKind::FunctionDef, Clause::Inside, 3)
    );
    assert!(locate(&pm, 6).is_none());
    assert!(locate(&pm, 0).is_none());
    assert!(locate(&pm, 99).is_none());
}

#[test]
fn crlf_tabs_and_bom_offsets() {
    let bytes = b"\xEF\xBB\xBFdef f(x):\r\n\tif x:\r\n\t\treturn x.y  # c\r\n";
    let sf = SourceFile::from_bytes("w.py", bytes.to_vec()).unwrap();
    let pm = syntax::parse(&sf).unwrap();
    let l = locate(&pm, 3).unwrap();
    assert_eq!(l.indent, "\t\t");
    assert_eq!(&sf.text()[l.range.clone()], "return x.y");
    assert_eq!(&sf.text()[l.line_range.clone()], "\t\treturn x.y  # c");
    // Text offsets exclude the BOM.
    assert_eq!(l.range.start, sf.text().find("return").unwrap());
    assert_eq!(sf.indent_unit(), "\t");
}

#[test]
fn located_snapshot() {
    let src = "class A:\n    def m(self, d):\n        return d['k'].get(self.n, -1) + len(d)\n";
    let pm = parsed(src);
    let l: Located = locate(&pm, 3).unwrap();
    insta::assert_json_snapshot!("located_return_in_method", l);
}
