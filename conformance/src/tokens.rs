//! A fast, exact form of the projection in [`crate::observe`]: both sides write the same
//! sequence of integers into a reused buffer, and the buffers are compared. The line rendering
//! of `observe` is built only when the buffers differ (for the report), and it must then differ
//! too; if it does not, the two encodings disagree and the harness reports that as its own bug.
//!
//! This exists because the exhaustive walk checks millions of edges and formatting both
//! projections as text on every edge dominated its time.

use std::collections::{BTreeSet, VecDeque};

use rebalance_manager as mgr;
use rebalance_model as model;

use crate::observe::AgeCaps;
use crate::translate::TICK_MS;

const NONE: u64 = u64::MAX;

/// Names map to the same code on both sides; anything only one side has gets its own code.
fn bucket_status_model(s: model::BucketStatus) -> u64 {
    use model::BucketStatus as S;
    match s {
        S::NotStarted => 1,
        S::Rebalancing => 2,
        S::Timeout => 3,
        S::Completed => 4,
        S::Failed => 5,
        S::Canceled => 6,
        S::TimeoutFinal => 100,
    }
}

fn bucket_status_manager(s: mgr::BucketStatus) -> u64 {
    use mgr::BucketStatus as S;
    match s {
        S::NotStarted => 1,
        S::Rebalancing => 2,
        S::Timeout => 3,
        S::Completed => 4,
        S::Failed => 5,
        S::Canceled => 6,
    }
}

fn task_status_model(s: model::TaskStatus) -> u64 {
    use model::TaskStatus as S;
    match s {
        S::NotStarted => 1,
        S::Rebalancing => 2,
        S::Completed => 4,
        S::Failed => 5,
        S::Canceled => 6,
    }
}

fn task_status_manager(s: mgr::TaskStatus) -> u64 {
    use mgr::TaskStatus as S;
    match s {
        S::NotStarted => 1,
        S::Rebalancing => 2,
        S::Completed => 4,
        S::Failed => 5,
        S::Canceled => 6,
    }
}

fn overall_manager(s: mgr::OverallStatus) -> u64 {
    use mgr::OverallStatus as S;
    match s {
        S::Rebalancing => 2,
        S::Completed => 4,
        S::Failed => 5,
        S::Canceled => 6,
    }
}

fn mask<I: IntoIterator<Item = u64>>(servers: I) -> u64 {
    servers.into_iter().fold(0, |m, s| m | (1u64 << s.min(63)))
}

fn opt(x: Option<u64>) -> u64 {
    x.unwrap_or(NONE)
}

struct Out<'a>(&'a mut Vec<u64>);

impl Out<'_> {
    fn u(&mut self, x: u64) {
        self.0.push(x);
    }
    fn list<I: IntoIterator<Item = u64>>(&mut self, items: I) {
        let at = self.0.len();
        self.0.push(0);
        let mut n = 0;
        for x in items {
            self.0.push(x);
            n += 1;
        }
        self.0[at] = n;
    }
}

fn model_event(o: &mut Out, e: &model::Event) {
    match e {
        model::Event::Timeout { key } => {
            o.u(1);
            o.u(key.rid.into());
            o.u(key.bucket.into());
        }
        model::Event::Reconcile { key } => {
            o.u(2);
            o.u(key.rid.into());
            o.u(key.bucket.into());
        }
        model::Event::Finalize { rid } => {
            o.u(3);
            o.u((*rid).into());
        }
        model::Event::Recover => o.u(4),
    }
}

fn manager_event(o: &mut Out, e: &mgr::Event) {
    match e {
        mgr::Event::Timeout(key) => {
            o.u(1);
            o.u(key.rid);
            o.u(key.bucket.into());
        }
        mgr::Event::Reconcile(key) => {
            o.u(2);
            o.u(key.rid);
            o.u(key.bucket.into());
        }
        mgr::Event::Finalize(rid) => {
            o.u(3);
            o.u(*rid);
        }
        mgr::Event::Recover => o.u(4),
    }
}

