//! Byte-range edits and fixes (placeholder; filled by the patch-engine work).
