//! Identifiers, statuses and the plan (spec sections 2 and 3).

use crate::state::inline::InlineVec;
use crate::state::spill::SpillVec;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Servers are `0..MAX_SERVERS` ([`ServerSet`] is a 16-bit mask).
pub const MAX_SERVERS: usize = 16;
/// Buckets are `0..MAX_BUCKETS` (a bucket set is a [`ServerSet`]-sized mask too).
pub const MAX_BUCKETS: usize = 16;
/// Per-bucket and per-server lists are inline up to this many entries and on the heap beyond
/// (see [`SpillVec`]): every exhaustive preset fits inline, so its states copy as before.
pub const INLINE_ENTRIES: usize = 8;
/// The longest replica list: a union of an origin and a target (spec 2). With more than this
/// many servers the replication factor is at most half of it.
pub const MAX_REPLICAS: usize = 8;

/// An ordered replica list (an assignment, `ors`, `trs`, `rs`), stored inline.
pub type Replicas = InlineVec<ServerId, MAX_REPLICAS>;
/// One entry per bucket or per server: inline up to [`INLINE_ENTRIES`].
pub type Entries<T> = SpillVec<T, INLINE_ENTRIES>;
/// A plan: one entry per plan bucket, in admission order.
pub type Plan = Entries<PlanEntry>;

/// A tablet server id, `0..servers` (spec 2).
pub type ServerId = u8;
/// A bucket id, `0..buckets` (spec 2).
pub type BucketId = u8;
/// A rebalance id; the first registered rebalance is 1 (R1).
pub type RebalanceId = u8;
/// Leader, bucket and coordinator epochs. Every fault is budgeted, so they stay small.
pub type Epoch = u8;

/// A set of servers as a bitmask (servers are `0..16`). Serialized as an ascending list so that
/// traces stay hand-writable: `[0, 2]`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerSet(pub u16);

/// A set of buckets (`0..16`): the same bitmask as [`ServerSet`], named for what it holds.
pub type BucketSet = ServerSet;

impl ServerSet {
    pub const EMPTY: ServerSet = ServerSet(0);
    pub fn from_servers<'a>(servers: impl IntoIterator<Item = &'a ServerId>) -> ServerSet {
        ServerSet(servers.into_iter().fold(0, |m, s| m | (1 << s)))
    }
    pub fn contains(self, s: ServerId) -> bool {
        self.0 & (1 << s) != 0
    }
    pub fn insert(&mut self, s: ServerId) {
        self.0 |= 1 << s;
    }
    pub fn remove(&mut self, s: ServerId) {
        self.0 &= !(1 << s);
    }
    pub fn is_subset(self, other: ServerSet) -> bool {
        self.0 & !other.0 == 0
    }
    pub fn intersect(self, other: ServerSet) -> ServerSet {
        ServerSet(self.0 & other.0)
    }
    pub fn union(self, other: ServerSet) -> ServerSet {
        ServerSet(self.0 | other.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    pub fn iter(self) -> impl Iterator<Item = ServerId> {
        (0..MAX_SERVERS as u8).filter(move |s| self.contains(*s))
    }
}

impl fmt::Debug for ServerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Serialize for ServerSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for ServerSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let servers = Vec::<ServerId>::deserialize(deserializer)?;
        if let Some(bad) = servers.iter().find(|s| usize::from(**s) >= MAX_SERVERS) {
            return Err(serde::de::Error::custom(format!(
                "server {bad} out of range (at most {MAX_SERVERS} servers)"
            )));
        }
        Ok(ServerSet::from_servers(&servers))
    }
}

/// The execution key of a bucket's attempt in a rebalance (spec 2, D2).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Key {
    pub rid: RebalanceId,
    pub bucket: BucketId,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{},b{}", self.rid, self.bucket)
    }
}

/// The stored task's status (spec 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    NotStarted,
    Rebalancing,
    Completed,
    Failed,
    Canceled,
}

impl TaskStatus {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Canceled
        )
    }
}

/// A plan bucket's status in the manager (spec 3.2). `TIMEOUT` is not final.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BucketStatus {
    #[default]
    NotStarted,
    Rebalancing,
    Timeout,
    Completed,
    Failed,
    Canceled,
    /// Only reachable with the bug switch `timeout-completes` (H1): the `[pre]` final TIMEOUT.
    TimeoutFinal,
}

