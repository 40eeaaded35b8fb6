//! The probe (placeholder: being built).
