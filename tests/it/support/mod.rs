//! Helpers shared by the integration tests.

pub mod llm_server;
pub mod own_cache;
pub mod plans;
pub mod project;
pub mod venv;
pub mod wheel;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// `python3` as the library's runner takes it: the real interpreter behind a pyenv shim.
pub fn python3() -> selfdebug::runner::Interpreter {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    selfdebug::runner::Interpreter {
        path: PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()),
        source: selfdebug::runner::InterpreterSource::Explicit,
    }
}

/// Runs the built `selfdebug` binary with `args`, feeding `stdin` when given.
pub fn selfdebug(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_selfdebug"));
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn selfdebug");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait selfdebug");
    check_json_output(args, &out.stdout);
    out
}

/// Every captured log of a fixture project: (mode, path), sorted by mode.
pub fn logs_of(project: &str) -> Vec<(String, PathBuf)> {
    let dir = fixtures().join("tracebacks").join(project);
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    out
}

/// The fixture projects that have captured logs.
pub fn projects() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixtures().join("projects"))
        .expect("fixtures/projects")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|p| fixtures().join("tracebacks").join(p).is_dir())
        .collect();
    out.sort();
    out
}

pub fn project_root(project: &str) -> PathBuf {
    fixtures().join("projects").join(project)
}

/// Copies the tree `from` to `to` (made if missing), without the caches a local pytest run may
/// have left in a fixture (`__pycache__`, `.pytest_cache`): they are not part of it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Checks JSON documents against a schema of `schema/` (optionally one of its `$defs`) with
/// Python's `jsonschema` (scripts/test installs it). Panics with the validator's report.
pub fn assert_valid(schema: &str, def: Option<&str>, docs: &[&[u8]]) {
    // The run helpers and `project::json` both check what they see: a document is checked
    // once (a python process each time is the cost).
    static SEEN: std::sync::Mutex<Vec<(String, Vec<u8>)>> = std::sync::Mutex::new(Vec::new());
    let key = |d: &[u8]| (format!("{schema}#{def:?}"), d.to_vec());
    let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let docs: Vec<&[u8]> = docs
        .iter()
        .copied()
        .filter(|d| !seen.contains(&key(d)))
        .collect();
    drop(seen);
    if docs.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let p = dir.path().join(format!("{i}.json"));
        std::fs::write(&p, doc).expect("write doc");
        paths.push(p);
    }
    let mut cmd = Command::new(python());
    cmd.arg(repo().join("tests/it/support/validate_schema.py"))
        .arg(repo().join("schema").join(schema));
    if let Some(d) = def {
        cmd.args(["--def", d]);
    }
    let out = cmd.args(&paths).output().expect("run python3");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schema {schema} validation failed (is jsonschema installed? scripts/test installs it):\n{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report.trim(), format!("{} valid, 0 invalid", docs.len()));
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.extend(docs.iter().map(|d| key(d)));
}

/// The commands whose `--json` output has a schema in `schema/`.
const COMMANDS: [&str; 7] = [
    "fix", "parse", "probe", "rules", "restore", "config", "replay",
];

/// The schema of what `selfdebug ARGS` prints on stdout, when it prints JSON: the
/// subcommand's (`fix --show-settings` prints the config object).
pub fn schema_for(args: &[&str]) -> Option<String> {
    let before_dashes: Vec<&str> = args.iter().copied().take_while(|a| *a != "--").collect();
    let json = before_dashes.iter().enumerate().any(|(i, a)| {
        *a == "--json"
            || *a == "--output-format=json"
            || (*a == "--output-format" && before_dashes.get(i + 1) == Some(&"json"))
    });
    let command = before_dashes.iter().find(|a| COMMANDS.contains(a))?;
    let command = if *command == "fix" && before_dashes.contains(&"--show-settings") {
        "config"
    } else {
        command
    };
    json.then(|| format!("{command}.schema.json"))
}

/// The schema a JSON document of ours is an instance of, told by its fields: for helpers
/// that get a document without the command line. A bare envelope (`error` and no report)
/// has the same form in every schema but fix's (whose error object is the whole report).
pub fn schema_of_doc(doc: &serde_json::Value) -> &'static str {
    let has = |k: &str| doc.get(k).is_some();
    if has("final_status") {
        "fix.schema.json"
    } else if has("hash_algorithm") {
        "restore.schema.json"
    } else if has("rules") {
        "rules.schema.json"
    } else if has("commits") {
        "replay.schema.json"
    } else if has("settings") {
        "config.schema.json"
    } else if has("injection") {
        "probe.schema.json"
    } else {
        "parse.schema.json"
    }
}

/// Validates `stdout` of `selfdebug ARGS` against its command's schema when ARGS ask for JSON:
/// every JSON any test gets through the helpers is checked (docs/json.md's promise).
pub fn check_json_output(args: &[&str], stdout: &[u8]) {
    if let Some(schema) = schema_for(args) {
        assert_valid(&schema, None, &[stdout]);
    }
}

/// The process exited with `code`; its stderr is the failure message otherwise.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two string fields of every record of `j[list]`, in order (a missing field reads `""`).
pub fn fields2(j: &serde_json::Value, list: &str, [a, b]: [&str; 2]) -> Vec<(String, String)> {
    fields3(j, list, [a, b, a])
        .into_iter()
        .map(|(x, y, _)| (x, y))
        .collect()
}

/// Three string fields of every record in `j[list]` (`""` for a missing or non-string one):
/// compared whole, a test sees every record's outcome at once.
pub fn fields3(
    j: &serde_json::Value,
    list: &str,
    [a, b, c]: [&str; 3],
) -> Vec<(String, String, String)> {
    let s = |r: &serde_json::Value, f: &str| r[f].as_str().unwrap_or("").to_string();
    j[list]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| (s(r, a), s(r, b), s(r, c)))
        .collect()
}

/// Whether the slow tests run: `SELFDEBUG_SLOW_TESTS=1` (`.ci/run` sets it; see
/// docs/development.md).
pub fn slow_tests() -> bool {
    std::env::var_os("SELFDEBUG_SLOW_TESTS").is_some_and(|v| v == "1")
}

/// FNV-1a, 64 bits: enough to tell two versions of a small file apart, and a fixed hash of a
/// name.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether the case `name` is in a fixed one-in-`n` sample of a corpus (by its name's hash, so
/// the same cases every run), or every case runs (slow tests): how the default suite keeps its
/// 15 minutes while CI covers the whole corpus.
pub fn sampled(name: &str, n: u64) -> bool {
    slow_tests() || fnv1a(name.as_bytes()).is_multiple_of(n)
}
