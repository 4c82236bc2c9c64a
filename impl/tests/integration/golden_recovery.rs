//! Golden tests of crash, restart and recovery: R16 Recover, R17 start and the coordinator-epoch
//! fence (src/core/manager/recovery.rs and mod.rs): the exact effect list of one input in each
//! important situation. Split by rule group from the former tests/golden.rs; shared setup is in
//! tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{
    BucketStatus, Config, Effect, Event, Input, Manager, MemStore, OverallStatus, PersistedState,
    Plan, Reply, Store, TaskNode, TaskStatus,
};
use std::sync::Arc;

/// A store whose task (rid 1, not final) has bucket 1 at origin first in plan order and bucket
/// 0 mid-migration (union) second.
fn mid_migration_store() -> MemStore {
    let mut s = store(2);
    s.put_bucket(0, rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1));
    s.state_mut().coordinator_epoch = 1;
    s.state_mut().task = Some(TaskNode {
        id: 1,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::new(Plan::new(vec![mv(1), mv(0)])),
    });
    s
}

#[test]
fn recovery_restores_a_mid_migration_bucket_as_tracked_before_admitting_an_at_origin_one() {
    let (mut m, effects) =
        Manager::start(Config::default(), mid_migration_store(), live(), 0).unwrap();
    assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    assert_eq!(m.coordinator_epoch(), 2);
    assert!(m.has_in_progress());
    let effects = m.handle(0, Input::Event(Event::Recover));
    let mut expected = vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))];
    expected.extend(phase_a_sends(1, 2, 1));
    assert_eq!(effects, expected);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Timeout));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Rebalancing));
    // The restored attempt resumes with R7.4: a resend, no epoch bump.
    let effects = m.handle(0, Input::Event(Event::Reconcile(key(1, 0))));
    let resend: Vec<Effect> = (0..4)
        .map(|to| {
            nli(
                to,
                0,
                &[1, 2, 3, 0],
                Some(0),
                0,
                &[0, 1, 2],
                1,
                2,
                Some(key(1, 0)),
            )
        })
        .collect();
    assert_eq!(effects, resend);
}

#[test]
fn recovery_with_a_full_tracked_set_restores_but_does_not_admit() {
    let config = Config {
        max_tracked_timed_out: 1,
        ..Config::default()
    };
    let (mut m, _) = Manager::start(config, mid_migration_store(), live(), 0).unwrap();
    let effects = m.handle(0, Input::Event(Event::Recover));
    assert_eq!(effects, vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))]);
    assert_eq!(m.snapshot().pending, vec![1]);
}

#[test]
fn recovery_read_failure_is_retried_by_tick() {
    let (mut m, _) = Manager::start(Config::default(), mid_migration_store(), live(), 0).unwrap();
    m.store_mut().fail_nth_op(1);
    assert_eq!(m.handle(0, Input::Event(Event::Recover)), vec![]);
    assert!(m.flags().recovery_pending && !m.flags().recovery_queued);
    assert_eq!(
        m.handle(0, Input::Cancel),
        vec![Effect::Reply(Reply::NothingToCancel)]
    );
    assert_eq!(
        m.handle(30_000, Input::Tick),
        vec![Effect::Enqueue(Event::Recover)]
    );
    assert_eq!(m.handle(60_000, Input::Tick), vec![]);
    assert!(!m.handle(60_000, Input::Event(Event::Recover)).is_empty());
    assert_eq!(m.rid(), Some(1));
}

#[test]
fn recovery_of_a_final_task_executes_nothing() {
    let mut s = mid_migration_store();
    s.state_mut().task.as_mut().unwrap().status = TaskStatus::Failed;
    let (mut m, _) = Manager::start(Config::default(), s, live(), 0).unwrap();
    assert_eq!(m.handle(0, Input::Event(Event::Recover)), vec![]);
    assert_eq!(m.overall(), Some(OverallStatus::Failed));
    assert_eq!(m.counts().failed, 2);
    assert!(!m.has_in_progress());
}

#[test]
fn a_deposed_coordinator_cannot_write() {
    let mut m = started(store(1), Config::default());
    // A newer coordinator is elected on the same store (D7).
    let newer = m.store_mut().elect_coordinator().unwrap();
    // The newer coordinator changes a bucket: this cache is stale now, which is fine for a
    // deposed incarnation (the debug invariant check must not trip on it).
    m.store_mut()
        .write_bucket(newer, 0, &rec(&[0, 1, 2], Some(1), &[0, 1, 2], 1, 1))
        .unwrap();
    assert_eq!(m.handle(0, Input::Tick), vec![]);
    assert_eq!(
        register(&mut m, vec![mv(0)]),
        vec![Effect::Reply(Reply::StoreError)]
    );
    assert!(matches!(
        m.store_failures().1,
        Some(rebalance_manager::StoreError::Fenced { .. })
    ));
    assert_eq!(m.rid(), None);
}

#[test]
fn start_fails_cleanly_when_the_store_fails() {
    let mut s = store(1);
    s.fail_all(true);
    let err = Manager::start(Config::default(), s, live(), 0).unwrap_err();
    assert!(matches!(err, rebalance_manager::StartError::Store(_)));
    let bad = Config {
        check_interval_ms: 0,
        ..Config::default()
    };
    assert!(matches!(
        Manager::start(
            bad,
            MemStore::with_state(PersistedState::default()),
            live(),
            0
        ),
        Err(rebalance_manager::StartError::Config(_))
    ));
}

#[test]
fn after_a_restart_only_an_ack_of_this_incarnation_completes_a_restored_leader_only_bucket() {
    // Before the crash (incarnation 1) the election already moved the leader to 1.
    let mut s = store(1);
    s.put_bucket(0, rec(&[0, 1, 2], Some(1), &[0, 1, 2], 1, 1));
    s.state_mut().coordinator_epoch = 1;
    s.state_mut().task = Some(TaskNode {
        id: 1,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::new(Plan::new(vec![lo(0)])),
    });
    let (mut m, _) = Manager::start(Config::default(), s, live(), 0).unwrap();
    // D4: not at origin (the new leader is in place): restored as tracked, no election.
    assert_eq!(
        m.handle(0, Input::Event(Event::Recover)),
        vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))]
    );
    let k = Some(key(1, 0));
    let resend: Vec<Effect> = (0..3)
        .map(|to| nli(to, 0, &[0, 1, 2], Some(1), 1, &[0, 1, 2], 1, 2, k))
        .collect();
    assert_eq!(
        m.handle(0, Input::Event(Event::Reconcile(key(1, 0)))),
        resend
    );
    // Same key, leader and epochs, but the previous incarnation's coordinator epoch: ignored.
    let old = nli(1, 0, &[0, 1, 2], Some(1), 1, &[0, 1, 2], 1, 1, k);
    let before = m.snapshot();
    assert_eq!(m.handle(0, ack(&old, true)), vec![]);
    assert_eq!(m.snapshot(), before);
    // This incarnation's ack from the new leader completes it.
    assert_eq!(m.handle(0, ack(&resend[1], true)), vec![]);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
}
