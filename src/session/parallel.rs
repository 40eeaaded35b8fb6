//! Parallel proofs (`--jobs N`): the targeted runs of several candidates for the same failure
//! at once, each in its own scratch copy of the workspace ([`crate::scratch`]), so the
//! project's tree is never written by them; only the session's own, journaled step writes it.
//!
//! The pool only runs; the session decides, in rank order. It submits the next candidates in
//! rank order (at most N waiting or running), then takes the results back in the same order:
//! the result of candidate k is looked at only after every better-ranked candidate was judged
//! and rejected, however early k finished. A candidate that passes its targeted runs goes on
//! to the full suite in the real workspace, as with `--jobs 1`, while the pool keeps proving
//! the next ones. Once one is accepted (or the session stops), the runs still going are
//! stopped (their process groups killed) and their results dropped: they are neither
//! recorded as attempts nor charged to any budget, only counted as pytest runs.
//!
//! Two users: the search ([`search`], its candidates' two targeted runs) and the rules'
//! candidates of one failure after the first was rejected ([`Ahead`], their failing test's
//! run, for `work_on`'s loop).
//!
//! Each worker thread owns one scratch copy, made when the pool starts from the workspace as
//! it is then (the fixes accepted so far included, no candidate written). Before a job the
//! worker writes the candidate's bytes over the file, and after it puts the copy's own bytes
//! back, so every job starts from the same tree. Dropping the pool stops and joins the
//! workers, and with them their copies are removed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::runs::{Phase, Runs};
use super::sources::{self, search};
use super::work::{Fixed, Targeted, Work};
use super::{SessionError, TIME_BUDGET_USED_UP};
use crate::plan::Candidate;
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::scratch::Scratch;
use crate::search::hint::Tier;
use crate::search::Ranked;
use crate::traceback::Failure;
use crate::verdict::{self, Verdict};

/// One candidate's targeted runs.
pub(super) struct Job {
    /// Its place in the candidates' order (the key its result is taken back by).
    pub rank: usize,
    /// The file to write, relative to the root (forward slashes).
    pub file: String,
    pub patched: Vec<u8>,
    /// Runs in order, each only when the one before it was green (the search's "failing
    /// tests, then the passing tests that run the line"). `cwd` and `PYTHONPATH` are replaced
    /// by the scratch copy's.
    pub stages: Vec<RunSpec>,
    /// The time budget's end: each run's limit is cut to what is left of it when the run
    /// starts, not when it was queued (a rule candidate's run, like the workspace's).
    pub deadline: Option<Instant>,
    /// A cause of several tests (see `sources::cause`): its targeted tests. A first run that
    /// made some of them pass goes on to the next stage too, which proves it a lead.
    pub lead: Option<Vec<String>>,
}

/// What a job's runs said, in stage order; each verdict read against the scratch copy.
pub(super) struct Done {
    pub rank: usize,
    pub runs: Vec<(PytestRun, Verdict)>,
    /// A run that could not be made (Ctrl-C included): the session stops as it would with
    /// `--jobs 1`.
    pub error: Option<String>,
    /// The job's wall time in the worker.
    pub took: Duration,
    /// When it started (ms since the epoch), for the attempt record.
    pub started_ms: u64,
    /// The scratch copy it ran in (its path shows in the runs' output).
    pub root: PathBuf,
}

struct Shared {
    queue: Mutex<VecDeque<Job>>,
    ready: Condvar,
    /// Set once: no more jobs, and every run still going ends now.
    stop: Arc<AtomicBool>,
}

/// N workers, each with its scratch copy; see the module docs.
pub(super) struct Pool {
    shared: Arc<Shared>,
    results: mpsc::Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    size: usize,
    /// Results that came back before the session asked for them.
    early: BTreeMap<usize, Done>,
}

