//! Golden tests: the exact effect list of one input in each important situation.

mod common;

use common::*;
use rebalance_manager::{
    AdjustIsrError, BucketStatus, Config, Effect, Event, Input, LeaderAndIsr, Manager, MemStore,
    OverallStatus, PersistedState, Plan, RejectReason, Reply, Store, TaskNode, TaskStatus,
};
use std::sync::Arc;

const TIMEOUT_DUE: u64 = 150_000; // > task_timeout_ms (120 000) after admission at 0

fn register(
    m: &mut Manager<MemStore>,
    plan: Vec<(u32, rebalance_manager::PlanEntry)>,
) -> Vec<Effect> {
    m.handle(
        0,
        Input::Register {
            plan: Plan::new(plan),
        },
    )
}

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
fn phase_b_on_caught_up_isr_then_completion_on_the_leaders_ack() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    // R18: the leader proposes the union as ISR; R11 runs Phase B at once.
    let effects = m.handle(
        0,
        Input::AdjustIsr {
            from: 0,
            bucket: 0,
            leader_epoch: 0,
            bucket_epoch: 1,
            isr: set(&[0, 1, 2, 3]),
        },
    );
    let new_lai = LeaderAndIsr {
        leader: Some(0),
        leader_epoch: 0,
        isr: set(&[0, 1, 2, 3]),
        bucket_epoch: 2,
        coordinator_epoch: 1,
    };
    let k = Some(key(1, 0));
    assert_eq!(
        effects,
        vec![
            Effect::SendAdjustIsrResponse {
                to: 0,
                bucket: 0,
                result: Ok(new_lai)
            },
            nli(1, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 3, 1, k),
            nli(2, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 3, 1, k),
            nli(3, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 3, 1, k),
        ]
    );
    // Phase B does not finish the bucket.
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Rebalancing));
    // A follower's current ack does not complete it.
    assert_eq!(m.handle(0, ack(&effects[2], true)), vec![]);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Rebalancing));
    // The leader's current ack completes it and admits the next bucket.
    assert_eq!(m.handle(0, ack(&effects[1], true)), phase_a_sends(1, 1, 1));
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Completed));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Rebalancing));
}

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
fn a_stale_nli_response_changes_nothing_and_emits_nothing() {
    let mut m = started(store(1), Config::default());
    let effects = register(&mut m, vec![lo(0)]);
    // Election: leader 1, leader epoch 1, bucket epoch 1.
    let current = effects[2].clone(); // the Nli to server 1
    let Effect::SendNli(n) = &current else {
        panic!()
    };
    let stale_variants = [
        rebalance_manager::RequestContext {
            bucket_epoch: n.bucket_epoch - 1,
            ..n.context()
        },
        rebalance_manager::RequestContext {
            leader_epoch: 0,
            ..n.context()
        },
        rebalance_manager::RequestContext {
            coordinator_epoch: 0,
            ..n.context()
        },
        rebalance_manager::RequestContext {
            exec_key: Some(key(9, 0)),
            ..n.context()
        },
        rebalance_manager::RequestContext {
            exec_key: None,
            ..n.context()
        },
    ];
    let before = m.snapshot();
    for context in stale_variants {
        assert_eq!(
            m.handle(
                0,
                Input::NliResponse {
                    from: 1,
                    bucket: 0,
                    ok: true,
                    context
                }
            ),
            vec![]
        );
        assert_eq!(m.snapshot(), before);
    }
    // A failed response with the current context changes nothing either.
    assert_eq!(m.handle(0, ack(&current, false)), vec![]);
    assert_eq!(m.snapshot(), before);
}

#[test]
fn a_leader_only_task_completes_only_on_the_new_leaders_current_ack() {
    let mut m = started(store(1), Config::default());
    let effects = register(&mut m, vec![lo(0)]);
    let k = Some(key(1, 0));
    assert_eq!(
        effects,
        vec![
            Effect::Reply(Reply::Accepted(1)),
            nli(0, 0, &[0, 1, 2], Some(1), 1, &[0, 1, 2], 1, 1, k),
            nli(1, 0, &[0, 1, 2], Some(1), 1, &[0, 1, 2], 1, 1, k),
            nli(2, 0, &[0, 1, 2], Some(1), 1, &[0, 1, 2], 1, 1, k),
        ]
    );
    // The old leader's current ack does not complete it.
    assert_eq!(m.handle(0, ack(&effects[1], true)), vec![]);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Rebalancing));
    // The new leader's current ack does, and the rebalance is finalized and persisted.
    assert_eq!(m.handle(0, ack(&effects[2], true)), vec![]);
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Completed));
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    assert_eq!(
        m.store().state().task.as_ref().unwrap().status,
        TaskStatus::Completed
    );
}

