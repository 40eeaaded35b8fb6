//! The unit of proof is a cause, not a test (issue 33; docs/proof.md, "The unit of proof: a
//! cause, and chains"). Failing tests share a cause when they crash at the same site (a
//! crash-site group, [`super::groups`]), crash in the same function of the project, or were
//! searched as one cause by the spectrum ([`crate::localize::cause`]); two causes whose patches
//! edit one file are one cause too (a file's edits are not taken apart). At the end of the loop
//! a cause's patches stay only when every one of its tests passes; every file of a cause left
//! failing is restored to its original bytes, and one more full run then says what the tree as
//! left does, so the exit code and the JSON tell the truth about it.

use super::model::{Cause, CausePatch};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::error::SessionError;
use super::prover::Phase;
use super::runs::Runs;
use super::shared::{failure_key, failure_keys};
use super::workspace::Workspace;
use crate::plan::Candidate;
use crate::traceback::{self, Failure, When};
use crate::verdict::Verdict;

/// A failing test as the causes are built from it.
#[derive(Debug, Clone)]
pub(super) struct Member {
    pub key: (String, When),
    /// The crash-site group.
    pub group: Option<usize>,
    /// The project function it crashed in (file, function), not in a test file.
    pub site: Option<(String, String)>,
}

impl Member {
    pub fn of(f: &Failure, group: Option<usize>) -> Member {
        let site = f.location.as_ref().and_then(|l| {
            let parts: Vec<&str> = l.file.split('/').collect();
            let func = l.func.clone().filter(|f| f != "<module>")?;
            (!traceback::locate::is_test_file(&parts)).then(|| (l.file.clone(), func))
        });
        Member {
            key: failure_key(f),
            group,
            site,
        }
    }
}

/// The causes: each a list of member indices (ascending), in the order of their first member.
/// `links` are tests searched as one cause; `patched` each kept patch's member and file.
pub(super) fn clusters(
    members: &[Member],
    links: &[(String, String)],
    patched: &[(usize, String)],
) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..members.len()).collect();
    fn find(p: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while p[r] != r {
            r = p[r];
        }
        p[i] = r;
        r
    }
    fn join(p: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb)] = ra.min(rb);
        }
    }
    for i in 0..members.len() {
        for j in 0..i {
            let (a, b) = (&members[i], &members[j]);
            let same_group = a.group.is_some() && a.group == b.group;
            let same_site = a.site.is_some() && a.site == b.site;
            if same_group || same_site {
                join(&mut parent, i, j);
            }
        }
    }
    let index = |t: &str| members.iter().position(|m| m.key.0 == t);
    for (a, b) in links {
        if let (Some(i), Some(j)) = (index(a), index(b)) {
            join(&mut parent, i, j);
        }
    }
    for (n, (i, file)) in patched.iter().enumerate() {
        for (j, other) in &patched[..n] {
            if other == file {
                join(&mut parent, *i, *j);
            }
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut root_of: BTreeMap<usize, usize> = BTreeMap::new();
    for i in 0..members.len() {
        let r = find(&mut parent, i);
        match root_of.get(&r) {
            Some(&c) => out[c].push(i),
            None => {
                root_of.insert(r, out.len());
                out.push(vec![i]);
            }
        }
    }
    out
}

/// The causes, and the cause of each failure by its (test, phase).
pub(super) type Audited = (Vec<Cause>, BTreeMap<(String, When), usize>);

/// What the audit works on: the loop's state at its end.
pub(super) struct Audit<'a> {
    pub members: Vec<Member>,
    pub links: &'a [(String, String)],
    /// The kept candidates, and the failure each was kept for.
    pub cands: &'a mut Vec<Candidate>,
    pub cands_for: &'a mut Vec<(String, When)>,
    /// The failing set now (from the last full run with every kept patch).
    pub current: &'a mut BTreeSet<(String, When)>,
    /// Proven content per file.
    pub accepted: &'a mut BTreeMap<PathBuf, Vec<u8>>,
}

