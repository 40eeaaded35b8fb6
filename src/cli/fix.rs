//! `selfdebug fix` (being built).

use super::{error, FixArgs};
use crate::exit;

pub fn run(_args: &FixArgs) -> i32 {
    error("`fix` is not available in this build yet");
    exit::BAD_INPUT
}
