//! End to end over `fixtures/bugs/`: one small project per bug, real pytest.
//!
//! For every case the project is copied to a temp dir and `selfdebug fix --json`
//! repairs the copy in place. A case whose `outcome` file says `fixed` must come back with exit
//! 0, `final_status: "pass"` and exactly the diff recorded in `expected.patch` (blessed) or
//! `weak.patch` (what the tool prints today, judged weak in `fixtures/bugs/README.md`); the
//! fixed tree must equal a fresh copy with that patch applied by `git apply`, and its whole suite
//! must be green. A `not-fixed` case must end with exit 4, an `escalated` one (not a code bug)
//! with exit 5, both with no patch and the copy restored byte for byte, mtimes included. For
//! every fixed case (under `SELFDEBUG_SLOW_TESTS`; by default the encoding cases and a fixed
//! quarter of the rest, see [`dry_run_checked`]), `fix --dry-run` on a fresh copy must print
//! exactly the real run's patch bytes (which `git apply` has just been shown to take), whatever
//! the file's encoding: BOM, latin-1 and CRLF cases are in the corpus.
//!
//! By default the search cases run in a fixed third (see [`in_default_suite`]); every case runs
//! under `SELFDEBUG_SLOW_TESTS=1` (CI). Cases run in parallel, one worker per core (each is a
//! few pytest runs, one at a time; `SELFDEBUG_BUGS_JOBS=N` sets the number); set
//! `SELFDEBUG_BUGS=case,case` to run only some, `SELFDEBUG_BUGS_SEARCH_TIME=S` for
//! `--search-time S` instead of 900.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use crate::support;

fn bugs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bugs")
}

/// The interpreter the cases run under: `interp` (the version matrix's venvs, see
/// `tests/it/version_matrix.rs`), else `$PYTHON`, else `python3`.
fn python(interp: Option<&Path>) -> PathBuf {
    interp.map(Path::to_path_buf).unwrap_or_else(|| {
        PathBuf::from(std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string()))
    })
}

