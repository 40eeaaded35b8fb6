//! The layout of a pytest session's output: `=== banner ===` sections, `___ entry ___` headers
//! inside FAILURES and ERRORS, captured-output blocks, and the short test summary.

use std::collections::{HashMap, VecDeque};

use super::lines::strip_xdist_prefix;
use super::model::{ExceptionRecord, Outcome, TbStyle, When};
use super::pytest_body::{self, is_captured_header};
use super::text;
use super::FastHash;

/// A failure as the session shows it, before paths are resolved and the location is chosen.
pub struct SessionFailure {
    pub test: Option<String>,
    pub when: When,
    pub outcome: Outcome,
    pub headline: Option<String>,
    pub style: TbStyle,
    pub record: ExceptionRecord,
    pub summary: Option<String>,
}

pub struct Session {
    /// Whether the text is recognizably pytest output at all.
    pub is_pytest: bool,
    pub rootdir: Option<String>,
    pub failures: Vec<SessionFailure>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Header,
    Failures,
    Errors,
    Summary,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum SummaryKind {
    Failed = 0,
    Error = 1,
}

struct SummaryEntry {
    kind: SummaryKind,
    id: String,
    /// The section title pytest gives this node id (see [`headline_of`]).
    headline: String,
    msg: Option<String>,
    used: bool,
}

/// A section entry: its title and its lines, `lines[start..end]` of the log (captured output
/// left out), kept as a range so that a large log is not copied.
struct Entry {
    section: Section,
    headline: Option<String>,
    start: usize,
    end: usize,
}

pub fn parse(lines: &[&str]) -> Session {
    let mut scan = Scan::new();
    for (idx, &raw) in lines.iter().enumerate() {
        scan.line(idx, raw);
    }
    let Scan {
        is_pytest,
        rootdir,
        entries,
        mut summary,
        ..
    } = scan;
    let mut failures = Vec::new();
    for entry in &entries {
        if entry.headline.is_none() {
            line_style_failures(lines, entry, &mut summary, &mut failures);
        } else {
            failures.extend(headed_failure(lines, entry, &mut summary));
        }
    }
    // Summary lines without a section (`--tb=no`, or sections cut from the log).
    for s in summary.entries.into_iter().filter(|s| !s.used) {
        let when = match s.kind {
            SummaryKind::Failed => When::Call,
            SummaryKind::Error if !s.id.contains("::") => When::Collect,
            SummaryKind::Error => When::Unknown,
        };
        failures.push(from_summary(Some(s.id), s.msg, when, None));
    }
    Session {
        is_pytest: is_pytest || !failures.is_empty(),
        rootdir,
        failures,
    }
}

/// The first pass over the log, one line at a time: the sections, their entries and the
/// short summary, before any entry is read as a traceback.
struct Scan {
    section: Section,
    is_pytest: bool,
    rootdir: Option<String>,
    entries: Vec<Entry>,
    summary: Summary,
    // Inside an entry, captured output runs to the next entry header or banner.
    in_captured: bool,
}

impl Scan {
    fn new() -> Self {
        Scan {
            section: Section::None,
            is_pytest: false,
            rootdir: None,
            entries: Vec::new(),
            summary: Summary::default(),
            in_captured: false,
        }
    }

