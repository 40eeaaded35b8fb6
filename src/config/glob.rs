//! `extend-exclude` patterns, with Ruff's meaning: a pattern without `/` names a file or
//! directory anywhere in the tree (`_generated.py`, `vendor`, `*_pb2.py`); one with `/` is a
//! path from the project root (`src/legacy`, `src/gen/*.py`, `**/migrations`). A pattern that
//! matches a directory excludes everything under it. `*` and `?` stay within one path
//! component; `**` spans any number of them.

/// Why a text is no `extend-exclude` pattern (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("'{0}' is not a path pattern")]
    Empty(String),
    #[error("'{0}' is absolute; patterns are relative to the project root")]
    Absolute(String),
    #[error("'{0}' must stay under the project root")]
    OutsideRoot(String),
    #[error("'{0}': only `*`, `?` and `**` are supported in patterns")]
    Unsupported(String),
}

/// One compiled pattern (its components; a leading `./` and a trailing `/` are dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub text: String,
    parts: Vec<String>,
    anchored: bool,
}

impl Pattern {
    /// Refuses what cannot be a path under the root: empty, absolute, or with `..`.
    pub fn new(text: &str) -> Result<Pattern, PatternError> {
        let trimmed = text.trim_start_matches("./").trim_end_matches('/');
        if trimmed.is_empty() {
            return Err(PatternError::Empty(text.to_string()));
        }
        if trimmed.starts_with('/') {
            return Err(PatternError::Absolute(text.to_string()));
        }
        let parts: Vec<String> = trimmed.split('/').map(str::to_string).collect();
        if parts.iter().any(|p| p == ".." || p.is_empty()) {
            return Err(PatternError::OutsideRoot(text.to_string()));
        }
        if parts.iter().any(|p| p.contains('[') || p.contains('{')) {
            return Err(PatternError::Unsupported(text.to_string()));
        }
        Ok(Pattern {
            text: text.to_string(),
            anchored: parts.len() > 1,
            parts,
        })
    }

    /// Whether `rel` (relative to the root, `/`-separated) is excluded by this pattern.
    pub fn matches(&self, rel: &str) -> bool {
        let path: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        if !self.anchored {
            // A file or directory name anywhere: any component (a directory excludes below).
            return path.iter().any(|c| component_matches(&self.parts[0], c));
        }
        // The pattern must match a leading run of components (the rest lies below a match).
        (1..=path.len()).any(|n| parts_match(&self.parts, &path[..n]))
    }
}

fn parts_match(pat: &[String], path: &[&str]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| parts_match(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((c, more)) => component_matches(first, c) && parts_match(rest, more),
            None => false,
        },
    }
}

/// `*` (any run of characters) and `?` (one character) within one path component.
fn component_matches(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with one backtrack point: linear in practice.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pat: &str, path: &str) -> bool {
        Pattern::new(pat).unwrap().matches(path)
    }

    #[test]
    fn names_anywhere_and_paths_from_the_root() {
        assert!(m("vendor", "src/vendor/lib.py"));
        assert!(m("*_pb2.py", "api/user_pb2.py"));
        assert!(!m("*_pb2.py", "api/user_pb2.pyc"));
        assert!(m("src/legacy", "src/legacy/old.py"));
        assert!(m("src/legacy/", "src/legacy/a/b.py"));
        assert!(!m("src/legacy", "lib/src/legacy/old.py"));
        assert!(m("src/gen/*.py", "src/gen/a.py"));
        assert!(!m("src/gen/*.py", "src/gen/sub/a.py"));
        assert!(m("src/**/gen_?.py", "src/a/b/gen_1.py"));
        assert!(m("src/**/gen_?.py", "src/gen_1.py"));
        assert!(m("**/migrations", "app/db/migrations/0001.py"));
        assert!(m("./words.py", "words.py"));
        assert!(!m("words.py", "words.pyx"));
    }

    #[test]
    fn refuses_patterns_outside_the_root() {
        assert!(Pattern::new("").is_err());
        assert!(Pattern::new("/etc").is_err());
        assert!(Pattern::new("../x").is_err());
        assert!(Pattern::new("a//b").is_err());
        assert!(Pattern::new("a/[ab].py").is_err());
    }
}