/// The model's state, as [`crate::observe::of_model`] projects it.
pub fn of_model(s: &model::SystemState, buf: &mut Vec<u64>) {
    buf.clear();
    let mut o = Out(buf);
    o.u(s.store.coordinator_epoch.into());
    match &s.store.task {
        None => o.u(0),
        Some(t) => {
            o.u(1);
            o.u(t.id.into());
            o.u(task_status_model(t.status));
            o.u(t.cancel_requested.into());
            o.u(t.plan.len() as u64);
            for e in &t.plan {
                o.u(e.bucket.into());
                o.list(e.ors.iter().map(|x| u64::from(*x)));
                o.list(e.trs.iter().map(|x| u64::from(*x)));
                o.u(e.old_leader.into());
                o.u(e.new_leader.into());
            }
        }
    }
    let meta = &s.store.buckets;
    o.u(meta.assignment.len() as u64);
    for b in 0..meta.assignment.len() {
        let l = &meta.lai[b];
        o.u(b as u64);
        o.list(meta.assignment[b].iter().map(|x| u64::from(*x)));
        o.u(opt(l.leader.map(u64::from)));
        o.u(l.leader_epoch.into());
        o.u(mask(l.isr.iter().map(u64::from)));
        o.u(l.bucket_epoch.into());
        o.u(l.coordinator_epoch.into());
        o.u(meta.deleted[b].into());
    }
    let c = &s.coordinator;
    o.u(c.ce.into());
    o.u(mask(c.live.iter().map(u64::from)));
    o.u(opt(c.rid.map(u64::from)));
    o.u(opt(c.overall.map(task_status_model)));
    let mut status: Vec<_> = c.status.to_vec();
    status.sort();
    o.u(status.len() as u64);
    for (b, st) in &status {
        o.u((*b).into());
        o.u(bucket_status_model(*st));
    }
    o.list(c.pending.iter().map(|b| u64::from(*b)));
    o.u(c.attempts.len() as u64);
    for (b, a) in &c.attempts {
        o.u((*b).into());
        o.u(a.key.rid.into());
        o.u(a.key.bucket.into());
        if c.status_of(*b) == Some(model::BucketStatus::Timeout) {
            o.u(1);
            o.u(a.since_progress.into());
            o.u(opt(a.blocked_for.map(u64::from)));
            o.u(a.reconciles.into());
            o.u(a.reconcile_in.into());
            o.list(a.observed.assignment.iter().map(|x| u64::from(*x)));
            o.u(opt(a.observed.leader.map(u64::from)));
            o.u(mask(a.observed.isr.iter().map(u64::from)));
        } else {
            o.u(0);
            o.u(a.age.into());
        }
    }
    o.u(c.queued_timeouts.len() as u64);
    for k in &c.queued_timeouts {
        o.u(k.rid.into());
        o.u(k.bucket.into());
    }
    o.u(c.queued_reconciles.len() as u64);
    for k in &c.queued_reconciles {
        o.u(k.rid.into());
        o.u(k.bucket.into());
    }
    o.u(flags(
        c.cancel_requested,
        c.finalize_pending,
        c.finalize_queued,
        c.recovery_pending,
        c.recovery_queued,
    ));
    o.u(c.events.len() as u64);
    for e in &c.events {
        model_event(&mut o, e);
    }
    o.u(s.ghost.restored.len() as u64);
}

fn flags(a: bool, b: bool, c: bool, d: bool, e: bool) -> u64 {
    u64::from(a) | u64::from(b) << 1 | u64::from(c) << 2 | u64::from(d) << 3 | u64::from(e) << 4
}

fn ticks_since(now: u64, then: u64, cap: u64) -> u64 {
    (now.saturating_sub(then) / TICK_MS).min(cap + 1)
}

fn set_mask(s: &BTreeSet<mgr::ServerId>) -> u64 {
    mask(s.iter().map(|x| u64::from(*x)))
}

