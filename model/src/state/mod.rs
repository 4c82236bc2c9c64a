//! The whole system's state (spec section 3), with the time abstraction of spec 9.

pub mod inline;
pub mod message;
pub mod spill;
pub mod types;

use crate::config::Budgets;
use crate::state::inline::InlineVec;
use crate::state::message::Message;
use crate::state::spill::SpillVec;
use crate::state::types::{
    BucketId, BucketSet, BucketStatus, Entries, Epoch, Key, LeaderAndIsr, OverallStatus, Plan,
    PlanEntry, RebalanceId, Replicas, ServerId, ServerSet, TaskStatus, INLINE_ENTRIES,
};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};

/// One value per bucket, indexed by bucket id.
pub type PerBucket<T> = Entries<T>;
/// The in-flight messages. Rarely more than a handful; a longer network spills to the heap
/// rather than failing.
pub type Network = SmallVec<[Message; 8]>;
/// The coordinator's event queue; like [`Network`], inline up to a small length.
pub type EventQueue = SmallVec<[Event; 8]>;

/// The persisted rebalance task (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskNode {
    pub id: RebalanceId,
    pub status: TaskStatus,
    pub cancel_requested: bool,
    pub plan: Plan,
}

/// Per-bucket metadata, both in the store and in the coordinator's write-through cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BucketMeta {
    pub assignment: PerBucket<Replicas>,
    pub lai: PerBucket<LeaderAndIsr>,
    pub deleted: PerBucket<bool>,
}

/// The store (ZooKeeper), spec 3.1. Survives coordinator crashes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Store {
    pub task: Option<TaskNode>,
    pub buckets: BucketMeta,
    pub coordinator_epoch: Epoch,
    /// The plan objects of the remote plan storage (the `remote_plan` design,
    /// apache/fluss#3868; spec/fluss-designs.md). Empty unless the design is on.
    #[serde(default, skip_serializing_if = "no_plans")]
    pub plans: PlanObjects,
}

fn no_plans(plans: &PlanObjects) -> bool {
    plans.is_empty()
}

/// The remote plan storage holds at most one object per rebalance id, and a check's register
/// budget keeps the ids few.
pub type PlanObjects = InlineVec<PlanObject, 4>;

/// One object of the remote plan storage (spec/fluss-designs.md, "Large plans outside
/// ZooKeeper"). The plan it holds is the one registered under `content`, which the task node of
/// that id also records, so the object keeps only the id and not a copy of the plan.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct PlanObject {
    /// Where it is stored: the rebalance id it was written for, or 0 for the one fixed path of
    /// `one-plan-path`.
    pub key: RebalanceId,
    /// The rebalance id of the plan it holds.
    pub content: RebalanceId,
    /// Written whole. A failed write of the remote storage may leave a partial object.
    pub whole: bool,
}

/// `observed = (assignment, leader, set(isr))`; epochs deliberately excluded (spec 3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Observed {
    pub assignment: Replicas,
    pub leader: Option<ServerId>,
    pub isr: ServerSet,
}

/// An active attempt (spec 3.2) with timestamps replaced by ages in ticks (spec 9).
///
/// `age` replaces `started_ms` and only advances while the attempt is running (it is compared
/// only by R23.1). `since_progress`, `blocked_for` and `reconcile_in` replace
/// `last_progress_ms`, `blocked_since_ms` and `next_reconcile_ms` and only advance while the
/// attempt is tracked (R14 is their only reader). Ages saturate one above the threshold they
/// are compared with, which keeps every comparison of section 5.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Attempt {
    pub key: Key,
    pub age: u16,
    pub since_progress: u16,
    pub observed: Observed,
    pub blocked_for: Option<u16>,
    pub reconciles: u8,
    pub reconcile_in: u16,
}

/// Coordinator-internal events (spec 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Timeout { key: Key },
    Reconcile { key: Key },
    Finalize { rid: RebalanceId },
    Recover,
}

