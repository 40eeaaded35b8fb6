//! From printed frames to files under the root, and from frames to the place the bug most
//! likely is: the deepest frame in the project's own code.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::model::{Caret, ExceptionRecord, Frame, Location, RejectReason, RejectedFrame, Stale};
use super::FastHash;

/// How far from the printed line number the printed source text is looked for, either way,
/// when a log is older than the code.
pub const REANCHOR_WINDOW: usize = 200;

/// Where the printed source line of a frame is in the file as it is now.
enum Anchor {
    /// At the printed line, or nothing to compare (no code printed, file unreadable).
    AsPrinted,
    /// Nearby: the log is stale.
    Moved(u32),
    /// Nowhere near: the code changed.
    Gone,
}

/// What a printed path turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileClass {
    Project,
    Test,
    Rejected(RejectReason),
}

struct Resolved {
    /// Relative to the root (forward slashes) when found there.
    rel: Option<String>,
    abs: Option<PathBuf>,
    class: FileClass,
}

/// Resolves printed paths against a root, caching file reads.
pub struct Resolver {
    root: PathBuf,
    pytest_rootdir: Option<String>,
    paths: HashMap<String, Resolved, FastHash>,
    sources: HashMap<PathBuf, Option<Vec<String>>>,
}

impl Resolver {
    /// `root` should be absolute (the caller canonicalizes it).
    pub fn new(root: PathBuf, pytest_rootdir: Option<String>) -> Self {
        Resolver {
            root,
            pytest_rootdir,
            paths: HashMap::default(),
            sources: HashMap::new(),
        }
    }

    /// Fills in `file`, `resolved` and the caret's line columns of every frame of `record` (and
    /// its chain and members), and chooses each one's location. Returns the frames of `record`
    /// itself that a filter rejected.
    pub fn resolve_record(&mut self, record: &mut ExceptionRecord) -> Vec<RejectedFrame> {
        for frame in &mut record.frames {
            self.resolve_frame(frame);
        }
        for link in &mut record.chain {
            self.resolve_record(&mut link.exception);
        }
        for sub in &mut record.sub_exceptions {
            self.resolve_record(sub);
        }
        let (location, rejected) = self.choose(&record.frames);
        record.location = location;
        rejected
    }

    fn resolve_frame(&mut self, frame: &mut Frame) {
        let r = self.resolve_path(&frame.printed_file);
        if let Some(rel) = &r.rel {
            frame.file = rel.clone();
        }
        frame.resolved = r.abs.as_ref().map(|p| p.to_string_lossy().into_owned());
        let abs = r.abs.clone();
        if let (Some(abs), Some(code), Some(caret)) = (abs, &frame.code, &mut frame.caret) {
            let real = self.source_line(&abs, frame.line);
            // pytest and CPython print the line stripped; map onto the real one only when it is
            // still the same line (the file may have changed since the log was written).
            if let Some(real) = real.filter(|l| l.trim() == code.trim()) {
                map_caret(caret, &real);
            }
        }
    }