    fn line(&mut self, idx: usize, raw: &str) {
        let (line, had_prefix) = strip_xdist_prefix(raw);
        if had_prefix && line.contains(" -- Python ") {
            // xdist's `[gw0] linux -- Python ...` opens a section: start the entry after it.
            if let Some(e) = self.entries.last_mut().filter(|e| e.start == e.end) {
                e.start = idx + 1;
                e.end = idx + 1;
            }
            return;
        }
        if let Some(title) = banner_title(line) {
            self.banner(idx, title);
            return;
        }
        if self.section == Section::None && entry_title(line).is_some() {
            // A failure section pasted without its `=== FAILURES ===` banner (a CI log cut at
            // the `___ test_x ___` header): read it as one. It counts as pytest output only if
            // an entry under it holds a readable traceback.
            self.section = Section::Failures;
        }
        if !self.is_pytest && is_stats_line(line) {
            self.is_pytest = true;
        }
        match self.section {
            Section::Header => {
                if let Some(rest) = line.strip_prefix("rootdir: ") {
                    let dir = rest.split(", configfile:").next().unwrap_or(rest);
                    let dir = dir.split(", testpaths:").next().unwrap_or(dir);
                    self.rootdir = Some(dir.trim().to_string());
                }
            }
            Section::Failures | Section::Errors => self.entry_line(idx, line),
            Section::Summary => {
                if let Some(s) = summary_line(line) {
                    self.summary.push(s);
                }
            }
            Section::None | Section::Other => {}
        }
    }

    /// A `=== title ===` banner on line `idx`: a new section.
    fn banner(&mut self, idx: usize, title: &str) {
        self.section = match title {
            "test session starts" => Section::Header,
            "FAILURES" => Section::Failures,
            "ERRORS" => Section::Errors,
            "short test summary info" => Section::Summary,
            _ => Section::Other,
        };
        self.is_pytest |= self.section != Section::Other || is_stats_line(title);
        self.in_captured = false;
        if matches!(self.section, Section::Failures | Section::Errors) {
            // Lines before any `___ x ___` header: `--tb=line` entries.
            self.entries.push(Entry {
                section: self.section,
                headline: None,
                start: idx + 1,
                end: idx + 1,
            });
        }
    }

    /// Line `idx` of a FAILURES or ERRORS section: an entry header, or a line of the last entry.
    fn entry_line(&mut self, idx: usize, line: &str) {
        if let Some(title) = entry_title(line) {
            self.in_captured = false;
            self.entries.push(Entry {
                section: self.section,
                headline: Some(title.to_string()),
                start: idx + 1,
                end: idx + 1,
            });
            return;
        }
        let Some(entry) = self.entries.last_mut() else {
            return;
        };
        // `--tb=line` output has no headers and must see captured blocks itself.
        if entry.headline.is_some() {
            if is_captured_header(line) {
                self.in_captured = true;
            }
            if self.in_captured {
                return;
            }
        }
        entry.end = idx + 1;
    }
}

/// The failures of an entry without a header (`--tb=line`), each paired with the next unused
/// summary line of its kind.
fn line_style_failures(
    lines: &[&str],
    entry: &Entry,
    summary: &mut Summary,
    failures: &mut Vec<SessionFailure>,
) {
    for e in pytest_body::parse_line_style(&lines[entry.start..entry.end]) {
        let kind = match entry.section {
            Section::Errors => SummaryKind::Error,
            _ => SummaryKind::Failed,
        };
        let paired = summary.take_next(kind);
        let when = if kind == SummaryKind::Failed {
            When::Call
        } else {
            When::Unknown
        };
        failures.push(SessionFailure {
            test: paired.as_ref().map(|s| s.0.clone()),
            when,
            outcome: Outcome::of_pytest(when),
            headline: None,
            style: TbStyle::Line,
            record: e.record,
            summary: paired.and_then(|s| s.1),
        });
    }
}

/// The failure of an entry with a `___ title ___` header, paired with its summary line.
fn headed_failure(lines: &[&str], entry: &Entry, summary: &mut Summary) -> Option<SessionFailure> {
    let headline = entry.headline.as_ref()?;
    let (when, name) = classify_headline(headline, entry.section);
    let parsed = pytest_body::parse_body(&lines[entry.start..entry.end]);
    let kind = if when == When::Call {
        SummaryKind::Failed
    } else {
        SummaryKind::Error
    };
    let paired = summary.take_matching(kind, name, when);
    let Some((record, style)) = parsed else {
        // A header with nothing readable under it: keep it only if pytest counted it.
        return paired.map(|(id, msg)| from_summary(Some(id), msg, when, Some(headline)));
    };
    let test = match paired.as_ref() {
        Some((id, _)) => Some(id.clone()),
        None => derive_node_id(name, when, &record),
    };
    Some(SessionFailure {
        test,
        when,
        outcome: Outcome::of_pytest(when),
        headline: Some(headline.clone()),
        style,
        record,
        summary: paired.and_then(|p| p.1),
    })
}

fn from_summary(
    test: Option<String>,
    msg: Option<String>,
    when: When,
    headline: Option<&String>,
) -> SessionFailure {
    let (exc_type, text) = match msg.as_deref() {
        Some(m) => text::split_summary_message(m),
        None => (String::new(), String::new()),
    };
    SessionFailure {
        test,
        when,
        outcome: Outcome::of_pytest(when),
        headline: headline.cloned(),
        style: TbStyle::Summary,
        record: ExceptionRecord {
            exc_type,
            msg: text,
            frames: Vec::new(),
            chain: Vec::new(),
            sub_exceptions: Vec::new(),
            location: None,
        },
        summary: msg,
    }
}

/// `==== title ====` (pytest pads with `=`; a narrow terminal may leave a single one).
fn banner_title(line: &str) -> Option<&str> {
    banner_with(line, '=')
}

/// `____ title ____`. The long-style frame separator `_ _ _ _` is not one.
fn entry_title(line: &str) -> Option<&str> {
    if !line.starts_with("__") {
        return None;
    }
    banner_with(line, '_')
}

fn banner_with(line: &str, fill: char) -> Option<&str> {
    let inner = line.strip_prefix(fill)?.strip_suffix(fill)?;
    let title = inner.trim_matches(fill);
    if !title.starts_with(' ') || !title.ends_with(' ') {
        return None;
    }
    let title = title.trim();
    (!title.is_empty()).then_some(title)
}

/// What pytest's last stats line counts: tests passed, failed (errors counted in), deselected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub passed: u32,
    pub failed: u32,
    pub deselected: u32,
}