/// The coordinator's volatile state (spec 3.2), lost by R17.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Coordinator {
    pub ce: Epoch,
    pub live: ServerSet,
    /// Write-through cache of the store's bucket metadata (`INV-CONTEXT-COHERENT`).
    pub cache: BucketMeta,
    pub rid: Option<RebalanceId>,
    pub overall: Option<OverallStatus>,
    pub plan: Plan,
    /// `status[b]` for every plan bucket.
    pub status: Entries<(BucketId, BucketStatus)>,
    pub pending: Entries<BucketId>,
    /// Active attempts by bucket; running iff the status is REBALANCING, tracked iff TIMEOUT.
    pub attempts: Entries<(BucketId, Attempt)>,
    /// Keys of the current rebalance only (R1 clears them), so at most one per bucket.
    pub queued_timeouts: Entries<Key>,
    pub queued_reconciles: Entries<Key>,
    pub cancel_requested: bool,
    pub finalize_pending: bool,
    pub finalize_queued: bool,
    pub recovery_pending: bool,
    pub recovery_queued: bool,
    /// Buckets whose write of R19 or R20 failed, for R23.5 to repair.
    pub liveness_repairs: BucketSet,
    /// Buckets whose deletion marker write failed, for R23.5 to write again.
    pub deletion_retries: BucketSet,
    /// The event queue, FIFO; the front is the only event that can be processed next.
    pub events: EventQueue,
}

/// A replica's adopted view of its bucket (spec 3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReplicaView {
    pub leader_epoch: Epoch,
    pub bucket_epoch: Epoch,
    pub leader: Option<ServerId>,
    pub replicas: Replicas,
    pub isr: ServerSet,
    pub isr_rejected: bool,
}

/// A tablet server (spec 3.3). Its views of the buckets are [`SystemState::views`]; they
/// survive a restart (they are on disk).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServerState {
    pub up: bool,
    pub last_ce: Epoch,
}

/// Every server's view of every bucket, server-major: the view of server `s` of bucket `b` is
/// entry `s * buckets + b`, `None` if it never adopted one. One flat list rather than a list
/// per server, so that a state holds only lists of plain values and a clone stays a copy of
/// each (a list of lists would clone entry by entry).
pub type Views = SpillVec<Option<ReplicaView>, { INLINE_ENTRIES * INLINE_ENTRIES }>;

/// History the protocol does not keep, for properties (spec 7). Set only by generic code paths
/// of the model, never by a bug switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ghost {
    /// Buckets restored as tracked attempts by the last recovery of the current rebalance.
    pub restored: ServerSet,
    /// Statuses came from a recovered final task (R16), which does not keep per-bucket FAILED.
    pub final_recovered: bool,
    /// A bucket completed while the rebalance's cancel was requested (drained).
    pub drained_after_cancel: bool,
    /// Sticky violation flags, one per history-based invariant.
    pub violations: Violations,
    /// What the last step did, for the `SOME-*` companions; cleared at every step.
    pub last: LastStep,
}

/// Sticky flags: once a step broke a history invariant, every later state shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Violations {
    pub admitted_while_capped: bool,
    pub stale_timeout_acted: bool,
    pub stale_reconcile_acted: bool,
    pub unfenced_completion: bool,
    pub completed_unacked: bool,
    pub canceled_before_persist: bool,
    pub admitted_after_final: bool,
    pub new_work_after_cancel: bool,
    pub canceled_off_origin: bool,
    pub epoch_without_change: bool,
    pub change_without_epoch: bool,
    pub unfenced_adjust_isr: bool,
    pub cancel_effects_incomplete: bool,
}

/// Non-sticky facts about the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LastStep {
    pub timed_out_bucket_completed: bool,
    pub recovered_bucket_completed: bool,
    pub deleted_bucket_completed: bool,
    pub stale_response_ignored: bool,
    pub stale_timeout_ignored: bool,
    pub stale_reconcile_ignored: bool,
    pub finalize_retried: bool,
    pub adjust_isr_rejected: bool,
    pub cancel_store_failure: bool,
}