    fn source_lines(&mut self, path: &Path) -> Option<&Vec<String>> {
        self.sources
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let bytes = std::fs::read(path).ok()?;
                Some(
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .map(str::to_string)
                        .collect(),
                )
            })
            .as_ref()
    }

    fn source_line(&mut self, path: &Path, line: u32) -> Option<String> {
        self.source_lines(path)?
            .get((line as usize).checked_sub(1)?)
            .cloned()
    }

    /// Finds the frame's printed source text in the file: at the printed line, else the
    /// nearest line within [`REANCHOR_WINDOW`] that reads the same once stripped (lines
    /// below first at equal distance: code is more often inserted above a bug than removed).
    fn anchor(&mut self, path: &Path, frame: &Frame) -> Anchor {
        let Some(code) = frame.code.as_deref().map(str::trim) else {
            return Anchor::AsPrinted;
        };
        let Some(lines) = self.source_lines(path) else {
            return Anchor::AsPrinted;
        };
        let at = frame.line as usize;
        let same = |n: usize| n >= 1 && lines.get(n - 1).is_some_and(|l| l.trim() == code);
        if same(at) {
            return Anchor::AsPrinted;
        }
        for d in 1..=REANCHOR_WINDOW {
            for n in [at.checked_add(d), at.checked_sub(d)].into_iter().flatten() {
                if same(n) {
                    return u32::try_from(n).map_or(Anchor::Gone, Anchor::Moved);
                }
            }
        }
        Anchor::Gone
    }

    /// The location among `frames` (deepest project frame, else deepest test frame) and the
    /// frames a filter rejected.
    pub fn choose(&mut self, frames: &[Frame]) -> (Option<Location>, Vec<RejectedFrame>) {
        let mut rejected = Vec::new();
        let mut project: Option<usize> = None;
        let mut test: Option<usize> = None;
        for (i, frame) in frames.iter().enumerate().rev() {
            let class = self.resolve_path(&frame.printed_file).class;
            match class {
                FileClass::Project => {
                    if project.is_none() {
                        project = Some(i);
                    }
                }
                FileClass::Test => {
                    if test.is_none() {
                        test = Some(i);
                    }
                }
                FileClass::Rejected(reason) => rejected.push(RejectedFrame {
                    frame_index: i,
                    file: frame.file.clone(),
                    line: frame.line,
                    reason,
                }),
            }
        }
        let chosen = project.or(test);
        if let Some(p) = project {
            // Test frames deeper than the chosen project frame were passed over for it.
            for (i, frame) in frames.iter().enumerate().skip(p + 1) {
                if self.resolve_path(&frame.printed_file).class == FileClass::Test {
                    rejected.push(RejectedFrame {
                        frame_index: i,
                        file: frame.file.clone(),
                        line: frame.line,
                        reason: RejectReason::TestFile,
                    });
                }
            }
        }
        let location = chosen.and_then(|i| {
            let f = &frames[i];
            let r = self.resolve_path(&f.printed_file);
            let (file, abs) = (r.rel.clone()?, r.abs.clone()?);
            let (line, stale, caret) = match self.anchor(&abs, f) {
                Anchor::AsPrinted => (f.line, None, f.caret),
                Anchor::Moved(line) => {
                    let mut caret = f.caret;
                    if let (Some(c), Some(real)) = (caret.as_mut(), self.source_line(&abs, line)) {
                        map_caret(c, &real);
                    }
                    let stale = Stale {
                        printed_line: f.line,
                        line,
                        offset: i64::from(line) - i64::from(f.line),
                    };
                    (line, Some(stale), caret)
                }
                Anchor::Gone => {
                    rejected.push(RejectedFrame {
                        frame_index: i,
                        file: f.file.clone(),
                        line: f.line,
                        reason: RejectReason::SourceChanged,
                    });
                    return None;
                }
            };
            Some(Location {
                file,
                path: abs.to_string_lossy().into_owned(),
                line,
                func: f.func.clone(),
                code: f.code.clone(),
                caret,
                frame_index: i,
                stale,
            })
        });
        rejected.sort_by_key(|r| r.frame_index);
        (location, rejected)
    }

    /// Whether the printed path names a file of the project's own code (not tests).
    pub fn is_project_code(&mut self, printed: &str) -> bool {
        self.resolve_path(printed).class == FileClass::Project
    }

    fn resolve_path(&mut self, printed: &str) -> &Resolved {
        if !self.paths.contains_key(printed) {
            let r = self.resolve_uncached(printed);
            self.paths.insert(printed.to_string(), r);
        }
        &self.paths[printed]
    }

    fn resolve_uncached(&self, printed: &str) -> Resolved {
        let rejected = |reason| Resolved {
            rel: None,
            abs: None,
            class: FileClass::Rejected(reason),
        };
        if printed.starts_with('<') || printed.is_empty() {
            return rejected(RejectReason::NotAFile);
        }
        let norm = printed.replace('\\', "/");
        let parts: Vec<&str> = norm.split('/').filter(|p| !p.is_empty()).collect();
        if let Some(reason) = excluded_by_name(&parts) {
            return rejected(reason);
        }
        let is_abs = norm.starts_with('/') || is_drive(&norm);
        let root_str = self.root.to_string_lossy().replace('\\', "/");
        let mut candidates: Vec<String> = Vec::new();
        if !is_abs {
            candidates.push(parts.join("/"));
        } else if let Some(rest) = strip_dir(&norm, &root_str) {
            candidates.push(rest.to_string());
        } else if let Some(rest) = self
            .pytest_rootdir
            .as_deref()
            .and_then(|d| strip_dir(&norm, &d.replace('\\', "/")))
        {
            candidates.push(rest.to_string());
        }
        // A log from another machine (CI checkout, Windows): the longest tail that exists here.
        let start = usize::from(!is_abs);
        for k in start..parts.len() {
            candidates.push(parts[k..].join("/"));
        }
        for rel in candidates {
            if rel.is_empty() || rel.split('/').any(|p| p == "..") {
                continue;
            }
            let abs = self.root.join(&rel);
            if !abs.is_file() {
                continue;
            }
            // Never follow a symlink out of the root.
            let inside = match (abs.canonicalize(), self.root.canonicalize()) {
                (Ok(real), Ok(root)) => real.starts_with(root),
                _ => false,
            };
            if !inside {
                return rejected(RejectReason::OutsideRoot);
            }
            let rel_parts: Vec<&str> = rel.split('/').collect();
            if let Some(reason) = excluded_by_name(&rel_parts) {
                return rejected(reason);
            }
            if in_virtualenv(&self.root, &rel_parts) {
                return rejected(RejectReason::Virtualenv);
            }
            let class = if is_test_file(&rel_parts) {
                FileClass::Test
            } else {
                FileClass::Project
            };
            return Resolved {
                rel: Some(rel),
                abs: Some(abs),
                class,
            };
        }
        if !is_abs || strip_dir(&norm, &root_str).is_some() {
            rejected(RejectReason::Missing)
        } else {
            rejected(RejectReason::OutsideRoot)
        }
    }
}

