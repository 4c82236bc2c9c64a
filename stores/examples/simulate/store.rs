//! The simulated store: the durable state in memory ([`MemStore`]) under the batching adapter,
//! with faults on both sides of it. Below it, [`FlushFaults`] fails a flush with nothing, a prefix
//! or all of the batch landed, and lets a write that goes alone land with its answer lost (in
//! doubt, as a ZooKeeper write can be). Above it, between the core and the adapter, [`CoreFaults`] fails
//! a core's store operation (R8) and checks every write it lets through: `INV-EPOCH-ONLY-ON-CHANGE`
//! and `INV-ELECTION-CLEAN` against the write before it, and the buckets written for the
//! per-input checks.

use std::collections::HashMap;

use rebalance_manager::sim::Rng;
use rebalance_manager::{
    BatchStore, BatchedWrite, BucketId, BucketRecord, ClusterState, Epoch, MemStore,
    PersistedState, Store, StoreError, TaskNode,
};
use rebalance_stores::GroupCommit;

/// How a failed flush left the durable store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landed {
    Nothing,
    /// The first `n` writes (a journal cut by a crash).
    Prefix(usize),
    /// All of it, the answer lost.
    All,
}

/// The durable store and the flush faults under the adapter.
#[derive(Debug)]
pub struct FlushFaults {
    pub durable: MemStore,
    /// The flushes that fail, by their index from the start of the run.
    pub fail_at: Vec<u64>,
    pub flushes: u64,
    pub rng: Rng,
    /// `SIMULATE_PLANT=drop-write`: a successful batch silently loses its last write (a planted
    /// bug the checks must catch).
    pub drop_write: bool,
    pub failed: Vec<Landed>,
    /// The writes that go alone (counted from the start of the run) that land and answer a
    /// failure, in doubt until the next incarnation reopens the store.
    pub doubt_at: Vec<u64>,
    pub singles: u64,
    pub doubt: bool,
    /// Writes left in doubt so far.
    pub doubted: u64,
    /// `SIMULATE_PLANT=hidden-doubt`: the store never says a write is in doubt (a planted bug
    /// the checks must catch).
    pub hide_doubt: bool,
}

impl FlushFaults {
    /// A write that goes alone: made durable, and then, if it is one of `doubt_at`, answered
    /// with a failure the store cannot vouch for.
    fn single(
        &mut self,
        write: impl FnOnce(&mut MemStore) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.singles += 1;
        write(&mut self.durable)?;
        if self.doubt_at.first() == Some(&self.singles) {
            self.doubt_at.remove(0);
            self.doubt = true;
            self.doubted += 1;
            return Err(StoreError::Unavailable(format!(
                "simulated lost answer of write {} (it landed)",
                self.singles
            )));
        }
        Ok(())
    }

    /// A new incarnation reopens the store: what it knows of an earlier write in doubt is gone
    /// (the write stays as it landed).
    pub fn reopen(&mut self) {
        self.doubt = false;
    }
}

impl Store for FlushFaults {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.durable.elect_coordinator()
    }
    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.durable.load_cluster()
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.durable.read_task()
    }
    fn write_task(&mut self, e: Epoch, t: &TaskNode) -> Result<(), StoreError> {
        self.single(|d| d.write_task(e, t))
    }
    fn write_bucket(&mut self, e: Epoch, b: BucketId, r: &BucketRecord) -> Result<(), StoreError> {
        self.single(|d| d.write_bucket(e, b, r))
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        self.single(|d| d.mark_deleted(e, b))
    }
    fn inspect(&self) -> Option<&PersistedState> {
        self.durable.inspect()
    }
}

impl BatchStore for FlushFaults {
    fn max_batch(&self) -> usize {
        usize::MAX
    }

    fn in_doubt(&self) -> bool {
        self.doubt && !self.hide_doubt
    }

    fn write_batch(&mut self, e: Epoch, writes: &[BatchedWrite]) -> Result<(), StoreError> {
        self.flushes += 1;
        if self.fail_at.first() == Some(&self.flushes) {
            self.fail_at.remove(0);
            let landed = match self.rng.below(3) {
                0 => Landed::Nothing,
                1 => Landed::Prefix(self.rng.below(writes.len() as u64 + 1) as usize),
                _ => Landed::All,
            };
            let n = match landed {
                Landed::Nothing => 0,
                Landed::Prefix(n) => n,
                Landed::All => writes.len(),
            };
            self.failed.push(landed);
            if n > 0 {
                self.durable.write_batch(e, &writes[..n])?;
            }
            return Err(StoreError::Io(format!(
                "simulated flush failure {} ({landed:?} of {} writes landed)",
                self.flushes,
                writes.len()
            )));
        }
        if self.drop_write && writes.len() > 1 {
            return self.durable.write_batch(e, &writes[..writes.len() - 1]);
        }
        self.durable.write_batch(e, writes)
    }
}

