//! The storage port (spec 3.1): a narrow trait over the persisted state, and the in-memory
//! adapter. The durable adapters (a file, ZooKeeper) are the `rebalance-stores` crate.
//!
//! Every call is one store operation: it may fail, and a failed call changes nothing. Writes are
//! conditional on the writer's coordinator epoch (D7) and fail with [`StoreError::Fenced`] when
//! a newer coordinator has been elected.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::core::types::{BucketId, BucketRecord, Epoch, TaskNode};

pub mod batch;
pub mod mem;

/// The cluster part of the persisted state: what the coordinator context caches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterState {
    /// `assignment[b]` and `lai[b]` per bucket.
    pub buckets: BTreeMap<BucketId, BucketRecord>,
    /// `deleted[b]`.
    pub deleted: BTreeSet<BucketId>,
}

/// Everything the store persists (spec 3.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedState {
    /// The current coordinator incarnation's epoch.
    pub coordinator_epoch: Epoch,
    /// The rebalance task node, if any.
    pub task: Option<TaskNode>,
    /// Assignments, LeaderAndIsr and deleted markers.
    pub cluster: ClusterState,
}

impl PersistedState {
    /// D7: a write by `writer_epoch` is accepted only from the current incarnation.
    pub fn check_writer(&self, writer_epoch: Epoch) -> Result<(), StoreError> {
        if writer_epoch == self.coordinator_epoch {
            Ok(())
        } else {
            Err(StoreError::Fenced {
                writer_epoch,
                store_epoch: self.coordinator_epoch,
            })
        }
    }
}

/// A failed store operation. The operation changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The writer's coordinator epoch is not the store's current one (D7: a deposed coordinator).
    #[error("write fenced: writer epoch {writer_epoch}, store epoch {store_epoch}")]
    Fenced {
        /// The epoch the write carried.
        writer_epoch: Epoch,
        /// The store's current epoch.
        store_epoch: Epoch,
    },
    /// A fault injected by a test adapter (F-STORE, spec 3.1).
    #[error("injected store failure")]
    Injected,
    /// The durable medium failed; the message names the operation and the cause.
    #[error("store I/O failed: {0}")]
    Io(String),
    /// An earlier I/O failure left the adapter unable to guarantee its files; reopen it.
    #[error("store unusable after an earlier I/O failure; reopen it: {0}")]
    Poisoned(String),
    /// The remote store did not answer in time or the connection was lost (ZooKeeper). The
    /// operation changed nothing: a write whose outcome was unknown is resolved, and undone if it
    /// landed, before the adapter's next operation.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The remote store ended the adapter's session (ZooKeeper session expiry); the adapter opens
    /// a new session on its next operation.
    #[error("store session expired: {0}")]
    SessionExpired(String),
    /// A stored record does not decode (damaged or written by something else); nothing was
    /// changed, and the record is left as found.
    #[error("corrupt store record {node}: {detail}")]
    Corrupt {
        /// The record (a ZooKeeper path).
        node: String,
        /// What failed to verify.
        detail: String,
    },
    /// A stored record of a format version this build does not know; left as found.
    #[error("store record {node} has unsupported format version {version}")]
    UnsupportedVersion {
        /// The record (a ZooKeeper path).
        node: String,
        /// The version found.
        version: u64,
    },
    /// A record was changed behind the adapter's back by a writer that did not raise the
    /// coordinator epoch; the write was refused.
    #[error("store record {0} changed behind the coordinator's back")]
    Conflict(String),
}

/// The storage port. `&mut self` on reads too: an operation may fail, and test adapters count
/// operations to inject a fault at exactly the k-th one.
pub trait Store {
    /// R17: atomically raise the coordinator epoch by one and return the new epoch (the
    /// coordinator's leader election). Every later write of older epochs is fenced.
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError>;

    /// R17: read assignments, LeaderAndIsr and deleted markers to fill the context's cache.
    fn load_cluster(&mut self) -> Result<ClusterState, StoreError>;

    /// R16: read the task node.
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError>;

    /// R1, R2, R15: create or overwrite the task node.
    fn write_task(&mut self, writer_epoch: Epoch, task: &TaskNode) -> Result<(), StoreError>;

    /// `write_bucket` (spec 4): assignment and LeaderAndIsr of one bucket, atomically.
    fn write_bucket(
        &mut self,
        writer_epoch: Epoch,
        bucket: BucketId,
        record: &BucketRecord,
    ) -> Result<(), StoreError>;

    /// Bucket deletion: set `deleted[b]`.
    fn mark_deleted(&mut self, writer_epoch: Epoch, bucket: BucketId) -> Result<(), StoreError>;

    /// The persisted state without I/O, for debug checks (INV-CONTEXT-COHERENT and friends).
    /// Not a store operation and never counted. `None` if the adapter cannot look without I/O.
    fn inspect(&self) -> Option<&PersistedState> {
        None
    }
}
