//! The opt-in LLM fallback against a real chat-completions server on loopback (a thread in
//! this test) with scripted answers, on real projects with real pytest: a wrong result no rule
//! can fix is fixed by the model's edit and proven; a wrong edit is followed by a right one
//! that was asked for with the first one's failure; 429 with Retry-After, 500s, garbage and an
//! edit to a test file end cleanly; without `--llm` nothing is sent. The key, a recognisable
//! string, is in no output and no file the tool wrote.

use crate::support;

use std::path::Path;
use std::process::Output;

use support::llm_server::{answer, status, Reply, Server};
use support::project::{json, project, Project};

const KEY: &str = "sk-selfdebug-TEST-KEY-7f3a9c21";
const MODEL: &str = "test-model-1";

const SHOP: &str = "def total(prices, discount):\n    \"\"\"The sum of prices, less `discount` (a fraction: 0.5 is half off).\"\"\"\n    s = sum(prices)\n    return s - discount\n";
const SHOP_FIXED: &str = "def total(prices, discount):\n    \"\"\"The sum of prices, less `discount` (a fraction: 0.5 is half off).\"\"\"\n    s = sum(prices)\n    return s * (1 - discount)\n";
const TEST_SHOP: &str = "from shop import total\n\n\ndef test_half_off():\n    assert total([10, 20], 0.5) == 15\n\n\ndef test_no_discount():\n    assert total([1, 2], 0) == 3\n";

const RIGHT: &str = "The discount is a fraction of the sum.\n\n```python\nshop.py\n<<<<<<< SEARCH\n    return s - discount\n=======\n    return s * (1 - discount)\n>>>>>>> REPLACE\n```\n";
const WRONG: &str = "```python\nshop.py\n<<<<<<< SEARCH\n    return s - discount\n=======\n    return s + discount\n>>>>>>> REPLACE\n```\n";

const NO_SEARCH: &str = "[tool.selfdebug]\nignore = [\"search\"]\n";

/// A wrong-output bug: the test's assertion fails, no frame in the project's code, no rule.
fn shop() -> Project {
    project(&[
        ("pytest.ini", "[pytest]\n"),
        // The search over small edits goes before the model; these tests are about the model.
        ("pyproject.toml", NO_SEARCH),
        ("shop.py", SHOP),
        ("test_shop.py", TEST_SHOP),
    ])
}

/// `selfdebug fix --json --llm ...` against `server`, with the key in the environment, a
/// backup dir and an audit log inside the project's temp area (grepped for the key after).
fn fix_llm(p: &Project, server: &Server, extra: &[&str]) -> Output {
    let backups = p.cache.join("backups");
    let audit = p.cache.join("audit.jsonl");
    let mut args = vec![
        "fix",
        "--json",
        "--llm",
        "--llm-url",
        &server.url,
        "--llm-model",
        MODEL,
        "--backup-dir",
        backups.to_str().unwrap(),
        "--audit-log",
        audit.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    p.cmd(&args)
        .env("SELFDEBUG_LLM_API_KEY", KEY)
        .env("SELFDEBUG_LLM_BACKOFF_MS", "20")
        .env_remove("OPENAI_API_KEY")
        .env_remove("SELFDEBUG_LLM")
        .output()
        .unwrap()
}

/// Every request carried the key as a bearer token and the model asked for.
fn assert_requests_well_formed(server: &Server) {
    for r in server.requests() {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(r.body["model"], MODEL);
        assert_eq!(r.body["max_tokens"], 2048);
        assert_eq!(r.body["messages"][0]["role"], "system");
    }
}

/// The key is in no output of the tool and no file under the project or the tool's dirs
/// (cache, backups, audit log, temp dir).
fn assert_key_nowhere(p: &Project, out: &Output) {
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(KEY),
        "key on stdout"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains(KEY),
        "key on stderr"
    );
    let mut files = 0;
    for dir in [p.root.as_path(), p.cache.as_path()] {
        for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
            if e.file_type().is_file() {
                files += 1;
                let bytes = std::fs::read(e.path()).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(KEY),
                    "the key is in {}",
                    e.path().display()
                );
            }
        }
    }
    assert!(
        files > 3,
        "expected the tool to have written files, saw {files}"
    );
}

fn audit(p: &Project) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p.cache.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn served(replies: Vec<Reply>) -> Server {
    Server::start(replies)
}

