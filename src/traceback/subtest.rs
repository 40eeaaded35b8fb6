//! Subtest ids. pytest prints a failing unittest `subTest` (and a pytest-subtests `subtests.test`)
//! as its owning test's node id, a space and the subtest's description: `tests/test_x.py::
//! PathSpecTest::test_05_match [simple (unopt)]` or `...::test_pickle (proto=2)`. pytest cannot
//! select such an id; runs select the owner, and the subtest's own outcome is read from the
//! failures that run reports.

/// The owning test's node id and the subtest's description, when `id` names a subtest.
///
/// A node id has no space outside its parametrization brackets (`test_f[a b]` is one test), so
/// the first space at bracket depth 0 followed by `[` or `(` starts the description; `::`,
/// brackets and unicode after it belong to the description.
pub fn split(id: &str) -> (&str, Option<&str>) {
    let mut depth = 0usize;
    for (i, c) in id.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => {
                let rest = &id[i + 1..];
                if rest.starts_with('[') || rest.starts_with('(') {
                    return (&id[..i], Some(rest));
                }
            }
            _ => {}
        }
    }
    (id, None)
}

/// The node id pytest can select for `id`: the owner of a subtest, else `id` itself.
pub fn owner(id: &str) -> &str {
    split(id).0
}

/// Whether `id` names a subtest.
pub fn is_subtest(id: &str) -> bool {
    split(id).1.is_some()
}

/// The ids to pass to pytest for `ids`: each subtest replaced by its owner, each owner once,
/// in first-seen order.
pub fn selectable(ids: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let o = owner(id);
        if !out.iter().any(|x| x == o) {
            out.push(o.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_subtest_ids() {
        let cases = [
            (
                "tests/test_x.py::PathSpecTest::test_05_match [simple (unopt)]",
                "tests/test_x.py::PathSpecTest::test_05_match",
                Some("[simple (unopt)]"),
            ),
            (
                "tests/test_p.py::T::test_class_access_pickle (proto=2)",
                "tests/test_p.py::T::test_class_access_pickle",
                Some("(proto=2)"),
            ),
            (
                "tests/test_x.py::T::test_m [ü::p]",
                "tests/test_x.py::T::test_m",
                Some("[ü::p]"),
            ),
            // A parametrized test: brackets attached, spaces and `::` inside them.
            (
                "tests/test_x.py::test_f[a b::c]",
                "tests/test_x.py::test_f[a b::c]",
                None,
            ),
            (
                "tests/test_x.py::test_f[a b] [sub] (x=1)",
                "tests/test_x.py::test_f[a b]",
                Some("[sub] (x=1)"),
            ),
            (
                "tests/test_x.py::test_plain",
                "tests/test_x.py::test_plain",
                None,
            ),
            ("", "", None),
            ("tests/test x.py::test_a", "tests/test x.py::test_a", None),
        ];
        for (id, o, sub) in cases {
            assert_eq!(split(id), (o, sub), "{id}");
        }
        assert_eq!(
            selectable(&[
                "t.py::T::m [a]".to_string(),
                "t.py::T::m (b)".to_string(),
                "t.py::u".to_string(),
            ]),
            ["t.py::T::m", "t.py::u"]
        );
    }
}
