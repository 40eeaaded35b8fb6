//! One search per cause, and two-edit fixes (issue 22, item 2).
//!
//! Wrong-output failures each fail in their own test's `assert`, so crash-site groups never
//! join them; the spectrum does ([`localize::cause`]): the failing tests whose most suspicious
//! lines overlap are one cause. The search of the first of them ranks the lines with Ochiai over
//! the cause's failing tests only, runs every test of the cause in each candidate's targeted run,
//! and the others are not searched again: they are fixed by its patch, or share its outcome.
//!
//! Partial fitness: with a cause of several tests the targeted run goes on past a failure (no
//! `-x`), so a candidate that makes some of them pass is seen; when the passing tests that run
//! its line still pass, it is kept as a **lead**. When no single edit fixes the whole cause, the
//! best lead (most tests fixed, then the search's order) stays written and a second edit is
//! searched at the lines the remaining failing tests run (one more coverage run, with the lead
//! in place, ranked over those tests only); each combination is proven like any candidate
//! (every test of the cause, the passing neighbours, the whole suite). Two edits at most.

use std::time::Instant;

use super::searched::{covering, prove_searched, ranked_candidates, titled, Suspects};
use super::targeted::{cause_coverage, cause_tests};
use crate::localize;
use crate::session::cause_state::Lead;
use crate::session::error::SessionError;
use crate::session::work::{Fixed, Work};
use crate::traceback::Failure;

/// Second edits tried on top of the lead at most (inside `--search-time` as well): the lines of
/// the remaining failures are few, and their best candidates come first.
pub const MAX_SECOND_EDITS: usize = 60;

/// No single edit fixed the cause: the best lead with a second edit (see the module docs).
/// `None` when there is no lead, or no combination passed (every file is as before; the
/// step's reason says what was tried).
pub(in crate::session) fn combine_lead(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
) -> Result<Option<Fixed>, SessionError> {
    // Most tests fixed, then the earliest (the search's order).
    let Some(best) = (0..w.ctx.cause.leads.len())
        .min_by_key(|&i| (std::cmp::Reverse(w.ctx.cause.leads[i].fixed.len()), i))
    else {
        return Ok(None);
    };
    let lead = w.ctx.cause.leads.swap_remove(best);
    w.ctx.cause.leads.clear();
    let remaining: Vec<String> = cause_tests(w, test)
        .into_iter()
        .filter(|t| !lead.fixed.contains(t))
        .collect();
    // The lead stays in the tree (and counts as the file's proven content, so that a
    // rejected second edit puts the lead back, not the original) while the second edit is
    // searched.
    let path = lead.cand.path.clone();
    let before = w.ctx.accepted.get(&path).cloned();
    let previous = w.previous(&lead.cand);
    w.ws.write(&path, &lead.cand.patched)?;
    w.ctx
        .accepted
        .insert(path.clone(), lead.cand.patched.clone());
    w.ctx.cause.combining = true;
    let found = second_edit(w, failure, why, test, deadline, &lead, &remaining);
    w.ctx.cause.combining = false;
    let found = found?;
    match &found {
        Some((steps, _)) => {
            for c in steps {
                w.ctx.accepted.insert(c.path.clone(), c.patched.clone());
            }
        }
        None => {
            match before {
                Some(b) => w.ctx.accepted.insert(path.clone(), b),
                None => w.ctx.accepted.remove(&path),
            };
            w.ws.write(&path, &previous)?;
        }
    }
    Ok(found)
}

pub(in crate::session) fn second_edit(
    w: &mut Work<'_, '_>,
    failure: &Failure,
    why: &str,
    test: &str,
    deadline: Instant,
    lead: &Lead,
    remaining: &[String],
) -> Result<Option<Fixed>, SessionError> {
    let lead_no = w.ctx.attempts.get(lead.attempt).map(|a| a.attempt);
    let said = |n: usize| {
        format!(
            "{why}; no single edit fixed the {} tests of the cause, and the best lead (it \
             fixed {}) with {n} second edit{} at the lines the {} still failing test{} \
             ran did not pass",
            lead.fixed.len() + remaining.len(),
            lead.fixed.join(", "),
            if n == 1 { "" } else { "s" },
            remaining.len(),
            if remaining.len() == 1 { "" } else { "s" },
        )
    };
    let spectrum = match cause_coverage(w, test)? {
        Some(sp) => sp,
        None => {
            w.ctx.reason = Some(said(0));
            return Ok(None);
        }
    };
    let still: Vec<String> = remaining
        .iter()
        .filter(|t| spectrum.tests.get(*t).is_some_and(|c| c.failed))
        .cloned()
        .collect();
    let spectrum = localize::cause::restrict(&spectrum, &still);
    let ranked = localize::rank(&spectrum, |_, _| true);
    let suspects = Suspects::new(&ranked, &spectrum, None);
    let Some(candidates) = ranked_candidates(w, failure, why, &suspects) else {
        w.ctx.reason = Some(said(0));
        return Ok(None);
    };
    let mut tried = 0usize;
    let total = candidates.len().min(MAX_SECOND_EDITS);
    for (i, r) in candidates.into_iter().take(MAX_SECOND_EDITS).enumerate() {
        if crate::process::interrupted() {
            break;
        }
        if Instant::now() >= deadline || !w.s.prover.time_for_a_candidate() {
            w.ctx.untried += total - i;
            w.ctx.reason = Some(format!(
                "{}; the time ran out (--search-time {} s, --time-budget)",
                said(tried),
                w.s.opts.search_time.as_secs()
            ));
            return Ok(None);
        }
        if w.ctx.already_rejected(failure, &r.candidate) {
            continue;
        }
        tried += 1;
        let covering = covering(&spectrum, &r);
        let hint = r.hint;
        let cand = titled(r, covering.len());
        if let Some(after) = prove_searched(w, failure, &cand, hint, &covering, &spectrum)? {
            if let Some(a) = w.ctx.attempts.last_mut() {
                a.search.get_or_insert_with(Default::default).combines = lead_no;
            }
            return Ok(Some((vec![lead.cand.clone(), cand], after)));
        }
    }
    w.ctx.reason = Some(said(tried));
    Ok(None)
}