#[test]
fn retry_phase_a_sends_without_bumping_epochs() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    m.handle(TIMEOUT_DUE, Input::Tick);
    m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0))));
    let record_before = m.bucket(0).unwrap().clone();
    let ops_before = m.store().op_count();
    let effects = m.handle(TIMEOUT_DUE, Input::Event(Event::Reconcile(key(1, 0))));
    assert_eq!(effects, phase_a_sends(0, 1, 1));
    assert_eq!(m.bucket(0).unwrap(), &record_before);
    assert_eq!(m.store().op_count(), ops_before, "R7.4 writes nothing");
    let a = m.attempt(0).unwrap();
    assert_eq!(
        (a.reconciles, a.next_reconcile_ms),
        (1, TIMEOUT_DUE + 30_000)
    );
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
fn a_deleted_bucket_completes() {
    let mut m = started(store(2), Config::default());
    register(&mut m, vec![mv(0), mv(1)]);
    // Pending bucket 1 deleted: it completes at admission (R4.1).
    assert_eq!(m.handle(0, Input::BucketDeleted(1)), vec![]);
    // Running bucket 0 deleted: noticed at timeout + reconcile (R14.1).
    assert_eq!(m.handle(0, Input::BucketDeleted(0)), vec![]);
    m.handle(TIMEOUT_DUE, Input::Tick);
    // The timeout frees the slot; bucket 1 is admitted and completes at once; 0 stays tracked.
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0)))),
        vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))]
    );
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Completed));
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Reconcile(key(1, 0)))),
        vec![]
    );
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Completed));
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    assert!(m.store().state().cluster.deleted.contains(&0));
}

#[test]
fn the_tracked_cap_stops_admission() {
    let config = Config {
        max_tracked_timed_out: 1,
        ..Config::default()
    };
    let mut m = started(store(3), config);
    register(&mut m, vec![mv(0), mv(1), mv(2)]);
    m.handle(TIMEOUT_DUE, Input::Tick);
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0)))),
        vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))]
    );
    assert_eq!(m.counts().rebalancing, 0);
    assert_eq!(m.snapshot().pending, vec![1, 2]);
}

#[test]
fn max_inflight_zero_pauses_admission() {
    let config = Config {
        max_inflight: 0,
        ..Config::default()
    };
    let mut m = started(store(1), config);
    assert_eq!(
        register(&mut m, vec![mv(0)]),
        vec![Effect::Reply(Reply::Accepted(1))]
    );
    assert_eq!(m.bucket_status(0), Some(BucketStatus::NotStarted));
}

