//! Compiles `rules/*.toml` into the binary: writes a table of (file stem, contents) to
//! `$OUT_DIR/builtin_rules.rs`, so adding a built-in rule is just adding a file.
//! Dependency-free on purpose; parsing and validation happen in `src/rules.rs`.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("rules");
    // A directory makes cargo rescan it, so a new or removed rule file reruns this script.
    println!("cargo:rerun-if-changed=rules");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read rules/")
        .map(|e| e.expect("rules/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub(crate) const BUILTIN_RULES: &[(&str, &str)] = &[\n");
    for path in &files {
        let stem = path.file_stem().expect("stem").to_string_lossy();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("rules/ names must be UTF-8");
        // The path from the crate being compiled, not from where this script last ran: one
        // target dir may build several copies of the source (pre-commit's clone, then the
        // checkout; the Action's cached target dir), and cargo reruns this script only when
        // `rules/` is newer than its last run, so an absolute path here could name a copy
        // that is gone. `{:?}` of a str is a valid Rust string literal.
        writeln!(
            out,
            "    ({stem:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/rules/\", {name:?}))),"
        )
        .expect("write to String");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("builtin_rules.rs");
    std::fs::write(dest, out).expect("write builtin_rules.rs");
}
