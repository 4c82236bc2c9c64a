//! Golden tests of admission and execution: R3-R7, R9, R10 and the slots of D14
//! (src/core/manager/execute.rs): the exact effect list of one input in each important situation.
//! Split by rule group from the former tests/golden.rs; shared setup is in tests/integration/common/mod.rs.

use crate::common;

use common::*;
use rebalance_manager::{BucketStatus, Config, Effect, Event, Input, Reply};

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