/// Keeps a cause's patches only when all its tests pass (see the module docs): restores the
/// others' files, runs the whole selection once more after a restore (again while that run
/// shows a kept cause failing), and returns the causes with the key → cause index map.
pub(super) fn audit(
    s: &mut Runs,
    ws: &mut dyn Workspace,
    mut a: Audit,
) -> Result<Audited, SessionError> {
    for key in a.cands_for.iter() {
        if !a.members.iter().any(|m| &m.key == key) {
            a.members.push(Member {
                key: key.clone(),
                group: None,
                site: None,
            });
        }
    }
    let member_of = |k: &(String, When)| a.members.iter().position(|m| &m.key == k);
    let patched: Vec<(usize, String)> = a
        .cands
        .iter()
        .zip(a.cands_for.iter())
        .filter_map(|(c, k)| Some((member_of(k)?, c.file.clone())))
        .collect();
    let groups = clusters(&a.members, a.links, &patched);
    let cause_of_member: BTreeMap<usize, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(c, ms)| ms.iter().map(move |m| (*m, c)))
        .collect();
    // The cause of each kept candidate (kept in step with `cands` as they are restored).
    let mut cand_cause: Vec<Option<usize>> = a
        .cands_for
        .iter()
        .map(|k| member_of(k).and_then(|m| cause_of_member.get(&m).copied()))
        .collect();
    let patches_of = |c: usize| -> Vec<CausePatch> {
        a.cands
            .iter()
            .zip(&cand_cause)
            .filter(|(_, cc)| **cc == Some(c))
            .map(|(cand, _)| CausePatch {
                file: cand.file.clone(),
                rule: cand.fix.rule.clone(),
                title: cand.fix.title.clone(),
            })
            .collect()
    };
    let mut causes: Vec<Cause> = groups
        .iter()
        .enumerate()
        .map(|(c, ms)| Cause {
            tests: ms.iter().map(|m| a.members[*m].key.0.clone()).collect(),
            status: crate::status::CauseStatus::NotFixed,
            reason: String::new(),
            patches: patches_of(c),
        })
        .collect();
    let mut restored: BTreeSet<usize> = BTreeSet::new();
    // A restore can only make more tests fail: at most one more run per cause.
    for _ in 0..=causes.len() {
        let failing = |c: &Cause, current: &BTreeSet<(String, When)>| -> Vec<String> {
            c.tests
                .iter()
                .filter(|t| current.iter().any(|(k, _)| k == *t))
                .cloned()
                .collect()
        };
        let now: Vec<usize> = (0..causes.len())
            .filter(|c| !restored.contains(c) && !causes[*c].patches.is_empty())
            .filter(|c| !failing(&causes[*c], a.current).is_empty())
            .collect();
        if now.is_empty() {
            break;
        }
        for &c in &now {
            let still = failing(&causes[c], a.current);
            causes[c].reason = restored_reason(&causes[c], &still);
            restored.insert(c);
        }
        restore(ws, &mut a, &mut cand_cause, &restored)?;
        crate::progress::step(|| {
            "a cause left failing was restored: running the tests again".into()
        });
        let run = s.run(ws, &[], Phase::Confirm)?;
        *a.current = match s.prover.read(&run, ws.root()) {
            Verdict::Green => BTreeSet::new(),
            Verdict::Failed(f) => failure_keys(&f),
            other => return Err(SessionError::CauseRunNoVerdict(other.describe())),
        };
    }
    settle_statuses(&mut causes, &restored, a.current);
    let index = a
        .members
        .iter()
        .enumerate()
        .filter_map(|(m, mem)| Some((mem.key.clone(), *cause_of_member.get(&m)?)))
        .collect();
    Ok((causes, index))
}

/// Every file a restored cause's patches touched goes back to its original bytes; its
/// candidates leave the kept list.
fn restore(
    ws: &mut dyn Workspace,
    a: &mut Audit,
    cand_cause: &mut Vec<Option<usize>>,
    restored: &BTreeSet<usize>,
) -> Result<(), SessionError> {
    let originals: BTreeMap<PathBuf, Vec<u8>> = ws.originals().into_iter().collect();
    let keep: Vec<bool> = cand_cause
        .iter()
        .map(|c| !c.is_some_and(|c| restored.contains(&c)))
        .collect();
    let files: BTreeSet<PathBuf> = a
        .cands
        .iter()
        .zip(&keep)
        .filter(|(_, k)| !**k)
        .map(|(c, _)| c.path.clone())
        .collect();
    for path in &files {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let original = originals.get(path).or_else(|| originals.get(&key));
        if let Some(bytes) = original {
            ws.write(path, bytes)?;
        }
        a.accepted.remove(path);
    }
    let mut k = keep.iter();
    a.cands.retain(|_| k.next().copied().unwrap_or(true));
    let mut k = keep.iter();
    a.cands_for.retain(|_| k.next().copied().unwrap_or(true));
    let mut k = keep.iter();
    cand_cause.retain(|_| k.next().copied().unwrap_or(true));
    Ok(())
}

