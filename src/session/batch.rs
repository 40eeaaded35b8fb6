//! Several fixes, one confirming full run. A candidate that passes its targeted run (and its
//! group's run) is kept tentatively while the next independent failure is worked on; one full
//! run then confirms the whole batch against the reference set of the batch's start.
//!
//! Independent means: no fix of the batch edits a file that another fix edits or that another
//! failure crashes in (the loop confirms the batch before it works on such a failure, or
//! before it writes such a candidate). A failure that passes on the batch's code, or that
//! could not be probed, or goes to the search (which confirms by its own full run), also
//! confirms the batch first.
//!
//! When the batch's run shows a failure that was not in the reference set, or a fixed test
//! back, the fixes are confirmed one by one instead, linearly in the order they were found:
//! every fix is undone, then each is written back and the full suite run with it and the fixes
//! kept before it; one that breaks something is undone and its failure worked on again (its
//! edit is remembered as rejected). Linear, not bisection: a batch holds a few fixes (one per
//! independent failure), where bisection saves little and would judge a fix in runs without
//! the fixes kept before it. So every kept fix has passed a full run that contained it and
//! every other kept fix: the last successful run of the fallback, or the batch's own.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;

use super::error::SessionError;
use super::judge::FullRun;
use super::model::{outcome_of, Attempt, FailureOutcome};
use super::prover::Phase;
use super::runs::Runs;
use super::shared::{failure_key, failure_keys, TIME_BUDGET_USED_UP};
use super::workspace::Workspace;
use crate::category;
use crate::plan::Candidate;
use crate::rules::Category;
use crate::status::{AttemptOutcome, ConfirmedBy, FailureStatus};
use crate::traceback::{Failure, When};
use crate::tried::Tried;

/// One fix kept tentatively.
pub(super) struct Entry {
    /// The failure it fixes (the group's representative), and its outcome, pushed when the
    /// batch is confirmed.
    pub failure: Failure,
    pub outcome: FailureOutcome,
    /// The group's other tests met while the fix was pending: decided with it.
    pub members: Vec<Failure>,
    pub group: Option<usize>,
    pub steps: Vec<Candidate>,
    /// The failures it fixed: its own and its group's (the full run must not show them).
    pub fixed: Vec<(String, When)>,
    /// The index in `attempts` of its accepted attempt.
    pub attempt: usize,
    /// Each touched file before the fix (the loop's proven content, when there was one) and
    /// with it.
    pub before: Vec<(PathBuf, Option<Vec<u8>>, Vec<u8>)>,
    pub after: Vec<(PathBuf, Vec<u8>)>,
}

/// What the confirmation kept and dropped, and the failures of the last full run that
/// confirmed something (the new reference set), if any did.
pub(super) struct Confirmed {
    pub kept: Vec<Entry>,
    pub dropped: Vec<Entry>,
    pub after: Option<Vec<Failure>>,
    /// Full runs made.
    pub runs: usize,
}

