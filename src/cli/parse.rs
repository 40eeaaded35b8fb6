//! `selfdebug parse`: read a log, print failures.

use std::path::Path;

use super::{error, log_name, read_log, ParseArgs};
use crate::report::format::{output_format, OutputFormat};
use crate::{exit, report, traceback};

pub fn run(args: &ParseArgs) -> i32 {
    let bytes = match read_log(args.log.as_deref().unwrap_or(Path::new("-"))) {
        Ok(b) => b,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    let root = match crate::project::ProjectRoot::find(args.root.as_deref()) {
        Ok(r) => r,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    let parsed = match traceback::parse(&bytes, root.path()) {
        Ok(p) => p,
        Err(e) => {
            error(format!("{}: {e}", log_name(args.log.as_deref())));
            return exit::BAD_INPUT;
        }
    };
    let out = match output_format(args.json, args.output_format) {
        OutputFormat::Json => report::parse::json(&parsed),
        OutputFormat::Github => report::github::parse(&parsed),
        OutputFormat::Text => report::parse::human(&parsed),
    };
    print!("{out}");
    if parsed.failures.is_empty() {
        exit::NO_FAILURE
    } else {
        exit::OK
    }
}
