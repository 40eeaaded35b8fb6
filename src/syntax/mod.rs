//! Parsing Python and locating statements (placeholder; filled by the patch-engine work).
