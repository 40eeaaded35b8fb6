//! pytest's report of a `conftest.py` that raised while being imported (exit status 4):
//!
//! ```text
//! ImportError while loading conftest '/p/conftest.py'.
//! conftest.py:1: in <module>
//!     import pkg.mod
//! pkg/mod.py:2: in g
//!     return d["x"]
//! E   KeyError: 'x'
//! ```
//!
//! No session header, no section: pytest stops before collecting. The body is in `short` style;
//! the failure is in project code (the conftest or a module it imports), so it is a failure to
//! work on like any other, not a usage error.

use std::path::Path;

use super::model::{Failure, When};
use super::{finish, lines, locate, pytest_body, pytest_session::SessionFailure};

const HEADER: &str = "ImportError while loading conftest '";

/// The conftest failure in `bytes`, if pytest printed one.
pub fn parse(bytes: &[u8], root: &Path) -> Option<Failure> {
    let text = lines::decode(bytes);
    let text = lines::clean_text(&text);
    let all = lines::split_lines(&text);
    let start = all.iter().position(|l| l.starts_with(HEADER))?;
    let header = all[start];
    let conftest = header[HEADER.len()..]
        .strip_suffix("'.")
        .unwrap_or(&header[HEADER.len()..]);
    let body: Vec<&str> = all[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with(HEADER))
        .copied()
        .collect();
    let (record, style) = pytest_body::parse_body(&body)?;
    let mut resolver = locate::Resolver::new(root.to_path_buf(), None);
    Some(finish(
        SessionFailure {
            test: None,
            when: When::Collect,
            outcome: super::Outcome::Error,
            headline: Some(format!("conftest {conftest}")),
            style,
            record,
            summary: Some(header.to_string()),
        },
        &mut resolver,
    ))
}
