//! The tools: their input and output schemas, and how a call's arguments become the command
//! line of the child that answers it. Arguments are checked here (an unknown name, a wrong
//! type, a root that is not a directory) and refused before any child runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{json, Value};

use crate::config::declared::{
    Setting, ALLOW_TESTS, JOBS, MAX_ATTEMPTS, PYTHON, SAFE_ONLY, SEARCH_TIME, TEST_TIMEOUT,
    TIME_BUDGET,
};

/// One tool: its name, what it does, its arguments (name, JSON schema).
struct Def {
    name: &'static str,
    /// The human name a client shows (`title`, also in the annotations for older clients).
    title: &'static str,
    description: &'static str,
    args: fn() -> Vec<(&'static str, Value)>,
    /// Arguments the input schema marks required (besides `root`).
    required: &'static [&'static str],
    /// The command's JSON schema, where `schema/` has one.
    output: Option<&'static str>,
    hints: Hints,
    /// The exit code by which the command says "nothing failed, nothing to do": a success
    /// over MCP, as `fix`'s 0 is (`parse` and `probe` exit 1 then).
    nothing_to_do: Option<i32>,
}

/// The tool annotations of the MCP specification (`ToolAnnotations`): hints a client may use
/// to decide what to confirm with its user.
struct Hints {
    /// Changes nothing in its environment.
    read_only: bool,
    /// May overwrite or delete (`fix` keeps patches, `restore` writes journaled bytes back);
    /// false: only additive or no net change.
    destructive: bool,
    /// A second call with the same arguments has no further effect.
    idempotent: bool,
    /// May reach entities outside the project (`fix`: the opt-in LLM fallback).
    open_world: bool,
}

/// Reads only: no change, idempotent, closed world.
const READS: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

const ROOT: &str = "Project root: an existing directory, absolute, or relative to one of the \
    client's MCP roots. The child runs there and is given it as --root.";

fn root() -> (&'static str, Value) {
    ("root", json!({"type": "string", "description": ROOT}))
}

fn log(what: &str) -> (&'static str, Value) {
    ("log", json!({"type": "string", "description": what}))
}

/// The same log as a file: what a log too large for one message (over 16 MiB) is passed as.
fn log_file() -> (&'static str, Value) {
    (
        "log_file",
        json!({"type": "string", "description": "The failing log as a file instead of its \
            text (absolute, or relative to root): for a log too large to send (a message is at \
            most 16 MiB). Not with `log`; it stands in for `log` where that is required."}),
    )
}

fn seconds(what: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "description": what})
}

fn fix_args() -> Vec<(&'static str, Value)> {
    vec![
        root(),
        (
            "detail",
            json!({"type": "string", "enum": ["summary", "full"], "default": "summary",
            "description": "summary (default): the outcome, the patches with their diffs and \
                            the proof's counts, each failure's status with a one-line reason \
                            (schema/fix-summary.schema.json). full: the whole report of \
                            `selfdebug fix --json`, with every attempt and probe value."}),
        ),
        log(
            "The text of a failing pytest log (or a traceback); without it pytest is run to \
             find the failures.",
        ),
        log_file(),
        (
            "pytest_args",
            json!({"type": "array", "items": {"type": "string"},
            "description": "Extra arguments for every pytest run (what follows `--` on the \
                            command line)."}),
        ),
        (
            "test",
            json!({"type": "string",
            "description": "Work only on this test: a node id or a bare test name (--module)."}),
        ),
        (
            "dry_run",
            json!({"type": "boolean", "default": true,
            "description": "Change nothing: prove candidates in a scratch copy and return the \
                            patch (`patches[].diff`, for `git apply`). Default true over MCP; \
                            false keeps proven fixes in the files."}),
        ),
        (
            "safe_only",
            json!({"type": "boolean",
            "description": "Try only fixes of rules marked safe."}),
        ),
        (
            "allow_tests",
            json!({"type": "boolean",
            "description": "Let fixes edit test files."}),
        ),
        (
            "max_attempts",
            json!({"type": "integer", "minimum": 1,
            "description": "Candidates to try per failure (default 4)."}),
        ),
        (
            "time_budget",
            seconds("Seconds for the whole run (default 900)."),
        ),
        (
            "search_time",
            seconds(
                "Seconds the search over small edits may spend on one \
                                 wrong-output failure (default 60).",
            ),
        ),
        (
            "test_timeout",
            seconds("Seconds one test may run (default 60)."),
        ),
        (
            "jobs",
            json!({"type": "integer", "minimum": 1,
            "description": "Candidates proven at once, each in a scratch copy (1: one at a \
                            time, in the project itself)."}),
        ),
        (
            "cmd",
            json!({"type": "string",
            "description": "Command mode: this command is the judge instead of pytest, e.g. \
                            `python script.py in.csv` (no log, test or pytest_args then)."}),
        ),
        (
            "expect_stdout_regex",
            json!({"type": "string",
            "description": "With cmd: a passing run's stdout has a match for this regex."}),
        ),
        (
            "stderr_empty",
            json!({"type": "boolean",
            "description": "With cmd: a run that prints anything on stderr has failed."}),
        ),
        (
            "python",
            json!({"type": "string",
            "description": "Interpreter to run pytest with (default: the project's venv, \
                            else python3)."}),
        ),
    ]
}

