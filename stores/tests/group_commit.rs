//! The batching adapter and the outbox on their own (spec/protocol.md, "Group commit"): a failed
//! flush loses the batch and stops the adapter (G3), writes become durable in order (G2), reads
//! see the writes before them (G4), and held effects leave only once their writes are durable,
//! in emission order (G1). The store contract runs the adapter against every store.

#[path = "../../impl/tests/integration/common/mod.rs"]
mod common;

use std::sync::Arc;

use common::{mv, rec};
use rebalance_manager::{
    Effect, Event, MemStore, PersistedState, Plan, Reply, Store, StoreError, TaskNode, TaskStatus,
};
use rebalance_stores::group_commit::{released_durable, Outbox};
use rebalance_stores::GroupCommit;

fn store() -> MemStore {
    let mut s = PersistedState::default();
    for b in 0..4 {
        s.cluster
            .buckets
            .insert(b, rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    }
    MemStore::with_state(s)
}

#[test]
fn a_failed_flush_loses_the_batch_and_stops_the_adapter() {
    let mut gc = GroupCommit::new(store(), 10);
    let e = gc.elect_coordinator().unwrap();
    let before = gc.inner().state().clone();
    gc.write_bucket(e, 0, &rec(&[1, 2, 3], Some(1), &[1, 2], 1, 1))
        .unwrap();
    gc.write_bucket(e, 1, &rec(&[1, 2, 3], Some(1), &[1, 2], 1, 1))
        .unwrap();
    gc.inner_mut().fail_nth_op(1); // the flush is the store's next operation
    assert_eq!(gc.flush(), Err(StoreError::Injected));
    assert_eq!(gc.lost(), Some(&StoreError::Injected));
    assert_eq!(gc.inner().state(), &before, "nothing of the batch landed");
    assert_eq!(gc.durable(), 1, "only the election is durable");
    // Every later operation fails: the incarnation must stop (G3).
    let again = gc.write_bucket(e, 2, &rec(&[0], Some(0), &[0], 2, 2));
    assert!(matches!(again, Err(StoreError::Poisoned(_))), "{again:?}");
    assert!(matches!(gc.read_task(), Err(StoreError::Poisoned(_))));
    assert!(gc.flush().is_err());
    assert_eq!(gc.inner().state(), &before);
}

#[test]
fn a_write_that_fills_the_batch_fails_if_its_flush_fails() {
    let mut gc = GroupCommit::new(store(), 2);
    let e = gc.elect_coordinator().unwrap();
    gc.write_bucket(e, 0, &rec(&[1], Some(1), &[1], 1, 1))
        .unwrap();
    gc.inner_mut().fail_nth_op(1);
    let full = gc.write_bucket(e, 1, &rec(&[1], Some(1), &[1], 1, 1));
    assert_eq!(
        full,
        Err(StoreError::Injected),
        "the core learns of it (R8)"
    );
    assert!(gc.lost().is_some());
}

#[test]
fn reads_and_single_writes_come_after_the_open_batch() {
    let mut gc = GroupCommit::new(store(), 100);
    let e = gc.elect_coordinator().unwrap();
    let plan = Arc::new(Plan::new(vec![mv(0)]));
    let task = TaskNode {
        id: 1,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::clone(&plan),
    };
    // A new plan goes by itself (it creates nodes on ZooKeeper): durable at once.
    gc.write_task(e, &task).unwrap();
    assert_eq!(gc.inner().state().task.as_ref(), Some(&task));
    let r = rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1);
    gc.write_bucket(e, 0, &r).unwrap();
    // A status write of the stored plan is batched.
    let done = TaskNode {
        status: TaskStatus::Completed,
        ..task.clone()
    };
    gc.write_task(e, &done).unwrap();
    assert_eq!(gc.pending(), 2);
    assert_eq!(gc.inner().state().task.as_ref(), Some(&task));
    assert!(
        gc.inspect().is_none(),
        "the store is not what the core sees"
    );
    // R16's read makes the open batch durable first (G4), in order (G2).
    assert_eq!(gc.read_task().unwrap(), Some(done.clone()));
    assert_eq!(gc.pending(), 0);
    assert_eq!(gc.inner().state().cluster.buckets[&0], r);
    assert_eq!((gc.acknowledged(), gc.durable()), (4, 4));
    // A deleted marker goes by itself, after what was queued before it.
    gc.write_bucket(e, 1, &r).unwrap();
    gc.mark_deleted(e, 1).unwrap();
    assert_eq!(gc.inner().state().cluster.buckets[&1], r);
    assert!(gc.inner().state().cluster.deleted.contains(&1));
}

#[test]
fn held_effects_leave_in_order_once_their_writes_are_durable() {
    let mut gc = GroupCommit::new(store(), 3);
    let e = gc.elect_coordinator().unwrap();
    let mut outbox = Outbox::new();
    let r = |be| rec(&[0, 1, 2], Some(0), &[0, 1], be, be);
    let reply = |n| vec![Effect::Reply(Reply::Accepted(n))];
    // Input 1 writes two buckets; input 2 writes nothing; input 3's first write fills the batch
    // (flushed there), its second opens the next one.
    gc.write_bucket(e, 0, &r(1)).unwrap();
    gc.write_bucket(e, 1, &r(1)).unwrap();
    outbox.hold(gc.acknowledged(), 1, reply(1));
    outbox.hold(gc.acknowledged(), 2, vec![Effect::Enqueue(Event::Recover)]);
    assert_eq!(outbox.release(gc.durable()).count(), 0);
    gc.write_bucket(e, 2, &r(1)).unwrap();
    gc.write_bucket(e, 3, &r(1)).unwrap();
    outbox.hold(gc.acknowledged(), 3, reply(3));
    let out: Vec<i32> = outbox.release(gc.durable()).map(|h| h.input).collect();
    assert_eq!(
        out,
        vec![1, 2],
        "inputs 1 and 2 are durable; 3 waits for its second write"
    );
    gc.flush().unwrap();
    let out: Vec<i32> = outbox.release(gc.durable()).map(|h| h.input).collect();
    assert_eq!(out, vec![3]);
    assert!(outbox.is_empty());
}

#[test]
fn released_durable_refuses_what_the_store_does_not_back() {
    let mut gc = GroupCommit::new(store(), 10);
    let e = gc.elect_coordinator().unwrap();
    let r = rec(&[1, 2, 3], Some(1), &[1, 2, 3], 1, 1);
    gc.write_bucket(e, 0, &r).unwrap();
    let nli = Effect::SendNli(rebalance_manager::Nli {
        to: 1,
        bucket: 0,
        replicas: r.assignment.clone(),
        leader: r.lai.leader,
        leader_epoch: r.lai.leader_epoch,
        isr: r.lai.isr.clone(),
        bucket_epoch: r.lai.bucket_epoch,
        coordinator_epoch: e,
        exec_key: None,
    });
    let before = released_durable(&nli, gc.inner().state());
    assert!(before.is_err(), "the write is not durable yet: {before:?}");
    gc.flush().unwrap();
    assert_eq!(released_durable(&nli, gc.inner().state()), Ok(()));
    let accepted = Effect::Reply(Reply::Accepted(1));
    assert!(released_durable(&accepted, gc.inner().state()).is_err());
}
