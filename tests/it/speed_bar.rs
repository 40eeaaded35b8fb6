//! The speed bar (issue 23, item 2): with the failing log given, a fix of the 400-test shape's
//! bug (`text.split()[0]` on `None`, the test expecting `''`) makes the floor's runs and one
//! more: the log's test alone on the original code, the kept candidate's targeted run, one
//! confirming full run. The guard returning the test's expected value is ranked before the
//! or-default (whose `"".split()[0]` raises IndexError), so no wrong candidate, and no probe of
//! the failure it would move to, is run. Real pytest, worker on and off.

use crate::support;
use support::project::{json, project, Project};

const TEXT: &str = "def headline(text):\n    return text.split()[0]\n";
const FIXED: &str =
    "def headline(text):\n    if text is None:\n        return ''\n    return text.split()[0]\n";
const TESTS: &str = "from pkg.text import headline\n\n\ndef test_headline():\n    assert headline('a b') == 'a'\n\n\ndef test_none():\n    assert headline(None) == ''\n";

fn headline_project() -> Project {
    project(&[
        (
            "pytest.ini",
            "[pytest]\ntestpaths = tests\npythonpath = .\n",
        ),
        ("pkg/__init__.py", ""),
        ("pkg/text.py", TEXT),
        ("tests/test_text.py", TESTS),
    ])
}

/// `selfdebug fix --json FLAGS LOG` (the lazy baseline's path whatever the environment says),
/// checked for the fix in four runs: exit 0, the guard's exact bytes, the log's test alone, the
/// kept candidate's targeted run and the confirming full run, one attempt. Returns the JSON.
fn fix_with_log(p: &Project, log: &std::path::Path, flags: &[&str]) -> serde_json::Value {
    let mut args = vec!["fix", "--json"];
    args.extend_from_slice(flags);
    args.push(support::path_str(log));
    let out = p
        .cmd(&args)
        .env_remove("SELFDEBUG_BASELINE")
        .output()
        .unwrap();
    support::check_json_output(&args, &out.stdout);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{j:#}");
    assert_eq!(j["final_status"], "pass");
    assert_eq!(p.read("pkg/text.py"), FIXED);
    // The guard is unsafe: its test runs once more before the full run, the third run in a row
    // (`proof-repeats`, docs/proof.md "Chance is not proof").
    assert_eq!(j["pytest_runs"], 4, "{j:#}");
    let attempts = j["attempt_records"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{j:#}");
    assert_eq!(attempts[0]["outcome"], "accepted");
    j
}

fn fixed_in_three_runs(worker: &str) {
    let p = headline_project();
    let log = p.pytest_log(&[]);
    let j = fix_with_log(&p, &log, &["--worker", worker]);
    let attempts = j["attempt_records"].as_array().unwrap();
    assert_eq!(attempts[0]["title"], "return '' early when `text` is None");
    // The crash-frame facts of the targeted baseline stood in for the probe.
    assert_eq!(j["phases_ms"]["probe_ms"], 0, "{j:#}");
    assert_eq!(j["failures"][0]["probe"]["source"], "plugin");
    assert_eq!(j["notes"], serde_json::json!([]));
}

#[test]
fn the_expected_guard_is_proven_first_with_the_worker() {
    fixed_in_three_runs("auto");
}

#[test]
fn the_expected_guard_is_proven_first_cold() {
    fixed_in_three_runs("off");
}

/// Notes in `marker` each pytest session's start and end (`start full`, `end targeted`, ...).
/// A targeted run of the candidate (the guard written) waits at its end for a full run to
/// have started (the marker is new after the log's run, and the baseline is targeted), for
/// at most 20 s, and notes whether one did (`together`) or not (`alone`): a full run made
/// after the targeted run never starts during it.
fn sessions_conftest(marker: &std::path::Path) -> String {
    format!(
        "import os\nimport time\n\nMARKER = {marker:?}\n\n\n\
         def _kind(config):\n    args = getattr(getattr(config, 'invocation_params', None), 'args', None)\n\
         \x20   if args is None:\n        args = config.args\n\
         \x20   return 'targeted' if any('::' in str(a) for a in args) else 'full'\n\n\n\
         def _lines():\n    try:\n        with open(MARKER) as f:\n            return f.read().splitlines()\n\
         \x20   except OSError:\n        return []\n\n\n\
         def _note(line):\n    with open(MARKER, 'a') as f:\n        f.write(line + '\\n')\n\n\n\
         def pytest_sessionstart(session):\n    _note('start ' + _kind(session.config))\n\n\n\
         def pytest_sessionfinish(session):\n    kind = _kind(session.config)\n\
         \x20   here = os.path.dirname(os.path.abspath(__file__))\n\
         \x20   with open(os.path.join(here, 'pkg', 'text.py')) as f:\n\
         \x20       candidate = 'is None' in f.read()\n\
         \x20   if kind == 'targeted' and candidate:\n        deadline = time.monotonic() + 20\n\
         \x20       while 'start full' not in _lines() and time.monotonic() < deadline:\n\
         \x20           time.sleep(0.02)\n\
         \x20       _note('together' if 'start full' in _lines() else 'alone')\n\
         \x20   _note('end ' + kind)\n"
    )
}

/// Cold runs and `--jobs 2`: the kept candidate's full run starts beside its targeted run
/// (`session::alongside`), and the verdicts are those of one run after the other: the same
/// bytes, the same four runs, one attempt. The phases' times do not overlap (their sum is
/// within the run's duration).
#[test]
fn cold_runs_with_two_jobs_start_the_full_run_beside_the_candidates_targeted_run() {
    let p = headline_project();
    let marker = p.cache.join("sessions");
    std::fs::write(p.root.join("conftest.py"), sessions_conftest(&marker)).unwrap();
    let log = p.pytest_log(&[]);
    std::fs::remove_file(&marker).unwrap();
    let j = fix_with_log(&p, &log, &["--worker", "off", "--jobs", "2"]);
    let phases = &j["phases_ms"];
    let sum: u64 = ["baseline_ms", "probe_ms", "candidates_ms", "confirm_ms"]
        .iter()
        .map(|k| phases[k].as_u64().unwrap())
        .sum();
    assert!(sum <= j["duration_ms"].as_u64().unwrap(), "{j:#}");
    let sessions = std::fs::read_to_string(&marker).unwrap();
    let mut lines: Vec<&str> = sessions.lines().collect();
    // The log's test alone on the original bytes, then the three runs of the candidate: its
    // targeted run and its repeat (an unsafe guard, `proof-repeats`) beside the full run.
    assert_eq!(lines[..2], ["start targeted", "end targeted"], "{sessions}");
    lines[2..].sort();
    assert_eq!(
        lines[2..],
        [
            "end full",
            "end targeted",
            "end targeted",
            "start full",
            "start targeted",
            "start targeted",
            "together",
            "together"
        ],
        "{sessions}"
    );
}
