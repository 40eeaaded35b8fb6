//! `selfdebug fix --dry-run` on real projects with real pytest: the proven patch is printed,
//! and the user's tree is not touched (every file hashed before and after, no new file).

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use support::{path_str, project_root, python, selfdebug};

/// Copies a fixture project into a fresh temp dir.
fn copy_project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join(name);
    support::copy_dir(&project_root(name), &dest);
    (dir, dest)
}

/// Every file under `root` (relative path → bytes and mtime), directories included by name.
fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, Option<std::time::SystemTime>)> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap()
            .display()
            .to_string();
        let meta = entry.metadata().unwrap();
        let bytes = if meta.is_file() {
            std::fs::read(entry.path()).unwrap()
        } else {
            Vec::new()
        };
        out.insert(
            rel,
            (bytes, meta.modified().ok().filter(|_| meta.is_file())),
        );
    }
    out
}

const DEMO_PATCH: &str = "--- a/utils/demo.py
+++ b/utils/demo.py
@@ -3,7 +3,7 @@
 
 def to_upper(text):
     \"\"\"Return ``text`` upper-cased, with runs of whitespace collapsed.\"\"\"
-    words = text.split()
+    words = (text or \"\").split()
     return \" \".join(word.upper() for word in words)
 
 
";

#[test]
fn demo_patch_is_proven_and_tree_untouched() {
    let (_tmp, root) = copy_project("demo");
    let before = snapshot(&root);
    let out = selfdebug(&["fix", "--dry-run", "--root", path_str(&root)], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), DEMO_PATCH, "{stderr}");
    assert!(stderr.contains("probe: None: text"), "{stderr}");
    assert!(stderr.contains("dry run: no file was changed"), "{stderr}");
    assert_eq!(
        snapshot(&root),
        before,
        "the project must be byte- and mtime-identical"
    );
    // The patch applies to the real tree as printed.
    let patch = root.join("../fix.patch");
    std::fs::write(&patch, DEMO_PATCH).unwrap();
    let applied = std::process::Command::new("git")
        .args(["apply", "--check"])
        .arg(&patch)
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
}

#[test]
fn safe_only_skips_unsafe_rules() {
    let (_tmp, root) = copy_project("demo");
    let out = selfdebug(
        &[
            "fix",
            "--dry-run",
            "--safe-only",
            "--json",
            "--root",
            path_str(&root),
        ],
        None,
    );
    support::assert_exit(&out, 4);
    let v = support::project::json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(v["final_status"], "fail");
    assert_eq!(v["patches"], serde_json::json!([]));
    assert_eq!(v["failures"][0]["status"], "skipped_unsafe");
    assert_eq!(
        v["failures"][0]["reason"],
        "5 candidates from unsafe rules not tried (--safe-only)"
    );
    assert_eq!(v["attempts"], 0);
}

