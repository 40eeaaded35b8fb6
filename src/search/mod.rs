//! A ranked search over small edits for failures no rule repairs: a wrong result caught by the
//! test's own `assert`, a `raise` in project code on a wrong branch, a `RecursionError`.
//!
//! Input: the suspicious lines of [`crate::localize`]. For the statement on each of the best
//! [`MAX_LINES`] lines, [`mutate`] proposes typed edits (operators, ±1, bounds, conditions,
//! variables, constants, arguments, a missing `return`, a deleted statement, a guard); each is
//! ranked by `suspiciousness × prior` ([`priors`], data in `rules/search/priors.toml`), smaller
//! edits first among equals, and kept only when the patched file parses. Nothing is run here:
//! the session proves candidates with pytest (see `session/search.rs`). Every candidate is
//! unsafe: it guesses intent from the tests.

pub mod choose;
pub mod data;
pub mod family;
pub mod formats;
pub mod handlers;
pub mod hint;
pub mod loop_step;
pub mod mutate;
pub mod priors;
pub mod sites;
pub mod splits;
pub mod templates;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::edit::{self, Confidence, Fix};
use crate::localize::Suspicious;
use crate::plan::literals::Lit;
use crate::plan::{self, Candidate};
use crate::rules::Category;
use crate::source::SourceFile;
use crate::status::Source;
use crate::syntax;
use crate::syntax::queries;

use self::family::Family;
use self::hint::{Expectation, Tier};
use self::priors::Priors;

/// Suspicious lines whose statements are mutated, best first.
pub const MAX_LINES: usize = 12;

/// Candidates kept at most (the time budget usually ends the search earlier).
pub const MAX_CANDIDATES: usize = 400;

/// Every search candidate's rule id starts with this (`search-compare-op`, ...).
pub const RULE_PREFIX: &str = "search-";

/// A candidate and why it ranks where it does.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub candidate: Candidate,
    pub line: u32,
    pub family: Family,
    /// The line's suspiciousness.
    pub score: f64,
    /// `score × prior`.
    pub rank: f64,
    pub size: usize,
    /// How well the edit's predictable effect fits the expected value ([`hint`]): candidates
    /// of a higher tier go first.
    pub hint: Tier,
    /// A literal of the failing test's expected value the edit introduces into a module that
    /// did not hold it (`if not h: return 3600`): left out before any run (docs/proof.md).
    pub copied: Option<Lit>,
    /// A joint candidate ([`sites`]): the other lines it edits, besides `line`; their
    /// covering tests are part of its proof.
    pub sites: Vec<u32>,
    /// The same edit at every site of its expression the failing tests ran ([`sites`]): tried
    /// right after this one when the failing tests are one (a single edit cannot fix a test
    /// that runs two sites), or when this one is a lead (it fixed some of the cause's tests:
    /// the others may run the other sites). Never before it: alone it may fix them all.
    pub joint: Option<Box<Ranked>>,
}

/// What to search.
pub struct SearchInput<'a> {
    /// The tree to read (the project, or a scratch copy).
    pub root: &'a Path,
    pub suspicious: &'a [Suspicious],
    /// The literal the failing test compares with (`== 2.5`), if any.
    pub expected: Option<&'a str>,
    /// The expected literal and the actual value, when the failure shows both.
    pub expectation: Option<&'a Expectation>,
    pub allow_tests: bool,
    /// The crashed frame's locals and their runtime types, when the failure has one in
    /// project code (the baseline's crash-frame facts, or the probe).
    pub frame: Option<&'a FrameTypes>,
    /// The strings the failure quotes ([`data::failure_words`]): the keys and characters the
    /// data edits try.
    pub words: &'a [String],
    /// The failing test's expected values ([`plan::literals::test_literals`]): a candidate
    /// that introduces one absent from its module says so in [`Ranked::copied`].
    pub test_literals: &'a [Lit],
    /// The failure searched for: its exception and traceback ([`handlers`] widens an `except`
    /// the exception escaped).
    pub failure: Option<&'a crate::traceback::Failure>,
    /// The builtin type the failing check compares with, when the value it got is of another
    /// ([`templates::conversions::wanted_type`]).
    pub wanted_type: Option<&'a str>,
}

