//! `selfdebug parse`: read a log, print failures.

use std::path::Path;

use super::{error, log_name, read_log, InputError, ParseArgs};
use crate::report::format::{output_format, OutputFormat};
use crate::traceback::{ParsedLog, PARSE_SCHEMA_VERSION};
use crate::{exit, report, traceback};

pub fn run(args: &ParseArgs) -> i32 {
    let format = output_format(args.json, args.output_format);
    match read(args) {
        Ok(parsed) => {
            let code = if parsed.failures.is_empty() {
                exit::NO_FAILURE
            } else {
                exit::OK
            };
            crate::stdio::out(&match format {
                OutputFormat::Json => report::parse::json(&parsed, code),
                OutputFormat::Github => report::github::parse(&parsed),
                OutputFormat::Text => report::parse::human(&parsed),
            });
            code
        }
        Err(e) => {
            let msg = e.to_string();
            error(&msg);
            // With --json, one object on every exit: the envelope with the error.
            if format == OutputFormat::Json {
                let doc = report::envelope::error(PARSE_SCHEMA_VERSION, exit::BAD_INPUT, &msg);
                crate::stdio::out(&doc);
            }
            exit::BAD_INPUT
        }
    }
}

/// The log read and parsed, or why not (bad input).
fn read(args: &ParseArgs) -> Result<ParsedLog, InputError> {
    let bytes = read_log(args.log.as_deref().unwrap_or(Path::new("-")))?;
    let root = crate::project::ProjectRoot::find(args.root.as_deref())?;
    traceback::parse(&bytes, root.path()).map_err(|source| InputError::NotALog {
        name: log_name(args.log.as_deref()),
        source,
    })
}
