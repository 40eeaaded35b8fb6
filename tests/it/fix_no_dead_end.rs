//! A rule that matches but whose every transform declines is no dead end: the failure goes on
//! to the search (the fixed case is `fixtures/bugs/search_after_declined_attribute_method`), and
//! when nothing fixes it the reason names each transform that declined and why.

use crate::support;

use support::project::{assert_same, json, project, snapshot};

#[test]
fn the_reason_names_the_transforms_that_declined_and_the_search_that_followed() {
    let case = support::fixtures().join("bugs/search_after_declined_attribute_method/project");
    let read = |rel: &str| std::fs::read_to_string(case.join(rel)).unwrap();
    let p = project(&[
        ("pytest.ini", &read("pytest.ini")),
        ("catalog.py", &read("catalog.py")),
        ("tests/test_catalog.py", &read("tests/test_catalog.py")),
        // Without the family that holds the fix, the search tries the rest and gives up.
        (
            "pyproject.toml",
            "[tool.selfdebug]\nignore = [\"search-variable\"]\n",
        ),
    ]);
    let before = snapshot(&p.root);
    let out = p.run(&["fix", "--json", "--search-time", "900"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_same(&before, &snapshot(&p.root));
    let v = json(&out);
    let tried = v["attempt_records"].as_array().unwrap();
    assert!(!tried.is_empty(), "{v}");
    assert!(
        tried
            .iter()
            .all(|a| a["rule"].as_str().unwrap().starts_with("search-")),
        "{v}"
    );
    assert_eq!(
        v["failures"][0]["reason"],
        format!(
            "AttributeError: 'int' object has no attribute 'label'; the matching rules proposed \
             nothing that applies here (rule `attr-did-you-mean` (transform `attr_rename`): \
             proposed no edit at catalog.py:21; rule `attr-nearest` (transform `attr_rename`): \
             proposed no edit at catalog.py:21); the search tried all {} small edits at the \
             suspicious statements and none passed (8 more left out before any run: they copy \
             the failing test's expected value into the code)",
            tried.len()
        )
    );
}
