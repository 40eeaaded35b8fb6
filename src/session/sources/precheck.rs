//! Candidates the search drops before any pytest run (issue 22 §3):
//!
//! - **not run by the failing test**: an edit inside a function, in a statement (or, for an
//!   inserted statement, a block) none of whose lines the failing test executed, cannot change
//!   that test's outcome (its lines come from the spectrum; an edit outside every function, a
//!   module constant, runs at import and is always kept);
//! - **does not compile**: what the Rust parser accepts but CPython refuses (`return` outside a
//!   function, a `nonlocal` with no binding, duplicate arguments);
//! - **the same program as an earlier one**: candidates whose files have the same AST (they
//!   differ in whitespace or redundant parentheses only) are one candidate, the best-ranked kept.
//!
//! The last two ask the project's interpreter, once for all candidates of a search (one
//! process, [`CHECK`]): what each candidate changed is compiled and its `ast.dump` hashed —
//! the top-level statement (a `def`, a `class`, an assignment) holding all its edits, else the
//! whole patched file. Dumping a 2,000-line module for each of hundreds of candidates took the
//! whole search time before one ran; the statement alone compiles the same (a `return`, a
//! `nonlocal` and their errors live inside it) and two candidates of one statement are the
//! same program when its ASTs are. When that process cannot run or an original file itself
//! does not compile with it, nothing is dropped for those reasons: the pytest runs judge.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rustpython_parser::ast::{Ranged, Stmt};

use crate::localize::Spectrum;
use crate::runner::Interpreter;
use crate::search::Ranked;
use crate::syntax::walk::{self, Node};
use crate::syntax::MAX_AST_DEPTH;

/// The checker: reads `N` files named `0`, `1`, ... from the directory in `argv[1]` and prints
/// one line per file: `ok <hash of its AST>`, or `no` when it does not compile.
const CHECK: &str = r#"
import ast, hashlib, os, sys, warnings
warnings.simplefilter("ignore")
d = sys.argv[1]
out = []
for i in range(int(sys.argv[2])):
    p = os.path.join(d, str(i))
    with open(p, "rb") as f:
        src = f.read()
    try:
        tree = compile(src, p, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        compile(tree, p, "exec", dont_inherit=True)
        out.append("ok " + hashlib.sha256(ast.dump(tree).encode()).hexdigest())
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        out.append("no")
sys.stdout.write("\n".join(out) + "\n")
"#;

/// How long the checker may take (hundreds of small files: well under a second idle).
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

/// What the pre-checks dropped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) struct Dropped {
    pub not_run: usize,
    pub not_compiling: usize,
    pub duplicates: usize,
}

impl Dropped {
    pub(in crate::session) fn total(&self) -> usize {
        self.not_run + self.not_compiling + self.duplicates
    }
}

/// The candidates worth a run, in their order, and what was dropped.
pub(in crate::session) fn screen(
    python: &Interpreter,
    candidates: Vec<Ranked>,
    test: &str,
    spectrum: &Spectrum,
) -> (Vec<Ranked>, Dropped) {
    let mut dropped = Dropped::default();
    let mut kept: Vec<Ranked> = Vec::with_capacity(candidates.len());
    let ran = spectrum.tests.get(test);
    // Each file parsed once, not once per candidate (hundreds of them in one large module).
    let mut parsed: std::collections::HashMap<String, Option<Parsed>> =
        std::collections::HashMap::new();
    for r in candidates {
        if let Some(ran) = ran {
            let lines = ran.lines.get(&r.candidate.file);
            let c = &r.candidate;
            let module = parsed
                .entry(c.file.clone())
                .or_insert_with(|| parse_original(c))
                .as_ref();
            if !runs_edit(&r, module, lines) {
                dropped.not_run += 1;
                continue;
            }
        }
        kept.push(r);
    }
    let verdicts = compiled(python, &kept);
    let Some(verdicts) = verdicts else {
        return (kept, dropped);
    };
    let mut seen: BTreeSet<(String, Option<usize>, String)> = BTreeSet::new();
    let mut out = Vec::with_capacity(kept.len());
    for (r, (scope, v)) in kept.into_iter().zip(verdicts) {
        match v {
            None => dropped.not_compiling += 1,
            Some(hash) => {
                if seen.insert((r.candidate.file.clone(), scope, hash)) {
                    out.push(r);
                } else {
                    dropped.duplicates += 1;
                }
            }
        }
    }
    (out, dropped)
}

