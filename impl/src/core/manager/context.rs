//! The coordinator context the manager reads (spec 3.2): live servers and a write-through cache
//! of assignments, LeaderAndIsr and deleted markers, plus the predicates of spec 4.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::bucket_map::BucketMap;
use crate::core::types::{BucketId, BucketRecord, Observed, PlanEntry, PlanKind, ServerId};
use crate::store::ClusterState;

/// The context. The cache is changed only after the store write succeeded
/// (INV-CONTEXT-COHERENT).
#[derive(Clone, Debug)]
pub(crate) struct Context {
    pub live: BTreeSet<ServerId>,
    pub buckets: BucketMap<BucketRecord>,
    pub deleted: BTreeSet<BucketId>,
    /// Index server -> buckets assigned to it, so that R19/R20 visit only the crashed or
    /// restarted server's buckets instead of scanning the cluster.
    pub replicas_of: BTreeMap<ServerId, BTreeSet<BucketId>>,
}

impl Context {
    pub fn new(live: BTreeSet<ServerId>, cluster: ClusterState) -> Self {
        let mut replicas_of: BTreeMap<ServerId, BTreeSet<BucketId>> = BTreeMap::new();
        for (b, rec) in &cluster.buckets {
            for s in &rec.assignment {
                replicas_of.entry(*s).or_default().insert(*b);
            }
        }
        Context {
            live,
            buckets: cluster.buckets.into_iter().collect(),
            deleted: cluster.deleted,
            replicas_of,
        }
    }

    /// Write-through: called only after the store accepted `rec`. The server index changes only
    /// where the assignment does (most writes change the leader or the ISR only).
    pub fn set_bucket(&mut self, b: BucketId, rec: BucketRecord) {
        let old = self.buckets.insert(b, rec);
        let rec = &self.buckets[&b];
        let old_assignment = old.as_ref().map_or(&[][..], |o| &o.assignment[..]);
        if old_assignment == &rec.assignment[..] {
            return;
        }
        for s in old_assignment {
            if !rec.assignment.contains(s) {
                if let Some(set) = self.replicas_of.get_mut(s) {
                    set.remove(&b);
                    if set.is_empty() {
                        self.replicas_of.remove(s);
                    }
                }
            }
        }
        for s in &rec.assignment {
            if !old_assignment.contains(s) {
                self.replicas_of.entry(*s).or_default().insert(b);
            }
        }
    }

    /// `deleted[b]`; a bucket the coordinator has no record of counts as deleted (Fluss treats a
    /// bucket missing from its context like one queued for deletion).
    pub fn is_deleted(&self, b: BucketId) -> bool {
        self.deleted.contains(&b) || !self.buckets.contains_key(&b)
    }

    pub fn observe(&self, b: BucketId) -> Observed {
        match self.buckets.get(&b) {
            Some(rec) => Observed {
                assignment: rec.assignment.clone(),
                leader: rec.lai.leader,
                isr: rec.lai.isr.clone(),
            },
            None => Observed::default(),
        }
    }

    /// `elect(b, candidates)`: the first candidate that is live and in the ISR.
    pub fn elect(&self, rec: &BucketRecord, candidates: &[ServerId]) -> Option<ServerId> {
        candidates
            .iter()
            .copied()
            .find(|c| self.live.contains(c) && rec.lai.isr.contains(c))
    }

    /// `set(trs) ⊆ live`.
    pub fn targets_live(&self, e: &PlanEntry) -> bool {
        e.trs.iter().all(|s| self.live.contains(s))
    }

    /// `caught_up(b)` = `set(trs) ⊆ live` and `set(trs) ⊆ lai.isr`.
    pub fn caught_up(&self, rec: &BucketRecord, e: &PlanEntry) -> bool {
        e.trs
            .iter()
            .all(|s| self.live.contains(s) && rec.lai.isr.contains(s))
    }

    /// `final_state(b)`, for `rec`, the bucket's cached record (so it is not missing: only the
    /// deleted marker is looked up).
    pub fn final_state(&self, b: BucketId, rec: &BucketRecord, e: &PlanEntry) -> bool {
        !self.deleted.contains(&b)
            && at_target(rec, e)
            && self.targets_live(e)
            && rec.lai.leader.is_some_and(|l| e.trs.contains(&l))
            // isr == set(trs) without building the set (trs has no duplicates: R1 checks plans).
            && rec.lai.isr.len() == e.trs.len()
            && e.trs.iter().all(|s| rec.lai.isr.contains(s))
    }
}

/// `at_origin_assignment(b)` = `assignment[b] == ors`.
pub(crate) fn at_origin_assignment(rec: &BucketRecord, e: &PlanEntry) -> bool {
    rec.assignment == e.ors
}

/// `at_origin(b)`: at origin assignment, and for a leader-only bucket, the new leader not yet in
/// place (D4).
pub(crate) fn at_origin(rec: &BucketRecord, e: &PlanEntry, kind: PlanKind) -> bool {
    at_origin_assignment(rec, e)
        && !(kind == PlanKind::LeaderOnly && rec.lai.leader == Some(e.new_leader))
}

/// `at_target(b)` = `assignment[b] == trs`.
pub(crate) fn at_target(rec: &BucketRecord, e: &PlanEntry) -> bool {
    rec.assignment == e.trs
}
