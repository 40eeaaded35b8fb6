//! `syntax::parse`: errors, masking of newer syntax, pathological nesting, never panicking.

use std::path::Path;

use proptest::prelude::*;
use selfdebug::source::SourceFile;
use selfdebug::syntax::{self, scan, Mask, MaskKind, StmtKind, SubExprKind, SyntaxErrorKind};

fn parse_str(src: &str) -> Result<syntax::ParsedModule, syntax::SyntaxError> {
    syntax::parse_text(Path::new("p.py"), src)
}

#[test]
fn syntax_error_is_one_line_with_position() {
    let err = parse_str("x = 1\ndef f(:\n    pass\n").unwrap_err();
    assert_eq!(err.kind, SyntaxErrorKind::Invalid);
    assert_eq!((err.line, err.column, err.offset), (2, 7, 12));
    assert_eq!(
        err.to_string(),
        "p.py:2:7: invalid syntax. Got unexpected token ':'"
    );
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn plain_file_needs_no_masks() {
    let pm = parse_str("x = f'{a!r:>{w}}'\n").unwrap();
    assert!(pm.masks().is_empty());
}

const PEP701: &str = "\
def greet(user):
    label = f\"{user[\"name\"]}: {'\\n'.join(user['tags'])}\"
    block = f'{\", \".join([
        user.age,  # a comment inside the field
    ])}'
    return label.upper()


def total(items):
    return sum(i.price for i in items) / len(items)
";

#[test]
fn pep701_fstrings_are_masked_and_offsets_stay_true() {
    let pm = parse_str(PEP701).unwrap();
    let label = PEP701.find("f\"{user").unwrap();
    let label_end = PEP701.find("\"\n    block").unwrap() + 1;
    let block = PEP701.find("f'{").unwrap();
    let block_end = PEP701.find("}'\n").unwrap() + 2;
    assert_eq!(
        pm.masks(),
        &[
            Mask {
                kind: MaskKind::FString,
                range: label..label_end
            },
            Mask {
                kind: MaskKind::FString,
                range: block..block_end
            }
        ]
    );
    // The text kept is the original, not the placeholder.
    assert_eq!(pm.text(), PEP701);
    // Statements after the masked ones have true offsets and lines.
    let l = syntax::locate(&pm, 10).unwrap();
    assert_eq!(l.kind, StmtKind::Return);
    let start = PEP701.find("return sum").unwrap();
    assert_eq!(l.range, start..PEP701.trim_end().len());
    assert_eq!(l.function.as_ref().unwrap().name, "total");
    let div = l
        .exprs
        .iter()
        .find(|e| matches!(e.kind, SubExprKind::BinOp { op: "/", .. }))
        .unwrap();
    assert_eq!(
        &PEP701[div.range.clone()],
        "sum(i.price for i in items) / len(items)"
    );
    let l = syntax::locate(&pm, 6).unwrap();
    assert_eq!(&PEP701[l.range.clone()], "return label.upper()");
    // A line inside the multi-line f-string locates its assignment.
    let l = syntax::locate(&pm, 4).unwrap();
    assert_eq!(
        (l.kind, l.first_line, l.last_line),
        (StmtKind::Assign, 3, 5)
    );
}

#[test]
fn type_param_defaults_are_masked() {
    let src = "def first[T = int](xs: list[T]) -> T:\n    return xs[0]\n\nclass Box[T = str]:\n    pass\n\ntype Pair[K = int] = tuple[K, K]\nv = first([1]).real\n";
    let pm = parse_str(src).unwrap();
    let kinds: Vec<(MaskKind, &str)> = pm
        .masks()
        .iter()
        .map(|m| (m.kind, &src[m.range.clone()]))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (MaskKind::TypeParamDefault, "= int"),
            (MaskKind::TypeParamDefault, "= str"),
            (MaskKind::TypeParamDefault, "= int")
        ]
    );
    let l = syntax::locate(&pm, 8).unwrap();
    assert_eq!(&src[l.range.clone()], "v = first([1]).real");
    let l = syntax::locate(&pm, 2).unwrap();
    assert_eq!(l.function.as_ref().unwrap().name, "first");
}

#[test]
fn masking_does_not_hide_real_errors() {
    let src = "s = f\"{x[\"k\"]}\"\ndef broken(:\n";
    let err = parse_str(src).unwrap_err();
    assert_eq!(
        (err.kind, err.line, err.column),
        (SyntaxErrorKind::Invalid, 2, 12)
    );
}

#[test]
fn deep_nesting_is_refused_cleanly() {
    let parens = format!("x = {}1{}\n", "(".repeat(10_000), ")".repeat(10_000));
    let err = parse_str(&parens).unwrap_err();
    assert_eq!(err.kind, SyntaxErrorKind::TooDeep);
    assert_eq!((err.line, err.column), (1, 205));
    assert_eq!(
        err.to_string(),
        "p.py:1:205: too many nested brackets (10000 levels; the limit is 200)"
    );
    let unary = format!("y = 2\nx = {}1\n", "-".repeat(10_000));
    let err = parse_str(&unary).unwrap_err();
    assert_eq!(err.kind, SyntaxErrorKind::TooDeep);
    assert_eq!(err.line, 2);
    assert_eq!(
        err.message,
        "expression nested too deeply (10002 levels; the limit is 1000)"
    );
    let chain = format!("x = a{}\n", " + a".repeat(20_000));
    assert_eq!(
        parse_str(&chain).unwrap_err().kind,
        SyntaxErrorKind::TooDeep
    );
    // Just under the limits parses, and the module can be walked and dropped on this thread.
    let ok = format!("x = {}1{}\n", "(".repeat(200), ")".repeat(200));
    assert!(parse_str(&ok).is_ok());
    let ok = format!("x = {}a.b\n", "-".repeat(990));
    let pm = parse_str(&ok).unwrap();
    let l = syntax::locate(&pm, 1).unwrap();
    assert_eq!(l.exprs.len(), 992);
    drop(pm);
}

#[test]
fn parse_source_file_uses_its_path() {
    let sf = SourceFile::from_bytes("src/app.py", b"def f(\n".to_vec()).unwrap();
    let err = syntax::parse(&sf).unwrap_err();
    assert!(err.to_string().starts_with("src/app.py:"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn scanner_and_parser_never_panic(src in "(?s).{0,200}") {
        let sc = scan::scan(&src);
        for t in &sc.tokens {
            prop_assert!(t.start < t.end && t.end <= src.len());
        }
        let _ = parse_str(&src);
    }

    #[test]
    fn python_like_input_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("f'"), Just("f\""), Just("'''"), Just("{"), Just("}"), Just("("), Just(")"),
                Just("["), Just("]"), Just("\n"), Just("\r\n"), Just("\\"), Just("#"), Just(":"),
                Just("="), Just("def f[T"), Just("x"), Just(" "), Just("    "), Just("if x:"),
                Just("é"), Just("\"")
            ],
            0..60,
        )
    ) {
        let src: String = parts.concat();
        let sc = scan::scan(&src);
        for t in &sc.tokens {
            prop_assert!(t.start < t.end && t.end <= src.len());
        }
        if let Ok(pm) = parse_str(&src) {
            for line in 1..=pm.line_starts().len() {
                let _ = syntax::locate(&pm, line);
            }
        }
    }
}