/// The store the core writes through.
pub type Adapter = GroupCommit<FlushFaults>;

/// Store failures of the core, and the checks of every write that reaches the adapter.
#[derive(Debug)]
pub struct CoreFaults {
    pub inner: Adapter,
    pub fail_ppm: u64,
    pub rng: Rng,
    pub failures: u64,
    /// Every bucket record this incarnation wrote, as last written: the record the core's cache
    /// must hold (the durable store may lag it).
    pub written: HashMap<BucketId, BucketRecord>,
    /// The task this incarnation last wrote.
    pub task: Option<TaskNode>,
    /// The buckets written since the host last took them.
    pub touched: Vec<BucketId>,
    /// The first write that broke a per-write invariant.
    pub violation: Option<String>,
}

impl CoreFaults {
    pub fn new(inner: Adapter, fail_ppm: u64, rng: Rng) -> Self {
        CoreFaults {
            inner,
            fail_ppm,
            rng,
            failures: 0,
            written: HashMap::new(),
            task: None,
            touched: Vec::new(),
            violation: None,
        }
    }

    fn op(&mut self) -> Result<(), StoreError> {
        if self.fail_ppm > 0 && self.rng.chance(self.fail_ppm) {
            self.failures += 1;
            return Err(StoreError::Injected);
        }
        Ok(())
    }

    /// The record the core last wrote for `b`, else the durable one.
    pub fn logical(&self, b: BucketId) -> Option<&BucketRecord> {
        self.written
            .get(&b)
            .or_else(|| self.inner.inner().durable.state().cluster.buckets.get(&b))
    }

    /// The task the core last wrote, else the durable one.
    pub fn logical_task(&self) -> Option<&TaskNode> {
        self.task
            .as_ref()
            .or(self.inner.inner().durable.state().task.as_ref())
    }

    /// INV-EPOCH-ONLY-ON-CHANGE and INV-ELECTION-CLEAN of one write (spec 7.1), against the
    /// bucket's record before it.
    fn check_write(
        &mut self,
        e: Epoch,
        b: BucketId,
        old: Option<&BucketRecord>,
        new: &BucketRecord,
    ) {
        let lai = &new.lai;
        let mut why = None;
        if let Some(old) = old {
            let leader_changed = old.lai.leader != lai.leader;
            if old.assignment == new.assignment && !leader_changed && old.lai.isr == lai.isr {
                why = Some("a write that changes nothing".to_string());
            } else if lai.bucket_epoch != old.lai.bucket_epoch + 1 {
                why = Some(format!(
                    "bucket epoch {} -> {}",
                    old.lai.bucket_epoch, lai.bucket_epoch
                ));
            } else if lai.leader_epoch != old.lai.leader_epoch + u64::from(leader_changed) {
                why = Some(format!(
                    "leader epoch {} -> {} with the leader {}changed",
                    old.lai.leader_epoch,
                    lai.leader_epoch,
                    if leader_changed { "" } else { "un" }
                ));
            }
        }
        if why.is_none() && lai.coordinator_epoch != e {
            why = Some(format!(
                "written by epoch {e} with coordinator epoch {}",
                lai.coordinator_epoch
            ));
        }
        if let Some(l) = lai.leader {
            if why.is_none() && (!new.assignment.contains(&l) || !lai.isr.contains(&l)) {
                why = Some(format!(
                    "INV-ELECTION-CLEAN: leader {l} not an assigned ISR member ({:?}, ISR {:?})",
                    new.assignment, lai.isr
                ));
            }
        }
        if let Some(why) = why {
            self.violation
                .get_or_insert(format!("INV-EPOCH-ONLY-ON-CHANGE: bucket {b}: {why}"));
        }
    }
}

impl Store for CoreFaults {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        // R17 assumes the election succeeds (spec 5); the host retries a start that failed.
        self.inner.elect_coordinator()
    }
    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.inner.load_cluster()
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.op()?;
        self.inner.read_task()
    }
    fn write_task(&mut self, e: Epoch, t: &TaskNode) -> Result<(), StoreError> {
        self.op()?;
        self.inner.write_task(e, t)?;
        self.task = Some(t.clone());
        Ok(())
    }
    fn write_bucket(&mut self, e: Epoch, b: BucketId, r: &BucketRecord) -> Result<(), StoreError> {
        self.op()?;
        let before = self.logical(b).cloned();
        self.inner.write_bucket(e, b, r)?;
        self.check_write(e, b, before.as_ref(), r);
        self.written.insert(b, r.clone());
        self.touched.push(b);
        Ok(())
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        self.op()?;
        self.inner.mark_deleted(e, b)
    }
    fn inspect(&self) -> Option<&PersistedState> {
        self.inner.inspect()
    }
}
