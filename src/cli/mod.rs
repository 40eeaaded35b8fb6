//! The command line: flags and dispatch only. Each subcommand lives in its own file and calls
//! into the library; the process exit code is returned, never `exit`ed from deep inside.

mod parse;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit codes of `parse`:
  0  at least one failure was read
  1  the log is pytest output in which nothing failed
  2  bad input: unreadable file, not a pytest log or Python traceback, bad flags";

#[derive(Parser, Debug)]
#[command(
    name = "selfdebug",
    version,
    about = "Repairs failing Python code with pytest as the judge",
    long_about = "Repairs failing Python code with pytest as the judge.\n\n\
        Reads pytest output, finds the failing statement, and proposes minimal, \
        pytest-proven edits. This version reads and explains failures (`parse`); the \
        repair commands (`fix`, `probe`, `rules`, `restore`) arrive in later releases.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read a pytest log (any --tb style) or a Python traceback and print its failures.
    #[command(after_help = EXIT_CODES)]
    Parse(ParseArgs),
}

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// The log file; `-` or nothing reads standard input.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Project root that frames are resolved against.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print one JSON document (see schema/parse.schema.json) instead of the human view.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                crate::exit::BAD_INPUT
            } else {
                crate::exit::OK
            };
            // clap renders help/version to stdout and usage errors to stderr itself.
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Parse(args) => parse::run(&args),
    }
}

/// One-line error on stderr, the way every subcommand reports bad input.
fn error(msg: impl std::fmt::Display) {
    eprintln!("selfdebug: error: {msg}");
}
