//! `source::SourceFile`: decoding, layout facts, exact re-encoding.

use selfdebug::edit::{self, Confidence, Edit, Fix};
use selfdebug::source::{Encoding, Newline, NewlineStyle, SourceError, SourceFile};
use selfdebug::syntax;

fn sf(bytes: &[u8]) -> SourceFile {
    SourceFile::from_bytes("pkg/m.py", bytes.to_vec()).unwrap()
}

#[test]
fn crlf_file_facts_and_identity() {
    let bytes = b"def f(x):\r\n  if x:\r\n    return 1\r\n";
    let f = sf(bytes);
    assert_eq!(f.newline_style(), NewlineStyle::CrLf);
    assert_eq!(f.newline(), "\r\n");
    assert_eq!(f.indent_unit(), "  ");
    assert_eq!(f.line_count(), 3);
    assert_eq!(f.line_text(2), Some("  if x:"));
    assert_eq!(f.line_start(2), Some(11));
    assert_eq!(f.line_end(2), Some(18));
    assert_eq!(f.indentation_of_line(3), Some("    "));
    assert_eq!(f.line_col(13), (2, 2));
    assert_eq!(f.encode(f.text()).unwrap(), bytes.to_vec());
}

#[test]
fn read_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.py");
    std::fs::write(&p, b"x = 1\n").unwrap();
    let f = SourceFile::read(&p).unwrap();
    assert_eq!(f.text(), "x = 1\n");
    assert_eq!(f.path(), p.as_path());
    let missing = dir.path().join("nope.py");
    let err = SourceFile::read(&missing).unwrap_err();
    assert!(matches!(err, SourceError::Io { .. }));
    assert!(err
        .to_string()
        .starts_with(&format!("cannot read {}: ", missing.display())));
}

#[test]
fn bom_is_kept_and_excluded_from_text() {
    let bytes = b"\xEF\xBB\xBF# coding: utf-8\nx = 'caf\xC3\xA9'\n";
    let f = sf(bytes);
    assert!(f.has_bom());
    assert_eq!(f.encoding(), Encoding::Utf8);
    assert!(f.text().starts_with("# coding"));
    assert_eq!(f.encode(f.text()).unwrap(), bytes.to_vec());
    let new = f.text().replace("x =", "y =");
    let out = f.encode(&new).unwrap();
    assert_eq!(&out[..3], b"\xEF\xBB\xBF");
    assert_eq!(&out[3..], new.as_bytes());
}

#[test]
fn latin1_edit_keeps_every_other_byte() {
    // "é" is the single byte 0xE9 on disk.
    let bytes: Vec<u8> =
        b"# -*- coding: latin-1 -*-\nname = 'Ren\xE9'\ndef f(d):\n    return d.get('k')\n".to_vec();
    let f = SourceFile::from_bytes("l.py", bytes.clone()).unwrap();
    assert_eq!(f.encoding(), Encoding::Latin1);
    assert!(f.text().contains("'René'"));
    // Text offsets are past the 2-byte "é": locate in the text, edit the text.
    let pm = syntax::parse(&f).unwrap();
    let l = syntax::locate(&pm, 4).unwrap();
    let get = l
        .exprs
        .iter()
        .find(|e| matches!(&e.kind, syntax::SubExprKind::Attribute { name, .. } if name == "get"))
        .unwrap();
    let syntax::SubExprKind::Attribute { name_range, .. } = &get.kind else {
        unreachable!()
    };
    let fix = Fix::new(
        "use pop",
        "test",
        Confidence::High,
        vec![Edit::replacement(name_range.clone(), "pop")],
    );
    let out = fix.apply_to(&f).unwrap();
    // Only the three bytes of the name changed; the file offset is one less than the text offset.
    let file_off = name_range.start - 1;
    assert_eq!(&out[..file_off], &bytes[..file_off]);
    assert_eq!(&out[file_off..file_off + 3], b"pop");
    assert_eq!(&out[file_off + 3..], &bytes[file_off + 3..]);
    assert_eq!(out.iter().filter(|&&b| b == 0xE9).count(), 1);
    assert_eq!(out.len(), bytes.len());
    // A character latin-1 cannot hold is refused with a clear message.
    let err = f.encode("x = '€'\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot encode l.py: '€' (U+20AC) at line 1 (text byte 5) is not representable in iso-8859-1"
    );
}

