//! `selfdebug rules`: list the rules in force (built in and the project's own).

use super::{error, InputError, RulesArgs};
use crate::report::format::wants_json;
use crate::rules::RuleSet;
use crate::{exit, report};

pub fn run(args: &RulesArgs) -> i32 {
    let json = wants_json(args.json, args.output_format);
    let loaded = crate::project::ProjectRoot::find(args.root.as_deref())
        .map_err(InputError::from)
        .and_then(|root| RuleSet::load(root.path()).map_err(InputError::from));
    let set = match loaded {
        Ok(set) => set,
        Err(e) => {
            // One line naming the file and the problem; with --json the envelope on stdout.
            let msg = e.to_string();
            error(&msg);
            if json {
                let doc =
                    report::envelope::error(report::rules::SCHEMA_VERSION, exit::BAD_INPUT, &msg);
                crate::stdio::out(&doc);
            }
            return exit::BAD_INPUT;
        }
    };
    crate::stdio::out(&if json {
        report::rules::json(&set, exit::OK)
    } else {
        report::rules::human(&set)
    });
    exit::OK
}