/// The runtime types of a crashed frame's locals (see [`SearchInput::frame`]).
#[derive(Debug, Clone, Default)]
pub struct FrameTypes {
    /// The crash site: file relative to the root, 1-based line.
    pub file: String,
    pub line: u32,
    /// name → `type(v).__qualname__` (module-prefixed unless builtin).
    pub types: BTreeMap<String, String>,
}

impl FrameTypes {
    pub fn of(report: &crate::probe::ProbeReport) -> FrameTypes {
        FrameTypes {
            file: report.file.clone(),
            line: report.line as u32,
            types: report
                .locals
                .iter()
                .map(|v| (v.name.clone(), v.type_name.clone()))
                .collect(),
        }
    }
}

/// The search's rule ids, as `select`/`ignore` name them: `search-FAMILY` for each family of
/// edits (`ignore = ["search"]` turns the whole search off).
pub fn rule_ids() -> Vec<String> {
    let mut ids: Vec<String> = Family::ALL
        .iter()
        .map(|f| format!("{RULE_PREFIX}{f}"))
        .collect();
    // In the words' order, as `rules` has always listed them.
    ids.sort();
    ids
}

/// Every generator's edits at one suspicious line; a function's guards once, at its most
/// suspicious line (`guarded` holds the functions that have theirs).
fn line_mutants(
    input: &SearchInput,
    module: &syntax::ParsedModule,
    file: &str,
    line: u32,
    probed: Option<&BTreeMap<String, String>>,
    guarded: &mut BTreeSet<usize>,
) -> Vec<mutate::Mutant> {
    use rustpython_parser::ast::Ranged;
    let priors = Priors::builtin();
    let mut mutants = mutate::mutants(module, line, priors, probed);
    mutants.extend(templates::mutants(
        module,
        line,
        priors,
        probed,
        input.expected,
        input.wanted_type,
    ));
    mutants.extend(data::mutants(module, line, priors, input.words));
    mutants.extend(formats::mutants(module, line, priors, input.words));
    mutants.extend(loop_step::mutants(module, line, priors));
    mutants.extend(splits::mutants(
        module,
        line,
        priors,
        input.words,
        input.expected,
    ));
    mutants.extend(handlers::mutants(module, file, line, priors, input.failure));
    if let Some((_, Some(f))) = queries::statement_at(module, line) {
        if guarded.insert(f.range().start().to_usize()) {
            mutants.extend(mutate::function_mutants(
                module,
                line,
                input.expected,
                priors,
            ));
        }
    }
    mutants
}

