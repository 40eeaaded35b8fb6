//! The model's answer → a [`Candidate`] like the rules make, or the reason it is refused before
//! any run: no block, a malformed block, a file outside the root, a test file (unless
//! `--allow-tests`), SEARCH lines not in the file, edits that overlap, a result that does not
//! parse or cannot be written in the file's encoding.

use std::path::Path;

use super::blocks::{self, Block};
use crate::edit::{self, Confidence, Fix};
use crate::plan::{self, Candidate};
use crate::rules::Category;
use crate::source::SourceFile;
use crate::status::Source;
use crate::traceback::locate::is_test_file;

/// The `rule` of every model candidate (JSON `source: "llm"`).
pub const RULE: &str = "llm";

pub fn from_answer(
    root: &Path,
    answer: &str,
    model: &str,
    category: Category,
    allow_tests: bool,
) -> Result<Candidate, String> {
    let parsed = blocks::parse(answer);
    if let Some(e) = parsed.errors.first() {
        return Err(format!("the answer is malformed: {e}"));
    }
    if parsed.blocks.is_empty() {
        return Err("the answer has no SEARCH/REPLACE block".into());
    }
    let file = normalized(&parsed.blocks[0].path);
    if parsed.blocks.iter().any(|b| normalized(&b.path) != file) {
        return Err(
            "the answer edits more than one file; one file per candidate is supported".into(),
        );
    }
    if file.split('/').any(|p| p == "..") || Path::new(&file).is_absolute() {
        return Err(format!(
            "the answer edits {file}, outside the project root; selfdebug never writes there"
        ));
    }
    let path = plan::confined_path(root, &file).map_err(|e| format!("the answer edits {e}"))?;
    let parts: Vec<&str> = file.split('/').collect();
    if is_test_file(&parts) && !allow_tests {
        return Err(format!(
            "the answer edits the test file {file}; the tests are the specification \
             (--allow-tests lets it)"
        ));
    }
    let source = SourceFile::read(&path).map_err(|e| e.to_string())?;
    let edits = parsed
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b): (usize, &Block)| {
            blocks::to_edit(source.text(), b).map_err(|e| {
                format!(
                    "block {} of the answer does not apply to {file}: {e}",
                    i + 1
                )
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
        .map_err(|e| format!("the answer's edit of {file} is refused: {e}"))?;
    if patched == source.bytes() {
        return Err(format!("the answer changes nothing in {file}"));
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
