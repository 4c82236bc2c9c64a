//! Golden tests of responses and ISR changes: R11, R12, R18 (src/core/manager/responses.rs): the
//! exact effect list of one input in each important situation. Split by rule group from the former
//! tests/golden.rs; shared setup is in tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{
    AdjustIsrError, BucketStatus, Config, Effect, Input, LeaderAndIsr, OverallStatus, Reply,
    TaskStatus,
};

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
    let effects = m.handle(0, Input::ServerCrashed(3));
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
    let effects = m.handle(0, Input::ServerRestarted(3));
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
