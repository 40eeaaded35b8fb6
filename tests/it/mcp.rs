//! `selfdebug mcp` driven by a client nobody here wrote: the official Python MCP SDK's stdio
//! client (`tests/it/mcp_client.py`), in one session: the spec version and capabilities, the
//! tools with their schemas, titles and annotations, relative roots resolved against the
//! client's MCP roots (and refused without them), a root that is not a directory, `parse`,
//! `fix` as a dry run whose summary (under 4 KB) and patch `git apply` takes, its progress
//! (with `total`) and log messages, the full report's proof runs, two bugs in one file as two
//! fixes each applying alone, `fix` for real, "nothing to do" as a success of every tool, and
//! a run held with a candidate in the file (see `support::project::held_project`) that a
//! second run cannot lock (`lock_pid`) and that a cancel ends with the file restored. Skipped,
//! with the reason, when `mcp` cannot be imported (scripts/test installs it).

use std::process::Command;

use serde_json::{json, Value};

use crate::support::project::{self, held_project, DEMO_MODULE};
use crate::support::{self, path_str};

const DEMO: &str = "utils/demo.py";

/// Two independent bugs in one file, each failing its own test.
const TWO_BUGS: &str = "def shout(text):\n    words = text.split()\n    return \" \".join(word.upper() \
    for word in words)\n\n\ndef count_letters(text):\n    \"\"\"Letters, spaces left out.\"\"\"\n    \
    parts = text.split()\n    return sum(len(part) for part in parts)\n";
const TWO_BUGS_TESTS: &str =
    "from words import count_letters, shout\n\n\ndef test_shout_none():\n    \
    assert shout(None) == \"\"\n\n\ndef test_shout():\n    assert shout(\"a b\") == \"A B\"\n\n\n\
    def test_count_none():\n    assert count_letters(None) == 0\n\n\ndef test_count():\n    \
    assert count_letters(\"ab c\") == 3\n";

/// A pytest log in which nothing failed.
const PASS_LOG: &str = "============================= test session starts \
    ==============================\ncollected 1 item\n\ntest_a.py .   [100%]\n\n\
    ============================== 1 passed in 0.01s ===============================\n";

