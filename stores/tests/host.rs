//! The host type (`rebalance_stores::Host`, spec/protocol.md "Group commit"): an input's effects
//! leave only once its writes are durable (G1), a lost batch stops the incarnation and drops
//! what it held (G3), a batch of one holds nothing, identical NotifyLeaderAndIsr requests leave
//! once per release, a write in doubt stops the incarnation before its input leaves, and the
//! `INV-RELEASED-DURABLE` check, as an observer, catches a host that releases early.

#[path = "../../impl/tests/integration/common/mod.rs"]
mod common;

use common::{mv, rec};
use rebalance_manager::{
    BatchStore, BatchedWrite, BucketId, BucketRecord, ClusterState, Config, Effect, Epoch, Input,
    MemStore, PersistedState, Plan, Reply, Store, StoreError, TaskNode,
};
use rebalance_stores::group_commit::released_durable;
use rebalance_stores::{Flow, GroupCommit, Host, Observer};

type H = Host<GroupCommit<MemStore>, u32>;

fn store() -> MemStore {
    let mut s = PersistedState::default();
    for b in 0..4 {
        s.cluster
            .buckets
            .insert(b, rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    }
    MemStore::with_state(s)
}

/// A host on `limit`-write batches that has recovered (input 0).
fn host(limit: usize) -> H {
    let live = (0..4).collect();
    let (mut h, effects) = H::start(Config::default(), GroupCommit::new(store(), limit), live, 0)
        .expect("the in-memory store starts");
    assert_eq!(effects.len(), 1, "R17 enqueues Recover: {effects:?}");
    let recover = h.next_event().expect("Recover is queued at once");
    assert_eq!(
        h.offer(0, Input::Event(recover), &mut Check::default(), |_| 0),
        Ok(Flow::Going)
    );
    assert!(!h.holding() && h.take_outgoing().is_empty());
    h
}

fn register() -> Input {
    Input::Register {
        plan: Plan::new(vec![mv(0), mv(1)]),
    }
}

/// The observer a program would use: every released effect checked against the durable store,
/// and what was released, by input.
#[derive(Debug, Default)]
struct Check {
    released: Vec<(u32, usize)>,
}

impl Observer<u32> for Check {
    type Error = String;

    fn released(
        &mut self,
        note: &u32,
        effects: &[Effect],
        durable: Option<&PersistedState>,
    ) -> Result<(), String> {
        let durable = durable.expect("MemStore shows its durable state");
        for e in effects {
            released_durable(e, durable)?;
        }
        self.released.push((*note, effects.len()));
        Ok(())
    }
}

fn nlis(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::SendNli(_)))
        .count()
}

#[test]
fn effects_wait_for_their_writes_and_leave_in_emission_order() {
    let mut h = host(100);
    let mut check = Check::default();
    // Register stores the plan (alone, durable at once) and starts bucket 0's move, whose
    // metadata write waits in the open batch: the reply and the requests wait with it.
    assert_eq!(h.offer(0, register(), &mut check, |_| 1), Ok(Flow::Going));
    assert_eq!(h.adapter().pending(), 1);
    assert!(h.holding());
    assert!(
        h.take_outgoing().is_empty(),
        "nothing leaves before the flush"
    );
    assert!(check.released.is_empty());
    assert_eq!(h.oldest_held(), Some(&1));
    assert_eq!(h.flush(&mut check), Ok(Flow::Going));
    let out = h.take_outgoing();
    assert_eq!(out[0], Effect::Reply(Reply::Accepted(1)), "{out:?}");
    assert_eq!(
        nlis(&out),
        4,
        "one request to each replica old and new: {out:?}"
    );
    assert_eq!(check.released, vec![(1, 5)]);
    assert!(!h.holding());
}

