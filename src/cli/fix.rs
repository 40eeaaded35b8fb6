//! `selfdebug fix`: prove repairs with pytest.

use std::time::Duration;

use super::{error, read_log, FixArgs};
use crate::category::Budgets;
use crate::project::ProjectRoot;
use crate::report::fix as report;
use crate::session::{self, Options, SessionError};
use crate::{exit, pytest_args};

pub const EXIT_CODES: &str = "\
Exit codes of `fix`:
  0  pass: pytest ran the selection and every failure has a proven patch (or nothing fails)
  1  fixed, with --exit-non-zero-on-fix: as 0, but there were failures; the tests pass only
     with the patch (kept, or with --dry-run printed)
  2  bad input: unreadable log, bad flags, broken rule file, pytest refused its arguments,
     --module matches no test; nothing was touched
  3  partial: some failures have a proven patch, others not (or hung, or are flaky)
  4  not fixed: no failure could be fixed (no candidate passed, the test hung past
     --test-timeout, or it is flaky); every touched file was restored
  5  escalated: the failures are environment or dependency problems, not code bugs
  6  error: pytest gave no verdict (internal error, interrupted, killed, unreadable output,
     the suite did not finish in time), or the tool could not work (no interpreter, pytest
     missing, another run holds the lock (a dry run too), a killed run must be restored
     first, the backup dir is not a private dir of yours), or SIGINT/SIGTERM/SIGHUP arrived
     (every touched file was restored first)
  7  no tests: pytest collected no test, so nothing was checked
  8  proposed: --no-validate printed candidates; nothing was proven

With --json the JSON object is printed on every one of these exits.";

/// A run that stopped before it had a report: the status, the exit code, the message.
struct Stop {
    status: &'static str,
    code: i32,
    message: String,
}

impl Stop {
    fn bad(message: impl Into<String>) -> Stop {
        Stop {
            status: "bad_input",
            code: exit::BAD_INPUT,
            message: message.into(),
        }
    }
}

impl From<SessionError> for Stop {
    fn from(e: SessionError) -> Stop {
        Stop {
            status: e.status(),
            code: e.exit_code(),
            message: e.to_string(),
        }
    }
}

pub fn run(args: &FixArgs) -> i32 {
    crate::runner::install_interrupt_handler();
    let root = ProjectRoot::find(args.root.as_deref());
    let result = root
        .as_ref()
        .map_err(|m| Stop::bad(m.clone()))
        .and_then(|root| run_in(args, root));
    match result {
        Ok(code) => code,
        Err(stop) => {
            error(&stop.message);
            if args.json {
                let root = root
                    .as_ref()
                    .ok()
                    .map(|r| r.path().to_string_lossy().into_owned());
                print!(
                    "{}",
                    report::error_json(
                        stop.status,
                        stop.code,
                        &stop.message,
                        root.as_deref(),
                        args.dry_run || args.no_validate
                    )
                );
            }
            stop.code
        }
    }
}

fn run_in(args: &FixArgs, root: &ProjectRoot) -> Result<i32, Stop> {
    let dry_run = args.dry_run || args.no_validate;
    if !dry_run {
        if let Some(msg) = session::pending_journal(root) {
            return Err(Stop {
                status: "error",
                code: exit::ENVIRONMENT,
                message: msg,
            });
        }
    }
    let log = args
        .log
        .as_deref()
        .map(read_log)
        .transpose()
        .map_err(Stop::bad)?;
    let mut budgets = Budgets::default();
    for spec in &args.budget {
        budgets.set(spec).map_err(Stop::bad)?;
    }
    if args.max_attempts == 0 {
        return Err(Stop::bad("--max-attempts must be at least 1"));
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.path().to_path_buf());
    let (pytest_args, mut notes) =
        pytest_args::check(&root.rebase_args(&args.pytest_args, &cwd)).map_err(Stop::bad)?;
    // Inside a pre-commit hook's environment: say which interpreter runs the tests instead.
    notes.extend(crate::runner::passed_over_note(
        root.path(),
        args.python.python.as_deref(),
    ));
    if !args.json {
        eprintln!("selfdebug: {}", root.describe());
    }
    let opts = Options {
        root: root.clone(),
        log,
        test: args.test.clone(),
        max_attempts: args.max_attempts,
        validate: !args.no_validate,
        python: args.python.python.clone(),
        timeout: args.python.timeout.map(Duration::from_secs),
        test_timeout: args
            .test_timeout
            .map_or(crate::runner::DEFAULT_TEST_TIMEOUT, Duration::from_secs),
        pytest_args,
        allow_tests: args.allow_tests,
        dry_run,
        safe_only: args.safe_only,
        all_or_nothing: args.all_or_nothing,
        budgets,
        backup_dir: args.backup_dir.clone(),
        time_budget: args
            .time_budget
            .map_or(session::DEFAULT_TIME_BUDGET, Duration::from_secs),
        notes,
    };
    let report = if dry_run {
        session::dry_run(&opts)?
    } else {
        session::fix(&opts)?
    };
    let mut code = report::exit_code(report::final_status(&report));
    if args.exit_non_zero_on_fix && code == exit::OK && !report.patches.is_empty() {
        code = exit::FIXED;
    }
    eprint!("{}", report::human_log(&report));
    if let Some(path) = &args.audit_log {
        use std::io::Write;
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(report::audit_lines(&report).as_bytes()));
        if let Err(e) = written {
            error(format!(
                "cannot append to the audit log {}: {e}",
                path.display()
            ));
        }
    }
    if args.json {
        print!("{}", report::json_exiting(&report, code));
    } else {
        // The patch on stdout: what was applied, or in a dry run what would be.
        // The file's own bytes (a latin-1 file's patch is latin-1), so `git apply` takes it.
        let mut stdout = std::io::stdout().lock();
        for p in &report.patches {
            let _ = std::io::Write::write_all(
                &mut stdout,
                &crate::edit::diff_bytes(&p.diff, p.diff_encoding),
            );
        }
    }
    Ok(code)
}
