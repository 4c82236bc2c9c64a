//! Golden tests of the client rules: R1 register, R2 cancel and the progress query
//! (src/core/manager/client.rs): the exact effect list of one input in each important situation.
//! Split by rule group from the former tests/golden.rs; shared setup is in tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{
    BucketStatus, Config, Effect, Event, Input, OverallStatus, RejectReason, Reply, TaskStatus,
};

#[test]
fn register_admits_the_first_bucket_and_runs_phase_a() {
    let mut m = started(store(2), Config::default());
    let effects = register(&mut m, vec![mv(0), mv(1)]);
    let mut expected = vec![Effect::Reply(Reply::Accepted(1))];
    expected.extend(phase_a_sends(0, 1, 1));
    assert_eq!(effects, expected);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Rebalancing));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::NotStarted));
    assert_eq!(m.snapshot().pending, vec![1]);
    assert_eq!(m.bucket(0).unwrap().assignment, vec![1, 2, 3, 0]);
}

#[test]
fn register_is_rejected_while_a_rebalance_is_in_progress() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0)]);
    let before = m.snapshot();
    assert_eq!(
        register(&mut m, vec![mv(1)]),
        vec![Effect::Reply(Reply::Rejected(RejectReason::InProgress))]
    );
    assert_eq!(m.snapshot(), before);
}

#[test]
fn cancel_persists_first_and_a_store_failure_changes_nothing() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    let before = m.snapshot();
    let task_before = m.store().state().task.clone();
    m.store_mut().fail_nth_op(1);
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::StoreError)]
    );
    assert_eq!(m.snapshot(), before);
    assert_eq!(m.store().state().task, task_before);
    // Now it succeeds: the pending bucket is canceled, the moved one drains.
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
    let task = m.store().state().task.clone().unwrap();
    assert_eq!(
        (task.status, task.cancel_requested),
        (TaskStatus::Rebalancing, true)
    );
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Canceled));
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Rebalancing));
    assert!(m.flags().cancel_requested);
    // Idempotent.
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
}

#[test]
fn cancel_finishes_an_active_bucket_still_at_origin_and_finalizes_canceled() {
    let mut m = started(store(2), Config::default());
    // The register write succeeds, Phase A's write fails: bucket 0 is running at origin.
    m.store_mut().fail_nth_op(2);
    assert_eq!(
        register(&mut m, vec![mv(0), mv(1)]),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
    assert_eq!(m.bucket(0).unwrap().assignment, vec![0, 1, 2]);
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Canceled));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Canceled));
    assert_eq!(m.overall(), Some(OverallStatus::Canceled));
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::Canceled
    );
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::NothingToCancel)]
    );
}

#[test]
fn an_empty_plan_completes_at_once() {
    let mut m = started(store(1), Config::default());
    assert_eq!(
        register(&mut m, vec![]),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::Completed
    );
    // The next register gets the next id.
    assert_eq!(
        register(&mut m, vec![mv(0)])[0],
        Effect::Reply(Reply::Accepted(2))
    );
}

#[test]
fn an_invalid_plan_is_rejected_without_writing() {
    let mut m = started(store(1), Config::default());
    let ops = m.store().op_count();
    let effects = register(&mut m, vec![mv(0), mv(0)]);
    assert_eq!(
        effects,
        vec![Effect::Reply(Reply::Rejected(RejectReason::InvalidPlan(
            rebalance_manager::PlanError::DuplicateBucket(0)
        )))]
    );
    assert_eq!(m.store().op_count(), ops);
    let invalid = |e| vec![Effect::Reply(Reply::Rejected(RejectReason::InvalidPlan(e)))];
    assert_eq!(
        register(&mut m, vec![mv(9)]),
        invalid(rebalance_manager::PlanError::UnknownBucket(9))
    );
    let (b, mut e) = mv(0);
    e.ors = vec![0, 1, 3];
    assert_eq!(
        register(&mut m, vec![(b, e)]),
        invalid(rebalance_manager::PlanError::NotAtOrigin(0))
    );
    // A repeated replica in either list alone is refused.
    let (b, mut e) = mv(0);
    e.trs = vec![1, 2, 2];
    assert_eq!(
        register(&mut m, vec![(b, e)]),
        invalid(rebalance_manager::PlanError::DuplicateReplica(0))
    );
    let (b, mut e) = mv(0);
    e.ors = vec![0, 1, 1];
    assert_eq!(
        register(&mut m, vec![(b, e)]),
        invalid(rebalance_manager::PlanError::DuplicateReplica(0))
    );
    assert_eq!(m.store().op_count(), ops);
}

#[test]
fn progress_reports_timeout_as_non_final() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    m.handle(TIMEOUT_DUE, Input::Tick);
    m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0))));
    let p = m.progress();
    assert_eq!(p.rid, Some(1));
    assert_eq!(p.overall, Some(OverallStatus::Rebalancing));
    assert_eq!(p.buckets[&0], BucketStatus::Timeout);
    assert!(!BucketStatus::Timeout.is_final());
    assert_eq!(
        (p.counts.timeout, p.counts.rebalancing, p.counts.total()),
        (1, 1, 2)
    );
}
