//! `python -m unittest` output: each problem is a block
//!
//! ```text
//! ======================================================================
//! FAIL: test_x (pkg.tests.TestY.test_x)      <- 3.11+; `(pkg.tests.TestY)` before
//! ----------------------------------------------------------------------
//! Traceback (most recent call last):
//!   ...
//! AssertionError: 1 != 2
//! ```
//!
//! closed by the next `=====` line or by the `-----` line above `Ran N tests in Xs`. FAIL (an
//! assertion that did not hold) and ERROR (any other exception) are kept apart as the
//! failure's [`Outcome`].

use std::path::Path;

use super::model::{ExceptionRecord, Outcome, TbStyle, When};
use super::native;
use super::pytest_session::SessionFailure;

/// unittest draws both separators 70 characters wide (`unittest.TextTestResult`).
const SEPARATOR_WIDTH: usize = 70;

fn is_separator(line: &str, fill: u8) -> bool {
    line.len() == SEPARATOR_WIDTH && line.bytes().all(|b| b == fill)
}

/// The failures of a unittest run, or `None` when `lines` are not unittest output (no
/// `FAIL:`/`ERROR:` block and no `Ran N tests` line). `root` turns test ids into node ids.
pub fn parse(lines: &[&str], root: &Path) -> Option<Vec<SessionFailure>> {
    let mut failures = Vec::new();
    let mut seen_run = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        seen_run |= is_ran_line(line);
        let header = (is_separator(line, b'='))
            .then(|| lines.get(i + 1).and_then(|h| block_header(h)))
            .flatten();
        let Some((outcome, description)) = header else {
            i += 1;
            continue;
        };
        // The description may carry the docstring's first line before the `-----` line.
        let Some(dash) = (i + 2..(i + 4).min(lines.len())).find(|&j| is_separator(lines[j], b'-'))
        else {
            i += 1;
            continue;
        };
        let start = dash + 1;
        let end = (start..lines.len())
            .find(|&j| is_separator(lines[j], b'=') || is_separator(lines[j], b'-'))
            .unwrap_or(lines.len());
        // `-b` (buffer) appends the captured output after the traceback.
        let body_end = (start..end)
            .find(|&j| matches!(lines[j], "Stdout:" | "Stderr:"))
            .unwrap_or(end);
        if let Some(record) = native::parse_chain(&lines[start..body_end]) {
            failures.push(failure(outcome, description, record, root));
        }
        i = end;
    }
    (seen_run || !failures.is_empty()).then_some(failures)
}

/// `Ran 3 tests in 0.001s` (`Ran 1 test in ...`).
fn is_ran_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("Ran ") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && (rest[digits..].starts_with(" tests in ") || rest[digits..].starts_with(" test in "))
}

/// `FAIL: description` / `ERROR: description`; the description is `name (id)` with an optional
/// sub-test part after it (`test_x (m.C.test_x) (i=1)`).
fn block_header(line: &str) -> Option<(Outcome, &str)> {
    let (outcome, rest) = if let Some(r) = line.strip_prefix("FAIL: ") {
        (Outcome::Failed, r)
    } else if let Some(r) = line.strip_prefix("ERROR: ") {
        (Outcome::Error, r)
    } else {
        return None;
    };
    let (name, _) = rest.split_once(" (")?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some((outcome, rest))
}

/// Class and module fixtures that unittest reports under their own name.
const SETUP_NAMES: [&str; 4] = ["setUp", "asyncSetUp", "setUpClass", "setUpModule"];
const TEARDOWN_NAMES: [&str; 5] = [
    "tearDown",
    "asyncTearDown",
    "tearDownClass",
    "tearDownModule",
    "doCleanups",
];

