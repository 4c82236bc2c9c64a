//! The progress query (spec/protocol.md section 5, "Client") and the read-only [`Snapshot`] of
//! the full manager state for tests and the conformance harness. The data types live in
//! [`crate::core::progress`], which knows nothing of the manager: the dependency goes one way,
//! manager -> progress.

use super::Manager;
use crate::core::progress::{AttemptView, Flags, Progress, Snapshot, StatusCounts};
use crate::core::types::{Attempt, BucketId, BucketStatus, OverallStatus, RebalanceId};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// The progress API. O(plan).
    pub fn progress(&self) -> Progress {
        Progress {
            rid: self.rid,
            overall: self.overall,
            buckets: self
                .plan_buckets
                .iter()
                .map(|(b, s)| (b, s.status))
                .collect(),
            counts: self.counts,
        }
    }

    /// Buckets per status, O(1).
    pub fn counts(&self) -> StatusCounts {
        self.counts
    }

    /// `rid`.
    pub fn rid(&self) -> Option<RebalanceId> {
        self.rid
    }

    /// `overall`.
    pub fn overall(&self) -> Option<OverallStatus> {
        self.overall
    }

    /// `status[b]`.
    pub fn bucket_status(&self, b: BucketId) -> Option<BucketStatus> {
        self.status(b)
    }

    /// `attempts[b]`.
    pub fn attempt(&self, b: BucketId) -> Option<&Attempt> {
        self.attempts.get(&b)
    }

    /// The flags.
    pub fn flags(&self) -> Flags {
        Flags {
            cancel_requested: self.cancel_requested,
            finalize_pending: self.finalize_pending,
            finalize_queued: self.finalize_queued,
            recovery_pending: self.recovery_pending,
            recovery_queued: self.recovery_queued,
        }
    }

    /// The full state, copied.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            coordinator_epoch: self.ce,
            now_ms: self.now_ms,
            rid: self.rid,
            overall: self.overall,
            status: self
                .plan_buckets
                .iter()
                .map(|(b, s)| (b, s.status))
                .collect(),
            pending: self
                .pending
                .iter()
                .copied()
                .filter(|b| self.status(*b) == Some(BucketStatus::NotStarted))
                .collect(),
            attempts: self
                .attempts
                .iter()
                .map(|(b, a)| {
                    let tracked = self.status(*b) == Some(BucketStatus::Timeout);
                    (
                        *b,
                        AttemptView {
                            attempt: a.clone(),
                            tracked,
                        },
                    )
                })
                .collect(),
            queued_timeouts: self.queued_timeouts.clone(),
            queued_reconciles: self.queued_reconciles.clone(),
            flags: self.flags(),
            live: self.ctx.live.clone(),
            restored: self.restored,
            liveness_repairs: self.liveness_repairs.clone(),
            deletion_retries: self.deletion_retries.clone(),
        }
    }
}
