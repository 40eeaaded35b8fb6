//! What the model is told: what a careful engineer would paste into a chat. The failure (type,
//! message, the frames in the project), the probe's values, the code to repair with line
//! numbers (the failing function and its class header; the modules the test imports when the
//! failure is an assertion in the test), the failing test's source (the specification), the
//! environment (Python, the installed packages the file imports, the files next to it), and on
//! later calls each earlier candidate with the failure it led to (its last 50 lines).
//!
//! [`build`] is pure (snapshot-tested); [`snapshot`] asks the interpreter.

use std::path::Path;
use std::time::Duration;

use rustpython_parser::ast::{Ranged, Stmt};
use serde::Serialize;

use crate::probe::ProbeReport;
use crate::runner::Interpreter;
use crate::source::SourceFile;
use crate::traceback::locate::is_test_file;
use crate::traceback::Failure;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: &'static str,
    pub content: String,
}

/// The environment the code runs in (the AutoGen design's snapshot).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// `3.11.2`, or empty when the interpreter could not be asked.
    pub python: String,
    /// (distribution, version) of the installed packages the code imports.
    pub packages: Vec<(String, String)>,
    /// The files next to the file to repair, with the first lines of small data files.
    pub neighbours: Vec<String>,
}

/// An earlier candidate of this failure and what came of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Previous {
    pub diff: String,
    /// Why it was not kept: the failure it led to (pytest's output, its last lines), or why it
    /// was refused before any run.
    pub outcome: String,
}

pub struct PromptInput<'a> {
    pub root: &'a Path,
    pub failure: &'a Failure,
    pub probe: Option<&'a ProbeReport>,
    pub env: &'a Snapshot,
    pub previous: &'a [Previous],
    pub allow_tests: bool,
    /// For a failure without a test (command mode, a failed output check): the command and
    /// what its output should have been, shown as the specification.
    pub spec: Option<&'a str>,
    /// Files (relative to the root) to show whole when no frame names the code: the script a
    /// command runs.
    pub files: &'a [String],
}

/// Traceback and output lines kept per earlier try (the original design's token discipline).
pub const TAIL_LINES: usize = 50;
/// A module longer than this is shown as its failing function only (or its first lines).
const WHOLE_FILE_LINES: usize = 400;

pub const SYSTEM: &str = "You repair Python code so that its failing test passes without \
breaking other tests. The tests are the specification: do not edit test files. Answer with \
one or more SEARCH/REPLACE blocks and nothing else but a short explanation. Each block is: \
the file's path relative to the project root on its own line, then a line `<<<<<<< SEARCH`, \
then the exact lines of the current file to replace (copied exactly, with their indentation, \
no line numbers; include enough lines to be unique), then a line `=======`, then the new \
lines, then a line `>>>>>>> REPLACE`. Keep each edit minimal; do not reprint whole files.";

