//! Client rules: R1 Register, R2 Cancel.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::context::at_origin;
use super::{plan_entry, Manager, StepResult};
use crate::core::effects::{Effect, PlanError, RejectReason, Reply};
use crate::core::types::{BucketId, BucketStatus, OverallStatus, Plan, TaskNode, TaskStatus};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// R1 Register(plan).
    pub(crate) fn on_register(&mut self, plan: Plan) -> StepResult {
        if self.has_in_progress() {
            self.emit(Effect::Reply(Reply::Rejected(RejectReason::InProgress)));
            return Ok(());
        }
        if let Err(e) = self.validate_plan(&plan) {
            self.emit(Effect::Reply(Reply::Rejected(RejectReason::InvalidPlan(e))));
            return Ok(());
        }
        // R1: id = (task.id or 0) + 1. rid always equals the stored task's id here: it is set
        // only by this rule's successful write and by R16 from the store, and R1 is refused while
        // recovery is pending.
        let id = self.rid.unwrap_or(0) + 1;
        let plan = Arc::new(plan);
        let task = TaskNode {
            id,
            status: TaskStatus::NotStarted,
            cancel_requested: false,
            plan: Arc::clone(&plan),
        };
        if let Err(e) = self.store.write_task(self.ce, &task) {
            // R1/R8: reply StoreError, no change.
            self.note_store_error(e);
            self.emit(Effect::Reply(Reply::StoreError));
            return Ok(());
        }
        self.reset_rebalance();
        self.rid = Some(id);
        self.overall = Some(OverallStatus::Rebalancing);
        self.install_plan(Arc::clone(&plan), BucketStatus::NotStarted);
        self.pending = plan.buckets.iter().map(|(b, _)| *b).collect();
        self.emit(Effect::Reply(Reply::Accepted(id)));
        if plan.is_empty() {
            self.finalize();
            Ok(())
        } else {
            self.admit()
        }
    }

    /// Production guard (not a spec rule): a malformed plan is refused before anything is written.
    fn validate_plan(&self, plan: &Plan) -> Result<(), PlanError> {
        let mut seen = BTreeSet::new();
        for (b, e) in &plan.buckets {
            let b: BucketId = *b;
            if !seen.insert(b) {
                return Err(PlanError::DuplicateBucket(b));
            }
            let Some(first) = e.trs.first() else {
                return Err(PlanError::EmptyTarget(b));
            };
            if *first != e.new_leader {
                return Err(PlanError::NewLeaderNotFirstTarget(b));
            }
            let distinct = |l: &[u32]| l.iter().collect::<BTreeSet<_>>().len() == l.len();
            if !distinct(&e.ors) || !distinct(&e.trs) {
                return Err(PlanError::DuplicateReplica(b));
            }
            let Some(rec) = self.ctx.buckets.get(&b) else {
                return Err(PlanError::UnknownBucket(b));
            };
            if self.ctx.deleted.contains(&b) {
                return Err(PlanError::DeletedBucket(b));
            }
            if rec.assignment != e.ors {
                return Err(PlanError::NotAtOrigin(b));
            }
        }
        Ok(())
    }

    /// R2 Cancel.
    pub(crate) fn on_cancel(&mut self) -> StepResult {
        let (Some(rid), Some(overall)) = (self.rid, self.overall) else {
            // D12: no current rebalance (including while recovery is pending).
            self.emit(Effect::Reply(Reply::NothingToCancel));
            return Ok(());
        };
        if overall.is_final() {
            self.emit(Effect::Reply(Reply::NothingToCancel));
            return Ok(());
        }
        if self.cancel_requested {
            // Idempotent.
            self.emit(Effect::Reply(Reply::Accepted(rid)));
            return Ok(());
        }
        // Persist the intent first (INV-CANCEL-PERSISTED-FIRST).
        let task = TaskNode {
            id: rid,
            status: TaskStatus::Rebalancing,
            cancel_requested: true,
            plan: Arc::clone(&self.plan),
        };
        if let Err(e) = self.store.write_task(self.ce, &task) {
            self.note_store_error(e);
            self.emit(Effect::Reply(Reply::StoreError));
            return Ok(());
        }
        self.cancel_requested = true;
        // Every pending bucket -> CANCELED (pending emptied; stale entries are skipped).
        let pending = std::mem::take(&mut self.pending);
        for b in pending {
            if self.status(b) == Some(BucketStatus::NotStarted) {
                self.set_status(b, BucketStatus::Canceled);
            }
        }
        // Every active bucket still at origin, ascending -> finish(b, CANCELED); the rest drain.
        let plan = Arc::clone(&self.plan);
        let at_origin_active: Vec<BucketId> = self
            .attempts
            .keys()
            .copied()
            .filter(|b| {
                let (Some(pb), Some(rec)) = (self.plan_buckets.get(b), self.ctx.buckets.get(b))
                else {
                    return false;
                };
                at_origin(rec, plan_entry(&plan, pb.index), pb.kind)
            })
            .collect();
        for b in at_origin_active {
            // Pending is empty, so the admit inside finish cannot execute (and cannot abort).
            self.finish(b, BucketStatus::Canceled)?;
        }
        self.emit(Effect::Reply(Reply::Accepted(rid)));
        // "and not already finalize_pending": a finish above may already have finalized, with
        // success (overall final) or not (pending, retried by R23); never write twice in a step.
        if self.counts.in_progress() == 0
            && !self.finalize_pending
            && self.overall == Some(OverallStatus::Rebalancing)
        {
            self.finalize();
        }
        Ok(())
    }
}