/// The whole system (spec 3): store, coordinator with its event queue, servers, network,
/// budgets left and ghosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemState {
    pub store: Store,
    pub coordinator: Coordinator,
    pub servers: Entries<ServerState>,
    pub views: Views,
    /// A multiset kept sorted, so equal multisets are equal states.
    pub network: Network,
    pub budgets: Budgets,
    pub ghost: Ghost,
    /// The deposed incarnation, kept by R17 only while the `zombie_steps` budget lasts (spec 9,
    /// zombie coordinator). Boxed, so the field costs one word in every other state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zombie: Option<Box<Coordinator>>,
}

/// Hashes the derived field encodings through one buffer: the checker fingerprints every
/// successor, and one bulk write to its hasher is several times cheaper than the few hundred
/// one-byte writes the derived impl would make. Equal states still hash equally: the byte
/// stream is exactly the derived one.
impl Hash for SystemState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut sink = ByteSink {
            inner: state,
            buf: [0; 1024],
            len: 0,
        };
        self.store.hash(&mut sink);
        self.coordinator.hash(&mut sink);
        self.servers.hash(&mut sink);
        self.views.hash(&mut sink);
        self.network.hash(&mut sink);
        self.budgets.hash(&mut sink);
        self.ghost.hash(&mut sink);
        if let Some(z) = &self.zombie {
            z.hash(&mut sink);
        }
        sink.flush();
    }
}

/// A `Hasher` that buffers the bytes written to it and passes them on in large writes.
struct ByteSink<'a, H: Hasher> {
    inner: &'a mut H,
    buf: [u8; 1024],
    len: usize,
}

impl<H: Hasher> ByteSink<'_, H> {
    fn flush(&mut self) {
        self.inner.write(&self.buf[..self.len]);
        self.len = 0;
    }
}

