//! From a located failure to ranked candidate patches, without running anything: read the file
//! exactly, parse it, find the failing statement, match the rules, run their transforms, and
//! keep the fixes that apply cleanly and re-parse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::edit::{self, Fix};
use crate::rules::{Category, RuleSet};
use crate::source::SourceFile;
use crate::status::{DiffEncoding, Source};
use crate::syntax::{self, ColumnUnit};
use crate::traceback::{locate::is_test_file, Failure};
use crate::transform::stdlib::Stdlib;
use crate::transform::{self, Context, ProbeFacts};

/// One proposed patch of one file.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Relative to the root, forward slashes.
    pub file: String,
    pub fix: Fix,
    pub category: Category,
    /// Whether the rule is marked safe (tried even under `--safe-only`).
    pub safe: bool,
    /// `rule` (rules/*.toml), `search` (the search over small edits for wrong output) or
    /// `llm` (the opt-in model fallback).
    pub source: Source,
    /// Unified diff of the original bytes (see [`edit::unified_diff_bytes`]).
    pub diff: String,
    /// How `diff` maps to the patch's bytes: `utf-8` or `iso-8859-1`.
    pub diff_encoding: DiffEncoding,
    #[serde(skip)]
    pub path: PathBuf,
    #[serde(skip)]
    pub original: Vec<u8>,
    #[serde(skip)]
    pub patched: Vec<u8>,
}

/// Why no candidate could even be proposed. Each says what a user can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// The traceback has no frame in the project's own code.
    NoLocation,
    /// The log is older than the code: the printed source of the frame to repair (file, line
    /// as printed) is no longer in the file near that line.
    SourceChanged(String, u32),
    /// The location is a test file and tests may not be edited.
    TestFile(String),
    /// The file is outside the root, behind a symlink leading out of it, or unreadable.
    Confined(String),
    /// The file does not parse as Python 3 and no text-level rule made it parse (file, the
    /// parser's message): reported, never written.
    Unparseable(String, String),
    /// The source could not be read.
    Unreadable(String),
    /// No statement at the line (the file changed since the log was written?).
    NotLocated(String, u32),
    /// No rule knows this failure.
    NoRule(String),
}

impl PlanError {
    /// Why `failure` has no location: a log that no longer matches the code, or no frame in it.
    pub fn no_location(failure: &Failure) -> PlanError {
        match failure.source_changed() {
            Some(r) => PlanError::SourceChanged(r.file.clone(), r.line),
            None => PlanError::NoLocation,
        }
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::NoLocation => f.write_str("no frame of the traceback is in the project's own code"),
            PlanError::SourceChanged(file, line) => write!(f, "the log does not match the code: the source line it prints at {file}:{line} is no longer there (the log is older than the code); run pytest again for a fresh log"),
            PlanError::TestFile(file) => write!(f, "{file} is a test file; pass --allow-tests to let selfdebug edit it"),
            PlanError::Confined(msg) => f.write_str(msg),
            PlanError::Unparseable(file, msg) => write!(f, "{file} does not parse as Python 3 ({msg}) and no rule could repair it; it was not touched"),
            PlanError::Unreadable(msg) => f.write_str(msg),
            PlanError::NotLocated(file, line) => write!(f, "{file}:{line}: no statement there (has the file changed since the log was written?)"),
            PlanError::NoRule(sig) => write!(f, "no rule matches {sig}"),
        }
    }
}

/// What planning needs besides the failure.
pub struct PlanInput<'a> {
    /// The tree to read (the project root, or a scratch copy of it).
    pub root: &'a Path,
    pub failure: &'a Failure,
    pub rules: &'a RuleSet,
    pub probe: Option<&'a ProbeFacts>,
    pub allow_tests: bool,
    /// What the project's interpreter says its standard library holds.
    pub stdlib: &'a Stdlib,
}

