//! The replay's output: a table for people (one line per candidate, then the totals) and one
//! JSON object (schema/replay.schema.json).

use serde::Serialize;

use super::commit::CommitReport;
use super::history::Skipped;
use super::reproduce::NotReproducible;
use super::score::{reason_word, status_word, Miss, Reason, Status};
use super::{Options, Replay, SCHEMA_VERSION};

/// The counts over all candidates.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub scanned: usize,
    pub skipped: Skipped,
    pub candidates: usize,
    pub reproduced: usize,
    pub not_reproducible: NotReproducibleCounts,
    /// Plausible patches, the correct ones included.
    pub plausible: usize,
    pub correct: usize,
    pub partial: usize,
    pub damaged: usize,
    pub missed: MissCounts,
    pub errors: usize,
    /// `fix` runs' pytest runs, summed.
    pub pytest_runs: u64,
    /// The median of the `fix` runs' durations (null: none ran).
    pub median_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct NotReproducibleCounts {
    pub no_test_file: usize,
    pub collection_error: usize,
    pub missing_dependency: usize,
    pub no_tests: usize,
    pub passes_on_bug: usize,
    pub fails_on_fix: usize,
    pub timed_out: usize,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct MissCounts {
    pub no_candidate: usize,
    pub not_in_space: usize,
    pub budget: usize,
    pub escalated: usize,
}

impl MissCounts {
    pub fn total(&self) -> usize {
        self.no_candidate + self.not_in_space + self.budget + self.escalated
    }
}

/// The totals of a replay.
pub fn totals(r: &Replay) -> Totals {
    let mut t = Totals {
        scanned: r.scanned,
        skipped: r.skipped,
        candidates: r.commits.len(),
        ..Totals::default()
    };
    let mut times = Vec::new();
    for c in &r.commits {
        if let Some(fix) = &c.fix {
            times.push(fix.duration_ms);
            t.pytest_runs += fix.pytest_runs;
        }
        if !c.selection.is_empty() {
            t.reproduced += 1;
        }
        match (c.status, c.reason) {
            (Status::NotReproducible, Some(Reason::NotReproducible(why))) => {
                let n = &mut t.not_reproducible;
                *match why {
                    NotReproducible::NoTestFile => &mut n.no_test_file,
                    NotReproducible::CollectionError => &mut n.collection_error,
                    NotReproducible::MissingDependency => &mut n.missing_dependency,
                    NotReproducible::NoTests => &mut n.no_tests,
                    NotReproducible::PassesOnBug => &mut n.passes_on_bug,
                    NotReproducible::FailsOnFix => &mut n.fails_on_fix,
                    NotReproducible::TimedOut => &mut n.timed_out,
                } += 1;
            }
            (Status::Missed, Some(Reason::Miss(why))) => {
                let m = &mut t.missed;
                *match why {
                    Miss::NoCandidate => &mut m.no_candidate,
                    Miss::NotInSpace => &mut m.not_in_space,
                    Miss::Budget => &mut m.budget,
                    Miss::Escalated => &mut m.escalated,
                } += 1;
            }
            (Status::Correct, _) => {
                t.correct += 1;
                t.plausible += 1;
            }
            (Status::Plausible, _) => t.plausible += 1,
            (Status::Partial, _) => t.partial += 1,
            (Status::Damaged, _) => t.damaged += 1,
            _ => t.errors += 1,
        }
    }
    times.sort_unstable();
    t.median_ms = match times.len() {
        0 => None,
        n if n % 2 == 1 => Some(times[n / 2]),
        n => Some((times[n / 2 - 1] + times[n / 2]) / 2),
    };
    t
}

/// The one JSON object of `replay --json`.
pub fn json(r: &Replay, opts: &Options, exit_code: i32) -> String {
    #[derive(Serialize)]
    struct Settings<'a> {
        range: Option<&'a str>,
        since: Option<&'a str>,
        max: Option<usize>,
        max_lines: usize,
        max_files: usize,
        jobs: usize,
        fix_args: &'a [String],
    }
    #[derive(Serialize)]
    struct Doc<'a> {
        schema_version: u32,
        exit_code: i32,
        repository: String,
        project: String,
        python: Option<String>,
        cache_dir: Option<String>,
        interrupted: bool,
        settings: Settings<'a>,
        totals: Totals,
        commits: &'a [CommitReport],
    }
    let doc = Doc {
        schema_version: SCHEMA_VERSION,
        exit_code,
        repository: r.repository.display().to_string(),
        project: r.project.display().to_string(),
        python: r.python.as_ref().map(|p| p.display().to_string()),
        cache_dir: r.cache_dir.as_ref().map(|p| p.display().to_string()),
        interrupted: r.interrupted,
        settings: Settings {
            range: opts.walk.range.as_deref(),
            since: opts.walk.since.as_deref(),
            max: opts.walk.max,
            max_lines: opts.walk.max_lines,
            max_files: opts.walk.max_files,
            jobs: opts.jobs,
            fix_args: &opts.fix_args,
        },
        totals: totals(r),
        commits: &r.commits,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// The table: one line per candidate, then the totals.
pub fn table(r: &Replay) -> String {
    let mut out = String::new();
    if !r.commits.is_empty() {
        out.push_str(&format!(
            "{:<7}  {:<16}  {:<18}  {:>7}  {:>4}  subject\n",
            "commit", "status", "reason", "time", "runs"
        ));
    }
    for c in &r.commits {
        let (time, runs) = c
            .fix
            .as_ref()
            .map_or(("-".to_string(), "-".to_string()), |f| {
                (secs(f.duration_ms), f.pytest_runs.to_string())
            });
        let subject: String = c.subject.chars().take(60).collect();
        out.push_str(&format!(
            "{:<7}  {:<16}  {:<18}  {:>7}  {:>4}  {}\n",
            c.short,
            status_word(c.status),
            c.reason.map_or("-", reason_word),
            time,
            runs,
            subject
        ));
    }
    let t = totals(r);
    out.push_str(&format!(
        "\nscanned {} commits, candidates {}; skipped: merge {}, no test change {}, no source change {}, too large {}\n",
        t.scanned, t.candidates, t.skipped.merge, t.skipped.no_test_change, t.skipped.no_source_change, t.skipped.too_large
    ));
    out.push_str(&format!(
        "reproduced {} of {}: plausible {} (correct {}), partial {}, damaged {}, missed {}, errors {}; median time {}\n",
        t.reproduced,
        t.candidates,
        t.plausible,
        t.correct,
        t.partial,
        t.damaged,
        t.missed.total(),
        t.errors,
        t.median_ms.map_or("-".to_string(), secs)
    ));
    let not_reproduced = [
        (t.not_reproducible.no_test_file, "no test file"),
        (t.not_reproducible.collection_error, "collection error"),
        (t.not_reproducible.missing_dependency, "missing dependency"),
        (t.not_reproducible.no_tests, "no tests"),
        (t.not_reproducible.passes_on_bug, "passes on the bug"),
        (t.not_reproducible.fails_on_fix, "fails on the fix"),
        (t.not_reproducible.timed_out, "timed out"),
    ];
    out.push_str(&breakdown("not reproducible", &not_reproduced));
    let misses = [
        (t.missed.no_candidate, "no candidate"),
        (t.missed.not_in_space, "not in space"),
        (t.missed.budget, "budget ran out"),
        (t.missed.escalated, "escalated"),
    ];
    out.push_str(&breakdown("missed", &misses));
    if r.interrupted {
        out.push_str("interrupted: the commits not listed were not replayed\n");
    }
    out
}

/// `what N: a 1, b 2` with the non-zero counts; nothing when all are zero.
fn breakdown(what: &str, counts: &[(usize, &str)]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    let total: usize = counts.iter().map(|(n, _)| n).sum();
    format!("{what} {total}: {}\n", parts.join(", "))
}

/// The closed sets of schema/replay.schema.json and the enums that produce them, for the
/// schema test (`crate::report::schemas`). Each list names every variant (the matches make
/// a new one a compile error here).
#[cfg(test)]
pub(crate) fn closed_sets() -> Vec<(&'static str, &'static str, Vec<String>)> {
    fn words<T: Serialize>(all: &[T]) -> Vec<String> {
        all.iter()
            .map(|v| {
                serde_json::to_value(v)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
    let statuses = [
        Status::Correct,
        Status::Plausible,
        Status::Partial,
        Status::Damaged,
        Status::Missed,
        Status::Error,
        Status::NotReproducible,
    ];
    let reasons = [
        NotReproducible::NoTestFile,
        NotReproducible::CollectionError,
        NotReproducible::MissingDependency,
        NotReproducible::NoTests,
        NotReproducible::PassesOnBug,
        NotReproducible::FailsOnFix,
        NotReproducible::TimedOut,
    ];
    let misses = [
        Miss::NoCandidate,
        Miss::NotInSpace,
        Miss::Budget,
        Miss::Escalated,
    ];
    // The lists above name every variant: one added and not listed fails to compile here.
    #[allow(dead_code)]
    fn exhaustive(s: Status, r: NotReproducible, m: Miss) {
        use NotReproducible as N;
        use Status as S;
        match s {
            S::Correct | S::Plausible | S::Partial | S::Damaged | S::Missed | S::Error => {}
            S::NotReproducible => {}
        }
        match r {
            N::NoTestFile | N::CollectionError | N::MissingDependency | N::NoTests => {}
            N::PassesOnBug | N::FailsOnFix | N::TimedOut => {}
        }
        match m {
            Miss::NoCandidate | Miss::NotInSpace | Miss::Budget | Miss::Escalated => {}
        }
    }
    vec![
        (
            "replay",
            "/$defs/commit/properties/status",
            words(&statuses),
        ),
        (
            "replay",
            "/$defs/commit/properties/reason/oneOf/1",
            words(&reasons),
        ),
        (
            "replay",
            "/$defs/commit/properties/reason/oneOf/2",
            words(&misses),
        ),
    ]
}