/// The messages for one request.
pub fn build(input: &PromptInput) -> Vec<Message> {
    let f = input.failure;
    let mut out = String::new();
    let first = crate::traceback::first_line(&f.msg);
    out.push_str("## The failure\n\n");
    if let Some(t) = &f.test {
        out.push_str(&format!("Test: {t}\n"));
    }
    out.push_str(&format!("{}: {}\n", f.exc_type, f.msg.trim_end()));
    let project: Vec<_> = f.frames.iter().filter(|fr| fr.resolved.is_some()).collect();
    if !project.is_empty() {
        out.push_str("\nFrames in the project (outermost first):\n");
        for fr in &project {
            out.push_str(&format!(
                "  {}:{} in {}: {}\n",
                fr.file,
                fr.line,
                fr.func.as_deref().unwrap_or("<module>"),
                fr.code.as_deref().unwrap_or("")
            ));
        }
    }
    if let Some(p) = input.probe.filter(|p| p.fired) {
        out.push_str(&format!(
            "\n## Values just before {}:{} (`{}`)\n\n",
            p.file,
            p.statement_line,
            crate::traceback::first_line(&p.statement).trim()
        ));
        for v in &p.locals {
            out.push_str(&format!(
                "  {} = {} ({})\n",
                v.name,
                stable_repr(&v.repr),
                v.type_name
            ));
        }
        for e in p.exprs.iter().filter(|e| e.value.is_some()) {
            let v = e.value.as_ref().expect("filtered");
            if p.locals.iter().any(|l| l.name == e.text) {
                continue;
            }
            out.push_str(&format!(
                "  {} = {} ({})\n",
                e.text,
                stable_repr(&v.repr),
                v.type_name
            ));
        }
    }
    let (code, tests) = code_and_tests(input);
    for (file, text) in &code {
        out.push_str(&format!("\n## {file}\n\n```python\n{text}```\n"));
    }
    if let Some(spec) = input.spec {
        out.push_str(&format!(
            "\n## What is expected (the specification)\n\n{}\n",
            spec.trim_end()
        ));
    }
    for (file, text) in &tests {
        out.push_str(&format!(
            "\n## The failing test ({file}, the specification{})\n\n```python\n{text}```\n",
            if input.allow_tests {
                ""
            } else {
                "; not to be edited"
            }
        ));
    }
    let env = input.env;
    if *env != Snapshot::default() {
        out.push_str("\n## Environment\n\n");
    }
    if !env.python.is_empty() {
        out.push_str(&format!("Python {}\n", env.python));
    }
    if !env.packages.is_empty() {
        let pkgs: Vec<String> = env
            .packages
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        out.push_str(&format!(
            "Installed packages it imports: {}\n",
            pkgs.join(", ")
        ));
    }
    if !env.neighbours.is_empty() {
        out.push_str("Files next to it:\n");
        for n in &env.neighbours {
            out.push_str(&format!("  {n}\n"));
        }
    }
    for (i, p) in input.previous.iter().enumerate() {
        out.push_str(&format!(
            "\n## Attempt {} (not kept)\n\n```diff\n{}```\n\n{}\n",
            i + 1,
            p.diff,
            p.outcome.trim_end()
        ));
    }
    out.push_str(&format!(
        "\nFix the cause of `{}: {first}` with SEARCH/REPLACE blocks.\n",
        f.exc_type
    ));
    if !input.previous.is_empty() {
        out.push_str("The earlier attempts above did not work; propose a different edit.\n");
    }
    vec![
        Message {
            role: "system",
            content: SYSTEM.to_string(),
        },
        Message {
            role: "user",
            content: out,
        },
    ]
}

/// A repr without object addresses (`<function f at 0x7f3b...>`), which change every run and
/// would make every request new to the cache.
fn stable_repr(repr: &str) -> String {
    static ADDR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    ADDR.get_or_init(|| regex::Regex::new(r" at 0x[0-9a-fA-F]+").expect("valid regex"))
        .replace_all(repr, "")
        .into_owned()
}

/// Files shown in the prompt: (path relative to the root, numbered source).
type Shown = Vec<(String, String)>;

/// The code to repair and the failing test.
fn code_and_tests(input: &PromptInput) -> (Shown, Shown) {
    let f = input.failure;
    let is_test = |file: &str| {
        let parts: Vec<&str> = file.split('/').collect();
        is_test_file(&parts)
    };
    let mut code: Shown = Vec::new();
    let mut tests: Shown = Vec::new();
    let frames: Vec<_> = f.frames.iter().filter(|fr| fr.resolved.is_some()).collect();
    // The deepest project frame outside the tests is where the bug most likely is.
    if let Some(fr) = frames.iter().rev().find(|fr| !is_test(&fr.file)) {
        if let Some(text) = read(input.root, &fr.file) {
            code.push((fr.file.clone(), around(&text, fr.line as usize)));
        }
    }
    if let Some(fr) = frames.iter().find(|fr| is_test(&fr.file)) {
        if let Some(text) = read(input.root, &fr.file) {
            tests.push((fr.file.clone(), around(&text, fr.line as usize)));
            // No project frame: the function under test is in a module the test imports.
            if code.is_empty() {
                for module in imported_project_modules(input.root, &fr.file, &text) {
                    if let Some(t) = read(input.root, &module) {
                        code.push((module.clone(), whole(&t)));
                    }
                }
            }
        }
    }
    if code.is_empty() && tests.is_empty() {
        for f in input.files {
            if let Some(t) = read(input.root, f) {
                code.push((f.clone(), whole(&t)));
            }
        }
    }
    (code, tests)
}

