//! Repair transforms: code that turns a located failure into candidate [`crate::edit::Fix`]es.
//! Rules (`rules/*.toml`) name a transform and give it parameters.

/// Names a rule's `transform` field may use.
pub const KNOWN: &[&str] = &["null_guard"];

/// Whether `name` is a transform this build knows.
pub fn exists(name: &str) -> bool {
    KNOWN.contains(&name)
}
