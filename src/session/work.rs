//! The work on one failure: its facts (the baseline's crash frame or a probe run), then the
//! candidate sources in order ([`super::sources`]), each candidate proven by [`Work::prove`].

use super::*;

/// A failure's fix: the candidates kept (a step that moved the failure elsewhere first), and
/// the whole suite's failures with them.
pub(super) type Fixed = (Vec<Candidate>, Vec<Failure>);

/// The work on one failure: the runs, the workspace, and the failure's own state; the methods
/// here, in [`super::search`] and in the candidate sources are its steps.
pub(super) struct Work<'w, 'a> {
    pub(super) s: &'w mut Runs<'a>,
    pub(super) ws: &'w mut dyn Workspace,
    pub(super) ctx: Step<'w>,
}

/// State shared by the steps of one failure.
pub(super) struct Step<'a> {
    pub(super) rules: &'a RuleSet,
    /// The failing set before this failure was worked on.
    pub(super) current: &'a BTreeSet<(String, When)>,
    /// The reference run saw no test (a conftest failed to import): failures that appear once
    /// the failure is gone are not breakage.
    pub(super) blind: bool,
    pub(super) category: Category,
    pub(super) budget: &'a mut u32,
    pub(super) attempts: &'a mut Vec<Attempt>,
    pub(super) accepted: &'a mut BTreeMap<PathBuf, Vec<u8>>,
    pub(super) first_probe: Option<ProbeReport>,
    pub(super) reason: Option<String>,
    /// The failure did not come back when the unchanged code ran again.
    pub(super) flaky: bool,
    /// What the search's localization ranked (reported with the failure).
    pub(super) suspicious: Vec<crate::localize::Suspicious>,
    /// Edits pytest already rejected, over the whole run.
    pub(super) tried: &'a mut Tried,
    /// Candidates skipped as already rejected for the same failure, and the test they were
    /// rejected for.
    pub(super) repeats: Option<(usize, Option<String>)>,
    /// The other tests of the failure's crash-site group (see [`groups`]), still failing.
    pub(super) group: Vec<String>,
    /// Where the group crashes (a member failing elsewhere now is another bug).
    pub(super) group_key: Option<groups::GroupKey>,
    /// A candidate that passes its targeted (and group) run is kept tentatively, its full run
    /// left to the batch's (see [`batch`]).
    pub(super) defer: bool,
    /// Files of the fixes pending in the batch (patched files and crash sites).
    pub(super) batch_files: &'a BTreeSet<String>,
    /// Set when the batch must be confirmed before this failure can be worked on.
    pub(super) needs_flush: bool,
    /// The index in `attempts` of the tentatively accepted attempt.
    pub(super) deferred: Option<usize>,
}

impl Work<'_, '_> {
    /// What `cand`'s file holds when the candidate is not in it: the proven content so far,
    /// else the original.
    pub(super) fn previous(&self, cand: &Candidate) -> Vec<u8> {
        self.ctx
            .accepted
            .get(&cand.path)
            .cloned()
            .unwrap_or_else(|| cand.original.clone())
    }
}

impl Step<'_> {
    /// Whether the same bytes were already proven wrong for this failure (by a rule, the search,
    /// or for another test failing the same way): counted in `repeats`, and no run is spent.
    pub(super) fn already_rejected(&mut self, failure: &Failure, cand: &Candidate) -> bool {
        let Some(test) = self.tried.rejected_for(failure, &cand.path, &cand.patched) else {
            return false;
        };
        let test = test.map(str::to_string);
        self.repeats.get_or_insert((0, test)).0 += 1;
        true
    }
}

impl Work<'_, '_> {
    /// The failure passed once when run again on unchanged code: one more plain run of the test
    /// decides. Passing again, it is flaky (`ctx.flaky`, with the reason) and nothing is patched.
    pub(super) fn flaky(&mut self, failure: &Failure) -> Result<bool, SessionError> {
        let test: Vec<String> = failure.test.iter().cloned().collect();
        let again = self.s.run(self.ws, &test, Phase::Probe)?;
        if !matches!(self.s.read(&again, self.ws.root()), Verdict::Green) {
            return Ok(false);
        }
        self.ctx.flaky = true;
        self.ctx.reason = Some(format!(
            "flaky: the test failed in the first run and passed twice when run again on \
         unchanged code ({}: {}); a test that fails at random proves no patch, so \
         nothing was patched",
            failure.exc_type,
            failure.msg.lines().next().unwrap_or("")
        ));
        Ok(true)
    }