fn read(root: &Path, rel: &str) -> Option<SourceFile> {
    SourceFile::read(root.join(rel)).ok()
}

/// The function enclosing `line` (with the header of each class around it), numbered; the
/// whole file when it is short or the line is at module level.
fn around(source: &SourceFile, line: usize) -> String {
    let Ok(module) = crate::syntax::parse(source) else {
        return whole(source);
    };
    let Some(offset) = source.line_start(line) else {
        return whole(source);
    };
    let mut classes: Vec<usize> = Vec::new();
    let mut function: Option<(usize, usize)> = None;
    let mut body: &[Stmt] = module.body();
    'descend: loop {
        for s in body {
            let r = s.range();
            if !(r.start().to_usize() <= offset && offset < r.end().to_usize()) {
                continue;
            }
            let first = decorated_start(source, s);
            let last = source.line_col(r.end().to_usize().saturating_sub(1)).0;
            match s {
                Stmt::ClassDef(c) => {
                    classes.push(first);
                    function = None;
                    body = &c.body;
                    continue 'descend;
                }
                Stmt::FunctionDef(d) => {
                    function = Some((first, last));
                    body = &d.body;
                    continue 'descend;
                }
                Stmt::AsyncFunctionDef(d) => {
                    function = Some((first, last));
                    body = &d.body;
                    continue 'descend;
                }
                _ => {}
            }
        }
        break;
    }
    let Some((first, last)) = function else {
        return whole(source);
    };
    if source.line_count() <= 60 {
        return whole(source);
    }
    let mut out = String::new();
    for c in classes.iter().filter(|&&c| c < first) {
        out.push_str(&numbered(source, *c, *c));
        out.push_str("     ...\n");
    }
    out.push_str(&numbered(source, first, last));
    out
}

fn decorated_start(source: &SourceFile, s: &Stmt) -> usize {
    let decorators = match s {
        Stmt::FunctionDef(d) => &d.decorator_list,
        Stmt::AsyncFunctionDef(d) => &d.decorator_list,
        Stmt::ClassDef(c) => &c.decorator_list,
        _ => return source.line_col(s.range().start().to_usize()).0,
    };
    let start = decorators
        .iter()
        .map(|d| d.range().start().to_usize())
        .min()
        .unwrap_or(s.range().start().to_usize());
    source.line_col(start).0
}

/// The whole file numbered (its first lines when it is long).
fn whole(source: &SourceFile) -> String {
    let n = source.line_count().min(WHOLE_FILE_LINES);
    let mut out = numbered(source, 1, n);
    if source.line_count() > n {
        out.push_str(&format!(
            "     ... ({} more lines)\n",
            source.line_count() - n
        ));
    }
    out
}

/// Lines `first..=last`, each as `  12 | text`.
fn numbered(source: &SourceFile, first: usize, last: usize) -> String {
    let mut out = String::new();
    for n in first..=last {
        let Some(text) = source.line_text(n) else {
            break;
        };
        // The text exactly (the model copies it into SEARCH); no trailing space on blank lines.
        if text.is_empty() {
            out.push_str(&format!("{n:>4} |\n"));
        } else {
            out.push_str(&format!("{n:>4} | {text}\n"));
        }
    }
    out
}

/// The project files (relative paths) a test file imports: `import pkg.mod`, `from pkg import
/// mod`, `from pkg.mod import name`, resolved against the root and the test's own directory.
pub fn imported_project_modules(root: &Path, test_file: &str, source: &SourceFile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Ok(module) = crate::syntax::parse(source) else {
        return out;
    };
    let test_dir = Path::new(test_file).parent().unwrap_or(Path::new(""));
    let mut push = |dotted: &str| {
        let rel = dotted.replace('.', "/");
        for base in [Path::new(""), test_dir] {
            for cand in [format!("{rel}.py"), format!("{rel}/__init__.py")] {
                let p = base.join(&cand);
                let s = p.to_string_lossy().replace('\\', "/");
                if root.join(&p).is_file() && s != test_file && !out.contains(&s) {
                    let parts: Vec<&str> = s.split('/').collect();
                    if !is_test_file(&parts) {
                        out.push(s);
                    }
                    return;
                }
            }
        }
    };
    for s in module.body() {
        match s {
            Stmt::Import(i) => {
                for a in &i.names {
                    push(a.name.as_str());
                }
            }
            Stmt::ImportFrom(i) if i.level.is_none_or(|l| l.to_u32() == 0) => {
                if let Some(m) = &i.module {
                    for a in &i.names {
                        push(&format!("{}.{}", m.as_str(), a.name.as_str()));
                    }
                    push(m.as_str());
                }
            }
            _ => {}
        }
    }
    out
}

