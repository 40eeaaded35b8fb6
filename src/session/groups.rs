//! Many failures, one cause: one bug in a core function commonly fails dozens of tests, all at
//! the same crash site. The failures to work on are grouped by that site (file, line, exception
//! type, and the message's shape: numbers and quoted values normalised), the biggest group
//! first; a group is worked on through one representative test (one probe, its candidates),
//! and a candidate that passes the representative must pass the whole group in one targeted
//! run before the full suite is run.

use super::model::{FailureOutcome, Group, GroupKey};
use std::collections::BTreeMap;

use super::shared::failure_key;
use crate::status::{AttemptOutcome, FailureStatus};
use crate::traceback::{Failure, When};

/// `'KeyError: 'user_42''` and `'KeyError: 'admin_7''` have the same shape.
pub fn msg_shape(msg: &str) -> String {
    let first = crate::traceback::first_line(msg).trim();
    let mut out = String::with_capacity(first.len());
    let mut chars = first.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                // A quoted value up to the same quote on the line; a lone quote (`don't`) stays.
                let rest: String = chars.clone().collect();
                match rest.find(c) {
                    Some(end) => {
                        out.push_str("<s>");
                        for _ in 0..rest[..end].chars().count() + 1 {
                            chars.next();
                        }
                    }
                    None => out.push(c),
                }
            }
            c if c.is_ascii_digit() => {
                // `3.5`, `1e9`, `0x1f` are one number.
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '.' || *n == '_')
                {
                    chars.next();
                }
                out.push_str("<n>");
            }
            c => out.push(c),
        }
    }
    out
}

/// The crash site of a failure that can be grouped: it names a test and a place.
pub fn key_of(f: &Failure) -> Option<GroupKey> {
    f.test.as_ref()?;
    let loc = f.location.as_ref()?;
    Some(GroupKey {
        file: loc.file.clone(),
        line: loc.line,
        exc_type: f.exc_type.clone(),
        // A hang's place is its cause: the message only says how long the test ran, which
        // differs between the first test of a hang and the later ones stopped sooner (the
        // plugin's "same hang" limit).
        msg_shape: if f.exc_type == crate::plugin::TIMEOUT_EXC {
            "the test did not finish within the per-test limit".into()
        } else {
            msg_shape(&f.msg)
        },
    })
}

/// The groups of a run: which group each failure is in, and who represents it.
#[derive(Debug, Default)]
pub struct Groups {
    pub list: Vec<Group>,
    /// (test, phase) → index into `list`.
    of: BTreeMap<(String, When), usize>,
    /// The representative of each group has been worked on.
    done: Vec<bool>,
}

impl Groups {
    /// Groups `failures` and returns them reordered: the biggest group first (ties in the
    /// order of the run), the members of a group next to each other.
    pub fn build(failures: Vec<Failure>) -> (Groups, Vec<Failure>) {
        let mut keyed: Vec<(Option<GroupKey>, Vec<Failure>)> = Vec::new();
        for f in failures {
            let key = key_of(&f);
            match key
                .as_ref()
                .and_then(|k| keyed.iter_mut().find(|(g, _)| g.as_ref() == Some(k)))
            {
                Some((_, members)) => members.push(f),
                None => keyed.push((key, vec![f])),
            }
        }
        // A stable sort keeps the run's order among groups of one size.
        keyed.sort_by_key(|(_, members)| std::cmp::Reverse(members.len()));
        let mut groups = Groups::default();
        let mut ordered = Vec::new();
        for (i, (key, members)) in keyed.into_iter().enumerate() {
            for f in &members {
                groups.of.insert(failure_key(f), i);
            }
            groups.list.push(Group {
                key,
                tests: members.iter().filter_map(|f| f.test.clone()).collect(),
                representative: None,
                status: FailureStatus::NotFixed,
            });
            groups.done.push(false);
            ordered.extend(members);
        }
        (groups, ordered)
    }

    /// The group of a failure, by its (test, phase).
    pub fn index(&self, f: &Failure) -> Option<usize> {
        self.of.get(&failure_key(f)).copied()
    }

    /// Whether the group's representative was already worked on.
    pub fn worked_on(&self, g: usize) -> bool {
        self.done.get(g).copied().unwrap_or(false)
    }

    /// `f` represents its group from now on.
    pub fn represent(&mut self, g: usize, f: &Failure) {
        if let (Some(group), Some(done)) = (self.list.get_mut(g), self.done.get_mut(g)) {
            group.representative = f.test.clone();
            *done = true;
        }
    }

    /// A flaky representative proves nothing about the others: the next member represents
    /// the group instead.
    pub fn release(&mut self, g: usize) {
        if let Some(done) = self.done.get_mut(g) {
            *done = false;
        }
    }

    /// The group's other tests, for its targeted run.
    pub fn others(&self, g: usize, f: &Failure) -> Vec<String> {
        self.list.get(g).map_or_else(Vec::new, |group| {
            group
                .tests
                .iter()
                .filter(|t| Some(*t) != f.test.as_ref())
                .cloned()
                .collect()
        })
    }

    /// Sets each group's status from its representative's outcome (or, for a group never
    /// worked on, from its members: all fixed by another patch).
    pub fn settle(&mut self, outcomes: &[FailureOutcome]) {
        for (i, group) in self.list.iter_mut().enumerate() {
            let mine: Vec<&FailureOutcome> =
                outcomes.iter().filter(|o| o.group == Some(i)).collect();
            let rep = group
                .representative
                .as_ref()
                .and_then(|r| mine.iter().find(|o| o.test.as_ref() == Some(r)));
            group.status = match rep {
                Some(o) => o.status,
                None => mine.first().map_or(FailureStatus::NotFixed, |o| o.status),
            };
        }
    }
}

