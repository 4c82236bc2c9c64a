//! The projection of the manager's side: its snapshot, its store and the host's event queue,
//! and the effects of one step in emission order.

use std::collections::{BTreeSet, VecDeque};

use rebalance_manager as mgr;
use rebalance_model::{self as model, Action};
use rebalance_wire::convert;

use super::{
    Attempt, Bucket, BucketStatus, Effects, LeaderAndIsr, OverallStatus, PlanEntry, Reply, Sent,
    ServerSet, Servers, State, Task, TaskStatus,
};
/// The saturation bounds the model applies to ages (spec 9), in ticks, and the tick length
/// that turns the manager's timestamps into ticks.
#[derive(Clone, Copy, Debug)]
pub struct AgeCaps {
    pub tick_ms: u64,
    pub task_timeout: u64,
    pub no_progress: u64,
    pub target_unavailable: u64,
}

impl AgeCaps {
    pub fn of(c: &model::Config) -> AgeCaps {
        AgeCaps {
            tick_ms: c.tick_ms(),
            task_timeout: c.task_timeout_ticks.into(),
            no_progress: c.no_progress_timeout_ticks.into(),
            target_unavailable: c.target_unavailable_timeout_ticks.into(),
        }
    }
}

impl AgeCaps {
    /// A manager timestamp as the model's age in ticks, saturated one above `cap` as the model
    /// saturates it.
    fn ticks_since(&self, now: u64, then: u64, cap: u64) -> u64 {
        (now.saturating_sub(then) / self.tick_ms).min(cap + 1)
    }

    /// Ticks until a manager deadline, as the model's countdown.
    fn ticks_until(&self, now: u64, deadline: u64) -> u64 {
        deadline.saturating_sub(now).div_ceil(self.tick_ms)
    }
}

pub(crate) fn servers(list: &[mgr::ServerId]) -> Servers {
    Servers::of(list.iter().copied())
}

fn set(s: &BTreeSet<mgr::ServerId>) -> ServerSet {
    ServerSet::of(s.iter().copied())
}

same_variants!(pub fn bucket_status(mgr::BucketStatus) -> BucketStatus {
    NotStarted, Rebalancing, Timeout, Completed, Failed, Canceled
});

same_variants!(fn task_status(mgr::TaskStatus) -> TaskStatus {
    NotStarted, Rebalancing, Completed, Failed, Canceled
});

same_variants!(pub fn overall(mgr::OverallStatus) -> OverallStatus {
    Rebalancing, Completed, Failed, Canceled
});

// The manager's keys and events map onto the wire's, which the projection uses.
pub use rebalance_wire::convert::{event, key};

fn lai(l: &mgr::LeaderAndIsr) -> LeaderAndIsr {
    LeaderAndIsr {
        leader: l.leader.map(u64::from),
        leader_epoch: l.leader_epoch,
        isr: set(&l.isr),
        bucket_epoch: l.bucket_epoch,
        coordinator_epoch: l.coordinator_epoch,
    }
}