    /// Tries the candidates of `failure` in rank order. A candidate after which the targeted test
    /// fails differently (a new location or exception) is kept tentatively and the new failure is
    /// worked on as the next step, within the same budget; if that leads nowhere it is undone.
    /// Returns the accepted candidates and the full suite's failures with them.
    pub(super) fn work_on(
        &mut self,
        failure: &Failure,
        depth: usize,
    ) -> Result<Option<Fixed>, SessionError> {
        // A failed output check of command mode: the search over small edits first (one traced
        // run of the command localizes it), then the model when asked for.
        if depth == 0 && failure.exc_type == OUTPUT_CHECK_EXC && search::takes_output(self.s) {
            let found = self.search_output(failure)?;
            if found.is_some() || llm::Turn::new(self.s, failure, None).is_none() {
                return Ok(found);
            }
        }
        // No place in the project's code: only the model (when asked for) can work on it, with
        // what the failure shows (a failed output check of command mode: the command's script).
        let loc = failure.location.as_ref();
        if loc.is_none() && (depth > 0 || llm::Turn::new(self.s, failure, None).is_none()) {
            self.ctx
                .reason
                .get_or_insert_with(|| plan::PlanError::no_location(failure).to_string());
            return Ok(None);
        }
        if let Some(loc) = loc {
            if let Some(why) = excluded(self.s.opts, &loc.file) {
                self.ctx.reason.get_or_insert(why);
                return Ok(None);
            }
            if let Ok(path) = plan::confined_path(self.ws.root(), &loc.file) {
                self.ws.record(&path)?;
            }
        }
        // The baseline's crash-frame facts stand in for the probe run while the code is still
        // the baseline's (nothing accepted, no tentative step) and they cover the statement.
        let baseline_code = depth == 0 && self.ctx.accepted.is_empty();
        // The plugin's in-session rerun passed: like a probe run that passed, one more run decides.
        if baseline_code
            && self.ctx.current.contains(&failure_key(failure))
            && self.s.facts.passed_on_rerun(failure)
            && self.flaky(failure)?
        {
            return Ok(None);
        }
        let recorded = baseline_code
            .then(|| self.s.facts.report(self.ws.root(), failure, &self.s.python))
            .flatten();
        // A hang goes to the search without a probe run (it would hang again for the whole limit);
        // the model, when asked for, keeps its probe.
        let hang_search = self.ctx.category == Category::Timeout && self.s.llm.is_none();
        if recorded.is_none() && !hang_search {
            crate::progress::step(|| "probing the failing line".into());
        }
        let report = recorded.or_else(|| {
            loc.filter(|_| !hang_search)
                .and_then(|_| self.s.probe(self.ws, failure))
        });
        let facts = report.as_ref().map(probe_facts);
        // The model, when asked for, takes over where the rules end (see `llm::Turn`).
        let model = llm::Turn::new(self.s, failure, report.as_ref());
        // The probe run is the failure's second run on unchanged code: a failure of the baseline
        // that does not come back is flaky, and no patch can be proven against it. The probe
        // cannot change behaviour, but a run without it makes sure before the verdict.
        let passed_again = depth == 0
            && report.as_ref().is_some_and(|r| r.test_outcome.passed)
            && self.ctx.current.contains(&failure_key(failure));
        // With fixes pending in a batch, a test that passes (or could not be probed) may pass
        // thanks to them: the batch is confirmed first, and the failure read again.
        if depth == 0 && !self.ctx.batch_files.is_empty() && (passed_again || report.is_none()) {
            self.ctx.needs_flush = true;
            return Ok(None);
        }
        if depth == 0 {
            self.ctx.first_probe = report;
        }
        if passed_again && self.flaky(failure)? {
            return Ok(None);
        }
        let candidates = match plan::plan(&PlanInput {
            root: self.ws.root(),
            failure,
            rules: self.ctx.rules,
            probe: facts.as_ref(),
            allow_tests: self.s.opts.allow_tests,
            stdlib: &self.s.stdlib,
        }) {
            Ok(c) => c,
            // Wrong output and failures no rule knows: the search over small edits first (no
            // model, every candidate proven); what it cannot fix is the model's when asked for.
            // The search confirms with its own full run: none while fixes are pending.
            Err(e)
                if depth == 0 && !self.ctx.batch_files.is_empty() && self.applies(failure, &e) =>
            {
                self.ctx.needs_flush = true;
                return Ok(None);
            }
            Err(e) if depth == 0 && self.applies(failure, &e) => {
                let found = self.search(failure, &search::what_failed(&e))?;
                if found.is_some() || model.is_none() || !llm::may_try(&e) {
                    return Ok(found);
                }
                Vec::new()
            }
            // What no rule knows (a wrong result asserted in the test) is the model's to try.
            Err(e) if model.is_some() && llm::may_try(&e) => {
                self.ctx.reason.get_or_insert(e.to_string());
                Vec::new()
            }
            Err(e) => {
                let mut why = e.to_string();
                if matches!(e, plan::PlanError::NoRule(_)) && !self.s.opts.selection.is_default() {
                    why.push_str(" (the configuration's select/ignore leaves rules out)");
                }
                self.ctx.reason.get_or_insert(why);
                return Ok(None);
            }
        };
        // A candidate that edits an excluded file is dropped before it is written.
        let mut candidates = candidates;
        let before = candidates.len();
        candidates.retain(|c| excluded(self.s.opts, &c.file).is_none());
        if candidates.is_empty() && before > 0 {
            self.ctx
                .reason
                .get_or_insert("every candidate edits a file excluded by extend-exclude".into());
            return Ok(None);
        }
        let total = candidates.len();
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .filter(|c| c.safe || !self.s.opts.safe_only)
            .collect();
        if candidates.is_empty() && (total > 0 || model.is_none()) {
            self.ctx.reason.get_or_insert(if total > 0 {
                format!(
                    "{total} candidate{} from unsafe rules not tried (--safe-only)",
                    if total == 1 { "" } else { "s" }
                )
            } else {
                "the matching rules proposed nothing that applies here".to_string()
            });
            return Ok(None);
        }
        let mut ahead = None;
        let found = self.prove(failure, depth, candidates, model, &mut ahead);
        if let Some(a) = ahead {
            a.finish(self.s);
        }
        found
    }

