//! Timer-driven rules: R13 (Timeout), R14 (Reconcile), R15 (finalize and its event), R23 (Tick;
//! its retries of R23.5 are in `liveness.rs`).

use super::{Flow, Rule, Step};
use crate::state::types::{BucketStatus, Key, OverallStatus, PlanKind, RebalanceId, TaskStatus};
use crate::state::Event;
use crate::step::action::GiveUp;
use crate::verdict::bug::Bug;

/// The first `n` with `backoff(n)` at `max_reconcile_backoff` (at most 8, where the doubling
/// stops): every later count schedules the same backoff.
fn backoff_cap_reached_at(config: &crate::config::Config) -> u8 {
    let cap = u32::from(config.max_reconcile_backoff_ticks);
    (0..8u8).find(|n| (1u32 << n) >= cap).unwrap_or(8)
}

impl Step<'_> {
    /// R13 Timeout(key).
    pub fn on_timeout(&mut self, key: Key) -> Flow {
        self.fired(Rule::R13);
        self.s.coordinator.queued_timeouts.retain(|k| *k != key);
        let b = key.bucket;
        // INV-FENCE-TIMEOUT: only the running attempt with exactly this key.
        if !(self.s.coordinator.is_running(b) && self.key_of(b) == Some(key)) {
            return Ok(());
        }
        if self.bug(Bug::TimeoutCompletes) {
            // H1: the timed-out bucket is finished with a final status and forgotten.
            return self.finish(b, BucketStatus::TimeoutFinal);
        }
        let observed = self.observe(b);
        let a = self.s.coordinator.attempt_mut(b).expect("running attempt");
        a.since_progress = 0;
        a.observed = observed;
        a.blocked_for = None;
        a.reconciles = 0;
        a.reconcile_in = 0;
        self.s.coordinator.set_status(b, BucketStatus::Timeout);
        self.enqueue_reconcile(key);
        self.admit()
    }

    /// `backoff(n)` in ticks (spec 4; one tick is `check_interval_ms`).
    fn backoff(&self, n: u8) -> u16 {
        let base = 1u32 << n.min(8);
        base.min(u32::from(self.config.max_reconcile_backoff_ticks)) as u16
    }

    /// R14 Reconcile(key).
    pub fn on_reconcile(&mut self, key: Key) -> Flow {
        self.fired(Rule::R14);
        self.s.coordinator.queued_reconciles.retain(|k| *k != key);
        let b = key.bucket;
        // INV-FENCE-RECONCILE: only the tracked attempt with exactly this key.
        if !(self.s.coordinator.is_tracked(b) && self.key_of(b) == Some(key)) {
            return Ok(());
        }
        // R14.1: deleted buckets count as completed, before any give-up.
        if self.deleted(b) {
            self.fired(Rule::R14_1);
            return self.finish(b, BucketStatus::Completed);
        }
        // R14.1b (finding F1): after a cancel, a drained bucket that is back at origin is
        // canceled rather than moved again.
        if self.s.coordinator.cancel_requested && self.at_origin(b) {
            self.fired(Rule::R14_1b);
            return self.finish(b, BucketStatus::Canceled);
        }
        // H7 (`endless-reconcile`, `[v1]`): no give-up and no backoff, so an attempt whose
        // target never comes back is reconciled on every tick, forever.
        let endless = self.bug(Bug::EndlessReconcile);
        // R14.2: progress accounting.
        let observed = self.observe(b);
        let targets_live = self.entry(b).trs_set().is_subset(self.s.coordinator.live);
        let a = self.s.coordinator.attempt_mut(b).expect("tracked attempt");
        let progressed = observed != a.observed;
        if progressed {
            a.observed = observed;
            a.since_progress = 0;
            a.blocked_for = None;
            a.reconciles = 0;
        } else if targets_live {
            a.blocked_for = None;
        } else if a.blocked_for.is_none() {
            a.blocked_for = Some(0);
        }
        // R14.3: give up (the bucket may keep its union, D5).
        let give_up = GiveUp {
            target_unavailable: a
                .blocked_for
                .is_some_and(|t| t > self.config.target_unavailable_timeout_ticks),
            no_progress: a.since_progress > self.config.no_progress_timeout_ticks,
        };
        // The progress check (spec 7.3, `no_give_up`) never gives up: a bucket that cannot
        // finish then stays tracked, which LIVE-PROGRESS and LIVE-TRACKED-FINISHES see.
        let gives_up = !endless && !self.config.no_give_up;
        if (give_up.target_unavailable || give_up.no_progress) && gives_up {
            self.fired(Rule::R14_3);
            self.out.gave_up = Some(give_up);
            return self.finish(b, BucketStatus::Failed);
        }
        if progressed {
            self.fired(Rule::R14_2);
        }
        // R14.4: schedule the next reconcile (under H7 the next tick, and nothing counted).
        self.fired(Rule::R14_4);
        let a = self.s.coordinator.attempt_mut(b).expect("tracked attempt");
        let n = a.reconciles;
        let next = if endless { 1 } else { self.backoff(n) };
        let a = self.s.coordinator.attempt_mut(b).expect("tracked attempt");
        a.reconcile_in = next;
        if !endless {
            a.reconciles = n.saturating_add(1);
            if self.config.no_give_up {
                // Without the give-up nothing bounds the count; past the first backoff at the
                // cap it changes nothing R14.4 computes (kept at 2 or more for
                // SOME-BACKOFF-AT-CAP).
                a.reconciles = a.reconciles.min(backoff_cap_reached_at(self.config).max(2));
            }
        }
        // R14.5: the action.
        self.fired(Rule::R14_5);
        if self.config.is_abstract(b) {
            // An abstract bucket's action: at most its one write (spec 9), as in R4.
            return self.store_op();
        }
        match self.entry(b).kind() {
            PlanKind::LeaderOnly if self.bug(Bug::ReelectOnReconcile) => self.reelect(b),
            PlanKind::LeaderOnly => self.lead(b),
            _ => self.resume(b),
        }
    }

    /// R15 `finalize()`.
    pub fn finalize(&mut self) -> Flow {
        self.fired(Rule::R15);
        let c = &mut self.s.coordinator;
        c.finalize_pending = true;
        let final_status = if c.cancel_requested {
            TaskStatus::Canceled
        } else if c
            .status
            .iter()
            .any(|(_, s)| matches!(s, BucketStatus::Failed | BucketStatus::Canceled))
        {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        let write = self.store_op().and_then(|()| self.fence(true));
        if write.is_err() && !self.bug(Bug::FinalNotPersisted) {
            // R8: overall stays REBALANCING; R23 retries while finalize_pending.
            return write;
        }
        let c = &mut self.s.coordinator;
        if write.is_ok() {
            self.s.store.task = Some(crate::state::TaskNode {
                id: c.rid.expect("finalize needs a rebalance"),
                status: final_status,
                cancel_requested: c.cancel_requested,
                plan: c.plan.clone(),
            });
        }
        c.overall = Some(OverallStatus::of_task(final_status));
        c.finalize_pending = false;
        c.finalize_queued = false;
        write
    }

    /// R15's event `Finalize(id)`.
    pub fn on_finalize_event(&mut self, rid: RebalanceId) -> Flow {
        let c = &mut self.s.coordinator;
        c.finalize_queued = false;
        if c.finalize_pending && c.rid == Some(rid) {
            self.finalize()?;
            self.s.ghost.last.finalize_retried = true;
        }
        Ok(())
    }

    /// R23 Tick: ages advance (spec 9), then the checker in ascending bucket order.
    pub fn tick(&mut self) {
        self.fired(Rule::R23);
        let cfg = self.config;
        let c = &mut self.s.coordinator;
        let statuses = &c.status;
        for (b, a) in c.attempts.iter_mut() {
            let st = statuses.iter().find(|(x, _)| x == b).map(|(_, s)| *s);
            if st == Some(BucketStatus::Rebalancing) {
                a.age = (a.age + 1).min(cfg.task_timeout_ticks + 1);
            } else {
                // R14.3 alone reads these two ages; the progress check has no R14.3.
                if !cfg.no_give_up {
                    a.since_progress =
                        (a.since_progress + 1).min(cfg.no_progress_timeout_ticks + 1);
                    a.blocked_for = a
                        .blocked_for
                        .map(|t| (t + 1).min(cfg.target_unavailable_timeout_ticks + 1));
                }
                a.reconcile_in = a.reconcile_in.saturating_sub(1);
            }
        }
        let attempts = self.s.coordinator.attempts.clone();
        // R23.1: running attempts past the task timeout.
        for (b, a) in &attempts {
            if self.s.coordinator.is_running(*b)
                && a.age > cfg.task_timeout_ticks
                && !self.s.coordinator.queued_timeouts.contains(&a.key)
            {
                let q = &mut self.s.coordinator.queued_timeouts;
                let pos = q.partition_point(|k| *k < a.key);
                q.insert(pos, a.key);
                self.fired(Rule::R23_1);
                self.enqueue(Event::Timeout { key: a.key });
            }
        }
        // R23.2: tracked attempts whose reconcile is due.
        for (b, a) in &attempts {
            if self.s.coordinator.is_tracked(*b)
                && a.reconcile_in == 0
                && !self.s.coordinator.queued_reconciles.contains(&a.key)
            {
                self.fired(Rule::R23_2);
                self.enqueue_reconcile(a.key);
            }
        }
        // R23.3: finalize retry.
        let c = &mut self.s.coordinator;
        if c.finalize_pending && !c.finalize_queued {
            if let Some(rid) = c.rid {
                c.finalize_queued = true;
                self.fired(Rule::R23_3);
                self.enqueue(Event::Finalize { rid });
            }
        }
        // R23.4: recovery retry (none under `startup-read-blocks`).
        let retry = !self.bug(Bug::StartupReadBlocks);
        let c = &mut self.s.coordinator;
        if retry && c.recovery_pending && !c.recovery_queued {
            c.recovery_queued = true;
            self.fired(Rule::R23_4);
            self.enqueue(Event::Recover);
        }
        // R23.5: failed liveness and deletion writes.
        self.retry_liveness_writes();
    }
}
