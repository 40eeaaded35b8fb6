//! `--exit-non-zero-on-fix` (what pre-commit's `selfdebug-check` hook runs with `--dry-run`):
//! exit 1 when the tests pass only with the proven patch, 0 when nothing failed, and the
//! usual codes otherwise; the JSON's `exit_code` is the process's.

use crate::support;

use support::project::{assert_same, demo_project, json, project, DEMO_FIXED, DEMO_MODULE};

/// The patch `fix` prints for the demo bug.
const DEMO_PATCH: &str = "\
--- a/words.py
+++ b/words.py
@@ -1,3 +1,3 @@
 def to_upper(text):
-    words = text.split()
+    words = (text or \"\").split()
     return \" \".join(w.upper() for w in words)
";

#[test]
fn dry_run_check_fails_prints_the_patch_and_changes_nothing() {
    let p = demo_project();
    let before = p.snapshot();
    let out = p.run(&["fix", "--dry-run", "--exit-non-zero-on-fix"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), DEMO_PATCH);
    assert_same(&before, &p.snapshot());

    let out = p.run(&["fix", "--dry-run", "--exit-non-zero-on-fix", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(
        (v["exit_code"].as_i64(), v["final_status"].as_str()),
        (Some(1), Some("pass"))
    );
    assert_eq!(v["patches"][0]["diff"], DEMO_PATCH);
    assert_same(&before, &p.snapshot());
}

#[test]
fn fix_keeps_the_patch_and_exits_1_then_0_when_green() {
    let p = demo_project();
    let out = p.run(&["fix", "--exit-non-zero-on-fix"]);
    support::assert_exit(&out, 1);
    assert_eq!(p.read("words.py"), DEMO_FIXED);
    // Green now: nothing to fix is 0 with the flag too.
    let out = p.run(&["fix", "--dry-run", "--exit-non-zero-on-fix", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["exit_code"], 0);
}

#[test]
fn other_outcomes_keep_their_codes() {
    // Nothing can fix this one (the test contradicts itself; a test that only wants a value
    // for None is the search's to fit): 4, with the flag or without.
    let p = project(&[
        ("words.py", DEMO_MODULE),
        (
            "tests/test_words.py",
            "import pytest\nfrom words import to_upper\n\n\ndef test_none():\n    with pytest.raises(ValueError):\n        to_upper(None)\n    assert to_upper(None) == \"NONE\"\n",
        ),
    ]);
    let out = p.run(&["fix", "--dry-run", "--exit-non-zero-on-fix", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(json(&out)["exit_code"], 4);
}