fn parse_args() -> Vec<(&'static str, Value)> {
    vec![
        root(),
        log(
            "The log's text: pytest output (any --tb style), unittest output or a Python \
             traceback.",
        ),
        log_file(),
    ]
}

fn probe_args() -> Vec<(&'static str, Value)> {
    vec![
        root(),
        log("The text of a failing pytest log; without it pytest is run to find a failure."),
        log_file(),
        (
            "test",
            json!({"type": "string",
            "description": "Probe only this failing test (a pytest node id)."}),
        ),
        (
            "python",
            json!({"type": "string", "description": "Interpreter to run pytest with."}),
        ),
    ]
}

fn root_only() -> Vec<(&'static str, Value)> {
    vec![root()]
}

const TOOLS: &[Def] = &[
    Def {
        name: "fix",
        title: "Fix failing tests",
        description: "Propose repairs for the failing tests of a Python project and prove \
            each with pytest. Dry run by default: nothing changes and each proven patch comes \
            back as a unified diff (`patches[].diff`) to apply with `git apply`; with \
            dry_run false proven fixes are kept in the files. Progress notifications follow \
            the run's phases; cancelling the call interrupts it and restores every file it \
            touched. One run per project at a time: a second gets the lock's error. The \
            result is a summary (schema/fix-summary.schema.json: the outcome, the patches with \
            their diffs and proof counts, each failure's status and reason); with detail \
            \"full\", `selfdebug fix --json` (schema/fix.schema.json).",
        args: fix_args,
        required: &[],
        output: Some(include_str!("../../schema/fix.schema.json")),
        // `dry_run: false` keeps patches in the files.
        hints: Hints {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        nothing_to_do: None,
    },
    Def {
        name: "parse",
        title: "Read a failing log",
        description: "Read a pytest log, unittest output or Python traceback and return its \
            failures (test, file, line, exception, category). Runs nothing. The result is \
            `selfdebug parse --json` (schema/parse.schema.json).",
        args: parse_args,
        required: &["log"],
        output: Some(include_str!("../../schema/parse.schema.json")),
        hints: READS,
        nothing_to_do: Some(crate::exit::NO_FAILURE),
    },
    Def {
        name: "probe",
        title: "Probe the failing line",
        description: "Run a failing test once with a probe before the failing statement and \
            return the values it saw (locals, the type of each sub-expression). The file is \
            restored byte for byte. The result is `selfdebug probe --json` (schema/probe.schema.json).",
        args: probe_args,
        required: &[],
        output: Some(include_str!("../../schema/probe.schema.json")),
        // The probe is in the file while the test runs, then the bytes are restored: no net
        // change, but not read-only.
        hints: Hints {
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        nothing_to_do: Some(crate::exit::NO_FAILURE),
    },
    Def {
        name: "rules",
        title: "List the repair rules",
        description: "List the repair rules in force: built in, and the project's own in \
            .selfdebug/rules/*.toml. The result is `selfdebug rules --json` (schema/rules.schema.json).",
        args: root_only,
        required: &[],
        output: Some(include_str!("../../schema/rules.schema.json")),
        hints: READS,
        nothing_to_do: None,
    },
    Def {
        name: "restore",
        title: "Restore a killed run's files",
        description: "Restore the files of a selfdebug run that was killed, from its journal, \
            verifying each by hash. Touches nothing else. The result is \
            `selfdebug restore --json` (schema/restore.schema.json).",
        args: root_only,
        required: &[],
        output: Some(include_str!("../../schema/restore.schema.json")),
        // Writes the journaled bytes over the files; a second call finds nothing to restore.
        hints: Hints {
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        },
        nothing_to_do: None,
    },
    Def {
        name: "config",
        title: "Show the settings",
        description: "The effective settings of `fix` in this project and where each comes \
            from. The result is `selfdebug config --json` (schema/config.schema.json).",
        args: root_only,
        required: &[],
        output: Some(include_str!("../../schema/config.schema.json")),
        hints: READS,
        nothing_to_do: None,
    },
];

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(o) => Arc::new(o),
        _ => Arc::new(JsonObject::new()),
    }
}