/// The manager's state, as [`crate::observe::of_manager`] projects it.
pub fn of_manager(
    m: &mgr::Manager<mgr::MemStore>,
    queue: &VecDeque<mgr::Event>,
    caps: AgeCaps,
    buf: &mut Vec<u64>,
) {
    buf.clear();
    let mut o = Out(buf);
    let store = m.store().state();
    o.u(store.coordinator_epoch);
    match &store.task {
        None => o.u(0),
        Some(t) => {
            o.u(1);
            o.u(t.id);
            o.u(task_status_manager(t.status));
            o.u(t.cancel_requested.into());
            o.u(t.plan.buckets.len() as u64);
            for (b, e) in &t.plan.buckets {
                o.u((*b).into());
                o.list(e.ors.iter().map(|x| u64::from(*x)));
                o.list(e.trs.iter().map(|x| u64::from(*x)));
                o.u(opt(e.old_leader.map(u64::from)));
                o.u(e.new_leader.into());
            }
        }
    }
    o.u(store.cluster.buckets.len() as u64);
    for (b, r) in &store.cluster.buckets {
        let l = &r.lai;
        o.u((*b).into());
        o.list(r.assignment.iter().map(|x| u64::from(*x)));
        o.u(opt(l.leader.map(u64::from)));
        o.u(l.leader_epoch);
        o.u(set_mask(&l.isr));
        o.u(l.bucket_epoch);
        o.u(l.coordinator_epoch);
        o.u(store.cluster.deleted.contains(b).into());
    }
    let snap = m.snapshot();
    let now = snap.now_ms;
    o.u(snap.coordinator_epoch);
    o.u(set_mask(&snap.live));
    o.u(opt(snap.rid));
    o.u(opt(snap.overall.map(overall_manager)));
    o.u(snap.status.len() as u64);
    for (b, st) in &snap.status {
        o.u((*b).into());
        o.u(bucket_status_manager(*st));
    }
    o.list(snap.pending.iter().map(|b| u64::from(*b)));
    o.u(snap.attempts.len() as u64);
    for (b, v) in &snap.attempts {
        let a = &v.attempt;
        o.u((*b).into());
        o.u(a.key.rid);
        o.u(a.key.bucket.into());
        if v.tracked {
            o.u(1);
            o.u(ticks_since(now, a.last_progress_ms, caps.no_progress));
            o.u(opt(a
                .blocked_since_ms
                .map(|t| ticks_since(now, t, caps.target_unavailable))));
            o.u(a.reconciles.into());
            o.u(a.next_reconcile_ms.saturating_sub(now).div_ceil(TICK_MS));
            o.list(a.observed.assignment.iter().map(|x| u64::from(*x)));
            o.u(opt(a.observed.leader.map(u64::from)));
            o.u(set_mask(&a.observed.isr));
        } else {
            o.u(0);
            o.u(ticks_since(now, a.started_ms, caps.task_timeout));
        }
    }
    o.u(snap.queued_timeouts.len() as u64);
    for k in &snap.queued_timeouts {
        o.u(k.rid);
        o.u(k.bucket.into());
    }
    o.u(snap.queued_reconciles.len() as u64);
    for k in &snap.queued_reconciles {
        o.u(k.rid);
        o.u(k.bucket.into());
    }
    let f = snap.flags;
    o.u(flags(
        f.cancel_requested,
        f.finalize_pending,
        f.finalize_queued,
        f.recovery_pending,
        f.recovery_queued,
    ));
    o.u(queue.len() as u64);
    for e in queue {
        manager_event(&mut o, e);
    }
    o.u(snap.restored as u64);
}

fn model_lai(o: &mut Out, l: &model::LeaderAndIsr) {
    o.u(opt(l.leader.map(u64::from)));
    o.u(l.leader_epoch.into());
    o.u(mask(l.isr.iter().map(u64::from)));
    o.u(l.bucket_epoch.into());
    o.u(l.coordinator_epoch.into());
}

fn manager_lai(o: &mut Out, l: &mgr::LeaderAndIsr) {
    o.u(opt(l.leader.map(u64::from)));
    o.u(l.leader_epoch);
    o.u(set_mask(&l.isr));
    o.u(l.bucket_epoch);
    o.u(l.coordinator_epoch);
}

