//! Coordinator-side handling of server crash (R19), server restart (R20) and bucket deletion.
//!
//! A failed write leaves the cache as it was, skips that bucket's resend, and records the bucket
//! (R8); every Tick retries it (R23.5) with one rule applied to the then-current live set. Other
//! buckets of the same event are still handled. A coordinator crash loses the records, and the
//! next incarnation reads the repairs back from the store and the live servers (R17, F23).

use std::collections::BTreeSet;

use super::{Manager, StepResult};
use crate::core::types::{BucketId, BucketRecord, ServerId};
use crate::store::Store;

impl<S: Store> Manager<S> {
    /// The non-deleted buckets assigned to `s`, ascending (R19 and R20 visit these only).
    fn hosted_buckets(&self, s: ServerId) -> Vec<BucketId> {
        self.ctx
            .replicas_of
            .get(&s)
            .into_iter()
            .flatten()
            .copied()
            .filter(|b| !self.ctx.is_deleted(*b))
            .collect()
    }

    /// R19 Server crash(s).
    pub(crate) fn on_server_crashed(&mut self, s: ServerId) -> StepResult {
        self.ctx.live.remove(&s);
        for b in self.hosted_buckets(s) {
            let rec = &self.ctx.buckets[&b];
            let mut isr = rec.lai.isr.clone();
            isr.remove(&s);
            if isr.is_empty() {
                isr = rec.lai.isr.clone(); // never empty the ISR
            }
            let leader = if rec.lai.leader == Some(s) {
                rec.assignment
                    .iter()
                    .copied()
                    .find(|m| self.ctx.live.contains(m) && isr.contains(m))
            } else {
                rec.lai.leader
            };
            if leader != rec.lai.leader || isr != rec.lai.isr {
                let assignment = rec.assignment.clone();
                if self.write_bucket(b, assignment, leader, isr).is_ok() {
                    self.send_current(b);
                } else {
                    self.liveness_repairs.insert(b);
                }
            }
        }
        Ok(())
    }

    /// R20 Server restart(s).
    pub(crate) fn on_server_restarted(&mut self, s: ServerId) -> StepResult {
        self.ctx.live.insert(s);
        for b in self.hosted_buckets(s) {
            let rec = &self.ctx.buckets[&b];
            if rec.lai.leader.is_none() {
                if let Some(l) = self.ctx.elect(rec, &rec.assignment) {
                    let (assignment, isr) = (rec.assignment.clone(), rec.lai.isr.clone());
                    if self.write_bucket(b, assignment, Some(l), isr).is_err() {
                        self.liveness_repairs.insert(b);
                        continue;
                    }
                }
            }
            self.send_current(b); // so s and the leader resync
        }
        Ok(())
    }

    /// Bucket deletion: set `deleted[b]` in the store, then in the context. Admission (R4) and
    /// reconcile (R14) notice it. A failed write is retried on Tick.
    pub(crate) fn on_bucket_deleted(&mut self, b: BucketId) -> StepResult {
        if self.ctx.deleted.contains(&b) {
            return Ok(());
        }
        match self.store.mark_deleted(self.ce, b) {
            Ok(()) => {
                self.ctx.deleted.insert(b);
                self.deletion_retries.remove(&b);
            }
            Err(e) => {
                self.note_store_error(e);
                self.deletion_retries.insert(b);
            }
        }
        Ok(())
    }

    /// R23.5, Tick's retry of failed liveness and deletion writes. A bucket is repaired by R19's
    /// rule for every assigned server that is down (ascending), then R20's election if leaderless.
    pub(crate) fn retry_liveness_writes(&mut self) {
        for b in std::mem::take(&mut self.deletion_retries) {
            let _ = self.on_bucket_deleted(b);
        }
        for b in std::mem::take(&mut self.liveness_repairs) {
            if self.ctx.is_deleted(b) {
                continue;
            }
            let rec = &self.ctx.buckets[&b];
            let Some((leader, isr)) = self.repair_of(rec) else {
                continue;
            };
            let assignment = rec.assignment.clone();
            if self.write_bucket(b, assignment, leader, isr).is_ok() {
                self.send_current(b);
            } else {
                self.liveness_repairs.insert(b);
            }
        }
    }

    /// R23.5's repair of one bucket against the servers live now, or `None` when it would
    /// change nothing: every assigned server that is down leaves the ISR (ascending) while
    /// another member is left, and a leader that is down or missing gives way to the first
    /// live assigned member of that ISR.
    fn repair_of(&self, rec: &BucketRecord) -> Option<(Option<ServerId>, BTreeSet<ServerId>)> {
        let down: BTreeSet<ServerId> = rec
            .assignment
            .iter()
            .copied()
            .filter(|m| !self.ctx.live.contains(m))
            .collect();
        let mut isr = rec.lai.isr.clone();
        for s in &down {
            if isr.len() > 1 {
                isr.remove(s);
            }
        }
        let leader = match rec.lai.leader {
            Some(l) if self.ctx.live.contains(&l) => Some(l),
            _ => rec
                .assignment
                .iter()
                .copied()
                .find(|m| self.ctx.live.contains(m) && isr.contains(m)),
        };
        (leader != rec.lai.leader || isr != rec.lai.isr).then_some((leader, isr))
    }

    /// R17's re-derivation of the repairs (finding F23): the retry set died with the last
    /// incarnation, so every non-deleted bucket whose stored leader and ISR R23.5 would change
    /// against the servers live at startup is put back into it. Outside a failed liveness write
    /// (or a lost batch, spec 5's G3) R19 and R20 leave no bucket in that state, so this finds
    /// exactly what a crash lost. One pass over the cluster, as loading it is.
    pub(crate) fn rederive_liveness_repairs(&mut self) {
        let repairs: Vec<BucketId> = self
            .ctx
            .buckets
            .iter()
            .filter(|(b, rec)| !self.ctx.deleted.contains(b) && self.repair_of(rec).is_some())
            .map(|(b, _)| b)
            .collect();
        self.liveness_repairs.extend(repairs);
    }
}
