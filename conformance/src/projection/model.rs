//! The projection of the model's side: its state and the coordinator's output of one step.

use rebalance_model as model;
use rebalance_model::{Action, StepOutput, SystemState};

use super::{
    Attempt, Bucket, BucketStatus, Effects, Event, Flags, Key, LeaderAndIsr, OverallStatus,
    PlanEntry, Reply, Sent, ServerSet, Servers, State, Task, TaskStatus,
};

fn servers<'a>(list: impl IntoIterator<Item = &'a model::ServerId>) -> Servers {
    Servers::of(list.into_iter().map(|s| u32::from(*s)))
}

fn set(s: model::ServerSet) -> ServerSet {
    ServerSet(u64::from(s.0))
}

same_variants!(fn bucket_status(model::BucketStatus) -> BucketStatus {
    NotStarted, Rebalancing, Timeout, Completed, Failed, Canceled, TimeoutFinal
});

same_variants!(fn task_status(model::TaskStatus) -> TaskStatus {
    NotStarted, Rebalancing, Completed, Failed, Canceled
});

same_variants!(fn overall(model::state::types::OverallStatus) -> OverallStatus {
    Rebalancing, Completed, Failed, Canceled
});

pub fn key(k: model::Key) -> Key {
    Key {
        rid: k.rid.into(),
        bucket: k.bucket.into(),
    }
}

pub fn event(e: &model::Event) -> Event {
    match e {
        model::Event::Timeout { key: k } => Event::Timeout { key: key(*k) },
        model::Event::Reconcile { key: k } => Event::Reconcile { key: key(*k) },
        model::Event::Finalize { rid } => Event::Finalize { rid: (*rid).into() },
        model::Event::Recover => Event::Recover,
    }
}

fn lai(l: &model::LeaderAndIsr) -> LeaderAndIsr {
    LeaderAndIsr {
        leader: l.leader.map(u64::from),
        leader_epoch: l.leader_epoch.into(),
        isr: set(l.isr),
        bucket_epoch: l.bucket_epoch.into(),
        coordinator_epoch: l.coordinator_epoch.into(),
    }
}

/// Fills `o` with the projection of the model's state `s`.
pub fn state(s: &SystemState, o: &mut State) {
    o.clear();
    store(s, o);
    let c = &s.coordinator;
    o.ce = c.ce.into();
    o.live = set(c.live);
    o.rid = c.rid.map(u64::from);
    o.overall = c.overall.map(overall);
    o.status.extend(
        c.status
            .iter()
            .map(|(b, st)| (u64::from(*b), bucket_status(*st))),
    );
    o.status.sort_unstable();
    o.pending.extend(c.pending.iter().map(|b| u64::from(*b)));
    o.attempts.extend(c.attempts.iter().map(|(b, a)| {
        let tracked = c.status_of(*b) == Some(model::BucketStatus::Timeout);
        let attempt = if tracked {
            Attempt::Tracked {
                key: key(a.key),
                since_progress: a.since_progress.into(),
                blocked_for: a.blocked_for.map(u64::from),
                reconciles: a.reconciles.into(),
                reconcile_in: a.reconcile_in.into(),
                observed_assignment: servers(&a.observed.assignment),
                observed_leader: a.observed.leader.map(u64::from),
                observed_isr: set(a.observed.isr),
            }
        } else {
            Attempt::Running {
                key: key(a.key),
                age: a.age.into(),
            }
        };
        (u64::from(*b), attempt)
    }));
    o.queued_timeouts
        .extend(c.queued_timeouts.iter().map(|k| key(*k)));
    o.queued_reconciles
        .extend(c.queued_reconciles.iter().map(|k| key(*k)));
    o.flags = Flags {
        cancel_requested: c.cancel_requested,
        finalize_pending: c.finalize_pending,
        finalize_queued: c.finalize_queued,
        recovery_pending: c.recovery_pending,
        recovery_queued: c.recovery_queued,
    };
    o.events.extend(c.events.iter().map(event));
    o.restored = s.ghost.restored.len() as u64;
}

/// Fills the store's part of `o` (coordinator epoch, task, plan, cluster metadata) from the
/// model's store in `s`, leaving the rest as it is.
pub fn store(s: &SystemState, o: &mut State) {
    o.store_coordinator_epoch = s.store.coordinator_epoch.into();
    o.task = s.store.task.as_ref().map(|t| {
        o.plan.extend(t.plan.iter().map(|e| PlanEntry {
            bucket: e.bucket.into(),
            ors: servers(&e.ors),
            trs: servers(&e.trs),
            old_leader: Some(e.old_leader.into()),
            new_leader: e.new_leader.into(),
        }));
        Task {
            id: t.id.into(),
            status: task_status(t.status),
            cancel_requested: t.cancel_requested,
        }
    });
    let meta = &s.store.buckets;
    o.buckets.extend((0..meta.assignment.len()).map(|b| Bucket {
        bucket: b as u64,
        assignment: servers(&meta.assignment[b]),
        lai: lai(&meta.lai[b]),
        deleted: meta.deleted[b],
    }));
}

/// Fills `o` with the coordinator's output of the step `action`, `out`: messages in send order,
/// events in enqueue order, the reply. The model keeps each kind in its own list, so the order
/// across kinds is not recorded; the one the spec fixes (R1: the reply comes first) is stated.
pub fn effects(action: &Action, out: &StepOutput, o: &mut Effects) {
    o.clear();
    o.sent.extend(out.sent.iter().map(|m| match m {
        model::Message::Nli(n) => Sent::Nli {
            to: n.to.into(),
            bucket: n.bucket.into(),
            replicas: servers(&n.replicas),
            lai: LeaderAndIsr {
                leader: n.leader.map(u64::from),
                leader_epoch: n.leader_epoch.into(),
                isr: set(n.isr),
                bucket_epoch: n.bucket_epoch.into(),
                coordinator_epoch: n.coordinator_epoch.into(),
            },
            exec_key: n.exec_key.map(key),
        },
        model::Message::AdjustIsrResponse(r) => Sent::AdjustIsrResponse {
            to: r.to.into(),
            bucket: r.bucket.into(),
            result: match &r.result {
                model::AdjustIsrResult::Ok(l) => Some(lai(l)),
                model::AdjustIsrResult::Err => None,
            },
        },
        _ => Sent::ServerMessage,
    }));
    o.enqueued.extend(out.enqueued.iter().map(event));
    if let Some(r) = &out.reply {
        use model::{CancelReply as C, ClientReply as R, RegisterReply as G};
        o.replies.push(match r {
            R::Register(G::Accepted(id)) => Reply::Accepted(Some((*id).into())),
            R::Register(G::RejectedInProgress) => Reply::RejectedInProgress,
            R::Register(G::RejectedInvalidPlan) => Reply::RejectedInvalidPlan,
            R::Register(G::StoreError) | R::Cancel(C::StoreError) => Reply::StoreError,
            R::Cancel(C::Accepted) => Reply::Accepted(None),
            R::Cancel(C::NothingToCancel) => Reply::NothingToCancel,
        });
    }
    o.register_reply_first = matches!(action, Action::Register { .. }) && out.reply.is_some();
}
