//! Group commit on ZooKeeper: a batch of writes as one fenced multi-op (spec/protocol.md, "Group
//! commit"). ZooKeeper applies a multi-op as one transaction, so a batch lands whole or not at
//! all; its first operation checks the coordinator epoch (D7), as every single write's does.

use std::collections::BTreeMap;
use std::sync::Arc;

use rebalance_manager::store::batch::{BatchStore, BatchedWrite};
use rebalance_manager::store::StoreError;
use rebalance_manager::{BucketId, BucketRecord, Epoch, Plan, TaskNode};

use super::codec::{encode, TaskHeader};
use super::doubt::{Known, Target};
use super::fenced::{self, Op, WriteFail};
use super::{TaskCache, ZkStore, MAX_BATCH_WRITES};

/// One node's write in the multi-op: its path, data, the version it must be at, and the cache
/// entry it becomes.
struct NodeWrite {
    target: Target,
    path: String,
    data: Vec<u8>,
    version: i32,
}

impl BatchStore for ZkStore {
    fn max_batch(&self) -> usize {
        MAX_BATCH_WRITES
    }

    /// A single write whose answer was lost and is not yet resolved (the next operation reads
    /// its node back and undoes it if it landed), or a batch whose answer was lost.
    fn in_doubt(&self) -> bool {
        self.in_doubt.is_some() || self.batch_in_doubt.is_some()
    }

    /// One multi-op: the epoch check, then a versioned `setData` per node. Several writes of one
    /// node in the batch become its last one (the transaction is atomic, so the ones before it
    /// are never seen). Every node must exist and the task must keep its stored plan: the
    /// batching adapter sends the writes that create nodes (a new plan, a deleted marker) one at a
    /// time. A batch whose answer was lost may have landed: the store then refuses every
    /// operation until it is reopened, since the incarnation that wrote it must stop anyway.
    fn write_batch(
        &mut self,
        writer_epoch: Epoch,
        writes: &[BatchedWrite],
    ) -> Result<(), StoreError> {
        self.prepare()?;
        if writes.len() > MAX_BATCH_WRITES {
            return Err(StoreError::Io(format!(
                "a batch of {} writes exceeds the {MAX_BATCH_WRITES} of one ZooKeeper request",
                writes.len()
            )));
        }
        let mut buckets: BTreeMap<BucketId, &BucketRecord> = BTreeMap::new();
        let mut task: Option<&TaskNode> = None;
        for w in writes {
            match w {
                BatchedWrite::Bucket { bucket, record } => {
                    buckets.insert(*bucket, record);
                }
                BatchedWrite::Task(t) => task = Some(t),
            }
        }
        let mut nodes = Vec::with_capacity(buckets.len() + 1);
        for (b, record) in buckets {
            nodes.push(self.bucket_write(b, record)?);
        }
        if let Some(t) = task {
            nodes.push(self.task_status_write(t)?);
        }
        let ops: Vec<Op<'_>> = nodes
            .iter()
            .map(|n| Op::Set(&n.path, &n.data, n.version))
            .collect();
        match fenced::write(&mut self.session, &self.layout, writer_epoch, &ops) {
            Ok(_) => {}
            Err(f) => {
                for n in &nodes {
                    self.forget(n.target);
                }
                if let WriteFail::InDoubt(e) = &f {
                    self.batch_in_doubt = Some(format!(
                        "a batch of {} writes may have landed ({e})",
                        nodes.len()
                    ));
                }
                return Err(f.into_store_error(&self.layout.paths.buckets()));
            }
        }
        self.acknowledged_writes += nodes.len() as u64;
        for n in nodes {
            let known = Known {
                version: n.version + 1,
                data: n.data,
            };
            match n.target {
                Target::Bucket(b) => {
                    self.buckets.insert(b, known);
                }
                Target::Task => {
                    if let TaskCache::Present { known: k, .. } = &mut self.task {
                        *k = known;
                    }
                    if let Some(t) = task {
                        self.set_task_status(t);
                    }
                }
                Target::Deleted(_) => {}
            }
        }
        Ok(())
    }
}

impl ZkStore {
    /// The `setData` of bucket `b` at its cached version (read if not cached).
    fn bucket_write(
        &mut self,
        b: BucketId,
        record: &BucketRecord,
    ) -> Result<NodeWrite, StoreError> {
        self.ensure_bucket_known(b)?;
        let path = self.layout.paths.bucket(b);
        let Some(before) = self.buckets.get(&b) else {
            return Err(StoreError::Conflict(format!(
                "{path} (a batch writes only existing bucket nodes)"
            )));
        };
        Ok(NodeWrite {
            target: Target::Bucket(b),
            data: encode(record),
            version: before.version,
            path,
        })
    }

    /// The `setData` of the task node with `task`'s status and cancel flag, keeping the stored
    /// plan's chunks, which `task` must carry (same id and plan).
    fn task_status_write(&mut self, task: &TaskNode) -> Result<NodeWrite, StoreError> {
        if matches!(self.task, TaskCache::Unknown) {
            self.load_task()?;
        }
        let path = self.layout.paths.task();
        match &self.task {
            TaskCache::Present {
                known,
                header,
                plan,
            } if header.id == task.id && same_plan(plan, &task.plan) => Ok(NodeWrite {
                target: Target::Task,
                data: encode(&TaskHeader {
                    id: task.id,
                    status: task.status,
                    cancel_requested: task.cancel_requested,
                    plan: header.plan.clone(),
                }),
                version: known.version,
                path,
            }),
            _ => Err(StoreError::Conflict(format!(
                "{path} (a batch keeps the stored plan; task {} does not)",
                task.id
            ))),
        }
    }

    /// The cached header after a batched status write of `task` landed.
    fn set_task_status(&mut self, task: &TaskNode) {
        if let TaskCache::Present { header, .. } = &mut self.task {
            header.status = task.status;
            header.cancel_requested = task.cancel_requested;
        }
    }
}

/// The same plan: the same `Arc` (the batching adapter's case, so O(1)), or equal entries (a
/// caller holding a copy read earlier).
fn same_plan(stored: &Arc<Plan>, written: &Arc<Plan>) -> bool {
    Arc::ptr_eq(stored, written) || stored == written
}
