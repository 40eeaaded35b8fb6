//! The probe: one diagnostic run of the failing test with a line injected before the failing
//! statement that records the values involved (docs/architecture.md, "Probes never stay").
//!
//! Steps of [`probe`]:
//! 1. read the failure's file ([`SourceFile`]), parse it, locate the line, and choose the
//!    injection point ([`plan::injection_point`]: before the statement, or the nearest legal
//!    point for an `elif` test, a decorator, default arguments, a one-line compound body...);
//! 2. build the single probe line ([`pysrc`]) that evaluates each side-effect-free
//!    sub-expression ([`plan::targets`]) and records the locals, writing JSON lines to the file
//!    named by `$SELFDEBUG_PROBE_OUT`;
//! 3. write the probed bytes (checked to re-parse), run only the failing test, and restore the
//!    original bytes and mtime, always ([`guard::FileGuard`]), verified by hash;
//! 4. report the last hit's values and the hit count ([`ProbeReport`]).

pub mod frame_facts;
pub mod guard;
pub mod plan;
pub mod pysrc;

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::edit::{self, Edit};
use crate::process::RunnerError;
use crate::runner::{self, Interpreter, RunSpec};
use crate::source::{SourceError, SourceFile};
use crate::syntax::{self, SyntaxError};
use crate::traceback::{self, Failure};

pub use plan::{Injection, InjectionKind, Target};

/// Bumped only when a field of [`ProbeReport`] is renamed or removed.
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// What to probe, and how to run it.
#[derive(Debug, Clone)]
pub struct ProbeRequest<'a> {
    /// Where pytest runs and where the file is written: the project root or a scratch copy of
    /// it. The failure's `location.file` (relative to the root) is resolved against it.
    pub project_dir: &'a Path,
    /// The failure; it must have a location.
    pub failure: &'a Failure,
    pub interpreter: &'a Interpreter,
    pub timeout: Duration,
    /// The per-test limit of selfdebug's plugin (see [`RunSpec::test_timeout`]).
    pub test_timeout: Option<Duration>,
    /// Extra environment for the run (e.g. `PYTHONPATH`).
    pub env: Vec<(OsString, OsString)>,
    /// Extra pytest arguments (the user's, after `--`).
    pub pytest_args: Vec<String>,
    /// The node id to run; default: the failure's `test`.
    pub test: Option<String>,
    /// Keep a copy of the original in the per-user temp dir while the probe is in the file
    /// (for `selfdebug probe`, whose only other copy is in memory). `fix` says no: its journal
    /// or scratch copy already holds the original, and a copy left by a killed run would pile
    /// up in the temp dir.
    pub backup: bool,
}

/// A value the probe saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    /// The local's name (empty for expression values).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `type(v).__qualname__`, prefixed with the module unless it is `builtins`
    /// (`NoneType`, `str`, `collections.OrderedDict`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// `repr(v)`, cut to 400 characters.
    pub repr: String,
    /// The repr was cut.
    #[serde(default)]
    pub truncated: bool,
}

/// An exception raised while evaluating a sub-expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExprError {
    #[serde(rename = "type")]
    pub type_name: String,
    pub msg: String,
}

/// One sub-expression of the statement and what it evaluated to at the last hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExprValue {
    /// The source text (newlines normalized to `\n`).
    pub text: String,
    /// `name`, `attribute` or `subscript`.
    pub kind: &'static str,
    /// Byte range in the original file (as stored: BOM and encoding accounted for).
    pub range: [usize; 2],
    /// 1-based line where the expression starts.
    pub line: usize,
    /// The value, when it evaluated (null when it raised or the probe never fired).
    pub value: Option<Value>,
    /// The exception evaluating it raised (e.g. a `NameError` for a name bound later).
    pub error: Option<ExprError>,
    /// The value is `None`.
    pub is_none: bool,
    /// `dir()` of the value, recorded for the receiver of a failing attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<DirNames>,
    /// The parameters of `inspect.signature(value)` (name, kind), recorded for the callee of a
    /// call that passed an unexpected keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Vec<(String, String)>>,
}

