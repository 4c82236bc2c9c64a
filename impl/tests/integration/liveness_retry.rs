//! The manager's retry of failed liveness and deletion writes (spec R23.5,
//! `impl/src/core/manager/liveness.rs`), which conformance now also walks (`ci-liveness-store`).
//! Each test fails the event's write, then checks what the next Tick repairs.

use crate::common;

use common::*;
use rebalance_manager::{Config, Effect, Input, Manager, MemStore, ServerId};

/// A manager over bucket 0 with `record`, whose next store operation fails.
fn with_failing_write(record: rebalance_manager::BucketRecord) -> Manager<MemStore> {
    let mut store = MemStore::new();
    store.put_bucket(0, record);
    let mut m = started(store, Config::default());
    m.store_mut().fail_nth_op(1);
    m
}

fn down_then_tick(m: &mut Manager<MemStore>, s: ServerId) -> Vec<Effect> {
    let before = m.bucket(0).unwrap().clone();
    assert_eq!(m.handle(0, Input::ServerCrashed(s)), vec![]);
    assert_eq!(
        m.bucket(0),
        Some(&before),
        "a failed write leaves the cache as it was"
    );
    assert!(m.snapshot().liveness_repairs.contains(&0));
    let effects = m.handle(30_000, Input::Tick);
    assert!(m.snapshot().liveness_repairs.is_empty());
    effects
}

fn nli_targets(effects: &[Effect]) -> Vec<ServerId> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendNli(n) => Some(n.to),
            _ => None,
        })
        .collect()
}

#[test]
fn a_failed_leader_crash_write_is_repaired_by_the_next_tick() {
    let mut m = with_failing_write(rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    let effects = down_then_tick(&mut m, 0);
    let lai = &m.bucket(0).unwrap().lai;
    assert_eq!(
        lai.leader,
        Some(1),
        "the first live ISR member in assignment order"
    );
    assert_eq!(lai.isr, set(&[1, 2]));
    assert!(lai.leader_epoch > 0 && lai.bucket_epoch > 0);
    assert_eq!(m.store().state().cluster.buckets[&0], *m.bucket(0).unwrap());
    assert_eq!(
        nli_targets(&effects),
        vec![1, 2],
        "the repair is sent to the live replicas"
    );
}

#[test]
fn the_repair_never_empties_the_isr_and_leaves_the_bucket_leaderless_without_a_live_member() {
    let mut m = with_failing_write(rec(&[0, 1, 2], Some(0), &[0], 0, 0));
    down_then_tick(&mut m, 0);
    let lai = &m.bucket(0).unwrap().lai;
    assert_eq!(lai.isr, set(&[0]));
    assert_eq!(lai.leader, None, "no live member of the ISR to elect");
}

#[test]
fn a_live_leader_is_kept_and_only_the_isr_shrinks() {
    // Assignment order puts 1 first, so electing anew would pick 1, not the live leader 0.
    let mut m = with_failing_write(rec(&[1, 0, 2], Some(0), &[0, 1, 2], 0, 0));
    down_then_tick(&mut m, 2);
    let lai = &m.bucket(0).unwrap().lai;
    assert_eq!(lai.leader, Some(0));
    assert_eq!(lai.isr, set(&[0, 1]));
}

#[test]
fn nothing_is_written_when_the_server_is_back_before_the_tick() {
    let mut m = with_failing_write(rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    assert_eq!(m.handle(0, Input::ServerCrashed(2)), vec![]);
    m.handle(0, Input::ServerRestarted(2));
    let (record, ops) = (m.bucket(0).unwrap().clone(), m.store().op_count());
    assert_eq!(m.handle(30_000, Input::Tick), vec![]);
    assert_eq!(m.store().op_count(), ops, "no write");
    assert_eq!(m.bucket(0), Some(&record));
    assert!(m.snapshot().liveness_repairs.is_empty());
}

#[test]
fn a_failed_deletion_marker_is_written_by_the_next_tick() {
    let mut m = with_failing_write(rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    m.handle(0, Input::BucketDeleted(0));
    assert!(!m.store().state().cluster.deleted.contains(&0));
    assert!(m.snapshot().deletion_retries.contains(&0));
    m.handle(30_000, Input::Tick);
    assert!(m.store().state().cluster.deleted.contains(&0));
    assert!(m.snapshot().deletion_retries.is_empty());
}