    /// The candidate loop of [`work_on`]: the rules' candidates in rank order, then the model's;
    /// each written, run, judged, and kept or put back.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(super) fn prove(
        &mut self,
        failure: &Failure,
        depth: usize,
        candidates: Vec<Candidate>,
        mut model: Option<llm::Turn>,
        ahead: &mut Option<parallel::Ahead>,
    ) -> Result<Option<Fixed>, SessionError> {
        let key = failure_key(failure);
        let of = candidates.len();
        let mut ranked = candidates.iter().cloned().enumerate();
        // Candidates judged so far: with --jobs N the pool starts once one was rejected.
        let mut judged = 0usize;
        // Once the rules' candidates are all proven wrong, the search gets its turn before the model.
        let mut searched = depth > 0 || of == 0;
        loop {
            if *self.ctx.budget == 0 || runner::interrupted() {
                self.ctx.reason.get_or_insert(format!(
                    "attempt budget for {} failures used up",
                    self.ctx.category.as_str()
                ));
                break;
            }
            if !self.s.time_for_a_candidate() {
                self.ctx.reason = Some(TIME_BUDGET_USED_UP.into());
                break;
            }
            if !searched && ranked.len() == 0 && self.applies_after_rules(failure) {
                searched = true;
                // The search makes its own copies: the rules' pool is done.
                if let Some(a) = ahead.take() {
                    a.finish(self.s);
                }
                // The search confirms with its own full run: none while fixes are pending.
                if !self.ctx.batch_files.is_empty() {
                    self.ctx.needs_flush = true;
                    return Ok(None);
                }
                let why = format!(
                    "{}: {}; the rules' {of} candidate{} did not pass",
                    failure.exc_type,
                    failure.msg.lines().next().unwrap_or(""),
                    if of == 1 { "" } else { "s" }
                );
                if let Some(found) = self.search(failure, &why)? {
                    return Ok(Some(found));
                }
                if model.is_none() {
                    break;
                }
            }
            // The rules' candidates first, then (with --llm) the model's, one request each.
            let (n, cand) = match ranked.next() {
                Some((n, c)) => (Some(n), c),
                None => {
                    // The model's turn is proven in the workspace: no copy is kept for it.
                    if let Some(a) = ahead.take() {
                        a.finish(self.s);
                    }
                    match model.as_mut() {
                        Some(m) => match m.next(self, failure, depth) {
                            Some(c) => (None, c),
                            None => break,
                        },
                        None => break,
                    }
                }
            };
            // The same bytes were already proven wrong for this failure: no budget spent on them.
            if self.ctx.already_rejected(failure, &cand) {
                continue;
            }
            // An edit of a file a pending fix changed is not independent of it: confirm first.
            if self.ctx.batch_files.contains(&cand.file) {
                self.ctx.needs_flush = true;
                return Ok(None);
            }
            let label = || match n {
                Some(n) => format!("candidate {}/{of} ({})", n + 1, cand.fix.rule),
                None => format!("the model's candidate ({})", cand.fix.rule),
            };
            *self.ctx.budget -= 1;
            let previous = self
                .ctx
                .accepted
                .get(&cand.path)
                .cloned()
                .unwrap_or_else(|| cand.original.clone());
            let mut started = Instant::now();
            // A failure without a test id (collection, conftest) is only seen in a full run.
            let targeted: Vec<String> = failure.test.iter().cloned().collect();
            let phase = if targeted.is_empty() {
                Phase::Confirm
            } else {
                Phase::Candidate
            };
            // With --jobs N, once a candidate was rejected, the targeted runs of the next ones are
            // made ahead in scratch copies (see `parallel::Ahead`): the first one, mostly the one
            // kept, costs no copy and no run alongside. The run made ahead stands in for the
            // workspace's, unless the candidate moved the failure elsewhere: the new failure,
            // worked on next, is read in the workspace.
            if let (1, Some(rank)) = (judged, n) {
                *ahead = parallel::Ahead::start(self, failure, &candidates, rank);
            }
            judged += 1;
            let made_ahead = match (ahead.as_mut(), n) {
                (Some(a), Some(rank)) => {
                    a.fill(self, failure, &candidates, rank);
                    crate::progress::step(|| format!("{}: running the test", label()));
                    a.take(self, rank)?.filter(|(run, v)| {
                        run.timed_out
                            || gone(failure, &key, &targeted, v)
                            || !next_failure(failure, v).is_some_and(|f| is_progress(failure, &f))
                    })
                }
                _ => None,
            };
            // Only a candidate whose further runs are made in the workspace is written there.
            let written = made_ahead
                .as_ref()
                .is_none_or(|(run, v)| !run.timed_out && gone(failure, &key, &targeted, v));
            if written {
                self.ws.write(&cand.path, &cand.patched)?;
            }
            let (first, first_verdict) = match made_ahead {
                Some(made) => {
                    // The attempt's time is its own run's, not the wait for it.
                    started = Instant::now()
                        .checked_sub(made.0.duration)
                        .unwrap_or(started);
                    made
                }
                None => {
                    crate::progress::step(|| format!("{}: running the test", label()));
                    let first = self.s.run(self.ws, &targeted, phase)?;
                    let verdict = self.s.read(&first, self.ws.root());
                    (first, verdict)
                }
            };
            let mut attempt =
                self.s
                    .attempt_record(failure, self.ctx.category, depth, &cand, &first);
            let mut result = None;
            let gone = gone(failure, &key, &targeted, &first_verdict);
            // A small group is checked in the full run that follows anyway (one run fewer); a
            // big one, or one whose full run is the batch's later, gets a run of its own first.
            let group_in_full_run = !self.ctx.defer && self.ctx.group.len() <= GROUP_IN_FULL_RUN;
            // The representative passes: the rest of its group in one run, before the full suite.
            let group_passes =
                if gone && !first.timed_out && !targeted.is_empty() && !group_in_full_run {
                    if !self.ctx.group.is_empty() {
                        crate::progress::step(|| format!("{}: running the group's tests", label()));
                    }
                    self.s.group_run(
                        self.ws,
                        &self.ctx.group,
                        self.ctx.group_key.as_ref(),
                        &mut attempt,
                    )?
                } else {
                    true
                };
            if first.timed_out {
                attempt.outcome = AttemptOutcome::Timeout;
            } else if gone && !group_passes {
                // Rejected: the attempt says which tests of the group still fail.
            } else if gone && self.ctx.defer && !targeted.is_empty() {
                // Kept tentatively: one full run confirms the batch of independent fixes (see
                // [`batch`]); the attempt says it was confirmed there, or what the fallback found.
                attempt.outcome = AttemptOutcome::Accepted;
                attempt.confirmed_by = Some(ConfirmedBy::Batch);
                self.ctx.deferred = Some(self.ctx.attempts.len());
                result = Some(Vec::new());
            } else if gone {
                // The full suite decides, unless the targeted run already was the full suite.
                let suite_verdict = if targeted.is_empty() {
                    first_verdict
                } else {
                    crate::progress::step(|| format!("{}: running the whole suite", label()));
                    let suite = self.s.run(self.ws, &[], Phase::Confirm)?;
                    self.s.read(&suite, self.ws.root())
                };
                let group_passes = !group_in_full_run
                    || groups::group_passes_in(
                        &suite_verdict,
                        &self.ctx.group,
                        self.ctx.group_key.as_ref(),
                        &mut attempt,
                    );
                if group_passes {
                    result = judge::judge_full_run(
                        suite_verdict,
                        self.ctx.current,
                        std::slice::from_ref(&key),
                        self.ctx.blind,
                    )
                    .record(&mut attempt);
                }
            } else {
                let next = next_failure(failure, &first_verdict);
                attempt.new_failure = match &next {
                    Some(f) => Some(format!(
                        "{}: {}",
                        f.exc_type,
                        f.msg.lines().next().unwrap_or("")
                    )),
                    None if first_verdict.failures().is_none() => Some(first_verdict.describe()),
                    None => None,
                };
                if next
                    .as_ref()
                    .is_some_and(|n| n.exc_type == crate::plugin::TIMEOUT_EXC)
                {
                    // The candidate made the test hang: stopped at the per-test limit.
                    attempt.outcome = AttemptOutcome::Timeout;
                }
                // A different failure (not the same exception at the same place) is progress.
                if let Some(next) = next.filter(|n| is_progress(failure, n)) {
                    attempt.outcome = AttemptOutcome::Progressed;
                    attempt.duration_ms = started.elapsed().as_millis() as u64;
                    self.ctx.attempts.push(attempt);
                    self.ctx
                        .accepted
                        .insert(cand.path.clone(), cand.patched.clone());
                    if let Some((mut steps, after)) = self.work_on(&next, depth + 1)? {
                        steps.insert(0, cand);
                        return Ok(Some((steps, after)));
                    }
                    self.ctx
                        .accepted
                        .insert(cand.path.clone(), previous.clone());
                    self.ws.write(&cand.path, &previous)?;
                    if self.ctx.needs_flush {
                        // Not rejected: worked on again once the pending batch is confirmed.
                        return Ok(None);
                    }
                    self.ctx.tried.reject(failure, &cand.path, &cand.patched);
                    continue;
                }
            }
            attempt.duration_ms = started.elapsed().as_millis() as u64;
            self.ctx.attempts.push(attempt);
            match result {
                Some(after) => {
                    self.ctx
                        .accepted
                        .insert(cand.path.clone(), cand.patched.clone());
                    return Ok(Some((vec![cand], after)));
                }
                None => {
                    if written {
                        self.ws.write(&cand.path, &previous)?;
                    }
                    self.ctx.tried.reject(failure, &cand.path, &cand.patched);
                }
            }
        }
        if let Some(m) = model {
            m.finish(&mut self.ctx);
        }
        Ok(None)
    }
}

