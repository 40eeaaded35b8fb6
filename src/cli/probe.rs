//! `selfdebug probe`: find a failure (in a log, or by running pytest), probe it, print what the
//! probe saw.

use super::{error, log_name, read_log, ProbeArgs};
use crate::probe::{self, ProbeError, ProbeRequest};
use crate::report::format::wants_json;
use crate::runner::{self, RunSpec};
use crate::traceback::{self, Failure};
use crate::{exit, report};

/// `after_help` of `selfdebug probe`, for `#[command(after_help = probe::EXIT_CODES)]` on
/// `Command::Probe` in `cli/mod.rs` (which this file does not own).
pub const EXIT_CODES: &str = "\
Exit codes of `probe`:
  0  the probe ran and its report is printed (check `fired`: the line may not have been reached)
  1  nothing failed: the log (or the pytest run) has no failure to probe
  2  bad input: unreadable log, not a pytest log, no failure with a location in the project,
     --module not among the failures, source that does not parse, bad flags; nothing touched
  6  could not run: no interpreter, pytest missing, pytest did not start, interrupted, a
     file could not be restored (`selfdebug restore` brings it back), a `fix` (or another
     probe) holds the project's lock (the message names its pid), or a killed run must be
     restored first (`selfdebug restore`)
141  the reader of stdout went away (`| head -1`); the probed file is restored as always

With --json one object is printed on every exit (docs/json.md): on 1, 2 and 6 only
schema_version, exit_code and error.

The probed file is restored byte for byte (and its mtime) before anything else happens.";

pub fn run(args: &ProbeArgs, matches: &clap::ArgMatches) -> i32 {
    match run_inner(args, matches) {
        Ok(code) => code,
        Err((code, msg)) => {
            error(&msg);
            // With --json, one object on every exit: the envelope with the error.
            if wants_json(args.json, args.output_format) {
                let doc = report::envelope::error(probe::PROBE_SCHEMA_VERSION, code, &msg);
                crate::stdio::out(&doc);
            }
            code
        }
    }
}

type Failed = (i32, String);

fn bad(msg: impl ToString) -> Failed {
    (exit::BAD_INPUT, msg.to_string())
}

fn env_err(msg: impl ToString) -> Failed {
    (exit::ENVIRONMENT, msg.to_string())
}