impl super::runs::Runs<'_> {
    /// The group's other tests in one targeted run, once the representative passed: `true`
    /// when none of them still fails (see [`still_failing`]). Otherwise the attempt says why it
    /// is rejected (one edit must account for the whole group's crash: a candidate that fixes
    /// one test of it is a guess that fits that test). A member that now fails differently in
    /// the project's code has a second bug behind the first: it is worked on later, like the
    /// rest, and the cause's patches stay only if it is fixed too (see `cause_audit`).
    pub(super) fn group_run(
        &mut self,
        ws: &dyn super::workspace::Workspace,
        others: &[String],
        key: Option<&GroupKey>,
        chained: bool,
        attempt: &mut super::model::Attempt,
    ) -> Result<bool, super::error::SessionError> {
        if others.is_empty() {
            return Ok(true);
        }
        let run = self.run(ws, others, super::prover::Phase::Candidate)?;
        match self.prover.read(&run, ws.root()) {
            crate::verdict::Verdict::TimedOut => {
                attempt.outcome = AttemptOutcome::Timeout;
                Ok(false)
            }
            v @ (crate::verdict::Verdict::Green | crate::verdict::Verdict::Failed(_)) => {
                Ok(group_passes_in(&v, others, key, chained, attempt))
            }
            other => {
                attempt.outcome = AttemptOutcome::SuiteError;
                attempt.new_failure = Some(format!("the group's run: {}", other.describe()));
                Ok(false)
            }
        }
    }
}

/// Whether a member of a group whose crash site is `key` still fails with `f`: at the crash
/// site still, or in the test's own code (a failed assertion there is the candidate's wrong
/// result, as [`super::work::is_progress`] says, not a second bug behind the first), or in any
/// way at all when the candidate is a step of a chain (`chained`: a chain is kept only when the
/// failures that started it pass, see docs/proof.md).
pub(super) fn still_failing(f: &Failure, key: Option<&GroupKey>, chained: bool) -> bool {
    let in_tests = f.location.as_ref().is_none_or(|l| {
        let parts: Vec<&str> = l.file.split('/').collect();
        crate::traceback::locate::is_test_file(&parts)
    });
    chained || in_tests || key.is_none() || key_of(f).as_ref() == key
}

/// Whether none of the group's other tests still fails in `verdict` (the group's own run, or a
/// full run that holds them; see [`still_failing`]); otherwise the attempt says which do. A
/// run with no verdict passes here: its judge says what it was.
pub(super) fn group_passes_in(
    verdict: &crate::verdict::Verdict,
    others: &[String],
    key: Option<&GroupKey>,
    chained: bool,
    attempt: &mut super::model::Attempt,
) -> bool {
    let Some(after) = verdict.failures() else {
        return true;
    };
    // Only the group's own tests count here (a sibling subtest of a member is judged by the
    // full run against the baseline).
    let failing: Vec<&Failure> = after
        .iter()
        .filter(|f| f.test.as_ref().is_some_and(|t| others.contains(t)))
        .filter(|f| still_failing(f, key, chained))
        .collect();
    let Some(first) = failing.first() else {
        return true;
    };
    attempt.new_failure = Some(format!(
        "the representative passes, but {} of the group's {} other tests still fail{} ({}: \
         {}: {})",
        failing.len(),
        others.len(),
        if failing.len() == 1 { "s" } else { "" },
        first.test.as_deref().unwrap_or("?"),
        first.exc_type,
        crate::traceback::first_line(&first.msg)
    ));
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32, exc: &str) -> Failure {
        let log = format!(
            "=================================== FAILURES ===================================\n\
             ___ t ___\n\
             E   {exc}: boom\n\
             =========================== short test summary info ============================\n\
             FAILED t.py::t - {exc}: boom\n"
        );
        let mut f = crate::traceback::parse(log.as_bytes(), std::path::Path::new("/nonexistent"))
            .unwrap()
            .failures
            .remove(0);
        f.location = Some(crate::traceback::Location {
            file: file.into(),
            path: format!("/p/{file}"),
            line,
            func: None,
            code: None,
            caret: None,
            frame_index: 0,
            stale: None,
        });
        f
    }

    #[test]
    fn a_member_failing_in_its_own_assertion_still_fails() {
        let site = at("agenda.py", 16, "TypeError");
        let key = key_of(&site);
        // At the crash site still, or in the test's own assert: still failing.
        assert!(still_failing(&site, key.as_ref(), false));
        let assert_in_test = at("tests/test_agenda.py", 15, "AssertionError");
        assert!(still_failing(&assert_in_test, key.as_ref(), false));
        // Elsewhere in the project's code: a second bug behind the first, unless the candidate
        // is a step of a chain, which needs the whole group to pass.
        let behind = at("agenda.py", 30, "KeyError");
        assert!(!still_failing(&behind, key.as_ref(), false));
        assert!(still_failing(&behind, key.as_ref(), true));
    }

    #[test]
    fn numbers_and_quoted_values_are_normalised() {
        assert_eq!(msg_shape("'user_42'"), "<s>");
        assert_eq!(
            msg_shape("list index out of range: 3 of 12"),
            "list index out of range: <n> of <n>"
        );
        assert_eq!(
            msg_shape("unsupported operand type(s) for +: 'int' and \"str\""),
            "unsupported operand type(s) for +: <s> and <s>"
        );
        assert_eq!(
            msg_shape("can't divide 3.5 by 0x0"),
            "can't divide <n> by <n>"
        );
        assert_eq!(msg_shape("first line\nsecond 42"), "first line");
        assert_eq!(msg_shape(""), "");
        assert_eq!(msg_shape("é'ü"), "é'ü");
    }
}