/// The counts of the last stats line of a pytest output (`== 1 failed, 2 passed, 3 deselected
/// in 0.10s ==`, or the bare line under `-q`); `None` when it has none (a crash, a timeout).
pub fn stats(output: &str) -> Option<Stats> {
    let line = output.lines().rev().find_map(|l| {
        let l = l.trim();
        let inner = banner_title(l).unwrap_or(l);
        is_stats_line(inner).then_some(inner)
    })?;
    let counts = line.rsplit_once(" in ").map_or(line, |(c, _)| c);
    let mut stats = Stats::default();
    for part in counts.split(", ") {
        let mut it = part.split_whitespace();
        let n: u32 = it.next().and_then(|n| n.parse().ok()).unwrap_or_default();
        match it.next() {
            Some("passed") => stats.passed += n,
            Some("failed" | "error" | "errors") => stats.failed += n,
            Some("deselected") => stats.deselected += n,
            _ => {}
        }
    }
    Some(stats)
}

/// `7 failed, 1 passed, 1 error in 0.10s` (the last banner, or the bare line under `-q`).
fn is_stats_line(s: &str) -> bool {
    let s = s.trim();
    let Some((counts, time)) = s.rsplit_once(" in ") else {
        return false;
    };
    let time_ok = time
        .split_whitespace()
        .next()
        .is_some_and(|t| t.ends_with('s') && t[..t.len() - 1].parse::<f64>().is_ok());
    const WORDS: [&str; 11] = [
        "failed",
        "passed",
        "error",
        "errors",
        "skipped",
        "deselected",
        "xfailed",
        "xpassed",
        "warning",
        "warnings",
        "rerun",
    ];
    time_ok
        && counts.split(", ").all(|part| {
            let mut it = part.split_whitespace();
            let n = it.next().is_some_and(|n| n.parse::<u64>().is_ok());
            n && it.next().is_some_and(|w| WORDS.contains(&w)) && it.next().is_none()
        })
}

