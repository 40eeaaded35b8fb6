//! `--json` prints exactly one object on every exit, errors included: the envelope
//! (`schema_version`, `exit_code` equal to the process's, `error`) and, for fix and restore,
//! their report's other fields. Every object is checked against its command's schema by the
//! run helpers (tests/it/support).

use std::process::Output;

use crate::support;
use support::path_str;
use support::project::project;

/// stdout is one JSON object and nothing else; its exit_code is the process's; its error is
/// one line that contains `needle`.
#[track_caller]
fn one_error_object(out: &Output, code: i32, needle: &str) -> serde_json::Value {
    support::assert_exit(out, code);
    let mut docs =
        serde_json::Deserializer::from_slice(&out.stdout).into_iter::<serde_json::Value>();
    let v = docs
        .next()
        .expect("one JSON object on stdout")
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert!(docs.next().is_none(), "more than one object");
    assert!(v.is_object());
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["exit_code"], code);
    let error = v["error"].as_str().expect("error is a string");
    assert!(
        error.contains(needle) && !error.contains('\n'),
        "{error:?} should name {needle:?}"
    );
    // The same line is on stderr for a person.
    assert!(String::from_utf8_lossy(&out.stderr).contains(needle));
    v
}

/// The envelope alone: the command had no report to give.
#[track_caller]
fn envelope_only(v: &serde_json::Value) {
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["error", "exit_code", "schema_version"]);
}

#[test]
fn parse_on_bad_input() {
    let p = project(&[("garbage.txt", "hello\nthis is not a log\n")]);
    let missing = p.root.join("missing.txt");
    let garbage = p.root.join("garbage.txt");
    let root = path_str(&p.root);
    for (args, needle) in [
        (vec!["parse", path_str(&missing), "--json"], "missing.txt"),
        (
            vec!["parse", path_str(&garbage), "--json", "--root", root],
            "garbage.txt",
        ),
        (
            vec![
                "parse",
                path_str(&garbage),
                "--root",
                "/nonexistent-dir",
                "--json",
            ],
            "/nonexistent-dir",
        ),
        (
            vec![
                "parse",
                path_str(&garbage),
                "--output-format",
                "json",
                "--color",
                "sometimes",
            ],
            "sometimes",
        ),
    ] {
        let out = support::selfdebug(&args, None);
        envelope_only(&one_error_object(&out, 2, needle));
    }
}

#[test]
fn rules_and_config_on_bad_input() {
    let p = project(&[
        (".selfdebug/rules/broken.toml", "this is [[[ not toml\n"),
        ("selfdebug.toml", "no-such-key = 1\n"),
    ]);
    for (args, needle) in [
        (vec!["rules", "--json"], "broken.toml"),
        (vec!["config", "--json"], "no-such-key"),
    ] {
        let out = p.run(&args);
        envelope_only(&one_error_object(&out, 2, needle));
    }
    for cmd in ["rules", "config"] {
        let out = support::selfdebug(&[cmd, "--root", "/nonexistent-dir", "--json"], None);
        envelope_only(&one_error_object(&out, 2, "/nonexistent-dir"));
    }
}

#[test]
fn probe_on_bad_input_and_nothing_to_probe() {
    let p = project(&[
        ("conftest.py", ""),
        ("test_ok.py", "def test_ok():\n    pass\n"),
    ]);
    let missing = p.root.join("missing.txt");
    let out = p.run(&["probe", path_str(&missing), "--json"]);
    envelope_only(&one_error_object(&out, 2, "missing.txt"));
    let out = support::selfdebug(&["probe", "--root", "/nonexistent-dir", "--json"], None);
    envelope_only(&one_error_object(&out, 2, "/nonexistent-dir"));
    // A flag value clap refuses, next to --json.
    let out = p.run(&["probe", "--json", "--timeout", "0"]);
    envelope_only(&one_error_object(&out, 2, "--timeout"));
    // A real pytest run in which nothing fails: exit 1, and the reason as the error.
    let out = p.run(&["probe", "--json"]);
    envelope_only(&one_error_object(&out, 1, "nothing failed"));
}

#[test]
fn fix_and_restore_on_bad_input() {
    let p = project(&[("conftest.py", "")]);
    let missing = p.root.join("missing.txt");
    for (args, needle) in [
        (vec!["fix", path_str(&missing), "--json"], "missing.txt"),
        (
            vec!["fix", "--json", "--max-attempts", "0"],
            "--max-attempts",
        ),
        (vec!["fix", "--json", "--jobs", "0"], "--jobs"),
    ] {
        let out = p.run(&args);
        let v = one_error_object(&out, 2, needle);
        // fix's error object is its whole report, with empty lists.
        assert_eq!(v["final_status"], "bad_input");
        assert_eq!(v["patches"], serde_json::json!([]));
    }
    let out = support::selfdebug(&["fix", "--root", "/nonexistent-dir", "--json"], None);
    one_error_object(&out, 2, "/nonexistent-dir");
    let out = support::selfdebug(&["restore", "--root", "/nonexistent-dir", "--json"], None);
    let v = one_error_object(&out, 2, "/nonexistent-dir");
    assert_eq!(
        (&v["restored"], &v["files"]),
        (&serde_json::json!(false), &serde_json::json!([]))
    );
    // A flag clap refuses: restore's whole report too, not the bare envelope.
    let out = p.run(&["restore", "--json", "--bogus"]);
    let v = one_error_object(&out, 2, "--bogus");
    assert_eq!(
        (&v["restored"], &v["files"]),
        (&serde_json::json!(false), &serde_json::json!([]))
    );
    support::assert_valid("restore.schema.json", None, &[&out.stdout]);
}