/// Fills `o` with the projection of an implementation's `store` and `snap`shot and the host's
/// event queue `queue`. The in-process manager passes its own; an implementation under test's
/// `state` answer is converted into the manager's types first (`sut::remote`), so one projection
/// serves both and they cannot drift apart.
pub fn state(
    store: &mgr::PersistedState,
    snap: &mgr::Snapshot,
    queue: &VecDeque<mgr::Event>,
    caps: AgeCaps,
    o: &mut State,
) {
    o.clear();
    self::store(store, o);
    let now = snap.now_ms;
    o.ce = snap.coordinator_epoch;
    o.live = set(&snap.live);
    o.rid = snap.rid;
    o.overall = snap.overall.map(overall);
    o.status.extend(
        snap.status
            .iter()
            .map(|(b, st)| (u64::from(*b), bucket_status(*st))),
    );
    o.pending.extend(snap.pending.iter().map(|b| u64::from(*b)));
    o.attempts.extend(snap.attempts.iter().map(|(b, v)| {
        let a = &v.attempt;
        let attempt = if v.tracked {
            Attempt::Tracked {
                key: key(a.key),
                since_progress: caps.ticks_since(now, a.last_progress_ms, caps.no_progress),
                blocked_for: a
                    .blocked_since_ms
                    .map(|t| caps.ticks_since(now, t, caps.target_unavailable)),
                reconciles: a.reconciles.into(),
                reconcile_in: caps.ticks_until(now, a.next_reconcile_ms),
                observed_assignment: servers(&a.observed.assignment),
                observed_leader: a.observed.leader.map(u64::from),
                observed_isr: set(&a.observed.isr),
            }
        } else {
            Attempt::Running {
                key: key(a.key),
                age: caps.ticks_since(now, a.started_ms, caps.task_timeout),
            }
        };
        (u64::from(*b), attempt)
    }));
    o.queued_timeouts
        .extend(snap.queued_timeouts.iter().map(|k| key(*k)));
    o.queued_reconciles
        .extend(snap.queued_reconciles.iter().map(|k| key(*k)));
    o.flags = convert::flags(&snap.flags);
    o.events.extend(queue.iter().map(event));
    o.restored = snap.restored as u64;
}

/// Fills the store's part of `o` (coordinator epoch, task, plan, cluster metadata) from
/// `store`, leaving the rest as it is.
pub fn store(store: &mgr::PersistedState, o: &mut State) {
    o.store_coordinator_epoch = store.coordinator_epoch;
    o.task = store.task.as_ref().map(|t| {
        o.plan.extend(t.plan.buckets.iter().map(|(b, e)| PlanEntry {
            bucket: (*b).into(),
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
    o.buckets
        .extend(store.cluster.buckets.iter().map(|(b, r)| Bucket {
            bucket: (*b).into(),
            assignment: servers(&r.assignment),
            lai: lai(&r.lai),
            deleted: store.cluster.deleted.contains(b),
        }));
}

/// Fills `o` with the manager's `effects` of the step `action`, each kind kept in emission order.
pub fn effects(action: &Action, effects: &[mgr::Effect], o: &mut Effects) {
    o.clear();
    let register = matches!(action, Action::Register { .. });
    for e in effects {
        match e {
            mgr::Effect::SendNli(n) => o.sent.push(Sent::Nli {
                to: n.to.into(),
                bucket: n.bucket.into(),
                replicas: servers(&n.replicas),
                lai: LeaderAndIsr {
                    leader: n.leader.map(u64::from),
                    leader_epoch: n.leader_epoch,
                    isr: set(&n.isr),
                    bucket_epoch: n.bucket_epoch,
                    coordinator_epoch: n.coordinator_epoch,
                },
                exec_key: n.exec_key.map(key),
            }),
            mgr::Effect::SendAdjustIsrResponse { to, bucket, result } => {
                o.sent.push(Sent::AdjustIsrResponse {
                    to: (*to).into(),
                    bucket: (*bucket).into(),
                    result: result.as_ref().ok().map(lai),
                })
            }
            mgr::Effect::Enqueue(ev) => o.enqueued.push(event(ev)),
            mgr::Effect::Reply(r) => o.replies.push(match r {
                mgr::Reply::Accepted(id) if register => Reply::Accepted(Some(*id)),
                mgr::Reply::Accepted(_) => Reply::Accepted(None),
                mgr::Reply::Rejected(mgr::RejectReason::InProgress) => Reply::RejectedInProgress,
                mgr::Reply::Rejected(_) => Reply::RejectedInvalidPlan,
                mgr::Reply::NothingToCancel => Reply::NothingToCancel,
                mgr::Reply::StoreError => Reply::StoreError,
            }),
        }
    }
    o.register_reply_first = register && matches!(effects.first(), Some(mgr::Effect::Reply(_)));
}