/// A candidate's original file, parsed, and whether its bytes start with a BOM.
struct Parsed {
    module: crate::syntax::ParsedModule,
    bom: bool,
}

/// `None` when the original does not parse, or is latin-1 (edits are byte ranges of the file:
/// there they are not offsets of the text).
fn parse_original(c: &crate::plan::Candidate) -> Option<Parsed> {
    let source = crate::source::SourceFile::from_bytes(&c.path, c.original.clone()).ok()?;
    if matches!(source.encoding(), crate::source::Encoding::Latin1) {
        return None;
    }
    let module = crate::syntax::parse(&source).ok()?;
    Some(Parsed {
        module,
        bom: source.has_bom(),
    })
}

/// Whether the failing test executed the statement (or, for an insertion, the block) that the
/// candidate's edits touch; `lines` are the lines it ran in the candidate's file, `parsed` its
/// original (`None`: it could not be read, so the edit is kept).
fn runs_edit(r: &Ranked, parsed: Option<&Parsed>, lines: Option<&BTreeSet<u32>>) -> bool {
    let c = &r.candidate;
    let Some(Parsed { module, bom }) = parsed else {
        return true;
    };
    let starts = module.line_starts();
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset) as u32;
    let text_len = module.text().len();
    // Edits are byte ranges of the file; the parsed text drops a BOM (3 bytes).
    let shift = if *bom { 3 } else { 0 };
    let ranges: Vec<(usize, usize)> = c
        .fix
        .edits
        .iter()
        .map(|e| {
            (
                e.range.start.saturating_sub(shift).min(text_len),
                e.range.end.saturating_sub(shift).min(text_len),
            )
        })
        .collect();
    let roots: Vec<Node> = module.body().iter().map(Node::Stmt).collect();
    for (start, end) in ranges {
        // The innermost statement holding the edit, and whether a function holds it.
        let mut inner: Option<&Stmt> = None;
        let mut in_function = false;
        walk::walk(&roots, MAX_AST_DEPTH, |node, _| {
            let Node::Stmt(s) = node else { return false };
            let rg = s.range();
            let holds = rg.start().to_usize() <= start && end <= rg.end().to_usize();
            if holds {
                if inner
                    .is_some_and(|i| matches!(i, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)))
                {
                    in_function = true;
                }
                inner = Some(s);
            }
            holds
        });
        let Some(s) = inner else { return true };
        // A function's own body: its statements' lines (the `def` line runs at import).
        let (lo, hi) = match s {
            Stmt::FunctionDef(f) if !f.body.is_empty() => {
                in_function = true;
                (f.body[0].range().start(), s.range().end())
            }
            Stmt::AsyncFunctionDef(f) if !f.body.is_empty() => {
                in_function = true;
                (f.body[0].range().start(), s.range().end())
            }
            _ => (s.range().start(), s.range().end()),
        };
        if !in_function {
            return true;
        }
        let (lo, hi) = (
            line_of(lo.to_usize()),
            line_of(hi.to_usize().saturating_sub(1)),
        );
        if lines.is_some_and(|l| l.range(lo..=hi).next().is_some()) {
            return true;
        }
    }
    false
}

/// Per candidate, the top-level statement its check read (`None`: the whole file) and the hash
/// of what was read's AST, or `None` when it does not compile; `None` for the whole when the
/// checker cannot run or the original files do not compile either.
#[allow(clippy::type_complexity)]
fn compiled(python: &Interpreter, kept: &[Ranked]) -> Option<Vec<(Option<usize>, Option<String>)>> {
    if kept.is_empty() {
        return Some(Vec::new());
    }
    let dir = tempfile::Builder::new()
        .prefix("selfdebug-precheck-")
        .tempdir()
        .ok()?;
    // The originals first (each file once): a file the interpreter refuses as it is says
    // nothing about its candidates.
    let mut originals: Vec<(&str, &[u8], Vec<std::ops::Range<usize>>)> = Vec::new();
    for r in kept {
        if !originals.iter().any(|(f, _, _)| *f == r.candidate.file) {
            let tops = top_level_spans(&r.candidate.path, &r.candidate.original);
            originals.push((&r.candidate.file, &r.candidate.original, tops));
        }
    }
    let read: Vec<(Option<usize>, &[u8])> = kept
        .iter()
        .map(|r| {
            let c = &r.candidate;
            let tops = originals
                .iter()
                .find(|(f, _, _)| *f == c.file)
                .map_or(&[][..], |(_, _, t)| t.as_slice());
            changed_statement(c, tops).unwrap_or((None, c.patched.as_slice()))
        })
        .collect();
    let all: Vec<&[u8]> = originals
        .iter()
        .map(|(_, b, _)| *b)
        .chain(read.iter().map(|(_, b)| *b))
        .collect();
    for (i, bytes) in all.iter().enumerate() {
        std::fs::write(dir.path().join(i.to_string()), bytes).ok()?;
    }
    let verdicts = run_check(python, dir.path(), all.len())?;
    if verdicts.len() != all.len() || verdicts[..originals.len()].iter().any(Option::is_none) {
        return None;
    }
    Some(
        read.iter()
            .map(|(scope, _)| *scope)
            .zip(verdicts[originals.len()..].iter().cloned())
            .collect(),
    )
}

