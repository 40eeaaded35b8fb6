//! What every planner shares: the candidate patch it proposes, why it may propose none, what it
//! is given, and the checks every patch passes (the file is inside the root; the fix applies,
//! re-parses and is new). The planners ([`super::raises`], the rule planner in [`super`])
//! import this module and nothing of each other.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::edit::{self, Fix};
use crate::rules::{Category, RuleSet};
use crate::source::{SourceError, SourceFile};
use crate::status::{DiffEncoding, Silencing, Source};
use crate::traceback::Failure;
use crate::transform::stdlib::Stdlib;
use crate::transform::ProbeFacts;

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
    /// How it silences the failure instead of repairing it, when it does
    /// ([`super::shape`]; set by [`Candidate::mark_silencing`]): ranked after the other
    /// candidates of its source, and reported on its attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub silencing: Option<Silencing>,
    /// What tests run a search candidate's edited line (set when the session titles it; `None`
    /// for a rule's or the model's candidate): what its patch's review warns about.
    #[serde(skip)]
    pub coverage: Option<Coverage>,
    #[serde(skip)]
    pub path: PathBuf,
    #[serde(skip)]
    pub original: Vec<u8>,
    #[serde(skip)]
    pub patched: Vec<u8>,
}

/// What tests run a search candidate's edited line (its title says it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// A hang: searched without a coverage run.
    NotMeasured,
    /// This many tests run it.
    Tests(usize),
    /// A command-mode run: no test covers it, the command's output decided.
    CommandOnly,
}

impl Candidate {
    /// Reads [`Candidate::silencing`] from the AST before and after (see [`super::shape`]).
    pub fn mark_silencing(&mut self) {
        if !super::shape::may_change_shape(&self.fix.edits) {
            return;
        }
        let text = |b: &[u8]| {
            SourceFile::from_bytes(&self.path, b.to_vec())
                .ok()
                .map(|s| s.text().to_string())
        };
        if let (Some(before), Some(after)) = (text(&self.original), text(&self.patched)) {
            self.silencing = super::shape::shape(&before, &after, &self.fix.edits).silencing;
        }
    }
}

/// Why a file may not be written (`path` as the log names it, relative to the root).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Confinement {
    /// It (or the root) cannot be resolved: the io error's kind and text.
    #[error("{path}: {text}")]
    Unresolved {
        path: String,
        kind: std::io::ErrorKind,
        text: String,
    },
    /// Not a regular file inside the root (a symlink leads out of it).
    #[error("{0} resolves outside the project root; selfdebug never writes there")]
    Outside(String),
    #[error("{0} is inside a virtualenv or site-packages; selfdebug never writes there")]
    Virtualenv(String),
}

/// Why no candidate could even be proposed. Each says what a user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The traceback has no frame in the project's own code.
    #[error("no frame of the traceback is in the project's own code")]
    NoLocation,
    /// The log is older than the code: the printed source of the frame to repair (file, line
    /// as printed) is no longer in the file near that line.
    #[error(
        "the log does not match the code: the source line it prints at {0}:{1} is no longer \
         there (the log is older than the code); run pytest again for a fresh log"
    )]
    SourceChanged(String, u32),
    /// The location is a test file and tests may not be edited.
    #[error("{0} is a test file; pass --allow-tests to let selfdebug edit it")]
    TestFile(String),
    /// The file is outside the root, behind a symlink leading out of it, or unreadable.
    #[error(transparent)]
    Confined(Confinement),
    /// The file does not parse as Python 3 and no text-level rule made it parse (file, the
    /// parser's message): reported, never written.
    #[error(
        "{0} does not parse as Python 3 ({1}) and no rule could repair it; it was not touched"
    )]
    Unparseable(String, String),
    /// The source could not be read.
    #[error(transparent)]
    Unreadable(SourceError),
    /// No statement at the line (the file changed since the log was written?).
    #[error("{0}:{1}: no statement there (has the file changed since the log was written?)")]
    NotLocated(String, u32),
    /// No rule knows this failure.
    #[error("no rule matches {0}")]
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
        silencing: None,
        coverage: None,
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
    let unresolved = |path: String| {
        move |e: std::io::Error| {
            PlanError::Confined(Confinement::Unresolved {
                path,
                kind: e.kind(),
                text: e.to_string(),
            })
        }
    };
    let path = root.join(rel);
    let real = path.canonicalize().map_err(unresolved(rel.to_string()))?;
    let real_root = root
        .canonicalize()
        .map_err(unresolved(root.display().to_string()))?;
    if !real.starts_with(&real_root) || !real.is_file() {
        return Err(PlanError::Confined(Confinement::Outside(rel.to_string())));
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
            return Err(PlanError::Confined(Confinement::Virtualenv(
                rel.to_string(),
            )));
        }
    }
    Ok(path)
}