fn run_inner(args: &ProbeArgs, matches: &clap::ArgMatches) -> Result<i32, Failed> {
    let project = crate::project::ProjectRoot::find(args.root.as_deref()).map_err(bad)?;
    // `python` and `timeout` of the configuration file apply here too (flags first).
    let mut flags = crate::config::Flags::default();
    super::given::read("probe", matches, &mut flags);
    let (settings, _rules) = super::fix::settings(&project, &flags).map_err(bad)?;
    let root = project.path().to_path_buf();
    // Bad input is found before anything runs.
    let log = match &args.log {
        Some(p) => Some(read_log(p).map_err(bad)?),
        None => None,
    };
    let interpreter =
        runner::find_interpreter(&root, settings.python.as_deref()).map_err(env_err)?;
    runner::ensure_pytest(&interpreter).map_err(env_err)?;
    let timeout = settings.timeout.unwrap_or(runner::DEFAULT_TIMEOUT);
    // Ctrl-C during the run kills pytest's group and lets the file be restored.
    crate::process::install_interrupt_handler();
    // The probe writes into the project, so it works as `fix` does: under the per-project
    // lock from before its first run (a `fix` working on the project is never raced, nor are
    // its candidates read as the project's code: one of the two refuses, exit 6, naming the
    // other's pid) and with the probed file's original in a journal, so that a probe killed
    // mid-run is undone by `selfdebug restore`.
    let mut journal =
        crate::journal::Journal::begin(&root, settings.backup_dir.as_deref()).map_err(env_err)?;

    let parsed = match log {
        Some(bytes) => traceback::parse(&bytes, &root)
            .map_err(|e| bad(format!("{}: {e}", log_name(args.log.as_deref()))))?,
        None => {
            let spec = RunSpec {
                node_ids: args.test.iter().cloned().collect(),
                timeout,
                ..RunSpec::new(&root)
            };
            let run = runner::run_pytest(&interpreter, &spec).map_err(env_err)?;
            if run.timed_out {
                return Err(env_err(format!(
                    "pytest did not finish within {} s; pass --timeout",
                    timeout.as_secs()
                )));
            }
            let parsed = traceback::parse(&run.log(), &root).map_err(|e| {
                env_err(format!(
                    "cannot read pytest's output: {e} (exit code {})",
                    run.exit_code.map_or("none".to_string(), |c| c.to_string())
                ))
            })?;
            // pytest's usage errors (exit 4: a node id not found, a bad flag) and internal
            // errors (3) leave nothing to probe and are not "nothing failed".
            if parsed.failures.is_empty() && matches!(run.exit_code, Some(3) | Some(4)) {
                let why = String::from_utf8_lossy(&run.stderr)
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let code = run.exit_code.unwrap_or_default();
                let msg = format!("pytest could not run the tests (exit {code}): {why}");
                return Err(if run.exit_code == Some(4) {
                    bad(msg)
                } else {
                    env_err(msg)
                });
            }
            parsed
        }
    };
    if parsed.failures.is_empty() {
        // Not an error, but no report either: said as the error envelope's reason (exit 1).
        crate::stdio::errln("selfdebug: nothing failed: no failure to probe");
        if wants_json(args.json, args.output_format) {
            let why = "nothing failed: no failure to probe";
            let doc = report::envelope::error(probe::PROBE_SCHEMA_VERSION, exit::NO_FAILURE, why);
            crate::stdio::out(&doc);
        }
        return Ok(exit::NO_FAILURE);
    }
    let failure = pick(&parsed.failures, args.test.as_deref()).map_err(bad)?;
    let req = ProbeRequest {
        project_dir: &root,
        failure,
        interpreter: &interpreter,
        timeout,
        test_timeout: Some(crate::runner::DEFAULT_TEST_TIMEOUT),
        env: Vec::new(),
        pytest_args: Vec::new(),
        test: if failure.test.is_none() {
            args.test.clone()
        } else {
            None
        },
        // The journal holds the original (see below).
        backup: false,
    };
    if let Some(path) = failure
        .location
        .as_ref()
        .and_then(|l| crate::plan::confined_path(&root, &l.file).ok())
    {
        journal.record(&path).map_err(env_err)?;
    }
    let probed = probe::probe(&req);
    // The probe put its file back; the rollback checks the bytes against the journal (and gives
    // the mtime back), and releases the lock.
    let restored = journal.rollback();
    let report = probed.map_err(|e| match e {
        ProbeError::Runner(_)
        | ProbeError::Restore(_)
        | ProbeError::Write { .. }
        | ProbeError::TempDir { .. } => env_err(e),
        _ => bad(e.to_string()),
    })?;
    restored.map_err(env_err)?;
    let out = if wants_json(args.json, args.output_format) {
        report::probe::json(&report, exit::OK)
    } else {
        report::probe::human(&report)
    };
    crate::stdio::out(&out);
    Ok(exit::OK)
}

/// The first failure with a location; with `--module`, among those of that node id (or of
/// the tests under it: a file, a class, a parametrized test).
fn pick<'a>(failures: &'a [Failure], module: Option<&str>) -> Result<&'a Failure, NoPick> {
    let matching: Vec<&Failure> = failures
        .iter()
        .filter(|f| module.is_none_or(|m| names_test(f.test.as_deref(), m)))
        .collect();
    if let Some(m) = module {
        if matching.is_empty() {
            return Err(NoPick::NoSuchFailure {
                module: m.to_string(),
                names: failures.iter().filter_map(|f| f.test.clone()).collect(),
            });
        }
    }
    matching
        .into_iter()
        .find(|f| f.location.is_some())
        .ok_or(NoPick::NoLocation)
}

/// Why no failure of the log is the one to probe.
#[derive(Debug, thiserror::Error)]
enum NoPick {
    /// `--module` names none of the failures (the test ids there are).
    #[error("--module {module}: no such failure (failures: {})", named(names))]
    NoSuchFailure { module: String, names: Vec<String> },
    #[error("no failure has a location in the project's code to probe")]
    NoLocation,
}

fn named(names: &[String]) -> String {
    if names.is_empty() {
        "none named".to_string()
    } else {
        names.join(", ")
    }
}

fn names_test(test: Option<&str>, m: &str) -> bool {
    let Some(t) = test else { return false };
    t == m
        || t.strip_prefix(m)
            .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('['))
}