fn input_schema(def: &Def) -> Value {
    let props: serde_json::Map<String, Value> = (def.args)()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mut required = vec!["root"];
    required.extend(def.required);
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// `fix`'s output schema: the full report or the summary (`detail`), each schema embedded
/// whole under its own `$id` (so that each one's `#/$defs/...` resolves in itself).
fn either_detail(full: Value) -> Value {
    let summary: Value = serde_json::from_str(include_str!("../../schema/fix-summary.schema.json"))
        .expect("schema/*.json is JSON");
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://selfdebug.dev/schema/v1/mcp-fix.schema.json",
        "title": "selfdebug mcp: fix",
        "description": "fix-summary.schema.json with detail \"summary\" (the default), \
            fix.schema.json with detail \"full\".",
        "type": "object",
        "anyOf": [{"$ref": summary["$id"]}, {"$ref": full["$id"]}],
        "$defs": {"summary": summary, "full": full},
    })
}

/// The tools as `tools/list` returns them.
pub fn list() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|def| {
            let mut tool = Tool::new(def.name, def.description, object(input_schema(def)))
                .with_title(def.title);
            if let Some(schema) = def.output {
                // The files are ours and parsed by a unit test; a broken one is a build bug.
                let schema: Value = serde_json::from_str(schema).expect("schema/*.json is JSON");
                tool.output_schema = Some(object(if def.name == "fix" {
                    either_detail(schema)
                } else {
                    schema
                }));
            }
            let h = &def.hints;
            tool.annotations = Some(
                rmcp::model::ToolAnnotations::with_title(def.title)
                    .read_only(h.read_only)
                    .destructive(h.destructive)
                    .idempotent(h.idempotent)
                    .open_world(h.open_world),
            );
            tool
        })
        .collect()
}

/// A call turned into a child's command line.
#[derive(Debug)]
pub struct Invocation {
    pub root: PathBuf,
    pub args: Vec<OsString>,
    pub stdin: Option<Vec<u8>>,
    /// `fix` reports progress.
    pub progress: bool,
    /// The exit code that means "nothing to do" (a success result), see [`Def`].
    pub nothing_to_do: Option<i32>,
    /// `fix` with `detail: "summary"` (the default): the result is the summary.
    pub summary: bool,
}