impl Pool {
    /// Starts `n` workers on copies of `root`; `None` when a copy cannot be made (the caller
    /// then proves one candidate at a time, in the workspace).
    pub fn new(root: &Path, python: &Interpreter, n: usize) -> Option<Pool> {
        let mut copies = Vec::with_capacity(n);
        for _ in 0..n {
            copies.push(Scratch::copy_of(root).ok()?);
        }
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            stop: Arc::new(AtomicBool::new(false)),
        });
        let (tx, results) = mpsc::channel();
        let workers = copies
            .into_iter()
            .map(|scratch| {
                let shared = Arc::clone(&shared);
                let tx = tx.clone();
                let python = python.clone();
                std::thread::spawn(move || work(&shared, &scratch, &python, &tx))
            })
            .collect();
        Some(Pool {
            shared,
            results,
            workers,
            size: n,
            early: BTreeMap::new(),
        })
    }

    /// How many jobs run at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Queues a job; workers take jobs in the order they were submitted.
    pub fn submit(&self, job: Job) {
        lock(&self.shared.queue).push_back(job);
        self.shared.ready.notify_one();
    }

    /// Waits for the result of the job submitted with `rank` (results of other jobs that come
    /// first are kept for later). `None` only if every worker is gone, which no job causes.
    pub fn take(&mut self, rank: usize) -> Option<Done> {
        loop {
            if let Some(d) = self.early.remove(&rank) {
                return Some(d);
            }
            let d = self.results.recv().ok()?;
            self.early.insert(d.rank, d);
        }
    }

    /// [`Pool::take`], the job's runs counted in the session's tally; a job whose runs could
    /// not be made (Ctrl-C included), or workers gone, stop the session as with `--jobs 1`.
    pub(super) fn take_counted(&mut self, s: &mut Runs, rank: usize) -> Result<Done, SessionError> {
        let Some(mut done) = self.take(rank) else {
            return Err(SessionError::Environment(
                "the parallel proofs' workers ended unexpectedly".into(),
            ));
        };
        for (run, _) in &done.runs {
            s.count_run(run, Phase::Candidate);
        }
        match done.error.take() {
            Some(e) => Err(SessionError::Environment(e)),
            None => Ok(done),
        }
    }

    /// Stops every job still queued or running (their process groups are killed), waits for
    /// the workers (their scratch copies are removed) and returns the results nobody took:
    /// pytest runs that were made and whose verdicts are not used.
    pub fn finish(mut self) -> Vec<Done> {
        self.stop_all();
        let mut left: Vec<Done> = std::mem::take(&mut self.early).into_values().collect();
        left.extend(self.results.try_iter());
        left
    }

    fn stop_all(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        lock(&self.shared.queue).clear();
        self.shared.ready.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A worker: takes jobs until the pool stops.
fn work(shared: &Shared, scratch: &Scratch, python: &Interpreter, tx: &mpsc::Sender<Done>) {
    crate::process::stop_this_thread_with(Arc::clone(&shared.stop));
    let env: (OsString, OsString) = ("PYTHONPATH".into(), scratch.pythonpath().into());
    loop {
        let job = {
            let mut q = lock(&shared.queue);
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Some(j) = q.pop_front() {
                    break j;
                }
                q = shared.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        let done = run_job(job, scratch.root(), &env, python);
        if tx.send(done).is_err() {
            return;
        }
    }
}

fn run_job(job: Job, root: &Path, env: &(OsString, OsString), python: &Interpreter) -> Done {
    let started = Instant::now();
    let started_ms = super::now_ms();
    let mut done = Done {
        rank: job.rank,
        runs: Vec::new(),
        error: None,
        took: Duration::ZERO,
        started_ms,
        root: root.to_path_buf(),
    };
    let path = root.join(&job.file);
    let original = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            done.error = Some(format!(
                "cannot read the scratch copy {}: {e}",
                path.display()
            ));
            return done;
        }
    };
    if let Err(e) = std::fs::write(&path, &job.patched) {
        done.error = Some(format!(
            "cannot write the scratch copy {}: {e}",
            path.display()
        ));
        return done;
    }
    for (stage, mut spec) in job.stages.into_iter().enumerate() {
        spec.cwd = root.to_path_buf();
        spec.env.retain(|(k, _)| k != "PYTHONPATH");
        spec.env.push(env.clone());
        if let Some(deadline) = job.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            spec.timeout = spec.timeout.min(left.max(Duration::from_secs(1)));
        }
        match runner::run_pytest(python, &spec) {
            Ok(run) => {
                let v = verdict::read(&run, root);
                let go_on = !run.timed_out
                    && (matches!(v, Verdict::Green) || (stage == 0 && partly_fixed(&v, &job.lead)));
                done.runs.push((run, v));
                if !go_on {
                    break;
                }
            }
            Err(e) => {
                done.error = Some(e.to_string());
                break;
            }
        }
    }
    // The next job starts from the copy's own bytes.
    if let Err(e) = std::fs::write(&path, &original) {
        done.error.get_or_insert(format!(
            "cannot restore the scratch copy {}: {e}",
            path.display()
        ));
    }
    done.took = started.elapsed();
    done
}

