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
use rebalance_model::step::transition::{record, Examined};
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
fn an_epoch_that_rises_alone_without_a_change_is_flagged() {
    // Each epoch alone (F18, whole-set shard 6/8: the two rises joined by `&&` survived, since
    // no switch raises one epoch without the other and without a change).
    let (m, pre) = written();
    let mut bucket = pre.clone();
    bucket.store.buckets.lai[0].bucket_epoch += 1;
    after_a_tick(&m, &pre, &mut bucket);
    assert!(bucket.ghost.violations.epoch_without_change);

    let mut leader = pre.clone();
    leader.store.buckets.lai[0].leader_epoch += 1;
    after_a_tick(&m, &pre, &mut leader);
    assert!(leader.ghost.violations.epoch_without_change);
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

#[test]
fn a_leader_only_election_after_the_cancel_is_stored_is_flagged_unless_it_repairs_liveness() {
    // The election clause of INV-CANCEL-NO-NEW-WORK read only fresh plans under the mutant
    // `!fresh_plan` -> `fresh_plan`, and no switch elects after a stored cancel outside R16's
    // own plan (F18, whole-set shard 3/8).
    use rebalance_model::PlanKind;
    let m = RebalanceModel::new(preset("ci-leader").unwrap(), BugSet::none());
    let mut pre = find(&m, |s| {
        let c = &s.coordinator;
        c.plan.iter().any(|e| {
            e.kind() == PlanKind::LeaderOnly
                && s.store.buckets.lai[e.bucket as usize].leader != Some(e.new_leader)
                && c.status_of(e.bucket) == Some(BucketStatus::Rebalancing)
        }) && s.store.task.is_some()
    });
    pre.store.task.as_mut().expect("a task").cancel_requested = true;
    let e = *pre
        .coordinator
        .plan
        .iter()
        .find(|e| e.kind() == PlanKind::LeaderOnly)
        .expect("a leader-only bucket");
    let mut post = pre.clone();
    let lai = &mut post.store.buckets.lai[e.bucket as usize];
    lai.leader = Some(e.new_leader);
    lai.leader_epoch += 1;
    lai.bucket_epoch += 1;
    post.coordinator.cache = post.store.buckets.clone();

    let reconcile = Action::ProcessEvent {
        event: rebalance_model::Event::Recover,
        fail_store_op: None,
    };
    let mut elected = post.clone();
    record(
        &m.config,
        &pre,
        &reconcile,
        &StepOutput::default(),
        &mut elected,
    );
    assert!(elected.ghost.violations.new_work_after_cancel);

    // R19's re-election after a crash is liveness, not rebalance work.
    let crash = Action::CrashServer {
        server: 0,
        fail_store_op: None,
    };
    let mut repaired = post.clone();
    record(
        &m.config,
        &pre,
        &crash,
        &StepOutput::default(),
        &mut repaired,
    );
    assert!(!repaired.ghost.violations.new_work_after_cancel);
}

/// The first step of `tiny` in which an `NliResponse` completes the bucket: the state before,
/// the step and what it emitted, and the state after.
fn a_completion() -> (
    RebalanceModel,
    SystemState,
    rebalance_model::NliResponse,
    StepOutput,
    SystemState,
) {
    let m = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let mut found = None;
    common::each_edge(&m, |pre, a, post, out| {
        if found.is_some() {
            return;
        }
        if let Action::DeliverNliResponse { msg, .. } = a {
            let b = msg.bucket;
            if pre.coordinator.status_of(b) == Some(BucketStatus::Rebalancing)
                && post.coordinator.status_of(b) == Some(BucketStatus::Completed)
            {
                found = Some((pre.clone(), *msg, out.clone(), post.clone()));
            }
        }
    });
    let (pre, msg, out, post) = found.expect("a completion on tiny");
    (m, pre, msg, out, post)
}

/// Runs the transition check on the completion with the delivered response replaced by `msg`.
fn completed_by(
    m: &RebalanceModel,
    pre: &SystemState,
    msg: rebalance_model::NliResponse,
    out: &StepOutput,
    post: &SystemState,
) -> SystemState {
    let mut post = post.clone();
    post.ghost.violations = pre.ghost.violations;
    let action = Action::DeliverNliResponse {
        msg,
        fail_store_op: None,
    };
    record(&m.config, pre, &action, out, &mut post);
    post
}

#[test]
fn a_completion_by_a_response_from_another_coordinator_epoch_is_flagged_unfenced() {
    // Every other part of the context current: under `&&` -> `||` in the middle of the fence,
    // the epochs and the key alone passed it (F18, shard 3/8).
    let (m, pre, msg, out, post) = a_completion();
    let real = completed_by(&m, &pre, msg, &out, &post);
    assert!(!real.ghost.violations.unfenced_completion);
    assert!(!real.ghost.violations.completed_unacked);

    let mut stale = msg;
    stale.context.coordinator_epoch = stale.context.coordinator_epoch.wrapping_add(1);
    let flagged = completed_by(&m, &pre, stale, &out, &post);
    assert!(flagged.ghost.violations.unfenced_completion);

    let mut refused = msg;
    refused.ok = false;
    let flagged = completed_by(&m, &pre, refused, &out, &post);
    assert!(flagged.ghost.violations.unfenced_completion);
}

#[test]
fn a_completion_acknowledged_by_another_server_or_off_the_final_state_is_flagged_unacked() {
    // INV-COMPLETED-ACKED has no switch: `acked` -> `true` changed no verdict (F18, shard 3/8).
    let (m, pre, msg, out, post) = a_completion();
    let b = msg.bucket as usize;
    // tiny is RF 1: the server the bucket moved from, which the union held.
    let other = pre.coordinator.plan[0]
        .rs()
        .iter()
        .copied()
        .find(|r| Some(*r) != post.store.buckets.lai[b].leader)
        .expect("a replica other than the leader");
    let mut follower = msg;
    follower.from = other;
    let flagged = completed_by(&m, &pre, follower, &out, &post);
    assert!(flagged.ghost.violations.completed_unacked);

    let mut off_target = post.clone();
    off_target.store.buckets.assignment[b] = pre.coordinator.plan[0].rs();
    let flagged = completed_by(&m, &pre, msg, &out, &off_target);
    assert!(flagged.ghost.violations.completed_unacked);
}