/// The byte spans of a file's top-level statements (decorators included), in its bytes; empty
/// when it cannot be read as UTF-8 Python.
fn top_level_spans(path: &Path, original: &[u8]) -> Vec<std::ops::Range<usize>> {
    let Ok(source) = crate::source::SourceFile::from_bytes(path, original.to_vec()) else {
        return Vec::new();
    };
    if matches!(source.encoding(), crate::source::Encoding::Latin1) {
        return Vec::new();
    }
    let Ok(module) = crate::syntax::parse(&source) else {
        return Vec::new();
    };
    let shift = if source.has_bom() { 3 } else { 0 };
    module
        .top_level_spans()
        .into_iter()
        .map(|r| r.start + shift..r.end + shift)
        .collect()
}

/// The candidate's top-level statement as patched, when one statement of `tops` holds every
/// edit: its index and bytes.
fn changed_statement<'a>(
    c: &'a crate::plan::Candidate,
    tops: &[std::ops::Range<usize>],
) -> Option<(Option<usize>, &'a [u8])> {
    let (k, span) =
        crate::edit::statement_holding(tops, &c.fix.edits, c.patched.len(), c.original.len())?;
    Some((Some(k), c.patched.get(span)?))
}

fn run_check(python: &Interpreter, dir: &Path, n: usize) -> Option<Vec<Option<String>>> {
    let mut cmd = std::process::Command::new(&python.path);
    // Isolated (-I): no PYTHON* variables, no user site, not the project's directory on the
    // path; nothing of the project is imported, only compiled.
    cmd.arg("-I")
        .arg("-c")
        .arg(CHECK)
        .arg(dir)
        .arg(n.to_string())
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let run = crate::process::run_command(cmd, CHECK_TIMEOUT).ok()?;
    if run.exit_code != Some(0) {
        return None;
    }
    let text = String::from_utf8_lossy(&run.stdout);
    Some(
        text.lines()
            .map(|l| l.strip_prefix("ok ").map(str::to_string))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::localize::{Suspicious, TestCoverage};
    use crate::search::{candidates, SearchInput};

    fn python() -> Interpreter {
        Interpreter {
            path: "python3".into(),
            source: crate::runner::InterpreterSource::Path,
        }
    }

    fn ranked(root: &Path, file: &str, lines: &[u32]) -> Vec<Ranked> {
        let suspicious: Vec<Suspicious> = lines
            .iter()
            .map(|&line| Suspicious {
                file: file.into(),
                line,
                score: 1.0,
            })
            .collect();
        candidates(&SearchInput {
            root,
            suspicious: &suspicious,
            expected: None,
            expectation: None,
            allow_tests: false,
            frame: None,
            words: &[],
            test_literals: &[],
            failure: None,
            wanted_type: None,
        })
    }

    fn spectrum(test: &str, file: &str, lines: &[u32]) -> Spectrum {
        let mut sp = Spectrum::default();
        sp.tests.insert(
            test.into(),
            TestCoverage {
                failed: true,
                spawns: false,
                lines: [(file.to_string(), lines.iter().copied().collect())].into(),
            },
        );
        sp
    }

    #[test]
    fn edits_at_lines_the_failing_test_did_not_run_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.py"),
            "LIMIT = 3\n\n\ndef used(n):\n    return n + 1\n\n\ndef other(n):\n    return n - 1\n",
        )
        .unwrap();
        let all = ranked(dir.path(), "m.py", &[1, 5, 9]);
        let n = |line: u32, rs: &[Ranked]| rs.iter().filter(|r| r.line == line).count();
        assert!(n(1, &all) > 0 && n(5, &all) > 0 && n(9, &all) > 0);
        // The test ran `used` (line 5), not `other` (line 9); the module constant ran at import.
        let sp = spectrum("t::test", "m.py", &[5]);
        let (kept, dropped) = screen(&python(), all.clone(), "t::test", &sp);
        assert_eq!(n(9, &kept), 0);
        assert_eq!(n(5, &kept), n(5, &all));
        assert_eq!(n(1, &kept), n(1, &all));
        assert_eq!(dropped.not_run, n(9, &all));
        // A test the spectrum does not know: nothing is left out for that reason.
        let (kept, dropped) = screen(&python(), all.clone(), "t::other", &sp);
        assert_eq!(dropped.not_run, 0);
        assert_eq!(kept.len() + dropped.total(), all.len());
    }

    #[test]
    fn what_cpython_refuses_and_repeats_of_one_ast_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), "def f(a):\n    return a + 1\n").unwrap();
        let mut all = ranked(dir.path(), "m.py", &[2]);
        assert!(all.len() >= 2);
        let base = all[0].clone();
        // The same program as the first, with redundant parentheses: a duplicate.
        let mut same = base.clone();
        same.candidate.patched = String::from_utf8(base.candidate.patched.clone())
            .unwrap()
            .replace("return ", "return (")
            .replace('\n', ")\n")
            .replacen(")\n", "\n", 1)
            .into_bytes();
        // `return` at module level parses in Rust but CPython refuses it; a duplicate argument
        // name is a compile error too.
        let mut outside = base.clone();
        outside.candidate.patched = b"return 1\n".to_vec();
        let mut dup_arg = base.clone();
        dup_arg.candidate.patched = b"def f(a, a):\n    return a\n".to_vec();
        all.insert(1, same);
        all.insert(2, outside);
        all.insert(3, dup_arg);
        let total = all.len();
        let (kept, dropped) = screen(&python(), all, "t::test", &Spectrum::default());
        assert_eq!(dropped.not_compiling, 2, "{dropped:?}");
        assert_eq!(dropped.duplicates, 1);
        assert_eq!(kept.len(), total - 3);
        assert_eq!(kept[0].candidate.patched, base.candidate.patched);
    }

    /// What the checker reads of a candidate: the top-level statement holding its edits,
    /// decorators included, as patched; two equal statements edited alike are two programs.
    #[test]
    fn only_the_changed_top_level_statement_is_compiled() {
        let dir = tempfile::tempdir().unwrap();
        let src =
            "import functools\n\nX = 1\nX = 1\n\n\n@functools.cache\ndef f(a):\n    return a + 1\n";
        std::fs::write(dir.path().join("m.py"), src).unwrap();
        let all = ranked(dir.path(), "m.py", &[3, 4, 9]);
        let tops = top_level_spans(&all[0].candidate.path, src.as_bytes());
        assert_eq!(tops.len(), 4);
        let in_f = all
            .iter()
            .find(|r| r.candidate.fix.edits[0].range.start > src.find("def").unwrap())
            .unwrap();
        let (scope, bytes) = changed_statement(&in_f.candidate, &tops).unwrap();
        assert_eq!(scope, Some(3));
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("@functools.cache\ndef f(a):\n    return "),
            "{text}"
        );
        assert!(!text.contains("X = 1"), "{text}");
        // `X = 1` -> `X = 2` at line 3 and at line 4: the same text, two statements.
        let same: Vec<Ranked> = all
            .iter()
            .filter(|r| {
                String::from_utf8_lossy(&r.candidate.patched)
                    .matches("X = 2")
                    .count()
                    == 1
            })
            .cloned()
            .collect();
        assert_eq!(same.len(), 2);
        let (kept, dropped) = screen(&python(), same, "t::test", &Spectrum::default());
        assert_eq!((kept.len(), dropped.total()), (2, 0));
    }

    #[test]
    fn an_original_cpython_refuses_leaves_every_candidate_in() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), "def f(a):\n    return a + 1\n").unwrap();
        let mut all = ranked(dir.path(), "m.py", &[2]);
        for r in &mut all {
            r.candidate.original = b"return 0\n".to_vec();
        }
        let n = all.len();
        let (kept, dropped) = screen(&python(), all, "t::test", &Spectrum::default());
        assert_eq!((kept.len(), dropped.total()), (n, 0));
    }
}
