//! Subtest ids end to end (real pytest): a failing unittest `subTest` is printed as
//! `path::Class::test [label]`, which pytest cannot select. The candidate's targeted run selects
//! the owning test, and its proof is the subtest's own outcome: a sibling subtest that still
//! fails (for another reason, in the baseline too: not the same crash site, so not the same
//! cause, see docs/proof.md) does not reject a right fix.

use crate::support;

use support::project::{json, project};

const MODULE: &str = r#"def match(pattern, path, options=None):
    if options.get("icase"):
        return path.lower() == pattern.lower()
    return path == pattern.lstrip("/")
"#;

const TESTS: &str = r#"import unittest

from pathmatch import match


class PathSpecTest(unittest.TestCase):
    def test_05_match(self):
        cases = [("simple (unopt)", "a", "a", None), ("anchored ü::root", "/b", "b", None), ("neg [!x]", "!k", "o", {})]
        for label, pattern, path, options in cases:
            with self.subTest(label):
                self.assertTrue(match(pattern, path, options))

    def test_icase(self):
        self.assertTrue(match("A", "a", {"icase": True}))
"#;

#[test]
fn a_subtest_is_proven_on_its_own_outcome_while_a_sibling_still_fails() {
    let p = project(&[
        (
            "pytest.ini",
            "[pytest]\npythonpath = .\ntestpaths = tests\n",
        ),
        ("pathmatch.py", MODULE),
        ("tests/test_pathmatch.py", TESTS),
    ]);
    let out = p.run(&["fix", "--json", "--search-time", "2"]);
    let v = json(&out);
    // `partial`: the negated case is wrong output no edit here fixes.
    support::assert_exit(&out, 3);
    assert_eq!(v["final_status"], "partial");
    let id = "tests/test_pathmatch.py::PathSpecTest::test_05_match";
    let statuses: Vec<(String, String)> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["test"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            (format!("{id} [simple (unopt)]"), "fixed".to_string()),
            (
                format!("{id} [anchored ü::root]"),
                "fixed_by_another_patch".to_string()
            ),
            (format!("{id} [neg [!x]]"), "no_candidate".to_string()),
        ]
    );
    assert_eq!(
        p.read("pathmatch.py"),
        MODULE.replace("if options.get(", "if (options or {}).get(")
    );
}
