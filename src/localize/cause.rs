//! Failing tests with one cause: wrong-output failures all "crash" in their own test's `assert`,
//! so crash-site groups never join them. Their spectrum does: two failing tests whose most
//! suspicious lines (each ranked as if it were the only failing test) overlap point at one
//! region, and are searched once, together (see `session/sources/cause.rs`).

use std::collections::BTreeSet;

use super::{rank, Spectrum};

/// Lines of one test's own ranking that count as its suspicious region: the best few, ties at
/// the last place included (a function of three statements all scored alike stays whole).
pub const TOP_LINES: usize = 3;

/// The failing tests of `test`'s cause, `test` first, then the others in the spectrum's
/// order: every failing test (among those `still_failing` accepts) whose top lines (see
/// [`TOP_LINES`]) share a line with `test`'s.
pub fn members(
    spectrum: &Spectrum,
    test: &str,
    still_failing: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mine = top_lines(spectrum, test);
    let mut out = vec![test.to_string()];
    if mine.is_empty() {
        return out;
    }
    for (id, t) in &spectrum.tests {
        if !t.failed || id == test || !still_failing(id) {
            continue;
        }
        if !top_lines(spectrum, id).is_disjoint(&mine) {
            out.push(id.clone());
        }
    }
    out
}

/// `test`'s top lines, ranked by Ochiai over the passing tests and `test` alone.
pub fn top_lines(spectrum: &Spectrum, test: &str) -> BTreeSet<(String, u32)> {
    let alone = restrict(spectrum, &[test.to_string()]);
    let ranked = rank(&alone, |_, _| true);
    let Some(last) = ranked.get(TOP_LINES.min(ranked.len()).saturating_sub(1)) else {
        return BTreeSet::new();
    };
    let floor = last.score;
    ranked
        .iter()
        .take_while(|s| s.score >= floor)
        .map(|s| (s.file.clone(), s.line))
        .collect()
}

/// The spectrum with only `failing` as failing tests: the other failing tests (another cause's,
/// or ones a lead already fixed) are left out, neither failing nor passing evidence.
pub fn restrict(spectrum: &Spectrum, failing: &[String]) -> Spectrum {
    Spectrum {
        tests: spectrum
            .tests
            .iter()
            .filter(|(id, t)| !t.failed || failing.contains(id))
            .map(|(id, t)| (id.clone(), t.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spectrum(tests: &[(&str, bool, &[u32])]) -> Spectrum {
        Spectrum::of_m_py(tests)
    }

    #[test]
    fn tests_sharing_a_suspicious_line_are_one_cause() {
        // Line 1 is a constant every function reads; 10, 20, 30 are the functions; 40..42 is an
        // unrelated function with its own failing test.
        let sp = spectrum(&[
            ("a::fail", true, &[1, 10]),
            ("a::ok", false, &[1, 10]),
            ("b::fail", true, &[1, 20]),
            ("b::ok", false, &[1, 20]),
            ("c::fail", true, &[1, 30]),
            ("d::fail", true, &[40, 41, 42]),
            ("d::ok", false, &[40, 41]),
        ]);
        assert_eq!(
            members(&sp, "a::fail", |_| true),
            vec!["a::fail", "b::fail", "c::fail"]
        );
        assert_eq!(members(&sp, "d::fail", |_| true), vec!["d::fail"]);
        // A test no longer failing is not searched for.
        assert_eq!(
            members(&sp, "a::fail", |t| t != "b::fail"),
            vec!["a::fail", "c::fail"]
        );
        let only_a = restrict(&sp, &["a::fail".to_string()]);
        assert_eq!(only_a.failing(), BTreeSet::from(["a::fail"]));
        assert_eq!(only_a.tests.len(), 4);
        // d's region: its own line 42 first (no passing test runs it), then 40 and 41 tied.
        let top = top_lines(&sp, "d::fail");
        assert_eq!(
            top.into_iter().map(|(_, l)| l).collect::<Vec<_>>(),
            vec![40, 41, 42]
        );
    }
}