impl BucketStatus {
    pub fn is_final(self) -> bool {
        !self.in_progress()
    }
    pub fn in_progress(self) -> bool {
        matches!(
            self,
            BucketStatus::NotStarted | BucketStatus::Rebalancing | BucketStatus::Timeout
        )
    }
    /// The stored status a recovered final task gives every plan bucket (R16).
    pub fn from_final_task(status: TaskStatus) -> BucketStatus {
        match status {
            TaskStatus::Completed => BucketStatus::Completed,
            TaskStatus::Failed => BucketStatus::Failed,
            _ => BucketStatus::Canceled,
        }
    }
}

/// The coordinator's overall status of the current rebalance (spec 3.2): `REBALANCING` or a
/// final status. Unlike the stored task status it is never `NOT_STARTED`: the coordinator has an
/// overall status only once it has registered or recovered a rebalance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OverallStatus {
    Rebalancing,
    Completed,
    Failed,
    Canceled,
}

impl OverallStatus {
    pub fn is_final(self) -> bool {
        self != OverallStatus::Rebalancing
    }

    /// The overall status a stored task status stands for; `NOT_STARTED` reads as `REBALANCING`
    /// (the task exists, no bucket has finished it).
    pub fn of_task(status: TaskStatus) -> OverallStatus {
        match status {
            TaskStatus::NotStarted | TaskStatus::Rebalancing => OverallStatus::Rebalancing,
            TaskStatus::Completed => OverallStatus::Completed,
            TaskStatus::Failed => OverallStatus::Failed,
            TaskStatus::Canceled => OverallStatus::Canceled,
        }
    }

    /// The task status that records this overall status in the store.
    pub fn task_status(self) -> TaskStatus {
        match self {
            OverallStatus::Rebalancing => TaskStatus::Rebalancing,
            OverallStatus::Completed => TaskStatus::Completed,
            OverallStatus::Failed => TaskStatus::Failed,
            OverallStatus::Canceled => TaskStatus::Canceled,
        }
    }
}

/// One bucket's entry of a plan (spec 2).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct PlanEntry {
    pub bucket: BucketId,
    pub ors: Replicas,
    pub trs: Replicas,
    pub old_leader: ServerId,
    pub new_leader: ServerId,
}

/// What a plan entry asks for (spec 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanKind {
    Move,
    LeaderOnly,
    NoOp,
}

impl PlanEntry {
    /// `rs`: `trs` followed by the members of `ors` not in `trs`, in `ors` order (spec 2).
    pub fn rs(&self) -> Replicas {
        let mut rs = self.trs;
        for s in self.ors.iter() {
            if !self.trs.contains(s) {
                rs.push(*s);
            }
        }
        rs
    }
    pub fn moving(&self) -> bool {
        ServerSet::from_servers(&self.ors) != ServerSet::from_servers(&self.trs)
    }
    pub fn kind(&self) -> PlanKind {
        if self.moving() {
            PlanKind::Move
        } else if self.old_leader != self.new_leader {
            PlanKind::LeaderOnly
        } else {
            PlanKind::NoOp
        }
    }
    pub fn trs_set(&self) -> ServerSet {
        ServerSet::from_servers(&self.trs)
    }
    /// `at_origin` (spec 4, D4) of this entry's bucket, given its assignment and leader.
    pub fn at_origin(&self, assignment: &Replicas, leader: Option<ServerId>) -> bool {
        *assignment == self.ors
            && !(self.kind() == PlanKind::LeaderOnly && leader == Some(self.new_leader))
    }
    /// `final_state` (spec 4) of this entry's bucket, given its metadata and the live servers.
    pub fn final_state(
        &self,
        assignment: &Replicas,
        lai: &LeaderAndIsr,
        live: ServerSet,
        deleted: bool,
    ) -> bool {
        !deleted
            && *assignment == self.trs
            && self.trs_set().is_subset(live)
            && lai.leader.is_some_and(|l| self.trs.contains(&l))
            && lai.isr == self.trs_set()
    }
}

/// The stored LeaderAndIsr of a bucket (spec 3.1).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct LeaderAndIsr {
    pub leader: Option<ServerId>,
    pub leader_epoch: Epoch,
    pub isr: ServerSet,
    pub bucket_epoch: Epoch,
    pub coordinator_epoch: Epoch,
}