#[test]
fn python_sdk_client_session() {
    let dry = project::fixture_project("demo");
    dry.git(&["init", "-q"]);
    dry.git(&["add", "-A"]);
    dry.git(&["commit", "-qm", "demo"]);
    let real = project::fixture_project("demo");
    let original = dry.read(DEMO);
    let fixed = original.replace("words = text.split()", "words = (text or \"\").split()");
    assert_ne!(original, fixed);
    let two = project::project(&[("words.py", TWO_BUGS), ("test_words.py", TWO_BUGS_TESTS)]);
    two.git(&["init", "-q"]);
    two.git(&["add", "-A"]);
    two.git(&["commit", "-qm", "two bugs"]);
    let held = held_project();
    held.hold("candidate");
    let not_dir = dry.root.join("conftest.py");
    let log =
        std::fs::read_to_string(support::fixtures().join("tracebacks/demo/minimal.txt")).unwrap();
    let config = held.project.cache.join("mcp_client.json");
    let cfg = json!({
        "server": env!("CARGO_BIN_EXE_selfdebug"),
        "dry": path_str(&dry.root),
        "real": path_str(&real.root),
        "two": path_str(&two.root),
        "held": path_str(&held.project.root),
        "marker": path_str(&held.marker),
        "not_dir": path_str(&not_dir),
        "log": log,
        "pass_log": PASS_LOG,
        // The client's one MCP root holds the dry project as `proj`.
        "roots_dir": path_str(dry.root.parent().unwrap()),
        "relative_root": dry.root.file_name().unwrap().to_str().unwrap(),
    });
    std::fs::write(&config, cfg.to_string()).unwrap();
    let out = Command::new(support::python())
        .arg(support::repo().join("tests/it/mcp_client.py"))
        .arg(&config)
        // One cache and temp dir for the server and its runs, private to this test.
        .env("XDG_CACHE_HOME", &held.project.cache)
        .env("TMPDIR", held.project.cache.join("tmp"))
        .env("SELFDEBUG_WORKER_DIR", held.project.cache.join("w"))
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    held.release();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed:\n{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    if let Some(reason) = v["skip"].as_str() {
        eprintln!("skipped: {reason}");
        return;
    }

    // The tools, each with `root` required; schemas where schema/ has one.
    let tools = v["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["config", "fix", "parse", "probe", "restore", "rules"]
    );
    // The handshake: the spec version served, and logging offered.
    assert_eq!(v["protocol_version"], "2025-11-25");
    assert_eq!(v["logging_capability"], true);
    for (name, t) in tools {
        let required = if name == "parse" {
            json!(["root", "log"])
        } else {
            json!(["root"])
        };
        assert_eq!(t["required"], required, "{name}");
    }
    // Titles and annotations: `fix` and `restore` overwrite files, the readers change nothing.
    let hints: Vec<Value> = ["fix", "parse", "probe", "rules", "restore", "config"]
        .iter()
        .map(|n| {
            let t = &tools[*n];
            json!([n, t["title"], t["annotations"]])
        })
        .collect();
    let ann = |title: &str, ro: bool, destructive: bool, idem: bool, open: bool| {
        json!({"title": title, "readOnlyHint": ro, "destructiveHint": destructive,
               "idempotentHint": idem, "openWorldHint": open})
    };
    assert_eq!(
        hints,
        [
            json!([
                "fix",
                "Fix failing tests",
                ann("Fix failing tests", false, true, false, true)
            ]),
            json!([
                "parse",
                "Read a failing log",
                ann("Read a failing log", true, false, true, false)
            ]),
            json!([
                "probe",
                "Probe the failing line",
                ann("Probe the failing line", false, false, true, false)
            ]),
            json!([
                "rules",
                "List the repair rules",
                ann("List the repair rules", true, false, true, false)
            ]),
            json!([
                "restore",
                "Restore a killed run's files",
                ann("Restore a killed run's files", false, true, true, false)
            ]),
            json!([
                "config",
                "Show the settings",
                ann("Show the settings", true, false, true, false)
            ]),
        ]
    );

    // A relative root resolves against the client's MCP roots; one under none of them, or
    // with a client that has no roots, is refused (never the server's own directory).
    assert_eq!(
        v["relative_root"]["is_error"], false,
        "{}",
        v["relative_root"]
    );
    assert_eq!(
        v["relative_root"]["structured"]["root"],
        path_str(&dry.root)
    );
    assert_eq!(
        v["relative_missing"]["text"],
        json!([format!(
            "config: root \"no-such-dir\" is not a directory under any of the client's MCP \
             roots ({}): pass an absolute path",
            path_str(dry.root.parent().unwrap())
        )])
    );
    assert_eq!(v["relative_no_roots"]["is_error"], true);
    assert_eq!(
        v["relative_no_roots"]["text"],
        json!([format!(
            "config: root {:?} is relative and the client declared no MCP roots to resolve it \
             against: pass an absolute path",
            dry.root.file_name().unwrap().to_str().unwrap()
        )])
    );
    assert_eq!(
        v["relative_roots_stuck"]["text"],
        json!(["the client did not answer roots/list within 10 s: pass an absolute root"])
    );
    // Every tool declares its command's schema (schema/<cmd>.schema.json, version 1); `fix`
    // the summary's or the full report's (`detail`).
    for (name, t) in tools {
        let file = if name == "fix" {
            "mcp-fix"
        } else {
            name.as_str()
        };
        assert_eq!(
            t["output_schema"],
            format!("https://selfdebug.dev/schema/v1/{file}.schema.json"),
            "{name}"
        );
    }
    assert_eq!(
        tools["parse"]["properties"],
        json!(["log", "log_file", "root"])
    );
    for arg in [
        "dry_run",
        "safe_only",
        "time_budget",
        "search_time",
        "cmd",
        "pytest_args",
        "log",
        "log_file",
    ] {
        assert!(
            tools["fix"]["properties"]
                .as_array()
                .unwrap()
                .contains(&json!(arg)),
            "fix has no `{arg}`"
        );
    }

    // A root that is not a directory: refused, no child (the text is the server's own).
    assert_eq!(v["not_dir"]["is_error"], true);
    assert_eq!(
        v["not_dir"]["text"],
        json!([format!(
            "fix: root {:?} is not an existing directory",
            path_str(&not_dir)
        )])
    );
    assert_eq!(v["not_dir"]["structured"], Value::Null);

    // parse: the CLI's JSON, one failure at the demo's line.
    let parse = &v["parse"];
    assert_eq!(parse["is_error"], false, "{parse}");
    let failures = parse["structured"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{parse}");
    assert_eq!(failures[0]["exc_type"], "AttributeError", "{parse}");
    assert_eq!(failures[0]["location"]["file"], DEMO, "{parse}");
    assert_eq!(failures[0]["location"]["line"], 6, "{parse}");

    // fix, dry run (the default over MCP), with the default detail (summary): nothing
    // changed, the patch applies with git apply and gives the fixed file.
    let dry_run = &v["dry_run"];
    assert_eq!(dry_run["is_error"], false, "{dry_run}");
    let summary = &dry_run["structured"];
    support::assert_valid(
        "fix-summary.schema.json",
        None,
        &[serde_json::to_string(summary).unwrap().as_bytes()],
    );
    let failing = summary["failures"][0]["test"].as_str().unwrap();
    assert_eq!(
        summary["failures"],
        json!([{"test": failing, "file": DEMO, "line": 6, "exc_type": "AttributeError",
                "status": "fixed", "reason_code": "fixed", "reason": null}])
    );
    assert_eq!(
        (
            &summary["detail"],
            &summary["final_status"],
            &summary["dry_run"]
        ),
        (&json!("summary"), &json!("pass"), &json!(true))
    );
    let patch = &summary["patches"][0];
    assert_eq!(patch["file"], DEMO);
    assert_eq!(
        patch["proof"].as_array().unwrap().last(),
        Some(&json!({"stage": "full", "passed": 2, "failed": 0, "deselected": 0}))
    );
    // The text content is a short summary with the diff, not the JSON again.
    let text = dry_run["text"][0].as_str().unwrap();
    assert!(
        text.starts_with("pass: 1 patch proven in a scratch copy (dry run: no file changed"),
        "{text}"
    );
    assert!(text.contains(patch["diff"].as_str().unwrap()), "{text}");
    let bytes = v["summary_bytes"].as_u64().unwrap();
    assert!(bytes < 4096, "a one-bug summary is {bytes} bytes");
    // detail full: the whole report, the patch the same.
    let report = &v["dry_full"]["structured"];
    assert_eq!(report["final_status"], "pass");
    assert_eq!(report["patches"][0]["diff"], patch["diff"]);
    assert_eq!(dry.read(DEMO), original, "a dry run changes nothing");
    // The proof as data: the targeted run of the failing test, then the whole suite (the
    // demo's two tests), each with its command and counts; the failure's reason as a code.
    let proof: Vec<Value> = report["patches"][0]["proven_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let cmd = r["command"].as_array().unwrap();
            assert_eq!(cmd[1..3], [json!("-m"), json!("pytest")], "{r}");
            json!([
                r["stage"],
                cmd.last(),
                r["exit_code"],
                r["passed"],
                r["failed"],
                r["deselected"]
            ])
        })
        .collect();
    assert_eq!(
        proof.first(),
        Some(&json!(["targeted", failing, 0, 1, 0, 0])),
        "{proof:?}"
    );
    assert_eq!(
        proof.last(),
        Some(&json!(["full", "_selfdebug_pytest", 0, 2, 0, 0])),
        "{proof:?}"
    );
    assert_eq!(report["failures"][0]["reason_code"], "fixed");
    let diff = report["patches"][0]["diff"].as_str().unwrap();
    let patch = dry.cache.join("fix.patch");
    std::fs::write(&patch, diff).unwrap();
    dry.git(&["apply", path_str(&patch)]);
    assert_eq!(dry.read(DEMO), fixed);
    support::assert_valid(
        "fix.schema.json",
        None,
        &[serde_json::to_string(report).unwrap().as_bytes()],
    );
    // Progress: the run's phases, each moving `progress` on; once the failure is known,
    // `total` is the failures known (one here) and `progress` the share done of it. The
    // messages are the steps without the terminal's "selfdebug: " prefix.
    let progress = v["dry_run_progress"].as_array().unwrap();
    assert!(progress.len() >= 3, "{progress:?}");
    assert_eq!(progress[0][2], Value::Null, "the baseline: no total yet");
    let values: Vec<f64> = progress.iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    for p in progress {
        assert!(!p[1].as_str().unwrap().starts_with("selfdebug"), "{p}");
        if p[1].as_str().unwrap().starts_with("[1/1] ") {
            assert_eq!(p[2], json!(1.0), "{p}");
            assert!(p[0].as_f64().unwrap() < 1.0, "{p}");
        }
    }
    assert!(progress.iter().any(|p| p[2] == json!(1.0)), "{progress:?}");
    // Logging: the run's stderr lines as messages, at the default level (info).
    let logs = v["dry_run_logs"].as_array().unwrap();
    assert!(
        logs.iter()
            .any(|l| l[0] == "info" && l[1].as_str().unwrap().starts_with("pass: ")),
        "{logs:?}"
    );
    assert!(
        progress
            .iter()
            .any(|p| p[1].as_str().unwrap().contains("candidate 1/")),
        "{progress:?}"
    );

    // Two independent bugs in one file: one patch for the file, two fixes, each linked to its
    // failure and applying alone on the original tree; the combined diff applies too.
    let two_report = &v["two"]["structured"];
    assert_eq!(two_report["final_status"], "pass", "{two_report}");
    assert_eq!(two_report["files_patched"], json!(["words.py"]));
    let fixes = two_report["fixes"].as_array().unwrap();
    let linked: Vec<&Value> = fixes.iter().map(|f| &f["failures"]).collect();
    assert_eq!(
        linked,
        [
            &json!(["test_words.py::test_shout_none"]),
            &json!(["test_words.py::test_count_none"])
        ]
    );
    let shout_fixed = TWO_BUGS.replace("words = text.split()", "words = (text or \"\").split()");
    let count_fixed = TWO_BUGS.replace("parts = text.split()", "parts = (text or \"\").split()");
    let apply = |diff: &str| {
        let patch = two.cache.join("one.patch");
        std::fs::write(&patch, diff).unwrap();
        two.git(&["apply", path_str(&patch)]);
        let got = two.read("words.py");
        two.git(&["checkout", "-q", "--", "words.py"]);
        got
    };
    assert_eq!(apply(fixes[0]["diff"].as_str().unwrap()), shout_fixed);
    assert_eq!(apply(fixes[1]["diff"].as_str().unwrap()), count_fixed);
    let both = shout_fixed.replace("parts = text.split()", "parts = (text or \"\").split()");
    assert_eq!(apply(two_report["diff"].as_str().unwrap()), both);
    support::assert_valid(
        "fix.schema.json",
        None,
        &[serde_json::to_string(two_report).unwrap().as_bytes()],
    );

    // fix for real: the file holds the fix.
    assert_eq!(v["real"]["is_error"], false, "{}", v["real"]);
    assert_eq!(v["real"]["structured"]["dry_run"], false);
    assert_eq!(real.read(DEMO), fixed);

    // probe, rules, config: the commands' JSON objects.
    let probe = &v["probe"];
    assert_eq!(probe["is_error"], false, "{probe}");
    assert_eq!(probe["structured"]["fired"], true, "{probe}");
    assert_eq!(probe["structured"]["file"], DEMO, "{probe}");
    assert_eq!(probe["structured"]["line"], 6, "{probe}");
    let rules = v["rules"]["structured"]["rules"].as_array().unwrap();
    assert!(
        rules.iter().any(|r| r["id"] == "attr-did-you-mean"),
        "{}",
        v["rules"]
    );
    assert_eq!(v["config"]["is_error"], false);
    assert_eq!(v["config"]["structured"]["root"], path_str(&dry.root));
    support::assert_valid(
        "config.schema.json",
        None,
        &[serde_json::to_string(&v["config"]["structured"])
            .unwrap()
            .as_bytes()],
    );
    support::assert_valid(
        "parse.schema.json",
        None,
        &[serde_json::to_string(&parse["structured"])
            .unwrap()
            .as_bytes()],
    );

    // Nothing to do is a success that says so, for each tool (at log level error, the info
    // lines of these runs are not sent); a log that is not one is an error, logged as one.
    let probe = &v["probe_nothing"];
    assert_eq!(probe["is_error"], false, "{probe}");
    assert_eq!(
        probe["structured"]["error"], "nothing failed: no failure to probe",
        "{probe}"
    );
    let parse = &v["parse_nothing"];
    assert_eq!(parse["is_error"], false, "{parse}");
    assert_eq!(parse["structured"]["failures"], json!([]), "{parse}");
    let fix = &v["fix_nothing"];
    assert_eq!(fix["is_error"], false, "{fix}");
    assert_eq!(fix["structured"]["final_status"], "pass", "{fix}");
    assert_eq!(v["nothing_logs"], json!([]));
    assert_eq!(v["parse_bad"]["is_error"], true);
    assert_eq!(
        v["parse_bad_logs"],
        json!([[
            "error",
            "error: standard input: input is neither pytest output nor a Python \
                traceback"
        ]])
    );

    // The held run reported its steps before the candidate was held.
    assert!(
        !v["held_progress"].as_array().unwrap().is_empty(),
        "{}",
        v["held_progress"]
    );
    // A second run on the same root: the lock's error, as the tool's error result with the
    // CLI's JSON.
    let second = &v["second"];
    assert_eq!(second["is_error"], true, "{second}");
    assert_eq!(second["structured"]["exit_code"], 6, "{second}");
    let error = second["structured"]["error"].as_str().unwrap();
    // The holder's pid as a field, the one the message names.
    let pid = second["structured"]["lock_pid"].as_u64().unwrap();
    assert!(error.contains(&format!("(pid {pid}, ")), "{error}");
    support::assert_valid(
        "fix-summary.schema.json",
        None,
        &[serde_json::to_string(&second["structured"])
            .unwrap()
            .as_bytes()],
    );
    // Cancelled: the file is the original, restored by the run itself (the `restore` after it
    // found nothing to restore).
    let restore = &v["restore_after_cancel"]["structured"];
    assert_eq!(restore["restored"], false, "{restore}");
    assert_eq!(restore["files"], json!([]), "{restore}");
    assert_eq!(held.project.read("words.py"), DEMO_MODULE);
    assert_eq!(
        held.seen().last().map(String::as_str),
        Some("candidate"),
        "the cancel came while the candidate was in the file"
    );
    assert_eq!(v["session_closed"], true);
}

/// A real `selfdebug mcp` (plain JSON-RPC lines: the SDK's client kills the server's whole
/// tree two seconds after closing stdin, which would test the client, not the server) whose
/// `fix` call holds a candidate in the file of `held`.
struct Serving {
    server: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

fn serve_a_held_fix(held: &project::Held) -> Serving {
    use std::io::Write;
    held.hold("candidate");
    let mut serving = raw_server(&held.project);
    let msg = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "fix",
        "arguments": {"root": path_str(&held.project.root), "dry_run": false, "jobs": 1}}});
    let stdin = serving.stdin.as_mut().unwrap();
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
    held.wait_for("candidate", 300);
    serving
}

