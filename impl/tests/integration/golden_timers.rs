//! Golden tests of the timer-driven rules: R13 Timeout, R14 Reconcile, R15 Finalize, R23 Tick
//! (src/core/manager/timers.rs): the exact effect list of one input in each important situation.
//! Split by rule group from the former tests/golden.rs; shared setup is in tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{
    BucketStatus, Config, Effect, Event, Input, OverallStatus, RejectReason, Reply, TaskStatus,
};

#[test]
fn a_timeout_moves_the_task_to_tracked_and_admits_the_next() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    assert_eq!(m.handle(100_000, Input::Tick), vec![]);
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Tick),
        vec![Effect::Enqueue(Event::Timeout(key(1, 0)))]
    );
    // Deduplicated while queued.
    assert_eq!(m.handle(TIMEOUT_DUE + 30_000, Input::Tick), vec![]);
    let effects = m.handle(
        TIMEOUT_DUE + 30_000,
        Input::Event(Event::Timeout(key(1, 0))),
    );
    let mut expected = vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))];
    let mut next = phase_a_sends(1, 1, 1);
    expected.append(&mut next);
    assert_eq!(effects, expected);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Timeout));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Rebalancing));
    assert_eq!(m.overall(), Some(OverallStatus::Rebalancing));
}

#[test]
fn a_stale_timeout_changes_nothing_and_emits_nothing() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    m.handle(TIMEOUT_DUE, Input::Tick);
    m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0))));
    let before = m.snapshot();
    // Same key again (the attempt is tracked now), another rebalance's key, a pending bucket.
    for k in [key(1, 0), key(7, 1), key(1, 5)] {
        assert_eq!(
            m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(k))),
            vec![]
        );
        assert_eq!(m.snapshot(), before);
    }
}

#[test]
fn finalize_retries_after_a_store_failure() {
    let mut m = started(store(1), Config::default());
    let effects = register(&mut m, vec![lo(0)]);
    m.store_mut().fail_nth_op(1); // the finalize write
    assert_eq!(m.handle(0, ack(&effects[2], true)), vec![]);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Completed));
    assert_eq!(m.overall(), Some(OverallStatus::Rebalancing));
    assert!(m.flags().finalize_pending);
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::NotStarted
    );
    // A new rebalance is refused meanwhile.
    assert_eq!(
        register(&mut m, vec![lo(0)]),
        vec![Effect::Reply(Reply::Rejected(RejectReason::InProgress))]
    );
    // Tick enqueues the retry once; the event writes.
    assert_eq!(
        m.handle(30_000, Input::Tick),
        vec![Effect::Enqueue(Event::Finalize(1))]
    );
    assert_eq!(m.handle(60_000, Input::Tick), vec![]);
    assert_eq!(m.handle(60_000, Input::Event(Event::Finalize(1))), vec![]);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    assert!(!m.flags().finalize_pending);
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::Completed
    );
}

#[test]
fn give_up_when_a_target_stays_down() {
    let mut m = started(store(1), Config::default());
    register(&mut m, vec![mv(0)]);
    m.handle(0, Input::ServerCrashed(3));
    m.handle(TIMEOUT_DUE, Input::Tick);
    m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0))));
    // First reconcile starts the blocked clock.
    m.handle(TIMEOUT_DUE, Input::Event(Event::Reconcile(key(1, 0))));
    assert_eq!(m.attempt(0).unwrap().blocked_since_ms, Some(TIMEOUT_DUE));
    // Exactly at the limit: still reconciling. One ms later: FAILED.
    m.handle(
        TIMEOUT_DUE + 1_800_000,
        Input::Event(Event::Reconcile(key(1, 0))),
    );
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Timeout));
    m.handle(
        TIMEOUT_DUE + 1_800_001,
        Input::Event(Event::Reconcile(key(1, 0))),
    );
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Failed));
    assert_eq!(m.overall(), Some(OverallStatus::Failed));
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::Failed
    );
}

#[test]
fn a_reconcile_for_another_attempt_or_a_running_one_changes_nothing() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    // Bucket 0 is running under key (1, 0), not tracked: a Reconcile with its key is fenced.
    let before = m.snapshot();
    assert_eq!(
        m.handle(0, Input::Event(Event::Reconcile(key(1, 0)))),
        vec![]
    );
    assert_eq!(m.snapshot(), before);
    // Bucket 0 tracked under key (1, 0): another rebalance's key for the same bucket is stale.
    m.handle(TIMEOUT_DUE, Input::Tick);
    m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0))));
    let before = m.snapshot();
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Reconcile(key(7, 0)))),
        vec![]
    );
    assert_eq!(m.snapshot(), before);
}

#[test]
fn a_finalize_event_after_the_final_status_is_persisted_writes_nothing() {
    let mut m = started(store(1), Config::default());
    register(&mut m, vec![]);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    let ops = m.store().op_count();
    assert_eq!(m.handle(0, Input::Event(Event::Finalize(1))), vec![]);
    assert_eq!(
        m.store().op_count(),
        ops,
        "the final status was written again"
    );
}
