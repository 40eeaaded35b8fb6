//! Rendering results for people (stderr/stdout text) and for programs (JSON).

pub mod config;
pub mod envelope;
pub mod fix;
pub mod format;
pub mod github;
pub mod parse;
pub mod probe;
pub mod restore;
pub mod rules;
#[cfg(test)]
mod schemas;
pub mod style;