/// Whether a cause's first run made some of its tests pass (see [`Job::lead`]).
fn partly_fixed(v: &Verdict, lead: &Option<Vec<String>>) -> bool {
    lead.as_ref()
        .is_some_and(|t| sources::cause_state::fixed_by(v, t).is_some())
}

impl Work<'_, '_> {
    /// The search's candidates proven with the pool (see the module docs and
    /// [`super::search`]): the same outcome, attempts and reasons as one at a time, in less
    /// wall time.
    pub(super) fn search_parallel(
        &mut self,
        failure: &Failure,
        candidates: Vec<Ranked>,
        state: &search::SearchState,
        mut pool: Pool,
    ) -> Result<Option<Fixed>, SessionError> {
        let window = pool.size();
        let mut ranked = candidates.into_iter().enumerate();
        // Submitted and not yet judged, in rank order: the candidate, its hint, edit size and the
        // tests that cover its line.
        let mut waiting: VecDeque<Waiting> = VecDeque::new();
        let mut stopped: Option<Stop> = None;
        let mut exhausted = false;
        let mut tried = 0usize;
        // As one at a time: a few candidates past the first plausible one, then the choice.
        let mut plausible: Vec<search::Found> = Vec::new();
        let mut extra = 0usize;
        let outcome: Result<(), SessionError> = loop {
            // Judged in rank order: once enough are plausible, the ones still running are not.
            if search::enough(&plausible, extra, state.spectrum) {
                break Ok(());
            }
            // Start the next candidates: the same checks as before each one with --jobs 1.
            while waiting.len() < window && stopped.is_none() && !exhausted {
                if crate::process::interrupted() {
                    break;
                }
                if Instant::now() >= state.deadline {
                    stopped = Some(Stop::SearchTime);
                    break;
                }
                if !self.s.time_for_a_candidate() {
                    stopped = Some(Stop::TimeBudget);
                    break;
                }
                // Half the search time is kept for a second edit on top of a lead.
                if plausible.is_empty() && self.time_to_combine(state.deadline) {
                    stopped = Some(Stop::Combine);
                    break;
                }
                let Some((rank, r)) = ranked.next() else {
                    exhausted = true;
                    break;
                };
                // The same bytes already rejected for this failure cost no run.
                if self.ctx.already_rejected(failure, &r.candidate) {
                    continue;
                }
                let covering = search::covering(state.spectrum, &r);
                let (hint, size) = (r.hint, r.size);
                let cand = search::titled(r, covering.len());
                let (targeted, passing) =
                    search::targets(&self.ctx, failure, &covering, state.spectrum);
                let mut stages = vec![self.targeted_spec(&targeted)];
                if !passing.is_empty() {
                    stages.push(self.s.candidate_spec(self.ws, &passing));
                }
                pool.submit(Job {
                    rank,
                    file: cand.file.clone(),
                    patched: cand.patched.clone(),
                    stages,
                    deadline: None,
                    lead: self.ctx.cause.partial().then(|| targeted.clone()),
                });
                waiting.push_back((rank, cand, hint, size, covering, targeted));
            }
            let Some((rank, cand, hint, size, covering, targeted)) = waiting.pop_front() else {
                break Ok(());
            };
            let done = match pool.take_counted(self.s, rank) {
                Ok(d) => d,
                Err(e) => break Err(e),
            };
            tried += 1;
            if !plausible.is_empty() {
                extra += 1;
            }
            if let Err(e) = self.judge_done(
                failure,
                (rank, cand, hint, size, covering, targeted),
                done,
                &mut plausible,
            ) {
                break Err(e);
            }
        };
        // The runs still going are stopped; what they ran counts as pytest runs, nothing else.
        for done in pool.finish() {
            for (run, _) in &done.runs {
                self.s.count_run(run, Phase::Candidate);
            }
        }
        outcome?;
        if plausible.is_empty() {
            // Candidates started before the time was up were judged: they count as tried.
            self.ctx.reason = Some(match stopped {
                Some(Stop::SearchTime) => search::out_of_search_time(state.why, tried, self.s.opts),
                Some(Stop::TimeBudget) => TIME_BUDGET_USED_UP.into(),
                Some(Stop::Combine) | None => {
                    search::none_passed(state.why, tried, self.ctx.prechecked.test_literals)
                }
            });
            if matches!(stopped, Some(Stop::Combine) | None) {
                // No single edit fixed the cause: its best lead with a second edit (one at a
                // time, in the workspace, as with --jobs 1).
                return self.combine_lead(failure, state.why, state.test, state.deadline);
            }
            return Ok(None);
        }
        self.keep_best(state.test, state.spectrum, plausible, state.first_attempt)
    }

