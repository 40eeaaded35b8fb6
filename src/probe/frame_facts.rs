//! Crash-frame facts from the baseline run: what selfdebug's pytest plugin recorded at the
//! innermost frame of each failing test, turned into the [`ProbeReport`] the probe would have
//! made, so that the probe run is skipped (issue 13 §1).
//!
//! The split of the work: the plugin (`src/plugin/_selfdebug_pytest.py`, active when
//! [`DIR_ENV`] is set) records, for a failure whose innermost frame is project code, the
//! frame's locals and the value of *every* name / attribute load / constant subscript of the
//! statement spanning the crash line, keyed by source text (a superset). The selection is made
//! here, by the probe's own rule ([`plan::targets`] and [`plan::extras`] through
//! [`super::plan_probe`]); a target the plugin did not record means the facts do not cover the
//! statement, and the probe runs as before. So do a crash deeper than the statement to repair
//! (a library called from project code: the innermost frame is not the location), a record
//! whose file changed since, and a test whose in-session rerun did not fail the same way (the
//! probe run is then the flakiness check, as before).
//!
//! Values are read when the statement has raised, not before it ran: for a statement that
//! mutates what it reads before failing (`d.pop(k) + d[k]`), the plugin sees the state at the
//! crash. Candidates are proven by pytest either way; only their order could differ.

use std::path::Path;

use serde::Deserialize;

use super::{
    confined_path, guard, plan_probe, pysrc, DirNames, ExprError, ExprValue, ProbeReport,
    ProbeSource, ScopeNames, TestOutcome, Value, PROBE_SCHEMA_VERSION,
};
use crate::process::TempDir;
use crate::runner::Interpreter;
use crate::traceback::{self, Failure, When};

/// Directory the plugin writes `facts-<pid>.jsonl` into (one file per process).
pub const DIR_ENV: &str = "SELFDEBUG_FACTS_DIR";
/// The project root: frames under it (outside site-packages and virtualenvs) are recorded.
pub const ROOT_ENV: &str = "SELFDEBUG_FACTS_ROOT";

/// One failing test's record, as the plugin wrote it.
#[derive(Debug, Clone, Deserialize)]
pub struct FrameRecord {
    pub test: String,
    /// Relative to the root, `/`-separated.
    pub file: String,
    pub line: usize,
    pub exc_type: String,
    #[serde(default)]
    pub msg: String,
    #[serde(default)]
    pub module: Option<String>,
    #[serde(default)]
    pub module_file: Option<String>,
    #[serde(default)]
    pub py: Option<[u32; 2]>,
    #[serde(default)]
    pub locals: Vec<Value>,
    /// Null when the statement could not be found in the file.
    #[serde(default)]
    pub exprs: Option<Vec<RecordExpr>>,
    #[serde(default)]
    pub statement_line: Option<usize>,
    #[serde(default)]
    pub scope: Option<ScopeNames>,
    /// The name of the `NameError` the scope was recorded for.
    #[serde(default)]
    pub scope_name: Option<String>,
    /// `same`, `different`, `passed` or `skipped` (the rerun cap, a slow test).
    #[serde(default)]
    pub rerun: String,
    #[serde(default)]
    pub duration_ms: u64,
}

/// One sub-expression's value (or error) at the crash.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordExpr {
    pub text: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    pub repr: Option<String>,
    #[serde(default)]
    pub truncated: bool,
    pub error: Option<ExprError>,
    #[serde(default)]
    pub dir: Option<DirNames>,
    #[serde(default)]
    pub params: Option<Vec<(String, String)>>,
}

/// Every well-formed record in `dir` (a process killed mid-write leaves a torn last line).
pub fn read_dir(dir: &Path) -> Vec<FrameRecord> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("facts-") && n.ends_with(".jsonl"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .flat_map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter_map(|l| serde_json::from_str::<FrameRecord>(l).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The passing tests' time per test file (`passing-<pid>.json`, written at the session's
/// end), summed over the processes that wrote one.
fn read_passing(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let ours = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("passing-") && n.ends_with(".json"));
        let Some(map) = ours
            .then(|| std::fs::read(&p).ok())
            .flatten()
            .and_then(|b| {
                serde_json::from_slice::<std::collections::BTreeMap<String, u64>>(&b).ok()
            })
        else {
            continue;
        };
        for (file, ms) in map {
            *out.entry(file).or_insert(0) += ms;
        }
    }
    out
}