fn failure(
    outcome: Outcome,
    description: &str,
    record: ExceptionRecord,
    root: &Path,
) -> SessionFailure {
    let (name, rest) = description.split_once(" (").unwrap_or((description, ""));
    let inner = rest.split_once(')').map_or(rest, |(inner, _)| inner);
    let (unittest_id, when) = if inner.starts_with("unittest.loader._FailedTest") {
        // A module that failed to import: unittest names the module.
        (name.to_string(), When::Collect)
    } else if SETUP_NAMES.contains(&name) || TEARDOWN_NAMES.contains(&name) {
        let when = if SETUP_NAMES.contains(&name) {
            When::Setup
        } else {
            When::Teardown
        };
        (inner.to_string(), when)
    } else {
        // 3.11+ prints the full id; older versions the class only.
        let id = if inner.ends_with(&format!(".{name}")) {
            inner.to_string()
        } else {
            format!("{inner}.{name}")
        };
        // unittest starts the traceback at the test method, or at setUp/tearDown when the
        // error happened there.
        let first = record.frames.first().and_then(|f| f.func.as_deref());
        let when = match first {
            Some(f) if SETUP_NAMES.contains(&f) => When::Setup,
            Some(f) if TEARDOWN_NAMES.contains(&f) => When::Teardown,
            _ => When::Call,
        };
        (id, when)
    };
    SessionFailure {
        test: Some(node_id(&unittest_id, root).unwrap_or(unittest_id)),
        when,
        outcome,
        headline: Some(description.to_string()),
        style: TbStyle::Native,
        record,
        summary: None,
    }
}

/// `pkg.tests.TestY.test_x` → `pkg/tests.py::TestY::test_x` when `pkg/tests.py` is under the
/// root (the longest dotted prefix that is a module file wins).
fn node_id(unittest_id: &str, root: &Path) -> Option<String> {
    let parts: Vec<&str> = unittest_id.split('.').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || p.contains(['/', '\\']))
    {
        return None;
    }
    (1..=parts.len()).rev().find_map(|k| {
        let file = format!("{}.py", parts[..k].join("/"));
        if !root.join(&file).is_file() {
            return None;
        }
        let mut id = file;
        for p in &parts[k..] {
            id.push_str("::");
            id.push_str(p);
        }
        Some(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            block_header("FAIL: test_x (a.b.C.test_x)"),
            Some((Outcome::Failed, "test_x (a.b.C.test_x)"))
        );
        assert_eq!(
            block_header("ERROR: setUpClass (a.b.C)"),
            Some((Outcome::Error, "setUpClass (a.b.C)"))
        );
        assert_eq!(block_header("FAIL: the thing (x)"), None);
        assert_eq!(block_header("ERROR: no parentheses"), None);
        assert!(is_ran_line("Ran 1 test in 0.000s"));
        assert!(is_ran_line("Ran 12 tests in 1.5s"));
        assert!(!is_ran_line("Ran away in 2s"));
    }

    #[test]
    fn ids_of_every_python_version() {
        let record = || ExceptionRecord {
            exc_type: "ValueError".into(),
            msg: String::new(),
            frames: Vec::new(),
            chain: Vec::new(),
            sub_exceptions: Vec::new(),
            location: None,
        };
        let root = Path::new("/nonexistent");
        let f = failure(Outcome::Failed, "test_x (a.b.C.test_x)", record(), root);
        assert_eq!(
            (f.test.as_deref(), f.when),
            (Some("a.b.C.test_x"), When::Call)
        );
        let f = failure(Outcome::Failed, "test_x (a.b.C)", record(), root);
        assert_eq!(f.test.as_deref(), Some("a.b.C.test_x"));
        let f = failure(
            Outcome::Error,
            "a.b (unittest.loader._FailedTest.a.b)",
            record(),
            root,
        );
        assert_eq!((f.test.as_deref(), f.when), (Some("a.b"), When::Collect));
        let f = failure(Outcome::Error, "tearDownClass (a.b.C)", record(), root);
        assert_eq!((f.test.as_deref(), f.when), (Some("a.b.C"), When::Teardown));
    }
}