/// Some names (at most [`pysrc::NAMES_MAX`]) and how many there were.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Names {
    pub names: Vec<String>,
    pub total: usize,
}

/// `dir()` of a value, and whether it is the frame's `self`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirNames {
    pub names: Vec<String>,
    pub total: usize,
    #[serde(default)]
    pub is_self: bool,
}

/// The names of the frame, as CPython collects them for a `NameError`'s suggestion: the keys
/// of `f_locals`, `f_globals` and `f_builtins`, in their order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScopeNames {
    pub locals: Names,
    pub globals: Names,
    pub builtins: Names,
    /// The frame has a `self` whose `dir()` holds the undefined name (null: no `self`).
    #[serde(default)]
    pub self_has_attr: Option<bool>,
}

/// How the probed run of the test ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestOutcome {
    /// pytest's exit code (null when killed at the timeout).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The test passed (then the probe may have changed behaviour, or the failure is flaky).
    pub passed: bool,
    /// The run failed the same test with the same exception type as the original failure.
    pub reproduced: bool,
    /// The exception of the probed run, when it failed.
    pub exc_type: Option<String>,
    pub msg: Option<String>,
    pub duration_ms: u64,
}

/// Where a report's facts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeSource {
    /// A probe run: the line injected before the statement, the failing test run once.
    Probe,
    /// The baseline run: selfdebug's pytest plugin at the crash frame ([`frame_facts`]); no
    /// line was injected and no extra run was made.
    Plugin,
}

/// Everything the probe learned. Serialized as the `probe --json` output (snake_case fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeReport {
    pub schema_version: u32,
    /// Where the facts come from.
    pub source: ProbeSource,
    /// The probed file, relative to the project dir.
    pub file: String,
    /// Its absolute path (in the project dir that was probed).
    pub path: String,
    /// The failing line (1-based) from the traceback.
    pub line: usize,
    /// The located statement's first line and its source text (lines joined with `\n`).
    pub statement_line: usize,
    pub statement: String,
    /// The probe line was inserted before this line of the original file (1-based); during the
    /// run it was this line and everything from here on was one line lower.
    pub injected_at_line: usize,
    /// Why there (see [`InjectionKind`]).
    pub injection: InjectionKind,
    /// The inserted line, without indentation or newline.
    pub probe_line: String,
    /// The probe ran at least once. When false, the line was not reached before the test
    /// ended: `locals` and the expressions' values are empty.
    pub fired: bool,
    /// How many times it ran (in the process that ran it last).
    pub hits: usize,
    /// `__name__` and `__file__` of the module the probe ran in: proves which copy was imported.
    pub module: Option<String>,
    pub module_file: Option<String>,
    /// The frame's locals at the last hit (module-level probes skip dunders and modules).
    pub locals: Vec<Value>,
    /// The statement's side-effect-free sub-expressions, with their values at the last hit.
    pub exprs: Vec<ExprValue>,
    /// The node id that was run.
    pub test: String,
    /// The original failure.
    pub exc_type: String,
    pub msg: String,
    pub test_outcome: TestOutcome,
    /// Hash of the file before and after the probe (they are equal, or this is an error).
    pub file_hash: String,
    /// The interpreter the test ran with.
    pub interpreter: String,
    /// Its `sys.version_info[:2]`, when the probe fired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_version: Option<[u32; 2]>,
    /// For a `NameError`: the names visible in the frame at the last hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeNames>,
    /// Whole probe, preparation and restore included.
    pub duration_ms: u64,
}

impl ProbeReport {
    /// The sub-expressions whose value was `None` at the last hit.
    pub fn none_exprs(&self) -> impl Iterator<Item = &ExprValue> {
        self.exprs.iter().filter(|e| e.is_none)
    }
}

