//! `--jobs N`: candidates replayed N at a time, each job with its own handle on the
//! repository (git2's are not shared between threads); results in the history's order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use git2::Repository;

use super::commit::{replay_one, CommitReport, Context};
use super::history::Candidate;

/// Replays every candidate (newest first) until done or interrupted.
pub fn run_all(ctx: &Context, candidates: &[Candidate], jobs: usize) -> Vec<CommitReport> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CommitReport>>> = Mutex::new(vec![None; candidates.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(candidates.len()) {
            s.spawn(|| {
                let Ok(repo) = Repository::open(&ctx.git_dir) else {
                    return;
                };
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= candidates.len() || crate::process::interrupted() {
                        return;
                    }
                    let r = replay_one(ctx, &repo, &candidates[i], i + 1);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
