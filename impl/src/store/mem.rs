//! `MemStore`: the in-memory adapter with fault injection, for tests, the conformance harness
//! and benchmarks.

use crate::core::types::{BucketId, BucketRecord, Epoch, TaskNode};
use crate::store::batch::{BatchStore, BatchedWrite};
use crate::store::{ClusterState, PersistedState, Store, StoreError};

/// An in-memory store. `Clone` copies the whole state, so a harness can branch.
///
/// Fault injection mirrors the model's "the k-th store operation of this step fails":
/// [`MemStore::fail_nth_op`] arms a one-shot failure, [`MemStore::fail_all`] fails every
/// operation until turned off, and [`MemStore::op_count`] counts every operation attempted.
#[derive(Clone, Debug, Default)]
pub struct MemStore {
    state: PersistedState,
    ops: u64,
    fail_at: Option<u64>,
    fail_all: bool,
}

impl MemStore {
    /// An empty store (epoch 0, no task, no bucket).
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding `state`.
    pub fn with_state(state: PersistedState) -> Self {
        MemStore {
            state,
            ..Self::default()
        }
    }

    /// Environment setup (not a coordinator operation, never fenced or counted): put a bucket.
    pub fn put_bucket(&mut self, bucket: BucketId, record: BucketRecord) {
        self.state.cluster.buckets.insert(bucket, record);
    }

    /// The persisted state.
    pub fn state(&self) -> &PersistedState {
        &self.state
    }

    /// Environment access to the persisted state (tests that play another writer).
    pub fn state_mut(&mut self) -> &mut PersistedState {
        &mut self.state
    }

    /// Make the `k`-th store operation from now fail (1-based, one-shot). `k = 0` disarms.
    pub fn fail_nth_op(&mut self, k: u64) {
        self.fail_at = if k == 0 { None } else { Some(self.ops + k) };
    }

    /// Fail every operation while `on`.
    pub fn fail_all(&mut self, on: bool) {
        self.fail_all = on;
    }

    /// Operations attempted so far (successful or not).
    pub fn op_count(&self) -> u64 {
        self.ops
    }

    /// True if a `fail_nth_op` failure is armed and has not fired yet (the step performed
    /// fewer operations than `k`).
    pub fn fault_pending(&self) -> bool {
        self.fail_at.is_some()
    }

    /// Counts one operation and decides whether it fails (the batch extension,
    /// `store::batch`, counts a whole batch as one).
    pub(crate) fn count_op(&mut self) -> Result<(), StoreError> {
        self.ops += 1;
        if self.fail_at == Some(self.ops) {
            self.fail_at = None;
            return Err(StoreError::Injected);
        }
        if self.fail_all {
            return Err(StoreError::Injected);
        }
        Ok(())
    }
}

impl Store for MemStore {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.count_op()?;
        self.state.coordinator_epoch += 1;
        Ok(self.state.coordinator_epoch)
    }

    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.count_op()?;
        Ok(self.state.cluster.clone())
    }

    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.count_op()?;
        Ok(self.state.task.clone())
    }

    fn write_task(&mut self, writer_epoch: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        self.count_op()?;
        self.state.check_writer(writer_epoch)?;
        self.state.task = Some(task.clone());
        Ok(())
    }

    fn write_bucket(
        &mut self,
        writer_epoch: Epoch,
        bucket: BucketId,
        record: &BucketRecord,
    ) -> Result<(), StoreError> {
        self.count_op()?;
        self.state.check_writer(writer_epoch)?;
        self.state.cluster.buckets.insert(bucket, record.clone());
        Ok(())
    }

    fn mark_deleted(&mut self, writer_epoch: Epoch, bucket: BucketId) -> Result<(), StoreError> {
        self.count_op()?;
        self.state.check_writer(writer_epoch)?;
        self.state.cluster.deleted.insert(bucket);
        Ok(())
    }

    fn inspect(&self) -> Option<&PersistedState> {
        Some(&self.state)
    }
}

/// All or nothing, and one store operation: `fail_nth_op` and `fail_all` fail a batch as they
/// fail any other operation, with nothing applied.
impl BatchStore for MemStore {
    fn max_batch(&self) -> usize {
        usize::MAX
    }

    fn write_batch(
        &mut self,
        writer_epoch: Epoch,
        writes: &[BatchedWrite],
    ) -> Result<(), StoreError> {
        self.count_op()?;
        let state = self.state_mut();
        state.check_writer(writer_epoch)?;
        for w in writes {
            w.apply(state);
        }
        Ok(())
    }
}