/// Whether the candidate's targeted run says the failure is gone (the full run then decides).
pub(super) fn gone(
    failure: &Failure,
    key: &(String, When),
    targeted: &[String],
    verdict: &Verdict,
) -> bool {
    match (verdict, targeted.is_empty()) {
        (Verdict::Green, _) => true,
        (Verdict::Failed(after), true) => !failure_keys(after).contains(key),
        // A subtest's owner ran all its subtests: the proof is this subtest's own outcome
        // (a sibling still failing is judged against the baseline by the full run).
        (Verdict::Failed(after), false)
            if failure
                .test
                .as_deref()
                .is_some_and(traceback::subtest::is_subtest) =>
        {
            !failure_keys(after).contains(key)
        }
        _ => false,
    }
}

/// The failure the targeted test shows with the candidate, when it still fails.
pub(super) fn next_failure(failure: &Failure, verdict: &Verdict) -> Option<Failure> {
    verdict
        .failures()
        .and_then(|f| f.iter().find(|f| f.test == failure.test).cloned())
}

/// The targeted test now fails with another exception or at another place in the project's
/// code. A failing assertion in the test itself is the candidate's wrong result, not progress.
pub(super) fn is_progress(before: &Failure, after: &Failure) -> bool {
    let place = |f: &Failure| f.location.as_ref().map(|l| (l.file.clone(), l.line));
    let in_tests = after.location.as_ref().is_some_and(|l| {
        let parts: Vec<&str> = l.file.split('/').collect();
        traceback::locate::is_test_file(&parts)
    });
    // A hang is no step forward: no rule repairs it; nor is a command that now exits 0 with
    // the wrong output (the candidate's wrong result, like an assertion in a test).
    !in_tests
        && after.exc_type != OUTPUT_CHECK_EXC
        && after.exc_type != crate::plugin::TIMEOUT_EXC
        && (before.exc_type != after.exc_type || place(before) != place(after))
}