/// Ranked candidates, best first: by hint tier, then those that do not silence before those
/// that do ([`plan::shape`]), then `score × prior`, then the smaller edit.
pub fn candidates(input: &SearchInput) -> Vec<Ranked> {
    let lines: Vec<&Suspicious> = input
        .suspicious
        .iter()
        .filter(|s| s.score > 0.0)
        .take(MAX_LINES)
        .collect();
    let mut by_file: BTreeMap<&str, Vec<&Suspicious>> = BTreeMap::new();
    for s in &lines {
        by_file.entry(s.file.as_str()).or_default().push(s);
    }
    // The failure's own frames are sites of the handler edits whatever their rank: a crash
    // line that passing tests run too ranks below lines only the failure ran (the handling
    // of its exception), yet it is the line a `try` failed to protect.
    let top = lines.iter().map(|s| s.score).fold(0.0, f64::max);
    for f in input.failure.map(|f| &f.frames[..]).unwrap_or_default() {
        by_file.entry(f.file.as_str()).or_default();
    }
    let mut out: Vec<Ranked> = Vec::new();
    let mut seen: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut joint_of: Vec<(Vec<u8>, Ranked)> = Vec::new();
    for (file, sus) in by_file {
        let parts: Vec<&str> = file.split('/').collect();
        if crate::traceback::locate::is_test_file(&parts) && !input.allow_tests {
            continue;
        }
        let Ok(path) = plan::confined_path(input.root, file) else {
            continue;
        };
        let Ok(source) = SourceFile::read(&path) else {
            continue;
        };
        let Ok(module) = syntax::parse(&source) else {
            continue;
        };
        let old_literals = plan::literals::module_literals(&module);
        let tops = module.top_level_spans();
        let mut guarded: BTreeSet<usize> = BTreeSet::new();
        use rustpython_parser::ast::Ranged;
        let func_start = |line: u32| {
            queries::statement_at(&module, line)
                .and_then(|(_, f)| f)
                .map(|f| f.range().start().to_usize())
        };
        // The crashed frame's types hold for the statements of its own function only.
        let crashed = input
            .frame
            .filter(|f| f.file == file)
            .and_then(|f| Some((func_start(f.line)?, &f.types)));
        let frames: Vec<(u32, f64, bool)> = input
            .failure
            .map(|f| &f.frames[..])
            .unwrap_or_default()
            .iter()
            .filter(|f| f.file == file && !sus.iter().any(|s| s.line == f.line))
            .map(|f| (f.line, top, true))
            .collect();
        let sites = sus.iter().map(|s| (s.line, s.score, false)).chain(frames);
        // Every line of this file a failing test ran, not only the best ones: the other sites
        // of a joint edit.
        let run: BTreeSet<u32> = input
            .suspicious
            .iter()
            .filter(|s| s.file == file && s.score > 0.0)
            .map(|s| s.line)
            .collect();
        let sites_of = self::sites::Sites::new(&module, &run);
        let context = FileContext {
            input,
            file,
            path: &path,
            source: &source,
            module: &module,
            tops: &tops,
            old_literals: &old_literals,
        };
        for (line, score, frame_only) in sites {
            let probed = crashed
                .filter(|(start, _)| func_start(line) == Some(*start))
                .map(|(_, types)| types);
            let mutants = if frame_only {
                handlers::mutants(&module, file, line, Priors::builtin(), input.failure)
            } else {
                line_mutants(input, &module, file, line, probed, &mut guarded)
            };
            for m in mutants {
                // The same edit at the other sites of its expression the failing tests ran,
                // as one more candidate (see [`sites`]).
                let others = match &m.edits[..] {
                    [e] if m.family != Family::MultiSite => sites_of.same_edit_elsewhere(e),
                    _ => Vec::new(),
                };
                let hint = input.expectation.map_or(Tier::None, |e| e.tier(&m.effects));
                let size = m.size();
                // A data edit is titled by the line it edits (the data's), not the checked one.
                let at = match m.edits.first() {
                    Some(e) if data::is_data_family(m.family) => module
                        .line_starts()
                        .partition_point(|&start| start <= e.range.start)
                        as u32,
                    _ => line,
                };
                let joint = (!others.is_empty()).then(|| {
                    let mut at_lines: Vec<u32> = others.iter().map(|(l, _)| *l).collect();
                    at_lines.push(at);
                    at_lines.sort();
                    at_lines.dedup();
                    let listed: Vec<String> = at_lines.iter().map(u32::to_string).collect();
                    let mut edits = m.edits.clone();
                    edits.extend(others.iter().map(|(_, e)| e.clone()));
                    edits.sort_by_key(|e| e.range.start);
                    let fix = Fix::new(
                        format!(
                            "{} at {file}:{} ({} sites)",
                            m.title,
                            listed.join(", "),
                            at_lines.len()
                        ),
                        format!("{RULE_PREFIX}{}", Family::MultiSite),
                        Confidence::Low,
                        edits,
                    );
                    let lines_edited: Vec<u32> = others
                        .iter()
                        .map(|(l, _)| *l)
                        .filter(|&l| l != line)
                        .collect();
                    (fix, lines_edited)
                });
                let fix = Fix::new(
                    format!("{} at {file}:{at}", m.title),
                    format!("{RULE_PREFIX}{}", m.family),
                    Confidence::Low,
                    m.edits,
                );
                let made = Made {
                    line,
                    family: m.family,
                    score,
                    rank: score * m.prior,
                    hint,
                };
                let Some(single) = made.ranked(&context, fix, size, Some(&mut seen)) else {
                    continue;
                };
                if let Some((fix, lines_edited)) = joint {
                    let size = mutate::edits_size(&fix.edits);
                    if let Some(mut r) = made.ranked(&context, fix, size, None) {
                        r.sites = lines_edited;
                        joint_of.push((single.candidate.patched.clone(), r));
                    }
                }
                out.push(single);
            }
        }
    }
    // A candidate that silences (a guard that makes the function do nothing, an exit, a
    // deleted statement) goes after the others of its hint tier (docs/proof.md).
    out.sort_by(|a, b| {
        b.hint
            .cmp(&a.hint)
            .then(
                a.candidate
                    .silencing
                    .is_some()
                    .cmp(&b.candidate.silencing.is_some()),
            )
            .then(b.rank.total_cmp(&a.rank))
            .then(a.size.cmp(&b.size))
            .then_with(|| a.candidate.file.cmp(&b.candidate.file))
            .then(a.line.cmp(&b.line))
    });
    out.truncate(MAX_CANDIDATES);
    with_joint_edits(out, joint_of)
}