impl Serving {
    /// The server's exit code, once stdout has ended; its lines must all be JSON-RPC.
    fn exit(mut self) -> Option<i32> {
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        let status = self.server.wait().unwrap();
        for l in rest.lines() {
            let m: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(m["jsonrpc"], "2.0", "{l}");
        }
        status.code()
    }
}

/// The file is the original, restored by the run itself, no process is left in the project,
/// and `restore` finds nothing to do.
fn assert_the_run_restored_its_file(held: &project::Held) {
    held.release();
    assert_eq!(held.project.read("words.py"), DEMO_MODULE);
    assert_eq!(held.seen().last().map(String::as_str), Some("candidate"));
    assert_eq!(project::processes_in(&held.project.root), Vec::<u32>::new());
    let out = held.project.run(&["restore", "--json"]);
    support::assert_exit(&out, 0);
    assert_eq!(project::json(&out)["restored"], false);
}

/// The client closes stdin while a real run holds a candidate in the file: the server
/// interrupts the run, which restores the file itself, and exits 0 only once it has ended.
#[test]
fn stdin_eof_interrupts_a_run_which_restores_the_file() {
    let held = held_project();
    let mut serving = serve_a_held_fix(&held);
    drop(serving.stdin.take());
    assert_eq!(serving.exit(), Some(0));
    assert_the_run_restored_its_file(&held);
}

