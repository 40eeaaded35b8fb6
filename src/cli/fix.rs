//! `selfdebug fix`: prove repairs with pytest.

use std::time::Duration;

use super::{error, read_log, FixArgs};
use crate::category::Budgets;
use crate::exit;
use crate::report::fix as report;
use crate::session::{self, Options, SessionError};

pub const EXIT_CODES: &str = "\
Exit codes of `fix`:
  0  every failure has a proven patch (or nothing fails)
  2  bad input: unreadable log, bad flags, broken rule file; nothing was touched
  3  partial: some failures have a proven patch, others not
  4  not fixed: no failure could be fixed
  5  escalated: the failures are environment or dependency problems, not code bugs
  6  the tool could not work: no interpreter, pytest missing, a run could not start";

pub fn run(args: &FixArgs) -> i32 {
    crate::runner::install_interrupt_handler();
    if !args.dry_run {
        if let Some(msg) = session::pending_journal(&args.root) {
            error(msg);
            return exit::ENVIRONMENT;
        }
    }
    let log = match args.log.as_deref().map(read_log).transpose() {
        Ok(l) => l,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    let mut budgets = Budgets::default();
    for spec in &args.budget {
        if let Err(msg) = budgets.set(spec) {
            error(msg);
            return exit::BAD_INPUT;
        }
    }
    if args.max_attempts == 0 {
        error("--max-attempts must be at least 1");
        return exit::BAD_INPUT;
    }
    let opts = Options {
        root: args.root.clone(),
        log,
        test: args.test.clone(),
        max_attempts: args.max_attempts,
        validate: !args.no_validate,
        python: args.python.python.clone(),
        timeout: args.python.timeout.map(Duration::from_secs),
        pytest_args: args.pytest_args.clone(),
        allow_tests: args.allow_tests,
        dry_run: args.dry_run,
        unsafe_fixes: args.unsafe_fixes,
        all_or_nothing: args.all_or_nothing,
        budgets,
        backup_dir: args.backup_dir.clone(),
    };
    let result = if args.dry_run {
        session::dry_run(&opts)
    } else {
        session::fix(&opts)
    };
    let report = match result {
        Ok(r) => r,
        Err(SessionError::BadInput(m)) => {
            error(m);
            return exit::BAD_INPUT;
        }
        Err(SessionError::Environment(m)) => {
            error(m);
            return exit::ENVIRONMENT;
        }
    };
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
        print!("{}", report::json(&report));
    } else {
        // The patch on stdout: what was applied, or in a dry run what would be.
        for p in &report.patches {
            print!("{}", p.diff);
        }
    }
    report::exit_code(report::final_status(&report))
}