    /// Judges one candidate's parallel runs as one at a time would: a plausible one joins
    /// `plausible`; a cause's candidate that made some of its tests pass, with the passing tests
    /// that run its line still passing (their run went on for it, see [`Job::lead`]), is a lead.
    fn judge_done(
        &mut self,
        failure: &Failure,
        (_, cand, hint, size, covering, targeted): Waiting,
        done: Done,
        plausible: &mut Vec<search::Found>,
    ) -> Result<(), SessionError> {
        let mut runs = done.runs.into_iter();
        let Some((first, first_verdict)) = runs.next() else {
            return Err(SessionError::Environment(
                "a parallel proof made no run".into(),
            ));
        };
        let green = !first.timed_out && matches!(first_verdict, Verdict::Green);
        let second = runs.next().map(|(run, v)| (!run.timed_out, v));
        let lead = self
            .fixed_by(&first, &first_verdict, &targeted)
            .filter(|_| match &second {
                Some((ended, v)) => *ended && matches!(v, Verdict::Green),
                None => true,
            });
        let neighbours = match second {
            Some((_, v)) if green => Some(v),
            // No passing test runs the line: nothing to break there.
            None if green => Some(Verdict::Green),
            _ => None,
        };
        let said = self
            .ctx
            .cause
            .partial()
            .then(|| sources::cause_state::still_failing_said(&first_verdict))
            .flatten();
        let t = Targeted {
            tests: targeted.clone(),
            first,
            first_verdict,
            neighbours,
            spent: done.took,
            started_ms: Some(done.started_ms),
        };
        match self.judge(failure, &cand, hint, t, false)? {
            Some(after) => {
                if let Some(test) = failure.test.as_deref().filter(|_| plausible.is_empty()) {
                    sources::limits::tighten_for_runners_up(self.s, test);
                }
                plausible.push(search::Found::new(self, cand, after, covering, size)?)
            }
            None => {
                self.cause_still_failing(said);
                if let Some(fixed) = lead {
                    self.keep_lead(&cand, fixed);
                }
            }
        }
        Ok(())
    }
}

/// Why no more candidates were started.
enum Stop {
    SearchTime,
    TimeBudget,
    /// Half the search time is left, and there is a lead to combine.
    Combine,
}

/// A submitted candidate not yet judged: its rank, itself, its hint, edit size, the tests that
/// cover its line and its targeted tests.
type Waiting = (usize, Candidate, Tier, usize, Vec<String>, Vec<String>);

/// The rules' candidates of one failure with `--jobs N`, once the first was rejected (the
/// first, mostly the one kept, costs no copy): their targeted runs go to the pool ahead of
/// the candidate loop in `work_on`, which still judges them one by one in rank order and
/// takes candidate k's run from here instead of making it in the workspace (see the module
/// docs). Only the targeted run is made ahead: the group's and the full run of a
/// candidate that passes, and the targeted run of one that moved the failure elsewhere (its
/// new failure is worked on next), are made in the workspace as with `--jobs 1`.
pub(super) struct Ahead {
    pool: Pool,
    /// Submitted and not yet taken, by rank.
    queued: BTreeSet<usize>,
    /// The first rank not yet looked at for submission.
    next: usize,
}

impl Ahead {
    /// A pool for the candidates from rank `from` on (the loop's current one, its budget
    /// already charged) when `--jobs` > 1 and at least two of them would be proven here (they
    /// name a test, are no repeats, and come before the first that edits a file of the pending
    /// batch, where the loop stops; as many as the budget reaches); `None` otherwise, with no
    /// copy made. The copies are the workspace as it is now: the fixes kept so far, no
    /// candidate.
    pub fn start(
        w: &Work,
        failure: &Failure,
        candidates: &[Candidate],
        from: usize,
    ) -> Option<Ahead> {
        // A command judge (--cmd) is not pytest, and a failure without a test id is only seen
        // in a full run: both stay in the workspace.
        if w.s.opts.jobs < 2 || w.s.opts.judge.is_some() || failure.test.is_none() {
            return None;
        }
        let provable = candidates
            .iter()
            .skip(from)
            .take_while(|c| !w.ctx.batch_files.contains(&c.file))
            .filter(|c| {
                w.ctx
                    .tried
                    .rejected_for(failure, &c.path, &c.patched)
                    .is_none()
            })
            .count();
        let reachable = super::sources::MAX_RULE_RANK.saturating_sub(from);
        let n = w.s.opts.jobs.min(provable).min(reachable);
        if n < 2 {
            return None;
        }
        Some(Ahead {
            pool: Pool::new(w.ws.root(), &w.s.python, n)?,
            queued: BTreeSet::new(),
            next: from,
        })
    }

