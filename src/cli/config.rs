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
141  the reader of stdout went away (`| head -1`)

Sources: `default`, `FILE:LINE` (the configuration file), or the flag that set the value
(`selfdebug fix ... --show-settings`). Command-line flags override the file, which overrides
the defaults.";

pub fn run(args: &ConfigArgs) -> i32 {
    let json = wants_json(args.json, args.output_format);
    let resolved = crate::project::ProjectRoot::find(args.root.as_deref())
        .map_err(super::InputError::from)
        .and_then(|root| super::fix::settings(&root, &Flags::default()));
    match resolved {
        Ok((settings, _rules)) => {
            crate::stdio::out(&if json {
                report::config::json(&settings, exit::OK)
            } else {
                report::config::human(&settings)
            });
            exit::OK
        }
        Err(e) => {
            let msg = e.to_string();
            error(&msg);
            // With --json, one object on every exit: the envelope with the error.
            if json {
                let version = report::config::CONFIG_SCHEMA_VERSION;
                crate::stdio::out(&report::envelope::error(version, exit::BAD_INPUT, &msg));
            }
            exit::BAD_INPUT
        }
    }
}
