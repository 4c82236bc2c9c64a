//! Each Fluss variant that changes a predicate of spec 4 acts as spec 10's row says, at every
//! step of a graph where it acts, against the predicate restated here from that row.
//!
//! `switch_verdicts.rs` shows each variant still breaks its property; that does not pin the
//! variant's own definition. Mutating the variant-only clauses (`at_origin_assignment` to
//! `true` or `false`, `at_target`'s store clause) changed no verdict, since the shortest
//! counterexamples do not pass through them (spec/findings.md F18). Part of the model's
//! mutation oracle (`.cargo/mutants-model.toml`).

mod common;
use common::each_edge;
use rebalance_model::check::por::reduced;
use rebalance_model::state::types::ServerSet;
use rebalance_model::{preset, Action, BucketStatus, Bug, BugSet, RebalanceModel, SystemState};
use std::collections::HashSet;

/// Whether `a` is a Cancel whose store write succeeded, taking effect for the first time (R2).
fn cancel_took_effect(s: &SystemState, a: &Action, next: &SystemState) -> bool {
    matches!(
        a,
        Action::Cancel {
            fail_store_op: None
        }
    ) && !s.coordinator.cancel_requested
        && next.coordinator.cancel_requested
}

/// The plan entry of bucket `b`, which the caller knows is in the plan.
fn plan_entry(s: &SystemState, b: usize) -> rebalance_model::PlanEntry {
    *s.coordinator
        .plan
        .iter()
        .find(|e| e.bucket as usize == b)
        .expect("the bucket is in the plan")
}

/// spec 10, `fluss-at-origin`: a bucket is at its origin when its assignment is the origin, its
/// leader the old leader, and its ISR within the origin.
fn fluss_at_origin(s: &SystemState, b: usize) -> bool {
    let e = plan_entry(s, b);
    let (assignment, lai) = (
        &s.coordinator.cache.assignment[b],
        &s.coordinator.cache.lai[b],
    );
    *assignment == e.ors
        && lai.leader == Some(e.old_leader)
        && lai.isr.is_subset(ServerSet::from_servers(&e.ors))
}

/// Under `fluss-at-origin`, a cancel (R10) cancels exactly the running attempts at the origin
/// by Fluss's predicate, and leaves every other one running. Returns how many attempts of each
/// kind a cancel met, so that a graph meeting only one kind fails as vacuous.
fn cancels_by_fluss_at_origin(name: &str) -> (usize, usize) {
    let bugs = BugSet::of(&[Bug::FlussAtOrigin]);
    let (model, _) = reduced(preset(name).expect("preset"), bugs);
    let (mut canceled, mut spared) = (0, 0);
    each_edge(&model, |s, a, next, _| {
        if !cancel_took_effect(s, a, next) {
            return;
        }
        for (b, _) in s.coordinator.attempts.iter() {
            let expected = fluss_at_origin(s, *b as usize);
            let got = next.coordinator.status_of(*b) == Some(BucketStatus::Canceled);
            // At the first wrong edge: a mutant that grows the graph should not walk it whole.
            assert_eq!(
                expected, got,
                "{name}: bucket {b} at origin by Fluss's predicate: {expected}, canceled: {got}, in {s:?}"
            );
            if got {
                canceled += 1;
            } else {
                spared += 1;
            }
        }
    });
    (canceled, spared)
}

#[test]
fn fluss_at_origin_cancels_exactly_the_attempts_fluss_calls_at_origin() {
    let mut met = (0, 0);
    for name in ["ci-rf2-recovery", "ci-leader-crash"] {
        let (c, s) = cancels_by_fluss_at_origin(name);
        println!("{name}: {c} attempts canceled, {s} spared");
        met = (met.0 + c, met.1 + s);
    }
    assert!(met.0 > 0, "no cancel met an attempt at the origin");
    assert!(met.1 > 0, "no cancel met an attempt away from the origin");
}

