//! Planning a failure from a traceback text, for the transform tests: the same checks for every
//! family of rules, and the table of cases each family's tests are (see [`transform_cases`]).

use std::path::Path;

use std::sync::OnceLock;

use selfdebug::plan::{self, Candidate, PlanInput};
use selfdebug::rules::RuleSet;
use selfdebug::runner;
use selfdebug::source::SourceFile;
use selfdebug::traceback;
use selfdebug::transform::stdlib::Stdlib;

/// The standard library of `python3` on PATH, as planning in a real run sees it (indexed once
/// per test binary, cached in the user's cache like a real run).
pub fn stdlib() -> &'static Stdlib {
    static STDLIB: OnceLock<Stdlib> = OnceLock::new();
    STDLIB.get_or_init(|| {
        let python = runner::find_interpreter(Path::new("/"), Some(Path::new("python3")))
            .expect("python3 on PATH");
        Stdlib::new(python)
    })
}

/// Parses `log` against `root`, checks that the failure is located at `file:line`, and plans it
/// with the built-in rules.
pub fn candidates(name: &str, root: &Path, log: &[u8], file: &str, line: u32) -> Vec<Candidate> {
    let parsed = traceback::parse(log, root).unwrap();
    let failure = &parsed.failures[0];
    assert_eq!(
        failure.location.as_ref().map(|l| (l.file.as_str(), l.line)),
        Some((file, line)),
        "{name}\n{}",
        String::from_utf8_lossy(log)
    );
    let rules = RuleSet::builtin().unwrap();
    plan::plan(&PlanInput {
        root,
        failure,
        rules: &rules,
        probe: None,
        allow_tests: false,
        stdlib: stdlib(),
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Bytes before the first edit and after the last one are the original's (offsets in the
/// file's own encoding, BOM included); a BOM stays, a CRLF file's new lines end in CRLF, and a
/// latin-1 file stays latin-1.
pub fn assert_outside_edits_identical(name: &str, c: &Candidate) {
    let (a, b) = (&c.original, &c.patched);
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let src = SourceFile::from_bytes("mod.py", a.clone()).unwrap();
    let text = src.text();
    let start = c.fix.edits.iter().map(|e| e.range.start).min().unwrap();
    let end = c.fix.edits.iter().map(|e| e.range.end).max().unwrap();
    let start_byte = src.encode(&text[..start]).unwrap().len();
    let end_byte = src.encode(&text[..end]).unwrap().len();
    assert!(
        prefix >= start_byte,
        "{name}: bytes before the edit changed"
    );
    assert!(
        suffix >= a.len() - end_byte,
        "{name}: bytes after the edit changed"
    );
    let bom = b"\xef\xbb\xbf";
    assert_eq!(a.starts_with(bom), b.starts_with(bom), "{name}: BOM");
    let crlf = a.windows(2).filter(|w| w == b"\r\n").count();
    let lf = a.iter().filter(|&&x| x == b'\n').count();
    if crlf == lf && lf > 0 {
        let (pc, pl) = (
            b.windows(2).filter(|w| w == b"\r\n").count(),
            b.iter().filter(|&&x| x == b'\n').count(),
        );
        assert_eq!(pc, pl, "{name}: every line ends in CRLF");
    }
    if a.contains(&0xe9) && !a.windows(2).any(|w| w == [0xc3, 0xa9]) {
        // latin-1 stays latin-1: é is one byte, not UTF-8's two.
        assert!(
            b.contains(&0xe9) && !b.windows(2).any(|w| w == [0xc3, 0xa9]),
            "{name}: latin-1"
        );
    }
}

/// One row of a transform table: a temp project whose `file` fails at `line` with `exc`, as
/// CPython prints it under a pytest test of it.
pub struct Case {
    /// Project files (path, exact bytes).
    pub files: &'static [(&'static str, &'static [u8])],
    /// The one that fails.
    pub file: &'static str,
    /// 1-based failing line.
    pub line: u32,
    /// Its function (`<module>` at import time); `None` for a SyntaxError, whose display has
    /// the file and line only.
    pub func: Option<&'static str>,
    /// Caret line under the stripped code as CPython prints it, if any.
    pub caret: Option<&'static str>,
    /// The exception line; `ROOT` stands for the project's path.
    pub exc: &'static str,
    /// The test module's import and its one assertion, printed as the outermost frame.
    pub import: &'static str,
    pub test_line: &'static str,
}

impl Case {
    /// What a row leaves out: `mod.py` fails, the test does `import mod`.
    pub const MOD: Case = Case {
        files: &[],
        file: "mod.py",
        line: 0,
        func: None,
        caret: None,
        exc: "",
        import: "import mod",
        test_line: "",
    };
}

/// Writes the case's project (its files and `tests/test_mod.py`) and the native traceback of
/// its failure.
pub fn project(case: &Case) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (path, bytes) in case.files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    std::fs::create_dir_all(root.join("tests")).unwrap();
    let test_src = format!(
        "{}\n\n\ndef test_it():\n    {}\n",
        case.import, case.test_line
    );
    std::fs::write(root.join("tests/test_mod.py"), test_src).unwrap();
    let bytes = case.files.iter().find(|(p, _)| *p == case.file).unwrap().1;
    let text = SourceFile::from_bytes(case.file, bytes.to_vec()).unwrap();
    let code = text
        .line_text(case.line as usize)
        .unwrap()
        .trim()
        .to_string();
    let (r, file, l) = (root.display(), case.file, case.line);
    let mut log = match case.func {
        Some(f) => format!(
            "Traceback (most recent call last):\n  File \"{r}/tests/test_mod.py\", line 5, in test_it\n    {t}\n  File \"{r}/{file}\", line {l}, in {f}\n    {code}\n",
            t = case.test_line,
        ),
        None => format!(
            "Traceback (most recent call last):\n  File \"{r}/tests/test_mod.py\", line 1, in <module>\n    {i}\n  File \"{r}/{file}\", line {l}\n    {code}\n",
            i = case.import,
        ),
    };
    if let Some(c) = case.caret {
        log.push_str(&format!("    {c}\n"));
    }
    log.push_str(&case.exc.replace("ROOT", &root.display().to_string()));
    log.push('\n');
    (dir, log.into_bytes())
}

/// The case's candidates, in rank order: at least one, each changing nothing outside its edits.
pub fn case_candidates(name: &str, case: &Case) -> Vec<Candidate> {
    let (dir, log) = project(case);
    let cands = candidates(name, dir.path(), &log, case.file, case.line);
    assert!(!cands.is_empty(), "{name}: no candidate");
    for c in &cands {
        assert_outside_edits_identical(name, c);
    }
    cands
}

/// A snapshot's text: every candidate's title, rule (and `, safe` when `show_safe`), and diff.
pub fn render(cands: &[Candidate], show_safe: bool) -> String {
    let mut snap = String::new();
    for c in cands {
        let safe = if show_safe && c.safe { ", safe" } else { "" };
        snap.push_str(&format!(
            "## {} [{}{safe}]\n{}\n",
            c.fix.title, c.fix.rule, c.diff
        ));
    }
    snap
}

/// One `#[test]` per row of a transform table, named after the row, as `#[test_case]` makes
/// them: a case fails, is filtered (`cargo test --test it transform_lookup::key_in_fstring`)
/// and reruns on its own. Each row lists the [`Case`] fields it sets; the rest come from
/// `defaults`. `check(name, &case)` is the family's own test body.
///
/// ```ignore
/// transform_cases! {
///     check(Case::MOD) {
///         key_returned_lf {
///             files: &[("mod.py", b"def f(d):\n    return d[\"k\"]\n")],
///             line: 2,
///             func: Some("f"),
///             exc: "KeyError: 'k'",
///             test_line: "assert mod.f({}) is None",
///         }
///     }
/// }
/// ```
macro_rules! transform_cases {
    ($check:ident($defaults:expr) {
        $($name:ident { $($field:ident: $value:expr),* $(,)? })*
    }) => {
        $(
            #[test]
            fn $name() {
                $check(
                    stringify!($name),
                    &$crate::support::plans::Case {
                        $($field: $value,)*
                        ..$defaults
                    },
                );
            }
        )*
    };
}
pub(crate) use transform_cases;