/// SIGTERM (what a host sends to stop its server) ends the server as a closed stdin does: the
/// run is interrupted and restores the file, and the server exits 0 once it has ended.
#[test]
fn sigterm_interrupts_a_run_which_restores_the_file_before_the_server_exits() {
    let held = held_project();
    let serving = serve_a_held_fix(&held);
    // SAFETY: kill on our own child's pid, not reaped yet.
    unsafe { libc::kill(serving.server.id() as i32, libc::SIGTERM) };
    assert_eq!(serving.exit(), Some(0));
    assert_the_run_restored_its_file(&held);
}

/// SIGKILL leaves the server no moment to act: its run gets SIGINT from the kernel when the
/// server dies (a parent-death signal), restores the file and ends instead of running on
/// orphaned and keeping a patch once its held test is let go.
#[test]
fn sigkill_of_the_server_still_ends_its_run_with_the_file_restored() {
    let held = held_project();
    let mut serving = serve_a_held_fix(&held);
    serving.server.kill().unwrap();
    serving.server.wait().unwrap();
    // Let the candidate's test finish: a run left orphaned would now prove and keep the patch.
    held.release();
    let root = held.project.root.clone();
    project::wait_until("the run to end after its server", 120, || {
        project::processes_in(&root).is_empty()
    });
    assert_the_run_restored_its_file(&held);
}

