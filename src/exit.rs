//! exit codes
