//! CLI (placeholder)
pub fn run() -> i32 { 0 }