/// spec 10, `split-bucket-writes` (D15): Fluss's decision table finishes a move only when both
/// the context's and the store's assignment are the target, since the two are written apart.
#[test]
fn split_bucket_writes_complete_a_move_only_with_both_assignments_at_the_target() {
    let bugs = BugSet::of(&[Bug::SplitBucketWrites]);
    let mut completed = 0;
    for name in ["ci-store", "ci-rf2-recovery"] {
        let (model, _) = reduced(preset(name).expect("preset"), bugs);
        each_edge(&model, |s, _, next, _| {
            for e in next.coordinator.plan.iter() {
                let b = e.bucket;
                let now = next.coordinator.status_of(b) == Some(BucketStatus::Completed);
                if !now || s.coordinator.status_of(b) == Some(BucketStatus::Completed) {
                    continue;
                }
                completed += 1;
                let i = b as usize;
                let context = &next.coordinator.cache.assignment[i];
                let store = &next.store.buckets.assignment[i];
                let deleted = next.store.buckets.deleted[i];
                assert!(
                    deleted || *context == e.trs && *store == e.trs,
                    "{name}: bucket {b} completed with context {context:?} and store {store:?}, \
                     target {:?}",
                    e.trs
                );
            }
        });
    }
    assert!(completed > 0, "no move completed, so nothing was checked");
}

/// The same variant still completes a move, and soon: some move of `ci-store` is COMPLETED
/// within 12 steps (a breadth-first search to that depth). The walk above needs a completion
/// too, but it walks the whole graph first, and a variant that never completes grows a graph
/// it did not finish in ten minutes (`at_target`'s store clause `||` -> `&&`, a timeout of the
/// mutation gate: F18, whole-set shard 7/8).
#[test]
fn split_bucket_writes_complete_a_move_within_twelve_steps() {
    let bugs = BugSet::of(&[Bug::SplitBucketWrites]);
    let (model, _) = reduced(preset("ci-store").expect("preset"), bugs);
    let completed = |s: &SystemState| {
        s.coordinator
            .status
            .iter()
            .any(|(_, st)| *st == BucketStatus::Completed)
    };
    let init = model.init_state();
    let mut seen = HashSet::from([common::fingerprint(&init)]);
    let mut level = vec![init];
    for depth in 0..=12 {
        if level.iter().any(completed) {
            println!("a move completed at depth {depth}");
            return;
        }
        let mut next_level = Vec::new();
        for s in &level {
            model.successors(s, |_, next, _| {
                if seen.insert(common::fingerprint(&next)) {
                    next_level.push(next);
                }
            });
        }
        level = next_level;
    }
    panic!("no move completed within 12 steps under split-bucket-writes");
}

/// spec 10, `recovery-order` (`[late]`): R2 cancels only the pending buckets at their origin
/// (D4's `at_origin`, restated), and leaves the others pending.
#[test]
fn recovery_order_cancels_exactly_the_pending_buckets_at_their_origin() {
    let mut config = preset("ci-two-buckets").unwrap();
    config.max_network = Some(2);
    let model = RebalanceModel::new(config, BugSet::of(&[Bug::RecoveryOrder]));
    let (mut canceled, mut kept) = (0, 0);
    let at_origin = |s: &SystemState, b: usize| {
        let e = plan_entry(s, b);
        let leader_only = ServerSet::from_servers(&e.ors) == ServerSet::from_servers(&e.trs);
        s.coordinator.cache.assignment[b] == e.ors
            && !(leader_only && s.coordinator.cache.lai[b].leader == Some(e.new_leader))
    };
    each_edge(&model, |s, a, next, _| {
        if !cancel_took_effect(s, a, next) {
            return;
        }
        for &b in s.coordinator.pending.iter() {
            if s.coordinator.status_of(b) != Some(BucketStatus::NotStarted) {
                continue;
            }
            let got = next.coordinator.status_of(b) == Some(BucketStatus::Canceled);
            assert_eq!(at_origin(s, b as usize), got, "bucket {b} in {s:?}");
            if got {
                canceled += 1;
            } else {
                kept += 1;
            }
        }
    });
    println!("recovery-order: {canceled} pending buckets canceled, {kept} kept");
    assert!(canceled > 0 && kept > 0, "{canceled} canceled, {kept} kept");
}
