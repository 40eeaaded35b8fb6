//! `selfdebug config`: the settings `fix` would use here, and where each comes from.

use super::{error, ConfigArgs};
use crate::config::Flags;
use crate::report::format::wants_json;
use crate::{exit, report};

/// `after_help` of `selfdebug config`.
pub const EXIT_CODES: &str = "\
Exit codes of `config`:
  0  the settings are printed
  2  bad input: the configuration file is broken (an unknown key, a wrong type, a rule
     selector that matches no rule: one line with the file and line), --root is not a
     directory, bad flags

Sources: `default`, `FILE:LINE` (the configuration file), or the flag that set the value
(`selfdebug fix ... --show-settings`). Command-line flags override the file, which overrides
the defaults.";

pub fn run(args: &ConfigArgs) -> i32 {
    let root = match crate::project::ProjectRoot::find(args.root.as_deref()) {
        Ok(r) => r,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    match super::fix::settings(&root, &Flags::default()) {
        Ok((settings, _rules)) => {
            print!(
                "{}",
                if wants_json(args.json, args.output_format) {
                    report::config::json(&settings)
                } else {
                    report::config::human(&settings)
                }
            );
            exit::OK
        }
        Err(msg) => {
            error(msg);
            exit::BAD_INPUT
        }
    }
}