/// Sets the caret's columns on the real source line `real` (printed code is de-indented).
fn map_caret(caret: &mut Caret, real: &str) {
    let indent = (real.chars().count() - real.trim_start().chars().count()) as u32;
    caret.line_start = Some(indent + caret.code_start);
    caret.line_end = Some(indent + caret.code_end);
    caret.line_focus_start = Some(indent + caret.focus_start);
    caret.line_focus_end = Some(indent + caret.focus_end);
}

fn is_drive(p: &str) -> bool {
    let b = p.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/'
}

/// `path` without the leading `dir/`, when it is under `dir`.
fn strip_dir<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    let rest = path.strip_prefix(dir)?;
    rest.strip_prefix('/')
}

/// Rejections that the path's own components decide.
fn excluded_by_name(parts: &[&str]) -> Option<RejectReason> {
    const RUNNER: [&str; 4] = ["_pytest", "pluggy", "pytest", "xdist"];
    let in_packages = parts
        .iter()
        .position(|p| *p == "site-packages" || *p == "dist-packages");
    if let Some(i) = in_packages {
        if parts.get(i + 1).is_some_and(|p| RUNNER.contains(p)) {
            return Some(RejectReason::TestRunner);
        }
        return Some(RejectReason::SitePackages);
    }
    if parts.iter().any(|p| {
        matches!(
            *p,
            ".venv" | "venv" | ".tox" | ".nox" | "virtualenvs" | ".virtualenvs"
        )
    }) {
        return Some(RejectReason::Virtualenv);
    }
    // The standard library: `lib/python3.11/`, `Lib/` of a Windows install, `lib64/python3.x`.
    for w in parts.windows(2) {
        let lib = matches!(w[0], "lib" | "lib64" | "Lib");
        let py = w[1].len() > 6
            && w[1].starts_with("python")
            && w[1][6..].chars().all(|c| c.is_ascii_digit() || c == '.');
        if lib && py {
            return Some(RejectReason::PythonInstall);
        }
    }
    // A Windows installation keeps the stdlib in `Lib\` (capitalized, unlike project dirs).
    if parts.contains(&"Lib") {
        return Some(RejectReason::PythonInstall);
    }
    None
}

/// A directory with `pyvenv.cfg` between the root and the file is a virtualenv.
fn in_virtualenv(root: &Path, rel_parts: &[&str]) -> bool {
    let mut dir = root.to_path_buf();
    for part in &rel_parts[..rel_parts.len().saturating_sub(1)] {
        dir.push(part);
        if dir.join("pyvenv.cfg").is_file() {
            return true;
        }
    }
    false
}

/// pytest's default discovery (`test_*.py`, `*_test.py`), `conftest.py`, and anything in a
/// `tests`/`test`/`testing` directory.
pub fn is_test_file(rel_parts: &[&str]) -> bool {
    let Some(name) = rel_parts.last() else {
        return false;
    };
    let dirs = &rel_parts[..rel_parts.len() - 1];
    (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || *name == "conftest.py"
        || dirs
            .iter()
            .any(|d| matches!(*d, "tests" | "test" | "testing"))
}

/// Normalizes a user-given root to an absolute path.
pub fn absolute_root(root: &Path) -> std::io::Result<PathBuf> {
    let abs = if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()?.join(root)
    };
    // Lexical clean-up keeps the user's spelling (symlinked checkouts stay as named).
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        fn p(s: &str) -> Vec<&str> {
            s.split('/').filter(|x| !x.is_empty()).collect()
        }
        assert_eq!(
            excluded_by_name(&p(
                "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py"
            )),
            Some(RejectReason::PythonInstall)
        );
        assert_eq!(
            excluded_by_name(&p("/x/lib/python3.11/site-packages/_pytest/runner.py")),
            Some(RejectReason::TestRunner)
        );
        assert_eq!(
            excluded_by_name(&p("/x/lib/python3.11/site-packages/requests/models.py")),
            Some(RejectReason::SitePackages)
        );
        assert_eq!(
            excluded_by_name(&p("C:/Python311/Lib/json/decoder.py")),
            Some(RejectReason::PythonInstall)
        );
        assert_eq!(
            excluded_by_name(&p("proj/.venv/x/y.py")),
            Some(RejectReason::Virtualenv)
        );
        assert_eq!(excluded_by_name(&p("src/pythonic/lib/x.py")), None);
        assert!(is_test_file(&p("tests/helpers.py")));
        assert!(is_test_file(&p("pkg/test_x.py")));
        assert!(!is_test_file(&p("pkg/testing_utils.py")));
    }
}