#[test]
fn a_wrong_result_no_rule_fixes_is_fixed_by_the_model_and_proven() {
    let p = shop();
    let server = served(vec![answer(RIGHT)]);
    let out = fix_llm(&p, &server, &[]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    assert_eq!(p.read("test_shop.py"), TEST_SHOP);
    assert_eq!(j["final_status"], "pass");
    assert_eq!(j["patches"].as_array().unwrap().len(), 1);
    let patch = &j["patches"][0];
    assert_eq!(patch["file"], "shop.py");
    assert_eq!(patch["source"], "llm");
    assert_eq!(patch["applicability"], "unsafe");
    assert_eq!(patch["rules"], serde_json::json!(["llm"]));
    assert_eq!(
        patch["titles"],
        serde_json::json!([format!("1 edit proposed by {MODEL}")])
    );
    assert_eq!(
        patch["diff"],
        "--- a/shop.py\n+++ b/shop.py\n@@ -1,4 +1,4 @@\n def total(prices, discount):\n     \"\"\"The sum of prices, less `discount` (a fraction: 0.5 is half off).\"\"\"\n     s = sum(prices)\n-    return s - discount\n+    return s * (1 - discount)\n"
    );
    let records = j["attempt_records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["source"], "llm");
    assert_eq!(records[0]["outcome"], "accepted");
    assert_eq!(j["llm"]["requests"], 1);
    assert_eq!(j["llm"]["cached"], 0);
    assert_eq!(j["llm"]["model"], MODEL);
    assert_eq!(j["failures"][0]["status"], "fixed");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    // One request, carrying what an engineer would paste: the failure, the code with line
    // numbers, the test, the environment.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_requests_well_formed(&server);
    let prompt = reqs[0].prompt();
    for needle in [
        "Test: test_shop.py::test_half_off",
        "AssertionError: assert 29.5 == 15",
        "   4 |     return s - discount",
        "   5 |     assert total([10, 20], 0.5) == 15",
        "## The failing test (test_shop.py, the specification; not to be edited)",
        "Python 3.",
        "Files next to it:",
    ] {
        assert!(
            prompt.contains(needle),
            "prompt lacks {needle:?}:\n{prompt}"
        );
    }
    // The audit log holds the request and the answer (and not the key).
    let lines = audit(&p);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["source"], "llm");
    assert_eq!(lines[0]["llm"]["request"], reqs[0].body);
    assert!(lines[0]["llm"]["response"]
        .as_str()
        .unwrap()
        .contains("return s * (1 - discount)"));
    assert_key_nowhere(&p, &out);
}

#[test]
fn a_wrong_edit_then_a_right_one_asked_with_the_first_ones_failure() {
    let p = shop();
    let server = served(vec![answer(WRONG), answer(RIGHT)]);
    let out = fix_llm(&p, &server, &[]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    let outcomes: Vec<&str> = j["attempt_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["still_failing", "accepted"]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_requests_well_formed(&server);
    let second = reqs[1].prompt();
    assert!(!reqs[0].prompt().contains("## Attempt 1"));
    for needle in [
        "## Attempt 1 (not kept)",
        "+    return s + discount",
        "The test still fails: AssertionError: assert 30.5 == 15",
        "propose a different edit",
    ] {
        assert!(
            second.contains(needle),
            "second prompt lacks {needle:?}:\n{second}"
        );
    }
    assert_key_nowhere(&p, &out);
}

#[test]
fn a_429_with_retry_after_is_waited_out_then_answered() {
    let p = shop();
    let server = served(vec![
        status(429, &[("Retry-After", "1")], "{\"error\":\"slow down\"}"),
        answer(RIGHT),
    ]);
    let out = fix_llm(&p, &server, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body, reqs[1].body, "a retry sends the same request");
    let waited = reqs[1].at.duration_since(reqs[0].at);
    assert!(
        waited.as_millis() >= 950,
        "Retry-After: 1 honoured, waited {waited:?}"
    );
    assert_eq!(json(&out)["llm"]["requests"], 1);
    assert_key_nowhere(&p, &out);
}

#[test]
fn a_server_that_keeps_failing_is_given_up_cleanly() {
    let p = shop();
    let before = p.snapshot();
    let e500 = || status(500, &[], "{\"error\":\"internal\"}");
    let server = served(vec![e500(), e500(), e500(), e500(), e500()]);
    let out = fix_llm(&p, &server, &[]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    // One try and three retries, then never again in this run.
    assert_eq!(server.requests().len(), 4);
    support::project::assert_same(&before, &p.snapshot());
    assert_eq!(j["failures"][0]["status"], "no_candidate");
    assert_eq!(
        j["failures"][0]["reason"],
        "test_shop.py is a test file; pass --allow-tests to let selfdebug edit it; model \
         fallback: the model gave no usable answer: gave up after 4 tries (last: HTTP 500)"
    );
    assert_eq!(
        j["llm"]["stopped"],
        "the model is not asked again: gave up after 4 tries (last: HTTP 500)"
    );
    assert!(stderr(&out).contains("gave up after 4 tries (last: HTTP 500)"));
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let lines = audit(&p);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["kind"], "llm_exchange");
    assert_eq!(
        lines[0]["llm"]["error"],
        "gave up after 4 tries (last: HTTP 500)"
    );
    assert_key_nowhere(&p, &out);
}

#[test]
fn garbage_is_a_clear_line_and_no_damage() {
    let p = shop();
    let before = p.snapshot();
    let server = served(vec![status(200, &[], "<html>this is not JSON</html>")]);
    let out = fix_llm(&p, &server, &[]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1);
    support::project::assert_same(&before, &p.snapshot());
    let reason = j["failures"][0]["reason"].as_str().unwrap();
    assert!(
        reason.ends_with(
            "model fallback: the model gave no usable answer: malformed answer: the response \
             is not JSON: <html>this is not JSON</html>"
        ),
        "{reason}"
    );
    assert!(stderr(&out).contains("malformed answer: the response is not JSON"));
    let lines = audit(&p);
    assert_eq!(lines[0]["llm"]["response"], "<html>this is not JSON</html>");
    assert_key_nowhere(&p, &out);
}

#[test]
fn an_edit_to_a_test_file_is_refused_without_a_run() {
    let p = shop();
    let before = p.snapshot();
    let cheat = "test_shop.py\n<<<<<<< SEARCH\n    assert total([10, 20], 0.5) == 15\n=======\n    assert total([10, 20], 0.5) == 29.5\n>>>>>>> REPLACE\n";
    let server = served(vec![answer(cheat)]);
    let out = fix_llm(&p, &server, &["--llm-max-calls", "1"]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    support::project::assert_same(&before, &p.snapshot());
    let records = j["attempt_records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["outcome"], "refused");
    assert_eq!(records[0]["exit_code"], serde_json::Value::Null);
    assert_eq!(
        records[0]["new_failure"],
        "the answer edits the test file test_shop.py; the tests are the specification \
         (--allow-tests lets it)"
    );
    // Only the baseline ran (its crash-frame facts stood in for the probe): the refused
    // answer cost no pytest run.
    assert_eq!(j["pytest_runs"], 1);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert!(stderr(&out).contains("refused before any run: the answer edits the test file"));
    assert_key_nowhere(&p, &out);
}

#[test]
fn a_rerun_is_answered_from_the_cache() {
    let p = shop();
    let server = served(vec![answer(RIGHT)]);
    let first = fix_llm(&p, &server, &["--dry-run"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = fix_llm(&p, &server, &["--dry-run"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(
        server.requests().len(),
        1,
        "the second run costs no request"
    );
    let j = json(&second);
    assert_eq!(j["llm"]["requests"], 0);
    assert_eq!(j["llm"]["cached"], 1);
    assert_eq!(j["patches"][0]["source"], "llm");
    assert_eq!(p.read("shop.py"), SHOP, "a dry run writes nothing");
    let cache = p.cache.join("selfdebug/llm");
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1);
    assert_private(&cache);
    assert_key_nowhere(&p, &second);
}

fn assert_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let mode = e.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", e.path().display());
    }
}

#[test]
fn without_llm_the_model_is_never_contacted() {
    let p = shop();
    let server = served(vec![answer(RIGHT)]);
    let out = p
        .cmd(&["fix", "--json"])
        .env("SELFDEBUG_LLM_URL", &server.url)
        .env("SELFDEBUG_LLM_MODEL", MODEL)
        .env("SELFDEBUG_LLM_API_KEY", KEY)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("SELFDEBUG_LLM")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 0);
    assert_eq!(json(&out)["llm"], serde_json::Value::Null);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(p.read("shop.py"), SHOP);
}

#[test]
fn no_key_means_no_authorization_header() {
    let p = shop();
    let server = served(vec![answer(RIGHT)]);
    let out = p
        .cmd(&["fix", "--json", "--llm-no-cache"])
        .env("SELFDEBUG_LLM", "1")
        .env("SELFDEBUG_LLM_URL", &server.url)
        .env("SELFDEBUG_LLM_MODEL", MODEL)
        .env_remove("SELFDEBUG_LLM_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].header("authorization"), None);
    assert_eq!(reqs[0].body["model"], MODEL);
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    assert!(
        !p.cache.join("selfdebug/llm").exists()
            || std::fs::read_dir(p.cache.join("selfdebug/llm"))
                .unwrap()
                .count()
                == 0
    );
}

#[test]
fn the_fallback_can_be_turned_on_and_pointed_by_pyproject_toml() {
    let p = shop();
    let server = served(vec![answer(RIGHT)]);
    std::fs::write(
        p.root.join("pyproject.toml"),
        format!(
            "{NO_SEARCH}\n[tool.selfdebug.llm]\nenabled = true\nurl = \"{}\"\nmodel = \"{MODEL}\"\nmax-tokens = 512\n",
            server.url
        ),
    )
    .unwrap();
    let out = p
        .cmd(&["fix", "--json", "--llm-no-cache"])
        .env("SELFDEBUG_LLM_API_KEY", KEY)
        .env_remove("SELFDEBUG_LLM")
        .env_remove("SELFDEBUG_LLM_URL")
        .env_remove("SELFDEBUG_LLM_MODEL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].body["model"], MODEL);
    assert_eq!(reqs[0].body["max_tokens"], 512);
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    // `selfdebug config` says where each came from; a flag wins over the file.
    let shown = p
        .cmd(&["fix", "--show-settings", "--json", "--llm-max-tokens", "64"])
        .env_remove("SELFDEBUG_LLM")
        .output()
        .unwrap();
    let s = &json(&shown)["settings"];
    assert_eq!(
        s["llm.enabled"],
        serde_json::json!({"line": 5, "source": "file", "value": true})
    );
    assert_eq!(
        s["llm.url"],
        serde_json::json!({"line": 6, "source": "file", "value": server.url})
    );
    assert_eq!(
        s["llm.max-tokens"],
        serde_json::json!({"flag": "--llm-max-tokens", "source": "flag", "value": 64})
    );
    support::assert_valid("config.schema.json", None, &[&shown.stdout]);
}

#[test]
fn a_failed_output_check_of_command_mode_is_the_models_with_the_expected_output() {
    // A mean that never divides: no small edit of the search fixes it (it needs a new term),
    // so the model gets it after.
    let script = "def mean(xs):\n    return sum(xs)\n\n\nprint(mean([1, 2, 3]))\n";
    let p = project(&[("mean.py", script), ("want.txt", "2.0\n")]);
    let right = "```python\nmean.py\n<<<<<<< SEARCH\n    return sum(xs)\n=======\n    return sum(xs) / len(xs)\n>>>>>>> REPLACE\n```\n";
    let server = served(vec![answer(right)]);
    let out = fix_llm(
        &p,
        &server,
        &["--cmd", "python mean.py", "--expect-stdout", "want.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        p.read("mean.py"),
        "def mean(xs):\n    return sum(xs) / len(xs)\n\n\nprint(mean([1, 2, 3]))\n"
    );
    let j = json(&out);
    assert_eq!(j["judge"], "command");
    assert_eq!(j["failures"][0]["exc_type"], "selfdebug.OutputCheckFailed");
    assert_eq!(j["failures"][0]["status"], "fixed");
    assert_eq!(j["patches"][0]["source"], "llm");
    // The search went first: every one of its candidates failed the output check.
    let records = j["attempt_records"].as_array().unwrap();
    let (last, searched) = records.split_last().unwrap();
    assert_eq!(last["source"], "llm");
    assert_eq!(last["outcome"], "accepted");
    assert!(!searched.is_empty());
    assert!(searched
        .iter()
        .all(|a| a["source"] == "search" && a["outcome"] == "still_failing"));
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    // The request carries the specification: the command, what it should print, what it
    // printed (before the search's candidates), and the script itself with line numbers.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_requests_well_formed(&server);
    let prompt = reqs[0].prompt();
    for needle in [
        "Command: python mean.py",
        "Expected stdout (exact):\n2.0\n",
        "It printed instead:\n6\n",
        "return sum(xs)",
    ] {
        assert!(
            prompt.contains(needle),
            "prompt lacks {needle:?}:\n{prompt}"
        );
    }
    assert_key_nowhere(&p, &out);
}

#[test]
fn an_edit_to_an_excluded_file_is_refused_without_a_run() {
    let p = shop();
    std::fs::write(
        p.root.join("pyproject.toml"),
        "[tool.selfdebug]\nextend-exclude = [\"shop.py\"]\nbudget = { logic = 1 }\nignore = [\"search\"]\n",
    )
    .unwrap();
    let server = served(vec![answer(RIGHT)]);
    let out = fix_llm(&p, &server, &["--llm-no-cache"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(p.read("shop.py"), SHOP);
    let j = json(&out);
    let records = j["attempt_records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["outcome"], "refused");
    assert!(
        records[0]["new_failure"]
            .as_str()
            .unwrap()
            .contains("shop.py is excluded by extend-exclude ('shop.py'): never patched"),
        "{}",
        records[0]
    );
    // The baseline (its crash-frame facts stood in for the probe); the refused answer cost no
    // run.
    assert_eq!(j["pytest_runs"], 1);
}

#[test]
fn a_test_stopped_by_the_per_test_limit_is_the_models_with_the_stuck_frame() {
    let code = "def total(xs):\n    s = 0\n    i = 0\n    while i < len(xs):\n        s += xs[i]\n    return s\n";
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        // The search goes first and would add the step itself; this is about the model.
        ("pyproject.toml", NO_SEARCH),
        ("loop.py", code),
        (
            "test_loop.py",
            "from loop import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n\n\ndef test_empty():\n    assert total([]) == 0\n",
        ),
    ]);
    let right = "```python\nloop.py\n<<<<<<< SEARCH\n        s += xs[i]\n=======\n        s += xs[i]\n        i += 1\n>>>>>>> REPLACE\n```\n";
    let server = served(vec![answer(right)]);
    let out = fix_llm(&p, &server, &["--test-timeout", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        p.read("loop.py"),
        "def total(xs):\n    s = 0\n    i = 0\n    while i < len(xs):\n        s += xs[i]\n        i += 1\n    return s\n"
    );
    let j = json(&out);
    assert_eq!(j["failures"][0]["category"], "timeout");
    assert_eq!(j["failures"][0]["status"], "fixed");
    assert_eq!(j["patches"][0]["source"], "llm");
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_requests_well_formed(&server);
    let prompt = reqs[0].prompt();
    for needle in ["PerTestTimeout", "   4 |     while i < len(xs):"] {
        assert!(
            prompt.contains(needle),
            "prompt lacks {needle:?}:\n{prompt}"
        );
    }
    assert_key_nowhere(&p, &out);
}

#[test]
fn without_llm_a_timed_out_test_is_reported_and_never_patched() {
    let code = "def total(xs):\n    s = 0\n    i = 0\n    while i < len(xs):\n        s += xs[i]\n    return s\n";
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        // The search would add the missing `i += 1` (tests/fix_search.rs); this is about the
        // model's part.
        ("pyproject.toml", NO_SEARCH),
        ("loop.py", code),
        (
            "test_loop.py",
            "from loop import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n",
        ),
    ]);
    let out = p
        .cmd(&["fix", "--json", "--test-timeout", "2"])
        .env_remove("SELFDEBUG_LLM")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["failures"][0]["status"], "timed_out");
    assert_eq!(j["attempt_records"], serde_json::json!([]));
    assert_eq!(p.read("loop.py"), code);
}

/// The search over small edits goes first on a wrong result; the model is asked only once it
/// has given up, and an answer that repeats an edit the search already saw rejected is refused
/// without a run (and said so to the model) before the right one is proven.
#[test]
fn the_search_goes_first_and_the_model_is_told_when_it_repeats_a_rejected_edit() {
    let p = project(&[
        ("pytest.ini", "[pytest]\n"),
        ("shop.py", SHOP),
        ("test_shop.py", TEST_SHOP),
    ]);
    let server = served(vec![answer(WRONG), answer(RIGHT)]);
    let out = fix_llm(&p, &server, &[]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(p.read("shop.py"), SHOP_FIXED);
    let records = j["attempt_records"].as_array().unwrap();
    let sources: Vec<&str> = records
        .iter()
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    let first_llm = sources.iter().position(|s| *s == "llm").unwrap();
    assert!(first_llm > 0, "the search tried nothing: {sources:?}");
    assert!(
        sources[..first_llm].iter().all(|s| *s == "search"),
        "{sources:?}"
    );
    assert!(
        sources[first_llm..].iter().all(|s| *s == "llm"),
        "{sources:?}"
    );
    // `s + discount` was one of the search's rejected candidates.
    assert!(records[..first_llm].iter().any(|a| a["diff"]
        .as_str()
        .unwrap()
        .contains("+    return s + discount")));
    let llm: Vec<(&str, &str)> = records[first_llm..]
        .iter()
        .map(|a| {
            (
                a["outcome"].as_str().unwrap(),
                a["new_failure"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        llm,
        [
            (
                "refused",
                "the answer repeats a candidate pytest already rejected for this failure"
            ),
            ("accepted", "")
        ]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1]
        .prompt()
        .contains("Refused before any run: the answer repeats a candidate pytest already rejected for this failure."));
    assert_eq!(j["patches"][0]["source"], "llm");
}
