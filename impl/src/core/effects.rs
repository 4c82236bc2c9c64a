//! Inputs the host feeds to the manager and effects it drains, as data (spec 3.4, 3.2).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::core::types::{BucketId, Epoch, Key, LeaderAndIsr, Plan, RebalanceId, ServerId};

/// An internal coordinator event (spec 3.2 event queue). The manager emits them as
/// [`Effect::Enqueue`]; the host feeds them back, FIFO, as [`Input::Event`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// R13.
    Timeout(Key),
    /// R14.
    Reconcile(Key),
    /// R15's retry.
    Finalize(RebalanceId),
    /// R16.
    Recover,
}

/// A request context (spec 3.4): what a NotifyLeaderAndIsr carried; its response echoes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestContext {
    /// The sender's coordinator epoch.
    pub coordinator_epoch: Epoch,
    /// The leader in the request.
    pub leader: Option<ServerId>,
    /// The leader epoch in the request.
    pub leader_epoch: Epoch,
    /// The bucket epoch in the request.
    pub bucket_epoch: Epoch,
    /// The bucket's active attempt key at send time, if any.
    pub exec_key: Option<Key>,
}

/// NotifyLeaderAndIsr, coordinator -> server (spec 3.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nli {
    /// Destination server.
    pub to: ServerId,
    /// The bucket.
    pub bucket: BucketId,
    /// The assignment.
    pub replicas: Vec<ServerId>,
    /// The leader.
    pub leader: Option<ServerId>,
    /// The leader epoch.
    pub leader_epoch: Epoch,
    /// The ISR.
    pub isr: BTreeSet<ServerId>,
    /// The bucket epoch.
    pub bucket_epoch: Epoch,
    /// The sending incarnation's epoch `ce` (not the bucket's last writer's).
    pub coordinator_epoch: Epoch,
    /// The bucket's active attempt key, if any.
    pub exec_key: Option<Key>,
}

impl Nli {
    /// The request context a response to this request carries (D11).
    pub fn context(&self) -> RequestContext {
        RequestContext {
            coordinator_epoch: self.coordinator_epoch,
            leader: self.leader,
            leader_epoch: self.leader_epoch,
            bucket_epoch: self.bucket_epoch,
            exec_key: self.exec_key,
        }
    }
}

/// Why an AdjustIsr was rejected (R18). The spec's model has a single `Err`; the variants say
/// which check failed, in the order R18 lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AdjustIsrError {
    /// The bucket is deleted or unknown to the coordinator.
    UnknownBucket,
    /// The sender is not the current leader.
    NotLeader,
    /// The leader epoch is not the current one.
    FencedLeaderEpoch,
    /// The bucket epoch is not the current one.
    InvalidBucketEpoch,
    /// A proposed ISR member is not live or not assigned (or the ISR is empty).
    IneligibleReplica,
    /// The proposed ISR equals the current one.
    NoChange,
    /// The store write failed (R8).
    StoreError,
}

/// Why a register was rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectReason {
    /// A rebalance, finalize or recovery is in progress (R1).
    InProgress,
    /// The plan is malformed (not in the spec: the spec's planner never produces one).
    InvalidPlan(PlanError),
}

/// A malformed plan. Not a protocol rule: a production guard, checked after R1's in-progress test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum PlanError {
    /// The bucket appears twice.
    #[error("bucket {0} appears twice in the plan")]
    DuplicateBucket(BucketId),
    /// `trs` is empty.
    #[error("bucket {0} has an empty target replica list")]
    EmptyTarget(BucketId),
    /// `new_leader != trs[0]`.
    #[error("bucket {0}: new_leader is not trs[0]")]
    NewLeaderNotFirstTarget(BucketId),
    /// A replica list names a server twice.
    #[error("bucket {0}: a replica list names a server twice")]
    DuplicateReplica(BucketId),
    /// The coordinator has no record of the bucket.
    #[error("bucket {0} is unknown to the coordinator")]
    UnknownBucket(BucketId),
    /// The bucket is deleted (the spec's planner skips deleted buckets).
    #[error("bucket {0} is deleted")]
    DeletedBucket(BucketId),
    /// `ors` is not the bucket's current assignment (plans are made from the live assignment, D5;
    /// a pending bucket must be at origin, INV-PENDING-AT-ORIGIN).
    #[error("bucket {0}: the origin replica list is not the current assignment")]
    NotAtOrigin(BucketId),
}

/// The client reply to a register or cancel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// Register: the new rebalance id. Cancel: the id of the rebalance being canceled.
    Accepted(RebalanceId),
    /// Register refused.
    Rejected(RejectReason),
    /// Cancel with no current, non-final rebalance (R2, D12).
    NothingToCancel,
    /// The store write failed; nothing changed (R1, R2, R8).
    StoreError,
}

/// An input to [`crate::Manager::handle`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// R1.
    Register {
        /// The plan, in admission order.
        plan: Plan,
    },
    /// R2.
    Cancel,
    /// R23: the checker runs at the `now_ms` given with this input.
    Tick,
    /// An internal event the manager enqueued earlier (FIFO).
    Event(Event),
    /// R12.
    NliResponse {
        /// The responding server.
        from: ServerId,
        /// The bucket.
        bucket: BucketId,
        /// Whether the server adopted the request.
        ok: bool,
        /// The request's context, echoed.
        context: RequestContext,
    },
    /// R18.
    AdjustIsr {
        /// The proposing leader.
        from: ServerId,
        /// The bucket.
        bucket: BucketId,
        /// The leader's leader epoch.
        leader_epoch: Epoch,
        /// The leader's bucket epoch.
        bucket_epoch: Epoch,
        /// The proposed ISR.
        isr: BTreeSet<ServerId>,
    },
    /// R19: a server's registration disappeared.
    ServerCrashed(ServerId),
    /// R20: a server registered again.
    ServerRestarted(ServerId),
    /// The table-deletion path deleted the bucket (spec 5, "Bucket deletion").
    BucketDeleted(BucketId),
}

/// An effect the host must carry out, in emission order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Effect {
    /// Send a NotifyLeaderAndIsr.
    SendNli(Nli),
    /// Answer an AdjustIsr (R18).
    SendAdjustIsrResponse {
        /// The proposing leader.
        to: ServerId,
        /// The bucket.
        bucket: BucketId,
        /// The new LeaderAndIsr, or why not.
        result: Result<LeaderAndIsr, AdjustIsrError>,
    },
    /// Append an event to the coordinator's event queue.
    Enqueue(Event),
    /// Answer the client.
    Reply(Reply),
}
