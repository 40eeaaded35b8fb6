//! `selfdebug probe` (being built).

use super::{error, ProbeArgs};
use crate::exit;

pub fn run(_args: &ProbeArgs) -> i32 {
    error("`probe` is not available in this build yet");
    exit::BAD_INPUT
}
