//! Python's private name mangling: inside `class C`, an identifier `__x` that does not end in
//! `__` means `_C__x` (leading underscores of the class name dropped; a class named only with
//! underscores mangles nothing). Messages and `dir()` show the mangled name, the source the
//! written one, so a repair has to translate both ways.

/// `class`'s name as it appears in mangled names, when it mangles at all.
fn stem(class: &str) -> Option<&str> {
    let s = class.trim_start_matches('_');
    (!s.is_empty()).then_some(s)
}

/// `__x` written inside `class` → `_class__x`; `None` when the name is not private there.
pub fn mangle(name: &str, class: &str) -> Option<String> {
    let private = name.starts_with("__") && !name.ends_with("__") && !name.contains('.');
    if !private {
        return None;
    }
    Some(format!("_{}{name}", stem(class)?))
}

/// `_class__x` → `__x`, the way it is written inside `class`; `None` for any other name.
pub fn unmangle(name: &str, class: &str) -> Option<String> {
    let rest = name.strip_prefix('_')?.strip_prefix(stem(class)?)?;
    let written = rest.to_string();
    (mangle(&written, class).as_deref() == Some(name)).then_some(written)
}

/// Whether `name` looks like another class's private attribute (`_Other__x`): a name that
/// code in one class is not meant to reach in another.
pub fn is_mangled_for_other(name: &str, class: &str) -> bool {
    let Some(rest) = name.strip_prefix('_') else {
        return false;
    };
    match rest.find("__") {
        Some(i) if i > 0 => {
            let owner = &rest[..i];
            let tail = &rest[i + 2..];
            owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !tail.is_empty()
                && !tail.ends_with("__")
                && Some(owner) != stem(class)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways() {
        assert_eq!(mangle("__itmer", "Timer").as_deref(), Some("_Timer__itmer"));
        assert_eq!(
            mangle("__itmer", "_Timer").as_deref(),
            Some("_Timer__itmer")
        );
        assert_eq!(mangle("__init__", "Timer"), None);
        assert_eq!(mangle("_timer", "Timer"), None);
        assert_eq!(mangle("__x", "__"), None);
        assert_eq!(
            unmangle("_Timer__itmer", "Timer").as_deref(),
            Some("__itmer")
        );
        assert_eq!(
            unmangle("_Timer__itmer", "__Timer").as_deref(),
            Some("__itmer")
        );
        assert_eq!(unmangle("_Timer__init__", "Timer"), None);
        assert_eq!(unmangle("_Timer_x", "Timer"), None);
        assert_eq!(unmangle("_Clock__x", "Timer"), None);
        assert!(is_mangled_for_other("_Clock__tick", "Timer"));
        assert!(!is_mangled_for_other("_Timer__tick", "Timer"));
        assert!(!is_mangled_for_other("_tick", "Timer"));
        assert!(!is_mangled_for_other("__tick", "Timer"));
    }
}
