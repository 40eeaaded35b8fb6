//! The attempt loop: the baseline, then each failure in turn (biggest crash-site group first),
//! worked on through [`super::work`], until the queue is empty, the time budget is used up or
//! the run is interrupted.

use super::*;

/// The loop itself, in any workspace. Returns the report; the caller keeps or rolls back.
pub fn run_loop(
    opts: &Options,
    rules: &RuleSet,
    python: Interpreter,
    ws: &mut dyn Workspace,
    started: Instant,
) -> Result<Report, SessionError> {
    let root = opts.root.path();
    let run_id = run_id();
    let mut s = Runs {
        stdlib: Stdlib::new(python.clone()),
        python,
        opts,
        count: 0,
        total: Duration::ZERO,
        timeout: opts.timeout.unwrap_or(runner::DEFAULT_TIMEOUT),
        attempt_no: 0,
        deadline: started + opts.time_budget,
        baseline: Duration::ZERO,
        phases: Phases::default(),
        deselect: Vec::new(),
        installed: Vec::new(),
        last_mismatch: None,
        llm: opts.llm.clone().map(crate::llm::Llm::new),
        facts: Default::default(),
    };
    let selection = match &opts.test {
        Some(t) => Some(s.resolve_selection(ws, t)?),
        None => None,
    };
    // A test stuck where the per-test timer cannot reach it (in C code) ends the whole run
    // through the plugin's backstop: it is reported, left out of every later run, and the
    // baseline is taken again so that the other failures are still worked on.
    let mut hung = Vec::new();
    crate::progress::phase("running the test suite (baseline)");
    let baseline = loop {
        let run = s.run(ws, &[], Phase::Baseline)?;
        match &run.hang {
            Some(h) if hung.len() < MAX_HARD_HANGS && !s.deselect.contains(&h.test) => {
                s.deselect.push(h.test.clone());
                hung.push(h.clone());
            }
            _ => break run,
        }
    };
    s.baseline = baseline.duration;
    // The baseline is read once: its failures are both the reference set and, without a log,
    // the failures to work on.
    let baseline_failures = match s.read(&baseline, ws.root()) {
        Verdict::Green => Vec::new(),
        Verdict::Failed(f) => f,
        Verdict::NoTests => {
            return Err(SessionError::NoTests(format!(
                "no tests were collected under {}{}",
                root.display(),
                if opts.pytest_args.is_empty() {
                    String::new()
                } else {
                    format!(" with pytest arguments `{}`", opts.pytest_args.join(" "))
                }
            )))
        }
        Verdict::Usage(m) => {
            return Err(SessionError::BadInput(format!(
                "pytest refused the run: {m}"
            )))
        }
        Verdict::Error(m) => {
            return Err(SessionError::Pytest(format!(
                "the baseline run gave no verdict: {m}"
            )))
        }
        Verdict::TimedOut => {
            let what = if opts.judge.is_some() {
                "the command"
            } else {
                "the test suite"
            };
            return Err(SessionError::Pytest(if s.out_of_time() {
                format!(
                    "{what} did not finish within the time budget of {} s (--time-budget)",
                    opts.time_budget.as_secs()
                )
            } else {
                format!(
                    "{what} did not finish within {} s (--timeout)",
                    s.timeout.as_secs()
                )
            }));
        }
    };
    if opts.timeout.is_none() {
        // Candidates may slow a test down, but a hang must not cost 10 minutes a try.
        s.timeout =
            (baseline.duration * 10).clamp(Duration::from_secs(30), runner::DEFAULT_TIMEOUT);
    }
    // A test that hung in the baseline would cost the per-test limit in every later run; it
    // is reported from the baseline and left out from here on.
    for f in &baseline_failures {
        if let Some(t) = f
            .test
            .as_ref()
            .filter(|_| f.exc_type == crate::plugin::TIMEOUT_EXC)
        {
            if !s.deselect.contains(t) {
                s.deselect.push(t.clone());
            }
        }
    }
    // A conftest that cannot be imported hides the whole suite: what fails behind it is only
    // known once it is fixed, and is then worked on like the rest.
    let mut blind = !baseline_failures.is_empty() && baseline_failures.iter().all(is_conftest);
    let mut current = failure_keys(&baseline_failures);
    let targets: Vec<Failure> = match &opts.log {
        Some(bytes) => {
            traceback::parse(bytes, root)
                .map_err(|e| SessionError::BadInput(format!("log: {e}")))?
                .failures
        }
        None => baseline_failures,
    };
    let selected = |f: &Failure| {
        selection
            .as_ref()
            .is_none_or(|ids| f.test.as_ref().is_some_and(|t| ids.contains(t)))
    };
    // Biggest crash-site group first; each group is worked on through one representative.
    let (mut groups, ordered) =
        groups::Groups::build(targets.into_iter().filter(|f| selected(f)).collect());
    // The report lists the failures in this order, whenever a batch decided them.
    let order: BTreeMap<(String, When), usize> = ordered
        .iter()
        .enumerate()
        .map(|(i, f)| (failure_key(f), i))
        .collect();
    let mut queue: VecDeque<Failure> = ordered.into();
    let nothing_failed = queue.is_empty();

    let mut outcomes: Vec<FailureOutcome> = hung
        .iter()
        .map(|h| {
            let (file, line, func) = hang_place(h, ws.root());
            FailureOutcome {
                test: Some(h.test.clone()),
                when: match h.when.as_str() {
                    "setup" => When::Setup,
                    "teardown" => When::Teardown,
                    _ => When::Call,
                },
                file,
                line,
                func,
                exc_type: crate::plugin::TIMEOUT_EXC.to_string(),
                msg: format!(
                "the test did not finish within {} s (selfdebug's per-test limit, --test-timeout)",
                opts.test_timeout.as_secs_f64()
            ),
                category: Category::Timeout,
                status: FailureStatus::TimedOut,
                reason: Some(format!(
                    "{}; it was left out of every later run (--deselect)",
                    h.describe()
                )),
                probe: None,
                output_check: None,
                suspicious: Vec::new(),
                group: None,
            }
        })
        .collect();
    let mut attempts = Vec::new();
    // Proven content per file (the file's bytes with every accepted fix).
    let mut accepted: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    let mut accepted_cands: Vec<Candidate> = Vec::new();
    let mut out_of_time = false;
    let mut worked_on = 0;
    // Where a failure was before a kept patch moved it (see below).
    let mut first_place: BTreeMap<(String, When), (String, u32)> = BTreeMap::new();
    let mut tried = Tried::default();
    // Fixes kept tentatively, confirmed together by one full run (see [`batch`]).
    let mut pending = batch::Batch::default();
    // Failures whose fix the batch's fallback dropped: worked on again, confirmed alone.
    let mut no_defer: BTreeSet<(String, When)> = BTreeSet::new();
    // Confirms the pending fixes and brings the loop's state up to date.
    macro_rules! settle {
        () => {{
            let mut st = batch::Settle {
                queue: &mut queue,
                current: &mut current,
                first_place: &mut first_place,
                accepted_cands: &mut accepted_cands,
                outcomes: &mut outcomes,
                groups: &mut groups,
                no_defer: &mut no_defer,
                tried: &mut tried,
                out_of_time: &mut out_of_time,
            };
            pending.settle(&mut s, ws, &mut attempts, &mut accepted, &mut st)?;
        }};
    }
    loop {
        if runner::interrupted() {
            break;
        }
        let Some(failure) = queue.pop_front() else {
            if pending.is_empty() {
                break;
            }
            // Dropped fixes put their failures back in the queue.
            settle!();
            continue;
        };
        worked_on += 1;
        crate::progress::failure(worked_on, worked_on + queue.len(), failure.test.as_deref());
        let (category, mut suggestion) = category::categorize(&failure, root);
        let mut outcome = outcome_of(&failure, category);
        let group = groups.index(&failure);
        outcome.group = group;
        // A test of a group whose fix is pending is decided with it.
        if let Some(entry) = group.and_then(|g| pending.of_group(g)) {
            entry.members.push(failure);
            continue;
        }
        if let Some((file, line)) = first_place.get(&failure_key(&failure)) {
            outcome.file = Some(file.clone());
            outcome.line = Some(*line);
        }
        if failure.exc_type == OUTPUT_CHECK_EXC {
            // The command has one failure at a time: the last run's is this one.
            outcome.output_check = s.last_mismatch.clone();
            // Without a traceback no rule applies: the search over small edits looks at what
            // the command ran, and the model (when asked for) gets the command, the expected
            // output and the script as its specification.
            if (s.llm.is_none() && !search::takes_output(&s)) || opts.safe_only {
                outcome.status = FailureStatus::NotFixed;
                outcome.reason = Some(format!(
                    "{}; without a traceback no rule applies: only the LLM fallback (--llm) \
                     can work on wrong output",
                    failure.msg
                ));
                outcomes.push(outcome);
                continue;
            }
        }
        if category == Category::Dependency && opts.install_missing {
            if let Some(after) = s.install_missing(ws, &failure, &mut suggestion)? {
                // The same test (or the command) failing differently now, and failures that
                // the missing module hid, are work like the rest.
                let key = failure_key(&failure);
                queue.extend(
                    after
                        .iter()
                        .filter(|f| {
                            (failure_key(f) == key || !current.contains(&failure_key(f)))
                                && selected(f)
                        })
                        .cloned(),
                );
                current = failure_keys(&after);
                let gone = !after.iter().any(|f| {
                    failure_key(f) == key && f.exc_type == failure.exc_type && f.msg == failure.msg
                });
                if gone {
                    let i = s.installed.last();
                    outcome.status = FailureStatus::Installed;
                    outcome.reason = i.map(|i| {
                        format!(
                            "installed {} with pip for the missing module `{}`; the failure \
                             is gone",
                            i.distribution, i.module
                        )
                    });
                    outcomes.push(outcome);
                    continue;
                }
            }
        }
        if matches!(category, Category::Environment | Category::Dependency) {
            outcome.status = FailureStatus::Escalated;
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        // A test stopped by the per-test limit is never patched by a rule (no rule knows why
        // a loop never ends); with --llm the model gets it, with the frame it was stuck in.
        let to_the_model = s.llm.is_some() && !opts.safe_only && failure.location.is_some();
        // The search looks at the loop it was stuck in (a loop variable that never moves).
        let to_the_search = failure.location.is_some() && search::takes_hangs(&s);
        if category == Category::Timeout && !to_the_model && !to_the_search {
            outcome.status = FailureStatus::TimedOut;
            outcome.reason = suggestion;
            outcomes.push(outcome);
            continue;
        }
        if let Some(test) = failure
            .test
            .as_ref()
            .filter(|_| category != Category::Timeout)
        {
            // (A hung test is left out of later runs: its absence there proves nothing.)
            if !accepted_cands.is_empty() && !current.iter().any(|(t, _)| t == test) {
                outcome.status = FailureStatus::FixedByAnotherPatch;
                outcomes.push(outcome);
                continue;
            }
        }
        // A group whose representative no candidate fixed: the others share its crash site,
        // its probe and its candidates, so they share its outcome too.
        if let Some(g) = group.filter(|g| groups.worked_on(*g)) {
            let rep = groups.list[g].representative.clone();
            let done = outcomes
                .iter()
                .find(|o| o.group == Some(g) && o.test == rep && o.test.is_some())
                .filter(|o| o.status != FailureStatus::Fixed)
                .map(|o| (o.status, o.reason.clone()));
            if let Some((status, reason)) = done {
                outcome.status = status;
                outcome.reason = Some(format!(
                    "same crash site as {}, worked on for the group: {}",
                    rep.as_deref().unwrap_or("?"),
                    reason.as_deref().unwrap_or("no candidate passed")
                ));
                outcomes.push(outcome);
                continue;
            }
        }
        if s.out_of_time() {
            out_of_time = true;
            outcome.status = FailureStatus::NotFixed;
            outcome.reason = Some(TIME_BUDGET_USED_UP.into());
            outcomes.push(outcome);
            continue;
        }
        // A failure that is not independent of the pending fixes waits for their full run.
        let key = failure_key(&failure);
        if !pending.is_empty()
            && (!pending.independent(&failure)
                || blind
                || opts.judge.is_some()
                || no_defer.contains(&key))
        {
            queue.push_front(failure);
            worked_on -= 1;
            settle!();
            continue;
        }
        // Defer the full run when a batch is pending, or when another independent failure
        // waits that could share it.
        let defer = !pending.is_empty()
            || (opts.judge.is_none()
                && !blind
                && failure.test.is_some()
                && !no_defer.contains(&key)
                && queue
                    .iter()
                    .any(|f| batch::could_share(f, &failure, &current, root)));
        // The group's other tests still failing: one targeted run proves a candidate on them.
        let others: Vec<String> = match group {
            Some(g) => {
                if !groups.worked_on(g) {
                    groups.represent(g, &failure);
                }
                groups
                    .others(g, &failure)
                    .into_iter()
                    .filter(|t| current.iter().any(|(c, _)| c == t))
                    .collect()
            }
            None => Vec::new(),
        };
        // The timeout category's own budget is 0 (nothing to patch by rule); the model's tries
        // count against the logic budget instead.
        let budget_of = match category {
            Category::Timeout => Category::Logic,
            other => other,
        };
        let mut budget = opts.max_attempts.min(opts.budgets.get(budget_of));
        let proven_before = accepted.clone();
        let fixed_keys: Vec<(String, When)> = std::iter::once(key.clone())
            .chain(current.iter().filter(|(t, _)| others.contains(t)).cloned())
            .collect();
        let ctx = Step {
            rules,
            current: &current,
            blind,
            category,
            budget: &mut budget,
            attempts: &mut attempts,
            accepted: &mut accepted,
            first_probe: None,
            reason: None,
            flaky: false,
            suspicious: Vec::new(),
            tried: &mut tried,
            repeats: None,
            group: others,
            group_key: group.and_then(|g| groups.list[g].key.clone()),
            defer,
            batch_files: &pending.files,
            needs_flush: false,
            deferred: None,
        };
        let mut work = Work {
            s: &mut s,
            ws: &mut *ws,
            ctx,
        };
        let result = work.work_on(&failure, 0)?;
        let mut ctx = work.ctx;
        let (needs_flush, deferred) = (ctx.needs_flush, ctx.deferred);
        if needs_flush {
            // Worked on again once the pending fixes are confirmed (nothing was rejected).
            if let Some(g) = group {
                groups.release(g);
            }
            queue.push_front(failure);
            worked_on -= 1;
            settle!();
            continue;
        }
        outcome.probe = ctx.first_probe.take();
        outcome.suspicious = std::mem::take(&mut ctx.suspicious);
        let repeats = ctx.repeats.take();
        let reason = ctx.reason.take().or_else(|| {
            repeats.as_ref().map(|(n, test)| {
                format!(
                    "no candidate passed; {n} candidate{} already rejected for {} with the same \
                     failure {} not tried again",
                    if *n == 1 { "" } else { "s" },
                    test.as_deref().unwrap_or("another failure"),
                    if *n == 1 { "was" } else { "were" }
                )
            })
        });
        let flaky = ctx.flaky;
        if flaky {
            // A flaky representative proves nothing about the others: the next one represents.
            if let Some(g) = group {
                groups.release(g);
            }
        }
        match result {
            Some((steps, _)) if deferred.is_some() => {
                outcome.status = FailureStatus::Fixed;
                let entry = batch::Entry::new(
                    failure,
                    outcome,
                    group,
                    steps,
                    fixed_keys,
                    deferred.unwrap_or_default(),
                    &proven_before,
                    &accepted,
                );
                pending.add(entry, &current);
                continue;
            }
            Some((steps, after)) => {
                let after_keys = failure_keys(&after);
                batch::absorb(&after, &mut queue, &mut first_place);
                if blind {
                    // The suite can now be seen: what fails in it is work, not breakage.
                    queue.extend(
                        after
                            .into_iter()
                            .filter(|f| !current.contains(&failure_key(f)) && selected(f)),
                    );
                    blind = false;
                }
                current = after_keys;
                accepted_cands.extend(steps);
                outcome.status = FailureStatus::Fixed;
            }
            None => {
                out_of_time |= reason.as_deref() == Some(TIME_BUDGET_USED_UP);
                outcome.status = match reason.as_deref() {
                    _ if flaky => FailureStatus::Flaky,
                    _ if category == Category::Timeout => FailureStatus::TimedOut,
                    Some(r) if r.contains("--safe-only") => FailureStatus::SkippedUnsafe,
                    Some(_) if ctx_tried(&attempts, &failure) == 0 && repeats.is_none() => {
                        FailureStatus::NoCandidate
                    }
                    _ => FailureStatus::NotFixed,
                };
                outcome.reason = reason.or(Some("no candidate passed".into()));
            }
        }
        outcomes.push(outcome);
    }
    if !pending.is_empty() {
        // Interrupted: the pending fixes are undone, unconfirmed.
        settle!();
    }
    // A patch proven for a later failure may have fixed an earlier one as well.
    if !accepted_cands.is_empty() {
        for o in &mut outcomes {
            let unfixed = matches!(
                o.status,
                FailureStatus::NotFixed | FailureStatus::NoCandidate | FailureStatus::SkippedUnsafe
            );
            let gone = o
                .test
                .as_ref()
                .is_some_and(|t| !current.iter().any(|(c, w)| c == t && *w == o.when));
            if unfixed && gone {
                o.status = FailureStatus::FixedByAnotherPatch;
                o.reason = None;
            }
        }
    }
    // After the hard hangs, in the order they were worked on (failures found later last).
    let hangs = hung.len().min(outcomes.len());
    outcomes[hangs..].sort_by_key(|o| {
        let key = (o.test.clone().unwrap_or_default(), o.when);
        order.get(&key).copied().unwrap_or(usize::MAX)
    });
    groups.settle(&outcomes);
    let patches = accepted_cands
        .iter()
        .map(|c| Patch {
            file: c.file.clone(),
            rules: vec![c.fix.rule.clone()],
            titles: vec![c.fix.title.clone()],
            safe: c.safe,
            applicability: Applicability::of(c.safe),
            source: c.source,
            review: match c.source {
                Source::Llm => vec![llm::REVIEW.to_string()],
                _ => review_notes(rules, std::slice::from_ref(&c.fix.rule))
                    .into_iter()
                    .chain(search::review(&c.fix))
                    .collect(),
            },
            validated: true,
            diff: c.diff.clone(),
            diff_encoding: c.diff_encoding,
        })
        .collect();
    let mut notes = opts.notes.clone();
    // Runs that went cold although the worker was on, and why.
    notes.extend(crate::worker::take_notes());
    if out_of_time {
        notes.push(format!(
            "the time budget of {} s was used up: failures not tried are reported as not fixed \
             (raise it with --time-budget)",
            opts.time_budget.as_secs()
        ));
    }
    Ok(Report {
        failures: outcomes,
        attempts,
        patches,
        pytest_runs: s.count,
        pytest_ms: s.total.as_millis() as u64,
        duration_ms: started.elapsed().as_millis() as u64,
        nothing_failed,
        rollback: false,
        dry_run: opts.dry_run,
        validated: true,
        run_id,
        backups: Vec::new(),
        phases: s.phases,
        root: opts.root.path().to_string_lossy().into_owned(),
        notes,
        out_of_time,
        judge: judge_name(opts),
        command: opts.judge.as_ref().map(|j| j.line.clone()),
        installed: s.installed,
        llm: s.llm.as_ref().map(|l| l.usage()),
        groups: groups.list,
    })
}

/// Where a hard hang was stuck: the file relative to `root` (when under it), line, function.
pub(super) fn hang_place(
    h: &crate::plugin::Hang,
    root: &Path,
) -> (Option<String>, Option<u32>, Option<String>) {
    let Some(frame) = h.frame() else {
        return (None, None, None);
    };
    let (place, func) = match frame.split_once(" in ") {
        Some((p, f)) => (p.to_string(), Some(f.to_string())),
        None => (frame.clone(), None),
    };
    let Some((file, line)) = place.rsplit_once(':') else {
        return (None, None, func);
    };
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let file = Path::new(file)
        .strip_prefix(&real)
        .or_else(|_| Path::new(file).strip_prefix(root))
        .map_or_else(|_| file.to_string(), |p| p.to_string_lossy().into_owned());
    (Some(file), line.parse().ok(), func)
}

/// `pytest` or `command`: which judge proved the run (the JSON's `judge`).
pub(super) fn judge_name(opts: &Options) -> Judge {
    if opts.judge.is_some() {
        Judge::Command
    } else {
        Judge::Pytest
    }
}

pub(super) fn ctx_tried(attempts: &[Attempt], failure: &Failure) -> usize {
    attempts.iter().filter(|a| a.test == failure.test).count()
}
