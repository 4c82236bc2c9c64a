//! Admission and execution: R3 admit, R4 execute, R5 lead, R6 finish, R7 resume, R9 Phase A,
//! R10 Phase B, R11 try_complete.

use super::context::at_target;
use super::{plan_entry, Manager, StepResult};
use crate::core::types::{Attempt, BucketId, BucketStatus, Key, PlanKind};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// R3 admit(): a loop, not recursion (D13). A `finish` inside `execute` calls `admit()`,
    /// which returns at once while this loop runs, so the loop continues instead.
    pub(crate) fn admit(&mut self) -> StepResult {
        if self.admitting {
            return Ok(());
        }
        self.admitting = true;
        let result = self.admit_loop();
        self.admitting = false;
        result
    }

    fn admit_loop(&mut self) -> StepResult {
        let Some(rid) = self.rid else { return Ok(()) };
        // |running| = #REBALANCING and |tracked| = #TIMEOUT (INV-STRUCTURE).
        while self.counts.rebalancing < self.config.max_inflight
            && self.counts.timeout < self.config.max_tracked_timed_out
        {
            let Some(b) = self.pending.pop_front() else {
                break;
            };
            if self.status(b) != Some(BucketStatus::NotStarted) {
                continue; // R3: skip it (lazy deletion of finished or canceled entries)
            }
            let now = self.now_ms;
            let observed = self.ctx.observe(b);
            self.attempts.insert(
                b,
                Attempt {
                    key: Key { rid, bucket: b },
                    started_ms: now,
                    last_progress_ms: now,
                    observed,
                    blocked_since_ms: None,
                    reconciles: 0,
                    next_reconcile_ms: now,
                },
            );
            self.set_status(b, BucketStatus::Rebalancing);
            self.execute(b)?;
        }
        Ok(())
    }

    /// R4 execute(b).
    fn execute(&mut self, b: BucketId) -> StepResult {
        let Some((_, _, kind)) = self.entry(b) else {
            return Ok(());
        };
        if self.ctx.is_deleted(b) {
            return self.finish(b, BucketStatus::Completed); // R4.1
        }
        match kind {
            PlanKind::NoOp => self.finish(b, BucketStatus::Completed), // R4.2
            PlanKind::LeaderOnly => self.lead(b),                      // R4.3
            PlanKind::Move => self.resume(b),                          // R4.4
        }
    }

    /// R5 lead(b): leader-only election (D3: resend when already elected or when the election
    /// keeps the current leader, never a useless write).
    pub(crate) fn lead(&mut self, b: BucketId) -> StepResult {
        let Some((plan, idx, _)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        if rec.lai.leader == Some(e.new_leader) {
            self.send_current(b);
            return Ok(());
        }
        let c = self.ctx.elect(rec, &e.trs);
        if c.is_none() {
            return Ok(()); // the task waits for reconcile
        }
        if c == rec.lai.leader {
            // No write (D3), but the current request again: a leader whose request was lost, or
            // whose proposal was refused after it adopted a newer view, waits for one (F22).
            self.send_current(b);
            return Ok(());
        }
        let (assignment, isr) = (rec.assignment.clone(), rec.lai.isr.clone());
        self.write_bucket(b, assignment, c, isr)?;
        self.send_current(b);
        Ok(())
    }

    /// R6 finish(b, st), `st` final. The pending entry, if any, is removed lazily (its status is
    /// no longer NOT_STARTED). Then finalize if nothing is in progress, else admit.
    pub(crate) fn finish(&mut self, b: BucketId, st: BucketStatus) -> StepResult {
        debug_assert!(st.is_final());
        if let Some(rid) = self.rid {
            let key = Key { rid, bucket: b };
            self.queued_timeouts.remove(&key);
            self.queued_reconciles.remove(&key);
        }
        self.attempts.remove(&b);
        self.set_status(b, st);
        if self.counts.in_progress() == 0 {
            self.finalize();
            Ok(())
        } else {
            self.admit()
        }
    }

    /// R7 resume(b): the move decision table, first match.
    pub(crate) fn resume(&mut self, b: BucketId) -> StepResult {
        let Some((plan, idx, _)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        if self.ctx.final_state(b, rec, e) {
            // R7.1: completion waits for the leader's ack (R12).
            self.send_current(b);
            Ok(())
        } else if at_target(rec, e) {
            // R7.2
            if self.ctx.caught_up(rec, e) {
                self.shrink_at_target(b)
            } else {
                self.send_current(b);
                Ok(())
            }
        } else if self.ctx.caught_up(rec, e) {
            self.phase_b(b) // R7.3
        } else if e.is_rs(&rec.assignment) {
            // R7.4: retry Phase A: resend, no write, no epoch bump (F6).
            self.send_current(b);
            Ok(())
        } else {
            self.phase_a(b) // R7.5
        }
    }

    /// R7.2's shrink_at_target(b): leader kept if in `trs` and live, else elected over `trs`;
    /// ISR restricted to `trs`.
    pub(crate) fn shrink_at_target(&mut self, b: BucketId) -> StepResult {
        self.write_target(b)
    }

    /// R9 Phase A: the assignment grows to the union; leader and ISR unchanged.
    fn phase_a(&mut self, b: BucketId) -> StepResult {
        let Some((plan, idx, _)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        let (leader, isr) = (rec.lai.leader, rec.lai.isr.clone());
        self.write_bucket(b, e.rs(), leader, isr)?;
        self.send_current(b);
        Ok(())
    }

    /// R10 Phase B (caught up, not at target). Does not finish: completion needs R12's ack.
    pub(crate) fn phase_b(&mut self, b: BucketId) -> StepResult {
        self.write_target(b)
    }

    /// The write shared by R7.2 and R10: `write_bucket(b, trs, lai with leader l, isr ∩ trs)`
    /// where `l = lai.leader` if it is in `trs` and live, else `elect(b, trs)`; then send.
    fn write_target(&mut self, b: BucketId) -> StepResult {
        let Some((plan, idx, _)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        let leader = match rec.lai.leader {
            Some(l) if e.trs.contains(&l) && self.ctx.live.contains(&l) => Some(l),
            _ => self.ctx.elect(rec, &e.trs),
        };
        let isr = rec
            .lai
            .isr
            .iter()
            .copied()
            .filter(|s| e.trs.contains(s))
            .collect();
        self.write_bucket(b, e.trs.clone(), leader, isr)?;
        self.send_current(b);
        Ok(())
    }

    /// R11 try_complete(b), for a move after an ISR change or a current non-final ack.
    pub(crate) fn try_complete(&mut self, b: BucketId) -> StepResult {
        // A deleted bucket is left to R14.1 (it completes at its next reconcile). Without this,
        // `final_state` (false when deleted) would make shrink_at_target resend forever on every
        // ack without changing anything (spec R11; spec/findings.md C1; NOTES.md, reading 2).
        if self.ctx.is_deleted(b) {
            return Ok(());
        }
        let Some((plan, idx, _)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        let target = at_target(rec, e);
        let caught_up = self.ctx.caught_up(rec, e);
        if target && caught_up {
            if self.ctx.final_state(b, rec, e) {
                Ok(())
            } else {
                self.shrink_at_target(b)
            }
        } else if caught_up {
            self.phase_b(b)
        } else {
            // At target but not caught up: no resend loop while a target is down.
            Ok(())
        }
    }
}