/// A real server on plain JSON-RPC lines, started in the project and initialized.
fn raw_server(p: &project::Project) -> Serving {
    use std::io::{BufRead, BufReader, Write};
    let mut server = p
        .cmd_in(".", &["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    // The server answers `initialize` with its name.
    for msg in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "selfdebug", "{line}");
    Serving {
        server,
        stdin: Some(stdin),
        stdout,
    }
}

impl Serving {
    /// Sends one request and reads the answer with its id (notifications skipped).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        use std::io::{BufRead, Write};
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

/// The protocol's edges: an unknown tool is a JSON-RPC error (-32602); a bad argument is a
/// tool error the model can read; a request over 16 MiB (a pasted log) gets an error that says
/// to pass the log as a file, and `log_file` then works.
#[test]
fn unknown_tools_bad_arguments_and_oversized_requests_are_answered() {
    let p = crate::support::project::project(&[("conftest.py", "")]);
    let mut s = raw_server(&p);
    let root = path_str(&p.root);
    let unknown = s.call(2, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["message"], "no tool named \"nope\"");
    let bad = s.call(
        3,
        "tools/call",
        json!({"name": "parse", "arguments": {"root": root, "log": 5}}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert_eq!(
        bad["result"]["content"][0]["text"],
        "parse: `log` must be a string"
    );
    let log = format!(
        "{}Traceback (most recent call last):\n  File \"app.py\", line 2, in <module>\n    \
         1 / 0\nZeroDivisionError: division by zero\n",
        "filler line\n".repeat(17 * 1024 * 1024 / 12)
    );
    let big = s.call(
        4,
        "tools/call",
        json!({"name": "parse", "arguments": {"root": root, "log": log}}),
    );
    assert_eq!(big["error"]["code"], -32602, "{}", &big.to_string()[..200]);
    let message = big["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("pass the log as a file with `log_file`"),
        "{message}"
    );
    std::fs::write(p.root.join("big.log"), &log).unwrap();
    let from_file = s.call(
        5,
        "tools/call",
        json!({"name": "parse", "arguments": {"root": root, "log_file": "big.log"}}),
    );
    assert_eq!(from_file["result"]["isError"], false, "{from_file}");
    let failure = &from_file["result"]["structuredContent"]["failures"][0];
    assert_eq!(
        (&failure["exc_type"], &failure["frames"][0]["file"]),
        (&json!("ZeroDivisionError"), &json!("app.py")),
        "{from_file}"
    );
    drop(s.stdin.take());
    assert_eq!(s.exit(), Some(0));
}

/// `selfdebug mcp` keeps its calls' warm worker alive (docs/worker.md, "Kept alive between
/// calls"): the first `fix` call starts it without waiting for it, and once it is ready the
/// next call's runs are all its children (none cold); the server outlives the MCP server.
#[test]
fn fix_calls_share_a_kept_alive_worker() {
    let p = project::fixture_project("demo");
    let mut s = raw_server(&p);
    let args = json!({"name": "fix", "arguments": {"root": path_str(&p.root), "dry_run": true,
        "detail": "full"}});
    let first = s.call(2, "tools/call", args.clone());
    let first = &first["result"]["structuredContent"];
    assert_eq!(first["final_status"], "pass", "{first}");
    assert_eq!(
        first["notes"],
        json!(["the kept-alive warm worker was starting: runs went cold meanwhile"])
    );
    let workers = p.cache.join("w");
    let record = || -> Option<i64> {
        let dir = std::fs::read_dir(&workers).ok()?.next()?.ok()?.path();
        let r: Value =
            serde_json::from_slice(&std::fs::read(dir.join("server.json")).ok()?).ok()?;
        r["pid"].as_i64()
    };
    project::wait_until("the kept-alive worker ready", 120, || record().is_some());
    let pid = record().unwrap();
    let second = s.call(3, "tools/call", args);
    let second = &second["result"]["structuredContent"];
    assert_eq!(second["final_status"], "pass", "{second}");
    assert_eq!(second["phases_ms"]["worker_cold_runs"], 0, "{second}");
    assert_eq!(second["notes"], json!([]));
    assert_eq!(second["diff"], first["diff"]);
    // Kept between the calls of one server, not after it: once the server is gone (its
    // client with it), the worker leaves too, taking its record along (no trace of either).
    drop(s.stdin.take());
    assert_eq!(s.exit(), Some(0));
    project::wait_until("the kept-alive worker to follow its server", 60, || {
        record().is_none() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
}
