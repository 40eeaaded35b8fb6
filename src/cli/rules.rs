//! `selfdebug rules` (being built).

use super::{error, RulesArgs};
use crate::exit;

pub fn run(_args: &RulesArgs) -> i32 {
    error("`rules` is not available in this build yet");
    exit::BAD_INPUT
}