#[test]
fn decoding_errors_name_file_and_position() {
    let err = SourceFile::from_bytes("bad.py", b"x = 1\ny = '\xFF'\n".to_vec()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot decode bad.py: invalid utf-8 at byte 11 (line 2)"
    );
    let err =
        SourceFile::from_bytes("w.py", b"# coding: cp1252\nx = '\x80'\n".to_vec()).unwrap_err();
    assert_eq!(
        err,
        SourceError::UnsupportedEncoding {
            path: "w.py".into(),
            name: "cp1252".into(),
            line: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "cannot decode w.py: unsupported encoding \"cp1252\" in coding cookie on line 1 \
         (supported: utf-8, latin-1/iso-8859-1, ascii)"
    );
    let err =
        SourceFile::from_bytes("b.py", b"\xEF\xBB\xBF# coding: latin-1\n".to_vec()).unwrap_err();
    assert!(matches!(err, SourceError::BomConflict { .. }));
    let err =
        SourceFile::from_bytes("a.py", b"# coding: ascii\nx = '\xC3\xA9'\n".to_vec()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot decode a.py: invalid ascii at byte 21 (line 2)"
    );
}

#[test]
fn cookie_on_line_two_only_after_a_comment() {
    let f = sf(b"#!/usr/bin/python\n# vim: set fileencoding=iso-8859-1 :\nx = '\xE9'\n");
    assert_eq!(f.encoding(), Encoding::Latin1);
    // On line 2 after code the cookie does not count: the bytes must be UTF-8.
    let err = SourceFile::from_bytes("c.py", b"x = 1\n# coding: latin-1\ny = '\xE9'\n".to_vec());
    assert!(matches!(
        err,
        Err(SourceError::Undecodable {
            offset: 29,
            line: 3,
            ..
        })
    ));
}

#[test]
fn newline_styles_and_indent_units() {
    assert_eq!(sf(b"a\rb\r").newline_style(), NewlineStyle::Cr);
    assert_eq!(sf(b"a").newline_style(), NewlineStyle::Lf);
    assert_eq!(
        sf(b"a\r\nb\r\nc\n").newline_style(),
        NewlineStyle::Mixed {
            dominant: Newline::CrLf
        }
    );
    assert_eq!(sf(b"if x:\n\ty\n").indent_unit(), "\t");
    assert_eq!(sf(b"x = 1\n").indent_unit(), "    ");
    // Continuation lines do not vote when block openers exist.
    assert_eq!(
        sf(b"def f():\n  return g(1,\n         2)\nclass C:\n  pass\n").indent_unit(),
        "  "
    );
}

#[test]
fn insert_lines_use_the_file_newline() {
    let f = sf(b"def f(x):\r\n    return x.y\r\n");
    let e = edit::insert_line_before(&f, 2, "    ", "if x is None: return None").unwrap();
    assert_eq!(e, Edit::insertion(11, "    if x is None: return None\r\n"));
    let new = edit::apply(f.text(), &[e]).unwrap();
    assert_eq!(
        new,
        "def f(x):\r\n    if x is None: return None\r\n    return x.y\r\n"
    );
    // Appending to a file without a final newline adds one first.
    let g = sf(b"x = 1");
    let e = edit::insert_line_before(&g, 2, "", "y = 2").unwrap();
    assert_eq!(edit::apply(g.text(), &[e]).unwrap(), "x = 1\ny = 2\n");
    let e = edit::insert_line_after(&f, 2, "", "z = 3").unwrap();
    assert_eq!(e, Edit::insertion(f.text().len(), "z = 3\r\n"));
    assert_eq!(edit::insert_line_before(&f, 9, "", "q"), None);
}
