//! `selfdebug fix` on temp projects whose repair needs the standard-library index: a deleted
//! `from string import Formatter` (a name the old hand list did not have, exported by two
//! modules) and `os.getcwdu` (Python 2's name; the index knows what `os` has). Real pytest,
//! a private cache per test, so the index is built from scratch and then found cached.

use crate::support;

use serde_json::Value;
use support::project::project;

const RENDER: &str = "\"\"\"Templates for notices.\"\"\"\nimport re\n\n\ndef render(template, **values):\n    # {name} placeholders only; a missing value is an error, not a blank\n    names = [n for _, n, _, _ in Formatter().parse(template) if n]\n    for n in names:\n        if n not in values:\n            raise KeyError(n)\n    return re.sub(r\"\\s+\", \" \", Formatter().format(template, **values))\n";

const TEST_RENDER: &str = "from notices import render\n\n\ndef test_render():\n    assert render(\"Hi  {who}\", who=\"Ann\") == \"Hi Ann\"\n";

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn deleted_formatter_import_is_restored_from_the_index() {
    let p = project(&[
        ("notices.py", RENDER),
        ("tests/test_notices.py", TEST_RENDER),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ]);
    let out = p.run(&["fix", "--json"]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{j:#}");
    assert_eq!(j["final_status"], "pass");
    assert_eq!(
        p.read("notices.py"),
        RENDER.replace("import re\n", "import re\nfrom string import Formatter\n")
    );
    let patch = &j["patches"][0];
    assert_eq!(patch["file"], "notices.py");
    assert_eq!(
        patch["rules"],
        serde_json::json!(["name-import-stdlib-ranked"])
    );
    assert_eq!(patch["applicability"], "unsafe");
    assert_eq!(
        patch["titles"],
        serde_json::json!(["add the missing `from string import Formatter`"])
    );
    // The index went to the private cache: one file, only the owner may read it.
    let dir = p.cache.join("selfdebug").join("stdlib");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(files[0].file_name().to_string_lossy().ends_with(".jsonl"));
}

#[test]
fn python2_name_on_os_becomes_the_real_one() {
    let src = "import os\n\n\ndef here():\n    # the directory reports are written to\n    return os.getcwdu()\n";
    let p = project(&[
        ("paths.py", src),
        (
            "tests/test_paths.py",
            "import os\n\nfrom paths import here\n\n\ndef test_here():\n    assert here() == os.getcwd()\n",
        ),
        ("pytest.ini", "[pytest]\npythonpath = .\n"),
    ]);
    let out = p.run(&["fix", "--json"]);
    let j = json(&out);
    assert_eq!(out.status.code(), Some(0), "{j:#}");
    assert_eq!(
        p.read("paths.py"),
        "import os\n\n\ndef here():\n    # the directory reports are written to\n    return os.getcwd()\n"
    );
    // The probe's dir() of `os` gives CPython's own suggestion, so the safe rule makes it.
    let patch = &j["patches"][0];
    assert_eq!(patch["rules"], serde_json::json!(["attr-did-you-mean"]));
    assert_eq!(patch["applicability"], "safe");
    assert_eq!(j["tracebacks"][0]["exc_type"], "AttributeError");
    assert_eq!(
        j["tracebacks"][0]["msg"],
        "module 'os' has no attribute 'getcwdu'"
    );
}
