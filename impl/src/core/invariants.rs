//! The structural invariants of spec 7.1 that one state shows. History (ghost) invariants are
//! checked by the model and the conformance harness, not here.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::manager::context::at_origin_assignment;
use crate::core::manager::{plan_entry, Manager};
use crate::core::progress::StatusCounts;
use crate::core::types::{BucketId, BucketStatus, Key, OverallStatus, ServerId};
use crate::store::Store;

/// A violated invariant: its spec name and what was seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {detail}")]
pub struct InvariantViolation {
    /// The spec's name, e.g. `INV-STRUCTURE`.
    pub name: &'static str,
    /// What was seen.
    pub detail: String,
}

fn fail(name: &'static str, detail: String) -> Result<(), InvariantViolation> {
    Err(InvariantViolation { name, detail })
}

impl<S: Store> Manager<S> {
    /// Checks INV-STRUCTURE, INV-SLOT, INV-TRACKED-BOUND (state part), INV-ONE-ATTEMPT,
    /// INV-PENDING-AT-ORIGIN, INV-CANCEL-PERSISTED-FIRST (state part), INV-FINAL-PERSISTED,
    /// INV-CONTEXT-COHERENT, INV-COMPLETED-AT-TARGET and INV-STATUS-PROMISE (all but its
    /// CANCELED clause). O(plan + cluster): run after every input in debug builds and tests. The
    /// store parts need [`Store::inspect`].
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.check_structure()?;
        self.check_replica_index()?;
        self.check_bounds()?;
        self.check_pending_at_origin()?;
        self.check_store_parts()?;
        self.check_completed_at_target()?;
        self.check_status_promise()
    }

    /// INV-STATUS-PROMISE (spec 7.1, 7.4): a COMPLETED bucket is deleted or assigned its target
    /// set; an overall FAILED means no cancel and some bucket FAILED, an overall CANCELED a
    /// cancel. Its CANCELED-at-origin clause is left to the model: the spec exempts a status R16
    /// copied from a final task (finding F24), and the manager keeps no record of which were.
    fn check_status_promise(&self) -> Result<(), InvariantViolation> {
        const N: &str = "INV-STATUS-PROMISE";
        match self.overall {
            Some(OverallStatus::Failed) if self.cancel_requested || self.counts.failed == 0 => {
                return fail(
                    N,
                    "FAILED overall without a failed bucket, or with a cancel".into(),
                );
            }
            Some(OverallStatus::Canceled) if !self.cancel_requested => {
                return fail(N, "CANCELED overall without a cancel".into());
            }
            _ => {}
        }
        for (b, pb) in self.plan_buckets.iter() {
            if pb.status != BucketStatus::Completed || self.ctx.is_deleted(b) {
                continue;
            }
            let e = plan_entry(&self.plan, pb.index);
            let assigned: BTreeSet<_> = self.ctx.buckets[&b].assignment.iter().copied().collect();
            if assigned != e.trs_set() {
                return fail(
                    N,
                    format!(
                        "COMPLETED bucket {b} assigned {assigned:?}, target {:?}",
                        e.trs
                    ),
                );
            }
        }
        Ok(())
    }

    /// The part of INV-CONTEXT-COHERENT the store cannot show: the index of the buckets each
    /// server hosts (what R19 and R20 read instead of scanning the cluster) is exactly the
    /// inverse of the cached assignments. A stale entry would go unnoticed wherever R19/R20
    /// filter by membership, so it is checked here rather than trusted.
    fn check_replica_index(&self) -> Result<(), InvariantViolation> {
        let mut inverse: BTreeMap<ServerId, BTreeSet<BucketId>> = BTreeMap::new();
        for (b, rec) in self.ctx.buckets.iter() {
            for s in &rec.assignment {
                inverse.entry(*s).or_default().insert(b);
            }
        }
        if inverse != self.ctx.replicas_of {
            let server = inverse
                .keys()
                .chain(self.ctx.replicas_of.keys())
                .find(|s| inverse.get(s) != self.ctx.replicas_of.get(s));
            return fail(
                "INV-CONTEXT-COHERENT",
                format!("replica index differs from the assignments at server {server:?}"),
            );
        }
        Ok(())
    }

    fn check_structure(&self) -> Result<(), InvariantViolation> {
        const N: &str = "INV-STRUCTURE";
        let mut recount = StatusCounts::default();
        for (b, pb) in self.plan_buckets.iter() {
            recount.adjust_by(pb.status, 1);
            let active = self.attempts.contains_key(&b);
            let should = matches!(pb.status, BucketStatus::Rebalancing | BucketStatus::Timeout);
            if active != should {
                return fail(
                    N,
                    format!("bucket {b} is {:?} but has attempt = {active}", pb.status),
                );
            }
        }
        if recount != self.counts {
            return fail(
                N,
                format!("status counters {:?} != recount {:?}", self.counts, recount),
            );
        }
        if let Some(b) = self
            .attempts
            .keys()
            .find(|b| !self.plan_buckets.contains_key(b))
        {
            return fail(N, format!("attempt for bucket {b} outside the plan"));
        }
        // pending (the NOT_STARTED entries of the lazy queue) holds each NOT_STARTED bucket once.
        let mut seen = BTreeSet::new();
        for b in &self.pending {
            if self.status(*b) == Some(BucketStatus::NotStarted) && !seen.insert(*b) {
                return fail(N, format!("bucket {b} twice in pending"));
            }
        }
        if seen.len() != self.counts.not_started {
            return fail(
                N,
                format!(
                    "{} NOT_STARTED buckets but {} in pending",
                    self.counts.not_started,
                    seen.len()
                ),
            );
        }
        let in_progress = self.counts.in_progress() > 0;
        match self.overall {
            Some(o) if o.is_final() && (in_progress || self.finalize_pending) => {
                return fail(
                    N,
                    format!("overall {o:?} with work in progress or finalize pending"),
                );
            }
            _ => {}
        }
        let rebalancing = self.overall == Some(OverallStatus::Rebalancing);
        if rebalancing != (self.rid.is_some() && (in_progress || self.finalize_pending)) {
            return fail(
                N,
                format!(
                    "overall {:?} but rid {:?}, in progress {in_progress}, finalize_pending {}",
                    self.overall, self.rid, self.finalize_pending
                ),
            );
        }
        if self.recovery_pending && (self.rid.is_some() || !self.attempts.is_empty()) {
            return fail(N, "recovery pending with a current rebalance".into());
        }
        Ok(())
    }

    fn check_bounds(&self) -> Result<(), InvariantViolation> {
        if self.counts.rebalancing > self.config.max_inflight {
            return fail(
                "INV-SLOT",
                format!(
                    "{} running > max_inflight {}",
                    self.counts.rebalancing, self.config.max_inflight
                ),
            );
        }
        // INV-TRACKED-BOUND for several slots, as spec 7.1 states it (D14; NOTES.md, reading 16):
        // admission needs |tracked| < M and adds one running attempt, a timeout moves one from
        // running to tracked, so |running| + |tracked| <= max(M - 1 + max_inflight, restored).
        // With max_inflight = 1 this is the spec's |tracked| <= max(M, restored), strengthened.
        let (m, slots) = (self.config.max_tracked_timed_out, self.config.max_inflight);
        let bound = (m + slots).saturating_sub(1).max(self.restored);
        let active = self.counts.timeout + self.counts.rebalancing;
        if active > bound || (slots <= 1 && self.counts.timeout > m.max(self.restored)) {
            return fail(
                "INV-TRACKED-BOUND",
                format!(
                    "{} tracked + {} running > max(M - 1 + max_inflight, restored) = {bound}",
                    self.counts.timeout, self.counts.rebalancing
                ),
            );
        }
        for (b, a) in &self.attempts {
            if Some(a.key) != self.rid.map(|rid| Key { rid, bucket: *b }) {
                return fail(
                    "INV-ONE-ATTEMPT",
                    format!("bucket {b} has attempt key {:?}, rid {:?}", a.key, self.rid),
                );
            }
        }
        Ok(())
    }

    fn check_pending_at_origin(&self) -> Result<(), InvariantViolation> {
        for (b, pb) in self.plan_buckets.iter() {
            if pb.status != BucketStatus::NotStarted {
                continue;
            }
            let e = plan_entry(&self.plan, pb.index);
            match self.ctx.buckets.get(&b) {
                Some(rec) if at_origin_assignment(rec, e) => {}
                rec => {
                    return fail(
                        "INV-PENDING-AT-ORIGIN",
                        format!(
                            "NOT_STARTED bucket {b} assigned {:?}, origin {:?}",
                            rec.map(|r| &r.assignment),
                            e.ors
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    fn check_store_parts(&self) -> Result<(), InvariantViolation> {
        let Some(stored) = self.store.inspect() else {
            return Ok(());
        };
        if stored.coordinator_epoch > self.ce {
            // Deposed (D7): a newer incarnation owns the store, and every write of ours is
            // fenced. The store parts hold for the current incarnation only.
            return Ok(());
        }
        if self.cancel_requested {
            match &stored.task {
                Some(t) if Some(t.id) == self.rid && t.cancel_requested => {}
                t => {
                    return fail(
                        "INV-CANCEL-PERSISTED-FIRST",
                        format!(
                            "cancel_requested but stored task is {:?}",
                            t.as_ref().map(|t| (t.id, t.cancel_requested))
                        ),
                    )
                }
            }
        }
        if let Some(o) = self.overall.filter(|o| o.is_final()) {
            match &stored.task {
                Some(t) if Some(t.id) == self.rid && t.status == o.task_status() => {}
                t => {
                    return fail(
                        "INV-FINAL-PERSISTED",
                        format!(
                            "overall {o:?} but stored task is {:?}",
                            t.as_ref().map(|t| (t.id, t.status))
                        ),
                    )
                }
            }
        }
        if stored.coordinator_epoch < self.ce {
            return fail(
                "INV-CONTEXT-COHERENT",
                format!("store epoch {} < ce {}", stored.coordinator_epoch, self.ce),
            );
        }
        if !self.ctx.buckets.same_as(&stored.cluster.buckets) {
            let b = stored
                .cluster
                .buckets
                .iter()
                .find(|(b, r)| self.ctx.buckets.get(b) != Some(r))
                .map(|(b, _)| *b)
                .or_else(|| {
                    self.ctx
                        .buckets
                        .keys()
                        .find(|b| !stored.cluster.buckets.contains_key(b))
                });
            return fail(
                "INV-CONTEXT-COHERENT",
                format!("cache and store differ at bucket {b:?}"),
            );
        }
        if stored.cluster.deleted != self.ctx.deleted {
            return fail("INV-CONTEXT-COHERENT", "deleted markers differ".into());
        }
        Ok(())
    }

    fn check_completed_at_target(&self) -> Result<(), InvariantViolation> {
        if self.overall != Some(OverallStatus::Completed) {
            return Ok(());
        }
        // Each COMPLETED bucket's assignment is INV-STATUS-PROMISE's, checked for every bucket
        // whatever the overall status (`check_status_promise`).
        for (b, pb) in self.plan_buckets.iter() {
            if pb.status != BucketStatus::Completed {
                return fail(
                    "INV-COMPLETED-AT-TARGET",
                    format!("bucket {b} is {:?}", pb.status),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::core::types::{BucketStatus, LeaderAndIsr, OverallStatus, Plan, PlanEntry};
    use crate::{BucketRecord, Config, Effect, Event, Input, Manager, MemStore};

    /// A manager that has registered one move [0, 1, 2] -> [1, 2, 3] and holds the promise.
    fn registered() -> Manager<MemStore> {
        let mut store = MemStore::new();
        store.put_bucket(
            0,
            BucketRecord {
                assignment: vec![0, 1, 2],
                lai: LeaderAndIsr {
                    leader: Some(0),
                    leader_epoch: 0,
                    isr: BTreeSet::from([0, 1, 2]),
                    bucket_epoch: 0,
                    coordinator_epoch: 0,
                },
            },
        );
        let live = BTreeSet::from([0, 1, 2, 3]);
        let (mut m, effects) = Manager::start(Config::default(), store, live, 0).unwrap();
        assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
        m.handle(0, Input::Event(Event::Recover));
        let entry = PlanEntry::new(vec![0, 1, 2], vec![1, 2, 3], Some(0)).unwrap();
        m.handle(
            0,
            Input::Register {
                plan: Plan::new(vec![(0, entry)]),
            },
        );
        assert!(m.check_status_promise().is_ok());
        m
    }

    #[test]
    fn a_completed_bucket_off_its_target_breaks_the_status_promise() {
        let mut m = registered();
        m.set_status(0, BucketStatus::Completed);
        let v = m.check_status_promise().unwrap_err();
        assert_eq!(v.name, "INV-STATUS-PROMISE");
    }

    #[test]
    fn an_overall_status_that_misstates_the_cancel_breaks_the_status_promise() {
        let mut m = registered();
        m.overall = Some(OverallStatus::Canceled);
        assert!(
            m.check_status_promise().is_err(),
            "CANCELED without a cancel"
        );
        m.cancel_requested = true;
        m.overall = Some(OverallStatus::Failed);
        assert!(m.check_status_promise().is_err(), "FAILED with a cancel");
    }
}
