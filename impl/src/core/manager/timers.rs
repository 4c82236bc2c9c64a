//! Timer-driven rules: R13 Timeout, R14 Reconcile, R15 finalize, R23 Tick.

use std::sync::Arc;

use super::context::at_origin;
use super::{plan_entry, Manager, StepResult};
use crate::core::effects::{Effect, Event};
use crate::core::types::{BucketStatus, Key, OverallStatus, PlanKind, RebalanceId, TaskNode};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// R13 Timeout(key): a running attempt becomes tracked and frees its slot.
    pub(crate) fn on_timeout(&mut self, key: Key) -> StepResult {
        self.queued_timeouts.remove(&key);
        let b = key.bucket;
        // INV-FENCE-TIMEOUT: only the running attempt with exactly this key.
        let running = self.status(b) == Some(BucketStatus::Rebalancing);
        if !running || self.attempts.get(&b).map(|a| a.key) != Some(key) {
            return Ok(());
        }
        let now = self.now_ms;
        let observed = self.ctx.observe(b);
        if let Some(a) = self.attempts.get_mut(&b) {
            a.last_progress_ms = now;
            a.observed = observed;
            a.blocked_since_ms = None;
            a.reconciles = 0;
            a.next_reconcile_ms = now;
        }
        self.set_status(b, BucketStatus::Timeout);
        if self.queued_reconciles.insert(key) {
            self.emit(Effect::Enqueue(Event::Reconcile(key)));
        }
        self.admit()
    }

    /// R14 Reconcile(key): progress accounting, give-up, backoff, then the action.
    pub(crate) fn on_reconcile(&mut self, key: Key) -> StepResult {
        self.queued_reconciles.remove(&key);
        let b = key.bucket;
        // INV-FENCE-RECONCILE: only the tracked attempt with exactly this key.
        let tracked = self.status(b) == Some(BucketStatus::Timeout);
        if !tracked || self.attempts.get(&b).map(|a| a.key) != Some(key) {
            return Ok(());
        }
        // R14.1: deleted buckets count as completed, before any give-up.
        if self.ctx.is_deleted(b) {
            return self.finish(b, BucketStatus::Completed);
        }
        let Some((plan, idx, kind)) = self.entry(b) else {
            return Ok(());
        };
        // R14.1b (finding F1): a bucket drained after a cancel that is back at origin (a
        // leader-only bucket whose new leader failed over) has no work left to finish; running
        // its election again would start new work after the cancel.
        if self.cancel_requested {
            let back_at_origin = self
                .ctx
                .buckets
                .get(&b)
                .is_some_and(|rec| at_origin(rec, plan_entry(&plan, idx), kind));
            if back_at_origin {
                return self.finish(b, BucketStatus::Canceled);
            }
        }
        let targets_live = self.ctx.targets_live(plan_entry(&plan, idx));
        let observed = self.ctx.observe(b);
        let now = self.now_ms;
        let config = self.config.clone();
        let Some(a) = self.attempts.get_mut(&b) else {
            return Ok(());
        };
        // R14.2: progress accounting.
        if observed != a.observed {
            a.observed = observed;
            a.last_progress_ms = now;
            a.blocked_since_ms = None;
            a.reconciles = 0;
        } else if targets_live {
            a.blocked_since_ms = None;
        } else if a.blocked_since_ms.is_none() {
            a.blocked_since_ms = Some(now);
        }
        // R14.3: give up (the bucket may keep its union, D5).
        let blocked_too_long = a
            .blocked_since_ms
            .is_some_and(|t| now.saturating_sub(t) > config.target_unavailable_timeout_ms);
        let no_progress_too_long =
            now.saturating_sub(a.last_progress_ms) > config.no_progress_timeout_ms;
        if blocked_too_long || no_progress_too_long {
            return self.finish(b, BucketStatus::Failed);
        }
        // R14.4: backoff.
        a.next_reconcile_ms = now.saturating_add(config.backoff_ms(a.reconciles));
        a.reconciles = a.reconciles.saturating_add(1);
        // R14.5: the action.
        match kind {
            PlanKind::LeaderOnly => self.lead(b),
            PlanKind::Move => self.resume(b),
            // Unreachable (a no-op bucket is never restored); finish it as R4.2 would.
            PlanKind::NoOp => self.finish(b, BucketStatus::Completed),
        }
    }

    /// R15 finalize(). A failed write is not an abort: `finalize_pending` stays for the retry of
    /// R23 and the step goes on.
    pub(crate) fn finalize(&mut self) {
        let Some(rid) = self.rid else { return };
        self.finalize_pending = true;
        let final_status = if self.cancel_requested {
            OverallStatus::Canceled
        } else if self.counts.failed + self.counts.canceled > 0 {
            OverallStatus::Failed
        } else {
            OverallStatus::Completed
        };
        let task = TaskNode {
            id: rid,
            status: final_status.task_status(),
            cancel_requested: self.cancel_requested,
            plan: Arc::clone(&self.plan),
        };
        match self.store.write_task(self.ce, &task) {
            Ok(()) => {
                self.overall = Some(final_status);
                self.finalize_pending = false;
                self.finalize_queued = false;
            }
            Err(e) => self.note_store_error(e), // overall stays REBALANCING (INV-FINAL-PERSISTED)
        }
    }

    /// R15's event `Finalize(id)`.
    pub(crate) fn on_finalize_event(&mut self, id: RebalanceId) -> StepResult {
        self.finalize_queued = false;
        if self.finalize_pending && self.rid == Some(id) {
            self.finalize();
        }
        Ok(())
    }

    /// R23 Tick: the checker, at the new `now_ms`. Visits only active attempts (running and
    /// tracked), never the whole plan.
    pub(crate) fn on_tick(&mut self) -> StepResult {
        let now = self.now_ms;
        // (1) running attempts older than task_timeout_ms, ascending bucket order.
        let mut timeouts = Vec::new();
        let mut reconciles = Vec::new();
        for (b, a) in &self.attempts {
            match self.plan_buckets.get(b).map(|s| s.status) {
                Some(BucketStatus::Rebalancing)
                    if now.saturating_sub(a.started_ms) > self.config.task_timeout_ms
                        && !self.queued_timeouts.contains(&a.key) =>
                {
                    timeouts.push(a.key)
                }
                Some(BucketStatus::Timeout)
                    if now >= a.next_reconcile_ms && !self.queued_reconciles.contains(&a.key) =>
                {
                    reconciles.push(a.key)
                }
                _ => {}
            }
        }
        for key in timeouts {
            self.queued_timeouts.insert(key);
            self.emit(Effect::Enqueue(Event::Timeout(key)));
        }
        // (2) tracked attempts due for reconcile, ascending bucket order.
        for key in reconciles {
            self.queued_reconciles.insert(key);
            self.emit(Effect::Enqueue(Event::Reconcile(key)));
        }
        // (3) R23.3: finalize retry.
        if let (true, false, Some(rid)) = (self.finalize_pending, self.finalize_queued, self.rid) {
            self.finalize_queued = true;
            self.emit(Effect::Enqueue(Event::Finalize(rid)));
        }
        // (4) R23.4: recovery retry (D6).
        if self.recovery_pending && !self.recovery_queued {
            self.recovery_queued = true;
            self.emit(Effect::Enqueue(Event::Recover));
        }
        // (5) R23.5: retry the liveness and deletion writes that failed.
        self.retry_liveness_writes();
        Ok(())
    }
}
