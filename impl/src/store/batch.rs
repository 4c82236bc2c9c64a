//! The storage port's batch extension, for group commit (spec/protocol.md, "Group commit"): a
//! store that can make the writes of many inputs durable in one operation. The protocol core
//! never calls it; it keeps calling [`Store`] once per write. The host's batching adapter
//! (`rebalance_stores::group_commit`) gathers those calls and hands them here.

use crate::core::types::{BucketId, BucketRecord, Epoch, TaskNode};
use crate::store::{PersistedState, Store, StoreError};

/// One write of a batch, as the core issued it through the port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchedWrite {
    /// `write_task` of the task whose plan the store already holds (same id, same `Arc`): R2's
    /// cancel flag or R15's final status. A task with a new plan (R1) is never batched.
    Task(TaskNode),
    /// `write_bucket` (spec 4).
    Bucket {
        /// The bucket.
        bucket: BucketId,
        /// Its new assignment and LeaderAndIsr.
        record: BucketRecord,
    },
}

impl BatchedWrite {
    /// `state` with this write applied (what a store holds once it is durable).
    pub fn apply(&self, state: &mut PersistedState) {
        match self {
            BatchedWrite::Task(task) => state.task = Some(task.clone()),
            BatchedWrite::Bucket { bucket, record } => {
                state.cluster.buckets.insert(*bucket, record.clone());
            }
        }
    }
}

/// A store that can make a batch of writes durable in one operation.
pub trait BatchStore: Store {
    /// The most writes one batch may hold (a ZooKeeper request has a size bound).
    fn max_batch(&self) -> usize;

    /// Makes `writes` durable, in order, in one operation fenced by `writer_epoch` (D7): a
    /// deposed coordinator's batch fails with [`StoreError::Fenced`] and changes nothing.
    ///
    /// `Ok` means every write is durable. On `Err` none of them is acknowledged, but how much of
    /// the batch is durable is known only to the medium: nothing, all of it (an answer lost on
    /// the way back), or, for a journal cut by a crash, a prefix in the order given. The caller
    /// must stop using the incarnation that issued them (spec, "Group commit").
    fn write_batch(
        &mut self,
        writer_epoch: Epoch,
        writes: &[BatchedWrite],
    ) -> Result<(), StoreError>;

    /// True while a write this store reported failed may have landed after all: its answer was
    /// lost (ZooKeeper), or a failed append could not be undone (a journal). Until the store
    /// settles it, R8's promise that a failed write changed nothing is not kept, and a crash
    /// would leave the write durable. A host stops the incarnation without releasing the input
    /// that made the write (spec/protocol.md, G3). A store whose failed writes never land keeps
    /// the default.
    fn in_doubt(&self) -> bool {
        false
    }
}
