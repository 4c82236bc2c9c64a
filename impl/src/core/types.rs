//! Identifiers, plans, statuses and the persisted records of spec sections 2 and 3.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A tablet server id.
pub type ServerId = u32;
/// A bucket id (the spec's small integer; Fluss's `TableBucket`).
pub type BucketId = u32;
/// A rebalance id (`task.id`).
pub type RebalanceId = u64;
/// Coordinator, leader and bucket epochs.
pub type Epoch = u64;

/// `Key = (rid, bucket)` (spec 2, D2): the execution key of a bucket's attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key {
    /// The rebalance the attempt belongs to.
    pub rid: RebalanceId,
    /// The bucket the attempt moves.
    pub bucket: BucketId,
}

/// One bucket's entry of a plan (spec 2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// Origin replica list `ors`.
    pub ors: Vec<ServerId>,
    /// Target replica list `trs`.
    pub trs: Vec<ServerId>,
    /// The leader when the plan was made (none if the bucket was leaderless).
    pub old_leader: Option<ServerId>,
    /// The planned leader, always `trs[0]`.
    pub new_leader: ServerId,
}

/// The kind of a plan entry, derived from the plan only (spec 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlanKind {
    /// `set(ors) != set(trs)`.
    Move,
    /// Same replica set, different leader.
    LeaderOnly,
    /// Nothing to do.
    NoOp,
}

impl PlanEntry {
    /// A plan entry whose `new_leader` is `trs[0]` as the spec requires. `None` if `trs` is empty.
    pub fn new(
        ors: Vec<ServerId>,
        trs: Vec<ServerId>,
        old_leader: Option<ServerId>,
    ) -> Option<Self> {
        let new_leader = *trs.first()?;
        Some(PlanEntry {
            ors,
            trs,
            old_leader,
            new_leader,
        })
    }

    /// `moving = set(ors) != set(trs)`.
    pub fn moving(&self) -> bool {
        let o: BTreeSet<_> = self.ors.iter().collect();
        let t: BTreeSet<_> = self.trs.iter().collect();
        o != t
    }

    /// The entry's kind (spec 2).
    pub fn kind(&self) -> PlanKind {
        if self.moving() {
            PlanKind::Move
        } else if self.old_leader != Some(self.new_leader) {
            PlanKind::LeaderOnly
        } else {
            PlanKind::NoOp
        }
    }

    /// `rs` (union) = `trs` followed by the members of `ors` not in `trs`, in `ors` order.
    pub fn rs(&self) -> Vec<ServerId> {
        let mut rs = self.trs.clone();
        rs.extend(self.ors.iter().copied().filter(|s| !self.trs.contains(s)));
        rs
    }

    /// `assignment == rs`, without building `rs` (R7.4 asks it of every reconcile and ack).
    pub fn is_rs(&self, assignment: &[ServerId]) -> bool {
        let mut rest = assignment.iter();
        self.trs.iter().all(|s| rest.next() == Some(s))
            && self
                .ors
                .iter()
                .filter(|s| !self.trs.contains(s))
                .all(|s| rest.next() == Some(s))
            && rest.next().is_none()
    }

    /// `set(trs)`.
    pub fn trs_set(&self) -> BTreeSet<ServerId> {
        self.trs.iter().copied().collect()
    }
}

/// A plan: the ordered list of `(bucket, PlanEntry)`; the order is the admission order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The entries, in admission order.
    pub buckets: Vec<(BucketId, PlanEntry)>,
}

impl Plan {
    /// A plan from its entries in admission order.
    pub fn new(buckets: Vec<(BucketId, PlanEntry)>) -> Self {
        Plan { buckets }
    }

    /// Number of buckets in the plan.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// True if the plan names no bucket.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

/// The persisted task status (spec 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    /// Registered (R1); never advanced to REBALANCING by normal progress.
    NotStarted,
    /// Written by a cancel (R2).
    Rebalancing,
    /// Final: every bucket completed.
    Completed,
    /// Final: some bucket failed or was canceled without a cancel request.
    Failed,
    /// Final: the rebalance was canceled.
    Canceled,
}

impl TaskStatus {
    /// COMPLETED, FAILED and CANCELED are final.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Canceled
        )
    }

    /// The overall status a final task node stands for; `None` for a non-final one.
    pub fn final_overall(self) -> Option<OverallStatus> {
        match self {
            TaskStatus::Completed => Some(OverallStatus::Completed),
            TaskStatus::Failed => Some(OverallStatus::Failed),
            TaskStatus::Canceled => Some(OverallStatus::Canceled),
            TaskStatus::NotStarted | TaskStatus::Rebalancing => None,
        }
    }
}

