//! `selfdebug rules`: list the rules in force (built in and the project's own).

use super::{error, RulesArgs};
use crate::report::format::wants_json;
use crate::rules::RuleSet;
use crate::{exit, report};

pub fn run(args: &RulesArgs) -> i32 {
    let root = match crate::project::ProjectRoot::find(args.root.as_deref()) {
        Ok(r) => r,
        Err(msg) => {
            error(msg);
            return exit::BAD_INPUT;
        }
    };
    let set = match RuleSet::load(root.path()) {
        Ok(set) => set,
        Err(e) => {
            // One line naming the file and the problem; nothing on stdout.
            error(e);
            return exit::BAD_INPUT;
        }
    };
    let out = if wants_json(args.json, args.output_format) {
        report::rules::json(&set)
    } else {
        report::rules::human(&set)
    };
    print!("{out}");
    exit::OK
}