/// Why a call is refused before any child runs; the text is the tool error the caller reads.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    #[error("no tool named {0:?}")]
    NoTool(String),
    #[error("{tool}: unknown argument `{name}` (known: {known})")]
    Unknown {
        tool: &'static str,
        name: String,
        known: String,
    },
    /// `want` is the JSON type asked for, as the message says it ("a string").
    #[error("{tool}: `{key}` must be {want}")]
    WrongType {
        tool: &'static str,
        key: String,
        want: &'static str,
    },
    #[error("{tool}: give `log` or `log_file`, not both")]
    BothLogs { tool: &'static str },
    #[error("{tool}: `{key}` is required")]
    Required {
        tool: &'static str,
        key: &'static str,
    },
    #[error(
        "{tool}: root {root:?} is relative and the client declared no MCP roots to resolve it \
         against: pass an absolute path"
    )]
    Relative { tool: &'static str, root: String },
    #[error("{tool}: root {root:?} is not an existing directory")]
    NotADirectory { tool: &'static str, root: String },
    #[error("{tool}: root {root:?}: {error}")]
    Root {
        tool: &'static str,
        root: String,
        error: std::io::Error,
    },
}

/// The arguments of one call, checked against the tool's schema as they are read.
struct Args<'a> {
    tool: &'static str,
    map: &'a JsonObject,
}

impl Args<'_> {
    fn wrong(&self, key: &str, want: &'static str) -> ArgError {
        ArgError::WrongType {
            tool: self.tool,
            key: key.to_string(),
            want,
        }
    }

    fn str(&self, key: &str) -> Result<Option<&str>, ArgError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ArgError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong(key, "true or false")),
        }
    }

    fn count(&self, key: &str) -> Result<Option<u64>, ArgError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(self.wrong(key, "a whole number, at least 1")),
            },
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ArgError> {
        const WANT: &str = "a list of strings";
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| self.wrong(key, WANT))
                })
                .collect(),
            Some(_) => Err(self.wrong(key, WANT)),
        }
    }
}

/// The project root of a call: it must name an existing directory.
fn project_root(args: &Args) -> Result<PathBuf, ArgError> {
    let root = args.str("root")?.ok_or(ArgError::Required {
        tool: args.tool,
        key: "root",
    })?;
    let path = Path::new(root);
    // A relative root was resolved against the client's roots before (see `super::roots`);
    // one still relative had none, and the server's own directory means nothing to a client.
    if path.is_relative() {
        return Err(ArgError::Relative {
            tool: args.tool,
            root: root.to_string(),
        });
    }
    if !path.is_dir() {
        return Err(ArgError::NotADirectory {
            tool: args.tool,
            root: root.to_string(),
        });
    }
    path.canonicalize().map_err(|error| ArgError::Root {
        tool: args.tool,
        root: root.to_string(),
        error,
    })
}

/// `log` (its text, given to the child on stdin as `-`) or `log_file` (the path, relative to the
/// root, as the command's log argument): what the child reads its log from.
fn log_input(
    args: &Args,
    root: &Path,
    cli: &mut Vec<OsString>,
) -> Result<Option<Vec<u8>>, ArgError> {
    match (args.str("log")?, args.str("log_file")?) {
        (Some(_), Some(_)) => Err(ArgError::BothLogs { tool: args.tool }),
        (Some(text), None) => {
            cli.push("-".into());
            Ok(Some(text.as_bytes().to_vec()))
        }
        (None, Some(file)) => {
            cli.push(root.join(file).into_os_string());
            Ok(None)
        }
        (None, None) => Ok(None),
    }
}

/// A declared setting as a tool's argument (`max_attempts`) and the flag it becomes.
fn argument<T>(setting: &Setting<T>) -> (String, &'static str) {
    (setting.key.replace('-', "_"), setting.flag)
}