#[derive(Default)]
pub(super) struct Batch {
    pub entries: Vec<Entry>,
    /// Relative paths of the patched files and the fixed failures' crash sites.
    pub files: BTreeSet<String>,
    /// What failed when the batch started.
    pub reference: BTreeSet<(String, When)>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The pending entry of group `g`.
    pub fn of_group(&mut self, g: usize) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.group == Some(g))
    }

    /// Adds a tentatively kept fix; the first one fixes the reference set.
    pub fn add(&mut self, entry: Entry, current: &BTreeSet<(String, When)>) {
        if self.entries.is_empty() {
            self.reference = current.clone();
        }
        for c in &entry.steps {
            self.files.insert(c.file.clone());
        }
        if let Some(loc) = &entry.failure.location {
            self.files.insert(loc.file.clone());
        }
        self.entries.push(entry);
    }

    /// Whether `f` may be worked on while the batch is pending: it has a test to run alone
    /// and crashes in no file of the batch.
    pub fn independent(&self, f: &Failure) -> bool {
        f.test.is_some()
            && f.location
                .as_ref()
                .is_some_and(|l| !self.files.contains(&l.file))
    }

    /// Confirms the pending fixes (see the module docs) and empties the batch.
    pub fn confirm(
        &mut self,
        s: &mut Runs,
        ws: &mut dyn Workspace,
        attempts: &mut [Attempt],
        accepted: &mut BTreeMap<PathBuf, Vec<u8>>,
    ) -> Result<Confirmed, SessionError> {
        let entries = std::mem::take(&mut self.entries);
        self.files.clear();
        let reference = std::mem::take(&mut self.reference);
        let mut done = Confirmed {
            kept: Vec::new(),
            dropped: Vec::new(),
            after: None,
            runs: 0,
        };
        if entries.is_empty() {
            return Ok(done);
        }
        let fixed: Vec<(String, When)> = entries.iter().flat_map(|e| e.fixed.clone()).collect();
        crate::progress::step(|| {
            format!(
                "confirming {} fix{} in one full run",
                entries.len(),
                if entries.len() == 1 { "" } else { "es" }
            )
        });
        let logged = s.prover.proof_log.len();
        let run = s.run(ws, &[], Phase::Confirm)?;
        done.runs += 1;
        let verdict = s.prover.read(&run, ws.root());
        let verdict = s.judge_full(ws, verdict, &reference, &fixed, false)?;
        let single = entries.len() == 1;
        match verdict {
            FullRun::Accepted(after) => {
                done.after = Some(after);
                // The batch's full run proved each of its fixes.
                if let Some(run) = s.prover.proof_log.get(logged) {
                    for e in &entries {
                        attempts[e.attempt].proven_by.push(run.clone());
                    }
                }
                done.kept = entries;
                return Ok(done);
            }
            // One fix alone: the batch's run was its own full run.
            other if single => {
                let mut entries = entries;
                let e = entries.remove(0);
                let attempt = &mut attempts[e.attempt];
                attempt.confirmed_by = None;
                attempt.outcome = AttemptOutcome::StillFailing;
                other.record(attempt);
                undo(ws, accepted, &e)?;
                done.dropped.push(e);
                return Ok(done);
            }
            _ => {}
        }
        // Linear fallback: every fix undone, then each written back on top of those kept.
        for e in entries.iter().rev() {
            undo(ws, accepted, e)?;
        }
        let mut current = reference;
        for e in entries {
            for (path, bytes) in &e.after {
                ws.write(path, bytes)?;
                accepted.insert(path.clone(), bytes.clone());
            }
            crate::progress::step(|| "the batch failed: confirming its fixes one by one".into());
            let logged = s.prover.proof_log.len();
            let run = s.run(ws, &[], Phase::Confirm)?;
            done.runs += 1;
            let attempt = &mut attempts[e.attempt];
            attempt.confirmed_by = Some(ConfirmedBy::OneByOne);
            attempt.outcome = AttemptOutcome::StillFailing;
            let verdict = s.prover.read(&run, ws.root());
            match s
                .judge_full(ws, verdict, &current, &e.fixed, false)?
                .record(attempt)
            {
                Some(after) => {
                    current = failure_keys(&after);
                    done.after = Some(after);
                    if let Some(run) = s.prover.proof_log.get(logged) {
                        attempts[e.attempt].proven_by.push(run.clone());
                    }
                    done.kept.push(e);
                }
                None => {
                    undo(ws, accepted, &e)?;
                    done.dropped.push(e);
                }
            }
        }
        Ok(done)
    }
}

/// Puts a fix's files back as they were before it.
fn undo(
    ws: &mut dyn Workspace,
    accepted: &mut BTreeMap<PathBuf, Vec<u8>>,
    e: &Entry,
) -> Result<(), SessionError> {
    for (path, proven, original) in &e.before {
        ws.write(path, proven.as_deref().unwrap_or(original))?;
        match proven {
            Some(p) => accepted.insert(path.clone(), p.clone()),
            None => accepted.remove(path),
        };
    }
    Ok(())
}

impl Entry {
    /// A fix just kept tentatively: `proven_before` is the loop's proven content before the
    /// failure was worked on, `accepted` after.
    pub fn new(
        failure: Failure,
        outcome: FailureOutcome,
        steps: Vec<Candidate>,
        fixed: Vec<(String, When)>,
        attempt: usize,
        proven_before: &BTreeMap<PathBuf, Vec<u8>>,
        accepted: &BTreeMap<PathBuf, Vec<u8>>,
    ) -> Entry {
        let mut before: Vec<(PathBuf, Option<Vec<u8>>, Vec<u8>)> = Vec::new();
        let mut after = Vec::new();
        for c in &steps {
            if before.iter().any(|(p, _, _)| *p == c.path) {
                continue;
            }
            before.push((
                c.path.clone(),
                proven_before.get(&c.path).cloned(),
                c.original.clone(),
            ));
            let now = accepted.get(&c.path).cloned().unwrap_or(c.patched.clone());
            after.push((c.path.clone(), now));
        }
        Entry {
            failure,
            group: outcome.group,
            outcome,
            members: Vec::new(),
            steps,
            fixed,
            attempt,
            before,
            after,
        }
    }
}

/// Whether `other`, waiting in the queue, could be fixed in the same batch as `failure`: a
/// failure still failing, with a test, that crashes in another file and is of a kind the
/// rules work on.
pub(super) fn could_share(
    other: &Failure,
    failure: &Failure,
    current: &BTreeSet<(String, When)>,
    root: &std::path::Path,
) -> bool {
    let file = |f: &Failure| f.location.as_ref().map(|l| l.file.clone());
    other.test.is_some()
        && other.test != failure.test
        && file(other).is_some()
        && file(other) != file(failure)
        && current.contains(&failure_key(other))
        && !matches!(
            category::categorize(other, root).0,
            Category::Environment | Category::Dependency | Category::Timeout
        )
}

