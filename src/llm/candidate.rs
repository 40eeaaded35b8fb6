//! The model's answer → a [`Candidate`] like the rules make, or the reason it is refused before
//! any run: no block, a malformed block, a file outside the root, a test file (unless
//! `--allow-tests`), SEARCH lines not in the file, edits that overlap, a result that does not
//! parse or cannot be written in the file's encoding.

use std::path::Path;

use super::blocks::MatchError;
use super::blocks::{self, Block};
use crate::edit::{self, Confidence, Fix, FixError};
use crate::plan::{self, Candidate, PlanError};
use crate::rules::Category;
use crate::source::{SourceError, SourceFile};
use crate::status::Source;
use crate::traceback::locate::is_test_file;

/// The `rule` of every model candidate (JSON `source: "llm"`).
pub const RULE: &str = "llm";

/// Why an answer is refused before any run; the text is the feedback the model reads next.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("the answer is malformed: {0}")]
    Malformed(String),
    #[error("the answer has no SEARCH/REPLACE block")]
    NoBlock,
    #[error("the answer edits more than one file; one file per candidate is supported")]
    SeveralFiles,
    #[error("the answer edits {0}, outside the project root; selfdebug never writes there")]
    OutsideRoot(String),
    #[error("the answer edits {0}")]
    Unconfined(PlanError),
    #[error(
        "the answer edits the test file {0}; the tests are the specification \
         (--allow-tests lets it)"
    )]
    TestFile(String),
    #[error("{0}")]
    Unreadable(SourceError),
    #[error("block {block} of the answer does not apply to {file}: {error}")]
    NoMatch {
        block: usize,
        file: String,
        error: MatchError,
    },
    #[error("the answer's edit of {file} is refused: {error}")]
    Refused { file: String, error: FixError },
    #[error("the answer changes nothing in {0}")]
    NoChange(String),
}

pub fn from_answer(
    root: &Path,
    answer: &str,
    model: &str,
    category: Category,
    allow_tests: bool,
) -> Result<Candidate, AnswerError> {
    let parsed = blocks::parse(answer);
    if let Some(e) = parsed.errors.first() {
        return Err(AnswerError::Malformed(e.clone()));
    }
    if parsed.blocks.is_empty() {
        return Err(AnswerError::NoBlock);
    }
    let file = normalized(&parsed.blocks[0].path);
    if parsed.blocks.iter().any(|b| normalized(&b.path) != file) {
        return Err(AnswerError::SeveralFiles);
    }
    if file.split('/').any(|p| p == "..") || Path::new(&file).is_absolute() {
        return Err(AnswerError::OutsideRoot(file));
    }
    let path = plan::confined_path(root, &file).map_err(AnswerError::Unconfined)?;
    let parts: Vec<&str> = file.split('/').collect();
    if is_test_file(&parts) && !allow_tests {
        return Err(AnswerError::TestFile(file));
    }
    let source = SourceFile::read(&path).map_err(AnswerError::Unreadable)?;
    let edits = parsed
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b): (usize, &Block)| {
            blocks::to_edit(source.text(), b).map_err(|error| AnswerError::NoMatch {
                block: i + 1,
                file: file.clone(),
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let n = edits.len();
    let fix = Fix::new(
        format!(
            "{n} edit{} proposed by {model}",
            if n == 1 { "" } else { "s" }
        ),
        RULE,
        Confidence::Low,
        edits,
    );
    let patched = fix
        .apply_to(&source)
        .map_err(|error| AnswerError::Refused {
            file: file.clone(),
            error,
        })?;
    if patched == source.bytes() {
        return Err(AnswerError::NoChange(file));
    }
    let diff = edit::unified_diff_bytes(&file, source.bytes(), &patched);
    let mut c = Candidate {
        file,
        diff: diff.text,
        diff_encoding: diff.encoding,
        silencing: None,
        coverage: None,
        fix,
        category,
        safe: false,
        source: Source::Llm,
        path,
        original: source.bytes().to_vec(),
        patched,
    };
    c.mark_silencing();
    Ok(c)
}

/// `./a/b.py`, `a\b.py` → `a/b.py`.
fn normalized(path: &str) -> String {
    let p = path.replace('\\', "/");
    p.strip_prefix("./").unwrap_or(&p).to_string()
}