impl<H: Hasher> Hasher for ByteSink<'_, H> {
    fn write(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > self.buf.len() {
            self.flush();
            if bytes.len() > self.buf.len() {
                self.inner.write(bytes);
                return;
            }
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
    fn write_u8(&mut self, i: u8) {
        if self.len == self.buf.len() {
            self.flush();
        }
        self.buf[self.len] = i;
        self.len += 1;
    }
    fn finish(&self) -> u64 {
        unreachable!("a ByteSink only forwards bytes; the caller's hasher finishes")
    }
}

impl Coordinator {
    pub fn status_of(&self, b: BucketId) -> Option<BucketStatus> {
        self.status.iter().find(|(x, _)| *x == b).map(|(_, s)| *s)
    }
    pub fn set_status(&mut self, b: BucketId, st: BucketStatus) {
        match self.status.iter_mut().find(|(x, _)| *x == b) {
            Some(e) => e.1 = st,
            None => self.status.push((b, st)),
        }
    }
    pub fn attempt(&self, b: BucketId) -> Option<&Attempt> {
        self.attempts.iter().find(|(x, _)| *x == b).map(|(_, a)| a)
    }
    pub fn attempt_mut(&mut self, b: BucketId) -> Option<&mut Attempt> {
        self.attempts
            .iter_mut()
            .find(|(x, _)| *x == b)
            .map(|(_, a)| a)
    }
    /// Inserts keeping ascending bucket order (R23 walks attempts in that order).
    pub fn insert_attempt(&mut self, b: BucketId, attempt: Attempt) {
        let pos = self.attempts.partition_point(|(x, _)| *x < b);
        self.attempts.insert(pos, (b, attempt));
    }
    pub fn remove_attempt(&mut self, b: BucketId) {
        self.attempts.retain(|(x, _)| *x != b);
    }
    pub fn plan_entry(&self, b: BucketId) -> Option<&PlanEntry> {
        self.plan.iter().find(|e| e.bucket == b)
    }
    pub fn is_running(&self, b: BucketId) -> bool {
        self.attempt(b).is_some() && self.status_of(b) == Some(BucketStatus::Rebalancing)
    }
    pub fn is_tracked(&self, b: BucketId) -> bool {
        self.attempt(b).is_some() && self.status_of(b) == Some(BucketStatus::Timeout)
    }
    pub fn running_count(&self) -> usize {
        self.attempts
            .iter()
            .filter(|(b, _)| self.is_running(*b))
            .count()
    }
    pub fn tracked_count(&self) -> usize {
        self.attempts
            .iter()
            .filter(|(b, _)| self.is_tracked(*b))
            .count()
    }
    pub fn any_in_progress(&self) -> bool {
        self.status.iter().any(|(_, s)| s.in_progress())
    }
    /// `has_in_progress` of spec 3.2.
    pub fn has_in_progress(&self) -> bool {
        self.recovery_pending || self.finalize_pending || self.any_in_progress()
    }
    pub fn overall_is_final(&self) -> bool {
        self.overall.is_some_and(|o| o.is_final())
    }
    /// Whether a tick can matter (spec 9, "Time"): an attempt is active, finalize or recovery
    /// is pending, or a failed liveness or deletion write waits for R23.5.
    pub fn timed(&self) -> bool {
        !self.attempts.is_empty()
            || self.finalize_pending
            || self.recovery_pending
            || !self.liveness_repairs.is_empty()
            || !self.deletion_retries.is_empty()
    }
    /// A fresh incarnation's state (R17) before recovery runs.
    pub fn fresh(ce: Epoch, live: ServerSet, cache: BucketMeta) -> Coordinator {
        Coordinator {
            ce,
            live,
            cache,
            rid: None,
            overall: None,
            plan: Plan::new(),
            status: Entries::new(),
            pending: Entries::new(),
            attempts: Entries::new(),
            queued_timeouts: Entries::new(),
            queued_reconciles: Entries::new(),
            cancel_requested: false,
            finalize_pending: false,
            finalize_queued: false,
            recovery_pending: false,
            recovery_queued: false,
            liveness_repairs: BucketSet::EMPTY,
            deletion_retries: BucketSet::EMPTY,
            events: EventQueue::new(),
        }
    }
}

impl SystemState {
    /// Sends a message. A message identical to one already in flight is absorbed (see
    /// `spec/findings.md`, "network abstraction"): it carries nothing new, and the extra
    /// deliveries it could cause are exactly what F-DUP ([`SystemState::duplicate`]) models.
    pub fn send(&mut self, m: Message) {
        if let Err(pos) = self.network.binary_search(&m) {
            self.network.insert(pos, m);
        }
    }
    /// F-DUP: one more copy of an in-flight message (the multiset may then hold two).
    pub fn duplicate(&mut self, m: Message) {
        let pos = self.network.partition_point(|x| *x < m);
        self.network.insert(pos, m);
    }
    /// Removes one copy of `m`; false if it is not in flight.
    pub fn take(&mut self, m: &Message) -> bool {
        match self.network.iter().position(|x| x == m) {
            Some(i) => {
                self.network.remove(i);
                true
            }
            None => false,
        }
    }
    /// Server `s`'s view of bucket `b`.
    pub fn view(&self, s: ServerId, b: BucketId) -> &Option<ReplicaView> {
        &self.views[self.view_index(s, b)]
    }
    pub fn view_mut(&mut self, s: ServerId, b: BucketId) -> &mut Option<ReplicaView> {
        let i = self.view_index(s, b);
        &mut self.views[i]
    }
    fn view_index(&self, s: ServerId, b: BucketId) -> usize {
        usize::from(s) * self.store.buckets.assignment.len() + usize::from(b)
    }
    pub fn live(&self) -> ServerSet {
        let mut live = ServerSet::EMPTY;
        for (s, st) in self.servers.iter().enumerate() {
            if st.up {
                live.insert(s as ServerId);
            }
        }
        live
    }
}
