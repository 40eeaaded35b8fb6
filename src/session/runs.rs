//! The run's state above its prover: the runs that also teach (a baseline's crash-frame facts,
//! a confirming full run that times the lazy baseline, an install), the selection `--module`
//! names, the attempt records. Every run itself goes through the [`Prover`].

use std::collections::BTreeSet;
use std::time::Instant;

use super::error::SessionError;
use super::model::{Attempt, Patch, PatchStep};
use super::prover::{Phase, Prover};
use super::shared::now_ms;
use super::shared::Options;
use super::workspace::Workspace;
use crate::install::{self, Install};
use crate::plan::Candidate;
use crate::probe::{self, ProbeReport};
use crate::rules::Category;
use crate::runner::{Interpreter, PytestRun, RunSpec};
use crate::source::{Encoding, SourceFile};
use crate::status::{Applicability, AttemptOutcome, Source};
use crate::traceback::Failure;
use crate::transform::ProbeFacts;
use crate::verdict::{self, Verdict};

/// The run's prover and what its runs taught it: the crash-frame facts, the tests outside a
/// narrow selection, the lazy baseline, the flaky tests, the installs, the notes. What only
/// runs and judges is the [`Prover`]'s.
pub(super) struct Runs<'a> {
    pub(super) opts: &'a Options,
    /// Every judge run, counted and timed under the deadline.
    pub(super) prover: Prover<'a>,
    pub(super) attempt_no: usize,
    /// `--install-missing`: every install tried (each distribution once per run).
    pub(super) installed: Vec<Install>,
    /// `--install-missing`: the patches that declare what it installed.
    pub(super) declared: Vec<Patch>,
    /// The plugin's crash-frame facts from the latest baseline run.
    pub(super) facts: probe::frame_facts::Baseline,
    /// Under a narrow selection, the tests outside it (see [`super::outside`]).
    pub(super) outside: Option<super::known::Outside>,
    /// With the log given: the lazy baseline (see [`super::lazy`]) until a full run is accepted.
    pub(super) lazy: Option<super::known::Lazy>,
    /// Notes for the report (a stale log).
    pub(super) notes: Vec<String>,
    /// The flaky tests found so far (see [`super::flaky`]).
    pub(super) flaky: super::known::Flaky,
}

impl<'a> Runs<'a> {
    /// Nothing run yet; the time budget counts from `started`.
    pub(super) fn new(opts: &'a Options, python: Interpreter, started: Instant) -> Runs<'a> {
        Runs {
            opts,
            prover: Prover::new(opts, python, started),
            attempt_no: 0,
            installed: Vec::new(),
            declared: Vec::new(),
            facts: Default::default(),
            outside: None,
            lazy: None,
            notes: Vec::new(),
            flaky: Default::default(),
        }
    }
}

impl Runs<'_> {
    pub(super) fn run(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        self.run_with(ws, node_ids, &[], phase)
    }

    pub(super) fn run_with(
        &mut self,
        ws: &dyn Workspace,
        node_ids: &[String],
        extra: &[&str],
        phase: Phase,
    ) -> Result<PytestRun, SessionError> {
        let full_confirm = phase == Phase::Confirm && node_ids.is_empty() && extra.is_empty();
        let mut spec = if full_confirm {
            self.full_spec(ws)
        } else {
            self.prover.spec(ws, node_ids, extra)
        };
        // A baseline run records crash-frame facts (pytest only: the plugin is pytest's).
        let facts = phase == Phase::Baseline && self.opts.judge.is_none();
        if facts {
            spec.env.extend(self.facts.arm(ws.root()));
        }
        let run = self.prover.exec(&spec, phase)?;
        if facts {
            self.facts.collect(ws.root());
        }
        if full_confirm {
            self.lazy_timed(&run);
        }
        Ok(run)
    }

    /// A confirming full run's spec: pytest-xdist when it pays, and under the lazy baseline the
    /// first full run's own limit.
    pub(super) fn full_spec(&self, ws: &dyn Workspace) -> RunSpec {
        let mut spec = self.prover.spec(ws, &[], &[]);
        if self.opts.judge.is_none() {
            crate::xdist::add(
                &mut spec,
                &self.prover.python,
                self.opts.xdist,
                self.prover.baseline,
            );
            self.lazy_full_limit(&mut spec);
        }
        spec
    }

