//! What the progress query returns (spec/protocol.md section 5, "Client": the progress query) and a
//! read-only snapshot of the full manager state (spec 3.2) for tests and the conformance harness.
//! Plain data: the manager fills these in (`manager/observe.rs`); this module does not know the
//! manager, so the dependency goes one way.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::core::types::{
    Attempt, BucketId, BucketStatus, Epoch, Key, OverallStatus, RebalanceId, ServerId,
};

/// Buckets per status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// NOT_STARTED.
    pub not_started: usize,
    /// REBALANCING (running attempts).
    pub rebalancing: usize,
    /// TIMEOUT (tracked attempts; not final).
    pub timeout: usize,
    /// COMPLETED.
    pub completed: usize,
    /// FAILED.
    pub failed: usize,
    /// CANCELED.
    pub canceled: usize,
}

impl StatusCounts {
    /// The count of one status.
    pub fn get(&self, st: BucketStatus) -> usize {
        match st {
            BucketStatus::NotStarted => self.not_started,
            BucketStatus::Rebalancing => self.rebalancing,
            BucketStatus::Timeout => self.timeout,
            BucketStatus::Completed => self.completed,
            BucketStatus::Failed => self.failed,
            BucketStatus::Canceled => self.canceled,
        }
    }

    fn counter_mut(&mut self, st: BucketStatus) -> &mut usize {
        match st {
            BucketStatus::NotStarted => &mut self.not_started,
            BucketStatus::Rebalancing => &mut self.rebalancing,
            BucketStatus::Timeout => &mut self.timeout,
            BucketStatus::Completed => &mut self.completed,
            BucketStatus::Failed => &mut self.failed,
            BucketStatus::Canceled => &mut self.canceled,
        }
    }

    pub(crate) fn adjust(&mut self, st: BucketStatus, delta: isize) {
        let c = self.counter_mut(st);
        *c = c
            .checked_add_signed(delta)
            .expect("status counter underflow: a bug in set_status");
    }

    pub(crate) fn adjust_by(&mut self, st: BucketStatus, n: usize) {
        *self.counter_mut(st) += n;
    }

    /// Buckets in progress (NOT_STARTED, REBALANCING, TIMEOUT).
    pub fn in_progress(&self) -> usize {
        self.not_started + self.rebalancing + self.timeout
    }

    /// All plan buckets.
    pub fn total(&self) -> usize {
        self.in_progress() + self.completed + self.failed + self.canceled
    }
}

/// What a client's progress query returns. While recovery is pending `rid` is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// The current rebalance.
    pub rid: Option<RebalanceId>,
    /// Its overall status.
    pub overall: Option<OverallStatus>,
    /// Every plan bucket's status (TIMEOUT is shown, and is not final).
    pub buckets: BTreeMap<BucketId, BucketStatus>,
    /// Buckets per status.
    pub counts: StatusCounts,
}

/// An attempt as seen by observers: the record plus whether it is running or tracked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptView {
    /// The attempt.
    pub attempt: Attempt,
    /// True if tracked (TIMEOUT), false if running (REBALANCING).
    pub tracked: bool,
}

/// The manager's flags (spec 3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flags {
    /// R2.
    pub cancel_requested: bool,
    /// R15.
    pub finalize_pending: bool,
    /// R15/R23.
    pub finalize_queued: bool,
    /// R16/R17.
    pub recovery_pending: bool,
    /// R16/R23.
    pub recovery_queued: bool,
}

/// A read-only copy of the full manager state (spec 3.2). O(plan) to build: for tests and the
/// harness, not for a hot path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// `ce`.
    pub coordinator_epoch: Epoch,
    /// The manager's clock.
    pub now_ms: u64,
    /// `rid`.
    pub rid: Option<RebalanceId>,
    /// `overall`.
    pub overall: Option<OverallStatus>,
    /// `status[b]` for every plan bucket.
    pub status: BTreeMap<BucketId, BucketStatus>,
    /// The logical `pending` FIFO (NOT_STARTED buckets in queue order).
    pub pending: Vec<BucketId>,
    /// `attempts[b]` for active buckets.
    pub attempts: BTreeMap<BucketId, AttemptView>,
    /// `queued_timeouts`.
    pub queued_timeouts: BTreeSet<Key>,
    /// `queued_reconciles`.
    pub queued_reconciles: BTreeSet<Key>,
    /// The flags.
    pub flags: Flags,
    /// `live`.
    pub live: BTreeSet<ServerId>,
    /// Attempts restored by the last recovery.
    pub restored: usize,
    /// Buckets whose liveness write (R19/R20) failed and waits for a Tick retry (impl only).
    pub liveness_repairs: BTreeSet<BucketId>,
    /// Buckets whose deleted-marker write failed and waits for a Tick retry (impl only).
    pub deletion_retries: BTreeSet<BucketId>,
}
