//! Shared fixtures: a four-server cluster whose buckets all start at [0, 1, 2], leader 0.
#![allow(dead_code)]

use std::collections::BTreeSet;

use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Event, Input, Key, LeaderAndIsr, Manager, MemStore,
    Nli, Plan, PlanEntry, ServerId,
};

/// A time past the first admission's task timeout: > task_timeout_ms (120 000) after admission
/// at 0.
pub const TIMEOUT_DUE: u64 = 150_000;

pub fn set(v: &[ServerId]) -> BTreeSet<ServerId> {
    v.iter().copied().collect()
}

pub fn rec(
    assignment: &[ServerId],
    leader: Option<ServerId>,
    isr: &[ServerId],
    le: u64,
    be: u64,
) -> BucketRecord {
    BucketRecord {
        assignment: assignment.to_vec(),
        lai: LeaderAndIsr {
            leader,
            leader_epoch: le,
            isr: set(isr),
            bucket_epoch: be,
            coordinator_epoch: 0,
        },
    }
}

/// A store with buckets `0..n` at [0, 1, 2], leader 0, ISR {0, 1, 2}, epochs 0.
pub fn store(n: BucketId) -> MemStore {
    let mut s = MemStore::new();
    for b in 0..n {
        s.put_bucket(b, rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    }
    s
}

pub fn live() -> BTreeSet<ServerId> {
    set(&[0, 1, 2, 3])
}

/// Move [0, 1, 2] -> [1, 2, 3]: rs = [1, 2, 3, 0], new leader 1.
pub fn mv(b: BucketId) -> (BucketId, PlanEntry) {
    (
        b,
        PlanEntry::new(vec![0, 1, 2], vec![1, 2, 3], Some(0)).unwrap(),
    )
}

/// Leader-only [0, 1, 2] leader 0 -> [1, 0, 2] leader 1.
pub fn lo(b: BucketId) -> (BucketId, PlanEntry) {
    (
        b,
        PlanEntry::new(vec![0, 1, 2], vec![1, 0, 2], Some(0)).unwrap(),
    )
}

/// Start a manager and run its recovery event (store without a task), asserting the effects.
pub fn started(store: MemStore, config: Config) -> Manager<MemStore> {
    let (mut m, effects) = Manager::start(config, store, live(), 0).unwrap();
    assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    let effects = m.handle(0, Input::Event(Event::Recover));
    assert_eq!(effects, vec![]);
    m
}

pub fn key(rid: u64, bucket: BucketId) -> Key {
    Key { rid, bucket }
}

/// An expected NotifyLeaderAndIsr.
#[allow(clippy::too_many_arguments)]
pub fn nli(
    to: ServerId,
    bucket: BucketId,
    replicas: &[ServerId],
    leader: Option<ServerId>,
    leader_epoch: u64,
    isr: &[ServerId],
    bucket_epoch: u64,
    coordinator_epoch: u64,
    exec_key: Option<Key>,
) -> Effect {
    Effect::SendNli(Nli {
        to,
        bucket,
        replicas: replicas.to_vec(),
        leader,
        leader_epoch,
        isr: set(isr),
        bucket_epoch,
        coordinator_epoch,
        exec_key,
    })
}

/// The four Phase A sends of a `mv` bucket at bucket epoch 1 from incarnation `ce`.
pub fn phase_a_sends(b: BucketId, ce: u64, rid: u64) -> Vec<Effect> {
    (0..4)
        .map(|to| {
            nli(
                to,
                b,
                &[1, 2, 3, 0],
                Some(0),
                0,
                &[0, 1, 2],
                1,
                ce,
                Some(key(rid, b)),
            )
        })
        .collect()
}

/// The context a response to `e` (an `Effect::SendNli`) carries, with the responder.
pub fn ack(e: &Effect, ok: bool) -> Input {
    let Effect::SendNli(n) = e else {
        panic!("not an Nli: {e:?}")
    };
    Input::NliResponse {
        from: n.to,
        bucket: n.bucket,
        ok,
        context: n.context(),
    }
}

/// Register `plan` at time 0 and return the effects.
pub fn register(m: &mut Manager<MemStore>, plan: Vec<(BucketId, PlanEntry)>) -> Vec<Effect> {
    m.handle(
        0,
        Input::Register {
            plan: Plan::new(plan),
        },
    )
}