/// The facts of the latest baseline run, with the hash of each recorded file as it was right
/// after that run (a record of a file changed since is not used).
#[derive(Debug, Default)]
pub struct Baseline {
    dir: Option<TempDir>,
    records: Vec<(FrameRecord, Option<String>)>,
    /// Test file (as in node ids) → the time its passing tests' calls took, in ms.
    passing_ms: std::collections::BTreeMap<String, u64>,
}

impl Baseline {
    /// The environment for a baseline run in `root`: a fresh facts directory (the previous
    /// baseline's facts are dropped). Empty when no temp dir can be made: then nothing is
    /// recorded and every failure is probed.
    pub fn arm(&mut self, root: &Path) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        self.records.clear();
        self.passing_ms.clear();
        self.dir = TempDir::new("selfdebug-facts").ok();
        // Absolute: a test may change the working directory before it fails.
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        match &self.dir {
            Some(d) => vec![
                (DIR_ENV.into(), d.path().as_os_str().to_owned()),
                (ROOT_ENV.into(), root.into_os_string()),
            ],
            None => Vec::new(),
        }
    }

    /// Reads what the run recorded, and removes the directory.
    pub fn collect(&mut self, root: &Path) {
        let Some(dir) = self.dir.take() else { return };
        self.passing_ms = read_passing(dir.path());
        self.records = read_dir(dir.path())
            .into_iter()
            .map(|r| {
                let hash = std::fs::read(root.join(&r.file))
                    .ok()
                    .map(|b| guard::hash(&b));
                (r, hash)
            })
            .collect();
    }

    /// How long the passing tests of the test file `file` took in the baseline (their calls),
    /// when the run finished its session and any of them passed.
    pub fn passing_ms(&self, file: &str) -> Option<u64> {
        self.passing_ms.get(file).copied()
    }

    /// The record of `failure` (same test, call phase, same crash place and exception).
    fn find(&self, failure: &Failure) -> Option<&(FrameRecord, Option<String>)> {
        let loc = failure.location.as_ref()?;
        let test = failure.test.as_deref()?;
        if failure.when != When::Call || loc.stale.is_some() {
            return None;
        }
        let short = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
        self.records.iter().find(|(r, _)| {
            r.test == test
                && r.file == loc.file
                && r.line == loc.line as usize
                && short(&r.exc_type) == short(&failure.exc_type)
        })
    }

    /// The plugin ran the failing test again in the baseline's session and it passed there.
    pub fn passed_on_rerun(&self, failure: &Failure) -> bool {
        self.find(failure).is_some_and(|(r, _)| r.rerun == "passed")
    }

    /// The report for `failure` from the facts, when they cover its statement (see the module
    /// docs); `None` means: probe it.
    pub fn report(
        &self,
        project_dir: &Path,
        failure: &Failure,
        interpreter: &Interpreter,
    ) -> Option<ProbeReport> {
        let (rec, hash) = self.find(failure)?;
        if rec.rerun != "same" {
            return None;
        }
        report(project_dir, failure, rec, hash.as_deref()?, interpreter)
    }
}

