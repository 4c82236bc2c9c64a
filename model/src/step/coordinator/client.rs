//! Client requests: R1 (Register) and R2 (Cancel).

use super::{Flow, Rule, Step};
use crate::state::inline::InlineVec;
use crate::state::types::{
    BucketId, BucketStatus, OverallStatus, Plan, RebalanceId, TaskStatus, MAX_BUCKETS,
};
use crate::state::{Ghost, TaskNode};
use crate::step::action::{CancelReply, ClientReply, RegisterReply};
use crate::verdict::bug::Bug;

impl Step<'_> {
    /// R1 Register(plan).
    pub fn register(&mut self, plan: Plan) -> Flow {
        self.fired(Rule::R1);
        if self.s.coordinator.has_in_progress() {
            self.out.reply = Some(ClientReply::Register(RegisterReply::RejectedInProgress));
            return Ok(());
        }
        if !valid_plan(&plan) {
            self.out.reply = Some(ClientReply::Register(RegisterReply::RejectedInvalidPlan));
            return Ok(());
        }
        let id = self.s.store.task.as_ref().map_or(0, |t| t.id) + 1;
        if self.write_registered_task(id, &plan).is_err() {
            self.out.reply = Some(ClientReply::Register(RegisterReply::StoreError));
            return Ok(());
        }
        // Reset the manager; the event queue is kept.
        let c = &mut self.s.coordinator;
        c.rid = Some(id);
        c.overall = Some(OverallStatus::Rebalancing);
        c.status = plan
            .iter()
            .map(|e| (e.bucket, BucketStatus::NotStarted))
            .collect();
        c.pending = plan.iter().map(|e| e.bucket).collect();
        c.plan = plan;
        c.attempts.clear();
        c.queued_timeouts.clear();
        c.queued_reconciles.clear();
        c.cancel_requested = false;
        c.finalize_pending = false;
        c.finalize_queued = false;
        c.recovery_pending = false;
        c.recovery_queued = false;
        // Per-rebalance ghosts start over; sticky violations stay.
        let violations = std::mem::take(&mut self.s.ghost.violations);
        let last = std::mem::take(&mut self.s.ghost.last);
        self.s.ghost = Ghost {
            violations,
            last,
            ..Ghost::default()
        };
        self.out.reply = Some(ClientReply::Register(RegisterReply::Accepted(id)));
        if self.s.coordinator.plan.is_empty() {
            self.finalize()
        } else {
            self.admit()
        }
    }

    /// R1's writes: the task node, and under the `remote_plan` design the plan object before
    /// it (the design's order, which `reference-before-plan` reverses) and the superseded
    /// objects' deletion after it (which `cleanup-before-reference` moves before it).
    fn write_registered_task(&mut self, id: RebalanceId, plan: &Plan) -> Flow {
        let remote = self.config.remote_plan;
        if remote && !self.bug(Bug::ReferenceBeforePlan) {
            self.write_plan_object(id)?;
            if self.bug(Bug::CleanupBeforeReference) {
                self.collect_superseded_plans(id);
            }
        }
        self.store_op().and_then(|()| self.fence(true))?;
        self.s.store.task = Some(TaskNode {
            id,
            status: TaskStatus::NotStarted,
            cancel_requested: false,
            plan: plan.clone(),
        });
        if remote && self.bug(Bug::ReferenceBeforePlan) {
            self.write_plan_object(id)?;
        }
        if remote && !self.bug(Bug::CleanupBeforeReference) {
            self.collect_superseded_plans(id);
        }
        Ok(())
    }

    /// R2 Cancel.
    pub fn cancel(&mut self) -> Flow {
        self.fired(Rule::R2);
        let c = &self.s.coordinator;
        if c.rid.is_none() || c.overall_is_final() {
            self.out.reply = Some(ClientReply::Cancel(CancelReply::NothingToCancel));
            return Ok(());
        }
        if c.cancel_requested {
            self.out.reply = Some(ClientReply::Cancel(CancelReply::Accepted));
            return Ok(());
        }
        // Persist the intent first (D7: a deposed incarnation's write is refused like a failed
        // one, unless `unfenced-task-writes`).
        if self.store_op().and_then(|()| self.fence(true)).is_err() {
            if !self.bug(Bug::CancelBestEffort) {
                self.out.reply = Some(ClientReply::Cancel(CancelReply::StoreError));
                self.s.ghost.last.cancel_store_failure = true;
                return Ok(());
            }
            // H3: the failed write is ignored and the cancel proceeds locally.
        } else {
            let c = &self.s.coordinator;
            self.s.store.task = Some(TaskNode {
                id: c.rid.expect("checked above"),
                status: TaskStatus::Rebalancing,
                cancel_requested: true,
                plan: c.plan.clone(),
            });
        }
        self.s.coordinator.cancel_requested = true;
        let pending = std::mem::take(&mut self.s.coordinator.pending);
        for b in pending {
            // Under `recovery-order` ([late]) only pending buckets at origin are canceled.
            if self.bug(Bug::RecoveryOrder) && !self.at_origin(b) {
                self.s.coordinator.pending.push(b);
                continue;
            }
            if self.s.coordinator.status_of(b) == Some(BucketStatus::NotStarted) {
                self.mark_canceled(b);
            }
        }
        self.out.reply = Some(ClientReply::Cancel(CancelReply::Accepted));
        let active: InlineVec<BucketId, MAX_BUCKETS> = self
            .s
            .coordinator
            .attempts
            .iter()
            .map(|(b, _)| *b)
            .collect();
        for b in active {
            // `finish` may already have removed it through admission; re-check. Under
            // `untouched-after-cancel` (H12, `[v1]`) an attempt still at origin keeps running.
            if self.key_of(b).is_some() && self.at_origin(b) && !self.bug(Bug::UntouchedAfterCancel)
            {
                self.finish(b, BucketStatus::Canceled)?;
            }
        }
        let c = &self.s.coordinator;
        if !c.any_in_progress() && !c.finalize_pending && !c.overall_is_final() {
            self.finalize()?;
        }
        Ok(())
    }
}

/// R1's validity check: every bucket at most once, every target list without a repeated server.
/// (The model builds each origin from the bucket's assignment and `new_leader` from the target,
/// and drops deleted buckets, so those parts of a plan are valid by construction.)
fn valid_plan(plan: &Plan) -> bool {
    plan.iter().enumerate().all(|(i, e)| {
        plan[..i].iter().all(|p| p.bucket != e.bucket)
            && e.trs
                .iter()
                .enumerate()
                .all(|(j, s)| !e.trs[..j].contains(s))
    })
}