    /// `--install-missing` for one dependency failure: pip installs the missing module's
    /// distribution (once per run), then the judge runs the whole selection again. Returns
    /// that run's failures, or `None` when nothing was installed (not a missing module, tried
    /// before, pip failed, no verdict); `suggestion` then says why.
    pub(super) fn install_missing(
        &mut self,
        ws: &mut dyn Workspace,
        failure: &Failure,
        suggestion: &mut Option<String>,
    ) -> Result<Option<Vec<Failure>>, SessionError> {
        let Some(module) = install::missing_module(failure) else {
            return Ok(None);
        };
        let dist = match install::allowed(&module, &self.opts.install_dists) {
            Ok(dist) => dist,
            Err(why) => {
                *suggestion = Some(why);
                return Ok(None);
            }
        };
        if self.installed.iter().any(|i| i.distribution == dist) {
            return Ok(None);
        }
        let done = install::pip_install(&self.prover.python, &module, &dist, &ws.env());
        let ok = done.ok;
        let detail = done.detail.clone();
        self.installed.push(done);
        if !ok {
            *suggestion = Some(format!(
                "`python -m pip install {dist}` failed (--install-missing): {detail}"
            ));
            return Ok(None);
        }
        let run = self.run(ws, &[], Phase::Baseline)?;
        let after = self
            .prover
            .read(&run, ws.root())
            .failures()
            .map(<[Failure]>::to_vec);
        if after.is_some() {
            // A full run's failures become the reference set: the lazy baseline is complete.
            self.lazy = None;
        }
        let python = self.prover.python.path.display();
        let left = format!(
            "{dist} stays installed in {python} (`python -m pip uninstall {dist}` removes it) \
             and is declared nowhere"
        );
        match &after {
            None => {
                *suggestion = Some(format!(
                    "installed {dist} (--install-missing), but the run after it gave no \
                     verdict; {left}"
                ));
            }
            // An install that did not supply the module fixed nothing: declaring it would
            // keep a patch that is no fix.
            Some(after)
                if after
                    .iter()
                    .any(|f| f.exc_type == failure.exc_type && f.msg == failure.msg) =>
            {
                *suggestion = Some(format!(
                    "installed {dist} (--install-missing), but the module `{module}` is still \
                     missing after it: {dist} does not provide it; {left}"
                ));
            }
            Some(_) => {
                let declared = self.declare(ws, &dist)?;
                if let Some(last) = self.installed.last_mut() {
                    last.declared = declared;
                }
                *suggestion = Some(format!(
                    "installed {dist} (--install-missing), but the failure persists: {}",
                    suggestion
                        .as_deref()
                        .unwrap_or("check the project's dependencies")
                ));
            }
        }
        Ok(after)
    }

    /// The installed `dist` added to the project's declared dependencies (see
    /// [`install::declare`]): written through the workspace (journaled like every patch) and
    /// reported as a patch of its own with a review note. Returns the file that declares it.
    fn declare(
        &mut self,
        ws: &mut dyn Workspace,
        dist: &str,
    ) -> Result<Option<String>, SessionError> {
        use install::declare::Declaration;
        match install::declare::declare(ws.root(), dist) {
            Declaration::Add {
                file,
                place,
                before,
                after,
            } => {
                ws.write(&ws.root().join(&file), &after)?;
                let diff = crate::edit::unified_diff_bytes(&file, &before, &after);
                let title =
                    format!("declare {dist} in {file} ({place}), installed by --install-missing");
                let review = vec![format!(
                    "--install-missing installed {dist} from the package index: check that it is \
                     the distribution the project means, and add the version constraint it needs"
                )];
                self.declared.push(Patch {
                    file: file.clone(),
                    rules: vec![install::declare::RULE.to_string()],
                    titles: vec![title.clone()],
                    safe: false,
                    applicability: Applicability::Unsafe,
                    source: Source::Rule,
                    steps: vec![PatchStep {
                        rule: install::declare::RULE.to_string(),
                        title,
                        safe: false,
                        review: review.clone(),
                        diff: diff.text.clone(),
                    }],
                    review,
                    validated: true,
                    diff: diff.text,
                    diff_encoding: diff.encoding,
                    alternatives: Vec::new(),
                    // Proven by the run after the install (no candidate's proof runs), and a
                    // declaration, not one failure's fix: in `patches[]` and the combined diff.
                    proven_by: Vec::new(),
                    kept_for: Vec::new(),
                    bytes: Some((before.clone(), after.clone())),
                });
                Ok(Some(file))
            }
            Declaration::Already { file, .. } => Ok(Some(file)),
            Declaration::Nowhere(why) => {
                self.notes.push(format!(
                    "--install-missing installed {dist} but did not declare it ({why}): add it \
                     to the project's dependencies"
                ));
                Ok(None)
            }
        }
    }

