//! `selfdebug restore`: bring back the files of a run that was killed.

use super::{error, RestoreArgs};
use crate::report::format::wants_json;
use crate::{exit, journal, report};

/// `after_help` of `selfdebug restore`.
pub const EXIT_CODES: &str = "\
Exit codes of `restore`:
  0  the files of the killed run were restored and each verified by hash, or there was
     nothing to restore
  2  bad input: --root is not a directory, bad flags
  6  a live selfdebug run holds the lock of this project (its pid is printed), or a file
     could not be restored (it is named; the journal is kept, so run `restore` again once
     the cause is fixed)
141  the reader of stdout went away (`| head -1`); the files were restored before the report

Only the files the killed run recorded are written back (bytes, mtime, permissions): other
files, the git index and untracked files are never touched. Journals live outside the
project, in $XDG_CACHE_HOME/selfdebug/journals/ (else ~/.cache/selfdebug/journals/).";

pub fn run(args: &RestoreArgs) -> i32 {
    let json = wants_json(args.json, args.output_format);
    let root = match crate::project::ProjectRoot::find(args.root.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string();
            error(&msg);
            if json {
                let doc = report::restore::json_bad_input(&msg, exit::BAD_INPUT);
                crate::stdio::out(&doc);
            }
            return exit::BAD_INPUT;
        }
    };
    // What a killed run left in the temp dir goes too (its files are restored just below).
    crate::runner::remove_stale_temp_dirs();
    match journal::restore(root.path()) {
        Ok(r) => {
            let out = if json {
                report::restore::json(&r, exit::OK)
            } else {
                report::restore::human(&r)
            };
            crate::stdio::out(&out);
            exit::OK
        }
        Err(e) => {
            // Locked, or a file that cannot be restored: the message names the pid or the file.
            error(&e);
            if json {
                crate::stdio::out(&report::restore::json_error(&e, exit::ENVIRONMENT));
            }
            exit::ENVIRONMENT
        }
    }
}
