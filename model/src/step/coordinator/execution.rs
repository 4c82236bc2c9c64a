//! Admission and execution: R3-R11, and R6 `finish`.

use super::{Flow, Rule, Step};
use crate::state::types::{BucketId, BucketStatus, Key, PlanKind, ServerId};
use crate::state::Attempt;
use crate::verdict::bug::Bug;

impl Step<'_> {
    /// R3 `admit()`. A loop; `finish` inside `execute` calls `admit()` again, which re-checks
    /// the same guard, so nesting is equivalent to continuing this loop (D13).
    pub fn admit(&mut self) -> Flow {
        loop {
            let c = &self.s.coordinator;
            let cap_ok = c.tracked_count() < self.config.max_tracked_timed_out as usize
                || self.bug(Bug::UnboundedTracked);
            if c.running_count() >= self.config.max_inflight as usize
                || !cap_ok
                || c.pending.is_empty()
            {
                return Ok(());
            }
            let b = self.s.coordinator.pending.remove(0);
            if self.s.coordinator.status_of(b) != Some(BucketStatus::NotStarted) {
                continue;
            }
            self.fired(Rule::R3);
            let rid = self.s.coordinator.rid.expect("admission needs a rebalance");
            let observed = self.observe(b);
            self.s.coordinator.insert_attempt(
                b,
                Attempt {
                    key: Key { rid, bucket: b },
                    age: 0,
                    since_progress: 0,
                    observed,
                    blocked_for: None,
                    reconciles: 0,
                    reconcile_in: 0,
                },
            );
            self.s.coordinator.set_status(b, BucketStatus::Rebalancing);
            self.execute(b)?;
        }
    }

    /// R4 `execute(b)`.
    pub fn execute(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R4);
        if self.deleted(b) {
            self.fired(Rule::R4_1);
            return self.finish(b, BucketStatus::Completed);
        }
        match self.entry(b).kind() {
            PlanKind::NoOp => {
                self.fired(Rule::R4_2);
                self.finish(b, BucketStatus::Completed)
            }
            // An abstract bucket's election or Phase A (spec 9): at most its one write, which
            // may fail and abort the step as R8 says; where its metadata goes is a Rest step.
            _ if self.config.is_abstract(b) => self.store_op(),
            PlanKind::LeaderOnly => {
                self.fired(Rule::R4_3);
                self.lead(b)
            }
            PlanKind::Move => {
                self.fired(Rule::R4_4);
                self.resume(b)
            }
        }
    }

    /// R5 `lead(b)`: leader-only election (D3).
    pub fn lead(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R5);
        let e = self.entry(b);
        let lai = self.lai(b);
        if lai.leader == Some(e.new_leader) {
            self.send_current(b);
            return Ok(());
        }
        let Some(c) = self.elect(b, &e.trs) else {
            return Ok(());
        };
        if Some(c) == lai.leader {
            // The election keeps the current leader: no write (D3), but the current request
            // again, so a leader whose request was lost or whose proposal was refused after it
            // adopted a newer view hears from the coordinator (finding F22).
            if !self.bug(Bug::NoResendOnKeptLeader) {
                self.send_current(b);
            }
            return Ok(());
        }
        let assignment = *self.assignment(b);
        self.write_bucket(b, assignment, Some(c), lai.isr)?;
        self.send_current(b);
        Ok(())
    }

    /// Fluss's leader-only reconcile (switch `reelect-on-reconcile`, H23): the election over
    /// `trs` runs and its result is written, epochs bumped, whoever it elects.
    pub fn reelect(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R5);
        let e = self.entry(b);
        let lai = self.lai(b);
        let Some(c) = self.elect(b, &e.trs) else {
            return Ok(());
        };
        let assignment = *self.assignment(b);
        self.write_bucket_raw(b, assignment, Some(c), lai.isr)?;
        self.send_current(b);
        Ok(())
    }

    /// R6 `finish(b, st)`.
    pub fn finish(&mut self, b: BucketId, st: BucketStatus) -> Flow {
        self.fired(Rule::R6);
        let before = self.s.coordinator.status_of(b);
        if st == BucketStatus::Completed {
            self.note_completion(b, before);
        }
        let key = self.key_of(b);
        let c = &mut self.s.coordinator;
        c.remove_attempt(b);
        c.pending.retain(|x| *x != b);
        if let Some(key) = key {
            c.queued_timeouts.retain(|k| *k != key);
            c.queued_reconciles.retain(|k| *k != key);
        }
        if st == BucketStatus::Canceled {
            self.mark_canceled(b);
        } else {
            self.s.coordinator.set_status(b, st);
        }
        if self.s.coordinator.any_in_progress() {
            self.admit()
        } else {
            self.finalize()
        }
    }

    /// The `SOME-*` facts of a completion. INV-COMPLETED-ACKED and INV-FENCE-RESPONSE are
    /// checked on the transition (`transition.rs`).
    fn note_completion(&mut self, b: BucketId, before: Option<BucketStatus>) {
        let deleted = self.deleted(b);
        let g = &mut self.s.ghost;
        if deleted {
            g.last.deleted_bucket_completed = true;
        }
        if before == Some(BucketStatus::Timeout) {
            g.last.timed_out_bucket_completed = true;
            if g.restored.contains(b) {
                g.last.recovered_bucket_completed = true;
            }
        }
        if self.s.coordinator.cancel_requested {
            g.drained_after_cancel = true;
        }
    }

    /// R7 `resume(b)`: the move decision table, first match.
    pub fn resume(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R7);
        let e = self.entry(b);
        if self.final_state(b) {
            self.fired(Rule::R7_1);
            self.resend_stored(b);
            Ok(())
        } else if self.at_target(b) {
            self.fired(Rule::R7_2);
            if self.caught_up(b) {
                self.shrink_at_target(b)
            } else {
                self.resend_stored(b);
                Ok(())
            }
        } else if self.caught_up(b) {
            self.fired(Rule::R7_3);
            self.phase_b(b)
        } else if *self.assignment(b) == e.rs() {
            self.fired(Rule::R7_4);
            if self.bug(Bug::EpochBumpOnRetry) {
                // H6: the retry rewrites the union, bumping the bucket epoch.
                let lai = self.lai(b);
                self.write_bucket_raw(b, e.rs(), lai.leader, lai.isr)?;
            }
            if self.split_writes() {
                // Fluss's retry of Phase A rewrites the union into the store, no epoch bump:
                // where an aborted Phase A left the union only in the context, this is the
                // first time the store leaves the origin.
                self.write_assignment(b, e.rs())?;
            }
            self.resend_stored(b);
            Ok(())
        } else {
            self.fired(Rule::R7_5);
            self.phase_a(b)
        }
    }

    /// R7.2 `shrink_at_target(b)`: keep a live target leader, else elect among `trs`; ISR
    /// restricted to `trs`. When that changes nothing (only possible for a deleted bucket at its
    /// final metadata, reached through R11) it does nothing at all: neither the write nor the
    /// resend, which would otherwise loop Nli -> ack -> R11 -> Nli forever (findings.md F2).
    pub fn shrink_at_target(&mut self, b: BucketId) -> Flow {
        let e = self.entry(b);
        let lai = self.lai(b);
        let leader = self.target_leader(b);
        let isr = lai.isr.intersect(e.trs_set());
        if *self.assignment(b) == e.trs && leader == lai.leader && isr == lai.isr {
            return Ok(());
        }
        self.write_bucket(b, e.trs, leader, isr)?;
        self.send_current(b);
        Ok(())
    }

    /// `l = lai.leader` if it is in `trs` and live, else `elect(b, trs)` (R7.2, R10, D3). Under
    /// the `planned_leader` design, `new_leader` first when it is live and in the ISR.
    fn target_leader(&self, b: BucketId) -> Option<ServerId> {
        let e = self.entry(b);
        if self.config.planned_leader
            && self.s.coordinator.live.contains(e.new_leader)
            && self.decision_lai(b).isr.contains(e.new_leader)
        {
            return Some(e.new_leader);
        }
        match self.lai(b).leader {
            Some(l) if e.trs.contains(&l) && self.s.coordinator.live.contains(l) => Some(l),
            _ => self.elect(b, &e.trs),
        }
    }

    /// R9 Phase A: grow the assignment to the union `rs`; leader and ISR unchanged.
    pub fn phase_a(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R9);
        let e = self.entry(b);
        if self.split_writes() {
            let lai = self.decision_lai(b);
            self.write_bucket_split(b, e.rs(), lai.leader, lai.isr, false)?;
        } else {
            let lai = self.lai(b);
            self.write_bucket(b, e.rs(), lai.leader, lai.isr)?;
        }
        self.send_current(b);
        Ok(())
    }

    /// R10 Phase B: assignment to `trs`, ISR restricted to `trs`. Completion needs R12's ack.
    pub fn phase_b(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R10);
        let e = self.entry(b);
        let leader = self.target_leader(b);
        let isr = self.decision_lai(b).isr.intersect(e.trs_set());
        if self.split_writes() {
            self.write_bucket_split(b, e.trs, leader, isr, true)?;
        } else {
            self.write_bucket(b, e.trs, leader, isr)?;
        }
        self.send_current(b);
        Ok(())
    }

    /// R11 `try_complete(b)` for a move bucket.
    pub fn try_complete(&mut self, b: BucketId) -> Flow {
        self.fired(Rule::R11);
        if self.deleted(b) {
            // R11: a deleted bucket is left to R14.1, which completes it; acting here would
            // resend on every ack, since `final_state` is false for a deleted bucket.
            return Ok(());
        }
        let at_target = self.at_target(b);
        let caught_up = self.caught_up(b);
        if at_target && caught_up {
            if !self.final_state(b) {
                self.shrink_at_target(b)?;
            }
            Ok(())
        } else if caught_up && !at_target {
            self.phase_b(b)
        } else {
            Ok(())
        }
    }
}