#[test]
fn identical_requests_leave_once_per_release() {
    let mut h = host(100);
    let mut check = Check::default();
    let _ = h.offer(0, register(), &mut check, |_| 1).unwrap();
    // R20 resends the moving bucket's current request to its replicas, twice, while the
    // original is held: all three releases carry the same four requests.
    let _ = h
        .offer(0, Input::ServerRestarted(3), &mut check, |_| 2)
        .unwrap();
    let _ = h
        .offer(0, Input::ServerRestarted(3), &mut check, |_| 3)
        .unwrap();
    assert_eq!(h.flush(&mut check), Ok(Flow::Going));
    assert_eq!(
        check.released,
        vec![(1, 5), (2, 4), (3, 4)],
        "the observer sees every effect"
    );
    assert_eq!(nlis(&h.take_outgoing()), 4, "each request is sent once");
    // A later release sends a request again: the rule is per release.
    let _ = h
        .offer(0, Input::ServerRestarted(3), &mut check, |_| 4)
        .unwrap();
    assert_eq!(nlis(&h.take_outgoing()), 4);
}

#[test]
fn a_lost_batch_stops_the_incarnation_and_drops_what_it_held() {
    let mut h = host(100);
    let mut check = Check::default();
    let _ = h.offer(0, register(), &mut check, |_| 1).unwrap();
    let _ = h
        .offer(0, Input::ServerRestarted(3), &mut check, |_| 2)
        .unwrap();
    h.store_mut().inner_mut().fail_nth_op(1); // the flush is the store's next operation
    assert_eq!(h.flush(&mut check), Ok(Flow::Stopped(StoreError::Injected)));
    assert_eq!(h.stopped(), Some(&StoreError::Injected));
    assert!(
        h.take_outgoing().is_empty(),
        "no effect of the lost batch's inputs leaves"
    );
    assert!(check.released.is_empty());
    let stopped = h.stop();
    assert_eq!(stopped.discarded, 2);
    // The plan is durable (it went alone); bucket 0's move is not.
    let durable = stopped.store.into_inner();
    assert!(durable.state().task.is_some());
    assert_eq!(durable.state().cluster.buckets[&0].lai.bucket_epoch, 0);
    // The next incarnation starts on what is durable and recovers.
    let live = (0..4).collect();
    let (mut next, _) = H::start(Config::default(), GroupCommit::new(durable, 100), live, 0)
        .expect("a new incarnation starts");
    let recover = next.next_event().unwrap();
    assert_eq!(
        next.offer(0, Input::Event(recover), &mut check, |_| 3),
        Ok(Flow::Going)
    );
    assert!(
        next.manager().rid().is_some(),
        "recovery finds the stored plan"
    );
}

#[test]
#[should_panic(expected = "stopped incarnation")]
fn a_stopped_incarnation_takes_no_input() {
    let mut h = host(100);
    let _ = h.offer(0, register(), &mut (), |_| 1).unwrap();
    h.store_mut().inner_mut().fail_nth_op(1);
    assert!(matches!(h.flush(&mut ()), Ok(Flow::Stopped(_))));
    let _ = h.offer(0, Input::Tick, &mut (), |_| 2);
}

#[test]
fn a_batch_of_one_holds_nothing() {
    let mut h = host(1);
    let mut check = Check::default();
    assert_eq!(h.offer(0, register(), &mut check, |_| 1), Ok(Flow::Going));
    assert!(!h.holding());
    assert_eq!(nlis(&h.take_outgoing()), 4);
    assert_eq!(check.released, vec![(1, 5)]);
}

#[test]
fn the_release_check_catches_a_host_that_releases_early() {
    let mut h = host(100);
    h.plant_early_release();
    let err = h
        .offer(0, register(), &mut Check::default(), |_| 1)
        .expect_err("a request released before its metadata is durable");
    assert!(err.contains("NotifyLeaderAndIsr of bucket 0"), "{err}");
}

/// A batch that fills inside an input is flushed there (step 1); when that flush fails, the
/// input's own call answers that the incarnation stopped, and nothing of it leaves.
#[test]
fn a_batch_lost_inside_an_input_stops_the_incarnation_at_that_input() {
    let live = (0..4).collect();
    let config = Config {
        max_inflight: 2,
        ..Config::default()
    };
    let (mut h, _) = H::start(config, GroupCommit::new(store(), 2), live, 0).unwrap();
    let recover = h.next_event().unwrap();
    let _ = h.offer(0, Input::Event(recover), &mut (), |_| 0).unwrap();
    // Register writes the plan alone (the store's first operation from here), then both
    // buckets' moves: the second fills the batch, whose flush is the second operation.
    h.store_mut().inner_mut().fail_nth_op(2);
    let mut check = Check::default();
    assert_eq!(
        h.offer(0, register(), &mut check, |_| 1),
        Ok(Flow::Stopped(StoreError::Injected))
    );
    assert!(h.take_outgoing().is_empty() && check.released.is_empty());
    assert_eq!(h.stop().discarded, 1);
}

