//! Reading pytest output (every `--tb` style, summaries, xdist, colour) and bare CPython
//! tracebacks into [`Failure`]s with a chosen [`Location`].
//!
//! Stages: [`lines`] cleans bytes into lines (and strips CI line prefixes); [`pytest_session`]
//! finds sections and entries, else [`unittest`] reads unittest's blocks; [`pytest_body`] and
//! [`native`] read one traceback; [`locate`] resolves paths and picks the frame to repair
//! (re-anchoring a log older than the code).

pub mod conftest;
pub mod lines;
pub mod locate;
pub mod model;
pub mod native;
pub mod pytest_body;
pub mod pytest_session;
pub mod subtest;
pub mod text;
pub mod unittest;

use std::hash::Hasher;
use std::path::Path;

pub use model::*;
pub use text::first_line;

/// FNV-1a for the parser's maps (paths, test names), which are hit for every frame and every
/// failure: SipHash's DoS resistance buys nothing for keys read from the user's own log.
#[derive(Default)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub type FastHash = std::hash::BuildHasherDefault<Fnv>;

/// Why a log could not be read at all (exit code 2 territory).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Neither pytest output nor a Python traceback.
    #[error("input is neither pytest output nor a Python traceback")]
    NotALog,
}

/// Parses a log. `root` must be absolute (see [`locate::absolute_root`]); frames are resolved
/// against it. An `Ok` with no failures means a pytest log in which nothing failed.
pub fn parse(bytes: &[u8], root: &Path) -> Result<ParsedLog, ParseError> {
    let text = lines::decode(bytes);
    let text = lines::clean_text(&text);
    let mut lines = lines::split_lines(&text);
    lines::strip_ci_prefixes(&mut lines);
    let session = pytest_session::parse(&lines);
    let (kind, rootdir, raw) = if session.is_pytest {
        (LogKind::Pytest, session.rootdir, session.failures)
    } else if let Some(failures) = unittest::parse(&lines, root) {
        (LogKind::Unittest, None, failures)
    } else {
        let blocks = native::split_cpython_log(&lines);
        if blocks.is_empty() {
            return Err(ParseError::NotALog);
        }
        let failures = blocks
            .into_iter()
            .filter_map(native::parse_chain)
            .map(|record| pytest_session::SessionFailure {
                test: None,
                when: When::Unknown,
                outcome: Outcome::Error,
                headline: None,
                style: TbStyle::Native,
                record,
                summary: None,
            })
            .collect();
        (LogKind::Cpython, None, failures)
    };
    let mut resolver = locate::Resolver::new(root.to_path_buf(), rootdir.clone());
    let failures = raw.into_iter().map(|f| finish(f, &mut resolver)).collect();
    Ok(ParsedLog {
        schema_version: PARSE_SCHEMA_VERSION,
        kind,
        pytest_rootdir: rootdir,
        root: root.to_string_lossy().into_owned(),
        failures,
    })
}

fn finish(f: pytest_session::SessionFailure, resolver: &mut locate::Resolver) -> Failure {
    let mut record = f.record;
    let rejected_frames = resolver.resolve_record(&mut record);
    let location = best_location(&record, resolver);
    Failure {
        test: f.test,
        when: f.when,
        outcome: f.outcome,
        headline: f.headline,
        style: f.style,
        exc_type: record.exc_type,
        msg: record.msg,
        frames: record.frames,
        chain: record.chain,
        sub_exceptions: record.sub_exceptions,
        location,
        rejected_frames,
        summary: f.summary,
    }
}

/// The failure's own location, unless it lies in a test file while a group member or an
/// earlier exception of the chain points into project code (the bug is there, not in the test
/// that re-raised it).
fn best_location(record: &ExceptionRecord, resolver: &mut locate::Resolver) -> Option<Location> {
    let mut candidates: Vec<&Option<Location>> = vec![&record.location];
    candidates.extend(record.sub_exceptions.iter().map(|s| &s.location));
    candidates.extend(record.chain.iter().rev().map(|c| &c.exception.location));
    let flat: Vec<&Location> = candidates.into_iter().flatten().collect();
    flat.iter()
        .find(|l| resolver.is_project_code(&l.path))
        .or(flat.first())
        .map(|l| (*l).clone())
}
