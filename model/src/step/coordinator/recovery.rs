//! Coordinator crash and recovery: R16 (Recover), R17 (coordinator crash and restart).

use super::{Flow, Rule, Step};
use crate::state::inline::InlineVec;
use crate::state::types::{BucketId, BucketStatus, Key, OverallStatus, ServerSet, MAX_BUCKETS};
use crate::state::{Attempt, Coordinator, Event};
use crate::verdict::bug::Bug;

impl Step<'_> {
    /// R17: every volatile field is lost (R23.5's retry sets too); the new incarnation bumps
    /// the coordinator epoch (assumed to succeed), reloads the cache and enqueues Recover.
    pub fn crash_coordinator(&mut self) {
        self.fired(Rule::R17);
        self.s.store.coordinator_epoch += 1;
        let ce = self.s.store.coordinator_epoch;
        let live = self.s.live();
        let cache = self.s.store.buckets.clone();
        let old = std::mem::replace(&mut self.s.coordinator, Coordinator::fresh(ce, live, cache));
        // Zombie coordinator (spec 9): the deposed incarnation is kept only while it has steps
        // left to take; otherwise it is fail-stop, as R17 says.
        self.s.zombie = (self.s.budgets.zombie_steps > 0).then(|| Box::new(old));
        self.s.coordinator.recovery_pending = true;
        self.s.coordinator.recovery_queued = true;
        // The retry sets were lost with the old incarnation; the repairs they held are read
        // back from the store and the live servers (F23), the deletions are not (F14).
        if !self.bug(Bug::RepairsLostOnRestart) {
            self.rederive_liveness_repairs();
        }
        self.enqueue(Event::Recover);
    }

    /// R16 Recover.
    pub fn on_recover(&mut self) -> Flow {
        self.fired(Rule::R16);
        self.s.coordinator.recovery_queued = false;
        // The read may fail: recovery stays pending and R23 re-enqueues it (D6).
        if let Err(abort) = self.store_op() {
            if self.bug(Bug::StartupReadSkips) {
                // [late]: recovery is given up and new rebalances are allowed.
                self.s.coordinator.recovery_pending = false;
            }
            return Err(abort);
        }
        let Some(task) = self.s.store.task.clone() else {
            self.s.coordinator.recovery_pending = false;
            return Ok(());
        };
        if self.config.remote_plan {
            // The design's second read: the plan object the task node references.
            self.read_plan_object(&task)?;
        }
        let c = &mut self.s.coordinator;
        c.rid = Some(task.id);
        c.plan = task.plan.clone();
        c.cancel_requested = task.cancel_requested;
        self.s.ghost.restored = ServerSet::EMPTY;
        self.s.ghost.final_recovered = false;
        if task.status.is_final() {
            let st = BucketStatus::from_final_task(task.status);
            let c = &mut self.s.coordinator;
            c.overall = Some(OverallStatus::of_task(task.status));
            c.status = task.plan.iter().map(|e| (e.bucket, st)).collect();
            c.recovery_pending = false;
            self.s.ghost.final_recovered = true;
            return Ok(());
        }
        // Classify every bucket first, in plan order (the [final*] fix of H13, spec section 12).
        // Under `hash-order-recovery` in reverse plan order: another order than R1's, as a
        // hash map's iteration order can be.
        self.s.coordinator.status.clear();
        let mut order = task.plan;
        if self.bug(Bug::HashOrderRecovery) {
            order.reverse();
        }
        let mut restored_running = InlineVec::<BucketId, MAX_BUCKETS>::new();
        for e in &order {
            let b = e.bucket;
            let late = self.bug(Bug::RecoveryOrder);
            if self.deleted(b) && !late {
                self.s.coordinator.set_status(b, BucketStatus::Completed);
            } else if late || self.at_origin(b) || self.bug(Bug::CancelAfterRestart) {
                if task.cancel_requested && self.at_origin(b) {
                    self.s.coordinator.set_status(b, BucketStatus::Canceled);
                    self.mark_canceled(b);
                } else {
                    self.s.coordinator.set_status(b, BucketStatus::NotStarted);
                    self.s.coordinator.pending.push(b);
                }
            } else {
                self.restore_tracked(b, task.id);
                if self.bug(Bug::RecoveredShowsRebalancing) {
                    restored_running.push(b);
                }
            }
        }
        let c = &mut self.s.coordinator;
        c.overall = Some(OverallStatus::Rebalancing);
        c.recovery_pending = false;
        // `recovered-shows-rebalancing`: each restored bucket runs in a normal slot, executed
        // as at admission, instead of D1's tracked TIMEOUT with an immediate reconcile.
        for &b in restored_running.iter() {
            let key = self.key_of(b).expect("restored attempt");
            self.s.coordinator.queued_reconciles.retain(|k| *k != key);
            self.s
                .coordinator
                .events
                .retain(|e| *e != Event::Reconcile { key });
            self.out.enqueued.retain(|e| *e != Event::Reconcile { key });
            self.s.coordinator.set_status(b, BucketStatus::Rebalancing);
        }
        for &b in restored_running.iter() {
            if self.key_of(b).is_some() {
                self.execute(b)?;
            }
        }
        if self.s.coordinator.any_in_progress() {
            self.admit()
        } else {
            self.finalize()
        }
    }

    /// R16: a mid-migration bucket becomes a tracked attempt with an immediate reconcile,
    /// exempt from `max_tracked_timed_out` (D1).
    fn restore_tracked(&mut self, b: BucketId, rid: u8) {
        let key = Key { rid, bucket: b };
        let observed = self.observe(b);
        self.s.coordinator.insert_attempt(
            b,
            Attempt {
                key,
                age: 0,
                since_progress: 0,
                observed,
                blocked_for: None,
                reconciles: 0,
                reconcile_in: 0,
            },
        );
        self.s.coordinator.set_status(b, BucketStatus::Timeout);
        self.s.ghost.restored.insert(b);
        self.enqueue_reconcile(key);
    }
}