/// The manager's overall status (spec 3.2): REBALANCING or a final status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OverallStatus {
    /// Some bucket is in progress, or finalize is pending.
    Rebalancing,
    /// Final, persisted (INV-FINAL-PERSISTED).
    Completed,
    /// Final, persisted.
    Failed,
    /// Final, persisted.
    Canceled,
}

impl OverallStatus {
    /// Every status but REBALANCING is final.
    pub fn is_final(self) -> bool {
        self != OverallStatus::Rebalancing
    }

    /// The task status that persists this overall status.
    pub fn task_status(self) -> TaskStatus {
        match self {
            OverallStatus::Rebalancing => TaskStatus::Rebalancing,
            OverallStatus::Completed => TaskStatus::Completed,
            OverallStatus::Failed => TaskStatus::Failed,
            OverallStatus::Canceled => TaskStatus::Canceled,
        }
    }
}

/// A plan bucket's status (spec 3.2). TIMEOUT is in progress, not final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BucketStatus {
    /// In `pending`, not admitted.
    NotStarted,
    /// Has a running attempt (holds a normal slot).
    Rebalancing,
    /// Has a tracked attempt (timed out or restored by recovery); still reconciled.
    Timeout,
    /// Final.
    Completed,
    /// Final (gave up, R14.3).
    Failed,
    /// Final (canceled at origin, R2/R16).
    Canceled,
}

impl BucketStatus {
    /// All statuses, in declaration order.
    pub const ALL: [BucketStatus; 6] = [
        BucketStatus::NotStarted,
        BucketStatus::Rebalancing,
        BucketStatus::Timeout,
        BucketStatus::Completed,
        BucketStatus::Failed,
        BucketStatus::Canceled,
    ];

    /// NOT_STARTED, REBALANCING and TIMEOUT are in progress.
    pub fn in_progress(self) -> bool {
        matches!(
            self,
            BucketStatus::NotStarted | BucketStatus::Rebalancing | BucketStatus::Timeout
        )
    }

    /// COMPLETED, FAILED and CANCELED are final.
    pub fn is_final(self) -> bool {
        !self.in_progress()
    }
}

impl From<OverallStatus> for BucketStatus {
    fn from(s: OverallStatus) -> Self {
        match s {
            OverallStatus::Rebalancing => BucketStatus::Rebalancing,
            OverallStatus::Completed => BucketStatus::Completed,
            OverallStatus::Failed => BucketStatus::Failed,
            OverallStatus::Canceled => BucketStatus::Canceled,
        }
    }
}

/// `lai[b]` (spec 3.1): a bucket's LeaderAndIsr.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderAndIsr {
    /// The leader, none if no live ISR member could be elected.
    pub leader: Option<ServerId>,
    /// Raised by one on every leader change.
    pub leader_epoch: Epoch,
    /// The in-sync replicas.
    pub isr: BTreeSet<ServerId>,
    /// Raised by one on every write of the bucket.
    pub bucket_epoch: Epoch,
    /// The coordinator epoch of the last writer.
    pub coordinator_epoch: Epoch,
}

/// What the store keeps per bucket, written atomically (spec 3.1, D15).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketRecord {
    /// `assignment[b]`: the replica list.
    pub assignment: Vec<ServerId>,
    /// `lai[b]`.
    pub lai: LeaderAndIsr,
}

/// The persisted rebalance task node (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNode {
    /// The rebalance id.
    pub id: RebalanceId,
    /// NOT_STARTED, REBALANCING (cancel) or final.
    pub status: TaskStatus,
    /// The persisted cancel intent (R2).
    pub cancel_requested: bool,
    /// The plan; shared with the manager, never copied by status-only writes.
    pub plan: Arc<Plan>,
}

/// `observed = (assignment, leader, set(isr))`, epochs deliberately excluded (spec 3.2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// The assignment.
    pub assignment: Vec<ServerId>,
    /// The leader.
    pub leader: Option<ServerId>,
    /// The ISR as a set.
    pub isr: BTreeSet<ServerId>,
}

/// An active bucket's attempt (spec 3.2). For a running attempt only `key` and `started_ms` are
/// meaningful; the progress fields are set at admission and reset when it becomes tracked (R13).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// `(rid, bucket)`.
    pub key: Key,
    /// Admission (or restoration) time.
    pub started_ms: u64,
    /// Last time `observed` changed.
    pub last_progress_ms: u64,
    /// The observed state at the last progress.
    pub observed: Observed,
    /// First reconcile that saw a target server not live, since the last progress.
    pub blocked_since_ms: Option<u64>,
    /// Reconciles dispatched since the last progress (backoff exponent).
    pub reconciles: u32,
    /// Next due reconcile (R23.2, `>=`).
    pub next_reconcile_ms: u64,
}