fn summary_line(line: &str) -> Option<SummaryEntry> {
    let (kind, rest) = if let Some(r) = line.strip_prefix("FAILED ") {
        (SummaryKind::Failed, r)
    } else if let Some(r) = line.strip_prefix("ERROR ") {
        (SummaryKind::Error, r)
    } else {
        return None;
    };
    let (id, msg) = split_summary(rest);
    Some(SummaryEntry {
        kind,
        headline: headline_of(id),
        id: id.to_string(),
        msg: msg.map(str::to_string),
        used: false,
    })
}

/// `id - message`. Parameter ids may contain ` - `, so when the id has `[`, it runs to the `]`
/// that is followed by ` - ` or the end of the line.
fn split_summary(rest: &str) -> (&str, Option<&str>) {
    let first_sep = rest.find(" - ");
    let bracket = rest.find('[');
    if let Some(b) = bracket.filter(|b| first_sep.is_none_or(|s| *b < s)) {
        let mut search = b;
        while let Some(off) = rest[search..].find(']') {
            let end = search + off + 1;
            if end == rest.len() {
                return (rest, None);
            }
            if rest[end..].starts_with(" - ") {
                return (&rest[..end], Some(&rest[end + 3..]));
            }
            search = end;
        }
    }
    match first_sep {
        Some(s) => (&rest[..s], Some(&rest[s + 3..])),
        None => (rest.trim_end(), None),
    }
}

/// (phase, test name as printed) from a section title.
fn classify_headline(headline: &str, section: Section) -> (When, &str) {
    if let Some(n) = headline.strip_prefix("ERROR at setup of ") {
        (When::Setup, n)
    } else if let Some(n) = headline.strip_prefix("ERROR at teardown of ") {
        (When::Teardown, n)
    } else if let Some(n) = headline.strip_prefix("ERROR collecting ") {
        (When::Collect, n)
    } else if section == Section::Errors {
        (When::Unknown, headline)
    } else {
        (When::Call, headline)
    }
}

/// pytest titles a section with the node id minus its file, `::` shown as `.` before any
/// parameters: `tests/t.py::TestA::test_b[x::y]` → `TestA.test_b[x::y]`.
fn headline_of(node_id: &str) -> String {
    let rest = node_id.split_once("::").map_or(node_id, |(_, r)| r);
    let (base, params) = match rest.find('[') {
        Some(b) => rest.split_at(b),
        None => (rest, ""),
    };
    format!("{}{}", base.replace("::", "."), params)
}

/// The short-summary lines, indexed so that pairing every section with its line stays linear.
#[derive(Default)]
struct Summary {
    entries: Vec<SummaryEntry>,
    /// (kind, headline) → unused entries in order.
    by_headline: HashMap<(SummaryKind, String), VecDeque<usize>, FastHash>,
    /// Path of a collection error → unused entries in order.
    by_path: HashMap<String, VecDeque<usize>, FastHash>,
    /// Per kind, the first entry that may still be unused (for `--tb=line` pairing by order).
    cursor: [usize; 2],
}

impl Summary {
    fn push(&mut self, e: SummaryEntry) {
        let i = self.entries.len();
        self.by_headline
            .entry((e.kind, e.headline.clone()))
            .or_default()
            .push_back(i);
        if !e.id.contains("::") {
            self.by_path.entry(e.id.clone()).or_default().push_back(i);
        }
        self.entries.push(e);
    }

    fn take(&mut self, i: usize) -> (String, Option<String>) {
        let e = &mut self.entries[i];
        e.used = true;
        (e.id.clone(), e.msg.clone())
    }