/// `out` with each joint candidate (`joint_of`: the single's patched bytes, the joint
/// candidate) attached to the single edit it repeats, the best-ranked single when several
/// make the same one. The session tries it right after that single (see [`Ranked::joint`]).
fn with_joint_edits(mut out: Vec<Ranked>, joint_of: Vec<(Vec<u8>, Ranked)>) -> Vec<Ranked> {
    let mut joint: BTreeMap<Vec<u8>, Ranked> = BTreeMap::new();
    for (single, r) in joint_of {
        joint.entry(single).or_insert(r);
    }
    let mut attached: BTreeSet<Vec<u8>> = BTreeSet::new();
    for r in &mut out {
        r.joint = joint
            .remove(&r.candidate.patched)
            .filter(|j| attached.insert(j.candidate.patched.clone()))
            .map(Box::new);
    }
    out
}

/// The module a candidate edits, as [`Made::ranked`] reads it.
struct FileContext<'a> {
    input: &'a SearchInput<'a>,
    file: &'a str,
    path: &'a Path,
    source: &'a SourceFile,
    module: &'a syntax::ParsedModule,
    tops: &'a [std::ops::Range<usize>],
    old_literals: &'a [Lit],
}

/// Where a candidate comes from and how it ranks.
struct Made {
    line: u32,
    family: Family,
    score: f64,
    rank: f64,
    hint: Tier,
}

impl Made {
    /// The ranked candidate of `fix`, when its edits apply and the file re-parses; with `seen`,
    /// none when an earlier candidate made the same file.
    fn ranked(
        &self,
        cx: &FileContext,
        fix: Fix,
        size: usize,
        seen: Option<&mut BTreeSet<Vec<u8>>>,
    ) -> Option<Ranked> {
        let (source, module, file) = (cx.source, cx.module, cx.file);
        // Only edits that apply and re-parse become candidates; duplicates go. The one
        // parse also tells what the edit does to its function and which literals it
        // brings (in a large module, parsing is most of the cost of a candidate).
        let text = edit::apply(source.text(), &fix.edits).ok()?;
        let patched = source.encode(&text).ok()?;
        if patched == source.bytes() || seen.is_some_and(|s| !s.insert(patched.clone())) {
            return None;
        }
        // Most edits (an operator, a constant) can neither silence nor write the test's
        // literal: for them, the top-level statement holding the edits parsing is the
        // file parsing (the rest is unchanged), at a fraction of a large module's cost.
        let read = plan::shape::may_change_shape(&fix.edits)
            || plan::literals::may_introduce(&fix.edits, cx.input.test_literals);
        let after = if read {
            Some(syntax::parse_text(cx.path, &text).ok()?)
        } else {
            let changed =
                edit::statement_holding(cx.tops, &fix.edits, text.len(), module.text().len())
                    .map(|(_, r)| r);
            let whole = changed.and_then(|r| text.get(r)).unwrap_or(&text);
            syntax::parse_text(cx.path, whole).ok()?;
            None
        };
        let diff = edit::unified_diff_bytes(file, source.bytes(), &patched);
        let silencing = after
            .as_ref()
            .and_then(|a| plan::shape::shape_of(module, a, &fix.edits).silencing);
        let copied = after
            .as_ref()
            .and_then(|a| plan::literals::copied_in(cx.old_literals, a, cx.input.test_literals));
        Some(Ranked {
            candidate: Candidate {
                file: file.to_string(),
                fix,
                category: Category::Logic,
                safe: false,
                source: Source::Search,
                diff: diff.text,
                diff_encoding: diff.encoding,
                silencing,
                coverage: None,
                path: cx.path.to_path_buf(),
                original: source.bytes().to_vec(),
                patched,
            },
            line: self.line,
            family: self.family,
            score: self.score,
            rank: self.rank,
            size,
            hint: self.hint,
            copied,
            sites: Vec::new(),
            joint: None,
        })
    }
}

