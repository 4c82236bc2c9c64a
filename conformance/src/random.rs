//! Long seeded random walks over a preset (typically a larger one than exhaustive can cover),
//! with proptest shrinking a diverging walk to a minimal one.
//!
//! A walk is a vector of choice numbers: at step i the walk takes enabled action
//! `choices[i] % enabled.len()`. Proptest shrinks the vector (shorter, smaller numbers), which
//! shrinks the walk; the minimal vector is replayed once more to produce the report.

use std::cell::RefCell;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{
    Config as RunnerConfig, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use rebalance_model::{Action, RebalanceModel};

use crate::coverage::Coverage;
use crate::exhaustive::Divergence;
use crate::harness::Mismatch;
use crate::lockstep::{Lockstep, StepError};

/// What the random walks saw.
#[derive(Clone, Debug, Default)]
pub struct RandomStats {
    pub cases: u64,
    pub steps: u64,
    pub coverage: Coverage,
}

fn start(model: &RebalanceModel) -> Result<Lockstep<'_>, Mismatch> {
    Lockstep::start(model)
}

/// One walk driven by `choices`. Stops early at a state with no enabled action.
pub fn walk(
    model: &RebalanceModel,
    choices: &[u32],
    coverage: &mut Coverage,
) -> Result<u64, Box<Divergence>> {
    let diverged = |steps, mismatch| Box::new(Divergence { steps, mismatch });
    let mut lockstep = start(model).map_err(|m| diverged(Vec::new(), m))?;
    let mut steps: Vec<Action> = Vec::new();
    let mut actions = Vec::new();
    for c in choices {
        actions.clear();
        model.candidate_actions(lockstep.state(), &mut actions);
        let mut enabled: Vec<_> = actions
            .iter()
            .filter_map(|a| model.step(lockstep.state(), a).map(|r| (a, r)))
            .filter(|(_, (post, _))| model.within_bound(post))
            .collect();
        if enabled.is_empty() {
            break;
        }
        let at = *c as usize % enabled.len();
        let (action, (post, out)) = enabled.swap_remove(at);
        steps.push(*action);
        if let Err(mismatch) = lockstep.follow(action, post, out) {
            return Err(diverged(steps, mismatch));
        }
    }
    coverage.merge(lockstep.coverage());
    Ok(steps.len() as u64)
}

/// Runs `cases` walks of up to `max_steps` steps from `seed`. On a divergence, returns the
/// shrunk minimal walk's divergence.
pub fn run(
    model: &RebalanceModel,
    seed: u64,
    cases: u32,
    max_steps: usize,
) -> Result<RandomStats, Box<Divergence>> {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let config = RunnerConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..RunnerConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng);
    let stats = RefCell::new(RandomStats::default());
    let strategy = vec(any::<u32>(), 1..=max_steps.max(1));
    let result = runner.run(&strategy, |choices| {
        let mut coverage = Coverage::default();
        match walk(model, &choices, &mut coverage) {
            Ok(n) => {
                let mut s = stats.borrow_mut();
                s.cases += 1;
                s.steps += n;
                s.coverage.merge(&coverage);
                Ok(())
            }
            Err(d) => Err(TestCaseError::fail(d.mismatch.summary.clone())),
        }
    });
    match result {
        Ok(()) => Ok(stats.into_inner()),
        Err(TestError::Fail(_, minimal)) => {
            let mut scratch = Coverage::default();
            match walk(model, &minimal, &mut scratch) {
                Err(d) => Err(Box::new(minimize(model, *d))),
                Ok(_) => unreachable!("a shrunk failing walk fails again: walks are deterministic"),
            }
        }
        Err(TestError::Abort(reason)) => panic!("random walks aborted: {reason}"),
    }
}

/// Replays `steps` (model and manager); `Some` with the divergence if the steps are all enabled
/// in the model and the manager diverges at the last one or earlier.
fn diverges(model: &RebalanceModel, steps: &[Action]) -> Option<Divergence> {
    let mut lockstep = match start(model) {
        Ok(lockstep) => lockstep,
        Err(mismatch) => {
            return Some(Divergence {
                steps: Vec::new(),
                mismatch,
            })
        }
    };
    for (i, action) in steps.iter().enumerate() {
        match lockstep.step(action) {
            Ok(_) => {}
            Err(StepError::Disabled) => return None,
            Err(StepError::Diverged(mismatch)) => {
                return Some(Divergence {
                    steps: steps[..=i].to_vec(),
                    mismatch,
                })
            }
        }
    }
    None
}

/// Proptest shrinks the choice vector, but a choice means a different action once an earlier
/// step is gone, so the walk it leaves is rarely minimal. This removes steps directly (chunks,
/// then single steps, until nothing can go) while the remaining trace stays valid in the model
/// and still diverges.
pub fn minimize(model: &RebalanceModel, found: Divergence) -> Divergence {
    let mut best = found;
    let mut chunk = (best.steps.len() / 2).max(1);
    loop {
        let mut removed = false;
        let mut at = 0;
        while at < best.steps.len() {
            let end = (at + chunk).min(best.steps.len());
            let mut candidate = best.steps[..at].to_vec();
            candidate.extend_from_slice(&best.steps[end..]);
            match diverges(model, &candidate) {
                Some(d) if d.steps.len() < best.steps.len() => {
                    best = d;
                    removed = true;
                }
                _ => at += chunk,
            }
        }
        if chunk == 1 && !removed {
            return best;
        }
        if !removed {
            chunk = (chunk / 2).max(1);
        }
    }
}
