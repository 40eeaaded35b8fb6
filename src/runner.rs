//! Running pytest (placeholder: being built).
