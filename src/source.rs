//! Exact source bytes and their facts (placeholder; filled by the patch-engine work).