/// Ranked candidates for one failure: rules by confidence, then each transform's own order.
pub fn plan(input: &PlanInput) -> Result<Vec<Candidate>, PlanError> {
    let failure = input.failure;
    let loc = failure
        .location
        .as_ref()
        .ok_or_else(|| PlanError::no_location(failure))?;
    // Confinement first: a symlink leading out of the root is refused as such, whatever its
    // name looks like.
    // A test expecting an exception is located in the test; the code to repair is what it calls.
    if let Some(planned) = crate::plan_raises::plan(input) {
        return planned;
    }
    let path = confined_path(input.root, &loc.file)?;
    let rel_parts: Vec<&str> = loc.file.split('/').collect();
    if is_test_file(&rel_parts) && !input.allow_tests {
        // The test is only the last frame left when the code it called lies behind a symlink
        // that leads out of the root: say that, not "a test file".
        if let Some(out) = escaped_through_symlink(input.root, failure, loc.frame_index) {
            return Err(PlanError::Confined(format!(
                "{out} resolves outside the project root; selfdebug never writes there"
            )));
        }
        return Err(PlanError::TestFile(loc.file.clone()));
    }
    let source = SourceFile::read(&path).map_err(|e| PlanError::Unreadable(e.to_string()))?;
    let module = match syntax::parse(&source) {
        Ok(m) => m,
        Err(e) => return plan_text(input, &path, &source, e.to_string()),
    };
    let line = loc.line as usize;
    let focus = loc.caret.and_then(|c| {
        let (start, end) = (c.line_focus_start?, c.line_focus_end?);
        module.span_to_range(line, start as usize..end as usize, ColumnUnit::Chars)
    });
    let located = match &focus {
        Some(f) => syntax::locate_span(&module, line, f.clone()),
        None => syntax::locate(&module, line),
    }
    .ok_or_else(|| PlanError::NotLocated(loc.file.clone(), loc.line))?;
    let expected = expected_from_test(failure);
    let matches = input.rules.matching(&failure.exc_type, &failure.msg);
    if matches.is_empty() {
        let first = failure.msg.lines().next().unwrap_or("");
        return Err(PlanError::NoRule(format!("{}: {first}", failure.exc_type)));
    }
    let mut out: Vec<Candidate> = Vec::new();
    for m in matches {
        let params = string_params(m.rule);
        let ctx = Context {
            source: &source,
            module: &module,
            located: &located,
            focus: focus.clone(),
            captures: &m.captures,
            params: &params,
            probe: input.probe,
            expected: expected.as_ref().map(|(lit, _)| lit.as_str()),
            expected_line: expected.as_ref().map(|(_, line)| line.as_str()),
            returns_to_test: returns_to_test(failure),
            stdlib: input.stdlib,
            rule: &m.rule.id,
            confidence: m.rule.confidence,
        };
        for fix in transform::candidates(&m.rule.transform, &ctx) {
            // A fix that does not apply or does not re-parse is dropped: never written.
            let Ok(patched) = fix.apply_to(&source) else {
                continue;
            };
            if out.iter().any(|c| c.patched == patched) {
                continue;
            }
            let diff = edit::unified_diff_bytes(&loc.file, source.bytes(), &patched);
            out.push(Candidate {
                file: loc.file.clone(),
                diff: diff.text,
                diff_encoding: diff.encoding,
                fix,
                category: m.rule.category,
                safe: m.rule.safe,
                source: Source::Rule,
                path: path.clone(),
                original: source.bytes().to_vec(),
                patched,
            });
        }
    }
    Ok(out)
}

/// A file that does not parse: only text-level transforms can help, and their results must
/// parse. Without any, the file is reported as not parsing and never written (the original
/// design's PATCH-REJECTED: no patch was even made).
fn plan_text(
    input: &PlanInput,
    path: &Path,
    source: &SourceFile,
    parse_error: String,
) -> Result<Vec<Candidate>, PlanError> {
    let failure = input.failure;
    let Some(loc) = failure.location.as_ref() else {
        return Err(PlanError::no_location(failure));
    };
    let column = loc.caret.and_then(|c| c.line_start).map(|c| c as usize);
    let mut out: Vec<Candidate> = Vec::new();
    for m in input.rules.matching(&failure.exc_type, &failure.msg) {
        let params = string_params(m.rule);
        let ctx = transform::TextContext {
            source,
            line: loc.line as usize,
            column,
            msg: &failure.msg,
            captures: &m.captures,
            params: &params,
            rule: &m.rule.id,
            confidence: m.rule.confidence,
        };
        for fix in transform::text_candidates(&m.rule.transform, &ctx) {
            push_candidate(&mut out, &loc.file, path, source, fix, m.rule);
        }
    }
    if out.is_empty() {
        return Err(PlanError::Unparseable(loc.file.clone(), parse_error));
    }
    Ok(out)
}

