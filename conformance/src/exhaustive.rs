//! Walks the model's whole reachable graph and checks every edge against the manager.
//!
//! Depth-first, with a clone of the harness at every branch point instead of a replay from the
//! initial state: each edge costs one model step, one manager input and one comparison. A model
//! state is expanded once (by the first path that reaches it); every action enabled in it is
//! checked, so every edge of the reachable graph is checked exactly once.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::time::Instant;

use rebalance_model::{Action, RebalanceModel, SystemState};

use crate::coverage::Coverage;
use crate::harness::{Harness, Mismatch};

/// A path as a shared linked list, so that siblings share their prefix.
struct PathNode {
    action: Action,
    parent: Option<Rc<PathNode>>,
}

fn path_to_vec(node: &Option<Rc<PathNode>>) -> Vec<Action> {
    let mut out = Vec::new();
    let mut cur = node.clone();
    while let Some(n) = cur {
        out.push(n.action);
        cur = n.parent.clone();
    }
    out.reverse();
    out
}

/// A divergence found by a walk: the path to it (its last action is the diverging step).
#[derive(Clone, Debug)]
pub struct Divergence {
    pub steps: Vec<Action>,
    pub mismatch: Mismatch,
}

/// What a completed walk saw.
#[derive(Clone, Debug, Default)]
pub struct WalkStats {
    pub states: u64,
    pub edges: u64,
    pub max_depth: usize,
    pub seconds: f64,
    pub coverage: Coverage,
    /// The whole reachable graph was walked (false when a bound stopped it).
    pub complete: bool,
}

impl WalkStats {
    pub fn edges_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.edges as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A fixed-seed fingerprint (std's SipHash with zero keys is deterministic across runs).
pub fn fingerprint(s: &SystemState) -> u64 {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Checks every edge of `model`'s reachable graph. `progress` is called about every
/// `progress_every` states with the running stats.
pub fn walk(
    model: &RebalanceModel,
    progress_every: u64,
    progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, Box<Divergence>> {
    walk_bounded(model, u64::MAX, progress_every, progress)
}

/// [`walk`], stopping once `max_states` states have been seen (a depth-first sample of the
/// graph, for quick gates such as mutation testing; `stats.complete` says whether it finished).
pub fn walk_bounded(
    model: &RebalanceModel,
    max_states: u64,
    progress_every: u64,
    mut progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, Box<Divergence>> {
    let started = Instant::now();
    let init = model.init_state();
    let mut stats = WalkStats::default();
    let harness = Harness::start(model, &init).map_err(|mismatch| {
        Box::new(Divergence {
            steps: Vec::new(),
            mismatch,
        })
    })?;
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(fingerprint(&init));
    stats.states = 1;
    let mut stack: Vec<(SystemState, Harness, Option<Rc<PathNode>>, usize)> =
        vec![(init, harness, None, 0)];
    let mut actions = Vec::new();
    while let Some((state, harness, path, depth)) = stack.pop() {
        if stats.states >= max_states {
            stats.seconds = started.elapsed().as_secs_f64();
            return Ok(stats);
        }
        stats.max_depth = stats.max_depth.max(depth);
        actions.clear();
        // Candidates: `step` drops the disabled ones, so each edge is stepped once.
        model.candidate_actions(&state, &mut actions);
        for action in &actions {
            let Some((post, out)) = model.step(&state, action) else {
                continue;
            };
            stats.edges += 1;
            let mut h = harness.clone();
            let node = Some(Rc::new(PathNode {
                action: *action,
                parent: path.clone(),
            }));
            if let Err(mismatch) = h.apply(model, &state, action, &post, &out) {
                stats.seconds = started.elapsed().as_secs_f64();
                return Err(Box::new(Divergence {
                    steps: path_to_vec(&node),
                    mismatch,
                }));
            }
            stats.coverage.record(action, &out);
            // The configuration's search bound (`max_network`), as the model checker applies it:
            // a state outside it is not expanded (its incoming edge was still checked above).
            if !model.within_bound(&post) {
                continue;
            }
            if seen.insert(fingerprint(&post)) {
                stats.states += 1;
                if progress_every > 0 && stats.states % progress_every == 0 {
                    stats.seconds = started.elapsed().as_secs_f64();
                    progress(&stats);
                }
                stack.push((post, h, node, depth + 1));
            }
        }
    }
    stats.seconds = started.elapsed().as_secs_f64();
    stats.complete = true;
    Ok(stats)
}