#[test]
fn give_up_when_a_target_stays_down() {
    let mut m = started(store(1), Config::default());
    register(&mut m, vec![mv(0)]);
    m.handle(0, Input::ServerDown(3));
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
fn adjust_isr_is_fenced_and_a_store_failure_replies_err() {
    let mut m = started(store(1), Config::default());
    let adjust = |le, be, from, isr: &[u32]| Input::AdjustIsr {
        from,
        bucket: 0,
        leader_epoch: le,
        bucket_epoch: be,
        isr: set(isr),
    };
    let err = |e| {
        vec![Effect::SendAdjustIsrResponse {
            to: 0,
            bucket: 0,
            result: Err(e),
        }]
    };
    assert_eq!(
        m.handle(0, adjust(0, 1, 0, &[0, 1])),
        err(AdjustIsrError::InvalidBucketEpoch)
    );
    assert_eq!(
        m.handle(0, adjust(1, 0, 0, &[0, 1])),
        err(AdjustIsrError::FencedLeaderEpoch)
    );
    assert_eq!(
        m.handle(0, adjust(0, 0, 0, &[0, 1, 3])),
        err(AdjustIsrError::IneligibleReplica)
    );
    assert_eq!(
        m.handle(0, adjust(0, 0, 0, &[0, 1, 2])),
        err(AdjustIsrError::NoChange)
    );
    assert_eq!(
        m.handle(0, adjust(0, 0, 1, &[0, 1])),
        vec![Effect::SendAdjustIsrResponse {
            to: 1,
            bucket: 0,
            result: Err(AdjustIsrError::NotLeader)
        }]
    );
    m.store_mut().fail_nth_op(1);
    assert_eq!(
        m.handle(0, adjust(0, 0, 0, &[0, 1])),
        err(AdjustIsrError::StoreError)
    );
    assert_eq!(m.bucket(0).unwrap().lai.bucket_epoch, 0);
}

#[test]
fn a_leader_crash_elects_the_next_isr_member_and_resends() {
    let mut m = started(store(1), Config::default());
    let effects = m.handle(0, Input::ServerDown(0));
    assert_eq!(
        effects,
        vec![
            nli(1, 0, &[0, 1, 2], Some(1), 1, &[1, 2], 1, 1, None),
            nli(2, 0, &[0, 1, 2], Some(1), 1, &[1, 2], 1, 1, None),
        ]
    );
    // Restart: no election (there is a leader), resend to every live member.
    let effects = m.handle(0, Input::ServerUp(0));
    assert_eq!(effects.len(), 3);
}

#[test]
fn a_liveness_write_failure_keeps_the_cache_and_is_retried_on_tick() {
    let mut m = started(store(1), Config::default());
    m.store_mut().fail_nth_op(1);
    assert_eq!(m.handle(0, Input::ServerDown(0)), vec![]);
    assert_eq!(m.bucket(0).unwrap().lai.leader, Some(0));
    assert_eq!(m.snapshot().liveness_repairs, set(&[0]));
    let effects = m.handle(30_000, Input::Tick);
    assert_eq!(effects.len(), 2);
    assert_eq!(m.bucket(0).unwrap().lai.leader, Some(1));
    assert!(m.snapshot().liveness_repairs.is_empty());
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

#[test]
fn a_target_down_after_phase_b_waits_without_resending_then_the_isr_change_resends_for_the_ack() {
    let mut m = started(store(1), Config::default());
    register(&mut m, vec![mv(0)]);
    m.handle(
        0,
        Input::AdjustIsr {
            from: 0,
            bucket: 0,
            leader_epoch: 0,
            bucket_epoch: 1,
            isr: set(&[0, 1, 2, 3]),
        },
    );
    // Phase B done: [1, 2, 3], leader 1, leader epoch 1, bucket epoch 3. Target 3 crashes (R19).
    let k = Some(key(1, 0));
    let effects = m.handle(0, Input::ServerDown(3));
    assert_eq!(
        effects,
        vec![
            nli(1, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k),
            nli(2, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k),
        ]
    );
    // R11: at target but not caught up: a current ack changes nothing (no resend loop).
    assert_eq!(m.handle(0, ack(&effects[0], true)), vec![]);
    // R20: 3 is back; the leader is there, so only a resend.
    let effects = m.handle(0, Input::ServerUp(3));
    assert_eq!(
        effects,
        vec![
            nli(1, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k),
            nli(2, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k),
            nli(3, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k),
        ]
    );
    // R18: the ISR is whole again: final_state holds, so resend for the leader's ack.
    let effects = m.handle(
        0,
        Input::AdjustIsr {
            from: 1,
            bucket: 0,
            leader_epoch: 1,
            bucket_epoch: 4,
            isr: set(&[1, 2, 3]),
        },
    );
    let lai = LeaderAndIsr {
        leader: Some(1),
        leader_epoch: 1,
        isr: set(&[1, 2, 3]),
        bucket_epoch: 5,
        coordinator_epoch: 1,
    };
    assert_eq!(
        effects,
        vec![
            Effect::SendAdjustIsrResponse {
                to: 1,
                bucket: 0,
                result: Ok(lai)
            },
            nli(1, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 5, 1, k),
            nli(2, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 5, 1, k),
            nli(3, 0, &[1, 2, 3], Some(1), 1, &[1, 2, 3], 5, 1, k),
        ]
    );
    // The ack to the pre-crash request is stale; the leader's current ack completes.
    assert_eq!(
        m.handle(
            0,
            Input::NliResponse {
                from: 1,
                bucket: 0,
                ok: true,
                context: {
                    let Effect::SendNli(n) = nli(1, 0, &[1, 2, 3], Some(1), 1, &[1, 2], 4, 1, k)
                    else {
                        unreachable!()
                    };
                    n.context()
                }
            }
        ),
        vec![]
    );
    assert_eq!(m.handle(0, ack(&effects[1], true)), vec![]);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
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

/// `INV-TRACKED-BOUND` with several slots (spec 7.1, D14; NOTES.md, reading 16): with two slots
/// both running attempts may time out, so the tracked set exceeds M = 1 (R3 caps admission, not
/// timeouts); nothing more is admitted meanwhile.
#[test]
fn with_two_slots_both_running_attempts_can_become_tracked() {
    let config = Config {
        max_inflight: 2,
        max_tracked_timed_out: 1,
        ..Config::default()
    };
    let mut m = started(store(3), config);
    let effects = register(&mut m, vec![mv(0), mv(1), mv(2)]);
    assert_eq!(
        effects.len(),
        1 + 4 + 4,
        "two buckets admitted, each runs Phase A"
    );
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Tick),
        vec![
            Effect::Enqueue(Event::Timeout(key(1, 0))),
            Effect::Enqueue(Event::Timeout(key(1, 1)))
        ]
    );
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 0)))),
        vec![Effect::Enqueue(Event::Reconcile(key(1, 0)))]
    );
    assert_eq!(
        m.handle(TIMEOUT_DUE, Input::Event(Event::Timeout(key(1, 1)))),
        vec![Effect::Enqueue(Event::Reconcile(key(1, 1)))]
    );
    assert_eq!(
        (
            m.counts().timeout,
            m.counts().rebalancing,
            m.counts().not_started
        ),
        (2, 0, 1)
    );
    m.check_invariants().unwrap();
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
