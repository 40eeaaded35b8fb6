//! `edit`: applying byte-range edits, fixes that must re-parse, unified diffs.

use proptest::prelude::*;
use selfdebug::edit::{self, Confidence, Edit, EditError, Fix, FixError};
use selfdebug::source::SourceFile;

#[test]
#[allow(clippy::reversed_empty_ranges)] // a backwards range is one of the cases
fn overlapping_edits_are_refused() {
    let t = "0123456789";
    let err = edit::apply(
        t,
        &[
            Edit::replacement(0..8, "a"),
            Edit::insertion(9, "b"),
            Edit::replacement(7..9, "c"),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err,
        EditError::Overlap {
            first: 0,
            second: 2,
            first_range: 0..8,
            second_range: 7..9
        }
    );
    assert_eq!(err.to_string(), "edits 0 (0..8) and 2 (7..9) overlap");
    // An insertion strictly inside a replacement overlaps it.
    assert!(matches!(
        edit::apply(t, &[Edit::replacement(2..5, "x"), Edit::insertion(3, "y")]),
        Err(EditError::Overlap { .. })
    ));
    // Touching is fine, and insertions at one point keep their order.
    assert_eq!(
        edit::apply(
            t,
            &[
                Edit::replacement(2..5, "x"),
                Edit::insertion(5, "A"),
                Edit::insertion(5, "B"),
                Edit::deletion(5..6)
            ]
        )
        .unwrap(),
        "01xAB6789"
    );
    let backwards = Edit::replacement(5..2, "x");
    assert_eq!(
        edit::apply(t, &[backwards]),
        Err(EditError::OutOfBounds {
            range: 5..2,
            len: 10
        })
    );
}

#[test]
fn a_fix_that_does_not_parse_is_rejected() {
    let sf = SourceFile::from_bytes("m.py", b"def f(x):\n    return x.y\n".to_vec()).unwrap();
    let bad = Fix::new(
        "break it",
        "test",
        Confidence::Low,
        vec![Edit::replacement(20..24, "return (")],
    );
    let err = bad.apply_to(&sf).unwrap_err();
    assert!(matches!(err, FixError::Reparse(_)));
    assert!(err
        .to_string()
        .starts_with("fix rejected, the result does not parse: m.py:"));
    let good = Fix::new(
        "guard None",
        "none-guard",
        Confidence::High,
        vec![
            edit::insert_line_before(&sf, 2, "    ", "if x is None:\n        return None").unwrap(),
        ],
    );
    assert_eq!(
        good.apply_to(&sf).unwrap(),
        b"def f(x):\n    if x is None:\n        return None\n    return x.y\n".to_vec()
    );
    assert_eq!(
        serde_json::to_value(&good).unwrap()["confidence"],
        serde_json::json!("high")
    );
    assert!(Confidence::Low < Confidence::High);
}

#[test]
fn diff_of_crlf_file_applies_with_git() {
    let old = "a = 1\r\nb = 2\r\nc = 3\r\nd = 4\r\ne = 5\r\nf = 6\r\ng = 7\r\nh = 8\r\n";
    let new = old.replace("e = 5", "e = 50");
    let d = edit::unified_diff("pkg/m.py", old, &new);
    // Lines keep their `\r`, as `git diff` writes them (insta's snapshot normalizes them away).
    assert!(d.contains("-e = 5\r\n+e = 50\r\n"), "{d:?}");
    insta::assert_snapshot!("diff_crlf", d);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/m.py"), old).unwrap();
    std::fs::write(dir.path().join("fix.patch"), &d).unwrap();
    let out = std::process::Command::new("git")
        .args(["apply", "fix.patch"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/m.py")).unwrap(),
        new
    );
    assert_eq!(edit::unified_diff("x", old, old), "");
    let d = edit::unified_diff("x.py", "a\n", "a\nb");
    assert_eq!(
        d,
        "--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n"
    );
}

fn text_and_edits() -> impl Strategy<Value = (String, Vec<(usize, usize, String)>)> {
    "[a-c\\n é]{0,40}".prop_flat_map(|text| {
        let n = text.len();
        let edits = proptest::collection::vec((0..=n, 0..=4usize, "[x-z\\n]{0,3}"), 0..6);
        (Just(text), edits)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bytes_outside_edits_are_identical((text, raw) in text_and_edits()) {
        // Make the raw edits valid: char boundaries, no overlap (keep the ones that fit).
        let mut edits: Vec<Edit> = Vec::new();
        let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
        for (start, len, content) in raw {
            let mut s = start.min(text.len());
            while !text.is_char_boundary(s) { s -= 1; }
            let mut e = (s + len).min(text.len());
            while !text.is_char_boundary(e) { e += 1; }
            let clash = taken.iter().any(|r| s < r.end && r.start < e || (s == e && r.start < s && s < r.end) || (r.start == r.end && s < r.start && r.start < e));
            if clash { continue; }
            taken.push(s..e);
            edits.push(Edit::replacement(s..e, content));
        }
        let out = edit::apply(&text, &edits).unwrap();
        // Walk the original in order: every gap between edits appears verbatim, in order.
        let mut sorted: Vec<&Edit> = edits.iter().collect();
        sorted.sort_by_key(|e| (e.range.start, e.range.end > e.range.start));
        let mut expected = String::new();
        let mut pos = 0;
        for e in &sorted {
            expected.push_str(&text[pos..e.range.start]);
            expected.push_str(&e.content);
            pos = e.range.end;
        }
        expected.push_str(&text[pos..]);
        prop_assert_eq!(out, expected);
    }
}