    /// The first unused entry of `kind` for the section titled `name`.
    fn take_matching(
        &mut self,
        kind: SummaryKind,
        name: &str,
        when: When,
    ) -> Option<(String, Option<String>)> {
        let queue = if when == When::Collect {
            let key = self
                .by_path
                .keys()
                .find(|p| *p == name || p.ends_with(&format!("/{name}")))
                .cloned()?;
            self.by_path.get_mut(&key)?
        } else {
            self.by_headline.get_mut(&(kind, name.to_string()))?
        };
        while let Some(i) = queue.pop_front() {
            if !self.entries[i].used && self.entries[i].kind == kind {
                return Some(self.take(i));
            }
        }
        None
    }

    /// The next unused entry of `kind`, in summary order.
    fn take_next(&mut self, kind: SummaryKind) -> Option<(String, Option<String>)> {
        let slot = kind as usize;
        while self.cursor[slot] < self.entries.len() {
            let i = self.cursor[slot];
            self.cursor[slot] += 1;
            if !self.entries[i].used && self.entries[i].kind == kind {
                return Some(self.take(i));
            }
        }
        None
    }
}

/// Without a summary line, the test id is rebuilt from the outermost frame that is a test file
/// (pytest starts the traceback at the test function) and the section title.
fn derive_node_id(name: &str, when: When, record: &ExceptionRecord) -> Option<String> {
    if when == When::Collect {
        return Some(name.to_string());
    }
    let file = record.frames.first()?.printed_file.replace('\\', "/");
    let base = file.rsplit('/').next().unwrap_or(&file);
    if !(base.starts_with("test") || base.ends_with("_test.py")) || file.starts_with('/') {
        return None;
    }
    let (head, params) = match name.find('[') {
        Some(b) => name.split_at(b),
        None => (name, ""),
    };
    Some(format!("{file}::{}{params}", head.replace('.', "::")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_ids_with_brackets() {
        assert_eq!(
            split_summary("t.py::test_b[a - b] - AssertionError: x"),
            ("t.py::test_b[a - b]", Some("AssertionError: x"))
        );
        assert_eq!(
            split_summary("t.py::test_b[a b]"),
            ("t.py::test_b[a b]", None)
        );
        assert_eq!(
            split_summary("tests/test_imp.py"),
            ("tests/test_imp.py", None)
        );
        assert_eq!(split_summary("t.py::x - a - b"), ("t.py::x", Some("a - b")));
    }

    #[test]
    fn banners() {
        assert_eq!(banner_title("==== FAILURES ===="), Some("FAILURES"));
        assert_eq!(banner_title("= FAILURES ="), Some("FAILURES"));
        assert_eq!(banner_title("========"), None);
        assert_eq!(
            entry_title("____ TestA.test_b[1.5] ____"),
            Some("TestA.test_b[1.5]")
        );
        assert_eq!(entry_title("_ _ _ _ _ _"), None);
        assert!(is_stats_line("7 failed, 1 passed, 1 error in 0.10s"));
        assert!(is_stats_line("1 failed in 0.01s (0:00:00)"));
        assert!(!is_stats_line("I walked in 3s"));
    }

    #[test]
    fn stats_count_the_last_stats_line() {
        let out = "x\n== 1 failed, 2 passed, 1 error, 3 deselected in 0.10s ==\n";
        assert_eq!(
            stats(out),
            Some(Stats {
                passed: 2,
                failed: 2,
                deselected: 3
            })
        );
        assert_eq!(
            stats("..\n4 passed in 0.01s\n"),
            Some(Stats {
                passed: 4,
                ..Stats::default()
            })
        );
        assert_eq!(stats("Traceback ...\n"), None);
    }

    #[test]
    fn headlines() {
        assert_eq!(
            headline_of("tests/t.py::TestA::test_b[1.5]"),
            "TestA.test_b[1.5]"
        );
        assert_eq!(headline_of("t.py::test_x[a::b]"), "test_x[a::b]");
    }
}
