//! Repairs of failed look-ups: a misspelt attribute (`attr_rename`), a missing key
//! (`key_lookup`) and an index out of range (`index_guard`).

pub mod attr;
pub mod index;
pub mod key;