/// Why a cause's patches were restored.
fn restored_reason(c: &Cause, still: &[String]) -> String {
    format!(
        "{} of its {} test{} still fail{} with its patches ({}): a cause is fixed whole or not at \
         all, so every file its {} patch{} touched was restored",
        still.len(),
        c.tests.len(),
        if c.tests.len() == 1 { "" } else { "s" },
        if still.len() == 1 { "s" } else { "" },
        still.join(", "),
        c.patches.len(),
        if c.patches.len() == 1 { "" } else { "es" },
    )
}

/// The status and reason of every cause not restored, from the failing set as left.
fn settle_statuses(
    causes: &mut [Cause],
    restored: &BTreeSet<usize>,
    current: &BTreeSet<(String, When)>,
) {
    use crate::status::CauseStatus;
    for (i, c) in causes.iter_mut().enumerate() {
        if restored.contains(&i) {
            c.status = CauseStatus::Restored;
            continue;
        }
        let failing = c
            .tests
            .iter()
            .filter(|t| current.iter().any(|(k, _)| k == *t))
            .count();
        (c.status, c.reason) = match (c.patches.is_empty(), failing) {
            (false, _) => (
                CauseStatus::Fixed,
                match c.tests.len() {
                    1 => "its test passes with its patches: kept".into(),
                    n => format!("all {n} of its tests pass with its patches: kept"),
                },
            ),
            (true, 0) => (
                CauseStatus::FixedByAnotherPatch,
                "its tests pass with another cause's patches".into(),
            ),
            (true, n) => (
                CauseStatus::NotFixed,
                format!(
                    "no patch was kept for it; {n} of its {} test{} still fail{}",
                    c.tests.len(),
                    if c.tests.len() == 1 { "" } else { "s" },
                    if n == 1 { "s" } else { "" }
                ),
            ),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(test: &str, group: Option<usize>, site: Option<(&str, &str)>) -> Member {
        Member {
            key: (test.into(), When::Call),
            group,
            site: site.map(|(f, g)| (f.into(), g.into())),
        }
    }

    #[test]
    fn tests_join_by_crash_site_function_search_cause_and_patched_file() {
        let members = vec![
            m("t::a", Some(0), Some(("m.py", "f"))),
            m("t::b", Some(0), Some(("m.py", "f"))),
            // Another line of the same function: the same exception path.
            m("t::c", Some(1), Some(("m.py", "f"))),
            // Wrong output in its own assert, searched with t::e as one cause.
            m("t::d", None, None),
            m("t::e", None, None),
            // Independent.
            m("t::f", Some(2), Some(("n.py", "g"))),
            m("t::g", Some(3), Some(("o.py", "h"))),
        ];
        let links = vec![("t::d".to_string(), "t::e".to_string())];
        assert_eq!(
            clusters(&members, &links, &[]),
            vec![vec![0, 1, 2], vec![3, 4], vec![5], vec![6]]
        );
        // Two causes whose patches edit one file are one.
        let patched = vec![(5, "n.py".to_string()), (6, "n.py".to_string())];
        assert_eq!(
            clusters(&members, &links, &patched),
            vec![vec![0, 1, 2], vec![3, 4], vec![5, 6]]
        );
    }

    #[test]
    fn a_cause_left_failing_is_restored_and_says_which_tests_fail() {
        let c = Cause {
            tests: vec!["t::a".into(), "t::b".into()],
            status: crate::status::CauseStatus::NotFixed,
            reason: String::new(),
            patches: vec![CausePatch {
                file: "m.py".into(),
                rule: "r".into(),
                title: "t".into(),
            }],
        };
        assert_eq!(
            restored_reason(&c, &["t::b".to_string()]),
            "1 of its 2 tests still fails with its patches (t::b): a cause is fixed whole or not \
             at all, so every file its 1 patch touched was restored"
        );
        let mut causes = vec![
            c.clone(),
            Cause {
                patches: Vec::new(),
                ..c.clone()
            },
            Cause {
                patches: Vec::new(),
                tests: vec!["t::c".into()],
                ..c
            },
        ];
        let current = BTreeSet::from([("t::b".to_string(), When::Call)]);
        settle_statuses(&mut causes, &BTreeSet::from([0]), &current);
        use crate::status::CauseStatus::*;
        let st: Vec<_> = causes.iter().map(|c| c.status).collect();
        assert_eq!(st, vec![Restored, NotFixed, FixedByAnotherPatch]);
        assert_eq!(
            causes[1].reason,
            "no patch was kept for it; 1 of its 2 tests still fails"
        );
    }
}