/// The top-level modules `source` imports (for the package versions).
fn imported_top_level(source: &SourceFile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Ok(module) = crate::syntax::parse(source) else {
        return out;
    };
    let mut push = |dotted: &str| {
        let top = dotted.split('.').next().unwrap_or("").to_string();
        if !top.is_empty() && !out.contains(&top) {
            out.push(top);
        }
    };
    for s in module.body() {
        match s {
            Stmt::Import(i) => i.names.iter().for_each(|a| push(a.name.as_str())),
            Stmt::ImportFrom(i) if i.level.is_none_or(|l| l.to_u32() == 0) => {
                if let Some(m) = &i.module {
                    push(m.as_str())
                }
            }
            _ => {}
        }
    }
    out
}

/// Asks the interpreter for its version and the installed distributions (with versions) that
/// provide the modules `files` import; lists the files next to the first of them.
pub fn snapshot(python: &Interpreter, root: &Path, files: &[String]) -> Snapshot {
    let mut modules: Vec<String> = Vec::new();
    for f in files {
        if let Ok(src) = SourceFile::read(root.join(f)) {
            for m in imported_top_level(&src) {
                if !modules.contains(&m) {
                    modules.push(m);
                }
            }
        }
    }
    let mut cmd = std::process::Command::new(&python.path);
    cmd.arg("-I").arg("-c").arg(SNAPSHOT_PY).args(&modules);
    let mut snap = Snapshot::default();
    if let Ok(run) = crate::process::run_command(cmd, Duration::from_secs(20)) {
        let text = String::from_utf8_lossy(&run.stdout);
        let mut lines = text.lines();
        snap.python = lines.next().unwrap_or("").trim().to_string();
        for l in lines {
            if let Some((n, v)) = l.split_once(' ') {
                snap.packages.push((n.to_string(), v.to_string()));
            }
        }
    }
    if let Some(first) = files.first() {
        snap.neighbours = neighbours(root, first);
    }
    snap
}

/// The version, then `dist version` for each module named on the command line that an
/// installed distribution provides (the standard library and the project itself are not).
const SNAPSHOT_PY: &str = r#"
import sys, importlib.metadata as md
print("%d.%d.%d" % sys.version_info[:3])
try:
    dists = md.packages_distributions()
except Exception:
    dists = {}
seen = set()
for m in sys.argv[1:]:
    for d in dists.get(m, []):
        if d in seen:
            continue
        seen.add(d)
        try:
            print(d, md.version(d))
        except Exception:
            pass
"#;

/// The files in the directory of `file` (at most 30), with the first 3 lines of small data
/// files (`.csv`, `.json`, `.txt`, ...), as the AutoGen design's snapshot has them.
fn neighbours(root: &Path, file: &str) -> Vec<String> {
    let dir = root
        .join(file)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".pyc"))
        .collect();
    names.sort();
    names.truncate(30);
    names
        .into_iter()
        .map(|n| {
            let data = [
                ".csv", ".json", ".txt", ".tsv", ".ini", ".toml", ".yaml", ".yml",
            ];
            let p = dir.join(&n);
            let small = std::fs::metadata(&p).is_ok_and(|m| m.len() <= 64 * 1024);
            if small && data.iter().any(|x| n.ends_with(x)) {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    let head: Vec<&str> = t.lines().take(3).collect();
                    return format!("{n}: {}", head.join(" | "));
                }
            }
            n
        })
        .collect()
}

/// The last [`TAIL_LINES`] lines of `text`.
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}