/// The child's command line for a call of `name` with `arguments`, or the one-line reason the
/// call is refused (nothing runs then).
pub fn invocation(name: &str, arguments: Option<&JsonObject>) -> Result<Invocation, ArgError> {
    let def = TOOLS
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| ArgError::NoTool(name.to_string()))?;
    let empty = JsonObject::new();
    let args = Args {
        tool: def.name,
        map: arguments.unwrap_or(&empty),
    };
    let known: Vec<&str> = (def.args)().into_iter().map(|(k, _)| k).collect();
    if let Some(unknown) = args.map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ArgError::Unknown {
            tool: def.name,
            name: unknown.clone(),
            known: known.join(", "),
        });
    }
    let root = project_root(&args)?;
    let mut cli: Vec<OsString> = vec![name.into(), "--json".into(), "--root".into()];
    cli.push(root.clone().into_os_string());
    let mut stdin = None;
    let mut summary = false;
    let flag = |cli: &mut Vec<OsString>, f: &str, v: Option<String>| {
        if let Some(v) = v {
            cli.push(f.into());
            cli.push(v.into());
        }
    };
    match name {
        "fix" => {
            summary = match args.str("detail")? {
                None | Some("summary") => true,
                Some("full") => false,
                Some(_) => return Err(args.wrong("detail", "\"summary\" or \"full\"")),
            };
            if args.bool("dry_run")?.unwrap_or(true) {
                cli.push("--dry-run".into());
            }
            // A declared setting's argument is its key with `_` and its flag the declaration's.
            for (key, f) in [
                argument(&SAFE_ONLY),
                argument(&ALLOW_TESTS),
                ("stderr_empty".into(), "--stderr-empty"),
            ] {
                if args.bool(&key)? == Some(true) {
                    cli.push(f.into());
                }
            }
            for (key, f) in [
                argument(&MAX_ATTEMPTS),
                argument(&TIME_BUDGET),
                argument(&SEARCH_TIME),
                argument(&TEST_TIMEOUT),
                argument(&JOBS),
            ] {
                flag(&mut cli, f, args.count(&key)?.map(|n| n.to_string()));
            }
            for (key, f) in [
                ("test".into(), "--module"),
                ("cmd".into(), "--cmd"),
                ("expect_stdout_regex".into(), "--expect-stdout-regex"),
                argument(&PYTHON),
            ] {
                flag(&mut cli, f, args.str(&key)?.map(str::to_string));
            }
            stdin = log_input(&args, &root, &mut cli)?;
            let pytest_args = args.strings("pytest_args")?;
            if !pytest_args.is_empty() {
                cli.push("--".into());
                cli.extend(pytest_args.into_iter().map(OsString::from));
            }
        }
        "parse" => {
            if args.str("log")?.is_none() && args.str("log_file")?.is_none() {
                return Err(ArgError::Required {
                    tool: def.name,
                    key: "log",
                });
            }
            stdin = log_input(&args, &root, &mut cli)?;
        }
        "probe" => {
            flag(&mut cli, "--module", args.str("test")?.map(str::to_string));
            flag(
                &mut cli,
                "--python",
                args.str("python")?.map(str::to_string),
            );
            stdin = log_input(&args, &root, &mut cli)?;
        }
        _ => {}
    }
    Ok(Invocation {
        root,
        args: cli,
        stdin,
        progress: name == "fix",
        nothing_to_do: def.nothing_to_do,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Value) -> Result<Invocation, String> {
        invocation(name, args.as_object()).map_err(|e| e.to_string())
    }

    fn words(inv: &Invocation) -> Vec<String> {
        inv.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn every_tool_has_schemas_of_objects() {
        let tools = list();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            ["fix", "parse", "probe", "rules", "restore", "config"]
        );
        for t in &tools {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            // Every command has a schema (schema/*.schema.json), so every tool declares it.
            let out = t.output_schema.as_ref().expect(&t.name);
            assert_eq!(out["type"], "object", "{}", t.name);
        }
    }

    #[test]
    fn annotations_say_what_each_tool_does_to_the_project() {
        // (title, readOnly, destructive, idempotent, openWorld) as `tools/list` sends them.
        let got: Vec<Value> = list()
            .iter()
            .map(|t| {
                let a = serde_json::to_value(t.annotations.as_ref().unwrap()).unwrap();
                json!([
                    t.name,
                    t.title,
                    a["title"],
                    a["readOnlyHint"],
                    a["destructiveHint"],
                    a["idempotentHint"],
                    a["openWorldHint"]
                ])
            })
            .collect();
        assert_eq!(
            got,
            [
                json!([
                    "fix",
                    "Fix failing tests",
                    "Fix failing tests",
                    false,
                    true,
                    false,
                    true
                ]),
                json!([
                    "parse",
                    "Read a failing log",
                    "Read a failing log",
                    true,
                    false,
                    true,
                    false
                ]),
                json!([
                    "probe",
                    "Probe the failing line",
                    "Probe the failing line",
                    false,
                    false,
                    true,
                    false
                ]),
                json!([
                    "rules",
                    "List the repair rules",
                    "List the repair rules",
                    true,
                    false,
                    true,
                    false
                ]),
                json!([
                    "restore",
                    "Restore a killed run's files",
                    "Restore a killed run's files",
                    false,
                    true,
                    true,
                    false
                ]),
                json!([
                    "config",
                    "Show the settings",
                    "Show the settings",
                    true,
                    false,
                    true,
                    false
                ]),
            ]
        );
        let parse = list().into_iter().find(|t| t.name == "parse").unwrap();
        assert_eq!(parse.input_schema["required"], json!(["root", "log"]));
    }

    #[test]
    fn fix_is_a_dry_run_unless_asked_and_maps_every_flag() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let r = root.to_str().unwrap();
        let inv = call("fix", json!({"root": r})).unwrap();
        assert_eq!(words(&inv), ["fix", "--json", "--root", r, "--dry-run"]);
        assert!(inv.progress && inv.stdin.is_none());
        let inv = call(
            "fix",
            json!({"root": r, "dry_run": false, "safe_only": true, "time_budget": 30,
                   "search_time": 5, "jobs": 1, "test": "test_x", "log": "LOG",
                   "pytest_args": ["-k", "x"]}),
        )
        .unwrap();
        assert_eq!(
            words(&inv),
            [
                "fix",
                "--json",
                "--root",
                r,
                "--safe-only",
                "--time-budget",
                "30",
                "--search-time",
                "5",
                "--jobs",
                "1",
                "--module",
                "test_x",
                "-",
                "--",
                "-k",
                "x"
            ]
        );
        assert_eq!(inv.stdin.as_deref(), Some(&b"LOG"[..]));
    }

    #[test]
    fn bad_arguments_are_refused_with_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path().to_str().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let cases = [
            ("fix", json!({}), "fix: `root` is required"),
            ("fix", json!({"root": 3}), "fix: `root` must be a string"),
            (
                "fix",
                json!({"root": r, "jobs": 0}),
                "fix: `jobs` must be a whole number, at least 1",
            ),
            (
                "fix",
                json!({"root": r, "dry_run": "no"}),
                "fix: `dry_run` must be true or false",
            ),
            ("parse", json!({"root": r}), "parse: `log` is required"),
            (
                "fix",
                json!({"root": r, "detail": "all"}),
                "fix: `detail` must be \"summary\" or \"full\"",
            ),
            (
                "fix",
                json!({"root": "proj"}),
                "fix: root \"proj\" is relative and the client declared no MCP roots to \
                 resolve it against: pass an absolute path",
            ),
            ("nope", json!({}), "no tool named \"nope\""),
        ];
        for (tool, args, msg) in cases {
            assert_eq!(call(tool, args).err().as_deref(), Some(msg));
        }
        let err = call("rules", json!({"root": file.to_str().unwrap()})).unwrap_err();
        assert!(err.ends_with("is not an existing directory"), "{err}");
        let err = call("rules", json!({"root": r, "x": 1})).unwrap_err();
        assert_eq!(err, "rules: unknown argument `x` (known: root)");
    }
}
