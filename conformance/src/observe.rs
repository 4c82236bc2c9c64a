//! The projection both sides are compared on: a list of `key: value` lines in spec vocabulary.
//!
//! The model's [`SystemState`](rebalance_model::SystemState) and the manager's snapshot plus its
//! store and the host's event queue are each rendered into the same keys in the same order, so
//! equality of the renderings is equality of the projected states, and a divergence report is a
//! readable line diff. Tablet servers and the network are environment: the harness takes them
//! from the model and compares what the manager *emits* instead (see [`crate::harness`]).
//!
//! Time: the model keeps ages in ticks (spec 9); the manager keeps timestamps. A manager
//! timestamp is turned into the model's saturated age with the same saturation the model uses,
//! and only the ages a mode reads are compared (a running attempt's `age`; a tracked attempt's
//! progress ages), because the model freezes the others.

use std::collections::VecDeque;
use std::fmt::Write;

use rebalance_manager as mgr;
use rebalance_model as model;

use crate::translate::TICK_MS;

/// A rendered projection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation(pub Vec<(String, String)>);

impl Observation {
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.0 {
            let _ = writeln!(out, "{k}: {v}");
        }
        out
    }

    fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.push((key.into(), value.into()));
    }
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(","))
}

fn opt<T: std::fmt::Display>(x: Option<T>) -> String {
    x.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn lai_line(
    assign: String,
    leader: Option<u64>,
    le: u64,
    isr: String,
    be: u64,
    ce: u64,
    deleted: bool,
) -> String {
    format!(
        "assign={assign} leader={} le={le} isr={isr} be={be} ce={ce} deleted={deleted}",
        opt(leader)
    )
}

fn flags_line(cancel: bool, fp: bool, fq: bool, rp: bool, rq: bool) -> String {
    format!(
        "cancel_requested={cancel} finalize_pending={fp} finalize_queued={fq} \
         recovery_pending={rp} recovery_queued={rq}"
    )
}

pub fn model_key(k: model::Key) -> String {
    format!("r{},b{}", k.rid, k.bucket)
}

pub fn manager_key(k: mgr::Key) -> String {
    format!("r{},b{}", k.rid, k.bucket)
}

pub fn model_event(e: &model::Event) -> String {
    match e {
        model::Event::Timeout { key } => format!("Timeout({})", model_key(*key)),
        model::Event::Reconcile { key } => format!("Reconcile({})", model_key(*key)),
        model::Event::Finalize { rid } => format!("Finalize(r{rid})"),
        model::Event::Recover => "Recover".to_string(),
    }
}

pub fn manager_event(e: &mgr::Event) -> String {
    match e {
        mgr::Event::Timeout(key) => format!("Timeout({})", manager_key(*key)),
        mgr::Event::Reconcile(key) => format!("Reconcile({})", manager_key(*key)),
        mgr::Event::Finalize(rid) => format!("Finalize(r{rid})"),
        mgr::Event::Recover => "Recover".to_string(),
    }
}

fn model_plan(plan: &[model::PlanEntry]) -> String {
    list(plan.iter().map(|e| {
        format!(
            "b{}:{}->{}/{}->{}",
            e.bucket,
            list(e.ors),
            list(e.trs),
            e.old_leader,
            e.new_leader
        )
    }))
}

fn manager_plan(plan: &mgr::Plan) -> String {
    list(plan.buckets.iter().map(|(b, e)| {
        format!(
            "b{}:{}->{}/{}->{}",
            b,
            list(&e.ors),
            list(&e.trs),
            opt(e.old_leader),
            e.new_leader
        )
    }))
}

/// The model's projection.
pub fn of_model(s: &model::SystemState) -> Observation {
    let mut o = Observation(Vec::new());
    o.push(
        "store.coordinator_epoch",
        s.store.coordinator_epoch.to_string(),
    );
    o.push(
        "store.task",
        match &s.store.task {
            None => "-".to_string(),
            Some(t) => format!(
                "id={} status={:?} cancel_requested={} plan={}",
                t.id,
                t.status,
                t.cancel_requested,
                model_plan(&t.plan)
            ),
        },
    );
    let meta = &s.store.buckets;
    for b in 0..meta.assignment.len() {
        let l = &meta.lai[b];
        o.push(
            format!("store.b{b}"),
            lai_line(
                list(meta.assignment[b]),
                l.leader.map(u64::from),
                l.leader_epoch.into(),
                list(l.isr.iter()),
                l.bucket_epoch.into(),
                l.coordinator_epoch.into(),
                meta.deleted[b],
            ),
        );
    }
    let c = &s.coordinator;
    o.push("coord.ce", c.ce.to_string());
    o.push("coord.live", list(c.live.iter()));
    o.push("coord.rid", opt(c.rid));
    o.push("coord.overall", opt(c.overall.map(|x| format!("{x:?}"))));
    let mut status = c.status;
    status.sort();
    o.push(
        "coord.status",
        list(status.iter().map(|(b, st)| format!("b{b}={st:?}"))),
    );
    o.push(
        "coord.pending",
        list(c.pending.iter().map(|b| format!("b{b}"))),
    );
    for (b, a) in &c.attempts {
        let tracked = c.status_of(*b) == Some(model::BucketStatus::Timeout);
        o.push(format!("coord.attempt.b{b}"), model_attempt(a, tracked));
    }
    o.push(
        "coord.queued_timeouts",
        list(c.queued_timeouts.iter().map(|k| model_key(*k))),
    );
    o.push(
        "coord.queued_reconciles",
        list(c.queued_reconciles.iter().map(|k| model_key(*k))),
    );
    o.push(
        "coord.flags",
        flags_line(
            c.cancel_requested,
            c.finalize_pending,
            c.finalize_queued,
            c.recovery_pending,
            c.recovery_queued,
        ),
    );
    o.push("coord.events", list(c.events.iter().map(model_event)));
    // INV-TRACKED-BOUND's `restored`: a ghost in the model, a counter in the manager.
    o.push("coord.restored", s.ghost.restored.len().to_string());
    o
}

fn model_attempt(a: &model::state::Attempt, tracked: bool) -> String {
    if tracked {
        format!(
            "key={} tracked since_progress={} blocked_for={} reconciles={} reconcile_in={} observed={}/{}/{}",
            model_key(a.key),
            a.since_progress,
            opt(a.blocked_for),
            a.reconciles,
            a.reconcile_in,
            list(a.observed.assignment),
            opt(a.observed.leader),
            list(a.observed.isr.iter())
        )
    } else {
        format!("key={} running age={}", model_key(a.key), a.age)
    }
}

/// The saturation bounds the model applies to ages (spec 9), in ticks.
#[derive(Clone, Copy, Debug)]
pub struct AgeCaps {
    pub task_timeout: u64,
    pub no_progress: u64,
    pub target_unavailable: u64,
}

impl AgeCaps {
    pub fn of(c: &model::Config) -> AgeCaps {
        AgeCaps {
            task_timeout: c.task_timeout_ticks.into(),
            no_progress: c.no_progress_timeout_ticks.into(),
            target_unavailable: c.target_unavailable_timeout_ticks.into(),
        }
    }
}

fn ticks_since(now: u64, then: u64, cap: u64) -> u64 {
    (now.saturating_sub(then) / TICK_MS).min(cap + 1)
}

/// The manager's projection: its snapshot, its store, and the host's event queue.
pub fn of_manager(
    m: &mgr::Manager<mgr::MemStore>,
    queue: &VecDeque<mgr::Event>,
    caps: AgeCaps,
) -> Observation {
    let snap = m.snapshot();
    let store = m.store().state();
    let now = snap.now_ms;
    let mut o = Observation(Vec::new());
    o.push(
        "store.coordinator_epoch",
        store.coordinator_epoch.to_string(),
    );
    o.push(
        "store.task",
        match &store.task {
            None => "-".to_string(),
            Some(t) => format!(
                "id={} status={:?} cancel_requested={} plan={}",
                t.id,
                t.status,
                t.cancel_requested,
                manager_plan(&t.plan)
            ),
        },
    );
    for (b, r) in &store.cluster.buckets {
        let l = &r.lai;
        o.push(
            format!("store.b{b}"),
            lai_line(
                list(&r.assignment),
                l.leader.map(u64::from),
                l.leader_epoch,
                list(&l.isr),
                l.bucket_epoch,
                l.coordinator_epoch,
                store.cluster.deleted.contains(b),
            ),
        );
    }
    o.push("coord.ce", snap.coordinator_epoch.to_string());
    o.push("coord.live", list(&snap.live));
    o.push("coord.rid", opt(snap.rid));
    o.push("coord.overall", opt(snap.overall.map(|x| format!("{x:?}"))));
    o.push(
        "coord.status",
        list(snap.status.iter().map(|(b, st)| format!("b{b}={st:?}"))),
    );
    o.push(
        "coord.pending",
        list(snap.pending.iter().map(|b| format!("b{b}"))),
    );
    for (b, v) in &snap.attempts {
        let a = &v.attempt;
        let line = if v.tracked {
            format!(
                "key={} tracked since_progress={} blocked_for={} reconciles={} reconcile_in={} observed={}/{}/{}",
                manager_key(a.key),
                ticks_since(now, a.last_progress_ms, caps.no_progress),
                opt(a.blocked_since_ms.map(|t| ticks_since(now, t, caps.target_unavailable))),
                a.reconciles,
                a.next_reconcile_ms.saturating_sub(now).div_ceil(TICK_MS),
                list(&a.observed.assignment),
                opt(a.observed.leader),
                list(&a.observed.isr)
            )
        } else {
            format!(
                "key={} running age={}",
                manager_key(a.key),
                ticks_since(now, a.started_ms, caps.task_timeout)
            )
        };
        o.push(format!("coord.attempt.b{b}"), line);
    }
    o.push(
        "coord.queued_timeouts",
        list(snap.queued_timeouts.iter().map(|k| manager_key(*k))),
    );
    o.push(
        "coord.queued_reconciles",
        list(snap.queued_reconciles.iter().map(|k| manager_key(*k))),
    );
    let f = snap.flags;
    o.push(
        "coord.flags",
        flags_line(
            f.cancel_requested,
            f.finalize_pending,
            f.finalize_queued,
            f.recovery_pending,
            f.recovery_queued,
        ),
    );
    o.push("coord.events", list(queue.iter().map(manager_event)));
    o.push("coord.restored", snap.restored.to_string());
    o
}
