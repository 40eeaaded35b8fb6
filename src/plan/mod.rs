//! From a located failure to ranked candidate patches, without running anything: read the file
//! exactly, parse it, find the failing statement, match the rules, run their transforms, and
//! keep the fixes that apply cleanly and re-parse.

mod candidate;
pub mod exports;
pub mod literals;
pub mod raises;
pub mod shape;

pub use candidate::{confined_path, Candidate, Confinement, Coverage, PlanError, PlanInput};

use std::path::Path;

use crate::edit;
use crate::source::SourceFile;
use crate::status::Source;
use crate::syntax::{self, ColumnUnit};
use crate::traceback::{locate::is_test_file, Failure};
use crate::transform::{self, Context};
use candidate::push_candidate;

/// Ranked candidates for one failure: rules by confidence, then each transform's own order.
pub fn plan(input: &PlanInput) -> Result<Vec<Candidate>, PlanError> {
    plan_explained(input, &mut Vec::new())
}

/// [`plan`], and for each matching rule that proposed no candidate, which transform declined
/// and why, in `declined` (`rule `x` (transform `t`): why`): what the report names when the
/// failure goes on to the search.
pub fn plan_explained(
    input: &PlanInput,
    declined: &mut Vec<String>,
) -> Result<Vec<Candidate>, PlanError> {
    let failure = input.failure;
    let loc = failure
        .location
        .as_ref()
        .ok_or_else(|| PlanError::no_location(failure))?;
    // Confinement first: a symlink leading out of the root is refused as such, whatever its
    // name looks like.
    // A test expecting an exception is located in the test; the code to repair is what it calls.
    if let Some(planned) = raises::plan(input) {
        return planned;
    }
    // A test importing a name its package does not export: the package's `__init__.py`.
    if let Some(exported) = exports::plan(input) {
        return Ok(exported);
    }
    let path = confined_path(input.root, &loc.file)?;
    let rel_parts: Vec<&str> = loc.file.split('/').collect();
    if is_test_file(&rel_parts) && !input.allow_tests {
        // The test is only the last frame left when the code it called lies behind a symlink
        // that leads out of the root: say that, not "a test file".
        if let Some(out) = escaped_through_symlink(input.root, failure, loc.frame_index) {
            return Err(PlanError::Confined(Confinement::Outside(out)));
        }
        return Err(PlanError::TestFile(loc.file.clone()));
    }
    let source = SourceFile::read(&path).map_err(PlanError::Unreadable)?;
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
    // The test expects another exception than the crash: the lost check first.
    let mut out: Vec<Candidate> = raises::plan_crash(input);
    // The expected-raise guards go first and are not classified: their `raise` is what the
    // test asks for.
    let raised = out.len();
    let matches = input.rules.matching(&failure.exc_type, &failure.msg);
    if matches.is_empty() && out.is_empty() {
        let first = crate::traceback::first_line(&failure.msg);
        return Err(PlanError::NoRule(format!("{}: {first}", failure.exc_type)));
    }
    for m in matches {
        let ctx = Context {
            source: &source,
            module: &module,
            located: &located,
            focus: focus.clone(),
            captures: &m.captures,
            probe: input.probe,
            expected: expected.as_ref().map(|(lit, _)| lit.as_str()),
            expected_line: expected.as_ref().map(|(_, line)| line.as_str()),
            returns_to_test: returns_to_test(failure),
            stdlib: input.stdlib,
            rule: &m.rule.id,
            confidence: m.rule.confidence,
        };
        let fixes = transform::candidates(&m.rule.transform, &ctx);
        let (proposed, before) = (fixes.len(), out.len());
        let mut repeats = 0usize;
        for fix in fixes {
            // A fix that does not apply or does not re-parse is dropped: never written.
            let Ok(patched) = fix.apply_to(&source) else {
                continue;
            };
            if out.iter().any(|c| c.patched == patched) {
                repeats += 1;
                continue;
            }
            let diff = edit::unified_diff_bytes(&loc.file, source.bytes(), &patched);
            out.push(Candidate {
                file: loc.file.clone(),
                diff: diff.text,
                diff_encoding: diff.encoding,
                silencing: None,
                coverage: None,
                fix,
                category: m.rule.category,
                safe: m.rule.safe,
                source: Source::Rule,
                path: path.clone(),
                original: source.bytes().to_vec(),
                patched,
            });
        }
        if out.len() == before {
            let why = if proposed == 0 {
                format!("proposed no edit at {}:{line}", loc.file)
            } else if repeats == proposed {
                "its edits repeat another rule's".to_string()
            } else {
                format!(
                    "its {proposed} edit{} did not apply or did not parse",
                    if proposed == 1 { "" } else { "s" }
                )
            };
            declined.push(format!(
                "rule `{}` (transform `{}`): {why}",
                m.rule.id,
                m.rule.transform.name()
            ));
        }
    }
    silencing_last(&mut out[raised..]);
    Ok(out)
}

/// Marks each candidate's [`Candidate::silencing`] and moves those that silence after the
/// others, each group in its order (a stable sort): a guard that makes the function do
/// nothing, an exit or a deleted statement is never the first answer (docs/proof.md).
pub fn silencing_last(candidates: &mut [Candidate]) {
    for c in candidates.iter_mut() {
        c.mark_silencing();
    }
    candidates.sort_by_key(|c| c.silencing.is_some());
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
    let mut column = loc.caret.and_then(|c| c.line_start).map(|c| c as usize);
    let mut line = loc.line as usize;
    let mut out: Vec<Candidate> = Vec::new();
    // Python 3.9 and older say `invalid syntax` where 3.10+ name the problem: the rules match
    // the name the source shows (an unclosed bracket: on the bracket's line, as 3.10+ say).
    let specific = match failure.exc_type.as_str() {
        "SyntaxError" => {
            transform::syntax_fix::specific_message(source, line, column, &failure.msg)
        }
        _ => None,
    };
    if let Some(s) = &specific {
        (line, column) = (s.line, s.column);
    }
    let msg = specific
        .as_ref()
        .map_or(failure.msg.as_str(), |s| s.msg.as_str());
    for m in input.rules.matching(&failure.exc_type, msg) {
        let ctx = transform::TextContext {
            source,
            line,
            column,
            msg,
            captures: &m.captures,
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
