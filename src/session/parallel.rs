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

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::error::SessionError;
use super::prover::Phase;
use super::runs::Runs;
use crate::runner::{self, Interpreter, PytestRun, RunSpec};
use crate::scratch::Scratch;
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
    pub error: Option<SessionError>,
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
            return Err(SessionError::WorkersEnded);
        };
        for (run, _) in &done.runs {
            s.prover.count_run(run, Phase::Candidate);
        }
        match done.error.take() {
            Some(e) => Err(e),
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
    let started_ms = super::shared::now_ms();
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
            done.error = Some(SessionError::ScratchFile {
                action: "read",
                path,
                source: e,
            });
            return done;
        }
    };
    if let Err(e) = std::fs::write(&path, &job.patched) {
        done.error = Some(SessionError::ScratchFile {
            action: "write",
            path,
            source: e,
        });
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
                done.error = Some(SessionError::Runner(e));
                break;
            }
        }
    }
    // The next job starts from the copy's own bytes.
    if let Err(e) = std::fs::write(&path, &original) {
        done.error.get_or_insert(SessionError::ScratchFile {
            action: "restore",
            path,
            source: e,
        });
    }
    done.took = started.elapsed();
    done
}

/// Whether a cause's first run made some of its tests pass (see [`Job::lead`]).
fn partly_fixed(v: &Verdict, lead: &Option<Vec<String>>) -> bool {
    lead.as_ref()
        .is_some_and(|t| super::cause_state::fixed_by(v, t).is_some())
}

/// `bytes` with every `from` replaced by `to` (the rest byte for byte, UTF-8 or not).
pub(super) fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
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