/// Why there is no report. Displays as one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProbeError {
    /// The failure has no location in the project's code.
    #[error("the failure has no location in the project's code to probe")]
    NoLocation,
    /// Neither the request nor the failure names a test to run.
    #[error("the failure names no test to run; pass --module")]
    NoTest,
    /// The file is outside the project dir, behind a symlink out of it, or in a virtualenv or
    /// site-packages.
    #[error("will not probe {}: {reason}", path.display())]
    NotConfined { path: PathBuf, reason: String },
    #[error(transparent)]
    Source(SourceError),
    #[error(transparent)]
    Syntax(SyntaxError),
    /// No statement at the line (a stale log?).
    #[error(
        "{}:{line}: no statement there (is the log older than the file?)",
        path.display()
    )]
    NotLocated { path: PathBuf, line: usize },
    /// No legal place for the probe line, or the probed file would not parse.
    #[error("{}:{line}: cannot place a probe: {why}", path.display())]
    NoInjectionPoint {
        path: PathBuf,
        line: usize,
        why: String,
    },
    /// The file could not be written (nothing was changed).
    #[error("cannot write {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: guard::WriteError,
    },
    /// No temp dir for the probe's output (nothing was changed).
    #[error("cannot write {}: {text}", path.display())]
    TempDir {
        path: PathBuf,
        kind: std::io::ErrorKind,
        text: String,
    },
    /// Running pytest failed (the file was restored).
    #[error(transparent)]
    Runner(RunnerError),
    /// The original could not be put back: a hard error.
    #[error(transparent)]
    Restore(guard::RestoreError),
}

/// Everything decided before the file is touched.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    pub path: PathBuf,
    pub source: SourceFile,
    pub line: usize,
    pub statement_line: usize,
    pub statement: String,
    pub injection: Injection,
    pub targets: Vec<Target>,
    /// What is recorded besides values for the failure (none without one).
    pub extras: pysrc::Extras,
    pub key: String,
    pub probe_line: String,
    pub probed_bytes: Vec<u8>,
}

/// Plans the probe for `line` of `path` (no side effects).
pub fn plan_probe(
    path: &Path,
    line: usize,
    caret: Option<(usize, usize)>,
    failure: Option<(&str, &str)>,
) -> Result<ProbePlan, ProbeError> {
    let source = SourceFile::read(path).map_err(ProbeError::Source)?;
    let pm = syntax::parse(&source).map_err(ProbeError::Syntax)?;
    let span = caret.and_then(|(a, b)| {
        let s = source.offset_of_char_col(line, a)?;
        let e = source.offset_of_char_col(line, b)?;
        (s < e).then_some(s..e)
    });
    let located = match span {
        Some(s) => syntax::locate_span(&pm, line, s),
        None => syntax::locate(&pm, line),
    }
    .ok_or_else(|| ProbeError::NotLocated {
        path: path.to_path_buf(),
        line,
    })?;
    let no_point = |why: String| ProbeError::NoInjectionPoint {
        path: path.to_path_buf(),
        line,
        why,
    };
    let injection = plan::injection_point(&pm, &located)
        .ok_or_else(|| no_point("no statement boundary before it".into()))?;
    let targets = plan::targets(&source, &located);
    let key = unique_key();
    let evals: Vec<String> = targets.iter().map(|t| t.eval.clone()).collect();
    let extras = failure.map_or_else(pysrc::Extras::default, |(exc_type, msg)| {
        plan::extras(source.text(), &located, &targets, exc_type, msg)
    });
    let probe_line = pysrc::probe_line(&key, &pysrc::probe_source(&key, &evals, &extras));

    let edit: Edit =
        edit::insert_line_before(&source, injection.line, &injection.indent, &probe_line)
            .ok_or_else(|| no_point(format!("line {} is past the end", injection.line)))?;
    let text = edit::apply(source.text(), &[edit]).map_err(|e| no_point(e.to_string()))?;
    // Only the one line may shift, and the result must still be Python.
    syntax::parse_text(path, &text)
        .map_err(|e| no_point(format!("the probed file would not parse: {e}")))?;
    let probed_bytes = source.encode(&text).map_err(ProbeError::Source)?;
    let statement = source.text()[located.line_range.clone()]
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    Ok(ProbePlan {
        path: path.to_path_buf(),
        line,
        statement_line: located.first_line,
        statement,
        injection,
        targets,
        extras,
        key,
        probe_line,
        probed_bytes,
        source,
    })
}

