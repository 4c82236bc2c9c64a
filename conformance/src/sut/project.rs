//! The projection of an implementation under test, from its `state` line: the same
//! [`projection::State`] the in-process manager's projection fills
//! ([`crate::projection::manager::state`]), built from the wire's spec vocabulary. Timestamps
//! become the model's saturated ages in ticks exactly as there.

use std::collections::VecDeque;

use rebalance_manager as mgr;
use rebalance_manager_stdio::wire;

use crate::projection::manager::{servers, ticks_since, AgeCaps};
use crate::projection::same_variants;
use crate::projection::{
    self, Attempt, BucketId, BucketStatus, Flags, Key, Lai, OverallStatus, PlanEntry, ServerSet,
    Task, TaskStatus,
};
use crate::translate::TICK_MS;

fn set(v: &[u32]) -> ServerSet {
    ServerSet::of(v.iter().copied())
}

fn key(k: wire::Key) -> Key {
    Key {
        rid: k.rid,
        bucket: k.bucket.into(),
    }
}

fn lai(l: &wire::Lai) -> Lai {
    Lai {
        leader: l.leader.map(u64::from),
        leader_epoch: l.leader_epoch,
        isr: set(&l.isr),
        bucket_epoch: l.bucket_epoch,
        coordinator_epoch: l.coordinator_epoch,
    }
}

same_variants!(fn task_status(wire::TaskStatus) -> TaskStatus {
    NotStarted, Rebalancing, Completed, Failed, Canceled
});

same_variants!(fn overall(wire::OverallStatus) -> OverallStatus {
    Rebalancing, Completed, Failed, Canceled
});

same_variants!(fn bucket_status(wire::BucketStatus) -> BucketStatus {
    NotStarted, Rebalancing, Timeout, Completed, Failed, Canceled
});

same_variants!(
    /// For the progress query of a remote implementation.
    pub fn manager_bucket_status(wire::BucketStatus) -> mgr::BucketStatus {
        NotStarted, Rebalancing, Timeout, Completed, Failed, Canceled
    }
);

same_variants!(
    /// For the progress query of a remote implementation.
    pub fn manager_overall(wire::OverallStatus) -> mgr::OverallStatus {
        Rebalancing, Completed, Failed, Canceled
    }
);

/// Fills `o` from the observation `w` and the host's event queue `queue`.
pub fn state(
    w: &wire::Observation,
    queue: &VecDeque<mgr::Event>,
    caps: AgeCaps,
    o: &mut projection::State,
) {
    *o = projection::State::default();
    let store = &w.store;
    o.store_coordinator_epoch = store.coordinator_epoch;
    o.task = store.task.as_ref().map(|t| {
        o.plan.extend(t.plan.iter().map(|e| PlanEntry {
            bucket: e.bucket.into(),
            ors: servers(&e.ors),
            trs: servers(&e.trs),
            old_leader: e.old_leader.map(u64::from),
            new_leader: e.new_leader.into(),
        }));
        Task {
            id: t.id,
            status: task_status(t.status),
            cancel_requested: t.cancel_requested,
        }
    });
    o.buckets.extend(store.buckets.iter().map(|b| BucketId {
        bucket: b.bucket.into(),
        assignment: servers(&b.assignment),
        lai: lai(&b.lai),
        deleted: b.deleted,
    }));
    let c = &w.coordinator;
    let now = c.now_ms;
    o.ce = c.coordinator_epoch;
    o.live = set(&c.live);
    o.rid = c.rid;
    o.overall = c.overall.map(overall);
    o.status.extend(
        c.status
            .iter()
            .map(|s| (u64::from(s.bucket), bucket_status(s.status))),
    );
    o.pending.extend(c.pending.iter().map(|b| u64::from(*b)));
    o.attempts.extend(c.attempts.iter().map(|a| {
        let attempt = match a.mode {
            wire::Mode::Tracked => Attempt::Tracked {
                key: key(a.key),
                since_progress: ticks_since(now, a.last_progress_ms, caps.no_progress),
                blocked_for: a
                    .blocked_since_ms
                    .map(|t| ticks_since(now, t, caps.target_unavailable)),
                reconciles: a.reconciles,
                reconcile_in: a.next_reconcile_ms.saturating_sub(now).div_ceil(TICK_MS),
                observed_assignment: servers(&a.observed.assignment),
                observed_leader: a.observed.leader.map(u64::from),
                observed_isr: set(&a.observed.isr),
            },
            wire::Mode::Running => Attempt::Running {
                key: key(a.key),
                age: ticks_since(now, a.started_ms, caps.task_timeout),
            },
        };
        (u64::from(a.bucket), attempt)
    }));
    o.queued_timeouts
        .extend(c.queued_timeouts.iter().map(|k| key(*k)));
    o.queued_reconciles
        .extend(c.queued_reconciles.iter().map(|k| key(*k)));
    let f = c.flags;
    o.flags = Flags {
        cancel_requested: f.cancel_requested,
        finalize_pending: f.finalize_pending,
        finalize_queued: f.finalize_queued,
        recovery_pending: f.recovery_pending,
        recovery_queued: f.recovery_queued,
    };
    o.events
        .extend(queue.iter().map(projection::manager::event));
    o.restored = c.restored;
}
