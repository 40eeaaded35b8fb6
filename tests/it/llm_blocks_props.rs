//! The SEARCH/REPLACE reader never panics, whatever a model answers, and what it applies is
//! exactly the block: a SEARCH cut out of a file (re-indented, CRLF or not) is found, and the
//! edit replaces just those lines, with the file's own newline.

use proptest::prelude::*;
use selfdebug::edit::apply;
use selfdebug::llm::blocks::{parse, to_edit, Block};

/// Lines that steer the reader into its every state, to be shuffled and cut at random.
const PIECES: &[&str] = &[
    "<<<<<<< SEARCH",
    "<<<<< SEARCH",
    "<<<<<<<<<<<< SEARCH",
    "=======",
    "=====",
    ">>>>>>> REPLACE",
    ">>>>>>>> REPLACE",
    "```python",
    "```",
    "src/shop.py",
    "# src/shop.py",
    "**src/shop.py**",
    "`src/shop.py`:",
    "",
    "    return s - discount",
    "\treturn x",
    "def f(a):",
    "é ü ✓ 🙂",
    "\r",
    "Here is the fix:",
];

fn answer() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(PIECES).prop_map(str::to_string),
            ".{0,12}",
        ],
        0..40,
    )
    .prop_flat_map(|lines| {
        let sep = prop::sample::select(vec!["\n", "\r\n"]);
        (Just(lines), sep)
    })
    .prop_map(|(lines, sep)| lines.join(sep))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn reading_any_answer_never_panics(a in answer()) {
        let parsed = parse(&a);
        for b in &parsed.blocks {
            prop_assert!(!b.path.is_empty());
            prop_assert!(b.search.is_empty() || b.search.ends_with('\n'));
        }
    }

    #[test]
    fn applying_any_block_to_any_text_never_panics(
        text in answer(), search in answer(), replace in answer()
    ) {
        let b = Block { path: "m.py".into(), search, replace };
        if let Ok(e) = to_edit(&text, &b) {
            prop_assert!(e.range.end <= text.len());
            prop_assert!(apply(&text, &[e]).is_ok());
        }
    }

    #[test]
    fn a_search_cut_from_the_file_replaces_exactly_those_lines(
        lines in prop::collection::vec("[a-z =()+]{1,10}", 1..12),
        indent in prop::sample::select(vec!["", "    ", "\t"]),
        crlf in any::<bool>(),
        dedent in any::<bool>(),
        start in 0usize..12,
        len in 1usize..4,
        new in prop::collection::vec("[a-z][a-z =()+]{0,9}", 0..4),
    ) {
        // Unique lines, so the first match is the one cut out.
        let lines: Vec<String> = lines.iter().enumerate().map(|(i, l)| format!("{l}{i}")).collect();
        let nl = if crlf { "\r\n" } else { "\n" };
        let text: String = lines.iter().map(|l| format!("{indent}{l}{nl}")).collect();
        let start = start % lines.len();
        let end = (start + len).min(lines.len());
        // The model may drop the block's indentation: the replacement then gets it back.
        let shown = if dedent { "" } else { indent };
        let search: String = lines[start..end].iter().map(|l| format!("{shown}{l}\n")).collect();
        let replace: String = new.iter().map(|l| format!("{shown}{l}\n")).collect();
        let b = Block { path: "m.py".into(), search, replace };
        let e = to_edit(&text, &b).unwrap();
        let got = apply(&text, &[e]).unwrap();
        let mut want: Vec<String> = lines[..start].to_vec();
        want.extend(new.iter().cloned());
        want.extend(lines[end..].iter().cloned());
        let want: String = want.iter().map(|l| format!("{indent}{l}{nl}")).collect();
        prop_assert_eq!(got, want);
    }
}
