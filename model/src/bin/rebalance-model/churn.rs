//! Election churn: how many leader elections a rebalance spends per completed bucket, measured
//! over seeded random walks to a terminal state (spec 10, `reelect-on-reconcile`; findings F7).
//!
//! An election is a step in which R5 (the leader-only election) ran and wrote a plan bucket's
//! LeaderAndIsr, raising its stored epochs. Server crash and restart handling (R19, R20) and
//! AdjustIsr (R18) also raise epochs, but they are liveness and ISR changes, not elections the
//! rebalance chose to run. A completion is a step that made a plan bucket COMPLETED.
//!
//! Walks, not the exhaustive graph: the count is history, which a state does not keep, and a
//! walk's uniform choice among enabled actions lets timeouts and reconciles happen as often as
//! anything else, which is where re-election churns. The graph is finite and acyclic (spec 7.3),
//! so every walk ends at a terminal state.

use rebalance_model::state::types::BucketStatus;
use rebalance_model::state::SystemState;
use rebalance_model::step::action::Action;
use rebalance_model::step::model::RebalanceModel;
use rebalance_model::verdict::rule::Rule;

/// What the walks saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Churn {
    pub seed: u64,
    pub walks: u32,
    pub steps: u64,
    /// Elections over all walks.
    pub elections: u64,
    /// Completions over all walks.
    pub completed: u64,
    /// Walks that completed at least one bucket; the ratios below are over these walks only,
    /// since a walk that completed nothing (its bucket gave up, or was canceled) has no ratio.
    pub completing_walks: u32,
    /// The sum over completing walks of that walk's elections divided by its completions.
    pub sum_per_completed: f64,
    /// The largest such ratio of one walk.
    pub max_per_completed: f64,
}

impl Churn {
    /// The mean over completing walks of elections per completed bucket (0 when none).
    pub fn mean_per_completed(&self) -> f64 {
        if self.completing_walks == 0 {
            0.0
        } else {
            self.sum_per_completed / f64::from(self.completing_walks)
        }
    }
}

/// SplitMix64: a tiny deterministic generator, so a seed names the same walks on every machine.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Runs `walks` random walks from the initial state, each to a terminal state (or `max_steps`).
pub fn churn(model: &RebalanceModel, seed: u64, walks: u32, max_steps: usize) -> Churn {
    let mut rng = SplitMix64(seed);
    let mut total = Churn {
        seed,
        walks,
        ..Churn::default()
    };
    let mut candidates = Vec::new();
    for _ in 0..walks {
        let mut state = model.init_state();
        let (mut elections, mut completed) = (0u64, 0u64);
        for _ in 0..max_steps {
            candidates.clear();
            model.candidate_actions(&state, &mut candidates);
            let mut enabled: Vec<(Action, SystemState, bool)> = candidates
                .iter()
                .filter_map(|a| {
                    let (post, out) = model.step(&state, a)?;
                    let elected = out.rules.contains(Rule::R5) && epochs_rose(&state, &post);
                    Some((*a, post, elected))
                })
                .filter(|(_, post, _)| model.within_bound(post))
                .collect();
            if enabled.is_empty() {
                break;
            }
            let at = (rng.next() % enabled.len() as u64) as usize;
            let (_, post, elected) = enabled.swap_remove(at);
            elections += u64::from(elected);
            completed += completions(&state, &post);
            state = post;
            total.steps += 1;
        }
        total.elections += elections;
        total.completed += completed;
        if completed > 0 {
            let ratio = elections as f64 / completed as f64;
            total.completing_walks += 1;
            total.sum_per_completed += ratio;
            total.max_per_completed = total.max_per_completed.max(ratio);
        }
    }
    total
}

/// Some plan bucket's stored epochs rose in this step.
fn epochs_rose(pre: &SystemState, post: &SystemState) -> bool {
    let (before, after) = (&pre.store.buckets.lai, &post.store.buckets.lai);
    before
        .iter()
        .zip(after.iter())
        .any(|(a, b)| b.bucket_epoch > a.bucket_epoch || b.leader_epoch > a.leader_epoch)
}

/// Plan buckets that became COMPLETED in this step (a new rebalance's statuses start afresh;
/// statuses copied from a final stored task by recovery are not completions).
fn completions(pre: &SystemState, post: &SystemState) -> u64 {
    let (pc, c) = (&pre.coordinator, &post.coordinator);
    let fresh = pc.rid != c.rid;
    if fresh && post.ghost.final_recovered {
        return 0;
    }
    c.status
        .iter()
        .filter(|(b, st)| {
            *st == BucketStatus::Completed
                && (fresh || pc.status_of(*b) != Some(BucketStatus::Completed))
        })
        .count() as u64
}
