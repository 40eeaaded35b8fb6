//! Flaky tests: a test whose outcome differs between runs of the same code (see `docs/proof.md`,
//! "Chance is not proof"). A test that passed in the baseline and fails under a candidate (a
//! bystander) is run again on the original code before the candidate is blamed; failing there
//! too, it is flaky: known from then on, left out of every later judgement (never blamed on a
//! candidate, never worked on, never counted fixed) and reported with its counts.

use super::model::FlakyRuns;

use super::error::SessionError;
use super::lazy::node_id;
use super::prover::Phase;
use super::runs::Runs;
use super::workspace::Workspace;
use crate::verdict::Verdict;

impl Runs<'_> {
    /// The tests among `broke` (they failed under a candidate) that passed in the baseline and
    /// fail on the original code too, in up to `--proof-repeats` runs of them there (each test
    /// until its first failure): flaky, registered, not to be blamed. Tests that failed in the
    /// baseline are left to the judge, and so is every test under the lazy baseline (its own
    /// run on the original code decides).
    pub(super) fn flaky_bystanders(
        &mut self,
        ws: &mut dyn Workspace,
        broke: &[String],
    ) -> Result<Vec<String>, SessionError> {
        // The lazy baseline runs a test it has not seen on the original code before it blames
        // a candidate for it (see `lazy`): that run is this check, once.
        if self.lazy.is_some() {
            return Ok(Vec::new());
        }
        let mut left: Vec<String> = broke
            .iter()
            .filter(|t| !self.flaky.baseline.iter().any(|(b, _)| b == *t))
            .filter(|t| !self.flaky.stable.contains(*t))
            .cloned()
            .collect();
        if left.is_empty() {
            return Ok(Vec::new());
        }
        let now = super::lazy::touched_now(ws);
        let Some(now) = now else {
            return Ok(Vec::new());
        };
        crate::progress::step(|| {
            format!(
                "{} blamed on the candidate: running {} on the original code",
                left.join(", "),
                if left.len() == 1 { "it" } else { "them" }
            )
        });
        for (path, original, _) in &now {
            ws.write(path, original)?;
        }
        let found = self.run_on_original(ws, &mut left);
        for (path, _, bytes) in &now {
            ws.write(path, bytes)?;
        }
        found
    }

    /// Up to `--proof-repeats` runs of `left` on the original code (in the tree): each test
    /// that fails there is flaky (registered, returned) and leaves `left`.
    fn run_on_original(
        &mut self,
        ws: &dyn Workspace,
        left: &mut Vec<String>,
    ) -> Result<Vec<String>, SessionError> {
        let mut flaky = Vec::new();
        let mut passed = 1u32; // the baseline's run
        for _ in 0..self.opts.proof_repeats {
            let mut ids: Vec<String> = Vec::new();
            for t in left.iter() {
                let id = node_id(t).to_string();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let spec = self.prover.spec(ws, &ids, &[]);
            let run = self.prover.exec(&spec, Phase::Probe)?;
            let failures = match self.prover.read(&run, ws.root()) {
                Verdict::Green => Vec::new(),
                Verdict::Failed(f) => f,
                // No verdict: nothing learnt; the judge blames what is left.
                _ => return Ok(flaky),
            };
            for f in failures {
                let Some(t) = f.test.clone().filter(|t| left.contains(t)) else {
                    continue;
                };
                left.retain(|l| *l != t);
                self.flaky.add(FlakyRuns { passed, failed: 1 }, f);
                flaky.push(t);
            }
            if left.is_empty() {
                break;
            }
            passed += 1;
        }
        self.flaky.stable.extend(left.iter().cloned());
        Ok(flaky)
    }
}