/// A store whose chosen bucket write lands and still answers a failure, as a ZooKeeper write
/// whose answer is lost does (spec/findings.md F25): in doubt until the store settles it.
#[derive(Debug)]
struct Doubtful {
    inner: MemStore,
    /// The bucket write (1-based, counted from the start) that lands and fails.
    land_and_fail_at: u64,
    bucket_writes: u64,
    doubt: bool,
}

impl Store for Doubtful {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.inner.elect_coordinator()
    }
    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.inner.load_cluster()
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.inner.read_task()
    }
    fn write_task(&mut self, e: Epoch, t: &TaskNode) -> Result<(), StoreError> {
        self.inner.write_task(e, t)
    }
    fn write_bucket(&mut self, e: Epoch, b: BucketId, r: &BucketRecord) -> Result<(), StoreError> {
        self.bucket_writes += 1;
        self.inner.write_bucket(e, b, r)?;
        if self.bucket_writes == self.land_and_fail_at {
            self.doubt = true;
            return Err(StoreError::Unavailable("the answer was lost".into()));
        }
        Ok(())
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        self.inner.mark_deleted(e, b)
    }
    fn inspect(&self) -> Option<&PersistedState> {
        self.inner.inspect()
    }
}

impl BatchStore for Doubtful {
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
    fn write_batch(&mut self, e: Epoch, writes: &[BatchedWrite]) -> Result<(), StoreError> {
        self.inner.write_batch(e, writes)
    }
    fn in_doubt(&self) -> bool {
        self.doubt
    }
}

/// A recovered host without group commit on a store whose `land_and_fail_at`-th bucket write
/// from now lands and fails, in doubt.
fn doubtful_host(land_and_fail_at: u64) -> Host<GroupCommit<Doubtful>, u32> {
    let store = Doubtful {
        inner: store(),
        land_and_fail_at,
        bucket_writes: 0,
        doubt: false,
    };
    let live = (0..4).collect();
    let (mut h, _) = Host::start(Config::default(), GroupCommit::new(store, 1), live, 0).unwrap();
    let recover = h.next_event().unwrap();
    assert_eq!(
        h.offer(0, Input::Event(recover), &mut (), |_| 0),
        Ok(Flow::Going)
    );
    h
}

/// Without group commit the core is told a write failed (R8) and goes on; if the write may have
/// landed, its input must not leave, or a crash before the store settles it leaves a store that
/// contradicts what the coordinator said (F25). The host stops at that input instead (G3), and
/// the restart reads the write as the cut-short input's.
#[test]
fn a_write_in_doubt_stops_the_incarnation_before_its_input_leaves() {
    let mut h = doubtful_host(1); // bucket 0's move
    let mut check = Check::default();
    assert_eq!(
        h.offer(0, register(), &mut check, |_| 1),
        Ok(Flow::Stopped(StoreError::Unavailable(
            "the answer was lost".into()
        )))
    );
    assert!(h.take_outgoing().is_empty() && check.released.is_empty());
    let stopped = h.stop();
    assert_eq!(stopped.discarded, 1);
    let durable = stopped.store.into_inner().inner;
    assert_eq!(
        durable.state().cluster.buckets[&0].lai.bucket_epoch,
        1,
        "the write in doubt landed"
    );
}

/// The contrast: a failure the store vouches for changed nothing, and the host goes on (R8).
#[test]
fn a_clean_write_failure_without_group_commit_goes_on() {
    let mut h = doubtful_host(u64::MAX);
    h.store_mut().inner_mut().inner.fail_nth_op(2); // the plan, then bucket 0
    let mut check = Check::default();
    assert_eq!(h.offer(0, register(), &mut check, |_| 1), Ok(Flow::Going));
    assert_eq!(check.released.len(), 1, "the input leaves: {check:?}");
    let durable = h.stop().store.into_inner().inner;
    assert_eq!(durable.state().cluster.buckets[&0].lai.bucket_epoch, 0);
}
