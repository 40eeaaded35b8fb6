//! Rendering results for people (stderr/stdout text) and for programs (JSON).

pub mod parse;
pub mod rules;