fn string_params(rule: &crate::rules::Rule) -> BTreeMap<String, String> {
    rule.params
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

/// Keeps a fix that applies, re-parses and differs from the candidates already kept.
pub(crate) fn push_candidate(
    out: &mut Vec<Candidate>,
    file: &str,
    path: &Path,
    source: &SourceFile,
    fix: Fix,
    rule: &crate::rules::Rule,
) {
    // A fix that does not apply or does not re-parse is dropped: never written.
    let Ok(patched) = fix.apply_to(source) else {
        return;
    };
    if out.iter().any(|c| c.patched == patched) {
        return;
    }
    let diff = edit::unified_diff_bytes(file, source.bytes(), &patched);
    out.push(Candidate {
        file: file.to_string(),
        diff: diff.text,
        diff_encoding: diff.encoding,
        fix,
        category: rule.category,
        safe: rule.safe,
        source: Source::Rule,
        path: path.to_path_buf(),
        original: source.bytes().to_vec(),
        patched,
    });
}

/// `root/rel`, refused when it is not a regular file inside the root (a symlink may point
/// anywhere inside; never out of it).
pub fn confined_path(root: &Path, rel: &str) -> Result<PathBuf, PlanError> {
    let path = root.join(rel);
    let real = path
        .canonicalize()
        .map_err(|e| PlanError::Confined(format!("{rel}: {e}")))?;
    let real_root = root
        .canonicalize()
        .map_err(|e| PlanError::Confined(format!("{}: {e}", root.display())))?;
    if !real.starts_with(&real_root) || !real.is_file() {
        return Err(PlanError::Confined(format!(
            "{rel} resolves outside the project root; selfdebug never writes there"
        )));
    }
    let inside: Vec<String> = real
        .strip_prefix(&real_root)
        .map(|r| {
            r.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut dir = real_root.clone();
    for part in &inside[..inside.len().saturating_sub(1)] {
        dir.push(part);
        if matches!(part.as_str(), "site-packages" | "dist-packages")
            || crate::scratch::is_virtualenv(&dir)
        {
            return Err(PlanError::Confined(format!(
                "{rel} is inside a virtualenv or site-packages; selfdebug never writes there"
            )));
        }
    }
    Ok(path)
}

/// A frame deeper than `after` that was passed over as outside the root although its path,
/// as printed, lies under the root: a symlink out of the project. Its path relative to the root.
fn escaped_through_symlink(root: &Path, failure: &Failure, after: usize) -> Option<String> {
    let real_root = root.canonicalize().ok()?;
    failure
        .rejected_frames
        .iter()
        .filter(|r| r.frame_index > after)
        .filter(|r| r.reason == crate::traceback::RejectReason::OutsideRoot)
        .find_map(|r| {
            let printed = Path::new(&r.file);
            let lexical = if printed.is_absolute() {
                printed.to_path_buf()
            } else {
                root.join(printed)
            };
            let rel = lexical
                .strip_prefix(root)
                .or_else(|_| lexical.strip_prefix(&real_root))
                .ok()?;
            let real = lexical.canonicalize().ok()?;
            (!real.starts_with(&real_root)).then(|| rel.to_string_lossy().replace('\\', "/"))
        })
}

/// Every frame between the test's assertion and the failing one (exclusive) is a
/// `return f(...)`: the failing function's result is the asserted value.
fn returns_to_test(failure: &Failure) -> bool {
    let frames: Vec<&crate::traceback::Frame> = failure
        .frames
        .iter()
        .filter(|f| f.resolved.is_some())
        .collect();
    let Some(test_at) = frames.iter().position(|f| {
        f.code
            .as_deref()
            .is_some_and(|c| transform::expected_literal(c).is_some())
    }) else {
        return false;
    };
    let inner = &frames[test_at + 1..];
    !inner.is_empty()
        && inner[..inner.len() - 1]
            .iter()
            .all(|f| f.code.as_deref().is_some_and(|c| c.starts_with("return ")))
}

/// The literal the failing test asserts against and the assertion line, from the outermost
/// frame (in the project) whose source line is such an assertion.
fn expected_from_test(failure: &Failure) -> Option<(String, String)> {
    failure
        .frames
        .iter()
        .filter(|f| f.resolved.is_some())
        .filter_map(|f| f.code.as_deref())
        .find_map(|code| transform::expected_literal(code).map(|lit| (lit, code.to_string())))
}
