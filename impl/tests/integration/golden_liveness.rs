//! Golden tests of server liveness and bucket deletion: R19, R20, deletion
//! (src/core/manager/liveness.rs): the exact effect list of one input in each important situation.
//! Split by rule group from the former tests/golden.rs; shared setup is in tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{BucketStatus, Config, Effect, Event, Input, OverallStatus};

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
fn a_leader_crash_elects_the_next_isr_member_and_resends() {
    let mut m = started(store(1), Config::default());
    let effects = m.handle(0, Input::ServerCrashed(0));
    assert_eq!(
        effects,
        vec![
            nli(1, 0, &[0, 1, 2], Some(1), 1, &[1, 2], 1, 1, None),
            nli(2, 0, &[0, 1, 2], Some(1), 1, &[1, 2], 1, 1, None),
        ]
    );
    // Restart: no election (there is a leader), resend to every live member.
    let effects = m.handle(0, Input::ServerRestarted(0));
    assert_eq!(effects.len(), 3);
}

#[test]
fn a_liveness_write_failure_keeps_the_cache_and_is_retried_on_tick() {
    let mut m = started(store(1), Config::default());
    m.store_mut().fail_nth_op(1);
    assert_eq!(m.handle(0, Input::ServerCrashed(0)), vec![]);
    assert_eq!(m.bucket(0).unwrap().lai.leader, Some(0));
    assert_eq!(m.snapshot().liveness_repairs, set(&[0]));
    let effects = m.handle(30_000, Input::Tick);
    assert_eq!(effects.len(), 2);
    assert_eq!(m.bucket(0).unwrap().lai.leader, Some(1));
    assert!(m.snapshot().liveness_repairs.is_empty());
}