/// The probe's names carry this process's pid: a `restore` after a kill knows the probe line
/// of the killed run by it (`journal::holds_probe_of`).
fn unique_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("_selfdebug_probe_{}_{nanos}", std::process::id())
}

/// Runs the probe described in the module docs.
pub fn probe(req: &ProbeRequest<'_>) -> Result<ProbeReport, ProbeError> {
    probe_with(req, &|spec: &RunSpec| {
        runner::run_pytest(req.interpreter, spec)
    })
}

/// [`probe`] with another judge: `run` runs the probed code (`fix --cmd` runs its command;
/// the spec's node id is then the command's headline and is not used).
pub fn probe_with(
    req: &ProbeRequest<'_>,
    run: &dyn Fn(&RunSpec) -> Result<runner::PytestRun, RunnerError>,
) -> Result<ProbeReport, ProbeError> {
    let started = Instant::now();
    let loc = req
        .failure
        .location
        .as_ref()
        .ok_or(ProbeError::NoLocation)?;
    let test = req
        .test
        .clone()
        .or_else(|| req.failure.test.clone())
        .ok_or(ProbeError::NoTest)?;
    let project =
        traceback::locate::absolute_root(req.project_dir).map_err(|e| ProbeError::NotConfined {
            path: req.project_dir.to_path_buf(),
            reason: e.to_string(),
        })?;
    let path = confined_path(&project, &loc.file)?;
    let caret = loc.caret.and_then(|c| {
        Some((
            c.line_focus_start.or(c.line_start)? as usize,
            c.line_focus_end.or(c.line_end)? as usize,
        ))
    });
    let failure = Some((req.failure.exc_type.as_str(), req.failure.msg.as_str()));
    let plan = plan_probe(&path, loc.line as usize, caret, failure)?;

    let out_dir =
        crate::process::TempDir::new("selfdebug-probe").map_err(|e| ProbeError::TempDir {
            path: std::env::temp_dir(),
            kind: e.kind(),
            text: e.to_string(),
        })?;
    let out_file = out_dir.path().join("probe.jsonl");
    let mut env = req.env.clone();
    env.push((pysrc::OUT_ENV.into(), out_file.clone().into_os_string()));
    let spec = RunSpec {
        node_ids: vec![test.clone()],
        extra_args: req.pytest_args.clone(),
        env,
        timeout: req.timeout,
        test_timeout: req.test_timeout,
        ..RunSpec::new(&project)
    };

    let guard = guard::FileGuard::write(&path, plan.source.bytes(), &plan.probed_bytes, req.backup)
        .map_err(|error| ProbeError::Write {
            path: path.clone(),
            error,
        })?;
    let file_hash = guard.original_hash().to_string();
    let run = run(&spec);
    // Restore before anything else, whatever the run did.
    guard.restore().map_err(ProbeError::Restore)?;
    let run = run.map_err(ProbeError::Runner)?;

    let records = read_records(&out_file);
    let last = records.iter().max_by_key(|r| r.hit);
    let outcome = outcome(&run, &project, &test, &req.failure.exc_type);
    let exprs = plan
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let seen = last.and_then(|r| r.exprs.iter().find(|e| e.i == i));
            let value = seen.and_then(|s| {
                s.type_name.as_ref().map(|ty| Value {
                    name: String::new(),
                    type_name: ty.clone(),
                    repr: s.repr.clone().unwrap_or_default(),
                    truncated: s.truncated,
                })
            });
            ExprValue {
                text: t.text.clone(),
                kind: t.kind,
                range: [t.file_range.start, t.file_range.end],
                line: t.line,
                is_none: value.as_ref().is_some_and(|v| v.type_name == "NoneType"),
                value,
                error: seen.and_then(|s| s.error.clone()),
                dir: seen.and_then(|s| s.dir.clone()),
                params: seen.and_then(|s| s.params.clone()),
            }
        })
        .collect();
    Ok(ProbeReport {
        schema_version: PROBE_SCHEMA_VERSION,
        source: ProbeSource::Probe,
        file: loc.file.clone(),
        path: path.to_string_lossy().into_owned(),
        line: plan.line,
        statement_line: plan.statement_line,
        statement: plan.statement,
        injected_at_line: plan.injection.line,
        injection: plan.injection.kind,
        probe_line: plan.probe_line,
        fired: last.is_some(),
        hits: last.map_or(0, |r| r.hit),
        module: last.and_then(|r| r.module.clone()),
        module_file: last.and_then(|r| r.module_file.clone()),
        locals: last.map(|r| r.locals.clone()).unwrap_or_default(),
        exprs,
        test,
        exc_type: req.failure.exc_type.clone(),
        msg: req.failure.msg.clone(),
        test_outcome: outcome,
        file_hash,
        interpreter: req.interpreter.path.to_string_lossy().into_owned(),
        python_version: last.and_then(|r| r.py),
        scope: last.and_then(|r| r.scope.clone()),
        duration_ms: millis(started.elapsed()),
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `file` (relative to the root, as the parser reports it) under `project`, refusing paths
/// that leave it (`..`, absolute elsewhere, a symlink out) or lie in a virtualenv or
/// site-packages.
fn confined_path(project: &Path, file: &str) -> Result<PathBuf, ProbeError> {
    let rel = Path::new(file);
    let joined = if rel.is_absolute() {
        rel.to_path_buf()
    } else {
        project.join(rel)
    };
    let refuse = |reason: &str| ProbeError::NotConfined {
        path: joined.clone(),
        reason: reason.to_string(),
    };
    let real_root = project.canonicalize().map_err(|e| refuse(&e.to_string()))?;
    let real = joined.canonicalize().map_err(|e| {
        ProbeError::Source(SourceError::Io {
            path: joined.clone(),
            message: e.to_string(),
        })
    })?;
    let inner = real
        .strip_prefix(&real_root)
        .map_err(|_| refuse("it is outside the project (or a symlink leads out of it)"))?;
    let mut dir = real_root.clone();
    for c in inner.components() {
        let Component::Normal(name) = c else {
            return Err(refuse("unexpected path component"));
        };
        if name == "site-packages" || name == "dist-packages" {
            return Err(refuse("it is in site-packages"));
        }
        if dir.join("pyvenv.cfg").is_file() {
            return Err(refuse("it is inside a virtualenv"));
        }
        dir.push(name);
    }
    Ok(joined)
}

/// One line the probe wrote.
#[derive(Debug, Clone, Deserialize)]
struct Record {
    hit: usize,
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    module_file: Option<String>,
    #[serde(default)]
    locals: Vec<Value>,
    #[serde(default)]
    exprs: Vec<RecordExpr>,
    #[serde(default)]
    py: Option<[u32; 2]>,
    #[serde(default)]
    scope: Option<ScopeNames>,
}

#[derive(Debug, Clone, Deserialize)]
struct RecordExpr {
    i: usize,
    #[serde(rename = "type")]
    type_name: Option<String>,
    repr: Option<String>,
    #[serde(default)]
    truncated: bool,
    error: Option<ExprError>,
    #[serde(default)]
    dir: Option<DirNames>,
    #[serde(default)]
    params: Option<Vec<(String, String)>>,
}

/// Every well-formed line (a process killed mid-write leaves a torn last line).
fn read_records(path: &Path) -> Vec<Record> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn outcome(run: &runner::PytestRun, project: &Path, test: &str, exc_type: &str) -> TestOutcome {
    let parsed = traceback::parse(&run.log(), project).ok();
    let failure = parsed.as_ref().and_then(|p| {
        p.failures
            .iter()
            .find(|f| f.test.as_deref() == Some(test))
            .or_else(|| p.failures.first())
    });
    TestOutcome {
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        passed: run.passed(),
        reproduced: failure.is_some_and(|f| {
            // A bare traceback (a command's stderr) names no test: it is the one that ran.
            let same_test = f.test.as_deref() == Some(test)
                || (f.test.is_none()
                    && parsed
                        .as_ref()
                        .is_some_and(|p| p.kind == traceback::LogKind::Cpython));
            same_test && f.exc_type == exc_type
        }),
        exc_type: failure.map(|f| f.exc_type.clone()),
        msg: failure.map(|f| f.msg.clone()),
        duration_ms: millis(run.duration),
    }
}