    /// `--module`: a node id pytest can select, or a bare test name matched against the
    /// collected ids (`test_x` matches `tests/a.py::test_x`, `...::TestY::test_x` and every
    /// `test_x[param]`). Nothing matching is bad input, in pytest's own words where it has some.
    pub(super) fn resolve_selection(
        &mut self,
        ws: &dyn Workspace,
        wanted: &str,
    ) -> Result<BTreeSet<String>, SessionError> {
        let is_node_id = wanted.contains("::") || wanted.contains(".py");
        let ids: Vec<String> = if is_node_id {
            vec![wanted.to_string()]
        } else {
            Vec::new()
        };
        let run = self.run_with(ws, &ids, &["--collect-only", "-q"], Phase::Selection)?;
        let collected: Vec<String> = String::from_utf8_lossy(&run.stdout)
            .lines()
            .filter(|l| l.contains("::") && !l.starts_with(' '))
            .map(|l| l.trim_end().to_string())
            .collect();
        match verdict::read(&run, ws.root()) {
            Verdict::Usage(m) => {
                return Err(SessionError::ModuleRefused {
                    module: wanted.to_string(),
                    said: m,
                })
            }
            Verdict::Error(m) => return Err(SessionError::CollectNoVerdict(m)),
            Verdict::TimedOut => return Err(SessionError::CollectTimedOut),
            _ => {}
        }
        let matched: BTreeSet<String> = collected
            .into_iter()
            .filter(|id| {
                if is_node_id {
                    return true;
                }
                let last = id.rsplit("::").next().unwrap_or(id);
                let bare = last.split('[').next().unwrap_or(last);
                last == wanted || bare == wanted || id.ends_with(&format!("::{wanted}"))
            })
            .collect();
        if matched.is_empty() {
            return Err(SessionError::ModuleMatchesNothing {
                module: wanted.to_string(),
            });
        }
        Ok(matched)
    }

    pub(super) fn attempt_record(
        &mut self,
        failure: &Failure,
        category: Category,
        step: usize,
        cand: &Candidate,
        run: &PytestRun,
        llm: Option<&mut crate::llm::Llm>,
    ) -> Attempt {
        self.attempt_no += 1;
        Attempt {
            attempt: self.attempt_no,
            test: failure.test.clone(),
            step,
            category,
            file: cand.file.clone(),
            rule: cand.fix.rule.clone(),
            title: cand.fix.title.clone(),
            safe: cand.safe,
            applicability: Applicability::of(cand.safe),
            source: cand.source,
            diff: cand.diff.clone(),
            outcome: AttemptOutcome::StillFailing,
            broke: Vec::new(),
            new_failure: None,
            confirmed_by: None,
            exit_code: run.exit_code,
            stdout_tail: tail(&run.stdout, 40),
            stderr_tail: tail(&run.stderr, 40),
            timestamp_ms: now_ms(),
            duration_ms: 0,
            silencing: cand.silencing,
            search: None,
            proof: None,
            repeats: None,
            proven_by: Vec::new(),
            // A model's candidate carries the request and answer it came from.
            exchange: match cand.source {
                Source::Llm => llm.and_then(|l| l.pending.take()),
                _ => None,
            },
        }
    }
}

/// The probe's findings, by text range of the probed file.
pub(super) fn probe_facts(report: &ProbeReport) -> ProbeFacts {
    let source = std::fs::read(&report.path)
        .ok()
        .and_then(|b| SourceFile::from_bytes(&report.path, b).ok());
    let range = |e: &probe::ExprValue| {
        let s = source.as_ref()?;
        Some(text_offset(s, e.range[0])?..text_offset(s, e.range[1])?)
    };
    let mut facts = ProbeFacts {
        python_version: report.python_version.map(|[a, b]| (a, b)),
        scope: report.scope.clone(),
        ..ProbeFacts::default()
    };
    for e in &report.exprs {
        let Some(r) = range(e) else { continue };
        if let Some(v) = &e.value {
            facts.types.push((r.clone(), v.type_name.clone()));
        }
        if let Some(d) = &e.dir {
            facts.dirs.push((r.clone(), d.clone()));
        }
        if let Some(p) = &e.params {
            facts.params.push((r, p.clone()));
        }
    }
    facts
}

/// File byte offset → offset in the decoded text (BOM dropped; latin-1 bytes ≥ 0x80 are two
/// bytes in the text).
pub(super) fn text_offset(source: &SourceFile, byte: usize) -> Option<usize> {
    let bytes = source.bytes();
    let bom = if source.has_bom() { 3 } else { 0 };
    let body = bytes.get(bom..byte)?;
    Some(match source.encoding() {
        Encoding::Latin1 => body.iter().map(|&b| if b < 0x80 { 1 } else { 2 }).sum(),
        _ => body.len(),
    })
}

/// The last `n` lines of a run's output (the token discipline of the original design).
pub(super) fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
