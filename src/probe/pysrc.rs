//! The Python side of the probe: the source that runs at each hit, and the one line that runs it.
//!
//! The injected line is a single expression statement that binds no name in the user's scope:
//!
//! ```text
//! __import__("builtins").exec(__import__("sys").__dict__.get("K_code") or
//!     __import__("sys").__dict__.setdefault("K_code", __import__("builtins").compile("<SRC>",
//!     "<selfdebug-probe>", "exec")), {"_sd_l": __import__("builtins").locals(),
//!     "_sd_g": __import__("builtins").globals()})
//! ```
//!
//! (on one line). `locals`/`globals` are reached through `builtins` so that a user variable
//! named `locals` cannot change what the line does; the compiled code is cached on `sys` so a
//! probe in a hot loop compiles once. Everything `<SRC>` does is inside `try: ...
//! except BaseException: pass`; it never prints, and it writes only to `$SELFDEBUG_PROBE_OUT`.
//! The line is pure ASCII (every string is escaped), so it is encodable in any source encoding.

/// Name of the environment variable holding the path the probe appends its JSON lines to.
pub const OUT_ENV: &str = "SELFDEBUG_PROBE_OUT";
/// Hits written as they happen; later hits keep only the latest record in memory, written at
/// interpreter exit (so the failing iteration of a long loop is still reported).
pub const HIT_CAP: usize = 50;
/// `repr` and exception messages are cut to this many characters.
pub const REPR_MAX: usize = 400;
/// At most this many locals are recorded.
pub const LOCALS_MAX: usize = 100;
/// At most this many names of a scope or of a `dir()` are recorded: more than CPython's 750
/// candidates, so that "too many for a suggestion" is still known (the totals are recorded too).
pub const NAMES_MAX: usize = 800;

/// What the probe records besides values, for the failure at hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    /// A `NameError`'s name: record the names visible in the frame (CPython's candidates).
    pub name_error: Option<String>,
    /// Indexes of the expressions whose `dir()` to record (receivers of a failing attribute).
    pub dirs: Vec<usize>,
    /// Indexes of the expressions whose `inspect.signature` to record (callees).
    pub signatures: Vec<usize>,
}

/// Runs at each hit with `_sd_l` (the frame's `locals()`) and `_sd_g` (its `globals()`), after
/// [`crate::plugin::VALUES_SOURCE`] (the recording shared with the plugin's facts). Placeholders:
/// `@KEY@`, `@EXPRS@`, `@CAP@`, `@OUT@`, `@NAME@`, `@DIRS@`, `@SIGS@`.
const TEMPLATE: &str = r#"def _sd_record(L, G, hit):
    import os, sys
    mf = G.get('__file__')
    mn = G.get('__name__')
    rec = {'hit': hit, 'pid': os.getpid(),
           'module': mn if isinstance(mn, str) else None,
           'module_file': mf if isinstance(mf, str) else None,
           'module_level': L is G, 'locals': [], 'exprs': [],
           'py': list(sys.version_info[:2])}
    if @NAME@ is not None:
        try:
            rec['scope'] = scope(L, G, builtins_of(G), @NAME@)
        except BaseException:
            pass
    add_locals(rec, L, G)
    for i, src in enumerate(@EXPRS@):
        try:
            v = eval(src, G, L)
        except BaseException as e:
            rec['exprs'].append({'i': i, 'error': error(e)})
            continue
        d = value(v)
        d['i'] = i
        if i in @DIRS@:
            add_dir(d, v, L)
        if i in @SIGS@:
            add_params(d, v)
        rec['exprs'].append(d)
    return rec

def _sd_flush(st):
    try:
        if st['last'] is not None:
            write(st['out'], st['last'])
            st['last'] = None
    except BaseException:
        pass

def _sd_main(L, G):
    import sys
    st = sys.__dict__.get(@KEY@)
    if st is None:
        import os
        st = {'hits': 0, 'out': os.environ.get(@OUT@), 'last': None, 'busy': False}
        sys.__dict__[@KEY@] = st
        if st['out']:
            import atexit
            atexit.register(_sd_flush, st)
    if st['busy']:
        return
    st['hits'] += 1
    if not st['out']:
        return
    st['busy'] = True
    try:
        rec = _sd_record(L, G, st['hits'])
        if st['hits'] <= @CAP@:
            write(st['out'], rec)
        else:
            st['last'] = rec
    finally:
        st['busy'] = False

try:
    _sd_main(_sd_l, _sd_g)
except BaseException:
    pass
"#;

/// The probe's Python source for these expression texts (already in evaluable form).
pub fn probe_source(key: &str, exprs: &[String], extras: &Extras) -> String {
    let list = if exprs.is_empty() {
        "()".to_string()
    } else {
        let items: Vec<String> = exprs.iter().map(|e| py_str(e)).collect();
        format!("({},)", items.join(", "))
    };
    let main = TEMPLATE
        .replace("@KEY@", &py_str(key))
        .replace("@EXPRS@", &list)
        .replace("@CAP@", &HIT_CAP.to_string())
        .replace("@OUT@", &py_str(OUT_ENV))
        .replace(
            "@NAME@",
            &extras.name_error.as_deref().map_or("None".into(), py_str),
        )
        .replace("@DIRS@", &py_set(&extras.dirs))
        .replace("@SIGS@", &py_set(&extras.signatures));
    // Joined after the replacements: the shared source is not a template.
    format!("{}\n{main}", crate::plugin::VALUES_SOURCE)
}

/// A Python set (or empty tuple) literal of indexes.
fn py_set(items: &[usize]) -> String {
    if items.is_empty() {
        return "()".into();
    }
    let parts: Vec<String> = items.iter().map(usize::to_string).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The single line (no indentation, no newline) that runs `source`.
pub fn probe_line(key: &str, source: &str) -> String {
    let code_key = py_str(&format!("{key}_code"));
    format!(
        "__import__(\"builtins\").exec(__import__(\"sys\").__dict__.get({code_key}) or \
         __import__(\"sys\").__dict__.setdefault({code_key}, __import__(\"builtins\").compile({src}, \
         \"<selfdebug-probe>\", \"exec\")), {{\"_sd_l\": __import__(\"builtins\").locals(), \
         \"_sd_g\": __import__(\"builtins\").globals()}})",
        src = py_str(source)
    )
}

/// A double-quoted Python string literal of `s` that is pure printable ASCII.
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(ch),
            c if (c as u32) <= 0xFF => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_ascii_and_escaped() {
        assert_eq!(py_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(py_str("é€😀\u{7}"), r#""\xe9\u20ac\U0001f600\x07""#);
        let line = probe_line(
            "_k",
            &probe_source("_k", &["d[\"é\"]".to_string()], &Extras::default()),
        );
        assert!(line.is_ascii());
        assert!(!line.contains('\n'));
    }
}
