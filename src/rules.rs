//! Repair rules (placeholder: being built).
