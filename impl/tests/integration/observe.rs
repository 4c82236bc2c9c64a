//! The observation accessors an operator or a harness reads report what the manager holds. The
//! conformance harness compares `snapshot()` and the store, not these, so they are tested here
//! (mutation testing found them unchecked).

use crate::common;

use common::*;
use rebalance_manager::{Config, Input, Plan, StoreError};

fn config() -> Config {
    Config {
        max_inflight: 2,
        max_tracked_timed_out: 3,
        ..Config::default()
    }
}

#[test]
fn a_fresh_manager_reports_its_config_epoch_clock_cluster_and_no_failures() {
    let m = started(store(2), config());
    assert_eq!(m.config(), &config());
    assert_eq!(
        m.coordinator_epoch(),
        1,
        "the first incarnation on a fresh store"
    );
    assert_eq!(m.now_ms(), 0);
    assert_eq!(m.live(), &live());
    assert_eq!(
        m.bucket(1),
        Some(&rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0))
    );
    assert_eq!(m.bucket(2), None, "bucket 2 does not exist");
    assert!(m.plan().is_empty());
    assert_eq!(m.store_failures(), (0, None));
}

#[test]
fn the_clock_is_the_largest_time_seen() {
    let mut m = started(store(1), config());
    m.handle(7_000, Input::Tick);
    assert_eq!(m.now_ms(), 7_000);
    m.handle(3_000, Input::Tick);
    assert_eq!(m.now_ms(), 7_000, "time never goes back");
}

#[test]
fn the_registered_plan_and_server_liveness_are_reported() {
    let mut m = started(store(2), config());
    let plan = Plan::new(vec![mv(0), lo(1)]);
    m.handle(0, Input::Register { plan: plan.clone() });
    assert_eq!(**m.plan(), plan);
    m.handle(0, Input::ServerCrashed(3));
    assert_eq!(m.live(), &set(&[0, 1, 2]));
}

#[test]
fn each_failed_store_operation_is_counted_with_the_last_error() {
    let mut m = started(store(1), config());
    for expected in 1..=2 {
        m.store_mut().fail_nth_op(1);
        m.handle(
            0,
            Input::Register {
                plan: Plan::new(vec![mv(0)]),
            },
        );
        let (count, last) = m.store_failures();
        assert_eq!(count, expected);
        assert!(matches!(last, Some(StoreError::Injected)), "{last:?}");
    }
}