thread_local! {
    /// Which worker of [`every_bug_case_ends_as_expected`] this thread is.
    static WORKER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The bytecode cache and journals of the child go here, not into the user's `~/.cache`; one
/// per worker and interpreter, so that parallel cases (and the version matrix running beside
/// this test) share nothing but the fixtures they copy.
fn xdg_cache(interp: Option<&Path>) -> PathBuf {
    let tag = interp.map_or(0, |p| support::fnv1a(p.as_os_str().as_encoded_bytes()));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "bugs_e2e-xdg-cache-{}{}",
        WORKER.with(|w| w.get()),
        if tag == 0 {
            String::new()
        } else {
            format!("-{tag:x}")
        }
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Fixed,
    NotFixed,
    /// Not a code bug (environment, dependency): reported with a suggestion, exit 5.
    Escalated,
}

pub struct Case {
    pub name: String,
    dir: PathBuf,
    pub outcome: Outcome,
    /// The exact diff bytes expected for a fixed case, and whether it was blessed.
    patch: Option<(Vec<u8>, bool)>,
    /// The pytest arguments after `--` (the case's `args` file, one per line): a narrow
    /// selection, as an agent or a CI rerun gives it.
    pub pytest_args: Vec<String>,
}

pub fn cases() -> Vec<Case> {
    let only: Option<Vec<String>> = std::env::var("SELFDEBUG_BUGS")
        .ok()
        .map(|s| s.split(',').map(|c| c.trim().to_string()).collect());
    let mut out = Vec::new();
    for entry in std::fs::read_dir(bugs_dir()).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("project").is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if only.as_ref().is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let outcome = match std::fs::read_to_string(dir.join("outcome"))
            .unwrap_or_else(|e| panic!("{name}/outcome: {e}"))
            .trim()
        {
            "fixed" => Outcome::Fixed,
            "not-fixed" => Outcome::NotFixed,
            "escalated" => Outcome::Escalated,
            other => panic!("{name}/outcome: unknown outcome {other:?}"),
        };
        let read = |f: &str| std::fs::read(dir.join(f)).ok();
        let patch = match (read("expected.patch"), read("weak.patch")) {
            (Some(p), None) => Some((p, true)),
            (None, Some(p)) => Some((p, false)),
            (None, None) => None,
            (Some(_), Some(_)) => panic!("{name}: both expected.patch and weak.patch"),
        };
        assert_eq!(
            patch.is_some(),
            outcome == Outcome::Fixed,
            "{name}: a fixed case needs exactly one of expected.patch / weak.patch, \
             a not-fixed case none"
        );
        let pytest_args = std::fs::read_to_string(dir.join("args"))
            .map(|a| {
                a.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(Case {
            name,
            dir,
            outcome,
            patch,
            pytest_args,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every entry under `root`: relative path → (hash and length of a file's bytes, its mtime).
type Snapshot = BTreeMap<String, (u64, u64, Option<SystemTime>)>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap()
            .display()
            .to_string();
        let meta = entry.metadata().unwrap();
        let value = if meta.is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            (
                support::fnv1a(&bytes),
                bytes.len() as u64,
                meta.modified().ok(),
            )
        } else {
            (0, 0, None)
        };
        out.insert(rel, value);
    }
    out
}

/// `selfdebug fix ARGS` on `root`, writing into it unless `--dry-run` (backups go under the
/// test's temp dir); `--python INTERP` when given; the case's pytest arguments after `--`.
fn fix(root: &Path, args: &[&str], interp: Option<&Path>, pytest_args: &[String]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_selfdebug"));
    cmd.arg("fix").args(args);
    if let Some(python) = interp {
        cmd.arg("--python").arg(python);
    }
    cmd
        // The search's default wall time is sized for a hook on an idle machine; here the
        // outcome must not depend on the load, so it ends when its candidates do.
        // SELFDEBUG_BUGS_SEARCH_TIME=60 checks the corpus at the default (on an idle machine).
        .arg("--search-time")
        .arg(std::env::var("SELFDEBUG_BUGS_SEARCH_TIME").unwrap_or_else(|_| "900".into()))
        .arg("--backup-dir")
        .arg(root.parent().unwrap().join("backups"))
        .arg("--root")
        .arg(root)
        .env("XDG_CACHE_HOME", xdg_cache(interp))
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("VIRTUAL_ENV");
    if !pytest_args.is_empty() {
        cmd.arg("--").args(pytest_args);
    }
    cmd.output().expect("run selfdebug")
}

/// The files a unified diff touches (`+++ b/PATH`).
fn patched_files(diff: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(diff)
        .lines()
        .filter_map(|l| l.strip_prefix("+++ b/"))
        .map(str::to_string)
        .collect()
}

/// The bytes of a JSON patch's `diff` (`diff_encoding` says how its text maps to bytes).
fn diff_bytes(patch: &serde_json::Value) -> Vec<u8> {
    let text = patch["diff"].as_str().unwrap_or_default();
    match patch["diff_encoding"].as_str() {
        Some("iso-8859-1") => text.chars().map(|c| c as u32 as u8).collect(),
        _ => text.as_bytes().to_vec(),
    }
}

/// `git apply` in `root`, outside any repository (the copy's parent is a ceiling).
fn git_apply(root: &Path, patch: &Path) -> Output {
    let mut cmd = Command::new("git");
    cmd.arg("apply");
    cmd.arg(patch)
        .current_dir(root)
        .env("GIT_CEILING_DIRECTORIES", root.parent().unwrap())
        .output()
        .expect("run git apply")
}

fn apply(root: &Path, diff: &[u8]) -> Result<(), String> {
    let patch = root.parent().unwrap().join("fix.patch");
    std::fs::write(&patch, diff).unwrap();
    let out = git_apply(root, &patch);
    if !out.status.success() {
        return Err(format!(
            "git apply failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // A fix must not leave a CRLF file with mixed line endings.
    for file in patched_files(diff) {
        let bytes = std::fs::read(root.join(&file)).unwrap();
        let crlf = bytes.windows(2).filter(|w| *w == b"\r\n").count();
        let lf = bytes.iter().filter(|b| **b == b'\n').count();
        if crlf != 0 && crlf != lf {
            return Err(format!(
                "{file}: mixed line endings after the patch ({crlf} CRLF, {lf} LF)"
            ));
        }
    }
    Ok(())
}

fn pytest(root: &Path, interp: Option<&Path>) -> Output {
    Command::new(python(interp))
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
        .current_dir(root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("run pytest")
}

/// File contents under `root` (no mtimes): what a fixed tree must equal.
fn contents(root: &Path) -> BTreeMap<String, (u64, u64)> {
    snapshot(root)
        .into_iter()
        .map(|(k, (h, n, _))| (k, (h, n)))
        .collect()
}

/// Whether a fixed case's `--dry-run` is compared with its real run: always under
/// `SELFDEBUG_SLOW_TESTS` (CI); otherwise for the encoding cases (BOM, latin-1, CRLF: where a
/// printed patch could differ from the written one) and a fixed quarter of the others, chosen by
/// the name's hash. The dry run repeats the whole repair, so checking every case doubled the
/// corpus's share of the default suite; the path it exercises is the same for every case.
fn dry_run_checked(name: &str) -> bool {
    ["crlf", "bom", "latin1", "enc_"]
        .iter()
        .any(|k| name.contains(k))
        || support::sampled(name, 4)
}

/// Runs one case under `interp` (default: see [`python`]); `Err` says what went wrong. Its
/// `fix --json` report goes to `reports`.
fn check(case: &Case, interp: Option<&Path>, reports: &Reports) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(&case.name);
    support::copy_dir(&case.dir.join("project"), &root);
    let before = snapshot(&root);

    let out = fix(&root, &["--json"], interp, &case.pytest_args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    reports.lock().unwrap().push(out.stdout.clone());
    let diff: Vec<u8> = json["patches"]
        .as_array()
        .map(|ps| ps.iter().flat_map(diff_bytes).collect())
        .unwrap_or_default();
    let code = out.status.code();

    match case.outcome {
        Outcome::NotFixed | Outcome::Escalated => {
            let want = if case.outcome == Outcome::Escalated {
                5
            } else {
                4
            };
            if code != Some(want) || json["exit_code"] != want {
                return Err(format!(
                    "want exit {want}, got {code:?} / exit_code {}:\n{stderr}",
                    json["exit_code"]
                ));
            }
            if !diff.is_empty() || json["patches"].as_array().is_some_and(|p| !p.is_empty()) {
                return Err(format!(
                    "a must-not-fix case got a patch:\n{}",
                    String::from_utf8_lossy(&diff)
                ));
            }
            if snapshot(&root) != before {
                return Err("the project was not restored byte for byte (and mtime)".into());
            }
        }
        Outcome::Fixed => {
            let (expected, blessed) = case.patch.as_ref().expect("checked in cases()");
            if code != Some(0) || json["final_status"] != "pass" {
                return Err(format!(
                    "want exit 0 and final_status pass, got {code:?} / {}:\n{stderr}",
                    json["final_status"]
                ));
            }
            if diff != *expected {
                let file = if *blessed {
                    "expected.patch"
                } else {
                    "weak.patch"
                };
                return Err(format!(
                    "the diff differs from {file}\n--- want:\n{}\n--- got:\n{}\n\
                     (review it; bless a good fix as expected.patch)",
                    String::from_utf8_lossy(expected),
                    String::from_utf8_lossy(&diff)
                ));
            }
            // The fixed tree is exactly the original with the reviewed patch applied.
            let applied = tmp.path().join("applied").join(&case.name);
            support::copy_dir(&case.dir.join("project"), &applied);
            apply(&applied, expected)?;
            if contents(&root) != contents(&applied) {
                return Err("the fixed tree differs from the original plus the patch".into());
            }
            let run = pytest(&root, interp);
            if !run.status.success() {
                return Err(format!(
                    "the suite is not green after the fix:\n{}{}",
                    String::from_utf8_lossy(&run.stdout),
                    String::from_utf8_lossy(&run.stderr)
                ));
            }
            // The dry run prints the same bytes, and leaves its copy as it was.
            if !dry_run_checked(&case.name) {
                return Ok(());
            }
            let dry_root = tmp.path().join("dry").join(&case.name);
            support::copy_dir(&case.dir.join("project"), &dry_root);
            let dry_before = snapshot(&dry_root);
            let dry = fix(&dry_root, &["--dry-run"], interp, &case.pytest_args);
            if dry.status.code() != Some(0) || dry.stdout != *expected {
                return Err(format!(
                    "the dry run (exit {:?}) printed another patch than the real run:\n{}\n{}",
                    dry.status.code(),
                    String::from_utf8_lossy(&dry.stdout),
                    String::from_utf8_lossy(&dry.stderr)
                ));
            }
            if snapshot(&dry_root) != dry_before {
                return Err("the dry run changed its copy".into());
            }
        }
    }
    Ok(())
}

#[test]
fn every_bug_case_ends_as_expected() {
    let all = cases();
    assert!(
        std::env::var_os("SELFDEBUG_BUGS").is_some() || all.len() >= 17,
        "fixtures/bugs has only {} cases",
        all.len()
    );
    let cases: Vec<Case> = all.into_iter().filter(in_default_suite).collect();
    let (failed, reports) = run(&cases, None);
    assert!(failed.is_empty(), "\n{}", failed.join("\n\n"));
    // Every case's report against the schema, in one validator process for all of them.
    let docs: Vec<&[u8]> = reports.iter().map(Vec::as_slice).collect();
    support::assert_valid("fix.schema.json", None, &docs);
}

/// Search cases (wrong output: `search_*`, `tmpl_*`, `tmplb_*`) cost tens of pytest runs each,
/// most of the suite's time: the default suite runs every rule case and a fixed third of them;
/// `SELFDEBUG_SLOW_TESTS` (CI) or `SELFDEBUG_BUGS` runs all it names.
fn in_default_suite(case: &Case) -> bool {
    let search = ["search_", "tmpl_", "tmplb_"]
        .iter()
        .any(|p| case.name.starts_with(p));
    !search || std::env::var_os("SELFDEBUG_BUGS").is_some() || support::sampled(&case.name, 3)
}

/// Every case's `fix --json` report, validated together once the cases have run.
type Reports = std::sync::Mutex<Vec<Vec<u8>>>;

/// Runs `cases` under `interp` (default: see [`python`]): the failures, sorted, one message
/// per failed case, and every case's `fix --json` report.
pub fn run(cases: &[Case], interp: Option<&Path>) -> (Vec<String>, Vec<Vec<u8>>) {
    // Cases are independent (each in its own temp dirs): one worker per core, since each case
    // mostly waits on one single-threaded pytest at a time. SELFDEBUG_BUGS_JOBS overrides.
    let jobs = std::env::var("SELFDEBUG_BUGS_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::new());
    let reports = Reports::default();
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (next, failed, reports) = (&next, &failed, &reports);
            scope.spawn(move || {
                WORKER.with(|w| w.set(worker));
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    let started = std::time::Instant::now();
                    let result = check(case, interp, reports);
                    eprintln!(
                        "{:<26} {:<5} {:>6} ms",
                        case.name,
                        if result.is_ok() { "ok" } else { "FAIL" },
                        started.elapsed().as_millis()
                    );
                    if let Err(why) = result {
                        failed
                            .lock()
                            .unwrap()
                            .push(format!("== {}: {why}", case.name));
                    }
                }
            });
        }
    });
    let mut failed = failed.into_inner().unwrap();
    failed.sort();
    (failed, reports.into_inner().unwrap())
}

#[test]
fn crlf_case_really_is_crlf() {
    let bytes = std::fs::read(bugs_dir().join("attr_crlf_comments/project/headers.py")).unwrap();
    let crlf = bytes.windows(2).filter(|w| *w == b"\r\n").count();
    let lf = bytes.iter().filter(|b| **b == b'\n').count();
    assert!(crlf > 0 && crlf == lf, "{crlf} CRLF of {lf} line ends");
}
