//! Planning a failure from a traceback text, for the transform tests: the same checks for every
//! family of rules.

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