/// What settling the batch updates in the loop.
pub(super) struct Settle<'a> {
    pub queue: &'a mut VecDeque<Failure>,
    pub current: &'a mut BTreeSet<(String, When)>,
    pub first_place: &'a mut BTreeMap<(String, When), (String, u32)>,
    pub accepted_cands: &'a mut Vec<Candidate>,
    /// The failure each kept candidate was kept for (its cause's, see [`super::causes`]).
    pub accepted_for: &'a mut Vec<(String, When)>,
    /// See `AttemptLoop::gone_with`.
    pub gone_with: &'a mut BTreeMap<String, Vec<String>>,
    pub outcomes: &'a mut Vec<FailureOutcome>,
    pub groups: &'a mut super::groups::Groups,
    pub no_defer: &'a mut BTreeSet<(String, When)>,
    pub tried: &'a mut Tried,
    pub out_of_time: &'a mut bool,
}

impl Batch {
    /// Confirms the pending fixes and brings the loop up to date: kept fixes are the
    /// failures' patches (their group's other tests gone with them), dropped ones put their
    /// failures back at the front of the queue. Interrupted or out of time, nothing is
    /// confirmed: every pending fix is undone.
    pub fn settle(
        &mut self,
        s: &mut Runs,
        ws: &mut dyn Workspace,
        attempts: &mut [Attempt],
        accepted: &mut BTreeMap<PathBuf, Vec<u8>>,
        st: &mut Settle,
    ) -> Result<(), SessionError> {
        if crate::process::interrupted() || s.prover.out_of_time() {
            let why = if crate::process::interrupted() {
                "interrupted before the confirming full run"
            } else {
                *st.out_of_time = true;
                TIME_BUDGET_USED_UP
            };
            self.files.clear();
            for e in std::mem::take(&mut self.entries).into_iter().rev() {
                undo(ws, accepted, &e)?;
                let a = &mut attempts[e.attempt];
                a.outcome = AttemptOutcome::Timeout;
                a.new_failure = Some(format!("not confirmed: {why}"));
                for f in std::iter::once(e.outcome).chain(e.members.iter().map(|m| {
                    let mut o = outcome_of(m, category::categorize(m, ws.root()).0);
                    o.group = e.group;
                    o
                })) {
                    let mut o = f;
                    o.status = FailureStatus::NotFixed;
                    o.reason = Some(why.to_string());
                    st.outcomes.push(o);
                }
            }
            return Ok(());
        }
        let done = self.confirm(s, ws, attempts, accepted)?;
        if let Some(after) = &done.after {
            absorb(after, st.queue, st.first_place);
            let after_keys = failure_keys(after);
            // One fix alone in its run: what that run shows gone is its (several fixes in one
            // run: which fixed what is not known, and nothing is attributed).
            if let [only] = done.kept.as_slice() {
                let key = failure_key(&only.failure);
                note_gone(st.gone_with, &key, st.current, &after_keys);
            }
            *st.current = after_keys;
        }
        for e in done.kept {
            let key = failure_key(&e.failure);
            st.accepted_for.extend(e.steps.iter().map(|_| key.clone()));
            st.accepted_cands.extend(e.steps);
            st.outcomes.push(e.outcome);
            for m in e.members {
                if st.current.contains(&failure_key(&m)) {
                    st.queue.push_back(m);
                    continue;
                }
                let mut o = outcome_of(&m, category::categorize(&m, ws.root()).0);
                o.group = e.group;
                o.status = FailureStatus::FixedByAnotherPatch;
                st.outcomes.push(o);
            }
        }
        for e in done.dropped.into_iter().rev() {
            // Its edit is rejected for the failure; the failure and its group are worked on
            // again, confirmed alone.
            if let Some(first) = e.steps.first() {
                st.tried.reject(&e.failure, &first.path, &first.patched);
            }
            st.no_defer.insert(failure_key(&e.failure));
            if let Some(g) = e.group {
                st.groups.release(g);
            }
            for m in e.members.into_iter().rev() {
                st.queue.push_front(m);
            }
            st.queue.push_front(e.failure);
        }
        Ok(())
    }
}

/// A kept patch moves lines: a failure still waiting is read again from the run that proved
/// the patch, so its location is that of the current code. The report keeps the place the run
/// found it at (the code that was tested).
pub(super) fn absorb(
    after: &[Failure],
    queue: &mut VecDeque<Failure>,
    first_place: &mut BTreeMap<(String, When), (String, u32)>,
) {
    for waiting in queue.iter_mut() {
        let key = failure_key(waiting);
        if let Some(now) = after.iter().find(|f| failure_key(f) == key) {
            if let Some(loc) = &waiting.location {
                first_place
                    .entry(key)
                    .or_insert_with(|| (loc.file.clone(), loc.line));
            }
            *waiting = now.clone();
        }
    }
}

/// Records under the fix kept for `key` the failing tests of `before` that `after` (its proving
/// run's failures) no longer has.
pub(super) fn note_gone(
    gone_with: &mut BTreeMap<String, Vec<String>>,
    key: &(String, When),
    before: &BTreeSet<(String, When)>,
    after: &BTreeSet<(String, When)>,
) {
    let gone = before
        .iter()
        .filter(|k| *k != key && !after.contains(*k))
        .map(|(t, _)| t.clone());
    let list = gone_with.entry(key.0.clone()).or_default();
    for t in gone {
        if !list.contains(&t) {
            list.push(t);
        }
    }
}