/// Builds the report for `failure` from `rec` (see [`Baseline::report`]); `hash` is the
/// recorded file's hash after the baseline.
pub fn report(
    project_dir: &Path,
    failure: &Failure,
    rec: &FrameRecord,
    hash: &str,
    interpreter: &Interpreter,
) -> Option<ProbeReport> {
    let started = std::time::Instant::now();
    let loc = failure.location.as_ref()?;
    let project = traceback::locate::absolute_root(project_dir).ok()?;
    let path = confined_path(&project, &loc.file).ok()?;
    let caret = loc.caret.and_then(|c| {
        Some((
            c.line_focus_start.or(c.line_start)? as usize,
            c.line_focus_end.or(c.line_end)? as usize,
        ))
    });
    let plan = plan_probe(
        &path,
        loc.line as usize,
        caret,
        Some((failure.exc_type.as_str(), failure.msg.as_str())),
    )
    .ok()?;
    let file_hash = guard::hash(plan.source.bytes());
    if file_hash != hash || rec.statement_line != Some(plan.statement_line) {
        return None;
    }
    let extras = &plan.extras;
    let scope = match &extras.name_error {
        Some(name) => {
            // The names are wanted for this NameError's name, or the probe must run.
            (rec.scope_name.as_deref() == Some(name.as_str())).then_some(())?;
            Some(rec.scope.clone()?)
        }
        None => None,
    };
    let recorded = rec.exprs.as_ref()?;
    let mut exprs = Vec::with_capacity(plan.targets.len());
    for (i, t) in plan.targets.iter().enumerate() {
        // Not recorded (a private name in a class, a form the plugin leaves out): not covered.
        let seen = recorded.iter().find(|e| e.text == t.text)?;
        let value = seen.type_name.as_ref().map(|ty| Value {
            name: String::new(),
            type_name: ty.clone(),
            repr: seen.repr.clone().unwrap_or_default(),
            truncated: seen.truncated,
        });
        exprs.push(ExprValue {
            text: t.text.clone(),
            kind: t.kind,
            range: [t.file_range.start, t.file_range.end],
            line: t.line,
            is_none: value.as_ref().is_some_and(|v| v.type_name == "NoneType"),
            value,
            error: seen.error.clone(),
            dir: extras.dirs.contains(&i).then(|| seen.dir.clone()).flatten(),
            params: extras
                .signatures
                .contains(&i)
                .then(|| seen.params.clone())
                .flatten(),
        });
    }
    let test = failure.test.clone()?;
    Some(ProbeReport {
        schema_version: PROBE_SCHEMA_VERSION,
        source: ProbeSource::Plugin,
        file: loc.file.clone(),
        path: path.to_string_lossy().into_owned(),
        line: plan.line,
        statement_line: plan.statement_line,
        statement: plan.statement,
        // Where the probe would have gone; nothing was injected (`probe_line` is empty).
        injected_at_line: plan.injection.line,
        injection: plan.injection.kind,
        probe_line: String::new(),
        fired: true,
        hits: 1,
        module: rec.module.clone(),
        module_file: rec.module_file.clone(),
        locals: rec.locals.iter().take(pysrc::LOCALS_MAX).cloned().collect(),
        exprs,
        test,
        exc_type: failure.exc_type.clone(),
        msg: failure.msg.clone(),
        // The in-session rerun, which failed the same way (same exception, same frame).
        test_outcome: TestOutcome {
            exit_code: None,
            timed_out: false,
            passed: false,
            reproduced: true,
            exc_type: Some(failure.exc_type.clone()),
            msg: Some(rec.msg.clone()),
            duration_ms: rec.duration_ms,
        },
        file_hash,
        interpreter: interpreter.path.to_string_lossy().into_owned(),
        python_version: rec.py,
        scope,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_cuts_equal_the_probes() {
        // The Python side's repr and name cuts (shared by the plugin and the probe) are the
        // Rust side's; they must not drift apart.
        let values = crate::plugin::VALUES_SOURCE;
        assert!(values.contains(&format!("\nREPR_MAX = {}\n", pysrc::REPR_MAX)));
        assert!(values.contains(&format!("\nLOCALS_MAX = {}\n", pysrc::LOCALS_MAX)));
        assert!(values.contains(&format!("\nNAMES_MAX = {}\n", pysrc::NAMES_MAX)));
        let src = crate::plugin::SOURCE;
        assert!(src.contains(&format!("\"{DIR_ENV}\"")));
        assert!(src.contains(&format!("\"{ROOT_ENV}\"")));
    }

    #[test]
    fn torn_and_foreign_lines_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("facts-1.jsonl"),
            "{\"test\": \"t::a\", \"file\": \"m.py\", \"line\": 3, \"exc_type\": \"KeyError\", \
             \"rerun\": \"same\", \"exprs\": [{\"text\": \"d\", \"type\": \"dict\", \"repr\": \"{}\"}]}\n\
             {\"test\": \"t::b\", \"fi",
        )
        .unwrap();
        std::fs::write(d.path().join("other.txt"), "{}\n").unwrap();
        let r = read_dir(d.path());
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].test.as_str(), r[0].line), ("t::a", 3));
        let e = &r[0].exprs.as_ref().unwrap()[0];
        assert_eq!(
            (e.text.as_str(), e.type_name.as_deref(), e.repr.as_deref()),
            ("d", Some("dict"), Some("{}"))
        );
    }
}
