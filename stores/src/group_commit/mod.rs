//! Group commit in the host: the writes of many inputs made durable in one operation, and every
//! input's effects held until its writes are (spec/protocol.md, "Group commit").
//!
//! The protocol core is unchanged: it calls the storage port once per write, and a write it is
//! told succeeded is in its cache. [`GroupCommit`] is that port for the core. It queues each
//! write in an open batch and answers at once; the host makes the batch durable with
//! [`GroupCommit::flush`] (one fsync for [`crate::FileStore`], one fenced multi-op for
//! [`crate::ZkStore`]) and carries out an input's effects only once the batch holding its writes
//! is durable. [`Outbox`] holds them meanwhile.
//!
//! # The host procedure
//!
//! In the order raft-rs documents its `Ready` loop (persist, then send, then go on), one input at
//! a time:
//!
//! 1. **Take an input** (a message, the front of the event queue, a tick, a client request) and
//!    call `handle(now_ms, input)`. Its writes go into the open batch; a batch that reaches its
//!    size bound is flushed by the adapter there and then.
//! 2. **Hold its effects** ([`Outbox::hold`]), in order, behind the ones already held:
//!    messages, events and replies alike. Nothing an input caused leaves the incarnation before
//!    its writes are durable.
//! 3. **Flush** when the oldest held input has waited the latency bound, or when no input can be
//!    taken without a held effect (the network and the event queue are empty):
//!    [`GroupCommit::flush`], one durable operation fenced by the coordinator epoch. (The size
//!    bound flushes inside step 1.)
//! 4. **Release** every held input whose writes are all durable ([`Outbox::release`] with
//!    [`GroupCommit::durable`]: after a flush, including one the size bound made inside a later
//!    input, or at once after an input that left nothing pending), in the order they were
//!    emitted: send the messages, append the events to the event queue, answer the clients.
//!    Then go to 1.
//! 5. **On a failed flush** (an error, a lost answer, a fence), or a write that went alone and
//!    failed in doubt ([`BatchStore::in_doubt`]): stop the incarnation, without releasing the
//!    input that made it. Discard the held effects ([`Outbox::discard`]) and the event queue,
//!    drop the manager, and start a new incarnation on the store (R17), which recovers (R16)
//!    from what is durable. No effect of the lost batch's inputs was observed, so this is a
//!    coordinator crash before those inputs, with the messages they had consumed lost on the way
//!    (spec, "Group commit").
//!
//! A batch of one write ([`GroupCommit::new`] with limit 1) is the host without group commit:
//! every write goes straight to the store's own single-write call, a failure is returned to the
//! core (R8) and nothing is ever held; only a failure in doubt stops the incarnation.

mod outbox;
mod released;

use std::sync::Arc;

use rebalance_manager::store::batch::{BatchStore, BatchedWrite};
use rebalance_manager::store::{ClusterState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Epoch, PersistedState, Plan, TaskNode};

pub use outbox::{Held, Outbox};
pub use released::released_durable;

/// What a [`GroupCommit`] has done, for the host's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Batches made durable.
    pub flushes: u64,
    /// Writes those batches held.
    pub batched_writes: u64,
    /// The largest batch.
    pub largest: usize,
    /// Writes that went to the store one at a time (limit 1, or a write that creates a node).
    pub single_writes: u64,
}

/// The batching adapter: the storage port the core writes through, gathering its writes into
/// batches of at most `limit`. See the module documentation for the host procedure around it.
#[derive(Clone, Debug)]
pub struct GroupCommit<S> {
    inner: S,
    limit: usize,
    open: Vec<BatchedWrite>,
    /// The writer epoch of the open batch's writes (one incarnation writes with one epoch).
    open_epoch: Epoch,
    /// The stored task's id and plan as this adapter last wrote or read them: a task write that
    /// keeps them is a status write and can be batched; one with a new plan goes alone.
    stored_plan: Option<(u64, Arc<Plan>)>,
    /// A flush failed (the batch may be lost, and the core's cache is ahead of the store), or a
    /// write that went alone failed in doubt (the store may be ahead of the core's cache).
    lost: Option<StoreError>,
    /// Writes acknowledged to the core, and how many of them are durable (a prefix: batches are
    /// made durable in order, and a write that goes alone flushes the open batch first).
    acknowledged: u64,
    durable: u64,
    stats: CommitStats,
}

impl<S: BatchStore> GroupCommit<S> {
    /// The adapter over `inner`, with batches of at most `limit` writes (at least 1, at most
    /// what `inner` takes in one operation). Limit 1 is the store without group commit.
    pub fn new(inner: S, limit: usize) -> Self {
        let limit = limit.clamp(1, inner.max_batch().max(1));
        GroupCommit {
            inner,
            limit,
            open: Vec::new(),
            open_epoch: 0,
            stored_plan: None,
            lost: None,
            acknowledged: 0,
            durable: 0,
            stats: CommitStats::default(),
        }
    }

    /// The batch size bound in force.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Writes in the open batch, acknowledged to the core and not yet durable.
    pub fn pending(&self) -> usize {
        self.open.len()
    }

    /// Writes acknowledged to the core so far (queued or durable): the [`Outbox`] notes it at the
    /// end of each input.
    pub fn acknowledged(&self) -> u64 {
        self.acknowledged
    }

    /// How many of the acknowledged writes are durable: the first `durable()` of them.
    pub fn durable(&self) -> u64 {
        self.durable
    }

    /// Set once a flush failed, or a write that went alone failed and may have landed
    /// ([`BatchStore::in_doubt`]): the incarnation must stop (step 5 of the host procedure).
    pub fn lost(&self) -> Option<&StoreError> {
        self.lost.as_ref()
    }