/// What an attempt record says about a search candidate (`search` in the JSON).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AttemptFacts {
    /// `predicted` or `consistent` when the expected value ranked the edit up ([`hint`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
    /// On the kept candidate: how many candidates passed every proof and were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plausible: Option<usize>,
    /// On a candidate that passed every proof: the tests that ran the edited line, passed
    /// before and now run other lines (its changed behaviours; fewest wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<String>>,
    /// On the kept candidate: the tests that ruled out another candidate which passed the
    /// failing tests (they failed with it, or their behaviour changed where this one's did
    /// not).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decided_by: Vec<String>,
    /// A lead: the cause's failing tests this candidate made pass, while others still failed
    /// and no passing test that runs its line broke (see `docs/search.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lead: Vec<String>,
    /// A second edit proven on top of a lead: the lead's attempt number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combines: Option<usize>,
    /// On the kept candidate: the other plausible ones, best first (reported on the patch).
    #[serde(skip)]
    pub alternatives: Vec<choose::Alternative>,
}

/// What a reviewer should check in a search patch (the JSON's `review`).
pub fn review_note() -> String {
    "a search over small edits guessed intent from the tests: check that the change is what the \
     code means, not only what the tests pin"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search's candidates for `source` (file `m.py`) at `lines`, with the test expecting
    /// `expected`.
    fn ranked(source: &str, lines: &[u32], expected: Option<&str>, test: &[Lit]) -> Vec<Ranked> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), source).unwrap();
        let suspicious: Vec<Suspicious> = lines
            .iter()
            .map(|&line| Suspicious {
                file: "m.py".into(),
                line,
                score: 1.0,
            })
            .collect();
        candidates(&SearchInput {
            root: dir.path(),
            suspicious: &suspicious,
            expected,
            expectation: None,
            allow_tests: false,
            frame: None,
            words: &[],
            test_literals: test,
            failure: None,
            wanted_type: None,
        })
    }

    /// Within a hint tier, every silencing edit (a deleted statement, a guard that returns
    /// before the function's `log(...)`) comes after every other edit; the guards that would
    /// write the test's `"hi"` into the module say so in `copied`, the others do not.
    #[test]
    fn silencing_edits_last_and_test_literals_marked() {
        let src =
            "def greeting(name):\n    text = f\"hi {name}\"\n    log(text)\n    return text\n";
        let hi = [Lit::Str("hi".into())];
        let all = ranked(src, &[2, 3, 4], Some("\"hi\""), &hi);
        assert!(all.iter().any(|r| r.candidate.silencing.is_some()));
        let first = all
            .iter()
            .position(|r| r.candidate.silencing.is_some())
            .unwrap();
        assert!(
            all[first..].iter().all(|r| r.candidate.silencing.is_some()),
            "{:#?}",
            all.iter()
                .map(|r| (&r.candidate.fix.title, r.candidate.silencing))
                .collect::<Vec<_>>()
        );
        let deleted = all
            .iter()
            .find(|r| r.family == Family::DeleteStmt)
            .expect("a deleted statement");
        assert_eq!(
            deleted.candidate.silencing,
            Some(crate::status::Silencing::Deleted)
        );
        let copying: Vec<&str> = all
            .iter()
            .filter(|r| r.copied.is_some())
            .map(|r| r.candidate.fix.title.as_str())
            .collect();
        assert_eq!(
            copying,
            [
                "guard `if not name: return \"hi\"` at m.py:2",
                "guard `if name is None: return \"hi\"` at m.py:2"
            ]
        );
        let none_guard = all
            .iter()
            .find(|r| r.candidate.fix.title == "guard `if not name: return None` at m.py:2")
            .expect("the function's own value stands behind the test's");
        assert_eq!(
            none_guard.candidate.silencing,
            Some(crate::status::Silencing::SkipsWork)
        );
        assert_eq!(none_guard.copied, None);
    }

    /// A frame of the failure inside a `try` body is a site of `except-widen` even when the
    /// spectrum ranks other lines (the handling of the exception) above it, at the best
    /// suspicious score.
    #[test]
    fn the_failures_own_frames_are_handler_sites() {
        let dir = tempfile::tempdir().unwrap();
        let src = "def to_int(s, default=0):\n    try:\n        return int(float(s))\n    except (TypeError, ValueError):\n        return default\n";
        std::fs::write(dir.path().join("m.py"), src).unwrap();
        std::fs::write(dir.path().join("other.py"), "x = 1\ny = 2\n").unwrap();
        let suspicious = [Suspicious {
            file: "other.py".into(),
            line: 2,
            score: 0.9,
        }];
        let failure = handlers::tests::failure("OverflowError", &[3]);
        let got = candidates(&SearchInput {
            root: dir.path(),
            suspicious: &suspicious,
            expected: None,
            expectation: None,
            allow_tests: false,
            frame: None,
            words: &[],
            test_literals: &[],
            failure: Some(&failure),
            wanted_type: None,
        });
        let widen: Vec<(&str, u32, f64)> = got
            .iter()
            .filter(|r| r.family == Family::ExceptWiden)
            .map(|r| (r.candidate.file.as_str(), r.line, r.score))
            .collect();
        assert_eq!(widen, vec![("m.py", 3, 0.9)]);
    }

    /// A single edit whose expression the failing tests ran at other places carries the joint
    /// candidate: the same edit at each, one patch, its family's edit under `multi-site`.
    #[test]
    fn a_repeated_test_gets_a_joint_candidate() {
        let src = "def a(xs=None):\n    if xs:\n        return 1\n    return 0\n\n\ndef b(xs=None):\n    if xs:\n        return 2\n    return 0\n";
        let all = ranked(src, &[2, 4, 8, 10], None, &[]);
        let single = all
            .iter()
            .find(|r| r.family == Family::NoneTest && r.line == 2)
            .expect("the none test at line 2");
        let joint = single.joint.as_ref().expect("its joint candidate");
        assert_eq!(joint.candidate.fix.rule, "search-multi-site");
        assert_eq!(
            joint.candidate.fix.title,
            "`xs` → `xs is not None` at m.py:2, 8 (2 sites)"
        );
        assert_eq!(joint.sites, vec![8]);
        assert_eq!(
            String::from_utf8(joint.candidate.patched.clone())
                .unwrap()
                .matches("if xs is not None:")
                .count(),
            2
        );
        // The same joint is attached once, to the best-ranked single that makes it.
        let made = all
            .iter()
            .filter(|r| {
                r.joint
                    .as_ref()
                    .is_some_and(|j| j.candidate.patched == joint.candidate.patched)
            })
            .count();
        assert_eq!(made, 1);
    }

    /// Every family is one some generator makes (the priors' check makes each have a prior).
    #[test]
    fn every_family_has_a_generator() {
        let mut made: Vec<super::Family> = super::mutate::FAMILIES
            .iter()
            .copied()
            .chain(super::templates::families())
            .chain(super::data::FAMILIES.iter().copied())
            .chain(super::splits::FAMILIES.iter().copied())
            .chain(super::handlers::FAMILIES.iter().copied())
            .chain(super::sites::FAMILIES.iter().copied())
            .collect();
        made.sort();
        made.dedup();
        assert_eq!(made, super::Family::ALL);
    }
}