#[test]
fn demo_json_summary() {
    let (_tmp, root) = copy_project("demo");
    let out = selfdebug(
        &["fix", "--dry-run", "--json", "--root", path_str(&root)],
        None,
    );
    support::assert_exit(&out, 0);
    let v = support::project::json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    let probe_doc = serde_json::to_vec(&v["failures"][0]["probe"]).unwrap();
    support::assert_valid("fix.schema.json", Some("probe_report"), &[&probe_doc]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["final_status"], "pass");
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["validated"], true);
    assert_eq!(v["rollback"], false);
    assert_eq!(v["attempts"], 1);
    assert_eq!(v["files_patched"], serde_json::json!(["utils/demo.py"]));
    assert_eq!(
        v["tracebacks"],
        serde_json::json!([{
            "file": "utils/demo.py",
            "line": 6,
            "exc_type": "AttributeError",
            "msg": "'NoneType' object has no attribute 'split'",
            "test": "tests/test_demo.py::test_headline_without_title",
            "func": "to_upper"
        }])
    );
    assert_eq!(v["patches"][0]["diff"], DEMO_PATCH);
    assert_eq!(
        v["patches"][0]["rules"],
        serde_json::json!(["null-guard-attribute"])
    );
    assert_eq!(v["patches"][0]["validated"], true);
    assert_eq!(v["patches"][0]["safe"], false);
    assert_eq!(v["attempt_records"][0]["outcome"], "accepted");
    assert_eq!(v["failures"][0]["status"], "fixed");
    let probe = &v["failures"][0]["probe"];
    assert_eq!(probe["fired"], true);
    let text = probe["exprs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == "text")
        .expect("probe saw `text`");
    assert_eq!(text["is_none"], true);
    // The probe ran in the scratch copy, never in the user's tree.
    let module_file = probe["module_file"].as_str().unwrap();
    assert!(!module_file.starts_with(path_str(&root)), "{module_file}");
    assert!(
        module_file.ends_with("/demo/utils/demo.py"),
        "{module_file}"
    );
    // The baseline (its plugin recorded the crash frame and reran the test: no probe run),
    // the targeted run, the full suite.
    assert_eq!(probe["source"], "plugin");
    assert_eq!(probe["probe_line"], "");
    // + 1 per kept unsafe candidate: its failing test runs once more (--proof-repeats 3,
    // the full run the third).
    assert_eq!(v["pytest_runs"], 3 + 1);
    assert!(v["pytest_ms"].as_u64().unwrap() <= v["duration_ms"].as_u64().unwrap());
}

#[test]
fn no_validate_prints_top_candidate_without_running() {
    let (_tmp, root) = copy_project("demo");
    let log = support::fixtures().join("tracebacks/demo/tb-long.txt");
    let before = snapshot(&root);
    // A bogus interpreter proves nothing is run.
    let out = selfdebug(
        &[
            "fix",
            "--dry-run",
            "--no-validate",
            "--json",
            "--python",
            "/nonexistent/python",
            path_str(&log),
            "--root",
            path_str(&root),
        ],
        None,
    );
    // Nothing was proven: `proposed`, exit 8, never a pass.
    support::assert_exit(&out, 8);
    let v = support::project::json(&out);
    support::assert_valid("fix.schema.json", None, &[&out.stdout]);
    assert_eq!(v["final_status"], "proposed");
    assert_eq!(v["exit_code"], 8);
    assert_eq!(v["pytest_runs"], 0);
    assert_eq!(v["validated"], false);
    assert_eq!(v["patches"][0]["validated"], false);
    assert_eq!(v["patches"][0]["diff"], DEMO_PATCH);
    assert_eq!(snapshot(&root), before);
    // Without a log there is nothing to work from.
    let out = selfdebug(
        &[
            "fix",
            "--dry-run",
            "--no-validate",
            "--root",
            path_str(&root),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a pytest log"));
}

/// An editable install (a `.pth` entry pointing at the original `src/`, as setuptools writes)
/// must not make validation import the user's files: the probe's `__file__` proves the
/// scratch copy was imported, and the user's tree stays untouched.
#[test]
fn editable_install_still_validates_the_copy() {
    let (tmp, root) = copy_project("inventory");
    let venv = tmp.path().join("venv");
    let made = std::process::Command::new(python())
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let site = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = PathBuf::from(String::from_utf8(site.stdout).unwrap().trim());
    std::fs::write(
        site.join("inventory_editable.pth"),
        format!("{}\n", root.join("src").display()),
    )
    .unwrap();
    let before = snapshot(&root);
    let vpy = venv.join("bin/python");
    let out = selfdebug(
        &[
            "fix",
            "--dry-run",
            "--json",
            "--python",
            path_str(&vpy),
            "--module",
            "tests/test_stock.py::test_supplier_name",
            "--root",
            path_str(&root),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let f = &v["failures"][0];
    assert_eq!(
        f["test"], "tests/test_stock.py::test_supplier_name",
        "{stderr}"
    );
    let module_file = f["probe"]["module_file"]
        .as_str()
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        module_file.ends_with("inventory/src/inventory/stock.py")
            && !module_file.starts_with(path_str(&root)),
        "validation imported {module_file}, not the scratch copy"
    );
    assert_eq!(f["status"], "fixed", "{stderr}");
    assert_eq!(snapshot(&root), before);
}
