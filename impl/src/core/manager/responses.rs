//! Responses and ISR changes: R12 NliResponse, R18 AdjustIsr.

use std::collections::BTreeSet;

use super::{plan_entry, Manager, StepResult};
use crate::core::effects::{AdjustIsrError, Effect, RequestContext};
use crate::core::types::{BucketId, BucketStatus, Epoch, PlanKind, ServerId};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// R12 NliResponse: only the completion part (D11). Every check fences a stale response
    /// (INV-FENCE-RESPONSE).
    pub(crate) fn on_nli_response(
        &mut self,
        from: ServerId,
        b: BucketId,
        ok: bool,
        c: &RequestContext,
    ) -> StepResult {
        let Some(attempt) = self.attempts.get(&b) else {
            return Ok(());
        }; // b active
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return Ok(());
        };
        let current = c.coordinator_epoch == self.ce
            && c.leader == rec.lai.leader
            && c.leader_epoch == rec.lai.leader_epoch
            && c.bucket_epoch == rec.lai.bucket_epoch;
        if !current || c.exec_key != Some(attempt.key) || !ok {
            return Ok(());
        }
        let Some((plan, idx, kind)) = self.entry(b) else {
            return Ok(());
        };
        let e = plan_entry(&plan, idx);
        match kind {
            PlanKind::LeaderOnly => {
                let acker = from == e.new_leader || self.any_replica_completes_leader_only();
                if acker && rec.lai.leader == Some(e.new_leader) {
                    self.finish(b, BucketStatus::Completed)?;
                }
                Ok(())
            }
            PlanKind::Move => {
                if self.ctx.final_state(b, rec, e) {
                    if rec.lai.leader == Some(from) {
                        self.finish(b, BucketStatus::Completed)?;
                    }
                    Ok(())
                } else {
                    self.try_complete(b) // R11
                }
            }
            // Unreachable: a no-op bucket finishes in R4 and is always at origin at recovery.
            PlanKind::NoOp => Ok(()),
        }
    }

    /// R18 AdjustIsr from the leader. The checks are R18's, in its order.
    pub(crate) fn on_adjust_isr(
        &mut self,
        from: ServerId,
        b: BucketId,
        leader_epoch: Epoch,
        bucket_epoch: Epoch,
        isr: BTreeSet<ServerId>,
    ) -> StepResult {
        let reject = match self.ctx.buckets.get(&b) {
            _ if self.ctx.is_deleted(b) => Some(AdjustIsrError::UnknownBucket),
            None => Some(AdjustIsrError::UnknownBucket),
            Some(rec) if rec.lai.leader != Some(from) => Some(AdjustIsrError::NotLeader),
            Some(rec) if rec.lai.leader_epoch != leader_epoch => {
                Some(AdjustIsrError::FencedLeaderEpoch)
            }
            Some(rec) if rec.lai.bucket_epoch != bucket_epoch => {
                Some(AdjustIsrError::InvalidBucketEpoch)
            }
            // An empty ISR is refused too (not in R18; R21 never proposes one).
            Some(rec)
                if isr.is_empty()
                    || isr
                        .iter()
                        .any(|s| !self.ctx.live.contains(s) || !rec.assignment.contains(s)) =>
            {
                Some(AdjustIsrError::IneligibleReplica)
            }
            Some(rec) if rec.lai.isr == isr => Some(AdjustIsrError::NoChange),
            Some(_) => None,
        };
        if let Some(err) = reject {
            self.emit(Effect::SendAdjustIsrResponse {
                to: from,
                bucket: b,
                result: Err(err),
            });
            return Ok(());
        }
        let (assignment, leader) = {
            let rec = &self.ctx.buckets[&b];
            (rec.assignment.clone(), rec.lai.leader)
        };
        if self.write_bucket(b, assignment, leader, isr).is_err() {
            // R8: reply Err to the leader.
            self.emit(Effect::SendAdjustIsrResponse {
                to: from,
                bucket: b,
                result: Err(AdjustIsrError::StoreError),
            });
            return Ok(());
        }
        let lai = self.ctx.buckets[&b].lai.clone();
        self.emit(Effect::SendAdjustIsrResponse {
            to: from,
            bucket: b,
            result: Ok(lai),
        });
        // Then, for an active move attempt: resend if final (so the leader's ack can complete
        // it), else try_complete.
        let Some((plan, idx, kind)) = self.entry(b) else {
            return Ok(());
        };
        if kind != PlanKind::Move || !self.attempts.contains_key(&b) {
            return Ok(());
        }
        let e = plan_entry(&plan, idx);
        let rec = &self.ctx.buckets[&b];
        if self.ctx.final_state(b, rec, e) {
            self.send_current(b);
            Ok(())
        } else {
            self.try_complete(b)
        }
    }
}
