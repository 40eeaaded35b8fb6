//! `--output-format github` on a real run: one annotation per kept candidate, at its own lines
//! and columns in the file as committed, and every line printed is a well-formed workflow
//! command.

use crate::support;

use support::project::{project, Project};

/// A safe fix (a missing stdlib import) and an unsafe one (a None guard) in one file, and a
/// failure that is not the code's (a missing file) in a subpackage whose name needs escaping.
const FILES: &[(&str, &str)] = &[
    ("py/pytest.ini", "[pytest]\npythonpath = .\n"),
    ("py/app/__init__.py", ""),
    (
        "py/app/core.py",
        "def dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
         def shout(text):\n    return text.upper() + \"!\"\n\n\n\
         def settings():\n    with open(\"a,b: settings.ini\") as f:\n        return f.read()\n",
    ),
    (
        "py/tests/test_core.py",
        "from app import core\n\n\n\
         def test_dump():\n    assert core.dump({\"b\": 1, \"a\": 2}) == '{\"a\": 2, \"b\": 1}'\n\n\n\
         def test_shout():\n    assert core.shout(None) == \"!\"\n\n\n\
         def test_settings():\n    assert core.settings() == \"\"\n",
    ),
];

fn repo() -> Project {
    let p = project(FILES);
    p.git(&["init", "-q", "."]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    p
}

/// `::NAME key=value,...::MESSAGE` as `@actions/core` writes it: property values carry no raw
/// `,` `:` CR or LF, messages no raw CR or LF, and every `%` starts an escape.
fn well_formed(line: &str) -> bool {
    let re = regex::Regex::new(
        r"^::(notice|warning|error)( (file|line|endLine|col|endColumn|title)=([^,:%\r\n]|%25|%0D|%0A|%3A|%2C)*(,(file|line|endLine|col|endColumn|title)=([^,:%\r\n]|%25|%0D|%0A|%3A|%2C)*)*)?::([^%\r\n]|%25|%0D|%0A)*$",
    )
    .unwrap();
    re.is_match(line)
}

#[test]
fn grammar_check_rejects_raw_separators() {
    assert!(well_formed("::error file=a.py,line=3,title=x%3A y::m%0An"));
    assert!(well_formed("::notice::m"));
    assert!(!well_formed("::error file=a,b.py::m"));
    assert!(!well_formed("::error title=x: y::m"));
    assert!(!well_formed("::error::100% sure"));
    assert!(!well_formed("::debug::m"));
}

#[test]
fn a_safe_and_an_unsafe_fix_in_one_file_get_their_own_annotations() {
    let p = repo();
    let mut cmd = p.cmd_in("py", &["fix", "--output-format", "github"]);
    cmd.env_remove("GITHUB_WORKSPACE");
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for line in stdout.lines() {
        assert!(well_formed(line), "not a workflow command: {line:?}");
    }
    // Lines and columns are those of the committed file: the None guard is on line 6 even
    // though the import, applied first, moved it to line 9 (where its own diff shows it).
    let heads: Vec<&str> = stdout
        .lines()
        .map(|l| &l[..2 + l[2..].find("::").unwrap()])
        .collect();
    assert_eq!(
        heads,
        [
            "::error file=py/app/core.py,line=10,title=selfdebug%3A escalated",
            "::notice file=py/app/core.py,line=1,endLine=1,title=selfdebug%3A fixed (safe%2C \
             name-import-stdlib)",
            "::warning file=py/app/core.py,line=6,endLine=6,col=12,endColumn=15,\
             title=selfdebug%3A fixed (unsafe%2C null-guard-attribute)",
        ],
        "{stdout}"
    );
    let warning = stdout.lines().nth(2).unwrap();
    assert!(
        warning.ends_with(
            "::use `\"\"` when `text` is None%0A\
             review: invents a default for None: check that None is legitimate here%0A%0A\
             --- a/app/core.py%0A+++ b/app/core.py%0A@@ -6,7 +6,7 @@%0A %0A %0A \
             def shout(text):%0A-    return text.upper() + \"!\"%0A\
             +    return (text or \"\").upper() + \"!\"%0A %0A %0A def settings():"
        ),
        "{warning}"
    );
    // Both fixes are kept.
    assert_eq!(
        p.read("py/app/core.py"),
        "import json\n\n\ndef dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\n\
         def shout(text):\n    return (text or \"\").upper() + \"!\"\n\n\n\
         def settings():\n    with open(\"a,b: settings.ini\") as f:\n        return f.read()\n"
    );
}
