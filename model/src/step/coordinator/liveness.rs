//! Liveness as the coordinator handles it: R19 and R20 (server crash and restart), the bucket
//! deletion, and R23.5 (a tick's retry of those writes when they failed). The retry sets are
//! volatile: R17 loses them with the rest of the coordinator.

use super::{Flow, Rule, Step};
use crate::state::inline::InlineVec;
use crate::state::types::{BucketId, ServerId, ServerSet, MAX_BUCKETS};

impl Step<'_> {
    /// R19 as the coordinator handles a server crash.
    pub fn on_server_crash(&mut self, s: ServerId) {
        self.fired(Rule::R19);
        self.s.coordinator.live.remove(s);
        for &b in self.hosting(s).iter() {
            let lai = self.lai(b);
            let mut isr = lai.isr;
            isr.remove(s);
            if isr.is_empty() {
                isr = lai.isr;
            }
            let leader = if lai.leader == Some(s) {
                self.first_live_in(b, isr)
            } else {
                lai.leader
            };
            if (leader, isr) != (lai.leader, lai.isr) && self.liveness_write(b, leader, isr).is_ok()
            {
                self.send_current(b);
            }
        }
    }

    /// R20 as the coordinator handles a server restart.
    pub fn on_server_restart(&mut self, s: ServerId) {
        self.fired(Rule::R20);
        self.s.coordinator.live.insert(s);
        for &b in self.hosting(s).iter() {
            let lai = self.lai(b);
            let elected = match lai.leader {
                None => self.first_live_in(b, lai.isr),
                Some(_) => None,
            };
            if let Some(l) = elected {
                if self.liveness_write(b, Some(l), lai.isr).is_err() {
                    continue; // no resend: R23.5 repairs the bucket and sends then
                }
            }
            self.send_current(b);
        }
    }

    /// Bucket deletion: the marker, in the store and then the cache. A failed write leaves
    /// the bucket for R23.5.
    pub fn on_bucket_deleted(&mut self, b: BucketId) -> Flow {
        let written = self.store_op().and_then(|()| self.fence(false));
        let retries = &mut self.s.coordinator.deletion_retries;
        if written.is_err() {
            retries.insert(b);
            return written;
        }
        retries.remove(b);
        self.s.store.buckets.deleted[b as usize] = true;
        self.s.coordinator.cache.deleted[b as usize] = true;
        Ok(())
    }

    /// R23.5: every failed deletion marker is written again, then every bucket whose liveness
    /// write failed is repaired against the servers live now; each in ascending bucket order.
    /// A write that fails again leaves its bucket for the next tick.
    pub fn retry_liveness_writes(&mut self) {
        let c = &mut self.s.coordinator;
        let deletions = std::mem::take(&mut c.deletion_retries);
        let repairs = std::mem::take(&mut c.liveness_repairs);
        if deletions.is_empty() && repairs.is_empty() {
            return;
        }
        self.fired(Rule::R23_5);
        for b in deletions.iter() {
            if !self.deleted(b) {
                let _ = self.on_bucket_deleted(b);
            }
        }
        for b in repairs.iter() {
            if self.deleted(b) {
                continue;
            }
            let lai = self.lai(b);
            let (leader, isr) = self.repaired(b);
            if (leader, isr) != (lai.leader, lai.isr) && self.liveness_write(b, leader, isr).is_ok()
            {
                self.send_current(b);
            }
        }
    }

    /// R23.5's repair of `b` against the servers live now: the stored ISR without the assigned
    /// servers that are down, and the stored leader if it is live, else the first live member
    /// of the assignment in that ISR.
    fn repaired(&self, b: BucketId) -> (Option<ServerId>, ServerSet) {
        let lai = self.lai(b);
        let isr = self.isr_without_down(b);
        let leader = match lai.leader {
            Some(l) if self.s.coordinator.live.contains(l) => Some(l),
            _ => self.first_live_in(b, isr),
        };
        (leader, isr)
    }

    /// R17's re-derivation of the repairs (finding F23): every non-deleted bucket whose stored
    /// leader and ISR R23.5 would change against the servers live at startup. Outside a failed
    /// liveness write, R19 and R20 keep every bucket in that state; a write that failed before
    /// the crash, or an input a lost batch took with it (spec 5, G3), leaves one out of it.
    pub fn rederive_liveness_repairs(&mut self) {
        for b in 0..self.config.bucket_count() {
            if !self.deleted(b) && !self.config.is_abstract(b) {
                let lai = self.lai(b);
                if self.repaired(b) != (lai.leader, lai.isr) {
                    self.s.coordinator.liveness_repairs.insert(b);
                }
            }
        }
    }

    /// The non-deleted buckets assigned to `s`, ascending (R19 and R20 visit only these). An
    /// abstract bucket is not among them: what R19 and R20 do to its metadata is a Rest step
    /// (spec 9).
    fn hosting(&self, s: ServerId) -> InlineVec<BucketId, MAX_BUCKETS> {
        let mut hosted = InlineVec::new();
        for b in 0..self.config.bucket_count() {
            if !self.deleted(b) && !self.config.is_abstract(b) && self.assignment(b).contains(&s) {
                hosted.push(b);
            }
        }
        hosted
    }

    /// The first member of `b`'s assignment that is live and in `isr`, if any.
    fn first_live_in(&self, b: BucketId, isr: ServerSet) -> Option<ServerId> {
        let live = self.s.coordinator.live;
        self.assignment(b)
            .iter()
            .copied()
            .find(|x| live.contains(*x) && isr.contains(*x))
    }

    /// R23.5's ISR: the stored ISR without the assigned servers that are down. When every
    /// member is down, the highest-numbered one stays, so the ISR is never empty.
    fn isr_without_down(&self, b: BucketId) -> ServerSet {
        let live = self.s.coordinator.live;
        let assigned = ServerSet::from_servers(self.assignment(b));
        let isr = self.lai(b).isr;
        let kept = isr
            .iter()
            .filter(|x| live.contains(*x) || !assigned.contains(*x))
            .fold(ServerSet::EMPTY, |mut set, x| {
                set.insert(x);
                set
            });
        match isr.iter().last() {
            Some(last) if kept.is_empty() => {
                let mut only = ServerSet::EMPTY;
                only.insert(last);
                only
            }
            _ => kept,
        }
    }

    /// The write of R19, R20 and R23.5: on failure the bucket waits for R23.5.
    fn liveness_write(&mut self, b: BucketId, leader: Option<ServerId>, isr: ServerSet) -> Flow {
        let assignment = *self.assignment(b);
        let written = self.write_bucket(b, assignment, leader, isr);
        if written.is_err() {
            self.s.coordinator.liveness_repairs.insert(b);
        }
        written
    }
}