/// The model's coordinator effects of one step: sends, then enqueues, then the reply.
pub fn model_effects(out: &model::StepOutput, buf: &mut Vec<u64>) {
    buf.clear();
    let mut o = Out(buf);
    for m in &out.sent {
        match m {
            model::Message::Nli(n) => {
                o.u(1);
                o.u(n.to.into());
                o.u(n.bucket.into());
                o.list(n.replicas.iter().map(|x| u64::from(*x)));
                o.u(opt(n.leader.map(u64::from)));
                o.u(n.leader_epoch.into());
                o.u(mask(n.isr.iter().map(u64::from)));
                o.u(n.bucket_epoch.into());
                o.u(n.coordinator_epoch.into());
                o.u(opt(n.exec_key.map(|k| u64::from(k.rid))));
                o.u(opt(n.exec_key.map(|k| u64::from(k.bucket))));
            }
            model::Message::AdjustIsrResponse(r) => {
                o.u(2);
                o.u(r.to.into());
                o.u(r.bucket.into());
                match &r.result {
                    model::AdjustIsrResult::Ok(l) => {
                        o.u(1);
                        model_lai(&mut o, l);
                    }
                    model::AdjustIsrResult::Err => o.u(0),
                }
            }
            // A server message sent by the coordinator is always a divergence.
            _ => o.u(NONE),
        }
    }
    for e in &out.enqueued {
        o.u(3);
        model_event(&mut o, e);
    }
    if let Some(r) = &out.reply {
        o.u(4);
        use model::{CancelReply as C, ClientReply as R, RegisterReply as G};
        match r {
            R::Register(G::Accepted(id)) => {
                o.u(1);
                o.u((*id).into());
            }
            R::Register(G::RejectedInProgress) => o.u(2),
            R::Register(G::StoreError) | R::Cancel(C::StoreError) => o.u(3),
            R::Cancel(C::Accepted) => o.u(5),
            R::Cancel(C::NothingToCancel) => o.u(6),
        }
    }
}

/// The manager's effects in the shape of [`model_effects`].
pub fn manager_effects(register: bool, effects: &[mgr::Effect], buf: &mut Vec<u64>) {
    buf.clear();
    let mut o = Out(buf);
    for e in effects {
        match e {
            mgr::Effect::SendNli(n) => {
                o.u(1);
                o.u(n.to.into());
                o.u(n.bucket.into());
                o.list(n.replicas.iter().map(|x| u64::from(*x)));
                o.u(opt(n.leader.map(u64::from)));
                o.u(n.leader_epoch);
                o.u(set_mask(&n.isr));
                o.u(n.bucket_epoch);
                o.u(n.coordinator_epoch);
                o.u(opt(n.exec_key.map(|k| k.rid)));
                o.u(opt(n.exec_key.map(|k| u64::from(k.bucket))));
            }
            mgr::Effect::SendAdjustIsrResponse { to, bucket, result } => {
                o.u(2);
                o.u((*to).into());
                o.u((*bucket).into());
                match result {
                    Ok(l) => {
                        o.u(1);
                        manager_lai(&mut o, l);
                    }
                    Err(_) => o.u(0),
                }
            }
            _ => {}
        }
    }
    for e in effects {
        if let mgr::Effect::Enqueue(ev) = e {
            o.u(3);
            manager_event(&mut o, ev);
        }
    }
    for e in effects {
        if let mgr::Effect::Reply(r) = e {
            o.u(4);
            match r {
                mgr::Reply::Accepted(id) if register => {
                    o.u(1);
                    o.u(*id);
                }
                mgr::Reply::Rejected(mgr::RejectReason::InProgress) => o.u(2),
                mgr::Reply::StoreError => o.u(3),
                mgr::Reply::Accepted(_) => o.u(5),
                mgr::Reply::NothingToCancel => o.u(6),
                mgr::Reply::Rejected(_) => o.u(7),
            }
        }
    }
}
