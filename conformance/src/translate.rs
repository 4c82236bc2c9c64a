//! Model values to manager inputs (spec vocabulary on both sides, different representations).
//!
//! The model counts time in ticks; the manager in milliseconds. One tick is the
//! configuration's `check_interval_ms` (spec 9), 30 s unless a configuration says otherwise.

use std::collections::BTreeSet;

use rebalance_manager as mgr;
use rebalance_model as model;

/// The manager configuration equivalent to a model configuration (durations scaled by a tick).
pub fn config(c: &model::Config) -> mgr::Config {
    let tick = c.tick_ms();
    mgr::Config {
        task_timeout_ms: u64::from(c.task_timeout_ticks) * tick,
        check_interval_ms: tick,
        max_reconcile_backoff_ms: u64::from(c.max_reconcile_backoff_ticks) * tick,
        target_unavailable_timeout_ms: u64::from(c.target_unavailable_timeout_ticks) * tick,
        no_progress_timeout_ms: u64::from(c.no_progress_timeout_ticks) * tick,
        max_tracked_timed_out: usize::from(c.max_tracked_timed_out),
        max_inflight: usize::from(c.max_inflight),
    }
}

pub fn servers(v: &[model::ServerId]) -> Vec<mgr::ServerId> {
    v.iter().map(|s| mgr::ServerId::from(*s)).collect()
}

pub fn server_set(s: model::ServerSet) -> BTreeSet<mgr::ServerId> {
    s.iter().map(mgr::ServerId::from).collect()
}

pub fn key(k: model::Key) -> mgr::Key {
    mgr::Key {
        rid: mgr::RebalanceId::from(k.rid),
        bucket: mgr::BucketId::from(k.bucket),
    }
}

pub fn plan(entries: &[model::PlanEntry]) -> mgr::Plan {
    mgr::Plan::new(
        entries
            .iter()
            .map(|e| {
                (
                    mgr::BucketId::from(e.bucket),
                    mgr::PlanEntry {
                        ors: servers(&e.ors),
                        trs: servers(&e.trs),
                        old_leader: Some(mgr::ServerId::from(e.old_leader)),
                        new_leader: mgr::ServerId::from(e.new_leader),
                    },
                )
            })
            .collect(),
    )
}

/// Whether the manager's `plan` is [`plan`]`(entries)`, compared in place (this runs on every
/// edge of a walk, so it does not build the translation).
pub fn same_plan(plan: &mgr::Plan, entries: &[model::PlanEntry]) -> bool {
    let same = |a: &[mgr::ServerId], b: &[model::ServerId]| {
        a.iter()
            .copied()
            .eq(b.iter().map(|s| mgr::ServerId::from(*s)))
    };
    plan.buckets.len() == entries.len()
        && plan.buckets.iter().zip(entries).all(|((b, m), e)| {
            *b == mgr::BucketId::from(e.bucket)
                && same(&m.ors, &e.ors)
                && same(&m.trs, &e.trs)
                && m.old_leader == Some(mgr::ServerId::from(e.old_leader))
                && m.new_leader == mgr::ServerId::from(e.new_leader)
        })
}

crate::projection::same_variants!(fn task_status(model::TaskStatus) -> mgr::TaskStatus {
    NotStarted, Rebalancing, Completed, Failed, Canceled
});

pub fn event(e: &model::Event) -> mgr::Event {
    match e {
        model::Event::Timeout { key: k } => mgr::Event::Timeout(key(*k)),
        model::Event::Reconcile { key: k } => mgr::Event::Reconcile(key(*k)),
        model::Event::Finalize { rid } => mgr::Event::Finalize(mgr::RebalanceId::from(*rid)),
        model::Event::Recover => mgr::Event::Recover,
    }
}

pub fn context(c: &model::state::message::RequestContext) -> mgr::RequestContext {
    mgr::RequestContext {
        coordinator_epoch: mgr::Epoch::from(c.coordinator_epoch),
        leader: c.leader.map(mgr::ServerId::from),
        leader_epoch: mgr::Epoch::from(c.leader_epoch),
        bucket_epoch: mgr::Epoch::from(c.bucket_epoch),
        exec_key: c.exec_key.map(key),
    }
}

pub fn nli_response(m: &model::NliResponse) -> mgr::Input {
    mgr::Input::NliResponse {
        from: mgr::ServerId::from(m.from),
        bucket: mgr::BucketId::from(m.bucket),
        ok: m.ok,
        context: context(&m.context),
    }
}

pub fn adjust_isr(m: &model::AdjustIsr) -> mgr::Input {
    mgr::Input::AdjustIsr {
        from: mgr::ServerId::from(m.from),
        bucket: mgr::BucketId::from(m.bucket),
        leader_epoch: mgr::Epoch::from(m.leader_epoch),
        bucket_epoch: mgr::Epoch::from(m.bucket_epoch),
        isr: server_set(m.isr),
    }
}

/// The store the manager starts on: the model's initial store, at coordinator epoch `ce - 1` so
/// that the manager's election (R17) lands on the model's `ce`.
pub fn lai(l: &model::LeaderAndIsr) -> mgr::LeaderAndIsr {
    mgr::LeaderAndIsr {
        leader: l.leader.map(mgr::ServerId::from),
        leader_epoch: mgr::Epoch::from(l.leader_epoch),
        isr: server_set(l.isr),
        bucket_epoch: mgr::Epoch::from(l.bucket_epoch),
        coordinator_epoch: mgr::Epoch::from(l.coordinator_epoch),
    }
}

/// The manager's store with the model's store in `s` in it; the coordinator epoch before the
/// model's initial incarnation, which the manager's start then elects.
pub fn initial_store(s: &model::SystemState) -> mgr::MemStore {
    let mut state = store(s);
    state.coordinator_epoch = state.coordinator_epoch.saturating_sub(1);
    mgr::MemStore::with_state(state)
}

/// The model's store in `s`, as the manager's types hold it.
pub fn store(s: &model::SystemState) -> mgr::PersistedState {
    let mut state = mgr::PersistedState {
        coordinator_epoch: mgr::Epoch::from(s.store.coordinator_epoch),
        task: s.store.task.as_ref().map(|t| mgr::TaskNode {
            id: mgr::RebalanceId::from(t.id),
            status: task_status(t.status),
            cancel_requested: t.cancel_requested,
            plan: std::sync::Arc::new(plan(&t.plan)),
        }),
        cluster: mgr::ClusterState::default(),
    };
    let meta = &s.store.buckets;
    for b in 0..meta.assignment.len() {
        let lai = &meta.lai[b];
        state.cluster.buckets.insert(
            b as mgr::BucketId,
            mgr::BucketRecord {
                assignment: servers(&meta.assignment[b]),
                lai: self::lai(lai),
            },
        );
        if meta.deleted[b] {
            state.cluster.deleted.insert(b as mgr::BucketId);
        }
    }
    state
}