    /// Submits the candidates from rank `from` on (the loop's current one, its budget already
    /// charged), in rank order, while fewer than N wait and the budget and the time budget
    /// could still reach them; with the same checks the loop makes before each candidate.
    pub fn fill(&mut self, w: &Work, failure: &Failure, candidates: &[Candidate], from: usize) {
        self.queued.retain(|&r| r >= from);
        self.next = self.next.max(from);
        let reachable = super::sources::MAX_RULE_RANK.saturating_sub(from);
        while self.next < candidates.len()
            && self.next < super::sources::MAX_RULE_RANK
            && self.queued.len() < self.pool.size().min(reachable)
            && !crate::process::interrupted()
            && w.s.time_for_a_candidate()
        {
            let c = &candidates[self.next];
            if w.ctx.batch_files.contains(&c.file) {
                // The loop stops at this one.
                self.next = candidates.len();
                break;
            }
            let rank = self.next;
            self.next += 1;
            if w.ctx
                .tried
                .rejected_for(failure, &c.path, &c.patched)
                .is_some()
            {
                continue;
            }
            let targeted: Vec<String> = failure.test.iter().cloned().collect();
            self.pool.submit(Job {
                rank,
                file: c.file.clone(),
                patched: c.patched.clone(),
                stages: vec![w.s.spec(&*w.ws, &targeted, &[])],
                deadline: Some(w.s.deadline),
                lead: None,
            });
            self.queued.insert(rank);
        }
    }

    /// Candidate `rank`'s targeted run and its verdict, when it was submitted (waiting for it
    /// if it is still running); counted as a run. Paths of the scratch copy in the output and
    /// in the failures' messages read as the workspace's, as the same run there would print.
    pub fn take(
        &mut self,
        w: &mut Work,
        rank: usize,
    ) -> Result<Option<(PytestRun, Verdict)>, SessionError> {
        if !self.queued.remove(&rank) {
            return Ok(None);
        }
        let done = self.pool.take_counted(w.s, rank)?;
        let Some((mut run, verdict)) = done.runs.into_iter().next() else {
            return Err(SessionError::Environment(
                "a parallel proof made no run".into(),
            ));
        };
        let from = done.root.to_string_lossy().into_owned();
        let to = w.ws.root().to_string_lossy().into_owned();
        run.stdout = replace(&run.stdout, from.as_bytes(), to.as_bytes());
        run.stderr = replace(&run.stderr, from.as_bytes(), to.as_bytes());
        let verdict = match verdict {
            Verdict::Failed(mut failures) => {
                for f in &mut failures {
                    f.msg = f.msg.replace(&from, &to);
                }
                Verdict::Failed(failures)
            }
            Verdict::Error(m) => Verdict::Error(m.replace(&from, &to)),
            Verdict::Usage(m) => Verdict::Usage(m.replace(&from, &to)),
            v => v,
        };
        Ok(Some((run, verdict)))
    }

    /// Stops what still runs (see [`Pool::finish`]); the runs made count as pytest runs.
    pub fn finish(self, s: &mut Runs) {
        for done in self.pool.finish() {
            for (run, _) in &done.runs {
                s.count_run(run, Phase::Candidate);
            }
        }
    }
}

/// `bytes` with every `from` replaced by `to` (the rest byte for byte, UTF-8 or not).
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::replace;

    #[test]
    fn replace_swaps_every_copy_path_and_keeps_other_bytes() {
        let out = b"E   FileNotFoundError: '/tmp/s1/p/data.csv'\n\xff /tmp/s1/p\n/tmp/s1/px";
        assert_eq!(
            replace(out, b"/tmp/s1/p", b"/home/u/proj"),
            b"E   FileNotFoundError: '/home/u/proj/data.csv'\n\xff /home/u/proj\n/home/u/projx"
                .to_vec()
        );
        assert_eq!(replace(b"abc", b"", b"x"), b"abc".to_vec());
    }
}
