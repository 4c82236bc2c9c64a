//! History invariants that no bug switch breaks in every way they state: each test takes a
//! reachable state, makes the step after it do one forbidden thing by hand, and checks that the
//! transition check (`transition::record`) flags it. Part of the model's mutation oracle: the
//! admission a step makes was not examined at all under a mutant of `record` (`!restored_now`
//! -> `restored_now`), and no verdict changed, since `unbounded-tracked` is also caught by
//! INV-TRACKED-BOUND's state clause (spec/findings.md F18). The other transition teeth live in
//! `integration/transitions.rs`.

mod common;
use common::find;
use rebalance_model::state::Attempt;
use rebalance_model::transition::{record, Examined};
use rebalance_model::{preset, Action, BucketStatus, BugSet, RebalanceModel, SystemState};
use rebalance_model::{Key, StepOutput};

/// Runs the transition check on `pre -> post` as if a Tick had made the change.
fn after_a_tick(m: &RebalanceModel, pre: &SystemState, post: &mut SystemState) -> Examined {
    record(&m.config, pre, &Action::TICK, &StepOutput::default(), post)
}

/// `pre` with its first pending bucket admitted by hand: running, with an attempt.
fn with_an_admission(pre: &SystemState) -> SystemState {
    let mut post = pre.clone();
    let c = &mut post.coordinator;
    let b = *c
        .pending
        .iter()
        .find(|b| c.status_of(**b) == Some(BucketStatus::NotStarted))
        .expect("a pending bucket");
    c.pending.retain(|x| *x != b);
    c.set_status(b, BucketStatus::Rebalancing);
    let rid = c.rid.expect("a rebalance");
    c.insert_attempt(
        b,
        Attempt {
            key: Key { rid, bucket: b },
            ..Attempt::default()
        },
    );
    post
}

#[test]
fn an_admission_while_the_tracked_set_is_full_is_flagged() {
    let m = RebalanceModel::new(preset("ci-inflight2").unwrap(), BugSet::none());
    let pre = find(&m, |s| {
        let c = &s.coordinator;
        c.tracked_count() >= m.config.max_tracked_timed_out as usize
            && c.pending
                .iter()
                .any(|b| c.status_of(*b) == Some(BucketStatus::NotStarted))
    });
    let mut post = with_an_admission(&pre);
    let seen = after_a_tick(&m, &pre, &mut post);
    assert_eq!(seen.admissions.len(), 1, "the admission was not examined");
    assert!(post.ghost.violations.admitted_while_capped);
}

#[test]
fn an_admission_after_the_cancel_is_stored_is_flagged() {
    let m = RebalanceModel::new(preset("ci-inflight2").unwrap(), BugSet::none());
    let pre = find(&m, |s| {
        let c = &s.coordinator;
        c.pending
            .iter()
            .any(|b| c.status_of(*b) == Some(BucketStatus::NotStarted))
    });
    let mut pre = pre;
    if let Some(t) = pre.store.task.as_mut() {
        t.cancel_requested = true;
    }
    let mut post = with_an_admission(&pre);
    after_a_tick(&m, &pre, &mut post);
    assert!(post.ghost.violations.new_work_after_cancel);
}

/// A state of `tiny` after the Register's Phase A: bucket 0's stored epochs are above zero.
fn written() -> (RebalanceModel, SystemState) {
    let m = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let pre = find(&m, |s| s.store.buckets.lai[0].bucket_epoch > 0);
    (m, pre)
}

#[test]
fn a_change_whose_bucket_epoch_does_not_rise_is_flagged() {
    let (m, pre) = written();
    let mut post = pre.clone();
    let e = pre.coordinator.plan[0];
    post.store.buckets.assignment[0] = e.ors;
    assert_ne!(
        post.store.buckets.assignment[0],
        pre.store.buckets.assignment[0]
    );
    after_a_tick(&m, &pre, &mut post);
    assert!(post.ghost.violations.change_without_epoch);
}

#[test]
fn an_epoch_that_falls_is_flagged() {
    let (m, pre) = written();
    let mut post = pre.clone();
    // The leader changes and its epoch rises, but the bucket epoch falls.
    let lai = &mut post.store.buckets.lai[0];
    lai.bucket_epoch -= 1;
    lai.isr = rebalance_model::ServerSet::EMPTY;
    after_a_tick(&m, &pre, &mut post);
    assert!(post.ghost.violations.change_without_epoch);
}
