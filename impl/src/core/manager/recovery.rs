//! R16 Recover (R17, the restart itself, is `Manager::start`).

use std::sync::Arc;

use super::context::at_origin;
use super::{plan_entry, Manager, StepResult};
use crate::core::effects::{Effect, Event};
use crate::core::types::{Attempt, BucketStatus, Key, OverallStatus};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// R16 Recover: read the task; restore a final one without executing anything; for a
    /// non-final one classify every bucket first (D1), then finalize or admit.
    pub(crate) fn on_recover(&mut self) -> StepResult {
        self.recovery_queued = false;
        if !self.recovery_pending {
            return Ok(()); // only one recovery per incarnation; a duplicate event is stale
        }
        let task = match self.store.read_task() {
            Ok(task) => task,
            Err(e) => {
                // R8/D6: stay recovery_pending; R23 re-enqueues Recover.
                self.note_store_error(e);
                return Ok(());
            }
        };
        let Some(task) = task else {
            self.recovery_pending = false;
            return Ok(());
        };
        self.reset_rebalance();
        if let Some(overall) = task.status.final_overall() {
            // Final: every plan bucket gets that status, nothing executes.
            self.install_plan(Arc::clone(&task.plan), BucketStatus::from(overall));
            self.rid = Some(task.id);
            self.overall = Some(overall);
            self.cancel_requested = task.cancel_requested;
            self.recovery_pending = false;
            return Ok(());
        }
        let rid = task.id;
        let cancel = task.cancel_requested;
        let plan = Arc::clone(&task.plan);
        self.install_plan(Arc::clone(&plan), BucketStatus::NotStarted);
        self.rid = Some(rid);
        let now = self.now_ms;
        // Classify every bucket first, in plan order. Recovery never infers COMPLETED from the
        // store except for deleted buckets (D1): completion needs an ack of this incarnation.
        for (idx, (b, e)) in plan.buckets.iter().enumerate() {
            let b = *b;
            let Some(rec) = self.ctx.buckets.get(&b).filter(|_| !self.ctx.is_deleted(b)) else {
                self.set_status(b, BucketStatus::Completed);
                continue;
            };
            let kind = self.plan_buckets[&b].kind;
            debug_assert_eq!(plan_entry(&plan, idx), e);
            if at_origin(rec, e, kind) {
                if cancel {
                    self.set_status(b, BucketStatus::Canceled);
                } else {
                    self.pending.push_back(b); // stays NOT_STARTED
                }
            } else {
                // Mid-migration: restored as a tracked attempt, exempt from the cap.
                let key = Key { rid, bucket: b };
                let observed = self.ctx.observe(b);
                self.attempts.insert(
                    b,
                    Attempt {
                        key,
                        started_ms: now,
                        last_progress_ms: now,
                        observed,
                        blocked_since_ms: None,
                        reconciles: 0,
                        next_reconcile_ms: now,
                    },
                );
                self.set_status(b, BucketStatus::Timeout);
                self.restored += 1;
                self.queued_reconciles.insert(key);
                self.emit(Effect::Enqueue(Event::Reconcile(key)));
            }
        }
        self.overall = Some(OverallStatus::Rebalancing);
        self.cancel_requested = cancel;
        self.recovery_pending = false;
        // Only now: finalize or admit.
        if self.counts.in_progress() == 0 {
            self.finalize();
            Ok(())
        } else {
            self.admit()
        }
    }
}