    /// What this adapter has done.
    pub fn stats(&self) -> CommitStats {
        self.stats
    }

    /// The store underneath (its durable state, for checks and figures).
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The store underneath, for the host's own setup and fault injection.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Gives back the store underneath, dropping the open batch (a crash: it never became
    /// durable).
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Makes the open batch durable in one operation of the store underneath and returns how
    /// many writes it held. On failure the adapter is lost: every later call fails, and the host
    /// must stop the incarnation.
    pub fn flush(&mut self) -> Result<usize, StoreError> {
        if let Some(e) = &self.lost {
            return Err(e.clone());
        }
        if self.open.is_empty() {
            return Ok(0);
        }
        let n = self.open.len();
        match self.inner.write_batch(self.open_epoch, &self.open) {
            Ok(()) => {
                self.open.clear();
                self.durable += n as u64;
                self.stats.flushes += 1;
                self.stats.batched_writes += n as u64;
                self.stats.largest = self.stats.largest.max(n);
                Ok(n)
            }
            Err(e) => {
                self.open.clear();
                self.lost = Some(e.clone());
                Err(e)
            }
        }
    }

    /// The state the core sees: the store underneath with the open batch applied, when the store
    /// can show its state without I/O. For conformance checks; O(store).
    pub fn logical_state(&self) -> Option<PersistedState> {
        let mut state = self.inner.inspect()?.clone();
        for w in &self.open {
            w.apply(&mut state);
        }
        Some(state)
    }

    fn check_usable(&self) -> Result<(), StoreError> {
        match &self.lost {
            Some(e) => Err(StoreError::Poisoned(format!(
                "a batch was not made durable ({e}); this incarnation must stop"
            ))),
            None => Ok(()),
        }
    }

    /// Before an operation that goes to the store by itself: everything queued before it is
    /// made durable first, so the store sees the writes in the order the core issued them.
    fn barrier(&mut self) -> Result<(), StoreError> {
        self.check_usable()?;
        self.flush().map(|_| ())
    }

    /// Queues `w`, flushing first if it carries another epoch than the open batch, and after if
    /// the batch is then full. A failed flush fails this write too.
    fn queue(&mut self, writer_epoch: Epoch, w: BatchedWrite) -> Result<(), StoreError> {
        self.check_usable()?;
        if writer_epoch != self.open_epoch {
            self.flush()?;
            self.open_epoch = writer_epoch;
        }
        self.open.push(w);
        self.acknowledged += 1;
        if self.open.len() >= self.limit {
            self.flush()?;
        }
        Ok(())
    }

    /// Counts a write that went to the store by itself (after the open batch, so it is durable
    /// in order). A failure the store cannot vouch for (the write may have landed) loses the
    /// adapter as a failed flush does: the core was told the write failed, so the input that
    /// made it must never be released, and the incarnation must stop (G3).
    fn single<T>(&mut self, r: Result<T, StoreError>) -> Result<T, StoreError> {
        match &r {
            Ok(_) => {
                self.stats.single_writes += 1;
                self.acknowledged += 1;
                self.durable += 1;
            }
            Err(e) if self.inner.in_doubt() => self.lost = Some(e.clone()),
            Err(_) => {}
        }
        r
    }

    fn keeps_stored_plan(&self, task: &TaskNode) -> bool {
        self.stored_plan
            .as_ref()
            .is_some_and(|(id, plan)| *id == task.id && Arc::ptr_eq(plan, &task.plan))
    }
}

impl<S: BatchStore> Store for GroupCommit<S> {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.barrier()?;
        let r = self.inner.elect_coordinator();
        self.single(r)
    }

    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.barrier()?;
        self.inner.load_cluster()
    }

    /// R16's read, after the open batch is durable: the core reads what it wrote.
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.barrier()?;
        let task = self.inner.read_task()?;
        self.stored_plan = task.as_ref().map(|t| (t.id, Arc::clone(&t.plan)));
        Ok(task)
    }

    /// A status write of the stored plan is batched; a new plan (R1) is written by itself, after
    /// the open batch, since it creates nodes (ZooKeeper's plan chunks) and is written once per
    /// rebalance.
    fn write_task(&mut self, writer_epoch: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        if self.limit > 1 && self.keeps_stored_plan(task) {
            return self.queue(writer_epoch, BatchedWrite::Task(task.clone()));
        }
        self.barrier()?;
        let r = self.inner.write_task(writer_epoch, task);
        self.single(r)?;
        self.stored_plan = Some((task.id, Arc::clone(&task.plan)));
        Ok(())
    }

    fn write_bucket(
        &mut self,
        writer_epoch: Epoch,
        bucket: BucketId,
        record: &BucketRecord,
    ) -> Result<(), StoreError> {
        if self.limit == 1 {
            self.check_usable()?;
            let r = self.inner.write_bucket(writer_epoch, bucket, record);
            return self.single(r);
        }
        self.queue(
            writer_epoch,
            BatchedWrite::Bucket {
                bucket,
                record: record.clone(),
            },
        )
    }

    /// A deleted marker creates a node: written by itself, after the open batch (deletions are
    /// rare).
    fn mark_deleted(&mut self, writer_epoch: Epoch, bucket: BucketId) -> Result<(), StoreError> {
        self.barrier()?;
        let r = self.inner.mark_deleted(writer_epoch, bucket);
        self.single(r)
    }

    /// The store's state without I/O only while nothing is queued: with an open batch, what the
    /// store holds is not what the core was told.
    fn inspect(&self) -> Option<&PersistedState> {
        if self.open.is_empty() {
            self.inner.inspect()
        } else {
            None
        }
    }
}
